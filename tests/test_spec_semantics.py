"""CI semantics of `verilayout check`: per-obligation errors, exit codes, JUnit, soundness.

Each expected value is derived in the test: the layouts are written as bases, so what they
map is read off by hand (e.g. ``lane = [[0], [1], [2]]`` is ``dim0 = lane >> 1``).
"""
from __future__ import annotations

import json
import math
import os
import xml.etree.ElementTree as ET

import pytest

from verilayout.cli.main import main
from verilayout.spec.kinds.linear import compile_formula, eval_formula

LANE4 = "[layouts.a]\nbases = { lane = [[1], [2]] }\nout_dims = { dim0 = 4 }\n"
WARP4 = "[layouts.b]\nbases = { warp = [[1], [2]] }\nout_dims = { dim0 = 4 }\n"
HALF = "[layouts.h]\nbases = { lane = [[0], [1], [2]] }\nout_dims = { dim0 = 4 }\n"   # lane >> 1


def write(tmp_path, text, name="s.toml"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def ob(kind, name, **keys):
    body = "".join(f"{k} = {v}\n" for k, v in keys.items())
    return f"[[obligation]]\nname = {json.dumps(name)}\nkind = \"{kind}\"\n{body}"


def check(capsys, *argv):
    try:
        rc = main(["check", *argv])
    except SystemExit as e:      # argparse's refusal of an option value (one line, exit 2)
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def test_one_bad_obligation_does_not_abort_the_run(tmp_path, capsys):
    spec = write(tmp_path, LANE4 + WARP4 + ob("equal", "dims differ", lhs='"a"', rhs='"b"')
                 + ob("injective", "still runs", layout='"a"'))
    junit = tmp_path / "r.xml"
    rc, out, err = check(capsys, spec, "--junit", str(junit))
    assert rc == 2
    assert f"ERROR {spec}::dims differ [equal]" in out and f"PASS {spec}::still runs" in out
    assert err.startswith("error: ") and err.count("\n") == 1 and "dims differ" in err
    cases = ET.parse(junit).getroot().findall(".//testcase")
    assert [c.get("name") for c in cases] == ["dims differ", "still runs"]
    assert cases[0].find("error") is not None and cases[1].find("error") is None


def test_junit_is_valid_xml_whatever_the_names_hold(tmp_path, capsys):
    name = "a]]>b\x01c\nd<&\"'"
    spec = write(tmp_path, LANE4 + ob("surjective", name, layout='"a"')
                 + ob("injective", "x\nPASS forged", layout='"a"', expect='"counterexample"'))
    junit = tmp_path / "r.xml"
    rc, out, _ = check(capsys, spec, "--junit", str(junit))
    assert rc == 1
    root = ET.parse(junit).getroot()          # parses: well-formed
    names = [c.get("name") for c in root.iter("testcase")]
    assert names[0] == "a]]>b\\x01c\nd<&\"'" and names[1] == "x\nPASS forged"
    # a newline in a name cannot forge a line of the text output
    assert not any(line.startswith("PASS forged") for line in out.splitlines())
    assert len(out.splitlines()) == 4   # PASS, FAIL + its reason (a is injective), summary


@pytest.mark.parametrize("entry, message", [
    ('text = "(_8):(_1)"\nbases = { lane = [[1]] }', "give one of 'text', 'bases'"),
    ('text = "(_8):(_1)"\nfile = "x.mlir"', "give one of 'text', 'file'"),
])
def test_two_sources_in_one_layout_are_an_error(tmp_path, capsys, entry, message):
    spec = write(tmp_path, f"[layouts.a]\n{entry}\n" + ob("injective", "i", layout='"a"'))
    rc, _, err = check(capsys, spec)
    assert rc == 2 and message in err


@pytest.mark.parametrize("text", ["", "[layouts.a]\ntext = '(_8):(_1)'\n"])
def test_a_spec_without_obligations_warns_and_fails_with_strict(tmp_path, capsys, text):
    spec = write(tmp_path, text)
    rc, _, err = check(capsys, spec)
    assert rc == 0 and err.startswith("warning: ")
    rc, _, err = check(capsys, spec, "--strict")
    assert rc == 1 and err.startswith("error: ") and "(--strict)" in err


def test_list_kinds_names_every_kind_with_its_keys_and_the_readme_documents_them(capsys):
    assert main(["check", "--list-kinds"]) == 0
    lines = capsys.readouterr().out.splitlines()
    kinds = {ln.split(":")[0]: ln.split(":", 1)[1].split("--")[0] for ln in lines}
    assert {"equal", "formula", "table", "descriptor_matches", "conflict_free", "plan_minimal"} <= set(kinds)
    assert "lhs, rhs" in kinds["equal"] and "value?" in kinds["table"]
    readme = open(os.path.join(os.path.dirname(__file__), "..", "specs", "README.md")).read()
    for kind, keys in kinds.items():
        assert f"`{kind}`" in readme, kind
        for key in keys.split(","):
            assert f"`{key.strip().rstrip('?')}`" in readme, (kind, key)


@pytest.mark.parametrize("layout, formula, status", [
    ("a", "lane/2 + 1/4", "counterexample"),      # 1/4 is never an integer
    ("h", "lane/2", "counterexample"),            # lane = 1: 1/2, the layout gives 0
    ("h", "lane // 2", "proved"),                 # floor division, written as such
    ("h", "floor(lane / 2)", "proved"),
    ("a", "xor(lane, 0)", "proved"),
])
def test_formula_is_exact(tmp_path, capsys, layout, formula, status):
    spec = write(tmp_path, LANE4 + HALF + ob("formula", "f", layout=f'"{layout}"',
                                              outputs=f'{{ dim0 = "{formula}" }}'))
    rc, out, _ = check(capsys, spec, "--json")
    assert json.loads(out)["results"][0]["status"] == status and rc == (status != "proved")


def test_formula_arithmetic_is_rational():
    tree = compile_formula("lane/3 * 3 + (lane % 2) ** 2", ["lane"], "w")
    assert eval_formula(tree, {"lane": 5}) == 5 + 1


def test_formula_caret_is_refused(tmp_path, capsys):
    spec = write(tmp_path, LANE4 + ob("formula", "f", layout='"a"', outputs='{ dim0 = "lane ^ 0" }'))
    rc, _, err = check(capsys, spec)
    assert rc == 2 and "xor(a, b)" in err


def test_table_naming_a_missing_input_dim_is_an_error(tmp_path, capsys):
    # a distributed 2x2 layout has no 'offset' input: the old runner read offset 0 everywhere
    spec = write(tmp_path, "[layouts.d]\nbases = { lane = [[0, 1], [1, 0]] }\n"
                 "out_dims = { dim0 = 2, dim1 = 2 }\n"
                 + ob("table", "t", layout='"d"', rows="[[0, 0], [0, 0]]"))
    rc, _, err = check(capsys, spec)
    assert rc == 2 and "input dim 'offset'" in err


@pytest.mark.parametrize("text, kind, status", [
    ("(_8,_8):(_8,_1)", "surjective", "proved"),   # row-major 8x8: a bijection onto 0..63
    ("(_8,_8):(_8,_1)", "invertible", "proved"),
    ("(_8):(_2)", "surjective", "counterexample"),   # odd offsets are never reached
])
def test_surjective_and_invertible_on_linear_cute_layouts(tmp_path, capsys, text, kind, status):
    spec = write(tmp_path, f'[layouts.c]\ntext = "{text}"\n' + ob(kind, "k", layout='"c"'))
    rc, out, _ = check(capsys, spec, "--json")
    assert json.loads(out)["results"][0]["status"] == status


@pytest.mark.parametrize("argv, message", [
    (["--timeout", "nan"], "--timeout"), (["--timeout", "inf"], "--timeout"),
    (["--timeout", "0"], "--timeout"), (["--timeout", "-1"], "--timeout"),
    (["--jobs", "-1"], "--jobs"), (["--jobs", "257"], "--jobs"),
])
def test_bad_numbers_are_one_line_errors(tmp_path, capsys, argv, message):
    """--jobs 0 means one process per CPU (as in audit), so the bad values are -1 and 257."""
    spec = write(tmp_path, LANE4 + ob("injective", "i", layout='"a"'))
    rc, out, err = check(capsys, spec, *argv)
    assert rc == 2 and err.startswith("error: ") and message in err and err.count("\n") == 1 and out == ""


def test_bad_output_paths_are_errors_and_create_nothing(tmp_path, capsys):
    spec = write(tmp_path, LANE4 + ob("injective", "i", layout='"a"'))
    for argv in (["--junit", str(tmp_path)], ["--junit", str(tmp_path / "no" / "r.xml")],
                 ["--smt2", spec]):
        rc, _, err = check(capsys, spec, *argv)
        assert rc == 2 and err.startswith(f"error: {argv[0]}"), argv
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("data, message", [
    (b"\xff\xfe[layouts]", "not UTF-8"),
    (b"a = " + b"[" * 2000 + b"]" * 2000, "nested too deeply"),
])
def test_unreadable_spec_files(tmp_path, capsys, data, message):
    p = tmp_path / "bad.toml"
    p.write_bytes(data)
    rc, _, err = check(capsys, str(p))
    assert rc == 2 and message in err and err.count("\n") == 1


def test_simulate_needs_the_kernel_file(tmp_path, capsys):
    out = tmp_path / "k"
    assert main(["emit", "wgmma", "--instr", "m64n32k16", "--dtype", "f16", "--acc", "f32",
                 "-o", str(out)]) == 0
    os.remove(out / "kernel.cu")
    capsys.readouterr()
    assert main(["simulate", str(out)]) == 2
    assert "no kernel.cu" in capsys.readouterr().err


def test_math_isfinite_is_what_timeout_needs():
    assert not math.isfinite(float("nan")) and not math.isfinite(float("inf"))
