"""Inferred contract rules never refute an address-exact descriptor (issue "never a wrong proved").

"stride-repeat" (an SBO that is not a multiple of the swizzle pattern) is reasoning about the
address arithmetic, not a rule the PTX ISA states; the address proof decides.

Derivation: a K-major f16 tile with the 128-byte swizzle, two 8-row groups 1536 bytes apart.
The PTX ISA's canonical K-major layout puts (mn, k) at ``start + (mn // 8) * SBO + (mn % 8) *
128 + 2 k`` and the 128B swizzle XORs address bits [7, 10) into [4, 7) (seed 003 and
shared/reference); the CuTe layout below, ``((8,2),(64,1)):((64,768),(1,0))`` under
``Sw<3,4,3>`` on 16-bit elements, is that same function with SBO = 768 * 2 = 1536 bytes. A
descriptor with SBO = 1536 therefore reads every element where the layout put it.
"""
from __future__ import annotations

import dataclasses

from verilayout import wgmma

ATOM_1024 = "Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_2),(_64,_1)):((_64,_512),(_1,_0))"
ATOM_1536 = "Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_2),(_64,_1)):((_64,_768),(_1,_0))"


def _desc(sbo_bytes):
    d = wgmma.descriptor_for(ATOM_1024, dtype="f16", major="K")
    return dataclasses.replace(d, sbo_field=sbo_bytes >> 4)


def test_stride_repeat_is_a_note_when_addresses_match():
    v = wgmma.verify(_desc(1536), ATOM_1536, dtype="f16", major="K")
    assert v.status == "proved"
    assert "stride-repeat" in v.reason and "inference" in v.reason


def test_a_real_mismatch_is_still_a_counterexample_naming_the_addresses():
    # layout groups 2048 bytes apart, descriptor 1536: (mn=8, k=0) differs
    v = wgmma.verify(_desc(1536), ATOM_1024.replace("_512", "_1024"), dtype="f16", major="K")
    assert v.status == "counterexample"
    assert v.counterexample["mn"] == 8 and v.counterexample["layout_address"] == 2048
    assert "inference" in v.reason


def test_cited_rules_still_refute():
    d = dataclasses.replace(_desc(1024), base_offset=0, layout_type=0)   # no swizzle
    bad = dataclasses.replace(d, base_offset=2)
    v = wgmma.verify(bad, ATOM_1024, dtype="f16", major="K")
    assert v.status == "counterexample" and v.counterexample["rule"] == "base-offset-no-swizzle"
