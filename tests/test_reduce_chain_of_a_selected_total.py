"""A reduce of values selected by an earlier reduce's result: ``s = tl.sum(x, 0)`` across 4 warps, then
``tl.sum(tl.where(x > s, x, 0))`` (butterflies) or ``tl.sum((x > s).to(tl.int32))`` (``redux.sync`` on
sm_90), the form of harvested fastvideo top-k and liger-kernel attention-residual kernels. The first
reduce's second stage (the butterflies after its scratch load) ends in a combine whose result a compare
and a select carry into the next reduce's first shuffle; that shuffle is no step of the first reduce
(Triton's ``warpReduce`` in ``lib/Conversion/TritonGPUToLLVM/ReduceOpToLLVM.cpp`` halves its lane mask
each step, and a ``redux.sync`` takes all 32 lanes at once). Triton 3.9 is the oracle: the first reduce's
inter-warp stage must be proved with butterflies ``[2, 1]`` (4 warps: lanes 0-3 hold the partials) and the
four warps as one group (a 1-D ``#blocked`` with ``warpsPerCTA = [4]``); the planted bugs (its store
moved by one 4-byte slot, its load reading the next slot, its barrier removed) must not be proved.
"""
from __future__ import annotations

import pytest

from interwarp_plants import PLANTS, first_round, planted, stage_checks

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def _above(X, Y, N: tl.constexpr, INT: tl.constexpr):
    x = tl.load(X + tl.arange(0, N))
    s = tl.sum(x, 0)
    if INT:
        tl.store(Y, tl.sum((x > s).to(tl.int32), 0))
    else:
        tl.store(Y, tl.sum(tl.where(x > s, x, 0.0), 0))


_CACHE: dict = {}


def kernel(integer: int) -> tuple[str, str]:
    if integer not in _CACHE:
        from triton.backends.compiler import GPUTarget
        src = triton.compiler.ASTSource(_above, {"X": "*fp32", "Y": "*fp32", "N": "constexpr", "INT": "constexpr"},
                                        {"N": 128, "INT": integer})
        k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
        _CACHE[integer] = (k.asm["ttgir"], k.asm["ptx"])
    return _CACHE[integer]


@pytest.mark.parametrize("integer", [0, 1])
def test_kernel_has_the_form(integer):
    ttgir, ptx = kernel(integer)
    assert "warpsPerCTA = [4]" in ttgir
    assert ("redux.sync" in ptx) == bool(integer)


@pytest.mark.parametrize("integer", [0, 1])
def test_first_inter_warp_stage_is_proved_alone(integer):
    ttgir, ptx = kernel(integer)
    got = stage_checks(ttgir, ptx, first_round(ptx)[2])
    assert got and all(c.status == "proved" for c in got), [c.message for c in got]
    assert got[0].data["masks"] == [2, 1]
    assert [list(g) for g in got[0].data["warp_groups"]] == [[0, 1, 2, 3]]


@pytest.mark.parametrize("integer", [0, 1])
@pytest.mark.parametrize("plant", PLANTS)
def test_planted_bug_is_not_proved(integer, plant):
    ttgir, ptx = kernel(integer)
    rnd = first_round(ptx)
    got = stage_checks(ttgir, planted(ptx, rnd, plant), rnd[2])
    assert got and not any(c.status == "proved" for c in got), [c.message for c in got]
