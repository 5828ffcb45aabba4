"""The typed PTX module (``hw/nvidia/ptx_model``, built by ``frontends/ptx``): every operand of the
corpus decoded once, checked against independent readings of its spelling (Python's own integer
and IEEE-754 readers, a separate address pattern), and hand-derived examples from the PTX ISA's
operand syntax (section "Instruction Operands": ``[reg+imm]`` addresses, ``{...}`` vectors,
``0f``/``0d`` float immediates as their bit patterns)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from verilayout.frontends.ptx import decode_operand, make_instr, parse_ptx
from verilayout.hw.nvidia.ptx_model import Addr, Imm, Other, Pred, PredPair, Reg, Sym, Vec

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted((ROOT / "tests" / "corpus").rglob("*.ptx"))


def _int_oracle(t: str) -> int | None:
    """PTX integer literals read by Python's int() (PTX writes octal as ``017``, Python ``0o17``)."""
    m = re.fullmatch(r"([+-]?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]+|[1-9]\d*|0)[uU]?", t)
    if not m:
        return None
    body = m.group(2)
    v = int("0o" + body[1:], 0) if re.fullmatch(r"0[0-7]+", body) else int(body, 0)
    return -v if m.group(1) == "-" else v


def _float_bits(t: str) -> int | None:
    """``0fXXXXXXXX`` / ``0dXXXXXXXXXXXXXXXX``: the IEEE-754 word as its big-endian bytes say."""
    m = re.fullmatch(r"0[fF]([0-9a-fA-F]{8})|0[dD]([0-9a-fA-F]{16})", t)
    if not m:
        return None
    return int.from_bytes(bytes.fromhex(m.group(1) or m.group(2)), "big")


@pytest.mark.parametrize("path", CORPUS, ids=[str(p.relative_to(ROOT / "tests" / "corpus")) for p in CORPUS])
def test_every_corpus_operand_agrees_with_an_independent_reading(path):
    mod = parse_ptx(path.read_text())
    for i in mod.instrs:
        assert len(i.args) == len(i.operands) and i.parts == tuple(i.opcode.split("."))
        for text, a in zip(i.operands, i.args):
            if "|" in text:
                assert isinstance(a, PredPair) and [r.name for r in a.regs] == text.split("|")
            elif text.startswith("%"):
                assert a == Reg(text)
            elif text.startswith("{"):
                want = [x.strip() for x in text[1:-1].split(",") if x.strip()]
                assert isinstance(a, Vec) and len(a.items) == len(want)
            elif text.startswith("["):
                m = re.fullmatch(r"\[\s*(%\w+|\w+)\s*(?:\+\s*(-?\w+))?\s*\]", text)
                assert isinstance(a, Addr) and (m is None) == (not a.modelled), text
                if m and m.group(1).startswith("%"):
                    assert a.base == Reg(m.group(1))
                    assert a.offset == (_int_oracle(m.group(2)) if m.group(2) else 0), text
            elif _float_bits(text) is not None:
                assert a == Imm(_float_bits(text), True), text
            elif _int_oracle(text) is not None:
                assert a == Imm(_int_oracle(text)), text
            else:
                assert isinstance(a, (Sym, Other)), text
        if i.pred is not None:
            assert i.guard == Pred(i.pred.lstrip("!"), i.pred.startswith("!"))


def test_hand_derived_examples_from_the_ptx_isa_operand_syntax():
    i = make_instr("ld.shared.v4.b32", ("{%r1, %r2, %r3, %r4}", "[%r5+32]"), 3, pred="!%p2")
    assert i.vec == 4 and i.head == "ld" and i.guard == Pred("%p2", True)
    assert i.args[0] == Vec((Reg("%r1"), Reg("%r2"), Reg("%r3"), Reg("%r4")))
    assert i.args[1] == Addr(Reg("%r5"), 32, "32")
    assert decode_operand("0f3F800000") == Imm(0x3F800000, True)        # 1.0f: sign 0, exponent 127
    assert decode_operand("0d3FF0000000000000") == Imm(0x3FF0000000000000, True)   # 1.0: exponent 1023
    assert decode_operand("-0x10") == Imm(-16) and decode_operand("017") == Imm(15) and decode_operand("4U") == Imm(4)
    assert decode_operand("[global_smem+-64]") == Addr(Sym("global_smem"), -64, "-64")
    assert decode_operand("[%r1+%r2]").modelled is False                 # not a PTX address form
    assert decode_operand("[%rd1+off]") == Addr(Reg("%rd1"), None, "off")   # offset not an immediate
    assert decode_operand("%p1|%p2") == PredPair((Reg("%p1"), Reg("%p2")))
    assert decode_operand("$L__BB0_2") == Sym("$L__BB0_2")


def test_the_evaluator_imports_no_text_reader():
    # prove/ptx_values evaluates the typed model: it imports nothing of verilayout.frontends
    tree = ast.parse((ROOT / "verilayout" / "prove" / "ptx_values.py").read_text())
    mods = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    mods += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in mods if m and m.startswith("verilayout.frontends")], mods


def test_decoded_operands_evaluate():
    import z3
    from verilayout.prove.ptx_values import SMEM, PtxValues
    m = parse_ptx(".version 8.7\n.entry f()\n{\nmov.u32 %r1, global_smem;\nadd.s32 %r2, %r1, 0x10;\n"
                  "mov.b64 %rd1, {%r1, %r2};\n}")
    v = PtxValues(m, "f")
    add, pack = m.instrs[1], m.instrs[2]
    # SMEM + 16 by hand: add.s32 of the base and 0x10; the pack {lo, hi}: hi * 2^32 + lo
    assert z3.simplify(v.operand(add.args[0], 32) - (SMEM + 16)).as_long() == 0
    lo = z3.ZeroExt(32, SMEM)
    assert z3.simplify(v.operand(pack.args[1], 64) - (lo + (z3.ZeroExt(32, SMEM + 16) << 32))).as_long() == 0
