"""The mbarrier ring as a transition system, and its one explorer. The stage ring of one CTA
(:mod:`verilayout.simulate.gemm_check`, sm_90a and sm_100a) and the rings of a cluster's CTAs
(:mod:`verilayout.simulate.cluster_protocol`) are one system parametrized by the CTA count
(:class:`RingSystem`; one CTA is a cluster of 1), explored by :func:`explore_rings` over the same
breadth-first search (:func:`explore`), cut into the same atomic steps (:func:`step_ends`), with
the same mbarrier and wgmma-group rules (:func:`complete_phase`, :func:`retire_groups`). The
tcgen05 MMA rings, where one MMA thread feeds TMEM accumulator stages that epilogue warps read
(one CTA: :mod:`verilayout.simulate.tmem_ring`; the CTA pair of ``cta_group::2``:
:mod:`verilayout.simulate.pair_ring`), are one system parametrized by the CTA count too
(:class:`MmaRingSystem`), explored by :func:`explore_mma_rings` over the same search, atomic
steps and mbarrier rule, with typed actions for what sm_90a has not: :class:`Load`,
:class:`Mma`, :class:`MmaCommit` (its multicast barriers) and :class:`TmemRead`.

The rules are the PTX ISA's: an mbarrier's phase completes when its pending arrivals and its
tx-count are both zero, and the next phase expects the init count again (PTX ISA 9.7.13.15,
"mbarrier"); ``wgmma.wait_group N`` waits until all but the N most recent committed groups
completed (PTX ISA 9.7.15.7, ``wgmma.wait_group``).

>>> step_ends([("wait",), ("read",), ("arrive",), ("wait",)])
[3, 3, 3, 4]
"""
from __future__ import annotations

import bisect
import functools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from verilayout.errors import LayoutError

__all__ = ["GUARDS", "ARRIVALS", "step_ends", "complete_phase", "retire_groups", "Exploration",
           "explore", "Wait", "Arrive", "Init", "Issue", "Read", "Commit", "Retire", "ClusterArrive",
           "ClusterWait", "RingTma", "RingSystem", "explore_rings", "process_name", "Load", "Mma", "MmaCommit",
           "TmemRead", "TmemTile", "MmaFinding", "MMA_OBSERVED", "MmaRingSystem", "explore_mma_rings"]

#: Actions that may block a process (an mbarrier wait, a cluster barrier wait).
GUARDS = ("wait", "cwait")
#: Actions other processes observe (an mbarrier arrival, a cluster barrier arrival).
ARRIVALS = ("arrive", "carrive")


def step_ends(acts: list, arrivals: tuple = ARRIVALS) -> list[int]:
    """Law: ``ends[pc]`` is the first ``j > pc`` where ``acts[j]`` is a guard (:data:`GUARDS`) or
    ``acts[j - 1]`` an arrival (an action of a kind in ``arrivals``: others observe it), else
    ``len(acts)``: the atomic step of a process at ``pc`` is ``acts[pc:ends[pc]]`` (from a guard
    up to the next guard or through the next arrival: what happens in between touches the
    process's own state).

    >>> step_ends([("wait",), ("read",), ("arrive",), ("tma",), ("wait",)])
    [3, 3, 3, 4, 5]
    >>> step_ends([("wait",), ("read",), ("carrive",), ("cwait",)])
    [3, 3, 3, 4]
    >>> step_ends([("wait",), ("read",), ("load",)], arrivals=("wait", "read", "load"))
    [1, 2, 3]
    """
    n = len(acts)
    ends, nxt = [n] * n, n
    for j in range(n - 1, -1, -1):
        ends[j] = nxt
        if acts[j][0] in GUARDS or (j > 0 and acts[j - 1][0] in arrivals):
            nxt = j
    return ends


def complete_phase(phase: int, pending: int, tx: int, count: int) -> tuple[int, int, int]:
    """Law: ``(phase ^ 1, count, 0)`` when ``pending == tx == 0`` (the phase completes and the
    next one expects ``count`` arrivals), else the arguments unchanged.

    >>> complete_phase(0, 0, 0, 2), complete_phase(0, 1, 0, 2), complete_phase(1, 0, -64, 2)
    ((1, 2, 0), (0, 1, 0), (1, 0, -64))
    """
    if pending == 0 and tx == 0:
        return phase ^ 1, count, tx
    return phase, pending, tx


def retire_groups(groups: tuple, n: int) -> tuple[tuple, tuple]:
    """Law: ``(retired, pending)`` after ``wgmma.wait_group n`` on the committed ``groups``
    (oldest first): all but the ``n`` most recent retire; ``retired + pending == groups``.

    >>> retire_groups(("g0", "g1", "g2"), 1), retire_groups(("g0",), 0)
    ((('g0', 'g1'), ('g2',)), (('g0',), ()))
    """
    pending = groups[len(groups) - n:] if n else ()
    return groups[:len(groups) - len(pending)], pending


class Exploration(NamedTuple):
    """The answer of :func:`explore`: ``outcome`` (``proved``, ``counterexample``, ``deadlock``
    or ``unknown``), the error ``(message, mark)`` of a counterexample, what each blocked
    process waits for in a deadlock, and the number of states seen."""
    outcome: str
    error: Any
    blocked: tuple
    states: int


def explore(start: Any, step: Callable, prog: Any, canon: Callable | None = None, *,
            max_states: int) -> Exploration:
    """Breadth first over every state reachable from ``start``. ``step(s)`` gives
    ``(successors, error, blocked)``; ``canon`` (if any) maps a successor to its class's
    representative (a symmetry); ``prog`` holds each process's actions.

    Law: ``counterexample`` with the first error a step reports; ``deadlock`` at a state with no
    successor where a process is not at the end of its program (``s[0]``: the pcs) or a TMA is
    in flight (``s[2]``); ``unknown`` once more than ``max_states`` states were seen; else
    ``proved``.

    >>> s0 = ((0,), (), frozenset())                 # one process at pc 0, nothing in flight
    >>> explore(s0, lambda s: ([], None, ["p waits"]), [[("wait",)]], max_states=10)[:3]
    ('deadlock', None, ('p waits',))
    >>> explore(s0, lambda s: ([], None, []), [[]], max_states=10)
    Exploration(outcome='proved', error=None, blocked=(), states=1)
    """
    seen = {start}
    queue = deque([start])
    while queue:
        if len(seen) > max_states:
            return Exploration("unknown", None, (), len(seen))
        s = queue.popleft()
        succ, err, blocked = step(s)
        if err:
            return Exploration("counterexample", err, (), len(seen))
        if not succ:
            if all(pc == len(prog[p]) for p, pc in enumerate(s[0])) and not s[2]:
                continue
            return Exploration("deadlock", None, tuple(blocked), len(seen))
        for n in succ:
            if canon is not None:
                n = canon(n)
            k = len(seen)
            seen.add(n)
            if len(seen) != k:
                queue.append(n)
    return Exploration("proved", None, (), len(seen))


# ----- the stage rings of 1..N CTAs: one transition system ----------------------------------------
# Processes are numbered CTA-major: CTA x's producer (the thread issuing its TMAs) is process
# x (ncons + 1), its consumer warpgroup q is process x (ncons + 1) + 1 + q. An mbarrier is named
# (CTA, shared address); every action carries a ``mark`` last: (an index the caller maps back to
# its event, the PTX line), which errors and blocked waits report.

class Wait(NamedTuple):
    """``mbarrier.try_wait.parity``: a guard, passes once the phase of ``parity`` completed."""
    kind: str
    bar: tuple
    parity: int
    mark: tuple


class Arrive(NamedTuple):
    """``mbarrier.arrive[.expect_tx]`` of ``count`` threads on ``bar`` (possibly a peer's, through
    ``mapa``), adding ``tx`` bytes to its tx-count."""
    kind: str
    bar: tuple
    count: int
    tx: int
    mark: tuple


class Init(NamedTuple):
    """``mbarrier.init`` of ``bar`` with ``count`` (a cluster's CTAs initialise in the ring)."""
    kind: str
    bar: tuple
    count: int
    mark: tuple


class Issue(NamedTuple):
    """The producer issues TMA load ``tma`` (an index of :attr:`RingSystem.tmas`)."""
    kind: str
    tma: int
    mark: tuple


class Read(NamedTuple):
    """A consumer's MMA reads the shared addresses ``addrs`` ((CTA, address) pairs) in pipeline
    iteration ``it``."""
    kind: str
    addrs: tuple
    it: int
    mark: tuple


class Commit(NamedTuple):
    """``wgmma.commit_group``: the reads since the last commit become one group."""
    kind: str
    mark: tuple


class Retire(NamedTuple):
    """``wgmma.wait_group keep``: all groups but the ``keep`` most recent retire (release their
    stage buffers)."""
    kind: str
    keep: int
    mark: tuple


class ClusterArrive(NamedTuple):
    """``barrier.cluster.arrive``."""
    kind: str
    mark: tuple


class ClusterWait(NamedTuple):
    """``barrier.cluster.wait`` (the ``index``-th of the process): a guard, passes once every
    process made ``index + 1`` cluster arrivals."""
    kind: str
    index: int
    mark: tuple


@dataclass(frozen=True)
class RingTma:
    """One TMA load: the issuing CTA, its destination (low 18 bits of the shared address), the
    bytes landing in each destination CTA, its mbarrier's address, its pipeline iteration, the
    CTAs it lands in (``(sender,)`` without multicast), the stage buffer (base address) it fills
    and its mark."""
    sender: int
    dst: int
    nbytes: int
    bar: int
    it: int
    dests: tuple
    buffer: int
    mark: tuple


@dataclass(frozen=True)
class RingSystem:
    """The stage rings of ``ncta`` CTAs, each with one producer and ``ncons`` consumer processes.

    ``prog``: each process's actions in program order (:class:`Wait`, :class:`Arrive`, ...;
    CTA-major numbering above). ``tmas``: the TMA loads :class:`Issue` names. ``preinit``: the
    ``((CTA, mbarrier), count)`` pairs initialised before the ring starts (one CTA: its
    ``mbarrier.init`` before the CTA barrier); a cluster initialises in the ring (:class:`Init`).
    ``eager_landing``: each TMA landing happens before any process moves again (an assumption
    the caller states); else every landing order is explored.

    The CTA count sets the rules that only peers make necessary: with ``ncta > 1`` a stage buffer
    fills in slices (a TMA of the iteration it holds adds one), a tx-count may go below zero while
    an arrival is pending (a peer's bytes before this CTA's ``expect_tx``), nothing may arrive or
    land in a CTA that has exited, releases are counted and interchangeable consumers are
    explored once (a symmetry). One CTA: one box per buffer and iteration, bytes beyond the
    ``expect_tx`` are an error at once, and the overwrite names the consumer not released.

    >>> w = Arrive("arrive", (0, 8), 1, 0, (0, 3))
    >>> explore_rings(RingSystem(1, 0, ((w,),), (), (((0, 8), 1),), False), max_states=10)
    Exploration(outcome='proved', error=None, blocked=(), states=2)
    """
    ncta: int
    ncons: int
    prog: tuple
    tmas: tuple
    preinit: tuple
    eager_landing: bool
    #: one CTA: per pipeline iteration, the consumers that read its stage and must release it
    #: before a TMA overwrites it (a ping-pong kernel: the one consumer owning the iteration's
    #: tile); empty (the default): every consumer reads every iteration
    readers: tuple = ()


def process_name(p: int, ncta: int, ncons: int) -> str:
    """Law: ``producer`` or ``consumer q`` of process ``p`` (CTA-major numbering), prefixed with
    ``CTA x`` when there are several CTAs.

    >>> process_name(0, 1, 2), process_name(4, 2, 2)
    ('producer', 'CTA 1 consumer 0')
    """
    x, q = divmod(p, ncons + 1)
    who = "producer" if q == 0 else f"consumer {q - 1}"
    return f"CTA {x} {who}" if ncta > 1 else who


class _Tables(NamedTuple):
    """What the exploration reads besides the state, derived once from a :class:`RingSystem`:
    the programs with reads resolved to ``(CTA, buffer or None, address)``, each mbarrier's index
    and init count, each stage buffer's index and slice count, the cluster arrivals before each
    pc, each process's step ends and whether consumers are interchangeable."""
    sys: RingSystem
    prog: tuple
    bars: dict
    counts: dict
    bufs: dict
    need: dict
    arrives: list
    ends: list
    symmetric: bool


def _buffer_tables(tmas: tuple) -> tuple[dict, dict, dict]:
    """Law: the stage buffers ``(CTA, base)`` (sorted) with their index, the number of distinct
    slices each receives, and each buffer base's end (past the furthest byte a TMA writes)."""
    slices: dict = {}
    end: dict = {}
    for t in tmas:
        end[t.buffer] = max(end.get(t.buffer, 0), t.dst + t.nbytes)
        for y in t.dests:
            slices.setdefault((y, t.buffer), set()).add(t.dst)
    bufs = sorted(slices)
    return {b: i for i, b in enumerate(bufs)}, {k: len(v) for k, v in slices.items()}, end


def _resolve_reads(prog: tuple, bufs: dict, end: dict) -> tuple:
    """Law: ``prog`` with each :class:`Read`'s ``(CTA, address)`` pairs replaced by ``(CTA, the
    first buffer of that CTA holding the address or None, address)``."""
    def buffer(y, addr):
        return next((b for (yy, b) in bufs if yy == y and b <= addr < end[b]), None)
    return tuple(tuple(a._replace(addrs=tuple((y, buffer(y, addr), addr) for y, addr in a.addrs))
                       if a.kind == "read" else a for a in acts) for acts in prog)


def _shape(acts) -> tuple:
    """A consumer's program without its marks and raw read addresses (the symmetry test)."""
    return tuple((a[0],) + tuple(tuple((y, b) for y, b, _ in a[1]) if a[0] == "read" else v
                                 for v in a[1:-1]) for a in acts)


def _tables(system: RingSystem) -> _Tables:
    """Law: the :class:`_Tables` of ``system`` (its docstring)."""
    bufs, need, end = _buffer_tables(system.tmas)
    prog = _resolve_reads(system.prog, bufs, end)
    counts = dict(system.preinit)
    for acts in prog:
        for a in acts:
            if a.kind == "init":
                counts.setdefault(a.bar, a.count)
    bars = sorted(set(counts) | {a.bar for acts in prog for a in acts if a.kind == "wait"} |
                  {(y, t.bar) for t in system.tmas for y in t.dests})
    arrives = [[sum(1 for a in acts[:k] if a.kind == "carrive") for k in range(len(acts) + 1)]
               for acts in prog]
    k = system.ncons + 1
    symmetric = system.ncta > 1 and all(_shape(prog[x * k + 1]) == _shape(prog[x * k + q])
                                        for x in range(system.ncta) for q in range(2, k))
    return _Tables(system, prog, {b: i for i, b in enumerate(bars)}, counts, bufs, need, arrives,
                   [step_ends(acts) for acts in prog], symmetric)


def _start(t: _Tables) -> tuple:
    """The start state ``(pcs, mbarriers (initialised, phase, pending, tx), TMA landings in
    flight (tma * ncta + CTA), buffers (iteration held, slices landed, releases), consumers
    (uncommitted reads, committed groups))``; releases are the set of consumers in one CTA, a
    count in a cluster."""
    s = t.sys
    pre = dict(s.preinit)
    rel = frozenset() if s.ncta == 1 else 0
    return (tuple(0 for _ in t.prog),
            tuple((True, 0, pre[b], 0) if b in pre else (False, 0, 0, 0) for b in t.bars),
            frozenset(), tuple((-1, 0, rel) for _ in t.bufs),
            tuple((frozenset(), ()) for _ in range(s.ncta * s.ncons)))


@functools.lru_cache(maxsize=32)
def explore_rings(system: RingSystem, *, max_states: int) -> Exploration:
    """Explore every interleaving of ``system``'s rings (:class:`RingSystem`), breadth first.

    Law: :func:`explore`'s answer over the atomic steps (:func:`step_ends`): ``counterexample``
    with ``(message, mark)`` of the first error (a wait on an uninitialised mbarrier, more
    arrivals than the init count, bytes beyond the expect_tx, a TMA overwriting a buffer a
    consumer may still read, a read of a buffer not holding its iteration's landed bytes, an
    arrival or landing in an exited CTA), ``deadlock`` with what each blocked process waits for,
    ``unknown`` beyond ``max_states`` states, else ``proved``. The answer depends on ``system``
    alone (cached: a kernel's whole-tile and ragged runs share one ring).

    >>> i = Issue("tma", 0, (1, 5))
    >>> tma = RingTma(0, 64, 128, 8, 0, (0,), 64, (2, 6))
    >>> explore_rings(RingSystem(1, 0, ((i,),), (tma,), (((0, 8), 1),), False), max_states=10)[:2]
    ('counterexample', ('the TMA of iteration 0 completes 128 bytes on mbarrier 0x8 beyond its expect_tx (missing or short arrive.expect_tx)', (2, 6)))
    """
    t = _tables(system)
    canon = (lambda st: _canonical(st, system.ncons, system.ncta)) if t.symmetric else None
    return explore(_start(t), lambda s: _step(s, t), t.prog, canon, max_states=max_states)


def _canonical(st, ncons: int, nx: int):
    """Law: the state with each CTA's consumer warpgroups sorted by (pc, state): consumers with
    the same program are interchangeable (buffers count releases, not names)."""
    pcs, bl, inf, bx, cst = st
    if ncons == 2:                      # the sort of two: swap where the second comes first
        for x in range(nx):
            lo, c = x * 3 + 1, x * 2
            if pcs[lo] > pcs[lo + 1] or (pcs[lo] == pcs[lo + 1] and cst[c] != cst[c + 1]
                                         and repr(cst[c]) > repr(cst[c + 1])):
                pcs = pcs[:lo] + (pcs[lo + 1], pcs[lo]) + pcs[lo + 2:]
                cst = cst[:c] + (cst[c + 1], cst[c]) + cst[c + 2:]
        return (pcs, bl, inf, bx, cst)
    pcs, cst = list(pcs), list(cst)
    for x in range(nx):
        lo = x * (ncons + 1) + 1
        pairs = list(zip(pcs[lo:lo + ncons], cst[x * ncons:(x + 1) * ncons]))
        if len({pr[0] for pr in pairs}) == ncons:       # distinct pcs decide the order alone
            pairs.sort(key=lambda pr: pr[0])
        else:
            pairs.sort(key=lambda pr: (pr[0], repr(pr[1])))
        pcs[lo:lo + ncons] = [pr[0] for pr in pairs]
        cst[x * ncons:(x + 1) * ncons] = [pr[1] for pr in pairs]
    return (tuple(pcs), bl, inf, bx, tuple(cst))


def _exited(pcs, prog, y: int, ncons: int) -> bool:
    """Whether every process of CTA ``y`` is at the end of its program."""
    lo = y * (ncons + 1)
    return all(pcs[p] == len(prog[p]) for p in range(lo, lo + ncons + 1))


def _bar_text(t: _Tables, bar: tuple) -> str:
    y, addr = bar
    return f"mbarrier {addr:#x}" if t.sys.ncta == 1 else f"CTA {y}'s mbarrier {addr:#x}"


def _tma_text(t: _Tables, tma: RingTma) -> str:
    return (f"the TMA of iteration {tma.it}" if t.sys.ncta == 1 else
            f"CTA {tma.sender}'s TMA of iteration {tma.it}")


def _step(s, t: _Tables):
    """Law: ``(successors, error, blocked)`` of state ``s``: each process's atomic step (a guard
    and the actions after it up to the next guard or through the next arrival), then the TMA
    landings in flight (only the first with ``eager_landing``, which also holds every process
    while one is in flight)."""
    prog, ends, ncta = t.prog, t.ends, t.sys.ncta
    pcs, bst, inflight, bx, cst = s
    eager = t.sys.eager_landing
    succ, blocked = [], []
    for p in (range(len(prog)) if not (eager and inflight) else ()):
        pc, acts = pcs[p], prog[p]
        if pc >= len(acts):
            continue
        a = acts[pc]
        if a[0] in GUARDS:                      # the guard, read before anything is copied
            r = _guard(p, a, bst, pcs, t)
            if r is None:
                blocked.append(_blocked_text(p, a, t))
                continue
            if r is not True:
                return [], r, []
            pc += 1
        st = [bst, bx, cst, set(inflight)]      # tuples copied on write (_apply)
        end = ends[p][pcs[p]]
        for j in range(pc, end):
            r = _apply(p, acts[j], st, pcs, t)
            if r is not True:
                return [], r, []                # no guard after the first in a step: an error
        npcs = list(pcs)
        npcs[p] = end
        succ.append((tuple(npcs), tuple(st[0]), frozenset(st[3]), tuple(st[1]), tuple(st[2])))
    for key in (sorted(inflight)[:1] if eager else inflight):
        bl, bxl = list(bst), list(bx)
        r = _land(key // ncta, key % ncta, bl, bxl, pcs, t)
        if r is not True:
            return [], r, []
        succ.append((pcs, tuple(bl), inflight - {key}, tuple(bxl), cst))
    return succ, None, blocked


def _blocked_text(p: int, a, t: _Tables) -> str:
    who = process_name(p, t.sys.ncta, t.sys.ncons)
    if a.kind == "wait" and t.sys.ncta == 1:
        return f"{who} waits on mbarrier {a.bar[1]:#x} parity {a.parity} (PTX line {a.mark[1]})"
    return f"{who} waits ({a.kind}, PTX line {a.mark[1]})"


def _uninitialised(p: int, a, t: _Tables) -> tuple:
    """The error of process ``p`` using an mbarrier no ``mbarrier.init`` initialised (yet)."""
    y, addr = a.bar
    if t.sys.ncta == 1:
        return (f"{a.kind} on {addr:#x}, which no mbarrier.init initialised", a.mark)
    return (f"{process_name(p, t.sys.ncta, t.sys.ncons)} uses CTA {y}'s mbarrier {addr:#x} before "
            f"CTA {y} initialised it (no cluster barrier after mbarrier.init?)", a.mark)


def _guard(p: int, a, bst, pcs, t: _Tables):
    """Law: True when guard ``a`` of process ``p`` passes, None when it blocks, else an error."""
    if a.kind == "cwait":
        arrives = t.arrives
        return True if all(arrives[q][pcs[q]] >= a.index + 1 for q in range(len(t.prog))) else None
    i = t.bars[a.bar]
    if not bst[i][0]:
        return _uninitialised(p, a, t)
    return None if bst[i][1] == a.parity else True      # parity's phase not yet completed


def _land(tid: int, y: int, bl: list, bxl: list, pcs, t: _Tables):
    """TMA ``tid``'s bytes land in CTA ``y``: complete_tx on y's mbarrier, one slice of its
    buffer landed. True, or an error."""
    tma = t.sys.tmas[tid]
    if t.sys.ncta > 1 and _exited(pcs, t.prog, y, t.sys.ncons):
        return (f"{_tma_text(t, tma)} lands in CTA {y} after CTA {y} has exited (no "
                "cluster barrier before exit?)", tma.mark)
    i = t.bars[(y, tma.bar)]
    ini, ph, pend, tx = bl[i]
    if not ini:
        if t.sys.ncta == 1:
            return (f"a TMA completes on {tma.bar:#x}, which no mbarrier.init initialised", tma.mark)
        return (f"{_tma_text(t, tma)} completes bytes on CTA {y}'s mbarrier {tma.bar:#x} before "
                f"CTA {y} initialised it (no cluster barrier after mbarrier.init?)", tma.mark)
    tx -= tma.nbytes
    if tx < 0 and (pend == 0 or t.sys.ncta == 1):
        return (f"{_tma_text(t, tma)} completes {tma.nbytes} bytes on {_bar_text(t, (y, tma.bar))}"
                " beyond its expect_tx (missing or short arrive.expect_tx)", tma.mark)
    bl[i] = (ini,) + complete_phase(ph, pend, tx, t.counts[(y, tma.bar)])
    k = t.bufs[(y, tma.buffer)]
    tag, nl, done = bxl[k]
    bxl[k] = (tag, nl + 1, done)
    return True


def _apply(p: int, a, st: list, pcs, t: _Tables):
    """Apply action ``a`` of process ``p`` to ``st`` = [mbarriers, buffers, consumers, landings
    in flight] in place: True or an error ``(message, mark)``. The first three may be the state's
    own tuples: one is copied to a list when the action writes it."""
    kind = a[0]
    if kind == "arrive":
        return _arrive(p, a, st, pcs, t)
    if kind == "init":
        if st[0].__class__ is tuple:
            st[0] = list(st[0])
        st[0][t.bars[a.bar]] = (True, 0, a.count, 0)
        return True
    if kind == "tma":
        return _issue(a, st, t)
    if kind == "carrive":
        return True
    c = (p // (t.sys.ncons + 1)) * t.sys.ncons + p % (t.sys.ncons + 1) - 1
    if st[2].__class__ is tuple:
        st[2] = list(st[2])
    unc, groups = st[2][c]
    if kind == "read":
        return _read(p, c, a, st, t)
    if kind == "commit":
        st[2][c] = (frozenset(), groups + (unc,))
    elif kind == "retire":
        _retire(p, c, a, st, t)
    return True


def _arrive(p: int, a: Arrive, st: list, pcs, t: _Tables):
    i = t.bars.get(a.bar)
    bl = st[0]
    if i is None or not bl[i][0]:
        return _uninitialised(p, a, t)
    y, addr = a.bar
    ncta, ncons = t.sys.ncta, t.sys.ncons
    if ncta > 1 and y != p // (ncons + 1) and _exited(pcs, t.prog, y, ncons):
        return (f"{process_name(p, ncta, ncons)} arrives on CTA {y}'s mbarrier {addr:#x} after "
                f"CTA {y} has exited (no cluster barrier before exit?)", a.mark)
    ini, ph, pend, tx = bl[i]
    pend -= a.count
    if pend < 0:
        if ncta == 1:
            return (f"mbarrier {addr:#x}: more arrivals than its init count {t.counts[a.bar]}", a.mark)
        return (f"CTA {y}'s mbarrier {addr:#x}: more arrivals than its init count "
                f"({process_name(p, ncta, ncons)} arrives)", a.mark)
    if bl.__class__ is tuple:
        bl = st[0] = list(bl)
    bl[i] = (ini,) + complete_phase(ph, pend, tx + a.tx, t.counts[a.bar])
    return True


def _released(done) -> int:
    return len(done) if done.__class__ is frozenset else done


def _issue(a: Issue, st: list, t: _Tables):
    """The producer issues TMA ``a.tma``: each destination buffer must be released by every
    consumer of the iteration it holds, or each of its :attr:`RingSystem.readers` (a cluster:
    unless it holds this iteration's slices)."""
    tma = t.sys.tmas[a.tma]
    ncta = t.sys.ncta
    for y in tma.dests:
        k = t.bufs[(y, tma.buffer)]
        tag, nl, done = st[1][k]
        if tag == tma.it and ncta > 1:
            st[3].add(a.tma * ncta + y)
            continue
        if tag >= 0 and not _all_released(t, tag, done):
            return (_overwrite_text(t, tma, y, tag, done), tma.mark)
        if st[1].__class__ is tuple:
            st[1] = list(st[1])
        st[1][k] = (tma.it, 0, frozenset() if ncta == 1 else 0)
        st[3].add(a.tma * ncta + y)
    return True


def _readers_of(t: _Tables, tag: int) -> frozenset:
    """Law: the consumers that read iteration ``tag`` (:attr:`RingSystem.readers`; every
    consumer where none are given or ``tag`` is past them)."""
    r = t.sys.readers
    return frozenset(r[tag]) if 0 <= tag < len(r) else frozenset(range(t.sys.ncons))


def _all_released(t: _Tables, tag: int, done) -> bool:
    """Law: the buffer holding iteration ``tag`` is released: by every consumer (a count in a
    cluster), or one CTA with :attr:`RingSystem.readers`, by each of that iteration's readers."""
    if t.sys.ncta > 1 or not t.sys.readers:
        return _released(done) >= t.sys.ncons
    return _readers_of(t, tag) <= done


def _overwrite_text(t: _Tables, tma: RingTma, y: int, tag: int, done) -> str:
    if t.sys.ncta == 1:
        miss = sorted((_readers_of(t, tag) if t.sys.readers else set(range(t.sys.ncons))) - done)
        return (f"the TMA of iteration {tma.it} overwrites stage buffer {tma.buffer:#x} while "
                f"consumer {miss[0]} may still read iteration {tag}'s data there (its wgmma group "
                "has not retired, or it has not read it yet)")
    return (f"CTA {tma.sender}'s TMA of iteration {tma.it} overwrites CTA {y}'s stage buffer "
            f"{tma.buffer:#x} while {t.sys.ncons - done} of CTA {y}'s consumers may still read "
            f"iteration {tag}'s data there (not released to CTA {tma.sender})")


def _read(p: int, c: int, a: Read, st: list, t: _Tables):
    """Consumer ``c`` (process ``p``) reads: each address in a buffer holding iteration
    ``a.it`` with every slice landed; the buffers join its uncommitted group."""
    unc, groups = st[2][c]
    for y, base, addr in a.addrs:
        box = st[1][t.bufs[(y, base)]] if base is not None else None
        if box is None or box[0] != a.it or box[1] < t.need[(y, base)]:
            return (_read_error(p, a.it, y, base, addr, box, t), a.mark)
    st[2][c] = (unc | {(base, a.it) for _y, base, _addr in a.addrs}, groups)
    return True


def _read_error(p: int, it: int, y: int, base, addr: int, box, t: _Tables) -> str:
    """Why process ``p``'s read of ``addr`` in iteration ``it`` is wrong (module docstring)."""
    ncta, ncons = t.sys.ncta, t.sys.ncons
    who = process_name(p, ncta, ncons)
    if base is None:
        where = "every TMA stage buffer" if ncta == 1 else "every stage buffer"
        return f"{who}: a wgmma reads {addr:#x}, outside {where}"
    tag, nl = box[0], box[1]
    if ncta > 1:
        return (f"{who}, iteration {it}: a wgmma reads stage buffer {base:#x} holding iteration "
                f"{tag}'s data with {nl} of {t.need[(y, base)]} slices landed (a peer's slice "
                "missing: its mask, or the full barrier completed early?)")
    if tag < it and any(m.it == it and m.buffer == base for m in t.sys.tmas):
        return (f"{who}, iteration {it}: a wgmma reads stage buffer {base:#x} before iteration "
                f"{it}'s TMA filled it (its bytes have not landed: the full barrier's phase "
                "completed early, expect_tx missing or short?)")
    if tag != it:
        return (f"{who}, iteration {it}: a wgmma reads stage buffer {base:#x}, which holds "
                f"iteration {tag}'s data")
    return (f"{who}, iteration {it}: a wgmma reads stage buffer {base:#x} before its TMA bytes "
            "landed (the full barrier's phase completed early: expect_tx missing or short?)")


def _retire(p: int, c: int, a: Retire, st: list, t: _Tables) -> None:
    """``wgmma.wait_group``: the retired groups release their buffers of the iteration each
    still holds (the consumer joins the set, or the count grows by one in a cluster)."""
    unc, groups = st[2][c]
    retired, keep = retire_groups(groups, a.keep)
    x = p // (t.sys.ncons + 1)
    q = c - x * t.sys.ncons
    for g in retired:
        for base, tag in g:
            k = t.bufs[(x, base)]
            t2, nl, done = st[1][k]
            if t2 == tag:
                if st[1].__class__ is tuple:
                    st[1] = list(st[1])
                st[1][k] = (t2, nl, done | {q} if done.__class__ is frozenset else done + 1)
    st[2][c] = (unc, tuple(keep))


# ----- the tcgen05 MMA rings of 1 or 2 CTAs: one transition system ---------------------------------
# One MMA thread issues every tcgen05.mma (with cta_group::2 it reads both CTAs' stages and writes
# both CTAs' TMEM); each CTA has a producer (its TMA loads) and epilogue warps (TMEM reads). The
# state is (pcs, mbarriers (phase, pending, tx), loads in flight {(process, pc)}, MMAs completed).
# Every action carries a ``mark`` last (the PTX line the caller reports); errors are
# :class:`MmaFinding` values that the caller words.

class Load(NamedTuple):
    """A TMA load (``cp.async.bulk.tensor``, global to shared) of CTA ``cta`` for K iteration
    ``it``: in flight from its issue until it lands, then ``nbytes`` complete on mbarrier ``bar``
    (PTX ISA 9.7.13.15: the tx-count may go below zero before the ``expect_tx``); it writes the
    shared byte ranges ``regions`` (``((lo, hi), ...)``)."""
    kind: str
    cta: int
    it: int
    bar: tuple
    nbytes: int
    regions: tuple
    mark: Any


class Mma(NamedTuple):
    """``tcgen05.mma`` of K iteration ``it`` (``-1``: no K ring explored) into accumulator tile
    ``tile`` (an index of :attr:`MmaRingSystem.tiles`): it reads iteration ``it``'s stage bytes in
    every CTA that loads and writes the tile's TMEM columns."""
    kind: str
    it: int
    tile: int
    mark: Any


class MmaCommit(NamedTuple):
    """``tcgen05.commit``: the MMAs issued before it complete (``done`` of them, counted as
    :attr:`TmemTile.last` counts), then it arrives once on each mbarrier of ``bars`` (with
    ``.multicast::cluster`` the barrier at one offset in every CTA of the mask; PTX ISA 9.7.16,
    ``tcgen05.commit``: the earliest the hardware arrives)."""
    kind: str
    bars: tuple
    done: int
    mark: Any


class TmemRead(NamedTuple):
    """``tcgen05.ld`` of an epilogue warp: TMEM columns ``lo .. hi - 1`` for accumulator tile
    ``tile`` (the warp's releases so far)."""
    kind: str
    tile: int
    lo: int
    hi: int
    mark: Any


class TmemTile(NamedTuple):
    """One accumulation: the TMEM columns ``lo .. hi - 1`` its MMAs write and ``last``, the count
    of MMAs (as :attr:`MmaCommit.done` counts them) before its last one."""
    lo: int
    hi: int
    last: int


class MmaFinding(NamedTuple):
    """An error of an MMA ring: ``what`` and the process ``p`` whose action errs, with ``values``:

    ``over-arrive`` (bar): an arrival beyond the count of one phase; ``over-commit`` (bar): a
    commit's arrival beyond the count, or on a barrier not initialised; ``load-over-read`` (CTA,
    it, the MMA's it): a load rewrites stage bytes an incomplete MMA reads; ``mma-early`` (it,
    CTA): an MMA before that CTA's bytes of its iteration landed; ``mma-reads-landing`` (it, CTA,
    the load's it): an MMA reads bytes a load in flight writes; ``mma-writes-read`` (tile, lo, hi,
    the reading process, its tile, lo, hi): an MMA writes columns an epilogue warp still has to
    read; ``read-unwritten`` (tile, lo, hi); ``read-outside`` (tile, lo, hi, the tile's lo, hi);
    ``read-early`` (tile, the tile's lo, hi): before its MMAs completed; ``read-while-written``
    (tile, the later tile, lo, hi)."""
    what: str
    p: int
    values: tuple


#: The kinds after which a process's atomic step ends in an MMA ring (others observe them).
MMA_OBSERVED = ("arrive", "load", "mma", "mma-commit")


@dataclass(frozen=True)
class MmaRingSystem:
    """The tcgen05 MMA ring of ``ncta`` CTAs (``cta_group::ncta``) as a transition system.

    ``prog``: each process's actions (:class:`Wait`, :class:`Arrive` (an ``expect_tx`` is an
    arrival of 1 with its bytes), :class:`Load`, :class:`Mma`, :class:`MmaCommit`,
    :class:`TmemRead`); ``roles``: each process's ``(CTA, role)``, role ``producer``, ``mma`` (one
    process) or ``epilogue``; ``tiles``: the accumulations (:class:`TmemTile`); ``init``: every
    mbarrier ``(CTA, offset)`` used, with its init count; ``observed``: the kinds that end an
    atomic step (:func:`step_ends`; every kind: each action is a step). Epilogue warps of one CTA
    with the same actions are interchangeable (explored once).

    >>> t = (Mma("mma", -1, 0, 3), MmaCommit("mma-commit", ((0, 8),), 1, 4))
    >>> e = (Wait("wait", (0, 8), 0, 5), TmemRead("tmem-read", 0, 0, 64, 6))
    >>> sys = MmaRingSystem(1, (t, e), ((0, "mma"), (0, "epilogue")), (TmemTile(0, 64, 0),), (((0, 8), 1),), MMA_OBSERVED)
    >>> explore_mma_rings(sys, max_states=100).outcome
    'proved'
    """
    ncta: int
    prog: tuple
    roles: tuple
    tiles: tuple
    init: tuple
    observed: tuple


class _MmaTables(NamedTuple):
    """What the exploration of an :class:`MmaRingSystem` reads besides the state, derived once:
    each mbarrier's index and count, each process's step ends, the MMA process, the MMAs issued
    before each of its pcs and the tiles begun, each (CTA, iteration)'s loads and their byte
    ranges, the CTAs that load, the epilogue processes, each process's last read of each tile,
    the classes of interchangeable processes and, per process and pc, the wait there as (its
    mbarrier's index, its parity) (None: no wait; index -1: a barrier without an init count)."""
    sys: MmaRingSystem
    bars: dict
    counts: dict
    ends: list
    mma: int
    issued: list
    begun: list
    loads: dict
    regions: dict
    ctas: tuple
    epilogues: tuple
    last_read: list
    classes: tuple
    waits: tuple


def _wait_table(prog: tuple, bars: dict) -> tuple:
    """Law: per process, per pc, ``(bars[a.bar] or -1, a.parity)`` where action ``a`` there is a
    :class:`Wait`, else None.

    >>> _wait_table(((Wait("wait", (0, 8), 1, 0), Arrive("arrive", (0, 8), 1, 0, 1)),), {(0, 8): 0})
    (((0, 1), None),)
    """
    return tuple(tuple((bars.get(a.bar, -1), a.parity) if a.kind == "wait" else None for a in acts) for acts in prog)


def _mma_tables(system: MmaRingSystem) -> _MmaTables:
    """Law: the :class:`_MmaTables` of ``system`` (its docstring); a system whose roles name a CTA
    outside ``0 .. ncta - 1``, or no MMA process, is a :class:`LayoutError`."""
    prog, roles = system.prog, system.roles
    if len(roles) != len(prog) or any(not 0 <= r[0] < system.ncta for r in roles) or \
            not any(r[1] == "mma" for r in roles):
        raise LayoutError(f"MmaRingSystem: roles {roles} are not one (CTA < {system.ncta}, role) per "
                          "process with one MMA process")
    mma = next(p for p, r in enumerate(roles) if r[1] == "mma")
    mmas = [a for a in prog[mma] if a.kind == "mma"]
    counted = [sum(1 for a in prog[mma][:pc] if a.kind == "mma") for pc in range(len(prog[mma]) + 1)]
    loads: dict = {}
    for p, acts in enumerate(prog):
        for i, a in enumerate(acts):
            if a.kind == "load":
                loads.setdefault((a.cta, a.it), []).append((p, i))
    regions = {k: [r for p, i in v for r in prog[p][i].regions] for k, v in loads.items()}
    epilogues = tuple(p for p, r in enumerate(roles) if r[1] == "epilogue")
    last_read = [{a.tile: i for i, a in enumerate(acts) if a.kind == "tmem-read"} for acts in prog]
    groups: dict = {}
    for p in epilogues:
        groups.setdefault((roles[p][0], tuple(a[:-1] for a in prog[p])), []).append(p)
    bars = {b: i for i, (b, _) in enumerate(system.init)}
    return _MmaTables(system, bars, dict(system.init),
                      [step_ends(acts, system.observed) for acts in prog], mma,
                      [tuple(mmas[:n]) for n in counted], [mmas[n - 1].tile + 1 if n else 0 for n in counted],
                      loads, regions, tuple(sorted({k[0] for k in loads})), epilogues, last_read,
                      tuple(tuple(g) for g in groups.values() if len(g) > 1), _wait_table(prog, bars))


def explore_mma_rings(system: MmaRingSystem, *, max_states: int, reduce: bool = True) -> Exploration:
    """Explore every interleaving of ``system``'s processes and every landing order of its loads
    (:class:`MmaRingSystem`), breadth first.

    Law: :func:`explore`'s answer over the atomic steps: ``counterexample`` with ``(MmaFinding,
    mark)`` of the first error, ``deadlock`` with ``(process, Wait)`` of each blocked process,
    ``unknown`` beyond ``max_states`` states, else ``proved``. ``reduce`` (the default) gives the
    same answer, state count included, with less work: of interchangeable processes at the same
    pc only the first takes its step (the others' steps lead to the same representative state,
    with the same error, if any, found first at the first), and a step keeps the state's
    representative without sorting every class again; ``reduce=False`` canonicalizes every
    successor (the plain search, kept as the reference).

    >>> e = (TmemRead("tmem-read", 0, 0, 64, 6),)
    >>> sys = MmaRingSystem(1, ((), e), ((0, "mma"), (0, "epilogue")), (), (), MMA_OBSERVED)
    >>> explore_mma_rings(sys, max_states=100).error
    (MmaFinding(what='read-unwritten', p=1, values=(0, 0, 64)), 6)
    """
    t = _mma_tables(system)
    start = (tuple(0 for _ in system.prog), tuple((0, c, 0) for _, c in system.init), frozenset(), 0)
    if t.classes and reduce:
        member = _class_members(t.classes, len(system.prog))
        return explore(start, lambda s: _mma_step(s, t, member), system.prog, max_states=max_states)
    canon = (lambda s: _mma_canonical(s, t.classes)) if t.classes else None
    return explore(start, lambda s: _mma_step(s, t), system.prog, canon, max_states=max_states)


def _class_members(classes: tuple, n: int) -> tuple:
    """Law: for each of ``n`` processes, None or ``(its class of interchangeable processes (process
    indices, ascending), the class's process before it or -1)``.

    >>> _class_members(((1, 3),), 4)
    (None, ((1, 3), -1), None, ((1, 3), 1))
    """
    out: list = [None] * n
    for g in classes:
        for i, p in enumerate(g):
            out[p] = (g, g[i - 1] if i else -1)
    return tuple(out)


def _class_moved(pcs: tuple, g: tuple, p: int, end: int) -> tuple:
    """Law: ``_mma_canonical`` of ``pcs`` with process ``p`` of class ``g`` moved to ``end``, for
    ``pcs`` already canonical (each class's pcs ascending in process order): the class's pcs with
    one ``pcs[p]`` replaced by ``end``, sorted back into its processes.

    >>> _class_moved((9, 0, 0, 2), (1, 2, 3), 1, 3)
    (9, 0, 2, 3)
    """
    vals = [pcs[q] for q in g]
    vals.remove(pcs[p])
    bisect.insort(vals, end)
    out = list(pcs)
    for q, v in zip(g, vals):
        out[q] = v
    return tuple(out)


def _mma_canonical(s, classes: tuple):
    """Law: the state with the pcs of each class of interchangeable processes sorted."""
    pcs = list(s[0])
    for g in classes:
        for p, v in zip(g, sorted(pcs[q] for q in g)):
            pcs[p] = v
    return (tuple(pcs),) + s[1:]


def _mma_step(s, t: _MmaTables, member: tuple | None = None):
    """Law: ``(successors, error, blocked)`` of state ``s``: each load in flight landing, then each
    process's atomic step (a wait that passes and the actions after it up to the next wait or
    through the next observed action). With ``member`` (:func:`_class_members`; ``s`` canonical)
    the successors are canonical, and a process whose class has an earlier process at its pc is
    left out (its successor is that process's; a blocked one is still listed)."""
    pcs, bs, flight, retired = s
    prog = t.sys.prog
    succ, blocked = [], []
    for p, i in flight:
        a = prog[p][i]
        k = t.bars[a.bar]
        phase, pending, tx = bs[k]
        nb = bs[:k] + (complete_phase(phase, pending, tx - a.nbytes, t.counts[a.bar]),) + bs[k + 1:]
        succ.append((pcs, nb, flight - {(p, i)}, retired))
    waits, ends = t.waits, t.ends
    for p, acts in enumerate(prog):
        pc = pcs[p]
        if pc >= len(acts):
            continue
        w = waits[p][pc]
        if w is not None:
            if bs[w[0] if w[0] >= 0 else t.bars[acts[pc].bar]][0] & 1 == w[1]:
                blocked.append((p, acts[pc]))
                continue
        g = member[p] if member else None
        if g is not None and g[1] >= 0 and pcs[g[1]] == pc:
            continue                            # an earlier interchangeable process took this step
        st = [bs, flight, retired]
        end = ends[p][pc]
        for j in range(pc + (w is not None), end):
            err = _mma_apply(p, j, acts[j], st, pcs, t)
            if err is not None:
                return [], (err, acts[j].mark), []
        npcs = _class_moved(pcs, g[0], p, end) if g is not None else pcs[:p] + (end,) + pcs[p + 1:]
        succ.append((npcs, st[0], st[1], st[2]))
    return succ, None, blocked


def _mma_arrive(bs: tuple, i: int, count: int, tx: int, init: int):
    """Law: the mbarriers with ``count`` arrivals and ``tx`` bytes on the ``i``-th, or None where
    the arrivals go beyond the phase's pending count."""
    phase, pending, t = bs[i]
    if pending - count < 0:
        return None
    return bs[:i] + (complete_phase(phase, pending - count, t + tx, init),) + bs[i + 1:]


def _mma_apply(p: int, j: int, a, st: list, pcs, t: _MmaTables):
    """Apply action ``a`` (at pc ``j``) of process ``p`` to ``st`` = [mbarriers, loads in flight,
    MMAs completed]: None, or the :class:`MmaFinding` of its error."""
    kind = a.kind
    if kind == "arrive":
        nb = _mma_arrive(st[0], t.bars[a.bar], a.count, a.tx, t.counts[a.bar])
        if nb is None:
            return MmaFinding("over-arrive", p, (a.bar,))
        st[0] = nb
    elif kind == "mma-commit":
        for bar in a.bars:
            nb = _mma_arrive(st[0], t.bars[bar], 1, 0, t.counts[bar]) if bar in t.bars else None
            if nb is None:
                return MmaFinding("over-commit", p, (bar,))
            st[0] = nb
        st[2] = max(st[2], a.done)
    elif kind == "load":
        for m in t.issued[pcs[t.mma]][st[2]:]:
            if m.it != a.it and _overlap(a.regions, t.regions.get((a.cta, m.it), ())):
                return MmaFinding("load-over-read", p, (a.cta, a.it, m.it))
        st[1] = st[1] | {(p, j)}
    elif kind == "mma":
        return _mma_issue(p, a, st, pcs, t)
    elif kind == "tmem-read":
        return _tmem_read(p, a, st[2], pcs, t)
    return None


def _overlap(xs, ys) -> bool:
    """Whether a byte range of ``xs`` meets one of ``ys`` (``(lo, hi)`` pairs)."""
    return any(lo < h and l2 < hi for lo, hi in xs for l2, h in ys)


def _landed(t: _MmaTables, pcs, flight, key) -> bool:
    """Every load of ``key`` = (CTA, iteration) issued (its producer past it) and none in flight."""
    return all(pcs[p] > i and (p, i) not in flight for p, i in t.loads.get(key, ()))


def _mma_issue(p: int, a: Mma, st: list, pcs, t: _MmaTables):
    """The MMA of ``a.it``: every loading CTA's bytes of that iteration landed and none being
    written by a load in flight; its tile's columns read by no epilogue warp still to read an
    earlier tile there."""
    for cta in t.ctas:
        if not _landed(t, pcs, st[1], (cta, a.it)):
            return MmaFinding("mma-early", p, (a.it, cta))
        for q, i in st[1]:
            b = t.sys.prog[q][i]
            if b.cta == cta and b.it != a.it and _overlap(b.regions, t.regions.get((cta, a.it), ())):
                return MmaFinding("mma-reads-landing", p, (a.it, cta, b.it))
    lo, hi, _ = t.sys.tiles[a.tile]
    for q in t.epilogues:
        for j in range(a.tile):
            lo_j, hi_j, _ = t.sys.tiles[j]
            if lo < hi_j and lo_j < hi and t.last_read[q].get(j, -1) >= pcs[q]:
                return MmaFinding("mma-writes-read", p, (a.tile, lo, hi, q, j, lo_j, hi_j))
    return None


def _tmem_read(p: int, a: TmemRead, retired: int, pcs, t: _MmaTables):
    """An epilogue warp's read of tile ``a.tile``: inside the columns its MMAs wrote, after they
    completed, and before an MMA of a later tile writes them."""
    tiles, j = t.sys.tiles, a.tile
    if j >= len(tiles):
        return MmaFinding("read-unwritten", p, (j, a.lo, a.hi))
    lo, hi, last = tiles[j]
    if a.lo < lo or a.hi > hi:
        return MmaFinding("read-outside", p, (j, a.lo, a.hi, lo, hi))
    if retired <= last:
        return MmaFinding("read-early", p, (j, lo, hi))
    for j2 in range(j + 1, t.begun[pcs[t.mma]]):
        if tiles[j2].lo < a.hi and a.lo < tiles[j2].hi:
            return MmaFinding("read-while-written", p, (j, j2, a.lo, a.hi))
    return None
