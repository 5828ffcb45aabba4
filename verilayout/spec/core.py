"""Compatibility names: the spec runner now lives in ``format``, ``runner`` and ``kinds.linear``.

>>> from verilayout.spec.core import load_spec_text
"""
from __future__ import annotations

from verilayout.spec import (Obligation, Result, Spec, collect, kinds, load_spec, load_spec_text,
                             prefixed, run_obligation, run_spec)
from verilayout.spec.kinds.linear import as_linear as _linear
from verilayout.spec.kinds.linear import check_surjective

__all__ = ["Obligation", "Result", "Spec", "collect", "kinds", "load_spec", "load_spec_text",
           "prefixed", "run_obligation", "run_spec", "check_surjective", "_linear"]
