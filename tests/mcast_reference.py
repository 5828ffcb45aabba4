"""The reference for the tabled cluster-ring search: ``explore_mcast(system, reference=True)`` (the
transition system stepped action by action, :func:`verilayout.simulate.mcast_ring._step`) against
the default tabled one on the same system: the same answer (outcome, finding with its mark, blocked
processes, state count) and the same states stepped in the same order (the reference's state
``(pcs, mbarriers, in flight)`` written flat as the tabled search keeps it, each mbarrier one int).

A helper of the tests, not a test module: :func:`same_search` runs both searches;
:func:`recording` wraps a module's ``explore_mcast`` so that each search a check makes is compared
too (``monkeypatch.setattr(module, "explore_mcast", recording(compared))``).
"""
from __future__ import annotations

from ring_reference import recorder
from verilayout.simulate import mcast_ring


def _flat(st) -> tuple:
    pcs, bs, flight = st
    return pcs + tuple(mcast_ring._word(*b) for b in bs), flight


def _stepped(system, reference: bool, max_states: int):
    seen: list = []
    name = "_step" if reference else "_fast_step"
    step = getattr(mcast_ring, name)

    def record(s, *args):
        seen.append(_flat(s) if reference else s)
        return step(s, *args)
    setattr(mcast_ring, name, record)
    try:
        r = mcast_ring.explore_mcast(system, max_states=max_states, reference=reference)
    finally:
        setattr(mcast_ring, name, step)
    return r, seen


def same_search(system, max_states: int):
    """The tabled search's answer, after asserting that the reference search gives the same answer
    and steps the same states in the same order."""
    fast, fast_seen = _stepped(system, False, max_states)
    slow, slow_seen = _stepped(system, True, max_states)
    assert fast == slow, (fast, slow)
    assert [s[0] for s in fast_seen] == [s[0] for s in slow_seen], (len(fast_seen), len(slow_seen))
    assert [list(s[1]) for s in fast_seen] == [list(s[1]) for s in slow_seen]   # in-flight iteration order
    return fast


def recording(compared: list, limit: int = 20000):
    """An ``explore_mcast`` compared with the reference search (``ring_reference.recorder``,
    :func:`same_search`; larger searches: ``benchmarks/mcast_ring_speed.py``)."""
    return recorder(mcast_ring.explore_mcast, same_search, compared, limit)


def compared_check(man, src: str, compared: list):
    """``mcast_check.check_sm100_source(man, src)`` with each of its mcast-ring searches of at most
    20000 states also run by the reference search and asserted to agree (appended to ``compared``)."""
    import verilayout.simulate.mcast_check as mc
    real, memo = mc.explore_mcast, dict(mc._RING_MEMO)
    mc.explore_mcast = recording(compared)
    mc._RING_MEMO.clear()            # every search of this check runs (and is compared): none from the memo
    try:
        return mc.check_sm100_source(man, src)
    finally:
        mc.explore_mcast = real
        mc._RING_MEMO.update(memo)
