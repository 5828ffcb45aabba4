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
"""
from __future__ import annotations

import ctypes
import sys
from typing import Any, Callable

import z3

__all__ = ["ctx_of", "ast_id", "ast_kind", "app_num_args", "app_arg", "app_decl", "decl_kind", "decl_name",
           "symbol_string", "is_numeral_ast", "numeral_string", "sort_of", "sort_kind", "bv_sort_size",
           "decl_int_parameter", "bv_term", "addr_of"]

_P = ctypes.c_void_p
_U = ctypes.c_uint


def _unchecked(wrapper: Callable, restype: Any, *argtypes: Any) -> Callable:
    """The C function behind the binding's ``wrapper`` (its ``Elementaries`` default argument holds
    the library's function), with ``void *`` in place of the binding's pointer types; where a z3
    binding is built otherwise (no such default), the binding's own checked function, its pointer
    results read as addresses (:func:`_checked`): slower, the same answers."""
    try:
        fn = wrapper.__defaults__[0].f
        return ctypes.CFUNCTYPE(restype, *argtypes)(ctypes.cast(fn, _P).value)
    except (AttributeError, IndexError, TypeError, ctypes.ArgumentError):
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
