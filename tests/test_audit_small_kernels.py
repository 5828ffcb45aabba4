"""The shortcuts the PTX audit takes on small kernels read what the long way reads."""
from verilayout.audit.ptx import _MMA_HEADS
from verilayout.audit.ptx_dots import DOT_FAMILIES
from verilayout.frontends.ttgir import _split_counted, _split_top


def test_mma_heads_cover_every_mma_opcode_prefix_and_group_close():
    # ptx_context hands dot_ties only instructions whose first opcode part is in _MMA_HEADS; every
    # prefix mma_groups tests must start with one of them (PTX ISA: the opcode's first dotted part)
    prefixes = [p for _dots, mma, close in DOT_FAMILIES.values() for p in mma + close]
    assert prefixes
    assert all(any(p == h or p.startswith(h + ".") for h in _MMA_HEADS) for p in prefixes)


def _brute_split(text: str, sep: str) -> list[str]:
    """Split at each ``sep`` whose prefix holds as many openers as closers (a ``>`` after ``-``
    closes nothing), scanned character by character: the law of ``_split_top`` without strings."""
    out, cur, depth, i = [], 0, 0, 0
    while i < len(text):
        if depth == 0 and text.startswith(sep, i):
            out.append(text[cur:i])
            i += len(sep)
            cur = i
            continue
        ch = text[i]
        if ch in "([{<":
            depth += 1
        elif ch in ")]}" or (ch == ">" and not (i > 0 and text[i - 1] == "-")):
            depth -= 1
        i += 1
    out.append(text[cur:])
    return out


def test_counted_split_matches_a_character_scan():
    import random
    rnd = random.Random(7)
    alphabet = list("ab<>()[]{}-: ,*") + [" : ", "->", " to ", " * "]
    for _ in range(20000):
        t = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 16)))
        for sep in (",", " : ", " * ", "->", " to "):
            assert _split_counted(t, sep) == _brute_split(t, sep), (t, sep)
            assert _split_top(t, sep) == _brute_split(t, sep), (t, sep)


def test_split_of_an_op_signature():
    body = "%5 = tt.splat %4 : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>, #blocked>"
    assert _split_top(body, " : ") == ["%5 = tt.splat %4", "!tt.ptr<f32> -> tensor<128x!tt.ptr<f32>, #blocked>"]
    assert _split_top("tensor<4xf32, #b>, i32", ",") == ["tensor<4xf32, #b>", " i32"]


def test_loc_sites_found_by_literal_start_as_the_anchored_scan_finds_them():
    # ptx_inline_sites finds `^\s*.loc ...` (multi-line) by searching `.loc` and checking the line
    # start; the anchored expression is the oracle, on texts mixing blank lines, indents, code
    # before a .loc, and inlined_at tails
    import random
    import re
    from verilayout.frontends import prescan
    anchored = re.compile(r"^\s*" + prescan._PTX_LOC_TAIL.pattern, re.M)
    rnd = random.Random(11)
    pieces = ["\n", " ", "\t", ".loc", "1", " 2", " 3", ",", " inlined_at", "x", "\r"]
    for _ in range(20000):
        t = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 24)))
        want = [(m.start(), m.groups()) for m in anchored.finditer(t)]
        got = [(p, m.groups()) for p, m in prescan._at_line_starts(prescan._PTX_LOC_TAIL, t)]
        assert got == want, repr(t)


def test_inline_sites_of_a_small_ptx():
    text = ('.file 1 "/s/k.py"\n.file 2 "/s/lib.py"\n\n\t.loc 1 13 9\n\tadd.s32 %r1, %r2, 1; .loc 1 14 2\n\n'
            '\t.loc\t2 9 26, function_name $L__x, inlined_at 1 13 9\n')
    from verilayout.frontends.prescan import ptx_inline_sites
    # `^\s*` (multi-line) starts each match on the blank line before its .loc (lines 3 and 6); the
    # .loc after code on line 5 begins no line and is not read
    assert ptx_inline_sites(text) == [(3, "k.py:13", None), (6, "lib.py:9", "k.py:13")]


def test_free_symbols_of_random_terms_against_z3_own_walk():
    # the symbols free_symbols finds are the uninterpreted constants z3's own Python walk
    # (z3util.get_vars) finds, on random terms that share subterms
    import random
    import z3
    from z3.z3util import get_vars
    from verilayout.prove.smem_address import free_symbols
    rnd = random.Random(4)
    xs = [z3.BitVec(n, 32) for n in ("tid_x", "smem_base", "p0")]

    def term(d):
        if d == 0 or rnd.random() < 0.3:
            return rnd.choice(xs + [z3.BitVecVal(rnd.randint(0, 9), 32)])
        a, b = term(d - 1), term(d - 1)
        return rnd.choice([a + b, a * b, a & b, a << b, z3.If(a == b, a, b)])
    for _ in range(500):
        t = term(5)
        assert free_symbols(t, {}) == frozenset(str(v) for v in get_vars(t))
