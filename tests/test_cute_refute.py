"""``audit/cute_refute.RefutingProver`` against brute force: on random claims over two 6-bit symbols,
``proves`` is True exactly when every one of the 4096 assignments that meets the assumption meets the
claim (enumerated here in Python), whether the timeout is short (the concrete search runs) or long."""
from __future__ import annotations

import random

import pytest
import z3

from verilayout.audit.cute_refute import RefutingProver, refuted

W = 6
X, Y = z3.BitVec("x", W), z3.BitVec("y", W)


def _term(rng: random.Random, depth: int):
    """A random term over x, y: (z3 term, Python function of (x, y) mod 2^W)."""
    m = (1 << W) - 1
    if depth == 0 or rng.random() < 0.3:
        k = rng.randrange(4)
        if k == 0:
            return X, lambda x, y: x
        if k == 1:
            return Y, lambda x, y: y
        c = rng.randrange(1 << W)
        return z3.BitVecVal(c, W), lambda x, y, c=c: c
    (a, fa), (b, fb) = _term(rng, depth - 1), _term(rng, depth - 1)
    op = rng.randrange(5)
    if op == 0:
        return a + b, lambda x, y: (fa(x, y) + fb(x, y)) & m
    if op == 1:
        return a * b, lambda x, y: (fa(x, y) * fb(x, y)) & m
    if op == 2:
        return a & b, lambda x, y: fa(x, y) & fb(x, y)
    if op == 3:
        return a ^ b, lambda x, y: fa(x, y) ^ fb(x, y)
    return z3.LShR(a, 1), lambda x, y: fa(x, y) >> 1


def _holds(claim_f, assume_f) -> bool:
    return all(claim_f(x, y) for x in range(1 << W) for y in range(1 << W) if assume_f(x, y))


@pytest.mark.parametrize("timeout_ms", [2000, 5000])
def test_proves_agrees_with_brute_force(timeout_ms: int) -> None:
    rng = random.Random(timeout_ms)
    seen = {True: 0, False: 0}
    for _ in range(60):
        (t, ft), (u, fu) = _term(rng, 3), _term(rng, 2)
        c = rng.randrange(1, 1 << W)
        claim, cf = z3.ULT(t, c), (lambda x, y, ft=ft, c=c: ft(x, y) < c)
        assume, af = z3.ULE(u, c), (lambda x, y, fu=fu, c=c: fu(x, y) <= c)
        want = _holds(cf, af)
        seen[want] += 1
        assert RefutingProver().proves(claim, assume, timeout_ms) == want, (claim, assume)
        assert not (want and refuted(claim, assume))
    assert seen[True] and seen[False]
