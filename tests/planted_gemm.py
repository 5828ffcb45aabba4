"""One home for the emitted-GEMM tests' planted-bug helpers: check an emitted kernel (optionally
with a text edit planted in ``kernel.cu``) independently of the emitter, and assert a named check
caught it."""
from __future__ import annotations

import re

from verilayout.emit.gemm_plan import GemmManifest


def check_planted(man: dict, src: str, edit=None, host: bool = False, ragged: bool = False):
    """``simulate.cluster_check.check_gemm`` of the emitted ``(manifest, kernel.cu)``, after ``edit``
    (a function of the source text that must change it) when given."""
    from verilayout.simulate.cluster_check import check_gemm
    if edit is not None:
        new = edit(src)
        assert new != src, "the planted edit did not change kernel.cu"
        src = new
    return check_gemm(GemmManifest.from_dict(man), src, host=host, ragged=ragged)


def caught(report, check: str, pattern: str) -> None:
    """``report`` has a counterexample of ``check`` whose message matches ``pattern``."""
    bad = [c for c in report.checks if c.status == "counterexample" and c.check == check]
    assert bad, [c.to_dict() for c in report.checks]
    assert any(re.search(pattern, c.message) for c in bad), [c.message for c in bad]
