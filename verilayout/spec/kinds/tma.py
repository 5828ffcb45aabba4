"""Spec-file obligation kind for TMA (cp.async.bulk.tensor) writers and their shared-memory readers.
Exported as ``SOURCES`` (none) and ``KINDS``, joined by :func:`verilayout.spec.kinds.registry`.

Kind ``tma_matches``: every stage of a ring that TMA fills is read back where TMA wrote it
(:func:`verilayout.prove.tma.check_ring`). Keys:

* ``tensor_map`` (required): ``{dtype, box, swizzle, global_dims, global_strides, element_strides,
  interleave, oob_fill, global_address}`` as ``cuTensorMapEncodeTiled`` takes them, dims innermost
  first (``box = [64, 128]``: 64 contiguous elements, 128 rows); only ``dtype`` and ``box`` are
  required (``global_dims`` default to the box, strides to dense);
* the reader, one of: ``layout`` (a ``[layouts]`` name: CuTe, Triton ``#ttg.*``, bases; optional
  ``mn_dim``, ``swizzle_units``, ``relative``, ``offset``) or ``descriptor`` (a descriptor entry name,
  a value or a table; with ``major``, ``mn``, optional ``k_blocks``, ``k_step``, ``mn_blocks``,
  ``mn_step``, ``arch``);
* ``dtype`` (required): the reader's element type (``f16``, ``bf16``, ``e4m3``, ``tf32``, ...);
* the ring: ``stages`` (1), ``stage_bytes`` (the tile's bytes), ``copies`` (boxes per stage side
  by side along TMA's inner dim, 1), ``base_align`` (128: the TMA destination alignment) or a
  concrete ``base``; ``inner`` (``"k"`` or ``"mn"``: the reader coordinate that is TMA's dim 0);
  ``trust_inferred`` (prove under the inferences the verdict names: the 128B_ATOM_* modes on sm_100,
  the 128B_ATOM_64B / FLIP_8B patterns); ``arch`` (``sm_90`` default, or ``sm_100``: the measured
  sm_90 driver refuses the 128B_ATOM_* modes; also the descriptor reader's architecture); ``start``
  (a load's global start coordinate, dims innermost first: its innermost one must be a multiple of 16
  bytes, measured).

>>> from verilayout.spec import load_spec_text, run_spec
>>> spec = load_spec_text('''
... [layouts.a]
... text = "Sw<3,4,3> o smem_ptr[16b](unset) o (128,64):(64,1)"
... [[obligation]]
... kind = "tma_matches"
... tensor_map = { dtype = "f16", box = [64, 128], swizzle = "128B" }
... layout = "a"
... dtype = "f16"
... stages = 3
... ''', "inline.toml")
>>> [r.verdict.status for r in run_spec(spec)]
['proved']
"""
from __future__ import annotations

from types import MappingProxyType

from verilayout.errors import LayoutError
from verilayout.frontends.names import parse_arch, parse_major, parse_swizzle
from verilayout.hw.nvidia.tma import TensorMap
from verilayout.prove.tma import descriptor_reader, layout_reader, check_ring
from verilayout.spec.format import Kind, prefixed
from verilayout.spec.kinds.wgmma import resolve_descriptor

_MAP_KEYS = {"dtype", "box", "swizzle", "global_dims", "global_strides", "element_strides", "interleave",
             "oob_fill", "global_address"}


def _tensor_map(t, where: str) -> TensorMap:
    if not isinstance(t, dict) or not {"dtype", "box"} <= set(t) or set(t) - _MAP_KEYS:
        raise LayoutError(f"{where}: tensor_map = {{dtype = \"f16\", box = [64, 128], swizzle = \"128B\", ...}} "
                          f"(keys: {', '.join(sorted(_MAP_KEYS))})")
    args = dict(t)
    if isinstance(args.get("box"), list):
        args.setdefault("global_dims", list(args["box"]))
    for k in ("box", "global_dims", "global_strides", "element_strides"):
        if isinstance(args.get(k), list):
            args[k] = tuple(args[k])
    if "swizzle" in args:
        args["swizzle"] = prefixed(f"{where}: tensor_map", parse_swizzle, args["swizzle"], "tma")
    return prefixed(f"{where}: tensor_map", TensorMap, **args)


def _tma_matches(spec, where, timeout_ms, tensor_map, dtype, layout=None, descriptor=None, major=None,
                 mn=None, k_blocks=1, k_step=None, mn_blocks=1, mn_step=None, arch=None, mn_dim=0,
                 swizzle_units=None, relative=None, offset=0, stages=1, stage_bytes=None, copies=1,
                 base_align=128, base=None, inner=None, trust_inferred=False, start=None):
    """TMA's writes into every stage of the ring are what the reader reads."""
    tmap = _tensor_map(tensor_map, where)
    if (layout is None) == (descriptor is None):
        raise LayoutError(f"{where}: give exactly one reader, 'layout' or 'descriptor'")
    if layout is not None:
        reader = prefixed(where, layout_reader, spec.layout(layout, where), dtype=dtype, mn_dim=mn_dim,
                          offset=offset, relative=relative)
    else:
        if major is None or mn is None:
            raise LayoutError(f"{where}: a descriptor reader needs 'major' and 'mn'")
        desc = resolve_descriptor(spec, descriptor, where)
        reader = prefixed(where, descriptor_reader, desc, major=prefixed(where, parse_major, major), dtype=dtype, mn=mn, k_blocks=k_blocks,
                          k_step=k_step, mn_blocks=mn_blocks, mn_step=mn_step, arch=arch)
    if not isinstance(trust_inferred, bool):
        raise LayoutError(f"{where}: trust_inferred must be true or false")
    return prefixed(where, check_ring, tmap, reader, stages=stages, stage_bytes=stage_bytes, copies=copies,
                    base_align=base_align, base=base, inner=inner, trust_inferred=trust_inferred,
                    arch=None if arch is None else prefixed(where, parse_arch, arch),
                    start=tuple(start) if isinstance(start, list) else start,
                    timeout_ms=timeout_ms)


SOURCES = MappingProxyType({})
KINDS = MappingProxyType({
    "tma_matches": Kind(_tma_matches, MappingProxyType({
        "tensor_map": "required", "dtype": "required", "layout": "optional", "descriptor": "optional",
        "major": "optional", "mn": "optional", "k_blocks": "optional", "k_step": "optional",
        "mn_blocks": "optional", "mn_step": "optional", "arch": "optional", "mn_dim": "optional",
        "swizzle_units": "optional", "relative": "optional", "offset": "optional", "stages": "optional",
        "stage_bytes": "optional", "copies": "optional", "base_align": "optional", "base": "optional",
        "inner": "optional", "trust_inferred": "optional", "start": "optional"}),
        "every stage of a TMA-filled shared-memory ring is read (layout or wgmma descriptors) where TMA "
        "wrote it, at every buffer base of the stated alignment"),
})
