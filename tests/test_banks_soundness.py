"""Soundness of the bank analysis (issue "never a wrong proved").

Expected values are derived in each test from the bank rules (4-byte banks, 32 of them;
a phase moves at most 128 bytes: seed 004_d7c7c1cef06bdad0.txt and
/work/shared/reference for the phase rule), or brute-forced here, never copied from the code.
"""
import numpy as np
import pytest
import z3

from verilayout.banks import check_banks
from verilayout.core.linear_layout import LinearLayout, identity_standard_nd
from verilayout.errors import LayoutError
from verilayout.hw.nvidia.banks import padded_address_map
from verilayout.prove import banks as prove_banks


def _brute_wavefronts(reg, offset_of, elem_bytes, vec, lanes_per_phase):
    """Per instruction: max over phases of max over banks of distinct words (brute force)."""
    worst = 0
    regs = reg.in_dims.get("register", 1)
    for r0 in range(0, regs, vec):
        total = 0
        for p0 in range(0, 32, lanes_per_phase):
            banks = {}
            for lane in range(p0, p0 + lanes_per_phase):
                for r in range(r0, r0 + vec):
                    c = reg.apply({d: {"register": r, "lane": lane}.get(d, 0) for d in reg.in_dim_names})
                    byte = offset_of(c) * elem_bytes
                    for b in range(byte, byte + elem_bytes, 4):
                        banks.setdefault((b // 4) % 32, set()).add(b // 4)
            total += max(len(s) for s in banks.values())
        worst = max(worst, total)
    return worst


# registers of one lane: r0 -> column 0, r1 -> column 1, r2 -> column 3, r3 -> column 2.
ANY_ORDER = LinearLayout({"register": [[0, 1], [0, 3]], "lane": [[0, 4], [0, 8], [0, 16], [1, 0], [2, 0]]},
                         {"dim0": 4, "dim1": 32})
ROW_MAJOR = identity_standard_nd("offset", [4, 32], [1, 0])


def test_user_vector_in_any_register_order_is_legal():
    # the four registers of a lane cover columns {0, 1, 3, 2} = an aligned 16-byte vector;
    # 32 lanes x 16 bytes are 512 contiguous bytes: 4 quarter-warp phases, 1 wavefront each.
    rep = check_banks(ANY_ORDER, ROW_MAJOR, elem_bits=32, instruction="ld.shared.v4.b32")
    assert rep.instruction == "ld.shared.v4.b32"
    assert rep.wavefronts == 4 == _brute_wavefronts(ANY_ORDER, lambda c: 32 * c["dim0"] + c["dim1"], 4, 4, 8)
    assert rep.conflict_free is True
    assert "any order" in rep.choice


def test_user_v2_where_other_registers_permute_the_pair():
    # with register bit 1 set a lane holds columns (3, 2): still the aligned pair {2, 3}.
    # 16 lanes per phase of 8 bytes each, 16 bytes apart: lanes 0 and 8 are 128 bytes apart (2-way)
    rep = check_banks(ANY_ORDER, ROW_MAJOR, elem_bits=32, instruction="ld.shared.v2.b32")
    assert rep.vector_elems == 2
    assert rep.wavefronts == 4 == _brute_wavefronts(ANY_ORDER, lambda c: 32 * c["dim0"] + c["dim1"], 4, 2, 16)


def test_auto_keeps_tritons_rule_and_says_so():
    # Triton's rule wants register bits at offsets 1, 2 in order: offset 3 stops it at 1 element.
    rep = check_banks(ANY_ORDER, ROW_MAJOR, elem_bits=32)
    assert rep.instruction == "ld.shared.b32"
    assert "Triton" in rep.choice and "Triton" in rep.summary()


def test_lane_order_must_agree():
    # lane 0 moves by one element: the lanes of one instruction would need different register orders
    bad = LinearLayout({"register": [[0, 2], [0, 4]], "lane": [[0, 1], [0, 8], [0, 16], [1, 0], [2, 0]]},
                       {"dim0": 4, "dim1": 32})
    with pytest.raises(LayoutError, match="any order"):
        check_banks(bad, ROW_MAJOR, elem_bits=32, instruction="ld.shared.v2.b32")


def test_timeout_reports_unknown_not_a_bound(monkeypatch):
    col = LinearLayout({"register": [], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 0]]}, ["dim0", "dim1"])
    smem = padded_address_map(identity_standard_nd("offset", [16, 32], [1, 0]), [(32, 1)])
    monkeypatch.setattr(prove_banks._Z3Problem, "k_way", lambda self, k, phase_value=None: (z3.unknown, None, [], None))
    rep = check_banks(col, smem, elem_bits=32)
    assert rep.conflict_free is None and rep.verdict.status == "unknown"
    assert rep.wavefronts is None
    text = rep.summary()
    assert "unknown" in text and "upper bound" not in text and "0 wavefronts" not in text
    assert rep.to_dict()["wavefronts"] is None


@pytest.mark.parametrize("stride,expected", [(1, 4), (8, 32)])
def test_128_bit_elements(stride, expected):
    # lane i reads element (i * stride) of a row-major [32, 8] tensor of 16-byte elements.
    # stride 1: 512 contiguous bytes, 4 phases of 8 lanes, 1 wavefront each = 4.
    # stride 8: lanes 128 bytes apart hit banks 0-3 at 8 distinct words per phase: 8 x 4 = 32.
    lane = [[0, stride << i] if stride << i < 8 else [(stride << i) // 8, 0] for i in range(5)]
    reg = LinearLayout({"register": [], "lane": lane}, {"dim0": 32, "dim1": 8}, require_surjective=False)
    smem = identity_standard_nd("offset", [32, 8], [1, 0])
    rep = check_banks(reg, smem, elem_bits=128)
    assert rep.instruction == "ld.shared.v4.b32"
    assert rep.wavefronts == expected == _brute_wavefronts(reg, lambda c: 8 * c["dim0"] + c["dim1"], 16, 1, 8)
    assert rep.conflict_free is (expected == 4)


def test_numpy_integers_and_wrong_types():
    col = LinearLayout({"register": [], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 0]]}, {"dim0": 16, "dim1": 32})
    smem = identity_standard_nd("offset", [16, 32], [1, 0])
    assert check_banks(col, smem, elem_bits=np.int64(32)).wavefronts == check_banks(col, smem, elem_bits=32).wavefronts
    for bad in (32.0, "32", True):
        with pytest.raises(LayoutError):
            check_banks(col, smem, elem_bits=bad)
