"""A reverse ``tl.cumsum`` followed by a ``tl.sum`` on the same tile (the pattern of mamba-ssm's mamba3
segsum kernels): Triton 3.9 flips the lanes of a reverse scan with ``shfl.sync.bfly`` of a multi-bit mask
and selects or scans the flipped value on its own (``ScanOpToLLVM.cpp``), while a reduction step shuffles by
one lane bit and combines the shuffled value with its own (``ReduceOpToLLVM.cpp``, ``warpReduce``). The
flips were taken as steps of the sum's butterfly chain (false errors "masks [31, 31, 16, 8, 4, 2, 1] do not
combine the lanes' elements", "combined by selp.f32"); they are now a lane permutation, unchecked with
that reason, and the sum's chains are proved.

Oracle: the sum's masks are derived here from the ``#blocked`` layout Triton printed (lane bit ``i`` moves
along dim 1 while ``1 << i < threadsPerWarp[1]``); PTX ISA 9.7.8.6: ``shfl.sync.bfly`` makes lane ``l``
read lane ``l ^ mask``.
"""
from __future__ import annotations

import re

import pytest

from audited import audit_pair

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def _rev_scan_sum(X, Y, B: tl.constexpr):
    r = tl.arange(0, B)
    x = tl.load(X + r[:, None] * B + r[None, :])
    c = tl.cumsum(x, axis=0, reverse=True)
    c = tl.where(r[:, None] > r[None, :], c, 0.0)
    tl.store(Y + r, tl.sum(c, axis=1))


_CACHE: dict = {}
_BFLY = re.compile(r"shfl\.sync\.bfly\.b32\s+%r\d+, %r\d+, (\d+), 31, -1;")


def kernel(cc: int) -> tuple[str, str]:
    if cc not in _CACHE:
        from triton.backends.compiler import GPUTarget
        src = triton.compiler.ASTSource(_rev_scan_sum, {"X": "*fp32", "Y": "*fp32", "B": "constexpr"}, {"B": 64})
        k = triton.compile(src, target=GPUTarget("cuda", cc, 32), options={"num_warps": 4})
        _CACHE[cc] = (k.asm["ttgir"], k.asm["ptx"])
    return _CACHE[cc]


def _sum_masks(ttgir: str) -> list[int]:
    m = re.search(r"#blocked = #ttg\.blocked<\{sizePerThread = \[1, 1\], threadsPerWarp = \[(\d+), (\d+)\]", ttgir)
    assert m, "the test reads a 2-D blocked layout with sizePerThread [1, 1]"
    return [1 << i for i in range(int(m.group(2)).bit_length() - 1)]


def _checks(ttgir: str, ptx: str) -> list:
    return [c for c in audit_pair(ttgir, ptx, "k").checks if c.check == "warp-reduce"]


def _flips(ptx: str) -> list[int]:
    """PTX lines (1-based) of the butterflies whose mask has several bits (never a reduction step)."""
    return [i + 1 for i, s in enumerate(ptx.splitlines())
            if (m := _BFLY.search(s)) and bin(int(m.group(1))).count("1") > 1]


@pytest.mark.parametrize("cc", [80, 90, 100])
def test_flips_are_a_permutation_and_the_sum_is_proved(cc):
    ttgir, ptx = kernel(cc)
    assert '"tt.scan"' in ttgir and "reverse = true" in ttgir
    flips = _flips(ptx)
    assert flips, "Triton 3.9 flips a reverse scan's lanes with a multi-bit butterfly"
    checks = _checks(ttgir, ptx)
    assert not [c.message for c in checks if c.status == "counterexample"]
    proved = [c for c in checks if c.status == "proved" and "inter-warp" not in c.message]
    assert proved and all(sorted(c.data["masks"]) == _sum_masks(ttgir) for c in proved)
    perm = [c for c in checks if "lane permutation" in c.message]
    assert perm and all(c.status == "unchecked" for c in perm)
    assert sorted(i for c in perm for i in c.data["instructions"]) == flips
    # sm_100 only: the sum's inter-warp rounds, read with vector loads, stay unchecked with their own reason
    assert all("inter-warp stage" in c.message for c in checks if c.status == "unchecked" and c not in perm)


def _planted(ptx: str, old: int, new: int) -> tuple[str, int]:
    lines = ptx.splitlines()
    i = next(k for k, s in enumerate(lines) if (m := _BFLY.search(s)) and int(m.group(1)) == old)
    lines[i] = lines[i].replace(f", {old}, 31, -1;", f", {new}, 31, -1;")
    return "\n".join(lines), i + 1


@pytest.mark.parametrize("cc", [90, 100])
@pytest.mark.parametrize("new", [8, 3, 12])
def test_a_changed_sum_mask_is_still_an_error(cc, new):
    # with the later masks 8, 4, 2, 1 no lane ever reads across lane bit 4: 8 counts bit 3 twice; 3 and 12 are
    # multi-bit masks on a step that combines what it shuffled (a reduction step, not a permutation), so
    # never taken for a flip. (17 or 48 would be right: 17 with 8, 4, 2, 1 spans every lane bit, and
    # shfl reads b[4:0], 48 & 31 = 16.)
    ttgir, ptx = kernel(cc)
    planted, line = _planted(ptx, 16, new)
    got = [c for c in _checks(ttgir, planted) if line in c.data.get("instructions", ())]
    assert got and all(c.status == "counterexample" for c in got), [c.message for c in got]
