"""CuTe layouts as GF(2) linear layouts: when the coordinate -> offset map is linear (sums are XORs),
:func:`to_linear` gives Triton's ``LinearLayout`` and :func:`shared_linear_layout` its inverse view
(``offset`` -> ``dim0, dim1, ...``); :func:`why_not_linear` says why not otherwise.

>>> to_linear(Layout((4, 2), (2, 1))).bases
{'dim0': [[2], [4]], 'dim1': [[1]]}
"""
from __future__ import annotations

from typing import Sequence

from verilayout.bits import log2
from verilayout.core.cute.layout import AnyLayout, Layout, format_cute  # noqa: F401 (Layout: examples)
from verilayout.core.cute.units import dim_names, OffsetPlan, offset_plan
from verilayout.core.linear_layout import LinearLayout
from verilayout.errors import LayoutError

__all__ = ["why_not_linear", "is_linear", "to_linear", "shared_linear_layout"]


# ----- GF(2) linearity ---------------------------------------------------------------------

def _in_bit_bases(plan: OffsetPlan) -> tuple[list[list[int]], str | None]:
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
            bases += [(d << j) << plan.shift_in for j in range(log2(s))]
            leaf_no += 1
        per_mode.append(bases)
    return per_mode, None


def _linear_reason(plan: OffsetPlan) -> tuple[list[list[int]], str | None]:
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
    plan = offset_plan(obj, unit, elem_bits)
    return _linear_reason(plan)[1]


def is_linear(obj: AnyLayout, unit: str = "elements", elem_bits: int | None = None) -> bool:
    """True when the coordinate -> offset map is GF(2)-linear (see :func:`why_not_linear`).

    >>> from verilayout.frontends.cute_text import parse_cute
    >>> is_linear(parse_cute("((8,2),(4,4)):((4,32),(1,64))")), is_linear(Layout(6, 1))
    (True, False)
    """
    return why_not_linear(obj, unit, elem_bits) is None


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
    plan = offset_plan(obj, unit, elem_bits)
    per_mode, why = _linear_reason(plan)
    if why:
        raise LayoutError(f"{format_cute(obj)} is not GF(2)-linear: {why}")
    names = dim_names(obj, in_dims)
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
    L = to_linear(obj, "elements", elem_bits, in_dims=dim_names(obj, dims))
    if not L.is_invertible():
        raise LayoutError(f"{format_cute(obj)} is not a bijection between coordinates and "
                          f"offsets [0, {obj.size}), so it has no offset -> coordinate layout")
    return L.invert()

