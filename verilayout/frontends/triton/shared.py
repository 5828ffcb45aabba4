"""Shared-memory layouts: ``#ttg.swizzled_shared``, ``#ttg.nvmma_shared``, and the converters that
delegate to :mod:`verilayout.frontends.triton.memory` (``#ttg.amd_rotating_shared``,
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
from verilayout.core.cga import ANY_CGA_KEYS, standard_out_dims
from verilayout.core.triton_shared import nvmma_block_shape, nvmma_cta, swizzled_shared_cta
from verilayout.frontends.mlir import Attr, format_value
from verilayout.frontends.triton import memory as triton_memory
from verilayout.frontends.triton.common import (read_bool, check_cga, check_keys, combine_cga,
                                                attr_error, read_order, check_rank, shape_per_cta, read_uint,
                                                read_uints, checked_linear)
from verilayout.frontends.triton.dispatch import SHARED, KindTable, LayoutKind, convert
from verilayout.hw.nvidia.banks import SharedAddressMap
from verilayout.hw.nvidia.tma import TmaEncoding


def swizzled_shared_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttg.swizzled_shared`` (Triton ``lib/Dialect/TritonGPU/IR/LinearLayoutConversions.cpp``,
    ``swizzledSharedToLinearLayout``): row ``r`` XORs ``vec*((r/perPhase)%maxPhase)``.

    >>> from verilayout.frontends.triton import parse_attr
    >>> a = parse_attr("#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 4, order = [1, 0]}>")
    >>> swizzled_shared_to_linear(a, (4, 8)).bases["offset"]
    [[0, 1], [0, 2], [0, 4], [1, 2], [2, 4]]
    """
    return _swizzled(attr, shape)


def _swizzled(attr: Attr, shape: tuple) -> LinearLayout:
    keys = ("vec", "perPhase", "maxPhase", "order") + ANY_CGA_KEYS
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
    cta = _located(attr, None, lambda: swizzled_shared_cta(vec, per_phase, max_phase, order, per_cta))
    return combine_cga(attr, cta, shape)


def _located(attr: Attr, key: str | None, call):
    """``call()``, a ``LayoutError`` of the parameter-level builder located at ``attr`` (``key``)."""
    try:
        return call()
    except LayoutError as e:
        raise attr_error(attr, key, str(e)) from None


def tma_block_shape(attr: Attr, per_cta: list[int], bits: int, swizzle: int, fp4: bool,
                    transposed: bool) -> list[int]:
    """Triton's ``getTMABlockShape`` (packed size): :func:`verilayout.core.triton_shared.nvmma_block_shape`,
    an error located at the attribute's ``swizzlingByteWidth``."""
    return _located(attr, "swizzlingByteWidth", lambda: nvmma_block_shape(per_cta, bits, swizzle, fp4, transposed))


def tma_encoding(attr: object, block: Sequence[int]) -> TmaEncoding | None:
    """The TMA view of a descriptor's encoding for a copy of ``block`` (TTGIR order, any rank Triton
    makes, 1 to 5): None unless ``attr`` is a ``#ttg.nvmma_shared``; else its checked parameters
    and, unless fp4Padded, Triton's box (:func:`tma_block_shape`, one entry per dim).

    >>> from verilayout.frontends.triton import parse_attr
    >>> tma_encoding(parse_attr("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, "
    ...              "elementBitWidth = 16}>"), [128, 128]).box
    (128, 64)
    >>> tma_encoding(parse_attr("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, "
    ...              "elementBitWidth = 16, rank = 3}>"), [1, 128, 128]).box
    (1, 128, 64)
    """
    if not isinstance(attr, Attr) or attr.name.split(".")[-1] != "nvmma_shared":
        return None
    block = [int(b) for b in block]
    swizzle, bits, transposed, fp4 = nvmma_params(attr)
    box = None if fp4 else tuple(tma_block_shape(attr, block, bits, swizzle, fp4, transposed))
    return TmaEncoding(len(block), swizzle, bits, transposed, fp4, box)


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
    ll = _located(attr, "transposed" if swizzle == 0 else None,
                  lambda: nvmma_cta(tma, per_cta, bits, swizzle, fp4, transposed))
    return combine_cga(attr, ll, shape)


def nvmma_params(attr: Attr) -> tuple[int, int, bool, bool]:
    """``(swizzlingByteWidth, elementBitWidth, transposed, fp4Padded)``, checked."""
    keys = ("swizzlingByteWidth", "transposed", "elementBitWidth", "fp4Padded", "rank") + ANY_CGA_KEYS
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


def partitioned_shared_to_linear(attr: Attr, shape: tuple, kinds: KindTable) -> LinearLayout:
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
    >>> from verilayout.frontends.triton.registry import KINDS
    >>> partitioned_shared_to_linear(a, (8, 2), KINDS).bases["offset"]
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
    ll = convert(inner, piece, kinds)
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


#: The shared-memory kinds this module converts (joined into ``registry.KINDS``).
KINDS: tuple[LayoutKind, ...] = (
    LayoutKind("ttg.swizzled_shared", swizzled_shared_to_linear, SHARED),
    LayoutKind("ttg.nvmma_shared", nvmma_shared_to_linear, SHARED),
    LayoutKind("ttg.amd_rotating_shared", amd_rotating_shared_to_linear, SHARED,
               frozenset(triton_memory.ROTATING_KEYS)),
    LayoutKind("ttg.shared_linear", shared_linear_attr_to_linear, SHARED,
               frozenset(triton_memory.SHARED_LINEAR_KEYS)),
    LayoutKind("ttg.padded_shared", padded_shared_attr_to_map, SHARED),
    LayoutKind("ttg.partitioned_shared", partitioned_shared_to_linear, SHARED, nested=True),
    LayoutKind("ttng.tensor_memory_encoding", tmem_to_linear, SHARED, frozenset(triton_memory.TMEM_KEYS)),
    LayoutKind("ttng.tensor_memory_scales_encoding", tmem_scales_to_linear, SHARED,
               frozenset(triton_memory.TMEM_SCALES_KEYS)),
)
