"""The CI gate's second pass, as a Triton author meets it in the first week: never green on
nothing from Python either, JUnit names per specialization, unreadable files in SARIF and JUnit,
a cache folder that cannot be used said once, findings of an inlined helper at their call sites,
one counting rule, `check --sarif`, the README's Actions step with an unset variable, and each bad
option one line and exit 2.

Expected values come from outside the code: kernels Triton 3.9 compiles here (its cache, its
TTGIR `loc(callsite(...))`), the line numbers of the kernel source written below, and counts
derived by hand from the JSON's checks."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from verilayout.errors import LayoutError

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus" / "cuda90"
FP8 = CORPUS / "matmul_fp8_128x128x128_w8_s3"
SCHEMA = ROOT / "tests" / "fixtures" / "sarif" / "sarif-schema-2.1.0.json"
ENV = dict(os.environ, PYTHONPATH=str(ROOT))


def cli(*args: str, cwd: Path = ROOT, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "verilayout.cli", *args], capture_output=True,
                          cwd=cwd, env=env or ENV, timeout=300, text=True)


def one_error_line(r: subprocess.CompletedProcess, *words: str) -> str:
    assert r.returncode == 2, (r.returncode, r.stdout[-2000:], r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


# ----- a kernel Triton 3.9 compiles: a @triton.jit helper loads A, B and D --------------------------

KERNEL = '''import triton
import triton.language as tl


@triton.jit
def load_tile(ptr, stride, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)
    cols = tl.arange(0, C)
    return tl.load(ptr + rows[:, None] * stride + cols[None, :])


@triton.jit
def two_dots(a_ptr, b_ptr, d_ptr, c_ptr, sa, sb, sd, sc,
             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a = load_tile(a_ptr, sa, BM, BK)
    b = load_tile(b_ptr, sb, BK, BN)
    d = load_tile(d_ptr, sd, BK, BN)
    acc = tl.dot(a, b)
    acc = tl.dot(a, d, acc)
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    tl.store(c_ptr + rows[:, None] * sc + cols[None, :], acc.to(tl.float16))
'''
# the lines of KERNEL (1-based), read off the text above by hand
HELPER_LOAD, CALL_A, CALL_B, CALL_D = 9, 15, 16, 17

COMPILE = '''import sys
import triton
from triton.backends.compiler import GPUTarget
sys.path.insert(0, sys.argv[1])
import kern
sig = {"a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv", "d_ptr": "*fp8e4nv", "c_ptr": "*fp16",
       "sa": "i32", "sb": "i32", "sd": "i32", "sc": "i32"}
for warps, bk, stages in ((4, 64, 3), (4, 64, 2), (8, 64, 3), (8, 128, 3)):
    triton.compile(triton.compiler.ASTSource(kern.two_dots, sig, {"BM": 128, "BN": 128, "BK": bk}),
                   target=GPUTarget("cuda", 90, 32), options={"num_warps": warps, "num_stages": stages})
'''


@pytest.fixture(scope="module")
def triton_cache(tmp_path_factory) -> Path:
    """Triton's own cache of four specializations of `two_dots` (4 warps and 3 or 2 stages at
    BK=64, 8 warps at BK=64 and 128), written by `triton.compile` for sm_90 (no GPU)."""
    pytest.importorskip("triton")
    d = tmp_path_factory.mktemp("tc")
    (d / "src").mkdir()
    (d / "src" / "kern.py").write_text(KERNEL)
    (d / "compile.py").write_text(COMPILE)
    env = dict(os.environ, TRITON_CACHE_DIR=str(d / "cache"), TRITON_DEFAULT_FP_FUSION="1")
    subprocess.run([sys.executable, str(d / "compile.py"), str(d / "src")], env=env, check=True,
                   capture_output=True, timeout=600)
    return d


# ----- the Python API never passes on nothing ---------------------------------------------------------

@pytest.mark.parametrize("text, words", [("not a kernel at all", "no `module`"), ("", "empty"),
                                         ("module {", "no tt.func"),
                                         ("module {\n  tt.func @k() {\n", "truncated")])
def test_assert_kernel_clean_refuses_text_that_holds_no_kernel(text, words):
    from verilayout.testing import assert_kernel_clean
    with pytest.raises(LayoutError) as e:
        assert_kernel_clean(text)
    msg = str(e.value)
    assert "\n" not in msg and "<text>" in msg and words.split()[0] in msg


def test_assert_kernel_clean_and_audit_file_refuse_an_empty_or_cut_ttgir_file(tmp_path):
    from verilayout.audit import audit_file
    from verilayout.testing import assert_kernel_clean
    whole = (ROOT / "examples" / "w4a16.ttgir").read_text()
    (tmp_path / "empty.ttgir").write_text("")
    (tmp_path / "cut.ttgir").write_text(whole[: len(whole) // 2])
    for name, word in (("empty.ttgir", "empty"), ("cut.ttgir", "truncated")):
        path = str(tmp_path / name)
        for call in (assert_kernel_clean, audit_file):
            with pytest.raises(LayoutError, match=re.escape(path) + ".*" + word):
                call(path)
        # the CLI says the same of it (exit 2)
        one_error_line(cli("audit", path, "--no-cache"), name, word)
    # a whole kernel still passes (its one finding is a warning, below the default "error")
    assert assert_kernel_clean(str(ROOT / "examples" / "w4a16.ttgir")).checks


def test_a_ptx_file_cut_inside_an_entry_parameter_list_is_unreadable(tmp_path):
    text = (CORPUS / "add_vec_b1024_w4.ptx").read_text()
    entry = text.index(".entry")
    cut = text.index("_param_0,\n", entry) + len("_param_0,\n")    # inside `.entry add_vec(`
    (tmp_path / "k.ptx").write_text(text[:cut])
    (tmp_path / "k.ttgir").write_text((CORPUS / "add_vec_b1024_w4.ttgir").read_text())
    one_error_line(cli("audit", str(tmp_path / "k.ptx"), "--no-cache"), "k.ptx", "truncated",
                   "parameter list")


# ----- JUnit and SARIF ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_junit_class_names_tell_specializations_of_one_kernel_apart(triton_cache, tmp_path):
    out = tmp_path / "j.xml"
    r = cli("audit", str(triton_cache / "cache"), "--junit", str(out), "--no-cache")
    assert r.returncode == 0, r.stderr
    suites = list(ET.parse(out).getroot())
    ttgir = [s for s in suites if s.get("name").endswith(".ttgir")]
    assert len(ttgir) == 4
    names = [s[0].get("classname") for s in ttgir]
    assert len(set(names)) == 4, names
    k = "two_dots[fp8e4nv, fp16, sm_90a]"
    # the 4-warp compiles differ in num_stages (Triton's metadata), the 8-warp ones in BK only:
    # Triton's cache folder (a hash of the constexprs and options) tells those apart
    assert sorted(n for n in names if "num_warps=4" in n) == [f"{k} num_warps=4 num_stages=2",
                                                            f"{k} num_warps=4 num_stages=3"]
    eight = [n for n in names if "num_warps=8" in n]
    assert len(eight) == 2 and all(re.fullmatch(re.escape(k) + r" num_warps=8 \(.*/two_dots\.ttgir\)", n)
                                   for n in eight)
    cases = {(c.get("classname"), c.get("name")) for s in suites for c in s}
    assert len(cases) == sum(len(s) for s in suites)          # no two testcases share both names


def test_an_unreadable_file_is_an_error_in_sarif_and_a_failing_testcase_in_junit(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    (tmp_path / "empty.ttgir").write_text("")
    sarif, junit = tmp_path / "a.sarif", tmp_path / "a.xml"
    r = cli("audit", str(tmp_path / "empty.ttgir"), str(ROOT / "examples" / "w4a16.ttgir"),
            "--sarif", str(sarif), "--junit", str(junit), "--no-cache")
    one_error_line(r, "empty.ttgir", "empty")
    doc = json.loads(sarif.read_text())
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    bad = [x for x in doc["runs"][0]["results"] if x["level"] == "error"]
    assert len(bad) == 1 and "empty.ttgir" in bad[0]["message"]["text"]
    assert bad[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("empty.ttgir")
    root = ET.parse(junit).getroot()
    suite = next(s for s in root if s.get("name").endswith("empty.ttgir"))
    assert suite.get("failures") == "1" and len(suite.findall("testcase/failure")) == 1


def test_sarif_carries_errors_and_warnings_and_notes_only_with_level_note(tmp_path):
    for extra, levels in (((), ["warning"]), (("--level", "note"), ["note", "warning"]),
                          (("--level", "error"), [])):
        out = tmp_path / "a.sarif"
        r = cli("audit", str(FP8.with_suffix(".ttgir")), "--sarif", str(out), "--no-cache", *extra)
        assert r.returncode == 0, r.stderr
        # the fp8 matmul: one 4-way conflicted B store (warning), one convert_layout (note)
        assert sorted(x["level"] for x in json.loads(out.read_text())["runs"][0]["results"]) == levels
        assert ("note:" in r.stdout) == ("note" in levels)
    one_error_line(cli("audit", str(FP8.with_suffix(".ttgir")), "--level", "info"), "--level")


# ----- the cache folder ---------------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["file", "below-a-file"])
def test_a_cache_folder_that_cannot_be_used_is_said_once(tmp_path, where):
    f = tmp_path / "afile"
    f.write_text("x")
    folder = f if where == "file" else f / "sub"
    k = str(ROOT / "examples" / "w4a16.ttgir")
    r = cli("audit", k, k, "--cache", str(folder))
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"warning: --cache {folder}: ") and "not cached" in lines[0]
    assert f.read_text() == "x"


# ----- findings of an inlined helper --------------------------------------------------------------------

@pytest.mark.slow
def test_findings_in_an_inlined_helper_are_at_the_call_site_with_the_helper_related(triton_cache, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    cache = triton_cache / "cache"
    one = next(p.parent for p in cache.rglob("two_dots.json")
               if json.loads(p.read_text()).get("num_warps") == 8
               and "128x128xf8E4M3FN" in (p.parent / "two_dots.ttgir").read_text())
    ttgir = (one / "two_dots.ttgir").read_text()
    # Triton's TTGIR records the helper's load at line 9, called from lines 15, 16 and 17
    assert re.search(r"loc\(callsite\(#loc\w+ at #loc\w+\)\)", ttgir)
    out = tmp_path / "a.sarif"
    r = cli("audit", str(one / "two_dots.ttgir"), str(one / "two_dots.ptx"), "--json", "--sarif", str(out),
            "--source-root", str(triton_cache), "--no-cache")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    t = next(f for f in doc["files"] if f["path"].endswith(".ttgir"))
    allocs = {c["loc"]: c for c in t["checks"] if c["op"] == "ttg.local_alloc"}
    # three stores to shared memory, one per call of the helper: told apart by their call sites
    assert set(allocs) == {f"kern.py:{CALL_A}", f"kern.py:{CALL_B}", f"kern.py:{CALL_D}"}
    assert all(c["data"]["inlined_from"] == [f"kern.py:{HELPER_LOAD}"] for c in allocs.values())
    # B and D are [BK, BN] fp8 tiles loaded N-contiguous: both conflicted (the corpus's fp8 B), A is not
    assert [allocs[f"kern.py:{x}"]["severity"] for x in (CALL_A, CALL_B, CALL_D)] == [None, "warning", "warning"]
    sarif = json.loads(out.read_text())
    jsonschema.validate(sarif, json.loads(SCHEMA.read_text()))
    res = [x for x in sarif["runs"][0]["results"] if x["ruleId"] == "verilayout/bank-conflicts"
           and x["properties"]["file"].endswith(".ttgir")]
    assert sorted(x["locations"][0]["physicalLocation"]["region"]["startLine"] for x in res) == [CALL_B, CALL_D]
    for x in res:
        assert x["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "src/kern.py", "uriBaseId": "SRCROOT"}
        helper = [rl for rl in x["relatedLocations"] if "helper" in rl["message"]["text"]]
        assert [h["physicalLocation"]["region"]["startLine"] for h in helper] == [HELPER_LOAD]
    # the PTX's .loc ... inlined_at gives its stores the same call sites
    p = next(f for f in doc["files"] if f["path"].endswith(".ptx"))
    inlined = [c for c in p["checks"] if c["op"] == "st.shared" and "inlined_from" in c["data"]]
    assert inlined and all(c["data"]["inlined_from"] == [f"kern.py:{HELPER_LOAD}"] for c in inlined)
    assert {c["loc"] for c in inlined} <= {f"kern.py:{x}" for x in (CALL_A, CALL_B, CALL_D)}
    conflicted = [c for c in p["checks"] if c["check"] == "bank-conflicts" and c["severity"] == "warning"]
    assert conflicted and {c["loc"] for c in conflicted} <= {f"kern.py:{CALL_B}", f"kern.py:{CALL_D}"}
    # text: the two findings at their two call sites
    text = cli("audit", str(one / "two_dots.ttgir"), "--no-cache").stdout
    for call in (CALL_B, CALL_D):
        assert f"(kern.py:{call}; inlined from kern.py:{HELPER_LOAD})" in text
    # the Python API reports the same findings at the same places
    from verilayout.testing import KernelNotClean, assert_kernel_clean
    with pytest.raises(KernelNotClean) as e:
        assert_kernel_clean(str(one / "two_dots.ttgir"), fail_on="warning")
    assert re.findall(r"\(kern\.py:(\d+)\)", str(e.value)) == [str(CALL_B), str(CALL_D)]


# ----- one counting rule ------------------------------------------------------------------------------------

def test_counts_follow_one_rule_in_json_and_text():
    r = cli("audit", str(FP8.with_suffix(".ptx")), str(FP8.with_suffix(".ttgir")), "--json", "--no-cache")
    doc = json.loads(r.stdout)
    checks = [c for f in doc["files"] for c in f["checks"]]
    s = doc["summary"]
    # the README's rule, recomputed from the checks of the JSON
    sev = lambda v, conf: sum(c["severity"] == v and ("confirms" in c["data"]) == conf for c in checks)  # noqa: E731
    assert (s["errors"], s["warnings"], s["notes"]) == (sev("error", False), sev("warning", False), sev("note", False))
    assert s["confirmations"] == sum("confirms" in c["data"] for c in checks)
    assert s["errors"] + s["warnings"] + s["confirmations"] == sum(c["severity"] in ("error", "warning") for c in checks)
    assert sum(s[k] for k in ("proved", "counterexample", "unknown", "unchecked")) == s["checks"] == len(checks)
    # by hand for this kernel: B's 4-way conflicted store (1 warning), confirmed by 8 PTX st.shared
    assert (s["warnings"], s["confirmations"]) == (1, 8)
    text = cli("audit", str(FP8.with_suffix(".ptx")), str(FP8.with_suffix(".ttgir")), "--no-cache").stdout
    last = text.strip().splitlines()[-1]
    assert f"{s['warnings']} warnings" in last and f"{s['notes']} notes" in last
    assert f"{s['confirmations']} confirmations of TTGIR findings" in last
    # the README states the rule
    readme = (ROOT / "README.md").read_text()
    assert '"confirmations": int' in readme and "errors + warnings + confirmations" in readme


# ----- one fail_on vocabulary ---------------------------------------------------------------------------------

def test_fail_on_is_one_vocabulary_with_one_error_type():
    import verilayout.triton as hook             # a bad fail_on is refused before Triton is imported
    from verilayout.testing import KernelNotClean, assert_kernel_clean
    values = ["error", "warning", "note", "never"]
    help_text = cli("audit", "--help").stdout
    assert re.search(r"--fail-on \{error,warning,note,never\}", help_text)
    for bad in ("warnings", "bogus", None):
        with pytest.raises(LayoutError, match="expected one of 'error', 'warning', 'note', 'never'"):
            assert_kernel_clean(str(ROOT / "examples" / "w4a16.ttgir"), fail_on=bad)
        with pytest.raises(LayoutError, match="expected one of 'error', 'warning', 'note', 'never'"):
            hook.install(fail_on=bad)
    assert issubclass(hook.KernelAuditError, KernelNotClean)
    # each value means the same in the CLI and the API (w4a16: one warning, one note)
    k = str(ROOT / "examples" / "w4a16.ttgir")
    for v in values:
        rc = cli("audit", k, "--fail-on", v, "--no-cache").returncode
        try:
            assert_kernel_clean(k, fail_on=v)
            raised = False
        except KernelNotClean:
            raised = True
        assert rc == int(raised) == int(v in ("warning", "note")), v


# ----- check --sarif -------------------------------------------------------------------------------------------

SPEC = """# a layout that broadcasts register bit 2 (specs/linear_layouts.toml): two registers hold one element
[layouts.broadcast]
bases = { register = [[0, 1], [0, 2], [0, 0]], lane = [[0, 4], [0, 8], [1, 0], [2, 0], [4, 0]], warp = [[8, 0], [16, 0]] }
out_dims = { dim0 = 32, dim1 = 16 }

[[obligation]]
name = "covers"
kind = "surjective"
layout = "broadcast"

[[obligation]]
name = "wrong-claim"
kind = "injective"
layout = "broadcast"
"""


def test_check_writes_sarif_for_obligations_that_fail(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    (tmp_path / "s.toml").write_text(SPEC)
    r = cli("check", "s.toml", "--sarif", "out.sarif", cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    doc = json.loads((tmp_path / "out.sarif").read_text())
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    (res,) = doc["runs"][0]["results"]              # the obligation that holds is not a result
    assert res["ruleId"] == "verilayout/injective" and res["level"] == "error"
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "s.toml", "uriBaseId": "SRCROOT"}
    assert loc["region"]["startLine"] == SPEC.splitlines().index('name = "wrong-claim"') + 1
    one_error_line(cli("check", "s.toml", "--sarif", str(tmp_path), cwd=tmp_path), "--sarif", "directory")
    one_error_line(cli("check", "s.toml", "--sarif", "", cwd=tmp_path), "--sarif", "empty path")
    assert re.search(r"verilayout check[^\n]*--sarif", (ROOT / "README.md").read_text())


# ----- bad options: one line, exit 2 ----------------------------------------------------------------------------

def test_the_readme_actions_step_with_an_unset_triton_cache_dir_names_the_empty_path(tmp_path):
    env = {k: v for k, v in ENV.items() if k != "TRITON_CACHE_DIR"}
    readme = (ROOT / "README.md").read_text()
    run = re.search(r"- run: (verilayout audit .*)", readme).group(1)
    r = subprocess.run(["bash", "-c", f"python -m verilayout.cli {run.split(' ', 1)[1]}"], cwd=tmp_path,
                       env=dict(env, GITHUB_WORKSPACE=str(tmp_path)), capture_output=True, text=True,
                       timeout=120)
    one_error_line(r, "an empty path was given", "$TRITON_CACHE_DIR")


def test_paths_after_options_are_audited_too():
    a, b = str(ROOT / "examples" / "w4a16.ttgir"), str(ROOT / "examples" / "matmul_fp8.ttgir")
    r = cli("audit", a, "--json", b, "--no-cache")
    assert r.returncode == 0, r.stderr
    assert [f["path"] for f in json.loads(r.stdout)["files"]] == [a, b]
    one_error_line(cli("audit", a, "--json", "--bogus"), "unrecognized arguments: --bogus")
    # the line names the command whose --help teaches the options, not the top-level program
    assert "(see verilayout audit --help)" in cli("audit", a, "--bogus").stderr
    # check takes its spec files the same way
    r = cli("check", "specs/linear_layouts.toml", "--json", "specs/wgmma.toml")
    assert r.returncode == 0, r.stderr
    assert {x["file"] for x in json.loads(r.stdout)["results"]} == {"specs/linear_layouts.toml", "specs/wgmma.toml"}


@pytest.mark.parametrize("args, words", [
    (["audit", "examples/w4a16.ttgir", "--source-root", "/nonexistent"], ["--source-root", "no such folder"]),
    (["audit", "examples/w4a16.ttgir", "--source-root", "README.md"], ["--source-root", "not a folder"]),
    (["audit", "examples/w4a16.ttgir", "--source-root", ""], ["--source-root", "empty path"]),
    (["audit", ""], ["an empty path was given"]),
    (["audit", "examples/w4a16.ttgir", "--sarif", ""], ["--sarif", "empty path"]),
    (["audit", "examples/w4a16.ttgir", "--fail-on", "warnings"], ["--fail-on"]),
    (["show", "#ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], "
      "order = [1, 0]}>", "-t", "tensor<8x16xf16"], ["-t", "never closed"]),
    (["simulate", "/nonexistent"], ["/nonexistent", "no such folder"]),
    (["simulate", "README.md"], ["README.md", "not a folder"]),
])
def test_bad_options_are_one_line_and_exit_2(args, words):
    one_error_line(cli(*args), *words)


def test_a_spec_without_kind_says_the_key_is_missing(tmp_path):
    (tmp_path / "s.toml").write_text('[layouts]\na = "(4):(1)"\n\n[[obligation]]\nname = "x"\nlayout = "a"\n')
    r = cli("check", str(tmp_path / "s.toml"))
    line = one_error_line(r, "the key 'kind' is missing", "obligation 1 (x)")
    assert "None" not in line


def test_a_cache_folder_that_is_not_writable_is_said_once(tmp_path, monkeypatch, capsys):
    # root may write anywhere, so the refusal is simulated where the CLI asks (os.access)
    from verilayout.cli.main import main
    folder = tmp_path / "ro"
    folder.mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if str(p) == str(folder) else real(p, mode, **kw))
    k = str(ROOT / "examples" / "w4a16.ttgir")
    assert main(["audit", k, k, "--cache", str(folder)]) == 0
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert err == [f"warning: --cache {folder}: not writable: results are not cached in this run"]
    assert not any(folder.iterdir())
