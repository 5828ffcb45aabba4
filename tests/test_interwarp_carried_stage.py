"""The inter-warp stage of a reduce with no lane along its axis whose in-thread first stage combines an
earlier reduce's butterfly results: ``tl.sum(tl.sum(x, axis=1), axis=0)`` with ``#blocked`` threads
``[1, 32]`` and warps ``[4, 1]`` (the form of a harvested liger-kernel group-norm backward). The second
reduce's lanes are broadcast along axis 0 (no shuffle of its own), yet the value each warp stores to the
scratch is built from the first reduce's shuffles; the first reduce has no warp along axis 1, so the round
is the second one's. Triton 3.9 is the oracle: its stage must be proved with the four warps as one group
(warps along axis 0, ``warpsPerCTA = [4, 1]`` written out below); planted bugs in its PTX (the store moved
by one 4-byte slot, the load reading the next slot, the barrier removed) must not be proved.
"""
from __future__ import annotations

import re

import pytest

from interwarp_plants import PLANTS, first_round, planted, stage_checks

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def _sum_sum(X, Y, S, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :] * S)
    tl.store(Y, tl.sum(tl.sum(x, axis=1), axis=0))


_CACHE: dict = {}


def kernel() -> tuple[str, str]:
    if not _CACHE:
        from triton.backends.compiler import GPUTarget
        src = triton.compiler.ASTSource(_sum_sum, {"X": "*fp32", "Y": "*fp32", "S": "i32", "M": "constexpr",
                                                   "N": "constexpr"}, {"M": 64, "N": 32})
        k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
        _CACHE["k"] = (k.asm["ttgir"], k.asm["ptx"])
    return _CACHE["k"]


def test_kernel_has_the_form():
    ttgir, ptx = kernel()
    assert re.search(r"threadsPerWarp = \[1, 32\], warpsPerCTA = \[4, 1\]", ttgir)
    st, bar, ld = first_round(ptx)
    assert len([s for s in ptx.splitlines() if re.search(r"\bst\.shared\.", s)]) == 1


def test_carried_first_stage_round_is_proved_with_the_four_warps():
    ttgir, ptx = kernel()
    got = stage_checks(ttgir, ptx, first_round(ptx)[2])
    assert got and all(c.status == "proved" for c in got), [c.message for c in got]
    assert [list(g) for g in got[0].data["warp_groups"]] == [[0, 1, 2, 3]]


@pytest.mark.parametrize("plant", PLANTS)
def test_planted_bug_is_not_proved(plant):
    ttgir, ptx = kernel()
    rnd = first_round(ptx)
    got = stage_checks(ttgir, planted(ptx, rnd, plant), rnd[2])
    assert got and not any(c.status == "proved" for c in got), [c.message for c in got]
