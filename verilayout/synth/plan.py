"""The one shape every synthesized answer has: chosen parameters plus the Verdict that they are right.

Law: a plan's ``verdict`` is ``proved`` only when its parameters were proved right (and, where
the planner claims it, optimal); ``to_dict()`` is the JSON-ready form of the parameters with
``"verdict"`` among its keys.

:class:`~verilayout.synth.descriptor.DescriptorPlan`, :class:`~verilayout.synth.descriptor.SynthPlan`,
:class:`~verilayout.synth.swizzle.SwizzlePlan` and :class:`~verilayout.synth.blockload.BlockLoadPlan`
satisfy it.

>>> from verilayout.synth.descriptor import derive_descriptor
>>> from verilayout.core.cute import Layout
>>> p = derive_descriptor(Layout(((8, 4), (8, 2)), ((1, 64), (8, 256))),
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
