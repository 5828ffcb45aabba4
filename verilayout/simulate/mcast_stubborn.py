"""The cluster K ring of :mod:`verilayout.simulate.mcast_ring` explored with strong stubborn sets: a
partial-order reduction that visits a subset of the states and still reaches every reachable
*terminal* state (a deadlock, the normal end, and, errors being transitions into terminal error
states named by their kind, every reachable kind of error).

**Transitions.** ``("s", p, c)``: process ``p``'s atomic step from pc ``c`` (enabled when ``p`` is at
``c`` and, for a wait, the phase of its parity completed); ``("l", item)``: an in-flight item's landing
(enabled while in flight). A transition that fails a check leads to a terminal error state named by
its finding. Programs are straight-line and an item lands once, so every transition occurs at most
once on a path and the state graph is acyclic.

**Independence.** Each transition has the resources it writes and reads: ``("f", item)`` an item's
in-flight bit (an issue and the landing write it; an MMA's ``mma-early`` and ``mma-reads-landing``
checks read it); per mbarrier ``k`` a write of its pending count (``b``: an arrive; ``d``: a commit's
arrival, pending - 1 only), a write of its tx-count only (``t``: a load's landing), a read of its
phase (``w``: a wait); and predicates on another process's pc: ``mma-early`` reads whether a
loader's pc passed its load, ``load-over-read`` which MMAs of a reader are uncommitted,
``after-exit`` whether a CTA's processes finished (each conflicts with exactly the steps of that
process that change its value). Two transitions of different processes (or a landing and anything
but its own issue) commute from every state where both are enabled, neither disabling the other and
each failing a check of the same kind after the other iff before it, unless they share an in-flight
bit written by one, a predicate one changes, or an mbarrier touched by a ``b`` or ``d`` write of one
of them (two ``d`` writes excepted: pending - 1 twice completes the phase once, at the same point,
in either order, and fails ``over-arrive`` in either order when it fails in one). A ``t`` write
against a ``t`` write or a ``w`` read of the same mbarrier ``k``: independent while ``k``'s pending
count is above 0 (no phase completes without a ``b``/``d`` write, and every ``b``/``d`` write of ``k``
that can still occur interferes with both, so it is in the set whenever they are); at pending 0 a
landing of ``n`` bytes completes the phase iff the tx-count is ``n``, so an in-flight landing ``j`` left
out of the set conflicts with a landing ``i`` in it (or a wait on ``k``) only if the tx-count minus a
sum of in-flight landings on ``k`` left out (``j`` excepted) is the bytes of ``i`` or ``j``: every
landing on ``k`` not yet in flight is put in the set, the sums are checked once the set is closed,
and a conflicting ``j`` joins (the sums only shrink as the set grows).

**Stubborn sets** (Valmari's strong stubborn sets). At state ``s`` a set ``T`` is built from one enabled
seed by closing under: an enabled ``t`` in ``T`` brings every transition that interferes with it (as
above) and can still occur; a disabled ``t`` brings a *necessary enabling set* (one transition of it
is on every path from ``s`` that enables ``t``), the cheapest of: a step of ``t``'s process at a pc
between its pc and ``t`` already in ``T``; that process's current step (not ``t`` itself); for a wait of
that process between its pc and ``t`` whose phase now blocks it, the transitions without which the
phase cannot complete: pending count above 0, its ``b``/``d`` writes that can still occur; pending 0
(a ``b``/``d`` write then fails ``over-arrive``) with only landings left to write it, one in-flight
landing ``L`` such that no sum of the other in-flight ones is the tx-count, and every landing not yet
in flight; else every write that can still occur. Only ``T``'s enabled transitions are followed (the
seed giving the fewest). **Lemma** (Valmari 1991, the deadlock-preserving
theorem): every terminal state reachable from ``s`` is reachable in the reduced graph. Proof: let
``s -w-> d`` with ``d`` terminal. If ``w`` held no transition of ``T``, the seed, interfering with none
of ``w``'s transitions, would stay enabled along ``w``: ``d`` not terminal. So let ``t`` be ``w``'s first
transition in ``T``: it is enabled at ``s`` (a disabled one needs a transition of its necessary
enabling set, in ``T``, before it), commutes with every earlier one (none interferes with it), so
``s -t-> s'`` reaches ``d`` by a shorter path; induction on the length of ``w``. Hence: ``proved`` iff
the reduced graph reaches no error and no deadlock; the first error or deadlock it reaches is a
reachable one of the full system (not necessarily the first in the full breadth-first order).

>>> from verilayout.simulate.mcast_ring import McastSystem
>>> explore_stubborn(McastSystem(1, ((), ()), ((0, "producer"), (0, "mma")), ()), max_states=10).outcome
'proved'
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import deque
from typing import NamedTuple

from verilayout.simulate.mcast_ring import PENDING_MASK as _PENDING, RingTables as _Fast, McastSystem, apply_op, land_op, ring_tables
from verilayout.simulate.mcast_symmetry import canonical, ring_symmetries
from verilayout.simulate.ring import Exploration

__all__ = ["explore_stubborn"]


class _Trans(NamedTuple):
    """Per transition id: ``kind`` (``s`` / ``l``), its process (a landing's issuer), its pc (a
    landing's issuing pc), ``interf`` (ids of interfering transitions), ``writes`` (mbarrier indices)."""
    kind: str
    p: int
    pc: int
    item: tuple
    interf: tuple
    soft: tuple
    writes: tuple
    pend_writes: tuple
    landing: int         # a load's landing on one mbarrier: its bytes, else 0


class _Reduction(NamedTuple):
    f: _Fast
    trans: list
    step_id: dict          # (p, pc) -> id
    land_id: dict          # item -> id
    writers: dict          # mbarrier index -> ids writing it
    pend_writers: dict     # mbarrier index -> ids writing its pending count
    waits: list            # per process its wait steps (pc, mbarrier index, parity), in order
    starts: list           # per process its step-start pcs, in order
    counts: tuple          # per mbarrier index its count
    ids: list              # per process its step ids, in the order of ``starts``
    fut: tuple             # per id: (process, pc, in-flight item or None): see _future
    gate: tuple            # per id: (process, pc, waited mbarrier's word index or -1, parity); landings None


def _land_rw(op: tuple, w: set, r: set, pred: set, f: _Fast, ends: list) -> None:
    exits, k, load = op[0], op[1], op[4]
    if k >= 0:
        w.add(("t" if load else "d", k))
    for q, m in exits:
        pred.update(("s", q, c) for c in ends[q] if ends[q][c] == m)


def _step_rw(p: int, pc: int, f: _Fast, ends: list) -> tuple:
    """Law: ``(writes, reads, predicate conflicts)`` of the step of ``p`` at ``pc``."""
    k, _, _, ops = f.steps[p][pc]
    w, r, pred = set(), set(), set()
    if k != -1:
        r.add(("w", k))
    for code, d, _ in ops:
        if code == 0 and d[0] >= 0:
            w.add(("b", d[0]) if d[1] else ("t", d[0]))
        elif code == 1:
            for q, by_pc in d[0]:
                pred.update(("s", q, c) for c, e in ends[q].items() if by_pc[c] != by_pc[e])
            for op in d[1]:
                _land_rw(op, w, r, pred, f, ends)
            w.update(("f", it) for it in (d[2] if not d[1] else ()))
        elif code == 2:
            for early, clash in d:
                for q, i, key, _ in early:
                    r.add(("f", key))
                    pred.update(("s", q, c) for c, e in ends[q].items() if c <= i < e)
                r.update(("f", it) for it in clash)
        else:
            for op in d:
                _land_rw(op, w, r, pred, f, ends)
    return w, r, pred


def _reduction(s: McastSystem) -> _Reduction:
    """Law: every transition with its interfering ones (module docstring)."""
    f = ring_tables(s)
    ends = [{c: f.steps[p][c][2] for c in _starts(f, p)} for p in range(f.nproc)]
    for p in range(f.nproc):                  # a wait on a barrier no init names: as the full search
        for c in ends[p]:
            if not isinstance(f.steps[p][c][0], int):
                raise KeyError(f.steps[p][c][0])
    keys, rws = [], []
    for p in range(f.nproc):
        for c in ends[p]:
            keys.append(("s", p, c))
            rws.append(_step_rw(p, c, f, ends))
    issue = {it: (p, c) for p in range(f.nproc) for c in ends[p] for code, d, _ in f.steps[p][c][3]
             if code == 1 and not d[1] for it in d[2]}
    for it in sorted(f.lands):
        w, r, pred = {("f", it)}, set(), set()
        for op in f.lands[it][0]:
            _land_rw(op, w, r, pred, f, ends)
        keys.append(("l",) + issue[it] + (it,))
        rws.append((w, r, pred))
    ids = {k: i for i, k in enumerate(keys)}
    trans = []
    for i, (key, rw) in enumerate(zip(keys, rws)):
        hard, soft = [], {}
        for j, (key2, rw2) in enumerate(zip(keys, rws)):
            if i == j or _same_thread(key, key2):
                continue
            how = _interference(key, rw, key2, rw2)
            if how is True:
                hard.append(j)
                continue
            for k in how:
                soft.setdefault(k, []).append(j)
        w = rw[0]
        trans.append(_Trans(key[0], key[1], key[2], key[3] if key[0] == "l" else (), tuple(hard),
                            tuple((k, tuple(js)) for k, js in sorted(soft.items())),
                            tuple(sorted({x[1] for x in w if x[0] in "btd"})), tuple(sorted({x[1] for x in w if x[0] in "bd"})),
                            _landing_bytes(key, f)))
    writers: dict = {}
    pend_writers: dict = {}
    for i, t in enumerate(trans):
        for k in t.writes:
            writers.setdefault(k, []).append(i)
        for k in t.pend_writes:
            pend_writers.setdefault(k, []).append(i)
    waits = [[(c, f.steps[p][c][0], f.steps[p][c][1]) for c in sorted(ends[p]) if f.steps[p][c][0] != -1]
             for p in range(f.nproc)]
    step_id = {k[1:]: ids[k] for k in keys if k[0] == "s"}
    starts = [sorted(e) for e in ends]
    fut = tuple((t.p, t.pc, t.item if t.kind == "l" else None) for t in trans)
    gate = tuple(None if t.kind == "l" else (t.p, t.pc, -1 if f.steps[t.p][t.pc][0] == -1
                                             else f.nproc + f.steps[t.p][t.pc][0], f.steps[t.p][t.pc][1])
                 for t in trans)
    return _Reduction(f, trans, step_id, {k[3]: ids[k] for k in keys if k[0] == "l"}, writers, pend_writers,
                      waits, starts, tuple(c for _, c in s.init), [[step_id[(p, c)] for c in cs]
                                                                    for p, cs in enumerate(starts)], fut, gate)


def _interference(key, rw, key2, rw2):
    """Law: True (the two interfere in every state), else the mbarriers whose pending count being 0
    makes them interfere (a tx-count write against a tx-count write or a wait), possibly empty."""
    (w, r, pred), (w2, r2, pred2) = rw, rw2
    if key[:3] in pred2 or key2[:3] in pred:
        return True
    flags = {x for x in w | r if x[0] == "f"}, {x for x in w2 | r2 if x[0] == "f"}
    if flags[0] & {x for x in w2 if x[0] == "f"} or flags[1] & {x for x in w if x[0] == "f"}:
        return True
    soft = set()
    a, b = _bars(w, r), _bars(w2, r2)
    for k in set(a) & set(b):
        if a[k] == b[k] == {"d"}:             # two commits' arrivals: commute (module docstring)
            continue
        if a[k] & {"b", "d"} or b[k] & {"b", "d"}:
            return True
        if "t" in a[k] or "t" in b[k]:
            soft.add(k)
    return soft


def _bars(w: set, r: set) -> dict:
    """Per mbarrier index the ways ``w`` / ``r`` touch it: ``b`` pending written, ``t`` tx-count
    only, ``w`` phase read."""
    out: dict = {}
    for x in w | r:
        if x[0] in "btdw":
            out.setdefault(x[1], set()).add(x[0])
    return out


def _landing_bytes(key: tuple, f: _Fast) -> int:
    """A landing of one load on one mbarrier: its bytes (> 0); anything else: 0."""
    if key[0] != "l" or len(f.lands[key[3]][0]) != 1:
        return 0
    op = f.lands[key[3]][0][0]
    return op[2] if op[4] and op[2] > 0 and op[1] >= 0 else 0


def _same_thread(a: tuple, b: tuple) -> bool:
    """Never enabled together: two steps of one process, a landing and its own issue."""
    return a[1] == b[1] and (a[0] == b[0] == "s" or (a[0] != b[0] and a[2] == b[2]))


def _starts(f: _Fast, p: int) -> list:
    """The pcs where a step of ``p`` starts (0, then each step's end)."""
    out, c = [], 0
    while c < f.lens[p]:
        out.append(c)
        c = f.steps[p][c][2]
    return out


def _future(t: _Trans, v: tuple, flight) -> bool:
    if t.kind == "s":
        return v[t.p] <= t.pc
    return t.item in flight or v[t.p] <= t.pc


def _enabled(t: _Trans, v: tuple, flight, f: _Fast) -> bool:
    if t.kind == "l":
        return t.item in flight
    if v[t.p] != t.pc:
        return False
    k, parity = f.steps[t.p][t.pc][0], f.steps[t.p][t.pc][1]
    return k == -1 or v[f.nproc + k] & 1 != parity


def _can(j: int, v: tuple, flight, fut: tuple) -> bool:
    """Law: :func:`_future` of transition ``j`` (from its row of ``_Reduction.fut``)."""
    p, pc, item = fut[j]
    return v[p] <= pc or (item is not None and item in flight)


def _on(j: int, v: tuple, flight, r: _Reduction) -> bool:
    """Law: :func:`_enabled` of transition ``j`` (from its row of ``_Reduction.gate``)."""
    g = r.gate[j]
    if g is None:
        return r.fut[j][2] in flight
    p, pc, o, parity = g
    return v[p] == pc and (o < 0 or v[o] & 1 != parity)


def _nes(t: _Trans, v: tuple, flight, r: _Reduction, inside: set) -> list:
    """A necessary enabling set of the disabled ``t`` (module docstring), the one adding the fewest
    enabled transitions to ``inside``: for each wait of ``t``'s process from its pc up to ``t``
    whose phase now blocks it, the writers of its mbarrier that can still occur (no path passes
    that wait without one); or the process's current step."""
    q = t.p
    n, pc = r.f.nproc, v[q]
    if pc >= r.f.lens[q]:
        return []
    last = t.pc if t.kind == "l" else t.pc - 1
    cs, ids = r.starts[q], r.ids[q]
    lo = bisect_left(cs, pc)
    for x in range(lo, bisect_right(cs, last)):   # a step the process takes before: already in the set
        if ids[x] in inside:
            return [ids[x]]
    best, cost = None, None
    if t.kind == "l" or pc < t.pc:            # the process must take its current step first
        best = [ids[lo]]                      # (pc is a step start: lo indexes it)
        cost = _cost(best, v, flight, r, inside)
    for c, k, parity in r.waits[q]:
        if c > t.pc:
            break
        if pc <= c and v[n + k] & 1 == parity:
            got = _phase_writers(k, v, flight, r, inside)
            c2 = _cost(got, v, flight, r, inside)
            if cost is None or c2 < cost:
                best, cost = got, c2
    if best is None:                          # a disabled step at its pc is a blocked wait: found above
        raise AssertionError(f"no necessary enabling set for {t}")
    return best


def _phase_writers(k: int, v: tuple, flight, r: _Reduction, inside: set) -> list:
    """Transitions one of which every path completing the current phase of mbarrier ``k`` takes.

    Law: pending count above 0: the pending-count writers that can still occur (no completion
    before one). Pending 0 (an arrive or a commit then fails ``over-arrive``: it completes nothing)
    and every other writer that can still occur a load's landing (each lowers the
    tx-count by its bytes, the phase completing when it reaches 0 exactly): one landing ``L`` in
    flight such that no subset of the other in-flight landings sums to the tx-count, with every
    landing not yet issued (a completing path lands either ``L`` or one not yet in flight). Else
    every writer that can still occur."""
    w = v[r.f.nproc + k]
    fut = r.fut
    if (w >> 1) & _PENDING:
        return [j for j in r.pend_writers.get(k, ()) if j not in inside and _can(j, v, flight, fut)]
    trans = r.trans
    every = [j for j in r.writers.get(k, ()) if _can(j, v, flight, fut)]
    if any(not trans[j].landing and k not in trans[j].pend_writes for j in every):
        return [j for j in every if j not in inside]
    every = [j for j in every if trans[j].landing]   # a pending-count write at 0 fails its check
    ins = [j for j in every if trans[j].item in flight]
    out = [j for j in every if trans[j].item not in flight and j not in inside]
    if not ins:
        return out
    tx = w >> 21
    for j in sorted(ins, key=lambda j: j not in inside):
        sums = {0}
        for j2 in ins:
            if j2 != j:
                sums |= {x + trans[j2].landing for x in sums}
        if tx not in sums:
            return ([] if j in inside else [j]) + out
    return [j for j in every if j not in inside]


def _cost(js: list, v: tuple, flight, r: _Reduction, inside: set) -> tuple:
    new = [j for j in js if j not in inside]
    return sum(1 for j in new if _on(j, v, flight, r)), len(new)


def _stubborn(seed: int, v: tuple, flight, r: _Reduction, bound: int):
    """Law: the closure of ``{seed}`` (module docstring) and its enabled transitions (None once
    more than ``bound``). A landing in flight that only a tx-count write or wait in the set shares
    an mbarrier with (pending count 0) joins only if some sum of the in-flight landings left out can
    bring the tx-count to where one of the two completes the phase (:func:`_completes`)."""
    inside, stack, enabled, deferred = {seed}, [seed], [], []
    n, fut, trans = r.f.nproc, r.fut, r.trans
    while True:
        while stack:
            i = stack.pop()
            t = trans[i]
            if _on(i, v, flight, r):
                enabled.append(i)
                if len(enabled) > bound:
                    return None
                more = [j for j in t.interf if j not in inside and _can(j, v, flight, fut)]
                for k, js in t.soft:
                    if (v[n + k] >> 1) & _PENDING:
                        continue
                    for j in js:
                        if j in inside or not _can(j, v, flight, fut):
                            continue
                        if trans[j].item in flight and trans[j].landing and (t.landing or t.kind == "s"):
                            deferred.append((i, j, k))
                        else:
                            more.append(j)
            else:
                more = [j for j in _nes(t, v, flight, r, inside) if j not in inside]
            if more:
                more = list(dict.fromkeys(more))
                inside.update(more)
                stack += more
        late = [j for i, j, k in deferred if j not in inside and _completes(i, j, k, v, flight, r, inside)]
        if not late:
            return enabled
        inside.update(late)
        stack += list(dict.fromkeys(late))


def _completes(i: int, j: int, k: int, v: tuple, flight, r: _Reduction, inside: set) -> bool:
    """Whether landing ``j`` (outside the set) and ``i`` (in it: a landing, or a step reading or
    writing mbarrier ``k``) may fail to commute: ``i`` not a plain landing, or the tx-count minus a
    sum of in-flight landings on ``k`` outside the set (``j`` excepted) equals the bytes of ``i`` or
    ``j`` (that one would complete the phase). Landings not in flight on ``k`` are in the set."""
    ti, tj = r.trans[i], r.trans[j]
    if (ti.kind == "s" and k in ti.writes) or not r.counts[k]:    # count 0: phases complete at 0 again
        return True
    tx = v[r.f.nproc + k] >> 21
    sums = {0}
    for x in flight:
        m = r.land_id[x]
        if m != j and m not in inside and k in r.trans[m].writes:
            if not r.trans[m].landing:
                return True
            sums |= {y + r.trans[m].landing for y in sums}
    return any(tx - y in ((ti.landing, tj.landing) if ti.kind == "l" else (tj.landing,)) for y in sums)


def _fire(i: int, st, r: _Reduction):
    """Law: ``(successor, None)`` or ``(None, (finding, mark))`` of enabled transition ``i``."""
    v, flight = st
    f, t = r.f, r.trans[i]
    if t.kind == "l":
        ops, mark = f.lands[t.item]
        nb = v
        for op in ops:
            nb, err = land_op(op, nb, f.nproc)
            if err is not None:
                return None, (err, mark)
        return (nb, flight - {t.item}), None
    _, _, end, ops = f.steps[t.p][t.pc]
    cur = [v, flight]
    for op in ops:
        err = apply_op(t.p, op, cur, v, f)
        if err is not None:
            return None, (err, op[2])
    nv = cur[0]
    return (nv[:t.p] + (end,) + nv[t.p + 1:], cur[1]), None


def _enabled_ids(st, r: _Reduction) -> list:
    v, flight = st
    out = [r.land_id[it] for it in flight]
    for p in range(r.f.nproc):
        if v[p] < r.f.lens[p]:
            j = r.step_id[(p, v[p])]
            if _on(j, v, flight, r):
                out.append(j)
    return out


def _ample(st, r: _Reduction) -> list:
    """The enabled transitions of the smallest stubborn set over every enabled seed."""
    best = None
    for seed in _enabled_ids(st, r):
        got = _stubborn(seed, st[0], st[1], r, len(best) - 1 if best else 1 << 30)
        if got is not None and (best is None or len(got) < len(best)):
            best = got
            if len(best) == 1:
                break
    return sorted(best or [])


def _blocked(st, r: _Reduction) -> tuple:
    v = st[0]
    return tuple((p, r.f.prog[p][v[p]]) for p in range(r.f.nproc) if v[p] < r.f.lens[p])


def explore_stubborn(system: McastSystem, *, max_states: int, symmetric: bool = False) -> Exploration:
    """Breadth first over the stubborn-set reduced graph of ``system`` (module docstring);
    ``symmetric``: each state reached replaced by its canonical image under the CTA permutations
    that map the system onto itself (:mod:`verilayout.simulate.mcast_symmetry`, its Lemma 2).

    Law: ``counterexample`` with ``(McastFinding, mark)`` of a reachable error, ``deadlock`` with
    the blocked processes of a reachable deadlock, ``unknown`` beyond ``max_states`` states, else
    ``proved`` (no error and no deadlock reachable in the full system).
    """
    r = _reduction(system)
    perms = ring_symmetries(system) if symmetric else ()
    start = (tuple(0 for _ in system.prog) + tuple(_word(c) for _, c in system.init), frozenset())
    seen, queue = {start}, deque([start])
    while queue:
        if len(seen) > max_states:
            return Exploration("unknown", None, (), len(seen))
        st = queue.popleft()
        todo = _ample(st, r)
        if not todo:
            if st[1] or any(st[0][p] < r.f.lens[p] for p in range(r.f.nproc)):
                return Exploration("deadlock", None, _blocked(st, r), len(seen))
            continue
        for i in todo:
            nxt, err = _fire(i, st, r)
            if err is not None:
                return Exploration("counterexample", err, (), len(seen))
            if perms:
                nxt = canonical(nxt, perms)
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return Exploration("proved", None, (), len(seen))


def _word(count: int) -> int:
    """An mbarrier at its start: phase 0, ``count`` pending, tx-count 0 (``mcast_ring._word``)."""
    return count << 1
