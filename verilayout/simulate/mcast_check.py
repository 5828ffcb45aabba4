"""Independent checks of an emitted sm_100a GEMM that runs as clusters of ``cta_group::1`` CTAs
with TMA multicast (``emit gemm --arch sm_100a --cluster CMxCN``), on the PTX nvcc writes.

From the manifest only the specification is read (dtype, tile, stages, the layout texts, the
cluster shape ``CM x CN`` and the stage offsets); nothing of the renderer. The rule checked is
the cluster's contract: rank ``r`` computes tile ``(ctm CM + r % CM, ctn CN + r // CM)`` of cluster
tile ``(ctm, ctn)``; the ``CN`` CTAs of one M block share its A rows, the ``CM`` CTAs of one N block
its B rows, each loading ``BM / CN`` (``BN / CM``) of them. Every CTA of one cluster is run on the
PTX (:func:`verilayout.simulate.ptx_run.run_threads` with ``%cluster_ctarank``; ``mapa`` names a
CTA by its window) for one cluster tile (K giving ``stages + 1`` K-tiles: the ring wraps), and for
two cluster tiles along N with ragged edges for the ring.

* ``multicast``: every TMA load's CTA mask (a plain load: its own CTA) names exactly the CTAs
  whose tile in that iteration has the loader's M block (A) or N block (B); a missing or extra CTA
  is named;
* ``slices``: in every CTA and iteration, every row of its tile's A and B blocks and every K box
  arrives exactly once (a slice loaded twice or missing is named), each slice at its row's byte of
  the stage box (stage base + box + row x swizzle span);
* ``expect-tx``: the bytes arriving in each CTA in each iteration (its own slices and its peers')
  equal the count its producer's ``arrive.expect_tx`` announced;
* ``release``: the ``tcgen05.commit`` that frees a stage in CTA ``x`` arrives (its multicast mask)
  on the empty barrier of every CTA whose producer wrote into that stage, and each producer's empty
  barrier is initialised with the number of commits that reach it;
* ``instruction``, ``descriptor``, ``tmem`` per CTA as for one CTA
  (:func:`verilayout.simulate.tcgen05_check.mma_checks`), on the slices that landed in it;
* ``cluster-cover``: each CTA stores exactly its tile of D (clipped to M x N) once, each element
  from its own TMEM cell;
* ``mcast-ring``: the K rings of all CTAs explored over every interleaving and landing order
  (:mod:`verilayout.simulate.mcast_ring`), each destination of a multicast landing on its own (the
  finest landing model; coarser ones only where every finer search passed its bound): with 2 CTAs
  by the full search, past its bound (and with 4 CTAs at once) by the stubborn-set reduced search
  (:mod:`verilayout.simulate.mcast_stubborn`) up to the cluster's symmetries
  (:mod:`verilayout.simulate.mcast_symmetry`);
* ``cluster-schedule``: on a 3 x 3 tile grid, for every grid of 1 .. 4 clusters, every tile is
  loaded (so computed) by exactly one CTA, the CTA its rank names;
* ``compile`` / ``spills``: ``ptxas -arch=sm_100a -v`` spills 0 bytes.

**Clusters of CTA pairs** (``cta_group::2``, the manifest's ``cta_pair`` with a cluster of
``CM x CN`` CTAs, ``CM`` even): the contract is that ranks ``2k, 2k + 1`` are a pair whose leader
``2k`` issues the MMAs of the pair's 256 x BN tile (place ``(r % CM / 2, r // CM)`` in the cluster
tile); rank ``r`` holds half ``r % 2`` of it: 128 rows of A and ``BN / 2`` rows of B. The checks above
read "block" as those halves (:func:`pair_blocks`): the CTAs sharing rows are those holding the same
half of the same block, a slice is ``128 / CN`` rows of A or ``BN / CM`` of B, every byte of a
``.cta_group::2`` load completes on the barrier at its offset in the *destination's pair leader*
(the operand names the issuing pair's leader: PTX ISA 9.7.9.25, the mbarrier may be in the
destination CTA's peer), so ``expect-tx`` compares per barrier (a leader expects both CTAs' stages,
a non-leader's full barrier nothing); ``release`` asks the commit of the destination's *leader*
to reach every writer; ``instruction`` / ``descriptor`` run on the leaders (M 256,
``cta_group::2``), ``cluster-cover`` stores per CTA its 128 rows of the pair tile, and
``mcast-ring`` models the leader's MMA thread reading both CTAs' stages.

Nothing here is run on an sm_100 GPU (none is available).

>>> contract_tile(3, 2, 2, 1, 4)
(3, 9)
>>> pair_blocks(3, 4, 1, 0, 1)
(3, 3)
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from verilayout.emit.tcgen05_manifest import Tcgen05Manifest
from verilayout.errors import LayoutError
from verilayout.frontends.ptx import parse_ptx
from verilayout.simulate.gemm_check import MAP_A_ADDR, MAP_B_ADDR, D_ADDR, BIAS_ADDR, SMEM_BASE, tma_load
from verilayout.simulate.independent import KernelCheck, IndependentReport, compiled_checks
from verilayout.simulate.mcast_ring import McastLoad, McastSystem, explore_mcast
from verilayout.simulate.mcast_stubborn import explore_stubborn
from verilayout.simulate.mcast_symmetry import ring_symmetries
from verilayout.simulate.ptx_run import (TMEM_TAG, barrier_key, cta_mask, init_count, phase_parity, run_threads,
                                         tma_mbarrier, tx_count)
from verilayout.simulate.ring import Arrive, Mma, MmaCommit, Wait
from verilayout.simulate.tcgen05_check import MAP_D_ADDR, check_tcgen05_source, mma_checks, tmem_checks
from verilayout.simulate.tma_store import is_tma_store, tma_store_elements

__all__ = ["MCAST_ASSUMPTIONS", "contract_tile", "pair_blocks", "cluster_runs", "cluster_loads", "multicast_check",
           "slices_check", "expect_tx_check", "release_check", "mcast_ring_check", "cover_check",
           "schedule_check", "check_mcast_source", "check_sm100_source"]

MCAST_ASSUMPTIONS = (
    "the CTAs of one cluster (grid = cluster size, cluster rank = block index), 192 threads each, "
    "run one by one on the PTX; an mbarrier wait returns at once in a run (the order is the ring's "
    "exploration), a multicast load or commit reaches the barrier at its offset in every CTA of its mask",
    "a TMA load writes one box of BOX_K elements x the contract's slice rows (BM / CN of A, BN / CM "
    "of B; a box wholly or partly past the tensor counts its whole bytes, zero-filled)",
    "the accumulator ring and the TMA-store order are those of the one-CTA kernel, checked there; "
    "nothing is run on an sm_100 GPU")
_BYTES = {"f16": 2, "bf16": 2, "e4m3": 1, "tf32": 4}
_SPAN = {"128B": 128, "64B": 64, "32B": 32}
#: The landing models of ``mcast-ring``, finest first, in words.
LANDINGS = {"per-dest": "every landing order (each destination of a multicast on its own)",
            "atomic": "every landing order of whole multicasts (each in all its CTAs at one step; the "
                      "per-destination searches passed their bounds)",
            "eager": "landings eager (each load lands at its issue: the sm_90a checks' landing "
                     "assumption; the searches with loads in flight passed their bounds)"}
#: States explored before ``mcast-ring`` is ``unknown``.
MAX_MCAST_STATES = 200000
#: States of the reduced search (:func:`_reduced`) before ``mcast-ring`` is ``unknown``.
MAX_REDUCED_STATES = 200000


def _is_load(e) -> bool:
    """A TMA load (global to shared), not a TMA store."""
    return e.op.startswith("cp.async.bulk.tensor") and not is_tma_store(e.op)


def _wait(e, cta: int) -> Wait:
    return Wait("wait", barrier_key(int(e.values["addr"][0]), cta), int(phase_parity(e.values)[0]) & 1, e)


def _commit(e, cta: int, done: int) -> MmaCommit:
    """A ``tcgen05.commit``: one arrival on its barrier's offset in every CTA of its multicast mask
    (operand ``a0``), else on its own barrier."""
    addr = int(e.values["addr"][0])
    m = e.values.get("a0") if "multicast" in e.op else None
    ctas = [c for c in range(16) if m is not None and int(m[0]) >> c & 1] or [barrier_key(addr, cta)[0]]
    return MmaCommit("mma-commit", tuple((c, barrier_key(addr, cta)[1]) for c in ctas), done, e)


def contract_tile(rank: int, cm: int, cn: int, ctm: int, ctn: int) -> tuple[int, int]:
    """The tile rank ``rank`` of a ``cm x cn`` cluster computes in cluster tile ``(ctm, ctn)``
    (the contract, written here independently of the emitter).

    >>> [contract_tile(r, 2, 2, 0, 1) for r in range(4)]
    [(0, 2), (1, 2), (0, 3), (1, 3)]
    """
    return ctm * cm + rank % cm, ctn * cn + rank // cm


def pair_blocks(rank: int, cm: int, cn: int, ctm: int, ctn: int) -> tuple[int, int]:
    """The blocks rank ``rank`` of a ``cm x cn`` cluster of CTA pairs holds in cluster tile
    ``(ctm, ctn)``: its 128-row block of A and its ``BN / 2``-row block of B (half ``rank % 2`` of
    its pair's 256 x BN tile, the pair at ``(ctm cm / 2 + rank % cm // 2, ctn cn + rank // cm)``),
    written here independently of the emitter.

    >>> [pair_blocks(r, 2, 2, 0, 0) for r in range(4)]
    [(0, 0), (1, 1), (0, 2), (1, 3)]
    """
    ptm, ptn = ctm * (cm // 2) + rank % cm // 2, ctn * cn + rank // cm
    return 2 * ptm + rank % 2, 2 * ptn + rank % 2


def _leader(x: int, pair: bool) -> int:
    """The CTA whose MMA thread reads CTA ``x``'s stages (``x`` itself without pairs)."""
    return x & ~1 if pair else x


def _signal(ld: dict, y: int) -> int:
    """The CTA whose full barrier a load's bytes landing in ``y`` complete on: ``y`` (``cta_group::1``),
    else ``y``'s pair member with the operand's pair bit (``.cta_group::2``)."""
    return (y & ~1) | (ld["bar_cta"] & 1) if ld["pair"] else y


def _params(M: int, N: int, K: int) -> dict:
    return {0: MAP_A_ADDR, 1: MAP_B_ADDR, 2: D_ADDR, 3: M, 4: N, 5: K, 6: BIAS_ADDR, 7: MAP_D_ADDR}


def cluster_runs(mod, entry: str, size: int, problem: tuple, threads=range(192)) -> list:
    """Law: one run per rank ``0 .. size - 1`` of the cluster's first ``size`` CTAs on ``problem``."""
    return [run_threads(mod, entry, threads, ctaid=r, nctaid=size, cluster_rank=r, cluster_size=size,
                        param_values=_params(*problem), shared_base=SMEM_BASE, max_steps=3000000)
            for r in range(size)]


def cluster_loads(run, cta: int) -> list[dict]:
    """Law: the run's TMA loads in order, each ``{it, map, c0, c1, dst, bar, dests, ev}``: ``it``
    the producer's waits before it - 1, ``dests`` its mask's CTAs (a plain load: its own CTA)."""
    out, it = [], -1
    first = next((e for e in run.events if _is_load(e)), None)
    me = None if first is None else int(run.threads[first.lanes[0]])
    for e in run.events:
        if e.op.startswith("mbarrier.try_wait") and int(run.threads[e.lanes[0]]) == me:
            it += 1
        elif _is_load(e):
            t = tma_load(e, it)
            m = cta_mask(e.values) if "multicast" in e.op else None
            dests = tuple(y for y in range(16) if int(m[0]) >> y & 1) if m is not None else (cta,)
            key = barrier_key(int(tma_mbarrier(e.values)[0]), cta)
            out.append({"it": t.it, "map": t.map, "c0": t.c0, "c1": t.c1, "dst": t.dst, "ev": e,
                        "bar": key[1], "bar_cta": key[0], "pair": "cta_group::2" in e.op, "dests": dests,
                        "mcast": "multicast" in e.op})
    return out


class _Spec:
    """The specification read from the manifest, and the problem's cluster tiles."""

    def __init__(self, man: Tcgen05Manifest, problem: tuple):
        self.man = man
        self.cm, self.cn = man.cluster.m, man.cluster.n
        self.size = self.cm * self.cn
        self.pair = man.cta_pair is not None          # CTA pairs: a CTA's blocks are halves
        self.eb, self.span = _BYTES[man.dtype], _SPAN[man.swizzle]
        self.tile_n = man.bn                          # columns of D per tile (a pair's too)
        self.bm, self.bn = (128, man.bn // 2) if self.pair else (man.bm, man.bn)
        self.bk, self.stages = man.bk, man.stages
        self.box_k = self.span // self.eb
        self.M, self.N, self.K = problem
        self.k_tiles = -(-self.K // self.bk)
        self.ctn = -(-(-(-self.N // self.tile_n)) // self.cn)   # cluster tiles along N (one along M)

    def tile(self, x: int, it: int) -> tuple[int, int]:
        """CTA ``x``'s blocks (A, B) in K iteration ``it`` (cluster tiles walked along N, one along M)."""
        f = pair_blocks if self.pair else contract_tile
        return f(x, self.cm, self.cn, 0, it // self.k_tiles)

    def rows(self, op: str) -> int:
        """Rows of one slice of ``op``."""
        return self.bm // self.cn if op == "A" else self.bn // (self.cm // 2 if self.pair else self.cm)

    def store_tile(self, x: int) -> tuple[int, int]:
        """The first row and column of D CTA ``x`` stores in the first cluster tile."""
        a, b = self.tile(x, 0)
        return a * self.bm, (b // 2 if self.pair else b) * self.tile_n

    def block(self, op: str) -> int:
        return self.bm if op == "A" else self.bn

    def box_base(self, op: str, it: int, j: int) -> int:
        """The shared address of box ``j`` of ``op``'s stage in iteration ``it``."""
        o = self.man.a if op == "A" else self.man.b
        base = (SMEM_BASE + 1023) // 1024 * 1024
        return base + o.offset + (it % self.stages) * o.stage_bytes + j * self.block(op) * self.span


def _op(load: dict) -> str:
    return "A" if load["map"] == MAP_A_ADDR else "B"


def _line(load: dict):
    ev = load["ev"]
    return ev.instr.line if getattr(ev, "instr", None) else None


def multicast_check(spec: _Spec, loads: list) -> KernelCheck:
    """``multicast`` (module docstring) on every CTA's loads ``loads[x]``."""
    for s, ls in enumerate(loads):
        for ld in ls:
            op = _op(ld)
            axis = 0 if op == "A" else 1
            mine = spec.tile(s, ld["it"])[axis]
            want = {x for x in range(spec.size) if spec.tile(x, ld["it"])[axis] == mine}
            got = set(ld["dests"])
            if got != want:
                miss, extra = sorted(want - got), sorted(got - want)
                return KernelCheck("multicast", "counterexample", f"multicast: CTA {s}'s {op} load of iteration "
                                   f"{ld['it']} has CTA mask {sum(1 << y for y in got):#x}; the CTAs sharing its "
                                   f"{'M' if op == 'A' else 'N'} block are {sum(1 << y for y in want):#x}"
                                   + (f" (misses CTA {miss[0]})" if miss else f" (names CTA {extra[0]})"), _line(ld))
    n = sum(len(ls) for ls in loads)
    return KernelCheck("multicast", "proved", f"{n} TMA loads of {spec.size} CTAs: each mask names exactly the CTAs "
                       "whose tile shares the loaded block")


def _arrivals(spec: _Spec, loads: list) -> dict:
    """``{(x, it): [load, ...]}``: the loads landing in CTA ``x`` in iteration ``it``."""
    got: dict = {}
    for ls in loads:
        for ld in ls:
            for y in ld["dests"]:
                got.setdefault((y, ld["it"]), []).append(ld)
    return got


def slices_check(spec: _Spec, loads: list) -> KernelCheck:
    """``slices`` (module docstring): every row and K box of each CTA's blocks once, at its byte."""
    land = _arrivals(spec, loads)
    iters = spec.k_tiles * spec.ctn
    for x in range(spec.size):
        for it in range(iters):
            bad = _slice_error(spec, x, it, land.get((x, it), []))
            if bad:
                return KernelCheck("slices", "counterexample", "slices: " + bad[0], bad[1])
    return KernelCheck("slices", "proved", f"{spec.size} CTAs x {iters} iterations: every row of each CTA's A "
                       f"and B blocks and every K box arrives once ({spec.rows('A')}-row A and "
                       f"{spec.rows('B')}-row B slices), each at its row's byte of the stage box")


def _slice_error(spec: _Spec, x: int, it: int, arrived: list):
    """Law: ``(message, line)`` of the first row or byte of CTA ``x``'s iteration ``it`` that is
    not received exactly once at its place; None when all are."""
    for op in "AB":
        axis, block = (0, spec.bm) if op == "A" else (1, spec.bn)
        first = spec.tile(x, it)[axis] * block
        k0 = (it % spec.k_tiles) * spec.bk
        count: dict = {}
        for ld in (a for a in arrived if _op(a) == op):
            j = (ld["c0"] - k0) // spec.box_k
            want_dst = spec.box_base(op, it, j) + (ld["c1"] - first) * spec.span
            if ld["dst"] != want_dst or (ld["c0"] - k0) % spec.box_k or not 0 <= ld["c1"] - first < block:
                return (f"CTA {x}, iteration {it}: the {op} slice of rows {ld['c1']}.. K {ld['c0']} lands at shared "
                        f"{ld['dst']:#x}, its rows belong at {want_dst:#x} of its tile's block from row {first}",
                        _line(ld))
            for r in range(ld["c1"], ld["c1"] + spec.rows(op)):
                count[(j, r)] = count.get((j, r), 0) + 1
        for j in range(spec.bk // spec.box_k):
            for r in range(first, first + block):
                if count.get((j, r), 0) != 1:
                    how = "twice" if count.get((j, r), 0) > 1 else "never"
                    return (f"CTA {x}, iteration {it}: row {r} of {op} (K box {j}) arrives {how} "
                            f"({count.get((j, r), 0)} times; a slice loaded twice or missing)", None)
    return None


def _expects(runs: list) -> dict:
    """``{CTA: [bytes, ...]}``: the ``arrive.expect_tx`` byte counts on each CTA's barriers, in order."""
    out: dict = {}
    for x, run in enumerate(runs):
        for e in run.events:
            if e.op.startswith("mbarrier.arrive.expect_tx"):
                out.setdefault(barrier_key(int(e.values["addr"][0]), x)[0], []).append(int(tx_count(e.values)[0]))
    return out


def _signalled(spec: _Spec, loads: list) -> dict:
    """``{(x, it): bytes}``: the bytes completing on CTA ``x``'s full barrier in iteration ``it``."""
    got: dict = {}
    for ls in loads:
        for ld in ls:
            for y in ld["dests"]:
                k = (_signal(ld, y), ld["it"])
                got[k] = got.get(k, 0) + spec.rows(_op(ld)) * spec.span
    return got


def expect_tx_check(spec: _Spec, loads: list, runs: list) -> KernelCheck:
    """``expect-tx`` (module docstring): per CTA barrier and iteration, the bytes completing on it =
    the count expected on it (a barrier no producer expects on: 0 bytes)."""
    got, exp = _signalled(spec, loads), _expects(runs)
    stage = (spec.bm + spec.bn) * spec.bk * spec.eb
    for x in range(len(runs)):
        for it in range(spec.k_tiles * spec.ctn):
            e = exp.get(x, [])
            want = e[it] if it < len(e) else (0 if not e else None)
            if got.get((x, it), 0) != want:
                return KernelCheck("expect-tx", "counterexample", f"expect-tx: CTA {x}'s producer expects "
                                   f"{want} bytes in iteration {it}, {got.get((x, it), 0)} arrive on its full barrier "
                                   f"(a CTA's slices and its peers'; one CTA's stage is {stage}"
                                   + (", a pair leader's both CTAs'" if spec.pair else "") + ")")
    return KernelCheck("expect-tx", "proved", "in every CTA and iteration the bytes completing on its full "
                       "barrier (own and peers' slices" + (", both CTAs of the pair on the leader's" if spec.pair
                                                           else "") + ") equal the expect_tx on it")


def _commits(run, cta: int) -> list:
    """The MMA thread's stage commits in order: each the CTAs it arrives in and its barrier offset
    (commits after which the next action is not an MMA of the same tile: the accumulator's, left out)."""
    first = next((e for e in run.events if e.op.startswith("tcgen05.mma")), None)
    if first is None:
        return []
    me = int(run.threads[first.lanes[0]])
    out, mma_since = [], False
    for e in run.events:
        if int(run.threads[e.lanes[0]]) != me:
            continue
        if e.op.startswith("tcgen05.mma"):
            mma_since = True
        elif e.op.startswith("tcgen05.commit"):
            c = _commit(e, cta, 0)
            if mma_since:
                out.append(c)
            mma_since = False
    return out


def _inits(run, cta: int) -> dict:
    return {barrier_key(int(e.values["addr"][0]), cta)[1]: int(init_count(e.values)[0])
            for e in run.events if e.op.startswith("mbarrier.init")}


def _empty_offset(run, cta: int) -> int | None:
    """The offset of the producer's first wait: its first stage's empty barrier."""
    ld = next((e for e in run.events if _is_load(e)), None)
    if ld is None:
        return None
    me = int(run.threads[ld.lanes[0]])
    w = next((e for e in run.events if e.op.startswith("mbarrier.try_wait") and int(run.threads[e.lanes[0]]) == me), None)
    return None if w is None else barrier_key(int(w.values["addr"][0]), cta)[1]


def release_check(spec: _Spec, loads: list, runs: list) -> KernelCheck:
    """``release`` (module docstring)."""
    land = _arrivals(spec, loads)
    reach: dict = {}
    for x in range(len(runs)):
        lead = _leader(x, spec.pair)
        commits = _commits(runs[lead], lead)
        for it in range(spec.k_tiles * spec.ctn):
            writers = {s for s in range(spec.size) for ld in land.get((x, it), []) if ld in loads[s]}
            to = {b[0] for b in commits[it].bars} if it < len(commits) else set()
            if not writers <= to:
                return KernelCheck("release", "counterexample", f"release: CTA {lead}'s commit freeing CTA {x}'s "
                                   f"stage of iteration {it} arrives in CTAs {sorted(to)}, but CTA "
                                   f"{min(writers - to)}'s producer wrote into it (it never learns the stage is free)")
            for y in to:
                reach.setdefault((y, it), set()).add(lead)
    for y, run in enumerate(runs):
        count = _inits(run, y).get(_empty_offset(run, y))
        got = {len(reach.get((y, it), ())) for it in range(spec.k_tiles * spec.ctn)}
        if got != {count}:
            return KernelCheck("release", "counterexample", f"release: CTA {y}'s empty barrier is initialised to "
                               f"{count}, its stages are released by {sorted(got)} commit(s) per use")
    return KernelCheck("release", "proved", "every stage commit arrives on the empty barrier of every CTA whose "
                       "producer wrote into the stage" + (" (either CTA of the leader's pair)" if spec.pair else "")
                       + "; each empty barrier's count is the commits reaching it")


def _producer(run, x: int, spec: _Spec, keep: set) -> list:
    """The producer's ring actions: waits and expect_tx on the K ring's barriers, one
    :class:`McastLoad` per (iteration, barrier, destination set), regions merged."""
    ld0 = next((e for e in run.events if _is_load(e)), None)
    if ld0 is None:
        return []
    me, prog, it = int(run.threads[ld0.lanes[0]]), [], -1
    for e in run.events:
        if int(run.threads[e.lanes[0]]) != me:
            continue
        if e.op.startswith("mbarrier.try_wait"):
            w = _wait(e, x)
            if w.bar[1] in keep:
                it += 1
                prog.append(w)
        elif e.op.startswith("mbarrier.arrive.expect_tx"):
            prog.append(Arrive("arrive", barrier_key(int(e.values["addr"][0]), x), 1, int(tx_count(e.values)[0]), e))
        elif _is_load(e):
            prog.append(_merged(prog, e, x, it, spec))
    return [a for a in prog if a is not None]


def _merged(prog: list, e, x: int, it: int, spec: _Spec):
    """A load as a :class:`McastLoad`, merged into the previous one of the same iteration and
    destinations (which it then replaces: None is returned in its place)."""
    m = cta_mask(e.values) if "multicast" in e.op else None
    dests = tuple(y for y in range(16) if int(m[0]) >> y & 1) if m is not None else (x,)
    n = spec.rows("A" if int(e.values["map"][0]) == MAP_A_ADDR else "B") * spec.span
    dst, (bar_cta, bar) = int(e.values["addr"][0]), barrier_key(int(tma_mbarrier(e.values)[0]), x)
    sig = tuple(_signal({"pair": "cta_group::2" in e.op, "bar_cta": bar_cta}, y) for y in dests)
    sig = () if sig == dests else sig
    for k in range(len(prog) - 1, -1, -1):
        a = prog[k]
        if a is None:
            continue
        if a.kind != "mcast-load" or a.it != it:
            break
        if a.dests == dests and a.bar == bar and a.sig == sig:
            prog[k] = a._replace(nbytes=a.nbytes + n, regions=a.regions + ((dst, dst + n),))
            return None
    return McastLoad("mcast-load", x, it, dests, bar, n, ((dst, dst + n),), e, sig)


def _mma_prog(run, x: int, keep: set) -> list:
    """The MMA thread's ring actions: waits on the K ring's barriers, one :class:`Mma` per K
    iteration, its stage commits (the accumulator's left out: the epilogue ring)."""
    first = next((e for e in run.events if e.op.startswith("tcgen05.mma")), None)
    if first is None:
        return []
    me, prog, it = int(run.threads[first.lanes[0]]), [], 0
    for e in run.events:
        if int(run.threads[e.lanes[0]]) != me:
            continue
        if e.op.startswith("mbarrier.try_wait") and _wait(e, x).bar[1] in keep:
            prog.append(_wait(e, x))
        elif e.op.startswith("tcgen05.mma") and not (prog and prog[-1].kind == "mma"):
            prog.append(Mma("mma", it, 0, e))
        elif e.op.startswith("tcgen05.commit") and prog and prog[-1].kind == "mma":
            prog.append(_commit(e, x, 0)._replace(mark=e))
            it += 1
    return prog


def _ring_bars(runs: list) -> set:
    """The K ring's barrier offsets: those the producer thread waits on or completes bytes on."""
    keep: set = set()
    for x, run in enumerate(runs):
        ld = next((e for e in run.events if _is_load(e)), None)
        if ld is None:
            continue
        me = int(run.threads[ld.lanes[0]])
        for e in run.events:
            if int(run.threads[e.lanes[0]]) == me and e.op.startswith(("mbarrier.try_wait", "mbarrier.arrive")):
                keep.add(barrier_key(int(e.values["addr"][0]), x)[1])
    return keep


def mcast_ring_check(spec: _Spec, runs: list) -> KernelCheck:
    """``mcast-ring``: the system of :mod:`verilayout.simulate.mcast_ring` read off the runs,
    explored. Law: ``proved`` only when no interleaving and landing order errs or deadlocks.
    A system whose content less its marks (:func:`ring_content`) was explored before in this
    process gets the same check without a search, unless that check was a counterexample (its
    line is the mark's)."""
    keep = _ring_bars(runs)
    progs, roles, init = [], [], {}
    for x, run in enumerate(runs):
        init.update({(x, o): c for o, c in _inits(run, x).items() if o in keep})
        progs += [tuple(_producer(run, x, spec, keep)), tuple(_mma_prog(run, x, keep))]
        roles += [(x, "producer"), (x, "mma")]
    reads = tuple((x, x + 1) if spec.pair and r == "mma" and x % 2 == 0 else () for x, r in roles)
    system = McastSystem(len(runs), tuple(progs), tuple(roles), tuple(sorted(init.items())), reads=reads)
    key = ring_content(system)
    check = _RING_MEMO.get(key)
    if check is None:
        check = _ring_verdict(system)
        while len(_RING_MEMO) >= _RING_MEMO_SIZE:
            del _RING_MEMO[next(iter(_RING_MEMO))]
        if check.status != "counterexample":
            _RING_MEMO[key] = check
    return check


#: ``mcast-ring`` checks by :func:`ring_content` of their system (this process; no counterexamples),
#: oldest dropped past :data:`_RING_MEMO_SIZE` (as :mod:`verilayout.simulate.pair_ring`'s memo).
_RING_MEMO: dict = {}
_RING_MEMO_SIZE = 16


def ring_content(system: McastSystem) -> McastSystem:
    """Law: ``system`` with every action's ``mark`` (the PTX event it came from) set to ``None``:
    the search reads marks only to report an error, so two systems of equal content have the same
    outcome, state count and blocked waits.

    >>> s = McastSystem(1, ((Wait("wait", (0, 8), 0, "line 3"),), ()), ((0, "producer"), (0, "mma")), ())
    >>> ring_content(s).prog[0][0].mark is None
    True
    """
    return replace(system, prog=tuple(tuple(a._replace(mark=None) for a in p) for p in system.prog))


def _ring_verdict(system: McastSystem) -> KernelCheck:
    """Law: the ``mcast-ring`` check of ``system`` (:func:`mcast_ring_check`), searched: per landing
    model, finest first, until one search ends: with 2 CTAs the full search, past its bound the
    reduced one (:func:`_reduced`); with more CTAs the reduced one (the full one passes any
    affordable bound there)."""
    progs, runs = system.prog, range(system.ncta)
    names = [f"CTA {x}'s {r}" for x, r in system.roles]
    for landing in LANDINGS:
        how, one = "", replace(system, landing=landing)
        try:
            r = explore_mcast(one, max_states=MAX_MCAST_STATES) if len(runs) <= 2 else None
            if r is None or r.outcome == "unknown":
                r, how = _reduced(one)
        except KeyError as e:                # a barrier no mbarrier.init of the runs set up
            return KernelCheck("mcast-ring", "unknown", f"mcast-ring: mbarrier {e} is waited on or signalled, "
                               "but no mbarrier.init of it was read in the runs")
        if r.outcome != "unknown":
            break
    grain = LANDINGS[landing]
    if r.outcome == "counterexample":
        f, ev = r.error
        return KernelCheck("mcast-ring", "counterexample", f"mcast-ring: {f.what}: {_words(f, names)}" + how,
                           ev.instr.line if getattr(ev, "instr", None) else None)
    if r.outcome == "deadlock":
        w = "; ".join(f"{names[p]} waits on mbarrier {a.bar[1]:#x} of CTA {a.bar[0]} parity {a.parity}"
                      for p, a in r.blocked[:3])
        return KernelCheck("mcast-ring", "counterexample", f"mcast-ring: deadlock: {w}" + how)
    if r.outcome == "unknown":
        full = f"more than {MAX_MCAST_STATES} states and " if len(runs) <= 2 else "more than "
        return KernelCheck("mcast-ring", "unknown", f"mcast-ring: in every landing model {full}"
                           f"{MAX_REDUCED_STATES} of the stubborn-set reduced search")
    its = sum(1 for p in progs for a in p if a.kind == "mma")
    return KernelCheck("mcast-ring", "proved", f"{len(progs)} processes ({len(runs)} producers and MMA threads), "
                       f"{its} MMA iterations, every interleaving and {grain} ({r.states} states{how}): every "
                       "MMA after its stage's slices landed, no stage rewritten while read, every release "
                       "reaches its producer, nothing lands after a CTA finished, no deadlock")


def _reduced(system: McastSystem) -> tuple:
    """Law: ``(exploration, note)`` of the stubborn-set reduced search with symmetry reduction
    (:mod:`verilayout.simulate.mcast_stubborn`: every terminal state of the full search, so every
    error and every deadlock, is reached; :mod:`verilayout.simulate.mcast_symmetry`: up to the CTA
    permutations that map the system onto itself) on ``system``, at most :data:`MAX_REDUCED_STATES`
    states; the note names the method for the message. KeyError: a wait on an mbarrier without init."""
    r = explore_stubborn(system, max_states=MAX_REDUCED_STATES, symmetric=True)
    k = len(ring_symmetries(system))
    sym = f", up to {k} CTA permutations mapping the ring onto itself" if k > 1 else ""
    return r, " of a stubborn-set reduced search" + sym if r.outcome == "proved" else " [stubborn-set reduced search]"


def cover_check(spec: _Spec, runs: list, d_map) -> KernelCheck:
    """``cluster-cover``: each CTA stores exactly its tile (inside M x N) once, element (row, col)
    from TMEM lane ``row mod 128`` and column ``col - tile column`` (f32 D, the cell's tag)."""
    for x, run in enumerate(runs):
        r0, c0 = spec.store_tile(x)
        tm, tn = r0 // spec.bm, c0 // spec.tile_n
        want = {(r, c) for r in range(r0, min(spec.M, r0 + spec.bm)) for c in range(c0, min(spec.N, c0 + spec.tile_n))}
        got: dict = {}
        for e, pos, bits in tma_store_elements(run, "f32", *d_map, (spec.M, spec.N), MAP_D_ADDR):
            if pos is None:
                return KernelCheck("cluster-cover", "unknown", f"CTA {x} stores a value the run does not know")
            for p, b in zip(np.asarray(pos).tolist(), np.asarray(bits).tolist()):
                row, col = p // spec.N, p % spec.N
                cell = ((int(b) >> 16) & 0x7FFF, int(b) & 0xFFFF)
                if not int(b) & TMEM_TAG or cell != (row - r0, col - c0):
                    return KernelCheck("cluster-cover", "counterexample", f"CTA {x} stores D({row}, {col}) from "
                                       f"TMEM cell {cell}; its tile is ({tm}, {tn}): expected "
                                       f"({row - r0}, {col - c0})")
                got[(row, col)] = got.get((row, col), 0) + 1
        if set(got) != want or any(v != 1 for v in got.values()):
            return KernelCheck("cluster-cover", "counterexample", f"CTA {x} stores {len(got)} elements, expected "
                               f"the {len(want)} of its tile ({tm}, {tn}) once each")
    return KernelCheck("cluster-cover", "proved", f"each of the {spec.size} CTAs stores exactly its "
                       + ("128 rows of its pair's tile" if spec.pair else "tile") + " of D once, each element "
                       "from its own TMEM cell")


def schedule_check(man: Tcgen05Manifest, mod, entry: str, tiles: tuple = (3, 3), grids: int = 4) -> KernelCheck:
    """``cluster-schedule``: on ``tiles`` (tile rows x columns) and every grid of 1 .. ``grids``
    clusters, each CTA's producer (thread 0) run; the tiles whose A and B blocks it loads (slices
    included) cover every tile exactly once, and a CTA's tile is one its rank may take."""
    cm, cn = man.cluster.m, man.cluster.n
    size, bm, bn = cm * cn, man.bm, man.bn
    M, N = tiles[0] * bm, tiles[1] * bn
    pair = man.cta_pair is not None              # blocks of 128 rows of A, BN / 2 of B; tiles of pairs
    blocks = (128, bn // 2) if pair else (bm, bn)
    gm = cm // 2 if pair else cm
    for g in range(1, grids + 1):
        owner: dict = {}
        for b in range(size * g):
            run = run_threads(mod, entry, [0], ctaid=b, nctaid=size * g, cluster_rank=b % size,
                              cluster_size=size, param_values=_params(M, N, man.bk),
                              shared_base=SMEM_BASE, max_steps=400000)
            if not run.complete:
                return KernelCheck("cluster-schedule", "unknown", f"CTA {b} of {size * g} could not be run")
            r = b % size
            for a, c in _loaded_tiles(run, r, *blocks):
                t, half = ((a // 2, c // 2), (a % 2, c % 2)) if pair else ((a, c), (0, 0))
                place = (r % cm // 2, r // cm) if pair else (r % cm, r // cm)
                if (t[0] % gm, t[1] % cn) != place or half != ((r % 2, r % 2) if pair else (0, 0)):
                    return KernelCheck("cluster-schedule", "counterexample", f"CTA {b} (rank {r}) computes "
                                       f"tile {t}" + (f" half {half}" if pair else "") + ", not one of its "
                                       "rank's place in a cluster tile")
                owner.setdefault(t + (half[:1] if pair else ()), []).append(b)
        inside = {t: v for t, v in owner.items() if t[0] < tiles[0] and t[1] < tiles[1]}
        bad = [(tm, tn, *h) for tm in range(tiles[0]) for tn in range(tiles[1]) for h in ([(0,), (1,)] if pair else [()])
               if len(inside.get((tm, tn, *h), [])) != 1]
        if bad:
            return KernelCheck("cluster-schedule", "counterexample", f"tile {bad[0]} computed by CTAs "
                               f"{inside.get(bad[0], [])} with {g} cluster(s) on {tiles[0]} x {tiles[1]} tiles")
    return KernelCheck("cluster-schedule", "proved", f"{tiles[0]} x {tiles[1]} tiles, every grid of 1 .. {grids} "
                       "clusters: each tile computed by exactly one " + ("CTA pair (each half by one CTA)" if pair
                                                                          else "CTA") + ", at its rank's place")


def _loaded_tiles(run, rank: int, bm: int, bn: int) -> list:
    """The tiles ``(A block, B block)`` of the run's units, read off its K-box-0 loads: one A and
    one B load per unit (its slices' rows name the blocks)."""
    a = [ld["c1"] // bm for ld in cluster_loads(run, rank) if ld["c0"] == 0 and ld["map"] == MAP_A_ADDR]
    b = [ld["c1"] // bn for ld in cluster_loads(run, rank) if ld["c0"] == 0 and ld["map"] == MAP_B_ADDR]
    return list(zip(a, b))


def _one_cta_checks(spec: _Spec, runs: list, loads: list) -> list[KernelCheck]:
    """``instruction``, ``descriptor`` and ``tmem`` of each CTA, its stage's landed slices as its TMAs."""
    man, out = spec.man, []
    land = _arrivals(spec, loads)
    for x, run in enumerate(runs):
        tmas = [replace(tma_load(ld["ev"], it), it=it) for (y, it), lds in sorted(land.items()) if y == x for ld in lds]
        mma = (mma_checks(run, tmas, man.dtype, man.bn, man.bk, man.a.layout, man.b.layout, group=2 if spec.pair else 1)
               if _leader(x, spec.pair) == x else [])
        cs = mma + tmem_checks(run, man.bn)
        out += [KernelCheck(c.check, c.status, c.message + f" [CTA {x}]", c.ptx_line) for c in cs]
    return out


def _words(f, names: list) -> str:
    """The message of an :class:`~verilayout.simulate.mcast_ring.McastFinding` in the cluster's words."""
    v, who = f.values, names[f.p]
    return {
        "mma-early": lambda: f"{who} issues the MMA of K iteration {v[0]} before CTA {v[2]}'s slice of that "
                             f"iteration landed in CTA {v[1]}",
        "mma-reads-landing": lambda: f"{who}'s MMA of K iteration {v[0]} reads bytes of CTA {v[1]} the load of "
                                     f"iteration {v[2]} is writing",
        "load-over-read": lambda: f"{who}'s load of K iteration {v[1]} rewrites CTA {v[0]}'s stage bytes its MMA "
                                  f"of iteration {v[2]} still reads",
        "over-arrive": lambda: f"{who} arrives on mbarrier {v[0][1]:#x} of CTA {v[0][0]} beyond its count "
                               "(or it is not initialised)",
        "after-exit": lambda: f"{who}'s {v[0]} reaches CTA {v[1]} after its producer and MMA thread finished",
    }[f.what]()


def _ring_problem(man: Tcgen05Manifest) -> tuple:
    """The ring's problem: two ragged cluster tiles along N, the ring wrapping (2 CTAs); one
    cluster tile of ``stages + 1`` K-tiles (4 CTAs: the smallest run where every stage is reused)."""
    cm, cn, st = man.cluster.m, man.cluster.n, man.stages
    m = _extent(man)[0]
    if cm * cn <= 2:
        return m - 40, 2 * cn * man.bn - 8, (st // 2 + 1) * man.bk
    return m - 40, cn * man.bn - 8, (st + 1) * man.bk


def _extent(man: Tcgen05Manifest) -> tuple[int, int]:
    """Law: the rows and columns of D one cluster tile covers (``CM / 2`` pair tiles of 256 rows
    with CTA pairs)."""
    cm, cn = man.cluster.m, man.cluster.n
    return (cm // 2 if man.cta_pair is not None else cm) * man.bm, cn * man.bn


def check_mcast_source(man: Tcgen05Manifest, source: str) -> IndependentReport:
    """Compile a cluster sm_100a ``kernel.cu`` and run the checks of the module docstring.
    Law: ``proved`` only where the check held for every CTA, iteration, row and interleaving it covers."""
    checks, ptx = compiled_checks(source, "sm_100a")
    if ptx is None:
        return IndependentReport(tuple(checks), MCAST_ASSUMPTIONS)
    mod = parse_ptx(ptx)
    entry = next((f for f in mod.functions if "vl_gemm_kernel" in f), None)
    cm, cn, st = man.cluster.m, man.cluster.n, man.stages
    one = _Spec(man, (*_extent(man), (st + 1) * man.bk))
    runs = cluster_runs(mod, entry, one.size, (one.M, one.N, one.K)) if entry else []
    if not runs or not all(r.complete for r in runs):
        why = "no vl_gemm_kernel" if not runs else next(r.reason for r in runs if not r.complete)
        return IndependentReport(tuple(checks + [KernelCheck("run", "unknown", why)]), MCAST_ASSUMPTIONS)
    loads = [cluster_loads(r, x) for x, r in enumerate(runs)]
    checks += [multicast_check(one, loads), slices_check(one, loads), expect_tx_check(one, loads, runs),
               release_check(one, loads, runs)]
    checks += _one_cta_checks(one, runs, loads)
    if man.epilogue.spec == ("f32", False, "none") and man.d_store.kind == "tma":
        checks.append(cover_check(one, runs, (man.d_store.box, man.d_store.swizzle)))
    two = _Spec(man, _ring_problem(man))
    ring_runs = cluster_runs(mod, entry, two.size, (two.M, two.N, two.K), threads=range(64))
    if all(r.complete for r in ring_runs):
        c = mcast_ring_check(two, ring_runs)
        checks.append(KernelCheck(c.check, c.status, c.message + f" [M={two.M}, N={two.N}, K={two.K}]", c.ptx_line))
    else:
        checks.append(KernelCheck("mcast-ring", "unknown", "the two-cluster-tile runs did not complete"))
    checks.append(schedule_check(man, mod, entry))
    return IndependentReport(tuple(checks), MCAST_ASSUMPTIONS)


def check_sm100_source(man: Tcgen05Manifest, source: str) -> IndependentReport:
    """The independent checks of any sm_100a GEMM: :func:`check_mcast_source` for a multicast
    cluster, else :func:`verilayout.simulate.tcgen05_check.check_tcgen05_source` (one CTA, split-K,
    the CTA pair).

    >>> check_sm100_source(None, "")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: manifest: expected an sm_100a GEMM manifest, got NoneType
    """
    if not isinstance(man, Tcgen05Manifest):
        raise LayoutError(f"manifest: expected an sm_100a GEMM manifest, got {type(man).__name__}")
    return check_mcast_source(man, source) if man.cluster is not None else check_tcgen05_source(man, source)
