"""The tally of a scratch round trip's reads, with arrays: for each byte a thread loads, the
thread whose store holds it and whether the two share an element (the blame of a failed round
trip, :func:`verilayout.audit.ptx_elements._blamed`, scores accesses by these counts).

A round trip's bytes are a :class:`ScratchMap` (:func:`scratch_map`): the writes, each byte once
with the last store of it (in the order the bytes were first stored), and the reads, each
(thread, byte) once with its first load (thread by thread, in the order each thread first loads
them), as int arrays. A read is wrong when no store wrote its byte or the storing thread holds
none of the reading thread's elements (``hs[writer] & hd[reader]`` empty). The answer is what the
per-byte walk over the reads in that order gives, computed with one pass of ``np.searchsorted``
and ``np.unique`` and one set intersection per distinct (writer, reader) pair.
"""
from __future__ import annotations

import functools
import itertools
import operator
from dataclasses import dataclass
from typing import Any

import numpy as np

from verilayout.audit.ptx_scratch import sorted_unique, thread_arrays

_line_of = operator.attrgetter("line")
_first = operator.itemgetter(0)
_second = operator.itemgetter(1)
_is_not_none = functools.partial(operator.is_not, None)


@dataclass(frozen=True, eq=False)
class ScratchMap:
    """A round trip's bytes: writes ``(w_key, w_thread, w_acc)`` (byte, the thread of its last
    store, that store's index in ``accesses``), each byte once in first-store order; reads
    ``(r_thread, r_key, r_acc)``, each (thread, byte) once with its first load, thread-major and in
    first-load order within a thread; ``lines``: each access's line."""
    w_key: np.ndarray
    w_thread: np.ndarray
    w_acc: np.ndarray
    r_thread: np.ndarray
    r_key: np.ndarray
    r_acc: np.ndarray
    accesses: tuple
    lines: np.ndarray


def _groups(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(first, last)``: per distinct value of ``key`` (ascending), the index of its first and of
    its last occurrence."""
    if not len(key):
        return key.astype(np.int64), key.astype(np.int64)
    o = np.argsort(key, kind="stable")
    s = key[o]
    start = np.flatnonzero(np.concatenate(([True], s[1:] != s[:-1])))
    end = np.concatenate((start[1:], [len(s)])) - 1
    return o[start], o[end]


def _cat(xs: list) -> np.ndarray:
    return np.concatenate(xs) if xs else np.zeros(0, dtype=np.int64)


def scratch_map(parts: list[tuple[bool, np.ndarray, np.ndarray]], accesses: list) -> ScratchMap:
    """The :class:`ScratchMap` of accesses in program order, each ``(is a store, threads, bytes)``
    (one entry per byte a thread moves, in the order the access visits them): a byte's last store
    holds it, a thread's first load of a byte reads it.

    >>> class A: line = 5
    >>> m = scratch_map([(True, np.array([0, 1]), np.array([4, 4])), (False, np.array([1, 1]), np.array([4, 4]))], [A, A])
    >>> m.w_key.tolist(), m.w_thread.tolist(), m.r_thread.tolist(), m.r_key.tolist()
    ([4], [1], [1], [4])
    """
    ws = [(th, by, np.full(len(by), k, dtype=np.int64)) for k, (st, th, by) in enumerate(parts) if st]
    rs = [(th, by, np.full(len(by), k, dtype=np.int64)) for k, (st, th, by) in enumerate(parts) if not st]
    wt, wk, wa = (_cat([w[j] for w in ws]) for j in range(3))
    rt, rk, ra = (_cat([r[j] for r in rs]) for j in range(3))
    first, last = _groups(wk)
    order = np.argsort(first, kind="stable")
    w = last[order]
    rfirst, _rl = _groups(rt * (1 << 33) + rk)
    r = rfirst[np.lexsort((rfirst, rt[rfirst]))]
    lines = np.fromiter(map(_line_of, accesses), dtype=np.int64, count=len(accesses))
    return ScratchMap(wk[w], wt[w], wa[w], rt[r], rk[r], ra[r], tuple(accesses), lines)


def from_dicts(wrote: dict, reads: list[dict], n: int) -> ScratchMap:
    """The :class:`ScratchMap` of ``wrote: byte -> (thread, store)`` and ``reads[thread]: byte ->
    load`` (their insertion orders kept).

    >>> class A: line = 3
    >>> from_dicts({8: (2, A)}, [{8: A}], 1).w_thread.tolist()
    [2]
    """
    acc: dict[int, Any] = {}
    idx = {}
    for x in itertools.chain(map(_second, wrote.values()), *(r.values() for r in reads[:n])):
        idx.setdefault(id(x), len(acc))
        acc.setdefault(id(x), x)
    sizes = [len(r) for r in reads[:n]]
    loads = list(itertools.chain.from_iterable(r.values() for r in reads[:n]))
    arr = functools.partial(np.array, dtype=np.int64)
    return ScratchMap(arr(list(wrote)), arr([w[0] for w in wrote.values()]),
                      arr([idx[id(w[1])] for w in wrote.values()]),
                      np.repeat(np.arange(len(sizes), dtype=np.int64), sizes),
                      arr(list(itertools.chain.from_iterable(reads[:n]))), arr([idx[id(x)] for x in loads]),
                      tuple(acc.values()), arr([x.line for x in acc.values()]))


def _counts(lines: np.ndarray) -> dict[int, int]:
    """line -> how many times it occurs in ``lines``."""
    got, count = np.unique(lines, return_counts=True)
    return dict(zip(got.tolist(), count.tolist()))


#: the most (writer, reader, element) triples :func:`_meeting` joins; past it, one intersection per pair
_JOIN_MAX = 1 << 21


def _meeting(hs: list[set[int]], hd: list[set[int]], n: int) -> np.ndarray | None:
    """``writer * n + reader`` of every pair whose holder sets meet, sorted and distinct: the
    holders of each element joined (an element's source holders by its destination holders);
    None when that join passes :data:`_JOIN_MAX`. Kept on ``hd`` (a ``ThreadBytes``) per ``hs``.

    >>> _meeting([{0}, {1, 2}], [{2}, {0}], 2).tolist()
    [1, 2]
    """
    kept = hd.__dict__.setdefault("_arrays", {}) if hasattr(hd, "__dict__") else {}
    hit = kept.get(("meet", id(hs), n))
    if hit is not None:
        return hit[1]
    ws, es = thread_arrays(hs)
    rd, ed = thread_arrays(hd)
    o = np.argsort(es, kind="stable")
    ws, es = ws[o], es[o]
    lo, hi = np.searchsorted(es, ed, "left"), np.searchsorted(es, ed, "right")
    size = hi - lo
    got = None
    if int(size.sum()) <= _JOIN_MAX:
        reader = np.repeat(rd, size)
        at = np.repeat(lo - np.concatenate(([0], np.cumsum(size)[:-1])), size) + np.arange(int(size.sum()))
        got = sorted_unique(ws[at] * n + reader)
    kept[("meet", id(hs), n)] = (hs, got)             # hs kept alive: its id stays unique
    return got


def _share(wt: np.ndarray, td: np.ndarray, hs: list[set[int]], hd: list[set[int]], n: int) -> np.ndarray:
    """Per (writer, reader) pair, whether ``hs[writer]`` and ``hd[reader]`` meet (the pairs of
    :func:`_meeting`, else one intersection per distinct pair)."""
    meet = _meeting(hs, hd, n)
    if meet is not None:
        key = wt * n + td
        if not len(meet):
            return np.zeros(len(key), dtype=bool)
        at = np.minimum(np.searchsorted(meet, key), len(meet) - 1)
        return meet[at] == key
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


def writer_of(m: ScratchMap) -> np.ndarray:
    """Per read of ``m``, the index of its byte in the writes, or -1 when no store wrote it."""
    if not len(m.w_key):
        return np.full(len(m.r_key), -1, dtype=np.int64)
    o = np.argsort(m.w_key, kind="stable")
    at = np.minimum(np.searchsorted(m.w_key[o], m.r_key), len(o) - 1)
    return np.where(m.w_key[o][at] == m.r_key, o[at], -1)


def wrong_reads(wrote: dict, reads: list[dict], hs: list[set[int]], hd: list[set[int]], n: int) -> tuple:
    """``(wrong by load line, wrong by the line of the byte's store, reads by line, the first wrong
    read of each line (thread, byte, writer, access), wrong reads in all, those of bytes no store
    wrote)``; a read counts toward its load's line and, when a store wrote its byte, that store's.
    :func:`map_wrong_reads` of the dicts' :class:`ScratchMap`.

    >>> class L: line = 9
    >>> class S: line = 3
    >>> wrong_reads({0: (0, S), 4: (1, S)}, [{0: L, 8: L}, {4: L}], [{0}, {1}], [{0}, {5}], 2)[4:]
    (2, 1)
    """
    return map_wrong_reads(from_dicts(wrote, reads, n), hs, hd, n)


def map_wrong_reads(m: ScratchMap, hs: list[set[int]], hd: list[set[int]], n: int) -> tuple:
    """:func:`wrong_reads` of a :class:`ScratchMap`: the same six answers, the reads visited in
    the map's order.

    >>> class A: line = 5
    >>> m = scratch_map([(True, np.array([0]), np.array([0])), (False, np.array([0, 1]), np.array([0, 0]))], [A, A])
    >>> map_wrong_reads(m, [{0}, set()], [{0}, {1}], 2)[4:]
    (1, 0)
    """
    if not len(m.r_key):
        return {}, {}, {}, {}, 0, 0
    w = writer_of(m)
    found = w >= 0
    td = m.r_thread
    ld_line = m.lines[m.r_acc]
    st_line = np.full(len(w), -1, dtype=np.int64)
    st_line[found] = m.lines[m.w_acc[w[found]]]
    bad = ~found
    if found.any():
        bad[found] = ~_share(m.w_thread[w[found]], td[found], hs, hd, n)
    total = _counts(np.concatenate([ld_line, st_line[found]]))
    wrong_l = _counts(ld_line[bad])
    wrong_s = _counts(st_line[bad & found])
    first_bad = {ln: _bad_read(p, m, w) for ln, p in _first_bad(bad, found, ld_line, st_line).items()}
    return wrong_l, wrong_s, total, first_bad, int(bad.sum()), int((~found).sum())


def _bad_read(p: int, m: ScratchMap, w: np.ndarray) -> tuple[int, int, Any, Any]:
    """``(thread, byte, writer or None, access)`` of the event :func:`_first_bad` numbered ``p``."""
    i = p // 2
    j = int(w[i])
    acc = m.accesses[int(m.w_acc[j])] if p % 2 else m.accesses[int(m.r_acc[i])]
    return int(m.r_thread[i]), int(m.r_key[i]), (int(m.w_thread[j]) if j >= 0 else None), acc
