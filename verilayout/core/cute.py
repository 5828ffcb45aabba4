"""CuTe layouts: nested ``Shape:Stride``, ``Swizzle<B,M,S>``, composed layouts.

A CuTe layout maps a (nested) coordinate to an offset: the coordinate is read
colexicographically (the first mode varies fastest) and the offset is the dot
product of the coordinate with the strides. Strides count *elements*.

>>> from verilayout.frontends.cute_text import parse_cute
>>> L = parse_cute("((_8,2),(4,4)):((8,64),(1,4))")
>>> L((3, 5)), L(11), L.size
(29, 88, 256)

A :class:`ComposedLayout` puts a :class:`Swizzle` after a layout. The units the
swizzle acts on are explicit: ``smem_ptr[16b]`` in the text means byte addresses
of 16-bit elements (CuTe's GMMA atoms); for a bare ``Swizzle<B,M,S> o L`` the
caller says ``swizzle_units="bytes"`` or ``"elements"``. Nothing is guessed:
asking for an offset whose units are unknown raises :class:`LayoutError`.

>>> A = parse_cute("Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)")
>>> A.offset_bytes((1, 0)), A.offset_elements((1, 0))
(144, 72)

Integers keep CuTe's static/dynamic distinction for printing only: ``_8`` is a
:class:`StaticInt`, ``8`` a plain ``int``; they compare equal. Shapes and strides
may be sympy expressions (the seeds' ``((8,m),(T,2k)):((8T,SBO),(1,T))``);
``subs`` makes them concrete.

The algebra (:func:`composition`, :func:`complement`, :func:`logical_divide`,
:func:`logical_product`, :func:`blocked_product`, :func:`tile_to_shape`,
:func:`coalesce`, :func:`right_inverse`) follows CuTe's published definitions;
where CuTe would return a layout that is not the composed function (its weak
divisibility checks), this module raises :class:`LayoutError` instead. Modes are
merged and dropped by value (as pycute does): with all-static inputs the printed
results are CuTe C++'s, static marks included; with dynamic ints CuTe C++ may keep
extra extent-1 modes (same function, different nesting).

:func:`to_linear` gives the GF(2) LinearLayout (coordinate bits -> ``offset``) when the
map is linear, :func:`shared_linear_layout` Triton's inverse view (``offset`` ->
``dim0, dim1, ...``), :func:`z3_offset` a z3 term for any concrete layout.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral
from typing import Any, Callable, Iterable, Mapping, Sequence, Union

import numpy as np
import sympy
import z3

from verilayout.errors import LayoutError
from verilayout.core.linear_layout import LinearLayout
from verilayout.core.smt import FunctionLayout

__all__ = [
    "StaticInt", "Swizzle", "Layout", "ComposedLayout", "format_cute",
    "flatten", "product", "make_layout", "offset_elements", "offset_bytes", "offsets_table",
    "why_not_linear", "is_linear", "to_linear", "shared_linear_layout", "z3_offset",
    "z3_in_domain", "coalesce", "filter_layout", "composition", "complement",
    "logical_divide", "logical_product", "blocked_product", "make_ordered_layout",
    "tile_to_shape", "right_inverse", "left_inverse", "symbol", "to_function",
]

UNITS = ("elements", "bytes")


# ----- static integers and arithmetic that tracks them ------------------------------

class StaticInt(int):
    """An integer CuTe knows at compile time; printed ``_8``. Equal to the plain int.

    Arithmetic through this module's algebra keeps a result static exactly when
    every operand is static (as CuTe's ``Int<N>``); plain Python arithmetic on a
    StaticInt gives a plain int.

    >>> StaticInt(8) == 8, format_cute(Layout(StaticInt(8), StaticInt(1)))
    (True, '_8:_1')
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

IntTuple = Union[int, sympy.Expr, tuple]

_SYMBOLS: dict[str, sympy.Symbol] = {}


def symbol(name: str) -> sympy.Symbol:
    """The sympy symbol the parser uses for ``name`` (a positive integer).

    >>> from verilayout.frontends.cute_text import parse_cute
    >>> parse_cute("(8,m):(1,8)").shape[1] == symbol("m")
    True
    """
    if name not in _SYMBOLS:
        _SYMBOLS[name] = sympy.Symbol(name, integer=True, positive=True)
    return _SYMBOLS[name]


def _norm_leaf(x: Any, what: str) -> Any:
    if isinstance(x, StaticInt):
        return x
    if isinstance(x, bool):
        raise LayoutError(f"{what}: {x!r} is not an integer")
    if isinstance(x, Integral):
        return int(x)
    if isinstance(x, sympy.Basic):
        x = sympy.expand(sympy.sympify(x))
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
    leaves = flatten(t)
    if any(isinstance(x, sympy.Basic) for x in leaves):
        return sympy.expand(sympy.Mul(*leaves))
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


def _compact_col_major(shape: IntTuple, current: int = StaticInt(1)) -> IntTuple:
    """CuTe's compact column-major strides (a static shape 1 gets stride ``_0``)."""
    flat = flatten(shape)
    out = []
    for s in flat:
        if isinstance(s, sympy.Basic) or isinstance(current, sympy.Basic):
            out.append(current)
            current = sympy.expand(current * s)
        elif isinstance(s, StaticInt) and s == 1:
            out.append(StaticInt(0))
        else:
            out.append(current)
            current = _smul(current, s)
    return _unflatten(out, shape)


def _free_symbols(t: IntTuple) -> set:
    out: set = set()
    for x in flatten(t):
        if isinstance(x, sympy.Basic):
            out |= x.free_symbols
    return out


# ----- Swizzle -------------------------------------------------------------------------

@dataclass(frozen=True)
class Swizzle:
    """CuTe's ``Swizzle<B,M,S>``: XOR ``B`` bits taken ``S`` above bit ``M`` into bit ``M``.

    ``yyy_mask = ((1<<B)-1) << (M + max(0,S))``, ``zzz_mask = ((1<<B)-1) << (M - min(0,S))``
    and ``swizzle(x) = x ^ shiftr(x & yyy_mask, S)`` (a negative ``S`` shifts left).
    It is a GF(2)-linear involution. It works on ints and numpy integer arrays.

    >>> Swizzle(3, 4, 3)(0b1010000000), Swizzle(3, 4, 3)(Swizzle(3, 4, 3)(1234))
    (720, 1234)
    """

    bits: int
    base: int
    shift: int

    def __post_init__(self):
        for name in ("bits", "base", "shift"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, Integral):
                raise LayoutError(f"Swizzle {name} must be an integer, got {v!r}")
            object.__setattr__(self, name, int(v))
        if self.bits < 0 or self.base < 0:
            raise LayoutError(f"Swizzle<{self.bits},{self.base},{self.shift}>: B and M must be >= 0")
        if abs(self.shift) < self.bits:
            raise LayoutError(f"Swizzle<{self.bits},{self.base},{self.shift}>: |S| must be >= B "
                              "(the XOR source and target bits would overlap)")

    @property
    def yyy_mask(self) -> int:
        """Bits read (the source of the XOR)."""
        return ((1 << self.bits) - 1) << (self.base + max(0, self.shift))

    @property
    def zzz_mask(self) -> int:
        """Bits changed (the target of the XOR)."""
        return ((1 << self.bits) - 1) << (self.base - min(0, self.shift))

    @property
    def is_identity(self) -> bool:
        """``B == 0``: the swizzle changes nothing (units then do not matter)."""
        return self.bits == 0

    def __call__(self, x):
        y = x & self.yyy_mask
        return x ^ (y >> self.shift if self.shift >= 0 else y << -self.shift)

    def rebased(self, extra: int) -> "Swizzle":
        """The same swizzle on addresses ``2**extra`` times finer (``M + extra``).

        >>> Swizzle(3, 3, 3).rebased(1)
        Swizzle(bits=3, base=4, shift=3)
        """
        return Swizzle(self.bits, self.base + extra, self.shift)

    def z3(self, x: z3.BitVecRef) -> z3.BitVecRef:
        """The swizzle on a z3 bit-vector (logical shifts)."""
        if self.bits == 0:
            return x
        y = x & z3.BitVecVal(self.yyy_mask % (1 << x.size()), x.size())
        return x ^ (z3.LShR(y, self.shift) if self.shift >= 0 else y << -self.shift)

    def __str__(self) -> str:
        return f"Sw<{self.bits},{self.base},{self.shift}>"


# ----- Layout --------------------------------------------------------------------------

@dataclass(frozen=True, init=False)
class Layout:
    """A CuTe layout ``shape:stride`` (congruent nested tuples of ints or sympy expressions).

    ``Layout(shape)`` uses CuTe's compact column-major strides. ``L(coord)``
    takes an int (a colexicographic index into the whole layout) or a nested
    tuple (each entry an int index into that mode, or a tuple).

    >>> L = Layout((4, (2, 3)), (1, (4, 8)))
    >>> L.size, L.cosize, L.rank, L.depth, L((1, (1, 2))), L(5)
    (24, 24, 2, 2, 21, 5)
    """

    shape: IntTuple
    stride: IntTuple

    def __init__(self, shape: IntTuple, stride: IntTuple | None = None):
        shape = _norm_tree(shape, "shape")
        for s in flatten(shape):
            if not isinstance(s, sympy.Basic) and s < 1:
                raise LayoutError(f"shape {_fmt_tree(shape, 'cute')} has extent {s}; extents are >= 1")
        if stride is None:
            stride = _compact_col_major(shape)
        stride = _norm_tree(stride, "stride")
        if not _congruent(shape, stride):
            raise LayoutError(f"shape {_fmt_tree(shape, 'cute')} and stride "
                              f"{_fmt_tree(stride, 'cute')} are not congruent")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "stride", stride)

    # --- structure
    @property
    def rank(self) -> int:
        """Number of top-level modes (1 for an integral shape)."""
        return len(self.shape) if _is_tuple(self.shape) else 1

    @property
    def depth(self) -> int:
        """Nesting depth (0 for an integral shape)."""
        return _depth(self.shape)

    @property
    def size(self) -> Any:
        """Number of coordinates (product of the shape)."""
        return product(self.shape)

    @property
    def cosize(self) -> Any:
        """CuTe's cosize: ``L(size - 1) + 1`` (one past the largest offset for strides >= 0)."""
        terms = [(s - 1) * d for s, d in zip(flatten(self.shape), flatten(self.stride))]
        if any(isinstance(t, sympy.Basic) for t in terms):
            return sympy.expand(sum(terms) + 1)
        return _mk(sum(int(t) for t in terms) + 1, _is_static(*flatten(self.shape), *flatten(self.stride)))

    @property
    def is_symbolic(self) -> bool:
        """Some extent or stride is a sympy expression."""
        return bool(self.free_symbols)

    @property
    def free_symbols(self) -> set:
        """The sympy symbols in the shape and stride."""
        return _free_symbols(self.shape) | _free_symbols(self.stride)

    def modes(self) -> list["Layout"]:
        """The top-level modes as layouts."""
        if not _is_tuple(self.shape):
            return [self]
        return [Layout(s, d) for s, d in zip(self.shape, self.stride)]

    def __getitem__(self, i: int) -> "Layout":
        return self.modes()[i]

    def leaves(self) -> list[tuple[Any, Any]]:
        """``[(extent, stride), ...]`` of the flattened layout (first mode first)."""
        return list(zip(flatten(self.shape), flatten(self.stride)))

    # --- evaluation
    def __call__(self, coord: Any) -> Any:
        v = _crd2idx(coord, self.shape, self.stride, "coordinate")
        return int(v) if isinstance(v, sympy.Basic) and v.is_Integer else v

    def offset_elements(self, coord: Any) -> Any:
        """The element offset of ``coord`` (same as ``L(coord)``)."""
        return self(coord)

    def offset_bytes(self, coord: Any, elem_bits: int | None = None) -> int:
        """The byte offset of ``coord`` for ``elem_bits``-bit elements.

        >>> Layout((4, 2), (1, 4)).offset_bytes((1, 1), elem_bits=32)
        20
        """
        return offset_bytes(self, coord, elem_bits)

    def subs(self, values: Mapping[Any, Any]) -> "Layout":
        """Substitute symbols (names or sympy symbols) by integers or expressions.

        >>> from verilayout.frontends.cute_text import parse_cute
        >>> parse_cute("((8,m),(T,2k)):((8T,SBO),(1,T))").subs({"T": 4, "m": 2, "k": 2, "SBO": 256})
        Layout('((8,2),(4,4)):((32,256),(1,4))')
        """
        sub = _subs_map(values, self.free_symbols)
        return Layout(_subs_tree(self.shape, sub), _subs_tree(self.stride, sub))

    def __str__(self) -> str:
        return format_cute(self)

    def __repr__(self) -> str:
        return f"Layout({format_cute(self)!r})"


def _subs_map(values: Mapping[Any, Any], free: set) -> dict:
    if not isinstance(values, Mapping):
        raise LayoutError("subs needs a mapping from symbol names to values")
    names = {str(s): s for s in free}
    sub = {}
    for k, v in values.items():
        key = str(k)
        if key not in names:
            raise LayoutError(f"subs: '{key}' is not a symbol of this layout "
                              f"(symbols: {sorted(names) or 'none'})")
        if isinstance(v, bool) or not isinstance(v, (Integral, sympy.Basic)):
            raise LayoutError(f"subs: value for '{key}' must be an integer or sympy expression, got {v!r}")
        sub[names[key]] = v
    return sub


def _subs_tree(t: IntTuple, sub: dict) -> IntTuple:
    if _is_tuple(t):
        return tuple(_subs_tree(x, sub) for x in t)
    if isinstance(t, sympy.Basic):
        return _norm_leaf(t.subs(sub), "subs")
    return t


def _concrete(x: Any, what: str) -> int:
    if isinstance(x, sympy.Basic):
        raise LayoutError(f"{what} is symbolic ({x}); substitute values with .subs first")
    return x


def _check_concrete(layout: Layout, what: str) -> None:
    if layout.is_symbolic:
        names = ", ".join(sorted(str(s) for s in layout.free_symbols))
        raise LayoutError(f"{what} needs a concrete layout; {format_cute(layout)} has symbols "
                          f"{names} (use .subs)")


def _crd2idx(coord: Any, shape: IntTuple, stride: IntTuple, where: str) -> Any:
    if _is_tuple(coord):
        if not _is_tuple(shape):
            raise LayoutError(f"{where} {coord!r} is a tuple but the shape there is {shape}")
        if len(coord) != len(shape):
            raise LayoutError(f"{where} {coord!r} has {len(coord)} entries; the shape "
                              f"{_fmt_tree(shape, 'cute')} has {len(shape)} modes")
        terms = [_crd2idx(c, s, d, where) for c, s, d in zip(coord, shape, stride)]
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        return total
    if isinstance(coord, bool) or not isinstance(coord, Integral):
        raise LayoutError(f"{where} entry {coord!r} is not an integer")
    coord = int(coord)
    size = product(shape)
    if not isinstance(size, sympy.Basic) and not 0 <= coord < size:
        raise LayoutError(f"{where} {coord} is outside [0, {size}) of shape {_fmt_tree(shape, 'cute')}")
    if not _is_tuple(shape):
        return coord * stride if isinstance(stride, sympy.Basic) else coord * int(stride)
    total: Any = 0
    rest = coord
    leaves = list(zip(flatten(shape), flatten(stride)))
    for k, (s, d) in enumerate(leaves):
        d = d if isinstance(d, sympy.Basic) else int(d)
        if k == len(leaves) - 1:
            c = rest  # the last mode takes what is left (in range: checked above)
        elif isinstance(s, sympy.Basic):
            if rest:
                raise LayoutError(f"{where} {coord} is a flat index into a symbolic shape "
                                  f"{_fmt_tree(shape, 'cute')}; give a tuple coordinate")
            c = 0
        else:
            c = rest % int(s)
            rest //= int(s)
        total = total + c * d
    return total


def _eval_ext(leaves: Sequence[tuple[int, int]], idx: int) -> int:
    """CuTe's evaluation of a flat index; the last mode absorbs any overflow."""
    total = 0
    for k, (s, d) in enumerate(leaves):
        if k == len(leaves) - 1:
            total += idx * d
        else:
            total += (idx % s) * d
            idx //= s
    return total


def make_layout(*layouts: Layout) -> Layout:
    """Concatenate layouts as the modes of a new layout.

    >>> make_layout(Layout(4, 1), Layout(2, 4))
    Layout('(4,2):(1,4)')
    """
    if len(layouts) == 1 and isinstance(layouts[0], (list, tuple)):
        layouts = tuple(layouts[0])
    for L in layouts:
        if not isinstance(L, Layout):
            raise LayoutError(f"make_layout needs Layouts, got {type(L).__name__}")
    if not layouts:
        raise LayoutError("make_layout needs at least one layout")
    return Layout(tuple(L.shape for L in layouts), tuple(L.stride for L in layouts))


def _append(layout: Layout, rank: int) -> Layout:
    """Pad with ``_1:_0`` modes to ``rank`` (CuTe's ``append<R>``)."""
    modes = layout.modes()
    modes += [Layout(StaticInt(1), StaticInt(0))] * (rank - len(modes))
    return make_layout(*modes)


# ----- ComposedLayout -------------------------------------------------------------------

@dataclass(frozen=True, init=False)
class ComposedLayout:
    """``swizzle o offset o layout``: ``offset(c) = swizzle(offset + layout(c))`` in explicit units.

    * ``ptr_bits=N`` (CuTe's ``smem_ptr[Nb]``): the swizzle acts on byte addresses
      of N-bit elements (``swizzle_units="bytes"``, ``elem_bits=N``);
    * ``swizzle_units="bytes"`` without a width (the seeds' bare ``smem_ptr``):
      bytes, element width still needed for any offset;
    * ``swizzle_units="elements"``: the swizzle acts on element offsets;
    * ``swizzle_units=None``: unknown; offsets raise unless the swizzle is the identity.

    ``offset`` is in elements, added before the swizzle. ``L(coord)`` is the element offset.

    >>> C = ComposedLayout(Swizzle(1, 4, 3), Layout((8, 2), (8, 64)), ptr_bits=32)
    >>> C.offset_bytes((4, 0)), C((4, 0))
    (144, 36)
    """

    swizzle: Swizzle
    layout: Layout
    offset: int
    swizzle_units: str | None
    elem_bits: int | None

    def __init__(self, swizzle: Swizzle, layout: Layout, offset: int = 0, *,
                 ptr_bits: int | None = None, swizzle_units: str | None = None,
                 elem_bits: int | None = None):
        if not isinstance(swizzle, Swizzle):
            raise LayoutError(f"ComposedLayout needs a Swizzle, got {type(swizzle).__name__}")
        if not isinstance(layout, Layout):
            raise LayoutError(f"ComposedLayout needs a Layout, got {type(layout).__name__}")
        if isinstance(offset, bool) or not isinstance(offset, Integral) or offset < 0:
            raise LayoutError(f"offset must be an integer >= 0 (in elements), got {offset!r}")
        if swizzle_units not in (None,) + UNITS:
            raise LayoutError(f"swizzle_units must be 'bytes', 'elements' or None, got {swizzle_units!r}")
        if elem_bits is not None:
            elem_bits = _check_elem_bits(elem_bits)
        if ptr_bits is not None:
            ptr_bits = _check_elem_bits(ptr_bits, "ptr_bits")
            if swizzle_units == "elements":
                raise LayoutError("smem_ptr means the swizzle acts on byte addresses, but "
                                  "swizzle_units='elements' was given")
            if elem_bits is not None and elem_bits != ptr_bits:
                raise LayoutError(f"smem_ptr[{ptr_bits}b] but elem_bits={elem_bits}")
            swizzle_units, elem_bits = "bytes", ptr_bits
        object.__setattr__(self, "swizzle", swizzle)
        object.__setattr__(self, "layout", layout)
        object.__setattr__(self, "offset", offset if isinstance(offset, StaticInt) else int(offset))
        object.__setattr__(self, "swizzle_units", swizzle_units)
        object.__setattr__(self, "elem_bits", elem_bits)

    @property
    def ptr_bits(self) -> int | None:
        """The ``N`` of ``smem_ptr[Nb]`` (element width when the swizzle acts on bytes)."""
        return self.elem_bits if self.swizzle_units == "bytes" else None

    shape = property(lambda self: self.layout.shape, doc="Shape of the inner layout.")
    stride = property(lambda self: self.layout.stride, doc="Stride of the inner layout.")
    size = property(lambda self: self.layout.size, doc="Number of coordinates.")
    rank = property(lambda self: self.layout.rank, doc="Number of top-level modes.")
    depth = property(lambda self: self.layout.depth, doc="Nesting depth.")
    free_symbols = property(lambda self: self.layout.free_symbols, doc="Symbols of the inner layout.")
    is_symbolic = property(lambda self: self.layout.is_symbolic, doc="Inner layout has symbols.")

    @property
    def cosize(self) -> int:
        """One past the largest element offset (by enumeration)."""
        return int(offsets_table(self).max()) + 1

    def __call__(self, coord: Any) -> int:
        return offset_elements(self, coord)

    def offset_elements(self, coord: Any, elem_bits: int | None = None) -> int:
        """Element offset of ``coord`` after the swizzle (in its declared units)."""
        return offset_elements(self, coord, elem_bits)

    def offset_bytes(self, coord: Any, elem_bits: int | None = None) -> int:
        """Byte offset of ``coord`` after the swizzle (in its declared units)."""
        return offset_bytes(self, coord, elem_bits)

    def with_layout(self, layout: Layout) -> "ComposedLayout":
        """Same swizzle, offset and units over another layout."""
        return ComposedLayout(self.swizzle, layout, self.offset,
                              swizzle_units=self.swizzle_units, elem_bits=self.elem_bits)

    def subs(self, values: Mapping[Any, Any]) -> "ComposedLayout":
        """Substitute symbols in the inner layout."""
        return self.with_layout(self.layout.subs(values))

    def __getitem__(self, i: int) -> "ComposedLayout":
        return self.with_layout(self.layout[i])

    def __str__(self) -> str:
        return format_cute(self)

    def __repr__(self) -> str:
        extra = "" if self.swizzle_units == "bytes" or self.swizzle.is_identity else \
            f", swizzle_units={self.swizzle_units!r}"
        if self.elem_bits is not None and self.swizzle_units != "bytes":
            extra += f", elem_bits={self.elem_bits}"
        return f"ComposedLayout({format_cute(self)!r}{extra})"


AnyLayout = Union[Layout, ComposedLayout]


def _check_elem_bits(n: Any, what: str = "elem_bits") -> int:
    if isinstance(n, bool) or not isinstance(n, Integral) or n < 1 or n & (n - 1):
        raise LayoutError(f"{what} must be a power of two >= 1, got {n!r}")
    return int(n)


# ----- addresses in explicit units --------------------------------------------------------

@dataclass(frozen=True)
class _Plan:
    """``value(c) = swz((offset + L(c)) << shift_in) >> shift_out`` (exact division)."""

    layout: Layout
    offset: int
    shift_in: int
    swizzle: Swizzle | None
    shift_out: int
    unit: str
    desc: str


def _plan(obj: AnyLayout, unit: str, elem_bits: int | None) -> _Plan:
    if unit not in UNITS:
        raise LayoutError(f"unit must be 'elements' or 'bytes', got {unit!r}")
    if not isinstance(obj, (Layout, ComposedLayout)):
        raise LayoutError(f"expected a Layout or ComposedLayout, got {type(obj).__name__}")
    if elem_bits is not None:
        elem_bits = _check_elem_bits(elem_bits)
    if isinstance(obj, ComposedLayout):
        if obj.elem_bits is not None and elem_bits is not None and elem_bits != obj.elem_bits:
            raise LayoutError(f"elem_bits={elem_bits} contradicts the layout's {obj.elem_bits}-bit elements")
        elem_bits = elem_bits if elem_bits is not None else obj.elem_bits
        layout, offset, swz = obj.layout, int(obj.offset), obj.swizzle
        swz_units = obj.swizzle_units
        if swz.is_identity:
            swz, swz_units = None, None
        elif swz_units is None:
            raise LayoutError(f"the units of {swz} are unknown: pass swizzle_units='bytes' "
                              "(byte addresses, as smem_ptr) or 'elements'")
    else:
        layout, offset, swz, swz_units = obj, 0, None, None
    _check_concrete(layout, "an offset")
    need_bits = unit == "bytes" or swz_units == "bytes"
    if need_bits and elem_bits is None:
        why = "the swizzle acts on byte addresses" if swz_units == "bytes" else "a byte offset was asked"
        raise LayoutError(f"element width unknown: {why}; pass elem_bits")
    n = elem_bits.bit_length() - 1 if need_bits else 0  # values are in bits when n is set
    if swz is not None:
        swz = swz.rebased(3 if swz_units == "bytes" else n) if need_bits else swz
    shift_out = (3 if unit == "bytes" else n) if need_bits else 0
    desc = f"{unit}" + (f" of {elem_bits}-bit elements" if elem_bits else "")
    return _Plan(layout, offset, n, swz, shift_out, unit, desc)


def _finish(plan: _Plan, pre: int, where: Any) -> int:
    v = pre << plan.shift_in
    if plan.swizzle is not None:
        if v < 0:
            raise LayoutError(f"coordinate {where!r} has a negative offset {pre}; it cannot be swizzled")
        v = plan.swizzle(v)
    if v & ((1 << plan.shift_out) - 1):
        raise LayoutError(f"coordinate {where!r} lands at bit {v}, not on a whole {plan.unit[:-1]}")
    return v >> plan.shift_out


def offset_elements(obj: AnyLayout, coord: Any, elem_bits: int | None = None) -> int:
    """Element offset of ``coord``, swizzle applied in its declared units.

    >>> from verilayout.frontends.cute_text import parse_cute
    >>> C = parse_cute("Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)")
    >>> offset_elements(C, (1, 0))
    72
    """
    plan = _plan(obj, "elements", elem_bits)
    return _finish(plan, plan.offset + _concrete(plan.layout(coord), "offset"), coord)


def offset_bytes(obj: AnyLayout, coord: Any, elem_bits: int | None = None) -> int:
    """Byte offset of ``coord`` (needs the element width unless the layout carries it).

    >>> from verilayout.frontends.cute_text import parse_cute
    >>> offset_bytes(parse_cute("Swizzle<1,4,3> o (8,2):(8,64)", swizzle_units="bytes"), (4, 0), 32)
    144
    """
    plan = _plan(obj, "bytes", elem_bits)
    return _finish(plan, plan.offset + _concrete(plan.layout(coord), "offset"), coord)


def offsets_table(obj: AnyLayout, unit: str = "elements", elem_bits: int | None = None) -> np.ndarray:
    """Offsets of every flat (colexicographic) index, as an int64 numpy array (brute force).

    >>> offsets_table(Layout((2, 2), (2, 1))).tolist()
    [0, 2, 1, 3]
    """
    plan = _plan(obj, unit, elem_bits)
    leaves = plan.layout.leaves()
    size = int(plan.layout.size)
    idx = np.arange(size, dtype=np.int64)
    acc = np.full(size, plan.offset, dtype=np.int64)
    for s, d in leaves:
        acc += (idx % int(s)) * int(d)
        idx //= int(s)
    v = acc << plan.shift_in
    if plan.swizzle is not None:
        if (v < 0).any():
            raise LayoutError("negative offsets cannot be swizzled")
        v = plan.swizzle(v)
    bad = np.nonzero(v & ((1 << plan.shift_out) - 1))[0]
    if bad.size:
        raise LayoutError(f"flat index {int(bad[0])} lands at bit {int(v[bad[0]])}, not on a whole "
                          f"{unit[:-1]}")
    return v >> plan.shift_out


# ----- GF(2) linearity ---------------------------------------------------------------------

def _in_bit_bases(plan: _Plan) -> tuple[list[list[int]], str | None]:
    """Per top-level mode, the pre-swizzle value (in plan units) of each input bit."""
    per_mode: list[list[int]] = []
    leaf_no = 0
    for mode in plan.layout.modes():
        bases: list[int] = []
        for s, d in mode.leaves():
            s, d = int(s), int(d)
            if s & (s - 1):
                return [], f"mode {leaf_no} (flattened) has extent {s}, not a power of two"
            if d < 0:
                return [], f"mode {leaf_no} (flattened) has negative stride {d}"
            bases += [(d << j) << plan.shift_in for j in range(s.bit_length() - 1)]
            leaf_no += 1
        per_mode.append(bases)
    return per_mode, None


def _linear_reason(plan: _Plan) -> tuple[list[list[int]], str | None]:
    per_mode, why = _in_bit_bases(plan)
    if why:
        return [], why
    if plan.offset:
        return [], f"offset {plan.offset} is nonzero: the map is affine, not linear"
    seen = 0
    flat = [b for m in per_mode for b in m]
    for k, b in enumerate(flat):
        if b & seen:
            other = next(c for c in flat[:k] if c & b)
            return [], (f"strides carry into each other: input bits with offsets "
                        f"{other >> plan.shift_in} and {b >> plan.shift_in} share bits, "
                        "so their sum is not their XOR")
        seen |= b
    out = []
    for bases in per_mode:
        row = []
        for b in bases:
            v = plan.swizzle(b) if plan.swizzle is not None else b
            if v & ((1 << plan.shift_out) - 1):
                return [], f"an input bit lands at bit address {v}, not on a whole {plan.unit[:-1]}"
            row.append(v >> plan.shift_out)
        out.append(row)
    return out, None


def why_not_linear(obj: AnyLayout, unit: str = "elements", elem_bits: int | None = None) -> str | None:
    """Why the coordinate -> offset map is not GF(2)-linear, or None when it is.

    Linear exactly when every flattened extent is a power of two, strides are
    >= 0, the offset is 0 and the offsets of distinct input bits share no bits
    (so sums are XORs); a swizzle is linear and does not change the answer.

    >>> why_not_linear(Layout((2, 2), (1, 1)))
    'strides carry into each other: input bits with offsets 1 and 1 share bits, so their sum is not their XOR'
    """
    plan = _plan(obj, unit, elem_bits)
    return _linear_reason(plan)[1]


def is_linear(obj: AnyLayout, unit: str = "elements", elem_bits: int | None = None) -> bool:
    """True when the coordinate -> offset map is GF(2)-linear (see :func:`why_not_linear`).

    >>> from verilayout.frontends.cute_text import parse_cute
    >>> is_linear(parse_cute("((8,2),(4,4)):((4,32),(1,64))")), is_linear(Layout(6, 1))
    (True, False)
    """
    return why_not_linear(obj, unit, elem_bits) is None


def _dim_names(obj: AnyLayout, in_dims: str | Sequence[str] | None) -> list[str] | str:
    rank = obj.rank
    if in_dims is None:
        return [f"dim{i}" for i in range(rank)]
    if isinstance(in_dims, str):
        return in_dims
    names = list(in_dims)
    if len(names) != rank or len(set(names)) != len(names) or not all(isinstance(n, str) for n in names):
        raise LayoutError(f"in_dims must be {rank} distinct names (one per top-level mode), got {names}")
    return names


def to_linear(obj: AnyLayout, unit: str = "elements", elem_bits: int | None = None, *,
              in_dims: str | Sequence[str] | None = None, out_dim: str = "offset") -> LinearLayout:
    """The LinearLayout from coordinate bits to the offset (``unit``), when GF(2)-linear.

    In dims: one per top-level mode (``dim0``, ``dim1``, ... or the names given),
    each the colexicographic index into that mode; or one flattened dim when
    ``in_dims`` is a single name. Out dim ``out_dim`` in ``unit``
    (elements by default; bytes needs the element width).

    >>> from verilayout.frontends.cute_text import parse_cute
    >>> to_linear(parse_cute("Sw<1,4,3> o smem_ptr[16b](unset) o (8,16):(16,1)")).bases["dim0"]
    [[16], [32], [72]]
    """
    plan = _plan(obj, unit, elem_bits)
    per_mode, why = _linear_reason(plan)
    if why:
        raise LayoutError(f"{format_cute(obj)} is not GF(2)-linear: {why}")
    names = _dim_names(obj, in_dims)
    if isinstance(names, str):
        bases = {names: [[b] for m in per_mode for b in m]}
    else:
        bases = {n: [[b] for b in m] for n, m in zip(names, per_mode)}
    top = 0
    for m in per_mode:
        for b in m:
            top |= b
    return LinearLayout(bases, {out_dim: 1 << top.bit_length()}, require_surjective=False)


def shared_linear_layout(obj: AnyLayout, elem_bits: int | None = None, *,
                         dims: Sequence[str] | None = None) -> LinearLayout:
    """Triton's view of a shared-memory layout: element ``offset`` -> tensor coords ``dim0, dim1, ...``.

    The inverse of :func:`to_linear` (unit elements); top-level mode ``i`` is
    tensor dim ``i``. Raises when the map is not a bijection onto ``[0, size)``.

    >>> from verilayout.frontends.cute_text import parse_cute
    >>> shared_linear_layout(parse_cute("(2,2):(2,1)")).bases
    {'offset': [[0, 1], [1, 0]]}
    """
    L = to_linear(obj, "elements", elem_bits, in_dims=_dim_names(obj, dims))
    if not L.is_invertible():
        raise LayoutError(f"{format_cute(obj)} is not a bijection between coordinates and "
                          f"offsets [0, {obj.size}), so it has no offset -> coordinate layout")
    return L.invert()


# ----- z3 ------------------------------------------------------------------------------------

def _needed_bits(plan: _Plan) -> int:
    top = plan.offset + sum((int(s) - 1) * int(d) for s, d in plan.layout.leaves())
    bits = (top << plan.shift_in).bit_length()
    if plan.swizzle is not None and plan.swizzle.shift < 0:
        bits += -plan.swizzle.shift
    return max(1, bits, (int(plan.layout.size) - 1).bit_length())


def _z3_exactness(plan: _Plan) -> None:
    if plan.shift_out == 0:
        return
    low = plan.offset << plan.shift_in
    g = 0
    for s, d in plan.layout.leaves():
        if int(s) > 1:
            g = math.gcd(g, int(d) << plan.shift_in)
    g = math.gcd(g, low)
    tz = (g & -g).bit_length() - 1 if g else 1 << 30
    if plan.swizzle is not None and plan.swizzle.zzz_mask:
        top = (plan.offset + sum((int(s) - 1) * int(d) for s, d in plan.layout.leaves())) << plan.shift_in
        if top >= (plan.swizzle.yyy_mask & -plan.swizzle.yyy_mask):
            tz = min(tz, (plan.swizzle.zzz_mask & -plan.swizzle.zzz_mask).bit_length() - 1)
    if tz < plan.shift_out:
        raise LayoutError(f"offsets in {plan.unit} are not whole numbers for every coordinate "
                          f"({plan.desc}); z3 encoding refused")


def _z3_leaf_coords(coord: Any, shape: IntTuple, width: int) -> list:
    if isinstance(coord, tuple):
        if not _is_tuple(shape) or len(coord) != len(shape):
            raise LayoutError(f"z3 coordinate {coord!r} does not match shape {_fmt_tree(shape, 'cute')}")
        return [x for c, s in zip(coord, shape) for x in _z3_leaf_coords(c, s, width)]
    if isinstance(coord, Integral) and not isinstance(coord, bool):
        coord = z3.BitVecVal(int(coord), width)
    if not z3.is_bv(coord):
        raise LayoutError(f"z3 coordinate entry {coord!r} is not a bit-vector or an int")
    if coord.size() > width:
        raise LayoutError(f"z3 coordinate {coord} has {coord.size()} bits, more than width {width}")
    if coord.size() < width:
        coord = z3.ZeroExt(width - coord.size(), coord)
    if not _is_tuple(shape):
        return [coord]
    out, prefix = [], 1
    leaves = flatten(shape)
    for k, s in enumerate(leaves):
        c = z3.UDiv(coord, z3.BitVecVal(prefix, width)) if 1 < prefix < (1 << width) else coord
        if prefix >= (1 << width):
            c = z3.BitVecVal(0, width)
        elif int(s) < (1 << width):
            c = z3.URem(c, z3.BitVecVal(int(s), width))
        out.append(c)
        prefix *= int(s)
    return out


def _z3_max_width(coord: Any) -> int:
    if isinstance(coord, tuple):
        return max([_z3_max_width(c) for c in coord] or [0])
    return coord.size() if z3.is_bv(coord) else 0


def z3_offset(obj: AnyLayout, coord: Any, unit: str = "elements", elem_bits: int | None = None, *,
              width: int | None = None) -> z3.BitVecRef:
    """z3 bit-vector term for the offset of ``coord`` (any concrete layout, swizzle included).

    ``coord`` is one bit-vector (a flat colexicographic index) or a nested tuple of
    bit-vectors / ints like ``L(coord)``. Narrow coordinates are zero-extended.
    The term is ``width`` bits wide (default: just enough for every offset);
    coordinates outside the shape are the caller's to exclude (:func:`z3_in_domain`).

    >>> i = z3.BitVec("i", 6); L = Layout((8, 8), (8, 1))
    >>> z3.simplify(z3_offset(L, i) - z3_offset(L, (i % 8, i / 8))).sexpr() != "#x00"
    True
    """
    plan = _plan(obj, unit, elem_bits)
    need = max(_needed_bits(plan), _z3_max_width(coord))
    if width is None:
        width = need
    elif width < need:
        raise LayoutError(f"width {width} is too small: offsets of {format_cute(obj)} need {need} bits")
    _z3_exactness(plan)
    leaves = _z3_leaf_coords(coord, plan.layout.shape, width)
    acc = z3.BitVecVal(plan.offset, width)
    for c, (s, d) in zip(leaves, plan.layout.leaves()):
        d = int(d)
        if d < 0:
            raise LayoutError(f"negative stride {d}: the z3 encoding covers strides >= 0")
        if d and int(s) > 1:
            acc = acc + c * z3.BitVecVal(d, width)
    if plan.shift_in:
        acc = acc << plan.shift_in
    if plan.swizzle is not None:
        acc = plan.swizzle.z3(acc)
    if plan.shift_out:
        acc = z3.LShR(acc, plan.shift_out)
    return acc


def z3_in_domain(obj: AnyLayout, coord: Any) -> z3.BoolRef:
    """Constraint that ``coord`` (as for :func:`z3_offset`) is inside the layout's shape.

    >>> i = z3.BitVec("i", 4); s = z3.Solver(); s.add(z3_in_domain(Layout(6, 1), i), i == 6)
    >>> s.check()
    unsat
    """
    layout = obj.layout if isinstance(obj, ComposedLayout) else obj
    _check_concrete(layout, "z3_in_domain")

    def go(c, shape):
        if isinstance(c, tuple):
            if not _is_tuple(shape) or len(c) != len(shape):
                raise LayoutError(f"z3 coordinate {c!r} does not match shape {_fmt_tree(shape, 'cute')}")
            return [x for ci, si in zip(c, shape) for x in go(ci, si)]
        size = int(product(shape))
        if isinstance(c, Integral):
            return [z3.BoolVal(0 <= c < size)]
        if size >= 1 << c.size():
            return []
        return [z3.ULT(c, z3.BitVecVal(size, c.size()))]
    return z3.And(go(coord, layout.shape))


def to_function(obj: AnyLayout, unit: str = "elements", elem_bits: int | None = None, *,
                in_dims: Sequence[str] | None = None, out_dim: str = "offset"):
    """The layout as :class:`verilayout.core.smt.FunctionLayout` (in dims per top-level mode).

    >>> f = to_function(Layout((3, 4), (4, 1))); f.apply({"dim0": 2, "dim1": 1})
    {'offset': 9}
    """
    plan = _plan(obj, unit, elem_bits)
    names = _dim_names(obj, in_dims)
    if isinstance(names, str):
        raise LayoutError("to_function needs one in-dim name per top-level mode")
    sizes = {n: int(m.size) for n, m in zip(names, plan.layout.modes())}
    need = _needed_bits(plan)

    def fn(coords: Mapping[str, int]) -> dict:
        if set(coords) != set(names):
            raise LayoutError(f"expected inputs {names}, got {sorted(coords)}")
        c = tuple(coords[n] for n in names)
        c = c if _is_tuple(plan.layout.shape) else c[0]
        return {out_dim: (offset_elements if unit == "elements" else offset_bytes)(obj, c, elem_bits)}

    def z3_fn(vars: Mapping[str, z3.BitVecRef]) -> dict:
        c = tuple(vars[n] for n in names)
        c = c if _is_tuple(plan.layout.shape) else c[0]
        return {out_dim: z3_offset(obj, c, unit, elem_bits)}

    return FunctionLayout(sizes, {out_dim: 1 << need}, fn, z3_fn, name=format_cute(obj))


Layout.to_function = to_function  # type: ignore[attr-defined]
ComposedLayout.to_function = to_function  # type: ignore[attr-defined]


# ----- algebra ------------------------------------------------------------------------------

def _concrete_layout(x: Any, what: str) -> Layout:
    if isinstance(x, ComposedLayout):
        raise LayoutError(f"{what} is defined on plain layouts; this one has a swizzle")
    if isinstance(x, bool) or not isinstance(x, (Layout, Integral)):
        raise LayoutError(f"{what} needs a Layout, got {type(x).__name__}")
    L = Layout(x) if isinstance(x, Integral) else x
    _check_concrete(L, what)
    return L


def _from_leaves(leaves: list[tuple[int, int]]) -> Layout:
    if not leaves:
        return Layout(StaticInt(1), StaticInt(0))
    if len(leaves) == 1:
        return Layout(leaves[0][0], leaves[0][1])
    return Layout(tuple(s for s, _ in leaves), tuple(d for _, d in leaves))


def _coalesce_leaves(leaves: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, d in leaves:
        if s == 1:
            continue
        if out and out[-1][0] * out[-1][1] == d:
            out[-1] = (_smul(out[-1][0], s), out[-1][1])
        else:
            out.append((s, d))
    return out


def coalesce(layout: Layout, profile: IntTuple | None = None) -> Layout:
    """Merge modes that continue each other; same function on ``[0, size)``, depth <= 1.

    With a tuple ``profile``, coalesce each of the first ``len(profile)`` modes separately.

    >>> coalesce(Layout((2, (1, 6)), (1, (6, 2))))
    Layout('12:1')
    """
    layout = _concrete_layout(layout, "coalesce")
    if _is_tuple(profile):
        modes = layout.modes()
        if len(profile) > len(modes):
            raise LayoutError(f"coalesce profile has {len(profile)} modes, layout only {len(modes)}")
        return make_layout(*[coalesce(m, p) for m, p in zip(modes, profile)], *modes[len(profile):])
    return _from_leaves(_coalesce_leaves(layout.leaves()))


def filter_layout(layout: Layout) -> Layout:
    """Drop extent-1 and stride-0 modes, then coalesce (CuTe's ``filter``).

    >>> filter_layout(Layout((4, 2, 3), (1, 0, 4)))
    Layout('12:1')
    """
    layout = _concrete_layout(layout, "filter_layout")
    return _from_leaves(_coalesce_leaves((s, d) for s, d in layout.leaves() if s != 1 and d != 0))


def _coalesce_keep_last(layout: Layout) -> list[tuple[int, int]]:
    """Coalesce but keep the last mode's stride, which defines evaluation past the size."""
    leaves = layout.leaves()
    body, last = _coalesce_leaves(leaves[:-1]), leaves[-1]
    if body and body[-1][0] * body[-1][1] == last[1]:
        s, d = body.pop()
        last = (_smul(s, last[0]), d)  # same values inside the size and past it
    return body + [last]


def _compose_leaf(flat: list[tuple[int, int]], s: int, d: int) -> tuple[list, list]:
    if d == 0:
        return [s], [d]
    if d < 0:
        raise LayoutError(f"composition with a negative stride {d} is not supported")
    if len(flat) == 1:
        return [s], [_smul(d, flat[0][1])]
    shapes: list = []
    strides: list = []
    rest_s, rest_d = s, d
    for cs, cd in flat[:-1]:
        if rest_s == 1:  # done; CuTe still divides the stride (it only shows on extent-1 modes)
            rest_d = _sceil(rest_d, cs)
            continue
        if rest_d % cs == 0:
            rest_d = _sdiv(rest_d, cs)
            continue
        if rest_d > cs:
            raise LayoutError(f"composition: stride {rest_d} neither divides nor is divided by "
                              f"extent {cs} (CuTe's stride divisibility condition)")
        fits = (rest_s - 1) * rest_d < cs
        if cs % rest_d and not fits:
            raise LayoutError(f"composition: extent {cs} is not a multiple of stride {rest_d} and "
                              f"{rest_s} steps do not fit in it")
        new = _smin(_sceil(cs, rest_d), rest_s)
        if rest_s % new:
            raise LayoutError(f"composition: extent {rest_s} is not a multiple of {new} "
                              "(CuTe's shape divisibility condition)")
        shapes.append(new)
        strides.append(_smul(rest_d, cd))
        rest_s = _sdiv(rest_s, new)
        rest_d = _sceil(rest_d, cs)
    if rest_s != 1 or not shapes:
        shapes.append(rest_s)
        strides.append(_smul(rest_d, flat[-1][1]))
    return shapes, strides


def _compose_tree(flat: list, shape: IntTuple, stride: IntTuple) -> tuple[IntTuple, IntTuple]:
    if _is_tuple(shape):
        parts = [_compose_tree(flat, s, d) for s, d in zip(shape, stride)]
        return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
    shapes, strides = _compose_leaf(flat, shape, stride)
    if len(shapes) == 1:
        return shapes[0], strides[0]
    return tuple(shapes), tuple(strides)


Tiler = Union[None, int, Layout, tuple]


def composition(a: AnyLayout, b: Tiler, *, verify: bool = False) -> AnyLayout:
    """``a o b``: ``R(i) == a(b(i))`` for every ``i < size(b)`` when ``b`` has one mode.

    ``b`` may be a Layout, an int ``n`` (meaning ``n:_1``), ``None`` (keep), or a tuple
    of those applied mode by mode. ``a`` is evaluated past its size through its
    last mode, as CuTe does. A multi-mode ``b`` is composed mode by mode (CuTe's
    right-distributivity); that is ``a o b`` as functions when the modes of ``b``
    do not carry into each other in ``a``'s coordinates, and ``verify=True``
    checks it on every coordinate (LayoutError with the first mismatch).
    A swizzled ``a`` keeps its swizzle.

    >>> composition(Layout((4, 2), (2, 1)), Layout(4, 2))
    Layout('(2,2):(4,1)')
    """
    if isinstance(a, ComposedLayout):
        return a.with_layout(composition(a.layout, b, verify=verify))
    a = _concrete_layout(a, "composition")
    if b is None:
        return a
    if isinstance(b, tuple):
        modes = a.modes()
        if len(b) > len(modes):
            raise LayoutError(f"tiler has {len(b)} modes but the layout only {len(modes)}")
        return make_layout(*[composition(m, t, verify=verify) for m, t in zip(modes, b)],
                           *modes[len(b):])
    b = _concrete_layout(b, "composition")
    flat = _coalesce_keep_last(a)
    shape, stride = _compose_tree(flat, b.shape, b.stride)
    result = Layout(shape, stride)
    if verify:
        _verify_composition(a, b, result)
    return result


def _verify_composition(a: Layout, b: Layout, r: Layout) -> None:
    size = int(b.size)
    if size > 1 << 22:
        raise LayoutError(f"verify: {size} coordinates are too many to check by enumeration")
    rhs = offsets_table(b)
    got = offsets_table(r)
    leaves = [(int(s), int(d)) for s, d in a.leaves()]
    want = np.zeros(size, dtype=np.int64)
    idx = rhs.copy()
    for k, (s, d) in enumerate(leaves):
        want += (idx if k == len(leaves) - 1 else idx % s) * d
        idx //= s
    bad = np.nonzero(got != want)[0]
    if bad.size:
        i = int(bad[0])
        raise LayoutError(f"composition of {format_cute(a)} with {format_cute(b)} is not a o b: at "
                          f"index {i}, b gives {int(rhs[i])}, a of that is {int(want[i])}, "
                          f"the mode-wise result {format_cute(r)} gives {int(got[i])}")


def complement(layout: Layout, cotarget: int | None = None) -> Layout:
    """CuTe's complement: the layout of the offsets ``layout`` skips, up to ``cotarget``.

    Ordered by stride, each mode ``s:d`` leaves a gap ``d / current`` (current
    starts at 1 and becomes ``s*d``); the last mode repeats the whole up to
    ``cotarget`` (default: the cosize). Interleaved modes (a stride inside the span of
    the smaller modes) raise. As in CuTe, a stride that is not a multiple of that span
    leaves holes (the gap mode is rounded down), so ``(layout, result)`` is then
    injective but does not reach ``cotarget`` offsets.

    >>> complement(Layout(4, 2), 24)
    Layout('(2,3):(_1,8)')
    """
    layout = _concrete_layout(layout, "complement")
    leaves = [(s, d) for s, d in layout.leaves() if s != 1 and d != 0]
    if cotarget is None:
        cotarget = _from_leaves(leaves).cosize if leaves else StaticInt(1)
    if isinstance(cotarget, bool) or not isinstance(cotarget, Integral) or cotarget < 1:
        raise LayoutError(f"complement cotarget must be a positive integer, got {cotarget!r}")
    if any(d < 0 for _, d in leaves):
        raise LayoutError("complement of a layout with negative strides is not supported")
    if not leaves:
        return Layout(cotarget, _compact_col_major(cotarget))
    cur: int = StaticInt(1)
    out: list[tuple[int, int]] = []
    for s, d in sorted(leaves, key=lambda sd: int(sd[1])):
        if d < cur:
            raise LayoutError(f"complement of {format_cute(layout)} is undefined: stride {d} "
                              f"falls inside the span {cur} of the smaller modes")
        out.append((_sdiv(d, cur), cur))
        cur = _smul(d, s)
    rest = _sceil(cotarget, cur)
    out.append((rest, StaticInt(0) if isinstance(rest, StaticInt) and rest == 1 else cur))
    return _from_leaves(_coalesce_leaves(out))


def _tiler_modes(a: Layout, tiler: tuple, fn: Callable) -> Layout:
    modes = a.modes()
    if len(tiler) > len(modes):
        raise LayoutError(f"tiler has {len(tiler)} modes but the layout only {len(modes)}")
    return make_layout(*[fn(m, t) for m, t in zip(modes, tiler)], *modes[len(tiler):])


def logical_divide(a: AnyLayout, tiler: Tiler, *, verify: bool = False) -> AnyLayout:
    """Split ``a`` into (tile, rest): ``a o (tiler, complement(tiler, size(a)))``.

    A tuple tiler divides mode by mode; ``None`` keeps a mode. ``verify`` as in
    :func:`composition`. (CuTe C++ uses ``shape(coalesce(a))`` as the cotarget,
    which may split the rest mode further; the function is the same.)

    >>> logical_divide(Layout(16, 1), Layout(4, 2))
    Layout('(4,(2,2)):(2,(1,8))')
    """
    if isinstance(a, ComposedLayout):
        return a.with_layout(logical_divide(a.layout, tiler, verify=verify))
    a = _concrete_layout(a, "logical_divide")
    if tiler is None:
        return a
    if isinstance(tiler, tuple):
        return _tiler_modes(a, tiler, lambda m, t: logical_divide(m, t, verify=verify))
    b = _concrete_layout(tiler, "logical_divide")
    return composition(a, make_layout(b, complement(b, a.size)), verify=verify)


def logical_product(a: Layout, tiler: Tiler) -> Layout:
    """(a, copies of a laid out by tiler): ``(a, complement(a, size(a)*cosize(b)) o b)``.

    >>> logical_product(Layout(2, 1), Layout(3, 1))
    Layout('(2,3):(1,2)')
    """
    a = _concrete_layout(a, "logical_product")
    if tiler is None:
        return a
    if isinstance(tiler, tuple):
        return _tiler_modes(a, tiler, logical_product)
    b = _concrete_layout(tiler, "logical_product")
    return make_layout(a, composition(complement(a, _smul(a.size, b.cosize)), b))


def blocked_product(block: Layout, tiler: Layout) -> Layout:
    """Mode-wise product: mode ``i`` is (block mode ``i``, tiler mode ``i``).

    >>> blocked_product(Layout((2, 2), (1, 2)), Layout((2, 3)))
    Layout('((2,2),(2,3)):((1,4),(2,8))')
    """
    block = _concrete_layout(block, "blocked_product")
    tiler = _concrete_layout(tiler, "blocked_product")
    r = max(block.rank, tiler.rank)
    prod = logical_product(_append(block, r), _append(tiler, r))
    first, second = prod.modes()
    return make_layout(*[make_layout(x, y) for x, y in zip(first.modes(), second.modes())])


def make_ordered_layout(shape: IntTuple, order: Sequence[int] | None = None) -> Layout:
    """Compact layout whose modes are ordered by ``order`` (lowest order = stride 1).

    >>> make_ordered_layout((2, 3, 4), (1, 2, 0))
    Layout('(2,3,4):(4,8,_1)')
    """
    shape = _norm_tree(shape, "shape")
    if order is None:
        return Layout(shape)
    if not _is_tuple(shape):
        shape = (shape,)
    order = list(order)
    if len(order) != len(shape) or sorted(order) != sorted(set(order)) or \
            not all(isinstance(o, Integral) for o in order):
        raise LayoutError(f"order {order} must give a distinct integer to each of the "
                          f"{len(shape)} modes")
    strides = []
    for s, o in zip(shape, order):
        start = _sprod(product(t) for t, p in zip(shape, order) if p < o)
        strides.append(_compact_col_major(s, start))
    return Layout(shape, tuple(strides))


def tile_to_shape(block: AnyLayout, shape: IntTuple, order: Sequence[int] | None = None) -> AnyLayout:
    """Repeat ``block`` to fill ``shape``: ``blocked_product(block, ordered tile counts)``.

    As CuTe: block modes are padded to the rank of ``shape``; the tile counts
    ``shape_i / block_i`` are laid out column-major (or by ``order``). The block
    must divide the shape. A swizzled block keeps its swizzle.

    >>> from verilayout.frontends.cute_text import parse_cute
    >>> tile_to_shape(parse_cute("(_8,_8):(_8,_1)"), (64, 16))
    Layout('((_8,8),(_8,2)):((_8,_64),(_1,512))')
    """
    if isinstance(block, ComposedLayout):
        return block.with_layout(tile_to_shape(block.layout, shape, order))
    block = _concrete_layout(block, "tile_to_shape")
    shape = _norm_tree(shape, "target shape")
    if not _is_tuple(shape):
        shape = (shape,)
    if block.rank > len(shape):
        raise LayoutError(f"block has rank {block.rank}, more than the target shape's {len(shape)}")
    padded = _append(block, len(shape))
    counts = []
    for i, (bm, t) in enumerate(zip(padded.modes(), shape)):
        bs, ts = bm.size, _concrete(product(t), "target shape")
        if ts % bs:
            raise LayoutError(f"tile_to_shape: block extent {bs} does not divide target extent "
                              f"{ts} in mode {i}")
        counts.append(_sdiv(ts, bs))
    return blocked_product(padded, make_ordered_layout(tuple(counts), order))


def right_inverse(layout: Layout) -> Layout:
    """A layout ``R`` with ``layout(R(i)) == i`` for ``i < size(R)`` (largest such prefix).

    >>> right_inverse(Layout((4, 2), (2, 1)))
    Layout('(2,4):(4,_1)')
    """
    layout = _concrete_layout(layout, "right_inverse")
    leaves = _coalesce_leaves(layout.leaves())
    prefix, p = [], StaticInt(1)
    for s, _ in leaves:
        prefix.append(p)
        p = _smul(p, s)
    out: list[tuple[int, int]] = []
    cur: int = StaticInt(1)
    for (s, d), pre in sorted(zip(leaves, prefix), key=lambda x: int(x[0][1])):
        if d == cur:  # modes that do not continue the run are skipped, as in CuTe
            out.append((s, pre))
            cur = _smul(s, d)
    return _from_leaves(_coalesce_leaves(out))


def left_inverse(layout: Layout) -> Layout:
    """A layout ``R`` with ``R(layout(i)) == i`` for ``i < size(layout)`` (injective layouts).

    >>> left_inverse(Layout(4, 2))(6)
    3
    """
    layout = _concrete_layout(layout, "left_inverse")
    try:
        rest = complement(layout)
    except LayoutError as e:
        raise LayoutError(f"{format_cute(layout)} has no left inverse layout: {e}") from None
    result = right_inverse(make_layout(layout, rest))
    offs = offsets_table(layout)
    if (offs < 0).any() or int(offs.max()) >= int(result.size) or \
            (offsets_table(result)[offs] != np.arange(offs.size)).any():
        raise LayoutError(f"{format_cute(layout)} has no left inverse layout (it is not injective, "
                          "or its image has gaps its complement cannot fill)")
    return result


# ----- text -----------------------------------------------------------------------------------

def _fmt_leaf(x: Any, style: str) -> str:
    if isinstance(x, sympy.Basic):
        return _fmt_expr(x)
    if isinstance(x, StaticInt) and style == "cute":
        return f"_{int(x)}"
    return str(int(x))


def _fmt_expr(e: sympy.Expr) -> str:
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


def format_cute(obj: AnyLayout | Swizzle, style: str = "cute") -> str:
    """Text of a layout: ``style="cute"`` is CuTe's ``print`` form, ``"seed"`` the PTX-doc form.

    >>> from verilayout.frontends.cute_text import parse_cute
    >>> C = ComposedLayout(Swizzle(3, 4, 3), parse_cute("(_8,_64):(_64,_1)"), ptr_bits=16)
    >>> format_cute(C), format_cute(C, "seed")
    ('Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)', 'Swizzle<3,4,3> o smem_ptr16b o (8,64):(64,1)')
    """
    if style not in ("cute", "seed"):
        raise LayoutError(f"style must be 'cute' or 'seed', got {style!r}")
    if isinstance(obj, Swizzle):
        name = "Sw" if style == "cute" else "Swizzle"
        return f"{name}<{obj.bits},{obj.base},{obj.shift}>"
    if isinstance(obj, Layout):
        return f"{_fmt_tree(obj.shape, style)}:{_fmt_tree(obj.stride, style)}"
    if isinstance(obj, ComposedLayout):
        parts = [format_cute(obj.swizzle, style)]
        if obj.swizzle_units == "bytes":
            n = obj.elem_bits
            if n is None:
                parts.append("smem_ptr")
            else:
                parts.append(f"smem_ptr[{n}b](unset)" if style == "cute" else f"smem_ptr{n}b")
        if isinstance(obj.offset, StaticInt) or obj.offset:
            parts.append(_fmt_leaf(obj.offset, style))
        parts.append(format_cute(obj.layout, style))
        return " o ".join(parts)
    raise LayoutError(f"cannot format {type(obj).__name__}")
