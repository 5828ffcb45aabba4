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
checks read it); predicates on another process's pc: ``mma-early`` reads whether a loader's pc
passed its load, ``load-over-read`` which MMAs of a reader are uncommitted, ``after-exit`` whether a
CTA's processes finished (each conflicts with exactly the steps of that process that change its
value); and per mbarrier ``k`` a read of its phase (a wait) and *updates*: an update is a pair
``(d, e)``, the pending count lowered by ``d`` and the tx-count raised by ``e``, then the phase
completing iff both are 0 (PTX ISA 9.7.13.15, mbarrier: a phase completes when the pending arrival
count and the tx-count are both zero; ``expect-tx`` raises the tx-count, ``complete-tx`` lowers it,
and the tx-count may go below zero before the ``expect-tx`` of its phase): an arrive
``(count, tx)`` (``.expect_tx``: ``tx`` > 0), a commit's arrival ``(1, 0)``, a load's landing
``(0, -bytes)``; an arrive fails ``over-arrive`` when its count exceeds the pending count, a commit's
arrival when it is 0. Two transitions of different processes (or a landing and anything but its
own issue) interfere in every state when they share an in-flight bit written by one or a
predicate one changes, or one updates ``k`` twice in one step, or ``k`` has count 0; two updates
equal and without phase reads commute everywhere (the same function twice: two commits' arrivals).

**Independence on an mbarrier** (the rule that lets an ``expect_tx`` and a peer's landing on the same
mbarrier commute). Let ``t`` and ``u`` touch ``k`` and nothing else in common, at a state where
``k`` holds ``(P, X)``. If neither completes the phase when taken first, both orders apply the two
additive updates and test completion once after both: the same ``(P - d_t - d_u, X + e_t + e_u)``
and the same phase, a phase read sees the same bit in either order, and ``over-arrive`` fails in
one order iff in the other unless both lower the pending count and ``P < d_t + d_u``. ``t`` taken
first completes the phase iff ``P == d_t`` and ``X == -e_t``. For an ``expect_tx`` of ``e`` > 0
bytes, count ``d`` and a landing of ``n`` bytes: the landing first completes nothing while the
arrive is still pending (``P >= d`` > 0), the arrive first completes the phase only if every byte
of the phase already landed (``X == -e``), then the landing counts in the next phase. So they
commute wherever ``X != -e`` (and ``P != d`` or no completion needs it). In the search the state
where ``t`` and ``u`` meet is not ``s`` but one a path from ``s`` avoiding the stubborn set ``T``
reaches: ``k`` then holds ``(P - sum d, X + sum e)`` over a subset of the updates of ``k`` in the
reach of ``s`` outside ``T`` (below), the pending sums capped at ``P`` (a path that lowers it
further failed ``over-arrive`` and ended), as long as none of them completes the phase.
:func:`_dependent` enumerates these sums: ``u`` joins ``T`` iff at one of them ``t``, ``u`` or one of
those updates completes the phase when taken (then the sums no longer describe the paths), or
``t`` and ``u`` both lower the pending count past what is left. ``T`` only grows, the sums only shrink, so each pair is
judged once ``T`` is closed (a pair found interfering earlier stays in ``T``: a larger set is
still stubborn).

**Reach.** A transition ``u`` occurs on a path from ``s`` that takes none of ``T`` only if every
earlier step of its process does, none of them in ``T``, and every wait among them passes.
:func:`_reach` over-approximates these transitions as a least fixpoint: the landings in flight,
then each process's steps in order while its wait passes: a wait whose phase bit as the process
last saw it equals its parity needs one completion of that mbarrier more than the process needed
before, and ``m`` completions of ``k`` need, among the updates of ``k`` admitted so far, pending
decrements of at least ``P + (m - 1) count`` and landings of at least the bytes the arrivals with
the fewest bytes among those add (each completion leaves the tx-count at 0, so the bytes landed
equal ``X`` plus the bytes announced; the fewest bytes bounded below by the fractional choice).
Induction along any such path shows each of its transitions admitted. Its use: a transition
outside the reach cannot occur before ``T``'s, so an interference with it is irrelevant to the
lemma below (the ``expect_tx`` of a phase is never in conflict with the loads of the *next* use of
the stage, which wait for releases that need this phase).

**Stubborn sets** (Valmari's strong stubborn sets). At state ``s`` a set ``T`` is built from one enabled
seed by closing under: an enabled ``t`` in ``T`` brings every transition in the seed's reach that
interferes with it (as above, the mbarrier rule decided once ``T`` is closed); a disabled ``t`` brings
a *necessary enabling set* (one transition of it is on every path from ``s`` avoiding ``T`` that
enables ``t``), the cheapest of: a step of ``t``'s process at a pc between its pc and ``t`` already in
``T``; that process's current step (not ``t`` itself); for a wait of that process between its pc and
``t`` whose phase now blocks it, the transitions in the reach without which the phase cannot
complete: pending count above 0, its pending-count writers; pending 0 (a pending write then fails
``over-arrive``) with only landings left to write it, one in-flight landing ``L`` such that no sum
of the other in-flight ones is the tx-count, and every landing not yet in flight; else every
writer. Only ``T``'s enabled transitions are followed (the seed giving the fewest). **Lemma**
(Valmari 1991, the deadlock-preserving theorem): every terminal state reachable from ``s`` is
reachable in the reduced graph. Proof: let ``s -w-> d`` with ``d`` terminal. If ``w`` held no
transition of ``T``, the seed, interfering with none of ``w``'s transitions (all in its reach),
would stay enabled along ``w``: ``d`` not terminal. So let ``t`` be ``w``'s first transition in
``T``: it is enabled at ``s`` (a disabled one needs a transition of its necessary enabling set, in
``T``, before it), commutes with every earlier one (each in the reach, none interfering with it at
the state where they meet), so ``s -t-> s'`` reaches ``d`` by a shorter path; induction on the
length of ``w``. Hence: ``proved`` iff the reduced graph reaches no error and no deadlock; the first
error or deadlock it reaches is a reachable one of the full system (not necessarily the first in the
full breadth-first order).

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
    landing's issuing pc), ``interf`` (ids interfering in every state), ``soft`` (``(id, mbarrier
    indices)``: ids interfering only through those mbarriers' counts, :func:`_dependent`),
    ``writes`` / ``pend_writes`` (mbarrier indices written / whose pending count is written),
    ``landing`` (a load's landing on one mbarrier: its bytes, else 0), ``eff`` (per mbarrier index
    written its ``(pending decrement, tx-count increment)``, summed), ``multi`` (mbarrier indices it
    updates more than once), ``issues`` (the landings it issues)."""
    kind: str
    p: int
    pc: int
    item: tuple
    interf: tuple
    soft: tuple
    writes: tuple
    pend_writes: tuple
    landing: int
    eff: dict
    multi: frozenset
    issues: tuple


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


def _effects(key: tuple, f: _Fast) -> list:
    """Law: ``(mbarrier index, pending decrement, tx-count increment)`` of each mbarrier update of
    transition ``key`` in order: an arrive ``(count, tx)``, a commit's arrival ``(1, 0)``, a load's
    landing ``(0, -bytes)``."""
    land = lambda op: (op[1], 0, -op[2]) if op[4] else (op[1], 1, 0)     # noqa: E731
    if key[0] == "l":
        return [land(op) for op in f.lands[key[3]][0] if op[1] >= 0]
    out = []
    for code, d, _ in f.steps[key[1]][key[2]][3]:
        if code == 0 and d[0] >= 0:
            out.append((d[0], d[1], d[2]))
        elif code in (1, 3):
            out += [land(op) for op in (d[1] if code == 1 else d) if op[1] >= 0]
    return out


def _touch(key: tuple, f: _Fast) -> dict:
    """Law: per mbarrier index the transition touches ``(reads its phase, (decrement, increment) or
    None, updated more than once)``."""
    out: dict = {}
    for k, a, b in _effects(key, f):
        rd, e, _ = out.get(k, (False, None, False))
        out[k] = (rd, (a, b), e is not None)
    if key[0] == "s" and f.steps[key[1]][key[2]][0] != -1:
        k = f.steps[key[1]][key[2]][0]
        _, e, multi = out.get(k, (False, None, False))
        out[k] = (True, e, multi)
    return out


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
    counts = tuple(c for _, c in s.init)
    trans = _transitions(keys, rws, f, counts, ids)
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
    gate = tuple(None if t.kind == "l" else (t.p, t.pc, -1 if f.steps[t.p][t.pc][0] == -1
                                             else f.nproc + f.steps[t.p][t.pc][0], f.steps[t.p][t.pc][1])
                 for t in trans)
    return _Reduction(f, trans, step_id, {k[3]: ids[k] for k in keys if k[0] == "l"}, writers, pend_writers,
                      waits, starts, counts, [[step_id[(p, c)] for c in cs] for p, cs in enumerate(starts)], gate)


def _transitions(keys: list, rws: list, f: _Fast, counts: tuple, ids: dict) -> list:
    """Law: the :class:`_Trans` of each key, its interferences computed pair by pair."""
    touch = [_touch(key, f) for key in keys]
    trans = []
    for i, (key, rw) in enumerate(zip(keys, rws)):
        hard, soft = [], []
        for j, (key2, rw2) in enumerate(zip(keys, rws)):
            if i == j or _same_thread(key, key2):
                continue
            how = _interference(key, rw, touch[i], key2, rw2, touch[j], counts)
            if how is True:
                hard.append(j)
            elif how:
                soft.append((j, how))
        w = rw[0]
        eff: dict = {}
        for k, a, b in _effects(key, f):
            a0, b0 = eff.get(k, (0, 0))
            eff[k] = (a0 + a, b0 + b)
        issues = tuple(ids[k] for k in keys if k[0] == "l" and k[1:3] == key[1:3]) if key[0] == "s" else ()
        trans.append(_Trans(key[0], key[1], key[2], key[3] if key[0] == "l" else (), tuple(hard), tuple(soft),
                            tuple(sorted({x[1] for x in w if x[0] in "btd"})),
                            tuple(sorted({x[1] for x in w if x[0] in "bd"})), _landing_bytes(key, f), eff,
                            frozenset(k for k, (_, _, m) in touch[i].items() if m), issues))
    return trans


def _interference(key, rw, touch, key2, rw2, touch2, counts: tuple):
    """Law: True (the two interfere in every state: a predicate one changes, an in-flight bit one
    writes, an mbarrier one updates twice or of count 0), else the mbarriers through whose counts
    alone they may interfere (:func:`_dependent` decides in a state), possibly none: two phase
    reads, or one update twice (two commits' arrivals: the same function applied twice commutes)."""
    (w, r, pred), (w2, r2, pred2) = rw, rw2
    if key[:3] in pred2 or key2[:3] in pred:
        return True
    flags = {x for x in w | r if x[0] == "f"}, {x for x in w2 | r2 if x[0] == "f"}
    if flags[0] & {x for x in w2 if x[0] == "f"} or flags[1] & {x for x in w if x[0] == "f"}:
        return True
    ks = []
    for k in sorted(touch.keys() & touch2.keys()):
        (rd, e, multi), (rd2, e2, multi2) = touch[k], touch2[k]
        if e is None and e2 is None:
            continue
        if multi or multi2 or not counts[k]:
            return True
        if not rd and not rd2 and e == e2:
            continue
        ks.append(k)
    return tuple(ks)


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


def _on(j: int, v: tuple, flight, r: _Reduction) -> bool:
    """Law: transition ``j`` is enabled at ``(v, flight)`` (a landing: in flight; a step: its
    process at its pc, its wait's phase of the other parity)."""
    g = r.gate[j]
    if g is None:
        return r.trans[j].item in flight
    p, pc, o, parity = g
    return v[p] == pc and (o < 0 or v[o] & 1 != parity)


# ----- the transitions that can occur before a set's (module docstring, "Reach") --------------------

class _Pool(NamedTuple):
    """What the transitions admitted so far write: per mbarrier index its pending-count writers'
    ``(decrement, increment)`` and the bytes its landings subtract."""
    pend: dict
    neg: dict


def _admit(j: int, r: _Reduction, got: set, pool: _Pool) -> None:
    got.add(j)
    for k, (a, b) in r.trans[j].eff.items():
        if a:
            pool.pend.setdefault(k, []).append((a, b))
        elif b < 0:
            pool.neg[k] = pool.neg.get(k, 0) - b


def _completable(k: int, m: int, v: tuple, r: _Reduction, pool: _Pool) -> bool:
    """Law: the writers in ``pool`` may complete ``m`` more phases of mbarrier ``k`` (necessary:
    ``pending + (m - 1) count`` pending decrements among them, and landings for the bytes the fewest
    bytes' arrivals among those add to the tx-count: each completion needs it back at 0)."""
    w = v[r.f.nproc + k]
    pending, tx, c = (w >> 1) & _PENDING, w >> 21, r.counts[k]
    if c == 0:
        return True
    want, have = pending + (m - 1) * c, 0
    for a, b in sorted(pool.pend.get(k, ()), key=lambda e: e[1] / e[0]):
        if have >= want:
            break
        take = min(a, want - have)
        tx += b * take // a               # a lower bound of the bytes added (the fraction rounded down)
        have += take
    return have >= want and tx <= pool.neg.get(k, 0)


def _passes(j: int, q: int, v: tuple, r: _Reduction, seen: dict, pool: _Pool) -> bool:
    """Law: the step ``j`` of ``q`` may be taken once its earlier steps were: its wait, if its phase
    bit as ``q`` last saw it equals the parity, needs one completion more than ``q`` needed of
    that mbarrier, which ``pool`` may provide (``seen``: mbarrier -> (bit, completions needed))."""
    _, _, o, parity = r.gate[j]
    if o < 0:
        return True
    k = o - r.f.nproc
    bit, m = seen.get(k, (v[o] & 1, 0))
    if bit == parity:
        if not _completable(k, m + 1, v, r, pool):
            return False
        seen[k] = (bit ^ 1, m + 1)
    return True


def _reach(v: tuple, flight, r: _Reduction, blocked: set) -> set:
    """Law: a superset of the transitions that occur on some path from ``(v, flight)`` that takes
    none of ``blocked`` (module docstring, "Reach": the least fixpoint of :func:`_passes`)."""
    got, pool = set(), _Pool({}, {})
    for it in flight:
        if r.land_id[it] not in blocked:
            _admit(r.land_id[it], r, got, pool)
    n = r.f.nproc
    pos = [bisect_left(r.starts[q], v[q]) for q in range(n)]
    seen: list = [{} for _ in range(n)]
    grew = True
    while grew:
        grew = False
        for q in range(n):
            ids = r.ids[q]
            while pos[q] < len(ids) and ids[pos[q]] not in blocked and _passes(ids[pos[q]], q, v, r, seen[q], pool):
                _admit(ids[pos[q]], r, got, pool)
                for x in r.trans[ids[pos[q]]].issues:
                    if x not in blocked:
                        _admit(x, r, got, pool)
                pos[q] += 1
                grew = True
    return got


# ----- the stubborn set ------------------------------------------------------------------------------

def _nes(t: _Trans, v: tuple, flight, r: _Reduction, inside: set, reach: set) -> list:
    """A necessary enabling set of the disabled ``t`` (module docstring), the one adding the fewest
    enabled transitions to ``inside``: for each wait of ``t``'s process from its pc up to ``t``
    whose phase now blocks it, the writers of its mbarrier in ``reach`` (no path avoiding the set
    passes that wait without one); or the process's current step."""
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
            got = _phase_writers(k, v, flight, r, inside, reach)
            c2 = _cost(got, v, flight, r, inside)
            if cost is None or c2 < cost:
                best, cost = got, c2
    if best is None:                          # a disabled step at its pc is a blocked wait: found above
        raise AssertionError(f"no necessary enabling set for {t}")
    return best


def _phase_writers(k: int, v: tuple, flight, r: _Reduction, inside: set, reach: set) -> list:
    """Transitions one of which every path avoiding the set that completes the current phase of
    mbarrier ``k`` takes (every such path's transitions are in ``reach``).

    Law: pending count above 0: its pending-count writers in ``reach`` (no completion before one).
    Pending 0 (an arrive or a commit then fails ``over-arrive``: it completes nothing) and every
    other writer in ``reach`` a load's landing (each lowers the tx-count by its bytes, the phase
    completing when it reaches 0 exactly): one landing ``L`` in flight such that no subset of the
    other in-flight landings sums to the tx-count, with every landing not yet issued (a completing
    path lands either ``L`` or one not yet in flight). Else every writer in ``reach``."""
    w = v[r.f.nproc + k]
    if (w >> 1) & _PENDING:
        return [j for j in r.pend_writers.get(k, ()) if j not in inside and j in reach]
    trans = r.trans
    every = [j for j in r.writers.get(k, ()) if j in reach]
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
    more than ``bound``): only transitions in the seed's reach (:func:`_reach`) join; one that
    interferes with an enabled member only through mbarrier counts joins once :func:`_dependent`
    says so for the set as it then is (the set only grows, so a pair found independent stays so)."""
    reach = _reach(v, flight, r, {seed})
    inside, stack, enabled, deferred = {seed}, [seed], [], []
    while True:
        while stack:
            i = stack.pop()
            t = r.trans[i]
            if _on(i, v, flight, r):
                enabled.append(i)
                if len(enabled) > bound:
                    return None
                more = [j for j in t.interf if j not in inside and j in reach]
                deferred += [(i, j, ks) for j, ks in t.soft if j not in inside and j in reach]
            else:
                more = [j for j in _nes(t, v, flight, r, inside, reach) if j not in inside]
            if more:
                more = list(dict.fromkeys(more))
                inside.update(more)
                stack += more
        late = _late(deferred, v, r, inside, reach)
        if not late:
            return enabled
        inside.update(late)
        stack += late


def _late(deferred: list, v: tuple, r: _Reduction, inside: set, reach: set) -> list:
    """The transitions of ``deferred`` ``(member, other, mbarriers)`` outside the set that
    :func:`_dependent` finds interfering with their member, each once."""
    late: list = []
    for i, j, ks in deferred:
        if j not in inside and j not in late and any(_dependent(i, j, k, v, r, inside, reach) for k in ks):
            late.append(j)
    return late


def _dependent(i: int, j: int, k: int, v: tuple, r: _Reduction, inside: set, reach: set) -> bool:
    """Law: whether ``i`` (in the set, enabled) and ``j`` (outside it) may fail to commute on
    mbarrier ``k`` from a state some path avoiding the set reaches (module docstring,
    "Independence on an mbarrier"): at some ``(pending, tx)`` that subsets of the other updates of
    ``k`` in ``reach`` outside the set leave, one of the two or one of those completes the phase
    when taken, or both lower the pending count past what is left."""
    w = v[r.f.nproc + k]
    pending, tx = (w >> 1) & _PENDING, w >> 21
    sums, others = {(0, 0)}, [r.trans[i].eff.get(k), r.trans[j].eff.get(k)]
    for m in r.writers.get(k, ()):
        if m != j and m not in inside and m in reach:
            if k in r.trans[m].multi:
                return True
            a, b = r.trans[m].eff[k]
            others.append((a, b))
            sums |= {(x + a, y + b) for x, y in sums if x + a <= pending}
            if len(sums) > _SUMS:
                return True
    ei, ej = others[0], others[1]
    both = ei is not None and ej is not None and ei[0] and ej[0]
    for a, b in sums:
        p, x = pending - a, tx + b
        if any(e is not None and p == e[0] and x + e[1] == 0 for e in others):
            return True
        if both and p < ei[0] + ej[0]:
            return True
    return False


#: Distinct (pending, tx) sums :func:`_dependent` tracks before it answers "may interfere".
_SUMS = 4096


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
