"""The one evaluator of z3 bit-vector terms on numpy arrays: a term compiled once into a function of
the values of its free symbols (thread ids, shared-memory bases, kernel parameters), evaluated for
all of them at once.

Law: for a term ``e`` whose free symbols are among ``names``, ``compile_term(e, memo, names)(env)``
equals z3's value of ``e`` with each symbol ``n`` substituted by ``env[n]`` (elementwise, the
arrays broadcast together): bit-vectors reduced mod ``2^width`` (``uint64`` words when every
subterm is at most 64 bits wide, else, with ``wide``, exact integers in object arrays by the same
rules; without ``wide`` a wider subterm raises :class:`TooWide`), Booleans as ``bool`` arrays.
Sums, products and negations wrap, shifts by the width or more give 0 (or the sign), division
and remainder by zero are SMT-LIB's (what z3 computes), signed operations read two's complement.
An operator not modelled, or a free symbol not in ``names``, raises ValueError naming it. The term
tree is walked once through z3's C API (no Python object per subterm, :mod:`verilayout.prove.z3_api`:
no error check per call); ``memo`` keeps the compiled
subterms by z3 id, and the root term with them (alive, so ids stay unique). Users: the PTX audit
(``verilayout.audit.ptx_smem``, addresses of every thread) and the independent check of emitted
kernels (``verilayout.simulate.independent``, descriptors over sampled shared-memory bases).

>>> t = z3.BitVec("tid_x", 32)
>>> compile_term(z3.LShR(t, 2) ^ (t & 3) * 8, {})({"tid_x": np.arange(6, dtype=np.uint64)}).tolist()
[0, 8, 16, 24, 1, 9]
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Mapping

import numpy as np
import z3

from verilayout.prove import z3_api as api

__all__ = ["TooWide", "compile_term", "evaluate"]

_U64 = np.uint64


class TooWide(ValueError):
    """A subterm wider than 64 bits where the caller asked for machine words only."""


def compile_term(e: z3.ExprRef, memo: dict, names: tuple[str, ...] = ("tid_x",),
                 wide: bool = True) -> Callable[[Mapping[str, Any]], np.ndarray]:
    """``e`` as a function of ``env`` (each name of ``names`` to an array or number of its values);
    see the module docstring for the law.

    >>> x = z3.BitVec("x", 8)
    >>> compile_term((x << 4) + 0x20, {}, ("x",))({"x": np.arange(3)}).tolist()
    [32, 48, 64]
    """
    names = tuple(names)
    k = ("vec", names, e.get_id())
    hit = memo.get(k)
    if hit is not None:
        return hit[1]
    try:
        g = _node(api.ctx_of(e), api.addr_of(e), memo, names, False)
        big = False
    except TooWide:
        if not wide:
            raise
        g = _node(api.ctx_of(e), api.addr_of(e), memo, names, True)
        big = True
    is_bool = z3.is_bool(e)

    def run(env: Mapping[str, Any]) -> np.ndarray:
        vals = {n: _leaf_value(env[n], big) for n in names if n in env}
        shape = np.broadcast_shapes(*(np.shape(v) for v in vals.values())) if vals else ()
        with np.errstate(over="ignore"):
            out = g(vals)
        if is_bool:
            return np.broadcast_to(np.asarray(out, dtype=bool), shape)
        return np.broadcast_to(np.asarray(out, dtype=object if big else _U64), shape)
    memo[k] = (e, run)
    return run


def evaluate(e: z3.ExprRef, env: Mapping[str, Any]) -> np.ndarray:
    """``e`` evaluated with its free symbols given by ``env`` (:func:`compile_term` over the names
    of ``env``, exact integers past 64 bits).

    >>> evaluate(z3.UDiv(z3.BitVec("x", 8), 3), {"x": np.array([9, 10])}).tolist()
    [3, 3]
    """
    return compile_term(e, {}, tuple(env))(env)


def _where(c: Any, x: Any, y: Any, big: bool) -> Any:
    """``np.where`` keeping exact integers exact (numpy turns bare Python ints into 64-bit words)."""
    if big:
        return np.where(c, np.asarray(x, dtype=object), np.asarray(y, dtype=object))
    return np.where(c, x, y)


def _leaf_value(v: Any, big: bool) -> np.ndarray:
    a = np.asarray(v)
    if a.dtype == bool:
        return a
    return a.astype(object) if big else a.astype(_U64)


def _node(ctx: Any, a: Any, memo: dict, names: tuple, big: bool) -> Callable:
    """One subterm as a function of the environment (``big``: exact integers)."""
    k = ("vnode", names, big, api.ast_id(ctx, a))
    f = memo.get(k)
    if f is not None:
        return f
    sort = api.sort_of(ctx, a)
    skind = api.sort_kind(ctx, sort)
    if api.ast_kind(ctx, a) not in (z3.Z3_APP_AST, z3.Z3_NUMERAL_AST):
        raise ValueError("not an application")
    decl = api.app_decl(ctx, a)
    kind = api.decl_kind(ctx, decl)
    n = api.app_num_args(ctx, a)
    kids = [api.app_arg(ctx, a, i) for i in range(n)]
    if skind == z3.Z3_BOOL_SORT:
        f = _bool(ctx, decl, kind, kids, memo, names, big)
    elif skind != z3.Z3_BV_SORT:
        raise ValueError("not a bit-vector")
    else:
        w = api.bv_sort_size(ctx, sort)
        if w > 64 and not big:
            raise TooWide(w)
        f = _bv(ctx, a, decl, kind, kids, w, memo, names, big)
    memo[k] = f
    return f


def _symbol(ctx: Any, decl: Any, names: tuple) -> str:
    name = api.symbol_string(ctx, api.decl_name(ctx, decl))
    if name not in names:
        raise ValueError(f"a free symbol other than {', '.join(names)}: {name}")
    return name


def _bv(ctx: Any, a: Any, decl: Any, kind: int, kids: list, w: int, memo: dict, names: tuple,
        big: bool) -> Callable:
    # long: the operator dispatch of the evaluator: one branch per z3 bit-vector operator
    num = int if big else _U64                      # the number type of the arrays' elements
    mask = num((1 << w) - 1)
    if kind == z3.Z3_OP_ITE:
        c, x, y = (_node(ctx, b, memo, names, big) for b in kids)
        return lambda t: _where(c(t), x(t), y(t), big)
    if api.is_numeral_ast(ctx, a):               # exact integers: a 0-d object array (numpy would
        v = int(api.numeral_string(ctx, a))    # turn a bare int into a 64-bit word)
        c = np.array(v, dtype=object) if big else _U64(v)
        return lambda t: c
    if not kids:
        name = _symbol(ctx, decl, names)
        return lambda t: t[name] & mask
    g = [_node(ctx, b, memo, names, big) for b in kids]
    if kind == z3.Z3_OP_EXTRACT:
        lo = num(api.decl_int_parameter(ctx, decl, 1))
        return lambda t: (g[0](t) >> lo) & mask
    if kind == z3.Z3_OP_CONCAT:
        sizes = [num(api.bv_sort_size(ctx, api.sort_of(ctx, b))) for b in kids]

        def cat(t: Any) -> Any:
            v = np.array(0, dtype=object) if big else _U64(0)
            for h, sz in zip(g, sizes):
                v = (v << sz) | h(t)
            return v & mask
        return cat
    if kind == z3.Z3_OP_SIGN_EXT:
        cw = api.bv_sort_size(ctx, api.sort_of(ctx, kids[0]))
        top, high, one = num(cw - 1), mask & ~num((1 << cw) - 1), num(1)
        return lambda t: _where((g[0](t) >> top) & one, g[0](t) | high, g[0](t), big)
    if kind == z3.Z3_OP_ZERO_EXT:
        return g[0]
    op = _OPS.get(kind)
    if op is None:
        raise ValueError(f"unsupported operator (kind {kind})")
    wv = num(w)
    return lambda t: op([h(t) for h in g], wv) & mask


def _signed_view(v: Any, w: Any, big: bool) -> Any:
    """The two's-complement values of ``w``-bit words ``v`` (``uint64`` or exact integers)."""
    v = np.asarray(v, dtype=object if big else _U64)
    if big:
        w = int(w)
        return np.where((v >> (w - 1)) & 1, v - (1 << w), v)
    sh = _U64(64 - w)
    return (v.astype(_U64) << sh).view(np.int64) >> np.int64(64 - w)


_CMP = {z3.Z3_OP_EQ: lambda a, b, w, big: a == b, z3.Z3_OP_DISTINCT: lambda a, b, w, big: a != b,
        z3.Z3_OP_ULT: lambda a, b, w, big: a < b, z3.Z3_OP_ULEQ: lambda a, b, w, big: a <= b,
        z3.Z3_OP_UGT: lambda a, b, w, big: a > b, z3.Z3_OP_UGEQ: lambda a, b, w, big: a >= b,
        z3.Z3_OP_SLT: lambda a, b, w, big: _signed_view(a, w, big) < _signed_view(b, w, big),
        z3.Z3_OP_SLEQ: lambda a, b, w, big: _signed_view(a, w, big) <= _signed_view(b, w, big),
        z3.Z3_OP_SGT: lambda a, b, w, big: _signed_view(a, w, big) > _signed_view(b, w, big),
        z3.Z3_OP_SGEQ: lambda a, b, w, big: _signed_view(a, w, big) >= _signed_view(b, w, big)}


def _bool(ctx: Any, decl: Any, kind: int, kids: list, memo: dict, names: tuple, big: bool) -> Callable:
    if kind in (z3.Z3_OP_TRUE, z3.Z3_OP_FALSE):
        c = np.bool_(kind == z3.Z3_OP_TRUE)
        return lambda t: c
    if kind == z3.Z3_OP_UNINTERPRETED and not kids:
        name = _symbol(ctx, decl, names)
        return lambda t: t[name]
    if kind == z3.Z3_OP_NOT:
        g = _node(ctx, kids[0], memo, names, big)
        return lambda t: ~np.asarray(g(t), dtype=bool)
    if kind in (z3.Z3_OP_AND, z3.Z3_OP_OR, z3.Z3_OP_XOR) and kids:
        gs = [_node(ctx, b, memo, names, big) for b in kids]
        red = {z3.Z3_OP_AND: np.logical_and, z3.Z3_OP_OR: np.logical_or, z3.Z3_OP_XOR: np.logical_xor}[kind]
        return lambda t: functools.reduce(red, [h(t) for h in gs])
    if kind == z3.Z3_OP_ITE:
        c, x, y = (_node(ctx, b, memo, names, big) for b in kids)
        return lambda t: np.where(c(t), x(t), y(t))             # Booleans
    if kind in _CMP and len(kids) == 2 and \
            api.sort_kind(ctx, api.sort_of(ctx, kids[0])) in (z3.Z3_BV_SORT, z3.Z3_BOOL_SORT):
        x, y = (_node(ctx, b, memo, names, big) for b in kids)
        sort = api.sort_of(ctx, kids[0])
        w = api.bv_sort_size(ctx, sort) if api.sort_kind(ctx, sort) == z3.Z3_BV_SORT else 1
        op = _CMP[kind]
        return lambda t: np.asarray(op(x(t), y(t), w, big), dtype=bool)
    raise ValueError(f"unsupported boolean (kind {kind})")


def _fold(fn: Callable) -> Callable:
    def run(xs: list, w: Any) -> Any:
        v = xs[0]
        for x in xs[1:]:
            v = fn(v, x, w)
        return v
    return run


def _shift(a: Any, b: Any, w: Any, left: bool) -> Any:
    """``a << b`` / ``a >> b`` of ``w``-bit words: 0 for a count of ``w`` or more (numpy's word
    shifts are guarded to counts below 64; exact integers to counts up to ``w``)."""
    big = isinstance(w, int)
    b2 = _where(b < w, b, w, big) if big else np.minimum(b, _U64(63))
    return _where(b < w, a << b2 if left else a >> b2, type(w)(0), big)


def _ashr(a: Any, b: Any, w: Any) -> Any:
    """Arithmetic right shift of ``w``-bit words: counts of ``w`` or more give the sign."""
    s = _signed_view(a, w, isinstance(w, int))
    if isinstance(w, int):
        return np.asarray(s >> np.minimum(b, w - 1), dtype=object)
    return (s >> np.minimum(b, w - _U64(1)).astype(np.int64)).astype(_U64)


def _udiv(a: Any, b: Any, w: Any) -> Any:
    big = isinstance(w, int)
    z = b == 0
    return _where(z, (type(w)(1) << w) - type(w)(1) if big else ~_U64(0),
                  a // _where(z, type(w)(1), b, big), big)


def _urem(a: Any, b: Any, w: Any) -> Any:
    big = isinstance(w, int)
    z = b == 0
    return _where(z, a, a % _where(z, type(w)(1), b, big), big)


def _sdivrem(a: Any, b: Any, w: Any, quotient: bool) -> Any:
    """SMT-LIB's ``bvsdiv`` / ``bvsrem`` (truncating; by zero: -1 or 1, and the dividend)."""
    num, big = type(w), isinstance(w, int)
    m = (1 << w) - 1 if big else _U64((1 << int(w)) - 1)
    na, nb = ((a >> (w - num(1))) & num(1)) == 1, ((b >> (w - num(1))) & num(1)) == 1
    ua = _where(na, num(0) - a, a, big) & m
    ub = _where(nb, num(0) - b, b, big) & m
    z = ub == 0
    ub1 = _where(z, num(1), ub, big)
    if quotient:
        q = ua // ub1
        return _where(z, _where(na, num(1), m, big), _where(na ^ nb, num(0) - q, q, big), big)
    r = ua % ub1
    return _where(z, a, _where(na, num(0) - r, r, big), big)


_OPS = {
    z3.Z3_OP_BADD: _fold(lambda a, b, w: a + b), z3.Z3_OP_BSUB: _fold(lambda a, b, w: a - b),
    z3.Z3_OP_BMUL: _fold(lambda a, b, w: a * b), z3.Z3_OP_BAND: _fold(lambda a, b, w: a & b),
    z3.Z3_OP_BOR: _fold(lambda a, b, w: a | b), z3.Z3_OP_BXOR: _fold(lambda a, b, w: a ^ b),
    z3.Z3_OP_BNOT: lambda xs, w: ~xs[0], z3.Z3_OP_BNEG: lambda xs, w: type(w)(0) - xs[0],
    z3.Z3_OP_BSHL: _fold(lambda a, b, w: _shift(a, b, w, True)),
    z3.Z3_OP_BLSHR: _fold(lambda a, b, w: _shift(a, b, w, False)),
    z3.Z3_OP_BASHR: lambda xs, w: _ashr(xs[0], xs[1], w),
    z3.Z3_OP_BUDIV: lambda xs, w: _udiv(xs[0], xs[1], w), z3.Z3_OP_BUDIV_I: lambda xs, w: _udiv(xs[0], xs[1], w),
    z3.Z3_OP_BUREM: lambda xs, w: _urem(xs[0], xs[1], w), z3.Z3_OP_BUREM_I: lambda xs, w: _urem(xs[0], xs[1], w),
    z3.Z3_OP_BSDIV: lambda xs, w: _sdivrem(xs[0], xs[1], w, True),
    z3.Z3_OP_BSDIV_I: lambda xs, w: _sdivrem(xs[0], xs[1], w, True),
    z3.Z3_OP_BSREM: lambda xs, w: _sdivrem(xs[0], xs[1], w, False),
    z3.Z3_OP_BSREM_I: lambda xs, w: _sdivrem(xs[0], xs[1], w, False),
}
