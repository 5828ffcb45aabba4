"""The kernel of ``test_round_beside_alloc`` (``hdw = tl.dot(dw, h)`` then ``hdw * dw``: a
``ttg.local_alloc``, a ``ttg.convert_layout`` and a ``ttg.local_load`` of ``dw`` on one source line) where
the conversion takes a single scratch round: sm_80 (any warp count) and 8 warps on sm_90/sm_100
(nvidia-modelopt's ``_fp8_scale_sweep_hessian_kernel``, ``num_warps=8``). The round's two epochs also
hold the alloc's stores and the load's loads, each through their own address registers into their own
buffer, which the conversion's scratch bytes never meet; the round is cut into the parts whose stored
and loaded bytes meet and kept to the part that satisfies the conversion's law.

Oracle: Triton 3.9's own output (a released compiler's output for a kernel it accepts is correct: no
error), and planted one-constant offsets (PTX ISA 9.7.9.8 ``ld``/``st``: the address is register plus
immediate) on one of the conversion's scratch loads and on the ``local_load``, each an error.
"""
from __future__ import annotations

import re

import pytest

from audited import audit_pair
from test_round_beside_alloc import _dw_ops, _hess, _plant, _smem, assert_each_op_proved

triton = pytest.importorskip("triton")

_CACHE: dict = {}

#: (target, num_warps, block): one-round conversions (sm_80 at 4 and 8 warps; 8 warps on sm_90/sm_100)
CASES = [(80, 4, 64), (80, 8, 32), (90, 8, 64), (100, 8, 64)]


def kernel(cc: int, warps: int, b: int) -> tuple[str, str]:
    key = (cc, warps, b)
    if key not in _CACHE:
        from triton.backends.compiler import GPUTarget
        sig = {"X": "*fp32", "H": "*fp32", "S": "*fp32", "O": "*fp32", "B": "constexpr", "R": "constexpr",
               "NC": "constexpr"}
        src = triton.compiler.ASTSource(_hess, sig, {"B": b, "R": b, "NC": 4})
        k = triton.compile(src, target=GPUTarget("cuda", cc, 32), options={"num_warps": warps})
        _CACHE[key] = (k.asm["ttgir"], k.asm["ptx"])
    return _CACHE[key]


@pytest.mark.parametrize("case", CASES)
def test_the_three_ops_of_the_line_are_each_proved(case):
    assert_each_op_proved(*kernel(*case))


def _conversion_load(ttgir: str, ptx: str) -> int:
    """PTX line of one ``ld.shared`` among the accesses the conversion's proof names."""
    ops = _dw_ops(ttgir)
    conv = next(c for c in _smem(ttgir, ptx) if f"ttg.convert_layout (TTGIR line {ops['convert']})" in c.message)
    lines = ptx.splitlines()
    return next(ln for ln in conv.data["instructions"] if "ld.shared" in lines[ln - 1])


@pytest.mark.parametrize("case", CASES)
def test_a_shifted_scratch_load_is_an_error(case):
    ttgir, ptx = kernel(*case)
    at = _conversion_load(ttgir, ptx)
    planted, line = _plant(ptx, re.escape(ptx.splitlines()[at - 1].strip()))
    assert line == at
    got = [c for c in _smem(ttgir, planted) if c.status == "counterexample"
           and (c.line == line or line in c.data.get("instructions", ()))]
    assert got, "planted shift of the conversion's scratch load passed"


@pytest.mark.parametrize("case", CASES)
def test_a_shifted_local_load_is_an_error(case):
    ttgir, ptx = kernel(*case)
    ops = _dw_ops(ttgir)
    first = min(c.line for c in _smem(ttgir, ptx) if f"ttg.local_load (TTGIR line {ops['load']})" in c.message)
    planted, line = _plant(ptx, re.escape(ptx.splitlines()[first - 1].strip()))
    got = [c for c in _smem(ttgir, planted) if c.status == "counterexample"]
    assert got and any(f"(TTGIR line {ops['load']})" in c.message for c in got), [c.message for c in got][:3]
