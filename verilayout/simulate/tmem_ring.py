"""The TMEM accumulator ring of a warp-specialized sm_100a GEMM, checked on one CTA's PTX run
(:func:`verilayout.simulate.ptx_run.run_threads`) that covers several output tiles, independently
of the emitter: nothing of ``kernel.cu`` is read but the PTX's events.

Who is who is read off the run: the *MMA thread* issues ``tcgen05.mma``; an *epilogue warp*
issues ``tcgen05.ld``; the *accumulator barriers* are the mbarriers an epilogue warp waits on or
arrives at. The MMA thread's tile ``j`` starts at each ``tcgen05.mma`` whose enable-input-d is 0
(a new accumulation) and writes TMEM columns ``[c, c + N)`` (``c``: the column of its D address,
``N``: the instruction descriptor's N, PTX ISA "Instruction descriptor", bits 17-22 = N >> 3); an
epilogue warp's tile ``j`` is what it reads after ``j`` arrivals on accumulator barriers.

``acc-ring``: the MMA thread (its accumulator-barrier waits, its MMAs, its ``tcgen05.commit``s)
and the epilogue warps (waits, loads, arrivals) as a transition system, explored over every
interleaving (:func:`verilayout.simulate.ring.explore`; mbarrier phases by PTX ISA 9.7.13.15).
A ``tcgen05.commit`` completes the MMAs issued before it and then arrives (the earliest the
hardware arrives: PTX ISA "tcgen05.commit"). The K ring (TMA <-> MMA) is left out here: it is
explored on its own (``protocol``). An error, by name:

* an epilogue warp reads, for its tile ``j``, columns the MMAs of tile ``j`` did not write;
* it reads them before the MMAs of tile ``j`` completed;
* it reads them after an MMA of a later tile began to write them (the stage the MMA is writing);
* an MMA of tile ``j'`` writes columns an epilogue warp has not finished reading for an
  earlier tile;
* a deadlock (a process waits on a phase that never completes).

``d-store`` (several tiles): each element ``D(r, c)`` inside the problem is stored exactly once,
by an epilogue warp during its tile ``j``, from the TMEM cell (lane ``r - r0``, column
``c_j + c - n0``) where ``(r0, n0)`` is the origin of tile ``j`` as the TMA thread loaded it
(A's row coordinate, B's row coordinate, in its order of tiles) and ``c_j`` the first column of
tile ``j``'s MMAs: the epilogue's tile order is the producer's, each value from its own tile.

>>> MAX_RING_STATES
200000
"""
from __future__ import annotations

import numpy as np

from verilayout.simulate.independent import KernelCheck
from verilayout.simulate.ptx_run import TMEM_TAG, init_count, mma_idesc, phase_parity, stored_values
from verilayout.simulate.ring import complete_phase, explore
from verilayout.simulate.tile_schedule import tile_origins

__all__ = ["MAX_RING_STATES", "acc_ring_check", "tiles_d_store"]

#: States explored before the answer is ``unknown``.
MAX_RING_STATES = 200000


def _thread(run, e) -> int:
    return int(np.asarray(run.threads)[e.lanes[0]])


def _warps_of(run, e) -> set[int]:
    return {int(t) // 32 for t in np.asarray(run.threads)[e.lanes]}


def _enable_d(e) -> bool | None:
    keys = sorted((k for k in e.values if k.startswith("a") and k[1:].isdigit()), key=lambda k: int(k[1:]))
    last = e.values.get(keys[-1]) if keys else None
    return None if last is None else bool(int(last[0]))


def _roles(run):
    """Law: (MMA thread, epilogue warps sorted, accumulator barrier addresses, init counts); None
    where the run has no tcgen05.mma or no tcgen05.ld."""
    mma = next((e for e in run.events if e.op.startswith("tcgen05.mma")), None)
    lds = [e for e in run.events if e.op.startswith("tcgen05.ld.")]
    if mma is None or not lds:
        return None
    epi = sorted({w for e in lds for w in _warps_of(run, e)})
    bars, init = set(), {}
    for e in run.events:
        if e.op.startswith("mbarrier.init"):
            init[int(e.values["addr"][0])] = int(init_count(e.values)[0])
        elif e.op.startswith(("mbarrier.try_wait", "mbarrier.arrive")) and _warps_of(run, e) & set(epi):
            bars.add(int(e.values["addr"][0]))
    return _thread(run, mma), epi, bars, init


def _programs(run, mma_thread: int, epi: list, bars: set):
    """Law: the MMA thread's and each epilogue warp's actions in program order, the MMA tiles
    ``(first MMA, last MMA, column range)`` in issue order; consecutive loads of one warp are one
    ``read`` action, consecutive MMAs of one tile one ``write`` action."""
    mma_prog, tiles, n_mma = [], [], 0
    epi_prog = {w: [] for w in epi}
    arrivals = {w: 0 for w in epi}
    for e in run.events:
        th = np.asarray(run.threads)[e.lanes]
        if mma_thread in th.tolist():
            if e.op.startswith("mbarrier.try_wait") and int(e.values["addr"][0]) in bars:
                mma_prog.append(("wait", int(e.values["addr"][0]), int(phase_parity(e.values)[0]) & 1, e))
            elif e.op.startswith("tcgen05.mma"):
                d = mma_idesc(e.values)
                n = ((int(d[0]) >> 17) & 0x3F) << 3 if d is not None else None
                col = int(e.values["addr"][0]) & 0xFFFF
                if _enable_d(e) is False or not tiles:
                    tiles.append([n_mma, n_mma, (col, col + (n or 0))])
                    mma_prog.append(("write", len(tiles) - 1, e))
                tiles[-1][1] = n_mma
                n_mma += 1
            elif e.op.startswith("tcgen05.commit"):
                mma_prog.append(("retire", n_mma, e))
                if int(e.values["addr"][0]) in bars:
                    mma_prog.append(("arrive", int(e.values["addr"][0]), 1, e))
        for w in epi:
            sel = (th // 32) == w
            if not sel.any():
                continue
            if e.op.startswith("mbarrier.try_wait") and int(e.values["addr"][0]) in bars:
                epi_prog[w].append(("wait", int(e.values["addr"][0]), int(phase_parity(e.values)[0]) & 1, e))
            elif e.op.startswith("mbarrier.arrive") and int(e.values["addr"][0]) in bars:
                epi_prog[w].append(("arrive", int(e.values["addr"][0]), int(sel.sum()), e))
                arrivals[w] += 1
            elif e.op.startswith("tcgen05.ld."):
                num = int(e.op.split(".x")[1].split(".")[0])
                col = int(e.values["addr"][np.nonzero(sel)[0][0]]) & 0xFFFF
                cols = frozenset(range(col, col + num))
                prog = epi_prog[w]
                if prog and prog[-1][0] == "read" and prog[-1][1] == arrivals[w]:
                    prog[-1] = ("read", arrivals[w], prog[-1][2] | cols, prog[-1][3])
                else:
                    prog.append(("read", arrivals[w], cols, e))
    return mma_prog, [tuple(t) for t in tiles], [epi_prog[w] for w in epi]


def acc_ring_check(run) -> KernelCheck:
    """The ``acc-ring`` check of the module docstring on one CTA's run.
    Law: ``proved`` only when no interleaving of the MMA thread and the epilogue warps errs or
    deadlocks; ``unknown`` past :data:`MAX_RING_STATES` states or without the roles.

    >>> from verilayout.simulate.ptx_run import RunResult
    >>> acc_ring_check(RunResult((), True, "", ())).status
    'unknown'
    """
    # long: one breadth-first search over the MMA thread and the epilogue warps, its state and its messages
    roles = _roles(run)
    if roles is None:
        return KernelCheck("acc-ring", "unknown", "the run has no tcgen05.mma or no tcgen05.ld")
    mma_thread, epi, bars, init = roles
    if not bars or any(b not in init for b in bars):
        return KernelCheck("acc-ring", "unknown", "an accumulator barrier is not initialised in the run")
    mma_prog, tiles, epi_progs = _programs(run, mma_thread, epi, bars)
    if any(t[2][1] <= t[2][0] for t in tiles):
        return KernelCheck("acc-ring", "unknown", "an MMA's instruction descriptor is not known")
    progs = [mma_prog] + epi_progs
    names = ["the MMA thread"] + [f"epilogue warp {w}" for w in epi]
    order = sorted(bars)
    start = (tuple(0 for _ in progs), tuple((0, init[b]) for b in order), (), 0)
    same = all([a[:3] for a in p] == [a[:3] for a in epi_progs[0]] for p in epi_progs)

    def canon(s):
        if not same:
            return s
        return ((s[0][0],) + tuple(sorted(s[0][1:])),) + s[1:]

    def bar(s, addr):
        return s[1][order.index(addr)]

    def with_bar(bs, addr, v):
        i = order.index(addr)
        return bs[:i] + (v,) + bs[i + 1:]

    def done_reading(s, p, j) -> bool:          # process p past every read of tile j
        return all(not (a[0] == "read" and a[1] == j) for a in progs[p][s[0][p]:])

    def step(s):
        pcs, bs, _, retired = s
        succ, blocked = [], []
        issued = sum(1 for a in mma_prog[:pcs[0]] if a[0] == "write")   # MMA tiles begun
        for p, prog in enumerate(progs):
            if pcs[p] >= len(prog):
                continue
            a = prog[pcs[p]]
            nbs, nret = bs, retired
            if a[0] == "wait":
                phase, _ = bar(s, a[1])
                if (phase & 1) == a[2]:
                    blocked.append(f"{names[p]} waits on mbarrier {a[1]:#x} parity {a[2]}")
                    continue
            elif a[0] == "arrive":
                phase, pending = bar(s, a[1])
                if pending - a[2] < 0:
                    return [], (f"{names[p]} arrives on mbarrier {a[1]:#x} more times than its "
                                "count in one phase", a[3]), []
                ph, pend, _ = complete_phase(phase, pending - a[2], 0, init[a[1]])
                nbs = with_bar(bs, a[1], (ph, pend))
            elif a[0] == "retire":
                nret = max(retired, a[1])
            elif a[0] == "write":
                j2, (lo, hi) = a[1], tiles[a[1]][2]
                for q in range(1, len(progs)):
                    for j in range(j2):
                        lo_j, hi_j = tiles[j][2]
                        if lo < hi_j and lo_j < hi and not done_reading(s, q, j):
                            return [], (f"acc-ring: the MMA of tile {j2} writes TMEM columns "
                                        f"{lo}..{hi - 1} while {names[q]} has not finished reading "
                                        f"tile {j} there (columns {lo_j}..{hi_j - 1})", a[2]), []
            elif a[0] == "read":
                j, cols = a[1], a[2]
                if j >= len(tiles):
                    return [], (f"acc-ring: {names[p]} reads TMEM columns {min(cols)}..{max(cols)} "
                                f"for tile {j}, which no MMA wrote", a[3]), []
                lo, hi = tiles[j][2]
                if min(cols) < lo or max(cols) >= hi:
                    return [], (f"acc-ring: {names[p]} reads TMEM columns {min(cols)}..{max(cols)} "
                                f"for tile {j}, whose accumulator the MMAs wrote at columns "
                                f"{lo}..{hi - 1}", a[3]), []
                if issued <= j or retired <= tiles[j][1]:
                    return [], (f"acc-ring: {names[p]} reads tile {j}'s accumulator (columns "
                                f"{lo}..{hi - 1}) before its MMAs completed", a[3]), []
                for j2 in range(j + 1, min(issued, len(tiles))):
                    lo2, hi2 = tiles[j2][2]
                    if lo2 <= max(cols) and min(cols) < hi2:
                        return [], (f"acc-ring: {names[p]} reads tile {j}'s accumulator (columns "
                                    f"{min(cols)}..{max(cols)}) while the MMA writes tile {j2} "
                                    "into them", a[3]), []
            npcs = pcs[:p] + (pcs[p] + 1,) + pcs[p + 1:]
            succ.append((npcs, nbs, (), nret))
        return succ, None, blocked

    r = explore(start, step, progs, canon, max_states=MAX_RING_STATES)
    n_tiles, stages = len(tiles), len({t[2] for t in tiles})
    if r.outcome == "counterexample":
        msg, ev = r.error
        return KernelCheck("acc-ring", "counterexample", msg, ev.instr.line if ev.instr else None)
    if r.outcome == "deadlock":
        return KernelCheck("acc-ring", "counterexample", "acc-ring: deadlock: " + "; ".join(r.blocked[:3]))
    if r.outcome == "unknown":
        return KernelCheck("acc-ring", "unknown", f"more than {MAX_RING_STATES} states")
    return KernelCheck("acc-ring", "proved", f"{n_tiles} accumulations (tiles or K slices) through {stages} TMEM accumulator "
                       f"stage(s), the MMA thread and {len(epi)} epilogue warps over every "
                       f"interleaving ({r.states} states): each warp reads each tile's accumulator "
                       "after its MMAs completed and before the next MMA into those columns")


def tiles_d_store(run, mn: tuple, tile: tuple, map_a: int, map_b: int, d_addr: int,
                  tma_stores=()) -> KernelCheck:
    """The several-tile ``d-store`` check of the module docstring (f32 D, TMEM tags); ``tma_stores``:
    ``(event, element indices, bits)`` of the run's TMA stores of D
    (:func:`verilayout.simulate.tma_store.tma_store_elements`), by the issuing thread's warp.
    Law: ``proved`` only when every element inside ``mn`` is stored once, from the TMEM cell of
    the storing warp's tile in the TMA thread's order of tiles.

    >>> from verilayout.simulate.ptx_run import RunResult
    >>> tiles_d_store(RunResult((), True, "", ()), (1, 1), (128, 64), 1, 2, 3).status
    'unknown'
    """
    # long: the stores of every epilogue warp gathered, then each element's origin, count and order
    M, N = mn
    bm, bn = tile
    roles = _roles(run)
    if roles is None:
        return KernelCheck("d-store", "unknown", "the run has no tcgen05.mma or no tcgen05.ld")
    mma_thread, epi, bars, _ = roles
    _, tiles, _ = _programs(run, mma_thread, epi, bars)
    origin = tile_origins(run, (map_a, map_b))     # TMA order of tiles: (A row, B row)
    th = np.asarray(run.threads)
    records = []                                   # (seq, warps per element, element indices, bits)
    for e in run.events:
        if e.op.startswith("st.global"):
            vals = stored_values(e.values)
            if not vals or any(v is None for v in vals):
                return KernelCheck("d-store", "unknown", "a store of a value the run does not know")
            pos = (e.values["addr"].astype(np.int64) - d_addr) // 4
            for k, x in enumerate(vals):
                records.append((e, th[e.lanes] // 32, pos + k, np.asarray(x, dtype=np.uint64)))
    for e, pos, bits in tma_stores:
        if pos is None:
            return KernelCheck("d-store", "unknown", "a TMA store reads shared bytes the run never wrote")
        records.append((e, np.full(len(pos), int(th[e.lanes[0]]) // 32), pos, bits))
    records.sort(key=lambda r: r[0].seq)
    arrive = sorted((e.seq, w) for e in run.events
                    if e.op.startswith("mbarrier.arrive") and int(e.values["addr"][0]) in bars
                    for w in set((th[e.lanes] // 32).tolist()) & set(epi))
    got: dict = {}
    for e, warps, pos, bits in records:
        for q in range(len(pos)):
            w = int(warps[q])
            j = sum(1 for seq, w2 in arrive if w2 == w and seq < e.seq)
            p = int(pos[q])
            row, col = p // N, p % N
            b = int(bits[q]) & 0xFFFFFFFF
            if j >= len(origin) or j >= len(tiles) or not b & TMEM_TAG:
                return KernelCheck("d-store", "counterexample", f"warp {w} stores D({row}, {col}) "
                                   f"during its tile {j}: no such tile loaded, or a value not from "
                                   "TMEM", e.instr.line if e.instr else None)
            lane, tcol = (b >> 16) & 0x7FFF, b & 0xFFFF
            r0, n0 = origin[j]
            want = (row - r0, tiles[j][2][0] + col - n0)
            if (lane, tcol) != want or not (0 <= row - r0 < bm and 0 <= col - n0 < bn):
                return KernelCheck("d-store", "counterexample", f"warp {w} stores D({row}, {col}) "
                                   f"during its tile {j} (origin ({r0}, {n0}) as loaded) from TMEM "
                                   f"cell (lane {lane}, column {tcol}); expected cell {want}",
                                   e.instr.line if e.instr else None)
            got[(row, col)] = got.get((row, col), 0) + 1
    inside = {(r, c) for r in range(M) for c in range(N)}
    if set(got) != inside or any(v != 1 for v in got.values()):
        missing = sorted(inside - set(got))[:2]
        twice = sorted(k for k, v in got.items() if v > 1)[:2]
        outside = sorted(set(got) - inside)[:2]
        return KernelCheck("d-store", "counterexample", f"{len(got)} of the {len(inside)} elements of "
                           f"the {len(origin)} tiles stored; missing {missing}, twice {twice}, "
                           f"outside D {outside}")
    how = " (TMA stores)" if len(tma_stores) else ""
    return KernelCheck("d-store", "proved", f"all {len(inside)} elements of {len(origin)} tiles inside "
                       f"D stored once{how}, each by the epilogue warp's tile in the TMA thread's "
                       "order, from that tile's TMEM cell (lane = row, column = its stage's first "
                       "column + column); none outside")
