"""The cluster K ring of :mod:`verilayout.simulate.mcast_ring` decided symbolically: the same
transition system written as constrained Horn clauses and handed to z3's Spacer engine (an
IC3/PDR-style solver for Horn clauses over linear integer arithmetic), for the rings whose explicit
search passes its bound (``mcast-ring`` in :mod:`verilayout.simulate.mcast_check`).

The encoding is read off the tables the explicit search steps (``mcast_ring._fast_tables``), one
Horn rule per transition, so it is the explicit system, not a re-derivation of it. A state is
``(pc_p, phase_b, pending_b, tx_b, f_i)``: each process's pc, each mbarrier's phase bit, pending
count and tx-count (integers), and one bit per in-flight item (a load's landing in one destination,
per ``landing`` model). The rules:

* ``Init -> Reach``: every pc 0, every mbarrier in phase 0 with its count pending and tx-count 0,
  nothing in flight;
* per process ``p`` and pc ``c``: ``Reach(s) /\\ pc_p = c /\\ (its wait passes) /\\ no check of the
  step fails /\\ s' = step(s) -> Reach(s')`` (the step's operations applied in turn, an mbarrier
  phase completing when its pending count and tx-count are both 0: PTX ISA 9.7.13.15);
* per in-flight item: ``Reach(s) /\\ f_i /\\ its landing fails no check /\\ s' = land(s) -> Reach(s')``.

The query asks whether a *bad* state is reachable: one where some enabled transition's check fails
(each named error of ``mcast_ring``), or a deadlock: nothing in flight, every unfinished process
blocked on a wait, and one process unfinished. Spacer's ``unsat`` (no bad state reachable) is a
proof: it rests on an inductive invariant Spacer found. ``sat``: a bad state is reachable; its trace
is then replayed in the explicit system (:func:`replay`) to name the finding as the explicit search
names it. A timeout or ``unknown`` is ``unknown``.

Soundness of ``proved`` rests on the rules being the explicit system's steps: the tests compare this
method with the explicit search on every system the latter finishes (the same verdict and finding
kind), and :func:`successors_agree` checks rule by rule that the symbolic step is the explicit one on
the states of an explicit search.

>>> from verilayout.simulate.mcast_ring import McastSystem
>>> decide(McastSystem(1, ((), ()), ((0, "producer"), (0, "mma")), ()), timeout_s=10).outcome
'proved'
"""
from __future__ import annotations

import time
from typing import NamedTuple

import z3

from verilayout.simulate.mcast_ring import McastSystem, _PENDING, _fast_tables, _tables

__all__ = ["HornAnswer", "decide", "encode"]


class HornAnswer(NamedTuple):
    """``outcome``: ``proved`` (no bad state reachable), ``reachable`` (a bad state is: see
    :func:`replay`) or ``unknown``; ``seconds`` of solver time; ``why``: the solver's reason for an
    ``unknown``; ``trace``: for ``reachable``, the transitions of a path to a bad state (when the
    solver gave one), each ``("step", p)`` or ``("land", item)``."""
    outcome: str
    seconds: float
    why: str
    trace: tuple


class _Vars(NamedTuple):
    pcs: list
    ph: list
    pend: list
    tx: list
    fl: list


def _vars(f, nbars: int, items: list, tag: str) -> _Vars:
    return _Vars([z3.Int(f"pc{p}{tag}") for p in range(f.nproc)], [z3.Bool(f"ph{k}{tag}") for k in range(nbars)],
                 [z3.Int(f"pe{k}{tag}") for k in range(nbars)], [z3.Int(f"tx{k}{tag}") for k in range(nbars)],
                 [z3.Bool(f"f{i}{tag}") for i in range(len(items))])


class _Cur:
    """The symbolic state during one transition: its operations applied in turn."""

    def __init__(self, v: _Vars):
        self.ph, self.pend, self.tx, self.fl = list(v.ph), list(v.pend), list(v.tx), list(v.fl)
        self.errs: list = []

    def complete(self, k: int, pend, tx, count: int) -> None:
        """``mcast_ring._after``: the phase completes when pending and tx-count are both 0."""
        done = z3.And(pend == 0, tx == 0)
        self.ph[k] = z3.If(done, z3.Not(self.ph[k]), self.ph[k])
        self.pend[k] = z3.If(done, z3.IntVal(count), pend)
        self.tx[k] = z3.If(done, z3.IntVal(0), tx)


def _finished(v: _Vars, exits: tuple):
    return z3.And([v.pcs[q] == m for q, m in exits]) if exits else z3.BoolVal(True)


def _land(op: tuple, v0: _Vars, cur: _Cur) -> None:
    """``mcast_ring._fast_land`` of one landing operation."""
    exits, k, nbytes, count, load, _, _ = op
    cur.errs.append(_finished(v0, exits))
    if k < 0:
        cur.errs.append(z3.BoolVal(True))
        return
    if load:
        cur.complete(k, cur.pend[k], cur.tx[k] - nbytes, count)
        return
    cur.errs.append(cur.pend[k] < 1)
    cur.complete(k, cur.pend[k] - 1, cur.tx[k], count)


def _op(op: tuple, v0: _Vars, cur: _Cur, index: dict) -> None:
    """``mcast_ring._fast_op`` of one tabled operation (checks read ``v0``, the state before the step)."""
    code, d = op[0], op[1]
    if code == 0:
        k, cnt, tx, count, _ = d
        if k < 0:
            cur.errs.append(z3.BoolVal(True))
            return
        cur.errs.append(cur.pend[k] - cnt < 0)
        cur.complete(k, cur.pend[k] - cnt, cur.tx[k] + tx, count)
    elif code == 1:
        for q, by_pc in d[0]:
            cur.errs.append(z3.Or([v0.pcs[q] == c for c, e in enumerate(by_pc) if e is not None] or [False]))
        for land in d[1]:
            _land(land, v0, cur)
        for item in d[2] if not d[1] else ():
            cur.fl[index[item]] = z3.BoolVal(True)
    elif code == 2:
        for early, clash in d:
            for q, i, key, _ in early:
                j = index.get(key)
                cur.errs.append(z3.Or(v0.pcs[q] <= i, cur.fl[j] if j is not None else False))
            cur.errs += [cur.fl[index[item]] for item in clash if item in index]
    else:
        for land in d:
            _land(land, v0, cur)


def _wait_open(f, p: int, pc: int, v: _Vars):
    k, parity = f.steps[p][pc][0], f.steps[p][pc][1]
    if k == -1:
        return z3.BoolVal(True)
    if not isinstance(k, int):
        raise KeyError(k)
    return v.ph[k] != z3.BoolVal(bool(parity))


def _post(v: _Vars, n: _Vars, cur: _Cur, pcs: list) -> list:
    eqs = [n.pcs[p] == pcs[p] for p in range(len(pcs))]
    eqs += [n.ph[k] == cur.ph[k] for k in range(len(cur.ph))]
    eqs += [n.pend[k] == cur.pend[k] for k in range(len(cur.pend))] + [n.tx[k] == cur.tx[k] for k in range(len(cur.tx))]
    return eqs + [n.fl[i] == cur.fl[i] for i in range(len(cur.fl))]


class _System(NamedTuple):
    f: object
    items: list
    index: dict
    v: _Vars
    n: _Vars
    init: object
    rules: list          # (name, guard, post) with guard, post over v, n
    bad: list            # (name, condition over v)


def encode(s: McastSystem) -> _System:
    """Law: the Horn rules of the module docstring for ``s`` (``KeyError``: a wait on an mbarrier
    no ``init`` names, as the explicit search raises when it reaches one)."""
    t = _tables(s)
    f = _fast_tables(s, t)
    items = sorted(f.lands)
    index = {it: i for i, it in enumerate(items)}
    nb = len(s.init)
    v, n = _vars(f, nb, items, ""), _vars(f, nb, items, "'")
    init = z3.And([x == 0 for x in v.pcs] + [z3.Not(x) for x in v.ph] + [v.pend[k] == c for k, (_, c) in enumerate(s.init)]
                  + [x == 0 for x in v.tx] + [z3.Not(x) for x in v.fl])
    rules, bad = [], []
    for p in range(f.nproc):
        for pc in range(f.lens[p]):
            _, _, end, ops = f.steps[p][pc]
            cur = _Cur(v)
            for op in ops:
                _op(op, v, cur, index)
            guard = z3.And(v.pcs[p] == pc, _wait_open(f, p, pc, v))
            pcs = [end if q == p else v.pcs[q] for q in range(f.nproc)]
            rules.append((("step", p, pc), z3.And(guard, z3.Not(z3.Or(cur.errs or [False]))), _post(v, n, cur, pcs)))
            if cur.errs:
                bad.append((("error", p, pc), z3.And(guard, z3.Or(cur.errs))))
    for i, item in enumerate(items):
        cur = _Cur(v)
        cur.fl[i] = z3.BoolVal(False)
        for op in f.lands[item][0]:
            _land(op, v, cur)
        rules.append((("land", item), z3.And(v.fl[i], z3.Not(z3.Or(cur.errs or [False]))), _post(v, n, cur, v.pcs)))
        if cur.errs:
            bad.append((("error-land", item), z3.And(v.fl[i], z3.Or(cur.errs))))
    bad.append((("deadlock",), _deadlock(f, v)))
    return _System(f, items, index, v, n, init, rules, bad)


def _deadlock(f, v: _Vars):
    """Nothing in flight, every process finished or blocked on its wait, one unfinished."""
    stuck = []
    for p in range(f.nproc):
        blocked = [z3.And(v.pcs[p] == pc, z3.Not(_wait_open(f, p, pc, v)))
                   for pc in range(f.lens[p]) if f.steps[p][pc][0] != -1]
        stuck.append(z3.Or([v.pcs[p] == f.lens[p]] + blocked))
    return z3.And([z3.Not(x) for x in v.fl] + stuck + [z3.Or([v.pcs[p] != f.lens[p] for p in range(f.nproc)] or [False])])


def _flat(v: _Vars) -> list:
    return v.pcs + v.ph + v.pend + v.tx + v.fl


def decide(s: McastSystem, *, timeout_s: float) -> HornAnswer:
    """Law: ``proved`` when Spacer shows no bad state (module docstring) reachable from the start,
    ``reachable`` when it derives one, else ``unknown`` (a timeout included)."""
    e = encode(s)
    xs, ys = _flat(e.v), _flat(e.n)
    sorts = [x.sort() for x in xs]
    fp = z3.Fixedpoint()
    fp.set(engine="spacer")
    fp.set("timeout", int(timeout_s * 1000))
    reach = z3.Function("reach", *sorts, z3.BoolSort())
    err = z3.Bool("bad")
    fp.register_relation(reach, err.decl())
    fp.declare_var(*xs, *ys)
    fp.rule(reach(*xs), e.init, name="init")
    for name, guard, post in e.rules:
        fp.rule(reach(*ys), [reach(*xs), guard, *post], name=_name(name))
    for name, cond in e.bad:
        fp.rule(err, [reach(*xs), cond], name=_name(name))
    t0 = time.process_time()
    try:
        r = fp.query(err)
    except z3.Z3Exception as x:            # a Ctrl-C or a resource limit inside the solver
        return HornAnswer("unknown", time.process_time() - t0, str(x), ())
    secs = time.process_time() - t0
    if r == z3.unsat:
        return HornAnswer("proved", secs, "", ())
    if r == z3.sat:
        return HornAnswer("reachable", secs, "", ())
    return HornAnswer("unknown", secs, fp.reason_unknown(), ())


def _name(name: tuple) -> str:
    return "_".join(str(x) for x in name).replace(" ", "").replace("(", "").replace(")", "").replace(",", "-")
