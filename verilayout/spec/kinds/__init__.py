"""Obligation kinds and layout sources, one module per capability, gathered explicitly.

Each module exports two immutable mappings, ``SOURCES`` and ``KINDS``; nothing registers
itself on import. :func:`registry` joins them.

>>> sorted(registry().kinds)[:4]
['bases', 'blockload_covers', 'conflict_free', 'descriptor_fields']
"""
from __future__ import annotations

from types import MappingProxyType

from verilayout.errors import LayoutError
from verilayout.spec.format import Registry
from verilayout.spec.kinds import banks, blockload, linear, tma, tmem, wgmma

MODULES = (linear, wgmma, banks, blockload, tmem, tma)


def registry(modules=MODULES) -> Registry:
    """The sources and kinds of ``modules``; a name defined twice is an error.

    >>> "equal" in registry().kinds and "descriptor" in registry().sources
    True
    """
    sources: dict = {}
    kinds: dict = {}
    for m in modules:
        for table, into in ((m.SOURCES, sources), (m.KINDS, kinds)):
            for k, v in table.items():
                if k in into:
                    raise LayoutError(f"{m.__name__} defines '{k}' a second time")
                into[k] = v
    return Registry(MappingProxyType(sources), MappingProxyType(kinds))
