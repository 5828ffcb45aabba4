"""CuTe integer tuples: static integers, nested shapes and strides, compact strides, their text.

An ``IntTuple`` is an int, a sympy expression (a symbolic extent or stride such as the seeds'
``8T``) or a tuple of IntTuples. Integers keep CuTe's static/dynamic distinction for printing
only: :class:`StaticInt` (``_8``) equals the plain ``8``.

sympy is not imported here at start-up: a value is symbolic only if sympy was already imported
by whoever built it (:func:`symbol`, the text reader), so :func:`is_sym` asks ``sys.modules``.

>>> flatten(((4, 8), 2)), product(((4, 8), 2)), compact_row_major(((4, 8), 2)) == ((16, 2), 1)
((4, 8, 2), 64, True)
"""
from __future__ import annotations

import sys
from numbers import Integral
from typing import TYPE_CHECKING, Any, Iterable, Sequence, Union

from verilayout.errors import LayoutError

if TYPE_CHECKING:
    import sympy

__all__ = ["StaticInt", "IntTuple", "symbol", "is_sym", "flatten", "product", "compact_col_major",
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

    >>> StaticInt(8) == 8, _fmt_tree((StaticInt(8), 8), "cute")
    (True, '(_8,8)')
    """

    def __new__(cls, value: int) -> "StaticInt":
        if isinstance(value, bool) or not isinstance(value, Integral):
            raise LayoutError(f"StaticInt needs an integer, got {value!r}")
        return super().__new__(cls, int(value))

    def __repr__(self) -> str:
        return f"StaticInt({int(self)})"


def _is_static(*xs: Any) -> bool:
    return all(isinstance(x, StaticInt) for x in xs)


def _mk(value: int, static: bool) -> int:
    return StaticInt(value) if static else int(value)


def _smul(a: int, b: int) -> int:
    return _mk(int(a) * int(b), _is_static(a, b))


def _sdiv(a: int, b: int) -> int:
    return _mk(int(a) // int(b), _is_static(a, b))


def _sceil(a: int, b: int) -> int:
    return _mk(-(-int(a) // int(b)), _is_static(a, b))


def _smin(a: int, b: int) -> int:
    return _mk(min(int(a), int(b)), _is_static(a, b))


def _sprod(xs: Iterable[int]) -> int:
    acc: int = StaticInt(1)
    for x in xs:
        acc = _smul(acc, x)
    return acc



# ----- integer tuples ----------------------------------------------------------------

IntTuple = Union[int, "sympy.Expr", tuple]

_SYMBOLS: dict[str, "sympy.Symbol"] = {}


def symbol(name: str) -> "sympy.Symbol":
    """The sympy symbol the parser uses for ``name`` (a positive integer).

    >>> symbol("m") is symbol("m"), symbol("m").is_positive
    (True, True)
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise LayoutError(f"a symbol name is an identifier such as 'm', got {name!r}"[:120])
    if name not in _SYMBOLS:
        import sympy  # deferred: sympy costs ~0.2 s at start-up; only symbolic layouts need it
        _SYMBOLS[name] = sympy.Symbol(name, integer=True, positive=True)
    return _SYMBOLS[name]


def _norm_leaf(x: Any, what: str) -> Any:
    if isinstance(x, StaticInt):
        return x
    if isinstance(x, bool):
        raise LayoutError(f"{what}: {x!r} is not an integer")
    if isinstance(x, Integral):
        return int(x)
    if is_sym(x):
        import sympy  # deferred: sympy costs ~0.2 s at start-up (already loaded: x is a sympy object)
        x = sympy.expand(x)
        if x.is_Integer:
            return int(x)
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


def _norm_tree(t: Any, what: str) -> IntTuple:
    if isinstance(t, (tuple, list)):
        if not t:
            raise LayoutError(f"{what}: empty tuple")
        return tuple(_norm_tree(x, what) for x in t)
    return _norm_leaf(t, what)


def _is_tuple(t: Any) -> bool:
    return isinstance(t, tuple)


def flatten(t: IntTuple) -> tuple:
    """The leaves of a nested tuple, in order.

    >>> flatten(((8, 2), (4, (4, 1))))
    (8, 2, 4, 4, 1)
    """
    if _is_tuple(t):
        return tuple(x for c in t for x in flatten(c))
    return (t,)


def product(t: IntTuple) -> Any:
    """Product of the leaves (static when every leaf is static).

    >>> product(((8, 2), 4))
    64
    """
    leaves = _leaves_checked(t, "product")
    if any(is_sym(x) for x in leaves):
        acc: Any = 1
        for x in leaves:
            acc = acc * x
        return acc.expand()
    return _sprod(leaves)


def _congruent(a: IntTuple, b: IntTuple) -> bool:
    if _is_tuple(a) != _is_tuple(b):
        return False
    if _is_tuple(a):
        return len(a) == len(b) and all(_congruent(x, y) for x, y in zip(a, b))
    return True


def _depth(t: IntTuple) -> int:
    return 1 + max(_depth(x) for x in t) if _is_tuple(t) else 0


def _unflatten(flat: Sequence, like: IntTuple) -> IntTuple:
    it = iter(flat)

    def go(t):
        return tuple(go(x) for x in t) if _is_tuple(t) else next(it)
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
        elif isinstance(s, StaticInt) and s == 1:
            out[k] = StaticInt(0)
        else:
            out[k] = current
            current = _smul(current, s)
    return _unflatten(out, shape)


def compact_col_major(shape: IntTuple, current: Any = StaticInt(1)) -> IntTuple:
    """CuTe's ``compact_col_major`` (``LayoutLeft``): strides of a compact layout whose first leaf
    varies fastest, starting at ``current``.

    Law: over the flattened leaves ``s_0, s_1, ...``, ``stride_k = current * s_0 * ... * s_{k-1}``,
    except that a static extent ``_1`` gets stride ``_0`` (a dynamic ``1`` keeps the running
    product); the nesting of ``shape`` is kept.

    >>> _fmt_tree(compact_col_major((4, (8, StaticInt(1), (2, 3)))), "cute")
    '(_1,(4,_0,(32,64)))'
    """
    return _compact(shape, current, range(len(flatten(shape))))


def compact_row_major(shape: IntTuple, current: Any = StaticInt(1)) -> IntTuple:
    """CuTe's ``compact_row_major`` (``LayoutRight``): strides of a compact layout whose last leaf
    varies fastest, starting at ``current``.

    Law: as :func:`compact_col_major` over the flattened leaves taken right to left (at every
    nesting level the last mode is the fastest).

    >>> _fmt_tree(compact_row_major((4, (8, StaticInt(1), (2, 3)))), "cute")
    '(48,(6,_0,(3,_1)))'
    """
    return _compact(shape, current, range(len(flatten(shape)) - 1, -1, -1))


def _free_symbols(t: IntTuple) -> set:
    out: set = set()
    for x in flatten(t):
        if is_sym(x):
            out |= x.free_symbols
    return out


# ----- text -----------------------------------------------------------------------------------

def _fmt_leaf(x: Any, style: str) -> str:
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


def _fmt_tree(t: IntTuple, style: str) -> str:
    if _is_tuple(t):
        return "(" + ",".join(_fmt_tree(x, style) for x in t) + ")"
    return _fmt_leaf(t, style)

