"""The PTX reader's one-match path for common lines (a plain instruction, a ``.loc``, a debug
section's ``.b8`` data) reads each line as the PTX ISA's statement syntax says (section 4.3
"Statements": an optional ``@p`` guard, the opcode, comma-separated operands, ``;``; ``//`` comments
run to the end of the line), and never takes a line its general path treats otherwise (labels,
several statements on one line, a ``.branchtargets`` list continued on the next lines)."""
from verilayout.frontends.ptx import parse_ptx

HEAD = '.version 8.7\n.target sm_90a\n.file 1 "/src/k.py"\n.visible .entry f()\n{\n'


def _instrs(body: str):
    return [(i.opcode, i.operands, i.line, i.pred, i.loc) for i in parse_ptx(HEAD + body + "}\n").instrs]


def test_plain_lines_comments_crlf_and_guards():
    body = ("\t.loc\t1 7 3\n"                                   # line 6
            "\tadd.s32 \t%r1, %r2, 16;   // a comment; with ; inside\n"
            "@!%p1 ld.shared.v2.b32 {%r3, %r4}, [%r5+8];\r\n"
            "  ret;\n"
            "\tmov.u32 %r6, %r7 ;\n")
    assert _instrs(body) == [
        ("add.s32", ("%r1", "%r2", "16"), 7, None, "k.py:7"),
        ("ld.shared.v2.b32", ("{%r3, %r4}", "[%r5+8]"), 8, "!%p1", "k.py:7"),
        ("ret", (), 9, None, "k.py:7"),
        ("mov.u32", ("%r6", "%r7"), 10, None, "k.py:7"),
    ]


def test_labels_and_one_line_blocks_are_still_read():
    body = ("$L__BB0_1:\n"                                    # line 6
            "lbl: add.s32 %r1, %r1, 1;\n"
            "{ .reg .pred p; setp.ne.b32 p, %r1, 0; @p bra lbl; }\n")
    m = parse_ptx(HEAD + body + "}\n")
    assert [(i.opcode, i.line, i.pred) for i in m.instrs] == [("add.s32", 7, None), ("setp.ne.b32", 8, None),
                                                             ("bra", 8, "p")]
    assert m.labels == (("f", "$L__BB0_1", 0), ("f", "lbl", 0))


def test_branch_target_lines_and_debug_data_are_no_instructions():
    body = ("ts:\n"                                          # line 6
            ".branchtargets\n"
            "    lab1,\n"
            "    lab2;\n"
            "lab1: ret;\n"
            "lab2: ret;\n")
    tail = "}\n.section .debug_abbrev\n{\n.b8 1  // Abbreviation Code\n.b32 187\n}\n"
    m = parse_ptx(HEAD + body + tail)
    assert m.branch_tables == (("f", "ts", ("lab1", "lab2")),)
    assert [(i.opcode, i.line) for i in m.instrs] == [("ret", 10), ("ret", 11)]
