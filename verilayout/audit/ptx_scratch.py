"""Scratch round trips checked by the bytes they move (check ``smem-address``), for the
shared-memory accesses no layout check of :mod:`verilayout.audit.ptx_elements` proved: the
cross-warp scratch of ``tt.reduce`` / ``tt.scan`` / ``tt.histogram``, the round trips of a
``ttg.convert_layout`` or ``tt.gather`` whose layouts could not be matched, staging through
shared memory.

A *round* is tied by dataflow, not by source line: the stores of one barrier epoch of a function
(every ``st.shared``/``stmatrix``/``cp.async`` between two CTA barriers, ``bar.sync``/
``barrier.sync``/``bar.warp.sync``) and the loads of the next epoch whose bytes meet the bytes those
stores wrote, together with the stores of the load's own epoch that come before it (a thread may
read its own store without a barrier). All addresses are evaluated for every thread of the CTA
(``%tid.x`` = 0 .. n-1, first loop iteration; a guard that is a function of ``%tid.x`` evaluated per
thread) relative to the round's first access; they must be a constant apart (the scratch base is
one symbol, ``global_smem`` plus the allocation offset, and cancels).

Law (write before read): every byte a load of the round reads into a register that is used was
written by a store of the round. A load that meets the round's bytes but also reads bytes no store
of the round wrote reads memory the compiler did not fill for it: an error, reported at the access
whose correction by one constant shift leaves the fewest bytes
unwritten-but-read plus written-but-unread (every such access on a tie: from the bytes alone a
store and a load a constant apart cannot be told apart). A register counts as used when it is read
by any other instruction of the function (a vector load whose lanes Triton marks
``used_bytes_mask`` leaves the unused registers unread). Not checked here: which element sits in
which byte (the scratch layout of a reduction is the compiler's choice); a round that meets the law
is ``proved`` for the law above only, and says so.

>>> _used_registers(("%r1", "%r2"), {"%r1": 2, "%r2": 1})
[True, False]
"""
from __future__ import annotations

import collections
import itertools
from typing import Any, Callable, Iterable

import numpy as np
import z3

from verilayout.audit.ptx_smem import smem_access
from verilayout.prove.z3_api import minus_simplified
from verilayout.frontends.ptx import register_names
from verilayout.hw.nvidia.ptx_model import Instr, PtxModule


def _used_registers(dests: tuple[str, ...], uses: dict[str, int]) -> list[bool]:
    """Per destination register of a load, whether another instruction reads it (``uses``: how
    many operands of the function name each register, the load's own included)."""
    return [uses.get(r, 0) > 1 for r in dests]


def _register_uses(mod: PtxModule) -> dict[tuple[str, str], int]:
    """``(function, register) -> operands naming it``, over the whole module."""
    texts: dict[str, list[str]] = {}
    for ins in mod.instrs:                   # one scan per function (a space between operands: no
        texts.setdefault(ins.func, []).extend(ins.operands)     # register name spans two of them)
        if ins.pred:
            texts[ins.func].append(ins.pred)
    out: dict[tuple[str, str], int] = {}
    for func, parts in texts.items():
        for r, k in collections.Counter(register_names(" ".join(parts))).items():
            out[(func, r)] = k
    return out


def load_mask(ins: Instr, uses: dict[tuple[str, str], int] | LazyUses) -> list[bool] | None:
    """Per byte of one lane's access, whether the register it lands in is used; None: all are
    (or the destination is not a plain register vector)."""
    if not ins.operands:
        return None
    dest = ins.operands[0].strip()
    regs = register_names(dest)
    acc = smem_access(ins)
    if not regs or acc is None or ins.parts[0] == "ldmatrix" or acc[2] % len(regs):
        return None
    used = _used_registers(regs, {r: uses.get((ins.func, r), 0) for r in regs})
    if all(used):
        return None
    per = acc[2] // len(regs)
    return [u for u in used for _ in range(per)]


def _events(pieces: list, rels: list[int], masks: dict[int, list[bool] | None]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per access, ``(threads, bytes)`` arrays of every byte each thread touches (relative to the
    round's first access); a load's bytes in unused registers left out."""
    out = []
    for (ins, _a0, ts), rel in zip(pieces, rels):
        mask = masks.get(ins.line)
        if mask is None:
            th_, by_ = thread_arrays(ts)
            out.append((th_, by_ + rel))
            continue
        th, by = [], []
        for t, s in enumerate(ts):
            if not s:
                continue
            bs = sorted(s)
            if mask is not None and len(bs) % len(mask) == 0:
                bs = [b for i, b in enumerate(bs) if mask[i % len(mask)]]
            th.extend([t] * len(bs))
            by.extend(b + rel for b in bs)
        out.append((np.array(th, dtype=np.int64), np.array(by, dtype=np.int64)))
    return out


class _Table:
    """The round's bytes as arrays over ``[lo - span, lo + 2 span)`` (a shift never moves an access
    further than the span): ``w[b]`` the store instructions that write byte ``b``, ``r[b]`` the
    (reader, byte) reads of it; each access's distinct bytes (and, a load, its reads per byte).
    ``distinct``: per access, ``(distinct bytes, their counts, shift)`` when known (the access's
    :func:`distinct_bytes` and relative base), else None: the same table, without a sort."""

    def __init__(self, kinds: list[str], evs: list, distinct: list | None = None) -> None:
        allb = [b for _t, b in evs if len(b)]
        self.lo = min(int(b.min()) for b in allb)
        self.span = max(int(b.max()) for b in allb) - self.lo + 1
        self.base = self.lo - self.span
        self.w = np.zeros(3 * self.span, dtype=np.int64)
        self.r = np.zeros(3 * self.span, dtype=np.int64)
        self.kinds = kinds
        self.acc: list[tuple[np.ndarray, np.ndarray]] = []
        for kind, (_t, b), known in zip(kinds, evs, distinct or [None] * len(evs)):
            if known is not None:
                u, c = known[0] + (known[2] - self.base), known[1]
            else:
                u, c = np.unique(b - self.base, return_counts=True) if len(b) else (np.zeros(0, np.int64),) * 2
            self.acc.append((u, c))
            if kind == "store":
                self.w[u] += 1
            else:
                self.r[u] += c

    def metric(self, idx: np.ndarray | slice) -> int:
        """Bad bytes over ``idx``: reads of unwritten bytes, written bytes no one reads, and twice
        the bytes two store instructions write."""
        w, r = self.w[idx], self.r[idx]
        return int(r[w == 0].sum()) + int(np.count_nonzero((w > 0) & (r == 0))) + 2 * int(np.count_nonzero(w > 1))

    def total(self) -> tuple[int, np.ndarray, np.ndarray]:
        """``(metric over every byte, unwritten-but-read bytes, written-but-unread bytes)`` (bytes
        as offsets from :attr:`base`)."""
        return self.metric(slice(None)), np.nonzero((self.w == 0) & (self.r > 0))[0], np.nonzero((self.w > 0) & (self.r == 0))[0]

    def moved(self, k: int, d: int) -> int:
        """The change of :meth:`metric` when access ``k`` alone is moved ``d`` bytes."""
        u, c = self.acc[k]
        if not len(u) or not d or u.min() + d < 0 or u.max() + d >= len(self.w):
            return 0
        idx = sorted_unique(np.concatenate((u, u + d)))  # the bytes it leaves or reaches, once each
        before = self.metric(idx)
        arr = self.w if self.kinds[k] == "store" else self.r
        step = 1 if self.kinds[k] == "store" else c
        arr[u] -= step
        arr[u + d] += step
        after = self.metric(idx)
        arr[u + d] -= step
        arr[u] += step
        return after - before

    def moves(self, k: int, ds: list[int]) -> list[int]:
        """``[self.moved(k, d) for d in ds]``, all shifts at once. Law: with ``A`` the counts less
        access ``k`` and ``s`` its step per byte (1 a store, its reads a load), moving it ``d`` bytes
        changes the metric by ``R + sum_x f(A[x+d] + s_x) - f(A[x+d])`` over its bytes ``x``, where
        ``R = sum_x f(A[x]) - f(now[x])`` (its removal) does not depend on ``d`` and ``f`` is
        :func:`_bad_bytes`: the bytes outside ``u`` and ``u + d`` keep their counts."""
        u, c = self.acc[k]
        out = np.zeros(len(ds), dtype=np.int64)
        dd = np.array(ds, dtype=np.int64)
        if not len(u) or not len(dd):
            return out.tolist()
        valid = (dd != 0) & (u.min() + dd >= 0) & (u.max() + dd < len(self.w))
        if not valid.any():
            return out.tolist()
        store = self.kinds[k] == "store"
        arr, other = (self.w, self.r) if store else (self.r, self.w)
        step = np.ones(len(u), dtype=np.int64) if store else c
        now = _bad_bytes(self.w[u], self.r[u])
        at = u[None, :] + dd[valid][:, None]          # one row per shift: the bytes the access reaches
        arr[u] -= step                                # the counts less the access (u: distinct bytes),
        try:                                          # read, then put back: no copy of the table
            gone = _bad_bytes(arr[u], other[u]) if store else _bad_bytes(other[u], arr[u])
            a, o = arr[at], other[at]
        finally:
            arr[u] += step
        removal = int(gone.sum() - now.sum())
        out[valid] = removal + _gain(a, o, step, store).sum(axis=1)
        return out.tolist()


def _gain(a: np.ndarray, o: np.ndarray, step: np.ndarray, store: bool) -> np.ndarray:
    """Per byte, the change of :func:`_bad_bytes` when an access adds ``step`` (> 0) to count
    ``a`` (the access's kind: a store's writes, 1 each, else a load's reads), ``o`` the other
    count. A store on an unwritten byte: ``(o == 0) - o`` (its reads become right, or it is now
    written and unread); on a byte one store writes: 2 (now two stores); else 0. A load on an
    unwritten byte: ``step`` more wrong reads; on a written one: -1 when it was unread, else 0.

    >>> w, r = np.array([0, 0, 1, 2, 1]), np.array([0, 3, 0, 1, 1])
    >>> bool((_gain(w, r, np.ones(5, dtype=np.int64), True) == _bad_bytes(w + 1, r) - _bad_bytes(w, r)).all())
    True
    >>> bool((_gain(r, w, np.full(5, 2), False) == _bad_bytes(w, r + 2) - _bad_bytes(w, r)).all())
    True
    """
    if store:
        return np.where(a == 0, (o == 0).astype(np.int64) - o, 2 * (a == 1))
    return np.where(o == 0, step, -(a == 0).astype(np.int64))


def _bad_bytes(w: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Per byte, its part of :meth:`_Table.metric`: the reads of it when no store writes it, 1 when
    it is written and no load reads it, 2 when two stores write it (``w``, ``r``: the byte's
    stores and reads, arrays of one shape).

    >>> _bad_bytes(np.array([0, 1, 2, 1]), np.array([3, 0, 1, 1])).tolist()
    [3, 1, 2, 0]
    """
    return r * (w == 0) + ((w > 0) & (r == 0)) + 2 * (w > 1)


class ThreadBytes(list):
    """Each thread's bytes of one access (a list of sets, read only once built), with its arrays
    computed once and kept: :meth:`flat` (each thread's bytes in ascending order, thread by
    thread) and :meth:`in_set_order` (the bytes as iterating the sets gives them). Many accesses
    share one object (the same offsets relative to thread 0: unrolled copies, pipeline stages), so
    the arrays are built once per distinct address function.

    >>> ThreadBytes([{5, 4}, set(), {1}]).flat()[1].tolist()
    [4, 5, 1]
    """

    _arrays: dict

    @classmethod
    def later(cls, rows: Callable[[], Iterable[set[int]]], arrays: dict) -> "ThreadBytes":
        """A ThreadBytes whose sets ``rows()`` builds at the first read of the list itself (its
        iteration, length, an item, a comparison, ...), its arrays given now (``"flat"`` and
        ``"n"``, the number of threads): the checks that decide on arrays never build the sets.

        >>> tb = ThreadBytes.later(lambda: [{3}, set()], {"flat": (np.array([0]), np.array([3])), "n": 2})
        >>> byte_stats(tb), "_rows" in tb.__dict__, tb, len(tb)
        ((1, 1, True), True, [{3}, set()], 2)
        """
        tb = cls()
        tb.__dict__["_rows"] = rows
        tb.__dict__["_arrays"] = arrays
        return tb

    def _filled(self) -> "ThreadBytes":
        """This list with its sets built (see :meth:`later`)."""
        rows = self.__dict__.pop("_rows", None)
        if rows is not None:
            list.extend(self, rows())
        return self

    def flat(self) -> tuple[np.ndarray, np.ndarray]:
        """``(threads, bytes)``: every (thread, byte) pair, threads ascending, bytes sorted within."""
        got = self.__dict__.setdefault("_arrays", {}).get("flat")
        if got is None:
            sizes = [len(x) for x in self]
            th = np.repeat(np.arange(len(self), dtype=np.int64), sizes)
            by = np.fromiter(itertools.chain.from_iterable(map(sorted, self)), dtype=np.int64, count=sum(sizes))
            got = self._arrays["flat"] = (th, by)
        return got

    def in_set_order(self) -> tuple[np.ndarray, np.ndarray]:
        """``(threads, bytes)`` as ``for t, s in enumerate(self) for b in s`` visits them."""
        got = self.__dict__.setdefault("_arrays", {}).get("set")
        if got is None:
            sizes = [len(x) for x in self]
            th = np.repeat(np.arange(len(self), dtype=np.int64), sizes)
            by = np.fromiter(itertools.chain.from_iterable(self), dtype=np.int64, count=sum(sizes))
            got = self._arrays["set"] = (th, by)
        return got


def _filling(name: str) -> Callable:
    """The list method ``name`` of a :class:`ThreadBytes`, its sets built first."""
    method = getattr(list, name)

    def filled(self: ThreadBytes, *args: Any, **kwargs: Any) -> Any:
        if "_rows" in self.__dict__:
            self._filled()
        return method(self, *args, **kwargs)
    filled.__name__ = name
    return filled


for _name in ("__iter__", "__len__", "__getitem__", "__contains__", "__reversed__", "__eq__", "__ne__", "__lt__",
              "__le__", "__gt__", "__ge__", "__repr__", "__add__", "__mul__", "__rmul__", "__iadd__", "__imul__",
              "__setitem__", "__delitem__", "append", "extend", "insert", "pop", "remove", "index", "count",
              "reverse", "sort", "clear", "copy", "__reduce_ex__", "__sizeof__"):
    setattr(ThreadBytes, _name, _filling(_name))


def thread_arrays(ts: list, ordered: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``(threads, bytes)`` of one access's per-thread byte sets: ``ordered``, bytes ascending
    within each thread, else in the sets' iteration order; kept on a :class:`ThreadBytes`.

    >>> thread_arrays([{2}, {0, 1}])[0].tolist()
    [0, 1, 1]
    """
    if isinstance(ts, ThreadBytes):
        return ts.flat() if ordered else ts.in_set_order()
    tb = ThreadBytes(ts)
    return tb.flat() if ordered else tb.in_set_order()


def byte_stats(ts: list) -> tuple[int, int, bool]:
    """``(sum of the sets' sizes, size of their union, whether some set is empty)`` of one access's
    (or layout's) per-thread byte sets, kept on a :class:`ThreadBytes` (its sets are read only).

    >>> byte_stats(ThreadBytes([{4, 0}, {4}, set()]))
    (3, 2, True)
    """
    kept = ts.__dict__.setdefault("_arrays", {}) if isinstance(ts, ThreadBytes) else {}
    got = kept.get("stats")
    if got is None and "_rows" in ts.__dict__:      # sets not built: from the arrays (each pair once)
        th, by = kept["flat"]
        got = kept["stats"] = (len(by), len(sorted_unique(by)), len(sorted_unique(th)) < kept["n"])
    elif got is None:
        got = kept["stats"] = (sum(map(len, ts)), len(set().union(*ts)), not all(ts))
    return got


def thread_keys(ts: list) -> tuple[np.ndarray, int]:
    """``(keys, least)`` of one access's per-thread byte sets: each (thread ``t``, byte ``b``) of
    :func:`thread_arrays` (ordered) as one int ``t * 2**40 + b``, and the least byte (0 when there
    is none); kept on a :class:`ThreadBytes`.

    >>> k, lo = thread_keys(ThreadBytes([{5, 4}, {1}]))
    >>> [int(x) - (1 << 40) for x in k[2:]], lo
    ([1], 1)
    """
    kept = ts.__dict__.setdefault("_arrays", {}) if isinstance(ts, ThreadBytes) else {}
    got = kept.get("keys")
    if got is None:
        th, by = thread_arrays(ts)
        got = kept["keys"] = ((th << 40) + by, int(by.min()) if len(by) else 0)
    return got


def distinct_bytes(ts: list) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(bytes, return_counts=True)`` of one access's per-thread byte sets (every
    thread's bytes together), kept on a :class:`ThreadBytes`.

    >>> [a.tolist() for a in distinct_bytes(ThreadBytes([{4, 0}, {4}]))]
    [[0, 4], [1, 2]]
    """
    tb = ts if isinstance(ts, ThreadBytes) else ThreadBytes(ts)
    got = tb.__dict__.setdefault("_arrays", {}).get("distinct")
    if got is None:
        by = tb.flat()[1]
        got = tb._arrays["distinct"] = np.unique(by, return_counts=True) if len(by) else (np.zeros(0, np.int64),) * 2
    return got


def sorted_unique(x: np.ndarray) -> np.ndarray:
    """``np.unique(x)`` (the distinct values, sorted) by one sort and a comparison of neighbours:
    numpy 2's ``np.unique`` hashes, which is far slower on the small integer arrays of these checks.

    >>> sorted_unique(np.array([3, 1, 3, 2])).tolist()
    [1, 2, 3]
    """
    y = np.sort(x, kind="stable")
    return y[np.concatenate(([True], y[1:] != y[:-1]))] if len(y) else y


def _repairs(k: int, t: _Table, total: int, unwritten: np.ndarray, unread: np.ndarray) -> int:
    """The fewest bad bytes (:meth:`_Table.metric`) left when access ``k`` alone is moved by one
    constant (the shifts that put one end of it, or of its bad bytes, on one end of the bytes
    unwritten or unread); leaving a load out is no repair (it would excuse any load)."""
    u, _c = t.acc[k]
    if not len(u):
        return total
    bad = t.__dict__.get("bad")                          # the bad bytes as a mask, once per table
    if bad is None:
        bad = t.__dict__["bad"] = np.zeros(len(t.w), dtype=bool)
        bad[unwritten] = True
        bad[unread] = True
        t.__dict__["targets"] = [int(f(x)) for x in (unwritten, unread) if len(x) for f in (np.min, np.max)]
    own = u[bad[u]]
    anchors = {int(u[0]), int(u[-1])} | ({int(own[0]), int(own[-1])} if len(own) else set())   # u: sorted
    targets = t.__dict__["targets"]                      # the ends of the bad bytes, once per table
    return total + min([0] + t.moves(k, sorted({g - a for g in targets for a in anchors})))


def check_round(pieces: list, rels: list[int], masks: dict, n: int) -> tuple[str, dict]:
    """The law of the module docstring on one round: ``("proved", data)`` or ``("error", data)``
    with ``data``: ``culprits`` (PTX lines), ``thread``, ``byte``, ``line`` of one unwritten read,
    ``unwritten`` (reads of unwritten bytes), ``unread`` (bytes written that no load reads)."""
    kinds = [smem_access(i)[0] for i, _a, _t in pieces]
    evs = _events(pieces, rels, masks)
    if not any(len(b) for _t, b in evs):
        return "proved", {"unwritten": 0, "unread": 0}
    t = _Table(kinds, evs, [None if masks.get(i.line) is not None else (*distinct_bytes(ts), rel)
                            for (i, _a, ts), rel in zip(pieces, rels)])
    total, unwritten, unread = t.total()
    if not len(unwritten):
        return "proved", {"unwritten": 0, "unread": len(unread)}
    hole = unwritten + t.base
    first = next((pieces[j][0], int(th[m][0]), int(b[m][0])) for j, (th, b) in enumerate(evs)
                 if kinds[j] == "load" for m in [np.isin(b, hole)] if m.any())
    left = {j: _repairs(j, t, total, unwritten, unread) for j in range(len(pieces))}
    least = min(left.values())
    culprits = sorted({pieces[j][0].line for j, v in left.items() if v == least}) if least < total else \
        sorted({pieces[j][0].line for j, (_th, b) in enumerate(evs) if kinds[j] == "load" and np.isin(b, hole).any()})
    return "error", {"culprits": culprits, "thread": first[1], "byte": first[2], "line": first[0].line,
                     "unwritten": int(t.r[unwritten].sum()), "unread": len(unread), "left": least}


def rounds(mod: PtxModule, by: dict[int, list[Instr]], atomic: set[int] = frozenset()) -> list[tuple[list[Instr], list[Instr]]]:
    """Candidate rounds: per epoch ``e`` holding loads whose previous epoch (one barrier before, in
    the same function) holds stores, ``(the stores of e - 1 and of e, the loads of e)``; an epoch
    between them that holds only atomics (``atomic``) is passed over."""
    out = []
    for e in sorted(by):
        loads = [i for i in by[e] if smem_access(i)[0] == "load"]
        prev = by.get(e - 1, []) if (e - 1 not in atomic or e - 1 in by) else by.get(e - 2, [])
        if not loads or not prev or prev[0].func != by[e][0].func:
            continue
        stores = [i for i in prev if smem_access(i)[0] == "store"]
        stores += [i for i in by[e] if smem_access(i)[0] == "store" and i.line < loads[-1].line]
        if stores:
            out.append((stores, loads))
    return out


class LazyUses:
    """:func:`round_register_uses` of one file, computed at the first :meth:`get` (a scan of every
    operand of the file: left undone when no round reaches a load's registers)."""

    def __init__(self, mod: PtxModule, memo: dict) -> None:
        self.mod, self.memo = mod, memo

    def get(self, key: tuple[str, str], default: int = 0) -> int:
        """``round_register_uses(mod, memo).get(key, default)``."""
        return round_register_uses(self.mod, self.memo).get(key, default)


def round_register_uses(mod: PtxModule, memo: dict) -> dict[tuple[str, str], int]:
    """:func:`_register_uses` of ``mod``, once per file (kept in ``memo``)."""
    hit = memo.get(("reg_uses",))
    if hit is None or hit[0] is not mod:
        hit = memo[("reg_uses",)] = (mod, _register_uses(mod))
    return hit[1]


def relative(pieces: list) -> list[int] | None:
    """Each access's address minus the first one's (signed 32-bit), or None when one is not a
    constant apart."""
    ref = pieces[0][1]
    out = []
    for _i, a0, _t in pieces:
        d = minus_simplified(a0, ref)
        if not z3.is_bv_value(d):
            return None
        v = d.as_long()
        out.append(v - (1 << 32) if v >= 1 << 31 else v)
    return out


def meets(pieces: list, rels: list[int]) -> list[bool]:
    """Per access, whether its bytes meet the bytes the round's stores write (a store: itself)."""
    stores = [smem_access(ins)[0] == "store" for ins, _a, _t in pieces]
    got = [thread_arrays(ts)[1] + rel for (_i, _a, ts), rel in zip(pieces, rels)]
    wrote = sorted_unique(np.concatenate([b for b, st in zip(got, stores) if st] or [np.zeros(0, np.int64)]))
    out = []
    for b, st in zip(got, stores):
        if st or not len(wrote) or not len(b):
            out.append(st)
            continue
        at = np.minimum(np.searchsorted(wrote, b), len(wrote) - 1)
        out.append(bool((wrote[at] == b).any()))
    return out


def describe(ins: Instr, tmod: Any) -> str:
    """The TTGIR ops on the access's source line that go through shared memory (for messages): an
    op of the combine region of a ``tt.reduce``/``tt.scan`` (whose PTX carries the combine's line)
    names the reduction."""
    owner = _region_owners(tmod)
    names = sorted({o.name for o in tmod.ops if o.name in _SMEM_OPS and o.loc and o.loc == ins.loc} |
                   {owner[o.line] for o in tmod.ops if o.line in owner and o.loc and o.loc == ins.loc})
    return " / ".join(names) if names else "no TTGIR op of its source line"


def _region_owners(tmod: Any) -> dict[int, str]:
    """TTGIR line of each op inside the combine region of a ``tt.reduce``/``tt.scan`` -> that op's
    name (the region runs up to its ``tt.reduce.return``/``tt.scan.return``)."""
    out: dict[int, str] = {}
    cur = None
    for o in tmod.ops:
        if o.name in ("tt.reduce", "tt.scan"):
            cur = o.name
        elif cur is not None:
            out[o.line] = cur
            if o.name.endswith(".return"):
                cur = None
    return out


#: ops that go through scratch shared memory only (no buffer of their own)
SCRATCH_OPS = ("ttg.convert_layout", "tt.reduce", "tt.scan", "tt.histogram", "tt.gather")
#: ops that read or write a shared-memory buffer (a memdesc)
_BUFFER_OPS = ("ttg.local_alloc", "ttg.local_load", "ttg.local_store", "ttg.async_copy_global_to_local")


def scratch_locs(tmod: Any) -> set[str]:
    """Source lines whose shared-memory ops are all scratch ops (:data:`SCRATCH_OPS`, a reduction
    named by its combine region's line too): their loads read only what the line's own stores
    wrote in the epoch before (Triton lowers each through scratch: store, barrier, load)."""
    owner = _region_owners(tmod)
    scratch, buffers = set(), set()
    for o in tmod.ops:
        if o.name not in SCRATCH_OPS and o.line not in owner and o.name not in _BUFFER_OPS or not o.loc:
            continue                     # the name first: most ops' loc is then never decoded
        if o.name in SCRATCH_OPS or o.line in owner:
            scratch.add(o.loc)
        if o.name in _BUFFER_OPS:
            buffers.add(o.loc)
    return scratch - buffers


_SMEM_OPS = ("ttg.convert_layout", "tt.reduce", "tt.scan", "tt.histogram", "tt.gather", "ttg.local_alloc",
             "ttg.local_load", "ttg.local_store", "ttg.async_copy_global_to_local")


def repair_culprits(pieces: list, rels: list[int]) -> list[int]:
    """The PTX lines of the accesses of a round trip whose correction alone (one constant shift)
    leaves the fewest bad bytes (:meth:`_Table.metric`), when that is fewer than now and no more
    than a quarter of them (one access explains the damage); ``[]`` when the bytes are whole or no
    single access explains them."""
    kinds = [smem_access(i)[0] for i, _a, _t in pieces]
    evs = _events(pieces, rels, {})
    if not any(len(b) for _t, b in evs) or "load" not in kinds or "store" not in kinds:
        return []
    t = _Table(kinds, evs, [(*distinct_bytes(ts), rel) for (_i, _a, ts), rel in zip(pieces, rels)])
    total, unwritten, unread = t.total()
    if not total:
        return []
    left = {j: _repairs(j, t, total, unwritten, unread) for j in range(len(pieces))}
    least = min(left.values())
    if 4 * least > total:
        return []
    return sorted({pieces[j][0].line for j, v in left.items() if v == least})
