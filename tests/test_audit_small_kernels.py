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
