"""Kernels that can never launch: a configuration whose shared memory exceeds its target's per-block
limit gets one ``launch-resources`` warning, and its errors become ``unchecked`` (Triton raises
OutOfResources at launch, so no wrong number can come from it); a kernel within its limit is audited
exactly as before.

Oracles from outside the code: the kernels Triton 3.9 compiles here and its ``metadata.shared`` (the
bytes its driver compares with the device's limit), and the limits as published (table below)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from verilayout.audit import audit_ptx_file, audit_text
from verilayout.audit.launch_limits import shared_limit, shared_need
from verilayout.audit.ttgir import audited
from verilayout.frontends.ttgir import parse_module

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")
from triton.backends.compiler import GPUTarget  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, PYTHONPATH=str(ROOT))

#: NVIDIA CUDA C++ Programming Guide, "Technical Specifications per Compute Capability", row "Maximum
#: amount of shared memory per thread block" (KB = 1024 bytes): 8.0 163 KB, 8.6 99 KB, 8.9 99 KB,
#: 9.0 227 KB, 10.0 227 KB, 12.0 99 KB. AMD CDNA3 ISA guide (MI300, gfx942): 64 KiB of LDS per
#: workgroup; AMD CDNA4 ISA guide (MI355X, gfx950): 160 KiB.
PUBLISHED = {"cuda:80": 163 * 1024, "cuda:86": 99 * 1024, "cuda:89": 99 * 1024, "cuda:90": 227 * 1024,
             "cuda:100": 227 * 1024, "cuda:120": 99 * 1024, "hip:gfx942": 64 * 1024,
             "hip:gfx950": 160 * 1024}


@triton.jit
def one_dot(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    x = tl.load(a + rm[:, None] * BK + rk[None, :])
    y = tl.load(b + rk[:, None] * BN + rn[None, :])
    tl.store(c + rm[:, None] * BN + rn[None, :], tl.dot(x, y))


SIG = {"a": "*fp16", "b": "*fp16", "c": "*fp32", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    """(cc, BM, BK) -> (TTGIR path, PTX path, Triton's metadata.shared)."""
    out = {}
    folder = tmp_path_factory.mktemp("launch")
    for cc, bm, bk in ((90, 64, 512), (90, 128, 256), (100, 64, 512)):
        k = triton.compile(triton.compiler.ASTSource(one_dot, SIG, {"BM": bm, "BN": 256, "BK": bk}),
                           target=GPUTarget("cuda", cc, 32))
        stem = folder / f"one_dot_{cc}_{bm}x{bk}"
        stem.with_suffix(".ttgir").write_text(k.asm["ttgir"])
        stem.with_suffix(".ptx").write_text(k.asm["ptx"])
        out[(cc, bm, bk)] = (str(stem.with_suffix(".ttgir")), str(stem.with_suffix(".ptx")), k.metadata.shared)
    return out


def test_limits_are_the_published_figures():
    for target, limit in PUBLISHED.items():
        assert shared_limit(target).bytes == limit, target
    assert shared_limit("cuda:90").bytes == 232448          # the 227 KiB a sm_90 CTA may use
    for unknown in ("cuda:75", "hip:gfx1100", None, "sm_90"):
        assert shared_limit(unknown) is None


def test_ttg_shared_attribute_is_read():
    mod = parse_module('module attributes {"ttg.num-warps" = 4 : i32, ttg.shared = 196608 : i32, '
                       'ttg.target = "cuda:90"} {\n}')
    assert mod.shared == 196608
    assert parse_module('module attributes {"ttg.num-warps" = 4 : i32} {\n}').shared is None


def test_the_bound_never_exceeds_what_triton_allocates(kernels):
    for ttgir, _ptx, shared in kernels.values():
        need, exact, _op = shared_need(parse_module(Path(ttgir).read_text()))
        assert not exact and 0 < need <= shared


@pytest.mark.parametrize("cc", [90, 100])
def test_over_the_limit_one_warning_and_no_error(kernels, cc):
    ttgir, ptx, shared = kernels[(cc, 64, 512)]
    assert shared > PUBLISHED[f"cuda:{cc}"]                # Triton's own count: it cannot launch
    for rep in (audit_text(Path(ttgir).read_bytes(), ttgir), audit_ptx_file(ptx)):
        found = [c for c in rep.checks if c.check == "launch-resources"]
        assert len(found) == 1 and found[0].severity == "warning", rep.path
        assert found[0].data["limit"] == PUBLISHED[f"cuda:{cc}"]
        assert PUBLISHED[f"cuda:{cc}"] < found[0].data["shared"] <= shared
        assert str(PUBLISHED[f"cuda:{cc}"]) in found[0].message and "Programming Guide" in found[0].message
        assert not [c for c in rep.checks if c.severity == "error"], rep.path
        for c in rep.checks:
            if c.data.get("reason") == "cannot launch":
                assert c.status == "unchecked" and c.message.startswith(f"the kernel cannot launch on cuda:{cc} (")


def test_errors_of_a_kernel_that_cannot_launch_become_unchecked(kernels, monkeypatch):
    _ttgir, ptx, _shared = kernels[(90, 64, 512)]
    rep = audit_ptx_file(ptx)
    import verilayout.audit.ptx as ptx_audit
    monkeypatch.setattr(ptx_audit, "cannot_launch", lambda r, *_a: r)    # the checks without the limit
    raw = audit_ptx_file(ptx)
    errors = [c for c in raw.checks if c.severity == "error"]
    assert errors                                           # this configuration does give errors
    assert len(rep.checks) == len(raw.checks) + 1 and rep.checks[0].check == "launch-resources"
    for before, after in zip(raw.checks, rep.checks[1:]):
        if before.severity == "error":
            assert after.status == "unchecked" and after.severity is None
            assert after.message == "the kernel cannot launch on cuda:90 (%d > 232448 bytes of shared memory): %s" % (
                rep.checks[0].data["shared"], before.message)
            assert after.data["was"] == before.status
        elif before.status != "unchecked":
            assert after == before


def test_within_the_limit_nothing_changes(kernels):
    ttgir, ptx, shared = kernels[(90, 128, 256)]
    assert shared <= PUBLISHED["cuda:90"]                   # Triton's count: it launches
    _mod, raw = audited(Path(ttgir).read_bytes(), ttgir)
    rep = audit_text(Path(ttgir).read_bytes(), ttgir)
    assert rep == raw
    assert not [c for c in audit_ptx_file(ptx).checks if c.check == "launch-resources"]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "verilayout.cli", *args], capture_output=True, cwd=ROOT,
                          env=ENV, timeout=300, text=True)


def test_cli_json_and_exit_codes(kernels):
    ttgir, ptx, _shared = kernels[(90, 64, 512)]
    r = cli("audit", "--no-cache", "--json", ttgir, ptx)
    assert r.returncode == 0, r.stderr                      # a warning only: the default gate is error
    files = json.loads(r.stdout)["files"]
    assert [sum(c["check"] == "launch-resources" for c in f["checks"]) for f in files] == [1, 1]
    assert json.loads(r.stdout)["summary"]["errors"] == 0
    assert cli("audit", "--no-cache", "--fail-on", "warning", ttgir, ptx).returncode == 1
