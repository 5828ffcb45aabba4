"""What a machine does with a layout: wgmma fragments and descriptors (:mod:`.wgmma`,
:mod:`.descriptor`), shared-memory banks, Intel DPAS and 2D block loads.

Modules here import only the layout core above them, never ``prove`` or ``synth``.
"""
