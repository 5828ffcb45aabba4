"""verilayout.testing: each assertion passes on a true claim and fails with the counterexample.

Expected facts: seed 004 (16x32 fp32 column read: all of column 0 in bank 0), seed 003 (K-major
no-swizzle core matrices 128 bytes apart: SBO 128), seed 002 (B needs a second load at N = 128).
"""
from __future__ import annotations

import dataclasses

import pytest

from verilayout import blockload
from verilayout.testing import assert_conflict_free, assert_covers, assert_descriptor_matches
from verilayout.wgmma import encode

REG = ("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], "
       "order = [0, 1]}>")
PLAIN = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"
XOR = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 16, order = [1, 0]}>"


def test_assert_conflict_free():
    reg32 = REG.replace("[16, 2]", "[32, 1]")
    assert_conflict_free(reg32, XOR, elem_bits=32, instruction="ld.shared.b32", shape=[16, 32])
    with pytest.raises(AssertionError, match=r"16 wavefronts.*bank.?0"):
        assert_conflict_free(REG, PLAIN, elem_bits=32, shape=[16, 32])


# K-major, no swizzle, f16: 8x8 core matrices (8 rows of 16 bytes = 128 bytes), rows of core
# matrices 128 bytes apart (SBO = 128), the two K core matrices 1024 bytes apart (LBO = 1024)
TILE = "Sw<0,4,3> o smem_ptr16b o ((_8,8),(_8,2)):((_8,_64),(_1,512))"


def test_assert_descriptor_matches():
    good = encode(start_address=0, lbo=1024, sbo=128, swizzle="none")
    assert_descriptor_matches(good, TILE, dtype="f16", major="K")
    bad = encode(start_address=0, lbo=1024, sbo=1024, swizzle="none")
    with pytest.raises(AssertionError, match=r"counterexample: .*'mn': 8"):
        assert_descriptor_matches(bad, TILE, dtype="f16", major="K")


B_TYPE = ("tensor<32x256xf16, #ttg.dot_op<{opIdx = 1, parent = #ttig.dpas<{repeatCount = 8, "
          "systolicDepth = 8, executionSize = 16, opsPerChan = 2, threadsPerWarp = 16, "
          "warpsPerCTA = [8, 4], repCluster = [4, 2]}>, kWidth = 2}>>")


def test_assert_covers():
    p = blockload.plan(B_TYPE)
    assert_covers(p, B_TYPE)
    short = dataclasses.replace(p, loads=p.loads[:1], shuffle=tuple(
        tuple((0, e) if i == 1 else (i, e) for i, e in row) for row in p.shuffle))
    with pytest.raises(AssertionError, match=r"counterexample: .*'element': \[0, 128\]"):
        assert_covers(short, B_TYPE)
