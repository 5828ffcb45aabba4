"""wgmma instructions checked from the PTX alone, with no TTGIR plan beside it (nvcc's PTX of a
CUTLASS kernel, or a Triton kernel whose TTGIR is missing).

For every ``wgmma.mma_async`` of a function:

* ``mma-instruction``: the shape ``m64nNkK`` is one the PTX ISA lists for the multiplicand and
  accumulator types (M 64, K = 32 bytes of the type, N in the accumulator's set), and the
  accumulator (and register-A) vectors hold as many registers as the fragment needs
  (N/2 for f32/s32, N/4 for f16; A: K x bits / 64);
* ``mma-descriptor`` per shared operand: bits 14-63 of the descriptor are one constant for every
  value of the symbols (under the assumptions below), they decode to a descriptor that breaks no
  rule of the descriptor contract for the operand's type, major-ness (``imm-trans``) and M or N,
  and the canonical layout they select reads every element of the ``MN x K`` block from its own
  byte (injective: no stride that must step is zero or overlapping); the start of a swizzled
  operand lies in the first row of a swizzle repeat;
* K-block advance: wgmmas between one ``wgmma.fence`` and the next ``wgmma.commit_group`` that
  accumulate into the same registers are successive K-blocks; K-block ``k`` starts ``s`` K-blocks of
  the canonical layout (one K-block: the address the layout, extended along K, gives to ``(0, K)``)
  after the last K-block ``k - s`` whose advance was not an error (so one wrong K-block is one
  error). A K-major swizzled K-block that would run past its swizzle row (``+32`` bytes a K-block of
  16 f16 inside the 128-byte row) is in a new atom column, as CuTe's ``tile_to_shape`` of a swizzle
  atom places them (CUTLASS ``cute/atom/mma_traits_sm90_gmma.hpp``, ``GMMA::Layout_K_SW128_Atom``):
  the column starts a whole number of swizzle repeats (1024 bytes for 128B) past the previous
  column's start, and the K-block reads no byte an earlier K-block of the chain reads (an
  inference: the atoms' placement is not in the descriptor);
* chain tile (K-major swizzled operands): the chain's K-blocks read every byte of the atom columns
  they span (each column's ``MN/8`` 8-row groups, SBO apart). Where they leave bytes unread, the
  descriptor's SBO is not that of a dense tile of the swizzle atom for the K extent advanced (SBO
  one repeat for columns stacked along MN, the columns' count times the repeat for columns side by
  side): ``unknown`` with the first unread byte, never ``proved`` (the PTX alone does not say what
  the tile holds there);
* region tile (MN-major operands): the K-blocks of one fence/commit region's chains (its MN-blocks)
  read every byte from the lowest they read to the highest, each byte for one place of the
  operand; holes or a byte read for two places (an LBO that puts an MN atom on another K-block's
  rows, say) are ``unknown``, never ``proved``.

Assumptions, reported with every proof: the shared-memory base is 1024-byte aligned and
``base + the largest constant offset the function adds to it`` stays inside the 227 KB an sm_90 CTA
can have; loop-carried registers satisfy the bounds proved by induction
(``PtxValues.invariant``). A claim that fails only for some values of symbols the evaluator leaves
free is ``unknown``, never an error: an error needs a claim false for every value.

>>> wgmma_shape("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16")
(64, 128, 16, 'f32', 'f16', 'f16')
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import z3

from verilayout.audit.model import Check
from verilayout.audit.ptx_context import PtxContext
from verilayout.errors import LayoutError
from verilayout.frontends.ptx import wgmma_shape
from verilayout.hw.nvidia.descriptor import (contract_findings, decode, hardware_address_function,
                                             pattern_repeat_bytes)
from verilayout.hw.nvidia.ptx_model import Imm, Instr, PtxModule, Reg, Vec
from verilayout.hw.nvidia.wgmma import ACCUMULATORS, DTYPE_BITS, k_of_dtype, swizzle_units, valid_n
from verilayout.prove.ptx_values import SMEM, PtxValues, constant
from verilayout.prove.wgmma import intended_tile

#: The most shared memory an sm_90 CTA can have (227 KB, CUDA C++ Programming Guide, compute
#: capability 9.0 table); every shared address a kernel forms lies below it.
SM90_SMEM_BYTES = 227 * 1024
SMEM_ALIGN = 1024
_HIGH = ((1 << 64) - 1) & ~0xFFFF           # bits 16-63: LBO, SBO, base offset, mode (as the plan audit)
_BASE_OFFSET = 7 << 49
#: rules of the descriptor contract that are inferences (reported, never errors)
_INFERRED = frozenset({"stride-repeat", "inferred-layout"})


#: intended tiles of this process, by ``(layout, dtype, mn_dim)``; at most _TILES_MAX kept
_TILES: dict[tuple, Any] = {}
_TILES_MAX = 1024


def planned_tile(layout: Any, dtype: str, mn_dim: int) -> Any:
    """``intended_tile(layout, dtype=dtype, mn_dim=mn_dim)`` (``prove.wgmma``, at base 0), kept per
    arguments: the tile is a function of them alone, and every K-block and MN block of an operand
    is checked against the same tile (``check_descriptor`` takes the tile in place of the layout).

    >>> from verilayout.core.linear_layout import LinearLayout
    >>> L = LinearLayout({"offset": [[0, 1], [0, 2], [0, 4], [1, 0], [2, 0]]}, ["dim0", "dim1"])
    >>> planned_tile(L, "f16", 0) is planned_tile(L, "f16", 0), planned_tile(L, "f16", 0).fn.eval(1, 3) // 8
    (True, 22)
    """
    key = (layout, dtype, mn_dim)
    hit = _TILES.get(key)
    if hit is None:
        hit = intended_tile(layout, dtype=dtype, mn_dim=mn_dim)
        if len(_TILES) < _TILES_MAX:
            _TILES[key] = hit
    return hit


def _regs(op: object) -> tuple:
    """The elements of a vector operand ``{a, b, ...}``; none for any other operand."""
    return op.items if isinstance(op, Vec) else ()


def smem_offset_bound(mod: PtxModule, ev: PtxValues, func: str) -> int:
    """The largest constant the function adds to the shared-memory base (``add d, base, imm``).

    >>> from verilayout.frontends.ptx import parse_ptx
    >>> m = parse_ptx(".version 8.7\\n.entry f()\\n{\\nmov.u32 %r1, s;\\nadd.s32 %r2, %r1, 4096;\\n}")
    >>> smem_offset_bound(m, PtxValues(m, "f", smem_names=("s",)), "f")
    4096
    """
    best = 0
    for i in mod.instrs:
        if i.func != func or not i.opcode.startswith("add.") or len(i.args) != 3:
            continue
        imm = i.args[2].value if isinstance(i.args[2], Imm) else None
        if imm is None or not 0 < imm < 1 << 20 or not isinstance(i.args[1], Reg):
            continue
        v = ev.reg(i.args[1].name, at=i)
        if v.size() >= 32 and z3.eq(z3.Extract(31, 0, v) if v.size() > 32 else v, SMEM):
            best = max(best, imm)
    return best


class _Ctx:
    """What the proofs of one function share: the evaluator, the assumptions and their text."""

    def __init__(self, ev: PtxValues, max_off: int):
        self.ev = ev
        self.max_off = max_off
        self.base = z3.And(z3.URem(SMEM, SMEM_ALIGN) == 0, z3.ULE(SMEM, SM90_SMEM_BYTES - max_off))
        self.text = (f"the shared-memory base is {SMEM_ALIGN}-byte aligned and at most "
                     f"{SM90_SMEM_BYTES - max_off} (the function adds up to {max_off} to it and an sm_90 CTA "
                     f"has at most {SM90_SMEM_BYTES} bytes)")

    def assume(self, *exprs: z3.ExprRef) -> tuple[z3.BoolRef, list[str]]:
        laws = self.ev.laws(*exprs)
        return z3.And(self.base, *[lw for lw, _ in laws]), [self.text] + [t for _, t in laws]

    def constant(self, e: z3.BitVecRef) -> tuple[int | None, list[str]]:
        assume, texts = self.assume(e)
        return constant(e, assume, self.ev.const_cache, self.ev.prover), texts

    def decide(self, claim: z3.BoolRef) -> tuple[str, list[str]]:
        """``proved``; ``counterexample`` when the claim is false for every value of the symbols;
        else ``unknown`` (it fails only for some values of free symbols, or the solver gave up)."""
        assume, texts = self.assume(claim)
        if self.ev.prover.proves(claim, assume):
            return "proved", texts
        if self.ev.prover.proves(z3.Not(claim), assume):
            return "counterexample", texts
        return "unknown", texts


def _check(ins: Instr, check: str, status: str, severity: str | None, message: str, data: dict) -> Check:
    return Check("wgmma.mma_async", ins.line, ins.loc, check, status, severity, message,
                 dict(data, source="ptx", plan="none"))


def _instruction_check(ins: Instr, shape: tuple, a_is_reg: bool) -> Check:
    m, n, k, acc, ta, tb = shape
    data = {"m": m, "n": n, "k": k, "accumulator": acc, "a_type": ta, "b_type": tb}
    wrong = []
    if ta not in DTYPE_BITS or tb not in DTYPE_BITS:
        wrong.append(f"multiplicand types {ta}/{tb} are not wgmma types")
    else:
        if DTYPE_BITS[ta] != DTYPE_BITS[tb] or (DTYPE_BITS[ta] == 16 and ta != tb):
            wrong.append(f"A is {ta} but B is {tb}")
        if m != 64:
            wrong.append(f"M = {m}; wgmma has M = 64")
        if k != k_of_dtype(ta):
            wrong.append(f"K = {k}; a {ta} wgmma has K = {k_of_dtype(ta)} (32 bytes)")
        if acc not in ACCUMULATORS.get(ta, ()):
            wrong.append(f"accumulator {acc} is not one of {ACCUMULATORS.get(ta)} for {ta}")
        elif n not in valid_n(acc):
            wrong.append(f"N = {n} is not a valid N for a {acc} accumulator")
    nd = len(_regs(ins.args[0])) if ins.args else 0
    want_d = n // 4 if acc == "f16" else n // 2
    data["d_registers"] = nd
    if nd != want_d:
        wrong.append(f"the accumulator vector has {nd} registers; m64n{n} {acc} needs {want_d}")
    if a_is_reg and ta in DTYPE_BITS:
        na, want_a = len(_regs(ins.args[1])), k * DTYPE_BITS[ta] // 64
        data["a_registers"] = na
        if na != want_a:
            wrong.append(f"register A has {na} registers; {ta} m64k{k} needs {want_a}")
    if wrong:
        return _check(ins, "mma-instruction", "counterexample", "error",
                      f"{ins.opcode}: " + "; ".join(wrong), data)
    return _check(ins, "mma-instruction", "proved", None,
                  f"m{m}n{n}k{k} {acc} += {ta} x {tb}: a shape of the PTX ISA table, K = 32 bytes, "
                  f"{nd} accumulator registers", data)


def _majors(ins: Instr, shape: tuple, a_is_reg: bool) -> tuple[str, str]:
    """Operand major-ness: ``imm-trans-a``/``imm-trans-b`` (f16/bf16 only; 1 = transposed =
    MN-major); every other type is K-major."""
    if shape[4] not in ("f16", "bf16"):
        return "K", "K"
    imms = [o.value if isinstance(o, Imm) else None for o in ins.args[3:]]
    if a_is_reg:                       # d, a, b, scale-d, scale-a, scale-b, trans-b
        tb = imms[3] if len(imms) > 3 else 0
        return "K", "MN" if tb else "K"
    ta = imms[3] if len(imms) > 3 else 0
    tb = imms[4] if len(imms) > 4 else 0
    return ("MN" if ta else "K"), ("MN" if tb else "K")


def _injective(fn) -> tuple[int, int, int, int] | None:
    """Two coordinates the address function sends to one address (the first found), or None."""
    tab = fn.table()
    flat = tab.reshape(-1)
    order = np.argsort(flat, kind="stable")
    same = np.nonzero(np.diff(flat[order]) == 0)[0]
    if not len(same):
        return None
    kx = tab.shape[1]
    i, j = int(order[same[0]]), int(order[same[0] + 1])
    return i // kx, i % kx, j // kx, j % kx


class _Operand:
    """One shared operand of one wgmma: its descriptor expression and decoded fields."""

    def __init__(self, ins, name, expr, desc, major, dtype, mn, k):
        self.ins, self.name, self.expr, self.desc = ins, name, expr, desc
        self.major, self.dtype, self.mn, self.k = major, dtype, mn, k
        self.kb = 0                      # its K-block in the chain (set by the chain's walk)

    def start(self) -> z3.BitVecRef:
        return z3.Extract(13, 0, self.expr)


def _operand_check(ctx: _Ctx, ins: Instr, slot: int, name: str, shape: tuple, major: str,
                   data: dict) -> tuple[list[Check], _Operand | None]:
    """The descriptor checks of one operand (a warning first where there is one), and the operand
    for the K-block chain (None where its fields are not known)."""
    warns: list[Check] = []
    c, op = _operand_verdict(ctx, ins, slot, name, shape, major, data, warns)
    return warns + [c], op


def _pattern_start_check(ctx: _Ctx, ins: Instr, name: str, desc: Any, op: "_Operand",
                         data: dict) -> Check | None:
    """A swizzled operand's start must lie in the first row of a swizzle repeat (base offset 0
    anchors the pattern there): ``None`` when proved (or unswizzled), else the check to report."""
    if desc.swizzle == "none":
        return None
    rep = pattern_repeat_bytes(desc.swizzle)
    row = 16 * swizzle_units(desc.swizzle)
    pos = z3.URem(z3.ZeroExt(18, op.start()) * 16, rep)
    claim = z3.ULT(pos, row) if not desc.base_offset else z3.BoolVal(False)
    st, texts = ctx.decide(claim)
    data["assumptions"] = texts
    if desc.base_offset:
        return _check(ins, "mma-descriptor", "unknown", "note", f"operand {name}: base offset "
                      f"{desc.base_offset} is set; without a plan the pattern start it encodes is not "
                      "checked", data)
    if st != "proved":
        return _check(ins, "mma-descriptor", st, "error" if st == "counterexample" else "note",
                      f"operand {name}: the start address is not in the first row of a {rep}-byte "
                      f"{desc.swizzle} swizzle repeat (base offset 0 anchors the pattern there)"
                      + ("" if st == "counterexample" else ": not proved for every value of the free symbols"),
                      data)
    return None


def _operand_verdict(ctx: _Ctx, ins: Instr, slot: int, name: str, shape: tuple, major: str,
                     data: dict, warns: list[Check]) -> tuple[Check, _Operand | None]:
    m, n, k, _acc, ta, tb = shape
    dtype, mn = (ta, m) if name == "A" else (tb, n)
    e = ctx.ev.operand(ins.args[slot], 64, at=ins)
    data = dict(data, operand=name, major=major, dtype=dtype, mn=mn)
    if e is None:
        return _check(ins, "mma-descriptor", "unknown", "note", f"operand {name}: the descriptor "
                      f"{ins.operands[slot]} is not a register the evaluator reads", data), None
    hi, texts = ctx.constant(e & z3.BitVecVal(_HIGH, 64))
    data["assumptions"] = texts
    if hi is None:
        return _check(ins, "mma-descriptor", "unknown", "note", f"operand {name}: the descriptor's bits "
                      "16-63 (LBO, SBO, base offset, swizzle) are not one constant (free values on its path: "
                      f"{sorted(ctx.ev.opaque)[:3]})", data), None
    warn = None
    if (hi >> 62) & 3 == 0 and hi & _BASE_OFFSET:
        # as in the plan audit: the PTX ISA defines the base offset for the swizzling modes only;
        # Triton 3.9 sets it on unswizzled operands. A warning; the check goes on without it.
        warn = _check(ins, "mma-descriptor", "counterexample", "warning", f"operand {name}: base offset "
                      f"{(hi & _BASE_OFFSET) >> 49} is set on an unswizzled operand; the PTX ISA defines the "
                      "field for the swizzling modes only; an H100 ignored it in every unswizzled case measured "
                      "(docs/ground_truth.md), and the check goes on without it", dict(data))
        hi &= ~_BASE_OFFSET
        warns.append(warn)
    desc = decode(hi, "sm_90")
    data.update(ptx_fields=f"{hi:#018x}", lbo=desc.lbo, sbo=desc.sbo, swizzle=desc.swizzle,
                base_offset=desc.base_offset)
    if dtype not in DTYPE_BITS:
        return _check(ins, "mma-descriptor", "unknown", "note", f"operand {name}: type {dtype} is not "
                      "modelled", data), None
    findings = contract_findings(desc, major=major, dtype=dtype, mn_extent=mn)
    hard = [f for f in findings if f.rule not in _INFERRED]
    if hard:
        return _check(ins, "mma-descriptor", "counterexample", "error",
                      f"operand {name} ({dtype}, {major}-major, {mn} x {k}): descriptor fields {hi:#018x} break "
                      "the descriptor contract: " + "; ".join(f.message for f in hard),
                      dict(data, rules=[f.rule for f in hard])), None
    try:
        fn = hardware_address_function(desc, major=major, dtype=dtype, mn_extent=mn)
    except LayoutError as err:
        return _check(ins, "mma-descriptor", "unknown", "note", f"operand {name}: {err}", data), None
    clash = _injective(fn)
    if clash is not None:
        a, b, c, d = clash
        return _check(ins, "mma-descriptor", "counterexample", "error",
                      f"operand {name} ({dtype}, {major}-major, {mn} x {k}): the canonical layout of fields "
                      f"{hi:#018x} (LBO {desc.lbo} B, SBO {desc.sbo} B, {desc.swizzle}) reads elements "
                      f"(mn={a}, k={b}) and (mn={c}, k={d}) from the same byte {fn.eval(a, b) // 8}",
                      dict(data, witness={"first": [a, b], "second": [c, d], "byte": fn.eval(a, b) // 8})), None
    op = _Operand(ins, name, e, desc, major, dtype, mn, k)
    note = "".join(f"; inferred rule {f.rule}: {f.message}" for f in findings if f.rule in _INFERRED)
    bad = _pattern_start_check(ctx, ins, name, desc, op, data)
    if bad is not None:
        return bad, op
    return _check(ins, "mma-descriptor", "proved", None,
                  f"operand {name} ({dtype}, {major}-major, {mn} x {k}): fields {hi:#018x} (LBO {desc.lbo} B, "
                  f"SBO {desc.sbo} B, {desc.swizzle}) select a canonical layout that reads each element from "
                  f"its own byte" + (", start in the first row of a swizzle repeat" if desc.swizzle != "none"
                                     else "") + note, data), op


def _k_step_bytes(op: _Operand) -> int:
    """Bytes from K-block ``k`` to ``k + 1`` in the canonical layout extended along K."""
    fn = hardware_address_function(op.desc, major=op.major, dtype=op.dtype, mn_extent=op.mn)
    ext = replace(fn, extents=(("mn", op.mn), ("k", 2 * op.k)), const=0, swizzle=None, post=0)
    return ext.eval(0, op.k) // 8


def _bytes_read(op: _Operand, at: int) -> set[int]:
    """The bytes one K-block reads when its start lies ``at`` bytes past a swizzle repeat (the
    swizzle acts on absolute address bits: the 1024-byte aligned base is assumed)."""
    fn = hardware_address_function(op.desc, major=op.major, dtype=op.dtype, mn_extent=op.mn)
    width = max(DTYPE_BITS[op.dtype] // 8, 1)
    first = replace(fn, const=at * 8).table().reshape(-1) // 8
    return {int(b) + j for b in first for j in range(width)}


def _row_position(ctx: _Ctx, op: _Operand, modulus: int) -> int | None:
    """The operand's start modulo ``modulus`` bytes when it is one constant, else None."""
    p, _ = ctx.constant(z3.URem(z3.ZeroExt(18, op.start()) * 16, modulus))
    return p


def _offset(ctx: _Ctx, ref: _Operand, cur: _Operand) -> tuple[int | None, list[str]]:
    """Bytes from ``ref``'s start to ``cur``'s (the 14-bit field's difference, signed), or None."""
    d, texts = ctx.constant(z3.Extract(13, 0, cur.start() - ref.start()))
    if d is None:
        return None, texts
    return (d * 16 if d < 1 << 13 else (d - (1 << 14)) * 16), texts


def _new_column(op: _Operand, prev_pos: int, want: int) -> bool:
    """A K-major swizzled K-block after one at ``prev_pos`` in its swizzle row must start a new atom
    column: the next ``want`` bytes would run past the row."""
    if op.desc.swizzle == "none" or op.major != "K":
        return False
    return prev_pos + 2 * want > 16 * swizzle_units(op.desc.swizzle)


def _advance_check(ctx: _Ctx, hist: list[_Operand], cur: _Operand, kb: int, data: dict) -> Check:
    """K-block ``kb`` of a chain against the last K-block that passed (``hist[-1]``, ``s`` K-blocks
    back; ``hist[0]`` is K-block 0): the canonical layout extended along K puts it ``s`` K-blocks on
    (``+32`` bytes a K-block for a K-major swizzled f16 operand inside its swizzle row). A K-major
    swizzled K-block that would run past the swizzle row starts a new atom column (CuTe's ``tile_to_shape`` of a swizzle atom: the column's
    size, a multiple of the swizzle repeat, past the previous column's start): its start must be
    at the start of a swizzle repeat and it must read no byte an earlier K-block of the chain reads
    (an inference: the atoms' placement is not in the descriptor)."""
    first, prev = hist[0], hist[-1]
    name = cur.name
    data = dict(data, operand=name, k_block=kb)
    if first.desc.value & _HIGH != cur.desc.value & _HIGH:
        return _check(cur.ins, "mma-descriptor", "counterexample", "error",
                      f"operand {name}, K-block {kb}: fields {cur.desc.value:#018x} differ from K-block 0's "
                      f"{first.desc.value:#018x} (line {first.ins.line}): one operand, one layout", data)
    want = _k_step_bytes(cur)
    desc = cur.desc
    steps, crossing = kb - prev.kb, False
    if desc.swizzle != "none" and cur.major == "K":
        pp = _row_position(ctx, prev, 16 * swizzle_units(desc.swizzle))
        if pp is None:
            return _check(cur.ins, "mma-descriptor", "unknown", "note", f"operand {name}, K-block {kb}: "
                          f"K-block {prev.kb}'s place in its swizzle row is not one constant", data)
        crossing = _new_column(cur, pp + (steps - 1) * want, want)
    got, texts = _offset(ctx, prev, cur)
    data.update(reference_line=prev.ins.line, assumptions=texts)
    if got is None:
        return _check(cur.ins, "mma-descriptor", "unknown", "note", f"operand {name}, K-block {kb}: the "
                      f"start's distance to K-block {prev.kb} is not one constant", data)
    data.update(advance_bytes=got, k_block_bytes=want, from_k_block=prev.kb, new_column=crossing)
    if crossing:
        # the K-blocks after ``prev`` that still fit its row, then ``inside`` K-blocks into the new column
        inside = steps - 1 - ((16 * swizzle_units(desc.swizzle) - pp) // want - 1)
        if (inside + 1) * want > 16 * swizzle_units(desc.swizzle):
            return _check(cur.ins, "mma-descriptor", "unknown", "note", f"operand {name}, K-block {kb}: more "
                          f"than one atom column after K-block {prev.kb}, the last that passed", data)
        data.update(column_offset_bytes=inside * want)
        return _column_check(ctx, hist, cur, kb, got - inside * want, data)
    if got != steps * want:
        return _check(cur.ins, "mma-descriptor", "counterexample", "error",
                      f"operand {name}, K-block {kb}: starts {got} bytes after K-block {prev.kb} "
                      f"(line {prev.ins.line}); the {desc.swizzle} {cur.major}-major {cur.dtype} layout puts it "
                      f"{steps} x {want} = {steps * want} bytes on", data)
    return _check(cur.ins, "mma-descriptor", "proved", None,
                  f"operand {name}, K-block {kb}: starts {steps} K-block(s) ({steps * want} bytes) after "
                  f"K-block {prev.kb} (line {prev.ins.line})", data)


def _column_check(ctx: _Ctx, hist: list[_Operand], cur: _Operand, kb: int, got: int, data: dict) -> Check:
    """A K-block in a new atom column (see :func:`_advance_check`), whose column starts ``got``
    bytes after ``hist[-1]``: on a swizzle repeat, past the previous column's start, the K-block
    reading none of an earlier K-block's bytes."""
    prev, desc, name = hist[-1], cur.desc, cur.name
    rep = pattern_repeat_bytes(desc.swizzle)
    row = 16 * swizzle_units(desc.swizzle)
    p = _row_position(ctx, prev, rep)
    jump = None if p is None else got + p % row      # from the start of the previous column
    data.update(column_jump_bytes=jump)
    if p is None or jump <= 0 or (p + got) % rep:
        return _check(cur.ins, "mma-descriptor", "counterexample" if p is not None else "unknown",
                      "error" if p is not None else "note",
                      f"operand {name}, K-block {kb}: would run past the {row}-byte swizzle row of K-block "
                      f"{prev.kb} (line {prev.ins.line}), so it must start a new atom column: a whole number of "
                      f"{rep}-byte swizzle repeats past the column's start; its column starts {got} bytes after "
                      f"K-block {prev.kb}"
                      + ("" if jump is None else f" ({jump} bytes past the column's start)"), data)
    p0 = _row_position(ctx, hist[0], rep)
    seen: set[int] = set()
    for op in hist:
        d, _ = _offset(ctx, hist[0], op)
        if d is None or p0 is None:
            return _check(cur.ins, "mma-descriptor", "unknown", "note", f"operand {name}, K-block {kb}: the "
                          "earlier K-blocks' starts are not constants from K-block 0's", data)
        seen |= _bytes_read(op, p0 + d)
    d_cur, _ = _offset(ctx, hist[0], cur)
    clash = sorted(seen & _bytes_read(cur, p0 + d_cur))
    if clash:
        return _check(cur.ins, "mma-descriptor", "counterexample", "error",
                      f"operand {name}, K-block {kb}: its new atom column ({jump} bytes past the previous "
                      f"column's start) reads byte {clash[0] - p0} (from K-block 0's start) that an earlier "
                      "K-block of the chain reads", dict(data, witness_byte=clash[0] - p0))
    return _check(cur.ins, "mma-descriptor", "proved", None,
                  f"operand {name}, K-block {kb}: starts a new {desc.swizzle} atom column {jump} bytes "
                  f"({jump // rep} swizzle repeats) past the start of K-block {prev.kb}'s column (line "
                  f"{prev.ins.line}), reading no byte an earlier K-block reads (inferred rule: the "
                  "atoms' placement is not in the descriptor)", data)


def _tile_check(ctx: _Ctx, hist: list[_Operand], data: dict) -> Check | None:
    """Whether a chain's K-blocks of a K-major swizzled operand read every byte of the atom columns
    they span (the 8-row groups of each column, ``SBO`` apart, from the column's first row-start to
    its last group's end); None for other operands. The descriptor alone fixes one K-block's layout
    but not the tile's: an SBO that leaves bytes between a column's 8-row groups that no K-block of
    the chain reads is not CuTe's dense tile of the swizzle atom for the K extent advanced (SBO one
    repeat for atom columns stacked along MN, or the columns' count times the repeat for columns
    side by side), so the check is ``unknown`` with the bytes, never proved (the PTX alone does not
    say what the tile holds there)."""
    first = hist[0]
    if first.desc.swizzle == "none" or first.major != "K":
        return None
    desc, name = first.desc, first.name
    rep, row = pattern_repeat_bytes(desc.swizzle), 16 * swizzle_units(desc.swizzle)
    p0 = _row_position(ctx, first, rep)
    offs = [_offset(ctx, first, op)[0] for op in hist]
    kext = len(hist) * first.k
    data = dict(data, operand=name, k_block=0, k_extent=kext, sbo=desc.sbo, check_kind="chain-tile")
    if p0 is None or any(d is None for d in offs):
        why = (f"K-block 0's place in its {rep}-byte swizzle repeat is not one constant" if p0 is None
               else "the chain's K-block starts are not constants from K-block 0's")
        return _check(first.ins, "mma-descriptor", "unknown", "note", f"operand {name}: {why}: whether the "
                      "K-blocks tile the operand is not checked", data)
    want = _k_step_bytes(first)
    starts = [p0 + d for d in offs]
    cols = [starts[0] - starts[0] % row]
    for a, b in zip(starts, starts[1:]):
        if _new_column(first, a % row, want):
            cols.append(b - b % row)
    read: set[int] = set()
    for op, at in zip(hist, starts):
        read |= _bytes_read(op, at)
    span = (first.mn // 8 - 1) * desc.sbo + rep
    holes = [(c, b) for c in cols for b in range(c, c + span) if b not in read]
    data.update(columns=len(cols), column_starts=[c - p0 for c in cols])
    if not holes:
        return _check(first.ins, "mma-descriptor", "proved", None,
                      f"operand {name}: the chain's {len(hist)} K-blocks (K = {kext}) read every byte of the "
                      f"{len(cols)} {desc.swizzle} atom column(s) they span, {first.mn // 8} 8-row groups each "
                      f"{desc.sbo} bytes (SBO) apart: a dense tile of the swizzle atom", data)
    jumps = {b - a for a, b in zip(cols, cols[1:])}
    dense = len(cols) * rep if jumps == {rep} else rep
    c, b = holes[0]
    return _check(first.ins, "mma-descriptor", "unknown", "note",
                  f"operand {name}: with SBO {desc.sbo} bytes the chain's {len(hist)} K-blocks (K = {kext}) "
                  f"leave {len(holes)} byte(s) of their atom column(s) unread (first: byte {b - p0} from "
                  f"K-block 0's start); a dense {desc.swizzle} K-major tile of this K extent has SBO "
                  f"{dense}; the PTX alone does not say what the tile holds there (not proved)",
                  dict(data, first_unread=b - p0, dense_sbo=dense))


def _regions(mod: PtxModule, func: str) -> list[list[list[Instr]]]:
    """The wgmmas between a ``wgmma.fence`` and a ``wgmma.commit_group``, one list per region; in
    each, one chain per accumulator (the same registers), in program order."""
    regions: list[list[list[Instr]]] = []
    cur: dict[object, list[Instr]] = {}
    for i in mod.instrs:
        if i.func != func:
            continue
        if i.opcode.startswith(("wgmma.fence", "wgmma.commit_group")):
            if cur:
                regions.append(list(cur.values()))
            cur = {}
        elif i.opcode.startswith("wgmma.mma_async") and i.args:
            cur.setdefault(i.args[0], []).append(i)
    if cur:
        regions.append(list(cur.values()))
    return regions


def _region_tile_check(ctx: _Ctx, chains: list[list[_Operand]], data: dict) -> Check | None:
    """Whether the K-blocks of one region's chains (one per accumulator: the MN-blocks) read every
    byte from the lowest they read to the highest, each byte for one place of the operand (an
    MN-major operand: its 8-row K groups ``SBO`` apart, its MN atoms ``LBO`` apart); None for a
    K-major operand (:func:`_tile_check`) or chains of different fields. Holes, or one byte read
    for two places, are ``unknown`` with the byte: the descriptor alone does not fix the tile, and
    the PTX alone does not say what the tile holds there (never proved)."""
    first = chains[0][0]
    if first.major != "MN" or any(op.desc.value & _HIGH != first.desc.value & _HIGH for ch in chains for op in ch):
        return None
    desc, name = first.desc, first.name
    rep = pattern_repeat_bytes(desc.swizzle)
    p0 = _row_position(ctx, first, rep)
    data = dict(data, operand=name, k_block=0, check_kind="region-tile", chains=len(chains), sbo=desc.sbo,
                lbo=desc.lbo, k_extent=max(len(ch) for ch in chains) * first.k)
    places: dict[int, _Operand] = {}
    for ch in chains:
        for op in ch:
            d, _ = _offset(ctx, first, op)
            if d is None or p0 is None:
                why = (f"the first K-block's place in its {rep}-byte swizzle repeat is not one constant"
                       if p0 is None else "the region's K-block starts are not constants from its first")
                return _check(first.ins, "mma-descriptor", "unknown", "note", f"operand {name}: {why}: whether "
                              "the K-blocks tile the operand is not checked", data)
            places.setdefault(d, op)                 # one start read by several chains: one place
    read: dict[int, int] = {}
    clash = None
    for d, op in sorted(places.items()):
        for b in _bytes_read(op, p0 + d):
            if b in read and clash is None:
                clash = b
            read[b] = d
    lo, hi = min(read), max(read) + 1
    holes = [b for b in range(lo, hi) if b not in read]
    if clash is None and not holes:
        return _check(first.ins, "mma-descriptor", "proved", None,
                      f"operand {name}: the {len(places)} K-block(s) of the region's {len(chains)} chain(s) read "
                      f"every byte of [{lo - p0}, {hi - p0}) from the first's start, each once (LBO {desc.lbo} B, "
                      f"SBO {desc.sbo} B, {desc.swizzle}): a dense tile", data)
    what = (f"read byte {clash - p0} (from the first K-block's start) for two places of the operand" if clash is not None
            else f"leave {len(holes)} byte(s) of [{lo - p0}, {hi - p0}) unread (first: {holes[0] - p0})")
    return _check(first.ins, "mma-descriptor", "unknown", "note",
                  f"operand {name}: with LBO {desc.lbo} B and SBO {desc.sbo} B the K-blocks of the region's "
                  f"{len(chains)} chain(s) {what}; not a dense tile of the {desc.swizzle} {first.major}-major layout, "
                  "and the PTX alone does not say what the tile holds there (not proved)",
                  dict(data, first_unread=None if not holes else holes[0] - p0,
                       clash_byte=None if clash is None else clash - p0))


def _operand_link(ctx: _Ctx, ins: Instr, slot: int, name: str, shape: tuple, major: str, data: dict,
                  hist: dict[str, list[_Operand]], out: list[Check]) -> _Operand | bool | None:
    """The checks of one operand of one K-block appended to ``out`` (its descriptor, and its
    advance from the chain's last K-block that passed); the operand, False where its advance is
    an error (the chain goes on from the last good K-block), or None where the chain breaks."""
    try:
        cs, op = _operand_check(ctx, ins, slot, name, shape, major, data)
        out.extend(cs)
        if op is None:
            return None
        op.kb = data["k_block"]
        if hist.get(name):
            adv = _advance_check(ctx, hist[name], op, op.kb, data)
            out.append(adv)
            if adv.severity == "error":    # a wrong K-block is no reference for the next ones
                return False
        return op
    except (LayoutError, z3.Z3Exception) as err:
        out.append(_check(ins, "mma-descriptor", "unknown", "note", f"operand {name}: {err}",
                          dict(data, operand=name)))
    except (AssertionError, ValueError, KeyError, IndexError, TypeError) as err:
        why = f"internal error ({type(err).__name__}: {err})"
        out.append(_check(ins, "mma-descriptor", "unchecked", None, f"operand {name}: unchecked: "
                          f"{why}", dict(data, operand=name, reason=why)))
    return None


def _chain_checks(ctx_box: list, mod: PtxModule, ev: PtxValues, func: str, chain: list[Instr], chain_no: int,
                  out: list[Check]) -> dict[str, list[_Operand]]:
    """The checks of one chain appended to ``out`` (shapes, descriptors, advances, the K-major
    chain tile); the operands whose every K-block passed, by name."""
    hist: dict[str, list[_Operand]] = {}
    whole: dict[str, bool] = {}
    for kb, ins in enumerate(chain):
        shape = wgmma_shape(ins.opcode)
        if shape is None or len(ins.args) < 3:
            out.append(_check(ins, "mma-instruction", "unknown", "note",
                              f"{ins.opcode}: no m64nNkK shape and types to check", {}))
            whole = {n: False for n in ("A", "B")}
            continue
        a_is_reg = isinstance(ins.args[1], Vec)
        out.append(_instruction_check(ins, shape, a_is_reg))
        if ctx_box[0] is None:
            ctx_box[0] = _Ctx(ev, smem_offset_bound(mod, ev, func))
        majors = _majors(ins, shape, a_is_reg)
        data: dict[str, Any] = {"chain": chain_no, "k_block": kb}
        for slot, name in ((1, "A"), (2, "B")):
            if slot == 1 and a_is_reg:
                continue
            op = _operand_link(ctx_box[0], ins, slot, name, shape, majors[slot - 1], data, hist, out)
            if op is False:
                whole[name] = False
            elif op is not None:
                hist.setdefault(name, []).append(op)
                whole.setdefault(name, kb == 0)
            else:                      # a broken link: no later K-block of this chain is compared
                hist.pop(name, None)
                whole[name] = False
    kept = {}
    for name, ops in hist.items():
        if whole.get(name):
            kept[name] = ops
            tile = _tile_check(ctx_box[0], ops, {"chain": chain_no})
            if tile is not None:
                out.append(tile)
    return kept


def wgmma_checks_without_plan(ctx: PtxContext) -> list[Check]:
    """The checks of the module docstring for every ``wgmma.mma_async`` of ``ctx.ptx`` (``ctx.values``:
    one evaluator per function, reading the shared-memory base of the module)."""
    mod, evals = ctx.ptx, ctx.values
    out: list[Check] = []
    for func in mod.functions:
        ev = evals.get(func)
        if ev is None:
            continue
        ctx_box: list[_Ctx | None] = [None]       # built at the function's first wgmma
        chain_no = 0
        for region_no, region in enumerate(_regions(mod, func)):
            done: dict[str, list[list[_Operand]]] = {}
            for chain in region:
                for name, ops in _chain_checks(ctx_box, mod, ev, func, chain, chain_no, out).items():
                    done.setdefault(name, []).append(ops)
                chain_no += 1
            for name, chains in done.items():
                if len(chains) == len(region):
                    tile = _region_tile_check(ctx_box[0], chains, {"region": region_no})
                    if tile is not None:
                        out.append(tile)
    return out
