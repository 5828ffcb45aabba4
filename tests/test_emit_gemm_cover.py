"""The persistent scheduler of the emitted sm_90a GEMM covers the tile grid for every grid size
(:mod:`verilayout.simulate.persistent_cover`).

Oracle: the tile grid written here (5 x 3 tiles of the ragged cover problem, each tile's K-tiles
and K slots), against the tiles read off the PTX run of every CTA of every grid size (TMA
coordinates of the producer, store addresses of the consumer). Each planted bug is an edit of the
emitted ``kernel.cu`` text written here; the check must name it.
"""
import shutil
from functools import lru_cache

import pytest

from verilayout.emit.gemm_plan import GemmManifest

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc (CUDA 12 or newer) is "
                                "not installed; the check compiles kernel.cu")
LOOP = "u < units;"


@lru_cache(maxsize=4)
def _emitted(splits=1, swap_ab=False):
    from verilayout.emit.cuda_gemm import emit_gemm
    e = emit_gemm("bf16", tile=(128, 64, 64) if not swap_ab else (64, 16, 64), stages=3,
                  splits=splits, swap_ab=swap_ab)
    return GemmManifest.from_dict(e.manifest), e.files["kernel.cu"]


def _cover(edit=None, **cfg):
    from verilayout.simulate.persistent_cover import check_tile_cover
    man, src = _emitted(**cfg)
    if edit is not None:
        new = edit(src)
        assert new != src, "the planted edit did not change kernel.cu"
        src = new
    return check_tile_cover(man, src)


@needs_nvcc
def test_every_grid_size_covers_every_tile_once():
    r = _cover()
    assert r.status == "proved", r.message
    # 5 x 3 = 15 tiles, one K slot: grids of 1..16 CTAs (15 % G != 0 for G = 2, 4, 6, 7, 8, ...)
    assert "every grid of 1..16 CTAs" in r.message and "15 tiles" in r.message


@needs_nvcc
def test_the_swap_ab_split_k_schedule_covers_every_tile_and_slot_once():
    r = _cover(splits=2, swap_ab=True)
    assert r.status == "proved", r.message
    assert "every grid of 1..31 CTAs" in r.message and "2 K slot(s)" in r.message


@needs_nvcc
def test_planted_tile_skipped_when_tiles_mod_grid_is_not_0_is_caught():
    """Both loops stop at the last whole round of the grid: the remainder tiles are skipped."""
    r = _cover(lambda s: s.replace(LOOP, "u < units - units % unit_step;"))
    assert r.status == "counterexample"
    assert "grid of 2 CTAs (15 units, 15 % 2 = 1)" in r.message
    assert "(4, 2, 0) loaded by no CTA" in r.message


@needs_nvcc
def test_planted_consumer_skipping_the_remainder_is_caught_at_the_stores():
    """Only the consumer's loop is cut short: the producer loads the tile, nobody stores it."""
    def edit(s):
        i = s.index(LOOP, s.index(LOOP) + 1)          # the second loop: the consumers'
        return s[:i] + "u < units - units % unit_step;" + s[i + len(LOOP):]
    r = _cover(edit)
    assert r.status == "counterexample"
    assert "(K slot, tile row, tile column) (0, 4, 2) stored by no CTA" in r.message
