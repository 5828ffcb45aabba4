"""Offsets of CuTe layouts in explicit units: elements or bytes, the swizzle applied in its declared
units (``smem_ptr[16b]`` means byte addresses of 16-bit elements). Nothing is guessed: an offset
whose units are unknown raises :class:`LayoutError`.

This module also gives the layout classes their unit-aware methods (``Layout.offset_bytes``,
``ComposedLayout.__call__``, ``offset_elements``, ``offset_bytes``, ``cosize``): they need the
arithmetic below, and ``layout.py`` cannot import this module (it imports ``layout.py``). The
package ``__init__`` imports this module, so every import of a ``core.cute`` module has them.

>>> C = ComposedLayout(Swizzle(3, 4, 3), Layout((8, 64), (64, 1)), ptr_bits=16)
>>> offset_bytes(C, (1, 0)), offset_elements(C, (1, 0)), C((1, 0))
(144, 72, 72)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from verilayout.bits import log2
from verilayout.core.cute.layout import (UNITS, AnyLayout, ComposedLayout, Layout, require_concrete,
                                         require_elem_bits, concrete_int)
from verilayout.core.cute.swizzle import Swizzle
from verilayout.errors import LayoutError

__all__ = ["offset_elements", "offset_bytes", "offsets_table"]


# ----- addresses in explicit units --------------------------------------------------------

@dataclass(frozen=True)
class OffsetPlan:
    """``value(c) = swz((offset + L(c)) << shift_in) >> shift_out`` (exact division)."""

    layout: Layout
    offset: int
    shift_in: int
    swizzle: Swizzle | None
    shift_out: int
    unit: str
    desc: str


def offset_plan(obj: AnyLayout, unit: str, elem_bits: int | None) -> OffsetPlan:
    """The :class:`OffsetPlan` that evaluates ``obj`` in ``unit`` (``elements`` or ``bytes``; bytes
    need ``elem_bits``): the layout, its swizzle and the shifts between address units.
    Law: ``offset_elements``/``offset_bytes`` evaluate exactly this plan.

    >>> offset_plan(Layout(4, 2), "elements", None).shift_in
    0
    """
    if unit not in UNITS:
        raise LayoutError(f"unit must be 'elements' or 'bytes', got {unit!r}")
    if not isinstance(obj, (Layout, ComposedLayout)):
        raise LayoutError(f"expected a Layout or ComposedLayout, got {type(obj).__name__}")
    if elem_bits is not None:
        elem_bits = require_elem_bits(elem_bits)
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
    require_concrete(layout, "an offset")
    need_bits = unit == "bytes" or swz_units == "bytes"
    if need_bits and elem_bits is None:
        why = "the swizzle acts on byte addresses" if swz_units == "bytes" else "a byte offset was asked"
        raise LayoutError(f"element width unknown: {why}; pass elem_bits")
    n = log2(elem_bits) if need_bits else 0  # values are in bits when n is set
    if swz is not None:
        swz = swz.rebased(3 if swz_units == "bytes" else n) if need_bits else swz
    shift_out = (3 if unit == "bytes" else n) if need_bits else 0
    desc = f"{unit}" + (f" of {elem_bits}-bit elements" if elem_bits else "")
    return OffsetPlan(layout, offset, n, swz, shift_out, unit, desc)


def _finish(plan: OffsetPlan, pre: int, where: Any) -> int:
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
    plan = offset_plan(obj, "elements", elem_bits)
    return _finish(plan, plan.offset + concrete_int(plan.layout(coord), "offset"), coord)


def offset_bytes(obj: AnyLayout, coord: Any, elem_bits: int | None = None) -> int:
    """Byte offset of ``coord`` (needs the element width unless the layout carries it).

    >>> from verilayout.frontends.cute_text import parse_cute
    >>> offset_bytes(parse_cute("Swizzle<1,4,3> o (8,2):(8,64)", swizzle_units="bytes"), (4, 0), 32)
    144
    """
    plan = offset_plan(obj, "bytes", elem_bits)
    return _finish(plan, plan.offset + concrete_int(plan.layout(coord), "offset"), coord)


def offsets_table(obj: AnyLayout, unit: str = "elements", elem_bits: int | None = None) -> np.ndarray:
    """Offsets of every flat (colexicographic) index, as an int64 numpy array (brute force).

    >>> offsets_table(Layout((2, 2), (2, 1))).tolist()
    [0, 2, 1, 3]
    """
    import numpy as np  # deferred: start-up time (only array code needs numpy)
    plan = offset_plan(obj, unit, elem_bits)
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



def dim_names(obj: AnyLayout, in_dims: str | Sequence[str] | None) -> list[str] | str:
    """Input dimension names for a layout's modes: ``dim0, dim1, ...`` by default, else the names
    given (one per mode; a single string for a rank-1 layout).

    >>> dim_names(Layout((4, 2), (1, 4)), None)
    ['dim0', 'dim1']
    """
    rank = obj.rank
    if in_dims is None:
        return [f"dim{i}" for i in range(rank)]
    if isinstance(in_dims, str):
        return in_dims
    names = list(in_dims)
    if len(names) != rank or len(set(names)) != len(names) or not all(isinstance(n, str) for n in names):
        raise LayoutError(f"in_dims must be {rank} distinct names (one per top-level mode), got {names}")
    return names


# ----- the unit-aware methods of the layout classes ------------------------------------------

def _layout_offset_bytes(self: Layout, coord: Any, elem_bits: int | None = None) -> int:
    """``Layout.offset_bytes``: the byte offset of ``coord`` for ``elem_bits``-bit elements.

    >>> Layout((4, 2), (1, 4)).offset_bytes((1, 1), elem_bits=32)
    20
    """
    return offset_bytes(self, coord, elem_bits)


def _composed_cosize(self: ComposedLayout) -> int:
    """``ComposedLayout.cosize``: one past the largest element offset (by enumeration).

    >>> L = Layout(2, 2)  # offsets 0, 2; Sw<1,0,1> sends 2 to 3
    >>> L.cosize, ComposedLayout(Swizzle(1, 0, 1), L, swizzle_units="elements").cosize
    (StaticInt(3), 4)
    """
    return int(offsets_table(self).max()) + 1


def _composed_offset_elements(self: ComposedLayout, coord: Any, elem_bits: int | None = None) -> int:
    """``ComposedLayout.offset_elements`` (and ``__call__``): element offset after the swizzle."""
    return offset_elements(self, coord, elem_bits)


def _composed_offset_bytes(self: ComposedLayout, coord: Any, elem_bits: int | None = None) -> int:
    """``ComposedLayout.offset_bytes``: byte offset of ``coord`` after the swizzle."""
    return offset_bytes(self, coord, elem_bits)


Layout.offset_bytes = _layout_offset_bytes  # type: ignore[attr-defined]
ComposedLayout.cosize = property(_composed_cosize)  # type: ignore[attr-defined]
ComposedLayout.__call__ = _composed_offset_elements  # type: ignore[attr-defined]
ComposedLayout.offset_elements = _composed_offset_elements  # type: ignore[attr-defined]
ComposedLayout.offset_bytes = _composed_offset_bytes  # type: ignore[attr-defined]
