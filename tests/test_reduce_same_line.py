"""Two ``tt.reduce`` ops on one source line (``tl.sum(x, 1)`` and ``tl.sum(x * x, 0)`` in one statement):
the ``warp-reduce`` chains, first stage and inter-warp stage, are tied to the reduce that owns them by
dataflow (a reduce none of whose lanes moves along its axis shuffles nothing; one with no warp along its
axis has no inter-warp round), so Triton 3.9's own output is proved and a planted bug is an error.

Oracle: the expected lanes and warp groups are derived here from the ``#blocked`` layout Triton printed
(``threadsPerWarp = [t0, t1]``, ``warpsPerCTA = [w0, w1]``, ``order = [1, 0]``: warp ``w`` sits at
``(w // w1, w % w1)``, lane bit ``i`` moves along dim 1 while ``1 << i < t1``). PTX ISA 9.7.8.6:
``shfl.sync.bfly`` makes lane ``l`` read lane ``l ^ mask``.
"""
from __future__ import annotations

import re

import pytest

from audited import audit_pair
from test_ptx_interwarp import _second_stage_bfly

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def _two(X, Y, Z, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    a, b = tl.sum(x, 1), tl.sum(x * x, 0)
    tl.store(Y + tl.arange(0, M), a)
    tl.store(Z + tl.arange(0, N), b)


#: name -> (M, N, num_warps)
KERNELS = {"m16n256_w8": (16, 256, 8), "m64n64_w8": (64, 64, 8), "m32n128_w4": (32, 128, 4)}
_CACHE: dict = {}


def kernel(name: str) -> tuple[str, str]:
    if name not in _CACHE:
        from triton.backends.compiler import GPUTarget
        m, n, warps = KERNELS[name]
        src = triton.compiler.ASTSource(_two, {"X": "*fp32", "Y": "*fp32", "Z": "*fp32", "M": "constexpr",
                                               "N": "constexpr"}, {"M": m, "N": n})
        k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})
        _CACHE[name] = (k.asm["ttgir"], k.asm["ptx"])
    return _CACHE[name]


def _layout(ttgir: str) -> tuple[list[int], list[int]]:
    m = re.search(r"#blocked = #ttg\.blocked<\{sizePerThread = \[1, 1\], threadsPerWarp = \[(\d+), (\d+)\], "
                  r"warpsPerCTA = \[(\d+), (\d+)\], order = \[1, 0\]", ttgir)
    assert m, "the test's layout reading needs a 2-D blocked layout with sizePerThread [1, 1], order [1, 0]"
    return [int(m.group(1)), int(m.group(2))], [int(m.group(3)), int(m.group(4))]


def _reduce_lines(ttgir: str) -> dict[int, int]:
    """TTGIR line (1-based) of each tt.reduce -> its axis."""
    return {i + 1: int(re.search(r"axis = (\d+)", s).group(1)) for i, s in enumerate(ttgir.splitlines())
            if '"tt.reduce"' in s}


def _warp_groups(warps: list[int], axis: int) -> set[tuple[int, ...]]:
    groups: dict = {}
    for w in range(warps[0] * warps[1]):
        coord = (w // warps[1], w % warps[1])
        groups.setdefault(coord[1 - axis], []).append(w)
    return {tuple(g) for g in groups.values()}


def _checks(ttgir: str, ptx: str) -> list:
    return [c for c in audit_pair(ttgir, ptx, "k").checks if c.check == "warp-reduce"]


def test_the_two_reduces_share_one_source_line():
    ttgir, _ = kernel("m64n64_w8")
    lines = ttgir.splitlines()
    locs = set()
    for at in _reduce_lines(ttgir):
        close = next(s for s in lines[at:] if s.lstrip().startswith("})"))
        alias = re.search(r"loc\((#loc\d+)\)", close).group(1)
        body = next(s for s in lines if s.startswith(alias + " = "))
        locs.add(re.search(r"at (#loc\d+)", body).group(1))
    callers = {re.search(r'loc\("[^"]*"\((#loc\d+)\)\)|loc\((.*)\)', next(s for s in lines if s.startswith(a + " ")))
               .group(0) for a in locs}
    where = set()
    for c in callers:
        ref = re.search(r"(#loc\d+)\)\)$", c)
        text = next(s for s in lines if s.startswith(ref.group(1) + " ")) if ref else c
        where.add(re.search(r'":(\d+):', text).group(1))
    assert len(_reduce_lines(ttgir)) == 2 and len(where) == 1, where


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_each_chain_is_proved_against_the_reduce_with_lanes_and_warps_along_its_axis(name):
    ttgir, ptx = kernel(name)
    threads, warps = _layout(ttgir)
    assert threads[0] == 1                          # no lane along dim 0: only the axis-1 sum shuffles
    owner = next(line for line, axis in _reduce_lines(ttgir).items() if axis == 1)
    masks = [1 << i for i in range(threads[1].bit_length() - 1)]
    checks = _checks(ttgir, ptx)
    assert checks and all(c.status == "proved" for c in checks), [c.message for c in checks
                                                                    if c.status != "proved"][:2]
    # the axis-0 sum shuffles nothing (no lane along dim 0); with warps along dim 0 its own inter-warp round
    # stores in-thread partials and is checked against it
    other = next(line for line, axis in _reduce_lines(ttgir).items() if axis == 0)
    mine = [c for c in checks if c.data["ttgir_line"] == other]
    assert all("inter-warp" in c.message for c in mine) and bool(mine) == (warps[0] > 1)
    for c in mine:
        assert {tuple(g) for g in c.data["warp_groups"]} == _warp_groups(warps, 0)
    checks = [c for c in checks if c not in mine]
    assert all(c.data["ttgir_line"] == owner for c in checks)
    first = [c for c in checks if "inter-warp" not in c.message]
    assert first and all(sorted(c.data["masks"]) == masks for c in first)
    inter = [c for c in checks if "inter-warp" in c.message]
    if warps[1] > 1:
        assert inter
        for c in inter:
            assert {tuple(g) for g in c.data["warp_groups"]} == _warp_groups(warps, 1)
    else:
        assert not inter


@pytest.mark.parametrize("name", ["m16n256_w8", "m64n64_w8", "m32n128_w4"])
def test_changed_second_stage_mask_is_an_error(name):
    ttgir, ptx = kernel(name)
    i, text, mask = _second_stage_bfly(ptx)
    _threads, warps = _layout(ttgir)
    other = mask << 1 if mask << 1 < warps[1] else 1 << warps[1].bit_length()    # outside the warp bits
    lines = ptx.splitlines()
    lines[i] = text.replace(f", {mask}, 31, -1;", f", {other}, 31, -1;")
    got = [c for c in _checks(ttgir, "\n".join(lines)) if c.line == i + 1]
    assert got and got[0].status == "counterexample", [c.message for c in got]


@pytest.mark.parametrize("name", ["m16n256_w8", "m32n128_w4"])
def test_changed_first_stage_mask_is_an_error(name):
    ttgir, ptx = kernel(name)
    lines = ptx.splitlines()
    i = next(k for k, s in enumerate(lines) if re.search(r"shfl\.sync\.bfly\.b32\s+%r\d+, %r\d+, 16, 31, -1;", s))
    lines[i] = lines[i].replace(", 16, 31, -1;", ", 8, 31, -1;")      # lane bit 4 never combined, bit 3 twice
    got = [c for c in _checks(ttgir, "\n".join(lines)) if i + 1 in c.data.get("instructions", ())]
    assert got and all(c.status == "counterexample" for c in got), [c.message for c in got]


def test_changed_mask_of_an_in_thread_reduces_round_is_not_proved():
    # m64n64_w8: the axis-0 sum has no lane along dim 0 and 4 warps along it; its round stores in-thread
    # partials, so a changed mask there is never proved (reported unchecked: a plain round's ownership
    # is not certain)
    ttgir, ptx = kernel("m64n64_w8")
    other = next(line for line, axis in _reduce_lines(ttgir).items() if axis == 0)
    stage = next(c for c in _checks(ttgir, ptx) if c.data.get("ttgir_line") == other)
    lines = ptx.splitlines()
    i = stage.line - 1
    m = re.search(r", (\d+), 31, -1;", lines[i])
    mask = int(m.group(1))
    lines[i] = lines[i].replace(f", {mask}, 31, -1;", f", {4 if mask != 4 else 8}, 31, -1;")
    got = [c for c in _checks(ttgir, "\n".join(lines)) if i + 1 in c.data.get("instructions", ())]
    assert got and all(c.status == "unchecked" for c in got), [c.message for c in got]
