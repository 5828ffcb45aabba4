"""Python API inputs: numpy integers are integers; wrong types are LayoutError; one Plan protocol.

Expected values: the descriptor fields of the plain-int call (the same question asked with
Python ints), and the protocol's two members (``verdict`` and ``to_dict``).
"""
from __future__ import annotations

import numpy as np
import pytest

from verilayout import banks, wgmma
from verilayout.errors import LayoutError
from verilayout.synth.plan import Plan

NV = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>"


def test_numpy_integers_are_accepted_in_wgmma_calls():
    d = wgmma.descriptor_for(NV, shape=[np.int64(64), np.int64(64)], dtype="f16", major="K")
    assert d == wgmma.descriptor_for(NV, shape=[64, 64], dtype="f16", major="K")
    assert wgmma.verify(d, NV, shape=(np.int32(64), 64), dtype="f16", major="K",
                        base_address=np.int64(0), k_block=np.int64(0)).proved
    assert wgmma.synth(dtype="f16", major="K", mn=np.int64(64), k=np.int64(64)).verdict.proved
    assert banks.load_shared(NV, [np.int64(64), np.int64(64)]).out_dims == {"dim0": 64, "dim1": 64}


@pytest.mark.parametrize("call", [
    lambda: wgmma.verify(0, 5, dtype="f16", major="K"),
    lambda: wgmma.verify(0, NV, shape=[64, 64], dtype=5, major="K"),
    lambda: wgmma.verify(0, NV, shape=[64, 64], dtype="f16", major="K", k_block=1.5),
    lambda: wgmma.descriptor_for(NV, shape=[64, 64], dtype="f16", major="K", base_address="0"),
    lambda: wgmma.synth(dtype="f16", major="K", mn="64", k=64),
    lambda: banks.load_shared(5, [8, 8]),
    lambda: banks.load_register(["#ttg.blocked"], [8, 8]),
    lambda: banks.analyze("x", None, elem_bits=16),
])
def test_wrong_types_raise_layout_error(call):
    with pytest.raises(LayoutError):
        call()


def test_every_synthesized_answer_is_a_plan():
    from verilayout import blockload
    from verilayout.synth.swizzle import synthesize
    from verilayout.core.linear_layout import LinearLayout
    A = ("tensor<8x16xf16, #ttg.dot_op<{opIdx = 0, parent = #ttig.dpas<{repeatCount = 8, "
         "systolicDepth = 8, executionSize = 16, opsPerChan = 2, threadsPerWarp = 16, "
         "warpsPerCTA = [1, 1], repCluster = [1, 1]}>, kWidth = 1}>>")
    row = LinearLayout({"register": [[0, 1]], "lane": [[0, 2], [0, 4], [0, 8], [0, 16], [1, 0]]},
                       {"dim0": 2, "dim1": 32})
    plans = [wgmma.derive_descriptor(NV, shape=[64, 64], dtype="f16", major="K"),
             wgmma.synth(dtype="f16", major="K", mn=64, k=32),
             blockload.plan(A),
             synthesize(row, None, elem_bits=16)]
    for p in plans:
        assert isinstance(p, Plan), type(p).__name__
        assert "verdict" in p.to_dict()
