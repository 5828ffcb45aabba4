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


@pytest.mark.slow
def test_readme_conftest_turns_a_test_suite_into_an_audit(tmp_path):
    triton = pytest.importorskip("triton") if not os.environ.get("VERILAYOUT_REQUIRE_ORACLES") \
        else __import__("triton")
    assert hasattr(triton, "knobs")
    readme = (ROOT / "README.md").read_text()
    conftest = re.search(r"```py\n(# conftest\.py\n.*?)```", readme, re.S).group(1)
    (tmp_path / "conftest.py").write_text(conftest)
    sys.path.insert(0, str(ROOT / "tests" / "corpus"))
    try:
        import kernels
    finally:
        sys.path.pop(0)
    add_tag = next(k for k in kernels.KERNELS if k[0] == "add_vec")[3][0][0]
    (tmp_path / "test_kernels.py").write_text(TESTS.format(corpus=str(ROOT / "tests" / "corpus"),
                                                            add_tag=add_tag))
    env = dict(os.environ, PYTHONPATH=str(ROOT), TRITON_CACHE_DIR=str(tmp_path / "cache"),
               TRITON_DEFAULT_FP_FUSION="1")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                        "-W", "ignore::DeprecationWarning", str(tmp_path)], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out[-3000:]
    assert re.search(r"1 failed, 1 passed", out), out[-3000:]
    assert "KernelAuditError" in out and "matmul[fp8e4nv, fp16, sm_90a]" in out
    assert "[bank-conflicts] 4-way bank conflict" in out
    assert "test_conflicted_kernel" in re.search(r"FAILED.*", out).group(0)


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
