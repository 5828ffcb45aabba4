"""The inter-warp stage's process memos keyed by content (``ptx_interwarp._OFFSETS``: an access's per-thread
offsets by its z3 address term; ``_DELTAS``: the difference of two terms) answer a file from what another
file computed, and the
checks stay those of the file audited alone (the oracle: the same audit with every process memo emptied
before the file)."""
from __future__ import annotations

from pathlib import Path

from verilayout.audit import audit_paths
from verilayout.audit import ptx_interwarp
from verilayout.prove.term_memo import TermMemo

ROOT = Path(__file__).resolve().parent
#: one kernel compiled for three targets: the same reduce shape and scratch round at other PTX lines
PAIRS = [ROOT / "thirdparty" / t / "sglang__mean_kernel_b1024_w4" for t in ("cuda80", "cuda90", "cuda100")]


class _Counted(TermMemo):
    """A memo that counts how often it is asked."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    def answer(self, key, terms, compute):
        self.asked += 1
        return super().answer(key, terms, compute)


def _forget() -> None:
    for memo in (ptx_interwarp._JUDGED, ptx_interwarp._DECIDED, ptx_interwarp._ROUNDS, ptx_interwarp._OFFSETS,
                 ptx_interwarp._DELTAS):
        memo.clear()


def _reduce_checks(stem: Path) -> list[tuple]:
    rep = audit_paths([str(stem) + ".ttgir", str(stem) + ".ptx"], cache_dir=None)
    return [(c.line, c.status, c.message) for f in rep.files for c in f.checks if c.check == "warp-reduce"]


def test_terms_kept_for_the_process_give_each_file_its_own_checks(monkeypatch):
    alone = {}
    for stem in PAIRS:
        _forget()
        alone[stem] = _reduce_checks(stem)
    _forget()
    offsets, deltas = _Counted(), _Counted()
    monkeypatch.setattr(ptx_interwarp, "_OFFSETS", offsets)
    monkeypatch.setattr(ptx_interwarp, "_DELTAS", deltas)
    together = {stem: _reduce_checks(stem) for stem in PAIRS}
    assert together == alone
    assert any("inter-warp stage" in c[2] for cs in alone.values() for c in cs)
    assert 0 < len(offsets) < offsets.asked            # some access's offsets were another file's answer
    assert 0 < len(deltas) < deltas.asked

