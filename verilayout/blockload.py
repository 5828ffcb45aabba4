"""Intel 2D block loads for DPAS operands: prove a plan right, or build the one with the
fewest loads and prove that no valid plan has fewer.

An operand is given as Triton MLIR text (``tensor<256x32xf16, #ttg.dot_op<{opIdx = 0,
parent = #ttig.dpas<{...}>, kWidth = 1}>>``, or the ``#ttg.dot_op`` attribute with
``shape=`` and ``dtype=``) or as a :class:`~verilayout.core.linear_layout.LinearLayout` with
``op_idx=`` and ``dtype=``. ``transpose=True`` means memory holds the operand
transposed (the seed's AxBT case, ``002_5b1756cea8788f7c.txt``).

>>> A = ("tensor<256x32xf16, #ttg.dot_op<{opIdx = 0, parent = #triton_intel_gpu.dpas<{"
...      "repeatCount = 8, systolicDepth = 8, executionSize = 16, opsPerChan = 2, "
...      "threadsPerWarp = 16, warpsPerCTA = [8, 4], repCluster = [4, 2]}>, kWidth = 1}>>")
>>> p = plan(A)
>>> [ld.describe() for ld in p.loads], p.minimal, p.lower_bound
(['16b 32r16x2c at (x=0, y=0)'], True, 1)
>>> check(p, A).proved
True
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from verilayout.errors import LayoutError
from verilayout.hw.intel.block_io import BlockLoad, Surface, Violation, lane_elements, unit_elements, violations
from verilayout.hw.intel.dpas import DTYPE_BYTES, OPS_PER_CHAN, Dpas
from verilayout.core.linear_layout import LinearLayout
from verilayout.prove.coverage import Bound, Needed, check_plan, lower_bound, search_fewer
from verilayout.core.smt import Verdict
from verilayout.synth.blockload import Plan, default_surface, format_load_layout, plan_baseline, plan_minimal

__all__ = ["plan", "check", "operand", "Operand", "Plan", "BlockLoad", "Surface", "Violation",
           "violations", "lane_elements", "unit_elements", "lower_bound", "Bound", "Needed",
           "search_fewer", "format_load_layout", "default_surface", "Dpas"]


@dataclass(frozen=True, eq=False)
class Operand:
    """A DPAS operand resolved from text or a layout: its linear layout, element type,
    ``op_idx`` (0 A, 1 B), one instruction's tile ``inst_shape`` and the DPAS parameters
    (``None`` when given as a bare layout)."""

    layout: LinearLayout
    dtype: str
    op_idx: int
    inst_shape: tuple
    dpas: Dpas | None = None

    @property
    def shape(self) -> tuple:
        return (self.layout.out_dim_size("dim0"), self.layout.out_dim_size("dim1"))


def operand(layout: Any, *, shape: Sequence[int] | None = None, dtype: str | None = None,
            op_idx: int | None = None, inst_shape: Sequence[int] | None = None) -> Operand:
    """Resolve a DPAS operand from MLIR text or a LinearLayout.

    >>> operand("#ttg.dot_op<{opIdx = 1, parent = #ttig.dpas<{repeatCount = 8, systolicDepth = 8, "
    ...         "executionSize = 16, opsPerChan = 2, threadsPerWarp = 16, warpsPerCTA = [1, 1], "
    ...         "repCluster = [1, 1]}>, kWidth = 2}>", shape=[16, 16], dtype="bf16").inst_shape
    (16, 16)
    """
    if isinstance(layout, LinearLayout):
        if op_idx is None or dtype is None:
            raise LayoutError("a LinearLayout operand needs op_idx= (0 A, 1 B) and dtype=")
        if shape is not None and tuple(shape) != (layout.out_dims.get("dim0"),
                                                  layout.out_dims.get("dim1")):
            raise LayoutError(f"shape {list(shape)} differs from the layout's out dims "
                              f"{layout.out_dims}")
        _check_dtype(dtype)
        inst = tuple(inst_shape) if inst_shape is not None else None
        if inst is None:
            k = 8 * OPS_PER_CHAN[dtype]
            inst = (8, k) if op_idx == 0 else (k, 16)
        return Operand(layout, dtype, op_idx, inst)
    if not isinstance(layout, str):
        raise LayoutError(f"expected MLIR text or a LinearLayout, got {type(layout).__name__}")
    return _from_text(layout, shape, dtype, op_idx)


def _check_dtype(dtype: Any) -> str:
    if dtype not in DTYPE_BYTES:
        raise LayoutError(f"element type {dtype!r} is not one DPAS multiplies (known: "
                          f"{', '.join(DTYPE_BYTES)})")
    return dtype


def _from_text(text: str, shape, dtype, op_idx) -> Operand:
    from verilayout.frontends import triton_intel
    from verilayout.frontends.mlir import Attr, TensorType
    from verilayout.frontends.triton import parse_attr
    value = parse_attr(text)
    if isinstance(value, TensorType):
        if shape is not None and tuple(shape) != tuple(value.shape):
            raise LayoutError(f"shape {list(shape)} differs from the type's "
                              f"{'x'.join(map(str, value.shape))}")
        if dtype is not None and dtype != value.elem:
            raise LayoutError(f"dtype {dtype!r} differs from the type's element type "
                              f"{value.elem!r}")
        shape, dtype, attr = tuple(value.shape), value.elem, value.encoding
    else:
        attr = value
    if shape is None or dtype is None:
        raise LayoutError("give the tensor type (tensor<256x32xf16, #ttg.dot_op<...>>), or "
                          "shape= and dtype= with the attribute")
    _check_dtype(dtype)
    parent = attr.params.get("parent") if isinstance(attr, Attr) else None
    if not (isinstance(attr, Attr) and attr.name in ("ttg.dot_op", "triton_gpu.dot_op")
            and triton_intel.is_dpas(parent)):
        name = f"#{attr.name}" if isinstance(attr, Attr) else repr(attr)
        raise LayoutError(f"block-load plans feed DPAS operands: expected #ttg.dot_op with a "
                          f"#ttig.dpas parent, got {name}")
    try:
        layout = triton_intel.dot_op_dpas_to_linear(attr.params, parent, tuple(shape))
        dpas = triton_intel.dpas_params(parent.params)
    except LayoutError as e:
        key = next((k for k in (*attr.params, *parent.params) if f"'{k}'" in str(e)), None)
        where = parent.where(key) if key in parent.params else attr.where(key)
        raise LayoutError(f"{where}: {e}") from None
    idx = attr.params["opIdx"]
    if op_idx is not None and op_idx != idx:
        raise LayoutError(f"op_idx={op_idx} but the text has opIdx = {idx}")
    if OPS_PER_CHAN[dtype] != dpas.ops_per_chan:
        raise LayoutError(f"{attr.where('parent')}: the DPAS layout has opsPerChan = "
                          f"{dpas.ops_per_chan} but {dtype} needs {OPS_PER_CHAN[dtype]}")
    return Operand(layout, dtype, idx, dpas.inst_shape(idx), dpas)


def plan(layout: Any, *, dtype: str | None = None, transpose: bool = False, arch: str = "xe2",
         shape: Sequence[int] | None = None, op_idx: int | None = None,
         inst_shape: Sequence[int] | None = None, surface: Surface | None = None,
         warp: int = 0, baseline: bool = False, search: bool = True) -> Plan:
    """The plan with the fewest loads per sub-group (``baseline=True``: the seed's plan),
    with a lower-bound proof that no valid plan uses fewer.

    >>> B = ("tensor<32x256xf16, #ttg.dot_op<{opIdx = 1, parent = #ttig.dpas<{repeatCount = 8, "
    ...      "systolicDepth = 8, executionSize = 16, opsPerChan = 2, threadsPerWarp = 16, "
    ...      "warpsPerCTA = [8, 4], repCluster = [4, 2]}>, kWidth = 2}>>")
    >>> len(plan(B).loads), len(plan(B, transpose=True).loads)
    (2, 4)
    """
    op = operand(layout, shape=shape, dtype=dtype, op_idx=op_idx, inst_shape=inst_shape)
    kw = dict(dtype=op.dtype, op_idx=op.op_idx, inst_shape=op.inst_shape, transpose=transpose,
              arch=arch, surface=surface, warp=warp)
    if baseline:
        return plan_baseline(op.layout, **kw)
    return plan_minimal(op.layout, search=search, **kw)


def check(plan: Plan, layout: Any, *, shape: Sequence[int] | None = None,
          warps: Any = 0) -> Verdict:
    """Prove that ``plan`` respects every limit, loads every element each DPAS instruction
    of the sub-group reads, and that its shuffle delivers each to the right register;
    otherwise the counterexample (the broken limit, the missed element, or the register
    that receives the wrong element). ``warps``: a warp, a list, or ``"all"`` (the plan
    is moved to each warp's origin).

    >>> A = ("tensor<256x32xf16, #ttg.dot_op<{opIdx = 0, parent = #ttig.dpas<{repeatCount = 8, "
    ...      "systolicDepth = 8, executionSize = 16, opsPerChan = 2, threadsPerWarp = 16, "
    ...      "warpsPerCTA = [8, 4], repCluster = [4, 2]}>, kWidth = 1}>>")
    >>> p = plan(A)
    >>> check(p, A, warps="all").proved
    True
    >>> from dataclasses import replace
    >>> short = replace(p, loads=(replace(p.loads[0], height=16),))
    >>> check(short, A).counterexample
    {'register': 16, 'lane': 0, 'element': [16, 0], 'missed': True, 'warp': 0}
    """
    if not isinstance(plan, Plan):
        raise LayoutError(f"expected a Plan, got {type(plan).__name__}")
    op = operand(layout, shape=shape, dtype=plan.dtype, op_idx=plan.op_idx,
                 inst_shape=plan.inst_shape)
    if op.shape != tuple(plan.shape):
        raise LayoutError(f"the plan is for shape {list(plan.shape)}, the layout has "
                          f"{list(op.shape)}")
    n_warps = op.layout.in_dims.get("warp", 1)
    if warps == "all":
        warps = list(range(n_warps))
    elif isinstance(warps, int) and not isinstance(warps, bool):
        warps = [warps]
    t = DTYPE_BYTES[plan.dtype]
    home = Needed.from_layout(op.layout, plan.warp, plan.transpose)
    origin = home.coords[0, 0]
    for w in warps:
        need = Needed.from_layout(op.layout, w, plan.transpose)
        dy, dx = (int(v) for v in need.coords[0, 0] - origin)
        loads = [_moved(ld, dx, dy, t) for ld in plan.loads]
        v = check_plan(loads, plan.shuffle, need, t, plan.arch)
        if not v.proved:
            cex = dict(v.counterexample, warp=w)
            return Verdict.fails(cex, f"warp {w}: {v.reason}", method=v.method)
    return Verdict.holds(f"{v.reason}, for warp{'s' if len(warps) != 1 else ''} "
                         f"{', '.join(map(str, warps))}", method="enumeration",
                         warps=list(warps))


def _moved(ld: BlockLoad, dx_t: int, dy: int, t: int) -> BlockLoad:
    if (dx_t * t) % ld.elem_bytes:
        raise LayoutError(f"moving {ld.describe()} by {dx_t} elements is not a whole number "
                          f"of its {8 * ld.elem_bytes}-bit elements")
    return ld.moved(dx_t * t // ld.elem_bytes, dy)
