"""Checks computed once per content and relabelled: repeated accesses (unrolled copies, a
conversion written twice in one kernel) give the same verdict at other lines.

A verdict on a round trip of shared-memory accesses is a function of their bytes, their kinds and
opcodes, and of the order of their PTX lines (ties go to the earliest line); the lines themselves
and the source locations only label it. :func:`template` replaces the lines by placeholders above
any real line (:data:`PTX_LINE` plus the line's rank among the accesses, so the order is kept) and
the locations by placeholder strings; the checks computed on the template are turned into the
checks of any accesses with the same content by :func:`instantiate`, which puts the real lines and
locations back (in the check's fields, its message and its data, instructions included).

Law: for accesses ``P`` and a function ``f`` of the round trip that uses lines only by equality and
order and never prints a location, ``instantiate(f(*template(op, P)), op, P) == f(op, P)``.

>>> from verilayout.hw.nvidia.ptx_model import Instr
>>> a = Instr("st.shared.b32", (), 40, parts=("st", "shared", "b32"), loc="k.py:3")
>>> t_op, t_p = template(OpLine(7, "ttg.convert_layout"), [(a, None, None)])
>>> c = Check("st.shared", t_p[0][0].line, t_p[0][0].loc, "smem-address", "counterexample", "error",
...           f"TTGIR line {t_op.line}: line {t_p[0][0].line}", {"lines": [t_p[0][0].line]})
>>> d = instantiate([c], OpLine(7, "ttg.convert_layout"), [(a, None, None)])[0]
>>> d.line, d.loc, d.message, d.data
(40, 'k.py:3', 'TTGIR line 7: line 40', {'lines': [40]})
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from verilayout.audit.model import Check
from verilayout.hw.nvidia.ptx_model import Instr

#: the placeholder of the access of rank ``r`` is ``PTX_LINE + r``; the op's line is ``OP_LINE``
#: (both far above any line of a text and any byte offset of 32-bit addresses)
PTX_LINE = 1 << 61
OP_LINE = 1 << 60
#: the leading digits every placeholder line shares (ranks stay far below 10**9, so adding one to
#: ``PTX_LINE`` leaves them): a string without either holds no placeholder
_HEAD_PTX, _HEAD_OP = str(PTX_LINE)[:9], str(OP_LINE)[:9]


@dataclass(frozen=True)
class OpLine:
    """What a round trip's checks read of their TTGIR op: its line and its name."""
    line: int
    name: str


def ranks(pieces: list) -> tuple[int, ...]:
    """Each access's rank among the distinct PTX lines of ``pieces`` (``(instr, ...)`` tuples).

    >>> from verilayout.hw.nvidia.ptx_model import Instr
    >>> ranks([(Instr("a", (), 9), 0), (Instr("b", (), 4), 0), (Instr("c", (), 9), 0)])
    (1, 0, 1)
    """
    order = {ln: r for r, ln in enumerate(sorted({p[0].line for p in pieces}))}
    return tuple(order[p[0].line] for p in pieces)


def template(op: Any, pieces: list) -> tuple[OpLine, list]:
    """``(op, pieces)`` with placeholder lines and locations (see the module docstring): the op
    keeps its name; each access ``(instr, *rest)`` keeps its ``rest``."""
    rk = ranks(pieces)
    out = [(replace(p[0], line=PTX_LINE + r, loc=f"\x00loc{r}"), *p[1:]) for p, r in zip(pieces, rk)]
    return OpLine(OP_LINE, op.name), out


def instantiate(checks: list[Check], op: Any, pieces: list) -> list[Check]:
    """The checks of a :func:`template` of accesses with the content of ``pieces``, relabelled with
    ``op``'s line and the lines, locations and instructions of ``pieces``."""
    by_rank = {r: p[0] for p, r in zip(pieces, ranks(pieces))}
    lines = {PTX_LINE + r: i.line for r, i in by_rank.items()}
    lines[OP_LINE] = op.line
    locs = {f"\x00loc{r}": i.loc for r, i in by_rank.items()}
    instrs = {PTX_LINE + r: i for r, i in by_rank.items()}
    return [_relabel(c, lines, locs, instrs) for c in checks]


def _relabel(x: Any, lines: dict, locs: dict, instrs: dict) -> Any:
    """``x`` with every placeholder line, location and instruction replaced."""
    if isinstance(x, Check):
        return Check(x.op, lines.get(x.line, x.line), locs.get(x.loc, x.loc) if isinstance(x.loc, str) else x.loc,
                     x.check, x.status, x.severity, _relabel(x.message, lines, locs, instrs),
                     _relabel(x.data, lines, locs, instrs))
    if isinstance(x, str):
        if x in locs:
            return locs[x]
        if _HEAD_PTX not in x and _HEAD_OP not in x:
            return x                         # no placeholder's leading digits: nothing to replace
        for t, ln in lines.items():          # placeholders are 19 digits: no real number holds one
            if str(t) in x:
                x = x.replace(str(t), str(ln))
        return x
    if isinstance(x, (bool, np.bool_)):
        return x
    if isinstance(x, (int, np.integer)):
        return lines.get(int(x), x)
    if isinstance(x, Instr):
        return instrs.get(x.line, x)
    if isinstance(x, dict):
        return {_relabel(k, lines, locs, instrs): _relabel(v, lines, locs, instrs) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_relabel(v, lines, locs, instrs) for v in x)
    return x
