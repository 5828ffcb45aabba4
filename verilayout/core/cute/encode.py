"""CuTe layouts as z3 terms: :func:`z3_offset` (the offset of a symbolic coordinate, any concrete
layout, swizzle included), :func:`z3_in_domain`, and :func:`to_function` (a
:class:`verilayout.core.smt.FunctionLayout` for the provers).

>>> import z3
>>> i = z3.BitVec("i", 3)
>>> z3.simplify(z3.substitute(z3_offset(Layout((2, 4), (4, 1)), i), (i, z3.BitVecVal(3, 3))))
5
"""
from __future__ import annotations

import math
from numbers import Integral
from typing import Any, Mapping, Sequence

from verilayout.bits import trailing_zeros
from verilayout.core.cute.int_tuple import IntTuple, format_tree, is_tuple, flatten, product
from verilayout.core.cute.layout import AnyLayout, ComposedLayout, Layout, require_concrete, format_cute
from verilayout.core.cute.units import dim_names, OffsetPlan, offset_plan, offset_bytes, offset_elements
from verilayout.core.smt import FunctionLayout
from verilayout.errors import LayoutError

__all__ = ["z3_offset", "z3_in_domain", "to_function"]


# ----- z3 ------------------------------------------------------------------------------------

def _needed_bits(plan: OffsetPlan) -> int:
    top = plan.offset + sum((int(s) - 1) * int(d) for s, d in plan.layout.leaves())
    bits = (top << plan.shift_in).bit_length()
    if plan.swizzle is not None and plan.swizzle.shift < 0:
        bits += -plan.swizzle.shift
    return max(1, bits, (int(plan.layout.size) - 1).bit_length())


def _z3_exactness(plan: OffsetPlan) -> None:
    if plan.shift_out == 0:
        return
    low = plan.offset << plan.shift_in
    g = 0
    for s, d in plan.layout.leaves():
        if int(s) > 1:
            g = math.gcd(g, int(d) << plan.shift_in)
    g = math.gcd(g, low)
    tz = trailing_zeros(g) if g else 1 << 30
    if plan.swizzle is not None and plan.swizzle.zzz_mask:
        top = (plan.offset + sum((int(s) - 1) * int(d) for s, d in plan.layout.leaves())) << plan.shift_in
        if top >= (plan.swizzle.yyy_mask & -plan.swizzle.yyy_mask):
            tz = min(tz, trailing_zeros(plan.swizzle.zzz_mask))
    if tz < plan.shift_out:
        raise LayoutError(f"offsets in {plan.unit} are not whole numbers for every coordinate "
                          f"({plan.desc}); z3 encoding refused")


def _z3_leaf_coords(coord: Any, shape: IntTuple, width: int) -> list:
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    if isinstance(coord, tuple):
        if not is_tuple(shape) or len(coord) != len(shape):
            raise LayoutError(f"z3 coordinate {coord!r} does not match shape {format_tree(shape, 'cute')}")
        return [x for c, s in zip(coord, shape) for x in _z3_leaf_coords(c, s, width)]
    if isinstance(coord, Integral) and not isinstance(coord, bool):
        coord = z3.BitVecVal(int(coord), width)
    if not z3.is_bv(coord):
        raise LayoutError(f"z3 coordinate entry {coord!r} is not a bit-vector or an int")
    if coord.size() > width:
        raise LayoutError(f"z3 coordinate {coord} has {coord.size()} bits, more than width {width}")
    if coord.size() < width:
        coord = z3.ZeroExt(width - coord.size(), coord)
    if not is_tuple(shape):
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
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
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

    >>> import z3
    >>> i = z3.BitVec("i", 6); L = Layout((8, 8), (8, 1))
    >>> z3.simplify(z3_offset(L, i) - z3_offset(L, (i % 8, i / 8))).sexpr() != "#x00"
    True
    """
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    plan = offset_plan(obj, unit, elem_bits)
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

    >>> import z3
    >>> i = z3.BitVec("i", 4); s = z3.Solver(); s.add(z3_in_domain(Layout(6, 1), i), i == 6)
    >>> s.check()
    unsat
    """
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    layout = obj.layout if isinstance(obj, ComposedLayout) else obj
    require_concrete(layout, "z3_in_domain")

    def go(c, shape):
        if isinstance(c, tuple):
            if not is_tuple(shape) or len(c) != len(shape):
                raise LayoutError(f"z3 coordinate {c!r} does not match shape {format_tree(shape, 'cute')}")
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
    plan = offset_plan(obj, unit, elem_bits)
    names = dim_names(obj, in_dims)
    if isinstance(names, str):
        raise LayoutError("to_function needs one in-dim name per top-level mode")
    sizes = {n: int(m.size) for n, m in zip(names, plan.layout.modes())}
    need = _needed_bits(plan)

    def fn(coords: Mapping[str, int]) -> dict:
        if set(coords) != set(names):
            raise LayoutError(f"expected inputs {names}, got {sorted(coords)}")
        c = tuple(coords[n] for n in names)
        c = c if is_tuple(plan.layout.shape) else c[0]
        return {out_dim: (offset_elements if unit == "elements" else offset_bytes)(obj, c, elem_bits)}

    def z3_fn(vars: Mapping[str, z3.BitVecRef]) -> dict:
        c = tuple(vars[n] for n in names)
        c = c if is_tuple(plan.layout.shape) else c[0]
        return {out_dim: z3_offset(obj, c, unit, elem_bits)}

    return FunctionLayout(sizes, {out_dim: 1 << need}, fn, z3_fn, name=format_cute(obj))


Layout.to_function = to_function  # type: ignore[attr-defined]
ComposedLayout.to_function = to_function  # type: ignore[attr-defined]

