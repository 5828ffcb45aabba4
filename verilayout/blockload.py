"""Intel 2D block loads for DPAS operands: prove a plan right, or build the one with the
fewest loads and prove that no valid plan has fewer.

An operand is given as Triton MLIR text (``tensor<256x32xf16, #ttg.dot_op<{opIdx = 0,
parent = #ttig.dpas<{...}>, kWidth = 1}>>``, or the ``#ttg.dot_op`` attribute with
``shape=`` and ``dtype=``) or as a :class:`~verilayout.core.linear_layout.LinearLayout` with
``op_idx=`` and ``dtype=``. ``transpose=True`` means memory holds the operand
transposed (the AxBT case of intel-xpu-backend-for-triton ``docs/BLOCK_LOADS_LAYOUT.md``).

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

from verilayout.errors import publish
from typing import Any, Sequence

from verilayout.core.smt import Verdict
from verilayout.dtypes import IntelArch
from verilayout.frontends.shared_text import load_block_layout, operand
from verilayout.hw.intel.block_io import BlockLoad, Surface, Violation, lane_elements, unit_elements, violations
from verilayout.hw.intel.dpas import Dpas, Operand
from verilayout.prove.coverage import Bound, Needed, lower_bound, search_fewer
from verilayout.synth.blockload import BatchedPlan, Plan, default_surface, format_load_layout
from verilayout.synth.blockload import check_operand_plan, plan_operand


def plan(layout: Any, *, dtype: str | None = None, transpose: bool = False, arch: IntelArch = "xe2",
         shape: Sequence[int] | None = None, op_idx: int | None = None,
         inst_shape: Sequence[int] | None = None, surface: Surface | None = None,
         warp: int = 0, baseline: bool = False, search: bool = True,
         negative_offsets: bool = True, origin=(0, 0), base_address: int | None = None) -> Plan | BatchedPlan:
    """:func:`verilayout.synth.blockload.plan_operand` of ``layout``, Triton text read first at the
    door (:func:`~verilayout.frontends.shared_text.load_block_layout`: a DPAS operand or another
    distributed tensor); the other options as there.

    >>> B = ("tensor<64x128xf16, #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [16, 1], "
    ...      "warpsPerCTA = [4, 1], order = [1, 0]}>>")
    >>> len(plan(B).loads)
    8
    """
    loaded = load_block_layout(layout, shape=shape, dtype=dtype, op_idx=op_idx, inst_shape=inst_shape)
    return plan_operand(loaded, dtype=dtype, transpose=transpose, arch=arch, shape=shape, op_idx=op_idx,
                        inst_shape=inst_shape, surface=surface, warp=warp, baseline=baseline, search=search,
                        negative_offsets=negative_offsets, origin=origin, base_address=base_address)


def check(plan: Plan | BatchedPlan, layout: Any, *, shape: Sequence[int] | None = None, warps: Any = 0,
          surface: Surface | Sequence[Surface] | None = None, origin: Any = None) -> Verdict:
    """:func:`verilayout.synth.blockload.check_operand_plan` of ``plan`` against ``layout``, Triton
    text read first at the door as the plan's kind of operand (DPAS or not), element type and
    instruction tile.

    >>> A = ("tensor<256x32xf16, #ttg.dot_op<{opIdx = 0, parent = #ttig.dpas<{repeatCount = 8, "
    ...      "systolicDepth = 8, executionSize = 16, opsPerChan = 2, threadsPerWarp = 16, "
    ...      "warpsPerCTA = [8, 4], repCluster = [4, 2]}>, kWidth = 1}>>")
    >>> check(plan(A), A, warps="all").proved
    True
    """
    if isinstance(plan, (Plan, BatchedPlan)):      # a rank-3 plan's slice plan says the kind
        layout = load_block_layout(layout, shape=shape, dtype=plan.dtype, op_idx=plan.op_idx,
                                   inst_shape=plan.inst_shape, dpas=plan.op_idx is not None)
    return check_operand_plan(plan, layout, shape=shape, warps=warps, surface=surface, origin=origin)


__all__ = ["plan", "check", "operand", "Operand", "Plan", "BatchedPlan", "BlockLoad", "Surface", "Violation",
           "violations", "lane_elements", "unit_elements", "lower_bound", "Bound", "Needed",
           "search_fewer", "format_load_layout", "default_surface", "Dpas"]

publish(globals(), __all__, "verilayout.blockload")
