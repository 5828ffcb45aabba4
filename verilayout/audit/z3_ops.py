"""The few z3 term operations the element checks repeat per shared-memory access, built through
z3's C API in one call each instead of the binding's operator overloads.

The checks of :mod:`verilayout.audit.ptx_elements` take every access's address at thread 0 (a
simplified sum of an address function's value there and the access's immediate) and compare
addresses by simplifying their difference. Through the binding, ``simplify(a + 16)`` coerces the
Python integer to a term (a sort lookup and a cast), builds the sum, simplifies it and rebuilds the
Python object by asking the result's kind and sort; most of its time is that wrapping, not z3's
rewriting. The functions here make the same C calls (``Z3_mk_numeral``, ``Z3_mk_bvadd`` /
``Z3_mk_bvsub``, ``Z3_substitute``, ``Z3_simplify``) directly and wrap the result as the binding's
``_to_expr_ref`` wraps a bit-vector term (``BitVecNumRef`` for a numeral, else ``BitVecRef``).

Law: z3 hash-conses the terms of a context, so each function returns a term equal (same z3 id)
to the binding's spelling it names, of the same Python class:
``plus_simplified(a, c)`` is ``z3.simplify(a + c)``, ``minus_simplified(a, b)`` is
``z3.simplify(a - b)`` and ``at_zero_simplified(t, x)`` is
``z3.simplify(z3.substitute(t, (x, z3.BitVecVal(0, x.size()))))``.

>>> x = z3.BitVec("x", 32)
>>> plus_simplified(x + 4, -4).eq(z3.simplify(x + 4 + -4)), minus_simplified(x + 9, x + 1).as_long()
(True, 8)
"""
from __future__ import annotations

import z3

__all__ = ["plus_simplified", "minus_simplified", "at_zero_simplified"]


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
