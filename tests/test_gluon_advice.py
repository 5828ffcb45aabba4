"""A Gluon kernel's bank-conflict finding names the shared layout to write, as Gluon code, chosen
for every access of the buffer together; the advice is checked from outside the code under test:

* the wavefronts per warp before and after, by the brute-force bank counter of tests/reference
  (every lane, every instruction; the layouts read again from the op's TTGIR line);
* the suggested code, pasted into the kernel and compiled by Triton 3.9 (no GPU: triton.compile for
  cuda:90): the audit of what Triton wrote has no conflict left on the buffer, or exactly the
  wavefronts the advice claimed.

A Triton kernel keeps the knob advice (examples/w4a16.ttgir), and the compile hook's warning carries
the same advice at the kernel's own file and line.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from tests.reference.banks import auto_count
from tests.reference.ttgir_banks import BITS, layouts_of

ROOT = Path(__file__).resolve().parents[1]

KERNEL = '''
import sys
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource


@gluon.jit
def kern(x_ptr, y_ptr, z_ptr, M: gl.constexpr, N: gl.constexpr, SECOND: gl.constexpr):
    blk: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    rd: gl.constexpr = gl.BlockedLayout([8, 1], [8, 4], [1, 4], [0, 1])
    rd2: gl.constexpr = gl.BlockedLayout([2, 2], [16, 2], [1, 4], [1, 0])
    offs_m = gl.arange(0, M, layout=gl.SliceLayout(1, blk))
    offs_n = gl.arange(0, N, layout=gl.SliceLayout(0, blk))
    x = gl.load(x_ptr + offs_m[:, None] * N + offs_n[None, :])
    s = gl.allocate_shared_memory(gl.float16, [M, N], SHARED_LAYOUT, x)
    y = s.load(rd)
    ym = gl.arange(0, M, layout=gl.SliceLayout(1, rd))
    yn = gl.arange(0, N, layout=gl.SliceLayout(0, rd))
    gl.store(y_ptr + ym[:, None] * N + yn[None, :], y)
    if SECOND:
        z = s.load(rd2)
        zm = gl.arange(0, M, layout=gl.SliceLayout(1, rd2))
        zn = gl.arange(0, N, layout=gl.SliceLayout(0, rd2))
        gl.store(z_ptr + zm[:, None] * N + zn[None, :], z)


def compile_kern(second):
    sig = {"x_ptr": "*fp16", "y_ptr": "*fp16", "z_ptr": "*fp16", "M": "constexpr", "N": "constexpr",
           "SECOND": "constexpr"}
    return triton.compile(GluonASTSource(kern, sig, {"M": 64, "N": 64, "SECOND": second}),
                          target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})


if __name__ == "__main__":
    if sys.argv[2] == "hook":
        import warnings
        import verilayout.triton
        verilayout.triton.install()
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            compile_kern(False)
        for w in got:
            if w.category.__name__ == "KernelAuditWarning":
                print("WARNING", w.filename, w.lineno, str(w.message))
    else:
        k = compile_kern(sys.argv[2] == "two")
        open(sys.argv[1], "w").write(k.asm["ttgir"])
'''

UNSWIZZLED = "gl.SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1, order=[1, 0])"
GLUON_CODE = re.compile(r"gl\.(?:SwizzledShared|NVMMAShared|SharedLinear)Layout\([^)]*\)")


def _compile(tmp: Path, layout: str, mode: str, name: str) -> subprocess.CompletedProcess:
    src = tmp / f"{name}.py"
    src.write_text(KERNEL.replace("SHARED_LAYOUT", layout))
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp / "cache"), TRITON_DEFAULT_FP_FUSION="1",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, str(src), str(tmp / f"{name}.ttgir"), mode], env=env,
                          check=True, capture_output=True, text=True, timeout=600)


def _bank_checks(path: Path):
    from verilayout.audit.paths import audit_paths
    (rep,) = audit_paths([str(path)]).files
    return [c for c in rep.checks if c.check == "bank-conflicts"]


def _brute_per_warp(path: Path, c) -> int:
    """Wavefronts one warp needs for the access, by enumeration (tests/reference/banks.auto_count:
    the widest aligned contiguous vector any register bits make, as Triton's lowering vectorises:
    the PTX of the two-load kernel reads that load with ld.shared.v2.b16 through its second
    register bit): the worst instruction's count times the instructions per warp (registers per
    lane / vector; the layouts are GF(2)-linear, so every instruction of a warp is a translate of
    the first and costs the same)."""
    reg, smem, elem, shift = layouts_of(path, c)
    assert not any(shift)
    vec, worst = auto_count(reg, smem, BITS[elem])
    regs = [b for b in reg.bases.get("register", []) if any(b)]
    return worst * (1 << len(regs)) // vec


NVMMA_UNSWIZZLED = "gl.NVMMASharedLayout(swizzle_byte_width=0, element_bitwidth=16, rank=2, transposed=False)"


@pytest.mark.slow
@pytest.mark.parametrize("start,mode", [(UNSWIZZLED, "one"), (UNSWIZZLED, "two"), (NVMMA_UNSWIZZLED, "one")])
def test_the_gluon_layout_the_finding_names_removes_the_conflict_when_compiled(tmp_path, start, mode):
    pytest.importorskip("triton.experimental.gluon")
    _compile(tmp_path, start, mode, "before")
    checks = _bank_checks(tmp_path / "before.ttgir")
    warn = [c for c in checks if c.severity == "warning"]
    assert warn and all(c.data.get("gluon") for c in warn)           # told Gluon (source's @gluon.jit)
    joint = warn[0].data["joint"]
    assert all(c.data["joint"] == joint for c in checks)              # one layout for the whole buffer
    assert len(joint["accesses"]) == (2 if mode == "one" else 3)
    # the figures before: the brute-force count of what Triton wrote, per access
    by_line = {c.line: c for c in checks}
    for a in joint["accesses"]:
        assert a["before"] == _brute_per_warp(tmp_path / "before.ttgir", by_line[a["line"]])
    assert joint["wavefronts_per_warp_now"] == sum(a["before"] for a in joint["accesses"])
    code = GLUON_CODE.search(warn[0].data["suggestion"]).group(0)
    assert code == joint["gluon"] and joint["wavefronts_per_warp"] < joint["wavefronts_per_warp_now"]

    # paste it, compile with Triton, audit again: each access costs what the advice claimed
    _compile(tmp_path, code, mode, "after")
    after = _bank_checks(tmp_path / "after.ttgir")
    assert [c.op for c in after] == [a["op"] for a in joint["accesses"]]
    for c, a in zip(after, joint["accesses"]):
        assert _brute_per_warp(tmp_path / "after.ttgir", c) == a["after"]
        assert c.data["wavefronts"] * c.data["instructions_per_warp"] == a["after"]
    assert sum(a["after"] for a in joint["accesses"]) == joint["wavefronts_per_warp"]
    if start == UNSWIZZLED and mode == "one":   # the store and the transposing load: conflict-free
        assert all(c.status == "proved" for c in after)
    # an nvmma_shared buffer no MMA reads: any layout may replace it (the same as the swizzled start's)


@pytest.mark.slow
def test_gluon_is_told_by_the_glir_beside_the_ttgir_or_by_the_decorator(tmp_path):
    pytest.importorskip("triton.experimental.gluon")
    from verilayout.audit.advice import gluon_kernel
    _compile(tmp_path, UNSWIZZLED, "one", "k")
    text = (tmp_path / "k.ttgir").read_text()
    assert gluon_kernel(None, text)                                   # the def's @gluon.jit
    cached = sorted((tmp_path / "cache").rglob("kern.ttgir"))
    assert cached and (cached[0].parent / "kern.glir").is_file()
    os.remove(tmp_path / "k.py")                                      # no source: only the .glir tells
    assert not gluon_kernel(None, text)
    assert gluon_kernel(str(cached[0]), text)
    checks = _bank_checks(cached[0])
    assert any("gl.SwizzledSharedLayout(" in c.data.get("suggestion", "") for c in checks)


def test_a_triton_kernel_keeps_the_knob_advice():
    checks = _bank_checks(ROOT / "examples" / "w4a16.ttgir")
    (warn,) = [c for c in checks if c.severity == "warning"]
    assert "tl.trans" in warn.data["suggestion"] and "gl." not in warn.data["suggestion"]
    assert not warn.data.get("gluon")


def test_a_buffer_an_mma_reads_keeps_its_majorness_in_the_gluon_advice():
    from verilayout.audit.advice import suggestion
    checks = _bank_checks(ROOT / "examples" / "matmul_fp8.ttgir")    # B: nvmma_shared, transposed, wgmma
    (warn,) = [c for c in checks if c.severity == "warning"]
    joint = warn.data["joint"]
    assert joint["mma_transposed"] is True and "transposed=True" in joint["gluon"]
    (acc,) = joint["accesses"]
    assert acc["before"] == _brute_per_warp(ROOT / "examples" / "matmul_fp8.ttgir", warn)
    assert "transposed=True" in suggestion(warn, gluon=True)


def test_an_amd_finding_names_the_layout_its_details_hold():
    from verilayout.audit.paths import audit_paths
    from verilayout import parse
    from verilayout.audit.advice import suggestion
    from verilayout.prove.banks import check_lds_banks
    path = ROOT / "tests" / "corpus" / "gfx942" / "attention_fwd_d64_128x64_w4_s2.ttgir"
    (rep,) = audit_paths([str(path)]).files
    warn = [c for c in rep.checks if c.severity == "warning" and c.check == "bank-conflicts"]
    assert warn
    for c in warn:
        s = c.data.get("suggestion")
        if "best" not in c.data:
            assert s is None or "best" not in s
            continue
        best = c.data["best"]
        assert best["layout"] in s or "does better" in s
        if best["wavefronts_per_warp"] < best["wavefronts_per_warp_now"]:    # as a Gluon author reads it
            assert best["gluon"] in suggestion(c, gluon=True)
        # the figure is the LDS model's for that layout (read again from its MLIR text)
        reg, _smem, elem, _shift = layouts_of(path, c)
        lay = parse(best["layout"], shape=c.data["shape"])
        r = check_lds_banks(reg, lay, elem_bits=BITS[elem], target="gfx942", store=c.op != "ttg.local_load")
        assert r.wavefronts * r.instructions_per_wave == best["wavefronts_per_warp"]


@pytest.mark.slow
def test_the_compile_hook_warns_at_the_kernel_line_with_the_gluon_advice(tmp_path):
    pytest.importorskip("triton.experimental.gluon")
    out = _compile(tmp_path, UNSWIZZLED, "hook", "h").stdout
    lines = [ln for ln in out.splitlines() if ln.startswith("WARNING ")]
    assert len(lines) == 1
    _, filename, lineno, msg = lines[0].split(" ", 3)
    assert filename == str(tmp_path / "h.py")
    src = (tmp_path / "h.py").read_text().splitlines()
    assert "s.load(rd)" in src[int(lineno) - 1]                       # the conflicted load's line
    assert "in Python: allocate this buffer" in msg and "gl.SwizzledSharedLayout(" in msg
    assert "(confirmed in the PTX at line" in msg                     # the PTX beside it agrees
