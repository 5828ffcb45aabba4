"""CuTe integer tuples: static integers, nested shapes and strides, compact strides, their text.

An ``IntTuple`` is an int, a sympy expression (a symbolic extent or stride such as the PTX ISA
canonical-layout table's ``8T``, 9.7.15.5.1.2.1.3) or a tuple of IntTuples. Integers keep CuTe's static/dynamic distinction for printing
only: :class:`StaticInt` (``_8``, CuTe's ``Int<8>``) and :class:`DynamicInt` (``8``, CuTe's ``int``)
both equal the plain ``8``. A plain Python int given to a layout is static, as a Python literal is a
compile-time constant (and as the CuTe DSL treats it); CuTe text without ``_`` is dynamic.

sympy is not imported here at start-up: a value is symbolic only if sympy was already imported
by whoever built it (:func:`symbol`, the text reader), so :func:`is_sym` asks ``sys.modules``.

>>> flatten(((4, 8), 2)), product(((4, 8), 2)), compact_row_major(((4, 8), 2)) == ((16, 2), 1)
((4, 8, 2), StaticInt(64), True)
"""
from __future__ import annotations

import functools
import sys
from numbers import Integral
from typing import TYPE_CHECKING, Any, Iterable, Sequence, Union

from verilayout.errors import LayoutError

if TYPE_CHECKING:
    import sympy

__all__ = ["StaticInt", "DynamicInt", "dynamic", "IntTuple", "symbol", "is_sym", "flatten", "product", "compact_col_major",
           "compact_row_major"]


def is_sym(x: Any) -> bool:
    """True when ``x`` is a sympy object (without importing sympy: none exists before it is loaded).

    >>> is_sym(8), is_sym(symbol("m"))
    (False, True)
    """
    sp = sys.modules.get("sympy")
    return sp is not None and isinstance(x, sp.Basic)


# ----- static integers and arithmetic that tracks them ------------------------------

class StaticInt(int):
    """An integer CuTe knows at compile time; printed ``_8``. Equal to the plain int.

    Arithmetic through this module's algebra keeps a result static exactly when
    every operand is static (as CuTe's ``Int<N>``); plain Python arithmetic on a
    StaticInt gives a plain int.

    >>> StaticInt(8) == 8, format_tree((StaticInt(8), 8), "cute")
    (True, '(_8,8)')
    """

    def __new__(cls, value: int) -> "StaticInt":
        if isinstance(value, bool) or not isinstance(value, Integral):
            raise LayoutError(f"StaticInt needs an integer, got {value!r}")
        return super().__new__(cls, int(value))

    def __repr__(self) -> str:
        return f"StaticInt({int(self)})"

    __str__ = int.__repr__


def _dynamic_op(name: str):
    """``int``'s operator ``name`` whose integer result is a :class:`DynamicInt`."""
    base = getattr(int, name)

    def op(self, *other):
        r = base(self, *other)
        return DynamicInt(r) if type(r) is int else r
    op.__name__ = name
    return op


def _yield_to_dynamic(name: str):
    """``int``'s operator ``name`` that leaves a :class:`DynamicInt` operand to its own reflected
    operator (a static and a dynamic operand give a dynamic result)."""
    base = getattr(int, name)

    def op(self, other):
        return NotImplemented if isinstance(other, DynamicInt) else base(self, other)
    op.__name__ = name
    return op


_ARITH = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__floordiv__",
          "__rfloordiv__", "__mod__", "__rmod__", "__lshift__", "__rlshift__", "__rshift__",
          "__rrshift__", "__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__")

for _name in _ARITH:
    setattr(StaticInt, _name, _yield_to_dynamic(_name))


class DynamicInt(int):
    """An integer CuTe knows only at run time (its ``int``); printed ``8``. Equal to the plain int.

    Law: an integer operation with a DynamicInt operand gives a DynamicInt (dynamic is
    contagious, as in CuTe: ``Int<2>{} * 3`` is an ``int``); a plain Python int given to
    :class:`~verilayout.core.cute.layout.Layout` is static, so a dynamic value is made with this
    class (or read from CuTe text written without ``_``).

    >>> DynamicInt(8) == 8, StaticInt(2) * DynamicInt(3), format_tree((DynamicInt(8), StaticInt(8)), "cute")
    (True, DynamicInt(6), '(8,_8)')
    """

    def __new__(cls, value: int) -> "DynamicInt":
        if isinstance(value, bool) or not isinstance(value, Integral):
            raise LayoutError(f"DynamicInt needs an integer, got {value!r}")
        return super().__new__(cls, int(value))

    def __repr__(self) -> str:
        return f"DynamicInt({int(self)})"

    __str__ = int.__repr__

    def __neg__(self) -> "DynamicInt":
        return DynamicInt(-int(self))


for _name in _ARITH:
    setattr(DynamicInt, _name, _dynamic_op(_name))


def dynamic(t: Any) -> Any:
    """``t`` with every integer leaf a :class:`DynamicInt` (CuTe C++'s ``make_shape(8, 16)`` of
    run-time ints, pycute's plain values); tuples (lists) kept nested, sympy leaves kept.

    >>> dynamic((8, (StaticInt(2), 4)))
    (DynamicInt(8), (DynamicInt(2), DynamicInt(4)))
    """
    if isinstance(t, (tuple, list)):
        return tuple(dynamic(x) for x in t)
    if isinstance(t, Integral) and not isinstance(t, bool):
        return DynamicInt(int(t))
    return t


def all_static(*xs: Any) -> bool:
    """True when every argument is a static integer: a :class:`StaticInt` (CuTe's compile-time
    ``_N``) or a plain Python int (a literal: static, as :func:`normalize_leaf` stores it); a
    :class:`DynamicInt` or a sympy expression is not.

    >>> all_static(StaticInt(2), 3), all_static(StaticInt(2), DynamicInt(3))
    (True, False)
    """
    return all(isinstance(x, Integral) and not isinstance(x, (bool, DynamicInt)) for x in xs)


def make_int(value: int, static: bool) -> int:
    """``value`` as a :class:`StaticInt` when ``static``, else a plain ``int``.

    >>> make_int(4, True), make_int(4, False)
    (StaticInt(4), DynamicInt(4))
    """
    return StaticInt(value) if static else DynamicInt(value)


def static_mul(a: int, b: int) -> int:
    """``a * b``, static when both operands are (CuTe's static arithmetic).

    >>> static_mul(StaticInt(2), StaticInt(3)), static_mul(DynamicInt(2), StaticInt(3))
    (StaticInt(6), DynamicInt(6))
    """
    return make_int(int(a) * int(b), all_static(a, b))


def static_div(a: int, b: int) -> int:
    """``a // b``, static when both operands are.

    >>> static_div(StaticInt(7), StaticInt(2)), static_div(DynamicInt(7), 2)
    (StaticInt(3), DynamicInt(3))
    """
    return make_int(int(a) // int(b), all_static(a, b))


def static_ceil_div(a: int, b: int) -> int:
    """``ceil(a / b)``, static when both operands are.

    >>> static_ceil_div(StaticInt(7), StaticInt(2)), static_ceil_div(DynamicInt(8), 2)
    (StaticInt(4), DynamicInt(4))
    """
    return make_int(-(-int(a) // int(b)), all_static(a, b))


def static_min(a: int, b: int) -> int:
    """``min(a, b)``, static when both operands are.

    >>> static_min(StaticInt(7), StaticInt(2)), static_min(DynamicInt(7), StaticInt(2))
    (StaticInt(2), DynamicInt(2))
    """
    return make_int(min(int(a), int(b)), all_static(a, b))


def static_product(xs: Iterable[int]) -> int:
    """The product of ``xs``, static when every factor is (``_1`` for none).

    >>> static_product([StaticInt(2), StaticInt(4)]), static_product([2, DynamicInt(4)]), static_product([])
    (StaticInt(8), DynamicInt(8), StaticInt(1))
    """
    acc: int = StaticInt(1)
    for x in xs:
        acc = static_mul(acc, x)
    return acc



# ----- integer tuples ----------------------------------------------------------------

IntTuple = Union[int, "sympy.Expr", tuple]

def symbol(name: str) -> "sympy.Symbol":
    """The sympy symbol the parser uses for ``name`` (a positive integer).

    Law: ``symbol(n) == sympy.Symbol(n, integer=True, positive=True)``; the same object for the
    same name while ``n`` is among the :data:`SYMBOL_CACHE_SIZE` most recent names.

    >>> symbol("m") is symbol("m"), symbol("m").is_positive
    (True, True)
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise LayoutError(f"a symbol name is an identifier such as 'm', got {name!r}"[:120])
    return _symbol(name)


def basis_symbol(mode: int) -> "sympy.Symbol":
    """CuTe's basis element ``E<mode>`` of a scaled-basis stride (``_2@1`` is ``2 * E<1>``), as the
    symbol ``_at<mode>`` (no parsed name starts with ``_``); printed ``k@mode`` by
    :func:`format_leaf`. A coordinate layout (``make_identity_layout``) maps to sums of them.

    >>> format_leaf(3 * basis_symbol(1), "cute")
    '_3@1'
    """
    if isinstance(mode, bool) or not isinstance(mode, Integral) or mode < 0:
        raise LayoutError(f"a basis mode is an integer >= 0, got {mode!r}")
    return _symbol(f"_at{int(mode)}")


def basis_coords(x: Any, rank: int) -> tuple[int, ...]:
    """The coordinate tuple of a sum of scaled bases (``2*E<0> + 3*E<1>`` -> ``(2, 3)``), ``rank``
    entries.

    >>> basis_coords(2 * basis_symbol(0) + 3 * basis_symbol(1), 2), basis_coords(0, 2)
    ((2, 3), (0, 0))
    """
    if not is_sym(x):
        if int(x):
            raise LayoutError(f"{x} is not a sum of scaled bases")
        return (0,) * rank
    import sympy  # deferred: sympy costs ~0.2 s at start-up (already loaded: x is a sympy object)
    e = sympy.expand(x)
    out = [int(e.coeff(basis_symbol(i))) for i in range(rank)]
    if sympy.expand(e - sum(c * basis_symbol(i) for i, c in enumerate(out))) != 0:
        raise LayoutError(f"{x} is not a sum of scaled bases of modes below {rank}")
    return tuple(out)


#: Names kept by :func:`_symbol`'s cache. An evicted name gets an equal symbol again (sympy
#: symbols of one name and the same assumptions compare equal), so the bound changes no result.
SYMBOL_CACHE_SIZE = 1024


@functools.lru_cache(maxsize=SYMBOL_CACHE_SIZE)
def _symbol(name: str) -> "sympy.Symbol":
    """The positive integer sympy symbol ``name``; cache key: the name (an identifier)."""
    import sympy  # deferred: sympy costs ~0.2 s at start-up; only symbolic layouts need it
    return sympy.Symbol(name, integer=True, positive=True)


def normalize_leaf(x: Any, what: str) -> Any:
    """One leaf of a shape or stride as stored: a :class:`StaticInt`, a :class:`DynamicInt`, or an
    expanded sympy polynomial with integer coefficients; anything else is a ``LayoutError`` naming
    ``what``. Law: a plain integer (Python or numpy) becomes static, as CuTe's ``Int<N>``.

    >>> normalize_leaf(StaticInt(2), "shape"), normalize_leaf(3, "shape"), normalize_leaf(DynamicInt(3), "shape")
    (StaticInt(2), StaticInt(3), DynamicInt(3))
    """
    if isinstance(x, (StaticInt, DynamicInt)):
        return x
    if isinstance(x, bool):
        raise LayoutError(f"{what}: {x!r} is not an integer")
    if isinstance(x, Integral):
        return StaticInt(int(x))
    if is_sym(x):
        import sympy  # deferred: sympy costs ~0.2 s at start-up (already loaded: x is a sympy object)
        x = sympy.expand(x)
        if x.is_Integer:
            return StaticInt(int(x))
        if not x.free_symbols:
            raise LayoutError(f"{what}: {x} is not an integer")
        try:
            poly = sympy.Poly(x, *sorted(x.free_symbols, key=str))
        except sympy.PolynomialError:
            raise LayoutError(f"{what}: {x} is not a polynomial with integer coefficients") from None
        if not all(c.is_Integer for c in poly.coeffs()):
            raise LayoutError(f"{what}: {x} is not a polynomial with integer coefficients")
        return x
    raise LayoutError(f"{what}: {x!r} is not an integer or a sympy expression")


def normalize_tree(t: Any, what: str) -> IntTuple:
    """A nested tuple (lists accepted) with every leaf through :func:`normalize_leaf`; an empty
    tuple is a ``LayoutError``.

    >>> format_tree(normalize_tree([2, [4, DynamicInt(8)]], "shape"), "cute")
    '(_2,(_4,8))'
    """
    if isinstance(t, (tuple, list)):
        if not t:
            raise LayoutError(f"{what}: empty tuple")
        return tuple(normalize_tree(x, what) for x in t)
    return normalize_leaf(t, what)


def is_tuple(t: Any) -> bool:
    """True for a tuple node of an :data:`IntTuple` (a leaf is an integer or an expression).

    >>> is_tuple((2, 3)), is_tuple(2)
    (True, False)
    """
    return isinstance(t, tuple)


def flatten(t: IntTuple) -> tuple:
    """The leaves of a nested tuple, in order.

    >>> flatten(((8, 2), (4, (4, 1))))
    (8, 2, 4, 4, 1)
    """
    if is_tuple(t):
        return tuple(x for c in t for x in flatten(c))
    return (t,)


def product(t: IntTuple) -> Any:
    """Product of the leaves (static when every leaf is static).

    >>> product(((8, 2), 4))
    StaticInt(64)
    """
    leaves = _leaves_checked(t, "product")
    if any(is_sym(x) for x in leaves):
        acc: Any = 1
        for x in leaves:
            acc = acc * x
        return acc.expand()
    return static_product(leaves)


def congruent(a: IntTuple, b: IntTuple) -> bool:
    """Same tree structure (CuTe's ``congruent``): leaves may differ, nesting and lengths may not.

    >>> congruent((2, (3, 4)), (5, (6, 7))), congruent((2, 3), (2, (3, 1)))
    (True, False)
    """
    if is_tuple(a) != is_tuple(b):
        return False
    if is_tuple(a):
        return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))
    return True


def tuple_depth(t: IntTuple) -> int:
    """Nesting depth: 0 for a leaf, ``1 + max depth of the children`` for a tuple.

    >>> tuple_depth(4), tuple_depth((4, 2)), tuple_depth((4, (2, 2)))
    (0, 1, 2)
    """
    return 1 + max(tuple_depth(x) for x in t) if is_tuple(t) else 0


def _unflatten(flat: Sequence, like: IntTuple) -> IntTuple:
    it = iter(flat)

    def go(t):
        return tuple(go(x) for x in t) if is_tuple(t) else next(it)
    return go(like)


def _leaves_checked(t: IntTuple, what: str) -> list:
    """The leaves of an integer tuple; a leaf that is neither an integer nor a sympy expression
    is a LayoutError naming it.

    >>> _leaves_checked((2, (3, 4)), "size")
    (2, 3, 4)
    """
    leaves = flatten(t)
    for x in leaves:
        if isinstance(x, bool) or not (isinstance(x, Integral) or is_sym(x)):
            shown = repr(x) if len(repr(x)) <= 40 else repr(x)[:37] + "..."
            raise LayoutError(f"{what}: {shown} is not an integer (a CuTe shape or stride leaf)")
    return leaves


def _compact(shape: IntTuple, current: Any, leaves_order: Sequence[int]) -> IntTuple:
    flat = _leaves_checked(shape, "compact layout shape")
    out: list = [None] * len(flat)
    for k in leaves_order:
        s = flat[k]
        if is_sym(s) or is_sym(current):
            out[k] = current
            current = (current * s).expand()
        elif all_static(s) and s == 1:
            out[k] = StaticInt(0)
        else:
            out[k] = current
            current = static_mul(current, s)
    return _unflatten(out, shape)


def compact_col_major(shape: IntTuple, current: Any = StaticInt(1)) -> IntTuple:
    """CuTe's ``compact_col_major`` (``LayoutLeft``): strides of a compact layout whose first leaf
    varies fastest, starting at ``current``.

    Law: over the flattened leaves ``s_0, s_1, ...``, ``stride_k = current * s_0 * ... * s_{k-1}``,
    except that a static extent ``_1`` gets stride ``_0`` (a dynamic ``1`` keeps the running
    product); the nesting of ``shape`` is kept.

    >>> D = DynamicInt
    >>> format_tree(compact_col_major((D(4), (D(8), StaticInt(1), (D(2), D(3))))), "cute")
    '(_1,(4,_0,(32,64)))'
    """
    return _compact(shape, current, range(len(flatten(shape))))


def compact_row_major(shape: IntTuple, current: Any = StaticInt(1)) -> IntTuple:
    """CuTe's ``compact_row_major`` (``LayoutRight``): strides of a compact layout whose last leaf
    varies fastest, starting at ``current``.

    Law: as :func:`compact_col_major` over the flattened leaves taken right to left (at every
    nesting level the last mode is the fastest).

    >>> D = DynamicInt
    >>> format_tree(compact_row_major((D(4), (D(8), StaticInt(1), (D(2), D(3))))), "cute")
    '(48,(6,_0,(3,_1)))'
    """
    return _compact(shape, current, range(len(flatten(shape)) - 1, -1, -1))


def tuple_free_symbols(t: IntTuple) -> set:
    """The sympy symbols that occur in the leaves (empty for a concrete tuple).

    >>> tuple_free_symbols((4, 2))
    set()
    """
    out: set = set()
    for x in flatten(t):
        if is_sym(x):
            out |= x.free_symbols
    return out


# ----- text -----------------------------------------------------------------------------------

def format_leaf(x: Any, style: str) -> str:
    """One leaf as text: ``_N`` for a static int in ``cute`` style, else the number or the expression.

    >>> format_leaf(StaticInt(1), "cute"), format_leaf(StaticInt(1), "pycute"), format_leaf(8, "cute")
    ('_1', '1', '8')
    """
    if is_sym(x):
        return _fmt_expr(x)
    if isinstance(x, StaticInt) and style == "cute":
        return f"_{int(x)}"
    return str(int(x))


def _fmt_expr(e: "sympy.Expr") -> str:
    import sympy  # deferred: sympy costs ~0.2 s at start-up (already loaded: e is a sympy object)
    e = sympy.expand(e)
    terms = []
    for term in sympy.Add.make_args(e):
        coeff, rest = term.as_coeff_Mul()
        factors = []
        for f in ([] if rest == 1 else sympy.Mul.make_args(rest)):
            base, exp = f.as_base_exp()
            factors += [str(base)] * int(exp)
        factors.sort()
        coeff = int(coeff)
        body = "*".join(factors)
        if len(factors) == 1 and factors[0].startswith("_at"):     # a scaled basis k@i
            terms.append((coeff < 0, f"_{abs(coeff)}@{factors[0][3:]}"))
            continue
        if not body:
            text = str(abs(coeff))
        elif abs(coeff) == 1:
            text = body
        else:
            text = f"{abs(coeff)}{body}"
        terms.append((coeff < 0, text))
    terms.sort(key=lambda t: (t[0], not any(ch.isalpha() for ch in t[1]), t[1]))
    out = ""
    for i, (neg, text) in enumerate(terms):
        out += ("-" if neg else ("+" if i else "")) + text
    return out


def format_tree(t: IntTuple, style: str) -> str:
    """A nested tuple as text, leaves through :func:`format_leaf`.

    >>> format_tree((4, (StaticInt(2), 8)), "cute")
    '(4,(_2,8))'
    """
    if is_tuple(t):
        return "(" + ",".join(format_tree(x, style) for x in t) + ")"
    return format_leaf(t, style)

