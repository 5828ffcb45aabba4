"""Shared-memory layouts: ``#ttg.swizzled_shared``, ``#ttg.nvmma_shared``, and the converters that
delegate to :mod:`verilayout.frontends.triton_memory` (``#ttg.amd_rotating_shared``,
``#ttg.shared_linear``, ``#ttg.padded_shared``, ``#ttng.tensor_memory_encoding``,
``#ttng.tensor_memory_scales_encoding``). In dims ``offset, block``; out dims ``dim0, dim1, ...``.

>>> from verilayout.frontends.triton import parse_attr
>>> a = parse_attr("#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>")
>>> swizzled_shared_to_linear(a, (4,)).bases
{'offset': [[1], [2]], 'block': []}
"""
from __future__ import annotations

from typing import Sequence

from verilayout.errors import LayoutError
from verilayout.core.linear_layout import LinearLayout
from verilayout.core.cga import ensure_layout_not_smaller_than, standard_out_dims
from verilayout.frontends.mlir import Attr, format_value
from verilayout.frontends import triton_memory
from verilayout.frontends.triton.common import (CGA_KEYS, read_bool, check_cga, check_keys, combine_cga,
                                                attr_error, read_order, check_rank, shape_per_cta, read_uint,
                                                read_uints, checked_linear)
from verilayout.frontends.triton.registry import attr_to_layout
from verilayout.hw.nvidia.banks import SharedAddressMap
from verilayout.hw.nvidia.tma import TmaEncoding


def swizzled_shared_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttg.swizzled_shared`` (seed 004's table): row ``r`` XORs ``vec*((r/perPhase)%maxPhase)``.

    >>> from verilayout.frontends.triton import parse_attr
    >>> a = parse_attr("#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 4, order = [1, 0]}>")
    >>> swizzled_shared_to_linear(a, (4, 8)).bases["offset"]
    [[0, 1], [0, 2], [0, 4], [1, 2], [2, 4]]
    """
    return _swizzled(attr, shape)


def _swizzled(attr: Attr, shape: tuple) -> LinearLayout:
    keys = ("vec", "perPhase", "maxPhase", "order") + CGA_KEYS
    check_keys(attr, keys, keys[:4])
    vec, per_phase, max_phase = (read_uint(attr, k) for k in ("vec", "perPhase", "maxPhase"))
    rank = len(read_uints(attr, "order"))
    check_rank(attr, rank, shape, "'order' has that many entries")
    order = read_order(attr, "order", rank)
    if per_phase == 0:
        raise attr_error(attr, "perPhase", "'perPhase' must be positive")
    if max_phase == 0:
        raise attr_error(attr, "maxPhase", "'maxPhase' must be positive")
    check_cga(attr, rank)
    per_cta = shape_per_cta(attr, shape)
    names = standard_out_dims(rank)
    if rank == 1:
        return combine_cga(attr, LinearLayout.identity1D(per_cta[0], "offset", "dim0"), shape)
    col, row = order[0], order[1]
    ncols, nrows = per_cta[col], per_cta[row]
    bases = [[0, c] for c in _powers_below(ncols)]
    bases += [[r, (vec * ((r // per_phase) % max_phase)) % ncols] for r in _powers_below(nrows)]
    try:
        cta = LinearLayout({"offset": bases}, [names[row], names[col]])
    except LayoutError as e:
        raise attr_error(attr, None, f"swizzle (vec={vec}, perPhase={per_phase}, "
                                     f"maxPhase={max_phase}) is not linear here: {e}") from None
    for d in order[2:]:
        cta = cta * LinearLayout.identity1D(per_cta[d], "offset", names[d])
    return combine_cga(attr, cta, shape)


def _powers_below(n: int) -> list[int]:
    out, p = [], 1
    while p < n:
        out.append(p)
        p *= 2
    return out


def tma_block_shape(attr: Attr, per_cta: list[int], bits: int, swizzle: int, fp4: bool,
                    transposed: bool) -> list[int]:
    """Triton's ``getTMABlockShape`` (packed size)."""
    block = list(per_cta)
    contig = 0 if transposed else len(block) - 1
    if fp4:
        block[contig] *= 2
    block = [min(s, 256) for s in block]
    if swizzle:
        need = 8 * swizzle // bits
        if block[contig] < need:
            raise attr_error(attr, "swizzlingByteWidth",
                             f"Triton refuses it too: the block is {block[contig]} elements along its "
                        f"contiguous dim, less than the {need} a {swizzle}-byte swizzle of "
                        f"{bits}-bit elements needs")
        block[contig] = need
    if fp4:
        block[contig] //= 2
    return block


def tma_encoding(attr: object, block: Sequence[int]) -> TmaEncoding | None:
    """The TMA view of a descriptor's encoding for a copy of ``block`` (TTGIR order): None unless
    ``attr`` is a ``#ttg.nvmma_shared``; a 2-d block gets its checked parameters and, unless
    fp4Padded, Triton's box (:func:`tma_block_shape`).

    >>> from verilayout.frontends.triton import parse_attr
    >>> tma_encoding(parse_attr("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, "
    ...              "elementBitWidth = 16}>"), [128, 128]).box
    (128, 64)
    """
    if not isinstance(attr, Attr) or attr.name.split(".")[-1] != "nvmma_shared":
        return None
    block = [int(b) for b in block]
    if len(block) != 2:
        return TmaEncoding(len(block))
    swizzle, bits, transposed, fp4 = nvmma_params(attr)
    box = None if fp4 else tuple(tma_block_shape(attr, block, bits, swizzle, fp4, transposed))
    return TmaEncoding(2, swizzle, bits, transposed, fp4, box)


def _nvmma_core(attr: Attr, bits: int, swizzle: int, fp4: bool) -> LinearLayout:
    vec = 128 // bits
    per_phase = 128 // swizzle
    max_phase = swizzle // 16
    cols = 8 * max(16, swizzle) // bits
    bases = []
    for c in _powers_below(cols):
        bases.append([0, c // 16 * 8 + c % 8] if fp4 else [0, c])
    for r in _powers_below(8):
        col = vec * ((r // per_phase) % max_phase)
        bases.append([r, col // 16 * 8 + col % 8] if fp4 else [r, col])
    return LinearLayout({"offset": bases}, ["dim0", "dim1"])


def _reshape_layout(ll: LinearLayout, shape: Sequence[int]) -> LinearLayout:
    """Triton's ``reshapeLayout``: row-major re-interpretation of the out dims."""
    rank = len(shape)
    src = list(reversed(ll.out_dim_names))
    new = list(reversed([(f"dim{i}", s) for i, s in enumerate(shape)]))
    return ll.transpose_outs(src).reshape_outs(new).transpose_outs(standard_out_dims(rank))


def nvmma_rank(attr: Attr) -> int:
    """An nvmma_shared attribute's rank: its ``rank`` key (Triton 3.9 prints it for rank != 2),
    else its CGA's, else 2 (Triton's default CGA is 2-d)."""
    if "rank" in attr.params:
        r = read_uint(attr, "rank")
        if r < 1:
            raise attr_error(attr, "rank", "'rank' must be at least 1")
        return r
    cga = attr.params.get("CGALayout")
    if isinstance(cga, list) and cga and isinstance(cga[0], list):
        return len(cga[0])
    order = attr.params.get("CTAOrder")
    if isinstance(order, list) and order:
        return len(order)
    return 2


def nvmma_shared_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttg.nvmma_shared``: 8-row swizzle atoms of ``swizzlingByteWidth`` bytes, as Triton 3.9.

    >>> from verilayout.frontends.triton import parse_attr
    >>> a = parse_attr("#ttg.nvmma_shared<{swizzlingByteWidth = 32, transposed = false, elementBitWidth = 16}>")
    >>> nvmma_shared_to_linear(a, (8, 16)).bases["offset"][4:]
    [[1, 0], [2, 0], [4, 8]]
    """
    swizzle, bits, transposed, fp4 = nvmma_params(attr)
    rank = nvmma_rank(attr)
    check_rank(attr, rank, shape, "set by its CGA layout; 2 when it has none")
    check_cga(attr, rank)
    per_cta = shape_per_cta(attr, shape)
    tma = tma_block_shape(attr, per_cta, bits, swizzle, fp4, transposed)
    if swizzle == 0:
        ll = _nvmma_unswizzled(attr, tma, per_cta, transposed)
    else:
        ll = _nvmma_swizzled(attr, tma, per_cta, bits, swizzle, fp4, transposed)
    return combine_cga(attr, ll, shape)


def nvmma_params(attr: Attr) -> tuple[int, int, bool, bool]:
    """``(swizzlingByteWidth, elementBitWidth, transposed, fp4Padded)``, checked."""
    keys = ("swizzlingByteWidth", "transposed", "elementBitWidth", "fp4Padded", "rank") + CGA_KEYS
    check_keys(attr, keys, ("swizzlingByteWidth", "elementBitWidth"))
    swizzle = read_uint(attr, "swizzlingByteWidth")
    bits = read_uint(attr, "elementBitWidth")
    transposed = read_bool(attr, "transposed", False)
    fp4 = read_bool(attr, "fp4Padded", False)
    if swizzle not in (0, 32, 64, 128):
        raise attr_error(attr, "swizzlingByteWidth", f"'swizzlingByteWidth' = {swizzle}; expected 0, "
                                                     "32, 64 or 128")
    if bits not in (8, 16, 32, 64):
        raise attr_error(attr, "elementBitWidth", f"'elementBitWidth' = {bits}; expected 8, 16, 32 or 64")
    if fp4 and (swizzle != 128 or bits != 8):
        raise attr_error(attr, "fp4Padded", "'fp4Padded' needs swizzlingByteWidth = 128 and "
                                            "elementBitWidth = 8")
    return swizzle, bits, transposed, fp4


def _nvmma_unswizzled(attr: Attr, tma: list[int], per_cta: list[int], transposed: bool) -> LinearLayout:
    """The CTA layout of an nvmma_shared layout without swizzling (``swizzlingByteWidth = 0``)."""
    rank = len(per_cta)
    names = standard_out_dims(rank)
    if transposed and rank > 2:
        raise attr_error(attr, "transposed", "a transposed #ttg.nvmma_shared without swizzling "
                                             "and rank > 2 is not supported here (Triton 3.9's "
                                        "layout for it is not reproduced)")
    ll = LinearLayout.empty()
    for d in ([0] + list(range(rank - 1, 0, -1)) if transposed else reversed(range(rank))):
        ll = ll * LinearLayout.identity1D(tma[d], "offset", names[d])
    ll = ll.transpose_outs(names[::-1])  # the repeat below grows dim{rank-1} first
    return ensure_layout_not_smaller_than(ll, dict(zip(names, per_cta)))


def _nvmma_swizzled(attr: Attr, tma: list[int], per_cta: list[int], bits: int, swizzle: int,
                    fp4: bool, transposed: bool) -> LinearLayout:
    """The CTA layout of a swizzled nvmma_shared layout: the swizzle atom repeated over the TMA
    block collapsed to 2-d, reshaped back to the block's rank, then repeated to the CTA's shape."""
    rank = len(per_cta)
    names = standard_out_dims(rank)
    if rank < 2:
        raise attr_error(attr, None, "a swizzled #ttg.nvmma_shared layout needs rank >= 2")
    collapsed = [1, tma[-1]]
    for s in tma[:-1]:
        collapsed[0] *= s
    if transposed:
        collapsed.reverse()
    tile = _nvmma_core(attr, bits, swizzle, fp4)
    rows, cols = tile.out_dim_size("dim0"), tile.out_dim_size("dim1")
    packing = 2 if fp4 else 1
    if collapsed[1] * packing < cols or collapsed[0] < rows:
        raise attr_error(attr, None, f"Triton refuses it too: shape per CTA {per_cta} is smaller than "
                                     "one swizzle atom: "
                                f"need at least [{rows}, {cols // packing}], got the collapsed "
                                f"block {collapsed}")
    ll = ensure_layout_not_smaller_than(tile, {"dim0": collapsed[0], "dim1": collapsed[1]})
    target = list(tma)
    if transposed:
        target = target[1:] + target[:1]
    ll = _reshape_layout(ll, target)
    if transposed:
        perm = [rank - 1] + list(range(rank - 1))
        ll = LinearLayout({k: [[b[p] for p in perm] for b in v] for k, v in ll.bases.items()}, names)
    return ensure_layout_not_smaller_than(ll, dict(zip(names, per_cta)))


def amd_rotating_shared_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttg.amd_rotating_shared`` (gfx942): delegated to ``triton_memory.amd_rotating_to_linear``.

    >>> from verilayout.frontends.triton import parse_attr
    >>> a = parse_attr("#ttg.amd_rotating_shared<{vec = 1, perPhase = 1, maxPhase = 2, order = [1, 0]}>")
    >>> amd_rotating_shared_to_linear(a, (8, 2)).bases["offset"]
    [[0, 1], [1, 1], [2, 1], [4, 0]]
    """
    check_keys(attr, triton_memory.ROTATING_KEYS, ("vec", "perPhase", "maxPhase", "order"))
    rank = len(read_uints(attr, "order"))
    check_rank(attr, rank, shape, "'order' has that many entries")
    order = read_order(attr, "order", rank)
    check_cga(attr, rank)
    return checked_linear(attr, lambda: triton_memory.amd_rotating_to_linear(attr.params, shape, order))


def shared_linear_attr_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttg.shared_linear``: delegated to ``triton_memory.shared_linear_to_linear``. Triton 3.9
    refuses ``alignment`` inside the braces (it belongs after them: ``<{...}, alignment = N>``)."""
    if "alignment" in attr.params and attr.body is None:
        raise attr_error(attr, "alignment", "alignment must be written outside the braces "
                                            "(`<{offset = ..., block = ...}, alignment = N>`); Triton refuses it too")
    return checked_linear(attr, lambda: triton_memory.shared_linear_to_linear(attr.params, shape))


def tmem_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttng.tensor_memory_encoding``: delegated to ``triton_memory.tensor_memory_to_linear``."""
    return checked_linear(attr, lambda: triton_memory.tensor_memory_to_linear(attr.params, shape))


def tmem_scales_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttng.tensor_memory_scales_encoding``: ``triton_memory.tensor_memory_scales_to_linear``."""
    return checked_linear(attr, lambda: triton_memory.tensor_memory_scales_to_linear(attr.params, shape))


def padded_shared_attr_to_map(attr: Attr, shape: tuple) -> SharedAddressMap:
    """``#ttg.padded_shared``: an address map (not GF(2)-linear), ``triton_memory.padded_shared_to_map``."""
    try:
        return triton_memory.padded_shared_to_map(attr.body, shape, format_value(attr))
    except LayoutError as e:
        raise attr_error(attr, None, str(e)) from None


def partitioned_shared_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttg.partitioned_shared<{numPartitions, numGroups, partitionDim, partitionLayout}>``: dim
    ``partitionDim`` is cut into ``numPartitions * numGroups`` equal pieces; piece ``g*P + p`` lies in
    partition ``p`` (a separate memory region, so its bits are no offset) as group ``g`` after the
    groups before it; inside a piece, ``partitionLayout`` at the piece's shape. Offset bases: the
    piece's, then one per group bit (the partition bits are left out). Triton 3.9 refuses a
    ``#ttg.padded_shared`` partition layout ("toLinearLayout does not support partitioned layouts
    wrapping padded layouts"); so does this. Read off the wheel's bases on Triton's lit tests
    (tests/oracles/test_lit_layouts_oracle.py): an inference from them, not from Triton's source.

    >>> from verilayout.frontends.triton import parse_attr
    >>> a = parse_attr("#ttg.partitioned_shared<{numPartitions = 2, numGroups = 2, partitionDim = 0, "
    ...                "partitionLayout = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>}>")
    >>> partitioned_shared_to_linear(a, (8, 2)).bases["offset"]
    [[0, 1], [1, 0], [4, 0]]
    """
    keys = ("numPartitions", "numGroups", "partitionDim", "partitionLayout")
    check_keys(attr, keys, keys)
    parts, groups, dim = (read_uint(attr, k) for k in keys[:3])
    for k, v in (("numPartitions", parts), ("numGroups", groups)):
        if v == 0 or v & (v - 1):
            raise attr_error(attr, k, f"'{k}' = {v} must be a power of two")
    inner = attr.params.get("partitionLayout")
    if not isinstance(inner, Attr):
        raise attr_error(attr, "partitionLayout", "'partitionLayout' must be a shared layout attribute")
    if inner.name.split(".")[-1] in ("padded_shared", "partitioned_shared"):
        raise attr_error(attr, "partitionLayout", f"a #{inner.name} partition layout has no linear layout "
                                                  "(Triton 3.9 refuses it too: toLinearLayout does not support "
                                             "partitioned layouts wrapping padded layouts)")
    if dim >= len(shape):
        raise attr_error(attr, "partitionDim", f"'partitionDim' = {dim} is out of range for rank {len(shape)}")
    pieces = parts * groups
    if shape[dim] % pieces:
        raise attr_error(attr, None, f"dim {dim} of size {shape[dim]} cannot be cut into {pieces} pieces")
    piece = tuple(s // pieces if i == dim else s for i, s in enumerate(shape))
    ll = attr_to_layout(inner, piece)
    if not isinstance(ll, LinearLayout) or "offset" not in ll.in_dim_names:
        raise attr_error(attr, "partitionLayout", f"#{inner.name} is not a linear shared layout")
    names = standard_out_dims(len(shape))
    offs = [list(b) for b in ll.transpose_outs(names).bases["offset"]]
    step = piece[dim] * parts
    while step < shape[dim]:
        offs.append([step if i == dim else 0 for i in range(len(shape))])
        step *= 2
    block = ll.transpose_outs(names).bases.get("block", [])
    return LinearLayout({"offset": offs, "block": block}, dict(zip(names, shape)), require_surjective=False)
