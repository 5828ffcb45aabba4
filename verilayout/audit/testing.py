"""``assert_kernel_clean``: fail a test when the audit of a kernel finds something.

Law: it raises :class:`KernelNotClean` iff ``verilayout audit --fail-on fail_on`` of the same
kernel exits 1, and a one-line ``LayoutError`` (naming what is missing, and where) iff it exits 2:
a text or file that holds no whole kernel (empty, ``module {``, not TTGIR at all) never passes.

>>> assert_kernel_clean("")
Traceback (most recent call last):
...
verilayout.errors.LayoutError: assert_kernel_clean: <text>: empty: no TTGIR module
"""
from __future__ import annotations

import os

from verilayout.audit.formats import fails, require_fail_on
from verilayout.audit.model import FileReport
from verilayout.errors import LayoutError

__all__ = ["assert_kernel_clean", "KernelNotClean"]


class KernelNotClean(AssertionError):
    """The audit found findings at or above the threshold; ``report`` holds them all."""

    def __init__(self, message: str, report):
        super().__init__(message)
        self.report = report


def _looks_like_path(t: str) -> bool:
    return "\n" not in t and len(t) < 4096 and (t.endswith((".ttgir", ".ptx")) or os.path.isfile(t))


def assert_kernel_clean(ttgir_text_or_path: str, fail_on: str = "error") -> FileReport:
    """Audit TTGIR text (or a path to a ``.ttgir`` or ``.ptx`` file); raise :class:`KernelNotClean`
    listing every finding of severity ``fail_on`` or worse (``fail_on``: the CLI's ``--fail-on``
    vocabulary, ``error``, ``warning``, ``note`` or ``never``); return the report otherwise. Input
    that holds no whole kernel raises ``LayoutError``.
    """
    from verilayout.audit import paths      # deferred: start-up (the audit imports numpy, z3)
    require_fail_on(fail_on, "assert_kernel_clean")
    t = ttgir_text_or_path
    if not isinstance(t, str):
        raise LayoutError(f"assert_kernel_clean: expected TTGIR text or a path, got {type(t).__name__}")
    try:
        # the CLI's audit of one file (call sites of inlined helpers, suggestions): the same findings
        rep = paths.audit_any(t) if _looks_like_path(t) else paths.audit_ttgir_text(t, "<text>")
    except LayoutError as e:
        raise LayoutError(f"assert_kernel_clean: {e}") from None
    bad = [c for c in rep.checks if fails(c, fail_on)]
    if bad:
        lines = [f"{rep.path}: {len(bad)} finding(s) at or above {fail_on}:"]
        lines += [f"  {c.severity}: line {c.line}" + (f" ({c.loc})" if c.loc else "") +
                  f": {c.op} [{c.check}] {c.message}" for c in bad]
        raise KernelNotClean("\n".join(lines), rep)
    return rep
