"""verilayout.triton.install(): the README's conftest.py makes a pytest suite audit every kernel it
compiles (Triton 3.9's public compilation listener; no GPU: triton.compile for a cuda:90 target).

The expected outcome comes from outside the hook: the fp8 matmul of the corpus stores B 4-way
bank-conflicted (tests/corpus: `verilayout audit` of its TTGIR, and the PTX's st.shared counts,
agree), the element-wise add has no shared memory at all."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

TESTS = '''
import sys
import triton
from triton.backends.compiler import GPUTarget
sys.path.insert(0, {corpus!r})
import kernels


def _compile(name, tag):
    _, fn, sig, configs, _ = next(k for k in kernels.KERNELS if k[0] == name)
    _, consts, warps, stages = next(c for c in configs if c[0] == tag)
    attrs = {{(i,): [["tt.divisibility", 16]] for i, t in enumerate(sig.values())
             if t.startswith("*") or t == "i32"}}
    return triton.compile(triton.compiler.ASTSource(fn, sig, consts, attrs=attrs),
                          target=GPUTarget("cuda", 90, 32), options={{"num_warps": warps, "num_stages": stages}})


def test_clean_kernel():
    _compile("add_vec", {add_tag!r})


def test_conflicted_kernel():
    _compile("matmul_fp8", "128x128x128_w8_s3")
'''


def _readme_block(title: str) -> str:
    """The README's ```py block whose first line is ``title``."""
    readme = (ROOT / "README.md").read_text()
    return re.search(r"```py\n(" + re.escape(title) + r"\n.*?)```", readme, re.S).group(1)


def _run_suite(tmp_path, conftest_title: str, tests: str) -> str:
    """Run, in a fresh pytest process, the README's conftest.py block whose first line is
    ``conftest_title`` beside ``tests`` (TESTS or a variant): the clean add and the 4-way conflicted
    fp8 matmul of the corpus. Returns the run's output after the checks every variant shares: one
    failed, one passed, the failure a KernelAuditError naming the conflicted kernel's bank conflict."""
    triton = pytest.importorskip("triton") if not os.environ.get("VERILAYOUT_REQUIRE_ORACLES") \
        else __import__("triton")
    assert hasattr(triton, "knobs")
    (tmp_path / "conftest.py").write_text(_readme_block(conftest_title))
    sys.path.insert(0, str(ROOT / "tests" / "corpus"))
    try:
        import kernels
    finally:
        sys.path.pop(0)
    add_tag = next(k for k in kernels.KERNELS if k[0] == "add_vec")[3][0][0]
    (tmp_path / "test_kernels.py").write_text(tests.format(corpus=str(ROOT / "tests" / "corpus"),
                                                           add_tag=add_tag))
    env = dict(os.environ, PYTHONPATH=str(ROOT), TRITON_CACHE_DIR=str(tmp_path / "cache"),
               TRITON_DEFAULT_FP_FUSION="1", XDG_CACHE_HOME=str(tmp_path / "xdg"))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                        "-W", "ignore::DeprecationWarning", str(tmp_path)], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out[-3000:]
    assert re.search(r"1 failed, 1 passed", out), out[-3000:]
    assert "KernelAuditError" in out and "matmul[fp8e4nv, fp16, sm_90a]" in out
    assert "[bank-conflicts] 4-way bank conflict" in out
    (failed,) = re.findall(r"FAILED.*", out)
    assert "test_conflicted_kernel" in failed
    return out


@pytest.mark.slow
def test_readme_conftest_turns_a_test_suite_into_an_audit(tmp_path):
    out = _run_suite(tmp_path, "# conftest.py", TESTS)
    assert "in _compile" in out                                          # raised by the compile itself


def test_install_keeps_the_listener_it_found_and_uninstall_restores_it():
    knobs = pytest.importorskip("triton").knobs
    import verilayout.triton as vt
    calls = []

    def mine(**kw):
        calls.append(kw["cache_hit"])
    before = knobs.compilation.listener
    try:
        knobs.compilation.listener = mine
        lst = vt.install()
        assert knobs.compilation.listener is lst and lst.previous is mine
        vt.install(strict=True)                                   # installing twice chains once
        assert knobs.compilation.listener.previous is mine
        knobs.compilation.listener(src=None, metadata={"name": "k"}, metadata_group={}, times=None,
                                   cache_hit=True)
        assert calls == [True]                                    # the earlier listener still runs
        vt.uninstall()
        assert knobs.compilation.listener is mine
    finally:
        knobs.compilation.listener = before


ADVICE_KERNELS = '''
import sys
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget


@triton.jit
def mm_kn(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    rm = pid * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])      # B as [K, N]: N contiguous
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def mm_nk(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    rm = pid * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + rn[:, None] * K + (k + rk)[None, :])      # B as [N, K]: K contiguous
        acc += tl.dot(a, tl.trans(b))
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


sig = {"a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
       "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
for fn in (mm_kn, mm_nk):
    k = triton.compile(triton.compiler.ASTSource(fn, sig, {"BM": 128, "BN": 128, "BK": 64},
                                                 attrs={(i,): [["tt.divisibility", 16]] for i in range(6)}),
                       target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "num_stages": 3})
    open(sys.argv[1] + "/" + fn.__name__ + ".ttgir", "w").write(k.asm["ttgir"])
'''


@pytest.mark.slow
def test_the_python_suggestion_for_an_mn_major_fp8_b_removes_the_conflict(tmp_path):
    # Triton compiles both: B loaded N-contiguous (the conflict the advice is about) and B loaded
    # K-contiguous then tl.trans (what the advice says); the audit of what Triton wrote decides
    pytest.importorskip("triton")
    (tmp_path / "k.py").write_text(ADVICE_KERNELS)
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "cache"), TRITON_DEFAULT_FP_FUSION="1")
    subprocess.run([sys.executable, str(tmp_path / "k.py"), str(tmp_path)], env=env, check=True,
                   capture_output=True, timeout=600)
    sys.path.insert(0, str(ROOT))
    from verilayout.audit.paths import audit_paths
    kn, nk = audit_paths([str(tmp_path / "mm_kn.ttgir"), str(tmp_path / "mm_nk.ttgir")]).files
    (warn,) = [c for c in kn.checks if c.severity == "warning"]
    assert warn.check == "bank-conflicts" and "K contiguous" in warn.data["suggestion"]
    assert not [c for c in nk.checks if c.severity in ("error", "warning")]
    assert any(c.check == "bank-conflicts" and c.status == "proved" for c in nk.checks)


def test_install_refuses_bad_arguments_with_a_layout_error():
    """Bad input to the Python API is a one-line LayoutError (the project's rule), not ValueError."""
    import pytest
    import verilayout.triton as hook
    from verilayout.errors import LayoutError
    with pytest.raises(LayoutError, match="fail_on='bogus'"):
        hook.install(fail_on="bogus")
    with pytest.raises(LayoutError, match="strict='yes'"):
        hook.install(strict="yes")


BACKGROUND_TESTS = TESTS.replace("def test_clean_kernel", "def test_z_clean_kernel")


@pytest.mark.slow
def test_background_audits_still_fail_the_test_that_compiled_the_kernel(tmp_path):
    # the README's background conftest: the conflicted fp8 matmul compiles in the first test, the
    # clean add in the second; the finding (found by a worker process) fails the first one only
    title = "# conftest.py, audits in the background"
    assert "background=True" in _readme_block(title) and "flush()" in _readme_block(title)
    out = _run_suite(tmp_path, title, BACKGROUND_TESTS)
    assert "not flushed" not in out
    assert re.search(r">\s+verilayout\.triton\.flush\(\)", out)      # raised by the flush after the body,
    assert "in _compile" not in out                                      # not by the compile


def _planted(tmp_path, text: str) -> dict:
    path = tmp_path / "planted.ttgir"
    path.write_text(text)
    return {"planted.ttgir": str(path)}


def test_background_listener_reports_a_bad_kernel_file_at_flush(tmp_path):
    """A planted kernel file holding no whole kernel (the CLI's exit 2) is audited by the worker;
    nothing is raised at the compile, flush() raises it (strict) or warns, and then is empty."""
    import verilayout.triton as vt
    for strict in (True, False):
        lst = vt.make_listener(strict=strict, background=True)
        lst(src=None, metadata={"name": "planted"}, metadata_group=_planted(tmp_path, "module {"),
            times=None, cache_hit=False)                      # returns at once: no audit here
        if strict:
            with pytest.raises(vt.KernelAuditError, match="verilayout audit of planted: error: .*planted.ttgir"):
                lst.flush()
        else:
            with pytest.warns(vt.KernelAuditWarning, match="verilayout audit of planted: error"):
                lines = lst.flush()
            assert len(lines) == 1
        assert lst.flush() == []                               # reported once
        lst.worker.close()


def test_a_background_worker_that_dies_is_a_finding_not_a_pass(tmp_path, monkeypatch):
    import verilayout.triton as vt
    monkeypatch.setattr(vt, "WORKER", "import sys; sys.exit(3)")
    lst = vt.make_listener(strict=True, fail_on="never", background=True)
    lst(src=None, metadata={"name": "k"}, metadata_group=_planted(tmp_path, "module {"), times=None,
        cache_hit=False)
    with pytest.raises(vt.KernelAuditError, match=r"k: not audited: the background audit process ended \(exit code 3\)"):
        lst.flush()


def test_flush_without_background_has_nothing_to_report():
    knobs = pytest.importorskip("triton").knobs
    import verilayout.triton as vt
    before = knobs.compilation.listener
    try:
        vt.install()
        assert vt.flush() == []
    finally:
        knobs.compilation.listener = before


def test_the_listener_keeps_results_in_the_content_cache(tmp_path):
    """With a cache folder, an audited kernel's result is stored there and a second listener (a
    later run) is answered from it: the stored entry is what the second audit returns."""
    import json
    import verilayout.triton as vt
    src = ROOT / "examples" / "w4a16.ttgir"
    group = {"w4a16.ttgir": str(tmp_path / "w4a16.ttgir")}
    (tmp_path / "w4a16.ttgir").write_text(src.read_text())
    cache = tmp_path / "cache"
    with pytest.warns(vt.KernelAuditWarning):
        vt.make_listener(cache_dir=str(cache))(src=None, metadata={"name": "w"}, metadata_group=group,
                                               times=None, cache_hit=False)
    (entry,) = cache.rglob("*.json")
    stored = json.loads(entry.read_text())
    stored["checks"] = [c for c in stored["checks"] if c["severity"] not in ("error", "warning")]
    entry.write_text(json.dumps(stored))                      # a planted clean answer in the cache
    import warnings
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        vt.make_listener(cache_dir=str(cache))(src=None, metadata={"name": "w"}, metadata_group=group,
                                               times=None, cache_hit=False)
    assert not [w for w in got if issubclass(w.category, vt.KernelAuditWarning)]   # answered by it


def test_install_refuses_bad_cache_and_background_arguments():
    import verilayout.triton as hook
    from verilayout.errors import LayoutError
    with pytest.raises(LayoutError, match="background='yes'"):
        hook.install(background="yes")
    with pytest.raises(LayoutError, match="cache=3"):
        hook.install(cache=3)




HEAVY = ("numpy", "z3", "sympy", "verilayout.audit.paths", "verilayout.audit.ptx", "verilayout.audit.ttgir")


def _loaded_after(code: str, tmp_path) -> list[str]:
    """The HEAVY modules loaded in a fresh process after ``code`` (stdout: their sorted list)."""
    code += f"; import sys; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    r = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, cwd=ROOT,
                       env=dict(os.environ, PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(tmp_path / "xdg")),
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return eval(r.stdout.strip().splitlines()[-1])


def test_importing_the_hook_loads_no_audit_numpy_or_z3(tmp_path):
    assert _loaded_after("import verilayout.triton", tmp_path) == []


def test_install_loads_no_audit_numpy_or_z3(tmp_path):
    pytest.importorskip("triton")
    assert _loaded_after("import verilayout.triton as t; t.install(); t.install(background=True)", tmp_path) == []


def _corpus_kernel(tmp_path, stem: str, name: str) -> dict:
    """The corpus's clean cuda90 kernel ``stem`` (TTGIR + PTX) copied to ``tmp_path`` as ``name``.*,
    as Triton's metadata group."""
    group = {}
    for ext in ("ttgir", "ptx"):
        src = ROOT / "tests" / "corpus" / "cuda90" / f"{stem}.{ext}"
        (tmp_path / f"{name}.{ext}").write_text(src.read_text())
        group[f"{name}.{ext}"] = str(tmp_path / f"{name}.{ext}")
    return group


def _add_vec(tmp_path) -> dict:
    """The corpus's clean add_vec (TTGIR + PTX) copied to ``tmp_path``, as Triton's metadata group."""
    return _corpus_kernel(tmp_path, "add_vec_b1024_w4", "add_vec")


def test_a_background_audit_past_its_timeout_is_a_finding_then_the_worker_goes_on(tmp_path):
    """row_sum is clean (no timeout: flush reports nothing); with a limit no audit can meet (1 ms,
    counted from when the worker hands the file to its forked auditor), each file is one
    time-limit error and the test fails; the same worker then audits the next kernel. (A kernel whose
    PTX the checks read: add_vec's PTX is reported without being parsed, which can end within 1 ms.)"""
    import verilayout.triton as vt
    group = _corpus_kernel(tmp_path, "row_sum_32x128_w4", "row_sum")
    lst = vt.make_listener(strict=True, background=True, timeout=None)
    lst(src=None, metadata={"name": "row_sum"}, metadata_group=group, times=None, cache_hit=False)
    assert lst.flush() == []
    lst.worker.close()
    lst = vt.make_listener(strict=True, background=True, timeout=0.001)
    lst(src=None, metadata={"name": "row_sum"}, metadata_group=group, times=None, cache_hit=False)
    # the PTX audit cannot end within 1 ms; the small TTGIR's audit sometimes does (then it is clean)
    with pytest.raises(vt.KernelAuditError, match=r"row_sum\.ptx: error: line 1: ptx \[time-limit\] audit time limit "
                       r"of 0\.001 s reached") as err:
        lst.flush()
    assert "row_sum.ttgir: error" not in str(err.value) or "ttgir [time-limit]" in str(err.value)
    lst(src=None, metadata={"name": "bad"}, metadata_group=_planted(tmp_path, "module {"), times=None,
        cache_hit=False)
    # the worker went on: the next kernel's file is audited (its parse error, or under load its
    # own time limit, named at that file)
    with pytest.raises(vt.KernelAuditError, match=r"verilayout audit of bad: .*planted\.ttgir"):
        lst.flush()
    lst.worker.close()


def test_install_refuses_a_timeout_without_background_or_not_positive():
    import verilayout.triton as hook
    from verilayout.errors import LayoutError
    with pytest.raises(LayoutError, match=r"timeout=5 needs background=True"):
        hook.install(timeout=5)
    with pytest.raises(LayoutError, match=r"install: timeout=0: expected a positive number"):
        hook.install(background=True, timeout=0)


def test_a_kernel_answered_from_the_cache_loads_no_audit_numpy_or_z3(tmp_path):
    """The first process audits a kernel's TTGIR and PTX (the corpus's add_vec; the audit's modules
    load: the oracle that the check can fail); a second, answered from the content cache the first
    filled, loads none of them."""
    group = _add_vec(tmp_path)
    code = ("import warnings, verilayout.triton as t; warnings.simplefilter('ignore'); "
            f"t.make_listener(cache_dir={str(tmp_path / 'cache')!r})(src=None, metadata={{'name': 'k'}}, "
            f"metadata_group={group!r}, times=None, cache_hit=False)")
    first = _loaded_after(code, tmp_path)
    assert {"numpy", "z3", "verilayout.audit.ptx", "verilayout.audit.ttgir"} <= set(first)
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 2
    assert _loaded_after(code, tmp_path) == ["verilayout.audit.paths"]
