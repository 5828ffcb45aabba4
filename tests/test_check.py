"""`verilayout check`, spec files, JUnit, and the pytest helpers in verilayout.testing."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

from verilayout import LinearLayout
from verilayout.cli.main import main
from verilayout.testing import assert_equivalent, assert_injective, assert_surjective

GOOD = """
[layouts.a]
bases = { lane = [[1, 0], [2, 0]], warp = [[0, 1]] }
out_dims = { dim0 = 4, dim1 = 2 }

[layouts.b]
bases = { lane = [[1, 0], [2, 0]], warp = [[0, 1]] }
out_dims = { dim0 = 4, dim1 = 2 }

[[obligation]]
name = "a-equals-b"
kind = "equal"
lhs = "a"
rhs = "b"
"""

# the same layout with one basis planted wrong: lane=2 goes to dim0=3 instead of 2
PLANTED = GOOD.replace("[layouts.b]\nbases = { lane = [[1, 0], [2, 0]]",
                       "[layouts.b]\nbases = { lane = [[1, 0], [3, 0]]")


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return str(p)


def test_good_spec_exits_0(tmp_path, capsys):
    path = write(tmp_path, "good.toml", GOOD)
    assert main(["check", path]) == 0
    assert "PASS" in capsys.readouterr().out


def test_planted_bug_exits_1_with_counterexample_and_junit(tmp_path, capsys):
    assert PLANTED != GOOD
    path = write(tmp_path, "bad.toml", PLANTED)
    junit = tmp_path / "report.xml"
    assert main(["check", path, "--junit", str(junit)]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "a-equals-b" in out
    # the differing basis is lane bit 1 (lane=2): lhs dim0=2, rhs dim0=3
    assert "lane=2" in out and "dim0=2" in out and "dim0=3" in out
    root = ET.parse(junit).getroot()
    cases = root.findall(".//testcase")
    assert [c.get("name") for c in cases] == ["a-equals-b"]
    failure = cases[0].find("failure")
    assert failure is not None and "lane=2" in failure.text


def test_json_output(tmp_path, capsys):
    path = write(tmp_path, "bad.toml", PLANTED)
    assert main(["check", path, "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["failed"] == 1 and doc["results"][0]["counterexample"]["lane"] == 2


@pytest.mark.parametrize("text, message", [
    ("[[obligation]]\nkind = 'equal'\nlhs = 'x'\nrhs = 'x'\n", "no layout named 'x'"),
    ("[[obligation]]\nkind = 'nonsense'\n", "unknown kind 'nonsense'"),
    (GOOD + "typo = 1\n", "unknown keys ['typo']"),
    ("[layouts.a]\nbases = { lane = [[1]] }\nout_dims = { dim0 = 3 }\n"
     "[[obligation]]\nkind = 'injective'\nlayout = 'a'\n", "not a power of two"),
    ("[layouts\n", "bad.toml"),
])
def test_bad_specs_exit_2_with_one_line(tmp_path, capsys, text, message):
    path = write(tmp_path, "bad.toml", text)
    assert main(["check", path]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and message in err and "\n" not in err


def test_cli_process_has_no_traceback_on_bad_input(tmp_path):
    path = write(tmp_path, "bad.toml", "[[obligation]]\nkind = 'nonsense'\n")
    p = subprocess.run([sys.executable, "-m", "verilayout.cli", "check", path],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "Traceback" not in p.stderr


def test_jobs_gives_the_same_results(tmp_path, capsys):
    path = write(tmp_path, "bad.toml", PLANTED)
    path2 = write(tmp_path, "good.toml", GOOD)
    assert main(["check", path, path2, "--jobs", "2", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [r["status"] for r in doc["results"]] == ["counterexample", "proved"]


def test_testing_helpers_carry_the_counterexample():
    a = LinearLayout({"lane": [[1], [2]]}, ["dim0"])
    b = LinearLayout({"lane": [[1], [3]]}, ["dim0"])
    assert_equivalent(a, a)
    with pytest.raises(AssertionError, match=r"counterexample: .*'lane': 2"):
        assert_equivalent(a, b)
    with pytest.raises(AssertionError, match="not injective"):
        assert_injective(LinearLayout({"lane": [[1], [1]]}, ["dim0"]))
    with pytest.raises(AssertionError, match=r"no input reaches \{'dim0': 2\}"):
        assert_surjective(LinearLayout({"lane": [[1]]}, {"dim0": 4}, False))


KINDS_SPEC = """
[layouts.sw]
text = "#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 4, order = [1, 0]}>"
shape = [4, 8]
[layouts.id4]
identity = { size = 4, in = "i", out = "o" }
[layouts.z2]
zeros = { size = 2, in = "i", out = "o" }
[layouts.mod4]
product = ["id4", "z2"]

[[obligation]]
name = "table"
kind = "table"
layout = "sw"
rows = [[0, 1, 2, 3, 4, 5, 6, 7], [10, 11, 8, 9, 14, 15, 12, 13],
        [20, 21, 22, 23, 16, 17, 18, 19], [30, 31, 28, 29, 26, 27, 24, 25]]

[[obligation]]
name = "formula"
kind = "formula"
layout = "mod4"
outputs = { o = "i % 4" }

[[obligation]]
name = "maps"
kind = "maps"
layout = "mod4"
points = [[{ i = 7 }, { o = 3 }]]

[[obligation]]
name = "bases"
kind = "bases"
layout = "mod4"
expected = { i = [[1], [2], [0]] }
"""


@pytest.mark.parametrize("plant, name", [
    ("[10, 11, 8, 9, 14, 15, 12, 13]", "table"),     # (seed 004's vec=2 table, verbatim)
    ('"i % 4"', "formula"),
    ("{ o = 3 }", "maps"),
    ("[[1], [2], [0]]", "bases"),
])
def test_each_kind_proves_the_seed_fact_and_catches_a_planted_error(tmp_path, capsys, plant, name):
    good = write(tmp_path, "good.toml", KINDS_SPEC)
    assert main(["check", good]) == 0
    wrong = {"[10, 11, 8, 9, 14, 15, 12, 13]": "[10, 11, 8, 9, 14, 15, 13, 12]",
             '"i % 4"': '"i % 8"', "{ o = 3 }": "{ o = 7 }", "[[1], [2], [0]]": "[[1], [2], [4]]"}
    bad = write(tmp_path, "bad.toml", KINDS_SPEC.replace(plant, wrong[plant]))
    capsys.readouterr()
    assert main(["check", bad, "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    failed = [r for r in doc["results"] if not r["ok"]]
    assert [r["name"] for r in failed] == [name] and failed[0]["counterexample"]


def test_self_referential_product_is_an_input_error(tmp_path, capsys):
    path = write(tmp_path, "loop.toml", "[layouts.a]\nproduct = ['a']\n"
                 "[[obligation]]\nkind = 'injective'\nlayout = 'a'\n")
    assert main(["check", path]) == 2
    assert "in terms of itself" in capsys.readouterr().err
