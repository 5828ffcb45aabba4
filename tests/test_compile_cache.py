"""The compile cache of the independent checks (``simulate/independent.compile_ptx`` and
``ptxas_spills``): a kernel text compiled once is read back, byte for byte what nvcc and ptxas
give when run here, and a changed source, arch or entry is compiled again.

The oracle is nvcc/ptxas themselves, run here with the cache off (``VERILAYOUT_COMPILE_CACHE``
empty); a hit is shown to run neither (their runners replaced by ones that fail).
"""
from __future__ import annotations

import glob
import os
import shutil

import pytest

from verilayout.simulate import independent as ind

pytestmark = pytest.mark.slow          # compiles with nvcc and ptxas

needs_nvcc = pytest.mark.skipif(not ind.nvcc_path() or not shutil.which("ptxas"),
                                reason="nvcc and ptxas are not installed")

SOURCE = """extern "C" __global__ void vl_add(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
"""


def _fresh(monkeypatch, folder) -> None:
    """The cache at ``folder`` (empty string: off) and the in-process memos emptied."""
    monkeypatch.setenv("VERILAYOUT_COMPILE_CACHE", str(folder))
    ind.compile_ptx.cache_clear()
    ind.ptxas_spills.cache_clear()


def _lines(ptx: str) -> list[str]:
    """The PTX without its ``.file`` lines (they name nvcc's temporary folder, new on each run)."""
    return [ln for ln in ptx.splitlines() if not ln.lstrip().startswith(".file")]


def _no_tools(monkeypatch) -> None:
    def fail(*_a, **_k):
        raise AssertionError("a cache hit ran a compiler")
    monkeypatch.setattr(ind, "run_nvcc", fail)
    monkeypatch.setattr(ind, "_ptxas_check", fail)


@needs_nvcc
def test_a_hit_is_what_nvcc_and_ptxas_give_and_runs_neither(tmp_path, monkeypatch):
    _fresh(monkeypatch, "")
    want_ptx = ind.compile_ptx(SOURCE, "sm_90a")
    want_spills = ind.ptxas_spills(want_ptx[1], "sm_90a")
    assert want_ptx[0] and ".entry vl_add" in want_ptx[1] and want_spills.status == "proved"
    assert not os.listdir(tmp_path)
    _fresh(monkeypatch, tmp_path)
    checks, ptx = ind.compiled_checks(SOURCE)
    assert len(glob.glob(str(tmp_path / "*" / "*.json"))) == 2      # one nvcc, one ptxas entry
    _fresh(monkeypatch, tmp_path)
    _no_tools(monkeypatch)
    again, ptx2 = ind.compiled_checks(SOURCE)
    assert ptx == ptx2 and _lines(ptx) == _lines(want_ptx[1]) and ".file" in ptx
    assert again == checks and again[1].message == want_spills.message


@needs_nvcc
def test_a_changed_source_or_arch_is_compiled_again(tmp_path, monkeypatch):
    _fresh(monkeypatch, tmp_path)
    ind.compile_ptx(SOURCE, "sm_90a")
    calls = []
    real = ind.run_nvcc
    monkeypatch.setattr(ind, "run_nvcc", lambda args, cwd: calls.append(args) or real(args, cwd))
    ind.compile_ptx.cache_clear()
    ind.compile_ptx(SOURCE.replace("1.0f", "2.0f"), "sm_90a")
    ind.compile_ptx(SOURCE, "sm_80")
    assert len(calls) == 2 and "-gencode=arch=compute_80,code=sm_80" in calls[1]


@needs_nvcc
def test_a_compile_error_is_kept_and_a_broken_entry_is_compiled_again(tmp_path, monkeypatch):
    _fresh(monkeypatch, "")
    bad = SOURCE.replace("int n)", "int n")
    want = ind.compile_ptx(bad)
    assert want[0] is False and "error" in want[1]
    _fresh(monkeypatch, tmp_path)
    assert ind.compile_ptx(bad) == want
    for entry in glob.glob(str(tmp_path / "*" / "*.json")):
        with open(entry, "w") as f:
            f.write("{not json")
    ind.compile_ptx.cache_clear()
    assert ind.compile_ptx(bad) == want                 # recompiled, and the entry rewritten
    _fresh(monkeypatch, tmp_path)
    _no_tools(monkeypatch)
    assert ind.compile_ptx(bad) == want


def test_an_unwritable_folder_is_no_error(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("VERILAYOUT_COMPILE_CACHE", str(blocker / "cache"))
    key = ind._cache_key("a", "b")
    ind._cache_store(key, {"ok": True})
    assert ind._cache_load(key) is None
    assert ind._cache_key("a", None) is None            # an unknown tool version: no key, no caching


@needs_nvcc
def test_without_nvcc_an_entry_is_not_read_and_the_error_names_nvcc(tmp_path, monkeypatch):
    _fresh(monkeypatch, tmp_path)
    assert ind.compile_ptx(SOURCE)[0]
    ind.compile_ptx.cache_clear()
    monkeypatch.setattr(ind, "nvcc_path", lambda: None)
    with pytest.raises(ind.LayoutError, match="nvcc is not installed"):
        ind.compile_ptx(SOURCE)
