"""A ``tt.reduce`` whose operand's name is defined again in a sibling region (the two branches of one
``scf.if``: MLIR may reuse a name there) is tied to the nearest definition before it, not to another
branch's reduce of the same name.

Found on unsloth 2026.10.9 (``qk_norm_rope_forward`` / ``_backward``): in one branch ``%var_45`` is a
``tt.reduce``, in the other an ``arith.mulf`` that a reduce reads; the second reduce was taken for a
reduce of the first's result (its lanes projected), did not meet its chains, and every chain of the
kernel's reductions stayed ``unchecked`` ("it does not meet all of their layouts"); one reduce of that
shape alone would have been a false error. The kernel below has the same form, compiled here by
Triton 3.9.

Expected masks are derived from the layout Triton prints: ``#ttg.blocked`` with ``threadsPerWarp =
[tr, tc]`` and order ``[1, 0]`` puts lane bits ``0 .. log2(tc) - 1`` along dim 1, so a reduce over axis
1 needs the butterflies ``1, 2, .., tc / 2`` (PTX ISA 9.7.8.6).
"""
from __future__ import annotations

import re

import pytest

from audited import audit_pair

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def _branches(X, Y, flag, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    if flag > 0:
        x0 = tl.load(X + offs).to(tl.float32)
        x1 = tl.load(X + M * N + offs).to(tl.float32)
        var = tl.sum(x0 * x0, axis=1) + tl.sum(x1 * x1, axis=1)
    else:
        x0 = tl.load(X + offs).to(tl.float32)
        x0 = x0 * 2.0
        x1 = tl.load(X + M * N + offs).to(tl.float32)
        var = tl.sum(x0 * x0, axis=1) + tl.sum(x1 * x1, axis=1)
    tl.store(Y + tl.arange(0, M), var)


_CACHE: dict = {}


def kernel(cc: int) -> tuple[str, str]:
    if cc not in _CACHE:
        from triton.backends.compiler import GPUTarget
        src = triton.compiler.ASTSource(
            _branches, {"X": "*bf16", "Y": "*fp32", "flag": "i32", "M": "constexpr", "N": "constexpr"},
            {"M": 64, "N": 64}, attrs={(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]})
        k = triton.compile(src, target=GPUTarget("cuda", cc, 32), options={"num_warps": 4})
        _CACHE[cc] = k.asm["ttgir"], k.asm["ptx"]
    return _CACHE[cc]


def reused_names(ttgir: str) -> set[str]:
    """Names that are a ``tt.reduce`` result in one place and another op's result elsewhere."""
    reduce_res = set(re.findall(r"(%[\w.$-]+) = \"tt\.reduce\"", ttgir))
    other_res = set(re.findall(r"(%[\w.$-]+) = (?!\"tt\.reduce\")[\w.\"]+", ttgir))
    return reduce_res & other_res


def needed_masks(ttgir: str) -> list[int]:
    tc = int(re.search(r"threadsPerWarp = \[\d+, (\d+)\]", ttgir).group(1))
    return [1 << i for i in range(tc.bit_length() - 1)]


@pytest.mark.parametrize("cc", [80, 90])
def test_reduces_of_both_branches_proved(cc):
    ttgir, ptx = kernel(cc)
    assert reused_names(ttgir), "Triton reuses a name across the branches (the form under test)"
    checks = [c for c in audit_pair(ttgir, ptx, "k").checks if c.check == "warp-reduce"]
    assert not [c for c in checks if c.severity == "error"]
    assert checks and all(c.status == "proved" for c in checks), [c.message[:160] for c in checks]
    assert all(sorted(c.data["masks"]) == needed_masks(ttgir) for c in checks)


def test_planted_mask_in_the_else_branch_is_not_proved():
    """The four reduces have one layout, width and region, so the tie keeps all of them and the chain
    is ``unchecked``, not an error (the tie's rule); it must not be proved."""
    ttgir, ptx = kernel(90)
    lines = ptx.splitlines()
    hits = [i for i, t in enumerate(lines, 1) if re.search(r"shfl\.sync\.bfly\.b32\s+%r\d+, %r\d+, 2, 31, -1;", t)]
    n = hits[-1]                                     # the last reduce's: the else branch's, printed last
    lines[n - 1] = lines[n - 1].replace(", 2, 31", ", 8, 31")
    bad = "\n".join(lines) + "\n"
    got = [c for c in audit_pair(ttgir, bad, "k").checks if c.check == "warp-reduce"
           and n in c.data.get("instructions", [])]
    assert got and all(c.status != "proved" for c in got)
