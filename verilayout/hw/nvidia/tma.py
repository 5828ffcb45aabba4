"""The Tensor Memory Accelerator (TMA): a tiled tensor map and what one box load writes to shared memory.

A tiled tensor map (CUDA driver API ``cuTensorMapEncodeTiled``; the comment block above its
declaration in ``cuda.h`` of CUDA 13.0 is the source of every limit below) describes a global
tensor and a *box*; ``cp.async.bulk.tensor`` (PTX ISA, "Data Movement and Conversion
Instructions: cp.async.bulk.tensor") copies one box between global and shared memory.

The rules, each with its source (``cuda.h`` = the ``cuTensorMapEncodeTiled`` documentation):

* rank 1..5, and >= 3 with an interleave (cuda.h);
* global address 16-byte aligned, 32 with ``INTERLEAVE_32B`` (cuda.h);
* global strides (rank - 1 of them, bytes) multiples of 16 (32 with ``INTERLEAVE_32B``), below
  2**40; global dims 1..2**32 (cuda.h);
* box dims 1..256; without interleave ``box[0] * element bytes`` a multiple of 16 (cuda.h);
* element strides 1..8; ``element_strides[0]`` is ignored without interleave, and along dim ``i``
  TMA moves ``ceil(box[i] / element_strides[i])`` elements (cuda.h);
* with a swizzle and no interleave, the box's inner extent in bytes is at most the swizzle span:
  32 / 64 / 128 bytes (cuda.h); ``INTERLEAVE_32B`` requires ``SWIZZLE_32B`` (cuda.h);
* the shared-memory destination is 128-byte aligned (PTX ISA cp.async.bulk.tensor; the CUDA C++
  Programming Guide's TMA swizzle table lists 128 bytes of shared-memory alignment for every mode);
* the swizzle modes (cuda.h: "Swizzle 16B chunks within 32B span" etc.): a 16-byte chunk index
  (bits 4..) XOR the 128-byte row index (bits 7..) modulo span/16; the 128B_ATOM variants move
  32- or 64-byte atoms instead. In CuTe terms (CUTLASS ``cute/atom/copy_traits_sm90_tma_swizzle.hpp``
  ``get_tma_swizzle_bits`` / ``get_tma_swizzle_base``): ``Swizzle<1,4,3>`` = 32B, ``<2,4,3>`` = 64B,
  ``<3,4,3>`` = 128B, ``<2,5,2>`` = 128B_ATOM_32B.

Measured on an H100 (CUDA 13.0 driver, ``hwtests/results/h100-2026-11-26-tma.jsonl.gz``, 322 tensor
maps, see ``docs/ground_truth.md``; each rule is a test in ``tests/test_hw_ground_truth.py``):

* the swizzle acts on the ABSOLUTE shared-memory address bits, so the pattern repeats every
  ``128 * 2**B`` bytes (1024 for 128B) and a reader that swizzles buffer-relative offsets agrees
  only on buffers aligned to that repeat (145 of 145 full-span boxes, at 1024- and 128-only-aligned
  destinations, with box offsets and element strides);
* a box whose inner extent is narrower than the swizzle span is written with each box row PADDED
  to the span (row ``y`` starts ``y * span`` bytes after the destination), then swizzled on the
  absolute address (28 of 28 cases: 16 B under 32B; 16/32 B under 64B; 16/32/64 B under 128B);
  widths that are not a power of two (48, 80, 96, 112 B) were not measured: the same padding
  for them is an inference and said so (:meth:`TensorMap.notes`);
* on sm_90, ``cuTensorMapEncodeTiled`` refuses the 128B_ATOM_* modes (CUDA_ERROR_INVALID_VALUE,
  131 of 131 cases): a finding (rule ``swizzle-arch``); on sm_100 they are accepted as an inference
  (no source states the architectures; CUTLASS maps ``Swizzle<2,5,2>``, the layout of tcgen05's
  sm_100-only ``128B_base32B`` descriptor mode, to 128B_ATOM_32B);
* a box whose innermost start coordinate times the element size is not a multiple of 16 bytes stops
  the kernel with an illegal instruction (4 of 4 cases; multiples of 16 bytes work): a finding
  (rule ``box-start-16B``) when the start coordinate is given.

Inferences (said so wherever they are used, see :attr:`SwizzlePattern.inferred` and
:meth:`TensorMap.notes`): ``128B_ATOM_64B`` as ``Swizzle<1,6,1>`` (the cuda.h comment "Swizzle 64B
chunks within 128B span" read with the 16/32-byte rule; CUTLASS asserts ``B == 2`` for it and gives
no ``S``); ``128B_ATOM_32B_FLIP_8B`` as ``Swizzle<2,5,2>`` plus address bit 3 XOR bit 7 ("swap lower
8B with upper 8B within each 16B for every alternate row", a row read as 128 bytes); every
128B_ATOM_* mode on sm_100; the padding of non-power-of-two narrow rows.

Not modelled (a :class:`LayoutError` from :func:`write_address` and friends): interleaved layouts
and the packed ``16U4``/``16U6`` types (their shared-memory placement is not in the sources above).

>>> t = TensorMap("f16", global_dims=(4096, 4096), global_strides=(8192,), box=(64, 128),
...               swizzle="128B")
>>> t.box_bytes, t.pattern.repeat, write_address(t, 0x400, (8, 1))   # row 1: chunk 1 ^ 1 = 0
(16384, 1024, 1152)
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from verilayout.bits import is_integer
from verilayout.core.cute.swizzle import Swizzle
from verilayout.dtypes import BITS, SWIZZLE_MODES, TMA_SWIZZLES, require_swizzle
from verilayout.errors import LayoutError

__all__ = ["SWIZZLES", "INTERLEAVES", "OOB_FILLS", "TMA_DTYPES", "SMEM_ALIGN", "SwizzlePattern",
           "swizzle_pattern", "TensorMap", "Limit", "limit_findings", "require_limits", "check_limits", "write_address",
           "write_z3", "write_table", "ADDR_BITS", "tma_element_bits", "require_arch", "MEASURED", "ATOM_MODES",
           "measured_findings", "TmaEncoding"]

#: CUtensorMapSwizzle, in enum order (cuda.h); the one table is :data:`verilayout.dtypes.TMA_SWIZZLES`.
SWIZZLES = TMA_SWIZZLES
#: CUtensorMapInterleave (cuda.h).
INTERLEAVES = ("none", "16B", "32B")
#: CUtensorMapFloatOOBfill (cuda.h): zero fill, or the NaN that requests a zero FMA.
OOB_FILLS = ("none", "nan_request_zero_fma")
#: CUtensorMapDataType names (cuda.h) -> bits; verilayout's element names are accepted too.
TMA_DTYPES = {"uint8": 8, "uint16": 16, "uint32": 32, "int32": 32, "uint64": 64, "int64": 64,
              "float16": 16, "float32": 32, "float64": 64, "bfloat16": 16, "float32_ftz": 32,
              "tfloat32": 32, "tfloat32_ftz": 32, "16u4_align8b": 4, "16u4_align16b": 4,
              "16u6_align16b": 6}
_PACKED = ("16u4_align8b", "16u4_align16b", "16u6_align16b")
_FLOAT = ("float16", "float32", "float64", "bfloat16", "float32_ftz", "tfloat32", "tfloat32_ftz")
#: Shared-memory destination alignment of cp.async.bulk.tensor, bytes (PTX ISA; CUDA guide table).
SMEM_ALIGN = 128
ADDR_BITS = 32
#: Where the measured rules come from (hwtests/results/README.md: machine, driver, CUDA, date).
MEASURED = "measured: H100, CUDA 13.0 driver, hwtests/results/h100-2026-11-26-tma.jsonl.gz"
#: The swizzle modes that move 32- or 64-byte atoms (refused on sm_90, measured).
ATOM_MODES = ("128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B", "128B_ATOM_64B")



@dataclass(frozen=True)
class TmaEncoding:
    """A Triton ``#ttg.nvmma_shared`` TMA descriptor encoding, read at the door
    (:func:`verilayout.frontends.triton.shared.tma_encoding` builds it): the copy block's
    ``rank``, ``swizzle`` (bytes: 0, 32, 64, 128), element ``bits``, ``transposed``, ``fp4``
    (fp4Padded) and the ``box`` Triton's lowering uses (``getTMABlockShape``, one entry per dim of
    the block; None where no box is modelled: fp4).

    >>> TmaEncoding(2, 128, 16, False, False, (64, 128)).box
    (64, 128)
    """

    rank: int
    swizzle: int = 0
    bits: int = 0
    transposed: bool = False
    fp4: bool = False
    box: tuple[int, ...] | None = None

@dataclass(frozen=True)
class SwizzlePattern:
    """One swizzle mode as an XOR on absolute byte addresses: ``a ^ (((a >> 7) & (2**bits - 1)) << base)``
    (:attr:`swizzle`, CuTe ``Swizzle<bits, base, 7 - base>`` on bytes, at offset 0: the pattern is
    on the absolute address), plus bit 3 ^= bit 7 when ``flip8`` (the one extra).

    ``span`` is the swizzle span in bytes, ``atom`` the unit it moves, ``repeat`` the bytes after
    which the pattern repeats; ``inferred`` says why the rule is an inference ("" when cited).

    >>> p = swizzle_pattern("64B"); (p.cute, p.repeat, p.apply(0x80 + 0x10))
    ((2, 4, 3), 512, 128)
    """

    mode: str
    span: int
    atom: int
    bits: int
    base: int
    flip8: bool = False
    inferred: str = ""

    @cached_property
    def swizzle(self) -> Swizzle:
        """The core :class:`~verilayout.core.cute.swizzle.Swizzle` on byte addresses.

        >>> str(swizzle_pattern("128B").swizzle), str(swizzle_pattern("128B_ATOM_64B").swizzle)
        ('Sw<3,4,3>', 'Sw<1,6,1>')
        """
        return Swizzle(self.bits, self.base, 7 - self.base)

    @property
    def cute(self) -> tuple[int, int, int]:
        """CuTe's ``Swizzle<B, M, S>`` on byte addresses (``(0, 4, 3)`` for none)."""
        return (self.bits, self.base, 7 - self.base)

    @property
    def repeat(self) -> int:
        """Bytes after which the pattern repeats (1 for none)."""
        return 128 << self.bits if self.bits or self.flip8 else 1

    def apply(self, addr: int) -> int:
        """The swizzled byte address (integers or numpy arrays)."""
        out = addr ^ self.swizzle.xor_term(addr)
        if self.flip8:
            out = out ^ (((addr >> 7) & 1) << 3)
        return out

    def z3(self, addr: z3.BitVecRef) -> z3.BitVecRef:
        """:meth:`apply` on a bit-vector byte address."""
        import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
        out = addr ^ self.swizzle.z3_xor_term(addr)
        if self.flip8:
            out = out ^ ((z3.LShR(addr, 7) & 1) << 3)
        return out


_INFERRED = {
    "128B_ATOM_32B_FLIP_8B":
        "inference: 128B_ATOM_32B plus byte-address bit 3 XOR bit 7 (cuda.h: 'swap lower 8B with upper "
        "8B within each 16B for every alternate row', a row read as 128 bytes)",
    "128B_ATOM_64B":
        "inference: Swizzle<1,6,1> (cuda.h: 'Swizzle 64B chunks within 128B span' read as the 16- and "
        "32-byte atom rules; CUTLASS gives no shift for it)",
}


def _pattern(mode: str) -> SwizzlePattern:
    """A mode's row of :data:`verilayout.dtypes.SWIZZLE_MODES` as a pattern (span 0 for none)."""
    b, m, _, row = SWIZZLE_MODES[mode]
    return SwizzlePattern(mode, row if mode != "none" else 0, 1 << m, b, m, mode.endswith("FLIP_8B"),
                          _INFERRED.get(mode, ""))


_PATTERNS = {mode: _pattern(mode) for mode in TMA_SWIZZLES}


def swizzle_pattern(mode: str) -> SwizzlePattern:
    """The :class:`SwizzlePattern` of a mode of :data:`SWIZZLES` (a ``CUtensorMapSwizzle`` name or
    value is read at the door: :func:`verilayout.frontends.names.parse_swizzle` with ``"tma"``).

    >>> swizzle_pattern("128B_ATOM_32B").cute
    (2, 5, 2)
    """
    return _PATTERNS[require_swizzle(mode, "tma")]


def tma_element_bits(dtype: str) -> int:
    """Bits of one element of a tensor map or of its reader, under every spelling verilayout meets:
    a ``CUtensorMapDataType`` name (``FLOAT32``, ``CU_TENSOR_MAP_DATA_TYPE_UINT8``, any case),
    a verilayout/PTX name (``f16``, ``e4m3``, ``tf32``) or an MLIR type Triton prints (``ui8``,
    ``i16``, ``si32``, ``f8E4M3FN``, ``f64``). Law: the width in bits, else LayoutError.

    >>> tma_element_bits("CU_TENSOR_MAP_DATA_TYPE_FLOAT64"), tma_element_bits("ui8"), tma_element_bits("f8E5M2")
    (64, 8, 8)
    """
    if not isinstance(dtype, str):
        raise LayoutError(f"tensor map element type {dtype!r}: expected a name")
    key = dtype.strip().lower().removeprefix("cu_tensor_map_data_type_")
    if key in TMA_DTYPES:
        return TMA_DTYPES[key]
    if dtype in BITS:
        return BITS[dtype]
    if re.fullmatch(r"(?:[su]?i|u|s|b)(8|16|32|64)", dtype) or re.fullmatch(r"f(16|32|64)", dtype):
        return int(re.search(r"[0-9]+$", dtype).group(0))
    if re.fullmatch(r"f8E[0-9]M[0-9][A-Z]*", dtype):
        return 8
    raise LayoutError(f"tensor map element type {dtype!r}: expected a CUtensorMapDataType name "
                      f"({', '.join(TMA_DTYPES)}), an element type such as f16, bf16, e4m3, f32, f64, or "
                      "an MLIR type Triton prints (i8, ui8, i16, i32, i64, f8E4M3FN, ...)")


def _dtype_bits(dtype: str) -> int:
    return tma_element_bits(dtype)


def _cu_name(dtype: str) -> str:
    """Law: a CUtensorMapDataType spelling as the key of :data:`TMA_DTYPES` (other names lower-cased)."""
    return dtype.strip().lower().removeprefix("cu_tensor_map_data_type_")


def require_arch(arch: object) -> str:
    """``arch`` if it is a TMA rule family, ``sm_90`` (Hopper) or ``sm_100`` (Blackwell), the
    names :class:`~verilayout.hw.nvidia.descriptor.Descriptor` uses; else ``LayoutError`` (names
    such as ``sm_90a`` or ``sm_103`` are read at the door:
    :func:`verilayout.frontends.names.parse_arch`).

    >>> require_arch("sm_100")
    'sm_100'
    """
    if arch in ("sm_90", "sm_100"):
        return arch  # type: ignore[return-value]
    raise LayoutError(f"arch {arch!r}: the TMA rules are modelled for sm_90 (sm_90a) and sm_100 (sm_100a)")


def _ints(name: str, v, n: int | None = None) -> tuple[int, ...]:
    if is_integer(v):
        v = (v,)
    if not isinstance(v, (tuple, list)) or not all(is_integer(x) for x in v):
        raise LayoutError(f"tensor map {name} = {v!r}: expected a list of integers")
    if n is not None and len(v) != n:
        raise LayoutError(f"tensor map {name} has {len(v)} entries, expected {n}")
    return tuple(int(x) for x in v)


@dataclass(frozen=True)
class TensorMap:
    """A tiled tensor map (``cuTensorMapEncodeTiled``'s arguments; dims innermost first).

    ``global_strides`` are the ``rank - 1`` byte strides of dims 1.. (default: dense);
    ``element_strides`` default to ones. Construction checks the shape of the arguments only;
    the hardware limits are :func:`limit_findings` (a tensor map the driver refuses is a finding,
    not bad input).

    >>> TensorMap("bf16", global_dims=(128, 64), box=(64, 64), swizzle="128B").global_strides
    (256,)
    """

    dtype: str
    global_dims: tuple
    box: tuple
    global_strides: tuple | None = None
    element_strides: tuple | None = None
    interleave: str = "none"
    swizzle: str = "none"
    oob_fill: str = "none"
    global_address: int = 0
    bits: int = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "bits", _dtype_bits(self.dtype))
        box = _ints("box", self.box)
        rank = len(box)
        if not 1 <= rank <= 5:
            raise LayoutError(f"tensor map rank {rank}: cuTensorMapEncodeTiled takes 1..5 dims")
        dims = _ints("global_dims", self.global_dims, rank)
        if self.global_strides is None:
            strides, acc = [], max(1, self.bits // 8)
            for d in dims[:-1]:
                acc *= d
                strides.append(acc)
            strides = tuple(strides)
        else:
            strides = _ints("global_strides", self.global_strides, rank - 1)
        es = (1,) * rank if self.element_strides is None else _ints("element_strides", self.element_strides, rank)
        object.__setattr__(self, "box", box)
        object.__setattr__(self, "global_dims", dims)
        object.__setattr__(self, "global_strides", strides)
        object.__setattr__(self, "element_strides", es)
        object.__setattr__(self, "swizzle", require_swizzle(self.swizzle, "tma"))
        il = str(self.interleave).strip().upper().removeprefix("CU_TENSOR_MAP_INTERLEAVE_").lower()
        if il.upper() not in [i.upper() for i in INTERLEAVES]:
            raise LayoutError(f"interleave {self.interleave!r}: expected one of {', '.join(INTERLEAVES)}")
        object.__setattr__(self, "interleave", "none" if il == "none" else il.upper())
        oob = str(self.oob_fill).strip().lower().removeprefix("cu_tensor_map_float_oob_fill_")
        if oob not in OOB_FILLS:
            raise LayoutError(f"oob_fill {self.oob_fill!r}: expected one of {', '.join(OOB_FILLS)}")
        object.__setattr__(self, "oob_fill", oob)
        if not is_integer(self.global_address) \
                or self.global_address < 0:
            raise LayoutError(f"global_address {self.global_address!r}: expected a byte address >= 0")

    @property
    def rank(self) -> int:
        return len(self.box)

    @property
    def pattern(self) -> SwizzlePattern:
        return _PATTERNS[self.swizzle]

    @property
    def elem_bytes(self) -> int:
        if self.bits % 8:
            raise LayoutError(f"tensor map type {self.dtype} ({self.bits}-bit packed) is not modelled")
        return self.bits // 8

    @property
    def smem_box(self) -> tuple[int, ...]:
        """Elements written along each dim: ``ceil(box[i] / element_strides[i])``, dim 0 whole
        without interleave (cuda.h: element_strides[0] is ignored then)."""
        out = []
        for i, (b, e) in enumerate(zip(self.box, self.element_strides)):
            out.append(b if (i == 0 and self.interleave == "none") else -(-b // e))
        return tuple(out)

    @property
    def inner_bytes(self) -> int:
        """The box's inner extent in bytes (``box[0] * element size``)."""
        return self.box[0] * self.bits // 8

    @property
    def box_bytes(self) -> int:
        """Bytes one box load writes (the transaction count an mbarrier expects)."""
        n = self.bits
        for s in self.smem_box:
            n *= s
        return n // 8

    @property
    def row_bytes(self) -> int:
        """Shared-memory bytes between box rows: the inner extent, padded to the swizzle span when
        the box is narrower (measured, module text; equal to :attr:`inner_bytes` otherwise)."""
        span = self.pattern.span if self.interleave == "none" else 0
        return max(self.smem_box[0] * self.elem_bytes, span)

    @property
    def smem_bytes(self) -> int:
        """Shared-memory bytes the box occupies (padded rows included; :attr:`box_bytes` is what the
        mbarrier counts, measured equal to the unpadded bytes)."""
        n = self.row_bytes
        for s in self.smem_box[1:]:
            n *= s
        return n

    def pitches(self) -> tuple[int, ...]:
        """Byte distance between neighbours along each dim in shared memory (dim 0 fastest; box rows
        :attr:`row_bytes` apart, padded to the swizzle span, measured)."""
        out, acc = [self.elem_bytes], self.row_bytes
        for s in self.smem_box[1:]:
            out.append(acc)
            acc *= s
        return tuple(out)

    def notes(self, arch: str = "sm_90") -> list[str]:
        """The inferences the write model of this tensor map rests on for ``arch`` (empty: every
        rule used is cited or measured).

        >>> TensorMap("f16", global_dims=(24, 8), box=(24, 8), swizzle="64B").notes()[0][:40]
        'inference: a 48-byte inner box narrower '
        """
        out = [self.pattern.inferred] if self.pattern.inferred else []
        if self.swizzle in ATOM_MODES and require_arch(arch) == "sm_100":
            out.append(f"inference: SWIZZLE_{self.swizzle} on sm_100 (taken as accepted and placed as CUTLASS maps "
                       "it; not measured there, and refused on sm_90 as measured)")
        inner = self.inner_bytes
        if self.pattern.span and self.interleave == "none" and inner < self.pattern.span and inner & (inner - 1):
            out.append(f"inference: a {inner}-byte inner box narrower than the {self.pattern.span}-byte swizzle "
                       "span is padded to the span like the measured 16/32/64-byte boxes")
        return out

    def to_dict(self) -> dict:
        """JSON-ready fields."""
        return {"dtype": self.dtype, "global_dims": list(self.global_dims), "box": list(self.box),
                "global_strides": list(self.global_strides), "element_strides": list(self.element_strides),
                "interleave": self.interleave, "swizzle": self.swizzle, "oob_fill": self.oob_fill}


@dataclass(frozen=True)
class Limit:
    """A ``cuTensorMapEncodeTiled`` / ``cp.async.bulk.tensor`` rule a tensor map breaks."""

    rule: str
    message: str
    source: str

    def to_dict(self) -> dict:
        return {"rule": self.rule, "message": self.message, "source": self.source}


_CUDA_H = "CUDA driver API cuTensorMapEncodeTiled (cuda.h)"
_ARCH_MSG = ("cuTensorMapEncodeTiled returns CUDA_ERROR_INVALID_VALUE for SWIZZLE_{mode} on sm_90 ({src}: 131 of 131 "
             "128B_ATOM_* maps refused)")
_PTX = "PTX ISA cp.async.bulk.tensor"


def _is_float(dtype: str) -> bool:
    d = _cu_name(dtype)
    return d in _FLOAT or (d not in TMA_DTYPES and d.startswith(("f", "bf", "tf", "e")))


def limit_findings(t: TensorMap, smem_address: int | None = None, *, arch: str = "sm_90",
                   start=None) -> list[Limit]:
    """Every hardware limit ``t`` breaks on ``arch`` (and the 128-byte destination alignment when
    ``smem_address`` is given, the 16-byte innermost box start when the box's ``start`` coordinate
    is given, dims innermost first). Law: empty iff the driver's documented requirements and the
    measured ones (module text) hold.

    >>> t = TensorMap("f16", global_dims=(4096, 64), box=(128, 64), swizzle="128B")
    >>> [f.rule for f in limit_findings(t, smem_address=0x440, start=(3, 0))]
    ['inner-box-vs-swizzle', 'smem-alignment', 'box-start-16B']
    """
    out: list[Limit] = []
    il = t.interleave
    if il != "none" and t.rank < 3:
        out.append(Limit("rank", f"rank {t.rank} with interleave {il}: interleaved maps need rank >= 3", _CUDA_H))
    ga = 32 if il == "32B" or _cu_name(t.dtype) in ("16u4_align16b", "16u6_align16b") else 16
    if t.global_address % ga:
        out.append(Limit("global-address", f"global address {t.global_address:#x} is not {ga}-byte aligned", _CUDA_H))
    for i, d in enumerate(t.global_dims):
        if not 1 <= d <= 1 << 32:
            out.append(Limit("global-dim", f"global_dims[{i}] = {d} is outside 1..2**32", _CUDA_H))
    sa = 32 if ga == 32 else 16
    for i, s in enumerate(t.global_strides):
        if s % sa or not 0 < s < 1 << 40:
            out.append(Limit("global-stride", f"global_strides[{i}] = {s} bytes is not a multiple of {sa} "
                             "below 2**40", _CUDA_H))
    for i, b in enumerate(t.box):
        if not 1 <= b <= 256:
            out.append(Limit("box-dim", f"box[{i}] = {b} is outside 1..256", _CUDA_H))
    if il == "none" and (t.box[0] * t.bits) % 128:
        out.append(Limit("box-inner-16B", f"box[0] * element size = {t.box[0] * t.bits / 8:g} bytes is not a "
                         "multiple of 16", _CUDA_H))
    for i, e in enumerate(t.element_strides):
        if not 1 <= e <= 8:
            out.append(Limit("element-stride", f"element_strides[{i}] = {e} is outside 1..8", _CUDA_H))
    span = t.pattern.span
    if il == "none" and span and t.inner_bytes > span:
        out.append(Limit("inner-box-vs-swizzle", f"the box's inner extent is {t.inner_bytes} bytes, more than the "
                         f"{span}-byte span of SWIZZLE_{t.swizzle}", _CUDA_H))
    if il == "32B" and t.swizzle != "32B":
        out.append(Limit("interleave-swizzle", f"INTERLEAVE_32B needs SWIZZLE_32B, not {t.swizzle}", _CUDA_H))
    if t.oob_fill != "none" and not _is_float(t.dtype):
        out.append(Limit("oob-fill", f"NaN OOB fill needs a floating-point type, not {t.dtype}", _CUDA_H))
    if smem_address is not None and smem_address % SMEM_ALIGN:
        out.append(Limit("smem-alignment", f"the shared-memory destination {smem_address:#x} is not "
                         f"{SMEM_ALIGN}-byte aligned", _PTX))
    return out + measured_findings(t, arch=arch, start=start)


def measured_findings(t: TensorMap, *, arch: str = "sm_90", start=None) -> list[Limit]:
    """The limits no document states that the H100 showed (module text): the 128B_ATOM_* modes on
    sm_90, and an innermost box start (``start[0]`` elements, when given) that is not a multiple of
    16 bytes. Law: empty when neither is broken.

    >>> t = TensorMap("uint16", global_dims=(128, 160), box=(64, 16))
    >>> [f.rule for f in measured_findings(t, start=(3, 5))], measured_findings(t, start=(8, 5))
    (['box-start-16B'], [])
    """
    out: list[Limit] = []
    if t.swizzle in ATOM_MODES and require_arch(arch) == "sm_90":
        out.append(Limit("swizzle-arch", _ARCH_MSG.format(mode=t.swizzle, src=MEASURED), MEASURED))
    if start is not None:
        c = tuple(int(x) for x in _ints("start coordinate", start, t.rank))
        if t.interleave == "none" and (c[0] * t.bits) % 128:
            out.append(Limit("box-start-16B", f"the box's innermost start coordinate {c[0]} x {t.bits // 8} bytes is "
                             "not a multiple of 16 bytes: the H100 stopped such a copy with an illegal instruction "
                             "(4 of 4 cases)", MEASURED))
    return out


def require_limits(t: TensorMap, smem_address: int | None = None, *, arch: str = "sm_90",
                   start=None) -> TensorMap:
    """``t`` itself, or a :class:`LayoutError` naming the first broken limit (``check_limits`` is
    its former name, kept for callers: it returns the map, not a verdict).

    >>> require_limits(TensorMap("f16", global_dims=(64,), box=(300,))).box
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: tensor map: box[0] = 300 is outside 1..256 (CUDA driver API cuTensorMapEncodeTiled (cuda.h))
    """
    f = limit_findings(t, smem_address, arch=arch, start=start)
    if f:
        raise LayoutError(f"tensor map: {f[0].message} ({f[0].source})")
    return t


#: The former name of :func:`require_limits` (``tests/test_tma.py`` and scripts import it).
check_limits = require_limits


def _modelled(t: TensorMap) -> None:
    if t.interleave != "none":
        raise LayoutError(f"the shared-memory placement of interleave {t.interleave} is not modelled")
    if _cu_name(t.dtype) in _PACKED or t.bits % 8:
        raise LayoutError(f"the shared-memory placement of packed type {t.dtype} is not modelled")


def write_address(t: TensorMap, smem_address: int, coord) -> int:
    """The shared-memory byte where one box load to ``smem_address`` writes the first byte of the
    element at box coordinate ``coord`` (dims innermost first, in written elements):
    ``swizzle(smem_address + sum(coord[i] * pitch[i]))``, the swizzle on the absolute address.

    >>> t = TensorMap("f16", global_dims=(64, 64), box=(64, 16), swizzle="128B")
    >>> write_address(t, 0, (0, 1)), write_address(t, 0x80, (0, 0))   # the same row, two bases
    (144, 144)
    """
    _modelled(t)
    c = _ints("coordinate", coord, t.rank)
    for i, (x, n) in enumerate(zip(c, t.smem_box)):
        if not 0 <= x < n:
            raise LayoutError(f"box coordinate {c}: dim {i} is outside 0..{n - 1}")
    lin = smem_address + sum(x * p for x, p in zip(c, t.pitches()))
    return int(t.pattern.apply(lin))


def write_z3(t: TensorMap, smem_address: z3.BitVecRef, coord) -> z3.BitVecRef:
    """:func:`write_address` over bit-vectors (``ADDR_BITS`` wide; coordinates zero-extended).

    >>> import z3
    >>> t = TensorMap("f16", global_dims=(64, 64), box=(64, 16), swizzle="128B")
    >>> z3.simplify(write_z3(t, z3.BitVecVal(0, 32), (z3.BitVecVal(0, 8), z3.BitVecVal(1, 8)))).as_long()
    144
    """
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    _modelled(t)
    if len(coord) != t.rank:
        raise LayoutError(f"{len(coord)} coordinates for a rank-{t.rank} box")
    lin = smem_address
    for x, p in zip(coord, t.pitches()):
        xv = z3.ZeroExt(ADDR_BITS - x.size(), x) if x.size() < ADDR_BITS else x
        lin = lin + xv * p
    return t.pattern.z3(lin)


def write_table(t: TensorMap, smem_address: int) -> np.ndarray:
    """Every element's byte (brute force): ``table[c_{r-1}, ..., c_0]`` (C order, dim 0 last).

    >>> t = TensorMap("f16", global_dims=(16, 8), box=(16, 8), swizzle="32B")
    >>> write_table(t, 0)[4, :9:8].tolist()    # box row 4 = bytes 128..159: 128-byte row 1 swaps chunks
    [144, 128]
    """
    import numpy as np  # deferred: start-up time (only array code needs numpy)
    _modelled(t)
    n = 1
    for s in t.smem_box:
        n *= s
    if n > 1 << 22:
        raise LayoutError(f"a box of {n} elements is too large to enumerate (limit {1 << 22})")
    grids = np.meshgrid(*[np.arange(s, dtype=np.int64) for s in reversed(t.smem_box)], indexing="ij")
    lin = np.full(grids[0].shape, smem_address, dtype=np.int64)
    for g, p in zip(reversed(grids), t.pitches()):
        lin = lin + g * p
    return t.pattern.apply(lin)
