"""The one shape every synthesized answer has: chosen parameters plus the Verdict that they are right.

Law: a plan's ``verdict`` is ``proved`` only when its parameters were proved right (and, where
the planner claims it, optimal); ``to_dict()`` is the JSON-ready form of the parameters with
``"verdict"`` among its keys.

:class:`~verilayout.synth.descriptor.DescriptorPlan`, :class:`~verilayout.synth.descriptor.SynthPlan`,
:class:`~verilayout.synth.swizzle.SwizzlePlan` and :class:`~verilayout.synth.blockload.BlockLoadPlan`
satisfy it.

>>> from verilayout.synth.descriptor import derive_descriptor
>>> p = derive_descriptor("Sw<0,4,3> o smem_ptr[16b](unset) o ((_8,4),(_8,2)):((_1,_64),(_8,256))",
...                       dtype="f16", major="MN")
>>> isinstance(p, Plan), "verdict" in p.to_dict()
(True, True)
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

from verilayout.core.smt import Verdict

__all__ = ["Plan"]


@runtime_checkable
class Plan(Protocol):
    """Parameters chosen for a goal and the verdict that they are right."""

    verdict: Verdict

    def to_dict(self) -> dict:
        """The parameters and the verdict, JSON-ready."""
        ...
