"""Symbolic values of PTX registers over z3 bit-vectors, and claims proved over them.

Law: :class:`PtxValues` gives each register of one PTX function the z3 expression of its single
definition, recursively; ``%tid.x`` is :data:`TID`, the address of a shared variable (Triton's
``global_smem``, or the names given) is :data:`SMEM`; kernel parameters, loads, registers defined
more than once (loop-carried) and unmodelled instructions are free symbols (listed in ``opaque``).
The PTX audit (``verilayout.audit.ptx``) and the independent check of emitted kernels
(``verilayout.simulate.ptx_check``) both read descriptors and addresses through it.

>>> from verilayout.frontends.ptx import parse_ptx
>>> v = PtxValues(parse_ptx(".version 8.7\\n.visible .entry f()\\n{\\nmov.b32 %r1, global_smem;\\n"
...                         "add.s32 %r2, %r1, 16;\\n}"))
>>> prove_claim(v.reg("%r2") == SMEM + 16)[0]
'proved'
"""
from __future__ import annotations

import re
from typing import Any

import z3

from verilayout.dtypes import ptx_bits
from verilayout.frontends.ptx import Instr, PtxModule, parse_immediate

__all__ = ["SMEM", "TID", "PtxValues", "reg_width", "fit", "prove_claim", "constant"]

#: The shared-memory base (the address of the kernel's shared variable), 32 bits.
SMEM = z3.BitVec("smem_base", 32)
#: ``%tid.x``.
TID = z3.BitVec("tid_x", 32)
#: Opcodes whose first operand is not a destination register.
NO_DEST = ("st", "bar", "bra", "fence", "ret", "exit", "membar", "red", "cp", "mbarrier", "wgmma",
           "tcgen05", "prefetch", "trap", "@", "barrier", "stmatrix", "elect", "griddepcontrol")


def reg_width(name: str) -> int:
    """The width in bits of a register by nvcc's and Triton's naming (``%rd`` 64, ``%rs`` 16,
    ``%p`` 1, others 32).

    >>> reg_width("%rd3"), reg_width("%rs1"), reg_width("%r7")
    (64, 16, 32)
    """
    if name.startswith("%rd"):
        return 64
    if name.startswith("%rs"):
        return 16
    if name.startswith("%p"):
        return 1
    return 32


def fit(e: z3.BitVecRef, w: int) -> z3.BitVecRef:
    """``e`` truncated or zero-extended to ``w`` bits.

    >>> z3.simplify(fit(z3.BitVecVal(0x1FF, 16), 8)).as_long(), fit(z3.BitVecVal(5, 8), 64).size()
    (255, 64)
    """
    n = e.size()
    return e if n == w else (z3.Extract(w - 1, 0, e) if n > w else z3.ZeroExt(w - n, e))


class PtxValues:
    """Symbolic values of a PTX function's registers (see the module docstring): ``reg(name)``
    and ``operand(text, width)`` give z3 bit-vectors; ``opaque`` names what became a free symbol.

    >>> from verilayout.frontends.ptx import parse_ptx
    >>> v = PtxValues(parse_ptx(".version 8.7\\n.visible .entry f()\\n{\\nmov.u32 %r1, buf;\\n"
    ...                         "shl.b32 %r2, %r1, 1;\\n}"), smem_names=("buf",))
    >>> z3.simplify(v.reg("%r2") - (SMEM << 1)).as_long()
    0
    """

    def __init__(self, mod: PtxModule, func: str | None = None, first_iteration: bool = False,
                 smem_names: tuple[str, ...] = ("global_smem",)):
        self.defs: dict[str, list[Instr]] = {}
        for i in mod.instrs:
            if func is not None and i.func != func:
                continue
            if i.operands and i.operands[0].startswith("%") and not i.opcode.startswith(NO_DEST) \
                    and not i.opcode.startswith("setp"):
                self.defs.setdefault(i.operands[0], []).append(i)
        self.first_iteration = first_iteration   # loop-carried registers take their first definition
        self.memo: dict[str, z3.BitVecRef] = {}
        self.opaque: set[str] = set()
        self.depth = 0
        self.smem_names = tuple(smem_names)   # shared variables whose address is SMEM

    def _sym(self, name: str, why: str) -> z3.BitVecRef:
        self.opaque.add(f"{name} ({why})")
        return z3.BitVec(f"v{name}", max(reg_width(name), 8))

    def reg(self, name: str) -> z3.BitVecRef:
        """The value of register ``name`` as a bit-vector of its width."""
        if name in self.memo:
            return self.memo[name]
        ds = self.defs.get(name, [])
        if self.first_iteration and len(ds) > 1:
            ds = ds[:1]                       # the value on entry to the loop: its first iteration
        if len(ds) != 1 or self.depth > 400:
            v = self._sym(name, "loop-carried" if len(ds) > 1 else "no definition")
        else:
            self.depth += 1
            try:
                v = self._instr(ds[0], reg_width(name))
            finally:
                self.depth -= 1
            if v is None:
                v = self._sym(name, ds[0].opcode)
        v = fit(v, max(reg_width(name), 8))
        self.memo[name] = v
        return v

    def operand(self, text: str, w: int) -> z3.BitVecRef | None:
        t = text.strip()
        if t in self.smem_names:
            return fit(SMEM, w)
        if t == "%tid.x":
            return fit(TID, w)
        imm = parse_immediate(t)
        if imm is not None:
            return z3.BitVecVal(imm % (1 << w), w)
        m = re.fullmatch(r"\{\s*(%[\w$]+)\s*,\s*(%[\w$]+)\s*\}", t)
        if m:                                          # mov.b64 %rd, {lo, hi}
            lo, hi = self.reg(m.group(1)), self.reg(m.group(2))
            return fit(z3.Concat(hi, lo), w)
        if t.startswith("%"):
            return fit(self.reg(t), w)
        return None

    def _instr(self, i: Instr, w: int) -> z3.BitVecRef | None:
        parts = i.parts
        head = parts[0]
        tw = next((ptx_bits(p) for p in reversed(parts) if ptx_bits(p)), w)
        ops = [self.operand(o, tw) for o in i.operands[1:]]
        if head == "selp" and len(i.operands) == 4:
            a, b = ops[0], ops[1]
            if a is None or b is None:
                return None
            return z3.If(z3.Bool(f"pred{i.operands[3].strip()}"), a, b)
        if any(o is None for o in ops) and head not in ("cvt", "selp"):
            return None
        if head == "mov" and len(ops) == 1:
            return ops[0]
        if head in ("add", "sub", "and", "or", "xor", "shl", "shr", "mul", "mad") and len(ops) >= 2:
            a, b = ops[0], ops[1]
            if head == "add":
                return a + b
            if head == "sub":
                return a - b
            if head == "and":
                return a & b
            if head == "or":
                return a | b
            if head == "xor":
                return a ^ b
            if head == "shl":
                return a << b
            if head == "shr":
                return a >> b if "s32" in parts or "s64" in parts else z3.LShR(a, b)
            if head == "mul" and "lo" in parts:
                return a * b
            if head == "mad" and "lo" in parts and len(ops) == 3:
                return a * b + ops[2]
            return None
        if head == "not" and len(ops) == 1:
            return ~ops[0]
        if head == "bfe" and len(ops) == 3:
            pos, ln = (parse_immediate(o) for o in i.operands[2:4])
            if pos is None or ln is None or not 0 < ln <= tw or pos + ln > tw:
                return None
            field = z3.Extract(pos + ln - 1, pos, ops[0])
            signed = "s32" in parts or "s64" in parts
            return z3.SignExt(tw - ln, field) if signed else z3.ZeroExt(tw - ln, field)
        if head == "cvt" and len(i.operands) == 2:
            dst_w = next((ptx_bits(p) for p in parts[1:2] if ptx_bits(p)), w)
            src_w = next((ptx_bits(p) for p in parts[2:] if ptx_bits(p)), w)
            src = self.operand(i.operands[1], src_w)
            if src is None:
                return None
            if dst_w > src_w:
                return z3.SignExt(dst_w - src_w, src) if parts[1].startswith("s") else z3.ZeroExt(dst_w - src_w, src)
            return z3.Extract(dst_w - 1, 0, src)
        return None


def prove_claim(claim: z3.BoolRef, assume: z3.BoolRef | None = None,
                timeout_ms: int = 5000) -> tuple[str, Any]:
    """``("proved", None)`` if ``claim`` holds for every value of its symbols under ``assume``,
    ``("counterexample", model)`` if not, ``("unknown", None)`` on a solver timeout.

    >>> x = z3.BitVec("x", 8)
    >>> prove_claim(x & 0 == 0)[0], prove_claim(x == 1)[0]
    ('proved', 'counterexample')
    """
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    if assume is not None:
        s.add(assume)
    s.add(z3.Not(claim))
    r = s.check()
    if r == z3.unsat:
        return "proved", None
    if r == z3.sat:
        return "counterexample", s.model()
    return "unknown", None


def constant(e: z3.BitVecRef, assume: z3.BoolRef | None = None) -> int | None:
    """``e``'s value if it is one constant for every value of its symbols under ``assume``,
    else None (also when the solver times out).

    >>> x = z3.BitVec("x", 8)
    >>> constant(z3.LShR(x & 0xF0, 8)), constant(x & 1), constant(x & 1, x == 3)
    (0, None, 1)
    """
    e = z3.simplify(e)
    if z3.is_bv_value(e):
        return e.as_long()
    s = z3.Solver()
    s.set("timeout", 3000)
    if assume is not None:
        s.add(assume)
    if s.check() != z3.sat:
        return None
    v = s.model().eval(e, model_completion=True).as_long()
    return v if prove_claim(e == v, assume)[0] == "proved" else None
