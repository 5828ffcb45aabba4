"""CuTe thread-value layouts on the register side of ``verilayout banks``, and staged (rank-3) CuTe
shared layouts in ``banks`` and ``wgmma verify`` (the descriptors of ``wgmma desc`` per stage are
checked against CUTLASS in ``tests/oracles/test_cute_tv_stage_oracle.py``)."""
from __future__ import annotations

import json

import pytest

from verilayout.cli.main import main
from verilayout.errors import LayoutError

# make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, half_t>, 2x2-warp SM80_16x8x16 MMA).get_layoutD_TV(),
# as CuTe prints it (tests/oracles/cutlass/cute_tv_stage_oracle.recorded.txt, case ldsm_x4_n_mma_A_D)
LDSM_A_D = "((_4,_8,_2,_2),((_2,_2,_2),_1)):((_64,_1,_16,_0),((_32,_8,_256),_0))"
STAGED = "Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_8),(_64,_1),(_1,_2)):((_64,_512),(_1,_0),(_0,_4096))"
ROWS_8x8 = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"


def _run(capsys, *argv):
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_tv_register_layout_ldmatrix_unswizzled_rows_conflict(capsys):
    # 32x16 f16 row-major: a row is 32 bytes, so rows 0 and 4 of an 8x8 matrix are 128 bytes apart
    # (same bank); ldmatrix's first phase (lanes 0-7 give rows 0-7 of matrix 0) is 2-way
    rc, out, _ = _run(capsys, "banks", "-t", "tensor<32x16xf16>", "--instr", "ldmatrix.x4", "--json",
                      "--reg", LDSM_A_D, "--smem", "(_32,_16):(_16,_1)")
    rep = json.loads(out)
    assert rc == 1 and rep["wavefronts"] == 8 and rep["ideal_wavefronts"] == 4
    rows = sorted(a["element"]["dim0"] % 8 for a in rep["witness"]["accesses"])
    assert {r % 4 for r in rows} == {rows[0] % 4}          # rows 4 apart: 128 bytes apart


def test_tv_register_layout_ldmatrix_swizzled_is_conflict_free(capsys):
    # Sw<1,3,3> (elements): the 16-byte half of a row flips for rows 4-7, so the 8 rows of a
    # matrix fill all 32 banks once
    rc, out, _ = _run(capsys, "banks", "-t", "tensor<32x16xf16>", "--instr", "ldmatrix.x4", "--json",
                      "--reg", LDSM_A_D, "--smem", "Sw<1,3,3> o _0 o (_32,_16):(_16,_1)")
    assert rc == 0 and json.loads(out)["conflict_free"] is True


def test_tv_register_layout_needs_the_tile(capsys):
    rc, _, err = _run(capsys, "banks", "--bits", "16", "--reg", LDSM_A_D, "--smem", "(_32,_16):(_16,_1)")
    assert rc == 2 and "give its tile with -t/--shape" in err and err.count("\n") == 1


def test_staged_smem_reports_every_stage(capsys):
    rc, out, _ = _run(capsys, "banks", "-t", "tensor<64x64xf16>", "--json", "--reg", ROWS_8x8, "--smem", STAGED)
    reps = json.loads(out)
    assert rc == 0 and [r["stage"] for r in reps] == [0, 1]
    assert [r["base_address"] for r in reps] == [0, 4096 * 2]       # stage stride 4096 f16 elements
    assert all(r["conflict_free"] for r in reps)


def test_staged_smem_one_stage(capsys):
    rc, out, _ = _run(capsys, "banks", "-t", "tensor<64x64xf16>", "--stage", "1", "--reg", ROWS_8x8, "--smem", STAGED)
    assert rc == 0 and out.startswith("stage 1 (") and "stage 0" not in out


@pytest.mark.parametrize("argv,msg", [
    (["--stage", "2"], "stages 0..1"),
    (["--stage", "0", "--smem-plain"], "no stage mode"),
])
def test_stage_errors_are_one_line(capsys, argv, msg):
    smem = "(_64,_64):(_64,_1)" if "--smem-plain" in argv else STAGED
    argv = [a for a in argv if a != "--smem-plain"]
    rc, _, err = _run(capsys, "banks", "-t", "tensor<64x64xf16>", "--reg", ROWS_8x8, "--smem", smem, *argv)
    assert rc == 2 and msg in err and err.count("\n") == 1


def test_stage_offset_that_breaks_the_swizzle_is_refused(capsys):
    # stage stride 4160 elements = 8320 bytes, not a multiple of the 128B pattern's 1024 bytes
    bad = STAGED.replace("_4096", "_4160")
    rc, _, err = _run(capsys, "banks", "-t", "tensor<64x64xf16>", "--reg", ROWS_8x8, "--smem", bad)
    assert rc == 2 and "not a multiple of the swizzle's repeat" in err


K_SW128_STAGED = "Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_16),(_64,_1),(_1,_4)):((_64,_512),(_1,_0),(_0,_8192))"


def test_verify_moves_the_descriptor_by_each_stage(capsys):
    # K-major SW128 f16, 128x64 per stage: LBO 16 B (field 1), SBO 1024 B (field 64), layout type 1
    # (PTX ISA 9.7.15.5.1.2, matrix descriptor format); stage s starts 8192 * s elements = 0x4000 * s bytes
    desc = hex((1 << 62) | (64 << 32) | (1 << 16))
    rc, out, _ = _run(capsys, "wgmma", "verify", "--desc", desc, "--dtype", "f16", "--major", "K", "--json",
                      "--layout", K_SW128_STAGED)
    got = json.loads(out)
    assert rc == 0 and [g["stage"] for g in got] == [0, 1, 2, 3]
    assert [g["descriptor"]["start_address"] for g in got] == [0, 0x4000, 0x8000, 0xC000]
    assert all(g["proved"] for g in got)


def test_verify_one_stage_with_another_stages_descriptor_is_a_counterexample(capsys):
    desc = hex((1 << 62) | (64 << 32) | (1 << 16))          # stage 0's start address
    rc, out, _ = _run(capsys, "wgmma", "verify", "--desc", desc, "--dtype", "f16", "--major", "K",
                      "--stage", "1", "--layout", K_SW128_STAGED)
    assert rc == 1 and "counterexample" in out
    desc1 = hex((1 << 62) | (64 << 32) | (1 << 16) | (0x4000 >> 4))
    rc, out, _ = _run(capsys, "wgmma", "verify", "--desc", desc1, "--dtype", "f16", "--major", "K",
                      "--stage", "1", "--layout", K_SW128_STAGED)
    assert rc == 0 and "proved" in out


def test_python_api_load_register_reads_a_tv_layout():
    from verilayout.banks import check_banks, load_register, load_shared
    from verilayout.cute import parse_cute_tv
    reg = load_register(LDSM_A_D, [32, 16])
    assert reg == parse_cute_tv(LDSM_A_D, [32, 16])
    assert check_banks(reg, load_shared("Sw<1,3,3> o _0 o (_32,_16):(_16,_1)", [32, 16], 16), elem_bits=16,
                       instruction="ldmatrix.x4").conflict_free
    with pytest.raises(LayoutError, match="needs its tile.s shape"):
        load_register(LDSM_A_D)


def _help_examples(epilog: str, needle: str) -> list[list[str]]:
    import shlex
    text = epilog.split("examples:\n", 1)[1].replace("\\\n", " ")
    return [shlex.split(ln)[1:] for ln in text.splitlines()
            if ln.strip().startswith("verilayout") and needle in ln]


def test_banks_help_examples_with_cute_layouts_run(capsys):
    from verilayout.cli.banks import BANKS_EPILOG
    examples = _help_examples(BANKS_EPILOG, "(_")
    assert len(examples) == 2                         # the TV layout and the staged layout
    for argv in examples:
        assert main(argv) == 0, argv                  # both are conflict-free (asserted above)
        capsys.readouterr()


def test_wgmma_help_staged_examples_run(capsys):
    from verilayout.cli.wgmma import GROUP_EPILOG
    examples = _help_examples(GROUP_EPILOG, "(_1,_4)")
    assert examples
    for argv in examples:
        assert main(argv) == 0, argv
        assert "stage 1 K-block 0" in capsys.readouterr().out
