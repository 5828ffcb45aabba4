"""tcgen05 (sm_100) shared-memory descriptors, complete (issue 14): the 128B_base32B swizzle (mode 1),
the absolute leading-dimension mode (bit 52), fp4/fp6 operands, the PTX transpose rules; and
Triton #8027 (issue 18) rebuilt on real sm_100 PTX and caught by the audit.

Expected values come from outside the model: every address below is a brute force written here
from the public definitions it cites (CuTe's ``Swizzle<B,M,S>(x) = x ^ ((x & ((2**B - 1) << (M + S)))
>> S)`` on byte addresses, written out per case; CUTLASS's ``Layout_MN_SW128_32B_Atom_Bits`` =
``Sw<2,5,2> o (1024,4):(1,1024)`` bits; the PTX ISA tcgen05 sections named at each test), and the
PTX lines of the fixture are found by their text. CUTLASS's own descriptors are compared in
``tests/oracles/test_cutlass_umma_desc.py``.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from verilayout.audit import audit_file, audit_ptx_text
from verilayout.cli.main import main
from verilayout.errors import LayoutError
from verilayout.hw.nvidia.descriptor import contract_findings, decode, encode, hardware_address, operand_k
from verilayout.wgmma import check_descriptor

ROOT = Path(__file__).resolve().parent.parent


# ----- mode 1: 128-byte swizzle with 32-byte atoms ----------------------------------------------

def _cute_sw252(byte: int) -> int:
    """CuTe Swizzle<2,5,2> on a byte address: bits 7-8 XOR into bits 5-6."""
    return byte ^ (((byte >> 7) & 3) << 5)


def _tf32_mn_mode1(mn: int, k: int) -> int:
    # Layout_MN_SW128_32B_Atom<tf32>: 32 tf32 along MN (128 bytes) x 4 rows of K; tiled
    # column-major to 64 x 8: MN atoms 512 bytes apart, K atoms 1024 bytes apart
    o = (mn % 32) * 4 + 128 * (k % 4) + 512 * (mn // 32) + 1024 * (k // 4)
    return _cute_sw252(o)


MODE1_TF32 = "Sw<2,5,2> o smem_ptr[32b](unset) o ((_32,_2),(_4,_2)):((_1,_128),(_32,_256))"


def test_mode1_addresses_equal_the_cute_swizzle_brute_force():
    d = encode(lbo=512, sbo=1024, swizzle="128B_base32B", arch="sm_100")
    assert d.layout_type == 1 and d.value >> 61 == 1          # PTX ISA Table 40: bits 61-63 = 1
    for mn in range(64):
        for k in range(8):
            assert hardware_address(d, major="MN", dtype="tf32", mn=mn, k=k, mn_extent=64) == \
                _tf32_mn_mode1(mn, k), (mn, k)


def test_mode1_tf32_transposed_operand_is_proved_and_a_swap_refuted():
    good = encode(lbo=512, sbo=1024, swizzle="128B_base32B", arch="sm_100")
    v = check_descriptor(good, MODE1_TF32, dtype="tf32", major="MN")
    assert v.proved, v.reason
    bad = encode(lbo=1024, sbo=512, swizzle="128B_base32B", arch="sm_100")
    w = check_descriptor(bad, MODE1_TF32, dtype="tf32", major="MN")
    assert w.status == "counterexample"
    mn, k = w.counterexample["mn"], w.counterexample["k"]
    assert w.counterexample["layout_address"] == _tf32_mn_mode1(mn, k)
    assert w.counterexample["descriptor_address"] != w.counterexample["layout_address"]


def test_mode1_at_a_512_aligned_base_reads_absolute_address_bits():
    # CuTe's smem_ptr swizzle acts on the absolute byte address: at base 0x200 the layout's rows
    # start the Swizzle<2,5,2> pattern in phase (bits 7-8 of 0x200 are 0), so start 0x200 proves
    d = encode(start_address=0x200, lbo=512, sbo=1024, swizzle="128B_base32B", arch="sm_100")
    assert check_descriptor(d, MODE1_TF32, dtype="tf32", major="MN", base_address=0x200).proved


@pytest.mark.parametrize("dtype, major, sw, rule", [
    # PTX ISA 9.7.16.10.1 / Table 52: a transposed 32-bit operand only with 128B_base32B ...
    ("tf32", "MN", "128B", "transpose-swizzle"),
    # ... and a transposed 8/16-bit operand never with it
    ("f16", "MN", "128B_base32B", "transpose-swizzle"),
    ("e4m3", "MN", "128B_base32B", "transpose-swizzle"),
    # Table 49: .kind::mxf4 (packed e2m1) is never transposed
    ("e2m1", "MN", "128B", "transpose-dtype"),
])
def test_ptx_transpose_rules(dtype, major, sw, rule):
    d = encode(lbo=1024, sbo=1024, swizzle=sw, arch="sm_100")
    assert rule in [f.rule for f in contract_findings(d, major=major, dtype=dtype, mn_extent=64)]


def test_k_major_operands_take_every_mode_without_a_transpose_finding():
    # Table 52: K-major ("Row A / Column B") operands of 4..32 bits take all swizzling modes
    for sw in ("none", "32B", "64B", "128B", "128B_base32B"):
        for dtype in ("e2m1", "e2m1_padded", "e3m2", "e4m3", "f16", "tf32"):
            d = encode(lbo=16, sbo=1024, swizzle=sw, arch="sm_100")
            rules = [f.rule for f in contract_findings(d, major="K", dtype=dtype, mn_extent=64)]
            assert not [r for r in rules if r.startswith("transpose")], (sw, dtype, rules)


# ----- the absolute leading-dimension mode (bit 52) ------------------------------------------

# CUTLASS's SM103 MXF4 "ULTRA" mainloop: K-major 128B e2m1, three 128-byte-wide K buffers (16 KB
# each for 128 rows), MMAs of K = 96 e2m1 = 48 bytes; the block at byte 96 of buffer 0 runs 16
# bytes into buffer 1, whose start the descriptor's LBO field holds (lbo_mode = 1)
THREE_BUFFERS = "Sw<3,4,3> o smem_ptr[4b](unset) o ((_8,_16),(_256,_3)):((_256,_2048),(_1,_32768))"


def _ultra_bit(mn: int, k: int, start: int, nxt: int) -> int:
    """The bit the 48-byte K-block at byte ``start`` of buffer 0 reads, buffer 1 at ``nxt``
    (PTX ISA 9.7.16.3.1.2: the second chunk at the absolute address)."""
    row = 128 * (mn % 8) + 1024 * (mn // 8)
    b = start + k // 2
    a = row + b if b < 128 else nxt + row + (b - 128)
    a ^= ((a >> 7) & 7) << 4                       # Swizzle<3,4,3> on the absolute byte address
    return a * 8 + 4 * (k % 2)


def test_absolute_lbo_addresses_equal_the_split_brute_force():
    d = encode(start_address=96, lbo=0x4000, sbo=1024, swizzle="128B", arch="sm_100", lbo_mode=1)
    assert d.value >> 52 & 1 == 1                  # PTX ISA Table 40: bit 52
    for mn in range(0, 128, 3):
        for k in range(96):
            assert hardware_address(d, major="K", dtype="e2m1", mn=mn, k=k, mn_extent=128,
                                    unit="bit") == _ultra_bit(mn, k, 96, 0x4000), (mn, k)


@pytest.mark.parametrize("k_block, start", [(0, 0), (1, 48), (2, 96)])
def test_absolute_lbo_blocks_of_the_three_buffer_stage_are_proved(k_block, start):
    d = encode(start_address=start, lbo=0x4000, sbo=1024, swizzle="128B", arch="sm_100", lbo_mode=1)
    v = check_descriptor(d, THREE_BUFFERS, dtype="e2m1", major="K", k_block=k_block)
    assert v.proved, v.reason
    assert "inferred-layout" in v.reason            # the split point is an inference, said so


def test_absolute_lbo_wrong_next_buffer_and_relative_mode_are_refuted():
    wrong = encode(start_address=96, lbo=0x8000, sbo=1024, swizzle="128B", arch="sm_100", lbo_mode=1)
    v = check_descriptor(wrong, THREE_BUFFERS, dtype="e2m1", major="K", k_block=2)
    assert v.status == "counterexample" and v.counterexample["k"] >= 64   # only the 2nd chunk
    rel = encode(start_address=96, lbo=0x4000, sbo=1024, swizzle="128B", arch="sm_100")
    from verilayout.prove.wgmma import operand_block, check_block
    from verilayout.wgmma import intended_tile
    tile = intended_tile(THREE_BUFFERS, dtype="e2m1")
    w = check_block(rel, tile, major="K", block=operand_block(tile, k_block=2, k=96))
    assert w.status == "counterexample"             # relative mode runs past the 128-byte row


@pytest.mark.parametrize("kwargs, what", [
    ({"swizzle": "64B"}, "swizzle 64B"),
    ({"base_offset": 1}, "base offset 1"),
])
def test_absolute_lbo_restrictions(kwargs, what):
    # PTX ISA 9.7.16.3.1.2.1: 128B swizzle only, K-major only, base offset 0
    args = {"start_address": 0, "lbo": 0x4000, "sbo": 1024, "swizzle": "128B", "arch": "sm_100",
            "lbo_mode": 1, **kwargs}
    f = [x for x in contract_findings(encode(**args), major="K", dtype="e2m1", mn_extent=64)
         if x.rule == "lbo-absolute-mode"]
    assert f and what in f[0].message
    mn = [x for x in contract_findings(encode(**{**args, **{"swizzle": "128B", "base_offset": 0}}),
                                       major="MN", dtype="e4m3", mn_extent=64)
          if x.rule == "lbo-absolute-mode"]
    assert mn and "MN-major" in mn[0].message


# ----- fp4 / fp6 -----------------------------------------------------------------------------

def test_packed_e2m1_addresses_are_nibbles():
    # .kind::mxf4: two e2m1 a byte, no padding (PTX ISA 9.7.16.10.4.6); K = 64 (256 bits)
    assert operand_k("e2m1") == 64
    d = encode(lbo=16, sbo=1024, swizzle="128B", arch="sm_100")
    for mn in range(16):
        for k in range(64):
            byte = 128 * (mn % 8) + 1024 * (mn // 8) + k // 2
            byte ^= ((byte >> 7) & 7) << 4
            assert hardware_address(d, major="K", dtype="e2m1", mn=mn, k=k, unit="bit",
                                    mn_extent=16) == byte * 8 + 4 * (k % 2)


@pytest.mark.parametrize("dtype", ["e2m1_padded", "e3m2", "e2m3"])
def test_padded_fp4_fp6_are_read_in_16_byte_units_of_16_slots(dtype):
    # .kind::f8f6f4: 16 elements per 16-byte unit (cuda.h 16U4_ALIGN16B / 16U6_ALIGN16B), K = 32;
    # verilayout addresses them as 8-bit slots, as CUTLASS allocates them (uint8_t)
    assert operand_k(dtype) == 32
    d = encode(lbo=16, sbo=512, swizzle="64B", arch="sm_100")
    for mn in range(16):
        for k in range(32):
            byte = 64 * (mn % 8) + 512 * (mn // 8) + k
            byte ^= ((byte >> 7) & 3) << 4
            assert hardware_address(d, major="K", dtype=dtype, mn=mn, k=k, mn_extent=16) == byte
    slots = "Sw<2,4,3> o smem_ptr[8b](unset) o ((_8,_2),(_64,_1)):((_64,_512),(_1,_0))"
    assert check_descriptor(d, slots, dtype=dtype, major="K", mn=16).proved


def test_fp4_on_sm90_is_a_finding_not_a_crash():
    d = encode(lbo=16, sbo=1024, swizzle="128B")
    v = check_descriptor(d, "Sw<3,4,3> o smem_ptr[4b](unset) o ((_8,_8),(_256,_1)):((_256,_2048),(_1,_0))",
               dtype="e2m1", major="K")
    assert v.counterexample["rule"] == "dtype-arch"


def test_cli_verify_sm100_mode1_answers_a_proof(capsys):
    code = main(["wgmma", "verify", "--arch", "sm_100", "--desc",
                 f"{encode(lbo=512, sbo=1024, swizzle='128B_base32B', arch='sm_100').value:#x}",
                 "--dtype", "tf32", "--major", "MN", "--layout", MODE1_TF32, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["status"] == "proved"


# ----- Triton #8027: sm_100 fp8 without swizzle, wrong descriptor ----------------------------

FP8 = ROOT / "tests" / "fixtures" / "ptx" / "matmul_sm100_fp8_n16_unswizzled"


def _audit_fp8(text: str):
    ttgir = FP8.with_suffix(".ttgir").read_text()
    plan = audit_file(str(FP8.with_suffix(".ttgir"))).checks
    return [c for c in audit_ptx_text(text, "k.ptx", ttgir, plan).checks if c.check.startswith("mma-")]


def test_fp8_unswizzled_operand_as_triton_39_lowers_it_is_proved():
    # B is 64 x 16 e4m3, N-major, unswizzled (#ttg.nvmma_shared<{swizzlingByteWidth = 0, ...}>): its
    # descriptors OR in 524288 = 8 << 16 (LBO 8 x 16 = 128 bytes: one 8-row core matrix of 16-byte
    # rows to the next along K) with high word 16384 = bit 46 (the fixed 0b001, no swizzle)
    text = FP8.with_suffix(".ptx").read_text()
    assert "or.b32 \t%r200, %r198, 524288;" in text and "mov.b32 \t%r201, 16384;" in text
    checks = _audit_fp8(text)
    assert not [c for c in checks if c.severity == "error"]
    assert len([c for c in checks if c.check == "mma-descriptor" and c.status == "proved"]) >= 6


def test_triton_8027_fp8_no_swizzle_descriptor_is_caught_with_a_witness():
    # Reconstruction (the PR's diff is not on this machine; its title and description, public:
    # "Fix matrix descriptor for no-swizzle case", with a tightened fp8 precision check): the buggy
    # lowering sized the unswizzled core matrix for 16-bit elements (8 elements = 8 bytes of fp8 a
    # row), so B's leading offset became 8 rows x 8 bytes = 64 bytes (LBO field 4) instead of 128
    # (field 8). Planted on both K-block descriptors of the first MMA pair.
    lines = FP8.with_suffix(".ptx").read_text().split("\n")
    for text, new in (("or.b32 \t%r200, %r198, 524288;", "262144"),
                      ("add.s32 \t%r203, %r198, 524320;", "262176")):
        k = next(i for i, ln in enumerate(lines) if text in ln)
        lines[k] = lines[k].replace(text.split(", ")[-1].rstrip(";"), new)
    mutated = "\n".join(lines)
    bad = [c for c in _audit_fp8(mutated) if c.severity == "error"]
    mmas = [i + 1 for i, ln in enumerate(lines) if "tcgen05.mma.cta_group" in ln][:2]
    assert {(c.line, c.data["operand"], c.data["k_block"]) for c in bad} == \
        {(mmas[0], "B", 0), (mmas[1], "B", 1)}
    for c in bad:
        cex = c.data["counterexample"]
        assert cex["descriptor_address"] != cex["layout_address"]
        # the witness: a K row of the second core matrix (k >= 8) is read 64 bytes early
        assert cex["k"] >= 8 and cex["layout_address"] - cex["descriptor_address"] == 64 * (cex["k"] // 8)


def test_cli_desc_derives_mode1_and_packed_fp4(capsys):
    # the descriptor CUTLASS's make_umma_desc gives these tiles (see the oracle test): mode 1,
    # LBO 512 (next 128-byte MN atom), SBO 1024 (next 4 K rows); and K-major 128B e2m1
    assert main(["wgmma", "desc", "--arch", "sm_100", "--dtype", "tf32", "--major", "MN",
                 "--layout", MODE1_TF32, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["descriptor"]
    assert (d["swizzle"], d["lbo_bytes"], d["sbo_bytes"]) == ("128B_base32B", 512, 1024)
    assert main(["wgmma", "desc", "--arch", "sm_100", "--dtype", "e2m1", "--major", "K", "--k-block", "1",
                 "--layout", THREE_BUFFERS, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["descriptor"]
    assert (d["swizzle"], d["start_address"], d["sbo_bytes"]) == ("128B", 32, 1024)   # K 64 = 32 B


FP4_PADDED = ("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 8, "
              "fp4Padded = true}>")


def _fp4_padded_slot(row: int, k: int) -> int:
    # Triton's fp4Padded, 128B swizzle (the layout Triton's tcgen05 path stores for .kind::f8f6f4
    # e2m1): a row of 128 e2m1 fills 8 units of 16 bytes, 16 values (8 data bytes + 8 pad) a unit,
    # units XORed with the row (mod 8); a value's slot is its unit * 16 + its place in the unit
    unit = 8 * row + ((k // 16) ^ (row % 8))
    return unit * 16 + k % 16


def test_triton_fp4_padded_operand_is_proved_in_slots():
    # the memdesc is 16 x 64 i8 (packed pairs): 16 x 128 e2m1 values, four K-blocks of 32
    d = encode(lbo=16, sbo=1024, swizzle="128B", arch="sm_100")
    for kb in range(4):
        v = check_descriptor(d.with_start(32 * kb), FP4_PADDED, shape=[16, 64], dtype="e2m1_padded", major="K",
                   k_block=kb, mn=16)
        assert v.proved, (kb, v.reason)
        for row in range(16):
            for k in range(0, 32, 5):
                assert hardware_address(d.with_start(32 * kb), major="K", dtype="e2m1_padded", mn=row,
                                        k=k, mn_extent=16) == _fp4_padded_slot(row, 32 * kb + k)
    w = check_descriptor(encode(lbo=16, sbo=512, swizzle="64B", arch="sm_100"), FP4_PADDED, shape=[16, 64],
               dtype="e2m1_padded", major="K", mn=16)
    assert w.status == "counterexample"
    cex = w.counterexample
    assert cex["layout_address"] == _fp4_padded_slot(cex["mn"], cex["k"])


def test_fp4_padded_layout_needs_the_padded_dtype():
    with pytest.raises(LayoutError, match="e2m1_padded"):
        check_descriptor(encode(lbo=16, sbo=1024, swizzle="128B", arch="sm_100"), FP4_PADDED, shape=[16, 64],
               dtype="e4m3", major="K", mn=16)


# ----- real block-scaled fp4 kernels (Triton 3.9, sm_100) --------------------------------------

MXF8F6F4 = ROOT / "tests" / "fixtures" / "ptx" / "dot_scaled_e2m1_e4m3_sm100"
MXF4 = ROOT / "tests" / "fixtures" / "ptx" / "dot_scaled_e2m1_e2m1_sm100"


def _mma_checks(stem: Path, text: str | None = None):
    ttgir = stem.with_suffix(".ttgir").read_text()
    plan = audit_file(str(stem.with_suffix(".ttgir"))).checks
    text = stem.with_suffix(".ptx").read_text() if text is None else text
    return plan, [c for c in audit_ptx_text(text, "k.ptx", ttgir, plan).checks if c.check.startswith("mma-")]


def test_fp4_padded_operand_of_a_real_mxf8f6f4_kernel_is_proved():
    # tl.dot_scaled(e2m1 A, e4m3 B): A is a 128x64 i8 memdesc with fp4Padded = true, read by
    # tcgen05.mma .kind::mxf8f6f4; the plan's A descriptors and the PTX's all prove
    plan, checks = _mma_checks(MXF8F6F4)
    a = [c for c in plan if c.check == "mma-descriptor" and c.data.get("operand") == "A"]
    assert len(a) == 1 and a[0].status == "proved" and a[0].data["dtype"] == "e2m1_padded"
    assert len(a[0].data["descriptors"]) == 8      # 2 MN blocks of 64 rows x (K 128 values = 4 x 32)
    ptx = [c for c in checks if c.check == "mma-descriptor"]
    assert {c.status for c in ptx} == {"proved"} and {c.data["operand"] for c in ptx} == {"A", "B"}
    assert len([c for c in ptx if c.data["operand"] == "A"]) == 4


def test_fp4_sbo_sized_for_packed_rows_is_caught():
    # a planted lowering bug: A's SBO computed from the packed i8 row (64 bytes x 8 rows = 512)
    # instead of the padded 128-byte rows (1024): high word 0x40004040 -> 0x40004020 on K-block 0
    lines = MXF8F6F4.with_suffix(".ptx").read_text().split("\n")
    k = next(i for i, ln in enumerate(lines) if "mov.b64 \t%rd214, {%r105, %r108};" in ln)
    lines[k] = "\tmov.b32 \t%r990, 1073758240;\n\tmov.b64 \t%rd214, {%r105, %r990};"
    text = "\n".join(lines)
    _, checks = _mma_checks(MXF8F6F4, text)
    bad = [c for c in checks if c.severity == "error"]
    first = next(i for i, ln in enumerate(text.split("\n")) if "tcgen05.mma.cta_group" in ln) + 1
    assert [(c.line, c.data["operand"], c.data["k_block"]) for c in bad] == [(first, "A", 0)]
    cex = bad[0].data["counterexample"]
    r, k = cex["mn"], cex["k"]                     # K-block 0: slot k of row r, 128-byte rows

    def sw128(byte):
        return byte ^ (((byte >> 7) & 7) << 4)
    assert r >= 8 and cex["layout_address"] == sw128(128 * (r % 8) + 1024 * (r // 8) + k)
    assert cex["descriptor_address"] == sw128(128 * (r % 8) + 512 * (r // 8) + k)


def test_packed_fp4_of_a_real_mxf4_kernel_is_proved():
    # tl.dot_scaled(e2m1, e2m1): .kind::mxf4, two values a byte (i8 memdescs, no padding); the
    # byte view (two K values per byte) is what the audit proves
    _, checks = _mma_checks(MXF4)
    ptx = [c for c in checks if c.check == "mma-descriptor"]
    assert len(ptx) == 4 and {c.status for c in ptx} == {"proved"}


def test_cli_desc_all_k_blocks_of_packed_fp4(capsys):
    # K-major 128B e2m1, 256 values a row: four K-blocks of 64 values, starts 32 bytes apart
    layout = "Sw<3,4,3> o smem_ptr[4b](unset) o ((_8,_16),(_256,_1)):((_256,_2048),(_1,_0))"
    assert main(["wgmma", "desc", "--arch", "sm_100", "--dtype", "e2m1", "--major", "K",
                 "--k-block", "all", "--layout", layout, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    plans = out if isinstance(out, list) else out.get("plans", out.get("k_blocks"))
    assert [p["descriptor"]["start_address"] for p in plans] == [0, 32, 64, 96]
