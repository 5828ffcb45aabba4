"""Warp-specialized kernels (``ttg.warp_specialize``): which warps run which partition, read from
the PTX Triton writes for it, and each partition's accesses evaluated with its own warps.

Triton lowers a ``ttg.warp_specialize`` (``WarpSpecializeOpConversion``, TritonNVIDIAGPUToLLVM) to
one kernel whose warps ``0 .. num_warps-1`` run the default partition while the other warps wait in
a dispatch loop: each reads one byte of a state table in shared memory at ``base + warp id`` (the
warp id is ``%tid.x >> 5`` broadcast by ``shfl.sync.idx``) and jumps with ``brx.idx`` to the
region of the partition that byte names (the PTX ISA's ``.branchtargets`` table, in partition
order, then the idle warps' and the exit's entries). The default partition writes the table with
constant stores before the barrier that starts the workers, and passes the captured values through
constant addresses the workers load back. A worker partition of ``k`` warps starting at warp ``s``
computes its thread index as ``%tid.x - 32 s`` (the TTGIR's layouts are over its ``k`` warps).

Read here (:func:`partition_map`): the dispatch (``brx.idx``, its table, the state-byte load and
the byte of each warp), the table the default partition writes (each warp's partition), each
partition's region (the code reachable from its table entry without passing the dispatch loop
again) and the machinery's own accesses. Checked here (:func:`partition_checks`):

* ``warp-partition``: each worker partition runs on ``num_warps(k)`` consecutive warps as the
  TTGIR says (at the table store), and each ``%tid.x - c`` whose value only one partition's region
  uses has ``c = 32 s`` (an error at that instruction otherwise);
* ``register-budget``: the ``setmaxnreg`` that opens each worker region sets the partition's
  ``requestedRegisters`` (PTX ISA, setmaxnreg);
* ``smem-address`` of the machinery: each warp's state byte is a byte the table store writes,
  each capture load reads bytes a store of the default partition wrote;
* ``smem-address`` over every warp of a worker partition (:func:`warp_checks`): the element checks
  of :mod:`verilayout.audit.ptx_elements` compare the lanes of the partition's first warp; here
  every thread of its ``k`` warps, relative to the partition's least byte, against the layouts' bytes
  of its (warp, lane) (a warp placed at another warp's rows is an error at the access).

:class:`PartitionValues` wraps a function's evaluator so that ``%tid.x`` read by an instruction of a
worker region is the thread ``32 s + (t mod 32 k)``: threads ``t = 0 .. 32k-1`` are the partition's,
and larger ``t`` repeat them (the CTA-wide checks evaluate ``32 num_warps`` threads).

>>> PartitionValues.shift_of(Partition(0, (4, 5), 2, frozenset(), "L", None))
(128, 64)
"""
from __future__ import annotations

from typing import Any

import z3

from verilayout.audit.model import Check
from verilayout.audit.ptx_context import Partition, PartitionMap, PtxContext
from verilayout.audit.ptx_smem import address_of, matrix_bytes, matrix_count, smem_access, thread_offsets
from verilayout.audit.ttgir import layout_shape
from verilayout.core.linear_layout import LinearLayout
from verilayout.errors import LayoutError
from verilayout.frontends.mlir import elem_bit_width
from verilayout.frontends.triton import attr_to_linear
from verilayout.frontends.ttgir import Module
from verilayout.hw.nvidia.ptx_model import Imm, Instr, PtxModule, Reg, Vec
from verilayout.prove.ptx_values import SMEM, TID


# ----- the PTX's dispatch ------------------------------------------------------------------------

def _blocks(code: list[Instr], labels: dict[str, int], table: tuple[str, ...]) -> tuple[list[int], dict[int, list[int]]]:
    """Basic-block starts (indices into ``code``) and each block's successors (block starts);
    ``table``: the targets of the function's ``brx.idx``."""
    starts = sorted({0, *labels.values(), *(k + 1 for k, i in enumerate(code)
                                              if i.head in ("bra", "brx", "ret", "exit") and k + 1 < len(code))})
    succ: dict[int, list[int]] = {}
    for b, e in zip(starts, starts[1:] + [len(code)]):
        last = code[e - 1]
        out: list[int] = []
        if last.head == "bra" and last.args and hasattr(last.args[0], "name"):
            out.append(labels.get(last.args[0].name, -1))
            if last.guard is not None and e < len(code):
                out.append(e)
        elif last.head == "brx":
            out.extend(labels.get(t, -1) for t in table)
        elif last.head not in ("ret", "exit") and e < len(code):
            out.append(e)
        succ[b] = [s for s in out if s >= 0]
    return starts, succ


def _reach(start: int, starts: list[int], succ: dict[int, list[int]], stop: set[int]) -> set[int]:
    """Block starts reachable from block ``start`` without entering a block of ``stop``."""
    seen, work = set(), [start]
    while work:
        b = work.pop()
        if b in seen or b in stop:
            continue
        seen.add(b)
        work.extend(succ.get(b, []))
    return seen


def _offset_from_smem(ev: Any, ins: Instr) -> Any:
    """The access's address minus ``global_smem`` (a z3 term over ``%tid.x`` and the symbols), or
    None when it has no ``[register+immediate]`` address or the register is not evaluated."""
    addr = address_of(ins)
    if addr is None or addr.offset is None:
        return None
    e = ev.operand(addr.base, 32, at=ins)
    return None if e is None else e + addr.offset - SMEM


def _const_address(ev: Any, ins: Instr) -> int | None:
    """``c`` when the access's address is ``global_smem + c`` for every thread, else None."""
    e = _offset_from_smem(ev, ins)
    if e is None:
        return None
    d = z3.simplify(e)
    return d.as_long() if z3.is_bv_value(d) else None


def _imm_bytes(ins: Instr) -> dict[int, int] | None:
    """Byte offset -> value of a store whose value is immediates only (little-endian)."""
    acc = smem_access(ins)
    if acc is None or acc[0] != "store" or len(ins.args) < 2:
        return None
    val = ins.args[1]
    items = val.items if isinstance(val, Vec) else (val,)
    if not all(isinstance(x, Imm) for x in items):
        return None
    width = acc[2] // len(items)
    out: dict[int, int] = {}
    for k, x in enumerate(items):
        for b in range(width):
            out[k * width + b] = (x.value >> (8 * b)) & 0xFF
    return out


def _state_bytes(ev: Any, load: Instr, warps: int) -> dict[int, int] | None:
    """Warp -> the offset from ``global_smem`` of the byte the state load reads for it."""
    e = _offset_from_smem(ev, load)
    if e is None:
        return None
    out = {}
    for w in range(warps):
        d = z3.simplify(z3.substitute(e, (TID, z3.BitVecVal(32 * w, 32))))
        if not z3.is_bv_value(d):
            return None
        out[w] = d.as_long()
    return out


def _ttgir_partitions(tmod: Module) -> tuple[list[tuple[int, int, int]], tuple[int, ...]] | str:
    ws = [o for o in tmod.ops if o.name == "ttg.warp_specialize"]
    if len(ws) != 1:
        return f"{len(ws)} ttg.warp_specialize ops (one is modelled)"
    regs = ws[0].attributes.get("requestedRegisters", ())
    return list(tmod.partitions), tuple(regs) if isinstance(regs, tuple) else ()


def partition_map(mod: PtxModule, tmod: Module, evals: dict) -> PartitionMap | str | None:
    """The :class:`PartitionMap` of a warp-specialized kernel (see the module docstring); None when
    the TTGIR has no ``ttg.warp_specialize``; a reason (text) when the PTX's dispatch is not the one
    modelled (several ``ttg.warp_specialize`` ops, no state-byte dispatch, no table store).

    >>> from verilayout.frontends.ptx import parse_ptx
    >>> from verilayout.frontends.ttgir import parse_module
    >>> partition_map(parse_ptx(".version 8.7\\n.entry f()\\n{\\nret;\\n}"), parse_module("module {\\n}"), {}) is None
    True
    """
    if not any(o.name == "ttg.warp_specialize" for o in tmod.ops):
        return None
    got = _ttgir_partitions(tmod)
    if isinstance(got, str):
        return got
    heads, regs = got
    found = [d for f in mod.functions if (d := _dispatch(mod, f)) is not None]
    if len(found) != 1:
        return f"{len(found)} dispatches on a shared-memory state byte in the PTX (one is modelled)"
    load, last, table = found[0]
    ev = evals.get(load.func)
    if ev is None or any(k not in table for k in range(len(heads))):
        return "the dispatch does not name a region for every partition"
    return _regions(mod, tmod, ev, (load, last), table, heads, regs)


def _dispatch(mod: PtxModule, func: str) -> tuple[Instr, Instr, dict[int, str]] | None:
    """``(state-byte load, last dispatch instruction, index -> region label)`` of a function: a
    byte load from shared memory whose value selects the region, by ``brx.idx`` (its
    ``.branchtargets`` table) or by a chain of ``setp.eq`` + ``@p bra`` (LLVM's switch lowered to
    compares)."""
    code = [i for i in mod.instrs if i.func == func]
    for k, ld in enumerate(code):
        acc = smem_access(ld)
        if acc is None or acc[0] != "load" or acc[2] != 1 or not ld.args or not isinstance(ld.args[0], Reg):
            continue
        sel, table, last = ld.args[0].name, {}, None
        for j in range(k + 1, min(k + 24, len(code))):
            i = code[j]
            if i.head == "brx" and i.args and getattr(i.args[0], "name", None) == sel:
                lab = getattr(i.args[-1], "name", None)
                targets = next((t for f, name, t in mod.branch_tables if f == func and name == lab), ())
                table.update(enumerate(targets))
                last = i
                break
            if i.head == "setp" and "eq" in i.parts and len(i.args) == 3 and getattr(i.args[1], "name", None) == sel \
                    and isinstance(i.args[2], Imm) and j + 1 < len(code):
                b = code[j + 1]
                if b.head == "bra" and b.guard is not None and not b.guard.negated \
                        and b.guard.reg == getattr(i.args[0], "name", None) and b.args:
                    table[i.args[2].value] = b.args[0].name
                    last = b
        if table and last is not None:
            return ld, last, table
    return None


def _regions(mod: PtxModule, tmod: Module, ev: Any, dispatch: tuple[Instr, Instr], table: dict[int, str],
             heads: list, regs: tuple) -> PartitionMap | str:
    load, last = dispatch
    code = [i for i in mod.instrs if i.func == load.func]
    index = {id(i): k for k, i in enumerate(code)}
    first = {i.line: k for k, i in enumerate(code)}
    labels = {lab: min(at, len(mod.instrs) - 1) for f, lab, at in mod.labels if f == load.func}
    labels = {lab: index.get(id(mod.instrs[at]), len(code)) for lab, at in labels.items()}
    threads = mod.threads_of(load.func) or 32 * ((tmod.num_warps or 4) + sum(h[2] for h in heads))
    state = _state_bytes(ev, load, threads // 32)
    if state is None:
        return "the state byte each warp reads is not global_smem + a constant + its warp"
    store, owner, stores = _table_store(code, ev, state, len(heads), load)
    if store is None:
        return "no constant store writes the state table before the workers start"
    starts, succ = _blocks(code, labels, tuple(table.get(k, "") for k in range(max(table) + 1)))
    ends = dict(zip(starts, starts[1:] + [len(code)]))
    head = max(b for b in starts if b <= first[load.line])
    parts = []
    for _line, idx, nw in heads:
        if table[idx] not in labels:
            return f"partition {idx}'s region {table[idx]} is not a label of the function"
        blocks = _reach(labels[table[idx]], starts, succ, {head})
        lines = frozenset(code[k].line for b in blocks for k in range(b, ends[b]))
        warps = tuple(w for w, v in sorted(owner.items()) if v == idx)
        entry = code[labels[table[idx]]].line if labels[table[idx]] < len(code) else 0
        parts.append(Partition(idx, warps, nw, lines, table[idx], regs[idx] if len(regs) > idx else None, entry))
    return _with_captures(code, ev, tuple(parts), last, load, stores, state, (heads, regs))


def _table_store(code: list[Instr], ev: Any, state: dict[int, int], n: int, load: Instr) -> tuple:
    """``(first, owner, stores)``: the constant stores of immediates before the dispatch's ``load``
    that first write a warp's state byte (a table LLVM split into several stores,
    ``st.shared.v2.b32`` then ``st.shared.b32``, is read whole; a byte's first store wins: the later
    ones send the warps to the exit entry), the first of them, and the index the table gives each
    warp whose byte they write; ``(None, {}, ())`` when no byte holds a worker partition's index
    (``< n``, the TTGIR's partitions; the larger entries are the idle warps' and the exit)."""
    owner: dict[int, int] = {}
    stores: list[Instr] = []
    for ins in code:
        if ins is load:
            break
        vals = _imm_bytes(ins)
        c = _const_address(ev, ins) if vals else None
        if c is None:
            continue
        fresh = {w: vals[b - c] for w, b in state.items() if 0 <= b - c < len(vals) and w not in owner}
        if fresh:
            stores.append(ins)
            owner.update(fresh)
    if not stores or not any(v < n for v in owner.values()):
        return None, {}, ()
    return stores[0], owner, tuple(stores)


def _with_captures(code: list[Instr], ev: Any, parts: tuple, dispatch: Instr, load: Instr,
                   table: tuple[Instr, ...], state: dict, ttgir: tuple) -> PartitionMap:
    """The map, with the captures: constant-address loads of the worker code (regions and the
    dispatch loop) and the constant stores of the default code whose bytes they read."""
    worker = set().union(*(p.lines for p in parts)) if parts else set()
    loop = {i.line for i in code if i.line >= min((x.line for x in code if x.line in worker), default=0)
            and i.line not in worker and i.line >= load.line - 1 and i.line <= dispatch.line}
    loads, stores = [], []
    for ins in code:
        acc = smem_access(ins)
        if acc is None or ins.line == load.line or any(ins is t for t in table):
            continue
        c = _const_address(ev, ins)
        if c is None:
            continue
        span = (c, c + acc[2])
        if acc[0] == "load" and (ins.line in worker or ins.line in loop):
            loads.append((ins, span))
        elif acc[0] == "store" and ins.line not in worker:
            stores.append((ins, span))
    read = [(i, s) for i, s in stores if any(s[0] < t[1] and t[0] < s[1] for _, t in loads)]
    tables = [(i, s) for i, s in stores if _imm_bytes(i) and any(s[0] <= b < s[1] for b in state.values())]
    lines = {load.line} | {t.line for t in table} | {i.line for i, _ in loads + read + tables}
    return PartitionMap(parts, dispatch, load, table[0], state, frozenset(lines), tuple(read), tuple(loads), ttgir,
                        table)


# ----- the evaluator of a partition's threads ----------------------------------------------------

class PartitionValues:
    """A function's evaluator (``verilayout.prove.ptx_values.PtxValues``) whose values, read by an
    instruction of a worker region, see ``%tid.x`` as ``32 s + (t mod 32 k)`` (the partition's
    ``k`` warps from warp ``s``); everything else is the wrapped evaluator's."""

    def __init__(self, ev: Any, pmap: PartitionMap):
        self._ev = ev
        self._pmap = pmap
        self._memo: dict = {}
        self._pdef = {}
        for name, ds in getattr(ev, "pdefs", {}).items():
            if len(ds) == 1:
                self._pdef[name] = ds[0].line

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ev, name)

    @staticmethod
    def shift_of(p: Partition) -> tuple[int, int]:
        """``(first thread, threads)`` of a partition."""
        return 32 * (p.warps[0] if p.warps else 0), 32 * max(1, p.num_warps)

    def _shift(self, e: Any, line: int | None) -> Any:
        p = self._pmap.partition_of(line) if line is not None else None
        if e is None or p is None or not p.warps:
            return e
        s, n = self.shift_of(p)
        key = (e.get_id(), s, n)
        hit = self._memo.get(key)
        if hit is None:
            t = TID & (n - 1) if n & (n - 1) == 0 else z3.URem(TID, n)
            hit = self._memo[key] = (e, z3.substitute(e, (TID, t + s)))
        return hit[1]

    def operand(self, op: Any, w: int, at: Instr | None = None) -> Any:
        """The wrapped evaluator's value, ``%tid.x`` read as the thread of ``at``'s partition."""
        return self._shift(self._ev.operand(op, w, at=at), at.line if at is not None else None)

    def reg(self, name: str, at: Instr | None = None) -> Any:
        """The wrapped evaluator's value, ``%tid.x`` read as the thread of ``at``'s partition."""
        return self._shift(self._ev.reg(name, at=at), at.line if at is not None else None)

    def pred(self, p: Any) -> Any:
        """A guard, ``%tid.x`` read as the thread of its ``setp``'s partition."""
        name = getattr(p, "reg", p)
        return self._shift(self._ev.pred(p), self._pdef.get(name))


def partitioned(mod: PtxModule, tmod: Module, evals: dict) -> tuple[dict, PartitionMap | str | None]:
    """``evals`` with the function holding the worker regions wrapped in :class:`PartitionValues`,
    and the map (or the reason it is not read, or None). Without a ``ttg.warp_specialize``,
    ``evals`` itself and None.

    >>> from verilayout.frontends.ptx import parse_ptx
    >>> from verilayout.frontends.ttgir import parse_module
    >>> partitioned(parse_ptx(".version 8.7\\n.entry f()\\n{\\nret;\\n}"), parse_module("module {\\n}"), {})
    ({}, None)
    """
    try:
        pmap = partition_map(mod, tmod, evals)
    except (z3.Z3Exception, LayoutError, ValueError, KeyError, IndexError, TypeError) as e:
        pmap = f"the dispatch could not be read ({type(e).__name__}: {str(e)[:80]})"
    if not isinstance(pmap, PartitionMap):
        return evals, pmap
    f = pmap.dispatch.func
    return {k: (PartitionValues(v, pmap) if k == f else v) for k, v in evals.items()}, pmap


def op_threads(tmod: Module, line: int, default: int) -> int:
    """The threads that run the TTGIR op at ``line``: ``32 k`` inside a worker partition of ``k``
    warps (from its header to its ``ttg.warp_return``), else ``default``.

    >>> from verilayout.frontends.ttgir import parse_module
    >>> op_threads(parse_module("module {\\n}"), 3, 128)
    128
    """
    returns = [o.line for o in tmod.ops if o.name == "ttg.warp_return"]
    for head, _idx, k in tmod.partitions:
        end = next((r for r in returns if r > head), None)
        if end is not None and head < line <= end:
            return 32 * k
    return default


def with_partitions(ev: Any, pmap: PartitionMap | str | None) -> Any:
    """``ev`` wrapped in :class:`PartitionValues` when it evaluates the function holding the worker
    regions of ``pmap`` (:func:`partitioned`'s map); else ``ev`` itself.

    >>> with_partitions("ev", None)
    'ev'
    """
    if isinstance(pmap, PartitionMap) and getattr(ev, "code", None) and ev.code[0].func == pmap.dispatch.func:
        return PartitionValues(ev, pmap)
    return ev


# ----- checks ------------------------------------------------------------------------------------

def _check(ins: Instr, check: str, ok: bool, message: str, data: dict) -> Check:
    return Check(".".join(ins.parts[:2]), ins.line, ins.loc, check, "proved" if ok else "counterexample",
                 None if ok else "error", message, dict(data, source="ptx"))


def partition_checks(ctx: PtxContext, elements: list[Check]) -> list[Check]:
    """The checks of the module docstring for the file's partition map (``ctx.partitions``; an
    ``unchecked`` with its reason when the map could not be read; nothing without a
    ``ttg.warp_specialize``); ``elements``: the element checks of the file.

    >>> from verilayout.frontends.ptx import parse_ptx
    >>> partition_checks(PtxContext("k.ptx", parse_ptx(".version 8.7\\n.entry f()\\n{\\nret;\\n}"), None, (), {}), [])
    []
    """
    mod, tmod, evals, memo, pmap = ctx.ptx, ctx.tmod, ctx.values, ctx.memo, ctx.partitions
    if pmap is None:
        return []
    if isinstance(pmap, str):
        at = next((i for i in mod.instrs if i.head == "brx"), mod.instrs[0] if mod.instrs else None)
        return [] if at is None else [Check(".".join(at.parts[:2]), at.line, at.loc, "warp-partition", "unchecked",
                                            None, f"ttg.warp_specialize: partitions not tied to the PTX: {pmap}",
                                            {"source": "ptx", "reason": pmap})]
    out = _warp_sets(pmap) + _tid_offsets(mod, pmap, evals) + _budgets(mod, pmap) + _machinery(pmap, evals)
    return out + warp_checks(mod, tmod, pmap, evals, memo, elements)


def _warp_sets(pmap: PartitionMap) -> list[Check]:
    out = []
    for p in pmap.partitions:
        w = p.warps
        ok = len(w) == p.num_warps and w == tuple(range(w[0], w[0] + len(w))) if w else False
        out.append(_check(pmap.table_store, "warp-partition", ok,
                          f"ttg.warp_specialize partition{p.index} (num_warps({p.num_warps})): the state table "
                          f"sends warps {list(w)} to its region {p.label}"
                          + ("" if ok else f", not {p.num_warps} consecutive warps"),
                          {"partition": p.index, "warps": list(w), "num_warps": p.num_warps}))
    return out


def _tid_offsets(mod: PtxModule, pmap: PartitionMap, evals: dict) -> list[Check]:
    """Each ``add``/``sub`` of a constant to ``%tid.x`` whose users all lie in one partition's
    region: the constant is minus the partition's first thread."""
    ev = evals.get(pmap.dispatch.func)
    raw = getattr(ev, "_ev", ev)
    users: dict[str, set[int]] = {}
    for i in mod.instrs:
        for a in i.args[1:]:
            for r in (a.items if isinstance(a, Vec) else (getattr(a, "base", a),)):
                if isinstance(r, Reg):
                    users.setdefault(r.name, set()).add(i.line)
    out = []
    for i in mod.instrs:
        if i.func != pmap.dispatch.func or i.head not in ("add", "sub") or len(i.args) != 3 \
                or not isinstance(i.args[2], Imm) or not isinstance(i.args[0], Reg):
            continue
        x = raw.operand(i.args[1], 32, at=i) if raw is not None else None
        if x is None or not z3.eq(z3.simplify(x), TID):
            continue
        c = i.args[2].value if i.head == "sub" else -i.args[2].value
        owners = {pmap.partition_of(ln) for ln in users.get(i.args[0].name, ())}
        if len(owners) != 1 or None in owners:
            continue
        p = owners.pop()
        want = 32 * p.warps[0] if p.warps else 0
        out.append(_check(i, "warp-partition", c == want,
                          f"partition{p.index} (warps {list(p.warps)}): its thread index is %tid.x - {c}"
                          + ("" if c == want else f", not %tid.x - {want} (its first warp is {want // 32})"),
                          {"partition": p.index, "tid_offset": c, "expected": want}))
    return out


def _group_budget(pmap: PartitionMap, p: Partition) -> int | None:
    """The registers the warpgroups of ``p`` must set: ``setmaxnreg`` is executed by every warp of a
    warpgroup with one value (PTX ISA, setmaxnreg: ``.sync.aligned`` over the warpgroup), so the
    partitions sharing a warpgroup take the largest of their ``requestedRegisters``."""
    groups = {w // 4 for w in p.warps}
    asks = [q.registers for q in pmap.partitions if q.registers is not None and {w // 4 for w in q.warps} & groups]
    return max(asks) if asks else None


def _budgets(mod: PtxModule, pmap: PartitionMap) -> list[Check]:
    out = []
    for p in pmap.partitions:
        want = _group_budget(pmap, p)
        first = next((i for i in mod.instrs if i.line in p.lines and i.line >= p.entry and i.head == "setmaxnreg"), None)
        if want is None or first is None or not first.args or not isinstance(first.args[0], Imm):
            continue
        got = first.args[0].value
        out.append(_check(first, "register-budget", got == want,
                          f"partition{p.index} (warps {list(p.warps)}): its region sets {got} registers a thread"
                          + ("" if got == want else f", not {want}")
                          + f" (requestedRegisters {p.registers}; the largest request among the partitions sharing "
                          "its warpgroups, setmaxnreg being warpgroup-wide)",
                          {"partition": p.index, "registers": got, "requested": p.registers, "expected": want}))
    return out


def _machinery(pmap: PartitionMap, evals: dict) -> list[Check]:
    """The state byte of every worker warp is written by the table store; every capture load reads
    bytes a store of the default code wrote."""
    ev = evals.get(pmap.dispatch.func)
    spans = []
    for st in pmap.table_stores or (pmap.table_store,):
        c = _const_address(getattr(ev, "_ev", ev), st)
        if c is not None:
            spans.append((c, c + len(_imm_bytes(st) or {})))
    workers = [w for p in pmap.partitions for w in p.warps]
    missing = [w for w in workers if not any(a <= pmap.state_bytes[w] < z for a, z in spans)]
    lines = ", ".join(str(t.line) for t in pmap.table_stores or (pmap.table_store,))
    out = [_check(pmap.state_load, "smem-address", not missing,
                  "ttg.warp_specialize dispatch: every worker warp reads its state byte (global_smem + "
                  f"{min(pmap.state_bytes.values())} + warp) where the table's stores (PTX lines {lines}) "
                  "write it" + (f"; not warps {missing}" if missing else ""),
                  {"ttgir_op": "ttg.warp_specialize", "warps": workers})]
    written = [s for _, s in pmap.captures]
    for ins, (lo, hi) in pmap.captured:
        ok = all(any(a <= b < z for a, z in written) for b in range(lo, hi))
        out.append(_check(ins, "smem-address", ok,
                          f"ttg.warp_specialize capture: bytes {lo}..{hi - 1} of global_smem are "
                          + ("written by the default partition's capture stores (PTX lines "
                             f"{sorted(i.line for i, _ in pmap.captures)})" if ok else "not all written by a capture store"),
                          {"ttgir_op": "ttg.warp_specialize", "bytes": [lo, hi]}))
    return out


# ----- every warp of a worker partition ----------------------------------------------------------

def _warp_layout_bytes(rt: Any, mt: Any, k: int) -> list[set[int]] | str:
    """Per thread ``32 w + l`` of a partition of ``k`` warps, the bytes the layouts give its
    elements (register layout composed with the inverse shared layout), or why not."""
    if tuple(rt.shape) != tuple(mt.shape) or tuple(mt.shape) != tuple(layout_shape(mt)):
        return "a view of its allocation"
    bits = elem_bit_width(mt.elem)
    if not bits or bits % 8:
        return "a sub-byte element type"
    reg = attr_to_linear(rt.encoding, tuple(rt.shape))
    smem = attr_to_linear(mt.encoding, layout_shape(mt))
    if not isinstance(reg, LinearLayout) or not isinstance(smem, LinearLayout) or "offset" not in smem.in_dims:
        return "a layout that is not linear"
    comp = reg.invert_and_compose(smem)
    col = comp.out_dim_names.index("offset")
    eb = bits // 8

    def span(dim: str, n: int) -> list[int]:
        vals = [0]
        for basis in comp.bases.get(dim, [])[:max(0, n.bit_length() - 1)]:
            vals = vals + [v ^ basis[col] for v in vals]
        return [vals[i % len(vals)] for i in range(n)]

    regs = span("register", comp.in_dim_size("register") if "register" in comp.in_dims else 1)
    lanes, warps = span("lane", 32), span("warp", k)
    return [{(r ^ lanes[t % 32] ^ warps[t // 32]) * eb + b for r in regs for b in range(eb)} for t in range(32 * k)]


def _types(op: Any) -> tuple[Any, Any] | None:
    try:
        if op.name == "ttg.local_load":
            return op.out_types[0].read(), op.in_types[0].read()
        if op.name == "ttg.local_store":
            mem = op.in_types[1] if len(op.in_types) > 1 else op.out_types[0]
            return op.in_types[0].read(), mem.read()
        if op.name == "ttg.local_alloc" and op.in_types:
            return op.in_types[0].read(), op.out_types[0].read()
    except (LayoutError, IndexError, KeyError, ValueError):
        return None
    return None


def _thread_bytes(ev: Any, instrs: list[Instr], n: int, memo: dict) -> list[dict[int, Instr]] | str:
    """Per thread of the partition, each byte its accesses touch (relative to the first access's
    thread 0) -> the access."""
    per: list[dict[int, Instr]] = [{} for _ in range(n)]
    ref = None
    for ins in instrs:
        addr, acc = address_of(ins), smem_access(ins)
        if addr is None or addr.offset is None or acc is None or ins.pred is not None:
            return "an access that is predicated or not [register+offset]"
        got = thread_offsets(ev, ins, addr.base, n, memo)
        if got is None:
            return "addresses not exact relative to the partition's first thread"
        zero, offs = got
        zero = z3.simplify(zero + addr.offset)
        ref = zero if ref is None else ref
        d = z3.simplify(zero - ref)
        if not z3.is_bv_value(d):
            return "accesses not a constant apart"
        rel = d.as_long() - (1 << 32) if d.as_long() >= 1 << 31 else d.as_long()
        if ins.head in ("ldmatrix", "stmatrix"):         # the PTX ISA fragment, warp by warp
            lanes = [b for w in range(n // 32) for b in matrix_bytes(offs[32 * w:32 * w + 32], matrix_count(ins, 1),
                                                                     "trans" in ins.parts)]
        else:
            lanes = [range(o, o + acc[2]) for o in offs]
        for t, got in enumerate(lanes):
            for b in got:
                per[t][rel + b] = ins
    return per


def warp_checks(mod: PtxModule, tmod: Module, pmap: PartitionMap, evals: dict, memo: dict,
                elements: list[Check]) -> list[Check]:
    """``smem-address`` over every warp of a worker partition of more than one warp, for each
    element check that proved a local load or store of its first warp: for every thread ``32 w + l``
    of the partition, the bytes its accesses touch (relative to the partition's least byte) are the
    bytes the layouts give the elements of warp ``w``, lane ``l`` (relative to theirs). An error
    names the access, the warp and the lane.

    >>> from verilayout.frontends.ptx import parse_ptx
    >>> from verilayout.frontends.ttgir import parse_module
    >>> empty = PartitionMap((), None, None, None, {}, frozenset())
    >>> warp_checks(parse_ptx(".version 8.7\\n.entry f()\\n{\\nret;\\n}"), parse_module("module {\\n}"), empty, {}, {}, [])
    []
    """
    by_line = {i.line: i for i in mod.instrs}
    ops = {o.line: o for o in tmod.ops}
    out = []
    for c in elements:
        p = pmap.partition_of(c.line)
        op = ops.get(c.data.get("ttgir_line"))
        if c.status != "proved" or p is None or p.num_warps < 2 or op is None or len(p.warps) != p.num_warps:
            continue
        types = _types(op)
        try:
            want = _warp_layout_bytes(*types, p.num_warps) if types else "its types could not be read"
        except (LayoutError, KeyError, ValueError) as e:
            want = str(e)
        instrs = [by_line[ln] for ln in c.data.get("instructions", ()) if ln in by_line]
        got = _thread_bytes(evals.get(instrs[0].func), instrs, 32 * p.num_warps, memo) if instrs else "no access"
        why = want if isinstance(want, str) else got if isinstance(got, str) else None
        if why is not None:
            at = instrs[0] if instrs else by_line.get(c.line)
            out.append(Check(".".join(at.parts[:2]), at.line, at.loc, "smem-address", "unchecked", None,
                             f"{op.name} (TTGIR line {op.line}), partition{p.index}: its warps after the first "
                             f"(CTA warps {list(p.warps[1:])}) not compared: {why}",
                             {"source": "ptx", "reason": why, "partition": p.index, "ttgir_line": op.line}))
            continue
        out.append(_warp_compare(op, p, instrs, got, want))
    return out


def _warp_compare(op: Any, p: Partition, instrs: list[Instr], got: list[dict], want: list[set[int]]) -> Check:
    lo_p = min((min(d) for d in got if d), default=0)
    lo_l = min((min(s) for s in want if s), default=0)
    data = {"ttgir_line": op.line, "ttgir_op": op.name, "partition": p.index, "warps": list(p.warps),
            "instructions": [i.line for i in instrs]}
    for t, (g, w) in enumerate(zip(got, want)):
        have = {b - lo_p for b in g}
        need = {b - lo_l for b in w}
        if have != need:
            bad = sorted(have - need)
            at = g.get(bad[0] + lo_p, instrs[0]) if bad else instrs[0]
            return _check(at, "smem-address", False,
                          f"{op.name} (TTGIR line {op.line}), partition{p.index}: lane {t % 32} of its warp "
                          f"{t // 32} (CTA warp {p.warps[0] + t // 32}) touches "
                          + (f"byte {bad[0]}" if bad else "other bytes")
                          + " (relative to the partition's first byte) that no element of that warp's lane has "
                          f"({at.opcode}, line {at.line})", dict(data, thread=t))
    return _check(instrs[0], "smem-address", True,
                  f"{op.name} (TTGIR line {op.line}), partition{p.index}: every lane of each of its "
                  f"{p.num_warps} warps (CTA warps {list(p.warps)}) touches exactly the bytes the layouts give "
                  "its elements, relative to the partition's first byte", data)
