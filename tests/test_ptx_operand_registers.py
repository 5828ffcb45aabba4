"""The register reads of the warp-reduce index without decoding an instruction: the registers named by
each operand's spelling, and one operand decoded alone, equal what the instruction's decoded ``args``
give (the oracle, written here: a Reg operand's name, a Vec's Reg items), on the hand-written corpus,
harvested pairs where present, and spellings built to reach the odd cases (a predicate pair, a vector
holding an immediate, an address)."""
from __future__ import annotations

from pathlib import Path

import pytest

from verilayout.audit import ptx_reductions as red
from verilayout.frontends.ptx import make_instr, operand_registers, parse_ptx
from verilayout.hw.nvidia.ptx_model import Reg, Vec

ROOT = Path(__file__).resolve().parent
CORPUS = sorted((ROOT / "corpus").glob("*/*.ptx"))[:16]
HARVEST = sorted(Path("/tmp/harvest_corpus").glob("cuda90/*.ptx"))[:8]


def _oracle(args: tuple) -> list[tuple[str, ...]]:
    out = []
    for a in args:
        if isinstance(a, Reg):
            out.append((a.name,))
        elif isinstance(a, Vec):
            out.append(tuple(x.name for x in a.items if isinstance(x, Reg)))
        else:
            out.append(())
    return out


@pytest.mark.parametrize("path", CORPUS + HARVEST, ids=lambda p: p.name)
def test_spelled_registers_equal_the_decoded_args(path):
    instrs = parse_ptx(path.read_text()).instrs
    assert instrs
    for ins in instrs:
        got = operand_registers(ins)
        assert "args" not in vars(ins)                 # read from the spelling
        assert [ins.arg(k) for k in range(len(ins.operands))] == list(ins.args)
        assert got == _oracle(ins.args), (path.name, ins.line)


def test_odd_spellings():
    text = (".version 8.7\n.entry f()\n{\nsetp.lt.u32 %p1|%p2, %r1, 4;\nmov.b64 {%r2, 7}, %rd1;\n"
            "ld.shared.b32 %r3, [%r4+8];\n@!%p1 st.shared.v2.b32 [%r5], {%r6, %r7};\n}")
    ins = parse_ptx(text).instrs
    assert [operand_registers(i) for i in ins] == [
        [(), ("%r1",), ()], [("%r2",), ("%rd1",)], [("%r3",), ()], [(), ("%r6", "%r7")]]
    made = make_instr("mov.b64", ("{%r2, 7}", "%rd1"), 5)     # args decoded at construction
    assert operand_registers(made) == [("%r2",), ("%rd1",)]


def test_index_reads_and_writes_from_spellings():
    text = (".version 8.7\n.entry f()\n{\nmov.b64 {%r2, %r3}, %rd1;\nadd.s32 %r4, %r2, %r3;\n"
            "@%p1 st.shared.b32 [%r5], %r4;\nshfl.sync.bfly.b32 %r6, %r4, 16, 31, -1;\n}")
    instrs = list(parse_ptx(text).instrs)
    defs, uses = red._index(instrs)
    lines = {k: [i.line for i in v] for k, v in defs.items()}
    assert lines == {"%r2": [4], "%r3": [4], "%r4": [5], "%r6": [7]}
    assert [i.line for i in uses["%r4"]] == [6, 7] and [i.line for i in uses["%p1"]] == [6]
    assert "%r5" not in uses                               # an address's base is no operand register
    assert [i.line for i in uses.shuffles] == [7] and [i.line for i in uses.shared] == [6]
    assert not any("args" in vars(i) for i in instrs)      # the index decoded no instruction
    assert red._dests(instrs[0]) == ["%r2", "%r3"] and red._reads(instrs[2]) == ["%r4", "%p1"]
    assert all(i.args for i in instrs)                     # every instruction decoded now
    again = red._index(instrs)                             # the same from decoded args
    assert again == (defs, uses) and again[1].shuffles == uses.shuffles and again[1].shared == uses.shared


@pytest.mark.parametrize("text", ["{%r1, %r2}", "{%r1,%r2,,%r3}", "{ %f1 , 0f3F800000, _ }", "{%r1, 4U, -2}",
                                  "{%r1, [%rd2+4]}", "{{%r1, %r2}, %r3}", "{}", "{%r9"])
def test_flat_vector_decodes_as_its_split_items(text):
    from verilayout.frontends.ptx import decode_operand, split_operands
    inner = text[1:-1] if text.endswith("}") else text[1:]
    want = tuple(decode_operand.__wrapped__(x) for x in split_operands(inner))    # the oracle: item by item
    assert decode_operand.__wrapped__(text) == Vec(want)
