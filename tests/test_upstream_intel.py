"""Worked expectations of Intel's DPAS and subgroup-2D-block layout unit tests.

Sources (intel/intel-xpu-backend-for-triton @ 6c1649935d83):
``third_party/intel/unittest/Dialect/TritonIntelGPU/DPAStoLinearLayoutTest.cpp``
(``TEST_F(DPAStoLinearLayoutTest, ...)``: ``DPAStoLinearLayout(shape, dpas(warps, repeatCount,
systolicDepth, executionSize, opsPerChannel, repCluster, threadsPerWarp), opIdx)``) and
``third_party/intel/unittest/Dialect/TritonIntelGPU/LinearLayoutConversionsTest.cpp``
(``TEST_F(LinearLayoutConversionsTest, ...)``: ``subgroup2DBlockToLinearLayout``). The expected
bases are Intel's (facts); the code is ours.

The DPAS parameters are passed to :class:`verilayout.hw.intel.dpas.Dpas` in the attribute's
order (repeatCount, systolicDepth, executionSize, opsPerChan, threadsPerWarp, warpsPerCTA,
repCluster) and, through ``verilayout.parse``, as the ``#ttig.dpas`` text (opIdx 2) or a
``#ttg.dot_op`` with that parent (opIdx 0/1, with the kWidth the Intel backend requires).
The block-scaled scale operands (opIdx 3/4, ``BlockScaledDPAStoLinearLayout``, with the
optional ``fp4KPack``) go through ``Dpas.layout``; ``#ttig.subgroup_2d_block`` is written as
Intel's ``Subgroup2DBlockEncodingAttr::print`` prints it and read by ``verilayout.parse``.
"""
from __future__ import annotations

import pytest

from verilayout import parse
from verilayout.core.linear_layout import LinearLayout
from verilayout.hw.intel.dpas import Dpas

OUTS = ["dim0", "dim1"]


def _expected(bases):
    rank = len(next(iter(bases.values()))[0]) if any(bases.values()) else 2
    return LinearLayout(bases, [f"dim{i}" for i in range(rank)])


def _dpas_text(args):
    rc, sd, es, opc, tpw, warps, cluster = args
    return (f"#ttig.dpas<{{repeatCount = {rc}, systolicDepth = {sd}, executionSize = {es}, "
            f"opsPerChan = {opc}, threadsPerWarp = {tpw}, warpsPerCTA = {list(warps)}, "
            f"repCluster = {list(cluster)}}}>")


# (TEST_F name, Dpas args, opIdx, shape, expected bases)
DPAS = [
    ("DPAS_perInst", (8, 8, 16, 2, 32, (1, 1), (1, 1)), 2, [8, 16],
     {"register": [[2, 0], [4, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0]], "warp": [], "block": []}),
    ("DPAS_perInst", (8, 8, 16, 1, 16, (1, 1), (1, 1)), 2, [8, 16],
     {"register": [[1, 0], [2, 0], [4, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8]], "warp": [], "block": []}),
    ("DPAS_perInst", (8, 8, 16, 4, 32, (1, 1), (1, 1)), 0, [8, 32],
     {"register": [[0, 1], [2, 0], [4, 0]], "lane": [[0, 2], [0, 4], [0, 8], [0, 16], [1, 0]], "warp": [], "block": []}),
    ("DPAS_perInst", (8, 8, 16, 2, 32, (1, 1), (1, 1)), 0, [8, 16],
     {"register": [[2, 0], [4, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0]], "warp": [], "block": []}),
    ("DPAS_perInst", (8, 8, 16, 1, 32, (1, 1), (1, 1)), 0, [8, 8],
     {"register": [[4, 0]], "lane": [[0, 1], [0, 2], [0, 4], [1, 0], [2, 0]], "warp": [], "block": []}),
    ("DPAS_perInst", (8, 8, 16, 4, 32, (1, 1), (1, 1)), 1, [32, 16],
     {"register": [[1, 0], [2, 0], [8, 0], [16, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [4, 0]], "warp": [], "block": []}),
    ("DPAS_perInst", (8, 8, 16, 2, 32, (1, 1), (1, 1)), 1, [16, 16],
     {"register": [[1, 0], [4, 0], [8, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [2, 0]], "warp": [], "block": []}),
    ("DPAS_perInst", (8, 8, 16, 1, 32, (1, 1), (1, 1)), 1, [8, 16],
     {"register": [[2, 0], [4, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0]], "warp": [], "block": []}),
    ("DPAS_withRepCluster", (8, 8, 16, 2, 16, (1, 1), (4, 2)), 2, [32, 32],
     {"register": [[1, 0], [2, 0], [4, 0], [0, 16], [8, 0], [16, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8]], "warp": [], "block": []}),
    ("DPAS_withRepCluster", (8, 8, 16, 2, 32, (1, 1), (4, 2)), 0, [32, 16],
     {"register": [[2, 0], [4, 0], [8, 0], [16, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0]], "warp": [], "block": []}),
    ("DPAS_withRepCluster", (8, 8, 16, 2, 32, (1, 1), (4, 2)), 1, [16, 32],
     {"register": [[1, 0], [4, 0], [8, 0], [0, 16]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [2, 0]], "warp": [], "block": []}),
    ("DPAS_withRepCluster", (8, 8, 16, 1, 16, (1, 1), (4, 2)), 2, [32, 32],
     {"register": [[1, 0], [2, 0], [4, 0], [0, 16], [8, 0], [16, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8]], "warp": [], "block": []}),
    ("DPAS_withWarp", (8, 8, 16, 2, 16, (4, 1), (1, 2)), 2, [32, 32],
     {"register": [[1, 0], [2, 0], [4, 0], [0, 16]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8]], "warp": [[8, 0], [16, 0]], "block": []}),
    ("DPAS_withWarp", (8, 8, 16, 1, 32, (2, 2), (4, 2)), 2, [64, 64],
     {"register": [[2, 0], [4, 0], [0, 16], [8, 0], [16, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0]], "warp": [[0, 32], [32, 0]], "block": []}),
    ("DPAS_withWarpOperandA", (8, 8, 16, 2, 32, (2, 2), (4, 2)), 0, [64, 64],
     {"register": [[2, 0], [4, 0], [8, 0], [16, 0], [0, 16], [0, 32]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0]], "warp": [[0, 0], [32, 0]], "block": []}),
    ("DPAS_withWarpOperandB", (8, 8, 16, 2, 32, (2, 2), (4, 2)), 1, [64, 64],
     {"register": [[1, 0], [4, 0], [8, 0], [0, 16], [16, 0], [32, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [2, 0]], "warp": [[0, 32], [0, 0]], "block": []}),
    ("DPAS_withDPASRepetitions", (8, 8, 16, 2, 32, (2, 1), (4, 2)), 2, [64, 64],
     {"register": [[2, 0], [4, 0], [0, 16], [8, 0], [16, 0], [0, 32]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0]], "warp": [[32, 0]], "block": []}),
    ("DPAS_withDPASRepetitions", (8, 8, 16, 2, 32, (2, 2), (2, 2)), 2, [128, 128],
     {"register": [[2, 0], [4, 0], [0, 16], [8, 0], [0, 64], [32, 0], [64, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0]], "warp": [[0, 32], [16, 0]], "block": []}),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=f"{c[0]}-{i}") for i, c in enumerate(DPAS)])
def test_dpas_layout_matches_intel_unit_test(case):
    name, args, op, shape, bases = case
    expected = _expected(bases)
    assert Dpas(*args).layout(shape, op) == expected
    if op == 2:
        text = _dpas_text(args)
    else:
        k_width = Dpas(*args).k_width(op)
        text = f"#ttg.dot_op<{{opIdx = {op}, parent = {_dpas_text(args)}, kWidth = {k_width}}}>"
    assert parse(text, shape) == expected


# (TEST_F name, Dpas args, opIdx (3: scale A, 4: scale B), fp4KPack, shape, expected bases):
# BlockScaledDPAStoLinearLayout
SCALES = [
    ("DPAS_OperandScaleA", (8, 8, 16, 4, 32, (2, 2), (4, 2)), 3, None, [128, 2],
     {"register": [[8, 0], [16, 0], [0, 1], [64, 0]], "lane": [[1, 0], [2, 0], [4, 0], [0, 0], [0, 0]], "warp": [[0, 0], [32, 0]], "block": []}),
    ("DPAS_OperandScaleA", (8, 8, 16, 4, 32, (2, 2), (4, 2)), 3, 2, [128, 4],
     {"register": [[0, 1], [8, 0], [16, 0], [0, 2], [64, 0]], "lane": [[1, 0], [2, 0], [4, 0], [0, 0], [0, 0]], "warp": [[0, 0], [32, 0]], "block": []}),
    ("DPAS_OperandScaleA", (8, 8, 16, 4, 16, (2, 2), (4, 2)), 3, None, [128, 2],
     {"register": [[8, 0], [16, 0], [0, 1], [64, 0]], "lane": [[1, 0], [2, 0], [4, 0], [0, 0]], "warp": [[0, 0], [32, 0]], "block": []}),
    ("DPAS_OperandScaleA", (8, 8, 16, 4, 16, (2, 2), (4, 2)), 3, 2, [128, 4],
     {"register": [[0, 1], [8, 0], [16, 0], [0, 2], [64, 0]], "lane": [[1, 0], [2, 0], [4, 0], [0, 0]], "warp": [[0, 0], [32, 0]], "block": []}),
    ("DPAS_OperandScaleA", (8, 8, 16, 4, 16, (1, 2, 2), (1, 4, 2)), 3, None, [1, 128, 4],
     {"register": [[0, 8, 0], [0, 16, 0], [0, 0, 1], [0, 0, 2], [0, 64, 0]], "lane": [[0, 1, 0], [0, 2, 0], [0, 4, 0], [0, 0, 0]], "warp": [[0, 0, 0], [0, 32, 0]], "block": []}),
    ("DPAS_OperandScaleA", (8, 8, 16, 4, 16, (2, 1, 2), (1, 4, 2)), 4, 2, [16, 128, 4],
     {"register": [[0, 0, 1], [0, 16, 0], [0, 0, 2], [0, 64, 0], [2, 0, 0], [4, 0, 0], [8, 0, 0]], "lane": [[0, 1, 0], [0, 2, 0], [0, 4, 0], [0, 8, 0]], "warp": [[0, 32, 0], [1, 0, 0]], "block": []}),
    ("DPAS_OperandScaleB", (8, 8, 16, 4, 32, (2, 2), (4, 2)), 4, None, [128, 2],
     {"register": [[16, 0], [0, 1], [64, 0]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 0]], "warp": [[32, 0], [0, 0]], "block": []}),
    ("DPAS_OperandScaleB", (8, 8, 16, 4, 16, (2, 2), (4, 2)), 4, None, [128, 2],
     {"register": [[16, 0], [0, 1], [64, 0]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0]], "warp": [[32, 0], [0, 0]], "block": []}),
    ("DPAS_OperandScaleB", (8, 8, 16, 4, 32, (2, 2), (4, 2)), 4, 2, [128, 4],
     {"register": [[0, 1], [16, 0], [0, 2], [64, 0]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 0]], "warp": [[32, 0], [0, 0]], "block": []}),
    ("DPAS_OperandScaleB", (8, 8, 16, 4, 16, (2, 2), (4, 2)), 4, 2, [128, 4],
     {"register": [[0, 1], [16, 0], [0, 2], [64, 0]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0]], "warp": [[32, 0], [0, 0]], "block": []}),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=f"{c[0]}-{i}") for i, c in enumerate(SCALES)])
def test_block_scaled_dpas_scale_layout(case):
    name, args, op, fp4, shape, bases = case
    assert fp4 in (None, 2)
    assert Dpas(*args, fp4_k_pack=fp4).layout(shape, op) == _expected(bases)


# (TEST_F name, #ttig.subgroup_2d_block text, block shape, expected bases)
SUBGROUP_2D_BLOCK = [
    ("FP32_32x8x2_M256_N128_K32_A", "#ttig.subgroup_2d_block<{warpsPerCTA = [8, 4], instrShape = [32, 8], numBlocks=2, order=[1, 0], kWidth=4, threadsPerWarp=16}>",
     [256, 32], {"register": [[2, 0], [4, 0], [8, 0], [16, 0], [0, 8], [0, 16]], "lane": [[0, 1], [0, 2], [0, 4], [1, 0]], "warp": [[0, 0], [0, 0], [32, 0], [64, 0], [128, 0]], "block": []}),
    ("FP32_32x16x1_M256_N128_K32_B", "#ttig.subgroup_2d_block<{warpsPerCTA = [8, 4], instrShape = [32, 16], numBlocks=1, order=[0, 1], kWidth=4, threadsPerWarp=16}>",
     [32, 128], {"register": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 64]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8]], "warp": [[0, 16], [0, 32], [0, 0], [0, 0], [0, 0]], "block": []}),
    ("FP16_32x32x1_M256_N32_K32_A", "#ttig.subgroup_2d_block<{warpsPerCTA = [8, 4], instrShape = [32, 32], numBlocks=1, order=[1, 0], kWidth=2, threadsPerWarp=16}>",
     [256, 32], {"register": [[0, 1], [1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], "lane": [[0, 2], [0, 4], [0, 8], [0, 16]], "warp": [[0, 0], [0, 0], [32, 0], [64, 0], [128, 0]], "block": []}),
    ("FP16_32x16x2_M256_N32_K32_A", "#ttig.subgroup_2d_block<{warpsPerCTA = [8, 4], instrShape = [32, 16], numBlocks=2, order=[1, 0], kWidth=2, threadsPerWarp=16}>",
     [256, 32], {"register": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 16]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8]], "warp": [[0, 0], [0, 0], [32, 0], [64, 0], [128, 0]], "block": []}),
    ("FP16_32x16x2_M256_N32_K32_B", "#ttig.subgroup_2d_block<{warpsPerCTA = [8, 4], instrShape = [32, 16], numBlocks=2, order=[0, 1], kWidth=2, threadsPerWarp=16}>",
     [32, 256], {"register": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 16], [0, 128]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8]], "warp": [[0, 32], [0, 64], [0, 0], [0, 0], [0, 0]], "block": []}),
    ("FP16_16x16x2_M256_N32_K32_B", "#ttig.subgroup_2d_block<{warpsPerCTA = [8, 4], instrShape = [16, 16], numBlocks=2, order=[0, 1], kWidth=2, threadsPerWarp=16}>",
     [32, 256], {"register": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 16], [16, 0], [0, 128]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8]], "warp": [[0, 32], [0, 64], [0, 0], [0, 0], [0, 0]], "block": []}),
    ("I8_16x32x1_M64_N128_K32_A", "#ttig.subgroup_2d_block<{warpsPerCTA = [4, 8], instrShape = [16, 32], numBlocks=1, order=[1, 0], kWidth=1, threadsPerWarp=16}>",
     [64, 32], {"register": [[0, 1], [1, 0], [2, 0], [4, 0], [8, 0]], "lane": [[0, 2], [0, 4], [0, 8], [0, 16]], "warp": [[0, 0], [0, 0], [0, 0], [16, 0], [32, 0]], "block": []}),
    ("I8_32x32x1_M64_N128_K32_B", "#ttig.subgroup_2d_block<{warpsPerCTA = [4, 8], instrShape = [32, 16], numBlocks=1, order=[0, 1], kWidth=1, threadsPerWarp=16}>",
     [32, 128], {"register": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8]], "warp": [[0, 16], [0, 32], [0, 64], [0, 0], [0, 0]], "block": []}),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c[0]) for c in SUBGROUP_2D_BLOCK])
def test_subgroup_2d_block_matches_intel_unit_test(case):
    name, text, shape, bases = case
    assert parse(text, shape) == LinearLayout(bases, OUTS)
