"""AMD hardware models (CDNA3 gfx942, CDNA4 gfx950): the LDS banks and phases (:mod:`.lds`)."""
