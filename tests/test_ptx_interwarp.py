"""The inter-warp stage of ``warp-reduce`` (``verilayout.audit.ptx_interwarp``) on reductions Triton 3.9
compiles here with warps along the reduced axis (Triton is the oracle: its stage must be proved, never an
error), and on planted bugs in their PTX (a scratch address off by one warp's slot, a changed butterfly
mask in the second stage: each an error or at least not proved).

The expected partition of warps is derived in the test from the TTGIR's ``#blocked`` layout written out:
``warpsPerCTA = [w0, w1]`` with ``order = [1, 0]`` numbers warp ``w`` at ``(w // w1, w % w1)`` (Triton's
blocked layout: the fastest dimension first); the warps that share an output element of a reduce over
``axis`` are those with the same coordinate off the axis, and the stage must combine each such group.
PTX ISA 9.7.8.6: ``shfl.sync.bfly`` reads lane ``l ^ mask``.
"""
from __future__ import annotations

import re

import pytest

from audited import audit_pair
from verilayout.audit.ptx_interwarp import lane_counts

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def _reduce(X, Y, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, MAX: tl.constexpr):
    x = tl.load(X + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    r = tl.max(x, axis=AXIS) if MAX else tl.sum(x, axis=AXIS)
    if AXIS == 0:
        tl.store(Y + tl.arange(0, N), r)
    else:
        tl.store(Y + tl.arange(0, M), r)


#: name -> (M, N, axis, max, num_warps, compute capability)
KERNELS = {
    "sum1_w4_sm90": (4, 1024, 1, 0, 4, 90),
    "sum1_w8_sm90": (64, 64, 1, 0, 8, 90),
    "max0_w8_sm80": (4096, 2, 0, 1, 8, 80),
    "sum0_w4_sm80": (2048, 4, 0, 0, 4, 80),
    "max1_w8_sm100": (2, 2048, 1, 1, 8, 100),
    "sum1_w4_sm100": (8, 512, 1, 0, 4, 100),
}
_CACHE: dict = {}


def kernel(name: str) -> tuple[str, str]:
    if name not in _CACHE:
        from triton.backends.compiler import GPUTarget
        m, n, axis, mx, warps, cc = KERNELS[name]
        src = triton.compiler.ASTSource(_reduce, {"X": "*fp32", "Y": "*fp32", "M": "constexpr", "N": "constexpr",
                                                  "AXIS": "constexpr", "MAX": "constexpr"},
                                        {"M": m, "N": n, "AXIS": axis, "MAX": mx})
        k = triton.compile(src, target=GPUTarget("cuda", cc, 32), options={"num_warps": warps})
        _CACHE[name] = (k.asm["ttgir"], k.asm["ptx"])
    return _CACHE[name]


def stage_checks(ttgir: str, ptx: str) -> list:
    """The warp-reduce results whose chain reads values loaded from shared memory."""
    return [c for c in audit_pair(ttgir, ptx, "k").checks if c.check == "warp-reduce"
            and ("inter-warp" in c.message)]


def expected_groups(ttgir: str, axis: int) -> set[tuple[int, ...]]:
    """The warps sharing each output element, from ``warpsPerCTA`` and ``order`` written out."""
    m = re.search(r"#blocked = #ttg\.blocked<\{[^}]*warpsPerCTA = \[(\d+), (\d+)\], order = \[1, 0\]", ttgir)
    w0, w1 = int(m.group(1)), int(m.group(2))
    groups: dict = {}
    for w in range(w0 * w1):
        coord = (w // w1, w % w1)
        groups.setdefault(coord[1 - axis], []).append(w)
    return {tuple(g) for g in groups.values()}


def test_lane_counts_is_the_butterfly_definition():
    c = lane_counts([2, 1])
    for t in range(32):                 # lane t holds lanes t, t^1, t^2, t^3 once each
        assert sorted(c[t].nonzero()[0].tolist()) == sorted({t, t ^ 1, t ^ 2, t ^ 3})
    assert (lane_counts([-1]) == 1).all()


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_triton_inter_warp_stage_is_proved_with_the_warps_of_each_element(name):
    ttgir, ptx = kernel(name)
    axis = KERNELS[name][2]
    checks = stage_checks(ttgir, ptx)
    assert checks, "no inter-warp stage found"
    assert all(c.status == "proved" for c in checks), [c.message for c in checks]
    want = expected_groups(ttgir, axis)
    assert all(len(g) > 1 for g in want)            # warps lie along the axis
    for c in checks:
        assert {tuple(g) for g in c.data["warp_groups"]} == want, (c.data["warp_groups"], want)


def test_some_kernel_has_several_groups():
    ttgir, _ = kernel("sum1_w8_sm90")
    assert len(expected_groups(ttgir, 1)) == 4


def _second_stage_bfly(ptx: str) -> tuple[int, str, int]:
    """(line index, text, mask) of the first butterfly after the first ``ld.shared``."""
    lines = ptx.splitlines()
    ld = next(i for i, s in enumerate(lines) if re.search(r"\bld\.shared\.", s))
    for i in range(ld, len(lines)):
        m = re.search(r"shfl\.sync\.bfly\.b32\s+%r\d+, %r\d+, (\d+), 31, -1;", lines[i])
        if m:
            return i, lines[i], int(m.group(1))
    raise AssertionError("no second-stage butterfly")


@pytest.mark.parametrize("name", ["sum1_w4_sm90", "max0_w8_sm80", "sum1_w8_sm90"])
def test_changed_second_stage_mask_is_an_error(name):
    ttgir, ptx = kernel(name)
    i, text, mask = _second_stage_bfly(ptx)
    other = 1 if mask != 1 else 2
    lines = ptx.splitlines()
    # the butterfly now repeats (or skips) a lane bit: some warp's partial is combined twice or missed
    lines[i] = text.replace(f", {mask}, 31, -1;", f", {other}, 31, -1;")
    checks = stage_checks(ttgir, "\n".join(lines))
    bad = [c for c in checks if c.status == "counterexample"]
    assert bad, [c.message for c in checks]
    assert any(w in c.message for c in bad for w in ("times", "misses", "different elements")), \
        [c.message for c in bad]


def _shift_store(ptx: str) -> str:
    """Every ``st.shared`` before the first ``bar.sync`` (the round's stores) moved by one store's width
    (one warp's slot where a warp stores one vector): the scratch address off by one slot."""
    lines = ptx.splitlines()
    bar = next(i for i, s in enumerate(lines) if "bar.sync" in s)
    for i in range(bar):
        m = re.search(r"st\.shared(\.v(\d))?\.b(\d+)\s+\[(%r\d+)(\+(\d+))?\]", lines[i])
        if m:
            slot = int(m.group(2) or 1) * int(m.group(3)) // 8
            lines[i] = lines[i].replace(m.group(0).split("[")[1], f"{m.group(4)}+{int(m.group(6) or 0) + slot}]")
    return "\n".join(lines)


@pytest.mark.parametrize("name", ["sum1_w4_sm90", "max0_w8_sm80", "sum1_w8_sm90", "max1_w8_sm100"])
def test_scratch_address_off_by_one_warp_is_not_proved(name):
    ttgir, ptx = kernel(name)
    checks = stage_checks(ttgir, _shift_store(ptx))
    assert checks
    assert not any(c.status == "proved" for c in checks), [c.message for c in checks]


@triton.jit
def _and_all(a, b):
    return a & b


@triton.jit
def _all_positive(X, Y, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, N)) > 0
    tl.store(Y, tl.reduce(x, 0, _and_all).to(tl.int32))


def test_i1_and_reduce_across_warps_is_the_inter_warp_stage():
    # an i1 ``and`` reduced across 4 warps (the form of a harvested cut-cross-entropy kernel): the
    # partial is loaded back as a byte and masked (``and.b32 r, v, 1``) before its redux.sync; the
    # check must take it as the inter-warp stage (not the operand's lanes) and prove it
    from triton.backends.compiler import GPUTarget
    src = triton.compiler.ASTSource(_all_positive, {"X": "*fp32", "Y": "*i32", "N": "constexpr"}, {"N": 1024})
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
    ptx = k.asm["ptx"]
    lines = ptx.splitlines()
    ld = next(i for i, s in enumerate(lines) if re.search(r"\bld\.shared\.", s))
    second = [i + 1 for i in range(ld, len(lines)) if "redux.sync" in lines[i] or "shfl.sync.bfly" in lines[i]]
    assert second
    got = [c for c in audit_pair(k.asm["ttgir"], ptx, "k").checks if c.check == "warp-reduce" and c.line == second[0]]
    assert got and got[0].status == "proved" and "inter-warp" in got[0].message, [c.message for c in got]
    assert [list(g) for g in got[0].data["warp_groups"]] == [[0, 1, 2, 3]]


@pytest.mark.parametrize("name", ["sum1_w4_sm90", "max0_w8_sm80", "max1_w8_sm100"])
def test_removed_barrier_is_an_error(name):
    ttgir, ptx = kernel(name)
    lines = ptx.splitlines()
    ld = next(i for i, s in enumerate(lines) if re.search(r"\bld\.shared\.", s))
    bar = max(i for i in range(ld) if "bar.sync" in lines[i])
    assert any(re.search(r"\bst\.shared\.", s) for s in lines[:bar])
    # the blank keeps the line numbers; the round now has no barrier between its stores and loads
    checks = stage_checks(ttgir, "\n".join(lines[:bar] + [""] + lines[bar + 1:]))
    assert any(c.status == "counterexample" and "barrier" in c.message for c in checks), [c.message for c in checks]
