"""Symmetry of the cluster K ring (:mod:`verilayout.simulate.mcast_ring`): the CTA permutations
that map the system onto itself, and the canonical state of an orbit.

**Automorphisms.** A permutation ``pi`` of a cluster's CTAs renames everything that names a CTA: a
process ``(x, role)`` becomes ``(pi x, role)``, an mbarrier ``(x, offset)`` becomes ``(pi x,
offset)``, an in-flight item ``(p, j, ys)`` of process ``p``'s action ``j`` landing in the CTAs
``ys`` becomes that of the renamed process at the same ``j`` landing in ``pi ys`` (the destinations'
order that of the renamed process's own action). :func:`ring_symmetries` keeps the ``pi`` under
which the system is its own renaming: the same mbarrier counts (``init``), the same CTAs read by each
MMA thread (``reads``), and action by action of every process ``p`` and its image ``q``: the same
kind, iteration, bytes, tx-count, arrival count, parity, tile and done fields; a wait or arrive on
``pi`` of the mbarrier; a load from ``pi`` of the sender into ``pi`` of its destination set whose
bytes complete on ``pi`` of the CTA they completed on (``sig``) at the same offset; a commit
arriving at ``pi`` of its set of mbarriers (the same first offset, the one its landings use); and
for every load, destination ``y`` and K iteration ``m``, the load's byte ranges overlap the bytes
that iteration ``m`` loads into ``y`` iff the image load's ranges overlap those iteration ``m``
loads into ``pi y`` (the only use of byte ranges: ``mma-reads-landing`` and ``load-over-read``).

**Lemma 1** (``pi`` is an automorphism of the state graph). Let ``sigma`` rename a state: pcs
``v'[pi p] = v[p]``, mbarrier words ``v'[pi b] = v[b]``, in-flight items as above. Every check and
update of a step (:func:`verilayout.simulate.mcast_ring.explore_mcast`'s, module docstring there)
reads only what the conditions above keep: a wait reads the phase bit of ``pi`` of its mbarrier in
``sigma s``, which is that of its mbarrier in ``s``; an arrive or a landing writes the same counts
into the renamed word; ``after-exit`` reads whether every process of the landing CTA finished
(the processes of ``pi y`` are the images of those of ``y``, with programs of the same length);
``mma-early`` reads, per CTA ``x`` read, the pcs of the loads of that iteration into ``x`` and
their in-flight items (renamed together); ``mma-reads-landing`` and ``load-over-read`` read the
in-flight items, the readers' pcs and the overlaps (kept). Step boundaries depend on action kinds
only. So ``s -t-> s2`` iff ``sigma s -sigma t-> sigma s2``, ``t`` fails a check at ``s`` iff
``sigma t`` fails the renamed check at ``sigma s``, ``s`` is a deadlock iff ``sigma s`` is, and the
start state (every pc 0, each mbarrier at its init count, nothing in flight) is fixed. The kind a
failing step reports is its first failing check in the step's order, which a renaming may reorder
(a load's destinations, a commit's mbarriers): a reported error is always one the full system
reaches from a reachable state, so a *counterexample stays a counterexample*; its kind is the one
that state's step reports.

**Lemma 2** (symmetric search). A search that replaces every state it reaches by ``sigma s`` for
some automorphism ``sigma`` (:func:`canonical`: the least image under the group) reaches an error
or a deadlock iff the full system does. Proof: every state it holds is ``sigma`` of a reachable
state, so reachable (Lemma 1, the start fixed), and what it reports is real. Conversely, induction
on the length ``n`` of a shortest path from a state ``s`` to an error or a deadlock ``d``: the
search steps ``s -t-> s2`` on the path's first transition (all of them, or with a stubborn set at
``s`` one that keeps a path of length ``n - 1`` from ``s2``:
:mod:`verilayout.simulate.mcast_stubborn`'s lemma, a statement about ``s`` alone, which is a state
of the full system) and holds ``sigma s2``, from which ``sigma d`` (an error or a deadlock, Lemma 1)
is ``n - 1`` steps away. Hence ``proved`` (no error, no deadlock reached) is sound and complete.

>>> from verilayout.simulate.mcast_ring import McastSystem
>>> len(ring_symmetries(McastSystem(1, ((), ()), ((0, "producer"), (0, "mma")), ())))
1
"""
from __future__ import annotations

import gc
import itertools
from collections import deque
from typing import NamedTuple

from verilayout.simulate.mcast_ring import McastSystem, flight_items, ring_step, ring_tables
from verilayout.simulate.ring import Exploration

__all__ = ["StatePerm", "ring_symmetries", "canonical", "explore_symmetric", "MAX_SYMMETRY_CTAS"]

#: Clusters up to this many CTAs are searched for symmetries (every permutation tried); larger: none.
MAX_SYMMETRY_CTAS = 6


class StatePerm(NamedTuple):
    """One automorphism on flat states: ``order`` (``v2[i] = v[order[i]]``), ``items`` (in-flight item
    -> renamed item), ``cta`` (``cta[x]``: the image of CTA ``x``)."""
    order: tuple
    items: dict
    cta: tuple


def _bar(pi: tuple, bar: tuple) -> tuple:
    return (pi[bar[0]], bar[1])


def _sig(a, y: int) -> int:
    return a.sig[a.dests.index(y)] if a.sig else y


def _same_action(a, b, pi: tuple) -> bool:
    """Law: ``b`` is ``a`` renamed by ``pi`` (every field the search reads; byte ranges apart)."""
    if a.kind != b.kind:
        return False
    if a.kind == "wait":
        return _bar(pi, a.bar) == b.bar and a.parity == b.parity
    if a.kind == "arrive":
        return _bar(pi, a.bar) == b.bar and (a.count, a.tx) == (b.count, b.tx)
    if a.kind == "mcast-load":
        return (pi[a.sender] == b.sender and (a.it, a.bar, a.nbytes) == (b.it, b.bar, b.nbytes)
                and sorted(pi[y] for y in a.dests) == sorted(b.dests)
                and all(pi[_sig(a, y)] == _sig(b, pi[y]) for y in a.dests))
    if a.kind == "mma":
        return (a.it, a.tile) == (b.it, b.tile)
    if a.kind == "mma-commit":
        return (sorted(_bar(pi, x) for x in a.bars) == sorted(b.bars) and a.done == b.done
                and a.bars[0][1] == b.bars[0][1])
    return False


def _reads(s: McastSystem, p: int) -> tuple:
    return (s.reads[p] if s.reads and s.reads[p] else None) or (s.roles[p][0],)


def _overlaps(s: McastSystem) -> dict:
    """``(p, i, y, m)`` -> whether load ``(p, i)``'s ranges overlap iteration ``m``'s loads into ``y``."""
    loaded: dict = {}
    for acts in s.prog:
        for a in acts:
            if a.kind == "mcast-load":
                for y in a.dests:
                    loaded.setdefault((y, a.it), []).extend(a.regions)
    its = sorted({m for _, m in loaded})
    return {(p, i, y, m): any(lo < h and l2 < hi for lo, hi in a.regions for l2, h in loaded.get((y, m), ()))
            for p, acts in enumerate(s.prog) for i, a in enumerate(acts) if a.kind == "mcast-load"
            for y in a.dests for m in its}


def _proc_map(s: McastSystem, pi: tuple):
    where = {r: q for q, r in enumerate(s.roles)}
    if len(where) != len(s.roles):
        return None
    out = [where.get((pi[x], role)) for x, role in s.roles]
    return None if None in out else tuple(out)


def _is_automorphism(s: McastSystem, pi: tuple, pm: tuple, over: dict) -> bool:
    init = dict(s.init)
    if any(init.get(_bar(pi, b)) != c for b, c in s.init):
        return False
    for p, q in enumerate(pm):
        if len(s.prog[p]) != len(s.prog[q]) or sorted(pi[x] for x in _reads(s, p)) != sorted(_reads(s, q)):
            return False
        if not all(_same_action(a, b, pi) for a, b in zip(s.prog[p], s.prog[q])):
            return False
    return all(got == over.get((pm[p], i, pi[y], m)) for (p, i, y, m), got in over.items())


def _state_perm(s: McastSystem, pi: tuple, pm: tuple) -> StatePerm:
    n = len(s.prog)
    idx = {b: k for k, (b, _) in enumerate(s.init)}
    order = [0] * (n + len(s.init))
    for p, q in enumerate(pm):
        order[q] = p
    for b, k in idx.items():
        order[n + idx[_bar(pi, b)]] = n + k
    items = {}
    for it in flight_items(s):
        p, j, ys = it
        q = pm[p]
        items[it] = (q, j, (pi[ys[0]],)) if s.landing == "per-dest" else (q, j, s.prog[q][j].dests)
    return StatePerm(tuple(order), items, pi)


def ring_symmetries(system: McastSystem) -> tuple:
    """Law: every CTA permutation under which ``system`` is its own renaming (module docstring), as
    :class:`StatePerm` s, the identity first; only the identity past :data:`MAX_SYMMETRY_CTAS` CTAs.

    >>> from verilayout.simulate.mcast_ring import McastSystem
    >>> roles = ((0, "producer"), (0, "mma"), (1, "producer"), (1, "mma"))
    >>> ring_symmetries(McastSystem(2, ((), (), (), ()), roles, ()))[1].cta
    (1, 0)
    """
    ids = tuple(range(system.ncta))
    perms = itertools.permutations(ids) if system.ncta <= MAX_SYMMETRY_CTAS else iter([ids])
    over = _overlaps(system)
    out = []
    for pi in perms:
        pm = _proc_map(system, pi)
        if pm is not None and (pi == ids or _is_automorphism(system, pi, pm, over)):
            out.append(_state_perm(system, pi, pm))
    return tuple(out)


def canonical(state: tuple, perms: tuple) -> tuple:
    """Law: the least image of the flat state ``(v, flight)`` under ``perms`` (the pcs and mbarrier
    words compared first, then the sorted in-flight items); ``state`` itself when it is the least.

    >>> canonical(((2, 1), frozenset()), (StatePerm((0, 1), {}, (0,)), StatePerm((1, 0), {}, (0,))))
    ((1, 2), frozenset())
    """
    v, flight = state
    best, low, items = state, v, None
    for perm in perms[1:]:
        v2 = tuple(v[j] for j in perm.order)
        if v2 > low:
            continue
        f2 = sorted(perm.items[x] for x in flight)
        if v2 == low:
            if items is None:
                items = sorted(best[1])
            if f2 >= items:
                continue
        best, low, items = (v2, frozenset(f2)), v2, f2
    return best


def explore_symmetric(system: McastSystem, *, max_states: int) -> Exploration:
    """Breadth first over every interleaving and landing order of ``system`` (the tabled steps of
    :func:`verilayout.simulate.mcast_ring.explore_mcast`), each state reached replaced by
    :func:`canonical` under :func:`ring_symmetries` (Lemma 2, every transition followed).

    Law: ``counterexample`` with ``(McastFinding, mark)`` of a reachable error, ``deadlock`` with
    the blocked processes of a reachable deadlock, ``unknown`` beyond ``max_states`` states, else
    ``proved``. Init counts below 2**20 (the tabled mbarrier word; PTX ISA 9.7.13.15: an mbarrier's
    expected count is at most 2**20 - 1).

    >>> explore_symmetric(McastSystem(1, ((), ()), ((0, "producer"), (0, "mma")), ()), max_states=10).outcome
    'proved'
    """
    perms, f = ring_symmetries(system), ring_tables(system)
    start = (tuple(0 for _ in system.prog) + tuple(c << 1 for _, c in system.init), frozenset())
    lens, n = f.lens, len(system.prog)
    seen, queue = {start}, deque([start])
    was = gc.isenabled()
    gc.disable()                              # the states hold no cycles (as explore_mcast)
    try:
        while queue:
            if len(seen) > max_states:
                return Exploration("unknown", None, (), len(seen))
            st = queue.popleft()
            succ, err, blocked = ring_step(st, f)
            if err:
                return Exploration("counterexample", err, (), len(seen))
            if not succ:
                if st[1] or any(st[0][p] < lens[p] for p in range(n)):
                    return Exploration("deadlock", None, tuple(blocked), len(seen))
                continue
            for x in succ:
                x = canonical(x, perms) if len(perms) > 1 else x
                if x not in seen:
                    seen.add(x)
                    queue.append(x)
    finally:
        if was:
            gc.enable()
    return Exploration("proved", None, (), len(seen))
