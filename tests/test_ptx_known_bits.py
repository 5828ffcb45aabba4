"""audit.ptx_known_bits: every bit the analysis calls known has that value under every assignment
of the symbols (checked by enumerating all assignments of small random terms), and a term whose
bits are all known is the constant brute force finds."""
import random

import z3

from verilayout.audit.ptx_known_bits import known_bits, known_constant

W = 4
X, Y = z3.BitVec("x", W), z3.BitVec("y", W)


def _term(rng: random.Random, depth: int) -> z3.BitVecRef:
    """A random width-W term over x, y and constants, of the operators the analysis reads and
    some it does not (mul, sub, ashr)."""
    if depth == 0 or rng.random() < 0.2:
        return rng.choice([X, Y, z3.BitVecVal(rng.randrange(1 << W), W)])
    a, b = _term(rng, depth - 1), _term(rng, depth - 1)
    op = rng.randrange(11)
    if op == 0:
        return a & b
    if op == 1:
        return a | b
    if op == 2:
        return a + b
    if op == 3:
        return z3.ZeroExt(2, z3.Extract(W - 3, 0, a))
    if op == 4:
        return z3.Extract(W + 1, 2, z3.Concat(a, b))
    if op == 5:
        return a << rng.randrange(W + 1)
    if op == 6:
        return z3.LShR(a, rng.randrange(W + 1))
    if op == 7:
        return z3.If(z3.ULT(a, b), a, b)
    if op == 8:
        return a * b
    if op == 9:
        return a - b
    return a >> rng.randrange(W)


def _values(e: z3.BitVecRef) -> list[int]:
    """``e`` at every assignment of x and y (brute force, z3's own evaluation)."""
    out = []
    for x in range(1 << W):
        for y in range(1 << W):
            v = z3.simplify(z3.substitute(e, (X, z3.BitVecVal(x, W)), (Y, z3.BitVecVal(y, W))))
            out.append(v.as_long())
    return out


def test_known_bits_hold_for_every_assignment():
    rng = random.Random(7)
    constants = 0
    for _ in range(60):
        e = _term(rng, 3)
        zeros, ones = known_bits(e)
        assert zeros & ones == 0
        vals = _values(e)
        assert all(v & zeros == 0 and v & ones == ones for v in vals), e
        c = known_constant(e)
        if c is not None:
            constants += 1
            assert set(vals) == {c}, e
    assert constants > 0                     # the random terms reach the constant case too


def test_descriptor_fields_are_one_constant():
    # Triton's wgmma descriptor: (start >> 4 over 14 bits, plus an offset) OR-ed with the fields;
    # the field bits 16-63 are the constant whatever the shared-memory base and loop index
    smem, i = z3.BitVec("smem", 32), z3.BitVec("i", 32)
    start = z3.ZeroExt(17, z3.Extract(18, 4, smem + (i << 12))) + 0x80
    desc = z3.ZeroExt(32, start) | 0x4000004000000000
    assert known_constant(desc & 0xFFFFFFFFFFFF0000) == 0x4000004000000000
    assert known_constant(desc & 0xFFFF) is None          # the start field depends on the base


def test_shared_memo_keeps_the_plain_walks_answers_and_size_limit():
    """The process-wide memo answers as a fresh walk of each term alone (``_Walk``): terms that
    share subterms, a DAG far smaller than its tree (x + x, 30 times: 31 distinct nodes, 2**30
    paths), and a sum of just under / over ``MAX_NODES`` distinct nodes after half of it was memoised."""
    from verilayout.audit import ptx_known_bits as kb

    def plain(e):
        try:
            return kb._Walk(e.ctx.ref()).node(e.as_ast())
        except kb._TooLarge:
            return None

    x, y = z3.BitVec("mx", 32), z3.BitVec("my", 32)
    base = z3.ZeroExt(20, z3.Extract(15, 4, x)) << 4
    terms = [(base + (k << 8)) | 0x40000000 for k in range(8)] + [base & y, z3.LShR(base, 3) + y]
    d = z3.ZeroExt(28, z3.Extract(3, 0, x))
    for _ in range(30):
        d = d + d
    terms.append(d)
    for e in terms:
        assert known_bits(e) == plain(e)
    leaves = [z3.BitVec(f"c{i}", 32) & 0xF0 for i in range(1500)]   # 2 new nodes each, 0xF0 shared

    def tree(xs):
        return xs[0] if len(xs) == 1 else tree(xs[:len(xs) // 2]) + tree(xs[len(xs) // 2:])

    left = tree(leaves[:1024])
    assert known_bits(left) == plain(left) is not None
    for n in (1365, 1366, 1500):               # 3 n distinct nodes: 4095, 4098 (the plain walk
        e = left + tree(leaves[1024:n])        # counts finished nodes: still walked), 4500 (too large)
        assert known_bits(e) == plain(e)
        assert (plain(e) is None) == (n == 1500)
