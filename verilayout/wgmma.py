"""wgmma in one import: register fragments, descriptors, proofs, synthesis.

>>> from verilayout import wgmma
>>> wgmma.fragment("m64n32k16", "D", "f16", acc="f32").registers
16
>>> d = wgmma.descriptor_for("Sw<0,4,3> o smem_ptr[16b](unset) o ((_8,8),(_8,2)):((_8,_64),(_1,512))",
...                          dtype="f16", major="K")     # seed 003: A K-major, no swizzle
>>> d.lbo_field, d.sbo_field
(64, 8)
>>> wgmma.check_descriptor(d, "Sw<0,4,3> o smem_ptr[16b](unset) o ((_8,8),(_8,2)):((_8,_64),(_1,512))",
...                        dtype="f16", major="K").proved
True
>>> wgmma.decode(d.value) == d
True
"""
from verilayout.errors import publish
from verilayout.hw.nvidia.descriptor import Descriptor, Finding, contract_findings, decode, encode, hardware_address, hardware_address_function, required_base_offset
from verilayout.hw.nvidia.wgmma import DTYPE_BITS, Fragment, SwizzleAtom, CanonicalLayout, canonical_layout, fragment, swizzle_atom
from verilayout.prove.wgmma import TileAddress, check_descriptor, intended_tile, strided_tile
from verilayout.synth.descriptor import DescriptorPlan, SynthPlan, derive_descriptor, descriptor_for, synth

#: The first public name of :func:`check_descriptor`, kept for scripts outside the project.
verify = check_descriptor

__all__ = [
    "check_descriptor", "verify", "descriptor_for", "derive_descriptor", "synth", "Descriptor", "fragment", "decode",
    "encode", "Fragment", "Finding", "contract_findings", "hardware_address",
    "hardware_address_function", "required_base_offset", "canonical_layout", "CanonicalLayout",
    "swizzle_atom", "SwizzleAtom", "intended_tile", "strided_tile", "TileAddress",
    "DescriptorPlan", "SynthPlan", "DTYPE_BITS",
]

publish(globals(), __all__, "verilayout.wgmma")
