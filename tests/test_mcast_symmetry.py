"""Symmetry reduction of the cluster K ring (``simulate/mcast_symmetry``: ``explore_symmetric``, and
``explore_stubborn(..., symmetric=True)``) against the full breadth-first search
(``simulate/mcast_ring.explore_mcast``), the oracle, run here on every system it finishes: the same
outcome and finding kind, a proof in no more states than the plain reduced search.

The systems: the hand-made rings of ``tests/test_mcast_ring_tabled.py`` in each landing model, every
ring made from one of them by deleting one action, and the rings of emitted kernels kept in
``tests/mcast_ring_systems.json`` (``tests/mcast_systems.py``): shipped clusters and planted protocol
bugs, whose kinds are named here from the bug."""
from __future__ import annotations

from dataclasses import replace

import pytest

import mcast_systems
from test_mcast_ring_tabled import RINGS
from verilayout.simulate.mcast_ring import explore_mcast
from verilayout.simulate.mcast_stubborn import explore_stubborn
from verilayout.simulate.mcast_symmetry import canonical, explore_symmetric, ring_symmetries

LANDINGS = ("per-dest", "atomic", "eager")
KERNELS = mcast_systems.load()


def _kind(r) -> tuple:
    return r.outcome, (r.error[0].what if r.outcome == "counterexample" else None)


def _same(system, cap: int = 200000):
    """The full search, the symmetric reduced search and the symmetric full search agree; a proof
    of the symmetric full search visits no more states than the full one."""
    full = explore_mcast(system, max_states=cap)
    sym = explore_stubborn(system, max_states=cap, symmetric=True)
    whole = explore_symmetric(system, max_states=cap)
    assert full.outcome != "unknown"
    assert _kind(sym) == _kind(full) == _kind(whole), (full, sym, whole)
    assert full.outcome != "proved" or whole.states <= full.states
    return full, sym


def _groups(system) -> list:
    return sorted(p.cta for p in ring_symmetries(system))


def test_the_kernels_symmetries_are_the_cluster_geometry():
    """One-CTA 2x2: A is multicast along a cluster column ({0, 2}, {1, 3}), B along a row ({0, 1},
    {2, 3}); the permutations keeping both partitions are the 2x2 torus's translations. A 4x1 pair
    cluster: two pairs (0, 1), (2, 3) sharing B; swapping the pairs whole is its only symmetry (a
    leader and its peer run different programs). 2x1: the two CTAs swap."""
    torus = [(0, 1, 2, 3), (1, 0, 3, 2), (2, 3, 0, 1), (3, 2, 1, 0)]
    assert _groups(KERNELS["2x2"]) == torus
    assert _groups(KERNELS["big 1cta 2x2 s6"]) == torus
    assert _groups(KERNELS["pair 4x1"]) == [(0, 1, 2, 3), (2, 3, 0, 1)]
    assert _groups(KERNELS["big pair 4x1 f16 s8"]) == [(0, 1, 2, 3), (2, 3, 0, 1)]
    assert _groups(KERNELS["2x1"]) == [(0, 1), (1, 0)]


def test_an_asymmetric_ring_keeps_only_the_identity():
    """The release missing CTA 1: CTA 0's commit reaches one empty barrier, CTA 1's two."""
    assert _groups(RINGS["release misses CTA 1"][0]) == [(0, 1)]
    assert _groups(RINGS["good"][0]) == [(0, 1), (1, 0)]


def test_byte_ranges_break_a_symmetry_only_through_their_overlaps():
    """CTA 1's loads moved to other bytes: still symmetric while every load overlaps exactly the
    iterations' bytes it overlapped (each iteration's bytes are the union of both CTAs' slices);
    CTA 1's iteration-1 load moved to another stage: it no longer overlaps iteration 0's bytes
    while CTA 0's does, so the swap is no symmetry."""
    good = RINGS["good"][0]

    def moved(fn):
        prog = list(good.prog)
        prog[2] = tuple(a._replace(regions=fn(a)) if a.kind == "mcast-load" else a for a in prog[2])
        return replace(good, prog=tuple(prog))
    assert _groups(moved(lambda a: ((40, 56),))) == [(0, 1), (1, 0)]
    assert _groups(moved(lambda a: ((1000, 1032),) if a.it == 1 else a.regions)) == [(0, 1)]


def test_canonical_is_the_least_image():
    s = RINGS["good"][0]
    swap = ring_symmetries(s)
    v = (1, 0, 0, 0) + tuple(c << 1 for _, c in s.init)
    low = canonical((v, frozenset()), swap)
    # swapping CTAs 0 and 1 moves the pcs of processes 0, 1 to 2, 3 (and the barriers likewise)
    assert low == ((0, 0, 1, 0) + tuple(c << 1 for _, c in s.init), frozenset())
    assert canonical(low, swap) is low


@pytest.mark.parametrize("landing", LANDINGS)
@pytest.mark.parametrize("name", sorted(RINGS))
def test_hand_made_rings_get_the_full_search_verdict(name, landing):
    system, expected = RINGS[name]
    system = replace(system, landing=landing)
    full, sym = _same(system)
    assert full.outcome == expected
    if full.outcome == "proved":
        assert sym.states <= explore_stubborn(system, max_states=200000).states


def _deleted(system) -> list:
    return [replace(system, prog=system.prog[:p] + (acts[:i] + acts[i + 1:],) + system.prog[p + 1:])
            for p, acts in enumerate(system.prog) for i in range(len(acts))]


@pytest.mark.parametrize("landing", LANDINGS)
def test_every_one_action_deletion_gets_the_full_search_verdict(landing):
    kinds = set()
    for system in _deleted(replace(RINGS["three iterations, one stage"][0], landing=landing)):
        try:
            full, _ = _same(system)
        except KeyError:                      # a wait on an mbarrier without init: refused by both
            continue
        kinds.add(_kind(full))
    assert {o for o, _ in kinds} >= {"proved", "counterexample", "deadlock"}, kinds


#: Planted bugs of benchmarks/mcast_ring_speed.py whose ring finding is named by the bug itself.
PLANTED = {
    "2x2 release to one CTA": ("deadlock", None),            # a peer's producer waits for its release forever
    "2x1 missing producer tail": ("counterexample", "after-exit"),   # a peer's commit reaches a finished CTA
    "pair 2x2 release one pair": ("deadlock", None),
}
SMALL = sorted(k for k in KERNELS if not k.startswith(("big", "chosen")))
SHIPPED = ("2x1", "1x2", "2x2", "4x1", "1x4", "pair 2x2", "pair 4x1")


@pytest.mark.parametrize("name", SMALL)
def test_kernel_rings_get_the_full_search_verdict(name):
    """Eager landings (the model of 4-CTA clusters), where the full search finishes."""
    full, sym = _same(replace(KERNELS[name], landing="eager"))
    assert _kind(full) == PLANTED.get(name, _kind(full))
    if name in PLANTED or name in SHIPPED:   # the shipped clusters are proved
        assert _kind(sym) == PLANTED.get(name, ("proved", None))


def test_the_fixture_codec_keeps_every_field():
    """A pair cluster's loads complete on the leader's barrier (``sig``): kept through JSON."""
    for name in ("pair 2x2", "2x2"):
        s = KERNELS[name]
        assert mcast_systems.decode(mcast_systems.encode(s)) == s
    peer = KERNELS["pair 2x2"].prog[2]                # CTA 1's producer: bytes signal CTA 0 or 2
    assert all(a.sig and set(a.sig) <= {0, 2} for a in peer if a.kind == "mcast-load")


def _release_own_pair(system):
    """Every stage commit arriving on its own pair's empty barriers only (the planted bug "pair 2x2
    release one pair" of benchmarks/mcast_ring_speed.py, made here on the ring)."""
    prog = tuple(tuple(a._replace(bars=tuple(b for b in a.bars if b[0] // 2 == system.roles[p][0] // 2))
                       if a.kind == "mma-commit" else a for a in acts) for p, acts in enumerate(system.prog))
    return replace(system, prog=prog, landing="eager")


def test_the_ring_check_proves_the_eight_stage_f16_4x1_pair_ring_with_every_landing_order():
    """256x128x64 f16, 8 stages, 4x1 pairs: the full search passes its bound in every landing
    model (benchmarks/mcast_symmetry.py); the reduced search, up to the pair swap, ends and the
    ``mcast-ring`` check proves the ring with each destination of a multicast landing on its own.
    Releasing to the own pair only: B is multicast to both pairs' CTAs (0, 2 / 1, 3), so the other
    pair's producer waits for a release that never comes: a deadlock, found by name."""
    from verilayout.simulate.mcast_check import LANDINGS, _ring_verdict
    system = KERNELS["big pair 4x1 f16 s8"]
    check = _ring_verdict(system)
    assert check.status == "proved", check.message
    assert "stubborn-set reduced search, up to 2 CTA permutations" in check.message
    assert LANDINGS["per-dest"] in check.message
    bad = explore_stubborn(replace(_release_own_pair(system), landing="per-dest"), max_states=200000, symmetric=True)
    assert bad.outcome == "deadlock", bad


def _release_own_cta(system):
    """Every stage commit arriving on its own CTA's empty barrier only (the planted bug "2x2 release
    to one CTA" of benchmarks/mcast_ring_speed.py, made here on the ring)."""
    prog = tuple(tuple(a._replace(bars=tuple(b for b in a.bars if b[0] == system.roles[p][0]))
                       if a.kind == "mma-commit" else a for a in acts) for p, acts in enumerate(system.prog))
    return replace(system, prog=prog)


def _untailed(system):
    """Each producer's tail (its waits after its last load: it waits for every stage's release
    before it exits) left out (the planted bug "2x1 missing producer tail")."""
    def cut(acts):
        last = max((i for i, a in enumerate(acts) if a.kind == "mcast-load"), default=-1)
        return acts[:last + 1]
    prog = tuple(cut(acts) if role == "producer" else acts for (_, role), acts in zip(system.roles, system.prog))
    return replace(system, prog=prog)


#: Rings every full search leaves unknown (benchmarks/mcast_symmetry.py), now proved per destination.
NEWLY_PROVED = ("big 1cta 2x2 s6", "big pair 2x2 256x256 s6", "big 1cta 2x1 s4", "big 1cta 1x2 s6")


@pytest.mark.parametrize("name", NEWLY_PROVED)
def test_the_ring_check_proves_the_large_rings_per_destination(name):
    """The one-CTA 2x2 at 6 stages, the 2x2 pair at 6 stages, the 2x1 at 4 and the 1x2 at 6 stages:
    the ``mcast-ring`` check proves each with every landing order, by the reduced search."""
    from verilayout.simulate.mcast_check import LANDINGS, _ring_verdict
    check = _ring_verdict(KERNELS[name])
    assert check.status == "proved", check.message
    assert LANDINGS["per-dest"] in check.message and "stubborn-set reduced search" in check.message


@pytest.mark.parametrize("name", NEWLY_PROVED[:3])
def test_a_planted_release_bug_on_the_large_rings_is_caught_by_name(name):
    """On the same rings: a release reaching only the committing CTA deadlocks (a peer's producer
    waits for it forever), found by the reduced search with every landing order."""
    from verilayout.simulate.mcast_check import _ring_verdict
    dead = _ring_verdict(_release_own_cta(KERNELS[name]))
    assert dead.status == "counterexample" and "deadlock" in dead.message, dead.message
    assert "[stubborn-set reduced search]" in dead.message


def test_the_planted_bugs_reach_the_full_search_verdict_on_a_small_ring():
    """Two planted bugs on the shipped 2x1 ring (per destination: the full search ends there):
    the reduced search's verdict is the full search's, the oracle."""
    for edit, want in ((_release_own_cta, ("deadlock", None)), (_untailed, ("counterexample", "after-exit"))):
        system = replace(edit(KERNELS["2x1"]), landing="per-dest")
        full, _ = _same(system)
        assert _kind(full) == want
