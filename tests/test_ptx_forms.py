"""Register forms over the threads (``prove.ptx_forms``) against the z3 path they stand in for, and
against per-thread values written here.

The oracle of the corpus tests is the z3 path of ``audit.ptx_smem`` (the tracker's term of each
shared-memory address, its thread offsets found by z3's simplifier and the z3-to-numpy
evaluator, and each guard's term evaluated per thread): where a form is known its answers must be
exactly those; where it is not, the audit asks z3 (so the coverage is asserted too, else the cheap
path could silently never be taken). The hand-written kernels check the values themselves against
arithmetic written in the test (the PTX ISA's ``shl``/``and``/``xor``/``shr``/``mad``).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from verilayout.audit import ptx_smem
from verilayout.frontends.ptx import parse_ptx
from verilayout.prove.ptx_forms import CONST, FREE, SUM, THREAD, Form
from verilayout.prove.ptx_values import PtxValues

CORPUS = Path(__file__).parent / "corpus"


def _kernel(body: str, threads: int = 128) -> object:
    return parse_ptx(f".version 8.7\n.visible .entry f()\n.reqntid {threads}\n{{\n{body}\n}}")


def _z3_offsets(ev: PtxValues, base, ins, n: int) -> list[int] | None:
    """The z3 path's offsets (the audit's own fallback)."""
    e = ev.operand(base, 32, at=ins)
    return None if e is None else ptx_smem._expr_offsets(e, {}, n)


def _z3_guard(ev: PtxValues, ins, n: int) -> tuple[list[bool], str]:
    p = ev.pred(ins.guard)
    try:
        return ptx_smem._thread_array(p, {}, n).astype(bool).tolist(), "evaluated"
    except (ValueError, AttributeError):
        return [True] * n, "free"


def _accesses(mod):
    for ins in mod.instrs:
        acc = ptx_smem.smem_access(ins)
        if acc is None or len(ins.args) <= acc[1]:
            continue
        a = ins.args[acc[1]]
        if isinstance(a, ptx_smem.Addr) and a.modelled:
            yield ins, a


def _compare(mod) -> tuple[int, int]:
    """Every shared-memory access of ``mod`` (both evaluators the audit builds): the form's offsets
    and guard equal the z3 path's; ``(accesses, accesses with a form)``."""
    seen = known = 0
    for first in (True, False):
        for func in mod.functions:
            z, f = PtxValues(mod, func, first_iteration=first), PtxValues(mod, func, first_iteration=first)
            forms = f.forms()
            n = 32 * max(1, (mod.threads_of(func) or 32) // 32)
            for ins, addr in _accesses(mod):
                if ins.func != func:
                    continue
                seen += 1
                got = forms.operand(addr.base, 32, at=ins)
                if isinstance(got, Form):
                    known += 1
                    assert forms.offsets(got, n) == _z3_offsets(z, addr.base, ins, n), (ins.line, got.kind)
                if ins.pred is not None:
                    g = forms.guard(ins.guard, n)
                    if g is not None:
                        assert g == _z3_guard(z, ins, n), ins.line
    return seen, known


@pytest.mark.parametrize("target", ["cuda80", "cuda90", "cuda100"])
def test_forms_agree_with_the_z3_path_on_the_corpus(target):
    files = sorted((CORPUS / target).glob("*.ptx"))[::3]
    assert files
    seen = known = 0
    for p in files:
        s, k = _compare(parse_ptx(p.read_text()))
        seen, known = seen + s, known + k
    assert seen > 100
    assert known >= 0.9 * seen, (known, seen)      # the cheap path is the common one


def test_a_swizzled_address_per_thread():
    """``smem + ((t & 7) ^ ((t >> 3) & 7)) * 16 + (t >> 6) * 1024``: a SUM whose offsets are
    computed here per thread."""
    mod = _kernel("mov.u32 %r1, %tid.x;\nand.b32 %r2, %r1, 7;\nshr.u32 %r3, %r1, 3;\nand.b32 %r4, %r3, 7;\n"
                  "xor.b32 %r5, %r2, %r4;\nshl.b32 %r6, %r5, 4;\nshr.u32 %r7, %r1, 6;\n"
                  "mad.lo.s32 %r8, %r7, 1024, %r6;\nmov.u32 %r9, global_smem;\nadd.s32 %r10, %r9, %r8;\n"
                  "ld.shared.v4.b32 {%r11, %r12, %r13, %r14}, [%r10+64];\nret;")
    ev = PtxValues(mod, "f")
    ins, addr = next(_accesses(mod))
    f = ev.forms().operand(addr.base, 32, at=ins)
    want = [(((t & 7) ^ ((t >> 3) & 7)) * 16 + (t >> 6) * 1024) for t in range(128)]
    assert f.kind == SUM
    assert ev.forms().offsets(f, 128) == [w - want[0] for w in want]
    assert ptx_smem.lane_byte_offsets(ev, addr.base, ins, {}, 128) == [w - want[0] for w in want]


def test_kinds_and_what_is_left_to_z3():
    mod = _kernel("mov.u32 %r1, %tid.x;\nld.param.u32 %r2, [f_param_0];\nmul.lo.s32 %r3, %r1, %r2;\n"
                  "add.s32 %r4, %r2, 8;\nmov.u32 %r5, 4;\nadd.s32 %r6, %r5, 4;\nbfe.u32 %r7, %r1, %r6, 2;\n"
                  "bfe.u32 %r8, %r1, 4, 2;\nmov.u32 %r9, 0;\nL:\nadd.s32 %r9, %r9, 16;\nbra L;\nret;")
    ev = PtxValues(mod, "f")
    fs, last = ev.forms(), mod.instrs[-1]
    kinds = {r: (f.kind if f is not None else None) for r in ("%r1", "%r2", "%r3", "%r4", "%r6", "%r7", "%r8")
             for f in [fs.reg(r, at=last)]}
    # %tid.x times a loaded value mixes a symbol into a product: not a form (z3 decides)
    assert kinds == {"%r1": THREAD, "%r2": FREE, "%r3": None, "%r4": FREE, "%r6": CONST,
                     "%r7": FREE,     # bfe at a position that is no numeral: the tracker's free symbol
                     "%r8": THREAD}
    assert fs.reg("%r6", at=last).value == 8 and fs.reg("%r6", at=last).literal is False
    assert fs.reg("%r8", at=last).vec[:64:8].tolist() == [(t >> 4) & 3 for t in range(0, 64, 8)]
    assert fs.reg("%r9", at=mod.instrs[-2]).kind == FREE                  # loop-carried
    assert fs.reg("%r1") is fs.reg("%r1", at=last)                        # one object per form


def test_a_guard_per_thread_and_a_free_one():
    mod = _kernel("mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 40;\nld.param.u32 %r2, [f_param_0];\n"
                  "setp.lt.u32 %p2, %r1, %r2;\nshl.b32 %r3, %r1, 2;\n@%p1 st.shared.b32 [%r3], %r1;\n"
                  "@!%p1 st.shared.b32 [%r3], %r1;\n@%p2 st.shared.b32 [%r3], %r1;\nret;", threads=64)
    ev = PtxValues(mod, "f")
    stores = [i for i, _ in _accesses(mod)]
    assert ev.forms().guard(stores[0].guard, 64) == ([t < 40 for t in range(64)], "evaluated")
    assert ev.forms().guard(stores[1].guard, 64) == ([t >= 40 for t in range(64)], "evaluated")
    assert ev.forms().guard(stores[2].guard, 64) == ([True] * 64, "free")
    assert ptx_smem.thread_guard(ev, stores[0], {}, 64)[0] == [t < 40 for t in range(64)]
