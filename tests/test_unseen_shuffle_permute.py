"""A butterfly shuffle whose value the lanes only select (``selp``) is a register permute, not a
reduction: Triton 3.9 lowers a ``ttg.convert_layout`` within a warp to ``shfl.sync.bfly`` and
``selp``; the ``warp-reduce`` check took it for a chain of the kernel's one ``tt.reduce`` of its width
and reported a false error ("lane bit 1 ... has no butterfly", "combined by selp.b16").

Found on torchao 0.18 (``triton_fp8_blockwise_act_quant_k_grouped_compact_deepgemm_kernel``, 2 warps):
a column ``tl.max`` of a 64 x 2 tile, then the 2 scales stored in a 1-D layout. The kernel below is
that form, compiled here by Triton 3.9 (the oracle: correct code, so never an error). What must stay an
error: a reduce chain whose combine op is not the region's (``tests/test_ptx_reductions.py``).
"""
from __future__ import annotations

import re

import pytest

from audited import audit_pair

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def _col_scale(X, S, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    amax = tl.max(tl.abs(x.to(tl.float32)), axis=0)
    tl.store(S + tl.arange(0, N), (1.0 / amax).to(tl.bfloat16))


def kernel(cc: int) -> tuple[str, str]:
    from triton.backends.compiler import GPUTarget
    src = triton.compiler.ASTSource(_col_scale, {"X": "*bf16", "S": "*bf16", "M": "constexpr", "N": "constexpr"},
                                    {"M": 64, "N": 2},
                                    attrs={(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]})
    k = triton.compile(src, target=GPUTarget("cuda", cc, 32), options={"num_warps": 2})
    return k.asm["ttgir"], k.asm["ptx"]


def permute_shuffles(ptx: str) -> list[int]:
    """Lines of butterflies whose destination (through one cvt) is read by a selp and by no float op."""
    text = ptx.splitlines()
    out = []
    for n, t in enumerate(text, 1):
        m = re.search(r"shfl\.sync\.bfly\.b32\s+(%r\d+),", t)
        if not m:
            continue
        names = {m.group(1)}
        for u in text[n:n + 6]:
            c = re.search(r"cvt\.u16\.u32\s+(%rs\d+), " + re.escape(m.group(1)) + ";", u)
            if c:
                names.add(c.group(1))
        readers = [u for u in text[n:] if any(re.search(re.escape(x) + r"\b", (u.split(None, 1) or [""])[-1]) for x in names)
                   and not u.strip().startswith(("cvt.u16.u32", "shfl"))]
        if readers and all(u.strip().startswith("selp") for u in readers):
            out.append(n)
    return out


@pytest.mark.parametrize("cc", [90, 100])
def test_select_only_shuffle_is_no_reduce_error(cc):
    ttgir, ptx = kernel(cc)
    assert "ttg.convert_layout" in ttgir and "tt.reduce" in ttgir
    lines = permute_shuffles(ptx)
    assert lines, "the form under test: a butterfly read only by selp"
    checks = [c for c in audit_pair(ttgir, ptx, "k").checks if c.check == "warp-reduce"]
    assert not [c for c in checks if c.severity == "error"], [c.message[:160] for c in checks if c.severity]
    at = [c for c in checks if set(c.data.get("instructions", [])) & set(lines)]
    assert at and all(c.status == "unchecked" and "register permute" in c.message for c in at)
    assert any(c.status == "proved" for c in checks), "the reduce's own warp stage is still proved"
