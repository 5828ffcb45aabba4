"""The stubborn-set reduced search of the cluster K ring (``simulate/mcast_stubborn``) against the
full breadth-first search (``simulate/mcast_ring.explore_mcast``) on rings the full search finishes:
the same verdict (proved, or an error of the same kind, or a deadlock); a proof in no more states.

The oracle is the full search, run here on each system. The systems: the hand-made rings of
``tests/test_mcast_ring_tabled.py`` in each landing model, and every ring made from its correct
two-CTA ring by deleting one action (a missing wait, arrive, load, MMA or commit: each a protocol
bug or harmless), so that most error kinds and deadlocks occur."""
from __future__ import annotations

from dataclasses import replace

import pytest

from test_mcast_ring_tabled import RINGS
from verilayout.simulate.mcast_ring import explore_mcast
from verilayout.simulate.mcast_stubborn import explore_stubborn

LANDINGS = ("per-dest", "atomic", "eager")


def _kind(r) -> tuple:
    return r.outcome, (r.error[0].what if r.outcome == "counterexample" else None)


def _same(system, cap: int = 200000):
    full = explore_mcast(system, max_states=cap)
    red = explore_stubborn(system, max_states=cap)
    assert full.outcome != "unknown"
    assert _kind(red) == _kind(full), (full, red)
    assert full.outcome != "proved" or red.states <= full.states
    return full, red


@pytest.mark.parametrize("landing", LANDINGS)
@pytest.mark.parametrize("name", sorted(RINGS))
def test_hand_made_rings_get_the_full_search_verdict(name, landing):
    system, expected = RINGS[name]
    full, _ = _same(replace(system, landing=landing))
    assert full.outcome == expected


def _deleted(system) -> list:
    """Every ring with one action of one process deleted."""
    out = []
    for p, acts in enumerate(system.prog):
        for i in range(len(acts)):
            prog = system.prog[:p] + (acts[:i] + acts[i + 1:],) + system.prog[p + 1:]
            out.append(((p, i), replace(system, prog=prog)))
    return out


@pytest.mark.parametrize("landing", LANDINGS)
def test_every_one_action_deletion_gets_the_full_search_verdict(landing):
    base = replace(RINGS["three iterations, one stage"][0], landing=landing)
    kinds = set()
    for where, system in _deleted(base):
        try:
            full, _ = _same(system)
        except KeyError:
            continue
        kinds.add(_kind(full))
    # the deletions reach several verdicts: the comparison is not only of proofs
    assert {o for o, _ in kinds} >= {"proved", "counterexample", "deadlock"}, kinds


def test_the_reduced_search_visits_fewer_states_on_a_kernel_sized_ring():
    """Two CTAs, three iterations, per-destination landings: the reduction is strict."""
    full, red = _same(replace(RINGS["three iterations, one stage"][0], landing="per-dest"))
    assert red.states < full.states


def test_a_bound_below_the_reduced_state_count_is_unknown():
    r = explore_stubborn(RINGS["good"][0], max_states=3)
    assert r.outcome == "unknown" and r.states > 3


@pytest.mark.parametrize("landing", LANDINGS)
@pytest.mark.parametrize("landed_peer_first", [True, False])
def test_the_pair_leader_reading_both_stages_gets_the_full_search_verdict(landed_peer_first, landing):
    """The CTA-pair ring of ``tests/test_emit_gemm_sm100_pair_cluster`` (the leader's MMA reads both
    CTAs' stages, the peer's bytes complete on the leader's barrier), with every one-action deletion."""
    from test_emit_gemm_sm100_pair_cluster import _leader_reads_both
    base = replace(_leader_reads_both(landed_peer_first), landing=landing)
    _same(base)
    for _, system in _deleted(base):
        try:
            _same(system)
        except KeyError:
            continue
