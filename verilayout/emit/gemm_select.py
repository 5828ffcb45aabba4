"""Choose the whole Hopper GEMM configuration for a problem ``M x N x K``: tile, stages, the
rasterization (``GROUP_M``) of the persistent schedule and split-K, from a cost model that can be
printed (``emit gemm --problem M,N,K --explain``).

Every candidate is a configuration :func:`verilayout.emit.gemm_plan.build_gemm_manifest` accepts;
the chosen one is built with all of its obligations (the same proofs as an explicit ``--tile``).

The cost model (all times in SM clocks; the constants and where they come from are
:data:`H100`):

* **waves**: ``units = tiles x splits`` work units on 132 SMs; the persistent grid finishes after
  ``ceil(units / 132)`` unit times (each unit is the same work);
* **MMA time of a unit**: ``k_tiles_per_unit x stage`` where one stage costs
  ``max(C x t_c, t_c + O_C)``: ``t_c = 64 BN BK 2 / F`` is one consumer warpgroup's tensor time
  (``F`` dense FLOP per clock per SM of the dtype), ``C`` consumer warpgroups share the tensor
  cores, ``O_C`` is the per-stage latency a consumer cannot hide (mbarrier wait, ``wait_group``
  drain, release). ``O_C`` is **an inference fitted** to the 8192^3 bf16 rows of
  ``hwtests/results/h100-2026-11-26-gemm_sweep.txt`` (the 128x128 : 128x256 : 64x128 ratios), not
  a cited hardware figure;
* **memory**: a unit's TMA bytes ``(rows of A + rows of B in range) x K_unit x bytes`` at the SM's
  share of L2 bandwidth; the whole run at least ``DRAM bytes / HBM bandwidth``, the DRAM bytes
  being each wave's distinct A and B panels under the ``GROUP_M`` raster (which is how the raster
  is chosen) plus D, plus the split-K workspace written and read back;
* **pipeline depth**: the deepest ring that fits 227 KiB, at most ``MAX_STAGES`` (``stages`` is not a cost choice: one CTA
  per SM, so unused shared memory buys nothing); a ring shallower than the load latency stalls;
* **registers**: ``BN / 2`` f32 accumulators + 40 per consumer thread must fit ``setmaxnreg``'s
  232 (two consumers) or 255;
* **rule**: a 64-row tile (one consumer warpgroup) is considered only where ``M <= 64``: one
  consumer leaves the per-stage latency exposed (measured 36-47% of cuBLASLt at 8192^3 and
  4096^3 in the sweep), so it wins only where a 128-row tile would multiply zero rows;
* **ping-pong** (:func:`pingpong_candidates`, any M): 64-row tiles, two consumer warpgroups each
  owning whole tiles and taking turns on the tensor cores. A turn is one warpgroup's MMA of a
  tile, ``mma_pp = k_tiles x (t_c + O_1)``: the per-stage latency ``O_1`` of one issuing
  warpgroup is the fitted ``o_one``, **assumed** (not measured) to hold for a ping-pong turn,
  since the waiting consumer does not fill the issuing one's gaps. Each consumer's cycle is
  ``mma_pp + fill + epilogue`` (the cooperative unit's terms), the two cycles overlap except for
  the tensor cores, so ``n`` tiles on a CTA take ``max(n mma_pp + fill + epi, ceil(n / 2)
  (mma_pp + fill + epi))``: the epilogue and fill are hidden where they fit under the other
  consumer's MMA. Against a cooperative 128-row tile (``stage = max(2 t_c, t_c + O_2)``, its
  epilogue and fill exposed every unit) it pays where ``fill + epilogue`` is large against the MMA
  of a tile: short K. The epilogue term ``BM BN 4 / 64`` clocks is the cooperative model's
  (assumed, unfitted); no ping-pong kernel was measured.

>>> c = choose_gemm(8192, 8192, 8192, "bf16")
>>> c.tile, c.splits
('128x256x64', 1)
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

from verilayout.dtypes import bytes_of
from verilayout.emit.gemm_cluster import CLUSTER_SHAPES, SM100_CLUSTER_SHAPES
from verilayout.emit.gemm_plan import tile_coords
from verilayout.emit.gemm_plan import (GEMM_DTYPES, MAX_SMEM_BYTES, TURN_BYTES, build_gemm_manifest,
                                       require_tile, smem_bytes)
from verilayout.emit.cuda_gemm import emission_of
from verilayout.emit.cuda_wgmma import Emission
from verilayout.emit.tcgen05_gemm import Tcgen05Manifest, build_tcgen05_manifest, emission_of_tcgen05, max_stages
from verilayout.emit.cost_sm100 import feature_lines, sm100_terms
from verilayout.errors import LayoutError
from verilayout.hw.nvidia.wgmma import k_of_dtype

__all__ = ["H100", "Candidate", "Choice", "candidates", "cost", "choose_gemm", "explain", "configure",
           "choose_tcgen05", "emission_for",
           "tile_coords", "GROUPS", "MAX_SPLITS", "pingpong_candidates", "pingpong_terms"]


@dataclass(frozen=True)
class Machine:
    """The hardware figures of the cost model (``source`` says which are cited, which inferred)."""
    sms: int
    clock_ghz: float
    flop_per_clk: dict
    hbm_bytes_per_clk: float
    l2_bytes_per_clk: float
    o_one: float
    o_two: float
    load_latency: float
    launch_clk: float
    source: str
    misaligned: float = 1.0


#: Per-stage slowdown where a row of A and B (``K x bytes``) is 16-byte aligned, as TMA requires,
#: but not a multiple of 128 bytes (every 128-byte box row then straddles two L2 lines). Fitted:
#: the least-squares (in log) factor on the stage time over the three bf16 rows of
#: 8191x8193x4104 in hwtests/results/h100-2026-11-26-gemm_sweep.txt (one shape: whether the
#: straddled lines or the odd-N scalar epilogue cost it is not separated by the measurements).
MISALIGNED_FIT = 2.2

#: H100 SXM5. Cited: 132 SMs and the dense tensor FLOP per clock per SM (bf16/f16 4096, fp8
#: 8192, tf32 2048: the datasheet's 989.4 / 1978.9 / 494.7 TFLOP/s at the 1.83 GHz boost clock,
#: / 132 / 1.83e9), HBM3 3.35 TB/s (datasheet), 227 KiB shared memory per CTA (CUDA Programming
#: Guide, sm_90). Inferred from hwtests/results/h100-2026-11-26-gemm_sweep.txt, not cited: the
#: sustained clock under tensor load, 1.6 GHz (128x256 bf16 at 8192^3 ran 865 TFLOP/s = 4096
#: FLOP/clk/SM at 1.6 GHz), the per-stage latency a consumer leaves exposed, ``o_two`` 475 and
#: ``o_one`` 230 clocks (fitted to the 128x128x64 s6 and 64x128x32 s5 bf16 rows at 8192^3 given
#: that clock), L2 bandwidth 12 TB/s (at least the 10.1 TB/s that 865 TFLOP/s at 128x256 moves),
#: load latency 1400 clocks (at most what the fitted rows' rings hide: 4 stages x 358 clocks) and
#: 1 us per launch (guesses).
H100 = Machine(sms=132, clock_ghz=1.6,
               flop_per_clk={"bf16": 4096, "f16": 4096, "e4m3": 8192, "tf32": 2048},
               hbm_bytes_per_clk=3.35e12 / 1.6e9, l2_bytes_per_clk=12e12 / 1.6e9,
               o_one=230.0, o_two=475.0, load_latency=1400.0, launch_clk=1.0 * 1600,
               source="datasheet (SMs, FLOP/clk, HBM), sweep-fitted (clock, o_one, o_two, "
                      "misaligned), inferred (L2 bandwidth, load latency, launch)",
               misaligned=MISALIGNED_FIT)
#: Raster widths considered (tile rows visited together).
GROUPS = (8, 4, 16, 2, 1)
#: Largest split-K factor considered.
MAX_SPLITS = 4
_BN = (64, 128, 192, 256)
#: The N extents of a swap-AB tile (its BN covers the problem's small M: decode shapes).
_SWAP_BN = (16, 32, 48, 64)
#: Ping-pong is considered only where every CTA of the persistent grid gets at least this many
#: tiles: with one tile a CTA's second consumer idles and the kernel is the one-consumer 64-row
#: kernel of the rule below (measured 36-47% of cuBLASLt), with nothing to hide its epilogue under.
PINGPONG_MIN_TILES_PER_CTA = 2
#: Largest M for which swap-AB tiles are considered (wgmma's 64 rows would be mostly zero rows).
SWAP_MAX_M = 64


@dataclass(frozen=True)
class Candidate:
    """One configuration: tile ``bm x bn x bk``, ``stages``, raster ``group_m``, ``splits``."""
    dtype: str
    bm: int
    bn: int
    bk: int
    stages: int
    group_m: int = 8
    splits: int = 1
    cluster: tuple = (1, 1)
    #: swap-AB: the kernel computes D^T = B A^T (its BM rows over N, its BN columns over M)
    swap: bool = False
    #: ping-pong consumer warpgroups (a 64-row tile each, alternating) instead of cooperative
    pingpong: bool = False

    @property
    def schedule(self) -> str:
        """``"pingpong"`` or ``"cooperative"``.

        >>> Candidate("bf16", 64, 256, 64, 4, pingpong=True).schedule
        'pingpong'
        """
        return "pingpong" if self.pingpong else "cooperative"

    @property
    def tile(self) -> str:
        """``"BMxBNxBK"``.

        >>> Candidate("bf16", 128, 256, 64, 4).tile
        '128x256x64'
        """
        return f"{self.bm}x{self.bn}x{self.bk}"


@dataclass(frozen=True)
class Choice:
    """The chosen candidate, its predicted time, and every candidate considered with its cost
    terms (sorted best first) or the reason it was rejected."""
    problem: tuple
    dtype: str
    best: Candidate
    clocks: float
    ranked: tuple = ()
    rejected: tuple = ()
    notes: tuple = field(default=())

    @property
    def tile(self) -> str:
        """The chosen tile.

        >>> choose_gemm(16, 4096, 4096, "bf16").tile.startswith("64x")
        True
        """
        return self.best.tile

    @property
    def splits(self) -> int:
        """The chosen split-K factor (1: none).

        >>> choose_gemm(4096, 4096, 4096, "bf16").splits
        1
        """
        return self.best.splits


#: the deepest ring chosen: every configuration's mbarrier protocol is explored over every
#: interleaving before it is emitted, and that space grows fast with depth (6 stages: 23540
#: states, 8 stages: 348028, measured on the 128x64x64 bf16 ring); six stages already cover the
#: modelled load latency for the small tiles that fit more.
MAX_STAGES = 6
#: the deepest ring of a cluster candidate: the rings of both CTAs are explored together (4
#: stages: 122844 states on the 128x128x64 bf16 2x1 ring; the 128x64x64 ring at 6 stages: past
#: MAX_STATES, 400000)
CLUSTER_MAX_STAGES = 4


def _max_stages(dtype: str, bm: int, bn: int, bk: int, extra: int = 0) -> int:
    best = 0
    for s in range(2, MAX_STAGES + 1):
        if smem_bytes(dtype, bm, bn, bk, s) + extra + 1024 <= MAX_SMEM_BYTES:
            best = s
    return best


def candidates(dtype: str, M: int) -> tuple[list[Candidate], list[tuple[str, str]]]:
    """Tiles x BK (64 and 128 bytes of K) at the deepest ring that fits, and why others were
    rejected (shared memory, registers, the one-consumer rule).

    >>> ok, bad = candidates("bf16", 8192)
    >>> any(c.tile == "128x256x64" and c.stages == 4 for c in ok), len(ok) > 4
    (True, True)
    """
    eb = bytes_of(dtype)
    ok, bad = [], []
    for bm in (64, 128):
        for bn in _BN:
            for kbytes in (128, 64):
                bk = kbytes // eb
                tile = f"{bm}x{bn}x{bk}"
                if bk % k_of_dtype(dtype):
                    continue
                if bm == 64 and M > 64:
                    bad.append((tile, f"one consumer warpgroup: considered only for M <= 64 (M={M})"))
                    continue
                regs, cap = bn // 2 + 40, (232 if bm == 128 else 255)
                if regs > cap:
                    bad.append((tile, f"{regs} registers per consumer thread > {cap}"))
                    continue
                if (bm * bk * eb) % 1024 or (bn * bk * eb) % 1024:
                    bad.append((tile, "a stage is not a multiple of the 1024-byte swizzle repeat"))
                    continue
                st = _max_stages(dtype, bm, bn, bk)
                if st < 2:
                    bad.append((tile, "two stages do not fit 227 KiB"))
                    continue
                ok.append(Candidate(dtype, bm, bn, bk, st))
    return ok, bad


def pingpong_candidates(dtype: str) -> list[Candidate]:
    """Ping-pong tiles (64 x BN x 64 or 128 bytes of K) at the deepest ring that fits beside the
    turn mbarriers; any M (each consumer owns whole tiles: no zero-row rule).

    >>> [c.tile for c in pingpong_candidates("bf16")][:2], pingpong_candidates("bf16")[0].pingpong
    (['64x64x64', '64x64x32'], True)
    """
    eb, out = bytes_of(dtype), []
    for bn in _BN:
        for kbytes in (128, 64):
            bk = kbytes // eb
            if bk % k_of_dtype(dtype) or (64 * bk * eb) % 1024 or (bn * bk * eb) % 1024:
                continue
            st = _max_stages(dtype, 64, bn, bk, TURN_BYTES)
            if st >= 2:
                out.append(Candidate(dtype, 64, bn, bk, st, pingpong=True))
    return out


def swap_candidates(dtype: str, M: int) -> list[Candidate]:
    """Swap-AB tiles for a small M (at most :data:`SWAP_MAX_M`): the kernel's BM (64 or 128
    rows of the 64-row wgmma) runs over N and its BN (16 to 64, the wgmma N) over M, at the
    deepest ring that fits; none for a larger M.

    >>> [c.tile for c in swap_candidates("bf16", 16)][:2], swap_candidates("bf16", 4096)
    (['64x16x64', '64x16x32'], [])
    """
    if M > SWAP_MAX_M:
        return []
    eb, out = bytes_of(dtype), []
    for bm in (64, 128):
        for bn in _SWAP_BN:
            for kbytes in (128, 64):
                bk = kbytes // eb
                if bk % k_of_dtype(dtype) or (bm * bk * eb) % 1024 or (bn * bk * eb) % 1024:
                    continue
                st = _max_stages(dtype, bm, bn, bk)
                if st >= 2:
                    out.append(Candidate(dtype, bm, bn, bk, st, swap=True))
    return out


@functools.lru_cache(maxsize=4096)   # candidates differing in BK, stages or dtype share a wave
def _wave_extent(bm: int, bn: int, splits: int, group_m: int, M: int, N: int, w0: int, end: int) -> tuple[int, int]:
    """Law: ``(rows, cols)``: the A rows and B columns (each panel counted once per K slice) that
    units ``w0 .. end - 1`` of the raster load (unit ``u``: tile ``u // splits``, slice
    ``u % splits``; units past the tile grid, a cluster's padding, load nothing).

    >>> _wave_extent(128, 128, 1, 8, 256, 256, 0, 4)
    (256, 256)
    """
    tm_n, tn_n = -(-M // bm), -(-N // bn)
    us = range(w0, min(end, tm_n * tn_n * splits))
    co = [(tile_coords(u // splits, tm_n, tn_n, group_m), u % splits) for u in us]
    rows = sum(min(bm, M - tm * bm) for tm, s in {(a, s) for (a, _), s in co})
    cols = sum(min(bn, N - tn * bn) for tn, s in {(b, s) for (_, b), s in co})
    return rows, cols


def _dram_bytes(c: Candidate, M: int, N: int, K: int, units: int, sms: int) -> float:
    """Distinct A and B panel bytes of every wave under the raster (unit ``u`` is tile
    ``u // splits``, K slice ``u % splits``; each wave loads each (panel, slice) once), plus D and
    the split-K workspace (written, then read back by the reduction)."""
    eb = bytes_of(c.dtype)
    total, k_slice = 0.0, K / c.splits
    for w0 in range(0, min(units, sms), sms):   # the first wave; every wave like it
        rows, cols = _wave_extent(c.bm, c.bn, c.splits, c.group_m, M, N, w0, min(units, w0 + sms))
        total += (rows + cols) * k_slice * eb * units / min(units, sms)
    work = 2 * c.splits * M * N * 4 if c.splits > 1 else 0
    return total + M * N * 4 + work


def cost(c: Candidate, M: int, N: int, K: int, hw: Machine = H100) -> dict:
    """The cost terms of one candidate (clocks); ``total`` is what the choice minimizes.

    Law: ``total = max(waves x unit, dram) + launches``, ``unit = max(mma, load) + fill + epilogue``.

    >>> t = cost(Candidate("bf16", 128, 256, 64, 4), 8192, 8192, 8192)
    >>> t["waves"], round(t["util"], 2)
    (16, 1.0)
    """
    if c.swap:                      # the kernel's product is D^T: N x M
        M, N = N, M
    eb, F = bytes_of(c.dtype), hw.flop_per_clk[c.dtype]
    cm, cn = c.cluster
    tiles = -(-M // c.bm) * -(-N // c.bn)
    # a cluster takes cm x cn tiles at once (tiles past M or N padded in) on cm cn SMs
    units = -(-(-(-M // c.bm)) // cm) * -(-(-(-N // c.bn)) // cn) * cm * cn * c.splits
    slots = hw.sms // (cm * cn) * (cm * cn)
    active = min(units, slots)
    waves = -(-units // slots)
    k_tiles = -(-K // c.bk)
    ku = -(-k_tiles // c.splits)
    cons = c.bm // 64
    t_c = 64 * c.bn * c.bk * 2 / F
    o = hw.o_two if cons == 2 else hw.o_one
    stage = max(cons * t_c, t_c + o) * (1.0 if (K * eb) % 128 == 0 else hw.misaligned)
    if c.pingpong:                  # a turn: one warpgroup issues, its per-stage latency exposed
        stage = (t_c + hw.o_one) * (1.0 if (K * eb) % 128 == 0 else hw.misaligned)
    depth = min(1.0, (c.stages - 1) * stage / hw.load_latency)
    mma = ku * stage / depth
    # L2 bytes one CTA loads per stage: a multicast operand is loaded once per cluster group
    stage_bytes = (min(c.bm, M) / cn + min(c.bn, N) / cm) * c.bk * eb
    load = ku * stage_bytes / (hw.l2_bytes_per_clk / active)
    fill = hw.load_latency
    out_bytes = c.bm * c.bn * 4
    epi = out_bytes / 64.0
    unit = max(mma, load) + fill + epi
    pp = pingpong_terms(max(mma, load), fill, epi, waves) if c.pingpong else {}
    if pp:                          # the two consumers' cycles overlap but for the tensor cores
        unit = pp["cta"] / waves
    dram = _dram_bytes(c, M, N, K, units, hw.sms) / hw.hbm_bytes_per_clk
    launches = hw.launch_clk * (2 if c.splits > 1 else 1)
    reduce = (2 * c.splits * M * N * 4 + M * N * 4) / hw.hbm_bytes_per_clk if c.splits > 1 else 0
    total = max(waves * unit, dram) + reduce + launches
    return {"swap": c.swap, "tiles": tiles, "units": units, "waves": waves, "wave_fill": units / (waves * hw.sms),
            "cluster": f"{cm}x{cn}", "l2_bytes_per_stage": stage_bytes,
            "k_tiles_per_unit": ku, "stage": stage, "util": cons * t_c / stage, "depth": depth,
            "mma": mma, "load": load, "unit": unit, "dram": dram, "reduce": reduce,
            "total": total, "bytes_per_flop": (c.bm + c.bn) * eb / (2 * c.bm * c.bn),
            "fill": fill, "epilogue": epi, **pp}


def pingpong_terms(mma: float, fill: float, epi: float, n: int) -> dict:
    """Law: ``n`` tiles of one CTA under ping-pong (tile ``k`` is consumer ``k % 2``'s; the
    tensor cores run the MMA turns one at a time, in tile order; a consumer's next turn starts
    after its fill and epilogue) take ``cta = max(n mma + fill + epi, ceil(n / 2) c, mma +
    floor(n / 2) c)`` clocks, ``c = mma + fill + epi``: the tensor cores' bound (every MMA, then
    the last tile's fill and epilogue), consumer 0's ``ceil(n / 2)`` cycles in a row, and
    consumer 1's, which start after consumer 0's first MMA. ``hidden``: the clocks of fill and
    epilogue per tile that run under the other consumer's MMA.

    >>> pingpong_terms(1000.0, 300.0, 200.0, 4)["cta"], pingpong_terms(1000.0, 300.0, 200.0, 1)["cta"]
    (4500.0, 1500.0)
    >>> pingpong_terms(100.0, 300.0, 200.0, 4)["cta"]
    1300.0
    """
    cycle = mma + fill + epi
    cta = max(n * mma + fill + epi, -(-n // 2) * cycle, mma + n // 2 * cycle)
    exposed = (cta - n * mma) / n
    return {"schedule": "pingpong", "cta": cta, "turn_mma": mma,
            "hidden": max(0.0, fill + epi - exposed)}


def _variants(c: Candidate, M: int, N: int, K: int, hw: Machine) -> list[Candidate]:
    tiles = -(-M // c.bm) * -(-N // c.bn)
    k_tiles = -(-K // c.bk)
    splits = [s for s in range(1, MAX_SPLITS + 1)
              if s == 1 or (tiles * s <= hw.sms and k_tiles >= 2 * s)]
    groups = [g for g in GROUPS if g == 8 or g <= -(-M // c.bm)]
    if c.pingpong:                  # one CTA, whole K per tile; both consumers busy on every CTA
        if tiles < PINGPONG_MIN_TILES_PER_CTA * hw.sms:
            return []
        return [Candidate(c.dtype, c.bm, c.bn, c.bk, c.stages, g, pingpong=True) for g in groups]
    if c.swap:                      # the kernel's problem is N x M; no clusters
        tiles = -(-N // c.bm) * -(-M // c.bn)
        splits = [s for s in range(1, MAX_SPLITS + 1)
                  if s == 1 or (tiles * s <= hw.sms and k_tiles >= 2 * s)]
        return [Candidate(c.dtype, c.bm, c.bn, c.bk, c.stages, 8, s, swap=True) for s in splits]
    out = [Candidate(c.dtype, c.bm, c.bn, c.bk, c.stages, g, s) for s in splits for g in groups]
    # clusters (TMA multicast) without split-K, where the grid has two tiles along the pair, at
    # a ring the cluster's protocol exploration completes
    st = min(c.stages, CLUSTER_MAX_STAGES)
    out += [Candidate(c.dtype, c.bm, c.bn, c.bk, st, g, 1, cl) for cl in CLUSTER_SHAPES[1:]
            for g in groups if -(-M // c.bm) >= 2 * cl[0] and -(-N // c.bn) >= 2 * cl[1]]
    return out


def _issued(c: Candidate, M: int, N: int, K: int) -> int:
    """Law: the MMA multiply-adds the kernel issues, padded rows and columns of its tiles
    included: ``ceil(M' / BM) BM x ceil(N' / BN) BN x K`` for its product ``M' x N'`` (``N x M``
    with swap-AB).

    >>> _issued(Candidate("bf16", 64, 64, 64, 4), 16, 4096, 64), _issued(Candidate("bf16", 64, 16, 64, 4, swap=True), 16, 4096, 64)
    (16777216, 4194304)
    """
    m, n = (N, M) if c.swap else (M, N)
    return -(-m // c.bm) * c.bm * -(-n // c.bn) * c.bn * K


def choose_gemm(M: int, N: int, K: int, dtype: str, *, hw: Machine = H100,
                allow_split: bool = True) -> Choice:
    """The candidate of least modelled time (to the clock; ties: fewer splits, no cluster, for
    M <= 64 fewer MMA multiply-adds issued (tiles' zero rows and columns included: where the model
    sees two kernels memory-bound alike, the one wasting less of wgmma's 64 rows), no swap, fewer
    DRAM bytes (the raster), the earlier raster of :data:`GROUPS`, larger tile), with every
    candidate considered, swap-AB ones (:func:`swap_candidates`) included for M <= 64.

    Law: ``best`` minimizes :func:`cost` ``["total"]`` over :func:`candidates` x rasters x splits.

    >>> choose_gemm(8192, 8192, 8192, "e4m3").tile
    '128x256x128'
    """
    if dtype not in GEMM_DTYPES:
        raise LayoutError(f"--dtype {dtype!r}: emit gemm writes {', '.join(GEMM_DTYPES)}")
    if (K * bytes_of(dtype)) % 16:
        raise LayoutError(f"--problem {M},{N},{K}: K * {bytes_of(dtype)} bytes is not a multiple "
                          "of 16 (the TMA row stride)")
    base, rejected = candidates(dtype, M)
    base = base + swap_candidates(dtype, M) + pingpong_candidates(dtype)
    scored = []
    for c in base:
        if c.pingpong and not _variants(c, M, N, K, hw):
            rejected.append((f"ping-pong {c.tile}", f"fewer than {PINGPONG_MIN_TILES_PER_CTA} tiles "
                             f"per CTA ({-(-M // c.bm) * -(-N // c.bn)} tiles on {hw.sms} SMs): a "
                             "CTA's second consumer would idle (the one-consumer kernel)"))
            continue
        for v in (_variants(c, M, N, K, hw) if allow_split else
                  [Candidate(c.dtype, c.bm, c.bn, c.bk, c.stages, g, swap=c.swap,
                             pingpong=c.pingpong) for g in GROUPS]):
            t = cost(v, M, N, K, hw)
            scored.append((round(t["total"]), v.splits, v.cluster[0] * v.cluster[1],
                           _issued(v, M, N, K) if M <= SWAP_MAX_M else 0, v.swap, v.pingpong,
                           round(t["dram"]), GROUPS.index(v.group_m), -v.bm * v.bn, v, t))
    scored.sort(key=lambda x: x[:9])
    best = scored[0]
    return Choice((M, N, K), dtype, best[9], best[10]["total"], tuple((s[9], s[10]) for s in scored),
                  tuple(rejected))


#: sm_100a (B200) figures of the tile model: 148 SMs, dense FLOP per clock per SM bf16/f16 8192,
#: fp8 16384, tf32 4096 (the B200 datasheet's 2.25 / 4.5 / 1.1 PFLOP/s dense at ~1.85 GHz, /148,
#: rounded to powers of two). An inference: nothing was measured on a Blackwell GPU.
B200_SMS = 148
B200_FLOP_PER_CLK = {"bf16": 8192, "f16": 8192, "e4m3": 16384, "tf32": 4096}
#: B200 HBM3e bytes per clock (8 TB/s at ~1.85 GHz) and one kernel launch in clocks (1 us), for
#: the split-K workspace and reduction. Inferences from the datasheet, unmeasured.
B200_HBM_BYTES_PER_CLK = 8e12 / 1.85e9
B200_LAUNCH_CLK = 1850.0


def choose_tcgen05(M: int, N: int, K: int, dtype: str) -> Choice:
    """The sm_100a tile (128 x BN x 128 bytes, BN 64 / 128 / 256, the deepest ring that fits) and
    split-K factor S (1..MAX_SPLITS, no empty slice) of least modelled time: the persistent
    kernel's terms of :func:`verilayout.emit.cost_sm100.sm100_terms` (MMA or shared-memory
    operand reads, overlapped epilogue, compulsory DRAM traffic, split-K reduction and launch).
    Ties: fewer splits, larger BN. Unmeasured: no sm_100 GPU was available.

    >>> choose_tcgen05(8192, 8192, 8192, "bf16").tile, choose_tcgen05(128, 512, 4096, "bf16").tile
    ('256x256x64', '128x64x64')
    >>> choose_tcgen05(16, 4096, 4096, "bf16").splits > 1
    True
    """
    if (K * bytes_of(dtype)) % 16:
        raise LayoutError(f"--problem {M},{N},{K}: K * {bytes_of(dtype)} bytes is not a multiple "
                          "of 16 (the TMA row stride)")
    eb, scored = bytes_of(dtype), []
    for bn in (256, 128, 64):
        bk = 128 // eb
        k_tiles = -(-K // bk)
        for sp in range(1, min(MAX_SPLITS, k_tiles) + 1):
            c = Candidate(dtype, 128, bn, bk, max_stages(dtype, bn, bk), 8, sp)
            t = sm100_terms(M, N, K, dtype, bn, bk, sp)   # emit/cost_sm100: persistent, memory term
            scored.append((round(t["total"]), sp, 1, -bn, c, t))
    scored += _pair_scored(M, N, K, dtype) + _cluster_scored(M, N, K, dtype)
    scored.sort(key=lambda x: x[:4])
    scored = [(x[0], x[3], x[4], x[5]) for x in scored]
    return Choice((M, N, K), dtype, scored[0][2], scored[0][0], tuple((x[2], x[3]) for x in scored),
                  (), ("sm_100a: persistent-kernel model with a memory term (emit/cost_sm100), unmeasured",))


#: The deepest ring of a CTA-pair candidate: both CTAs' producers, the MMA thread and eight
#: epilogue warps are explored together (simulate/pair_ring: 191564 states at 4 stages on the
#: 256x128x64 bf16 pair, under its 400000 bound).
PAIR_MAX_STAGES = 4


def _pair_scored(M: int, N: int, K: int, dtype: str) -> list[tuple]:
    """The CTA-pair candidates (256 x BN, BN 256 / 128, no split-K) scored as in
    :func:`choose_tcgen05`, ranked after a one-CTA tile of equal modelled time."""
    out, bk = [], 128 // bytes_of(dtype)
    for bn in (256, 128):
        st = min(PAIR_MAX_STAGES, max_stages(dtype, bn, bk, 2))
        t = sm100_terms(M, N, K, dtype, bn, bk, 1, ctas=2, stages=st)
        out.append((round(t["total"]), 1, 2, -bn, Candidate(dtype, 256, bn, bk, st, 8, 1), t))
    return out


#: The deepest ring of a multicast-cluster candidate, by cluster size: every CTA's producer and MMA
#: thread are explored together (simulate/mcast_ring); with 4 CTAs the search ends within its bound
#: only for 2 stages (3 K iterations: 63716 states on the 2x2 128x128x64 bf16 cluster, landings
#: eager; 3 stages passed 3 million states), with 2 CTAs at every depth that fits.
SM100_CLUSTER_MAX_STAGES = {2: 8, 4: 2}


def _cluster_scored(M: int, N: int, K: int, dtype: str) -> list[tuple]:
    """The multicast-cluster candidates (one CTA per 128 x BN tile, no split-K, every shape of
    :data:`~verilayout.emit.gemm_cluster.SM100_CLUSTER_SHAPES` but 1x1) scored as in
    :func:`choose_tcgen05`, ranked after a configuration of fewer CTAs and equal modelled time."""
    out, bk = [], 128 // bytes_of(dtype)
    for bn in (256, 128, 64):
        for shape in SM100_CLUSTER_SHAPES[1:]:
            st = min(max_stages(dtype, bn, bk), SM100_CLUSTER_MAX_STAGES[shape[0] * shape[1]])
            t = sm100_terms(M, N, K, dtype, bn, bk, 1, stages=st, cluster=shape)
            out.append((round(t["total"]), 1, 2 + shape[0] * shape[1], -bn,
                        Candidate(dtype, 128, bn, bk, st, 8, 1, cluster=shape), t))
    return out


def configure(dtype: str, choice: Choice | None = None, *, tile: tuple[int, int, int] | None = None,
              stages: int | None = None, group_m: int | None = None, splits: int | None = None,
              arch: str = "sm_90a", out: str = "f32", bias: bool = False,
              activation: str = "none", cluster: tuple[int, int] | None = None,
              swap_ab: bool | None = None, schedule: str | None = None) -> dict | Tcgen05Manifest:
    """The manifest (every obligation proved) of ``choice`` with the given overrides (sm_100a: the
    typed :class:`Tcgen05Manifest`, sm_90a: the JSON object); without a
    choice, the fixed defaults (``128x256x(128 bytes)``, 4 stages, GROUP_M 8, no split-K). With a
    ``tile`` override and no ``stages``, the deepest ring of that tile that fits. A ``schedule``
    other than the choice's (and no ``tile``) takes the best-ranked candidate of that schedule.

    >>> m = configure("f16", choose_gemm(4096, 4096, 4096, "f16"))
    >>> m["bn"], sorted({o["status"] for o in m["obligations"]})
    (256, ['proved'])
    """
    if arch == "sm_100a":
        if swap_ab:
            raise LayoutError("--swap-ab: sm_100a kernels are written without swap-AB for now")
        if schedule not in (None, "cooperative"):
            raise LayoutError("--schedule: sm_100a kernels have their own (MMA warp and epilogue "
                              "warps); ping-pong is an sm_90a schedule")
        return _configure_sm100(dtype, choice, tile, stages, group_m, splits, (out, bias, activation), cluster)
    if choice is None:
        return build_gemm_manifest(dtype, tile=tile, stages=4 if stages is None else stages,
                                   arch=arch, group_m=8 if group_m is None else group_m,
                                   splits=1 if splits is None else splits, out=out, bias=bias,
                                   activation=activation, cluster=cluster or (1, 1),
                                   swap_ab=bool(swap_ab), schedule=schedule or "cooperative")
    b = _of_schedule(choice, schedule) if tile is None else choice.best
    t = tile or (b.bm, b.bn, b.bk)
    if stages is None:
        stages = b.stages
        if tile is not None:
            stages = max(2, _max_stages(dtype, *require_tile(tile),
                                        TURN_BYTES if schedule == "pingpong" else 0))
    return build_gemm_manifest(dtype, tile=t, stages=stages, arch=arch,
                               group_m=b.group_m if group_m is None else group_m,
                               splits=b.splits if splits is None else splits, out=out, bias=bias,
                               activation=activation,
                               cluster=b.cluster if cluster is None else cluster,
                               swap_ab=b.swap if swap_ab is None else swap_ab,
                               schedule=b.schedule if schedule is None else schedule)


def _of_schedule(choice: Choice, schedule: str | None) -> Candidate:
    """Law: the choice's best candidate, or where ``schedule`` names the other schedule, the
    best-ranked candidate of that schedule (a ``LayoutError`` if none was considered)."""
    if schedule is None or schedule == choice.best.schedule:
        return choice.best
    c = next((c for c, _t in choice.ranked if c.schedule == schedule), None)
    if c is None:
        raise LayoutError(f"--schedule {schedule}: no {schedule} configuration was considered "
                          "for this problem")
    return c


def _line(c: Candidate, t: dict, hw: Machine, flop: float) -> str:
    us = t["total"] / (hw.clock_ghz * 1e3)
    return (f"{('swapAB ' if c.swap else '') + ('pp ' if c.pingpong else '') + c.tile:>11} s{c.stages} g{c.group_m:<2} k{c.splits} c{t.get('cluster', '1x1')}: {us:8.1f} us "
            f"({flop / (us * 1e-6) / 1e12:6.1f} TFLOP/s)  {t['units']:5d} units = {t['waves']} "
            f"wave(s) x {t['unit']:8.0f} clk ({t['wave_fill'] * 100:5.1f}% fill), MMA util "
            f"{t['util'] * 100:5.1f}%, {t['bytes_per_flop'] * 1000:.2f} B/kFLOP, L2 "
            f"{t.get('l2_bytes_per_stage', 0) / 1024:.0f} KiB/stage/CTA, DRAM "
            f"{t['dram']:8.0f} clk")


def explain(choice: Choice, top: int = 12, hw: Machine = H100) -> str:
    """Why the chosen configuration beats the others considered: the cost terms of the best
    ``top`` (one line per tile at its best raster and split), then the rejected tiles.

    >>> print(explain(choose_gemm(2048, 2048, 2048, "bf16")).splitlines()[0][:22])
    problem 2048x2048x2048
    """
    M, N, K = choice.problem
    flop = 2.0 * M * N * K
    out = [f"problem {M}x{N}x{K} {choice.dtype}: chose {'swap-AB ' if choice.best.swap else ''}"
           f"{'ping-pong ' if choice.best.pingpong else ''}"
           f"{choice.best.tile}, {choice.best.stages} "
           f"stages, GROUP_M {choice.best.group_m}, split-K {choice.best.splits}, cluster "
           f"{choice.ranked[0][1].get('cluster', f'{choice.best.cluster[0]}x{choice.best.cluster[1]}')} "
           f"(model: {choice.notes[0] if choice.notes else hw.source})",
           "cost = max(waves x (max(MMA, L2 load) + fill + epilogue), DRAM) + reduction + launches;"
           " one line per tile at its best raster and split, best first:"]
    seen = set()
    for c, t in choice.ranked:
        if (c.tile, c.swap, c.pingpong) in seen:
            continue
        seen.add((c.tile, c.swap, c.pingpong))
        mark = "*" if c == choice.best else " "
        out.append(f"{mark} {_line(c, t, hw, flop)}")
        if len(seen) >= top:
            break
    b0 = choice.ranked[0][1]["total"]
    runner = next(((c, t) for c, t in choice.ranked if (c.tile, c.swap, c.pingpong)
                   != (choice.best.tile, choice.best.swap, choice.best.pingpong)), None)
    if runner is not None:
        out.append(f"the next tile, {'swap-AB ' if runner[0].swap else ''}"
                   f"{'ping-pong ' if runner[0].pingpong else ''}{runner[0].tile}, is modelled {runner[1]['total'] / b0:.2f}x "
                   f"slower ({_why(choice.ranked[0][1], runner[1])})")
    if not choice.notes:                        # the sm_90a model (sm_100a: tiles only)
        out += (_swap_lines(choice, hw) + _pingpong_lines(choice, hw) + _cluster_lines(choice)
                + _known_error_lines(choice, hw))
    else:
        out += feature_lines(choice)
    for tile, why in choice.rejected:
        out.append(f"  rejected {tile}: {why}")
    return "\n".join(out)


def _known_error_lines(choice: Choice, hw: Machine) -> list[str]:
    """Where the model is fitted or known wrong for this problem: a row stride off 128 bytes
    (the fitted factor), a single wave of 128x256 tiles (measured below the model at 2048^3)."""
    M, N, K = choice.problem
    eb, out = bytes_of(choice.dtype), []
    if (K * eb) % 128:
        out.append(f"misaligned rows: K x {eb} = {K * eb} bytes is 16-byte aligned (TMA's rule; "
                   f"K off 16 bytes is refused) but not a multiple of 128: the kernel loads it by "
                   f"TMA as usual (each 128-byte box row straddles two L2 lines"
                   f"{'; odd N: scalar stores' if N % 2 else ''}); each stage is modelled "
                   f"{hw.misaligned}x slower, a factor fitted to the three measured bf16 "
                   "8191x8193x4104 rows")
    c, t = choice.ranked[0]
    if t.get("waves") == 1 and c.bn == 256:
        out.append("one wave of 128x256 tiles: at 2048^3 such runs measured 25% (bf16) and 44% "
                   "(e4m3) below this model (the pipeline fill and the epilogue of the only tile "
                   "are not overlapped); not fitted: the sweep has one such shape")
    return out


def _swap_lines(choice: Choice, hw: Machine) -> list[str]:
    """Swap-AB against the best unswapped configuration (split-K or not): the modelled times, and
    where they tie, the MMA work each issues (the tie-break).

    >>> _swap_lines(choose_gemm(4096, 4096, 4096, "bf16"), H100)[0][:33]
    'swap-AB: not considered (M = 4096'
    """
    M, N, K = choice.problem
    sw = next(((c, t) for c, t in choice.ranked if c.swap), None)
    ns = next(((c, t) for c, t in choice.ranked if not c.swap), None)
    if sw is None or ns is None:
        return [f"swap-AB: not considered (M = {M} > {SWAP_MAX_M}: a 64-row wgmma tile has no zero "
                "rows to save)"]
    us = lambda t: t["total"] / (hw.clock_ghz * 1e3)  # noqa: E731
    a, b = sw[0], ns[0]
    head = (f"swap-AB (D^T = B A^T: N = {N} fills wgmma's 64 rows, M = {M} is the tile's N): best "
            f"swapped {a.tile} split-K {a.splits} {us(sw[1]):.1f} us, best unswapped {b.tile} "
            f"split-K {b.splits} {us(ns[1]):.1f} us")
    ia, ib = _issued(a, M, N, K), _issued(b, M, N, K)
    if round(sw[1]["total"]) == round(ns[1]["total"]):
        bound = "DRAM" if sw[1]["dram"] >= sw[1]["waves"] * sw[1]["unit"] else "MMA/load"
        why = (f"the model ties them ({bound}-bound alike: it has no term that separates them "
               f"there); the tie goes to fewer MMA multiply-adds issued: swapped {ia / ib:.0%} of "
               f"the unswapped (zero rows of the 64-row wgmma included)")
    else:
        why = (f"modelled {max(sw[1]['total'], ns[1]['total']) / min(sw[1]['total'], ns[1]['total']):.2f}x "
               f"apart ({_why(*(x[1] for x in ((sw, ns) if a == choice.best else (ns, sw))))}); "
               f"swapped issues {ia / ib:.0%} of the unswapped MMA work")
    chosen = "swap-AB" if choice.best.swap else ("split-K " + str(b.splits) if b.splits > 1
                                                  else "the unswapped tile")
    return [f"{head}: chose {chosen}; {why}. Unmeasured: no GPU ran these decode kernels"]


def _pingpong_lines(choice: Choice, hw: Machine) -> list[str]:
    """Ping-pong against the best cooperative configuration: the modelled times, a ping-pong
    tile's MMA turn against the fill and epilogue it would hide, and why it was chosen or refused.

    >>> _pingpong_lines(choose_gemm(8192, 8192, 8192, "bf16"), H100)[0][:38]
    'ping-pong: refused; best ping-pong 64x'
    """
    pp = next(((c, t) for c, t in choice.ranked if c.pingpong), None)
    co = next(((c, t) for c, t in choice.ranked if not c.pingpong), None)
    if pp is None or co is None:
        return ["ping-pong: not considered"]
    us = lambda t: t["total"] / (hw.clock_ghz * 1e3)  # noqa: E731
    (a, ta), (b, tb) = pp, co
    verdict = "chosen" if choice.best.pingpong else "refused"
    cover = ("all of it hidden" if ta["hidden"] >= ta["fill"] + ta["epilogue"] - 0.5 else
             f"{ta['hidden']:.0f} clk of it hidden")
    why = (f"per 64-row tile one warpgroup's MMA turn is {ta['turn_mma']:.0f} clk (stages at t_c + "
           f"o_one = {ta['stage']:.0f} clk, o_one {hw.o_one:.0f} fitted, assumed for a turn) against "
           f"fill + epilogue {ta['fill'] + ta['epilogue']:.0f} clk ({cover}); the cooperative "
           f"{b.tile} exposes fill + epilogue {tb['fill'] + tb['epilogue']:.0f} clk per unit but "
           f"its stages run two warpgroups at {tb['stage']:.0f} clk per {b.bm} rows")
    most = _why(ta, tb) if choice.best.pingpong else _why(tb, ta)
    return [f"ping-pong: {verdict}; best ping-pong {a.tile} s{a.stages} {us(ta):.1f} us, best "
            f"cooperative {b.tile} split-K {b.splits} {us(tb):.1f} us ({tb['total'] / ta['total']:.2f}x; "
            f"the term that differs most, against the {'cooperative' if choice.best.pingpong else 'ping-pong'}: "
            f"{most}): {why}. Unmeasured: no ping-pong kernel ran on a GPU"]


def _cluster_lines(choice: Choice) -> list[str]:
    """The chosen tile under each cluster shape considered (its best raster): the L2 bytes a CTA
    loads per stage (multicast shares one operand) and the modelled time against the choice."""
    best = {}
    for c, t in choice.ranked:
        if c.tile == choice.best.tile and c.splits == 1 and c.cluster not in best:
            best[c.cluster] = t
    if len(best) < 2:
        return ["clusters: not considered (fewer than two tiles along M and N, or split-K chosen)"]
    b0 = choice.clocks
    parts = [f"{cm}x{cn} {t['l2_bytes_per_stage'] / 1024:.0f} KiB/stage/CTA, "
             f"{t['total'] / b0:.2f}x" for (cm, cn), t in sorted(best.items())]
    return ["clusters of the chosen tile (TMA multicast; L2 bytes per CTA and stage, time vs the "
            "choice; the multicast saving is modelled, not measured): " + "; ".join(parts)]


def _why(a: dict, b: dict) -> str:
    """The cost term that differs most between the chosen ``a`` and the other ``b``."""
    terms = {"more waves or worse wave fill": b["waves"] * b["unit"] / max(1.0, a["waves"] * a["unit"]),
             "lower MMA utilization per stage": a["util"] / max(1e-9, b["util"]),
             "more DRAM traffic": b["dram"] / max(1.0, a["dram"])}
    name = max(terms, key=terms.get)
    return f"{name}: x{terms[name]:.2f}"



def _configure_sm100(dtype: str, choice, tile, stages, group_m, splits, epi, cluster=None) -> Tcgen05Manifest:
    """sm_100a: tile, stages, split-K, the persistent raster's GROUP_M and the multicast cluster
    (chosen or given) and the epilogue."""
    if cluster is None:
        cluster = choice.best.cluster if (choice is not None and tile is None and splits is None) else (1, 1)
        cluster = cluster if choice is None or choice.best.bm == 128 else (1, 1)
    if splits is None:
        splits = choice.best.splits if (choice is not None and tile is None) else 1
    t = tile or ((choice.best.bm, choice.best.bn, choice.best.bk) if choice is not None else None)
    ctas = 2 if t and require_tile(t)[0] == 256 else 1      # BM 256: a CTA pair (cta_group::2)
    if stages is None:
        bn, bk = (require_tile(t)[1:] if t else (256, 128 // bytes_of(dtype)))
        stages = choice.best.stages if (choice is not None and tile is None) else \
            max(2, min(max_stages(dtype, bn, bk, ctas), PAIR_MAX_STAGES if ctas == 2 else
                       SM100_CLUSTER_MAX_STAGES.get(cluster[0] * cluster[1], 8)))
        stages = min(stages, SM100_CLUSTER_MAX_STAGES.get(cluster[0] * cluster[1], 8))   # the ring's explored depth
    return build_tcgen05_manifest(dtype, tile=t, stages=stages, splits=splits, out=epi[0],
                                  bias=epi[1], activation=epi[2], ctas=ctas, cluster=tuple(cluster),
                                  **({} if group_m is None else {"group_m": group_m}))


def emission_for(man: dict | Tcgen05Manifest) -> Emission:
    """The files of ``emit gemm`` for a manifest of either architecture.

    >>> sorted(emission_for(configure("bf16", tile=(128, 64, 64), stages=2, arch="sm_100a")).files)[2]
    'kernel.cu'
    """
    return emission_of_tcgen05(man) if isinstance(man, Tcgen05Manifest) else emission_of(man)
