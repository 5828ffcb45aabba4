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
load, in program order among the function's shared accesses; every stored value must come (through
moves, packs and combines, within four instructions) from a shuffle or ``redux.sync`` (a first
stage), else this is no inter-warp stage (None). Each
thread ``s`` (warp ``w``, lane ``l``) that stores 32-bit word ``j`` of store ``R`` writes the
*partial* ``(E, p)``: element ``E = (R, j, key)``, ``key`` the coordinates of ``lane(l) ^ warp(w)``
without the reduced axis (the operand layout's lane and warp bases), ``p`` the reduced-axis coordinate
of ``warp(w)``. Addresses are evaluated per thread relative to the load's thread 0 (a constant
difference between the two thread-0 addresses, else ``unchecked``); a later store of the round to a
byte wins, one store writing two different partials to one byte makes it unknown. Thread ``t`` of warp
``w`` then combines the partial each lane ``u`` of ``w`` loaded, ``C[t][u]`` times; it is *complete*
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

>>> lane_counts([2, 1])[0][:5].tolist()
[1, 1, 1, 1, 0]
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import z3

from verilayout.audit.ptx_smem import thread_guard, thread_offsets
from verilayout.hw.nvidia.ptx_model import Addr, Imm, Instr, Reg, Vec

_SIZE = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2, "b32": 4, "u32": 4,
         "s32": 4, "f32": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8}
#: one-op regions that may combine an element more than once (max, min, and, or)
_IDEMPOTENT = frozenset({"arith.maxnumf", "arith.minnumf", "arith.maximumf", "arith.minimumf", "arith.maxsi",
                         "arith.minsi", "arith.maxui", "arith.minui", "arith.andi", "arith.ori"})


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
    for d in defs.get(reg, []):
        if d.head in ("ld", "ldmatrix") and "shared" in d.parts:
            dest = d.args[0]
            items = dest.items if isinstance(dest, Vec) else (dest,)
            return d, next((k for k, x in enumerate(items) if isinstance(x, Reg) and x.name == reg), 0)
        if depth < 4 and _passes(d):
            got = source_load(_reads(d)[0], defs, depth + 1)
            if got is not None:
                return got
    return None


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
    return next((_SIZE[p] for p in reversed(ins.parts) if p in _SIZE), None)


def _shared_order(defs: dict, uses: dict, memo: dict) -> list[Instr]:
    """The function's ``ld.shared``/``st.shared`` in program order (kept in ``memo`` per function)."""
    key = ("interwarp-order", id(defs))
    if key not in memo:
        acc = {id(i): i for lst in list(defs.values()) + list(uses.values()) for i in lst
               if i.head in ("ld", "st") and "shared" in i.parts}
        memo[key] = (defs, sorted(acc.values(), key=lambda i: i.line))     # defs kept: its id stays unique
    return memo[key][1]


def _round(load: Instr, defs: dict, uses: dict, memo: dict | None = None) -> tuple[list[Instr], list[Instr]]:
    """The round (module law): (the ``st.shared`` run right before the loads' run holding ``load``, that
    ``ld.shared`` run)."""
    order = _shared_order(defs, uses, {} if memo is None else memo)
    k = end = next(n for n, i in enumerate(order) if i is load)
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


def _addresses(ins: Instr, at: int, ev: Any, n: int, memo: dict) -> tuple[Any, np.ndarray] | None:
    """(thread 0's address term, each thread's byte offset from it) of the access's address operand."""
    a = ins.args[at] if len(ins.args) > at else None
    if not isinstance(a, Addr) or not a.modelled or a.offset is None:
        return None
    try:
        got = thread_offsets(ev, ins, a.base, n, memo)
    except (ValueError, AttributeError, TypeError, KeyError, z3.Z3Exception):
        return None
    return None if got is None else (got[0], np.array(got[1], dtype=np.int64) + a.offset)


def _delta(x: Any, y: Any) -> int | None:
    """``x - y`` when it simplifies to a constant."""
    try:
        d = z3.simplify(x - y)
    except (z3.Z3Exception, TypeError):
        return None
    return d.as_signed_long() if z3.is_bv_value(d) else None


def _store_map(stores: list[Instr], ref: Any, r: Any, ev: Any, n: int, memo: dict) -> dict | str:
    """Byte offset (from the load's thread 0) -> :class:`Partial` (None: two partials), or a reason
    (kept in ``memo`` per round, reference address and reduce: every chain of a round asks)."""
    key = ("interwarp-mem", tuple(s.line for s in stores), ref.get_id(), r.op.line, r.axis, r.lanes, r.warps, n)
    if key not in memo:
        memo[key] = (ref, _build_map(stores, ref, _owners(r, n), ev, n, memo))
    return memo[key][1]


def _owners(r: Any, n: int) -> list[tuple]:
    """Per thread: (non-reduced coordinates of ``lane ^ warp``, reduced-axis coordinate of ``warp``, warp)."""
    t = np.arange(n)
    rank = len(r.lanes[0])
    lane, warp = _coords(r.lanes, t % 32, rank), _coords(r.warps, t // 32, rank)
    both = lane ^ warp
    keep = [d for d in range(rank) if d != r.axis]
    return [(tuple(int(x) for x in both[i, keep]), int(warp[i, r.axis]), i // 32) for i in range(n)]


def _build_map(stores: list[Instr], ref: Any, owners: list[tuple], ev: Any, n: int, memo: dict) -> dict | str:
    """:func:`_store_map`, computed."""
    mem: dict = {}
    for s in stores:
        addr, size, guard = _addresses(s, 0, ev, n, memo), _size(s), thread_guard(ev, s, memo, n)
        delta = _delta(addr[0], ref) if addr is not None else None
        if delta is None or size is None or guard[1] == "free":
            return (f"the address or guard of {s.opcode} (PTX line {s.line}) is not a function of %tid relative to "
                    "the load")
        data = s.args[1].items if isinstance(s.args[1], Vec) else (s.args[1],)
        mine: dict = {}
        for t in np.flatnonzero(guard[0]):
            k, part, w = owners[int(t)]
            for j in range(len(data)):
                for b in range(size):
                    p = Partial((s.line, (j, b // 4), k), part, w)
                    at = delta + int(addr[1][t]) + j * size + b
                    mine[at] = p if mine.get(at, p) == p else None
        mem.update(mine)
    return mem


def _loaded(load: Instr, slot: int, mem: dict, ev: Any, n: int, memo: dict) -> list | str:
    """Each thread's loaded partial (None: unknown), or a reason."""
    addr, size, guard = _addresses(load, 1, ev, n, memo), _size(load), thread_guard(ev, load, memo, n)
    if addr is None or size is None or guard[1] == "free":
        return f"the address or guard of {load.opcode} (PTX line {load.line}) is not a function of %tid"
    out = []
    for t in range(n):
        at = int(addr[1][t]) + slot * size
        got = {mem.get(at + b) for b in range(size)} if guard[0][t] else {None}
        out.append(got.pop() if len(got) == 1 else None)
    return out


def _thread_fault(tags: list, counts: np.ndarray, need: dict, idem: bool) -> str | None:
    """What is wrong with one complete thread's combination (``tags``: per lane, ``counts``: its row)."""
    got = [(tags[u], int(c)) for u, c in enumerate(counts) if c]
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


def _needs(mem: dict) -> dict:
    """Element -> {reduced-axis coordinate: warps that stored it}."""
    out: dict = {}
    for p in mem.values():
        if p is not None:
            out.setdefault(p.element, {}).setdefault(p.part, set()).add(p.warp)
    return out


def check_stage(chain: Any, r: Any, defs: dict, uses: dict, cta: Any, masks: list[int]) -> Finding | str | None:
    """The inter-warp stage ``chain`` against reduce ``r`` (module law): a :class:`Finding`, a reason it
    is unchecked, or None when its loads are no inter-warp stage (not stored from a first stage, or the
    reduce has no warp along its axis).

    >>> check_stage(None, None, {}, {}, None, []) is None
    True
    """
    if chain is None or len(chain.steps[0]) != 1:
        return None if chain is None else "a chain of several words per step is not modelled"
    got = source_load(_reads(chain.steps[0][0])[0], defs)
    if got is None or not any(any(b) and b[r.axis] for b in r.warps):
        return None
    load, slot = got
    if load.head == "ldmatrix":
        return (f"its inputs are loaded by {load.opcode} (PTX line {load.line}) from a scratch stmatrix wrote: "
                "the matrix fragments' lanes are not modelled here")
    stores, loads = _round(load, defs, uses, getattr(cta, "memo", None))
    if not stores or not all(_from_chain(x, defs) for s in stores for x in _reads(s)[-1:]):
        return None
    return _judge(chain, r, (load, slot, loads), stores, cta, masks)


def _judge(chain: Any, r: Any, at: tuple, stores: list, cta: Any, masks: list[int]) -> Finding | str:
    """:func:`check_stage` once the round is found; ``at``: (the chain's load, its slot, the round's loads)."""
    load, slot, loads = at
    ev, n, memo = getattr(cta, "ev", None), getattr(cta, "threads", 0), getattr(cta, "memo", {})
    if ev is None or n != 32 * (1 << len(r.warps)):
        return "the threads of the CTA do not match the reduce's warps"
    ref = _addresses(load, 1, ev, n, memo)
    mem = _store_map(stores, ref[0], r, ev, n, memo) if ref is not None else "the load's address does not read"
    tags = _loaded(load, slot, mem, ev, n, memo) if isinstance(mem, dict) else mem
    if isinstance(tags, str):
        return tags
    unread = _unread(loads, mem, ref[0], ev, n, memo)
    if unread:
        return unread
    fence = _fence(stores, load, getattr(ev, "code", None), getattr(ev, "index", {}))
    if fence is not None and any(p is not None and p.warp != t // 32 for t, p in enumerate(tags)):
        return fence if isinstance(fence, str) else Finding(chain.steps[0][0], "counterexample", (
            f"reduce at TTGIR line {r.op.line}, inter-warp stage: no CTA barrier between the round's stores (PTX "
            f"lines {', '.join(str(x.line) for x in stores)}) and its load at PTX line {load.line}, with no branch "
            "between them: a warp may read another warp's slot before that warp wrote it (PTX ISA 9.7.13.1 bar.sync)"))
    return _verdict(chain, r, tags, _needs(mem), masks, stores, load)


def _fence(stores: list[Instr], load: Instr, code: list | None, index: dict) -> str | bool | None:
    """None when a CTA barrier (``bar.sync``/``barrier.sync``/``bar.red``, not ``.warp``) lies between the
    round's last store and ``load`` in program order; True when none does and no branch either (every
    path from the store to the load is that straight line); a reason when a branch lies between."""
    if code is None:
        return "the function's instructions are not at hand to find its barrier"
    lo, hi = max(s.line for s in stores), load.line
    a, b = index.get(lo), index.get(hi)
    between = code[a + 1:b] if a is not None and b is not None else [i for i in code if lo < i.line < hi]
    if any(i.head in ("bar", "barrier") and "warp" not in i.parts and ("sync" in i.parts or "red" in i.parts)
           for i in between):
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
    got: set = set()
    for ld in loads:
        addr, size = _addresses(ld, 1, ev, n, memo), _size(ld)
        delta = _delta(addr[0], ref) if addr is not None else None
        if delta is None or size is None:
            return f"the address of {ld.opcode} (PTX line {ld.line}) is not a function of %tid relative to the round"
        width = len(ld.args[0].items) if isinstance(ld.args[0], Vec) else 1
        got |= {mem.get(delta + int(o) + b) for o in addr[1] for b in range(width * size)}
    lost = sorted({p for p in mem.values() if p is not None} - got, key=lambda p: (p.element, p.part))
    return None if not lost else (f"the partial of warp {lost[0].warp} for element {lost[0].element[2]} (store at PTX "
                                  f"line {lost[0].element[0]}) is read by no load of the round")


def _verdict(chain: Any, r: Any, tags: list, need: dict, masks: list[int], stores: list, load: Instr) -> Finding | str:
    """The finding from every thread's combination (module law)."""
    counts = lane_counts(masks)
    idem = len(r.region) == 1 and r.region[0][0] in _IDEMPOTENT
    right, wrong, blank, groups = set(), {}, None, set()
    for t in range(len(tags)):
        w = t // 32 * 32
        row = counts[t % 32]
        lanes = [tags[w + u] for u in range(32)]
        if any(lanes[u] is None for u in np.flatnonzero(row)):
            blank = blank or (t, next(u for u in np.flatnonzero(row) if lanes[u] is None))
            continue
        fault = _thread_fault(lanes, row, need, idem)
        elem = lanes[int(np.flatnonzero(row)[0])].element
        if fault is None:
            right.add(elem)
            groups.add(tuple(sorted({lanes[u].warp for u in np.flatnonzero(row)})))
        else:
            wrong.setdefault(elem, (t, fault))
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
    loaded = {p.element for p in tags if p is not None}
    if loaded - right:
        return f"the element {sorted(loaded - right)[0][2]} is loaded by some lane but combined by no complete thread"
    return Finding(chain.steps[0][0], "proved", f"{head}: every thread whose lanes loaded stored partials combines "
                   f"the partials of exactly the warps along axis {r.axis} that share its element (warp bases "
                   f"{[list(b) for b in r.warps]}), each {'at least ' if idem else ''}once; all {len(right)} loaded "
                   "elements are combined", tuple(sorted(groups)))
