"""The sm_100a GEMM's cost model (``emit gemm --arch sm_100a --problem``): the time of one
configuration of the persistent, warp-specialized tcgen05 kernel
(:mod:`verilayout.emit.tcgen05_gemm`) on a B200, and the lines ``--explain`` prints about the
kernel's features.

**Nothing here was measured**: no sm_100 GPU was available. Which constants are cited and which
are assumed (none is fitted: there is no measurement to fit to):

* cited (NVIDIA B200 datasheet): 148 SMs; dense tensor throughput 2.25 (bf16/f16) / 4.5 (fp8) /
  1.1 (tf32) PFLOP/s, read at the clock below as 8192 / 16384 / 4096 FLOP per clock per SM
  (rounded to powers of two); HBM3e 8 TB/s;
* cited (CUDA C++ Programming Guide, "Shared Memory": 32 banks of 32 bits, one access per bank
  per clock): 128 bytes of shared memory per clock per SM; that tcgen05.mma reads its A and B
  operands from shared memory at that rate is *assumed*;
* assumed: a 1.85 GHz clock; a pipeline fill of 1400 clocks (the first TMA loads' latency before
  the first MMA); the epilogue moving 64 bytes of D per clock per SM; one kernel launch 1850
  clocks (1 us); L2 to SM bandwidth of 64 bytes per clock per SM (17.5 TB/s over 148 SMs: the
  per-SM rate the sm_90a model infers for the H100, at least 48 bytes per clock from its
  measured 128x256 rows, rounded up to a power of two; no B200 figure is published or measured).

The terms of one configuration (tile 128 x BN x BK, split-K S; a *unit* is a tile's K slice):

* ``ctas = min(148, units)``; each CTA runs ``per_cta = ceil(units / ctas)`` units in turn;
* ``mma = ceil(k_tiles / S) x max(128 BN BK 2 / F, (128 + BN) BK e / 128, fill / stages)`` clocks
  per unit: the tensor cores' rate, or the operands' shared-memory reads (a 128 x 64 tile reads
  192 bytes per 128 FLOP-clocks and is limited by them; ``e`` bytes per element), or the load
  latency (taken equal to the fill) that the ring's ``stages`` (the deepest that fits,
  :func:`verilayout.emit.tcgen05_gemm.max_stages`) must cover; ``epilogue = 128 BN b / 64``
  (``b``: bytes per stored element, f32 partial sums when split);
* ``compute = fill + per_cta x max(mma, epilogue) + epilogue``: the accumulator is double-buffered
  in TMEM, so a tile's epilogue runs under the next tile's MMAs; only the last one is exposed;
* ``l2`` per K-tile: the operand bytes one CTA loads from L2, ``(128 / CN + (BN / ctas) / CM) BK e``
  (rows past M or N are zero-filled by the TMA, not read: ``min(128, M)``, ``min(BN, N)``)
  (a ``CM x CN`` cluster: the CTAs sharing an A block (B block) each load one slice and multicast
  it, PTX ISA 9.7.9.25; one CTA or a pair: ``CM = CN = 1``), at the CTA's share of the L2 rate,
  ``64 x 148 / active CTAs`` bytes per clock (assumed); it joins the MMA's per-K-tile maximum. A
  cluster's padded tiles (past M or N) run their MMAs on zero-filled operands and are counted;
* ``dram``: the compulsory DRAM bytes (A and B read once, D or the split-K workspace written
  once) at 8 TB/s -- a lower bound: re-reads that miss in L2 are not modelled;
* ``reduce`` (S > 1): the workspace read back and D written, at HBM speed, plus one launch;
* ``total = max(compute, dram) + reduce``.

>>> t = sm100_terms(128, 8192, 8192, "bf16", 64, 64, 1)
>>> round(t["dram"] / CLOCK_GHZ / 1e3, 1) >= round(8192 * 8192 * 2 / 8e12 * 1e6, 1)   # B alone
True
"""
from __future__ import annotations

from verilayout.dtypes import bytes_of
from verilayout.emit.tcgen05_gemm import max_stages

__all__ = ["SMS", "FLOP_PER_CLK", "HBM_BYTES_PER_CLK", "CLOCK_GHZ", "FILL_CLK", "EPILOGUE_BYTES_PER_CLK",
           "LAUNCH_CLK", "SMEM_BYTES_PER_CLK", "L2_BYTES_PER_CLK_PER_SM", "CONSTANTS", "sm100_terms", "feature_lines", "pair_lines",
           "cluster_lines"]

SMS = 148
FLOP_PER_CLK = {"bf16": 8192, "f16": 8192, "e4m3": 16384, "tf32": 4096}
CLOCK_GHZ = 1.85
HBM_BYTES_PER_CLK = 8e12 / (CLOCK_GHZ * 1e9)
FILL_CLK = 1400.0
EPILOGUE_BYTES_PER_CLK = 64.0
LAUNCH_CLK = 1850.0
SMEM_BYTES_PER_CLK = 128.0
L2_BYTES_PER_CLK_PER_SM = 64.0
#: Each constant and where it comes from (``--explain`` prints them).
CONSTANTS = (("SMs 148, FLOP/clk/SM, HBM 8 TB/s", "cited: NVIDIA B200 datasheet"),
             ("shared memory 128 B/clk/SM", "cited: CUDA C++ Programming Guide (32 banks x 4 B); "
              "tcgen05 operand reads at that rate assumed"),
             ("clock 1.85 GHz, fill 1400 clk, epilogue 64 B/clk/SM, launch 1850 clk",
              "assumed, not fitted: no sm_100 GPU was measured"),
             ("2-CTA terms: 74 pair slots (148 SMs / 2), each SM reading its 128 rows of A and BN/2 of "
              "B per K-tile, ring capped at 4 stages", "cited: PTX ISA 9.7.16 (cta_group::2: each CTA "
              "of the pair holds half of B); no cost assumed for the pair's barriers and cluster syncs; "
              "its halved B loads are credited by the L2 term"),
             ("L2 64 B/clk/SM (17.5 TB/s), multicast: a CTA of a CM x CN cluster loads 1/CN of A and "
              "1/CM of B from L2", "assumed, not fitted (the H100 model's inferred per-SM L2 rate "
              "carried over); the multicast bytes saved follow from the slices (PTX ISA 9.7.9.25)"))


def sm100_terms(M: int, N: int, K: int, dtype: str, bn: int, bk: int, splits: int,
                out_bytes: int = 4, ctas: int = 1, stages: int | None = None,
                cluster: tuple[int, int] = (1, 1)) -> dict:
    """The cost terms of the module docstring, in clocks, for one configuration (``ctas`` 2: the
    CTA pair's 256 x ``bn`` tiles, the 2-CTA terms; ``stages``: the ring depth, default the
    deepest that fits; ``cluster``: ``(CM, CN)`` CTAs sharing operands by TMA multicast).

    >>> t = sm100_terms(8192, 8192, 8192, "bf16", 256, 64, 1)
    >>> t["ctas"], t["per_cta"], t["flop_per_k"], t["l2_per_k"], t["compute"] > t["dram"]
    (148, 14, 512.0, 768.0, True)
    >>> sm100_terms(8192, 8192, 8192, "bf16", 256, 64, 1, cluster=(2, 2))["l2_per_k"]
    384.0
    """
    eb = bytes_of(dtype)
    cm, cn = cluster
    size = cm * cn
    k_tiles = -(-K // bk)
    tm, tn = -(-M // (128 * ctas)), -(-N // bn)
    tiles = tm * tn
    units = -(-tm // cm) * cm * -(-tn // cn) * cn * splits   # a cluster's padded tiles run too
    slots = SMS // (ctas * size) * size           # CTAs, CTA pairs or clusters' CTAs resident at once
    groups = min(slots, units)
    per_cta = -(-units // groups)
    stages = stages or max(2, max_stages(dtype, bn, bk, ctas))
    flop_k = 128 * bn * bk * 2 / FLOP_PER_CLK[dtype]   # per SM: its 128 rows x bn (a pair: 256 rows on 2 SMs)
    l2_bytes = (min(128, M) / cn + min(bn, N) / ctas / cm) * bk * eb   # rows past M, N: zero-filled, not read
    active = max(1, groups * ctas)
    l2_k = l2_bytes / (L2_BYTES_PER_CLK_PER_SM * SMS / active)
    per_k = max(flop_k, (128 + bn // ctas) * bk * eb / SMEM_BYTES_PER_CLK, FILL_CLK / stages, l2_k)
    mma = -(-k_tiles // splits) * per_k
    ob = 4 if splits > 1 else out_bytes
    epilogue = 128 * bn * ob / EPILOGUE_BYTES_PER_CLK
    compute = FILL_CLK + per_cta * max(mma, epilogue) + epilogue
    dram_bytes = (M * K + N * K) * eb + M * N * ob * splits
    dram = dram_bytes / HBM_BYTES_PER_CLK
    reduce = ((splits * M * N * 4 + M * N * out_bytes) / HBM_BYTES_PER_CLK + LAUNCH_CLK
              if splits > 1 else 0.0)
    waves = -(-units // slots)
    return {"tiles": tiles, "units": units, "ctas": groups * ctas, "cta_group": ctas, "stages": stages,
            "cluster": f"{cm}x{cn}" if size > 1 else f"{ctas}x1", "cluster_size": size,
            "per_cta": per_cta, "waves": waves, "wave_fill": units / (waves * slots), "mma": mma, "epilogue": epilogue,
            "unit": max(mma, epilogue), "smem_bound": per_k > flop_k and per_k > l2_k, "latency_per_k": FILL_CLK / stages, "overlap": (per_cta - 1) * min(mma, epilogue),
            "compute": compute, "dram_bytes": dram_bytes, "dram": dram, "reduce": reduce,
            "util": 1.0, "total": max(compute, dram) + reduce,
            "bytes_per_flop": (128 + bn // ctas) * eb / (2 * 128 * bn),
            "l2_bytes_per_k": l2_bytes, "l2_bytes_per_stage": l2_bytes, "l2_per_k": l2_k, "l2_bound": l2_k > flop_k and l2_k == per_k,
            "smem_per_k": (128 + bn // ctas) * bk * eb / SMEM_BYTES_PER_CLK, "flop_per_k": flop_k}


def pair_lines(choice) -> list[str]:
    """What ``--explain`` says about the 2-CTA MMA for ``choice``: chosen or not, and which term
    decides (the per-SM K-tile: tensor rate, shared-memory operand reads, latency / stages).

    >>> from verilayout.emit.gemm_select import choose_tcgen05
    >>> pair_lines(choose_tcgen05(4096, 4096, 4096, "bf16"))[0][:40]
    '  2-CTA MMA (tcgen05.mma.cta_group::2, a'
    """
    b, tb = choice.ranked[0]
    pairs = [(c, t) for c, t in choice.ranked if t.get("cta_group", 1) == 2]
    ones = [(c, t) for c, t in choice.ranked if t.get("cta_group", 1) == 1]
    if not pairs or not ones:
        return ["  2-CTA MMA (tcgen05.mma.cta_group::2): not considered for this problem"]
    p, tp = pairs[0]
    o, to = ones[0]

    def k_tile(t):
        return (f"tensor {t['flop_per_k']:.0f}, shared-memory reads {t['smem_per_k']:.0f}, "
                f"latency/stages {t['latency_per_k']:.0f} clk")
    head = ("  2-CTA MMA (tcgen05.mma.cta_group::2, a CTA pair per 256 x BN tile, --tile 256xBNxBK): "
            + (f"chosen, {p.tile} s{p.stages}: {tp['total'] / max(1.0, to['total']):.2f}x the best "
               f"one-CTA tile {o.tile}" if b is p else
               f"not chosen: its best tile {p.tile} s{p.stages} is modelled {tp['total'] / max(1.0, tb['total']):.2f}x "
               f"the chosen {b.tile}"))
    return [head, f"    per SM and K-tile, pair {p.tile}: {k_tile(tp)}; one CTA {o.tile}: {k_tile(to)}",
            "    the pair halves each SM's B reads: that shortens only a K-tile bound by shared "
            "memory or L2 (ties go to one CTA); its ring stops at 4 stages (explored protocol)"]


def cluster_lines(choice) -> list[str]:
    """What ``--explain`` says about clusters with TMA multicast for ``choice``: the chosen tile's
    L2 bytes per K-tile and CTA under each cluster shape ranked, and the modelled time against the
    choice; which constant decides (assumed, not fitted).

    >>> from verilayout.emit.gemm_select import choose_tcgen05
    >>> cluster_lines(choose_tcgen05(128, 8192, 8192, "bf16"))[0][:51]
    '  clusters (TMA multicast, --cluster CMxCN): 1x2 ch'
    """
    b, tb = choice.ranked[0]
    same = {}
    for c, t in choice.ranked:
        if (c.bm, c.bn, c.splits) == (b.bm, b.bn, 1) and c.cluster not in same:
            same[c.cluster] = t
    if len(same) < 2:
        return ["  clusters (TMA multicast, --cluster CMxCN): not considered for the chosen tile "
                "(split-K or a CTA pair; clusters of CTA pairs, --tile 256xBNxBK --cluster 4x1|2x2, are "
                "emitted and checked when asked for, not ranked by the model)"]
    shape = f"{b.cluster[0]}x{b.cluster[1]}"
    head = (f"  clusters (TMA multicast, --cluster CMxCN): {shape} chosen" if b.cluster != (1, 1) else
            "  clusters (TMA multicast, --cluster CMxCN): none chosen (ties go to fewer CTAs)")
    parts = [f"{cm}x{cn} {t['l2_bytes_per_k'] / 1024:.0f} KiB ({t['l2_per_k']:.0f} clk vs tensor "
             f"{t['flop_per_k']:.0f}), {t['total'] / max(1.0, tb['total']):.2f}x" for (cm, cn), t in sorted(same.items())]
    return [head + "; L2 bytes per CTA and K-tile of the chosen tile, and time vs the choice: " + "; ".join(parts),
            "    each CTA of a CM x CN cluster loads 1/CN of A and 1/CM of B and multicasts it: the L2 bytes "
            "saved are exact, the L2 rate (64 B/clk/SM) that turns them into time is assumed, not measured"]


def _us(clk: float) -> float:
    return clk / (CLOCK_GHZ * 1e3)


def feature_lines(choice) -> list[str]:
    """What ``--explain`` says about the sm_100a kernel of ``choice`` (a ``gemm_select.Choice``
    whose terms are :func:`sm100_terms`): each feature, and what the model says it buys here.

    >>> from verilayout.emit.gemm_select import choose_tcgen05
    >>> print(feature_lines(choose_tcgen05(4096, 4096, 4096, "bf16"))[0])
    kernel features (sm_100a, all configurations):
    """
    b, t = choice.best, choice.ranked[0][1]
    bound = "memory" if t["dram"] > t["compute"] else "compute"
    cols = max(32, 1 << (2 * b.bn - 1).bit_length())
    overlap = (f"hides {t['overlap']:.0f} clk ({_us(t['overlap']):.1f} us) of epilogue under MMAs here"
               if t["per_cta"] > 1 else "nothing to hide here (one unit per CTA)")
    out = ["kernel features (sm_100a, all configurations):",
           f"  persistent grid: {t['ctas']} CTAs for {t['units']} units ({t['per_cta']} per CTA at "
           "most); mbarriers initialised and TMEM allocated once per CTA",
           f"  warp specialization: warp 0 issues the TMA loads ({b.stages}-stage ring), warp 1 the "
           f"tcgen05.mma.cta_group::{t.get('cta_group', 1)} ({b.bm} x {b.bn}), warps 2-5 are the epilogue",
           f"  TMEM accumulator double-buffered: 2 x {b.bn} of {cols} columns, an acc_full/acc_empty "
           f"mbarrier pair per stage; {overlap}",
           "  tile order: grouped raster, 8 tile rows at a time (B tiles reused from L2 by "
           "neighbouring CTAs; the model's L2 term counts each CTA's loads, not that reuse: no gain is claimed)",
           "  epilogue: " + ("f32 partial sums, one store per element, to the split-K workspace; the "
                             "reduction kernel applies bias, activation and the output type"
                             if b.splits > 1 else
                             "D in the output type through swizzled shared-memory boxes and TMA "
                             "stores (fence.proxy.async, wait_group.read before reuse); one store per "
                             "element when N x output bytes is not a multiple of 16"),
           f"  memory: {t['dram_bytes'] / 1e6:.1f} MB compulsory DRAM traffic = {_us(t['dram']):.1f} "
           f"us at 8 TB/s, compute {_us(t['compute']):.1f} us: {bound}-bound",
           *pair_lines(choice), *cluster_lines(choice)]
    out += ["model (sm_100a, emit/cost_sm100): total = max(fill + per CTA x max(MMA, epilogue) + "
            "epilogue, DRAM) + reduction; MMA per K-tile = max(tensor rate, operand reads from shared "
            "memory, load latency / stages, L2 loads at the CTA's share of L2)"
            + (f"; the chosen tile is bound by shared memory or latency (BN {b.bn})" if t.get("smem_bound")
               else "") + ("; the chosen tile is bound by its L2 loads" if t.get("l2_bound") else "")]
    out += [f"  constants: {what} ({src})" for what, src in CONSTANTS]
    return out
