"""``verilayout tma check``: the TMA box write against a shared layout (CuTe, staged CuTe, Triton) and
a wgmma descriptor, on the command line; the examples of ``--help`` run as printed."""
from __future__ import annotations

import json
import shlex

import pytest

from verilayout.cli.main import main
from verilayout.cli.tma import CHECK_EPILOG


def _examples() -> list[list[str]]:
    text = CHECK_EPILOG.split("examples:\n", 1)[1].split("\n(", 1)[0]
    joined = text.replace("\\\n", " ")
    return [shlex.split(ln)[1:] for ln in joined.splitlines() if ln.strip().startswith("verilayout")]


# the examples' verdicts: a 64B box read by the 128B pattern is refuted (DeepGEMM #379's bug); the rest hold
EXAMPLE_CODES = [0, 1, 0, 0, 0]


def test_help_examples_run_as_printed(capsys):
    examples = _examples()
    assert len(examples) == len(EXAMPLE_CODES)
    for argv, code in zip(examples, EXAMPLE_CODES):
        assert main(argv) == code, argv
        capsys.readouterr()


def _swz(addr: int, b: int) -> int:
    """CuTe's Swizzle<b,4,3> on a byte address: bits [4, 4+b) ^= bits [7, 7+b) (TMA's 32/64/128B
    modes are b = 1, 2, 3 on absolute addresses: CUDA driver API, CUtensorMapSwizzle)."""
    return addr ^ (((addr >> 7) & ((1 << b) - 1)) << 4)


def test_counterexample_names_the_coordinate_and_both_bytes(capsys):
    rc = main(["tma", "check", "--box", "32x64", "--dtype", "bf16", "--swizzle", "64", "--json",
               "--smem-layout", "Sw<3,4,3> o smem_ptr[16b](unset) o (_64,_32):(_32,_1)"])
    [c] = json.loads(capsys.readouterr().out)
    assert rc == 1 and c["status"] == "counterexample"
    cx = c["counterexample"]
    # the row-major 64x32 bf16 tile: element (mn, k) at byte 64 * mn + 2 * k before any swizzle
    linear = cx["base"] + cx["stage"] * 4096 + 64 * cx["mn"] + 2 * cx["k"]
    assert cx["tma_byte"] == _swz(linear, 2) and cx["reader_byte"] == _swz(linear, 3)
    assert cx["tma_byte"] != cx["reader_byte"] and cx["base"] % 128 == 0


def test_staged_layout_every_stage_and_one(capsys):
    staged = "Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_16),(_64,_1),(_1,_4)):((_64,_512),(_1,_0),(_0,_8192))"
    rc = main(["tma", "check", "--box", "64x128", "--dtype", "f16", "--swizzle", "128", "--json",
               "--smem-layout", staged])
    got = json.loads(capsys.readouterr().out)
    assert rc == 0 and [c["stage"] for c in got] == [0, 1, 2, 3]
    assert [c["stage_offset_bytes"] for c in got] == [8192 * 2 * s for s in range(4)]
    rc = main(["tma", "check", "--box", "64x128", "--dtype", "f16", "--swizzle", "128", "--json",
               "--stage", "3", "--smem-layout", staged])
    got = json.loads(capsys.readouterr().out)
    assert rc == 0 and len(got) == 1 and got[0]["stage"] == 3
    # a box of 256 rows is twice a stage's 128: the write spills past the tile (Triton #7275's bug)
    rc = main(["tma", "check", "--box", "64x256", "--dtype", "f16", "--swizzle", "128", "--stage", "0",
               "--smem-layout", staged])
    assert rc == 1 and "counterexample" in capsys.readouterr().out


def test_relative_triton_layout_needs_aligned_buffers(capsys):
    nvmma = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>"
    base = ["tma", "check", "--box", "64x128", "--dtype", "f16", "--swizzle", "128B", "--shape", "128x64",
            "--smem-layout", nvmma, "--json"]
    assert main(base) == 1
    cx = json.loads(capsys.readouterr().out)[0]["counterexample"]
    assert cx["base"] % 1024 != 0                  # Triton swizzles buffer offsets, TMA absolute ones
    assert main(base + ["--base-align", "1024"]) == 0
    capsys.readouterr()


def test_wrong_descriptor_is_refuted(capsys):
    # SBO 512 B instead of the 1024 B of 8 rows of 128 bytes (PTX ISA, matrix descriptor: K-major SW128)
    rc = main(["tma", "check", "--box", "64x64", "--dtype", "f16", "--swizzle", "128", "--desc",
               hex((1 << 62) | (32 << 32) | (1 << 16)), "--major", "K"])
    out = capsys.readouterr().out
    assert rc == 1 and "counterexample" in out and "descriptor" in out


@pytest.mark.parametrize("argv,msg", [
    (["--box", "64x64", "--dtype", "f16"], "give --smem-layout"),
    (["--box", "64", "--dtype", "f16", "--smem-layout", "(_64,_64):(_64,_1)"], "2-d boxes"),
    (["--box", "64xx4", "--dtype", "f16", "--smem-layout", "(_64,_64):(_64,_1)"], "--box"),
    (["--box", "64x64", "--dtype", "f17", "--smem-layout", "(_64,_64):(_64,_1)"], "f17"),
    (["--box", "64x64", "--dtype", "f16", "--swizzle", "12", "--smem-layout", "(_64,_64):(_64,_1)"], "--swizzle"),
    (["--box", "64x64", "--dtype", "f16", "--smem-layout", "(_64,_64):(_64,_1)", "--stage", "1"], "no stage mode"),
    (["--box", "64x64", "--dtype", "f16", "--desc", "0x4000004000010000"], "--major"),
    (["--box", "64x64", "--dtype", "f16", "--smem-layout", "(_64,_64:(_64,_1)"], "col"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, msg):
    assert main(["tma", "check", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and err.count("\n") == 1 and msg in err


def test_descriptor_over_every_stage_of_a_staged_layout(capsys):
    staged = "Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_16),(_64,_1),(_1,_4)):((_64,_512),(_1,_0),(_0,_8192))"
    # K-major SW128 f16: LBO 16 B, SBO 1024 B (8 rows of 128 bytes), K-blocks 32 bytes apart (PTX ISA,
    # matrix descriptor); stage s of the ring at s * 16384 bytes
    good = hex((1 << 62) | (64 << 32) | (1 << 16))
    argv = ["tma", "check", "--box", "64x128", "--dtype", "f16", "--swizzle", "128", "--json",
            "--smem-layout", staged, "--major", "K", "--k-blocks", "4", "--k-step", "32", "--desc"]
    assert main(argv + [good]) == 0
    got = json.loads(capsys.readouterr().out)
    assert [c["reader"] for c in got] == ["layout"] * 4 + ["descriptor"]
    assert "4-stage ring" in got[-1]["reason"] and "16384" in got[-1]["reason"]
    bad = hex((1 << 62) | (32 << 32) | (1 << 16))            # SBO 512 B
    assert main(argv + [bad]) == 1
    got = json.loads(capsys.readouterr().out)
    assert got[-1]["status"] == "counterexample" and all(c["proved"] for c in got[:4])
