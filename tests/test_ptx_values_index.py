"""The value tracker's per-function index (``prove.ptx_values._FunctionIndex``), read off a small
PTX text by hand: which lines define each register (PTX ISA: the first operand of an instruction
that writes one is its destination; ``st``, ``bar``, ``ret`` write none; ``setp`` writes a
predicate; ``mov.b64 {a, b}, x`` writes both halves), and the index shared by two evaluators of
the same function."""
from __future__ import annotations

from verilayout.frontends.ptx import parse_ptx
from verilayout.prove.ptx_values import PtxValues

PTX = """.version 8.7
.visible .entry f()
{
mov.u32 %r1, 5;
setp.lt.u32 %p1, %r1, 7;
mov.b64 {%r2, %r3}, %rd1;
st.shared.u32 [%r1], %r2;
add.u32 %r1, %r1, 1;
bar.sync 0;
ret;
}
"""


def test_definitions_by_hand():
    mod = parse_ptx(PTX)
    ev = PtxValues(mod, "f")
    lines = {name: [i.line for i in ds] for name, ds in ev.defs.items()}
    assert lines == {"%r1": [4, 8], "%r2": [6], "%r3": [6]}
    assert {name: [i.line for i in ds] for name, ds in ev.pdefs.items()} == {"%p1": [5]}
    assert ev.lane == {(6, "%r2"): 0, (6, "%r3"): 1}
    assert [i.line for i in ev.code] == [4, 5, 6, 7, 8, 9, 10]


def test_two_evaluators_share_the_index_and_stay_apart():
    mod = parse_ptx(PTX)
    a, b = PtxValues(mod, "f", first_iteration=True), PtxValues(mod, "f")
    assert a.defs is b.defs and a.code is b.code
    a.reg("%r1")
    assert b.memo == {} and a.memo != {}          # each evaluator's values are its own
    other = PtxValues(parse_ptx(PTX), "f")          # another module: its own index
    assert other.defs is not a.defs


def test_redux_writes_its_destination_and_red_writes_none():
    """PTX ISA, parallel synchronization and communication instructions: ``redux.sync d, a, membermask``
    writes the register ``d``; ``red{.sem}{.scope}{.space}.op.type [a], b`` writes none (its first
    operand is an address).
    The opcode prefixes of the instructions without a destination must not take ``redux`` for ``red``."""
    mod = parse_ptx(""".version 8.7
.visible .entry f()
{
mov.u32 %r1, 5;
redux.sync.add.s32 %r2, %r1, -1;
red.shared.add.u32 [%r1], %r2;
red.global.add.u32 [%rd1], %r1;
ret;
}
""")
    ev = PtxValues(mod, "f")
    assert {name: [i.line for i in ds] for name, ds in ev.defs.items()} == {"%r1": [4], "%r2": [5]}
