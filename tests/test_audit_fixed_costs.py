"""The audit's per-file work done only where its result is used, with the same results: the
readers of ``frontends/prescan`` against the regular expressions they replace (the oracle: ``re``
on the same text), bounded reads against an unbounded read, call-site chains restricted to some
lines against the whole map, and the Gluon test asked only when a finding can use it."""
from __future__ import annotations

import io
import re

import pytest

from verilayout.audit import paths
from verilayout.audit.inputs import read_bounded
from verilayout.audit.model import Check, FileReport
from verilayout.errors import LayoutError
from verilayout.frontends import prescan

TEXTS = [
    '.file 1 "/a/k.py"\n\n  .file 2 "/b/l.py"\n// .file 3 "c.py"\n.entry k {\n}\n',
    'x.file 1 "a.py"\n.file 2 "b.py"\n',
    '\t.file\t7 "/s/t.py"\r\n .file 8 "u.py"',
    '#loc1 = loc("/s/k.py":9:12)\n#loc2 = loc("/s/k.py":13:9)\n#loc3 = loc("a"(#loc2))\n'
    '#loc4 = loc(callsite(#loc1 at #loc3))\n  %0 = ttg.local_alloc %x : (t) -> m loc(#loc4)\n'
    '  %1 = ttg.local_load %0 : m -> t loc(#loc4)\n  %2 = arith.addf %1, %1 : t loc(#loc1)\n',
    ' x #loc5 = loc("q.py":1:1)\n#loc6 = loc(callsite(#loc5 at #loc5))\n  %0 = a.b loc(#loc6)\n',
    "", "tt.func", "_tt.func @k", "a tt.funcs", "é tt.func", "module {\n  tt.func @k() {\n  }\n}",
]


@pytest.mark.parametrize("text", TEXTS)
def test_prescan_readers_equal_the_anchored_expressions(text):
    anchored_file = re.compile(r'^\s*\.file\s+\d+\s+"([^"\n]*)"', re.M)
    assert prescan.source_files(text, "ptx") == tuple(dict.fromkeys(anchored_file.findall(text)))
    alias = re.compile(r"^\s*#(loc\w*)\s*=\s*(loc\(.*\))\s*$", re.M)
    assert prescan._loc_aliases(text) == {m.group(1): m.group(2) for m in alias.finditer(text)}
    assert prescan._has_word(text, "tt.func") == bool(re.search(r"\btt\.func\b", text))


def test_inline_chains_of_some_lines_are_those_of_the_whole_map():
    text = TEXTS[3]
    whole = prescan.ttgir_inline_chains(text)
    assert whole == {5: ("k.py:13", "k.py:9"), 6: ("k.py:13", "k.py:9")}     # worked out from the locs
    for lines in ({5}, {6, 7}, {1, 99}, set()):
        assert prescan.ttgir_inline_chains(text, lines) == {k: v for k, v in whole.items() if k in lines}


@pytest.mark.parametrize("data", [b"", b"a", b"abc", b"abcd", b"abcdefgh"])
def test_read_bounded_with_any_size_hint_reads_what_an_unhinted_read_does(data):
    def read(size):
        try:
            return read_bounded(io.BytesIO(data), "f", 3, size)
        except LayoutError as e:
            return str(e)
    want = data if len(data) <= 3 else "f: input larger than the 0 MiB limit (read 4 bytes and stopped)"
    for size in (None, -1, 0, 1, 2, 3, 4, 100):   # a stale size (the file grew or shrank) included
        assert read(size) == want


def _report(*checks):
    return FileReport("k.ttgir", "cuda:90", 4, tuple(checks))


def test_gluon_test_is_asked_only_for_a_finding_that_can_use_it():
    asked = []

    def gluon():
        asked.append(1)
        return True
    proved = Check("ttg.local_load", 3, None, "bank-conflicts", "proved", None, "ok", {"shared_layout": "#s"})
    assert paths._with_suggestions(_report(proved), gluon) == _report(proved) and not asked
    best = {"layout": "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>",
            "wavefronts_per_warp": 4, "wavefronts_per_warp_now": 16}
    warn = Check("ttg.local_load", 3, None, "bank-conflicts", "counterexample", "warning", "4-way",
                 {"shared_layout": "#s", "best": best})
    got = paths._with_suggestions(_report(warn), gluon)
    assert asked == [1]
    assert got == paths._with_suggestions(_report(warn), True)      # as if the answer had been given
    assert got.checks[0].data["gluon"] is True and "shared layout is #ttg.swizzled_shared" in \
        got.checks[0].data["suggestion"]


@pytest.mark.parametrize("text", ['"a\\"b"', '"a\\\nb"', '"ab\\', '"a"b"c"', '"\\\\"x"', '"x\n"y"', '""', '"\\',
                                  'loc("/s/k.py":3:1) {a = "x{"}'] + TEXTS)
def test_string_blanking_equals_the_alternation_form(text):
    alternation = re.compile(r'"(?:[^"\\\n]|\\.)*"')
    assert prescan._STRING.sub('""', text) == alternation.sub('""', text)


def test_ptx_sites_up_to_a_line_are_a_prefix_of_all():
    text = ('.file 1 "/s/k.py"\n.loc 1 13 9\nmov.u32 %r1, 0;\n.loc 1 9 26, function_name $L__x, inlined_at 1 13 9\n'
            'add.s32 %r2, %r1, 1;\n.loc 1 20 1\n')
    whole = prescan.ptx_inline_sites(text)
    assert whole == [(2, "k.py:13", None), (4, "k.py:9", "k.py:13"), (6, "k.py:20", None)]   # read off the text
    for last in range(0, 8):
        assert prescan.ptx_inline_sites(text, last) == [s for s in whole if s[0] <= last]
