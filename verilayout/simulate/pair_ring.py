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
explored together over every interleaving and every landing order
(:func:`verilayout.simulate.ring.explore`). An error, by name:

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
next action others observe (:data:`OBSERVED`); an epilogue warp's wait, TMEM reads and release
are one step, whose reads are checked both when they happen and, from the MMA's side, as long as
they are still to come.

>>> barrier_key(0x100, 1), barrier_key((1 + 1) * CLUSTER_WINDOW + 0x100, 0)
((1, 256), (1, 256))
"""
from __future__ import annotations

import numpy as np

from verilayout.simulate.independent import KernelCheck
from verilayout.simulate.ptx_run import (CLUSTER_WINDOW, barrier_key, init_count, mma_idesc, phase_parity, tma_mbarrier,
                                         tx_count)
from verilayout.simulate.ring import complete_phase, explore
from verilayout.simulate.tma_store import is_tma_store

__all__ = ["MAX_PAIR_STATES", "barrier_key", "pair_programs", "pair_ring_check"]

#: States explored before the answer is ``unknown``.
MAX_PAIR_STATES = 400000
#: Actions other processes observe: an atomic step ends after one of them (or before a wait).
OBSERVED = ("arrive", "expect", "load", "mma", "commit")


def _threads(run, e) -> np.ndarray:
    return np.asarray(run.threads)[e.lanes]


def _is_load(e) -> bool:
    return e.op.startswith("cp.async.bulk.tensor") and not is_tma_store(e.op)


def _mask(e) -> int | None:
    v = e.values.get("a0")
    return None if v is None else int(v[0]) & 0xFFFF


def _enable_d(e) -> bool | None:
    keys = sorted((k for k in e.values if k.startswith("a") and k[1:].isdigit()), key=lambda k: int(k[1:]))
    last = e.values.get(keys[-1]) if keys else None
    return None if last is None else bool(int(last[0]))


def _producer(run, cta: int, load_bytes) -> list:
    """Law: the producer thread's actions: ``wait``, ``expect`` (arrive with tx bytes), ``load``
    (one per K iteration: the loads after one wait merged, their bytes summed, their regions
    kept); empty without a TMA load."""
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
            prog.append(("wait", barrier_key(int(e.values["addr"][0]), cta), int(phase_parity(e.values)[0]) & 1, e))
        elif e.op.startswith("mbarrier.arrive.expect_tx"):
            prog.append(("expect", barrier_key(int(e.values["addr"][0]), cta), int(tx_count(e.values)[0]), e))
        elif _is_load(e):
            bar = barrier_key(int(tma_mbarrier(e.values)[0]), cta)
            dst, n = int(e.values["addr"][0]), load_bytes(int(e.values["map"][0]))
            last = prog[-1] if prog else None
            if last and last[0] == "load" and last[1][1] == it and last[2] == bar:
                prog[-1] = ("load", last[1], bar, last[3] + n, last[4] + ((dst, dst + n),), last[5])
            else:
                prog.append(("load", (cta, it), bar, n, ((dst, dst + n),), e))
    return prog


def _mma_thread(run, cta: int) -> tuple[list, list]:
    """Law: the MMA thread's actions (``wait``, ``mma`` per K iteration: the MMAs between two
    commits, with its tile and TMEM columns, ``commit`` with its barriers) and the tiles'
    columns; empty where the run issues no MMA."""
    first = next((e for e in run.events if e.op.startswith("tcgen05.mma")), None)
    if first is None:
        return [], []
    me = int(_threads(run, first)[0])
    prog, tiles, it = [], [], 0
    for e in run.events:
        if me not in _threads(run, e).tolist():
            continue
        if e.op.startswith("mbarrier.try_wait"):
            prog.append(("wait", barrier_key(int(e.values["addr"][0]), cta), int(phase_parity(e.values)[0]) & 1, e))
        elif e.op.startswith("tcgen05.mma"):
            d = mma_idesc(e.values)
            n = ((int(d[0]) >> 17) & 0x3F) << 3 if d is not None else 0
            col = int(e.values["addr"][0]) & 0xFFFF
            if _enable_d(e) is False or not tiles:
                tiles.append((col, col + n))
            if not prog or prog[-1][0] != "mma" or prog[-1][1] != it:
                prog.append(("mma", it, len(tiles) - 1, e))
        elif e.op.startswith("tcgen05.commit"):
            addr = int(e.values["addr"][0])
            mask = _mask(e) if "multicast" in e.op else None
            ctas = [c for c in range(16) if mask is not None and mask >> c & 1] or [barrier_key(addr, cta)[0]]
            prog.append(("commit", tuple((c, barrier_key(addr, cta)[1]) for c in ctas), e))
            if prog[-2][0] == "mma" and prog[-2][1] == it:
                it += 1
    return prog, tiles


def _epilogue(run, cta: int) -> list[list]:
    """Law: each epilogue warp's actions: ``wait``/``arrive`` on the barriers it uses, ``read``
    (consecutive tcgen05.ld of one tile merged: the tile = the warp's arrivals so far)."""
    th = np.asarray(run.threads)
    warps = sorted({int(t) // 32 for e in run.events if e.op.startswith("tcgen05.ld.") for t in th[e.lanes]})
    progs = []
    for w in warps:
        prog, arrivals = [], 0
        for e in run.events:
            sel = (th[e.lanes] // 32) == w
            if not sel.any():
                continue
            if e.op.startswith("mbarrier.try_wait"):
                prog.append(("wait", barrier_key(int(e.values["addr"][0]), cta), int(phase_parity(e.values)[0]) & 1, e))
            elif e.op.startswith("mbarrier.arrive"):
                prog.append(("arrive", barrier_key(int(e.values["addr"][np.nonzero(sel)[0][0]]), cta), int(sel.sum()), e))
                arrivals += 1
            elif e.op.startswith("tcgen05.ld."):
                num = int(e.op.split(".x")[1].split(".")[0])
                col = int(e.values["addr"][np.nonzero(sel)[0][0]]) & 0xFFFF
                if prog and prog[-1][0] == "read" and prog[-1][1] == arrivals:
                    prog[-1] = ("read", arrivals, (min(prog[-1][2][0], col), max(prog[-1][2][1], col + num)), prog[-1][3])
                else:
                    prog.append(("read", arrivals, (col, col + num), e))
        progs.append((w, prog))
    return progs


def pair_programs(runs: list, load_bytes) -> tuple[list, list, list, dict]:
    """Law: ``(programs, names, tiles, init)`` of the pair's processes read off the runs of CTA 0
    and CTA 1 (``load_bytes(map address)``: the bytes of one TMA load of that tensor map):
    each CTA's producer, each CTA's MMA thread (if it issues MMAs), each epilogue warp; the MMA
    tiles' TMEM columns; every barrier's init count by (CTA, offset)."""
    progs, names, tiles, init = [], [], [], {}
    for cta, run in enumerate(runs):
        for e in run.events:
            if e.op.startswith("mbarrier.init"):
                init[barrier_key(int(e.values["addr"][0]), cta)] = int(init_count(e.values)[0])
        progs.append(_producer(run, cta, load_bytes))
        names.append(f"CTA {cta}'s producer")
        mma, t = _mma_thread(run, cta)
        if mma:
            progs.append(mma)
            names.append(f"CTA {cta}'s MMA thread")
            tiles = t
        for w, prog in _epilogue(run, cta):
            progs.append(prog)
            names.append(f"CTA {cta}'s epilogue warp {w}")
    return progs, names, tiles, init


def pair_ring_check(runs: list, load_bytes) -> KernelCheck:
    """The ``pair-ring`` check of the module docstring on the runs of both CTAs of a pair.
    Law: ``proved`` only when no interleaving and no landing order errs or deadlocks;
    ``unknown`` past :data:`MAX_PAIR_STATES` states or without the roles.

    >>> from verilayout.simulate.ptx_run import RunResult
    >>> pair_ring_check([RunResult((), True, "", ())] * 2, lambda m: 0).status
    'unknown'
    """
    progs, names, tiles, init = pair_programs(runs, load_bytes)
    mma_p = next((p for p, n in enumerate(names) if "MMA thread" in n), None)
    if mma_p is None or not all(progs[p] for p, n in enumerate(names) if "producer" in n):
        return KernelCheck("pair-ring", "unknown", "a run has no TMA load, or no CTA issues tcgen05.mma")
    bars = sorted({a[1] for p in progs for a in p if a[0] in ("wait", "expect", "arrive")}
                  | {a[2] for p in progs for a in p if a[0] == "load"}
                  | {b for p in progs for a in p if a[0] == "commit" for b in a[1]})
    missing = [b for b in bars if b not in init]
    if missing:
        return KernelCheck("pair-ring", "counterexample", f"pair-ring: mbarrier {missing[0][1]:#x} of CTA "
                           f"{missing[0][0]} is used but never initialised by its CTA")
    return _verdict(_explored(progs, names, tiles, bars, init, mma_p), progs, names, tiles)


#: Explorations already done in this process, by the programs' actions without their events (the
#: search reads nothing else): a kernel edited where the protocol does not change (an epilogue's
#: rows, an instruction descriptor) reuses its search. Oldest dropped past :data:`_MEMO_SIZE`.
_MEMO: dict = {}
_MEMO_SIZE = 16


def _explored(progs, names, tiles, bars, init, mma_p):
    """Law: :func:`explore` of the pair's programs, the same answer as a fresh search (it is a
    function of the event-free actions); a counterexample's event is the one at the same
    (process, pc) of ``progs``."""
    key = (tuple(tuple(a[:-1] for a in p) for p in progs), tuple(names), tuple(tiles), tuple(sorted(init.items())))
    r = _MEMO.get(key)
    if r is None:
        r = explore(_start(progs, bars, init), _stepper(progs, names, tiles, bars, init, mma_p), progs,
                    _canon(progs, names), max_states=MAX_PAIR_STATES)
        if r.error:
            r = r._replace(error=(r.error[0], next((p, i) for p, prog in enumerate(progs)
                                                   for i, a in enumerate(prog) if a[-1] is r.error[1])))
        while len(_MEMO) >= _MEMO_SIZE:
            del _MEMO[next(iter(_MEMO))]
        _MEMO[key] = r
    if r.error:
        p, i = r.error[1]
        return r._replace(error=(r.error[0], progs[p][i][-1]))
    return r


def _start(progs, bars, init):
    return (tuple(0 for _ in progs), tuple((0, init[b], 0) for b in bars), frozenset(), 0)


def _canon(progs, names):
    """Epilogue warps of one CTA with the same actions are interchangeable: their pcs sorted."""
    groups: dict = {}
    for p, n in enumerate(names):
        if "epilogue" in n:
            key = (n.split("'")[0], tuple(a[:3] for a in progs[p]))
            groups.setdefault(key, []).append(p)
    classes = [g for g in groups.values() if len(g) > 1]

    def canon(s):
        pcs = list(s[0])
        for g in classes:
            for p, v in zip(g, sorted(pcs[q] for q in g)):
                pcs[p] = v
        return (tuple(pcs),) + s[1:]
    return canon


def _loads(progs) -> dict:
    """(CTA, iteration) -> the ``(process, pc)`` of its loads."""
    out: dict = {}
    for p, prog in enumerate(progs):
        for i, a in enumerate(prog):
            if a[0] == "load":
                out.setdefault(a[1], []).append((p, i))
    return out


def _landed(loads, s, cta_it) -> bool:
    """Every load of (CTA, iteration) issued (its producer past it) and none in flight."""
    return all(s[0][p] > i and (p, i) not in s[2] for p, i in loads.get(cta_it, ()))


def _stepper(progs, names, tiles, bars, init, mma_p):
    # long: one transition function: each process's next action, each in-flight load's landing
    loads = _loads(progs)
    ctas = sorted({k[0] for k in loads})
    regions = {k: [r for p, i in v for r in progs[p][i][4]] for k, v in loads.items()}
    mma_prog = progs[mma_p]
    mmas = [x for x in mma_prog if x[0] == "mma"]
    issued_at = [mmas[:sum(1 for x in mma_prog[:k] if x[0] == "mma")] for k in range(len(mma_prog) + 1)]
    last_mma = {m[2]: i for i, m in enumerate(mmas)}           # tile -> its last MMA's index
    bar_at = {b: i for i, b in enumerate(bars)}

    def arrive(bs, key, n, tx=0):
        i = bar_at[key]
        phase, pending, t = bs[i]
        if pending - n < 0:
            return None
        return bs[:i] + (complete_phase(phase, pending - n, t + tx, init[key]),) + bs[i + 1:]

    def reading(s, p, j):                       # process p has a read of tile j still to do
        return any(a[0] == "read" and a[1] == j for a in progs[p][s[0][p]:])

    def action(p, a, st):
        """One action of process p on st = (pcs, bars, flight, retired): the new st, or an error,
        or None where a wait blocks."""
        pcs, bs, flight, retired = st
        issued = issued_at[pcs[mma_p]]          # the MMAs issued so far (read, never changed)
        if a[0] == "wait":
            return None if bs[bar_at[a[1]]][0] & 1 == a[2] else st
        if a[0] in ("expect", "arrive"):
            nbs = arrive(bs, a[1], 1 if a[0] == "expect" else a[2], a[2] if a[0] == "expect" else 0)
            if nbs is None:
                return (f"pair-ring: {names[p]} arrives on mbarrier {a[1][1]:#x} of CTA {a[1][0]} more "
                        "times than its count in one phase")
            return (pcs, nbs, flight, retired)
        if a[0] == "load":
            cta, it = a[1]
            for m in issued[retired:]:
                if m[1] != it and _overlap(a[4], regions.get((cta, m[1]), ())):
                    return (f"pair-ring: CTA {cta}'s TMA load of K iteration {it} overwrites stage bytes "
                            f"the MMA of K iteration {m[1]} still reads")
            return (pcs, bs, flight | {(p, pcs[p])}, retired)
        if a[0] == "mma":
            for cta in ctas:
                if not _landed(loads, st, (cta, a[1])):
                    return (f"pair-ring: the MMA of K iteration {a[1]} is issued before CTA {cta}'s TMA "
                            "bytes of that iteration landed")
                for q, i in flight:
                    b = progs[q][i]
                    if b[1][0] == cta and b[1][1] != a[1] and _overlap(b[4], regions.get((cta, a[1]), ())):
                        return (f"pair-ring: the MMA of K iteration {a[1]} reads CTA {cta}'s stage bytes "
                                f"the TMA load of K iteration {b[1][1]} is writing")
            return _tmem_write(progs, names, tiles, st, a, reading) or st
        if a[0] == "commit":
            nbs = bs
            for key in a[1]:
                nbs = arrive(nbs, key, 1) if key in bars else None
                if nbs is None:
                    return (f"pair-ring: {names[p]}'s commit arrives on mbarrier {key[1]:#x} of CTA "
                            f"{key[0]} more times than its count in one phase, or it is not initialised")
            return (pcs, nbs, flight, len(issued))
        return _tmem_read(names[p], tiles, a, issued, retired, last_mma) or st

    def step(s):
        succ, blocked = [], []
        for p, i in s[2]:                        # a TMA load lands
            a = progs[p][i]
            k = bar_at[a[2]]
            phase, pending, t = s[1][k]
            nb = s[1][:k] + (complete_phase(phase, pending, t - a[3], init[a[2]]),) + s[1][k + 1:]
            succ.append((s[0], nb, s[2] - {(p, i)}, s[3]))
        for p, prog in enumerate(progs):
            st, pc = s, s[0][p]
            while pc < len(prog):                # one atomic step: up to the next wait or past an observed action
                a = prog[pc]
                if a[0] == "wait" and pc > s[0][p]:
                    break
                nxt = action(p, a, (st[0][:p] + (pc,) + st[0][p + 1:],) + st[1:])
                if nxt is None:
                    blocked.append(f"{names[p]} waits on mbarrier {a[1][1]:#x} of CTA {a[1][0]} parity {a[2]}")
                    break
                if isinstance(nxt, str):
                    return [], (nxt, a[-1]), []
                st, pc = nxt, pc + 1
                if a[0] in OBSERVED:
                    break
            if pc > s[0][p]:
                succ.append((st[0][:p] + (pc,) + st[0][p + 1:],) + st[1:])
        return succ, None, blocked
    return step


def _overlap(xs, ys) -> bool:
    return any(lo < h and l2 < hi for lo, hi in xs for l2, h in ys)


def _tmem_write(progs, names, tiles, s, a, reading) -> str | None:
    """An MMA beginning tile j2 writes columns an epilogue warp still reads for an earlier tile."""
    j2 = a[2]
    lo, hi = tiles[j2]
    for q, n in enumerate(names):
        if "epilogue" not in n:
            continue
        for j in range(j2):
            lo_j, hi_j = tiles[j]
            if lo < hi_j and lo_j < hi and reading(s, q, j):
                return (f"pair-ring: the MMA of tile {j2} writes TMEM columns {lo}..{hi - 1} while {n} "
                        f"has not finished reading tile {j} there")
    return None


def _tmem_read(name, tiles, a, issued, retired, last_mma) -> str | None:
    j, (c0, c1) = a[1], a[2]
    if j >= len(tiles):
        return f"pair-ring: {name} reads TMEM columns {c0}..{c1 - 1} for tile {j}, which no MMA wrote"
    lo, hi = tiles[j]
    if c0 < lo or c1 > hi:
        return (f"pair-ring: {name} reads TMEM columns {c0}..{c1 - 1} for tile {j}, whose accumulator "
                f"the MMAs wrote at columns {lo}..{hi - 1}")
    last = last_mma.get(j)
    if last is None or retired <= last:
        return f"pair-ring: {name} reads tile {j}'s accumulator before its MMAs completed"
    for m in issued:
        if m[2] > j and tiles[m[2]][0] < c1 and c0 < tiles[m[2]][1]:
            return f"pair-ring: {name} reads tile {j}'s accumulator while the MMA writes tile {m[2]} into it"
    return None


def _verdict(r, progs, names, tiles) -> KernelCheck:
    if r.outcome == "counterexample":
        msg, ev = r.error
        return KernelCheck("pair-ring", "counterexample", msg, ev.instr.line if ev.instr else None)
    if r.outcome == "deadlock":
        return KernelCheck("pair-ring", "counterexample", "pair-ring: deadlock: " + "; ".join(r.blocked[:3]))
    if r.outcome == "unknown":
        return KernelCheck("pair-ring", "unknown", f"more than {MAX_PAIR_STATES} states")
    n_it = sum(1 for p in progs for a in p if a[0] == "mma")
    return KernelCheck("pair-ring", "proved", f"{len(progs)} processes of the CTA pair ({', '.join(names[:3])}, "
                       f"...), {n_it} K iterations of {len(tiles)} tiles, over every interleaving and "
                       f"TMA landing order ({r.states} states): every MMA after both CTAs' bytes landed, no "
                       "stage or TMEM column rewritten while read, no deadlock")
