"""The ``warp-reduce`` check (``verilayout.audit.ptx_reductions``) on kernels Triton 3.9 compiles here
(Triton is the oracle: what it emits for a correct reduction must be proved or reported, never an
error) and on planted bugs in their PTX (each caught at its line).

Expected values are derived in the tests from the kernels' parameters: a ``BlockedEncoding`` with
``threadsPerWarp = [tr, tc]`` (order [1, 0]) gives lane bits 0 .. log2(tc)-1 along dim 1 and the next
log2(tr) bits along dim 0 (Triton's ``blocked`` linear layout); a lane bit beyond the tensor's extent
has basis 0. PTX ISA 9.7.8.6: ``shfl.sync.bfly`` reads lane ``l ^ mask``.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from audited import audit_pair
from verilayout.audit.ptx_reductions import lane_counts, lane_fault, required_lanes

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def _sum_rows(X, Y, N: tl.constexpr, M: tl.constexpr):
    r = tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :]
    tl.store(Y + tl.arange(0, N), tl.sum(tl.load(X + r), axis=1))


@triton.jit
def _max_cols(X, Y, N: tl.constexpr, M: tl.constexpr):
    r = tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :]
    tl.store(Y + tl.arange(0, M), tl.max(tl.load(X + r), axis=0))


@triton.jit
def _argmin_rows(X, Y, N: tl.constexpr, M: tl.constexpr):
    r = tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :]
    tl.store(Y + tl.arange(0, N), tl.argmin(tl.load(X + r), axis=1))


@triton.jit
def _sum_both(X, Y, N: tl.constexpr, M: tl.constexpr):
    r = tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :]
    tl.store(Y, tl.sum(tl.sum(tl.load(X + r), axis=1), axis=0))


@triton.jit
def _sum_small(X, Y):
    r = tl.arange(0, 2)[:, None] * 8 + tl.arange(0, 8)[None, :]
    tl.store(Y + tl.arange(0, 2), tl.sum(tl.load(X + r), axis=1))


@triton.jit
def _gather(X, I, Y, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, N))
    i = tl.load(I + tl.arange(0, N))
    tl.store(Y + tl.arange(0, N), tl.gather(x, i, 0))


def _compile(fn, sig: dict, consts: dict, warps: int) -> tuple[str, str]:
    from triton.backends.compiler import GPUTarget
    src = triton.compiler.ASTSource(fn, dict(sig, **{k: "constexpr" for k in consts}), consts)
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})
    return k.asm["ttgir"], k.asm["ptx"]


_F2 = {"X": "*fp32", "Y": "*fp32"}
KERNELS = {
    "sum": (_sum_rows, _F2, {"N": 16, "M": 64}, 4),
    "max": (_max_cols, _F2, {"N": 64, "M": 16}, 4),
    "argmin": (_argmin_rows, {"X": "*fp32", "Y": "*i32"}, {"N": 16, "M": 64}, 4),
    "sum2": (_sum_both, _F2, {"N": 16, "M": 64}, 4),
    "small": (_sum_small, _F2, {}, 1),
    "gather": (_gather, {"X": "*fp32", "I": "*i32", "Y": "*fp32"}, {"N": 32}, 1),
}
_CACHE: dict = {}


def kernel(name: str) -> tuple[str, str]:
    if name not in _CACHE:
        fn, sig, consts, warps = KERNELS[name]
        _CACHE[name] = _compile(fn, sig, consts, warps)
    return _CACHE[name]


def warp_checks(ttgir: str, ptx: str, check: str = "warp-reduce") -> list:
    return [c for c in audit_pair(ttgir, ptx, "k").checks if c.check == check]


def bfly_lines(ptx: str) -> dict[int, int]:
    """PTX line -> butterfly mask, read from the text."""
    out = {}
    for n, line in enumerate(ptx.splitlines(), 1):
        m = re.search(r"shfl\.sync\.bfly\.b32\s+%r\d+, %r\d+, (\d+), 31, -1;", line)
        if m:
            out[n] = int(m.group(1))
    return out


def blocked_tpw(ttgir: str) -> list[int]:
    m = re.search(r"#blocked = #ttg\.blocked<\{sizePerThread = \[[^]]*\], threadsPerWarp = \[(\d+), (\d+)\]", ttgir)
    return [int(m.group(1)), int(m.group(2))]


# ----- the law on its own: brute force against a hand derivation ------------------------------------

def test_required_lanes_from_blocked_derivation():
    # threadsPerWarp [4, 8]: lane bits 0-2 along dim 1 (bases 1, 2, 4), bits 3-4 along dim 0 (1, 2)
    lanes = ((0, 1), (0, 2), (0, 4), (1, 0), (2, 0))
    assert required_lanes(lanes, 1) == [1, 2, 4]
    assert required_lanes(lanes, 0) == [8, 16]


def test_lane_counts_is_the_butterfly_definition():
    c = lane_counts([4, 1])
    for t in range(32):          # lane t holds lanes t, t^4, t^1, t^5 once each
        assert sorted(np.nonzero(c[t])[0].tolist()) == sorted({t, t ^ 4, t ^ 1, t ^ 5})
        assert c[t].sum() == 4


def test_lane_fault_replicated_and_off_axis():
    lanes = ((0, 1), (0, 2), (0, 4), (1, 0), (0, 0))   # bit 4 replicated
    assert lane_fault(lane_counts([4, 2, 1]), lanes, 1) is None
    assert "2 times" in lane_fault(lane_counts([4, 2, 1, 16]), lanes, 1)
    assert lane_fault(lane_counts([4, 2, 1, 16]), lanes, 1, idempotent=True) is None
    assert "other non-reduced" in lane_fault(lane_counts([4, 2, 1, 8]), lanes, 1)
    assert "misses" in lane_fault(lane_counts([4, 2]), lanes, 1)


# ----- Triton's kernels: the oracle -------------------------------------------------------------------

@pytest.mark.parametrize("name", ["sum", "max", "argmin", "sum2", "small"])
def test_triton_reductions_have_no_error_and_every_butterfly_reported(name):
    ttgir, ptx = kernel(name)
    checks = warp_checks(ttgir, ptx)
    assert not [c for c in checks if c.status == "counterexample"], [c.message for c in checks]
    covered = {ln for c in checks for ln in c.data.get("instructions", ())}
    assert set(bfly_lines(ptx)) <= covered          # no butterfly silent


def test_sum_rows_chains_proved_with_derived_masks():
    ttgir, ptx = kernel("sum")
    tr, tc = blocked_tpw(ttgir)                      # reduce over axis 1: the lanes along dim 1
    want = [tc >> (k + 1) for k in range(tc.bit_length() - 1)]       # 16, 8, 4, 2, 1 for tc = 32
    proved = [c for c in warp_checks(ttgir, ptx) if c.status == "proved" and "inter-warp" not in c.message]
    assert proved and all(c.data["masks"] == want for c in proved)     # the first stage (tests/test_ptx_interwarp.py: the second)
    # one chain per distinct row a thread holds: N rows over tr lanes and the warps along dim 0
    wpc = re.search(r"#blocked = .*warpsPerCTA = \[(\d+), (\d+)\]", ttgir)
    rows = KERNELS["sum"][2]["N"] // (tr * int(wpc.group(1)))
    assert len(proved) == rows


def test_small_layout_with_replicated_lane():
    ttgir, ptx = kernel("small")
    tr, tc = blocked_tpw(ttgir)
    assert tr * tc == 32 and tc == 8 and 2 < tr      # 2 rows on 4 lane rows: one lane bit replicated
    proved = [c for c in warp_checks(ttgir, ptx) if c.status == "proved"]
    assert [c.data["masks"] for c in proved] == [[4, 2, 1]]
    assert [0, 0] in proved[0].data["lane_bases"]


def test_gather_shuffle_reported():
    ttgir, ptx = kernel("gather")
    idx = [n for n, line in enumerate(ptx.splitlines(), 1) if "shfl.sync.idx" in line]
    got = warp_checks(ttgir, ptx, "gather-shuffle")
    assert idx and {c.line for c in got} == set(idx) and all(c.status == "unchecked" for c in got)


# ----- planted bugs, each caught at its line -----------------------------------------------------------

def _edit(ptx: str, line: int, new: str) -> str:
    lines = ptx.splitlines()
    lines[line - 1] = new
    return "\n".join(lines) + "\n"


def _errors(ttgir: str, ptx: str) -> dict[int, str]:
    return {c.line: c.message for c in warp_checks(ttgir, ptx) if c.status == "counterexample"}


def test_planted_mask_changed():
    ttgir, ptx = kernel("sum")
    line, mask = next((n, m) for n, m in bfly_lines(ptx).items() if m == 8)
    bad = _edit(ptx, line, ptx.splitlines()[line - 1].replace(", 8, 31", ", 16, 31"))
    errs = _errors(ttgir, bad)
    assert line in errs and "lane bit 4" in errs[line] and "second time" in errs[line]


def test_planted_butterfly_dropped():
    ttgir, ptx = kernel("sum")
    bfly = bfly_lines(ptx)
    line = next(n for n, m in bfly.items() if m == 4)
    d, a = re.search(r"(%r\d+), (%r\d+), 4,", ptx.splitlines()[line - 1]).groups()
    bad = _edit(ptx, line, f"\tmov.b32 \t{d}, {a};")
    errs = _errors(ttgir, bad)
    # the chain is cut there: its tail (masks 2, 1) and head (16, 8) each miss lane bits; the bit of
    # mask 4 (lane bit 2) is named
    assert errs and any("lane bit 2" in m and "no butterfly" in m for m in errs.values())


def test_planted_butterfly_over_replicated_lane():
    ttgir, ptx = kernel("small")
    line = next(n for n, m in bfly_lines(ptx).items() if m == 4)
    bad = _edit(ptx, line, ptx.splitlines()[line - 1].replace(", 4, 31", ", 16, 31"))
    errs = _errors(ttgir, bad)
    assert line in errs and "lane bit 4 has basis [0, 0]" in errs[line]


def test_planted_combine_changed():
    ttgir, ptx = kernel("sum")
    line = next(n for n, m in bfly_lines(ptx).items() if m == 2)
    d = re.search(r"shfl\.sync\.bfly\.b32\s+(%r\d+),", ptx.splitlines()[line - 1]).group(1)
    lines = ptx.splitlines()
    at = next(n for n in range(line, line + 8) if lines[n].strip().startswith("add.f32") and d in lines[n])
    bad = _edit(ptx, at + 1, lines[at].replace("add.f32", "max.f32"))
    errs = _errors(ttgir, bad)
    assert at + 1 in errs and "max.f32" in errs[at + 1] and "arith.addf" in errs[at + 1]
