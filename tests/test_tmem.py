"""Tensor memory model: tcgen05.ld/st message tables, warp slices, accumulator datapath layouts.

Expected values come from the PTX ISA ("Matrix fragments for tcgen05.ld/st"; "Data path layout
organization", layouts A, B, D, E, F), written below as the formulas TVM's ``tcgen05_ld_st`` page
restates for lane ``l`` and register ``r``, and checked by enumerating every (register, lane).
"""
from __future__ import annotations

import pytest

from verilayout.core.linear_layout import LinearLayout
from verilayout.errors import LayoutError
from verilayout.hw.nvidia import tmem
from verilayout.prove.tmem import accumulator_verdict, epilogue_verdict, load_verdict

PTX = {  # (shape) -> registers per thread for .x1, image columns for .xN, (l, r, N) -> (row, col)
    "32x32b": (1, lambda n: n, lambda l, r: (l, r)),
    "16x64b": (1, lambda n: 2 * n, lambda l, r: (l // 4 + 8 * (l % 2), (l // 2) % 2 + 2 * r)),
    "16x128b": (2, lambda n: 4 * n, lambda l, r: (l // 4 + 8 * (r % 2), l % 4 + 4 * (r // 2))),
    "16x256b": (4, lambda n: 8 * n, lambda l, r: (l // 4 + 8 * ((r // 2) % 2), r % 2 + 2 * (l % 4) + 8 * (r // 4))),
}


@pytest.mark.parametrize("shape", sorted(PTX))
@pytest.mark.parametrize("num", [1, 2, 4, 16])
def test_message_is_the_ptx_fragment_table(shape, num):
    per, cols, cell = PTX[shape]
    lay = tmem.message(shape, num)
    rows = 32 if shape == "32x32b" else 16
    seen = set()
    for r in range(per * num):
        for l in range(32):
            got = lay.apply({"register": r, "lane": l})
            assert (got["row"], got["col"]) == cell(l, r)
            seen.add(cell(l, r))
    assert seen == {(i, j) for i in range(rows) for j in range(cols(num))}  # every cell exactly once
    assert tmem.Message(shape, num).registers == per * num


def test_16x32bx2_halves():
    # two 16x32b accesses of the same 16 lanes, the second immHalfSplitoff columns further
    lay = tmem.message("16x32bx2", 2, split=8)
    for r in range(2):
        for l in range(32):
            assert lay.apply({"register": r, "lane": l}) == {"row": l % 16, "col": r + 8 * (l // 16)}
    with pytest.raises(LayoutError):
        tmem.message("16x32bx2", 4, split=2)
    with pytest.raises(LayoutError):
        tmem.message("32x32b", 1, split=16)


def test_num_limits_and_shapes():
    assert tmem.Message("32x32b", 128).registers == 128
    with pytest.raises(LayoutError):
        tmem.Message("16x256b", 64)  # 256 registers
    with pytest.raises(LayoutError):
        tmem.Message("32x32b", 3)
    with pytest.raises(LayoutError):
        tmem.Message("8x32b")


def test_address_space_and_warp_slices():
    assert (tmem.LANES, tmem.COLUMNS, tmem.CELL_BITS) == (128, 512, 32)
    assert [tmem.warp_lanes(w).start for w in range(8)] == [0, 32, 64, 96, 0, 32, 64, 96]
    assert [tmem.alloc_columns(c) for c in (1, 32, 33, 200, 512)] == [32, 32, 64, 256, 512]
    with pytest.raises(LayoutError):
        tmem.alloc_columns(513)
    wg = tmem.warpgroup_message("32x32b", 2)
    for w in range(4):
        for l in range(32):
            assert wg.apply({"register": 1, "lane": l, "warp": w}) == {"lane": 32 * w + l, "col": 1}


@pytest.mark.parametrize("m,n,cg,where", [
    (128, 32, 1, lambda i, j: (i, j)),                                  # layout D
    (256, 32, 2, lambda i, j: (i, j)),                                  # layout A, per CTA
    (64, 32, 1, lambda i, j: (32 * (i // 16) + i % 16, j)),             # layout F
    (128, 32, 2, lambda i, j: (i + 64 * (j // 16), j % 16)),            # layout B
])
def test_accumulator_datapath_layouts(m, n, cg, where):
    acc = tmem.accumulator_layout(m, n, cg)
    rows = m // cg
    cells = {}
    for i in range(rows):
        for j in range(n):
            cells[where(i, j)] = (i, j)
    for (lane, col), (i, j) in cells.items():
        assert acc.apply({"lane": lane, "col": col}) == {"dim0": i, "dim1": j}
    assert len(cells) == rows * n


def test_datapath_letters_and_refusals():
    assert [tmem.datapath_letter(*k) for k in ((256, 2), (128, 2), (128, 1), (64, 1))] == ["A", "B", "D", "F"]
    assert tmem.datapath_letter(64, 1, ws=True) == "E"
    with pytest.raises(LayoutError):
        tmem.accumulator_layout(32, 64)


def _reg(reg, lane, warp, rows, cols):
    return LinearLayout({"register": reg, "lane": lane, "warp": warp}, {"dim0": rows, "dim1": cols})


LANES5 = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]]


def test_load_verdict_32x32b_and_a_swapped_layout():
    # the 32x32b register layout of a 128x16 f32 accumulator: thread (w, l) holds row 32w + l, cols 0..15
    good = _reg([[0, 1], [0, 2], [0, 4], [0, 8]], LANES5, [[32, 0], [64, 0]], 128, 16)
    v = epilogue_verdict(good, 128, 16)
    assert v.proved and v.details["num"] == 16
    # warps swapped: warp 1 would read rows 64.. but its TMEM slice is lanes 32..63
    bad = _reg([[0, 1], [0, 2], [0, 4], [0, 8]], LANES5, [[64, 0], [32, 0]], 128, 16)
    v = epilogue_verdict(bad, 128, 16)
    assert v.status == "counterexample"
    assert v.counterexample["input"] == {"warp": 1}
    assert v.counterexample["layout_needs"] == [64, 0]


def test_load_verdict_16x256b_with_the_other_half_and_column_repeats():
    # one 16x256b.x1 (4 regs) per 16-lane half, repeated over 16 columns: regs 4.. move by col 8 and lane 16
    reg = _reg([[0, 1], [8, 0], [0, 8], [16, 0]], [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], [[32, 0], [64, 0]], 128, 16)
    v = load_verdict(reg, tmem.accumulator_layout(128, 16), "16x256b")
    assert v.proved
    # a repeat by column 12 (= 8 xor 4) is not a whole 8-column message: refused, naming that bit
    reg2 = _reg([[0, 1], [8, 0], [0, 12], [16, 0]], [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], [[32, 0], [64, 0]],
                128, 16)
    v = load_verdict(reg2, tmem.accumulator_layout(128, 16), "16x256b", num=1)
    assert v.status == "counterexample" and v.counterexample["input"] == {"register": 4}


def test_m64_is_read_with_16x32bx2():
    # layout F: rows 16w..16w+15 at lanes 32w..32w+15; threads 16-31 read columns N/2.. of the same lanes
    reg = _reg([[0, 1], [0, 2], [0, 4]], [[1, 0], [2, 0], [4, 0], [8, 0], [0, 8]], [[16, 0], [32, 0]], 64, 16)
    assert epilogue_verdict(reg, 64, 16, shape="16x32bx2", split=8).proved
    assert epilogue_verdict(reg, 64, 16, shape="32x32b").status == "counterexample"


def test_accumulator_verdict_names_the_cell():
    assert accumulator_verdict(tmem.accumulator_layout(64, 32), 64, 32).proved
    v = accumulator_verdict(tmem.accumulator_layout(128, 32), 64, 32)
    assert v.status == "counterexample" and v.counterexample["cell"] == {"lane": 16}
