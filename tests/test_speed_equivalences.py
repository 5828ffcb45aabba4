"""The shortcuts taken for speed give what their definitions give, on random small cases:
``LinearLayout.sublayout`` keeping every output dim (the bases of the kept input dims, by
definition) and ``synth.swizzle._meet_dim`` (``rank(P) + rank(B) - rank(P + B)``, computed with
``core.gf2.rank``)."""
from __future__ import annotations

import random

from verilayout.core import gf2
from verilayout.core.linear_layout import LinearLayout
from verilayout.synth import swizzle


def _random_layout(rng: random.Random) -> LinearLayout:
    outs = {f"dim{k}": 1 << rng.randint(0, 3) for k in range(rng.randint(1, 3))}
    bases = {n: [[rng.randrange(s) for s in outs.values()] for _ in range(rng.randint(0, 3))]
             for n in ("register", "lane", "warp")}
    return LinearLayout(bases, outs, require_surjective=False)


def test_sublayout_of_every_out_dim_keeps_the_bases_of_the_named_in_dims():
    rng = random.Random(7)
    for _ in range(300):
        ll = _random_layout(rng)
        keep = [n for n in ll.in_dim_names if rng.random() < 0.5]
        sub = ll.sublayout(keep, ll.out_dim_names)
        assert sub.out_dims == ll.out_dims
        assert sub.bases == {n: b for n, b in ll.bases.items() if n in keep}


def test_meet_dim_is_the_rank_formula():
    rng = random.Random(11)
    for _ in range(500):
        n = rng.randint(1, 10)
        big = tuple(swizzle._reduce_basis([rng.randrange(1 << n) for _ in range(rng.randint(0, n))]))
        phase = tuple(rng.randrange(1 << n) for _ in range(rng.randint(0, 6)))
        want = gf2.rank(list(phase)) + gf2.rank(list(big)) - gf2.rank(list(phase) + list(big))
        assert swizzle._meet_dim.__wrapped__(phase, big) == want, (phase, big)


def test_product_of_disjoint_layouts_applies_each_factor():
    """``(a * b)(x, y) = (a(x), b(y))`` when ``a`` and ``b`` share no dim (the product's law),
    the first and the repeated (memoized) product alike."""
    rng = random.Random(3)
    for _ in range(200):
        a, b = _random_layout(rng), _random_layout(rng)
        b = LinearLayout({f"b_{n}": v for n, v in b.bases.items()},
                         {f"b_{n}": s for n, s in b.out_dims.items()}, require_surjective=False)
        for prod in (a * b, a * b):
            assert prod.in_dim_names == a.in_dim_names + b.in_dim_names
            assert prod.out_dim_names == a.out_dim_names + b.out_dim_names
            x = {n: rng.randrange(a.in_dim_size(n)) for n in a.in_dim_names}
            y = {n: rng.randrange(b.in_dim_size(n)) for n in b.in_dim_names}
            assert prod.apply({**x, **y}) == {**a.apply(x), **b.apply(y)}


def test_transpose_outs_to_the_same_order_is_the_layout():
    rng = random.Random(5)
    for _ in range(100):
        ll = _random_layout(rng)
        same = ll.transpose_outs(ll.out_dim_names)
        assert same == ll and same.bases == ll.bases and same.out_dims == ll.out_dims


def test_nested_is_span_containment_at_the_dimension():
    """``_nested(rest, big, o, dim)``: ``span(rest + big)`` has dimension ``dim`` and holds every
    vector of ``o`` (ranks by ``core.gf2.rank``: ``v`` is in a span when adding it keeps the rank)."""
    rng = random.Random(13)
    for _ in range(500):
        n = rng.randint(1, 10)
        big = tuple(swizzle._reduce_basis([rng.randrange(1 << n) for _ in range(rng.randint(0, n))]))
        rest = tuple(rng.randrange(1 << n) for _ in range(rng.randint(0, 4)))
        both = list(rest) + list(big)
        r = gf2.rank(both)
        o = tuple(rng.choice([rng.randrange(1 << n), (rest + big + (0,))[0] ^ (big[-1] if big else 0)])
                  for _ in range(rng.randint(0, 4)))
        for dim in (r, r + 1):
            want = r == dim and all(gf2.rank(both + [v]) == r for v in o)
            assert swizzle._nested.__wrapped__(rest, big, o, dim) == want, (rest, big, o, dim)
