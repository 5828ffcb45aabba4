"""Which files an audit reads, and the audit of many of them: ``.ttgir`` (the plan) and ``.ptx``
(the lowering, paired with the ``.ttgir`` beside it), files as given and folders searched
recursively (Triton's cache keeps both per kernel), optionally in parallel processes.

Law: the report lists the files in the order :func:`expand_paths` gives, whatever ``jobs`` is.

>>> expand_paths(["-"])
['-']
"""
from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Iterable

from verilayout.audit.model import AuditReport, FileReport
from verilayout.audit.ptx import audit_ptx_file
from verilayout.audit.ttgir import audit_file as audit_ttgir_file

SUFFIXES = (".ttgir", ".ptx")


def expand_paths(paths: Iterable[str]) -> list[str]:
    """Files to audit: files as given, directories searched recursively for ``*.ttgir`` and ``*.ptx``."""
    out = []
    for p in paths:
        if p != "-" and os.path.isdir(p):
            for root, _dirs, files in sorted(os.walk(p)):
                out.extend(os.path.join(root, f) for f in sorted(files) if f.endswith(SUFFIXES))
        else:
            out.append(p)
    return out


def audit_any(path: str) -> FileReport:
    """A ``.ptx`` file's lowering audit, or the TTGIR audit of anything else (``-``: stdin)."""
    return audit_ptx_file(path) if path.endswith(".ptx") else audit_ttgir_file(path)


def audit_paths(paths: Iterable[str], jobs: int = 1) -> AuditReport:
    """Audit files, stdin (``-``) and directories; ``jobs > 1`` audits files in that many processes."""
    t0 = time.perf_counter()
    files = expand_paths(paths)
    if jobs > 1 and len(files) > 1 and "-" not in files:
        with ProcessPoolExecutor(max_workers=min(jobs, len(files))) as pool:
            reports = tuple(pool.map(audit_any, files, chunksize=4))
    else:
        reports = tuple(audit_any(p) for p in files)
    return AuditReport(reports, time.perf_counter() - t0)
