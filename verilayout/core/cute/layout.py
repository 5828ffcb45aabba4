"""CuTe layouts: ``Layout`` (nested ``shape:stride``), ``ComposedLayout`` (``swizzle o offset o layout``),
their constructors (:func:`make_layout` with ``LayoutLeft``/``LayoutRight``, :func:`make_ordered_layout`)
and their text (:func:`format_cute`).

A layout maps a (nested) coordinate to an offset: the coordinate is read colexicographically (the
first mode varies fastest) and the offset is the dot product of the coordinate with the strides
(elements). Offsets in explicit units (bytes, swizzles) are :mod:`.units`.

>>> L = Layout((4, (2, 3)), (1, (4, 8)))
>>> L((1, (1, 2))), format_cute(L)
(21, '(_4,(_2,_3)):(_1,(_4,_8))')
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from numbers import Integral
from typing import Any, Iterator, Mapping, Union

from verilayout.core.cute.int_tuple import (IntTuple, StaticInt, congruent, tuple_depth, format_leaf, format_tree,
                                            tuple_free_symbols, all_static, is_tuple, make_int, normalize_leaf, normalize_tree,
                                            static_product, compact_col_major,
                                            compact_row_major, flatten, is_sym, product)
from verilayout.core.cute.swizzle import Swizzle
from verilayout.errors import LayoutError

__all__ = ["Layout", "ComposedLayout", "AnyLayout", "UNITS", "CompactOrder", "LayoutLeft", "LayoutRight",
           "make_layout", "make_ordered_layout", "format_cute"]

UNITS = ("elements", "bytes")


# ----- Layout --------------------------------------------------------------------------

@dataclass(frozen=True, init=False)
class Layout:
    """A CuTe layout ``shape:stride`` (congruent nested tuples of ints or sympy expressions).

    ``Layout(shape)`` uses CuTe's compact column-major strides. ``L(coord)``
    takes an int (a colexicographic index into the whole layout) or a nested
    tuple (each entry an int index into that mode, or a tuple).

    >>> L = Layout((4, (2, 3)), (1, (4, 8)))
    >>> L.size, L.cosize, L.rank, L.depth, L((1, (1, 2))), L(5)
    (StaticInt(24), StaticInt(24), 2, 2, 21, 5)
    """

    shape: IntTuple
    stride: IntTuple

    def __init__(self, shape: IntTuple, stride: IntTuple | None = None):
        try:
            self._init(shape, stride)
        except RecursionError:
            raise LayoutError("Layout: shape or stride nested too deeply (Python's recursion limit)") from None

    def _init(self, shape: IntTuple, stride: IntTuple | None) -> None:
        shape = normalize_tree(shape, "shape")
        for s in flatten(shape):
            if not is_sym(s) and s < 1:
                raise LayoutError(f"shape {format_tree(shape, 'cute')} has extent {s}; extents are >= 1")
        if stride is None:
            stride = compact_col_major(shape)
        stride = normalize_tree(stride, "stride")
        if not congruent(shape, stride):
            raise LayoutError(f"shape {format_tree(shape, 'cute')} and stride "
                              f"{format_tree(stride, 'cute')} are not congruent")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "stride", stride)

    # --- structure
    @property
    def rank(self) -> int:
        """Number of top-level modes (1 for an integral shape)."""
        return len(self.shape) if is_tuple(self.shape) else 1

    @property
    def depth(self) -> int:
        """Nesting depth (0 for an integral shape)."""
        return tuple_depth(self.shape)

    @property
    def size(self) -> Any:
        """Number of coordinates (product of the shape)."""
        return product(self.shape)

    @property
    def cosize(self) -> Any:
        """CuTe's cosize: ``L(size - 1) + 1`` (one past the largest offset for strides >= 0)."""
        terms = [(s - 1) * d for s, d in zip(flatten(self.shape), flatten(self.stride))]
        if any(is_sym(t) for t in terms):
            return (sum(terms) + 1).expand()
        return make_int(sum(int(t) for t in terms) + 1, all_static(*flatten(self.shape), *flatten(self.stride)))

    @property
    def is_symbolic(self) -> bool:
        """Some extent or stride is a sympy expression."""
        return bool(self.free_symbols)

    @property
    def free_symbols(self) -> set:
        """The sympy symbols in the shape and stride."""
        return tuple_free_symbols(self.shape) | tuple_free_symbols(self.stride)

    def modes(self) -> list["Layout"]:
        """The top-level modes as layouts (``L[i]`` is mode ``i``).

        >>> Layout((4, (2, 3)), (1, (4, 8))).modes()
        [Layout('_4:_1'), Layout('(_2,_3):(_4,_8)')]
        """
        if not is_tuple(self.shape):
            return [self]
        return [Layout(s, d) for s, d in zip(self.shape, self.stride)]

    def __getitem__(self, i: int) -> "Layout":
        return self.modes()[i]

    def leaves(self) -> list[tuple[Any, Any]]:
        """``[(extent, stride), ...]`` of the flattened layout (first mode first).

        >>> Layout((4, (2, 3)), (1, (4, 8))).leaves()
        [(StaticInt(4), StaticInt(1)), (StaticInt(2), StaticInt(4)), (StaticInt(3), StaticInt(8))]
        """
        return list(zip(flatten(self.shape), flatten(self.stride)))

    # --- evaluation
    def __call__(self, coord: Any) -> Any:
        v = _crd2idx(coord, self.shape, self.stride, "coordinate")
        return int(v) if is_sym(v) and v.is_Integer else v

    def offset_elements(self, coord: Any) -> Any:
        """The element offset of ``coord`` (same as ``L(coord)``)."""
        return self(coord)

    def subs(self, values: Mapping[Any, Any]) -> "Layout":
        """Substitute symbols (names or sympy symbols) by integers or expressions.

        >>> from verilayout.frontends.cute_text import parse_cute
        >>> parse_cute("((8,m),(T,2k)):((8T,SBO),(1,T))").subs({"T": 4, "m": 2, "k": 2, "SBO": 256})
        Layout('((8,_2),(_4,_4)):((_32,_256),(1,_4))')
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
        if isinstance(v, bool) or not (isinstance(v, Integral) or is_sym(v)):
            raise LayoutError(f"subs: value for '{key}' must be an integer or sympy expression, got {v!r}")
        sub[names[key]] = v
    return sub


def _subs_tree(t: IntTuple, sub: dict) -> IntTuple:
    if is_tuple(t):
        return tuple(_subs_tree(x, sub) for x in t)
    if is_sym(t):
        return normalize_leaf(t.subs(sub), "subs")
    return t


def concrete_int(x: Any, what: str) -> int:
    """``x`` itself when it is a number (static or not); a ``LayoutError`` naming ``what`` when it
    is a sympy expression.

    >>> concrete_int(StaticInt(4), "size"), concrete_int(4, "size")
    (StaticInt(4), 4)
    """
    if is_sym(x):
        raise LayoutError(f"{what} is symbolic ({x}); substitute values with .subs first")
    return x


def require_concrete(layout: Layout, what: str) -> None:
    """Nothing when ``layout`` has no free symbols, else a ``LayoutError`` naming ``what`` and them.

    >>> require_concrete(Layout((4, 2), (1, 4)), "layout") is None
    True
    """
    if layout.is_symbolic:
        names = ", ".join(sorted(str(s) for s in layout.free_symbols))
        if all(str(s).startswith("_at") for s in layout.free_symbols):
            raise LayoutError(f"{what} needs a layout of offsets; {format_cute(layout)} has scaled-basis "
                              "strides (k@i): its values are coordinates, not memory offsets")
        raise LayoutError(f"{what} needs a concrete layout; {format_cute(layout)} has symbols "
                          f"{names} (use .subs)")


def _crd2idx(coord: Any, shape: IntTuple, stride: IntTuple, where: str) -> Any:
    if is_tuple(coord):
        if not is_tuple(shape):
            raise LayoutError(f"{where} {coord!r} is a tuple but the shape there is {shape}")
        if len(coord) != len(shape):
            raise LayoutError(f"{where} {coord!r} has {len(coord)} entries; the shape "
                              f"{format_tree(shape, 'cute')} has {len(shape)} modes")
        terms = [_crd2idx(c, s, d, where) for c, s, d in zip(coord, shape, stride)]
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        return total
    if isinstance(coord, bool) or not isinstance(coord, Integral):
        raise LayoutError(f"{where} entry {coord!r} is not an integer")
    coord = int(coord)
    size = product(shape)
    if not is_sym(size) and not 0 <= coord < size:
        raise LayoutError(f"{where} {coord} is outside [0, {size}) of shape {format_tree(shape, 'cute')}")
    if not is_tuple(shape):
        return coord * stride if is_sym(stride) else coord * int(stride)
    total: Any = 0
    rest = coord
    leaves = list(zip(flatten(shape), flatten(stride)))
    for k, (s, d) in enumerate(leaves):
        d = d if is_sym(d) else int(d)
        if k == len(leaves) - 1:
            c = rest  # the last mode takes what is left (in range: checked above)
        elif is_sym(s):
            if rest:
                raise LayoutError(f"{where} {coord} is a flat index into a symbolic shape "
                                  f"{format_tree(shape, 'cute')}; give a tuple coordinate")
            c = 0
        else:
            c = rest % int(s)
            rest //= int(s)
        total = total + c * d
    return total


class CompactOrder(Enum):
    """CuTe's major-order tags for compact layouts: ``LayoutLeft`` (column-major, the first leaf
    fastest) and ``LayoutRight`` (row-major, the last leaf fastest).

    >>> make_layout((2, 3), LayoutLeft), make_layout((2, 3), LayoutRight)
    (Layout('(_2,_3):(_1,_2)'), Layout('(_2,_3):(_3,_1)'))
    """

    LEFT = "LayoutLeft"
    RIGHT = "LayoutRight"


LayoutLeft = CompactOrder.LEFT
LayoutRight = CompactOrder.RIGHT


def make_layout(*args: Any) -> Layout:
    """CuTe's ``make_layout``: concatenate layouts as modes, or build one from a shape.

    * ``make_layout(L0, L1, ...)`` (or one list of Layouts): the layout whose mode ``i`` is ``Li``;
    * ``make_layout(shape)`` / ``make_layout(shape, LayoutLeft)``: compact column-major
      (:func:`compact_col_major`), ``make_layout(shape, LayoutRight)``: compact row-major
      (:func:`compact_row_major`), over nested shapes as CuTe does;
    * ``make_layout(shape, stride)``: ``Layout(shape, stride)``.

    >>> make_layout(Layout(4, 1), Layout(2, 4))
    Layout('(_4,_2):(_1,_4)')
    >>> make_layout(((2, 3), 4), LayoutRight)
    Layout('((_2,_3),_4):((_12,_4),_1)')
    """
    if len(args) == 1 and isinstance(args[0], list):
        args = tuple(args[0])
    if len(args) == 1 and isinstance(args[0], tuple) and args[0] and \
            all(isinstance(x, Layout) for x in args[0]):
        args = args[0]
    if args and all(isinstance(x, Layout) for x in args):
        return Layout(tuple(L.shape for L in args), tuple(L.stride for L in args))
    if not args:
        raise LayoutError("make_layout needs at least one layout or a shape")
    if any(isinstance(x, Layout) for x in args) or len(args) > 2:
        raise LayoutError("make_layout takes Layouts, or a shape and an optional stride or major "
                          f"(LayoutLeft/LayoutRight); got {', '.join(type(x).__name__ for x in args)}")
    shape = normalize_tree(args[0], "shape")
    second = args[1] if len(args) == 2 else LayoutLeft
    if second is LayoutLeft:
        return Layout(shape, compact_col_major(shape))
    if second is LayoutRight:
        return Layout(shape, compact_row_major(shape))
    return Layout(shape, second)


def _order_norm(order: Any) -> Any:
    if isinstance(order, (list, tuple)):
        if not order:
            raise LayoutError("order: empty tuple")
        return tuple(_order_norm(o) for o in order)
    if isinstance(order, bool) or not isinstance(order, Integral):
        raise LayoutError(f"order entry {order!r} is not an integer")
    return int(order)


def _order_blocks(shape: IntTuple, order: Any) -> list[tuple[Any, int]]:
    """``(sub-shape, order value)`` for each integer of ``order`` (order's leaves, in order)."""
    if not is_tuple(order):
        return [(shape, order)]
    if not is_tuple(shape) or len(shape) != len(order):
        raise LayoutError(f"order {order} does not match shape {format_tree(shape, 'cute')}: a tuple in "
                          "the order needs a tuple of as many modes in the shape")
    return [b for s, o in zip(shape, order) for b in _order_blocks(s, o)]


def _order_strides(shape: IntTuple, order: Any, starts: Iterator) -> IntTuple:
    if not is_tuple(order):
        return compact_col_major(shape, next(starts))
    return tuple(_order_strides(s, o, starts) for s, o in zip(shape, order))


def make_ordered_layout(shape: IntTuple, order: Any = None) -> Layout:
    """CuTe's ``make_ordered_layout``: the compact layout whose blocks are laid out by ``order``.

    ``order`` is congruent to ``shape`` down to where it holds integers (it may stop above the
    leaves: a nested ``shape`` under one integer of ``order`` is one block, column-major inside).
    Law (CuTe's ``compact_order``): block ``b`` starts at the product of the sizes of the blocks
    with a smaller order, and its strides are ``compact_col_major(block, start)``. Orders must be
    distinct integers (CuTe's static orders; ``None`` means column-major).

    >>> make_ordered_layout((2, 3, 4), (1, 2, 0))
    Layout('(_2,_3,_4):(_4,_8,_1)')
    >>> make_ordered_layout((2, (3, 4)), (1, (2, 0)))
    Layout('(_2,(_3,_4)):(_4,(_8,_1))')
    """
    shape = normalize_tree(shape, "shape")
    if order is None:
        return Layout(shape)
    order = _order_norm(order)
    if is_tuple(order) and not is_tuple(shape):
        shape = (shape,)
    blocks = _order_blocks(shape, order)
    values = [o for _, o in blocks]
    if len(set(values)) != len(values):
        raise LayoutError(f"order {order} must give a distinct integer to each block of the shape")
    starts = [static_product(product(t) for t, p in blocks if p < o) for _, o in blocks]
    return Layout(shape, _order_strides(shape, order, iter(starts)))


def append_modes(layout: Layout, rank: int) -> Layout:
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
    * ``swizzle_units="bytes"`` without a width (a bare ``smem_ptr``, as the PTX ISA tables write it):
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
            elem_bits = require_elem_bits(elem_bits)
        if ptr_bits is not None:
            ptr_bits = require_elem_bits(ptr_bits, "ptr_bits")
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

    def with_layout(self, layout: Layout) -> "ComposedLayout":
        """Same swizzle, offset and units over another layout.

        >>> C = ComposedLayout(Swizzle(1, 0, 1), Layout(2, 2), swizzle_units="elements")
        >>> C.with_layout(Layout(4, 1)).layout
        Layout('_4:_1')
        """
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


def require_elem_bits(n: Any, what: str = "elem_bits") -> int:
    """``n`` when it is a power of two >= 1 (element width in bits), else a ``LayoutError``.

    >>> require_elem_bits(16)
    16
    """
    if isinstance(n, bool) or not isinstance(n, Integral) or n < 1 or n & (n - 1):
        raise LayoutError(f"{what} must be a power of two >= 1, got {n!r}")
    return int(n)



def format_cute(obj: AnyLayout | Swizzle, style: str = "cute") -> str:
    """Text of a layout: ``style="cute"`` is CuTe's ``print`` form, ``"seed"`` the form of the PTX ISA's canonical-layout
    table (9.7.15.5.1.2.1.3: ``Swizzle<B,M,S>``, no underscores).

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
        return f"{format_tree(obj.shape, style)}:{format_tree(obj.stride, style)}"
    if isinstance(obj, ComposedLayout):
        parts = [format_cute(obj.swizzle, style)]
        if obj.swizzle_units == "bytes":
            n = obj.elem_bits
            if n is None:
                parts.append("smem_ptr")
            else:
                parts.append(f"smem_ptr[{n}b](unset)" if style == "cute" else f"smem_ptr{n}b")
        if isinstance(obj.offset, StaticInt) or obj.offset:
            parts.append(format_leaf(obj.offset, style))
        parts.append(format_cute(obj.layout, style))
        return " o ".join(parts)
    raise LayoutError(f"cannot format {type(obj).__name__}")

