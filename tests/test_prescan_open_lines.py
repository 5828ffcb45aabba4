"""``frontends.prescan``'s test for a PTX line that may start a statement continued over lines
(what ``quiet_ptx`` refuses): its expression is checked against the rule written out here line by
line (a line after a line break whose first non-blank character is a letter or ``@`` and whose
text before its first ``//`` holds no ``;``, ``{`` or ``}``), and against the lazy expression the
module had before its possessive form, on random texts and on every harvested PTX file."""
from __future__ import annotations

import glob
import random
import re

from verilayout.frontends import prescan

#: the expression before its possessive form (kept here as an oracle)
LAZY = re.compile(r"\n[^\S\n]*[a-z@][^;{}\n]*?(?://[^\n]*)?(?:\n|$)")


def open_line(text: str) -> bool:
    """The rule, line by line (ASCII texts)."""
    for line in text.split("\n")[1:]:
        s = line.lstrip(" \t\r\f\v")
        if s[:1] and (s[0].islower() and s[0].isascii() and s[0].isalpha() or s[0] == "@"):
            if not any(ch in s[1:].split("//", 1)[0] for ch in ";{}"):
                return True
    return False


def test_examples():
    assert prescan._PTX_OPEN.search("x\n  add.s32 %r1,\n  %r2, 1;\n")           # continued over lines
    assert prescan._PTX_OPEN.search("x\n\tmov.u32 %r1 // a comment; not the end\n")
    assert not prescan._PTX_OPEN.search("x\n\tmov.u32 %r1, 0; // done\n\t{\n$L__BB0_1:\n.reg .b32 %r<4>;\n")
    assert not prescan._PTX_OPEN.search("ret\n")                                # the first line: no line break before it
    assert prescan._PTX_OPEN.search("x\n@%p1 bra $L__x")                          # the last line, no line break after


def test_random_texts_match_the_rule_and_the_lazy_expression():
    rng = random.Random(7)
    alphabet = "ab@;{}/\n \t%r1,.x"
    for _ in range(60000):
        t = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 16)))
        want = open_line(t)
        assert bool(prescan._PTX_OPEN.search(t)) == want, repr(t)
        assert bool(LAZY.search(t)) == want, repr(t)


def test_harvested_ptx_files_agree():
    files = sorted(glob.glob("/tmp/harvest_corpus/*/*.ptx"))[::7] + sorted(glob.glob("tests/corpus/**/*.ptx", recursive=True))
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as fh:
            t = fh.read()
        assert bool(prescan._PTX_OPEN.search(t)) == bool(LAZY.search(t)), f
