"""wgmma in one import: register fragments, descriptors, proofs, synthesis.

>>> from verilayout import wgmma
>>> wgmma.fragment("m64n32k16", "D", "f16", acc="f32").registers
16
>>> d = wgmma.descriptor_for("Sw<0,4,3> o smem_ptr[16b](unset) o ((_8,8),(_8,2)):((_8,_64),(_1,512))",
...                          dtype="f16", major="K")     # A K-major, no swizzle (PTX ISA 9.7.15.5.1.2.1.3)
>>> d.lbo_field, d.sbo_field
(64, 8)
>>> wgmma.check_descriptor(d, "Sw<0,4,3> o smem_ptr[16b](unset) o ((_8,8),(_8,2)):((_8,_64),(_1,512))",
...                        dtype="f16", major="K").proved
True
>>> wgmma.decode(d.value) == d
True
"""
from verilayout.errors import publish
from verilayout.frontends.names import parse_major, parse_shape, parse_swizzle
from verilayout.hw.nvidia import descriptor as _descriptor, wgmma as _hw
from verilayout.hw.nvidia.descriptor import AddressFunction, Descriptor, Finding, decode
from verilayout.hw.nvidia.wgmma import WGMMA_DTYPE_BITS, Fragment, SwizzleAtom, CanonicalLayout
from verilayout.core.smt import Verdict
from verilayout.frontends.shared_text import load_operand_layout
from verilayout.prove import wgmma as _prove
from verilayout.prove.wgmma import DEFAULT_TIMEOUT_MS, TileAddress, strided_tile
from verilayout.synth import descriptor as _synth
from verilayout.synth.descriptor import DescriptorPlan, SynthPlan

#: The first public name of :data:`WGMMA_DTYPE_BITS` (the wgmma multiplicand types), kept for scripts.
DTYPE_BITS = WGMMA_DTYPE_BITS


def fragment(shape: str, operand: str, dtype: str, acc: str | None = None) -> Fragment:
    """:func:`verilayout.hw.nvidia.wgmma.fragment` of a shape spelled ``m64nNkK`` (read at the door).

    >>> fragment("m64n8k16", "A", "f16").registers
    8
    """
    return _hw.fragment(parse_shape(shape), operand, dtype, acc=acc)


def canonical_layout(major: str, swizzle: str, dtype: str | None = None) -> CanonicalLayout:
    """:func:`verilayout.hw.nvidia.wgmma.canonical_layout`, ``major`` and ``swizzle`` spellings
    (``N``, ``SW128``) read at the door.

    >>> canonical_layout("n", "SW128").major
    'MN'
    """
    return _hw.canonical_layout(parse_major(major), parse_swizzle(swizzle), dtype)


def swizzle_atom(swizzle: str, major: str, dtype: str) -> SwizzleAtom:
    """:func:`verilayout.hw.nvidia.wgmma.swizzle_atom`, spellings read at the door.

    >>> swizzle_atom("32", "k", "f16").shape
    (8, 16)
    """
    return _hw.swizzle_atom(parse_swizzle(swizzle), parse_major(major), dtype)


def contract_findings(desc: Descriptor, *, major: str, dtype: str, mn_extent: int) -> list[Finding]:
    """:func:`verilayout.hw.nvidia.descriptor.contract_findings`, ``major`` (``K``, ``MN``, ``n``,
    ...) read at the door.

    >>> [f.rule for f in contract_findings(Descriptor(0, 1, 8, base_offset=2), major="k", dtype="f16", mn_extent=64)]
    ['base-offset-no-swizzle']
    """
    return _descriptor.contract_findings(desc, major=parse_major(major), dtype=dtype, mn_extent=mn_extent)


def hardware_address_function(desc: Descriptor, *, major: str, dtype: str, mn_extent: int,
                              k_extent: int | None = None) -> AddressFunction:
    """:func:`verilayout.hw.nvidia.descriptor.hardware_address_function`, ``major`` read at the door.

    >>> hardware_address_function(encode(lbo=1024, sbo=128), major="k", dtype="f16", mn_extent=64).eval(9, 9) // 8
    1170
    """
    return _descriptor.hardware_address_function(desc, major=parse_major(major), dtype=dtype,
                                                 mn_extent=mn_extent, k_extent=k_extent)


def hardware_address(desc: Descriptor, *, major: str, dtype: str, mn: int, k: int, mn_extent: int = 256,
                     unit: str = "byte") -> int:
    """:func:`verilayout.hw.nvidia.descriptor.hardware_address`, ``major`` read at the door.

    >>> hardware_address(encode(lbo=1024, sbo=128), major="K", dtype="f16", mn=9, k=9)
    1170
    """
    return _descriptor.hardware_address(desc, major=parse_major(major), dtype=dtype, mn=mn, k=k,
                                        mn_extent=mn_extent, unit=unit)


def required_base_offset(swizzle: str, pattern_start: int) -> int | None:
    """:func:`verilayout.hw.nvidia.descriptor.required_base_offset`, the swizzle spelling read at
    the door.

    >>> required_base_offset("SW128", 0x2080)
    1
    """
    return _descriptor.required_base_offset(parse_swizzle(swizzle, "descriptor"), pattern_start)


def encode(*, start_address: int = 0, lbo: int = 0, sbo: int = 0, swizzle: str = "none",
           base_offset: int = 0, arch: str = "sm_90", lbo_mode: int = 0) -> Descriptor:
    """:func:`verilayout.hw.nvidia.descriptor.encode`, the swizzle spelling (``SW128``,
    ``128b-base32b``) read at the door.

    >>> encode(lbo=256, sbo=128, swizzle="SW128").swizzle
    '128B'
    """
    return _descriptor.encode(start_address=start_address, lbo=lbo, sbo=sbo,
                              swizzle=parse_swizzle(swizzle, "descriptor"), base_offset=base_offset,
                              arch=arch, lbo_mode=lbo_mode)


def synth(*, dtype: str, major: str, mn: int, k: int, arch: str = "sm_90", base_address: int = 0,
          timeout_ms: int = DEFAULT_TIMEOUT_MS) -> SynthPlan:
    """:func:`verilayout.synth.descriptor.synth`, ``major`` read at the door.

    >>> synth(dtype="f16", major="k", mn=64, k=64).swizzle
    '128B'
    """
    return _synth.synth(dtype=dtype, major=parse_major(major), mn=mn, k=k, arch=arch,
                        base_address=base_address, timeout_ms=timeout_ms)


def intended_tile(layout, *, dtype: str, base_address: int = 0, mn_dim: int = 0, shape=None,
                  swizzle_units: str | None = None) -> TileAddress:
    """:func:`verilayout.prove.wgmma.intended_tile` of ``layout``, text (CuTe, or Triton MLIR with
    ``shape``) read first at the door (:func:`~verilayout.frontends.shared_text.load_operand_layout`).

    >>> intended_tile("Sw<3,4,3> o smem_ptr[16b](unset) o (8,64):(64,1)", dtype="f16").fn.eval(1, 0) // 8
    144
    """
    return _prove.intended_tile(load_operand_layout(layout, dtype=dtype, shape=shape, swizzle_units=swizzle_units),
                                dtype=dtype, base_address=base_address, mn_dim=mn_dim)


def check_descriptor(descriptor, layout, *, dtype: str, major: str, k_block: int = 0, base_address: int = 0,
                     mn: int | None = None, mn_block: int = 0, mn_dim: int = 0, arch: str | None = None,
                     shape=None, swizzle_units: str | None = None,
                     timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Verdict:
    """:func:`verilayout.prove.wgmma.check_descriptor` of ``layout``, text (CuTe, or Triton MLIR
    with ``shape``) read first at the door.

    >>> check_descriptor(0x4000004000010002, "Sw<3,4,3> o smem_ptr[16b](unset) o "
    ...        "((_8,_8),(_64,_1)):((_64,_512),(_1,_0))", dtype="f16", major="K", k_block=1).proved
    True
    """
    loaded = load_operand_layout(layout, dtype=dtype, shape=shape, swizzle_units=swizzle_units)
    return _prove.check_descriptor(descriptor, loaded, dtype=dtype, major=parse_major(major), k_block=k_block, base_address=base_address,
                                   mn=mn, mn_block=mn_block, mn_dim=mn_dim, arch=arch, timeout_ms=timeout_ms)


def derive_descriptor(layout, *, dtype: str, major: str, k_block: int = 0, base_address: int = 0,
                      mn: int | None = None, mn_block: int = 0, mn_dim: int = 0, arch: str = "sm_90",
                      shape=None, swizzle_units: str | None = None,
                      timeout_ms: int = DEFAULT_TIMEOUT_MS) -> DescriptorPlan:
    """:func:`verilayout.synth.descriptor.derive_descriptor` of ``layout``, text (CuTe, or Triton
    MLIR with ``shape``) read first at the door.

    >>> derive_descriptor("Sw<0,4,3> o smem_ptr[16b](unset) o ((_8,4),(_8,2)):((_1,_64),(_8,256))",
    ...                   dtype="f16", major="MN").descriptor.lbo_field     # B N-major, no swizzle
    32
    """
    loaded = load_operand_layout(layout, dtype=dtype, shape=shape, swizzle_units=swizzle_units)
    return _synth.derive_descriptor(loaded, dtype=dtype, major=parse_major(major), k_block=k_block, base_address=base_address,
                                    mn=mn, mn_block=mn_block, mn_dim=mn_dim, arch=arch, timeout_ms=timeout_ms)


def descriptor_for(layout, *, dtype: str, major: str, k_block: int = 0, base_address: int = 0,
                   **options) -> Descriptor:
    """The descriptor one wgmma K-block needs to read ``layout`` (proved; text read at the door;
    see :func:`derive_descriptor` for the options).

    >>> descriptor_for("Sw<1,4,3> o smem_ptr[16b](unset) o ((_8,_4),(_16,_1)):((_16,_128),(_1,_0))",
    ...                dtype="f16", major="K").sbo_field          # B K-major 32B
    16
    """
    return derive_descriptor(layout, dtype=dtype, major=major, k_block=k_block,
                             base_address=base_address, **options).descriptor


#: The first public name of :func:`check_descriptor`, kept for scripts outside the project.
verify = check_descriptor

__all__ = [
    "check_descriptor", "verify", "descriptor_for", "derive_descriptor", "synth", "Descriptor", "fragment", "decode",
    "encode", "Fragment", "Finding", "contract_findings", "hardware_address",
    "hardware_address_function", "required_base_offset", "canonical_layout", "CanonicalLayout",
    "swizzle_atom", "SwizzleAtom", "intended_tile", "strided_tile", "TileAddress",
    "DescriptorPlan", "SynthPlan", "WGMMA_DTYPE_BITS", "DTYPE_BITS",
]

publish(globals(), __all__, "verilayout.wgmma")
