"""The PTX parser's cheaper paths give what the plain readings give: operands decoded when first read
equal the eager decoding, the bracket-only operand split equals a character-by-character split, a
one-function index equals the index built from decoded destinations, and the `.loc` line-start
search equals the anchored multi-line expression it stands for. Oracles are written here."""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from verilayout.frontends import prescan
from verilayout.frontends.ptx import decode_operand, make_instr, parse_ptx, split_operands
from verilayout.hw.nvidia.ptx_model import PredPair, Reg, Vec
from verilayout.prove import ptx_values

ROOT = Path(__file__).resolve().parent
CORPUS = sorted((ROOT / "corpus").glob("*/*.ptx"))[:12]


def _char_split(text: str) -> tuple[str, ...]:
    """Top-level commas found one character at a time (the oracle): a piece between two commas is
    kept even when empty, the last one only when not."""
    out, cur, depth = [], [], 0
    for ch in text:
        depth += (ch in "{[(") - (ch in "}])")
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    last = "".join(cur).strip()
    return tuple(out + [last] if last else out)


def test_split_operands_equals_a_character_split():
    rng = random.Random(7)
    tokens = ["%r1", "%rd2", ",", ", ", " ", "[", "]", "[%rd3+16]", "{", "}", "(", ")", "16", "+4"]
    seen = 0
    for _ in range(20000):
        text = "".join(rng.choice(tokens) for _ in range(rng.randint(1, 10)))
        if not re.search(r"[\[\]{}()]", text):
            continue                    # no bracket: a plain split whose empty pieces are dropped
        seen += 1
        assert split_operands(text) == _char_split(text), text
    assert seen > 5000


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_args_decoded_when_read_equal_the_eager_decoding(path):
    mod = parse_ptx(path.read_bytes())
    assert mod.instrs
    for i in mod.instrs:
        assert "args" not in vars(i)
        eager = make_instr(i.opcode, i.operands, i.line, i.pred, i.loc, i.func)
        assert i.args == tuple(decode_operand(o) for o in i.operands) == eager.args
        assert "args" in vars(i)
        assert (i.parts, i.guard, i.vec) == (eager.parts, eager.guard, eager.vec)
        assert repr(i) == repr(eager)


def _defs_oracle(instrs) -> tuple[dict, dict, dict]:
    """Destinations read from decoded operands: a register, a setp's predicate(s), a vector's lanes."""
    defs: dict = {}
    pdefs: dict = {}
    lane: dict = {}
    for i in instrs:
        if not i.args or i.opcode.startswith(ptx_values.NO_DEST):
            continue
        dest = i.args[0]
        if i.parts[0].startswith("setp"):
            for d in (dest.regs if isinstance(dest, PredPair) else (dest,)):
                if isinstance(d, Reg):
                    pdefs.setdefault(d.name, []).append(i.line)
        elif isinstance(dest, Reg):
            defs.setdefault(dest.name, []).append(i.line)
        elif isinstance(dest, Vec):
            for k, d in enumerate(dest.items):
                if isinstance(d, Reg):
                    defs.setdefault(d.name, []).append(i.line)
                    lane[(i.line, d.name)] = k
    return defs, pdefs, lane


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_function_index_equals_the_decoded_destinations(path):
    mod = parse_ptx(path.read_bytes())
    for func in mod.functions:
        idx = ptx_values._FunctionIndex(mod, func)
        code = [i for i in mod.instrs if i.func == func]
        defs, pdefs, lane = _defs_oracle(code)
        assert {r: [i.line for i in xs] for r, xs in idx.defs.items()} == defs
        assert {r: [i.line for i in xs] for r, xs in idx.pdefs.items()} == pdefs
        assert idx.lane == lane
        assert idx.code == code
        where = [g for g, i in enumerate(mod.instrs) if i.func == func]   # each code entry's module index
        for f, lab, at in mod.labels:       # a label names the first instruction of func at or after it
            if f == func and at < len(mod.instrs):
                after = [k for k, g in enumerate(where) if g >= at]
                assert (after[0] if after else len(code)) in idx.labels[lab]


def test_line_start_search_equals_the_anchored_expression():
    rng = random.Random(11)
    tokens = ["\n", "\n", " ", "\t", ".loc 1 2 3", ".loc 2 9 1, function_name $x, inlined_at 1 4 2", "x", ";",
              "// c", '.file 1 "/a/k.py"']
    anchored = re.compile(prescan._PTX_LOC.pattern, re.M)
    for _ in range(5000):
        text = "".join(rng.choice(tokens) for _ in range(rng.randint(1, 16)))
        got = [(s, m.group(0)) for s, m in prescan._at_line_starts(prescan._PTX_LOC_TAIL, text)]
        want = [(m.start(), m.group(0).lstrip()) for m in anchored.finditer(text)]
        assert got == want, text


def test_ptx_locs_spell_what_the_inline_sites_list_gives():
    text = ('.file 1 "/s/k.py"\n.file 2 "/s/lib.py"\n{\n\t.loc 1 13 9\n\tmov.u32 %r1, 1;\n\n'
            "\t.loc 2 9 26, function_name $L__x, inlined_at 1 13 9\n\tadd.s32 %r2, %r1, 1;\n")
    locs = prescan.PtxLocs(text)
    # written by reading the text: the first .loc on line 4; the second's `^\s*` starts at the blank line 6
    assert locs.lines == [4, 6]
    assert [locs.names(k) for k in range(2)] == [("k.py:13", None), ("lib.py:9", "k.py:13")]
    assert prescan.PtxLocs(text, 5).lines == [4]
