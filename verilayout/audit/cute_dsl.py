"""Audit a CuTe-DSL kernel like a Triton one: its kept MLIR (``CUTE_DSL_KEEP=ir``) is the plan, its
PTX the lowering, and every ``wgmma.mma_async`` shared-memory descriptor is proved to read the
shared-memory layout the MLIR gave the operand.

The plan (:func:`mma_plans`, from :mod:`verilayout.frontends.cute_mlir`): each
``cute.tiled.mma.partition A|B (%tiled_mma, %smem_view, ...)`` names a tiled MMA
(``!cute.tiled_mma<!cute_nvgpu.sm90.mma<MxNxK, ab_major, elem_type>, atom_layout_MNK>``) and the
staged shared-memory tensor it partitions (``!cute.memref<..., smem, S<B,M,S>, "(MN, K, stage)">``):
the operand's tile is the memref's first two modes, stage 0 (a stage is a whole number of
swizzle repeats further on: the DSL allocates its stages ``cosize`` apart at 1024-byte
alignment), its swizzle on byte addresses (see ``frontends.cute_mlir``).

Correspondence (by dataflow and order; the MLIR carries no PTX locations): the wgmmas between two
``wgmma.commit_group`` of one source line are one group (``audit.ptx_dots.mma_groups``), and the
wgmmas of a group writing the same accumulator registers are the K-blocks of one (M, N) block
(``accumulator_blocks``, in order of first appearance). A group is the plan's tiled MMA whose
atom has the instruction's ``m64nNkK`` shape and types. The atoms tile M and N over warpgroups
(``atom_layout_MNK``: warpgroup ``w`` is atom ``(w mod Am, w div Am)``) and repeat over the tile;
block ``b`` of a warpgroup is its repeat ``(m, n)`` in CuTe's column-major serpentine order (``n =
b div Mr``, ``m = b mod Mr``, reversed on odd ``n``: ``cute/algorithm/gemm.hpp``, the ``(V,M) x
(V,N)`` dispatch), so it reads the 64-row block ``m Am + wm`` of A and the N-block ``n An + wn``
of B (CuTe's ``TiledMMA`` places the atoms first and repeats them: ``cute/atom/mma_atom.hpp``).
A group whose block or K-block count does not tile the plan is ``unknown`` for each of its
instructions, never proved.

Per wgmma, operand and warpgroup (``%tid.x = 128 w + t``: the descriptor must be one value for
every ``t``), with ``derived`` the descriptor ``synth.descriptor.derive_descriptor`` proves for
that K-block of that block of the plan's tile (base 0):

* ``mma-descriptor`` fields: the descriptor's bits 16-63 are one constant ``H`` for every value
  of the symbols, and ``H | start(derived)`` reads the planned block
  (``prove.wgmma.check_descriptor``): LBO, SBO, swizzle mode, base offset; a counterexample is an
  error at the wgmma's PTX line naming the element and both addresses;
* start: ``start - start(derived)`` (the operand's base, 16-byte units mod 2^14) is one value for
  every instruction and warpgroup of the group; one that differs is an error at its line with
  the offset in bytes; the common base lies on the swizzle repeat whenever the shared-memory base
  is 1024-byte aligned, else ``unknown``;
* stage: where the MLIR states the buffer's byte offset in the shared-memory allocation (its
  dataflow from the one ``cute.memref.alloca`` through views and constant ``cute.add_offset``),
  that base is ``shared-memory base + offset + stage offset`` for one of the memref's stages (its
  third mode): an error where it is none for every value of the symbols, else ``unknown``.

Assumptions (:data:`ASSUMPTIONS`, and each proof's own in its data): the shared-memory base (the
module's one ``.extern .shared`` array) is 1024-byte aligned, and the largest constant the function
adds to it, or the end of the last buffer the MLIR places (its offset plus its stages), stays inside
a CTA's 227 KB; a loop-carried register (the pipeline stage) obeys the bound proved by induction
over its definitions (``PtxValues.laws``; several registers together, through signed divisions by
constants), else it is free; a dynamic extent of a kernel argument's shape is non-negative
(:func:`shape_params`); a TMA copy past a branch on values fixed in a thread meets its condition
(``PtxValues.guards``). Each proof names the facts it used.

sm_100 (``tcgen05.mma``): the MLIR's ``cute.mma.make_fragment A|B`` of an MMA-partitioned shared
tensor ``((atom MN, atom K), MN, K, stage)`` is the plan; the instructions of one group writing the
same TMEM address are its K-blocks; the same three checks run with the sm_100 descriptor (version
bits, swizzle code in bits 61-63). A descriptor with base offset 0 needs no aligned base
(:func:`position_rule`: the MMA and CuTe's swizzled pointer both swizzle absolute addresses; on
sm_100 an inference, said so). Where the MLIR allocates shared memory more than once, each
allocation's offset is inferred (:data:`PLACEMENT_INFERENCE`): a check resting on it says so and is
never an error.

TMA (``tma-smem-box``, one per ``cp.async.bulk.tensor``): each ``cute_nvgpu.atom.tma_partition``
of a TMA atom (``copy_bits`` per box) with a shared buffer whose offset the MLIR states gives the
box starts ``origin + stage offset + j x box bytes``; a load's destination (a store's source) is
proved to be one of those of a buffer of its direction, an error where it is none for every value
of the symbols, else ``unknown``; ``unchecked`` where the MLIR states no buffer offset. TMA box
(``tma-box``, one per copy, :func:`tma_checks`): the partition's coordinate tensor states the box;
the copy's coordinates lie on its grid, a load's ``expect_tx`` counts its barrier's boxes, and the
box writes the stage's tile where the memref puts it (:func:`box_placement`).

A wgmma no plan covers is ``unchecked`` with the reason. ``audit_pair(mlir, ptx)`` returns the
``FileReport`` (the PTX's checks), as ``verilayout audit`` prints them.

>>> dsl_dtype("f8E4M3FN"), dsl_dtype("f16")
('e4m3', 'f16')
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import z3

from verilayout.audit.cute_dsl_copies import copy_checks
from verilayout.audit.cute_dsl_host import DeviceSide, host_checks
from verilayout.audit.cute_dsl_ldmatrix import ldmatrix_checks
from verilayout.audit.cute_refute import RefutingProver
from verilayout.audit.model import Check, FileReport
from verilayout.audit.ptx_dots import MMA_OPS, accumulator_blocks, mma_groups
from verilayout.audit.ptx_smem import values_at
from verilayout.audit.ptx_wgmma import SM90_SMEM_BYTES, smem_offset_bound, wgmma_shape
from verilayout.core.cute.int_tuple import flatten, product
from verilayout.core.cute.layout import ComposedLayout, Layout
from verilayout.core.smt import solve
from verilayout.dtypes import ptx_bits
from verilayout.errors import LayoutError
from verilayout.frontends.cute_mlir import (CoordTensor, CuteModule, Memref, TiledMma, TmaAtom, TmaBox, interpret,
                                            parse_cute_mlir)
from verilayout.frontends.cute_text import parse_cute
from verilayout.frontends.ptx import decode_operand, parse_ptx, split_operands
from verilayout.hw.nvidia.ptx_model import Addr, Instr, PtxModule, Reg, Sym, Vec
from verilayout.prove.ptx_values import SMEM, TID, PtxValues, constant, fit, symbol_names
from verilayout.prove.wgmma import check_descriptor
from verilayout.synth.descriptor import derive_descriptor

__all__ = ["OperandPlan", "MmaPlan", "TmaPlan", "mma_plans", "tma_plans", "tma_checks", "audit_pair",
           "audit_modules", "read_plan", "dsl_dtype", "block_of"]

#: the DSL's MLIR element types -> the wgmma operand types of ``hw/nvidia/wgmma``
_DTYPES = {"f16": "f16", "bf16": "bf16", "tf32": "tf32", "f8E4M3FN": "e4m3",
           "f8E5M2": "e5m2", "i8": "s8", "si8": "s8", "ui8": "u8", "u8": "u8", "s8": "s8"}
_START = 0x3FFF
#: the shared-memory base's alignment (the DSL aligns its dynamic shared memory to 1024 bytes:
#: ``.extern .shared .align 1024``)
SMEM_ALIGNMENT = 1024
#: the most pipeline stages of one buffer the stage check enumerates
MAX_STAGES = 64
_FIELDS = ((1 << 64) - 1) & ~0xFFFF            # LBO, SBO, base offset, layout type: bits 16-63
#: sm_90 layout type (bits 62-63) -> the swizzle pattern's repeat in 16-byte units (PTX ISA,
#: "Matrix Descriptor Format": 1 = 128B, 2 = 64B, 3 = 32B swizzle; 8 rows of that many bytes)
_REPEAT = {0: 1, 1: 64, 2: 32, 3: 16}
#: sm_100 swizzle mode (bits 61-63) -> repeat in 16-byte units (PTX ISA, tcgen05 shared memory
#: descriptor: 0 none, 1 128B with 32-byte atoms, 2 128B, 4 64B, 6 32B)
_REPEAT_SM100 = {0: 1, 1: 64, 2: 64, 4: 32, 6: 16}
_SMEM_BASES = np.arange(0, SM90_SMEM_BYTES + 1, SMEM_ALIGNMENT, dtype=np.uint64)   # every aligned base
_THREAD = z3.BitVec("thread_in_warpgroup", 7)
#: ``%cluster_ctarank`` as the evaluator names it (a special register: one free symbol)
RANK = z3.BitVec("v%cluster_ctarank", 32)
#: how a CTA's own shared-memory address read through the cluster window is modelled (an inference, named
#: with each proof resting on it)
CLUSTER_WINDOW = ("inference: the CTA's own shared::cta address converted to the shared::cluster window (cvta.shared, "
                  "then cvta.to.shared::cluster) names the same byte of this CTA, and an offset added to it stays in "
                  "this CTA's shared memory (PTX ISA, state spaces: the .shared::cta window lies inside the "
                  ".shared::cluster window, where its addresses name the executing CTA's own shared memory)")
ASSUMPTIONS = ("the dynamic shared-memory base is 1024-byte aligned and every constant offset the function adds "
               "to it, and every buffer the MLIR places, stays inside the 227 KB of a CTA",
               "loop-carried registers obey the bounds proved by induction over their definitions, else are free",
               "a dynamic extent of a kernel argument's shape is non-negative (a CuTe shape is a tuple of sizes)")


def dsl_dtype(elem: str) -> str:
    """The wgmma operand type of one of the DSL's MLIR element types (``f8E4M3FN`` -> ``e4m3``).

    >>> dsl_dtype("bf16")
    'bf16'
    """
    if elem not in _DTYPES:
        raise LayoutError(f"element type {elem!r}: not a wgmma operand type ({', '.join(sorted(_DTYPES))})")
    return _DTYPES[elem]


@dataclass(frozen=True)
class OperandPlan:
    """One shared operand of a tiled MMA: its (MN, K) tile at stage 0, the staged memref it came
    from, its wgmma type and major-ness, and the MLIR line of the partition that names it."""

    name: str
    tile: ComposedLayout | Layout
    memref: Memref
    dtype: str
    major: str
    line: int
    #: the byte offset of the buffer from the shared-memory allocation (``cute.memref.alloca``), where
    #: the MLIR's dataflow gives a constant one, else None
    origin: int | None = None
    #: the byte offset of each pipeline stage from the buffer's start (``(0,)`` for an unstaged tile)
    stages: tuple[int, ...] = (0,)
    #: the descriptor family: ``sm_90`` (wgmma) or ``sm_100`` (tcgen05)
    arch: str = "sm_90"
    #: whether ``origin`` rests on :data:`PLACEMENT_INFERENCE` (the MLIR allocates several buffers)
    origin_inferred: bool = False

    @property
    def end(self) -> int | None:
        """The byte just past the buffer's last stage in the shared-memory allocation (None
        without an origin): a dense stage is the tile's bytes."""
        if self.origin is None:
            return None
        step = self.stages[1] - self.stages[0] if len(self.stages) > 1 else 0
        tile = self.extents[0] * self.extents[1] * self.memref.elem_bits // 8
        return self.origin + self.stages[-1] + max(step, tile)

    @property
    def extents(self) -> tuple[int, int]:
        """(MN, K) of the tile."""
        return (_size(self.tile.shape[0]), _size(self.tile.shape[1]))


@dataclass(frozen=True)
class MmaPlan:
    """A tiled MMA of the MLIR and its shared operands (``A`` and/or ``B``)."""

    mma: TiledMma
    value: str
    operands: tuple[OperandPlan, ...]

    def operand(self, name: str) -> OperandPlan | None:
        return next((o for o in self.operands if o.name == name), None)


def _size(x: Any) -> int:
    return int(product(x))


def _stage0(m: Memref, what: str) -> ComposedLayout | Layout:
    """The memref's (MN, K) tile: its first two modes (a third mode is the pipeline stage)."""
    lay = m.cute()
    inner = lay.layout if isinstance(lay, ComposedLayout) else lay
    shape, stride = inner.shape, inner.stride
    if not isinstance(shape, tuple) or len(shape) not in (2, 3):
        raise LayoutError(f"{what}: expected an (MN, K[, stage]) shared layout, got {m.layout}")
    tile = Layout(tuple(shape[:2]), tuple(stride[:2]))
    if isinstance(lay, ComposedLayout):
        return ComposedLayout(lay.swizzle, tile, int(lay.offset), ptr_bits=m.elem_bits)
    return tile


def _stage_offsets(m: Memref, what: str) -> tuple[int, ...]:
    """Byte offsets of the memref's stages (its third mode; ``(0,)`` without one)."""
    lay = m.cute()
    inner = lay.layout if isinstance(lay, ComposedLayout) else lay
    if len(inner.shape) < 3:
        return (0,)
    mode = Layout(inner.shape[2], inner.stride[2])
    n = _size(inner.shape[2])
    if n > MAX_STAGES:
        raise LayoutError(f"{what}: {n} pipeline stages (at most {MAX_STAGES} are checked)")
    return tuple(int(mode(s)) * m.elem_bits // 8 for s in range(n))


def mma_plans(mod: CuteModule) -> list[MmaPlan]:
    """The tiled MMAs whose operands the MLIR partitions from shared memory, each with its
    operands (see the module docstring); in the order of their first partition.

    >>> mma_plans(parse_cute_mlir('%a = cute.get_iter(%s) : !cute.memref<i8, smem, align<1024>, "64:1">'))
    []
    """
    found: dict[str, tuple[TiledMma, list[OperandPlan]]] = {}
    allocas = [o for o in mod.ops if o.name == "cute.memref.alloca" and o.results
               and getattr(mod.type_of(o.results[0]), "space", None) == "smem"]
    for op in mod.ops:
        if op.name != "cute.tiled.mma.partition" or not op.words or op.words[0] not in ("A", "B") \
                or len(op.operands) < 2:
            continue
        mma, mem = _operand_type(mod, op, 0), _operand_type(mod, op, 1)
        if not isinstance(mma, TiledMma) or not isinstance(mem, Memref) or mem.space != "smem":
            continue
        name = op.words[0]
        where = f"MLIR line {op.line}: operand {name}"
        idx = 0 if name == "A" else 1
        elem = mma.elem_types[idx] if len(mma.elem_types) > idx else mem.elem
        major = "K" if mma.majors[idx] == "k" else "MN"
        found_at = _origin(mod, op.operands[1], allocas, op.line)
        try:
            plan = OperandPlan(name, _stage0(mem, where), mem, dsl_dtype(elem), major, op.line,
                               None if found_at is None else found_at[1], _stage_offsets(mem, where),
                               origin_inferred=bool(found_at and found_at[2]))
        except LayoutError:
            continue                           # a type or layout no descriptor check reads: its wgmmas are unchecked
        entry = found.setdefault(op.operands[0], (mma, []))
        if all(o.name != name for o in entry[1]):
            entry[1].append(plan)
    for op in mod.ops:                          # sm_100: the fragment of an MMA-partitioned smem tensor
        if op.name != "cute.mma.make_fragment" or not op.words or op.words[0] not in ("A", "B") \
                or len(op.operands) < 2:
            continue
        mma, mem = _operand_type(mod, op, 0), _operand_type(mod, op, 1)
        if not isinstance(mma, TiledMma) or mma.arch != "sm100" or not isinstance(mem, Memref) or mem.space != "smem":
            continue
        name = op.words[0]
        where = f"MLIR line {op.line}: operand {name}"
        idx = 0 if name == "A" else 1
        found_at = _origin(mod, op.operands[1], allocas, op.line)
        try:
            tile, stages = _partitioned(mem, where)
            plan = OperandPlan(name, tile, mem, dsl_dtype(mma.elem_types[idx] if len(mma.elem_types) > idx else mem.elem),
                               "K" if mma.majors[idx] == "k" else "MN", op.line,
                               None if found_at is None else found_at[1], stages, "sm_100",
                               bool(found_at and found_at[2]))
        except LayoutError:
            continue                           # a type or layout no descriptor check reads: its MMAs are unchecked
        entry = found.setdefault(op.operands[0], (mma, []))
        if all(o.name != name for o in entry[1]):
            entry[1].append(plan)
    return [MmaPlan(m, v, tuple(ops)) for v, (m, ops) in found.items()]


#: The placement rule of several shared-memory allocations, which the MLIR does not state (an
#: inference, said so wherever a verdict rests on it): the DSL's ``cute.memref.alloca`` ops take the
#: dynamic shared memory in text order, each at the next multiple of its memref's ``align<N>``, each
#: ``cosize x element bytes`` long (the DSL's Blackwell GEMM: a 128-byte barrier struct at 0, then
#: 128-byte-aligned buffers of 16384, 98304 and 98304 bytes at 128, 16512 and 114816, the offsets its
#: PTX adds to the shared-memory base).
PLACEMENT_INFERENCE = ("inference: the DSL places its shared-memory allocations in text order, each at the next "
                       "multiple of its alignment (not stated in the MLIR)")


def _alloc_offsets(mod: CuteModule, allocas: list) -> dict[int, int]:
    """Byte offset of each shared ``cute.memref.alloca`` (by ``id``) from the dynamic shared-memory
    base: 0 for a module's only one; for several, :data:`PLACEMENT_INFERENCE`'s bump placement, by
    ascending ``smem.partition_id`` then text order (an empty dict where a memref's size is not
    static)."""
    if len(allocas) == 1:
        return {id(allocas[0]): 0}
    out, end = {}, 0
    part = {id(op): op.attr_int("smem.partition_id") for op in allocas}
    for op in sorted(allocas, key=lambda o: (part[id(o)] if part[id(o)] is not None else 1, o.line)):
        m = mod.type_of(op.results[0])
        try:
            size = int(m.cute().cosize) * m.elem_bits // 8
        except (LayoutError, TypeError, ValueError):
            return {}
        start = -(-end // max(1, m.align)) * max(1, m.align)
        out[id(op)], end = start, start + size
    return out


def _operand_type(mod: CuteModule, op: Any, i: int) -> Any:
    """The interpreted type of ``op``'s operand ``i``: from its own signature where it lists every
    operand's type (the DSL reuses SSA names across functions), else the module's first typing."""
    if len(op.operand_types) == len(op.operands) > i:
        return interpret(op.operand_types[i])
    return mod.type_of(op.operands[i]) if len(op.operands) > i else None


def _origin(mod: CuteModule, value: str, allocas: list, before: int | None = None) -> tuple[Any, int, bool] | None:
    """The buffer's allocation, its byte offset from the dynamic shared-memory base, and whether that
    offset rests on :data:`PLACEMENT_INFERENCE` (several allocations); None where the dataflow to
    an allocation is not constant."""
    got = mod.origin(value, before=before)
    if got is None or all(got[0] is not a for a in allocas):
        return None
    offs = _alloc_offsets(mod, allocas)
    if id(got[0]) not in offs:
        return None
    return got[0], offs[id(got[0])] + got[1], len(allocas) > 1


def _partitioned(m: Memref, what: str) -> tuple[ComposedLayout | Layout, tuple[int, ...]]:
    """An MMA-partitioned shared tensor ``((atom MN, atom K), MN repeats, K repeats[, stage])`` as
    its (MN, K) tile ``((atom MN, MN repeats), (atom K, K repeats))`` and its stages' byte offsets."""
    lay = m.cute()
    inner = lay.layout if isinstance(lay, ComposedLayout) else lay
    sh, st = inner.shape, inner.stride
    if not isinstance(sh, tuple) or len(sh) not in (3, 4) or not isinstance(sh[0], tuple) or len(sh[0]) != 2:
        raise LayoutError(f"{what}: expected an MMA-partitioned ((MN, K), MN, K[, stage]) layout, got {m.layout}")
    tile = Layout(((sh[0][0], sh[1]), (sh[0][1], sh[2])), ((st[0][0], st[1]), (st[0][1], st[2])))
    stages = (0,)
    if len(sh) == 4:
        mode = Layout(sh[3], st[3])
        n = _size(sh[3])
        if n > MAX_STAGES:
            raise LayoutError(f"{what}: {n} pipeline stages (at most {MAX_STAGES} are checked)")
        stages = tuple(int(mode(s)) * m.elem_bits // 8 for s in range(n))
    if isinstance(lay, ComposedLayout):
        return ComposedLayout(lay.swizzle, tile, int(lay.offset), ptr_bits=m.elem_bits), stages
    return tile, stages


def block_of(b: int, m_reps: int) -> tuple[int, int]:
    """The (M, N) repeat of a warpgroup's accumulator block ``b`` (in order of first issue) in
    CuTe's column-major serpentine order over ``m_reps`` M repeats.

    >>> [block_of(b, 2) for b in range(4)]
    [(0, 0), (1, 0), (1, 1), (0, 1)]
    """
    n, m = divmod(b, m_reps)
    return (m_reps - 1 - m if n % 2 else m, n)


def _check(ins: Instr, name: str, status: str, severity: str | None, message: str, data: dict) -> Check:
    return Check(".".join(ins.parts[:2]) if ins.parts else ins.opcode, ins.line, ins.loc, "mma-descriptor", status, severity, message,
                 dict(data, operand=name, source="ptx", plan="cute-dsl mlir"))


@dataclass(frozen=True)
class _Ctx:
    """One function's evaluator and what its proofs assume: the shared-memory base is 1024-byte
    aligned and at most ``SM90_SMEM_BYTES - max_off`` (``max_off``: the largest constant the
    function adds to it), and loop-carried registers obey their inductive bounds
    (``PtxValues.laws``), each reported."""

    ev: PtxValues
    max_off: int
    #: the PTX's ``.target`` (``sm_100a``)
    target: str = ""
    #: the thread-block cluster the MLIR launches the kernel with (``exact_cluster_dim``), None where unstated
    cluster: tuple[int, int, int] | None = None
    #: per loop counter, the bound ``B`` of the last trip-count premise found (:func:`_counter_premise`)
    bounds: dict = field(default_factory=dict, compare=False)

    @property
    def text(self) -> str:
        return (f"the shared-memory base is {SMEM_ALIGNMENT}-byte aligned and at most {SM90_SMEM_BYTES - self.max_off} "
                f"(the function adds up to {self.max_off} to it, or the MLIR's buffers end there; a CTA has at most "
                f"{SM90_SMEM_BYTES} bytes)")

    @property
    def bases(self) -> np.ndarray:
        """Every shared-memory base the assumption allows."""
        return _SMEM_BASES[_SMEM_BASES <= SM90_SMEM_BYTES - self.max_off]

    def assume(self, *exprs: z3.ExprRef) -> tuple[z3.BoolRef, list[str]]:
        laws = self.ev.laws(*exprs) + self.rank_law(*exprs)
        base = z3.And(z3.URem(SMEM, SMEM_ALIGNMENT) == 0, z3.ULE(SMEM, SM90_SMEM_BYTES - self.max_off))
        return z3.And(base, *[lw for lw, _ in laws]), [self.text] + [t for _, t in laws]

    def rank_law(self, *exprs: z3.ExprRef) -> list[tuple[z3.BoolRef, str]]:
        """``%cluster_ctarank < x y z`` where ``exprs`` read it and the MLIR states the cluster ``(x, y, z)``
        (PTX ISA, special registers: ``%cluster_ctarank`` is in ``[0, %cluster_nctarank)``)."""
        if self.cluster is None or str(RANK) not in symbol_names(*exprs):
            return []
        n = self.cluster[0] * self.cluster[1] * self.cluster[2]
        return [(z3.ULT(RANK, n), f"%cluster_ctarank < {n}: the MLIR launches the kernel on clusters of "
                 f"{'x'.join(map(str, self.cluster))} CTAs (exact_cluster_dim; PTX ISA: %cluster_ctarank is in "
                 "[0, %cluster_nctarank))")]

    def constant(self, e: z3.BitVecRef) -> tuple[int | None, list[str]]:
        vals = values_at(e, str(SMEM), self.bases)
        if vals is not None:
            return (vals[0] if vals and all(v == vals[0] for v in vals) else None), [self.text]
        assume, texts = self.assume(e)
        return constant(e, assume, self.ev.const_cache, self.ev.prover), texts


@dataclass(frozen=True)
class _Item:
    """One (wgmma, warpgroup) of one operand: where, which block, and what the plan derives."""

    ins: Instr
    index: int
    k_block: int
    warpgroup: int
    mn_block: int
    derived: Any


def _derive(cache: dict, op: OperandPlan, kb: int, mn: int, mb: int) -> Any:
    key = (op.line, kb, mn, mb)
    if key not in cache:
        cache[key] = derive_descriptor(op.tile, dtype=op.dtype, major=op.major, k_block=kb, mn=mn, mn_block=mb,
                                       mn_dim=0, arch=op.arch)
    return cache[key]


def _fields(ctx: _Ctx, item: _Item, op: OperandPlan, slot: int, mn: int, n_wg: int) -> tuple:
    """``("start", base, repeat)`` when the item's descriptor fields read the planned block, else
    ``(status, severity, message, data)``."""
    ins = item.ins
    where = (f"operand {op.name}, wgmma {item.index} (K-block {item.k_block}, {'M' if op.name == 'A' else 'N'} block "
             f"{item.mn_block}" + (f", warpgroup {item.warpgroup}" if n_wg > 1 else "") + ")")
    data = {"k_block": item.k_block, "mn_block": item.mn_block, "mn": mn, "warpgroup": item.warpgroup,
            "plan_layout": str(op.tile), "plan_line": op.line, "plan_descriptor": f"{item.derived.descriptor.value:#018x}"}
    ev = ctx.ev
    e = ev.operand(ins.args[slot], 64, at=ins)
    if e is None:
        return ("unknown", "note", f"{where}: the descriptor {ins.operands[slot]} is not a register the evaluator "
                "reads", data)
    if str(TID) in symbol_names(e):
        some = z3.simplify(z3.substitute(e, (TID, z3.Concat(z3.BitVecVal(item.warpgroup, 25), _THREAD))))
        e = z3.simplify(z3.substitute(e, (TID, z3.BitVecVal(128 * item.warpgroup, 32))))
        if str(_THREAD) in symbol_names(some) and not ev.prover.proves(some == e):
            return ("unknown", "note", f"{where}: the descriptor is not proved the same for every thread of the "
                    "warpgroup", data)
    hi, texts = ctx.constant(e & z3.BitVecVal(_FIELDS, 64))
    data["assumptions"] = texts
    if hi is None:
        return ("unknown", "note", f"{where}: the descriptor's LBO/SBO/swizzle bits are not one constant", data)
    data["ptx_fields"] = f"{hi:#018x}"
    if op.arch == "sm_100" and (hi >> 52) & 1 and not ctx.target.startswith("sm_103"):
        return ("counterexample", "error", f"{where}: the descriptor {hi:#018x} sets bit 52 (leading-dimension "
                f"stride mode: absolute address), which the PTX ISA supports on sm_103a only (9.7.16.4.1, Target "
                f"ISA note); this PTX targets {ctx.target or 'another target'}", data)
    want = item.derived.descriptor.value
    v = check_descriptor(hi | (want & _START), op.tile, dtype=op.dtype, major=op.major, k_block=item.k_block,
                         mn=mn, mn_block=item.mn_block, mn_dim=0, arch=op.arch)
    if v.status != "proved":
        bo, plan_bo = (hi >> 49) & 7, (want >> 49) & 7
        why = (f"; base offset {bo}: the MMA counts swizzle rows from 128 x {bo} bytes past the absolute pattern "
               "boundaries, while TMA and the plan's position-dependent swizzle write the absolute pattern, so it "
               "misreads at every base" if bo != plan_bo and plan_bo == 0 else "")
        return (v.status, "error" if v.status == "counterexample" else "note",
                f"{where}: the PTX descriptor's fields {hi:#018x} do not read the MLIR's shared layout "
                f"{op.memref.layout} (stage 0: {op.tile}): {v.reason} (the plan derives {want:#018x}){why}",
                dict(data, counterexample=v.counterexample))
    base = z3.Extract(13, 0, e) - z3.BitVecVal(want & _START, 14)
    rep = _REPEAT[(hi >> 62) & 3] if op.arch == "sm_90" else _REPEAT_SM100.get((hi >> 61) & 7, 1)
    data["base_offset"] = (hi >> 49) & 7
    return ("start", base, rep, data, where)


_POSITION = "base offset 0 and position-dependent swizzles"


def position_rule(arch: str) -> str:
    """Why a descriptor with base offset 0 whose fields read the plan's tile from base 0 reads it
    from every 16-byte-aligned base (the DSL's sm_100 buffers sit at 128-byte alignment).

    Law: with base offset 0 the MMA swizzles the absolute address (the pattern's repeat starts on
    the absolute 1024/512/256-byte boundaries: PTX ISA 9.7.15.5.1.2.2 and 9.7.16.4.1, Table 41;
    measured for sm_90's wgmma, ``docs/ground_truth.md``), and a swizzled shared-memory pointer of
    CuTe is position-dependent, its swizzle applied to the absolute address (``swizzle_ptr``,
    ``cute/pointer_swizzle.hpp``; TMA writes on absolute address bits, measured on sm_90). So the
    MMA reads element ``i`` at ``Sw(B + u(i))`` and the plan puts it at ``Sw(B + L(i))``: the
    proof at ``B = 0`` (``Sw(u) = Sw(L)``, ``Sw`` a bijection, so ``u = L``) holds for every ``B``.
    CUTLASS's ``make_umma_desc`` (``cute/arch/mma_sm100_desc.hpp``) likewise writes base offset 0
    and the tensor's own address, however aligned. On sm_100 the absolute-address rule is an
    inference (the PTX ISA states the same base-offset table for both; no Blackwell measurement).

    >>> position_rule("sm_100").startswith(_POSITION)
    True
    """
    text = (f"{_POSITION}: with base offset 0 the MMA swizzles absolute shared-memory addresses (PTX ISA "
            "Table 41: the pattern repeats from absolute 1024/512/256-byte boundaries) and CuTe's swizzled smem "
            "pointer swizzles absolute addresses (cute/pointer_swizzle.hpp), so the fields read the plan at any "
            "16-byte-aligned base")
    if arch == "sm_100":
        text += ("; inference: tcgen05 swizzling absolute addresses as wgmma does (measured on sm_90 only; the "
                 "PTX ISA gives tcgen05 the same base-offset rule)")
    return text


def _aligned(ctx: _Ctx, base: z3.BitVecRef, rep: int) -> tuple[bool, str | None]:
    wide = z3.ZeroExt(18, base)
    vals = values_at(wide, str(SMEM), ctx.bases)
    if vals is not None:
        return all(b % rep == 0 for b in vals), None
    claim = z3.URem(wide, rep) == 0
    assume, _texts = ctx.assume(claim)
    if ctx.ev.prover.proves(claim, assume):
        return True, None
    how = ctx.ev.by_induction(claim, assume)
    return bool(how), how


def _stage_check(ctx: _Ctx, base: z3.BitVecRef, op: OperandPlan) -> tuple[str | None, str]:
    """Whether the operand's base (16-byte units, 14 bits) is the start of one of its buffer's
    stages: ``shared-memory base + origin + stage offset`` for some stage (the MLIR's allocation
    offset and staged layout). ``proved``, ``counterexample`` (no stage, for every value of the
    symbols), ``unknown``; None where the MLIR gives no constant origin."""
    if op.origin is None:
        return None, "the MLIR gives the buffer no constant offset in the shared-memory allocation"
    starts = [z3.Extract(17, 4, SMEM + z3.BitVecVal(op.origin + st, 32)) for st in op.stages]
    claim = z3.Or([base == s for s in starts])
    assume, texts = ctx.assume(base)
    text = (f"stage s < {len(op.stages)} of the buffer {op.origin} bytes into the shared-memory allocation "
            f"({op.stages[1] - op.stages[0] if len(op.stages) > 1 else 0} bytes a stage)")
    if op.origin_inferred:
        text += f" ({PLACEMENT_INFERENCE})"
    if ctx.ev.prover.proves(claim, assume):
        return "proved", text
    if ctx.ev.prover.proves(z3.Not(claim), assume):
        return ("unknown" if op.origin_inferred else "counterexample"), text   # an inference is never an error
    return "unknown", text + "; not proved for every value of the symbols on its path"


def _starts(ctx: _Ctx, starts: list, op: OperandPlan, out: dict) -> None:
    """The start check over one operand's items of one group (see the module docstring); the
    result of each item goes to ``out[index of its instruction]``."""
    groups: list[list] = []
    for s in starts:
        for g in groups:
            if ctx.ev.prover.proves(s[1] == g[0][1], ctx.assume(s[1], g[0][1])[0]):
                g.append(s)
                break
        else:
            groups.append([s])
    if not groups:
        return
    ref = max(groups, key=len)
    ok, how = _aligned(ctx, ref[0][1], ref[0][2])
    if not ok and ref[0][3].get("base_offset") == 0:
        ok, how = True, position_rule(op.arch)
    stage, stage_text = _stage_check(ctx, ref[0][1], op)
    if stage == "counterexample":
        for item, _base, _rep, data, where in ref:
            out.setdefault(item.index, []).append((
                "counterexample", "error", f"{where}: the operand's base is no pipeline stage of the buffer the MLIR "
                f"allocates for it ({stage_text})", dict(data, stage_check=stage_text)))
    elif stage == "unknown":
        for item, _base, _rep, data, where in ref:
            out.setdefault(item.index, []).append((
                "unknown", "note", f"{where}: the operand's base is not proved to be a pipeline stage of its buffer "
                f"({stage_text})", dict(data, stage_check=stage_text)))
    for g in groups:
        for item, base, rep, data, where in g:
            if g is ref:
                aligned = (f" at a {rep * 16}-byte-aligned base" + (f" ({how})" if how else "")
                           if how is None or not how.startswith(_POSITION) else f" at any base: {how}")
                msg = (f"{where}: fields read the MLIR's shared layout {op.memref.layout} and the start is the planned "
                       f"block's" + (aligned if ok
                                     else f"; the base is not proved aligned to the {rep * 16}-byte swizzle repeat")
                       + (f", {stage_text}" if stage == "proved" else ""))
                out.setdefault(item.index, []).append(("proved" if ok else "unknown", None if ok else "note", msg,
                                                       data))
                continue
            assume = ctx.assume(base, ref[0][1])[0]
            if not ctx.ev.prover.proves(base != ref[0][1], assume):     # equal for some values: not an error
                out.setdefault(item.index, []).append((
                    "unknown", "note", f"{where}: its descriptor's start is not proved to put this block where the "
                    f"other {len(ref)} wgmma/warpgroup item(s) of its group put theirs (free values on its path)", data))
                continue
            s = z3.Solver()
            s.add(assume)
            off = None
            if solve(s) == z3.sat:
                off = s.model().eval(base - ref[0][1], model_completion=True).as_long()
                off = (off if off < 1 << 13 else off - (1 << 14)) * 16
            out.setdefault(item.index, []).append((
                "counterexample", "error", f"{where}: its descriptor starts {off} bytes away from where the MLIR's "
                f"layout puts this block, relative to the other {len(ref)} wgmma/warpgroup item(s) of its group",
                dict(data, ptx_offset_bytes=off)))


def _group_items(group: list[Instr], plan: MmaPlan, shape: tuple) -> tuple[dict, str | None]:
    """Per operand name, the (instruction index, instruction, K-block, warpgroup, MN block, mn) of
    the group; or a reason the group does not tile the plan."""
    am, an, _ak = plan.mma.atoms
    blocks = accumulator_blocks(group)
    a, b = plan.operand("A"), plan.operand("B")
    ref = a or b
    k_ext = ref.extents[1]
    m_ext = a.extents[0] if a else None
    n_ext = b.extents[0] if b else None
    m_reps = m_ext // (64 * am) if m_ext else 1
    n_reps = n_ext // (shape[1] * an) if n_ext else 1
    kbs = k_ext // shape[2]
    if any(len(bl) != kbs for bl in blocks) or len(blocks) != m_reps * n_reps or m_reps < 1 or n_reps < 1:
        return {}, (f"{len(group)} wgmma(s) in {len(blocks)} accumulator block(s) do not tile the plan "
                    f"({m_reps} x {n_reps} block(s) of m64n{shape[1]} per warpgroup, {kbs} K-block(s) of k{shape[2]})")
    index = {id(i): n for n, i in enumerate(group)}
    items: dict[str, list] = {"A": [], "B": []}
    for bn, bl in enumerate(blocks):
        mr, nr = block_of(bn, m_reps)
        for kb, ins in enumerate(bl):
            for w in range(am * an):
                wm, wn = w % am, w // am
                items["A"].append((index[id(ins)], ins, kb, w, mr * am + wm, 64))
                items["B"].append((index[id(ins)], ins, kb, w, nr * an + wn, shape[1]))
    return items, None


def _plan_for(plans: list[MmaPlan], shape: tuple, frag: str) -> tuple[MmaPlan | None, str]:
    """The one tiled MMA whose atom has the instruction's shape, operand types and operand A
    source (``frag``: ``ss`` for A from shared memory, ``rs`` from registers)."""
    fits = [p for p in plans if p.mma.arch == "sm90" and p.mma.shape == shape[:3] and p.mma.frag_kind == frag
            and tuple(_DTYPES.get(t) for t in p.mma.elem_types[:2]) == (shape[4], shape[5])]
    if len(fits) == 1:
        return fits[0], ""
    if not fits:
        return None, (f"no tiled MMA of the MLIR has the shape m{shape[0]}n{shape[1]}k{shape[2]} {shape[4]} x {shape[5]} "
                      f"with operand A from {'registers' if frag == 'rs' else 'shared memory'}")
    return None, f"{len(fits)} tiled MMAs of the MLIR have this shape and types (which one is not decided)"


def _group_checks(ctx: _Ctx, group: list[Instr], plans: list[MmaPlan], cache: dict) -> list[Check]:
    """The checks of one group of wgmmas (see the module docstring)."""
    shape = wgmma_shape(group[0].opcode)
    if shape is None:
        return [_check(i, "?", "unknown", "note", f"{i.opcode}: no m64nNkK shape and types", {}) for i in group]
    plan, why = _plan_for(plans, shape, "rs" if isinstance(group[0].args[1], (Vec, Addr)) else "ss")
    items, why2 = _group_items(group, plan, shape) if plan is not None else ({}, why)
    if plan is None or why2:
        return [_check(i, "?", "unchecked" if plan is None else "unknown", None if plan is None else "note",
                       f"{i.opcode}: {why or why2}", {"reason": why or why2}) for i in group]
    out: list[Check] = []
    for slot, name in ((1, "A"), (2, "B")):
        if isinstance(group[0].args[slot], (Vec, Addr)):
            continue                                        # a register operand: no descriptor
        op = plan.operand(name)
        if op is None:
            out.extend(_check(i, name, "unchecked", None, f"operand {name}: the MLIR partitions no shared tensor for "
                              "it that this audit reads (type and layout)", {"reason": "no plan operand"}) for i in group)
            continue
        out.extend(_operand_checks(ctx, items[name], op, slot, plan.mma.atoms[0] * plan.mma.atoms[1], cache))
    return out


def _operand_checks(ctx: _Ctx, rows: list, op: OperandPlan, slot: int, n_wg: int, cache: dict) -> list[Check]:
    """One check per wgmma of one operand: the first error, else the first unknown, else proved."""
    results: dict[int, list] = {}
    starts = []
    first: dict[int, Instr] = {}
    for idx, ins, kb, w, mb, mn in rows:
        first.setdefault(idx, ins)
        try:
            item = _Item(ins, idx, kb, w, mb, _derive(cache, op, kb, mn, mb))
            got = _fields(ctx, item, op, slot, mn, n_wg)
        except LayoutError as err:
            got = ("unknown", "note", f"operand {op.name}, wgmma {idx}: {err}", {"k_block": kb, "mn_block": mb})
        if got[0] == "start":
            starts.append((item,) + got[1:])
        else:
            results.setdefault(idx, []).append(got)
    _starts(ctx, starts, op, results)
    out = []
    for idx, ins in first.items():
        res = results.get(idx, [])
        pick = next((r for want in ("counterexample", "unknown", "unchecked") for r in res if r[0] == want), None)
        st, sev, msg, data = pick or res[0]
        if pick is None and n_wg > 1:
            msg += f" (each of the {n_wg} warpgroups)"
        out.append(_check(ins, op.name, st, sev, msg, data))
    return out


_NO_DATA = ("cute.layout", "cute.composed_layout")


def _shape_only(t: Any) -> int:
    """The number of dynamic extents of a kernel argument typed ``!cute.coord_tensor`` whose only
    dynamic values are its shape's (``"(0,0,0)", "(?,?,?):(1@1,1@0,1@2)"``), else 0."""
    if t is None or t.name != "cute.coord_tensor" or len(t.args) != 2:
        return 0
    origin, layout = (a.strip().strip('"') for a in t.args)
    shape, colon, stride = layout.partition(":")
    return shape.count("?") if colon and "?" not in origin and "?" not in stride else 0


def shape_params(mod: CuteModule, ptx: PtxModule, func: str) -> dict[tuple[str, int], str]:
    """``(parameter, byte offset)`` of every 32-bit ``ld.param`` of ``func`` that reads a dynamic
    extent of a kernel argument's shape, with why it is a non-negative int.

    Law: the DSL passes ``%argK`` of the ``cuda.kernel`` as PTX parameter ``<kernel>_param_K`` while no
    argument before it is a layout it passes no data for (an all-static ``!cute.layout``: an
    inference, stated); a ``!cute.coord_tensor`` whose only dynamic values are its shape's holds its
    ``n`` extents as ``n`` consecutive ``i32`` (offsets 0, 4, ...); a CuTe shape is a tuple of
    non-negative sizes (``cute/layout.hpp``: a layout's size is the product of its shape).

    >>> m = parse_cute_mlir('cuda.kernel @k(%arg0: !cute.coord_tensor<"(0,0)", "(?,?):(1@1,1@0)">) {\\n%0 = cute.static : !cute.int_tuple<"1">')
    >>> p = parse_ptx(".version 8.7\\n.entry k()\\n{\\nld.param.b32 %r1, [k_param_0+4];\\n}")
    >>> [(k, why.split(" (")[0]) for k, why in shape_params(m, p, "k").items()]
    [(('k_param_0', 4), 'extent 1 of the shape of the kernel argument %arg0')]
    """
    kernel = next((o for o in mod.ops if o.name in ("cuda.kernel", "func.func", "gpu.func", "llvm.func")), None)
    if kernel is None or kernel.name != "cuda.kernel":
        return {}
    out = {}
    for i in ptx.instrs:
        a = i.args[1] if i.func == func and i.parts[:2] == ("ld", "param") and len(i.args) == 2 else None
        if not isinstance(a, Addr) or not isinstance(a.base, Sym) or ptx_bits(i.parts[-1]) != 32:
            continue
        k = a.base.name.rpartition("_param_")[2]
        if not k.isdigit() or a.offset % 4:
            continue
        before = [mod.types.get(f"%arg{j}") for j in range(int(k))]
        if any(t is None or t.name in _NO_DATA for t in before):
            continue
        n = _shape_only(mod.types.get(f"%arg{k}"))
        if a.offset // 4 < n:
            out[(a.base.name, a.offset)] = (
                f"extent {a.offset // 4} of the shape of the kernel argument %arg{k} ({mod.types[f'%arg{k}'].text}): a CuTe "
                f"shape is non-negative (inference: the DSL passes %arg{k} as parameter {k})")
    return out


def _context(ptx: PtxModule, func: str, plans: list[MmaPlan], mod: CuteModule | None = None) -> _Ctx:
    """One function's evaluator, with the shared-memory bound: the largest constant the function
    adds to the base, or the end of the last buffer the MLIR allocates, whichever is larger; the
    kernel arguments' dynamic shape extents are non-negative (:func:`shape_params`)."""
    ev = PtxValues(ptx, func, smem_names=tuple(ptx.shared) if len(ptx.shared) == 1 else ("global_smem",),
                   nonneg_params=shape_params(mod, ptx, func) if mod is not None else None)
    ev.prover = RefutingProver()        # a claim false at a point is answered without the solver's timeout
    ends = [o.end for p in plans for o in p.operands if o.end is not None and o.end <= SM90_SMEM_BYTES]
    return _Ctx(ev, min(SM90_SMEM_BYTES, max([smem_offset_bound(ptx, ev, func)] + ends)),   # never a void assumption
                ptx.target or "", mod.cluster_dim() if mod is not None else None)


def _tc05_group_checks(ctx: _Ctx, group: list[Instr], plans: list[MmaPlan], cache: dict) -> list[Check]:
    """sm_100: the ``tcgen05.mma`` of one group (to a ``tcgen05.commit``) against the one sm_100 tiled
    MMA of the MLIR: instructions writing the same TMEM address are the K-blocks of one block, in
    order; one block of the atom's M x N (one CTA) is checked, a group of more is ``unknown``."""
    fits = [p for p in plans if p.mma.arch == "sm100"]
    if len(fits) != 1:
        why = ("no sm_100 tiled MMA with shared operands in the MLIR" if not fits
               else f"{len(fits)} sm_100 tiled MMAs in the MLIR (which one is not decided)")
        return [_check(i, "?", "unchecked", None, f"{i.opcode}: {why}", {"reason": why}) for i in group]
    plan = fits[0]
    blocks: dict[str, list[Instr]] = {}
    for i in group:
        blocks.setdefault(str(i.args[0]) if i.args else "?", []).append(i)
    ref = plan.operand("A") or plan.operand("B")
    kbs = ref.extents[1] // plan.mma.shape[2]
    if len(blocks) != 1 or any(len(b) != kbs for b in blocks.values()):
        why = (f"{len(group)} tcgen05.mma in {len(blocks)} accumulator block(s) do not tile the plan's one "
               f"{plan.mma.shape[0]}x{plan.mma.shape[1]} block of {kbs} K-block(s)")
        return [_check(i, "?", "unknown", "note", why, {"reason": why}) for i in group]
    (blk,) = blocks.values()
    out: list[Check] = []
    # a CTA pair (``num_cta = 2``, ``cta_group::2``): each CTA's descriptor reads its own half of A's M and
    # of B's N, the per-CTA fragment the MLIR itself partitions (e.g. 128 of the atom's 256 rows of A)
    pair = plan.mma.num_cta
    for slot, name, mn in ((1, "A", plan.mma.shape[0] // pair), (2, "B", plan.mma.shape[1] // pair)):
        if isinstance(group[0].args[slot], (Vec, Addr)):
            continue                                        # A in tensor memory: no descriptor
        op = plan.operand(name)
        if op is None:
            out.extend(_check(i, name, "unchecked", None, f"operand {name}: the MLIR makes no shared fragment for it",
                              {"reason": "no plan operand"}) for i in group)
            continue
        rows = [(kb, ins, kb, 0, 0, mn) for kb, ins in enumerate(blk)]
        out.extend(_operand_checks(ctx, rows, op, slot, 1, cache))
    return out


def audit_modules(mod: CuteModule, ptx: PtxModule, path: str = "<ptx>") -> FileReport:
    """The checks of the module docstring for every wgmma of ``ptx`` against the plans of ``mod``."""
    plans = mma_plans(mod)
    checks: list[Check] = []
    cache: dict = {}
    contexts: dict[str, _Ctx] = {}        # one evaluator per function for the MMA and TMA checks (its memos)

    def context(func: str) -> _Ctx:
        if func not in contexts:
            contexts[func] = _context(ptx, func, plans, mod)
        return contexts[func]
    by_func = {f: [i for i in ptx.instrs if i.func == f] for f in ptx.functions}
    for func in ptx.functions:
        for g in mma_groups(by_func[func], *MMA_OPS["sm_90"]):
            checks.extend(_group_checks(context(func), g, plans, cache))
    for func in ptx.functions:
        for g in mma_groups(by_func[func], *MMA_OPS["sm_100"]):
            checks.extend(_tc05_group_checks(context(func), g, plans, cache))
    state: dict = {"contexts": contexts}
    checks.extend(tma_checks(mod, ptx, plans, state))
    allocas = [o for o in mod.ops if o.name == "cute.memref.alloca" and o.results
               and getattr(mod.type_of(o.results[0]), "space", None) == "smem"]
    checks.extend(copy_checks(mod, ptx, plans, lambda v, at: (_origin(mod, v, allocas, at) or (None, None))[1]))
    checks.extend(ldmatrix_checks(mod, ptx, plans, lambda v, at: (_origin(mod, v, allocas, at) or (None, None))[1]))
    checks.extend(host_checks(mod, ptx, _device_side(mod, ptx, plans, state), checks))
    return FileReport(path, ptx.target, None, tuple(checks), assumptions=ASSUMPTIONS)


def _device_side(mod: CuteModule, ptx: PtxModule, plans: list[MmaPlan], state: dict) -> DeviceSide:
    """What the host-side checks (:mod:`verilayout.audit.cute_dsl_host`) take from this audit: per kernel
    function its evaluator, each copy's coordinates as read (through :func:`own_cta`), the int32-product
    premise of a coordinate (:func:`_no_overflow`), the end of the last shared buffer the MLIR places, the
    TMA plans with each copy's proved one, and the premises the device checks stated."""
    allocas = [o for o in mod.ops if o.name == "cute.memref.alloca" and o.results
               and getattr(mod.type_of(o.results[0]), "space", None) == "smem"]
    offs = _alloc_offsets(mod, allocas)
    ends = []
    for op in allocas if len(offs) == len(allocas) else ():
        m = mod.type_of(op.results[0])
        try:
            ends.append(offs[id(op)] + int(m.cute().cosize) * m.elem_bits // 8)
        except (LayoutError, TypeError, ValueError):
            ends = []
            break
    contexts = dict(state.get("contexts", {}))

    def evaluator(func: str) -> PtxValues:
        if func not in contexts:
            contexts[func] = _context(ptx, func, plans, mod)
        return contexts[func].ev

    def coords(func: str, ins: Instr) -> list:
        ev = evaluator(func)
        vals = [ev.operand(c, 32, at=ins) for c in _tma_coords(ins)[1]]
        return [own_cta(ev, v)[0] if v is not None else None for v in vals]
    return DeviceSide(evaluator, coords, _no_overflow, max(ends) if ends and len(ends) == len(allocas) else None,
                      tuple(state.get("tplans", ())), dict(state.get("matched", {})), dict(state.get("premises", {})))


def audit_pair(mlir: str | bytes, ptx: str | bytes, path: str = "<ptx>") -> FileReport:
    """Audit a CuTe-DSL kernel's PTX against its kept MLIR (both as text): every wgmma operand's
    descriptor proved to read the shared layout the MLIR planned, or an error at its PTX line.

    Law: ``proved`` only where the descriptor reads, for every element of the block, the byte the
    MLIR's layout gives it; a descriptor the PTX forms from values the evaluator cannot bound is
    ``unknown``; a wgmma no tiled MMA of the MLIR covers is ``unchecked``.

    >>> audit_pair('%a = cute.get_iter(%s) : !cute.memref<i8, smem, align<1024>, "64:1">',
    ...            ".version 8.7\\n.visible .entry f()\\n{\\nret;\\n}").checks
    ()
    """
    return audit_modules(parse_cute_mlir(mlir), parse_ptx(ptx), path)


def _read_text(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8")
    except OSError as e:
        raise LayoutError(f"{path}: cannot read: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise LayoutError(f"{path}: byte {e.start}: not UTF-8 text (a kernel file is text)") from None


def read_plan(mlir_path: str) -> CuteModule:
    """The kept CuTe-DSL MLIR at ``mlir_path`` (``X.mlir`` beside ``X.ptx``), read and parsed once: the
    plan :func:`audit_modules` takes; bad input is a one-line LayoutError naming the file.

    >>> read_plan("/nonexistent.mlir")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: /nonexistent.mlir: cannot read: No such file or directory
    """
    mlir = _read_text(mlir_path)
    try:
        return parse_cute_mlir(mlir)
    except LayoutError as e:
        raise LayoutError(f"{mlir_path}: {e}") from None


@dataclass(frozen=True)
class TmaPlan:
    """A TMA atom of the MLIR and the shared buffer it copies to or from
    (``cute_nvgpu.atom.tma_partition(%atom, ..., %smem, %gmem)``): the buffer's byte offset in the
    allocation, its stages' offsets, the bytes of one box and the boxes a stage holds."""

    kind: str
    line: int
    origin: int
    stages: tuple[int, ...]
    box_bytes: int
    boxes: int
    #: whether ``origin`` rests on :data:`PLACEMENT_INFERENCE`
    inferred: bool = False
    #: the box and coordinate grid the partition's coordinate tensor states (None where it states none)
    grid: TmaBox | None = None
    #: why ``grid`` is None
    grid_why: str = ""
    #: the element width of the buffer, bits
    elem_bits: int = 8
    #: whether the box, written as TMA writes it, puts every element of the stage's tile where the
    #: memref does (:func:`box_placement`), and the first element where it does not (None: not compared)
    placement: tuple[bool, str] | None = None
    #: the ``multicast_layout`` of the ``cute.copy`` that issues the partition's copies ("" without one)
    mcast: str = ""
    #: the CTAs one copy of that ``cute.copy``'s atom serves together (``num_cta = 2``: a CTA pair, sm_100)
    num_cta: int = 1

    def starts(self) -> list[int]:
        """Byte offsets (from the shared-memory base) of every box of every stage."""
        return [self.origin + st + j * self.box_bytes for st in self.stages for j in range(self.boxes)]

    def groups(self, ctas: int) -> list[tuple[int, int, int]]:
        """Per ``%cluster_ctarank`` below ``ctas``, its multicast group (:func:`multicast_group`); each CTA
        alone where the copy has no ``multicast_layout`` or it does not cover ``ctas`` CTAs."""
        lay = parse_cute(self.mcast) if self.mcast else None
        if lay is None or _size(lay.shape) != ctas:
            return [(1, 0, 1 << r) for r in range(ctas)]
        return [multicast_group(lay, r) for r in range(ctas)]


def multicast_group(lay: Layout, rank: int) -> tuple[int, int, int]:
    """``(g, i, mask)`` of the CTA of cluster rank ``rank`` under a copy's ``multicast_layout`` ``lay`` (over
    the cluster's shape): the CTAs ``lay`` maps to the value it maps ``rank`` to share one box; ``g`` of them,
    this CTA the ``i``-th (by rank), ``mask`` their ranks' bits (the ``.multicast::cluster`` ctaMask).

    Law: a rank is the cluster coordinate, x fastest (CUTLASS's collectives read the CTA's coordinate as
    ``make_layout(ClusterShape{}).get_flat_coord(block_rank_in_cluster())``, ``sm90_mma_tma_gmma_ss_warpspecialized.hpp``),
    and a CuTe layout evaluated at an integer reads it the same way (colexicographic), so ``lay(rank)`` is the
    layout at the CTA's coordinate; modes of stride 0 are the CTAs that share a tile (the A tile across the
    cluster's N, the B tile across its M).

    >>> multicast_group(Layout((2, 1), (0, 1)), 1), multicast_group(Layout((2, 1), (1, 0)), 1)
    ((2, 1, 3), (1, 0, 2))
    """
    n = _size(lay.shape)
    same = [r for r in range(n) if int(lay(r)) == int(lay(rank))]
    return len(same), same.index(rank), sum(1 << r for r in same)


def tma_plans(mod: CuteModule) -> tuple[list[TmaPlan], list[str]]:
    """The TMA atoms partitioned against a shared buffer whose offset the MLIR states; and, for
    each one whose buffer it does not state, why."""
    allocas = [o for o in mod.ops if o.name == "cute.memref.alloca" and o.results
               and getattr(mod.type_of(o.results[0]), "space", None) == "smem"]
    plans, skipped = [], []
    for op in mod.ops:
        if op.name != "cute_nvgpu.atom.tma_partition" or len(op.operands) < 4:
            continue
        atom, mem = _operand_type(mod, op, 0), _operand_type(mod, op, 3)
        if not isinstance(atom, TmaAtom) or not isinstance(mem, Memref) or mem.space != "smem" or not atom.copy_bits:
            continue
        value, mem = _unsliced(mod, op, mem)
        found = _origin(mod, value, allocas, op.line)
        if found is None:
            skipped.append(f"MLIR line {op.line}: the buffer's offset in shared memory is not stated in the MLIR")
            continue
        lay = mem.cute()
        inner = lay.layout if isinstance(lay, ComposedLayout) else lay
        shape, stride = inner.shape, inner.stride
        if isinstance(shape, tuple) and len(shape) == 2:
            mode, n = Layout(shape[1], stride[1]), _size(shape[1])
            stages = tuple(int(mode(s)) * mem.elem_bits // 8 for s in range(min(n, MAX_STAGES)))
            tile = _size(shape[0]) * mem.elem_bits // 8
        else:
            stages, tile = (0,), _size(shape) * mem.elem_bits // 8
        box = atom.copy_bits // 8
        grid, why = _partition_box(mod, op, atom, mem)
        placed = _placement(op, grid) if grid is not None else None
        mcast, num_cta = _copy_facts(mod, op)
        plans.append(TmaPlan("store" if "store" in atom.kind else "load", op.line, found[1], stages, box,
                             max(1, tile // box), found[2], grid, why, mem.elem_bits, placed, mcast, num_cta))
    return plans, skipped


def _copy_of(mod: CuteModule, part: Any) -> Any:
    """The ``cute.copy`` that issues a ``tma_partition``'s copies: the first after it whose TMA atom is made
    (``cute_nvgpu.atom.make_exec_tma``, through ``set_value``) from the partition's atom; None without one."""
    for op in mod.ops:
        if op.name != "cute.copy" or op.line <= part.line or not op.operands:
            continue
        value, before = op.operands[0], op.line
        for _ in range(4):
            src = mod.producer(value, before)
            if src is None or not src.operands or src.name not in ("cute_nvgpu.atom.set_value",
                                                                    "cute_nvgpu.atom.make_exec_tma"):
                break
            if src.name == "cute_nvgpu.atom.make_exec_tma":
                if src.operands[0] == part.operands[0]:
                    return op
                break
            value, before = src.operands[0], src.line
    return None


def _copy_facts(mod: CuteModule, part: Any) -> tuple[str, int]:
    """The ``multicast_layout`` (``#cute.layout<"(2,1):(0,1)">``: its text, "" without one) and the atom's
    ``num_cta`` (1 without one) of the ``cute.copy`` issuing ``part``'s copies."""
    op = _copy_of(mod, part)
    if op is None:
        return "", 1
    # ``use_2cta``: the layout names the CTA pair, whose halves the (per-CTA) atom already copies: no slicing
    mcast = op.layout_attr("multicast_layout") or "" if not op.has_word_attr("use_2cta") else ""
    src = mod.producer(op.operands[0], op.line)          # the DSL reuses SSA names: the atom's own op types it
    types = [interpret(t) for t in (src.operand_types[:1] + src.result_types[:1] if src is not None else ())]
    atom = next((t for t in types if isinstance(t, TmaAtom)), None)
    n = dict(atom.params).get("num_cta", "1") if atom is not None else "1"
    return mcast, int(n) if n.isdigit() and int(n) > 0 else 1


def _unsliced(mod: CuteModule, op: Any, mem: Memref) -> tuple[str, Memref]:
    """The staged buffer a TMA partition copies into: where the partitioned tensor is one stage,
    ``cute.slice(%staged, (_, ?))`` (quack partitions each stage), the staged memref it slices
    (every stage is a box start), else the operand itself."""
    src = mod.producer(op.operands[3], op.line)
    if src is None or src.name != "cute.slice" or len(src.operands) != 2:
        return op.operands[3], mem
    # ``cute.slice(%t, %c) : T, C`` lists the operands' types (read as results by the generic reader)
    types = src.operand_types or (src.result_types if len(src.result_types) == 2 else ())
    if len(types) != 2:
        return op.operands[3], mem
    whole = interpret(types[0])
    coord = types[1].args[0].strip('"') if types[1].args else ""
    if isinstance(whole, Memref) and whole.space == "smem" and coord.replace(" ", "") == "(_,?)":
        return src.operands[0], whole
    return op.operands[3], mem


def _placement(op: Any, box: TmaBox) -> tuple[bool, str] | None:
    """:func:`box_placement` of a ``tma_partition``: its shared tensor (operand 3) against its input
    coordinate tensor (operand 4) and the boxes of its result; None where a type is not read."""
    mem = interpret(op.operand_types[3]) if len(op.operand_types) > 4 else None
    src = interpret(op.operand_types[4]) if len(op.operand_types) > 4 else None
    res = interpret(op.result_types[1]) if len(op.result_types) > 1 else None
    if not (isinstance(mem, Memref) and isinstance(src, CoordTensor) and isinstance(res, CoordTensor)):
        return None
    try:
        lay = mem.cute()
        inner = lay.layout if isinstance(lay, ComposedLayout) else lay
        tile = Layout(inner.shape[0], inner.stride[0]) if isinstance(inner.shape, tuple) else inner
        span = 16 << mem.swizzle[0] if mem.swizzle else 0
        return box_placement(tile, src.tile_leaves(), box, res.box_origins(), mem.elem_bits, span)
    except (LayoutError, TypeError, ValueError, IndexError):
        return None


def box_placement(tile: Layout, leaves: list, box: TmaBox, origins: list, elem_bits: int,
                  span: int) -> tuple[bool, str]:
    """Whether TMA's boxes put every element of a stage's tile where the tile's layout does.

    Law: tile index ``i`` (colexicographic) is the TMA coordinate ``c(i)`` (``leaves``: the partition's
    tile mode, ``(extent, {dim: step})`` each) and the shared element ``tile(i)`` (before the swizzle,
    which TMA and the layout both apply on absolute addresses); TMA writes box ``j`` (``origins[j]``)
    at ``j`` boxes into the stage, its coordinate 0 contiguous, each row padded to the swizzle span
    (``span`` bytes; measured on sm_90, ``hw/nvidia/tma.py``), so the element sits at ``j x box +
    x0 + row x x1 + ...`` with ``x = c(i) - origins[j]``; every ``i`` must agree.

    >>> box_placement(Layout((8, 64), (64, 1)), [(8, {1: 1}), (64, {0: 1})], TmaBox(2, (64, 8), (64, 8), 1),
    ...               [(0, 0)], 16, 128)
    (True, '512 elements: each where the memref puts it')
    """
    n = int(product(tile.shape))
    idx = np.arange(n, dtype=np.int64)
    want = np.zeros(n, dtype=np.int64)
    rest = idx.copy()
    for ext, st in zip(flatten(tile.shape), flatten(tile.stride)):
        want += (rest % int(ext)) * int(st)
        rest //= int(ext)
    coord = np.zeros((box.rank, n), dtype=np.int64)
    rest = idx.copy()
    for ext, dims in leaves:
        for d, k in dims.items():
            coord[d] += (rest % ext) * k
        rest //= ext
    pitch = [1, max(box.box[0], span * 8 // elem_bits if span else 0)]
    for b in box.box[1:-1]:
        pitch.append(pitch[-1] * b)
    box_elems = pitch[-1] * box.box[-1] if box.rank > 1 else box.box[0]
    got = np.full(n, -1, dtype=np.int64)
    for j, o in enumerate(origins):
        x = coord - np.array(o, dtype=np.int64)[:, None]
        inside = np.all((x >= 0) & (x < np.array(box.box)[:, None]), axis=0)
        got[inside] = j * box_elems + sum(x[d][inside] * pitch[d] for d in range(box.rank))
    bad = np.nonzero(got != want)[0]
    if bad.size:
        i = int(bad[0])
        where = "no box" if got[i] < 0 else f"element {int(got[i])}"
        return False, (f"tile element {i} (TMA coordinates {tuple(int(c) for c in coord[:, i])}) is written to {where} "
                       f"of the stage; the memref puts it at element {int(want[i])}")
    return True, f"{n} elements: each where the memref puts it"


def _partition_box(mod: CuteModule, op: Any, atom: TmaAtom, mem: Memref) -> tuple[TmaBox | None, str]:
    """The box the ``tma_partition`` ``op``'s coordinate tensor (its second result) states, checked
    against the atom's ``copy_bits``; (None, why) where it states none or the two disagree."""
    ct = interpret(op.result_types[1]) if len(op.result_types) > 1 else None
    if not isinstance(ct, CoordTensor):
        return None, f"MLIR line {op.line}: the partition's coordinate tensor is not typed"
    try:
        box = ct.box()
    except LayoutError as e:
        return None, f"MLIR line {op.line}: {e}"
    if box.elements * mem.elem_bits != atom.copy_bits:
        return None, (f"MLIR line {op.line}: the partition's box {'x'.join(map(str, box.box))} is "
                      f"{box.elements * mem.elem_bits} bits, the atom copies {atom.copy_bits}")
    return box, ""


def _one_def(ev: PtxValues, sym: str, head: tuple[str, ...]) -> Instr | None:
    """The one definition of the register behind free symbol ``sym`` (``v%rd17``) when its opcode starts
    with ``head``, else None."""
    ds = ev.defs.get(sym[1:], []) if sym.startswith("v%") and "@" not in sym else []
    return ds[0] if len(ds) == 1 and ds[0].parts[:len(head)] == head and len(ds[0].args) >= 2 else None


def own_cta(ev: PtxValues, e: z3.BitVecRef) -> tuple[z3.BitVecRef, list[str]]:
    """``e`` with two kinds of free symbol replaced by the values they are, and the texts of what that rests on.

    Law: (1) ``shfl.sync.idx`` from a constant lane of a value that reads only CTA-uniform special registers
    (``%cluster_ctarank``, ``%ctaid.*``, ...) is that value: every lane of the CTA holds the same one (PTX
    ISA, special registers; ``shfl.sync`` reads the source lane's copy). (2) A CTA's own shared address
    ``a`` converted ``cvta.shared`` then ``cvta.to.shared::cluster`` is read as ``a`` (:data:`CLUSTER_WINDOW`,
    an inference). Other symbols are kept.

    >>> from verilayout.frontends.ptx import parse_ptx
    >>> m = parse_ptx(".version 8.7\\n.entry f()\\n{\\nmov.u32 %r1, global_smem;\\ncvt.u64.u32 %rd1, %r1;\\n"
    ...   "cvta.shared.u64 %rd2, %rd1;\\ncvta.to.shared::cluster.u64 %rd3, %rd2;\\n}")
    >>> ev = PtxValues(m, "f"); e, why = own_cta(ev, ev.reg("%rd3") + 16)
    >>> z3.simplify(e - fit(SMEM, 64)).as_long(), why[0].startswith("inference")
    (16, True)
    """
    subs, texts = [], []
    for sym in sorted(symbol_names(e)):
        d = _one_def(ev, sym, ("shfl", "sync", "idx"))
        if d is not None and len(d.args) == 5 and isinstance(d.args[1], Reg):
            v = ev.reg(d.args[1].name, at=d)
            if symbol_names(v) and all(n.startswith(_UNIFORM) for n in symbol_names(v)):
                subs.append((z3.BitVec(sym, v.size()), v))
            continue
        d = _one_def(ev, sym, ("cvta", "to", "shared::cluster"))
        g = _one_def(ev, "v" + d.args[1].name, ("cvta", "shared")) if d is not None and isinstance(d.args[1], Reg) else None
        v = ev.operand(g.args[1], 64, at=g) if g is not None else None
        if v is not None and str(SMEM) in symbol_names(v):
            subs.append((z3.BitVec(sym, 64), v))
            texts.append(f"{CLUSTER_WINDOW} (PTX lines {g.line}, {d.line})")
    return (z3.substitute(e, *subs) if subs else e), texts


#: the evaluator's symbols of special registers with one value in a whole CTA
_UNIFORM = ("v%cluster_ctarank", "v%ctaid.", "v%nctaid.", "v%clusterid.", "v%cluster_ctaid.", "v%nclusterid.",
            "v%cluster_nctaid.", "v%cluster_nctarank")


def _tma_smem_address(ev: PtxValues, ins: Instr) -> z3.BitVecRef | None:
    """The shared-memory address a ``cp.async.bulk.tensor`` writes (a load: its first operand) or
    reads (a store: its second), 32 bits; None where the evaluator cannot read it."""
    shared_first = next((k for k, p in enumerate(ins.parts) if p.startswith("shared")), 99) < \
        next((k for k, p in enumerate(ins.parts) if p == "global"), 99)
    addr = ins.args[0 if shared_first else 1] if len(ins.args) > 1 else None
    if not isinstance(addr, Addr) or not isinstance(addr.base, Reg):
        return None
    e = ev.reg(addr.base.name, at=ins)
    if e is None:
        return None
    e = z3.Extract(31, 0, e) if e.size() > 32 else z3.ZeroExt(32 - e.size(), e) if e.size() < 32 else e
    return e + z3.BitVecVal(addr.offset, 32)


def _guarded(ctx: _Ctx, ins: Instr, assume: z3.BoolRef, texts: list[str]) -> tuple[z3.BoolRef, list[str]]:
    """``assume`` with the branch conditions every path to ``ins`` meets (``PtxValues.guards``: a
    consumer warpgroup's branch on ``%tid.x``, say), each named in ``texts``; unchanged where there
    are none or where they contradict ``assume`` (no proof from a void premise)."""
    got = ctx.ev.guards(ins)
    if not got:
        return assume, texts
    both = z3.And(assume, *[g for g, _ in got])
    s = z3.Solver()
    s.set("timeout", 3000)
    s.add(both)
    if solve(s) != z3.sat:
        return assume, texts
    return both, texts + [t for _, t in got]


def _tma_check(ctx: _Ctx, ins: Instr, plans: list[TmaPlan], matched: dict | None = None,
               premises: dict | None = None) -> Check:
    """``tma-smem-box``: the copy's shared address is the start of a box of a stage of a buffer the
    MLIR partitions with a TMA atom of its direction (load or store), a multicast load's the start of its
    CTA's slice of one (:func:`_start_claim`); the plan proved goes to ``matched[id(ins)]``, a trip-count
    premise used to ``premises[("a", line)]`` (its bound, step and register)."""
    kind = _tma_kind(ins)
    mine = [p for p in plans if p.kind == kind]

    def check(status, severity, msg, data):
        return Check("cp.async.bulk.tensor", ins.line, ins.loc, "tma-smem-box", status, severity, f"TMA {kind}: {msg}",
                     dict(data, source="ptx", plan="cute-dsl mlir"))
    if not mine:
        return check("unchecked", None, f"no TMA {kind} atom of the MLIR with a stated buffer", {"reason": "no plan"})
    e = _tma_smem_address(ctx.ev, ins)
    if e is None:
        return check("unknown", "note", "its shared-memory address is not a register the evaluator reads", {})
    e, window = own_cta(ctx.ev, e)
    assume, texts = _guarded(ctx, ins, *ctx.assume(e, *([RANK] if any(_multicast(ctx, p) for p in mine) else [])))
    texts = texts + window
    claims = [(p, _start_claim(ctx, e, p)) for p in mine]
    for p, claim in claims:
        if ctx.ev.prover.proves(claim, assume):
            if matched is not None:
                matched[id(ins)] = p
            return check("proved", None, _box_text(ctx, p), {"mlir_line": p.line, "assumptions": texts})
    every = z3.Or([c for _p, c in claims])
    if ctx.ev.prover.proves(z3.Not(every), assume) and any(p.inferred for p in mine):
        return check("unknown", "note", f"its shared address is the start of no box of a buffer at the offsets inferred "
                     f"for the MLIR's allocations ({PLACEMENT_INFERENCE}; never an error)", {"assumptions": texts})
    if ctx.ev.prover.proves(z3.Not(every), assume):
        return check("counterexample", "error", f"its shared address is the start of no box of any stage of the "
                     f"{len(mine)} buffer(s) the MLIR copies with a TMA {kind} ("
                     + ", ".join(f"{p.origin} + stage x {p.stages[1] - p.stages[0] if len(p.stages) > 1 else 0}"
                                 for p in mine) + ")", {"assumptions": texts})
    for p, claim in claims:
        premise = _counter_premise(ctx, claim, assume)
        if premise is not None:
            if matched is not None:
                matched[id(ins)] = p
            if premises is not None:
                premises[("a", ins.line)] = ctx.bounds.get(_LAST)
            return check("proved", None, _box_text(ctx, p) + f", under the {premise[1]}",
                         {"mlir_line": p.line, "assumptions": texts + [premise[1]], "premise": premise[1]})
    return check("unknown", "note", "its shared address is not proved to start a box of a stage of a buffer the MLIR "
                 "copies (it does for some values of the symbols on its path)", {"assumptions": texts})


def _ctas(ctx: _Ctx) -> int:
    """The CTAs of the cluster the MLIR launches (1 where it states none)."""
    return ctx.cluster[0] * ctx.cluster[1] * ctx.cluster[2] if ctx.cluster else 1


def _multicast(ctx: _Ctx, p: TmaPlan) -> list[tuple[int, int, int]]:
    """Per cluster rank, the multicast group of ``p``'s load (:meth:`TmaPlan.groups`); [] where every CTA
    loads its whole box alone (a store, no ``multicast_layout``, or groups of one)."""
    groups = p.groups(_ctas(ctx)) if p.kind == "load" else []
    return groups if any(g > 1 for g, _i, _m in groups) else []


def _start_claim(ctx: _Ctx, e: z3.BitVecRef, p: TmaPlan) -> z3.BoolRef:
    """``e`` is the start of a box of a stage of ``p``'s buffer; for a multicast load, of the CTA's slice of
    one: ``i x box / g`` bytes further for the CTA's place ``i`` among the ``g`` CTAs of its group (per
    ``%cluster_ctarank``). Law: the CTAs of a multicast group each load ``1/g`` of the box, the ``i``-th the
    ``i``-th contiguous part, and write it at the same CTA-relative offset in every CTA of the ctaMask (PTX
    ISA, cp.async.bulk.tensor: ``.multicast::cluster``), so together they write the whole box in each."""
    def at(extra: int) -> z3.BoolRef:
        return z3.Or([e == SMEM + z3.BitVecVal(x + extra, 32) for x in p.starts()])
    groups = _multicast(ctx, p)
    if not groups:
        return at(0)
    return z3.And([z3.Implies(RANK == r, at(i * p.box_bytes // g)) for r, (g, i, _m) in enumerate(groups)])


def _box_text(ctx: _Ctx, p: TmaPlan) -> str:
    """What a proved ``tma-smem-box`` says of plan ``p``."""
    groups = _multicast(ctx, p)
    slice_ = (f" (for a CTA of cluster rank r, its slice i of the g = {groups[0][0]} its multicast group shares: "
              f"i x {p.box_bytes // groups[0][0]} bytes further; the copy's multicast_layout {p.mcast})" if groups else "")
    return (f"its shared address is the start of a {p.box_bytes}-byte box{slice_} of a stage of the buffer {p.origin} "
            f"bytes into shared memory (MLIR line {p.line}: {len(p.stages)} stage(s), {p.boxes} box(es) each)"
            + (f"; {PLACEMENT_INFERENCE}" if p.inferred else ""))


def _below(ctx: _Ctx, claim: z3.BoolRef, assume: z3.BoolRef, x: z3.BitVecRef, bits: int) -> bool:
    """``claim`` is proved under ``assume`` and ``x < 2^bits`` (unsigned)."""
    return ctx.ev.prover.proves(claim, z3.And(assume, z3.ULT(x, z3.BitVecVal(1 << bits, x.size()))))


#: the key of ``_Ctx.bounds`` under which :func:`_counter_premise` leaves its last premise (bound, step, register)
_LAST = ("last premise",)
#: the narrowest trip-count premise :func:`_counter_premise` states: a counter below 2^24 (a persistent CTA's
#: tiles: 2^24 tiles of 128 x 128 f16 are 512 GiB of output, past any GPU's memory); a claim that holds
#: only for a narrower count is left ``unknown`` (a kernel wrong after a few thousand tiles is not proved)
MIN_COUNT_BITS = 24


def _counter_premise(ctx: _Ctx, claim: z3.BoolRef, assume: z3.BoolRef) -> tuple[z3.BoolRef, str] | None:
    """The weakest premise ``x < 2^B`` (``B`` at most 31, at least :data:`MIN_COUNT_BITS`) on one loop
    counter ``x`` of ``claim`` (``PtxValues.counter``: a start below 2^16, a constant step) under which
    ``claim`` is proved, with its text; None where there is none.

    Law: a counter that starts at ``s`` and adds ``c`` per iteration is below ``2^B`` while its loop has run
    fewer than ``(2^B - s) / c`` times. The PTX states no such bound where the loop exits on a value it
    loads (a persistent tile scheduler's ``is_valid`` flag in shared memory), so this is a premise, never
    inferred: the text names the register, its lines and the bound, and says the claim is not proved at the
    next power of two (the int32 arithmetic on the counter wraps there: the DSL computes a stage as
    ``(k t + j) rem n`` in ``i32``, MLIR ``arith.muli`` then ``arith.remsi``).
    """
    for sym in sorted(symbol_names(claim) - {str(SMEM), str(TID)}):
        got = ctx.ev.counter(sym)
        if got is None:
            continue
        x, name, lines, step = got
        lo, hi = MIN_COUNT_BITS, min(31, x.size() - 1)
        last = ctx.bounds.get(sym)
        if last is not None and _below(ctx, claim, assume, x, last):   # the same counter's other copies: 1-2 proofs
            lo = last
            if last < hi and not _below(ctx, claim, assume, x, last + 1):
                hi = last
        elif not _below(ctx, claim, assume, x, lo):
            continue
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if _below(ctx, claim, assume, x, mid) else (lo, mid - 1)
        ctx.bounds[sym] = lo
        ctx.bounds[_LAST] = (lo, step, name)
        law = z3.ULT(x, z3.BitVecVal(1 << lo, x.size()))
        text = (f"premise (the PTX states no bound): the loop counter {name} (PTX lines {', '.join(map(str, lines))}: "
                f"+{step} per iteration) stays below 2^{lo}, i.e. its loop runs fewer than 2^{lo}/{step} times"
                + (f" (at 2^{lo + 1} it is not proved: the int32 arithmetic on the counter can wrap there)"
                   if lo < min(31, x.size() - 1) else ""))
        return law, text
    return None


def _tma_kind(ins: Instr) -> str:
    """``load`` (shared before global in the opcode) or ``store``."""
    return "load" if next((k for k, p in enumerate(ins.parts) if p.startswith("shared")), 99) < \
        next((k for k, p in enumerate(ins.parts) if p == "global"), 99) else "store"


def _tma_coords(ins: Instr) -> tuple[int, list]:
    """The copy's rank (``.Nd``) and its coordinate operands (decoded), from ``[tmap, {c0, c1, ...}]``."""
    rank = next((int(p[:-1]) for p in ins.parts if p.endswith("d") and p[:-1].isdigit()), 0)
    for a in ins.args:
        if isinstance(a, Addr) and not isinstance(a.base, Reg) and hasattr(a.base, "text"):
            parts = split_operands(a.base.text)
            vec = decode_operand(parts[1]) if len(parts) == 2 else None
            if isinstance(vec, Vec):
                return rank, list(vec.items)
    return rank, []


def _coord_claims(ctx: _Ctx, ins: Instr, coords: list, box: TmaBox,
                  shift: dict[int, z3.BitVecRef] | None = None, used: list | None = None) -> tuple[str, str]:
    """Whether each coordinate, less its ``shift`` (a multicast slice's offset along its dim), is a multiple
    of the MLIR's grid step along its dim (the box extent where the partition states no step: an
    assumption, refuted only ``unknown``)."""
    worst, notes = "proved", []
    for d, (c, g, b) in enumerate(zip(coords, box.grid, box.box)):
        step, stated = (g, True) if g else (b, False)
        e = ctx.ev.operand(c, 32, at=ins)
        if e is None or step <= 1:
            if e is None:
                worst, notes = "unknown", notes + [f"coordinate {d} is not read"]
            continue
        e = own_cta(ctx.ev, e)[0] - (shift or {}).get(d, 0)
        # a TMA coordinate is a signed 32-bit int; for a power-of-two step the unsigned remainder is the same test
        claim = (z3.URem(e, step) if step & (step - 1) == 0 else z3.SRem(e, step)) == 0
        assume, _t = ctx.assume(e)
        # induction over one loop counter only (several: alignment laws, far too slow for a grid claim)
        one = len(set(symbol_names(e)) - {str(SMEM), str(TID)}) == 1
        if ctx.ev.prover.proves(claim, assume) or (one and ctx.ev.by_induction(claim, assume)):
            continue
        fits = _no_overflow(e)
        if fits is not None and ctx.ev.prover.proves(claim, z3.And(assume, fits[0])):
            notes.append(f"coordinate {d} under the premise {fits[1]}")
            if used is not None:
                used.append(d)
            continue
        if stated and (ctx.ev.prover.proves(z3.Not(claim), assume) or (one and ctx.ev.by_induction(z3.Not(claim), assume))):
            return "counterexample", f"coordinate {d} is never a multiple of {step}, the MLIR's box grid along it"
        worst = "unknown"
        notes.append(f"coordinate {d} is not proved a multiple of {step}" + ("" if stated else " (the box extent: the "
                                                                                      "partition states no step)"))
    return worst, "; ".join(notes)


def _no_overflow(e: z3.BitVecRef) -> tuple[z3.BoolRef, str] | None:
    """The premise that every product by a constant inside coordinate ``e`` fits a signed 32-bit integer, with
    its text; None where ``e`` has none. Law: TMA coordinates are ``.s32`` (PTX ISA, cp.async.bulk.tensor), so
    a tile coordinate ``x c`` past 2^31 is no coordinate of the tile the kernel means; the PTX does not
    bound ``x`` (a tile index from the scheduler), so this is a premise, stated, never inferred."""
    found, seen, todo = [], set(), [e]
    while todo:
        t = todo.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_app_of(t, z3.Z3_OP_BMUL) and t.num_args() == 2:
            consts = [a for a in t.children() if z3.is_bv_value(a)]
            if len(consts) == 1:
                found.append((t.arg(0), t.arg(1), consts[0].as_long()))
        todo.extend(t.children())
    if not found:
        return None
    law = z3.And([z3.And(z3.BVMulNoOverflow(a, b, True), z3.BVMulNoUnderflow(a, b)) for a, b, _c in found])
    return law, (f"(the PTX states no bound) that its int32 product{'s' if len(found) > 1 else ''} by "
                 f"{', '.join(str(c) for *_x, c in found)} do{'' if len(found) > 1 else 'es'} not overflow (TMA "
                 "coordinates are signed 32-bit: PTX ISA, cp.async.bulk.tensor)")


def _slice_shift(ctx: _Ctx, p: TmaPlan) -> tuple[dict[int, z3.BitVecRef], str]:
    """A multicast load's coordinate offset: its CTA's slice ``i`` of ``g`` starts ``i x box[d] / g`` along ``d``,
    the box's outermost dim of extent above 1 (the box's contiguous ``1/g`` parts, in the order TMA writes
    it: coordinate 0 innermost); ({}, "") without multicast or where ``g`` does not divide that extent."""
    groups = _multicast(ctx, p)
    dims = [d for d, b in enumerate(p.grid.box) if b > 1]
    if not groups or not dims or p.grid.box[dims[-1]] % groups[0][0]:
        return {}, ""
    d, g = dims[-1], groups[0][0]
    idx = sum(z3.If(RANK == r, z3.BitVecVal(i, 32), z3.BitVecVal(0, 32)) for r, (_g, i, _m) in enumerate(groups))
    return {d: idx * (p.grid.box[d] // g)}, f"coordinate {d} less i x {p.grid.box[d] // g} (its slice i of {g})"


def _mask_claim(ctx: _Ctx, ins: Instr, p: TmaPlan) -> tuple[str, str]:
    """A multicast load's ctaMask (the operand after its barrier) is, for each cluster rank, the ranks of its
    multicast group (:func:`multicast_group`); ``proved``, ``counterexample`` (never, for any rank), ``unknown``."""
    groups = _multicast(ctx, p)
    if not groups:
        return "proved", ""
    slot = next((k for k, a in enumerate(ins.args) if isinstance(a, Addr) and isinstance(a.base, Reg) and k > 0), None)
    m = ctx.ev.operand(ins.args[slot + 1], 16, at=ins) if slot is not None and len(ins.args) > slot + 1 \
        and "multicast::cluster" in ins.parts else None
    if m is None:
        return "unknown", f"the MLIR multicasts it to groups of {groups[0][0]} CTAs; its ctaMask is not read"
    m = own_cta(ctx.ev, m)[0]
    claim = z3.And([z3.Implies(RANK == r, m == mask) for r, (_g, _i, mask) in enumerate(groups)])
    assume = ctx.assume(m, RANK)[0]
    masks = ", ".join(f"{mask:#x}" for _g, _i, mask in groups)
    if ctx.ev.prover.proves(claim, assume):
        return "proved", f"its ctaMask is its multicast group's CTAs (per rank: {masks})"
    if ctx.ev.prover.proves(z3.Not(claim), assume):
        return "counterexample", f"its ctaMask is not its multicast group's CTAs (per rank: {masks}) for some rank"
    return "unknown", f"its ctaMask is not proved to be its multicast group's CTAs (per rank: {masks})"


def _barrier(ctx: _Ctx, ins: Instr, slot: int) -> z3.BitVecRef | None:
    a = ins.args[slot] if len(ins.args) > slot else None
    if not isinstance(a, Addr) or not isinstance(a.base, Reg):
        return None
    e = ctx.ev.reg(a.base.name, at=ins)
    if e is None:
        return None
    e = z3.Extract(31, 0, e) if e.size() > 32 else z3.ZeroExt(32 - e.size(), e) if e.size() < 32 else e
    return e + z3.BitVecVal(a.offset or 0, 32)


def _same(ctx: _Ctx, a: z3.BitVecRef | None, b: z3.BitVecRef | None) -> bool:
    return a is not None and b is not None and ctx.ev.prover.proves(a == b, ctx.assume(a, b)[0])


def _expect_groups(ctx: _Ctx, instrs: list[Instr]) -> dict[int, tuple[Instr, list[Instr]]]:
    """Per TMA load (by ``id``), the ``mbarrier.arrive.expect_tx`` before it on the same barrier and every
    load between that one and the next expect_tx that completes on its barrier."""
    out: dict[int, tuple[Instr, list[Instr]]] = {}
    cur: tuple[Instr, z3.BitVecRef | None, list[Instr]] | None = None
    for ins in instrs:
        if ins.opcode.startswith("mbarrier.arrive.expect_tx"):
            cur = (ins, _barrier(ctx, ins, 1), [])
        elif ins.opcode.startswith("cp.async.bulk.tensor") and _tma_kind(ins) == "load" and cur is not None \
                and _same(ctx, cur[1], _barrier(ctx, ins, 2)):
            cur[2].append(ins)
            out[id(ins)] = (cur[0], cur[2])
    return out


def _bytes_claim(ctx: _Ctx, ins: Instr, groups: dict, matched: dict, premises: dict | None = None) -> tuple[str, str]:
    """The bytes the load's barrier expects (its ``expect_tx``) equal the bytes its loads bring onto it:
    each load's box (the MLIR's), times ``num_cta`` for a CTA pair's (``cta_group::2``: the peer's load of
    its half signals the same barrier), a multicast load's whole box (:func:`_brought`); ``unknown`` where a
    load of the group has no matched plan, another CTA's share is not established, or the count is not
    constant. What other CTAs bring rests on a premise the text states."""
    if id(ins) not in groups:
        return "unknown", "no expect_tx on its barrier before it"
    exp, loads = groups[id(ins)]
    n = ctx.ev.operand(exp.args[2], 32, at=exp) if len(exp.args) > 2 else None
    want = ctx.constant(n)[0] if n is not None else None
    plans = [matched.get(id(i)) for i in loads]
    if want is None or any(p is None or p.grid is None for p in plans):
        return "unknown", f"the bytes the expect_tx at line {exp.line} waits for are not compared (not constant, or a load of it unplaced)"
    brought = [_brought(ctx, i, p, exp) for i, p in zip(loads, plans)]
    why = next((b[1] for b in brought if b[0] is None), None)
    if why is not None:
        return "unknown", f"the expect_tx at line {exp.line} also counts bytes other CTAs' copies bring: {why}"
    kinds = {"multicast" if b[1] == MULTICAST_PREMISE else "pair" for b in brought if b[1]}
    if premises is not None and kinds:
        premises[("b", ins.line)] = tuple(sorted(kinds))
    text = (f"the expect_tx at line {exp.line} waits for {want} bytes; its {len(loads)} load(s) bring "
            + " + ".join(str(b[0]) for b in brought) + " (the MLIR's boxes"
            + "".join(f"; {t}" for t in dict.fromkeys(b[1] for b in brought if b[1])) + ")")
    return ("proved" if sum(b[0] for b in brought) == want else "counterexample"), text


#: what a CTA pair's byte count rests on (the PTX of one CTA cannot show the peer's copies)
PAIR_PREMISE = ("premise: the pair's peer CTA runs the same loads, each signalling this barrier of the pair's leader "
                "(cta_group::2: the MLIR's atom copies for num_cta = {n} CTAs, each its own half)")
#: what a multicast group's byte count rests on
MULTICAST_PREMISE = ("premise: every CTA of its multicast group runs the same load of its slice on the barrier at the same "
                     "offset (this barrier's address does not read %cluster_ctarank), and a multicast copy signals that "
                     "barrier in every CTA of its ctaMask (PTX ISA, cp.async.bulk.tensor: .multicast::cluster)")


def _brought(ctx: _Ctx, ins: Instr, p: TmaPlan, exp: Instr) -> tuple[int | None, str]:
    """The bytes load ``ins`` (plan ``p``) and the other CTAs' copies of it bring onto its barrier, with the
    premise that rests on ("" for a CTA's own load); (None, why) where that is not established."""
    box = p.grid.elements * p.elem_bits // 8
    if "multicast::cluster" in ins.parts:
        st, why = _mask_claim(ctx, ins, p)
        bar = _barrier(ctx, exp, 1)
        if not _multicast(ctx, p) or st != "proved":
            return None, why or f"a multicast load the MLIR does not multicast (MLIR line {p.line})"
        if bar is None or str(RANK) in symbol_names(own_cta(ctx.ev, bar)[0]):
            return None, "its barrier's address is not proved the same in every CTA of the group"
        return box, MULTICAST_PREMISE
    if "cta_group::2" in ins.parts:
        if p.num_cta < 2:
            return None, f"a CTA pair's load (cta_group::2), the MLIR's atom copies for one CTA (MLIR line {p.line})"
        return p.num_cta * box, PAIR_PREMISE.format(n=p.num_cta)
    return box, ""


def _extra_modes(ctx: _Ctx, ins: Instr, coords: list, wider: list[TmaPlan]) -> tuple[list[TmaPlan], str]:
    """The plans of ``wider`` (partitions of lower rank than the copy) when each coordinate past their rank is
    the constant 0: a mode of the copy's tensor map the MLIR's partition does not index (a group or batch mode
    the copy reads at index 0; its box extent along it is what the barrier's byte count then shows); else
    ([], why)."""
    if not wider:
        return [], ""
    r = min(p.grid.rank for p in wider)
    for d in range(r, len(coords)):
        e = ctx.ev.operand(coords[d], 32, at=ins)
        if e is None or not ctx.ev.prover.proves(e == 0, ctx.assume(e)[0]):
            return [], f"coordinate {d} is not proved 0"
    fits = [p for p in wider if p.grid.rank == r]
    many = len(coords) - r > 1
    return fits, (f"coordinate{'s' if many else ''} {', '.join(map(str, range(r, len(coords))))} "
                  f"{'are' if many else 'is'} 0: a mode of its tensor map the MLIR's {r}-d partition does not index")


def _box_check(ctx: _Ctx, ins: Instr, plans: list[TmaPlan], matched: dict, groups: dict,
               premises: dict | None = None) -> Check:
    """``tma-box``: the copy's rank and coordinates are the MLIR's box grid, and (a load) the bytes its
    barrier expects are its group's boxes (see :func:`tma_checks`); the premises it states go to
    ``premises``: ``("b", line)`` the pair's or multicast group's, ``("c", line)`` the coordinates resting
    on an int32 product."""
    kind = _tma_kind(ins)

    def check(status, severity, msg, data=None):
        return Check("cp.async.bulk.tensor", ins.line, ins.loc, "tma-box", status, severity, f"TMA {kind}: {msg}",
                     dict(data or {}, source="ptx", plan="cute-dsl mlir"))
    rank, coords = _tma_coords(ins)
    mine = [p for p in plans if p.kind == kind and p.grid is not None]
    if not mine:
        why = next((p.grid_why for p in plans if p.kind == kind and p.grid_why), "no TMA partition of its direction")
        return check("unchecked", None, f"the MLIR states no box for it ({why})", {"reason": why})
    fits = [p for p in mine if p.grid.rank == rank == len(coords)]
    extra = ""
    if not fits:
        fits, extra = _extra_modes(ctx, ins, coords, [p for p in mine if p.grid.rank < rank == len(coords)])
    if not fits:
        return check("unknown", "note", f"a {rank}-d copy, the MLIR's partitions are "
                     f"{'/'.join(sorted({str(p.grid.rank) for p in mine}))}-d (a map of another rank is not compared"
                     + (f": {extra}" if extra else "") + ")")
    own = matched.get(id(ins))
    fits = [own] if own in fits else fits
    used: dict = {}
    results = [(p,) + _coord_claims(ctx, ins, coords[:p.grid.rank], p.grid, _slice_shift(ctx, p)[0],
                                    used.setdefault(id(p), [])) for p in fits]
    if extra:
        results = [(p, st, "; ".join(t for t in (text, extra) if t)) for p, st, text in results]
    ok = next((r for r in results if r[1] == "proved"), None)
    if premises is not None and ok is not None and used.get(id(ok[0])):
        premises[("c", ins.line)] = tuple(used[id(ok[0])])
    if ok is None and all(r[1] == "counterexample" for r in results):
        return check("counterexample", "error", results[0][2] + f" (MLIR line {results[0][0].line}: box "
                     f"{'x'.join(map(str, results[0][0].grid.box))})")
    parts = [ok[1] if ok else "unknown", f"coordinates on the box grid {'x'.join(map(str, ok[0].grid.grid))}"
             + "".join(f" ({t})" for t in (ok[2], _slice_shift(ctx, ok[0])[1]) if t)
             if ok else "; ".join(r[2] for r in results)]
    if kind == "load" and ok is not None and _multicast(ctx, ok[0]):
        mst, mtext = _mask_claim(ctx, ins, ok[0])
        if mst == "counterexample":
            return check("counterexample", "error", f"box {'x'.join(map(str, ok[0].grid.box))} (MLIR line {ok[0].line}): "
                         f"{mtext} (the copy's multicast_layout {ok[0].mcast})")
        parts = [parts[0] if mst == "proved" else "unknown", parts[1] + f"; {mtext}"]
    if kind == "load":
        st, text = _bytes_claim(ctx, ins, groups, matched, premises)
        if st == "counterexample":
            return check("counterexample", "error", f"{text}: the box the MLIR states is not the one its tensor map "
                         "loads (or a load is missing)")
        parts = ["proved" if parts[0] == st == "proved" else "unknown", parts[1] + "; " + text]
    box = ok[0] if ok else fits[0]
    if own is not None and own.placement is not None:
        if not own.placement[0]:
            return check("counterexample", "error", f"box {'x'.join(map(str, own.grid.box))} (MLIR line {own.line}): "
                         f"{own.placement[1]}: the shared layout the MMA reads is not what the box writes")
        parts[1] += f"; the box writes the stage's tile as the memref lays it out ({own.placement[1]})"
    msg = (f"box {'x'.join(map(str, box.grid.box))} (MLIR line {box.line}): " + parts[1])
    return check(parts[0], None if parts[0] == "proved" else "note", msg, {"mlir_line": box.line})


def tma_checks(mod: CuteModule, ptx: PtxModule, plans: list[MmaPlan], state: dict | None = None) -> list[Check]:
    """Two checks per ``cp.async.bulk.tensor`` of ``ptx``: ``tma-smem-box`` (:func:`_tma_check`: its
    shared address starts a box of a stage of its buffer) and ``tma-box`` (:func:`_box_check`).

    Law (``tma-box``): the box is the one the MLIR's ``tma_partition`` coordinate tensor states
    (``((box, boxes), steps...)``, strides ``k@d`` on TMA coordinate ``d``; its bits equal the atom's
    ``copy_bits``); the copy's rank is the partition's, each coordinate a multiple of the partition's
    step along its dim (the origin's ``?{div=N}`` and every step's ``k``); and the ``expect_tx`` a load's
    barrier is armed with (the one before it on the same barrier) counts exactly the bytes of the
    boxes of the loads completing on it. A coordinate never on the grid, or a byte count that
    differs, is an error at the copy; a claim true for some values only is ``unknown``. ``state``, where
    given, receives the plans (``tplans``) and each copy's proved plan by ``id`` (``matched``)."""
    tplans, skipped = tma_plans(mod)
    out = []
    premises: dict = {}
    contexts = state.setdefault("contexts", {}) if state is not None else {}
    if state is not None:
        state.update(tplans=tplans, matched={}, premises=premises)
    for func in ptx.functions:
        instrs = [i for i in ptx.instrs if i.func == func]
        copies = [i for i in instrs if i.opcode.startswith("cp.async.bulk.tensor")]
        if not copies:
            continue
        ctx = contexts[func] if func in contexts else _context(ptx, func, plans, mod)
        matched: dict = {}
        for ins in copies:
            if not tplans and skipped:
                out.append(Check("cp.async.bulk.tensor", ins.line, ins.loc, "tma-smem-box", "unchecked", None,
                                 f"TMA copy: {skipped[0]}", {"reason": skipped[0], "source": "ptx"}))
                continue
            out.append(_tma_check(ctx, ins, tplans, matched, premises))
        groups = _expect_groups(ctx, instrs)
        out.extend(_box_check(ctx, ins, tplans, matched, groups, premises) for ins in copies)
        if state is not None:
            state["matched"].update(matched)
            state["contexts"][func] = ctx
    return out
