"""Triton's text views of a layout: :func:`format_hardware_view` (who holds what, per warp and
register, as ``triton-tensor-layout -use-hw-view`` prints it) and :func:`format_tensor_view` (the
tensor, each element naming its holders).

>>> from verilayout.frontends.triton import parse
>>> print(format_tensor_view(parse("#ttg.blocked<{sizePerThread = [2], threadsPerWarp = [1], "
...                                "warpsPerCTA = [1], order = [0]}>", [2])), end="")
[T0:0, T0:1]
"""
from __future__ import annotations

import math
from typing import Sequence

from verilayout.errors import LayoutError
from verilayout.core.linear_layout import LinearLayout
from verilayout.core.cga import standard_out_dims


def _coord_text(dims: Sequence[int], sep: str):
    """``out -> "(i<sep>j)"`` with each index padded to the width of its dim's largest index;
    the padded texts are built once per dim."""
    texts = [[str(v).rjust(len(str(max(d - 1, 0)))) for v in range(d)] for d in dims]
    if len(dims) == 2:
        t0, t1 = texts
        return lambda out: f"({t0[out[0]]}{sep}{t1[out[1]]})"
    return lambda out: "(" + sep.join(t[v] for t, v in zip(texts, out)) + ")"


def _view_dims(layout: LinearLayout, shape: Sequence[int] | None) -> list[int]:
    if not isinstance(layout, LinearLayout):
        raise LayoutError(f"expected a LinearLayout, got {type(layout).__name__}")
    names = standard_out_dims(len(layout.out_dims))
    if layout.out_dim_names != names:
        raise LayoutError(f"the view needs out dims {names}, got {layout.out_dim_names}")
    dims = [layout.out_dim_size(n) for n in names]
    if shape is not None and list(shape) != dims:
        raise LayoutError(f"shape {list(shape)} differs from the layout's out dims {dims}")
    return dims


def _is_shared(layout: LinearLayout) -> bool:
    ins = set(layout.in_dim_names)
    if ins <= {"offset", "block"} and "offset" in ins:
        return True
    if ins <= {"register", "lane", "warp", "block"}:
        return False
    raise LayoutError(f"a view needs in dims register/lane/warp/block or offset/block, got "
                      f"{layout.in_dim_names}")


def _in_size(layout: LinearLayout, name: str) -> int:
    return layout.in_dims.get(name, 1)


def _walk_arrays(layout: LinearLayout, order: Sequence[str]) -> tuple[dict, list, int]:
    """:func:`_walk` as arrays: per input dim of ``order`` its values, per output dim its values
    (numpy, point by point, ``order`` outermost first), and the number of points."""
    import numpy as np  # deferred: start-up time (only array code needs numpy)
    sizes = [_in_size(layout, n) for n in order]
    table = layout.apply_all()  # packed outputs, flat input with the first in dim low
    offs, acc = [], 0
    for n, s in layout.out_dims.items():
        offs.append((acc, s - 1))
        acc += s.bit_length() - 1
    in_off = {}
    acc = 0
    for n, s in layout.in_dims.items():
        in_off[n] = acc
        acc += s.bit_length() - 1
    total = 1
    for s in sizes:
        total *= s
    flat = np.arange(total, dtype=np.int64)
    idx = np.zeros(total, dtype=np.int64)
    coords = []
    rem = flat.copy()
    for n, s in reversed(list(zip(order, sizes))):
        c = rem % s
        rem //= s
        coords.append((n, c))
        if n in in_off:
            idx |= c << in_off[n]
    coords = dict(coords)
    packed = table[idx]
    return {n: coords[n] for n in order}, [(packed >> o) & m for o, m in offs], total


def _walk(layout: LinearLayout, order: Sequence[str]) -> tuple[dict, list[tuple]]:
    """``(inputs, outputs)`` over every hardware coordinate, ``order`` outermost first: per input
    dim of ``order`` the list of its values, and the list of output tuples, point by point."""
    coords, outs, total = _walk_arrays(layout, order)
    cols = {n: c.tolist() for n, c in coords.items()}
    return cols, list(zip(*(o.tolist() for o in outs))) if outs else [()] * total


def _shared_points(layout: LinearLayout, dims: list[int]):
    """(block, offset, coords) as Triton's shared views walk them.

    Triton shows ``elements / blocks`` offsets per block (not the layout's offset
    size): with broadcast blocks, or offsets beyond one copy, the rest is not shown.
    """
    total = 1
    for d in dims:
        total *= d
    per_block = total // _in_size(layout, "block")
    cols, outs = _walk(layout, ["block", "offset"])
    for block, offset, out in zip(cols["block"], cols["offset"], outs):
        if offset < per_block:
            yield block, offset, out


def format_hardware_view(layout: LinearLayout, shape: Sequence[int] | None = None) -> str:
    """Triton's hardware view (``format_hardware_view``, ``triton-tensor-layout -use-hw-view``).

    Distributed: ``Block<b>:`` (only with several blocks), ``Warp<w>:``, then one
    line per register with one ``(i,j)`` per lane, each coordinate padded to the
    width of its dim's largest index. Shared: ``Block: <b>:`` then
    ``Offset: <o> -> (i,j)`` for the first ``elements / blocks`` offsets (as Triton).

    >>> from verilayout.frontends.triton import parse
    >>> L = parse("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [4], warpsPerCTA = [1], order = [0]}>", [4])
    >>> print(format_hardware_view(L), end="")
    Warp0:
    (0), (1), (2), (3)
    """
    dims = _view_dims(layout, shape)
    coord = _coord_text(dims, ",")
    lines: list[str] = []
    if _is_shared(layout):
        for block, offset, out in _shared_points(layout, dims):
            if offset == 0:
                lines.append(f"Block: {block}:")
            lines.append(f"Offset: {offset} -> {coord(out)}")
        return "\n".join(lines) + "\n"
    n_blocks = _in_size(layout, "block")
    n_lanes = _in_size(layout, "lane")
    cols, outs = _walk(layout, ["block", "warp", "register", "lane"])
    texts = list(map(coord, outs))
    for at in range(0, len(outs), n_lanes):        # one line per (block, warp, register)
        if cols["register"][at] == 0:
            if cols["warp"][at] == 0 and n_blocks > 1:
                lines.append(f"Block{cols['block'][at]}:")
            lines.append(f"Warp{cols['warp'][at]}:")
        lines.append(", ".join(texts[at:at + n_lanes]))
    return "\n".join(lines) + "\n"


def format_tensor_view(layout: LinearLayout, shape: Sequence[int] | None = None) -> str:
    """Triton's tensor view (``format_tensor_view``): who holds each element, row-major.

    Distributed entries read ``[B<b>:]T<thread>:<register>`` (thread = lane + warp *
    lanes), several holders joined by ``|``. Shared layouts are shown from memory's
    side, as Triton does: cell ``block * (elements / blocks) + offset`` (row-major in
    the tensor's shape) reads ``(i:j)``, the element stored there.

    >>> from verilayout.frontends.triton import parse
    >>> L = parse("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [2], warpsPerCTA = [1], order = [0]}>", [4])
    >>> print(format_tensor_view(L), end="")
    [T0:0, T1:0, T0:1, T1:1]
    """
    dims = _view_dims(layout, shape)
    total = 1
    for d in dims:
        total *= d
    cells: list[list[str]] = [[] for _ in range(total)]
    shared = _is_shared(layout)
    if shared:
        per_block = total // _in_size(layout, "block")
        coord = _coord_text(dims, ":")
        for block, offset, out in _shared_points(layout, dims):
            cells[block * per_block + offset].append(coord(out))
        sep = ","
    else:
        n_blocks = _in_size(layout, "block")
        n_lanes, n_warps = _in_size(layout, "lane"), _in_size(layout, "warp")
        n_regs = _in_size(layout, "register")
        padded = lambda m: [" " * (len(str(m - 1)) - len(str(v))) for v in range(m)]
        pad_b, pad_t, pad_r = padded(n_blocks), padded(n_warps * n_lanes), padded(n_regs)
        name_b = [f"B{b}:" if n_blocks > 1 else "" for b in range(n_blocks)]
        name_t = [f"T{t}:" for t in range(n_warps * n_lanes)]
        name_r = [str(r) for r in range(n_regs)]
        cols, outs, _ = _walk_arrays(layout, ["block", "warp", "lane", "register"])
        strides = [math.prod(dims[k + 1:]) for k in range(len(dims))]   # row-major
        at = sum((o * st for o, st in zip(outs, strides)), 0 * cols["block"]).tolist()
        tids = (cols["lane"] + cols["warp"] * n_lanes).tolist()
        for c, b, tid, r in zip(at, cols["block"].tolist(), tids, cols["register"].tolist()):
            cells[c].append(pad_b[b] + pad_t[tid] + pad_r[r] + name_b[b] + name_t[tid] + name_r[r])
        sep = ", "
    return _tensor_text(["|".join(c) for c in cells], dims, sep)


def _tensor_text(cells: list[str], dims: list[int], sep: str) -> str:
    """The nested-bracket text of ``cells`` (row-major over ``dims``): before cell ``i`` one ``[``
    per trailing index of ``i`` that is 0, after it one ``]`` per trailing index of ``i + 1`` that
    is 0 (all of them after the last cell), a line break where the last index wraps."""
    rank = len(dims)
    sizes = [math.prod(dims[rank - k:]) for k in range(1, rank + 1)]   # i % sizes[k-1] == 0: k zeros
    zeros = [sum(1 for z in sizes if i % z == 0) for i in range(len(cells) + 1)]
    last = dims[-1]
    out: list[str] = []
    new_line = True
    for i, cell in enumerate(cells):
        opened = zeros[i]
        out.append("[" * opened)
        if new_line:
            out.append(" " * (rank - opened))
            new_line = False
        out.append(cell)
        out.append("]" * zeros[i + 1])
        if (i + 1) % last == 0:
            out.append("\n")
            new_line = True
        else:
            out.append(sep)
    return "".join(out)
