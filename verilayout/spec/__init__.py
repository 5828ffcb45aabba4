"""Spec files: obligations in TOML (``format``), the runner that proves them (``runner``),
the kinds (``kinds/``), the JUnit report (``junit``).

>>> spec = load_spec_text('[layouts.l]\\nbases = {lane = [[1], [2]]}\\nout_dims = {dim0 = 4}\\n'
...                       '[[obligation]]\\nkind = "invertible"\\nlayout = "l"\\n', "inline.toml")
>>> [r.verdict.status for r in run_spec(spec)]
['proved']
"""
from __future__ import annotations

from verilayout.spec.format import (MAX_SPEC_BYTES, Kind, Obligation, Registry, Spec, collect,
                                    parse_spec, prefixed, read_text)
from verilayout.spec.kinds import registry
from verilayout.spec.runner import Outcome, Result, evaluate, run_all, run_obligation, run_spec

__all__ = ["Kind", "MAX_SPEC_BYTES", "Obligation", "Outcome", "Registry", "Result", "Spec",
           "collect", "evaluate", "kinds", "load_spec", "load_spec_text", "parse_spec", "prefixed",
           "read_text", "registry", "run_all", "run_obligation", "run_spec"]


def kinds() -> list[str]:
    """The obligation kinds a spec may use, sorted.

    >>> "formula" in kinds()
    True
    """
    return sorted(registry().kinds)


def load_spec_text(text: str, path: str, reg: Registry | None = None) -> Spec:
    """Parse the TOML text of a spec file with the kinds of ``reg`` (default: all)."""
    return parse_spec(text, path, reg or registry())


def load_spec(path: str, reg: Registry | None = None) -> Spec:
    """Read (at most MAX_SPEC_BYTES, UTF-8) and parse the spec file at ``path``."""
    return load_spec_text(read_text(path, "spec"), path, reg)
