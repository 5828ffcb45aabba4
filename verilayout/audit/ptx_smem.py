"""Shared-memory accesses in PTX: the address each lane uses, and the wavefronts they cost.

For every ``st.shared`` / ``ld.shared`` / ``cp.async`` (shared destination) / ``ldmatrix`` /
``stmatrix`` instruction, the address register is evaluated symbolically (``verilayout.audit.ptx``'s
evaluator; ``%tid.x`` is a symbol) and instantiated for every thread of the CTA (``.reqntid``; the
32 lanes of warp 0 when the PTX does not state it), warp by warp. The address's form
(:mod:`verilayout.prove.ptx_forms`: a function of ``%tid.x`` plus symbols, computed over the threads
with no z3 term) answers first; the z3 term of the evaluator only where the form is not known. The addresses are exact relative
to thread 0 when ``addr(tid) - addr(0)`` is one constant for every value of the other symbols
(stage offsets, the shared-memory base); the bank figure then assumes the base is 128-byte aligned
(said in the report). A guard (``@%p``) that is a function of ``%tid.x`` is evaluated per thread:
lanes that fail it give no address, and a warp none of whose lanes passes costs nothing (measured
on an H100: the per-instruction ncu counters in
``hwtests/results/h100-2026-11-26-banks_triton36.tar.gz``). Instructions that share an address register and guard differ only by their
immediate offset, which moves every lane alike: one figure per register, guard, width and kind; the
reported figure is the worst warp's.

Wavefronts follow the NVIDIA rule the rest of verilayout uses (:mod:`verilayout.hw.nvidia.banks`,
:func:`~verilayout.hw.nvidia.banks.warp_wavefronts`: 32 banks of 4 bytes; a 64-bit access is served
a half warp per wavefront, 128-bit a quarter warp, a 128-bit load half-warp that fits one wavefront in one;
``ldmatrix``/``stmatrix`` ``.xN``: each 8 of lanes ``0 .. 8N-1`` name the 16-byte rows of one 8x8
matrix, one phase each); a phase costs the largest number of distinct words one bank holds. A
16-byte ``cp.async`` figure is a floor: an H100 took up to twice as many at run time (issue timing). Each figure is compared with the
TTGIR-level figure of the op with the same source line.

"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import z3

from verilayout.audit.model import Check
from verilayout.audit.ptx_context import PtxContext
from verilayout.dtypes import ptx_bits
from verilayout.hw.nvidia.banks import BankModel, warp_wavefronts
from verilayout.hw.nvidia.ptx_model import Addr, Imm, Instr, Operand, PtxModule
from verilayout.prove.ptx_forms import Form, PtxForms
from verilayout.prove.ptx_values import TID, PtxValues
from verilayout.prove.smem_address import address_parts, at_thread_zero, core_at_zero, remembered, thread_part
from verilayout.prove.z3_numpy import compile_term

#: The bank model the PTX figures use (NVIDIA: 32 banks of 4 bytes).
_MODEL = BankModel()


#: The opcode heads of the instructions :func:`smem_access` models (any other: None, without the call).
ACCESS_HEADS = _ACCESS_HEADS = frozenset(("ld", "st", "cp", "ldmatrix", "stmatrix"))


def smem_access(ins: Instr) -> tuple[str, int, int, int] | None:
    """``(kind, address operand index, bytes per lane access, lanes per phase)``."""
    if ins.parts[0] not in _ACCESS_HEADS:             # the common case: no shared-memory access
        return None
    cp = ins.parts[0] == "cp" and len(ins.args) > 2
    size = ins.args[2] if cp else None
    return _access_of(ins.opcode, ins.parts, ins.vec, size.value if isinstance(size, Imm) else None)


def address_of(ins: Instr) -> Addr | None:
    """The ``[base+offset]`` address operand of a shared-memory access (:func:`smem_access`), or
    None (no access, or an address of no modelled form).

    >>> from verilayout.frontends.ptx import make_instr
    >>> address_of(make_instr("ld.shared.b32", ("%r1", "[%r2+8]"), 1)).offset
    8
    """
    acc = smem_access(ins)
    if acc is None or len(ins.args) <= acc[1]:
        return None
    a = ins.args[acc[1]]
    return a if isinstance(a, Addr) and a.modelled else None


@lru_cache(maxsize=4096)   # key: the opcode and a cp.async's size (a few dozen distinct per file)
def _access_of(opcode: str, p: tuple[str, ...], vec: int, size: int | None) -> tuple[str, int, int, int] | None:
    if p[0] == "ldmatrix" or p[0] == "stmatrix":
        return ("load" if p[0] == "ldmatrix" else "store", 1 if p[0] == "ldmatrix" else 0, 16, 8)
    if p[0] in ("st", "ld") and "shared" in opcode or p[0] == "st" and any(x.startswith("shared") for x in p):
        bits = next((ptx_bits(x) for x in reversed(p) if ptx_bits(x)), 32)
        width = vec * bits // 8
        lanes = 32 if width <= 4 else 16 if width == 8 else 8
        return ("store" if p[0] == "st" else "load", 0 if p[0] == "st" else 1, width, lanes)
    if p[0] == "cp" and "async" in p and ("shared" in opcode or "ca" in p or "cg" in p) and "bulk" not in p:
        if size not in (4, 8, 16):
            return None
        return ("store", 0, size, 32 if size <= 4 else 16 if size == 8 else 8)
    return None


def values_at(e: z3.ExprRef, var: str, points: np.ndarray, memo: dict | None = None) -> list[int] | None:
    """The values of ``e`` at ``var`` = each of ``points`` (``uint64``), when ``var`` is the only
    free symbol of ``e`` and every subterm is at most 64 bits wide (else None): a claim about
    every value an assumption allows, decided by enumerating them. ``memo``: compiled subterms
    shared between calls (the caller keeps each ``e`` alive with it, so z3's ids stay unique).

    >>> values_at(z3.Extract(15, 10, z3.BitVec("b", 32) + 4), "b", np.arange(0, 4096, 1024, dtype=np.uint64))
    [0, 1, 2, 3]
    """
    try:
        out = compile_term(e, {} if memo is None else memo, (var,), wide=False)({var: points})
    except ValueError:                                  # TooWide is a ValueError
        return None
    return [int(x) for x in out] if out.dtype != bool else [bool(x) for x in out]


def thread_values(e: z3.ExprRef, memo: dict, n: int) -> list[int]:
    """The values of ``e`` (only ``%tid.x`` free) at ``tid = 0 .. n-1``
    (:func:`verilayout.prove.z3_numpy.compile_term`, every thread at once). Raises ValueError (or
    AttributeError) for a term it does not evaluate.

    >>> thread_values(z3.ZeroExt(32, TID) * 3 + 1, {}, 4)
    [1, 4, 7, 10]
    """
    out = _thread_array(e, memo, n)
    if out.dtype == object:
        return [bool(x) for x in out] if out.dtype == bool else [int(x) for x in out]
    return out.tolist()                      # Python ints (or bools) at once


def _thread_array(e: z3.ExprRef, memo: dict, n: int) -> np.ndarray:
    """The array :func:`thread_values` reads its list from (same errors)."""
    return compile_term(e, memo)({"tid_x": np.arange(n, dtype=np.uint64)})


def _relative(columns: list[np.ndarray]) -> list[int] | None:
    """``[(v - v0) mod 2**32 as a signed 32-bit number for v in _summed(columns)]`` (``v0`` the first
    sum), computed on the arrays; None when a column holds exact integers (an object array: the
    list path computes it). Each column is a 32-bit term's values, so the sums fit in 64 bits.

    >>> _relative([np.array([5, 7, 4], dtype=np.uint64), np.array([True, False, False])])
    [0, 1, -2]
    """
    if any(c.dtype == object for c in columns):
        return None
    total = columns[0].astype(np.int64)
    for c in columns[1:]:
        total = total + c.astype(np.int64)
    d = (total - total[0]) % (1 << 32)
    return np.where(d >= 1 << 31, d - (1 << 32), d).tolist()


def lane_byte_offsets(ev: Any, base: Operand, at: Instr | None = None, memo: dict | None = None,
                  n: int = 32) -> list[int] | None:
    """Byte offsets of threads 0..n-1 (by default the 32 lanes of warp 0) relative to thread 0, or None
    when not exact (the difference ``addr(tid) - addr(0)`` still depends on a symbol other than
    ``%tid.x`` after z3's simplifier, or uses an operator the evaluators do not model).
    ``memo``: compiled subterms shared by the addresses of one file (it keeps the terms alive, so
    z3's term ids stay unique)."""
    fs = forms_of(ev)
    if fs is not None:
        offs = _form_offsets(fs, base, at, memo, n)
        if offs is not None:
            return offs
    expr = ev.operand(base, 32, at=at)
    if expr is None:
        return None
    memo = {} if memo is None else memo
    key = ("expr", expr.get_id(), n)
    hit = memo.get(key)
    if hit is not None:
        return hit[1]
    offs = remembered(key, expr, lambda: _expr_offsets(expr, memo, n))
    memo[key] = (expr, offs)                               # the term is kept: its id stays unique
    return offs


def forms_of(ev: Any) -> PtxForms | None:
    """The register forms of ``ev`` (:mod:`verilayout.prove.ptx_forms`) when it is a plain
    :class:`~verilayout.prove.ptx_values.PtxValues` (a wrapper that rewrites its terms, such as
    the warp-specialized partitions' ``%tid.x``, is read through its z3 terms), else None."""
    return ev.forms() if type(ev) is PtxValues else None


def _form_offsets(fs: PtxForms, base: Operand, at: Instr | None, memo: dict | None, n: int) -> list[int] | None:
    """:func:`lane_byte_offsets` from the address's form, or None where the form is not known
    (then the z3 term decides); answers kept in ``memo`` by the form (one object per form)."""
    f = fs.operand(base, 32, at=at)
    if not isinstance(f, Form):
        return None
    if memo is None:
        return fs.offsets(f, n)
    key = ("form-offsets", id(f), n)
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = (f, fs.offsets(f, n))       # the form kept: its id stays unique
    return hit[1]


def _expr_offsets(expr: z3.BitVecRef, memo: dict, n: int = 32) -> list[int] | None:
    core, _c = address_parts(expr, memo)   # a constant moves every thread alike: the core's offsets
    direct = _direct_offsets(core, memo, n)
    if direct is not None:
        return direct
    hit = memo.get(("delta", core.get_id()))           # one simplification per address function, any n
    if hit is None:
        hit = memo[("delta", core.get_id())] = (core, z3.simplify(core - z3.substitute(core, (TID, z3.BitVecVal(0, 32)))))
    delta = hit[1]
    if z3.is_bv_value(delta):
        return [0] * n if delta.as_long() == 0 else None
    key = ("offsets", delta.hash(), n)
    for d, offs in memo.get(key, ()):                 # addresses that differ by a constant
        if z3.eq(d, delta):
            return offs
    offs = _offsets_of(delta, memo, n)
    memo.setdefault(key, []).append((delta, offs))
    return offs


def _direct_offsets(core: z3.BitVecRef, memo: dict, n: int) -> list[int] | None:
    """The offsets ``T(t) - T(0)`` of a core ``S + T`` whose thread part ``T`` is a function of
    ``%tid.x`` alone (:func:`verilayout.prove.smem_address.thread_part`), evaluated over the
    threads with no simplification; None for any other core (then z3 simplifies the difference)."""
    key = ("direct", core.get_id(), n)
    if key in memo:
        return memo[key][1]
    offs = memo[key] = (core, remembered(key, core, lambda: _direct_offsets_of(core, memo, n)))
    return offs[1]


def _direct_offsets_of(core: z3.BitVecRef, memo: dict, n: int) -> list[int] | None:
    """:func:`_direct_offsets`, computed."""
    parts = thread_part(core, memo)
    offs = None
    if parts == ():                                   # the same address in every thread
        offs = [0] * n
    elif parts is not None:
        try:
            cols = [_thread_array(t, memo, n) for t in parts]
        except (ValueError, AttributeError):
            cols = None
        offs = _relative(cols) if cols is not None and n else None
        if offs is None and cols is not None:       # exact integers: the lists, summed
            vals = _summed([c.tolist() if c.dtype != object else [int(x) for x in c] for c in cols])
            v0 = vals[0]
            offs = [d - (1 << 32) if (d := (v - v0) % (1 << 32)) >= 1 << 31 else d for v in vals]
    return offs


def _summed(columns: list[list[int]]) -> list[int]:
    """``[sum(x) for x in zip(*columns)]``; one column of ints is that list itself (a column holds
    one Python type, :func:`thread_values`).

    >>> _summed([[1, 2], [10, 20]]), _summed([[3, 4]]), _summed([[True, False]])
    ([11, 22], [3, 4], [1, 0])
    """
    if len(columns) == 1 and (not columns[0] or type(columns[0][0]) is int):
        return columns[0]
    return [sum(x) for x in zip(*columns)]


def _offsets_of(delta: z3.BitVecRef, memo: dict, n: int = 32) -> list[int] | None:
    # a symbol other than tid_x left in the difference: the evaluator refuses it (not exact)
    try:
        vals = thread_values(delta, memo, n)
    except (ValueError, AttributeError):
        return None
    return [v - (1 << 32) if v >= 1 << 31 else v for v in vals]


@dataclass(frozen=True)
class SharedAccess:
    """What one shared-memory instruction costs, warp by warp of the CTA.

    ``per_warp[w]``: wavefronts of warp ``w`` (0 where no lane of it executes the instruction: its
    guard is false there); ``wavefronts``: the most any warp needs; ``ideal``: the fewest that warp's
    executing lanes could need; ``exact``: False when the lanes' addresses are not exact relative to
    thread 0 (then the figures are None). ``guard``: ``"none"``, ``"evaluated"`` (the predicate is a
    function of ``%tid.x`` alone, evaluated for every thread) or ``"free"`` (it depends on other
    values: every lane is counted as executing)."""
    ins: Instr
    kind: str
    width: int
    exact: bool
    wavefronts: int | None = None
    ideal: int | None = None
    per_warp: tuple[int, ...] = ()
    lane_offsets: tuple[int, ...] = ()
    guard: str = "none"

    @property
    def warps(self) -> tuple[int, ...]:
        """The warps that execute the instruction (at least one lane's guard holds)."""
        return tuple(w for w, c in enumerate(self.per_warp) if c > 0)


def _matrices(ins: Instr) -> int:
    """``ldmatrix``/``stmatrix`` ``.xN``: N matrices, 8 lanes give the row addresses of each (PTX ISA:
    for ``.x1`` lanes 0-7, ``.x2`` lanes 0-15, ``.x4`` all 32); 0 for any other instruction."""
    if ins.parts[0] not in ("ldmatrix", "stmatrix"):
        return 0
    return matrix_count(ins, 4)


def matrix_bytes(row_offsets: list[int], matrices: int, trans: bool) -> list[set[int]]:
    """Bytes each lane holds of ``ldmatrix``/``stmatrix`` ``.x{matrices}`` (b16), given the row
    address each lane supplies (PTX ISA, ldmatrix fragment layout: lane ``l`` holds row ``l / 4``, bytes
    ``4 (l % 4)`` .. of each 8x8 matrix whose row addresses lanes ``8i .. 8i+7`` give; ``.trans``: rows
    ``2 (l % 4)``, ``2 (l % 4) + 1`` at byte ``2 (l / 4)``).

    >>> sorted(matrix_bytes([16 * i for i in range(32)], 1, False)[5])
    [20, 21, 22, 23]
    """
    rows = np.asarray(row_offsets, dtype=np.int64)
    lane = np.arange(32, dtype=np.int64)[:, None, None]
    i = np.arange(matrices, dtype=np.int64)[None, :, None]
    if trans:                             # [lane, matrix, j]: rows 2 (l % 4) + j at byte 2 (l / 4)
        a = rows[8 * i + 2 * (lane % 4) + np.arange(2, dtype=np.int64)] + 2 * (lane // 4)
        width = 2
    else:                                 # [lane, matrix, 0]: row l / 4 at byte 4 (l % 4)
        a = rows[8 * i + lane // 4] + 4 * (lane % 4)
        width = 4
    got = (a[..., None] + np.arange(width, dtype=np.int64)).reshape(32, -1)
    return [set(r) for r in got.tolist()]    # each lane's bytes added in the order listed above


def matrix_count(ins: Instr, default: int) -> int:
    """N of an ``.xN`` opcode part (the first such part), else ``default``.

    >>> from verilayout.frontends.ptx import make_instr
    >>> matrix_count(make_instr("ldmatrix.sync.aligned.m8n8.x2.shared.b16", (), 1), 4)
    2
    """
    return next((int(p[1]) for p in ins.parts[1:] if len(p) > 1 and p[0] == "x" and p[1].isdigit()), default)


def thread_offsets(ev: Any, ins: Instr, reg: Operand, n: int, memo: dict) -> tuple[z3.BitVecRef, list[int]] | None:
    """``(thread 0's address, offset of each of threads 0..n-1 relative to it)`` of the decoded operand
    ``reg`` (a register) at ``ins``, or None when not exact (the difference depends on another symbol).

    >>> from verilayout.frontends.ptx import parse_ptx
    >>> from verilayout.prove.ptx_values import PtxValues
    >>> m = parse_ptx(".version 8.7\\n.entry f()\\n{\\nmov.u32 %r1, %tid.x;\\nshl.b32 %r2, %r1, 4;\\nret;\\n}")
    >>> thread_offsets(PtxValues(m, "f"), m.instrs[-1], m.instrs[-2].args[0], 4, {})[1]
    [0, 16, 32, 48]
    """
    expr = ev.operand(reg, 32, at=ins)
    if expr is None:
        return None
    key = ("threads", expr.get_id(), n)
    hit = memo.get(key)
    if hit is None:                          # the term kept with the answer: its id stays unique
        fs = forms_of(ev)
        offs = _form_offsets(fs, reg, ins, memo, n) if fs is not None else None
        hit = memo[key] = (expr, _thread_offsets_of(expr, n, memo, offs))
    return hit[1]


def _thread_offsets_of(expr: z3.BitVecRef, n: int, memo: dict,
                       offs: list[int] | None = None) -> tuple[z3.BitVecRef, list[int]] | None:
    """:func:`thread_offsets`, computed: thread 0's address simplified, and the offsets of
    :func:`_expr_offsets` (one simplified difference per address term and file, shared with
    :func:`lane_byte_offsets`), or ``offs`` where the caller has them from the address's form."""
    offs = _expr_offsets(expr, memo, n) if offs is None else offs
    if offs is None:
        return None
    core, c = address_parts(expr, memo)
    return at_thread_zero(core_at_zero(core, memo), c, memo), offs


def thread_guard(ev: Any, ins: Instr, memo: dict, n: int) -> tuple[list[bool], str]:
    """Which of threads ``0 .. n-1`` execute ``ins``: its predicate evaluated per thread when it is a
    function of ``%tid.x`` alone; every thread when there is no predicate or it holds other values."""
    if ins.pred is None:
        return [True] * n, "none"
    fs = forms_of(ev)
    got = fs.guard(ins.guard, n) if fs is not None else None
    if got is not None:
        return got
    p = ev.pred(ins.guard)
    key = ("guard", p.get_id(), n)
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = (p, *remembered(key, p, lambda: _guard_values(p, memo, n)))
    return hit[1], hit[2]


def _guard_values(p: z3.BoolRef, memo: dict, n: int) -> tuple[list[bool], str]:
    """:func:`thread_guard` of the predicate term ``p``, computed."""
    try:
        return _thread_array(p, memo, n).astype(bool).tolist(), "evaluated"   # thread_values, each as a bool
    except (ValueError, AttributeError):
        return [True] * n, "free"


@lru_cache(maxsize=4096)   # key: one warp's lane offsets (warps of a CTA mostly repeat one pattern)
def _warp_cost(lanes: tuple, width: int, lanes_per_phase: int, matrix: bool, model: BankModel,
               store: bool) -> int:
    return warp_wavefronts(lanes, width, lanes_per_phase, matrix, model, store)


#: :func:`_cost` answers by content (the access's shape, every thread's offset and guard), for the
#: process: kernels repeat the same thread maps; emptied past :data:`_COSTS_MAX` entries
_COSTS: dict[tuple, tuple[int, int, tuple]] = {}
_COSTS_MAX = 8_192


def _cost(ins: Instr, acc: tuple, offs: list[int], active: list[bool], n: int) -> tuple[int, int, tuple]:
    """(worst wavefronts, that warp's ideal, wavefronts per warp) of ``ins`` over the ``n // 32`` warps;
    (0, 0, ...) when no warp executes it. A function of ``acc``, ``ins``' matrix count, ``offs``,
    ``active``, ``n`` and the bank model in force (:data:`_MODEL`) alone: remembered by them (:data:`_COSTS`)."""
    mats = _matrices(ins)
    key = (_MODEL, acc, mats, n, tuple(offs), tuple(active))
    hit = _COSTS.get(key)
    if hit is None:
        if len(_COSTS) >= _COSTS_MAX:
            _COSTS.clear()
        hit = _COSTS[key] = _cost_of(acc, mats, offs, active, n)
    return hit


def _cost_of(acc: tuple, mats: int, offs: list[int], active: list[bool], n: int) -> tuple[int, int, tuple]:
    """:func:`_cost`, computed."""
    kind, _, width, lanes_per_phase = acc
    used = 8 * mats if mats else 32
    per_warp, worst, ideal = [], 0, 0
    for w in range(max(1, n // 32)):
        full = all(active[32 * w:32 * w + used])    # every lane executes it (no guard): no None to skip
        if full:
            lanes = offs[32 * w:32 * w + used]
            low = min(lanes, default=0) // 128 * 128
            moved = tuple([x - low for x in lanes]) if low else tuple(lanes)
        else:
            lanes = [offs[t] if active[t] else None for t in range(32 * w, 32 * w + used)]
            low = min((x for x in lanes if x is not None), default=0) // 128 * 128   # banks repeat every 128 B
            moved = tuple(None if x is None else x - low for x in lanes)
        cost = _warp_cost(moved, width, lanes_per_phase, bool(mats), _MODEL, kind == "store")
        per_warp.append(cost)
        if cost > worst:
            live, phases = (len(lanes), len(range(0, len(lanes), 8))) if full else _live(lanes, used)
            worst = cost
            ideal = phases if mats else max(1, -(-live * width // _MODEL.row_bytes))
    return worst, ideal, tuple(per_warp)


def _live(lanes: list, used: int) -> tuple[int, int]:
    """``(lanes that execute, phases of 8 lanes with one that executes)`` of one warp's lanes
    (None: the lane's guard is false).

    >>> _live([0, None, 4, None] + [None] * 8, 12)
    (2, 1)
    """
    live = sum(x is not None for x in lanes)
    return live, sum(any(x is not None for x in lanes[i:i + 8]) for i in range(0, used, 8))


def shared_accesses(mod: PtxModule, evals: dict, memo: dict | None = None) -> list[SharedAccess]:
    """Every ``st.shared``/``ld.shared``/``cp.async``/``ldmatrix``/``stmatrix`` of ``mod`` in order,
    with its cost per warp (:class:`SharedAccess`): each thread's address (relative to thread 0) and
    guard are evaluated for every thread of the CTA (``.reqntid``; warp 0 alone when the PTX does not
    state it), and each warp's executing lanes are costed by :func:`verilayout.hw.nvidia.banks.warp_wavefronts`.
    Instructions with the same address register, guard and shape differ only by an immediate offset,
    which moves every lane alike: one evaluation serves them. ``evals``: the evaluator per function.

    >>> from verilayout.frontends.ptx import parse_ptx
    >>> from verilayout.prove.ptx_values import PtxValues
    >>> m = parse_ptx(".version 8.7\\n.entry f()\\n.reqntid 64\\n{\\nmov.u32 %r1, %tid.x;\\n"
    ...               "setp.lt.u32 %p1, %r1, 32;\\nshl.b32 %r2, %r1, 7;\\n@%p1 ld.shared.b32 %r3, [%r2];\\n}")
    >>> a = shared_accesses(m, {"f": PtxValues(m, "f")})[0]
    >>> a.wavefronts, a.per_warp, a.warps
    (32, (32, 0), (0,))
    """
    memo = {} if memo is None else memo
    out: list[SharedAccess] = []
    done: dict[tuple, SharedAccess] = {}
    for ins in mod.instrs:
        if ins.parts[0] not in _ACCESS_HEADS:         # smem_access's own first test, without the call
            continue
        acc = smem_access(ins)
        if acc is None or len(ins.args) <= acc[1]:
            continue
        addr = ins.args[acc[1]]
        ev = evals.get(ins.func)
        if not isinstance(addr, Addr) or not addr.modelled or ev is None:
            continue
        key = (ins.func, addr.base_name, ins.pred, acc, _matrices(ins), ins.parts[0])
        prev = done.get(key)
        if prev is None:
            n = mod.threads_of(ins.func) or 32
            n = 32 * max(1, n // 32)
            offs = lane_byte_offsets(ev, addr.base, ins, memo, n)
            if offs is None:
                prev = SharedAccess(ins, acc[0], acc[2], False)
            else:
                active, guard = thread_guard(ev, ins, memo, n)
                cost, ideal, per_warp = _cost(ins, acc, offs, active, n)
                first = next((w for w, c in enumerate(per_warp) if c), 0)
                lanes = tuple(offs[32 * first + i] - offs[32 * first] for i in range(8))
                prev = SharedAccess(ins, acc[0], acc[2], True, cost, ideal, per_warp, lanes, guard)
            done[key] = prev
        out.append(prev if prev.ins is ins else SharedAccess(ins, prev.kind, prev.width, prev.exact, prev.wavefronts,
                                                             prev.ideal, prev.per_warp, prev.lane_offsets, prev.guard))
    return out


def smem_checks(ctx: PtxContext) -> list[Check]:
    """One ``bank-conflicts`` check per (source line, address register, guard, width, kind) of the
    PTX (:func:`shared_accesses`), compared with the TTGIR figure of the same line where there is one
    (``ctx.plan``; see the module docstring); ``ctx.memo``: lane offsets already found in this file
    (shared with the element checks)."""
    mod, evals, memo = ctx.ptx, ctx.values, ctx.memo
    by_loc: dict[str, list[Check]] = {}
    for c in ctx.plan:
        if c.check == "bank-conflicts" and c.status in ("proved", "counterexample") and c.loc:
            by_loc.setdefault(c.loc, []).append(c)
    seen: dict[tuple, SharedAccess] = {}
    for a in shared_accesses(mod, evals, memo):
        key = (a.ins.loc, address_of(a.ins).base_name, a.kind, a.width,
               a.ins.parts[0], a.ins.pred, _matrices(a.ins))
        seen.setdefault(key, a)
    return [_smem_check(a, by_loc.get(a.ins.loc or "", [])) for a in seen.values()]


def _smem_check(a: SharedAccess, planned: list[Check]) -> Check:
    """The ``bank-conflicts`` check of one access (first instruction of its group)."""
    ins = a.ins
    head = ".".join(ins.parts[:2])
    base = address_of(ins).base_name
    data = {"source": "ptx", "instruction": ins.opcode, "kind": a.kind, "bytes_per_lane": a.width,
            "address_register": base}
    if not a.exact:
        return Check(head, ins.line, ins.loc, "bank-conflicts", "unknown", "note",
                     f"{ins.opcode}: the lanes' addresses are not exact relative to lane 0 "
                     "(they depend on values the evaluator leaves free)", data)
    data.update(wavefronts=a.wavefronts, ideal=a.ideal, lane_offsets=list(a.lane_offsets),
                warps=list(a.warps), warps_in_cta=len(a.per_warp))
    planned = [c for c in planned if _direction(c.op) == a.kind]
    if planned:
        worst = max(planned, key=lambda c: c.data.get("wavefronts", 0) / max(1, c.data.get("ideal", 1)))
        data.update(ttgir_wavefronts=worst.data.get("wavefronts"), ttgir_ideal=worst.data.get("ideal"),
                    ttgir_instruction=worst.data.get("instruction"))
    status = "proved" if a.wavefronts <= a.ideal else "counterexample"
    msg = (f"{ins.opcode} ({a.width} B a lane, address {base}): {a.wavefronts} wavefront(s) per instruction, "
           f"ideal {a.ideal}" + _who(a) + _runtime_note(ins, a, data) + (_versus(a, data) if planned else ""))
    return Check(head, ins.line, ins.loc, "bank-conflicts", status, None if status == "proved" else "warning",
                 msg, data)


def _versus(a: SharedAccess, data: dict) -> str:
    """The TTGIR model's figure beside the PTX's. The two may cost different instructions (the TTGIR
    model one ``ld.shared``/``st.shared`` of the layout's vector, the PTX e.g. an ``ldmatrix.x4``
    that moves four matrices per instruction), so what is compared is the conflict factor,
    wavefronts over the instruction's ideal: ``data["agrees"]`` says whether the two factors are
    equal (the same n-way conflict), else the message names both."""
    tw, ti = data.get("ttgir_wavefronts"), data.get("ttgir_ideal") or 1
    said = f"; the TTGIR model says {tw} for {data['ttgir_instruction']}"
    if not tw or not a.ideal:
        return said
    mine, theirs = a.wavefronts / a.ideal, tw / ti
    data["agrees"] = mine == theirs
    if mine == theirs:
        return said + f" (ideal {ti}): the same {_factor(mine)} conflict"
    return (said + f" (ideal {ti}): a {_factor(theirs)} conflict there, {_factor(mine)} in the PTX (the PTX "
            "moves the data with another instruction than the one the TTGIR model costs)")


def _factor(x: float) -> str:
    return f"{int(x)}-way" if x == int(x) else f"{x:.2f}x"


def _who(a: SharedAccess) -> str:
    """Which warps execute the access, when its guard (a function of ``%tid.x``) excludes some."""
    if a.guard != "evaluated" or len(a.warps) == len(a.per_warp):
        return ""
    ws = ", ".join(str(w) for w in a.warps) or "none"
    return f"; executed by warp(s) {ws} of {len(a.per_warp)} (guard {a.ins.pred} evaluated per thread)"


#: Where the run-time doubling of ``cp.async`` 16-byte copies was measured.
LDGSTS_MEASUREMENT = "hwtests/results/h100-2026-11-26-ldgsts_microbench.txt"


def _runtime_note(ins: Instr, a: SharedAccess, data: dict) -> str:
    """``cp.async`` 16 B: the static figure is a floor; an H100 took up to twice as many at run time
    on copies with the same address pattern (issue timing, not addresses: the LDGSTS microbenchmark)."""
    if ins.parts[0] != "cp" or a.width != 16:
        return ""
    data.update(runtime_wavefronts_up_to=2 * a.wavefronts, runtime_measurement=LDGSTS_MEASUREMENT)
    return (f" (a floor: the hardware may take up to twice that, {2 * a.wavefronts}, at run time, depending "
            f"on issue timing, not on the addresses; measured on an H100, {LDGSTS_MEASUREMENT})")


def _direction(op: str) -> str:
    return "load" if op == "ttg.local_load" else "store"
