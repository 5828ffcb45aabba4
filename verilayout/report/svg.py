"""SVG pictures of layouts, drawn the way the PTX ISA's fragment figures are (9.7.15.5.1.1).

* Distributed layouts (in dims register/lane/warp[/block]): one cell per tensor
  element, colored by the thread that holds it, labelled ``T<thread>`` and ``R<register>``.
* Shared layouts (in dim ``offset``): one cell per element, colored by its bank
  (``(offset * elem_bytes / 4) % banks``), labelled with the offset; cells listed in
  ``marked`` (e.g. the two elements of a bank-conflict witness) get a thick red border.

>>> from verilayout.core.linear_layout import LinearLayout
>>> svg = layout_svg(LinearLayout({"lane": [[0, 1], [1, 0]]}, ["dim0", "dim1"]))
>>> svg.startswith("<svg") and svg.count("<rect") == 4
True
"""
from __future__ import annotations

import colorsys
from typing import Iterable
from xml.sax.saxutils import escape

from verilayout.errors import LayoutError
from verilayout.core.linear_layout import LinearLayout
from verilayout.hw.nvidia.banks import SharedAddressMap

CELL = 44
MAX_CELLS = 1 << 14


def _color(k: int, n: int) -> str:
    h = (k * 0.618033988749895) % 1.0
    r, g, b = colorsys.hls_to_rgb(h, 0.78, 0.65)
    return f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"


def _address_cells(amap: SharedAddressMap, elem_bits: int, banks: int):
    """The cells of an address map (a padded shared layout): each element's offset and bank."""
    dims = list(amap.shape.values())
    if not 1 <= len(dims) <= 2:
        raise LayoutError(f"the picture draws 1-D or 2-D layouts; this one has out dims {list(amap.shape)}")
    rows, cols = (dims[0], dims[1]) if len(dims) == 2 else (1, dims[0])
    if rows * cols > MAX_CELLS:
        raise LayoutError(f"layout too large to draw ({rows}x{cols} elements); the picture draws at "
                          f"most {MAX_CELLS} cells")
    names = list(amap.shape)
    grid: dict[tuple[int, int], list[tuple[int, str]]] = {}
    for r in range(rows):
        for c in range(cols):
            off = amap.offset(dict(zip(names, (r, c) if len(dims) == 2 else (c,))))
            grid[(r, c)] = [((off * elem_bits // 32) % banks, f"{off}")]
    return rows, cols, grid, True


def _cells(layout: LinearLayout | SharedAddressMap, elem_bits: int, banks: int):
    if isinstance(layout, SharedAddressMap):
        return _address_cells(layout, elem_bits, banks)
    outs = layout.out_dim_names
    if not 1 <= len(outs) <= 2:
        raise LayoutError(f"the picture draws 1-D or 2-D layouts; this one has out dims {outs}")
    rows = layout.out_dims[outs[0]] if len(outs) == 2 else 1
    cols = layout.out_dims[outs[-1]]
    if rows * cols > MAX_CELLS or layout.total_in_bits > 16:
        raise LayoutError(f"layout too large to draw ({rows}x{cols} elements, "
                          f"2^{layout.total_in_bits} inputs); the picture draws at most {MAX_CELLS} cells")
    shared = "offset" in layout.in_dims
    grid: dict[tuple[int, int], list[tuple[int, str]]] = {}
    names, sizes = layout.in_dim_names, list(layout.in_dims.values())
    lanes = layout.in_dims.get("lane", 1)
    for flat, packed in enumerate(layout.apply_all().tolist()):
        c, x = {}, flat
        for n, s in zip(names, sizes):
            c[n], x = x % s, x // s
        vals = layout.unpack(int(packed))
        rc = (vals[0], vals[1]) if len(outs) == 2 else (0, vals[0])
        if shared:
            off = c["offset"]
            bank = (off * elem_bits // 32) % banks
            grid.setdefault(rc, []).append((bank, f"{off}"))
        else:
            t = c.get("lane", 0) + lanes * c.get("warp", 0)
            grid.setdefault(rc, []).append((t, f"T{t}:R{c.get('register', 0)}"))
    return rows, cols, grid, shared


def layout_svg(layout: LinearLayout | SharedAddressMap, *, elem_bits: int = 16, banks: int = 32,
               marked: Iterable[tuple[int, int]] = (), title: str | None = None) -> str:
    """The layout as an SVG document (a string). See the module docstring. An address map (a
    padded shared layout) is drawn as a shared layout: each element's padded offset and bank.

    >>> from verilayout.hw.nvidia.banks import padded_address_map
    >>> svg = layout_svg(padded_address_map(LinearLayout.identity1D(4, "offset", "dim0"), [(2, 1)]))
    >>> svg.count("<rect"), ">3<" in svg
    (4, True)
    """
    rows, cols, grid, shared = _cells(layout, elem_bits, banks)
    marked = set(marked)
    top = 40
    w, h = cols * CELL + 60, rows * CELL + top + 20
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'viewBox="0 0 {w} {h}" font-family="monospace">']
    head = title or ("shared layout, colored by bank" if shared else "distributed layout, colored by thread")
    out.append(f'<text x="4" y="16" font-size="13">{escape(head)}</text>')
    for c in range(cols):
        out.append(f'<text x="{40 + c * CELL + CELL // 2}" y="{top - 6}" font-size="9" '
                   f'text-anchor="middle">{c}</text>')
    for r in range(rows):
        out.append(f'<text x="34" y="{top + r * CELL + CELL // 2 + 3}" font-size="9" '
                   f'text-anchor="end">{r}</text>')
        for c in range(cols):
            owners = grid.get((r, c), [])
            x, y = 40 + c * CELL, top + r * CELL
            key = owners[0][0] if owners else -1
            fill = _color(key, banks) if owners else "#ffffff"
            stroke, sw = ("#d00000", 3) if (r, c) in marked else ("#555555", 0.5)
            label = owners[0][1] if owners else ""
            extra = f" +{len(owners) - 1}" if len(owners) > 1 else ""
            tip = "; ".join(o[1] for o in owners) or "not held"
            tip = (f"({r}, {c}) bank {key}: offset {tip}" if shared else f"({r}, {c}): {tip}")
            out.append(f'<g><title>{escape(tip)}</title>'
                       f'<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{fill}" '
                       f'stroke="{stroke}" stroke-width="{sw}" data-row="{r}" data-col="{c}" '
                       f'data-key="{key}"/>')
            parts = label.split(":") if not shared else [label, f"b{key}"]
            for i, p in enumerate(parts[:2]):
                out.append(f'<text x="{x + CELL / 2}" y="{y + 16 + i * 12}" font-size="9" '
                           f'text-anchor="middle">{escape(p + (extra if i == 1 else ""))}</text>')
            out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)
