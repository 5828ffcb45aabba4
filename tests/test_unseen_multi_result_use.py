"""A use of the first result of a multi-result op, ``%x#0`` of ``%x:n = scf.for ...`` (MLIR prints each
result of a group of ``n > 1`` as ``%x#i``), is tied to its definition like ``%x#1`` .. ``%x#(n-1)``.

Found on unsloth 2026.10.9 (``layernorm_sum_partials``, ``rms_sum_dw_partials``): the loop accumulator
reduced after a loop that carries another value, ``"tt.reduce"(%acc_52#0)``. The reduce's operand had no
definition, so its layout did not read and every butterfly of its warp stage was ``unchecked`` ("no
tt.reduce of the plan shuffles 1 32-bit word(s)"), a planted bug included. The kernel below is the same
form, compiled here by Triton 3.9.

Expected masks are derived from the layout Triton prints: ``#ttg.blocked`` with ``threadsPerWarp =
[tr, tc]`` and order ``[1, 0]`` puts lane bits ``0 .. log2(tc) - 1`` along dim 1 and the next
``log2(tr)`` along dim 0, so a reduce over axis 0 needs one butterfly per lane bit ``log2(tc) ..
log2(tc) + log2(tr) - 1`` (PTX ISA 9.7.8.6: ``shfl.sync.bfly`` reads lane ``l ^ mask``).
"""
from __future__ import annotations

import re

import pytest

from audited import audit_pair
from verilayout.frontends.ttgir import parse_module

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def _col_mean_loop(X, Y, n, M: tl.constexpr, N: tl.constexpr):
    acc = tl.zeros((M, N), dtype=tl.float32)
    k = 0
    for i in range(0, n, M):
        acc += tl.load(X + (i + tl.arange(0, M))[:, None] * N + tl.arange(0, N)[None, :]).to(tl.float32)
        k += 1
    tl.store(Y + tl.arange(0, N), tl.sum(acc, axis=0) / k)


_CACHE: dict = {}


def kernel(cc: int) -> tuple[str, str]:
    if cc not in _CACHE:
        from triton.backends.compiler import GPUTarget
        src = triton.compiler.ASTSource(
            _col_mean_loop, {"X": "*bf16", "Y": "*fp32", "n": "i32", "M": "constexpr", "N": "constexpr"},
            {"M": 64, "N": 64}, attrs={(i,): [["tt.divisibility", 16]] for i in range(3)})
        k = triton.compile(src, target=GPUTarget("cuda", cc, 32), options={"num_warps": 4})
        _CACHE[cc] = k.asm["ttgir"], k.asm["ptx"]
    return _CACHE[cc]


def needed_masks(ttgir: str) -> list[int]:
    tr, tc = (int(x) for x in re.search(r"threadsPerWarp = \[(\d+), (\d+)\]", ttgir).groups())
    lo = tc.bit_length() - 1
    return sorted(1 << i for i in range(lo, lo + tr.bit_length() - 1))


def test_first_result_use_resolves_to_the_loop():
    ttgir, _ = kernel(90)
    m = re.search(r'"tt\.reduce"\((%[\w.$-]+)#0\)', ttgir)
    assert m, "Triton prints the reduce of the loop's first result as %x#0"
    mod = parse_module(ttgir)
    red = next(o for o in mod.ops if o.name == "tt.reduce")
    assert red.operands == (m.group(1),) and mod.defs[m.group(1)].name == "scf.for"
    assert red in mod.users[m.group(1)]


@pytest.mark.parametrize("cc", [80, 90, 100])
def test_warp_stage_of_a_loop_result_proved(cc):
    ttgir, ptx = kernel(cc)
    want = needed_masks(ttgir)
    checks = [c for c in audit_pair(ttgir, ptx, "k").checks if c.check == "warp-reduce"]
    assert not [c for c in checks if c.severity == "error"]
    warp_stage = [c for c in checks if "inter-warp" not in c.message]
    assert warp_stage and all(c.status == "proved" for c in warp_stage), [c.message[:200] for c in warp_stage]
    assert all(sorted(c.data["masks"]) == want for c in warp_stage)


def test_planted_mask_in_the_warp_stage_is_an_error():
    ttgir, ptx = kernel(90)
    lines = ptx.splitlines()
    n = next(i for i, t in enumerate(lines, 1) if re.search(r"shfl\.sync\.bfly\.b32\s+%r\d+, %r\d+, 8, 31, -1;", t))
    lines[n - 1] = lines[n - 1].replace(", 8, 31", ", 4, 31")
    bad = "\n".join(lines) + "\n"
    errs = [c for c in audit_pair(ttgir, bad, "k").checks if c.check == "warp-reduce" and c.severity == "error"]
    assert any(c.line == n for c in errs)
