"""Staged (rank-3) shared-memory layouts, as every sm90 CUTLASS collective declares them
(``tile_to_shape(SmemLayoutAtom{}, make_shape(M, K, Int<Stages>{}))`` in
``cutlass/gemm/collective/sm90_mma_tma_gmma_ss_warpspecialized.hpp``): modes 0 and 1 are one
stage's tile, mode 2 the stage index.

Stage ``s`` is CuTe's slice ``layout(_, _, s)``: the tile modes, moved by the stage mode's offset
``L2(s)``. Moving a swizzled layout by an offset is moving its base address only when the offset
is a whole number of the swizzle's repeats (the swizzle reads and writes no address bit above
its span), so :func:`stage_view` gives each stage as (the tile layout, a byte shift of the base
address) and refuses a stage offset that is not such a multiple.

>>> from verilayout.frontends.cute_text import parse_cute
>>> L = parse_cute("Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_16),(_64,_1),(_1,_4)):((_64,_512),(_1,_0),(_0,_8192))")
>>> num_stages(L), [stage_view(L, s).shift_bytes for s in range(4)]
(4, [0, 16384, 32768, 49152])
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from verilayout.core.cute.layout import AnyLayout, ComposedLayout, Layout, format_cute, make_layout
from verilayout.errors import LayoutError

__all__ = ["StageView", "is_staged", "num_stages", "stage_view", "stage_views"]


@dataclass(frozen=True)
class StageView:
    """One stage of a staged layout: its tile layout (modes 0 and 1), where it starts (elements
    and bytes from the layout's offset 0) and its index."""
    stage: int
    layout: AnyLayout
    shift_elements: int
    shift_bytes: int


def is_staged(layout: Any) -> bool:
    """True for a CuTe layout of 3 top-level modes (tile M/N, tile K, stage).

    >>> is_staged(Layout((8, 8, 2), (8, 1, 64))), is_staged(Layout((8, 8), (8, 1)))
    (True, False)
    """
    return isinstance(layout, (Layout, ComposedLayout)) and layout.rank == 3


def num_stages(layout: AnyLayout) -> int:
    """The extent of the stage mode (mode 2) of a staged layout.

    >>> num_stages(Layout((8, 8, 3), (8, 1, 64)))
    3
    """
    _require_staged(layout)
    return int(layout.layout[2].size if isinstance(layout, ComposedLayout) else layout[2].size)


def _require_staged(layout: Any) -> None:
    if not is_staged(layout):
        rank = getattr(layout, "rank", None)
        raise LayoutError(f"a staged layout has 3 modes (M/N, K, stage); got "
                          f"{rank if rank is not None else type(layout).__name__} mode(s)")


def _repeat_elements(layout: AnyLayout, elem_bits: int | None) -> int:
    """The swizzle's repeat in elements (1 for an unswizzled layout): an offset that is a multiple
    of it moves the whole pattern."""
    if not isinstance(layout, ComposedLayout) or layout.swizzle.is_identity:
        return 1
    sw = layout.swizzle
    span = 1 << (max(sw.base, sw.base + sw.shift) + sw.bits)
    if layout.swizzle_units != "bytes":
        return span
    bits = layout.elem_bits if layout.elem_bits is not None else elem_bits
    if bits is None:
        raise LayoutError("the element width of this byte-swizzled layout is unknown; give the dtype")
    return max(1, span * 8 // bits)


def stage_view(layout: AnyLayout, stage: int, elem_bits: int | None = None) -> StageView:
    """Stage ``stage`` of a staged layout: CuTe's ``layout(_, _, stage)`` as the tile layout and the
    shift of its start.

    Law: for every tile coordinate ``c``, the staged layout's offset of ``(c, stage)`` is
    ``shift_elements`` plus the view's offset of ``c`` (a swizzle included, since the shift is a
    multiple of its repeat; else a LayoutError naming the stage offset). ``elem_bits`` gives the
    byte shift of a layout that does not carry its element width (``shift_bytes`` is then
    ``shift_elements * elem_bits // 8``; 0 bits known: ``shift_bytes`` is -1).

    >>> v = stage_view(Layout((8, 8, 2), (8, 1, 64)), 1, 16)
    >>> format_cute(v.layout), v.shift_elements, v.shift_bytes
    ('(_8,_8):(_8,_1)', 64, 128)
    """
    _require_staged(layout)
    n = num_stages(layout)
    if isinstance(stage, bool) or not isinstance(stage, int) or not 0 <= stage < n:
        raise LayoutError(f"stage {stage!r}: the layout has stages 0..{n - 1}")
    inner = layout.layout if isinstance(layout, ComposedLayout) else layout
    if inner.is_symbolic:
        raise LayoutError(f"the staged layout {format_cute(layout)} has symbols; substitute values first")
    shift = int(inner[2](stage))
    tile = make_layout(inner[0], inner[1])
    repeat = _repeat_elements(layout, elem_bits)
    if shift % repeat:
        raise LayoutError(f"stage {stage} starts {shift} elements in, not a multiple of the swizzle's "
                          f"repeat ({repeat} elements): the stage is not its tile's pattern moved")
    view = layout.with_layout(tile) if isinstance(layout, ComposedLayout) else tile
    bits = layout.elem_bits if isinstance(layout, ComposedLayout) and layout.elem_bits else elem_bits
    return StageView(stage, view, shift, shift * bits // 8 if bits else -1)


def stage_views(layout: AnyLayout, stage: int | None = None, elem_bits: int | None = None) -> list[StageView]:
    """Every stage's :class:`StageView` (``stage=None``), or the one stage asked for.

    >>> [v.shift_elements for v in stage_views(Layout((8, 8, 3), (8, 1, 64)))]
    [0, 64, 128]
    """
    stages = range(num_stages(layout)) if stage is None else [stage]
    return [stage_view(layout, s, elem_bits) for s in stages]
