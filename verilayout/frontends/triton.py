"""Triton layouts from their MLIR text, converted the way Triton 3.9 converts them.

``parse`` accepts an attribute (``#ttg.blocked<{...}>``), a full type
(``tensor<64x64xf16, #...>``, ``!ttg.memdesc<...>``), or a TTGIR file with
``#name = ...`` alias lines, and returns the :class:`~verilayout.core.linear_layout.LinearLayout`
Triton computes: distributed layouts have in dims ``register, lane, warp, block``,
shared layouts ``offset, block``; out dims are ``dim0, dim1, ...``.

>>> L = parse("tensor<32x32xf16, #ttg.blocked<{sizePerThread = [2, 2], threadsPerWarp = [8, 4], "
...           "warpsPerCTA = [1, 2], order = [1, 0]}>>")
>>> L.in_dims, L.out_dims
({'register': 16, 'lane': 32, 'warp': 2, 'block': 1}, {'dim0': 32, 'dim1': 32})

Text that is not MLIR goes to the CuTe reader (``verilayout.cute.parse_cute``).

Layout kinds live in a registry; another front-end adds one with
:func:`register_layout_kind` (``fn(attr, shape) -> LinearLayout``).
"""
from __future__ import annotations


import functools
import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from verilayout.errors import LayoutError
from verilayout.core.linear_layout import LinearLayout
from verilayout.core import cga as _cga
from verilayout.core.cga import combine_cta_cga_with_shape, ensure_layout_not_larger_than, ensure_layout_not_smaller_than, identity_standard_nd_raw, make_cga_layout, standard_out_dims
from verilayout.frontends.mlir import Attr, Scanner, TensorType, format_value, parse_aliases, parse_value
from verilayout.core import cute
from verilayout.frontends import triton_intel, triton_memory, triton_mma
from verilayout.hw.nvidia.banks import SharedAddressMap
from verilayout.frontends.triton_intel import DPAS_KEYS

__all__ = ["parse", "parse_attr", "format_attr", "attr_to_linear", "attr_to_layout", "type_to_layout",
           "memdesc_view_layout", "memdesc_buffers", "shared_rank", "register_layout_kind",
           "registered_kinds", "format_hardware_view", "format_tensor_view", "LayoutKind"]

Converter = Callable[[Attr, tuple], LinearLayout]

DISTRIBUTED = "distributed"
SHARED = "shared"


@dataclass(frozen=True)
class LayoutKind:
    """A registered layout kind: its converter and whether it is a register or a shared layout."""

    name: str
    fn: Converter
    memory: str = DISTRIBUTED
    keys: frozenset | None = None


_REGISTRY: dict[str, LayoutKind] = {}

#: Dialect spellings that mean the same dialect.
_DIALECT_ALIASES = {"triton_gpu": "ttg", "triton_intel_gpu": "ttig", "triton_nvidia_gpu": "ttng"}

#: Triton kinds this module knows of but has no converter for (unless one is registered).
_KNOWN_UNSUPPORTED = (
    "ttg.partitioned_shared", "ttg.shared", "ttg.nvmma_shared_tma", "ttig.dpas", "ttig.warp",
    "ttig.subgroup_2d_block",
)


def canonical_kind(name: str) -> str:
    """``triton_gpu.blocked`` -> ``ttg.blocked``; ``triton_intel_gpu.dpas`` -> ``ttig.dpas``.

    >>> canonical_kind("triton_gpu.slice")
    'ttg.slice'
    """
    if "." not in name:
        return name
    d, k = name.split(".", 1)
    return f"{_DIALECT_ALIASES.get(d, d)}.{k}"


def register_layout_kind(name: str, fn: Converter, *, memory: str = DISTRIBUTED,
                         keys: Sequence[str] | None = None) -> None:
    """Register a converter ``fn(attr, shape) -> LinearLayout`` for ``#<name><{...}>``.

    ``memory`` is ``"distributed"`` (register layouts, in a ``tensor<>``) or
    ``"shared"`` (in a ``!ttg.memdesc<>``). ``keys``, when given, are the only
    parameter names accepted (others are positioned errors before ``fn`` runs).

    >>> register_layout_kind("test.ident", lambda a, s: LinearLayout.identity1D(s[0], "register", "dim0"))
    >>> parse("#test.ident", shape=[4]).bases
    {'register': [[1], [2]]}
    """
    if memory not in (DISTRIBUTED, SHARED):
        raise LayoutError(f"memory must be 'distributed' or 'shared', not {memory!r}")
    full = canonical_kind(name.lstrip("#"))
    _REGISTRY[full] = LayoutKind(full, fn, memory, frozenset(keys) if keys is not None else None)
    if "_convert_cached" in globals():   # the built-ins register before the cache exists
        _convert_cached.cache_clear()


def registered_kinds() -> list[str]:
    """Names of the layout kinds with a converter.

    >>> "ttg.blocked" in registered_kinds()
    True
    """
    return sorted(_REGISTRY)


# ----------------------------------------------------------------------------
# parameter helpers
# ----------------------------------------------------------------------------

def _fail(attr: Attr, key: str | None, msg: str) -> LayoutError:
    return LayoutError(f"{attr.where(key)}: {msg}")


def _check_keys(attr: Attr, allowed: Sequence[str], required: Sequence[str] = ()) -> None:
    for k in attr.params:
        if k not in allowed:
            raise _fail(attr, k, f"unknown key '{k}' for #{attr.name} "
                                 f"(known: {', '.join(allowed)})")
    for k in required:
        if k not in attr.params:
            raise _fail(attr, None, f"#{attr.name} is missing the key '{k}'")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _uint(attr: Attr, key: str, default: int | None = None) -> int:
    if key not in attr.params:
        if default is None:
            raise _fail(attr, None, f"#{attr.name} is missing the key '{key}'")
        return default
    v = attr.params[key]
    if not _is_int(v) or v < 0:
        raise _fail(attr, key, f"'{key}' must be an unsigned integer, got {format_value(v)}")
    return v


def _bool(attr: Attr, key: str, default: bool | None = None) -> bool:
    if key not in attr.params:
        if default is None:
            raise _fail(attr, None, f"#{attr.name} is missing the key '{key}'")
        return default
    v = attr.params[key]
    if not isinstance(v, bool):
        raise _fail(attr, key, f"'{key}' must be true or false, got {format_value(v)}")
    return v


def _uints(attr: Attr, key: str, rank: int | None = None) -> list[int]:
    v = attr.params.get(key)
    if v is None:
        raise _fail(attr, None, f"#{attr.name} is missing the key '{key}'")
    if not isinstance(v, list) or not all(_is_int(x) and x >= 0 for x in v):
        raise _fail(attr, key, f"'{key}' must be a list of unsigned integers, got {format_value(v)}")
    if rank is not None and len(v) != rank:
        raise _fail(attr, key, f"'{key}' has {len(v)} entries; expected {rank} (the rank)")
    return list(v)


def _pow2s(attr: Attr, key: str, values: Sequence[int]) -> None:
    for i, v in enumerate(values):
        if v <= 0 or v & (v - 1):
            raise _fail(attr, key, f"'{key}'[{i}] = {v} is not a power of two")


def _order(attr: Attr, key: str, rank: int) -> list[int]:
    order = _uints(attr, key, rank)
    if sorted(order) != list(range(rank)):
        raise _fail(attr, key, f"'{key}' = {order} is not a permutation of 0..{rank - 1}")
    return order


def _rank_matches(attr: Attr, rank: int, shape: tuple, what: str) -> None:
    if rank != len(shape):
        raise _fail(attr, None, f"#{attr.name} has rank {rank} ({what}) but the tensor shape "
                                f"{list(shape)} has rank {len(shape)}")


def _cga_checked(attr: Attr, rank: int) -> None:
    """Validate the CGA keys now, so errors carry the key's position."""
    key = next((k for k in ("CGALayout",) + _cga.OLD_CGA_KEYS if k in attr.params), None)
    try:
        make_cga_layout(attr.params, rank)
    except LayoutError as e:
        raise _fail(attr, key, str(e)) from None


def _combine(attr: Attr, cta: LinearLayout, shape: tuple) -> LinearLayout:
    try:
        return combine_cta_cga_with_shape(cta, attr.params, shape)
    except LayoutError as e:
        raise _fail(attr, None, str(e)) from None


def _cga_split(attr: Attr, rank: int) -> list[int]:
    cga = make_cga_layout(attr.params, rank)
    return [cga.out_dim_size(n) for n in standard_out_dims(rank)]


def _shape_per_cta(attr: Attr, shape: tuple) -> list[int]:
    """Triton's ``getShapePerCTA``: ``shape[d] / min(shape[d], split[d])``."""
    split = _cga_split(attr, len(shape))
    return [s // min(s, n) for s, n in zip(shape, split)]


# ----------------------------------------------------------------------------
# conversions: distributed
# ----------------------------------------------------------------------------

_CGA_KEYS = ("CGALayout",) + _cga.OLD_CGA_KEYS


def blocked_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttg.blocked``: registers, then lanes, then warps, each in ``order``; then the CGA.

    >>> a = parse_attr("#ttg.blocked<{sizePerThread = [2], threadsPerWarp = [4], warpsPerCTA = [1], order = [0]}>")
    >>> blocked_to_linear(a, (16,)).bases
    {'register': [[1], [8]], 'lane': [[2], [4]], 'warp': [], 'block': []}
    """
    keys = ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order") + _CGA_KEYS
    _check_keys(attr, keys, keys[:4])
    rank = len(_uints(attr, "order"))
    _rank_matches(attr, rank, shape, "'order' has that many entries")
    return _combine(attr, _blocked_cta(_AttrKey(attr)), shape)


#: A blocked layout's CTA part does not depend on the shape, and a file uses each blocked layout
#: at several shapes (128x1, 1x128, 128x128, ...): kept per attribute text, at most 1024.
@functools.lru_cache(maxsize=1024)
def _blocked_cta(handle: "_AttrKey") -> LinearLayout:
    attr = handle.attr
    rank = len(_uints(attr, "order"))
    order = _order(attr, "order", rank)
    parts = []
    for key, in_dim in (("sizePerThread", "register"), ("threadsPerWarp", "lane"),
                        ("warpsPerCTA", "warp")):
        vals = _uints(attr, key, rank)
        _pow2s(attr, key, vals)
        parts.append(identity_standard_nd_raw(in_dim, vals, order))
    _cga_checked(attr, rank)
    return parts[0] * parts[1] * parts[2]


def _distributed_parent(attr: Attr, key: str = "parent") -> Attr:
    parent = attr.params.get(key)
    if not isinstance(parent, Attr):
        raise _fail(attr, key if key in attr.params else None,
                    f"'{key}' must be a layout attribute, got "
                    f"{format_value(parent) if parent is not None else 'nothing'}")
    kind = _lookup(parent)
    if kind.memory != DISTRIBUTED:
        raise _fail(attr, key, f"'{key}' must be a distributed layout, not #{parent.name}")
    return parent


def slice_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttg.slice``: the parent at ``shape`` with 1 inserted at ``dim``, that out dim removed.

    Register bases that become zero are dropped (Triton's "duplicate registers"
    fix-up); lane and warp bases stay, zero or not.

    >>> p = "#ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]}>"
    >>> slice_to_linear(parse_attr(f"#ttg.slice<{{dim = 0, parent = {p}}}>"), (16,)).bases
    {'register': [[1]], 'lane': [[2], [4], [8], [0], [0]], 'warp': [], 'block': []}
    """
    _check_keys(attr, ("dim", "parent"), ("dim", "parent"))
    dim = _uint(attr, "dim")
    parent = _distributed_parent(attr)
    if dim > len(shape):
        raise _fail(attr, "dim", f"'dim' = {dim} is out of range for a parent of rank {len(shape) + 1}")
    parent_shape = tuple(shape[:dim]) + (1,) + tuple(shape[dim:])
    pll = attr_to_linear(parent, parent_shape)
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
        raise _fail(attr, None, f"slice of #{parent.name}: {e}") from None


def _bases_list(attr: Attr, key: str) -> list[list[int]]:
    v = attr.params.get(key)
    if v is None:
        raise _fail(attr, None, f"#{attr.name} is missing the key '{key}' (an array of bases)")
    if not isinstance(v, list) or not all(isinstance(b, list) for b in v):
        raise _fail(attr, key, f"'{key}' must be an array of arrays of integers")
    for i, b in enumerate(v):
        for x in b:
            if not _is_int(x) or x < 0:
                raise _fail(attr, key, f"'{key}' basis {i} has {format_value(x)}; "
                                       "bases hold non-negative integers")
    return [list(b) for b in v]


def _permutation_checked(attr: Attr, bases: dict) -> None:
    """Triton 3.9's ``LinearEncodingAttr`` verifier: with the zero (broadcast) bases removed, the
    bases form a permutation matrix: each moves by one power of two in one dim, no two alike."""
    seen: dict[tuple, str] = {}
    why = "Triton refuses it too: LinearEncodingAttr requires a permutation matrix layout after " \
          "removing broadcast bases"
    for k, blist in bases.items():
        for i, b in enumerate(blist):
            nz = [x for x in b if x]
            if not nz:
                continue
            if len(nz) > 1:
                raise _fail(attr, k, f"'{k}' basis {i} = {b} moves in more than one dimension; {why}")
            if nz[0] & (nz[0] - 1):
                raise _fail(attr, k, f"'{k}' basis {i} = {b} moves by more than one power of two; {why}")
            if tuple(b) in seen:
                raise _fail(attr, k, f"'{k}' basis {i} = {b} repeats {seen[tuple(b)]}; {why}")
            seen[tuple(b)] = f"'{k}' basis {i}"


def linear_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttg.linear``: the bases as written, repeated or broadcast to ``shape``.

    The out dims are ordered by first appearance in the register bases (the rest
    by ``rank-1, ..., 0``); a too-small layout repeats in registers, a too-large one
    drops its largest register bases and zeroes its largest lane/warp bases.

    >>> a = parse_attr("#ttg.linear<{register = [[1]], lane = [[2]], warp = [], block = []}>")
    >>> linear_to_linear(a, (8,)).bases
    {'register': [[1], [4]], 'lane': [[2]], 'warp': [], 'block': []}
    """
    ins = ("register", "lane", "warp", "block")
    _check_keys(attr, ins, ins)
    bases = {k: _bases_list(attr, k) for k in ins}
    rank = next((len(b[0]) for b in bases.values() if b), 0)
    if rank == 0:
        raise _fail(attr, None, "an empty #ttg.linear layout has no rank; give at least one basis")
    for k, blist in bases.items():
        for i, b in enumerate(blist):
            if len(b) != rank:
                raise _fail(attr, k, f"'{k}' basis {i} has {len(b)} entries; expected {rank}")
    _permutation_checked(attr, bases)
    _rank_matches(attr, rank, shape, "its bases have that many entries")
    names = standard_out_dims(rank)
    try:
        ll = LinearLayout(bases, names)
    except LayoutError as e:
        raise _fail(attr, None, f"#ttg.linear: {e}") from None
    order: list[int] = []
    for b in bases["register"]:
        nz = [d for d, x in enumerate(b) if x]
        if nz and nz[0] not in order:
            order.append(nz[0])
    order += [d for d in reversed(range(rank)) if d not in order]
    permuted = [names[d] for d in order]
    named = {names[d]: shape[d] for d in range(rank)}
    try:
        ll = ll.transpose_outs(permuted)
        ll = ensure_layout_not_smaller_than(ll, named)
        ll = ensure_layout_not_larger_than(ll, named, broadcast_registers=False)
    except LayoutError as e:
        raise _fail(attr, None, str(e)) from None
    return ll.transpose_outs(names)


def _b_module():
    return triton_mma


def _wrap_b(attr: Attr, call: Callable[[], LinearLayout]) -> LinearLayout:
    try:
        out = call()
    except LayoutError as e:
        msg = str(e)
        if re.match(r"line \d+, col \d+:", msg):
            raise
        key = next((k for k in attr.params if f"'{k}'" in msg), None)
        raise _fail(attr, key, msg) from None
    if not isinstance(out, LinearLayout):
        raise LayoutError(f"{attr.where()}: converter for #{attr.name} returned {type(out).__name__}")
    return out


def _nvidia_mma_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttg.nvidia_mma`` (v2, v3): delegated to ``triton_mma.nvidia_mma_to_linear``."""
    return _wrap_b(attr, lambda: _b_module().nvidia_mma_to_linear(attr.params, shape))


def _dot_op_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttg.dot_op``: delegated to ``triton_mma.dot_op_to_linear`` with the parsed parent."""
    parent = _distributed_parent(attr)
    parent = Attr(canonical_kind(parent.name), parent.params, parent.pos, parent.key_pos,
                  parent.alias, parent.body)
    if parent.name == "ttig.dpas":
        return _wrap_b(attr, lambda: triton_intel.dot_op_dpas_to_linear(attr.params, parent, shape))
    return _wrap_b(attr, lambda: _b_module().dot_op_to_linear(
        attr.params, parent, shape, parent_to_linear=attr_to_linear))


def _amd_mfma_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttg.amd_mfma``: delegated to ``triton_mma.amd_mfma_to_linear``."""
    return _wrap_b(attr, lambda: _b_module().amd_mfma_to_linear(attr.params, shape))


def _amd_wmma_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttg.amd_wmma``: delegated to ``triton_mma.amd_wmma_to_linear``."""
    return _wrap_b(attr, lambda: _b_module().amd_wmma_to_linear(attr.params, shape))


# ----------------------------------------------------------------------------
# conversions: shared
# ----------------------------------------------------------------------------

def swizzled_shared_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttg.swizzled_shared`` (seed 004's table): row ``r`` XORs ``vec*((r/perPhase)%maxPhase)``.

    >>> a = parse_attr("#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 4, order = [1, 0]}>")
    >>> swizzled_shared_to_linear(a, (4, 8)).bases["offset"]
    [[0, 1], [0, 2], [0, 4], [1, 2], [2, 4]]
    """
    return _swizzled(attr, shape)


def _swizzled(attr: Attr, shape: tuple) -> LinearLayout:
    keys = ("vec", "perPhase", "maxPhase", "order") + _CGA_KEYS
    _check_keys(attr, keys, keys[:4])
    vec, per_phase, max_phase = (_uint(attr, k) for k in ("vec", "perPhase", "maxPhase"))
    rank = len(_uints(attr, "order"))
    _rank_matches(attr, rank, shape, "'order' has that many entries")
    order = _order(attr, "order", rank)
    if per_phase == 0:
        raise _fail(attr, "perPhase", "'perPhase' must be positive")
    if max_phase == 0:
        raise _fail(attr, "maxPhase", "'maxPhase' must be positive")
    _cga_checked(attr, rank)
    per_cta = _shape_per_cta(attr, shape)
    names = standard_out_dims(rank)
    if rank == 1:
        return _combine(attr, LinearLayout.identity1D(per_cta[0], "offset", "dim0"), shape)
    col, row = order[0], order[1]
    ncols, nrows = per_cta[col], per_cta[row]
    bases = [[0, c] for c in _powers_below(ncols)]
    bases += [[r, (vec * ((r // per_phase) % max_phase)) % ncols] for r in _powers_below(nrows)]
    try:
        cta = LinearLayout({"offset": bases}, [names[row], names[col]])
    except LayoutError as e:
        raise _fail(attr, None, f"swizzle (vec={vec}, perPhase={per_phase}, "
                                f"maxPhase={max_phase}) is not linear here: {e}") from None
    for d in order[2:]:
        cta = cta * LinearLayout.identity1D(per_cta[d], "offset", names[d])
    return _combine(attr, cta, shape)


def _powers_below(n: int) -> list[int]:
    out, p = [], 1
    while p < n:
        out.append(p)
        p *= 2
    return out


def _tma_block_shape(attr: Attr, per_cta: list[int], bits: int, swizzle: int, fp4: bool,
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
            raise _fail(attr, "swizzlingByteWidth",
                        f"Triton refuses it too: the block is {block[contig]} elements along its "
                        f"contiguous dim, less than the {need} a {swizzle}-byte swizzle of "
                        f"{bits}-bit elements needs")
        block[contig] = need
    if fp4:
        block[contig] //= 2
    return block


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


def _nvmma_rank(attr: Attr) -> int:
    """An nvmma_shared attribute's rank: its ``rank`` key (Triton 3.9 prints it for rank != 2),
    else its CGA's, else 2 (Triton's default CGA is 2-d)."""
    if "rank" in attr.params:
        r = _uint(attr, "rank")
        if r < 1:
            raise _fail(attr, "rank", "'rank' must be at least 1")
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

    >>> a = parse_attr("#ttg.nvmma_shared<{swizzlingByteWidth = 32, transposed = false, elementBitWidth = 16}>")
    >>> nvmma_shared_to_linear(a, (8, 16)).bases["offset"][4:]
    [[1, 0], [2, 0], [4, 8]]
    """
    keys = ("swizzlingByteWidth", "transposed", "elementBitWidth", "fp4Padded", "rank") + _CGA_KEYS
    _check_keys(attr, keys, ("swizzlingByteWidth", "elementBitWidth"))
    swizzle = _uint(attr, "swizzlingByteWidth")
    bits = _uint(attr, "elementBitWidth")
    transposed = _bool(attr, "transposed", False)
    fp4 = _bool(attr, "fp4Padded", False)
    if swizzle not in (0, 32, 64, 128):
        raise _fail(attr, "swizzlingByteWidth", f"'swizzlingByteWidth' = {swizzle}; expected 0, "
                                                "32, 64 or 128")
    if bits not in (8, 16, 32, 64):
        raise _fail(attr, "elementBitWidth", f"'elementBitWidth' = {bits}; expected 8, 16, 32 or 64")
    if fp4 and (swizzle != 128 or bits != 8):
        raise _fail(attr, "fp4Padded", "'fp4Padded' needs swizzlingByteWidth = 128 and "
                                       "elementBitWidth = 8")
    rank = _nvmma_rank(attr)
    _rank_matches(attr, rank, shape, "set by its CGA layout; 2 when it has none")
    _cga_checked(attr, rank)
    per_cta = _shape_per_cta(attr, shape)
    names = standard_out_dims(rank)
    tma = _tma_block_shape(attr, per_cta, bits, swizzle, fp4, transposed)
    if swizzle == 0:
        if transposed and rank > 2:
            raise _fail(attr, "transposed", "a transposed #ttg.nvmma_shared without swizzling "
                                            "and rank > 2 is not supported here (Triton 3.9's "
                                            "layout for it is not reproduced)")
        ll = LinearLayout.empty()
        for d in ([0] + list(range(rank - 1, 0, -1)) if transposed else reversed(range(rank))):
            ll = ll * LinearLayout.identity1D(tma[d], "offset", names[d])
        ll = ll.transpose_outs(names[::-1])  # the repeat below grows dim{rank-1} first
        ll = ensure_layout_not_smaller_than(ll, dict(zip(names, per_cta)))
        return _combine(attr, ll, shape)
    if rank < 2:
        raise _fail(attr, None, "a swizzled #ttg.nvmma_shared layout needs rank >= 2")
    collapsed = [1, tma[-1]]
    for s in tma[:-1]:
        collapsed[0] *= s
    if transposed:
        collapsed.reverse()
    tile = _nvmma_core(attr, bits, swizzle, fp4)
    rows, cols = tile.out_dim_size("dim0"), tile.out_dim_size("dim1")
    packing = 2 if fp4 else 1
    if collapsed[1] * packing < cols or collapsed[0] < rows:
        raise _fail(attr, None, f"Triton refuses it too: shape per CTA {per_cta} is smaller than "
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
    ll = ensure_layout_not_smaller_than(ll, dict(zip(names, per_cta)))
    return _combine(attr, ll, shape)


def _register_builtins() -> None:
    reg = register_layout_kind
    reg("ttg.blocked", blocked_to_linear)
    reg("ttg.slice", slice_to_linear)
    reg("ttg.linear", linear_to_linear)
    reg("ttg.nvidia_mma", _nvidia_mma_to_linear)
    reg("ttg.dot_op", _dot_op_to_linear)
    reg("ttg.amd_mfma", _amd_mfma_to_linear)
    reg("ttg.amd_wmma", _amd_wmma_to_linear)
    reg("ttg.swizzled_shared", swizzled_shared_to_linear, memory=SHARED)
    reg("ttg.nvmma_shared", nvmma_shared_to_linear, memory=SHARED)
    reg("ttig.dpas", _dpas_to_linear, keys=DPAS_KEYS)
    reg("ttg.amd_rotating_shared", amd_rotating_shared_to_linear, memory=SHARED,
        keys=triton_memory.ROTATING_KEYS)
    reg("ttg.shared_linear", _shared_linear_to_linear, memory=SHARED,
        keys=triton_memory.SHARED_LINEAR_KEYS)
    reg("ttg.padded_shared", _padded_shared_to_map, memory=SHARED)
    reg("ttng.tensor_memory_encoding", _tmem_to_linear, memory=SHARED, keys=triton_memory.TMEM_KEYS)
    reg("ttng.tensor_memory_scales_encoding", _tmem_scales_to_linear, memory=SHARED,
        keys=triton_memory.TMEM_SCALES_KEYS)


def amd_rotating_shared_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttg.amd_rotating_shared`` (gfx942): delegated to ``triton_memory.amd_rotating_to_linear``.

    >>> a = parse_attr("#ttg.amd_rotating_shared<{vec = 1, perPhase = 1, maxPhase = 2, order = [1, 0]}>")
    >>> amd_rotating_shared_to_linear(a, (8, 2)).bases["offset"]
    [[0, 1], [1, 1], [2, 1], [4, 0]]
    """
    _check_keys(attr, triton_memory.ROTATING_KEYS, ("vec", "perPhase", "maxPhase", "order"))
    rank = len(_uints(attr, "order"))
    _rank_matches(attr, rank, shape, "'order' has that many entries")
    order = _order(attr, "order", rank)
    _cga_checked(attr, rank)
    return _wrap_b(attr, lambda: triton_memory.amd_rotating_to_linear(attr.params, shape, order))


def _shared_linear_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttg.shared_linear``: delegated to ``triton_memory.shared_linear_to_linear``."""
    return _wrap_b(attr, lambda: triton_memory.shared_linear_to_linear(attr.params, shape))


def _tmem_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttng.tensor_memory_encoding``: delegated to ``triton_memory.tensor_memory_to_linear``."""
    return _wrap_b(attr, lambda: triton_memory.tensor_memory_to_linear(attr.params, shape))


def _tmem_scales_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttng.tensor_memory_scales_encoding``: ``triton_memory.tensor_memory_scales_to_linear``."""
    return _wrap_b(attr, lambda: triton_memory.tensor_memory_scales_to_linear(attr.params, shape))


def _padded_shared_to_map(attr: Attr, shape: tuple) -> SharedAddressMap:
    """``#ttg.padded_shared``: an address map (not GF(2)-linear), ``triton_memory.padded_shared_to_map``."""
    try:
        return triton_memory.padded_shared_to_map(attr.body, shape, format_value(attr))
    except LayoutError as e:
        raise _fail(attr, None, str(e)) from None


def _dpas_to_linear(attr: Attr, shape: tuple) -> LinearLayout:
    """``#ttig.dpas`` / ``#triton_intel_gpu.dpas``: delegated to ``triton_intel``."""
    return _wrap_b(attr, lambda: triton_intel.dpas_to_linear(attr.params, shape))


_register_builtins()


# ----------------------------------------------------------------------------
# dispatch
# ----------------------------------------------------------------------------

def _lookup(attr: Attr) -> LayoutKind:
    name = canonical_kind(attr.name)
    kind = _REGISTRY.get(name)
    if kind is not None:
        return kind
    if name in _KNOWN_UNSUPPORTED:
        raise _fail(attr, None, f"#{attr.name} is not supported here (no converter registered; "
                                f"supported: {', '.join('#' + k for k in registered_kinds())})")
    if name == "ttg.shared_memory":
        raise _fail(attr, None, "#ttg.shared_memory is a memory space, not a layout")
    raise _fail(attr, None, f"unknown layout kind #{attr.name} "
                            f"(supported: {', '.join('#' + k for k in registered_kinds())})")


def _check_shape(shape: Any, where: str) -> tuple:
    if isinstance(shape, (str, bytes)) or not isinstance(shape, Sequence):
        raise LayoutError(f"{where}: shape must be a list of sizes, got {shape!r}")
    out = []
    for i, s in enumerate(shape):
        if not _is_int(s) or s <= 0:
            raise LayoutError(f"{where}: shape {list(shape)}: dim {i} has size {s!r}; sizes are "
                              "positive integers")
        if s & (s - 1):
            raise LayoutError(f"{where}: shape {list(shape)}: dim {i} has size {s}, not a power "
                              "of two (a linear layout needs powers of two)")
        out.append(int(s))
    if not out:
        raise LayoutError(f"{where}: shape is empty; a layout needs rank >= 1")
    return tuple(out)


def attr_to_linear(attr: Attr, shape: Sequence[int]) -> LinearLayout:
    """The linear layout Triton computes for a parsed attribute at ``shape``; a layout that is not
    GF(2)-linear (``#ttg.padded_shared``) raises ``LayoutError`` (use :func:`attr_to_layout`).

    >>> a = parse_attr("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [4], warpsPerCTA = [2], order = [0]}>")
    >>> attr_to_linear(a, [4]).bases
    {'register': [], 'lane': [[1], [2]], 'warp': [[0]], 'block': []}
    """
    out = attr_to_layout(attr, shape)
    if not isinstance(out, LinearLayout):
        raise _fail(attr, None, f"#{attr.name} is not GF(2)-linear (padding breaks linearity): it "
                                "is an address map, not a LinearLayout")
    return out


def attr_to_layout(attr: Attr, shape: Sequence[int]) -> LinearLayout | SharedAddressMap:
    """What Triton's layout means at ``shape``: a LinearLayout, or for ``#ttg.padded_shared`` a
    :class:`~verilayout.hw.nvidia.banks.SharedAddressMap` (element -> padded offset, with z3).

    >>> a = parse_attr("#ttg.padded_shared<[4:+1] {offset = [[0, 1], [0, 2], [1, 0]], block = []}>")
    >>> attr_to_layout(a, [2, 4]).offset({"dim0": 1, "dim1": 1})
    6
    """
    if not isinstance(attr, Attr):
        raise LayoutError(f"expected a layout attribute, got {format_value(attr)}")
    shape = _check_shape(shape, attr.where())
    return _convert_cached(_AttrKey(attr), shape)


class _AttrKey:
    """A hashable handle on an attribute: equal when their texts (``Attr.key``) are, which fixes
    their meaning; positions and alias names do not count."""

    __slots__ = ("attr", "key")

    def __init__(self, attr: Attr):
        self.attr = attr
        self.key = attr.key()

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _AttrKey) and other.key == self.key


#: Conversions repeat: a TTGIR file uses each layout at a few shapes, slices and dot operands
#: convert their parent again, and audits ask for the same types op after op. Keyed by the
#: attribute's text and the shape; at most 4096 layouts (a few MiB) are kept; a failed conversion
#: is not kept (its error names positions); registering a kind clears it. Results are immutable.
@functools.lru_cache(maxsize=4096)
def _convert_cached(handle: _AttrKey, shape: tuple) -> Any:
    attr = handle.attr
    kind = _lookup(attr)
    if kind.keys is not None:
        _check_keys(attr, sorted(kind.keys))
    try:
        return kind.fn(attr, shape)
    except LayoutError as e:
        msg = str(e)
        if re.match(r"line \d+, col \d+:", msg):
            raise
        key = next((k for k in attr.params if f"'{k}'" in msg), None)
        raise _fail(attr, key, msg) from None


def _looks_like_mlir(text: str) -> bool:
    s = text.lstrip()
    return s.startswith(("#", "!", "tensor<", "module", '"builtin.module"', "//")) or \
        bool(re.search(r"^[ \t]*#[\w$.\-]+[ \t]*=", text, re.M))


def _non_alias_text(text: str, aliases) -> str:
    """The text with alias-definition lines blanked (positions kept)."""
    lines = text.split("\n")
    for a in aliases.values():
        lines[a.line - 1] = " " * len(lines[a.line - 1])
    return "\n".join(lines)


def _layout_aliases(aliases) -> list[str]:
    out = []
    for name, a in aliases.items():
        m = re.match(r"#([A-Za-z_][\w$]*\.[\w$.]+)", a.text)
        if not m:
            continue
        kind = canonical_kind(m.group(1))
        if kind in _REGISTRY or kind in _KNOWN_UNSUPPORTED:
            out.append(name)
    return out


def _types_in(text: str, aliases) -> list[TensorType]:
    """The distinct tensor/memdesc types written in ``text`` (unparsable ones skipped)."""
    found: dict[str, TensorType] = {}
    for m in re.finditer(r"tensor<|!ttg\.memdesc<|!triton_gpu\.memdesc<", text):
        s = Scanner(text, m.start(), aliases)
        try:
            v = s.value()
        except LayoutError:
            continue
        if isinstance(v, TensorType) and v.encoding is not None:
            found.setdefault(format_value(v), v)
    return list(found.values())


def _uses_of(types: list[TensorType], name: str) -> list[tuple]:
    """Shapes of the types whose encoding is the alias ``#name``."""
    shapes: list[tuple] = []
    for t in types:
        if isinstance(t.encoding, Attr) and t.encoding.alias == name:
            shp = _type_layout_shape(t)
            if shp not in shapes:
                shapes.append(shp)
    return shapes


def shared_rank(attr: Any) -> int | None:
    """The rank a shared-memory encoding is written for (None when it does not say).

    >>> shared_rank(parse_attr("#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>"))
    1
    """
    if not isinstance(attr, Attr):
        return None
    p, kind = attr.params, attr.name.split(".")[-1]
    if kind in ("swizzled_shared", "amd_rotating_shared") and isinstance(p.get("order"), list):
        return len(p["order"])
    if kind == "nvmma_shared":
        return int(p["rank"]) if isinstance(p.get("rank"), int) else _nvmma_rank(attr)
    if kind in ("shared_linear", "padded_shared"):
        if kind == "padded_shared":
            try:
                p = triton_memory.padded_shared_parts(attr.body)[1]
            except LayoutError:
                return None
            if isinstance(p.get("order"), list):
                return len(p["order"])
        offs = p.get("offset")
        if isinstance(offs, list) and offs and isinstance(offs[0], list):
            return len(offs[0])
    if kind in ("tensor_memory_encoding", "tensor_memory_scales_encoding"):
        return 2
    return None


def memdesc_buffers(t: TensorType) -> tuple[tuple, int, int]:
    """``(layout shape, buffers, buffer stride in elements)`` of a type: a memdesc whose leading
    dims exceed its encoding's rank is a ring of buffers (Triton's pipelining allocates
    ``!ttg.memdesc<3x128x64xf16, #shared, ...>``); each buffer has the encoding's layout over the
    trailing dims, and buffer ``i`` starts ``i * stride`` elements after buffer 0. Triton's own
    ``toLinearLayout`` refuses these types; the layout of one buffer is what its views use.

    >>> from verilayout.frontends.mlir import TensorType
    >>> a = parse_attr("#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>")
    >>> memdesc_buffers(TensorType("memdesc", (3, 128, 64), "f16", a, None, True, None))
    ((128, 64), 3, 8192)
    """
    shape = _type_layout_shape(t)
    r = shared_rank(t.encoding) if t.kind == "memdesc" else None
    if r is None or len(shape) <= r:
        return shape, 1, 0
    per, lead = tuple(shape[-r:]), shape[:-r]
    count, stride = 1, 1
    for d in lead:
        count *= d
    for d in per:
        stride *= d
    return per, count, stride


def _type_layout_shape(t: TensorType) -> tuple:
    if t.kind == "memdesc" and t.alloc_shape:
        return tuple(t.alloc_shape[-len(t.shape):]) if t.shape else tuple(t.alloc_shape)
    return tuple(t.shape)


def _resolve(text: str, name: str | None) -> tuple[Any, tuple | None]:
    """The value the caller asked for, and (alias, shapes it is used with) for an alias.

    Rules for text with ``#name = ...`` alias lines: ``name`` picks an alias; else
    a single value left after removing the alias lines is the answer; else the
    file's only layout alias, when every typed value in the file uses it; else the
    file's only tensor/memdesc type; else an error listing the choices.
    """
    aliases = parse_aliases(text)
    table: dict[str, Any] = dict(aliases)
    if not aliases and name is None:
        return parse_value(text), None
    rest = _non_alias_text(text, aliases)
    if name is not None:
        key = name[1:] if name.startswith("#") else name
        if key not in aliases:
            have = ", ".join("#" + n for n in _layout_aliases(aliases)) or "none"
            raise LayoutError(f"no alias #{key} in the text (layout aliases: {have})")
        val = parse_value(f"#{key}", table)
        return val, (key, _uses_of(_types_in(rest, table), key))
    if rest.lstrip().startswith(("#", "!", "tensor<", "[")):
        s = Scanner(rest, 0, table)
        body = s.value()
        if s.at_end():
            return body, None
    layouts = _layout_aliases(aliases)
    types = _types_in(rest, table)
    if len(layouts) == 1:
        uses = [t for t in types if isinstance(t.encoding, Attr) and t.encoding.alias == layouts[0]]
        if len(uses) == len(types):
            val = parse_value(f"#{layouts[0]}", table)
            return val, (layouts[0], _uses_of(types, layouts[0]))
    if len(types) == 1:
        return types[0], None
    if not layouts and not types:
        raise LayoutError("the text defines no layout alias (#name = #ttg.<kind><{...}>) and "
                          "uses no tensor or memdesc type")
    listed = ", ".join("#" + n for n in layouts) or "none"
    raise LayoutError(f"the text has {len(layouts)} layout aliases ({listed}) and {len(types)} "
                      f"distinct tensor/memdesc types; pick an alias with name=")


def _single_use_shape(name: str, uses: list[tuple]) -> tuple | None:
    if len(uses) > 1:
        shown = ", ".join("x".join(map(str, u)) for u in uses)
        raise LayoutError(f"#{name} is used with several shapes ({shown}); pass shape=")
    return uses[0] if uses else None


def parse_attr(text: str, *, name: str | None = None) -> Any:
    """Parse MLIR text into its value: an :class:`Attr`, or a :class:`TensorType` for a type.

    Alias lines (``#name = ...``) in the text are resolved; ``name`` picks one.

    >>> parse_attr("#ttg.slice<{dim = 0, parent = #b}>\\n#b = #ttg.blocked<{order = [0]}>").params["parent"].alias
    'b'
    """
    if not isinstance(text, str):
        raise LayoutError(f"expected MLIR text, got {type(text).__name__}")
    return _resolve(text, name)[0]


def format_attr(attr: Any) -> str:
    """Print a parsed attribute or type back as MLIR text (aliases written out in full).

    >>> format_attr(parse_attr("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>"))
    '#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>'
    """
    return format_value(attr)


def parse(text: str, shape: Sequence[int] | None = None, *, name: str | None = None,
          swizzle_units: Any = None, elem_bits: int | None = None) -> Any:
    """Parse Triton MLIR (or CuTe) text into the layout Triton computes.

    * an attribute needs ``shape=``; a ``tensor<...>`` / ``!ttg.memdesc<...>`` type
      carries its own (``shape=``, if given too, must agree);
    * in a TTGIR file, ``name="#blocked"`` picks an alias; without ``name`` the
      file's only layout alias is used. The shape then comes from ``shape=`` or
      from the file's types that use the alias;
    * text that is not MLIR is CuTe: ``verilayout.cute.parse_cute(text,
      swizzle_units=..., elem_bits=...)``.

    >>> parse("#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>", [2, 2]).bases
    {'offset': [[0, 1], [1, 0]], 'block': []}
    >>> parse("#ttg.blocked<{sizePerThread = [1]}>")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: line 1, col 1: #ttg.blocked has no shape: give a full type (tensor<...>) or pass shape=[...]
    """
    if not isinstance(text, str):
        raise LayoutError(f"expected layout text, got {type(text).__name__}")
    if not text.strip():
        raise LayoutError("empty text: expected Triton MLIR (an attribute, a type or a TTGIR "
                          "file) or a CuTe layout")
    if not _looks_like_mlir(text):
        if shape is not None or name is not None:
            raise LayoutError("shape= and name= apply to Triton MLIR text; this looks like CuTe "
                              "text, which carries its own shape")
        return cute.parse_cute(text, swizzle_units=swizzle_units, elem_bits=elem_bits)
    if swizzle_units is not None or elem_bits is not None:
        raise LayoutError("swizzle_units= and elem_bits= apply to CuTe text, not to Triton MLIR")
    value, file_shape = _resolve(text, name)
    if isinstance(value, TensorType):
        return _type_to_linear(value, shape)
    if not isinstance(value, Attr):
        raise LayoutError(f"expected a layout attribute or a tensor/memdesc type, got "
                          f"{format_value(value)}")
    if shape is None and file_shape is not None:
        shape = _single_use_shape(*file_shape)
    if shape is None:
        raise _fail(value, None, f"#{value.name} has no shape: give a full type (tensor<...>) or "
                                 "pass shape=[...]")
    return attr_to_layout(value, shape)


def type_to_layout(t: TensorType) -> LinearLayout | SharedAddressMap:
    """The layout of a parsed ``tensor<>``/``!ttg.memdesc<>``/``!tt.tensordesc<>`` type, as Triton's
    ``toLinearLayout(type)``: a memdesc view uses its allocation's trailing dims, a ring of
    pipeline buffers (leading dims beyond the encoding's rank) the layout of one buffer.

    >>> from verilayout.frontends.mlir import parse_value
    >>> type_to_layout(parse_value("!ttg.memdesc<2x4x4xf16, #ttg.swizzled_shared<{vec = 1, "
    ...     "perPhase = 1, maxPhase = 1, order = [1, 0]}>, #ttg.shared_memory>")).out_dims
    {'dim0': 4, 'dim1': 4}
    """
    if not isinstance(t, TensorType):
        raise LayoutError(f"expected a tensor, memdesc or tensordesc type, got {format_value(t)}")
    return _type_to_linear(t, None)


def memdesc_view_layout(t: TensorType) -> LinearLayout:
    """Where a memdesc view's elements live: view coordinates (``dim0, ...`` of the view's shape)
    -> ``offset`` (and ``block``) in the allocation. Triton lays the allocation out
    (:func:`type_to_layout`) and inverts it, trimmed to the view (its ``invertAndCompose``); a
    subslice starting at ``o`` adds the constant ``view(o)`` (XOR: the map is linear).

    Law: for ``x`` in the view, ``type_to_layout(t)`` maps ``memdesc_view_layout(t)(x)`` back to ``x``.

    >>> from verilayout.frontends.mlir import parse_value
    >>> t = parse_value("!ttg.memdesc<2x4xf16, #ttg.swizzled_shared<{vec = 1, perPhase = 1, "
    ...                 "maxPhase = 4, order = [1, 0]}>, #ttg.shared_memory, mutable, 4x4>")
    >>> memdesc_view_layout(t).bases      # row 1 is stored at offset 4 XOR 1 (its swizzle)
    {'dim0': [[5, 0]], 'dim1': [[1, 0], [2, 0]]}
    """
    full = type_to_layout(t)
    if not isinstance(full, LinearLayout) or "offset" not in full.in_dim_names:
        raise LayoutError(f"line {t.pos[0]}, col {t.pos[1]}: a view layout needs a GF(2)-linear "
                          "shared-memory layout")
    inv = full.invert() if full.is_invertible() else full.pseudoinvert()
    lshape = memdesc_buffers(t)[0]
    view = tuple(t.shape[-len(lshape):])
    bases = inv.bases
    kept = {}
    for i, (name, size) in enumerate(zip(standard_out_dims(len(lshape)), view)):
        if size > lshape[i] or size & (size - 1):
            raise LayoutError(f"line {t.pos[0]}, col {t.pos[1]}: view shape {list(view)} does not "
                              f"fit the allocation {list(lshape)}")
        kept[name] = bases[name][:size.bit_length() - 1]
    return LinearLayout(kept, inv.out_dims, require_surjective=False)


def _type_to_linear(t: TensorType, shape: Sequence[int] | None) -> LinearLayout:
    where = f"line {t.pos[0]}, col {t.pos[1]}"
    tshape = _type_layout_shape(t)
    if shape is not None and tuple(shape) != tshape:
        raise LayoutError(f"{where}: shape mismatch: the type says {list(tshape)} but "
                          f"shape={list(shape)}")
    if not isinstance(t.encoding, Attr):
        raise LayoutError(f"{where}: the type has no layout encoding")
    kind = _lookup(t.encoding)
    want = DISTRIBUTED if t.kind == "tensor" else SHARED
    if kind.memory != want:
        what = {"tensor": "tensor<>", "tensordesc": "!tt.tensordesc<>"}.get(t.kind, "!ttg.memdesc<>")
        raise _fail(t.encoding, None, f"a {what} type needs a {want} layout, not #{t.encoding.name}")
    return attr_to_layout(t.encoding, memdesc_buffers(t)[0])


# ----------------------------------------------------------------------------
# Triton's text views
# ----------------------------------------------------------------------------

def _padded(value: int, size: int) -> str:
    return str(value).rjust(len(str(max(size - 1, 0))))


def _row_major(coords: Sequence[int], shape: Sequence[int]) -> int:
    idx = 0
    for c, s in zip(coords, shape):
        idx = idx * s + c
    return idx


def _unravel(i: int, shape: Sequence[int]) -> list[int]:
    out = []
    for s in reversed(shape):
        out.append(i % s)
        i //= s
    return out[::-1]


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


def _walk(layout: LinearLayout, order: Sequence[str]):
    """Yield (inputs, outputs) over every hardware coordinate, ``order`` outermost first."""
    import numpy as np

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
    outs = [((packed >> o) & m).tolist() for o, m in offs]
    cols = {n: coords[n].tolist() for n in order}
    for k in range(total):
        yield {n: cols[n][k] for n in order}, [o[k] for o in outs]


def _shared_points(layout: LinearLayout, dims: list[int]):
    """(block, offset, coords) as Triton's shared views walk them.

    Triton shows ``elements / blocks`` offsets per block (not the layout's offset
    size): with broadcast blocks, or offsets beyond one copy, the rest is not shown.
    """
    total = 1
    for d in dims:
        total *= d
    per_block = total // _in_size(layout, "block")
    for ins, out in _walk(layout, ["block", "offset"]):
        if ins["offset"] < per_block:
            yield ins["block"], ins["offset"], out


def format_hardware_view(layout: LinearLayout, shape: Sequence[int] | None = None) -> str:
    """Triton's hardware view (``format_hardware_view``, ``triton-tensor-layout -use-hw-view``).

    Distributed: ``Block<b>:`` (only with several blocks), ``Warp<w>:``, then one
    line per register with one ``(i,j)`` per lane, each coordinate padded to the
    width of its dim's largest index. Shared: ``Block: <b>:`` then
    ``Offset: <o> -> (i,j)`` for the first ``elements / blocks`` offsets (as Triton).

    >>> L = parse("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [4], warpsPerCTA = [1], order = [0]}>", [4])
    >>> print(format_hardware_view(L), end="")
    Warp0:
    (0), (1), (2), (3)
    """
    dims = _view_dims(layout, shape)
    coord = lambda out: "(" + ",".join(_padded(v, d) for v, d in zip(out, dims)) + ")"
    lines: list[str] = []
    if _is_shared(layout):
        for block, offset, out in _shared_points(layout, dims):
            if offset == 0:
                lines.append(f"Block: {block}:")
            lines.append(f"Offset: {offset} -> {coord(out)}")
        return "\n".join(lines) + "\n"
    n_blocks = _in_size(layout, "block")
    n_lanes = _in_size(layout, "lane")
    row: list[str] = []
    for ins, out in _walk(layout, ["block", "warp", "register", "lane"]):
        if ins["lane"] == 0 and ins["register"] == 0:
            if ins["warp"] == 0 and n_blocks > 1:
                lines.append(f"Block{ins['block']}:")
            lines.append(f"Warp{ins['warp']}:")
        row.append(coord(out))
        if ins["lane"] == n_lanes - 1:
            lines.append(", ".join(row))
            row = []
    return "\n".join(lines) + "\n"


def format_tensor_view(layout: LinearLayout, shape: Sequence[int] | None = None) -> str:
    """Triton's tensor view (``format_tensor_view``): who holds each element, row-major.

    Distributed entries read ``[B<b>:]T<thread>:<register>`` (thread = lane + warp *
    lanes), several holders joined by ``|``. Shared layouts are shown from memory's
    side, as Triton does: cell ``block * (elements / blocks) + offset`` (row-major in
    the tensor's shape) reads ``(i:j)``, the element stored there.

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
        for block, offset, out in _shared_points(layout, dims):
            cells[block * per_block + offset].append(
                "(" + ":".join(_padded(v, d) for v, d in zip(out, dims)) + ")")
        sep = ","
    else:
        n_blocks = _in_size(layout, "block")
        n_lanes, n_warps = _in_size(layout, "lane"), _in_size(layout, "warp")
        n_regs = _in_size(layout, "register")
        pad = lambda v, m: " " * (len(str(m - 1)) - len(str(v)))
        for ins, out in _walk(layout, ["block", "warp", "lane", "register"]):
            tid = ins["lane"] + ins["warp"] * n_lanes
            text = pad(ins["block"], n_blocks) + pad(tid, n_warps * n_lanes) + \
                pad(ins["register"], n_regs)
            if n_blocks > 1:
                text += f"B{ins['block']}:"
            text += f"T{tid}:{ins['register']}"
            cells[_row_major(out, dims)].append(text)
        sep = ", "
    return _tensor_text(["|".join(c) for c in cells], dims, sep)


def _tensor_text(cells: list[str], dims: list[int], sep: str) -> str:
    rank = len(dims)
    out: list[str] = []
    new_line = True
    for i, cell in enumerate(cells):
        idx = _unravel(i, dims)
        opened = 0
        for j in range(rank - 1, -1, -1):
            if idx[j] != 0:
                break
            out.append("[")
            opened += 1
        if new_line:
            out.append(" " * (rank - opened))
            new_line = False
        out.append(cell)
        nxt = _unravel(i + 1, dims) if i + 1 < len(cells) else [0] * rank
        for j in range(rank - 1, -1, -1):
            if nxt[j] != 0:
                break
            out.append("]")
        if nxt[-1] == 0:
            out.append("\n")
            new_line = True
        else:
            out.append(sep)
    return "".join(out)
