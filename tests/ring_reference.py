"""The reference for the reduced MMA-ring search: ``explore_mma_rings(system, reduce=False)`` (every
successor of every process canonicalized: the plain breadth-first search) against the default
reduced one, on the same system: the same answer (outcome, error with its mark, blocked
processes, state count) and the same set of states stepped (every reachable representative
when proved, the same prefix of the breadth-first order otherwise).

A helper of the tests, not a test module: :func:`same_search` runs both searches;
:func:`recording` wraps a module's ``explore_mma_rings`` so that each search a check makes is
compared too (``monkeypatch.setattr(module, "explore_mma_rings", recording(compared))``).
"""
from __future__ import annotations

from verilayout.simulate import ring


def _stepped(system, reduce: bool, max_states: int):
    seen: list = []
    step = ring._mma_step

    def record(s, *args):
        seen.append(s)
        return step(s, *args)
    ring._mma_step = record
    try:
        r = ring.explore_mma_rings(system, max_states=max_states, reduce=reduce)
    finally:
        ring._mma_step = step
    return r, seen


def same_search(system, max_states: int):
    """The reduced search's answer, after asserting that the reference search gives the same
    answer and steps the same states in the same order."""
    fast, fast_seen = _stepped(system, True, max_states)
    slow, slow_seen = _stepped(system, False, max_states)
    assert fast == slow, (fast, slow)
    assert fast_seen == slow_seen, (len(fast_seen), len(slow_seen))
    return fast


def recorder(explore, same, compared: list, limit: int = 20000):
    """``explore`` (a search taking ``system, *, max_states``) that appends ``(outcome, states)`` of
    each search to ``compared``, checked against its reference (``same(system, max_states)``, which
    asserts the two searches agree and returns the answer) when the search is of at most ``limit``
    states (larger ones: the benchmarks)."""
    def run(system, *, max_states: int):
        r = explore(system, max_states=max_states)
        if r.states <= limit:
            assert same(system, max_states) == r
            compared.append((r.outcome, r.states))
        return r
    return run


def recording(compared: list, limit: int = 20000):
    """An ``explore_mma_rings`` compared with the plain search (:func:`recorder`, :func:`same_search`;
    larger searches: ``benchmarks/mma_ring_reduce.py``)."""
    return recorder(ring.explore_mma_rings, same_search, compared, limit)
