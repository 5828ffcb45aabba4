"""`verilayout show`: views, JSON, exit codes; errors are one line with a position."""
from __future__ import annotations

import json

import pytest

from verilayout.cli.main import main

BLOCKED = ("#ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [4, 8], "
           "warpsPerCTA = [1, 1], order = [1, 0]}>")


def test_json_is_to_dict_and_matches_the_blocked_definition(capsys):
    assert main(["show", BLOCKED, "--shape", "4x16", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    # seed 004 blocked layouts: register bits walk dim1 (order[0] = 1), then lanes: 8 along
    # dim1 (each 2 wide), 4 along dim0
    assert d["bases"]["register"] == [[0, 1]]
    assert d["bases"]["lane"] == [[0, 2], [0, 4], [0, 8], [1, 0], [2, 0]]
    assert d["out_dims"] == {"dim0": 4, "dim1": 16}


def test_type_option_gives_the_shape(capsys):
    assert main(["show", BLOCKED, "-t", "tensor<4x16xf16>", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["out_dims"] == {"dim0": 4, "dim1": 16}


@pytest.mark.parametrize("argv, message", [
    (["show", BLOCKED, "--shape", "4x"], "--shape '4x'"),
    (["show", BLOCKED, "-t", "tensor<4x16xq7>"], "unknown element type 'q7'"),
    (["show", "#ttg.blocked<{sizePerThread = [1, 2], bogus = 1}>", "--shape", "4x16"], "col"),
    (["show", BLOCKED, "--shape", "4x12"], "12"),
    (["show", "@/nonexistent/file.ttgir"], "cannot read layout file"),
    # a missing file named without '@' is a missing file, not CuTe text with a bad shape
    (["show", "kernel.ttgir", "--name", "#mma", "--shape", "128x128", "--json"],
     "cannot read layout file kernel.ttgir: no such file"),
    (["show", "no/such/dir/k.mlir"], "cannot read layout file no/such/dir/k.mlir: no such file"),
])
def test_bad_input_exits_2_with_one_line(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and message in err and "\n" not in err


def test_svg_written(tmp_path, capsys):
    out = tmp_path / "l.svg"
    assert main(["show", BLOCKED, "--shape", "4x16", "--svg", str(out)]) == 0
    assert out.read_text().startswith("<svg") and out.read_text().count("<rect") == 64


def test_cute_layout_bases_are_coordinate_to_offset(capsys):
    # Sw<3,4,3> on bytes of 16-bit elements over ((8,8),(64,1)):((64,512),(1,0)): row r of the
    # 8-row atom starts at element 64*r, and the swizzle XORs the 16-byte chunk (8 elements)
    # with r: row 1 -> 64 ^ 8 = 72, row 2 -> 128 ^ 16 = 144, row 4 -> 256 ^ 32 = 288;
    # the next atoms along rows are 512 elements apart; columns are contiguous.
    assert main(["show", "Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_8),(_64,_1)):((_64,_512),(_1,_0))",
                 "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["bases"]["dim0"] == [[72], [144], [288], [512], [1024], [2048]]
    assert d["bases"]["dim1"] == [[1], [2], [4], [8], [16], [32]]


def test_non_linear_cute_layout_is_refused_with_the_reason(capsys):
    assert main(["show", "(_8,_8):(_9,_1)"]) == 2
    err = capsys.readouterr().err
    assert "not GF(2)-linear" in err and "9" in err


def test_version_is_the_distribution_version(capsys):
    # the version pyproject.toml declares (read here with tomllib, not through the package)
    import tomllib
    from pathlib import Path
    declared = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"verilayout {declared['project']['version']}"
