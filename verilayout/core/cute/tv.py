"""CuTe thread-value (TV) layouts as register layouts: ``(thread, value) -> tile index`` to Triton's
``register, lane, warp -> dim0, dim1, ...``.

A TV layout is CuTe's description of who holds what in a tiled copy or MMA (``TiledCopy::
get_layoutS_TV()``, ``TiledMMA::get_layoutC_TV()``, ``Copy_Traits<..>::SrcLayout`` in
``cute/atom/copy_atom.hpp`` and ``mma_atom.hpp``): mode 0 is the thread index, mode 1 the value
index (each read colexicographically), and the layout's value is a linear index into the tile,
which CuTe reads column-major (``idx2crd(idx, tile_shape)``: dim 0 fastest).

The conversion is exact: thread index bits 0-4 are the lane, the higher bits the warp, value index
bits are the register; each input bit's tile index (``stride << j``) is split into coordinate bits
of the column-major tile. It needs power-of-two extents, a tile of power-of-two extents and
strides whose input bits do not carry into each other (then sums are XORs: GF(2)-linear).

>>> L = tv_to_linear(Layout((32, (2, 4)), (1, (32, 64))), (32, 8))   # one row per lane, 8 values
>>> L.bases["lane"][:2], L.bases["register"]
([[1, 0], [2, 0]], [[0, 1], [0, 2], [0, 4]])
"""
from __future__ import annotations

from typing import Any, Sequence

from verilayout.bits import is_pow2, log2
from verilayout.core.cute.layout import Layout, format_cute
from verilayout.core.linear_layout import LinearLayout
from verilayout.errors import LayoutError

__all__ = ["tv_to_linear", "LANES"]

#: Threads per warp: thread index bits below log2(LANES) are the lane, the rest the warp.
LANES = 32


def _tile_dims(tile: Sequence[int]) -> list[int]:
    """The tile's extents, each a power of two (a LayoutError otherwise)."""
    if isinstance(tile, (str, bytes)) or not isinstance(tile, Sequence) or not tile:
        raise LayoutError(f"a TV layout's tile is a list of extents such as [32, 8], got {tile!r}")
    out = []
    for i, t in enumerate(tile):
        if isinstance(t, bool) or not isinstance(t, int) or t < 1 or not is_pow2(int(t)):
            raise LayoutError(f"tile extent {t!r} (dim {i}) is not a power of two: the column-major "
                              "tile index is GF(2)-linear only then")
        out.append(int(t))
    return out


def _mode_bits(mode: Layout, what: str) -> list[int]:
    """Tile index of each input bit of one mode (colexicographic leaves, bit j of a leaf ``s:d``
    is ``d << j``)."""
    bits: list[int] = []
    for s, d in mode.leaves():
        s, d = int(s), int(d)
        if not is_pow2(s):
            raise LayoutError(f"the {what} mode has extent {s}, not a power of two")
        if d < 0:
            raise LayoutError(f"the {what} mode has negative stride {d}")
        bits += [d << j for j in range(log2(s))]
    return bits


def _require_xor(bits: list[int], tv: Layout) -> None:
    """Nothing when the non-zero input bits share no index bit (their sum is their XOR)."""
    seen = 0
    for b in bits:
        if b & seen:
            raise LayoutError(f"{format_cute(tv)} is not GF(2)-linear: an input bit with index {b} "
                              "shares bits with another, so their sum is not their XOR")
        seen |= b


def _coord(idx_bits: int, dims: list[int]) -> list[int]:
    """The column-major coordinate of a tile index that is a sum of distinct bits."""
    out, rest = [], idx_bits
    for t in dims:
        out.append(rest % t)
        rest //= t
    return out


def tv_to_linear(tv: Any, tile: Sequence[int]) -> LinearLayout:
    """A CuTe TV layout as a register layout ``register, lane, warp -> dim0, dim1, ...``.

    Law: for every thread ``t`` and value ``v``, the layout applied to register ``v``, lane
    ``t % 32`` and warp ``t // 32`` is the column-major coordinate in ``tile`` of ``tv((t, v))``
    (dim 0 fastest, as CuTe's ``idx2crd``). A stride-0 bit (threads or values that repeat an
    element) is a zero basis. Refused: a layout of rank other than 2, fewer than 32 threads,
    an index past the tile, a layout that is not GF(2)-linear (see the module).

    >>> from verilayout.frontends.cute_text import parse_cute
    >>> L = tv_to_linear(parse_cute("((_4,_8),((_2,_2,_2),_1)):((_32,_1),((_16,_8,_128),_0))"), (16, 16))
    >>> L.in_dims, L.bases["lane"][2]
    ({'register': 8, 'lane': 32, 'warp': 1}, [1, 0])
    """
    if not isinstance(tv, Layout):
        raise LayoutError(f"a TV layout is a plain CuTe layout (thread, value) -> index, got "
                          f"{type(tv).__name__}")
    if tv.is_symbolic:
        raise LayoutError(f"the TV layout {format_cute(tv)} has symbols; substitute values first")
    if tv.rank != 2:
        raise LayoutError(f"a TV layout has 2 modes (thread, value); {format_cute(tv)} has {tv.rank}")
    dims = _tile_dims(tile)
    size = 1
    for t in dims:
        size *= t
    thread, value = tv.modes()
    tbits, vbits = _mode_bits(thread, "thread"), _mode_bits(value, "value")
    _require_xor(tbits + vbits, tv)
    top = sum(tbits) + sum(vbits)
    if top >= size:
        raise LayoutError(f"the TV layout {format_cute(tv)} reaches tile index {top}; the tile "
                          f"{'x'.join(map(str, dims))} has {size} elements")
    lane_bits = log2(LANES)
    if len(tbits) < lane_bits:
        raise LayoutError(f"the TV layout {format_cute(tv)} has {1 << len(tbits)} threads; a register "
                          f"layout covers a whole warp ({LANES} lanes)")
    bases = {"register": [_coord(b, dims) for b in vbits],
             "lane": [_coord(b, dims) for b in tbits[:lane_bits]],
             "warp": [_coord(b, dims) for b in tbits[lane_bits:]]}
    return LinearLayout(bases, {f"dim{i}": t for i, t in enumerate(dims)}, require_surjective=False)
