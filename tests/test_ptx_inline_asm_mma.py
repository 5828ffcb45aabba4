"""MMA instructions issued from inline asm (hand-written CuTe-DSL kernels: tcgen05.mma in an
``llvm.inline_asm`` block) are reported by the PTX audit without a TTGIR: ``unchecked`` with the
reason, never silently skipped (docs/architecture.md: every op a check does not check is still
reported). The PTX below is what LLVM writes for such a block (``// begin inline asm`` ... the asm
string with its operands substituted ... ``// end inline asm``); the instruction is the PTX ISA's
``tcgen05.mma.cta_group::1.kind::f16 [d-tmem], a-desc, b-desc, idesc, enable-input-d``.
"""
from __future__ import annotations

import pytest

from verilayout.audit import audit_ptx_text

HEAD = """.version 8.7
.target sm_100a
.address_size 64
.extern .shared .align 1024 .b8 smem[];
.visible .entry k(.param .u64 a, .param .u64 b, .param .u32 i)
{
.reg .b32 %r<9>;
.reg .b64 %rd<9>;
ld.param.u64 %rd1, [a];
ld.param.u64 %rd2, [b];
ld.param.u32 %r3, [i];
mov.u32 %r2, 0;
// begin inline asm
BODY
// end inline asm
ret;
}
"""
MMA = "tcgen05.mma.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r3, p;"


def _mma_checks(body: str):
    return [c for c in audit_ptx_text(HEAD.replace("BODY", body), "k.ptx").checks if c.op == "tcgen05.mma"]


@pytest.mark.parametrize("body", [
    "{\n.reg .pred p;\nsetp.ne.b32 p, %r3, 0;\n" + MMA + "\n}",
    "tcgen05.mma.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r3, 1;",
])
def test_inline_asm_tcgen05_mma_is_reported_unchecked(body):
    checks = _mma_checks(body)
    assert [(c.status, c.data.get("reason")) for c in checks] == [("unchecked", "no ttgir")]
    assert "tcgen05.mma.cta_group::1.kind::f16" in checks[0].message


# Two inline-asm spellings the PTX reader must read too: a guard on a named predicate (`@p`: inline asm
# declares `.reg .pred p;` without `%`), and a block written on one line (several statements).
@pytest.mark.parametrize("body", [
    "{\n\t.reg .pred p;\n\tsetp.ne.b32 \tp, %r3, 0;\n\t@p " + MMA.replace(", p;", ", 1;") + "\n\t}",
    "{ .reg .pred p; setp.ne.b32 p, %r3, 0; " + MMA + " }",
])
def test_inline_asm_spellings_the_reader_drops_are_still_reported(body):
    checks = _mma_checks(body)
    assert [c.status for c in checks] == ["unchecked"]
