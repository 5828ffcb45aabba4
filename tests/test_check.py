"""`verilayout check`, spec files, JUnit, and the pytest helpers in verilayout.testing."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

from verilayout import LinearLayout
from verilayout.cli import main
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
