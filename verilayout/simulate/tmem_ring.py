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
and the epilogue warps (waits, loads, arrivals) as a transition system, one action a step: the
one-CTA :class:`~verilayout.simulate.ring.MmaRingSystem`, explored over every interleaving
(:func:`verilayout.simulate.ring.explore_mma_rings`; mbarrier phases by PTX ISA 9.7.13.15).
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

from collections.abc import Callable

import numpy as np

from verilayout.simulate.independent import KernelCheck
from verilayout.simulate.ptx_run import TMEM_TAG, init_count, mma_idesc, phase_parity, stored_values
from verilayout.simulate.ring import (Arrive, Exploration, Mma, MmaCommit, MmaRingSystem, TmemRead, TmemTile, Wait,
                                      explore_mma_rings)
from verilayout.simulate.tile_schedule import tile_origins

__all__ = ["MAX_RING_STATES", "acc_ring_check", "tiles_d_store", "mark", "mma_columns", "ld_columns",
           "epilogue_actions", "ring_answer"]

#: States explored before the answer is ``unknown``.
MAX_RING_STATES = 200000
#: Every action is one atomic step of the accumulator ring.
_EVERY_ACTION = ("wait", "arrive", "mma", "mma-commit", "tmem-read")


def _thread(run, e) -> int:
    return int(np.asarray(run.threads)[e.lanes[0]])


def _warps_of(run, e) -> set[int]:
    return {int(t) // 32 for t in np.asarray(run.threads)[e.lanes]}


def mark(e) -> int | None:
    """Law: the PTX line of event ``e``'s instruction (None without one): the mark a ring action
    carries.

    >>> from verilayout.simulate.ptx_run import Event
    >>> mark(Event("tcgen05.ld", 7, 0, np.array([0])))
    """
    return e.instr.line if e.instr else None


def _enable_d(e) -> bool | None:
    keys = sorted((k for k in e.values if k.startswith("a") and k[1:].isdigit()), key=lambda k: int(k[1:]))
    last = e.values.get(keys[-1]) if keys else None
    return None if last is None else bool(int(last[0]))


def mma_columns(e) -> tuple[int, int, bool]:
    """Law: ``(c, N, new)`` of a ``tcgen05.mma`` event: the TMEM column of its D address, the
    instruction descriptor's N (bits 17-22 = N >> 3, PTX ISA 9.7.16 "Instruction descriptor"; 0
    where the run does not know it) and whether its enable-input-d is 0 (a new accumulation).

    >>> from verilayout.simulate.ptx_run import Event
    >>> mma_columns(Event("tcgen05.mma", 1, 0, np.array([0]), {"addr": np.array([0x40080])}))
    (128, 0, False)
    """
    d = mma_idesc(e.values)
    n = ((int(d[0]) >> 17) & 0x3F) << 3 if d is not None else 0
    return int(e.values["addr"][0]) & 0xFFFF, n, _enable_d(e) is False


def ld_columns(e, sel) -> tuple[int, int]:
    """Law: ``(c, num)`` of a ``tcgen05.ld.<shape>.x<num>`` event for the lanes ``sel``: the TMEM
    column of the first selected lane's address and the repeat count.

    >>> from verilayout.simulate.ptx_run import Event
    >>> ld_columns(Event("tcgen05.ld.sync.aligned.32x32b.x16.b32", 1, 0, np.array([0]), {"addr": np.array([64])}), np.array([True]))
    (64, 16)
    """
    return int(e.values["addr"][np.nonzero(sel)[0][0]]) & 0xFFFF, int(e.op.split(".x")[1].split(".")[0])


def ring_answer(r: Exploration, check: str, words: Callable, waits: Callable, max_states: int) -> KernelCheck | None:
    """Law: the ``check``'s :class:`KernelCheck` of an MMA ring's exploration ``r`` that did not
    prove: a counterexample in ``words(finding)`` at its PTX line, a deadlock naming the first three
    blocked processes (``waits(process, wait)``), ``unknown`` past ``max_states``; None when proved.

    >>> ring_answer(Exploration("unknown", None, (), 11), "acc-ring", str, str, 10).message
    'more than 10 states'
    """
    if r.outcome == "counterexample":
        finding, line = r.error
        return KernelCheck(check, "counterexample", words(finding), line)
    if r.outcome == "deadlock":
        return KernelCheck(check, "counterexample", f"{check}: deadlock: " + "; ".join(waits(p, a) for p, a in r.blocked[:3]))
    if r.outcome == "unknown":
        return KernelCheck(check, "unknown", f"more than {max_states} states")
    return None


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


def _wait(e) -> Wait:
    return Wait("wait", (0, int(e.values["addr"][0])), int(phase_parity(e.values)[0]) & 1, mark(e))


def _mma_actions(run, mma_thread: int, bars: set) -> tuple[list, list]:
    """Law: the MMA thread's actions (:class:`Wait` on accumulator barriers, :class:`Mma` at each
    tile's first MMA, :class:`MmaCommit` completing the MMAs so far then :class:`Arrive` on an
    accumulator barrier) and the tiles as ``[first MMA, last MMA, (lo, hi)]`` in issue order."""
    prog, tiles, n_mma = [], [], 0
    for e in run.events:
        if mma_thread not in np.asarray(run.threads)[e.lanes].tolist():
            continue
        if e.op.startswith("mbarrier.try_wait") and int(e.values["addr"][0]) in bars:
            prog.append(_wait(e))
        elif e.op.startswith("tcgen05.mma"):
            col, n, new = mma_columns(e)
            if new or not tiles:
                tiles.append([n_mma, n_mma, (col, col + n)])
                prog.append(Mma("mma", -1, len(tiles) - 1, mark(e)))
            tiles[-1][1] = n_mma
            n_mma += 1
        elif e.op.startswith("tcgen05.commit"):
            prog.append(MmaCommit("mma-commit", (), n_mma, mark(e)))
            if int(e.values["addr"][0]) in bars:
                prog.append(Arrive("arrive", (0, int(e.values["addr"][0])), 1, 0, mark(e)))
    return prog, tiles


def epilogue_actions(run, w: int, bar_of: Callable) -> list:
    """Law: epilogue warp ``w``'s actions in program order: :class:`Wait` and :class:`Arrive` (of
    the warp's selected threads) on the mbarriers ``bar_of(event, lane)`` names (``lane``: 0 for a
    wait, the warp's first for an arrival; None: not one of the ring's), :class:`TmemRead`
    (consecutive ``tcgen05.ld`` of one tile merged: the tile = the warp's arrivals so far).

    >>> from verilayout.simulate.ptx_run import RunResult
    >>> epilogue_actions(RunResult((), True, "", ()), 4, lambda e, i: None)
    []
    """
    prog, arrivals = [], 0
    for e in run.events:
        sel = (np.asarray(run.threads)[e.lanes] // 32) == w
        if not sel.any():
            continue
        if e.op.startswith("mbarrier.try_wait") and bar_of(e, 0) is not None:
            prog.append(Wait("wait", bar_of(e, 0), int(phase_parity(e.values)[0]) & 1, mark(e)))
        elif e.op.startswith("mbarrier.arrive") and bar_of(e, int(np.nonzero(sel)[0][0])) is not None:
            prog.append(Arrive("arrive", bar_of(e, int(np.nonzero(sel)[0][0])), int(sel.sum()), 0, mark(e)))
            arrivals += 1
        elif e.op.startswith("tcgen05.ld."):
            col, num = ld_columns(e, sel)
            last = prog[-1] if prog else None
            if last and last.kind == "tmem-read" and last.tile == arrivals:
                prog[-1] = last._replace(lo=min(last.lo, col), hi=max(last.hi, col + num))
            else:
                prog.append(TmemRead("tmem-read", arrivals, col, col + num, mark(e)))
    return prog


def _accumulator_bar(bars: set) -> Callable:
    """The one-CTA ring's mbarrier of an event: ``(0, address)`` when the address is an
    accumulator barrier, else None."""
    def bar_of(e, _lane: int):
        addr = int(e.values["addr"][0])
        return (0, addr) if addr in bars else None
    return bar_of


def _programs(run, mma_thread: int, epi: list, bars: set):
    """Law: the MMA thread's and each epilogue warp's actions in program order
    (:func:`_mma_actions`, :func:`epilogue_actions`) and the MMA tiles (:class:`TmemTile`, last:
    the index of the tile's last MMA) in issue order."""
    mma_prog, tiles = _mma_actions(run, mma_thread, bars)
    return (mma_prog, [TmemTile(lo, hi, last) for _first, last, (lo, hi) in tiles],
            [epilogue_actions(run, w, _accumulator_bar(bars)) for w in epi])


def acc_ring_check(run) -> KernelCheck:
    """The ``acc-ring`` check of the module docstring on one CTA's run.
    Law: ``proved`` only when no interleaving of the MMA thread and the epilogue warps errs or
    deadlocks; ``unknown`` past :data:`MAX_RING_STATES` states or without the roles.

    >>> from verilayout.simulate.ptx_run import RunResult
    >>> acc_ring_check(RunResult((), True, "", ())).status
    'unknown'
    """
    roles = _roles(run)
    if roles is None:
        return KernelCheck("acc-ring", "unknown", "the run has no tcgen05.mma or no tcgen05.ld")
    mma_thread, epi, bars, init = roles
    if not bars or any(b not in init for b in bars):
        return KernelCheck("acc-ring", "unknown", "an accumulator barrier is not initialised in the run")
    mma_prog, tiles, epi_progs = _programs(run, mma_thread, epi, bars)
    if any(t.hi <= t.lo for t in tiles):
        return KernelCheck("acc-ring", "unknown", "an MMA's instruction descriptor is not known")
    names = ["the MMA thread"] + [f"epilogue warp {w}" for w in epi]
    system = MmaRingSystem(1, (tuple(mma_prog),) + tuple(tuple(p) for p in epi_progs),
                           ((0, "mma"),) + tuple((0, "epilogue") for _ in epi), tuple(tiles),
                           tuple(((0, b), init[b]) for b in sorted(bars)), _EVERY_ACTION)
    r = explore_mma_rings(system, max_states=MAX_RING_STATES)
    answer = ring_answer(r, "acc-ring", lambda f: _words(f, names),
                         lambda p, a: f"{names[p]} waits on mbarrier {a.bar[1]:#x} parity {a.parity}", MAX_RING_STATES)
    if answer is not None:
        return answer
    n_tiles, stages = len(tiles), len({(t.lo, t.hi) for t in tiles})
    return KernelCheck("acc-ring", "proved", f"{n_tiles} accumulations (tiles or K slices) through {stages} TMEM accumulator "
                       f"stage(s), the MMA thread and {len(epi)} epilogue warps over every "
                       f"interleaving ({r.states} states): each warp reads each tile's accumulator "
                       "after its MMAs completed and before the next MMA into those columns")


def _words(f, names: list) -> str:
    """Law: the message of :class:`~verilayout.simulate.ring.MmaFinding` ``f`` in the one-CTA ring's
    words (an arrival beyond the count is worded without the check's name)."""
    v, who = f.values, names[f.p]
    if f.what in ("over-arrive", "over-commit"):
        return f"{who} arrives on mbarrier {v[0][1]:#x} more times than its count in one phase"
    text = {
        "mma-writes-read": lambda: f"the MMA of tile {v[0]} writes TMEM columns {v[1]}..{v[2] - 1} while "
                                   f"{names[v[3]]} has not finished reading tile {v[4]} there (columns "
                                   f"{v[5]}..{v[6] - 1})",
        "read-unwritten": lambda: f"{who} reads TMEM columns {v[1]}..{v[2] - 1} for tile {v[0]}, which no MMA wrote",
        "read-outside": lambda: f"{who} reads TMEM columns {v[1]}..{v[2] - 1} for tile {v[0]}, whose "
                                f"accumulator the MMAs wrote at columns {v[3]}..{v[4] - 1}",
        "read-early": lambda: f"{who} reads tile {v[0]}'s accumulator (columns {v[1]}..{v[2] - 1}) before "
                              "its MMAs completed",
        "read-while-written": lambda: f"{who} reads tile {v[0]}'s accumulator (columns {v[2]}..{v[3] - 1}) "
                                      f"while the MMA writes tile {v[1]} into them",
    }.get(f.what, lambda: f"{who}: {f.what} {v}")
    return "acc-ring: " + text()


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
            want = (row - r0, tiles[j].lo + col - n0)
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
