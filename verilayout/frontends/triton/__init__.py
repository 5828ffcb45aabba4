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

The package, from the bottom up: ``common`` (attribute readers, CGA helpers), ``registry`` (the
kind table, dispatch and its cache), ``distributed`` and ``shared`` (one converter per kind),
``text`` (``parse``, types, aliases), ``views`` (Triton's text views). This module registers the
built-in kinds and re-exports the names the single module ``frontends/triton.py`` had.
"""
from __future__ import annotations


from verilayout.frontends.triton import memory as triton_memory
from verilayout.frontends.triton.intel import DPAS_KEYS, SUBGROUP_2D_BLOCK_KEYS
from verilayout.frontends.triton import registry, text
from verilayout.frontends.triton.distributed import (
    amd_mfma_attr_to_linear, amd_wmma_attr_to_linear, dot_op_attr_to_linear, dpas_attr_to_linear,
    nvidia_mma_attr_to_linear, subgroup_2d_block_attr_to_linear, blocked_to_linear, generic_linear_to_linear,
    linear_to_linear, slice_to_linear)
from verilayout.frontends.triton.registry import (
    DISTRIBUTED, SHARED, Converter, LayoutKind, attr_to_layout,
    attr_to_linear, canonical_kind, register_layout_kind, registered_kinds)
from verilayout.frontends.triton.shared import (
    padded_shared_attr_to_map, shared_linear_attr_to_linear, partitioned_shared_to_linear, tmem_scales_to_linear,
    tmem_to_linear,
    amd_rotating_shared_to_linear, nvmma_shared_to_linear, swizzled_shared_to_linear)
from verilayout.frontends.triton.text import (
    format_attr, memdesc_buffers, memdesc_view_layout, parse, parse_attr, shared_rank, type_to_layout)
from verilayout.frontends.triton.views import format_hardware_view, format_tensor_view

__all__ = ["parse", "parse_attr", "format_attr", "attr_to_linear", "attr_to_layout", "type_to_layout",
           "memdesc_view_layout", "memdesc_buffers", "shared_rank", "register_layout_kind",
           "registered_kinds", "format_hardware_view", "format_tensor_view", "LayoutKind"]


def _register_builtins() -> None:
    reg = register_layout_kind
    reg("ttg.blocked", blocked_to_linear)
    reg("ttg.slice", slice_to_linear)
    reg("ttg.linear", linear_to_linear)
    reg("ttg.generic_linear", generic_linear_to_linear)
    reg("ttg.nvidia_mma", nvidia_mma_attr_to_linear)
    reg("ttg.dot_op", dot_op_attr_to_linear)
    reg("ttg.amd_mfma", amd_mfma_attr_to_linear)
    reg("ttg.amd_wmma", amd_wmma_attr_to_linear)
    reg("ttg.swizzled_shared", swizzled_shared_to_linear, memory=SHARED)
    reg("ttg.nvmma_shared", nvmma_shared_to_linear, memory=SHARED)
    reg("ttig.dpas", dpas_attr_to_linear, keys=DPAS_KEYS)
    reg("ttig.subgroup_2d_block", subgroup_2d_block_attr_to_linear, keys=SUBGROUP_2D_BLOCK_KEYS)
    reg("ttg.amd_rotating_shared", amd_rotating_shared_to_linear, memory=SHARED,
        keys=triton_memory.ROTATING_KEYS)
    reg("ttg.shared_linear", shared_linear_attr_to_linear, memory=SHARED,
        keys=triton_memory.SHARED_LINEAR_KEYS)
    reg("ttg.padded_shared", padded_shared_attr_to_map, memory=SHARED)
    reg("ttg.partitioned_shared", partitioned_shared_to_linear, memory=SHARED)
    reg("ttng.tensor_memory_encoding", tmem_to_linear, memory=SHARED, keys=triton_memory.TMEM_KEYS)
    reg("ttng.tensor_memory_scales_encoding", tmem_scales_to_linear, memory=SHARED,
        keys=triton_memory.TMEM_SCALES_KEYS)


_register_builtins()
