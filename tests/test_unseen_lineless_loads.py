"""A conversion's scratch load that LLVM placed under ``.loc <file> 0`` (line 0: no source line, code
it moved or merged) stays the conversion's when it goes through the address register of the round's
other loads: before, the round lacked it and the bytes it reads were "stored and never read" (a false
``smem-address`` error on sglang 0.5.23's ``_tiled_sparse_decode_kernel``, cuda:90; a warning on
cuda:100, where the second round's loads were all on line 0).

The pair (``tests/corpus/unseen/README.md``) is real Triton 3.9 output, which is correct code (the
oracle: never an error). What the test expects is read from the files' own text: the conversion's
TTGIR line, the ``.loc`` in force at each PTX line, the address register of each load.
"""
from __future__ import annotations

import pathlib
import re

from tests.audited import audit_pair

HERE = pathlib.Path(__file__).resolve().parent / "corpus" / "unseen"
TTGIR = (HERE / "sglang_flash_mla_sparse_decode_sm90.ttgir").read_text()
PTX = (HERE / "sglang_flash_mla_sparse_decode_sm90.ptx").read_text()
_LOAD = re.compile(r"\s*ld\.shared\.[.\w]+\s+.*\[(%r\d+)(?:\+\d+)?\];")
_STORE = re.compile(r"\s*st\.shared\.[.\w]+\s+\[(%r\d+)(?:\+\d+)?\]")


def _accesses() -> list[tuple[int, str, str, str]]:
    """(PTX line, 'ld' or 'st', address register, source line of the ``.loc`` in force), in order."""
    out, loc = [], ""
    for n, text in enumerate(PTX.splitlines(), 1):
        m = re.match(r"\s*\.loc\s+\d+\s+(\d+)\s", text)
        if m:
            loc = m.group(1)
        elif (a := _LOAD.match(text)) or (a := _STORE.match(text)):
            out.append((n, "ld" if text.strip().startswith("ld") else "st", a.group(1), loc))
    return out


def _conversion_line() -> int:
    return next(n for n, s in enumerate(TTGIR.splitlines(), 1) if re.match(r"\s*%scores = ttg.convert_layout", s))


def _first_round() -> tuple[list[int], list[int], list[int]]:
    """Line 171's stores before the first barrier, its loads, and the line-0 loads through the
    address registers of those loads (the same scratch addresses)."""
    acc = _accesses()
    stores = [n for n, k, _r, loc in acc if k == "st" and loc == "171"][:1]
    loads = [(n, r) for n, k, r, loc in acc if k == "ld" and loc == "171"]
    regs = {r for _n, r in loads}
    first_load = loads[0][0]
    lineless = [n for n, k, r, loc in acc if k == "ld" and loc == "0" and r in regs and stores[0] < n < first_load + 40]
    return stores, [n for n, _r in loads], lineless


def test_the_pair_has_a_lineless_load_of_the_round():
    stores, loads, lineless = _first_round()
    assert stores and loads and lineless == [185]   # `ld.shared.b32 %r16, [%r15]`, README


def test_conversion_with_a_lineless_load_is_proved():
    line = _conversion_line()
    checks = [c for c in audit_pair(TTGIR, PTX, "k").checks if c.check == "smem-address"]
    assert not [c for c in checks if c.severity == "error"], [c.message[:200] for c in checks if c.severity]
    mine = [c for c in checks if (c.data or {}).get("ttgir_line") == line]
    assert [c.status for c in mine] == ["proved"], [c.message[:200] for c in mine]
    stores, loads, lineless = _first_round()
    assert f"{len(stores) + len(loads) + len(lineless)} instruction(s)" in mine[0].message


def test_planted_lineless_load_is_an_error():
    """The adopted load moved by 8 bytes reads another thread's element: an error at that line."""
    _s, _l, lineless = _first_round()
    lines = PTX.splitlines()
    at = lineless[0] - 1
    lines[at] = re.sub(r"\[(%r\d+)\]", r"[\1+8]", lines[at])
    bad = "\n".join(lines) + "\n"
    checks = [c for c in audit_pair(TTGIR, bad, "k").checks if c.check == "smem-address" and c.severity == "error"]
    assert any(c.line == lineless[0] for c in checks), [c.message[:200] for c in checks]
