"""``tmem-message``: where each tcgen05.ld/st message of a TMEM copy lands, against the TTGIR's plan.

The corpus kernel ``persistent_tma_matmul_128x256x64_w4_s2`` (sm_100) keeps a 128x256 f32 accumulator
in tensor memory and 4 warps read it back: 256 registers a thread, more than one message holds (at most
128, PTX ISA tcgen05.ld), so Triton splits each copy into messages. Derived here from the PTX ISA's
32x32b shape (thread t of warp w reads TMEM lane 32 w + t; a message .x64 gives each thread 64
consecutive 32-bit columns) and the accumulator (row i in lane i, column j in column j): message k
holds columns 64 k .. 64 k + 63, so its address is the first message's plus 64 k columns (the lane,
bits 31-16, unchanged).
"""
from __future__ import annotations

import glob
import re
from pathlib import Path

import pytest

from tests.audited import audit_pair, audit_ptx_file

ROOT = Path(__file__).resolve().parent.parent
STEM = ROOT / "tests" / "corpus" / "cuda100" / "persistent_tma_matmul_128x256x64_w4_s2"


def _checks(ptx: str | None = None):
    ttgir = STEM.with_suffix(".ttgir").read_text()
    ptx = STEM.with_suffix(".ptx").read_text() if ptx is None else ptx
    return [c for c in audit_pair(ttgir, ptx, "k").checks
            if c.check == "tmem-message"]


def test_a_copy_split_into_four_messages_lands_at_64_column_steps():
    ptx = STEM.with_suffix(".ptx").read_text()
    loads = [n + 1 for n, ln in enumerate(ptx.splitlines()) if "tcgen05.ld.sync.aligned.32x32b.x64" in ln]
    assert len(loads) == 4
    got = {c.line: c for c in _checks() if c.op == "tcgen05.ld"}
    assert sorted(got) == loads
    for k, line in enumerate(loads):
        c = got[line]
        assert c.status == "proved", c.message
        assert (c.data["message"], c.data["expected_offset"], c.data["ptx_offset"]) == (k, 64 * k, 64 * k)


# slow: 9.5 s of CPU (-p tests.cpu_table), the audit of every sm_100 corpus and third-party kernel;
# the planted-message tests below keep the check in the fast subset (pytest -m 'not slow')
@pytest.mark.slow
def test_every_tmem_message_of_the_sm100_corpora_is_proved():
    paths = sorted(glob.glob(str(ROOT / "tests" / "corpus" / "cuda100" / "*.ptx"))
                   + glob.glob(str(ROOT / "tests" / "thirdparty" / "cuda100" / "*.ptx")))
    checks = [c for p in paths for c in audit_ptx_file(p).checks if c.check == "tmem-message"]
    assert len(checks) >= 150
    assert {c.status for c in checks} == {"proved"}, [(c.line, c.message) for c in checks if c.status != "proved"][:3]
    assert any(c.data["message"] >= 3 for c in checks)          # several messages per copy occur


def _moved(ptx: str, old: str, new: str) -> tuple[str, int]:
    lines = ptx.splitlines()
    i = next(n for n, ln in enumerate(lines) if "tcgen05.ld" in ln and old in ln)
    lines[i] = lines[i].replace(old, new)
    return "\n".join(lines) + "\n", i + 1


def test_a_message_eight_columns_off_is_an_error_at_its_line():
    ptx = STEM.with_suffix(".ptx").read_text()
    base = re.search(r"tcgen05\.ld\.sync\.aligned\.32x32b\.x64\.b32 \{[^}]*\}, \[(%r\d+) \+ 128\];", ptx).group(1)
    mutant, line = _moved(ptx, f"[{base} + 128]", f"[{base} + 136]")
    bad = [c for c in _checks(mutant) if c.severity == "error"]
    assert [(c.line, c.data["message"], c.data["expected_offset"], c.data["ptx_offset"]) for c in bad] == \
        [(line, 2, 128, 136)]


def test_two_swapped_messages_are_two_errors():
    ptx = STEM.with_suffix(".ptx").read_text()
    base = re.search(r"\[(%r\d+) \+ 64\];", ptx).group(1)
    mutant, l1 = _moved(ptx, f"[{base} + 64]", f"[{base} + XX]")
    mutant, l2 = _moved(mutant, f"[{base} + 128]", f"[{base} + 64]")
    mutant, _ = _moved(mutant, f"[{base} + XX]", f"[{base} + 128]")
    bad = sorted((c.line, c.data["ptx_offset"]) for c in _checks(mutant) if c.severity == "error")
    assert bad == [(l1, 128), (l2, 64)]
