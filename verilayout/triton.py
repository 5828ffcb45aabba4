"""Audit every kernel as Triton compiles it: one line in a ``conftest.py`` turns a test suite into
an audit of each kernel it compiles.

``install()`` sets Triton's public compilation listener (``triton.knobs.compilation.listener``,
called by ``triton.compile`` after each compile and on each cache hit with the files it keeps:
``<name>.ttgir``, ``<name>.ptx``, ...) to one that audits those files (``verilayout audit``: the
TTGIR and the PTX beside it) and reports each finding at or above ``fail_on`` as a
:class:`KernelAuditWarning`, or raises :class:`KernelAuditError` from the compile in strict mode.
A listener installed before is still called first; ``uninstall()`` puts it back. No private
function of Triton is patched.

Law: the findings reported for a compiled kernel are those ``verilayout audit`` reports for the
files Triton kept for it; a kernel is audited once per process (its cache files are content-keyed).

>>> install.__name__, uninstall.__name__
('install', 'uninstall')
"""
from __future__ import annotations

import os
import warnings
from typing import Any, Callable

from verilayout.audit.formats import fails, finding_text, require_fail_on
from verilayout.audit.model import AuditReport, is_confirmation
from verilayout.audit.paths import audit_paths
from verilayout.audit.testing import KernelNotClean
from verilayout.errors import LayoutError

#: Kernel files remembered as audited (per process; one compile's files are audited once).
MAX_REMEMBERED = 4096


class KernelAuditWarning(UserWarning):
    """A finding of the audit of a kernel Triton compiled."""


class KernelAuditError(KernelNotClean):
    """Strict mode: the audit of a kernel Triton compiled found something at or above ``fail_on``
    (a :class:`verilayout.testing.KernelNotClean`, as ``assert_kernel_clean`` raises; ``report``
    holds the audit of the kernel's files)."""


def findings(report: AuditReport, fail_on: str) -> list[str]:
    """One line per finding at or above ``fail_on`` (a PTX confirmation is its TTGIR finding's),
    as ``verilayout audit`` prints it: the PTX lines that confirm it and what to change in Python.

    >>> findings(AuditReport(()), "warning")
    []
    """
    out = []
    for f in report.files:
        name = f.kernel or f.path
        for c in f.checks:
            if fails(c, fail_on) and not is_confirmation(c):
                where = f"line {c.line}" + (f" ({c.loc})" if c.loc else "")
                out.append(f"{name}: {c.severity}: {where}: {c.op} [{c.check}] {finding_text(c)}")
    for e in report.errors:
        out.append(e.line())
    return out


def user_site(src: Any, report: AuditReport, fail_on: str) -> tuple[str, int]:
    """Where a kernel's audit warning is attributed: the kernel's source file (``src.fn``, Triton's
    JITFunction: ``fn.__code__.co_filename``) at the line of its first finding there (the TTGIR's
    ``loc``), else at the kernel's ``def``; ``("<triton kernel>", 0)`` without a source.

    >>> user_site(None, AuditReport(()), "warning")
    ('<triton kernel>', 0)
    """
    fn = getattr(getattr(src, "fn", None), "fn", None)
    code = getattr(fn, "__code__", None)
    if code is None:
        return "<triton kernel>", 0
    filename, base = code.co_filename, os.path.basename(code.co_filename)
    for f in report.files:
        for c in f.checks:
            if fails(c, fail_on) and c.loc and ":" in c.loc:
                path, _, line = c.loc.rpartition(":")
                if line.isdigit() and os.path.basename(path) == base:
                    return filename, int(line)
    return filename, code.co_firstlineno


def _kernel_files(metadata_group: dict) -> list[str]:
    return sorted(p for name, p in (metadata_group or {}).items()
                  if isinstance(p, str) and name.endswith((".ttgir", ".ptx")))


def make_listener(strict: bool = False, fail_on: str = "warning",
                  previous: Callable | None = None) -> Callable[..., None]:
    """A Triton compilation listener auditing each compiled kernel (see the module docstring)."""
    seen: set[tuple[str, ...]] = set()

    def listener(*, src: Any, metadata: dict, metadata_group: dict, times: Any, cache_hit: bool) -> None:
        if previous is not None:
            previous(src=src, metadata=metadata, metadata_group=metadata_group, times=times, cache_hit=cache_hit)
        files = tuple(_kernel_files(metadata_group))
        if not files or files in seen:
            return
        if len(seen) < MAX_REMEMBERED:
            seen.add(files)
        report = audit_paths(files)
        lines = findings(report, fail_on)
        if not lines:
            return
        text = f"verilayout audit of {metadata.get('name', '?')}: " + "; ".join(lines)
        if strict:
            raise KernelAuditError(text, report)
        filename, lineno = user_site(src, report, fail_on)
        warnings.warn_explicit(text, KernelAuditWarning, filename, lineno,
                               module=os.path.splitext(os.path.basename(filename))[0] or "triton")

    listener.verilayout = True          # what uninstall() recognises
    listener.previous = previous
    return listener


def install(strict: bool = False, fail_on: str = "warning") -> Callable[..., None]:
    """Audit every kernel Triton compiles from now on in this process: findings at or above
    ``fail_on`` (the one vocabulary of ``verilayout audit --fail-on`` and ``assert_kernel_clean``:
    ``"error"``, ``"warning"``, ``"note"`` or ``"never"``) are warnings, or raise
    :class:`KernelAuditError` when ``strict``; a kernel file that holds no whole kernel is reported
    whatever ``fail_on`` (the CLI's exit 2). Returns the listener installed. Needs Triton (3.4 or
    later: ``triton.knobs``).

        # conftest.py
        import verilayout.triton
        verilayout.triton.install(strict=True)
    """
    require_fail_on(fail_on, "verilayout.triton.install")
    if not isinstance(strict, bool):
        raise LayoutError(f"verilayout.triton.install: strict={strict!r}: expected True or False")
    try:
        from triton import knobs  # deferred: Triton is optional (installed where kernels are compiled)
    except ImportError:
        raise LayoutError("verilayout.triton.install: Triton 3.4 or later (triton.knobs) is not "
                          "installed") from None
    current = knobs.compilation.listener
    if getattr(current, "verilayout", False):
        current = current.previous
    knobs.compilation.listener = make_listener(strict, fail_on, current)
    return knobs.compilation.listener


def uninstall() -> None:
    """Remove the listener :func:`install` set, putting back the one it found."""
    from triton import knobs  # deferred: Triton is optional
    current = knobs.compilation.listener
    if getattr(current, "verilayout", False):
        knobs.compilation.listener = current.previous
