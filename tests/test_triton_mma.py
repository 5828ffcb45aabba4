"""MMA-family layouts (nvidia_mma, dot_op, amd_mfma, amd_wmma) against seeds and derivations.

Expected values come from the seeds (004: MFMA 32x32 / 16x16 tile bases and pictures;
001: the wgmma accumulator D fragment), from the PTX ISA fragment tables of
``mma.m16n8k16`` (written out below as formulas), from AMD's WMMA register layouts
(formulas below) and from brute-force enumeration over every (register, lane, warp).
The Triton wheel itself is compared in ``tests/oracles/test_triton_mma_oracle.py``.
"""
from __future__ import annotations

import itertools
from types import SimpleNamespace

import pytest
from hypothesis import given, settings, strategies as st

from verilayout.errors import LayoutError
from verilayout.frontends.triton.mma import (amd_mfma_to_linear, amd_wmma_to_linear,
                                             dot_op_to_linear, nvidia_mma_to_linear)


def table(L):
    """{(register, lane, warp): (dim0, dim1)} by brute force over every input."""
    out = {}
    ins = L.in_dims
    for r, l, w in itertools.product(range(ins["register"]), range(ins["lane"]), range(ins["warp"])):
        v = L.apply({"register": r, "lane": l, "warp": w, "block": 0})
        out[(r, l, w)] = (v["dim0"], v["dim1"])
    return out


def swap01(bases):
    return [[b[1], b[0]] for b in bases]


def mfma(**kw):
    p = {"version": 3, "warpsPerCTA": [1, 1], "instrShape": [32, 32, 8], "isTransposed": False}
    p.update(kw)
    return p


def nv(**kw):
    p = {"versionMajor": 2, "versionMinor": 0, "warpsPerCTA": [1, 1], "instrShape": [16, 8]}
    p.update(kw)
    return p


def wmma(**kw):
    p = {"version": 2, "isTranspose": False, "ctaLayout": {"warp": []}}
    p.update(kw)
    return p


def parent(name, params):
    return SimpleNamespace(name=name, params=params)


# ----- seed 004: MFMA tiles -------------------------------------------------------------
# Seed 004_d7c7c1cef06bdad0.txt writes the tile bases as (outDimNames[order[0]],
# outDimNames[order[1]]) with order = [1, 0], i.e. (dim1, dim0); swap01 turns them
# into verilayout's (dim0, dim1).
SEED004_MFMA32_REG = [[0, 1], [0, 2], [0, 8], [0, 16]]
SEED004_MFMA32_LANE = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 4]]
SEED004_MFMA16_REG = [[0, 1], [0, 2]]
SEED004_MFMA16_LANE = [[1, 0], [2, 0], [4, 0], [8, 0], [0, 4], [0, 8]]


def test_mfma_32x32_tile_is_seed_004():
    L = amd_mfma_to_linear(mfma(), [32, 32])
    assert L.bases["register"] == swap01(SEED004_MFMA32_REG)
    assert L.bases["lane"] == swap01(SEED004_MFMA32_LANE)
    assert L.in_dims == {"register": 16, "lane": 64, "warp": 1, "block": 1}
    assert L.out_dims == {"dim0": 32, "dim1": 32}


def test_mfma_16x16_tile_is_seed_004():
    L = amd_mfma_to_linear(mfma(instrShape=[16, 16, 16]), [16, 16])
    assert L.bases["register"] == swap01(SEED004_MFMA16_REG)
    assert L.bases["lane"] == swap01(SEED004_MFMA16_LANE)
    assert L.out_dims == {"dim0": 16, "dim1": 16}


def test_mfma_32x32_matches_seed_004_picture():
    # The seed's picture: row r of the 32x32 C tile lists lanes c + 32*((r // 4) % 2),
    # each lane owning 16 rows (4 consecutive, then a gap of 4).
    t = table(amd_mfma_to_linear(mfma(), [32, 32]))
    owners = {}
    for (r, lane, _), (row, col) in t.items():
        owners.setdefault((row, col), []).append(lane)
    assert len(owners) == 32 * 32
    for (row, col), lanes in owners.items():
        assert lanes == [col + 32 * ((row // 4) % 2)]


def test_mfma_16x16_matches_seed_004_picture():
    # Seed 004: rows 4k..4k+3 of the 16x16 tile hold lanes 16k..16k+15 (lane = col + 16*(row//4)).
    t = table(amd_mfma_to_linear(mfma(instrShape=[16, 16, 16]), [16, 16]))
    for (_, lane, _), (row, col) in t.items():
        assert lane == col + 16 * (row // 4)
    assert len(set(t.values())) == 256


@pytest.mark.parametrize("instr", [[32, 32, 8], [16, 16, 16]])
def test_mfma_transposed_swaps_the_tile_dims(instr):
    # isTransposed: each lane holds consecutive elements of a row instead of a column, i.e.
    # the non-transposed tile with the roles of the two dims exchanged.
    m = instr[0]
    plain = amd_mfma_to_linear(mfma(instrShape=instr), [m, m])
    trans = amd_mfma_to_linear(mfma(instrShape=instr, isTransposed=True), [m, m])
    for dim in ("register", "lane"):
        assert trans.bases[dim] == swap01(plain.bases[dim])


def test_mfma_warps_tile_n_first_then_m():
    # warpsPerCTA [2, 2] over a 64x64 tensor of 32x32 tiles: warp bit 0 steps along N.
    L = amd_mfma_to_linear(mfma(warpsPerCTA=[2, 2]), [64, 64])
    assert L.bases["warp"] == [[0, 32], [32, 0]]


def test_mfma_elementbitwidth_64_has_one_row_per_register():
    # 64-bit accumulators: 16x16 tile, 64 lanes, 4 registers; no lane shares a row pair.
    L = amd_mfma_to_linear(mfma(instrShape=[16, 16, 4], elementBitWidth=64), [16, 16])
    t = table(L)
    assert len(set(t.values())) == 256 and L.in_dims["register"] == 4


# ----- seed 001: wgmma accumulator D = nvidia_mma v3 --------------------------------------
@pytest.mark.parametrize("n", [8, 16, 64, 256])
def test_nvidia_mma_v3_is_the_wgmma_d_fragment_of_seed_001(n):
    # Seed 001 (Figure 149): m64nNk16 D, four warps; register d_k of lane l in warp w holds
    # row l/4 + 16w (+8 for odd register pairs) and column (l%4)*2 + 8*(k/4) (+1 for odd k).
    L = nvidia_mma_to_linear(nv(versionMajor=3, warpsPerCTA=[4, 1], instrShape=[16, n, 16]),
                             [64, n])
    assert L.in_dims == {"register": n // 2, "lane": 32, "warp": 4, "block": 1}  # N/2 registers
    for (k, lane, w), got in table(L).items():
        row = lane // 4 + 16 * w + 8 * ((k // 2) % 2)
        col = (lane % 4) * 2 + 8 * (k // 4) + k % 2
        assert got == (row, col)


# ----- PTX mma.m16n8k16 fragments = nvidia_mma v2 and its dot operands ------------------------
def test_nvidia_mma_v2_is_the_mma_m16n8_c_fragment():
    # PTX ISA, mma.m16n8k16 C/D (f32): c_i at row groupID (+8 for i >= 2),
    # col threadID_in_group*2 + (i & 1); groupID = lane / 4, threadID_in_group = lane % 4.
    for (i, lane, _), got in table(nvidia_mma_to_linear(nv(), [16, 8])).items():
        assert got == (lane // 4 + 8 * (i // 2), (lane % 4) * 2 + (i & 1))


def test_dot_op_a_kwidth2_is_the_mma_m16n8k16_a_fragment():
    # PTX ISA, mma.m16n8k16 A (f16): a_i at row groupID + 8*((i//2)%2),
    # col threadID_in_group*2 + (i & 1) + 8*(i >= 4).
    L = dot_op_to_linear({"opIdx": 0, "kWidth": 2}, parent("ttg.nvidia_mma", nv()), [16, 16])
    for (i, lane, _), got in table(L).items():
        assert got == (lane // 4 + 8 * ((i // 2) % 2), (lane % 4) * 2 + (i & 1) + 8 * (i // 4))


def test_dot_op_b_kwidth2_is_the_mma_m16n8k16_b_fragment():
    # PTX ISA, mma.m16n8k16 B (f16): b_i at row (k) threadID_in_group*2 + (i & 1) + 8*(i >= 2),
    # col (n) groupID.
    L = dot_op_to_linear({"opIdx": 1, "kWidth": 2}, parent("ttg.nvidia_mma", nv()), [16, 8])
    for (i, lane, _), got in table(L).items():
        assert got == ((lane % 4) * 2 + (i & 1) + 8 * (i // 2), lane // 4)


@pytest.mark.parametrize("op_idx", [0, 1])
def test_dot_op_warps_broadcast_along_k(op_idx):
    # Every warp of a row of C needs the same A rows (all of K): warp bases never move along K.
    k_dim = 1 if op_idx == 0 else 0
    L = dot_op_to_linear({"opIdx": op_idx, "kWidth": 2},
                         parent("ttg.nvidia_mma", nv(warpsPerCTA=[2, 2])), [64, 64])
    assert all(b[k_dim] == 0 for b in L.bases["warp"])
    assert any(any(b) for b in L.bases["warp"])


def test_dot_op_blocked_parent_keeps_all_of_k_in_each_thread():
    blocked = parent("ttg.blocked", {"sizePerThread": [2, 1], "threadsPerWarp": [8, 4],
                                     "warpsPerCTA": [2, 2], "order": [1, 0]})
    L = dot_op_to_linear({"opIdx": 0}, blocked, [32, 16])
    t = table(L)
    for lane, w in itertools.product(range(32), range(4)):
        held = {t[(r, lane, w)] for r in range(L.in_dims["register"])}
        rows = {row for row, _ in held}
        assert held == {(row, k) for row in rows for k in range(16)}
    assert all(b[1] == 0 for b in L.bases["lane"] + L.bases["warp"])


# ----- WMMA ------------------------------------------------------------------------------
@pytest.mark.parametrize("version", [1, 2])
def test_wmma_16x16_accumulator_formula(version):
    # RDNA3 (v1): lane l, register i hold C[2i + l//16][l % 16]; RDNA4 (v2): C[i + 8*(l//16)][l % 16].
    for (i, lane, _), got in table(amd_wmma_to_linear(wmma(version=version), [16, 16])).items():
        row = 2 * i + lane // 16 if version == 1 else i + 8 * (lane // 16)
        assert got == (row, lane % 16)


def test_wmma_transposed_swaps_the_tile_dims():
    plain = amd_wmma_to_linear(wmma(), [16, 16])
    trans = amd_wmma_to_linear(wmma(isTranspose=True), [16, 16])
    for dim in ("register", "lane"):
        assert trans.bases[dim] == swap01(plain.bases[dim])


def test_wmma_empty_cta_layout_is_one_warp():
    # Triton prints ``ctaLayout = {}`` for a one-warp layout (no register repeats).
    assert amd_wmma_to_linear(wmma(ctaLayout={}), [16, 16]) == \
        amd_wmma_to_linear(wmma(ctaLayout={"warp": []}), [16, 16])


def test_wmma_cta_layout_bases_count_in_tiles():
    L = amd_wmma_to_linear(wmma(ctaLayout={"register": [[1, 0]], "warp": [[0, 1]]}), [32, 32])
    assert L.bases["warp"] == [[0, 16]]
    assert L.bases["register"][-1] == [16, 0]


# ----- every layout is a function onto the tensor, no element lost -------------------------
@settings(max_examples=40, deadline=None)
@given(st.sampled_from([[32, 32, 8], [16, 16, 16], [4, 64, 4]]), st.booleans(),
       st.integers(0, 2), st.integers(0, 2), st.integers(4, 8), st.integers(4, 8))
def test_mfma_covers_the_tensor(instr, transposed, wm, wn, sm, sn):
    L = amd_mfma_to_linear(mfma(instrShape=instr, isTransposed=transposed,
                                warpsPerCTA=[1 << wm, 1 << wn]), [1 << sm, 1 << sn])
    assert L.is_surjective() and L.out_dims == {"dim0": 1 << sm, "dim1": 1 << sn}


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([2, 3]), st.integers(0, 2), st.integers(0, 1), st.integers(4, 8),
       st.integers(3, 8))
def test_nvidia_mma_covers_the_tensor(major, wm, wn, sm, sn):
    instr = [16, 8] if major == 2 else [16, 8, 16]
    L = nvidia_mma_to_linear(nv(versionMajor=major, warpsPerCTA=[1 << wm, 1 << wn],
                                instrShape=instr), [1 << sm, 1 << sn])
    assert L.is_surjective() and list(L.in_dims) == ["register", "lane", "warp", "block"]


# ----- bad input ---------------------------------------------------------------------------
@pytest.mark.parametrize("params, match", [
    (nv(warpsPerCTA=[3, 1]), "not a power of two"),
    (nv(versionMajor=1), "versionMajor"),
    (nv(versionMajor=4), "versionMajor"),
    (nv(instrShape=[16, 8, 16]), "instrShape"),
    (nv(instrShape=[24, 8]), "tile"),
    (nv(versionMajor=3, instrShape=[16, 24, 16]), "tile"),
    (nv(colour=1), "unknown parameter"),
    ({"versionMajor": 2, "warpsPerCTA": [1, 1]}, "missing parameter 'instrShape'"),
    (nv(warpsPerCTA="[1, 1]"), "list of integers"),
])
def test_bad_nvidia_mma_raises(params, match):
    with pytest.raises(LayoutError, match=match):
        nvidia_mma_to_linear(params, [64, 64])


@pytest.mark.parametrize("params, match", [
    (mfma(version=5), "version"),
    (mfma(instrShape=[8, 8, 4]), "mDim"),
    (mfma(instrShape=[64, 4, 4]), "transposed"),
    (mfma(elementBitWidth=16), "elementBitWidth"),
    (mfma(warpsPerCTA=[2, 6]), "not a power of two"),
    (mfma(tilesPerWarp=[3, 1]), "not a power of two"),
    (mfma(isTransposed=1), "true or false"),
])
def test_bad_amd_mfma_raises(params, match):
    with pytest.raises(LayoutError, match=match):
        amd_mfma_to_linear(params, [64, 64])


@pytest.mark.parametrize("params, match", [
    (wmma(version=4), "version"),
    (wmma(version=1, instrShape=[16, 16, 32]), "instrShape"),
    (wmma(ctaLayout={"warp": [[0, 2]]}), "contiguously"),
    (wmma(ctaLayout={"warp": [[0, 1], [0, 1]]}), "permutation"),
    (wmma(ctaLayout={"warp": [[1, 1]]}), "permutation"),
    (wmma(ctaLayout={"warp": [], "lane": [[0, 1]]}), "unknown in dim"),
    (wmma(ctaLayout={"warp": [[0, 0, 1]]}), "rank"),
])
def test_bad_amd_wmma_raises(params, match):
    with pytest.raises(LayoutError, match=match):
        amd_wmma_to_linear(params, [64, 64])


@pytest.mark.parametrize("dot, par, match", [
    ({"opIdx": 0, "kWidth": 0}, parent("ttg.nvidia_mma", nv()), "mandatory"),
    ({"opIdx": 0, "kWidth": 3}, parent("ttg.nvidia_mma", nv()), "power of two"),
    ({"opIdx": 1, "kWidth": 2},
     parent("ttg.nvidia_mma", nv(versionMajor=3, instrShape=[16, 64, 16])), "opIdx must be 0"),
    ({"opIdx": 2, "kWidth": 2}, parent("ttg.nvidia_mma", nv()), "opIdx"),
    ({"opIdx": 0, "kWidth": 2}, parent("ttg.blocked", {"sizePerThread": [1, 1],
     "threadsPerWarp": [4, 8], "warpsPerCTA": [1, 1], "order": [1, 0]}), "kWidth must be 0"),
    ({"opIdx": 0}, parent("ttg.amd_mfma", mfma()), "mandatory"),
    ({"opIdx": 0, "kWidth": 4}, parent("ttg.amd_wmma", wmma(version=1)), "8, 16"),
    ({"opIdx": 0, "kWidth": 2}, parent("ttg.amd_wmma", wmma(version=2)), "4, 8, 16"),
    ({"opIdx": 0, "kWidth": 2}, parent("ttg.slice", {"dim": 0}), "unexpected parent"),
    ({"opIdx": 0, "kWidth": 2, "extra": 1}, parent("ttg.nvidia_mma", nv()), "unknown parameter"),
])
def test_bad_dot_op_raises(dot, par, match):
    with pytest.raises(LayoutError, match=match):
        dot_op_to_linear(dot, par, [64, 64])


@pytest.mark.parametrize("shape, match", [([64, 48], "power of two"), ([64], "rank"),
                                          ([64, 64, 1], "rank")])
def test_bad_shape_raises(shape, match):
    with pytest.raises(LayoutError, match=match):
        nvidia_mma_to_linear(nv(), shape)
