"""What each PTX integer instruction computes: one table, evaluated in two domains.

The table (:data:`TABLE`) says, for each integer opcode of the PTX ISA (section 9.7.1, integer
arithmetic; 9.7.8, logic and shift; 9.7.9.21, ``cvt``; 9.7.9.7, ``prmt``; 9.7.7, ``selp`` and
``setp``), at which widths its sources are read (:func:`form`) and what it computes from them
(:func:`compute`), written once over a small set of word operations. Two domains give those
operations a meaning: :data:`Z3` (z3 bit-vector terms: the proofs of
:mod:`verilayout.prove.ptx_values`) and :data:`NUMPY` (``uint64`` arrays over threads, each value
reduced mod ``2^width``: the concrete runs of :mod:`verilayout.simulate.ptx_run`).

Law: for an opcode ``parts`` with ``f = form(parts)`` and sources ``xs`` (terms of the widths
``f.sources``; a :data:`PRED` source is a Boolean), ``compute(Z3, parts, xs)`` with its symbols
given values ``vs`` equals ``compute(NUMPY, parts, vs)`` (``tests/test_ptx_semantics.py`` checks it,
and both against the ISA's definitions, on random values). Where the ISA leaves a result
unspecified (division by zero) both domains give SMT-LIB's (``x / 0`` all ones unsigned, ``-1`` or
``1`` signed; ``x % 0 == x``). A z3 ``bfe``/``bfi``/``prmt`` needs its position, length or selector
to be a constant (else None: not modelled); an opcode or modifier not in the table is None.

>>> import z3, numpy as np
>>> x = z3.BitVec("x", 32)
>>> compute(Z3, ("shr", "s32"), [x, z3.BitVecVal(4, 32)]).sexpr(), compute(NUMPY, ("shr", "s32"), [np.array([0xFFFFFFF0], dtype=np.uint64), np.uint64(4)]).tolist()
('(bvashr x #x00000004)', [4294967295])
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

import numpy as np
import z3

from verilayout.prove import z3_api as api

__all__ = ["PRED", "Form", "Z3", "NUMPY", "Z3Words", "NumpyWords", "TABLE", "form", "compute", "int_type", "numeral"]

#: A source (or result) that is a predicate: a z3 Boolean, or a numpy ``bool`` array.
PRED = 0

#: Opcode modifiers that do not change an integer result (``.cc`` writes the carry flag as well,
#: which is not modelled: the value is the same).
_NEUTRAL = frozenset({"cc"})
_U64 = np.uint64
_MASKS = np.array([(1 << k) - 1 for k in range(64)] + [(1 << 64) - 1], dtype=np.uint64)


@dataclass(frozen=True)
class Form:
    """How an instruction reads its operands: ``sources`` the width in bits of each source, in order
    (:data:`PRED`: a predicate), ``result`` the width of what it writes (:data:`PRED`: a predicate).

    >>> form(("mad", "wide", "u32"))
    Form(sources=(32, 32, 64), result=64)
    """
    sources: tuple[int, ...]
    result: int


def int_type(part: str) -> tuple[int, bool] | None:
    """``(bits, signed)`` of an integer PTX type suffix (``u32``, ``s64``, ``b16``; ``pred`` is one
    unsigned bit), else None (floats included).

    >>> int_type("s32"), int_type("b64"), int_type("pred"), int_type("f32")
    ((32, True), (64, False), (1, False), None)
    """
    if part == "pred":
        return 1, False
    if len(part) >= 2 and part[0] in "bsu" and part[1:] in ("8", "16", "32", "64"):
        return int(part[1:]), part[0] == "s"
    return None


# ----- the two domains ----------------------------------------------------------------------------

class _Bitwise:
    """``and``, ``or``, ``xor``: the same operators on z3 terms and on numpy words (no width or
    sign to honour)."""

    def and_(self, a, b, w):
        return a & b

    def or_(self, a, b, w):
        return a | b

    def xor(self, a, b, w):
        return a ^ b


#: z3 numerals by (value, width): z3 hash-conses its terms, so one binding object per numeral
#: serves every caller (building one costs a sort and a numeral through the binding)
_NUMERALS: dict[tuple[int, int], z3.BitVecRef] = {}


def numeral(v: int, w: int) -> z3.BitVecRef:
    """``z3.BitVecVal(v % 2^w, w)`` (the same term), one binding object per value and width.

    >>> numeral(-1, 8).as_long(), numeral(3, 32) is numeral(3, 32)
    (255, True)
    """
    key = (v, w)
    hit = _NUMERALS.get(key)
    if hit is None:
        if len(_NUMERALS) >= 1 << 16:
            _NUMERALS.clear()
        hit = _NUMERALS[key] = z3.BitVecVal(v % (1 << w), w)
    return hit


class Z3Words(_Bitwise):
    """The z3 domain: a value of width ``w`` is a z3 bit-vector term of ``w`` bits, a predicate a
    z3 Boolean. Each operation builds the term z3 defines (``bvadd``, ``bvlshr``, ...); widths are
    the terms' own.

    >>> Z3.add(z3.BitVecVal(3, 8), z3.BitVecVal(255, 8), 8).sexpr()
    '(bvadd #x03 #xff)'
    """

    def const(self, v: int, w: int) -> z3.BitVecRef:
        return numeral(v, w)

    def constant(self, a: Any) -> int | None:
        """``a``'s value when it is a literal (no simplification), else None."""
        return a.as_long() if z3.is_bv_value(a) else None

    def add(self, a, b, w):
        got = api.bv_binary("bvadd", a, b)
        return a + b if got is None else got

    def sub(self, a, b, w):
        got = api.bv_binary("bvsub", a, b)
        return a - b if got is None else got

    def mul(self, a, b, w):
        got = api.bv_binary("bvmul", a, b)
        return a * b if got is None else got

    def and_(self, a, b, w):
        got = api.bv_binary("bvand", a, b)
        return a & b if got is None else got

    def or_(self, a, b, w):
        got = api.bv_binary("bvor", a, b)
        return a | b if got is None else got

    def xor(self, a, b, w):
        got = api.bv_binary("bvxor", a, b)
        return a ^ b if got is None else got

    def neg(self, a, w):
        return -a

    def not_(self, a, w):
        return ~a

    def shl(self, a, n, w):
        got = api.bv_binary("bvshl", a, n)
        return a << n if got is None else got

    def lshr(self, a, n, w):
        got = api.bv_binary("bvlshr", a, n)
        return z3.LShR(a, n) if got is None else got

    def ashr(self, a, n, w):
        got = api.bv_binary("bvashr", a, n)
        return a >> n if got is None else got

    def ext(self, a, f: int, t: int, signed: bool):
        return a if t == f else (z3.SignExt(t - f, a) if signed else z3.ZeroExt(t - f, a))

    def extract(self, a, hi: int, lo: int, w: int):
        return z3.Extract(hi, lo, a)

    def cmp(self, op: str, a, b, w):
        return {"eq": lambda: a == b, "ne": lambda: a != b, "ult": lambda: z3.ULT(a, b),
                "ule": lambda: z3.ULE(a, b), "ugt": lambda: z3.UGT(a, b), "uge": lambda: z3.UGE(a, b),
                "slt": lambda: a < b, "sle": lambda: a <= b, "sgt": lambda: a > b,
                "sge": lambda: a >= b}[op]()

    def ite(self, c, a, b):
        return z3.If(c, a, b)

    def div(self, a, b, w, signed):
        return a / b if signed else z3.UDiv(a, b)

    def rem(self, a, b, w, signed):
        return z3.SRem(a, b) if signed else z3.URem(a, b)

    def logic(self, op: str, p, q=None):
        return {"and": z3.And, "or": z3.Or, "xor": z3.Xor}[op](p, q) if op != "not" else z3.Not(p)

    def bfe(self, a, pos, ln, w, signed):
        """``bfe`` with constant position and length (PTX ISA ``bfe``); None otherwise."""
        p, n = self.constant(pos), self.constant(ln)
        if p is None or n is None:
            return None
        p, n = p & 0xFF, n & 0xFF
        if n == 0 or (p >= w and not signed):
            return self.const(0, w)
        if p >= w:                                       # every bit is the sign bit a[msb]
            return z3.SignExt(w - 1, z3.Extract(w - 1, w - 1, a))
        take = min(n, w - p)
        field = z3.Extract(p + take - 1, p, a)
        return z3.SignExt(w - take, field) if signed else z3.ZeroExt(w - take, field)

    def bfi(self, a, b, pos, ln, w):
        """``bfi`` with constant position and length (PTX ISA ``bfi``); None otherwise."""
        p, n = self.constant(pos), self.constant(ln)
        if p is None or n is None:
            return None
        p, n = p & 0xFF, n & 0xFF
        take = min(n, max(w - p, 0))
        if take == 0:
            return b
        field = ((1 << take) - 1) << p
        return (b & z3.BitVecVal(~field % (1 << w), w)) | ((a << p) & field)

    def prmt(self, a, b, c):
        """``prmt.b32`` (default mode) with a constant selector; None otherwise."""
        sel = self.constant(c)
        if sel is None:
            return None
        both = z3.Concat(b, a)
        out = []
        for k in range(3, -1, -1):
            s = (sel >> (4 * k)) & 0xF
            lo = 8 * (s & 7)
            out.append(z3.SignExt(7, z3.Extract(lo + 7, lo + 7, both)) if s & 8 else z3.Extract(lo + 7, lo, both))
        return z3.Concat(*out)


class NumpyWords(_Bitwise):
    """The numpy domain: a value of width ``w`` is an array (or scalar) of ``uint64`` words reduced
    mod ``2^w`` for ``w <= 64``, of exact Python integers (an object array) past 64 bits; a
    predicate is a ``bool`` array. Sums, products and negations wrap and are masked to their width;
    shifts by the width or more give 0 (or the sign, arithmetic right shifts).

    >>> NUMPY.add(np.array([3], dtype=np.uint64), np.uint64(255), 8).tolist()
    [2]
    """

    @staticmethod
    def _m(w: int):
        return _U64((1 << w) - 1) if w <= 64 else (1 << w) - 1

    def const(self, v: int, w: int):
        return _U64(v % (1 << w)) if w <= 64 else v % (1 << w)

    def constant(self, a: Any) -> int | None:
        return None                                     # the numpy domain takes every value as it comes

    def add(self, a, b, w):
        with np.errstate(over="ignore"):
            return (a + b) & self._m(w)

    def sub(self, a, b, w):
        with np.errstate(over="ignore"):
            return (a - b) & self._m(w)

    def mul(self, a, b, w):
        with np.errstate(over="ignore"):
            return (a * b) & self._m(w)

    def neg(self, a, w):
        with np.errstate(over="ignore"):
            return (self.const(0, w) - a) & self._m(w)

    def not_(self, a, w):
        return ~a & self._m(w)

    def _count(self, n, w):
        """Shift counts capped below the word size (numpy's shifts are undefined past it)."""
        return np.minimum(n, w) if w > 64 else np.minimum(n, _U64(63))

    def shl(self, a, n, w):
        with np.errstate(over="ignore"):
            return np.where(n >= w, self.const(0, w), (a << self._count(n, w)) & self._m(w))

    def lshr(self, a, n, w):
        return np.where(n >= w, self.const(0, w), a >> self._count(n, w))

    def ashr(self, a, n, w):
        if w > 64:
            s = self._signed(a, w)
            return np.asarray(s >> np.minimum(n, w - 1), dtype=object) & self._m(w)
        s = self._signed(a, w)
        return (s >> np.minimum(n, _U64(w - 1)).astype(np.int64)).astype(_U64) & self._m(w)

    def _signed(self, a, w):
        """Two's-complement values of ``w``-bit words (``int64``, or exact integers past 64 bits)."""
        if w > 64 or (isinstance(a, np.ndarray) and a.dtype == object):
            return np.where((a >> (w - 1)) & 1, a - (1 << w), a)
        a = np.asarray(a, dtype=_U64)
        sh = _U64(64 - w)
        return (a << sh).view(np.int64) >> np.int64(64 - w)

    def ext(self, a, f, t, signed):
        if t > 64 and not (isinstance(a, np.ndarray) and a.dtype == object):
            a = np.asarray(a, dtype=_U64).astype(object)
        if not signed or t == f:
            return a
        top = (a >> (f - 1)) & 1
        if t > 64:                                       # exact integers: keep the arrays of objects
            high = ((1 << t) - 1) & ~((1 << f) - 1)
            return np.where(top == 1, np.asarray(a | high, dtype=object), np.asarray(a, dtype=object))
        return np.where(top == 1, a | (self._m(t) & ~self._m(f)), a)

    def extract(self, a, hi, lo, w):
        v = (a >> lo) & self._m(hi - lo + 1)
        if w > 64 and hi - lo + 1 <= 64:
            v = np.asarray(v).astype(_U64)
        return v

    def cmp(self, op, a, b, w):
        if op[0] == "s":
            a, b = self._signed(a, w), self._signed(b, w)
            op = op[1:]
        elif op[0] == "u":
            op = op[1:]
        return np.asarray({"eq": lambda: a == b, "ne": lambda: a != b, "lt": lambda: a < b,
                           "le": lambda: a <= b, "gt": lambda: a > b, "ge": lambda: a >= b}[op](), dtype=bool)

    def ite(self, c, a, b):
        return np.where(c, a, b)

    def _divmod(self, a, b, w, signed):
        m = self._m(w)
        zero = b == 0
        one = self.const(1, w)
        if not signed:
            b1 = np.where(zero, one, b)
            return np.where(zero, m, a // b1), np.where(zero, a, a % b1)
        with np.errstate(over="ignore"):
            na, nb = (a >> (w - 1)) & 1 == 1, (b >> (w - 1)) & 1 == 1
            ua = np.where(na, (self.const(0, w) - a) & m, a)
            ub = np.where(nb, (self.const(0, w) - b) & m, b)
            ub1 = np.where(zero, one, ub)
            uq, ur = ua // ub1, ua % ub1
            q = np.where(na ^ nb, (self.const(0, w) - uq) & m, uq)
            r = np.where(na, (self.const(0, w) - ur) & m, ur)
        return np.where(zero, np.where(na, one, m), q), np.where(zero, a, r)

    def div(self, a, b, w, signed):
        return self._divmod(a, b, w, signed)[0]

    def rem(self, a, b, w, signed):
        return self._divmod(a, b, w, signed)[1]

    def logic(self, op, p, q=None):
        return {"and": lambda: p & q, "or": lambda: p | q, "xor": lambda: p ^ q, "not": lambda: ~p}[op]()

    def bfe(self, a, pos, ln, w, signed):
        """``bfe`` per thread (PTX ISA ``bfe``: position and length are their low 8 bits)."""
        if w > 64:
            return None
        p, n, inside, take = _span(pos, ln, w)
        keep = _MASKS[take.astype(np.intp)]
        field = np.where(inside, a >> np.minimum(p, _U64(63)), _U64(0)) & keep
        if not signed:
            return field
        at = np.minimum(p + n - _U64(1), _U64(w - 1))
        sbit = np.where(n == 0, _U64(0), (a >> np.minimum(at, _U64(63))) & _U64(1))
        return field | np.where(sbit == 1, self._m(w) & ~keep, _U64(0))

    def bfi(self, a, b, pos, ln, w):
        """``bfi`` per thread (PTX ISA ``bfi``: the low ``len`` bits of ``a`` into ``b`` at ``pos``)."""
        if w > 64:
            return None
        p, _, inside, take = _span(pos, ln, w)
        sh = np.minimum(p, _U64(63))
        with np.errstate(over="ignore"):
            field = np.where(inside, (_MASKS[take.astype(np.intp)] << sh) & self._m(w), _U64(0))
            return (b & ~field & self._m(w)) | ((a << sh) & field)

    def prmt(self, a, b, c):
        """``prmt.b32`` (default mode) per thread."""
        both = a | (b << _U64(32))
        out = np.zeros(np.broadcast(a, b, c).shape, dtype=_U64)
        for k in range(4):
            s = (c >> _U64(4 * k)) & _U64(0xF)
            byte = (both >> ((s & _U64(7)) * _U64(8))) & _U64(0xFF)
            byte = np.where(s & _U64(8), np.where(byte & _U64(0x80), _U64(0xFF), _U64(0)), byte)
            out |= byte << _U64(8 * k)
        return out


def _span(pos: Any, ln: Any, w: int) -> tuple:
    """A bit field's ``(position, length, position inside the word, bits inside the word)`` per
    thread, position and length their low 8 bits (PTX ISA ``bfe``/``bfi``)."""
    p, n = np.asarray(pos, dtype=_U64) & _U64(0xFF), np.asarray(ln, dtype=_U64) & _U64(0xFF)
    inside = p < w
    return p, n, inside, np.minimum(n, np.where(inside, _U64(w) - np.minimum(p, _U64(w)), _U64(0)))


#: The z3 domain (terms for proofs).
Z3 = Z3Words()
#: The numpy domain (words over threads).
NUMPY = NumpyWords()


# ----- the table ----------------------------------------------------------------------------------

def _amount(d: Any, n: Any, w: int) -> Any:
    """A ``.u32`` shift count as a ``w``-bit count: counts of ``w`` or more shift everything out
    (PTX ISA ``shl``/``shr``: "shift amounts greater than the register width N are clamped to N")."""
    k = d.constant(n)
    if k is not None:
        return d.const(min(k, w), w)
    if w >= 32:
        return d.ext(n, 32, w, False)
    big = d.cmp("uge", n, d.const(w, 32), 32)
    return d.extract(d.ite(big, d.const(w, 32), n), w - 1, 0, 32)


def _wide(d: Any, a: Any, b: Any, w: int, s: bool) -> Any:
    """The ``2w``-bit product of two ``w``-bit words (signed or not)."""
    return d.mul(d.ext(a, w, 2 * w, s), d.ext(b, w, 2 * w, s), 2 * w)


def _hi(d: Any, a: Any, b: Any, w: int, s: bool) -> Any:
    return d.extract(_wide(d, a, b, w, s), 2 * w - 1, w, 2 * w)


def _minmax(d: Any, a: Any, b: Any, w: int, s: bool, least: bool) -> Any:
    lt = d.cmp("slt" if s else "ult", a, b, w)
    return d.ite(lt, a, b) if least else d.ite(lt, b, a)


# Each entry: (source widths, result width) as functions of the type's width ``w``, and the value
# from the domain ``d``, ``w``, signedness ``s`` and the sources (PTX ISA section 9.7.1 unless said).
_Entry = tuple[Callable[[int], tuple[int, ...]], Callable[[int], int], Callable[..., Any]]
_W2: Callable[[int], tuple[int, ...]] = lambda w: (w, w)          # noqa: E731
_SAME: Callable[[int], int] = lambda w: w                         # noqa: E731

#: The integer opcodes, keyed by head (``mul``/``mad`` also by ``lo``/``hi``/``wide``).
TABLE: dict[str, _Entry] = {
    "mov": (lambda w: (w,), _SAME, lambda d, w, s, a: a),
    "add": (_W2, _SAME, lambda d, w, s, a, b: d.add(a, b, w)),
    "sub": (_W2, _SAME, lambda d, w, s, a, b: d.sub(a, b, w)),
    "mul.lo": (_W2, _SAME, lambda d, w, s, a, b: d.mul(a, b, w)),
    "mul.hi": (_W2, _SAME, lambda d, w, s, a, b: _hi(d, a, b, w, s)),
    "mul.wide": (_W2, lambda w: 2 * w, lambda d, w, s, a, b: _wide(d, a, b, w, s)),
    "mad.lo": (lambda w: (w, w, w), _SAME, lambda d, w, s, a, b, c: d.add(d.mul(a, b, w), c, w)),
    "mad.hi": (lambda w: (w, w, w), _SAME, lambda d, w, s, a, b, c: d.add(_hi(d, a, b, w, s), c, w)),
    "mad.wide": (lambda w: (w, w, 2 * w), lambda w: 2 * w,
                 lambda d, w, s, a, b, c: d.add(_wide(d, a, b, w, s), c, 2 * w)),
    "neg": (lambda w: (w,), _SAME, lambda d, w, s, a: d.neg(a, w)),
    "abs": (lambda w: (w,), _SAME, lambda d, w, s, a: d.ite(d.cmp("slt", a, d.const(0, w), w), d.neg(a, w), a)),
    "min": (_W2, _SAME, lambda d, w, s, a, b: _minmax(d, a, b, w, s, True)),
    "max": (_W2, _SAME, lambda d, w, s, a, b: _minmax(d, a, b, w, s, False)),
    "div": (_W2, _SAME, lambda d, w, s, a, b: d.div(a, b, w, s)),
    "rem": (_W2, _SAME, lambda d, w, s, a, b: d.rem(a, b, w, s)),
    # 9.7.8: logic and shift (on .pred: the Boolean operations on one-bit words)
    "and": (_W2, _SAME, lambda d, w, s, a, b: d.and_(a, b, w)),
    "or": (_W2, _SAME, lambda d, w, s, a, b: d.or_(a, b, w)),
    "xor": (_W2, _SAME, lambda d, w, s, a, b: d.xor(a, b, w)),
    "not": (lambda w: (w,), _SAME, lambda d, w, s, a: d.not_(a, w)),
    "shl": (lambda w: (w, 32), _SAME, lambda d, w, s, a, n: d.shl(a, _amount(d, n, w), w)),
    "shr": (lambda w: (w, 32), _SAME,
            lambda d, w, s, a, n: (d.ashr if s else d.lshr)(a, _amount(d, n, w), w)),
    # 9.7.1.x bfe / bfi: position and length are .u32 (their low 8 bits count)
    "bfe": (lambda w: (w, 32, 32), _SAME, lambda d, w, s, a, p, n: d.bfe(a, p, n, w, s)),
    "bfi": (lambda w: (w, w, 32, 32), _SAME, lambda d, w, s, a, b, p, n: d.bfi(a, b, p, n, w)),
    # 9.7.9.7 prmt (default mode, .b32 only)
    "prmt": (lambda w: (32, 32, 32), _SAME, lambda d, w, s, a, b, c: d.prmt(a, b, c) if w == 32 else None),
    # 9.7.7.1 selp: a where the predicate holds, else b
    "selp": (lambda w: (w, w, PRED), _SAME, lambda d, w, s, a, b, c: d.ite(c, a, b)),
}

_SETP = {"eq": ("eq", "eq"), "ne": ("ne", "ne"), "lt": ("ult", "slt"), "le": ("ule", "sle"),
         "gt": ("ugt", "sgt"), "ge": ("uge", "sge"), "lo": ("ult", "ult"), "ls": ("ule", "ule"),
         "hi": ("ugt", "ugt"), "hs": ("uge", "uge")}
#: Opcodes whose value does not depend on the type's meaning (a copy, a select): floats allowed.
_UNTYPED = ("mov", "selp")


def _key(parts: tuple[str, ...]) -> tuple[str, tuple[int, bool], tuple[str, ...]] | None:
    """``(table key, (width, signed), the other modifiers)`` of a generic opcode, else None."""
    return _key_of(tuple(parts))


@lru_cache(maxsize=4096)   # key: an opcode's parts (a few dozen distinct per file)
def _key_of(parts: tuple[str, ...]) -> tuple[str, tuple[int, bool], tuple[str, ...]] | None:
    """:func:`_key`, computed."""
    if not parts:
        return None
    head = parts[0]
    ty = int_type(parts[-1]) if len(parts) > 1 else None
    if ty is None and head in _UNTYPED and len(parts) > 1 and parts[-1] in ("f16", "f32", "f64"):
        ty = (int(parts[-1][1:]), False)
    if ty is None:
        return None
    mods = parts[1:-1]
    if head in ("mul", "mad"):
        size = [m for m in mods if m in ("lo", "hi", "wide")]
        if len(size) != 1:
            return None
        head = f"{head}.{size[0]}"
        mods = tuple(m for m in mods if m not in ("lo", "hi", "wide"))
    if head not in TABLE or any(m not in _NEUTRAL for m in mods):
        return None
    return head, ty, mods


def _cvt_types(parts: tuple[str, ...]) -> tuple[tuple[int, bool], tuple[int, bool]] | None:
    """``(destination type, source type)`` of an integer-to-integer ``cvt`` without modifiers."""
    if len(parts) != 3:
        return None
    dst, src = int_type(parts[1]), int_type(parts[2])
    return None if dst is None or src is None or 1 in (dst[0], src[0]) else (dst, src)


def _setp_type(parts: tuple[str, ...]) -> tuple[str, str | None, tuple[int, bool]] | None:
    """``(comparison, combining operation or None, type)`` of an integer ``setp``."""
    if len(parts) not in (3, 4) or parts[1] not in _SETP:
        return None
    ty = int_type(parts[-1])
    comb = parts[2] if len(parts) == 4 else None
    if ty is None or ty[0] == 1 or comb not in (None, "and", "or", "xor"):
        return None
    return parts[1], comb, ty


def form(parts: tuple[str, ...]) -> Form | None:
    """How the integer instruction with opcode ``parts`` (``("mul", "wide", "s32")``) reads its
    sources and how wide its result is; None for an opcode the table does not hold (floats,
    saturation, ``.x`` extended forms, memory and control instructions).

    Law: ``len(form(p).sources)`` is the number of source operands of ``p`` in the PTX ISA.

    >>> form(("shl", "b64")), form(("setp", "lt", "and", "s32")).sources, form(("add", "f32"))
    (Form(sources=(64, 32), result=64), (32, 32, 0), None)
    """
    return _form_of(tuple(parts))


@lru_cache(maxsize=4096)   # key: an opcode's parts (a few dozen distinct per file)
def _form_of(parts: tuple[str, ...]) -> Form | None:
    """:func:`form`, computed."""
    if parts and parts[0] == "cvt":
        ts = _cvt_types(parts)
        return None if ts is None else Form((ts[1][0],), ts[0][0])
    if parts and parts[0] == "setp":
        st = _setp_type(parts)
        if st is None:
            return None
        w = st[2][0]
        return Form((w, w) + ((PRED,) if st[1] else ()), PRED)
    k = _key(parts)
    if k is None:
        return None
    srcs, res, _ = TABLE[k[0]]
    return Form(srcs(k[1][0]), res(k[1][0]))


def compute(d: Any, parts: tuple[str, ...], srcs: list) -> Any:
    """What the instruction ``parts`` computes from its sources ``srcs`` (read at the widths of
    :func:`form`) in the domain ``d`` (:data:`Z3` or :data:`NUMPY`); None when :func:`form` is None
    or the domain does not model this case (a z3 ``bfe`` at a variable position).

    >>> import numpy as np
    >>> compute(NUMPY, ("mul", "hi", "u32"), [np.uint64(0x80000000), np.uint64(6)]).item()
    3
    """
    if parts and parts[0] == "cvt":
        ts = _cvt_types(parts)
        if ts is None or len(srcs) != 1:
            return None
        (dw, _), (sw, ss) = ts
        return d.ext(srcs[0], sw, dw, ss) if dw > sw else d.extract(srcs[0], dw - 1, 0, sw)
    if parts and parts[0] == "setp":
        st = _setp_type(parts)
        if st is None or len(srcs) != (3 if st[1] else 2):
            return None
        (w, s) = st[2]
        r = d.cmp(_SETP[st[0]][1 if s else 0], srcs[0], srcs[1], w)
        return r if st[1] is None else d.logic(st[1], r, srcs[2])
    k = _key(parts)
    if k is None:
        return None
    head, (w, s), _ = k
    if len(srcs) != len(TABLE[head][0](w)):
        return None
    return TABLE[head][2](d, w, s, *srcs)
