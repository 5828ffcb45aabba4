"""The proof catalogue (proofs/*.toml): every obligation holds, the seed inconsistencies fail
for the reason proofs/README.md gives, and a bug planted in a copy of each file is caught
with a counterexample.

Expected counterexample values are derived here from the seeds' own text
(/work/shared/seeds/000..004, cited per test), not read off the code.
"""
from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

from verilayout.cli.main import main
from verilayout.spec import load_spec, load_spec_text, run_spec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROOFS = os.path.join(ROOT, "proofs")
FILES = sorted(glob.glob(os.path.join(PROOFS, "*.toml")))


def results(path: str, text: str | None = None) -> dict:
    """{obligation name: Result} of a catalogue file (or of ``text`` read as that file)."""
    spec = load_spec(path) if text is None else load_spec_text(text, path)
    return {r.obligation.name: r for r in run_spec(spec)}


def test_the_catalogue_has_a_file_per_seed():
    names = [os.path.basename(f) for f in FILES]
    for seed in ("seed000", "seed001", "seed002", "seed003", "seed004"):
        assert any(n.startswith(seed) for n in names), seed


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_every_obligation_of_the_catalogue_holds(path):
    bad = {n: (r.obligation.expect, r.verdict.status, r.verdict.reason)
           for n, r in results(path).items() if not r.ok}
    assert not bad


def test_the_readme_counts_match_the_files():
    readme = open(os.path.join(PROOFS, "README.md"), encoding="utf-8").read()
    for path in FILES:
        name = os.path.basename(path)
        m = re.search(rf"\| `{re.escape(name)}` \| [^|]+ \| (\d+) \|", readme)
        assert m, f"{name} is not in proofs/README.md"
        assert int(m.group(1)) == len(load_spec(path).obligations), name


def _file(prefix: str) -> str:
    return next(f for f in FILES if os.path.basename(f).startswith(prefix))


# ----- the seed inconsistencies fail for the stated reason ------------------------------------

def test_seed000_figure_167_puts_two_elements_at_one_offset():
    # seed 000 Figure 167: ((8,2),(4,4)):((8,64),(1,4)) before the swizzle (a bijection)
    r = results(_file("seed000"))
    v = r["Figure 167 (seed inconsistent): the exact layout puts two elements at one address"].verdict
    c = v.counterexample
    pre = lambda a, b: 8 * (a % 8) + 64 * (a // 8) + b % 4 + 4 * (b // 4)
    assert (c["a.dim0"], c["a.dim1"]) != (c["b.dim0"], c["b.dim1"])
    assert pre(c["a.dim0"], c["a.dim1"]) == pre(c["b.dim0"], c["b.dim1"])


def test_seed002_b_load_layouts_fail_where_the_readme_says():
    r = results(_file("seed002"))
    # "iteration=2 -> (16, 0)" in VNNI slots of 2 K-rows: K-row 32 of a K = 32 tensor
    it = r["B after adding iterations (seed inconsistent): iteration=2 -> (16, 0) overruns K = 32"]
    assert it.verdict.counterexample["iteration"] == 2
    assert it.verdict.counterexample["element"] == [32, 0]
    # "load=1 -> (128, 0)": slot 128 along K = K-row 256
    ld = r["B after adding loads (seed inconsistent): load=1 -> (128, 0) lands outside the 32x256 B"]
    assert ld.verdict.counterexample["load"] == 1 and ld.verdict.counterexample["element"] == [256, 0]
    # transposed B: "load=1 -> (0, 16)" in 32-bit slots is K = 32; in elements K = 8 is unnamed
    sl = r["B^T after adding loads (seed inconsistent), dim1 in slots: load=1 -> (0, 16) is K = 32, outside"]
    assert sl.verdict.counterexample["element"] == [0, 32]
    el = r["B^T after adding loads (seed inconsistent), dim1 in elements: K = 8 is never named"]
    assert el.verdict.counterexample["element"] == [0, 8]


def test_seed003_sbo_typo_misreads_row_8():
    # example 1 A: rows 8 apart by the (_8,8) mode's stride _64 (128 bytes); the swapped
    # descriptor (LBO field 8, SBO field 16) reads row 8 at SBO = 16 * 16 = 256 bytes
    r = results(_file("seed003"))
    c = r["SBO section (seed typo 'LBO'): the K-major 8-row offset in LBO instead of SBO misreads"] \
        .verdict.counterexample
    assert (c["mn"], c["k"], c["descriptor_address"], c["layout_address"]) == (8, 0, 256, 128)


def test_seed003_unswizzled_ldmatrix_needs_8_wavefronts_per_matrix():
    # 8 rows 128 bytes apart share their banks: 8 distinct words per bank in each of the 4
    # matrices (phases) of ldmatrix.x4
    r = results(_file("seed003"))
    c = r["without swizzle the same ldmatrix.x4 needs more than its 4 wavefronts"].verdict.counterexample
    assert c["wavefronts"] == 8 * 4 and c["ideal"] == 4
    assert (c["second"]["byte_address"] - c["first"]["byte_address"]) % 128 == 0


# ----- planted bugs ------------------------------------------------------------------------

PLANTS = [
    # seed 000, Figure 166: LBO = 64 * sizeof(tf32) = 256 bytes, altered to 272. Element
    # (0, 4) (second T-group of K) is 64 elements = 256 bytes in; the descriptor reads 272.
    ("seed000",
     'descriptor = { lbo = 256, sbo = 128, swizzle = "none" }          # 64 * 4',
     'descriptor = { lbo = 272, sbo = 128, swizzle = "none" }          # 64 * 4',
     "Figure 166: the descriptor reads the exact layout (K-block 0)",
     {"mn": 0, "k": 4, "descriptor_address": 272, "layout_address": 256}),
    # seed 001: the .f16 accumulator of m64n256 has N/4 = 64 .f16x2 registers, altered to 128
    ("seed001",
     'fragment = "d_f16_f16_n256"\nelements = 128\nregisters = 64',
     'fragment = "d_f16_f16_n256"\nelements = 128\nregisters = 128',
     "D m64n256k16 f16 -> f16: d0..d127 in 64 .f16x2 registers",
     {"field": "registers", "expected": 128, "actual": 64}),
    # seed 002: drop the second of B's two loads; warp 0's register 64 of lane 0 holds
    # (0, 128) (the Warp0 view's row 64), which no remaining load delivers
    ("seed002",
     ', { elem_bytes = 2, width = 16, height = 32, array_length = 2, vnni = true, x = 128, y = 0 }',
     '',
     "B: two VNNI loads 128 elements apart feed every DPAS register of warp 0",
     {"register": 64, "lane": 0, "element": [0, 128], "missed": True, "warp": 0}),
    # seed 003: the store loop's row_c = lane/4 + warp*16, altered to warp*8: thread 32
    # (warp 1, lane 0), d0 is at row 16, the altered formula says 8
    ("seed003",
     'outputs = { dim0 = "lane // 4 + 16 * warp + 8 * ((register // 2) % 2)"',
     'outputs = { dim0 = "lane // 4 + 8 * warp + 8 * ((register // 2) % 2)"',
     "D of m64n32k16: d[j] of thread (warp, lane) is C[lane/4 + 16 warp + 8 ((j/2)%2)][2 (lane%4) + 8 (j/4) + j%2]",
     {"input": {"register": 0, "lane": 0, "warp": 1}, "expected": {"dim0": 8}, "actual": {"dim0": 16}}),
    # seed 004: vec=1, perPhase=2, maxPhase=2, row 2 is in phase 1, so column 0 sits at offset
    # 2 * 4 + (0 ^ 1) = 9; the row altered to [8, 9, 11, 10]
    ("seed004",
     "[9, 8, 11, 10]",
     "[8, 9, 11, 10]",
     "swizzled vec=1 perPhase=2 maxPhase=2 table (read as 8x4)",
     {"element": {"dim0": 2, "dim1": 0}, "expected": [8], "actual": [9]}),
]


@pytest.mark.parametrize("prefix, old, new, name, cex", PLANTS, ids=[p[0] for p in PLANTS])
def test_a_planted_bug_fails_with_its_counterexample(tmp_path, prefix, old, new, name, cex):
    path = _file(prefix)
    text = open(path, encoding="utf-8").read()
    assert text.count(old) == 1, "the planted edit must hit exactly one place"
    copy = tmp_path / os.path.basename(path)
    planted = text.replace(old, new)
    copy.write_text(planted, encoding="utf-8")
    r = results(str(copy), planted)
    assert not r[name].ok and r[name].verdict.status == "counterexample"
    got = r[name].verdict.counterexample
    assert {k: got[k] for k in cex} == cex


def test_a_planted_bug_fails_the_cli_with_junit_naming_it(tmp_path, capsys):
    prefix, old, new, name, _ = PLANTS[2]
    text = open(_file(prefix), encoding="utf-8").read().replace(old, new)
    copy = tmp_path / "planted.toml"
    copy.write_text(text, encoding="utf-8")
    junit = tmp_path / "report.xml"
    assert main(["check", str(copy), "--junit", str(junit)]) == 1
    out = capsys.readouterr().out
    assert f"FAIL {copy}::{name}" in out and "element=[0, 128]" in out
    failed = [c.get("name") for c in ET.parse(junit).getroot().iter("testcase")
              if c.find("failure") is not None]
    assert name in failed


def test_check_of_specs_and_proofs_passes_quickly_with_two_jobs():
    start = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "verilayout.cli", "check", "specs/", "proofs/",
                        "--jobs", "2"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    elapsed = time.perf_counter() - start
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert " 0 failed" in p.stdout
    assert elapsed < 60
