"""Shared-memory banks, the instructions that access them, and how many wavefronts they need.

This module is the *model*: what the hardware does with a warp's shared-memory
access. The analyses that answer questions about it live in
:mod:`verilayout.prove.banks`; the user's door is :func:`verilayout.banks.check_banks`.

The rules, with their sources
-----------------------------
1. **Banks.** Shared memory is split into banks of 4 bytes; successive 4-byte words
   go to successive banks, ``bank = (byte_address // 4) % num_banks``
   (CUDA C++ Programming Guide,
   "Shared Memory" of compute capability 5.x and later: "successive 32-bit words map
   to successive banks"). NVIDIA GPUs have 32 banks; 64 is an option for AMD GPUs
   whose LDS has 64 banks (Triton passes ``numBanks`` to its swizzling code for them).
2. **Wavefronts.** Each bank delivers one 4-byte word per pass ("wavefront"), so the
   requests served together take ``max over banks of (distinct words in that bank)``
   wavefronts. Lanes that touch the same 4-byte word are served together: same word,
   no conflict, for reads (broadcast) and writes alike (Programming Guide, 5.x: "a
   shared memory request for a warp does not generate a bank conflict between two
   threads that access any address within the same 32-bit word").
3. **Phases.** One wavefront moves at most ``num_banks * 4`` bytes (128 bytes), so a
   warp's ``ld.shared``/``st.shared`` is split into *phases* of consecutive lanes, each
   phase served on its own: 8-, 16- and 32-bit accesses in one phase of the whole
   warp, 64-bit accesses per half-warp, 128-bit accesses per quarter-warp. In general
   ``lanes per phase = min(lanes, num_banks * 32 / access_bits)`` (NVIDIA
   developer forum thread 77228, "LDS.128 requires 4 requests per instruction as it
   returns 4 registers ... return bandwidth of shared memory is 128 bytes/cycle";
   Triton's ``GenericSwizzling.cpp`` ``getLaneTile`` uses the same phase rule).
   An access of ``v`` elements per lane must be ``v``-element aligned and contiguous
   (PTX ISA, ``ld``: vector accesses need natural alignment), at most 128 bits. Which
   register receives which element of the vector is the compiler's choice (it names the
   destination registers in any order), so a user-chosen ``ld/st`` is legal whenever the
   registers of one access cover an aligned contiguous vector in any order, the same order
   for every lane of the instruction; "auto" keeps Triton's stricter rule (offsets 1, 2, 4,
   ... in register order) and says so (:data:`AUTO_RULE`).
4. **ldmatrix / stmatrix** ``.x1/.x2/.x4`` move 1, 2 or 4 matrices of 8x8 16-bit
   elements. Each matrix is 8 rows of 16 contiguous, 16-byte aligned bytes whose row
   addresses come from 8 lanes; thread ``t`` receives (without ``.trans``) the 32-bit
   word ``t % 4`` of row ``t // 4``; with ``.trans`` it receives column ``t // 4`` of
   rows ``2 (t % 4)`` and ``2 (t % 4) + 1`` (PTX ISA, "Warp-level matrix load
   instruction: ldmatrix", fragment figures). Each matrix (128 bytes) is one phase,
   so the ideal is 1, 2 or 4 wavefronts; ``.trans`` changes who receives what, not
   which bytes are read.
5. **Per instruction.** A warp's access of a tensor issues one instruction per
   register group (and per warp); the report counts wavefronts *per instruction*
   (sum over its phases) and keeps the worst instruction. For GF(2)-linear layouts
   every instruction and every phase is a coset of the same subspace, so they all
   need the same number.

6. **128-bit half-warps** (measured with ncu on an H100 kernel outside the recorded runs of
   ``hwtests/results/``): a ``ld.shared.v4`` whose lanes all read
   the same 16 bytes takes 2 wavefronts, not the 4 of rule 3: a load half-warp (two quarter-warp
   phases) that fits one wavefront (at most one distinct word per bank) is served in one. The
   PTX audit applies it to loads (:func:`warp_wavefronts`); that it holds for every half-warp that
   fits one wavefront, not only for one uniform address, is an inference; stores are not merged
   (not measured); the TTGIR-level analyses still count such a load per quarter-warp (an
   over-estimate, never an under-estimate).
7. **Only lanes that execute give addresses** (measured likewise, H100, ncu): an access under a
   guard that some lanes or warps fail costs nothing in them (a warp none of whose lanes
   executes it costs 0 wavefronts); ``stmatrix .x1/.x2``, like ``ldmatrix``, takes row addresses
   from lanes 0-7 / 0-15 only (an ``.x1`` measured 1 wavefront).

What is not modelled: multi-CTA distributed shared memory (the ``block``
input is an instruction index here: every CTA has its own banks), and timing.

>>> m = BankModel()
>>> m.bank(132), m.word(132)
(1, 33)
>>> ld_st(128).name, lanes_per_phase(128, 32, m)
('ld.shared.v4.b32', 8)
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from verilayout.bits import is_pow2 as _is_pow2, log2 as _log2
from verilayout.core import cute
from verilayout.core.gf2 import add_to_basis
from verilayout.core.linear_layout import LinearLayout
from verilayout.core.smt import FunctionLayout, z3_apply_linear
from verilayout.errors import LayoutError

Bit = tuple[str, int]  # (input dim, bit index)


@dataclass(frozen=True)
class BankModel:
    """Banks of ``bank_bytes`` bytes, ``num_banks`` of them (32 on NVIDIA, 64 an AMD option).

    >>> BankModel(num_banks=64).row_bytes
    256
    """

    num_banks: int = 32
    bank_bytes: int = 4

    def __post_init__(self):
        if not isinstance(self.num_banks, int) or not _is_pow2(self.num_banks) or \
                not 8 <= self.num_banks <= 128:
            raise LayoutError(f"num_banks={self.num_banks!r}: expected a power of two in 8..128 "
                              "(32 for NVIDIA, 64 for AMD)")
        if self.bank_bytes != 4:
            raise LayoutError(f"bank_bytes={self.bank_bytes!r}: only 4-byte banks are modelled")

    @property
    def row_bytes(self) -> int:
        """Bytes one wavefront can move: one word from every bank."""
        return self.num_banks * self.bank_bytes

    @property
    def log2_banks(self) -> int:
        return _log2(self.num_banks)

    def word(self, byte_address: int) -> int:
        """Index of the 4-byte word holding ``byte_address``."""
        return byte_address // self.bank_bytes

    def bank(self, byte_address: int) -> int:
        """``(byte_address // 4) % num_banks`` (CUDA C++ Programming Guide, "Shared Memory"; rule 1)."""
        return self.word(byte_address) % self.num_banks


_OPS = ("ld.shared", "st.shared", "ldmatrix", "stmatrix")


@dataclass(frozen=True)
class Instruction:
    """One shared-memory access instruction of a warp.

    ``op`` is ``ld.shared``, ``st.shared``, ``ldmatrix`` or ``stmatrix``; ``bits`` the
    bits one lane moves per address (a 16-byte row, 128, for the matrix ops);
    ``count`` the matrices of ``.x1/.x2/.x4``; ``trans`` the ``.trans`` flag.

    >>> Instruction("ldmatrix", 128, count=4, trans=True).name
    'ldmatrix.x4.trans'
    """

    op: str
    bits: int
    count: int = 1
    trans: bool = False

    def __post_init__(self):
        if self.op not in _OPS:
            raise LayoutError(f"unknown shared-memory instruction {self.op!r} (known: {', '.join(_OPS)})")
        if self.is_matrix:
            if self.bits != 128 or self.count not in (1, 2, 4):
                raise LayoutError(f"{self.op} moves .x1/.x2/.x4 matrices of 16-byte rows")
        else:
            if self.bits not in (8, 16, 32, 64, 128) or self.count != 1 or self.trans:
                raise LayoutError(f"{self.op} moves 8, 16, 32, 64 or 128 bits per lane, got {self.bits}")

    @property
    def is_matrix(self) -> bool:
        return self.op in ("ldmatrix", "stmatrix")

    @property
    def name(self) -> str:
        if self.is_matrix:
            return f"{self.op}.x{self.count}" + (".trans" if self.trans else "")
        if self.bits <= 32:
            return f"{self.op}.b{self.bits}"
        return f"{self.op}.v{self.bits // 32}.b32"

    def __str__(self) -> str:
        return self.name


@functools.lru_cache(maxsize=32)  # keyed by (width, store): a handful of values
def ld_st(bits: int, store: bool = False) -> Instruction:
    """The ``ld.shared``/``st.shared`` moving ``bits`` per lane.

    >>> ld_st(64).name
    'ld.shared.v2.b32'
    """
    return Instruction("st.shared" if store else "ld.shared", bits)


def lanes_per_phase(access_bits: int, lanes: int, model: BankModel = BankModel()) -> int:
    """Lanes served together: all when ``lanes * access_bits`` fits one wavefront.

    >>> [lanes_per_phase(b, 32) for b in (16, 32, 64, 128)]
    [32, 32, 16, 8]
    """
    words = max(1, access_bits // 32)
    per = (model.num_banks * 32) // (words * 32)
    return max(1, min(lanes, per))


# ----- access plans ------------------------------------------------------------------

#: How "auto" picks the vector: Triton's ``largestVectorisation`` (register bits reaching
#: element offsets 1, 2, 4, ... in that order; every other bit a multiple of the vector).
AUTO_RULE = ("auto: the widest vector by Triton's rule (register bits reaching offsets 1, 2, 4, ... "
             "in order)")
#: How a user-chosen ld/st is checked: its registers cover one aligned contiguous vector, in any
#: order (compilers reorder registers for free).
GIVEN_RULE = ("the instruction given: its registers cover one aligned contiguous vector, in any "
              "order")


@dataclass(frozen=True)
class AccessPlan:
    """How one warp-wide access splits the register layout's input bits.

    ``vector``: register bits whose elements span the contiguous offsets ``0 .. v-1``
    (in any order) inside one lane's access (ld/st) or one 32-bit word (ldmatrix); ``phase_bits``:
    input bits that vary inside one phase (served together); ``phase_select``: bits
    that pick the phase inside one instruction; ``repeat_bits``: the bits that pick
    the instruction (other registers, warps, blocks). Broadcast register bits (they
    hold copies) are in none of them.
    """

    instruction: Instruction
    elem_bits: int
    lane_bits: int
    vector: tuple[int, ...]
    phase_bits: tuple[Bit, ...]
    phase_select: tuple[Bit, ...]
    repeat_bits: tuple[Bit, ...]
    choice: str = "the instruction given"

    @property
    def phases_per_instruction(self) -> int:
        return 1 << len(self.phase_select)

    @property
    def instructions_per_warp(self) -> int:
        return 1 << sum(1 for d, _ in self.repeat_bits if d == "register")

    @property
    def ideal_wavefronts(self) -> int:
        """One wavefront per phase (a phase never asks for more than one word per bank)."""
        return self.phases_per_instruction

    @property
    def vector_elems(self) -> int:
        return 1 << len(self.vector)

    def describe(self) -> str:
        """One line: instruction, phases, vector."""
        return (f"{self.instruction.name}: {self.phases_per_instruction} phase(s) per instruction, "
                f"{self.instructions_per_warp} instruction(s) per warp")


def element_bytes(elem_bits: int) -> int:
    """Bytes of one element (8-, 16-, 32-, 64- and 128-bit elements are modelled).

    Law: ``element_bytes(b) * 8 == b``. A 128-bit element spans four banks; one lane's
    access of it is a ``.v4.b32`` (quarter-warp phases, rule 3).

    >>> element_bytes(128)
    16
    """
    if elem_bits not in (8, 16, 32, 64, 128):
        raise LayoutError(f"elem_bits={elem_bits!r}: bank analysis models 8-, 16-, 32-, 64- and "
                          "128-bit elements")
    return elem_bits // 8


@dataclass(frozen=True)
class BitImages:
    """Where each input bit of the register layout lands in shared memory.

    ``offset[d][i]``: element offset reached by input ``d = 2**i`` alone; ``block``
    likewise for the CTA index (0 without a block dim); ``zero[d][i]``: the register
    basis is all-zero in tensor coordinates (a broadcast copy).
    """

    offset: dict
    block: dict
    zero: dict

    @property
    def lane_bits(self) -> int:
        return len(self.offset.get("lane", []))

    def bits(self, dim: str) -> int:
        return len(self.offset.get(dim, []))


def ldst_vector(img: BitImages, elems: int) -> tuple[int, ...] | None:
    """``log2(elems)`` register bits whose offsets span ``0 .. elems-1`` (in any order), block 0,
    every lane, warp and block bit a multiple of ``elems``; or None.

    Law: the registers of one access then cover exactly the aligned contiguous vector that
    holds its first element (``base xor span = (base & ~(elems-1)) + {0 .. elems-1}``), in an
    order that is the same for every lane of the instruction (lane, warp and block bits do not
    touch the low offset bits). Other register bits pick other instructions and may permute the
    vector: each instruction names its registers in its own order, which costs nothing.

    >>> img = BitImages({"register": [1, 3], "lane": [4, 8, 16, 32, 64]}, {"register": [0, 0], "lane": [0] * 5},
    ...                 {"register": [False, False], "lane": [False] * 5})
    >>> ldst_vector(img, 4), ldst_vector(img, 8)
    ((0, 1), None)
    """
    regs = img.offset.get("register", [])
    k = _log2(elems)
    chosen: list[int] = []
    span: list[int] = []  # echelon rows (by leading bit) of the chosen offsets
    for j, off in enumerate(regs):
        if len(chosen) == k:
            break
        if off <= 0 or off >= elems or img.block["register"][j] or img.zero["register"][j]:
            continue
        if add_to_basis(span, off):
            chosen.append(j)
    if len(chosen) < k:
        return None
    for d, offs in img.offset.items():
        if d == "register":
            continue
        if any(off % elems for off in offs):
            return None
    return tuple(chosen)


def widest_vector(img: BitImages, elem_bits: int, max_bits: int = 128) -> int:
    """Elements per lane of the widest aligned, contiguous access the layouts allow.

    The first ``k`` chosen register bits must land on offsets 1, 2, ..., and every
    other input bit on a multiple of ``2**k`` (Triton's ``largestVectorisation``).
    """
    return 1 << len(widest_chain(img, elem_bits, max_bits))


def widest_chain(img: BitImages, elem_bits: int, max_bits: int = 128) -> tuple[int, ...]:
    """The register bits of the widest vector, in offset order."""
    kmax = _log2(max(1, max_bits // elem_bits))
    regs = img.offset.get("register", [])
    blocks, zeros = img.block.get("register", []), img.zero.get("register", [])
    chain: list[int] = []
    while len(chain) < kmax:  # register bits reaching offsets 1, 2, 4, ... (first match, as Triton)
        hit = _first_reaching(regs, blocks, zeros, 1 << len(chain), chain)
        if hit is None:
            break
        chain.append(hit)
    k = len(chain)
    taken = set(chain)
    for d, offs in img.offset.items():  # every other bit must be a multiple of the vector
        mine = taken if d == "register" else ()
        for j, off in enumerate(offs):
            if off and j not in mine:
                k = min(k, (off & -off).bit_length() - 1)
    return tuple(chain[:k])


def _first_reaching(regs: list[int], blocks: list[int], zeros: list[bool], want: int,
                    chain: list[int]) -> int | None:
    """The first register bit not in ``chain`` that reaches offset ``want`` alone (block 0, not
    a broadcast copy), or None.

    >>> _first_reaching([2, 1, 1], [0, 0, 0], [False, False, False], 1, [1])
    2
    """
    for j, off in enumerate(regs):
        if off == want and blocks[j] == 0 and not zeros[j] and j not in chain:
            return j
    return None


def _nonzero_regs(img: BitImages) -> list[int]:
    return [j for j, z in enumerate(img.zero.get("register", [])) if not z]


def _others(img: BitImages, used: Iterable[Bit]) -> tuple[Bit, ...]:
    used = set(used)
    out = []
    for d, offs in img.offset.items():
        if d == "lane":
            continue
        for j in range(len(offs)):
            if (d, j) in used or (d == "register" and img.zero[d][j]):
                continue
            out.append((d, j))
    return tuple(out)


def plan_ldst(img: BitImages, instr: Instruction, elem_bits: int,
              model: BankModel = BankModel(), vector: tuple[int, ...] | None = None) -> AccessPlan:
    """Plan an ``ld.shared``/``st.shared`` of ``instr.bits`` per lane, or raise LayoutError.

    >>> from verilayout.core.linear_layout import LinearLayout
    >>> img = BitImages({"register": [1], "lane": [2, 4, 8, 16, 32]}, {"register": [0], "lane": [0] * 5},
    ...                 {"register": [False], "lane": [False] * 5})
    >>> plan_ldst(img, ld_st(64), 32).phases_per_instruction
    2
    """
    if instr.bits < elem_bits:
        raise LayoutError(f"{instr.name} moves {instr.bits} bits per lane but elements are {elem_bits} bits")
    elems = instr.bits // elem_bits
    vec = ldst_vector(img, elems) if vector is None else vector
    if vec is None:
        best = max(e for e in (1, 2, 4, 8, 16) if e * elem_bits <= max(128, elem_bits)
                   and (e == 1 or ldst_vector(img, e) is not None))
        raise LayoutError(f"{instr.name} needs {elems} {elem_bits}-bit elements per lane that registers "
                          f"hold as one aligned contiguous vector (in any order); these layouts allow at "
                          f"most {best} ({best * elem_bits} bits)")
    nl = img.lane_bits
    p = _log2(lanes_per_phase(instr.bits, 1 << nl, model))
    phase = tuple(("register", r) for r in vec) + tuple(("lane", j) for j in range(p))
    select = tuple(("lane", j) for j in range(p, nl))
    choice = AUTO_RULE if vector is not None else GIVEN_RULE
    return AccessPlan(instr, elem_bits, nl, vec, phase, select, _others(img, phase), choice)


def plan_matrix(img: BitImages, instr: Instruction, elem_bits: int) -> AccessPlan:
    """Plan an ``ldmatrix``/``stmatrix`` (8x8 matrices of 16-byte rows), or raise LayoutError."""
    name = instr.name
    if img.lane_bits != 5:
        raise LayoutError(f"{name} needs 32 lanes per warp, the layout has {1 << img.lane_bits}")
    if instr.trans and elem_bits != 16:
        raise LayoutError(f"{name} transposes 16-bit elements; these are {elem_bits}-bit")
    if elem_bits > 32:
        raise LayoutError(f"{name} moves 32-bit words; elements are {elem_bits}-bit")
    regs = _nonzero_regs(img)
    offs = img.offset
    per_word = 32 // elem_bits
    row = 128 // elem_bits  # elements in a 16-byte row
    if instr.trans:
        word = regs[:1]
        if len(word) < 1:
            raise LayoutError(f"{name}: each thread needs two 16-bit elements (one 32-bit register)")
        contig = [("lane", 2), ("lane", 3), ("lane", 4)]
        rows = [("register", word[0]), ("lane", 0), ("lane", 1)]
    else:
        word = regs[:_log2(per_word)]
        if len(word) < _log2(per_word):
            raise LayoutError(f"{name}: each thread needs {per_word} elements per 32-bit register")
        contig = [("register", r) for r in word] + [("lane", 0), ("lane", 1)]
        rows = [("lane", 2), ("lane", 3), ("lane", 4)]
    for i, (d, j) in enumerate(contig):
        if offs[d][j] != 1 << i or img.block[d][j]:
            raise LayoutError(f"{name}: {d} bit {j} must reach element offset {1 << i} of a 16-byte row "
                              f"(it reaches {offs[d][j]})")
    used = set(contig) | set(rows)
    for d, o in offs.items():
        for j, off in enumerate(o):
            if (d, j) not in contig and off % row:
                raise LayoutError(f"{name}: rows must be 16-byte aligned, but {d} bit {j} moves by "
                                  f"{off} elements")
    extra = [r for r in regs if ("register", r) not in used]
    nsel = _log2(instr.count)
    if len(extra) < nsel:
        raise LayoutError(f"{name} loads {instr.count} matrices, i.e. {instr.count * (1 << len(word))} "
                          f"registers per thread; the layout has {1 << len(regs)}")
    select = tuple(("register", r) for r in extra[:nsel])
    # one matrix: the word registers and all 32 lanes (trans: the row-pair register)
    phase = tuple(("register", r) for r in word) + tuple(("lane", j) for j in range(5))
    return AccessPlan(instr, elem_bits, 5, tuple(word), phase, select,
                      _others(img, set(phase) | set(select)))


def plan_access(img: BitImages, instruction: Instruction | None, elem_bits: int,
                model: BankModel = BankModel(), store: bool = False) -> AccessPlan:
    """Plan ``instruction``; ``None`` is "auto": the widest ld/st vector the layouts allow."""
    element_bytes(elem_bits)
    if instruction is None:
        chain = widest_chain(img, elem_bits)
        return plan_ldst(img, ld_st((1 << len(chain)) * elem_bits, store), elem_bits, model, chain)
    if instruction.is_matrix:
        return plan_matrix(img, instruction, elem_bits)
    return plan_ldst(img, instruction, elem_bits, model)


# ----- the definition, executable -------------------------------------------------------

def phase_wavefronts(byte_ranges: Iterable[tuple[int, int]], model: BankModel = BankModel()) -> int:
    """Wavefronts for requests served together: max over banks of distinct words in it.

    ``byte_ranges`` holds ``(first_byte, nbytes)`` per lane (rule 2 of the module docstring).
    The distinct words are gathered once and counted per bank (word ``w`` lives in bank
    ``w mod num_banks``).

    >>> phase_wavefronts([(0, 4), (128, 4), (4, 4)])
    2
    """
    return _bank_load(_words(byte_ranges, model.bank_bytes), model.num_banks)


def _words(byte_ranges: Iterable[tuple[int, int]], bank_bytes: int) -> set[int]:
    """The distinct ``bank_bytes``-byte words the ranges ``(first_byte, nbytes)`` touch.

    >>> sorted(_words([(0, 4), (6, 4), (128, 1)], 4))
    [0, 1, 2, 32]
    """
    words: set[int] = set()
    for start, n in byte_ranges:
        first, last = start // bank_bytes, (start + n - 1) // bank_bytes
        if first == last:
            words.add(first)
        else:
            words.update(range(first, last + 1))
    return words


def _bank_load(words: set[int], num_banks: int) -> int:
    """The most words of ``words`` one bank holds (0 for none).

    >>> _bank_load({0, 32, 64, 1}, 32)
    3
    """
    if len(words) <= 1:
        return len(words)
    per_bank = [0] * num_banks
    for w in words:
        per_bank[w % num_banks] += 1
    return max(per_bank)


def warp_wavefronts(lane_addresses: Sequence[int | None], width: int, lanes_per_phase: int,
                    matrix: bool = False, model: BankModel = BankModel(), store: bool = False) -> int:
    """Wavefronts of one warp's instruction from each lane's byte address (``None``: the lane does
    not execute it, its guard is false): the sum over phases of :func:`phase_wavefronts` of the lanes
    that execute (rules 2-4), with one measured exception (rule 6 below): a 128-bit ``ld.shared``
    half-warp whose 16 lanes all fit in one wavefront (at most one distinct word per bank) is served in
    one wavefront, not two. Measured on an H100 with ncu (rule 6): a ``ld.shared.v4`` where every lane reads
    the same 16 bytes takes 2 wavefronts, not 4; a whole warp is never merged below one wavefront per
    half-warp (2, not 1). That it holds for any half-warp that fits one wavefront, not only for a
    uniform address, is an inference; stores (``store``) are not merged (not measured: counted per
    quarter-warp, an upper bound). ``matrix``: ``ldmatrix``/``stmatrix`` phases (no merging).
    ``lane_addresses`` holds only the lanes that give addresses (8 per matrix for ``.x1/.x2``).

    >>> warp_wavefronts([0] * 32, 16, 8), warp_wavefronts([16 * i for i in range(32)], 16, 8)
    (2, 4)
    >>> warp_wavefronts([128 * i if i < 4 else None for i in range(32)], 4, 32)
    4
    """
    bb, nb = model.bank_bytes, model.num_banks

    def words(lanes: Sequence[int | None]) -> set[int]:
        return _words(((a, width) for a in lanes if a is not None), bb)

    total = 0
    half = 2 * lanes_per_phase
    merge = width * 8 == 128 and not matrix and not store and half * width <= 2 * model.row_bytes
    step = half if merge else lanes_per_phase
    for i in range(0, len(lane_addresses), step):
        group = lane_addresses[i:i + step]
        sets = [words(group[j:j + lanes_per_phase]) for j in range(0, len(group), lanes_per_phase)]
        parts = sum(_bank_load(w, nb) for w in sets)
        total += 1 if merge and parts > 1 and _bank_load(set().union(*sets), nb) == 1 else parts
    return total


# ----- shared memory that is not GF(2)-linear -------------------------------------------

@dataclass(frozen=True)
class SharedAddressMap:
    """Where each tensor element lives when the map is not GF(2)-linear.

    ``fn`` maps tensor coordinates ``{"dim0": i, ...}`` to an element offset (an int);
    ``z3_fn`` maps the same coordinates as z3 bit-vectors to a bit-vector offset
    (``width`` bits). ``shape`` is ``{"dim0": n0, ...}``. A Triton padded layout also keeps
    its ``padding`` pairs ``((interval, pad), ...)`` and its ``component`` (the GF(2)-linear
    ``offset -> dims`` layout of logical offsets), what its text and Triton's
    ``PaddedSharedLayout`` (``interval_padding_pairs``, ``offset_bases``) hold; other maps
    leave them empty.

    >>> import z3
    >>> pad = SharedAddressMap({"dim0": 4, "dim1": 32}, lambda c: c["dim0"] * 33 + c["dim1"],
    ...     lambda c: z3.ZeroExt(12 - c["dim0"].size(), c["dim0"]) * 33 + z3.ZeroExt(12 - c["dim1"].size(), c["dim1"]),
    ...     width=12, name="row stride 33")
    >>> pad.offset({"dim0": 1, "dim1": 0})
    33
    """

    shape: dict
    fn: Callable[[Mapping[str, int]], int]
    z3_fn: Callable[[Mapping], object]
    width: int = 32
    name: str = "address function"
    padding: tuple = ()
    component: LinearLayout | None = None

    def offset(self, coords: Mapping[str, int]) -> int:
        return int(self.fn(coords))

    def to_function(self) -> FunctionLayout:
        """This map as a layout from tensor coordinates to out dim ``offset`` (what
        :func:`verilayout.core.smt.as_function` and so ``equal`` and ``placed`` take).

        >>> import z3
        >>> m = SharedAddressMap({"dim0": 2}, lambda c: 8 + c["dim0"], lambda c: z3.ZeroExt(3, c["dim0"]) + 8, 4)
        >>> m.to_function().apply({"dim0": 1})
        {'offset': 9}
        """
        return FunctionLayout(dict(self.shape), {"offset": 1 << self.width},
                              lambda c: {"offset": self.offset(c)},
                              lambda v: {"offset": self.z3_fn(v)}, self.name)


def padded_address_map(linear_smem, intervals: Sequence[tuple[int, int]], name: str | None = None
                       ) -> SharedAddressMap:
    """Triton's padded shared layout: linear offsets, plus ``pad`` elements every ``interval``.

    ``linear_smem`` maps ``offset`` to tensor coordinates (GF(2)); the physical offset
    of logical offset ``o`` is ``o + sum(pad * (o // interval))`` over the pairs
    (``#ttg.padded_shared<[interval:+pad, ...]>``).

    >>> from verilayout.core.linear_layout import identity_standard_nd
    >>> m = padded_address_map(identity_standard_nd("offset", [4, 32], [1, 0]), [(32, 1)])
    >>> m.offset({"dim0": 2, "dim1": 1})
    67
    """
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    for interval, pad in intervals:
        if not _is_pow2(interval) or pad < 1 or not _is_pow2(pad):
            raise LayoutError(f"padding {interval}:+{pad}: interval and padding must be powers of two")
    inv = linear_smem.invert() if linear_smem.is_invertible() else linear_smem.pseudoinvert()
    total = linear_smem.total_in_size
    extra = sum(pad * (total // interval) for interval, pad in intervals)
    width = max(2, (total + extra).bit_length() + 1)

    def fn(coords):
        logical = inv.apply(coords)
        o = logical["offset"]
        return o + sum(pad * (o // iv) for iv, pad in intervals)

    def z3_fn(coords):
        logical = z3_apply_linear(inv, coords, width=width)["offset"]
        acc = logical
        for iv, pad in intervals:
            acc = acc + z3.LShR(logical, _log2(iv)) * pad
        return acc

    label = name or "padded " + ",".join(f"{a}:+{b}" for a, b in intervals)
    return SharedAddressMap(dict(linear_smem.out_dims), fn, z3_fn, width, label,
                            tuple((int(a), int(b)) for a, b in intervals), linear_smem)


def placed(smem: Any, base_bytes: int, elem_bits: int) -> Any:
    """``smem`` placed at byte address ``base_bytes``: the outer offset ``base + L`` (every
    element moves by the same amount; a CuTe swizzle inside ``L`` still acts on ``L``'s own
    offsets, as Triton's shared layouts and CuTe's ``swz(base + L)`` with an aligned base do).

    Law: ``placed(L, b, w).offset(c) == b * 8 // w + as_shared(L).offset(c)``; base 0 is ``L``
    itself. A base that is not a whole number of elements is refused (no element straddles).

    >>> from verilayout.core.linear_layout import identity_standard_nd
    >>> placed(identity_standard_nd("offset", [4, 32], [1, 0]), 0x484, 32).offset({"dim0": 1, "dim1": 0})
    321
    """
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    if isinstance(base_bytes, bool) or not isinstance(base_bytes, int) or base_bytes < 0:
        raise LayoutError(f"base address {base_bytes!r}: expected a byte address >= 0")
    if base_bytes >= 1 << 32:
        raise LayoutError(f"base address {base_bytes:#x}: the shared window is 32-bit")
    if elem_bits % 8 and base_bytes:
        raise LayoutError(f"base address {base_bytes:#x}: {elem_bits}-bit elements are placed only at 0")
    if base_bytes * 8 % elem_bits:
        raise LayoutError(f"base address {base_bytes:#x} is not a multiple of the element size "
                          f"({elem_bits // 8} bytes)")
    inner = as_shared(smem, elem_bits)
    if not base_bytes:
        return inner
    shift = base_bytes * 8 // elem_bits
    if isinstance(inner, LinearLayout) and "offset" not in inner.in_dims:
        raise LayoutError(f"shared layout has no 'offset' input dim (has {inner.in_dim_names}): "
                          "only a shared layout is placed at a base address")
    if isinstance(inner, LinearLayout):
        inv = inner.invert() if inner.is_invertible() else inner.pseudoinvert()
        shape, lin_width = dict(inner.out_dims), max(2, inner.total_in_size.bit_length() + 1)
        fn = lambda c: inv.apply(c)["offset"]  # noqa: E731
        z3_inner = lambda c: z3_apply_linear(inv, c, width=lin_width)["offset"]  # noqa: E731
        name = "linear layout"
    else:
        shape, lin_width, fn, z3_inner, name = inner.shape, inner.width, inner.fn, inner.z3_fn, inner.name
    width = max(lin_width, shift.bit_length()) + 2

    def z3_fn(coords):
        off = z3_inner(coords)
        return z3.ZeroExt(width - off.size(), off) + shift

    return SharedAddressMap(dict(shape), lambda c: shift + int(fn(c)), z3_fn, width,
                            f"{name} at byte {base_bytes:#x}")


def cute_address_map(obj, elem_bits: int | None = None) -> SharedAddressMap:
    """A CuTe layout (``verilayout.cute``) as an address map: top-level mode ``i`` is ``dim{i}``.

    Offsets are in elements (a swizzle declared on byte addresses is converted with
    the element width). Every mode's size must be a power of two.

    >>> from verilayout.frontends.cute_text import parse_cute
    >>> cute_address_map(parse_cute("(16,32):(33,1)")).offset({"dim0": 1, "dim1": 2})
    35
    """
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    if not isinstance(obj, (cute.Layout, cute.ComposedLayout)):
        raise LayoutError(f"shared layout: expected a LinearLayout, an address map or a CuTe layout, "
                          f"got {type(obj).__name__}")
    base = obj.layout if isinstance(obj, cute.ComposedLayout) else obj
    sizes = [int(m.size) for m in base.modes()]
    for i, s in enumerate(sizes):
        if not _is_pow2(s):
            raise LayoutError(f"CuTe layout {cute.format_cute(obj)}: mode {i} has size {s}, not a power of two")
    shape = {f"dim{i}": s for i, s in enumerate(sizes)}
    names = list(shape)
    probe = cute.z3_offset(obj, tuple(z3.BitVec(f"_p{i}", max(1, _log2(s))) for i, s in enumerate(sizes)),
                           "elements", elem_bits)
    width = probe.size() + 1

    def fn(coords):
        return int(cute.offset_elements(obj, tuple(coords[n] for n in names), elem_bits))

    def z3_fn(coords):
        return cute.z3_offset(obj, tuple(coords[n] for n in names), "elements", elem_bits, width=width)

    return SharedAddressMap(shape, fn, z3_fn, width, cute.format_cute(obj))


def as_shared(smem: Any, elem_bits: int | None = None):
    """The shared side as a LinearLayout (GF(2) path) or a SharedAddressMap (z3 path).

    Accepts a LinearLayout with an ``offset`` input, a SharedAddressMap, a CuTe layout
    (GF(2)-linear bijections take the GF(2) path, anything else z3), or any object
    with ``to_address_map()``. Law: the result addresses every element where ``smem`` does.

    >>> from verilayout.frontends.cute_text import parse_cute
    >>> type(as_shared(parse_cute("(16,32):(33,1)"))).__name__, type(as_shared(parse_cute("(16,32):(32,1)"))).__name__
    ('SharedAddressMap', 'LinearLayout')
    """
    if isinstance(smem, (LinearLayout, SharedAddressMap)):
        return smem
    conv = getattr(smem, "to_address_map", None)
    if conv is not None:
        return conv()
    if isinstance(smem, (cute.Layout, cute.ComposedLayout)):
        try:
            return cute.shared_linear_layout(smem, elem_bits)
        except LayoutError:
            return cute_address_map(smem, elem_bits)
    raise LayoutError(f"shared layout: expected a LinearLayout, a SharedAddressMap or a CuTe layout, "
                      f"got {type(smem).__name__}")
