"""An inter-warp round right after a ``tt.dot``'s operand staging on sm_80: the operands are written with
``st.shared`` and read back with ``ldmatrix`` (which the run of ``ld.shared``/``st.shared`` does not list),
a ``bar.sync`` follows, then the row max of the ``#mma`` accumulator (``warpsPerCTA = [1, 4]``: the four
warps along the reduced axis 1) stores its partials and loads them back. In program order no ``ld.shared``
separates the operand stores from the reduce's, but CTA barriers do; the operand stores are another
round's (the form of a harvested minference block-sparse attention kernel on sm_80). Triton 3.9 is the
oracle: the stage must be proved with butterflies ``[2, 1]`` and the four warps as one group; planted bugs
in the reduce's round (its store moved by one 4-byte slot, its load reading the next slot, its barrier
removed) must not be proved.
"""
from __future__ import annotations

import re

import pytest

from interwarp_plants import PLANTS, planted, stage_checks

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def _dot_rowmax(A, B, Y, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(A + rm[:, None] * K + rk[None, :])
    b = tl.load(B + rk[:, None] * N + rn[None, :])
    tl.store(Y + rm, tl.max(tl.dot(a, b), axis=1))


_CACHE: dict = {}


def kernel() -> tuple[str, str]:
    if not _CACHE:
        from triton.backends.compiler import GPUTarget
        src = triton.compiler.ASTSource(_dot_rowmax, {"A": "*fp16", "B": "*fp16", "Y": "*fp32", "M": "constexpr",
                                                      "N": "constexpr", "K": "constexpr"}, {"M": 16, "N": 128, "K": 32})
        k = triton.compile(src, target=GPUTarget("cuda", 80, 32), options={"num_warps": 4})
        _CACHE["k"] = (k.asm["ttgir"], k.asm["ptx"])
    return _CACHE["k"]


def _round(ptx: str) -> tuple[int, int, int]:
    """(index of the reduce's ``st.shared``: the last before the first ``ld.shared``, of the ``bar.sync``
    after it, of that ``ld.shared``)."""
    lines = ptx.splitlines()
    ld = next(i for i, s in enumerate(lines) if re.search(r"\bld\.shared\.", s))
    st = max(i for i in range(ld) if re.search(r"\bst\.shared\.", lines[i]))
    bar = next(i for i in range(st, ld) if "bar.sync" in lines[i])
    return st, bar, ld


def test_kernel_has_the_form():
    ttgir, ptx = kernel()
    assert "warpsPerCTA = [1, 4]" in ttgir
    st, bar, ld = _round(ptx)
    lines = ptx.splitlines()
    earlier = [i for i in range(st) if re.search(r"\bst\.shared\.", lines[i])]
    assert earlier and not any(re.search(r"\bld\.shared\.", s) for s in lines[:ld])
    assert any("ldmatrix" in s for s in lines[earlier[-1]:st]) and any("bar.sync" in s for s in lines[earlier[-1]:st])


def test_stage_after_operand_staging_is_proved():
    ttgir, ptx = kernel()
    got = stage_checks(ttgir, ptx, _round(ptx)[2])
    assert got and all(c.status == "proved" for c in got), [c.message[:300] for c in got]
    assert got[0].data["masks"] == [2, 1]
    assert [list(g) for g in got[0].data["warp_groups"]] == [[0, 1, 2, 3]]


@pytest.mark.parametrize("plant", PLANTS)
def test_planted_bug_is_not_proved(plant):
    ttgir, ptx = kernel()
    rnd = _round(ptx)
    got = stage_checks(ttgir, planted(ptx, rnd, plant), rnd[2])
    assert got and not any(c.status == "proved" for c in got), [c.message[:300] for c in got]
