"""Two identical ``ttg.convert_layout`` ops on one source line (a ``@triton.jit`` helper inlined
twice: both carry the helper's line), between reductions of that line, as in sglang 0.5.23's
``extend_attention`` (``SKIP_TILE = tl.max(tl.max(...))`` in a helper of ``standard.py``).

The line's scratch round trips are taken in program order; a reduction's inter-warp round before
the first conversion's round made the first conversion's round go to the second conversion, and
the second conversion's own round was then dropped from the conversions' matching without a word
(only the weaker write-before-read law saw it). Nothing given may be dropped silently: each
conversion's round is compared with a conversion's law, or reported ``unchecked`` with the reason.

Oracle: Triton 3.9 compiles the kernel here; the layout is read from its TTGIR, and from it the
number of 16-byte stores a conversion's round makes per thread (the slice of a 64-row
``#blocked`` whose rows are all in registers: every thread holds all 64 i32 elements, 256 bytes,
16 ``st.shared.v4.b32``). Those runs are found in the PTX text by that count alone.
"""
from __future__ import annotations

import re

import pytest

from audited import audit_pair
from verilayout.frontends.ttgir import parse_module

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def _skip(m):
    return tl.max(tl.max(m.to(tl.int32), axis=1), axis=0) == 0


@triton.jit
def _twice(X, Y, M: tl.constexpr, N: tl.constexpr):
    m = tl.arange(0, M)[:, None] >= tl.load(X + tl.arange(0, N))[None, :]
    m2 = tl.arange(0, M)[:, None] >= tl.load(X + N + tl.arange(0, N))[None, :]
    tl.store(Y, _skip(m).to(tl.int32) + _skip(m2).to(tl.int32))


_CACHE: dict = {}
M, N = 64, 256


def kernel(cc: int) -> tuple[str, str]:
    """64 x 256 i32 masks, 4 warps, pointers 16-byte aligned."""
    if cc not in _CACHE:
        from triton.backends.compiler import GPUTarget
        src = triton.compiler.ASTSource(_twice, {"X": "*i32", "Y": "*i32", "M": "constexpr", "N": "constexpr"},
                                        {"M": M, "N": N},
                                        attrs={(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]})
        k = triton.compile(src, target=GPUTarget("cuda", cc, 32), options={"num_warps": 4})
        _CACHE[cc] = k.asm["ttgir"], k.asm["ptx"]
    return _CACHE[cc]


def _twins(ttgir: str) -> list:
    """The conversions of the reduced rows (``slice<{dim = 1``) to another layout, one line."""
    return [op for op in parse_module(ttgir).ops if op.name == "ttg.convert_layout"
            and "slice<{dim = 1" in op.operand_types[0]]


def _stores_per_thread(ttgir: str) -> int:
    """16-byte stores a thread makes for the whole slice: rows in registers (sizePerThread[0] x
    the rows one thread's repetitions cover, with threadsPerWarp[0] = warpsPerCTA[0] = 1) x 4 bytes / 16."""
    m = re.search(r"#blocked = #ttg.blocked<\{sizePerThread = \[(\d+), \d+\], threadsPerWarp = \[(\d+), \d+\], "
                  r"warpsPerCTA = \[(\d+), \d+\]", ttgir)
    spt, tpw, wpc = (int(x) for x in m.groups())
    assert tpw == wpc == 1                     # every row in each thread's registers
    return M * 4 // 16


def _runs(ptx: str, k: int) -> list[int]:
    """PTX line numbers (1-based) opening a run of exactly ``k`` ``st.shared.v4.b32``."""
    lines = ptx.splitlines()
    out, i = [], 0
    while i < len(lines):
        j = i
        while j < len(lines) and "st.shared.v4.b32" in lines[j]:
            j += 1
        if j - i == k:
            out.append(i + 1)
        i = j + 1 if j > i else i + 1
    return out


@pytest.mark.parametrize("cc", [80, 90, 100])
def test_each_identical_conversion_round_is_compared_or_said(cc):
    ttgir, ptx = kernel(cc)
    twins = _twins(ttgir)
    assert len(twins) == 2 and twins[0].loc == twins[1].loc
    assert twins[0].operand_types == twins[1].operand_types and twins[0].result_types == twins[1].result_types
    rounds = _runs(ptx, _stores_per_thread(ttgir))
    assert len(rounds) == 2                    # one round per conversion, found by the layout's count
    rep = audit_pair(ttgir, ptx, "k")
    assert not [c for c in rep.checks if c.severity == "error"]
    lines = {op.line for op in twins}
    for at in rounds:                          # compared with a conversion's law, or said unchecked
        mine = [c for c in rep.checks if c.check == "smem-address" and c.data and c.data.get("ttgir_line") in lines
                and (c.line == at or at in c.data.get("instructions", ()))]
        assert mine and all(c.status in ("proved", "unchecked") for c in mine), (at, [c.message[:160] for c in rep.checks
                                                                                      if c.line == at])
        assert all(c.status == "proved" or "not told apart" in c.message or "matches none" in c.message for c in mine)


@pytest.mark.parametrize("cc", [90])
def test_planted_store_in_a_twin_round_is_not_proved(cc):
    """The first conversion round's second store moved onto the third's bytes: bytes 16-31 of the
    scratch never written, 32-47 twice; no check may prove that round."""
    ttgir, ptx = kernel(cc)
    at = _runs(ptx, _stores_per_thread(ttgir))[0]
    lines = ptx.splitlines()
    assert "[global_smem+16]" in lines[at]
    lines[at] = lines[at].replace("[global_smem+16]", "[global_smem+32]")
    checks = [c for c in audit_pair(ttgir, "\n".join(lines) + "\n", "k").checks if c.check == "smem-address"
              and (c.line == at or at in (c.data or {}).get("instructions", ()))]
    assert checks and not any(c.status == "proved" for c in checks), [c.message[:160] for c in checks]
