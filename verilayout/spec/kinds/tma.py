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
  bytes, measured); a staged CuTe ``layout`` (3 modes, the stage last, as sm90 collectives declare
  it) is the ring itself (its stages and their spacing), or ``stage = N`` checks that stage alone.

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

import math
from types import MappingProxyType

from verilayout.core.cute.stages import is_staged, stage_views
from verilayout.hw.nvidia.descriptor import operand_bits

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
                 base_align=128, base=None, inner=None, trust_inferred=False, start=None, stage=None):
    """TMA's writes into every stage of the ring are what the reader reads."""
    tmap = _tensor_map(tensor_map, where)
    if (layout is None) == (descriptor is None):
        raise LayoutError(f"{where}: give exactly one reader, 'layout' or 'descriptor'")
    if layout is not None:
        lay = spec.layout(layout, where)
        if is_staged(lay) or stage is not None:
            lay, ring = prefixed(where, _staged_ring, lay, stage, dtype, stages, stage_bytes, base, base_align)
            stages, stage_bytes, base, base_align = ring
        reader = prefixed(where, layout_reader, lay, dtype=dtype, mn_dim=mn_dim,
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


def _staged_ring(lay, stage, dtype: str, stages, stage_bytes, base, base_align) -> tuple:
    """A staged CuTe reader (3 modes, the stage last) as (its tile, the ring's ``stages``,
    ``stage_bytes``, ``base``, ``base_align``): every stage, when they are equally spaced (a ring;
    ``stages``/``stage_bytes`` given beside it must agree), or the one ``stage``, alone at the base
    moved by its offset."""
    if not is_staged(lay):
        raise LayoutError("stage applies to a staged CuTe layout (3 modes: M/N, K, stage)")
    views = stage_views(lay, stage, operand_bits(dtype))
    if stage is not None:
        shift = views[0].shift_bytes
        where = (base + shift, base_align) if base is not None else \
            (None, math.gcd(base_align, shift) if shift else base_align)
        return views[0].layout, (1, None) + where
    step = views[1].shift_bytes if len(views) > 1 else None
    if any(v.shift_bytes != v.stage * (step or 0) for v in views):
        raise LayoutError("the stages of the layout are not equally spaced; check them one by one with stage = N")
    if stages not in (1, len(views)) or (stage_bytes is not None and step is not None and stage_bytes != step):
        raise LayoutError(f"the layout has {len(views)} stages {step} bytes apart; stages / stage_bytes "
                          "disagree (leave them out)")
    return views[0].layout, (len(views), step, base, base_align)


SOURCES = MappingProxyType({})
KINDS = MappingProxyType({
    "tma_matches": Kind(_tma_matches, MappingProxyType({
        "tensor_map": "required", "dtype": "required", "layout": "optional", "descriptor": "optional",
        "major": "optional", "mn": "optional", "k_blocks": "optional", "k_step": "optional",
        "mn_blocks": "optional", "mn_step": "optional", "arch": "optional", "mn_dim": "optional",
        "swizzle_units": "optional", "relative": "optional", "offset": "optional", "stages": "optional",
        "stage_bytes": "optional", "copies": "optional", "base_align": "optional", "base": "optional",
        "inner": "optional", "trust_inferred": "optional", "start": "optional", "stage": "optional"}),
        "every stage of a TMA-filled shared-memory ring is read (layout or wgmma descriptors) where TMA "
        "wrote it, at every buffer base of the stated alignment"),
})
