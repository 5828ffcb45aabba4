"""Independent checks of an emitted Hopper GEMM (``verilayout emit gemm``): the PTX nvcc writes for
``kernel.cu`` run for every thread of one CTA, the host code's tensor maps captured, and the
mbarrier ring replayed as a transition system over every interleaving.

Nothing here reads the renderer (``verilayout.emit``): from the manifest (parsed once where it is
read, :class:`verilayout.emit.gemm_plan.GemmManifest`) only the specification is taken (``dtype``, ``bm``/``bn``/``bk``, ``stages``, ``consumers``, the two stage layout **texts**).
The kernel is run by :func:`verilayout.simulate.ptx_run.run_threads` (all ``128 * (consumers + 1)``
threads of CTA 0, one CTA for the grid, ``M = 2 BM``, ``N = BN``, ``K`` giving ``stages + 2``
pipeline iterations, so the ring wraps and the phase bit flips; then again with ragged edges,
``M = 2 BM - 40``, an odd ``N = BN - 5``, ``K`` short by 16 bytes). The checks:

* ``instruction``: every consumer wgmma is ``m64n<BN>k<K>.f32.<dtype>.<dtype>`` with the PTX ISA
  operands and immediates (scales 1, both operands K-major), scale-d 0 (or zeroed accumulators)
  at each tile's first K-block and 1 after, and a ``wgmma.fence`` after any other instruction's
  access of its registers (PTX ISA 9.7.15, ``wgmma.fence``: registers a wgmma reads or writes
  are accessed by other instructions only across a fence);
* ``tensor-map``: ``launch`` compiled for the host with ``cuTensorMapEncodeTiled`` replaced by a
  recorder: data type, rank 2, dims ``{K, rows}``, row stride ``K * bytes``, box ``{swizzle span /
  bytes, BM | BN}``, element strides 1, no interleave, and the swizzle enum equal to cuda.h's
  ``CU_TENSOR_MAP_SWIZZLE_<span>B`` for the span of the layout text's ``Sw<B,4,3>`` (16 << B);
* ``tma``: the boxes of each stage, at the destinations the PTX computes, with TMA's swizzle
  (the 16-byte chunk index XORed with the 128-byte row index modulo span / 16, CUDA Programming
  Guide, "TMA swizzle"; an inference where the guide is silent about spans below 128 bytes) write
  element ``(mn, k)`` at the byte of the layout text, for every coordinate; coordinates walk the
  tiles and K in order;
* ``descriptor``: every consumer wgmma's descriptors (values from the run) read, by
  :func:`verilayout.prove.wgmma.check_descriptor`, K-block ``kb`` (A: the warpgroup's 64 rows) of the layout
  at the stage the same pipeline iteration filled;
* ``protocol``: the ring as a transition system (producer thread, one process per consumer
  warpgroup, each TMA landing as its own action), explored exhaustively: every wait on
  ``(barrier, parity)`` returns only after that phase completed (PTX ISA mbarrier: a phase completes
  when its pending arrivals and tx-count reach zero), arrivals never exceed the init count, no
  ``complete_tx`` without ``expect_tx``, a wgmma reads only landed bytes of its own iteration, no
  TMA overwrites a stage before every consumer's wgmma group that read it retired, no deadlock.
  Each process's step is atomic from a wait (a guard: once its phase completed it stays so) up to
  the next wait or through the next arrive (the only action another process observes); reads,
  commits and retires in between touch the process's own state or are checked where they matter
  (an overwrite is checked at the TMA issue), so no error is hidden by the grouping;
* ``spills``: ``ptxas -arch=sm_90a -v`` spills 0 bytes;
* ``index-functions`` (with the host build): ``d_row``/``d_col`` against the PTX D fragment on every
  (thread, element), ``tile_coords`` a bijection onto an 11 x 7 grid;
* ``d-store``: no accumulator is stored while a wgmma group may be pending (PTX ISA 9.7.15,
  ``wgmma.commit_group`` / ``wgmma.wait_group``: the accumulators of a group are read only after
  a ``wait_group`` that retires it; ``wait_group 0`` before the epilogue); each accumulator tag
  (:mod:`verilayout.simulate.ptx_run`) is stored once at ``D(tm BM + 64 c + row, tn BN + col)``
  of the PTX D fragment, ``(tm, tn)`` the tile the producer loaded for that iteration.

A ping-pong kernel (manifest ``consumer_schedule`` ``pingpong``: each consumer owns whole 64-row
tiles, alternately) runs with ``M = 3 BM``; each consumer wait is mapped to the producer's
iteration by its (full barrier, parity) (:func:`ring_iterations`), the ring releases a stage to
the consumers that read it (``RingSystem.readers``), and two checks are added:

* ``turn``: both consumers' turn mbarriers, wgmmas and epilogue writes explored over every
  interleaving: never both in their MMA, never both in their epilogue, no turn left waiting
  (the order of CUTLASS's ``sm90_gemm_tma_warpspecialized_pingpong.hpp``);
* ``cover``: for a 3 x 2 tile grid and every grid size 1 .. units + 1, thread 0 of both
  consumers of every CTA run on the PTX: each tile stored by exactly one consumer of one CTA.

>>> GEMM_ASSUMPTIONS[0][:40]
'one CTA (grid 1) of 128 * (consumers + 1'
"""
from __future__ import annotations

import functools
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from verilayout.emit.gemm_plan import GemmManifest, StageOperand
from verilayout.errors import LayoutError
from verilayout.frontends.cuda_program import cuda_namespace, defines_index_function, tagged_rows
from verilayout.frontends.ptx import parse_immediate, parse_ptx
from verilayout.frontends.shared_text import load_operand_layout
from verilayout.hw.nvidia.descriptor import decode
from verilayout.hw.nvidia.tma import TensorMap, write_table
from verilayout.hw.nvidia.wgmma import fragment, fragment_coords, k_of_dtype
from verilayout.prove.wgmma import intended_tile, check_descriptor
from verilayout.simulate.ring import (Arrive, Commit, Issue, Read, Retire, RingSystem, RingTma, Wait,
                                      explore, explore_rings)
from verilayout.simulate.independent import (HOST_NVCC_FLAGS, KernelCheck, IndependentReport, run_nvcc,
                                              compile_ptx, compiled_checks, imm_operands)
from verilayout.simulate.tma_store import is_tma_store, register_bytes, warpgroup_store_order
from verilayout.simulate.ptx_run import (Event, init_count, mma_descriptors, pending_groups, phase_parity,
                                         run_ctas, run_threads, stored_values, tma_mbarrier, tx_count)

__all__ = ["check_gemm_source", "GEMM_ASSUMPTIONS", "MAX_STATES", "GemmSim", "SimInputs", "TmaLoad", "tma_load", "Step", "gemm_spec", "splits_of", "bias_loader", "run_findings",
           "decode_out", "out_tolerance", "epilogue_spec", "reduce_check", "act_reference", "round_out", "bias_value",
           "swizzle_span", "cluster_shape", "tensor_maps", "host_maps", "replay_gemm", "LANDING_ASSUMPTION", "MAP_A_ADDR", "MAP_B_ADDR", "D_ADDR", "BIAS_ADDR", "SMEM_BASE",
           "MAP_D_ADDR", "is_tma_store", "is_d_store", "PARAMS"]

GEMM_ASSUMPTIONS = (
    "one CTA (grid 1) of 128 * (consumers + 1) threads, M = 2 BM, N = BN, K for stages + 2 "
    "iterations, then ragged edges (M = 2 BM - 40, N = BN - 5, K short by 16 bytes); shared "
    "variable at 0x410 (the kernel aligns it up)",
    "a consumer warpgroup is one process: its warps' arrivals are counted together",
    "TMA swizzle: the 16-byte chunk index XOR the 128-byte row index mod span/16 (box inner "
    "extent = span)")
#: The reduction of explorations with ``eager_landing`` (the cluster's rings, the sm_100a ring).
LANDING_ASSUMPTION = (
    "TMA landings are explored eagerly: each lands before any process moves again. A landing "
    "only enables (it completes bytes of a phase, fills a stage), so delaying one adds only "
    "interleavings where a wait passes without its bytes; that needs a phase to complete with "
    "bytes still due, which the tx-count shows as bytes beyond expect_tx or as a deadlock")
#: What the ping-pong checks assume (manifest ``consumer_schedule`` ``pingpong``).
PINGPONG_ASSUMPTION = (
    "ping-pong: the runs have M = 3 BM (consumer 0 takes tiles 0 and 2, consumer 1 tile 1); a "
    "consumer's ring waits are mapped to the producer's iterations by (full barrier, parity); "
    "the turn mbarriers are the ones the consumers use that the producer neither arrives on with "
    "expect_tx nor waits on")
#: States the protocol exploration may visit before it answers unknown.
MAX_STATES = 400000
_BYTES = {"f16": 2, "bf16": 2, "e4m3": 1, "tf32": 4}
MAP_A_ADDR, MAP_B_ADDR, D_ADDR, BIAS_ADDR = 0x70000000, 0x71000000, 0x30000000, 0x60000000
#: The address of D's tensor map (kernel parameter 7 of a TMA-store epilogue) in a run.
MAP_D_ADDR = 0x72000000



def accumulated(acc: list, it: int, v: dict) -> list:
    """The K iterations a consumer's accumulator sums after a ``wgmma`` of iteration ``it`` whose
    run values are ``v``: that iteration alone when the wgmma starts the sum afresh (``scale-d`` 0
    for every thread, or a zero-accumulator predicate everywhere), else ``acc`` with ``it`` added.

    >>> import numpy as np
    >>> accumulated([0, 1], 2, {"scale_d": np.array([1, 1])}), accumulated([0, 1], 2, {"scale_d": np.array([0, 0])})
    ([0, 1, 2], [2])
    """
    sd, dz = v.get("scale_d"), v.get("d_zero")
    reset = (sd is not None and not sd.any()) or (dz is not None and dz.all())
    return [it] if reset else (acc if it in acc else acc + [it])

def PARAMS(M: int, N: int, K: int) -> dict:  # noqa: N802 (the kernel's parameter table)
    """Law: the kernel parameters of a run: tensor maps of A and B, D, the kernel's M, N, K, the
    bias, and (a TMA-store epilogue's parameter 7) D's tensor map.

    >>> sorted(PARAMS(1, 2, 3))
    [0, 1, 2, 3, 4, 5, 6, 7]
    """
    return {0: MAP_A_ADDR, 1: MAP_B_ADDR, 2: D_ADDR, 3: M, 4: N, 5: K, 6: BIAS_ADDR, 7: MAP_D_ADDR}


def is_d_store(op: str) -> bool:
    """Law: an instruction that writes D (or the split-K workspace): ``st.global`` or a TMA store.

    >>> is_d_store("st.global.v2.f32"), is_d_store("st.shared.v2.f32")
    (True, False)
    """
    return op.startswith("st.global") or is_tma_store(op)
SMEM_BASE = 0x410
#: A small specification for the examples below (what ``GemmManifest.from_dict`` returns).
_SPEC = GemmManifest("verilayout-emit-gemm/1", "gemm", "sm_90a", "gemm_f16_64x64x64_s2", "f16",
                     64, 64, 64, 2, 1,
                     StageOperand("Sw<3,4,3> o smem_ptr[16b](unset) o ((8,8),(64,1)):((64,512),(1,4096))"),
                     StageOperand("Sw<3,4,3> o smem_ptr[16b](unset) o ((8,8),(64,1)):((64,512),(1,4096))"))


def splits_of(man: GemmManifest) -> int:
    """Law: the manifest's split-K factor (1 without one); a ``LayoutError`` unless 1 to 16.

    >>> from dataclasses import replace
    >>> splits_of(_SPEC), splits_of(replace(_SPEC, splits=4))
    (1, 4)
    """
    if not 1 <= man.splits <= 16:
        raise LayoutError(f"manifest: splits {man.splits} is not 1 to 16")
    return man.splits


def gemm_spec(man: GemmManifest) -> tuple:
    """Law: ``(dtype, BM, BN, BK, stages, consumers, A layout text, B layout text)`` of a GEMM
    manifest (a malformed one was refused where it was read: ``GemmManifest.from_dict``).

    >>> gemm_spec(_SPEC)[:6]
    ('f16', 64, 64, 64, 2, 1)
    """
    return (man.dtype, man.bm, man.bn, man.bk, man.stages, man.consumers, man.a.layout,
            man.b.layout)


def swizzle_span(text: str) -> int:
    """Law: the swizzle span in bytes (``16 << B``) of a ``Sw<B,4,3> o ...`` layout text.

    >>> swizzle_span("Sw<3,4,3> o (8,64):(64,1)")
    128
    """
    m = re.match(r"\s*Sw<(\d+),\s*4,\s*3>", text)
    if not m:
        raise LayoutError(f"layout {text!r}: expected a Sw<B,4,3> swizzled layout")
    return 16 << int(m.group(1))


def check_gemm_source(man: GemmManifest, source: str, *, host: bool = True,
                      ragged: bool = True) -> IndependentReport:  # long: two problems, every check
    """Compile an emitted GEMM ``kernel.cu`` and run the checks of the module docstring.

    Law: ``proved`` only where the check held for every thread, coordinate and interleaving it
    covers; otherwise a ``counterexample`` naming what is wrong, or ``unknown``. ``ragged=False``
    runs only the whole-tile problem (not the ragged edges).

    >>> from dataclasses import replace
    >>> from verilayout.emit.gemm_plan import ClusterShape
    >>> check_gemm_source(replace(_SPEC, cluster=ClusterShape(2, 1)), "")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: manifest: a 2x1 cluster GEMM runs as several CTAs: check it with verilayout.simulate.cluster_check.check_gemm
    """
    dt, bm, bn, bk, stages, cons, la, lb = gemm_spec(man)
    _one_cta(man)
    checks, ptx = compiled_checks(source)
    if ptx is None:
        return IndependentReport(tuple(checks), GEMM_ASSUMPTIONS)
    eb = _BYTES.get(dt)
    if eb is None:
        raise LayoutError(f"manifest: dtype {dt!r} is not a GEMM type")
    maps, c = host_maps(source, man, ptx, host)
    checks += c
    mod = parse_ptx(ptx)
    splits = splits_of(man)
    epi = epilogue_spec(man)
    entry = next((f for f in mod.functions if "vl_gemm_kernel" in f),
                 mod.functions[0] if mod.functions else None)
    if entry is None:
        return IndependentReport(tuple(checks + [KernelCheck("run", "counterexample", "no entry")]),
                                 GEMM_ASSUMPTIONS)
    iters = stages + 2
    k_tiles = max(-(-iters // 2), splits + 1 if splits > 1 else 1)   # no empty K slice
    pp = man.consumer_schedule == "pingpong"
    mt = 3 if pp else 2         # ping-pong: three tiles, so consumer 0 takes a second turn
    # whole tiles, then ragged edges (rows, an odd N, K short by the least TMA allows)
    for M, N, K, label in ((mt * bm, bn, k_tiles * bk, ""),
                           # swap-AB: D's rows are the kernel's M; an odd M there, as an odd N
                           # otherwise, makes them no 16-byte multiple (the plain-store epilogue)
                           (mt * bm - 40 - man.swap_ab, bn - 5, k_tiles * bk - 16 // eb, "ragged"))[:2 if ragged else 1]:
        fused = epi != ("f32", False, "none") and splits == 1
        beyond: list = []
        run = run_threads(mod, entry, range(128 * (cons + 1)),
                          param_values=PARAMS(M, N, K),
                          shared_base=SMEM_BASE, float_tags=fused,
                          load_value=bias_loader(M if man.swap_ab else N, beyond))   # D's N columns
        checks += run_findings(run, beyond, N, f" (M={M}, N={N}, K={K})")
        if not run.complete:
            continue
        g = GemmSim(SimInputs(man=man, run=run, dt=dt, eb=eb, bm=bm, bn=bn, bk=bk, stages=stages, cons=cons,
                              la=la, lb=lb, M=M, N=N, K=K, k_tiles=k_tiles, maps=maps))
        g.label = f" [M={M}, N={N}, K={K}]" if label else ""
        g.pingpong = man.consumer_schedule == "pingpong"
        g.splits = splits
        g.epi = epi if fused else None
        checks += g.all()
    if splits > 1:
        checks.append(reduce_check(mod, splits, epi))
    if pp:
        checks.append(pingpong_cover_check(mod, entry, man))
    return IndependentReport(tuple(checks), GEMM_ASSUMPTIONS + (PINGPONG_ASSUMPTION,) if pp else
                             GEMM_ASSUMPTIONS)


@functools.lru_cache(maxsize=1024)   # the whole-tile and ragged runs read the same descriptors
def _descriptor_verdict_cached(value: int, text: str, dt: str, kb: int, base: int, mn: int, mb: int):
    return check_descriptor(value, load_operand_layout(text, dtype=dt), dtype=dt, major="K",
                            k_block=kb, base_address=base, mn=mn, mn_block=mb)


def _descriptor_verdict(value: int, text: str, dt: str, kb: int, base: int, mn: int, mb: int):
    """Law: :func:`verilayout.prove.wgmma.check_descriptor` of the K-major descriptor ``value``
    against K-block ``kb`` (rows ``mb * mn`` on) of the layout ``text`` placed at ``base``; a
    verdict is reused for the same arguments unless it was unknown (a timeout is asked again).

    >>> text = "Sw<3,4,3> o smem_ptr[16b](unset) o ((8,8),(64,1)):((64,512),(1,4096))"
    >>> [_descriptor_verdict(v, text, "f16", 1, 0, 64, 0).status for v in (0x4000004000010002, 0x4000004000010004)]
    ['proved', 'counterexample']
    """
    vd = _descriptor_verdict_cached(value, text, dt, kb, base, mn, mb)
    if vd.status == "unknown":
        vd = _descriptor_verdict_cached.__wrapped__(value, text, dt, kb, base, mn, mb)
    return vd


def _one_cta(man: GemmManifest) -> None:
    cm, cn = cluster_shape(man)
    if cm * cn > 1:
        raise LayoutError(f"manifest: a {cm}x{cn} cluster GEMM runs as several CTAs: check it with "
                          "verilayout.simulate.cluster_check.check_gemm")


def cluster_shape(man: GemmManifest) -> tuple[int, int]:
    """Law: ``(CM, CN)`` of the manifest's cluster, ``(1, 1)`` without one; a ``LayoutError``
    unless it is 1x1, 2x1 or 1x2.

    >>> from dataclasses import replace
    >>> from verilayout.emit.gemm_plan import ClusterShape
    >>> cluster_shape(_SPEC), cluster_shape(replace(_SPEC, cluster=ClusterShape(2, 1)))
    ((1, 1), (2, 1))
    """
    shape = man.cluster.shape
    if shape not in ((1, 1), (2, 1), (1, 2)):
        raise LayoutError(f"manifest: cluster {shape[0]}x{shape[1]} is not 1x1, 2x1 or 1x2")
    return shape


def epilogue_spec(man: GemmManifest) -> tuple[str, bool, str]:
    """Law: ``(out dtype, bias?, activation)`` of the manifest (``("f32", False, "none")`` if
    absent; the values were checked where it was read).

    >>> from dataclasses import replace
    >>> from verilayout.emit.gemm_plan import Epilogue
    >>> epilogue_spec(replace(_SPEC, epilogue=Epilogue("bf16", True, "gelu")))
    ('bf16', True, 'gelu')
    """
    return man.epilogue.spec


def bias_value(col):
    """The bias the checks load for column ``col``: ``(col mod 5) - 2`` (so ReLU sees negatives).

    >>> [bias_value(c) for c in range(6)]
    [-2.0, -1.0, 0.0, 1.0, 2.0, -2.0]
    """
    return (np.asarray(col) % 5 - 2).astype(np.float64) if np.ndim(col) else float(col % 5 - 2)


def bias_loader(n: int, beyond: list | None = None):
    """``ld.global`` of bias element ``col < n`` gives :func:`bias_value`; anything else its
    address (the interpreter's tag). Columns read at or beyond ``n`` go to ``beyond``.

    >>> seen = []; load = bias_loader(3, seen)
    >>> load(np.array([BIAS_ADDR + 4, BIAS_ADDR + 12], dtype=np.uint64), 32).tolist()[1], seen
    (1610612748, [3])
    """
    def load(addr, bits):
        off = addr.astype(np.int64) - BIAS_ADDR
        inside = (off >= 0) & (off < 4 * n) & (off % 4 == 0)
        if beyond is not None:
            beyond.extend(int(o) // 4 for o in off[(off >= 4 * n) & (off < 1 << 24)])
        v = np.asarray(bias_value(np.where(inside, off // 4, 0)), dtype=np.float32)
        return np.where(inside, v.view(np.uint32).astype(np.uint64), addr)
    return load


def run_findings(run, beyond: list, n: int, where: str, bias_check: str = "d-store") -> list[KernelCheck]:
    """What a PTX run says before any check of it (the sm_90a and sm_100a checks alike).
    Law: a bias column read at or beyond ``n`` (``beyond``, filled by :func:`bias_loader`) is a
    ``bias_check`` counterexample; a run that did not complete is ``run`` unknown (its checks
    cannot be made); ``where`` ends both messages.

    >>> from types import SimpleNamespace
    >>> [(c.check, c.status) for c in run_findings(SimpleNamespace(complete=False, reason="x"), [9], 8, "")]
    [('d-store', 'counterexample'), ('run', 'unknown')]
    """
    out = []
    if beyond:
        out.append(KernelCheck(bias_check, "counterexample", f"the epilogue reads bias[{beyond[0]}], "
                               f"beyond N = {n}{where}"))
    if not run.complete:
        out.append(KernelCheck("run", "unknown", f"the kernel could not be run on the PTX{where}: "
                               f"{run.reason}"))
    return out


def act_reference(act: str, x: np.ndarray) -> np.ndarray:
    """The activation in float64, from its definition (GELU's tanh form as PyTorch's
    ``approximate="tanh"``; SiLU ``x / (1 + e^-x)``).

    >>> act_reference("relu", np.array([-1.0, 2.0])).tolist(), round(float(act_reference("silu", np.array([1.0]))[0]), 4)
    ([0.0, 2.0], 0.7311)
    """
    x = np.asarray(x, dtype=np.float64)
    if act == "relu":
        return np.maximum(x, 0.0)
    if act == "gelu":
        return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))
    if act == "silu":
        return x / (1.0 + np.exp(-x))
    return x


def round_out(out: str, x: np.ndarray) -> np.ndarray:
    """``x`` rounded to the output type (nearest even), as float64.

    >>> round_out("bf16", np.array([1.00390625, 257.0])).tolist()
    [1.0, 256.0]
    """
    x32 = np.asarray(x, dtype=np.float32)
    if out == "f16":
        return x32.astype(np.float16).astype(np.float64)
    if out == "bf16":
        u = x32.view(np.uint32).astype(np.uint64)
        r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
        return (r & 0xFFFFFFFF).astype(np.uint32).view(np.float32).astype(np.float64)
    return x32.astype(np.float64)


def decode_out(out: str, bits: np.ndarray) -> np.ndarray:
    """Law: the stored bits of an ``out`` element (the low 16 or 32 bits) as float64.

    >>> decode_out("bf16", np.array([0x3F80], dtype=np.uint64)).tolist()
    [1.0]
    """
    if out == "f32":
        return (bits & 0xFFFFFFFF).astype(np.uint32).view(np.float32).astype(np.float64)
    if out == "f16":
        return (bits & 0xFFFF).astype(np.uint16).view(np.float16).astype(np.float64)
    return ((bits & 0xFFFF).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def out_tolerance(out: str, want: np.ndarray) -> np.ndarray:
    """One unit in the last place of the output type at |want| (f32: 2^-20 relative, for the
    interpreter's tanh against float64).

    >>> out_tolerance("bf16", np.array([1.0])).tolist()
    [0.0078125]
    """
    mant = {"f32": 20, "f16": 10, "bf16": 7}[out]
    mag = np.maximum(np.abs(want), 2.0 ** -14)
    return 2.0 ** (np.floor(np.log2(mag)) - mant)


def reduce_check(mod, splits: int, epi: tuple = ("f32", False, "none")) -> KernelCheck:
    """The split-K reduction ``vl_splitk_reduce`` run on its PTX for every thread of one CTA
    (grid 1, so its grid-stride loop walks all ``M x N`` elements): workspace element ``i`` of
    slot ``s`` holds ``(i + 1) 4^s`` (exact in f32), so ``D[i]`` must be
    ``out(act((i + 1) (4^S - 1) / 3 + bias(i mod N)))``: each slot summed once, at the element's
    own index, then the epilogue once; with a plain f32 D the base-4 digits of ``D[i] / (i + 1)``
    name a slot summed twice or missed. (256 threads over 37 x 11; 32 threads over 7 x 9 with
    an epilogue, so that neighbouring elements differ by more than a 16-bit ulp.)

    >>> reduce_check(parse_ptx(".version 8.7\\n.visible .entry f()\\n{\\nret;\\n}"), 2).status
    'counterexample'
    """
    name = next((f for f in mod.functions if "vl_splitk_reduce" in f), None)
    if name is None:
        return KernelCheck("split-k", "counterexample", "the PTX has no vl_splitk_reduce entry: the "
                     "K slices' partial sums are never added")
    plain = epi == ("f32", False, "none")
    M, N, nthr = (37, 11, 256) if plain else (7, 9, 32)
    W, D, mn = 0x40000000, 0x50000000, M * N
    ob = 4 if epi[0] == "f32" else 2
    bias_load = bias_loader(N)

    def load(addr, bits):
        off = (addr.astype(np.int64) - W) // 4
        s, i = off // mn, off % mn
        ok = (off >= 0) & (s < splits)
        val = np.where(ok, (i + 1) * (4.0 ** np.minimum(s, 15)), np.nan).astype(np.float32)
        return np.where(ok, val.view(np.uint32).astype(np.uint64), bias_load(addr, bits))

    run = run_threads(mod, name, range(nthr), param_values={0: W, 1: D, 2: M, 3: N, 4: BIAS_ADDR},
                      load_value=load)
    if not run.complete:
        return KernelCheck("split-k", "unknown", f"the reduction could not be run on the PTX: {run.reason}")
    seen: dict = {}
    for ev in run.events:
        if not ev.op.startswith("st.global"):
            continue
        vals = next(iter(stored_values(ev.values)), None)
        if vals is None:
            return KernelCheck("split-k", "unknown", "the reduction stores a value the run does not know")
        for a, v in zip(ev.values["addr"].tolist(), decode_out(epi[0], vals).tolist()):
            seen.setdefault((int(a) - D) // ob, []).append(v)
    why = _reduce_mismatch(seen, splits, epi, mn, N)
    if why:
        return KernelCheck("split-k", "counterexample", why)
    return KernelCheck("split-k", "proved", f"the reduction adds each of the {splits} workspace slots "
                 f"once into each of the {mn} D elements of a {M}x{N} run (grid-stride loop, one "
                 f"CTA of {nthr} threads), then the epilogue {epi[0]}"
                 f"{' + bias' if epi[1] else ''}, {epi[2]}")


def _reduce_mismatch(seen: dict, splits: int, epi: tuple, mn: int, N: int) -> str | None:
    """Law: None when each D element ``i < mn`` was stored once with
    ``out(act((i + 1) (4^S - 1) / 3 + bias))`` (within one output ulp) and nothing else was
    stored; else what differs (the base-4 digits name a slot summed twice, for a plain f32 D)."""
    plain = epi == ("f32", False, "none")
    want = sum(4 ** s for s in range(splits))
    for i in range(mn):
        got = seen.get(i, [])
        if len(got) != 1:
            return f"D element {i} is stored {len(got)} times by the reduction (expected once)"
        exp = float(round_out(epi[0], act_reference(epi[2], np.array(
            [(i + 1) * want + (bias_value(i % N) if epi[1] else 0.0)])))[0])
        if abs(got[0] - exp) > float(out_tolerance(epi[0], np.array([exp]))[0]):
            q = got[0] / (i + 1)
            digits = [int(q) // 4 ** s % 4 for s in range(splits)] if plain and q == int(q) else []
            why = ", ".join(f"slot {s} summed {d} times" for s, d in enumerate(digits) if d != 1)
            return (f"D element {i} = {got[0]:g}, expected {exp:g} (each of the {splits} slots "
                    f"once, then the epilogue {epi}): "
                    f"{why or 'a slot summed twice or missed, another index, or a wrong epilogue'}")
    extra = sorted(set(seen) - set(range(mn)))
    return f"the reduction stores outside D (element {extra[0]})" if extra else None


# ----- host side: the tensor maps -----------------------------------------------------------------

_DRIVER = r"""
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
static CUresult vl_fake_encode(CUtensorMap*, CUtensorMapDataType dt, cuuint32_t rank, void* ptr,
    const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box, const cuuint32_t* es,
    CUtensorMapInterleave il, CUtensorMapSwizzle sw, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
  std::printf("MAP %llu %d %u", (unsigned long long)(size_t)ptr, (int)dt, rank);
  for (cuuint32_t i = 0; i < rank; ++i) std::printf(" %llu", (unsigned long long)dims[i]);
  for (cuuint32_t i = 0; i + 1 < rank; ++i) std::printf(" %llu", (unsigned long long)strides[i]);
  for (cuuint32_t i = 0; i < rank; ++i) std::printf(" %u", box[i]);
  for (cuuint32_t i = 0; i < rank; ++i) std::printf(" %u", es[i]);
  std::printf(" %d %d\n", (int)il, (int)sw);
  return CUDA_SUCCESS;
}
static cudaError_t vl_entry(void** p) { *p = (void*)&vl_fake_encode; return cudaSuccess; }
#define cudaGetDriverEntryPointByVersion(name, p, ver, flags, q) vl_entry(p)
#define cudaGetDriverEntryPoint(name, p, flags, q) vl_entry(p)
#define cudaFuncSetAttribute(f, a, v) cudaErrorNotSupported
#define VL_NO_MAIN
#include "kernel.cu"
int main() {
  std::printf("ENUM %d %d %d %d %d %d %d %d %d %d\n", (int)CU_TENSOR_MAP_SWIZZLE_NONE,
    (int)CU_TENSOR_MAP_SWIZZLE_32B, (int)CU_TENSOR_MAP_SWIZZLE_64B, (int)CU_TENSOR_MAP_SWIZZLE_128B,
    (int)CU_TENSOR_MAP_DATA_TYPE_FLOAT16, (int)CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
    (int)CU_TENSOR_MAP_DATA_TYPE_UINT8, (int)CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
    (int)CU_TENSOR_MAP_DATA_TYPE_TFLOAT32, (int)CU_TENSOR_MAP_INTERLEAVE_NONE);
  %NS%::launch((const void*)4096, (const void*)8192, (float*)12288, %M%, %N%, %K%);
  %NS%::launch((const void*)4096, (const void*)8192, (float*)12288, %M%, %N2%, %K%);   // D rows 16-byte multiples
#ifdef VL_HAVE_D_ROW
  for (uint32_t t = 0; t < 128u; ++t) for (uint32_t e = 0; e < %REGS%u; ++e)
    std::printf("FRAG %u %u %u %u\n", t, e, %NS%::d_row(t, e), %NS%::d_col(t, e));
#endif
#ifdef VL_HAVE_TILES
  for (uint32_t t = 0; t < 11u * 7u; ++t) {
    uint32_t tm = 0, tn = 0;
    %NS%::tile_coords(t, 11u, 7u, tm, tn);
    std::printf("TILE %u %u %u\n", t, tm, tn);
  }
#endif
  return 0;
}
"""


def host_maps(source: str, man: GemmManifest, ptx: str, host: bool) -> tuple[dict | None, list]:
    """Law: ``(maps, checks)`` of the host half: with ``host``, :func:`tensor_maps`'s maps and
    checks; without, its maps alone where the PTX stores D by TMA (D's box is in the host code
    only) and no check; else ``(None, [])``. The sm_90a checks of one CTA and of a cluster
    both start here."""
    if host:
        return tensor_maps(source, man)
    if "cp.async.bulk.tensor.2d.global.shared" in ptx:
        return tensor_maps(source, man)[0], []
    return None, []


def tensor_maps(source: str, man: GemmManifest):
    """Law: ``(maps, checks)``: ``launch`` of ``kernel.cu`` built for the host with a recording
    ``cuTensorMapEncodeTiled`` (and ``d_row``/``d_col``/``tile_coords`` where defined), its tensor
    maps checked against cuda.h and the layout texts; ``maps`` names A and B's (and a TMA-store
    epilogue's D) :class:`ProvedBox`."""
    dt, bm, bn, bk, stages, cons, la, lb = gemm_spec(man)
    ns = cuda_namespace(source)
    if ns is None:
        return None, [KernelCheck("tensor-map", "unknown", "kernel.cu has no namespace vl_<tag>")]
    M, N, K = 3 * bm + 5, 2 * bn + 3, 4 * bk     # the kernel's product: M x N
    swap = man.swap_ab                       # launch(A, B, M', N') with D^T's M = N', N = M'
    n2 = 2 * bn + 8                          # the second launch: D's rows a multiple of 16 bytes
    kx = k_of_dtype(dt)
    frag = fragment((64, bn, kx), "D", dt, acc="f32")
    have_frag = defines_index_function(source, "d_row") and defines_index_function(source, "d_col")
    have_tiles = defines_index_function(source, "tile_coords")
    drv = ("#define VL_HAVE_D_ROW\n" if have_frag else "") + \
        ("#define VL_HAVE_TILES\n" if have_tiles else "") + \
        _DRIVER.replace("%NS%", ns).replace("%M%", str(N if swap else M)) \
        .replace("%N%", str(M if swap else N)).replace("%N2%", str(n2)) \
        .replace("%K%", str(K)).replace("%REGS%", str(frag.registers))
    lines = _driver_output(source, drv)
    if isinstance(lines, KernelCheck):
        return None, [lines]
    out_checks = _host_index_checks(lines, frag, have_frag, have_tiles)
    enum = next((CudaEnums.from_numbers(row) for row in tagged_rows(lines, "ENUM")), None)
    maps = [RecordedMap.from_numbers(row) for row in tagged_rows(lines, "MAP")]
    got = {}
    cm, cn = cluster_shape(man)          # a CTA of a cluster loads one slice of a shared tile
    # the kernel's A operand (BM rows) reads the problem's A, or with swap-AB the problem's B
    ptr_a, ptr_b = (8192, 4096) if swap else (4096, 8192)
    for ptr, name, rows, box_rows, text in ((ptr_a, "A", M, bm // cn, la), (ptr_b, "B", N, bn // cm, lb)):
        mp = next((x for x in maps if x.ptr == ptr), None)
        array = {4096: "A", 8192: "B"}[ptr]
        if mp is None:
            out_checks.append(KernelCheck("tensor-map", "counterexample", f"launch encodes no tensor map "
                                    f"over {array}" + (f" (the kernel's {name} operand: swap-AB)"
                                                       if swap else "")))
            continue
        check = _map_check(mp, enum, name if not swap else f"{name} (over the problem's {array}: "
                           "swap-AB)", (K, rows, box_rows), text, dt)
        out_checks.append(check)
        if check.status == "proved":
            got[name] = ProvedBox(tuple(mp.box), swizzle_span(text), ptr)
    dmap = next((x for x in maps if x.ptr == 12288), None)
    if dmap is not None:                     # a TMA-store epilogue: D's own tensor map
        out = man.epilogue.out if man.splits == 1 else "f32"
        check, d = _d_map_check(dmap, enum, out, (N if swap else M, n2))
        out_checks.append(check)
        if d is not None:
            got["D"] = d
    return got, out_checks


@dataclass(frozen=True)
class CudaEnums:
    """The cuda.h enumerators the recording driver prints (its ``ENUM`` line): the swizzle codes
    by span (16: ``CU_TENSOR_MAP_SWIZZLE_NONE``, 32, 64, 128 bytes), the data types and
    ``CU_TENSOR_MAP_INTERLEAVE_NONE``."""
    swizzle: tuple
    f16: int
    bf16: int
    u8: int
    f32: int
    tf32: int
    interleave_none: int

    @staticmethod
    def from_numbers(xs: list[int]) -> "CudaEnums":
        """Law: the enumerators of the ten numbers of the ``ENUM`` line, in its order.

        >>> CudaEnums.from_numbers(list(range(10))).tf32
        8
        """
        return CudaEnums(tuple(xs[:4]), *xs[4:10])


@dataclass(frozen=True)
class RecordedMap:
    """One ``cuTensorMapEncodeTiled`` call as the recording driver printed it (its ``MAP`` line):
    the global pointer, data type and rank, then (rank 2 only: ``None`` otherwise) the dims
    ``[inner, outer]``, the row stride in bytes, the box, the element strides, the interleave
    and the swizzle code."""
    ptr: int
    dtype: int
    rank: int
    dims: list | None = None
    stride: int | None = None
    box: list | None = None
    elem_strides: list | None = None
    interleave: int | None = None
    swizzle: int | None = None

    @staticmethod
    def from_numbers(xs: list[int]) -> "RecordedMap":
        """Law: the map of a ``MAP`` line's numbers; the rank-2 fields only when there are the
        12 numbers of a rank-2 map.

        >>> RecordedMap.from_numbers([4096, 6, 2, 64, 128, 128, 32, 64, 1, 1, 0, 2]).box
        [32, 64]
        """
        if len(xs) != 12:
            return RecordedMap(*xs[:3])
        return RecordedMap(xs[0], xs[1], xs[2], xs[3:5], xs[5], xs[6:8], xs[8:10], xs[10], xs[11])

    @property
    def is_2d(self) -> bool:
        """Whether the map is rank 2 with every rank-2 field recorded."""
        return self.rank == 2 and self.swizzle is not None


@dataclass(frozen=True)
class ProvedBox:
    """A tensor map whose check proved (:func:`tensor_maps`): its box ``(inner, outer)`` in
    elements, its swizzle span in bytes and the global pointer the driver passed."""
    box: tuple
    span: int
    ptr: int


def _d_map_check(mp: RecordedMap, enum: CudaEnums, out: str, dims: tuple) -> tuple:
    """Law: ``(check, map)``: proved when D's recorded tensor map has cuda.h's data type of
    ``out``, rank 2, dims ``[columns, rows]`` of the D launched, a row stride of the columns'
    bytes, element strides 1, no interleave, a 32/64/128-byte swizzle whose span is the box's
    inner extent; ``map`` (a :class:`ProvedBox`) where proved, else None."""
    ob = 4 if out == "f32" else 2
    want_type = {"f32": enum.f32, "f16": enum.f16, "bf16": enum.bf16}[out]
    spans = {enum.swizzle[1]: 32, enum.swizzle[2]: 64, enum.swizzle[3]: 128}
    rows, cols = dims
    if not mp.is_2d:
        return KernelCheck("tensor-map", "counterexample", f"tensor map of D: rank {mp.rank}, expected 2"), None
    box, sw = mp.box, mp.swizzle
    span = spans.get(sw)
    want = {"data type": (mp.dtype == want_type, f"{mp.dtype}, cuda.h's for {out} is {want_type}"),
            "dims": (mp.dims == [cols, rows], f"{mp.dims}, expected [N={cols}, M={rows}]"),
            "row stride": (mp.stride == cols * ob, f"{mp.stride} bytes, expected N * {ob} = {cols * ob}"),
            "box": (span is not None and box[0] * ob == span and 1 <= box[1] <= 256,
                    f"{box} with swizzle {sw}: the inner extent must be one 32/64/128-byte swizzle span"),
            "element strides": (mp.elem_strides == [1, 1], f"{mp.elem_strides}"),
            "interleave": (mp.interleave == enum.interleave_none, f"{mp.interleave}")}
    bad = [f"{k} {why}" for k, (ok, why) in want.items() if not ok]
    if bad:
        return KernelCheck("tensor-map", "counterexample", "tensor map of D: " + "; ".join(bad)), None
    return (KernelCheck("tensor-map", "proved", f"tensor map of D ({out}): dims, stride, box {box}, "
                        f"swizzle {span}B as cuda.h says (host code run with a recording encoder)"),
            ProvedBox(tuple(box), span, 12288))


def replay_gemm(man: GemmManifest, source: str, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``D`` (M x N, float64; NaN where nothing was stored) as the emitted kernel computes it from
    ``A`` (M x K) and ``B`` (N x K), replayed from its PTX run and host code, sharing nothing with
    the emitter: the host's tensor maps say which array each TMA map reads (with swap-AB the
    kernel's A operand is ``B``); the run's TMA coordinates say which rows and K-tile each
    pipeline iteration loads; each consumer warpgroup multiplies its 64 rows of the stage's A by
    all rows of B (what the ``descriptor`` check proves its wgmmas read), accumulates across the
    iterations since its last reset (scale-d 0 or zeroed accumulators), and each store writes the
    accumulator element its value tags at the address the run computes (a TMA store: the element
    its box reads from what the consumers staged, through TMA's swizzle and D's tensor map from
    the host code), element ``e`` of thread ``t`` being ``D(row, col)`` of the PTX D fragment;
    rows and K past the arrays read 0 (TMA's
    zero fill); split-K slots are summed (what the ``split-k`` reduction check proves the
    reduction kernel does). Plain f32 D, one CTA, no cluster; a ``LayoutError`` otherwise, or where
    the kernel does not compile or run.

    Law: equals ``A @ B.T`` (exactly, for integer inputs whose sums are exact) when the kernel's
    dataflow is right.
    """
    # long: the run, then each consumer's stores replayed with the numbers
    dt, bm, bn, bk, stages, cons, la, lb = gemm_spec(man)
    _one_cta(man)
    if epilogue_spec(man) != ("f32", False, "none"):
        raise LayoutError("replay_gemm: a plain f32 D only (no bias, activation or conversion)")
    M, K = A.shape
    N = B.shape[0]
    maps, checks = tensor_maps(source, man)
    if maps is None or not {"A", "B"} <= set(maps):
        raise LayoutError(f"replay_gemm: the tensor maps are not proved: {[c.message for c in checks]}")
    arrays = {4096: np.asarray(A, dtype=np.float64), 8192: np.asarray(B, dtype=np.float64)}
    xa, xb = arrays[maps["A"].ptr], arrays[maps["B"].ptr]
    km, kn = xa.shape[0], xb.shape[0]                   # the kernel's product: km x kn
    ok, ptx = compile_ptx(source)
    if not ok:
        raise LayoutError(f"replay_gemm: kernel.cu does not compile: {ptx}")
    mod = parse_ptx(ptx)
    entry = next((f for f in mod.functions if "vl_gemm_kernel" in f), None)
    run = run_threads(mod, entry, range(128 * (cons + 1)),
                      param_values=PARAMS(km, kn, K), shared_base=SMEM_BASE)
    if not run.complete:
        raise LayoutError(f"replay_gemm: the kernel could not be run on the PTX: {run.reason}")
    g = GemmSim(SimInputs(man=man, run=run, dt=dt, eb=_BYTES[dt], bm=bm, bn=bn, bk=bk, stages=stages,
                          cons=cons, la=la, lb=lb, M=km, N=kn, K=K, k_tiles=-(-K // bk), maps=maps))
    g.splits = splits_of(man)
    g.pingpong = man.consumer_schedule == "pingpong"
    procs = g.traces()
    loads: dict = {}                                    # iteration -> [A row, B row, K start]
    it = -1
    for ev, v, _n, _t in procs[0]:
        if ev.op.startswith("mbarrier.try_wait"):
            it += 1
        if ev.op.startswith("cp.async.bulk.tensor") and ".global.shared" not in ev.op:
            x = loads.setdefault(max(it, 0), [None, None, None])
            c0, c1 = int(v["c0"][0]), int(v["c1"][0])
            x[2] = c0 if x[2] is None else min(x[2], c0)
            x[0 if int(v["map"][0]) == MAP_A_ADDR else 1] = c1
    pad = lambda x, r0, rows, k0: np.pad(x, ((0, max(0, r0 + rows - x.shape[0])), (0, max(0, k0 + bk - K))))[  # noqa: E731
        r0:r0 + rows, k0:k0 + bk]
    coord = np.array(fragment_coords((64, bn, g.kx), "D", dt, acc="f32"))
    regs = coord.shape[1]
    mem = np.full(g.splits * km * kn, np.nan)
    for c in range(1, cons + 1):
        for _ev, _it, acc, stored in g.d_stores(procs[c], regs, c):
            prod = np.zeros((64, bn))
            for i in acc:
                a0, b0, k0 = loads[i]
                prod += pad(xa, a0 + 64 * g.row_block(c), 64, k0) @ pad(xb, b0, bn, k0).T
            for pos, e, _alt, who in stored:
                if pos is None:
                    raise LayoutError(f"replay_gemm: {e}")
                tt = np.asarray(who, dtype=np.int64) % 128
                ee = np.asarray(e, dtype=np.int64)
                keep = (ee >= 0) & (ee < regs) & (pos >= 0) & (pos < len(mem))
                mem[pos[keep]] = prod[coord[tt[keep], ee[keep], 0], coord[tt[keep], ee[keep], 1]]
    out = mem.reshape(g.splits, M * N).sum(axis=0)
    return out.reshape(M, N)


@functools.lru_cache(maxsize=32)   # keyed by (kernel source, driver); one host build per process
def _driver_output(source: str, drv: str) -> tuple[str, ...] | KernelCheck:
    """Law: the lines the recording driver prints when kernel.cu's host code is built with it
    (nvcc with ``HOST_NVCC_FLAGS``: nvcc's host code, no SASS; linked without -lcuda, with it
    where a symbol is left undefined) and run; a counterexample KernelCheck where the host code does
    not build."""
    with tempfile.TemporaryDirectory(prefix="vl_tmap_") as d:
        with open(os.path.join(d, "kernel.cu"), "w", encoding="utf-8") as f:
            f.write(source)
        with open(os.path.join(d, "driver.cu"), "w", encoding="utf-8") as f:
            f.write(drv)
        # the encoder is looked up through the runtime (and recorded here), so the driver
        # library is linked only where linking without it leaves a symbol undefined
        rc, out = run_nvcc([*HOST_NVCC_FLAGS, "driver.cu", "-o", "driver"], d)
        if rc != 0 and "undefined reference" in out:
            rc, out = run_nvcc([*HOST_NVCC_FLAGS, "driver.cu", "-o", "driver", "-lcuda"], d)
        if rc != 0:
            err = next((ln for ln in out.splitlines() if "error" in ln), out[:200])
            return KernelCheck("tensor-map", "counterexample", f"the host code does not build "
                         f"with a recording cuTensorMapEncodeTiled: {err.strip()}")
        p = subprocess.run([os.path.join(d, "driver")], capture_output=True, text=True, timeout=60)
    return tuple(p.stdout.splitlines())


def _map_check(mp: RecordedMap, enum: CudaEnums, name: str, extents: tuple, text: str,
               dt: str) -> KernelCheck:
    """Law: proved when the recorded tensor map ``mp`` of operand ``name`` (pointer, data type,
    rank, dims, stride, box, element strides, interleave, swizzle) has cuda.h's values (``enum``,
    as the driver printed them) for ``dt``, dims [K, rows], a row stride of K elements, a box of
    one swizzle span by the tile's rows, and the swizzle of the layout text."""
    K, rows, box_rows = extents
    eb = _BYTES[dt]
    sw_enum = dict(zip((16, 32, 64, 128), enum.swizzle))
    want_types = {"f16": {enum.f16}, "bf16": {enum.bf16}, "e4m3": {enum.u8}, "tf32": {enum.f32, enum.tf32}}
    dtype = mp.dtype
    span = swizzle_span(text)
    if not mp.is_2d:
        return KernelCheck("tensor-map", "counterexample", f"tensor map of {name}: rank {mp.rank}, expected 2")
    dims, stride, box, es, il, sw = mp.dims, mp.stride, mp.box, mp.elem_strides, mp.interleave, mp.swizzle
    want = {"data type": (dtype in want_types[dt], f"{dtype}, cuda.h's for {dt} is "
                          f"{sorted(want_types[dt])}"),
            "dims": (dims == [K, rows], f"{dims}, expected [K={K}, rows={rows}]"),
            "row stride": (stride == K * eb, f"{stride} bytes, expected K * {eb} = {K * eb}"),
            "box": (box == [span // eb, box_rows], f"{box}, expected [{span // eb} (the "
                    f"{span}-byte swizzle span), {box_rows}]"),
            "element strides": (es == [1, 1], f"{es}"),
            "interleave": (il == enum.interleave_none, f"{il}"),
            "swizzle": (sw == sw_enum.get(span), f"{sw}, but the layout {text.split(' o ')[0]} "
                        f"is the {span}-byte swizzle: cuda.h's CU_TENSOR_MAP_SWIZZLE_{span}B = "
                        f"{sw_enum.get(span)}")}
    bad = [f"{k} {why}" for k, (ok, why) in want.items() if not ok]
    if bad:
        return KernelCheck("tensor-map", "counterexample", f"tensor map of {name}: " + "; ".join(bad))
    return KernelCheck("tensor-map", "proved", f"tensor map of {name}: data type, dims, stride, box "
                 f"{box}, swizzle {span}B as cuda.h and the layout text say (host code run with a "
                 "recording encoder)")


def _host_index_checks(lines, frag, have_frag: bool, have_tiles: bool) -> list[KernelCheck]:
    """``d_row``/``d_col`` (host-compiled) against the PTX D fragment on every (thread, element);
    ``tile_coords`` on an 11 x 7 tile grid (a partial GROUP_M group): a bijection onto the grid."""
    out = []
    if have_frag:
        rows = tagged_rows(lines, "FRAG")
        table = fragment_coords(frag.shape, "D", frag.dtype, acc=frag.acc)
        bad = [(t, e, r, c) for t, e, r, c in rows if (table[t][e] if 0 <= t < 128 and
               0 <= e < frag.registers else frag.coord(t, e)) != (r, c)]
        if bad or len(rows) != 128 * frag.registers:
            t, e, r, c = bad[0] if bad else (0, 0, -1, -1)
            out.append(KernelCheck("index-functions", "counterexample", f"d_row/d_col({t}, {e}) = ({r}, "
                             f"{c}) compiled for the host; the PTX D fragment says "
                             f"{frag.coord(t, e)}"))
        else:
            out.append(KernelCheck("index-functions", "proved", f"d_row/d_col equal the PTX D fragment on "
                             f"all {len(rows)} (thread, element) pairs (host-compiled)"))
    if have_tiles:
        tiles = [tuple(row) for row in tagged_rows(lines, "TILE", skip=2)]
        grid = {(a, b) for a in range(11) for b in range(7)}
        if sorted(tiles) != sorted(grid):
            out.append(KernelCheck("index-functions", "counterexample", "tile_coords over an 11 x 7 grid "
                             f"does not visit every tile once ({len(set(tiles) & grid)} of 77)"))
        else:
            out.append(KernelCheck("index-functions", "proved", "tile_coords visits each tile of an "
                             "11 x 7 grid exactly once (host-compiled)"))
    return out


# ----- the run ---------------------------------------------------------------------------------

def ring_iterations(prod: list, cons: list) -> list[int]:
    """Law: per step of the consumer trace ``cons``, the pipeline iteration it is in (-1 before
    its first): the producer's ``j``-th ``arrive.expect_tx`` names the full barrier ``F_j`` of
    iteration ``j``, and the ``n``-th such arrival on a barrier completes its phase of parity
    ``n & 1`` (PTX ISA mbarrier phases); a consumer wait on ``(F, p)`` enters the first iteration
    after its current one with ``F_j = F`` and that parity (``len(F)``, no iteration, if none); a
    wait on any other mbarrier (a ping-pong turn) keeps the iteration. A cooperative consumer,
    waiting every iteration in order, gets ``0, 1, 2, ...``.

    >>> from types import SimpleNamespace as S
    >>> ev = lambda op: S(op=op)
    >>> prod = [Step(ev("mbarrier.arrive.expect_tx"), {"addr": [8]}, 1, None)] * 4
    >>> w = lambda a, p: Step(ev("mbarrier.try_wait.parity"), {"addr": [a], "a1": [p]}, 128, None)
    >>> ring_iterations(prod, [w(8, 1), w(8, 1), w(40, 0)])
    [1, 3, 3]
    """
    full = [int(v["addr"][0]) for ev, v, _n, _t in prod
            if ev.op.startswith("mbarrier.arrive.expect_tx")]
    uses: dict = {}
    parity = []
    for a in full:
        parity.append(uses.get(a, 0) & 1)
        uses[a] = uses.get(a, 0) + 1
    out, cur = [], -1
    for ev, v, _n, _t in cons:
        if ev.op.startswith(("mbarrier.try_wait", "mbarrier.test_wait")) and int(v["addr"][0]) in uses:
            a, p = int(v["addr"][0]), int(phase_parity(v)[0]) & 1
            cur = next((j for j in range(cur + 1, len(full)) if full[j] == a and parity[j] == p),
                       len(full))
        out.append(cur)
    return out


def readers_of(prog: tuple, tmas: tuple) -> tuple:
    """Law: per pipeline iteration (0 .. the TMAs' last), the consumers (process ``p`` is
    consumer ``p - 1``) whose wgmmas read it, as the ring's ``readers``
    (:class:`verilayout.simulate.ring.RingSystem`).

    >>> r = Read("read", (), 1, (0, None))
    >>> readers_of(((), (), (r,)), (RingTma(0, 0, 0, 0, 1, (0,), 0, (0, None)),))
    ((), (1,))
    """
    n = max((x.it for x in tmas), default=-1) + 1
    got: dict = {}
    for p, acts in enumerate(prog):
        for a in acts:
            if p > 0 and a.kind == "read":
                got.setdefault(a.it, set()).add(p - 1)
    return tuple(tuple(sorted(got.get(j, ()))) for j in range(n))


def turn_program(trace: list, turns: set) -> tuple:
    """Law: a consumer trace projected on the ping-pong turns, in program order: ``("wait",
    barrier, parity, event)`` and ``("arrive", barrier, threads, event)`` on the turn mbarriers
    ``turns``, ``("mma", event)`` for a run of ``wgmma.mma_async`` and ``("epi", event)`` for a
    run of epilogue writes (``st.shared`` staging, stores of D); other instructions dropped.

    >>> from types import SimpleNamespace as S
    >>> st = lambda op, a=0: Step(S(op=op), {"addr": [a], "a1": [1]}, 128, None)
    >>> [a[0] for a in turn_program([st("mbarrier.try_wait.parity", 8), st("wgmma.mma_async.x"),
    ...     st("wgmma.mma_async.x"), st("mbarrier.arrive.shared", 16), st("st.global.f32")], {8, 16})]
    ['wait', 'mma', 'arrive', 'epi']
    """
    out: list = []
    for ev, v, n, _t in trace:
        op = ev.op
        if op.startswith("mbarrier.") and v.get("addr") is not None and int(v["addr"][0]) in turns:
            if op.startswith(("mbarrier.try_wait", "mbarrier.test_wait")):
                out.append(("wait", int(v["addr"][0]), int(phase_parity(v)[0]) & 1, ev))
            elif op.startswith("mbarrier.arrive"):
                out.append(("arrive", int(v["addr"][0]), n, ev))
            continue
        kind = ("mma" if op.startswith("wgmma.mma_async") else
                "epi" if op.startswith("st.shared") or is_d_store(op) else None)
        if kind and not (out and out[-1][0] == kind):
            out.append((kind, ev))
    return tuple(out)


def _turn_step(s, progs: tuple, counts: dict):
    """One step of every consumer from state ``s = (pcs, (), (), phases, pending, busy)``
    (:func:`verilayout.simulate.ring.explore`): a wait passes once its parity's phase completed
    (the phase bit differs from it), an arrival counts down and completes the phase at zero and
    ends the consumer's turn, a wgmma or epilogue write marks the consumer busy with it; an
    error where one is busy with what the other is already busy with."""
    pcs, busy = s[0], s[5]
    ph, pend = dict(s[3]), dict(s[4])
    succ, blocked = [], []
    for q, prog in enumerate(progs):
        if pcs[q] == len(prog):
            continue
        a = prog[pcs[q]]
        ph2, pend2, busy2 = dict(ph), dict(pend), list(busy)
        if a[0] == "wait":
            if ph[a[1]] == a[2]:
                blocked.append(f"consumer {q} waits for its turn on mbarrier {a[1]:#x} (parity "
                               f"{a[2]}; line {a[3].instr.line if a[3].instr else '?'})")
                continue
        elif a[0] == "arrive":
            pend2[a[1]] -= a[2]
            if pend2[a[1]] < 0:
                return [], (f"consumer {q}: more arrivals on turn mbarrier {a[1]:#x} than its count "
                            f"{counts[a[1]]} in one phase", a[3]), []
            if pend2[a[1]] == 0:
                ph2[a[1]], pend2[a[1]] = ph[a[1]] ^ 1, counts[a[1]]
            busy2[q] = None
        elif busy[1 - q] == a[0]:
            what = "MMA (wgmma)" if a[0] == "mma" else "epilogue"
            return [], (f"consumers {1 - q} and {q} are both in their {what} at once: the turn "
                        f"barriers do not order them", a[1]), []
        else:
            busy2[q] = a[0]
        p2 = list(pcs)
        p2[q] += 1
        succ.append((tuple(p2), (), (), tuple(sorted(ph2.items())), tuple(sorted(pend2.items())),
                     tuple(busy2)))
    return succ, None, blocked


def _stored_tiles(run, dims: tuple, tile: tuple, ob: int) -> list[tuple]:
    """Law: ``(thread, (tm, tn, slot))`` of each D store of ``run``: a TMA store's box origin
    ``(c1 // BM, c0 // BN)``, an ``st.global``'s element ``(addr - D) / ob`` of the row-major
    ``M x N`` D (a split-K slot ``element // (M N)``)."""
    (M, N), (bm, bn), out = dims, tile, []
    for ev in run.events:
        if not is_d_store(ev.op):
            continue
        for k, lane in enumerate(ev.lanes):
            th = int(run.threads[lane])
            if is_tma_store(ev.op):
                out.append((th, (int(ev.values["c1"][k]) // bm, int(ev.values["c0"][k]) // bn, 0)))
            else:
                idx = (int(ev.values["addr"][k]) - D_ADDR) // ob
                r = idx % (M * N)
                out.append((th, (r // N // bm, r % N // bn, idx // (M * N))))
    return out


def pingpong_cover_check(mod, entry: str, man: GemmManifest, grids: tuple[int, int] = (3, 2),
                         grid_max: int | None = None) -> KernelCheck:
    """The ping-pong ``cover`` check: a ``tiles_m x tiles_n`` tile grid (``K``: one K-tile per
    K slice) launched on every grid size ``G`` in ``1 .. grid_max`` (default units + 1); thread
    0 of each consumer warpgroup (threads 128 and 256) of every CTA ``b < G`` run on the PTX
    (``%ctaid.x = b``, ``%nctaid.x = G``; its mbarrier waits pass at once); the tiles each
    consumer stores (:func:`_stored_tiles`).

    Law: ``proved`` only when, for every grid size, every unit (tile and K slot) is stored by
    exactly one consumer of exactly one CTA, and nothing outside the grid; else a
    ``counterexample`` naming the grid, the unit and who stored it.
    """
    bm, bn, bk, splits = man.bm, man.bn, man.bk, splits_of(man)
    tiles_m, tiles_n = grids
    M, N, K = tiles_m * bm, tiles_n * bn, bk * splits
    ob = 4 if splits > 1 or man.epilogue.out == "f32" else 2
    want = {(a, b, s) for a in range(tiles_m) for b in range(tiles_n) for s in range(splits)}
    top = grid_max or len(want) + 1
    for g in range(1, top + 1):
        owner: dict = {}
        runs = run_ctas(mod, entry, [128, 256], range(g), nctaid=g, param_values=PARAMS(M, N, K),
                        shared_base=SMEM_BASE, max_steps=400000)
        for b, run in enumerate(runs):
            if not run.complete:
                return KernelCheck("cover", "unknown", f"CTA {b} of grid {g} could not be run on the "
                                   f"PTX: {run.reason}")
            for th, t in _stored_tiles(run, (M, N), (bm, bn), ob):
                owner.setdefault(t, set()).add((b, th // 128 - 1))
        for t in sorted(want | set(owner)):
            who = sorted(owner.get(t, ()))
            name = f"tile {t[:2]}" + (f" K slot {t[2]}" if splits > 1 else "")
            names = ", ".join(f"CTA {x} consumer {c}" for x, c in who) or "no consumer"
            if t not in want or len(who) != 1:
                where = "outside the grid, " if t not in want else ""
                return KernelCheck("cover", "counterexample", f"ping-pong: {name} {where}stored by "
                                   f"{names} at grid {g} ({len(want)} units)")
    return KernelCheck("cover", "proved", f"ping-pong: {tiles_m} x {tiles_n} tiles"
                       f"{f' x {splits} K slots' if splits > 1 else ''}: every unit stored by exactly "
                       f"one consumer warpgroup of one CTA for every grid of 1 .. {top} CTAs (thread 0 "
                       "of both consumers of each CTA run on the PTX; their stores of D)")


@dataclass(frozen=True)
class TmaLoad:
    """One TMA load (global to shared) of a run, as its producer issued it: its pipeline
    iteration ``it`` (the producer's mbarrier waits before it), shared destination ``dst``, the
    tensor map's address ``map``, the box's coordinates ``c0`` (K) and ``c1`` (rows) and the
    event ``ev``; in a cluster also its mbarrier ``bar``, its CTA mask ``mask`` and the issuing
    CTA ``sender``."""

    it: int
    dst: int
    map: int
    c0: int
    c1: int
    ev: Any
    bar: int = 0
    mask: int = 0
    sender: int = 0


def tma_load(ev, it: int) -> TmaLoad:
    """Law: the :class:`TmaLoad` of a ``cp.async.bulk.tensor`` load event issued after ``it + 1``
    waits (iteration ``max(it, 0)``), read from its first thread's values.

    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> v = {k: np.array([x]) for k, x in (("addr", 64), ("map", MAP_A_ADDR), ("c0", 16), ("c1", 8))}
    >>> t = tma_load(SimpleNamespace(values=v), -1)
    >>> (t.it, t.dst, t.c0, t.c1, t.map == MAP_A_ADDR)
    (0, 64, 16, 8, True)
    """
    v = ev.values
    return TmaLoad(max(it, 0), int(v["addr"][0]), int(v["map"][0]), int(v["c0"][0]), int(v["c1"][0]), ev)


class Step(NamedTuple):
    """One event of one process's trace: the event, its operand values over the process's threads
    that ran it (read by role: :mod:`verilayout.simulate.ptx_run`'s named operands), how many
    threads, and their thread ids."""
    event: Event
    values: dict
    count: int
    threads: np.ndarray


@dataclass(frozen=True, kw_only=True)
class SimInputs:
    """What one simulated GEMM run is checked against: the manifest ``man``, the PTX run ``run``
    (:class:`verilayout.simulate.ptx_run.RunResult`, or a stand-in with ``threads`` alone for the
    checks that read no run), the kernel's element type ``dt`` of ``eb`` bytes, tile
    ``bm x bn x bk``, ``stages`` ring stages, ``cons`` consumer warpgroups, A's and B's CuTe
    layout texts ``la``/``lb``, the problem ``M x N x K`` in ``k_tiles`` K-tiles, and the proved
    tensor maps ``maps`` (None where the host code was not run).

    Law: the fields are given by name; :class:`GemmSim` reads them and keeps them.

    >>> from types import SimpleNamespace
    >>> SimInputs(man=_SPEC, run=SimpleNamespace(threads=[]), dt="f16", eb=2, bm=64, bn=64, bk=64,
    ...           stages=2, cons=1, la="", lb="", M=64, N=64, K=128, k_tiles=2, maps=None).k_tiles
    2
    """

    man: GemmManifest
    run: Any
    dt: str
    eb: int
    bm: int
    bn: int
    bk: int
    stages: int
    cons: int
    la: str
    lb: str
    M: int
    N: int
    K: int
    k_tiles: int
    maps: dict | None


def _spec_inputs(man: GemmManifest, run, problem: tuple, k_tiles: int, maps=None) -> SimInputs:
    """The :class:`SimInputs` of an sm_90a manifest's :func:`gemm_spec` (doctests)."""
    dt, bm, bn, bk, stages, cons, la, lb = gemm_spec(man)
    M, N, K = problem
    return SimInputs(man=man, run=run, dt=dt, eb=_BYTES[dt], bm=bm, bn=bn, bk=bk, stages=stages,
                     cons=cons, la=la, lb=lb, M=M, N=N, K=K, k_tiles=k_tiles, maps=maps)


class GemmSim:
    """The simulated run of one emitted GEMM and the checks read from it (shared by the sm_90a and sm_100a checks)."""

    def __init__(self, inp: SimInputs):
        self.man, self.run, self.dt, self.eb = inp.man, inp.run, inp.dt, inp.eb
        self.bm, self.bn, self.bk, self.stages, self.cons = inp.bm, inp.bn, inp.bk, inp.stages, inp.cons
        self.la, self.lb, self.M, self.N, self.K = inp.la, inp.lb, inp.M, inp.N, inp.K
        self.k_tiles, self.maps = inp.k_tiles, inp.maps
        self.kx = k_of_dtype(inp.dt)
        self.th = np.asarray(inp.run.threads)
        self.checks: list[KernelCheck] = []

    label = ""
    splits = 1
    #: the first K-tile this CTA loads (a K slice of its own CTA on sm_100a; 0 otherwise)
    k_first = 0
    #: explore each TMA landing before any process moves (see LANDING_ASSUMPTION)
    eager_landing = False
    #: ping-pong consumers (manifest ``consumer_schedule``): each owns whole 64-row tiles, so a
    #: consumer's rows start at the tile's, and its waits are mapped to pipeline iterations by
    #: :func:`ring_iterations` (it skips the other's)
    pingpong = False
    _iters: dict = {}

    def row_block(self, c: int) -> int:
        """Law: the 64-row block of the tile consumer process ``c`` (1..) computes: ``c - 1``
        (cooperative), 0 (ping-pong: a 64-row tile)."""
        return 0 if self.pingpong else c - 1

    def wait_iteration(self, c: int, i: int, it: int) -> int:
        """Law: the pipeline iteration of consumer process ``c`` after its ``i``-th step, a
        wait, when it was ``it`` before: ``it + 1`` (cooperative: every wait is the next
        iteration's full barrier); ping-pong: :func:`ring_iterations` (a turn wait keeps ``it``)."""
        return self._iters[c][i] if self.pingpong else it + 1

    def add(self, check, status, msg, ev=None):
        ins = ev.instr if ev is not None else None
        msg += self.label
        self.checks.append(KernelCheck(check, status, msg, ins.line if ins else None,
                                 ins.loc if ins else None))

    # roles: process 0 = the producer thread (the one issuing TMA), 1.. = consumer warpgroups
    def traces(self):
        tma = [e for e in self.run.events if e.op.startswith("cp.async.bulk.tensor")
               and not is_tma_store(e.op)]
        if not tma:
            return None
        prod_t = int(self.th[tma[0].lanes[0]])
        procs: list[list] = [[] for _ in range(self.cons + 1)]
        for ev in self.run.events:
            t = self.th[ev.lanes]
            wg = t // 128
            for p in range(self.cons + 1):
                if p == 0:
                    sel = t == prod_t
                else:
                    sel = wg == p
                if not sel.any():
                    continue
                idx = np.nonzero(sel)[0]
                vals = {k: (None if v is None else v[..., idx]) for k, v in ev.values.items()}
                procs[p].append(Step(ev, vals, int(sel.sum()), t[idx]))
        if self.pingpong:
            self._iters = {c: ring_iterations(procs[0], procs[c]) for c in range(1, self.cons + 1)}
        return procs

    def all(self) -> list[KernelCheck]:
        procs = self.traces()
        if procs is None:
            self.add("tma", "counterexample", "the PTX issues no cp.async.bulk.tensor")
            return self.checks
        prod = procs[0]
        init = {int(v["addr"][0]): int(init_count(v)[0]) for ev, v, n, t in prod
                if ev.op.startswith("mbarrier.init")}
        tmas, it = [], -1
        for ev, v, n, t in prod:
            if ev.op.startswith("mbarrier.try_wait"):
                it += 1
            if ev.op.startswith("cp.async.bulk.tensor") and not is_tma_store(ev.op):
                tmas.append(tma_load(ev, it))
        self.instruction_checks(procs)
        tiles = self.tma_checks(tmas)
        self.descriptor_checks(procs, tmas)
        self.protocol_check(procs, init, tmas)
        if self.pingpong:
            self.turn_check(procs, init)
        self.d_store_checks(procs, tiles, tmas)
        self.tma_store_checks(procs)
        return self.checks

    def _outside_iterations(self, prod: list) -> set:
        """Law: the pairs ``(iteration, consumer process c)`` whose tile, read off the producer's
        TMA load coordinates (A row ``c1 // BM``, B row ``c1 // BN``), has no element of D in
        consumer ``c``'s 64 rows (a cluster's tile past M or N: its sum is never stored).

        >>> from types import SimpleNamespace
        >>> g = GemmSim(_spec_inputs(_SPEC, SimpleNamespace(threads=[]), (64, 64, 128), 2))
        >>> g._outside_iterations([])
        set()
        """
        tile: dict = {}
        it = -1
        for ev, v, _n, _t in prod:
            if ev.op.startswith("mbarrier.try_wait"):
                it += 1
            if ev.op.startswith("cp.async.bulk.tensor") and ".global.shared" not in ev.op:
                tm, tn = tile.get(max(it, 0), (None, None))
                if int(v["map"][0]) == MAP_A_ADDR:
                    tm = int(v["c1"][0]) // self.bm
                elif int(v["map"][0]) == MAP_B_ADDR:
                    tn = int(v["c1"][0]) // self.bn
                tile[max(it, 0)] = (tm, tn)
        return {(i, c) for i, (tm, tn) in tile.items() for c in range(1, self.cons + 1)
                if tm is not None and tn is not None
                and (tm * self.bm + 64 * self.row_block(c) >= self.M or tn * self.bn >= self.N)}

    def _consumer_wgmmas(self, procs):
        """Law: yields (process c >= 1, iteration, k, event, values, fresh) for each
        wgmma.mma_async of each consumer in program order; the iteration counts the consumer's
        mbarrier waits from -1, and k counts its wgmmas since the last wait from 0; ``fresh``:
        whether the wgmma starts a new sum (the first since a store of D, or since a tile with
        nothing to store), None where its own tile has nothing to store (either is right)."""
        outside = self._outside_iterations(procs[0])
        for c in range(1, self.cons + 1):
            it, kb, fresh = -1, 0, True
            for i, (ev, v, _n, _t) in enumerate(procs[c]):
                if ev.op.startswith("mbarrier.try_wait"):
                    prev, it = it, self.wait_iteration(c, i, it)
                    if it == prev:       # a ping-pong turn wait: no iteration begins
                        continue
                    kb = 0
                    # after a tile with no element of D in this consumer's rows, nothing is stored
                    # and nothing is lost: the next sum may start afresh
                    fresh = fresh or (prev, c) in outside
                    continue
                if is_d_store(ev.op):
                    fresh = True
                if not ev.op.startswith("wgmma.mma_async"):
                    continue
                yield c, it, kb, ev, v, (None if (it, c) in outside else fresh)
                kb, fresh = kb + 1, False

    # ---- the wgmma instruction ----
    def instruction_checks(self, procs: list) -> None:
        """Adds the ``instruction`` check of the consumers' traces ``procs[1:]`` (``procs``:
        :meth:`traces`). Law: ``proved`` when every consumer wgmma is ``m64n<BN>k<K>`` of the
        dtype with the PTX ISA operands and immediates, fenced after other accesses of its
        registers, scale-d 0 (or zeroed accumulators) first in a tile and 1 after; else the
        first ``counterexample`` (or ``unknown`` where scale-d is not one known value)."""
        want = (f"wgmma.mma_async.sync.aligned.m64n{self.bn}k{self.kx}.f32.{self.dt}.{self.dt}")
        imms = imm_operands(self.dt, "smem")
        nkb = self.bk // self.kx
        n = 0
        for c, it, kb, ev, v, fresh in self._consumer_wgmmas(procs):
            kb %= nkb
            ops = ev.instr.operands
            if ev.op != want or len(ops) != 4 + len(imms):
                self.add("instruction", "counterexample", f"consumer {c - 1}: {ev.op} with "
                         f"{len(ops)} operands; expected {want} D, A desc, B desc, scale-d"
                         f"{''.join(', ' + x for x in imms)}", ev)
                return
            for name, text in zip(imms, ops[4:]):
                need = 1 if name.startswith("imm-scale") else 0    # both operands K-major
                if parse_immediate(text) != need:
                    self.add("instruction", "counterexample", f"consumer {c - 1}: {name} is "
                             f"{text}, expected {need}", ev)
                    return
            if v.get("unfenced") is not None and v["unfenced"].any():
                self.add("instruction", "counterexample", f"consumer {c - 1}, iteration {it}, "
                         f"K-block {kb}: the wgmma follows an access of its accumulator or A "
                         "registers by another instruction with no wgmma.fence in between "
                         "(PTX ISA 9.7.15, wgmma.fence)", ev)
                return
            sd = v.get("scale_d")
            first = fresh     # the first wgmma since the last epilogue: a new tile or K slice
            if first is None:  # a tile past M or N for this consumer: its sum is never stored
                n += 1
                continue
            if sd is None or len(set(sd.tolist())) != 1:
                self.add("instruction", "unknown", f"consumer {c - 1}: scale-d is not one "
                         "known value", ev)
                return
            zero = v.get("d_zero") is not None and bool(v["d_zero"].all())
            if first and sd[0] and not zero:
                self.add("instruction", "counterexample", f"consumer {c - 1}, iteration {it}: "
                         "the first wgmma of a tile accumulates (scale-d 1) onto accumulators "
                         "that are not zero: the previous tile's sum leaks in", ev)
                return
            if not first and not sd[0]:
                self.add("instruction", "counterexample", f"consumer {c - 1}, iteration {it}, "
                         f"K-block {kb}: scale-d 0 discards the K-blocks summed before it", ev)
                return
            n += 1
        self.add("instruction", "proved", f"{n} x {want}: operand order, immediates "
                 f"({', '.join(imms) or 'none'}), scale-d 0 or zeroed accumulators at each tile's "
                 "first K-block and 1 after")

    def expected_tiles(self) -> set:
        """Law: the tiles ``(tm, tn)`` this CTA's producer must load: the whole tile grid (one
        CTA runs the grid)."""
        tm_n, tn_n = -(-self.M // self.bm), -(-self.N // self.bn)
        return {(a, b) for a in range(tm_n) for b in range(tn_n)}

    # ---- TMA placement and coordinates ----
    def tma_checks(self, tmas: list) -> dict:
        """Adds the ``tma`` check of the producer's loads ``tmas`` (dicts: iteration, destination,
        map, coordinates, event) and returns each iteration's tile ``(tm, tn)``. Law: ``proved``
        when every box writes each (mn, k) at the layout text's byte and the tiles of
        :meth:`expected_tiles` and their K-tiles are walked once, in order.

        >>> from types import SimpleNamespace
        >>> g = GemmSim(_spec_inputs(_SPEC, SimpleNamespace(threads=[]), (128, 64, 64), 2))
        >>> g.tma_checks([]), g.checks[0].message
        ({}, 'A: TMA loads in 0 pipeline iterations, the problem has 4 (2 tiles x 2 K-tiles)')
        """
        # long: both operands' boxes of every iteration, then the walk of the tile grid
        out_tiles: dict[int, tuple[int, int]] = {}
        bad = False
        for name, tag, text, rows in (("A", MAP_A_ADDR, self.la, self.bm), ("B", MAP_B_ADDR, self.lb, self.bn)):
            span = swizzle_span(text)
            box_k = span // self.eb
            want = intended_tile(load_operand_layout(text, dtype=self.dt), dtype=self.dt, base_address=0).fn.table() // 8
            mn, kk = np.meshgrid(np.arange(rows), np.arange(self.bk), indexing="ij")
            j, kin = kk // box_k, kk % box_k
            off = mn * span + kin * self.eb
            sw = off ^ (((off >> 7) & (span // 16 - 1)) << 4)
            mine = [x for x in tmas if x.map == tag]
            other = [x for x in tmas if x.map not in (MAP_A_ADDR, MAP_B_ADDR)]
            if other:
                self.add("tma", "counterexample", "a TMA load names neither tensor map", other[0].ev)
                bad = True
            by_it: dict[int, list] = {}
            for x in mine:
                by_it.setdefault(x.it, []).append(x)
            n_tiles = len(self.expected_tiles())
            iters = self.k_tiles * n_tiles
            if len(by_it) != iters:
                self.add("tma", "counterexample", f"{name}: TMA loads in {len(by_it)} pipeline "
                         f"iterations, the problem has {iters} ({n_tiles} tiles x "
                         f"{self.k_tiles} K-tiles)")
                bad = True
                continue
            for i, xs in sorted(by_it.items()):
                xs = sorted(xs, key=lambda x: x.c0)
                why = self._tma_iteration(i, xs, (name, text, rows), (box_k, j, sw, want))
                if why:
                    self.add("tma", "counterexample", f"{name}, iteration {i}: {why}", xs[0].ev)
                    bad = True
                    break
                c1 = xs[0].c1
                tm, tn = out_tiles.get(i, (None, None))
                out_tiles[i] = (c1 // rows, tn) if name == "A" else (tm, c1 // rows)
        seen = {}
        for i, (tm, tn) in out_tiles.items():
            seen.setdefault((tm, tn), []).append(i)
        if not bad:
            grid = self.expected_tiles()
            runs_ok = all(sorted(v) == list(range(v[0], v[0] + self.k_tiles)) for v in seen.values())
            if set(seen) != grid or not runs_ok:
                tm_n, tn_n = -(-self.M // self.bm), -(-self.N // self.bn)
                whole = grid == {(a, b) for a in range(tm_n) for b in range(tn_n)}
                self.add("tma", "counterexample", f"the producer's tiles {sorted(seen)} do not walk "
                         + (f"the {tm_n}x{tn_n} tile grid" if whole else f"the tiles {sorted(grid)}")
                         + " once, K-tiles in order")
            else:
                self.add("tma", "proved", f"every TMA box of every iteration writes each (mn, k) of the "
                         f"stage at the byte of the layout text (A {self.bm}x{self.bk}, B "
                         f"{self.bn}x{self.bk}); tiles and K-tiles walked once, in order")
        return out_tiles

    def _tma_iteration(self, i: int, xs: list, operand: tuple, geometry: tuple) -> str | None:
        """Law: None when iteration ``i``'s boxes (sorted by k) are BK / box_k boxes that write
        each (mn, k) of the stage at the layout's byte, from a 1024-byte aligned stage, at the
        coordinates of K-tile ``i mod k_tiles`` and a tile row; else why not."""
        name, text, rows = operand
        box_k, j, sw, want = geometry
        boxes = self.bk // box_k
        d0 = xs[0].dst
        if len(xs) != boxes:
            return f"{len(xs)} boxes, BK = {self.bk} needs {boxes} of {box_k}"
        got = np.array([x.dst - d0 for x in xs])[j] + sw
        diff = np.argwhere(got != want)
        if diff.size:
            a, b = (int(v) for v in diff[0])
            return (f"TMA puts ({a}, {b}) at stage byte {int(got[a, b]):#x}, the layout "
                    f"{text.split(' o ')[0]}... at {int(want[a, b]):#x}")
        if (d0 - SMEM_BASE) % 1024 and d0 % 1024:
            return f"stage at {d0:#x} is not 1024-byte aligned (the swizzle repeat)"
        kt, c1 = self.k_first + i % self.k_tiles, xs[0].c1
        ks = [x.c0 for x in xs]
        if ks != [kt * self.bk + q * box_k for q in range(boxes)] or c1 % rows:
            return (f"coordinates (k {ks}, row {c1}); K-tile {kt} starts at k = {kt * self.bk} "
                    f"and a tile row at a multiple of {rows}")
        return None

    # ---- descriptors ----
    def descriptor_checks(self, procs: list, tmas: list) -> None:
        """Adds the ``descriptor`` check. Law: ``proved`` when every consumer wgmma's A and B
        descriptors (one value across the warpgroup) read, by
        :func:`verilayout.prove.wgmma.check_descriptor`, their K-block of the stage the same
        iteration's TMA filled; else up to four ``counterexample`` s."""
        cache: dict = {}
        stage_of: dict = {}
        for x in tmas:
            stage_of.setdefault((x.map, x.it), []).append(x.dst)
        bad = 0
        total = 0
        for c, it, kb, ev, v, _f in self._consumer_wgmmas(procs):
            for name, key, tag, text, mn, mb in (("A", "desc_a", MAP_A_ADDR, self.la, 64, self.row_block(c)),
                                                 ("B", "desc_b", MAP_B_ADDR, self.lb, self.bn, 0)):
                vals = v.get(key)
                if vals is None or len(set(vals.tolist())) != 1:
                    self.add("descriptor", "counterexample", f"consumer {c - 1}: the {name} "
                             "descriptor is not one value across the warpgroup", ev)
                    bad += 1
                    continue
                value = int(vals[0])
                dsts = stage_of.get((tag, it))
                if not dsts:
                    self.add("descriptor", "counterexample", f"consumer {c - 1}, iteration {it}: "
                             f"no TMA filled {name} for this iteration", ev)
                    bad += 1
                    continue
                base = min(dsts) & 0x3FFFF
                kkb = kb % (self.bk // self.kx)
                key2 = (value, base, kkb, name, mb)
                if key2 not in cache:
                    cache[key2] = _descriptor_verdict(value, text, self.dt, kkb, base, mn, mb)
                total += 1
                vd = cache[key2]
                if vd.status != "proved":
                    self.add("descriptor", "counterexample", f"consumer {c - 1}, iteration {it}, "
                             f"K-block {kkb}: {name} descriptor {decode(value)} does not read that K-block of the stage the "
                             f"iteration's TMA filled at {base:#x}: {vd.reason}", ev)
                    bad += 1
                    if bad > 3:
                        return
        if not bad:
            self.add("descriptor", "proved", f"all {total} wgmma descriptors (both operands, every "
                     "consumer, iteration and K-block) read their K-block of the stage the same "
                     "iteration's TMA filled")

    # ---- the ring as a transition system ----
    def _init_order(self, procs) -> bool:
        """Every mbarrier is initialised before a CTA barrier that every later user of it passes
        first (program order of each process)."""
        for p, tr in enumerate(procs):
            synced = False
            for ev, v, n, t in tr:
                if ev.op.startswith(("bar.sync", "barrier.sync", "barrier.cta.sync")):
                    synced = True
                elif ev.op.startswith("mbarrier.init"):
                    if synced:
                        self.add("protocol", "counterexample", "mbarrier.init after the CTA barrier "
                                 "that should publish it: other threads may use it uninitialised", ev)
                        return False
                elif ev.op.startswith(("mbarrier.", "cp.async.bulk")) and not synced:
                    who = "producer" if p == 0 else f"consumer {p - 1}"
                    self.add("protocol", "counterexample", f"the {who} uses an mbarrier before the "
                             "CTA barrier that publishes its initialisation", ev)
                    return False
        return True

    def protocol_check(self, procs: list, init: dict, tmas: list) -> None:
        """Adds the ``protocol`` check: the mbarrier ring (``init``: mbarrier -> count) explored
        as a transition system over every interleaving. Law: ``proved`` only when no reachable
        state errs or deadlocks (:func:`verilayout.simulate.ring.explore_rings`, a cluster of one
        CTA), ``unknown`` beyond :data:`MAX_STATES` states or where an operand of the ring is
        unknown."""
        if not self._init_order(procs):
            return
        evs: list = []                  # each action's event becomes (its index here, its PTX line)

        def mark(ev):
            evs.append(ev)
            return len(evs) - 1, ev.instr.line if ev.instr is not None else None
        try:
            prog, tmas_ = self._actions(procs, mark)
        except (KeyError, TypeError):
            self.add("protocol", "unknown", "an mbarrier, descriptor or count operand of the ring "
                     "is not a value the interpreter models; the ring was not explored")
            return
        system = RingSystem(1, self.cons, prog, tmas_, tuple(sorted(((0, b), n) for b, n in init.items())),
                            self.eager_landing, readers_of(prog, tmas_) if self.pingpong else ())
        r = explore_rings(system, max_states=MAX_STATES)
        if r.outcome == "unknown":
            self.add("protocol", "unknown", f"more than {MAX_STATES} states; the ring was not "
                     "explored completely")
        elif r.outcome == "counterexample":
            self.add("protocol", "counterexample", r.error[0], evs[r.error[1][0]])
        elif r.outcome == "deadlock":
            self.add("protocol", "counterexample", "deadlock: " + "; ".join(r.blocked))
        else:
            self.add("protocol", "proved", f"the {self.stages}-stage ring explored over every "
                     f"interleaving ({r.states} states: the producer, {self.cons} consumer "
                     f"warpgroup(s), {len(tmas_)} TMA landings): waits return after their phase, "
                     "no overwrite before release, no read before landing, no deadlock")

    def turn_check(self, procs: list, init: dict) -> None:
        """Adds the ping-pong ``turn`` check: both consumers' traces projected on their turn
        mbarriers, wgmmas and epilogue writes (:func:`turn_program`) explored over every
        interleaving (:func:`verilayout.simulate.ring.explore`). Law: ``proved`` only when no
        reachable state has both consumers in their MMA, or both in their epilogue, and none
        deadlocks (a consumer waiting for a turn never handed over); ``unknown`` beyond
        :data:`MAX_STATES` states."""
        full = {int(v["addr"][0]) for ev, v, _n, _t in procs[0]
                if ev.op.startswith("mbarrier.arrive.expect_tx")}
        empty = {int(v["addr"][0]) for ev, v, _n, _t in procs[0] if ev.op.startswith("mbarrier.try_wait")}
        turns = {int(v["addr"][0]) for tr in procs[1:] for ev, v, _n, _t in tr
                 if ev.op.startswith("mbarrier.") and v.get("addr") is not None} - full - empty
        if self.cons != 2 or not turns or not turns <= set(init):
            self.add("turn", "counterexample", "ping-pong: the two consumer warpgroups use no "
                     "initialised mbarrier of their own to hand each other their turns")
            return
        progs = tuple(turn_program(tr, turns) for tr in procs[1:])
        start = ((0, 0), (), (), tuple(sorted((b, 0) for b in turns)),
                 tuple(sorted((b, init[b]) for b in turns)), (None, None))
        r = explore(start, lambda st: _turn_step(st, progs, init), progs, max_states=MAX_STATES)
        if r.outcome == "unknown":
            self.add("turn", "unknown", f"more than {MAX_STATES} states; the turns were not explored")
        elif r.outcome == "counterexample":
            self.add("turn", "counterexample", r.error[0], r.error[1])
        elif r.outcome == "deadlock":
            self.add("turn", "counterexample", "deadlock: " + "; ".join(r.blocked))
        else:
            n = sum(a[0] == "mma" for p in progs for a in p)
            self.add("turn", "proved", f"ping-pong: the two consumers' turns explored over every "
                     f"interleaving ({r.states} states, {len(turns)} turn mbarriers, {n} MMA turns): "
                     "never both in their MMA or both in their epilogue, every turn handed over, no "
                     "deadlock")

    def _actions(self, procs, mark) -> tuple[tuple, tuple]:
        """Law: each process's trace compiled to the ring's actions in program order
        (:mod:`verilayout.simulate.ring`: wait, arrive, tma, read, commit, retire; mbarriers and
        reads in CTA 0, each event replaced by ``mark(event)``), and the TMAs
        (:class:`verilayout.simulate.ring.RingTma`); a box's bytes are the recorded tensor map's
        box where there is one."""
        box_bytes = {}
        for name, tag, text, rows in (("A", MAP_A_ADDR, self.la, self.bm), ("B", MAP_B_ADDR, self.lb, self.bn)):
            box_bytes[tag] = rows * swizzle_span(text)
            if self.maps and name in self.maps:
                b = self.maps[name].box
                box_bytes[tag] = b[0] * b[1] * self.eb
        prog: list[tuple] = []
        tma_info: list[RingTma] = []
        for p, tr in enumerate(procs):
            acts: list = []
            it = -1
            for i, (ev, v, n, t) in enumerate(tr):
                op = ev.op
                if op.startswith("mbarrier.try_wait") or op.startswith("mbarrier.test_wait"):
                    it = self.wait_iteration(p, i, it) if p > 0 else it + 1
                    acts.append(Wait("wait", (0, int(v["addr"][0])), int(phase_parity(v)[0]) & 1, mark(ev)))
                elif op.startswith("mbarrier.arrive.expect_tx"):
                    acts.append(Arrive("arrive", (0, int(v["addr"][0])), n, int(tx_count(v)[0]), mark(ev)))
                elif op.startswith("mbarrier.arrive"):
                    acts.append(Arrive("arrive", (0, int(v["addr"][0])), n, 0, mark(ev)))
                elif op.startswith("cp.async.bulk.tensor") and p == 0:
                    bar = tma_mbarrier(v)
                    dst = int(v["addr"][0]) & 0x3FFFF
                    tma_info.append(RingTma(0, dst, box_bytes.get(int(v["map"][0]), 0), int(bar[0]),
                                            max(it, 0), (0,), dst, mark(ev)))
                    acts.append(Issue("tma", len(tma_info) - 1, mark(ev)))
                elif op.startswith("wgmma.mma_async") and p > 0:
                    reads = tuple((0, (int(v[key][0]) & 0x3FFF) << 4) for key in ("desc_a", "desc_b")
                                  if v.get(key) is not None)
                    acts.append(Read("read", reads, max(it, 0), mark(ev)))
                elif op.startswith("tcgen05.mma") and p > 0:     # sm_100a: the A and B descriptors
                    acts.append(Read("read", tuple((0, (int(d[0]) & 0x3FFF) << 4) for d in mma_descriptors(v)
                                                   if d is not None), max(it, 0), mark(ev)))
                elif op.startswith("tcgen05.commit") and p > 0:  # its MMAs done, then one arrival
                    m = mark(ev)
                    acts += [Commit("commit", m), Retire("retire", 0, m),
                             Arrive("arrive", (0, int(v["addr"][0])), 1, 0, m)]
                elif op.startswith("wgmma.commit_group") and p > 0:
                    acts.append(Commit("commit", mark(ev)))
                elif op.startswith("wgmma.wait_group") and p > 0:
                    acts.append(Retire("retire", int(pending_groups(v)[0]), mark(ev)))
            prog.append(tuple(acts))
        return tuple(prog), tuple(tma_info)

    # ---- the epilogue ----
    def _epilogue_order(self, procs) -> bool:
        """PTX ISA 9.7.15, ``wgmma.wait_group``: the accumulators are read (stored) only when no
        wgmma group of the warpgroup is pending and no wgmma is uncommitted."""
        for c in range(1, self.cons + 1):
            groups, open_ = [], 0
            for ev, v, n, t in procs[c]:
                op = ev.op
                if op.startswith("wgmma.mma_async"):
                    open_ += 1
                elif op.startswith("wgmma.commit_group"):
                    groups.append(open_)
                    open_ = 0
                elif op.startswith("wgmma.wait_group"):
                    keep = int(pending_groups(v)[0]) if pending_groups(v) is not None else 0
                    groups = groups[len(groups) - keep:] if keep else []
                elif (op.startswith(("st.global", "st.shared"))) and (open_ or any(groups)):
                    why = ("a wgmma not yet committed" if open_ else "a wgmma group that may still "
                           "be pending (wgmma.wait_group N completes all but the N most recent "
                           "groups; the epilogue needs N = 0)")
                    self.add("d-store", "counterexample", f"consumer {c - 1} stores its accumulators "
                             f"while {why}", ev)
                    return False
        return True

    def d_store_checks(self, procs: list, tiles: dict, tmas: list) -> None:
        """Adds the ``d-store`` check (and, split-K, :meth:`split_cover_check`). Law: ``proved``
        when no accumulator is stored with a wgmma group pending and every accumulator element
        inside D is stored once at its PTX D fragment position of the iteration's tile (with the
        epilogue's value where there is one), none outside."""
        # long: one walk of every consumer's stores, each against the PTX D fragment and its slot
        if not self._epilogue_order(procs):
            return
        coord = np.array(fragment_coords((64, self.bn, self.kx), "D", self.dt, acc="f32"))
        regs = coord.shape[1]
        ktile = {x.it: x.c0 // self.bk for x in tmas if x.map == MAP_A_ADDR}
        raw = {}                        # iteration -> tile, read off the TMA coordinates
        for x in tmas:
            if x.map in (MAP_A_ADDR, MAP_B_ADDR):
                tm, tn = raw.get(x.it, (None, None))
                raw[x.it] = (x.c1 // self.bm, tn) if x.map == MAP_A_ADDR else (tm, x.c1 // self.bn)
        tiles = {**raw, **tiles}
        tile_id: dict = {}
        keys: list = []                 # rows (consumer, thread, element, tile id, slot), one per store in D
        cover: dict = {}
        bad = None
        for c in range(1, self.cons + 1):
            for ev, it, acc, stored in self.d_stores(procs[c], regs, c):
                tile = tiles.get(it)
                tid = tile_id.setdefault(tile, len(tile_id))
                for pos, e, alt, who in stored:
                    if pos is None:         # a TMA store of bytes nobody staged, or D's map unknown
                        bad = bad or (e, ev)
                        continue
                    rows, why = self._store_rows(c, ev, who, (pos, e, alt), tile, tid, coord)
                    bad = bad or why
                    if rows is None or not len(rows):
                        continue
                    keys.append(rows)
                    ks = tuple(sorted(ktile.get(i, -1) for i in acc))
                    for s in set(rows[:, 4].tolist()):
                        cover.setdefault((tile, s), set()).add(ks)
        want_n = 0
        for tl in {tl for tl in tiles.values()}:
            for c in range(self.bm // 64):     # the tile's 64-row blocks
                rows = tl[0] * self.bm + 64 * c + coord[:, :, 0]
                cols = tl[1] * self.bn + coord[:, :, 1]
                want_n += int(((rows < self.M) & (cols < self.N)).sum()) * self.splits
        got_n, twice = 0, False         # distinct (consumer, thread, element, tile, slot); any stored twice
        if keys and not bad:            # then every thread < 128, element < regs, slot < splits
            k = np.concatenate(keys)
            flat = (((k[:, 0] * 128 + k[:, 1]) * regs + k[:, 2]) * len(tile_id) + k[:, 3]) * self.splits + k[:, 4]
            _u, counts = np.unique(flat, return_counts=True)
            got_n, twice = len(counts), bool((counts != 1).any())
        if bad:
            self.add("d-store", "counterexample", bad[0], bad[1])
        elif got_n != want_n or twice:
            self.add("d-store", "counterexample", f"{got_n} accumulator elements stored (some "
                     f"twice?), expected {want_n} once each")
        else:
            self.add("d-store", "proved", f"all {want_n} accumulator elements inside D stored once "
                     "at their D(row, col) (PTX D fragment, the producer's tile), none outside" +
                     (" (swap-AB: the product's (row, col) at D(col, row) of the M x N D)"
                      if self.man.swap_ab else "") +
                     (f", in K-slot 0..{self.splits - 1}" if self.splits > 1 else "") +
                     (f", each the value {self.epi[0]}({self.epi[2]}(acc"
                      f"{' + bias[col]' if self.epi[1] else ''})) of its element"
                      if self.epi else ""))
        if self.splits > 1:             # the tiles of D this CTA computes (its rank's, in a cluster)
            grid = {(a, b) for a, b in self.expected_tiles()
                    if a * self.bm < self.M and b * self.bn < self.N}
            self.split_cover_check(cover, grid)

    def _store_rows(self, c, ev, t, stored, tile, tid, coord):
        """Law: ``(rows, bad)`` for one stored register of consumer ``c``'s ``st.global`` over its
        threads ``t`` (``stored`` = ``(element index in D, accumulator element, candidates)`` of
        :meth:`_stored`), ``tile`` the producer's tile of the iteration (id ``tid``): ``rows``
        (consumer, thread, element, tid, slot) of every accumulator element stored inside D
        (None without a tile), ``bad`` the first wrong store's ``(message, event)`` or None."""
        pos, e, alt = stored
        if tile is None:
            return None, ((f"consumer {c - 1} stores a value that is not an accumulator element", ev)
                          if len(t) else None)
        regs, mn = coord.shape[1], self.M * self.N
        pos = np.asarray(pos, dtype=np.int64)
        slot, rem = (pos // mn, pos % mn) if self.splits > 1 else (pos * 0, pos)
        # D is M x N row-major; with swap-AB the kernel's M x N product is D^T: its (row, col) is
        # D(col, row), at col * M + row
        row, col = (rem % self.M, rem // self.M) if self.man.swap_ab else (rem // self.N, rem % self.N)
        tt = np.asarray(t, dtype=np.int64) % 128
        ee = np.asarray(e, dtype=np.int64)
        if alt is not None:               # a value several elements give: the one at (row, col)
            rr = row - tile[0] * self.bm - 64 * self.row_block(c)
            cc = col - tile[1] * self.bn
            hit = (coord[tt, :, 0] == rr[:, None]) & (coord[tt, :, 1] == cc[:, None])
            h = hit.argmax(axis=1)
            ee = np.where(hit.any(axis=1) & alt[np.arange(len(h)), h], h, ee)
        acc = (ee >= 0) & (ee < regs)
        ec = np.where(acc, ee, 0)
        w0 = tile[0] * self.bm + 64 * self.row_block(c) + coord[tt, ec, 0]
        w1 = tile[1] * self.bn + coord[tt, ec, 1]
        inside = acc & (w0 < self.M) & (w1 < self.N)
        wrong = inside & ((row != w0) | (col != w1) | (slot < 0) | (slot >= self.splits))
        first = np.nonzero(~inside | wrong)[0]
        why = None
        if len(first):
            q = int(first[0])
            th, el, want = int(tt[q]), int(ee[q]), (int(w0[q]), int(w1[q]))
            if not acc[q]:
                why = f"consumer {c - 1} stores a value that is not an accumulator element"
            elif not inside[q]:
                why = (f"consumer {c - 1}, thread {th}: accumulator element {el} of tile {tile} "
                       f"belongs to D{want}, outside the {self.M}x{self.N} D, and is stored (at "
                       f"element {int(pos[q])}): a missing edge predicate")
            else:
                where = f" of slot {int(slot[q])}" if self.splits > 1 else ""
                why = (f"consumer {c - 1}, thread {th}: accumulator element {el} of tile {tile} is "
                       f"stored at D({int(row[q])}, {int(col[q])}){where}; the PTX D fragment puts "
                       f"it at D({want[0]}, {want[1]})")
            why = (why, ev)
        k = int(inside.sum())
        rows = np.stack([np.full(k, c), tt[inside], ee[inside], np.full(k, tid), slot[inside]], axis=1)
        return rows, why

    epi = None

    def _stored(self, ev, v, regs: int):
        """Law: ``(element index in D, accumulator element, candidates)`` arrays over the storing
        threads, one per stored element (candidates: every element whose value it matches, as
        ReLU maps several to 0; None for plain f32). Plain f32: the value is the interpreter's tag ``e + 1``.
        With an epilogue (accumulators run as the f32 values ``e + 1``): the element ``e``
        whose ``out(act(e + 1 + bias(col)))`` the stored value is (within one ulp), or -1."""
        vals = stored_values(v)
        addr = v["addr"].astype(np.int64) - D_ADDR
        if self.epi is None:
            for j, x in enumerate(vals):
                if x is not None:
                    yield (addr + 4 * j) // 4, (x.astype(np.int64) & 0xFFFFFFFF) - 1, None
            return
        out, bias, act = self.epi
        ob = 4 if out == "f32" else 2
        reg_bits = 16 if ev.instr.parts[-1] in ("b16", "u16") else 32
        per = reg_bits // (8 * ob)
        cand = np.arange(regs, dtype=np.float64) + 1.0
        for j, x in enumerate(vals):
            if x is None:
                continue
            for k in range(per):
                pos = addr // ob + j * per + k
                got = decode_out(out, (x.astype(np.uint64) >> np.uint64(8 * ob * k)))
                col = (pos % (self.M * self.N)) % self.M if self.man.swap_ab else pos % self.N   # D's column
                b = bias_value(col) if bias else np.zeros(len(col))
                want = round_out(out, act_reference(act, cand[None, :] + b[:, None]))
                err = np.abs(want - got[:, None])
                e = np.argmin(err, axis=1)
                alt = err <= out_tolerance(out, got)[:, None]      # every element it could be
                yield pos, np.where(alt[np.arange(len(e)), e], e, -1), alt

    def _out_bytes(self) -> int:
        """Bytes of one stored element: 4 (f32; split-K partial sums) or 2 (f16 / bf16 D)."""
        out = self.man.epilogue.out if self.splits == 1 else "f32"
        return 4 if out == "f32" else 2

    def d_stores(self, events: list, regs: int, c: int | None = None):
        """Each store of D in one consumer's ``events`` (run order).

        Law: yields ``(event, K iteration, the iterations its accumulator sums
        (:func:`accumulated`), the (positions, elements, alt, threads) it stores)`` per store of
        D (:func:`is_d_store`), TMA stores read back through the bytes the consumer staged before
        them; the iteration counts the consumer's mbarrier waits from -1 (ping-pong: consumer
        process ``c``'s :meth:`wait_iteration`). Used by the
        ``d-store`` check and :func:`replay_gemm`.

        >>> from types import SimpleNamespace
        >>> g = GemmSim(_spec_inputs(_SPEC, SimpleNamespace(threads=[]), (64, 64, 128), 2))
        >>> list(g.d_stores([], 32))
        []
        """
        it, acc = -1, []
        staging: dict = {}              # shared byte -> (bits of the element staged there, thread)
        for i, (ev, v, _n, t) in enumerate(events):
            if ev.op.startswith("mbarrier.try_wait"):
                it = it + 1 if c is None else self.wait_iteration(c, i, it)
            if ev.op.startswith("wgmma.mma_async"):
                acc = accumulated(acc, it, v)
            if ev.op.startswith("st.shared"):
                self._stage(staging, ev, v, t)
            if is_d_store(ev.op):
                yield ev, it, acc, (self._tma_stored(ev, v, staging, regs) if is_tma_store(ev.op) else
                                    [(pos, e, alt, t) for pos, e, alt in self._stored(ev, v, regs)])

    def _stage(self, staging: dict, ev, v, t) -> None:
        """Law: records in ``staging`` (shared byte -> (element bits, thread)) the output-type
        elements an ``st.shared`` writes: register ``j`` at ``addr + j x register bytes``, a
        32-bit register of 16-bit elements as its low then high half; None bits where the run
        does not know the value."""
        reg = register_bytes(ev.op)
        ob = self._out_bytes()
        addr = v["addr"].astype(np.int64)
        for j, x in enumerate(stored_values(v)):
            for k in range(max(1, reg // ob)):
                a = addr + j * reg + k * ob
                if x is None:
                    bits = [None] * len(a)
                else:
                    bits = ((x.astype(np.uint64) >> np.uint64(8 * ob * k)) &
                            np.uint64((1 << (8 * ob)) - 1)).tolist()
                for ai, bi, ti in zip(a.tolist(), bits, np.asarray(t).tolist()):
                    staging[ai] = (bi, ti)

    def _d_box_map(self) -> TensorMap:
        """D's recorded box and swizzle as a TMA model tensor map (its dims: one box; what a
        store reads and where depends on the box and the swizzle only)."""
        d = self.maps["D"]
        return TensorMap("f32" if self._out_bytes() == 4 else "f16", global_dims=d.box, box=d.box,
                         swizzle=f"{d.span}B")

    def _d_dims(self) -> tuple[int, int]:
        """D's rows and columns in this run (the kernel's M x N product, or its transpose with swap-AB)."""
        return (self.N, self.M) if self.man.swap_ab else (self.M, self.N)

    def _tma_stored(self, ev, v, staging: dict, regs: int):
        """Law: for a TMA store (``[map, {x, y}], [src]``), yields ``(element index in D,
        accumulator element, candidates, writer threads)`` of the D elements inside D its box
        writes: box ``{bx, by}`` and swizzle of D's tensor map (host code), element ``(r, x)`` of
        the box read at the byte the TMA model places it (:func:`verilayout.hw.nvidia.tma.write_table`
        on the shared address: the 16-byte chunk index XOR address bits 7.. modulo span / 16), the element
        there as the staging writes left it; ``(None, why)`` where D's map is unknown or a byte
        read was never staged."""
        d = (self.maps or {}).get("D")
        if d is None:
            yield None, "a TMA store of D, but D's tensor map is not known (its host code did not record it)", None, None
            return
        (bx, by) = d.box
        x0, y0, src = int(v["c0"][0]), int(v["c1"][0]), int(v["addr"][0])
        r, x = np.meshgrid(np.arange(by), np.arange(bx), indexing="ij")
        a = write_table(self._d_box_map(), src).ravel().astype(np.int64)
        rows, cols = (y0 + r).ravel(), (x0 + x).ravel()
        nr, nc = self._d_dims()
        inside = (rows < nr) & (cols < nc)
        got = [staging.get(int(x)) for x in a[inside]]
        if any(g is None or g[0] is None for g in got):
            q = next(i for i, g in enumerate(got) if g is None or g[0] is None)
            yield None, (f"the TMA store of D({int(rows[inside][q])}, {int(cols[inside][q])}) reads "
                         f"shared byte {int(a[inside][q]):#x}, which no consumer thread staged "
                         "(or staged a value the run does not know)"), None, None
            return
        pos = rows[inside] * nc + cols[inside]
        bits = np.array([g[0] for g in got], dtype=np.uint64)
        who = np.array([g[1] for g in got], dtype=np.int64)
        e, alt = self._elements(pos, bits, regs)
        yield pos, e, alt, who

    def _elements(self, pos, bits, regs: int):
        """Law: ``(accumulator element, candidates)`` of stored element bits at D positions
        ``pos``: the interpreter's tag ``e + 1`` (plain f32), or with an epilogue every element
        ``e`` whose ``out(act(e + 1 + bias(col)))`` the value is (within one ulp; -1 if none)."""
        if self.epi is None:
            return (bits.astype(np.int64) & 0xFFFFFFFF) - 1, None
        out, bias, act = self.epi
        got = decode_out(out, bits)
        col = pos % self._d_dims()[1]
        cand = np.arange(regs, dtype=np.float64) + 1.0
        b = bias_value(col) if bias else np.zeros(len(col))
        want = round_out(out, act_reference(act, cand[None, :] + b[:, None]))
        err = np.abs(want - got[:, None])
        e = np.argmin(err, axis=1)
        alt = err <= out_tolerance(out, got)[:, None]
        return np.where(alt[np.arange(len(e)), e], e, -1), alt

    def tma_store_checks(self, procs: list) -> None:
        """Adds the ``tma-store`` check of the consumers' TMA-store epilogue (when they issue TMA
        stores). Law: ``proved`` when, in every consumer warpgroup's run, (1) a TMA store reads
        only shared bytes whose writers executed ``fence.proxy.async`` after writing them and a
        barrier of the warpgroup then ordered them before the store (PTX ISA, memory consistency:
        generic-proxy writes are seen by the async proxy only across a proxy fence); (2) no thread
        writes a shared byte a committed or uncommitted TMA store may still read: its bulk group
        must have been retired by ``cp.async.bulk.wait_group[.read] N`` of the issuing thread, and
        a barrier of the warpgroup must follow that wait before another thread's write (PTX ISA,
        ``cp.async.bulk.wait_group``: ``.read`` waits until the source has been read); (3) after
        the last commit a ``wait_group`` retires every group before the thread exits
        (:func:`verilayout.simulate.tma_store.warpgroup_store_order`, the bytes a store reads by
        the sm_100a check's model, :func:`verilayout.simulate.tma_store.store_source`)."""
        d = (self.maps or {}).get("D")
        n_st = 0
        for c in range(1, self.cons + 1):
            if not any(is_tma_store(ev.op) for ev, _v, _n, _t in procs[c]):
                continue
            if d is None:
                self.add("tma-store", "unknown", "D's tensor map is not known: the TMA stores' "
                         "boxes cannot be read")
                return
            n, bad = warpgroup_store_order(procs[c], f"consumer {c - 1}", self._d_box_map(),
                                           self._out_bytes())
            n_st += n
            if bad is not None:
                self.add("tma-store", "counterexample", *bad)
                return
        if n_st:
            self.add("tma-store", "proved", f"{n_st} TMA stores: each reads only shared bytes fenced "
                     "(fence.proxy.async) and ordered by a barrier after their writes; no staging byte "
                     "rewritten while a store may read it (wait_group.read, then a barrier); all "
                     "retired before exit")

    def split_cover_check(self, cover: dict, tiles: set) -> None:
        """Adds the ``split-k`` check of ``cover`` ((tile, slot) -> the K-tile sets stored there).
        Law: ``proved`` when, for every tile, slots 0..S-1 each hold one partial sum, and the
        K-tiles summed into them are disjoint and cover [0, k_tiles): the reduction then adds
        each K-tile once.

        >>> from types import SimpleNamespace
        >>> g = GemmSim(_spec_inputs(_SPEC, SimpleNamespace(threads=[]), (64, 64, 128), 2))
        >>> g.splits = 2; g.split_cover_check({((0, 0), 0): {(0,)}, ((0, 0), 1): {(1,)}}, {(0, 0)})
        >>> g.checks[0].status
        'proved'
        """
        for tl in sorted(tiles, key=str):
            seen: dict = {}
            for s in range(self.splits):
                sets = cover.get((tl, s), set())
                if len(sets) != 1:
                    self.add("split-k", "counterexample", f"tile {tl}, slot {s}: "
                             f"{'no partial sum stored' if not sets else 'stores of different K ranges'}")
                    return
                for k in next(iter(sets)):
                    seen.setdefault(k, []).append(s)
            dup = next(((k, v) for k, v in sorted(seen.items()) if len(v) > 1), None)
            if dup:
                self.add("split-k", "counterexample", f"tile {tl}: K-tile {dup[0]} is summed in "
                         f"slots {dup[1]}: a K slice summed twice")
                return
            if sorted(seen) != list(range(self.k_tiles)):
                miss = sorted(set(range(self.k_tiles)) - set(seen))
                self.add("split-k", "counterexample", f"tile {tl}: K-tiles {miss} are in no slot")
                return
        self.add("split-k", "proved", f"every tile's {self.splits} slots hold partial sums over "
                 f"disjoint K-tile sets covering all {self.k_tiles} K-tiles")
