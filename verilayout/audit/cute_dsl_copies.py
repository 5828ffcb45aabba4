"""A CuTe-DSL epilogue's ``stmatrix`` proved against the MLIR (check ``smem-copy``): per thread, each byte
a ``stmatrix`` writes is the accumulator element the epilogue's shared memref places at that address.

The plan (:func:`copy_plans`): each ``cute.tiled.copy.partition_D(%copy, %view, ...)`` whose tiled copy
is an ``!cute_nvgpu.atom.stsm`` atom names the shared buffer the epilogue stores into: its memref
``!cute.memref<T, smem, S<B,M,S>, "(EM, EN, stage...)">`` gives the epilogue tile (its first two modes,
``EM x EN``), the stages (every further mode) and the swizzle (on byte addresses, as
:mod:`verilayout.frontends.cute_mlir` reads it); the buffer's byte offset in the shared-memory
allocation comes from its dataflow to the ``cute.memref.alloca`` (the caller's ``origin_of``).

Tags (the machinery of :mod:`verilayout.audit.ptx_shuffles`, run over the function's schedule for every
thread of the CTA): after each ``wgmma.mma_async`` of a tiled MMA of the MLIR (the one whose atom has
its ``m64nNkK`` shape and operand-A source), each 32-bit accumulator register holds the element the PTX
ISA D fragment (9.7.15.5.1) puts there: row ``16 (warp % 4) + lane / 4 + 8 ((i / 2) % 2)``, column
``2 (lane % 4) + i % 2 + 8 (i / 4)`` of its block; packing ``cvt``, ``mov``, ``prmt`` and floating-point
arithmetic move the tags (PTX ISA 9.7.9.21 ``cvt``: ``a`` to the upper half). The block ``b`` of a
warpgroup is its repeat ``(m, n)`` in CuTe's serpentine order (:func:`verilayout.audit.cute_dsl.block_of`
over ``M / (64 Am)`` repeats) and warpgroup ``w`` (counted from the first warpgroup that reaches the
``stmatrix``) is atom ``(w mod Am, (w div Am) mod An)``: the element's (row, col) in the C tile is
``((m Am + wm) 64 + row, (n An + wn) N + col)``.

Law (``stmatrix.x{1,2,4}``, not ``.trans``; PTX ISA ``stmatrix``, Data Movement and Conversion Instructions: lanes ``8j .. 8j+7`` give the
row addresses of matrix ``j``; lane ``l`` holds row ``l / 4``, bytes ``4 (l % 4) .. +3`` of matrix ``j``
in its register ``j``): for every thread that reaches the instruction (its branch guards on ``%tid``),
every byte ``k`` of register ``j`` holds byte ``k % 2`` of an element ``(r, c)`` whose epilogue-tile
position is ``(r mod EM, c mod EN)``, and the thread writes it at
``swizzle(origin + stage + layout(r mod EM, c mod EN) x bytes) + k % 2`` for one stage of the memref, the same
for every byte the warpgroup writes with the instruction; the instruction's elements lie in one
``EM x EN`` sub-tile of the C tile (the epilogue's iteration); the stage is the one the TMA store that
reads it (the first ``cp.async.bulk.tensor`` shared -> global after the next ``fence.proxy.async``) reads
from, per warpgroup; over the function every element of a warpgroup's accumulator is stored exactly once.
Addresses are evaluated at shared-memory base 0 (the base is 1024-byte aligned: the swizzle of the
absolute address keeps it; checked at base 1024 too), through a loop-carried register at its first
iteration (said in ``data["addresses"]``).

Verdicts: ``proved`` when every byte of every thread holds; an ``error`` at the PTX line that is wrong,
naming thread, register and both elements or addresses: the packing instruction that put another of its
sources' elements in the byte, else the ``stmatrix`` (a wrong address, a register order, a stage that is
none of the memref's); ``unchecked`` with the reason when a register holds no traced element, an address
is not a function of ``%tid``, the MLIR has no ``stsm`` copy or several, or the buffer's offset is not
stated; every ``stmatrix`` gets a check. The other direction, ``ldmatrix`` (shared memory -> registers, and
the ``mma.sync`` it feeds), is :mod:`verilayout.audit.cute_dsl_ldmatrix`, on the same buffer reading
(:class:`CopyPlan`), addresses and branch guards.

>>> [x.tolist() for x in stmatrix_rows(np.array([0, 5, 31]), 1)]
[[8, 9, 15], [0, 4, 12]]
"""
from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterator

import numpy as np
import z3

from verilayout.audit.model import Check
from verilayout.audit.ptx_dots import MMA_OPS, accumulator_blocks, mma_groups
from verilayout.audit.ptx_shuffles import Frag, TagRun, Val, frag_d, schedule, step_tags
from verilayout.audit.ptx_smem import thread_values
from verilayout.audit.ptx_wgmma import wgmma_shape
from verilayout.core.cute.int_tuple import product
from verilayout.core.cute.layout import ComposedLayout, Layout
from verilayout.core.cute.swizzle import Swizzle
from verilayout.errors import LayoutError
from verilayout.frontends.cute_mlir import CuteModule, Memref, interpret
from verilayout.hw.nvidia.ptx_model import Addr, Instr, PtxModule, Reg, Vec
from verilayout.prove.ptx_values import SMEM, TID, PtxValues, symbol_names

__all__ = ["CHECK", "CopyPlan", "copy_plans", "smem_partitions", "copy_checks", "stmatrix_rows", "buffer_plan", "operand_type",
           "address_values", "reaching_threads", "address_chain"]

CHECK = "smem-copy"
#: element tag fields: ``1 + (((plan * 16 + block) * 64 + row) * 256 + col)``
_BLOCKS, _ROWS, _COLS = 16, 64, 256


@dataclass(frozen=True)
class CopyPlan:
    """The shared buffer of one ``stsm`` tiled copy: its memref, epilogue tile ``EM x EN``, the byte
    offset of each stage (every combination of its modes past the first two), its byte offset in the
    shared-memory allocation (None: not stated) and the MLIR line of the partition."""

    memref: Memref
    em: int
    en: int
    rows: tuple[int, ...]
    cols: tuple[int, ...]
    stages: tuple[int, ...]
    origin: int | None
    line: int
    #: the swizzle on byte addresses where the layout text composes one (``S<3,3,3> o 0 o L``: CuTe's
    #: composition with an element layout, so element units, converted); None: the memref's own ``S<B,M,S>``
    composed: tuple[int, int, int] | None = None

    @property
    def swizzle(self) -> Swizzle:
        if self.composed:
            return _swizzle(*self.composed)
        return _swizzle(*self.memref.swizzle) if self.memref.swizzle else _swizzle(0, 0, 0)


@functools.lru_cache(maxsize=256)
def _swizzle(bits: int, base: int, shift: int) -> Swizzle:
    """``Swizzle(bits, base, shift)``, built (and validated) once per process: it is immutable."""
    return Swizzle(bits, base, shift)


def _mode_bytes(shape: Any, stride: Any, eb: int) -> tuple[int, ...]:
    """Byte offset of each index of one layout mode (CuTe's colexicographic order within the mode)."""
    mode = Layout(shape, stride)
    return tuple(int(mode(i)) * eb for i in range(int(product(shape))))


def buffer_plan(m: Memref, line: int, origin: int | None) -> CopyPlan:
    """The :class:`CopyPlan` of a shared memref ``(EM, EN, stage...)`` (an epilogue's ``stsm`` buffer, an
    ``ldsm`` copy's source): each mode's byte offsets in CuTe's colexicographic order, every stage's.

    >>> p = buffer_plan(Memref("f16", "smem", 16, None, "(8,16,2):(16,1,128)"), 1, 0)
    >>> p.em, p.en, p.cols[:3], p.stages
    (8, 16, (0, 2, 4), (0, 256))
    """
    lay = m.cute()
    inner = lay.layout if isinstance(lay, ComposedLayout) else lay
    if not isinstance(inner.shape, tuple) or len(inner.shape) < 2:
        raise LayoutError(f"MLIR line {line}: expected an (M, N[, stage...]) epilogue buffer, got {m.layout}")
    eb = m.elem_bits // 8
    modes = [_mode_bytes(s, d, eb) for s, d in zip(inner.shape, inner.stride)]
    stages = tuple(sorted({sum(c) for c in itertools.product(*modes[2:])})) if len(modes) > 2 else (0,)
    return CopyPlan(m, len(modes[0]), len(modes[1]), modes[0], modes[1], stages, origin, line, _composed(m, line))


def _composed(m: Memref, line: int) -> tuple[int, int, int] | None:
    """The byte-address swizzle of a layout text that composes one with its element layout (``S<B,M,S> o 0 o
    L``: the swizzle acts on element offsets, so on bytes it is ``S<B, M + log2(element bytes), S>``);
    None where the memref states its swizzle apart (already on bytes) or has none."""
    lay = m.cute()
    if m.swizzle is not None or not isinstance(lay, ComposedLayout):
        return None
    sw, eb = lay.swizzle, m.elem_bits // 8
    if int(lay.offset) != 0 or eb & (eb - 1):
        raise LayoutError(f"MLIR line {line}: a composed swizzle with offset {lay.offset} on {m.elem} is not read")
    return (sw.bits, sw.base + eb.bit_length() - 1, sw.shift)


def operand_type(mod: CuteModule, op: Any, i: int) -> Any:
    """The interpreted type of ``op``'s operand ``i``: from its own signature where it lists every operand's
    type, else the module's first typing of the value; None past its operands.

    >>> operand_type(CuteModule((), {}, {}), type("Op", (), {"operands": (), "operand_types": ()})(), 0) is None
    True
    """
    if len(op.operand_types) == len(op.operands) > i:
        return interpret(op.operand_types[i])
    return mod.type_of(op.operands[i]) if len(op.operands) > i else None


def smem_partitions(mod: CuteModule, op_name: str, origin_of: Callable[[str, int], int | None] | None = None
                    ) -> Iterator[tuple[Any, Any, Memref, int | None]]:
    """Each ``op_name`` partition (``cute.tiled.copy.partition_S`` / ``_D``) of a shared-memory memref:
    ``(op, copy type, memref, origin line of the memref or None)``, in MLIR order; other spaces and
    partitions with fewer than two operands are passed over.

    >>> list(smem_partitions(CuteModule((), {}, {}), "cute.tiled.copy.partition_D"))
    []
    """
    for op in mod.ops:
        if op.name != op_name or len(op.operands) < 2:
            continue
        mem = operand_type(mod, op, 1)
        if isinstance(mem, Memref) and mem.space == "smem":
            yield op, operand_type(mod, op, 0), mem, origin_of(op.operands[1], op.line) if origin_of else None


def copy_plans(mod: CuteModule, origin_of: Callable[[str, int], int | None] | None = None) -> list[CopyPlan]:
    """Every ``stsm`` tiled copy's destination buffer (see the module docstring), in MLIR order.

    >>> copy_plans(CuteModule((), {}, {}))
    []
    """
    out = []
    for op, cp, mem, origin in smem_partitions(mod, "cute.tiled.copy.partition_D", origin_of):
        if "atom.stsm" not in getattr(cp, "text", ""):
            continue
        try:
            out.append(buffer_plan(mem, op.line, origin))
        except LayoutError:
            continue
    return out


def stmatrix_rows(lane: np.ndarray, j: int) -> tuple[np.ndarray, np.ndarray]:
    """PTX ISA ``stmatrix``/``ldmatrix`` (non-transposed, b16): for register ``j`` of each ``lane``, the
    lane that supplies the row address (``8 j + lane / 4``) and the byte offset in that row
    (``4 (lane % 4)``).

    >>> stmatrix_rows(np.array([6]), 2)
    (array([17]), array([8]))
    """
    return 8 * j + lane // 4, 4 * (lane % 4)


# ----- tags: wgmma accumulators -------------------------------------------------------------------

@dataclass(frozen=True)
class _Acc:
    """One wgmma instruction's accumulator: its tiled MMA (index into the plans), block, fragment."""

    plan: int
    block: int
    frag: Frag


def _mma_of(plans: list, shape: tuple, frag_kind: str) -> int | None:
    """The index of the one tiled MMA whose atom has the wgmma's shape and operand-A source."""
    fits = [k for k, p in enumerate(plans) if p.mma.arch == "sm90" and p.mma.shape == shape[:3]
            and p.mma.frag_kind == frag_kind]
    return fits[0] if len(fits) == 1 else None


def _accumulators(instrs: list[Instr], plans: list) -> dict[int, _Acc]:
    """Each wgmma (by ``id``) of a group that one tiled MMA of the plans covers, with its block."""
    out = {}
    for g in mma_groups(instrs, *MMA_OPS["sm_90"]):
        shape = wgmma_shape(g[0].opcode)
        if shape is None or shape[3] not in ("f32", "s32") or shape[1] > _COLS:
            continue                         # f16 accumulators pack two per register: not tagged, unchecked
        k = _mma_of(plans, shape, "rs" if isinstance(g[0].args[1], (Vec, Addr)) else "ss")
        if k is None or len(accumulator_blocks(g)) > _BLOCKS:
            continue
        for b, blk in enumerate(accumulator_blocks(g)):
            for ins in blk:
                out[id(ins)] = _Acc(k, b, Frag("wgmma", shape[0], shape[1], shape[2], 16, 16))
    return out


def _acc_tags(acc: _Acc, ins: Instr, threads: int) -> dict[str, Val]:
    """The tags a wgmma leaves in its 32-bit accumulator registers (PTX ISA D fragment)."""
    tid = np.arange(threads)
    lane, warp = tid % 32, tid // 32
    out = {}
    for q, x in enumerate(ins.args[0].items if isinstance(ins.args[0], Vec) else ()):
        r, c = frag_d(acc.frag, lane, warp, q)
        e = 1 + (((acc.plan * _BLOCKS + acc.block) * _ROWS + r) * _COLS + c)
        if isinstance(x, Reg):
            out[x.name] = Val(e[:, None] * 8 + np.arange(4)[None, :], None, ())
    return out


def _decode(e: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(plan, block, row, col) of element tags ``e`` (>= 1)."""
    x = e - 1
    return x // (_COLS * _ROWS * _BLOCKS), (x // (_COLS * _ROWS)) % _BLOCKS, (x // _COLS) % _ROWS, x % _COLS


# ----- the run --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Seen:
    """A ``stmatrix`` at its last visit: the tags of its registers (threads x bytes each)."""

    ins: Instr
    tags: tuple
    vals: tuple


def _run(ptx: PtxModule, func: str, ev: PtxValues, accs: dict, threads: int) -> dict[int, _Seen]:
    """Run the function's schedule on tags; the registers of each ``stmatrix`` at its last visit."""
    run = TagRun(ev, threads)
    order = schedule(ptx, func)
    seen: dict[int, _Seen] = {}
    for ins in order:
        if ins.parts and ins.parts[0] == "stmatrix" and len(ins.args) == 2 and isinstance(ins.args[1], Vec):
            vals = tuple(run.val(x) for x in ins.args[1].items)
            seen[id(ins)] = _Seen(ins, tuple(None if v is None else v.tags for v in vals), vals)
        step_tags(run, ins)
        if id(ins) in accs:
            run.regs.update(_acc_tags(accs[id(ins)], ins, threads))
    return seen


def _per_thread(e: z3.BitVecRef, base: int, memo: dict, threads: int) -> np.ndarray:
    """``e`` at every thread with the shared-memory base at ``base``."""
    return np.array(thread_values(z3.substitute(e, (SMEM, z3.BitVecVal(base, 32))), memo, threads), dtype=np.int64)


def address_values(evs: tuple[PtxValues, PtxValues], ins: Instr, memo: dict, threads: int,
               slot: int = 0) -> tuple[np.ndarray, str] | str:
    """Each thread's address operand (base 0) and how it was evaluated, or why it is not a function of
    ``%tid``: where a loop-carried register enters it, at the first loop iteration (its first
    definition). It must move with an aligned base by exactly the base (the swizzle acts on bits
    below 1024). ``slot``: the address operand's index (0 for ``stmatrix``, 1 for ``ldmatrix``).

    >>> from verilayout.frontends.ptx import make_instr
    >>> address_values((None, None), make_instr("ldmatrix.sync.aligned.m8n8.x1.shared.b16", ("{%r1}", "%r2"), 1), {}, 32, 1)
    'its address (operand 1) is not a register plus an offset'
    """
    a = ins.args[slot] if len(ins.args) > slot else None
    if not isinstance(a, Addr) or not isinstance(a.base, Reg) or a.offset is None:
        return f"its address (operand {slot}) is not a register plus an offset"
    for ev, how in zip(evs, ("every iteration", "the first loop iteration (loop-carried registers at their first definition)")):
        try:
            e = ev.operand(a.base, 32, at=ins)
            if symbol_names(e) - {str(TID), str(SMEM)}:
                continue
            v0, v1 = _per_thread(e, 0, memo, threads), _per_thread(e, 1024, memo, threads)
        except (ValueError, AttributeError, TypeError, KeyError, z3.Z3Exception):
            continue
        if not ((v1 - v0) % (1 << 32) == 1024).all():
            return f"the address register {a.base.name} does not move with the shared-memory base"
        return (v0 + a.offset) % (1 << 32), how
    return f"the address register {a.base.name} is not a function of %tid and the shared-memory base"


def reaching_threads(ev: PtxValues, ins: Instr, memo: dict, threads: int) -> np.ndarray:
    """Which threads meet the branch guards on ``%tid`` that every path to ``ins`` passes (a guard that is
    not a function of ``%tid`` is not applied: every thread is kept).

    >>> from verilayout.frontends.ptx import make_instr, parse_ptx
    >>> ptx = parse_ptx(".version 8.7\\n.entry f()\\n{\\nret;\\n}")
    >>> int(reaching_threads(PtxValues(ptx, "f"), ptx.instrs[0], {}, 64).sum())
    64
    """
    ok = np.ones(threads, dtype=bool)
    for cond, _text in ev.guards(ins):
        try:
            v = thread_values(z3.If(cond, z3.BitVecVal(1, 32), z3.BitVecVal(0, 32)), memo, threads)
        except (ValueError, AttributeError, TypeError, KeyError, z3.Z3Exception):
            continue
        ok &= np.array(v, dtype=bool)
    return ok


# ----- the comparison -------------------------------------------------------------------------------

def _serpentine(b: np.ndarray, m_reps: int) -> tuple[np.ndarray, np.ndarray]:
    """(m, n) repeat of a warpgroup's accumulator block ``b``: CuTe's column-major serpentine order
    (``cute/algorithm/gemm.hpp``; the same order the descriptor check uses)."""
    n, m = b // m_reps, b % m_reps
    return np.where(n % 2 == 1, m_reps - 1 - m, m), n


@dataclass(frozen=True)
class _Geom:
    """A tiled MMA's placement: atoms over warpgroups (``am x an``), M repeats per warpgroup, atom N."""

    am: int
    an: int
    m_reps: int
    n: int


def _geometry(plan: Any) -> _Geom:
    am, an, _ = plan.mma.atoms
    a = plan.operand("A")
    return _Geom(am, an, max(1, a.extents[0] // (64 * am)) if a is not None else 1, plan.mma.shape[1])


@dataclass(frozen=True)
class _Bytes:
    """One ``stmatrix``'s bytes over its reaching threads (flat arrays): thread, register, byte, element
    (row, col) in the C tile, byte within the element, and the address written (base 0)."""

    thread: np.ndarray
    reg: np.ndarray
    byte: np.ndarray
    row: np.ndarray
    col: np.ndarray
    within: np.ndarray
    addr: np.ndarray
    plan: int = 0


def _bytes(seen: _Seen, addr: np.ndarray, reach: np.ndarray, geoms: list, plan_ids: list) -> _Bytes | str:
    """The bytes of ``seen`` with their elements, or why a register holds no traced element."""
    tid = np.flatnonzero(reach)
    if not len(tid):
        return "no thread reaches it (its branch guards on %tid)"
    w0 = int(tid.min()) // 128
    cols = []
    for j, tags in enumerate(seen.tags):
        if tags is None or tags.shape[1] < 4 or (tags[tid, :4] <= 0).any():
            v = seen.vals[j]
            lost = v.lost if v is not None and v.lost else "holds no wgmma accumulator element of a tiled MMA of the MLIR"
            return f"register {seen.ins.args[1].items[j]}: {lost}"
        src, off = stmatrix_rows(tid % 32, j)
        for k in range(4):
            cols.append((tid, np.full_like(tid, j), np.full_like(tid, k), tags[tid, k],
                         addr[(tid & ~31) | src] + off + k))
    t, j, k, tag, a = (np.concatenate(x) for x in zip(*cols))
    p, b, fr, fc = _decode(tag // 8)
    if not np.isin(p, plan_ids).all() or (p != p[0]).any():
        return "its elements come from more than one tiled MMA or from none the epilogue plan reads"
    g = geoms[int(p[0])]
    w = t // 128 - w0
    wm, wn = w % g.am, (w // g.am) % g.an
    mr, nr = _serpentine(b, g.m_reps)
    return _Bytes(t, j, k, (mr * g.am + wm) * 64 + fr, (nr * g.an + wn) * g.n + fc, tag % 8, a, int(p[0]))


def _wanted(cp: CopyPlan, got: _Bytes, stage: int) -> np.ndarray:
    """Where the memref places each byte's element at stage offset ``stage`` (base 0)."""
    rows, cols = np.array(cp.rows), np.array(cp.cols)
    plain = (cp.origin or 0) + stage + rows[got.row % cp.em] + cols[got.col % cp.en]
    return np.asarray(cp.swizzle(plain), dtype=np.int64) + got.within


def _stage_of(cp: CopyPlan, got: _Bytes, sel: np.ndarray) -> tuple[int, np.ndarray]:
    """The stage whose placement matches most of the selected bytes, and its wanted addresses."""
    best = max(cp.stages, key=lambda s: int((_wanted(cp, got, s)[sel] == got.addr[sel]).sum()))
    return best, _wanted(cp, got, best)


def _element(got: _Bytes, i: int) -> str:
    return f"C[{int(got.row[i])}, {int(got.col[i])}] byte {int(got.within[i])}"


def _check(ins: Instr, status: str, severity: str | None, message: str, data: dict) -> Check:
    return Check("stmatrix" if ins.parts[0] == "stmatrix" else ins.parts[0], ins.line, ins.loc, CHECK, status,
                 severity, message, dict(data, source="ptx", plan="cute-dsl mlir"))


def _compare(seen: _Seen, cp: CopyPlan, got: _Bytes) -> tuple[Check, int | None]:
    """The verdict of one ``stmatrix``; with the index of its first wrong byte (None: proved)."""
    ins = seen.ins
    want = np.zeros_like(got.addr)
    stages = {}
    for wg in np.unique(got.thread // 128):
        sel = got.thread // 128 == wg
        stages[int(wg)], w = _stage_of(cp, got, sel)
        want[sel] = w[sel]
    sub = set(zip((got.row // cp.em).tolist(), (got.col // cp.en).tolist()))
    bad = np.flatnonzero(want != got.addr)
    data = {"stages": stages, "subtiles": sorted(sub), "bytes": int(len(got.addr)), "plan_line": cp.line}
    if len(sub) > 1:
        return _check(ins, "error", "error", f"{ins.opcode}: its elements lie in {len(sub)} epilogue sub-tiles "
                      f"{sorted(sub)[:4]} of {cp.em}x{cp.en} (MLIR line {cp.line}): one iteration writes one", data), 0
    if len(bad):
        i = int(bad[0])
        t = int(got.thread[i])
        item = ins.args[1].items[int(got.reg[i])]
        reg = item.name if isinstance(item, Reg) else str(item)
        msg = (f"{ins.opcode}: thread {t} (warp {t // 32}, lane {t % 32}) register {reg} byte {int(got.byte[i])} holds "
               f"{_element(got, i)}, which the epilogue buffer (MLIR line {cp.line}, stage offset "
               f"{stages[t // 128]}) places at shared byte {int(want[i])}; the stmatrix writes it at {int(got.addr[i])} "
               f"({len(bad)} of {len(got.addr)} bytes wrong)")
        return _check(ins, "error", "error", msg, dict(data, thread=t, register=reg, want=int(want[i]),
                                                        got=int(got.addr[i]))), i
    msg = (f"{ins.opcode}: every byte of every thread ({len(np.unique(got.thread))} threads) is the accumulator element "
           f"the epilogue buffer (MLIR line {cp.line}) places there: sub-tile {sorted(sub)[0]} of {cp.em}x{cp.en}, "
           f"stage offset(s) {sorted(set(stages.values()))}")
    return _check(ins, "proved", None, msg, data), None


def _swapped_in_register(got: _Bytes, want: np.ndarray, i: int) -> bool:
    """Whether the element the memref wants at byte ``i``'s address sits in another byte of the same
    register of the same thread (the packing put the register's elements in the wrong halves)."""
    same = (got.thread == got.thread[i]) & (got.reg == got.reg[i])
    return bool((same & (want == got.addr[i])).any())


def _blamed(seen: _Seen, cp: CopyPlan, got: _Bytes, check: Check, i: int) -> list[Check]:
    """The error at the packing instruction that swapped the register's halves, else at the stmatrix."""
    want = np.array([0])
    if check.data.get("want") is not None:
        want = _wanted_all(cp, got, check.data["stages"])
    v = seen.vals[int(got.reg[i])]
    writer = v.ins if v is not None else None
    if writer is not None and writer.head in ("cvt", "mov", "prmt") and _swapped_in_register(got, want, i):
        moved = Check(writer.opcode, writer.line, writer.loc, CHECK, "error", "error",
                      f"{writer.opcode}: packs the elements of {check.data['register']} in the "
                      f"wrong halves for the stmatrix at PTX line {seen.ins.line}: {check.message}",
                      dict(check.data, stmatrix_line=seen.ins.line))
        return [moved, check]
    return [replace(check, data=dict(check.data, blame="address"))]


def _wanted_all(cp: CopyPlan, got: _Bytes, stages: dict) -> np.ndarray:
    want = np.zeros_like(got.addr)
    for wg, s in stages.items():
        sel = got.thread // 128 == wg
        want[sel] = _wanted(cp, got, s)[sel]
    return want


def _unchecked(ins: Instr, why: str) -> Check:
    return _check(ins, "unchecked", None, f"{ins.opcode}: {why}", {"reason": why})


def _unmodelled(ins: Instr) -> str | None:
    """Why a ``stmatrix`` is not of the modelled form (``.m8n8``, ``.b16``, not ``.trans``, unpredicated)."""
    if "trans" in ins.parts:
        return "stmatrix .trans is not modelled"
    if "m8n8" not in ins.parts or "b16" not in ins.parts:
        return "only stmatrix .m8n8 .b16 is modelled"
    return "a predicated stmatrix (its guard is not evaluated per thread)" if ins.guard is not None else None


def _function_checks(ptx: PtxModule, func: str, plans: list, cps: list[CopyPlan],
                     evs: tuple[PtxValues, PtxValues]) -> list[Check]:
    """The checks of one function's ``stmatrix`` (see the module docstring)."""
    instrs = [i for i in ptx.instrs if i.func == func]
    stores = [i for i in instrs if i.parts and i.parts[0] == "stmatrix"]
    if not stores:
        return []
    out: list[Check] = []
    why = (None if len(cps) == 1 else "the MLIR has no stsm tiled copy into shared memory" if not cps
           else f"the MLIR has {len(cps)} stsm tiled copies (which one is not decided)")
    if why is None and cps[0].origin is None:
        why = "the MLIR states no byte offset for the epilogue buffer (its dataflow to the allocation)"
    if why is not None:
        return out + [_unchecked(i, why) for i in stores]
    odd = {id(i): _unmodelled(i) for i in stores if _unmodelled(i)}
    out += [_unchecked(i, odd[id(i)]) for i in stores if id(i) in odd]
    stores = [i for i in stores if id(i) not in odd]
    threads = ptx.threads_of(func) or 128
    accs = _accumulators(instrs, plans)
    seen = _run(ptx, func, evs[0], accs, threads)
    geoms = [_geometry(p) for p in plans]
    memo: dict = {}
    done: list[tuple[Check, _Bytes | None]] = []
    for ins in stores:
        done.extend(_store_check(ins, seen.get(id(ins)), cps[0], geoms, evs, memo, threads, instrs))
    checks = _coverage(done, accs)
    return out + checks + _address_blame(checks, {i.line: i for i in instrs}, evs[0])


def address_chain(ev: PtxValues, reg: str, depth: int = 16) -> set[int]:
    """PTX lines of the instructions that compute ``reg`` (its backward slice through registers of one
    definition each, ``depth`` steps at most).

    >>> from verilayout.frontends.ptx import parse_ptx
    >>> ptx = parse_ptx(".version 8.7\\n.entry f()\\n{\\nmov.u32 %r1, %tid.x;\\nshl.b32 %r2, %r1, 4;\\nret;\\n}")
    >>> sorted(address_chain(PtxValues(ptx, "f"), "%r2"))
    [4, 5]
    """
    out: set[int] = set()
    todo = [(reg, 0)]
    while todo:
        name, d = todo.pop()
        defs = ev.defs.get(name, [])
        if len(defs) != 1 or d >= depth or defs[0].line in out:
            continue
        out.add(defs[0].line)
        for a in defs[0].args[1:]:
            for x in a.items if isinstance(a, Vec) else (a,):
                if isinstance(x, Reg):
                    todo.append((x.name, d + 1))
    return out


def _address_blame(checks: list[Check], at: dict[int, Instr], ev: PtxValues) -> list[Check]:
    """For each wrong ``stmatrix`` address: an error (a tie with the ``stmatrix``) at each instruction of
    its address's computation that no proved ``stmatrix``'s address reads."""
    def base(line: int) -> str | None:
        a = at[line].args[0] if line in at and at[line].args else None
        return a.base.name if isinstance(a, Addr) and isinstance(a.base, Reg) else None

    good: set[int] = set()
    for c in checks:
        if c.status == "proved" and base(c.line):
            good |= address_chain(ev, base(c.line))
    out, seen = [], set()
    for c in checks:
        if c.status != "error" or c.data.get("blame") != "address" or not base(c.line):
            continue
        for line in sorted(address_chain(ev, base(c.line)) - good - seen):
            seen.add(line)
            ins = at[line]
            out.append(Check(ins.opcode, line, ins.loc, CHECK, "error", "error",
                             f"computes the address of the stmatrix at PTX line {c.line}, which is wrong, and no proved "
                             f"stmatrix's address reads it (the error is here or at the stmatrix: a tie): {c.message}",
                             dict(c.data, stmatrix_line=c.line)))
    return out


def _tile_elements(accs: dict, plan: int) -> int:
    """Accumulator elements per warpgroup of tiled MMA ``plan`` (its blocks of 64 x N)."""
    return sum({a.block: a.frag.m * a.frag.n for a in accs.values() if a.plan == plan}.values())


def _coverage(done: list[tuple[Check, _Bytes | None]], accs: dict) -> list[Check]:
    """The checks, where every ``stmatrix`` is proved: each element of a warpgroup's accumulator is stored
    by exactly one of them (the epilogue's iterations tile the C tile); a second store of an element is
    an error at its ``stmatrix``, elements never stored an error at the last one."""
    checks = [c for c, _ in done]
    if not done or any(c.status != "proved" for c in checks):
        return checks
    first: dict[tuple, int] = {}
    out = []
    for c, got in done:
        one = got.within == 0
        keys = set(zip((got.thread[one] // 128).tolist(), got.row[one].tolist(), got.col[one].tolist()))
        again = sorted(keys & first.keys())
        if again:
            w, r, col = again[0]
            c = replace(c, status="error", severity="error", message=(
                f"{c.op}: stores C[{r}, {col}] of warpgroup {w} again ({len(again)} elements), which "
                f"the stmatrix at PTX line {first[again[0]]} stores: the epilogue's iterations must tile the C tile"))
        for k in keys:
            first.setdefault(k, c.line)
        out.append(c)
    per_wg = _tile_elements(accs, done[0][1].plan)
    missing = per_wg * len({k[0] for k in first}) - len(first)
    if missing > 0 and all(c.status == "proved" for c in out):
        c = out[-1]
        out[-1] = replace(c, status="error", severity="error", message=(
            f"{c.op}: the function's stmatrix store {len(first)} accumulator elements; {missing} of "
            f"the {per_wg} per warpgroup are never stored"))
    return out


def _store_check(ins: Instr, seen: _Seen | None, cp: CopyPlan, geoms: list, evs: tuple, memo: dict,
                 threads: int, order: list[Instr]) -> list[tuple[Check, _Bytes | None]]:
    """The check(s) of one ``stmatrix``, each with its bytes when it was compared."""
    if seen is None:
        return [(_unchecked(ins, "its operands are not a register vector the tag run visits"), None)]
    found = address_values(evs, ins, memo, threads)
    if isinstance(found, str):
        return [(_unchecked(ins, found), None)]
    addr, how = found
    got = _bytes(seen, addr, reaching_threads(evs[0], ins, memo, threads), geoms, list(range(len(geoms))))
    if isinstance(got, str):
        return [(_unchecked(ins, got), None)]
    check, i = _compare(seen, cp, got)
    check = replace(check, data=dict(check.data, addresses=how))
    if i is None:
        check = _tied(check, _reader(order, ins), cp, evs, memo, threads)
    return [(check, got)] if i is None else [(c, got) for c in _blamed(seen, cp, got, check, i)]


def _reader(order: list[Instr], ins: Instr) -> Instr | None:
    """The TMA store that reads what ``ins`` wrote: the first ``cp.async.bulk.tensor`` from shared to
    global memory after the first ``fence.proxy.async`` that follows ``ins`` (the fence makes the generic
    proxy's writes visible to the bulk copy: PTX ISA 9.7.12.15 ``fence.proxy``)."""
    k = order.index(ins)
    fence = next((j for j in range(k + 1, len(order)) if order[j].opcode.startswith("fence.proxy.async")), None)
    for j in range(fence + 1 if fence is not None else len(order), len(order)):
        p = order[j].parts
        if p[:4] == ("cp", "async", "bulk", "tensor") and "global" in p and p.index("global") < len(p) - 1 \
                and p[p.index("global") + 1].startswith("shared"):
            return order[j]
        if p and p[0] == "stmatrix":
            return None
    return None


def _tied(check: Check, tma: Instr | None, cp: CopyPlan, evs: tuple, memo: dict, threads: int) -> Check:
    """The proved ``check`` with its stage tied to the TMA store that reads it: that store's shared
    address (one value per warpgroup) must be the start of the stage each warpgroup wrote: the start of
    another stage is an error; where no such store, value or stage start is found the stage stays untied
    (said in the message)."""
    found = address_values(evs, tma, memo, threads, 1) if tma is not None else "no TMA store after a fence reads it"
    if isinstance(found, str):
        return replace(check, message=f"{check.message}; the stage is not tied to a TMA store ({found})")
    addr = found[0]
    bad = []
    for wg, stage in check.data["stages"].items():
        vals = set(addr[128 * wg:128 * (wg + 1)].tolist())
        if len(vals) != 1:
            return replace(check, message=f"{check.message}; the stage is not tied: the TMA store at PTX line "
                           f"{tma.line} reads {len(vals)} addresses in warpgroup {wg}")
        got = vals.pop()
        if got not in {(cp.origin or 0) + x for x in cp.stages}:
            return replace(check, message=f"{check.message}; the stage is not tied: the TMA store at PTX line "
                           f"{tma.line} reads byte {got}, the start of no stage of the buffer (the TMA checks' finding)")
        if got != (cp.origin or 0) + stage:
            bad.append((wg, (cp.origin or 0) + stage, got))
    if bad:
        wg, want, got = bad[0]
        return replace(check, status="error", severity="error", message=(
            f"{check.op}: warpgroup {wg} writes the stage at shared byte {want}, but the TMA store that reads it "
            f"(PTX line {tma.line}, after the fence) reads the stage at {got}"), data=dict(check.data, tma_line=tma.line))
    return replace(check, message=f"{check.message}; the TMA store at PTX line {tma.line} reads that stage",
                   data=dict(check.data, tma_line=tma.line))


def copy_checks(mod: CuteModule, ptx: PtxModule, plans: list,
                origin_of: Callable[[str, int], int | None] | None = None) -> list[Check]:
    """One ``smem-copy`` check per ``stmatrix`` of ``ptx`` against the MLIR ``mod`` (its tiled
    MMAs ``plans`` from :func:`verilayout.audit.cute_dsl.mma_plans`; ``origin_of(value, line)``: a shared
    view's byte offset in the allocation): see the module docstring.

    >>> from verilayout.frontends.ptx import parse_ptx
    >>> copy_checks(CuteModule((), {}, {}), parse_ptx(".version 8.7\\n.entry f()\\n{\\nret;\\n}"), [])
    []
    """
    cps = copy_plans(mod, origin_of)
    out: list[Check] = []
    for func in ptx.functions:
        if not any(i.func == func and i.parts and i.parts[0] == "stmatrix" for i in ptx.instrs):
            continue
        names = tuple(ptx.shared) if len(ptx.shared) == 1 else ("global_smem",)
        evs = (PtxValues(ptx, func, smem_names=names), PtxValues(ptx, func, first_iteration=True, smem_names=names))
        out.extend(_function_checks(ptx, func, plans, cps, evs))
    return out
