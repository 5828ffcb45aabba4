"""Bank-conflict proofs: GF(2) for linear layouts, z3 for everything else.

The model (banks, phases, instructions) is :mod:`verilayout.hw.nvidia.banks`. Here:

* :func:`linear_analysis_and_triton` (its first result): both layouts GF(2)-linear. One phase of one
  instruction reads the byte addresses ``A = a0 xor span(G)``, where ``G`` holds the
  byte offset moved by each input bit that varies inside the phase (the vector
  registers and the phase's lanes) and the bytes inside one element. Two addresses
  of the phase clash when they differ by a vector whose bank bits (byte bits
  ``2 .. 2 + log2(num_banks)``) are zero and whose word bits above the banks are
  not. Those differences form a subspace; if its projection on the word bits above
  the banks has dimension ``c``, every bank that is hit receives exactly ``2**c``
  distinct words (all banks hit see the same coset structure), so the phase takes
  ``2**c`` wavefronts, and every phase and instruction is a coset of the same space.
  No enumeration: Gaussian elimination on ``log2(phase size) + 3`` vectors.
* :func:`z3_bank_analysis`: the shared side is an arbitrary address function
  (padded layouts, CuTe layouts with any strides, explicit functions). z3 decides
  whether ``k`` accesses of one phase can share a bank with pairwise distinct words,
  for growing ``k``; the largest satisfiable ``k`` is the phase's wavefront count,
  and the ``k = 2`` query is the conflict-freedom proof.
* :func:`triton_bank_conflicts`: the number Triton 3.9's
  ``GluonOpBuilder.get_shared_bank_conflicts`` (C++ ``bankConflictsMemDesc``) returns,
  recomputed here. Definition (read from Triton's ``lib/Tools/GenericSwizzling.cpp``
  and ``LayoutUtils.cpp``, and checked against the wheel on random pairs):

  1. drop the register bases that are zero (broadcast copies);
  2. ``cvt = reg.invertAndCompose(smem)``; the vector is the largest ``v <= 128/bits``
     such that ``log2 v`` register bases are exactly offsets ``1, 2, ..., v/2`` (block 0)
     and every other basis of ``cvt`` is a multiple of ``v`` in offset;
  3. reshape the shared layout's flattened inputs (offset, then block) into
     ``vector`` (``v``), ``bank`` (``min(32*32/(v*bits), size)``) and ``segment``
     (the rest); a segment of size 0 (tensor smaller than one 128-byte row while
     ``v > 1``) makes Triton abort: we return ``None``;
  4. the lane tile is the lane bases of the register layout (flattened tensor
     index), without the last ``max(0, log2(max(1, v*bits/32)) + log2(lanes) - 5)``
     of them (one phase);
  5. the answer is ``2**k - 1``, where ``k`` counts the segment bases that are also
     lane-tile bases when all of them are powers of two, and is otherwise the
     dimension of the intersection of their spans.

  So it is "excess accesses per wavefront" measured on the segment bits only: it
  agrees with the hardware count when the lanes of a phase differ by whole words,
  and undercounts when a lane basis mixes bits below a word with bits above the
  banks (e.g. 16-bit elements in a ``vec=1`` swizzle read down a column): the
  ``wavefronts`` of a report are the hardware count, ``triton_conflicts`` this figure.
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from verilayout.bits import log2 as _log2
from verilayout.core import gf2
from verilayout.core.linear_layout import LinearLayout
from verilayout.core.smt import DEFAULT_TIMEOUT_MS, Verdict, check_claim, record_query, solve, z3_apply_linear
from verilayout.errors import LayoutError
from verilayout.hw.amd import lds as amd_lds
from verilayout.hw.nvidia.banks import AUTO_RULE, AccessPlan, BankModel, BitImages, Instruction, SharedAddressMap, \
    as_shared, element_bytes, ld_st, plan_access, widest_vector, ldst_vector, widest_chain

REG_DIMS = ("register", "lane", "warp", "block")


# ----- report pieces ---------------------------------------------------------------------

@dataclass(frozen=True)
class Access:
    """One lane's access in a witness: who, which element, where, which bank.

    ``byte_address`` is the address of the accessed bytes that fall in ``bank`` (the
    element's first byte, or its second 4-byte word for a 64-bit element).
    """

    lane: int
    register: int
    warp: int
    block: int
    element: dict
    offset: int
    byte_address: int
    bank: int
    word: int

    def to_dict(self) -> dict:
        return {"lane": self.lane, "register": self.register, "warp": self.warp, "block": self.block,
                "element": dict(self.element), "offset": self.offset, "byte_address": self.byte_address,
                "bank": self.bank, "word": self.word}

    def describe(self) -> str:
        coords = ", ".join(str(v) for v in self.element.values())
        return (f"lane {self.lane} register {self.register} -> element ({coords}) at byte "
                f"{self.byte_address} (bank {self.bank}, word {self.word})")


@dataclass(frozen=True)
class Witness:
    """Accesses of one phase of one instruction that hit one bank at distinct words.

    The first two are the conflicting pair; all of them together show that the phase
    needs at least ``len(accesses)`` wavefronts.
    """

    instruction: str
    warp: int
    accesses: tuple

    @property
    def bank(self) -> int:
        return self.accesses[0].bank

    def to_dict(self) -> dict:
        return {"instruction": self.instruction, "bank": self.bank, "warp": self.warp,
                "accesses": [a.to_dict() for a in self.accesses]}

    def describe(self) -> str:
        a, b = self.accesses[0], self.accesses[1]
        more = f" ({len(self.accesses)} accesses hit this bank at distinct words)" \
            if len(self.accesses) > 2 else ""
        return (f"{self.instruction}, warp {self.warp}: {a.describe()}; {b.describe()}: "
                f"same bank, different words{more}")


@dataclass(frozen=True)
class BankAnalysis:
    """What one analysis found (the facade wraps it into a report)."""

    plan: AccessPlan
    wavefronts: int | None
    verdict: Verdict
    witness: Witness | None
    method: str
    exact: bool = True
    details: dict = field(default_factory=dict)
    bound: str = "exact"  # "exact", "at least", "at most", or "unknown" (wavefronts is None)


# ----- linear: the pair, packed ------------------------------------------------------------

def _check_reg(reg: LinearLayout) -> None:
    if not isinstance(reg, LinearLayout):
        raise LayoutError(f"register layout: expected a LinearLayout, got {type(reg).__name__}")
    dims = reg.in_dim_names
    for need in ("register", "lane"):
        if need not in dims:
            raise LayoutError(f"register layout has no '{need}' input dim (has {dims})")
    extra = [d for d in dims if d not in REG_DIMS]
    if extra:
        raise LayoutError(f"register layout: unknown input dims {extra} (expected {list(REG_DIMS)})")


def _check_smem(smem: LinearLayout) -> None:
    if not isinstance(smem, LinearLayout):
        raise LayoutError(f"shared layout: expected a LinearLayout, got {type(smem).__name__}")
    dims = smem.in_dim_names
    if "offset" not in dims:
        raise LayoutError(f"shared layout has no 'offset' input dim (has {dims})")
    extra = [d for d in dims if d not in ("offset", "block")]
    if extra:
        raise LayoutError(f"shared layout: unknown input dims {extra} (expected ['offset', 'block'])")


def align_outs(reg: LinearLayout, smem) -> LinearLayout:
    """The register layout with the shared side's output dims (same order and sizes)."""
    shape = dict(smem.out_dims) if isinstance(smem, LinearLayout) else dict(smem.shape)
    if set(reg.out_dim_names) != set(shape):
        raise LayoutError(f"register layout covers dims {reg.out_dim_names}, shared layout "
                          f"{list(shape)}")
    if reg.out_dim_names != list(shape):
        reg = reg.transpose_outs(list(shape))
    for n, s in reg.out_dims.items():
        if s > shape[n]:
            raise LayoutError(f"register layout's {n} has size {s}, the shared layout's only {shape[n]}")
    if reg.out_dims != shape:
        reg = reg.with_out_dim_sizes(shape)
    return reg


@dataclass(frozen=True)
class _Pair:
    """A register layout and a shared layout, packed: tensor indices as ints (first dim lowest).

    ``cols[d][i]``: tensor index held by input ``d = 2**i``; ``off``/``blk``: the element
    offset and CTA where that index lives (the conversion ``reg`` then ``smem**-1``, which is
    linear, so one solve per basis).
    """

    reg: LinearLayout
    smem_cols: tuple
    names: tuple
    bits: tuple
    cols: dict
    off: dict
    blk: dict
    zero: dict
    offset_bits: int
    table: dict

    def coords(self, packed: int) -> dict:
        out = {}
        for n, b in zip(self.names, self.bits):
            out[n] = packed & ((1 << b) - 1)
            packed >>= b
        return out

    def images(self) -> BitImages:
        return BitImages(self.off, self.blk, self.zero)


def _pair(reg: LinearLayout, smem: LinearLayout) -> _Pair:
    _check_reg(reg)
    _check_smem(smem)
    if smem.in_dim_names[0] != "offset":
        smem = smem.transpose_ins(["offset", "block"])
    # LinearLayout keeps (name, log2 size) pairs and packed columns: read them directly (hot path)
    s_out, r_out = smem._out, reg._out
    names = tuple(n for n, _ in s_out)
    bits = tuple(b for _, b in s_out)
    rbits = dict(r_out)
    if set(rbits) != set(names):
        raise LayoutError(f"register layout covers dims {reg.out_dim_names}, shared layout {list(names)}")
    for n, b in s_out:
        if rbits[n] > b:
            raise LayoutError(f"register layout's {n} has size {1 << rbits[n]}, the shared layout's only "
                              f"{1 << b}")
    smem_cols = smem._cols
    table = gf2.echelon(list(smem_cols))
    if len(table) != sum(bits):
        raise LayoutError("shared layout does not reach every tensor element (not surjective)")
    off_bits = dict(smem._in)["offset"]
    p = _Pair(reg, smem_cols, names, bits, {}, {}, {}, {}, off_bits, table)
    if r_out == s_out:
        flat, k = reg._cols, 0          # already packed like the shared layout
        per_dim = {}
        for d, nb in reg._in:
            per_dim[d] = flat[k:k + nb]
            k += nb
    else:
        shifts, acc = [], 0
        for b in bits:
            shifts.append(acc)
            acc += b
        idx = [reg.out_dim_names.index(n) for n in names]
        per_dim = {d: [sum(b[i] << sh for i, sh in zip(idx, shifts)) for b in blist]
                   for d, blist in reg.bases.items()}
    mask = (1 << off_bits) - 1
    for d, cols in per_dim.items():
        p.cols[d] = cols
        offs, blks = [], []
        for c in cols:
            comb = 0
            while c:
                pv, pc = table[c.bit_length() - 1]
                c ^= pv
                comb ^= pc
            offs.append(comb & mask)
            blks.append(comb >> off_bits)
        p.off[d] = offs
        p.blk[d] = blks
        p.zero[d] = [c == 0 for c in cols]
    return p


def conversion(reg: LinearLayout, smem: LinearLayout) -> LinearLayout:
    """``reg`` followed by the inverse of ``smem``: register-layout inputs -> (offset, block).

    >>> from verilayout.core.linear_layout import identity_standard_nd
    >>> smem = identity_standard_nd("offset", [32], [0])
    >>> conversion(LinearLayout.identity1D(32, "lane", "dim0") * LinearLayout.identity1D(1, "register", "dim0"), smem).apply({"lane": 5, "register": 0})
    {'offset': 5}
    """
    _check_smem(smem)
    reg = align_outs(reg, smem)
    return reg.invert_and_compose(smem)


def bit_images(reg: LinearLayout, smem: LinearLayout) -> BitImages:
    """Element offset and CTA reached by every input bit of ``reg`` in ``smem``."""
    return _pair(reg, smem).images()


def _access(reg: LinearLayout, smem_offset, ins: Mapping[str, int], byte: int, elem_bits: int,
            model: BankModel) -> Access:
    coords = reg.apply({d: ins.get(d, 0) for d in reg.in_dim_names})
    off = smem_offset(coords)
    addr = off * element_bytes(elem_bits) + byte
    return Access(ins.get("lane", 0), ins.get("register", 0), ins.get("warp", 0), ins.get("block", 0),
                  coords, off, addr, model.bank(addr), model.word(addr))


def _same_bank_space(gens: list[int], model: BankModel) -> list[int]:
    """Selection masks over ``gens`` whose XORs hit one bank at independent distinct words."""
    lo = 2
    nb = model.log2_banks
    bank_parts = [(g >> lo) & ((1 << nb) - 1) for g in gens]
    null = gf2.nullspace(bank_parts)
    rows = [gf2.xor_span(gens, s) >> (lo + nb) for s in null]
    table = gf2.echelon(rows)
    out = []
    for _, (_, comb) in sorted(table.items()):
        sel = 0
        for i, s in enumerate(null):
            if (comb >> i) & 1:
                sel ^= s
        out.append(sel)
    return out


def _conflict_space(img: BitImages, plan: AccessPlan, model: BankModel) -> tuple[list, list[int]]:
    """(labels of the generators, selection masks spanning the same-bank distinct-word space)."""
    beta = _log2(element_bytes(plan.elem_bits))
    labels = list(plan.phase_bits) + [("byte", b) for b in range(beta)]
    gens = [img.offset[d][j] << beta for d, j in plan.phase_bits] + [1 << b for b in range(beta)]
    return labels, _same_bank_space(gens, model)


def plan_wavefronts(img: BitImages, plan: AccessPlan, model: BankModel = BankModel()) -> int:
    """Wavefronts per instruction of a planned access (GF(2), no witness).

    >>> from verilayout.hw.nvidia.banks import plan_access
    >>> img = BitImages({"register": [], "lane": [32, 64, 128, 256, 0]}, {"register": [], "lane": [0] * 5},
    ...                 {"register": [], "lane": [False] * 5})
    >>> plan_wavefronts(img, plan_access(img, None, 32))
    16
    """
    return (1 << len(_conflict_space(img, plan, model)[1])) * plan.phases_per_instruction


def _group(p: _Pair, labels, sels: list[int], elem_bits: int, model: BankModel, limit: int) -> tuple:
    """The accesses ``xor`` of any subset of ``sels`` (from the origin): one bank, distinct words."""
    dims = ("register", "lane", "warp", "block")
    basis = []
    for sel in sels:  # (register, lane, warp, block, packed index, offset, byte)
        acc = [0] * 7
        for i, (d, j) in enumerate(labels):
            if (sel >> i) & 1:
                if d == "byte":
                    acc[6] ^= 1 << j
                else:
                    acc[dims.index(d)] ^= 1 << j
                    acc[4] ^= p.cols[d][j]
                    acc[5] ^= p.off[d][j]
        basis.append(acc)
    eb = element_bytes(elem_bits)
    out = []
    acc = [0] * 7
    for m in range(min(1 << len(sels), limit)):
        if m:  # Gray-code order: one basis vector changes per step
            b = basis[(m & -m).bit_length() - 1]
            acc = [x ^ y for x, y in zip(acc, b)]
        addr = acc[5] * eb + acc[6]
        out.append(Access(acc[1], acc[0], acc[2], acc[3], p.coords(acc[4]), acc[5], addr,
                          model.bank(addr), model.word(addr)))
    return tuple(out)


def _linear(p: _Pair, elem_bits: int, instruction: Instruction | None, model: BankModel, store: bool,
            max_witness: int) -> BankAnalysis:
    img = p.images()
    plan = plan_access(img, instruction, elem_bits, model, store)
    labels, sels = _conflict_space(img, plan, model)
    c = len(sels)
    per_phase = 1 << c
    wave = per_phase * plan.phases_per_instruction
    if c == 0:
        v = Verdict.holds(
            f"{plan.instruction.name}: the {len(plan.phase_bits)} input bits of a phase reach "
            f"distinct banks or the same word (GF(2) rank); every phase and instruction is a "
            f"coset of the same subspace", method="gf2")
        return BankAnalysis(plan, wave, v, None, "gf2")
    w = Witness(plan.instruction.name, 0, _group(p, labels, sels, elem_bits, model, max_witness))
    return BankAnalysis(plan, wave, _conflict_verdict(w, per_phase, "gf2"), w, "gf2")


def _conflict_verdict(w: Witness, ways: int, method: str) -> Verdict:
    """The counterexample: the first two accesses of the witness (the report keeps all of them)."""
    a, b = w.accesses[0], w.accesses[1]
    cex = {"instruction": w.instruction, "warp": w.warp, "bank": a.bank, "a": a.to_dict(), "b": b.to_dict()}
    return Verdict.fails(cex, f"{ways}-way bank conflict in bank {a.bank}: lanes {a.lane} and {b.lane} of one "
                         f"phase of {w.instruction} read words {a.word} and {b.word}", method=method)


def linear_analysis_and_triton(reg: LinearLayout, smem: LinearLayout, elem_bits: int,
                               instruction: Instruction | None = None, model: BankModel = BankModel(),
                               store: bool = False, max_witness: int = 32) -> tuple[BankAnalysis, int | None]:
    """The GF(2) analysis (exact wavefronts of ``instruction``, None: the widest ld/st, with
    witness) and :func:`triton_bank_conflicts`, sharing one conversion."""
    p = _pair(reg, smem)
    res = _linear(p, elem_bits, instruction, model, store, max_witness)
    # Triton vectorises exactly as "auto" does (largestVectorisation): reuse the plan's vector
    vec = res.plan.vector_elems if instruction is None else None
    return res, _triton(p, elem_bits, 32, vec)


# ----- Triton's figure -----------------------------------------------------------------

def _triton_vector(p: _Pair, elem_bits: int, off_size: int) -> int:
    regs = [(o, b) for o, b, z in zip(p.off["register"], p.blk["register"], p.zero["register"]) if not z]
    v = max(1, 128 // elem_bits)
    while v >= 1:
        k = _log2(v)
        used: list[int] = []
        for i in range(k):
            hit = next((j for j, (o, b) in enumerate(regs) if o == 1 << i and b == 0 and j not in used), None)
            if hit is None:
                break
            used.append(hit)
        if len(used) == k and off_size % v == 0:
            ok = all(o % v == 0 for j, (o, _) in enumerate(regs) if j not in used) and \
                all(o % v == 0 for d, offs in p.off.items() if d != "register" for o in offs)
            if ok:
                return v
        v //= 2
    return 1


_POWERS_OF_TWO = frozenset(1 << i for i in range(64))


def _intersection_count(seg: list[int], tile: list[int]) -> int:
    if _POWERS_OF_TWO.issuperset(seg) and _POWERS_OF_TWO.issuperset(tile):  # Triton's shortcut
        s2 = set(tile)
        return sum(1 for x in seg if x != 0 and x in s2)
    return gf2.rank(seg) + gf2.rank(tile) - gf2.rank(seg + tile)  # dim of the span intersection


def _triton(p: _Pair, elem_bits: int, num_banks: int, vec: int | None = None) -> int | None:
    off_size = 1 << p.offset_bits
    v = vec if vec is not None else _triton_vector(p, elem_bits, off_size)
    total = 1 << len(p.smem_cols)
    bank = min(num_banks * 32 // (v * elem_bits), total)
    if total // (bank * v) < 1:
        return None  # Triton's reshapeIns asserts on a segment of size 0 (the wheel aborts)
    seg = list(p.smem_cols[_log2(v) + _log2(bank):])
    lanes = list(p.cols["lane"])
    nl = len(lanes)
    log2vec = _log2(max(1, v * elem_bits // 32))
    log2phase = max(0, log2vec + nl - _log2(num_banks))
    tile = lanes[:nl - log2phase]
    return (1 << _intersection_count(seg, tile)) - 1


def triton_bank_conflicts(reg: LinearLayout, smem: LinearLayout, elem_bits: int,
                          num_banks: int = 32) -> int | None:
    """Triton 3.9's ``get_shared_bank_conflicts`` for this pair (see the module docstring).

    ``None`` where Triton's own computation aborts (segment of size 0).

    >>> from verilayout.core.linear_layout import identity_standard_nd
    >>> reg = LinearLayout({"register": [], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]]}, ["dim0", "dim1"])
    >>> triton_bank_conflicts(reg, identity_standard_nd("offset", [16, 32], [1, 0]), 32)
    15
    """
    return _triton(_pair(reg, smem), elem_bits, num_banks)


# ----- z3: shared memory that is not GF(2)-linear --------------------------------------------

def _probe_images(reg: LinearLayout, amap: SharedAddressMap) -> BitImages:
    """Offsets moved by each input bit alone (from the origin): the candidate plan's input."""
    zero_in = {d: 0 for d in reg.in_dim_names}
    base = amap.offset(reg.apply(zero_in))
    rb = reg.bases
    offset, block, zero = {}, {}, {}
    for d in reg.in_dim_names:
        offs = []
        for j in range(len(rb[d])):
            ins = dict(zero_in)
            ins[d] = 1 << j
            offs.append(amap.offset(reg.apply(ins)) - base)
        offset[d] = [o if o >= 0 else -1 for o in offs]  # -1: never contiguous, never aligned
        block[d] = [0] * len(offs)
        zero[d] = [not any(v) for v in rb[d]]
    return BitImages(offset, block, zero)


class _Z3Access:
    """z3 variables of one access: full input bit-vectors plus the byte inside the element."""

    def __init__(self, reg: LinearLayout, tag: str, beta: int):
        import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
        self.vars = {d: z3.BitVec(f"{d}_{tag}", max(1, reg.in_dim_size(d).bit_length() - 1))
                     for d in reg.in_dim_names}
        self.byte = z3.BitVec(f"byte_{tag}", max(1, beta)) if beta else None


def _z3_address(reg: LinearLayout, amap: SharedAddressMap, acc: _Z3Access, elem_bits: int, width: int):
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    coords = z3_apply_linear(reg, acc.vars)
    off = amap.z3_fn(coords)
    off = z3.ZeroExt(width - off.size(), off) if off.size() < width else z3.Extract(width - 1, 0, off)
    addr = off * element_bytes(elem_bits)
    if acc.byte is not None:
        addr = addr + z3.ZeroExt(width - acc.byte.size(), acc.byte)
    return addr


def _bit(v, j):
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    return z3.Extract(j, j, v)


class _Z3Problem:
    """The accesses of phases of one instruction, as z3 terms."""

    def __init__(self, reg, amap, plan: AccessPlan, model: BankModel, timeout_ms: int):
        self.reg, self.amap, self.plan, self.model = reg, amap, plan, model
        self.timeout_ms = timeout_ms
        self.beta = _log2(element_bytes(plan.elem_bits))
        self.width = max(amap.width, 8) + self.beta + 2
        self.phase = set(plan.phase_bits)
        self.select = list(plan.phase_select)
        self.zero = {d: [not any(v) for v in b] for d, b in reg.bases.items()}

    def new_access(self, tag: str) -> tuple[_Z3Access, object]:
        a = _Z3Access(self.reg, tag, self.beta)
        return a, _z3_address(self.reg, self.amap, a, self.plan.elem_bits, self.width)

    def tie(self, a: _Z3Access, b: _Z3Access, same_phase: bool = True) -> list:
        """Constraints: b is the same instruction (and, if asked, the same phase) as a."""
        cons = []
        for d, v in a.vars.items():
            for j in range(self.reg.in_dim_size(d).bit_length() - 1):
                if (d, j) in self.phase or (not same_phase and (d, j) in self.select):
                    continue
                cons.append(_bit(v, j) == _bit(b.vars[d], j))
        return cons

    def fixed(self, a: _Z3Access) -> list:
        """Broadcast register bits at 0 (they only name copies); size-1 dims at 0."""
        cons = [_bit(a.vars["register"], j) == 0 for j, z in enumerate(self.zero["register"]) if z]
        cons += [v == 0 for d, v in a.vars.items() if self.reg.in_dim_size(d) == 1]
        return cons

    def solver(self):
        import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
        s = z3.Solver()
        s.set("timeout", int(self.timeout_ms))
        return s

    def clash(self, addrs, accs, s):
        import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
        lo = 2 + self.model.log2_banks
        words = [z3.LShR(x, 2) for x in addrs]
        banks = [z3.Extract(lo - 1, 2, x) for x in addrs]
        for i in range(1, len(addrs)):
            s.add(banks[i] == banks[0])
            s.add(z3.ULT(words[i - 1], words[i]))
        for a in accs:
            s.add(self.fixed(a))

    def tied_accesses(self, s, k: int, tag: str) -> tuple[list, list]:
        """Law: ``k`` fresh accesses (and their addresses) named ``<tag>_<i>``, each tied in
        ``s`` to the first as one instruction's access in the same phase."""
        accs, addrs = [], []
        for i in range(k):
            a, x = self.new_access(f"{tag}_{i}")
            accs.append(a)
            addrs.append(x)
            if i:
                s.add(self.tie(accs[0], a))
        return accs, addrs

    def k_way(self, k: int, phase_value: dict | None = None):
        """Solve: k accesses of one phase hit one bank at distinct words. (status, model, accs)."""
        import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
        s = self.solver()
        accs, addrs = self.tied_accesses(s, k, str(k))
        if phase_value is not None:
            for (d, j), bit in phase_value.items():
                s.add(_bit(accs[0].vars[d], j) == bit)
        self.clash(addrs, accs, s)
        r = solve(s)
        record_query(s, r, f"{k} accesses of one phase in one bank at distinct words")
        return r, (s.model() if r == z3.sat else None), accs, s


def _z3_plan(reg: LinearLayout, amap: SharedAddressMap, instruction: Instruction | None, elem_bits: int,
             model: BankModel, store: bool, timeout_ms: int) -> tuple[AccessPlan, Verdict | None]:
    """A plan whose contiguity z3 proves; narrower vectors for 'auto' when it does not hold."""
    img = _probe_images(reg, amap)
    if instruction is None:
        elems = widest_vector(img, elem_bits)
        while True:
            plan = dataclasses.replace(plan_access(img, ld_st(elems * elem_bits, store), elem_bits, model, store),
                                       choice=AUTO_RULE + "; contiguity proved by z3")
            v = _prove_contiguous(reg, amap, plan, timeout_ms)
            if v.proved:
                return plan, None
            if elems == 1:
                return plan, v
            elems //= 2
    plan = plan_access(img, instruction, elem_bits, model, store)
    v = _prove_contiguous(reg, amap, plan, timeout_ms)
    if v.status == "counterexample":
        raise LayoutError(f"{plan.instruction.name}: the elements one access needs are not contiguous "
                          f"and aligned in shared memory ({v.reason})")
    return plan, (None if v.proved else v)


def _prove_contiguous(reg, amap, plan: AccessPlan, timeout_ms: int) -> Verdict:
    """For every access: the aligned start plus, for every subset of its contiguous bits, the
    offset the hardware needs (ld/st: the xor of the bits' own offsets, which span ``0 .. v-1`` in
    any order; matrix rows: ``1, 2, 4, ...`` in order). Every subset is checked, not each bit
    alone: a non-linear map may move two bits together elsewhere than their xor."""
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    instr = plan.instruction
    elem_bits = plan.elem_bits
    if instr.is_matrix:
        if instr.trans:
            contig = [("lane", 2), ("lane", 3), ("lane", 4)]
        else:
            contig = [("register", r) for r in plan.vector] + [("lane", 0), ("lane", 1)]
        unit = 128 // elem_bits
        steps = [1 << i for i in range(len(contig))]
    else:
        contig = [("register", r) for r in plan.vector]
        unit = plan.vector_elems
        probe = _probe_images(reg, amap).offset["register"]
        steps = [probe[r] for r in plan.vector]
    if not contig and unit <= 1:
        return Verdict.holds("one element per access", method="z3")
    prob = _Z3Problem(reg, amap, plan, BankModel(), timeout_ms)
    a, _ = prob.new_access("c")
    width = prob.width
    cons, assume = [], []
    for d, j in contig:
        assume.append(_bit(a.vars[d], j) == 0)
    coords = _coords(reg, a.vars)
    base = _fit(amap.z3_fn(coords), width)
    cons.append(z3.URem(base, unit) == 0)
    for subset in range(1, 1 << len(contig)):
        moved, want = dict(a.vars), 0
        for i, (d, j) in enumerate(contig):
            if (subset >> i) & 1:
                moved[d] = moved[d] ^ (1 << j)
                want ^= steps[i]
        off = _fit(amap.z3_fn(_coords(reg, moved)), width)
        cons.append(off == base + want)
    return check_claim(z3.And(cons), variables=dict(a.vars), assumptions=assume + prob.fixed(a),
                 timeout_ms=timeout_ms, what=f"{instr.name} contiguity")


def _coords(reg, vars):
    return z3_apply_linear(reg, vars)


def _fit(e, width):
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    return z3.ZeroExt(width - e.size(), e) if e.size() < width else z3.Extract(width - 1, 0, e)


def _access_from_model(prob: _Z3Problem, m, acc: _Z3Access) -> Access:
    ins = {d: m.eval(v, model_completion=True).as_long() for d, v in acc.vars.items()}
    byte = m.eval(acc.byte, model_completion=True).as_long() if acc.byte is not None else 0
    return _access(prob.reg, prob.amap.offset, ins, byte, prob.plan.elem_bits, prob.model)


def z3_bank_analysis(reg: LinearLayout, amap: SharedAddressMap, elem_bits: int,
                     instruction: Instruction | None = None, model: BankModel = BankModel(),
                     store: bool = False, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> BankAnalysis:
    """Wavefronts of a register layout against a non-linear address map, decided by z3.

    >>> from verilayout.hw.nvidia.banks import padded_address_map
    >>> from verilayout.core.linear_layout import identity_standard_nd
    >>> col = LinearLayout({"register": [], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 0]]}, ["dim0", "dim1"])
    >>> smem = padded_address_map(identity_standard_nd("offset", [16, 32], [1, 0]), [(32, 1)])
    >>> z3_bank_analysis(col, smem, 32).verdict.status
    'proved'
    """
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    _check_reg(reg)
    reg = align_outs(reg, amap)
    plan, pending = _z3_plan(reg, amap, instruction, elem_bits, model, store, timeout_ms)
    prob = _Z3Problem(reg, amap, plan, model, timeout_ms)
    r, m, accs, _ = prob.k_way(2)
    if r == z3.unknown:
        v = Verdict.unknown(f"z3 gave up on the bank-conflict query of {plan.instruction.name}: the "
                            f"wavefront count is unknown (no bound)", method="z3")
        return BankAnalysis(plan, None, v, None, "z3", exact=False, bound="unknown")
    if r == z3.unsat:
        if pending is not None:  # the access itself is not proved legal: no proof of anything
            v = Verdict.unknown(f"{plan.instruction.name}: no two accesses of one phase hit one bank "
                                f"at different words, but z3 gave up proving the access contiguous and "
                                f"aligned ({pending.reason})", method="z3")
            return BankAnalysis(plan, None, v, None, "z3", exact=False, bound="unknown",
                                details={"contiguity": pending.to_dict()})
        v = Verdict.holds(f"{plan.instruction.name}: no two accesses of one phase hit one bank at "
                          f"different words (z3)", method="z3")
        return BankAnalysis(plan, plan.ideal_wavefronts, v, None, "z3")
    # largest k with k accesses of one phase in one bank at distinct words
    limit = 1 << (len(plan.phase_bits) + max(0, prob.beta - 2))
    best_k, best_m, best_accs = 2, m, accs
    k = 3
    exact = True
    while k <= limit:
        r, m2, accs2, _ = prob.k_way(k)
        if r == z3.sat:
            best_k, best_m, best_accs = k, m2, accs2
            k += 1
            continue
        if r == z3.unknown:
            exact = False
        break
    wave = best_k * plan.phases_per_instruction
    bound = "exact" if exact else "at least"  # a timeout at k + 1: k ways are reached, more may be
    if plan.phases_per_instruction > 1 and exact:
        exact = _all_phases_reach(prob, best_k)
        bound = "exact" if exact else "at most"
    group = tuple(_access_from_model(prob, best_m, a) for a in best_accs)
    w = Witness(plan.instruction.name, group[0].warp, group)
    v = _conflict_verdict(w, best_k, "z3")
    return BankAnalysis(plan, wave, v, w, "z3", exact=exact, bound=bound,
                        details={"per_phase": best_k, "contiguity": pending.to_dict() if pending else None})


def _all_phases_reach(prob: _Z3Problem, k: int) -> bool:
    """Does one instruction have ``k`` same-bank distinct-word accesses in every phase?"""
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    s = prob.solver()
    first = None
    for p in range(prob.plan.phases_per_instruction):
        accs, addrs = prob.tied_accesses(s, k, f"all{p}")
        for t, (d, j) in enumerate(prob.select):
            s.add(_bit(accs[0].vars[d], j) == (p >> t) & 1)
        if first is None:
            first = accs[0]
        else:
            s.add(prob.tie(first, accs[0], same_phase=False))
        prob.clash(addrs, accs, s)
    return solve(s) == z3.sat


# ----- the report of one analysis (the door is verilayout.banks.check_banks) -------------------

@dataclass(frozen=True)
class BankReport:
    """The answer of :func:`check_banks` (see :mod:`verilayout.banks` for each field).

    ``wavefronts`` is ``None`` when the solver gave up (an unknown has no bound);
    ``bound`` says whether a count is ``exact``, ``at least`` or ``at most`` that figure;
    ``choice`` says which rule chose the instruction and its vector.
    """

    instruction: str
    elem_bits: int
    num_banks: int
    wavefronts: int | None
    ideal_wavefronts: int
    conflict_free: bool | None
    verdict: Verdict
    witness: Witness | None
    triton_conflicts: int | None
    phases_per_instruction: int
    instructions_per_warp: int
    vector_elems: int
    method: str
    exact: bool = True
    bound: str = "exact"
    choice: str = ""

    @property
    def conflict_ways(self) -> int | None:
        """Wavefronts per phase of the worst instruction (1 when conflict-free; None when unknown)."""
        if self.wavefronts is None:
            return None
        return max(1, self.wavefronts // max(1, self.phases_per_instruction))

    @property
    def wavefronts_per_warp(self) -> int | None:
        """Wavefronts of all the instructions one warp issues for the whole access (None when unknown)."""
        return None if self.wavefronts is None else self.wavefronts * self.instructions_per_warp

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {"instruction": self.instruction, "elem_bits": self.elem_bits, "num_banks": self.num_banks,
                "wavefronts": self.wavefronts, "ideal_wavefronts": self.ideal_wavefronts,
                "conflict_free": self.conflict_free, "triton_conflicts": self.triton_conflicts,
                "phases_per_instruction": self.phases_per_instruction,
                "instructions_per_warp": self.instructions_per_warp,
                "wavefronts_per_warp": self.wavefronts_per_warp, "vector_elems": self.vector_elems,
                "method": self.method, "exact": self.exact, "bound": self.bound, "choice": self.choice,
                "witness": self.witness.to_dict() if self.witness else None,
                "verdict": self.verdict.to_dict()}

    def summary(self) -> str:
        """A few lines for people."""
        if self.wavefronts is None:
            head = (f"{self.instruction}: unknown wavefronts per instruction (the solver gave up; no "
                    f"bound), ideal {self.ideal_wavefronts}: unknown")
        else:
            state = {True: "conflict-free (proved)", False: f"{self.conflict_ways}-way bank conflict",
                     None: "unknown (solver gave up)"}[self.conflict_free]
            bound = "" if self.bound == "exact" else f" ({self.bound})"
            head = (f"{self.instruction}: {self.wavefronts} wavefronts per instruction{bound}, ideal "
                    f"{self.ideal_wavefronts}: {state}")
        lines = [head,
                 f"  {self.phases_per_instruction} phase(s) per instruction, {self.instructions_per_warp} "
                 f"instruction(s) per warp, {self.vector_elems} element(s) of {self.elem_bits} bits per "
                 f"lane access; proof by {self.method}"]
        if self.choice:
            lines.append(f"  instruction: {self.choice}")
        tc = "n/a (Triton cannot compute it for this pair)" if self.triton_conflicts is None \
            else str(self.triton_conflicts)
        lines.append(f"  Triton's get_shared_bank_conflicts: {tc}")
        if self.witness is not None:
            lines.append(f"  witness: {self.witness.instruction}, warp {self.witness.warp}, bank "
                         f"{self.witness.bank}:")
            for a in self.witness.accesses[:4]:
                lines.append(f"    {a.describe()}")
            if len(self.witness.accesses) > 4:
                lines.append(f"    ... {len(self.witness.accesses) - 4} more accesses in bank "
                             f"{self.witness.bank} at distinct words")
        return "\n".join(lines)


@functools.lru_cache(maxsize=8)  # keyed by the bank count (32 or 64)
def _model(num_banks: int) -> BankModel:
    return BankModel(num_banks=num_banks)


def _instruction(instruction) -> Instruction | None:
    """The instruction of an access, or None for the widest ``ld.shared``/``st.shared``; text is read
    at the door (:func:`verilayout.frontends.names.parse_instruction`)."""
    if instruction is None or instruction == "auto":
        return None
    if isinstance(instruction, Instruction):
        return instruction
    raise LayoutError(f"instruction {instruction!r}: expected an Instruction or 'auto' (text is read by "
                      "verilayout.frontends.names.parse_instruction)")


def _as_int(value: Any, what: str) -> int:
    """A Python int from an int or a numpy integer (not a bool, not a float)."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise LayoutError(f"{what}={value!r}: expected an integer")
    return int(value.__index__())


def check_banks(reg_layout: LinearLayout, smem_layout: Any, *, elem_bits: int, instruction: Any = "auto",
            num_banks: int = 32, store: bool = False, timeout_ms: int = DEFAULT_TIMEOUT_MS,
            witness_size: int = 2) -> BankReport:
    """Wavefronts, proof and witness of ``reg_layout`` accessing ``smem_layout``.

    ``instruction``: ``"auto"`` (the widest ``ld.shared`` vector the two layouts allow by
    Triton's rule, as a compiler picks; ``st.shared`` with ``store=True``), or an
    :class:`~verilayout.hw.nvidia.banks.Instruction` (text is read at the door:
    :func:`verilayout.frontends.names.read_instruction`; the facade ``verilayout.banks`` takes it) such as
    ``"ld.shared.v2.b32"`` (legal when the registers of one access cover an aligned
    contiguous vector, in any order), ``"ldmatrix.x4"``, ``"stmatrix.x4.trans"``.
    ``witness_size``: how many same-bank accesses the witness lists (at least the
    conflicting pair; up to the per-phase wavefront count on the GF(2) path).
    Law: ``conflict_free`` is True only with a proof, ``None`` when the solver gave up.

    >>> from verilayout.core.linear_layout import LinearLayout, identity_standard_nd
    >>> row = LinearLayout({"register": [[0, 1]], "lane": [[0, 2], [0, 4], [0, 8], [0, 16], [1, 0]]},
    ...                    ["dim0", "dim1"])
    >>> r = check_banks(row, identity_standard_nd("offset", [2, 32], [1, 0]), elem_bits=16)
    >>> r.instruction, r.wavefronts, r.conflict_free
    ('ld.shared.b32', 1, True)
    """
    elem_bits = _as_int(elem_bits, "elem_bits")
    num_banks = _as_int(num_banks, "num_banks")
    if not isinstance(reg_layout, LinearLayout):
        raise LayoutError("register layout: expected a LinearLayout (register, lane, warp -> dims)")
    model = _model(num_banks)
    instr = _instruction(instruction)
    smem = as_shared(smem_layout, elem_bits)
    if isinstance(smem, LinearLayout):
        res, triton = linear_analysis_and_triton(reg_layout, smem, elem_bits, instr, model, store,
                                                 max(2, witness_size))
    else:
        res = z3_bank_analysis(reg_layout, smem, elem_bits, instr, model, store, timeout_ms)
        triton = None
    plan = res.plan
    free = {"proved": True, "counterexample": False, "unknown": None}[res.verdict.status]
    return BankReport(plan.instruction.name, elem_bits, num_banks, res.wavefronts, plan.ideal_wavefronts,
                      free, res.verdict, res.witness, triton, plan.phases_per_instruction,
                      plan.instructions_per_warp, plan.vector_elems, res.method, res.exact, res.bound,
                      plan.choice)


# ----- AMD LDS (gfx942 / gfx950): phases are affine lane subspaces --------------------------------

@dataclass(frozen=True)
class LdsReport:
    """The answer of :func:`check_lds_banks`: one wavefront's ``ds_read``/``ds_write`` of a tensor.

    ``wavefronts``: cycles of the worst instruction (sum over its phases); ``ideal``: one per
    phase; ``ways``: the worst phase's cycles; ``witness``: ``(lane, byte address)`` pairs of one
    phase that hit ``bank`` at distinct dwords; ``inferred``: the phase groups are not published
    (see :mod:`verilayout.hw.amd.lds`).
    """

    instruction: str
    target: str
    num_banks: int
    elem_bits: int
    vector_elems: int
    phases: int
    wavefronts: int
    ideal: int
    ways: int
    instructions_per_wave: int
    verdict: Verdict
    witness: tuple
    bank: int | None
    method: str
    inferred: bool

    @property
    def conflict_free(self) -> bool:
        return self.ways <= 1

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {"instruction": self.instruction, "target": self.target, "num_banks": self.num_banks,
                "elem_bits": self.elem_bits, "vector_elems": self.vector_elems, "phases": self.phases,
                "wavefronts": self.wavefronts, "ideal_wavefronts": self.ideal, "conflict_ways": self.ways,
                "conflict_free": self.conflict_free, "instructions_per_wave": self.instructions_per_wave,
                "witness": [{"lane": lane, "byte_address": a} for lane, a in self.witness],
                "bank": self.bank, "method": self.method, "inferred_phases": self.inferred,
                "verdict": self.verdict.to_dict()}

    def summary(self) -> str:
        """A few lines for people."""
        state = "conflict-free (proved)" if self.conflict_free else f"{self.ways}-way bank conflict"
        lines = [f"{self.instruction} on {self.target} ({self.num_banks} banks): {self.wavefronts} cycles per "
                 f"instruction, ideal {self.ideal}: {state}",
                 f"  {self.phases} phase(s) per instruction, {self.instructions_per_wave} instruction(s) per "
                 f"wavefront, {self.vector_elems} element(s) of {self.elem_bits} bits per lane; proof by "
                 f"{self.method}" + ("; phase groups inferred (not published)" if self.inferred else "")]
        if self.witness:
            pairs = ", ".join(f"lane {lane} byte {a}" for lane, a in self.witness[:4])
            lines.append(f"  witness: bank {self.bank}: {pairs}")
        return "\n".join(lines)


def _lds_access(instruction, elem_bits: int, bits_auto: int, store: bool) -> amd_lds.LdsAccess:
    if instruction is None or (isinstance(instruction, str) and instruction.strip().lower() == "auto"):
        return amd_lds.LdsAccess("write" if store else "read", max(8, bits_auto))
    if isinstance(instruction, amd_lds.LdsAccess):
        return instruction
    raise LayoutError(f"LDS instruction {instruction!r}: expected an LdsAccess or 'auto' (text is read by "
                      "verilayout.frontends.names.parse_lds_instruction)")


def _lds_gf2(p: _Pair, vec: tuple, elem_bits: int, t, access) -> int:
    """Cycles per phase, GF(2): the phase is ``a0 xor span(vector, V0 lanes, bytes)``; its same-bank
    distinct-dword differences have dimension ``c``, so every phase of every instruction costs ``2**c``."""
    ps = amd_lds.phase_subspace(amd_lds.phase_groups(t, access))
    lane_off = p.off["lane"]
    beta = _log2(element_bytes(elem_bits))
    gens = [p.off["register"][j] << beta for j in vec]
    for mask in ps.basis:
        v = 0
        for i, o in enumerate(lane_off):
            if (mask >> i) & 1:
                v ^= o
        gens.append(v << beta)
    gens += [1 << b for b in range(beta)]
    return 1 << len(_same_bank_space(gens, _model(t.num_banks)))


def _instruction_inputs(reg: LinearLayout, vec_regs: tuple, zero: list) -> list[dict]:
    """One input assignment (without lane) per instruction: the other non-broadcast registers,
    warps and blocks."""
    bits = [("register", j) for j in range(reg.in_dims.get("register", 1).bit_length() - 1)
            if j not in vec_regs and not zero[j]]
    for d in ("warp", "block"):
        bits += [(d, j) for j in range(reg.in_dims.get(d, 1).bit_length() - 1)]
    if len(bits) > 14:
        raise LayoutError(f"LDS enumeration: {1 << len(bits)} instructions per wavefront is too many "
                          "(at most 16384)")
    out = []
    for m in range(1 << len(bits)):
        ins: dict = {}
        for i, (d, j) in enumerate(bits):
            if (m >> i) & 1:
                ins[d] = ins.get(d, 0) | (1 << j)
        out.append(ins)
    return out


class _ElementOffsets:
    """``offset_of(reg(inputs))`` for many inputs of one register layout: the layout's image
    table is built once (numpy) and each element's offset computed once (the enumeration path
    visits every element of every instruction)."""

    def __init__(self, reg: LinearLayout, offset_of: Callable):
        self.reg, self.offset_of, self.memo = reg, offset_of, {}
        self.shifts, off = {}, 0
        for name in reg.in_dim_names:
            self.shifts[name] = off
            off += reg.in_dims[name].bit_length() - 1
        self.table = reg.apply_all() if off <= 22 else None
        self.outs = reg.out_dim_names

    def __call__(self, values: Mapping[str, int]) -> int:
        if self.table is None:
            return self.offset_of(self.reg.apply(values))
        packed = 0
        for name, v in values.items():
            packed |= v << self.shifts[name]
        y = int(self.table[packed])
        if y not in self.memo:
            self.memo[y] = self.offset_of(dict(zip(self.outs, self.reg.unpack(y))))
        return self.memo[y]


def _lane_addresses(reg: LinearLayout, offset_of, ins: dict, vec_regs: tuple, elem_bits: int,
                    lanes: int, offsets: _ElementOffsets | None = None) -> list[int]:
    """Byte address of each lane's access (the lowest element of its vector); LayoutError when the
    vector's elements are not one aligned contiguous run. ``offsets``: a shared
    :class:`_ElementOffsets` for ``reg`` and ``offset_of`` (built here when not given)."""
    n = 1 << len(vec_regs)
    eb = element_bytes(elem_bits)
    at = offsets if offsets is not None else _ElementOffsets(reg, offset_of)
    out = []
    for lane in range(lanes):
        offs = []
        for m in range(n):
            r = ins.get("register", 0)
            for i, j in enumerate(vec_regs):
                if (m >> i) & 1:
                    r |= 1 << j
            offs.append(at({d: (lane if d == "lane" else r if d == "register" else ins.get(d, 0))
                            for d in reg.in_dim_names}))
        lo = min(offs)
        if sorted(offs) != list(range(lo, lo + n)) or lo % n:
            raise LayoutError(f"lane {lane}: the {n} elements of one access sit at offsets {sorted(offs)}, "
                              "not one aligned contiguous vector")
        out.append(lo * eb)
    return out


def check_lds_banks(reg_layout: LinearLayout, smem_layout: Any, *, elem_bits: int, target: str,
                instruction: Any = "auto", store: bool = False) -> LdsReport:
    """Cycles of a wavefront reading (``store``: writing) ``smem_layout`` through ``reg_layout``
    on an AMD ``target`` (``gfx942``/``gfx950``), with the phase groups of :mod:`verilayout.hw.amd.lds`.

    ``instruction``: ``auto`` (the widest vector by Triton's rule, at most 128 bits) or an
    :class:`~verilayout.hw.amd.lds.LdsAccess` (text such as ``ds_read_b128``, ``ds_write_b64``,
    ``ds_read_b64_tr_b16`` is read at the door: :func:`verilayout.frontends.names.read_lds_instruction`). GF(2)-linear shared layouts are
    proved by rank (every phase of every instruction is a coset of one subspace: method ``gf2``);
    other address maps (padded layouts, CuTe strides) by enumerating every instruction
    (``enumeration``, exact). Law: ``wavefronts == phases * ways`` on the GF(2) path, and
    ``conflict_free`` only with a proof.

    >>> from verilayout.core.linear_layout import LinearLayout, identity_standard_nd
    >>> rows = LinearLayout({"register": [[0, 1], [0, 2], [0, 4]], "lane": [[0, 8], [0, 16], [0, 32], [1, 0], [2, 0], [4, 0]]},
    ...                     ["dim0", "dim1"])
    >>> r = check_lds_banks(rows, identity_standard_nd("offset", [8, 64], [1, 0]), elem_bits=16, target="gfx942")
    >>> r.instruction, r.wavefronts, r.ideal, r.conflict_free
    ('ds_read_b128', 8, 8, True)
    """
    elem_bits = _as_int(elem_bits, "elem_bits")
    t = amd_lds.target(target)
    _check_lds_inputs(reg_layout, t, instruction, elem_bits, store)
    smem = as_shared(smem_layout, elem_bits)
    plan = (_lds_linear_plan(reg_layout, smem, instruction, elem_bits, t, store)
            if isinstance(smem, LinearLayout) else
            _lds_enumerated_plan(reg_layout, smem, instruction, elem_bits, t, store))
    worst = None
    offsets = _ElementOffsets(reg_layout, plan.offset_of)
    for ins in plan.insts:
        addrs = _lane_addresses(reg_layout, plan.offset_of, ins, plan.vec, elem_bits, t.wave, offsets)
        cnt = amd_lds.wavefronts(addrs, t, plan.access)
        if worst is None or cnt.total > worst.total:
            worst = cnt
    if plan.ways is not None and worst.ways != plan.ways:
        raise LayoutError(f"internal: GF(2) gives {plan.ways} cycles per phase, enumeration {worst.ways}")
    access, vec = plan.access, plan.vec
    ideal = amd_lds.ideal(t, access)
    total = worst.total if plan.ways is None else plan.ways * worst.phases
    n_inst = len(_instruction_inputs(reg_layout, vec, plan.zero))
    return LdsReport(access.name, t.name, t.num_banks, elem_bits, 1 << len(vec), worst.phases, total, ideal,
                     worst.ways, n_inst, _lds_verdict(worst, access, t, plan.method), worst.witness, worst.bank,
                     plan.method, amd_lds.inferred(t, access))


def _check_lds_inputs(reg_layout: Any, t: Any, instruction: Any, elem_bits: int, store: bool) -> None:
    """The refusals of :func:`check_lds_banks`: a register layout of one wavefront, a known
    element width, and no transposing read (its lanes receive other lanes' elements)."""
    if not isinstance(reg_layout, LinearLayout):
        raise LayoutError("register layout: expected a LinearLayout (register, lane, warp -> dims)")
    _check_reg(reg_layout)
    if reg_layout.in_dims["lane"] != t.wave:
        raise LayoutError(f"{t.name} wavefronts have {t.wave} lanes; the register layout has "
                          f"{reg_layout.in_dims['lane']}")
    element_bytes(elem_bits)
    if isinstance(instruction, amd_lds.LdsAccess) and instruction.tr:
        raise LayoutError(f"{instruction.name}: a transposing read hands lanes other lanes' elements; its bank "
                          "figure is modelled on explicit lane addresses (verilayout.hw.amd.lds.wavefronts), "
                          "not from a register layout")


@dataclass(frozen=True)
class _LdsPlan:
    """How :func:`check_lds_banks` counts: the access, the registers of one lane's vector, the
    element -> offset map, the instructions to enumerate, and the GF(2) cycle count if known."""
    access: Any
    vec: tuple
    zero: list
    offset_of: Callable
    insts: list
    ways: int | None
    method: str


def _is_auto(instruction: Any) -> bool:
    return instruction is None or (isinstance(instruction, str) and instruction.strip().lower() == "auto")


def _lds_linear_plan(reg_layout: LinearLayout, smem: LinearLayout, instruction: Any, elem_bits: int,
                     t: Any, store: bool) -> _LdsPlan:
    """A GF(2)-linear shared layout: every instruction is a coset of one subspace, so the
    cycles per phase come from ranks and one instruction is enumerated to show the witness."""
    p = _pair(reg_layout, smem)
    img = p.images()
    if _is_auto(instruction):
        vec = widest_chain(img, elem_bits)
        access = _lds_access(None, elem_bits, (1 << len(vec)) * elem_bits, store)
    else:
        access = _lds_access(instruction, elem_bits, elem_bits, store)
        if access.bits < elem_bits:
            raise LayoutError(f"{access.name} moves {access.bits} bits per lane; elements are {elem_bits}")
        vec = ldst_vector(img, access.bits // elem_bits)
        if vec is None:
            raise LayoutError(f"{access.name} needs {access.bits // elem_bits} elements per lane as one "
                              "aligned contiguous vector; these layouts do not give it")
    zero = p.zero["register"]
    inv = smem.invert() if smem.is_invertible() else smem.pseudoinvert()
    ways = _lds_gf2(p, vec, elem_bits, t, access)
    insts = _instruction_inputs(reg_layout, vec, zero)[:1]  # all instructions are cosets: one shows it
    return _LdsPlan(access, vec, zero, lambda c: inv.apply(c)["offset"], insts, ways, "gf2")


def _lds_enumerated_plan(reg_layout: LinearLayout, smem: Any, instruction: Any, elem_bits: int,
                         t: Any, store: bool) -> _LdsPlan:
    """A non-linear address map (padded layouts, CuTe strides): every instruction enumerated."""
    zero = [not any(b) for b in reg_layout.bases.get("register", [])]
    regs = tuple(j for j in range(len(zero)) if not zero[j])
    if _is_auto(instruction):  # the widest vector whose elements are one aligned contiguous run (instruction 0)
        k = min(len(regs), _log2(max(1, 128 // elem_bits)))
        while k > 0:
            try:
                _lane_addresses(reg_layout, smem.offset, {}, regs[:k], elem_bits, t.wave)
                break
            except LayoutError:
                k -= 1
        access = _lds_access(None, elem_bits, (1 << k) * elem_bits, store)
    else:
        access = _lds_access(instruction, elem_bits, elem_bits, store)
    if access.bits < elem_bits:
        raise LayoutError(f"{access.name} moves {access.bits} bits per lane; elements are {elem_bits}")
    k = _log2(max(1, access.bits // elem_bits))
    vec = regs[:k]
    if len(vec) < k:
        raise LayoutError(f"{access.name}: each lane needs {1 << k} elements, the layout holds fewer")
    return _LdsPlan(access, vec, zero, smem.offset, _instruction_inputs(reg_layout, vec, zero), None,
                    "enumeration")


def _lds_verdict(worst: Any, access: Any, t: Any, method: str) -> Verdict:
    """Conflict-free when every phase takes one cycle; otherwise the witness lanes and bank."""
    what = f"{access.name} on {t.name}"
    if worst.ways <= 1:
        return Verdict.holds(f"{what}: every phase reaches distinct banks or shared dwords", method=method)
    cex = {"instruction": access.name, "target": t.name, "bank": worst.bank,
           "accesses": [{"lane": lane, "byte_address": a} for lane, a in worst.witness]}
    return Verdict.fails(cex, f"{worst.ways}-way bank conflict in bank {worst.bank}: lanes "
                         f"{worst.witness[0][0]} and {worst.witness[1][0]} of one phase of {what}", method=method)


def embed_in_allocation(reg: LinearLayout, alloc_shape) -> LinearLayout:
    """The register layout of a view, placed in its allocation: the same bases, out dims widened to
    ``alloc_shape`` (the view at offset 0). Law: an aligned subslice (offsets multiples of its
    power-of-two sizes) addresses the allocation's GF(2) layout XOR a constant, which keeps every
    pair of accesses in the same bank/word relation, so its wavefronts equal the figure at offset 0.

    >>> r = LinearLayout({"lane": [[1, 0], [0, 1]]}, {"dim0": 2, "dim1": 2})
    >>> embed_in_allocation(r, (2, 8)).out_dims
    {'dim0': 2, 'dim1': 8}
    """
    sizes = [int(x) for x in alloc_shape]
    if len(sizes) != len(reg.out_dim_names) or any(a < reg.out_dims[n] for a, n in zip(sizes, reg.out_dim_names)):
        raise LayoutError(f"a view of shape {list(reg.out_dims.values())} does not fit in the allocation {sizes}")
    return LinearLayout({k: [list(b) for b in v] for k, v in reg.bases.items()},
                        dict(zip(reg.out_dim_names, sizes)), require_surjective=False)
