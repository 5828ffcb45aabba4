"""`verilayout banks --shape/--name` and the element type read from a `--reg` tensor type.

Each option is checked against the same question asked the long way (``-t TYPE`` and the
alias's text written out), so the expected report comes from another path through the CLI.
"""
from __future__ import annotations

import json

from verilayout.cli.main import main

B0 = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
B1 = "#ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>"
SMEM = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>"


def report(capsys, *argv):
    rc = main(["banks", *argv, "--smem", SMEM, "--json"])
    out, err = capsys.readouterr()
    return rc, (json.loads(out) if out else None), err


def test_shape_and_bits_ask_what_the_type_asks(capsys):
    long = report(capsys, "-t", "tensor<64x64xf16>", "--reg", B0)
    short = report(capsys, "--shape", "64x64", "--bits", "16", "--reg", B0)
    assert long == short and long[0] in (0, 1)


def test_name_picks_an_alias_of_a_ttgir_file(tmp_path, capsys):
    f = tmp_path / "k.ttgir"
    f.write_text(f"#blocked = {B0}\n#blocked1 = {B1}\n")
    by_name = report(capsys, "-t", "tensor<64x64xf16>", "--reg", f"@{f}", "--name", "#blocked1")
    by_text = report(capsys, "-t", "tensor<64x64xf16>", "--reg", B1)
    assert by_name == by_text
    other = report(capsys, "-t", "tensor<64x64xf16>", "--reg", B0)
    assert other[1] != by_name[1]           # the alias chosen matters: B0 is a different access


def test_element_type_comes_from_the_reg_tensor_type(capsys):
    from_reg = report(capsys, "--reg", f"tensor<64x64xbf16, {B0}>")
    given = report(capsys, "-t", "tensor<64x64xbf16>", "--reg", B0)
    assert from_reg == given and from_reg[1]["elem_bits"] == 16


def test_shape_without_bits_names_the_flags(capsys):
    rc, _, err = report(capsys, "--shape", "64x64", "--reg", B0)
    assert rc == 2 and err.startswith("error: ") and "--bits" in err and err.count("\n") == 1


def test_missing_shape_names_cli_flags_not_python_parameters(capsys):
    rc = main(["show", B0])
    err = capsys.readouterr().err
    assert rc == 2 and "--shape" in err and "shape=" not in err
