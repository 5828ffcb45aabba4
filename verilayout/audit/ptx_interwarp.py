"""The inter-warp stage of a ``tt.reduce`` checked per thread (part of check ``warp-reduce``): the
partials each warp stores to the shared scratch, the lanes that load them back and the butterflies
(or ``redux.sync``) that combine them again.

What Triton emits (``lib/Conversion/TritonGPUToLLVM/ReduceOpToLLVM.cpp``): when warps lie along the
reduced axis, each warp's first-stage result (its butterflies' last combine, or a ``redux.sync``) is
written with ``st.shared`` to a scratch buffer, a ``bar.sync`` follows, the lanes read partials back
with ``ld.shared`` and reduce them again with a butterfly chain (or ``redux.sync``) on the loaded
values.

Semantics: ``st.shared``/``ld.shared`` (PTX ISA 9.7.9.8 / 9.7.9.9; a ``.vN`` access moves element
``j`` at byte ``addr + j * size``; a value wider than 32 bits packs one element per 32-bit word, as
Triton's ``f32x2`` combines on sm_100 do), a guarded access runs in the threads whose guard holds; a
butterfly chain leaves in lane ``t`` the counts ``C[t][u]`` of :func:`lane_counts` (PTX ISA 9.7.8.6,
``redux.sync`` 9.7.13.11: every lane once).

Law: a *round* is the run of ``st.shared`` right before the run of ``ld.shared`` that holds the chain's
load, in program order among the function's shared accesses, cut after the last CTA barrier that lies
between two of its stores (the earlier ones are another round's, read before that barrier by accesses the
run does not list, e.g. a ``tt.dot``'s ``ldmatrix``); every stored value must come (through
moves, packs and combines, within four instructions) from a shuffle or ``redux.sync`` (a first
stage), else this is no inter-warp stage (None), except for a reduce none of whose lanes moves along
its axis: its first stage is in-thread only, so its round's stores come from no shuffle (and a round
whose stores do is not its: None); such a round is judged the same way, but it may be any plain round
(a layout conversion's), so its error is reported as the reason it stays ``unchecked``. When no reduce
with lanes along its axis owns a round of shuffled stores, a reduce with none may (its in-thread first
stage combines an earlier reduce's butterfly results, :func:`_carried`), judged the same way with the same
caution. A chain on loads of a round none of whose stores comes from a shuffle that no reduce owns is a
first stage on converted values (:func:`converted_input`), judged by ``audit.ptx_reductions``. Each
thread ``s`` (warp ``w``, lane ``l``) that stores 32-bit word ``j`` of store ``R`` writes the
*partial* ``(E, p)``: element ``E = (R, j, key)``, ``key`` the coordinates of ``lane(l) ^ warp(w)``
without the reduced axis (the operand layout's lane and warp bases), ``p`` the reduced-axis coordinate
of ``warp(w)``. Addresses are evaluated per thread relative to the load's thread 0 (a constant
difference between the two thread-0 addresses, else ``unchecked``); a later store of the round to a
byte wins, one store writing two different partials to one byte makes it unknown. Thread ``t`` of warp
``w`` then combines the partial each lane ``u`` of ``w`` loaded (the 32-bit word a ``mov.b64 {lo, hi}`` unpack
of a 64-bit slot gives the chain, PTX ISA 9.7.9.1: ``lo`` the word at the lower address), ``C[t][u]`` times; it is *complete*
when every such lane loaded a known partial. A complete thread is right when all its partials are of
one element ``E`` and it combines each ``p`` that some thread stored for ``E`` exactly once (an
idempotent op, ``max``/``min``/``and``/``or``: at least once) and no other.

Verdict: ``proved`` when every complete thread is right and every element some lane loads is held by a
right thread; an ``error`` at the chain's first instruction when some element that complete threads
combine is held right by no thread (its reduction is lost in every thread, certain given the stores);
``unchecked`` with the reason otherwise (no complete thread: a lane reads a byte no thread of the round
stored; only some complete threads wrong: whether their results are used is not modelled; a partial
stored but read by no load of the round; an address
or guard that is not a function of ``%tid``; a chain of several words; a round through
``stmatrix``/``ldmatrix``, which Triton 3.9 emits on sm_90). Barrier: a thread that loads another
warp's partial needs a CTA barrier (``bar.sync``, PTX ISA 9.7.13.1) between the round's last store and
that load; none on that stretch of code with no branch in it is an error, none with a branch
``unchecked``.

Cost: a round's verdict is a function of its accesses' opcodes, widths, guards and per-thread offsets, the
reduce's shape, the butterflies and the barrier's finding, not of the PTX lines it stands at; it is
decided once per process for each such key (the kernels of one warp count and layout share it) and its
lines are named back for each file; within a file, once per load, slot, reduce shape and butterflies. What
it is built from is kept per process by content too: each access's per-thread offsets by its z3 address term,
the difference of two terms, and a round's loaded partials apart from the butterflies and region.

>>> lane_counts([2, 1])[0][:5].tolist()
[1, 1, 1, 1, 0]
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import z3

from verilayout.audit.ptx_smem import thread_guard, thread_offsets
from verilayout.dtypes import ptx_bits
from verilayout.hw.nvidia.ptx_model import Addr, Imm, Instr, Reg, Vec
from verilayout.prove.term_memo import TermMemo

#: one-op regions that may combine an element more than once (max, min, and, or)
_IDEMPOTENT = frozenset({"arith.maxnumf", "arith.minnumf", "arith.maximumf", "arith.minimumf", "arith.maxsi",
                         "arith.minsi", "arith.maxui", "arith.minui", "arith.andi", "arith.ori"})


_NONE = object()            # no partial at a byte yet (None: two different partials)


@dataclass(frozen=True)
class Partial:
    """One warp's partial in the scratch: ``element`` (store line, vector slot, non-reduced
    coordinates) and ``part`` (the storing warp's reduced-axis coordinate); ``warp``, for messages, is no
    part of its identity (warps whose bases coincide hold the same partial)."""
    element: tuple
    part: int
    warp: int = field(default=0, compare=False)     # a replicated warp writes the same partial


@dataclass(frozen=True)
class Finding:
    """One verdict of the stage: ``status`` (``proved``/``counterexample``), at ``ins``, with ``message``;
    ``groups``: the sets of warps whose partials the right threads combine."""
    ins: Instr
    status: str
    message: str
    groups: tuple[tuple[int, ...], ...] = ()


def lane_counts(masks: list[int]) -> np.ndarray:
    """``C[t][u]``: how often lane ``t`` combines lane ``u``'s value after butterflies ``masks``
    (``-1``: a ``redux.sync``, every lane once).

    >>> int(lane_counts([-1]).sum())
    1024
    """
    c = np.eye(32, dtype=np.int64)
    for m in masks:
        c = np.ones((32, 32), dtype=np.int64) if m < 0 else c + c[np.arange(32) ^ (m & 31)]
    return c


def _reads(ins: Instr) -> list[str]:
    return [x.name for a in ins.args[1:] for x in (a.items if isinstance(a, Vec) else (a,)) if isinstance(x, Reg)]


def _passes(d: Instr) -> bool:
    """A move of the value's bits: ``mov``/``cvt`` of a register, an ``and`` with an immediate (an
    ``i1`` or narrow value masked after its load)."""
    if d.head in ("mov", "cvt"):
        return len(_reads(d)) == 1
    return d.head == "and" and len(d.args) == 3 and sum(isinstance(a, Imm) for a in d.args[1:]) == 1


def source_load(reg: str, defs: dict, depth: int = 0) -> tuple[Instr, int] | None:
    """``(ld.shared or ldmatrix, vector slot)`` that ``reg`` is loaded by, through moves (:func:`_passes`);
    else None.

    >>> source_load("%r1", {})
    """
    got = source_word(reg, defs, depth)
    return None if got is None else got[:2]


def source_word(reg: str, defs: dict, depth: int = 0) -> tuple[Instr, int, int | None] | None:
    """:func:`source_load` and the 32-bit word of the slot ``reg`` holds when a ``mov.b64 {lo, hi}, x`` on the
    way unpacks it (:func:`_unpacked_word`; None: the whole slot).

    >>> source_word("%r1", {})
    """
    for d in defs.get(reg, []):
        if d.head in ("ld", "ldmatrix") and "shared" in d.parts:
            dest = d.args[0]
            items = dest.items if isinstance(dest, Vec) else (dest,)
            return d, next((k for k, x in enumerate(items) if isinstance(x, Reg) and x.name == reg), 0), None
        if depth < 4 and _passes(d):
            got = source_word(_reads(d)[0], defs, depth + 1)
            if got is not None:
                word = _unpacked_word(d, reg)
                return got if word is None or got[2] is not None else (got[0], got[1], word)
    return None


def _unpacked_word(d: Instr, reg: str) -> int | None:
    """The 32-bit word ``reg`` takes in ``d`` when ``d`` is ``mov.b64 {lo, hi}, x`` (PTX ISA 9.7.9.1 mov: the
    first register takes the low 32 bits, stored at the lower address), else None."""
    dest = d.args[0] if d.args else None
    if d.head != "mov" or "b64" not in d.parts or not isinstance(dest, Vec) or len(dest.items) != 2:
        return None
    return next((k for k, x in enumerate(dest.items) if isinstance(x, Reg) and x.name == reg), None)


def _source_of(reg: str, defs: dict, memo: dict | None) -> tuple[Instr, int, int | None] | None:
    """:func:`source_word`, kept in ``memo`` per function and register."""
    if memo is None:
        return source_word(reg, defs)
    key = ("interwarp-source-word", id(defs), reg)
    if key not in memo:
        memo[key] = (defs, source_word(reg, defs))      # defs kept: its id stays unique
    return memo[key][1]


def converted_input(reg: str, defs: dict, uses: dict, memo: dict | None) -> bool:
    """Whether ``reg`` is loaded (:func:`source_word`) by an ``ld.shared`` whose round (:func:`_round`) has
    stores and not one of them comes from a shuffle or ``redux.sync`` (:func:`_from_chain`): the round moves
    a layout conversion's values, not warps' partials, so a chain on ``reg`` is a first stage.

    >>> converted_input("%r1", {}, {}, None)
    False
    """
    got = _source_of(reg, defs, memo)
    if got is None or got[0].head != "ld":
        return False
    stores, _loads = _round(got[0], defs, uses, memo)
    memo = {} if memo is None else memo
    return bool(stores) and not any(_first_stage_stores([s], defs, memo) for s in stores)


def _first_stage_stores(stores: list[Instr], defs: dict, memo: dict) -> bool:
    """Whether every store's value comes from a first stage (:func:`_from_chain`; kept in ``memo`` per
    function and round)."""
    key = ("interwarp-first-stage", id(defs), tuple(s.line for s in stores))
    if key not in memo:
        memo[key] = (defs, all(_from_chain(x, defs) for s in stores for x in _reads(s)[-1:]))    # defs kept
    return memo[key][1]


def _from_chain(reg: str, defs: dict, depth: int = 0) -> bool:
    """Whether ``reg`` is computed (within four instructions: moves, packs, packed combines) from a
    shuffle's or a ``redux.sync``'s result."""
    for d in defs.get(reg, []):
        if d.head == "redux" or any(x.head in ("shfl", "redux") for r in _reads(d) for x in defs.get(r, [])):
            return True
        if depth < 4 and any(_from_chain(x, defs, depth + 1) for x in _reads(d)):
            return True
    return False


def _size(ins: Instr) -> int | None:
    """Bytes of one element of the access (its last PTX type of 8 to 64 bits), or None."""
    return next((ptx_bits(p) // 8 for p in reversed(ins.parts) if ptx_bits(p) in (8, 16, 32, 64)), None)


def _shared_order(defs: dict, uses: dict, memo: dict) -> tuple[list[Instr], dict]:
    """The function's ``ld.shared``/``st.shared`` in program order and each one's index there by its id
    (kept in ``memo`` per function)."""
    key = ("interwarp-order", id(defs))
    if key not in memo:
        listed = getattr(uses, "shared", None)        # the same instructions, listed by the index
        acc = {id(i): i for i in listed} if listed is not None else {
            id(i): i for lst in list(defs.values()) + list(uses.values()) for i in lst
            if i.head in ("ld", "st") and "shared" in i.parts}
        order = sorted(acc.values(), key=lambda i: i.line)
        at: dict = {}
        for k, i in enumerate(order):
            at.setdefault(id(i), k)
        memo[key] = (defs, (order, at))              # defs kept: its id stays unique
    return memo[key][1]


def _round(load: Instr, defs: dict, uses: dict, memo: dict | None = None) -> tuple[list[Instr], list[Instr]]:
    """The round (module law): (the ``st.shared`` run right before the loads' run holding ``load``, that
    ``ld.shared`` run)."""
    if memo is not None:
        key = ("interwarp-round", id(defs), id(load))
        if key not in memo:
            memo[key] = (defs, load, _round_of(load, defs, uses, memo))      # defs and load kept: ids stay unique
        return memo[key][2]
    return _round_of(load, defs, uses, {})


def _round_of(load: Instr, defs: dict, uses: dict, memo: dict) -> tuple[list[Instr], list[Instr]]:
    """:func:`_round`, computed."""
    order, at = _shared_order(defs, uses, memo)
    k = end = at[id(load)]
    while k > 0 and order[k - 1].head == "ld":
        k -= 1
    while end + 1 < len(order) and order[end + 1].head == "ld":
        end += 1
    loads, out = order[k:end + 1], []
    while k > 0 and order[k - 1].head == "st":
        k -= 1
        out.append(order[k])
    return out[::-1], loads


def _coords(bases: tuple, index: np.ndarray, rank: int) -> np.ndarray:
    """XOR of ``bases`` over the set bits of each ``index`` (rows: coordinates)."""
    out = np.zeros((len(index), rank), dtype=np.int64)
    for i, b in enumerate(bases):
        out ^= ((index >> i) & 1)[:, None] * np.array(b, dtype=np.int64)[None, :]
    return out


def _where(ins: Instr) -> tuple:
    """An instruction as the memo keys name it: its function, line, opcode and operands (the same for the
    stand-ins of :func:`_judge`, whose lines print as marks)."""
    return ins.func, int(ins.line), ins.opcode, ins.operands


def _addresses(ins: Instr, at: int, ev: Any, n: int, memo: dict) -> tuple[Any, np.ndarray] | None:
    """(thread 0's address term, each thread's byte offset from it) of the access's address operand (kept in
    ``memo`` per instruction: a round's loads and stores are asked again by every chain and reduce)."""
    key = ("interwarp-addr", _where(ins), at, n)
    if key not in memo:
        got = _addresses_of(ins, at, ev, n, memo)
        if got is not None:
            got[1].flags.writeable = False
        memo[key] = (ins, got)                   # ins kept: its id stays unique
    return memo[key][1]


def _addresses_of(ins: Instr, at: int, ev: Any, n: int, memo: dict) -> tuple[Any, np.ndarray] | None:
    """:func:`_addresses`, computed."""
    a = ins.args[at] if len(ins.args) > at else None
    if not isinstance(a, Addr) or not a.modelled or a.offset is None:
        return None
    try:
        got = _offsets(ev, ins, a.base, n, memo)
    except (ValueError, AttributeError, TypeError, KeyError, z3.Z3Exception):
        return None
    return None if got is None else (got[0], np.array(got[1], dtype=np.int64) + a.offset)


#: :func:`_offsets`' answers by address term and thread count, the term kept (its id stays unique); for the
#: process (the norms of one warp count address their scratch by one term)
_OFFSETS = TermMemo(4096)


def _offsets(ev: Any, ins: Instr, reg: Any, n: int, memo: dict) -> tuple | None:
    """:func:`ptx_smem.thread_offsets` of the address register ``reg`` at ``ins``: a function of its term (the
    thread-0 term and each thread's offset are read off it), so kept per term for the process."""
    expr = ev.operand(reg, 32, at=ins)
    if expr is None:
        return None
    return _OFFSETS.answer((expr.get_id(), n), (expr,), lambda: thread_offsets(ev, ins, reg, n, memo))


#: :func:`_delta`'s answers by the two terms' ids, the terms kept
_DELTAS = TermMemo(4096)


def _delta(x: Any, y: Any, memo: dict | None = None) -> int | None:
    """``x - y`` when it simplifies to a constant (kept in ``memo`` per pair of terms)."""
    if memo is not None:                             # kept for the process: a function of the two terms
        return _DELTAS.answer((x.get_id(), y.get_id()), (x, y), lambda: _delta(x, y))
    try:
        d = z3.simplify(x - y)
    except (z3.Z3Exception, TypeError):
        return None
    return d.as_signed_long() if z3.is_bv_value(d) else None


def _store_map(stores: list[Instr], ref: Any, r: Any, ev: Any, n: int, memo: dict) -> dict | str:
    """Byte offset (from the load's thread 0) -> :class:`Partial` (None: two partials), or a reason
    (kept in ``memo`` per round, reference address and reduce: every chain of a round asks)."""
    key = ("interwarp-mem", tuple(s.line for s in stores), ref.get_id(), r.axis, r.lanes, r.warps, n)
    if key not in memo:
        memo[key] = (ref, _build_map(stores, ref, _owners_of(r, n, memo), ev, n, memo))
    return memo[key][1]


@dataclass(frozen=True)
class Owners:
    """Who owns each thread's partial: ``kinds`` the distinct (non-reduced coordinates of ``lane ^ warp``,
    reduced-axis coordinate of ``warp``) in thread order, ``kind`` each thread's index into them."""
    kinds: tuple
    kind: np.ndarray


def _owners_of(r: Any, n: int, memo: dict) -> Owners:
    """:func:`_owners` of ``r``'s shape (its store bytes are kept per :class:`Owners`; ``memo`` unused: the
    owners are a pure function of the shape, kept once per process)."""
    return _owners(r.axis, r.lanes, r.warps, n)


@functools.lru_cache(maxsize=256)
def _owners(axis: int, lanes: tuple, warps: tuple, n: int) -> Owners:
    """Per thread: (non-reduced coordinates of ``lane ^ warp``, reduced-axis coordinate of ``warp``) of the
    layout with lane bases ``lanes`` and warp bases ``warps``; a thread's warp is ``t // 32``.

    >>> o = _owners(1, ((0, 1),) * 5, ((1, 0), (0, 32)), 128)
    >>> len(o.kinds), o.kind[:2].tolist()
    (4, [0, 0])
    """
    t = np.arange(n)
    rank = len(lanes[0])
    lane, warp = _coords(lanes, t % 32, rank), _coords(warps, t // 32, rank)
    both = lane ^ warp
    keep = [d for d in range(rank) if d != axis]
    rows, parts = both[:, keep].tolist(), warp[:, axis].tolist()
    ids: dict = {}
    kind = np.array([ids.setdefault((tuple(rows[i]), parts[i]), len(ids)) for i in range(n)], dtype=np.int64)
    kind.flags.writeable = False
    return Owners(tuple(ids), kind)


def _build_map(stores: list[Instr], ref: Any, owners: Owners, ev: Any, n: int, memo: dict) -> dict | str:
    """:func:`_store_map`, computed."""
    mem: dict = {}
    for s in stores:
        addr, size, guard = _addresses(s, 0, ev, n, memo), _size(s), thread_guard(ev, s, memo, n)
        delta = _delta(addr[0], ref, memo) if addr is not None else None
        if delta is None or size is None or guard[1] == "free":
            return (f"the address or guard of {s.opcode} (PTX line {s.line}) is not a function of %tid relative to "
                    "the load")
        mine = _store_at(s, addr[1], guard[0], size, owners, memo)
        mem.update(mine if not delta else {a + delta: p for a, p in mine.items()})
    return mem


def _store_at(s: Instr, base: np.ndarray, guard: list, size: int, owners: Owners, memo: dict) -> dict:
    """:func:`_store_bytes` of store ``s`` at its offsets from its own thread 0 (kept in ``memo`` per store and
    owners: a round's map for another reference address is this one shifted, in the same order)."""
    key = ("interwarp-store", _where(s), str(s.line), id(owners))
    if key not in memo:
        got = _store_bytes(s.line, _store_layout(s, base, guard, size, memo), size, owners)
        memo[key] = (s, owners, got)                  # s and owners kept: their ids stay unique
    return memo[key][2]


@dataclass(frozen=True)
class _Layout:
    """Where one store's threads ``act`` write (``words`` elements of ``size`` bytes each): its (thread,
    byte) writes sorted by address (``order``, stable), each distinct byte's first write there (``starts``),
    those bytes (``heads``) and each one's last write (``lasts``, an index into (thread, byte))."""
    act: np.ndarray
    words: int
    order: np.ndarray
    starts: np.ndarray
    heads: list
    lasts: list


def _store_layout(s: Instr, base: np.ndarray, guard: list, size: int, memo: dict) -> _Layout:
    """:class:`_Layout` of store ``s`` (kept in ``memo`` per store: every reduce shape reads it)."""
    key = ("interwarp-layout", _where(s))
    if key not in memo:
        data = s.args[1].items if isinstance(s.args[1], Vec) else (s.args[1],)
        act, words = np.flatnonzero(guard), len(data)
        at = (np.asarray(base, dtype=np.int64)[act][:, None] + np.arange(words * size)[None, :]).ravel()
        order = np.argsort(at, kind="stable")
        a_s = at[order]
        starts = np.flatnonzero(np.r_[True, a_s[1:] != a_s[:-1]])
        last = order[np.r_[starts[1:], len(a_s)] - 1]
        memo[key] = (s, _Layout(act, words, order, starts, a_s[starts].tolist(), last.tolist()))   # s kept
    return memo[key][1]


def _store_bytes(line: int, lay: _Layout, size: int, owners: Owners) -> dict:
    """One store's scratch bytes: byte -> the :class:`Partial` its threads ``lay.act`` write there (the last
    writer's, in thread, element and byte order), None where two of them write different partials."""
    act, words = lay.act, lay.words
    if not act.size:
        return {}
    slots = (size + 3) // 4
    tk = owners.kind[act]
    jb = np.arange(words * size)
    key = (tk[:, None] * (words * slots) + (jb // size * slots + jb % size // 4)[None, :]).ravel()
    k_s = key[lay.order]
    same = np.minimum.reduceat(k_s, lay.starts) == np.maximum.reduceat(k_s, lay.starts)
    span, last = words * size, np.asarray(lay.lasts, dtype=np.int64)
    byte, kk, w = last % span, tk[last // span], act[last // span] // 32
    elem = byte // size * slots + byte % size // 4                       # (element, 32-bit word) of the byte
    code = np.where(same, (kk * (words * slots) + elem) * (int(w.max()) + 1) + w, -1)
    made: dict = {-1: None}
    u, first = np.unique(code, return_index=True)
    for c, i in zip(u.tolist(), first.tolist()):
        if c >= 0:                       # one partial per (owner, element, warp), as each byte's last writer
            coords, part = owners.kinds[int(kk[i])]
            b = int(byte[i])
            made[c] = Partial((line, (b // size, b % size // 4), coords), part, int(w[i]))
    return dict(zip(lay.heads, map(made.__getitem__, code.tolist())))


@dataclass(frozen=True)
class Loaded:
    """Each thread's loaded partial: ``tags`` (None: unknown), ``ids`` the same up to the partials' names
    (each as the index of its first appearance, -1 for None; bytes of int64) and ``objs`` the partials in
    that order; ``index``: ``ids`` as an array)."""
    index: np.ndarray
    ids: bytes
    objs: list

    @functools.cached_property
    def tags(self) -> list:
        """Each thread's partial (None: unknown), built when asked."""
        return [self.objs[k] if k >= 0 else None for k in self.index.tolist()]


def _loaded(load: Instr, slot: int | tuple, mem: dict, ev: Any, n: int, memo: dict) -> Loaded | str:
    """Each thread's loaded partial, or a reason (kept in ``memo`` per load (:func:`_where`, its line as it
    prints), slot and ``mem``: the reduces of one shape and the chains of the load's other slots share it);
    ``slot`` ``(k, w)``: only 32-bit word ``w`` of 64-bit slot ``k`` (a ``mov.b64`` unpack of it)."""
    key = ("interwarp-loaded", _where(load), str(load.line), slot, id(mem), n)
    if key not in memo:
        if isinstance(slot, tuple):
            memo[key] = (load, mem, _loaded_of(load, 1, mem, ev, n, memo, slot)[0])
            return memo[key][2]
        width = len(load.args[0].items) if load.args and isinstance(load.args[0], Vec) else 1
        for k, got in enumerate(_loaded_of(load, max(width, slot + 1), mem, ev, n, memo)):
            memo[key[:3] + (k,) + key[4:]] = (load, mem, got)    # mem kept: its id stays unique
    return memo[key][2]


def _loaded_of(load: Instr, slots: int, mem: dict, ev: Any, n: int, memo: dict,
               word: tuple | None = None) -> list[Loaded | str]:
    """:func:`_loaded` of each of the load's first ``slots`` vector slots, computed (``word`` ``(k, w)``: the
    one 32-bit word ``w`` of slot ``k`` instead, as one slot)."""
    addr, size, guard = _addresses(load, 1, ev, n, memo), _size(load), thread_guard(ev, load, memo, n)
    if addr is None or size is None or guard[1] == "free":
        return [f"the address or guard of {load.opcode} (PTX line {load.line}) is not a function of %tid"] * slots
    keys, vids, _objs, _reps = _mem_arrays(mem, memo)
    oid, uniq = _identities(mem, memo)
    start = np.asarray(addr[1], dtype=np.int64)[:, None] + np.arange(slots)[None, :] * size        # (n, slots)
    if word is not None:
        start, size = start + word[0] * size + word[1] * 4, 4
    v = _vids_at(keys, vids, start[:, :, None] + np.arange(size))
    same = np.asarray(guard[0], dtype=bool)[:, None] & (v[..., 0] >= 0) & np.all(v == v[..., :1], axis=2)
    first = np.minimum(np.searchsorted(keys, start), max(keys.size - 1, 0))
    got = np.where(same, oid[first], -1) if keys.size else np.full(start.shape, -1, dtype=np.int64)
    return [_relabelled(got[:, k], uniq) for k in range(slots)]


def _relabelled(got: np.ndarray, uniq: list) -> Loaded:
    """:class:`Loaded` of each thread's partial given as an index into ``uniq`` (-1: None)."""
    ids = np.full(got.shape, -1, dtype=np.int64)
    objs: list = []
    have = got >= 0
    if have.any():
        vals = got[have]
        u, first = np.unique(vals, return_index=True)
        order = np.argsort(first, kind="stable")
        rank = np.full(len(uniq), -1, dtype=np.int64)
        rank[u[order]] = np.arange(len(u))
        ids[have] = rank[vals]
        objs = [uniq[k] for k in u[order].tolist()]
    return Loaded(ids, ids.tobytes(), objs)


def _identities(mem: dict, memo: dict) -> tuple[np.ndarray, list]:
    """Per byte of :func:`_mem_arrays`' order the index of its partial object (-1: None) and those objects
    (kept in ``memo`` per ``mem``)."""
    key = ("interwarp-identities", id(mem))
    if key not in memo:
        objs = _mem_arrays(mem, memo)[2]
        byid = dict(zip(map(id, objs), objs))          # each partial object once, by first appearance
        byid.pop(id(None), None)
        at = dict(zip(byid, range(len(byid))))
        at[id(None)] = -1
        oid = np.fromiter(map(at.__getitem__, map(id, objs)), dtype=np.int64, count=len(objs))
        memo[key] = (mem, (oid, list(byid.values())))         # mem kept: its id stays unique
    return memo[key][1]


def _mem_arrays(mem: dict, memo: dict) -> tuple[np.ndarray, np.ndarray, list, list]:
    """``mem`` as arrays (kept in ``memo``): its bytes sorted, each byte's partial as a value id (-1: None,
    two partials), the partial objects in that order, and per value id its first object in ``mem``."""
    key = ("interwarp-arrays", id(mem))
    if key not in memo:
        vals, ids, reps = list(mem.values()), {}, []
        byid = dict(zip(map(id, vals), vals))          # each partial object once, by first appearance
        byid.pop(id(None), None)
        of = {id(None): -1}                            # object -> value id, by first appearance of its value
        for i, p in byid.items():
            of[i] = ids.setdefault((p.element, p.part), len(ids))
            if of[i] == len(reps):
                reps.append(p)
        vid = list(map(of.__getitem__, map(id, vals)))
        addrs = np.array(list(mem.keys()), dtype=np.int64)
        order = np.argsort(addrs, kind="stable")
        memo[key] = (mem, (addrs[order], np.array(vid, dtype=np.int64)[order] if vid else np.zeros(0, np.int64),
                           [vals[i] for i in order.tolist()], reps))
    return memo[key][1]


def _vids_at(keys: np.ndarray, vids: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The value id of the partial at each byte of ``at`` (-1: none, or two partials)."""
    if not keys.size:
        return np.full(at.shape, -1, dtype=np.int64)
    i = np.minimum(np.searchsorted(keys, at), keys.size - 1)
    return np.where(keys[i] == at, vids[i], -1)


def _thread_fault(got: list, need: dict, idem: bool) -> str | None:
    """What is wrong with one complete thread's combination (``got``: (partial, times) of each lane it
    combines, in lane order)."""
    elems = {p.element for p, _c in got}
    if len(elems) > 1:
        return f"combines partials of {len(elems)} different elements {sorted(e[2] for e in elems)}"
    e = elems.pop()
    times: dict = {}
    for p, c in got:
        times[p.part] = times.get(p.part, 0) + c
    extra = sorted(k for k, c in times.items() if c > 1 and not idem)
    missing = sorted(set(need[e]) - set(times))
    if extra:
        return f"combines the partial of reduced-axis warp coordinate {extra[0]} {times[extra[0]]} times"
    if missing:
        return f"misses the partial of warps {sorted(need[e][missing[0]])} (reduced-axis warp coordinate {missing[0]})"
    return None


def _needs(mem: dict, memo: dict | None = None) -> dict:
    """Element -> {reduced-axis coordinate: warps that stored it} (kept in ``memo`` per ``mem``)."""
    key = ("interwarp-needs", id(mem))
    if memo is not None:
        if key not in memo:
            memo[key] = (mem, _needs(mem))             # mem kept: its id stays unique
        return memo[key][1]
    out: dict = {}
    for p in dict(zip(map(id, mem.values()), mem.values())).values():      # each object once, in order
        if p is not None:
            out.setdefault(p.element, {}).setdefault(p.part, set()).add(p.warp)
    return out


def check_stage(chain: Any, r: Any, defs: dict, uses: dict, cta: Any, masks: list[int],
                carried: bool = False) -> Finding | str | None:
    """The inter-warp stage ``chain`` against reduce ``r`` (module law): a :class:`Finding`, a reason it
    is unchecked, or None when its loads are no inter-warp stage (not stored from a first stage, or the
    reduce has no warp along its axis). ``carried``: a reduce with no lane along its axis may also own a
    round whose stores come from shuffles (:func:`_carried`).

    >>> check_stage(None, None, {}, {}, None, []) is None
    True
    """
    if chain is None or len(chain.steps[0]) != 1:
        return None if chain is None else "a chain of several words per step is not modelled"
    memo = getattr(cta, "memo", None)
    if memo is None:
        return _stage(chain, r, defs, uses, cta, masks, carried)
    idem = len(r.region) == 1 and r.region[0][0] in _IDEMPOTENT
    key = ("interwarp-stage", id(chain), id(defs), r.axis, r.lanes, r.warps, idem, tuple(masks), carried)
    if key not in memo:                      # chain and defs kept: their ids stay unique
        memo[key] = (chain, defs, _stage(chain, _Shape(_Line(_LINE), r.axis, r.lanes, r.warps, r.region), defs,
                                         uses, cta, masks, carried))
    got = memo[key][2]
    if isinstance(got, Finding):
        return Finding(got.ins, got.status, got.message.replace(_LINE, str(r.op.line)), got.groups)
    return got.replace(_LINE, str(r.op.line)) if isinstance(got, str) else got


#: stands for the reduce's TTGIR line in a verdict kept for every reduce of one shape
_LINE = "\x00reduce-line\x00"


@dataclass(frozen=True)
class _Line:
    line: str


@dataclass(frozen=True)
class _Shape:
    """What the stage's verdict reads of a reduce (its line a placeholder, :data:`_LINE`)."""
    op: _Line
    axis: int
    lanes: tuple
    warps: tuple
    region: tuple


def _stage(chain: Any, r: Any, defs: dict, uses: dict, cta: Any, masks: list[int],
           carried: bool = False) -> Finding | str | None:
    """:func:`check_stage` past its first test, computed (``r``: a reduce or its :class:`_Shape`)."""
    got = _source_of(_reads(chain.steps[0][0])[0], defs, getattr(cta, "memo", None))
    if got is None or not any(any(b) and b[r.axis] for b in r.warps):
        return None
    load, slot, word = got
    if word is not None and _size(load) == 8:
        slot = (slot, word)                     # one 32-bit word of a 64-bit slot (packed f32x2 partials)
    if load.head == "ldmatrix":
        return (f"its inputs are loaded by {load.opcode} (PTX line {load.line}) from a scratch stmatrix wrote: "
                "the matrix fragments' lanes are not modelled here")
    memo = getattr(cta, "memo", None)
    stores, loads = _round(load, defs, uses, memo)
    stores = _cut(stores, getattr(cta, "ev", None), memo)
    if not stores:
        return None
    shuffled = _first_stage_stores(stores, defs, {} if memo is None else memo)
    lanes = any(b[r.axis] for b in r.lanes)
    if shuffled == lanes:
        return _judge(chain, r, (load, slot, loads), stores, cta, masks) if shuffled else _unshuffled(
            _judge(chain, r, (load, slot, loads), stores, cta, masks))
    if carried and shuffled and not lanes:
        return _carried(_judge(chain, r, (load, slot, loads), stores, cta, masks))
    return None


def _carried(got: Finding | str) -> Finding | str:
    """The verdict of a round whose stores come from shuffles, for a reduce with no lane along its axis, asked
    only when no reduce whose lanes lie along its axis owns the round: the reduce's in-thread first stage
    combines values an earlier reduce's butterflies made (``tt.sum(tt.sum(x, 1), 0)`` with the warps along
    axis 0). A proof stands; an error is only a reason, as for :func:`_unshuffled` (the round's owner is
    found by elimination, not by its stores)."""
    if isinstance(got, Finding) and got.status != "proved":
        return ("its stores come from shuffles that no reduce with lanes along its axis owns (an in-thread first "
                "stage over an earlier reduce's results), and against this reduce " + got.message)
    return got


def _unshuffled(got: Finding | str) -> Finding | str:
    """The verdict of a round whose stores no shuffle made, for a reduce with no lane along its axis (its
    first stage is in-thread only): a proof stands; an error is only a reason (any round of plain stores,
    a layout conversion's too, feeds such a stage: its ownership is not certain)."""
    if isinstance(got, Finding) and got.status != "proved":
        return "its stores come from no shuffle (an in-thread first stage), and against this reduce " + got.message
    return got


def _judge(chain: Any, r: Any, at: tuple, stores: list, cta: Any, masks: list[int]) -> Finding | str:
    """:func:`check_stage` once the round is found; ``at``: (the chain's load, its slot, the round's loads).
    Decided once per process for each :func:`_round_key` (the verdict of a round is a function of its
    threads' offsets, guards and opcodes, not of where the round stands in the file), its PTX lines
    named back (:func:`_named`)."""
    load, slot, loads = at
    ev, n, memo = getattr(cta, "ev", None), getattr(cta, "threads", 0), getattr(cta, "memo", {})
    if ev is None or n != 32 * (1 << len(r.warps)):
        return "the threads of the CTA do not match the reduce's warps"
    idem = len(r.region) == 1 and r.region[0][0] in _IDEMPOTENT
    mine = ("interwarp-judged", id(ev), id(load), slot, n, r.axis, r.lanes, r.warps, idem, str(r.op.line),
            tuple(masks))                    # the round and its stores follow from the load (:func:`_round`)
    got = memo.get(mine)
    if got is None:
        got = memo[mine] = (ev, load, _judged(chain, r, at, stores, (ev, n, memo), masks))    # ev, load kept
    return _named(got[2], chain.steps[0][0], stores, loads)


def _judged(chain: Any, r: Any, at: tuple, stores: list, run: tuple, masks: list[int]) -> Finding | str:
    """:func:`_judge`'s verdict with its lines as marks, from :data:`_JUDGED` or computed."""
    load, slot, loads = at
    ev, n, memo = run
    fence = _fence(stores, load, getattr(ev, "code", None), getattr(ev, "index", {}))
    key = _round_key(r, at, stores, ev, n, memo, masks, fence)
    hit = _JUDGED.get(key)
    if hit is None:
        stand = [_stand_in(s, f"S{k}") for k, s in enumerate(stores)]
        lds = [_stand_in(x, f"L{k}") for k, x in enumerate(loads)]
        mine = lds[next(k for k, x in enumerate(loads) if x is load)]
        hit = _judge_of(chain, r, (mine, slot, lds), stand, (ev, n, memo), masks, fence)
        if len(_JUDGED) >= _DECIDED_MAX:
            _JUDGED.clear()
        _JUDGED[key] = hit
    return hit


#: :func:`_judge`'s verdicts by :func:`_round_key`, their PTX lines as :class:`_Tok` marks; cleared when full
_JUDGED: dict = {}


class _Tok(int):
    """A PTX line that prints as a mark (``S3``: the round's fourth store, ``L0``: its first load), so that a
    verdict computed once names the lines of every round of its key (:func:`_named`); it compares, hashes
    and indexes as the line itself."""
    mark: str

    def __new__(cls, line: int, mark: str) -> "_Tok":
        tok = int.__new__(cls, line)
        tok.mark = mark
        return tok

    def __str__(self) -> str:
        return f"\x00{self.mark}\x00"

    __repr__ = __str__

    def __format__(self, spec: str) -> str:
        return str(self)


def _stand_in(ins: Instr, mark: str) -> Instr:
    """``ins`` with its line a :class:`_Tok` of ``mark`` (equal to ``replace(ins, line=...)``, made without
    running the dataclass's constructor again)."""
    twin = object.__new__(type(ins))
    twin.__dict__.update(ins.__dict__)
    twin.__dict__["line"] = _Tok(ins.line, mark)
    return twin


def _named(got: Finding | str, ins: Instr, stores: list, loads: list) -> Finding | str:
    """``got`` with its marks (:class:`_Tok`) replaced by the lines of ``stores`` and ``loads``, at ``ins``."""
    def named(text: str) -> str:
        if "\x00" not in text:
            return text
        for mark, xs in (("S", stores), ("L", loads)):
            for k, x in enumerate(xs):
                text = text.replace(f"\x00{mark}{k}\x00", str(x.line))
        return text
    if isinstance(got, Finding):
        return Finding(ins, got.status, named(got.message), got.groups)
    return named(got)


def _round_key(r: Any, at: tuple, stores: list, ev: Any, n: int, memo: dict, masks: list, fence: Any) -> tuple:
    """All that :func:`_judge_of` reads of a round: the reduce's shape and line (:data:`_LINE` when it stands
    for every reduce of the shape), the butterflies, the barrier's
    finding, and per store and load its opcode, vector width, guard and per-thread offsets from the
    chain's load's thread 0 (the address terms themselves only through their differences)."""
    load, slot, loads = at
    idem = len(r.region) == 1 and r.region[0][0] in _IDEMPOTENT
    return (str(r.op.line), n, r.axis, r.lanes, r.warps, idem, tuple(masks), slot, fence,
            _accesses_key(load, loads, stores, ev, n, memo))


def _accesses_key(load: Instr, loads: list, stores: list, ev: Any, n: int, memo: dict) -> tuple:
    """The round's part of :func:`_round_key` seen from ``load`` (kept in ``memo`` per round and load)."""
    key = ("interwarp-round-key", _where(load), tuple(_where(x) for x in loads), tuple(_where(s) for s in stores), n)
    if key not in memo:
        ref = _addresses(load, 1, ev, n, memo)
        term = None if ref is None else ref[0]
        memo[key] = (next(k for k, x in enumerate(loads) if x is load),
                     tuple(_access_key(s, 0, ev, n, memo, term) for s in stores),
                     tuple(_access_key(x, 1, ev, n, memo, term) for x in loads))
    return memo[key]


def _access_key(ins: Instr, at: int, ev: Any, n: int, memo: dict, ref: Any) -> tuple:
    """An access's part of :func:`_round_key`: opcode, register operand's vector width, guard, its
    threads' offsets and their thread 0's difference from ``ref``."""
    a = _addresses(ins, at, ev, n, memo)
    delta = _delta(a[0], ref, memo) if a is not None and ref is not None else None
    guard, kind = thread_guard(ev, ins, memo, n)
    data = ins.args[1 - at] if len(ins.args) > 1 - at else None
    width = len(data.items) if isinstance(data, Vec) else 1
    return (ins.opcode, ins.parts, width, kind, bytes(guard), None if a is None else a[1].tobytes(), delta)


def _judge_of(chain: Any, r: Any, at: tuple, stores: list, run: tuple, masks: list[int], fence: Any) -> Finding | str:
    """:func:`_judge`, computed (``run``: the CTA's evaluator, threads and memo); the round's loaded partials
    (:func:`_round_part`) are taken from :data:`_ROUNDS` when a round of this key was read before."""
    load, slot, loads = at
    ev, n, memo = run
    key = _part_key(r, at, stores, ev, n, memo)
    part = _ROUNDS.get(key)
    if part is None:
        part = _round_part(r, at, stores, run)
        if len(_ROUNDS) >= _DECIDED_MAX:
            _ROUNDS.clear()
        _ROUNDS[key] = part
    if isinstance(part, str):
        return part
    got, need = part
    if fence is not None and any(p is not None and p.warp != t // 32 for t, p in enumerate(got.tags)):
        return fence if isinstance(fence, str) else Finding(chain.steps[0][0], "counterexample", (
            f"reduce at TTGIR line {r.op.line}, inter-warp stage: no CTA barrier between the round's stores (PTX "
            f"lines {', '.join(str(x.line) for x in stores)}) and its load at PTX line {load.line}, with no branch "
            "between them: a warp may read another warp's slot before that warp wrote it (PTX ISA 9.7.13.1 bar.sync)"))
    return _verdict(chain, r, got, need, masks, stores, load, memo)


#: :func:`_round_part`'s answers by :func:`_part_key` (a round's loaded partials do not depend on the
#: butterflies, the region or the barrier: the reduces of one layout with other ops share them); cleared when full
_ROUNDS: dict = {}


def _part_key(r: Any, at: tuple, stores: list, ev: Any, n: int, memo: dict) -> tuple:
    """All that :func:`_round_part` reads of a round: the reduce's axis, lane and warp bases, the slot, and the
    accesses' part of :func:`_round_key`."""
    load, slot, loads = at
    return (n, r.axis, r.lanes, r.warps, slot, _accesses_key(load, loads, stores, ev, n, memo))


def _round_part(r: Any, at: tuple, stores: list, run: tuple) -> tuple[Loaded, dict] | str:
    """(each thread's loaded partial, each element's stored partials) of the round, or why it does not read
    (an address or guard, or a partial no load reads)."""
    load, slot, loads = at
    ev, n, memo = run
    ref = _addresses(load, 1, ev, n, memo)
    mem = _store_map(stores, ref[0], r, ev, n, memo) if ref is not None else "the load's address does not read"
    tags = _loaded(load, slot, mem, ev, n, memo) if isinstance(mem, dict) else mem
    if isinstance(tags, str):
        return tags
    unread = _unread(loads, mem, ref[0], ev, n, memo)
    return unread if unread else (tags, _needs(mem, memo))


def _cta_barrier(i: Instr) -> bool:
    """A CTA barrier: ``bar.sync``/``barrier.sync``/``bar.red``, not ``.warp`` (PTX ISA 9.7.13.1)."""
    return i.head in ("bar", "barrier") and "warp" not in i.parts and ("sync" in i.parts or "red" in i.parts)


def _cut(stores: list[Instr], ev: Any, memo: dict | None) -> list[Instr]:
    """:func:`_after_barrier` of a round's stores over ``ev``'s code (kept in ``memo`` per run of stores)."""
    code, index = getattr(ev, "code", None), getattr(ev, "index", {})
    if memo is None or not stores:
        return _after_barrier(stores, code, index)
    key = ("interwarp-cut", id(ev), stores[0].line, stores[-1].line, len(stores))
    if key not in memo:
        memo[key] = (ev, _after_barrier(stores, code, index))     # ev kept: its id stays unique
    return memo[key][1]


def _after_barrier(stores: list[Instr], code: list | None, index: dict) -> list[Instr]:
    """The stores of the run ``stores`` (program order) after the last CTA barrier that lies between two of
    them: a barrier inside the run closes an earlier round, whose stores something else read before it
    (``ldmatrix``, or a conversion's loads, which the run of ``ld.shared``/``st.shared`` does not list).
    Unchanged when the code is not at hand.

    >>> _after_barrier([], None, {})
    []
    """
    if code is None:
        return stores
    for k in range(len(stores) - 1, 0, -1):
        a, b = index.get(stores[k - 1].line), index.get(stores[k].line)
        if a is None or b is None:
            return stores
        if any(_cta_barrier(i) for i in code[a + 1:b]):
            return stores[k:]
    return stores


def _fence(stores: list[Instr], load: Instr, code: list | None, index: dict) -> str | bool | None:
    """None when a CTA barrier (``bar.sync``/``barrier.sync``/``bar.red``, not ``.warp``) lies between the
    round's last store and ``load`` in program order; True when none does and no branch either (every
    path from the store to the load is that straight line); a reason when a branch lies between."""
    if code is None:
        return "the function's instructions are not at hand to find its barrier"
    lo, hi = max(s.line for s in stores), load.line
    a, b = index.get(lo), index.get(hi)
    between = code[a + 1:b] if a is not None and b is not None else [i for i in code if lo < i.line < hi]
    if any(_cta_barrier(i) for i in between):
        return None
    if any(i.head == "bra" for i in between):
        return "no CTA barrier between the round's stores and loads on the straight line, and a branch between them"
    return True


def _unread(loads: list[Instr], mem: dict, ref: Any, ev: Any, n: int, memo: dict) -> str | None:
    """Why a partial the round stored is read by none of its loads (a lost partial, or offsets shifted
    so that a load takes another store's element); None when every one is read."""
    key = ("interwarp-unread", tuple(x.line for x in loads), id(mem))
    if key not in memo:
        memo[key] = (mem, _unread_of(loads, mem, ref, ev, n, memo))      # mem kept: its id stays unique
    return memo[key][1]


def _unread_of(loads: list[Instr], mem: dict, ref: Any, ev: Any, n: int, memo: dict) -> str | None:
    """:func:`_unread`, computed."""
    keys, vids, _objs, reps = _mem_arrays(mem, memo)
    got: set = set()
    for ld in loads:
        addr, size = _addresses(ld, 1, ev, n, memo), _size(ld)
        delta = _delta(addr[0], ref, memo) if addr is not None else None
        if delta is None or size is None:
            return f"the address of {ld.opcode} (PTX line {ld.line}) is not a function of %tid relative to the round"
        width = len(ld.args[0].items) if isinstance(ld.args[0], Vec) else 1
        at = delta + np.asarray(addr[1], dtype=np.int64)[:, None] + np.arange(width * size)
        got |= set(_vids_at(keys, vids, at).ravel().tolist())
    lost = sorted((reps[v] for v in range(len(reps)) if v not in got), key=lambda p: (p.element, p.part))
    return None if not lost else (f"the partial of warp {lost[0].warp} for element {lost[0].element[2]} (store at PTX "
                                  f"line {lost[0].element[0]}) is read by no load of the round")


@functools.lru_cache(maxsize=64)
def _lane_table(raw: bytes, shape: tuple, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """For the butterfly counts ``C`` (given as bytes): per lane the lanes it combines, padded to one
    width with its first (``(32, k)``), and their counts (0 in the padding)."""
    counts = np.frombuffer(raw, dtype=np.dtype(dtype)).reshape(shape)
    rows = [np.flatnonzero(counts[lane]) for lane in range(32)]
    k = max(len(x) for x in rows)
    nzm = np.array([np.concatenate([x, np.full(k - len(x), x[0], dtype=x.dtype)]) for x in rows])
    cnt = np.array([np.concatenate([counts[lane][x], np.zeros(k - len(x), dtype=counts.dtype)])
                    for lane, x in enumerate(rows)])
    return nzm, cnt


def _classify(tags: list, counts: np.ndarray, need: dict, idem: bool,
              got: Loaded | None = None) -> tuple[set, dict, tuple | None, set]:
    """Every thread's combination judged (module law), on arrays: (elements some complete thread combines
    right, element -> (first thread combining it wrong, why), (first thread with a lane whose load is
    unknown, that lane) or None, the sorted warps of each right combination); ``got``: the :class:`Loaded`
    whose ``tags`` these are (its partials already numbered by first appearance)."""
    n = len(tags)
    if got is not None:
        ids, objs, pids = got.index, dict(enumerate(got.objs)), got.objs
    else:
        ids, objs, pids = _numbered(tags)
    elems: dict = {}
    eid = np.array([elems.setdefault(objs[i].element, len(elems)) for i in range(len(pids))] + [-1], dtype=np.int64)
    parts = sorted({p for e in need.values() for p in e} | {objs[i].part for i in objs}) or [0]
    pidx = np.array([parts.index(objs[i].part) for i in range(len(pids))] + [0], dtype=np.int64)
    needm = np.zeros((len(elems) + 1, len(parts)), dtype=bool)
    for e, k in elems.items():
        needm[k, [parts.index(p) for p in need.get(e, ())]] = True
    grid = ids.reshape(n // 32, 32)
    wid = np.array([objs[i].warp for i in range(len(pids))] + [-1], dtype=np.int64)
    nzm, cnt = _lane_table(counts.tobytes(), counts.shape, counts.dtype.str)
    valid = cnt > 0
    combo = grid[:, nzm]                                                                  # (warps, 32, k)
    e = eid[combo]
    times = np.zeros(combo.shape[:2] + (len(parts),), dtype=np.int64)
    wi, li = np.meshgrid(np.arange(combo.shape[0]), np.arange(32), indexing="ij")
    np.add.at(times, (wi[..., None], li[..., None], pidx[combo]), np.broadcast_to(cnt, combo.shape))
    ok = (times >= 1) if idem else (times == 1)
    good = np.all((e == e[..., :1]) | ~valid, axis=2) & np.all(np.where(needm[e[..., 0]], ok, times == 0), axis=2)
    st = np.where(np.any((combo < 0) & valid, axis=2), 2, np.where(good, 0, 1))            # 0 right, 1 wrong, 2 blank
    state, first = st.reshape(n), e[..., 0].reshape(n)
    groups: set = set()
    if np.any(st == 0):
        for row in _distinct_rows(np.sort(np.where(valid, wid[combo], -2)[st == 0], axis=1)).tolist():
            groups.add(tuple(sorted(set(row) - {-2})))
    back = {k: v for v, k in elems.items()}
    right = {back[k] for k in set(first[state == 0].tolist())}
    wrong: dict = {}
    bad = np.flatnonzero(state == 1)
    if bad.size:
        _u, at = np.unique(first[bad], return_index=True)
        for t in sorted(bad[at].tolist()):
            sel = [(tags[t // 32 * 32 + u], int(c)) for u, c in enumerate(counts[t % 32]) if c]
            wrong[sel[0][0].element] = (t, _thread_fault(sel, need, idem))
    blank = None
    for t in np.flatnonzero(state == 2)[:1].tolist():
        row = np.flatnonzero(counts[t % 32]).tolist()
        blank = (t, next(u for u in row if tags[t // 32 * 32 + u] is None))
    return right, wrong, blank, groups


def _numbered(tags: list) -> tuple[np.ndarray, dict, dict]:
    """Each thread's partial as the index of its first appearance (-1: None), the partials by index, and
    the index by partial (by identity)."""
    pids: dict = {}
    ids = np.array([-1 if x is None else pids.setdefault(id(x), len(pids)) for x in tags], dtype=np.int64)
    return ids, {i: x for x in tags if x is not None for i in (pids[id(x)],)}, pids


def _distinct_rows(rows: np.ndarray) -> np.ndarray:
    """The distinct rows of a 2-D array, in lexicographic order (``np.unique(axis=0)`` imports numpy.ma).

    >>> _distinct_rows(np.array([[2, 1], [0, 3], [2, 1]])).tolist()
    [[0, 3], [2, 1]]
    """
    if len(rows) < 2:
        return rows
    rows = rows[np.lexsort(rows.T[::-1])]
    return rows[np.r_[True, np.any(rows[1:] != rows[:-1], axis=1)]]


def _need_parts(need: dict, memo: dict) -> tuple:
    """The sorted reduced-axis coordinates of ``need`` (kept in ``memo`` per ``need``)."""
    key = ("interwarp-parts", id(need))
    if key not in memo:
        memo[key] = (need, tuple(sorted({p for e in need.values() for p in e})))    # need kept: its id stays unique
    return memo[key][1]


#: :func:`_classified`'s answers by canonical shape, kept for the process (every file whose rounds have one
#: shape, e.g. the norms of one warp count, asks the same); cleared when full
_DECIDED: dict = {}
_DECIDED_MAX = 4096


def _classified(got: Loaded, need: dict, masks: list[int], idem: bool, memo: dict) -> tuple[set, dict, tuple | None, set]:
    """:func:`_classify` of ``tags`` after butterflies ``masks``, decided once per shape (kept in ``memo``):
    the threads' partials up to their names, each partial's element (by first appearance), reduced-axis
    coordinate and warp, each element's non-reduced coordinates and the warps that stored it (kept in
    :data:`_DECIDED` for the process; the answer holds no name of the file); the elements of the result
    named back."""
    elems: dict = {}
    for p in got.objs:
        elems.setdefault(p.element, len(elems))
    rows = tuple((e[2], None if e not in need else tuple(sorted((k, tuple(sorted(v))) for k, v in need[e].items())))
                 for e in elems)
    key = (got.ids, tuple((elems[p.element], p.part, p.warp) for p in got.objs), rows,
           _need_parts(need, memo), tuple(masks), idem)
    hit = _DECIDED.get(key)
    if hit is None:
        right, wrong, blank, groups = _classify(got.tags, lane_counts(masks), need, idem, got)
        hit = ({elems[e] for e in right}, [(elems[e], v) for e, v in wrong.items()], blank, groups)
        if len(_DECIDED) >= _DECIDED_MAX:
            _DECIDED.clear()
        _DECIDED[key] = hit
    back = list(elems)
    return {back[i] for i in hit[0]}, {back[i]: v for i, v in hit[1]}, hit[2], hit[3]


def _verdict(chain: Any, r: Any, got: Loaded, need: dict, masks: list[int], stores: list, load: Instr,
             memo: dict | None = None) -> Finding | str:
    """The finding from every thread's combination (module law)."""
    idem = len(r.region) == 1 and r.region[0][0] in _IDEMPOTENT
    right, wrong, blank, groups = _classified(got, need, masks, idem, {} if memo is None else memo)
    rounds = f"stores at PTX lines {', '.join(str(s.line) for s in stores)}, load at PTX line {load.line}"
    if not right and not wrong:
        t, u = blank
        return (f"no thread combines only partials the round stored ({rounds}): thread {t} combines lane {u % 32}'s "
                "load, of a scratch byte no store of the round wrote (or two wrote different partials)")
    lost = [e for e in wrong if e not in right]
    head = f"reduce at TTGIR line {r.op.line} over axis {r.axis}, inter-warp stage ({rounds}, butterflies {masks})"
    if lost:
        t, fault = wrong[lost[0]]
        return Finding(chain.steps[0][0], "counterexample", f"{head}: no thread combines element {lost[0][2]} "
                       f"right; thread {t} (warp {t // 32}, lane {t % 32}) {fault}")
    if wrong:
        t, fault = next(iter(wrong.values()))
        return (f"thread {t} (warp {t // 32}, lane {t % 32}) {fault}, while other threads combine that element "
                "right: whether its result is used is not modelled")
    loaded = {p.element for p in got.objs}
    if loaded - right:
        return f"the element {sorted(loaded - right)[0][2]} is loaded by some lane but combined by no complete thread"
    return Finding(chain.steps[0][0], "proved", f"{head}: every thread whose lanes loaded stored partials combines "
                   f"the partials of exactly the warps along axis {r.axis} that share its element (warp bases "
                   f"{[list(b) for b in r.warps]}), each {'at least ' if idem else ''}once; all {len(right)} loaded "
                   "elements are combined", tuple(sorted(groups)))
