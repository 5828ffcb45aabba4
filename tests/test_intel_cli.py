"""`verilayout blockload plan|check`: output, JSON, exit codes, errors.

Expected values: the seed ``002_5b1756cea8788f7c.txt`` (A: one load, the printed
offset/iteration bases; B: two loads; transposed B: four) and the reference table's
base-alignment rule.
"""
from __future__ import annotations

import json

import pytest

from verilayout.cli.main import main

DPAS = ("#triton_intel_gpu.dpas<{repeatCount = 8, systolicDepth = 8, executionSize = 16, "
        "opsPerChan = 2, threadsPerWarp = 16, warpsPerCTA = [8, 4], repCluster = [4, 2], "
        "A = [32, 16], B = [16, 32], C = [32, 32]}>")
A_DOT = f"#ttg.dot_op<{{opIdx = 0, parent = {DPAS}, kWidth = 1}}>"
B_DOT = f"#ttg.dot_op<{{opIdx = 1, parent = {DPAS}, kWidth = 2}}>"

# seed 002, A, "Block load tile layout after adding loads" (verbatim)
SEED_A_AFTER_LOADS = """\
 - offset=1 -> (0, 1)
   offset=2 -> (0, 2)
   offset=4 -> (0, 4)
   offset=8 -> (0, 8)
   offset=16 -> (1, 0)
   offset=32 -> (2, 0)
   offset=64 -> (4, 0)
 - iteration=1 -> (8, 0)
   iteration=2 -> (16, 0)
   iteration=4 -> (0, 16)
 - load is a size 1 dimension
where out dims are: [dim0 (size 32), dim1 (size 32)]
"""


def run(argv, capsys):
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_plan_a_prints_the_seeds_load_layout(capsys):
    rc, out, err = run(["blockload", "plan", "--layout", A_DOT, "-t", "tensor<256x32xf16>"],
                       capsys)
    assert rc == 0 and err == ""
    assert "1 load\n" in out.splitlines()[0] + "\n"
    assert "16b 32r16x2c at (x=0, y=0)" in out
    assert "verdict: proved (counting)" in out
    assert out.endswith(SEED_A_AFTER_LOADS)


@pytest.mark.parametrize("extra, n", [([], 2), (["--transpose"], 4), (["--baseline"], 2)])
def test_plan_b_json_counts(extra, n, capsys):
    rc, out, _ = run(["blockload", "plan", "--layout", B_DOT, "-t", "tensor<32x256xf16>",
                      "--json"] + extra, capsys)
    d = json.loads(out)
    assert rc == 0 and len(d["loads"]) == n and d["lower_bound"] == n
    assert d["verdict"]["status"] == "proved" and d["minimal"] is True


def test_plan_then_check_round_trip_and_a_broken_plan(tmp_path, capsys):
    rc, out, _ = run(["blockload", "plan", "--layout", A_DOT, "-t", "tensor<256x32xf16>",
                      "--json"], capsys)
    path = tmp_path / "plan.json"
    path.write_text(out)
    rc, out, _ = run(["blockload", "check", "--plan", str(path), "--layout", A_DOT, "-t",
                      "tensor<256x32xf16>", "--all-warps"], capsys)
    assert rc == 0 and out.startswith("proved:") and "warps 0, 1," in out
    d = json.loads(path.read_text())
    d["loads"][0]["surface"]["base"] = 16
    d["layout"] = None
    path.write_text(json.dumps(d))
    rc, out, _ = run(["blockload", "check", "--plan", str(path), "--layout", A_DOT, "-t",
                      "tensor<256x32xf16>", "--json"], capsys)
    v = json.loads(out)
    assert rc == 1 and v["status"] == "counterexample"
    assert v["counterexample"]["limit"] == "surface base" and v["counterexample"]["value"] == 16


@pytest.mark.parametrize("argv, message", [
    (["blockload", "plan", "--layout", A_DOT], "give the tensor type"),
    (["blockload", "plan", "--layout", A_DOT, "-t", "tensor<256x32xf32>"], "opsPerChan = 2 but f32"),
    (["blockload", "plan", "--layout", A_DOT.replace("kWidth = 1", "kWidth = 3"), "-t",
      "tensor<256x32xf16>"], "'kWidth' = 3"),
    (["blockload", "check", "--plan", "/nonexistent/plan.json", "--layout", A_DOT, "-t",
      "tensor<256x32xf16>"], "cannot read plan file"),
])
def test_bad_input_is_one_error_line_and_exit_2(argv, message, capsys):
    rc, out, err = run(argv, capsys)
    assert rc == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


def test_help_shows_an_example(capsys):
    with pytest.raises(SystemExit) as e:
        main(["blockload", "plan", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "examples:" in out and "verilayout blockload plan --layout" in out
