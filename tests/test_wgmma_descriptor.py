"""Descriptor bitfields: sm_90 (seed 003_ce87ea73fe8bc8cb.txt, the GmmaDesc bitfield and the
issue's field table) and sm_100 (tcgen05). Expected values are written from the bit positions
(start >> 4 in 0-13, LBO >> 4 in 16-29, SBO >> 4 in 32-45, base offset in 49-51, swizzle in
62-63: 0 none, 1 128B, 2 64B, 3 32B; sm_100: 0b001 in 46-48, LBO mode in 52, swizzle in 61-63:
0, 1 = 128B with 32B atom, 2 = 128B, 4 = 64B, 6 = 32B) and from the encodings the seed
000_2b23e188beadbf0d.txt examples list.
"""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from verilayout.errors import LayoutError
from verilayout.hw.nvidia.descriptor import Descriptor, contract_findings, decode, encode, matrix_descriptor_encode, required_base_offset

SM90_SWIZZLE = {"none": 0, "128B": 1, "64B": 2, "32B": 3}
SM100_SWIZZLE = {"none": 0, "128B_base32B": 1, "128B": 2, "64B": 4, "32B": 6}


def sm90_value(start, lbo, sbo, bo, sw):
    return (start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | bo << 49 | SM90_SWIZZLE[sw] << 62


def sm100_value(start, lbo, sbo, bo, sw, mode=0):
    return ((start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | 0b001 << 46 | bo << 49
            | mode << 52 | SM100_SWIZZLE[sw] << 61)


def test_matrix_descriptor_encode_is_the_ptx_formula():
    for x in (0, 16, 0x400, 0x3FFF0, 0x40010, 0x12345):
        assert matrix_descriptor_encode(x) == (x & 0x3FFFF) >> 4


@pytest.mark.parametrize("sw", list(SM90_SWIZZLE))
def test_sm90_fields_land_on_their_bits(sw):
    d = encode(start_address=0x1230, lbo=0x40, sbo=0x3FFF0, swizzle=sw,
               base_offset=5 if sw != "none" else 0)
    assert d.value == sm90_value(0x1230, 0x40, 0x3FFF0, 5 if sw != "none" else 0, sw)
    assert (d.start_address, d.lbo, d.sbo, d.swizzle) == (0x1230, 0x40, 0x3FFF0, sw)
    assert decode(d.value) == d


@pytest.mark.parametrize("sw", ["none", "128B", "64B", "32B", "128B_base32B"])
def test_sm100_fields_land_on_their_bits(sw):
    d = encode(start_address=0x800, lbo=0x100, sbo=0x400, swizzle=sw, arch="sm_100",
               base_offset=3 if sw != "none" else 0)
    assert d.value == sm100_value(0x800, 0x100, 0x400, 3 if sw != "none" else 0, sw)
    assert decode(d.value, "sm_100") == d and d.swizzle == sw


def test_seed_000_example_encodings():
    # seed 000, K-major no-swizzle tf32: LBO = 64*4 bytes -> 16, SBO = 32*4 -> 8
    d = encode(lbo=64 * 4, sbo=32 * 4)
    assert (d.lbo_field, d.sbo_field) == (16, 8)
    # K-major 32B tf32: LBO "1 (assumed)", SBO = 64*4 bytes -> 16
    d = encode(lbo=16, sbo=64 * 4, swizzle="32B")
    assert (d.lbo_field, d.sbo_field) == (1, 16)
    # MN-major 64B bf16: LBO = 256*2 -> 32, SBO = 512*2 -> 64
    d = encode(lbo=256 * 2, sbo=512 * 2, swizzle="64B")
    assert (d.lbo_field, d.sbo_field) == (32, 64)


def test_tutorial_descriptor_for_a_k_major_none():
    # seed 003: descA.layout_type_ = 0, stride_byte_offset_ = 8, leading_byte_offset_ = 64
    d = Descriptor(start_address=0x400, lbo_field=64, sbo_field=8, layout_type=0)
    assert d.value == 0x400 >> 4 | 64 << 16 | 8 << 32
    assert (d.lbo, d.sbo) == (1024, 128)


@pytest.mark.parametrize("kwargs,match", [
    ({"lbo": 40}, "lbo = 40 bytes is not a multiple of 16"),
    ({"sbo": 8}, "sbo = 8 bytes is not a multiple of 16"),
    ({"start_address": 0x408}, "start_address = 1032 bytes is not a multiple of 16"),
    ({"lbo": 1 << 18}, "lbo = 262144 bytes does not fit the 14-bit field"),
    ({"start_address": 0x40000}, "outside the 256 KiB window"),
    ({"sbo": -16}, "negative"),
    ({"base_offset": 8}, "expected 0..7"),
    ({"swizzle": "16B"}, "expected none, 32B, 64B or 128B"),
    ({"swizzle": "128B_base32B"}, "does not exist on sm_90"),
    ({"lbo_mode": 1}, "sm_100 only"),
])
def test_encode_rejects_misaligned_or_oversized_fields(kwargs, match):
    with pytest.raises(LayoutError, match=match):
        encode(**kwargs)


@pytest.mark.parametrize("text,match", [
    ("0xZZ", "expected a 64-bit integer"), (str(1 << 64), "not a 64-bit unsigned integer"),
    ("-5", "not a 64-bit unsigned integer")])
def test_decode_rejects_what_is_not_a_descriptor(text, match):
    with pytest.raises(LayoutError, match=match):
        decode(text)


def test_decode_keeps_reserved_bits_and_reports_them():
    v = sm90_value(0x400, 16, 1024, 0, "128B") | 1 << 15 | 1 << 46
    d = decode(v)
    assert d.value == v and d.reserved == (1 << 15 | 1 << 46)
    rules = [f.rule for f in contract_findings(d, major="K", dtype="f16", mn_extent=64)]
    assert rules == ["reserved-bits"]


def test_sm100_descriptor_without_the_fixed_0b001_is_a_finding():
    v = sm100_value(0, 16, 1024, 0, "128B") & ~(1 << 46)
    d = decode(v, "sm_100")
    assert d.value == v
    assert [f.rule for f in contract_findings(d, major="K", dtype="f16", mn_extent=64)] == \
        ["reserved-bits"]
    bad = decode(sm100_value(0, 16, 1024, 0, "none") | 3 << 61, "sm_100")
    assert bad.swizzle == "invalid(3)"
    assert "swizzle-mode" in [f.rule for f in contract_findings(bad, major="K", dtype="f16",
                                                                mn_extent=64)]


def test_contract_rules_for_base_offset_and_transpose():
    f = contract_findings(Descriptor(0, 1, 8, base_offset=2), major="K", dtype="f16", mn_extent=64)
    assert [x.rule for x in f] == ["base-offset-no-swizzle"]
    # PTX: imm-trans (MN-major) only for .f16/.bf16 on sm_90
    f = contract_findings(Descriptor(0, 1, 8), major="MN", dtype="tf32", mn_extent=64)
    assert [x.rule for x in f] == ["transpose-dtype"]
    assert contract_findings(Descriptor(0, 1, 8), major="MN", dtype="bf16", mn_extent=64) == []


def test_required_base_offset_follows_the_ptx_rule():
    # 0 on a 1024/512/256-byte boundary for 128B/64B/32B, else (start >> 7) & 7
    assert [required_base_offset("128B", a) for a in (0, 0x400, 0x480, 0x780, 0x2300)] == \
        [0, 0, 1, 7, 6]
    assert [required_base_offset("64B", a) for a in (0x200, 0x280, 0x380)] == [0, 5, 7]
    assert [required_base_offset("32B", a) for a in (0x100, 0x180)] == [0, 3]
    assert required_base_offset("none", 0x30) == 0
    assert required_base_offset("128B", 0x440) is None      # not on a 128-byte row


@given(start=st.integers(0, (1 << 14) - 1), lbo=st.integers(0, (1 << 14) - 1),
       sbo=st.integers(0, (1 << 14) - 1), bo=st.integers(0, 7), sw=st.sampled_from(list(SM90_SWIZZLE)))
def test_encode_decode_round_trip(start, lbo, sbo, bo, sw):
    d = encode(start_address=start * 16, lbo=lbo * 16, sbo=sbo * 16, base_offset=bo, swizzle=sw)
    assert d.value == sm90_value(start * 16, lbo * 16, sbo * 16, bo, sw)
    assert decode(d.value) == d
    assert decode(hex(d.value)) == d


@given(st.integers(0, (1 << 64) - 1), st.sampled_from(["sm_90", "sm_100"]))
def test_every_64_bit_value_decodes_and_re_encodes_to_itself(v, arch):
    assert decode(v, arch).value == v


def test_sm90_descriptor_decoded_for_sm100_names_the_missing_version():
    # CUTLASS cute/arch/mma_sm100_desc.hpp: UMMA::SmemDescriptor ``version_`` is bits 46-47, set to 1
    # for Blackwell (cute/atom/mma_traits_sm100.hpp); PTX ISA tcgen05 shared memory descriptor: bits
    # 46-48 the fixed 0b001. An sm_90 value (bits: start 64, LBO 1, SBO 64, 128B at 62-63) has 0 there.
    v = (1 << 62) | (64 << 32) | (1 << 16) | 64
    msgs = [f.message for f in contract_findings(decode(v, "sm_100"), major="K", dtype="f16", mn_extent=64)]
    assert msgs == ["the sm_100 descriptor version (bits 46-47) is 0, not 1 (an sm_90 wgmma descriptor has "
                    "no version field: set bit 46)"]
    both = [f.message for f in contract_findings(decode(v | 3 << 46 | 1 << 48, "sm_100"), major="K",
                                                 dtype="f16", mn_extent=64)]
    assert both[0].startswith("the sm_100 descriptor version (bits 46-47) is 3, not 1")
    assert both[1].startswith(f"reserved bits {1 << 48:#x} are set")


def test_wgmma_decode_cli_says_version_for_sm100(capsys):
    from verilayout.cli.main import main
    rc = main(["wgmma", "decode", "0x4000004000010040", "--arch", "sm_100"])
    out = capsys.readouterr().out
    assert rc == 1 and "version (bits 46-47) is 0, not 1" in out and "0x400000000000" not in out
    import json
    rc = main(["wgmma", "decode", "0x4000004000010040", "--arch", "sm_100", "--json"])
    d = json.loads(capsys.readouterr().out)
    assert rc == 1 and d["version"] == 0 and "reserved_bits" not in d
    assert json.loads(_decode_json(main, capsys, hex(0x4000004000010040 | 1 << 46)))["version"] == 1


def _decode_json(main, capsys, value):
    main(["wgmma", "decode", value, "--arch", "sm_100", "--json"])
    return capsys.readouterr().out
