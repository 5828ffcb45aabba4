"""The K ring of an sm_100a cluster of ``cta_group::1`` CTAs with TMA multicast, as one transition
system explored over every interleaving (the ``mcast-ring`` check of
:mod:`verilayout.simulate.mcast_check`).

Processes: per CTA its producer (the thread issuing TMA loads) and its MMA thread. Several MMA
threads, one per CTA, each reading only its own CTA's stages, is what the CTA pair's
:class:`verilayout.simulate.ring.MmaRingSystem` (one MMA thread) does not model; the actions are
its types (:class:`~verilayout.simulate.ring.Wait`, :class:`~verilayout.simulate.ring.Arrive`,
:class:`~verilayout.simulate.ring.Mma`, :class:`~verilayout.simulate.ring.MmaCommit`) and a
:class:`McastLoad` naming its destination CTAs; the search is :func:`verilayout.simulate.ring.explore`.

Everything asynchronous is *in flight* from its issue until it lands, at any later step, in
each destination separately: a TMA load's bytes complete on the mbarrier at its offset in each
CTA of its mask (PTX ISA 9.7.9.25, ``.multicast::cluster``; the tx-count may go below zero before
the ``expect_tx``, PTX ISA 9.7.13.15), a ``tcgen05.commit ... .multicast::cluster`` arrives once
on the mbarrier at its offset in each CTA of its mask once the MMAs before it completed (PTX ISA
9.7.16; completion taken at the commit, its arrivals in flight). Errors, by name:

* ``mma-early``: an MMA of K iteration ``n`` issued before every load of iteration ``n`` into its
  CTA (from any sender) was issued and landed there;
* ``mma-reads-landing``: an MMA reads stage bytes a load of another iteration in flight is writing;
* ``load-over-read``: a load writes, in some destination, stage bytes an MMA of that CTA issued and
  not yet committed reads;
* ``over-arrive``: an arrival (an ``expect_tx``, a landing commit) beyond the count of a phase;
* ``after-exit``: a load lands in, or a commit is issued to, a CTA whose producer and MMA thread
  have both finished (stricter than the kernel's closing cluster barrier, which a CTA passes only
  with its peers);
* a deadlock (a process waits on a phase that never completes: a release a producer never gets).

The search (:func:`explore_mcast`) reads each step from tables made once per system: per
(process, pc) its wait, its end and its actions with what they check (the loads an MMA needs, the
in-flight loads it must not read under, the pcs of a reader at which a load would overwrite its
uncommitted operands), per in-flight item its landings; a state is one tuple of small ints (pcs,
each mbarrier's phase, pending count and tx-count as one int) and the in-flight set. It is the
same breadth-first search as the one that applies each action to the state
(``explore_mcast(..., reference=True)``): the same states stepped in the same order, so the same
answer and state count (``tests/mcast_reference.py``; ``benchmarks/mcast_ring_speed.py`` times both).

>>> s = McastSystem(1, ((), ()), ((0, "producer"), (0, "mma")), ())
>>> explore_mcast(s, max_states=10).outcome
'proved'
"""
from __future__ import annotations

import gc
from collections import deque
from dataclasses import dataclass
from typing import Any, NamedTuple

from verilayout.simulate.ring import Exploration, complete_phase, explore, step_ends

__all__ = ["McastLoad", "McastSystem", "McastFinding", "OBSERVED", "explore_mcast"]

#: The kinds after which a process's atomic step ends (others observe them).
OBSERVED = ("arrive", "mcast-load", "mma", "mma-commit")


class McastLoad(NamedTuple):
    """The TMA loads of CTA ``sender`` in K iteration ``it`` into the CTAs ``dests``, ``nbytes``
    completing on mbarrier offset ``bar`` of each, writing the shared byte ranges ``regions``
    (the same offsets in every destination); ``sig``: per destination the CTA whose mbarrier its
    bytes complete on (``.cta_group::2``: the destination's pair leader; empty: the destination)."""
    kind: str
    sender: int
    it: int
    dests: tuple
    bar: int
    nbytes: int
    regions: tuple
    mark: Any
    sig: tuple = ()


class McastFinding(NamedTuple):
    """An error: ``what`` (module docstring), the process ``p`` and its ``values``."""
    what: str
    p: int
    values: tuple


@dataclass(frozen=True)
class McastSystem:
    """``ncta`` CTAs' producers and MMA threads: ``prog`` their actions, ``roles`` each process's
    ``(CTA, "producer" | "mma")``, ``init`` every mbarrier ``((CTA, offset), count)`` used;
    ``landing``: ``per-dest`` (a multicast lands in each destination at a step of its own),
    ``atomic`` (in all its destinations at one step) or ``eager`` (at its issue: the landing
    assumption of :data:`verilayout.simulate.gemm_check.LANDING_ASSUMPTION`), coarser searches
    for larger clusters. ``reads``: per process the CTAs whose stages its MMAs read (a CTA pair's
    leader: both; empty: its own CTA)."""
    ncta: int
    prog: tuple
    roles: tuple
    init: tuple
    landing: str = "per-dest"
    reads: tuple = ()


class _Tables(NamedTuple):
    bars: dict
    counts: dict
    ends: list
    loads: dict
    regions: dict
    procs: dict
    readers: dict


def _tables(s: McastSystem) -> _Tables:
    """Law: barrier index and count, step ends, the loads into each (CTA, iteration) as (process,
    pc), their regions, the processes of each CTA."""
    loads: dict = {}
    for p, acts in enumerate(s.prog):
        for i, a in enumerate(acts):
            if a.kind == "mcast-load":
                for y in a.dests:
                    loads.setdefault((y, a.it), []).append((p, i))
    regions = {k: [r for p, i in v for r in s.prog[p][i].regions] for k, v in loads.items()}
    procs: dict = {}
    for p, (x, _) in enumerate(s.roles):
        procs.setdefault(x, []).append(p)
    readers: dict = {}
    for p in range(len(s.prog)):
        for y in _reads(s, p):
            readers.setdefault(y, []).append(p)
    return _Tables({b: i for i, (b, _) in enumerate(s.init)}, dict(s.init),
                   [step_ends(acts, OBSERVED) for acts in s.prog], loads, regions, procs, readers)


def _reads(s: McastSystem, p: int) -> tuple:
    """The CTAs whose stages process ``p``'s MMAs read."""
    return (s.reads[p] if s.reads and s.reads[p] else None) or (s.roles[p][0],)


def explore_mcast(system: McastSystem, *, max_states: int, reference: bool = False) -> Exploration:
    """Every interleaving of ``system``'s processes and every landing order, breadth first.

    Law: :func:`verilayout.simulate.ring.explore`'s answer: ``counterexample`` with
    ``(McastFinding, mark)``, ``deadlock`` with ``(process, Wait)`` of each blocked process,
    ``unknown`` beyond ``max_states``, else ``proved``; ``reference``: each action applied to the
    state as it comes (:func:`_step`), the same answer and states in the same order, slower.
    """
    t = _tables(system)
    if not reference and all(0 <= c <= _PENDING for _, c in system.init):
        start = (tuple(0 for _ in system.prog) + tuple(_word(0, c, 0) for _, c in system.init), frozenset())
        was = gc.isenabled()
        gc.disable()                          # the states hold no cycles; the collector's passes
        try:                                  # over a growing seen set cost more than the search
            return _search(start, _fast_tables(system, t), max_states)
        finally:
            if was:
                gc.enable()
    start = (tuple(0 for _ in system.prog), tuple((0, c, 0) for _, c in system.init), frozenset())
    return explore(start, lambda st: _step(st, system, t), system.prog, max_states=max_states)


def _exited(y: int, pcs, s: McastSystem, t: _Tables) -> bool:
    return all(pcs[p] >= len(s.prog[p]) for p in t.procs.get(y, ()))


def _land(p: int, i: int, y: int, pcs, bs, s: McastSystem, t: _Tables):
    """Law: ``(mbarriers, error)`` after action ``(p, i)`` lands in CTA ``y``."""
    a = s.prog[p][i]
    if _exited(y, pcs, s, t):
        return bs, McastFinding("after-exit", p, (a.kind, y))
    bar = ((a.sig[a.dests.index(y)] if a.sig else y), a.bar) if a.kind == "mcast-load" else (y, a.bars[0][1])
    if bar not in t.bars:
        return bs, McastFinding("over-arrive", p, (bar,))
    k = t.bars[bar]
    phase, pending, tx = bs[k]
    if a.kind == "mcast-load":
        return bs[:k] + (complete_phase(phase, pending, tx - a.nbytes, t.counts[bar]),) + bs[k + 1:], None
    if pending < 1:
        return bs, McastFinding("over-arrive", p, (bar,))
    return bs[:k] + (complete_phase(phase, pending - 1, tx, t.counts[bar]),) + bs[k + 1:], None


def _step(st, s: McastSystem, t: _Tables):
    """Law: ``(successors, error, blocked)``: each arrival in flight landing, then each process's
    atomic step."""
    pcs, bs, flight = st
    succ, blocked = [], []
    for item in flight:
        nb = bs
        for y in item[2]:
            nb, err = _land(item[0], item[1], y, pcs, nb, s, t)
            if err is not None:
                return [], (err, s.prog[item[0]][item[1]].mark), []
        succ.append((pcs, nb, flight - {item}))
    for p, acts in enumerate(s.prog):
        pc = pcs[p]
        if pc >= len(acts):
            continue
        if acts[pc].kind == "wait" and bs[t.bars[acts[pc].bar]][0] & 1 == acts[pc].parity:
            blocked.append((p, acts[pc]))
            continue
        cur = [bs, flight]
        for j in range(pc + (acts[pc].kind == "wait"), t.ends[p][pc]):
            err = _apply(p, j, acts[j], cur, pcs, s, t)
            if err is not None:
                return [], (err, acts[j].mark), []
        succ.append((pcs[:p] + (t.ends[p][pc],) + pcs[p + 1:], cur[0], cur[1]))
    return succ, None, blocked


def _apply(p: int, j: int, a, cur: list, pcs, s: McastSystem, t: _Tables):
    """Apply ``a`` (pc ``j`` of ``p``) to ``cur`` = [mbarriers, in flight]: None or a finding."""
    if a.kind == "arrive":
        k = t.bars.get(a.bar)
        if k is None or cur[0][k][1] - a.count < 0:
            return McastFinding("over-arrive", p, (a.bar,))
        phase, pending, tx = cur[0][k]
        cur[0] = cur[0][:k] + (complete_phase(phase, pending - a.count, tx + a.tx, t.counts[a.bar]),) + cur[0][k + 1:]
    elif a.kind == "mcast-load":
        err = _load_over_read(p, a, pcs, s, t)
        if err is not None:
            return err
        if s.landing == "eager":
            for y in a.dests:
                bs, err = _land(p, j, y, pcs, cur[0], s, t)
                if err is not None:
                    return err
                cur[0] = bs
        else:
            cur[1] = cur[1] | _items(p, j, a.dests, s.landing == "per-dest")
    elif a.kind == "mma":
        return _mma_issue(p, a, cur[1], pcs, s, t)
    elif a.kind == "mma-commit":
        for y, _ in a.bars:
            bs, err = _land(p, j, y, pcs, cur[0], s, t)
            if err is not None:
                return err
            cur[0] = bs
    return None


def _items(p: int, j: int, dests: tuple, per_dest: bool) -> set:
    """The in-flight items of action ``(p, j)``: one per destination, or one for all."""
    return {(p, j, (y,)) for y in dests} if per_dest else {(p, j, dests)}


def _overlap(xs, ys) -> bool:
    return any(lo < h and l2 < hi for lo, hi in xs for l2, h in ys)


def _pending_mmas(q: int, pc: int, s: McastSystem) -> list:
    """The MMAs of process ``q`` issued before ``pc`` and after its last commit before ``pc``."""
    acts = s.prog[q][:pc]
    last = max((i for i, a in enumerate(acts) if a.kind == "mma-commit"), default=-1)
    return [a for a in acts[last + 1:] if a.kind == "mma"]


def _load_over_read(p: int, a: McastLoad, pcs, s: McastSystem, t: _Tables):
    for y in a.dests:
        for q in t.readers.get(y, ()):
            for m in _pending_mmas(q, pcs[q], s):
                if m.it != a.it and _overlap(a.regions, t.regions.get((y, m.it), ())):
                    return McastFinding("load-over-read", p, (y, a.it, m.it))
    return None


def _mma_issue(p: int, a, flight, pcs, s: McastSystem, t: _Tables):
    """The MMA of ``a.it`` reading CTA ``x`` (each of :func:`_reads`): every load of that iteration
    into ``x`` issued and landed there; none of another iteration landing on the bytes it reads."""
    for x in _reads(s, p):
        for q, i in t.loads.get((x, a.it), ()):
            if pcs[q] <= i or any(f[:2] == (q, i) and x in f[2] for f in flight):
                return McastFinding("mma-early", p, (a.it, x, s.roles[q][0]))
        mine = t.regions.get((x, a.it), ())
        for q, i, ys in flight:
            b = s.prog[q][i]
            if x in ys and b.kind == "mcast-load" and b.it != a.it and _overlap(b.regions, mine):
                return McastFinding("mma-reads-landing", p, (a.it, x, b.it))
    return None


# ----- the tabled search: the same transition system, its successors read from tables ------------
# A state is ``(v, flight)``: ``v`` the pcs then each mbarrier's (phase, pending, tx) flattened
# (one tuple of small ints), ``flight`` the same frozenset of in-flight items as the reference
# search's, built by the same operations so that it is iterated in the same order. Everything a
# step consults that depends only on a (process, pc) or an in-flight item is computed once.

class _Fast(NamedTuple):
    nproc: int
    steps: list          # per process, per pc: None (finished) or (wait index or -1, parity, end, ops)
    lands: dict          # in-flight item -> ((land op, ...), (finding, mark) of a failed landing)
    lens: tuple
    prog: tuple
    memo: dict           # see _union; id of an in-flight set -> (that set, _landings)


def _land_op(p: int, i: int, y: int, s: McastSystem, t: _Tables) -> tuple:
    """``(exit list, mbarrier index or -1, bytes, count, is load, after-exit, over-arrive)`` of
    action ``(p, i)`` landing in CTA ``y`` (:func:`_land`)."""
    a = s.prog[p][i]
    load = a.kind == "mcast-load"
    bar = ((a.sig[a.dests.index(y)] if a.sig else y), a.bar) if load else (y, a.bars[0][1])
    exits = tuple((q, len(s.prog[q])) for q in t.procs.get(y, ()))
    k = t.bars.get(bar, -1)
    return (exits, k, a.nbytes if load else 0, t.counts.get(bar, 0), load,
            McastFinding("after-exit", p, (a.kind, y)), McastFinding("over-arrive", p, (bar,)))


def _load_table(p: int, a: McastLoad, s: McastSystem, t: _Tables) -> tuple:
    """Per (destination, reader) in :func:`_load_over_read`'s order: ``(reader, finding by its pc)``."""
    out = []
    for y in a.dests:
        for q in t.readers.get(y, ()):
            by_pc = tuple(next((McastFinding("load-over-read", p, (y, a.it, m.it)) for m in _pending_mmas(q, pc, s)
                                if m.it != a.it and _overlap(a.regions, t.regions.get((y, m.it), ()))), None)
                          for pc in range(len(s.prog[q]) + 1))
            if any(by_pc):
                out.append((q, by_pc))
    return tuple(out)


def _flight_items(s: McastSystem) -> list:
    """Every in-flight item the landing model can create, in program order."""
    if s.landing == "eager":
        return []
    return [it for p, acts in enumerate(s.prog) for j, a in enumerate(acts) if a.kind == "mcast-load"
            for it in sorted(_items(p, j, a.dests, s.landing == "per-dest"))]


def _mma_table(p: int, a, s: McastSystem, t: _Tables, items: list) -> tuple:
    """Per CTA read (:func:`_mma_issue`'s order): ``(early checks, landing conflicts)``, the early
    checks ``(process, pc, in-flight item, finding)``, the conflicts in-flight item -> finding."""
    out = []
    for x in _reads(s, p):
        early = []
        for q, i in t.loads.get((x, a.it), ()):
            key = (q, i, (x,)) if s.landing == "per-dest" else (q, i, s.prog[q][i].dests)
            early.append((q, i, key, McastFinding("mma-early", p, (a.it, x, s.roles[q][0]))))
        mine = t.regions.get((x, a.it), ())
        clash = {}
        for q, i, ys in items:
            b = s.prog[q][i]
            if x in ys and b.it != a.it and _overlap(b.regions, mine):
                clash[(q, i, ys)] = McastFinding("mma-reads-landing", p, (a.it, x, b.it))
        out.append((tuple(early), clash))
    return tuple(out)


def _ops(p: int, pc: int, s: McastSystem, t: _Tables, items: list) -> tuple:
    """The atomic step of ``p`` at ``pc`` as ``(op, data, mark)`` (:func:`_apply`)."""
    acts, ops = s.prog[p], []
    for j in range(pc + (acts[pc].kind == "wait"), t.ends[p][pc]):
        a = acts[j]
        if a.kind == "arrive":
            k = t.bars.get(a.bar, -1)
            ops.append((0, (k, a.count, a.tx, t.counts.get(a.bar, 0), McastFinding("over-arrive", p, (a.bar,))), a.mark))
        elif a.kind == "mcast-load":
            lands = tuple(_land_op(p, j, y, s, t) for y in a.dests) if s.landing == "eager" else ()
            ops.append((1, (_load_table(p, a, s, t), lands, _items(p, j, a.dests, s.landing == "per-dest")), a.mark))
        elif a.kind == "mma":
            ops.append((2, _mma_table(p, a, s, t, items), a.mark))
        elif a.kind == "mma-commit":
            ops.append((3, tuple(_land_op(p, j, y, s, t) for y, _ in a.bars), a.mark))
    return tuple(ops)


def _fast_tables(s: McastSystem, t: _Tables) -> _Fast:
    """Law: per (process, pc) its step's wait, end and operations; per in-flight item its landings."""
    items = _flight_items(s)
    steps = []
    for p, acts in enumerate(s.prog):
        row = []
        for pc, a in enumerate(acts):
            k = t.bars.get(a.bar, a.bar) if a.kind == "wait" else -1   # unknown: KeyError when reached
            row.append((k, a.parity if a.kind == "wait" else 0, t.ends[p][pc], _ops(p, pc, s, t, items)))
        steps.append(row)
    lands = {it: (tuple(_land_op(it[0], it[1], y, s, t) for y in it[2]), s.prog[it[0]][it[1]].mark) for it in items}
    return _Fast(len(s.prog), steps, lands, tuple(len(acts) for acts in s.prog), s.prog, {})


def _search(start, f: _Fast, max_states: int) -> Exploration:
    """:func:`verilayout.simulate.ring.explore` on the flat states (the same order, the same law)."""
    seen = {start}
    queue = deque([start])
    n, lens = f.nproc, f.lens
    while queue:
        if len(seen) > max_states:
            return Exploration("unknown", None, (), len(seen))
        s = queue.popleft()
        succ, err, blocked = _fast_step(s, f)
        if err:
            return Exploration("counterexample", err, (), len(seen))
        if not succ:
            if not s[1] and all(s[0][p] == lens[p] for p in range(n)):
                continue
            return Exploration("deadlock", None, tuple(blocked), len(seen))
        for x in succ:
            k = len(seen)
            seen.add(x)
            if len(seen) != k:
                queue.append(x)
    return Exploration("proved", None, (), len(seen))


def _word(phase: int, pending: int, tx: int) -> int:
    """One mbarrier's ``(phase, pending, tx)`` as one int (injective for ``0 <= pending < 2**20``).

    >>> [_unword(_word(*b)) for b in ((1, 2, 0), (0, 0, -64), (1, 5, 128))]
    [(1, 2, 0), (0, 0, -64), (1, 5, 128)]
    """
    return (tx << 21) | (pending << 1) | phase


def _unword(w: int) -> tuple:
    return w & 1, (w >> 1) & _PENDING, w >> 21


_PENDING = (1 << 20) - 1


def _after(phase: int, pending: int, tx: int, count: int) -> int:
    """Law: :func:`verilayout.simulate.ring.complete_phase` as a word."""
    if pending == 0 and tx == 0:
        return (count << 1) | (phase ^ 1)
    return (tx << 21) | (pending << 1) | phase


def _fast_land(op: tuple, v: tuple, n: int):
    """Law: :func:`_land` on the flat state ``v`` (``n`` processes): ``(v, finding or None)``."""
    exits, k, nbytes, count, load, after, over = op
    for q, m in exits:
        if v[q] < m:
            break
    else:
        return v, after
    if k < 0:
        return v, over
    o = n + k
    w = v[o]
    pending = (w >> 1) & _PENDING
    if load:
        return v[:o] + (_after(w & 1, pending, (w >> 21) - nbytes, count),) + v[o + 1:], None
    if pending < 1:
        return v, over
    return v[:o] + (_after(w & 1, pending - 1, w >> 21, count),) + v[o + 1:], None


def _fast_op(p: int, op: tuple, cur: list, v0: tuple, f: _Fast):
    """Law: :func:`_apply` of one tabled operation to ``cur`` = [flat state, in flight]; ``v0``:
    the state before the step (its pcs are the ones the checks read). None or a finding."""
    code, d = op[0], op[1]
    if code == 0:
        k, cnt, tx, count, over = d
        if k < 0:
            return over
        o = f.nproc + k
        v = cur[0]
        w = v[o]
        pending = ((w >> 1) & _PENDING) - cnt
        if pending < 0:
            return over
        cur[0] = v[:o] + (_after(w & 1, pending, (w >> 21) + tx, count),) + v[o + 1:]
    elif code == 1:
        for q, by_pc in d[0]:
            if by_pc[v0[q]] is not None:
                return by_pc[v0[q]]
        if d[1]:
            return _fast_lands(d[1], cur, f.nproc)
        cur[1] = _union(f.memo, cur[1], d[2])
    elif code == 2:
        return _fast_mma(d, cur[1], v0)
    else:
        return _fast_lands(d, cur, f.nproc)
    return None


def _landings(flight: frozenset, f: _Fast) -> list:
    """Per item of ``flight`` in its order: its landings, its mark, ``flight`` without it (made
    as the reference search makes it, once per ``flight`` object)."""
    return [f.lands[item] + (flight - {item},) for item in flight]


def _union(memo: dict, flight: frozenset, items: set) -> frozenset:
    """``flight | items``, computed once per (``flight`` object, ``items`` object): every set here
    is made from the empty one by the reference search's operations on equal operands, so it is
    the reference's set in every respect, its iteration order included; its hash is computed once."""
    key = (id(flight), id(items))
    got = memo.get(key)
    if got is None:
        got = memo[key] = (flight, flight | items)       # flight kept alive: its id stays its own
    return got[1]


def _fast_lands(lands: tuple, cur: list, n: int):
    """Each landing in turn on ``cur[0]`` (its pcs are the step's first state's until it ends)."""
    for op in lands:
        v, err = _fast_land(op, cur[0], n)
        if err is not None:
            return err
        cur[0] = v
    return None


def _fast_mma(table: tuple, flight, v0: tuple):
    """Law: :func:`_mma_issue` from its table."""
    for early, clash in table:
        for q, i, key, f in early:
            if v0[q] <= i or key in flight:
                return f
        if clash:
            for item in flight:
                f = clash.get(item)
                if f is not None:
                    return f
    return None


def _fast_step(st, f: _Fast):
    """Law: :func:`_step` on the flat state: the same successors in the same order."""
    v, flight = st
    n = f.nproc
    succ, blocked = [], []
    info = f.memo.get(id(flight))
    if info is None:
        info = f.memo[id(flight)] = (flight, _landings(flight, f))
    for ops, mark, rest in info[1]:
        nb = v
        for op in ops:
            nb, err = _fast_land(op, nb, n)
            if err is not None:
                return [], (err, mark), []
        succ.append((nb, rest))
    for p in range(n):
        pc = v[p]
        if pc >= f.lens[p]:
            continue
        k, parity, end, ops = f.steps[p][pc]
        if k != -1:
            if not isinstance(k, int):
                raise KeyError(k)
            if v[n + k] & 1 == parity:
                blocked.append((p, f.prog[p][pc]))
                continue
        cur = [v, flight]
        for op in ops:
            err = _fast_op(p, op, cur, v, f)
            if err is not None:
                return [], (err, op[2]), []
        nv = cur[0]
        succ.append((nv[:p] + (end,) + nv[p + 1:], cur[1]))
    return succ, None, blocked


# ----- the tables and steps other explorers of the same system read (mcast_stubborn) -------------

#: The tabled form of a system (:func:`ring_tables`).
RingTables = _Fast
#: The mask of an mbarrier word's pending count (after the phase bit; the tx-count from bit 21).
PENDING_MASK = _PENDING


def ring_tables(system: McastSystem) -> _Fast:
    """Law: the tables the tabled search steps: per (process, pc) its wait, end and operations, per
    in-flight item its landings (:func:`explore_mcast`'s, built the same way).

    >>> ring_tables(McastSystem(1, ((), ()), ((0, "producer"), (0, "mma")), ())).lens
    (0, 0)
    """
    return _fast_tables(system, _tables(system))


def land_op(op: tuple, v: tuple, n: int):
    """Law: one tabled landing operation on the flat state ``v`` of ``n`` processes: ``(state,
    finding or None)`` (the tabled search's step)."""
    return _fast_land(op, v, n)


def apply_op(p: int, op: tuple, cur: list, v0: tuple, tables: _Fast):
    """Law: one tabled operation of process ``p``'s step applied to ``cur`` = [flat state, in
    flight], its checks reading ``v0`` (the state before the step): None or a finding."""
    return _fast_op(p, op, cur, v0, tables)


def flight_items(system: McastSystem) -> list:
    """Law: every in-flight item ``(process, pc, destinations)`` the landing model of ``system`` can
    create, in program order (none under eager landing).

    >>> flight_items(McastSystem(1, ((), ()), ((0, "producer"), (0, "mma")), ()))
    []
    """
    return _flight_items(system)


def ring_step(state: tuple, tables: _Fast):
    """Law: ``(successors, (finding, mark) or None, blocked)`` of the flat state ``(v, in flight)``:
    the tabled search's step (each in-flight item landing, then each process's atomic step).

    >>> s = McastSystem(1, ((), ()), ((0, "producer"), (0, "mma")), ())
    >>> ring_step(((0, 0), frozenset()), ring_tables(s))
    ([], None, [])
    """
    return _fast_step(state, tables)
