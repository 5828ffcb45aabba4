"""Element-exact shared-memory accesses: with the TTGIR beside the PTX, the bytes each lane stores
or loads are the bytes the layouts give its elements (check ``smem-address``).

For each TTGIR op that moves a distributed tensor through shared memory (``ttg.local_alloc`` with
a source, ``ttg.local_store``, ``ttg.local_load``, ``ttg.async_copy_global_to_local``), the layouts
say where each element of warp 0 goes: the register layout composed with the inverse of the
shared layout (``invert_and_compose``) maps ``(register, lane)`` to a shared offset, times the
element's bytes. The PTX instructions of the op (same source line, same direction:
``st.shared``/``cp.async``/``stmatrix`` store, ``ld.shared``/``ldmatrix`` load; less the round
trips a ``convert_layout`` of the line proved its own; plus, by dataflow, an access the scheduler
moved among them under another line's ``.loc`` through the same address register between the
same barriers) give each lane's bytes from its address register, evaluated symbolically at
``%tid.x`` = 0..31 (first loop iteration; a guard that is a function of ``%tid.x`` evaluated per
lane), plus the immediate offset and the access width. Ops of different types on one line take
the copies (base groups, split at barriers) whose bytes match their layouts exactly; ``ldmatrix``/``stmatrix`` follow the
PTX ISA fragment (lane ``l`` holds row ``l / 4``, bytes ``4 (l % 4)`` .. of each 8x8 matrix whose
row addresses lanes ``8i .. 8i+7`` give; ``.trans``: rows ``2 (l % 4)``, ``2 (l % 4) + 1`` at byte
``2 (l / 4)``). Instructions whose lane-0 addresses differ by a constant form one copy (a group);
a group holding several copies of the op (a pipelined prologue) is split in program order.

Law: for every lane, the set of bytes the PTX group touches equals the set the layouts give the
lane's elements, both taken relative to the least byte of the warp (the memdesc's base, a symbol
in the PTX, cancels). Not checked: which of a lane's registers goes to which of its bytes (the
values come from loads the evaluator does not trace) and the absolute base (the TTGIR Triton
dumps before allocation carries no ``allocation.offset``: a copy of one instruction moved as a
whole is not seen). A mismatch names the lane, the PTX instruction and both addresses.

Ties by dataflow, where the source line does not decide: copies a constant apart (one buffer, its
stages) belong to the op of the line whose layouts prove most of them, and its copy that fails is
its error (:func:`_majority_owner`); the loads of a ``ttg.local_load`` that the backend sank under
the line of its one user (a ``tt.dot``) are that op's (:func:`_sunk_loads`); an error whose blame
ties between accesses is reported at each of them. Conversions (:func:`convert_checks`): rounds
through one scratch that are several conversions are split; a round trip no conversion's law
accepts is compared with the one conversion program order leaves for it (an inference, said in the
message) and its error also charged to the access whose one shift makes the bytes whole. Every
other access goes to :func:`round_checks` (write-before-read over the CTA, module
:mod:`verilayout.audit.ptx_scratch`: reductions, scans, histograms, staging), the tensor-map
staging to :func:`tensormap_checks`, and what none of them reaches is ``unchecked`` with its
reason (never silently nothing).

In a warp-specialized kernel the evaluators are :mod:`verilayout.audit.ptx_partitions`' (a worker's
instructions see ``%tid.x`` from its first warp, so "warp 0" is the partition's first warp, and its
conversions and scratch rounds run over its own threads), and the dispatch's own accesses (state
table, captures) are left to that module's checks.

>>> sorted(_matrix_bytes([16 * i for i in range(32)], 4, False)[5])[:4]
[20, 21, 22, 23]
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import z3

from verilayout.audit.model import Check
from verilayout.audit.ptx_context import PtxContext
from verilayout.audit.ptx_partitions import op_threads
from verilayout.audit.ptx_relabel import instantiate, ranks, template
from verilayout.audit.ptx_scratch import (ThreadBytes, byte_stats, check_round, thread_keys, describe, load_mask, meets,
                                         repair_culprits, rounds, LazyUses, scratch_locs, sorted_unique,
                                         thread_arrays)
from verilayout.audit.ptx_smem import (ACCESS_HEADS, address_of, matrix_bytes as _matrix_bytes, matrix_count,
                                       smem_access, thread_guard, lane_byte_offsets,
                                       thread_offsets as _thread_offsets)
from verilayout.audit.ptx_tally import ScratchMap, map_wrong_reads, scratch_map, writer_of
from verilayout.audit.ttgir import layout_shape
from verilayout.prove.z3_api import at_zero_simplified, minus_simplified, plus_simplified
from verilayout.core.linear_layout import LinearLayout
from verilayout.errors import LayoutError
from verilayout.frontends.mlir import elem_bit_width
from verilayout.frontends.triton import attr_to_linear
from verilayout.frontends.ttgir import Module
from verilayout.hw.nvidia.ptx_model import Instr, PtxModule, Reg
from verilayout.prove.ptx_values import TID
from verilayout.prove.smem_address import address_parts, remembered
from verilayout.prove.term_memo import TermMemo

#: TTGIR op -> (direction, index of the register-side type, index of the memory-side type), where
#: an index ``("r", i)`` is the i-th result type and ``("o", i)`` the i-th operand type
_OPS = {"ttg.local_alloc": ("store", ("o", 0), ("r", 0)), "ttg.local_store": ("store", ("o", 0), ("o", 1)),
        "ttg.local_load": ("load", ("r", 0), ("o", 0)),
        "ttg.async_copy_global_to_local": ("store", ("o", 0), ("r", 0))}


#: ops whose lowering may go through scratch shared memory (their accesses carry their line too)
_SCRATCH = ("ttg.convert_layout", "tt.reduce", "tt.scan", "tt.histogram", "tt.gather")


def _types(tmod: Module, op: Any) -> tuple[Any, Any] | None:
    kind = _OPS.get(op.name)
    if kind is None:
        return None
    got = []
    for side, i in kind[1:]:
        seq = op.out_types if side == "r" else op.in_types
        if i >= len(seq) and (side, i) == ("o", 1) and op.out_types:
            seq, i = op.out_types, 0             # `local_store %x, %m : tensor<..> -> !ttg.memdesc<..>`
        if i >= len(seq):
            return None
        got.append(seq[i].read())
    return got[0], got[1]


def _layout_bytes(rt: Any, mt: Any, store: bool = False) -> tuple[list[set[int]], str, bool, int] | str:
    """Per lane of warp 0, the bytes the layouts give its elements, their description, whether
    lanes share elements (a zero lane basis: a store then needs each byte written by one of the
    lanes that hold it, or by all of them: see :func:`_compare`) and the element width in bytes;
    or why not."""
    if tuple(rt.shape) != tuple(mt.shape) or tuple(mt.shape) != tuple(layout_shape(mt)):
        return "a view or subslice of its allocation (not modelled here)"
    bits = elem_bit_width(mt.elem)
    if not bits or bits % 8:
        return f"element type {mt.elem} is not a whole number of bytes"
    reg = attr_to_linear(rt.encoding, tuple(rt.shape))
    smem = attr_to_linear(mt.encoding, layout_shape(mt))
    if not isinstance(reg, LinearLayout) or not isinstance(smem, LinearLayout) or "offset" not in smem.in_dims:
        return "a layout that is not linear"
    if "register" in reg.in_dims and any(not any(b) for b in reg.bases.get("register", [])):
        return "a broadcast register layout (a zero register basis: one element in two registers)"
    bcast = "lane" in reg.in_dims and any(not any(b) for b in reg.bases.get("lane", []))
    comp = reg.invert_and_compose(smem)
    eb = bits // 8
    k = comp.out_dim_names.index("offset")

    def span(dim: str, n: int) -> list[int]:
        """The offset each value of one input dim adds (XOR of its selected bases), warp 0."""
        vals = [0]
        for basis in comp.bases.get(dim, [])[:max(0, n.bit_length() - 1)]:
            vals = vals + [v ^ basis[k] for v in vals]
        return vals[:n]

    regs = span("register", comp.in_dim_size("register") if "register" in comp.in_dims else 1)
    lanes = span("lane", 32)
    if len(lanes) < 32:
        lanes = [lanes[i % len(lanes)] for i in range(32)] if lanes else [0] * 32
    offs = (np.array(lanes, dtype=np.int64)[:, None] ^ np.array(regs, dtype=np.int64)[None, :]) * eb
    got = (offs[:, :, None] + np.arange(eb, dtype=np.int64)).reshape(32, -1)   # lane, register, byte
    srt = np.sort(got, axis=1)                                  # each lane's distinct bytes, ascending
    first = np.ones(srt.shape, dtype=bool)
    first[:, 1:] = srt[:, 1:] != srt[:, :-1]
    th = np.repeat(np.arange(32, dtype=np.int64), srt.shape[1]).reshape(srt.shape)
    out = ThreadBytes.later(lambda: (set(row) for row in got.tolist()), {"flat": (th[first], srt[first]), "n": 32})
    return out, f"{eb}-byte {mt.elem}", bcast and store, eb


def _addressed(ins: Instr, not_immediate: str) -> tuple[tuple, Any] | str:
    """``(smem_access(ins), its address)`` of an access at ``[register+immediate]``, else why not:
    ``"no [register+offset] address"``, or ``not_immediate`` (``{offset}`` in it: the offset's
    spelling) when the offset is not an immediate."""
    addr = address_of(ins)
    if addr is None:
        return "no [register+offset] address"
    if addr.offset is None:
        return not_immediate.format(offset=addr.offset_text)
    return smem_access(ins), addr


def _instr_bytes(ev: Any, ins: Instr, memo: dict) -> tuple[z3.BitVecRef, list[set[int]]] | str:
    """``(lane-0 address, bytes of each lane relative to it)`` of one access, or why not."""
    got = _addressed(ins, "offset {offset} is not an immediate")
    if isinstance(got, str):
        return got
    acc, addr = got
    imm = addr.offset
    a0 = ev.operand(addr.base, 32, at=ins)
    offs = None if a0 is None else _by_term(("lanes", a0.get_id()), a0,
                                            lambda: lane_byte_offsets(ev, addr.base, ins, memo))
    if a0 is None or offs is None:
        return "the lanes' addresses are not exact relative to lane 0"
    active = None                               # every lane
    if ins.pred is not None:
        active, how = thread_guard(ev, ins, memo, 32)
        if how == "free" or ins.parts[0] in ("ldmatrix", "stmatrix"):
            return f"a predicated access whose guard ({ins.pred}) depends on more than %tid.x"
    a0 = _at_zero(a0, imm, memo)
    head = ins.parts[0]
    if head in ("ldmatrix", "stmatrix"):
        n = matrix_count(ins, 1)
        if "b16" not in ins.parts:
            return f"{ins.opcode}: only b16 matrices are modelled"
        key = ("matrix", tuple(offs), n, "trans" in ins.parts)
        if key not in memo:
            memo[key] = _by_content(key, None, lambda: ThreadBytes(_matrix_bytes(offs, n, "trans" in ins.parts)))
        return a0, memo[key]
    return a0, _bytes_of(offs, acc[2], active, memo)     # read only below: shared by the file's accesses


def _at_zero(a: z3.BitVecRef, imm: int, memo: dict) -> z3.BitVecRef:
    """``simplify(a[tid := 0] + imm)``, remembered in ``memo`` by ``a``'s id and ``imm`` (``a``
    kept alive with it, so the id stays unique)."""
    key = ("at0", a.get_id(), imm)
    hit = memo.get(key)
    if hit is None:                # the core simplified once; each constant on the small result
        def at0() -> z3.BitVecRef:
            core, c = address_parts(a, memo)
            return _core_plus(_core_zero(core, memo), (c + imm) % (1 << 32), memo)
        hit = memo[key] = (a, _by_term(key, a, at0))
    return hit[1]


def _core_zero(core: z3.BitVecRef, memo: dict) -> z3.BitVecRef:
    """:func:`verilayout.prove.smem_address.core_at_zero` (``simplify(core[%tid.x := 0])``, kept
    in ``memo`` under its key), built through z3's C API (:mod:`verilayout.prove.z3_api`)."""
    key = ("core0", core.get_id())
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = (core, remembered(key, core, lambda: at_zero_simplified(core, TID)))
    return hit[1]


def _core_plus(core0: z3.BitVecRef, c: int, memo: dict) -> z3.BitVecRef:
    """:func:`verilayout.prove.smem_address.at_thread_zero` (``simplify(core0 + c)``, ``core0``
    itself when ``c`` is 0; kept in ``memo`` under its key), built through z3's C API."""
    if not c:
        return core0
    key = ("zero+c", core0.get_id(), c)
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = (core0, remembered(key, core0, lambda: plus_simplified(core0, c)))
    return hit[1]


def _by_term(key: tuple, term: z3.ExprRef, compute: Any) -> Any:
    """``compute()``, remembered for the process under ``key`` (which holds ``term``'s id and the
    other arguments the answer depends on), with ``term`` kept alive beside it
    (:func:`verilayout.prove.smem_address.remembered`: z3 hash-conses terms, so kernels that repeat
    an address function simplify it once)."""
    return remembered(key, term, compute)


#: Answers by content for the process (each thread's bytes from its offsets, a layout's holders,
#: a copy's verdict before relabelling): keys hold values, or ids of objects kept alive in the
#: entry (:class:`~verilayout.prove.term_memo.TermMemo`, at most :data:`_CONTENT_MAX` entries).
#: Kernels of a package repeat thread maps and layouts: each is computed once. The bound is low:
#: an entry may hold the bytes of every thread.
_CONTENT_MAX = 4_096
_BY_CONTENT = TermMemo(_CONTENT_MAX)


def _by_content(key: tuple, keep: Any, compute: Any) -> Any:
    """``compute()``, remembered in :data:`_BY_CONTENT` under ``key`` with ``keep`` (the objects
    whose ids ``key`` holds) alive beside it."""
    return _BY_CONTENT.answer(key, (keep,), compute)


def _split_const(e: z3.BitVecRef, memo: dict | None = None) -> tuple[int, tuple[int, ...]]:
    """``(c, ids)`` with ``e == c + sum(terms)`` for a simplified sum whose first term is a value,
    ``ids`` the z3 ids of the terms (``()`` when ``e`` is a value, ``e``'s own id when it has no
    constant term). z3 hash-conses terms, so two terms alive at once are equal exactly when their
    ids are; the arguments are read through the C API (no Python object per term). ``memo``: the
    file's answers, keyed by ``e``'s id (``e`` kept alive with them).
    """
    if memo is not None:                   # the same Python object again: no call into z3
        hit = memo.get(("split_obj", id(e)))
        if hit is not None and hit[0] is e:
            return hit[1]
    ctx, a = e.ctx_ref(), e.as_ast()
    k = z3.Z3_get_ast_id(ctx, a)
    if memo is not None:
        hit = memo.get(("split", k))
        if hit is not None:
            memo[("split_obj", id(e))] = (e, hit[1])
            return hit[1]
    if z3.Z3_is_numeral_ast(ctx, a):                   # a bit-vector value (e is a bit-vector term)
        got: tuple[int, tuple[int, ...]] = (int(z3.Z3_get_numeral_string(ctx, a)), ())
    else:
        got = (0, (k,))
        if z3.Z3_get_ast_kind(ctx, a) == z3.Z3_APP_AST and \
                z3.Z3_get_decl_kind(ctx, z3.Z3_get_app_decl(ctx, a)) == z3.Z3_OP_BADD:
            first = z3.Z3_get_app_arg(ctx, a, 0)
            if z3.Z3_is_numeral_ast(ctx, first):
                n = z3.Z3_get_app_num_args(ctx, a)
                got = (int(z3.Z3_get_numeral_string(ctx, first)),
                       tuple(z3.Z3_get_ast_id(ctx, z3.Z3_get_app_arg(ctx, a, i)) for i in range(1, n)))
    if memo is not None:
        memo[("split", k)] = memo[("split_obj", id(e))] = (e, got)
    return got


def _split(group: list, copies: int) -> list[list]:
    per = len(group) // copies
    return [group[i * per:(i + 1) * per] for i in range(copies)]


def _base_groups(instrs: list[Instr], evals: dict, memo: dict) -> tuple[list, tuple | None]:
    """The op's accesses grouped by base (a constant apart: one copy of the op), with their lane
    bytes; or the first access whose address could not be evaluated, and why."""
    groups: list[list[tuple[Instr, z3.BitVecRef, list[set[int]]]]] = []
    by_rest: dict[tuple[int, ...], list] = {}   # a group's first base's symbolic part -> the group
    for ins in instrs:                          # (a group is new only when no other has its part)
        ev = evals.get(ins.func)
        got = _instr_bytes(ev, ins, memo) if ev is not None else "no evaluator"
        if isinstance(got, str):
            return groups, (ins, got)
        _c, rest = _split_const(got[0], memo)
        if rest in by_rest:                  # same symbolic part: a constant apart, no simplify
            by_rest[rest].append((ins, *got))
        else:
            for g in groups:
                if z3.is_bv_value(minus_simplified(got[0], g[0][1])):
                    g.append((ins, *got))
                    break
            else:
                groups.append([(ins, *got)])
                by_rest[rest] = groups[-1]
    return groups, None


def element_checks(ctx: PtxContext) -> list[Check]:
    """One ``smem-address`` check per copy of each TTGIR shared-memory op the PTX lowers (see the
    module docstring); ``ctx.memo``: lane offsets already found in this file. An op's accesses: those
    of its source line and direction, less the round trips a conversion of the line proved its
    own (:func:`_claims`), plus the accesses moved among them under another line (:func:`_adopt`).
    Ops of different types on one line share those accesses: each copy (a base group) goes to the
    op whose layouts it matches exactly; a copy no op matches is compared with the one op left
    without a copy (the error), or ``unchecked`` when that is not one op or when other ops of the
    line (a reduction, an unmatched conversion) may own it."""
    out: list[Check] = []
    mod, evals, tmod, memo = ctx.ptx, ctx.values, ctx.tmod, ctx.memo
    claims = _claims(mod, evals, tmod, memo)
    of, by = claims["epochs"]
    by_loc: dict[tuple[str, str], list[Instr]] = {}
    ws = ctx.machinery()                    # a warp_specialize's own state table and captures
    claimed = claims["claimed"]
    for ins, acc in _accesses(mod, memo):
        if ins.loc and ins.line not in claimed and ins.line not in ws:
            by_loc.setdefault((ins.loc, acc[0]), []).append(ins)
    ops = [op for op in tmod.ops if op.name in _OPS and op.loc
           and not (op.name == "ttg.local_alloc" and not op.operands)]
    owned = {(op.loc, _OPS[op.name][0]) for op in ops}
    scratch = {op.loc for op in tmod.ops if op.name == "ttg.convert_layout" and op.loc}
    lines: dict[tuple[str, str], dict[tuple, Any]] = {}
    for op in ops:                           # ops of one type on one line share their PTX accesses
        lines.setdefault((op.loc, _OPS[op.name][0]), {}).setdefault(
            (tuple(op.operand_types), tuple(op.result_types)), op)
    for (loc, kind), reps in lines.items():
        mine = by_loc.get((loc, kind), [])
        instrs = _adopt(mine, kind, of, by, owned)
        if instrs:
            def run(xs: list[Instr], reps: dict = reps, loc: str = loc) -> list[Check]:
                return _line_elements(list(reps.values()), xs, tmod, evals, memo, loc in claims["foreign"], of,
                                      claims["chained"])
            out.extend(_without_scratch(run, instrs, _adopt(mine, kind, of, by, owned, scratch)))
    out.extend(_sunk_loads(lines, ops, by_loc, owned, out, tmod, evals, memo, of, claims["chained"]))
    memo[("local_proved",)] = {ln for c in out if c.status == "proved" for ln in c.data.get("instructions", ())}
    out = _also_charged(out, {i.line: i for i in mod.instrs})
    memo[("element_lines",)] = {ln for c in out for ln in (c.line, *c.data.get("instructions", ()))}
    return out


def _without_scratch(run: Any, instrs: list[Instr], alt: list[Instr]) -> list[Check]:
    """``run(instrs)``; when that finds an error and ``alt`` (the same accesses less those adopted from a
    line holding a ``ttg.convert_layout``) differs, ``run(alt)`` if it finds none: the dropped accesses
    are then the conversion's round trip (the compiler derived its scratch address from the op's
    register plus a constant), left to the round checks, which prove or report them."""
    got = run(instrs)
    if alt == instrs or not any(c.severity == "error" for c in got):
        return got
    other = run(alt)
    return got if any(c.severity == "error" for c in other) else other


def _sunk_loads(lines: dict, ops: list, by_loc: dict, owned: set, done: list[Check], tmod: Module, evals: dict,
                memo: dict, of: dict, chained: set) -> list[Check]:
    """The checks of the ``ttg.local_load`` ops whose PTX loads all carry the source line of the op
    that uses the result (the backend sinks a load next to its use: the loads of a ``tt.dot``
    operand under the dot's line), tied by dataflow: the load's one user, on a line where no
    shared-memory op of its own loads, and no other operand of that user loaded the same way; the
    user's line's loads no check took are the op's."""
    taken = {ln for c in done for ln in (c.line, *c.data.get("instructions", ()))}
    out: list[Check] = []
    for (loc, kind), reps in lines.items():
        if kind != "load" or by_loc.get((loc, kind)) or len(reps) != 1:
            continue
        op = next(iter(reps.values()))
        users = [u for u in tmod.ops if u.loc and set(op.results) & set(u.operands)]
        if len(users) != 1 or users[0].loc == loc or (users[0].loc, "load") in owned:
            continue
        rivals = [o for o in ops if o is not op and _OPS[o.name][0] == "load" and not by_loc.get((o.loc, "load"))
                  and set(o.results) & set(users[0].operands)]
        cand = [i for i in by_loc.get((users[0].loc, "load"), []) if i.line not in taken]
        if cand and not rivals:
            out.extend(_line_elements([op], cand, tmod, evals, memo, False, of, chained))
    return out


def _also_charged(checks: list[Check], at: dict[int, Instr]) -> list[Check]:
    """Each element error also at the accesses it names as much to blame (``data["also"]``: the
    same count of wrong bytes; two stores on one byte cannot tell which of them moved)."""
    out = list(checks)
    for c in checks:
        if c.severity != "error":
            continue
        for ln in list(c.data.get("also", ()))[:3]:
            ins = at.get(ln)
            if ins is not None and ln != c.line:
                out.append(Check(".".join(ins.parts[:2]), ln, ins.loc, c.check, c.status, c.severity,
                                 c.message + f" (the same error charged to line {ln}, as much to blame)",
                                 dict(c.data, charged=ln)))
    return out


def _want(tmod: Module, op: Any) -> tuple[list[set[int]], str, bool, int] | str:
    try:
        types = _types(tmod, op)
        return _layout_bytes_of(*types, store=_OPS[op.name][0] == "store") if types is not None \
            else "its types could not be read"
    except (LayoutError, KeyError, ValueError) as e:
        return str(e)


#: :func:`_layout_bytes` answers (read only) by the full text of the two parsed types: one per
#: distinct pair of layouts in this process (a kernel audited again, ops of one type on many lines)
_LAYOUT_BYTES: dict[tuple[str, str, bool], Any] = {}


def _layout_bytes_of(rt: Any, mt: Any, store: bool = False) -> tuple[list[set[int]], str, bool, int] | str:
    """:func:`_layout_bytes`, remembered by ``(repr(rt), repr(mt), store)`` (every field of the
    parsed types, their encodings included); emptied past 4,096 entries."""
    key = (repr(rt), repr(mt), store)
    hit = _LAYOUT_BYTES.get(key)
    if hit is None:
        if len(_LAYOUT_BYTES) >= 4096:
            _LAYOUT_BYTES.clear()
        hit = _LAYOUT_BYTES[key] = _layout_bytes(rt, mt, store)
    return hit


def _unchecked(op: Any, first: Instr, why: str) -> Check:
    return Check(".".join(first.parts[:2]), first.line, first.loc, "smem-address", "unchecked", None,
                 f"{op.name} (TTGIR line {op.line}): element addresses not compared: {why}",
                 {"source": "ptx", "ttgir_line": op.line, "reason": why})


def _parts(g: list, lanes: list[set[int]], narrow: int = 1) -> list[list]:
    """A base group split into the copies of the op it holds (a pipelined prologue), in order;
    ``narrow``: each copy reads that fraction of the bytes (:func:`_narrowed`)."""
    n = sum(byte_stats(ls)[0] for _, _, ls in g) * narrow
    every, one, _e = byte_stats(lanes)
    guarded = any(byte_stats(ls)[2] for _, _, ls in g)   # lanes switched off: one copy of each element
    for total in ((one, every) if guarded else (every, one)):   # every copy writes, or one
        if total and n % total == 0 and len(g) % max(1, n // total) == 0:
            return _split(g, n // total)
    return [g]


def _whole(g: list, lanes: list[set[int]]) -> bool:
    """The group moves whole copies of the op's data (bytes a multiple of the layouts')."""
    total = byte_stats(lanes)[0]
    return bool(total) and sum(byte_stats(ls)[0] for _, _, ls in g) % total == 0


def _line_elements(reps: list, instrs: list[Instr], tmod: Module, evals: dict, memo: dict,
                   foreign: bool, of: dict, chained: set = frozenset()) -> list[Check]:
    """The checks of the ops ``reps`` (one per type) of one line and direction over ``instrs``."""
    wants = [(op, _want(tmod, op)) for op in reps]
    if len(reps) == 1 and isinstance(wants[0][1], str):
        return [_unchecked(reps[0], instrs[0], wants[0][1])]
    groups, why = _base_groups(instrs, evals, memo)
    if why is not None:
        op = reps[0]
        return [Check(".".join(why[0].parts[:2]), why[0].line, why[0].loc, "smem-address", "unknown", "note",
                      f"{op.name} (TTGIR line {op.line}): {why[1]}",
                      {"source": "ptx", "ttgir_line": op.line, "instruction": why[0].opcode})]
    if chained:                              # a conversion's round trip of the line and the op's own
        groups = [[x for x in g if (x[0].line in chained) == k] for g in groups for k in (False, True)
                  if any((x[0].line in chained) == k for x in g)]   # accesses: compared apart
    if len(reps) > 1:                        # ops of one line: one op's copy never spans a barrier
        def key(x: tuple) -> tuple:          # nor mixes instructions (cp.async and st.shared)
            return (of.get(x[0].line, -1), x[0].opcode)
        groups = [[x for x in g if key(x) == k] for g in groups for k in sorted({key(x) for x in g})]
    out: list[Check] = []
    left, used = [], set()
    mine = len(reps) == 1 and not foreign   # the line's one op: its verdicts, errors included
    for g in groups:
        tries = []
        for op, want in wants:
            if isinstance(want, str):
                continue                     # (tried ops: verdicts first, an error explained when kept)
            got = _copies(op, want, g, tmod, memo, True if mine else _VERDICT)
            if all(c.status == "proved" for c in got) or mine:
                out.extend(got)              # matched; or the line's one op
                used.add(op.line)
                break
            tries.append((op, got, want))
        else:
            owner = _majority_owner([(op, got) for op, got, _w in tries])
            if owner is None:
                left.append(g)
            else:                            # the copies of one op, one of them wrong: its verdicts
                want = next(w for op, _g, w in tries if op is owner[0])
                out.extend(_copies(owner[0], want, g, tmod, memo))
                used.add(owner[0].line)
    free = [(op, w) for op, w in wants if op.line not in used]
    unmatched: list[Instr] = []
    for g in left:
        if all(x[0].line in chained for x in g):
            continue                         # a round trip of a conversion of the line: checked there
        if len(free) == 1 and not isinstance(free[0][1], str) and not foreign and _whole(g, free[0][1][0]):
            op, want = free[0]
            out.extend(_compare(op, part, *want, memo) for part in _parts(g, want[0]))
            continue
        unmatched.extend(x[0] for x in g)
    if unmatched:                            # one check for the line's accesses no op took
        op = free[0][0] if free else reps[0]
        why = next((w for _, w in free if isinstance(w, str)), None)
        lines = sorted(i.line for i in unmatched)
        out.append(_unchecked(op, unmatched[0], why or (
            f"{len(lines)} access(es) (PTX lines {lines[:6]}{' ...' if len(lines) > 6 else ''}) match none of "
            f"the {len(reps)} op(s) of different types on source line {unmatched[0].loc}"
            + (", which other ops through scratch memory share" if foreign else ""))))
    return out


def _copies(op: Any, want: tuple, g: list, tmod: Module, memo: dict, explain: bool | str = True) -> list[Check]:
    """The verdicts of ``op`` on one base group: each copy of the op it holds compared with the
    layouts (:func:`_compare`), loads narrowed by the compiler tried when whole elements fail, and
    the copies' places checked against the buffer's stages (:func:`_stages_apart`); ``explain``
    :data:`_VERDICT`: the same verdicts, errors unexplained."""
    parts = _parts(g, want[0])
    got = [_compare(op, part, *want, memo, explain=explain) for part in parts]
    if _OPS[op.name][0] == "load" and not all(c.status == "proved" for c in got):
        for f in (2, 4):                     # loads the compiler narrowed to a part of each element
            alt_parts = _parts(g, want[0], f)
            alt = _narrowed_proofs(op, alt_parts, want, memo)
            if alt is not None:
                got, parts = alt, alt_parts
                break
    if len(parts) > 1 and all(c.status == "proved" for c in got):
        got = _stages_apart(op, parts, got, tmod, memo)
    return got


def _stages_apart(op: Any, parts: list, got: list[Check], tmod: Module, memo: dict) -> list[Check]:
    """The copies of one op in one base group (a pipelined prologue: one per stage, or the same
    stage again) proved each relative to its own first byte: they must also start a whole number of
    stages apart (the view's bytes: its shape times the element width), or one copy was written into
    the wrong place of its buffer. ``got`` with the copy that is not an error in its place; unchanged
    for a padded shared layout (whose stage stride is not its bytes) or unreadable types."""
    try:
        types = _types(tmod, op)
        mt = types[1] if types is not None else None
        bits = elem_bit_width(mt.elem) if mt is not None else 0
    except (LayoutError, KeyError, ValueError):
        return got
    if not bits or bits % 8 or "padded" in str(getattr(mt, "encoding", "")):
        return got
    stage = int(np.prod(mt.shape)) * bits // 8
    lows = [min(_split_const(a, memo)[0] + _least_byte(ls) for _i, a, ls in part) for part in parts]
    out = list(got)
    for k, (part, low) in enumerate(zip(parts[1:], lows[1:]), 1):
        gap = (low - lows[0]) % (1 << 32)
        gap = gap - (1 << 32) if gap >= 1 << 31 else gap
        if gap % stage:
            ins = part[0][0]
            out[k] = Check(".".join(ins.parts[:2]), ins.line, ins.loc, "smem-address", "counterexample", "error",
                           f"{op.name} (TTGIR line {op.line}): copy {k + 1} of the op starts {gap} bytes after copy 1 "
                           f"(PTX line {parts[0][0][0].line}); its buffer's stages are {stage} bytes apart, so it is "
                           f"not a whole stage away ({ins.opcode}, line {ins.line})",
                           dict(got[k].data, gap=gap, stage_bytes=stage))
    return out


def _least_byte(ls: list[set[int]]) -> int:
    """The least byte of any thread's set (0 when every set is empty), from the arrays a
    :class:`ThreadBytes` keeps.

    >>> _least_byte([{9, 4}, set(), {6}]), _least_byte([set()])
    (4, 0)
    """
    by = thread_arrays(ls)[1]
    return int(by.min()) if len(by) else 0


def _majority_owner(tries: list[tuple[Any, list[Check]]]) -> tuple[Any, list[Check]] | None:
    """Of the ops of one line tried on one base group (copies a constant apart: one buffer, its
    stages), the one whose layouts prove more than half of the group's copies while no other op
    proves any: the group is that op's (tied by its address, the same base), and its copies that
    fail are its errors; None when no op or several qualify."""
    proving = [(op, got) for op, got in tries if any(c.status == "proved" for c in got)]
    if len(proving) != 1:
        return None
    op, got = proving[0]
    return proving[0] if 2 * sum(c.status == "proved" for c in got) > len(got) else None


def _address_register(ins: Instr) -> str | None:
    addr = address_of(ins)
    return addr.base_name if addr else None


def _adopt(instrs: list[Instr], kind: str, of: dict, by: dict, owned: set,
           scratch: set = frozenset()) -> list[Instr]:
    """``instrs`` (an op's accesses, found by source line) with the accesses the scheduler moved
    among them under another line's ``.loc``, found by dataflow: same direction, same barrier epoch,
    the same address register as one of the op's own (the address flows from the op's base), and a
    line that holds no shared-memory op of that direction itself (nor one of the lines ``scratch``:
    those holding a ``ttg.convert_layout``, tried by :func:`_without_scratch`)."""
    if not instrs:
        return instrs
    regs = {_address_register(i) for i in instrs}
    mine = {i.line for i in instrs}
    extra = [j for e in sorted({of[i.line] for i in instrs if i.line in of}) for j in by.get(e, [])
             if j.line not in mine and j.loc and (j.loc, kind) not in owned and j.loc not in scratch
             and smem_access(j)[0] == kind
             and _address_register(j) in regs and j.func == instrs[0].func]
    return sorted(instrs + extra, key=lambda i: i.line) if extra else instrs


def _best_shift(per_lane: list[dict[int, Instr]], lanes: list[set[int]]) -> int:
    """The shift ``s`` (PTX byte - s = layout byte) under which the most (lane, byte) pairs of the
    PTX land on the layout's. Candidates: each lane's least and greatest bytes aligned with the
    layout's (a misplaced access moves one end of a lane at most, so the other end still tells),
    so the misplaced access stands out against the others instead of moving the reference."""
    # a pair (lane k, byte b) as one int k * 2^40 + 2^39 + b: a shift moves b alone (|b| < 2^39)
    got = _pair_keys(per_lane)
    lane_of, byte_of = thread_arrays(lanes)
    want = sorted_unique((lane_of << 40) + (1 << 39) + byte_of)   # sorted, once: one searchsorted a candidate
    cands = set()
    for k in range(32):
        if per_lane[k] and lanes[k]:
            cands.add(min(per_lane[k]) - min(lanes[k]))
            cands.add(max(per_lane[k]) - max(lanes[k]))
    cs = np.array(sorted(cands), dtype=np.int64)
    if not len(cs) or not len(want):
        return int(cs[0]) if len(cs) else 0
    hits = []
    rows = max(1, (1 << 22) // max(1, len(got)))       # candidates a block: memory bounded
    for i in range(0, len(cs), rows):
        moved = got[None, :] - cs[i:i + rows, None]
        at = np.minimum(np.searchsorted(want, moved), len(want) - 1)
        hits.append((want[at] == moved).sum(axis=1))
    return int(cs[int(np.argmax(np.concatenate(hits)))])   # the first (least) shift of the most hits


def _narrowed(per_lane: list[dict], lanes: list[set[int]], eb: int) -> list[int] | None:
    """The byte positions ``P`` (a proper part of ``range(eb)``) when every lane reads, of every
    element the layouts give it, exactly the bytes ``P`` of it (one shift for the whole warp):
    a load narrowed by the compiler to the part of each element the kernel uses (the low half of
    an i32 it masks and truncates to i16). None when the lanes read anything else.

    >>> _narrowed([{0: 1, 1: 1, 8: 1, 9: 1}] + [{}] * 31, [set(range(4)) | set(range(8, 12))] + [set()] * 31, 4)
    [0, 1]
    >>> _narrowed([{0: 1, 1: 1, 10: 1, 11: 1}] + [{}] * 31, [set(range(4)) | set(range(8, 12))] + [set()] * 31, 4)
    """
    if eb < 2 or not any(per_lane):
        return None
    lo_p = min(min(d) for d in per_lane if d)
    lo_l = min((min(w) for w in lanes if w), default=0)
    for s in range(eb):                              # the PTX's first byte is byte s of an element
        pos: set[int] | None = None
        ok = True
        for k in range(32):
            got = {b - lo_p + s for b in per_lane[k]}
            want = {b - lo_l for b in lanes[k]}
            starts = {b - b % eb for b in want}
            if not got <= want or {b - b % eb for b in got} != starts:
                ok = False
                break
            for e in starts:
                mine = {b - e for b in got if e <= b < e + eb}
                pos = mine if pos is None else pos
                if mine != pos:
                    ok = False
                    break
            if not ok:
                break
        if ok and pos and len(pos) < eb:
            return sorted(pos)
    return None


def _pair_keys(per_lane: list) -> np.ndarray:
    """Each (lane ``k``, byte ``b``) of ``per_lane`` (32 collections of bytes) as one int64,
    ``k * 2^40 + 2^39 + b``.

    >>> [int(x) - (1 << 39) for x in _pair_keys([{3}, {0, 1}] + [set()] * 30)]
    [3, 1099511627776, 1099511627777]
    """
    sizes = [len(x) for x in per_lane]
    if not sum(sizes):
        return np.zeros(0, dtype=np.int64)
    lanes = np.repeat(np.arange(len(per_lane), dtype=np.int64), sizes)
    bytes_ = np.fromiter((b for x in per_lane for b in x), dtype=np.int64, count=sum(sizes))
    return (lanes << 40) + (1 << 39) + bytes_


def _lane_bytes(part: list, memo: dict | None) -> tuple[list[dict], list[dict]]:
    """Per lane of warp 0, each byte the accesses of ``part`` touch (relative to the first
    access's base) -> the access; and the bytes a lane touches again -> the second access."""
    ref = part[0][1]
    per_lane: list[dict[int, Instr]] = [{} for _ in range(32)]
    twice: list[dict[int, Instr]] = [{} for _ in range(32)]
    c1, r1 = _split_const(ref, memo)
    for ins, a0, ls in part:
        c0, r0 = _split_const(a0, memo)
        rel = (c0 - c1) % (1 << 32) if r0 == r1 else minus_simplified(a0, ref).as_long()
        rel = rel - (1 << 32) if rel >= 1 << 31 else rel
        for lane, s in enumerate(ls):
            for b in s:
                if rel + b in per_lane[lane]:
                    twice[lane].setdefault(rel + b, ins)
                else:
                    per_lane[lane][rel + b] = ins
    return per_lane, twice


def _copies_hold(per_lane: list[dict], lanes: list[set[int]], lo_p: int, lo_l: int) -> bool:
    """A store of a broadcast layout: each lane writes only bytes of its own elements, and the
    lanes that hold the same elements write them all between them (one of the copies, or all)."""
    union: dict[frozenset, set[int]] = {}
    for k in range(32):
        got = {b - lo_p for b in per_lane[k]}
        want = frozenset(b - lo_l for b in lanes[k])
        if not got <= want:
            return False
        union.setdefault(want, set()).update(got)
    return all(set(w) == u for w, u in union.items())


def _exact(part: list, lanes: list[set[int]], memo: dict | None) -> tuple[bool, int]:
    """``(same, twice)`` of the accesses of ``part`` against the layouts' ``lanes``, from arrays:
    whether every lane touches exactly its bytes (both relative to their least byte, as
    :func:`_compare` compares them), and how many (lane, byte) pairs two accesses touch."""
    ref = part[0][1]
    keys, low = [], None
    c1, r1 = _split_const(ref, memo)
    for _ins, a0, ls in part:                # each (lane, byte) as one int: lane * 2**40 + byte
        c0, r0 = _split_const(a0, memo)
        rel = (c0 - c1) % (1 << 32) if r0 == r1 else minus_simplified(a0, ref).as_long()
        rel = rel - (1 << 32) if rel >= 1 << 31 else rel
        k, least = thread_keys(ls)
        if not len(k):
            continue
        keys.append(k + rel if rel else k)
        low = least + rel if low is None else min(low, least + rel)
    want = _want_keys(lanes)
    if low is None or want is None:
        return (low is None) == (want is None), 0
    got = np.sort(np.concatenate(keys) if len(keys) > 1 else keys[0], kind="stable") - low
    step = np.concatenate(([True], got[1:] != got[:-1]))
    twice = int((np.diff(np.append(np.flatnonzero(step), len(got))) > 1).sum())
    mine = got[step]
    return len(want) == len(mine) and bool((want == mine).all()), twice


def _want_keys(lanes: list[set[int]]) -> np.ndarray | None:
    """The layouts' (lane, byte) pairs as :func:`_exact` compares them (lane ``* 2**40`` plus the
    byte less the least byte), sorted, distinct; None when no lane has a byte. Kept on a
    :class:`ThreadBytes` (the layouts' bytes are one object per pair of layouts)."""
    kept = lanes.__dict__.setdefault("_arrays", {}) if isinstance(lanes, ThreadBytes) else {}
    if "want_keys" not in kept:
        k, least = thread_keys(lanes)
        kept["want_keys"] = sorted_unique(k - least) if len(k) else None
    return kept["want_keys"]


def _exact_proof(op: Any, part: list, lanes: list[set[int]], what: str, memo: dict | None) -> Check | None:
    """:func:`_compare`'s proof when every lane touches exactly its bytes (a store: each once),
    decided on arrays (:func:`_exact`); None otherwise (the per-lane maps explain it)."""
    load = _OPS.get(op.name, ("store",))[0] == "load"
    same, n_twice = _exact(part, lanes, memo)
    if not same or (n_twice and not load):
        return None
    data = {"source": "ptx", "ttgir_line": op.line, "ttgir_op": op.name,
            "instructions": [i.line for i, _, _ in part], "elements": what}
    if load and n_twice:
        data["reread_bytes"] = n_twice
    return _proved(op, part[0][0], part, what, data)


def _blame(per_lane: list[dict], twice: list[dict], lanes: list[set[int]], lo_p: int, lo_l: int) -> dict[int, int]:
    """:func:`_compare`'s blame per PTX line: each access's bytes that no element of its lane owns
    (PTX bytes taken from ``lo_p``, the layouts' from ``lo_l``), or that another access of the lane
    touches too (both accesses blamed)."""
    blame: dict[int, int] = {}
    for lane in range(32):
        want = {b + lo_l for b in lanes[lane]}
        for b, ins in per_lane[lane].items():
            if b - lo_p + lo_l not in want:
                blame[ins.line] = blame.get(ins.line, 0) + 1
        for b, ins in twice[lane].items():
            blame[ins.line] = blame.get(ins.line, 0) + 1
            blame[per_lane[lane][b].line] = blame.get(per_lane[lane][b].line, 0) + 1
    return blame


def _narrowed_proofs(op: Any, parts: list, want: tuple, memo: dict) -> list[Check] | None:
    """:func:`_compare`'s verdicts on ``parts`` when each is the proof of a narrowed load (its
    ``data["narrowed"]``), else None: the first part that is not one settles it, and no error is
    explained (the caller keeps its verdicts on whole elements then)."""
    out = []
    for part in parts:
        c = _compare(op, part, *want, memo, explain=False)
        if c is None:
            return None
        out.append(c)
    return out


def _compare(op: Any, part: list, lanes: list[set[int]], what: str, bcast: bool = False, eb: int = 0,
             memo: dict | None = None, explain: bool = True) -> Check | None:
    """The verdict on one copy (see :func:`element_checks`); ``explain=False``: the proof of a
    narrowed load (:func:`_narrowed`) or None, nothing else built. Decided once per content in
    ``memo`` (the op's name, the layouts' bytes object, the accesses' opcodes, bytes objects,
    relative bases and line order) and relabelled for each copy that repeats it
    (:mod:`verilayout.audit.ptx_relabel`): unrolled copies, pipeline stages, ops of one type."""
    rels = _part_rels(part, memo) if memo is not None else None
    if rels is None:
        return _compare_of(op, part, lanes, what, bcast, eb, memo, explain)
    key = ("compare", op.name, id(lanes), what, bcast, eb, explain, ranks(part), rels,
           tuple((i.opcode, i.parts, id(ls)) for i, _a, ls in part))
    hit = memo.get(key)
    if hit is None:                          # the objects whose ids the key holds are kept alive with it
        def compute() -> Check | None:
            t_op, t_part = template(op, part)
            return _compare_of(t_op, t_part, lanes, what, bcast, eb, memo, explain)
        keep = (lanes, [ls for _i, _a, ls in part])
        hit = memo[key] = (keep, _by_content(key, keep, compute))
    return None if hit[1] is None else instantiate([hit[1]], op, part)[0]


def _part_rels(part: list, memo: dict) -> tuple[int, ...] | None:
    """Each access's base minus the first one's (signed 32-bit) when the z3 terms say so without
    simplifying (the same terms plus constants), else None."""
    c1, r1 = _split_const(part[0][1], memo)
    out = []
    for _i, a0, _ls in part:
        c0, r0 = _split_const(a0, memo)
        if r0 != r1:
            return None
        v = (c0 - c1) % (1 << 32)
        out.append(v - (1 << 32) if v >= 1 << 31 else v)
    return tuple(out)


def _compare_of(op: Any, part: list, lanes: list[set[int]], what: str, bcast: bool = False, eb: int = 0,
                memo: dict | None = None, explain: bool = True) -> Check | None:
    """:func:`_compare`, computed."""
    if (fast := _exact_proof(op, part, lanes, what, memo)) is not None:   # the common case
        return fast if explain else None
    load, (per_lane, twice) = _OPS.get(op.name, ("store",))[0] == "load", _lane_bytes(part, memo)
    lo_p = min((min(d) for d in per_lane if d), default=0)
    lo_l = min((min(s) for s in lanes if s), default=0)
    differ = any({b - lo_p for b in per_lane[k]} != {b - lo_l for b in lanes[k]} for k in range(32))
    if differ and bcast and _copies_hold(per_lane, lanes, lo_p, lo_l):
        differ = False
    first = part[0][0]
    data = {"source": "ptx", "ttgir_line": op.line, "ttgir_op": op.name, "instructions": [i.line for i, _, _ in part],
            "elements": what}
    narrowed = _narrowed(per_lane, lanes, eb) if differ and load else None
    if narrowed is not None:                         # every element of every lane read, each at the
        data["narrowed"] = narrowed                  # same bytes of it (the rest is never used)
        return _proved(op, first, part, what, data)
    if not explain:
        return None
    if not differ and load and any(twice):           # every byte of the lane's elements, some loaded
        data["reread_bytes"] = sum(len(t) for t in twice)   # twice (into two registers): harmless
    if not differ and (load or not any(twice)):      # nothing to blame: the proof below, at once
        return _proved(op, first, part, what, data)
    if explain == _VERDICT:                          # an error (a lane differs, or a store twice):
        return _unexplained(op, first, data)         # its explanation left to a caller that keeps it
    if differ:
        lo_p = lo_l + _best_shift(per_lane, lanes)   # align on what most bytes agree on, then report
    # the most blamed access (the earliest on a tie, the others named) is reported
    blame = _blame(per_lane, twice, lanes, lo_p, lo_l)
    top = max(blame.values()) if blame else 0
    culprits = sorted(ln for ln, v in blame.items() if v == top)
    at = next((i for i, _, _ in part if culprits and i.line == culprits[0]), first)

    def bad_of(lane: int) -> list[int]:
        want = {b - lo_l for b in lanes[lane]}
        return sorted(b - lo_p for b, i in per_lane[lane].items() if i is at and b - lo_p not in want) + \
            sorted(b - lo_p for b, i in twice[lane].items() if i is at or per_lane[lane][b] is at)

    wrong = [k for k in range(32) if twice[k] or {b - lo_p for b in per_lane[k]} != {b - lo_l for b in lanes[k]}]
    for lane in sorted(wrong, key=lambda k: (not bad_of(k), k))[:1]:
        p = {b - lo_p for b in per_lane[lane]}
        want = {b - lo_l for b in lanes[lane]}
        extra, missing = sorted(p - want), sorted(want - p)
        mine = bad_of(lane)
        shown = mine[0] if mine else extra[0] if extra else None
        data.update(lane=lane, ptx_address=shown, layout_address=missing[0] if missing else None,
                    instruction=at.opcode, also=[ln for ln in culprits[1:]])
        return Check(".".join(at.parts[:2]), at.line, at.loc, "smem-address", "counterexample", "error",
                     f"{op.name} (TTGIR line {op.line}): lane {lane} of warp 0 "
                     + (f"touches byte {shown} (relative to the warp's first) that no element of the lane has there"
                        " or that another access of the lane touches too" if shown is not None else "misses bytes")
                     + (f"; the layouts put its element at byte {missing[0]}" if missing else "")
                     + f" ({at.opcode}, line {at.line}"
                     + (f"; lines {culprits[1:]} are as much to blame" if len(culprits) > 1 else "") + ")", data)
    return _proved(op, first, part, what, data)


#: :func:`_compare`'s ``explain`` when only the verdict is wanted: an error comes back unexplained
#: (:func:`_unexplained`: its status and severity, no witness), the same status the explanation gives
_VERDICT = "verdict"


def _unexplained(op: Any, first: Instr, data: dict) -> Check:
    """The error of :func:`_compare` without its explanation (a caller that may drop it: ops of
    one line tried on a copy): ``counterexample``/``error`` as the explained one."""
    return Check(".".join(first.parts[:2]), first.line, first.loc, "smem-address", "counterexample", "error",
                 f"{op.name} (TTGIR line {op.line}): the lanes' bytes differ from the layouts' (not explained)",
                 data)


def _proved(op: Any, first: Instr, part: list, what: str, data: dict) -> Check:
    if data.get("narrowed"):
        claim = (f"every lane of warp 0 reads, of every {what} element the layouts give it (register layout "
                 f"composed with the inverse shared layout), exactly its bytes {data['narrowed']}, the same bytes "
                 "of every element (the compiler narrowed the loads to the part the kernel uses)")
    else:
        claim = (f"every lane of warp 0 touches exactly the bytes the layouts give its {what} elements (register "
                 "layout composed with the inverse shared layout)")
    return Check(".".join(first.parts[:2]), first.line, first.loc, "smem-address", "proved", None,
                 f"{op.name} (TTGIR line {op.line}): {claim}, relative to the warp's first byte; "
                 f"{len(part)} instruction(s)"
                 + (f" ({data['reread_bytes']} byte(s) of warp 0 are loaded twice: harmless for a load, and which "
                    "register receives which element is not compared)" if data.get("reread_bytes") else ""), data)


# ----- convert_layout through scratch memory ----------------------------------------------------

def _thread_bytes(ev: Any, ins: Instr, n: int, memo: dict) -> tuple[z3.BitVecRef, list[set[int]]] | str:
    """Thread 0's address and each thread's bytes (relative to it) of one access by ``n`` threads;
    once per access and file (kept in ``memo``; the bytes are read only, shared by the accesses
    with the same offsets: :func:`_bytes_of`)."""
    key = ("thread_bytes", id(ins), id(ev), n)
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = (ins, ev, _thread_bytes_of(ev, ins, n, memo))
    return hit[2]


def _bytes_of(offs: list[int], width: int, active: list[bool] | None, memo: dict) -> ThreadBytes:
    """Each thread's bytes ``offs[t] .. offs[t] + width - 1`` (none when not ``active``; every
    thread when ``active`` is None), one object per distinct ``(offs, width, active)`` of the file
    (its sorted arrays given at once). The lists ``offs`` and ``active`` are the cached answers of
    the address and guard evaluators: the same objects again are looked up by identity first."""
    by_id, given = ("bytes_of_ids", id(offs), width, id(active)), active
    hit = memo.get(by_id)
    if hit is not None and hit[0] is offs and hit[1] is given:
        return hit[2]
    if active is None:
        active = [True] * len(offs)
    key = ("bytes_of", tuple(offs), width, tuple(active))
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = _by_content(key, None, lambda: _bytes_made(offs, width, active))
    memo[by_id] = (offs, given, hit)             # the lists kept alive with it: their ids stay unique
    return hit


def _bytes_made(offs: list[int], width: int, active: list[bool]) -> ThreadBytes:
    """:func:`_bytes_of`, computed (``active`` a list)."""
    on = np.array(active, dtype=bool)
    th = np.repeat(np.arange(len(offs), dtype=np.int64)[on], width)
    by = (np.array(offs, dtype=np.int64)[on][:, None] + np.arange(width, dtype=np.int64)).ravel()
    return ThreadBytes.later(lambda: (set(range(o, o + width)) if a else set()
                                      for o, a in zip(offs, active)), {"flat": (th, by), "n": len(offs)})


def _thread_bytes_of(ev: Any, ins: Instr, n: int, memo: dict) -> tuple[z3.BitVecRef, list[set[int]]] | str:
    """:func:`_thread_bytes`, computed."""
    got = _addressed(ins, "an offset that is not an immediate")
    if isinstance(got, str):
        return got
    acc, addr = got
    imm = addr.offset
    active, how = thread_guard(ev, ins, memo, n) if ins.pred is not None else (None, "none")
    if how == "free":
        return f"a predicated access whose guard ({ins.pred}) depends on more than %tid.x"
    expr = ev.operand(addr.base, 32, at=ins)
    got = None if expr is None else _by_term(("threads", expr.get_id(), n), expr,
                                             lambda: _thread_offsets(ev, ins, addr.base, n, memo))
    if got is None:
        return "the threads' addresses are not exact relative to thread 0"
    zero, offs = got
    key = ("zero+", zero.get_id(), imm)          # accesses at one address and offset: one simplification
    if key not in memo:
        memo[key] = (zero, _by_term(key, zero, lambda: plus_simplified(zero, imm)))
    zero = memo[key][1]
    if ins.parts[0] in ("ldmatrix", "stmatrix"):
        if active is not None and not all(active):
            return "a predicated ldmatrix/stmatrix"
        k = matrix_count(ins, 1)
        key = ("matrix_of", tuple(offs), k, "trans" in ins.parts, n)
        out = memo.get(key)
        if out is None:
            out = memo[key] = _by_content(key, None, lambda: _matrices_of(offs, k, "trans" in ins.parts, n))
        return zero, out
    return zero, _bytes_of(offs, acc[2], active, memo)


def _matrices_of(offs: list[int], k: int, trans: bool, n: int) -> ThreadBytes:
    """The bytes of each of ``n`` threads of an ``ldmatrix``/``stmatrix`` ``.x{k}``, warp by warp
    (:func:`verilayout.audit.ptx_smem.matrix_bytes`)."""
    out = ThreadBytes()
    for w in range(n // 32):
        out.extend(_matrix_bytes(offs[32 * w:32 * w + 32], k, trans))
    return out


def _layout_holders(layout: LinearLayout, shape: tuple, n: int, memo: dict | None) -> list[set[int]] | None:
    """:func:`_holders`, once per layout (equal by value), shape and ``n`` in ``memo``."""
    if memo is None:
        return _holders(layout, shape, n)
    key = ("layout_holders", layout, shape, n)
    if key not in memo:
        memo[key] = _by_content(key, None, lambda: _holders(layout, shape, n))
    return memo[key]


def _holders(layout: LinearLayout, shape: tuple, n: int) -> list[set[int]] | None:
    """The flat indices of the elements each of threads 0..n-1 holds (a broadcast layout gives
    several threads, or registers, one element), or None when the layout has fewer lanes than 32."""
    outs = layout.out_dim_names

    def vals(dim: str, size: int) -> list[tuple[int, ...]] | None:
        bases = layout.bases.get(dim, [])
        v = [tuple(0 for _ in outs)]             # a zero basis (broadcast): copies of one element
        for b in bases[:max(0, size.bit_length() - 1)]:
            v = v + [tuple(x ^ y for x, y in zip(p, b)) for p in v]
        return v[:size]

    regs = vals("register", layout.in_dim_size("register") if "register" in layout.in_dims else 1)
    lanes = vals("lane", 32)
    warps = vals("warp", max(1, n // 32))
    if regs is None or lanes is None or warps is None or len(lanes) < 32:
        return None
    strides = [1] * len(outs)
    for i in range(len(outs) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    t = np.arange(n)
    base = np.array(lanes, dtype=np.int64)[t % 32] ^ np.array(warps, dtype=np.int64)[(t // 32) % len(warps)]
    flat = ((np.array(regs, dtype=np.int64)[None, :, :] ^ base[:, None, :]) * np.array(strides, dtype=np.int64)).sum(-1)
    srt = np.sort(flat, axis=1)                               # each thread's distinct elements, ascending
    first = np.ones(srt.shape, dtype=bool)
    first[:, 1:] = srt[:, 1:] != srt[:, :-1]
    th = np.repeat(np.arange(srt.shape[0], dtype=np.int64), srt.shape[1]).reshape(srt.shape)
    arrays = {"flat": (th[first], srt[first]), "n": n}
    if first.all():                          # no thread holds an element twice: its sorted row is its set
        arrays["rows"] = srt
    return ThreadBytes.later(lambda: (set(row) for row in flat.tolist()), arrays)   # sets when read


def _conversion_holders(tmod: Module, op: Any, n: int, memo: dict | None = None) -> tuple | str:
    """``(hs, hd, bits)``: the elements each of the ``n`` threads holds in the source and the
    destination layout, and the element width; or why the conversion cannot be compared. Once per
    op and file when ``memo`` is given (the sets are read only)."""
    if memo is None:
        return _holders_of(tmod, op, n)
    key = ("holders", id(op), id(tmod), n)
    hit = memo.get(key)
    if hit is None:                      # conversions between the same two types: one computation
        same = ("holders_of", id(op.in_types[0]), id(op.out_types[0]), n) if op.in_types and op.out_types else key
        if same not in memo:
            memo[same] = (op.in_types, op.out_types, _holders_of(tmod, op, n, memo))
        hit = memo[key] = (op, tmod, memo[same][2])
    return hit[2]


def _holders_of(tmod: Module, op: Any, n: int, memo: dict | None = None) -> tuple | str:
    """:func:`_conversion_holders`, computed; ``memo``: each layout's holders once per file (many
    conversions share a source or a destination layout)."""
    try:
        st, dt = op.in_types[0].read(), op.out_types[0].read()
        shape = tuple(st.shape)
        bits = elem_bit_width(st.elem)
        src = attr_to_linear(st.encoding, shape)
        dst = attr_to_linear(dt.encoding, shape)
    except (LayoutError, KeyError, ValueError) as e:
        return str(e)
    if bits == 1:                            # an i1 travels through shared memory as one byte (Triton
        bits = 8                             # zero-extends i1 to i8 for memory: TritonGPUToLLVM Utility.cpp)
    if not bits or bits % 8 or not isinstance(src, LinearLayout) or not isinstance(dst, LinearLayout):
        return "a layout that is not linear or an element that is not whole bytes"
    hs, hd = _layout_holders(src, shape, n, memo), _layout_holders(dst, shape, n, memo)
    if hs is None or hd is None:
        return "a layout with fewer than 32 lanes"
    return hs, hd, bits


#: the opcode heads of :func:`_is_barrier` (a quick test before the call)
_BARRIER_HEADS = frozenset(("bar", "barrier"))


def _is_barrier(ins: Instr) -> bool:
    """A CTA (or warp) barrier: ``bar.sync``/``barrier.sync``/``bar.warp.sync`` (not ``bar.arrive``)."""
    p = ins.parts
    return p[0] in ("bar", "barrier") and ("sync" in p or "red" in p) and "arrive" not in p


def _epochs(mod: PtxModule) -> tuple[dict[int, int], dict[int, list[Instr]]]:
    """``(epoch of each shared access by PTX line, accesses of each epoch in program order)``: an
    epoch is the stretch of one function between two barriers (no access moves across one),
    numbered from 1 in program order, growing at each barrier and at each new function (one loop,
    no generator: every instruction of the file passes here)."""
    return _walk(mod)[:2]


def _walk(mod: PtxModule) -> tuple[dict[int, int], dict[int, list[Instr]], set[int]]:
    """:func:`_epochs` and :func:`atomic_epochs` of ``mod`` in one pass over its instructions."""
    of: dict[int, int] = {}
    by: dict[int, list[Instr]] = {}
    seen: dict[int, bool] = {}
    e, func = 0, None
    for ins in mod.instrs:
        barrier = ins.parts[0] in _BARRIER_HEADS and _is_barrier(ins)
        if ins.func != func or barrier:
            e, func = e + 1, ins.func
            if barrier:
                continue
        acc = smem_access(ins) if ins.parts[0] in ACCESS_HEADS else None   # opcode first
        if acc is not None:
            of[ins.line] = e
            by.setdefault(e, []).append(ins)
        if "shared" in ins.opcode and ins.parts[0] != "fence":
            seen[e] = seen.get(e, True) and ins.parts[0] in ("atom", "red") and acc is None
    return of, by, {k for k, v in seen.items() if v}


def _accesses(mod: PtxModule, memo: dict) -> list[tuple[Instr, tuple]]:
    """``(instruction, smem_access(instruction))`` of each shared-memory access of ``mod``, in
    program order, once per file (kept in ``memo``)."""
    hit = memo.get(("accesses",))
    if hit is None or hit[0] is not mod:
        got = [(ins, acc) for ins in mod.instrs if ins.parts[0] in ACCESS_HEADS
               for acc in [smem_access(ins)] if acc is not None]
        hit = memo[("accesses",)] = (mod, got)
    return hit[1]


def atomic_epochs(mod: PtxModule) -> set[int]:
    """The epochs (numbered as :func:`_epochs`) whose shared-memory instructions are all atomics
    (``atom.shared`` / ``red.shared``, and fences): they change the values of bytes a store of an
    earlier epoch put there but no byte's place, so a load after them reads the bytes that store
    wrote (a histogram: bins zeroed, counted with atomics, read)."""
    return _walk(mod)[2]


def _regs(instrs: list[Instr]) -> set:
    return {_address_register(i) for i in instrs}


def _epoch_index(by: dict[int, list[Instr]]) -> dict[tuple[int, str, str], list[Instr]]:
    """``(epoch, source line, direction) -> the accesses``, in program order, of ``by``
    (:func:`_epochs`): what :func:`_chains` selects, grouped once per file.

    >>> from verilayout.frontends.ptx import make_instr
    >>> a = make_instr("st.shared.b32", ("[%r1]", "%r2"), 5)
    >>> _epoch_index({1: [a]})[(1, a.loc, "store")] == [a]
    True
    """
    out: dict[tuple[int, str, str], list[Instr]] = {}
    for e, instrs in by.items():
        for i in instrs:
            out.setdefault((e, i.loc, smem_access(i)[0]), []).append(i)
    return out


def _chains(by: dict[int, list[Instr]], loc: str,
            index: dict[tuple[int, str, str], list[Instr]] | None = None) -> list[list[tuple[list[Instr], list[Instr]]]]:
    """The scratch round trips of source line ``loc``, matched by barriers: a round is an epoch
    holding stores of the line followed (one barrier later) by an epoch holding loads of the line;
    rounds one barrier apart (stores right after the previous round's loads) through the same address
    registers form one chain (one multi-round conversion). Accesses of the line outside any round (moved by the scheduler next
    to another op's) belong to no round. ``index``: :func:`_epoch_index` of ``by`` when the caller
    has it."""
    index = _epoch_index(by) if index is None else index

    def mine(e: int, kind: str) -> list[Instr]:
        return list(index.get((e, loc, kind), ()))

    rounds = []
    for e in sorted(by):
        st = mine(e, "store")
        ld = mine(e + 1, "load") or _all_lineless(by, e + 1, st)
        if st and ld and not _regs(mine(e, "load")) & _regs(ld):   # (loads beside the stores through
            rounds.append((e, _lineless(by, e, "store", st), _lineless(by, e + 1, "load", ld)))
    rounds = _through_shared_registers(rounds)
    chains: list[list[tuple[list[Instr], list[Instr]]]] = []
    last = None
    for e, st, ld in rounds:
        if last is not None and e == last + 2 and _regs(st) == _regs(chains[-1][-1][0]) \
                and _regs(ld) == _regs(chains[-1][-1][1]):       # the same scratch addresses again
            chains[-1].append((st, ld))
        else:
            chains.append([(st, ld)])
        last = e
    for chain in chains:                     # rounds whose loads the compiler dropped (nothing used them)
        e = next(x for x, st, _ld in rounds if st is chain[-1][0])
        while (st := mine(e + 2, "store")) and not mine(e + 2, "load") and not mine(e + 3, "load") \
                and _addr_keys(st) <= _addr_keys(chain[-1][0]):
            chain.append((st, _lineless(by, e + 3, "load", [], _regs(chain[-1][1]))))
            e += 2
    return chains


def _through_shared_registers(rounds: list[tuple]) -> list[tuple]:
    """Rounds one barrier pair apart whose stores share address registers and whose loads do (one
    multi-round conversion through the same scratch) keep only the accesses through those registers:
    another op of the line in the same epoch (a ``local_alloc``'s stores before the first round, a
    ``local_load``'s loads after the last) goes through its own allocation's registers."""
    out = list(rounds)
    for k in range(len(out) - 1):
        (e0, st0, ld0), (e1, st1, ld1) = out[k], out[k + 1]
        rs, rl = _regs(st0) & _regs(st1), _regs(ld0) & _regs(ld1)
        if e1 == e0 + 2 and rs - {None} and rl - {None}:
            out[k] = (e0, _through(st0, rs), _through(ld0, rl))
            out[k + 1] = (e1, _through(st1, rs), _through(ld1, rl))
    return out


def _through(instrs: list[Instr], regs: set) -> list[Instr]:
    return [i for i in instrs if _address_register(i) in regs]


def _lineless(by: dict[int, list[Instr]], e: int, kind: str, mine: list[Instr], regs: set | None = None) -> list[Instr]:
    """``mine`` (a round's stores or loads in epoch ``e``) with the accesses of that epoch whose
    ``.loc`` names line 0 (no source line: code LLVM moved or merged, which keeps the file) and whose
    address register is one of ``mine``'s (or of ``regs``: the round before's loads, for a round
    whose loads are all such): the same scratch addresses, the round's own accesses."""
    regs = _regs(mine) if regs is None else regs
    more = [i for i in by.get(e, []) if i.loc and i.loc.endswith(":0") and i not in mine and
            smem_access(i)[0] == kind and _address_register(i) in regs]
    return sorted(mine + more, key=lambda i: i.line) if more else mine


def _all_lineless(by: dict[int, list[Instr]], e: int, stores: list[Instr]) -> list[Instr]:
    """The loads of epoch ``e`` when ``stores`` (a line's, the epoch before) exist and every load and
    store of ``e`` is under ``.loc N 0`` (no source line): a round whose loads LLVM moved, all of them,
    out of the line (hoisted before a loop); else []."""
    acc = by.get(e, []) if stores else []
    if not acc or not all(i.loc and i.loc.endswith(":0") for i in acc):
        return []
    return [i for i in acc if smem_access(i)[0] == "load"]


def _addr_keys(instrs: list[Instr]) -> set:
    """The ``(address register, offset)`` pairs of ``instrs``: two rounds with the same set store
    through the same scratch bytes."""
    return {(a.base_name, a.offset) for a in map(address_of, instrs) if a is not None}


def _claims(mod: PtxModule, evals: dict, tmod: Module, memo: dict) -> dict:
    """The file's conversions matched to their round trips (once per file, kept in ``memo``):
    ``epochs`` (:func:`_epochs`); ``lines``: source line -> its conversions and, per chain of the
    line (:func:`_chains`), ``(chain, pieces, why, index of the conversion whose law holds or
    None)``; ``claimed``: the PTX lines of the chains a conversion proved; ``foreign``: source lines
    whose accesses other ops may own (a reduction, scan, ... or a chain no conversion proved);
    ``others``: per source line, its shared-memory ops that are not conversions."""
    hit = memo.get(("claims",))
    if hit is not None and hit[0] is mod:
        return hit[1]
    n = 32 * (tmod.num_warps or 4)
    of, by, atomic = _walk(mod)
    convs: dict[str, list] = {}
    others: dict[str, int] = {}
    foreign: set[str] = set()
    scratch: set[str] = set()
    reduced: set[str] = set()                # lines of reductions and scans (inter-warp rounds of their own)
    for op in tmod.ops:
        if op.name != "ttg.convert_layout" and op.name not in _SCRATCH and op.name not in _OPS or not op.loc:
            continue                     # the name first: most ops' loc is then never decoded
        if op.name == "ttg.convert_layout" and op.in_types and op.out_types:
            convs.setdefault(op.loc, []).append(op)
        elif op.name in _SCRATCH or op.name in _OPS:
            others[op.loc] = others.get(op.loc, 0) + 1
            if op.name in _SCRATCH:
                foreign.add(op.loc)
                scratch.add(op.loc)
            if op.name in ("tt.reduce", "tt.scan"):
                reduced.add(op.loc)
    lines, claimed, chained = {}, set(), set()
    n_of = {}                                # a worker's own threads, when the line's ops are all its
    for loc, ops in convs.items():
        ks = {op_threads(tmod, op.line, n) for op in ops}
        n_of[loc] = ks.pop() if len(ks) == 1 else n
    for loc, ops in convs.items():
        entries = _match_line(tmod, evals, loc, ops, by, n_of[loc], memo)
        lines[loc] = (ops, entries)
        for chain, _p, _w, k in entries:
            chained.update(i.line for st, ld in chain for i in st + ld)
            if k is None:
                foreign.add(loc)
            else:
                claimed.update(i.line for st, ld in chain for i in st + ld)
    got = {"epochs": (of, by), "atomic": atomic, "lines": lines, "claimed": claimed, "chained": chained, "foreign": foreign, "others": others, "n": n,
           "scratch": scratch, "n_of": n_of, "reduced": reduced}
    memo[("claims",)] = (mod, got)
    return got


def convert_checks(ctx: PtxContext) -> list[Check]:
    """``smem-address`` for each ``ttg.convert_layout`` the PTX lowers through scratch memory: its
    accesses are found by barriers (:func:`_chains`: rounds of stores, one barrier, loads, on the
    op's source line), each round's bytes kept apart from the other rounds'. For every pair of
    threads, the bytes one stores that the other loads in the same round, summed over the rounds,
    are exactly the bytes of the elements the source layout gives the first and the destination
    layout gives the second (``bytes x shared elements``), and every byte loaded was stored in
    that round. So what is stored is what is loaded, element for element between threads; which
    register of a thread holds which of its elements is not checked. Several conversions on one
    source line take the line's chains in program order, each confirmed by the law. A chain no
    conversion's law accepts: nothing when its accesses are a local op's, proved by
    :func:`element_checks` (run first, same ``ctx``); the error of the conversion in its place
    when the line holds only conversions, as many as chains; else ``unchecked`` (so is a chain found
    after the line's last conversion was matched that satisfies a conversion's law of the line)."""
    out: list[Check] = []
    mod, evals, tmod, memo = ctx.ptx, ctx.values, ctx.tmod, ctx.memo
    claims = _claims(mod, evals, tmod, memo)
    local = memo.get(("local_proved",), set())
    for loc, (ops, entries) in claims["lines"].items():
        n = claims["n_of"].get(loc, claims["n"])
        for i, (chain, pieces, why, k) in enumerate(entries):
            first = chain[0][0][0] if chain[0][0] else chain[0][1][0]
            data = {"source": "ptx", "rounds": len(chain)}
            if k is not None:
                data.update(ttgir_line=ops[k].line, ttgir_op=ops[k].name)
                out.append(_round_trip_proved(ops[k], pieces, n, data))
                continue
            if all(j.line in local for st, ld in chain for j in st + ld):
                continue                     # a local_alloc/local_load pair of the line, proved there
            op = ops[min(i, len(ops) - 1)]
            pinned = _pinned(entries, i, ops) if loc not in claims["reduced"] else None   # (a reduce or
            if pinned is not None and why is None and _sized(tmod, pinned, pieces, n, memo):  # scan may own it)
                op = pinned
            else:
                pinned = None
            got = why or _conversion_holders(tmod, op, n, memo)
            if isinstance(got, str):
                out.append(_skip(op, first, got))
            elif op is pinned:               # the one conversion program order leaves for this chain
                data.update(ttgir_line=op.line, ttgir_op=op.name, inferred="program order")
                memo.setdefault(("cvt_decided",), set()).update(j.line for st, ld in chain for j in st + ld)
                out.extend(_trip_checks(op, pieces, got, n, data, True, memo))
            elif loc in claims["scratch"] or len(entries) != len(ops):
                out.append(_skip(op, first, f"the scratch round trip at PTX line {first.line} matches none of "
                                 f"the {len(ops)} conversion(s) of source line {loc}, which "
                                 f"{claims['others'].get(loc, 0)} other shared-memory op(s) share"))
            else:
                data.update(ttgir_line=op.line, ttgir_op=op.name)
                memo.setdefault(("cvt_decided",), set()).update(j.line for st, ld in chain for j in st + ld)
                out.extend(_trip_checks(op, pieces, got, n, data, False, memo))
    return out + round_checks(ctx, out)


def _trip_checks(op: Any, pieces: list, got: tuple, n: int, data: dict, pinned: bool, memo: dict) -> list[Check]:
    """The checks of a conversion's round trip (:func:`_round_trip`, its ties and the accesses also
    charged); ``pinned``: the round trip is the conversion's by program order (said in an error)."""
    got_c = _round_trip_of(op, pieces, got, n, data, memo)
    if pinned and got_c.status == "counterexample":
        got_c = replace(got_c, message=got_c.message + " (the round trip is this conversion's by "
                        "program order: the only conversion of the line between the ones matched "
                        "before and after it, moving its amount of data; an inference)")
    return _charged(_with_ties(got_c), pieces, memo)


def _round_trip_of(op: Any, pieces: list, got: tuple, n: int, data: dict, memo: dict) -> Check:
    """:func:`_round_trip`; a round trip the law rejects is explained once per content (the
    holders, the accesses' kinds, opcodes, bytes objects, relative bases and line order: see
    :mod:`verilayout.audit.ptx_relabel`) and relabelled for each conversion that repeats it."""
    rels = _relative_bases(op, pieces, {}, memo)
    if isinstance(rels, Check) or _round_trip_holds(pieces, rels, got[0], got[1], got[2] // 8, n):
        return _round_trip(op, pieces, got[0], got[1], got[2] // 8, n, data)
    base = {k: v for k, v in data.items() if k not in ("ttgir_line", "inferred")}
    key = ("trip", id(got[0]), id(got[1]), got[2], n, op.name, tuple(sorted(base.items())), ranks(pieces),
           tuple(rels), tuple((i.opcode, i.parts, i.vec, i.func, smem_access(i), id(ts)) for i, _a, ts in pieces))
    hit = memo.get(key)
    if hit is None:                          # the objects whose ids the key holds are kept alive with it
        def compute() -> Check:
            t_op, t_pieces = template(op, pieces)
            t_data = dict(base, ttgir_line=t_op.line) if "ttgir_line" in data else base
            return _round_trip(t_op, t_pieces, got[0], got[1], got[2] // 8, n, t_data)
        keep = (got, [ts for _i, _a, ts in pieces])
        hit = memo[key] = (keep, _by_content(key, keep, compute))
    c = instantiate([hit[1]], op, pieces)[0]
    data.update(c.data)                      # the caller's keys first, in its order (as _round_trip leaves them)
    return replace(c, data=data)


def _charged(checks: list[Check], pieces: list, memo: dict | None = None) -> list[Check]:
    """A round trip's error also charged to the access(es) whose correction alone (one constant
    shift, :func:`verilayout.audit.ptx_scratch.repair_culprits`) makes the bytes whole, when the
    blame by wrong readers (:func:`_blamed`) named others: a load moved onto bytes other threads
    wrote reads wrong data, and the bytes it left unread tell which load moved."""
    if not checks or checks[0].status != "counterexample":
        return checks
    rels = _relative_bases(None, pieces, {}, memo)
    lines = _culprits(pieces, rels, memo) if not isinstance(rels, Check) else []
    named = {c.line for c in checks}
    by_line = {i.line: i for i, _a, _t in pieces}
    c = checks[0]
    extra = [Check(".".join(by_line[ln].parts[:2]), ln, by_line[ln].loc, c.check, c.status, c.severity,
                   c.message + f" (charged to line {ln} too: moved by one constant alone, it would make the bytes "
                   "stored and loaded whole)", dict(c.data, charged=ln))
             for ln in lines[:3] if ln not in named]
    return checks + extra


def _culprits(pieces: list, rels: list[int], memo: dict | None) -> list[int]:
    """:func:`verilayout.audit.ptx_scratch.repair_culprits`, once per content in ``memo`` (the
    accesses' kinds, bytes objects, relative bases and line order): its lines by rank."""
    if memo is None:
        return repair_culprits(pieces, rels)
    rk = ranks(pieces)
    key = ("culprits", rk, tuple(rels), tuple((smem_access(i), id(ts)) for i, _a, ts in pieces))
    hit = memo.get(key)
    if hit is None:
        at = {ln: r for (i, _a, _t), r in zip(pieces, rk) for ln in [i.line]}
        keep = [ts for _i, _a, ts in pieces]
        hit = memo[key] = (keep, _by_content(key, keep, lambda: [at[ln] for ln in repair_culprits(pieces, rels)]))
    line_of = {r: i.line for (i, _a, _t), r in zip(pieces, rk)}
    return [line_of[r] for r in hit[1]]


def _pinned(entries: list, i: int, ops: list) -> Any:
    """The conversion chain ``i`` (unmatched) must be by program order, or None: the chains and the
    conversions of a line run in the same order, so an unmatched chain between the chains matched
    to conversions ``a`` and ``b`` belongs to one of ``ops[a+1 .. b-1]``; it is pinned when that is
    one conversion and no other unmatched chain competes for it."""
    before = [k for _c, _p, _w, k in entries[:i] if k is not None]
    after = [k for _c, _p, _w, k in entries[i + 1:] if k is not None]
    lo = before[-1] + 1 if before else 0
    hi = after[0] if after else len(ops)
    rivals = [j for j, e in enumerate(entries) if e[3] is None and j != i and
              (not before or j > entries.index(next(x for x in entries if x[3] == before[-1]))) and
              (not after or j < entries.index(next(x for x in entries if x[3] == after[0])))]
    return ops[lo] if hi - lo == 1 and not rivals else None


def _with_ties(c: Check) -> list[Check]:
    """``c`` and, when its blame tied between a store and a load (``data["tied"]``: the other
    instructions), the same error at each of them: only the bytes are known, and a store and a load
    a constant apart give the same bytes whichever of them moved."""
    tied = dict(c.data).pop("tied", None) if c.data else None
    if not tied:
        return [c]
    data = {k: v for k, v in c.data.items() if k != "tied"}
    data["as_much_to_blame"] = sorted(tied)
    note = f" (lines {sorted(tied)} are as much to blame: a store and a load a constant apart cannot be told apart)"
    out = [Check(c.op, c.line, c.loc, c.check, c.status, c.severity, c.message + note, data)]
    for ln, ins in sorted(tied.items()):
        out.append(Check(".".join(ins.parts[:2]), ln, ins.loc, c.check, c.status, c.severity,
                         c.message + f" (the same error charged to line {ln}: with line {c.line} it is as much to "
                         "blame; a store and a load a constant apart cannot be told apart)",
                         dict(data, as_much_to_blame=[c.line] + [x for x in sorted(tied) if x != ln])))
    return out


def _match_line(tmod: Module, evals: dict, loc: str, ops: list, by: dict, n: int, memo: dict) -> list[tuple]:
    """Per chain of source line ``loc``: ``(chain, pieces, why not evaluated, index of the first
    conversion after the last matched one whose law the chain satisfies, or None)``."""
    out: list[tuple] = []
    at = 0
    hit = memo.get(("epoch_index",))
    if hit is None or hit[0] is not by:
        hit = memo[("epoch_index",)] = (by, _epoch_index(by))
    chains = _chains(by, loc, hit[1])
    if not chains:                           # no barrier between: the line's stores, then its loads
        acc = [i for e in sorted(by) for i in by[e] if i.loc == loc]
        kinds = [smem_access(i)[0] for i in acc]
        if not acc or "load" not in kinds or "store" not in kinds:
            return out                       # converted in registers (shuffles), not through memory
        chains = [[([i for i in acc if smem_access(i)[0] == "store"], [i for i in acc if smem_access(i)[0] == "load"])]]
        if kinds != sorted(kinds, key=lambda k: k == "load"):
            return [(chains[0], [], "not one round of stores then loads (no barrier between rounds)", None)]
    work = [w for c in chains for w in _converting_parts(tmod, evals, _meeting_stores(c, evals, n, memo), ops, n, memo)]
    done: list = []                          # chains before the last match (an unmatched one is settled)
    while work:
        chain = work.pop(0)
        pieces, why = _chain_pieces(chain, evals, n, memo)
        if why is not None:
            out.append((chain, pieces, why, None))
            continue
        rels = _relative_bases(ops[0], pieces, {}, memo)
        hit = None
        skip = sum(1 for e in out if e[3] is None and e[2] is None and e[0] not in done)   # chains left unmatched
        for k in [*range(min(at + skip, len(ops)), len(ops)), *range(at, min(at + skip, len(ops)))]:
            got = _conversion_holders(tmod, ops[k], n, memo)
            if isinstance(got, str) or isinstance(rels, Check):
                continue
            if _round_trip_holds(pieces, rels, got[0], got[1], got[2] // 8, n):
                hit = k
                break
        if hit is None and len(chain) > 1 and len(ops) - at >= len(chain) and \
                _a_round_converts(tmod, evals, chain, ops[at:], n, memo):
            split: list = []                 # rounds through one scratch: one conversion each (a
            for r in chain:                  # round no load reads stays with the round before it)
                if r[1] or not split:
                    split.append([r])
                else:
                    split[-1].append(r)
            work[:0] = split
            continue
        if hit is None and at >= len(ops) and not isinstance(rels, Check):
            late = _late_round(tmod, ops, pieces, rels, n, memo)
            if late is not None:             # a conversion's round after every conversion took one
                out.append((chain, pieces, late, None))
                continue
        if hit is None and not any(_sized(tmod, op, pieces, n, memo) for op in ops[at:]):
            continue                         # moves another amount of data: a local op pair's accesses
        out.append((chain, pieces, None, hit))
        if hit is not None:
            at = hit + 1
            done.extend(e[0] for e in out)
    return out


def _late_round(tmod: Module, ops: list, pieces: list, rels: list[int], n: int, memo: dict) -> str | None:
    """Why a round trip of a line whose last conversion already took an earlier round is not
    compared, when it satisfies the law of one of them (so it may be that one's own: an earlier round
    taken was another scratch op's of the line, e.g. a reduction's, which a broadcast conversion's law
    can accept); None when it satisfies none (another op's round, left to the write-before-read law)."""
    for op in ops:
        got = _conversion_holders(tmod, op, n, memo)
        if not isinstance(got, str) and _round_trip_holds(pieces, rels, got[0], got[1], got[2] // 8, n):
            return (f"it satisfies the law of the conversion at TTGIR line {op.line}, but the last of the line's "
                    f"{len(ops)} conversion(s) (TTGIR line {ops[-1].line}) was matched to an earlier round, and a round "
                    "taken before may be another op's (e.g. a reduction's): which conversion's round this is is not told apart")
    return None


def _meeting_stores(chain: list, evals: dict, n: int, memo: dict) -> list:
    """A one-round chain without the stores of its epoch whose bytes no load of the round reads
    (another op of the source line wrote them in the same epoch, e.g. a ``local_alloc`` next to the
    conversion): tied by what the addresses say, not by the line. The chain itself when every store
    meets a load, or when the addresses cannot be compared."""
    if len(chain) != 1:
        return chain
    st, ld = chain[0]
    pieces = []
    for ins in st + ld:
        ev = evals.get(ins.func)
        got = _thread_bytes(ev, ins, n, memo) if ev is not None else "no evaluator"
        if isinstance(got, str):
            return chain
        pieces.append((ins, *got))
    rels = _relative_bases(None, pieces, {}, memo)
    if isinstance(rels, Check):
        return chain
    read = sorted_unique(np.concatenate([thread_arrays(ts)[1] + rel for (_i, _a, ts), rel
                                         in zip(pieces[len(st):], rels[len(st):])] or [np.zeros(0, np.int64)]))
    keep = [p[0] for p, rel in zip(pieces[:len(st)], rels[:len(st)]) if _meets(thread_arrays(p[2])[1] + rel, read)]
    return [(keep, ld)] if keep and len(keep) < len(st) else chain


def _converting_parts(tmod: Module, evals: dict, chain: list, ops: list, n: int, memo: dict) -> list[list]:
    """A one-round chain that satisfies no conversion's law of ``ops``, cut into the parts whose bytes
    meet (:func:`_meeting_parts`), kept to the parts that satisfy one: a ``local_alloc``'s stores and
    a ``local_load``'s loads of the same line and epoch (their own buffer, which the conversion's
    scratch never meets) are left to those ops' checks. ``[chain]`` when a part does not satisfy a law.

    >>> _converting_parts(None, {}, [([], [])], [], 128, {})   # nothing to cut
    [[([], [])]]
    """
    if len(chain) != 1 or len(_regs(chain[0][0])) < 2 or len(_regs(chain[0][1])) < 2:
        return [chain]
    pieces, why = _chain_pieces(chain, evals, n, memo)
    rels = _relative_bases(ops[0], pieces, {}, memo) if why is None else None
    if rels is None or isinstance(rels, Check) or _converts(tmod, pieces, rels, ops, n, memo):
        return [chain]
    parts = _meeting_parts(pieces, rels)
    keep = [p for p in parts if _converts(tmod, [pieces[k] for k in p], [rels[k] for k in p], ops, n, memo)]
    if len(parts) < 2 or not keep:
        return [chain]
    return [[([pieces[k][0] for k in p if smem_access(pieces[k][0])[0] == "store"],
              [pieces[k][0] for k in p if smem_access(pieces[k][0])[0] == "load"])] for p in keep]


def _converts(tmod: Module, pieces: list, rels: list[int], ops: list, n: int, memo: dict) -> bool:
    """Some conversion of ``ops`` has its law (:func:`_round_trip_holds`) on ``pieces``."""
    for op in ops:
        got = _conversion_holders(tmod, op, n, memo)
        if not isinstance(got, str) and _round_trip_holds(pieces, rels, got[0], got[1], got[2] // 8, n):
            return True
    return False


def _meeting_parts(pieces: list, rels: list[int]) -> list[list[int]]:
    """The indices of ``pieces`` (one round's accesses) grouped by address register, groups joined
    when a store group's bytes meet a load group's (one buffer): the round's independent buffers, in
    order of their first access."""
    groups: dict[tuple, list[int]] = {}
    for k, (ins, _a, _ts) in enumerate(pieces):
        groups.setdefault((smem_access(ins)[0], _address_register(ins)), []).append(k)
    keys = list(groups)
    byts = {g: sorted_unique(np.concatenate([thread_arrays(pieces[k][2])[1] + rels[k] for k in groups[g]]))
            for g in keys}
    root = {g: g for g in keys}

    def find(g: tuple) -> tuple:
        while root[g] != g:
            g = root[g]
        return g
    for a in keys:
        for b in keys:
            if a[0] == "store" and b[0] == "load" and _meets(byts[a], byts[b]):
                root[find(a)] = find(b)
    out: dict[tuple, list[int]] = {}
    for g in keys:
        out.setdefault(find(g), []).extend(groups[g])
    return [sorted(v) for v in sorted(out.values(), key=min)]


def _meets(b: np.ndarray, read: np.ndarray) -> bool:
    """Some value of ``b`` is in ``read`` (sorted, distinct).

    >>> _meets(np.array([3, 9]), np.array([1, 9])), _meets(np.array([3]), np.array([1, 9]))
    (True, False)
    """
    if not len(b) or not len(read):
        return False
    at = np.minimum(np.searchsorted(read, b), len(read) - 1)
    return bool((read[at] == b).any())


def _a_round_converts(tmod: Module, evals: dict, chain: list, ops: list, n: int, memo: dict) -> bool:
    """Some round of ``chain`` on its own satisfies the law of a conversion of ``ops`` (the rounds
    are those of several conversions through one scratch, not one conversion in several rounds:
    a round of a multi-round conversion moves only part of its tensor and satisfies none)."""
    for r in chain:
        if not r[1]:
            continue
        pieces, why = _chain_pieces([r], evals, n, memo)
        rels = _relative_bases(ops[0], pieces, {}, memo) if why is None else None
        if rels is None or isinstance(rels, Check):
            continue
        for op in ops:
            got = _conversion_holders(tmod, op, n, memo)
            if not isinstance(got, str) and _round_trip_holds(pieces, rels, got[0], got[1], got[2] // 8, n):
                return True
    return False


def _sized(tmod: Module, op: Any, pieces: list, n: int, memo: dict | None = None) -> bool:
    """The data a chain stores (bytes, counted per thread) is the conversion's tensor once, or up to
    once per copy the source layout holds (a broadcast): the chain may be this conversion's."""
    got = _conversion_holders(tmod, op, n, memo)
    if isinstance(got, str):
        return True
    hs, _hd, bits = got
    most, want, _e = byte_stats(hs)
    want, most = want * bits // 8, most * bits // 8
    stored = sum(len(thread_arrays(ts)[1]) for ins, _a, ts in pieces if smem_access(ins)[0] == "store")
    return bool(want) and want <= stored <= most


def _skip(op: Any, first: Instr, why: str) -> Check:
    return Check(".".join(first.parts[:2]), first.line, first.loc, "smem-address", "unchecked", None,
                 f"ttg.convert_layout (TTGIR line {op.line}): scratch round trip not compared: {why}",
                 {"source": "ptx", "ttgir_line": op.line, "ttgir_op": op.name, "reason": why})


def _chain_pieces(chain: list, evals: dict, n: int, memo: dict) -> tuple[list, str | None]:
    """Each access of the chain as ``(instr, thread 0's address, each thread's bytes)``, the bytes
    of round ``r`` moved ``r`` round spans up (a round reads only what it stored); or why not."""
    pieces: list = []
    rounds: list[int] = []
    for r, (st, ld) in enumerate(chain):    # (a round no load reads: stores the law finds unread)
        for ins in st + ld:
            ev = evals.get(ins.func)
            got = _thread_bytes(ev, ins, n, memo) if ev is not None else "no evaluator"
            if isinstance(got, str):
                return [], got
            pieces.append((ins, *got))
            rounds.append(r)
    if len(chain) == 1:
        return pieces, None
    rels = _relative_bases(None, pieces, {}, memo)
    if isinstance(rels, Check):
        return [], "the accesses' bases are not a constant apart"
    spans = [(rel + int(by.min()), rel + int(by.max())) for (_i, _a, ts), rel in zip(pieces, rels)
             for by in [thread_arrays(ts)[1]] if len(by)]         # each access's bytes, from its arrays
    lo, hi = min(a for a, _b in spans), max(b for _a, b in spans)
    stride = (hi - lo + 128) // 128 * 128
    moved = [(ins, plus_simplified(a0, r * stride), ts) for (ins, a0, ts), r in zip(pieces, rounds)]
    return moved, None


def _round_trip_holds(pieces: list, rels: list[int], hs: list[set[int]], hd: list[set[int]], eb: int,
                      n: int) -> bool:
    """The law of :func:`convert_checks` decided with arrays (the fast path; a failure is then
    explained by :func:`_round_trip`). Writers are taken by class: the threads that hold the same
    elements in the source layout (one thread each, unless the layout broadcasts: then any of the
    copies may store, or all of them the same bytes). Every byte read was written, by one class
    only; every byte written is read; and the distinct bytes thread ``td`` reads from class ``c``
    number ``eb x |elements(c) & hd[td]|`` for every pair. Decided once per content (the accesses'
    directions, bytes objects and relative bases, with ``hs``, ``eb`` and ``n``), kept with ``hd``:
    a conversion's chain is tried against each candidate conversion, and kernels repeat conversions."""
    kept = hd.__dict__.setdefault("_arrays", {}) if isinstance(hd, ThreadBytes) else {}
    key = ("holds", id(hs), eb, n, tuple((smem_access(ins)[0], id(ts), rel) for (ins, _a0, ts), rel in zip(pieces, rels)))
    hit = kept.get(key)
    if hit is None:                          # the objects whose ids the key holds are kept alive with it
        hit = kept[key] = ((hs, [ts for _i, _a, ts in pieces]), _round_trip_decided(pieces, rels, hs, hd, eb, n))
    return hit[1]


def _round_trip_decided(pieces: list, rels: list[int], hs: list[set[int]], hd: list[set[int]], eb: int,
                        n: int) -> bool:
    """:func:`_round_trip_holds`, computed."""
    of, k, share = _class_share(hs, hd, n)
    wb, wt, rb, rt = [], [], [], []
    for (ins, _a0, ts), rel in zip(pieces, rels):
        store = smem_access(ins)[0] == "store"
        threads, bytes_ = thread_arrays(ts)                # kept with the access's bytes
        if not len(bytes_):
            continue
        (wb if store else rb).append(bytes_ + rel)
        (wt if store else rt).append(of[threads] if store else threads)
    if not wb or not rb or sum(map(len, rb)) < eb * int(share.sum()):
        return False                     # the law reads eb x sum(share) distinct (reader, byte) pairs
    wb_, wt_, rb_, rt_ = (np.concatenate(x) for x in (wb, wt, rb, rt))
    lo = min(int(wb_.min()), int(rb_.min()))
    span = max(int(wb_.max()), int(rb_.max())) - lo + 1
    if span > 1 << 24:
        return False
    writer = np.full(span, -1, dtype=np.int64)
    writer[wb_ - lo] = wt_
    if (writer[wb_ - lo] != wt_).any():                 # two classes write one byte
        return False
    ws = writer[rb_ - lo]
    if (ws < 0).any():
        return False
    read = np.zeros(span, dtype=bool)
    read[rb_ - lo] = True
    if not read[wb_ - lo].all():                       # a byte stored that no thread loads
        return False
    pairs = sorted_unique(rt_ * span + (rb_ - lo))      # each (reader, byte) once
    got = np.bincount(writer[pairs % span] * n + pairs // span, minlength=k * n).reshape(k, n)
    return bool((got == eb * share).all())


def _class_share(hs: list[set[int]], hd: list[set[int]], n: int) -> tuple[np.ndarray, int, np.ndarray]:
    """``(of, k, share)`` of :func:`_round_trip_holds`: each thread's writer class (threads holding
    the same source elements), the number of classes, and ``share[c, td]``: the elements class
    ``c`` and reader ``td`` both hold. Kept with ``hd`` (a :class:`ThreadBytes`: the conversion's
    holders, once per op) for this ``hs``."""
    kept = hd.__dict__.setdefault("_arrays", {}) if isinstance(hd, ThreadBytes) else {}
    hit = kept.get(("share", id(hs), n))
    if hit is not None:
        return hit[1]
    of, k = _writer_classes(hs)
    hth, hel = thread_arrays(hs)                       # the last thread holding an element: its owner
    last = np.full(int(hel.max()) + 1 if len(hel) else 1, -1, dtype=np.int64)
    np.maximum.at(last, hel, hth)
    owner = np.where(last >= 0, of[np.maximum(last, 0)] if len(of) else -1, -1)
    share = np.zeros((k, n), dtype=np.int64)           # share[c, td]: elements both hold
    th, el = thread_arrays(hd)
    th, el = th[el < len(owner)], el[el < len(owner)]
    c = owner[el]
    np.add.at(share, (c[c >= 0], th[c >= 0]), 1)
    kept[("share", id(hs), n)] = (hs, (of, k, share))   # hs kept alive: its id stays unique
    return of, k, share


def _writer_classes(hs: list[set[int]]) -> tuple[np.ndarray, int]:
    """``(of, k)``: each thread's class among the threads holding the same set of elements, the
    classes numbered in order of their first thread, and their number. From the sorted rows
    :func:`_holders` keeps (equal sets are equal rows when no row repeats an element), else from
    the sets.

    >>> [x.tolist() if hasattr(x, "tolist") else x for x in _writer_classes([{4, 1}, {2}, {1, 4}, {2}])]
    [[0, 1, 0, 1], 2]
    """
    rows = hs.__dict__.get("_arrays", {}).get("rows") if isinstance(hs, ThreadBytes) else None
    if rows is None:
        cls: dict[frozenset, int] = {}
        return np.array([cls.setdefault(frozenset(h), len(cls)) for h in hs], dtype=np.int64), len(cls)
    _u, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first), dtype=np.int64)
    return rank[inverse.reshape(-1)], len(first)


def _round_trip(op: Any, pieces: list, hs: list[set[int]], hd: list[set[int]], eb: int, n: int, data: dict) -> Check:
    """The conversion's verdict: proved when every thread loads from each other thread exactly
    the bytes of the elements they share; else the most blamed instruction, or a byte count."""
    rels = _relative_bases(op, pieces, data)
    if isinstance(rels, Check):
        return rels
    if _round_trip_holds(pieces, rels, hs, hd, eb, n):
        return _round_trip_proved(op, pieces, n, data)
    m = _scratch_bytes(pieces, rels)
    bad = _blamed(op, m, hs, hd, n, data, eb)
    if bad is None:
        bad = _byte_counts(op, pieces, m, hs, hd, eb, n, data)
    if bad is None:                          # the law failed where the per-thread accounts do not show it
        ins = pieces[0][0]
        bad = Check(".".join(ins.parts[:2]), ins.line, ins.loc, "smem-address", "counterexample", "error",
                    f"ttg.convert_layout (TTGIR line {op.line}): two copies of a broadcast element write one "
                    f"byte, or a reader gets a copy's bytes twice ({ins.opcode}, line {ins.line})", data)
    return bad


def _relative_bases(op: Any, pieces: list, data: dict, memo: dict | None = None) -> list[int] | Check:
    """Each access's base minus the first one's (signed 32-bit), or ``unchecked`` when one is not
    a constant apart; ``memo``: the file's, where each base is split once (:func:`_split_const`)."""
    ref = pieces[0][1]
    c1, r1 = _split_const(ref, memo)
    rels = []
    for ins, a0, _ts in pieces:
        c0, r0 = _split_const(a0, memo)
        if r0 == r1:                         # the same terms plus constants: no simplification needed
            v = (c0 - c1) % (1 << 32)
            rels.append(v - (1 << 32) if v >= 1 << 31 else v)
            continue
        d = minus_simplified(a0, ref)
        if not z3.is_bv_value(d):
            return Check(".".join(ins.parts[:2]), ins.line, ins.loc, "smem-address", "unchecked", None,
                         f"ttg.convert_layout (TTGIR line {op.line if op else '?'}): the accesses' bases are not a "
                         "constant apart",
                         dict(data, reason="bases"))
        v = d.as_long()
        rels.append(v - (1 << 32) if v >= 1 << 31 else v)
    return rels


def _round_trip_proved(op: Any, pieces: list, n: int, data: dict) -> Check:
    data = dict(data, instructions=[i.line for i, _a, _t in pieces])
    return Check(".".join(pieces[0][0].parts[:2]), pieces[0][0].line, pieces[0][0].loc, "smem-address", "proved",
                 None, f"ttg.convert_layout (TTGIR line {op.line}): through scratch memory, every thread of the "
                 f"{n} loads from each other thread exactly the bytes of the elements the source layout gives the "
                 "writer and the destination layout gives the reader (what is stored is what is loaded); "
                 f"{len(pieces)} instruction(s)" + (f" in {data['rounds']} rounds" if data.get("rounds", 1) > 1
                                                    else ""), data)


def _scratch_bytes(pieces: list, rels: list[int]) -> ScratchMap:
    """The round trip's bytes (:func:`verilayout.audit.ptx_tally.scratch_map`): each access's bytes
    moved by its relative base (mod 2**32), each thread's in its set's order; the last store of a
    byte holds it, a thread's first load of a byte reads it."""
    parts = []
    for (ins, _a0, ts), rel in zip(pieces, rels):
        th, by = thread_arrays(ts, ordered=False)
        parts.append((smem_access(ins)[0] == "store", th, (by + rel) % (1 << 32)))
    return scratch_map(parts, [i for i, _a, _t in pieces])


def _inside_scratch(m: ScratchMap, line: int, size: int, unread: tuple | None = None) -> bool:
    """Every byte the store at ``line`` writes that no load reads lies inside the round's scratch:
    from the least byte a load reads up ``size`` bytes (the tensor's, each element once) or up to
    the greatest byte read, whichever is more. A store past that may clobber another buffer.
    ``unread``: :func:`_unread_writes` of ``m`` when the caller has it.

    >>> from verilayout.audit.ptx_tally import from_dicts
    >>> class I: line = 7
    >>> _inside_scratch(from_dicts({0: (0, I), 4: (0, I), 12: (0, I)}, [{0: I, 8: I}], 1), 7, 16)
    True
    >>> _inside_scratch(from_dicts({16: (0, I)}, [{0: I}], 1), 7, 16)
    False
    """
    if not len(m.r_key):
        return False
    lines, unread = unread if unread is not None else _unread_writes(m)
    lo = int(m.r_key.min())                  # (a store below every byte read is past the scratch)
    hi = max(lo + size - 1, int(m.r_key.max()))
    mine = m.w_key[unread & (lines == line)]
    return bool(((mine >= lo) & (mine <= hi)).all())


def _unread_writes(m: ScratchMap) -> tuple[np.ndarray, np.ndarray]:
    """``(the line of each written byte's store, whether no load reads it)``, in the writes' order."""
    return m.lines[m.w_acc], ~_members(m.w_key, sorted_unique(m.r_key))


def _members(b: np.ndarray, read: np.ndarray) -> np.ndarray:
    """Per value of ``b``, whether it is in ``read`` (sorted, distinct)."""
    if not len(read):
        return np.zeros(len(b), dtype=bool)
    at = np.minimum(np.searchsorted(read, b), len(read) - 1)
    return read[at] == b


def _by_line(m: ScratchMap, acc: np.ndarray) -> dict[int, Any]:
    """line -> access, of the accesses ``acc`` names, in the order they first appear there."""
    got, first = np.unique(acc, return_index=True)
    return {m.accesses[j].line: m.accesses[j] for j in got[np.argsort(first)].tolist()}


def _blamed(op: Any, m: ScratchMap, hs: list[set[int]], hd: list[set[int]], n: int,
            data: dict, eb: int = 1) -> Check | None:
    """A byte read is right when the thread that loads it shares an element with the one that
    stored it (the tally of the round trip's bytes ``m``:
    :func:`verilayout.audit.ptx_tally.map_wrong_reads`). The moved access is the one whose leaving
    out leaves the fewest wrong reads (then the one that takes the fewest reads with it): the
    counterexample. With no wrong read, bytes
    stored that no one loads blame their store; ``None`` when nothing is wrong."""
    wrong_l, wrong_s, total, first_bad, n_wrong, unwritten = map_wrong_reads(m, hs, hd, n)
    # leave one access out: the wrong reads that remain (a store left out excuses the reads of
    # bytes no store writes: they may be the ones it should have written); fewest first, then the
    # fewest reads left out with it, then the earliest line
    score = {ln: (n_wrong - wrong_l.get(ln, 0) - (wrong_s.get(ln, 0) + unwritten if ln in wrong_s else 0),
                  total.get(ln, 0), 0) for ln in set(wrong_l) | set(wrong_s)}
    unread_writes = None
    if not score:                            # bytes stored that no load reads: each blames its store
        unread_writes = lines, unread = _unread_writes(m)
        got, first, count = np.unique(lines[unread], return_index=True, return_counts=True)
        at = np.flatnonzero(unread)[first]
        for ln, k, c in zip(got.tolist(), at.tolist(), count.tolist()):
            score[ln] = (0, 0, -c)
            first_bad.setdefault(ln, (None, int(m.w_key[k]), int(m.w_thread[k]), m.accesses[int(m.w_acc[k])]))
    if not score:
        return None
    line = min(score, key=lambda ln: (score[ln], ln))
    tied = sorted(ln for ln in score if score[ln] == score[line] and ln != line)
    st_lines, ld_lines = _by_line(m, m.w_acc), _by_line(m, m.r_acc)
    if len(st_lines) == 1 and len(ld_lines) == 1:   # one store, one load: only their difference is known
        tied = [ln for ln in (*st_lines, *ld_lines) if ln != line]
        first_bad.update({ln: (td0, b0, w0, i) for ln, i in (*st_lines.items(), *ld_lines.items())
                          if ln not in first_bad for td0, b0, w0, _i in [first_bad[line]]})
    kinds = {first_bad[ln][3].line: smem_access(first_bad[ln][3])[0] for ln in [line] + tied}
    if tied and len(set(kinds.values())) > 1:     # a store and a load tie: their bytes cannot tell which moved
        data["tied"] = {ln: first_bad[ln][3] for ln in tied[:3]}
    td, b, ts, ins = first_bad[line]
    b = b - (1 << 32) if b >= 1 << 31 else b
    n_bad = wrong_l.get(line, 0) + wrong_s.get(line, 0) or -score[line][2]
    data.update(thread=td, byte=b, writer=ts, instruction=ins.opcode, blamed_bytes=n_bad)
    if td is None:
        what = f"thread {ts} stores byte {b} (relative to the scratch base) that no load of the conversion reads"
    elif ts is None:
        what = f"thread {td} loads byte {b} (relative to the scratch base) that no store of the conversion writes"
    else:
        what = (f"thread {td} loads byte {b} (relative to the scratch base) written by thread {ts}, which "
                f"holds none of thread {td}'s elements")
    if td is None and _inside_scratch(m, line, eb * len(set().union(*hs)), unread_writes):
        # every byte a load reads holds the right element, and the bytes written and never read lie
        # inside the round's scratch (the compiler removed the loads of elements nothing uses): no
        # value is wrong and nothing outside the conversion's scratch is written; a warning
        data["unread_only"] = True
        return Check(".".join(ins.parts[:2]), ins.line, ins.loc, "smem-address", "counterexample", "warning",
                     f"ttg.convert_layout (TTGIR line {op.line}): {what} ({ins.opcode}, line {ins.line}; "
                     f"{n_bad} byte(s) written and never read; every byte a load reads holds its element)", data)
    return Check(".".join(ins.parts[:2]), ins.line, ins.loc, "smem-address", "counterexample", "error",
                 f"ttg.convert_layout (TTGIR line {op.line}): {what} ({ins.opcode}, line {ins.line}; "
                 f"{n_bad} wrong byte(s) involve it)", data)


def _byte_counts(op: Any, pieces: list, m: ScratchMap, hs: list[set[int]],
                 hd: list[set[int]], eb: int, n: int, data: dict) -> Check | None:
    """Each reader loads from each writer exactly the bytes of the elements they share, and all
    of its own elements' bytes; the first thread that does not is the counterexample (every byte
    read was written: :func:`_blamed` found no wrong read)."""
    first_load = next(i for i, _, _ in pieces if smem_access(i)[0] == "load")
    where = (".".join(first_load.parts[:2]), first_load.line, first_load.loc, "smem-address",
             "counterexample", "error")
    wt = m.w_thread[writer_of(m)]
    k = max(n, int(wt.max()) + 1 if len(wt) else 0)
    count = np.bincount(m.r_thread * k + wt, minlength=n * k)[:n * k].reshape(n, k)
    for td in range(n):
        for ts in np.flatnonzero(count[td]).tolist():
            c, want = int(count[td, ts]), eb * len(hs[ts] & hd[td])
            if c != want:
                data.update(thread=td, writer=ts, bytes=c, shared_bytes=want)
                return Check(*where, f"ttg.convert_layout (TTGIR line {op.line}): thread {td} loads {c} bytes "
                             f"written by thread {ts}, but they share {want // eb} element(s) ({want} bytes)", data)
        need, got = eb * len(hd[td]), int(count[td].sum())
        if got != need:
            data.update(thread=td, bytes=got, need=need)
            return Check(*where, f"ttg.convert_layout (TTGIR line {op.line}): thread {td} loads "
                         f"{got} bytes, its {len(hd[td])} elements are {need}", data)
    return None


# ----- scratch rounds tied by dataflow (verilayout.audit.ptx_scratch) ----------------------------

def _settled(out: list[Check], memo: dict, machinery: set[int]) -> set[int]:
    """PTX lines whose bytes a layout check proved (element checks, conversions), and ``machinery``
    (a ``ttg.warp_specialize``'s own accesses, checked by ``audit.ptx_partitions``)."""
    got = set(memo.get(("local_proved",), set())) | set(memo[("claims",)][1]["claimed"]) | machinery
    got |= memo.get(("cvt_decided",), set())       # a conversion's round trip with its verdict
    for c in out:
        if c.status == "proved":
            got.update(c.data.get("instructions", ()) or (c.line,))
    return got


def round_checks(ctx: PtxContext, done: list[Check]) -> list[Check]:
    """``smem-address`` by the write-before-read law of :mod:`verilayout.audit.ptx_scratch` for the
    scratch rounds (stores of one barrier epoch, loads of the next that meet their bytes) holding an
    access no layout check proved (``done``: the conversion checks; the element checks' proofs are
    in ``ctx.memo``); then one ``unchecked`` per source line and direction for the accesses that no
    check at all reached (never silently nothing)."""
    mod, evals, tmod, memo = ctx.ptx, ctx.values, ctx.tmod, ctx.memo
    claims = _claims(mod, evals, tmod, memo)
    n = claims["n"]
    _of, by = claims["epochs"]
    settled = _settled(done, memo, ctx.machinery())
    chained = {i.line for _loc, (_ops, entries) in claims["lines"].items() for ch, _p, _w, _k in entries
               for st, ld in ch for i in st + ld}
    out: list[Check] = []
    reached = set(memo.get(("element_lines",), set())) | chained | {c.line for c in done} | ctx.machinery()
    for stores, loads in rounds(mod, by, claims["atomic"]):
        if all(i.line in settled for i in stores + loads):
            continue
        out.extend(_one_round(stores, loads, evals, tmod, memo, ctx.threads_at((stores + loads)[0].line, n),
                              LazyUses(mod, memo), settled, reached))
    out.extend(tensormap_checks(mod, evals, memo, n, reached))
    out.extend(_untouched(_accesses(mod, memo), reached))
    return out


def tensormap_checks(mod: PtxModule, evals: dict, memo: dict, n: int, reached: set[int]) -> list[Check]:
    """``smem-address`` of the staging of each device-side TMA descriptor (``ttng.tensormap_create``):
    the shared-memory stores of the source line that precede a ``tensormap.cp_fenceproxy`` (PTX ISA,
    tensormap.cp_fenceproxy: copies the 128-byte tensor map at its shared address to global memory),
    since the previous one of the line, write together exactly the 128 bytes at that address (the
    zero fill Triton writes before ``tensormap.replace`` sets the fields). ``reached`` gains the
    stores' lines."""
    out: list[Check] = []
    last: dict[tuple, int] = {}
    for cp in mod.instrs:
        if cp.parts[0] != "tensormap" or "cp_fenceproxy" not in cp.parts or len(cp.args) < 2:
            continue
        key = (cp.func, cp.loc)
        fill = [i for i in mod.instrs if i.func == cp.func and i.loc == cp.loc and last.get(key, 0) < i.line < cp.line
                and (smem_access(i) or ("",))[0] == "store"]
        last[key] = cp.line
        if fill:
            out.append(_tensormap_fill(cp, fill, evals, memo, n))
            reached.update(i.line for i in fill)
    return out


def _tensormap_fill(cp: Instr, fill: list[Instr], evals: dict, memo: dict, n: int) -> Check:
    """The verdict of :func:`tensormap_checks` on one descriptor copy and its fill stores."""
    ev = evals.get(cp.func)
    addr = cp.args[1]
    base = getattr(addr, "base", None)
    first = fill[0]
    data = {"source": "ptx", "instructions": [i.line for i in fill], "tensormap_copy": cp.line}

    def unchecked(why: str) -> Check:
        return Check(".".join(first.parts[:2]), first.line, first.loc, "smem-address", "unchecked", None,
                     f"tensor-map staging (copied at PTX line {cp.line}): bytes not compared: {why}",
                     dict(data, reason=why))

    if ev is None or not isinstance(base, Reg) or not isinstance(addr.offset, int):
        return unchecked("the copy's shared address is not a register plus an immediate")
    a64 = ev.operand(base, 64, at=cp)
    if a64 is None:
        return unchecked("the copy's shared address is not evaluated")
    target = z3.simplify(z3.Extract(31, 0, a64) + addr.offset)
    wrote: dict[int, Instr] = {}
    for ins in fill:
        got = _thread_bytes(ev, ins, n, memo)
        if isinstance(got, str):
            return unchecked(got)
        d = z3.simplify(got[0] - target)
        if not z3.is_bv_value(d):
            return unchecked(f"the store at line {ins.line} is not a constant away from the copied tensor map")
        rel = d.as_long() - (1 << 32) if d.as_long() >= 1 << 31 else d.as_long()
        for s in got[1]:
            for b in s:
                wrote.setdefault(rel + b, ins)
    want = set(range(128))
    extra = sorted(set(wrote) - want)
    if not extra and set(wrote) == want:
        return Check(".".join(first.parts[:2]), first.line, first.loc, "smem-address", "proved", None,
                     f"tensor-map staging: the {len(fill)} store(s) write exactly the 128 bytes that "
                     f"tensormap.cp_fenceproxy (line {cp.line}) copies", data)
    missing = sorted(want - set(wrote))
    bad = wrote[extra[0]] if extra else first
    data.update(byte=extra[0] if extra else missing[0], missing=len(missing), outside=len(extra))
    return Check(".".join(bad.parts[:2]), bad.line, bad.loc, "smem-address", "counterexample", "error",
                 f"tensor-map staging: the stores write {len(extra)} byte(s) outside the 128-byte tensor map that "
                 f"tensormap.cp_fenceproxy (line {cp.line}) copies" + (f" (first: byte {extra[0]} relative to it)"
                 if extra else "") + f" and leave {len(missing)} of its bytes unwritten ({bad.opcode}, line {bad.line})",
                 data)


def _one_round(stores: list[Instr], loads: list[Instr], evals: dict, tmod: Module, memo: dict, n: int,
               uses: LazyUses, settled: set[int], reached: set[int]) -> list[Check]:
    """The check(s) of one candidate round (see :func:`round_checks`); ``reached`` gains the PTX
    lines the round decided."""
    pieces, failed = [], []
    for ins in stores + loads:
        ev = evals.get(ins.func)
        got = _thread_bytes(ev, ins, n, memo) if ev is not None else "no evaluator"
        if isinstance(got, str):
            if smem_access(ins)[0] == "store":
                return _round_unchecked([i for i in loads if i.line not in settled], tmod,
                                        f"a store of the epoch before ({ins.opcode}, line {ins.line}): {got}",
                                        reached)
            failed.append((ins, got))
            continue
        pieces.append((ins, *got))
    out = [_round_unchecked([i], tmod, why, reached) [0] for i, why in failed if i.line not in settled]
    if not any(smem_access(p[0])[0] == "load" for p in pieces):
        return out
    rels = _relative_bases(None, pieces, {}, memo)          # (relative(pieces), each base split once)
    rels = None if isinstance(rels, Check) else rels
    if rels is None:
        return out + _round_unchecked([i for i in loads if i.line not in settled], tmod,
                                      "the accesses' addresses are not a constant apart", reached)
    locs = scratch_locs(tmod)
    stored = {p[0].loc for p in pieces if smem_access(p[0])[0] == "store" and p[0].loc in locs}
    keep = [m or (p[0].loc in stored) for m, p in zip(meets(pieces, rels), pieces)]   # same scratch op's line
    pieces = [p for p, k in zip(pieces, keep) if k]
    rels = [r for r, k in zip(rels, keep) if k]
    mine = [p[0] for p in pieces if smem_access(p[0])[0] == "load" and p[0].line not in settled]
    if not mine:
        return out
    masks = {p[0].line: load_mask(p[0], uses) for p in pieces if smem_access(p[0])[0] == "load"}
    status, data = check_round(pieces, rels, masks, n)
    lines = [p[0].line for p in pieces]
    data.update(source="ptx", instructions=lines)
    reached.update(lines)
    if status == "proved":
        first = next(p[0] for p in pieces if p[0].line not in settled)
        return out + [Check(".".join(first.parts[:2]), first.line, first.loc, "smem-address", "proved", None,
                            f"scratch round ({describe(first, tmod)}): every byte that the {len(mine)} load(s) "
                            f"not proved by a layout read into a used register was written by a store of the epoch "
                            f"before (or by a store before it in its own epoch), for all {n} threads; which element "
                            f"sits in which byte is not checked (the scratch layout is the compiler's); "
                            f"{len(pieces)} instruction(s)", data)]
    by_line = {p[0].line: p[0] for p in pieces}
    for ln in data["culprits"][:4]:
        ins = by_line[ln]
        others = [x for x in data["culprits"] if x != ln]
        out.append(Check(".".join(ins.parts[:2]), ins.line, ins.loc, "smem-address", "counterexample", "error",
                         f"scratch round ({describe(ins, tmod)}): thread {data['thread']} loads byte {data['byte']} "
                         f"(relative to the round's first access) at PTX line {data['line']} that no store of the "
                         f"round wrote ({data['unwritten']} such byte read(s), {data['unread']} byte(s) written "
                         f"and never read); this access ({ins.opcode}, line {ins.line}) moved by one constant "
                         f"would leave {data['left']}" + (f"; lines {others} are as much to blame (a store and a "
                         "load a constant apart cannot be told apart by their bytes)" if others else ""),
                         dict(data, instruction=ins.opcode)))
    return out


def _round_unchecked(loads: list[Instr], tmod: Module, why: str, reached: set[int]) -> list[Check]:
    if not loads:
        return []
    first = loads[0]
    reached.update(i.line for i in loads)
    return [Check(".".join(first.parts[:2]), first.line, first.loc, "smem-address", "unchecked", None,
                  f"scratch round ({describe(first, tmod)}): bytes not compared: {why}",
                  {"source": "ptx", "reason": why, "instructions": [i.line for i in loads]})]


def _untouched(accesses: list[tuple[Instr, tuple]], reached: set[int]) -> list[Check]:
    """One ``unchecked`` per (source line, direction) for the shared-memory accesses (``accesses``:
    :func:`_accesses`) through a register that no check reached (an access at a fixed symbol,
    ``[global_smem]``, is a slot of the compiler's own: the TMEM address ``tcgen05.alloc`` writes,
    a flag; not tensor data)."""
    left: dict[tuple, list[Instr]] = {}
    for ins, acc in accesses:
        if ins.line in reached:
            continue
        addr = address_of(ins)
        if addr is not None and isinstance(addr.base, Reg):
            left.setdefault((ins.func, ins.loc, acc[0]), []).append(ins)
    out = []
    for (_f, _loc, kind), instrs in left.items():
        first = instrs[0]
        why = (f"no TTGIR op is tied to these {kind}s and no scratch round holds them (their bytes are "
               "read or written across more than one barrier)")
        out.append(Check(".".join(first.parts[:2]), first.line, first.loc, "smem-address", "unchecked", None,
                         f"{len(instrs)} shared-memory {kind}(s) (PTX lines {[i.line for i in instrs][:6]}"
                         f"{' ...' if len(instrs) > 6 else ''}): bytes not compared: {why}",
                         {"source": "ptx", "reason": "untied", "instructions": [i.line for i in instrs]}))
    return out
