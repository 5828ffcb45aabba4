"""The layout-kind table and the dispatch from a parsed attribute to its converter.

A kind is a name (``ttg.blocked``), a converter ``fn(attr, shape) -> LinearLayout`` and whether it
lays out registers (``distributed``) or memory (``shared``). The built-in kinds are registered by
:mod:`verilayout.frontends.triton` when the package loads; :func:`register_layout_kind` adds one.
Conversions are cached by attribute text and shape (:func:`_convert_cached`).

>>> canonical_kind("triton_nvidia_gpu.tensor_memory_encoding")
'ttng.tensor_memory_encoding'
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from verilayout.errors import LayoutError
from verilayout.core.linear_layout import LinearLayout
from verilayout.frontends.mlir import Attr, format_value
from verilayout.frontends.triton.common import check_keys, attr_error, is_int, located_call
from verilayout.hw.nvidia.banks import SharedAddressMap

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
    "ttg.shared", "ttg.nvmma_shared_tma", "ttig.dpas", "ttig.warp",
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

    >>> from verilayout.frontends.triton import parse
    >>> register_layout_kind("test.ident", lambda a, s: LinearLayout.identity1D(s[0], "register", "dim0"))
    >>> parse("#test.ident", shape=[4]).bases
    {'register': [[1], [2]]}
    """
    if memory not in (DISTRIBUTED, SHARED):
        raise LayoutError(f"memory must be 'distributed' or 'shared', not {memory!r}")
    full = canonical_kind(name.lstrip("#"))
    _REGISTRY[full] = LayoutKind(full, fn, memory, frozenset(keys) if keys is not None else None)
    _convert_cached.cache_clear()


def registered_kinds() -> list[str]:
    """Names of the layout kinds with a converter.

    >>> "ttg.blocked" in registered_kinds()
    True
    """
    return sorted(_REGISTRY)


def known_kind(kind: str) -> bool:
    """Whether ``kind`` (canonical) is registered or a Triton kind known to have no converter."""
    return kind in _REGISTRY or kind in _KNOWN_UNSUPPORTED


# ----------------------------------------------------------------------------
# dispatch
# ----------------------------------------------------------------------------

def lookup_kind(attr: Attr) -> LayoutKind:
    """The registered kind of ``attr``; a located ``LayoutError`` when it has none."""
    name = canonical_kind(attr.name)
    kind = _REGISTRY.get(name)
    if kind is not None:
        return kind
    if name in _KNOWN_UNSUPPORTED:
        raise attr_error(attr, None, f"#{attr.name} is not supported here (no converter registered; "
                                     f"supported: {', '.join('#' + k for k in registered_kinds())})")
    if name == "ttg.shared_memory":
        raise attr_error(attr, None, "#ttg.shared_memory is a memory space, not a layout")
    raise attr_error(attr, None, f"unknown layout kind #{attr.name} "
                                 f"(supported: {', '.join('#' + k for k in registered_kinds())})")


def _check_shape(shape: Any, where: str) -> tuple:
    if isinstance(shape, (str, bytes)) or not isinstance(shape, Sequence):
        raise LayoutError(f"{where}: shape must be a list of sizes, got {shape!r}")
    out = []
    for i, s in enumerate(shape):
        if not is_int(s) or s <= 0:
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

    >>> from verilayout.frontends.triton import parse_attr
    >>> a = parse_attr("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [4], warpsPerCTA = [2], order = [0]}>")
    >>> attr_to_linear(a, [4]).bases
    {'register': [], 'lane': [[1], [2]], 'warp': [[0]], 'block': []}
    """
    out = attr_to_layout(attr, shape)
    if not isinstance(out, LinearLayout):
        raise attr_error(attr, None, f"#{attr.name} is not GF(2)-linear (padding breaks linearity): it "
                                     "is an address map, not a LinearLayout")
    return out


def attr_to_layout(attr: Attr, shape: Sequence[int]) -> LinearLayout | SharedAddressMap:
    """What Triton's layout means at ``shape``: a LinearLayout, or for ``#ttg.padded_shared`` a
    :class:`~verilayout.hw.nvidia.banks.SharedAddressMap` (element -> padded offset, with z3).

    >>> from verilayout.frontends.triton import parse_attr
    >>> a = parse_attr("#ttg.padded_shared<[4:+1] {offset = [[0, 1], [0, 2], [1, 0]], block = []}>")
    >>> attr_to_layout(a, [2, 4]).offset({"dim0": 1, "dim1": 1})
    6
    """
    if not isinstance(attr, Attr):
        raise LayoutError(f"expected a layout attribute, got {format_value(attr)}")
    shape = _check_shape(shape, attr.where())
    return _convert_cached(AttrKey(attr), shape)


class AttrKey:
    """A hashable handle on an attribute: equal when their texts (``Attr.key``) are, which fixes
    their meaning; positions and alias names do not count."""

    __slots__ = ("attr", "key")

    def __init__(self, attr: Attr):
        self.attr = attr
        self.key = attr.key()

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AttrKey) and other.key == self.key


#: Conversions repeat: a TTGIR file uses each layout at a few shapes, slices and dot operands
#: convert their parent again, and audits ask for the same types op after op. Keyed by the
#: attribute's text and the shape; at most 4096 layouts (a few MiB) are kept; a failed conversion
#: is not kept (its error names positions); registering a kind clears it. Results are immutable.
@functools.lru_cache(maxsize=4096)
def _convert_cached(handle: AttrKey, shape: tuple) -> Any:
    attr = handle.attr
    kind = lookup_kind(attr)
    if kind.keys is not None:
        check_keys(attr, sorted(kind.keys))
    return located_call(attr, lambda: kind.fn(attr, shape))
