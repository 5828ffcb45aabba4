"""Spec-file sources and obligation kinds for Intel 2D block loads feeding DPAS operands.
Exported as the mappings ``SOURCES`` and ``KINDS``,
joined by :func:`verilayout.spec.kinds.registry`.

An *operand* is named by a ``[layouts]`` entry holding its Triton text: a tensor type
(``tensor<256x32xf16, #ttg.dot_op<{..., parent = #ttig.dpas<...>}>>``), or the
``#ttg.dot_op`` attribute with ``shape`` (the element type then comes from the
obligation's or plan's ``dtype``).

Sources:

* ``plan = {operand = "A", algorithm = "minimal" | "baseline", transpose, arch, warp}``:
  a synthesized plan (:func:`verilayout.blockload.plan`);
* ``plan = {operand = "A", loads = [...], transpose, ...}``: a plan given as
  ``Plan.to_dict()`` writes it (``shuffle`` optional with ``operand``: then each DPAS
  register takes its element from the load that delivers it; each load's ``surface``
  defaults to the operand stored densely);
* ``plan_layout = "PLAN"``: the plan's data in the Intel XPU backend's terms (its 2D block-load lowering's
  tile layout, ``LoadStoreOpToLLVM.cpp``), a LinearLayout
  ``offset, iteration, load -> dim0, dim1``;
* placement (both plan forms): ``origin = [x0, y0]`` puts the operand's element ``(r, c)`` at
  surface element ``(y0 + r, x0 + c)``; ``base_address = B`` (the operand's first byte) puts
  the surface at ``B & ~63`` and adds ``(B % 64) / elem_bytes`` to ``x0``;
* ``sublayout = {layout = "NAME", ins = [...]}``: the layout with only the listed input
  dims (the others fixed at 0), e.g. warp 0's view (``ins = ["register", "lane"]``).

Kinds: ``blockload_covers`` (a plan feeds the operand, or an Intel-backend-style load layout names
exactly the elements the sub-group reads; ``origin``/``base_address`` state where the operand
really is, default the plan's placement) and ``plan_minimal`` (no valid plan has fewer
loads; ``origin``/``base_address`` place the operand for the claimed count).

>>> from verilayout.spec import load_spec_text, run_spec
>>> spec = load_spec_text('''
... [layouts.A]
... text = "tensor<8x16xf16, #ttg.dot_op<{opIdx = 0, parent = #ttig.dpas<{repeatCount = 8, systolicDepth = 8, executionSize = 16, opsPerChan = 2, threadsPerWarp = 16, warpsPerCTA = [1, 1], repCluster = [1, 1]}>, kWidth = 1}>>"
... [layouts.one_load]
... plan = { operand = "A", loads = [{ elem_bytes = 2, width = 16, height = 8 }] }
... [[obligation]]
... kind = "blockload_covers"
... plan = "one_load"
... operand = "A"
... [[obligation]]
... kind = "plan_minimal"
... operand = "A"
... loads = 1
... ''', "inline.toml")
>>> [r.verdict.status for r in run_spec(spec)]
['proved', 'proved']
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from verilayout.errors import LayoutError
from verilayout.core.linear_layout import LinearLayout
from verilayout.core.smt import Verdict
from types import MappingProxyType

from verilayout.frontends.shared_text import operand
from verilayout.synth.blockload import check_operand_plan as check
from verilayout.hw.intel.block_io import BlockLoad, Surface, require_origin, placement
from verilayout.synth.blockload import BatchedPlan, Plan, default_surface
from verilayout.synth.blockload import plan_operand as synth
from verilayout.hw.intel.dpas import DTYPE_BYTES
from verilayout.prove.coverage import Needed, compare_load_layout, delivered_arrays, lookup
from verilayout.spec.format import Kind, only_keys, prefixed

_SYNTH_KEYS = {"operand", "algorithm", "transpose", "arch", "warp", "dtype", "origin",
               "base_address"}
_PLAN_KEYS = {"operand", "dtype", "op_idx", "shape", "inst_shape", "transpose", "arch", "warp",
              "warp_origin", "algorithm", "loads", "shuffle", "lower_bound", "minimal", "verdict",
              "layout", "origin", "base_address"}


def resolve_operand(spec, name: Any, where: str, dtype: str | None = None):
    """The :class:`verilayout.blockload.Operand` a ``[layouts]`` entry's text describes.

    >>> resolve_operand(None, None, "here")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: here: operand must name a [layouts] entry holding the operand's Triton text
    """
    entry = spec.layouts.get(name) if spec is not None and isinstance(name, str) else None
    if isinstance(entry, str):
        entry = {"text": entry}
    if not isinstance(entry, dict) or "text" not in entry:
        raise LayoutError(f"{where}: operand must name a [layouts] entry holding the operand's "
                          "Triton text")
    spec.layout(name, where)                     # the entry itself is valid
    return prefixed(where, operand, entry["text"], shape=entry.get("shape"), dtype=dtype)


# ----- sources ------------------------------------------------------------------------------

def _src_plan(entry, spec, where):
    path = spec.path
    w = f"{path}: {where}"
    only_keys(entry, "plan", ("plan", "description"), w)
    args = entry["plan"]
    if not isinstance(args, dict):
        raise LayoutError(f"{w}: plan must be a table (operand = ..., or the fields of "
                          "Plan.to_dict())")
    if "loads" in args:
        return _given_plan(args, spec, w)
    unknown = set(args) - _SYNTH_KEYS
    if unknown:
        raise LayoutError(f"{w}: unknown keys {sorted(unknown)} in a synthesized plan (accepted: "
                          f"{', '.join(sorted(_SYNTH_KEYS))}; give 'loads' for a written plan)")
    if "operand" not in args:
        raise LayoutError(f"{w}: plan needs 'operand' (or 'loads')")
    algorithm = args.get("algorithm", "minimal")
    if algorithm not in ("minimal", "baseline"):
        raise LayoutError(f"{w}: algorithm must be 'minimal' or 'baseline', not {algorithm!r}")
    op = resolve_operand(spec, args["operand"], w, args.get("dtype"))
    return prefixed(w, synth, op.layout, dtype=op.dtype, op_idx=op.op_idx, inst_shape=op.inst_shape,
                 transpose=args.get("transpose", False), arch=args.get("arch", "xe2"),
                 warp=args.get("warp", 0), baseline=algorithm == "baseline",
                 origin=args.get("origin", (0, 0)), base_address=args.get("base_address"))


def _given_plan(args: dict, spec, w: str):
    unknown = set(args) - _PLAN_KEYS
    if unknown:
        raise LayoutError(f"{w}: unknown keys {sorted(unknown)} in plan (accepted: "
                          f"{', '.join(sorted(_PLAN_KEYS))})")
    d = {k: v for k, v in args.items() if k not in ("operand", "base_address")}
    if "operand" not in args:
        if "base_address" in args:
            raise LayoutError(f"{w}: base_address needs 'operand' (the element type); give "
                              "origin and each load's surface instead")
        return prefixed(w, Plan.from_dict, d)
    op = resolve_operand(spec, args["operand"], w, args.get("dtype"))
    for key, have in (("dtype", op.dtype), ("op_idx", op.op_idx), ("shape", list(op.shape)),
                      ("inst_shape", list(op.inst_shape))):
        if key in d and d[key] != have:
            raise LayoutError(f"{w}: plan {key} = {d[key]!r} but the operand has {have!r}")
        d[key] = have
    transpose = d.get("transpose", False)
    t = DTYPE_BYTES[op.dtype]
    origin = prefixed(w, require_origin, d.get("origin", [0, 0]))
    base = 0
    if "base_address" in args:
        base, origin = prefixed(w, placement, args["base_address"], t, origin)
    d["origin"] = list(origin)
    mem = tuple(op.shape[::-1]) if transpose else tuple(op.shape)
    mem = (mem[0] + origin[1], mem[1] + origin[0])
    if not isinstance(d["loads"], list):
        raise LayoutError(f"{w}: plan 'loads' must be a list of load tables")
    dense = prefixed(w, default_surface, mem, t)
    dense = Surface(dense.width, dense.height, dense.pitch, base).to_dict()
    d["loads"] = [({**ld, "surface": dense}
                   if isinstance(ld, dict) and "surface" not in ld else ld) for ld in d["loads"]]
    if "shuffle" not in d:
        d["shuffle"] = _derived_shuffle(d, op, transpose, t, w)
    return prefixed(w, Plan.from_dict, d)


def _derived_shuffle(d: dict, op, transpose: bool, t: int, w: str) -> list:
    """Each DPAS register takes its element from the first load delivering it to its lane
    (``[0, -1]`` where none does: the coverage check then names the missed element)."""
    loads = [prefixed(w, BlockLoad.from_dict, ld) for ld in d["loads"]]
    need = prefixed(w, Needed.from_layout, op.layout, d.get("warp", 0), bool(transpose))
    need = need.placed(*d["origin"])
    found, load, elem = lookup(need.keys(), delivered_arrays(loads, t, need.shape))
    load, elem = np.where(found, load, 0), np.where(found, elem, -1)
    return [[[int(a), int(b)] for a, b in zip(lr, er)] for lr, er in zip(load, elem)]


def _src_plan_layout(entry, spec, where):
    path = spec.path
    w = f"{path}: {where}"
    extra = set(entry) - {"plan_layout", "description"}
    if extra:
        raise LayoutError(f"{w}: unknown keys {sorted(extra)} next to 'plan_layout'")
    name = entry["plan_layout"]
    p = spec.layout(name, w) if isinstance(name, str) else None
    if not isinstance(p, Plan):
        raise LayoutError(f"{w}: plan_layout must name a [layouts] entry holding a plan")
    return prefixed(w, lambda: p.layout)


def _src_sublayout(entry, spec, where):
    path = spec.path
    w = f"{path}: {where}"
    extra = set(entry) - {"sublayout", "description"}
    args = entry["sublayout"]
    if extra or not isinstance(args, dict) or set(args) != {"layout", "ins"}:
        raise LayoutError(f"{w}: write sublayout = {{layout = \"NAME\", ins = [\"register\", ...]}}")
    base = spec.layout(args["layout"], w) if isinstance(args["layout"], str) else None
    if not isinstance(base, LinearLayout):
        raise LayoutError(f"{w}: sublayout needs 'layout' naming a linear layout entry")
    ins = args["ins"]
    if not isinstance(ins, list) or set(ins) - set(base.in_dim_names):
        raise LayoutError(f"{w}: ins must list input dims of '{args['layout']}' "
                          f"(have {base.in_dim_names})")
    return base.sublayout(ins, base.out_dim_names)


# ----- kinds --------------------------------------------------------------------------------

def _resolve_plan(spec, plan: Any, where: str):
    if isinstance(plan, dict):
        return _src_plan({"plan": plan}, spec, where.split(": ", 1)[-1])
    if isinstance(plan, str):
        p = spec.layout(plan, where)
        if isinstance(p, (Plan, BatchedPlan, LinearLayout)):
            return p
    raise LayoutError(f"{where}: plan must name a plan or load-layout entry, or be a plan table")


def _pack(pack: Any, where: str) -> tuple[int, int]:
    if pack is None:
        return (0, 1)
    if not (isinstance(pack, list) and len(pack) == 2 and pack[0] in (0, 1)
            and isinstance(pack[1], int) and not isinstance(pack[1], bool) and pack[1] >= 1):
        raise LayoutError(f"{where}: pack must be [dim (0 or 1), elements per slot], got {pack!r}")
    return tuple(pack)


def _placed_storage(p: Plan, origin, base_address, where: str):
    """The (surface, origin) where the operand really is: the plan's own by default."""
    if base_address is None:
        return None, (None if origin is None else prefixed(where, require_origin, origin))
    base, xy = prefixed(where, placement, base_address, p.elem_bytes,
                        (0, 0) if origin is None else origin)
    s = p.loads[0].surface
    return Surface(s.width, s.height, s.pitch, base), xy


def _blockload_covers(spec, where, timeout_ms, plan, operand, dtype=None, warps=None,
                      transpose=None, pack=None, mode="exact", origin=None, base_address=None):
    """A plan feeds every register of the sub-group's DPAS operand; or an Intel-backend-style load
    layout names exactly (``mode = "exact"``) or only (``"within"``) elements it reads.
    ``origin``/``base_address``: where the operand really is (default: the plan's placement)."""
    p = _resolve_plan(spec, plan, where)
    op = resolve_operand(spec, operand, where, dtype if dtype is not None else
                         (p.dtype if isinstance(p, (Plan, BatchedPlan)) else None))
    if isinstance(p, (Plan, BatchedPlan)):      # a rank-3 operand's plan: one per batch index
        for key, v in (("transpose", transpose), ("pack", pack)):
            if v is not None:
                raise LayoutError(f"{where}: '{key}' is for load layouts; a plan carries its own")
        if mode != "exact":
            raise LayoutError(f"{where}: mode applies to load layouts; a plan is checked exactly")
        surface, xy = _placed_storage(p, origin, base_address, where)
        return prefixed(where, check, p, op.layout, warps=p.warp if warps is None else warps,
                        surface=surface, origin=xy)
    if origin is not None or base_address is not None:
        raise LayoutError(f"{where}: origin and base_address apply to plans, not load layouts")
    if mode not in ("exact", "within"):
        raise LayoutError(f"{where}: mode must be 'exact' or 'within', not {mode!r}")
    if warps is not None and not isinstance(warps, int):
        raise LayoutError(f"{where}: a load layout is checked for one warp (warps = N)")
    if transpose is not None and not isinstance(transpose, bool):
        raise LayoutError(f"{where}: transpose must be true or false")
    need = prefixed(where, Needed.from_layout, op.layout, warps or 0, bool(transpose))
    v = prefixed(where, compare_load_layout, p, need, _pack(pack, where))
    if mode == "within" and not v.proved and "slot" not in v.counterexample:
        return Verdict.holds("every element the layout names is inside the tensor and read by the "
                             "sub-group", method="enumeration")
    return v


def _plan_minimal(spec, where, timeout_ms, operand, loads=None, plan=None, dtype=None,
                  transpose=None, arch=None, warp=None, origin=None, base_address=None):
    """The fewest loads any valid plan needs is ``loads`` (or the stated plan's count, the
    plan being valid); proved by the counting bound or exhaustive search."""
    if (loads is None) == (plan is None):
        raise LayoutError(f"{where}: give exactly one of 'loads' (the claimed minimum) and 'plan'")
    op = resolve_operand(spec, operand, where, dtype)
    if plan is not None:
        given = [k for k, v in (("transpose", transpose), ("arch", arch), ("warp", warp),
                                ("origin", origin), ("base_address", base_address))
                 if v is not None]
        if given:
            raise LayoutError(f"{where}: {', '.join(given)} come from the plan; drop them")
        p = _resolve_plan(spec, plan, where)
        if not isinstance(p, (Plan, BatchedPlan)):
            raise LayoutError(f"{where}: plan must be a plan (not a load layout)")
        v = prefixed(where, check, p, op.layout, warps=p.warp)
        if not v.proved:
            return v
        one = p.plan if isinstance(p, BatchedPlan) else p
        loads = p.total_loads if isinstance(p, BatchedPlan) else len(p.loads)
        transpose, arch, warp = one.transpose, one.arch, one.warp
        origin, base_address = one.origin, None
        surface = one.loads[0].surface
    transpose = False if transpose is None else transpose
    arch = "xe2" if arch is None else arch
    warp = 0 if warp is None else warp
    if isinstance(loads, bool) or not isinstance(loads, int) or loads < 1:
        raise LayoutError(f"{where}: loads must be a positive integer, got {loads!r}")
    else:
        surface = None
    best = prefixed(where, synth, op.layout, dtype=op.dtype, op_idx=op.op_idx,
                 inst_shape=op.inst_shape, transpose=transpose, arch=arch, warp=warp,
                 origin=(0, 0) if origin is None else origin, base_address=base_address,
                 surface=surface)
    return _compare_minimum(best, loads)


def _compare_minimum(best, loads: int) -> Verdict:
    """The claim "the fewest loads is ``loads``" against a synthesized plan whose
    minimality is proved (or not); a rank-3 operand's plan counts every batch index's loads."""
    n, how = len(best.loads), best.verdict.method
    used = ", ".join(ld.describe() for ld in best.loads)
    if isinstance(best, BatchedPlan):
        n, used = best.total_loads, f"{used}, once per batch index {list(best.batches)}"
        best = replace(best.plan, verdict=best.verdict, bound_argument=(
            f"every load covers one batch index, each needs {best.plan.lower_bound}: "
            f"{best.plan.bound_argument}"))
    if not best.verdict.proved:
        return Verdict.unknown(f"a valid plan with {n} loads exists, but its minimality is not "
                               f"settled: {best.verdict.reason}", method=how)
    if n == loads:
        return Verdict.holds(f"{n} load{'s suffice' if n != 1 else ' suffices'} ({used}) and "
                             f"{best.bound_argument or best.verdict.reason}", method=how)
    if n < loads:
        return Verdict.fails({"claimed": loads, "minimum": n, "plan": used.split(", ")},
                             f"{n} load{'s' if n != 1 else ''} suffice, fewer than the {loads} "
                             f"claimed: {used}", method=how)
    return Verdict.fails({"claimed": loads, "minimum": n}, f"no valid plan has fewer than {n} "
                         f"loads, so {loads} cannot be: {best.verdict.reason}", method=how)


SOURCES = MappingProxyType({"plan": _src_plan, "plan_layout": _src_plan_layout,
                            "sublayout": _src_sublayout})
KINDS = MappingProxyType({
    "blockload_covers": Kind(_blockload_covers, MappingProxyType(
        {"plan": "required", "operand": "required", "dtype": "optional", "warps": "optional",
         "transpose": "optional", "pack": "optional", "mode": "optional", "origin": "optional",
         "base_address": "optional"}),
        "the loads of a plan deliver every element the operand layout needs"),
    "plan_minimal": Kind(_plan_minimal, MappingProxyType(
        {"operand": "required", "loads": "optional", "plan": "optional", "dtype": "optional",
         "transpose": "optional", "arch": "optional", "warp": "optional", "origin": "optional",
         "base_address": "optional"}),
        "the fewest 2D block loads any valid plan needs is `loads` (or the plan's count)"),
})
