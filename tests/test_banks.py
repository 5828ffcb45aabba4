"""Bank-conflict analysis (verilayout.banks) against the seed, brute force and hand derivations.

Sources of truth:
* seed ``004_d7c7c1cef06bdad0.txt`` ("Shared Layouts"): a 16x32 tensor of 32-bit
  elements, column 0 read without swizzling: all in bank 0, 16 serial reads; with
  element (i, j) stored at column ``i xor j`` of row i: all in distinct banks;
* brute-force enumeration (``tests/reference/banks.py``): every access's bytes,
  words and banks, counted per phase;
* values measured with the Triton 3.9 wheel on this machine, listed in
  ``tests/oracles/README.md`` ("bank_conflicts" table);
* the issue's phase rule (64-bit per half-warp, 128-bit per quarter-warp).
"""
from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from tests.reference.banks import auto_count, count, element_offsets, phase_lanes_for
from tests.reference.strategies import _mixed, _units, random_reg, random_smem  # noqa: F401

from verilayout.banks import check_banks  # noqa: E402
from verilayout.frontends.cute_text import parse_cute
from verilayout.errors import LayoutError  # noqa: E402
from verilayout.hw.nvidia.banks import BankModel, lanes_per_phase, padded_address_map, SharedAddressMap
from verilayout.frontends.names import parse_instruction
from verilayout.core.linear_layout import LinearLayout, identity_standard_nd
from verilayout.prove.banks import triton_bank_conflicts  # noqa: E402

SHAPE = {"dim0": 16, "dim1": 32}


def col_read(second_column: int = 0) -> LinearLayout:
    """Lanes 0-15 read rows 0-15 of column 0; lanes 16-31 read column ``second_column``."""
    return LinearLayout({"register": [], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, second_column]],
                         "warp": []}, SHAPE, require_surjective=False)


def seed_xor_swizzle() -> LinearLayout:
    """Seed 004: element (i, j) lives in row i at column i xor j (32 four-byte words per row)."""
    bases = [[0, 1 << b] for b in range(5)] + [[1 << b, 1 << b] for b in range(4)]
    return LinearLayout({"offset": bases}, SHAPE, require_surjective=False)


def row_major() -> LinearLayout:
    return identity_standard_nd("offset", [16, 32], [1, 0])


def check_witness(rep, reg: LinearLayout, offset_of, bits: int, num_banks: int = 32):
    """Every access of the witness recomputed from the layouts: same bank, distinct words, one phase."""
    w = rep.witness
    assert w is not None and len(w.accesses) >= 2
    words = set()
    for a in w.accesses:
        coords = reg.apply({d: {"register": a.register, "lane": a.lane, "warp": a.warp,
                                "block": a.block}[d] for d in reg.in_dim_names})
        assert coords == a.element
        off = offset_of(coords)
        assert off == a.offset
        assert off * bits // 8 <= a.byte_address < (off + 1) * bits // 8
        assert (a.byte_address // 4) % num_banks == w.bank
        words.add(a.byte_address // 4)
    assert len(words) == len(w.accesses)
    return w


def linear_offset(smem: LinearLayout):
    inv = smem.invert()
    return lambda coords: inv.apply(coords)["offset"]


# ----- the seed's example (acceptance) ----------------------------------------------------------

def test_seed_column_read_without_swizzle_takes_16_wavefronts():
    rep = check_banks(col_read(), row_major(), elem_bits=32, witness_size=32)
    assert rep.wavefronts == 16 == count(col_read(), row_major(), 32)
    assert rep.ideal_wavefronts == 1 and rep.conflict_free is False
    assert rep.verdict.status == "counterexample"
    w = check_witness(rep, col_read(), linear_offset(row_major()), 32)
    assert w.bank == 0 and len(w.accesses) == 16


def test_seed_xor_swizzle_makes_the_column_read_conflict_free():
    rep = check_banks(col_read(), seed_xor_swizzle(), elem_bits=32)
    assert rep.conflict_free is True and rep.verdict.proved and rep.wavefronts == 1
    assert count(col_read(), seed_xor_swizzle(), 32) == 1
    assert rep.witness is None


def test_xor_swizzle_with_two_columns_per_warp_is_two_way():
    # a 32-lane warp reading columns 0 and 1: i xor 0 and i xor 1 cover the same 16 banks
    reg = col_read(second_column=1)
    rep = check_banks(reg, seed_xor_swizzle(), elem_bits=32)
    assert rep.wavefronts == count(reg, seed_xor_swizzle(), 32) == 2
    check_witness(rep, reg, linear_offset(seed_xor_swizzle()), 32)


# ----- the model --------------------------------------------------------------------------------

def test_phase_rule_half_warp_for_64_bit_quarter_warp_for_128_bit():
    assert [lanes_per_phase(b, 32) for b in (8, 16, 32, 64, 128)] == [32, 32, 32, 16, 8]
    assert lanes_per_phase(32, 64, BankModel(num_banks=64)) == 64
    assert lanes_per_phase(128, 64, BankModel(num_banks=64)) == 16


def test_bank_is_word_mod_banks():
    m = BankModel()
    assert [m.bank(a) for a in (0, 3, 4, 127, 128, 132)] == [0, 0, 1, 31, 0, 1]


@pytest.mark.parametrize("text, name, bits", [
    ("ld.shared.v4.b32", "ld.shared.v4.b32", 128), ("ld.shared.v2.f32", "ld.shared.v2.b32", 64),
    ("st.shared.b16", "st.shared.b16", 16), ("ld.shared.u8", "ld.shared.b8", 8),
    ("ldmatrix.sync.aligned.m8n8.x4.shared.b16", "ldmatrix.x4", 128),
    ("stmatrix.x2.trans", "stmatrix.x2.trans", 128),
])
def test_instruction_names_parse(text, name, bits):
    i = parse_instruction(text)
    assert i.name == name and i.bits == bits


@pytest.mark.parametrize("text", ["ld.global.b32", "ld.shared.v8.b32", "ld.shared.v4.b64", "ldmatrix.x3",
                                  "ldmatrix.x4.foo", "ld.shared", "mma.sync", ""])
def test_bad_instruction_is_one_line_layout_error(text):
    with pytest.raises(LayoutError) as e:
        parse_instruction(text)
    assert "\n" not in str(e.value)


# ----- random linear pairs against brute force ---------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**9), bits=st.sampled_from([8, 16, 32, 64]),
       shape=st.sampled_from([[8, 32], [16, 16], [32, 32], [16, 64], [64, 8]]))
def test_auto_wavefronts_equal_brute_force_and_witness_checks(seed, bits, shape):
    rng = random.Random(seed)
    reg = random_reg(rng, shape, zero_reg=rng.random() < 0.3, zero_lane=rng.random() < 0.2)
    smem = random_smem(rng, shape)
    rep = check_banks(reg, smem, elem_bits=bits, witness_size=32)
    elems, waves = auto_count(reg, smem, bits)
    assert rep.vector_elems == elems
    assert rep.wavefronts == waves
    assert rep.conflict_free == (waves == rep.ideal_wavefronts)
    if not rep.conflict_free:
        w = check_witness(rep, reg, linear_offset(smem), bits)
        assert len(w.accesses) == rep.conflict_ways


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**9), bits=st.sampled_from([8, 16, 32]))
def test_narrower_instruction_wavefronts_equal_brute_force(seed, bits):
    rng = random.Random(seed)
    shape = [32, 32]
    reg = random_reg(rng, shape, mix=0.0)
    smem = random_smem(rng, shape, mix=0.2)
    rep = check_banks(reg, smem, elem_bits=bits, instruction=f"ld.shared.b{bits}")
    assert rep.vector_elems == 1
    assert rep.wavefronts == count(reg, smem, bits, phase_lanes=32)


# ----- ldmatrix / stmatrix ---------------------------------------------------------------------------

def ldmatrix_a_fragment(rows: int, cols: int, bits: int) -> LinearLayout:
    """PTX ldmatrix (non-trans) fragment: thread t holds word t%4 of row t//4 of each 8x8 b16 matrix;
    x4 matrices at (+0, +0), (+8 rows), (+16 bytes), (+8 rows, +16 bytes); more registers tile the rest."""
    w = 32 // bits
    r16 = 128 // bits
    reg = [[0, 1 << b] for b in range((w).bit_length() - 1)] + [[8, 0], [0, r16]]
    reg += [[1 << b, 0] for b in range(4, rows.bit_length() - 1)]
    reg += [[0, r16 << b] for b in range(1, (cols // r16).bit_length() - 1)]
    lane = [[0, w], [0, 2 * w], [1, 0], [2, 0], [4, 0]]
    return LinearLayout({"register": reg, "lane": lane, "warp": []}, {"dim0": rows, "dim1": cols},
                        require_surjective=False)


def ldmatrix_trans_fragment(rows: int, cols: int) -> LinearLayout:
    """PTX ldmatrix.trans (16-bit): thread t holds column t//4 of rows 2(t%4), 2(t%4)+1 of the matrix
    as stored (rows of 16 contiguous bytes); dim1 is the contiguous direction."""
    reg = [[1, 0], [8, 0], [0, 8]]
    reg += [[1 << b, 0] for b in range(4, rows.bit_length() - 1)]
    reg += [[0, 8 << b] for b in range(1, (cols // 8).bit_length() - 1)]
    lane = [[2, 0], [4, 0], [0, 1], [0, 2], [0, 4]]
    return LinearLayout({"register": reg, "lane": lane, "warp": []}, {"dim0": rows, "dim1": cols},
                        require_surjective=False)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**9), bits=st.sampled_from([8, 16, 32]), n=st.sampled_from([1, 2, 4]),
       store=st.booleans())
def test_ldmatrix_wavefronts_equal_brute_force_per_matrix(seed, bits, n, store):
    rng = random.Random(seed)
    rows, cols = 32, 256 // bits * 2
    reg = ldmatrix_a_fragment(rows, cols, bits)
    keep = (128 // bits).bit_length() - 1          # a 16-byte row stays contiguous
    contig = [[0, 1 << b] for b in range(keep)]
    rest = [u for u in _units([rows, cols]) if u not in contig]
    rng.shuffle(rest)
    smem = LinearLayout({"offset": contig + _mixed(rng, rest, 0.3)}, {"dim0": rows, "dim1": cols},
                        require_surjective=False)
    op = "stmatrix" if store else "ldmatrix"
    rep = check_banks(reg, smem, elem_bits=bits, instruction=f"{op}.x{n}")
    word = list(range((32 // bits).bit_length() - 1))
    sel = [len(word) + i for i in range(n.bit_length() - 1)]
    assert rep.ideal_wavefronts == n
    assert rep.wavefronts == count(reg, smem, bits, vector_regs=word, matrix_regs=sel)
    if not rep.conflict_free:
        check_witness(rep, reg, linear_offset(smem), bits)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**9), n=st.sampled_from([1, 2, 4]))
def test_ldmatrix_trans_wavefronts_equal_brute_force(seed, n):
    rng = random.Random(seed)
    rows, cols = 32, 32
    units = _units([rows, cols])
    contig = [[0, 1], [0, 2], [0, 4]]
    rest = [u for u in units if u not in contig]
    rng.shuffle(rest)
    smem = LinearLayout({"offset": contig + _mixed(rng, rest, 0.3)}, {"dim0": rows, "dim1": cols},
                        require_surjective=False)
    reg = ldmatrix_trans_fragment(rows, cols)
    rep = check_banks(reg, smem, elem_bits=16, instruction=f"ldmatrix.x{n}.trans")
    sel = [1 + i for i in range(n.bit_length() - 1)]
    assert rep.wavefronts == count(reg, smem, 16, vector_regs=[0], matrix_regs=sel)


def test_ldmatrix_on_rows_that_are_not_16_bytes_is_a_layout_error():
    reg = ldmatrix_a_fragment(32, 32, 16)
    smem = identity_standard_nd("offset", [32, 32], [0, 1])  # column-major: rows are not contiguous
    with pytest.raises(LayoutError, match="ldmatrix.x4"):
        check_banks(reg, smem, elem_bits=16, instruction="ldmatrix.x4")


def test_ldmatrix_trans_needs_16_bit_elements():
    with pytest.raises(LayoutError, match="16-bit"):
        check_banks(ldmatrix_trans_fragment(32, 32), identity_standard_nd("offset", [32, 32], [1, 0]),
                elem_bits=32, instruction="ldmatrix.x4.trans")


# ----- z3: shared memory that is not GF(2)-linear ---------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**9), bits=st.sampled_from([16, 32, 64]),
       interval=st.sampled_from([8, 16, 32, 64]), pad=st.sampled_from([1, 2, 4, 8]))
def test_padded_layout_wavefronts_equal_brute_force(seed, bits, interval, pad):
    rng = random.Random(seed)
    shape = [16, 32]
    reg = random_reg(rng, shape, mix=0.0)
    lin = random_smem(rng, shape, mix=0.0)
    amap = padded_address_map(lin, [(interval, pad)])
    rep = check_banks(reg, amap, elem_bits=bits)
    assert rep.method == "z3" and rep.triton_conflicts is None
    elems, waves = auto_count(reg, (amap.shape, amap.offset), bits)
    assert rep.vector_elems == elems
    assert rep.wavefronts == waves
    assert rep.conflict_free == (waves == rep.ideal_wavefronts)
    if not rep.conflict_free:
        check_witness(rep, reg, amap.offset, bits)


@pytest.mark.parametrize("stride, ways", [(32, 16), (33, 1), (34, 1), (36, 2), (40, 4), (48, 8), (64, 16)])
def test_cute_row_stride_column_read(stride, ways):
    # 16 rows of 32-bit elements, row stride `stride` words, lanes 0-15 read column 0: row i is in
    # bank stride*i mod 32, so 32/gcd(stride, 32) distinct banks share the 16 rows
    cl = parse_cute(f"(16,32):({stride},1)")
    rep = check_banks(col_read(), cl, elem_bits=32)
    assert rep.wavefronts == ways == count(col_read(), (SHAPE, lambda c: stride * c["dim0"] + c["dim1"]), 32)
    assert rep.method == ("gf2" if stride == 32 else "z3")


def test_cute_linear_layout_takes_the_gf2_path():
    rep = check_banks(col_read(), parse_cute("(16,32):(32,1)"), elem_bits=32)
    assert rep.method == "gf2" and rep.triton_conflicts == 15


def test_explicit_address_function():
    import z3
    amap = SharedAddressMap(SHAPE, lambda c: 33 * c["dim0"] + c["dim1"],
                            lambda c: z3.ZeroExt(10 - c["dim0"].size(), c["dim0"]) * 33
                            + z3.ZeroExt(10 - c["dim1"].size(), c["dim1"]), width=10, name="stride 33")
    rep = check_banks(col_read(), amap, elem_bits=32)
    assert rep.conflict_free and rep.verdict.method == "z3"


# ----- Triton's figure --------------------------------------------------------------------------------

def test_triton_figure_of_the_seed_example_is_15():
    # Triton counts excess accesses per wavefront: 16 wavefronts -> 15
    assert triton_bank_conflicts(col_read(1), row_major(), 32) == 15


@pytest.mark.parametrize("reg, smem, shape, bits, expected", [
    ("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>",
     "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>", [32], 32, 0),
    ("#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 4], instrShape = [16, 8]}>",
     "#ttg.nvmma_shared<{swizzlingByteWidth = 0, transposed = false, elementBitWidth = 16}>", [4, 64], 16, 3),
    ("#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 32, 16]}>",
     "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>", [128, 64], 32, 1),
    ("#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 32, 16]}>",
     "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>", [128, 128], 16, 0),
    ("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>",
     "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>", [64, 64], 16, 1),
    ("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>",
     "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>", [64, 64], 16, 3),
])
def test_triton_figure_matches_values_measured_with_the_wheel(reg, smem, shape, bits, expected):
    # expected: tests/oracles/README.md, "bank_conflicts" table (Triton 3.9.0 on this machine)
    from verilayout import parse
    r, s = parse(reg, shape=shape), parse(smem, shape=shape)
    assert triton_bank_conflicts(r, s, bits) == expected
    assert check_banks(r, s, elem_bits=bits).triton_conflicts == expected


def test_triton_figure_undercounts_mixed_subword_lanes():
    # 16-bit elements, vec=1 swizzle with 8 phases, lanes down column 0 (rows 0..31):
    # lane j reads offset 64 j + (j % 8): word 32 j + (j % 8) // 2 -> bank (j % 8) // 2, 8 lanes per bank.
    from verilayout.synth.swizzle import swizzled_shared_layout
    reg = LinearLayout({"register": [[0, 1 << b] for b in range(6)], "lane": [[1 << b, 0] for b in range(5)],
                        "warp": []}, {"dim0": 32, "dim1": 64}, require_surjective=False)
    smem = swizzled_shared_layout([32, 64], 1, 1, 8, [1, 0])
    rep = check_banks(reg, smem, elem_bits=16, instruction="ld.shared.b16")
    assert rep.wavefronts == 8 == count(reg, smem, 16, phase_lanes=32)
    # the wheel answers 3 for this pair (measured: tests/oracles/test_banks_oracle.py pins it too)
    assert rep.triton_conflicts == 3


def test_triton_figure_is_none_where_triton_aborts():
    # 8 x 8 bytes (64 bytes < one 128-byte row) with 8-element vectors: Triton's segment has size 0
    reg = LinearLayout({"register": [[0, 1], [0, 2], [0, 4]], "lane": [[1, 0], [2, 0], [4, 0], [0, 0], [0, 0]],
                        "warp": []}, {"dim0": 8, "dim1": 8}, require_surjective=False)
    smem = identity_standard_nd("offset", [8, 8], [1, 0])
    assert triton_bank_conflicts(reg, smem, 8) is None
    assert check_banks(reg, smem, elem_bits=8).conflict_free


# ----- bad input ------------------------------------------------------------------------------------

def test_bad_inputs_are_one_line_layout_errors():
    cases = [
        lambda: check_banks(col_read(), row_major(), elem_bits=12),
        lambda: check_banks(col_read(), row_major(), elem_bits=32, instruction="ld.shared.v4.b32"),
        lambda: check_banks(col_read(), identity_standard_nd("offset", [16, 32, 2], [2, 1, 0]), elem_bits=32),
        lambda: check_banks(col_read(), row_major(), elem_bits=32, num_banks=48),
        lambda: check_banks(row_major(), row_major(), elem_bits=32),
        lambda: check_banks(col_read(), "not a layout", elem_bits=32),
    ]
    for make in cases:
        with pytest.raises(LayoutError) as e:
            make()
        assert "\n" not in str(e.value)


def test_report_json_carries_every_field():
    rep = check_banks(col_read(), row_major(), elem_bits=32).to_dict()
    for key in ("wavefronts", "ideal_wavefronts", "triton_conflicts", "conflict_free", "witness", "verdict",
                "instruction"):
        assert key in rep
    assert rep["witness"]["accesses"][0]["bank"] == rep["witness"]["bank"]


def test_element_offsets_helper_agrees_with_row_major():
    # the brute-force table itself: lane t of col_read reads row t, offset 32 t
    offs = element_offsets(col_read(), row_major())
    assert offs[:16].tolist() == [32 * t for t in range(16)]
    assert phase_lanes_for(128) == 8


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**9), bits=st.sampled_from([16, 32, 64]))
def test_64_banks_and_64_lanes_match_brute_force(seed, bits):
    # AMD option: 64 banks of 4 bytes, 64-lane waves; phases hold 64 * 32 bits
    rng = random.Random(seed)
    shape = [32, 64]
    units = _units(shape)
    rng.shuffle(units)
    lane, reg = units[:6], units[6:]
    layout = LinearLayout({"register": reg, "lane": lane, "warp": []}, {"dim0": 32, "dim1": 64},
                          require_surjective=False)
    smem = random_smem(rng, shape)
    rep = check_banks(layout, smem, elem_bits=bits, num_banks=64)
    elems, waves = auto_count(layout, smem, bits, num_banks=64)
    assert (rep.vector_elems, rep.wavefronts) == (elems, waves)
    if not rep.conflict_free:
        check_witness(rep, layout, linear_offset(smem), bits, num_banks=64)
