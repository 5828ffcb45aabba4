"""The dispatch from a parsed attribute to its converter, over a kind table given as a parameter.

A kind is a name (``ttg.blocked``), a converter ``fn(attr, shape) -> LinearLayout`` (``nested``:
``fn(attr, shape, kinds)``, for kinds whose attribute holds another layout) and whether it lays
out registers (``distributed``) or memory (``shared``). A :class:`KindTable` is a read-only
mapping (``types.MappingProxyType``) built once from the converter modules' ``KINDS`` tuples
(:data:`verilayout.frontends.triton.registry.KINDS`); :func:`with_kind` returns a new table with
one more kind and changes no other. Conversions are cached by attribute text, shape and table
(:func:`_convert_cached`).

>>> canonical_kind("triton_nvidia_gpu.tensor_memory_encoding")
'ttng.tensor_memory_encoding'
"""
from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Iterable, Iterator, Sequence

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
    """A layout kind: its converter, whether it is a register or a shared layout, the only keys it
    accepts (None: the converter checks), and whether the converter takes the kind table too
    (``nested``: its attribute holds another layout, converted through the same table)."""

    name: str
    fn: Converter
    memory: str = DISTRIBUTED
    keys: frozenset | None = None
    nested: bool = False


class KindTable(Mapping):
    """A read-only table of layout kinds by canonical name (a ``types.MappingProxyType`` inside);
    hashed by identity, so conversions cache per table.

    >>> t = kind_table([LayoutKind("test.k", lambda a, s: None)]); list(t), t["test.k"].memory
    (['test.k'], 'distributed')
    """

    __slots__ = ("_kinds",)

    def __init__(self, kinds: Mapping[str, LayoutKind]):
        self._kinds = MappingProxyType(dict(kinds))

    def __getitem__(self, name: str) -> LayoutKind:
        return self._kinds[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._kinds)

    def __len__(self) -> int:
        return len(self._kinds)

    __hash__ = object.__hash__

    def __eq__(self, other: object) -> bool:
        return self is other


def kind_table(kinds: Iterable[LayoutKind]) -> KindTable:
    """The read-only table of ``kinds`` (names made canonical; a later kind of one name wins).

    >>> len(kind_table([]))
    0
    """
    return KindTable({canonical_kind(k.name): k for k in kinds})


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


def with_kind(kinds: KindTable, name: str, fn: Converter, *, memory: str = DISTRIBUTED,
              keys: Sequence[str] | None = None) -> KindTable:
    """A new table: ``kinds`` plus a converter ``fn(attr, shape) -> LinearLayout`` for
    ``#<name><{...}>`` (replacing one of that name); ``kinds`` itself is unchanged.

    ``memory`` is ``"distributed"`` (register layouts, in a ``tensor<>``) or
    ``"shared"`` (in a ``!ttg.memdesc<>``). ``keys``, when given, are the only
    parameter names accepted (others are positioned errors before ``fn`` runs).

    >>> t = with_kind(kind_table([]), "test.ident", lambda a, s: LinearLayout.identity1D(s[0], "register", "dim0"))
    >>> registered_kinds(t)
    ['test.ident']
    """
    if memory not in (DISTRIBUTED, SHARED):
        raise LayoutError(f"memory must be 'distributed' or 'shared', not {memory!r}")
    full = canonical_kind(name.lstrip("#"))
    kind = LayoutKind(full, fn, memory, frozenset(keys) if keys is not None else None)
    return KindTable({**dict(kinds), full: kind})


def registered_kinds(kinds: KindTable) -> list[str]:
    """Names of the layout kinds with a converter in ``kinds``.

    >>> registered_kinds(kind_table([LayoutKind("ttg.blocked", lambda a, s: None)]))
    ['ttg.blocked']
    """
    return sorted(kinds)


def known_kind(kind: str, kinds: KindTable) -> bool:
    """Whether ``kind`` (canonical) is in ``kinds`` or a Triton kind known to have no converter."""
    return kind in kinds or kind in _KNOWN_UNSUPPORTED


# ----------------------------------------------------------------------------
# dispatch
# ----------------------------------------------------------------------------

def lookup_kind(attr: Attr, kinds: KindTable) -> LayoutKind:
    """The kind of ``attr`` in ``kinds``; a located ``LayoutError`` when it has none."""
    name = canonical_kind(attr.name)
    kind = kinds.get(name)
    if kind is not None:
        return kind
    if name in _KNOWN_UNSUPPORTED:
        raise attr_error(attr, None, f"#{attr.name} is not supported here (no converter registered; "
                                     f"supported: {', '.join('#' + k for k in registered_kinds(kinds))})")
    if name == "ttg.shared_memory":
        raise attr_error(attr, None, "#ttg.shared_memory is a memory space, not a layout")
    raise attr_error(attr, None, f"unknown layout kind #{attr.name} "
                                 f"(supported: {', '.join('#' + k for k in registered_kinds(kinds))})")


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


def convert_linear(attr: Attr, shape: Sequence[int], kinds: KindTable) -> LinearLayout:
    """The linear layout Triton computes for a parsed attribute at ``shape`` (its kind from
    ``kinds``); a layout that is not GF(2)-linear (``#ttg.padded_shared``) raises ``LayoutError``
    (use :func:`convert`).

    >>> from verilayout.frontends.triton import parse_attr
    >>> from verilayout.frontends.triton.registry import KINDS
    >>> a = parse_attr("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [4], warpsPerCTA = [2], order = [0]}>")
    >>> convert_linear(a, [4], KINDS).bases
    {'register': [], 'lane': [[1], [2]], 'warp': [[0]], 'block': []}
    """
    out = convert(attr, shape, kinds)
    if not isinstance(out, LinearLayout):
        raise attr_error(attr, None, f"#{attr.name} is not GF(2)-linear (padding breaks linearity): it "
                                     "is an address map, not a LinearLayout")
    return out


def convert(attr: Attr, shape: Sequence[int], kinds: KindTable) -> LinearLayout | SharedAddressMap:
    """What Triton's layout means at ``shape`` (its kind from ``kinds``): a LinearLayout, or for
    ``#ttg.padded_shared`` a :class:`~verilayout.hw.nvidia.banks.SharedAddressMap` (element ->
    padded offset, with z3).

    >>> from verilayout.frontends.triton import parse_attr
    >>> from verilayout.frontends.triton.registry import KINDS
    >>> a = parse_attr("#ttg.padded_shared<[4:+1] {offset = [[0, 1], [0, 2], [1, 0]], block = []}>")
    >>> convert(a, [2, 4], KINDS).offset({"dim0": 1, "dim1": 1})
    6
    """
    if not isinstance(attr, Attr):
        raise LayoutError(f"expected a layout attribute, got {format_value(attr)}")
    if not isinstance(kinds, KindTable):
        raise LayoutError(f"kinds must be a KindTable (verilayout.frontends.triton.registry.KINDS, "
                          f"or with_kind(...)), got {type(kinds).__name__}")
    shape = _check_shape(shape, attr.where())
    return _convert_cached(AttrKey(attr), shape, kinds)


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
#: attribute's text, the shape and the kind table (by identity); at most 4096 layouts (a few MiB)
#: are kept; a failed conversion is not kept (its error names positions). Results are immutable.
@functools.lru_cache(maxsize=4096)
def _convert_cached(handle: AttrKey, shape: tuple, kinds: KindTable) -> Any:
    attr = handle.attr
    kind = lookup_kind(attr, kinds)
    if kind.keys is not None:
        check_keys(attr, sorted(kind.keys))
    if kind.nested:
        return located_call(attr, lambda: kind.fn(attr, shape, kinds))
    return located_call(attr, lambda: kind.fn(attr, shape))


def clear_cache() -> None:
    """Forget every cached conversion (benchmarks time cold conversions with it)."""
    _convert_cached.cache_clear()
