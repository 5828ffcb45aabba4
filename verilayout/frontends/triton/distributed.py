"""Distributed (register) layouts: ``#ttg.blocked``, ``#ttg.slice``, ``#ttg.linear``, and the
converters that delegate to :mod:`verilayout.frontends.triton.mma` (``#ttg.nvidia_mma``,
``#ttg.dot_op``, ``#ttg.amd_mfma``, ``#ttg.amd_wmma``) and :mod:`verilayout.frontends.triton.intel`
(``#ttig.dpas``). In dims ``register, lane, warp, block``; out dims ``dim0, dim1, ...``.

>>> from verilayout.frontends.triton import parse_attr
>>> a = parse_attr("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [2], warpsPerCTA = [1], order = [0]}>")
>>> blocked_to_linear(a, (2,)).in_dims
{'register': 1, 'lane': 2, 'warp': 1, 'block': 1}
"""
from __future__ import annotations

import functools

from verilayout.errors import LayoutError
from verilayout.core.linear_layout import LinearLayout
from verilayout.core.cga import (ANY_CGA_KEYS, ensure_layout_not_larger_than, ensure_layout_not_smaller_than,
                                 identity_standard_nd_raw, standard_out_dims)
from verilayout.frontends.mlir import Attr, format_value
from verilayout.frontends.triton import intel as triton_intel, mma as triton_mma
from verilayout.frontends.triton.common import (check_cga, check_keys, combine_cga, attr_error,
                                                is_int, read_order, check_pow2s, check_rank, read_uint, read_uints,
                                                checked_linear)
from verilayout.frontends.triton.dispatch import (DISTRIBUTED, AttrKey, KindTable, LayoutKind, canonical_kind,
                                                  convert_linear, lookup_kind)


def blocked_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttg.blocked``: registers, then lanes, then warps, each in ``order``; then the CGA.

    >>> from verilayout.frontends.triton import parse_attr
    >>> a = parse_attr("#ttg.blocked<{sizePerThread = [2], threadsPerWarp = [4], warpsPerCTA = [1], order = [0]}>")
    >>> blocked_to_linear(a, (16,)).bases
    {'register': [[1], [8]], 'lane': [[2], [4]], 'warp': [], 'block': []}
    """
    keys = ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order") + ANY_CGA_KEYS
    check_keys(attr, keys, keys[:4])
    rank = len(read_uints(attr, "order"))
    check_rank(attr, rank, shape, "'order' has that many entries")
    return combine_cga(attr, _blocked_cta(AttrKey(attr)), shape)


#: A blocked layout's CTA part does not depend on the shape, and a file uses each blocked layout
#: at several shapes (128x1, 1x128, 128x128, ...): kept per attribute text, at most 1024.
@functools.lru_cache(maxsize=1024)
def _blocked_cta(handle: "AttrKey") -> LinearLayout:
    attr = handle.attr
    rank = len(read_uints(attr, "order"))
    order = read_order(attr, "order", rank)
    parts = []
    for key, in_dim in (("sizePerThread", "register"), ("threadsPerWarp", "lane"),
                        ("warpsPerCTA", "warp")):
        vals = read_uints(attr, key, rank)
        check_pow2s(attr, key, vals)
        parts.append(identity_standard_nd_raw(in_dim, vals, order))
    check_cga(attr, rank)
    return parts[0] * parts[1] * parts[2]


def _distributed_parent(attr: Attr, kinds: KindTable, key: str = "parent") -> Attr:
    parent = attr.params.get(key)
    if not isinstance(parent, Attr):
        raise attr_error(attr, key if key in attr.params else None,
                         f"'{key}' must be a layout attribute, got "
                    f"{format_value(parent) if parent is not None else 'nothing'}")
    kind = lookup_kind(parent, kinds)
    if kind.memory != DISTRIBUTED:
        raise attr_error(attr, key, f"'{key}' must be a distributed layout, not #{parent.name}")
    return parent


def slice_to_linear(attr: Attr, shape: tuple, kinds: KindTable) -> LinearLayout:
    """``#ttg.slice``: the parent at ``shape`` with 1 inserted at ``dim``, that out dim removed.

    Register bases that become zero are dropped (Triton's "duplicate registers"
    fix-up); lane and warp bases stay, zero or not.

    >>> from verilayout.frontends.triton import parse_attr
    >>> p = "#ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]}>"
    >>> from verilayout.frontends.triton.registry import KINDS
    >>> slice_to_linear(parse_attr(f"#ttg.slice<{{dim = 0, parent = {p}}}>"), (16,), KINDS).bases
    {'register': [[1]], 'lane': [[2], [4], [8], [0], [0]], 'warp': [], 'block': []}
    """
    check_keys(attr, ("dim", "parent"), ("dim", "parent"))
    dim = read_uint(attr, "dim")
    parent = _distributed_parent(attr, kinds)
    if dim > len(shape):
        raise attr_error(attr, "dim", f"'dim' = {dim} is out of range for a parent of rank {len(shape) + 1}")
    parent_shape = tuple(shape[:dim]) + (1,) + tuple(shape[dim:])
    pll = convert_linear(parent, parent_shape, kinds)
    names = standard_out_dims(len(shape) + 1)
    if pll.out_dim_names != names:
        pll = pll.transpose_outs(names)
    new_bases = {}
    for in_dim, blist in pll.bases.items():
        rows = [b[:dim] + b[dim + 1:] for b in blist]
        if in_dim == "register":
            rows = [b for b in rows if any(b)]
        new_bases[in_dim] = rows
    try:
        return LinearLayout(new_bases, standard_out_dims(len(shape)))
    except LayoutError as e:
        raise attr_error(attr, None, f"slice of #{parent.name}: {e}") from None


def _bases_list(attr: Attr, key: str) -> list[list[int]]:
    v = attr.params.get(key)
    if v is None:
        raise attr_error(attr, None, f"#{attr.name} is missing the key '{key}' (an array of bases)")
    if not isinstance(v, list) or not all(isinstance(b, list) for b in v):
        raise attr_error(attr, key, f"'{key}' must be an array of arrays of integers")
    for i, b in enumerate(v):
        for x in b:
            if not is_int(x) or x < 0:
                raise attr_error(attr, key, f"'{key}' basis {i} has {format_value(x)}; "
                                            "bases hold non-negative integers")
    return [list(b) for b in v]


def _permutation_checked(attr: Attr, bases: dict, swizzled_ok: tuple = ()) -> None:
    """Triton 3.9's ``LinearEncodingAttr`` verifier: with the zero (broadcast) bases removed, the
    bases form a permutation matrix: each moves by one power of two in one dim, no two alike.
    ``#ttg.generic_linear`` relaxes it (``swizzled_ok = ("warp",)``): its warp bases may move in
    several dims, and bases may repeat (it need not be bijective)."""
    seen: dict[tuple, str] = {}
    why = "Triton refuses it too: LinearEncodingAttr requires a permutation matrix layout after " \
          "removing broadcast bases"
    for k, blist in bases.items():
        for i, b in enumerate(blist):
            nz = [x for x in b if x]
            if not nz or k in swizzled_ok:
                continue
            if len(nz) > 1:
                raise attr_error(attr, k, f"'{k}' basis {i} = {b} moves in more than one dimension; {why}")
            if nz[0] & (nz[0] - 1):
                raise attr_error(attr, k, f"'{k}' basis {i} = {b} moves by more than one power of two; {why}")
            if tuple(b) in seen and not swizzled_ok:
                raise attr_error(attr, k, f"'{k}' basis {i} = {b} repeats {seen[tuple(b)]}; {why}")
            seen[tuple(b)] = f"'{k}' basis {i}"


def linear_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttg.linear``: the bases as written, repeated or broadcast to ``shape``.

    The out dims are ordered by ``order`` when the attribute has one (Triton 3.9 reads the key),
    else by first appearance in the register bases (the rest by ``rank-1, ..., 0``); a too-small
    layout repeats in registers, a too-large one drops its largest register bases and zeroes its
    largest lane/warp bases.

    >>> from verilayout.frontends.triton import parse_attr
    >>> a = parse_attr("#ttg.linear<{register = [[1]], lane = [[2]], warp = [], block = []}>")
    >>> linear_to_linear(a, (8,)).bases
    {'register': [[1], [4]], 'lane': [[2]], 'warp': [], 'block': []}
    """
    return _linear_like(attr, shape, ())


def generic_linear_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttg.generic_linear``: as ``#ttg.linear``, but its warp bases may move in several dims
    and the layout need not be bijective (Triton's ``GenericLinearEncodingAttr``).

    >>> from verilayout.frontends.triton import parse_attr
    >>> a = parse_attr("#ttg.generic_linear<{register = [[1, 0]], lane = [[0, 1]], warp = [[1, 1]], block = []}>")
    >>> generic_linear_to_linear(a, (2, 2)).bases["warp"]
    [[1, 1]]
    """
    return _linear_like(attr, shape, ("warp",))


def _linear_order(attr: Attr, bases: dict, rank: int) -> list[int]:
    """The out-dim order: ``order`` when given (a permutation of the dims), else by register bases."""
    if "order" in attr.params:
        return read_order(attr, "order", rank)
    order: list[int] = []
    for b in bases["register"]:
        nz = [d for d, x in enumerate(b) if x]
        if nz and nz[0] not in order:
            order.append(nz[0])
    return order + [d for d in reversed(range(rank)) if d not in order]


def _linear_like(attr: Attr, shape: tuple, swizzled_ok: tuple) -> LinearLayout:
    ins = ("register", "lane", "warp", "block")
    check_keys(attr, ins + ("order",), ins)
    bases = {k: _bases_list(attr, k) for k in ins}
    rank = next((len(b[0]) for b in bases.values() if b), 0)
    if rank == 0:
        raise attr_error(attr, None, f"an empty #{attr.name} layout has no rank; give at least one basis")
    for k, blist in bases.items():
        for i, b in enumerate(blist):
            if len(b) != rank:
                raise attr_error(attr, k, f"'{k}' basis {i} has {len(b)} entries; expected {rank}")
    _permutation_checked(attr, bases, swizzled_ok)
    check_rank(attr, rank, shape, "its bases have that many entries")
    names = standard_out_dims(rank)
    try:
        ll = LinearLayout(bases, names)
    except LayoutError as e:
        raise attr_error(attr, None, f"#{attr.name}: {e}") from None
    permuted = [names[d] for d in _linear_order(attr, bases, rank)]
    named = {names[d]: shape[d] for d in range(rank)}
    try:
        ll = ll.transpose_outs(permuted)
        ll = ensure_layout_not_smaller_than(ll, named)
        ll = ensure_layout_not_larger_than(ll, named, broadcast_registers=False)
    except LayoutError as e:
        raise attr_error(attr, None, str(e)) from None
    return ll.transpose_outs(names)


def nvidia_mma_attr_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttg.nvidia_mma`` (v2, v3): delegated to ``triton_mma.nvidia_mma_to_linear``."""
    return checked_linear(attr, lambda: triton_mma.nvidia_mma_to_linear(attr.params, shape))


def dot_op_attr_to_linear(attr: Attr, shape: tuple, kinds: KindTable) -> LinearLayout:
    """``#ttg.dot_op``: delegated to ``triton_mma.dot_op_to_linear`` with the parsed parent (its
    kind from ``kinds``)."""
    parent = _distributed_parent(attr, kinds)
    parent = Attr(canonical_kind(parent.name), parent.params, parent.pos, parent.key_pos,
                  parent.alias, parent.body)
    if parent.name == "ttig.dpas":
        return checked_linear(attr, lambda: triton_intel.dot_op_dpas_to_linear(attr.params, parent, shape))
    return checked_linear(attr, lambda: triton_mma.dot_op_to_linear(
        attr.params, parent, shape, parent_to_linear=lambda a, sh: convert_linear(a, sh, kinds)))


def amd_mfma_attr_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttg.amd_mfma``: delegated to ``triton_mma.amd_mfma_to_linear``."""
    return checked_linear(attr, lambda: triton_mma.amd_mfma_to_linear(attr.params, shape))


def amd_wmma_attr_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttg.amd_wmma``: delegated to ``triton_mma.amd_wmma_to_linear``."""
    return checked_linear(attr, lambda: triton_mma.amd_wmma_to_linear(attr.params, shape))


def dpas_attr_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttig.dpas`` / ``#triton_intel_gpu.dpas``: delegated to ``triton_intel``."""
    return checked_linear(attr, lambda: triton_intel.dpas_to_linear(attr.params, shape))


def subgroup_2d_block_attr_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttig.subgroup_2d_block``: delegated to ``triton_intel``."""
    return checked_linear(attr, lambda: triton_intel.subgroup_2d_block_to_linear(attr.params, shape))


#: The distributed kinds this module converts (joined into ``registry.KINDS``).
KINDS: tuple[LayoutKind, ...] = (
    LayoutKind("ttg.blocked", blocked_to_linear),
    LayoutKind("ttg.slice", slice_to_linear, nested=True),
    LayoutKind("ttg.linear", linear_to_linear),
    LayoutKind("ttg.generic_linear", generic_linear_to_linear),
    LayoutKind("ttg.nvidia_mma", nvidia_mma_attr_to_linear),
    LayoutKind("ttg.dot_op", dot_op_attr_to_linear, nested=True),
    LayoutKind("ttg.amd_mfma", amd_mfma_attr_to_linear),
    LayoutKind("ttg.amd_wmma", amd_wmma_attr_to_linear),
    LayoutKind("ttig.dpas", dpas_attr_to_linear, keys=frozenset(triton_intel.DPAS_KEYS)),
    LayoutKind("ttig.subgroup_2d_block", subgroup_2d_block_attr_to_linear,
               keys=frozenset(triton_intel.SUBGROUP_2D_BLOCK_KEYS)),
)
