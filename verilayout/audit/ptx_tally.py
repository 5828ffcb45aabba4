"""The tally of a scratch round trip's reads, with arrays: for each byte a thread loads, the
thread whose store holds it and whether the two share an element (the blame of a failed round
trip, :func:`verilayout.audit.ptx_elements._blamed`, scores accesses by these counts).

The reads are ``reads[thread]: byte -> load`` (insertion order: the order the counts and the first
wrong read of each line follow), the writes ``wrote: byte -> (thread, store)``; a read is wrong when
no store wrote its byte or the storing thread holds none of the reading thread's elements
(``hs[writer] & hd[reader]`` empty). The answer is what the per-byte walk over
``for td in range(n): for b, load in reads[td].items()`` gives, computed with one pass of
``np.searchsorted`` and ``np.unique`` and one set intersection per distinct (writer, reader) pair.
"""
from __future__ import annotations

import functools
import itertools
import operator
from typing import Any

import numpy as np

_line_of = operator.attrgetter("line")
_first = operator.itemgetter(0)
_second = operator.itemgetter(1)
_is_not_none = functools.partial(operator.is_not, None)


def _counts(lines: np.ndarray) -> dict[int, int]:
    """line -> how many times it occurs in ``lines``."""
    got, count = np.unique(lines, return_counts=True)
    return dict(zip(got.tolist(), count.tolist()))


def _share(wt: np.ndarray, td: np.ndarray, hs: list[set[int]], hd: list[set[int]], n: int) -> np.ndarray:
    """Per (writer, reader) pair, whether ``hs[writer]`` and ``hd[reader]`` meet (one intersection
    per distinct pair)."""
    pair, back = np.unique(wt * n + td, return_inverse=True)
    meet = np.fromiter((bool(hs[p // n] & hd[p % n]) for p in pair.tolist()), dtype=bool, count=len(pair))
    return meet[back.reshape(-1)]


def _first_bad(bad: np.ndarray, found: np.ndarray, ld_line: np.ndarray, st_line: np.ndarray) -> dict[int, int]:
    """line -> ``2 * i`` (read ``i`` charged to its load) or ``2 * i + 1`` (to its store): the first
    wrong read that names the line, loads charged before stores of the same read."""
    i_ld = np.flatnonzero(bad)
    i_st = np.flatnonzero(bad & found)
    pos = np.concatenate([2 * i_ld, 2 * i_st + 1])
    line = np.concatenate([ld_line[i_ld], st_line[i_st]])
    order = np.argsort(pos, kind="stable")
    got, first = np.unique(line[order], return_index=True)
    return dict(zip(got.tolist(), pos[order][first].tolist()))


def wrong_reads(wrote: dict, reads: list[dict], hs: list[set[int]], hd: list[set[int]], n: int) -> tuple:
    """``(wrong by load line, wrong by the line of the byte's store, reads by line, the first wrong
    read of each line (thread, byte, writer, access), wrong reads in all, those of bytes no store
    wrote)``; a read counts toward its load's line and, when a store wrote its byte, that store's.

    >>> class L: line = 9
    >>> class S: line = 3
    >>> wrong_reads({0: (0, S), 4: (1, S)}, [{0: L, 8: L}, {4: L}], [{0}, {1}], [{0}, {5}], 2)[4:]
    (2, 1)
    """
    sizes = [len(r) for r in reads[:n]]
    loads = list(itertools.chain.from_iterable(r.values() for r in reads[:n]))
    if not loads:
        return {}, {}, {}, {}, 0, 0
    bl = list(itertools.chain.from_iterable(reads[:n]))
    ws = list(map(wrote.get, bl))                 # each read's (writer, store), None when unwritten
    found = np.fromiter(map(_is_not_none, ws), dtype=bool, count=len(ws))
    fw = [w for w in ws if w is not None]
    td = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    ld_line = np.fromiter(map(_line_of, loads), dtype=np.int64, count=len(loads))
    st_line = np.full(len(ws), -1, dtype=np.int64)
    st_line[found] = np.fromiter(map(_line_of, map(_second, fw)), dtype=np.int64, count=len(fw))
    bad = ~found
    if fw:
        wt = np.fromiter(map(_first, fw), dtype=np.int64, count=len(fw))
        bad[found] = ~_share(wt, td[found], hs, hd, n)
    total = _counts(np.concatenate([ld_line, st_line[found]]))
    wrong_l = _counts(ld_line[bad])
    wrong_s = _counts(st_line[bad & found])
    first_bad = {ln: _bad_read(p, td, bl, ws, loads) for ln, p in _first_bad(bad, found, ld_line, st_line).items()}
    return wrong_l, wrong_s, total, first_bad, int(bad.sum()), int((~found).sum())


def _bad_read(p: int, td: np.ndarray, bl: list, ws: list, loads: list) -> tuple[int, int, Any, Any]:
    """``(thread, byte, writer or None, access)`` of the event :func:`_first_bad` numbered ``p``."""
    i = p // 2
    w = ws[i]
    return int(td[i]), bl[i], (w[0] if w is not None else None), (w[1] if p % 2 else loads[i])
