"""Unit checks of the brute-force bank counter (tests/reference/banks.py) on hand-derived cases."""
from __future__ import annotations

from verilayout.core.linear_layout import LinearLayout, identity_standard_nd

from tests.reference.banks import *  # noqa: F401,F403
from tests.reference.banks import element_offsets, find_vector_registers, count, phase_lanes_for, auto_count  # noqa: F401


def _col16x32():
    return LinearLayout({"register": [], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 0]]},
                        {"dim0": 16, "dim1": 32}, require_surjective=False)


def test_counter_column_of_row_major_32bit_is_16_way():
    # 16 rows of 32 x 4 bytes: every element of column 0 is in bank 0 (seed 004)
    assert count(_col16x32(), identity_standard_nd("offset", [16, 32], [1, 0]), 32) == 16


def test_counter_row_stride_33_is_conflict_free():
    # row stride 33 words: rows go to banks 0, 1, ..., 15
    assert count(_col16x32(), ({"dim0": 16, "dim1": 32}, lambda c: 33 * c["dim0"] + c["dim1"]), 32) == 1


def test_counter_same_word_is_one_wavefront():
    # 32 lanes reading the two halves of 16 words (16-bit elements): 16 distinct words, 16 banks
    lane = LinearLayout({"register": [], "lane": [[1], [2], [4], [8], [16]]}, {"dim0": 32},
                        require_surjective=False)
    assert count(lane, identity_standard_nd("offset", [32], [0]), 16) == 1


def test_counter_128bit_quarter_warps():
    # each lane 16 bytes, lanes consecutive: 4 phases of 128 bytes, no conflict
    reg = LinearLayout({"register": [[1], [2]], "lane": [[4], [8], [16], [32], [64]]}, {"dim0": 128},
                       require_surjective=False)
    assert count(reg, identity_standard_nd("offset", [128], [0]), 32, vector_regs=[0, 1], phase_lanes=8) == 4
