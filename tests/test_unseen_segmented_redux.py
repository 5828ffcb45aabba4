"""Segmented ``redux.sync`` (``verilayout.audit.ptx_segments``): a ``tt.reduce`` whose reduced lanes are
half a warp, which Triton 3.9 lowers on sm_90 / sm_100 to one ``redux.sync`` over all 32 lanes per
half, the other half giving the op's identity, then a per-lane ``selp`` of the half's result.

Found on unsloth 2026.10.9 (``w8a8_block_fp8_small_m``, ``tl.max`` over ``threadsPerWarp = [2, 16]``,
which stayed ``unchecked``); the same form of ``tl.sum`` over i32 masks the second half with
``and.b32`` of ``bfe.s32 %tid, 4, 1`` instead of a ``selp``, and was a false error ("lane bit 0 ... has
no butterfly") before the segments were read. Triton is the oracle: what it emits for a correct
reduction must be proved, never an error; planted bugs in its PTX are errors or ``unchecked``.

Expected lanes are derived from the kernel's layout: ``#ttg.blocked`` with ``threadsPerWarp = [2, 16]``
and order ``[1, 0]`` puts lane bits 0-3 along dim 1 (the reduced axis) and lane bit 4 along dim 0, so
the lanes ``t`` and ``u`` hold elements of one row exactly when ``t >> 4 == u >> 4``. PTX ISA
``redux.sync``: every lane receives the op over all lanes' inputs; ``selp d, a, b, p`` is ``a`` where
``p`` holds.
"""
from __future__ import annotations

import re

import pytest

from audited import audit_pair
from verilayout.audit.ptx_segments import identity_ok

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def _row_sum(X, Y, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(Y + tl.arange(0, M), tl.sum(x, axis=1))


@triton.jit
def _row_max(X, Y, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(Y + tl.arange(0, M), tl.max(x, axis=1))


_CACHE: dict = {}


def kernel(fn, dtype: str, cc: int) -> tuple[str, str]:
    """8 x 64 elements, 4 warps, pointers 16-byte aligned: 16-byte vectors of a row per thread."""
    key = (fn.__name__, dtype, cc)
    if key not in _CACHE:
        from triton.backends.compiler import GPUTarget
        src = triton.compiler.ASTSource(fn, {"X": dtype, "Y": dtype, "M": "constexpr", "N": "constexpr"},
                                        {"M": 8, "N": 64},
                                        attrs={(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]})
        k = triton.compile(src, target=GPUTarget("cuda", cc, 32), options={"num_warps": 4})
        _CACHE[key] = k.asm["ttgir"], k.asm["ptx"]
    return _CACHE[key]


def reduce_checks(ttgir: str, ptx: str) -> list:
    return [c for c in audit_pair(ttgir, ptx, "k").checks if c.check == "warp-reduce"]


def redux_lines(ptx: str) -> list[int]:
    return [n for n, line in enumerate(ptx.splitlines(), 1) if "redux.sync" in line]


def halves_lanes() -> tuple[list[int], list[int]]:
    """The two rows' lanes of ``threadsPerWarp = [2, 16]`` (module docstring)."""
    return [t for t in range(32) if t >> 4 == 0], [t for t in range(32) if t >> 4 == 1]


def _edit(ptx: str, line: int, new: str) -> str:
    lines = ptx.splitlines()
    lines[line - 1] = new
    return "\n".join(lines) + "\n"


CASES = [(_row_sum, "*i32", 90), (_row_max, "*i32", 90), (_row_sum, "*i32", 100), (_row_max, "*fp32", 100)]


@pytest.mark.parametrize("fn,dtype,cc", CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_segmented_redux_proved_on_each_half(fn, dtype, cc):
    ttgir, ptx = kernel(fn, dtype, cc)
    assert re.search(r"threadsPerWarp = \[2, 16\]", ttgir), "the layout the test derives its lanes from"
    lines = redux_lines(ptx)
    assert len(lines) == 2, "one redux.sync per half warp"
    checks = reduce_checks(ttgir, ptx)
    assert not [c for c in checks if c.severity == "error"]
    by_line = {c.line: c for c in checks}
    for line, lanes in zip(lines, halves_lanes()):
        c = by_line.get(line)
        assert c is not None and c.status == "proved", (line, c and c.message)
        assert f"lanes {lanes} take part" in c.message


def test_planted_select_swapped_is_an_error():
    """Each lane taking the other half's result combines the other row's elements."""
    ttgir, ptx = kernel(_row_sum, "*i32", 90)
    n, text = next((n, t) for n, t in enumerate(ptx.splitlines(), 1)
                   if re.search(r"selp\.b32\s+%r\d+, %r\d+, %r\d+, %p\d+;", t))
    d, a, b, p = re.search(r"(%r\d+), (%r\d+), (%r\d+), (%p\d+);", text).groups()
    bad = _edit(ptx, n, f"\tselp.b32 \t{d}, {b}, {a}, {p};")
    errs = [c for c in reduce_checks(ttgir, bad) if c.severity == "error"]
    assert errs and all(c.line in redux_lines(bad) for c in errs)
    assert any("other non-reduced coordinates" in c.message for c in errs)


def test_planted_constant_not_identity_is_not_proved():
    """A first half whose other lanes give 1 to an add: the sum is off by 16; never proved."""
    ttgir, ptx = kernel(_row_sum, "*i32", 90)
    n, text = next((n, t) for n, t in enumerate(ptx.splitlines(), 1)
                   if re.search(r"selp\.b32\s+%r\d+, %r\d+, 0, %p\d+;", t))
    bad = _edit(ptx, n, text.replace(", 0, %p", ", 1, %p"))
    first = next(c for c in reduce_checks(ttgir, bad) if c.line == redux_lines(bad)[0])
    assert first.status == "unchecked" and "not an identity" in first.message


def test_identity_table_from_the_isa():
    # add 0; and all ones; max.s32 -2^31; min.u32 all ones; max.f32 -inf (0xff800000) or a NaN
    # unless .NaN propagates NaN (PTX ISA redux.sync)
    assert identity_ok(("redux", "sync", "add", "u32"), 0)
    assert identity_ok(("redux", "sync", "and", "b32"), -1)
    assert identity_ok(("redux", "sync", "max", "s32"), 0x80000000)
    assert not identity_ok(("redux", "sync", "max", "s32"), 0)
    assert identity_ok(("redux", "sync", "min", "u32"), 0xFFFFFFFF)
    assert identity_ok(("redux", "sync", "max", "f32"), 0xFF800000)
    assert identity_ok(("redux", "sync", "max", "f32"), 0x7FC00000)
    assert not identity_ok(("redux", "sync", "max", "NaN", "f32"), 0x7FC00000)
    assert not identity_ok(("redux", "sync", "min", "f32"), 0xFF800000)


@triton.jit
def _col_amax(X, Y, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(Y + tl.arange(0, N), tl.max(tl.abs(x.to(tl.float32)), axis=0))


def test_segmented_inter_warp_stage_is_unchecked_not_an_error():
    """torchao 0.18 (``triton_fp8_blockwise_act_quant_k_grouped_compact_deepgemm_kernel``, 8 warps):
    ``tl.max`` over axis 0 of a 64 x 128 bf16 tile, ``threadsPerWarp = [2, 16]``, ``warpsPerCTA = [8,
    1]``: the warps' partials go through shared memory and the second stage is a segmented
    ``redux.sync`` over values loaded from there, whose lanes hold the scratch round's partials, not
    the operand layout's elements. It was a false error ("lane 0 combines lane 1's element")."""
    from triton.backends.compiler import GPUTarget
    src = triton.compiler.ASTSource(_col_amax, {"X": "*bf16", "Y": "*fp32", "M": "constexpr", "N": "constexpr"},
                                    {"M": 64, "N": 128},
                                    attrs={(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]})
    k = triton.compile(src, target=GPUTarget("cuda", 100, 32), options={"num_warps": 8})
    ttgir, ptx = k.asm["ttgir"], k.asm["ptx"]
    text = ptx.splitlines()
    loaded = {m.group(1) for t in text for m in [re.search(r"ld\.shared\.\S+\s+\{?(%r\d+)", t)] if m}
    assert re.search(r"threadsPerWarp = \[2, 16\], warpsPerCTA = \[8, 1\]", ttgir)
    redux = [n for n, t in enumerate(text, 1) if "redux.sync" in t]
    assert redux and any("selp.f32" in t for t in text) and loaded, "the form under test"
    checks = [c for c in reduce_checks(ttgir, ptx) if set(c.data.get("instructions", [])) & set(redux)]
    assert checks and not [c for c in checks if c.severity == "error"]
    assert all(c.status == "unchecked" and "inter-warp" in c.message for c in checks)
