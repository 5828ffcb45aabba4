"""``mcast-ring``'s memo (:func:`verilayout.simulate.mcast_check.ring_content`): a system is keyed by
its content less the actions' marks (the PTX events they came from). The law checked here on the
hand-made rings of ``tests/test_mcast_ring_tabled``: re-marking every action (new, distinct marks)
changes no search's outcome, finding, blocked waits or state count, in each landing model and in the
stubborn-set reduced search, and the ``mcast-ring`` check of the re-marked system is the same check."""
from __future__ import annotations

from dataclasses import replace

import pytest

from test_mcast_ring_tabled import RINGS
from verilayout.simulate.mcast_check import _ring_verdict, ring_content
from verilayout.simulate.mcast_ring import explore_mcast
from verilayout.simulate.mcast_stubborn import explore_stubborn


def _remarked(system):
    """Every action's mark replaced by a fresh one naming its process and position."""
    return replace(system, prog=tuple(tuple(a._replace(mark=("other", p, i)) for i, a in enumerate(acts))
                                      for p, acts in enumerate(system.prog)))


def _unmarked(r):
    """An exploration with the marks it reports removed (the finding, each blocked wait)."""
    err = r.error[0] if r.error else None
    return r.outcome, err, tuple((p, a._replace(mark=None)) for p, a in r.blocked), r.states


@pytest.mark.parametrize("name", sorted(RINGS))
def test_a_remarked_ring_has_the_same_content_and_the_same_searches(name):
    system = RINGS[name][0]
    other = _remarked(system)
    assert other != system and ring_content(other) == ring_content(system)
    assert hash(ring_content(other)) == hash(ring_content(system))
    for landing in ("per-dest", "atomic", "eager"):
        a = explore_mcast(replace(system, landing=landing), max_states=100000)
        b = explore_mcast(replace(other, landing=landing), max_states=100000)
        assert _unmarked(a) == _unmarked(b)
    assert _unmarked(explore_stubborn(system, max_states=100000)) == _unmarked(explore_stubborn(other, max_states=100000))


@pytest.mark.parametrize("name", sorted(n for n in RINGS if RINGS[n][1] != "counterexample"))
def test_the_ring_check_of_a_remarked_ring_is_the_same_check(name):
    system = RINGS[name][0]
    assert _ring_verdict(_remarked(system)) == _ring_verdict(system)


def test_a_ring_differing_in_one_count_is_another_key():
    system = RINGS["good"][0]
    init = ((system.init[0][0], 2),) + system.init[1:]
    assert ring_content(replace(system, init=init)) != ring_content(system)
