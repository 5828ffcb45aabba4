"""Independent checks of an emitted Hopper GEMM that runs as thread-block clusters (``emit gemm
--cluster 2x1|1x2``): every CTA of one cluster is run on the PTX nvcc wrote, the multicast masks
are read from the PTX, and the mbarrier rings of all CTAs are explored together.

Nothing here reads the renderer: from the manifest only the specification is taken (as
:mod:`verilayout.simulate.gemm_check`, plus the cluster shape ``CM x CN``). The rule checked is
the cluster's contract: rank ``r`` computes tile ``(ctm CM + r % CM, ctn CN + r // CM)`` of each
cluster tile ``(ctm, ctn)`` (tiles past M or N included: their loads are zero-filled, their
stores predicated off). The kernel is run for each rank (``%cluster_ctarank``; ``mapa`` yields the
interpreter's window of the named CTA, :data:`verilayout.simulate.ptx_run.CLUSTER_WINDOW`) on a
problem of two cluster tiles, whole and ragged (a padded tile wholly past M or N). The checks:

* ``multicast``: for every TMA load of every CTA, the CTA mask (the last operand of
  ``cp.async.bulk.tensor ... .multicast::cluster``; a plain load writes its own CTA) names exactly
  the CTAs whose tile in that iteration has the same M block (A) or N block (B) as the loader's,
  read off each CTA's own loads; a CTA the mask misses is named. Each CTA's stage then receives
  every row of its tile's blocks once, each slice at the stage byte of its first row and on a
  swizzle repeat;
* ``expect-tx``: the bytes landing in each CTA in each iteration (its slices and its peers') equal
  the count its producer's ``arrive.expect_tx`` announced;
* ``tma``, ``instruction``, ``descriptor``, ``d-store`` per CTA, as for one CTA
  (:class:`verilayout.simulate.gemm_check.GemmSim`), on the slices merged into whole boxes;
* ``protocol``: the rings of all CTAs as one transition system, explored over every interleaving:
  each CTA's producer and consumer warpgroups, each TMA landing in each destination CTA as its own
  action (``complete_tx`` on the destination's mbarrier at the same offset; its tx-count may go
  below zero while an arrival is pending, PTX ISA mbarrier), remote arrivals on a peer's
  mbarrier, and ``barrier.cluster`` arrive/wait. Errors: a wait returning before its phase, a
  TMA overwriting a stage any consumer of the destination may still read, a wgmma reading a
  stage not fully landed, an mbarrier used (locally or by a peer) before its CTA initialised it,
  a peer arriving or multicasting into a CTA that has exited, more arrivals than the init count,
  deadlock;
* ``spills``: ``ptxas -arch=sm_90a -v`` spills 0 bytes; with the host build, ``tensor-map`` (a
  box of one slice) and ``index-functions``.

>>> CLUSTER_ASSUMPTIONS[0][:33]
'the CTAs of one cluster (grid = c'
"""
from __future__ import annotations

from collections import deque
from dataclasses import replace

from verilayout.emit.gemm_plan import GemmManifest
from verilayout.frontends.ptx import parse_ptx
from verilayout.simulate.gemm_check import (GEMM_ASSUMPTIONS, LANDING_ASSUMPTION, MAP_A_ADDR,
                                            MAP_B_ADDR, PARAMS,
                                            SMEM_BASE, GemmSim, SimInputs, TmaLoad, check_gemm_source,
                                            cluster_shape, epilogue_spec, gemm_spec,
                                            swizzle_span, host_maps, tma_load)
from verilayout.simulate.cluster_protocol import explore_cluster
from verilayout.simulate.independent import KernelCheck, IndependentReport, compiled_checks
from verilayout.simulate.ptx_run import CLUSTER_WINDOW, cta_mask, run_threads, tma_mbarrier, tx_count
from verilayout.simulate.tma_store import is_tma_store

__all__ = ["check_gemm", "check_cluster_source", "CLUSTER_ASSUMPTIONS", "ClusterCta"]

CLUSTER_ASSUMPTIONS = (
    "the CTAs of one cluster (grid = cluster size), each of 128 * (consumers + 1) threads, on two "
    "cluster tiles along the shared dimension (whole, then ragged with a tile wholly past M or N)",
    "producer-warpgroup threads other than the TMA issuer do nothing but the cluster barriers "
    "(they are not processes of the exploration)", LANDING_ASSUMPTION) + GEMM_ASSUMPTIONS[1:]
_BYTES = {"f16": 2, "bf16": 2, "e4m3": 1, "tf32": 4}


class ClusterCta(GemmSim):
    """One CTA (rank ``rank``) of a ``cm x cn`` cluster: it loads its rank's tile of every
    cluster tile."""

    rank, cm, cn = 0, 1, 1

    def expected_tiles(self) -> set:
        """Law: ``{(ctm cm + rank % cm, ctn cn + rank // cm)}`` over the cluster tiles covering
        the ``ceil(M / BM) x ceil(N / BN)`` tile grid."""
        ctm_n = -(-(-(-self.M // self.bm)) // self.cm)
        ctn_n = -(-(-(-self.N // self.bn)) // self.cn)
        return {(a * self.cm + self.rank % self.cm, b * self.cn + self.rank // self.cm)
                for a in range(ctm_n) for b in range(ctn_n)}


def check_gemm(man: GemmManifest, source: str, *, host: bool = True, ragged: bool = True) -> IndependentReport:
    """The independent checks of an emitted sm_90a GEMM: :func:`check_cluster_source` for a
    cluster, :func:`verilayout.simulate.gemm_check.check_gemm_source` for one CTA.

    >>> from dataclasses import replace
    >>> from verilayout.emit.gemm_plan import ClusterShape, build_gemm_manifest
    >>> man = GemmManifest.from_dict(build_gemm_manifest("f16", tile=(64, 64, 64), stages=2))
    >>> check_gemm(replace(man, cluster=ClusterShape(3, 1)), "")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: manifest: cluster 3x1 is not 1x1, 2x1 or 1x2
    """
    if cluster_shape(man) != (1, 1):
        return check_cluster_source(man, source, host=host, ragged=ragged)
    return check_gemm_source(man, source, host=host, ragged=ragged)


def _problems(bm, bn, bk, cm, cn, k_tiles, eb):
    """Two cluster tiles along the shared dimension: whole, then ragged (a tile past M or N)."""
    if cm == 2:
        return ((4 * bm, bn, k_tiles * bk, ""), (3 * bm - 40, bn - 5, k_tiles * bk - 16 // eb, "r"))
    return ((bm, 4 * bn, k_tiles * bk, ""), (bm - 40 if bm > 64 else bm - 24, 3 * bn - 5,
                                              k_tiles * bk - 16 // eb, "r"))


def check_cluster_source(man: GemmManifest, source: str, *, host: bool = True,
                         ragged: bool = True) -> IndependentReport:
    """Compile an emitted cluster GEMM ``kernel.cu`` and run the checks of the module docstring.

    Law: ``proved`` only where the check held for every CTA, thread, coordinate and interleaving
    it covers; otherwise a ``counterexample`` naming what (and which CTA) is wrong, or ``unknown``.
    ``ragged=False``: only the whole-tile problem.

    >>> from dataclasses import replace
    >>> from verilayout.emit.gemm_plan import ClusterShape, build_gemm_manifest
    >>> man = GemmManifest.from_dict(build_gemm_manifest("f16", tile=(64, 64, 64), stages=2))
    >>> check_cluster_source(replace(man, cluster=ClusterShape(1, 3)), "")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: manifest: cluster 1x3 is not 1x1, 2x1 or 1x2
    """
    dt, bm, bn, bk, stages, cons, la, lb = gemm_spec(man)
    cm, cn = cluster_shape(man)
    checks, ptx = compiled_checks(source)
    if ptx is None:
        return IndependentReport(tuple(checks), CLUSTER_ASSUMPTIONS)
    maps, c = host_maps(source, man, ptx, host)
    checks += c
    mod = parse_ptx(ptx)
    entry = next((f for f in mod.functions if "vl_gemm_kernel" in f), None)
    if entry is None:
        return IndependentReport(tuple(checks + [KernelCheck("run", "counterexample", "no vl_gemm_kernel "
                                                       "entry in the PTX")]), CLUSTER_ASSUMPTIONS)
    eb = _BYTES[dt]
    splits = man.splits
    k_tiles = max(-(-(stages + 2) // 2), splits + 1 if splits > 1 else 1)
    size = cm * cn
    for M, N, K, label in _problems(bm, bn, bk, cm, cn, k_tiles, eb)[:2 if ragged else 1]:
        ctas = []
        for r in range(size):
            run = run_threads(mod, entry, range(128 * (cons + 1)), ctaid=r, nctaid=size,
                              param_values=PARAMS(M, N, K), shared_base=SMEM_BASE,
                              cluster_rank=r, cluster_size=size)
            if not run.complete:
                checks.append(KernelCheck("run", "unknown", f"CTA {r} could not be run on the PTX "
                                    f"(M={M}, N={N}, K={K}): {run.reason}"))
                break
            g = ClusterCta(SimInputs(man=man, run=run, dt=dt, eb=eb, bm=bm, bn=bn, bk=bk, stages=stages,
                                     cons=cons, la=la, lb=lb, M=M, N=N, K=K, k_tiles=k_tiles, maps=maps))
            g.rank, g.cm, g.cn, g.splits = r, cm, cn, splits
            g.label = f" [CTA {r}" + (f", M={M}, N={N}, K={K}]" if label else "]")
            ctas.append(g)
        else:
            checks += ClusterRun(ctas, (cm, cn), man, epilogue_spec(man),
                                 f" [M={M}, N={N}, K={K}]" if label else "").all(protocol=not label)
    return IndependentReport(tuple(checks), CLUSTER_ASSUMPTIONS)


class ClusterRun:
    """The runs of all CTAs of one cluster and the checks read from them together."""

    def __init__(self, ctas: list, shape: tuple, man: GemmManifest, epi: tuple, label: str = ""):
        self.ctas, (self.cm, self.cn), self.man = ctas, shape, man
        self.size = len(ctas)
        self.epi = epi if epi != ("f32", False, "none") and ctas[0].splits == 1 else None
        self.checks: list[KernelCheck] = []
        self.label = label   # the problem of a ragged run, " [M=.., N=.., K=..]"; "" for the whole tiles

    def add(self, check, status, msg, ev=None):
        ins = ev.instr if ev is not None else None
        if self.label and not msg.endswith("]"):
            msg += self.label
        self.checks.append(KernelCheck(check, status, msg, ins.line if ins else None,
                                 ins.loc if ins else None))

    def all(self, protocol: bool = True) -> list[KernelCheck]:
        """Law: the multicast, expect-tx and per-CTA checks, then (``protocol``) the exploration."""
        procs = [g.traces() for g in self.ctas]
        if any(p is None for p in procs):
            self.add("tma", "counterexample", "a CTA's PTX issues no cp.async.bulk.tensor")
            return self.checks
        issued = [self._issued(x, procs[x][0]) for x in range(self.size)]
        if self._multicast(issued):
            landing = self._landing(issued)
            if landing is not None:
                self._expect_tx(issued, landing, procs)
                for x, g in enumerate(self.ctas):
                    g.epi = self.epi
                    g.instruction_checks(procs[x])
                    tiles = g.tma_checks(landing[x])
                    g.descriptor_checks(procs[x], landing[x])
                    g.d_store_checks(procs[x], tiles, landing[x])
                    g.tma_store_checks(procs[x])
                    self.checks += g.checks
        if protocol:
            self._protocol(procs, issued)
        return self.checks

    @staticmethod
    def _issued(x: int, prod: list) -> list[TmaLoad]:
        """Law: CTA ``x``'s TMA loads in program order: iteration (its producer's waits so far),
        destination, map, coordinates, mbarrier, and the CTA mask (``1 << x`` without multicast)."""
        out, it = [], -1
        for ev, v, n, t in prod:
            if ev.op.startswith("mbarrier.try_wait"):
                it += 1
            if not ev.op.startswith("cp.async.bulk.tensor") or is_tma_store(ev.op):
                continue
            mc = "multicast" in ev.op
            mask = cta_mask(v) if mc else None
            out.append(replace(tma_load(ev, it), bar=int(tma_mbarrier(v)[0]), sender=x,
                               mask=(int(mask[0]) & 0xFFFF) if mask is not None else 1 << x))
        return out

    def _blocks(self, issued) -> dict:
        """(CTA, iteration, map) -> the tile block its own loads name (c1 // rows)."""
        rows = {MAP_A_ADDR: self.ctas[0].bm, MAP_B_ADDR: self.ctas[0].bn}
        return {(t.sender, t.it, t.map): t.c1 // rows.get(t.map, 1)
                for ts in issued for t in ts}

    def _multicast(self, issued) -> bool:
        blk = self._blocks(issued)
        n = 0
        for ts in issued:
            for t in ts:
                name, what = ("A", "M") if t.map == MAP_A_ADDR else ("B", "N")
                s, it = t.sender, t.it
                want = sum(1 << x for x in range(self.size)
                           if blk.get((x, it, t.map)) == blk[(s, it, t.map)])
                if t.mask != want:
                    miss = [x for x in range(self.size) if want >> x & 1 and not t.mask >> x & 1]
                    extra = [x for x in range(self.size) if t.mask >> x & 1 and not want >> x & 1]
                    why = (f"misses CTA {miss[0]}, which computes a tile of the same {what} block "
                           f"({blk[(s, it, t.map)]}): CTA {miss[0]}'s stage never receives these "
                           "rows" if miss else f"also writes CTA {extra[0]}, whose tile has another "
                           f"{what} block")
                    self.add("multicast", "counterexample", f"CTA {s}, iteration {it}: the "
                             f"multicast mask {t.mask:#06b} of its {name} slice (rows from "
                             f"{t.c1}) {why}", t.ev)
                    return False
                n += 1
        self.add("multicast", "proved", f"all {n} TMA loads of the {self.size} CTAs: each CTA "
                 "mask (read from the PTX) names exactly the CTAs whose tile shares the loaded "
                 "block")
        return True

    def _landing(self, issued) -> list[list[TmaLoad]] | None:
        """Law: per CTA, the boxes that land in it merged into whole boxes (one per map, iteration
        and K box); None (with a counterexample) where the slices do not cover each row once, or
        a slice is not at its first row's stage byte on a swizzle repeat."""
        g0 = self.ctas[0]
        out = []
        for x in range(self.size):
            groups: dict = {}
            for ts in issued:
                for t in ts:
                    if t.mask >> x & 1:
                        groups.setdefault((t.it, t.map, t.c0), []).append(t)
            merged = []
            for (it, mp, c0), ts in sorted(groups.items(), key=lambda kv: kv[0]):
                rows, text = (g0.bm, g0.la) if mp == MAP_A_ADDR else (g0.bn, g0.lb)
                span = swizzle_span(text)
                part = rows // (self.cn if mp == MAP_A_ADDR else self.cm)
                ts = sorted(ts, key=lambda t: t.c1)
                base_row = ts[0].c1 - ts[0].c1 % rows
                offs = [t.c1 - base_row for t in ts]
                base = ts[0].dst - offs[0] * span
                ok = offs == [q * part for q in range(len(ts))] and len(ts) * part == rows and \
                    all(t.dst == base + o * span and o % 8 == 0 for t, o in zip(ts, offs))
                if not ok:
                    name = "A" if mp == MAP_A_ADDR else "B"
                    self.add("multicast", "counterexample", f"CTA {x}, iteration {it}: the {name} "
                             f"slices landing there start at rows {offs} of the {rows}-row block "
                             f"(from CTAs {[t.sender for t in ts]}) at stage bytes "
                             f"{[t.dst - base for t in ts]}; each row once, slices of {part} "
                             f"rows at row x {span} B expected", ts[0].ev)
                    return None
                merged.append(replace(ts[0], c1=base_row, dst=base))
            out.append(merged)
        return out

    def _expect_tx(self, issued, landing, procs) -> None:
        """Bytes landing in CTA x in iteration i == the expect_tx of x's producer in iteration i."""
        g0 = self.ctas[0]
        box = {MAP_A_ADDR: g0.bm * swizzle_span(g0.la), MAP_B_ADDR: g0.bn * swizzle_span(g0.lb)}
        for x in range(self.size):
            exp, it = {}, -1
            for ev, v, n, t in procs[x][0]:
                if ev.op.startswith("mbarrier.try_wait"):
                    it += 1
                elif ev.op.startswith("mbarrier.arrive.expect_tx"):
                    exp[max(it, 0)] = exp.get(max(it, 0), 0) + int(tx_count(v)[0])
            got: dict = {}
            for m in landing[x]:
                got[m.it] = got.get(m.it, 0) + box[m.map]
            bad = next((i for i in sorted(set(got) | set(exp)) if got.get(i) != exp.get(i)), None)
            if bad is not None:
                self.add("expect-tx", "counterexample", f"CTA {x}, iteration {bad}: "
                         f"{got.get(bad, 0)} bytes land (its slices and its peers'), its producer "
                         f"expects {exp.get(bad, 0)}")
                return
        self.add("expect-tx", "proved", f"every CTA, every iteration: the bytes landing (own and "
                 "peers' slices) equal its producer's arrive.expect_tx")

    def _protocol(self, procs, issued) -> None:
        self.checks.append(explore_cluster(procs, issued, self.ctas, self.label))
