"""The inter-warp verdicts kept for the process (``ptx_interwarp._JUDGED``, ``_DECIDED``) name each file's own
PTX lines: auditing several pairs whose scratch rounds have one shape in one process gives, per file, the
checks a process that audits that file alone gives (the oracle: the same audit with the process memo
emptied before the file)."""
from __future__ import annotations

from pathlib import Path

from verilayout.audit import audit_paths
from verilayout.audit import ptx_interwarp

ROOT = Path(__file__).resolve().parent
#: one kernel compiled for three targets: the same reduce shape and scratch round at other PTX lines
PAIRS = [ROOT / "thirdparty" / t / "sglang__mean_kernel_b1024_w4" for t in ("cuda80", "cuda90", "cuda100")]


def _forget() -> None:
    ptx_interwarp._JUDGED.clear()
    ptx_interwarp._DECIDED.clear()


def _reduce_checks(stem: Path) -> list[tuple]:
    rep = audit_paths([str(stem) + ".ttgir", str(stem) + ".ptx"], cache_dir=None)
    return [(c.line, c.status, c.message) for f in rep.files for c in f.checks if c.check == "warp-reduce"]


def test_a_round_decided_for_another_file_names_this_files_lines():
    alone = {}
    for stem in PAIRS:
        _forget()
        alone[stem] = _reduce_checks(stem)
    _forget()
    together = {stem: _reduce_checks(stem) for stem in PAIRS}
    stages = [c for cs in alone.values() for c in cs if "inter-warp stage" in c[2]]
    assert len(stages) >= len(PAIRS)                       # each file has its inter-warp stage checked
    assert len({c[2] for c in stages}) > 1                 # ... at lines that differ between the files
    assert len(ptx_interwarp._JUDGED) < len(stages)        # so some verdict was taken from another file
    assert together == alone
