"""CuTe layouts: nested ``Shape:Stride``, ``Swizzle<B,M,S>``, composed layouts, and their algebra.

Split as pycute splits it: :mod:`.int_tuple` (static ints, nested tuples, compact strides),
:mod:`.swizzle`, :mod:`.layout` (``Layout``, ``ComposedLayout``, constructors, printing),
:mod:`.units` (offsets in elements / bytes), :mod:`.algebra` (composition, complement, divides,
products, inverses), :mod:`.to_linear` (GF(2) linear layouts) and :mod:`.encode` (z3 terms).
The text reader is :func:`verilayout.frontends.cute_text.parse_cute` (the facade
``verilayout.cute`` offers both).

A CuTe layout maps a (nested) coordinate to an offset: the coordinate is read colexicographically
(the first mode varies fastest) and the offset is the dot product of the coordinate with the
strides. A :class:`ComposedLayout` puts a :class:`Swizzle` after a layout, in explicit units.
Shapes and strides may be sympy expressions (``subs`` makes them concrete).

>>> L = Layout(((8, 2), (4, 4)), ((8, 64), (1, 4)))
>>> L((3, 5)), L(11), L.size
(29, 88, StaticInt(256))
>>> C = ComposedLayout(Swizzle(3, 4, 3), Layout((8, 64), (64, 1)), ptr_bits=16)
>>> C.offset_bytes((1, 0)), C.offset_elements((1, 0))
(144, 72)
"""
from verilayout.core.cute.int_tuple import (DynamicInt, IntTuple, StaticInt, compact_col_major, dynamic, compact_row_major, flatten,
                                            is_sym, product, symbol)
from verilayout.core.cute.swizzle import Swizzle
from verilayout.core.cute.layout import (UNITS, AnyLayout, ComposedLayout, Layout, LayoutLeft, LayoutRight, CompactOrder,
                                         format_cute, make_layout, make_ordered_layout)
from verilayout.core.cute.units import offset_bytes, offset_elements, offsets_table
from verilayout.core.cute.to_linear import is_linear, shared_linear_layout, to_linear, why_not_linear
from verilayout.core.cute.tv import tv_to_linear
from verilayout.core.cute.encode import to_function, z3_in_domain, z3_offset
from verilayout.core.cute.algebra import (Tiler, blocked_product, coalesce, complement, composition, filter_layout,
                                          left_inverse, logical_divide, logical_product, right_inverse,
                                          tile_to_shape, tiled_divide, tiled_product, zipped_divide,
                                          zipped_product)

__all__ = [
    "StaticInt", "DynamicInt", "dynamic", "Swizzle", "Layout", "ComposedLayout", "format_cute",
    "flatten", "product", "make_layout", "offset_elements", "offset_bytes", "offsets_table",
    "why_not_linear", "is_linear", "to_linear", "shared_linear_layout", "z3_offset",
    "z3_in_domain", "coalesce", "filter_layout", "composition", "complement",
    "logical_divide", "logical_product", "blocked_product", "make_ordered_layout",
    "tile_to_shape", "right_inverse", "left_inverse", "symbol", "to_function",
    # new homes and additions of the split
    "compact_col_major", "compact_row_major", "CompactOrder", "LayoutLeft", "LayoutRight", "is_sym",
    "UNITS", "AnyLayout", "IntTuple", "Tiler",
    "zipped_divide", "tiled_divide", "zipped_product", "tiled_product", "tv_to_linear",
]
