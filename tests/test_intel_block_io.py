"""The 2D block-load model: every limit of the reference table, and where data lands.

Expected values come from ``shared/reference/intel_2d_block_io.md`` (the limits and their
sources) and from the register images the OpenCL built-ins of cl_intel_subgroup_2d_block_io
define (``intel_sub_group_2d_block_read_16b_8r16x1c``: each work-item gets one ushort per
row, its own column; ``..._8b_1r32x1c reads one ushort``; ``..._transform_16b_32r16x1c``:
each uint packs two rows of the work-item's column; ``..._transpose_32b_...``: work-item
``l`` receives row ``l``), written out by hand below, plus brute-force enumeration.
"""
from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings, strategies as st

from verilayout.errors import LayoutError
from verilayout.hw.intel.block_io import BlockLoad, Surface, lane_bytes, lane_elements, unit_elements, violations

S = Surface(width=1024, height=1024, pitch=1024)


def _limits(load, arch="xe2"):
    return [v.limit for v in violations(load, arch)]


# ----------------------------------------------------------------------------
# limits: each row of the reference table
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("load", [
    BlockLoad(2, 16, 32, S, array_length=2),           # the seed's A load
    BlockLoad(2, 16, 32, S, array_length=2, vnni=True),  # the seed's B loads
    BlockLoad(4, 8, 32, S, transpose=True),            # the seed's transposed B loads
    BlockLoad(1, 64, 32, S),
    BlockLoad(1, 16, 32, S, array_length=4, vnni=True),
    BlockLoad(8, 8, 32, S),
    BlockLoad(8, 4, 8, S, transpose=True),
    BlockLoad(4, 16, 32, S),
])
def test_loads_within_every_limit_have_no_violation(load):
    assert violations(load) == ()


@pytest.mark.parametrize("load, limit", [
    (BlockLoad(3, 16, 8, S), "element size"),
    (BlockLoad(2, 64, 8, S), "block width"),                 # 16-bit: 2..32
    (BlockLoad(2, 12, 8, S), "block width"),                 # power of two
    (BlockLoad(1, 2, 8, S), "block width"),                  # 8-bit: 4..64
    (BlockLoad(4, 32, 8, S), "block width"),                 # 32-bit: 1..16
    (BlockLoad(8, 16, 8, S), "block width"),                 # 64-bit: 1..8
    (BlockLoad(2, 16, 33, S), "block height"),               # 1..32
    (BlockLoad(4, 8, 8, S, array_length=4), "array length"),  # 32-bit: 1 or 2
    (BlockLoad(8, 4, 8, S, array_length=2), "array length"),  # 64-bit: 1
    (BlockLoad(2, 32, 8, S, array_length=2), "width x array length x element size"),
    (BlockLoad(2, 16, 8, S, transpose=True), "transpose element size"),
    (BlockLoad(4, 8, 8, S, transpose=True, array_length=2), "array length"),
    (BlockLoad(4, 16, 8, S, transpose=True), "block width"),  # d32: 1..8
    (BlockLoad(8, 4, 16, S, transpose=True), "block height"),  # d64: exactly 8
    (BlockLoad(8, 8, 8, S, transpose=True), "block width"),  # d64: 1, 2, 4
    (BlockLoad(4, 8, 8, S, vnni=True), "VNNI element size"),
    (BlockLoad(2, 16, 1, S, vnni=True), "block height"),      # 16-bit VNNI: >= 2
    (BlockLoad(1, 16, 2, S, vnni=True), "block height"),      # 8-bit VNNI: >= 4
    (BlockLoad(4, 8, 8, S, vnni=True, transpose=True), "VNNI with transpose"),
    (BlockLoad(2, 16, 8, Surface(64, 8, 64, base=32)), "surface base"),
    (BlockLoad(2, 16, 8, Surface(32, 8, 64)), "surface width"),       # >= 64 bytes
    (BlockLoad(2, 16, 8, Surface(66, 8, 80)), "surface width"),       # multiple of 4
    (BlockLoad(2, 16, 8, Surface(64, 0, 64)), "surface height"),
    (BlockLoad(2, 16, 8, Surface(64, 8, 72)), "surface pitch"),       # multiple of 16
    (BlockLoad(2, 16, 8, Surface(128, 8, 64)), "surface pitch"),      # >= width
    (BlockLoad(2, 16, 8, S, x=1), "x offset"),                        # 16-bit: even
    (BlockLoad(1, 32, 8, S, x=2), "x offset"),                        # 8-bit: multiple of 4
])
def test_each_broken_limit_is_named(load, limit):
    assert limit in _limits(load)


def test_vnni_width_limit_depends_on_the_architecture():
    # reference: Xe2 and later 2..32 (16-bit), PVC 2..16.
    ld = BlockLoad(2, 32, 16, S, vnni=True)
    assert violations(ld, "xe2") == ()
    assert "block width" in _limits(ld, "pvc")


def test_violation_names_limit_value_and_sources():
    v = violations(BlockLoad(2, 16, 64, S))[0]
    assert (v.limit, v.value) == ("block height", 64)
    assert v.source == "I, V, T" and "32" in v.rule
    assert v.message == "block height 64: 1..32 rows for loads [I, V, T]"


def test_unknown_architecture_is_bad_input():
    with pytest.raises(LayoutError, match="unknown architecture 'xe9'"):
        violations(BlockLoad(2, 16, 8, S), "xe9")


def test_non_integer_fields_are_bad_input():
    with pytest.raises(LayoutError, match="block load height must be an integer"):
        BlockLoad(2, 16, 8.0, S)
    with pytest.raises(LayoutError, match="vnni must be true or false"):
        BlockLoad(2, 16, 8, S, vnni=1)


# ----------------------------------------------------------------------------
# where the data lands
# ----------------------------------------------------------------------------

def test_16b_8r16x1c_gives_each_lane_its_column_one_row_per_element():
    # OpenCL: intel_sub_group_2d_block_read_16b_8r16x1c -> work-item l gets (r, l), r < 8.
    el = lane_elements(BlockLoad(2, 16, 8, S, x=32, y=5), 2)
    for l, r in itertools.product(range(16), range(8)):
        assert el[l, r].tolist() == [5 + r, 32 + l]


def test_8b_1r32x1c_reads_one_ushort_per_lane():
    # OpenCL: "8-bit data ... intel_sub_group_2d_block_read_8b_1r32x1c reads one ushort":
    # work-item l gets bytes 2l and 2l+1 of the row.
    r, c = lane_bytes(BlockLoad(1, 32, 1, S))
    for l in range(16):
        assert c[l, :2].tolist() == [2 * l, 2 * l + 1] and r[l, :2].tolist() == [0, 0]


def test_vnni_16b_packs_two_rows_of_the_lanes_column_per_dword():
    # transform_16b_32r16x1c: uint s of work-item l = rows 2s (low half) and 2s+1 of column l.
    el = lane_elements(BlockLoad(2, 16, 32, S, vnni=True), 2)
    assert el.shape[1] == 32
    for l, s in itertools.product(range(16), range(16)):
        assert el[l, 2 * s].tolist() == [2 * s, l]
        assert el[l, 2 * s + 1].tolist() == [2 * s + 1, l]


def test_vnni_8b_packs_four_rows_per_dword():
    el = lane_elements(BlockLoad(1, 16, 8, S, vnni=True), 1)
    assert [el[3, k].tolist() for k in range(8)] == [[r, 3] for r in range(8)]


def test_d32_transpose_gives_lane_l_row_l():
    # transpose_32b_16r8x1c: work-item l receives the 8 dwords of row l.
    el = lane_elements(BlockLoad(4, 8, 16, S, transpose=True), 4)
    for l, k in itertools.product(range(16), range(8)):
        assert el[l, k].tolist() == [l, k]


def test_d32_transpose_of_f16_pairs_keeps_consecutive_columns_together():
    # the seed's transposed B: each dword holds two consecutive f16 of one row.
    el = lane_elements(BlockLoad(4, 8, 32, S, transpose=True), 2)
    # height 32: lane l holds rows l and l + 16; dword k of row n -> f16 (n, 2k), (n, 2k+1)
    assert el[3, :4].tolist() == [[3, 0], [3, 1], [19, 0], [19, 1]]


def test_32b_width_8_puts_two_rows_in_one_register():
    # a 32-byte row fills half a 64-byte register: lanes 8..15 take the next row.
    el = lane_elements(BlockLoad(4, 8, 4, S), 4)
    assert el[:, 0].tolist() == [[0, c] for c in range(8)] + [[1, c] for c in range(8)]


def test_short_blocks_are_padded_to_whole_registers():
    # 16b 1r16x1c is 32 bytes: one 64-byte register, half of it padding.
    ld = BlockLoad(2, 16, 1, S)
    assert ld.register_bytes == 64
    el = lane_elements(ld, 2)
    assert el.shape[1] == 2 and (el[:, 1] == -1).all()


def test_array_blocks_start_on_register_boundaries():
    ld = BlockLoad(2, 8, 2, S, array_length=2)  # each block 2 x 8 x 2 B = 32 B -> 64 B
    assert ld.block_bytes == 64 and ld.register_bytes == 128
    el = lane_elements(ld, 2)
    assert el[0, 2].tolist() == [0, 8]        # block 1's first element: lane 0, 3rd slot


def test_transposed_height_is_padded_to_a_power_of_two():
    ld = BlockLoad(4, 2, 12, S, transpose=True)  # rows padded 12 -> 16
    el = lane_elements(ld, 4)
    assert el[12, 0].tolist() == [-1, -1] and el[11, 1].tolist() == [11, 1]


def test_seed_unit_order_of_the_a_load():
    # seed 002: "The indices for the first SIMD lane (every 16th offset)": 16 -> (1, 0) ... 112 -> (7, 0)
    units = unit_elements(BlockLoad(2, 16, 32, S, array_length=2), 2)
    assert [units[o].tolist() for o in range(0, 128, 16)] == [[r, 0] for r in range(8)]


def _valid_loads():
    es = st.sampled_from([1, 2, 4, 8])
    return st.builds(lambda e, wexp, h, a, mode, x, y: BlockLoad(
        e, 1 << wexp, h, S, x * 4, y, a, mode == "vnni", mode == "transpose"),
        es, st.integers(0, 6), st.integers(1, 32), st.sampled_from([1, 2, 4]),
        st.sampled_from(["plain", "vnni", "transpose"]), st.integers(0, 8), st.integers(0, 8))


@settings(max_examples=200, deadline=None)
@given(_valid_loads())
def test_every_block_byte_lands_exactly_once(ld):
    if violations(ld):
        return
    rows, cols = lane_bytes(ld)
    got = sorted(zip(rows[rows >= 0].tolist(), cols[rows >= 0].tolist()))
    e = ld.elem_bytes
    want = sorted((ld.y + r, (ld.x + c) * e + j) for r in range(ld.height)
                  for c in range(ld.width * ld.array_length) for j in range(e))
    assert got == want
    assert ld.register_bytes <= 2048 and ld.register_bytes % 64 == 0


def test_round_trip_and_unknown_keys():
    ld = BlockLoad(2, 16, 32, Surface(64, 256, 64, base=128), x=16, y=8, array_length=2,
                   vnni=True)
    assert BlockLoad.from_dict(ld.to_dict()) == ld
    with pytest.raises(LayoutError, match="unknown key 'pitch_bytes' in surface"):
        Surface.from_dict({"width": 64, "height": 8, "pitch_bytes": 64})
    with pytest.raises(LayoutError, match="missing the key 'height'"):
        BlockLoad.from_dict({"elem_bytes": 2, "width": 16, "surface": S.to_dict()})
