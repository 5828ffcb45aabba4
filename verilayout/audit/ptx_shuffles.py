"""Register-level conversions checked per lane: a ``ttg.convert_layout`` from an MMA result to an MMA
register operand that Triton lowers inside the warp (``shfl.sync.idx``, ``selp``, ``prmt``, packing
``mov``/``cvt``; Triton's ``lib/Conversion/TritonGPUToLLVM/ConvertLayoutOpToLLVM.cpp``,
``transferWithinWarp``) is run concretely for every thread of the CTA on element tags.

Law (check ``register-permute``): for a TTGIR dot whose register operand (wgmma A, ``mma.sync`` A or B)
is, through elementwise ops, at least one ``convert_layout`` and the ``scf.yield`` of any ``scf.for`` that
carries it (an iter_arg is the previous iteration's yield operand; a loop's result its last), the result of
another dot (of a K-chain of dots matched to one PTX group: that group, whose last MMA per block leaves it):

* tags: after each MMA instruction of the producing dot, byte ``b`` of its ``i``-th accumulator register
  in thread ``(warp, lane)`` holds byte ``b`` of element ``P(block * n + i, lane, warp)`` of the producer's
  result (``P``: its TTGIR layout; ``block``: the accumulator's rank among the group's accumulators in
  order of first appearance, checked against the PTX ISA accumulator fragment: PTX ISA 9.7.14.5.x
  ``mma.m16n8kK`` fragments, 9.7.15.5.1 ``wgmma`` register fragments);
* moves, run in program order with each backward branch (a loop's back edge) taken once, so every loop
  body runs twice and its second run reads, in the registers the loop carries, what the first left there
  (a loop-carried value: the previous iteration's elements, in the same layout): ``mov``, packing ``mov.b32 {a, b}`` and its
  unpack, ``shfl.sync.idx.b32 d, a, L, 31, -1`` (PTX ISA 9.7.8.6 shfl.sync: lane ``L & 31`` of the same
  warp, ``L`` evaluated per thread from ``%tid``), ``selp`` (9.7.7.1, its predicate per thread; with one
  side of no element, e.g. an immediate, it is ``tl.where``: the tagged side's element), ``prmt.b32``
  default mode (9.7.8.7), a packing ``cvt`` (``.f16x2``/``.bf16x2``/``.e4m3x2``/``.e5m2x2`` of two
  ``.f32``: ``a`` to the upper half, 9.7.9.21), and floating-point arithmetic (the element its
  element-holding sources agree on; per half for ``x2`` types) keep or move tags; ``mov`` of an immediate
  is a constant; every other write loses them;
* compare: at the last visit of each MMA instruction of the consuming dot (K-block ``k``: its rank in its accumulator's
  chain; M/N block: from its accumulator's place in the consumer's result layout), each operand element
  must be the one in the PTX ISA fragment's row (A; column for B) and K-group that the operand's TTGIR
  layout gives that slot: the layout's registers of that row, in register order, fill the fragment's
  slots of the row over ``kpack = kWidth * bits / 32`` consecutive K-blocks (1 but for tf32 with
  ``kWidth = 2``, where B is spread alike and the product is unchanged).

Verdict: ``proved`` when every byte of every operand register of every thread matches; an ``error`` at the
line of the instruction that routed a wrong element there (the ``shfl``, or the definition of its lane
index when the element sits in the same register of another lane; the ``selp`` or ``prmt`` that picked the
other input; the MMA when another of its operand registers holds the element), naming the warp, lane,
register and both elements; ``unchecked`` with the reason when a tag is lost on the way (an unmodelled
instruction, a lane index or predicate that is not a function of ``%tid``), when operand registers hold a
compile-time constant (a masked element the compiler folded: which element it stands for is not
decided), or when the converted value's producer is not a dot (nor a dot's yield through the loops) and
the operand's registers come out of lane shuffles. A conversion whose operand registers are loaded
(through shared memory) has no check here: the element checks own it.

Which element a folded constant stands for comes from the TTGIR: an ``arith.select`` whose mask is decided
per element. A mask is decided where it is the same in every program, or where a comparison's two sides
are one program offset (the same scalar SSA value) plus element parts and no sum can wrap around (the
offset's bounds, e.g. an ``i32`` widened to ``i64`` times a constant, leave room for the element part):
then ``p + a R p + b`` iff ``a R b``; an ``and`` with a decided-false side (an ``or`` with a decided-true
side) is decided. An ``i32`` offset such as ``program_id * 64`` may wrap and stays undecided.

>>> frag_a(Frag("mma", 16, 8, 8, 32, 32), np.array([5]), np.array([0]), 3)
(array([9]), array([5]))
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import z3

from verilayout.audit.model import Check
from verilayout.audit.ptx_context import PtxContext
from verilayout.audit.ptx_dots import accumulator_blocks
from verilayout.audit.ptx_smem import thread_values
from verilayout.frontends.ttgir import Module, Op
from verilayout.hw.nvidia.ptx_model import Imm, Instr, PtxModule, Reg, Sym, Vec
from verilayout.prove.ptx_values import PtxValues, reg_width

CHECK = "register-permute"
#: TTGIR dots per PTX MMA family: (TTGIR op, PTX opcode prefix, register operand slots of the PTX instruction)
FAMILIES = (("ttng.warp_group_dot", "wgmma.mma_async", (1,)), ("tt.dot", "mma.sync", (1, 2)))
#: the context's ties (``audit.ptx_dots.DOT_FAMILIES``) of those families
TIES = ("sm_90", "mma.sync")
#: TTGIR ops that keep each element where it is (same shape in and out)
_ELEMENTWISE = ("arith.", "math.", "tt.fp_to_fp", "tt.precise_sqrt", "tt.precise_divf")
#: PTX opcodes whose result is the element of their one tagged source (floating-point arithmetic)
_FLOAT_OPS = frozenset({"add", "sub", "mul", "fma", "mad", "neg", "abs", "min", "max", "ex2", "lg2", "rcp",
                        "sqrt", "rsqrt", "div", "tanh", "sin", "cos", "cvt", "copysign"})
_FLOAT_TYPES = frozenset({"f16", "bf16", "f32", "f64", "tf32", "f16x2", "bf16x2", "f32x2", "e4m3", "e5m2",
                          "e4m3x2", "e5m2x2"})


@dataclass(frozen=True)
class Frag:
    """An MMA instruction's fragment geometry: ``kind`` ``wgmma`` or ``mma`` (``mma.sync``), its shape
    ``m x n x k`` and the element widths of operands A and B in bits.

    >>> Frag("wgmma", 64, 64, 16, 16, 16).k
    16
    """
    kind: str
    m: int
    n: int
    k: int
    a_bits: int
    b_bits: int


def _shape(part: str) -> tuple[int, int, int] | None:
    """``m64n32k8`` -> ``(64, 32, 8)``; None for any other text."""
    if not part.startswith("m") or "n" not in part or "k" not in part:
        return None
    n_at, k_at = part.index("n"), part.index("k")
    m, n, k = part[1:n_at], part[n_at + 1:k_at], part[k_at + 1:]
    return (int(m), int(n), int(k)) if m.isdigit() and n.isdigit() and k.isdigit() else None


def mma_frag(ins: Instr) -> Frag | None:
    """The fragment geometry of a ``wgmma.mma_async`` or ``mma.sync`` instruction (its opcode's shape and
    the last two element types: A then B), or None for another opcode.

    >>> from verilayout.frontends.ptx import make_instr
    >>> mma_frag(make_instr("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", (), 1))
    Frag(kind='mma', m=16, n=8, k=16, a_bits=16, b_bits=16)
    """
    kind = "wgmma" if ins.opcode.startswith("wgmma.mma_async") else "mma" if ins.opcode.startswith("mma.sync") else None
    shape = next((s for s in map(_shape, ins.parts) if s is not None), None)
    types = [p for p in ins.parts if p in _FLOAT_TYPES or p in ("s8", "u8", "e4m3", "e5m2")]
    if kind is None or shape is None or len(types) < 2:
        return None
    a, b = (types[1], types[2]) if kind == "mma" and len(types) >= 4 else (types[-2], types[-1])
    bits = {"tf32": 32, "f32": 32, "f16": 16, "bf16": 16, "s8": 8, "u8": 8, "e4m3": 8, "e5m2": 8}
    if a not in bits or b not in bits:
        return None
    return Frag(kind, *shape, bits[a], bits[b])


def frag_d(f: Frag, lane: np.ndarray, warp: np.ndarray, i: int) -> tuple[np.ndarray, np.ndarray]:
    """(row, col) in the instruction's M x N tile of accumulator element ``i`` of each thread (PTX ISA
    ``mma.m16n8kK`` C/D fragment; ``wgmma`` D fragment: warp ``w % 4`` of the warpgroup owns rows
    ``16 (w % 4) ..``).

    >>> frag_d(Frag("mma", 16, 8, 16, 16, 16), np.array([5]), np.array([0]), 3)
    (array([9]), array([3]))
    """
    row = lane // 4 + 8 * ((i // 2) % 2) + (16 * (warp % 4) if f.kind == "wgmma" else 0)
    return row, 2 * (lane % 4) + i % 2 + 8 * (i // 4)


def frag_a(f: Frag, lane: np.ndarray, warp: np.ndarray, i: int) -> tuple[np.ndarray, np.ndarray]:
    """(row, col) in the M x K tile of operand-A element ``i`` of each thread (PTX ISA ``mma.m16n8k8``
    tf32, ``m16n8k16`` f16/bf16, ``m16n8k32`` 8-bit A fragments; ``wgmma`` A from registers: the same per
    warp, rows offset by ``16 (w % 4)``).

    >>> frag_a(Frag("mma", 16, 8, 16, 16, 16), np.array([5]), np.array([0]), 5)
    (array([1]), array([11]))
    """
    g, t = lane // 4, lane % 4
    base = 16 * (warp % 4) if f.kind == "wgmma" else 0
    if f.a_bits == 32:
        return base + g + 8 * (i % 2), t + 4 * (i // 2)
    per = 32 // f.a_bits                                 # elements per 32-bit register: 2 or 4
    return base + g + 8 * ((i // per) % 2), per * t + i % per + 4 * per * (i // (2 * per))


def frag_b(f: Frag, lane: np.ndarray, i: int) -> tuple[np.ndarray, np.ndarray]:
    """(row, col) in the K x N tile of operand-B element ``i`` of each thread (PTX ISA ``mma.m16n8kK``
    B fragments: tf32 ``b0 (t, g), b1 (t + 4, g)``; f16 ``(2t + i % 2 + 8 (i // 2), g)``; 8-bit
    ``(4t + i % 4 + 16 (i // 4), g)``).

    >>> frag_b(Frag("mma", 16, 8, 8, 32, 32), np.array([5]), 1)
    (array([5]), array([1]))
    """
    g, t = lane // 4, lane % 4
    if f.b_bits == 32:
        return t + 4 * i, g
    per = 32 // f.b_bits
    return per * t + i % per + 4 * per * (i // per), g


def layout_coords(bases: dict, reg: np.ndarray, lane: np.ndarray, warp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(dim0, dim1) of a 2-D linear layout (its ``bases``: ``register``, ``lane``, ``warp``) at each
    (register, lane, warp): the XOR of the bases of the set bits (one table per input dimension).

    >>> layout_coords({"register": [[0, 1]], "lane": [[1, 0]], "warp": []}, np.array([1]), np.array([1]), np.array([0]))
    (array([1]), array([1]))
    """
    r = np.zeros(np.broadcast(reg, lane, warp).shape, dtype=np.int64)
    c = np.zeros_like(r)
    for (tr, tc), x in zip(_tables(bases), (reg, lane, warp)):
        idx = np.asarray(x) & (len(tr) - 1)
        r, c = r ^ tr[idx], c ^ tc[idx]
    return r, c


#: :func:`_tables` answers by the id of the bases dict (kept alive with them, so the id is its own)
_TABLES: dict[int, tuple[dict, tuple]] = {}


def _tables(bases: dict) -> tuple:
    """The :func:`_table` of ``bases``' register, lane and warp bases; once per dict (a run reads one
    layout's bases thousands of times), the table emptied past 1,024 dicts."""
    hit = _TABLES.get(id(bases))
    if hit is None or hit[0] is not bases:
        if len(_TABLES) >= 1024:
            _TABLES.clear()
        hit = _TABLES[id(bases)] = (bases, tuple(_table(tuple(tuple(b) for b in bases.get(dim, [])))
                                                 for dim in ("register", "lane", "warp")))
    return hit[1]


@lru_cache(maxsize=256)
def _table(bases: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Every value of one input dimension's bits mapped to its (dim0, dim1) XOR of bases."""
    tr, tc = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    for b in bases:
        tr = np.concatenate([tr, tr ^ b[0]])
        tc = np.concatenate([tc, tc ^ (b[1] if len(b) > 1 else 0)])
    return tr, tc


# ----- the plan: which dot operands are converted results of which dots -----------------------------

@dataclass(frozen=True)
class Conversion:
    """A dot operand (``operand`` 0 = A, 1 = B of ``consumer``) that is the result of ``producer``
    through elementwise ops and the ``convert_layout`` ops ``converts`` (same shape all the way).

    >>> Conversion.__dataclass_fields__["operand"].type
    'int'
    """
    consumer: Op
    operand: int
    producer: Op
    converts: tuple[Op, ...]
    #: the lines of the ``scf.for`` ops whose iter_arg the value passes (the previous iteration's yield)
    carried: tuple[int, ...] = ()


def _same_shape(op: Op) -> bool:
    out = op.out_types[0].tensor if op.out_types else None
    return out is not None and all(t.tensor is not None and t.tensor.shape == out.shape for t in op.in_types)


def _defining(value: str, tmod: Module) -> Op | None:
    """The op defining ``value`` (``%x#0`` is ``%x``), past ``ttng.warp_group_dot_wait`` (its result ``i``
    is its operand ``i``: the wait hands an async dot's value through)."""
    for _ in range(8):
        name = value[:-2] if value.endswith("#0") else value
        op = tmod.defs.get(name)
        if op is None or op.name != "ttng.warp_group_dot_wait" or name not in op.results:
            return op
        k = op.results.index(name)
        if k >= len(op.operands):
            return None
        value = op.operands[k]
    return None


def _through_loop(value: str, tmod: Module) -> tuple[str, int | None] | None:
    """The value an ``scf.for`` iter_arg or result stands for: the operand of the loop's ``scf.yield`` at its
    position (an iter_arg: the previous iteration's, with the loop's line; a result: the last one, None)."""
    name = value[:-2] if value.endswith("#0") else value
    got = tmod.carried.get(name)
    if got is None or got[1] >= len(got[0].yielded):
        return None
    loop, k = got
    return loop.yielded[k], (loop.op.line if name in loop.args else None)


def _trace(value: str, tmod: Module, converts: tuple[Op, ...], depth: int,
           seen: frozenset = frozenset()) -> tuple[Op, tuple[Op, ...], tuple[int, ...]] | None:
    """The dot whose result ``value`` is (through elementwise ops, converts and the yields of the
    ``scf.for`` loops that carry it), the converts met and the lines of the loops whose iter_arg it passes."""
    op = _defining(value, tmod)
    if depth > 48:
        return None
    if op is None or op.name == "scf.for":
        nxt = _through_loop(value, tmod)
        if nxt is None or nxt[0] in seen:
            return None
        got = _trace(nxt[0], tmod, converts, depth + 1, seen | {nxt[0]})
        return (got[0], got[1], got[2] + ((nxt[1],) if nxt[1] is not None else ())) if got else None
    if op.name in ("ttng.warp_group_dot", "tt.dot"):
        return (op, converts, ()) if converts else None
    if op.name == "ttg.convert_layout" and op.operands:
        return _trace(op.operands[0], tmod, converts + (op,), depth + 1, seen)
    if not op.name.startswith(_ELEMENTWISE) or not _same_shape(op):
        return None
    for v in op.operands:
        got = _trace(v, tmod, converts, depth + 1, seen)
        if got is not None:
            return got
    return None


def _untraced(tmod: Module) -> list[tuple[Op, int, str]]:
    """Dot register operands that are converted (a ``convert_layout`` on the way) from a value that is not a
    dot result through elementwise ops: (dot, operand, what the value is)."""
    out = []
    for op in tmod.ops:
        if op.name not in ("ttng.warp_group_dot", "tt.dot"):
            continue
        for idx in ((0,) if op.name == "ttng.warp_group_dot" else (0, 1)):
            if idx >= len(op.operands) or _trace(op.operands[idx], tmod, (), 0) is not None:
                continue
            src = _source_of(op.operands[idx], tmod)
            if src is not None:
                out.append((op, idx, src))
    return out


def _source_of(value: str, tmod: Module, seen_convert: bool = False, depth: int = 0) -> str | None:
    """What a converted operand comes from (past its converts and elementwise ops, every operand of
    those tried, a loop-carried one first), when a convert is met on the way."""
    op = _defining(value, tmod)
    if op is None or depth > 48:
        return "a loop-carried value (a block argument)" if seen_convert and op is None else None
    if op.name == "ttg.convert_layout" and op.operands:
        return _source_of(op.operands[0], tmod, True, depth + 1)
    if not (op.name.startswith(_ELEMENTWISE) and _same_shape(op) and op.operands):
        return f"the result of {op.name} at TTGIR line {op.line}" if seen_convert else None
    found = [x for x in (_source_of(v, tmod, seen_convert, depth + 1) for v in op.operands) if x]
    return next((x for x in found if "loop-carried" in x), found[0] if found else None)


def conversions(tmod: Module) -> list[Conversion]:
    """Every dot register operand that is a converted dot result (wgmma: A; ``tt.dot``: A and B).

    >>> from verilayout.frontends.ttgir import parse_module
    >>> conversions(parse_module("module {\\n}\\n"))
    []
    """
    out = []
    for op in tmod.ops:
        if op.name not in ("ttng.warp_group_dot", "tt.dot"):
            continue
        for idx in ((0,) if op.name == "ttng.warp_group_dot" else (0, 1)):
            got = _trace(op.operands[idx], tmod, (), 0) if idx < len(op.operands) else None
            if got is not None:
                out.append(Conversion(op, idx, got[0], got[1], tuple(sorted(set(got[2])))))
    return out


# ----- element tags and the per-thread run ----------------------------------------------------------

@dataclass(frozen=True)
class Val:
    """What a register holds in every thread: ``tags[t, b]`` = ``(element + 1) * 8 + byte`` of byte ``b``
    (0: no known element); ``ins`` the instruction that wrote it (None: an MMA accumulator), ``srcs`` the
    values it read (None: untagged), ``route`` per thread (``shfl``: the source thread, ``selp``: the
    predicate, ``prmt``: the selector), ``lost`` why some bytes are unknown (the first loss on the way).

    >>> Val(np.zeros((1, 4), dtype=np.int64), None, ()).lost is None
    True
    """
    tags: np.ndarray
    ins: Instr | None
    srcs: tuple
    route: Any = None
    lost: str | None = None


def _elements(tags: np.ndarray) -> np.ndarray:
    """The one element each thread's bytes belong to (``tags // 8``), 0 where the bytes are unknown or
    of several elements."""
    e = tags // 8
    one = (e == e[:, :1]).all(axis=1) & (e[:, 0] > 0)
    return np.where(one, e[:, 0], 0)


def _fill(elem: np.ndarray, nbytes: int) -> np.ndarray:
    """Bytes ``0 .. nbytes-1`` of element ``elem - 1`` per thread (0 stays 0)."""
    b = np.arange(nbytes)[None, :]
    return np.where(elem[:, None] > 0, elem[:, None] * 8 + b, 0)


def _nbytes(name: str) -> int:
    return max(reg_width(name) // 8, 1)


@dataclass
class _Run:
    """The tag state of one function's run (mutable: the registers' current values)."""
    ev: PtxValues
    threads: int
    regs: dict = field(default_factory=dict)
    memo: dict = field(default_factory=dict)

    @property
    def tid(self) -> np.ndarray:
        return np.arange(self.threads)

    def val(self, op: Any) -> Val | None:
        return self.regs.get(op.name) if isinstance(op, Reg) else None

    def per_thread(self, op: Any, at: Instr, pred: bool = False) -> np.ndarray | None:
        """An operand's value in every thread (an immediate, or a function of ``%tid``); None if not."""
        if isinstance(op, Imm):
            return np.full(self.threads, op.value, dtype=np.int64)
        if not isinstance(op, Reg):
            return None
        try:
            e = self.ev.pred(op.name) if pred else self.ev.operand(op, 32, at=at)
            if e is None:
                return None
            return np.array(thread_values(e, self.memo, self.threads), dtype=np.int64)
        except (ValueError, AttributeError, TypeError, KeyError, z3.Z3Exception):
            return None


_NO_WRITE = ("st", "bar", "bra", "fence", "ret", "exit", "membar", "red", "cp", "mbarrier", "prefetch", "trap",
             "barrier", "stmatrix", "griddepcontrol", "setp", "wgmma.fence", "wgmma.commit", "tcgen05")


def _dests(ins: Instr) -> list[str]:
    """The registers ``ins`` writes (an MMA: its accumulator)."""
    if not ins.args or ins.opcode.startswith(_NO_WRITE) and not ins.opcode.startswith("wgmma.mma_async"):
        return []
    d = ins.args[0]
    items = d.items if isinstance(d, Vec) else (d,)
    return [x.name for x in items if isinstance(x, Reg) and not x.name.startswith("%p")]


def _sources(ins: Instr) -> list:
    out = []
    for a in ins.args[1:]:
        out.extend(a.items if isinstance(a, Vec) else (a,))
    return out


def _result(tags: np.ndarray, ins: Instr, srcs: tuple, route: Any = None) -> Val:
    """A written value; ``lost`` inherited from a source, or this instruction when it dropped tags."""
    had = any(s is not None and (s.tags > 0).any() for s in srcs)
    inherited = next((s.lost for s in srcs if s is not None and s.lost), None)
    lost = inherited or (f"{ins.opcode} at PTX line {ins.line}" if had and (tags == 0).any() else None)
    return Val(tags, ins, srcs, route, lost)


def _width(tags: np.ndarray | None, nbytes: int, threads: int) -> np.ndarray:
    if tags is None:
        return np.zeros((threads, nbytes), dtype=np.int64)
    if tags.shape[1] >= nbytes:
        return tags[:, :nbytes]
    return np.concatenate([tags, np.zeros((threads, nbytes - tags.shape[1]), dtype=np.int64)], axis=1)


def _mov(run: _Run, ins: Instr) -> dict:
    """``mov``: a copy, a pack ``mov.b32 d, {a, b}`` (first item lowest) or an unpack ``{a, b}, s``."""
    d, s = ins.args[0], ins.args[1]
    n = run.threads
    if isinstance(s, Vec):
        vals = tuple(run.val(x) for x in s.items)
        parts = [_width(v.tags if v else None, _nbytes(x.name) if isinstance(x, Reg) else 0, n)
                 for v, x in zip(vals, s.items)]
        return {d.name: _result(np.concatenate(parts, axis=1), ins, vals)} if isinstance(d, Reg) else {}
    v = run.val(s)
    if isinstance(d, Vec):
        out, at = {}, 0
        for x in d.items:
            w = _nbytes(x.name) if isinstance(x, Reg) else 0
            if isinstance(x, Reg) and v is not None:
                out[x.name] = _result(_width(v.tags[:, at:], w, n), ins, (v,), at)
            at += w
        return out
    return {d.name: _result(_width(v.tags, _nbytes(d.name), n), ins, (v,))} if v is not None else {}


def _shfl(run: _Run, ins: Instr) -> dict:
    """``shfl.sync.idx.b32 d, a, L, 31, -1``: thread ``t`` reads ``a`` of thread ``(t & ~31) | (L & 31)``."""
    d, a = ins.args[0], run.val(ins.args[1])
    if a is None or not isinstance(d, Reg):
        return {}
    c, mask = (x.value if isinstance(x, Imm) else None for x in ins.args[3:5])
    lane = run.per_thread(ins.args[2], ins)
    if ins.parts[:3] != ("shfl", "sync", "idx") or c != 31 or mask is None or mask % (1 << 32) != 0xFFFFFFFF \
            or lane is None:
        why = f"{ins.opcode} at PTX line {ins.line}: " + ("the lane index is not a function of %tid"
                                                         if lane is None else "not a full-warp idx shuffle")
        return {d.name: Val(np.zeros_like(a.tags), ins, (a,), None, why)}
    src = (run.tid & ~31) | (lane & 31)
    return {d.name: _result(a.tags[src], ins, (a,), src)}


def _selp(run: _Run, ins: Instr) -> dict:
    """``selp d, a, b, p``: ``a`` where ``p`` holds, else ``b``; with one side untagged (a constant, a
    value of no MMA) an elementwise select (``tl.where``): the tagged side's element."""
    d, a, b = ins.args[0], run.val(ins.args[1]), run.val(ins.args[2])
    if (a is None or not _carries(a)) != (b is None or not _carries(b)):   # a lost element is not a scalar
        return _arith(run, ins)                         # where(mask, x, c): x's element
    p = run.per_thread(ins.args[3], ins, pred=True)
    n, w = run.threads, _nbytes(d.name)
    if p is None:                                       # both tagged: the element they agree on
        return _arith(run, ins)
    ta, tb = _width(a.tags if a else None, w, n), _width(b.tags if b else None, w, n)
    return {d.name: _result(np.where(p[:, None] != 0, ta, tb), ins, (a, b), p != 0)}


def _prmt(run: _Run, ins: Instr) -> dict:
    """``prmt.b32 d, a, b, c`` (default mode): byte ``k`` of ``d`` is byte ``c[4k+2:4k]`` of ``{b, a}``
    (``a`` bytes 0-3, ``b`` bytes 4-7); a selector with bit ``4k+3`` set replicates a sign: no element."""
    d, a, b = ins.args[0], run.val(ins.args[1]), run.val(ins.args[2])
    sel = run.per_thread(ins.args[3], ins)
    n = run.threads
    if ins.parts != ("prmt", "b32") or sel is None:
        why = f"{ins.opcode} at PTX line {ins.line}: " + ("a mode other than the default" if sel is not None
                                                         else "the selector is not a function of %tid")
        return {d.name: Val(np.zeros((n, 4), dtype=np.int64), ins, (a, b), None, why)}
    both = np.concatenate([_width(a.tags if a else None, 4, n), _width(b.tags if b else None, 4, n)], axis=1)
    out = np.stack([np.where((sel >> (4 * k + 3)) & 1, 0, both[run.tid, (sel >> (4 * k)) & 7])
                    for k in range(4)], axis=1)
    return {d.name: _result(out, ins, (a, b), sel)}


def _arith(run: _Run, ins: Instr) -> dict:
    """Floating-point arithmetic and conversions: the result is the element its tagged sources agree on
    (per half for ``.f16x2``/``.bf16x2``); a packing ``cvt`` (``.f16x2``, ``.bf16x2``, ``.e4m3x2``,
    ``.e5m2x2`` from two ``.f32``: PTX ISA 9.7.9.21 cvt) puts ``a`` in the upper half of ``d``, ``b`` in the lower."""
    d = ins.args[0]
    srcs = tuple(run.val(x) for x in ins.args[1:])
    n, w = run.threads, _nbytes(d.name)
    if ins.head == "cvt" and any(p.endswith("x2") for p in ins.parts) and len(srcs) == 2:
        hi, lo = (_elements(s.tags) if s is not None else np.zeros(n, dtype=np.int64) for s in srcs)
        return {d.name: _result(np.concatenate([_fill(lo, w // 2), _fill(hi, w // 2)], axis=1), ins, srcs)}
    halves = 2 if any(p in ("f16x2", "bf16x2", "f32x2") for p in ins.parts) else 1
    out = []
    for h in range(halves):
        elems = [_elements(s.tags[:, h * s.tags.shape[1] // halves:(h + 1) * s.tags.shape[1] // halves])
                 for s in srcs if _has_elements(s)]        # each source's element in its own width
        if not elems:
            return {}
        agree = np.all([e == elems[0] for e in elems], axis=0)
        out.append(_fill(np.where(agree, elems[0], 0), w // halves))
    return {d.name: _result(np.concatenate(out, axis=1), ins, srcs)}


def _is_arith(ins: Instr) -> bool:
    return ins.head in _FLOAT_OPS and any(p in _FLOAT_TYPES for p in ins.parts[1:])


#: The tag of a byte of a compile-time constant (``mov.b32 %r, 0``) is ``CONSTANT - value`` (``value`` the
#: byte's 0..255): no element, routed like one, its value kept.
CONSTANT = -1


def constant_tags(value: int, nbytes: int, threads: int) -> np.ndarray:
    """The tags of a constant ``value`` (two's complement, lowest byte first) in every thread.

    >>> constant_tags(0x3F80, 2, 1).tolist()
    [[-129, -64]]
    """
    return np.tile(np.array([CONSTANT - ((value >> (8 * k)) & 0xFF) for k in range(nbytes)], dtype=np.int64),
                   (threads, 1))


def _constant_move(ins: Instr) -> bool:
    """``mov`` of an immediate into a 32-bit register (the zeros of a masked or empty element)."""
    return ins.head == "mov" and len(ins.args) == 2 and isinstance(ins.args[1], Imm) and \
        isinstance(ins.args[0], Reg) and _nbytes(ins.args[0].name) == 4


def _has_elements(v: Val | None) -> bool:
    """Whether ``v`` holds a byte of some element (a value of no element, a reduction or a constant, is a
    scalar operand of elementwise arithmetic)."""
    return v is not None and bool((v.tags > 0).any())


def _carries(v: Val) -> bool:
    """Whether ``v`` holds a byte of an element, or lost one on the way (a reason to keep)."""
    return bool(v.lost) or bool((v.tags > 0).any())


def _step(run: _Run, ins: Instr) -> None:
    """Run ``ins`` on the tags: its destinations get the values the moves above give them, or lose
    their tags (what an unmodelled instruction writes is no known element)."""
    dests = _dests(ins)
    if not dests:
        return
    srcs = [run.val(x) for x in _sources(ins)]
    if _constant_move(ins):
        run.regs[dests[0]] = Val(constant_tags(ins.args[1].value, _nbytes(dests[0]), run.threads), ins, ())
        return
    moves = ins.head in ("mov", "shfl", "selp", "prmt")
    if all(s is None or not (moves or _carries(s)) for s in srcs):
        for x in dests:
            run.regs.pop(x, None)
        return
    got: dict = {}
    if ins.head == "mov" and len(ins.args) == 2:
        got = _mov(run, ins)
    elif ins.head == "shfl" and len(ins.args) == 5:
        got = _shfl(run, ins)
    elif ins.head == "selp" and len(ins.args) == 4 and isinstance(ins.args[0], Reg):
        got = _selp(run, ins)
    elif ins.head == "prmt" and len(ins.args) == 4 and isinstance(ins.args[0], Reg):
        got = _prmt(run, ins)
    elif _is_arith(ins) and isinstance(ins.args[0], Reg) and not ins.opcode.startswith(("wgmma", "mma")):
        got = _arith(run, ins)
    lost = next((s.lost for s in srcs if s is not None and s.lost), None) or f"{ins.opcode} at PTX line {ins.line}"
    carrying = any(s is not None and _carries(s) for s in srcs)
    for x in dests:
        v = got.get(x)
        if v is None and not carrying:
            run.regs.pop(x, None)
            continue
        run.regs[x] = v if v is not None else Val(np.zeros((run.threads, _nbytes(x)), dtype=np.int64), ins,
                                                  tuple(srcs), None, lost)


# ----- MMA fragments on the tags: where producers put elements, where consumers want them ----------

def block_origin(bases: dict, f: Frag, block: int, nd: int, tid: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Per thread, the (row, col) origin of accumulator block ``block`` (registers ``block * nd ..``
    of the dot's result layout ``bases``), when each of its ``nd`` registers holds what the PTX ISA D
    fragment puts there plus that one origin; else None (the registers do not follow the fragment).

    >>> b = {"register": [[0, 1], [8, 0]], "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], "warp": []}
    >>> [x.tolist() for x in block_origin(b, Frag("mma", 16, 8, 8, 32, 32), 0, 4, np.arange(32))][0][:3]
    [0, 0, 0]
    """
    if (block + 1) * nd > 1 << len(bases.get("register", [])):
        return None
    lane, warp = tid % 32, tid // 32
    origin = None
    for i in range(nd):
        r, c = layout_coords(bases, np.full_like(tid, block * nd + i), lane, warp)
        fr, fc = frag_d(f, lane, warp, i)
        o = (r - fr, c - fc)
        if origin is not None and not ((o[0] == origin[0]).all() and (o[1] == origin[1]).all()):
            return None
        origin = o
    return origin


def _acc_size(f: Frag, ins: Instr) -> int | None:
    """The accumulator's element count per thread (``n / 2`` for wgmma, 4 for ``mma.sync``) when its
    registers hold them in order: one 32-bit element (``.f32``/``.s32``) or a packed pair of ``.f16``
    (the first in the low half) per register; else None."""
    d = ins.args[0] if ins.args else None
    nd = len(d.items) if isinstance(d, Vec) else 0
    want = f.n // 2 if f.kind == "wgmma" else 4
    dtype = next((p for p in ins.parts if p in _FLOAT_TYPES or p == "s32"), None)
    per = 2 if dtype == "f16" else 1 if dtype in ("f32", "s32") else 0
    return want if per and nd * per == want else None


def _acc_per_reg(f: Frag, ins: Instr) -> int:
    n = _acc_size(f, ins) or 0
    return n // max(len(ins.args[0].items), 1) if n else 1


@dataclass(frozen=True)
class Side:
    """One dot's view of the run: its result layout's bases and shape, the element numbering of a
    producer (``first``: the id of element (0, 0), ids ``first + row * cols + col``)."""
    bases: dict
    shape: tuple
    first: int = 1


def _producer_tags(side: Side, f: Frag, ins: Instr, block: int, tid: np.ndarray) -> dict[str, Val] | None:
    """The tags an MMA instruction of the producing dot leaves in its accumulator (block ``block``)."""
    nd = _acc_size(f, ins)
    if nd is None or block_origin(side.bases, f, block, nd, tid) is None:
        return None
    lane, warp = tid % 32, tid // 32
    per = _acc_per_reg(f, ins)
    out = {}
    for q, x in enumerate(ins.args[0].items):
        parts = []
        for h in range(per):
            r, c = layout_coords(side.bases, np.full_like(tid, block * nd + q * per + h), lane, warp)
            parts.append(_fill(side.first + r * side.shape[1] + c, 4 // per))
        out[x.name] = Val(np.concatenate(parts, axis=1), None, ())
    return out


def isa_element(f: Frag, operand: int, origin: tuple, k: int, tid: np.ndarray, i: int) -> tuple[np.ndarray, np.ndarray]:
    """(row, col) in the operand's tensor of element ``i`` of operand ``operand`` (0 = A, 1 = B) of an MMA
    instruction at K-block ``k`` of the accumulator block at ``origin``, per thread (PTX ISA fragments).

    >>> isa_element(Frag("mma", 16, 8, 8, 32, 32), 0, (np.array([16]), np.array([0])), 2, np.array([5]), 3)
    (array([25]), array([21]))
    """
    lane, warp = tid % 32, tid // 32
    if operand == 0:
        fr, fc = frag_a(f, lane, warp, i)
        return origin[0] + fr, k * f.k + fc
    fr, fc = frag_b(f, lane, i)
    return k * f.k + fr, origin[1] + fc


@lru_cache(maxsize=4096)
def _first_thread(f: Frag, operand: int, origin: tuple[int, int], k: int, t: int, count: int) -> tuple:
    """The (row, col) of each of the ``count`` operand elements of thread ``t`` (:func:`isa_element`)."""
    o = (np.array([origin[0]]), np.array([origin[1]]))
    return tuple((int(r[0]), int(c[0])) for r, c in (isa_element(f, operand, o, k, np.array([t]), j)
                                                     for j in range(count)))


def _dot_op_element(dst: dict, f: Frag, operand: int, origin: tuple, k: int, tid: np.ndarray, i: int,
                   count: int, kpack: int = 1) -> tuple[np.ndarray, np.ndarray] | None:
    """The element the operand's TTGIR layout ``dst`` (bases) puts at element ``i`` of ``count`` of the
    instruction at K-block ``k``. Triton fills the fragment's slots of one row (A; column for B) from the
    layout's registers of that row in register order, over a group of ``kpack`` K-blocks (``kpack =
    kWidth * bits / 32``: a thread's ``kWidth`` consecutive K elements are spread over ``kpack``
    instructions, tf32 with ``kWidth = 2``; B is spread alike, so the product is unchanged): slot rank
    ``s`` of the ``j``-th instruction of the group takes the ``(s * kpack + j)``-th register. Rows and the
    K-group must be the fragment's, else None."""
    line = 0 if operand == 0 else 1
    key = _first_thread(f, operand, (int(origin[0][0]), int(origin[1][0])), k, int(tid[0]), count)
    same = [j for j in range(count) if key[j][line] == key[i][line]]
    regs = np.arange(1 << len(dst.get("register", [])))
    rows, cols = layout_coords(dst, regs, np.zeros_like(regs), np.full_like(regs, tid[0] // 32))
    along, kdim = (rows, cols) if operand == 0 else (cols, rows)
    span = f.k * kpack
    cand = np.flatnonzero((along == key[i][line]) & (kdim // span == k // kpack))
    if len(cand) != len(same) * kpack:
        return None
    r, c = layout_coords(dst, np.full_like(tid, cand[same.index(i) * kpack + k % kpack]), tid % 32, tid // 32)
    want = isa_element(f, operand, origin, k, tid, i)
    ok = (r == want[0]) & (c // span == k // kpack) if operand == 0 else (c == want[1]) & (r // span == k // kpack)
    return (r, c) if ok.all() else None


def _wanted(side: Side, dst: dict | None, f: Frag, operand: int, origin: tuple, k: int, tid: np.ndarray, q: int,
           nregs: int, kwidth: int = 0) -> np.ndarray | None:
    """The tags operand register ``q`` of ``nregs`` (0 = A, 1 = B) of an MMA instruction at K-block ``k`` of
    the block at ``origin`` must hold in each thread, elements numbered as the producer's: the PTX ISA
    fragment's rows (A; columns for B) and K-block, the column (row) inside the K-block as the operand's
    layout ``dst`` orders it (:func:`_dot_op_element`); None when the layout does not fit the fragment."""
    bits = f.a_bits if operand == 0 else f.b_bits
    per = 32 // bits
    kpack = max(1, kwidth * bits // 32)
    cols = []
    for h in range(per):
        got = _dot_op_element(dst, f, operand, origin, k, tid, q * per + h, nregs * per, kpack) if dst is not None \
            else isa_element(f, operand, origin, k, tid, q * per + h)
        if got is None:
            return None
        r, c = got
        ok = (r >= 0) & (r < side.shape[0]) & (c >= 0) & (c < side.shape[1])
        cols.append(_fill(np.where(ok, side.first + r * side.shape[1] + c, 0), bits // 8))
    return np.concatenate(cols, axis=1)


# ----- masked elements: the constant the TTGIR gives an element --------------------------------------

#: element-wise integer/boolean TTGIR ops the mask evaluation runs (numpy on the whole tensor)
_INT_OPS = {"arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply, "arith.andi": np.bitwise_and,
            "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor, "arith.addf": np.add, "arith.subf": np.subtract,
            "arith.mulf": np.multiply}
#: ``arith.cmpf`` predicates on the ordered values these masks hold (no NaN: ranges converted to float)
_CMPF = {"oeq": "eq", "ueq": "eq", "one": "ne", "une": "ne", "olt": "slt", "ult": "slt", "ole": "sle", "ule": "sle",
         "ogt": "sgt", "ugt": "sgt", "oge": "sge", "uge": "sge"}
_CMP = {"eq": np.equal, "ne": np.not_equal, "slt": np.less, "sle": np.less_equal, "sgt": np.greater,
        "sge": np.greater_equal, "ult": np.less, "ule": np.less_equal, "ugt": np.greater, "uge": np.greater_equal}
#: float ops whose result on constants is computed (the rest of the float ops: an unknown value)
_FLOAT_FOLD = {"arith.addf": np.add, "arith.subf": np.subtract, "arith.mulf": np.multiply, "arith.divf": np.divide,
               "arith.maxnumf": np.fmax, "arith.minnumf": np.fmin, "arith.maximumf": np.maximum,
               "arith.minimumf": np.minimum, "math.exp": np.exp, "math.exp2": np.exp2, "arith.negf": np.negative}
_VALUE_KEEPING = ("arith.truncf", "arith.extf", "tt.fp_to_fp", "ttg.convert_layout")


def _shape_of(op: Op) -> tuple | None:
    """The op's result shape: () for a scalar type, None for a tensor type that does not read."""
    t = op.out_types[0].tensor if op.out_types else None
    return tuple(t.shape) if t is not None else None if op.result_types and "<" in op.result_types[0] else ()


def _ints(value: str, tmod: Module, depth: int = 0) -> np.ndarray | None:
    """An integer, boolean or float TTGIR value as a numpy array of its shape when it is the same in every
    program (ranges, constants, their element-wise arithmetic, int-to-float casts and comparisons); None
    when it is not decided."""
    op = _defining(value, tmod)
    if op is None or depth > 32:
        return None
    shape = _shape_of(op)
    const = op.scalar
    if shape is None:
        return None
    if const is not None:
        return np.full(shape, const, dtype=np.float64 if isinstance(const, float) else np.int64)
    args = [_ints(v, tmod, depth + 1) for v in op.operands[:3]]
    if op.name == "tt.make_range":
        a = op.attributes
        return np.arange(int(a.get("start", 0)), int(a.get("end", 0)), dtype=np.int64)
    if not op.operands or args[0] is None or (op.name == "arith.cmpi" and args[1] is None):
        return _offset_compare(op, tmod, depth) if op.name == "arith.cmpi" and len(op.operands) == 2 else None
    if op.name == "tt.expand_dims":
        return np.expand_dims(args[0], int(op.attributes.get("axis", 0)))
    if op.name in ("tt.broadcast", "tt.splat"):
        return np.broadcast_to(args[0], shape)
    if op.name in ("ttg.convert_layout", "arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast"):
        return args[0]
    if op.name in ("arith.sitofp", "arith.uitofp"):
        return args[0].astype(np.float64)
    if len(args) > 1 and args[1] is not None and op.name in _INT_OPS:
        return _INT_OPS[op.name](args[0], args[1])
    pred = _CMPF.get(op.predicate or "") if op.name == "arith.cmpf" else op.predicate
    if pred in _CMP and len(args) > 1 and args[1] is not None:
        a, b = (x.astype(np.uint64) for x in args[:2]) if pred.startswith("u") else args[:2]   # sign-extended:
        return _CMP[pred](a, b).astype(np.int64)                                              # order kept
    return None


# ----- program offset + element part: comparisons where the program's offset cancels ------------------

@dataclass(frozen=True)
class Offset:
    """An integer TTGIR tensor whose every element is, exactly (no wrap-around), the value of the scalar
    ``prog`` (one SSA value, so the same number in every element of one program) plus ``elem``; ``lo``/``hi``
    bound ``prog`` in every program."""
    prog: str
    elem: np.ndarray
    lo: int
    hi: int


def _int_bits(t: Any) -> int | None:
    """The width of an integer :class:`~verilayout.frontends.ttgir.Type` (``i64``, ``tensor<64xi32, ...>``);
    None for other types."""
    elem = t.tensor.elem if t.tensor is not None else t.value
    return int(elem[1:]) if isinstance(elem, str) and elem[:1] == "i" and elem[1:].isdigit() else None


def _signed(bits: int) -> tuple[int, int]:
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def scalar_range(value: str, tmod: Module, depth: int = 0) -> tuple[int, int] | None:
    """Bounds ``(lo, hi)`` of a scalar integer TTGIR value over all programs: a constant is itself; ``extsi``
    keeps its source's bounds (its source's signed type when nothing more is known); ``addi``/``subi``/``muli`` combine bounds when every result in them fits the
    signed type (then no operation wrapped); any other value is bounded by its signed type.

    >>> from verilayout.frontends.ttgir import parse_module
    >>> scalar_range("%c", parse_module("module {\\n  %c = arith.constant 5 : i32\\n}"))
    (5, 5)
    """
    op = _defining(value, tmod)
    bits = _int_bits(op.out_types[0]) if op is not None and op.out_types else None
    if op is None or bits is None or _shape_of(op) != ():
        return None
    if isinstance(op.scalar, int) and not isinstance(op.scalar, bool):
        return op.scalar, op.scalar
    full = _signed(bits)
    if depth > 16 or op.name not in ("arith.extsi", "arith.addi", "arith.subi", "arith.muli"):
        return full
    got = [scalar_range(v, tmod, depth + 1) for v in op.operands[:2]]
    source = _int_bits(op.in_types[0]) if op.name == "arith.extsi" and op.in_types else None
    if source is not None and got and got[0] is None:
        got[0] = _signed(source)                       # a value whose op prints no result type (a load)
    if any(g is None for g in got) or (op.name != "arith.extsi" and len(got) < 2):
        return full
    a = got[0]
    if op.name != "arith.extsi":
        b = got[1]
        if op.name == "arith.subi":
            b = (-b[1], -b[0])
        ends = [x * y for x in a for y in b] if op.name == "arith.muli" else [a[0] + b[0], a[1] + b[1]]
        a = (min(ends), max(ends))
    return a if full[0] <= a[0] and a[1] <= full[1] else full


def _exact(prog: str, elem: np.ndarray, bounds: tuple[int, int], bits: int | None) -> Offset | None:
    """The :class:`Offset` when ``prog + elem`` cannot leave the signed ``bits`` range, else None."""
    if bits is None or elem.size == 0:
        return None
    lo, hi = _signed(bits)
    ok = bounds[0] + int(elem.min()) >= lo and bounds[1] + int(elem.max()) <= hi
    return Offset(prog, elem, bounds[0], bounds[1]) if ok else None


def program_offset(value: str, tmod: Module, depth: int = 0) -> Offset | None:
    """:class:`Offset` of an integer TTGIR value: a scalar that is not a constant is its own program part;
    ``splat``/``expand_dims``/``broadcast``/``convert_layout``/``extsi`` keep it; ``addi``/``subi`` of it and
    a tensor the same in every program (:func:`_ints`) add to the element part when no sum can wrap
    (:func:`scalar_range`); None otherwise.

    >>> from verilayout.frontends.ttgir import parse_module
    >>> program_offset("%x", parse_module("module {\\n}")) is None
    True
    """
    op = _defining(value, tmod)
    if op is None or depth > 32 or not op.out_types:
        return None
    shape, bits = _shape_of(op), _int_bits(op.out_types[0])
    if shape == () and op.scalar is None and op.name not in ("tt.splat",):
        got = scalar_range(value, tmod)
        return Offset(value, np.zeros((), dtype=np.int64), *got) if got is not None else None
    if shape is None or not op.operands:
        return None
    if op.name in ("tt.splat", "tt.broadcast", "tt.expand_dims", "ttg.convert_layout", "arith.extsi"):
        a = program_offset(op.operands[0], tmod, depth + 1)
        if a is None:
            return None
        e = np.expand_dims(a.elem, int(op.attributes.get("axis", 0))) if op.name == "tt.expand_dims" else a.elem
        e = np.broadcast_to(e, shape) if op.name in ("tt.splat", "tt.broadcast") else e
        return Offset(a.prog, e, a.lo, a.hi)
    return _offset_sum(op, tmod, shape, bits, depth) if op.name in ("arith.addi", "arith.subi") else None


def _offset_sum(op: Op, tmod: Module, shape: tuple, bits: int | None, depth: int) -> Offset | None:
    """``addi``/``subi`` of an :class:`Offset` and a tensor the same in every program (either order for addi)."""
    x, y = op.operands[:2]
    a, b = program_offset(x, tmod, depth + 1), _ints(y, tmod, depth + 1)
    if (a is None or b is None) and op.name == "arith.addi":
        a, b = program_offset(y, tmod, depth + 1), _ints(x, tmod, depth + 1)
    elif a is None and op.name == "arith.subi":
        return None
    if a is None or b is None or b.dtype.kind not in "iu":
        return None
    return _exact(a.prog, np.broadcast_to(a.elem + (b if op.name == "arith.addi" else -b), shape),
                  (a.lo, a.hi), bits)


def _offset_compare(op: Op, tmod: Module, depth: int) -> np.ndarray | None:
    """An ``arith.cmpi`` of two :class:`Offset` values with the same program part, decided per element.

    Law: both sides are exactly ``p + a`` and ``p + b`` (no wrap-around, :func:`program_offset`) with the
    same ``p`` in one program, so signed ``p + a  R  p + b`` iff ``a R b`` and ``eq``/``ne`` likewise; an
    unsigned predicate is decided the same way when both sides are non-negative in every program."""
    pred = op.predicate or ""
    a, b = (program_offset(v, tmod, depth + 1) for v in op.operands[:2])
    if pred not in _CMP or a is None or b is None or a.prog != b.prog:
        return None
    if pred.startswith("u") and (a.lo + int(a.elem.min()) < 0 or b.lo + int(b.elem.min()) < 0):
        return None
    return _CMP[pred](a.elem, b.elem).astype(np.int64)


def partial_mask(value: str, tmod: Module, depth: int = 0) -> tuple[np.ndarray, np.ndarray] | None:
    """``(known, true)`` boolean arrays of an ``i1`` TTGIR tensor: where ``known`` the element is ``true`` in
    every program. Law: a value :func:`_ints` decides is known everywhere; ``a & b`` is known false where
    either is known false and known where both are known; ``a | b`` dually with true; ``expand_dims``,
    ``broadcast`` and ``convert_layout`` move both arrays; None when nothing is known.

    >>> from verilayout.frontends.ttgir import parse_module
    >>> partial_mask("%x", parse_module("module {\\n}")) is None
    True
    """
    op = _defining(value, tmod)
    if op is None or depth > 32:
        return None
    whole = _ints(value, tmod)
    if whole is not None:
        return np.ones(whole.shape, dtype=bool), whole != 0
    shape = _shape_of(op)
    if not shape or not op.operands:
        return None
    if op.name in ("tt.expand_dims", "tt.broadcast", "ttg.convert_layout"):
        got = partial_mask(op.operands[0], tmod, depth + 1)
        if got is None:
            return None
        if op.name == "tt.expand_dims":
            got = tuple(np.expand_dims(g, int(op.attributes.get("axis", 0))) for g in got)
        return tuple(np.broadcast_to(g, shape) for g in got) if op.name == "tt.broadcast" else got
    if op.name in ("arith.andi", "arith.ori") and len(op.operands) == 2:
        return _combine(op.name == "arith.andi", shape, [partial_mask(v, tmod, depth + 1) for v in op.operands])
    return None


def _combine(conj: bool, shape: tuple, parts: list) -> tuple[np.ndarray, np.ndarray] | None:
    """``and`` (``conj``) or ``or`` of two partial masks (None: nothing known)."""
    none = (np.zeros(shape, dtype=bool), np.zeros(shape, dtype=bool))
    (ka, va), (kb, vb) = (p if p is not None and p[0].shape == shape else none for p in parts)
    dominant = (ka & (va != conj)) | (kb & (vb != conj))          # a known false (and) / true (or) side
    known = (ka & kb) | dominant
    value = np.where(dominant, not conj, (va & vb) if conj else (va | vb))
    return (known, value) if known.any() else None


@dataclass(frozen=True)
class Values:
    """What the TTGIR gives each element of a converted value: ``code`` 0 the producer's element (through
    element-wise ops), 1 the constant ``const`` (a masked element: a select's constant side, a constant
    tensor), 2 not decided; ``why`` names the select or op that decided it."""
    code: np.ndarray
    const: np.ndarray
    why: str


def _unknown(shape: tuple, why: str) -> Values:
    return Values(np.full(shape, 2, dtype=np.int8), np.full(shape, np.nan), why)


def element_values(value: str, tmod: Module, shape: tuple, depth: int = 0) -> Values:
    """:class:`Values` of a float TTGIR value over ``shape``: a dot is its elements; an ``arith.select`` with
    a mask the same in every program (:func:`_ints`) picks per element; constants are constants; value-
    keeping casts and converts pass through; other float ops fold constants or keep the element.

    >>> from verilayout.frontends.ttgir import parse_module
    >>> element_values("%x", parse_module("module {\\n}"), (2, 2)).code.tolist()
    [[2, 2], [2, 2]]
    """
    op = _defining(value, tmod)
    if op is None or depth > 32:
        return _unknown(shape, f"the value {value} is not an op's result")
    if op.name in ("ttng.warp_group_dot", "tt.dot"):
        return Values(np.zeros(shape, dtype=np.int8), np.full(shape, np.nan), "")
    const = op.scalar
    if isinstance(const, float):
        return Values(np.ones(shape, dtype=np.int8), np.full(shape, const), f"the constant at TTGIR line {op.line}")
    args = [element_values(v, tmod, shape, depth + 1) for v in op.operands[:3]] \
        if op.name.startswith(_ELEMENTWISE + _VALUE_KEEPING) else []
    if op.name in _VALUE_KEEPING and args:
        return args[0]
    if op.name == "arith.select" and len(args) == 3:
        return _select(op, tmod, shape, args)
    if op.name in _FLOAT_FOLD and args:
        return _fold(op, args)
    return _unknown(shape, f"the {op.name} at TTGIR line {op.line}")


def _select(op: Op, tmod: Module, shape: tuple, args: list[Values]) -> Values:
    got = partial_mask(op.operands[0], tmod)
    if got is None or got[0].shape != shape:
        return _unknown(shape, f"the mask of the arith.select at TTGIR line {op.line} (not the same in every program)")
    known, keep = got
    why = f"the arith.select at TTGIR line {op.line}" + (f" ({args[2].why})" if args[2].why else "")
    if not known.all():
        why = f"the arith.select at TTGIR line {op.line} (its mask is the same in every program only for some " \
              f"elements)"
    code = np.where(known, np.where(keep, args[1].code, args[2].code), 2).astype(np.int8)
    return Values(code, np.where(known & keep, args[1].const, np.where(known, args[2].const, np.nan)), why)


def _fold(op: Op, args: list[Values]) -> Values:
    code = np.max([a.code for a in args], axis=0)
    if all(a.code.max() <= 1 for a in args) and (code == 1).any():
        with np.errstate(all="ignore"):
            val = _FLOAT_FOLD[op.name](*[a.const for a in args])
        code = np.where(np.min([a.code for a in args], axis=0) == 1, 1, code)
    else:
        val = np.full(code.shape, np.nan)
    if op.name == "arith.mulf":                         # x * 0 is no element (and not folded without fast-math)
        zero = np.any([(a.code == 1) & (a.const == 0) for a in args], axis=0)
        code = np.where(zero & (code == 0), 2, code)
    return Values(code.astype(np.int8), val, next((a.why for a in args if a.why), ""))


def constant_bytes(value: float, elem: str, bits: int) -> list[tuple[int, ...]] | None:
    """The byte encodings (lowest byte first) a register slot of ``bits`` may hold for ``value`` of the
    TTGIR element type ``elem``: f32 (and tf32 MMA inputs: the f32 bits or their round-to-nearest-away
    to 10 mantissa bits, PTX ISA 9.7.9.21 cvt.rna.tf32.f32), f16, bf16 (round to nearest even); 8-bit floats:
    zero only. None when not modelled.

    >>> constant_bytes(1.0, "f16", 16), constant_bytes(0.0, "f8E4M3FN", 8)
    ([(0, 60)], [(0,)])
    """
    if elem == "f32" and bits == 32:
        b = int(np.array([value], dtype=np.float32).view(np.uint32)[0])
        return sorted({tuple(x.to_bytes(4, "little")) for x in (b, (b + 0x1000) & 0xFFFFE000)})
    if elem == "f16" and bits == 16:
        return [tuple(int(np.array([value], dtype=np.float16).view(np.uint16)[0]).to_bytes(2, "little"))]
    if elem == "bf16" and bits == 16:
        b = int(np.array([value], dtype=np.float32).view(np.uint32)[0])
        return [tuple(((b + 0x7FFF + ((b >> 16) & 1)) >> 16 & 0xFFFF).to_bytes(2, "little"))]
    if elem.startswith("f8") and bits == 8 and value == 0:
        return [(0x80,)] if np.signbit(value) else [(0,)]
    return None


# ----- who put the wrong element there -------------------------------------------------------------

def _holds(v: Val | None, threads: Any, elem: int) -> np.ndarray:
    """Which of ``threads`` hold a byte of element ``elem`` in ``v``."""
    if v is None:
        return np.zeros(np.size(threads), dtype=bool)
    return (v.tags[threads] // 8 == elem).any(axis=-1)


def _byte_source(v: Val, t: int, byte: int | None) -> tuple[Val | None, int | None] | None:
    """The source and its byte that byte ``byte`` of ``v`` at thread ``t`` came from, for the moves that
    take bytes from one source (``prmt``, packing and unpacking ``mov``, a packing ``cvt``); None for others."""
    head, srcs = v.ins.head, v.srcs
    if byte is None:
        return None
    if head == "prmt" and v.route is not None:
        nib = (int(v.route[t]) >> (4 * byte)) & 0xF
        return (srcs[0] if (nib & 7) < 4 else srcs[1]), (nib & 7) % 4
    if head == "mov" and isinstance(v.route, int):              # unpack: bytes from ``route`` on
        return srcs[0], v.route + byte
    if head == "mov" and len(srcs) == 1 and v.route is None:     # a copy
        return srcs[0], byte
    if head == "mov" and len(srcs) > 1:                          # pack: the items side by side
        at = 0
        for x in srcs:
            w = x.tags.shape[1] if x is not None else 2
            if byte < at + w:
                return x, byte - at
            at += w
    if head == "cvt" and len(srcs) == 2:                         # packing cvt: b low, a high
        return (srcs[1] if byte < v.tags.shape[1] // 2 else srcs[0]), None
    return None


def _blame(v: Val | None, t: int, elem: int, index_line: Any, depth: int = 0,
          byte: int | None = None) -> tuple[int, str] | None:
    """The PTX line of the instruction that routed another element than ``elem`` into byte ``byte`` (None:
    any) of ``v`` at thread ``t``, and what it got wrong; None when ``elem`` was never within its reach
    (then the reader took the wrong register). ``index_line(ins)``: the line computing a shuffle's lane."""
    if v is None or v.ins is None or depth > 256:
        return None
    ins, head = v.ins, v.ins.head
    if head == "shfl" and v.route is not None:
        a, src = v.srcs[0], int(v.route[t])
        warp = np.arange(t & ~31, (t & ~31) + 32)
        if _holds(a, warp, elem).any() and not _holds(a, [src], elem).any():
            return index_line(ins), "the source lane"
        return _blame(a, src, elem, index_line, depth + 1, byte) or (ins.line, "the source register")
    if head in ("selp", "prmt") and v.route is not None:
        if any(_holds(s, [t], elem).any() for s in v.srcs):
            return ins.line, "the selector" if head == "prmt" else "the choice of input"
        if head == "selp":
            return _blame(v.srcs[0] if v.route[t] else v.srcs[1], t, elem, index_line, depth + 1, byte)
    one = _byte_source(v, t, byte)
    for s, b in ([one] if one is not None else [(x, None) for x in v.srcs]):
        got = _blame(s, t, elem, index_line, depth + 1, b)
        if got is not None:
            return got
    return None


# ----- the check ------------------------------------------------------------------------------------

@dataclass
class _Tally:
    """What one conversion's comparisons found (mutable while the run goes)."""
    conv: Conversion
    side: Side
    instrs: list = field(default_factory=list)
    regs: int = 0
    untagged: int = 0
    constant: int = 0
    lost: list = field(default_factory=list)
    wrong: dict = field(default_factory=dict)          # blamed PTX line -> (message, data)
    unmodelled: list = field(default_factory=list)
    shuffles: dict = field(default_factory=dict)       # shfl PTX line on the data path -> its lane index's line
    seen: set = field(default_factory=set)
    values: Any = None                                 # what the TTGIR gives each element (element_values)
    masked: int = 0                                    # constant registers proved to hold their masked elements
    const_why: list = field(default_factory=list)      # why a constant's element is not decided


def _element_text(side: Side, e: int) -> str:
    if e <= 0:
        return "no known element"
    k = e - side.first
    if 0 <= k < side.shape[0] * side.shape[1]:
        return f"element ({k // side.shape[1]}, {k % side.shape[1]})"
    return "an element of another dot's result"


def _index_line(run: _Run, ins: Instr) -> int:
    """The line that computes a shuffle's lane index (its register's first definition; the shuffle's
    own line for an immediate)."""
    op = ins.args[2] if len(ins.args) > 2 else None
    ds = run.ev.defs.get(op.name, []) if isinstance(op, Reg) else []
    return ds[0].line if ds else ins.line


def _note_shuffles(run: _Run, tally: _Tally, v: Val | None) -> None:
    """Record the shuffles on ``v``'s data path with the line of their lane index."""
    stack = [v]
    while stack:
        x = stack.pop()
        if x is None or id(x) in tally.seen:
            continue
        tally.seen.add(id(x))
        if x.ins is not None and x.ins.head == "shfl":
            tally.shuffles[x.ins.line] = _index_line(run, x.ins)
        stack.extend(x.srcs)


def _merged(tally: _Tally) -> dict:
    """The errors by line, where every shuffle on the data path that reads one lane index is wrong in the
    same way (its source register): one error at the line computing that index instead."""
    by_index: dict = {}
    for line, got in tally.wrong.items():
        if got[1].get("wrong_part") == "the source register" and line in tally.shuffles:
            by_index.setdefault(tally.shuffles[line], []).append(line)
    out = dict(tally.wrong)
    for idx, lines in by_index.items():
        alls = [x for x, i in tally.shuffles.items() if i == idx and x != idx]
        if len(lines) < 2 or sorted(lines) != sorted(alls):
            continue
        msg, data = out[lines[0]]
        for x in lines:
            out.pop(x)
        out[idx] = (f"{msg.rpartition(': ')[0]}: the lane index at PTX line {idx}, read by all {len(lines)} "
                    f"shuffles on this path (PTX lines {', '.join(map(str, sorted(lines)[:8]))}), is wrong",
                    dict(data, wrong_part="the source lane", shuffles=sorted(lines)))
    return out


def _reader(run: _Run, ins: Instr, v: Val, t: int, want: int) -> tuple[int, str]:
    """Who read the wrong register when no router had the element: the MMA when another of its operand
    registers holds it (its operand list), else the instruction that wrote the register (its source)."""
    vec = next((a for a in ins.args[1:] if isinstance(a, Vec) and any(getattr(x, "name", None) in run.regs
                                                                       for x in a.items)), None)
    others = [run.regs.get(x.name) for x in (vec.items if vec is not None else ()) if isinstance(x, Reg)]
    if any(o is not None and o is not v and _holds(o, [t], want).any() for o in others) or v.ins is None:
        return ins.line, "the operand register order"
    return v.ins.line, "the register read"


def _wrong(run: _Run, tally: _Tally, ins: Instr, x: Reg, q: int, v: Val, exp: np.ndarray, bad: np.ndarray) -> None:
    t = int(np.flatnonzero(bad)[0])
    j = int(np.flatnonzero(v.tags[t] != exp[t])[0])
    want, have = int(exp[t, j]) // 8, int(v.tags[t, j]) // 8
    line, what = _blame(v, t, want, lambda i: _index_line(run, i), 0, j) or _reader(run, ins, v, t, want)
    if line in tally.wrong:
        return
    name = "A" if tally.conv.operand == 0 else "B"
    msg = (f"warp {t // 32} lane {t % 32}: operand {name} register {q} ({x.name}) of the {ins.head} at PTX line "
           f"{ins.line} holds {_element_text(tally.side, have)} of the dot at TTGIR line "
           f"{tally.conv.producer.line}; the PTX ISA fragment wants {_element_text(tally.side, want)} there: "
           f"{what} at PTX line {line} is wrong")
    tally.wrong[line] = (msg, {"warp": t // 32, "lane": t % 32, "register": x.name, "mma_line": ins.line,
                               "got": _element_text(tally.side, have), "want": _element_text(tally.side, want),
                               "wrong_part": what})


def _constant_value(run: _Run, x: Any, at: Instr) -> int | None:
    """The value of register ``x`` read by ``at`` when it is one compile-time constant in every thread."""
    try:
        e = run.ev.operand(x, 32, at=at)
        e = z3.simplify(e) if e is not None else None
        return e.as_long() if e is not None and z3.is_bv_value(e) else None
    except (z3.Z3Exception, ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None


def _compare(run: _Run, tally: _Tally, ins: Instr, f: Frag, block: int, k: int, slot: int, cside: Side) -> None:
    """Compare the operand registers of one consuming MMA instruction with the PTX ISA fragment."""
    vec = ins.args[slot] if slot < len(ins.args) else None
    if not isinstance(vec, Vec):
        return
    nd = _acc_size(f, ins)
    origin = block_origin(cside.bases, f, block, nd, run.tid) if nd else None
    if origin is None:
        tally.unmodelled.append(f"the accumulator of the {ins.head} at PTX line {ins.line} " + (
            "does not follow the PTX ISA D fragment in its result layout's register order" if nd else
            "is of a type or register count not modelled"))
        return
    tally.instrs.append(ins.line)
    t = tally.conv.consumer.in_types[tally.conv.operand]
    dst = t.layout.bases if t.layout is not None else None
    kwidth = int(t.encoding.params.get("kWidth", 0) or 0) if t.encoding is not None else 0
    for q, x in enumerate(vec.items):
        exp = _wanted(tally.side, dst, f, tally.conv.operand, origin, k, run.tid, q, len(vec.items), kwidth)
        if exp is None:
            tally.unmodelled.append(f"the operand layout {t.encoding_as_printed} does not place the rows and "
                                    f"K-blocks of the {ins.head} at PTX line {ins.line} where the PTX ISA fragment does")
            return
        _compare_register(run, tally, ins, f, q, x, exp)


def _compare_register(run: _Run, tally: _Tally, ins: Instr, f: Frag, q: int, x: Any, exp: np.ndarray) -> None:
    """Compare operand register ``q`` (``x``) of ``ins`` with the tags ``exp`` it must hold; a constant is
    compared with the constant the TTGIR gives its (masked) elements (:func:`_check_constant`)."""
    v = run.regs.get(x.name) if isinstance(x, Reg) else None
    tally.regs += 1
    if v is None or v.tags.shape != exp.shape:
        c = _constant_value(run, x, ins)
        if c is None:
            tally.untagged += 1
            return
        v = Val(constant_tags(c, exp.shape[1], run.threads), None, ())
    _note_shuffles(run, tally, v)
    const = (v.tags < 0).all(axis=1)
    if const.any() and not _check_constant(run, tally, ins, f, q, x, v, exp, const):
        tally.constant += 1
        tally.untagged += 1
    bad = (v.tags != exp).any(axis=1) & ~const
    lost = bad & (v.tags <= 0).any(axis=1)
    if lost.any():
        tally.lost.append(v.lost or f"register {x.name} holds no known element")
    if (bad & ~lost).any():
        _wrong(run, tally, ins, x, q, v, exp, bad & ~lost)


def _check_constant(run: _Run, tally: _Tally, ins: Instr, f: Frag, q: int, x: Any, v: Val, exp: np.ndarray,
                    const: np.ndarray) -> bool:
    """Whether the constant threads of register ``x`` hold, for each element slot, the constant the TTGIR
    gives the element the fragment wants there (:func:`element_values`: a masked element); an error is
    recorded where an element that is not masked, or another constant, is there; False when not decided."""
    vals = tally.values
    bits = f.a_bits if tally.conv.operand == 0 else f.b_bits
    w = bits // 8
    elem = tally.conv.consumer.in_types[tally.conv.operand].tensor
    threads = np.flatnonzero(const)
    for h in range(exp.shape[1] // w):
        e = exp[threads, h * w] // 8 - tally.side.first
        if (e < 0).any() or vals is None:
            return _undecided(tally, "an element slot out of the producer's tile" if vals is not None else
                              "the converted value's elements are not read")
        r, c = e // tally.side.shape[1], e % tally.side.shape[1]
        code, val = vals.code[r, c], vals.const[r, c]
        if (code == 2).any():
            return _undecided(tally, f"the value of element ({int(r[code == 2][0])}, {int(c[code == 2][0])}) "
                              f"is not decided: {vals.why}")
        have = CONSTANT - v.tags[threads, h * w:(h + 1) * w]
        for j in np.flatnonzero(code == 0)[:1]:
            _wrong_constant(run, tally, ins, x, v, int(threads[j]), int(exp[threads[j], h * w] // 8), have[j], None)
            return True
        for value in np.unique(val):
            ok = constant_bytes(float(value), elem.elem if elem is not None else "", bits)
            if ok is None:
                return _undecided(tally, f"the encoding of {value} as {elem.elem if elem else '?'} is not modelled")
            at = np.flatnonzero((val == value) & ~np.any([(have == np.array(o)).all(axis=1) for o in ok], axis=0))
            for j in at[:1]:
                _wrong_constant(run, tally, ins, x, v, int(threads[j]), int(exp[threads[j], h * w] // 8), have[j],
                                float(value))
                return True
    tally.masked += 1
    return True


def _undecided(tally: _Tally, why: str) -> bool:
    tally.const_why.append(why)
    return False


def _constant_origin(v: Val, ins: Instr) -> tuple[int, str]:
    """The line of the ``mov`` that made the constant ``v`` (through the moves that routed it)."""
    for _ in range(64):
        if v.ins is None:
            return ins.line, "the operand register"
        if _constant_move(v.ins):
            return v.ins.line, "the constant"
        nxt = next((s for s in v.srcs if s is not None and (s.tags < 0).any()), None)
        if nxt is None:
            return v.ins.line, "the register read"
        v = nxt
    return ins.line, "the operand register"


def _wrong_constant(run: _Run, tally: _Tally, ins: Instr, x: Any, v: Val, t: int, want: int, have: np.ndarray,
                    value: float | None) -> None:
    """An error: thread ``t``'s slot holds the constant ``have`` (bytes) where the TTGIR gives element
    ``want`` the constant ``value`` (another encoding), or where ``want`` is not masked (``value`` None)."""
    bits = "0x" + "".join(f"{int(b):02x}" for b in reversed(have))
    if value is None:
        line, what = _blame(v, t, want, lambda i: _index_line(run, i)) or (ins.line, "the operand register")
        why = "is not masked"
    else:
        line, what = _constant_origin(v, ins)
        why = f"is the constant {value} ({tally.values.why})"
    if line in tally.wrong:
        return
    name = "A" if tally.conv.operand == 0 else "B"
    msg = (f"warp {t // 32} lane {t % 32}: operand {name} register ({x.name if isinstance(x, Reg) else x}) of the "
           f"{ins.head} at PTX line {ins.line} holds the constant {bits}; the PTX ISA fragment wants "
           f"{_element_text(tally.side, want)} there, which {why}: {what} at PTX line {line} is wrong")
    tally.wrong[line] = (msg, {"warp": t // 32, "lane": t % 32, "mma_line": ins.line, "got": bits,
                               "want": _element_text(tally.side, want), "wrong_part": what})


def _dot_groups(ctx: PtxContext) -> dict[int, list[list[Instr]]]:
    """Each TTGIR dot's PTX MMA groups of the :data:`FAMILIES` (the context's ties:
    ``audit.ptx_dots``, by order and source location)."""
    out: dict[int, list[list[Instr]]] = {}
    for family in TIES:
        out.update(ctx.ties[family].by_dot())
    return out


def _producer_groups(dot: Op, groups: dict, tmod: Module) -> list[list[Instr]]:
    """The PTX MMA groups whose accumulators end as ``dot``'s result: its own, or, for a dot of a K-chain
    (its accumulator operand another dot of the same result type, matched to one group for the whole
    chain), the chain's first dot's group (each MMA leaves its block's elements; the last one the chain's)."""
    op = dot
    for _ in range(64):
        if groups.get(id(op)):
            return groups[id(op)]
        acc = _defining(op.operands[2], tmod) if len(op.operands) > 2 else None
        if acc is None or acc.name != dot.name or acc.result_types != dot.result_types:
            return []
        op = acc
    return []


def _side(op: Op, first: int) -> Side | None:
    t = op.out_types[0] if op.out_types else None
    ll = t.layout if t is not None else None
    if ll is None or len(t.tensor.shape) != 2:
        return None
    return Side(ll.bases, tuple(t.tensor.shape), first)


def _events(ctx: PtxContext, convs: list[Conversion]) -> tuple[dict, dict, list[_Tally]]:
    """Per MMA instruction (by id): the producer tags it leaves, the comparisons it takes part in."""
    tmod = ctx.tmod
    groups = _dot_groups(ctx)
    prods: dict = {}
    cons: dict = {}
    tallies = []
    firsts: dict = {}
    for conv in convs:
        side = _side(conv.producer, 1 + sum(s.shape[0] * s.shape[1] for s in firsts.values()))
        side = firsts.setdefault(id(conv.producer), side) if side is not None else None
        cside = _side(conv.consumer, 0)
        if side is None or cside is None:
            continue
        tally = _Tally(conv, side, values=element_values(conv.consumer.operands[conv.operand], tmod, side.shape))
        tallies.append(tally)
        for g in _producer_groups(conv.producer, groups, tmod):
            for b, blk in enumerate(accumulator_blocks(g)):
                for ins in blk:
                    prods[id(ins)] = (side, b)
        slot = 1 if conv.operand == 0 else 2
        for g in groups.get(id(conv.consumer), []):
            for b, blk in enumerate(accumulator_blocks(g)):
                for k, ins in enumerate(blk):
                    cons.setdefault(id(ins), []).append((tally, b, k, slot, cside))
    return prods, cons, tallies


def schedule(mod: PtxModule, func: str) -> list[Instr]:
    """The order the run visits one function's instructions: program order, each backward branch
    (a loop's back edge) taken once, so a loop body runs twice and reads in its second run what its
    first left in the registers it carries (PTX ISA 9.7.13.1 ``bra``; forward branches fall through).

    >>> from verilayout.frontends.ptx import parse_ptx
    >>> [i.line for i in schedule(parse_ptx(".version 8.7\\n.entry f()\\n{\\nL:\\nmov.b32 %r1, 1;\\nbra L;\\nret;\\n}"), "f")]
    [5, 6, 5, 6, 7]
    """
    pos = {g: k for k, g in enumerate(g for g, i in enumerate(mod.instrs) if i.func == func)}
    body = [i for i in mod.instrs if i.func == func]
    labels = {name: pos.get(at) for f, name, at in mod.labels if f == func}
    out: list[Instr] = []
    taken: set[int] = set()
    k = 0
    while k < len(body) and len(out) < 8 * len(body):
        ins = body[k]
        out.append(ins)
        to = labels.get(ins.args[0].name) if ins.head == "bra" and ins.args and isinstance(ins.args[0], Sym) else None
        if to is not None and to <= k and k not in taken:
            taken.add(k)
            k = to
            continue
        k += 1
    return out


def _run_function(mod: PtxModule, func: str, ev: PtxValues, prods: dict, cons: dict, threads: int) -> list[str]:
    """Run one function's instructions on the tags (:func:`schedule`), comparing at the last visit of each
    consuming MMA instruction (a loop's second run: loop-carried registers hold the previous iteration's
    elements); the producers whose accumulators do not follow the fragment (their reasons)."""
    run = _Run(ev, threads)
    order = schedule(mod, func)
    last = {id(ins): k for k, ins in enumerate(order)}
    bad: list[str] = []
    for at, ins in enumerate(order):
        f = mma_frag(ins) if id(ins) in prods or id(ins) in cons else None
        for tally, b, k, slot, cside in cons.get(id(ins), []) if f is not None and last[id(ins)] == at else ():
            _compare(run, tally, ins, f, b, k, slot, cside)
        _step(run, ins)
        if id(ins) in prods:
            side, b = prods[id(ins)]
            got = _producer_tags(side, f, ins, b, run.tid) if f is not None else None
            why = (f"the accumulator of the {ins.head} at PTX line {ins.line} does not follow the PTX ISA D "
                   "fragment in its result layout's register order")
            if got is None and why not in bad:
                bad.append(why)
            run.regs.update(got or {})
    return bad


def _threads(mod: PtxModule, func: str, tallies: list[_Tally]) -> int:
    n = mod.threads_of(func)
    if n:
        return n
    return 32 * max((1 << len(t.side.bases.get("warp", [])) for t in tallies), default=1)


def _untagged_reason(tally: _Tally) -> list[str]:
    if not tally.untagged:
        return []
    if tally.constant == tally.untagged:
        why = tally.const_why[0] if tally.const_why else "which element a constant stands for is not decided"
        return [f"{tally.constant} of {tally.regs} operand registers hold a compile-time constant (elements the "
                f"compiler folded, e.g. masked ones: {why}); every other register holds the element the PTX ISA "
                "fragment assigns"]
    return [f"{tally.untagged} of {tally.regs} operand registers hold no element of the producer"]


def _tally_checks(tally: _Tally, by_line: dict, producer_bad: list[str]) -> list[Check]:
    """The checks of one conversion: errors at the blamed lines, else unchecked with the reason, else
    proved; nothing when the operand's registers were loaded (a conversion through shared memory)."""
    conv = tally.conv
    if not tally.instrs and not tally.unmodelled:
        return []
    data = {"source": "ptx", "convert_line": conv.converts[-1].line, "producer_line": conv.producer.line,
            "consumer_line": conv.consumer.line, "operand": "A" if conv.operand == 0 else "B",
            "mma_lines": tally.instrs[:64], "registers": tally.regs, "carried_by": list(conv.carried)}
    first = by_line[tally.instrs[0]] if tally.instrs else None
    carried = (f", carried by the scf.for at TTGIR line {', '.join(map(str, conv.carried))} from its previous "
               "iteration" if conv.carried else "")
    what = (f"operand {data['operand']} of the dot at TTGIR line {conv.consumer.line}, converted from the dot at "
            f"TTGIR line {conv.producer.line}{carried} (convert_layout at TTGIR line {data['convert_line']})")
    if tally.wrong:
        return [Check("ttg.convert_layout", line, by_line[line].loc if line in by_line else None, CHECK,
                      "counterexample", "error", f"{what}: {msg}", dict(data, **extra))
                for line, (msg, extra) in sorted(_merged(tally).items())]
    if tally.untagged == tally.regs and not tally.unmodelled and not producer_bad:
        return []                                        # loaded registers: the shared-memory checks' part
    why = (tally.unmodelled + producer_bad)[:1] or tally.lost[:1] or _untagged_reason(tally)
    line = first.line if first is not None else by_line and min(by_line)
    loc = first.loc if first is not None else None
    if why:
        return [Check("ttg.convert_layout", line, loc, CHECK, "unchecked", None, f"{what}: unchecked: {why[0]}",
                      dict(data, reason=why[0]))]
    return [Check("ttg.convert_layout", line, loc, CHECK, "proved", None,
                  f"{what}: each of the {tally.regs} operand registers of the {len(tally.instrs)} MMA instructions "
                  "holds, in every thread, the elements the PTX ISA fragment assigns to it (shuffles, selects and "
                  "permutes run per lane)" + (f"; {tally.masked} hold the constant the TTGIR gives their masked "
                                              f"elements ({tally.values.why})" if tally.masked else ""),
                  dict(data, masked_registers=tally.masked))]


_ROUTERS = ("mov", "selp", "prmt", "cvt")


def _shuffled(ev: PtxValues, reg: str, depth: int = 0) -> Instr | None:
    """A lane-varying ``shfl.sync.idx`` on the definition chain of ``reg`` (moves, selects, permutes)."""
    ds = ev.defs.get(reg, [])
    if len(ds) != 1 or depth > 8:
        return None
    i = ds[0]
    if i.head == "shfl" and len(i.args) > 2 and isinstance(i.args[2], Reg):
        return i
    if i.head not in _ROUTERS:
        return None
    return next((got for x in _sources(i) if isinstance(x, Reg)
                 for got in [_shuffled(ev, x.name, depth + 1)] if got is not None), None)


def _untraced_checks(ctx: PtxContext) -> list[Check]:
    """``unchecked`` for each converted operand whose producer is not modelled when its registers come
    out of lane shuffles (a register-level conversion that goes unproved); nothing when they do not."""
    mod, first = ctx.ptx, ctx.values
    loose = _untraced(ctx.tmod)
    if not loose:
        return []
    groups = _dot_groups(ctx)
    out = []
    for dot, idx, src in loose:
        slot = 1 if idx == 0 else 2
        ins = next((i for g in groups.get(id(dot), []) for i in g
                    if slot < len(i.args) and isinstance(i.args[slot], Vec)), None)
        if ins is None:
            continue
        ev = first.get(ins.func) or PtxValues(mod, ins.func, first_iteration=True)
        sh = next((got for x in ins.args[slot].items if isinstance(x, Reg)
                   for got in [_shuffled(ev, x.name)] if got is not None), None)
        if sh is None:
            continue
        why = (f"the converted value is {src}: which producer's elements the shuffles (e.g. PTX line {sh.line}) "
               "move is not modelled")
        out.append(Check("ttg.convert_layout", ins.line, ins.loc, CHECK, "unchecked", None,
                         f"operand {'AB'[idx]} of the dot at TTGIR line {dot.line}: unchecked: {why}",
                         {"source": "ptx", "consumer_line": dot.line, "operand": "AB"[idx], "reason": why}))
    return out


def register_permute_checks(ctx: PtxContext) -> list[Check]:
    """The ``register-permute`` checks of a kernel (module law): each dot register operand converted from
    another dot's result, run per thread on element tags and compared with the PTX ISA fragments
    (``ctx.values``: the first-iteration evaluators; ``ctx.ties``: the dots' MMA groups).

    >>> from verilayout.frontends.ptx import parse_ptx
    >>> from verilayout.frontends.ttgir import parse_module
    >>> register_permute_checks(PtxContext("x", parse_ptx(".version 8.7\\n.entry f()\\n{\\nret;\\n}"),
    ...                                    parse_module("module {\\n}"), (), {}))
    []
    """
    mod, first, tmod = ctx.ptx, ctx.values, ctx.tmod
    convs = conversions(tmod)
    by_line = {i.line: i for i in mod.instrs}
    loose = _untraced_checks(ctx)
    if not convs:
        return loose
    try:
        prods, cons, tallies = _events(ctx, convs)
        bad: list[str] = []
        for func in mod.functions:
            if any(i.func == func and (id(i) in prods or id(i) in cons) for i in mod.instrs):
                ev = first.get(func) or PtxValues(mod, func, first_iteration=True)
                bad += _run_function(mod, func, ev, prods, cons, _threads(mod, func, tallies))
    except (ValueError, KeyError, IndexError, TypeError, AssertionError, AttributeError, z3.Z3Exception) as e:
        why = f"internal error ({type(e).__name__}: {e})"
        line = min(by_line) if by_line else 1
        return [Check("ttg.convert_layout", line, None, CHECK, "unchecked", None, f"unchecked: {why}",
                      {"reason": why, "convert_line": c.converts[-1].line}) for c in convs]
    return [c for t in tallies for c in _tally_checks(t, by_line, bad)] + loose


#: The tag machinery under public names: :mod:`verilayout.audit.cute_dsl_copies` runs it from the
#: wgmma accumulators to the ``stmatrix`` of a CuTe-DSL epilogue.
TagRun = _Run
step_tags = _step
