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
