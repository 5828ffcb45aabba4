"""verilayout.prove.z3_api's term builders against the z3 binding's own spelling of the same operations: z3
hash-conses the terms of a context, so the C-API builds must give the very term (same id) the
binding's ``simplify(a + c)``, ``simplify(a - b)`` and ``simplify(substitute(t, (x, 0)))`` give,
wrapped in the same Python class."""
import random

import z3

from verilayout.prove.z3_api import at_zero_simplified, minus_simplified, plus_simplified

X, Y = z3.BitVec("x", 32), z3.BitVec("y", 32)


def _terms() -> list[z3.BitVecRef]:
    """Address-like terms (shifts, XOR swizzles, masks, concatenations, sums) and two values."""
    rng = random.Random(7)
    out = [X, X + 4, X * 16 + 1024 + Y, (X & 7) ^ ((X >> 3) & 7), z3.Concat(z3.Extract(31, 4, X), z3.BitVecVal(0, 4)),
           X | 12, (X ^ Y) + 8, z3.BitVecVal(7, 32), z3.BitVecVal(0, 32), z3.LShR(X, 2) * 128 + (Y << 4)]
    for _ in range(20):
        t = X
        for _ in range(3):
            k = rng.randrange(1 << 12)
            t = rng.choice([t + k, t * (k | 1), t ^ k, (t & k) + Y, t << (k % 5)])
        out.append(t)
    return out


def _same(a: z3.ExprRef, b: z3.ExprRef) -> bool:
    return a.get_id() == b.get_id() and type(a) is type(b)


def test_plus_simplified_is_the_binding_simplify_of_the_sum():
    for t in _terms():
        for c in (0, 1, -4, 16, 1 << 31, -(1 << 31), (1 << 32) - 4, 1 << 33, -(1 << 40) + 3):
            assert _same(plus_simplified(t, c), z3.simplify(t + c)), (t, c)


def test_minus_simplified_is_the_binding_simplify_of_the_difference():
    ts = _terms()
    for a in ts:
        for b in ts[:8]:
            assert _same(minus_simplified(a, b), z3.simplify(a - b)), (a, b)


def test_at_zero_simplified_is_the_binding_substitution():
    for t in _terms():
        for sym in (X, Y):
            want = z3.simplify(z3.substitute(t, (sym, z3.BitVecVal(0, 32))))
            assert _same(at_zero_simplified(t, sym), want), (t, sym)


def test_values_read_back_as_numbers():
    assert plus_simplified(z3.BitVecVal(250, 8), 10).as_long() == (250 + 10) % 256
    assert minus_simplified(X * 4 + 100, X * 4 + 36).as_long() == 64
