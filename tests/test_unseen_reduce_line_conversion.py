"""A ``ttg.convert_layout`` between two reductions of one source line (``tl.max(tl.max(m, axis=1),
axis=0)``): the reductions' inter-warp rounds go through scratch memory on the same line, so they are
not the conversion's round trip by program order (a false ``smem-address`` error before).

Found on sglang 0.5.23 (``extend_attention.fwd_kernel``, ``SKIP_TILE = tl.max(tl.max(mask, axis=1),
axis=0) == 0`` written twice). Two defects: a generic region op (``"tt.reduce"(...) ({``) prints its
``loc`` on its closing ``})`` line (MLIR's generic op form), which the TTGIR reader did not read, so
the audit did not know the line held reductions; and a chain of the line no conversion's law accepts
was pinned on the conversion between the matched ones, though a reduction of the line may own it.

Triton is the oracle: what it emits for a correct kernel is never an error. The kernel's layout,
``#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4]}>`` over
64 x 256 (four warps along the reduced axis 1), is read from the TTGIR text below, and with it why
the inner reduction needs an inter-warp stage through shared memory.
"""
from __future__ import annotations

import re

import pytest

from audited import audit_pair
from verilayout.frontends.ttgir import parse_module

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def _twice(X, Y, M: tl.constexpr, N: tl.constexpr):
    m = tl.arange(0, M)[:, None] >= tl.load(X + tl.arange(0, N))[None, :]
    a = tl.max(tl.max(m.to(tl.int32), axis=1), axis=0) == 0
    m2 = tl.arange(0, M)[:, None] >= tl.load(X + N + tl.arange(0, N))[None, :]
    b = tl.max(tl.max(m2.to(tl.int32), axis=1), axis=0) == 0
    tl.store(Y, a.to(tl.int32) + b.to(tl.int32))


_CACHE: dict = {}


def kernel(cc: int) -> tuple[str, str]:
    """64 x 256 i32 masks, 4 warps, pointers 16-byte aligned."""
    if cc not in _CACHE:
        from triton.backends.compiler import GPUTarget
        src = triton.compiler.ASTSource(_twice, {"X": "*i32", "Y": "*i32", "M": "constexpr", "N": "constexpr"},
                                        {"M": 64, "N": 256},
                                        attrs={(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]})
        k = triton.compile(src, target=GPUTarget("cuda", cc, 32), options={"num_warps": 4})
        _CACHE[cc] = k.asm["ttgir"], k.asm["ptx"]
    return _CACHE[cc]


def test_region_op_takes_the_loc_of_its_closing_line():
    text = ('#loc7 = loc("k.py":9:1)\n#loc8 = loc("k.py":12:3)\nmodule {\n'
            '  %r = "tt.reduce"(%x) <{axis = 0 : i32}> ({\n'
            '  ^bb0(%a: i32 loc(unknown), %b: i32 loc(unknown)):\n'
            '    %m = arith.maxsi %a, %b : i32 loc(#loc8)\n'
            '    tt.reduce.return %m : i32 loc(#loc8)\n'
            '  }) : (tensor<4xi32, #b>) -> i32 loc(#loc7)\n'
            '  %c = arith.addi %r, %r : i32 loc(#loc8)\n}')
    ops = {op.name: op.loc for op in parse_module(text).ops}
    assert ops["tt.reduce"] == "k.py:9"         # the closing line's #loc7
    assert ops["arith.maxsi"] == ops["arith.addi"] == "k.py:12"


def _inner_reduce_warps(ttgir: str) -> int:
    """The warps along dim 1 of the reduced layout, read from the TTGIR's ``#blocked``."""
    m = re.search(r"#blocked = #ttg.blocked<\{sizePerThread = \[\d+, \d+\], threadsPerWarp = \[\d+, \d+\], "
                  r"warpsPerCTA = \[(\d+), (\d+)\]", ttgir)
    return int(m.group(2))


@pytest.mark.parametrize("cc", [80, 90, 100])
def test_reductions_of_the_line_are_no_conversion_error(cc):
    ttgir, ptx = kernel(cc)
    assert _inner_reduce_warps(ttgir) > 1       # the inner reduce crosses warps: a scratch stage
    assert ttgir.count("ttg.convert_layout") >= 2 and ttgir.count('"tt.reduce"') == 4
    rep = audit_pair(ttgir, ptx, "k")
    assert not [c for c in rep.checks if c.severity == "error"], [c.message[:200] for c in rep.checks
                                                                     if c.severity == "error"]
    red_locs = {op.loc for op in parse_module(ttgir).ops if op.name == "tt.reduce"}
    cvt_locs = {op.loc for op in parse_module(ttgir).ops if op.name == "ttg.convert_layout"
                and "slice<{dim = 1" in op.operand_types[0]}
    assert cvt_locs and cvt_locs <= red_locs    # the conversions share the reductions' line


def _planted(ptx: str) -> tuple[str, int]:
    """The first conversion's scratch stores are the first run of ``st.shared.v4.b32
    [global_smem+16k]`` (the PTX text's); the second of them moved onto the third's bytes: bytes
    16-31 are never written, 32-47 twice."""
    lines = ptx.splitlines()
    at = next(i for i, s in enumerate(lines) if re.search(r"st\.shared\.v4\.b32\s+\[global_smem\+16\]", s))
    assert re.search(r"st\.shared\.v4\.b32\s+\[global_smem\]", lines[at - 1])
    lines[at] = lines[at].replace("[global_smem+16]", "[global_smem+32]")
    return "\n".join(lines) + "\n", at + 1


@pytest.mark.parametrize("cc", [90])
def test_planted_store_in_the_conversion_is_not_proved(cc):
    ttgir, ptx = kernel(cc)
    bad, line = _planted(ptx)
    checks = [c for c in audit_pair(ttgir, bad, "k").checks if c.check == "smem-address"]
    assert any(c.status == "counterexample" for c in checks), [c.message[:160] for c in checks]
