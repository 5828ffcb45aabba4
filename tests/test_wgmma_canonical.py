"""Canonical layouts, swizzle atoms and the hardware address model.

Expected values: the canonical-layout table and Table 38 of seed 000_2b23e188beadbf0d.txt
(written out below as text), the 128-bit swizzle atoms of seed 003_ce87ea73fe8bc8cb.txt, and,
for the address model, the canonical layout text of the seed evaluated by verilayout.cute (an
independent CuTe implementation) with Swizzle<B,4,3> applied to the byte address.
"""
from __future__ import annotations

import numpy as np
import pytest
import sympy
from hypothesis import given, settings, strategies as st

from verilayout.core.cute import Swizzle, offsets_table
from verilayout.frontends.cute_text import parse_cute
from verilayout.hw.nvidia.descriptor import encode, hardware_address, hardware_address_function
from verilayout.wgmma import canonical_layout, swizzle_atom     # spellings read at the door

# seed 000, "Canonical Layouts" table (the "1T" of the table is T)
SEED_TABLE = {
    ("MN", "none"): ("((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))", 0),
    ("MN", "32B"): ("((T,2,m),(8,k)):((1,T,LBO),(2T,SBO))", 1),
    ("MN", "64B"): ("((T,4,m),(8,k)):((1,T,LBO),(4T,SBO))", 2),
    ("MN", "128B"): ("((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))", 3),
    ("K", "none"): ("((8,m),(T,2k)):((1T,SBO),(1,LBO))", 0),
    ("K", "32B"): ("((8,m),(T,2k)):((2T,SBO),(1,T))", 1),
    ("K", "64B"): ("((8,m),(T,2k)):((4T,SBO),(1,T))", 2),
    ("K", "128B"): ("((8,m),(T,2k)):((8T,SBO),(1,T))", 3),
}
T, m, k, LBO, SBO = sympy.symbols("T m k LBO SBO", positive=True, integer=True)


@pytest.mark.parametrize("key", list(SEED_TABLE))
def test_canonical_layouts_are_the_seed_table(key):
    text, b = SEED_TABLE[key]
    seed = parse_cute(text)
    ours = canonical_layout(*key)
    assert ours.swizzle_bits == b
    # compare as sympy expressions, symbols matched by name
    to_sym = lambda t: tuple(tuple(sympy.sympify(str(e)) for e in mode) for mode in t)
    assert to_sym(ours.shape) == to_sym(seed.shape)
    assert to_sym(ours.stride) == to_sym(seed.stride)


# seed 000 worked examples: (major, swizzle, T, m, k, LBO, SBO in elements) -> exact layout
SEED_EXAMPLES = [
    ("K", "none", 4, 2, 2, 64, 32, "((8,2),(4,4)):((4,32),(1,64))"),
    ("K", "32B", 4, 2, 2, None, 64, "((8,2),(4,4)):((8,64),(1,4))"),
    ("MN", "none", 8, 2, 2, 128, 64, "((8,1,2),(8,2)):((1,8,64),(8,128))"),
    ("MN", "32B", 8, 2, 2, 128, 256, "((8,2,2),(8,2)):((1,8,128),(16,256))"),
    ("MN", "64B", 8, 2, 2, 256, 512, "((8,4,2),(8,2)):((1,8,256),(32,512))"),
]


@pytest.mark.parametrize("ex", SEED_EXAMPLES)
def test_substituting_the_seed_parameters_gives_the_exact_layouts(ex):
    major, sw, t, mm, kk, lbo, sbo, exact = ex
    values = {"T": t, "m": mm, "k": kk, "SBO": sbo}
    if lbo is not None:
        values["LBO"] = lbo
    c = canonical_layout(major, sw).subs(**values)
    want = parse_cute(exact)
    assert c.concrete() == (tuple(map(tuple, want.shape)), tuple(map(tuple, want.stride)))


# Table 38 (128-bit elements, MN x K as the table lists it) and the seed 003 atoms
TABLE_38 = {("128B", "MN"): (8, 8), ("128B", "K"): (8, 8), ("64B", "MN"): (4, 8),
            ("64B", "K"): (8, 4), ("32B", "MN"): (2, 8), ("32B", "K"): (8, 2),
            ("none", "MN"): (1, 8), ("none", "K"): (8, 1)}
# seed 003, in 128-bit units: K-major Sw<B,0,3> o (8,W):(W,1), MN-major Sw<B,0,3> o (W,8):(1,W)
SEED_003_ATOMS = {("none", "K"): "(_8,_1):(_1,_1)", ("none", "MN"): "(_1,_8):(_1,_1)",
                  ("32B", "K"): "(_8,_2):(_2,_1)", ("32B", "MN"): "(_2,_8):(_1,_2)",
                  ("64B", "K"): "(_8,_4):(_4,_1)", ("64B", "MN"): "(_4,_8):(_1,_4)",
                  ("128B", "K"): "(_8,_8):(_8,_1)", ("128B", "MN"): "(_8,_8):(_1,_8)"}


@pytest.mark.parametrize("key", list(TABLE_38))
@pytest.mark.parametrize("dtype,t", [("f16", 8), ("tf32", 4), ("e4m3", 16)])
def test_swizzle_atoms_follow_table_38(key, dtype, t):
    sw, major = key
    a = swizzle_atom(sw, major, dtype)
    assert a.units == TABLE_38[key]
    # "multiplied along the leading dimension by 128/sizeof_bits"
    lead = 0 if major == "MN" else 1
    want = list(TABLE_38[key])
    want[lead] *= t
    assert a.shape == tuple(want)
    # the element strides are the seed 003 unit strides with the leading unit split into T
    units = parse_cute(SEED_003_ATOMS[key])
    s_mn, s_k = (int(x) for x in units.stride)
    if major == "MN":
        assert a.stride == (1, s_k * t)
    else:
        assert a.stride == (s_mn * t, 1)


def test_tf32_128b_mn_atom_is_32x8_as_seed_000_says():
    assert swizzle_atom("128B", "MN", "tf32").shape == (32, 8)


def test_f16_128b_k_atom_is_the_seed_003_layout():
    # seed 003: "如果是 half 类型，128B swizzle 在 K-major 下的 layout 为 Sw<3,3,3> o (_8,_64):(_64,_1)"
    assert swizzle_atom("128B", "K", "f16").cute_text("elements") == "Sw<3,3,3> o 0 o (8,64):(64,1)"


# ----- the hardware address model against the seed's canonical layout ------------------------

def canonical_addresses(major, sw, bits, start, lbo, sbo, mn_extent, base_offset=0):
    """Byte address table [mn, k] from the seed 000 canonical layout text (via verilayout.cute),
    with Swizzle<B,4,3> on the byte address, rows counted from 128 * base_offset."""
    t = 128 // bits
    kx = 256 // bits
    text, b = SEED_TABLE[(major, sw)]
    w = {"none": 1, "32B": 2, "64B": 4, "128B": 8}[sw]
    mm = -(-mn_extent // (8 if major == "K" else t * w))      # m repeats cover the operand
    kk = 1 if major == "K" else kx // 8
    L = parse_cute(text)
    values = {"T": t, "m": max(mm, 1), "k": kk, "LBO": lbo * 8 // bits, "SBO": sbo * 8 // bits}
    L = L.subs({n: v for n, v in values.items() if n in {str(x) for x in L.free_symbols}})
    size0 = int(L[0].size)
    elems = offsets_table(L).reshape(int(L[1].size), size0).T[:mn_extent, :kx]  # colexicographic
    swz = Swizzle(b, 4, 3)
    phase = 128 * base_offset
    a = start + elems * bits // 8
    return swz(a - phase) + phase


CASES = [(major, sw, bits) for major in ("K", "MN") for sw in ("none", "32B", "64B", "128B")
         for bits in (8, 16, 32)]


@pytest.mark.parametrize("major,sw,bits", CASES)
@settings(max_examples=8, deadline=None)
@given(start=st.integers(0, 255), lbo=st.integers(0, 300), sbo=st.integers(0, 300),
       mn8=st.sampled_from([1, 2, 3, 4, 8, 16]), bo=st.integers(0, 7))
def test_hardware_model_is_the_canonical_layout(major, sw, bits, start, lbo, sbo, mn8, bo):
    if sw == "none":
        bo = 0
    dtype = {8: "e4m3", 16: "f16", 32: "tf32"}[bits]
    t = 128 // bits
    mn = 8 * mn8
    if major == "MN" and mn % t:
        mn = t * mn8
    d = encode(start_address=start * 16, lbo=lbo * 16, sbo=sbo * 16, swizzle=sw, base_offset=bo)
    f = hardware_address_function(d, major=major, dtype=dtype, mn_extent=mn)
    got = f.table() // 8
    want = canonical_addresses(major, sw, bits, start * 16, lbo * 16, sbo * 16, mn, bo)
    assert np.array_equal(got, want)


def test_hardware_address_of_one_element():
    # K-major 128B at 0x400: row 1 is 128 bytes on, its first 16-byte unit XOR 1 -> +16
    d = encode(start_address=0x400, lbo=16, sbo=1024, swizzle="128B")
    assert hardware_address(d, major="K", dtype="f16", mn=1, k=0) == 0x400 + 128 + 16
    assert hardware_address(d, major="K", dtype="f16", mn=9, k=0) == 0x400 + 1024 + 128 + 16
    # b1: 128 elements per 16-byte unit; k = 129 is bit 1 of byte 16
    d = encode(start_address=0, lbo=128, sbo=256, swizzle="none")
    assert hardware_address(d, major="K", dtype="b1", mn=0, k=129, unit="bit") == 128 * 8 + 1
