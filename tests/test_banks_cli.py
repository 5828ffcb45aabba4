"""`verilayout banks` and `verilayout swizzle`: exit codes, output, bad input.

Expected values: the seed example (004_d7c7c1cef06bdad0.txt: 16 serial reads of a column of a
16x32 row-major 32-bit tensor; none with the i xor j swizzle), Triton's own figure for it (15,
measured with the wheel: tests/oracles/README.md lists the method), and the committed
docs/swizzle_table.md (regenerated here to check it is up to date).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from verilayout.cli.main import main

COL16 = ("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], "
         "order = [0, 1]}>")
COL32 = ("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 1], "
         "order = [0, 1]}>")
ROW_MAJOR = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"
XOR = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 16, order = [1, 0]}>"
T = "tensor<16x32xf32>"


def run(argv, capsys):
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_banks_seed_example_prints_16_wavefronts_and_a_witness(capsys):
    rc, out, err = run(["banks", "-t", T, "--reg", COL16, "--smem", ROW_MAJOR], capsys)
    assert rc == 1 and err == ""
    assert "16 wavefronts per instruction, ideal 1" in out
    assert "Triton's get_shared_bank_conflicts: 15" in out
    assert "witness" in out and "bank 0" in out


def test_banks_seed_xor_swizzle_is_conflict_free(capsys):
    rc, out, _ = run(["banks", "-t", T, "--reg", COL32, "--smem", XOR], capsys)
    assert rc == 0
    assert "conflict-free (proved)" in out


def test_banks_json(capsys):
    rc, out, _ = run(["banks", "-t", T, "--reg", COL16, "--smem", ROW_MAJOR, "--json"], capsys)
    d = json.loads(out)
    assert rc == 1 and d["wavefronts"] == 16 and d["triton_conflicts"] == 15
    assert d["witness"]["accesses"][0]["lane"] != d["witness"]["accesses"][1]["lane"]


def test_banks_padded_and_cute_shared_layouts(capsys):
    rc, out, _ = run(["banks", "-t", T, "--reg", COL32, "--smem",
                      "#ttg.padded_shared<[32:+1] {order = [1, 0], shape = [16, 32]}>"], capsys)
    assert rc == 0 and "proof by z3" in out
    rc, out, _ = run(["banks", "-t", T, "--reg", COL32, "--smem", "(16,32):(36,1)", "--instr", "ld.shared.b32"],
                     capsys)
    assert rc == 1 and "2 wavefronts" in out  # column read: 36 i mod 32 = 4 i, 8 banks for 16 rows
    rc, out, _ = run(["banks", "-t", T, "--reg", COL32, "--smem", "(16,32):(36,1)"], capsys)
    assert rc == 0 and "ld.shared.v4.b32" in out  # auto: 16-byte row pieces, 8 rows in banks 4 i .. 4 i + 3


@pytest.mark.parametrize("argv, msg", [
    (["banks", "-t", T, "--reg", "#ttg.blocked<{sizePerThread = [1, 1]", "--smem", ROW_MAJOR], ""),
    (["banks", "-t", T, "--reg", COL16, "--smem", ROW_MAJOR, "--instr", "ld.shared.v8.b32"], "v2 or .v4"),
    (["banks", "-t", T, "--reg", COL16, "--smem", ROW_MAJOR, "--instr", "ld.shared.v4.b32"], "at most 1"),
    (["banks", "--reg", COL16, "--smem", ROW_MAJOR], "element type"),
    (["swizzle", "synth", "-t", T], "--write, --read"),
    # the refusal names the option that holds the shared layout, not --reg
    (["swizzle", "synth", "-t", T, "--write", COL16, "--read", ROW_MAJOR], "--read: expected a distributed"),
    (["swizzle", "synth", "-t", T, "--write", XOR], "--write: expected a distributed"),
    # a tensor-memory layout placed at a base address: refused as not shared (was a KeyError)
    (["banks", "-t", "tensor<128x64xf32>", "--reg", COL16, "--smem",
      "#ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>", "--base-address", "0x40"],
     "no 'offset' input dim"),
])
def test_bad_input_exits_2_with_one_error_line(argv, msg, capsys):
    rc, out, err = run(argv, capsys)
    assert rc == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and msg in err


def test_help_has_examples(capsys):
    for argv in (["banks", "--help"], ["swizzle", "synth", "--help"], ["swizzle", "table", "--help"]):
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert e.value.code == 0
        assert "examples:" in capsys.readouterr().out


def test_swizzle_synth_proves_optimality(capsys):
    rc, out, _ = run(["swizzle", "synth", "-t", "tensor<64x64xf16>", "--write",
                      "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], "
                      "order = [1, 0]}>", "--read",
                      "#ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], "
                      "order = [0, 1]}>"], capsys)
    assert rc == 0
    # 64x64 f16 over 4 warps: 2048 bytes per warp, 16 wavefronts of 128 bytes each way
    assert out.startswith("optimal swizzle: 32 wavefronts per warp")
    assert "proved optimal" in out and "#ttg.shared_linear<{offset = " in out
    assert "#ttg.swizzled_shared<{vec = " in out and "128B" in out


def test_swizzle_table_matches_committed_doc(capsys):
    rc, out, _ = run(["swizzle", "table"], capsys)
    doc = Path(__file__).resolve().parent.parent / "docs" / "swizzle_table.md"
    assert rc == 0 and out == doc.read_text(encoding="utf-8")


def test_banks_reads_a_memdesc_view_in_its_allocation(capsys):
    # a 128x16 view of a 128x64 f16 allocation with the 128-byte swizzle: row r starts at byte
    # 128 r and its 16-byte chunk c sits at chunk c ^ (r % 8). blocked [1, 8] x [16, 2]: in the first
    # 8-lane phase of ld.shared.v4.b32, lane bit 0 picks chunk c and lane bits 1-2 rows 0..3, so
    # (r, c) = (0, 1) and (1, 0) both hit chunk 1 of different rows: 2-way (8 wavefronts for 4 ideal)
    from verilayout.cli.main import main
    reg = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [16, 2], warpsPerCTA = [4, 1], order = [1, 0]}>"
    view = ("!ttg.memdesc<128x16xf16, #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, "
            "elementBitWidth = 16}>, #ttg.shared_memory, mutable, 128x64>")
    chunks = {}
    for r in range(4):
        for c in range(2):
            chunks.setdefault(c ^ (r % 8), set()).add(r)
    assert max(len(rows) for rows in chunks.values()) == 2
    assert main(["banks", "--reg", reg, "--smem", view, "-t", "tensor<128x16xf16>", "--json"]) == 1
    import json
    rep = json.loads(capsys.readouterr().out)
    assert (rep["wavefronts"], rep["ideal_wavefronts"]) == (8, 4)


# CuTe's printed forms need no --swizzle-units: Sw<3,3,3> o _0 o L is composition(Swizzle, Layout),
# element units (cute/swizzle_layout.hpp); for f16 it is the 128-byte pattern Sw<3,4,3> on bytes
# (the GMMA atom's smem_ptr[16b] form) and the DSL's S<3,4,3> o 0 o L. A bare Sw<3,3,3> o L
# needs --swizzle-units; read as bytes it is another layout (a 64-byte pattern on 16-byte units of 8 B).
_REG8x64 = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [1, 0]}>"


def _banks(smem, capsys, *extra):
    rc, out, err = run(["banks", "--reg", _REG8x64, "--smem", smem, "-t", "tensor<8x64xf16>", "--json", *extra], capsys)
    return rc, (json.loads(out) if out.strip() else None), err


def test_cute_print_forms_need_no_swizzle_units(capsys):
    forms = ["Sw<3,3,3> o _0 o (_8,_64):(_64,_1)", "Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)",
             "S<3,4,3> o 0 o (8,64):(64,1)"]
    reports = [_banks(f, capsys) for f in forms]
    assert all(rc in (0, 1) and rep is not None for rc, rep, _ in reports)
    assert len({json.dumps(rep, sort_keys=True) for _, rep, _ in reports}) == 1


def test_banks_swizzle_units_option(capsys):
    rc, _, err = _banks("Sw<3,3,3> o (_8,_64):(_64,_1)", capsys)
    assert rc == 2 and "--swizzle-units" in err
    _, elements, _ = _banks("Sw<3,3,3> o (_8,_64):(_64,_1)", capsys, "--swizzle-units", "elements")
    _, printed, _ = _banks("Sw<3,3,3> o _0 o (_8,_64):(_64,_1)", capsys)
    assert json.dumps(elements, sort_keys=True) == json.dumps(printed, sort_keys=True)
    _, as_bytes, _ = _banks("Sw<3,3,3> o (_8,_64):(_64,_1)", capsys, "--swizzle-units", "bytes")
    assert json.dumps(as_bytes, sort_keys=True) != json.dumps(elements, sort_keys=True)
    rc, _, err = _banks("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>",
                        capsys, "--swizzle-units", "bytes")
    assert rc == 2 and err.count("\n") == 1
