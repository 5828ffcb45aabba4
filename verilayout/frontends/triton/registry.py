"""The Triton layout kinds: one read-only table, built at import from the converter modules'
``KINDS`` tuples, and the dispatch over it.

:data:`KINDS` is a :class:`~verilayout.frontends.triton.dispatch.KindTable` (a
``types.MappingProxyType`` inside): nothing adds to it. A front-end with a kind of its own builds
a new table with :func:`with_layout_kind` and passes it (``kinds=``) to
:func:`verilayout.frontends.triton.parse` and the functions here; the built-in table, and every
other caller, see no change.

>>> "ttg.blocked" in KINDS and "ttg.nvmma_shared" in registered_kinds()
True
>>> from verilayout.core.linear_layout import LinearLayout
>>> from verilayout.frontends.triton import parse
>>> mine = with_layout_kind("test.ident", lambda a, s: LinearLayout.identity1D(s[0], "register", "dim0"))
>>> parse("#test.ident", shape=[4], kinds=mine).bases, "test.ident" in KINDS
({'register': [[1], [2]]}, False)
"""
from __future__ import annotations

from typing import Sequence

from verilayout.core.linear_layout import LinearLayout
from verilayout.frontends.mlir import Attr
from verilayout.frontends.triton import distributed, shared
from verilayout.frontends.triton.dispatch import (DISTRIBUTED, SHARED, AttrKey, Converter, KindTable, LayoutKind,
                                                  canonical_kind, convert, convert_linear, kind_table, with_kind)
from verilayout.frontends.triton.dispatch import known_kind as _known_in
from verilayout.frontends.triton.dispatch import lookup_kind as _lookup_in
from verilayout.frontends.triton.dispatch import registered_kinds as _registered_in
from verilayout.hw.nvidia.banks import SharedAddressMap

__all__ = ["KINDS", "DISTRIBUTED", "SHARED", "AttrKey", "Converter", "KindTable", "LayoutKind", "canonical_kind",
           "attr_to_layout", "attr_to_linear", "lookup_kind", "known_kind", "registered_kinds",
           "with_layout_kind", "kind_table"]

#: Every built-in Triton layout kind, read-only: the distributed kinds, then the shared ones.
KINDS: KindTable = kind_table(distributed.KINDS + shared.KINDS)


def attr_to_linear(attr: Attr, shape: Sequence[int], kinds: KindTable = KINDS) -> LinearLayout:
    """The linear layout Triton computes for a parsed attribute at ``shape``; a layout that is not
    GF(2)-linear (``#ttg.padded_shared``) raises ``LayoutError`` (use :func:`attr_to_layout`).

    >>> from verilayout.frontends.triton import parse_attr
    >>> a = parse_attr("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [4], warpsPerCTA = [2], order = [0]}>")
    >>> attr_to_linear(a, [4]).bases
    {'register': [], 'lane': [[1], [2]], 'warp': [[0]], 'block': []}
    """
    return convert_linear(attr, shape, kinds)


def attr_to_layout(attr: Attr, shape: Sequence[int], kinds: KindTable = KINDS) -> LinearLayout | SharedAddressMap:
    """What Triton's layout means at ``shape``: a LinearLayout, or for ``#ttg.padded_shared`` a
    :class:`~verilayout.hw.nvidia.banks.SharedAddressMap` (element -> padded offset, with z3).

    >>> from verilayout.frontends.triton import parse_attr
    >>> a = parse_attr("#ttg.padded_shared<[4:+1] {offset = [[0, 1], [0, 2], [1, 0]], block = []}>")
    >>> attr_to_layout(a, [2, 4]).offset({"dim0": 1, "dim1": 1})
    6
    """
    return convert(attr, shape, kinds)


def lookup_kind(attr: Attr, kinds: KindTable = KINDS) -> LayoutKind:
    """The kind of ``attr`` in ``kinds``; a located ``LayoutError`` when it has none.

    >>> from verilayout.frontends.triton import parse_attr
    >>> lookup_kind(parse_attr("#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>")).memory
    'shared'
    """
    return _lookup_in(attr, kinds)


def known_kind(kind: str, kinds: KindTable = KINDS) -> bool:
    """Whether ``kind`` (canonical) is in ``kinds`` or a Triton kind known to have no converter.

    >>> known_kind("ttg.blocked"), known_kind("ttig.warp"), known_kind("ttg.nope")
    (True, True, False)
    """
    return _known_in(kind, kinds)


def registered_kinds(kinds: KindTable = KINDS) -> list[str]:
    """Names of the layout kinds with a converter.

    >>> "ttg.blocked" in registered_kinds()
    True
    """
    return _registered_in(kinds)


def with_layout_kind(name: str, fn: Converter, *, memory: str = DISTRIBUTED,
                     keys: Sequence[str] | None = None, kinds: KindTable = KINDS) -> KindTable:
    """A new table: ``kinds`` (default the built-in :data:`KINDS`) plus a converter
    ``fn(attr, shape) -> LinearLayout`` for ``#<name><{...}>`` (see
    :func:`~verilayout.frontends.triton.dispatch.with_kind`); nothing else changes.

    >>> t = with_layout_kind("test.other", lambda a, s: None)
    >>> "test.other" in t, "test.other" in KINDS
    (True, False)
    """
    return with_kind(kinds, name, fn, memory=memory, keys=keys)
