"""A block-load plan reads the operand's one surface (issue "never a wrong proved").

Coverage names elements by (row, column) of each load's own surface; a load reading a
surface 4 KiB away reads other bytes, whatever its (row, column) say. The byte expected in
the counterexample is derived here from the 2D block-load address rule
(``base + row * pitch + column * elem_bytes``, shared/reference/intel_2d_block_io.md).
"""
from __future__ import annotations

import dataclasses

from verilayout import blockload

DPAS = ("#triton_intel_gpu.dpas<{repeatCount = 8, systolicDepth = 8, executionSize = 16, "
        "opsPerChan = 2, threadsPerWarp = 16, warpsPerCTA = [8, 4], repCluster = [4, 2], "
        "A = [32, 16], B = [16, 32], C = [32, 32]}>")
B_TYPE = f"tensor<32x256xf16, #ttg.dot_op<{{opIdx = 1, parent = {DPAS}, kWidth = 2}}>>"


def _moved_surface(p, i, delta):
    ld = p.loads[i]
    far = dataclasses.replace(ld.surface, base=ld.surface.base + delta)
    loads = tuple(dataclasses.replace(x, surface=far) if k == i else x for k, x in enumerate(p.loads))
    return dataclasses.replace(p, loads=loads), far


def test_a_load_on_a_surface_4k_away_is_a_counterexample():
    p = blockload.plan(B_TYPE)
    assert len(p.loads) == 2 and blockload.check(p, B_TYPE).proved
    bad, far = _moved_surface(p, 1, 4096)
    v = blockload.check(bad, B_TYPE)
    assert v.status == "counterexample"
    ld = bad.loads[1]
    assert v.counterexample["load"] == 1
    assert v.counterexample["byte"] == 4096 + ld.y * far.pitch + ld.x * ld.elem_bytes


def test_every_warp_is_checked_against_the_surface_too():
    bad, _ = _moved_surface(blockload.plan(B_TYPE), 1, 4096)
    assert blockload.check(bad, B_TYPE, warps="all").status == "counterexample"


def test_surfaces_the_user_declares_are_accepted():
    p = blockload.plan(B_TYPE)
    bad, far = _moved_surface(p, 1, 4096)
    assert blockload.check(bad, B_TYPE, surface=[p.loads[0].surface, far]).proved
    # declaring only the first surface still rejects the second load
    assert blockload.check(bad, B_TYPE, surface=p.loads[0].surface).counterexample["load"] == 1
