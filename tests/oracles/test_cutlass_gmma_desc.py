"""Differential test against CUTLASS's ``cute::SM90::GMMA::make_gmma_desc`` (host-only C++
built from the nvidia-cutlass wheel's headers, see /work/shared/reference/oracles.md).

For every swizzle x major-ness x 8/16/32-bit element x several tile shapes x both atom
orders of ``tile_to_shape`` x every wgmma K-block, the C++ program prints the layout text
CuTe prints and the descriptor fields CUTLASS computes on that K-block's sub-tile. Then:

* verilayout's descriptor derived from that text has CUTLASS's layout type and start
  offset, and CUTLASS's LBO / SBO wherever the canonical layout uses them (the m / k mode
  of the PTX canonical form has more than one element);
* verilayout proves CUTLASS's own descriptor reads the layout's bytes (so the fields it
  leaves unused are unused), except that sm_90 wgmma transposes only 16-bit types: there the
  proof is a contract finding, and the same fields in an sm_100 descriptor prove (8-bit), or break
  the tcgen05 rule that a transposed 32-bit operand needs 128B_base32B (PTX ISA Table 52).

The binary is compiled once per session (cached by source hash in the temp dir).
"""
from __future__ import annotations

import pathlib

import pytest

from tests.oracles.cutlass_build import (assert_every_config_printed, config_id, descriptor_oracle, tile_calls,
                                         tile_configs)

pytestmark = pytest.mark.oracle

HERE = pathlib.Path(__file__).parent / "cutlass"
HEADER = HERE / "gmma_desc_oracle.hpp"
TYPES = {8: "cute::uint8_t", 16: "cute::half_t", 32: "float"}
DTYPE = {8: "e4m3", 16: "f16", 32: "tf32"}
ATOM = {"none": "INTER", "32B": "SW32", "64B": "SW64", "128B": "SW128"}
WIDTH = {"none": 1, "32B": 2, "64B": 4, "128B": 8}
SM90_TYPE = {0: "none", 1: "128B", 2: "64B", 3: "32B"}


def configs():
    return tile_configs(TYPES, ATOM, WIDTH)


def _source(part):
    return tile_calls(part, "vl_oracle::run", "cute::SM90::GMMA", "cute::GMMA::Major", TYPES, ATOM)


@pytest.fixture(scope="session")
def cutlass_output():
    return descriptor_oracle(HEADER, configs(), _source, "gmma_desc_oracle")


def _used(major, sw, bits, mn):
    """Which of (LBO, SBO) the PTX canonical form of one K-block uses (seed 000 table)."""
    t, kx = 128 // bits, 256 // bits
    if major == "K":
        return (sw == "none", mn > 8)                 # (T,2):(1,LBO) / (8,m):(.,SBO)
    if sw == "none":
        return (kx > 8, mn > t)                       # (8,k):(T,LBO) / (T,1,m):(.,.,SBO)
    return (mn > t * WIDTH[sw], kx > 8)               # (T,W,m):(.,.,LBO) / (8,k):(WT,SBO)


def test_every_configuration_was_printed(cutlass_output):
    cfgs, layouts, descs = cutlass_output
    assert_every_config_printed(cfgs, layouts, descs)


def test_fields_equal_cutlass_and_cutlass_descriptors_prove(cutlass_output):
    from verilayout.errors import LayoutError
    from verilayout.hw.nvidia.descriptor import Descriptor
    from verilayout.wgmma import derive_descriptor, verify
    cfgs, layouts, descs = cutlass_output
    checked = 0
    for c in cfgs:
        bits, major, sw, mn, k, order = c
        dtype = DTYPE[bits]
        text = layouts[config_id(c)]
        transpose_ok = major == "K" or bits == 16          # sm_90 wgmma rule
        arch = "sm_90" if transpose_ok else "sm_100"
        use_lbo, use_sbo = _used(major, sw, bits, mn)
        for kb, off, lbo, sbo, lt, bo in descs[config_id(c)]:
            where = f"{config_id(c)} K-block {kb}: {text}"
            if bits == 32 and major == "MN":
                # neither wgmma (16-bit transposes only) nor tcgen05 (a transposed 32-bit operand
                # needs 128B_base32B, PTX ISA Table 52) reads these GMMA layouts
                with pytest.raises(LayoutError, match="transpose-swizzle"):
                    derive_descriptor(text, dtype=dtype, major=major, k_block=kb, arch=arch)
                again = Descriptor(off * bits // 8, lbo, sbo, bo, {0: 0, 1: 2, 2: 4, 3: 6}[lt], "sm_100")
                v = verify(again, text, dtype=dtype, major=major, k_block=kb)
                assert v.counterexample["rule"] == "transpose-swizzle", where
                checked += 1
                continue
            p = derive_descriptor(text, dtype=dtype, major=major, k_block=kb, arch=arch)
            d = p.descriptor
            assert p.verdict.proved, where
            assert d.swizzle == SM90_TYPE[lt], where
            assert d.start_address == off * bits // 8, where
            assert d.base_offset == bo == 0, where
            if use_lbo:
                assert d.lbo_field == lbo, where
            if use_sbo:
                assert d.sbo_field == sbo, where
            theirs = Descriptor(off * bits // 8, lbo, sbo, bo, lt, "sm_90")
            v = verify(theirs, text, dtype=dtype, major=major, k_block=kb)
            if transpose_ok:
                assert v.proved, f"{where}: {v.reason}"
            else:
                assert v.counterexample["rule"] == "transpose-dtype", where
                again = Descriptor(off * bits // 8, lbo, sbo, bo, d.layout_type, "sm_100")
                assert verify(again, text, dtype=dtype, major=major, k_block=kb).proved, where
            checked += 1
    assert checked >= 250
