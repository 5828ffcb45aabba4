"""The plan (manifest) of a persistent, warp-specialized Hopper GEMM: every layout, descriptor,
tensor map and fragment it uses, each with its proof.

Problem contract: ``D[M, N] = A[M, K] @ B[N, K]^T`` with A, B and D row-major (A and B both
K-major: the "TN" GEMM that TMA and wgmma read without transposes for every dtype), D in f32.
Any M, N, K >= 1: TMA zero-fills the loads beyond M, N, K and the epilogue predicates its stores;
each row of A and B must start on 16 bytes (``K * bytes(dtype) % 16 == 0``, a TMA rule).

What is proved here (listed at the top of ``kernel.cu``):

* the shared layout of each stage of A (``BM x BK``) and B (``BN x BK``) is CuTe's
  ``tile_to_shape`` of the K-major swizzle atom (PTX Table 38), the widest swizzle whose row
  (32/64/128 bytes) divides ``BK`` bytes;
* the TMA boxes (inner ``swizzle bytes / element`` elements, outer ``BM`` or ``BN`` rows, placed
  at ``j * rows * swizzle bytes`` for K-column ``j``) write element ``(mn, k)`` at the byte the
  layout names, for every coordinate (exhaustive: TMA's ``SWIZZLE_{32,64,128}B`` pattern XORs the
  16-byte chunk index with the 128-byte row index modulo the span, CUDA Programming Guide,
  "TMA swizzle");
* each consumer warpgroup's descriptor of each K-block (A: its 64 rows; B: all ``BN``) reads the
  byte the layout put there (:func:`verilayout.synth.descriptor.derive_descriptor`), at every
  stage base (re-derived per stage);
* the accumulator fragment is the PTX ``m64nNk*`` D table (:func:`verilayout.hw.nvidia.wgmma.fragment`),
  and each even element and the next are adjacent columns of one row (the vector store).

>>> p = build_gemm_manifest("f16", tile=(128, 128, 64), stages=3)
>>> p["swizzle"], p["tma"]["box_k"], p["consumers"], p["threads"]
('128B', 64, 2, 384)
>>> sorted({o["status"] for o in p["obligations"]})
['proved']
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from verilayout.core.cute import ComposedLayout, tile_to_shape
from verilayout.dtypes import bytes_of
from verilayout.emit.gemm_cluster import cluster_plan, require_cluster
from verilayout.errors import LayoutError
from verilayout.hw.nvidia.wgmma import fragment, k_of_dtype, swizzle_atom, valid_n
from verilayout.prove.wgmma import intended_tile
from verilayout.synth.descriptor import derive_descriptor

__all__ = ["tile_coords", "GEMM_FORMAT", "GEMM_DTYPES", "MAX_SMEM_BYTES", "TMA_SWIZZLE_CODES", "require_tile",
           "default_tile", "swizzle_for", "tma_box_byte", "build_gemm_manifest", "gemm_tag",
           "smem_bytes", "split_bounds", "split_obligation", "DEFAULT_GROUP_M", "OUT_DTYPES", "ACTIVATIONS",
           "Barriers", "SmemBudget", "TmaBoxes", "StorePlan",
           "GemmManifest", "StageOperand", "Epilogue", "ClusterShape", "SCHEDULES", "TURN_BYTES",
           "TURN_COUNT", "require_schedule", "pingpong_turns", "pingpong_units", "pingpong_obligation"]

GEMM_FORMAT = "verilayout-emit-gemm/1"
#: Multiplicand types the GEMM emitter writes (f32 accumulator, f32 D).
GEMM_DTYPES = ("f16", "bf16", "e4m3", "tf32")
#: Dynamic shared memory one sm_90 CTA may use (227 KiB).
MAX_SMEM_BYTES = 232448
#: ``CUtensorMapSwizzle`` values of cuda.h (NONE, 32B, 64B, 128B).
TMA_SWIZZLE_CODES = {"none": 0, "32B": 1, "64B": 2, "128B": 3}
#: Output types of D and the epilogue's activations (GELU: the tanh form; SiLU: x sigmoid(x)
#: with sigmoid(x) = (1 + tanh(x / 2)) / 2; both through tanh.approx.f32).
OUT_DTYPES = ("f32", "f16", "bf16")
ACTIVATIONS = ("none", "relu", "gelu", "silu")
#: Tile rows visited together by the persistent scheduler unless the problem's choice says otherwise.
DEFAULT_GROUP_M = 8
SWIZZLE_SPAN = {"32B": 32, "64B": 64, "128B": 128}


def default_tile(dtype: str) -> str:
    """128 x 256 x (128 bytes of K): one 128-byte swizzle row of K per stage.

    >>> default_tile("f16"), default_tile("e4m3"), default_tile("tf32")
    ('128x256x64', '128x256x128', '128x256x32')
    """
    return f"128x256x{128 // bytes_of(dtype)}"


def require_tile(tile: object) -> tuple[int, int, int]:
    """``tile`` if it is ``(BM, BN, BK)``, three integers of 1 to 4 digits, else ``LayoutError``
    (the spelling ``128x256x64`` is read at the door: :func:`verilayout.frontends.names.parse_tile`);
    the values are checked against the kernel's limits where the manifest is built.

    >>> require_tile((128, 256, 64))
    (128, 256, 64)
    >>> require_tile((128, 256))
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: --tile (128, 256): expected BMxBNxBK such as 128x256x64
    """
    if (isinstance(tile, tuple) and len(tile) == 3
            and all(type(v) is int and 0 <= v < 10_000 for v in tile)):
        return tile
    raise LayoutError(f"--tile {tile!r}: expected BMxBNxBK such as 128x256x64")


def swizzle_for(k_bytes: int) -> str:
    """The widest K-major swizzle whose row divides ``k_bytes`` (the bytes of K per stage).

    >>> swizzle_for(128), swizzle_for(64), swizzle_for(256), swizzle_for(32)
    ('128B', '64B', '128B', '32B')
    """
    for sw in ("128B", "64B", "32B"):
        if k_bytes % SWIZZLE_SPAN[sw] == 0:
            return sw
    raise LayoutError(f"{k_bytes} bytes of K per stage is not a multiple of 32 bytes; no "
                      "swizzled K-major layout holds it")


def tma_box_byte(row: int, col_byte: int, span: int) -> int:
    """Byte offset within a TMA box (rows of ``span`` bytes, box start 1024-aligned) where
    ``SWIZZLE_<span>B`` puts byte ``col_byte`` of row ``row``: the 16-byte chunk index is XORed
    with bits 7.. of the unswizzled offset, modulo ``span / 16`` chunks.

    >>> tma_box_byte(1, 0, 128), tma_box_byte(8, 16, 128), tma_box_byte(2, 0, 64)
    (144, 1040, 144)
    """
    off = row * span + col_byte
    mask = span // 16 - 1
    return off ^ (((off >> 7) & mask) << 4)


def gemm_tag(dtype: str, bm: int, bn: int, bk: int, stages: int, group_m: int = DEFAULT_GROUP_M,
             splits: int = 1, epilogue: tuple = ("f32", False, "none"),
             cluster: tuple = (1, 1), swap_ab: bool = False, schedule: str = "cooperative") -> str:
    """A C identifier naming one configuration (``_g<G>`` for a raster other than the default,
    ``_k<S>`` for split-K, then the output type, ``_bias`` and the activation when not plain f32,
    the cluster, ``_swapab`` where the kernel computes ``D^T = B A^T``, ``_pp`` for ping-pong
    consumer warpgroups).

    >>> gemm_tag("bf16", 128, 256, 64, 4), gemm_tag("bf16", 64, 128, 64, 7, 1, 4)
    ('gemm_bf16_128x256x64_s4', 'gemm_bf16_64x128x64_s7_g1_k4')
    >>> gemm_tag("bf16", 128, 256, 64, 4, epilogue=("bf16", True, "gelu"))
    'gemm_bf16_128x256x64_s4_obf16_bias_gelu'
    >>> gemm_tag("bf16", 128, 256, 64, 4, cluster=(2, 1))
    'gemm_bf16_128x256x64_s4_c2x1'
    >>> gemm_tag("bf16", 64, 256, 64, 6, schedule="pingpong")
    'gemm_bf16_64x256x64_s6_pp'
    """
    out, bias, act = epilogue
    tail = (f"_g{group_m}" if group_m != DEFAULT_GROUP_M else "") + \
        (f"_k{splits}" if splits > 1 else "") + (f"_o{out}" if out != "f32" else "") + \
        ("_bias" if bias else "") + (f"_{act}" if act != "none" else "") + \
        (f"_c{cluster[0]}x{cluster[1]}" if tuple(cluster) != (1, 1) else "") + \
        ("_swapab" if swap_ab else "") + ("_pp" if schedule == "pingpong" else "")
    return f"gemm_{dtype}_{bm}x{bn}x{bk}_s{stages}{tail}"


def smem_bytes(dtype: str, bm: int, bn: int, bk: int, stages: int) -> int:
    """Shared bytes of the ring: ``stages`` x (A + B stage) + 16 bytes of mbarriers per stage
    (before the 1024-byte alignment slack).

    >>> smem_bytes("bf16", 128, 256, 64, 4)
    196672
    """
    eb = bytes_of(dtype)
    return stages * (bm + bn) * bk * eb + 16 * stages


def split_bounds(s: int, k_tiles: int, splits: int) -> tuple[int, int]:
    """K-tiles ``[begin, end)`` of slice ``s``: ``(s k_tiles / S, (s + 1) k_tiles / S)`` rounded
    down (the formula of ``kernel.cu``); slices may be empty when ``k_tiles < S``.

    >>> [split_bounds(s, 10, 4) for s in range(4)]
    [(0, 2), (2, 5), (5, 7), (7, 10)]
    """
    return s * k_tiles // splits, (s + 1) * k_tiles // splits


def split_obligation(splits: int, limit: int = 4096) -> dict:
    """Exhaustive over k_tiles 1..limit: the slices are contiguous, disjoint and cover
    [0, k_tiles), so the reduction of the S partial sums adds each K-tile exactly once.

    >>> o = split_obligation(3, limit=64)
    >>> o["status"], o["reason"]
    ('proved', 'every kt in 1..64')
    """
    bad = None
    for kt in range(1, limit + 1):
        b = [split_bounds(s, kt, splits) for s in range(splits)]
        ok = b[0][0] == 0 and b[-1][1] == kt and all(b[i][1] == b[i + 1][0] for i in
                                                       range(splits - 1)) \
            and all(x <= y for x, y in b)
        if not ok:
            bad = (kt, b)
            break
    return {"claim": f"split-K: the {splits} K slices [s*kt/{splits}, (s+1)*kt/{splits}) are "
                     "contiguous, disjoint and cover the K-tiles [0, kt): each K-tile is summed in "
                     "exactly one slice", "status": "proved" if bad is None else "counterexample",
            "method": "exhaustive",
            "reason": (f"every kt in 1..{limit}" if bad is None else
                       f"kt = {bad[0]}: slices {bad[1]}")}


#: Largest staging chunk of the TMA-store epilogue, bytes per consumer warpgroup.
EPI_CHUNK_BYTES = 8192


def store_plan(bm: int, bn: int, out: str, swap_ab: bool, splits: int, offset: int) -> dict:
    """The TMA-store epilogue of one configuration: each consumer warpgroup stages its 64 x BN
    accumulators chunk by chunk in its own shared buffer (at ``offset + c * bytes``), in D's
    orientation and output type, and one thread stores each chunk with
    ``cp.async.bulk.tensor.2d.global.shared::cta`` (boxes of ``span / out bytes`` columns x
    ``rows`` rows of D, ``SWIZZLE_<span>B``). A chunk is ``rows x cols`` of D: 64 x (span / out
    bytes) columns of the accumulator (not swapped), or with swap-AB ``cw`` accumulator columns
    (D's rows) x 64 (D's columns). Split-K kernels write f32 partial sums to the workspace with
    plain stores (``kind`` ``"pointer"``).

    >>> p = store_plan(128, 256, "bf16", False, 1, 200704)
    >>> p["kind"], p["rows"], p["cols"], p["span"], p["chunks"], p["bytes"]
    ('tma', 64, 64, 128, 4, 8192)
    >>> q = store_plan(64, 48, "f32", True, 1, 0)
    >>> q["rows"], q["cols"], q["boxes"], q["chunks"]
    (16, 64, 2, 3)
    """
    ob = bytes_of(out)
    if splits > 1:
        return {"kind": "pointer", "why": "split-K: f32 partial sums to the workspace"}
    if swap_ab:
        span = SWIZZLE_SPAN[swizzle_for(64 * ob)]
        limit = EPI_CHUNK_BYTES // (64 * ob)
        cw = max(d for d in range(16, bn + 1, 16) if bn % d == 0 and d <= max(16, limit))
        rows, cols = cw, 64
    else:
        span = SWIZZLE_SPAN[swizzle_for(bn * ob)]
        cw = span // ob
        rows, cols = 64, cw
    boxes = cols * ob // span
    return {"kind": "tma", "out_bytes": ob, "rows": rows, "cols": cols, "acc_cols": cw,
            "chunks": bn // cw, "span": span, "swizzle": f"{span}B",
            "swizzle_code": TMA_SWIZZLE_CODES[f"{span}B"], "box": [span // ob, rows],
            "boxes": boxes, "box_bytes": rows * span, "bytes": rows * cols * ob,
            "offset": offset}


def staging_obligation(plan: dict) -> dict:
    """Every (row, col) of a staged chunk: the byte the epilogue writes (box ``col bytes //
    span`` at ``box * rows * span``, then TMA's swizzle within the box) is where the TMA store's
    box reads D(row, col), and no two elements share a byte (exhaustive).

    >>> staging_obligation(store_plan(128, 64, "f32", False, 1, 0))["status"]
    'proved'
    """
    rows, cols, ob, span = plan["rows"], plan["cols"], plan["out_bytes"], plan["span"]
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    box, cb = (c * ob) // span, (c * ob) % span
    mine = box * rows * span + tma_box_byte(r, cb, span)
    # TMA's view: box b holds rows x span bytes; (row, byte) at the swizzled offset of the box
    tma = box * plan["box_bytes"] + ((r * span + cb) ^ ((((r * span + cb) >> 7) & (span // 16 - 1)) << 4))
    ok = bool((mine == tma).all()) and len(np.unique(mine)) == rows * cols
    return {"claim": f"TMA-store staging: element (row, col) of each {rows}x{cols} chunk of D is "
                     f"written at the byte box {plan['boxes']} x ({plan['box'][0]} x {rows}, "
                     f"SWIZZLE_{plan['swizzle']}) stores to D(row, col); distinct bytes",
            "status": "proved" if ok else "counterexample", "method": "exhaustive",
            "reason": f"all {rows * cols} elements"}


def _check_config(dtype: str, bm: int, bn: int, bk: int, stages: int, group_m: int = 8,
                  splits: int = 1) -> None:
    if dtype not in GEMM_DTYPES:
        raise LayoutError(f"--dtype {dtype!r}: emit gemm writes {', '.join(GEMM_DTYPES)}")
    if bm not in (64, 128):
        raise LayoutError(f"--tile: BM {bm} must be 64 (one consumer warpgroup) or 128 (two)")
    if bn not in valid_n("f32") or bn % 16:
        raise LayoutError(f"--tile: BN {bn} must be a multiple of 16 from 16 to 256 (wgmma N)")
    kx = k_of_dtype(dtype)
    if bk <= 0 or bk % kx:
        raise LayoutError(f"--tile: BK {bk} must be a positive multiple of the {dtype} wgmma K ({kx})")
    if not isinstance(stages, int) or isinstance(stages, bool) or not 2 <= stages <= 8:
        raise LayoutError(f"--stages {stages!r}: expected 2 to 8")
    if not isinstance(group_m, int) or isinstance(group_m, bool) or not 1 <= group_m <= 64:
        raise LayoutError(f"--group-m {group_m!r}: expected 1 to 64 tile rows")
    if not isinstance(splits, int) or isinstance(splits, bool) or not 1 <= splits <= 16:
        raise LayoutError(f"--split-k {splits!r}: expected 1 to 16")


def stage_tile(dtype: str, rows: int, bk: int, sw: str) -> ComposedLayout:
    """One K-major ``rows x bk`` stage tiled from the ``sw`` swizzle atom (a CuTe layout)."""
    return tile_to_shape(swizzle_atom(sw, "K", dtype).cute_layout(), (rows, bk))


def tma_obligation(name: str, layout: ComposedLayout, dtype: str, rows: int, bk: int, sw: str) -> dict:
    """Every (mn, k) of the stage: the byte the TMA boxes write equals the layout's byte."""
    text = str(layout)
    eb = bytes_of(dtype)
    span = SWIZZLE_SPAN[sw]
    box_k = span // eb
    table = intended_tile(layout, dtype=dtype, base_address=0).fn.table() // 8
    mn, k = np.meshgrid(np.arange(rows), np.arange(bk), indexing="ij")
    j, kk = k // box_k, k % box_k
    off = mn * span + kk * eb
    tma = j * rows * span + (off ^ (((off >> 7) & (span // 16 - 1)) << 4))
    bad = np.argwhere(tma != table)
    status = "proved" if bad.size == 0 else "counterexample"
    reason = (f"all {rows * bk} coordinates agree" if bad.size == 0 else
              f"(mn={bad[0][0]}, k={bad[0][1]}): TMA writes byte {int(tma[tuple(bad[0])])}, "
              f"the layout says {int(table[tuple(bad[0])])}")
    return {"claim": f"TMA boxes of {name} ({box_k} x {rows}, SWIZZLE_{sw}, box j at "
                     f"j*{rows * span} B) write every (mn, k) of the {rows}x{bk} stage at the byte "
                     f"of {text}", "status": status, "method": "exhaustive", "reason": reason}


def _descriptors(name: str, layout: ComposedLayout, dtype: str, bk: int, mn: int, blocks: int,
                 stage_offsets: list[int]) -> tuple[list[list[str]], list[dict]]:
    """Descriptors at base 0 per (mn block, K-block), each proved; and re-derived at every
    stage base, where it must equal the base-0 value plus ``base >> 4`` in the start field."""
    kx = k_of_dtype(dtype)
    out, obls = [], []
    for mb in range(blocks):
        row = []
        for kb in range(bk // kx):
            plan = derive_descriptor(layout, dtype=dtype, major="K", k_block=kb, mn=mn, mn_block=mb)
            d0 = plan.descriptor.value
            status, reason = plan.verdict.status, plan.verdict.reason
            for off in (o for o in stage_offsets if o):  # base 0 is d0 itself; B's stage 0 is not
                p = derive_descriptor(layout, dtype=dtype, major="K", k_block=kb, mn=mn,
                                      mn_block=mb, base_address=off)
                if p.verdict.status != "proved" or p.descriptor.value != d0 + (off >> 4):
                    status, reason = "counterexample", (f"at stage base {off:#x} the proved "
                                                        f"descriptor is {p.descriptor.value:#x}")
            row.append(f"{d0:#018x}")
            obls.append({"claim": f"descriptor {name}[{mb}][{kb}] = {d0:#018x} (+ stage base >> 4) "
                                  f"reads rows {mb * mn}..{mb * mn + mn - 1}, K-block {kb} of every "
                                  f"stage", "status": status, "method": plan.verdict.method,
                         "reason": f"{reason}; re-derived at {len(stage_offsets)} stage bases"})
        out.append(row)
    return out, obls


def _fragment_obligation(bn: int, dtype: str) -> tuple[dict, dict]:
    f = fragment((64, bn, k_of_dtype(dtype)), "D", dtype, acc="f32")
    rc = f.layout
    bases = {d: [list(b) for b in v] for d, v in rc.bases.items()}
    ok = True
    for e in range(0, f.registers, 2):                   # e and e+1: same row, next column
        r0 = c0 = r1 = c1 = 0
        for bit, (r, c) in enumerate(bases["register"]):
            if e >> bit & 1:
                r0, c0 = r0 ^ r, c0 ^ c
            if (e + 1) >> bit & 1:
                r1, c1 = r1 ^ r, c1 ^ c
        ok &= (r1 == r0 and c1 == c0 + 1 and c0 % 2 == 0)
    frag = {"bases": bases, "registers": f.registers, "rows": f.rows, "cols": f.cols}
    obl = {"claim": f"accumulator element e of thread t is D(row, col) of the PTX m64n{bn} f32 D "
                    "fragment; elements 2i and 2i+1 are columns c, c+1 (c even) of one row",
           "status": "proved" if ok else "counterexample", "method": "exhaustive",
           "reason": f"{f.registers} registers x 128 threads read off the fragment bases"}
    return frag, obl


def build_gemm_manifest(dtype: str, tile: tuple[int, int, int] | None = None, stages: int = 4,
                        arch: str = "sm_90a", group_m: int = DEFAULT_GROUP_M,
                        splits: int = 1, out: str = "f32", bias: bool = False,
                        activation: str = "none", cluster: tuple[int, int] = (1, 1),
                        swap_ab: bool = False, schedule: str = "cooperative") -> dict:  # long: one manifest, every field
    """Everything ``kernel.cu`` of ``emit gemm`` is generated from, with its proofs.

    ``schedule``: ``"cooperative"`` (the consumer warpgroups split each tile's rows, 64 each) or
    ``"pingpong"`` (a 64-row tile; two consumer warpgroups each own whole tiles, alternately, and
    hand each other the tensor cores and the epilogue through :func:`pingpong_turns`' mbarriers,
    so one's epilogue runs under the other's MMA: the ping-pong kernel schedule of CUTLASS's
    ``sm90_gemm_tma_warpspecialized_pingpong.hpp``). Only ping-pong manifests carry the
    ``consumer_schedule`` field.

    ``swap_ab``: the kernel computes ``D^T[N, M] = B[N, K] @ A[M, K]^T`` (its A operand, the
    64-row wgmma side, is the problem's B; its B operand is A), so a small M (decode) becomes the
    tile's N instead of zero rows of a 64-row wgmma; the epilogue writes element ``(n, m)`` of
    its product at ``D(m, n)``.

    >>> m = build_gemm_manifest("e4m3", tile=(128, 256, 128), stages=4)
    >>> m["instruction"], m["smem"]["bytes"] <= MAX_SMEM_BYTES
    ('wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3', True)
    """
    if arch not in ("sm_90a",):
        raise LayoutError(f"--arch {arch!r}: emit gemm writes sm_90a (Hopper wgmma + TMA) kernels")
    if dtype not in GEMM_DTYPES:
        raise LayoutError(f"--dtype {dtype!r}: emit gemm writes {', '.join(GEMM_DTYPES)}")
    bm, bn, bk = require_tile(tile or (64 if schedule == "pingpong" else 128, 256, 128 // bytes_of(dtype)))
    _check_config(dtype, bm, bn, bk, stages, group_m, splits)
    if out not in OUT_DTYPES:
        raise LayoutError(f"--out {out!r}: D is one of {', '.join(OUT_DTYPES)}")
    if activation not in ACTIVATIONS:
        raise LayoutError(f"--activation {activation!r}: one of {', '.join(ACTIVATIONS)}")
    if not isinstance(swap_ab, bool):
        raise LayoutError(f"--swap-ab {swap_ab!r}: expected a bool")
    epi = (out, bool(bias), activation)
    cl_shape = require_cluster(cluster)
    pp = require_schedule(schedule, bm, cl_shape, swap_ab)
    eb = bytes_of(dtype)
    sw = swizzle_for(bk * eb)
    span = SWIZZLE_SPAN[sw]
    consumers = 2 if pp else bm // 64
    a_tile, b_tile = stage_tile(dtype, bm, bk, sw), stage_tile(dtype, bn, bk, sw)
    a_text, b_text = str(a_tile), str(b_tile)
    a_stage, b_stage = bm * bk * eb, bn * bk * eb
    if a_stage % 1024 or b_stage % 1024:
        raise LayoutError(f"--tile {bm}x{bn}x{bk}: a stage of A ({a_stage} B) or B ({b_stage} B) "
                          "is not a multiple of 1024 bytes (the swizzle repeat)")
    b_off = stages * a_stage
    bar_off = b_off + stages * b_stage
    total = bar_off + 16 * stages + (TURN_BYTES if pp else 0)
    store = store_plan(bm, bn, out, swap_ab, splits, -(-total // 1024) * 1024)
    if store["kind"] == "tma":
        staged = store["offset"] + consumers * store["bytes"]
        if staged + 1024 <= MAX_SMEM_BYTES:
            total = staged
        else:
            store = {"kind": "pointer", "why": f"the staging buffers ({consumers} x "
                     f"{store['bytes']} bytes) do not fit beside the {stages}-stage ring"}
    if total + 1024 > MAX_SMEM_BYTES:
        raise LayoutError(f"--tile {bm}x{bn}x{bk} --stages {stages}: {total} bytes of shared "
                          f"memory (+1024 alignment) exceed {MAX_SMEM_BYTES}; lower --stages")
    kx = k_of_dtype(dtype)
    obls = [tma_obligation("A", a_tile, dtype, bm, bk, sw),
            tma_obligation("B", b_tile, dtype, bn, bk, sw)]
    da, oa = _descriptors("A", a_tile, dtype, bk, 64, bm // 64,
                          [s * a_stage for s in range(stages)])
    db, ob = _descriptors("B", b_tile, dtype, bk, bn, 1,
                          [b_off + s * b_stage for s in range(stages)])
    frag, of = _fragment_obligation(bn, dtype)
    shape = f"m64n{bn}k{kx}"
    # ping-pong: one consumer warpgroup reads (and releases) each stage
    cl = cluster_plan(*cl_shape, consumers=1 if pp else consumers, bm=bm, bn=bn, a_stage=a_stage,
                      b_stage=b_stage)
    bars = {"offset": bar_off, "full_count": 1, "empty_count": cl["empty_count"]}
    return {"format": GEMM_FORMAT, "kind": "gemm", "arch": arch,
            "tag": gemm_tag(dtype, bm, bn, bk, stages, group_m, splits, epi, cl_shape, swap_ab,
                            schedule),
            "dtype": dtype, "swap_ab": swap_ab, **({"consumer_schedule": schedule} if pp else {}),
            "epilogue": {"out": out, "bias": bool(bias), "activation": activation,
                         "where": "reduction kernel" if splits > 1 else "GEMM kernel"}, "acc": "f32",
            "elem_bytes": eb, "bm": bm, "bn": bn, "bk": bk, "stages": stages,
            "consumers": consumers, "threads": 128 * (consumers + 1),
            "group_m": group_m, "splits": splits,
            "shape": shape, "k_inst": kx, "k_blocks": bk // kx,
            "instruction": f"wgmma.mma_async.sync.aligned.{shape}.f32.{dtype}.{dtype}",
            "swizzle": sw,
            "a": {"layout": a_text, "stage_bytes": a_stage, "offset": 0, "descriptors": da},
            "b": {"layout": b_text, "stage_bytes": b_stage, "offset": b_off, "descriptors": db},
            "barriers": {**bars, **(pingpong_turns(bar_off + 16 * stages) if pp else {})},
            "cluster": {k: v for k, v in cl.items() if k != "obligations"},
            "tma": {"swizzle": sw, "swizzle_code": TMA_SWIZZLE_CODES[sw], "box_k": span // eb,
                    "boxes": bk * eb // span, "a_box_bytes": bm * span, "b_box_bytes": bn * span,
                    "tx_bytes": a_stage + b_stage},
            "d": {"fragment": frag},
            "store": store,
            "smem": {"bytes": total, "alignment": 1024},
            "global": {"a": "row-major M x K", "b": "row-major N x K",
                       "d": f"row-major M x N {out}",
                       **({"kernel": "D^T = B A^T: the kernel's A operand (BM rows) is B, its B "
                                     "operand (BN rows) is A; element (n, m) stored at D(m, n)"}
                          if swap_ab else {})},
            "obligations": obls + oa + ob + [of] + ([split_obligation(splits)] if splits > 1
                                                     else []) + cl["obligations"]
            + ([staging_obligation(store)] if store["kind"] == "tma" else [])
            + ([pingpong_obligation()] if pp else [])}


#: Ping-pong's turn mbarriers: MMA turn and epilogue turn of consumer 0 and 1 (8 bytes each).
TURN_BYTES = 32
#: Arrivals that complete a turn: every thread of the warpgroup handing the turn over.
TURN_COUNT = 128
SCHEDULES = ("cooperative", "pingpong")


def require_schedule(schedule: object, bm: int, cluster: tuple[int, int], swap_ab: bool) -> bool:
    """Law: ``True`` for a ping-pong configuration it accepts (a 64-row tile: one wgmma row
    block per consumer, one CTA, no swap-AB), ``False`` for cooperative; else ``LayoutError``.

    >>> require_schedule("pingpong", 64, (1, 1), False), require_schedule("cooperative", 128, (1, 1), False)
    (True, False)
    >>> require_schedule("pingpong", 128, (1, 1), False)
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: --schedule pingpong: BM 128 must be 64 (each consumer warpgroup owns a whole 64-row tile)
    """
    if schedule not in SCHEDULES:
        raise LayoutError(f"--schedule {schedule!r}: one of {', '.join(SCHEDULES)}")
    if schedule == "cooperative":
        return False
    if bm != 64:
        raise LayoutError(f"--schedule pingpong: BM {bm} must be 64 (each consumer warpgroup owns "
                          "a whole 64-row tile)")
    if tuple(cluster) != (1, 1) or swap_ab:
        raise LayoutError("--schedule pingpong: written for one CTA without swap-AB (no --cluster, "
                          "no --swap-ab)")
    return True


def pingpong_turns(offset: int) -> dict:
    """The turn mbarriers of a ping-pong kernel at ``offset``: ``mma[c]`` at ``offset + 8c``,
    ``epi[c]`` at ``offset + 16 + 8c``, each completing when the other consumer's 128 threads
    arrive (consumer 0's first wait, parity 1, passes on the fresh barrier: it starts).

    >>> pingpong_turns(1000)
    {'turn_offset': 1000, 'turn_count': 128}
    """
    return {"turn_offset": offset, "turn_count": TURN_COUNT}


def pingpong_units(first: int, step: int, units: int, consumer: int) -> list[int]:
    """Law: the units consumer ``consumer`` of a CTA (first unit ``first``, grid stride ``step``)
    takes: the ``j``-th unit of the CTA's walk for every ``j`` with ``j % 2 == consumer``.

    >>> pingpong_units(1, 4, 15, 0), pingpong_units(1, 4, 15, 1)
    ([1, 9], [5, 13])
    """
    return [u for j, u in enumerate(range(first, units, step)) if j % 2 == consumer]


def pingpong_obligation(limit: int = 96) -> dict:
    """Exhaustive over units 1..limit and grids 1..limit: the two consumers of every CTA take
    disjoint units and together every unit exactly once.

    >>> pingpong_obligation(12)["status"]
    'proved'
    """
    for units in range(1, limit + 1):
        for grid in range(1, limit + 1):
            got = sorted(u for b in range(grid) for c in (0, 1)
                         for u in pingpong_units(b, grid, units, c))
            if got != list(range(units)):
                return {"claim": "ping-pong tile cover", "status": "counterexample",
                        "method": "exhaustive", "reason": f"units {units}, grid {grid}: {got}"}
    return {"claim": "ping-pong: consumer c of each CTA takes the CTA's units j = c (mod 2); over "
                     "all CTAs and both consumers every unit is computed exactly once",
            "status": "proved", "method": "exhaustive",
            "reason": f"every unit count and grid size in 1..{limit}"}


# ----- the typed manifest ----------------------------------------------------------------------
# ``manifest.json`` stays plain JSON (the builders above write dicts, in this key order); a reader
# of an emitted GEMM (``verilayout simulate``) parses it once, at the door, with
# ``GemmManifest.from_dict``: the specification it reads is typed, the renderer's derived
# sections (descriptors, TMA boxes, fragment bases, obligations, ...) ride along verbatim.

def _frozen(value: Any) -> Any:
    """Law: a JSON value with every list a tuple and every object a read-only mapping;
    ``_thawed(_frozen(v)) == v`` for every JSON value ``v``.

    >>> _frozen({"a": [1, [2]]})["a"]
    (1, (2,))
    """
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, Mapping):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    return value


def _thawed(value: Any) -> Any:
    """Law: the plain JSON value of a :func:`_frozen` one (tuples back to lists, mappings to dicts).

    >>> _thawed(_frozen({"a": [1, [2]]}))
    {'a': [1, [2]]}
    """
    if isinstance(value, tuple):
        return [_thawed(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _thawed(v) for k, v in value.items()}
    return value


def _field(obj: Mapping, key: str, kind: type, where: str, default: Any = None) -> Any:
    """Law: ``obj[key]`` when it is a ``kind`` (``default`` when absent and a default is given);
    else a one-line ``LayoutError`` naming the field ``where + key``.

    >>> _field({"bm": 128}, "bm", int, "")
    128
    >>> _field({}, "bm", int, "")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: manifest: missing field 'bm'
    """
    if key not in obj:
        if default is not None:
            return default
        raise LayoutError(f"manifest: missing field '{where}{key}'")
    value = obj[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise LayoutError(f"manifest: field '{where}{key}' is {value!r}, expected "
                          f"{'an integer' if kind is int else 'a ' + kind.__name__}")
    return value


def _object(obj: Mapping, key: str, where: str = "") -> Mapping:
    """Law: ``obj[key]`` when it is a JSON object; else a one-line ``LayoutError`` naming it.

    >>> _object({"a": 3}, "a")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: manifest: field 'a' is 3, expected an object
    """
    if key not in obj:
        raise LayoutError(f"manifest: missing field '{where}{key}'")
    if not isinstance(obj[key], Mapping):
        raise LayoutError(f"manifest: field '{where}{key}' is {obj[key]!r}, expected an object")
    return obj[key]


@dataclass(frozen=True)
class StageOperand:
    """One operand's ring stage: its layout text (CuTe, the one fact a checker reads) and the
    renderer's numbers (stage bytes, offset, descriptor rows as hex texts).

    Law: ``StageOperand.from_dict(d, "a").to_dict() == d`` for an emitted operand ``d``.

    >>> StageOperand.from_dict({"layout": "Sw<3,4,3> o (8,64):(64,1)"}, "a").layout[:9]
    'Sw<3,4,3>'
    """
    layout: str
    stage_bytes: int = 0
    offset: int = 0
    descriptors: tuple = ()

    @staticmethod
    def from_dict(d: Mapping, name: str) -> "StageOperand":
        """Law: the operand ``name`` of a manifest; a ``LayoutError`` naming a bad field."""
        w = f"{name}."
        return StageOperand(_field(d, "layout", str, w), _field(d, "stage_bytes", int, w, 0),
                            _field(d, "offset", int, w, 0),
                            _frozen(_field(d, "descriptors", list, w, [])))

    def to_dict(self) -> dict:
        """Law: the JSON object of ``manifest.json`` (key order of the builders)."""
        return {"layout": self.layout, "stage_bytes": self.stage_bytes, "offset": self.offset,
                "descriptors": _thawed(self.descriptors)}


@dataclass(frozen=True)
class Epilogue:
    """What the epilogue does to each accumulator: D's type, ``+ bias[col]``, the activation,
    and where it runs (the GEMM kernel, or the split-K reduction kernel).

    Law: ``Epilogue()`` is the plain f32 store; ``spec`` is ``(out, bias, activation)``.

    >>> Epilogue.from_dict({"out": "bf16", "bias": True, "activation": "gelu"}).spec
    ('bf16', True, 'gelu')
    """
    out: str = "f32"
    bias: bool = False
    activation: str = "none"
    where: str | None = None

    @property
    def spec(self) -> tuple[str, bool, str]:
        """``(out dtype, bias?, activation)``."""
        return self.out, self.bias, self.activation

    @staticmethod
    def from_dict(d: Mapping) -> "Epilogue":
        """Law: the ``epilogue`` object of a manifest (absent keys take the plain f32 store);
        a ``LayoutError`` naming a field of the wrong type or an unknown value."""
        e = Epilogue(_field(d, "out", str, "epilogue.", "f32"),
                     _field(d, "bias", bool, "epilogue.", False),
                     _field(d, "activation", str, "epilogue.", "none"),
                     _field(d, "where", str, "epilogue.") if "where" in d else None)
        if e.out not in OUT_DTYPES or e.activation not in ACTIVATIONS:
            raise LayoutError(f"manifest: epilogue {dict(d)!r} is not an output type and activation")
        return e

    def to_dict(self) -> dict:
        """Law: the JSON object of ``manifest.json`` (``where`` only where it was given)."""
        return {"out": self.out, "bias": self.bias, "activation": self.activation,
                **({"where": self.where} if self.where is not None else {})}


@dataclass(frozen=True)
class ClusterShape:
    """The thread-block cluster ``m x n`` and the proved plan of :func:`cluster_plan` (masks,
    peers, counts, slices: read-only, verbatim).

    Law: ``ClusterShape.from_dict(d).to_dict() == d``.

    >>> ClusterShape.from_dict({"m": 2, "n": 1, "size": 2}).shape
    (2, 1)
    """
    m: int = 1
    n: int = 1
    plan: Mapping = field(default_factory=lambda: MappingProxyType({}))

    @property
    def shape(self) -> tuple[int, int]:
        """``(CM, CN)``."""
        return self.m, self.n

    @staticmethod
    def from_dict(d: Mapping) -> "ClusterShape":
        """Law: the ``cluster`` object of a manifest; a ``LayoutError`` naming a bad ``m`` / ``n``."""
        return ClusterShape(_field(d, "m", int, "cluster."), _field(d, "n", int, "cluster."),
                            _frozen({k: v for k, v in d.items() if k not in ("m", "n")}))

    def to_dict(self) -> dict:
        """Law: the JSON object of ``manifest.json``."""
        return {"m": self.m, "n": self.n, **_thawed(self.plan)}

    @property
    def size(self) -> int:
        """The CTAs of the cluster, ``m n``."""
        return self.m * self.n

    def masks(self, key: str) -> tuple:
        """Law: the plan's per-rank masks ``key`` (``a_masks``, ``b_masks``, ``peers``); ``(1,)``
        for one CTA without a plan."""
        return tuple(self.plan.get(key, (1,)))


#: The manifest fields :class:`GemmManifest` types (the rest are the renderer's sections).
_TYPED = ("format", "kind", "arch", "tag", "dtype", "bm", "bn", "bk", "stages", "consumers",
          "splits", "a", "b", "epilogue", "cluster", "swap_ab", "consumer_schedule")


@dataclass(frozen=True)
class GemmManifest:
    """A GEMM manifest (``emit gemm``, sm_90a or sm_100a) parsed once: the specification typed,
    the renderer's other sections (``sections``, read-only) and the file's key order kept, so
    that :meth:`to_dict` gives back the same JSON.

    Law: ``GemmManifest.from_dict(m).to_dict() == m`` (key order included) for every manifest
    the builders write; a malformed one is a one-line ``LayoutError`` naming the field.

    >>> m = build_gemm_manifest("f16", tile=(64, 64, 64), stages=2)
    >>> g = GemmManifest.from_dict(m); (g.dtype, g.bm, g.splits, g.cluster.shape, g.to_dict() == m)
    ('f16', 64, 1, (1, 1), True)
    """
    format: str
    kind: str
    arch: str
    tag: str
    dtype: str
    bm: int
    bn: int
    bk: int
    stages: int
    consumers: int
    a: StageOperand
    b: StageOperand
    splits: int = 1
    epilogue: Epilogue = Epilogue()
    cluster: ClusterShape = ClusterShape()
    #: the kernel computes D^T = B A^T (its A operand is the problem's B) and stores it transposed
    swap_ab: bool = False
    #: ``cooperative`` (consumers split each tile's rows) or ``pingpong`` (each owns whole tiles)
    consumer_schedule: str = "cooperative"
    sections: Mapping = field(default_factory=lambda: MappingProxyType({}))
    keys: tuple[str, ...] = ()

    @staticmethod
    def from_dict(d: object) -> "GemmManifest":
        """Law: the typed manifest of the JSON object ``d``; a ``LayoutError`` naming the first
        missing or ill-typed field otherwise.

        >>> GemmManifest.from_dict({"format": GEMM_FORMAT, "kind": "gemm", "arch": "sm_90a"})
        Traceback (most recent call last):
        ...
        verilayout.errors.LayoutError: manifest: missing field 'tag'
        """
        if not isinstance(d, Mapping):
            raise LayoutError(f"manifest: expected a JSON object, got {type(d).__name__}")
        s = {k: _field(d, k, str, "") for k in ("format", "kind", "arch", "tag", "dtype")}
        n = {k: _field(d, k, int, "") for k in ("bm", "bn", "bk", "stages", "consumers")}
        return GemmManifest(
            **s, **n, a=StageOperand.from_dict(_object(d, "a"), "a"),
            b=StageOperand.from_dict(_object(d, "b"), "b"),
            splits=_field(d, "splits", int, "", 1),
            epilogue=Epilogue.from_dict(_object(d, "epilogue")) if d.get("epilogue") else Epilogue(),
            cluster=ClusterShape.from_dict(_object(d, "cluster")) if d.get("cluster") else ClusterShape(),
            swap_ab=_field(d, "swap_ab", bool, "", False),
            consumer_schedule=_schedule_field(d),
            sections=_frozen({k: v for k, v in d.items() if k not in _TYPED}), keys=tuple(d))

    def to_dict(self) -> dict:
        """Law: the JSON object of ``manifest.json``, keys in the order they were read."""
        typed = {k: getattr(self, k) for k in _TYPED}
        out = {}
        for k in self.keys or tuple(_TYPED) + tuple(self.sections):
            v = typed[k] if k in typed else self.sections[k]
            out[k] = v.to_dict() if hasattr(v, "to_dict") else _thawed(v)
        return out

    # the renderer's sections, typed on reading (they ride in ``sections`` verbatim: the JSON
    # round trip of :meth:`to_dict` is untouched)
    def _section(self, key: str, default: Any = None) -> Any:
        if key not in self.sections and default is None:
            raise LayoutError(f"manifest: missing field {key!r}")
        return self.sections.get(key, default)

    @property
    def barriers(self) -> "Barriers":
        """The mbarriers' shared offset and arrival counts (``barriers``)."""
        return Barriers.from_dict(self._section("barriers"))

    @property
    def smem(self) -> "SmemBudget":
        """The dynamic shared-memory size and alignment (``smem``)."""
        return SmemBudget.from_dict(self._section("smem"))

    @property
    def tma(self) -> "TmaBoxes":
        """The TMA boxes of the loads (``tma``)."""
        return TmaBoxes.from_dict(self._section("tma"))

    @property
    def store(self) -> "StorePlan":
        """D's store: by pointer, or the TMA-store staging plan (``store``; pointer if absent)."""
        return StorePlan.from_dict(self._section("store", {"kind": "pointer"}))

    @property
    def obligations(self) -> tuple:
        """The proof obligations (``obligations``: claim, status, method, reason mappings)."""
        return self._section("obligations", ())

    def number(self, key: str, default: int | None = None) -> int:
        """Law: the integer section ``key`` (``threads``, ``k_inst``, ``k_blocks``,
        ``elem_bytes``, ``group_m``, ...), ``default`` where absent (a ``LayoutError`` without
        one, or where it is not an integer)."""
        return _field(self.sections, key, int, "", default)

    def text(self, key: str) -> str:
        """Law: the text section ``key`` (``instruction``, ``shape``, ...); a ``LayoutError``
        where it is missing or not text."""
        return _field(self.sections, key, str, "")


def _schedule_field(d: Mapping) -> str:
    """Law: the manifest's ``consumer_schedule`` (``cooperative`` where absent); a
    ``LayoutError`` naming the field unless it is one of :data:`SCHEDULES`.

    >>> _schedule_field({}), _schedule_field({"consumer_schedule": "pingpong"})
    ('cooperative', 'pingpong')
    """
    v = _field(d, "consumer_schedule", str, "", "cooperative")
    if v not in SCHEDULES:
        raise LayoutError(f"manifest: field 'consumer_schedule' is {v!r}, expected one of {', '.join(SCHEDULES)}")
    return v


def _ints(d: Mapping, keys: tuple, where: str, defaults: Mapping | None = None) -> dict:
    """Law: ``{k: d[k]}`` for ``keys``, each an integer (``defaults[k]`` where absent and
    given); a ``LayoutError`` naming ``where + k`` otherwise."""
    return {k: _field(d, k, int, where, *((defaults[k],) if defaults and k in defaults else ()))
            for k in keys}


@dataclass(frozen=True)
class Barriers:
    """The ring's mbarriers: their shared-memory offset, the full barrier's arrival count (the
    producer's ``expect_tx``) and the empty barrier's (one per consumer warp, of every CTA
    releasing to this one).

    >>> Barriers.from_dict({"offset": 98304, "full_count": 1, "empty_count": 8}).empty_count
    8
    """
    offset: int
    full_count: int
    empty_count: int

    @staticmethod
    def from_dict(d: Mapping) -> "Barriers":
        """Law: the ``barriers`` object of a manifest; a ``LayoutError`` naming a bad field."""
        return Barriers(**_ints(d, ("offset", "full_count", "empty_count"), "barriers."))


@dataclass(frozen=True)
class SmemBudget:
    """The kernel's dynamic shared memory: bytes and base alignment.

    >>> SmemBudget.from_dict({"bytes": 115712, "alignment": 1024}).bytes
    115712
    """
    bytes: int
    alignment: int

    @staticmethod
    def from_dict(d: Mapping) -> "SmemBudget":
        """Law: the ``smem`` object of a manifest; a ``LayoutError`` naming a bad field."""
        return SmemBudget(**_ints(d, ("bytes", "alignment"), "smem."))


@dataclass(frozen=True)
class TmaBoxes:
    """The TMA loads of one stage: swizzle (name and cuda.h code), the box's K extent and how
    many boxes per operand, the bytes of A's and B's boxes and the bytes one stage expects.

    >>> TmaBoxes.from_dict({"swizzle": "128B", "swizzle_code": 3, "box_k": 64, "boxes": 1,
    ...     "a_box_bytes": 16384, "b_box_bytes": 16384, "tx_bytes": 32768}).tx_bytes
    32768
    """
    swizzle: str
    swizzle_code: int
    box_k: int
    boxes: int
    a_box_bytes: int
    b_box_bytes: int
    tx_bytes: int

    @staticmethod
    def from_dict(d: Mapping) -> "TmaBoxes":
        """Law: the ``tma`` object of a manifest; a ``LayoutError`` naming a bad field."""
        return TmaBoxes(_field(d, "swizzle", str, "tma."),
                        **_ints(d, ("swizzle_code", "box_k", "boxes", "a_box_bytes", "b_box_bytes",
                                    "tx_bytes"), "tma."))


_STORE_KEYS = ("offset", "bytes", "rows", "cols", "acc_cols", "chunks", "span", "boxes",
               "swizzle_code")


@dataclass(frozen=True)
class StorePlan:
    """How the epilogue stores D: ``kind`` ``pointer`` (``st.global``; the other fields 0) or
    ``tma`` (staged in shared memory at ``offset``, ``bytes`` per consumer, ``rows x cols``
    boxes of ``chunks`` 16-byte chunks, ``acc_cols`` accumulator columns per box, the swizzle
    ``span`` and code, ``boxes`` per tile row).

    >>> StorePlan.from_dict({"kind": "pointer"}).kind
    'pointer'
    """
    kind: str
    offset: int = 0
    bytes: int = 0
    rows: int = 0
    cols: int = 0
    acc_cols: int = 0
    chunks: int = 0
    span: int = 0
    boxes: int = 0
    swizzle_code: int = 0

    @staticmethod
    def from_dict(d: Mapping) -> "StorePlan":
        """Law: the ``store`` object of a manifest (the numbers only for ``tma``); a
        ``LayoutError`` naming a bad field."""
        kind = _field(d, "kind", str, "store.")
        if kind != "tma":
            return StorePlan(kind)
        return StorePlan(kind, **_ints(d, _STORE_KEYS, "store."))


def tile_coords(t: int, tiles_m: int, tiles_n: int, group_m: int) -> tuple[int, int]:
    """The persistent scheduler's tile ``t`` -> ``(tm, tn)``, ``group_m`` tile rows at a time
    (the formula of ``tile_coords`` in ``kernel.cu``).

    >>> [tile_coords(t, 3, 2, 2) for t in range(6)]
    [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (2, 1)]
    """
    per = group_m * tiles_n
    first = (t // per) * group_m
    rows = min(tiles_m - first, group_m)
    return first + (t % per) % rows, (t % per) // rows
