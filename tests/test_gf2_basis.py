"""core.gf2.add_to_basis against a brute-force span (every XOR of a subset, enumerated here)."""
import itertools
import random

from verilayout.core.gf2 import add_to_basis


def _span(vectors):
    out = {0}
    for v in vectors:
        out |= {x ^ v for x in out}
    return out


def test_add_to_basis_keeps_the_span_and_counts_the_rank():
    rng = random.Random(7)
    for _ in range(300):
        vs = [rng.randrange(1 << 6) for _ in range(rng.randrange(1, 8))]
        basis: list[int] = []
        grew = [add_to_basis(basis, v) for v in vs]
        assert _span(basis) == _span(vs)
        assert len(basis) == sum(grew)
        # brute-force rank: the largest independent subset size = log2 of the span's size
        assert 1 << len(basis) == len(_span(vs))
        assert basis == sorted(basis, reverse=True)
        leads = [b.bit_length() for b in basis]
        assert len(set(leads)) == len(leads)
        for i, v in enumerate(vs):   # inserted iff v is outside the span of those before it
            assert grew[i] == (v not in _span(vs[:i]))


def test_add_to_basis_on_every_pair_of_3_bit_vectors():
    for a, b in itertools.product(range(8), repeat=2):
        basis: list[int] = []
        add_to_basis(basis, a)
        assert add_to_basis(basis, b) == (b not in _span([a]))
