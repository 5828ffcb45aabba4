"""hwtests/: the probes build for sm_90a, issue the instructions they measure, and rerun the recorded cases.

nvcc is an oracle of the suite (tests/conftest.py): missing, these tests skip locally and fail in CI.
"""
from __future__ import annotations

import gzip
import json
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
HW = ROOT / "hwtests"
NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc (CUDA 12.5 or newer) is not installed; "
                                "the hwtests probes' sm_90a build check needs it")

# what each probe must issue: the instruction whose behaviour the recorded data measured
WANT = {
    "wgmma_probe": [r"wgmma\.mma_async\.sync\.aligned\.m64n16k16\.f32\.f16\.f16 .*, 0;"],
    "tma_probe": [r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes",
                  r"mbarrier\.arrive\.expect_tx"],
}


@pytest.fixture(scope="module")
def probe_exe(tmp_path_factory):
    """The probe's sm_90a executable, built once per module (the TMA probe serves two tests)."""
    built: dict[str, pathlib.Path] = {}

    def build(probe: str) -> pathlib.Path:
        if probe not in built:
            exe = tmp_path_factory.mktemp("probes") / probe
            r = subprocess.run([NVCC, "-arch=sm_90a", "-std=c++17", "-O2", "-o", str(exe), str(HW / f"{probe}.cu")],
                               capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, r.stderr[-3000:]
            built[probe] = exe
        return built[probe]
    return build


@needs_nvcc
@pytest.mark.parametrize("probe", sorted(WANT))
def test_probe_builds_for_sm90a_and_issues_the_measured_instruction(probe, tmp_path, probe_exe):
    src = HW / f"{probe}.cu"
    assert probe_exe(probe).stat().st_size > 0
    r = subprocess.run([NVCC, "-arch=sm_90a", "-std=c++17", "-O2", "-ptx", "-o", str(tmp_path / "p.ptx"), str(src)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    ptx = (tmp_path / "p.ptx").read_text()
    for pat in WANT[probe]:
        assert re.search(pat, ptx), pat
    if probe == "wgmma_probe":                      # both majors of A: tnspA 0 and 1
        tnsp = set(re.findall(r"m64n16k16\.f32\.f16\.f16 \{[^}]*\}, %rd\d+, %rd\d+, p, 1, 1, (\d), 0;", ptx))
        assert tnsp == {"0", "1"}


def _recorded(kind: str) -> list[dict]:
    with gzip.open(HW / "results" / f"h100-2026-11-26-{kind}.jsonl.gz", "rt") as f:
        return [json.loads(line) for line in f if '"index"' in line]


def test_the_case_files_are_the_recorded_cases(tmp_path):
    wg = [line.split() for line in (HW / "cases" / "wgmma_cases.txt").read_text().splitlines()
          if line and not line.startswith("#")]
    assert [(n, d, int(t)) for n, d, t in wg] == [(c["name"], c["desc"], c["tnspA"]) for c in _recorded("wgprobe")]
    tma = [line.split() for line in (HW / "cases" / "tma_cases.txt").read_text().splitlines()
           if line and not line.startswith("#")]
    rec = _recorded("tma")
    assert len(tma) == len(rec) == 322
    for row, c in zip(tma, rec):
        assert row[0] == c["name"] and row[1] == c["dtype"] and row[2] == c["swizzle"]
        assert [int(row[3]), int(row[4]), int(row[5], 16), int(row[6]), int(row[7]), int(row[8])] == \
            [*c["box"], c["base"], *c["coord"], c["elem_strides"][1]]


def test_compare_agrees_on_the_recorded_runs():
    r = subprocess.run([sys.executable, str(HW / "compare.py"), str(HW / "results" / "h100-2026-11-26")],
                       capture_output=True, text=True, timeout=300, env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "wgprobe: 520 of 520 cases agree" in r.stdout and "tma: 308 of 308 cases agree" in r.stdout


@needs_nvcc
def test_the_tma_probe_decodes_a_simulated_run_into_the_recorded_offsets(probe_exe):
    # TMA_PROBE_SIMULATE computes each load on the host by the measured rules; the probe's own decoding
    # (two prefills, slot codes, offsets from dst) must then give back every recorded H100 placement,
    # refusal and illegal instruction (a check of the probe's host code: no GPU here)
    exe = probe_exe("tma_probe")
    out, nxt = [], 0
    while nxt < 322:                                 # restart after a case that ends the process (exit 3)
        r = subprocess.run([str(exe), str(HW / "cases" / "tma_cases.txt"), str(nxt)], capture_output=True,
                           text=True, timeout=120, env={"TMA_PROBE_SIMULATE": "1"})
        assert r.returncode in (0, 3), r.stderr
        lines = [json.loads(line) for line in r.stdout.splitlines() if '"index"' in line]
        out += lines
        nxt = lines[-1]["index"] + 1
    rec = {c["index"]: c for c in _recorded("tma")}
    assert [d["index"] for d in out] == list(range(322))
    for d in out:
        h = rec[d["index"]]
        if "off" in h and not h.get("error"):
            assert (d["off"], d["written"], d["missing"], d["dup"], d["stray"]) == (h["off"], h["written"], 0, 0, 0)
        elif h.get("encode"):
            assert d["encode"] != 0 and "off" not in d
        elif "IllegalInstruction" in h.get("error", ""):
            assert "IllegalInstruction" in d["error"]
