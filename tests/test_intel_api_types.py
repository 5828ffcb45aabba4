"""Block-load API inputs: numpy integers are integers; wrong types are LayoutError.

Expected values: the same call with Python ints (the seed 002 one-instruction A operand).
"""
from __future__ import annotations

import numpy as np
import pytest

from verilayout import blockload
from verilayout.errors import LayoutError

DPAS = ("#ttig.dpas<{repeatCount = 8, systolicDepth = 8, executionSize = 16, opsPerChan = 2, "
        "threadsPerWarp = 16, warpsPerCTA = [1, 1], repCluster = [1, 1]}>")
A = f"#ttg.dot_op<{{opIdx = 0, parent = {DPAS}, kWidth = 1}}>"


def test_numpy_integers_are_accepted():
    p = blockload.plan(A, shape=(np.int64(8), np.int64(16)), dtype="f16")
    q = blockload.plan(A, shape=(8, 16), dtype="f16")
    assert [ld.describe() for ld in p.loads] == [ld.describe() for ld in q.loads]
    assert blockload.check(p, A, shape=[np.int64(8), np.int64(16)], warps=np.int64(0)).proved
    assert blockload.operand(A, shape=[np.int32(8), 16], dtype="f16").inst_shape == (8, 16)


@pytest.mark.parametrize("call", [
    lambda: blockload.operand(A, shape="8x16", dtype="f16"),
    lambda: blockload.operand(A, shape=[8, 16], dtype=5),
    lambda: blockload.plan(5),
    lambda: blockload.check(blockload.plan(A, shape=[8, 16], dtype="f16"), A, shape=[8, 16], warps="x"),
    lambda: blockload.check(blockload.plan(A, shape=[8, 16], dtype="f16"), A, shape=[8, 16], warps=[3]),
    lambda: blockload.check(blockload.plan(A, shape=[8, 16], dtype="f16"), A, shape=[8, 16], surface=5),
    lambda: blockload.check("plan", A, shape=[8, 16]),
])
def test_wrong_types_raise_layout_error(call):
    with pytest.raises(LayoutError):
        call()
