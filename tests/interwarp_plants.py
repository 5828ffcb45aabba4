"""Shared helpers of the inter-warp stage tests: a reduction's scratch round found in PTX text, the
warp-reduce checks of the chain after it, and the three planted bugs (a store moved by one slot, a load
of the wrong slot, the barrier removed), each keeping every line number."""
from __future__ import annotations

import re

from audited import audit_pair

PLANTS = ("store", "load", "barrier")


def first_round(ptx: str) -> tuple[int, int, int]:
    """(index of the first ``st.shared``, of the ``bar.sync`` after it, of the ``ld.shared`` after that)."""
    lines = ptx.splitlines()
    st = next(i for i, s in enumerate(lines) if re.search(r"\bst\.shared\.", s))
    bar = next(i for i in range(st, len(lines)) if "bar.sync" in lines[i])
    ld = next(i for i in range(bar, len(lines)) if re.search(r"\bld\.shared\.", lines[i]))
    return st, bar, ld


def stage_checks(ttgir: str, ptx: str, ld: int) -> list:
    """The warp-reduce checks at the first shuffle after line index ``ld`` (the plants keep line numbers)."""
    lines = ptx.splitlines()
    after = next(i + 1 for i in range(ld, len(lines)) if "shfl.sync.bfly" in lines[i])
    return [c for c in audit_pair(ttgir, ptx, "k").checks if c.check == "warp-reduce" and c.line == after]


def _moved(line: str, by: int) -> str:
    return re.sub(r"\[(%r\d+)\]", lambda m: f"[{m.group(1)}+{by}]", line, count=1)


def planted(ptx: str, rnd: tuple[int, int, int], plant: str) -> str:
    """``ptx`` with ``plant`` (one of :data:`PLANTS`) made in the round ``rnd`` = (store, barrier, load)
    indexes: the address moved by 4 bytes, or the barrier line blanked."""
    st, bar, ld = rnd
    lines = ptx.splitlines()
    if plant == "store":
        lines[st] = _moved(lines[st], 4)
    elif plant == "load":
        lines[ld] = _moved(lines[ld], 4)
    else:
        lines[bar] = ""                 # the blank keeps the line numbers
    out = "\n".join(lines)
    assert out != ptx
    return out
