"""Triton's own lit tests as input (``tests/upstream/lit_layouts.json``, made by
``tests/upstream/extract_lit_layouts.py``; the comparison with the Triton 3.9 wheel is
``tests/oracles/test_lit_layouts_oracle.py``). Without the wheel: every stored type and every alias
definition no type uses is read by verilayout's MLIR reader, and each type's layout is computed or
refused with a one-line LayoutError, never another exception.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from verilayout import parse
from verilayout.errors import LayoutError
from verilayout.frontends.mlir import Attr, TensorType, parse_value
from verilayout.frontends.triton import type_to_layout

LIT = json.loads((Path(__file__).resolve().parent / "upstream" / "lit_layouts.json").read_text())


def test_the_data_is_triton_lit_tests():
    src = LIT["source"]
    assert src["files"] > 300 and len(LIT["types"]) > 4000
    assert all(e["file"].startswith("test/") and e["file"].endswith(".mlir") for e in LIT["types"])
    assert not any(e["file"].startswith("test/TLX/") for e in LIT["types"])


def test_every_type_reads_or_is_a_one_line_layout_error():
    read = refused = 0
    for e in LIT["types"]:
        try:
            t = parse_value(e["type"])
            assert isinstance(t, TensorType) and isinstance(t.encoding, Attr), e
            type_to_layout(t)
            read += 1
        except LayoutError as err:
            assert "\n" not in str(err)
            refused += 1
    assert refused < read / 20, (read, refused)


def test_unused_alias_definitions_parse():
    for e in LIT["unused_attributes"]:
        try:
            assert isinstance(parse_value(e["attribute"]), Attr)
        except LayoutError as err:
            assert "\n" not in str(err), e


# The Triton 3.9 wheel's bases for types of Triton's lit tests that verilayout refused or read
# differently before issue 26 (asked with tests/oracles/test_lit_layouts_oracle.py's worker; file
# and line of facebookexperimental/triton's test/ tree in each case). They keep the agreement
# checked where the wheel is not installed.
WHEEL = [
    ("test/Conversion/tritongpu_to_llvm.mlir:2103",
     "tensor<16x16xf64, #ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, "
     "warpsPerCTA = [1, 1], instrShape = [8, 8]}>, kWidth = 1}>>",
     {"register": [[0, 4], [0, 8], [8, 0]], "lane": [[0, 1], [0, 2], [1, 0], [2, 0], [4, 0]], "warp": [], "block": []}),
    ("test/Conversion/tritongpu_to_llvm.mlir:2552",
     "tensor<8x4xf32, #ttg.dot_op<{opIdx=0, parent=#ttg.nvidia_mma<{versionMajor = 2, warpsPerCTA = [4, 1], "
     "instrShape = [8, 8]}>, kWidth=1}>>",
     {"register": [], "lane": [[0, 1], [0, 2], [1, 0], [2, 0], [4, 0]], "warp": [[0, 0], [0, 0]], "block": []}),
    ("test/Analysis/test-allocation.mlir:1115",
     "!ttg.memdesc<64x32xf16, #ttg.partitioned_shared<{numPartitions = 2, numGroups = 2, partitionDim = 0, "
     "partitionLayout = #ttg.swizzled_shared<{vec = 2, perPhase = 2, maxPhase = 4, order = [1, 0]}>}>, "
     "#ttg.shared_memory, mutable>",
     {"offset": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [1, 0], [2, 2], [4, 4], [8, 0], [32, 0]], "block": []}),
    ("test/TritonGPU/amd/amd-update-async-wait-count.mlir:738",
     "!ttg.memdesc<128x16xf16, #ttg.partitioned_shared<{numPartitions = 2, numGroups = 4, partitionDim = 0, "
     "partitionLayout = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>}>, "
     "#ttg.shared_memory, mutable>",
     {"offset": [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0], [4, 0], [8, 0], [32, 0], [64, 0]], "block": []}),
    ("test/TritonGPU/ops.mlir:176",
     "tensor<32x1xi32, #ttg.generic_linear<{register = [[1, 0], [0, 1]], lane = [[2, 0], [4, 0], [8, 0], [0, 2], "
     "[0, 4]], warp = [[16, 8], [0, 8]], block = []}>>",
     {"register": [[1, 0]], "lane": [[2, 0], [4, 0], [8, 0], [0, 0], [0, 0]], "warp": [[16, 0], [0, 0]], "block": []}),
    ("test/TritonGPU/amd/invalid.mlir:583",
     "tensor<32xi32, #ttg.slice<{dim = 1, parent = #ttg.linear<{register = [[1, 0], [2, 0], [4, 0], [8, 0]], "
     "lane = [[0, 0], [0, 0], [0, 0], [0, 0], [0, 0]], warp = [], block = [[16, 0]], order = [1, 0]}>}>>",
     {"register": [[1], [2], [4], [8]], "lane": [[0], [0], [0], [0], [0]], "warp": [], "block": [[16]]}),
]


@pytest.mark.parametrize("where,text,bases", WHEEL, ids=[w[0] for w in WHEEL])
def test_recorded_wheel_bases(where, text, bases):
    assert parse(text).bases == bases


def test_partitioned_over_padded_is_refused_as_the_wheel_does():
    # test/Analysis/test-allocation-partitioned.mlir:38: the wheel aborts ("toLinearLayout does not
    # support partitioned layouts wrapping padded layouts")
    with pytest.raises(LayoutError, match="padded"):
        parse("!ttg.memdesc<64x32xf16, #ttg.partitioned_shared<{numPartitions = 2, numGroups = 2, partitionDim = 0, "
              "partitionLayout = #ttg.padded_shared<[256:+8] {order = [1, 0], shape = [16, 32]}>}>, "
              "#ttg.shared_memory, mutable>")
