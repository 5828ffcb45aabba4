"""Element-exact shared-memory accesses from PTX (issue 18, item 3(b)): each lane stores or loads
the bytes the TTGIR layouts give its elements (check ``smem-address``).

Expected values come from outside the checker: the corpus PTX lines are found by their text, the
planted edits are written here, and the bytes a lane of an ``ldmatrix``/``stmatrix`` holds are
derived from the PTX ISA fragment (lane l: row l / 4 of each 8x8 b16 matrix, bytes 4 (l % 4) to
4 (l % 4) + 3 of that row, whose address lane 8i + l / 4 supplies)."""
from __future__ import annotations

import glob
import re
from pathlib import Path

import pytest

from verilayout.audit import audit_ptx_text
from tests.audited import audit_file, audit_ptx_file
from verilayout.audit.ptx_elements import _matrix_bytes

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"


def _elements(stem: Path, text: str | None = None):
    ptx = text if text is not None else stem.with_suffix(".ptx").read_text()
    ttgir = stem.with_suffix(".ttgir")
    rep = audit_ptx_text(ptx, "k.ptx", ttgir.read_text(), audit_file(str(ttgir)).checks)
    return [c for c in rep.checks if c.check == "smem-address"]


def test_matrix_fragment_bytes_follow_the_ptx_isa():
    # rows 16 bytes apart (lane i supplies row i at byte 16 i): lane 5 holds row 5 // 4 = 1 of each
    # matrix, bytes 4 * (5 % 4) = 4 .. 7 of it: matrix i's row 1 is lane 8 i + 1's row
    rows = [16 * i for i in range(32)]
    got = _matrix_bytes(rows, 4, False)[5]
    assert got == {16 * (8 * i + 1) + 4 + b for i in range(4) for b in range(4)}
    # .trans: lane 5 holds rows 2 * (5 % 4) = 2 and 3, at byte 2 * (5 // 4) = 2, two bytes each
    got = _matrix_bytes(rows, 1, True)[5]
    assert got == {16 * 2 + 2, 16 * 2 + 3, 16 * 3 + 2, 16 * 3 + 3}


def test_no_false_alarm_on_the_corpus():
    n = {}
    for p in sorted(glob.glob(str(CORPUS / "cuda*" / "*.ptx"))):
        for c in audit_ptx_file(p).checks:
            if c.check == "smem-address":
                assert c.status in ("proved", "unchecked", "unknown"), (p, c.line, c.message)
                if c.status == "proved":
                    n[c.op] = n.get(c.op, 0) + 1
                else:
                    assert c.data.get("reason") or c.severity == "note", c.message
    # every kind of access is proved somewhere in the corpus
    assert n.get("st.shared", 0) >= 80 and n.get("cp.async", 0) >= 100
    assert n.get("ldmatrix.sync", 0) >= 20 and n.get("stmatrix.sync", 0) >= 1 and n.get("ld.shared", 0) >= 1


def _mutate(stem: Path, find: str, new: str) -> tuple[str, int]:
    lines = stem.with_suffix(".ptx").read_text().split("\n")
    hits = [i for i, ln in enumerate(lines) if find in ln]
    assert len(hits) == 1, (find, hits)
    lines[hits[0]] = lines[hits[0]].replace(find, new)
    return "\n".join(lines), hits[0] + 1


@pytest.mark.parametrize("stem, find, new", [
    # st.shared: the second 16-byte store of a local_alloc moved 16 bytes (offset 2048 -> 2064)
    ("cuda100/attention_fwd_d128_128x64_w8_s2", "[%r83+2048], {%r30,", "[%r83+2064], {%r30,"),
    # cp.async: one 16-byte copy's destination moved 16 bytes
    ("cuda100/attention_fwd_d128_128x64_w8_s2", "[ %r459 + 0 ], [ %rd20 + 0 ]", "[ %r459 + 16 ], [ %rd20 + 0 ]"),
    # ldmatrix: the row addresses of one x4 load moved 16 bytes (1024 -> 1040)
    ("cuda100/batched_dot_4x64x64x32_w4", "{%r85, %r86, %r87, %r88}, [%r414+1024]",
     "{%r85, %r86, %r87, %r88}, [%r414+1040]"),
    # stmatrix: one x4 store's row addresses moved 16 bytes
    ("cuda90/persistent_tma_matmul_128x128x64_w4_s3", "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r8], {%r144,",
     "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r8+16], {%r144,"),
])
def test_a_moved_access_is_an_error_at_its_instruction(stem, find, new):
    s = CORPUS / stem
    before = [c for c in _elements(s) if c.status == "counterexample"]
    assert not before
    text, line = _mutate(s, find, new)
    bad = [c for c in _elements(s, text) if c.status == "counterexample"]
    assert len(bad) == 1 and bad[0].severity == "error", [(c.line, c.message) for c in bad]
    c = bad[0]
    assert c.line == line, (c.line, line, c.message)
    assert c.data["lane"] in range(32) and c.data["ptx_address"] is not None
    assert re.search(r"lane \d+ of warp 0", c.message)


# ----- convert_layout through scratch memory ---------------------------------------------------

T2D = CORPUS / "cuda90" / "transpose2d_64x64_w4"


def _convert(text: str | None = None):
    return [c for c in _elements(T2D, text) if "convert_layout" in c.message]


def test_transpose_convert_layout_round_trip_is_proved():
    # #blocked1 (8 x 1 a thread, warps along dim 1) -> #blocked (1 x 8, warps along dim 0): the
    # conversion crosses warps; Triton stores with st.shared.v4 and loads with ldmatrix .trans
    cs = _convert()
    assert len(cs) == 1 and cs[0].status == "proved"
    assert "ldmatrix" in T2D.with_suffix(".ptx").read_text()


@pytest.mark.parametrize("find, new", [
    ("[%r80+2048];", "[%r80+2064];"),                        # an ldmatrix.trans of the conversion moved
    ("[%r58+128], {%r61,", "[%r58+144], {%r61,"),            # a st.shared of the conversion moved
])
def test_a_moved_scratch_access_is_an_error_at_its_instruction(find, new):
    text, line = _mutate(T2D, find, new)
    bad = [c for c in _convert(text) if c.status == "counterexample"]
    assert len(bad) == 1 and bad[0].severity == "error"
    assert bad[0].line == line, (bad[0].line, line, bad[0].message)
    assert "thread" in bad[0].message and bad[0].data["byte"] is not None


def test_corpus_conversions_have_no_false_alarm():
    n = 0
    for p in sorted(glob.glob(str(CORPUS / "cuda*" / "*.ptx"))):
        for c in audit_ptx_file(p).checks:
            if c.check == "smem-address" and "convert_layout" in c.message:
                assert c.status in ("proved", "unchecked"), (p, c.line, c.message)
                n += c.status == "proved"
    assert n >= 25
