"""Whole-kernel audits: read what the compiler wrote (TTGIR, PTX) and check every layout it uses.

Names load on first use (PEP 562), so that ``verilayout audit`` of cached results imports neither
numpy nor z3 (start-up time).

``audit_file`` (and ``verilayout.testing.assert_kernel_clean``) refuse a file or text that holds
no whole kernel with a LayoutError, as the CLI exits 2 on it; ``audit_text`` audits whatever ops a
TTGIR text holds (a fragment too).

>>> audit_text("module {\\n}\\n").counts()["errors"]
0
"""
from importlib import import_module

_LAZY = {"AuditReport": "model", "Check": "model", "FileReport": "model", "Unsupported": "model",
         "audit_paths": "paths", "expand_paths": "paths", "audit_ptx_file": "ptx", "audit_ptx_text": "ptx",
         "audit_file": "paths", "audit_module": "ttgir", "audit_text": "ttgir",
         "classify_conversion": "ttgir", "KernelNotClean": "testing", "assert_kernel_clean": "testing"}

__all__ = ["AuditReport", "Check", "FileReport", "Unsupported", "audit_file", "audit_paths", "audit_text",
           "audit_ptx_file", "audit_ptx_text", "expand_paths",
           "audit_module", "classify_conversion", "assert_kernel_clean", "KernelNotClean"]


def __getattr__(name: str):
    """Load a public name from the module that defines it, on first use."""
    if name not in _LAZY:
        raise AttributeError(f"module 'verilayout.audit' has no attribute {name!r}")
    value = getattr(import_module(f"verilayout.audit.{_LAZY[name]}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
