"""SMT-LIB2 certificates: `verilayout check --smt2 DIR` writes every z3 query with z3's answer;
a second, independent solver (cvc5, from PyPI) re-checks them and must agree."""
from __future__ import annotations

import glob
import json
import os

import pytest

from verilayout.cli.main import main

cvc5 = pytest.importorskip("cvc5", reason="cvc5 (the second solver) is in the test extra")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cvc5_answer(path: str) -> str:
    tm = cvc5.TermManager()
    solver = cvc5.Solver(tm)
    solver.setOption("produce-models", "true")
    sm = cvc5.SymbolManager(tm)
    parser = cvc5.InputParser(solver, sm)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, text, os.path.basename(path))
    answer = None
    while True:
        cmd = parser.nextCommand()
        if cmd.isNull():
            break
        out = cmd.invoke(solver, sm)
        if str(cmd).startswith("(check-sat"):
            answer = out.strip()
    assert answer is not None, f"{path} has no (check-sat)"
    return answer


def test_certificates_are_rechecked_by_cvc5(tmp_path, capsys):
    out = tmp_path / "smt2"
    spec = os.path.join(ROOT, "specs", "cute_layouts.toml")
    assert main(["check", spec, "--smt2", str(out)]) == 0
    capsys.readouterr()
    entries = []
    for index in glob.glob(str(out / "*.json")):
        entries += json.load(open(index))
    # the spec's z3 obligations: two proofs (unsat) and two refutations (sat)
    assert len(entries) >= 4
    assert {e["expected"] for e in entries} == {"sat", "unsat"}
    for e in entries:
        path = str(out / e["file"])
        with open(path) as f:
            assert f"; expected: {e['expected']}" in f.read()
        assert cvc5_answer(path) == e["expected"], e


def test_a_wrong_expectation_would_be_caught(tmp_path, capsys):
    # the re-check is not vacuous: a certificate whose query is altered changes cvc5's answer
    out = tmp_path / "smt2"
    spec = os.path.join(ROOT, "specs", "cute_layouts.toml")
    assert main(["check", spec, "--smt2", str(out)]) == 0
    capsys.readouterr()
    proved = [e for idx in glob.glob(str(out / "*.json")) for e in json.load(open(idx))
              if e["expected"] == "unsat" and "injectivity" in e["what"]]
    path = str(out / proved[0]["file"])
    text = open(path).read().replace("(_ bv9 7)", "(_ bv3 7)")  # padding 9 -> stride 3: collides
    assert text != open(path).read()
    bad = tmp_path / "altered.smt2"
    bad.write_text(text)
    assert cvc5_answer(str(bad)) == "sat"
