"""Addresses as core + constant (verilayout.prove.smem_address).

Oracles: z3 proves ``core + c == e`` for every value of the symbols; the threads' offsets are
compared with the address evaluated thread by thread (z3's own evaluation of the term, one
thread at a time), and thread 0's address with z3's simplification of the whole term.
"""
import z3

from verilayout.audit.ptx_smem import lane_byte_offsets, thread_offsets
from verilayout.frontends.ptx import parse_ptx
from verilayout.prove.ptx_values import SMEM, TID, PtxValues
from verilayout.prove.smem_address import address_parts, at_thread_zero, core_at_zero, split_constant

STAGE = z3.BitVec("stage", 32)


def _terms():
    swz = ((TID & 7) ^ ((TID >> 3) & 7)) << 4
    return [SMEM + swz + 1024, (SMEM + swz) + 16 + 4096, 2048 + (SMEM + STAGE * 8192 + swz), SMEM + swz,
            z3.BitVecVal(64, 32) + (TID << 2), (TID * 4 + 16) - 16, SMEM + 0xFFFFFFF0]


def test_core_plus_constant_is_the_address():
    for e in _terms():
        core, c = split_constant(e)
        assert 0 <= c < 1 << 32
        s = z3.Solver()
        s.add(core + c != e)
        assert s.check() == z3.unsat


def test_constants_are_read_off_the_top():
    x = z3.BitVec("x", 32)
    assert split_constant(x + 1024)[1] == 1024
    assert split_constant((x + 16) + 4096)[1] == 4112
    assert split_constant(x * 3)[1] == 0 and split_constant(x * 3)[0].eq(x * 3)
    assert split_constant(x + 0xFFFFFFFF + 1)[1] == 0        # sums wrap modulo 2**32


def test_thread_zero_address_equals_simplifying_the_whole_term():
    memo: dict = {}
    for e in _terms():
        for imm in (0, 16, -16, 4096):
            core, c = address_parts(e, memo)
            got = at_thread_zero(core_at_zero(core, memo), (c + imm) % (1 << 32))
            want = z3.simplify(z3.substitute(e, (TID, z3.BitVecVal(0, 32))) + imm)
            assert got.eq(want), (e, imm, got, want)


def _ptx(lines):
    return parse_ptx(".version 8.7\n.visible .entry f()\n.reqntid 64\n{\n" + "\n".join(lines) + "\nret;\n}")


def test_offsets_of_copies_a_constant_apart_are_the_threads_own():
    m = _ptx(["mov.u32 %r1, %tid.x;", "mov.u32 %r2, global_smem;", "and.b32 %r3, %r1, 7;",
              "shr.u32 %r4, %r1, 3;", "xor.b32 %r5, %r3, %r4;", "shl.b32 %r6, %r5, 4;",
              "add.s32 %r7, %r2, %r6;", "add.s32 %r8, %r7, 1024;", "add.s32 %r9, %r8, 2048;",
              "ld.shared.v4.b32 {%r10, %r11, %r12, %r13}, [%r9];"])
    ev = PtxValues(m, "f")
    memo: dict = {}
    for reg in ("%r7", "%r8", "%r9"):
        ins = m.instrs[-2]
        op = next(i.args[0] for i in m.instrs if i.args and getattr(i.args[0], "name", "") == reg)
        offs = lane_byte_offsets(ev, op, ins, memo, 64)
        e = ev.reg(reg)
        at = [z3.simplify(z3.substitute(e, (TID, z3.BitVecVal(t, 32)))) for t in range(64)]
        want = [z3.simplify(a - at[0]) for a in at]
        want = [w.as_long() - (1 << 32) if w.as_long() >= 1 << 31 else w.as_long() for w in want]
        assert offs == want, reg
        zero, offs2 = thread_offsets(ev, ins, op, 64, memo)
        assert offs2 == want and zero.eq(z3.simplify(at[0]))


def _at(e, t):
    return z3.simplify(z3.substitute(e, (TID, z3.BitVecVal(t, 32)))).as_long()


def test_thread_part_is_what_moves_with_the_thread():
    from verilayout.prove.smem_address import thread_part
    swz = ((TID & 7) ^ ((TID >> 3) & 7)) << 4
    cores = [SMEM + swz, (SMEM + (TID & 3) * 4) + ((TID >> 2) << 7) + STAGE * 8192, swz, SMEM + STAGE]
    for core in cores:
        parts = thread_part(core, {})
        assert parts is not None
        for t in range(0, 256, 7):                    # z3 proves the law at each thread
            moved = sum((_at(p, t) - _at(p, 0) for p in parts), 0) if parts else 0
            s = z3.Solver()
            s.add(z3.substitute(core, (TID, z3.BitVecVal(t, 32))) - z3.substitute(core, (TID, z3.BitVecVal(0, 32)))
                  != z3.BitVecVal(moved % (1 << 32), 32))
            assert s.check() == z3.unsat


def test_thread_part_refuses_a_thread_mixed_with_another_symbol():
    from verilayout.prove.smem_address import thread_part
    assert thread_part(SMEM + TID * STAGE, {}) is None
    assert thread_part((SMEM + TID) * 4, {}) is None


def test_free_symbols():
    from verilayout.prove.smem_address import free_symbols
    assert free_symbols(SMEM + (TID << 2) + STAGE, {}) == {"smem_base", "tid_x", "stage"}
    assert free_symbols(z3.BitVecVal(3, 32) + 4, {}) == frozenset()
