"""Shared-memory bank conflicts: how many wavefronts a warp's access needs, proved.

``analyze(reg_layout, smem_layout, elem_bits=..., instruction="auto")`` takes a
register layout (who holds which element: ``register, lane, warp[, block] -> dim0..``),
a shared layout (where each element lives: ``offset[, block] -> dim0..`` as Triton
writes it, or a non-linear :class:`~verilayout.hw.nvidia.banks.SharedAddressMap`), the
element width and the instruction, and returns a :class:`BankReport`.

* ``wavefronts``: per instruction (the sum over its phases), for the worst
  instruction of the access (the model: :mod:`verilayout.hw.nvidia.banks`);
* ``ideal_wavefronts``: one per phase (what a conflict-free access needs);
* ``conflict_free`` and ``verdict``: the proof (GF(2) rank argument, or z3), or the
  counterexample, which is also ``witness``: accesses of one phase that hit one bank
  at distinct words (lanes, registers, elements, byte addresses, bank);
* ``triton_conflicts``: what Triton 3.9's ``get_shared_bank_conflicts`` returns for
  the same pair ("excess accesses per wavefront" of the widest ld/st, computed on
  the shared layout's segment bits; see :mod:`verilayout.prove.banks` for its exact
  definition and where it differs from the hardware count). ``None`` when Triton
  cannot answer (non-linear shared memory, or its computation aborts).

The seed's example (``004_d7c7c1cef06bdad0.txt``): a 16x32 tensor of 32-bit
elements whose column 0 is read by lanes 0-15 (lanes 16-31 read it again).

>>> from verilayout.core.linear_layout import LinearLayout, identity_standard_nd
>>> col = LinearLayout({"register": [], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 0]]}, {"dim0": 16, "dim1": 32})
>>> analyze(col, identity_standard_nd("offset", [16, 32], [1, 0]), elem_bits=32).wavefronts
16
>>> xor = LinearLayout({"offset": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [1, 1], [2, 2], [4, 4], [8, 8]]},
...                    ["dim0", "dim1"])
>>> analyze(col, xor, elem_bits=32).conflict_free
True
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from verilayout.errors import LayoutError
from verilayout.hw.nvidia.banks import BankModel, Instruction, SharedAddressMap, parse_instruction
from verilayout.core.linear_layout import LinearLayout
from verilayout.prove.banks import Access, BankAnalysis, Witness, linear_analysis_and_triton, z3_bank_analysis
from verilayout.core.smt import DEFAULT_TIMEOUT_MS, Verdict

__all__ = ["analyze", "BankReport", "Access", "Witness", "as_shared"]


@dataclass(frozen=True)
class BankReport:
    """The answer of :func:`analyze` (see the module docstring for each field)."""

    instruction: str
    elem_bits: int
    num_banks: int
    wavefronts: int
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

    @property
    def conflict_ways(self) -> int:
        """Wavefronts per phase of the worst instruction (1 when conflict-free)."""
        return max(1, self.wavefronts // max(1, self.phases_per_instruction))

    @property
    def wavefronts_per_warp(self) -> int:
        """Wavefronts of all the instructions one warp issues for the whole access."""
        return self.wavefronts * self.instructions_per_warp

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {"instruction": self.instruction, "elem_bits": self.elem_bits, "num_banks": self.num_banks,
                "wavefronts": self.wavefronts, "ideal_wavefronts": self.ideal_wavefronts,
                "conflict_free": self.conflict_free, "triton_conflicts": self.triton_conflicts,
                "phases_per_instruction": self.phases_per_instruction,
                "instructions_per_warp": self.instructions_per_warp,
                "wavefronts_per_warp": self.wavefronts_per_warp, "vector_elems": self.vector_elems,
                "method": self.method, "exact": self.exact,
                "witness": self.witness.to_dict() if self.witness else None,
                "verdict": self.verdict.to_dict()}

    def summary(self) -> str:
        """A few lines for people."""
        state = {True: "conflict-free (proved)", False: f"{self.conflict_ways}-way bank conflict",
                 None: "unknown (solver gave up)"}[self.conflict_free]
        bound = "" if self.exact else " (upper bound)"
        lines = [f"{self.instruction}: {self.wavefronts} wavefronts per instruction{bound}, ideal "
                 f"{self.ideal_wavefronts}: {state}",
                 f"  {self.phases_per_instruction} phase(s) per instruction, {self.instructions_per_warp} "
                 f"instruction(s) per warp, {self.vector_elems} element(s) of {self.elem_bits} bits per "
                 f"lane access; proof by {self.method}"]
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


def as_shared(smem: Any, elem_bits: int | None = None):
    """The shared side as a LinearLayout (GF(2) path) or a SharedAddressMap (z3 path).

    Accepts a LinearLayout with an ``offset`` input, a SharedAddressMap, a CuTe layout
    (GF(2)-linear bijections take the GF(2) path, anything else z3), or any object
    with ``to_address_map()``.

    >>> from verilayout.cute import parse_cute
    >>> type(as_shared(parse_cute("(16,32):(33,1)"))).__name__, type(as_shared(parse_cute("(16,32):(32,1)"))).__name__
    ('SharedAddressMap', 'LinearLayout')
    """
    if isinstance(smem, (LinearLayout, SharedAddressMap)):
        return smem
    conv = getattr(smem, "to_address_map", None)
    if conv is not None:
        return conv()
    from verilayout.core import cute
    from verilayout.hw.nvidia.banks import cute_address_map
    if isinstance(smem, (cute.Layout, cute.ComposedLayout)):
        try:
            return cute.shared_linear_layout(smem, elem_bits)
        except LayoutError:
            return cute_address_map(smem, elem_bits)
    raise LayoutError(f"shared layout: expected a LinearLayout, a SharedAddressMap or a CuTe layout, "
                      f"got {type(smem).__name__}")


@functools.lru_cache(maxsize=None)
def _model(num_banks: int) -> BankModel:
    return BankModel(num_banks=num_banks)


def _instruction(instruction) -> Instruction | None:
    if instruction is None or (isinstance(instruction, str) and instruction.strip().lower() == "auto"):
        return None
    if isinstance(instruction, Instruction):
        return instruction
    return parse_instruction(instruction)


def analyze(reg_layout: LinearLayout, smem_layout: Any, *, elem_bits: int, instruction: Any = "auto",
            num_banks: int = 32, store: bool = False, timeout_ms: int = DEFAULT_TIMEOUT_MS,
            witness_size: int = 2) -> BankReport:
    """Wavefronts, proof and witness of ``reg_layout`` accessing ``smem_layout``.

    ``instruction``: ``"auto"`` (the widest ``ld.shared`` vector the two layouts allow,
    as a compiler picks; ``st.shared`` with ``store=True``), or text such as
    ``"ld.shared.v2.b32"``, ``"ldmatrix.x4"``, ``"stmatrix.x4.trans"``.
    ``witness_size``: how many same-bank accesses the witness lists (at least the
    conflicting pair; up to the per-phase wavefront count on the GF(2) path).

    >>> from verilayout.core.linear_layout import LinearLayout, identity_standard_nd
    >>> row = LinearLayout({"register": [[0, 1]], "lane": [[0, 2], [0, 4], [0, 8], [0, 16], [1, 0]]},
    ...                    ["dim0", "dim1"])
    >>> r = analyze(row, identity_standard_nd("offset", [2, 32], [1, 0]), elem_bits=16)
    >>> r.instruction, r.wavefronts, r.conflict_free
    ('ld.shared.b32', 1, True)
    """
    if not isinstance(elem_bits, int) or isinstance(elem_bits, bool):
        raise LayoutError(f"elem_bits={elem_bits!r}: expected an integer number of bits")
    if not isinstance(reg_layout, LinearLayout):
        raise LayoutError("register layout: expected a LinearLayout (register, lane, warp -> dims)")
    model = _model(num_banks)
    instr = _instruction(instruction)
    smem = as_shared(smem_layout, elem_bits)
    if isinstance(smem, LinearLayout):
        res, triton = linear_analysis_and_triton(reg_layout, smem, elem_bits, instr, model, store,
                                                 max(2, witness_size))
    else:
        res: BankAnalysis = z3_bank_analysis(reg_layout, smem, elem_bits, instr, model, store, timeout_ms)
        triton = None
    plan = res.plan
    free = {"proved": True, "counterexample": False, "unknown": None}[res.verdict.status]
    return BankReport(plan.instruction.name, elem_bits, num_banks, res.wavefronts, plan.ideal_wavefronts,
                      free, res.verdict, res.witness, triton, plan.phases_per_instruction,
                      plan.instructions_per_warp, plan.vector_elems, res.method, res.exact)


def _looks_like_mlir(text: str) -> bool:
    t = text.lstrip()
    return t.startswith(("#", "!", "tensor<", "module")) or "#ttg." in t or "#triton_gpu." in t


def parse_shared_linear(text: str, shape) -> LinearLayout:
    """``#ttg.shared_linear<{offset = [[..], ..], block = [..]}, alignment = N>`` -> ``offset, block -> dims``.

    >>> parse_shared_linear("#ttg.shared_linear<{offset = [[0, 1], [1, 0]]}, alignment = 16>", [2, 2]).bases
    {'offset': [[0, 1], [1, 0]], 'block': []}
    """
    import json
    import re
    m = re.fullmatch(r"\s*#(?:ttg|triton_gpu)\.shared_linear\s*<\s*\{(?P<body>.*)\}\s*(?:,\s*alignment\s*=\s*\d+\s*)?>\s*",
                     text, re.S)
    if not m:
        raise LayoutError("shared_linear: expected '#ttg.shared_linear<{offset = [[...], ...]}, alignment = N>'")
    fields = {}
    for fm in re.finditer(r"(\w+)\s*=\s*(\[[^=]*\])\s*(?:,|$)", m.group("body").strip()):
        try:
            fields[fm.group(1)] = json.loads(fm.group(2))
        except ValueError:
            raise LayoutError(f"shared_linear: cannot read {fm.group(1)} = {fm.group(2)}") from None
    unknown = set(fields) - {"offset", "block"}
    if unknown or "offset" not in fields:
        raise LayoutError(f"shared_linear: expected keys offset (and block), got {sorted(fields)}")
    dims = {f"dim{i}": int(s) for i, s in enumerate(shape)}
    return LinearLayout({"offset": fields["offset"], "block": fields.get("block", [])}, dims,
                        require_surjective=False)


def load_shared(text: str, shape=None, elem_bits: int | None = None):
    """Shared layout from text: Triton MLIR (nvmma, swizzled, shared_linear, padded) or CuTe.

    >>> load_shared("#ttg.padded_shared<[32:+1] {order = [1, 0], shape = [16, 32]}>", [16, 32]).name
    '#ttg.padded_shared<[32:+1]>'
    """
    from verilayout.hw.nvidia.banks import parse_padded_shared
    if _looks_like_mlir(text):
        if "padded_shared" in text:
            if shape is None:
                raise LayoutError("padded_shared needs the tensor shape (-t/--type)")
            return parse_padded_shared(_attr_text(text), shape)
        if "shared_linear" in text:
            if shape is None:
                raise LayoutError("shared_linear needs the tensor shape (-t/--type)")
            return parse_shared_linear(_attr_text(text), shape)
        from verilayout import parse
        return parse(text, shape=shape)
    from verilayout import parse
    return as_shared(parse(text, elem_bits=elem_bits), elem_bits)


def _attr_text(text: str) -> str:
    """The attribute of a memdesc type, or the text itself."""
    t = text.strip()
    if t.startswith("!"):
        start = t.index("#")
        depth, i = 0, start
        while i < len(t):
            if t[i] == "<":
                depth += 1
            elif t[i] == ">":
                depth -= 1
                if depth == 0:
                    return t[start:i + 1]
            i += 1
    return t


def load_register(text: str, shape=None) -> LinearLayout:
    """Register (distributed) layout from Triton MLIR text (attribute with shape, or a tensor type)."""
    from verilayout import parse
    lay = parse(text, shape=shape)
    if not isinstance(lay, LinearLayout) or "lane" not in lay.in_dim_names:
        raise LayoutError("--reg: expected a distributed layout (register, lane, warp -> dims)")
    return lay
