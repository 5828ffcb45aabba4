"""Two reductions of one width and one combine op whose butterflies differ (fastvideo's
``fake_quantize_q``, liger-kernel's ``_mhc_split_sinkhorn_fwd_kernel``, minference's
``softmax_fuse_block_sum_kernel``): a ``tl.max`` over a flat tensor (lanes along its axis: masks
16, 8, 4, 2, 1) and a ``tl.max`` over the last axis of a 3-D tensor (``threadsPerWarp = [1, 2, 16]``: masks
8, 4, 2, 1). By dataflow a chain could belong to either; the source line told one apart and the other
chain was left ``unchecked`` ("it does not meet all of their layouts, and another reduce's it would").
A chain whose masks are exactly the lane bits along one candidate's axis, and only that one, is now tied
to it by those masks (Triton's ``ReduceOpToLLVM`` shuffles the lane bits of the reduced axis) and proved,
saying so; a chain whose masks are no candidate's lanes stays unproved.

Oracle: the lane bits of each reduce's blocked layout, derived here by hand from the TTGIR it prints
(threadsPerWarp [1, 2, 16] with order [2, 1, 0]: lanes 1, 2, 4, 8 along axis 2), the released compiler's
output taken as correct, and planted faults (PTX ISA 9.7.8.6 ``shfl.sync``: the lane mask is the third
operand; 9.7.3 ``max``/``min``) that must not be proved.
"""
from __future__ import annotations

import re

import pytest

from audited import audit_pair

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def _two_max(X, O):
    i = tl.arange(0, 64)
    j = tl.arange(0, 8)
    e = tl.arange(0, 16)
    x = tl.load(X + i[:, None, None] * 128 + j[None, :, None] * 16 + e[None, None, :])
    top = tl.max(tl.abs(tl.load(X + tl.arange(0, 8192))), axis=0)
    m = tl.max(tl.abs(x), axis=2)
    tl.store(O + i[:, None] * 8 + j[None, :], m / top)


_CACHE: dict = {}


def kernel(cc: int) -> tuple[str, str]:
    if cc not in _CACHE:
        from triton.backends.compiler import GPUTarget
        src = triton.compiler.ASTSource(_two_max, {"X": "*fp32", "O": "*fp32"}, {})
        k = triton.compile(src, target=GPUTarget("cuda", cc, 32), options={"num_warps": 4})
        _CACHE[cc] = (k.asm["ttgir"], k.asm["ptx"])
    return _CACHE[cc]


def _axis2_line(ttgir: str) -> int:
    """TTGIR line (1-based) of the ``tt.reduce`` over axis 2."""
    return next(i + 1 for i, s in enumerate(ttgir.splitlines()) if '"tt.reduce"' in s and "axis = 2" in s)


def _chain(ttgir: str, ptx: str) -> list:
    """The in-warp warp-reduce checks of the axis-2 reduce's chains (masks 8, 4, 2, 1)."""
    return [c for c in audit_pair(ttgir, ptx, "k").checks
            if c.check == "warp-reduce" and c.data.get("masks") == [8, 4, 2, 1]]


@pytest.mark.parametrize("cc", [90])
def test_the_layout_has_the_lanes_this_test_assumes(cc):
    ttgir, _ = kernel(cc)
    assert re.search(r"threadsPerWarp = \[1, 2, 16\].*order = \[2, 1, 0\]", ttgir)
    assert "8192xf32" in ttgir


@pytest.mark.parametrize("cc", [90])
def test_the_chain_is_proved_against_the_reduce_its_masks_meet(cc):
    ttgir, ptx = kernel(cc)
    got = _chain(ttgir, ptx)
    assert got and all(c.status == "proved" for c in got), [c.message[:300] for c in got]
    assert all(f"reduce at TTGIR line {_axis2_line(ttgir)} over axis 2" in c.message for c in got)
    assert any(c.data.get("tie") == "lane masks" for c in got)


def _plant(ptx: str, line: int, old: str, new: str) -> str:
    lines = ptx.splitlines()
    assert old in lines[line - 1], lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    return "\n".join(lines)


@pytest.mark.parametrize("cc", [90])
def test_a_wrong_mask_is_not_proved(cc):
    ttgir, ptx = kernel(cc)
    first = _chain(ttgir, ptx)[0].data["instructions"][0]              # the mask-8 shuffle
    planted = _plant(ptx, first, ", 8, 31", ", 16, 31")
    at = [c for c in audit_pair(ttgir, planted, "k").checks
          if c.check == "warp-reduce" and (c.line == first or first in c.data.get("instructions", ()))]
    assert at and all(c.status != "proved" for c in at), [c.message[:200] for c in at]


@pytest.mark.parametrize("cc", [90])
def test_a_wrong_combine_op_is_not_proved(cc):
    ttgir, ptx = kernel(cc)
    first = _chain(ttgir, ptx)[0].data["instructions"][0]
    lines = ptx.splitlines()
    reg = re.search(r"bfly\.b32\s+(%r\d+),", lines[first - 1]).group(1)
    use = next(k for k in range(first, len(lines)) if reg in lines[k] and "max.f32" in lines[k]) + 1
    planted = _plant(ptx, use, "max.f32", "min.f32")
    at = [c for c in audit_pair(ttgir, planted, "k").checks
          if c.check == "warp-reduce" and (c.line in (first, use) or first in c.data.get("instructions", ()))]
    assert at and all(c.status != "proved" for c in at), [c.message[:200] for c in at]
