"""GF(2) routines against brute-force enumeration of spans."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from verilayout.core import gf2

vecs = st.lists(st.integers(0, 63), max_size=6)


def span(vs):
    out = {0}
    for v in vs:
        out |= {x ^ v for x in out}
    return out


@settings(max_examples=300, deadline=None)
@given(vecs, st.integers(0, 63))
def test_rank_solve_nullspace_match_enumeration(vs, target):
    sp = span(vs)
    assert 2 ** gf2.rank(vs) == len(sp)
    s = gf2.solve(vs, target)
    assert (s is not None) == (target in sp)
    if s is not None:
        assert gf2.xor_span(vs, s) == target
    ns = gf2.nullspace(vs)
    assert all(gf2.xor_span(vs, m) == 0 for m in ns)
    assert len(ns) == len(vs) - gf2.rank(vs)


@settings(max_examples=300, deadline=None)
@given(vecs, vecs)
def test_intersect_is_the_intersection_of_spans(a, b):
    got = gf2.intersect(a, b)
    assert span(got) == span(a) & span(b)
    assert gf2.rank(got) == len(got)
