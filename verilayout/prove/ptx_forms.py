"""Register values of a PTX function as forms over the threads: the cheap path before z3 terms.

:class:`~verilayout.prove.ptx_values.PtxValues` builds a z3 bit-vector term per register; the
shared-memory checks then ask of an address term only the offsets of the threads relative to
thread 0, and of a guard only its value in each thread. Most addresses Triton emits are the
shared-memory base (and stage offsets, loaded values: symbols) plus a function of ``%tid.x``
(products, shifts, masks and XOR swizzles of its bits). :class:`PtxForms` reads the same
definitions the tracker reads (the same reaching definitions, the same first iteration of a
loop, the same table of :mod:`verilayout.prove.ptx_semantics`, in its numpy domain) and gives
each register a :class:`Form`, one object per distinct form of a function (hash-consed):

* ``CONST``: no symbol at all; ``value`` (``literal``: the tracker's term is a z3 numeral,
  which ``bfe``/``bfi``/``prmt`` need of their position operands; None: not known);
* ``THREAD``: a function of ``%tid.x`` alone; ``vec[t]`` its value in thread ``t`` (``t`` below
  :data:`THREADS`, a CTA's most);
* ``FREE``: no ``%tid.x``; some other symbol (the shared-memory base, a load, a parameter, a
  loop-carried register, an unmodelled instruction); its value is not kept;
* ``SUM``: nested additions (z3 ``bvadd``) whose summands are each ``CONST``, ``THREAD`` or
  ``FREE``, with a ``THREAD`` summand and a ``FREE`` one; ``vec`` the sum of the summands that
  are not ``FREE``.

Where the form is not one of these (a symbol and ``%tid.x`` mixed inside one operation, a
join of branches, a width past 64 bits, a ``shfl`` of such a value) :meth:`PtxForms.reg` is
None: the caller asks the z3 term. Predicates likewise (:meth:`PtxForms.pred`: a Boolean
per thread, ``FREE``, or None).

Law: where :meth:`PtxForms.reg` gives a form for a register, the tracker's term ``e`` of the
same register (``PtxValues.reg``, read at the same instruction) satisfies: ``CONST``: ``e``
has no free symbol and its value is ``value`` (a numeral exactly when ``literal`` is True);
``THREAD``: ``%tid.x`` is ``e``'s only free symbol and ``e[%tid.x := t] == vec[t]``; ``FREE``:
``e`` has a free symbol other than ``%tid.x`` and not ``%tid.x``; ``SUM``: ``e`` is nested
``bvadd``s whose summands each read ``%tid.x`` alone or no ``%tid.x``, and those that read no
other symbol sum to ``vec[t]`` in thread ``t``. So :meth:`PtxForms.offsets` equals what
:func:`verilayout.audit.ptx_smem.lane_byte_offsets` computes from ``e`` (the offsets of the
summands that read ``%tid.x``; the others move every thread alike), and
:meth:`PtxForms.guard` what :func:`verilayout.audit.ptx_smem.thread_guard` computes
(``tests/test_ptx_forms.py`` checks both against the z3 path on every shared-memory access of
the corpora).

>>> from verilayout.frontends.ptx import parse_ptx
>>> from verilayout.prove.ptx_values import PtxValues
>>> m = parse_ptx(".version 8.7\\n.entry f()\\n{\\nmov.u32 %r1, %tid.x;\\nshl.b32 %r2, %r1, 4;\\n"
...               "mov.u32 %r3, global_smem;\\nadd.s32 %r4, %r3, %r2;\\nret;\\n}")
>>> f = PtxForms(PtxValues(m, "f")); a = f.reg("%r4", at=m.instrs[-1])
>>> a.kind, f.offsets(a, 4)
('+', [0, 16, 32, 48])
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from verilayout.dtypes import ptx_bits, ptx_reg_width
from verilayout.hw.nvidia.ptx_model import Imm, Instr, Operand, Pred, PredPair, Reg, Sym, Vec
from verilayout.prove.ptx_semantics import NUMPY, PRED, compute, form as _table_form

__all__ = ["CONST", "THREAD", "FREE", "SUM", "THREADS", "Form", "PtxForms", "type_bits"]

CONST, THREAD, FREE, SUM = "c", "t", "s", "+"
#: The threads a ``THREAD`` or ``SUM`` form holds values of (PTX ISA: at most 1024 in a CTA).
THREADS = 1024
_U64 = np.uint64
_TIDS = np.arange(THREADS, dtype=_U64)
#: an operand the tracker does not model (its instruction's value is a free symbol there)
_UNMODELLED = object()
#: Opcode heads whose position or selector operands the tracker reads only as numerals.
_NEEDS_LITERAL = {"bfe": (1, 2), "bfi": (2, 3), "prmt": (2,)}


@dataclass(frozen=True)
class _Facts:
    """What :class:`PtxForms` reads of its tracker (``PtxValues``'s fields of the same names)."""
    index: dict
    defs: dict
    pdefs: dict
    lane: dict
    pmemo: dict
    flow: bool
    first_iteration: bool
    kernel_inputs: bool
    smem_names: tuple


@dataclass(frozen=True, eq=False)
class Form:
    """One register's value (see the module docstring); ``width`` in bits; ``vec``: ``THREAD``
    and ``SUM`` only (read-only); Booleans: ``width`` 0 (``THREAD``: ``vec`` of bools, ``CONST``:
    ``value`` 0 or 1)."""
    kind: str
    width: int
    value: int | None = None
    literal: bool | None = False
    vec: Any = None


class PtxForms:
    """The forms of one function's registers, read as ``ev`` (a
    :class:`~verilayout.prove.ptx_values.PtxValues`, not one of ``kernel_inputs``) reads them;
    answers kept per register (by the tracker's key: name and reaching definitions)."""

    def __init__(self, ev: Any):
        # what ev reads, held directly; ev itself by a weak reference (ev keeps this object: no
        # reference cycle, so both go when the audit drops ev)
        self._ev = weakref.ref(ev)
        self.ev = _Facts(ev.index, ev.defs, ev.pdefs, ev.lane, ev.pmemo, ev.flow, ev.first_iteration,
                         ev.kernel_inputs, tuple(ev.smem_names))
        self.memo: dict[str, Form | None] = {}
        self.pmemo: dict[str, Form | None] = {}
        self._interned: dict[tuple, Form] = {}
        self._at: int | None = None
        self._depth = 0
        self._in_pred = False

    # ----- forms, one object each ------------------------------------------------------------

    def _make(self, kind: str, width: int, value: int | None = None, literal: bool | None = False,
              vec: Any = None) -> Form:
        """The one :class:`Form` of these fields in this function."""
        key = (kind, width, value, literal, None if vec is None else vec.tobytes())
        hit = self._interned.get(key)
        if hit is None:
            if vec is not None:
                vec.setflags(write=False)
            hit = self._interned[key] = Form(kind, width, value, literal, vec)
        return hit

    def _const(self, v: int, w: int, literal: bool | None) -> Form:
        return self._make(CONST, w, int(v) % (1 << w) if w else int(bool(v)), literal)

    def _thread(self, vec: Any, w: int) -> Form:
        """A ``THREAD`` form of ``vec`` (a full array, or a scalar: the same in every thread)."""
        if w == 0:
            vec = np.asarray(vec, dtype=bool)
            vec = vec.copy() if vec.shape == (THREADS,) else np.broadcast_to(vec, (THREADS,)).copy()
        else:
            vec = _whole(vec, w)
        return self._make(THREAD, w, vec=vec)

    def _free(self, w: int) -> Form:
        return self._make(FREE, w)

    # ----- registers ------------------------------------------------------------------------

    def reg(self, name: str, at: Instr | None = None) -> Form | None:
        """The form of register ``name`` read by instruction ``at`` (as ``PtxValues.reg``), or None."""
        if at is not None:
            saved, self._at = self._at, self.ev.index.get(at.line)
            try:
                return self.reg(name)
            finally:
                self._at = saved
        ev = self.ev
        if ev.kernel_inputs:
            return None
        ds_all = ev.defs.get(name, [])
        if self._in_pred and len(ds_all) > 1:
            return None                     # the tracker reads it where the predicate is first read
        ds = self._ev().reaching(name, self._at) if ev.flow and self._at is not None and len(ds_all) > 1 else ds_all
        key = name if ds is ds_all else name + "@" + ",".join(str(d.line) for d in ds)
        if key in self.memo:
            return self.memo[key]
        if self._depth > 200:
            return None
        w = max(_reg_width(name), 8)
        if ev.first_iteration and len(ds) > 1:
            ds = ds[:1]
        if len(ds) > 1:
            got = None if self._mergeable(ds) else self._free(w)
        elif not ds:
            got = self._free(w)
        else:
            got = self._defined(ds[0], name, w)
        self.memo[key] = got
        return got

    def _mergeable(self, ds: list) -> bool:
        """The tracker may join these definitions (``PtxValues._merge``'s first tests)."""
        if not self.ev.flow or self._at is None or len(ds) > 4:
            return False
        idx = [self.ev.index.get(d.line) for d in ds]
        return not (any(k is None or k >= self._at for k in idx) or any(d.pred for d in ds))

    def _defined(self, d: Instr, name: str, w: int) -> Form | None:
        """The form of the one definition ``d`` of ``name``, at the register's width ``w``."""
        saved = self._at, self._in_pred
        self._at, self._in_pred = self.ev.index.get(d.line), False
        self._depth += 1
        try:
            got = self._instr(d, _reg_width(name), name)
        except (ValueError, TypeError, IndexError, ArithmeticError, KeyError, AssertionError, RecursionError):
            got = None
        finally:
            self._depth -= 1
            self._at, self._in_pred = saved
        if got is _UNMODELLED:
            return self._free(w)
        return None if got is None else self._fit(got, w)

    def _fit(self, f: Form, w: int) -> Form | None:
        """``f`` truncated or zero-extended to ``w`` bits (the tracker's ``fit``)."""
        if f.width == w:
            return f
        if f.kind == CONST:
            return self._const(f.value, w, False)
        if f.kind == FREE:
            return self._free(w)
        if f.kind == THREAD and w <= 64:
            return self._thread(f.vec, w)
        return None

    def operand(self, op: Operand, w: int, at: Instr | None = None) -> Any:
        """The form of a decoded operand at ``w`` bits (as ``PtxValues.operand``): a :class:`Form`,
        None (not known here), or ``_UNMODELLED`` (the tracker has no value for it)."""
        if at is not None:
            saved, self._at = self._at, self.ev.index.get(at.line)
            try:
                return self.operand(op, w)
            finally:
                self._at = saved
        if w > 64:
            return None
        if isinstance(op, Reg):
            if op.name == "%tid.x":
                return self._thread(_TIDS, w)
            f = self.reg(op.name)
            return None if f is None else self._fit(f, w)
        if isinstance(op, Imm):
            return self._const(op.value, w, True)
        if isinstance(op, Sym):
            return self._free(w) if op.name in self.ev.smem_names else _UNMODELLED
        if isinstance(op, Vec) and len(op.items) == 2 and all(isinstance(x, Reg) for x in op.items):
            return self._pair(op.items[0].name, op.items[1].name, w)
        return _UNMODELLED

    def _pair(self, lo_name: str, hi_name: str, w: int) -> Form | None:
        """``{lo, hi}`` (``mov.b64 %rd, {lo, hi}``): ``hi`` above ``lo``, at ``w`` bits."""
        lo, hi = self.reg(lo_name), self.reg(hi_name)
        if lo is None or hi is None or lo.width + hi.width > 64:
            return None
        kinds = {lo.kind, hi.kind}
        if kinds <= {CONST}:
            return self._fit(self._const((hi.value << lo.width) | lo.value, lo.width + hi.width, False), w)
        if kinds <= {CONST, FREE}:
            return self._fit(self._free(lo.width + hi.width), w)
        if kinds <= {CONST, THREAD}:
            v = (_vals(hi) << _U64(lo.width)) | _vals(lo)
            return self._fit(self._thread(v, lo.width + hi.width), w)
        return None

    # ----- one instruction -------------------------------------------------------------------

    def _instr(self, i: Instr, w: int, dest: str) -> Any:
        """The form ``i`` writes to ``dest`` (``PtxValues._instr``'s cases), ``_UNMODELLED`` where
        the tracker has no value, None where the form is not known here."""
        if (i.line, dest) in self.ev.lane:
            return self._lane(i, type_bits(i.parts, w), dest)
        if i.parts[0] == "shfl":
            return self._shfl(i, type_bits(i.parts, w))
        return self._compute(i)

    def _lane(self, i: Instr, tw: int, dest: str) -> Any:
        """One element of a vector unpack ``mov.b64 {a, b}, src``."""
        if i.parts[0] != "mov" or len(i.args) != 2 or not isinstance(i.args[0], Vec):
            return _UNMODELLED
        n = len(i.args[0].items)
        src = self.operand(i.args[1], tw)
        if src is None or src is _UNMODELLED or tw % n:
            return src if src is None else _UNMODELLED
        ew, k = tw // n, self.ev.lane[(i.line, dest)]
        if src.kind == CONST:
            return self._const(src.value >> (ew * k), ew, False)
        if src.kind == FREE:
            return self._free(ew)
        if src.kind == THREAD:
            return self._thread(src.vec >> _U64(ew * k), ew)
        return None

    def _shfl(self, i: Instr, tw: int) -> Any:
        """``shfl.sync.idx`` of a full warp from a constant lane: the source as that lane holds it
        (``PtxValues._shfl_idx``)."""
        src = self.operand(i.args[1], tw) if len(i.args) > 1 else _UNMODELLED
        if i.parts[:3] != ("shfl", "sync", "idx") or len(i.args) != 5 or src is _UNMODELLED:
            return _UNMODELLED
        lane, clamp, mask = (a.value if isinstance(a, Imm) else None for a in i.args[2:5])
        if lane is None or clamp != 31 or mask is None or mask % (1 << 32) != 0xFFFFFFFF:
            return _UNMODELLED
        if src is None or src.kind not in (THREAD, FREE):
            return None
        if src.kind == FREE:
            return src                     # the tracker's term, or its own symbol: no %tid.x either way
        return self._thread(src.vec[(_TIDS & ~_U64(31)) | _U64(lane & 31)], src.width)

    def _source(self, op: Operand, w: int) -> Any:
        if w == PRED:
            return self.pred(op.name) if isinstance(op, Reg) else _UNMODELLED
        return self.operand(op, w)

    def _compute(self, i: Instr) -> Any:
        """What the table computes (``PtxValues._compute``), over forms."""
        f = _form_of(i.parts)
        if f is None or len(i.args) != len(f.sources) + 1:
            return _UNMODELLED
        srcs = [self._source(o, sw) for o, sw in zip(i.args[1:], f.sources)]
        if _UNMODELLED in srcs:
            return _UNMODELLED
        if None in srcs or f.result > 64:
            return None
        head = i.parts[0]
        need = _NEEDS_LITERAL.get(head)
        if need is not None:
            if any(srcs[k].literal is None for k in need):
                return None
            if any(srcs[k].literal is not True for k in need):
                return _UNMODELLED                    # the tracker's bfe/bfi/prmt need numerals
        if head in ("add", "mad"):
            return self._sum(i, srcs, f.result)
        return self._generic(i.parts, srcs, f.result, head == "mov")

    def _generic(self, parts: tuple, srcs: list, w: int, identity: bool) -> Any:
        """An operation that is not an addition at the top of its term: its form by its sources'
        kinds (constants and thread values computed in the numpy domain)."""
        kinds = {s.kind for s in srcs}
        if identity and len(srcs) == 1:
            return srcs[0]
        if kinds <= {CONST}:
            out = compute(NUMPY, parts, [_vals(s) for s in srcs])
            if out is None:
                return _UNMODELLED
            return self._const(int(np.asarray(out).reshape(-1)[0]), w, None if parts[0] in _NEEDS_LITERAL else False)
        if kinds <= {CONST, THREAD}:
            out = compute(NUMPY, parts, [_vals(s) for s in srcs])
            return _UNMODELLED if out is None else self._thread(out, w)
        if kinds <= {CONST, FREE}:
            return self._free(w)
        return None

    def _sum(self, i: Instr, srcs: list, w: int) -> Any:
        """``add`` and ``mad`` (``mul`` then ``add`` in the tracker's term): a ``SUM`` where a thread
        value meets a symbol."""
        if i.parts[0] == "mad":
            mul = ("mul",) + i.parts[1:]
            prod = self._generic(mul, srcs[:2], w, False)
            if prod is None or prod is _UNMODELLED:
                return prod
            terms = [prod, srcs[2]]
        else:
            terms = srcs
        kinds = {t.kind for t in terms}
        if kinds <= {CONST, THREAD} or kinds <= {CONST, FREE}:
            return self._generic(i.parts, terms, w, False) if i.parts[0] == "add" else self._added(terms, w, kinds)
        vec = _U64(0)
        with np.errstate(over="ignore"):
            for t in terms:
                if t.kind != FREE:
                    vec = vec + _vals(t)
        return self._make(SUM, w, vec=_whole(vec, w))

    def _added(self, terms: list, w: int, kinds: set) -> Form:
        """The sum of a ``mad``'s product and addend when no ``SUM`` arises."""
        if kinds <= {CONST}:
            return self._const(sum(t.value for t in terms), w, False)
        if FREE in kinds:
            return self._free(w)
        with np.errstate(over="ignore"):
            return self._thread(_vals(terms[0]) + _vals(terms[1]), w)

    # ----- predicates -------------------------------------------------------------------------

    def pred(self, p: Pred | str) -> Form | None:
        """The form of a guard or predicate register (``PtxValues.pred``): ``THREAD`` (a Boolean
        per thread), ``CONST``, ``FREE`` (reads another symbol, or is one), or None."""
        if isinstance(p, Pred):
            f = self.pred(p.reg)
            if f is None or not p.negated or f.kind == FREE:
                return f
            if f.kind == CONST:
                return self._make(CONST, 0, 1 - f.value, False)
            return self._thread(~f.vec, 0)
        if p in self.pmemo:
            return self.pmemo[p]
        if p in self.ev.pmemo:
            return None                         # the tracker read it already, where it first did
        ds = self.ev.pdefs.get(p, [])
        if len(ds) != 1:
            got = self._make(FREE, 0)
        elif not ds[0].args or isinstance(ds[0].args[0], PredPair):
            got = self._make(FREE, 0)
        else:
            got = self._setp(ds[0])
        self.pmemo[p] = got
        return got

    def _setp(self, d: Instr) -> Form | None:
        saved = self._in_pred
        self._in_pred = True
        self._depth += 1
        try:
            got = self._setp_form(d)
        except (ValueError, TypeError, IndexError, ArithmeticError, KeyError, AssertionError, RecursionError):
            got = None
        finally:
            self._in_pred = saved
            self._depth -= 1
        return got

    def _setp_form(self, d: Instr) -> Form | None:
        f = _form_of(d.parts)
        if f is None or len(d.args) != len(f.sources) + 1:
            return self._make(FREE, 0)
        srcs = [self._source(o, sw) for o, sw in zip(d.args[1:], f.sources)]
        if _UNMODELLED in srcs:
            return self._make(FREE, 0)
        if None in srcs:
            return None
        kinds = {s.kind for s in srcs}
        if kinds & {FREE, SUM}:
            return self._make(FREE, 0)
        out = compute(NUMPY, d.parts, [_vals(s) for s in srcs])
        if kinds <= {CONST}:
            return self._make(CONST, 0, int(bool(np.asarray(out).reshape(-1)[0])), False)
        return self._thread(out, 0)

    # ----- what the shared-memory checks ask ---------------------------------------------------

    def offsets(self, f: Form, n: int) -> list[int] | None:
        """Byte offsets of threads ``0 .. n-1`` relative to thread 0 of the 32-bit address ``f``
        (signed, mod ``2^32``); None when ``f`` is not 32 bits wide or ``n`` is past
        :data:`THREADS`."""
        if f.width != 32 or n > THREADS:
            return None
        if f.kind in (CONST, FREE):
            return [0] * n
        v = f.vec[:n].astype(np.int64)
        d = (v - v[0]) % (1 << 32)
        return np.where(d >= 1 << 31, d - (1 << 32), d).tolist()

    def guard(self, p: Pred, n: int) -> tuple[list[bool], str] | None:
        """``(whether each of threads 0 .. n-1 passes guard p, "evaluated" | "free")`` as
        :func:`verilayout.audit.ptx_smem.thread_guard` says, or None (ask the z3 term)."""
        f = self.pred(p)
        if f is None or n > THREADS:
            return None
        if f.kind == FREE:
            return [True] * n, "free"
        if f.kind == CONST:
            return [bool(f.value)] * n, "evaluated"
        return f.vec[:n].tolist(), "evaluated"


def _vals(f: Form) -> Any:
    """A ``CONST`` or ``THREAD`` form's values in the numpy domain (a scalar, or a thread array)."""
    if f.kind == CONST:
        return np.bool_(f.value) if f.width == 0 else _U64(f.value)
    return f.vec


def _whole(v: Any, w: int) -> Any:
    """``v`` reduced mod ``2^w`` as a full thread array (a new one)."""
    if type(v) is np.ndarray and v.dtype == _U64 and v.shape == (THREADS,):
        return v & _MASK[w]
    return np.broadcast_to(np.asarray(v, dtype=_U64) & _MASK[w], (THREADS,)).copy()


#: ``2^w - 1`` as a word, by ``w``
_MASK = [_U64((1 << w) - 1) for w in range(65)]


@lru_cache(maxsize=1024)
def _form_of(parts: tuple[str, ...]) -> Any:
    """:func:`verilayout.prove.ptx_semantics.form`, once per opcode."""
    return _table_form(parts)


@lru_cache(maxsize=1024)
def type_bits(parts: tuple[str, ...], w: int) -> int:
    """The width of the opcode's last typed part (what ``PtxValues._instr`` reads a vector
    unpack's or a ``shfl``'s source at), else ``w``; once per opcode.

    >>> type_bits(("mov", "b64"), 32), type_bits(("shfl", "sync", "idx", "b32"), 64), type_bits(("mov",), 16)
    (64, 32, 16)
    """
    return next((ptx_bits(p) for p in reversed(parts) if ptx_bits(p)), w)


#: ``dtypes.ptx_reg_width`` memoised per register name (the key: the name).
_reg_width = lru_cache(maxsize=4096)(ptx_reg_width)
