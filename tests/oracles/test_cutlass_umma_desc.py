"""Differential test against CUTLASS's ``cute::UMMA::make_umma_desc`` (sm_100 tcgen05 shared-memory
descriptors; host-only C++ from the nvidia-cutlass wheel's headers, built as
``test_cutlass_gmma_desc.py`` builds the sm_90 oracle; see /work/shared/reference/oracles.md).

For every element width CuTe's UMMA atoms take (4-bit ``float_e2m1_t``: packed e2m1 of
``.kind::mxf4``; 8-bit ``uint8_t``: e4m3 and the 8-bit slots CUTLASS allocates for the 16-byte
padded fp4/fp6 of ``.kind::f8f6f4`` (``ElementAMma_SmemAllocType = uint8_t``); 16-bit; 32-bit)
x K/MN major x every swizzle atom, ``128B_base32B`` (``Layout_MN_SW128_32B_Atom``) included,
x several tile shapes x both atom orders x every K-block (256 bits of K), the C++ program prints
CuTe's layout text and CUTLASS's descriptor. Then:

* the raw 64-bit value equals verilayout's ``Descriptor`` built from those fields (arch sm_100):
  the bit positions of every field, the version bits 46-48 = 0b001 and the 3-bit swizzle code;
* ``decode(raw, "sm_100")`` names the swizzle of the CuTe atom;
* verilayout proves that CUTLASS's descriptor reads, for every (mn, k) of the K-block, the byte
  where CuTe's layout put the element -- for every padded fp4/fp6 name too -- except where the PTX
  ISA forbids the combination (Table 49: packed e2m1 is never transposed; Table 52: a
  transposed 32-bit operand needs 128B_base32B, a transposed 8/16-bit one must not use it):
  there verilayout answers a counterexample naming that rule (CUTLASS builds the descriptor
  anyway), never ``unknown``, and for 128B_base32B the address model is still compared with
  CuTe's ``Swizzle<2,5,2>`` tile past the rule (4-, 8- and 16-bit MN-major atoms);
* where verilayout derives a descriptor itself (``derive_descriptor --arch sm_100``, every mode and
  element width), it has CUTLASS's swizzle code, start and the LBO/SBO the canonical form uses.
"""
from __future__ import annotations

import pathlib

import pytest

from tests.oracles.cutlass_build import (assert_every_config_printed, config_id, descriptor_oracle, tile_calls,
                                         tile_configs)

pytestmark = pytest.mark.oracle


HERE = pathlib.Path(__file__).parent / "cutlass"
HEADER = HERE / "umma_desc_oracle.hpp"
TYPES = {4: "cutlass::float_e2m1_t", 8: "cute::uint8_t", 16: "cute::half_t", 32: "float"}
#: verilayout's names for what each CuTe element width holds
DTYPES = {4: ("e2m1",), 8: ("e4m3", "e2m1_padded", "e3m2", "e2m3"), 16: ("f16",), 32: ("tf32",)}
ATOM = {"none": "INTER", "32B": "SW32", "64B": "SW64", "128B": "SW128", "128B_base32B": "SW128_32B"}
WIDTH = {"none": 1, "32B": 2, "64B": 4, "128B": 8, "128B_base32B": 8}
KROWS = {"128B_base32B": 4}
#: CUTLASS UMMA::LayoutType values (cute/arch/mma_sm100_desc.hpp)
SM100_TYPE = {0: "none", 1: "128B_base32B", 2: "128B", 4: "64B", 6: "32B"}


def configs():
    # make_umma_desc static_asserts on a K-major 128B_base32B atom: not generated
    return tile_configs(TYPES, ATOM, WIDTH, KROWS, skip=lambda sw, major: sw == "128B_base32B" and major == "K")


def _source(part):
    return tile_calls(part, "vl_umma_oracle::run", "cute::UMMA", "cute::UMMA::Major", TYPES, ATOM)


@pytest.fixture(scope="session")
def umma_output():
    return descriptor_oracle(HEADER, configs(), _source, "umma_desc_oracle", hex_last=True)


def _ptx_forbids(bits, major, sw):
    """The PTX ISA rule (Tables 49, 52) that forbids this operand, or None."""
    if major != "MN":
        return None
    if bits == 4:
        return "transpose-dtype"
    if (bits == 32) != (sw == "128B_base32B"):
        return "transpose-swizzle"
    return None


def test_every_configuration_was_printed(umma_output):
    cfgs, layouts, descs = umma_output
    assert len(cfgs) >= 150
    assert_every_config_printed(cfgs, layouts, descs)


def test_raw_values_and_fields_equal_cutlass(umma_output):
    from verilayout.hw.nvidia.descriptor import Descriptor, decode
    cfgs, layouts, descs = umma_output
    n = 0
    for c in cfgs:
        bits, major, sw, mn, k, order = c
        for kb, off, lbo, sbo, lt, bo, ver, mode, raw in descs[config_id(c)]:
            where = f"{config_id(c)} K-block {kb}"
            assert ver == 1 and mode == 0 and bo == 0, where        # make_umma_desc's constants
            ours = Descriptor(0, lbo, sbo, bo, lt, "sm_100")
            assert ours.value == raw, f"{where}: {ours.value:#x} != {raw:#x}"
            d = decode(raw, "sm_100")
            assert d.swizzle == sw == SM100_TYPE[lt] and d.reserved == 0, where
            n += 1
    assert n >= 390


def test_cutlass_descriptors_prove_or_break_a_cited_rule(umma_output):
    from verilayout.hw.nvidia.descriptor import Descriptor, hardware_address_function
    from verilayout.prove.wgmma import equal_addresses, operand_block
    from verilayout.wgmma import check_descriptor, intended_tile
    cfgs, layouts, descs = umma_output
    proved = refused = mutated = mode1 = 0
    for c in cfgs:
        bits, major, sw, mn, k, order = c
        text = layouts[config_id(c)]
        forbid = _ptx_forbids(bits, major, sw)
        for dtype in DTYPES[bits]:
            for kb, off, lbo, sbo, lt, bo, ver, mode, raw in descs[config_id(c)]:
                where = f"{config_id(c)} {dtype} K-block {kb}: {text}"
                theirs = Descriptor(off * bits // 8, lbo, sbo, bo, lt, "sm_100")
                v = check_descriptor(theirs, text, dtype=dtype, major=major, k_block=kb)
                if forbid is None:
                    assert v.proved, f"{where}: {v.reason}"
                    proved += 1
                    if kb == 0 and dtype == DTYPES[bits][0] and sbo and (major == "K" or sw != "none"):
                        # not vacuous: one SBO step of 16 bytes more reads other bytes
                        bad = Descriptor(off * bits // 8, lbo, sbo + 1, bo, lt, "sm_100")
                        w = check_descriptor(bad, text, dtype=dtype, major=major, k_block=kb)
                        sbo_used = mn > 8 if major == "K" else 256 // bits > KROWS.get(sw, 8)
                        if sbo_used:                    # (seed 000 / make_umma_desc forms)
                            assert w.status == "counterexample", f"{where}: SBO+16 {w.reason}"
                            mutated += 1
                else:
                    assert v.status == "counterexample" and v.counterexample["rule"] == forbid, \
                        f"{where}: {v.reason}"
                    refused += 1
                    if sw == "128B_base32B":
                        # the PTX forbids the operand, but the address model of mode 1 must still
                        # read CuTe's Swizzle<2,5,2> tile at every width: compared past the rule
                        tile = intended_tile(text, dtype=dtype)
                        blk = operand_block(tile, k_block=kb)
                        hw = hardware_address_function(theirs, major=major, dtype=dtype,
                                                       mn_extent=blk.mn, k_extent=blk.k)
                        want = tile.fn.restrict({"mn": blk.mn_offset, "k": blk.k_offset},
                                                {"mn": blk.mn, "k": blk.k})
                        assert equal_addresses(hw, want)[0] == "proved", where
                        mode1 += 1
    assert proved >= 400 and refused >= 50 and mutated >= 40 and mode1 >= 30, \
        (proved, refused, mutated, mode1)


def test_derived_descriptors_have_cutlass_fields(umma_output):
    from verilayout.wgmma import derive_descriptor
    cfgs, layouts, descs = umma_output
    checked = 0
    for c in cfgs:
        bits, major, sw, mn, k, order = c
        if _ptx_forbids(bits, major, sw):
            continue
        text = layouts[config_id(c)]
        t, w = 128 // bits, WIDTH[sw]
        kx = 256 // bits
        if major == "K":
            use_lbo, use_sbo = sw == "none", mn > 8
        elif sw == "none":
            use_lbo, use_sbo = kx > 8, mn > t
        else:
            use_lbo, use_sbo = mn > t * w, kx > KROWS.get(sw, 8)
        for kb, off, lbo, sbo, lt, bo, ver, mode, raw in descs[config_id(c)]:
            where = f"{config_id(c)} K-block {kb}: {text}"
            p = derive_descriptor(text, dtype=DTYPES[bits][0], major=major, k_block=kb, arch="sm_100")
            d = p.descriptor
            assert p.verdict.proved, where
            assert d.layout_type == lt and d.start_address == off * bits // 8, where
            if use_lbo:
                assert d.lbo_field == lbo, where
            if use_sbo:
                assert d.sbo_field == sbo, where
            checked += 1
    assert checked >= 300, checked
