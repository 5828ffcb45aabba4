"""synth (layout + descriptors + K-block step) and descriptors for Triton's nvmma_shared layouts.

Expected values: Table 38 of seed 000_2b23e188beadbf0d.txt (atom widths: the widest swizzle
whose atom fits is derived below from the table), the K-block geometry (32 bytes of K per
wgmma, seed 003_ce87ea73fe8bc8cb.txt), CuTe's tile_to_shape as verilayout.cute computes it,
and brute force: every element's byte address through verilayout.cute against the seed's
canonical layout read through each descriptor.
"""
from __future__ import annotations

import numpy as np
import pytest

from test_wgmma_canonical import canonical_addresses
from verilayout.core.cute import offsets_table, tile_to_shape
from verilayout.frontends.cute_text import parse_cute
from verilayout.errors import LayoutError
from verilayout.wgmma import derive_descriptor, encode, synth, verify

BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "s8": 8}
WIDTH = {"128B": 128, "64B": 64, "32B": 32, "none": 16}


def widest(major, dtype, mn, k):
    """Table 38: an atom is 8 rows of W bytes along the leading dimension."""
    lead_bytes = (mn if major == "MN" else k) * BITS[dtype] // 8
    for sw, w in WIDTH.items():
        if lead_bytes % w == 0:
            return sw
    return None


CASES = [("bf16", "MN", 64, 64), ("f16", "K", 64, 64), ("f16", "K", 64, 32), ("f16", "K", 64, 16),
         ("f16", "MN", 8, 16), ("f16", "MN", 32, 32), ("e4m3", "K", 128, 128), ("tf32", "K", 64, 16),
         ("tf32", "K", 64, 8), ("s8", "K", 256, 64), ("f16", "K", 8, 128), ("bf16", "MN", 256, 32)]


@pytest.mark.parametrize("dtype,major,mn,k", CASES)
def test_synth_picks_the_widest_fitting_atom_and_every_descriptor_reads_it(dtype, major, mn, k):
    p = synth(dtype=dtype, major=major, mn=mn, k=k)
    assert p.swizzle == widest(major, dtype, mn, k)
    assert p.verdict.proved and all(v.proved for v in p.verdicts)
    bits = BITS[dtype]
    kx = 256 // bits
    # the layout is CuTe's tile_to_shape of the GMMA atom (verilayout.cute computes it)
    atom_b = {"none": 0, "32B": 1, "64B": 2, "128B": 3}[p.swizzle]
    t, w = 128 // bits, WIDTH[p.swizzle] // 16
    atom = (f"Sw<{atom_b},4,3> o smem_ptr[{bits}b](unset) o "
            + (f"({t * w},8):(1,{t * w})" if major == "MN" else f"(8,{t * w}):({t * w},1)"))
    want_layout = tile_to_shape(parse_cute(atom), (mn, k))
    assert [int(x) for x in offsets_table(parse_cute(p.layout_text), "bytes").tolist()] == \
        [int(x) for x in offsets_table(want_layout, "bytes").tolist()]
    # brute force: each K-block descriptor reads exactly the layout's bytes
    full = offsets_table(want_layout, "bytes").reshape(k, mn).T
    for kb, d in enumerate(p.descriptors):
        got = canonical_addresses(major, p.swizzle, bits, d.start_address, d.lbo, d.sbo, mn)
        assert np.array_equal(got, full[:, kb * kx:(kb + 1) * kx])
    assert p.k_block_starts == tuple(d.start_address for d in p.descriptors)


def test_synth_k_steps_are_the_k_block_byte_offsets():
    # K-major 128B f16, one atom along K: each K-block is the next 32 bytes of the row
    assert synth(dtype="f16", major="K", mn=64, k=64).k_step_bytes == 32
    # MN-major 128B bf16, 64 x 64: a K-block is 16 k rows of 64 elements = 2048 bytes
    assert synth(dtype="bf16", major="MN", mn=64, k=64).k_step_bytes == 16 * 64 * 2
    # K-major with two 128B atoms along K (atoms tiled M first): the step jumps at the atom
    p = synth(dtype="f16", major="K", mn=64, k=128)
    assert p.k_step_bytes is None
    assert p.k_block_starts == (0, 32, 64, 96, 8192, 8224, 8256, 8288)


def test_synth_refuses_what_wgmma_cannot_read():
    with pytest.raises(LayoutError, match="MN-major operands only for f16/bf16"):
        synth(dtype="tf32", major="MN", mn=64, k=64)
    with pytest.raises(LayoutError, match="not a multiple of one wgmma's K"):
        synth(dtype="f16", major="K", mn=64, k=24)
    with pytest.raises(LayoutError, match="8..256 rows"):
        synth(dtype="f16", major="K", mn=12, k=16)


def test_synth_at_an_unaligned_base_still_proves():
    p = synth(dtype="f16", major="K", mn=64, k=64, base_address=0x480)
    assert p.verdict.proved and p.descriptors[0].start_address == 0x480


# ----- Triton's #ttg.nvmma_shared (via verilayout's Triton front-end) --------------------------

def nvmma(sw, transposed, bits=16):
    return (f"#ttg.nvmma_shared<{{swizzlingByteWidth = {sw}, transposed = "
            f"{'true' if transposed else 'false'}, elementBitWidth = {bits}}}>")


@pytest.mark.parametrize("sw,transposed,shape", [
    (128, False, [64, 64]), (64, False, [128, 32]), (32, False, [64, 16]), (32, False, [64, 64]),
    (128, True, [64, 64]), (128, True, [128, 32]), (64, True, [64, 16]), (32, True, [64, 64])])
def test_triton_nvmma_shared_a_operands_have_proved_descriptors(sw, transposed, shape):
    major = "MN" if transposed else "K"
    for kb in range(shape[1] // 16):
        p = derive_descriptor(nvmma(sw, transposed), shape=shape, dtype="f16", major=major,
                              k_block=kb)
        assert p.verdict.proved
        assert p.descriptor.swizzle == f"{sw}B"
        if not transposed:
            # K-major: SBO is one 8-row atom (8 rows of the swizzle width)
            assert p.descriptor.sbo == 8 * sw and p.descriptor.lbo_field == 1


def test_triton_no_swizzle_row_major_tile_has_no_descriptor():
    # swizzlingByteWidth = 0 is row-major; with 32-byte rows no canonical layout matches
    with pytest.raises(LayoutError, match="no sm_90 descriptor reads this layout"):
        derive_descriptor(nvmma(0, False), shape=[64, 16], dtype="f16", major="K")


def test_triton_n8_b_operand_needs_lbo_for_the_second_k_group():
    # B = [K, N] = [16, 8] f16, N contiguous (16-byte rows): Triton gives it no swizzle. The
    # canonical MN-major form ((T,1,m),(8,k)) with m = 1, k = 2: LBO is the 8-k-row step.
    p = derive_descriptor(nvmma(0, False), shape=[16, 8], dtype="f16", major="MN", mn_dim=1)
    assert (p.descriptor.swizzle, p.descriptor.lbo, p.verdict.proved) == ("none", 8 * 16, True)
    v = verify(encode(lbo=0, sbo=128), nvmma(0, False), shape=[16, 8], dtype="f16", major="MN",
               mn_dim=1)
    assert v.status == "counterexample" and (v.counterexample["mn"], v.counterexample["k"]) == (0, 8)
