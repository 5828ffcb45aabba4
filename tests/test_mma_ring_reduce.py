"""The reduced MMA-ring search (``explore_mma_rings``'s default) against two references on rings
written here: the plain search (``reduce=False``, every successor canonicalized) must give the
same answer and step the same states in the same order (``tests/ring_reference``), and, as an
oracle that shares no symmetry code with either, the search with no symmetry at all (every
process its own, nothing canonicalized): the reduced search's states are exactly the
representatives (each class of interchangeable warps' pcs sorted, written here) of the states it
reaches, with the same verdict.

The ring: one MMA thread writes tile 0, commits to ACC, waits for EMPTY (count: the epilogue
warps), writes tile 1 into the same TMEM columns, commits; each of three interchangeable epilogue
warps waits for ACC's phase, reads the tile, arrives on EMPTY, twice. PTX ISA 9.7.13.15
(mbarrier phases) and 9.7.16 (``tcgen05.commit`` arrives once the MMAs before it completed).
"""
from __future__ import annotations

from ring_reference import _stepped, same_search
from verilayout.simulate import ring
from verilayout.simulate.ring import (MMA_OBSERVED, Arrive, Mma, MmaCommit, MmaRingSystem, TmemRead, TmemTile, Wait,
                                      explore_mma_rings)

ACC, EMPTY = (0, 0x20), (0, 0x28)


def _system(warps: int = 3, empty_count: int = 3, mma_waits: bool = True) -> MmaRingSystem:
    mma = (Mma("mma", -1, 0, 1), MmaCommit("mma-commit", (ACC,), 1, 2)) + \
        ((Wait("wait", EMPTY, 0, 3),) if mma_waits else ()) + (Mma("mma", -1, 1, 4), MmaCommit("mma-commit", (ACC,), 2, 5))
    epi = tuple((Wait("wait", ACC, 0, 10 + w), TmemRead("tmem-read", 0, 0, 64, 20 + w), Arrive("arrive", EMPTY, 1, 0, 30 + w),
                 Wait("wait", ACC, 1, 40 + w), TmemRead("tmem-read", 1, 0, 64, 50 + w), Arrive("arrive", EMPTY, 1, 0, 60 + w))
                for w in range(warps))
    return MmaRingSystem(1, (mma,) + epi, ((0, "mma"),) + ((0, "epilogue"),) * warps,
                         (TmemTile(0, 64, 0), TmemTile(0, 64, 1)), ((ACC, 1), (EMPTY, empty_count)), MMA_OBSERVED)


def _unreduced(system: MmaRingSystem, max_states: int):
    """Every state reachable with no symmetry (each warp its own) and the search's answer."""
    t = ring._mma_tables(system)
    start = (tuple(0 for _ in system.prog), tuple((0, c, 0) for _, c in system.init), frozenset(), 0)
    seen: set = set()

    def step(s):
        seen.add(s)
        return ring._mma_step(s, t)
    return ring.explore(start, step, system.prog, max_states=max_states), seen


def _representative(s, warps: int):
    pcs = s[0]
    return (pcs[:1] + tuple(sorted(pcs[1:1 + warps])) + pcs[1 + warps:],) + s[1:]


def test_the_reduced_search_reaches_exactly_the_representatives_of_every_reachable_state():
    system = _system()
    r = same_search(system, 100000)
    assert r.outcome == "proved"
    plain, states = _unreduced(system, 100000)
    assert plain.outcome == "proved"
    reps = {_representative(s, 3) for s in states}
    assert r.states == len(reps) < len(states)       # the symmetry merges states, keeps every class
    _, stepped = _stepped(system, True, 100000)
    assert set(stepped) == reps


def test_the_reduced_search_finds_the_planted_bugs_as_the_plain_one():
    # EMPTY counting 2 of the 3 warps: tile 1's MMA may write the columns the third warp still
    # reads; counting 4: the MMA thread waits for ever; no wait at all: the MMA writes at once
    early = same_search(_system(empty_count=2), 100000)
    assert early.outcome == "counterexample" and early.error[0].what == "mma-writes-read"
    stuck = same_search(_system(empty_count=4), 100000)
    assert stuck.outcome == "deadlock" and (0, Wait("wait", EMPTY, 0, 3)) in stuck.blocked
    nowait = same_search(_system(mma_waits=False), 100000)
    assert nowait.outcome == "counterexample" and nowait.error[0].what == "mma-writes-read"
    for system in (_system(empty_count=2), _system(empty_count=4), _system(mma_waits=False)):
        plain, _ = _unreduced(system, 100000)
        assert plain.outcome == explore_mma_rings(system, max_states=100000).outcome


def test_the_state_bound_gives_unknown_at_the_same_count():
    full = explore_mma_rings(_system(), max_states=100000).states
    assert same_search(_system(), full - 1).outcome == "unknown"
    assert same_search(_system(), full).outcome == "proved"
