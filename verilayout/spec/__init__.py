"""Spec files: obligations in TOML, the runner that proves them, one module per kind in ``kinds/``."""
from verilayout.spec.core import (Obligation, Result, Spec, collect, kinds, load_spec, load_spec_text,
                                  run_obligation, run_spec)

__all__ = ["Obligation", "Result", "Spec", "collect", "kinds", "load_spec", "load_spec_text",
           "run_obligation", "run_spec"]
