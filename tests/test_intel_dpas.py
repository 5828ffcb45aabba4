"""DPAS layouts: parameters, the per-instruction tiles, whole-tensor layouts, text errors.

Expected values come from: the seed ``002_5b1756cea8788f7c.txt`` (the printed attribute
with A/B/C, the per-instruction tiles it draws, the kWidth values it uses); the Intel
backend's ``LinearLayoutConversions.cpp`` comments, which spell out the bases for
repeatCount 8, systolicDepth 8, executionSize 16, opsPerChan 2 and 32 threads per warp
(A: Register {{2,0},{4,0}} Lane {{0,1},{0,2},{0,4},{0,8},{1,0}}; B: Register
{{1,0},{4,0},{8,0}} Lane {{0,1},{0,2},{0,4},{0,8},{2,0}}; C: as A); the Intel backend's
verifier messages (test/TritonIntelGPU/invalid.mlir); and brute-force enumeration.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from verilayout.errors import LayoutError
from verilayout.frontends.triton import intel as triton_intel
from verilayout.frontends.triton import parse
from verilayout.hw.intel.dpas import Dpas, dpas_for_dtype

SEED_PARAMS = {"repeatCount": 8, "systolicDepth": 8, "executionSize": 16, "opsPerChan": 2,
               "threadsPerWarp": 16, "warpsPerCTA": [8, 4], "repCluster": [4, 2]}


def test_seed_attribute_prints_the_derived_a_b_c_shapes():
    # seed 002: "... repCluster = [4, 2], A = [32, 16], B = [16, 32], C = [32, 32]"
    d = triton_intel.dpas_params({**SEED_PARAMS, "A": [32, 16], "B": [16, 32], "C": [32, 32]})
    assert (d.shape_a, d.shape_b, d.shape_c) == ((32, 16), (16, 32), (32, 32))


def test_instruction_tiles_are_the_seeds_8x16_a_and_16x16_b():
    # seed 002: "the A matrix input to each instruction is expected to be 8x16";
    # "The B tile is expected to be 16x16".
    d = Dpas(8, 8, 16, 2, 16, (8, 4), (4, 2))
    assert d.inst_shape_a == (8, 16) and d.inst_shape_b == (16, 16)


def test_seed_a_tile_each_lane_holds_one_column():
    # seed 002, the 8x16 A table: WI l holds (r, l) for r = 0..7.
    L = Dpas(8, 8, 16, 2, 16, (1, 1), (1, 1)).layout((8, 16), 0)
    for r, l in itertools.product(range(8), range(16)):
        assert L.apply({"register": r, "lane": l, "warp": 0, "block": 0}) == {"dim0": r, "dim1": l}


def test_seed_b_tile_each_lane_holds_vnni_pairs_of_one_column():
    # seed 002, the 16x16 B table: WI l, row s holds "(2s, l) : (2s+1, l)".
    L = Dpas(8, 8, 16, 2, 16, (1, 1), (1, 1)).layout((16, 16), 1)
    for s, j, l in itertools.product(range(8), range(2), range(16)):
        got = L.apply({"register": 2 * s + j, "lane": l, "warp": 0, "block": 0})
        assert got == {"dim0": 2 * s + j, "dim1": l}


@pytest.mark.parametrize("op, regs, lanes", [
    (0, [[2, 0], [4, 0]], [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0]]),
    (1, [[1, 0], [4, 0], [8, 0]], [[0, 1], [0, 2], [0, 4], [0, 8], [2, 0]]),
    (2, [[2, 0], [4, 0]], [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0]]),
])
def test_tile_bases_for_32_lanes_match_the_backend_comments(op, regs, lanes):
    # LinearLayoutConversions.cpp (Intel backend), comments above DPASRegBasesA/B/C.
    assert Dpas(8, 8, 16, 2, 32, (1, 1), (1, 1)).tile_bases(op) == (regs, lanes)


def test_int8_a_packs_two_k_values_per_lane():
    # opsPerChan 4: A is packed to 16 bits per lane, so lane l holds k = 2l, 2l+1
    # (register bit 0), rows in the next register bits; the tile is 8 x 32.
    L = Dpas(8, 8, 16, 4, 16, (1, 1), (1, 1)).layout((8, 32), 0)
    for r, l in itertools.product(range(16), range(16)):
        got = L.apply({"register": r, "lane": l, "warp": 0, "block": 0})
        assert got == {"dim0": r >> 1, "dim1": 2 * l + (r & 1)}


def _table(L):
    """Brute force: (warp, register, lane) -> (dim0, dim1)."""
    out = {}
    for w, r, l in itertools.product(range(L.in_dims["warp"]), range(L.in_dims["register"]),
                                     range(L.in_dims["lane"])):
        o = L.apply({"register": r, "lane": l, "warp": w, "block": 0})
        out[(w, r, l)] = (o["dim0"], o["dim1"])
    return out


@settings(max_examples=25, deadline=None)
@given(dtype=st.sampled_from(["f16", "i8", "tf32"]), rc0=st.sampled_from([1, 2, 4]),
       rc1=st.sampled_from([1, 2]), w0=st.sampled_from([1, 2]), w1=st.sampled_from([1, 2]),
       m=st.sampled_from([1, 2]), n=st.sampled_from([1, 2]), kk=st.sampled_from([1, 2]))
def test_operands_cover_the_tensor_and_are_injective_per_warp(dtype, rc0, rc1, w0, w1, m, n, kk):
    d = dpas_for_dtype(dtype, (w0, w1), (rc0, rc1))
    M = d.shape_a[0] * w0 * m
    N = d.shape_b[1] * w1 * n
    K = d.shape_a[1] * kk
    for op, shape in ((0, (M, K)), (1, (K, N)), (2, (M, N))):
        table = _table(d.layout(shape, op))
        assert set(table.values()) == set(itertools.product(range(shape[0]), range(shape[1])))
        for w in range(w0 * w1):
            mine = [v for (ww, _, _), v in table.items() if ww == w]
            assert len(mine) == len(set(mine)), f"op {op} warp {w} holds an element twice"


def test_a_operand_k_is_shared_by_warps_along_n():
    # A is replicated across warpsPerCTA[1] (the warps that differ only in N).
    L = Dpas(8, 8, 16, 2, 16, (2, 2), (1, 1)).layout((16, 16), 0)
    t = _table(L)
    assert all(t[(0, r, l)] == t[(1, r, l)] for r in range(8) for l in range(16))


def test_layout_from_text_equals_layout_from_parameters():
    text = ("#ttg.dot_op<{opIdx = 1, parent = #ttig.dpas<{repeatCount = 8, systolicDepth = 8, "
            "executionSize = 16, opsPerChan = 4, threadsPerWarp = 16, warpsPerCTA = [2, 2], "
            "repCluster = [2, 2]}>, kWidth = 4}>")
    assert parse(text, [64, 64]) == Dpas(8, 8, 16, 4, 16, (2, 2), (2, 2)).layout((64, 64), 1)


def test_accumulator_text_converts():
    text = ("#triton_intel_gpu.dpas<{repeatCount = 8, systolicDepth = 8, executionSize = 16, "
            "opsPerChan = 2, threadsPerWarp = 16, warpsPerCTA = [1, 1], repCluster = [1, 1]}>")
    L = parse(text, [8, 16])
    assert L.apply({"register": 3, "lane": 5, "warp": 0, "block": 0}) == {"dim0": 3, "dim1": 5}


@pytest.mark.parametrize("edit, message", [
    ("repeatCount = 8", "repeatCount = 9"),
    ("systolicDepth = 8", "systolicDepth = 4"),
    ("opsPerChan = 2", "opsPerChan = 3"),
])
def test_bad_parameters_are_positioned_errors(edit, message):
    text = ("#ttig.dpas<{repeatCount = 8, systolicDepth = 8, executionSize = 16, opsPerChan = 2, "
            "threadsPerWarp = 16, warpsPerCTA = [1, 1], repCluster = [1, 1]}>").replace(edit, message)
    key = message.split(" ")[0]
    with pytest.raises(LayoutError, match=rf"^line 1, col \d+: '{key}'"):
        parse(text, [8, 16])


def test_threads_per_warp_below_execution_size_is_rejected():
    # Intel backend invalid.mlir: "threadsPerWarp could not be smaller than the execution size"
    with pytest.raises(LayoutError, match="'threadsPerWarp' = 8 is smaller than 'executionSize'"):
        Dpas(8, 8, 16, 1, 8, (2, 2), (1, 1))


def test_too_small_repeat_count_for_a_is_rejected():
    # Intel backend invalid.mlir: repeatCount 1, opsPerChan 1, 16 lanes: "The DPAS encoding
    # implies an invalid layout for A operand"
    with pytest.raises(LayoutError, match="too small for operand A"):
        Dpas(1, 8, 16, 1, 16, (2, 2), (1, 1)).layout((2, 8), 0)


def test_kwidth_must_match_ops_per_chan_for_b():
    # Intel backend invalid.mlir: opsPerChan 1 with kWidth 2 on operand B is rejected
    # ("ttg.dot_op kWidth parameter must match the parent's opsPerChannel").
    p = {**SEED_PARAMS, "opsPerChan": 1}
    with pytest.raises(LayoutError, match="'kWidth' = 2 but a DPAS operand B"):
        triton_intel.dot_op_dpas_to_linear({"opIdx": 1, "kWidth": 2}, p, (16, 16))
    # seed 002 uses kWidth 1 for A and 2 for B with opsPerChan 2.
    assert Dpas(8, 8, 16, 2, 16, (1, 1), (1, 1)).k_width(0) == 1
    assert Dpas(8, 8, 16, 2, 16, (1, 1), (1, 1)).k_width(1) == 2


def test_unknown_keys_and_wrong_printed_shapes_are_errors():
    with pytest.raises(LayoutError, match="unknown key 'fp8KPack'"):
        triton_intel.dpas_params({**SEED_PARAMS, "fp8KPack": 2})
    # fp4KPack is a key of the attribute (DpasEncodingAttr::verify: 2, only with opsPerChan 4)
    with pytest.raises(LayoutError, match="'fp4KPack' must be 2"):
        triton_intel.dpas_params({**SEED_PARAMS, "fp4KPack": 1})
    with pytest.raises(LayoutError, match="'B' = \\[16, 16\\] differs"):
        triton_intel.dpas_params({**SEED_PARAMS, "B": [16, 16]})
    with pytest.raises(LayoutError, match="missing the key 'repCluster'"):
        triton_intel.dpas_params({k: v for k, v in SEED_PARAMS.items() if k != "repCluster"})
    with pytest.raises(LayoutError, match="unknown key 'foo' for #ttg.dot_op"):
        triton_intel.dot_op_dpas_to_linear({"opIdx": 0, "kWidth": 1, "foo": 1}, SEED_PARAMS,
                                           (256, 32))


def test_dot_op_with_other_parents_still_converts():
    # The DPAS hook wraps #ttg.dot_op; other parents go to the original converter.
    text = ("tensor<32x32xf16, #ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2, "
            "versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>, kWidth = 2}>>")
    assert parse(text).in_dims["lane"] == 32


def test_rank3_layout_has_batch_warps_and_repetitions():
    d = Dpas(8, 8, 16, 2, 16, (2, 1, 1), (1, 1, 1))
    L = d.layout((4, 8, 16), 2)
    t = {}
    for w, r, l in itertools.product(range(2), range(L.in_dims["register"]), range(16)):
        o = L.apply({"register": r, "lane": l, "warp": w, "block": 0})
        t[(w, r, l)] = (o["dim0"], o["dim1"], o["dim2"])
    assert set(t.values()) == set(itertools.product(range(4), range(8), range(16)))
    assert np.unique(np.array(list(t.values())), axis=0).shape[0] == len(t)
