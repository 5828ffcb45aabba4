"""Independent checks of an emitted sm_100a GEMM (``emit gemm --arch sm_100a``), on the PTX nvcc
writes for ``kernel.cu``, without a Blackwell GPU (none is available here: nothing is executed
on hardware).

From the manifest only the specification is read (dtype, tile, stages, the two stage layout
texts, the threads per CTA, the D tensor map's box and swizzle). The PTX is run by
:func:`verilayout.simulate.ptx_run.run_threads` for every thread of CTA 0 (one 128 x BN tile; K
giving ``stages + 2`` K-tiles so the ring wraps), then with ragged edges (``M = 88``, ``N = BN -
5``, K short by 16 bytes), then (no split-K) on a 2 x 2 tile grid with the last tile row 40 rows
short, one CTA walking all four tiles (:data:`PERSISTENT_TILES`). ``tcgen05.alloc`` hands out TMEM address
0 (lane 0, column 0); a ``tcgen05.ld.32x32b`` register holds a tag naming the TMEM cell it read.

* ``instruction``: every ``tcgen05.mma`` is ``.cta_group::1.kind::<kind>`` of the dtype, its
  instruction descriptor decodes (field table of the PTX ISA "Instruction descriptor", written
  here independently of the emitter) to M 128, N = BN, A and B of the dtype, D f32, both
  K-major, dense; enable-input-d 0 at the first K-block and 1 after;
* ``tma``: the TMA boxes place every (mn, k) at the byte of the layout text (the sm_90a check);
* ``descriptor``: each ``tcgen05.mma``'s A and B descriptors (values from the run, decoded as
  sm_100 descriptors) read K-block ``kb`` of the stage the same iteration's TMA filled
  (:func:`verilayout.prove.wgmma.check_descriptor`, ``arch="sm_100"``);
* ``tmem``: the allocation is a power of two from 32 to 512 columns covering N; warp ``w`` loads
  only lanes ``32w .. 32w + 31`` (PTX ISA tcgen05.ld access rule); across its loads each warp
  reads every accumulator column ``0 .. BN - 1`` exactly once;
* ``d-store``: each stored TMEM cell (lane L, column C) lands at ``D(L, C)`` of the tile (M = 128
  ``cta_group::1`` datapath: lane = row, column = column), every in-range element once, none
  outside;
* ``spills``: ``ptxas -arch=sm_100a -v`` spills 0 bytes.
* ``split-k`` (``splits`` S > 1): CTAs 0 .. S-1 (tile 0, K slice s each) are run one by one;
  each stores to workspace slot s only (``d-store``), and the K-tiles (A's TMA coordinates) of
  the MMAs accumulated into what it stored are, over the slots, disjoint and cover K (the sm_90a
  cover check); the reduction kernel is run as on sm_90a
  (:func:`verilayout.simulate.gemm_check.reduce_check`);
* ``epilogue`` (a fused epilogue, S = 1): a ``tcgen05.ld`` reads :func:`tmem_cell_value` of its
  cell, bias[col] is ``(col mod 5) - 2``; every stored element of D(row, col) must equal
  ``out(act(tmem_cell_value(row, col) + bias[col]))`` (float64 from the definitions, one output
  ulp); ``bias``: no bias element at or beyond N is read.

* ``acc-ring`` (several tiles): the TMEM accumulator ring between the MMA thread and the
  epilogue warps explored over every interleaving (:mod:`verilayout.simulate.tmem_ring`): no
  warp reads a tile's accumulator before its MMAs completed or after a later tile's MMA began to
  write those columns, no MMA writes columns a warp has not finished reading; ``d-store`` there:
  every element of the four tiles once, from its own tile's TMEM cells, in the producer's order;
* ``store-order`` (TMA-store epilogue): every TMA store reads bytes fenced and synchronised after
  they were written, none rewritten before ``cp.async.bulk.wait_group.read`` covered the store
  (:mod:`verilayout.simulate.tma_store`); the stored D is rebuilt from the ``st.shared`` bytes
  through the TMA swizzle model, so ``d-store`` and ``epilogue`` check it as any other store;
* ``schedule``: every CTA of every grid of 1 .. 7 CTAs run (its producer thread) on a 3 x 2 tile
  grid: each tile loaded by exactly one CTA (:mod:`verilayout.simulate.tile_schedule`);

* ``protocol``: the ring as a transition system, explored over every interleaving as for sm_90a
  (:class:`verilayout.simulate.gemm_check.GemmSim`) with two processes, the TMA thread and the
  MMA thread (the barriers only these two use: the accumulator ring is ``acc-ring``); a
  ``tcgen05.commit`` retires the MMAs issued before it and then arrives on its mbarrier (the
  earliest the hardware arrives).

Not checked here: anything only a GPU run shows.

>>> IDESC_BITS["n_dim"], KIND["e4m3"]
((17, 6), 'f8f6f4')
"""
from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np

from verilayout.emit.tcgen05_manifest import Tcgen05Manifest
from verilayout.errors import LayoutError
from verilayout.frontends.ptx import parse_immediate, parse_ptx
from verilayout.frontends.shared_text import load_operand_layout
from verilayout.prove.wgmma import check_descriptor
from verilayout.simulate.gemm_check import (MAP_A_ADDR, MAP_B_ADDR, D_ADDR, BIAS_ADDR, SMEM_BASE,
                                            GemmSim, LANDING_ASSUMPTION, SimInputs, Step, tma_load, act_reference, bias_value,
                                            reduce_check, round_out, bias_loader,
                                            decode_out, out_tolerance, run_findings)
from verilayout.simulate.independent import KernelCheck, IndependentReport, compiled_checks
from verilayout.simulate.ptx_run import (TMEM_TAG, alloc_columns, init_count, mma_descriptors, mma_idesc,
                                         run_ctas, run_threads, stored_values)
from verilayout.simulate.tile_schedule import schedule_check
from verilayout.simulate.pair_ring import pair_ring_check
from verilayout.simulate.tmem_ring import acc_ring_check, tiles_d_store
from verilayout.simulate.tma_store import (TMA_STORE_ASSUMPTIONS, is_tma_store, staging_banks_check,
                                           store_order_check, tma_store_elements)

__all__ = ["check_tcgen05_source", "IDESC_BITS", "KIND", "TCGEN05_ASSUMPTIONS", "tmem_cell_value", "epilogue_misses",
           "mma_checks", "tmem_checks", "MAP_D_ADDR", "check_pair_source", "pair_split_check",
           "pair_cover_check", "pair_schedule_check", "PAIR_ASSUMPTIONS"]

#: Instruction descriptor fields (first bit, width): PTX ISA, "Instruction descriptor" for
#: .kind::f16 / .kind::tf32 / .kind::f8f6f4.
IDESC_BITS = {"sparse": (2, 1), "saturate": (3, 1), "d_type": (4, 2), "a_type": (7, 3),
              "b_type": (10, 3), "negate_a": (13, 1), "negate_b": (14, 1), "a_major": (15, 1),
              "b_major": (16, 1), "n_dim": (17, 6), "m_dim": (24, 5), "max_shift": (30, 2)}
#: ``.kind`` and the A/B type code per dtype (PTX ISA: kind::f16 F16 0 BF16 1; kind::tf32 2;
#: kind::f8f6f4 E4M3 0), D type F32 = 1.
KIND = {"f16": "f16", "bf16": "f16", "tf32": "tf32", "e4m3": "f8f6f4"}
_CODE = {"f16": 0, "bf16": 1, "tf32": 2, "e4m3": 0}
_BYTES = {"f16": 2, "bf16": 2, "e4m3": 1, "tf32": 4}
_K = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32}
TCGEN05_ASSUMPTIONS = (
    "one CTA (CTA 0) of 128 threads, one 128 x BN tile, K for stages + 2 K-tiles, then ragged "
    "edges (M = 88, N = BN - 5, K short by 16 bytes)",
    "tcgen05.alloc returns TMEM address 0; tcgen05.mma and the TMA are not executed (their "
    "operands are checked, the ring's waits succeed at once)",
    "the mbarrier ring explored as for sm_90a with two processes (the TMA thread, the MMA "
    "thread); a tcgen05.commit releases the stages its MMAs read and arrives at once (the "
    "earliest the hardware arrives); nothing is run on an sm_100 GPU", LANDING_ASSUMPTION,
    "split-K: CTAs 0 .. S-1 (tile 0, one K slice each) run one after another, K for max(stages + "
    "2, S) K-tiles; with a fused epilogue a tcgen05.ld reads the chosen f32 value "
    "tmem_cell_value(lane, column) and bias[col] is (col mod 5) - 2") + TMA_STORE_ASSUMPTIONS
#: The address of D's tensor map (kernel parameter 7) in a run.
MAP_D_ADDR = 0x72000000


def tmem_cell_value(lane, col):
    """The f32 value the checks put in TMEM cell (lane, column) for a fused epilogue:
    ``((3 col + 7 lane) mod 11) - 4``, integers in -4..6 (exact in every output type; negatives
    for ReLU), neighbouring columns and lanes always different.

    >>> [float(tmem_cell_value(0, c)) for c in range(4)], float(tmem_cell_value(1, 0))
    ([-4.0, -1.0, 2.0, 5.0], 3.0)
    """
    return ((3 * np.asarray(col, dtype=np.int64) + 7 * np.asarray(lane, dtype=np.int64)) % 11
            - 4).astype(np.float32)


def epilogue_misses(fused: tuple, lane, col, bits) -> tuple:
    """The fused epilogue's stores against its definition: ``fused`` = (out, bias?, activation);
    element i read TMEM cell ``(lane[i], col[i])`` and stored ``bits[i]``.
    Law: ``(x, want, have, bad)``: ``x = tmem_cell_value(lane, col) + bias(col)`` (float64),
    ``want = out(act(x))``, ``have`` the stored value decoded, ``bad`` the indices where they differ
    by more than one output ulp plus the f32 rounding of GELU's / SiLU's terms, ``2^-20 (1 + |x|)``
    (a NaN stored is a miss).

    >>> lane, col = np.array([0, 0]), np.array([0, 1])    # cells hold -4 and -1: relu 0 and 0
    >>> epilogue_misses(("f32", False, "relu"), lane, col, np.array([0, 0x3F800000], dtype=np.uint64))[3].tolist()
    [1]
    """
    out, bias, act = fused
    x = tmem_cell_value(lane, col).astype(np.float64) + (bias_value(col) if bias else 0.0)
    want = round_out(out, act_reference(act, x))
    have = decode_out(out, bits)
    tol = out_tolerance(out, want) + (2.0 ** -20 * (1 + np.abs(x)) if act in ("gelu", "silu") else 0)
    return x, want, have, np.nonzero(~(np.abs(have - want) <= tol))[0]


def _field(v: int, name: str) -> int:
    b, w = IDESC_BITS[name]
    return (v >> b) & ((1 << w) - 1)


def _spec(man: Tcgen05Manifest) -> tuple:
    return (man.dtype, man.bm, man.bn, man.bk, man.stages, man.a.layout, man.b.layout)


def check_tcgen05_source(man: Tcgen05Manifest, source: str) -> IndependentReport:
    """Compile the sm_100a ``kernel.cu`` and run the checks of the module docstring.
    Law: ``proved`` only where the check held for every thread and element it covers.

    >>> from dataclasses import replace
    >>> from verilayout.emit.tcgen05_gemm import build_tcgen05_manifest as build
    >>> check_tcgen05_source(replace(build("f16", tile=(128, 64, 64), stages=2), bm=64), "")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: manifest: dtype 'f16' / BM 64: not an sm_100a GEMM of this emitter
    """
    # long: compile, run, then each check of the module docstring in turn, each a few lines
    dt, bm, bn, bk, stages, la, lb = _spec(man)
    if dt in _BYTES and bm == 256 and man.cta_pair:
        return check_pair_source(man, source)
    if man.cluster is not None:
        raise LayoutError(f"manifest: cluster {man.cluster.m}x{man.cluster.n}: a multicast cluster's checks are "
                          "verilayout.simulate.mcast_check.check_sm100_source's")
    if dt not in _BYTES or bm != 128:
        raise LayoutError(f"manifest: dtype {dt!r} / BM {bm}: not an sm_100a GEMM of this emitter")
    checks, ptx = compiled_checks(source, "sm_100a")
    if ptx is None:
        return IndependentReport(tuple(checks), TCGEN05_ASSUMPTIONS)
    mod = parse_ptx(ptx)
    entry = next((f for f in mod.functions if "vl_gemm_kernel" in f), None)
    if entry is None:
        return IndependentReport(tuple(checks + [KernelCheck("run", "counterexample", "no vl_gemm_kernel")]),
                                 TCGEN05_ASSUMPTIONS)
    splits, epi = man.splits, man.epilogue.spec
    fused = epi if epi != ("f32", False, "none") and splits == 1 else None
    eb, k_tiles = _BYTES[dt], max(stages + 2, splits)
    nthreads = man.threads
    for M, N, K, label in ((bm, bn, k_tiles * bk, ""), (88, bn - 5, k_tiles * bk - 16 // eb, "r")):
        tail = f" [M={M}, N={N}, K={K}]" if label else ""
        cover: dict = {}
        for s in range(splits):                      # CTA s: K slice s of tile 0
            beyond: list = []
            run = run_threads(mod, entry, range(nthreads), ctaid=s, nctaid=splits,
                              param_values={0: MAP_A_ADDR, 1: MAP_B_ADDR, 2: D_ADDR, 3: M, 4: N,
                                            5: K, 6: BIAS_ADDR, 7: MAP_D_ADDR}, shared_base=SMEM_BASE,
                              load_value=bias_loader(N, beyond),
                              tmem_value=tmem_cell_value if fused else None)
            where = tail + (f" [CTA {s}]" if splits > 1 else "")
            if not beyond and fused and fused[1]:
                checks.append(KernelCheck("bias", "proved", f"the epilogue reads bias[col] only for col < "
                                    f"N = {N}{where}"))
            checks += run_findings(run, beyond, N, where, "bias")
            if not run.complete:
                continue
            checks += [KernelCheck(c.check, c.status, c.message + where, c.ptx_line, c.source)
                       for c in _checks(man, run, (dt, eb, bm, bn, bk, stages, la, lb), (M, N, K),
                                        (s, splits, fused, cover))]
        if splits > 1 and len(cover) == splits:   # every slice's run complete
            g = GemmSim(SimInputs(man=man.gemm, run=SimpleNamespace(threads=[]), dt=dt, eb=eb, bm=bm, bn=bn,
                                  bk=bk, stages=stages, cons=1, la=la, lb=lb, M=M, N=N, K=K,
                                  k_tiles=-(-K // bk), maps=None))   # only its slice cover (the sm_90a split-K check)
            g.splits, g.label = splits, tail
            g.split_cover_check(cover, {(0, 0)})
            checks += g.checks
    if splits > 1:
        checks.append(reduce_check(mod, splits, epi))
    checks += _persistent_checks(mod, entry, (bm, bn, bk), nthreads, fused, _d_map(man), splits)
    return IndependentReport(tuple(checks), TCGEN05_ASSUMPTIONS)


#: The several-tile run: a 2 x 2 tile grid, two K-tiles per tile, one CTA (four tiles through
#: the accumulator stages); the schedule: a 3 x 2 tile grid, every grid of 1 .. 7 CTAs.
PERSISTENT_TILES, SCHEDULE_TILES = (2, 2), (3, 2)
#: The schedule's tile grid with split-K (3 tiles x S K slices: every grid of 1 .. 3 S + 1 CTAs).
SCHEDULE_TILES_SPLIT = (3, 1)


def _persistent_checks(mod, entry: str, tile: tuple, nthreads: int, fused, d_map,
                       splits: int = 1) -> list[KernelCheck]:
    """Law: ``acc-ring`` and (no split-K: f32 D without a fused epilogue) the several-tile
    ``d-store`` on one CTA's run over PERSISTENT_TILES (two K-tiles per tile, or one per K slice),
    then ``schedule`` over SCHEDULE_TILES and every K slice; a run that does not complete is
    ``unknown``."""
    bm, bn, bk = tile
    (tm, tn) = PERSISTENT_TILES
    M, N, K = tm * bm - 40, tn * bn, (2 if splits == 1 else splits) * bk   # last tile row 40 short
    where = f" [{tm} x {tn} tiles, one CTA, M={M}, N={N}]"
    run = run_threads(mod, entry, range(nthreads), ctaid=0, nctaid=1,
                      param_values={0: MAP_A_ADDR, 1: MAP_B_ADDR, 2: D_ADDR, 3: M, 4: N, 5: K,
                                    6: BIAS_ADDR, 7: MAP_D_ADDR}, shared_base=SMEM_BASE,
                      max_steps=1000000)
    if not run.complete:
        return [KernelCheck("acc-ring", "unknown", f"the kernel could not be run on the PTX{where}: "
                            f"{run.reason}")]
    out = [acc_ring_check(run)]
    if fused is None and splits == 1:
        stores = list(tma_store_elements(run, "f32", *d_map, (M, N), MAP_D_ADDR)) if d_map else []
        out.append(tiles_d_store(run, (M, N), (bm, bn), MAP_A_ADDR, MAP_B_ADDR, D_ADDR, stores))
    if d_map and splits == 1:
        out.append(store_order_check(run, (fused or ("f32",))[0], *d_map, (M, N), MAP_D_ADDR))
    out = [KernelCheck(c.check, c.status, c.message + where, c.ptx_line, c.source) for c in out]
    out.append(schedule_check(mod, entry, tile, SCHEDULE_TILES if splits == 1 else SCHEDULE_TILES_SPLIT,
                              {0: MAP_A_ADDR, 1: MAP_B_ADDR, 2: D_ADDR, 6: BIAS_ADDR},
                              (MAP_A_ADDR, MAP_B_ADDR), shared_base=SMEM_BASE, splits=splits))
    return out


def _d_map(man: Tcgen05Manifest) -> tuple | None:
    """D's tensor map as the manifest declares it: ``(box, swizzle)``; None without TMA stores."""
    d = man.d_store
    return (d.box, d.swizzle) if d.kind == "tma" else None


def _processes(run) -> list | None:
    """Law: the ring's two processes, each its thread's events in program order as
    ``(event, values, threads, thread ids)``: the thread issuing the TMA loads (it also
    initialises the mbarriers) and the one issuing ``tcgen05.mma``; None without both."""
    th = np.asarray(run.threads)
    who = []
    for head in ("cp.async.bulk.tensor", "tcgen05.mma"):
        e = next((e for e in run.events if e.op.startswith(head) and not is_tma_store(e.op)), None)
        if e is None:
            return None
        who.append(int(th[e.lanes[0]]))
    # the K ring's barriers are the ones only these two threads use: the accumulator ring's
    # (shared with the epilogue warps) is explored on its own (``acc-ring``)
    others = {int(e.values["addr"][0]) for e in run.events
              if e.op.startswith(("mbarrier.try_wait", "mbarrier.arrive", "tcgen05.commit"))
              and e.values.get("addr") is not None and not set(th[e.lanes].tolist()) <= set(who)}
    out: list[list] = [[], []]
    for ev in run.events:
        if ev.op.startswith(("mbarrier.try_wait", "mbarrier.arrive", "tcgen05.commit")) and \
                ev.values.get("addr") is not None and int(ev.values["addr"][0]) in others:
            continue
        t = th[ev.lanes]
        for p, w in enumerate(who):
            idx = np.nonzero(t == w)[0]
            if len(idx):
                vals = {k: (None if v is None else v[..., idx]) for k, v in ev.values.items()}
                out[p].append(Step(ev, vals, len(idx), t[idx]))
    return out


def _checks(man: Tcgen05Manifest, run, spec: tuple, problem: tuple, part: tuple = (0, 1, None, None)) -> list[KernelCheck]:
    # long: the run's TMA trace, the ring, then every per-run check
    """Law: the checks of one CTA's run; ``part`` = (K slice s, splits S, the fused epilogue or
    None, the split-K cover to add this slice's K-tiles to)."""
    dt, eb, bm, bn, bk, stages, la, lb = spec
    M, N, K = problem
    s, splits, fused, cover = part
    k_tiles = -(-K // bk)
    g = GemmSim(SimInputs(man=man.gemm, run=run, dt=dt, eb=eb, bm=bm, bn=bn, bk=bk, stages=stages, cons=1,
                          la=la, lb=lb, M=M, N=N, K=K, k_tiles=k_tiles, maps=None))
    tmas, it = [], -1
    prod = [e for e in run.events if e.op.startswith("cp.async.bulk.tensor") and not is_tma_store(e.op)]
    waits = {}
    for e in run.events:               # the producer's iteration: its empty-barrier waits so far
        if prod and e.op.startswith("mbarrier.try_wait") and int(run.threads[e.lanes[0]]) == \
                int(run.threads[prod[0].lanes[0]]):
            it += 1
        if e.op.startswith("cp.async.bulk.tensor") and not is_tma_store(e.op):
            v = e.values
            tmas.append(tma_load(e, it))
        waits[e.seq] = it
    if splits > 1:                     # this CTA's slice: its K-tiles in order from its first
        a_k = [x.c0 for x in tmas if x.map == MAP_A_ADDR]
        g.k_first = min(a_k) // bk if a_k else 0
        g.k_tiles = len({x.it for x in tmas})
    g.tma_checks(tmas)
    g.eager_landing = True
    procs = _processes(run) if M == bm else None       # the ring: on the whole-tile problem
    if procs is not None:
        init = {int(v["addr"][0]): int(init_count(v)[0]) for ev, v, n, t in procs[0]
                if ev.op.startswith("mbarrier.init")}
        g.protocol_check(procs, init, tmas)
    out = list(g.checks)
    out += _mma_checks(run, tmas, dt, bn, bk, la, lb)
    out += _tmem_checks(run, bn)
    d_map = _d_map(man)
    out += _d_store(run, bm, bn, (M, N), (s, splits), fused, d_map)
    if d_map and any(is_tma_store(e.op) for e in run.events):
        out.append(store_order_check(run, (fused or ("f32",))[0], *d_map, (M, N), MAP_D_ADDR))
        out.append(staging_banks_check(run))
    if cover is not None:
        cover.setdefault(((0, 0), s), set()).add(_accumulated(run, tmas, bk, bk // _K[dt]))
    return out


def _accumulated(run, tmas: list, bk: int, per: int) -> tuple:
    """Law: the K-tiles (A's TMA coordinate / BK of each MMA's iteration) of the MMAs since the
    last one that overwrote the accumulator (enable-input-d 0): what the stored TMEM holds."""
    ktile = {x.it: x.c0 // bk for x in tmas if x.map == MAP_A_ADDR}
    mmas = [e for e in run.events if e.op.startswith("tcgen05.mma")]
    acc: list = []
    for n, e in enumerate(mmas):
        k = ktile.get(n // per, -1)
        acc = [k] if not _enable_input_d(e) else (acc if k in acc else acc + [k])
    return tuple(sorted(acc))


def mma_checks(run, tmas: list, dt: str, bn: int, bk: int, la: str, lb: str, group: int = 1) -> list[KernelCheck]:
    """Law: ``instruction`` and ``descriptor`` of the module docstring on one tile's run; ``group``
    2: ``tcgen05.mma.cta_group::2`` with M = 256 (each CTA's B stage holds ``bn / 2`` rows)."""
    return _mma_checks(run, tmas, dt, bn, bk, la, lb, group)


def _mma_checks(run, tmas: list, dt: str, bn: int, bk: int, la: str, lb: str, group: int = 1) -> list[KernelCheck]:
    # long: the instruction and descriptor checks walk the same tcgen05.mma events together
    want = f"tcgen05.mma.cta_group::{group}.kind::{KIND[dt]}"
    mmas = [e for e in run.events if e.op.startswith("tcgen05.mma")]
    if not mmas:
        return [KernelCheck("instruction", "counterexample", "the PTX issues no tcgen05.mma")]
    kbs = bk // _K[dt]
    stage_of: dict = {}
    for x in tmas:
        stage_of.setdefault((x.map, x.it), []).append(x.dst)
    out, cache = [], {}
    for n, e in enumerate(mmas):
        it, kb = divmod(n, kbs)
        v = e.values
        if e.op != want:
            return [KernelCheck("instruction", "counterexample", f"MMA {n}: {e.op}, expected {want}",
                          e.instr.line if e.instr else None)]
        idesc = mma_idesc(v)
        if idesc is None:
            return [KernelCheck("instruction", "unknown", f"MMA {n}: the instruction descriptor is "
                          "not a value the run knows")]
        d = int(idesc[0])
        got = {k: _field(d, k) for k in IDESC_BITS}
        need = {"sparse": 0, "saturate": 0, "d_type": 1, "a_type": _CODE[dt], "b_type": _CODE[dt],
                "negate_a": 0, "negate_b": 0, "a_major": 0, "b_major": 0, "n_dim": bn >> 3,
                "m_dim": (128 * group) >> 4, "max_shift": 0}
        diff = [f"{k} = {got[k]} (expected {need[k]})" for k in need if got[k] != need[k]]
        if diff:
            return [KernelCheck("instruction", "counterexample", f"MMA {n}: instruction descriptor "
                          f"{d:#010x}: {', '.join(diff)}")]
        acc = _enable_input_d(e)
        if acc is None or acc != (n > 0):
            return [KernelCheck("instruction", "counterexample", f"MMA {n} (K-tile {it}, K-block {kb}): "
                          f"enable-input-d is {acc}, expected {n > 0} (0 only at the first)")]
        for name, val, tag, text, rows in zip("AB", mma_descriptors(v), (MAP_A_ADDR, MAP_B_ADDR),
                                              (la, lb), (128, bn // group)):
            dsts = stage_of.get((tag, it))
            if not dsts or val is None:
                out.append(KernelCheck("descriptor", "counterexample", f"MMA {n}: no {name} stage filled "
                                 f"by TMA in iteration {it}, or the descriptor is unknown"))
                return out
            base = min(dsts) & 0x3FFFF
            k2 = (int(val[0]), base, kb, name)
            if k2 not in cache:
                cache[k2] = check_descriptor(int(val[0]), load_operand_layout(text, dtype=dt), dtype=dt, major="K", k_block=kb,
                                             base_address=base, mn=rows, arch="sm_100")
            if cache[k2].status != "proved":
                out.append(KernelCheck("descriptor", "counterexample", f"MMA {n} (K-tile {it}, K-block "
                                 f"{kb}): the {name} descriptor {int(val[0]):#x} does not read that "
                                 f"K-block of the stage at {base:#x}: {cache[k2].reason}"))
                return out
    out.append(KernelCheck("instruction", "proved", f"{len(mmas)} x {want}: instruction descriptor M {128 * group}, "
                     f"N {bn}, {dt} operands, f32 D, K-major; enable-input-d 0 only at the first"))
    out.append(KernelCheck("descriptor", "proved", f"all {2 * len(mmas)} sm_100 descriptors read their "
                     "K-block of the stage the same iteration's TMA filled"))
    return out


def _enable_input_d(e) -> bool | None:
    """The value of the enable-input-d predicate operand: the run records the predicate
    register's value as the last operand."""
    keys = sorted((k for k in e.values if k.startswith("a") and k[1:].isdigit()), key=lambda k: int(k[1:]))
    last = e.values.get(keys[-1]) if keys else None
    if last is None:
        text = e.instr.operands[-1].strip() if e.instr else ""
        imm = parse_immediate(text)
        return None if imm is None else bool(imm)
    return bool(int(last[0]))


def tmem_checks(run, bn: int) -> list[KernelCheck]:
    """Law: ``tmem`` of the module docstring on one CTA's run (one allocation, lane quarters,
    every accumulator column once per warp)."""
    return _tmem_checks(run, bn)


def _tmem_checks(run, bn: int) -> list[KernelCheck]:
    allocs = [e for e in run.events if e.op.startswith("tcgen05.alloc")]
    if len(allocs) != 1:
        return [KernelCheck("tmem", "counterexample", f"{len(allocs)} tcgen05.alloc instructions executed "
                      "(expected one, by one warp)")]
    cols = alloc_columns(allocs[0].values)
    ncol = int(cols[0]) if cols is not None else parse_immediate(allocs[0].instr.operands[1])
    if ncol is None or ncol < 32 or ncol > 512 or ncol & (ncol - 1) or ncol < bn:
        return [KernelCheck("tmem", "counterexample", f"tcgen05.alloc of {ncol} columns: not a power of "
                      f"two in 32..512 holding the {bn} accumulator columns")]
    seen: dict = {}
    for e in run.events:
        if not e.op.startswith("tcgen05.ld."):
            continue
        num = int(next(p[1:] for p in e.instr.parts if p.startswith("x")))
        for q, addr in zip(e.lanes.tolist(), e.values["addr"].tolist()):
            warp, lane_field, col = int(run.threads[q]) // 32, int(addr) >> 16, int(addr) & 0xFFFF
            if lane_field != 32 * (warp % 4):
                return [KernelCheck("tmem", "counterexample", f"warp {warp} loads TMEM lanes from "
                              f"{lane_field}: it may reach only {32 * (warp % 4)}..{32 * (warp % 4) + 31}",
                              e.instr.line if e.instr else None)]
            if int(run.threads[q]) % 32 == 0:
                for c in range(col, col + num):
                    seen.setdefault(warp, []).append(c)
    quads = sorted(w % 4 for w in seen)
    if quads != [0, 1, 2, 3]:
        return [KernelCheck("tmem", "counterexample", f"warps {sorted(seen)} load TMEM: their lane "
                      f"quarters (warp % 4) {quads} are not 0, 1, 2, 3 once each (rows of the "
                      "accumulator unread or read twice)")]
    for w in sorted(seen):
        cs = sorted(seen.get(w, []))
        if cs != list(range(bn)):
            extra = sorted(set(cs) - set(range(bn)))
            missed = sorted(set(range(bn)) - set(cs))
            twice = sorted({c for c in cs if cs.count(c) > 1})
            return [KernelCheck("tmem", "counterexample", f"warp {w} reads TMEM columns {cs[:1]}..{cs[-1:]}"
                          f": column(s) {missed[:3]} of the accumulator never read, {extra[:3]} "
                          f"beyond it, {twice[:3]} twice (a TMEM column offset off?)")]
    return [KernelCheck("tmem", "proved", f"tcgen05.alloc of {ncol} columns; warps {sorted(seen)} "
                  f"each load lanes 32 (w % 4)..+31, one warp per quarter, and every accumulator "
                  f"column 0..{bn - 1} exactly once")]


def _stores(run, ob: int):
    """Law: ``(event, element index in D, raw bits)`` per stored element of ``ob`` bytes (a wider
    register holds several, the lowest first); None for a store of a value the run does not know."""
    for e in run.events:
        if not e.op.startswith("st.global"):
            continue
        vals = stored_values(e.values)
        if not vals or any(v is None for v in vals):
            yield e, None, None
            return
        reg_bits = 16 if e.instr.parts[-1] in ("b16", "u16", "f16") else 32
        per = max(1, reg_bits // (8 * ob))
        base = (e.values["addr"].astype(np.int64) - D_ADDR) // ob
        for j, x in enumerate(vals):
            for k in range(per):
                yield e, base + j * per + k, x.astype(np.uint64) >> np.uint64(8 * ob * k)


def _d_store(run, bm: int, bn: int, mn: tuple, slot: tuple, fused, d_map=None) -> list[KernelCheck]:
    # long: one walk of every store, tags or values, into the element count
    """Law: every in-range element of tile 0 stored once, in workspace slot ``s`` (split-K) or D,
    each from the TMEM cell (lane = row, column = column) of the M=128 datapath: read off the tag
    (``fused`` None), or, with a fused epilogue, the stored value equals
    ``out(act(tmem_cell_value(row, col) + bias(col)))`` within one output ulp."""
    M, N = mn
    s, splits = slot
    out, bias, act = fused or ("f32", False, "none")
    ob = 4 if out == "f32" else 2
    got: dict = {}
    tma = tma_store_elements(run, out, *d_map, mn, MAP_D_ADDR) if d_map else ()
    for e, pos, bits in itertools.chain(_stores(run, ob), tma):
        if pos is None:
            return [KernelCheck("d-store", "unknown", "a store of a value the run does not know")]
        sl, rem = pos // (M * N), pos % (M * N)
        row, col = rem // N, rem % N
        if fused is None:
            bits = bits & 0xFFFFFFFF
            if not (bits & TMEM_TAG).all():
                return [KernelCheck("d-store", "counterexample", f"a store to element {int(pos[0])} of a "
                              "value not loaded from TMEM", e.instr.line if e.instr else None)]
            lane, tcol = (bits >> 16) & 0x7FFF, bits & 0xFFFF
        else:
            lane, tcol = row, col
        for q in range(len(pos)):
            where = (int(row[q]), int(col[q]))
            cell = (int(lane[q]), int(tcol[q]))
            if where != cell or cell[0] >= M or cell[1] >= N or int(sl[q]) != s:
                return [KernelCheck("d-store", "counterexample", f"TMEM cell (lane {cell[0]}, column "
                              f"{cell[1]}) is stored at D{where}{f' of slot {int(sl[q])}' if splits > 1 else ''}"
                              f"; the M=128 datapath puts it at D{cell}"
                              f"{f' of slot {s}' if splits > 1 else ''}"
                              f"{' (outside D)' if cell[0] >= M or cell[1] >= N else ''}",
                              e.instr.line if e.instr else None)]
            got[where] = got.get(where, 0) + 1
        miss = _epilogue_miss(e, fused, row, col, bits) if fused is not None else None
        if miss is not None:
            return [miss]
    want_n = min(M, bm) * min(N, bn)
    if len(got) != want_n or any(c != 1 for c in got.values()):
        return [KernelCheck("d-store", "counterexample", f"{len(got)} elements stored (some twice?), "
                      f"expected {want_n} once each")]
    res = [KernelCheck("d-store", "proved", f"all {want_n} elements of the tile inside D stored once"
                 f"{f' in workspace slot {s}' if splits > 1 else ''}, each from the TMEM cell "
                 "(lane = row, column = column) the M=128 datapath wrote; none outside")]
    if fused is not None:
        res.append(KernelCheck("epilogue", "proved", f"each of the {want_n} stored values is "
                         f"{out}({act}(acc{' + bias[col]' if bias else ''})) of its TMEM cell's "
                         "chosen value, within one output ulp"))
    return res


# ----- the CTA pair (tcgen05.mma.cta_group::2, cluster 2 x 1) -----------------------------------
#: The pair's runs: one 256 x BN tile (K for stages + 2 K-tiles) for the per-tile checks, and a
#: column of PAIR_TILES tiles (the last 40 rows short) walked by one pair for ``pair-ring``.
PAIR_TILES = 3
PAIR_ASSUMPTIONS = (
    "the CTA pair: both CTAs (%cluster_ctarank 0 and 1, %ctaid.x 0 and 1, %nctaid.x 2) run on the "
    "PTX one after the other; mapa of CTA r is the interpreter's window (ptx_run.CLUSTER_WINDOW); "
    "tcgen05.mma.cta_group::2 reads both CTAs' stages at the leader's descriptor addresses and "
    "writes lanes 0..127 of each CTA's TMEM with that CTA's 128 rows (PTX ISA 9.7.16, 'Data path "
    "layout organization', layout A); a TMA load of a tensor map moves rows x (swizzle span) bytes "
    "per box (the manifest's tile and swizzle); nothing is run on an sm_100 GPU",)


def _pair_runs(mod, entry: str, problem: tuple, fused=None) -> list:
    M, N, K = problem
    return [run_threads(mod, entry, range(192), ctaid=r, nctaid=2, cluster_rank=r, cluster_size=2,
                        param_values={0: MAP_A_ADDR, 1: MAP_B_ADDR, 2: D_ADDR, 3: M, 4: N, 5: K,
                                      6: BIAS_ADDR, 7: MAP_D_ADDR}, shared_base=SMEM_BASE,
                        load_value=bias_loader(N, []), tmem_value=tmem_cell_value if fused else None,
                        max_steps=2000000) for r in (0, 1)]


def _pair_tmas(run) -> list:
    """Law: the run's TMA loads as ``{it, dst, map, c0, c1}``, ``it`` the producer's waits so far - 1."""
    out, it = [], -1
    first = next((e for e in run.events if e.op.startswith("cp.async.bulk.tensor") and not is_tma_store(e.op)), None)
    me = None if first is None else int(run.threads[first.lanes[0]])
    for e in run.events:
        load = e.op.startswith("cp.async.bulk.tensor") and not is_tma_store(e.op)
        if e.op.startswith("mbarrier.try_wait") and me is not None and int(run.threads[e.lanes[0]]) == me:
            it += 1
        if load:
            v = e.values
            out.append(tma_load(e, it))
    return out


def pair_split_check(runs: list, bn: int) -> KernelCheck:
    """``pair-split``: every K iteration, CTA 1 loads into the same shared offsets as CTA 0 (the
    MMA's descriptors address both CTAs' stages alike), the same K, A rows 128 further and B rows
    ``bn / 2`` further (its halves of the 256 x ``bn`` tile); every tcgen05 instruction of both
    CTAs is ``.cta_group::2`` (PTX ISA 9.7.16: one cta_group per kernel) and only CTA 0 issues MMAs.

    >>> from verilayout.simulate.ptx_run import RunResult
    >>> pair_split_check([RunResult((), True, "", ())] * 2, 256).status
    'unknown'
    """
    t0, t1 = (_pair_tmas(r) for r in runs)
    if not t0 or len(t0) != len(t1):
        return KernelCheck("pair-split", "unknown" if not t0 else "counterexample",
                           f"CTA 0 issues {len(t0)} TMA loads, CTA 1 {len(t1)}")
    step = {MAP_A_ADDR: 128, MAP_B_ADDR: bn // 2}
    for a, b in zip(t0, t1):
        want = (a.it, a.dst, a.map, a.c0, a.c1 + step.get(a.map, 0))
        got = (b.it, b.dst, b.map, b.c0, b.c1)
        if got != want:
            return KernelCheck("pair-split", "counterexample", f"CTA 1's load (iteration, shared offset, map, "
                               f"K, row) = {got}, expected {want} (CTA 0's load {a.c0, a.c1} + its half)",
                               b.ev.instr.line if b.ev.instr else None)
    for cta, run in enumerate(runs):
        bad = [e for e in run.events if e.op.startswith("tcgen05.") and "cta_group::" in e.op
               and "cta_group::2" not in e.op]
        mma = [e for e in run.events if e.op.startswith("tcgen05.mma")]
        if bad or (cta == 1 and mma) or (cta == 0 and not mma):
            return KernelCheck("pair-split", "counterexample", f"CTA {cta}: {bad[0].op if bad else f'{len(mma)} MMAs'}"
                               " (expected cta_group::2 throughout, MMAs from CTA 0 only)")
    return KernelCheck("pair-split", "proved", f"{len(t1)} TMA loads of CTA 1 land at CTA 0's shared offsets "
                       f"with its halves (A rows + 128, B rows + {bn // 2}); tcgen05 cta_group::2 "
                       "throughout, MMAs from CTA 0 only")


def pair_cover_check(runs: list, tile: tuple, mn: tuple, d_map, fused=None) -> KernelCheck:
    """``pair-cover``: CTA r's epilogue stores exactly rows ``128 r .. 128 r + 127`` (inside M) of the
    pair's first tile, every column inside N once, each value from its own TMEM cell (lane = row
    - 128 r, column = column): f32 D, the cell's tag; a fused epilogue ``(out, bias, act)`` (runs
    whose tcgen05.ld read :func:`tmem_cell_value`), ``out(act(cell + bias[col]))`` within one
    output ulp; the two CTAs together store the tile once.

    >>> from verilayout.simulate.ptx_run import RunResult
    >>> pair_cover_check([RunResult((), True, "", ())] * 2, (256, 128), (256, 128), None).status
    'counterexample'
    """
    bm, bn = tile
    M, N = mn
    out = (fused or ("f32",))[0]
    for cta, run in enumerate(runs):
        got: dict = {}
        tma = tma_store_elements(run, out, *d_map, mn, MAP_D_ADDR) if d_map else ()
        for e, pos, bits in itertools.chain(_stores(run, 4 if out == "f32" else 2), tma):
            if pos is None:
                return KernelCheck("pair-cover", "unknown", f"CTA {cta} stores a value the run does not know")
            for p, b in zip(np.asarray(pos).tolist(), np.asarray(bits).tolist()):
                row, col = p // N, p % N
                if fused is not None:
                    bad = _pair_value_error(fused, cta, row, col, int(b))
                    if bad:
                        return KernelCheck("pair-cover", "counterexample", bad, e.instr.line if e.instr else None)
                    got[(row, col)] = got.get((row, col), 0) + 1
                    continue
                lane, tcol = (int(b) >> 16) & 0x7FFF, int(b) & 0xFFFF
                if not int(b) & TMEM_TAG or (lane, tcol) != (row - 128 * cta, col):
                    return KernelCheck("pair-cover", "counterexample", f"CTA {cta} stores D({row}, {col}) "
                                       f"from TMEM cell (lane {lane}, column {tcol}); its rows are "
                                       f"{128 * cta}..{128 * cta + 127}: expected cell ({row - 128 * cta}, {col})",
                                       e.instr.line if e.instr else None)
                got[(row, col)] = got.get((row, col), 0) + 1
        want = {(r, c) for r in range(128 * cta, min(M, 128 * cta + 128)) for c in range(min(N, bn))}
        if set(got) != want or any(v != 1 for v in got.values()):
            return KernelCheck("pair-cover", "counterexample", f"CTA {cta} stores {len(got)} elements, "
                               f"expected its {len(want)} (rows {128 * cta}..{128 * cta + 127}) once each; "
                               f"missing {sorted(want - set(got))[:2]}, others {sorted(set(got) - want)[:2]}")
    return KernelCheck("pair-cover", "proved", f"each CTA of the pair stores exactly its 128 rows of the "
                       f"{bm} x {bn} tile once, from its own TMEM lanes; together the tile once")


def _epilogue_miss(e, fused: tuple, row, col, bits) -> KernelCheck | None:
    """Law: the ``epilogue`` counterexample at the first element of store ``e`` (D(row, col), TMEM
    cell (row, col)) whose value is not the fused epilogue's (:func:`epilogue_misses`); None if none."""
    out, bias, act = fused
    x, want, have, bad = epilogue_misses(fused, row, col, bits)
    if not bad.size:
        return None
    q = int(bad[0])
    return KernelCheck("epilogue", "counterexample", f"D({int(row[q])}, {int(col[q])}) = {have[q]:g}, "
                       f"expected {out}({act}({x[q]:g})) = {want[q]:g} from TMEM cell (lane {int(row[q])}, "
                       f"column {int(col[q])}) holding {float(tmem_cell_value(row[q], col[q])):g}"
                       f"{f' + bias {bias_value(int(col[q])):g}' if bias else ''}",
                       e.instr.line if e.instr else None)


def _pair_value_error(fused: tuple, cta: int, row: int, col: int, bits: int) -> str | None:
    """The stored ``bits`` of D(row, col) against ``out(act(tmem_cell_value(row - 128 cta, col) +
    bias))``; None when within one output ulp."""
    out, _, act = fused
    x, want, have, bad = epilogue_misses(fused, np.array([row - 128 * cta]), np.array([col]),
                                         np.array([bits], dtype=np.uint64))
    if not bad.size:
        return None
    return (f"CTA {cta} stores D({row}, {col}) = {float(have[0]):g}, expected {out}({act}({x[0]:g})) = "
            f"{float(want[0]):g} from its TMEM cell (lane {row - 128 * cta}, column {col})")


def _pair_load_bytes(man: Tcgen05Manifest):
    eb = _BYTES[man.dtype]
    span = {"128B": 128, "64B": 64, "32B": 32}[man.swizzle]
    rows = {MAP_A_ADDR: 128, MAP_B_ADDR: man.bn // 2}
    return lambda m: rows.get(m, 0) * span + 0 * eb


def pair_schedule_check(mod, entry: str, tile: tuple, tiles: int = 3) -> KernelCheck:
    """``pair-schedule``: a column of ``tiles`` 256 x BN tiles, every grid of 1 .. tiles + 1 pairs:
    each CTA's producer (thread 0, its cluster rank) run on the PTX; each tile loaded by exactly one
    pair, its leader at the tile's rows and its peer at the other halves.

    >>> pair_schedule_check(None, "k", (256, 128, 64), tiles=0).status
    'unknown'
    """
    bm, bn, bk = tile
    if tiles < 1:
        return KernelCheck("pair-schedule", "unknown", "no tiles")
    for g in range(1, tiles + 2):
        owner: dict = {}
        runs = run_ctas(mod, entry, [0], range(2 * g), nctaid=2 * g, cluster_size=2,
                        param_values={0: MAP_A_ADDR, 1: MAP_B_ADDR, 2: D_ADDR, 3: tiles * bm, 4: bn,
                                      5: bk, 6: BIAS_ADDR}, shared_base=SMEM_BASE, max_steps=400000)
        for b, run in enumerate(runs):
            if not run.complete:
                return KernelCheck("pair-schedule", "unknown", f"CTA {b} of {2 * g} could not be run")
            rows = {(x.map, x.c1) for x in _pair_tmas(run) if x.c0 == 0}
            for m in sorted(r - 128 * (b % 2) for mp, r in rows if mp == MAP_A_ADDR):
                owner.setdefault(m // bm, []).append(b)
        for t in range(tiles):
            if sorted(owner.get(t, [])) not in ([2 * p, 2 * p + 1] for p in range(g)):
                return KernelCheck("pair-schedule", "counterexample", f"tile {t} loaded by CTAs "
                                   f"{sorted(owner.get(t, []))} at {g} pair(s) ({tiles} tiles): expected "
                                   "both CTAs of one pair")
        if set(owner) - set(range(tiles)):
            return KernelCheck("pair-schedule", "counterexample", f"tiles {sorted(set(owner) - set(range(tiles)))}"
                               f" outside the {tiles} tiles loaded at {g} pair(s)")
    return KernelCheck("pair-schedule", "proved", f"{tiles} tiles: each loaded by both CTAs of exactly one "
                       f"pair for every grid of 1 .. {tiles + 1} pairs")


def check_pair_source(man: Tcgen05Manifest, source: str) -> IndependentReport:
    """Compile a CTA-pair sm_100a ``kernel.cu`` and run the pair's checks: ``compile``, ``spills``,
    ``instruction``/``descriptor`` (M = 256, on CTA 0's MMAs), ``tma`` is not repeated here,
    ``tmem``, ``store-order`` and the staging banks per CTA, ``pair-split``, ``pair-cover``, ``pair-ring``
    (:mod:`verilayout.simulate.pair_ring`) and ``pair-schedule``.
    Law: ``proved`` only where the check held for every thread and element it covers.
    """
    # long: compile, two runs, then each check in turn
    dt, bm, bn, bk, stages, la, lb = _spec(man)
    checks, ptx = compiled_checks(source, "sm_100a")
    if ptx is None:
        return IndependentReport(tuple(checks), PAIR_ASSUMPTIONS)
    mod = parse_ptx(ptx)
    entry = next((f for f in mod.functions if "vl_gemm_kernel" in f), None)
    epi = man.epilogue.spec
    fused = epi if epi != ("f32", False, "none") else None
    runs = _pair_runs(mod, entry, (bm, bn, (stages + 2) * bk), fused) if entry else []
    if not runs or not all(r.complete for r in runs):
        why = "no vl_gemm_kernel" if not runs else next(r.reason for r in runs if not r.complete)
        return IndependentReport(tuple(checks + [KernelCheck("run", "unknown", why)]), PAIR_ASSUMPTIONS)
    checks += mma_checks(runs[0], _pair_tmas(runs[0]), dt, bn, bk, la, lb, group=2)
    checks += [KernelCheck(c.check, c.status, c.message + f" [CTA {r}]", c.ptx_line)
               for r, run in enumerate(runs) for c in tmem_checks(run, bn)]
    checks.append(pair_split_check(runs, bn))
    checks.append(pair_cover_check(runs, (bm, bn), (bm, bn), _d_map(man), fused))
    if _d_map(man):                                # the TMA-store epilogue of each CTA
        checks += [KernelCheck(c.check, c.status, c.message + f" [CTA {r}]", c.ptx_line)
                   for r, run in enumerate(runs)
                   for c in (store_order_check(run, epi[0], *_d_map(man), (bm, bn), MAP_D_ADDR),
                             staging_banks_check(run))]
    kt = stages // PAIR_TILES + 1
    long_runs = _pair_runs(mod, entry, (PAIR_TILES * bm - 40, bn, kt * bk))
    if not all(r.complete for r in long_runs):
        checks.append(KernelCheck("pair-ring", "unknown", "the pair's several-tile runs did not complete"))
    else:
        c = pair_ring_check(long_runs, _pair_load_bytes(man))
        checks.append(KernelCheck(c.check, c.status, c.message + f" [{PAIR_TILES} tiles x {kt} K-tiles, "
                                  "one pair]", c.ptx_line))
    checks.append(pair_schedule_check(mod, entry, (bm, bn, bk)))
    return IndependentReport(tuple(checks), PAIR_ASSUMPTIONS + TCGEN05_ASSUMPTIONS[3:4])
