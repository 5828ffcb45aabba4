"""Audit the lowering: prove from a kernel's PTX that each ``wgmma.mma_async`` reads the shared
operand layout its TTGIR planned (``X.ptx`` beside ``X.ttgir``, as in Triton's cache).

How: every register a descriptor operand depends on is evaluated symbolically over z3 bit-vectors
(``%tid``, kernel parameters, loads and registers defined more than once, i.e. loop-carried, are
free symbols; ``global_smem`` is the shared-memory base, a symbol assumed 1024-byte aligned). For
the ``i``-th wgmma of a ``ttng.warp_group_dot`` (matched by the source line ``.loc`` records), with
the descriptor the TTGIR audit derived for its K-block ``k`` (``derived_k``, base address 0):

* fields: the PTX descriptor's bits other than the 14-bit start address are one constant ``H``
  for every value of the symbols, and ``H | start(derived_k)`` is proved to read K-block ``k`` of
  the operand layout (``prove.wgmma.check_descriptor``): LBO, SBO, swizzle mode and the operand order;
* K-block advance: ``start_i - start_0 == start(derived_k) - start(derived_0)`` (mod 2^14) for every
  value of the symbols;
* base: ``start_0 - start(derived_0)`` is a multiple of the swizzle pattern's repeat (in 16-byte
  units) whenever the shared-memory base is 1024-byte aligned (the assumption is reported).

A descriptor the evaluator cannot reduce (an unmodelled instruction on its path) gives
``unknown``, never ``proved``.

>>> v = _Eval(parse_ptx(".version 8.7\\n.visible .entry f()\\n{\\nmov.b32 %r1, global_smem;\\n"
...                      "add.s32 %r2, %r1, 16;\\nbfe.u32 %r3, %r2, 4, 14;\\n}"))
>>> str(z3.simplify(v.reg("%r3") - z3.Extract(31, 0, z3.LShR(z3.ZeroExt(32, SMEM), 4)) & 0x3FFF)) != ""
True
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np
import z3

from verilayout.audit.model import Check, FileReport
from verilayout.audit.ptx_elements import convert_checks, element_checks
from verilayout.audit.ptx_smem import smem_checks, values_at
from verilayout.audit.ptx_wgmma import wgmma_checks_without_plan
from verilayout.audit.ttgir import audit_module, layout_shape
from verilayout.core.linear_layout import LinearLayout
from verilayout.errors import LayoutError
from verilayout.frontends.ptx import Instr, parse_ptx
from verilayout.frontends.triton import attr_to_linear
from verilayout.frontends.ttgir import Module, parse_module
from verilayout.prove.ptx_values import SMEM, Prover, PtxValues as _Eval, constant, decide_claim
from verilayout.prove.wgmma import check_descriptor

#: The shared-memory base (``global_smem``), 32 bits.
SMEM_ALIGNMENT = 1024
SMEM_BELOW = 1 << 17
ASSUMPTIONS = (f"the dynamic shared-memory base (global_smem) is {SMEM_ALIGNMENT}-byte aligned and below "
               f"{SMEM_BELOW >> 10} KB (an sm_90 CTA has at most 227 KB, so its shared addresses stay below 2^18)",
               "registers written more than once (loop-carried) and values loaded from memory are "
               "unconstrained symbols")
SMEM_ASSUMPTIONS = ("shared-memory bank figures from PTX: warp 0, the first iteration of each loop "
                    "(loop-carried registers at their entry value), lane addresses exact relative to lane 0, "
                    "the access's base 128-byte aligned",)
#: every base the assumption allows (aligned, below the bound): what ``_constant`` enumerates
_SMEM_BASES = np.arange(0, SMEM_BELOW, SMEM_ALIGNMENT, dtype=np.uint64)
_START = 0x3FFF
_FIELDS = ~0xFFFF & ((1 << 64) - 1)     # LBO, SBO, base offset, layout type: bits 16-63
_BASE_OFFSET = 7 << 49
# swizzle code -> swizzle pattern repeat in 16-byte units: sm_90 layout type (bits 62-63: 1 = 128B,
# 2 = 64B, 3 = 32B); sm_100 swizzle mode (bits 61-63: 1 = 128B with 32B atoms, 2 = 128B, 4 = 64B, 6 = 32B)
_REPEATS = {"sm_90": {0: 1, 1: 64, 2: 32, 3: 16}, "sm_100": {0: 1, 1: 64, 2: 64, 4: 32, 6: 16}}


NO_PLAN_ASSUMPTIONS = ("without a TTGIR: the shared-memory base (Triton's global_smem, or the module's one "
                      f".shared variable) is {SMEM_ALIGNMENT}-byte aligned and the largest offset the kernel adds "
                      "to it stays inside the 227 KB of an sm_90 CTA (each proof states the bound it used)",
                      "wgmmas between a wgmma.fence and a wgmma.commit_group that accumulate into the same "
                      "registers are successive K-blocks, in program order",
                      "loop-carried registers are free symbols, bounded where an invariant is proved by "
                      "induction over their reaching definitions")


def _smem_names(mod) -> tuple[str, ...]:
    """Names whose address is the shared-memory base: Triton's ``global_smem``, else the module's
    only ``.shared`` variable (nvcc's ``extern __shared__`` array)."""
    if "global_smem" in mod.shared or len(mod.shared) != 1:
        return ("global_smem",)
    return tuple(mod.shared)


def _swizzle_code(hi: int, arch: str) -> int:
    return (hi >> 62) & 3 if arch == "sm_90" else (hi >> 61) & 7


def _ttgir_operand_layout(mod: Module, line: int, idx: int) -> tuple[Any, LinearLayout] | None:
    op = next((o for o in mod.ops if o.line == line), None)
    if op is None or idx >= len(op.operand_types):
        return None
    t = mod.type_of(op.operand_types[idx])
    return t, attr_to_linear(t.encoding, layout_shape(t))


def _prove(claim: z3.BoolRef, assume: z3.BoolRef | None = None, timeout_ms: int = 5000,
           prover: Prover | None = None) -> tuple[str, Any]:
    if prover is not None:
        return prover.decide(claim, assume, timeout_ms)
    return decide_claim(claim, assume, timeout_ms)


def _smem_assumption() -> z3.BoolRef:
    return z3.And(z3.URem(SMEM, SMEM_ALIGNMENT) == 0, z3.ULT(SMEM, SMEM_BELOW))


def _constant(e: z3.BitVecRef, cache: dict | None = None, prover: Prover | None = None) -> int | None:
    """``e``'s value if it is one constant for every value of its symbols (under the assumptions);
    ``cache``: the answers already found in this file; ``prover``: the function's solvers. When the
    shared-memory base is ``e``'s only symbol, by enumeration: the assumption admits exactly the
    ``SMEM_BELOW / SMEM_ALIGNMENT`` bases of ``_SMEM_BASES``, and ``e`` is evaluated at each.

    >>> _constant(z3.Extract(31, 17, SMEM + 1023) + 1), _constant(z3.Extract(31, 17, SMEM + 1024))
    (1, None)
    """
    vals = values_at(e, str(SMEM), _SMEM_BASES)
    if vals is not None:
        return vals[0] if all(v == vals[0] for v in vals) else None
    return constant(e, _smem_assumption(), cache, prover)


def _wgmma_checks(ev: _Eval, wg: list[Instr], dot: Any, tmod: Module, mma_checks: list[Check],
                  path: str, arch: str = "sm_90") -> list[Check]:
    out = []
    by_operand = {c.data.get("operand"): c for c in mma_checks if c.line == dot.line}
    for slot, name in ((1, "A"), (2, "B")):
        tcheck = by_operand.get(name)
        descs = (tcheck.data.get("descriptors") if tcheck is not None else None) or []
        if tcheck is None or not descs or wg[0].operands[slot].startswith(("{", "[")):
            continue                                   # register / tensor-memory operand, or nothing derived
        if arch == "sm_100":
            # one tcgen05.mma covers the whole M (64-256 rows) of a K-block: the plan's MN block 0
            # descriptor (64 rows, the SBO step then repeats) stands for the instruction
            descs = [x for x in descs if x["mn_block"] == 0]
        per_group = len(descs)
        if len(wg) % per_group == 0:
            chunks = [(wg[c:c + per_group], descs) for c in range(0, len(wg), per_group)]
        elif per_group % len(wg) == 0:
            # several warpgroups: each issues the K-blocks of its own MN block, whose offset comes from
            # the warp id (a free symbol that cancels in the K-block advance): compare with MN block 0
            chunks = [(wg, descs[:len(wg)])]
        else:
            out.append(_check(wg[0], path, name, "unknown", "note", f"operand {name}: {len(wg)} MMA "
                              f"instructions cannot be matched to the {per_group} derived K-block descriptors",
                              {"reason": "instruction count"}))
            continue
        got = _ttgir_operand_layout(tmod, dot.line, 0 if name == "A" else 1)
        if got is None:
            continue
        _t, ll = got
        for part, idx in chunks:                       # each copy of the loop body has its own base
            out.extend(_operand_checks(ev, part, slot, name, idx, tcheck, ll, path, arch))
    return out


def _operand_checks(ev: _Eval, wg: list[Instr], slot: int, name: str, idx: list[dict], tcheck: Check,
                    ll: LinearLayout, path: str, arch: str = "sm_90") -> list[Check]:
    out = []
    d = tcheck.data
    mn_dim = 0 if name == "A" else 1
    t_shape = d["shape"]
    mn = 64 if name == "A" and t_shape[0] >= 64 else min(t_shape[mn_dim], 256)
    exprs = [ev.operand(i.operands[slot], 64, at=i) for i in wg]
    # the base each instruction implies: its start minus the start the plan derives at base 0
    starts: list[tuple[int, Instr, z3.BitVecRef, dict, int]] = []
    for i, (ins, e, want) in enumerate(zip(wg, exprs, idx)):
        derived = int(want["descriptor"], 16)
        data = {"source": "ptx", "operand": name, "instruction": i, "k_block": want["k_block"],
                "mn_block": want["mn_block"], "ttgir_descriptor": want["descriptor"]}
        if e is None:
            out.append(_check(ins, path, name, "unknown", "note", f"operand {name}: the descriptor "
                              f"{ins.operands[slot]} is not a register the evaluator reads", data))
            continue
        hi = _constant(e & z3.BitVecVal(_FIELDS, 64), ev.const_cache, ev.prover)
        if hi is None:
            out.append(_check(ins, path, name, "unknown", "note", f"operand {name}, {ins.opcode.split('.')[0]} {i}: the descriptor's "
                              "LBO/SBO/swizzle bits are not one constant (opaque values on its path: "
                              f"{sorted(ev.opaque)[:3]})", data))
            continue
        data["ptx_fields"] = f"{hi:#018x}"
        if _swizzle_code(hi, arch) == 0 and hi & _BASE_OFFSET:
            # PTX ISA (matrix descriptor, bits 49-51): the base offset "is valid for all swizzling modes
            # except no-swizzle mode"; Triton 3.9 sets it on unswizzled operands. Reported, then ignored.
            out.append(_check(ins, path, name, "counterexample", "warning", f"operand {name}, {ins.opcode.split('.')[0]} {i}: base "
                              f"offset {(hi & _BASE_OFFSET) >> 49} is set on an unswizzled operand; the PTX ISA "
                              "defines the field for the swizzling modes (0 for canonical layouts), so how the "
                              "hardware treats it here is undocumented (the check goes on without it)", dict(data)))
            hi &= ~_BASE_OFFSET
        value = hi | (derived & _START)
        v = check_descriptor(value, ll, dtype=d["dtype"], major=d["major"], k_block=want["k_block"], mn=mn,
                   mn_block=want["mn_block"], mn_dim=mn_dim, arch=arch)
        if v.status != "proved":
            out.append(_check(ins, path, name, v.status, "error" if v.status == "counterexample" else "note",
                              f"operand {name}, {ins.opcode.split('.')[0]} {i} (K-block {want['k_block']}): the PTX descriptor's fields "
                              f"{hi:#018x} do not read the planned layout {d['layout']}: {v.reason} "
                              f"(the TTGIR plan derives {want['descriptor']})",
                              dict(data, counterexample=v.counterexample)))
            continue
        base = z3.Extract(13, 0, e) - z3.BitVecVal(derived & _START, 14)
        starts.append((i, ins, base, data, _REPEATS[arch].get(_swizzle_code(hi, arch), 1)))
    out.extend(_start_checks(starts, name, path, ev.prover))
    return out


def _start_checks(starts: list, name: str, path: str, prover: Prover | None = None) -> list[Check]:
    """Every instruction must imply the same operand base (its start minus the planned K-block
    offset); the base most instructions agree on is the reference, and it must sit on the swizzle
    repeat under the shared-memory assumption."""
    groups: list[list] = []
    for item in starts:
        for g in groups:
            if _prove(item[2] == g[0][2], prover=prover)[0] == "proved":
                g.append(item)
                break
        else:
            groups.append([item])
    if not groups:
        return []
    ref = max(groups, key=len)
    out = []
    rep = ref[0][4]
    bases = values_at(z3.ZeroExt(18, ref[0][2]), str(SMEM), _SMEM_BASES)    # every base the assumption allows
    if bases is not None:
        aligned = "proved" if all(b % rep == 0 for b in bases) else "counterexample"
    else:
        aligned, _ = _prove(z3.URem(z3.ZeroExt(18, ref[0][2]), rep) == 0, _smem_assumption(), prover=prover)
    for g in groups:
        for i, ins, base, data, _mode in g:
            if g is ref:
                ok = aligned == "proved"
                data = dict(data, assumption=ASSUMPTIONS[0])
                out.append(_check(ins, path, name, "proved" if ok else "unknown", None if ok else "note",
                                  f"operand {name}, {ins.opcode.split('.')[0]} {i} (K-block {data['k_block']}): fields read the planned "
                                  "layout and the start address is the planned K-block's"
                                  + (f" at a {rep * 16}-byte-aligned base" if ok else "; the base is not proved "
                                     f"aligned to the {rep * 16}-byte swizzle repeat (free values on its path)"),
                                  data))
                continue
            s = z3.Solver()
            s.add(_smem_assumption())
            s.check()
            off = s.model().eval(base - ref[0][2], model_completion=True).as_long() if s.check() == z3.sat else None
            data = dict(data, ptx_offset_bytes=(off * 16) if off is not None else None)
            out.append(_check(ins, path, name, "counterexample", "error",
                              f"operand {name}, {ins.opcode.split('.')[0]} {i} (K-block {data['k_block']}): its descriptor starts "
                              f"{(off or 0) * 16} bytes away from where the plan puts K-block {data['k_block']} "
                              f"relative to the other {len(ref)} instruction(s) (the TTGIR plan derives "
                              f"{data['ttgir_descriptor']} at base 0)", data))
    return out


def _check(ins: Instr, path: str, operand: str, status: str, severity: str | None, message: str,
           data: dict) -> Check:
    return Check(ins.opcode.split(".")[0] + "." + ins.opcode.split(".")[1], ins.line, ins.loc,
                 "mma-descriptor", status, severity, message, dict(data, source="ptx"))


def audit_ptx_text(text: str | bytes, path: str = "<ptx>", ttgir: str | bytes | None = None,
                   ttgir_checks: tuple[Check, ...] = (),
                   no_plan: str = "no TTGIR beside this PTX (X.ttgir)", ttgir_module: Module | None = None) -> FileReport:
    """The PTX checks of one file (see the module docstring); ``ttgir``: the TTGIR beside it and
    ``ttgir_checks`` its audit's checks (the plan). Without a TTGIR each wgmma is checked on its own
    (``verilayout.audit.ptx_wgmma``: valid canonical descriptors, shape, K-block advance) and each
    tcgen05.mma is listed unchecked."""
    mod = parse_ptx(text)
    checks: list[Check] = []
    wgmmas = [i for i in mod.instrs if i.opcode.startswith("wgmma.mma_async")]
    tc05 = [i for i in mod.instrs if i.opcode.startswith("tcgen05.mma")]
    if ttgir is None:
        # no plan: each wgmma's own descriptors and K-block chain (audit.ptx_wgmma); tcgen05 unchecked
        evals = {f: _Eval(mod, f, smem_names=_smem_names(mod)) for f in mod.functions}
        checks.extend(wgmma_checks_without_plan(mod, evals, path))
        for i in tc05:
            checks.append(_check(i, path, "?", "unchecked", None, f"{i.opcode}: {no_plan}: the plan to "
                                 "compare with is missing", {"reason": "no ttgir"}))
        return FileReport(path, mod.target, None, tuple(checks), assumptions=NO_PLAN_ASSUMPTIONS)
    tmod = ttgir_module if ttgir_module is not None else parse_module(ttgir)
    by_func: dict[str, _Eval] = {}
    for ops, instrs, arch in ((("ttng.warp_group_dot",), wgmmas, "sm_90"),
                              (("ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled"), tc05, "sm_100")):
        dots = [o for o in tmod.ops if o.name in ops]
        mma_checks = [c for c in ttgir_checks if c.check == "mma-descriptor" and c.op in ops]
        matched: set[int] = set()
        for dot in dots:
            wg = [i for i in instrs if i.loc == dot.loc and i.line not in matched]
            if not wg:
                continue
            matched.update(i.line for i in wg)
            ev = by_func.setdefault(wg[0].func, _Eval(mod, wg[0].func))
            try:
                checks.extend(_wgmma_checks(ev, wg, dot, tmod, mma_checks, path, arch))
                if arch == "sm_100":
                    checks.extend(_idesc_checks(ev, wg, mma_checks, dot, path))
            except LayoutError as e:
                checks.append(_check(wg[0], path, "?", "unchecked", None, f"{wg[0].opcode}: {e}",
                                     {"reason": str(e)}))
        for i in instrs:
            if i.line not in matched:
                checks.append(_check(i, path, "?", "unchecked", None, f"no {' / '.join(ops)} of the TTGIR has this "
                                     f"instruction's source line ({i.loc})", {"reason": "unmatched"}))
    first = {f: _Eval(mod, f, first_iteration=True) for f in mod.functions}
    offsets: dict = {}                                  # lane offsets, shared by the two checks
    checks.extend(smem_checks(mod, first, ttgir_checks, path, offsets))
    checks.extend(element_checks(mod, first, tmod, path, offsets))
    checks.extend(convert_checks(mod, first, tmod, path, offsets))
    return FileReport(path, mod.target, None, tuple(checks), assumptions=ASSUMPTIONS + SMEM_ASSUMPTIONS)


def _idesc_checks(ev: _Eval, instrs: list[Instr], mma_checks: list[Check], dot: Any, path: str) -> list[Check]:
    """tcgen05 ``kind::f16``/``tf32``/``f8f6f4`` instruction descriptor (PTX ISA, "Instruction
    descriptor"): bit 15 A transposed (MN-major), bit 16 B transposed, bits 17-22 N >> 3, bits 24-28
    M >> 4; compared with the majors the plan derived and the operands' M and N extents."""
    out = []
    plan = {c.data.get("operand"): c.data for c in mma_checks if c.line == dot.line}
    for ins in instrs:
        kind = next((p for p in ins.parts if p.startswith("kind::")), "")
        if kind not in ("kind::f16", "kind::tf32", "kind::f8f6f4") or len(ins.operands) < 4:
            continue
        e = ev.operand(ins.operands[3], 32, at=ins)
        val = _constant(e, ev.const_cache, ev.prover) if e is not None else None
        data = {"source": "ptx", "operand": "idesc", "kind": kind}
        if val is None:
            out.append(Check("tcgen05.mma", ins.line, ins.loc, "mma-instruction", "unknown", "note",
                             "the instruction descriptor is not one constant", data))
            continue
        m, n = ((val >> 24) & 0x1F) * 16, ((val >> 17) & 0x3F) * 8
        got = {"A": "MN" if (val >> 15) & 1 else "K", "B": "MN" if (val >> 16) & 1 else "K"}
        data.update(idesc=f"{val:#010x}", m=m, n=n, a_major=got["A"], b_major=got["B"])
        wrong = [f"operand {o} is read {got[o]}-major, the plan stores it {plan[o]['major']}-major"
                 for o in ("A", "B") if o in plan and plan[o].get("major") and plan[o]["major"] != got[o]]
        if "B" in plan and plan["B"].get("shape") and n != min(plan["B"]["shape"][1], 256):
            wrong.append(f"N = {n}, the B operand has {plan['B']['shape'][1]} columns")
        if "A" in plan and plan["A"].get("shape") and m not in (min(plan["A"]["shape"][0], 128), 64):
            wrong.append(f"M = {m}, the A operand has {plan['A']['shape'][0]} rows")
        if wrong:
            out.append(Check("tcgen05.mma", ins.line, ins.loc, "mma-instruction", "counterexample", "error",
                             f"instruction descriptor {val:#010x}: " + "; ".join(wrong), data))
        else:
            out.append(Check("tcgen05.mma", ins.line, ins.loc, "mma-instruction", "proved", None,
                             f"instruction descriptor {val:#010x}: M {m}, N {n}, A {got['A']}-major, "
                             f"B {got['B']}-major, as planned", data))
    return out


def audit_ptx_file(path: str) -> FileReport:
    """Audit one ``.ptx`` file, paired with the ``.ttgir`` of the same stem beside it (Triton's cache
    keeps both), whose own audit gives the plan.

    >>> audit_ptx_file("/nonexistent.ptx")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: /nonexistent.ptx: cannot read: No such file or directory
    """
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise LayoutError(f"{path}: cannot read: {e.strerror}") from None
    stem = path[:-4] if path.endswith(".ptx") else path
    ttgir, plan, why, tmod = None, (), "no TTGIR beside this PTX (X.ttgir)", None
    if os.path.isfile(stem + ".ttgir"):
        try:
            with open(stem + ".ttgir", "rb") as f:
                ttgir = f.read()
            tmod = parse_module(ttgir)           # parsed once: the plan's audit and the matching share it
            plan = audit_module(tmod, stem + ".ttgir").checks
        except RecursionError:
            ttgir, why = None, f"the TTGIR beside it cannot be read ({stem}.ttgir: nested too deeply)"
        except (OSError, LayoutError) as e:
            ttgir, why = None, f"the TTGIR beside it cannot be read ({stem}.ttgir: {e})"
    try:
        return audit_ptx_text(data, path, ttgir, plan, why, tmod if ttgir is not None else None)
    except LayoutError as e:
        raise LayoutError(f"{path}: {e}") from None
