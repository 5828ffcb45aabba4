"""The audit of a file, memoized per test process: several tests read the audit of the same
corpus files (the whole-corpus checks of ``test_audit``, ``test_ptx_audit``, ``test_ptx_elements``),
and each file is audited once per process instead of once per test.

The key is the path and a hash of the bytes there (and, for a PTX file, of the TTGIR beside it,
which gives the plan), so a test that writes a file and audits it again sees the new audit.
"""
from __future__ import annotations

import functools
import hashlib
import pathlib

from verilayout.audit import audit_file as _audit_ttgir, audit_ptx_file as _audit_ptx
from verilayout.audit import audit_ptx_text as _audit_ptx_text, audit_text as _audit_text
from verilayout.audit.model import FileReport


def _digest(path: str) -> str:
    h = hashlib.sha256()
    for p in (pathlib.Path(path), pathlib.Path(path).with_suffix(".ttgir")):
        try:
            h.update(p.read_bytes())
        except OSError:
            h.update(b"<none>")
    return h.hexdigest()


@functools.lru_cache(maxsize=1024)
def _memo(kind: str, path: str, digest: str) -> FileReport:
    return _audit_ttgir(path) if kind == "ttgir" else _audit_ptx(path)


def audit_file(path: str) -> FileReport:
    """``verilayout.audit.audit_file(path)``, once per content."""
    return _memo("ttgir", str(path), _digest(str(path)))


def audit_ptx_file(path: str) -> FileReport:
    """``verilayout.audit.audit_ptx_file(path)``, once per content (and the TTGIR beside it)."""
    return _memo("ptx", str(path), _digest(str(path)))


def audit_pair(ttgir: str, ptx: str, stem: str = "k") -> FileReport:
    """The PTX audit of ``ptx`` against the plan its TTGIR ``ttgir`` gives (both as text, e.g. one
    of them mutated): ``verilayout.audit.audit_ptx_text`` with ``audit_text(ttgir)``'s checks."""
    return _audit_ptx_text(ptx, f"{stem}.ptx", ttgir, _audit_text(ttgir, f"{stem}.ttgir").checks)
