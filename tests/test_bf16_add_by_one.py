"""A bf16 ``tl.sum`` on sm_80 whose thread's own value LLVM folded to a constant (liger-kernel 0.8.5's
``_rms_norm_forward_fused_2d``, Triton 3.9, cuda:80, ``tests/sweep_pairs/cuda80``): below sm_90 PTX has
no ``add.bf16`` (PTX ISA 9.7.4, half precision ``add{.rnd}.bf16``: requires sm_90), so Triton writes a
bf16 ``arith.addf`` as ``fma.rn.bf16 d, a, 1.0, b``. Where the reduced register is the constant 0 (``mov.b32 %r33, 0``), LLVM
passes the shuffled value as the multiplicand and the constant as the addend:
``fma.rn.bf16 %rs58, %rs56, %rs47, %rs57`` with ``%rs47 = 0x3F80`` (1.0) and ``%rs57 = 0x0000``. The audit
took only an ``fma`` whose addend is the shuffled value for an ``add`` and reported an error on a correct
kernel; an ``fma`` of the shuffled value by a register holding 1.0 of the element type is now an add.

Oracle: the bf16 bit pattern of 1.0 (sign 0, exponent 127, mantissa 0: 0x3F80), the released compiler's
output taken as correct, and planted faults at the same instruction that must stay errors (the shuffled
value squared; a multiply instead of the add).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from audited import audit_pair

PAIR = Path(__file__).parent / "sweep_pairs" / "cuda80" / "liger-kernel___rms_norm_forward_fused_2d"
LINE = 268          # fma.rn.bf16 %rs58, %rs56, %rs47, %rs57 (shuffled value * 1.0 + constant 0)
FMA = "fma.rn.bf16 \t%rs58, %rs56, %rs47, %rs57;"


def _texts() -> tuple[str, str]:
    return PAIR.with_suffix(".ttgir").read_text(), PAIR.with_suffix(".ptx").read_text()


def _reduce_checks(ptx: str) -> list:
    ttgir, _ = _texts()
    return [c for c in audit_pair(ttgir, ptx, "k").checks if c.check == "warp-reduce"]


def test_the_pair_is_what_this_test_assumes():
    _, ptx = _texts()
    lines = ptx.splitlines()
    assert lines[LINE - 1].strip() == FMA
    assert "mov.b16 \t%rs47, 0x3F80;" in ptx and "mov.b16 \t%rs57, 0x0000;" in ptx
    assert int("3F80", 16) == (127 << 7)                       # bf16 1.0: exponent 127, mantissa 0


def test_no_error_on_the_compiled_kernel():
    _, ptx = _texts()
    checks = _reduce_checks(ptx)
    assert checks and not [c.message for c in checks if c.status == "counterexample"]
    assert any(c.status == "proved" and "TTGIR line 73" in c.message for c in checks)


@pytest.mark.parametrize("planted", ["fma.rn.bf16 \t%rs58, %rs56, %rs56, %rs57;",     # squared
                                     "mul.rn.bf16 \t%rs58, %rs56, %rs47;"])            # no add
def test_a_wrong_combine_at_that_line_is_an_error(planted):
    _, ptx = _texts()
    lines = ptx.splitlines()
    lines[LINE - 1] = "\t" + planted
    checks = _reduce_checks("\n".join(lines))
    assert any(c.status == "counterexample" and c.line == LINE for c in checks), \
        [(c.line, c.status, c.message[:120]) for c in checks if c.status != "proved"]
