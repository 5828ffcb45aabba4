"""wgmma / tcgen05 shared-memory matrix descriptors and the hardware address model.

The 64-bit sm_90 descriptor (PTX ISA 9.7.15.5.1.2.2, "Matrix Descriptor Format"):
start address >> 4 in bits 0-13, LBO >> 4 in 16-29, SBO >> 4 in 32-45, base offset in
49-51, swizzle in 62-63 (0 none, 1 128B, 2 64B, 3 32B). The sm_100 (tcgen05)
descriptor (PTX ISA 9.7.16.4.1, CUTLASS ``cute/arch/mma_sm100_desc.hpp``) keeps the first
three fields, fixes bits 46-48 to 0b001, puts the LBO mode in bit 52 (0 relative, 1 the
absolute address of a 48-byte K-block's second chunk) and the swizzle in 61-63 (0 none,
1 128B with 32B atoms = CuTe ``Swizzle<2,5,2>``, 2 128B, 4 64B, 6 32B); every mode is
modelled. tcgen05 also reads fp4/fp6 operands (:data:`TCGEN05_TYPES`).
``matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4``.

>>> d = encode(start_address=0x400, lbo=16, sbo=1024, swizzle="128B")
>>> hex(d.value), d.sbo_field
('0x4000004000010040', 64)
>>> decode(d.value) == d
True

The address model: :func:`hardware_address_function` turns a descriptor, a
major-ness, an element type and the MN extent of one wgmma into the function
``(mn, k) -> shared-memory address`` the hardware reads (the canonical layout of
PTX ISA 9.7.15.5.1.2 "Shared Memory Matrix Layout" plus the swizzle XOR on address bits, the
swizzle phase given by the base offset). :func:`contract_findings` lists every
rule of the descriptor contract a descriptor breaks; such a descriptor is not
modelled as if it worked.

Addresses inside :class:`AddressFunction` are in **bits** (byte address * 8), so
that ``b1`` operands are exact; the public helpers say which unit they return.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping

from verilayout.bits import index_bits, is_integer, is_pow2, log2, trailing_zeros
from verilayout.core.cute.swizzle import PhasedSwizzle, Swizzle
from verilayout.dtypes import SWIZZLE_MODES, require_major, require_swizzle
from verilayout.errors import LayoutError
from verilayout.hw.nvidia.wgmma import WGMMA_DTYPE_BITS, dtype_bits, k_of_dtype, swizzle_units

__all__ = [
    "ARCHS", "SMEM_WINDOW", "Descriptor", "decode", "encode", "matrix_descriptor_encode",
    "Finding", "contract_findings", "required_base_offset", "pattern_repeat_bytes",
    "Term", "BitSwizzle", "AddressFunction", "Affine", "Split",
    "hardware_address_function", "hardware_address",
    "TCGEN05_TYPES", "operand_bits", "operand_elems_per_unit", "operand_k", "storage_bits",
    "swizzle_geometry", "ABSOLUTE_LBO_K_BYTES",
]

ARCHS = ("sm_90", "sm_100")
SMEM_WINDOW = 1 << 18          # bytes addressable by (x & 0x3FFFF)
ADDR_BITS = 48                 # z3 bit-vector width for bit addresses

_SM90_TYPES = {0: "none", 1: "128B", 2: "64B", 3: "32B"}
_SM100_TYPES = {0: "none", 1: "128B_base32B", 2: "128B", 4: "64B", 6: "32B"}
_FIELD14 = (1 << 14) - 1


def _types(arch: str) -> dict[int, str]:
    if arch == "sm_90":
        return _SM90_TYPES
    if arch == "sm_100":
        return _SM100_TYPES
    raise LayoutError(f"arch {arch!r}: expected sm_90 (wgmma) or sm_100 (tcgen05)")


def _swizzle_shift(arch: str) -> int:
    return 62 if arch == "sm_90" else 61


def _field_mask(arch: str) -> int:
    """Bits owned by named fields (everything else is reserved or fixed)."""
    m = _FIELD14 | _FIELD14 << 16 | _FIELD14 << 32 | 0b111 << 49
    if arch == "sm_90":
        return m | 0b11 << 62
    return m | 0b111 << 61 | 1 << 52


#: sm_100 descriptor bits 46-47: the version field (1), the fixed bits the reserved value XORs out
_VERSION_MASK = 0b11 << 46


def _fixed_bits(arch: str) -> int:
    return 1 << 46 if arch == "sm_100" else 0


def matrix_descriptor_encode(x: int) -> int:
    """PTX's ``matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4``.

    >>> matrix_descriptor_encode(0x400), matrix_descriptor_encode(0x40010)
    (64, 1)
    """
    return (int(x) & 0x3FFFF) >> 4


# ----- tcgen05-only operand types (fp4 / fp6) -----------------------------------------------
#
# name: (element bits, address bits per element, elements per 16-byte unit, K of one MMA).
#
# * ``e2m1``: ``.kind::mxf4`` / ``.kind::mxf4nvf4``: two 4-bit elements per byte, no padding
#   (PTX ISA 9.7.16.10.4.6 "Packing format used for matrix A and B by .kind::mxf4 and
#   .kind::mxf4nvf4 in Shared Memory"); K = 64 (256 bits of K, like every kind).
# * ``e2m1_padded``, ``e3m2``, ``e2m3``: ``.kind::f8f6f4`` / ``.kind::mxf8f6f4``: "contiguously
#   packed along with padding" (PTX ISA 9.7.16.10.4.4): 16 elements fill the first 8 (4-bit) or
#   12 (6-bit) bytes of each 16-byte unit and the rest is a gap (CUDA 13.0 ``cuda.h``:
#   ``CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B`` "8 byte gaps between every 8 byte chunk",
#   ``CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B`` "4 byte gaps between every 12 byte chunk"; Triton's
#   ``fp4Padded`` nvmma_shared, whose offset basis 3 is zero). K = 32 (CUTLASS
#   ``mma_traits_sm100.hpp`` SM100_MMA_F8F6F4_SS: "Logical shape-K is always 256bits", K = 32).
#   Addresses of these types are **slot addresses**: element j of a 16-byte unit sits in 8-bit
#   slot j, as CUTLASS allocates them (``ElementAMma_SmemAllocType = uint8_t`` for the
#   Mxf8f6f4 kinds, ``sm100_blockscaled_*_builder.inl``); the packing of the 16 slots of a unit
#   into its first 8/12 bytes is one fixed map per unit that the writer (TMA 16U4/16U6_ALIGN16B)
#   and the MMA reader both apply, so equal slot addresses mean equal bits.
TCGEN05_TYPES: dict[str, tuple[int, int, int, int]] = {
    "e2m1": (4, 4, 32, 64),
    "e2m1_padded": (4, 8, 16, 32),
    "e3m2": (6, 8, 16, 32),
    "e2m3": (6, 8, 16, 32),
}

#: The K extent, in bytes, of the MMAs the absolute leading-dimension mode is for (PTX ISA
#: 9.7.16.3.1.2 "Absolute address mode for K dimension being 48B"; CUTLASS SM103 MXF4 "ULTRA":
#: K = 96 e2m1).
ABSOLUTE_LBO_K_BYTES = 48


def _is_tcgen05_only(dtype: str) -> bool:
    return dtype in TCGEN05_TYPES and dtype not in WGMMA_DTYPE_BITS


#: Untyped storage elements (``b8`` .. ``b64``): a shared-memory tile of any element type read by
#: something other than an MMA (a TMA copy's reader, :mod:`verilayout.prove.tma`). They have address
#: slots (:func:`operand_bits`) but no MMA K (:func:`operand_k` refuses them).
STORAGE_BITS = {"b8": 8, "b16": 16, "b32": 32, "b64": 64}


def operand_bits(dtype: str) -> int:
    """Address bits one element of an MMA operand occupies (its slot): the element width for
    wgmma types, packed ``e2m1`` and the untyped storage elements of :data:`STORAGE_BITS`, 8 for the
    16-byte-padded fp4/fp6 types.

    Law: ``operand_bits(t) * operand_elems_per_unit(t) == 128`` for every MMA type.

    >>> operand_bits("f16"), operand_bits("e2m1"), operand_bits("e3m2")
    (16, 4, 8)
    """
    if dtype in TCGEN05_TYPES:
        return TCGEN05_TYPES[dtype][1]
    if dtype in STORAGE_BITS:
        return STORAGE_BITS[dtype]
    if dtype not in WGMMA_DTYPE_BITS:
        raise LayoutError(f"unknown wgmma element type {dtype!r} (PTX names: "
                          f"{', '.join(WGMMA_DTYPE_BITS)}; tcgen05 also: {', '.join(TCGEN05_TYPES)})")
    return dtype_bits(dtype)


def storage_bits(dtype: str) -> int:
    """Bits of the value itself (4 for every e2m1, 6 for e3m2/e2m3).

    >>> storage_bits("e2m1_padded"), storage_bits("e2m3"), storage_bits("bf16")
    (4, 6, 16)
    """
    if dtype in TCGEN05_TYPES:
        return TCGEN05_TYPES[dtype][0]
    return operand_bits(dtype)


def operand_elems_per_unit(dtype: str) -> int:
    """T: elements in one 16-byte unit (32 for packed e2m1, 16 for the padded types).

    >>> operand_elems_per_unit("e2m1"), operand_elems_per_unit("e2m1_padded"), operand_elems_per_unit("tf32")
    (32, 16, 4)
    """
    return 128 // operand_bits(dtype)


def operand_k(dtype: str) -> int:
    """K of one MMA (256 bits of K in slots: 2 units) for this operand type.

    >>> operand_k("f16"), operand_k("e2m1"), operand_k("e2m3")
    (16, 64, 32)
    """
    if dtype in TCGEN05_TYPES:
        return TCGEN05_TYPES[dtype][3]
    return k_of_dtype(dtype)


def swizzle_geometry(swizzle: str) -> tuple[int, int, int, int]:
    """``(B, M, S, atom rows along K)`` of a swizzle mode: the CuTe functor ``Swizzle<B,M,S>`` on
    byte addresses and the K rows of one MN-major atom.

    ``128B_base32B`` (tcgen05 mode 1, "128-Byte with 32B atomic swizzling") is
    ``Swizzle<2,5,2>`` with 4 K rows: CUTLASS ``mma_traits_sm100.hpp`` ``layout_type`` (M == 5,
    B == 2, S == 2) and ``Layout_MN_SW128_32B_Atom_Bits`` = ``Sw<2,5,2> o (1024,4):(1,1024)`` bits.

    >>> swizzle_geometry("128B"), swizzle_geometry("128B_base32B")
    ((3, 4, 3, 8), (2, 5, 2, 4))
    """
    b, m, shift, _ = SWIZZLE_MODES[_mode(swizzle)]
    return (b, m, shift, 4 if m == 5 else 8)


def _mode(swizzle: str) -> str:
    """The row of :data:`verilayout.dtypes.SWIZZLE_MODES` of a descriptor mode: a wgmma mode or
    ``128B_base32B`` (spellings are read at the door: :func:`verilayout.frontends.names.parse_swizzle`
    with ``"descriptor"``)."""
    return swizzle if swizzle == "128B_base32B" else require_swizzle(swizzle)


def _units(swizzle: str) -> int:
    """Width in 16-byte units of one swizzle row (128B_base32B: 8, a 128-byte row)."""
    return 8 if swizzle == "128B_base32B" else swizzle_units(swizzle)


@dataclass(frozen=True)
class Descriptor:
    """A decoded shared-memory matrix descriptor.

    ``start_address`` is in bytes (a multiple of 16 below 2**18); ``lbo_field`` and
    ``sbo_field`` are the encoded 14-bit fields (bytes >> 4); ``layout_type`` is the
    raw swizzle field; ``reserved`` holds any bit set outside the named fields
    (after the sm_100 fixed ``0b001`` is accounted for).

    >>> Descriptor(0, lbo_field=1, sbo_field=64, layout_type=1).swizzle
    '128B'
    """

    start_address: int = 0
    lbo_field: int = 0
    sbo_field: int = 0
    base_offset: int = 0
    layout_type: int = 0
    arch: str = "sm_90"
    lbo_mode: int = 0
    reserved: int = 0

    def __post_init__(self):
        _types(self.arch)
        for name, v, hi in (("start_address", self.start_address, SMEM_WINDOW),
                            ("lbo_field", self.lbo_field, 1 << 14),
                            ("sbo_field", self.sbo_field, 1 << 14),
                            ("base_offset", self.base_offset, 8),
                            ("layout_type", self.layout_type, 4 if self.arch == "sm_90" else 8),
                            ("lbo_mode", self.lbo_mode, 2 if self.arch == "sm_100" else 1)):
            if not is_integer(v) or not 0 <= v < hi:
                raise LayoutError(f"descriptor field {name} = {v!r} is outside [0, {hi})")
        if self.start_address % 16:
            raise LayoutError(f"start_address {self.start_address:#x} is not 16-byte aligned "
                              "(the descriptor stores address >> 4)")
        if self.reserved & _field_mask(self.arch) or not 0 <= self.reserved < 1 << 64:
            raise LayoutError("reserved bits overlap the descriptor's named fields")

    # ----- views -------------------------------------------------------------------------
    @property
    def start_field(self) -> int:
        return self.start_address >> 4

    @property
    def lbo(self) -> int:
        """Leading dimension byte offset in bytes."""
        return self.lbo_field << 4

    @property
    def sbo(self) -> int:
        """Stride dimension byte offset in bytes."""
        return self.sbo_field << 4

    @property
    def swizzle(self) -> str:
        """``none``, ``32B``, ``64B``, ``128B`` (sm_100 also ``128B_base32B``), or
        ``invalid(N)`` for a value the PTX table does not list."""
        return _types(self.arch).get(self.layout_type, f"invalid({self.layout_type})")

    @property
    def value(self) -> int:
        """The 64-bit descriptor."""
        v = (self.start_field | self.lbo_field << 16 | self.sbo_field << 32
             | self.base_offset << 49 | self.layout_type << _swizzle_shift(self.arch))
        if self.arch == "sm_100":
            v |= self.lbo_mode << 52
        return v | (_fixed_bits(self.arch) ^ self.reserved)

    def with_start(self, start_address: int) -> "Descriptor":
        """The same descriptor pointing at another start address (bytes).

        >>> Descriptor(0x400, 1, 64, 0, 1).with_start(0x420).start_field
        66
        """
        return replace(self, start_address=start_address)

    def to_dict(self) -> dict:
        """JSON-ready fields (value as a hex string)."""
        d = {"value": f"{self.value:#018x}", "arch": self.arch,
             "start_address": self.start_address, "start_field": self.start_field,
             "lbo_field": self.lbo_field, "lbo_bytes": self.lbo,
             "sbo_field": self.sbo_field, "sbo_bytes": self.sbo,
             "base_offset": self.base_offset, "layout_type": self.layout_type,
             "swizzle": self.swizzle}
        rest = self.reserved
        if self.arch == "sm_100":
            d["lbo_mode"] = self.lbo_mode
            d["version"] = (self.value >> 46) & 3     # bits 46-47, 1 on sm_100 (UMMA::SmemDescriptor)
            rest &= ~_VERSION_MASK
        if rest:
            d["reserved_bits"] = f"{rest:#x}"
        return d

    def __str__(self) -> str:
        lbo = (f"LBO address {self.lbo:#x} (absolute mode, field {self.lbo_field})" if self.lbo_mode
               else f"LBO {self.lbo} B (field {self.lbo_field})")
        return (f"{self.value:#018x} ({self.arch}: start {self.start_address:#x}, "
                f"{lbo}, SBO {self.sbo} B (field "
                f"{self.sbo_field}), base offset {self.base_offset}, swizzle {self.swizzle})")


def decode(value, arch: str = "sm_90") -> Descriptor:
    """Split a 64-bit descriptor into its fields (an int or a hex string).

    >>> d = decode("0x4000004000010040"); d.start_address, d.lbo, d.sbo, d.swizzle
    (1024, 16, 1024, '128B')
    >>> decode(0x4000004000010040 | 1 << 52).reserved   # a bit no field owns
    4503599627370496
    """
    if isinstance(value, str):
        if len(value) > 64:
            raise LayoutError(f"descriptor of {len(value)} characters: expected a 64-bit integer such "
                              "as 0x4000004000010040")
        try:
            value = int(value.strip().replace("_", ""), 0)
        except ValueError:
            raise LayoutError(f"descriptor {value!r}: expected a 64-bit integer such as "
                              "0x4000004000010040") from None
    if not is_integer(value) or not 0 <= value < 1 << 64:
        raise LayoutError(f"descriptor {value!r} is not a 64-bit unsigned integer")
    value = int(value)
    _types(arch)
    reserved = (value & ~_field_mask(arch) & ((1 << 64) - 1)) ^ _fixed_bits(arch)
    return Descriptor(
        start_address=(value & _FIELD14) << 4,
        lbo_field=(value >> 16) & _FIELD14,
        sbo_field=(value >> 32) & _FIELD14,
        base_offset=(value >> 49) & 0b111,
        layout_type=(value >> _swizzle_shift(arch)) & (0b11 if arch == "sm_90" else 0b111),
        arch=arch,
        lbo_mode=(value >> 52) & 1 if arch == "sm_100" else 0,
        reserved=reserved)


def _byte_field(name: str, v, what: str) -> int:
    if not is_integer(v):
        raise LayoutError(f"{name} = {v!r}: expected an integer number of bytes")
    v = int(v)
    if v < 0:
        raise LayoutError(f"{name} = {v} bytes is negative")
    if v % 16:
        raise LayoutError(f"{name} = {v} bytes is not a multiple of 16 "
                          f"(the descriptor stores {what} >> 4)")
    return v


def encode(*, start_address: int = 0, lbo: int = 0, sbo: int = 0, swizzle: str = "none",
           base_offset: int = 0, arch: str = "sm_90", lbo_mode: int = 0) -> Descriptor:
    """Build a descriptor from byte values (start address, LBO, SBO in bytes).

    Misaligned or oversized values are errors, never silently truncated.

    >>> encode(start_address=0, lbo=256, sbo=128, swizzle="none").value == (16 << 16 | 8 << 32)
    True
    >>> encode(lbo=40)
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: lbo = 40 bytes is not a multiple of 16 (the descriptor stores LBO >> 4)
    """
    types = _types(arch)
    start = _byte_field("start_address", start_address, "the start address")
    if start >= SMEM_WINDOW:
        raise LayoutError(f"start_address = {start:#x} is outside the 256 KiB window the "
                          "descriptor encodes ((x & 0x3FFFF) >> 4 would drop bits)")
    fields = {}
    for name, v in (("lbo", lbo), ("sbo", sbo)):
        b = _byte_field(name, v, name.upper())
        if b >> 4 > _FIELD14:
            raise LayoutError(f"{name} = {b} bytes does not fit the 14-bit field "
                              f"(largest {_FIELD14 << 4} bytes)")
        fields[name] = b >> 4
    if not isinstance(base_offset, int) or not 0 <= base_offset < 8:
        raise LayoutError(f"base_offset = {base_offset!r}: expected 0..7 (a 3-bit field)")
    name = _mode(swizzle)
    codes = {v: k for k, v in types.items()}
    if name not in codes:
        raise LayoutError(f"swizzle {swizzle!r} does not exist on {arch} "
                          f"(have: {', '.join(codes)})")
    if lbo_mode not in (0, 1) or (lbo_mode and arch != "sm_100"):
        raise LayoutError(f"lbo_mode = {lbo_mode!r}: 0, or 1 (absolute) on sm_100 only")
    return Descriptor(start, fields["lbo"], fields["sbo"], base_offset, codes[name], arch,
                      lbo_mode)


# ----- the descriptor contract ---------------------------------------------------------------

@dataclass(frozen=True)
class Finding:
    """A broken (or unmodelled) rule of the descriptor contract.

    ``modelled`` is False when the hardware behaviour past this rule is not
    modelled (the proof cannot go on); ``rule`` is a short stable name.
    """

    rule: str
    message: str
    modelled: bool = False

    def to_dict(self) -> dict:
        return {"rule": self.rule, "message": self.message}


def pattern_repeat_bytes(swizzle: str) -> int:
    """Bytes after which the swizzle pattern repeats: 1024 / 512 / 256 for 128B / 64B / 32B
    (PTX ISA 9.7.16.4.1 Table 41), 512 for ``128B_base32B``.

    ``128B_base32B`` is not in the PTX table; 512 is an inference: ``Swizzle<2,5,2>`` reads address
    bits 7-8 only, so the pattern repeats every 4 rows of 128 bytes.

    >>> pattern_repeat_bytes("64B"), pattern_repeat_bytes("128B_base32B")
    (512, 512)
    """
    return 128 << SWIZZLE_MODES[_mode(swizzle)][0]


def required_base_offset(swizzle: str, pattern_start: int) -> int | None:
    """The base offset the PTX rule demands for a swizzle pattern starting at
    ``pattern_start`` (bytes): 0 on a 1024/512/256-byte boundary (128B/64B/32B),
    otherwise ``(pattern_start >> 7) & 7``. None when no value can satisfy the
    rule (the start is not on a 128-byte row, or the formula gives 0 for an
    unaligned start).

    >>> required_base_offset("128B", 0x2000), required_base_offset("128B", 0x2080)
    (0, 1)
    >>> required_base_offset("128B", 0x2040) is None
    True
    """
    sw = _mode(swizzle)
    if sw == "none" or pattern_start % pattern_repeat_bytes(sw) == 0:
        return 0
    bo = (pattern_start >> 7) & 7
    if pattern_start % 128 or bo == 0:
        return None
    return bo


#: The contract rules a descriptor can break on its own, whatever operand it is used for.
FIELD_RULES = ("reserved-bits", "swizzle-mode", "base-offset-no-swizzle")


def field_findings(desc: Descriptor) -> list[Finding]:
    """The broken rules of :data:`FIELD_RULES`: those that depend on the descriptor's fields alone
    (``decode`` reports them with no operand to compare with).

    Law: ``field_findings(d) == [f for f in contract_findings(d, ...) if f.rule in FIELD_RULES]``
    for every operand; the operand-dependent rules are not evaluated (the operand given to
    ``contract_findings`` here is a placeholder that none of the field rules reads).

    >>> [f.rule for f in field_findings(Descriptor(0, 1, 8, base_offset=2))]
    ['base-offset-no-swizzle']
    """
    return [f for f in contract_findings(desc, major="K", dtype="f16", mn_extent=64) if f.rule in FIELD_RULES]


def contract_findings(desc: Descriptor, *, major: str, dtype: str, mn_extent: int) -> list[Finding]:
    """Rules of the descriptor contract this descriptor breaks for one operand.

    (The base-offset rule also needs the pattern start; see
    :func:`required_base_offset`.)

    >>> [f.rule for f in contract_findings(Descriptor(0, 1, 8, base_offset=2), major="K",
    ...                                    dtype="f16", mn_extent=64)]
    ['base-offset-no-swizzle']
    """
    mj = require_major(major)
    bits = operand_bits(dtype)
    sw = desc.swizzle
    out = _field_rule_findings(desc) + _operand_type_findings(desc, mj, dtype, bits)
    if desc.lbo_mode:
        out += _lbo_mode_findings(desc, mj)
    if sw == "128B_base32B" and mj == "K":
        out.append(Finding("inferred-layout", "128B_base32B on a K-major operand: PTX ISA Table 52 "
                           "allows it but CUTLASS make_umma_desc refuses it; modelled as the 128B "
                           "K-major canonical layout under Swizzle<2,5,2> (an inference)"))
    if mn_extent % 8 or not 8 <= mn_extent <= 256:
        out.append(Finding("mn-extent", f"MN extent {mn_extent} is not a multiple of 8 in 8..256"))
    if sw in ("32B", "64B", "128B", "128B_base32B"):
        out += _stride_repeat_findings(desc, mj, dtype, mn_extent)
    return out


def _field_rule_findings(desc: Descriptor) -> list[Finding]:
    """Law: the findings that read the descriptor's fields alone: reserved bits set, a swizzle
    field that is no mode of the architecture, a base offset without swizzling."""
    out = []
    sw = desc.swizzle
    rest = desc.reserved
    if desc.arch == "sm_100" and rest & _VERSION_MASK:
        # PTX ISA tcgen05 "Shared Memory Descriptor": bits 46-48 hold the fixed 0b001; CUTLASS
        # cute/arch/mma_sm100_desc.hpp (UMMA::SmemDescriptor): bits 46-47 are ``version_``, 1 on sm_100
        version = ((desc.value >> 46) & 3)
        out.append(Finding("reserved-bits", f"the sm_100 descriptor version (bits 46-47) is {version}, "
                           "not 1" + (" (an sm_90 wgmma descriptor has no version field: set bit 46)"
                                      if version == 0 else "")))
        rest &= ~_VERSION_MASK
    if rest:
        what = ("bit 48 must be 0 and bits 53-60 must be 0"
                if desc.arch == "sm_100" else "bits 14-15, 30-31, 46-48 and 52-61 are unused")
        out.append(Finding("reserved-bits", f"reserved bits {rest:#x} are set ({what})"))
    if sw.startswith("invalid"):
        out.append(Finding("swizzle-mode", f"swizzle field {desc.layout_type} is not a mode of "
                           f"{desc.arch} (valid: {sorted(_types(desc.arch))})"))
    if desc.base_offset and sw == "none":
        out.append(Finding("base-offset-no-swizzle", f"base offset {desc.base_offset} is set "
                           "but the base offset is valid only with a swizzling mode"))
    return out


def _operand_type_findings(desc: Descriptor, mj: str, dtype: str, bits: int) -> list[Finding]:
    """Law: the findings on the element type: a tcgen05-only type under wgmma (sm_90), and the
    types and swizzles a transposed (MN-major) operand may have on each architecture."""
    out = []
    sw = desc.swizzle
    if desc.arch == "sm_90" and _is_tcgen05_only(dtype):
        out.append(Finding("dtype-arch", f"{dtype} is a tcgen05 (sm_100) operand type; wgmma reads "
                           f"only {', '.join(WGMMA_DTYPE_BITS)}"))
    if desc.arch == "sm_90" and mj == "MN" and bits != 16:
        out.append(Finding("transpose-dtype", f"wgmma reads MN-major (transposed) operands only "
                           f"for f16/bf16; {dtype} must be K-major"))
    if desc.arch == "sm_100" and mj == "MN" and not sw.startswith("invalid"):
        # PTX ISA 9.7.16.10.1 Table 49 and 9.7.16.10.3 Table 52.
        if dtype == "e2m1":
            out.append(Finding("transpose-dtype", "packed e2m1 (.kind::mxf4 / mxf4nvf4) cannot be "
                               "transposed (PTX ISA Table 49): it must be K-major"))
        elif bits == 32 and sw != "128B_base32B":
            out.append(Finding("transpose-swizzle", f"a transposed (MN-major) 32-bit operand is read "
                               f"only with 128B_base32B swizzling (PTX ISA Table 52), not {sw}"))
        elif bits != 32 and sw == "128B_base32B":
            out.append(Finding("transpose-swizzle", f"a transposed (MN-major) {dtype} operand cannot "
                               "use 128B_base32B swizzling (PTX ISA Table 52)"))
    return out


def _lbo_mode_findings(desc: Descriptor, mj: str) -> list[Finding]:
    """Law: for a descriptor in absolute LBO mode (bit 52), the restrictions it breaks and the
    inference its layout model rests on."""
    # PTX ISA 9.7.16.3.1.2.1 "Restrictions on the Leading Dimension Absolute Address Stride".
    out = []
    sw = desc.swizzle
    broken = [why for bad, why in ((sw != "128B", f"swizzle {sw}, not 128B"),
                                   (mj != "K", "an MN-major operand"),
                                   (desc.base_offset != 0, f"base offset {desc.base_offset}"))
              if bad]
    if broken:
        out.append(Finding("lbo-absolute-mode", "the absolute leading-dimension address mode "
                           "(bit 52) needs 128B swizzling, a K-major operand and base offset 0 "
                           f"(PTX ISA 9.7.16.3.1.2.1); this descriptor has {', '.join(broken)}"))
    out.append(Finding("inferred-layout", "absolute LBO mode: the K-block's bytes past the "
                       "128-byte row are read from the LBO address (PTX ISA 9.7.16.3.1.2: 'the "
                       "leading dimension absolute address can point to the second data chunk'); "
                       "that the split falls at the row boundary and that the second chunk keeps "
                       "the rows' SBO and 128-byte pitch is an inference from CUTLASS's SM103 "
                       "mainloop"))
    return out


def _stride_repeat_findings(desc: Descriptor, mj: str, dtype: str, mn_extent: int) -> list[Finding]:
    """Law: under a swizzling mode, each stride (LBO, SBO) that steps between swizzle atoms the
    operand actually uses must be a multiple of the pattern's repeat; one finding per one that
    is not."""
    out = []
    sw = desc.swizzle
    rep = pattern_repeat_bytes(sw)
    t, w = operand_elems_per_unit(dtype), _units(sw)
    krows = swizzle_geometry(sw)[3]
    steps = [("SBO", desc.sbo, mn_extent > 8)] if mj == "K" else \
        [("LBO", desc.lbo, mn_extent > t * w), ("SBO", desc.sbo, operand_k(dtype) > krows)]
    if desc.lbo_mode:
        steps = steps[1:] if mj == "MN" else steps
    for name, v, used in steps:
        if used and v % rep:
            out.append(Finding("stride-repeat", f"{name} = {v} bytes steps between {sw} "
                               f"swizzle atoms but is not a multiple of the {rep}-byte pattern, "
                               "so the atoms would not all start the pattern in the same phase (the "
                               "hardware allows it: an H100 read SBO 1152/1280/1536 under 128B at the "
                               "address XOR the pattern, measured; a layout that swizzles atom by "
                               "atom would disagree)"))
    return out


# ----- the address IR ------------------------------------------------------------------------

@dataclass(frozen=True)
class Term:
    """``stride * (((coord + offset) // div) % mod)`` (``mod = 0``: no modulus).

    A CuTe sub-mode of shape ``s`` and stride ``d`` after sub-modes of total size
    ``p`` is ``Term(coord, p, s, d)`` (the last sub-mode has ``mod = 0``).
    """

    coord: str
    div: int
    mod: int
    stride: int

    def value(self, x):
        v = x // self.div
        return v % self.mod if self.mod else v


def BitSwizzle(bits: int, base: int, shift: int, phase: int = 0) -> PhasedSwizzle:
    """CuTe's ``Swizzle<bits, base, shift>`` on **bit** addresses, its pattern starting at ``phase``:
    ``x ^ ((((x - phase) >> (base + shift)) & (2**bits - 1)) << base)`` (a :class:`PhasedSwizzle`).

    CuTe's ``Swizzle<B,M,S>`` on an address in units ``u`` is ``BitSwizzle(B, M + log2(u), S)``
    on bit addresses; ``phase`` is the descriptor's base offset * 128 bytes, in bits. The name is
    the constructor the address IR and its tests use; the object is the core swizzle plus an offset.

    >>> BitSwizzle(3, 7, 3, phase=1024).apply(0), str(BitSwizzle(3, 7, 3))
    (896, 'Sw<3,7,3>')
    """
    return PhasedSwizzle(Swizzle(bits, base, shift), phase)


@dataclass(frozen=True)
class Affine:
    """``f(x) = const XOR (XOR of cols[(coord, bit)] for every set coordinate bit)``."""

    const: int
    cols: dict

    def col(self, coord: str, bit: int) -> int:
        return self.cols.get((coord, bit), 0)


@dataclass(frozen=True)
class AddressFunction:
    """An address function over the coordinates of ``extents`` (``{"mn": MN, "k": K}``).

    ``address = post + swizzle(((const + sum(terms)) ^ xor_const ^ xor(xor_cols))``
    in **bits**. ``offsets`` shift a coordinate before the terms read it (a sub-tile).
    ``xor_cols`` is a tuple of ``(coord, bit, value)``: GF(2)-linear parts (a Triton
    linear layout). :meth:`affine` certifies when the whole function is GF(2)-affine
    in the coordinate bits (no carries can happen), which decides equality by bases.

    >>> f = AddressFunction((("mn", 8), ("k", 8)), terms=(Term("mn", 1, 0, 64), Term("k", 1, 0, 8)))
    >>> f.eval(3, 2), f.affine().col("mn", 1)
    (208, 128)
    """

    extents: tuple
    terms: tuple = ()
    const: int = 0
    xor_cols: tuple = ()
    xor_const: int = 0
    swizzle: PhasedSwizzle | None = None
    post: int = 0
    offsets: tuple = ()
    name: str = ""

    @property
    def domain(self) -> dict[str, int]:
        return dict(self.extents)

    def offset_of(self, coord: str) -> int:
        """How far ``coord`` is shifted before the terms read it (0 when not shifted).

        >>> AddressFunction((("mn", 8), ("k", 8)), offsets=(("k", 16),)).offset_of("k")
        16
        """
        return dict(self.offsets).get(coord, 0)

    # ----- evaluation ----------------------------------------------------------------------
    def eval(self, mn: int, k: int) -> int:
        """Bit address of one coordinate, in Python integers (no numpy: start-up time), the same
        value as :meth:`eval_np`; ``OverflowError`` where a coordinate, a constant of the function
        or the address does not fit int64, as ``eval_np`` refuses it (a stride of 2^62 elements).

        >>> AddressFunction((("mn", 8), ("k", 8)), terms=(Term("mn", 1, 0, 64),), post=8).eval(3, 0)
        200
        """
        consts = [mn, k, self.const, self.post, self.xor_const, *(t.stride for t in self.terms),
                  *(v for _, _, v in self.xor_cols)]
        x = int(self._combine({"mn": int(mn), "k": int(k)}, self.const))
        if not all(-(1 << 63) <= int(v) < 1 << 63 for v in (*consts, x)):
            raise OverflowError(f"address function {self.name!r}: a value does not fit int64")
        return x

    def eval_np(self, mn: np.ndarray, k: np.ndarray) -> np.ndarray:
        """Vectorised bit addresses (int64 arrays of equal shape)."""
        import numpy as np  # deferred: start-up time (only array code needs numpy)
        coords = {"mn": np.asarray(mn, dtype=np.int64), "k": np.asarray(k, dtype=np.int64)}
        return self._combine(coords, np.full(coords["mn"].shape, self.const, dtype=np.int64))

    def _combine(self, coords: dict, x):
        """The address of ``coords`` (ints or int64 arrays) from ``x``, the constant in that kind."""
        for t in self.terms:
            x = x + t.stride * t.value(coords[t.coord] + self.offset_of(t.coord))
        if self.xor_cols or self.xor_const:
            x = x ^ self.xor_const
            for c, bit, v in self.xor_cols:
                sel = ((coords[c] + self.offset_of(c)) >> bit) & 1
                x = x ^ (sel * v)
        if self.swizzle is not None:
            x = self.swizzle(x)
        return x + self.post

    def table(self) -> np.ndarray:
        """Every bit address of the domain: ``table[mn, k]`` (brute force)."""
        import numpy as np  # deferred: start-up time (only array code needs numpy)
        d = self.domain
        mn, k = np.meshgrid(np.arange(d["mn"]), np.arange(d["k"]), indexing="ij")
        return self.eval_np(mn, k)

    def z3(self, vars: Mapping[str, z3.BitVecRef]) -> z3.BitVecRef:
        """Encode over bit-vector coordinates (any width up to ADDR_BITS)."""
        import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
        ext = {c: z3.ZeroExt(ADDR_BITS - v.size(), v) + self.offset_of(c) for c, v in vars.items()}
        x = z3.BitVecVal(self.const, ADDR_BITS)
        for t in self.terms:
            v = ext[t.coord]
            v = z3.UDiv(v, t.div) if t.div != 1 else v
            v = z3.URem(v, t.mod) if t.mod else v
            x = x + v * t.stride
        if self.xor_cols or self.xor_const:
            x = x ^ self.xor_const
            for c, bit, val in self.xor_cols:
                sel = z3.Extract(bit, bit, ext[c])
                x = x ^ z3.If(sel == 1, z3.BitVecVal(val, ADDR_BITS), z3.BitVecVal(0, ADDR_BITS))
        if self.swizzle is not None:
            x = self.swizzle.z3(x)
        return x + self.post

    # ----- structure ------------------------------------------------------------------------
    def restrict(self, offsets: Mapping[str, int], extents: Mapping[str, int]) -> "AddressFunction":
        """The same function on a sub-block: coordinate ``c`` of the result reads
        ``c + offsets[c]``; the new domain is ``extents``.

        When an offset is a multiple of the block's power-of-two span, the shift is
        folded into constants (the result stays certifiable); otherwise it is kept
        as an explicit offset.

        >>> f = AddressFunction((("mn", 64), ("k", 64)), terms=(Term("mn", 1, 0, 1024), Term("k", 1, 0, 16)))
        >>> g = f.restrict({"k": 16}, {"mn": 64, "k": 16}); g.eval(1, 0) == f.eval(1, 16)
        True
        """
        offs = {c: self.offset_of(c) + int(offsets.get(c, 0)) for c in ("mn", "k")}
        new_ext = tuple((c, int(extents[c])) for c in ("mn", "k"))
        foldable = all(o % (1 << index_bits(extents[c])) == 0 for c, o in offs.items()) \
            and all(is_pow2(t.div) and (t.mod == 0 or is_pow2(t.mod)) for t in self.terms)
        if not foldable:
            return replace(self, extents=new_ext, offsets=tuple(offs.items()))
        const, xconst = self.const, self.xor_const
        terms = []
        for t in self.terms:
            o = offs[t.coord]
            lo = log2(t.div)
            width = log2(t.mod) if t.mod else None
            nb = index_bits(extents[t.coord])
            const += t.stride * t.value(o)          # the offset's own bits (all >= nb)
            if lo < nb:                              # the block coordinate's bits
                w = nb - lo if width is None else min(width, nb - lo)
                terms.append(Term(t.coord, t.div, 1 << w, t.stride))
        cols = []
        for c, bit, v in self.xor_cols:
            if bit < index_bits(extents[c]):
                cols.append((c, bit, v))
            elif (offs[c] >> bit) & 1:
                xconst ^= v
        return replace(self, extents=new_ext, terms=tuple(terms), const=const,
                       xor_cols=tuple(cols), xor_const=xconst, offsets=())

    def movable(self) -> int:
        """How much constant :meth:`rebase` can take out of this function.

        >>> AddressFunction((("mn", 8), ("k", 8)), const=9216, swizzle=BitSwizzle(3, 7, 3)).movable()
        9216
        """
        if self.offsets and any(o for _, o in self.offsets):
            return 0
        if self.xor_cols or self.xor_const:
            return self.post
        g = 1 << (self.swizzle.base + self.swizzle.bits) if self.swizzle else 1
        return self.post + self.const - self.const % g

    def fit(self, c: int) -> int:
        """The largest constant ``<= c`` that :meth:`rebase` can take out.

        >>> AddressFunction((("mn", 8), ("k", 8)), const=9216, swizzle=BitSwizzle(3, 7, 3)).fit(9000)
        8192
        """
        c = min(c, self.movable())
        if c <= self.post:
            return max(c, 0)
        g = 1 << (self.swizzle.base + self.swizzle.bits) if self.swizzle else 1
        return self.post + (c - self.post) // g * g

    def rebase(self, c: int) -> "AddressFunction":
        """``self - c`` as an address function (``c <= movable()``).

        A constant leaves the swizzle when it is a multiple of the swizzle's target
        span (it changes no XORed bit); the rows the swizzle reads then start
        ``c`` earlier, so the phase moves by ``c``.

        >>> f = AddressFunction((("mn", 8), ("k", 8)), terms=(Term("mn", 1, 0, 1024),), const=8192,
        ...                     swizzle=BitSwizzle(3, 7, 3))
        >>> g = f.rebase(8192); all(g.eval(i, 0) == f.eval(i, 0) - 8192 for i in range(8))
        True
        """
        if not 0 <= c <= self.movable() or self.fit(c) != c:
            raise LayoutError(f"cannot take {c} out of an address function (at most "
                              f"{self.movable()})")
        take_post = min(c, self.post)
        rest = c - take_post
        if not rest:
            return replace(self, post=self.post - take_post)
        sw = self.swizzle
        if sw is not None:
            period = 1 << (sw.base + sw.shift + sw.bits)
            sw = replace(sw, phase=(sw.phase - rest) % period)
        return replace(self, post=self.post - take_post, const=self.const - rest, swizzle=sw)

    def _contribs(self) -> list | None:
        """``[((coord, bit), value)]``: what each coordinate bit adds, if every term is a bit field."""
        d = self.domain
        out: list[tuple[tuple[str, int], int]] = []
        for t in self.terms:
            if not is_pow2(t.div) or (t.mod and not is_pow2(t.mod)) or t.stride < 0:
                return None                 # (a negative stride: the absolute-LBO split term)
            lo = log2(t.div)
            hi = index_bits(d[t.coord]) if not t.mod else min(index_bits(d[t.coord]),
                                                         lo + log2(t.mod))
            for j in range(lo, hi):
                out.append(((t.coord, j), t.stride << (j - lo)))
        return out

    def cuts(self) -> int:
        """Bit mask of the cuts ``c`` (0..ADDR_BITS) at which :meth:`split` may succeed:
        every field bit adds either less than ``2**c`` or a multiple of it, and the
        swizzle and XOR parts stay below ``2**c``.

        >>> f = AddressFunction((("mn", 8), ("k", 8)), terms=(Term("mn", 1, 0, 384),))
        >>> [c for c in range(12) if f.cuts() >> c & 1]     # 384, 768, 1536: below 2**7 or 2**11+
        [0, 1, 2, 3, 4, 5, 6, 7, 11]
        """
        contribs = self._contribs()
        if contribs is None or any(o for _, o in self.offsets):
            return 0
        ok = (1 << (ADDR_BITS + 1)) - 1
        for _, v in contribs:
            if v:
                low_ok = ((1 << (ADDR_BITS + 1)) - 1) >> v.bit_length() << v.bit_length()
                tz = trailing_zeros(v)
                ok &= low_ok | ((1 << (tz + 1)) - 1)
        floor = 0
        if self.swizzle is not None:
            floor = self.swizzle.base + self.swizzle.shift + self.swizzle.bits
        for _, _, v in self.xor_cols:
            floor = max(floor, v.bit_length())
        floor = max(floor, self.xor_const.bit_length())
        return ok >> floor << floor

    def split(self, cut: int) -> "Split | None":
        """Certify ``self(x) = low(x) + high(x)`` with ``low`` GF(2)-affine in the
        coordinate bits and below ``2**cut``, ``high`` an integer-linear function of the
        coordinate bits and a multiple of ``2**cut``. None when that cannot be shown.

        Sound, not complete: the low field bits and constant occupy disjoint bits (no
        carry can happen below the cut), the swizzle and XOR parts live below the cut,
        and every field bit adds either less than ``2**cut`` or a multiple of it.
        ``cut = ADDR_BITS`` asks for a purely GF(2)-affine function, ``cut = 0`` (no
        swizzle) for a purely integer-linear one.

        >>> f = AddressFunction((("mn", 24), ("k", 8)), terms=(Term("mn", 1, 8, 128), Term("mn", 8, 0, 3072)))
        >>> f.affine() is None, f.split(10).high       # 3072 * (mn / 8) carries: integer part
        (True, {('mn', 3): 3072, ('mn', 4): 6144})
        """
        contribs = self._contribs()
        if contribs is None or any(o for _, o in self.offsets):
            return None
        d = self.domain
        m = 1 << cut
        low, high = [], {}
        for key, v in contribs:
            if v < m:
                low.append((key, v))
            elif v % m == 0:
                high[key] = high.get(key, 0) + v
            else:
                return None
        c_lo = self.const % m
        s = _certify_sum(c_lo, low)
        if s is None or self.xor_const >= m:
            return None
        cols, const = dict(s.cols), s.const ^ self.xor_const
        for c, bit, v in self.xor_cols:
            if bit < index_bits(d[c]):
                if v >= m:
                    return None
                cols[(c, bit)] = cols.get((c, bit), 0) ^ v
        if self.swizzle is not None:
            swizzled = self._swizzled_low(const, cols, c_lo, low, cut)
            if swizzled is None:
                return None
            const, cols = swizzled
        p_lo = self.post % m
        possible = const
        for v in cols.values():
            possible |= v
        if p_lo & possible:
            return None
        return Split(cut, Affine(const ^ p_lo, {k: v for k, v in cols.items() if v}),
                     self.const - c_lo + self.post - p_lo, {k: v for k, v in high.items() if v})

    def _swizzled_low(self, const: int, cols: dict, c_lo: int, low: list, cut: int):
        """Law: the GF(2)-affine (constant, columns) of the swizzle applied to the low part
        ``const + cols`` (its source read ``phase`` bytes earlier where the swizzle has a phase);
        None when the swizzle reaches above ``cut`` or its source is not certified."""
        sw = self.swizzle
        top = sw.base + sw.shift + sw.bits
        if top > cut:
            return None
        if sw.phase:
            if self.xor_cols or self.xor_const:
                return None
            src = _certify_sum((c_lo - sw.phase) % (1 << top), low)
            if src is None:
                return None
            src_const, src_cols = src.const, src.cols
        else:
            src_const, src_cols = const, cols
        lift = sw.swizzle.xor_term
        return const ^ lift(src_const), {key: v ^ lift(src_cols.get(key, 0)) for key, v in cols.items()}

    def affine(self) -> Affine | None:
        """Certify ``self`` is GF(2)-affine in the coordinate bits of its domain
        (:meth:`split` with everything below the cut). None when that cannot be shown.
        """
        s = self.split(ADDR_BITS)
        if s is None or s.high or s.high_const:
            return None
        return s.low


@dataclass(frozen=True)
class Split:
    """``f(x) = low(x) + high(x)``: ``low`` GF(2)-affine below ``2**cut``, ``high(x) =
    high_const + sum(weight * bit)`` over the coordinate bits, a multiple of ``2**cut``.
    Two such functions with the same cut are equal on a domain containing 0 and every
    unit vector iff both parts have equal constants, columns and weights."""

    cut: int
    low: Affine
    high_const: int
    high: dict


def _certify_sum(const: int, contribs) -> Affine | None:
    union = 0
    for _, v in contribs:
        if union & v:
            return None
        union |= v
    if const < 0:
        return None
    if const % (1 << union.bit_length()) & union:
        return None
    cols: dict = {}
    for key, v in contribs:
        cols[key] = cols.get(key, 0) ^ v
    return Affine(const, cols)


# ----- the hardware model ------------------------------------------------------------------

_MODELLED = ("none", "32B", "64B", "128B", "128B_base32B")


def hardware_address_function(desc: Descriptor, *, major: str, dtype: str,
                              mn_extent: int, k_extent: int | None = None) -> AddressFunction:
    """``(mn, k) -> bit address`` that one wgmma / tcgen05.mma reads through ``desc``.

    The canonical layouts of PTX ISA 9.7.15.5.1.2 ("Shared Memory Matrix Layout"; tcgen05: 9.7.16.3 and CUTLASS
    ``make_umma_desc``) in bytes (T = elements per 16-byte unit, W the swizzle row in units,
    R the K rows of one MN-major atom: 8, or 4 for ``128B_base32B``):

    * K-major, none:   start + 16*(mn%8) + SBO*(mn/8) + (k%T)*bits/8 + LBO*(k/T)
    * K-major, W:      start + 16W*(mn%8) + SBO*(mn/8) + (k%T)*bits/8 + 16*(k/T)
    * MN-major, none:  start + (mn%T)*bits/8 + SBO*(mn/T) + 16*(k%8) + LBO*(k/8)
    * MN-major, W:     start + (mn%T)*bits/8 + 16*((mn/T)%W) + LBO*(mn/(TW))
      + 16W*(k%R) + SBO*(k/R)

    then ``Swizzle<B,M,S>`` on the byte address (:func:`swizzle_geometry`), its rows counted
    from ``128 * base_offset``. ``bits`` is the slot width (:func:`operand_bits`). Measured for
    wgmma on an H100 (``hwtests/results/h100-2026-11-26-wgprobe.jsonl.gz``: 520 descriptors, every
    address; tests/test_hw_ground_truth.py): the swizzle on absolute address bits, the base-offset
    rule, K-block starts 32 bytes apart inside an atom, SBO off the pattern's repeat.

    Absolute LBO mode (bit 52, K-major 128B only): the K-block (``k_extent``, default 48 bytes)
    reads from the start address up to the end of its 128-byte row and the rest from the same
    rows at the LBO address (an inference, see :func:`contract_findings`).

    >>> d = encode(lbo=1024, sbo=128, swizzle="none")
    >>> f = hardware_address_function(d, major="K", dtype="f16", mn_extent=64)
    >>> f.eval(9, 9) // 8          # row 9: SBO + 16; k 9: LBO + 2
    1170
    """
    sw = desc.swizzle
    if sw not in _MODELLED:
        raise LayoutError(f"swizzle field {desc.layout_type} is not a mode of {desc.arch}")
    mj = require_major(major)
    bits = operand_bits(dtype)
    kx = operand_k(dtype) if k_extent is None else int(k_extent)
    if desc.lbo_mode and k_extent is None:
        kx = ABSOLUTE_LBO_K_BYTES * 8 // bits
    if kx <= 0 or kx * bits % 128:
        raise LayoutError(f"k_extent {kx} is not a whole number of 16-byte units of {dtype}")
    b, m, shift, krows = swizzle_geometry(sw) if sw != "none" else (0, 4, 3, 8)
    terms, const, offsets = _canonical_terms(desc, mj, bits, krows)
    swz = None
    if b:
        swz = BitSwizzle(b, m + 3, shift, phase=desc.base_offset * 128 * 8)
    ext = (("mn", int(mn_extent)), ("k", kx))
    return AddressFunction(ext, terms=terms, const=const, swizzle=swz, offsets=offsets,
                           name=f"descriptor {desc.value:#x}")


def _canonical_terms(desc: Descriptor, mj: str, bits: int, krows: int) -> tuple:
    """Law: (terms, constant, offsets) in bits of the canonical layout of PTX ISA 9.7.15.5.1.2 that
    ``desc`` selects for a ``mj``-major operand of ``bits``-bit slots, before the swizzle: the
    table of :func:`hardware_address_function`, or the absolute LBO mode's split K-block."""
    sw = desc.swizzle
    t = 128 // bits
    unit = 128                                   # bits in 16 bytes
    lbo, sbo = desc.lbo * 8, desc.sbo * 8
    w = _units(sw)
    const = desc.start_address * 8
    offsets: tuple = ()
    if desc.lbo_mode:
        if sw != "128B" or mj != "K":
            raise LayoutError("the absolute LBO mode is defined for K-major 128B operands only "
                              "(PTX ISA 9.7.16.3.1.2.1)")
        # k -> unit x = k/T + s (s: the start's unit inside its 128-byte row); x < 8 reads
        # row_base + 16x, x >= 8 reads LBO + 16(x - 8) = row_base + 16(x % 8) + (LBO - row_base).
        s_units = (desc.start_address % 128) // 16
        row_base = desc.start_address - desc.start_address % 128
        const = row_base * 8
        offsets = (("mn", 0), ("k", s_units * t))
        terms = (Term("mn", 1, 8, unit * w), Term("mn", 8, 0, sbo), Term("k", 1, t, bits),
                 Term("k", t, 8, unit), Term("k", 8 * t, 0, (desc.lbo - row_base) * 8))
    elif mj == "K":
        if sw == "none":
            terms = (Term("mn", 1, 8, unit), Term("mn", 8, 0, sbo),
                     Term("k", 1, t, bits), Term("k", t, 0, lbo))
        else:
            terms = (Term("mn", 1, 8, unit * w), Term("mn", 8, 0, sbo), Term("k", 1, t, bits),
                     Term("k", t, 0, unit))
    else:
        if sw == "none":
            terms = (Term("mn", 1, t, bits), Term("mn", t, 0, sbo),
                     Term("k", 1, 8, unit), Term("k", 8, 0, lbo))
        else:
            terms = (Term("mn", 1, t, bits), Term("mn", t, w, unit), Term("mn", t * w, 0, lbo),
                     Term("k", 1, krows, unit * w), Term("k", krows, 0, sbo))
    return terms, const, offsets


def hardware_address(desc: Descriptor, *, major: str, dtype: str, mn: int, k: int,
                     mn_extent: int = 256, unit: str = "byte") -> int:
    """The shared-memory address one element ``(mn, k)`` is read from.

    ``unit`` is ``"byte"`` (the byte holding the element) or ``"bit"``.

    >>> d = encode(start_address=0x400, lbo=16, sbo=1024, swizzle="128B")
    >>> hardware_address(d, major="K", dtype="f16", mn=1, k=0)   # row 1, unit 0 ^ 1
    1168
    """
    if unit not in ("byte", "bit"):
        raise LayoutError(f"unit {unit!r}: expected byte or bit")
    f = hardware_address_function(desc, major=major, dtype=dtype, mn_extent=mn_extent)
    kx = f.domain["k"]
    if not (0 <= mn < mn_extent and 0 <= k < kx):
        raise LayoutError(f"coordinate ({mn}, {k}) is outside the {mn_extent}x{kx} operand")
    a = f.eval(mn, k)
    return a if unit == "bit" else a // 8
