"""The mbarrier rings of every CTA of a cluster (the ``protocol`` check of
:mod:`verilayout.simulate.cluster_check`): the CTAs' PTX runs compiled to one
:class:`verilayout.simulate.ring.RingSystem` of ``nx`` CTAs and explored over every interleaving
by :func:`verilayout.simulate.ring.explore_rings`, the explorer of one CTA's ring too.

Processes: per CTA its TMA-issuing producer thread and one process per consumer warpgroup;
each TMA landing in each destination CTA is an action of its own (landings eager:
:data:`verilayout.simulate.gemm_check.LANDING_ASSUMPTION`). What is the cluster's own here is
the compilation: remote arrivals (``mapa``'s window names the CTA), multicast TMAs (the CTA mask
names the destinations), a TMA's slice of its stage buffer and the cluster barriers.

>>> barrier_key(3 * CLUSTER_WINDOW + 0x40, 0)
(2, 64)
"""
from __future__ import annotations

from verilayout.simulate.gemm_check import MAP_A_ADDR, MAX_STATES, swizzle_span
from verilayout.simulate.independent import KernelCheck
from verilayout.simulate.ring import (Arrive, ClusterArrive, ClusterWait, Commit, Init, Issue, Read,
                                      Retire, RingSystem, RingTma, Wait, explore_rings)
from verilayout.simulate.ptx_run import (CLUSTER_WINDOW, barrier_key, init_count, pending_groups, phase_parity,
                                         tx_count)

__all__ = ["explore_cluster"]


def _action(x: int, p: int, ev, v, n: int, it: int, mark):
    """Law: the ring action of event ``ev`` (values ``v``, ``n`` threads) of process ``p`` of CTA
    ``x`` in iteration ``it``, or None where it is none (a TMA: :func:`_compile` makes it)."""
    op = ev.op
    if op.startswith("mbarrier.init") and p == 0:
        return Init("init", (x, int(v["addr"][0])), int(init_count(v)[0]), mark(ev))
    if op.startswith("mbarrier.try_wait"):
        return Wait("wait", (x, int(v["addr"][0])), int(phase_parity(v)[0]) & 1, mark(ev))
    if op.startswith("mbarrier.arrive"):
        tx = int(tx_count(v)[0]) if "expect_tx" in op else 0
        return Arrive("arrive", barrier_key(int(v["addr"][0]), x), n, tx, mark(ev))
    if op.startswith("wgmma.mma_async") and p > 0:
        reads = tuple((x, (int(v[k][0]) & 0x3FFF) << 4) for k in ("desc_a", "desc_b")
                      if v.get(k) is not None)
        return Read("read", reads, max(it, 0), mark(ev))
    if op.startswith("wgmma.commit_group") and p > 0:
        return Commit("commit", mark(ev))
    if op.startswith("wgmma.wait_group") and p > 0:
        return Retire("retire", int(pending_groups(v)[0]), mark(ev))
    if op.startswith("barrier.cluster.arrive"):
        return ClusterArrive("carrive", mark(ev))
    return None


def _compile(procs, issued, mark):
    """Law: per process (CTA-major: producer, then consumers) its actions in program order, and
    the TMA loads in issue order, each its :class:`verilayout.simulate.gemm_check.TmaLoad` and
    mark."""
    prog, loads = [], []
    for x, cta in enumerate(procs):
        it_tma = iter(issued[x])
        for p, tr in enumerate(cta):
            acts, it, waits = [], -1, 0
            for ev, v, n, t in tr:
                op = ev.op
                if op.startswith("mbarrier.try_wait"):
                    it += 1
                if op.startswith("cp.async.bulk.tensor") and p == 0:
                    loads.append((next(it_tma), mark(ev)))
                    acts.append(Issue("tma", len(loads) - 1, mark(ev)))
                elif op.startswith("barrier.cluster.wait"):
                    acts.append(ClusterWait("cwait", waits, mark(ev)))
                    waits += 1
                else:
                    a = _action(x, p, ev, v, n, it, mark)
                    if a is not None:
                        acts.append(a)
            prog.append(tuple(acts))
    return tuple(prog), loads


def _tmas(loads: list, ctas) -> tuple:
    """Law: the :class:`verilayout.simulate.ring.RingTma` of each load: its bytes one slice of
    its recorded box (rows / the CTAs sharing it), its stage buffer the highest base of its map at
    or below it within one whole box (a base: a destination whose rows start a tile block)."""
    g0 = ctas[0]
    rows = {MAP_A_ADDR: g0.bm}
    whole = {MAP_A_ADDR: g0.bm * swizzle_span(g0.la)}
    starts: dict = {}
    for t, _mark in loads:
        if t.c1 % rows.get(t.map, g0.bn) == 0:
            starts.setdefault(t.map, set()).add(t.dst & 0x3FFFF)
    out = []
    for t, mark in loads:
        a = t.map == MAP_A_ADDR
        nbytes = (g0.bm // g0.cn if a else g0.bn // g0.cm) * swizzle_span(g0.la if a else g0.lb)
        size = whole.get(t.map, g0.bn * swizzle_span(g0.lb))
        dst = t.dst & 0x3FFFF
        base = max((b for b in starts.get(t.map, ()) if b <= dst < b + size), default=dst)
        dests = tuple(y for y in range(len(ctas)) if t.mask >> y & 1)
        out.append(RingTma(t.sender, dst, nbytes, t.bar, t.it, dests, base, mark))
    return tuple(out)


def explore_cluster(procs, issued, ctas, label: str = "") -> KernelCheck:
    """Explore every interleaving of the cluster's rings (module docstring).

    Law: ``proved`` only when every reachable state is error-free and every maximal run ends
    with every process done and no TMA in flight; ``unknown`` beyond :data:`MAX_STATES` states.
    """
    ncons, nx = ctas[0].cons, len(procs)
    evs: list = []                  # each action's event becomes (its index here, its PTX line)

    def mark(ev):
        evs.append(ev)
        return len(evs) - 1, ev.instr.line if ev.instr is not None else None
    prog, loads = _compile(procs, issued, mark)
    tmas = _tmas(loads, ctas)
    r = explore_rings(RingSystem(nx, ncons, prog, tmas, (), True), max_states=MAX_STATES)
    if r.outcome == "unknown":
        return KernelCheck("protocol", "unknown", f"more than {MAX_STATES} states; the cluster's "
                     f"rings were not explored completely{label}")
    if r.outcome == "counterexample":
        ins = evs[r.error[1][0]].instr
        return KernelCheck("protocol", "counterexample", r.error[0] + label, ins.line if ins else None,
                     ins.loc if ins else None)
    if r.outcome == "deadlock":
        return KernelCheck("protocol", "counterexample", "deadlock: " + "; ".join(r.blocked) + label)
    return KernelCheck("protocol", "proved", f"the rings of {nx} CTAs explored over every interleaving "
                 f"({r.states} states: {nx} producers, {nx * ncons} consumer warpgroups, "
                 f"{sum(len(t.dests) for t in tmas)} TMA landings, remote arrivals, cluster "
                 "barriers): waits return after their phase, no overwrite before every reader "
                 "of the destination released, no read before landing, no use before init or "
                 f"after exit, no deadlock{label}")
