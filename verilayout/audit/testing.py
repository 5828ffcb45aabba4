"""``assert_kernel_clean``: fail a test when the audit of a kernel finds something.

>>> assert_kernel_clean("module {\\n}\\n").counts()["errors"]
0
"""
from __future__ import annotations

import os

from verilayout.audit.model import FileReport
from verilayout.audit.ttgir import audit_file, audit_text

__all__ = ["assert_kernel_clean", "KernelNotClean"]

_RANK = {"error": 0, "warning": 1, "note": 2}


class KernelNotClean(AssertionError):
    """The audit found findings at or above the threshold; ``report`` holds them all."""

    def __init__(self, message: str, report: FileReport):
        super().__init__(message)
        self.report = report


def assert_kernel_clean(ttgir_text_or_path: str, fail_on: str = "error") -> FileReport:
    """Audit TTGIR text (or a path to a ``.ttgir`` file); raise :class:`KernelNotClean` listing
    every finding of severity ``fail_on`` or worse; return the report otherwise.

    Law: raises iff ``exit_code`` of ``verilayout audit --fail-on fail_on`` would be 1.
    """
    if fail_on not in _RANK:
        raise ValueError(f"fail_on={fail_on!r}: expected error, warning or note")
    t = ttgir_text_or_path
    looks_path = isinstance(t, str) and "\n" not in t and (t.endswith(".ttgir") or os.path.isfile(t))
    rep = audit_file(t) if looks_path else audit_text(t, "<text>")
    bad = [c for c in rep.checks if c.severity is not None and _RANK[c.severity] <= _RANK[fail_on]]
    if bad:
        lines = [f"{rep.path}: {len(bad)} finding(s) at or above {fail_on}:"]
        lines += [f"  {c.severity}: line {c.line}" + (f" ({c.loc})" if c.loc else "") +
                  f": {c.op} [{c.check}] {c.message}" for c in bad]
        raise KernelNotClean("\n".join(lines), rep)
    return rep
