"""Select masks decided per element where the program's offset cancels (``verilayout.audit.ptx_shuffles``).

A causal mask ``offs[None, :] <= offs[:, None]`` on ``offs = i_t * BT + arange(BT)`` is not the same in
every program as a tensor, but both sides are the same program offset plus an element part, so the
comparison is the comparison of the element parts whenever no sum can wrap around. Expected values here
are brute force: the mask evaluated with Python integers over sampled programs (offsets, bounds), and
the triangle ``c > r`` derived from the mask's definition.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from audited import audit_pair
from verilayout.audit.ptx_shuffles import partial_mask, program_offset, scalar_range
from verilayout.frontends.ttgir import parse_module

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

BT = 64


@triton.jit
def _causal(Q, K, V, O, T, BT: tl.constexpr, WIDE: tl.constexpr):
    i_t = tl.program_id(0)
    if WIDE:
        o_t = i_t.to(tl.int64) * BT
    else:
        o_t = i_t * BT
    offs = o_t + tl.arange(0, BT)
    cols = tl.arange(0, BT)
    inb = offs < T
    q = tl.load(Q + offs[:, None] * BT + cols[None, :], mask=inb[:, None], other=0.0)
    k = tl.load(K + offs[:, None] * BT + cols[None, :], mask=inb[:, None], other=0.0)
    v = tl.load(V + offs[:, None] * BT + cols[None, :], mask=inb[:, None], other=0.0)
    s = tl.dot(q, tl.trans(k))
    keep = (offs[None, :] <= offs[:, None]) & inb[:, None] & inb[None, :]
    s = tl.where(keep, s, 0.0)
    o = tl.dot(s.to(tl.float16), v)                     # s: the second dot's A operand, converted in-warp
    tl.store(O + offs[:, None] * BT + cols[None, :], o.to(tl.float16), mask=inb[:, None])


def _compile(cc: int, wide: bool) -> tuple[str, str]:
    from triton.backends.compiler import GPUTarget
    sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "O": "*fp16", "T": "i32", "BT": "constexpr",
           "WIDE": "constexpr"}
    src = triton.compiler.ASTSource(_causal, sig, {"BT": BT, "WIDE": wide})
    k = triton.compile(src, target=GPUTarget("cuda", cc, 32), options={"num_warps": 4})
    return k.asm["ttgir"], k.asm["ptx"]


def _brute_causal(programs: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Cells false (true) in every sampled program (i_t, T) of ``keep``, with exact integers."""
    r = np.arange(BT)[:, None]
    c = np.arange(BT)[None, :]
    always_false = np.ones((BT, BT), dtype=bool)
    always_true = np.ones((BT, BT), dtype=bool)
    for i_t, t in programs:
        rows, cols = i_t * BT + r, i_t * BT + c
        keep = (cols <= rows) & (rows < t) & (cols < t)
        always_false &= ~keep
        always_true &= keep
    return always_false, always_true


_PROGRAMS = [(i, t) for i, t in itertools.product([0, 1, 7, 2**31 - 1], [0, 5, 100, 2**31 - 1, 2**40])]


def _select_mask(ttgir: str) -> tuple[str, object]:
    mod = parse_module(ttgir)
    sel = [op for op in mod.ops if op.name == "arith.select"]
    assert len(sel) == 1
    return sel[0].operands[0], mod


@pytest.mark.parametrize("cc", [80, 90])
def test_causal_mask_known_false_is_the_brute_force_triangle(cc):
    ttgir, _ = _compile(cc, True)
    mask, mod = _select_mask(ttgir)
    got = partial_mask(mask, mod)
    assert got is not None
    known, value = got
    never, always = _brute_causal(_PROGRAMS)
    # brute force over programs: the cells false in every program are exactly the strict upper triangle
    assert (never == (np.arange(BT)[None, :] > np.arange(BT)[:, None])).all()
    assert not always.any()
    assert (known & ~value == never).all()      # every always-false cell decided, and only those
    assert not (known & value).any()


@pytest.mark.parametrize("cc", [80, 90])
def test_causal_mask_register_permute_proved_with_i64_offsets(cc):
    ttgir, ptx = _compile(cc, True)
    checks = [c for c in audit_pair(ttgir, ptx, f"causal{cc}").checks if c.check == "register-permute"]
    assert checks and all(c.status == "proved" for c in checks), [c.message for c in checks]


@pytest.mark.parametrize("cc", [80, 90])
def test_causal_mask_with_i32_offsets_stays_unchecked(cc):
    # i_t * 64 in i32 may wrap (program ids reach 2**31 - 1), so offs[c] <= offs[r] is not c <= r in
    # every program: e.g. i_t * 64 = 2**31 - 8 (wrapped), r = 0, c = 8 gives offs[c] < offs[r].
    i_t_wrapped, r, c = 2**31 - 8, 0, 8
    wrap = lambda x: (x + 2**31) % 2**32 - 2**31   # noqa: E731
    assert wrap(i_t_wrapped + c) <= wrap(i_t_wrapped + r) and not c <= r
    ttgir, ptx = _compile(cc, False)
    mask, mod = _select_mask(ttgir)
    assert partial_mask(mask, mod) is None
    checks = [c for c in audit_pair(ttgir, ptx, f"causal32_{cc}").checks if c.check == "register-permute"]
    assert checks and all(c.status == "unchecked" for c in checks)


_HEAD = """#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#b2 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func public @f(%X: !tt.ptr<i32>, %Y: !tt.ptr<i64>) {
    %x = tt.load %X : !tt.ptr<i32>
    %y = tt.load %Y : !tt.ptr<i64>
    %c4 = arith.constant 4 : i64
    %y4 = arith.addi %y, %c4 : i64
    %c3 = arith.constant dense<3> : tensor<8xi64, #blocked>
    %w = arith.extsi %x : i32 to i64
    %p = arith.muli %w, %c4 : i64
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32, #blocked>
    %re = arith.extsi %r : tensor<8xi32, #blocked> to tensor<8xi64, #blocked>
    %s = tt.splat %p : i64 -> tensor<8xi64, #blocked>
    %o = arith.addi %s, %re : tensor<8xi64, #blocked>
    %o3 = arith.subi %o, %c3 : tensor<8xi64, #blocked>
    %sy = tt.splat %y : i64 -> tensor<8xi64, #blocked>
    %oy = arith.addi %sy, %re : tensor<8xi64, #blocked>
    %a = tt.expand_dims %o {axis = 1 : i32} : tensor<8xi64, #blocked> -> tensor<8x1xi64, #b2>
    %b = tt.expand_dims %o3 {axis = 0 : i32} : tensor<8xi64, #blocked> -> tensor<1x8xi64, #b2>
    %ab = tt.broadcast %a : tensor<8x1xi64, #b2> -> tensor<8x8xi64, #b2>
    %bb = tt.broadcast %b : tensor<1x8xi64, #b2> -> tensor<8x8xi64, #b2>
    %ge = arith.cmpi sge, %ab, %bb : tensor<8x8xi64, #b2>
    %eq = arith.cmpi eq, %ab, %bb : tensor<8x8xi64, #b2>
    %ty = tt.splat %y : i64 -> tensor<8x8xi64, #b2>
    %lt = arith.cmpi slt, %ab, %ty : tensor<8x8xi64, #b2>
    %and = arith.andi %eq, %lt : tensor<8x8xi1, #b2>
    %or = arith.ori %ge, %lt : tensor<8x8xi1, #b2>
    %yb = tt.expand_dims %oy {axis = 0 : i32} : tensor<8xi64, #blocked> -> tensor<1x8xi64, #b2>
    %ybb = tt.broadcast %yb : tensor<1x8xi64, #b2> -> tensor<8x8xi64, #b2>
    %mixed = arith.cmpi sge, %ab, %ybb : tensor<8x8xi64, #b2>
    tt.return
  }
}
"""


def _brute(name: str, samples: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Cells of ``name`` false / true in every sample (x, y), evaluated with exact integers."""
    r, c = np.arange(8)[:, None], np.arange(8)[None, :]
    never, always = np.ones((8, 8), dtype=bool), np.ones((8, 8), dtype=bool)
    for x, y in samples:
        a, b = 4 * x + r, 4 * x + c - 3
        ge, eq, lt = a >= b, a == b, a < y
        v = {"ge": ge, "eq": eq, "and": eq & lt, "or": ge | lt}[name] & np.ones((8, 8), dtype=bool)
        never &= ~v
        always &= v
    return never, always


_SAMPLES = [(x, y) for x in (-2**31, -1, 0, 5, 2**31 - 1) for y in (-2**63, -7, 0, 3, 40, 2**63 - 1)]


@pytest.mark.parametrize("name", ["ge", "eq", "and", "or"])
def test_partial_mask_matches_brute_force(name):
    known, value = partial_mask(f"%{name}", parse_module(_HEAD))
    never, always = _brute(name, _SAMPLES)
    assert (known & ~value == never).all()
    assert (known & value == always).all()


def test_scalar_bounds_and_offsets():
    mod = parse_module(_HEAD)
    assert scalar_range("%p", mod) == (-4 * 2**31, 4 * (2**31 - 1))   # extsi of i32, times 4: no wrap
    assert scalar_range("%y", mod) is None                             # a load prints no result type
    assert scalar_range("%y4", mod) == (-2**63, 2**63 - 1)            # y + 4 may wrap: its type only
    off = program_offset("%o3", mod)
    assert off is not None and off.prog == "%p" and off.elem.tolist() == [i - 3 for i in range(8)]
    assert program_offset("%oy", mod) is None                       # y + 7 may wrap in i64
    assert partial_mask("%mixed", mod) is None                      # different program parts
