"""`verilayout emit wgmma|blockload` and `verilayout simulate` from the command line.

Exit codes: 0 written / reproduced, 1 a mismatch (the coordinate printed), 2 bad input
(one `error:` line on stderr). Seed values: 003_ce87ea73fe8bc8cb.txt (example 1's
descriptors: A LBO 64 SBO 8, B LBO 32 SBO 8), 002_5b1756cea8788f7c.txt (operand text).
"""
import json
import re
from dataclasses import replace

import pytest

from verilayout.cli.main import main
from verilayout.emit.cuda_wgmma import render_cuda
from verilayout.hw.nvidia.descriptor import decode

DOT_A = ("#ttg.dot_op<{opIdx = 0, parent = #triton_intel_gpu.dpas<{repeatCount = 8, "
         "systolicDepth = 8, executionSize = 16, opsPerChan = 2, threadsPerWarp = 16, "
         "warpsPerCTA = [8, 4], repCluster = [4, 2], A = [32, 16], B = [16, 32], C = [32, 32]}>, "
         "kWidth = 1}>")


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def emit_ex1(capsys, d, *extra):
    return run(capsys, "emit", "wgmma", "--instr", "m64n32k16", "--dtype", "f16", "--acc", "f32",
               "--a", "K:none", "--b", "K:none", "-o", str(d), *extra)


def test_emit_wgmma_writes_the_kernel_manifest_and_run_script(capsys, tmp_path):
    rc, out, err = emit_ex1(capsys, tmp_path)
    assert rc == 0 and err == ""
    assert {p.name for p in tmp_path.iterdir()} == {"kernel.cu", "manifest.json", "run.sh"}
    assert "obligations: 2 of 2 proved" in out
    # seed 003 example 1: descA LBO 64, SBO 8; descB LBO 32, SBO 8 (fields, 16-byte units)
    descs = re.findall(r"descriptor (0x[0-9a-f]+)", out)
    fields = [(decode(d).lbo_field, decode(d).sbo_field) for d in descs]
    assert fields == [(64, 8), (32, 8)]


def test_simulate_reports_ok_for_an_emitted_kernel(capsys, tmp_path):
    emit_ex1(capsys, tmp_path, "--k", "64")
    rc, out, _ = run(capsys, "simulate", str(tmp_path))
    assert rc == 0 and out.startswith("ok: D = A @ B exactly for all 64x32 outputs (4 K-block(s)")
    rc, out, _ = run(capsys, "simulate", str(tmp_path), "--json", "--seed", "9",
                     "--base-address", "0x4000")
    assert rc == 0 and json.loads(out)["ok"] is True


def test_a_planted_lbo_makes_simulate_exit_1_with_the_coordinate(capsys, tmp_path):
    emit_ex1(capsys, tmp_path)
    path = tmp_path / "manifest.json"
    man = json.loads(path.read_text())
    d = decode(man["a"]["descriptors"][0])
    man["a"]["descriptors"][0] = f"{replace(d, lbo_field=d.lbo_field + 1).value:#018x}"
    path.write_text(json.dumps(man))
    (tmp_path / "kernel.cu").write_text(render_cuda(man))   # the kernel built from the bug
    rc, out, err = run(capsys, "simulate", str(tmp_path))
    assert rc == 1 and err == ""
    m = re.search(r"^mismatch: D\((\d+), (\d+)\) = ", out, re.M)
    assert m, out
    assert f"at D: row={m.group(1)}, col={m.group(2)}" in out
    assert "cause: wgmma K-block 0 reads A(m=0, k=8)" in out
    rc, out, _ = run(capsys, "simulate", str(tmp_path), "--json")
    assert rc == 1 and json.loads(out)["mismatch"]["where"] == "D"


def test_a_manifest_edited_without_its_kernel_is_caught(capsys, tmp_path):
    emit_ex1(capsys, tmp_path)
    path = tmp_path / "manifest.json"
    man = json.loads(path.read_text())
    man["b"]["copy"]["const_bytes"] += 2
    path.write_text(json.dumps(man))
    rc, out, _ = run(capsys, "simulate", str(tmp_path))
    assert rc == 1 and "kernel.cu line" in out and "at kernel.cu: line=" in out


@pytest.mark.parametrize("argv,match", [
    (["emit", "wgmma", "--instr", "m64n32k16", "--dtype", "tf32", "-o", "X"], "needs k8"),
    (["emit", "wgmma", "--instr", "m64n32k16", "--dtype", "f16", "--b", "reg", "-o", "X"],
     "B is always read from shared memory"),
    (["emit", "wgmma", "--instr", "m64n32k16", "--dtype", "f16", "--k", "24", "-o", "X"],
     "multiple of the instruction's K"),
    (["simulate", "/nonexistent/dir"], "/nonexistent/dir: no such folder"),
    (["emit", "blockload", "--layout", "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = "
      "[8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>", "-t", "tensor<32x16xf16>", "-o", "X"],
     "DPAS"),
])
def test_bad_input_exits_2_with_one_error_line(capsys, tmp_path, argv, match):
    argv = [str(tmp_path / a) if a == "X" else a for a in argv]
    rc, out, err = run(capsys, *argv)
    assert rc == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and match in err


def test_simulate_of_a_malformed_manifest_is_bad_input(capsys, tmp_path):
    (tmp_path / "manifest.json").write_text('{"kind": "wgmma", "format": 3')
    rc, _, err = run(capsys, "simulate", str(tmp_path))
    assert rc == 2 and err.startswith("error: ") and "line 1" in err


def test_emit_blockload_from_a_file_and_simulate(capsys, tmp_path):
    f = tmp_path / "a.mlir"
    f.write_text(DOT_A)
    out_dir = tmp_path / "a"
    rc, out, _ = run(capsys, "emit", "blockload", "--layout", f"@{f}", "-t", "tensor<256x32xf16>",
                     "-o", str(out_dir))
    assert rc == 0 and "intel_sub_group_2d_block_read_16b_32r16x2c" in out
    assert {p.name for p in out_dir.iterdir()} == {"kernel.cl", "manifest.json"}
    rc, out, _ = run(capsys, "simulate", str(out_dir))
    assert rc == 0 and "64 registers x 16 lanes x 32 sub-group(s)" in out
    rc, out, _ = run(capsys, "emit", "blockload", "--layout", DOT_A, "-t", "tensor<256x32xf16>",
                     "-o", str(tmp_path / "j"), "--json")
    assert rc == 0 and json.loads(out)["builtins"][0]["dest_count"] == 64


@pytest.mark.parametrize("argv", [["emit", "--help"], ["emit", "wgmma", "--help"],
                                  ["emit", "blockload", "--help"], ["simulate", "--help"]])
def test_help_has_examples(capsys, argv):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "examples" in out and "exit codes" in out


def test_emit_without_a_kind_prints_help_and_exits_2(capsys):
    rc, _, err = run(capsys, "emit")
    assert rc == 2 and "wgmma" in err


def test_emit_wgmma_json(capsys, tmp_path):
    rc, out, _ = run(capsys, "emit", "wgmma", "--instr", "m64n32k16", "--dtype", "f16", "--a",
                     "reg", "--b", "N:64B", "-o", str(tmp_path), "--json")
    data = json.loads(out)
    assert rc == 0 and data["a"] == {"source": "reg", "registers": 8}
    assert data["instruction"] == "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16"
