"""tcgen05.ld / tcgen05.st messages against the TTGIR's tensor-memory plan (check ``tmem-message``).

A ``ttng.tmem_load`` (``tmem_store``) whose register layout the TTGIR audit proved to be what
``tcgen05.ld`` (``st``) messages move (check ``tmem-layout``) is lowered to one or more messages.
The PTX messages of one op are those of its source line and direction; messages whose TMEM
addresses are one constant apart for every value of the kernel's symbols read one allocation (one
base: the address ``tcgen05.alloc`` wrote, an opaque load in the PTX), and a run of them in program
order is one copy of the op (a peeled or unrolled loop body holds several).

Message ``k`` of a copy holds the thread's 32-bit registers ``k R .. (k + 1) R - 1``, where ``R``
is the message's registers per thread (the shape's registers times ``.num``, PTX ISA
"tcgen05.ld"), so its TMEM address must sit, relative to message 0's, where the layouts put
register ``k R`` of thread 0 of warp 0: ``(lane delta << 16) + column delta`` (PTX ISA, "Tensor
Memory addressing": bits 31-16 the lane, 15-0 the 32-bit column); thread 0's first register of
every message shape is the message's first lane and column (PTX ISA, the tcgen05 data-movement
shape figures). That message ``k`` carries the layout's registers ``k R ..`` in program order is
how Triton 3.9's lowering splits a copy (an inference from its output, corroborated on every
kernel of the corpora here: a lowering that ordered them otherwise would show here as an error).

Law: for every copy of the op and every message ``k``: ``taddr_k - taddr_0 == (dl << 16) + dc``
with ``(dl, dc) = conv(register = k R p) - conv(register = 0)`` at lane 0, warp 0
(``conv = prove.tmem.conversion``: register, lane, warp -> TMEM lane, column; ``p`` elements
per 32-bit cell, the column then divided by ``p``). A copy whose messages do not cover the op's
registers, or whose addresses are not one constant apart, is ``unchecked``/``unknown`` with the
reason; a wrong offset is an error at the message's PTX line naming the message, the register and
both addresses.

>>> from verilayout.frontends.ptx import make_instr
>>> message_registers(make_instr("tcgen05.ld.sync.aligned.16x128b.x4.b32", ("{%r1}", "[%r2]"), 1).parts)
8
"""
from __future__ import annotations

from typing import Any

import z3

from verilayout.audit.model import Check
from verilayout.audit.ptx_context import PtxContext
from verilayout.core.linear_layout import LinearLayout
from verilayout.errors import LayoutError
from verilayout.frontends.mlir import elem_bit_width
from verilayout.frontends.triton import attr_to_linear
from verilayout.frontends.ttgir import Module
from verilayout.hw.nvidia.ptx_model import Addr, Instr
from verilayout.hw.nvidia.tmem import SHAPES, Message
from verilayout.prove.ptx_values import constant
from verilayout.prove.tmem import conversion

#: TTGIR op -> the PTX message it lowers to (a ``tmem_alloc`` with a source stores it)
_OPS = {"ttng.tmem_load": "ld", "ttng.tmem_store": "st", "ttng.tmem_alloc": "st"}

#: the rule each verdict cites
RULE = ("message k of a copy holds the thread's 32-bit registers k*R.. (R: the message's registers per "
        "thread, PTX ISA tcgen05.ld/st); its TMEM address (lane << 16 | column) sits where the layouts put "
        "register k*R of thread 0; messages in program order (Triton 3.9's lowering, an inference)")


def message_registers(parts: tuple[str, ...]) -> int | None:
    """32-bit registers per thread of a ``tcgen05.ld/st.<shape>.x<num>`` opcode, given its dotted
    parts (``Instr.parts``); None for another opcode (the shape table is
    :class:`verilayout.hw.nvidia.tmem.Message`'s).

    >>> message_registers(("tcgen05", "st", "sync", "aligned", "32x32b", "x64", "b32"))
    64
    >>> message_registers(("ld", "shared", "b32")) is None
    True
    """
    shape = next((p for p in parts if p in SHAPES), None)
    num = next((p for p in parts if p[:1] == "x" and p[1:].isdigit()), None)
    if shape is None or num is None or parts[:1] != ("tcgen05",):
        return None
    try:
        return Message(shape, int(num[1:]), int(num[1:]) if shape == "16x32bx2" else None).registers
    except LayoutError:
        return None


def _address(ins: Instr) -> Addr | None:
    """The TMEM address operand of a tcgen05.ld (``{regs}, [taddr]``) or st (``[taddr], ...``)."""
    return next((a for a in ins.args if isinstance(a, Addr)), None)


def _plans(tmod: Module, ttgir_checks: tuple[Check, ...]) -> list[tuple[Any, str, dict]]:
    """(op, direction, its proved ``tmem-layout`` data) of each TMEM load/store the plan proved."""
    proved = {c.line: c.data for c in ttgir_checks if c.check == "tmem-layout" and c.status == "proved"}
    return [(op, _OPS[op.name], proved[op.line]) for op in tmod.ops if op.name in _OPS and op.line in proved
            and (op.name != "ttng.tmem_alloc" or op.operands)]


def expected_offsets(op: Any, regs_per_message: int) -> list[int] | str:
    """Each message's TMEM address relative to message 0's (``lane << 16`` plus the 32-bit column)
    when ``op``'s registers go in messages of ``regs_per_message`` registers a thread, or why they
    cannot be computed (one copy is as many messages as the layout's registers fill)."""
    try:
        reg_t = next(t for t in op.in_types + op.out_types if t.is_tensor)
        mem_t = next(t for t in op.in_types + op.out_types if t.is_memdesc)
        rt, mt = reg_t.read(), mem_t.read()
        reg = attr_to_linear(rt.encoding, tuple(rt.shape))
        tm = attr_to_linear(mt.encoding, tuple(mt.shape))
    except (StopIteration, LayoutError, KeyError, ValueError) as e:
        return f"the op's layouts could not be read ({e})"
    if "row" not in tm.in_dims:
        return "the memory side is not a tensor-memory layout"
    tmem = LinearLayout({"lane": tm.bases["row"], "col": tm.bases["col"]}, tm.out_dims, require_surjective=False)
    pack = max(1, 32 // (elem_bit_width(mt.elem) or 32))
    total = reg.in_dims.get("register", 1)
    if total % (regs_per_message * pack):
        return (f"messages of {regs_per_message} register(s) do not hold the layout's {total} element(s) per "
                f"thread ({pack} a register)")
    conv = conversion(reg, tmem)
    at = [conv.apply({"register": k * regs_per_message * pack, "lane": 0, "warp": 0,
                      **{d: 0 for d in conv.in_dims if d not in ("register", "lane", "warp")}})
          for k in range(total // (regs_per_message * pack))]
    return [((a["lane"] - at[0]["lane"]) << 16) + (a["col"] - at[0]["col"]) // pack for a in at]


def _copies(instrs: list[Instr], ev_of: dict, memo: dict) -> tuple[list[list[tuple[Instr, int]]], str | None]:
    """The messages grouped by base (addresses one constant apart), each with its offset from the
    group's first; or why an address could not be read."""
    groups: list[tuple[z3.BitVecRef, list[tuple[Instr, int]]]] = []     # (first address, messages)
    for ins in instrs:
        ev = ev_of.get(ins.func)
        addr = _address(ins)
        e = ev.operand(addr.base, 32, at=ins) if ev is not None and addr is not None else None
        if e is None:
            return [], f"the TMEM address of PTX line {ins.line} is not a register the evaluator reads"
        e = e + addr.offset
        for first, g in groups:
            key = ("tmem", z3.simplify(e - first).sexpr())
            if key not in memo:
                memo[key] = constant(e - first)
            if memo[key] is not None:
                g.append((ins, memo[key]))
                break
        else:
            groups.append((e, [(ins, 0)]))
    return [g for _, g in groups], None


def _check(op: Any, ins: Instr, status: str, severity: str | None, message: str, data: dict) -> Check:
    return Check(".".join(ins.parts[:2]), ins.line, ins.loc, "tmem-message", status, severity,
                 f"{op.name} (TTGIR line {op.line}): {message}", dict(data, source="ptx", ttgir_line=op.line, rule=RULE))


def _copy_checks(op: Any, copy: list[tuple[Instr, int]], want: list[int]) -> list[Check]:
    """One check per message of one copy: proved, or an error naming the message and both offsets."""
    base = copy[0][1]
    out = []
    for k, ((ins, got), w) in enumerate(zip(copy, want)):
        rel = (got - base) % (1 << 32)
        data = {"message": k, "expected_offset": w, "ptx_offset": rel}
        if rel == w % (1 << 32) and len(copy) == 1:
            out.append(_check(op, ins, "proved", None, "one message holds all of each thread's registers of the "
                              "layout (its shape and .num cover them)", data))
        elif rel == w % (1 << 32):
            out.append(_check(op, ins, "proved", None, f"message {k} of {len(copy)} addresses TMEM lane "
                              f"+{w >> 16}, column +{w & 0xFFFF} from the copy's first, where the layouts put its "
                              "first register", data))
        else:
            out.append(_check(op, ins, "counterexample", "error", f"message {k} of {len(copy)} (its first register "
                              f"is register {k} * R of each thread) addresses TMEM lane +{rel >> 16}, column "
                              f"+{rel & 0xFFFF} from the copy's first message, but the layouts put that register at "
                              f"lane +{w >> 16}, column +{w & 0xFFFF}", data))
    return out


def tmem_message_checks(ctx: PtxContext) -> list[Check]:
    """The ``tmem-message`` checks of one PTX file against its TTGIR (see the module docstring): one
    per message of each copy of each TMEM load/store the plan (``ctx.plan``) proved; the messages of
    a line no proved op of that direction owns get no check here (the TTGIR's ``tmem-layout`` speaks
    for them). The message offsets are memoized apart from ``ctx.memo``."""
    mod, ev_of, tmod, ttgir_checks, memo = ctx.ptx, ctx.values, ctx.tmod, ctx.plan, {}
    by_line: dict[tuple[str, str], list[Instr]] = {}
    for ins in mod.instrs:
        if ins.head == "tcgen05" and len(ins.parts) > 1 and ins.parts[1] in ("ld", "st") and ins.loc:
            by_line.setdefault((ins.loc, ins.parts[1]), []).append(ins)
    plans = _plans(tmod, ttgir_checks)
    out: list[Check] = []
    for (loc, kind), instrs in sorted(by_line.items(), key=lambda x: x[1][0].line):
        ops = [op for op, d, _ in plans if d == kind and op.loc == loc]
        if not ops:
            continue
        out.extend(_line_checks(ops, instrs, ev_of, memo))
    return out


def _line_checks(ops: list, instrs: list[Instr], ev_of: dict, memo: dict) -> list[Check]:
    """The checks of the messages of one source line and direction against its ops: each copy goes
    to the op whose layouts it matches (same message count and offsets); one op takes every copy."""
    by_opcode: dict[str, list[Instr]] = {}
    for ins in instrs:                       # one op's messages share their shape and .num
        by_opcode.setdefault(ins.opcode, []).append(ins)
    out = []
    for same in by_opcode.values():
        copies, why = _copies(same, ev_of, memo)
        if why is not None:
            out.append(_check(ops[0], same[0], "unknown", "note", why, {"reason": "address"}))
            continue
        for group in copies:
            runs = _runs(group, ops, message_registers(group[0][0].parts))
            if isinstance(runs, str):
                out.append(_check(ops[0], group[0][0], "unchecked", None, runs, {"reason": "messages"}))
                continue
            for op, copy, want in runs:
                out.extend(_copy_checks(op, copy, want))
    return out


def _runs(group: list[tuple[Instr, int]], ops: list, r: int | None) -> list[tuple] | str:
    """``group`` split into copies of one of ``ops`` (runs of its message count, in program order),
    each with the op and its expected offsets; the op whose offsets every run matches, else the one
    op whose message count fits (its verdicts, errors included), else why none is chosen."""
    if r is None or any(message_registers(i.parts) != r for i, _ in group):
        return "the messages of this line differ in shape or .num"
    fits = []
    for op in ops:
        want = expected_offsets(op, r)
        if isinstance(want, str) or len(group) % len(want):
            continue
        n = len(want)
        runs = [(op, group[i:i + n], want) for i in range(0, len(group), n)]
        fits.append((op, runs, all((x[1] - g[0][1]) % (1 << 32) == y % (1 << 32) for _, g, w in runs
                                   for x, y in zip(g, w))))
    exact = [runs for _, runs, ok in fits if ok]
    if exact:
        return exact[0]
    if len(fits) == 1:                       # the one op these messages can be: its verdicts, errors included
        return fits[0][1]
    return (f"{len(group)} message(s) of {r} register(s) match none of the {len(ops)} TMEM op(s) of this line "
            "by count and offsets")
