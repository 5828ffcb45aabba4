"""Intel 2D block loads for DPAS operands: prove a plan right, or build the one with the
fewest loads and prove that no valid plan has fewer.

An operand is given as Triton MLIR text (``tensor<256x32xf16, #ttg.dot_op<{opIdx = 0,
parent = #ttig.dpas<{...}>, kWidth = 1}>>``, or the ``#ttg.dot_op`` attribute with
``shape=`` and ``dtype=``) or as a :class:`~verilayout.core.linear_layout.LinearLayout` with
``op_idx=`` and ``dtype=``. ``transpose=True`` means memory holds the operand
transposed (the AxBT case of the project's Intel DPAS seed, 002).

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
from verilayout.frontends.shared_text import Operand, operand
from verilayout.hw.intel.block_io import BlockLoad, Surface, Violation, lane_elements, unit_elements, violations
from verilayout.hw.intel.dpas import Dpas
from verilayout.prove.coverage import Bound, Needed, lower_bound, search_fewer
from verilayout.synth.blockload import Plan, default_surface, format_load_layout
from verilayout.synth.blockload import check_operand_plan as check, plan_operand as plan

__all__ = ["plan", "check", "operand", "Operand", "Plan", "BlockLoad", "Surface", "Violation",
           "violations", "lane_elements", "unit_elements", "lower_bound", "Bound", "Needed",
           "search_fewer", "format_load_layout", "default_surface", "Dpas"]

publish(globals(), __all__, "verilayout.blockload")
