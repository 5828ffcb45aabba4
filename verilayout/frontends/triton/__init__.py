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

Layout kinds live in a read-only table (:data:`KINDS`, built from the converter modules' own
tables); another front-end builds a new table with :func:`with_layout_kind`
(``fn(attr, shape) -> LinearLayout``) and passes it as ``parse(..., kinds=...)``.

The package, from the bottom up: ``common`` (attribute readers, CGA helpers), ``mma``, ``intel``,
``memory`` (the MMA/dot-operand, Intel and tensor-memory/rotating/padded converters on parsed
parameters), ``dispatch`` (kind tables, the dispatch over one and its cache), ``distributed`` and
``shared`` (one converter per kind, each module with its ``KINDS`` table), ``registry`` (the
built-in table :data:`KINDS`), ``text`` (``parse``, types, aliases), ``views`` (Triton's text
views). This module re-exports the names the single module ``frontends/triton.py`` had.
"""
from __future__ import annotations


from verilayout.frontends.triton import registry, text
from verilayout.frontends.triton.distributed import (
    amd_mfma_attr_to_linear, amd_wmma_attr_to_linear, dot_op_attr_to_linear, dpas_attr_to_linear,
    nvidia_mma_attr_to_linear, subgroup_2d_block_attr_to_linear, blocked_to_linear, generic_linear_to_linear,
    linear_to_linear, slice_to_linear)
from verilayout.frontends.triton.registry import (
    DISTRIBUTED, KINDS, SHARED, Converter, KindTable, LayoutKind, attr_to_layout,
    attr_to_linear, canonical_kind, registered_kinds, with_layout_kind)
from verilayout.frontends.triton.shared import (
    padded_shared_attr_to_map, shared_linear_attr_to_linear, partitioned_shared_to_linear, tmem_scales_to_linear,
    tmem_to_linear,
    amd_rotating_shared_to_linear, nvmma_shared_to_linear, swizzled_shared_to_linear)
from verilayout.frontends.triton.text import (
    format_attr, memdesc_buffers, memdesc_view_layout, parse, parse_attr, shared_rank, type_to_layout)
from verilayout.frontends.triton.views import format_hardware_view, format_tensor_view

__all__ = ["parse", "parse_attr", "format_attr", "attr_to_linear", "attr_to_layout", "type_to_layout",
           "memdesc_view_layout", "memdesc_buffers", "shared_rank", "with_layout_kind",
           "registered_kinds", "KINDS", "KindTable", "format_hardware_view", "format_tensor_view", "LayoutKind"]
