"""The ``bank-conflicts`` checks of a TTGIR module (``ttg.local_alloc`` with a source,
``ttg.local_store``, ``ttg.local_load``, ``ttg.async_copy_global_to_local``): wavefronts per
instruction of the widest ``ld/st.shared`` both layouts allow against one per phase (NVIDIA,
:mod:`verilayout.prove.banks`), LDS cycles per instruction (AMD, ``hw/amd/lds``; gfx950's
transposing reads, :mod:`verilayout.prove.lds_tr`); a conflict carries its witness, the best swizzle
for the access and, per buffer, the best layout for all its accesses (:func:`attach_joint`).

Law: each access yields one ``bank-conflicts`` check: ``proved`` only when its wavefronts are the
ideal; a conflict is a ``warning`` (the kernel is correct, only slower); a layout that cannot be
read, a shape mismatch or an unaligned subslice is ``unchecked`` with the reason.

>>> from verilayout.audit.ttgir import EXAMPLE, audit_text
>>> [c.data["wavefronts"] for c in audit_text(EXAMPLE, "ex.ttgir").checks if c.check == "bank-conflicts"]
[16]
"""
from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from types import SimpleNamespace
from typing import Any, Callable

from verilayout.audit.advice import gluon_code, joint_layout
from verilayout.audit.model import Check
from verilayout.audit.ttgir_context import (SUBSLICE_RULE, VIEWS, AuditContext, internal_message, internal_unchecked,
                                            is_nvidia, layout_shape, root_alloc, subslice_offsets)
from verilayout.core.linear_layout import LinearLayout
from verilayout.errors import LayoutError
from verilayout.frontends.mlir import Attr, elem_bit_width
from verilayout.frontends.names import parse_instruction
from verilayout.frontends.ttgir import Op, Type
from verilayout.hw.amd.lds import target_of as lds_target_of
from verilayout.hw.nvidia.banks import BankModel
from verilayout.prove.banks import embed_in_allocation, check_lds_banks, linear_analysis_and_triton
from verilayout.prove.lds_tr import tr_read_wavefronts
from verilayout.synth.swizzle import mlir_text, swizzled_shared_layout, synthesize

__all__ = ["bank_check", "async_copy_check", "attach_joint", "TR_RULE"]

def bank_check(ctx: AuditContext, op: Op, reg_t: Type, mem_t: Type, mem_name: str | None, store: bool,
                what: str | None = None, extra: dict | None = None) -> None:
    what = what or ("store" if store else "load")
    amd = None if is_nvidia(ctx.mod.target) else lds_target_of(ctx.mod.target)
    if not is_nvidia(ctx.mod.target) and amd is None:
        ctx.add(op, "bank-conflicts", "unchecked", None,
                f"{what} on {ctx.mod.target}: no LDS model for this target", reason="no LDS model")
        return
    got = _bank_operands(ctx, op, reg_t, mem_t, mem_name, what, amd is not None)
    if got is None:
        return
    reg, smem, subslice, bits = got
    if amd is not None:
        if not store and subslice is None and _tr_read_check(ctx, op, (reg, smem, bits), reg_t, mem_t, amd.name):
            return
        _lds_check(ctx, op, reg, smem, bits, store, what, amd.name, subslice, mem_t, extra)
        return
    _nvidia_bank_check(ctx, op, (reg, smem, mem_t, subslice, bits), reg_t, mem_name, store, what,
                       extra)


def _bank_operands(ctx: AuditContext, op: Op, reg_t: Type, mem_t: Type, mem_name: str | None,
                   what: str, amd: bool):
    """Law: (register layout, shared layout, subslice offsets or None, element bits) of a
    shared-memory access, the register layout embedded in the allocation for a subslice; None
    (with an ``unchecked`` result naming why) where one of them cannot be read."""
    mt, rt = ctx.typ(mem_t), ctx.typ(reg_t)
    reg, smem = ctx.layout(reg_t), ctx.layout(mem_t)
    if smem is None and mt is not None and isinstance(mt.encoding, Attr):
        if amd:
            smem = mem_t.padded             # padded_shared (gfx950): an address map, not linear
        elif rt is not None and reg is not None and mem_t.padded is not None:
            ctx.add(op, "bank-conflicts", "unchecked", None,
                    f"{what}: a #ttg.padded_shared layout is an address map, not a linear layout: the "
                    "TTGIR bank model for NVIDIA takes linear layouts; the PTX audit checks this "
                    "access's ld/st.shared addresses", reason="padded shared (NVIDIA TTGIR)")
            return None
    if mt is None or rt is None or reg is None or smem is None:
        ctx.add(op, "bank-conflicts", "unchecked", None,
                f"{what}: a layout of this op could not be read (see the file's unsupported layouts)",
                reason="unsupported layout")
        return None
    if isinstance(smem, LinearLayout) and "offset" not in smem.in_dims:
        ctx.add(op, "bank-conflicts", "unchecked", None, f"{what}: the memory side is not a shared "
                "layout", reason="not shared memory")
        return None
    subslice = None
    if tuple(rt.shape) != tuple(mt.shape):
        ctx.add(op, "bank-conflicts", "unchecked", None, f"{what}: the register shape {list(rt.shape)} "
                f"differs from the memory view {list(mt.shape)}", reason="shape mismatch")
        return None
    if tuple(mt.shape) != layout_shape(mt):
        subslice = subslice_offsets(ctx, mem_name, mt)
        if isinstance(subslice, str):
            ctx.add(op, "bank-conflicts", "unchecked", None,
                    f"{what} through a subslice ({list(mt.shape)} of {list(layout_shape(mt))}): {subslice}",
                    reason="subslice view")
            return None
        reg = embed_in_allocation(reg, layout_shape(mt))
    bits = elem_bit_width(mt.elem)
    if not bits:
        ctx.add(op, "bank-conflicts", "unchecked", None, f"{what}: element type {mt.elem} has no bit "
                "width", reason="element type")
        return None
    return reg, smem, subslice, bits


def _nvidia_bank_check(ctx: AuditContext, op: Op, access: tuple, reg_t: Type, mem_name: str | None,
                       store: bool, what: str, extra: dict | None) -> None:
    """Law: the NVIDIA bank-conflict result of one access: proved when its wavefronts per
    instruction are the ideal, a warning with the witness, the ways and the best swizzle
    otherwise, unknown where the analysis is; the data carry the figures either way."""
    reg, smem, mem_t, subslice, bits = access
    mt = mem_t.tensor
    try:
        res, triton = linear_analysis_and_triton(reg, smem, bits, None, BankModel(), store, 8)
        if extra and extra.get("vector_bits") and extra["vector_bits"] < res.plan.instruction.bits:
            # the copy is narrower than the layouts allow: Triton vectorises to the smaller of the two
            instr = parse_instruction(_store_of_width(extra["vector_bits"]))
            res, triton = linear_analysis_and_triton(reg, smem, bits, instr, BankModel(), store, 8)
    except LayoutError as e:
        ctx.add(op, "bank-conflicts", "unchecked", None, f"{what}: {e}", reason=str(e))
        return
    plan = res.plan
    instr = plan.instruction.name
    if what.startswith("cp.async"):
        instr = f"cp.async {plan.instruction.bits // 8}-byte (banked as {instr})"
    root = root_alloc(ctx, mem_name) if mem_name else None
    data = {"instruction": plan.instruction.name, "elem_bits": bits, "vector_elems": plan.vector_elems,
            "wavefronts": res.wavefronts, "ideal": plan.ideal_wavefronts,
            "ideal_wavefronts": plan.ideal_wavefronts,
            "instructions_per_warp": plan.instructions_per_warp,
            "triton_conflicts": triton, "register_layout": reg_t.encoding_as_printed,
            "shared_layout": mem_t.encoding_text, "shape": list(mt.shape),
            "alloc_line": root.line if root is not None else None, "method": res.method,
            **({"subslice": {"offsets": list(subslice), "of": list(layout_shape(mt)),
                             "assumption": SUBSLICE_RULE}} if subslice is not None else {}),
            **(extra or {})}
    st = res.verdict.status
    if st == "proved":
        ctx.add(op, "bank-conflicts", "proved", None,
                f"{what} is conflict-free: {instr}, {res.wavefronts} wavefront(s) per "
                f"instruction (ideal {plan.ideal_wavefronts})", **data)
    elif st == "unknown":
        ctx.add(op, "bank-conflicts", "unknown", "note", f"{what}: {res.verdict.reason}", **data)
    else:
        _bank_conflict_warning(ctx, op, what, instr, res, (reg, bits, store, mt), data)
    whole = subslice is None and not what.startswith("cp.async") and tuple(mt.shape) == layout_shape(mt)
    ctx.accesses.append((len(ctx.checks) - 1, reg, store, bits, mt, data["alloc_line"], whole))


def _bank_conflict_warning(ctx: AuditContext, op: Op, what: str, instr: str, res, access: tuple,
                           data: dict) -> None:
    """Law: one ``counterexample`` warning for a conflicting access: its ways (wavefronts over
    the ideal), the witness, and the best swizzle for it (named, or the GF(2) optimum)."""
    reg, bits, store, mt = access
    plan = res.plan
    ways = max(1, res.wavefronts // max(1, plan.ideal_wavefronts))
    data["ways"] = ways
    if res.witness is not None:
        data["witness"] = res.witness.to_dict()
    fix = _best_swizzle(reg, bits, store, mt.encoding)
    if fix is not None and "internal_error" in fix:
        internal_unchecked(ctx, op, "swizzle-fix", "the best swizzle for this access", fix["internal_error"])
        fix = None
    data["fix"] = fix
    if fix:
        # the contract's `best`: the layout with the fewest wavefronts per warp for this access
        now = res.wavefronts * plan.instructions_per_warp
        named = fix.get("name") and fix["wavefronts_per_warp"] < now
        data["best"] = ({"layout": fix["mlir"], "wavefronts_per_warp": fix["wavefronts_per_warp"]} if named
                        else {"layout": fix["optimum_mlir"],
                              "wavefronts_per_warp": fix["optimum_wavefronts_per_warp"]})
        data["best"]["wavefronts_per_warp_now"] = now
    msg = (f"{ways}-way bank conflict on this {what}: {instr} takes {res.wavefronts} "
           f"wavefronts per instruction, ideal {plan.ideal_wavefronts} ({plan.instructions_per_warp} "
           f"instruction(s) per warp), {data['shared_layout']}")
    if res.witness is not None:
        msg += f"; witness: {res.witness.describe()}"
    if fix:
        now = res.wavefronts * plan.instructions_per_warp
        nvmma = "nvmma_shared" in data["shared_layout"]
        if fix.get("name") and fix["wavefronts_per_warp"] < now:
            msg += f"; best {'same-majorness ' if nvmma else ''}layout: " \
                   f"{fix['mlir']} ({fix['wavefronts_per_warp']} wavefronts per warp vs {now})"
        elif nvmma:
            msg += "; no nvmma_shared swizzle of the same majorness (fixed by the MMA) does better: " \
                   "change the register layout of the stored value, or use the layout below if an MMA " \
                   "descriptor can read it"
        msg += f"; the best GF(2) swizzle for this access needs {fix['optimum_wavefronts_per_warp']} " \
               f"wavefronts per warp (lower bound {fix['lower_bound']}): {fix['optimum_mlir']}"
    ctx.add(op, "bank-conflicts", "counterexample", "warning", msg, **data)


def attach_joint(ctx: AuditContext) -> None:
    """Law: each bank check of a buffer with a conflicting access gets ``data["joint"]``: the named
    layout with the fewest wavefronts per warp for all the buffer's accesses together
    (:func:`verilayout.audit.advice.joint_layout`), as Gluon code, with each access's wavefronts per
    warp now and with it. Buffers seen through a view, a subslice or cp.async are left out."""
    groups: dict[int, list[tuple]] = {}
    for acc in ctx.accesses:
        if acc[5] is not None:
            groups.setdefault(acc[5], []).append(acc)
    for alloc_line, accs in groups.items():
        checks = [ctx.checks[a[0]] for a in accs]
        if not any(c.status == "counterexample" for c in checks) or not all(a[6] for a in accs) \
                or len({(a[3], tuple(a[4].shape)) for a in accs}) != 1:
            continue
        enc = accs[0][4].encoding
        tr = bool(enc.params.get("transposed", False)) if isinstance(enc, Attr) and enc.kind == "nvmma_shared" \
            and _read_by_mma(ctx, alloc_line) else None
        try:
            j = joint_layout([(a[1], "write" if a[2] else "read") for a in accs], accs[0][3], tr)
        except (AssertionError, ValueError, KeyError) as e:
            c = checks[0]
            ctx.checks.append(Check(c.op, c.line, c.loc, "swizzle-fix", "unchecked", None, "the joint "
                                    f"layout of the buffer at line {alloc_line}: {internal_message(e)}",
                                    {"reason": "internal error"}))
            continue
        if j is None or not j.get("gluon"):
            continue
        now = [c.data["wavefronts"] * c.data["instructions_per_warp"] for c in checks]
        j.update(alloc_line=alloc_line, wavefronts_per_warp_now=sum(now), mma_transposed=tr,
                 alloc_loc=next((c.loc for c in checks if c.line == alloc_line), None),
                 accesses=[{"line": c.line, "loc": c.loc, "op": c.op, "role": "store" if a[2] else "load",
                            "before": b, "after": aft} for c, a, b, aft in zip(checks, accs, now, j.pop("after"))])
        for a, c in zip(accs, checks):
            ctx.checks[a[0]] = replace(c, data={**c.data, "joint": j})


#: ops that read a shared buffer through a descriptor of its layout (its majorness is theirs)
_DESCRIPTOR_READERS = ("ttng.warp_group_dot", "ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled",
                       "ttng.async_tma_copy_local_to_global")


def _read_by_mma(ctx: AuditContext, alloc_line: int) -> bool:
    """Law: True when an MMA or a TMA store reads the allocation at ``alloc_line`` (directly or
    through memdesc views), so its ``nvmma_shared`` majorness is fixed."""
    names: set[str] = set()
    for op in ctx.mod.ops:
        if op.line == alloc_line or (op.name in VIEWS and op.operands and op.operands[0] in names):
            names.update(op.results)
        elif op.name in _DESCRIPTOR_READERS and names.intersection(op.operands):
            return True
    return False


def _lds_check(ctx: AuditContext, op: Op, reg: LinearLayout, smem: Any, bits: int, store: bool, what: str,
               target: str, subslice: tuple | None, mem_t: Type, extra: dict | None) -> None:
    """The AMD LDS figure (``prove.banks.check_lds_banks``: phase groups of ``hw/amd/lds``)."""
    mt = mem_t.tensor
    try:
        r = check_lds_banks(reg, smem, elem_bits=bits, target=target, store=store)
    except LayoutError as e:
        ctx.add(op, "bank-conflicts", "unchecked", None, f"{what}: {e}", reason=str(e))
        return
    data = {"instruction": r.instruction, "target": target, "elem_bits": bits,
            "vector_elems": r.vector_elems, "wavefronts": r.wavefronts, "ideal": r.ideal,
            "ideal_wavefronts": r.ideal, "ways": r.ways, "instructions_per_warp": r.instructions_per_wave,
            "shared_layout": mem_t.encoding_text, "shape": list(mt.shape), "method": r.method,
            "inferred_phases": r.inferred, **(extra or {})}
    if subslice is not None:
        data["subslice"] = {"offsets": list(subslice), "of": list(layout_shape(mt)), "assumption": SUBSLICE_RULE}
    note = " (phase groups inferred, not published)" if r.inferred else ""
    st = r.verdict.status
    if st == "proved" and r.conflict_free:
        ctx.add(op, "bank-conflicts", "proved", None, f"{what} is conflict-free on {target}: {r.instruction}, "
                f"{r.wavefronts} cycle(s) per instruction (ideal {r.ideal}){note}", **data)
    elif st == "unknown":
        ctx.add(op, "bank-conflicts", "unknown", "note", f"{what} on {target}: {r.verdict.reason}", **data)
    else:
        data["witness"] = [list(w) for w in r.witness]
        now = r.wavefronts * r.instructions_per_wave
        enc = mt.encoding
        order = enc.params.get("order") if isinstance(enc, Attr) and enc.kind == "swizzled_shared" else None
        best = _lds_best(reg, bits, store, target, tuple(layout_shape(mt)), tuple(order), r.vector_elems) \
            if subslice is None and isinstance(smem, LinearLayout) and isinstance(order, (list, tuple)) else None
        fix = ""
        if best is not None:
            data["best"] = {**best, "wavefronts_per_warp_now": now}
            fix = (f"; best swizzled_shared layout on {target}: {best['layout']} ({best['wavefronts_per_warp']}"
                   f" cycles per wave vs {now})" if best["wavefronts_per_warp"] < now else
                   f"; no swizzled_shared layout does better on {target} ({now} cycles per wave): change "
                   "the register layout of this access")
        ctx.add(op, "bank-conflicts", "counterexample", "warning",
                f"{r.ways}-way LDS bank conflict on this {what} ({target}): {r.instruction} takes "
                f"{r.wavefronts} cycles per instruction, ideal {r.ideal}; witness (lane, byte): "
                f"{list(r.witness)[:4]} in bank {r.bank}{note}{fix}", **data)


@lru_cache(maxsize=256)   # one kernel's operands repeat their (layout, tile) pairs
def _lds_best(reg: LinearLayout, bits: int, store: bool, target: str, shape: tuple, order: tuple,
              vector: int) -> dict | None:
    """Law: the ``swizzled_shared`` layout of the same order as the buffer's (every vec from the
    access's ``vector`` elements to 16, perPhase 1..8, maxPhase 1..16 that is invertible; a narrower
    vec would narrow the access; widest vec first, stopping at the first conflict-free one) with the
    fewest LDS cycles per wave for this
    access (``check_lds_banks``, the figure of the finding), as MLIR and Gluon text; None for a
    tile that is not 2-D or a buffer that is not ``swizzled_shared``."""
    if len(shape) != 2 or sorted(order) != [0, 1]:
        return None
    best = None
    for vec, per, mx in ((v, p, m) for v in (16, 8, 4, 2, 1) for p in (1, 2, 4, 8) for m in (1, 2, 4, 8, 16)
                         if (m > 1 or (v, p) == (1, 1)) and v >= min(vector, 16)):
        try:
            lay = swizzled_shared_layout(list(shape), vec, per, mx, list(order))
            if not lay.is_invertible():
                continue
            r = check_lds_banks(reg, lay, elem_bits=bits, target=target, store=store)
        except LayoutError:
            continue
        total = r.wavefronts * r.instructions_per_wave
        if best is None or total < best[0]:
            best = (total, {"vec": vec, "perPhase": per, "maxPhase": mx, "order": [int(o) for o in order]})
        if r.conflict_free:       # the widest conflict-free one: the search stops there
            break
    if best is None:
        return None
    cand = SimpleNamespace(params=best[1])
    return {"layout": mlir_text("swizzled", best[1]), "gluon": gluon_code(cand, bits, 2),
            "wavefronts_per_warp": best[0], "unit": "LDS cycles per wave"}


TR_RULE = ("gfx950: Triton 3.9 reads an MFMA dot operand whose buffer is contiguous along M/N with "
           "ds_read_b64_tr_b<bits> (its chooseDsReadTrLayout; seen in the wheel's gfx950 assembly); each "
           "16-lane group reads the 8-byte runs holding the elements it receives")


def _tr_k_dim(ctx: AuditContext, reg_t: Type, bits: int, target: str) -> int | None:
    """K's dim of a gfx950 MFMA dot operand of 8/16-bit elements (None: no transposed read)."""
    rt = ctx.typ(reg_t)
    enc = rt.encoding if rt is not None else None
    if target != "gfx950" or bits not in (8, 16) or not isinstance(enc, Attr) or enc.kind != "dot_op":
        return None
    parent = enc.params.get("parent")
    if not isinstance(parent, Attr) or parent.kind != "amd_mfma" or len(rt.shape) != 2:
        return None
    return 1 if int(enc.params.get("opIdx", 0)) == 0 else 0


def _tr_read_check(ctx: AuditContext, op: Op, access: tuple, reg_t: Type, mem_t: Type, target: str) -> bool:
    """A gfx950 MFMA operand read from an M/N-contiguous buffer: the banks of the transposing read
    Triton emits (:func:`verilayout.prove.lds_tr.tr_read_wavefronts`); False when the access is
    no transposed read (the plain ``ds_read`` model applies)."""
    reg, smem, bits = access
    k_dim = _tr_k_dim(ctx, reg_t, bits, target)
    if k_dim is None:
        return False
    mt = mem_t.tensor
    key = ("TR", reg_t, mem_t)
    if key not in ctx.proofs:             # a pipelined loop repeats its loads: one count per pair
        try:
            ctx.proofs[key] = tr_read_wavefronts(reg, smem, elem_bits=bits, target=target, k_dim=k_dim)
        except LayoutError:
            ctx.proofs[key] = None         # K-contiguous buffers and other layouts: no transposed read
    r = ctx.proofs[key]
    if r is None:
        return False
    data = {**r, "target": target, "elem_bits": bits, "shared_layout": mem_t.encoding_text,
            "shape": list(mt.shape), "method": "enumeration", "rule": TR_RULE,
            "inferred": "transposing reads bank like ds_read_b64 (the LDS model's inference)"}
    note = " (phase groups inferred, not published)" if r["inferred_phases"] else ""
    if r["wavefronts"] <= r["ideal"]:
        ctx.add(op, "bank-conflicts", "proved", None, f"load is conflict-free on {target}: {r['instruction']}, "
                f"{r['wavefronts']} cycle(s) per instruction (ideal {r['ideal']}){note}", **data)
    else:
        ctx.add(op, "bank-conflicts", "counterexample", "warning",
                f"{r['ways']}-way LDS bank conflict on this load ({target}): {r['instruction']} takes "
                f"{r['wavefronts']} cycles per instruction, ideal {r['ideal']}; witness (lane, byte): "
                f"{r['witness'][:4]} in bank {r['bank']}{note}", **data)
    return True


def _store_of_width(bits: int) -> str:
    """The st.shared instruction that writes ``bits`` per lane (32, 64 or 128)."""
    return {32: "st.shared.b32", 64: "st.shared.v2.b32", 128: "st.shared.v4.b32"}[bits]


def _memdesc_of(ctx: AuditContext, op: Op, name: str | None, printed: Type | None) -> Type | None:
    """The full memdesc type of SSA value ``name`` (the type its defining op prints), else the
    type ``op`` printed read as a memdesc (Triton prints cp.async destinations without
    ``!ttg.memdesc``)."""
    defined = ctx.mod.def_type(name)
    if defined is not None and defined.is_memdesc:
        return defined
    return printed.as_memdesc(op.table) if printed is not None else None


def async_copy_check(ctx: AuditContext, op: Op) -> None:
    """``ttg.async_copy_global_to_local`` (cp.async): each thread writes the elements its pointer
    layout holds to the destination memdesc's offsets; the shared-memory side is checked like a
    store of the same width (an inference: cp.async's shared writes go through the same banks as
    ``st.shared``; the PTX ISA gives no separate rule)."""
    if not op.in_types or len(op.operands) < 2:
        ctx.add(op, "bank-conflicts", "unchecked", None, "cp.async without readable operand types",
                reason="no type")
        return
    mem = _memdesc_of(ctx, op, op.operands[1], op.out_types[0] if op.out_types else None)
    if mem is None:
        ctx.add(op, "bank-conflicts", "unchecked", None, "cp.async: the destination's type is not in "
                "the file", reason="no type")
        return
    contiguity = op.attributes.get("contiguity", 1)  # Triton prints the attribute only when > 1
    t = ctx.typ(mem)
    bits = elem_bit_width(t.elem) if t is not None else None
    extra = {"inferred": "cp.async shared writes are assumed to bank like st.shared of the same width",
             "contiguity": contiguity,
             "vector_rule": "Triton 3.9 copies min(contiguity, the widest vector the register and shared "
                            "layouts allow) elements per cp.async (its lowering passes the contiguity as the "
                            "maximum vector to the register-to-shared transfer)"}
    if bits:
        # each cp.async moves `contiguity` elements (4, 8 or 16 bytes): the vector is that wide
        extra["vector_bits"] = max(32, min(contiguity * bits, 128))
    bank_check(ctx, op, op.in_types[0], mem, op.operands[1], True, what="cp.async write",
                extra=extra)


def _best_swizzle(reg: LinearLayout, bits: int, store: bool, smem_attr: Any) -> dict | None:
    """The best shared layout for this access alone: among ``nvmma_shared`` layouts of the same
    majorness when the memory is an ``nvmma_shared`` (an MMA reads it: its majorness is fixed),
    else among every named layout; and the GF(2) optimum with its lower bound (a fresh dict)."""
    nvmma = isinstance(smem_attr, Attr) and smem_attr.kind == "nvmma_shared"
    tr = nvmma and bool(smem_attr.params.get("transposed", False))
    got = _best_swizzle_of(reg, bits, store, nvmma, tr, synthesize)   # (the synthesizer in the key too)
    return dict(got) if got is not None else None


@lru_cache(maxsize=256)   # keyed by the access and the memory's kind; kernels repeat their conflicting accesses
def _best_swizzle_of(reg: LinearLayout, bits: int, store: bool, nvmma: bool, tr: bool,
                     synth: Callable) -> dict | None:
    """:func:`_best_swizzle` of an access to an ``nvmma_shared`` memory (``nvmma``, transposed
    ``tr``) or any other, by the synthesizer ``synth``; shared by the callers: read only."""
    try:
        plan = synth(reg if store else None, None if store else reg, elem_bits=bits, swizzled=not nvmma)
    except LayoutError:
        return None                      # out of the synthesizer's reach: no fix to offer
    except (AssertionError, ValueError, KeyError) as e:
        return {"internal_error": internal_message(e)}
    if nvmma:
        named = [c for c in plan.wgmma.values() if c is not None and bool(c.params.get("transposed")) == tr]
    else:
        named = [c for c in list(plan.wgmma.values()) + [plan.swizzled] if c is not None]
    best = min(named, key=lambda c: c.total) if named else None
    out = {"optimum_wavefronts_per_warp": plan.best.total, "optimum_mlir": plan.best.mlir,
           "lower_bound": plan.lower_bound, "optimum_status": plan.verdict.status}
    if best is not None:
        out.update(name=best.name, mlir=best.mlir, wavefronts_per_warp=best.total)
    return out
