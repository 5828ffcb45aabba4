"""``emit gemm --arch sm_100a``: a Blackwell GEMM, ``D[M, N] = A[M, K] @ B[N, K]^T`` (A, B
row-major K-major, D f32 row-major), with ``tcgen05.mma`` accumulating in tensor memory.

**It cannot run on the machines here** (no sm_100 GPU): it is compiled by ptxas for sm_100a and
checked on its PTX (:mod:`verilayout.simulate.tcgen05_check`), never executed.

A persistent grid of ``min(SMs, units)`` CTAs of 192 threads (a *unit*: one 128 x BN output tile,
or one K slice of it with split-K); CTA ``b`` takes units ``b, b + gridDim.x, ...`` in grouped
raster order (``GROUP_M`` tile rows at a time, :func:`tile_coords`). The mbarriers are
initialised and the TMEM allocated once per CTA. Warp specialization:

* warp 0 allocates ``TMEM_COLS`` TMEM columns (``tcgen05.alloc``; the base address written to
  shared memory); its lane 0 issues the TMA loads into a ring of ``stages`` buffers
  (``full``/``empty`` mbarriers as in the Hopper kernel), across the CTA's units;
* lane 0 of warp 1 issues ``tcgen05.mma.cta_group::1.kind::<kind>`` (M = 128, N = BN) with the
  proved shared-memory descriptors and instruction descriptor into accumulator stage ``a`` (TMEM
  columns ``a BN ..``, two stages), releasing each K stage with ``tcgen05.commit`` on its
  ``empty`` barrier and signalling ``acc_full[a]`` after the unit's last K-tile; it waits on
  ``acc_empty[a]`` before it writes stage ``a`` again;
* warps 2-5 are the epilogue: warp ``w`` reads TMEM lanes ``32 (w % 4) ..`` (the lane quarter its
  rank in the warpgroup may access: PTX ISA "tcgen05.ld") with ``tcgen05.ld.sync.aligned.32x32b.x32``
  once ``acc_full[a]`` completed, and releases the stage with one arrival on ``acc_empty[a]``: the
  epilogue of one unit runs while the MMAs of the next fill the other stage. D goes out in the
  output type through shared memory: per warp two 32 x 32 boxes swizzled as the D tensor map's
  ``SWIZZLE_64B`` (16-bit) or ``SWIZZLE_128B`` (f32), ``fence.proxy.async.shared::cta`` by every
  writer, a ``__syncwarp``, then one ``cp.async.bulk.tensor`` store (rows and columns past M, N
  clipped by the TMA) and ``cp.async.bulk.commit_group``; a box is rewritten only after
  ``cp.async.bulk.wait_group.read 1``. Where D's rows are not a 16-byte multiple (the tensor map's
  stride rule), and for split-K's f32 partial sums, one store per element instead.

**The CTA pair** (``ctas=2``, ``--tile 256xBNxBK``): a cluster of 2 x 1 CTAs computes each 256 x BN
tile (BN 128 or 256) with ``tcgen05.mma.cta_group::2`` (M = 256, :data:`PAIR_FACTS`). CTA rank ``r``
loads rows ``128 r ..`` of the A tile and ``BN / 2 r ..`` of the B tile into its own shared memory
(the same offsets in both) with ``cp.async.bulk.tensor ... .cta_group::2`` whose bytes complete on
the leader's (rank 0) ``full`` barrier, reached by ``mapa``; the leader's producer expects both
CTAs' bytes. The leader's MMA warp issues every MMA and commits with ``.multicast::cluster`` mask
0b11 to ``empty[s]`` and ``acc_full[a]`` of both CTAs; each CTA's epilogue warps read their own TMEM
(their 128 rows) and arrive on the leader's ``acc_empty[a]`` (count 8). TMEM is allocated and freed
with ``.cta_group::2`` by warp 0 of both CTAs; a cluster barrier after the barriers' init and
before exit, and a producer tail (every stage released) keep any remote arrival inside both CTAs'
lifetimes. Checked independently on both CTAs' PTX runs (``check_pair_source`` and
:mod:`verilayout.simulate.pair_ring`).

**Clusters with TMA multicast** (``cluster=(CM, CN)``, one CTA per 128 x BN tile,
:data:`~verilayout.emit.gemm_cluster.SM100_CLUSTER_SHAPES`): a ``__cluster_dims__(CM CN)`` kernel
whose clusters take cluster tiles of the persistent schedule; rank ``r`` computes tile ``(r % CM,
r // CM)`` of each. The ``CN`` CTAs of one M block each load ``128 / CN`` rows of A and multicast
them (``cp.async.bulk.tensor ... .multicast::cluster`` with the rank's ctaMask, PTX ISA 9.7.9.25),
the ``CM`` CTAs of one N block likewise ``BN / CM`` rows of B; each CTA's full barrier expects the
whole stage (its slices and its peers'). Each MMA warp frees a stage with one ``tcgen05.commit ...
.multicast::cluster`` to every CTA whose producer wrote into it (``peers[rank]``), so each empty
barrier counts ``CM + CN - 1`` commits; a cluster barrier after the barriers' init and before
exit, and the producer's tail, keep every multicast and commit inside the CTAs' lifetimes. The
plan and its proofs are :func:`verilayout.emit.gemm_cluster.cluster_plan`'s (the sm_90a kernel's);
checked independently on every CTA's PTX run by :mod:`verilayout.simulate.mcast_check`.

**Clusters of CTA pairs** (``ctas=2`` with ``cluster=(4, 1)`` or ``(2, 2)``,
:data:`~verilayout.emit.gemm_cluster.SM100_PAIR_CLUSTER_SHAPES`; ``(2, 1)`` is the pair itself):
ranks ``2k, 2k + 1`` are a pair (the peer's ``%cluster_ctarank`` differs in bit 0, PTX ISA 9.7.16)
computing one 256 x BN tile with ``cta_group::2``, the pair at place ``(r % CM / 2, r // CM)`` of the
cluster tile; rank ``r`` holds half ``r % 2`` (128 rows of A, BN / 2 of B). The ``CN`` CTAs holding the
same A rows each load ``128 / CN`` of them, the ``CM / 2`` CTAs holding the same B rows ``BN / CM`` each,
multicast with ``cp.async.bulk.tensor ... .multicast::cluster.cta_group::2`` whose bytes complete on
the full barrier at the same offset in each destination's pair leader (the operand names the
issuing pair's leader; PTX ISA 9.7.9.25); only leaders ``arrive.expect_tx``, both CTAs' stages. Each
leader's MMA warp frees a stage with one ``tcgen05.commit.cta_group::2 ... .multicast::cluster`` to
``commits[leader]`` (every CTA whose producer writes into either CTA of the pair; each empty barrier
counts the leaders reaching it) and publishes the accumulator to its pair (mask ``0b11 << leader``).
The MMA warp's loop is one template (``_MMA_ISSUER``) for the pair, the cluster and the cluster of
pairs. Plan and proofs: :func:`verilayout.emit.gemm_cluster.pair_cluster_plan`; checked
independently by :mod:`verilayout.simulate.mcast_check` (its pair contract).

Proved when the manifest is built (listed at the top of ``kernel.cu``): the TMA boxes write the
stage layouts (as for sm_90a); each sm_100 shared-memory descriptor (version 1) reads its K-block
of every stage; the instruction descriptor's fields are M, N, the operand and accumulator types and
both operands K-major (PTX ISA "Instruction descriptor"); the ``32x32b.x32`` loads of the four
warps deliver D where the M = 128 ``cta_group::1`` datapath (layout D) put it
(:func:`verilayout.prove.tmem.epilogue_verdict`); the allocation is a power of two >= 32 columns
holding both accumulator stages; the schedule's formula covers every tile once for every grid
(:func:`schedule_obligation`); the staging boxes' swizzle is the D tensor map's
(:func:`staging_obligation`, on :mod:`verilayout.hw.nvidia.tma`'s write model). Checked
independently on the PTX: :mod:`verilayout.simulate.tcgen05_check`.

>>> m = build_tcgen05_manifest("bf16", tile=(128, 256, 64), stages=4)
>>> m.instruction, m.tmem.columns, hex(m.idesc.value)
('tcgen05.mma.cta_group::1.kind::f16', 512, '0x8400490')
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from string import Template

from verilayout.core.linear_layout import LinearLayout
from verilayout.dtypes import bytes_of
from verilayout.core.cute import ComposedLayout
from verilayout.emit.cuda_gemm import (MAKE_TENSOR_MAP, ELEM_T, TMA_DTYPE, REDUCE_KERNEL, REDUCE_LAUNCH,
                                       SPLIT_WORKSPACE, ENCODE_TILED, EPILOGUE_CONSTANTS,
                                       require_gemm_manifest, obligation_block, select_expr,
                                       u64_literal, render_gemm_main, epilogue_source, epilogue_subs,
                                       epilogue_words)
from verilayout.emit.cuda_wgmma import Emission
from verilayout.emit.gemm_cluster import (SM100_CLUSTER_SHAPES, SM100_PAIR_CLUSTER_SHAPES, cluster_plan,
                                          pair_cluster_plan, require_cluster)
from verilayout.emit.gemm_plan import tile_coords
from verilayout.emit.gemm_plan import (ACTIVATIONS, GEMM_DTYPES, GEMM_FORMAT, MAX_SMEM_BYTES, OUT_DTYPES,
                                       TMA_SWIZZLE_CODES, SWIZZLE_SPAN, Epilogue, SmemBudget, StageOperand,
                                       TmaBoxes, stage_tile, tma_obligation, gemm_tag,
                                       require_tile, split_obligation, swizzle_for)
from verilayout.emit.tcgen05_manifest import (IDESC_FIELDS, Cluster, CtaPair, DStore, GlobalLayouts, InstrDescriptor,
                                              ManifestObligation, RingBarriers, Schedule, Tcgen05Manifest,
                                              TmemPlan, Warps, decode_idesc, typed_tcgen05)
from verilayout.errors import LayoutError
from verilayout.hw.nvidia.tma import TensorMap, write_table
from verilayout.prove.tmem import epilogue_verdict
from verilayout.synth.descriptor import derive_descriptor

__all__ = ["KIND", "IDESC_FIELDS", "encode_idesc", "decode_idesc", "build_tcgen05_manifest", "Tcgen05Manifest",
           "max_stages", "tile_coords", "schedule_obligation", "staging_obligation",
           "d_staging_bytes", "cluster_section", "pair_cluster_section", "render_tcgen05_cuda", "emit_tcgen05_gemm", "emission_of_tcgen05"]

#: ``.kind`` of tcgen05.mma per multiplicand type, and its K per instruction (32 bytes of K).
KIND = {"f16": ("f16", 16), "bf16": ("f16", 16), "tf32": ("tf32", 8), "e4m3": ("f8f6f4", 32)}
#: Instruction descriptor fields: :data:`verilayout.emit.tcgen05_manifest.IDESC_FIELDS` (PTX ISA
#: "Instruction descriptor format"), decoded by ``decode_idesc`` there.
#: Operand type codes: kind::f16 F16 0 / BF16 1, kind::tf32 TF32 2, kind::f8f6f4 E4M3 0; D F32 1.
_TYPE_CODE = {"f16": 0, "bf16": 1, "tf32": 2, "e4m3": 0}
LD_NUM = 32
#: Threads per CTA: warp 0 allocates TMEM and issues the TMA loads, warp 1 issues the MMAs,
#: warps 2-5 are the epilogue (warp w may access TMEM lanes 32 (w % 4) .. + 31: PTX ISA
#: "tcgen05 memory consistency / access restrictions", a warp reaches the lane quarter of its
#: rank in the warpgroup).
THREADS = 192
#: Accumulator stages in TMEM: the MMA warp fills one while the epilogue warps drain the other.
ACC_STAGES = 2
#: Tile rows of the persistent raster visited together (the sm_90a kernel's default).
GROUP_M = 8
#: Shared bytes after the K ring's barriers: acc_full and acc_empty per accumulator stage, and
#: the slot tcgen05.alloc writes the TMEM address to.
_BARRIER_TAIL = 16 * ACC_STAGES + 8
#: The D staging buffers of the TMA-store epilogue: per epilogue warp two boxes of 32 rows x
#: LD_NUM columns of the output type; max_stages reserves the widest (f32).
D_BUFS, EPI_WARPS = 2, 4
#: The D tensor map's element type and swizzle per output type: a box row of LD_NUM elements is
#: 64 bytes (16-bit) or 128 bytes (f32), the swizzle of that span (conflict-free 16-byte writes).
D_MAP = {"f32": ("CU_TENSOR_MAP_DATA_TYPE_FLOAT32", "128B"), "bf16": ("CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", "64B"),
         "f16": ("CU_TENSOR_MAP_DATA_TYPE_FLOAT16", "64B")}


def staging_obligation(out: str) -> dict:
    """The epilogue's staging writes land where the D tensor map's TMA store reads: lane ``l``
    writes its 16-byte chunk ``j`` of box row ``l`` at ``l R + ((j ^ ((l R >> 7) % (S / 16))) << 4)``
    (``R`` row bytes, ``S`` the swizzle span, as ``kernel.cu`` computes it) and the tensor map's
    swizzle (:func:`verilayout.hw.nvidia.tma.write_table`) puts box element ``(16 j / b, l)`` at
    that byte, for every lane, chunk and staging buffer base.

    >>> staging_obligation("bf16")["status"], staging_obligation("f32")["status"]
    ('proved', 'proved')
    """
    ob = bytes_of(out)
    row = LD_NUM * ob
    sw = D_MAP[out][1]
    span = SWIZZLE_SPAN[sw]
    t = TensorMap(out, global_dims=(LD_NUM, 32), box=(LD_NUM, 32), swizzle=sw)
    bad = None
    for buf in range(EPI_WARPS * D_BUFS):
        base = 1024 * 8 + buf * 32 * row             # a 1024-aligned staging area, buffer by buffer
        table = write_table(t, base)
        for lane in range(32):
            for j in range(row // 16):
                kernel = base + lane * row + ((j ^ ((lane * row >> 7) % (span // 16))) << 4)
                if int(table[lane, 16 * j // ob]) != kernel and bad is None:
                    bad = (buf, lane, j)
    return {"claim": f"D staging ({out}): the kernel's writes of box row l, 16-byte chunk j land where "
                     f"the SWIZZLE_{sw} TMA store reads box element (16 j / {ob}, l)",
            "status": "proved" if bad is None else "counterexample", "method": "exhaustive",
            "reason": ("every lane, chunk and staging buffer against hw/nvidia/tma's write model"
                       if bad is None else f"buffer {bad[0]}, lane {bad[1]}, chunk {bad[2]}")}


def d_staging_bytes(out: str) -> int:
    """Shared bytes of the D staging buffers for output type ``out``.

    >>> d_staging_bytes("bf16"), d_staging_bytes("f32")
    (16384, 32768)
    """
    return EPI_WARPS * D_BUFS * 32 * LD_NUM * bytes_of(out)


def encode_idesc(**fields: int) -> int:
    """The 32-bit instruction descriptor with the given fields (others 0).

    >>> hex(encode_idesc(d_type=1, a_type=1, b_type=1, n_dim=256 >> 3, m_dim=128 >> 4))
    '0x8400490'
    """
    v = 0
    spec = {n: (b, w) for n, b, w in IDESC_FIELDS}
    for name, x in fields.items():
        b, w = spec[name]
        if not 0 <= x < (1 << w):
            raise LayoutError(f"instruction descriptor field {name} = {x} does not fit {w} bits")
        v |= x << b
    return v


def _idesc(dtype: str, bn: int, m: int = 128) -> tuple[int, dict]:
    v = encode_idesc(d_type=1, a_type=_TYPE_CODE[dtype], b_type=_TYPE_CODE[dtype],
                     n_dim=bn >> 3, m_dim=m >> 4)
    d = decode_idesc(v)
    ok = (d["m_dim"] << 4 == m and d["n_dim"] << 3 == bn and d["d_type"] == 1
          and d["a_type"] == d["b_type"] == _TYPE_CODE[dtype] and d["a_major"] == d["b_major"] == 0
          and not any(d[k] for k in ("sparse_flag", "saturate", "negate_a", "negate_b", "max_shift")))
    return v, {"claim": f"instruction descriptor {v:#010x}: M {m}, N {bn}, A and B {dtype} (code "
                        f"{_TYPE_CODE[dtype]}), D f32, both K-major, dense, no negation",
               "status": "proved" if ok else "counterexample", "method": "exhaustive",
               "reason": "every field decoded back from the 32-bit value"}


def _descs(name: str, layout: ComposedLayout, dtype: str, bk: int, rows: int, offsets: list[int],
           k_inst: int) -> tuple[list[str], list[dict]]:
    out, obls = [], []
    for kb in range(bk // k_inst):
        plan = derive_descriptor(layout, dtype=dtype, major="K", k_block=kb, mn=rows, arch="sm_100")
        d0 = plan.descriptor.value
        status, reason = plan.verdict.status, plan.verdict.reason
        for off in (o for o in offsets if o):
            p = derive_descriptor(layout, dtype=dtype, major="K", k_block=kb, mn=rows, arch="sm_100",
                                  base_address=off)
            if p.verdict.status != "proved" or p.descriptor.value != d0 + (off >> 4):
                status, reason = "counterexample", f"at stage base {off:#x}: {p.descriptor.value:#x}"
        out.append(f"{d0:#018x}")
        obls.append({"claim": f"sm_100 descriptor {name}[{kb}] = {d0:#018x} (+ stage base >> 4) reads "
                              f"rows 0..{rows - 1}, K-block {kb} of every stage",
                     "status": status, "method": plan.verdict.method,
                     "reason": f"{reason}; re-derived at {len(offsets)} stage bases"})
    return out, obls


def _tmem_obligation(bn: int, ctas: int = 1) -> dict:
    """The epilogue's registers: warp w, lane l, load c, register r hold D(32w + l, 32c + r) of the
    CTA's rows (``ctas`` 2: the M = 256 ``cta_group::2`` datapath, 128 rows per CTA)."""
    regs = [[0, 1 << b] for b in range((bn - 1).bit_length())]
    reg = LinearLayout({"register": regs, "lane": [[1 << b, 0] for b in range(5)],
                        "warp": [[32, 0], [64, 0]]}, ["dim0", "dim1"])
    v = epilogue_verdict(reg, 128 * ctas, bn, "32x32b", cta_group=ctas, num=LD_NUM)
    return {"claim": f"tcgen05.ld.32x32b.x{LD_NUM} by warp w at lane 32w, column 32c: register r of "
                     f"lane l is D(32w + l, 32c + r) of the CTA's rows of the M={128 * ctas} "
                     f"cta_group::{ctas} accumulator (N={bn})",
            "status": v.status, "method": v.method, "reason": v.reason}


def schedule_obligation(group_m: int, max_tiles: int = 12) -> dict:
    """The persistent schedule covers every tile exactly once: for every tile grid up to
    ``max_tiles`` x ``max_tiles`` and every grid of 1 .. tiles + 1 CTAs, the units
    ``b, b + grid, ...`` of the CTAs ``b`` map by :func:`tile_coords` onto each tile once.

    >>> schedule_obligation(8, max_tiles=4)["status"]
    'proved'
    """
    bad = None
    for tiles_m in range(1, max_tiles + 1):
        for tiles_n in range(1, max_tiles + 1):
            tiles = tiles_m * tiles_n
            want = sorted((m, n) for m in range(tiles_m) for n in range(tiles_n))
            coords = [tile_coords(t, tiles_m, tiles_n, group_m) for t in range(tiles)]
            for grid in range(1, tiles + 2):
                got = sorted(coords[u] for b in range(grid) for u in range(b, tiles, grid))
                if got != want and bad is None:
                    bad = (tiles_m, tiles_n, grid)
    return {"claim": f"persistent schedule (GROUP_M {group_m}): the units b, b + grid, ... of CTAs "
                     "b < grid visit every tile exactly once",
            "status": "proved" if bad is None else "counterexample", "method": "exhaustive",
            "reason": (f"every tile grid up to {max_tiles} x {max_tiles}, every grid of 1 .. tiles + 1 "
                       "CTAs" if bad is None else f"tiles {bad[0]} x {bad[1]}, grid {bad[2]}")}


def max_stages(dtype: str, bn: int, bk: int, ctas: int = 1) -> int:
    """The deepest ring (<= 8) of a 128 x ``bn`` x ``bk`` tile that fits 227 KiB (``ctas`` 2: a CTA
    pair's 256 x ``bn`` tile, each CTA holding 128 rows of A and ``bn / 2`` rows of B).

    >>> max_stages("bf16", 256, 64), max_stages("bf16", 128, 64), max_stages("bf16", 256, 64, ctas=2)
    (4, 6, 6)
    """
    eb = bytes_of(dtype)
    fits = [s for s in range(2, 9) if s * (128 + bn // ctas) * bk * eb + d_staging_bytes("f32") + 16 * s
            + _BARRIER_TAIL + 1024 <= MAX_SMEM_BYTES]
    return max(fits) if fits else 0


def _check_epilogue(splits: int, out: str, activation: str) -> None:
    if not isinstance(splits, int) or isinstance(splits, bool) or not 1 <= splits <= 16:
        raise LayoutError(f"--split-k {splits!r}: expected 1 to 16")
    if out not in OUT_DTYPES:
        raise LayoutError(f"--out {out!r}: D is one of {', '.join(OUT_DTYPES)}")
    if activation not in ACTIVATIONS:
        raise LayoutError(f"--activation {activation!r}: one of {', '.join(ACTIVATIONS)}")


def build_tcgen05_manifest(dtype: str, tile: tuple[int, int, int] | None = None, stages: int = 4, splits: int = 1,
                           out: str = "f32", bias: bool = False,
                           activation: str = "none", group_m: int = GROUP_M,
                           ctas: int = 1, cluster: tuple[int, int] = (1, 1)) -> Tcgen05Manifest:  # long: one manifest, every field
    """Everything the sm_100a ``kernel.cu`` is written from, with its proofs. ``splits > 1``:
    CTA ``u`` computes K slice ``u % splits`` of tile ``u / splits`` into workspace slot
    ``u % splits`` and the sm_90a reduction kernel adds the slots and applies the epilogue
    (``out``, ``bias``, ``activation``); otherwise the epilogue is fused into the TMEM loads.
    ``ctas = 2``: a CTA pair (cluster 2 x 1) computes each 256 x BN tile with
    ``tcgen05.mma.cta_group::2`` (M = 256; :data:`PAIR_FACTS`), each CTA loading 128 rows of A and
    BN / 2 rows of B; ``tile`` is then the pair's (256 x BN x BK). ``cluster = (CM, CN)``
    (:data:`verilayout.emit.gemm_cluster.SM100_CLUSTER_SHAPES`, one CTA per tile): clusters of
    CM x CN CTAs sharing A's M blocks and B's N blocks by TMA multicast (:func:`cluster_section`).

    >>> m = build_tcgen05_manifest("e4m3", tile=(128, 128, 128), stages=6)
    >>> m.k_blocks, sorted({o.status for o in m.obligations})
    (4, ['proved'])
    """
    if dtype not in GEMM_DTYPES:
        raise LayoutError(f"--dtype {dtype!r}: emit gemm writes {', '.join(GEMM_DTYPES)}")
    eb = bytes_of(dtype)
    _check_ctas(ctas, splits)
    cluster = _check_cluster(cluster, ctas, splits)
    bm, bn, bk = require_tile(tile or (128 * ctas, 256, 128 // eb))
    kind, kx = KIND[dtype]
    if bm != 128 * ctas or bn not in PAIR_BN[ctas] or bk <= 0 or bk % kx or (bk * eb) % 32:
        raise LayoutError(f"--tile {bm}x{bn}x{bk}: sm_100a takes BM {128 * ctas}, BN "
                          f"{'/'.join(map(str, PAIR_BN[ctas]))} and BK a multiple of {kx} with 32 bytes of K"
                          + (" (BM 256: a CTA pair)" if ctas == 2
                             else f" (or BM 256, BN {'/'.join(map(str, PAIR_BN[2]))}: a CTA pair)"))
    bm, b_rows = 128, bn // ctas                  # per CTA: 128 rows of A, b_rows of B
    if not isinstance(stages, int) or not 2 <= stages <= 8:
        raise LayoutError(f"--stages {stages!r}: expected 2 to 8")
    _check_epilogue(splits, out, activation)
    if not isinstance(group_m, int) or isinstance(group_m, bool) or not 1 <= group_m <= 64:
        raise LayoutError(f"--group-m {group_m!r}: expected 1 to 64")
    epi = (out, bool(bias), activation)
    sw = swizzle_for(bk * eb)
    span = SWIZZLE_SPAN[sw]
    a_tile, b_tile = stage_tile(dtype, bm, bk, sw), stage_tile(dtype, b_rows, bk, sw)
    a_text, b_text = str(a_tile), str(b_tile)
    a_stage, b_stage = bm * bk * eb, b_rows * bk * eb
    b_off = stages * a_stage
    d_off = b_off + stages * b_stage
    bar_off = d_off + d_staging_bytes(out)
    total = bar_off + 16 * stages + _BARRIER_TAIL
    if total + 1024 > MAX_SMEM_BYTES:
        raise LayoutError(f"--tile {tile} --stages {stages}: {total} bytes of shared memory exceed "
                          f"{MAX_SMEM_BYTES}; lower --stages")
    da, oa = _descs("A", a_tile, dtype, bk, bm, [s * a_stage for s in range(stages)], kx)
    db, ob = _descs("B", b_tile, dtype, bk, b_rows, [b_off + s * b_stage for s in range(stages)], kx)
    idesc, oi = _idesc(dtype, bn, 128 * ctas)
    cols = max(32, 1 << (ACC_STAGES * bn - 1).bit_length())
    oc = {"claim": f"TMEM allocation of {cols} columns: a power of two >= 32 holding {ACC_STAGES} "
                   f"accumulator stages of {bn} f32 columns",
          "status": "proved" if ACC_STAGES * bn <= cols <= 512 else "counterexample",
          "method": "exhaustive", "reason": "PTX ISA tcgen05.alloc: 32..512 columns, powers of 2"}
    cl, ocl = (pair_cluster_section if ctas == 2 else cluster_section)(cluster, bn, a_stage, b_stage)
    obls = ([tma_obligation("A", a_tile, dtype, bm, bk, sw), tma_obligation("B", b_tile, dtype, b_rows, bk, sw)]
            + oa + ob + [oi, oc, _tmem_obligation(bn, ctas), schedule_obligation(group_m)]
            + ([staging_obligation(out)] if splits == 1 else []) + ([split_obligation(splits)] if splits > 1 else [])
            + ocl)
    grid = ("min(SMs, tiles x splits)" if ctas == 1 else
            "2 x min(SMs / 2, tiles): one CTA pair (cluster 2 x 1) per tile")
    if cl is not None:
        grid = (f"{cl.size} x min(SMs / {cl.size}, cluster tiles): one cluster of {cl.m} x {cl.n} CTAs "
                + (f"({cl.m // 2} x {cl.n} CTA pairs) " if ctas == 2 else "") + "per cluster tile")
    return Tcgen05Manifest(
        format=GEMM_FORMAT, kind="gemm", arch="sm_100a",
        tag=gemm_tag(dtype, bm * ctas, bn, bk, stages, splits=splits, epilogue=epi, cluster=cluster)
        + ("_sm100a" if ctas == 1 else "_2cta_sm100a"),
        dtype=dtype, acc="f32", elem_bytes=eb, bm=bm * ctas, bn=bn, bk=bk, stages=stages, consumers=1,
        threads=THREADS, k_inst=kx, k_blocks=bk // kx, splits=splits, group_m=group_m,
        instruction=f"tcgen05.mma.cta_group::{ctas}.kind::{kind}",
        a=StageOperand(a_text, a_stage, 0, tuple(da)), b=StageOperand(b_text, b_stage, b_off, tuple(db)),
        idesc=InstrDescriptor(idesc), tmem=TmemPlan(cols, f"32x32b.x{LD_NUM}", LD_NUM, ACC_STAGES),
        schedule=Schedule("persistent", grid, f"grouped raster, {group_m} tile rows at a time",
                          Warps(0, 1, (2, 3, 4, 5))),
        barriers=RingBarriers(bar_off),
        d_store=DStore("tma" if splits == 1 else "per element", d_off, (LD_NUM, 32), D_MAP[out][1], D_BUFS,
                       LD_NUM * bytes_of(out), "N x out bytes a multiple of 16 (else one store per element)"),
        tma=TmaBoxes(sw, TMA_SWIZZLE_CODES[sw], span // eb, bk * eb // span, bm * span, b_rows * span,
                     a_stage + b_stage),
        smem=SmemBudget(total, 1024),
        epilogue=Epilogue(out, bool(bias), activation, "reduction kernel" if splits > 1 else "GEMM kernel"),
        layouts=GlobalLayouts("row-major M x K", "row-major N x K", f"row-major M x N {out}"),
        obligations=tuple(ManifestObligation(**o) for o in obls),
        cta_pair=_pair_section(bn) if ctas == 2 else None, cluster=cl)


def _check_cluster(cluster: object, ctas: int, splits: int) -> tuple[int, int]:
    """Law: ``cluster`` when the kernel is written for it (one of
    :data:`~verilayout.emit.gemm_cluster.SM100_CLUSTER_SHAPES`, one CTA per tile, no split-K);
    a one-line ``LayoutError`` otherwise."""
    cluster = tuple(cluster) if isinstance(cluster, list) else cluster
    if ctas == 2 and cluster != (1, 1):
        if cluster not in SM100_PAIR_CLUSTER_SHAPES:
            shown = f"{cluster[0]}x{cluster[1]}" if isinstance(cluster, tuple) and len(cluster) == 2 else cluster
            raise LayoutError(f"--cluster {shown!r}: the CTA pair kernel (BM 256) takes 2x1, 4x1 or 2x2 "
                              "(CTA pairs along M)")
        shape = cluster
        if splits != 1:
            raise LayoutError(f"--cluster {shape[0]}x{shape[1]}: the cluster kernel has no split-K")
        return (1, 1) if shape == (2, 1) else shape    # 2x1: the CTA pair itself
    shape = require_cluster(cluster, SM100_CLUSTER_SHAPES)
    if shape != (1, 1) and splits != 1:
        raise LayoutError(f"--cluster {shape[0]}x{shape[1]}: the cluster kernel has no split-K")
    return shape


def cluster_section(cluster: tuple[int, int], bn: int, a_stage: int, b_stage: int) -> tuple:
    """The manifest's ``cluster`` section and its obligations (the plan of
    :func:`verilayout.emit.gemm_cluster.cluster_plan`, one home with sm_90a's: each CTA's MMA warp
    releases a stage with one ``tcgen05.commit``); ``(None, [])`` for ``(1, 1)``.

    >>> c, obls = cluster_section((2, 2), 128, 16384, 16384)
    >>> c.peers, c.empty_count, c.a_slice_rows, sorted({o["status"] for o in obls})
    ((7, 11, 13, 14), 3, 64, ['proved'])
    """
    if tuple(cluster) == (1, 1):
        return None, []
    p = cluster_plan(*cluster, consumers=1, bm=128, bn=bn, a_stage=a_stage, b_stage=b_stage,
                     shapes=SM100_CLUSTER_SHAPES, per_cta=1)
    c = Cluster(p["m"], p["n"], p["size"], tuple(p["a_masks"]), tuple(p["b_masks"]), tuple(p["peers"]),
                p["empty_count"], p["a_slice_rows"], p["b_slice_rows"],
                "tcgen05.commit.cta_group::1 ... .multicast::cluster to the CTAs of peers[rank]")
    return c, p["obligations"]


def pair_cluster_section(cluster: tuple[int, int], bn: int, a_stage: int, b_stage: int) -> tuple:
    """The manifest's ``cluster`` section of the CTA-pair kernel on a cluster of pairs and its
    obligations (the plan of :func:`verilayout.emit.gemm_cluster.pair_cluster_plan`; ``commits``
    the leaders' ``tcgen05.commit.cta_group::2`` masks); ``(None, [])`` for ``(1, 1)``.

    >>> c, obls = pair_cluster_section((2, 2), 256, 16384, 16384)
    >>> c.a_masks, c.commits, c.empty_count, sorted({o["status"] for o in obls})
    ((5, 10, 5, 10), (15, 0, 15, 0), 2, ['proved'])
    """
    if tuple(cluster) == (1, 1):
        return None, []
    p = pair_cluster_plan(*cluster, bn=bn, a_stage=a_stage, b_stage=b_stage)
    c = Cluster(p["m"], p["n"], p["size"], tuple(p["a_masks"]), tuple(p["b_masks"]), tuple(p["peers"]),
                p["empty_count"], p["a_slice_rows"], p["b_slice_rows"],
                "tcgen05.commit.cta_group::2 ... .multicast::cluster by each pair's leader to commits[leader]",
                tuple(p["commits"]))
    return c, p["obligations"]


#: BN per CTA count: one CTA 64/128/256; a pair 128/256 (B halves of 64/128 rows; the PTX ISA's
#: M = 256 cta_group::2 shapes take N 32..256 in steps of 16).
PAIR_BN = {1: (64, 128, 256), 2: (128, 256)}
#: What the CTA pair's kernel relies on, each with its source (``cta_pair`` of the manifest).
PAIR_FACTS = (
    "tcgen05.mma.cta_group::2 with M = 256: the A operand's rows 0..127 come from the issuing CTA's "
    "shared memory and 128..255 from its peer's at the same descriptor addresses, B's N columns split "
    "likewise in halves; D's rows 128 r .. 128 r + 127 are lanes 0..127 of CTA r's tensor memory "
    "(PTX ISA 9.7.16, tcgen05.mma and 'Data path layout organization', layout A)",
    "tcgen05.alloc/dealloc/relinquish_alloc_permit.cta_group::2: issued by two warps, one in each CTA "
    "of the pair, together; an MMA or commit of cta_group::2 needs the peer CTA not exited, and a "
    "cluster barrier before the dealloc suffices (PTX ISA 9.7.16.5, 'Issue granularity')",
    "tcgen05.commit.cta_group::2 ... .multicast::cluster: one arrival on the mbarrier at the same "
    "offset of every CTA in the 16-bit mask (PTX ISA 9.7.16, tcgen05.commit)",
    "cp.async.bulk.tensor ... .cta_group::2: the completion mbarrier may be the peer CTA's (PTX ISA "
    "9.7.9.25, cp.async.bulk.tensor; CUTLASS cute/arch/copy_sm100_tma.hpp, SM100_TMA_2SM_LOAD)")


def _check_ctas(ctas: int, splits: int) -> None:
    if ctas not in (1, 2) or isinstance(ctas, bool):
        raise LayoutError(f"ctas {ctas!r}: 1 (one CTA per tile) or 2 (a CTA pair, cta_group::2)")
    if ctas == 2 and splits != 1:
        raise LayoutError(f"--split-k {splits}: the CTA pair kernel (BM 256) has no split-K")


def _pair_section(bn: int) -> CtaPair:
    return CtaPair(ctas=2, cluster=(2, 1), leader=0, commit_mask=3, rows_per_cta=128,
                   b_rows_per_cta=bn // 2, tile=(256, bn),
                   barriers="full[s] in the leader (both CTAs' TMA bytes, expect_tx by the leader); "
                            "empty[s] and acc_full[a] in each CTA (the leader's commit to mask 3); "
                            "acc_empty[a] in the leader (4 epilogue warps x 2 CTAs)",
                   facts=PAIR_FACTS)


_HELPERS = r"""
namespace vl_${tag} {

// ----- configuration (manifest.json) ---------------------------------------------------------
constexpr int BM = ${bm}, BN = ${bn}, BK = ${bk}, STAGES = ${stages};
constexpr int THREADS = ${threads};                // warp 0: TMEM alloc + TMA, warp 1: MMA, warps 2-5: epilogue
constexpr uint32_t EPI_WARPS = 4u;                 // epilogue warp w reads TMEM lanes 32 (w % 4) .. + 31
constexpr uint32_t ACC_STAGES = ${acc_stages}u;    // accumulator stages in TMEM: stage a at columns a * BN
constexpr int GROUP_M = ${group_m};                // persistent raster: tile rows visited together
constexpr int K_INST = ${k_inst}, K_BLOCKS = ${k_blocks};   // ${instruction} x K_BLOCKS per stage
constexpr int ELEM_BYTES = ${eb};
constexpr uint32_t A_STAGE_BYTES = ${a_stage}u, B_STAGE_BYTES = ${b_stage}u;
constexpr uint32_t A_OFFSET = 0u, B_OFFSET = ${b_off}u, BAR_OFFSET = ${bar_off}u;
constexpr uint32_t SMEM_BYTES = ${smem_bytes}u, SMEM_ALIGN = 1024u;
constexpr uint32_t BOX_K = ${box_k}u, BOXES = ${boxes}u;   // TMA box: BOX_K elements x rows, SWIZZLE_${swizzle}
constexpr uint32_t A_BOX_BYTES = ${a_box}u, B_BOX_BYTES = ${b_box}u, TX_BYTES = ${tx}u;
constexpr uint32_t TMEM_COLS = ${tmem_cols}u;      // tcgen05.alloc: power of two >= 32, >= ACC_STAGES * BN
constexpr uint32_t IDESC = ${idesc}u;             // instruction descriptor (proved, see above)
constexpr int LD_NUM = ${ld_num};                  // tcgen05.ld.32x32b.x${ld_num}: columns per load
constexpr int SPLITS = ${splits};                  // K slices per tile (1: no split-K)
constexpr int CTAS = ${ctas}, TILE_M = BM * CTAS;   // CTAs per MMA (2: a CTA pair, cta_group::2); rows of an output tile
constexpr int B_ROWS = BN / CTAS;                 // rows of B each CTA loads (a pair splits the B tile)
// D staging for the TMA store: per epilogue warp D_BUFS buffers of a 32 x LD_NUM box (row = TMEM
// lane), rows of D_ROW_BYTES, 16-byte chunks swizzled as SWIZZLE_${d_swizzle} (chunk ^= address bits 7..)
constexpr uint32_t D_OFFSET = ${d_off}u, D_BUFS = 2u, D_ROW_BYTES = ${d_row}u, D_BUF_BYTES = 32u * D_ROW_BYTES;
constexpr uint32_t D_SPAN_CHUNKS = ${d_span}u / 16u;   // the swizzle span in 16-byte chunks
""" + EPILOGUE_CONSTANTS + r"""static_assert(BOX_K * BOXES == uint32_t(BK) && BK == K_INST * K_BLOCKS, "boxes and K-blocks cover BK");
static_assert(BN % LD_NUM == 0 && TMEM_COLS >= ACC_STAGES * uint32_t(BN), "the loads and the allocation cover N");
static_assert(THREADS == 32 * (2 + int(EPI_WARPS)), "a TMA warp, an MMA warp and the epilogue warps");
typedef ${elem_t} elem_bits_t;

__host__ __device__ __forceinline__ uint64_t desc_a0(uint32_t kb) { return ${desc_a}; }
__host__ __device__ __forceinline__ uint64_t desc_b0(uint32_t kb) { return ${desc_b}; }
// start-address field (bits 0-13): (address & 0x3FFFF) >> 4, as for sm_90
__host__ __device__ __forceinline__ uint64_t with_start(uint64_t d0, uint32_t addr) {
  const uint64_t start = (((d0 & 0x3FFFull) << 4) + addr) & 0x3FFFFull;
  return (d0 & ~0x3FFFull) | (start >> 4);
}

// ----- persistent tile scheduler: tile t -> (tile row, tile column), GROUP_M tile rows at a time
__host__ __device__ __forceinline__ void tile_coords(uint32_t t, uint32_t tiles_m, uint32_t tiles_n,
                                                     uint32_t& tm, uint32_t& tn) {
  const uint32_t per_group = uint32_t(GROUP_M) * tiles_n;
  const uint32_t first = (t / per_group) * uint32_t(GROUP_M);
  const uint32_t rows = tiles_m - first < uint32_t(GROUP_M) ? tiles_m - first : uint32_t(GROUP_M);
  tm = first + (t % per_group) % rows;
  tn = (t % per_group) / rows;
}

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile("{\n.reg .pred done;\nWAIT_%=:\nmbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
               "@!done bra WAIT_%=;\n}\n" :: "r"(bar), "r"(parity) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, uint32_t bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
               :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar) : "memory");
}
__device__ __forceinline__ void tc_fence_before() { asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory"); }
__device__ __forceinline__ void tc_fence_after() { asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory"); }
__device__ __forceinline__ void tmem_alloc(uint32_t slot) {
  asm volatile("tcgen05.alloc.cta_group::${cta_group}.sync.aligned.shared::cta.b32 [%0], %1;\n" :: "r"(slot), "n"(TMEM_COLS) : "memory");
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::${cta_group}.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void tmem_dealloc(uint32_t taddr) {
  asm volatile("tcgen05.dealloc.cta_group::${cta_group}.sync.aligned.b32 %0, %1;\n" :: "r"(taddr), "n"(TMEM_COLS) : "memory");
}
__device__ __forceinline__ uint32_t ld_shared(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
  return v;
}
__device__ __forceinline__ void mma(uint32_t tmem_d, uint64_t da, uint64_t db, uint32_t accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n${instruction} [%0], %1, %2, %3, p;\n}\n"
               :: "r"(tmem_d), "l"(da), "l"(db), "r"(IDESC), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void mma_commit(uint32_t bar) {   // arrive on bar when the issued MMAs completed
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" :: "r"(bar) : "memory");
}
${tmem_ld}
__device__ __forceinline__ void tmem_wait_ld() { asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void st_shared_v4(uint32_t addr, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" :: "r"(addr), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
}
__device__ __forceinline__ void fence_proxy_async() {   // generic-proxy writes visible to the TMA (async proxy)
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, uint32_t src, int32_t c0, int32_t c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];\n"
               :: "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(src) : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// the buffer of the store before last may be rewritten: every group but the newest has read shared memory
__device__ __forceinline__ void bulk_wait_read_1() { asm volatile("cp.async.bulk.wait_group.read 1;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }

${epilogue_funcs}
${pack_out}
${pair_funcs}
"""

#: The kernel's signature and the shared-memory layout its barriers take (one CTA and the CTA pair alike).
_ENTRY = r"""vl_gemm_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
               store_t* __restrict__ D, int M, int N, int K, const float* __restrict__ bias,
               const __grid_constant__ CUtensorMap tmap_d) {
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const uint32_t raw = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
  const uint32_t base = (raw + SMEM_ALIGN - 1u) & ~(SMEM_ALIGN - 1u);
  const uint32_t full0 = base + BAR_OFFSET, empty0 = full0 + 8u * STAGES;
  const uint32_t acc_full0 = empty0 + 8u * STAGES, acc_empty0 = acc_full0 + 8u * ACC_STAGES;
  const uint32_t slot = acc_empty0 + 8u * ACC_STAGES;   // tcgen05.alloc writes the TMEM base address here
  const uint32_t warp = threadIdx.x / 32u, lane = threadIdx.x % 32u;
"""



#: The epilogue's walk over one accumulator stage, LD_NUM columns at a time, up to the TMA store
#: of the staged box (one home for the one-CTA and the CTA-pair kernels; ``${store_row}`` is the
#: box's first row in D, ``${note0..3}`` the one-CTA kernel's comments).
_DRAIN = Template(r"""#pragma unroll 1
      for (uint32_t c = 0; c < uint32_t(BN / LD_NUM); ++c) {
        uint32_t v[LD_NUM];
        __syncwarp();${note0}
        tmem_ld(v, tmem + ((quad * 32u) << 16) + acc_col + c * uint32_t(LD_NUM));   // lane in bits 16-31, column 0-15
        tmem_wait_ld();
        const uint32_t col0 = tn * BN + c * LD_NUM;
        if (tma_store) {
          const uint32_t buf = dbuf0 + (nstore % D_BUFS) * D_BUF_BYTES;
          if (lane == 0) bulk_wait_read_1();      // the store issued from buf D_BUFS chunks ago has read it
          __syncwarp();
#pragma unroll
          for (uint32_t j = 0; j < D_ROW_BYTES / 16u; ++j) {${note1}
            uint32_t w[4];
#pragma unroll
            for (uint32_t q = 0; q < 4u; ++q) w[q] = pack_out(v, (j * 4u + q) * (4u / uint32_t(OUT_BYTES)), col0, bias, N);
            const uint32_t off = lane * D_ROW_BYTES + ((j ^ ((lane * D_ROW_BYTES >> 7) % D_SPAN_CHUNKS)) << 4);
            st_shared_v4(buf + off, w[0], w[1], w[2], w[3]);
          }
          fence_proxy_async();${note2}
          __syncwarp();
          if (lane == 0) {${note3}
            tma_store_2d(&tmap_d, buf, int32_t(col0), ${store_row});
            bulk_commit();
          }
          ++nstore;
""")
_DRAIN_ONE = _DRAIN.substitute(
    note0="                              // converged for the .sync.aligned load",
    note1="   // row `lane` of the box, 16 bytes at a time",
    note2="                     // each writer's bytes visible to the TMA store",
    note3="                         // rows and columns past M, N are clipped by the TMA",
    store_row="int32_t(tm * BM + quad * 32u)")
_DRAIN_PAIR = _DRAIN.substitute(note0="", note1="", note2="", note3="", store_row="int32_t(row0)")
#: The scalar store of a drained chunk without a TMA store (no split-K), then the stage's release
#: fence: the same text in the CTA-pair and the cluster kernels.
_SCALAR_TAIL = r"""        } else if (row < uint32_t(M)) {
          store_t* p = D + size_t(row) * size_t(N);
#pragma unroll
          for (uint32_t r = 0; r < uint32_t(LD_NUM); ++r) {
            const uint32_t col = col0 + r;
            float x = __uint_as_float(v[r]);
            if (FUSED) x = epilogue(x, bias, col, N);
            if (col < uint32_t(N)) store_one(p + col, x);
          }
        }
      }
      tc_fence_before();
      __syncwarp();
"""

_BODY = r"""// Persistent: CTA b takes units b, b + gridDim.x, ... (unit u: tile u / SPLITS in grouped raster
// order, K slice u % SPLITS). Warp 0 lane 0 loads the K ring by TMA, warp 1 lane 0 issues the MMAs
// into accumulator stage a (TMEM columns a * BN ..), warps 2-5 drain stage a while the MMAs fill
// stage a ^ 1: acc_full[a] (tcgen05.commit) and acc_empty[a] (one arrival per epilogue warp).
__global__ void __launch_bounds__(THREADS, 1)
""" + _ENTRY + r"""  const uint32_t tiles_m = (uint32_t(M) + BM - 1) / BM, tiles_n = (uint32_t(N) + BN - 1) / BN;
  const uint32_t units = tiles_m * tiles_n * uint32_t(SPLITS);
  const uint32_t k_tiles = (uint32_t(K) + BK - 1) / BK;
  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < uint32_t(STAGES); ++s) { mbar_init(full0 + 8u * s, 1u); mbar_init(empty0 + 8u * s, 1u); }
    for (uint32_t a = 0; a < ACC_STAGES; ++a) { mbar_init(acc_full0 + 8u * a, 1u); mbar_init(acc_empty0 + 8u * a, EPI_WARPS); }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  }
  if (warp == 0) tmem_alloc(slot);
  tc_fence_before();
  __syncthreads();
  tc_fence_after();
  const uint32_t tmem = ld_shared(slot);           // lane 0, first allocated column
  if (warp == 0) {
    if (lane == 0) {                               // ---- producer: TMA ----
      uint32_t stage = 0, phase = 0;
      for (uint32_t u = blockIdx.x; u < units; u += gridDim.x) {
        uint32_t tm, tn;
        tile_coords(u / uint32_t(SPLITS), tiles_m, tiles_n, tm, tn);
        const uint32_t s = u % uint32_t(SPLITS);
        const uint32_t kbeg = (s * k_tiles) / uint32_t(SPLITS), kend = ((s + 1u) * k_tiles) / uint32_t(SPLITS);
        for (uint32_t kt = kbeg; kt < kend; ++kt) {
          mbar_wait(empty0 + 8u * stage, phase ^ 1u);
          const uint32_t full = full0 + 8u * stage;
          mbar_arrive_expect_tx(full, TX_BYTES);
          const uint32_t a_dst = base + A_OFFSET + stage * A_STAGE_BYTES, b_dst = base + B_OFFSET + stage * B_STAGE_BYTES;
#pragma unroll
          for (uint32_t j = 0; j < BOXES; ++j) {
            const int32_t k0 = int32_t(kt * BK + j * BOX_K);
            tma_load_2d(a_dst + j * A_BOX_BYTES, &tmap_a, k0, int32_t(tm * BM), full);
            tma_load_2d(b_dst + j * B_BOX_BYTES, &tmap_b, k0, int32_t(tn * BN), full);
          }
          if (++stage == uint32_t(STAGES)) { stage = 0; phase ^= 1u; }
        }
      }
    }
  } else if (warp == 1) {
    if (lane == 0) {                               // ---- MMA issuer: tcgen05.mma into TMEM ----
      uint32_t stage = 0, phase = 0, acc = 0, acc_phase = 0;
      for (uint32_t u = blockIdx.x; u < units; u += gridDim.x) {
        const uint32_t s = u % uint32_t(SPLITS);
        const uint32_t kbeg = (s * k_tiles) / uint32_t(SPLITS), kend = ((s + 1u) * k_tiles) / uint32_t(SPLITS);
        mbar_wait(acc_empty0 + 8u * acc, acc_phase ^ 1u);   // the epilogue drained accumulator stage acc
        tc_fence_after();
        const uint32_t tmem_d = tmem + acc * uint32_t(BN);
        for (uint32_t kt = kbeg; kt < kend; ++kt) {
          mbar_wait(full0 + 8u * stage, phase);
          tc_fence_after();
#pragma unroll
          for (uint32_t kb = 0; kb < uint32_t(K_BLOCKS); ++kb)
            mma(tmem_d, with_start(desc_a0(kb), base + A_OFFSET + stage * A_STAGE_BYTES),
                with_start(desc_b0(kb), base + B_OFFSET + stage * B_STAGE_BYTES), (kt != kbeg) || (kb != 0u));
          mma_commit(empty0 + 8u * stage);         // the stage is free once these MMAs completed
          if (++stage == uint32_t(STAGES)) { stage = 0; phase ^= 1u; }
        }
        mma_commit(acc_full0 + 8u * acc);          // the accumulator is final (no MMA: an empty slice)
        if (++acc == ACC_STAGES) { acc = 0; acc_phase ^= 1u; }
      }
    }
  } else {
    // ---- epilogue warps: warp w reads TMEM lanes 32 (w % 4) .. + 31 = rows of the tile ----
    const uint32_t quad = warp % 4u;
    // D through shared memory and TMA stores when D's rows are 16-byte multiples (the tensor map's
    // stride rule); otherwise (and for split-K partial sums) one store per element
    const bool tma_store = SPLITS == 1 && (uint32_t(N) * uint32_t(OUT_BYTES)) % 16u == 0u;
    const uint32_t dbuf0 = base + D_OFFSET + (warp - 2u) * D_BUFS * D_BUF_BYTES;
    uint32_t acc = 0, acc_phase = 0, nstore = 0;
    for (uint32_t u = blockIdx.x; u < units; u += gridDim.x) {
      uint32_t tm, tn;
      tile_coords(u / uint32_t(SPLITS), tiles_m, tiles_n, tm, tn);
      const uint32_t s = u % uint32_t(SPLITS);
      const uint32_t kbeg = (s * k_tiles) / uint32_t(SPLITS), kend = ((s + 1u) * k_tiles) / uint32_t(SPLITS);
      mbar_wait(acc_full0 + 8u * acc, acc_phase);
      __syncwarp();                                // tcgen05.ld is .sync.aligned: the warp converged
      tc_fence_after();
      const uint32_t row = tm * BM + quad * 32u + lane;
      const uint32_t acc_col = acc * uint32_t(BN);
""" + _DRAIN_ONE + r"""        } else if (row < uint32_t(M)) {
          // split-K: raw f32 partial sums to slot s of the workspace; otherwise bias, activation, output type
          store_t* p = D + (size_t(s) * size_t(M) + size_t(row)) * size_t(N);
#pragma unroll
          for (uint32_t r = 0; r < uint32_t(LD_NUM); ++r) {
            const uint32_t col = col0 + r;
            float x = kend > kbeg ? __uint_as_float(v[r]) : 0.0f;   // an empty K slice sums to 0
            if (FUSED) x = epilogue(x, bias, col, N);
            if (col < uint32_t(N)) store_one(p + col, x);
          }
        }
      }
      tc_fence_before();                           // the loads of stage acc are ordered before the release
      __syncwarp();
      if (lane == 0) mbar_arrive(acc_empty0 + 8u * acc);
      if (++acc == ACC_STAGES) { acc = 0; acc_phase ^= 1u; }
    }
    if (lane == 0 && nstore > 0u) bulk_wait_all();   // every TMA store complete before the CTA exits
  }
  tc_fence_before();
  __syncthreads();
  tc_fence_after();
  if (warp == 0) tmem_dealloc(tmem);
}

"""

_HOST = r"""${reduce_kernel}
""" + ENCODE_TILED + r"""""" + MAKE_TENSOR_MAP + r"""// D (M x N, out_t, row-major): boxes of LD_NUM columns x 32 rows, SWIZZLE_${d_swizzle}, stored by TMA
static int make_d_map(CUtensorMap* map, void* ptr, int M, int N) {
  vl_encode_tiled_t fn = encode_tiled();
  if (fn == nullptr) return 4;
  const cuuint64_t dims[2] = {cuuint64_t(N), cuuint64_t(M)};
  const cuuint64_t strides[1] = {cuuint64_t(N) * OUT_BYTES};
  const cuuint32_t box[2] = {uint32_t(LD_NUM), 32u};
  const cuuint32_t estr[2] = {1u, 1u};
  const CUresult r = fn(map, ${d_tma_dtype}, 2, ptr, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                        CUtensorMapSwizzle(${d_swizzle_code}), CU_TENSOR_MAP_L2_PROMOTION_NONE,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? 0 : 5;
}
[[maybe_unused]] static const char* problem_error(int M, int N, int K) {
  if (M < 1 || N < 1 || K < 1) return "M, N and K must be at least 1";
  if ((size_t(K) * ELEM_BYTES) % 16 != 0) return "K * element bytes must be a multiple of 16 (TMA row stride)";
  return "";
}
// D = A @ B^T; a persistent grid of min(SMs, units) CTAs. 0 on success, 2 bad problem, 3 CUDA
// error, 4/5 tensor maps. sms: CTAs of the persistent grid (0: the device's SM count).
[[maybe_unused]] static int launch(const void* A, const void* B, void* D, int M, int N, int K,
                  cudaStream_t stream = 0, int sms = 0, const float* bias = nullptr) {
  if (problem_error(M, N, K)[0] != '\0') return 2;
  long ctas = sms;
  if (ctas <= 0) {
    int dev = 0, n = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) return 3;
    ctas = n;
  }
${split_workspace}  CUtensorMap ta, tb;
  int e = make_tensor_map(&ta, A, M, K, ${a_box_rows});
  if (e == 0) e = make_tensor_map(&tb, B, N, K, ${b_box_rows});
  if (e != 0) return e;
  CUtensorMap td;                                  // D's tensor map (TMA stores): only where the kernel uses it
  memset(&td, 0, sizeof(td));
  if (SPLITS == 1 && (size_t(N) * OUT_BYTES) % 16 == 0) {
    e = make_d_map(&td, D, M, N);
    if (e != 0) return e;
  }
  if (cudaFuncSetAttribute(vl_gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           int(SMEM_BYTES + SMEM_ALIGN)) != cudaSuccess) return 3;
${host_units}
  vl_gemm_kernel<<<grid, THREADS, SMEM_BYTES + SMEM_ALIGN, stream>>>(ta, tb, out, M, N, K, bias, td);
${reduce_launch}  return cudaGetLastError() == cudaSuccess ? 0 : 3;
}

}  // namespace vl_${tag}
"""


_PAIR_FUNCS = r"""// ----- the CTA pair (cluster 2 x 1): PTX ISA "tcgen05" (cta_group::2), "mapa", "barrier.cluster"
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
// the shared::cluster address of the same shared-memory offset in CTA `cta` of the cluster
__device__ __forceinline__ uint32_t map_to_cta(uint32_t addr, uint32_t cta) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(cta));
  return r;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t cluster_bar) {   // an mbarrier of any CTA of the cluster
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" :: "r"(cluster_bar) : "memory");
}
// a TMA load into this CTA's shared memory whose bytes complete on the barrier `cluster_bar` (the
// leader's: .cta_group::2 lets the barrier be in the peer CTA)
__device__ __forceinline__ void tma_load_2d_pair(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, uint32_t cluster_bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2 [%0], [%1, {%2, %3}], [%4];\n"
               :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(cluster_bar) : "memory");
}
// arrive on the barrier at offset `bar` of every CTA in `mask` once the MMAs issued before completed
__device__ __forceinline__ void mma_commit_pair(uint32_t bar, uint16_t mask) {
  asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;\n"
               :: "r"(bar), "h"(mask) : "memory");
}
constexpr uint16_t PAIR_MASK = ${pair_mask};           // both CTAs of the pair (ranks 0 and 1)
"""

#: The MMA warp's loop over the units of a multi-CTA kernel (one home for the CTA pair, the
#: cluster and the cluster of pairs): ``${issuer}`` the issuing thread's test and comment, ``${first}``
#: / ``${step}`` the unit walk, ``${drained}`` the acc_empty wait's comment, ``${stage_commit}`` /
#: ``${acc_commit}`` the commits releasing a K stage and publishing the accumulator.
_MMA_ISSUER = Template(r"""  } else if (warp == 1) {
    ${issuer}
      uint32_t stage = 0, phase = 0, acc = 0, acc_phase = 0;
      for (uint32_t u = ${first}; u < units; u += ${step}) {
        mbar_wait(acc_empty0 + 8u * acc, acc_phase ^ 1u);   // ${drained}
        tc_fence_after();
        const uint32_t tmem_d = tmem + acc * uint32_t(BN);
        for (uint32_t kt = 0; kt < k_tiles; ++kt) {
          mbar_wait(full0 + 8u * stage, phase);
          tc_fence_after();
#pragma unroll
          for (uint32_t kb = 0; kb < uint32_t(K_BLOCKS); ++kb)
            mma(tmem_d, with_start(desc_a0(kb), base + A_OFFSET + stage * A_STAGE_BYTES),
                with_start(desc_b0(kb), base + B_OFFSET + stage * B_STAGE_BYTES), (kt != 0u) || (kb != 0u));
          ${stage_commit}
          if (++stage == uint32_t(STAGES)) { stage = 0; phase ^= 1u; }
        }
        ${acc_commit}
        if (++acc == ACC_STAGES) { acc = 0; acc_phase ^= 1u; }
      }
    }
""")
_PAIR_ISSUER = dict(
    issuer="if (lane == 0 && rank == 0u) {                 // ---- MMA issuer (the leader): tcgen05.mma.cta_group::2 ----",
    first="pair", step="pairs", drained="both CTAs' epilogues drained stage acc",
    stage_commit="mma_commit_pair(empty0 + 8u * stage, PAIR_MASK);   // both CTAs' stage free once these MMAs completed",
    acc_commit="mma_commit_pair(acc_full0 + 8u * acc, PAIR_MASK);    // both CTAs' accumulator halves are final")
_CLUSTER_ISSUER = dict(
    issuer="if (lane == 0) {                               // ---- MMA issuer: tcgen05.mma into TMEM ----",
    first="first", step="step", drained="the epilogue drained accumulator stage acc",
    stage_commit="mma_commit_mc(empty0 + 8u * stage, peer_mask(rank));   // the stage is free, for every producer writing into it",
    acc_commit="mma_commit(acc_full0 + 8u * acc);          // the accumulator is final")
_PAIR_CLUSTER_ISSUER = dict(
    issuer="if (lane == 0 && half == 0u) {                 // ---- MMA issuer (each pair's leader): tcgen05.mma.cta_group::2 ----",
    first="first", step="step", drained="both CTAs' epilogues drained stage acc",
    stage_commit="mma_commit_pair(empty0 + 8u * stage, commit_mask(rank));   // free for every producer writing into the pair",
    acc_commit="mma_commit_pair(acc_full0 + 8u * acc, uint16_t(PAIR_MASK << rank));   // both CTAs' halves are final")


_PAIR_BODY = r"""// Persistent over CTA pairs: pair p = blockIdx.x / 2 takes tiles p, p + gridDim.x / 2, ... (grouped
// raster order) of TILE_M = 256 x BN. CTA rank r of the pair loads rows 128 r .. of the A tile and rows
// B_ROWS r .. of the B tile into its own shared memory; every byte completes on the leader's (rank 0)
// full barrier. The leader's warp 1 issues tcgen05.mma.cta_group::2 (M 256: the descriptors address both
// CTAs' stages at the same offsets; each CTA's TMEM holds its 128 rows) and commits to the barriers of
// both CTAs (multicast mask PAIR_MASK): empty[s] (each CTA's producer) and acc_full[a] (each CTA's
// epilogue). Each CTA's epilogue warps drain their own TMEM and arrive on the leader's acc_empty[a].
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(THREADS, 1)
""" + _ENTRY + r"""  const uint32_t rank = cluster_rank();            // 0: the leader (issues the MMAs), 1: its peer
  const uint32_t pair = blockIdx.x / uint32_t(CTAS), pairs = gridDim.x / uint32_t(CTAS);
  const uint32_t tiles_m = (uint32_t(M) + TILE_M - 1) / TILE_M, tiles_n = (uint32_t(N) + BN - 1) / BN;
  const uint32_t units = tiles_m * tiles_n;
  const uint32_t k_tiles = (uint32_t(K) + BK - 1) / BK;
  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < uint32_t(STAGES); ++s) { mbar_init(full0 + 8u * s, 1u); mbar_init(empty0 + 8u * s, 1u); }
    for (uint32_t a = 0; a < ACC_STAGES; ++a) { mbar_init(acc_full0 + 8u * a, 1u); mbar_init(acc_empty0 + 8u * a, uint32_t(CTAS) * EPI_WARPS); }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  }
  if (warp == 0) tmem_alloc(slot);                 // cta_group::2: warp 0 of both CTAs together
  tc_fence_before();
  cluster_sync();                                  // both CTAs' barriers initialised before any remote signal
  tc_fence_after();
  const uint32_t tmem = ld_shared(slot);           // lane 0, first allocated column
  if (warp == 0) {
    if (lane == 0) {                               // ---- producer: TMA, this CTA's halves ----
      uint32_t stage = 0, phase = 0;
      const uint32_t full_leader0 = map_to_cta(full0, 0u);   // the leader's full barriers
      for (uint32_t u = pair; u < units; u += pairs) {
        uint32_t tm, tn;
        tile_coords(u, tiles_m, tiles_n, tm, tn);
        for (uint32_t kt = 0; kt < k_tiles; ++kt) {
          mbar_wait(empty0 + 8u * stage, phase ^ 1u);   // released by the leader's commit to both CTAs
          if (rank == 0u) mbar_arrive_expect_tx(full0 + 8u * stage, uint32_t(CTAS) * TX_BYTES);   // both CTAs' bytes
          const uint32_t a_dst = base + A_OFFSET + stage * A_STAGE_BYTES, b_dst = base + B_OFFSET + stage * B_STAGE_BYTES;
#pragma unroll
          for (uint32_t j = 0; j < BOXES; ++j) {
            const int32_t k0 = int32_t(kt * BK + j * BOX_K);
            tma_load_2d_pair(a_dst + j * A_BOX_BYTES, &tmap_a, k0, int32_t(tm * TILE_M + rank * BM), full_leader0 + 8u * stage);
            tma_load_2d_pair(b_dst + j * B_BOX_BYTES, &tmap_b, k0, int32_t(tn * BN + rank * B_ROWS), full_leader0 + 8u * stage);
          }
          if (++stage == uint32_t(STAGES)) { stage = 0; phase ^= 1u; }
        }
      }
      for (uint32_t s = 0; s < uint32_t(STAGES); ++s) {   // tail: every stage released (no commit lands after exit)
        mbar_wait(empty0 + 8u * stage, phase ^ 1u);
        if (++stage == uint32_t(STAGES)) { stage = 0; phase ^= 1u; }
      }
    }
""" + _MMA_ISSUER.substitute(_PAIR_ISSUER) + r"""  } else {
    // ---- epilogue warps: warp w reads TMEM lanes 32 (w % 4) .. + 31 = rows 128 rank + 32 (w % 4) .. of the tile ----
    const uint32_t quad = warp % 4u;
    const bool tma_store = (uint32_t(N) * uint32_t(OUT_BYTES)) % 16u == 0u;
    const uint32_t dbuf0 = base + D_OFFSET + (warp - 2u) * D_BUFS * D_BUF_BYTES;
    const uint32_t acc_empty_leader0 = map_to_cta(acc_empty0, 0u);
    uint32_t acc = 0, acc_phase = 0, nstore = 0;
    for (uint32_t u = pair; u < units; u += pairs) {
      uint32_t tm, tn;
      tile_coords(u, tiles_m, tiles_n, tm, tn);
      mbar_wait(acc_full0 + 8u * acc, acc_phase);
      __syncwarp();                                // tcgen05.ld is .sync.aligned: the warp converged
      tc_fence_after();
      const uint32_t row0 = tm * TILE_M + rank * BM + quad * 32u;   // this CTA's 128 rows of the tile
      const uint32_t row = row0 + lane;
      const uint32_t acc_col = acc * uint32_t(BN);
""" + _DRAIN_PAIR + _SCALAR_TAIL + r"""      if (lane == 0) mbar_arrive_cluster(acc_empty_leader0 + 8u * acc);   // the leader's acc_empty: both CTAs' warps
      if (++acc == ACC_STAGES) { acc = 0; acc_phase ^= 1u; }
    }
    if (lane == 0 && nstore > 0u) bulk_wait_all();
  }
  tc_fence_before();
  cluster_sync();                                  // neither CTA exits while the other may still signal it
  tc_fence_after();
  if (warp == 0) tmem_dealloc(tmem);
}

"""


#: The launch's grid: CTAs or CTA pairs per tile (``${host_units}`` of the host code).
_HOST_UNITS = r"""  const long units = long((M + TILE_M - 1) / TILE_M) * long((N + BN - 1) / BN) * SPLITS;
  const long groups = ctas / CTAS > 0 ? ctas / CTAS : 1;   // CTAs, or CTA pairs (cluster 2 x 1)
  const int grid = int(CTAS * (units < groups ? units : groups));"""
#: The launch's grid with a cluster: clusters of CLUSTER CTAs, one cluster tile each in turn.
_HOST_CLUSTER_UNITS = r"""  const long units = long(((M + BM - 1) / BM + CLUSTER_M - 1) / CLUSTER_M) *
                     long(((N + BN - 1) / BN + CLUSTER_N - 1) / CLUSTER_N);   // cluster tiles
  const long groups = ctas / CLUSTER > 0 ? ctas / CLUSTER : 1;   // clusters of the persistent grid
  const int grid = int(CLUSTER * (units < groups ? units : groups));"""

_CLUSTER_FUNCS = r"""// ----- the cluster (manifest.json "cluster": masks, peers and counts proved there); PTX ISA
// 9.7.9.25 cp.async.bulk.tensor (.multicast::cluster), 9.7.16 tcgen05.commit, "barrier.cluster"
constexpr int CLUSTER_M = ${cluster_m}, CLUSTER_N = ${cluster_n};   // CTAs of a cluster along M, N
constexpr int CLUSTER = CLUSTER_M * CLUSTER_N;     // rank r computes tile (r % CLUSTER_M, r / CLUSTER_M) of its cluster tile
constexpr uint32_t A_SLICE_ROWS = ${a_slice_rows}u, B_SLICE_ROWS = ${b_slice_rows}u;   // rows of one multicast slice
constexpr uint32_t EMPTY_ARRIVALS = ${empty_count}u;   // one tcgen05.commit of every CTA reading a stage this CTA writes
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
__host__ __device__ __forceinline__ uint16_t a_mask(uint32_t r) { (void)r; return uint16_t(${a_masks}); }
__host__ __device__ __forceinline__ uint16_t b_mask(uint32_t r) { (void)r; return uint16_t(${b_masks}); }
__host__ __device__ __forceinline__ uint16_t peer_mask(uint32_t r) { (void)r; return uint16_t(${peer_masks}); }
// a TMA load written at the same shared offset of every CTA in `mask`, its bytes completing on the
// mbarrier at the offset of `bar` in each of them
__device__ __forceinline__ void tma_load_2d_mc(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, uint32_t bar, uint16_t mask) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n"
               :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar), "h"(mask) : "memory");
}
// one arrival on the mbarrier at offset `bar` of every CTA in `mask` once the MMAs issued before completed
__device__ __forceinline__ void mma_commit_mc(uint32_t bar, uint16_t mask) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;\n"
               :: "r"(bar), "h"(mask) : "memory");
}
"""

_CLUSTER_BODY = r"""// Persistent over clusters of CLUSTER_M x CLUSTER_N CTAs: cluster c = blockIdx.x / CLUSTER takes cluster
// tiles c, c + gridDim.x / CLUSTER, ... (grouped raster order); rank r computes tile (r % CLUSTER_M,
// r / CLUSTER_M) of each (tiles past M or N included: zero-filled loads, clipped stores). The CLUSTER_N
// CTAs of one M block each load A_SLICE_ROWS rows of it and multicast them (a_mask), likewise the
// CLUSTER_M CTAs of one N block with B (b_mask); each CTA's full barrier expects the whole stage. Each
// CTA's MMA warp releases a stage to every CTA whose producer writes into it (one tcgen05.commit
// multicast to peer_mask); a producer's empty barrier counts those commits (EMPTY_ARRIVALS).
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1)
""" + _ENTRY + r"""  const uint32_t rank = cluster_rank(), rm = rank % uint32_t(CLUSTER_M), rn = rank / uint32_t(CLUSTER_M);
  const uint32_t first = blockIdx.x / uint32_t(CLUSTER), step = gridDim.x / uint32_t(CLUSTER);
  const uint32_t tiles_m = (uint32_t(M) + BM - 1) / BM, tiles_n = (uint32_t(N) + BN - 1) / BN;
  const uint32_t ctiles_m = (tiles_m + CLUSTER_M - 1) / CLUSTER_M, ctiles_n = (tiles_n + CLUSTER_N - 1) / CLUSTER_N;
  const uint32_t units = ctiles_m * ctiles_n;
  const uint32_t k_tiles = (uint32_t(K) + BK - 1) / BK;
  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < uint32_t(STAGES); ++s) { mbar_init(full0 + 8u * s, 1u); mbar_init(empty0 + 8u * s, EMPTY_ARRIVALS); }
    for (uint32_t a = 0; a < ACC_STAGES; ++a) { mbar_init(acc_full0 + 8u * a, 1u); mbar_init(acc_empty0 + 8u * a, EPI_WARPS); }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  }
  if (warp == 0) tmem_alloc(slot);
  tc_fence_before();
  cluster_sync();                                  // every CTA's barriers initialised before any multicast or commit
  tc_fence_after();
  const uint32_t tmem = ld_shared(slot);           // lane 0, first allocated column
  if (warp == 0) {
    if (lane == 0) {                               // ---- producer: TMA, this rank's slices to its groups ----
      uint32_t stage = 0, phase = 0;
      for (uint32_t u = first; u < units; u += step) {
        uint32_t tm, tn;
        tile_coords(u, ctiles_m, ctiles_n, tm, tn);
        tm = tm * uint32_t(CLUSTER_M) + rm; tn = tn * uint32_t(CLUSTER_N) + rn;   // this rank's tile
        for (uint32_t kt = 0; kt < k_tiles; ++kt) {
          mbar_wait(empty0 + 8u * stage, phase ^ 1u);   // released by the commit of every CTA this stage is written into
          const uint32_t full = full0 + 8u * stage;
          mbar_arrive_expect_tx(full, TX_BYTES);      // the whole stage: this rank's slices and its peers'
          const uint32_t a_dst = base + A_OFFSET + stage * A_STAGE_BYTES, b_dst = base + B_OFFSET + stage * B_STAGE_BYTES;
#pragma unroll
          for (uint32_t j = 0; j < BOXES; ++j) {
            const int32_t k0 = int32_t(kt * BK + j * BOX_K);
            if (CLUSTER_N == 1) tma_load_2d(a_dst + j * A_BOX_BYTES, &tmap_a, k0, int32_t(tm * BM), full);
            else tma_load_2d_mc(a_dst + j * A_BOX_BYTES + rn * A_SLICE_ROWS * (A_BOX_BYTES / uint32_t(BM)), &tmap_a, k0,
                                int32_t(tm * BM + rn * A_SLICE_ROWS), full, a_mask(rank));
            if (CLUSTER_M == 1) tma_load_2d(b_dst + j * B_BOX_BYTES, &tmap_b, k0, int32_t(tn * BN), full);
            else tma_load_2d_mc(b_dst + j * B_BOX_BYTES + rm * B_SLICE_ROWS * (B_BOX_BYTES / uint32_t(BN)), &tmap_b, k0,
                                int32_t(tn * BN + rm * B_SLICE_ROWS), full, b_mask(rank));
          }
          if (++stage == uint32_t(STAGES)) { stage = 0; phase ^= 1u; }
        }
      }
      for (uint32_t s = 0; s < uint32_t(STAGES); ++s) {   // tail: every stage released (no peer's commit lands after exit)
        mbar_wait(empty0 + 8u * stage, phase ^ 1u);
        if (++stage == uint32_t(STAGES)) { stage = 0; phase ^= 1u; }
      }
    }
""" + _MMA_ISSUER.substitute(_CLUSTER_ISSUER) + r"""  } else {
    // ---- epilogue warps: warp w reads TMEM lanes 32 (w % 4) .. + 31 = rows of the tile ----
    const uint32_t quad = warp % 4u;
    const bool tma_store = (uint32_t(N) * uint32_t(OUT_BYTES)) % 16u == 0u;
    const uint32_t dbuf0 = base + D_OFFSET + (warp - 2u) * D_BUFS * D_BUF_BYTES;
    uint32_t acc = 0, acc_phase = 0, nstore = 0;
    for (uint32_t u = first; u < units; u += step) {
      uint32_t tm, tn;
      tile_coords(u, ctiles_m, ctiles_n, tm, tn);
      tm = tm * uint32_t(CLUSTER_M) + rm; tn = tn * uint32_t(CLUSTER_N) + rn;
      mbar_wait(acc_full0 + 8u * acc, acc_phase);
      __syncwarp();                                // tcgen05.ld is .sync.aligned: the warp converged
      tc_fence_after();
      const uint32_t row = tm * BM + quad * 32u + lane;
      const uint32_t acc_col = acc * uint32_t(BN);
""" + _DRAIN.substitute(note0="", note1="", note2="", note3="", store_row="int32_t(tm * BM + quad * 32u)") + _SCALAR_TAIL + r"""      if (lane == 0) mbar_arrive(acc_empty0 + 8u * acc);
      if (++acc == ACC_STAGES) { acc = 0; acc_phase ^= 1u; }
    }
    if (lane == 0 && nstore > 0u) bulk_wait_all();
  }
  tc_fence_before();
  cluster_sync();                                  // no CTA exits while a peer may still multicast into it
  tc_fence_after();
  if (warp == 0) tmem_dealloc(tmem);
}

"""


_PAIR_CLUSTER_FUNCS = r"""// ----- clusters of CTA pairs (manifest.json "cluster": masks, commits and counts proved there): PTX ISA
// 9.7.9.25 cp.async.bulk.tensor (.multicast::cluster .cta_group::2), 9.7.16 tcgen05.commit (.cta_group::2
// .multicast::cluster); the pair of rank r is (r & ~1, r | 1), its leader r & ~1 issues the MMAs
constexpr int CLUSTER_M = ${cluster_m}, CLUSTER_N = ${cluster_n};   // CTAs of a cluster along M, N
constexpr int CLUSTER = CLUSTER_M * CLUSTER_N, PAIR_M = CLUSTER_M / 2;   // pairs along M
constexpr uint32_t A_SLICE_ROWS = ${a_slice_rows}u, B_SLICE_ROWS = ${b_slice_rows}u;   // rows of one multicast slice
constexpr uint32_t EMPTY_ARRIVALS = ${empty_count}u;   // one commit of every leader reading a stage this CTA writes
__host__ __device__ __forceinline__ uint16_t a_mask(uint32_t r) { (void)r; return uint16_t(${a_masks}); }
__host__ __device__ __forceinline__ uint16_t b_mask(uint32_t r) { (void)r; return uint16_t(${b_masks}); }
__host__ __device__ __forceinline__ uint16_t commit_mask(uint32_t r) { (void)r; return uint16_t(${commit_masks}); }
// a TMA load written at the same shared offset of every CTA in `mask`, its bytes completing on the
// mbarrier at the offset of `bar` in each destination's pair leader (`bar`: this pair's leader's)
__device__ __forceinline__ void tma_load_2d_pair_mc(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, uint32_t bar, uint16_t mask) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster.cta_group::2 [%0], [%1, {%2, %3}], [%4], %5;\n"
               :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar), "h"(mask) : "memory");
}
"""

_PAIR_CLUSTER_BODY = r"""// Persistent over clusters of CLUSTER_M x CLUSTER_N CTAs = PAIR_M x CLUSTER_N CTA pairs: cluster c =
// blockIdx.x / CLUSTER takes cluster tiles c, c + gridDim.x / CLUSTER, ... (grouped raster order); the pair
// of rank r (place (r % CLUSTER_M / 2, r / CLUSTER_M)) computes that 256 x BN tile of each, rank r holding
// its half r & 1 (128 rows of A, B_ROWS of B). The CLUSTER_N CTAs holding the same A rows each load
// A_SLICE_ROWS of them and multicast them (a_mask), the PAIR_M CTAs holding the same B rows B_SLICE_ROWS
// (b_mask); every byte completes on the full barrier of its destination's leader, which expects both
// CTAs' stages. Each leader's MMA warp releases a stage to every CTA whose producer writes into its pair
// (one tcgen05.commit.cta_group::2 multicast to commit_mask); a producer's empty barrier counts them.
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1)
""" + _ENTRY + r"""  const uint32_t rank = cluster_rank(), rm = rank % uint32_t(CLUSTER_M), rn = rank / uint32_t(CLUSTER_M);
  const uint32_t leader = rank & ~1u, half = rank & 1u;   // the pair's leader; this CTA's half of the pair tile
  const uint32_t first = blockIdx.x / uint32_t(CLUSTER), step = gridDim.x / uint32_t(CLUSTER);
  const uint32_t tiles_m = (uint32_t(M) + TILE_M - 1) / TILE_M, tiles_n = (uint32_t(N) + BN - 1) / BN;
  const uint32_t ctiles_m = (tiles_m + PAIR_M - 1) / PAIR_M, ctiles_n = (tiles_n + CLUSTER_N - 1) / CLUSTER_N;
  const uint32_t units = ctiles_m * ctiles_n;
  const uint32_t k_tiles = (uint32_t(K) + BK - 1) / BK;
  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < uint32_t(STAGES); ++s) { mbar_init(full0 + 8u * s, 1u); mbar_init(empty0 + 8u * s, EMPTY_ARRIVALS); }
    for (uint32_t a = 0; a < ACC_STAGES; ++a) { mbar_init(acc_full0 + 8u * a, 1u); mbar_init(acc_empty0 + 8u * a, uint32_t(CTAS) * EPI_WARPS); }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  }
  if (warp == 0) tmem_alloc(slot);                 // cta_group::2: warp 0 of both CTAs of each pair together
  tc_fence_before();
  cluster_sync();                                  // every CTA's barriers initialised before any multicast or commit
  tc_fence_after();
  const uint32_t tmem = ld_shared(slot);           // lane 0, first allocated column
  if (warp == 0) {
    if (lane == 0) {                               // ---- producer: TMA, this rank's slices of its pair half ----
      uint32_t stage = 0, phase = 0;
      const uint32_t full_leader0 = map_to_cta(full0, leader);   // the pair leader's full barriers
      for (uint32_t u = first; u < units; u += step) {
        uint32_t tm, tn;
        tile_coords(u, ctiles_m, ctiles_n, tm, tn);
        tm = tm * uint32_t(PAIR_M) + rm / 2u; tn = tn * uint32_t(CLUSTER_N) + rn;   // this pair's tile
        const int32_t a_row = int32_t(tm * TILE_M + half * BM), b_row = int32_t(tn * BN + half * B_ROWS);
        for (uint32_t kt = 0; kt < k_tiles; ++kt) {
          mbar_wait(empty0 + 8u * stage, phase ^ 1u);   // released by the commit of every leader reading what it wrote
          const uint32_t full = full_leader0 + 8u * stage;
          if (half == 0u) mbar_arrive_expect_tx(full0 + 8u * stage, uint32_t(CTAS) * TX_BYTES);   // both CTAs' stages
          const uint32_t a_dst = base + A_OFFSET + stage * A_STAGE_BYTES, b_dst = base + B_OFFSET + stage * B_STAGE_BYTES;
#pragma unroll
          for (uint32_t j = 0; j < BOXES; ++j) {
            const int32_t k0 = int32_t(kt * BK + j * BOX_K);
            if (CLUSTER_N == 1) tma_load_2d_pair(a_dst + j * A_BOX_BYTES, &tmap_a, k0, a_row, full);
            else tma_load_2d_pair_mc(a_dst + j * A_BOX_BYTES + rn * A_SLICE_ROWS * (A_BOX_BYTES / uint32_t(BM)), &tmap_a, k0,
                                     a_row + int32_t(rn * A_SLICE_ROWS), full, a_mask(rank));
            if (PAIR_M == 1) tma_load_2d_pair(b_dst + j * B_BOX_BYTES, &tmap_b, k0, b_row, full);
            else tma_load_2d_pair_mc(b_dst + j * B_BOX_BYTES + (rm / 2u) * B_SLICE_ROWS * (B_BOX_BYTES / uint32_t(B_ROWS)), &tmap_b,
                                     k0, b_row + int32_t((rm / 2u) * B_SLICE_ROWS), full, b_mask(rank));
          }
          if (++stage == uint32_t(STAGES)) { stage = 0; phase ^= 1u; }
        }
      }
      for (uint32_t s = 0; s < uint32_t(STAGES); ++s) {   // tail: every stage released (no leader's commit lands after exit)
        mbar_wait(empty0 + 8u * stage, phase ^ 1u);
        if (++stage == uint32_t(STAGES)) { stage = 0; phase ^= 1u; }
      }
    }
""" + _MMA_ISSUER.substitute(_PAIR_CLUSTER_ISSUER) + r"""  } else {
    // ---- epilogue warps: warp w reads TMEM lanes 32 (w % 4) .. + 31 = rows 128 half + 32 (w % 4) .. of the pair tile ----
    const uint32_t quad = warp % 4u;
    const bool tma_store = (uint32_t(N) * uint32_t(OUT_BYTES)) % 16u == 0u;
    const uint32_t dbuf0 = base + D_OFFSET + (warp - 2u) * D_BUFS * D_BUF_BYTES;
    const uint32_t acc_empty_leader0 = map_to_cta(acc_empty0, leader);
    uint32_t acc = 0, acc_phase = 0, nstore = 0;
    for (uint32_t u = first; u < units; u += step) {
      uint32_t tm, tn;
      tile_coords(u, ctiles_m, ctiles_n, tm, tn);
      tm = tm * uint32_t(PAIR_M) + rm / 2u; tn = tn * uint32_t(CLUSTER_N) + rn;
      mbar_wait(acc_full0 + 8u * acc, acc_phase);
      __syncwarp();                                // tcgen05.ld is .sync.aligned: the warp converged
      tc_fence_after();
      const uint32_t row0 = tm * TILE_M + half * BM + quad * 32u;   // this CTA's 128 rows of the pair tile
      const uint32_t row = row0 + lane;
      const uint32_t acc_col = acc * uint32_t(BN);
""" + _DRAIN_PAIR + _SCALAR_TAIL + r"""      if (lane == 0) mbar_arrive_cluster(acc_empty_leader0 + 8u * acc);   // the leader's acc_empty: both CTAs' warps
      if (++acc == ACC_STAGES) { acc = 0; acc_phase ^= 1u; }
    }
    if (lane == 0 && nstore > 0u) bulk_wait_all();
  }
  tc_fence_before();
  cluster_sync();                                  // no CTA exits while a peer may still multicast or commit into it
  tc_fence_after();
  if (warp == 0) tmem_dealloc(tmem);
}

"""
#: The launch's grid with clusters of CTA pairs: clusters of CLUSTER CTAs, one cluster tile
#: (PAIR_M x CLUSTER_N pair tiles of TILE_M x BN) each in turn.
_HOST_PAIR_CLUSTER_UNITS = r"""  const long units = long(((M + TILE_M - 1) / TILE_M + PAIR_M - 1) / PAIR_M) *
                     long(((N + BN - 1) / BN + CLUSTER_N - 1) / CLUSTER_N);   // cluster tiles
  const long groups = ctas / CLUSTER > 0 ? ctas / CLUSTER : 1;   // clusters of the persistent grid
  const int grid = int(CLUSTER * (units < groups ? units : groups));"""


def _tmem_ld() -> str:
    regs = ", ".join(f"%{i}" for i in range(LD_NUM))
    outs = ", ".join(f'"=r"(v[{i}])' for i in range(LD_NUM))
    return ("__device__ __forceinline__ void tmem_ld(uint32_t* v, uint32_t taddr) {\n"
            f'  asm volatile("tcgen05.ld.sync.aligned.32x32b.x{LD_NUM}.b32 {{{regs}}}, [%{LD_NUM}];\\n"\n'
            f'               : {outs}\n               : "r"(taddr) : "memory");\n}}')


def _pack_out(out: str) -> str:
    """``pack_out(v, i, col0, bias, N)``: the 32-bit word of the staged D row starting at loaded
    register ``i`` (f32: one value; 16-bit: registers i, i + 1, the first in the low half)."""
    head = ("__device__ __forceinline__ uint32_t pack_out(const uint32_t* v, uint32_t i, uint32_t col0, "
            "const float* __restrict__ bias, int N) {\n")
    if out == "f32":
        return head + "  return __float_as_uint(epilogue(__uint_as_float(v[i]), bias, col0 + i, N));\n}"
    return head + ("  const float lo = epilogue(__uint_as_float(v[i]), bias, col0 + i, N);\n"
                   "  const float hi = epilogue(__uint_as_float(v[i + 1u]), bias, col0 + i + 1u, N);\n"
                   "  uint32_t x;\n"
                   f'  asm("cvt.rn.{out}x2.f32 %0, %1, %2;" : "=r"(x) : "f"(hi), "f"(lo));   // first source: upper half\n'
                   "  return x;\n}")


def render_tcgen05_cuda(man: Tcgen05Manifest) -> str:
    """``kernel.cu`` of the sm_100a GEMM, written from the manifest (obligations at its head).

    >>> src = render_tcgen05_cuda(build_tcgen05_manifest("bf16", tile=(128, 128, 64), stages=4))
    >>> "tcgen05.mma.cta_group::1.kind::f16" in src, "32x32b.x32" in src
    (True, True)
    """
    man = typed_tcgen05(man)
    g = require_gemm_manifest(man.gemm)
    head = [f"// verilayout emit gemm: {man.tag} (sm_100a; compiled and checked here, never run: "
            "no sm_100 GPU)",
            f"// D[M,N] ({epilogue_words(g)}, row-major) = A[M,K] @ B[N,K]^T, A and B row-major "
            f"{man.dtype} (both K-major); tcgen05.mma, f32 accumulator in tensor memory; "
            f"split-K {man.splits}.",
            "// Generated from manifest.json by verilayout.emit.tcgen05_gemm; do not edit by hand.",
            "//", *obligation_block(g), "",
            "#include <cuda.h>", "#include <cuda_runtime.h>", "#include <cstddef>", "#include <cstdint>", "#include <cstring>"]
    body = (_PAIR_CLUSTER_BODY if man.ctas == 2 and man.cluster else _PAIR_BODY if man.ctas == 2
            else _CLUSTER_BODY if man.cluster else _BODY)
    return "\n".join(head) + "\n" + Template(_HELPERS + body + _HOST).substitute(_template_values(man, g))


def _template_values(man: Tcgen05Manifest, g) -> dict:
    """Law: every ``${...}`` of the kernel templates, from the typed manifest (``g``: its GEMM
    view for the epilogue helpers shared with sm_90a)."""
    t, d, ctas, out = man.tma, man.d_store, man.ctas, man.epilogue.out
    return {"tag": man.tag, "bm": man.bm // ctas, "bn": man.bn, "ctas": ctas, "cta_group": ctas,
            "pair_funcs": _pair_funcs(man),
            "bk": man.bk, "stages": man.stages, "k_inst": man.k_inst, "k_blocks": man.k_blocks,
            "instruction": man.instruction, "eb": man.elem_bytes,
            "a_stage": man.a.stage_bytes, "b_stage": man.b.stage_bytes,
            "b_off": man.b.offset, "bar_off": man.barriers.offset,
            "smem_bytes": man.smem.bytes, "box_k": t.box_k, "boxes": t.boxes,
            "swizzle": t.swizzle, "swizzle_code": t.swizzle_code, "a_box": t.a_box_bytes,
            "b_box": t.b_box_bytes, "tx": t.tx_bytes, "tmem_cols": man.tmem.columns,
            "idesc": f"{man.idesc.value:#010x}", "ld_num": man.tmem.ld_num,
            "elem_t": ELEM_T[man.elem_bytes], "tma_dtype": TMA_DTYPE[man.dtype],
            "desc_a": select_expr([u64_literal(v) for v in man.a.descriptors], "kb"),
            "desc_b": select_expr([u64_literal(v) for v in man.b.descriptors], "kb"),
            "tmem_ld": _tmem_ld(), "threads": man.threads, "acc_stages": man.tmem.acc_stages,
            "d_off": d.offset, "d_row": d.row_bytes, "d_span": d.row_bytes, "d_swizzle": d.swizzle,
            "d_swizzle_code": TMA_SWIZZLE_CODES[d.swizzle], "d_tma_dtype": D_MAP[out][0],
            "pack_out": _pack_out(out), "group_m": man.group_m, "splits": man.splits, **epilogue_subs(g),
            "epilogue_funcs": epilogue_source(g),
            "reduce_kernel": REDUCE_KERNEL if man.splits > 1 else "",
            "split_workspace": SPLIT_WORKSPACE,
            "reduce_launch": REDUCE_LAUNCH if man.splits > 1 else "", **_cluster_values(man)}


def _pair_funcs(man: Tcgen05Manifest) -> str:
    """Law: the device functions of the CTA pair or of the cluster (``""`` for one CTA)."""
    cl = man.cluster
    def masks(xs):
        return select_expr([f"{x:#x}u" for x in xs], "r")
    if man.ctas == 2:
        pair = Template(_PAIR_FUNCS).substitute(pair_mask=man.cta_pair.commit_mask)
        return pair if cl is None else pair + Template(_PAIR_CLUSTER_FUNCS).substitute(
            cluster_m=cl.m, cluster_n=cl.n, a_slice_rows=cl.a_slice_rows, b_slice_rows=cl.b_slice_rows,
            empty_count=cl.empty_count, a_masks=masks(cl.a_masks), b_masks=masks(cl.b_masks),
            commit_masks=masks(cl.commits))
    if cl is None:
        return ""
    return Template(_CLUSTER_FUNCS).substitute(
        cluster_m=cl.m, cluster_n=cl.n, a_slice_rows=cl.a_slice_rows, b_slice_rows=cl.b_slice_rows,
        empty_count=cl.empty_count, a_masks=masks(cl.a_masks), b_masks=masks(cl.b_masks),
        peer_masks=masks(cl.peers))


def _cluster_values(man: Tcgen05Manifest) -> dict:
    """Law: the host code's tensor-map box rows and grid: a slice's rows and clusters of CTAs
    with a cluster; otherwise the text of the kernel without one."""
    if man.cluster is None:
        return {"a_box_rows": "BM", "b_box_rows": "B_ROWS", "host_units": _HOST_UNITS}
    return {"a_box_rows": "A_SLICE_ROWS", "b_box_rows": "B_SLICE_ROWS",
            "host_units": _HOST_PAIR_CLUSTER_UNITS if man.ctas == 2 else _HOST_CLUSTER_UNITS}


def emit_tcgen05_gemm(dtype: str, tile: tuple[int, int, int] | None = None, stages: int = 4, **options):
    """The files of an sm_100a GEMM: manifest, ``kernel.cu``, ``main.cu`` (the sm_90a host
    program's checks and timing, built for sm_100a), ``Makefile``, ``README.md``. ``options``:
    ``splits``, ``out``, ``bias``, ``activation`` of :func:`build_tcgen05_manifest`.

    >>> sorted(emit_tcgen05_gemm("f16", tile=(128, 64, 64), stages=3).files)[:3]
    ['Makefile', 'README.md', 'kernel.cu']
    """
    return emission_of_tcgen05(build_tcgen05_manifest(dtype, tile=tile, stages=stages, **options))


def emission_of_tcgen05(man: Tcgen05Manifest | Mapping) -> Emission:
    """The files of an sm_100a GEMM written from its manifest (a JSON object is read once into
    :class:`Tcgen05Manifest`); ``Emission.manifest`` is the JSON object ``manifest.json`` holds.

    >>> e = emission_of_tcgen05(build_tcgen05_manifest("tf32", tile=(128, 64, 32), stages=4))
    >>> "Not run" in e.files["README.md"]
    True
    """
    man = typed_tcgen05(man)
    g, dtype = man.gemm, man.dtype
    arch = "-gencode=arch=compute_100a,code=sm_100a"
    main = render_gemm_main(g).replace("-gencode=arch=compute_90a,code=sm_90a", arch)
    make = "\n".join([f"# verilayout emit gemm: {man.tag}", "NVCC ?= nvcc",
                      f"FLAGS ?= -O3 -std=c++17 {arch}", "gemm: main.cu kernel.cu",
                      "\t$(NVCC) $(FLAGS) -o gemm main.cu -ldl", "kernel.cubin: kernel.cu",
                      "\t$(NVCC) $(FLAGS) -cubin -Xptxas -v -o kernel.cubin kernel.cu", ""])
    readme = "\n".join([
        f"# {man.tag}", "",
        f"`D[M,N] = A[M,K] @ B[N,K]^T` on **sm_100a** (Blackwell): {dtype} inputs, f32 accumulator "
        f"in tensor memory, `{man.instruction}` (M {man.bm}, N {man.bn}), TMA ring of "
        f"{man.stages} stages; a persistent grid (min(SMs, units) CTAs, grouped raster of "
        f"{man.group_m} tile rows) walks the {man.bm} x {man.bn} tiles"
        + (" by CTA pairs (cluster 2 x 1: each CTA loads 128 rows of A and half of B, the leader "
           "issues the MMAs and commits to both CTAs' barriers, each CTA's epilogue stores its 128 "
           "rows)" if man.cta_pair and not man.cluster else "")
        + (f" by clusters of {man.cluster.m} x {man.cluster.n} CTAs = {man.cluster.m // 2} x {man.cluster.n} "
           f"CTA pairs (each CTA holds 128 rows of A and {man.bn // 2} of B, loads {man.cluster.a_slice_rows} "
           f"and {man.cluster.b_slice_rows} of them and multicasts them to the CTAs holding the same rows, "
           "the bytes completing on each destination's pair leader; each leader issues the "
           "cta_group::2 MMAs and frees a stage with one tcgen05.commit multicast to every CTA that "
           "wrote into its pair)" if man.cta_pair and man.cluster else "")
        + (f" by clusters of {man.cluster.m} x {man.cluster.n} CTAs (each CTA loads "
           f"{man.cluster.a_slice_rows} rows of the A tile and {man.cluster.b_slice_rows} of the B tile "
           "and multicasts them to the CTAs sharing that block; each MMA warp frees a stage with one "
           "tcgen05.commit multicast to the CTAs that wrote it)" if man.cluster and not man.cta_pair else "")
        + (f" and K slices (split-K {man.splits}: f32 partial sums to a workspace, then one "
           "reduction kernel that adds the slices and applies the epilogue)"
           if man.splits > 1 else "") + "; warp 0 loads by TMA, warp 1 issues the MMAs "
        "into one of two TMEM accumulator stages, warps 2-5 drain the other (the epilogue overlaps "
        "the next tile's MMAs)" + ("" if man.splits > 1 else
                                  " and store D through shared memory with TMA stores")
        + f"; D = `{epilogue_words(g)}`.", "",
        "**Not run: no sm_100 GPU was available.** What was checked without one: every obligation "
        "at the top of `kernel.cu` (descriptors, instruction descriptor, TMEM allocation and the "
        "`tcgen05.ld` layout, the split-K slices, the schedule, the staging swizzle), ptxas for "
        "sm_100a with 0 spills, and the independent checks on the PTX "
        "(`verilayout.simulate.tcgen05_check`: each slice's K-tiles and the reduction; the "
        "epilogue's values, edge predication and bias reads on chosen TMEM values; the TMEM "
        "accumulator ring and the TMA store order over every interleaving or byte; the tile cover "
        "of every grid size). Its speed is unmeasured.", "",
        f"    nvcc -O3 -std=c++17 {arch} -o gemm main.cu -ldl && ./gemm", ""])
    data = man.to_dict()
    return Emission(data, {"manifest.json": json.dumps(data, indent=1) + "\n",
                          "kernel.cu": render_tcgen05_cuda(man), "main.cu": main,
                          "Makefile": make, "README.md": readme})
