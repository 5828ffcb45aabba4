"""The mbarrier rings of every CTA of a cluster as one transition system (the ``protocol`` check of
:mod:`verilayout.simulate.cluster_check`), explored over every interleaving.

Processes: per CTA its TMA-issuing producer thread and one process per consumer warpgroup;
each TMA landing in each destination CTA is an action of its own. Each process's step is atomic
from a guard (an mbarrier wait or a ``barrier.cluster.wait``) up to the next guard or through
the next arrival (local, remote or cluster barrier: what other processes observe), as in
:class:`verilayout.simulate.gemm_check.GemmSim`. An mbarrier's phase completes when its pending
arrivals and its tx-count are both zero (PTX ISA, mbarrier); the tx-count may be negative while
an arrival is pending (a peer's bytes landing before this CTA's ``expect_tx``). The search, the
steps and the mbarrier and wgmma-group rules are one CTA's (:mod:`verilayout.simulate.ring`);
what is the cluster's own is the state (per CTA its mbarriers and stage buffers, slices counted
as they land), the remote arrivals, the cluster barriers and the consumers' symmetry.

>>> _exit_text(1)
'CTA 1 has exited'
"""
from __future__ import annotations

from typing import Any, NamedTuple

from verilayout.simulate.gemm_check import MAP_A_ADDR, MAX_STATES, swizzle_span
from verilayout.simulate.independent import KernelCheck
from verilayout.simulate.ring import complete_phase, explore, retire_groups, step_ends
from verilayout.simulate.ptx_run import CLUSTER_WINDOW, init_count, pending_groups, phase_parity, tx_count

__all__ = ["explore_cluster"]


class TmaRow(NamedTuple):
    """One TMA of the cluster: the CTA that issues it, its destination (low 18 bits), the bytes
    of one slice, its mbarrier, its iteration, the CTAs it lands in, its event, its tensor map
    and its row coordinate."""
    sender: int
    dst: int
    nbytes: int
    bar: int
    it: int
    dests: tuple
    ev: Any
    map: int
    c1: int


class ClusterSystem(NamedTuple):
    """What the exploration of the cluster's rings reads besides the state: the programs, the
    TMA table, the mbarrier and buffer indices, each TMA's stage buffer (``buffer_of``) and the
    slices each buffer needs, the cluster-barrier arrivals before each pc, the shape
    (``ncons`` consumers per CTA, ``nx`` CTAs), each CTA's stage regions, each mbarrier's init
    count and each process's step ends."""
    prog: list
    table: list
    bars: dict
    bufs: dict
    buffer_of: dict
    need: dict
    arrives: list
    ncons: int
    nx: int
    regions: dict
    inits: dict
    ends: list


def _exit_text(y: int) -> str:
    return f"CTA {y} has exited"


def _target(x: int, addr: int) -> tuple[int, int]:
    """(CTA, local address) of an mbarrier address used by CTA ``x`` (``mapa``'s window or own)."""
    return (addr // CLUSTER_WINDOW - 1, addr % CLUSTER_WINDOW) if addr >= CLUSTER_WINDOW else (x, addr)


def _compile(procs, issued, ncons):
    """Law: per process (CTA-major: producer, then consumers) its actions in program order, and
    the TMA table ``(sender, dst, bytes, mbarrier, iteration, destination CTAs, event)``."""
    prog, table = [], []
    for x, cta in enumerate(procs):
        it_tma = iter(issued[x])
        for p, tr in enumerate(cta):
            acts, it, waits = [], -1, 0
            for ev, v, n, t in tr:
                op = ev.op
                if op.startswith("mbarrier.init") and p == 0:
                    acts.append(("init", (x, int(v["addr"][0])), int(init_count(v)[0]), ev))
                elif op.startswith("mbarrier.try_wait"):
                    it += 1
                    acts.append(("wait", (x, int(v["addr"][0])), int(phase_parity(v)[0]) & 1, ev))
                elif op.startswith("mbarrier.arrive"):
                    tx = int(tx_count(v)[0]) if "expect_tx" in op else 0
                    acts.append(("arrive", _target(x, int(v["addr"][0])), n, tx, ev))
                elif op.startswith("cp.async.bulk.tensor") and p == 0:
                    t_ = next(it_tma)
                    dests = tuple(y for y in range(len(procs)) if t_["mask"] >> y & 1)
                    table.append(TmaRow(x, t_["dst"] & 0x3FFFF, 0, t_["bar"], t_["it"], dests, ev,
                                        t_["map"], t_["c1"]))
                    acts.append(("tma", len(table) - 1, ev))
                elif op.startswith("wgmma.mma_async") and p > 0:
                    reads = tuple((x, (int(v[k][0]) & 0x3FFF) << 4) for k in ("desc_a", "desc_b")
                                  if v.get(k) is not None)
                    acts.append(("read", reads, max(it, 0), ev))
                elif op.startswith("wgmma.commit_group") and p > 0:
                    acts.append(("commit", ev))
                elif op.startswith("wgmma.wait_group") and p > 0:
                    acts.append(("retire", int(pending_groups(v)[0]), ev))
                elif op.startswith("barrier.cluster.arrive"):
                    acts.append(("carrive", ev))
                elif op.startswith("barrier.cluster.wait"):
                    acts.append(("cwait", waits, ev))
                    waits += 1
            prog.append(acts)
    return prog, table


def _buffers(table, ctas) -> tuple[dict, dict]:
    """Law: the stage buffers (CTA, base) with the slices each needs, and a slice's buffer: a
    base is a destination whose rows start a tile block; a slice belongs to the highest base of
    its map at or below it, within one whole box."""
    g0 = ctas[0]
    rows = {MAP_A_ADDR: g0.bm}
    whole = {MAP_A_ADDR: g0.bm * swizzle_span(g0.la)}
    starts = {}
    for s, dst, nb, bar, it, dests, ev, mp, c1 in table:
        r = rows.get(mp, g0.bn)
        if c1 % r == 0:
            starts.setdefault(mp, set()).add(dst)
    of, need = {}, {}
    for i, (s, dst, nb, bar, it, dests, ev, mp, c1) in enumerate(table):
        size = whole.get(mp, g0.bn * swizzle_span(g0.lb))
        base = max((b for b in starts.get(mp, ()) if b <= dst < b + size), default=dst)
        of[i] = base
        for y in dests:
            need.setdefault((y, base), set()).add(dst)
    return of, {k: len(v) for k, v in need.items()}


def _system(procs, issued, ctas):
    """Law: the programs, the TMA table, the exploration context and whether each CTA's
    consumer programs are interchangeable (symmetry)."""
    ncons, nx = ctas[0].cons, len(procs)
    prog, table = _compile(procs, issued, ncons)
    g0 = ctas[0]
    for i, row in enumerate(table):                    # bytes of one slice: its recorded box
        part = (g0.bm // g0.cn) if row.map == MAP_A_ADDR else (g0.bn // g0.cm)
        table[i] = row._replace(nbytes=part * swizzle_span(g0.la if row.map == MAP_A_ADDR else g0.lb))
    of, need = _buffers(table, ctas)
    bars = sorted({a[1] for acts in prog for a in acts if a[0] in ("init", "wait")} |
                  {(y, row.bar) for row in table for y in row.dests})
    bidx = {b: i for i, b in enumerate(bars)}
    bufs = sorted(need)
    fidx = {b: i for i, b in enumerate(bufs)}
    arrives = [[sum(1 for a in acts[:k] if a[0] == "carrive") for k in range(len(acts) + 1)]
               for acts in prog]
    ends = {}
    for i, row in enumerate(table):
        ends[of[i]] = max(ends.get(of[i], 0), row.dst + row.nbytes)
    regions = {y: [(b, ends[b]) for (yy, b) in bufs if yy == y] for y in range(nx)}
    for acts in prog:                                  # a read names its stage buffer (or None)
        for k, a in enumerate(acts):
            if a[0] == "read":
                acts[k] = ("read", tuple((y, next((b for b, e in regions[y] if b <= addr < e), None),
                                          addr) for y, addr in a[1]), a[2], a[3])
    sym = all(_shape(prog[x * (ncons + 1) + 1]) == _shape(prog[x * (ncons + 1) + q])
              for x in range(nx) for q in range(2, ncons + 1))
    inits: dict = {}                                   # the count of each mbarrier's first init
    for acts in prog:
        for a in acts:
            if a[0] == "init":
                inits.setdefault(a[1], a[2])
    ends = [step_ends(acts) for acts in prog]
    ctx = ClusterSystem(prog, table, bidx, fidx, of, need, arrives, ncons, nx, regions, inits, ends)
    return prog, table, ctx, sym


def explore_cluster(procs, issued, ctas, label: str = "") -> KernelCheck:
    """Explore every interleaving of the cluster's rings (module docstring).

    Law: ``proved`` only when every reachable state is error-free and every maximal run ends
    with every process done and no TMA in flight; ``unknown`` beyond :data:`MAX_STATES` states.
    """
    ncons, nx = ctas[0].cons, len(procs)
    prog, table, ctx, sym = _system(procs, issued, ctas)
    bars, bufs = ctx.bars, ctx.bufs
    canon = (lambda st: _canonical(st, ncons, nx)) if sym else None
    start = (tuple(0 for _ in prog), tuple((False, 0, 0, 0) for _ in bars), frozenset(),
             tuple((-1, 0, 0) for _ in bufs),
             tuple((frozenset(), ()) for _ in range(nx * ncons)))
    r = explore(start, lambda s: _step(s, ctx), prog, canon, max_states=MAX_STATES)
    if r.outcome == "unknown":
        return KernelCheck("protocol", "unknown", f"more than {MAX_STATES} states; the cluster's "
                     f"rings were not explored completely{label}")
    if r.outcome == "counterexample":
        err = r.error
        ins = err[1].instr if err[1] is not None else None
        return KernelCheck("protocol", "counterexample", err[0] + label, ins.line if ins else None,
                     ins.loc if ins else None)
    if r.outcome == "deadlock":
        return KernelCheck("protocol", "counterexample", "deadlock: " + "; ".join(r.blocked) + label)
    return KernelCheck("protocol", "proved", f"the rings of {nx} CTAs explored over every interleaving "
                 f"({r.states} states: {nx} producers, {nx * ncons} consumer warpgroups, "
                 f"{sum(len(r.dests) for r in table)} TMA landings, remote arrivals, cluster "
                 "barriers): waits return after their phase, no overwrite before every reader "
                 "of the destination released, no read before landing, no use before init or "
                 f"after exit, no deadlock{label}")


def _shape(acts) -> tuple:
    """A consumer's program without its events and raw read addresses (for the symmetry test)."""
    return tuple((a[0],) + tuple(tuple((y, b) for y, b, _ in a[1]) if a[0] == "read" else x
                                 for x in a[1:-1]) for a in acts)


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


def _who(p: int, ncons: int) -> str:
    x, q = divmod(p, ncons + 1)
    return f"CTA {x} " + ("producer" if q == 0 else f"consumer {q - 1}")


def _exited(pcs, prog, y: int, ncons: int) -> bool:
    lo = y * (ncons + 1)
    for p in range(lo, lo + ncons + 1):
        if pcs[p] != len(prog[p]):
            return False
    return True


def _step(s, ctx: ClusterSystem):
    """Law: ``(successors, error, blocked)`` of state ``s``: each process's atomic step, then the
    first TMA landing in flight (landings are explored eagerly)."""
    prog, ncons, ends = ctx.prog, ctx.ncons, ctx.ends
    pcs, bst, inflight, bx, cst = s
    succ, blocked = [], []
    for p, acts in enumerate(prog if not inflight else ()):
        pc = pcs[p]
        if pc >= len(acts):
            continue
        st = [bst, bx, cst, set(inflight)]             # tuples copied on write (_apply)
        for pc in range(pc, ends[p][pc]):              # one atomic step (module docstring)
            a = acts[pc]
            r = _apply(p, a, st, pcs, ctx)
            if r is None:                              # a guard that blocks (only a first action)
                blocked.append(f"{_who(p, ncons)} waits ({a[0]}, PTX line {a[-1].instr.line})")
                break
            if r is not True:
                return [], r, []
        else:
            pc += 1
        if pc == pcs[p]:
            continue
        npcs = list(pcs)
        npcs[p] = pc
        succ.append((tuple(npcs), tuple(st[0]), frozenset(st[3]), tuple(st[1]), tuple(st[2])))
    for tid, y in sorted(inflight)[:1]:               # landings are explored eagerly (assumption)
        bl, bxl = list(bst), list(bx)
        r = _land(tid, y, bl, bxl, pcs, ctx)
        if isinstance(r, tuple):
            return [], r, []
        succ.append((pcs, tuple(bl), inflight - {(tid, y)}, tuple(bxl), cst))
    return succ, None, blocked


def _land(tid, y, bl, bxl, pcs, ctx: ClusterSystem):
    """One slice of TMA ``tid`` lands in CTA ``y``: complete_tx on y's mbarrier, the slice marked."""
    s, _dst, nbytes, bar, it, _dests, ev = ctx.table[tid][:7]
    if _exited(pcs, ctx.prog, y, ctx.ncons):
        return (f"CTA {s}'s TMA of iteration {it} lands in CTA {y} after {_exit_text(y)} (no "
                "cluster barrier before exit?)", ev)
    i = ctx.bars[(y, bar)]
    ini, ph, pend, tx = bl[i]
    if not ini:
        return (f"CTA {s}'s TMA of iteration {it} completes bytes on CTA {y}'s mbarrier {bar:#x} "
                f"before CTA {y} initialised it (no cluster barrier after mbarrier.init?)", ev)
    tx -= nbytes
    if tx < 0 and pend == 0:
        return (f"CTA {s}'s TMA of iteration {it} completes {nbytes} bytes on CTA {y}'s mbarrier "
                f"{bar:#x} beyond its expect_tx (missing or short arrive.expect_tx)", ev)
    bl[i] = (ini,) + complete_phase(ph, pend, tx, _init_count(ctx, (y, bar)))
    k = ctx.bufs[(y, ctx.buffer_of[tid])]
    tag, nl, done = bxl[k]
    bxl[k] = (tag, nl + 1, done)   # done: how many consumers of the CTA released it
    return True


def _init_count(ctx: ClusterSystem, key) -> int:
    """The count of the first ``mbarrier.init`` of ``key`` (CTA, address) in the programs."""
    return ctx.inits[key]


def _apply(p, a, st, pcs, ctx: ClusterSystem):
    """Apply action ``a`` of process ``p``: True, None (a guard that blocks) or (message, event).
    The state's barriers, buffers and consumers in ``st`` may be tuples: copied when written."""
    # long: one branch per action kind of the cluster's transition system
    prog, table, bidx, fidx, of, need = ctx.prog, ctx.table, ctx.bars, ctx.bufs, ctx.buffer_of, ctx.need
    arrives, ncons = ctx.arrives, ctx.ncons
    bl, bxl, cl, inf = st
    kind = a[0]
    x = p // (ncons + 1)
    if kind == "init":
        if bl.__class__ is tuple:
            bl = st[0] = list(bl)
        bl[bidx[a[1]]] = (True, 0, a[2], 0)
        return True
    if kind == "cwait":
        return True if all(arrives[q][pcs[q]] >= a[1] + 1 for q in range(len(prog))) else None
    if kind == "carrive":
        return True
    if kind in ("wait", "arrive"):
        i = bidx.get(a[1])
        y, addr = a[1]
        if i is None or not bl[i][0]:
            return (f"{_who(p, ncons)} uses CTA {y}'s mbarrier {addr:#x} before CTA {y} "
                    "initialised it (no cluster barrier after mbarrier.init?)", a[-1])
        ini, ph, pend, tx = bl[i]
        if kind == "wait":
            return None if ph == a[2] else True
        if y != x and _exited(pcs, prog, y, ncons):
            return (f"{_who(p, ncons)} arrives on CTA {y}'s mbarrier {addr:#x} after "
                    f"{_exit_text(y)} (no cluster barrier before exit?)", a[-1])
        pend -= a[2]
        tx += a[3]
        if pend < 0:
            return (f"CTA {y}'s mbarrier {addr:#x}: more arrivals than its init count "
                    f"({_who(p, ncons)} arrives)", a[-1])
        if bl.__class__ is tuple:
            bl = st[0] = list(bl)
        bl[i] = (ini,) + complete_phase(ph, pend, tx, _init_count(ctx, a[1]))
        return True
    if kind == "tma":
        s, dst, nbytes, bar, it, dests, ev = table[a[1]][:7]
        for y in dests:
            k = fidx[(y, of[a[1]])]
            tag, nl, done = bxl[k]
            if tag != it:
                if tag >= 0 and done < ncons:
                    return (f"CTA {s}'s TMA of iteration {it} overwrites CTA {y}'s stage buffer "
                            f"{of[a[1]]:#x} while {ncons - done} of CTA {y}'s consumers may still "
                            f"read iteration {tag}'s data there (not released to CTA {s})", ev)
                if bxl.__class__ is tuple:
                    bxl = st[1] = list(bxl)
                bxl[k] = (it, 0, 0)
            inf.add((a[1], y))
        return True
    c = x * ncons + (p % (ncons + 1)) - 1
    if cl.__class__ is tuple:
        cl = st[2] = list(cl)
    unc, groups = cl[c]
    if kind == "read":
        for y, base, addr in a[1]:
            if base is None:
                return (f"{_who(p, ncons)}: a wgmma reads {addr:#x}, outside every stage buffer", a[-1])
            tag, nl, done = bxl[fidx[(y, base)]]
            if tag != a[2] or nl < need[(y, base)]:
                return (f"{_who(p, ncons)}, iteration {a[2]}: a wgmma reads stage buffer "
                        f"{base:#x} holding iteration {tag}'s data with {nl} of "
                        f"{need[(y, base)]} slices landed (a peer's slice missing: its mask, "
                        "or the full barrier completed early?)", a[-1])
            unc = unc | {(base, a[2])}
        cl[c] = (unc, groups)
    elif kind == "commit":
        cl[c] = (frozenset(), groups + (unc,))
    elif kind == "retire":
        retired, keep = retire_groups(groups, a[1])
        for g in retired:
            for base, tag in g:
                k = fidx[(x, base)]
                t2, nl, done = bxl[k]
                if t2 == tag:
                    if bxl.__class__ is tuple:
                        bxl = st[1] = list(bxl)
                    bxl[k] = (t2, nl, done + 1)
        cl[c] = (unc, tuple(keep))
    return True

