"""`verilayout emit dpas` from the command line: exit 0 and the files written, exit 2 with one
`error:` line for bad input. Expected values: seed 002 (its parent; A one 16b 32r16x2c load, B two
VNNI loads), the DPAS geometry (a 32x64 sub-group tile of C over K = 32: 4 x 4 x 2 = 32 calls), and
the kernel replayed independently in tests/test_emit_dpas.py."""
import json

import pytest

from tests.test_emit_dpas import SEED, run as replay_run
from verilayout.cli.main import main


def run(capsys, *argv):
    try:
        rc = main(list(argv))
    except SystemExit as e:           # argparse's own errors exit 2 after one error line
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def test_emit_dpas_writes_a_kernel_that_computes_a_times_b(capsys, tmp_path):
    rc, out, err = run(capsys, "emit", "dpas", "--parent", SEED, "--tile", "256x256x32",
                       "--dtype", "f16", "-o", str(tmp_path), "--json")
    assert rc == 0 and err == ""
    j = json.loads(out)
    assert j["sub_groups"] == 32 and j["calls_per_sub_group"] == 32
    assert j["loads"] == {"a": 1, "b": 2}
    assert all(o["status"] == "proved" for o in j["obligations"])
    assert {p.name for p in tmp_path.iterdir()} == {"kernel.cl", "manifest.json"}
    A, B, C, written = replay_run((tmp_path / "kernel.cl").read_text(), "f16", 256, 256, 32, False)
    assert (written == 1).all() and (C == A @ B).all()


def test_emit_dpas_from_a_file_prints_the_obligations(capsys, tmp_path):
    f = tmp_path / "dpas.mlir"
    f.write_text(SEED + "\n")
    rc, out, _ = run(capsys, "emit", "dpas", "--parent", f"@{f}", "--tile", "256x256x32",
                     "--dtype", "bf16", "--transpose-b", "-o", str(tmp_path / "bt"))
    assert rc == 0
    assert "B stored transposed" in out and out.count("[proved, enumeration]") == 4


@pytest.mark.parametrize("argv,why", [
    (["--tile", "256x256", "--dtype", "f16"], "is not MxNxK"),
    (["--tile", "256x256x32", "--dtype", "tf32"], "invalid choice"),
    (["--tile", "256x256x32", "--dtype", "i8"], "opsPerChan = 2 but i8 needs 4"),
    (["--tile", "256x256x24", "--dtype", "f16"], ""),
])
def test_bad_input_is_one_error_line(capsys, tmp_path, argv, why):
    rc, out, err = run(capsys, "emit", "dpas", "--parent", SEED, *argv, "-o", str(tmp_path / "x"))
    assert rc == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and why in lines[0], err


def test_a_parent_that_is_not_dpas_is_bad_input(capsys, tmp_path):
    rc, _, err = run(capsys, "emit", "dpas", "--parent", "#ttg.blocked<{sizePerThread = [1, 1], "
                     "threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]}>",
                     "--tile", "8x16x16", "--dtype", "f16", "-o", str(tmp_path / "x"))
    assert rc == 2 and "dpas" in err and len(err.strip().splitlines()) == 1
