"""Text views of a layout for people (the door is :mod:`verilayout.views`): bases, and the grid of owners (or offsets) per element.

The hardware-centric and tensor views that must match Triton's own output byte for
byte live with the Triton front-end (:func:`verilayout.frontends.triton.format_hardware_view`,
:func:`~verilayout.frontends.triton.format_tensor_view`).

>>> from verilayout.core.linear_layout import LinearLayout
>>> print(format_bases(LinearLayout.identity1D(4, "lane", "dim0")))
lane: [[1], [2]]
out: dim0=4
"""
from __future__ import annotations

from typing import Sequence

from verilayout.errors import LayoutError
from verilayout.core.linear_layout import LinearLayout
from verilayout.frontends.triton import format_hardware_view, format_tensor_view

#: The most elements (and layout inputs) a text view prints: one line or cell each, so
#: 2**20 keeps a view under ~50 MB of text. Checked before anything is allocated.
VIEW_MAX_ELEMENTS = 2 ** 20


def format_bases(layout: LinearLayout) -> str:
    """One line per input dim with its bases, then the output dims and sizes."""
    lines = [f"{n}: {b}" for n, b in layout.bases.items()]
    lines.append("out: " + " ".join(f"{n}={s}" for n, s in layout.out_dims.items()))
    return "\n".join(lines)


def _owner_label(layout: LinearLayout, coords: dict) -> str:
    ins = layout.in_dims
    if "lane" in ins or "warp" in ins:
        lanes = ins.get("lane", 1)
        t = coords.get("lane", 0) + lanes * coords.get("warp", 0)
        label = f"T{t}:{coords.get('register', 0)}"
        if ins.get("block", 1) > 1:
            label = f"B{coords.get('block', 0)}" + label
        return label
    shown = {n: v for n, v in coords.items() if ins[n] > 1}
    if list(shown) == ["offset"] or not shown:
        return str(coords.get("offset", 0))
    return ",".join(f"{n[0]}{v}" for n, v in shown.items())


def owner_grid(layout: LinearLayout) -> list[list[list[str]]]:
    """For a 1-D or 2-D layout, the grid ``[row][col] -> labels`` of who holds each element.

    Distributed layouts label ``T<thread>:<register>``; shared layouts label the offset.
    Every input is visited once (this is a picture, bounded to 2**16 inputs).
    """
    outs = layout.out_dim_names
    if not 1 <= len(outs) <= 2:
        raise LayoutError(f"the tensor view draws 1-D or 2-D layouts; this one has out dims {outs}")
    if layout.total_in_bits > 16:
        raise LayoutError(f"layout has 2^{layout.total_in_bits} inputs; the tensor view draws at most 2^16")
    rows = layout.out_dims[outs[0]] if len(outs) == 2 else 1
    cols = layout.out_dims[outs[-1]]
    grid: list[list[list[str]]] = [[[] for _ in range(cols)] for _ in range(rows)]
    names = layout.in_dim_names
    sizes = [layout.in_dims[n] for n in names]
    table = layout.apply_all()
    for flat, packed in enumerate(table.tolist()):
        coords, x = {}, flat
        for n, s in zip(names, sizes):
            coords[n] = x % s
            x //= s
        vals = layout.unpack(int(packed))
        r, c = (vals[0], vals[1]) if len(outs) == 2 else (0, vals[0])
        grid[r][c].append(_owner_label(layout, coords))
    return grid


def _check_view_size(layout: LinearLayout, shape: Sequence[int] | None, what: str) -> list[int]:
    dims = list(shape) if shape else list(layout.out_dims.values())
    size = 1
    for d in dims:
        if not isinstance(d, int) or d < 1:
            raise LayoutError(f"the {what} needs positive integer sizes, got shape {dims}")
        size *= d
    inputs = 1 << layout.total_in_bits
    if size > VIEW_MAX_ELEMENTS or inputs > VIEW_MAX_ELEMENTS:
        asked = max(size, inputs)
        raise LayoutError(f"the {what} prints one entry per element; this layout has "
                          f"{asked} (limit {VIEW_MAX_ELEMENTS} = 2^20); use --view bases or a smaller shape")
    return dims


def hardware_view(layout: LinearLayout, shape: Sequence[int] | None = None) -> str:
    """Triton's hardware-centric view (``Warp0:`` blocks listing who holds which element),
    byte for byte as ``triton.tools.tensor_descriptor``'s ``format_hardware_view`` prints it.

    Law: one entry per (warp, lane, register) input; refused (``LayoutError``) above
    ``VIEW_MAX_ELEMENTS`` elements or inputs, before anything is allocated.

    >>> from verilayout.core.linear_layout import LinearLayout
    >>> hardware_view(LinearLayout.identity1D(1 << 21, "register", "dim0"))
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: the hardware view prints one entry per element; this layout has 2097152 (limit 1048576 = 2^20); use --view bases or a smaller shape
    """
    return format_hardware_view(layout, _check_view_size(layout, shape, "hardware view"))


def tensor_view(layout: LinearLayout, shape: Sequence[int] | None = None) -> str:
    """Triton's tensor-centric view (one cell per element naming its owners), bounded as
    :func:`hardware_view` is.

    >>> from verilayout.core.linear_layout import LinearLayout
    >>> print(tensor_view(LinearLayout.identity1D(2, "lane", "dim0")).splitlines()[0][:8])
    [T0:0, T
    """
    return format_tensor_view(layout, _check_view_size(layout, shape, "tensor view"))


def format_owner_grid(layout: LinearLayout) -> str:
    """The tensor grid as aligned text, one row per ``dim0`` value.

    >>> print(format_owner_grid(LinearLayout.identity1D(4, "offset", "dim0")))
    [0 1 2 3]
    """
    grid = owner_grid(layout)
    cells = [["|".join(c) if c else "." for c in row] for row in grid]
    w = max(len(c) for row in cells for c in row)
    return "\n".join("[" + " ".join(c.rjust(w) for c in row) + "]" for row in cells)
