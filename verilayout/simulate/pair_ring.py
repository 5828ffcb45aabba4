"""The barrier protocol of a CTA pair (``tcgen05.mma.cta_group::2``), checked on the PTX runs of
both CTAs of the pair (:func:`verilayout.simulate.ptx_run.run_threads` with ``%cluster_ctarank``
0 and 1), independently of the emitter: nothing of ``kernel.cu`` is read but the runs' events.

Who is who is read off each run: the *producer* issues the TMA loads (``cp.async.bulk.tensor``,
destination shared); the *MMA thread* issues ``tcgen05.mma``; an *epilogue warp* issues
``tcgen05.ld``. An mbarrier is a pair (CTA, shared offset): an address at or above
:data:`~verilayout.simulate.ptx_run.CLUSTER_WINDOW` is the ``mapa`` window of CTA ``a // window
- 1`` (the interpreter's model of ``mapa``), a plain one the executing CTA's own; a ``tcgen05.commit
... .multicast::cluster`` arrives once on the barrier at its offset in every CTA of its 16-bit mask
(PTX ISA 9.7.16, ``tcgen05.commit``), after the MMAs issued before it completed (the earliest the
hardware arrives, as ``acc-ring``). A TMA load is in flight from its issue until it lands, which
may happen at any later step; landing subtracts its bytes from its barrier's tx-count (PTX ISA
9.7.13.15, mbarrier: a phase completes when its pending arrivals and tx-count are both zero; the
tx-count may go below zero before the ``expect_tx``).

``pair-ring``: the producers of both CTAs, the MMA thread and every epilogue warp of both CTAs
explored together over every interleaving and every landing order: the CTA pair's
:class:`~verilayout.simulate.ring.MmaRingSystem` (two CTAs), explored by
:func:`verilayout.simulate.ring.explore_mma_rings`. An error, by name:

* the MMA of K iteration ``n`` is issued before iteration ``n``'s TMA bytes landed in some CTA
  of the pair (its operands are read from both CTAs' shared memory);
* a TMA load of a CTA writes stage bytes an issued MMA, not yet complete, still reads;
* an epilogue warp reads its tile's accumulator before the tile's MMAs completed, or while an
  MMA of a later tile writes those columns (``cta_group::2`` writes both CTAs' TMEM); an MMA
  writes columns an epilogue warp (of either CTA) has not finished reading;
* an arrival beyond a barrier's count in one phase;
* a deadlock: a process waits on a phase that never completes (a commit whose mask leaves a
  CTA out leaves that CTA's producer or epilogue waiting; a peer's bytes completing on its own
  barrier leave the leader's short), the first three blocked processes named.

The search runs in atomic steps: a process moves from a wait up to the next wait or through the
next action others observe (:data:`~verilayout.simulate.ring.MMA_OBSERVED`: an arrival, a load, an
MMA, a commit); an epilogue warp's wait, TMEM reads and release
are one step, whose reads are checked both when they happen and, from the MMA's side, as long as
they are still to come.

>>> barrier_key(0x100, 1), barrier_key((1 + 1) * CLUSTER_WINDOW + 0x100, 0)
((1, 256), (1, 256))
"""
from __future__ import annotations

import numpy as np

from verilayout.simulate.independent import KernelCheck
from verilayout.simulate.ptx_run import CLUSTER_WINDOW, barrier_key, init_count, phase_parity, tma_mbarrier, tx_count
from verilayout.simulate.ring import (MMA_OBSERVED, Arrive, Load, Mma, MmaCommit, MmaRingSystem, TmemTile, Wait,
                                      explore_mma_rings)
from verilayout.simulate.tma_store import is_tma_store
from verilayout.simulate.tmem_ring import epilogue_actions, mark, mma_columns, ring_answer

__all__ = ["MAX_PAIR_STATES", "barrier_key", "pair_programs", "pair_ring_check"]

#: States explored before the answer is ``unknown``.
MAX_PAIR_STATES = 400000


def _threads(run, e) -> np.ndarray:
    return np.asarray(run.threads)[e.lanes]


def _is_load(e) -> bool:
    return e.op.startswith("cp.async.bulk.tensor") and not is_tma_store(e.op)


def _mask(e) -> int | None:
    v = e.values.get("a0")
    return None if v is None else int(v[0]) & 0xFFFF


def _wait(e, cta: int) -> Wait:
    return Wait("wait", barrier_key(int(e.values["addr"][0]), cta), int(phase_parity(e.values)[0]) & 1, mark(e))


def _producer(run, cta: int, load_bytes) -> list:
    """Law: the producer thread's actions: :class:`Wait`, :class:`Arrive` (an ``expect_tx``: one
    arrival with its bytes), :class:`Load` (one per K iteration: the loads after one wait on one
    barrier merged, their bytes summed, their regions kept); empty without a TMA load."""
    first = next((e for e in run.events if _is_load(e)), None)
    if first is None:
        return []
    me = int(_threads(run, first)[0])
    prog, it = [], -1
    for e in run.events:
        if me not in _threads(run, e).tolist():
            continue
        if e.op.startswith("mbarrier.try_wait"):
            it += 1
            prog.append(_wait(e, cta))
        elif e.op.startswith("mbarrier.arrive.expect_tx"):
            prog.append(Arrive("arrive", barrier_key(int(e.values["addr"][0]), cta), 1, int(tx_count(e.values)[0]), mark(e)))
        elif _is_load(e):
            bar = barrier_key(int(tma_mbarrier(e.values)[0]), cta)
            dst, n = int(e.values["addr"][0]), load_bytes(int(e.values["map"][0]))
            last = prog[-1] if prog else None
            if last and last.kind == "load" and last.it == it and last.bar == bar:
                prog[-1] = last._replace(nbytes=last.nbytes + n, regions=last.regions + ((dst, dst + n),))
            else:
                prog.append(Load("load", cta, it, bar, n, ((dst, dst + n),), mark(e)))
    return prog


def _commit(e, cta: int, done: int) -> MmaCommit:
    """A ``tcgen05.commit``: one arrival on its barrier, in every CTA of its mask when multicast."""
    addr = int(e.values["addr"][0])
    mask = _mask(e) if "multicast" in e.op else None
    ctas = [c for c in range(16) if mask is not None and mask >> c & 1] or [barrier_key(addr, cta)[0]]
    return MmaCommit("mma-commit", tuple((c, barrier_key(addr, cta)[1]) for c in ctas), done, mark(e))


def _mma_thread(run, cta: int) -> tuple[list, list]:
    """Law: the MMA thread's actions (:class:`Wait`, :class:`Mma` per K iteration: the MMAs
    between two commits, with its tile, :class:`MmaCommit` with its barriers and the K iterations
    issued before it) and the tiles' ``(first, last)`` TMEM columns; empty where the run issues
    no MMA."""
    first = next((e for e in run.events if e.op.startswith("tcgen05.mma")), None)
    if first is None:
        return [], []
    me = int(_threads(run, first)[0])
    prog, tiles, it, n = [], [], 0, 0
    for e in run.events:
        if me not in _threads(run, e).tolist():
            continue
        if e.op.startswith("mbarrier.try_wait"):
            prog.append(_wait(e, cta))
        elif e.op.startswith("tcgen05.mma"):
            col, width, new = mma_columns(e)
            if new or not tiles:
                tiles.append((col, col + width))
            if not prog or prog[-1].kind != "mma" or prog[-1].it != it:
                prog.append(Mma("mma", it, len(tiles) - 1, mark(e)))
                n += 1
        elif e.op.startswith("tcgen05.commit"):
            prog.append(_commit(e, cta, n))
            if prog[-2].kind == "mma" and prog[-2].it == it:
                it += 1
    return prog, tiles


def _epilogue(run, cta: int) -> list[list]:
    """Law: each epilogue warp (a warp issuing ``tcgen05.ld``) with its actions
    (:func:`~verilayout.simulate.tmem_ring.epilogue_actions` on every mbarrier, by (CTA, offset))."""
    th = np.asarray(run.threads)
    warps = sorted({int(t) // 32 for e in run.events if e.op.startswith("tcgen05.ld.") for t in th[e.lanes]})
    return [(w, epilogue_actions(run, w, lambda e, i: barrier_key(int(e.values["addr"][i]), cta))) for w in warps]


def _tiles(cols: list, mma_prog: list) -> list:
    """Law: each tile's :class:`TmemTile`: its columns and the K iterations the MMA thread issued
    before its last one (all of them where it issues none of that tile: never complete)."""
    mmas = [a for a in mma_prog if a.kind == "mma"]
    return [TmemTile(lo, hi, max((i for i, m in enumerate(mmas) if m.tile == j), default=len(mmas)))
            for j, (lo, hi) in enumerate(cols)]


def _processes(runs: list, load_bytes) -> tuple[list, list, list, list, dict]:
    """Law: :func:`pair_programs`'s answer with each process's ``(CTA, role)`` after its names."""
    progs, names, roles, cols, init, first_mma = [], [], [], [], {}, None
    for cta, run in enumerate(runs):
        for e in run.events:
            if e.op.startswith("mbarrier.init"):
                init[barrier_key(int(e.values["addr"][0]), cta)] = int(init_count(e.values)[0])
        progs.append(_producer(run, cta, load_bytes))
        names.append(f"CTA {cta}'s producer")
        roles.append((cta, "producer"))
        mma, t = _mma_thread(run, cta)
        if mma:
            progs.append(mma)
            names.append(f"CTA {cta}'s MMA thread")
            roles.append((cta, "mma"))
            cols, first_mma = t, first_mma or mma
        for w, prog in _epilogue(run, cta):
            progs.append(prog)
            names.append(f"CTA {cta}'s epilogue warp {w}")
            roles.append((cta, "epilogue"))
    return progs, names, roles, _tiles(cols, first_mma or []), init


def pair_programs(runs: list, load_bytes) -> tuple[list, list, list, dict]:
    """Law: ``(programs, names, tiles, init)`` of the pair's processes read off the runs of CTA 0
    and CTA 1 (``load_bytes(map address)``: the bytes of one TMA load of that tensor map):
    each CTA's producer, each CTA's MMA thread (if it issues MMAs), each epilogue warp, as typed
    actions (:mod:`verilayout.simulate.ring`); the MMA tiles (:class:`TmemTile`); every barrier's
    init count by (CTA, offset).

    >>> from verilayout.simulate.ptx_run import RunResult
    >>> pair_programs([RunResult((), True, "", ())] * 2, lambda m: 0)
    ([[], []], ["CTA 0's producer", "CTA 1's producer"], [], {})
    """
    progs, names, _roles, tiles, init = _processes(runs, load_bytes)
    return progs, names, tiles, init


def _used_bars(progs: list) -> list:
    """Law: every mbarrier ``(CTA, offset)`` an action waits on, arrives on or completes bytes on, sorted."""
    return sorted({a.bar for p in progs for a in p if a.kind in ("wait", "arrive", "load")}
                  | {b for p in progs for a in p if a.kind == "mma-commit" for b in a.bars})


def pair_ring_check(runs: list, load_bytes) -> KernelCheck:
    """The ``pair-ring`` check of the module docstring on the runs of both CTAs of a pair.
    Law: ``proved`` only when no interleaving and no landing order errs or deadlocks;
    ``unknown`` past :data:`MAX_PAIR_STATES` states or without the roles.

    >>> from verilayout.simulate.ptx_run import RunResult
    >>> pair_ring_check([RunResult((), True, "", ())] * 2, lambda m: 0).status
    'unknown'
    """
    progs, names, roles, tiles, init = _processes(runs, load_bytes)
    if "mma" not in {r[1] for r in roles} or not all(progs[p] for p, r in enumerate(roles) if r[1] == "producer"):
        return KernelCheck("pair-ring", "unknown", "a run has no TMA load, or no CTA issues tcgen05.mma")
    bars = _used_bars(progs)
    missing = [b for b in bars if b not in init]
    if missing:
        return KernelCheck("pair-ring", "counterexample", f"pair-ring: mbarrier {missing[0][1]:#x} of CTA "
                           f"{missing[0][0]} is used but never initialised by its CTA")
    r = _explored(progs, roles, tiles, tuple((b, init[b]) for b in bars))
    answer = ring_answer(r, "pair-ring", lambda f: _words(f, names), lambda p, a: _waits(p, a, names), MAX_PAIR_STATES)
    if answer is not None:
        return answer
    n_it = sum(1 for p in progs for a in p if a.kind == "mma")
    return KernelCheck("pair-ring", "proved", f"{len(progs)} processes of the CTA pair ({', '.join(names[:3])}, "
                       f"...), {n_it} K iterations of {len(tiles)} tiles, over every interleaving and "
                       f"TMA landing order ({r.states} states): every MMA after both CTAs' bytes landed, no "
                       "stage or TMEM column rewritten while read, no deadlock")


#: Explorations already done in this process, by the system with each action's mark replaced by
#: its (process, pc) (the search reads nothing else of a kernel): a kernel edited where the
#: protocol does not change (an epilogue's rows, an instruction descriptor) reuses its search.
#: Oldest dropped past :data:`_MEMO_SIZE`.
_MEMO: dict = {}
_MEMO_SIZE = 16


def _explored(progs: list, roles: list, tiles: list, init: tuple):
    """Law: :func:`~verilayout.simulate.ring.explore_mma_rings` of the pair's system, the same
    answer as a fresh search (it is a function of the actions without their marks); a
    counterexample's mark is that of the action at the same (process, pc) of ``progs``."""
    placed = tuple(tuple(a._replace(mark=(p, i)) for i, a in enumerate(acts)) for p, acts in enumerate(progs))
    system = MmaRingSystem(2, placed, tuple(roles), tuple(tiles), init, MMA_OBSERVED)
    r = _MEMO.get(system)
    if r is None:
        r = explore_mma_rings(system, max_states=MAX_PAIR_STATES)
        while len(_MEMO) >= _MEMO_SIZE:
            del _MEMO[next(iter(_MEMO))]
        _MEMO[system] = r
    if r.error:
        p, i = r.error[1]
        return r._replace(error=(r.error[0], progs[p][i].mark))
    return r


def _waits(p: int, a: Wait, names: list) -> str:
    return f"{names[p]} waits on mbarrier {a.bar[1]:#x} of CTA {a.bar[0]} parity {a.parity}"


def _words(f, names: list) -> str:
    """Law: the message of :class:`~verilayout.simulate.ring.MmaFinding` ``f`` in the pair's words."""
    v, who = f.values, names[f.p]
    text = {
        "over-arrive": lambda: f"{who} arrives on mbarrier {v[0][1]:#x} of CTA {v[0][0]} more times than "
                               "its count in one phase",
        "over-commit": lambda: f"{who}'s commit arrives on mbarrier {v[0][1]:#x} of CTA {v[0][0]} more times "
                               "than its count in one phase, or it is not initialised",
        "load-over-read": lambda: f"CTA {v[0]}'s TMA load of K iteration {v[1]} overwrites stage bytes the MMA "
                                  f"of K iteration {v[2]} still reads",
        "mma-early": lambda: f"the MMA of K iteration {v[0]} is issued before CTA {v[1]}'s TMA bytes of that "
                             "iteration landed",
        "mma-reads-landing": lambda: f"the MMA of K iteration {v[0]} reads CTA {v[1]}'s stage bytes the TMA "
                                     f"load of K iteration {v[2]} is writing",
        "mma-writes-read": lambda: f"the MMA of tile {v[0]} writes TMEM columns {v[1]}..{v[2] - 1} while "
                                   f"{names[v[3]]} has not finished reading tile {v[4]} there",
        "read-unwritten": lambda: f"{who} reads TMEM columns {v[1]}..{v[2] - 1} for tile {v[0]}, which no MMA wrote",
        "read-outside": lambda: f"{who} reads TMEM columns {v[1]}..{v[2] - 1} for tile {v[0]}, whose "
                                f"accumulator the MMAs wrote at columns {v[3]}..{v[4] - 1}",
        "read-early": lambda: f"{who} reads tile {v[0]}'s accumulator before its MMAs completed",
        "read-while-written": lambda: f"{who} reads tile {v[0]}'s accumulator while the MMA writes tile "
                                      f"{v[1]} into it",
    }[f.what]
    return "pair-ring: " + text()
