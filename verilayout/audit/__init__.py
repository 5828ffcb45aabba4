"""Whole-kernel audits: read what the compiler wrote (TTGIR, PTX) and check every layout it uses.

>>> audit_text("module {\\n}\\n").counts()["errors"]
0
"""
from verilayout.audit.model import AuditReport, Check, FileReport, Unsupported
from verilayout.audit.paths import audit_paths, expand_paths
from verilayout.audit.ptx import audit_ptx_file, audit_ptx_text
from verilayout.audit.ttgir import audit_file, audit_module, audit_text, classify_conversion
from verilayout.audit.testing import KernelNotClean, assert_kernel_clean

__all__ = ["AuditReport", "Check", "FileReport", "Unsupported", "audit_file", "audit_paths", "audit_text",
           "audit_ptx_file", "audit_ptx_text", "expand_paths",
           "audit_module", "classify_conversion", "assert_kernel_clean", "KernelNotClean"]
