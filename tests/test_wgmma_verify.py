"""verify / descriptor_for: the worked examples of the seeds, the known failure patterns, and
agreement with brute-force enumeration.

Expected values come from the seeds (000_2b23e188beadbf0d.txt: five exact layouts and their
LBO/SBO encodings; 003_ce87ea73fe8bc8cb.txt: the tutorial's tiles, LBO/SBO and layouts),
from the PTX base-offset rule, and from brute force: every (mn, k) of the operand evaluated
through the seed's canonical layout (``canonical_addresses`` of test_wgmma_canonical.py) and
through verilayout.cute's own offsets.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from test_wgmma_canonical import canonical_addresses
from verilayout.core.cute import offsets_table, tile_to_shape
from verilayout.frontends.cute_text import parse_cute
from verilayout.errors import LayoutError
from verilayout.hw.nvidia.descriptor import Descriptor, decode, encode
from verilayout.wgmma import derive_descriptor, descriptor_for, verify

SEED000 = "000_2b23e188beadbf0d.txt"
SEED003 = "003_ce87ea73fe8bc8cb.txt"


# ----- seed 000: five exact layouts -> LBO / SBO encodings ------------------------------------

SEED_000_EXAMPLES = [
    # (exact layout, dtype, major, swizzle, LBO field, SBO field)
    ("Swizzle<0,4,3> o ((8,2),(4,4)):((4,32),(1,64))", "tf32", "K", "none", 16, 8),
    ("Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))", "tf32", "K", "32B", 1, 16),
    ("Swizzle<0,4,3> o ((8,1,2),(8,2)):((1,8,64),(8,128))", "bf16", "MN", "none", 16, 8),
    ("Swizzle<1,4,3> o ((8,2,2),(8,2)):((1,8,128),(16,256))", "bf16", "MN", "32B", 16, 32),
    ("Swizzle<2,4,3> o ((8,4,2),(8,2)):((1,8,256),(32,512))", "bf16", "MN", "64B", 32, 64),
]


@pytest.mark.parametrize("ex", SEED_000_EXAMPLES, ids=lambda e: f"{e[2]}-{e[3]}-{e[1]}")
def test_seed_000_worked_examples(ex):
    text, dtype, major, sw, lbo, sbo = ex
    layout = parse_cute(text, swizzle_units="bytes")      # the seed's Swizzle<B,4,3> is on bytes
    p = derive_descriptor(layout, dtype=dtype, major=major)
    d = p.descriptor
    assert (d.swizzle, d.lbo_field, d.sbo_field, d.start_address) == (sw, lbo, sbo, 0)
    assert p.verdict.proved
    assert verify(encode(lbo=lbo * 16, sbo=sbo * 16, swizzle=sw), layout, dtype=dtype,
                  major=major).proved


def test_seed_000_k_major_none_example_second_k_block():
    # ((8,2),(4,4)) holds two tf32 K-blocks: the second starts 2 * LBO bytes on
    layout = parse_cute(SEED_000_EXAMPLES[0][0], swizzle_units="bytes")
    d = descriptor_for(layout, dtype="tf32", major="K", k_block=1)
    assert (d.start_address, d.lbo_field, d.sbo_field) == (2 * 64 * 4, 16, 8)


def test_seed_000_k_major_32b_exact_layout_aliases_for_k_2():
    # Seed inconsistency: with k = 2 the canonical (T,2k):(1,T) runs 16 tf32 (64 bytes) along
    # K inside 32-byte rows, so rows overlap: (0, 8) and (1, 0) share element offset 8. Each
    # wgmma K-block on its own is still read correctly (the K-block 0 descriptor proves).
    layout = parse_cute(SEED_000_EXAMPLES[1][0], swizzle_units="bytes")
    table = offsets_table(layout, unit="bytes", elem_bits=32)
    assert len(set(table.tolist())) < table.size            # not injective
    assert layout.layout((0, 8)) == layout.layout((1, 0)) == 8
    assert verify(encode(lbo=16, sbo=256, swizzle="32B"), layout, dtype="tf32", major="K").proved


# ----- seed 003: the tutorial's descriptors ---------------------------------------------------

SEED_003_EXAMPLES = [
    # (layout as the tutorial prints it, major, LBO field or None, SBO field)
    ("Sw<0,4,3> o smem_ptr16b o ((_8,8),(_8,2)):((_8,_64),(_1,512))", "K", 64, 8),      # A K none
    ("Sw<0,4,3> o smem_ptr16b o ((_8,4),(_8,2)):((_8,_64),(_1,256))", "K", 32, 8),      # B K none
    ("Sw<2,4,3> o smem_ptr16b o ((_32,2),(_8,2)):((_1,_256),(_32,512))", "MN", 32, 64),  # A M 64B
    ("Sw<0,4,3> o smem_ptr16b o ((_8,4),(_8,2)):((_1,_64),(_8,256))", "MN", 32, 8),     # B N none
    ("Sw<3,4,3> o smem_ptr16b o ((_64,1),(_8,2)):((_1,_512),(_64,512))", "MN", None, 64),  # A M 128B
    ("Sw<1,4,3> o smem_ptr16b o ((_8,4),(_16,1)):((_16,_128),(_1,512))", "K", 1, 16),   # B K 32B
]


@pytest.mark.parametrize("ex", SEED_003_EXAMPLES, ids=lambda e: e[0][:9] + e[1])
def test_seed_003_tutorial_descriptors(ex):
    text, major, lbo, sbo = ex
    p = derive_descriptor(text, dtype="f16", major=major)
    assert p.verdict.proved
    assert p.descriptor.sbo_field == sbo
    if lbo is not None:
        assert p.descriptor.lbo_field == lbo


def test_seed_003_a_m_major_128b_lbo_is_free():
    # the tutorial: "LBO可以随便设置" (one atom along M: LBO is never used); it chose 8
    text = SEED_003_EXAMPLES[4][0]
    for lbo_field in (8, 0, 1234):
        d = Descriptor(0, lbo_field=lbo_field, sbo_field=64, layout_type=1)
        assert verify(d, text, dtype="f16", major="MN").proved


@pytest.mark.parametrize("text,major,lbo,sbo", [
    ("Swizzle<3, 3, 3> o ((8,8,1),(8,2)):((1,8,64),(64,512))", "MN", None, 64),   # A M-major 128B
    ("Swizzle<1, 3, 3> o ((8,4),(8,2)):((16,128),(1,8))", "K", 1, 16),           # B K-major 32B
])
def test_seed_003_element_unit_layouts_give_the_same_descriptors(text, major, lbo, sbo):
    d = descriptor_for(text, dtype="f16", major=major, swizzle_units="elements")
    assert d.sbo_field == sbo and (lbo is None or d.lbo_field == lbo)


@pytest.mark.parametrize("atom,major,shape,lbo,sbo", [
    # seed 003, "以 tile_to_shape 中的例子为例": LBO / SBO in 16-byte units
    ("(_8,_8):(_8,_1)", "K", (16, 64), 16, 8),
    ("Sw<1,4,3> o smem_ptr[16b](unset) o (_8,_16):(_16,_1)", "K", (16, 64), 1, 16),
    ("(_8,_8):(_1,_8)", "MN", (128, 16), 128, 8),
    ("Sw<3,4,3> o smem_ptr[16b](unset) o (_64,_8):(_1,_64)", "MN", (128, 16), 64, 128),
])
def test_seed_003_tile_to_shape_examples(atom, major, shape, lbo, sbo):
    layout = tile_to_shape(parse_cute(atom), shape)
    for kb in range(shape[1] // 16):
        d = descriptor_for(layout, dtype="f16", major=major, k_block=kb)
        assert (d.lbo_field, d.sbo_field) == (lbo, sbo)


# ----- the known failure patterns: each a counterexample, then the fix proving --------------

A_K_NONE = SEED_003_EXAMPLES[0][0]          # 64x16 f16, LBO 1024 bytes, SBO 128 bytes


def test_failure_lbo_sbo_in_bytes_without_the_shift():
    wrong = Descriptor(0, lbo_field=1024, sbo_field=128, layout_type=0)   # bytes, not >> 4
    v = verify(wrong, A_K_NONE, dtype="f16", major="K")
    assert v.status == "counterexample"
    c = v.counterexample
    # row 8 starts SBO bytes on: the layout puts it at 128, the descriptor reads 128 * 16
    assert (c["mn"], c["k"], c["layout_address"], c["descriptor_address"]) == (8, 0, 128, 2048)
    right = encode(lbo=1024, sbo=128)
    assert verify(right, A_K_NONE, dtype="f16", major="K").proved


def test_failure_lbo_sbo_swapped_for_mn_major_no_swizzle():
    b_n_none = SEED_003_EXAMPLES[3][0]      # LBO 32, SBO 8 (the K-major habit would swap them)
    wrong = Descriptor(0, lbo_field=8, sbo_field=32, layout_type=0)
    v = verify(wrong, b_n_none, dtype="f16", major="MN")
    assert v.status == "counterexample"
    c = v.counterexample
    assert (c["mn"], c["k"]) == (8, 0) and c["layout_address"] == 64 * 2
    assert c["descriptor_address"] == 32 * 16
    assert verify(Descriptor(0, lbo_field=32, sbo_field=8), b_n_none, dtype="f16", major="MN").proved


NVMMA_128 = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>"


def test_failure_128b_tile_at_a_128_not_1024_aligned_address_with_base_offset_0():
    base = 0x2080                            # 128-aligned, not 1024-aligned
    wrong = encode(start_address=base, lbo=16, sbo=1024, swizzle="128B", base_offset=0)
    v = verify(wrong, NVMMA_128, shape=[64, 64], dtype="f16", major="K", base_address=base)
    assert v.status == "counterexample"
    assert "base-offset rule broken" in v.reason
    c = v.counterexample
    # rows of the pattern are counted from the tile, not from address 0: row 0 is unswizzled
    assert (c["mn"], c["k"], c["layout_address"]) == (0, 0, base)
    assert c["descriptor_address"] == base + 16     # absolute row (0x2080 >> 7) & 7 = 1
    fixed = encode(start_address=base, lbo=16, sbo=1024, swizzle="128B", base_offset=1)
    assert (0x2080 >> 7) & 7 == 1
    assert verify(fixed, NVMMA_128, shape=[64, 64], dtype="f16", major="K", base_address=base).proved
    # and descriptor_for derives exactly that
    assert descriptor_for(NVMMA_128, shape=[64, 64], dtype="f16", major="K",
                          base_address=base) == fixed


def test_failure_n8_no_swizzle_operand():
    # B, N = 8, MN-major, no swizzle: a 16(K) x 8(N) f16 tile, each k row 16 bytes
    # (N contiguous). One core matrix along N makes the strides look unused, but the
    # second group of 8 k rows sits LBO = 128 bytes on.
    layout = "Sw<0,4,3> o smem_ptr[16b](unset) o ((_8,_1),(_8,_2)):((_1,_0),(_8,_64))"
    wrong = encode(lbo=0, sbo=0)
    v = verify(wrong, layout, dtype="f16", major="MN")
    assert v.status == "counterexample"
    c = v.counterexample
    assert (c["mn"], c["k"], c["layout_address"], c["descriptor_address"]) == (0, 8, 128, 0)
    assert verify(encode(lbo=128, sbo=0), layout, dtype="f16", major="MN").proved
    assert descriptor_for(layout, dtype="f16", major="MN").lbo == 128


K128 = "Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_16),(_64,_1)):((_64,_512),(_1,_0))"  # 128x64


def test_failure_sub_tile_of_a_swizzled_tile_ignoring_its_offset():
    base = encode(start_address=0x1000, lbo=16, sbo=1024, swizzle="128B")
    # K-block 2 of the 128B K-major tile starts 2 * 32 bytes into each row
    v = verify(base, K128, dtype="f16", major="K", k_block=2, base_address=0x1000, mn=64)
    assert v.status == "counterexample"
    c = v.counterexample
    assert (c["mn"], c["k"], c["tile_k"]) == (0, 0, 32)
    assert (c["descriptor_address"], c["layout_address"]) == (0x1000, 0x1000 + 64)
    assert verify(base.with_start(0x1000 + 64), K128, dtype="f16", major="K", k_block=2,
                  base_address=0x1000, mn=64).proved
    # the second 64 rows (M block 1) start 64 rows * 128 bytes on
    v = verify(base, K128, dtype="f16", major="K", mn=64, mn_block=1, base_address=0x1000)
    assert v.status == "counterexample" and v.counterexample["tile_mn"] == 64
    assert verify(base.with_start(0x1000 + 64 * 128), K128, dtype="f16", major="K", mn=64,
                  mn_block=1, base_address=0x1000).proved


# ----- contract findings --------------------------------------------------------------------

def test_base_offset_with_no_swizzle_is_a_finding_not_a_model():
    d = Descriptor(0, lbo_field=64, sbo_field=8, base_offset=1, layout_type=0)
    v = verify(d, A_K_NONE, dtype="f16", major="K")
    assert v.status == "counterexample" and v.method == "contract"
    assert v.counterexample["rule"] == "base-offset-no-swizzle"


def test_wrong_nonzero_base_offset_is_a_finding():
    d = encode(start_address=0x2080, lbo=16, sbo=1024, swizzle="128B", base_offset=3)
    v = verify(d, NVMMA_128, shape=[64, 64], dtype="f16", major="K", base_address=0x2080)
    assert v.method == "contract" and v.counterexample["rule"] == "base-offset"


def test_mn_major_tf32_on_sm90_is_a_finding():
    layout = "Sw<3,4,3> o smem_ptr[32b](unset) o ((_32,_1),(_8,_1)):((_1,_0),(_32,_0))"
    d = encode(sbo=1024, swizzle="128B")
    v = verify(d, layout, dtype="tf32", major="MN")
    assert v.counterexample["rule"] == "transpose-dtype"
    # tcgen05 transposes 32-bit operands only with 128B_base32B (PTX ISA 9.7.16.10.3 Table 52)
    v = verify(encode(sbo=1024, swizzle="128B", arch="sm_100"), layout, dtype="tf32", major="MN")
    assert v.counterexample["rule"] == "transpose-swizzle"


def test_sm100_mode1_is_modelled_not_unknown():
    # K-major 128B_base32B: allowed by PTX ISA Table 52, refused by CUTLASS: modelled, the verdict
    # says it is an inference (tests/test_tcgen05_desc.py covers the mode against CUTLASS)
    d = encode(lbo=16, sbo=1024, swizzle="128B_base32B", arch="sm_100")
    v = verify(d, K128, dtype="f16", major="K", mn=64)
    assert v.status in ("proved", "counterexample") and "inferred-layout" in v.reason


def test_reserved_bits_are_a_finding():
    v = verify(decode(0x4000004000010000 | 1 << 14), K128, dtype="f16", major="K", mn=64)
    assert v.counterexample["rule"] == "reserved-bits"


def test_layout_no_descriptor_expresses_says_why():
    # rows padded to 144 bytes: no canonical layout has that row pitch
    padded = "((_8,_8),(_64,_1)):((_72,_576),(_1,_0))"
    with pytest.raises(LayoutError, match="no sm_90 descriptor reads this layout.*128B:.*none:"):
        descriptor_for(padded, dtype="f16", major="K")


@pytest.mark.parametrize("kwargs,match", [
    ({"k_block": 4}, "k_block 4 is outside the tile's 4 K-block"),
    ({"mn": 12}, "multiple of 8"),
    ({"mn_block": 1}, "outside the tile's MN extent"),
    ({"dtype": "f64"}, "unknown wgmma element type"),
    ({"major": "X"}, "expected K or MN"),
])
def test_bad_operand_arguments_are_errors(kwargs, match):
    args = {"dtype": "f16", "major": "K", **kwargs}
    with pytest.raises(LayoutError, match=match):
        verify(0x4000004000010000, "Sw<3,4,3> o smem_ptr[16b](unset) o "
               "((_8,_8),(_64,_1)):((_64,_512),(_1,_0))", **args)


def test_element_width_of_the_layout_must_match_dtype():
    with pytest.raises(LayoutError, match="16-bit elements but dtype tf32"):
        verify(0, A_K_NONE, dtype="tf32", major="K")
    with pytest.raises(LayoutError, match="elementBitWidth = 16 but dtype e4m3"):
        verify(0, NVMMA_128, shape=[64, 64], dtype="e4m3", major="K")


# ----- bases, dynamic strides, b1, sm_100 -----------------------------------------------------

@pytest.mark.parametrize("base", [0x0, 0x80, 0x100, 0x380, 0x400, 0x1480, 0x3ff80])
def test_descriptor_for_a_relative_swizzle_at_any_128_aligned_base_proves(base):
    if base + 64 * 128 > 1 << 18:
        base = (1 << 18) - 64 * 128 - 0x80
    p = derive_descriptor(NVMMA_128, shape=[64, 64], dtype="f16", major="K", base_address=base)
    assert p.verdict.proved
    assert p.descriptor.base_offset == (0 if base % 1024 == 0 else (base >> 7) & 7)


def test_relative_swizzle_at_a_64_byte_base_has_no_base_offset():
    with pytest.raises(LayoutError, match="not on a 128-byte row"):
        descriptor_for(NVMMA_128, shape=[64, 64], dtype="f16", major="K", base_address=0x440)


def test_dynamic_strides_are_read_like_static_ones():
    # 8-row groups 2048 bytes apart (a dynamic stride, not the compact 1024)
    layout = "Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,4),(_64,_1)):((_64,1024),(_1,_0))"
    p = derive_descriptor(layout, dtype="f16", major="K")
    assert p.descriptor.sbo == 2048 and p.verdict.proved


def test_sbo_off_the_swizzle_repeat_is_an_inferred_note_not_a_counterexample():
    # 8-row groups 1536 bytes apart: the second 128B atom starts mid-pattern. "stride-repeat" is
    # an inference, not a cited hardware fact: the layout swizzles the same absolute byte
    # address bits the hardware does, so the addresses match exactly and the address proof
    # decides (issue "never a wrong proved": an inferred rule never refutes an exact match).
    layout = "Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,4),(_64,_1)):((_64,768),(_1,_0))"
    v = verify(encode(lbo=16, sbo=1536, swizzle="128B"), layout, dtype="f16", major="K")
    assert v.proved and "stride-repeat" in v.reason and "inference" in v.reason
    assert descriptor_for(layout, dtype="f16", major="K").sbo == 1536
    # without a swizzle any 16-byte multiple is fine (no pattern to keep in phase)
    plain = "((_8,4),(_8,_2)):((_8,200),(_1,_64))"
    d = descriptor_for(plain, dtype="f16", major="K")
    assert (d.sbo, d.lbo, d.swizzle) == (400, 128, "none")


def test_non_power_of_two_sub_modes_are_decided_on_every_point():
    # rows as (12, 2) sub-modes: not bit fields of mn, so neither bases nor split apply; the
    # 24 x 16 block is small enough to evaluate everywhere (a proof by exhaustion)
    layout = "Sw<1,4,3> o smem_ptr[16b](unset) o ((_12,_2),(_16,_1)):((_16,_192),(_1,_0))"
    p = derive_descriptor(layout, dtype="f16", major="K")
    assert p.verdict.proved and p.verdict.method == "enumeration" and p.descriptor.sbo == 256
    v = verify(encode(lbo=16, sbo=512, swizzle="32B"), layout, dtype="f16", major="K")
    assert v.status == "counterexample" and v.method == "enumeration" and v.counterexample["mn"] >= 8


def test_enumeration_and_z3_decide_alike():
    # random non-linear address functions (div/mod sub-modes, 128B-style swizzles): the
    # exhaustive path and z3 agree on the status, and each counterexample is a real difference
    import random
    from verilayout.hw.nvidia.descriptor import AddressFunction, BitSwizzle, Term
    from verilayout.prove.wgmma import equal_addresses
    rng = random.Random(7)
    seen = set()
    for _ in range(60):
        def fn(rows, sw):
            terms = (Term("mn", 1, rows, 16 * 8 * 8), Term("mn", rows, 0, rng.choice([1024, 2048, 3072]) * 8),
                     Term("k", 1, 0, 16))
            return AddressFunction((("mn", 24), ("k", 16)), terms=terms,
                                   swizzle=BitSwizzle(3, 4 + 3, 3) if sw else None)
        rows = rng.choice([3, 6, 12])
        a, b = fn(rows, rng.random() < 0.5), fn(rows, rng.random() < 0.5)
        auto, z = equal_addresses(a, b), equal_addresses(a, b, method="z3")
        assert auto[0] == z[0], (a, b)
        if auto[0] == "counterexample":
            assert a.eval(*auto[1]) != b.eval(*auto[1])
        seen.add((auto[0], auto[2]))
    assert {s for s, _ in seen} == {"proved", "counterexample"}


def test_b1_k_major_operand():
    # 256 b1 along K = 32 bytes per row; K-major no swizzle: 16-byte units of 128 bits
    layout = parse_cute("((_8,_2),(_128,_2)):((_128,_2048),(_1,_4096))")
    d = descriptor_for(layout, dtype="b1", major="K")
    assert (d.lbo, d.sbo) == (4096 // 8, 2048 // 8)
    bad = verify(encode(lbo=d.lbo, sbo=d.lbo), layout, dtype="b1", major="K")
    assert bad.status == "counterexample" and "layout_bit" in bad.counterexample


def test_sm100_descriptor_for_the_same_layout():
    d = descriptor_for(K128, dtype="f16", major="K", mn=64, arch="sm_100")
    assert d.arch == "sm_100" and d.swizzle == "128B" and d.layout_type == 2
    assert d.value == (1 << 16 | 64 << 32 | 1 << 46 | 2 << 61) and d.lbo_field == 1


# ----- agreement with brute force --------------------------------------------------------------

def layout_bytes(text, bits, mn, kx, kb):
    """Byte address of every (mn, k) of K-block kb, through verilayout.cute (base 0)."""
    obj = parse_cute(text)
    tab = offsets_table(obj, unit="bytes", elem_bits=bits)
    size0 = int(obj.layout[0].size) if hasattr(obj, "layout") else int(obj[0].size)
    full = tab.reshape(-1, size0).T
    return full[:mn, kb * kx:(kb + 1) * kx]


def tiles():
    """Random GMMA-style tiles: an atom tiled in either order, optionally with padded strides."""
    return st.tuples(st.sampled_from(["K", "MN"]), st.sampled_from(["none", "32B", "64B", "128B"]),
                     st.sampled_from([8, 16, 32]), st.integers(1, 2), st.integers(1, 2),
                     st.sampled_from(["col", "row"]), st.integers(0, 2))


def make_tile(major, sw, bits, a, b, order, pad):
    t = 128 // bits
    w = {"none": 1, "32B": 2, "64B": 4, "128B": 8}[sw]
    amn, ak = (w * t, 8) if major == "MN" else (8, w * t)
    kx = 256 // bits
    mn, k = amn * a, max(ak, kx) * b
    if mn < 8:
        mn = 8
    nmn, nk = mn // amn, k // ak
    rep = 8 * 16 * w if sw != "none" else 128      # pad whole swizzle patterns (or 128 bytes)
    size = amn * ak + pad * rep * 8 // bits
    s_in = ((1, amn), ) if major == "MN" else ((ak, 1), )
    smn_in, sk_in = s_in[0]
    if order == "col":
        s_mn_out, s_k_out = size, size * nmn
    else:
        s_mn_out, s_k_out = size * nk, size
    text = (f"Sw<{w.bit_length() - 1},4,3> o smem_ptr[{bits}b](unset) o "
            f"(({amn},{nmn}),({ak},{nk})):(({smn_in},{s_mn_out}),({sk_in},{s_k_out}))")
    return text, mn, k


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiles(), st.integers(0, 3), st.integers(-2, 2), st.integers(-2, 2))
def test_verify_agrees_with_brute_force(tile, kb, dl, ds):
    major, sw, bits, a, b, order, pad = tile
    if major == "MN" and bits != 16:
        return                                        # sm_90 rule; covered by test above
    text, mn, k = make_tile(major, sw, bits, a, b, order, pad)
    dtype = {8: "e4m3", 16: "f16", 32: "tf32"}[bits]
    kx = 256 // bits
    kb = kb % (k // kx)
    d = descriptor_for(text, dtype=dtype, major=major, k_block=kb)
    want = layout_bytes(text, bits, mn, kx, kb)
    got = canonical_addresses(major, sw, bits, d.start_address, d.lbo, d.sbo, mn)
    assert np.array_equal(got, want)                   # the derived descriptor is right
    # perturb LBO / SBO and compare verify's answer with enumeration
    e = encode(start_address=d.start_address, lbo=max(0, d.lbo + 16 * dl),
               sbo=max(0, d.sbo + 16 * ds), swizzle=sw)
    v = verify(e, text, dtype=dtype, major=major, k_block=kb)
    hw = canonical_addresses(major, sw, bits, e.start_address, e.lbo, e.sbo, mn)
    assert v.proved == bool(np.array_equal(hw, want))
    if v.method == "contract":                  # an LBO or SBO off the swizzle repeat
        rep = 8 * 16 * {"32B": 2, "64B": 4, "128B": 8}[sw]
        assert v.counterexample["rule"] == "stride-repeat" and (e.sbo % rep or e.lbo % rep)
    elif not v.proved:
        c = v.counterexample
        assert hw[c["mn"], c["k"]] == c["descriptor_address"] != c["layout_address"] == \
            want[c["mn"], c["k"]]
