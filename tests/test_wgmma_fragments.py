"""wgmma register fragments (seed 001_afc8e6ab5857294e.txt, PTX 9.7.15.5.1.1).

Expected values come from:
* the store indexing of the tutorial seed 003_ce87ea73fe8bc8cb.txt (row = lane/4 +
  16*warp (+8), col = (lane%4)*2 + 8*i (+1)), written out below;
* the per-warp mma.m16n8kK fragment formulas of PTX 9.7.14 (groupID = lane/4,
  threadID_in_group = lane%4), which seed 003 says one warp of the wgmma A fragment
  follows ("单个 warp 的加载方式与 mma 指令 m16nNk16 的形状相同"), written out below;
* the register counts of the seed 001 tables;
* brute-force enumeration (every element held exactly once).
The Triton nvidia_mma v3 comparison is in tests/oracles/test_wgmma_triton_oracle.py.
"""
from __future__ import annotations

import pytest

from verilayout.errors import LayoutError
from verilayout.hw.nvidia.wgmma import valid_n
from verilayout.wgmma import fragment            # shapes spelled m64nNkK, read at the door


def held(frag):
    """{(thread, element): (row, col)} by brute force over every input of the layout."""
    L = frag.layout
    table = L.apply_all().tolist()           # flat input: register fastest, then lane, warp
    nreg, rows = L.in_dims["register"], L.out_dims["dim0"]
    out = {}
    for t in range(128):
        for e in range(frag.registers):
            packed = table[e + nreg * t]
            out[(t, e)] = (packed % rows, packed // rows)
    return out


# ----- D: the tutorial's store loop (seed 003) ---------------------------------------------------

def tutorial_d(thread: int, i: int) -> tuple[int, int]:
    """Seed 003: C[row_c][col_c + 8i] = d[4i], [+1] = d[4i+1], row_c+8: d[4i+2], d[4i+3]."""
    warp, lane = divmod(thread, 32)
    row_c = lane // 4 + warp * 16
    col_c = lane % 4 * 2
    group, j = divmod(i, 4)
    return row_c + (8 if j >= 2 else 0), col_c + 8 * group + (j % 2)


@pytest.mark.parametrize("acc", ["f32", "f16"])
@pytest.mark.parametrize("n", [8, 16, 24, 32, 40, 64, 96, 128, 136, 256])
def test_d_fragment_matches_the_tutorial_store_indexing(n, acc):
    f = fragment(f"m64n{n}k16", "D", "f16", acc=acc)
    assert f.registers == n // 2
    for (t, e), rc in held(f).items():
        assert rc == tutorial_d(t, e)


@pytest.mark.parametrize("shape,dtype,acc", [
    ("m64n{n}k8", "tf32", "f32"), ("m64n{n}k32", "e4m3", "f16"), ("m64n{n}k32", "s8", "s32"),
    ("m64n{n}k256", "b1", "s32"), ("m64n{n}k16", "bf16", "f32")])
def test_d_fragment_is_the_same_for_every_shape_and_every_valid_n(shape, dtype, acc):
    for n in valid_n(acc):
        f = fragment(shape.format(n=n), "D", dtype, acc=acc)
        for (t, e), rc in held(f).items():
            assert rc == tutorial_d(t, e)


@pytest.mark.parametrize("n", [8, 24, 32, 48, 256])
def test_d_fragment_holds_every_element_exactly_once(n):
    f = fragment(f"m64n{n}k16", "D", "f16")
    cells = list(held(f).values())
    assert len(cells) == len(set(cells)) == 64 * n
    assert all(0 <= r < 64 and 0 <= c < n for r, c in cells)


def test_d_register_counts_follow_the_seed_001_table():
    f16 = fragment("m64n40k16", "D", "f16", acc="f16")
    f32 = fragment("m64n40k16", "D", "f16", acc="f32")
    # .f16: N/4 .f16x2 registers of two elements; .f32: N/2 .f32 registers
    assert (f16.registers // f16.elems_per_reg, f16.elems_per_reg, f16.reg_type) == (10, 2, ".f16x2")
    assert (f32.registers // f32.elems_per_reg, f32.reg_type) == (20, ".f32")


# ----- A: mma.m16n8kK per warp, warps stacked along M --------------------------------------------

def mma_a(thread: int, i: int, bits: int) -> tuple[int, int]:
    """PTX mma.m16n8k16 (f16), m16n8k8 (tf32), m16n8k32 (8-bit), m16n8k256 (b1) A
    fragments, warp w taking rows 16w..16w+15.

    f16:  row = g (+8 for a2,a3,a6,a7),   col = 2t + (i&1) (+8 for i >= 4)
    tf32: row = g (+8 for a1,a3),         col = t (+4 for a2,a3)
    8-bit: row = g (+8 for a4..a7, a12..a15), col = 4t + (i&3) (+16 for i >= 8)
    b1:   row = g (+8 for a32..a63, a96..a127), col = 32t + (i&31) (+128 for i >= 64)
    """
    warp, lane = divmod(thread, 32)
    g, t = lane // 4, lane % 4
    if bits == 16:
        row, col = g + 8 * (i in (2, 3, 6, 7)), 2 * t + (i & 1) + 8 * (i >= 4)
    elif bits == 32:
        row, col = g + 8 * (i in (1, 3)), t + 4 * (i in (2, 3))
    elif bits == 8:
        row, col = g + 8 * ((i // 4) % 2), 4 * t + (i & 3) + 16 * (i >= 8)
    else:
        row, col = g + 8 * ((i // 32) % 2), 32 * t + (i & 31) + 128 * (i >= 64)
    return row + 16 * warp, col


@pytest.mark.parametrize("shape,dtype,bits,regs,cols", [
    ("m64n64k16", "f16", 16, 8, 16), ("m64n8k16", "bf16", 16, 8, 16),
    ("m64n16k8", "tf32", 32, 4, 8), ("m64n32k32", "e4m3", 8, 16, 32),
    ("m64n32k32", "u8", 8, 16, 32), ("m64n64k256", "b1", 1, 128, 256)])
def test_a_fragment_matches_the_mma_formulas(shape, dtype, bits, regs, cols):
    f = fragment(shape, "A", dtype)
    # seed 001: four 32-bit registers holding 2 (f16), 1 (tf32), 4 (8-bit), 32 (b1) elements
    assert (f.registers, f.rows, f.cols) == (regs, 64, cols)
    assert f.registers // f.elems_per_reg == 4
    cells = held(f)
    for (t, e), rc in cells.items():
        assert rc == mma_a(t, e, bits)
    assert len(set(cells.values())) == 64 * cols


def test_held_agrees_with_coord():
    f = fragment("m64n24k16", "D", "f16")
    cells = held(f)
    assert all(cells[(t, e)] == f.coord(t, e) for t in (0, 5, 77, 127) for e in range(12))


def test_a_f16_thread_0_holds_the_seed_003_picture_corners():
    # seed 003: one warp covers 16 rows x 16 cols; T0 holds (0,0),(0,1),(8,0),(8,1),(0,8),...
    f = fragment("m64n8k16", "A", "f16")
    assert [f.coord(0, e) for e in range(8)] == [(0, 0), (0, 1), (8, 0), (8, 1),
                                                 (0, 8), (0, 9), (8, 8), (8, 9)]
    assert f.owner(63, 15) == (127, 7)


# ----- what is valid ------------------------------------------------------------------------

def test_s32_accumulator_n_values_follow_seed_001():
    # N = 8*i for i in 1..4, then 16*i for i in 3..16
    assert valid_n("s32") == (8, 16, 24, 32) + tuple(range(48, 257, 16))
    assert valid_n("f32") == tuple(range(8, 257, 8))
    fragment("m64n24k32", "D", "s8", acc="s32")
    with pytest.raises(LayoutError, match="N = 40 is not valid with a s32 accumulator"):
        fragment("m64n40k32", "D", "s8", acc="s32")


@pytest.mark.parametrize("args,match", [
    (("m64n32k16", "D", "bf16", "f16"), "accumulator 'f16' is not allowed with bf16"),
    (("m64n32k8", "A", "f16", None), "f16 needs k16, not k8"),
    (("m64n33k16", "D", "f16", None), "N = 33 is not valid"),
    (("m128n32k16", "D", "f16", None), "M = 64"),
    (("m64n32k16", "B", "f16", None), "B is always read from shared memory"),
    (("m64n32k16", "A", "f64", None), "unknown wgmma element type 'f64'"),
    (("64x32x16", "A", "f16", None), "expected m64nNkK"),
])
def test_invalid_fragments_are_errors_that_say_why(args, match):
    shape, op, dtype, acc = args
    with pytest.raises(LayoutError, match=match):
        fragment(shape, op, dtype, acc=acc)


def test_d_fragment_for_power_of_two_n_equals_the_triton_mma_frontend():
    # another implementation in this repository (frontends/triton/mma, Triton semantics)
    from verilayout.frontends.triton.mma import nvidia_mma_to_linear
    for n in (8, 16, 64, 256):
        ours = fragment(f"m64n{n}k16", "D", "f16").layout
        theirs = nvidia_mma_to_linear({"versionMajor": 3, "versionMinor": 0, "warpsPerCTA": [4, 1],
                                       "instrShape": [16, n, 16]}, [64, n])
        assert {k: v for k, v in theirs.bases.items() if v} == ours.bases
