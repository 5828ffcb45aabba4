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
from verilayout.hw.nvidia.banks import SharedAddressMap

#: The most elements (and layout inputs) a text view prints: one line or cell each, so
#: 2**20 keeps a view under ~50 MB of text. Checked before anything is allocated.
VIEW_MAX_ELEMENTS = 2 ** 20


def _address_component(amap: SharedAddressMap, what: str) -> LinearLayout:
    """The linear component of a padded address map; a map without one has no bases."""
    if amap.component is None:
        raise LayoutError(f"{amap.name} is an address map that is not GF(2)-linear and has no linear "
                          f"component, so it has no {what}; use --view grid (each element's offset)")
    return amap.component


def format_bases(layout: LinearLayout | SharedAddressMap) -> str:
    """One line per input dim with its bases, then the output dims and sizes. A padded shared
    layout (an address map) prints its linear component's bases (logical offset -> element) and
    a ``padding:`` line of its ``interval:+pad`` pairs (``pad`` elements after every
    ``interval``), the two parts of Triton's ``#ttg.padded_shared``.

    >>> from verilayout.hw.nvidia.banks import padded_address_map
    >>> print(format_bases(padded_address_map(LinearLayout.identity1D(4, "offset", "dim0"), [(2, 1)])))
    offset: [[1], [2]]
    padding: 2:+1
    out: dim0=4
    """
    if isinstance(layout, SharedAddressMap):
        comp = _address_component(layout, "bases")
        lines = [f"{n}: {b}" for n, b in comp.bases.items()]
        lines.append("padding: " + ", ".join(f"{a}:+{b}" for a, b in layout.padding))
        lines.append("out: " + " ".join(f"{n}={s}" for n, s in comp.out_dims.items()))
        return "\n".join(lines)
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


def layout_dict(layout: LinearLayout | SharedAddressMap) -> dict:
    """The layout as JSON data: ``LinearLayout.to_dict()``; a padded shared layout adds its
    ``padding`` pairs ``[[interval, pad], ...]`` to its linear component's dict.

    >>> from verilayout.hw.nvidia.banks import padded_address_map
    >>> layout_dict(padded_address_map(LinearLayout.identity1D(2, "offset", "dim0"), [(2, 1)]))["padding"]
    [[2, 1]]
    """
    if isinstance(layout, SharedAddressMap):
        return {**_address_component(layout, "bases").to_dict(),
                "padding": [[a, b] for a, b in layout.padding]}
    return layout.to_dict()


def address_offsets(amap: SharedAddressMap) -> dict[tuple[int, ...], int]:
    """Every element's offset under an address map, row-major by element; refused above
    ``VIEW_MAX_ELEMENTS`` elements before anything is allocated.

    >>> m = SharedAddressMap({"dim0": 2}, lambda c: 3 * c["dim0"], None, 4)
    >>> address_offsets(m)
    {(0,): 0, (1,): 3}
    """
    names, sizes = list(amap.shape), list(amap.shape.values())
    total = 1
    for n in sizes:
        total *= n
    if total > VIEW_MAX_ELEMENTS:
        raise LayoutError(f"the view prints one entry per element; this layout has {total} "
                          f"(limit {VIEW_MAX_ELEMENTS} = 2^20); use --view bases or a smaller shape")
    out = {}
    for flat in range(total):
        coords, x = [], flat
        for n in reversed(sizes):
            coords.append(x % n)
            x //= n
        coords.reverse()
        out[tuple(coords)] = amap.offset(dict(zip(names, coords)))
    return out


def _address_hardware_view(amap: SharedAddressMap) -> str:
    """Triton's shared hardware view on an address map: ``Offset: <o> -> (i,j)`` for every
    offset from 0 to the largest, in order; an offset no element uses (padding) reads ``pad``."""
    offs = address_offsets(amap)
    where = {o: c for c, o in offs.items()}
    if len(where) != len(offs):
        raise LayoutError(f"{amap.name}: two elements share an offset; the hardware view lists one "
                          "element per offset (use --view grid)")
    span = max(where) + 1
    if span > VIEW_MAX_ELEMENTS:
        raise LayoutError(f"the hardware view prints one line per offset; this layout spans {span} "
                          f"offsets (limit {VIEW_MAX_ELEMENTS} = 2^20); use --view grid or a smaller shape")
    dims = list(amap.shape.values())
    widths = [len(str(max(d - 1, 0))) for d in dims]
    lines = ["Block: 0:"]
    for o in range(span):
        c = where.get(o)
        text = "pad" if c is None else "(" + ",".join(str(v).rjust(w) for v, w in zip(c, widths)) + ")"
        lines.append(f"Offset: {o} -> {text}")
    return "\n".join(lines) + "\n"


def _address_grid_text(amap: SharedAddressMap) -> str:
    dims = list(amap.shape.values())
    if not 1 <= len(dims) <= 2:
        raise LayoutError(f"the tensor view draws 1-D or 2-D layouts; this one has out dims {list(amap.shape)}")
    offs = address_offsets(amap)
    rows, cols = (dims[0], dims[1]) if len(dims) == 2 else (1, dims[0])
    cells = [[str(offs[(r, c) if len(dims) == 2 else (c,)]) for c in range(cols)] for r in range(rows)]
    w = max(len(c) for row in cells for c in row)
    return "\n".join("[" + " ".join(c.rjust(w) for c in row) + "]" for row in cells)


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


def _address_shape(amap: SharedAddressMap, shape: Sequence[int] | None) -> None:
    if shape is not None and list(shape) != list(amap.shape.values()):
        raise LayoutError(f"shape {list(shape)} differs from the layout's out dims {list(amap.shape.values())}")


def hardware_view(layout: LinearLayout | SharedAddressMap, shape: Sequence[int] | None = None) -> str:
    """Triton's hardware-centric view (``Warp0:`` blocks listing who holds which element),
    byte for byte as ``triton.tools.tensor_descriptor``'s ``format_hardware_view`` prints it.

    Law: one entry per (warp, lane, register) input; refused (``LayoutError``) above
    ``VIEW_MAX_ELEMENTS`` elements or inputs, before anything is allocated. An address map (a
    padded shared layout) lists every offset up to its largest, ``pad`` where no element is
    stored (Triton 3.9 has no view of it: its ``toLinearLayout`` refuses padded layouts).

    >>> from verilayout.hw.nvidia.banks import padded_address_map
    >>> print(hardware_view(padded_address_map(LinearLayout.identity1D(4, "offset", "dim0"), [(2, 1)])), end="")
    Block: 0:
    Offset: 0 -> (0)
    Offset: 1 -> (1)
    Offset: 2 -> pad
    Offset: 3 -> (2)
    Offset: 4 -> (3)

    >>> from verilayout.core.linear_layout import LinearLayout
    >>> hardware_view(LinearLayout.identity1D(1 << 21, "register", "dim0"))
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: the hardware view prints one entry per element; this layout has 2097152 (limit 1048576 = 2^20); use --view bases or a smaller shape
    """
    if isinstance(layout, SharedAddressMap):
        _address_shape(layout, shape)
        return _address_hardware_view(layout)
    return format_hardware_view(layout, _check_view_size(layout, shape, "hardware view"))


def tensor_view(layout: LinearLayout | SharedAddressMap, shape: Sequence[int] | None = None) -> str:
    """Triton's tensor-centric view (one cell per element naming its owners), bounded as
    :func:`hardware_view` is. A shared layout is shown from memory's side (memory cell ``o`` of
    the tensor's shape names the element stored there), so an address map whose memory is not
    one cell per element (a padded layout: more offsets than elements) is refused with the
    reason; its grid view names each element's offset.

    >>> from verilayout.core.linear_layout import LinearLayout
    >>> print(tensor_view(LinearLayout.identity1D(2, "lane", "dim0")).splitlines()[0][:8])
    [T0:0, T
    """
    if isinstance(layout, SharedAddressMap):
        _address_shape(layout, shape)
        offs = address_offsets(layout)
        if sorted(offs.values()) != list(range(len(offs))) or layout.component is None:
            raise LayoutError(f"{layout.name} has no tensor view: that view puts the element stored at "
                              f"each memory offset in the tensor's shape, and this layout's {len(offs)} "
                              f"elements span offsets 0..{max(offs.values())} (padding); use --view grid "
                              "(each element's offset) or --view hw (each offset's element)")
        layout = layout.component      # no padding inside the tensor: the linear component itself
    return format_tensor_view(layout, _check_view_size(layout, shape, "tensor view"))


def format_owner_grid(layout: LinearLayout | SharedAddressMap) -> str:
    """The tensor grid as aligned text, one row per ``dim0`` value; an address map (a padded
    shared layout) names each element's offset.

    >>> print(format_owner_grid(LinearLayout.identity1D(4, "offset", "dim0")))
    [0 1 2 3]
    >>> from verilayout.hw.nvidia.banks import padded_address_map
    >>> print(format_owner_grid(padded_address_map(LinearLayout.identity1D(4, "offset", "dim0"), [(2, 1)])))
    [0 1 3 4]
    """
    if isinstance(layout, SharedAddressMap):
        return _address_grid_text(layout)
    grid = owner_grid(layout)
    cells = [["|".join(c) if c else "." for c in row] for row in grid]
    w = max(len(c) for row in cells for c in row)
    return "\n".join("[" + " ".join(c.rjust(w) for c in row) + "]" for row in cells)
