"""What the PTX-only wgmma audit tests on nvcc's fixtures share (``tests/test_ptx_cutlass.py``,
``tests/test_ptx_wgmma_columns.py``): the fixture folder's generator script loaded as a module,
the audit's ``mma-*`` checks of a PTX text, and the lines that issue a wgmma."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from verilayout.audit import audit_ptx_text

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "ptx"


def make_ptx(folder: str) -> ModuleType:
    """``tests/fixtures/ptx/<folder>/make_ptx.py`` loaded as the module ``make_<folder>_ptx`` (the
    folders are not packages)."""
    spec = importlib.util.spec_from_file_location(f"make_{folder}_ptx", FIXTURES / folder / "make_ptx.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def mma_checks(text: str) -> list:
    """The ``mma-*`` checks the PTX-only audit reports on ``text`` (named ``k.ptx``)."""
    return [c for c in audit_ptx_text(text, "k.ptx").checks if c.check.startswith("mma-")]


def wgmma_lines(text: str) -> list[int]:
    """The 1-based lines of ``text`` that issue ``wgmma.mma_async``.

    >>> wgmma_lines("fence\\nwgmma.mma_async.sync ...\\n")
    [2]
    """
    return [i + 1 for i, ln in enumerate(text.split("\n")) if "wgmma.mma_async" in ln]
