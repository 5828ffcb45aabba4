"""A conversion's scratch store whose address the compiler derived from another op's register stays
the conversion's: it is not compared with the other op (a false ``smem-address`` error).

The pair (``tests/corpus/unseen/README.md``) is real Triton 3.9 output. What the test expects is
read from the files' own text, not from the audit: the op of the TTGIR at each source line, the
``.loc`` and the opcode of each PTX line.
"""
from __future__ import annotations

import pathlib
import re

from tests.audited import audit_pair

HERE = pathlib.Path(__file__).resolve().parent / "corpus" / "unseen"
TTGIR = HERE / "fla_chunk_bwd_dh_sm80.ttgir"
PTX = HERE / "fla_chunk_bwd_dh_sm80.ptx"


def _ptx_lines() -> dict[int, tuple[str, str]]:
    """PTX line number -> (its instruction text, the source line of the ``.loc`` in force)."""
    out, loc = {}, ""
    for n, text in enumerate(PTX.read_text().splitlines(), 1):
        m = re.match(r"\s*\.loc\s+\d+\s+(\d+)\s", text)
        if m:
            loc = m.group(1)
        elif text.strip():
            out[n] = (text.strip(), loc)
    return out


def _ttgir_ops_at(source_line: int) -> dict[int, str]:
    """TTGIR line number -> op name, for the ops whose location is ``chunk_h.py:<source_line>``."""
    text = TTGIR.read_text()
    locs = {m.group(1) for m in re.finditer(rf'^#(loc\d+) = loc\("chunk_h.py":{source_line}:\d+\)', text, re.M)}
    locs |= {m.group(1) for m in re.finditer(r'^#(loc\d+) = loc\("\w+"\(#(loc\d+)\)\)', text, re.M)
             if m.group(2) in locs}
    out = {}
    for n, line in enumerate(text.splitlines(), 1):
        m = re.search(r"= (\w+\.\w+)\b.* loc\(#(loc\d+)\)$", line)
        if m and m.group(2) in locs:
            out[n] = m.group(1)
    return out


def test_the_file_facts_the_test_rests_on():
    ptx = _ptx_lines()
    assert ptx[527][0].startswith("st.shared.v4.b32") and "%r35+4096" in ptx[527][0] and ptx[527][1] == "257"
    copies = [n for n, (t, _) in ptx.items() if t.startswith("cp.async.cg.shared.global [ %r35 ")]
    assert copies, "the cp.async that shares the register"
    ops = _ttgir_ops_at(257)
    assert "ttg.convert_layout" in ops.values() and ops.get(185) == "ttg.convert_layout"
    shared_ops = {"ttg.local_alloc", "ttg.local_store", "ttg.local_load", "ttg.async_copy_global_to_local"}
    assert not shared_ops & set(ops.values())       # line 257: no shared-memory op but the conversion


def test_the_conversions_store_is_not_blamed_on_the_copy():
    rep = audit_pair(TTGIR.read_text(), PTX.read_text(), "fla_chunk_bwd_dh_sm80")
    ptx = _ptx_lines()
    checks = [c for c in rep.checks if c.check == "smem-address"]
    assert not [c for c in checks if c.severity == "error"], [c.message for c in checks if c.severity == "error"]
    for c in checks:
        if c.data.get("ttgir_line") == 158:          # the copy: its cp.async instructions only
            assert all(ptx[n][0].startswith("cp.async") for n in c.data.get("instructions", [c.line])), c.message
            assert 527 not in c.data.get("instructions", [])
