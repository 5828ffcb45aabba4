"""Segmented ``redux.sync``: a reduction over a subset of a warp's lanes that LLVM lowers to one
``redux.sync`` over all 32 lanes per segment, the lanes outside the segment giving the op's
identity, and a per-lane select of the segment's result (part of check ``warp-reduce``).

What the compiler emits (Triton 3.9, NVPTX; a ``tt.reduce`` whose layout puts lanes of other rows
beside the reduced ones, e.g. ``threadsPerWarp = [2, 16]`` reduced over axis 1), per segment ``s``:
an input ``x_s = selp v, c, p`` (or ``selp c, v, p``) with ``c`` an immediate, or ``x_s = and m, v``
with ``m`` a register holding a lane mask of 0 / -1 (``bfe.s32`` of ``%tid``, the identity then 0; an
``and`` with an immediate or with a per-lane value of other bits is data, not a segment);
``r_s = redux.sync x_s``;
and the lane's result ``selp r_0, r_1, q``.

Semantics (PTX ISA 9.7.13.11 ``redux.sync``; 9.7.x ``selp``): every lane of the membermask receives the
op over all lanes' inputs (``.f32`` ``min``/``max`` ignore a NaN input unless ``.NaN`` is given);
``selp d, a, b, p`` is ``a`` where ``p`` holds, else ``b``.

Law: lane ``u`` *takes part* in segment ``s`` when ``x_s(u) = v(u)``; elsewhere its input is ``c``,
which must be an identity of the op (``add``/``or``/``xor`` 0, ``and`` all ones, ``max.u32`` 0,
``max.s32`` -2^31, ``min.u32`` all ones, ``min.s32`` 2^31 - 1, ``max.f32`` -inf or, without ``.NaN``,
a NaN, ``min.f32`` +inf or such a NaN). Lane ``t`` *takes* ``r_s`` when every user of ``r_s`` is a
``selp`` between it and another ``redux.sync`` result whose predicate chooses ``r_s`` in lane ``t``.
Then lane ``t`` of the takers combines exactly the lanes ``P_s`` that take part (``C[t][u] = [u in
P_s]``), which :func:`verilayout.audit.ptx_reductions.lane_fault` checks against the reduce's layout
on the takers' rows. Predicates and masks are evaluated per thread over the CTA (functions of
``%tid``) and must be the same in every warp; a form outside this (another input, another user, a
constant that is not an identity, a result select that is not a function of the lane) leaves the chain
``unchecked``; an input selected or masked on data with no per-lane select of the result is no segment
(the plain full-warp law applies).

>>> identity_ok(("redux", "sync", "max", "s32"), -2**31), identity_ok(("redux", "sync", "add", "s32"), 1)
(True, False)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from verilayout.hw.nvidia.ptx_model import Imm, Instr, Reg

_ALL = 0xFFFFFFFF
_INT = {("add", "s32"): (0,), ("add", "u32"): (0,), ("or", "b32"): (0,), ("xor", "b32"): (0,),
        ("and", "b32"): (_ALL,), ("max", "u32"): (0,), ("max", "s32"): (0x80000000,),
        ("min", "u32"): (_ALL,), ("min", "s32"): (0x7FFFFFFF,)}
_NEG_INF, _POS_INF = 0xFF800000, 0x7F800000


def _is_nan(bits: int) -> bool:
    return (bits >> 23) & 0xFF == 0xFF and bits & 0x7FFFFF != 0


def identity_ok(parts: tuple[str, ...], c: int) -> bool:
    """Whether the 32-bit constant ``c`` is an identity of ``redux.sync`` of opcode ``parts`` (module law).

    >>> identity_ok(("redux", "sync", "max", "f32"), 0x7FC00000), identity_ok(("redux", "sync", "max", "NaN", "f32"), 0x7FC00000)
    (True, False)
    """
    bits = c & _ALL
    op, typ = parts[2], parts[-1]
    if typ == "f32" and op in ("max", "min"):
        inf = _NEG_INF if op == "max" else _POS_INF
        return bits == inf or (_is_nan(bits) and "NaN" not in parts)
    return bits in _INT.get((op, typ), ())


@dataclass(frozen=True)
class Segment:
    """One segmented ``redux.sync``: per lane of a warp, whether it takes part (``part``) and whether it
    takes the result (``takers``); ``value``: the register the lanes that take part give."""
    part: tuple[bool, ...]
    takers: tuple[bool, ...]
    value: str = ""

    def counts(self) -> np.ndarray:
        """``C[t][u]``: 1 where lane ``u`` takes part (every lane receives the same combination)."""
        return np.repeat(np.array(self.part, dtype=np.int64)[None, :], 32, axis=0)

    def describe(self) -> str:
        """The lanes, in words, for messages."""
        def lanes(xs: tuple[bool, ...]) -> str:
            return "[" + ", ".join(str(i) for i, x in enumerate(xs) if x) + "]"
        return f"lanes {lanes(self.part)} take part, lanes {lanes(self.takers)} take the result"


def _per_lane(run: Any, op: Any, at: Instr, pred: bool = False) -> np.ndarray | None:
    """``op``'s value per lane (``run`` over the CTA's threads), when it is a function of ``%tid`` that
    is the same in every warp; else None."""
    v = run.per_thread(op, at, pred=pred) if run is not None else None
    if v is None or len(v) % 32:
        return None
    warps = v.reshape(-1, 32)
    return warps[0] if bool(np.all(warps == warps[0])) else None


def _participants(x: str, defs: dict, run: Any) -> tuple[np.ndarray, int, str] | None:
    """(the lanes whose value the redux input ``x`` carries, the constant the others give, the value's
    register), or None when
    the input is no per-lane form (a select or mask on data is the reduce operand's own value: a real
    segment also has a per-lane select of its result, :func:`_takers`, so the pair is never missed)."""
    ds = defs.get(x, [])
    if len(ds) != 1:
        return None
    d = ds[0]
    if d.head == "selp" and len(d.args) == 4 and sum(isinstance(a, Imm) for a in d.args[1:3]) == 1:
        p = _per_lane(run, d.args[3], d, pred=True)
        if p is None:                # a select on data (``tl.where``) is the reduce operand's own value
            return None
        first = isinstance(d.args[2], Imm)
        c, v = (d.args[2], d.args[1]) if first else (d.args[1], d.args[2])
        return (p != 0) if first else (p == 0), c.value, getattr(v, "name", "")
    if d.head == "and" and len(d.args) == 3 and all(isinstance(a, Reg) for a in d.args[1:3]):
        masks = [_per_lane(run, a, d) for a in d.args[1:3]]
        if sum(m is not None for m in masks) != 1:
            return None
        k = next(i for i, m in enumerate(masks) if m is not None)
        m = masks[k] % (1 << 32)
        return (m == _ALL, 0, d.args[2 - k].name) if bool(np.all((m == 0) | (m == _ALL))) else None
    return None


def _takers(dest: str, defs: dict, uses: dict, run: Any) -> np.ndarray | str | None:
    """The lanes that take ``dest`` (a ``redux.sync`` result) through its ``selp`` users, a reason when
    they cannot be told, None when no user selects it against another ``redux.sync`` result."""
    users = uses.get(dest, [])
    sel = [u for u in users if u.head == "selp" and len(u.args) == 4 and
           any(isinstance(a, Reg) and a.name == dest for a in u.args[1:3])]
    other = [a for u in sel for a in u.args[1:3] if isinstance(a, Reg) and a.name != dest]
    if not sel or not any(d.head == "redux" for a in other for d in defs.get(a.name, [])):
        return None
    if len(sel) != len(users):
        return f"its result is also read other than by the per-lane select (PTX line {sel[0].line})"
    got = None
    for u in sel:
        p = _per_lane(run, u.args[3], u, pred=True)
        if p is None:
            return f"the select of its result (PTX line {u.line}) is not a function of the lane"
        mine = (p != 0) if u.args[1] == Reg(dest) else (p == 0)
        if got is not None and not np.array_equal(got, mine):
            return f"the selects of its result choose it in different lanes (PTX line {u.line})"
        got = mine
    return got


def segment(ins: Instr, defs: dict, uses: dict, run: Any) -> Segment | str | None:
    """The :class:`Segment` of ``redux.sync`` ``ins`` (module law), a reason it is ``unchecked``, or None
    when it is a plain full-warp ``redux.sync`` (its input and its users are no per-lane form).

    >>> r = Instr("redux.sync.add.s32", (), 1, parts=("redux", "sync", "add", "s32"),
    ...           args=(Reg("%r2"), Reg("%r1"), Imm(-1)))
    >>> segment(r, {}, {}, None) is None
    True
    """
    regs = [a.name for a in ins.args[:2] if isinstance(a, Reg)]
    if len(regs) < 2:
        return None
    part = _participants(regs[1], defs, run)
    takers = _takers(regs[0], defs, uses, run)
    if part is None and takers is None:
        return None
    if isinstance(takers, str):
        return f"a segmented redux.sync: {takers}"
    if part is None or takers is None:
        side = "its input is not selected per lane" if part is None else "no per-lane select takes its result"
        return f"a segmented redux.sync: {side}"
    lanes, c, value = part
    if not identity_ok(ins.parts, c):
        return (f"a segmented redux.sync: the lanes outside the segment give {c & _ALL:#x}, not an identity of "
                f"{ins.opcode}")
    return Segment(tuple(bool(x) for x in lanes), tuple(bool(x) for x in takers), value)
