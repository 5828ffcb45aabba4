"""Read-only queries of z3 terms through z3's C library, for walks over a term's DAG.

The z3 Python binding wraps each C function twice over: the arguments are converted by Python
``from_param`` methods of its pointer types, and each call is followed by a second call that
reads the context's error code. A walk over a term (its symbols, its summands, its evaluation)
makes a handful of such calls per node, and for the few-node address terms of a kernel the calls
are most of the walk's time. The functions here call the same C entry points (the library the
binding loaded, found through the binding's own wrappers) with plain ``void *`` arguments:
contexts, terms, declarations and symbols are passed and returned as integers (their addresses).

Law: for a valid context and a valid argument each function returns what the binding's function
of the same name (``z3.Z3_get_ast_id``, ...) returns, pointers as their addresses (the binding's
pointer objects' ``.value``) and strings decoded as the binding decodes them. No error code is
read, so an argument the C function refuses (a term of another kind, an index out of range) is
not reported: callers ask only what the term's kind allows, as the binding's own walks do. A term
met in a walk is borrowed from its parent (no reference is taken): the caller keeps the root alive.

>>> import z3
>>> x = z3.BitVec("x", 32) + 4
>>> c, a = ctx_of(x), addr_of(x)
>>> app_num_args(c, a), symbol_string(c, decl_name(c, app_decl(c, app_arg(c, a, 0))))
(2, 'x')
>>> ast_id(c, a) == x.get_id(), is_numeral_ast(c, app_arg(c, a, 1)), numeral_string(c, app_arg(c, a, 1))
(True, True, '4')

The few terms the PTX evaluator and the element checks build per instruction or access are built
here too, through the same C entry points: :func:`bv_binary` (the binding's binary bit-vector
operator without its coercion and error check) and :func:`plus_simplified`,
:func:`minus_simplified`, :func:`at_zero_simplified` (the binding's checked C calls
``Z3_mk_numeral``, ``Z3_mk_bvadd`` / ``Z3_mk_bvsub``, ``Z3_substitute``, ``Z3_simplify`` in one
call each, the result wrapped as the binding's ``_to_expr_ref`` wraps a bit-vector term). z3
hash-conses the terms of a context, so each returns the very term (same z3 id, same Python class)
of the binding's spelling it names: ``plus_simplified(a, c)`` is ``z3.simplify(a + c)``,
``minus_simplified(a, b)`` is ``z3.simplify(a - b)``, ``at_zero_simplified(t, x)`` is
``z3.simplify(z3.substitute(t, (x, z3.BitVecVal(0, x.size()))))``.
"""
from __future__ import annotations

import ctypes
import sys
from typing import Any, Callable

import z3

__all__ = ["ctx_of", "ast_id", "ast_kind", "app_num_args", "app_arg", "app_decl", "decl_kind", "decl_name",
           "symbol_string", "is_numeral_ast", "numeral_string", "sort_of", "sort_kind", "bv_sort_size",
           "decl_int_parameter", "bv_term", "addr_of", "bv_binary", "plus_simplified", "minus_simplified",
           "at_zero_simplified"]

_P = ctypes.c_void_p
_U = ctypes.c_uint


def _c_function(wrapper: Callable) -> Any:
    """The library's ctypes function behind the binding's ``wrapper`` (its ``Elementaries`` default
    argument holds it; the binding's own argument types), or None where a z3 binding is built
    otherwise."""
    try:
        return wrapper.__defaults__[0].f
    except (AttributeError, IndexError, TypeError):
        return None


def _unchecked(wrapper: Callable, restype: Any, *argtypes: Any) -> Callable:
    """The C function behind the binding's ``wrapper`` (:func:`_c_function`), with ``void *`` in
    place of the binding's pointer types; where a z3 binding is built otherwise (no such default),
    the binding's own checked function, its pointer results read as addresses (:func:`_checked`):
    slower, the same answers."""
    fn = _c_function(wrapper)
    if fn is None:
        return _checked(wrapper, restype)
    try:
        return ctypes.CFUNCTYPE(restype, *argtypes)(ctypes.cast(fn, _P).value)
    except (AttributeError, TypeError, ctypes.ArgumentError):
        return _checked(wrapper, restype)


def _checked(wrapper: Callable, restype: Any) -> Callable:
    """``wrapper`` (a function of the z3 binding) called with addresses, its result an address
    (``void *`` results), bytes (C strings) or the plain value."""
    def call(ctx: int, *args: Any) -> Any:
        out = wrapper(_Ctx(ctx), *(_ast(a) if i == 0 else a for i, a in enumerate(args)))
        if restype is _P:
            return getattr(out, "value", out)
        if restype is ctypes.c_char_p and isinstance(out, str):
            return out.encode(_ENCODING)
        return out
    return call


def _ast(a: int) -> Any:
    """The binding's pointer object for the address ``a`` (a term, declaration or symbol)."""
    ast = _AST.__new__(_AST)
    _P.__init__(ast, a)
    return ast


def _Ctx(c: int) -> Any:
    """The binding's context pointer object for the address ``c``."""
    obj = z3.z3types.ContextObj.__new__(z3.z3types.ContextObj)
    _P.__init__(obj, c)
    return obj


_AST = z3.z3types.Ast


ast_id = _unchecked(z3.Z3_get_ast_id, _U, _P, _P)
ast_kind = _unchecked(z3.Z3_get_ast_kind, _U, _P, _P)
app_num_args = _unchecked(z3.Z3_get_app_num_args, _U, _P, _P)
app_arg = _unchecked(z3.Z3_get_app_arg, _P, _P, _P, _U)
app_decl = _unchecked(z3.Z3_get_app_decl, _P, _P, _P)
decl_kind = _unchecked(z3.Z3_get_decl_kind, _U, _P, _P)
decl_name = _unchecked(z3.Z3_get_decl_name, _P, _P, _P)
is_numeral_ast = _unchecked(z3.Z3_is_numeral_ast, ctypes.c_bool, _P, _P)
sort_of = _unchecked(z3.Z3_get_sort, _P, _P, _P)
sort_kind = _unchecked(z3.Z3_get_sort_kind, _U, _P, _P)
bv_sort_size = _unchecked(z3.Z3_get_bv_sort_size, _U, _P, _P)
decl_int_parameter = _unchecked(z3.Z3_get_decl_int_parameter, ctypes.c_int, _P, _P, _U)
_symbol_string = _unchecked(z3.Z3_get_symbol_string, ctypes.c_char_p, _P, _P)
_numeral_string = _unchecked(z3.Z3_get_numeral_string, ctypes.c_char_p, _P, _P)


def _text(s: bytes | None) -> str:
    """A C string as the binding decodes it (``z3core._to_pystr``: the default encoding; "" for NULL)."""
    return "" if s is None else s.decode(_ENCODING)


_ENCODING = sys.getdefaultencoding() or "latin-1"


def symbol_string(ctx: int, symbol: int) -> str:
    """``z3.Z3_get_symbol_string``: a symbol's name (z3's buffer copied at once)."""
    return _text(_symbol_string(ctx, symbol))


def numeral_string(ctx: int, a: int) -> str:
    """``z3.Z3_get_numeral_string``: a numeral's decimal digits."""
    return _text(_numeral_string(ctx, a))


def ctx_of(e: z3.ExprRef) -> int:
    """The address of ``e``'s z3 context (what the functions here take first)."""
    return e.ctx_ref().value


def addr_of(e: z3.ExprRef) -> int:
    """The address of the term ``e`` (what the functions here take as a term)."""
    return e.as_ast().value


def bv_term(a: int, e: z3.ExprRef) -> z3.BitVecRef:
    """The bit-vector term at address ``a`` (a subterm of ``e``, in ``e``'s context) as a binding
    object, which holds its own reference (the binding's ``BitVecRef``, as ``e.arg(i)`` gives for
    a bit-vector argument that is not a numeral)."""
    return z3.BitVecRef(_ast(a), e.ctx)     # the binding's Ast type holding the address as its value


#: z3's constructors of the binary bit-vector operations (the binding's argument types, no error
#: check), None where the binding is built otherwise
_MAKE = {k: _c_function(getattr(z3, "Z3_mk_" + k)) for k in ("bvadd", "bvsub", "bvmul", "bvand", "bvor", "bvxor",
                                                               "bvshl", "bvlshr", "bvashr")}
_INC_REF = _c_function(z3.Z3_inc_ref)


def bv_binary(op: str, a: Any, b: Any) -> z3.BitVecRef | None:
    """The term ``(op a b)`` the binding's operator builds (the same z3 call, so the same term),
    built without its coercion and error check when ``a`` and ``b`` are bit-vectors of one width in
    one context; None otherwise (the caller uses the binding's operator, which coerces or raises).

    >>> x = z3.BitVec("x", 8)
    >>> z3.eq(bv_binary("bvadd", x, z3.BitVecVal(3, 8)), x + 3), bv_binary("bvadd", x, z3.BitVec("y", 16))
    (True, None)
    """
    mk = _MAKE.get(op)
    if mk is None or _INC_REF is None or not isinstance(a, z3.BitVecRef) or not isinstance(b, z3.BitVecRef) \
            or a.ctx is not b.ctx:
        return None
    ctx = a.ctx
    ref = ctx.ref()
    c = ref.value
    sa, sb = sort_of(c, a.ast.value), sort_of(c, b.ast.value)
    if sort_kind(c, sa) != z3.Z3_BV_SORT or sort_kind(c, sb) != z3.Z3_BV_SORT or \
            bv_sort_size(c, sa) != bv_sort_size(c, sb):
        return None
    r = mk(ref, a.ast, b.ast)
    if not r:
        return None
    out = z3.BitVecRef.__new__(z3.BitVecRef)        # what BitVecRef(r, ctx) does, unchecked
    out.ast, out.ctx = r, ctx
    _INC_REF(ref, r)
    return out


def _bv(ast: z3.Ast, ctx: z3.Context) -> z3.BitVecRef:
    """The binding's object for the bit-vector term ``ast`` (what ``_to_expr_ref`` gives for a
    bit-vector sort: a ``BitVecNumRef`` for a numeral, else a ``BitVecRef``)."""
    if z3.Z3_get_ast_kind(ctx.ref(), ast) == z3.Z3_NUMERAL_AST:
        return z3.BitVecNumRef(ast, ctx)
    return z3.BitVecRef(ast, ctx)


def plus_simplified(a: z3.BitVecRef, c: int) -> z3.BitVecRef:
    """``z3.simplify(a + c)`` for a bit-vector term ``a`` and a Python integer ``c`` (any sign:
    the numeral is ``c`` modulo ``2**a.size()``, as the binding's cast makes it).

    >>> plus_simplified(z3.BitVecVal(250, 8), 10).as_long()
    4
    """
    ctx = a.ctx
    ref, ast = ctx.ref(), a.as_ast()
    sort = z3.Z3_get_sort(ref, ast)
    num = z3.Z3_mk_numeral(ref, str(c), sort)
    return _bv(z3.Z3_simplify(ref, z3.Z3_mk_bvadd(ref, ast, num)), ctx)


def minus_simplified(a: z3.BitVecRef, b: z3.BitVecRef) -> z3.BitVecRef:
    """``z3.simplify(a - b)`` for two bit-vector terms of one sort and context.

    >>> y = z3.BitVec("y", 16)
    >>> minus_simplified(y * 2 + 6, y * 2).as_long()
    6
    """
    ctx = a.ctx
    ref = ctx.ref()
    return _bv(z3.Z3_simplify(ref, z3.Z3_mk_bvsub(ref, a.as_ast(), b.as_ast())), ctx)


def at_zero_simplified(t: z3.BitVecRef, x: z3.BitVecRef) -> z3.BitVecRef:
    """``z3.simplify(z3.substitute(t, (x, 0)))``: the bit-vector term ``t`` with the symbol ``x``
    set to zero, simplified.

    >>> tid = z3.BitVec("t", 32)
    >>> at_zero_simplified(tid * 4 + 16, tid).as_long()
    16
    """
    ctx = t.ctx
    ref = ctx.ref()
    zero = z3.Z3_mk_numeral(ref, "0", z3.Z3_get_sort(ref, x.as_ast()))
    src = (z3.Ast * 1)(x.as_ast())
    dst = (z3.Ast * 1)(zero)
    return _bv(z3.Z3_simplify(ref, z3.Z3_substitute(ref, t.as_ast(), 1, src, dst)), ctx)
