"""verilayout audit: whole TTGIR kernels, no property typed by hand.

Expected values come from outside the code under test:
* bank figures: a brute-force count written here (every warp, instruction, phase, lane and
  byte enumerated from the layouts' bases; banks = 4-byte words mod 32);
* locations: the line of examples/matmul_fp8.py that loads B (found by its text);
* conversions and views: derivations written next to each case.
"""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from verilayout.audit import assert_kernel_clean, audit_paths, audit_text
from tests.audited import audit_file
from verilayout.audit.testing import KernelNotClean
from verilayout.cli.main import main
from verilayout.errors import LayoutError
from verilayout.frontends.triton import attr_to_linear
from verilayout.frontends.ttgir import parse_module

from tests.reference.ttgir_banks import BITS, brute_wavefronts, layouts_of, max_vector_bits

ROOT = Path(__file__).resolve().parent.parent
FP8 = ROOT / "examples" / "matmul_fp8.ttgir"
FP8_PY = ROOT / "examples" / "matmul_fp8.py"
CORPUS = sorted(glob.glob(str(ROOT / "tests" / "corpus" / "**" / "*.ttgir"), recursive=True))
EXAMPLES = sorted(glob.glob(str(ROOT / "examples" / "*.ttgir")))
FIXTURES = sorted(glob.glob(str(ROOT / "tests" / "fixtures" / "ttgir" / "*.ttgir")))
SAMPLES = EXAMPLES + FIXTURES + CORPUS
NVIDIA_SAMPLES = [p for p in SAMPLES if 'ttg.target = "cuda:' in Path(p).read_text()]


def _line_of(py: Path, marker: str) -> int:
    for i, line in enumerate(py.read_text().splitlines(), 1):
        if marker in line:
            return i
    raise AssertionError(f"{marker!r} is gone from {py}")


def _b_load_line() -> int:
    return _line_of(FP8_PY, "b = tl.load(b_ptrs)")


def _bank_checks(rep):
    return [c for c in rep.checks if c.check == "bank-conflicts" and c.status in ("proved", "counterexample")]


# ----- the fp8 example ---------------------------------------------------------------------------

def test_fp8_b_store_is_an_8_way_conflict_at_the_python_line():
    rep = audit_file(str(FP8))
    bad = [c for c in rep.checks if c.status == "counterexample"]
    assert len(bad) == 1
    c = bad[0]
    assert (c.op, c.check, c.severity) == ("ttg.local_alloc", "bank-conflicts", "warning")
    assert c.loc == f"matmul_fp8.py:{_b_load_line()}"
    assert "transposed = true" in c.data["shared_layout"]
    reg, smem, elem, _ = layouts_of(FP8, c)
    v, wf = brute_wavefronts(reg, smem, BITS[elem])
    assert (c.data["vector_elems"], c.data["wavefronts"]) == (v, wf) == (1, 8)
    w = c.data["witness"]["accesses"]
    assert w[0]["bank"] == w[1]["bank"] and w[0]["word"] != w[1]["word"]
    # the JSON contract: `ideal` per instruction (32 lanes x 1 byte fit one 128-byte wavefront)
    # and `best` with its layout text and figure
    assert c.data["ideal"] == 1 and c.data["instruction"] == "st.shared.b8"
    assert c.data["best"]["layout"].startswith("#ttg.") and c.data["best"]["wavefronts_per_warp"] < 8 * 64
    fix = c.data["fix"]
    # the optimum needs the lower bound of one wavefront per instruction (64 st.shared per warp
    # would be ideal with 1 B/lane; the optimum vectorises): fewer wavefronts than today's 8 * 64
    assert fix["optimum_wavefronts_per_warp"] < 8 * 64 and fix["optimum_status"] == "proved"


def test_cp_async_writes_and_subslice_reads_are_checked():
    # sm_80 pipelined matmul: 6 cp.async copies (A and B, prologue x2 and loop) and 6 local_loads
    # through memdesc_subslice views at K offsets 0 and 16 (see tests/fixtures/ttgir/README.md)
    path = ROOT / "tests" / "fixtures" / "ttgir" / "matmul_sm80_cp_async.ttgir"
    rep = audit_file(str(path))
    banks = [c for c in rep.checks if c.check == "bank-conflicts"]
    assert sum(c.op == "ttg.async_copy_global_to_local" for c in banks) == 6
    assert sum(c.op == "ttg.local_load" for c in banks) == 6
    assert all(c.status in ("proved", "counterexample") for c in banks), [c.message for c in banks]
    shifted = [c for c in banks if c.data.get("subslice") and any(c.data["subslice"]["offsets"])]
    assert {tuple(c.data["subslice"]["offsets"]) for c in shifted} == {(0, 16), (16, 0)}
    for c in banks:        # every figure equals the brute force at the view's true offsets
        reg, smem, elem, shift = layouts_of(str(path), c)
        assert (c.data["vector_elems"], c.data["wavefronts"]) == \
            brute_wavefronts(reg, smem, BITS[elem], shift, max_vector_bits(str(path), c))


def test_w4a16_dequantized_b_store_is_8_way():
    path = ROOT / "examples" / "w4a16.ttgir"
    rep = audit_file(str(path))
    bad = [c for c in rep.checks if c.severity == "warning"]
    assert len(bad) == 1 and bad[0].check == "bank-conflicts" and bad[0].op == "ttg.local_alloc"
    c = bad[0]
    assert c.loc == f"w4a16.py:{_line_of(ROOT / 'examples' / 'w4a16.py', 'b = b.to(tl.float16)')}"
    reg, smem, elem, _ = layouts_of(path, c)
    assert brute_wavefronts(reg, smem, BITS[elem]) == (2, 8)      # st.shared.b32 (2 x f16), 8 words/bank
    # the join / permute / reshape that unpack the nibbles are proved to move no data
    views = {x.op: x.status for x in rep.checks if x.check == "view-layout"}
    assert views == {"tt.join": "proved", "tt.trans": "proved", "tt.reshape": "proved"}


def test_fp8_every_shared_wgmma_operand_has_proved_descriptors():
    rep = audit_file(str(FP8))
    d = [c for c in rep.checks if c.check == "mma-descriptor"]
    assert sorted(c.data["operand"] for c in d) == ["A", "B"]
    for c in d:
        assert c.status == "proved"
        # 128x64 A: 2 row blocks of 64 x 2 K-blocks of 32 fp8; 64x128 B: 2 K-blocks
        assert len(c.data["descriptors"]) == (4 if c.data["operand"] == "A" else 2)
        assert all(x["descriptor"].startswith("0x") for x in c.data["descriptors"])
        assert c.data["major"] == "K"           # fp8 wgmma reads both operands K-major


@pytest.mark.parametrize("path", NVIDIA_SAMPLES)
def test_every_nvidia_bank_figure_equals_brute_force(path):
    rep = audit_file(path)
    for c in _bank_checks(rep):
        reg, smem, elem, shift = layouts_of(path, c)
        v, wf = brute_wavefronts(reg, smem, BITS[elem], shift, max_vector_bits(path, c))
        assert (c.data["vector_elems"], c.data["wavefronts"]) == (v, wf), (c.line, c.message)
        assert (c.status == "proved") == (wf == c.data["ideal_wavefronts"])


#: the files the CLI is run on too (the examples, the fixtures and the first file of each corpus
#: target): the CLI adds reading and printing to the audit every sample gets
CLI_SAMPLES = set(EXAMPLES + FIXTURES + [next(p for p in CORPUS if Path(p).parent == d)
                                         for d in sorted({Path(p).parent for p in CORPUS})])


@pytest.mark.parametrize("path", SAMPLES)
def test_corpus_audits_cleanly(path):
    rep = audit_file(path)
    json.loads(json.dumps(rep.to_dict()))
    if path in CLI_SAMPLES:
        assert main(["audit", path, "--json"]) in (0, 1)
    for c in rep.checks:
        if c.op == "ttng.warp_group_dot" and c.check == "mma-descriptor" and "reason" not in c.data:
            assert c.status == "proved", c.message


# ----- hand-written modules --------------------------------------------------------------------

HEAD = """#loc1 = loc("k.py":7:3)
#loc2 = loc("x"(#loc1))
#loc3 = loc(callsite(#loc2 at #loc1))
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = %d : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
"""


def _mod(body, warps=1, aliases=""):
    return aliases + HEAD % warps + body + "\n}\n"


def _one(text):
    rep = audit_text(text, "t.ttgir")
    assert len(rep.checks) == 1, rep.checks
    return rep.checks[0]


def test_locations_through_named_and_callsite_locs():
    m = parse_module(_mod("  %1 = tt.trans %0 {order = array<i32: 1, 0>} : tensor<4x4xf32, #a> -> "
                          "tensor<4x4xf32, #a> loc(#loc3)", aliases="#a = #ttg.blocked<{sizePerThread = [1, 1], "
                          "threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]}>\n"))
    assert (m.num_warps, m.target, m.threads_per_warp, m.num_ctas) == (1, "cuda:90", 32, 1)
    assert m.ops[0].loc == "k.py:7" and m.ops[0].line == 6


BLK = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [2, 1], order = [1, 0]}>"
# transposing swaps every per-dim array and maps the order through the permutation
BLK_T = "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 2], order = [0, 1]}>"
BLK_T_WRONG = "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 2], order = [1, 0]}>"


@pytest.mark.parametrize("dst,status", [(BLK_T, "proved"), (BLK_T_WRONG, "counterexample")])
def test_trans_view(dst, status):
    c = _one(_mod(f"  %1 = tt.trans %0 {{order = array<i32: 1, 0>}} : tensor<32x16xf32, {BLK}> -> "
                  f"tensor<16x32xf32, {dst}> loc(#loc1)", warps=2))
    assert (c.check, c.status, c.loc) == ("view-layout", status, "k.py:7")
    assert c.severity == (None if status == "proved" else "error")


def test_join_adds_one_register_bit():
    # join appends a size-2 dim held by one more register (fastest: order [2, 1, 0])
    joined = "#ttg.blocked<{sizePerThread = [1, 4, 2], threadsPerWarp = [8, 4, 1], warpsPerCTA = [2, 1, 1], order = [2, 1, 0]}>"
    c = _one(_mod(f"  %2 = tt.join %0, %1 : tensor<32x16xf32, {BLK}> -> tensor<32x16x2xf32, {joined}> loc(#loc1)", 2))
    assert (c.check, c.status) == ("view-layout", "proved")
    # the new dim at register bit 2 (order [1, 2, 0]: dim1's 4 registers first) moves no data either:
    # Triton 3.9's JoinOpConversion interleaves the halves in runs of 2^p registers, p = 2 here, so
    # joined registers 0-3 are the first half's 0-3 and 4-7 the second's (tests/test_audit_views.py
    # simulates that lowering on every bit)
    bit2 = "#ttg.blocked<{sizePerThread = [1, 4, 2], threadsPerWarp = [8, 4, 1], warpsPerCTA = [2, 1, 1], order = [1, 2, 0]}>"
    c = _one(_mod(f"  %2 = tt.join %0, %1 : tensor<32x16xf32, {BLK}> -> tensor<32x16x2xf32, {bit2}> loc(#loc1)", 2))
    assert (c.status, c.data["register_bit"]) == ("proved", 2)
    # the new dim held by a lane: the two halves would have to cross threads
    bad = "#ttg.blocked<{sizePerThread = [1, 4, 1], threadsPerWarp = [4, 4, 2], warpsPerCTA = [2, 1, 1], order = [2, 1, 0]}>"
    c = _one(_mod(f"  %2 = tt.join %0, %1 : tensor<32x16xf32, {BLK}> -> tensor<32x16x2xf32, {bad}> loc(#loc1)", 2))
    assert (c.status, c.severity) == ("counterexample", "error")


def test_reshape_row_major():
    # 4x8 with lanes along the row (8) then down (4): flat index row*8+col = the lane id
    src = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]}>"
    dst = "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>"
    c = _one(_mod(f"  %1 = tt.reshape %0 : tensor<4x8xf32, {src}> -> tensor<32xf32, {dst}> loc(#loc1)"))
    assert (c.check, c.status) == ("view-layout", "proved")


def _lin(reg, lane, warp=()):
    f = lambda bs: "[" + ", ".join(f"[{b}]" for b in bs) + "]"  # noqa: E731
    return f"#ttg.linear<{{register = {f(reg)}, lane = {f(lane)}, warp = {f(warp)}, block = []}}>"


@pytest.mark.parametrize("src,dst,kind", [
    # equal layouts: nothing moves
    (_lin([1, 2], [4, 8, 16, 32, 64]), _lin([1, 2], [4, 8, 16, 32, 64]), "none"),
    # the two register bits swap roles: each thread keeps its elements, reordered
    (_lin([1, 2], [4, 8, 16, 32, 64]), _lin([2, 1], [4, 8, 16, 32, 64]), "register"),
    # register bit 1 and lane bit 0 swap: elements cross lanes of one warp
    (_lin([1, 2], [4, 8, 16, 32, 64]), _lin([1, 4], [2, 8, 16, 32, 64]), "warp-shuffle"),
    # a lane bit and the warp bit swap: elements cross warps
    (_lin([1], [2, 4, 8, 16, 32], [64]), _lin([1], [2, 4, 8, 16, 64], [32]), "shared-memory"),
])
def test_convert_layout_classification(src, dst, kind):
    warps = 2 if "warp = [[" in src else 1
    c = _one(_mod(f"  %1 = ttg.convert_layout %0 : tensor<128xf32, {src}> -> tensor<128xf32, {dst}> loc(#loc1)", warps))
    assert (c.check, c.data["movement"]) == ("convert-layout", kind)
    assert c.severity == ("note" if kind == "shared-memory" else None)


def test_column_read_of_unswizzled_tile_is_16_way():
    # seed 004: 16x32 f32 read down column 0 by lanes 0-15: 16 rows 128 B apart, one bank
    rep = audit_text(audit_example(), "e.ttgir")
    c = rep.checks[0]
    assert (c.status, c.data["wavefronts"], c.loc) == ("counterexample", 16, "k.py:9")


def audit_example():
    from verilayout.audit.ttgir import EXAMPLE
    return EXAMPLE


def test_unsupported_layouts_and_unmodelled_ops_are_listed_not_skipped():
    text = _mod("  %1 = ttg.local_load %0 : !ttg.memdesc<16x16xf16, #ttg.weird<{a = 1}>, #smem> -> "
                "tensor<16x16xf16, #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], "
                "warpsPerCTA = [1, 1], order = [1, 0]}>> loc(#loc1)\n"
                "  ttg.async_copy_global_to_local %p, %m : tensor<16x16x!tt.ptr<f16>, #b> -> "
                "<16x16xf16, #s, #smem, mutable> loc(#loc1)", aliases="#smem = #ttg.shared_memory\n")
    rep = audit_text(text, "u.ttgir")
    assert [c.status for c in rep.checks] == ["unchecked", "unchecked"]
    assert rep.unsupported and "weird" in rep.unsupported[0].text


def test_amd_target_is_unchecked_with_reason():
    text = _mod("  %1 = ttg.local_load %0 : !ttg.memdesc<16x32xf32, #s, #smem> -> tensor<16x32xf32, #b> loc(#loc1)",
                aliases="#b = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], "
                "order = [0, 1]}>\n#s = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>\n"
                "#smem = #ttg.shared_memory\n").replace("cuda:90", "hip:gfx942")
    c = _one(text)
    if os.path.isdir(ROOT / "verilayout" / "hw" / "amd"):
        assert c.status in ("unchecked", "proved", "counterexample")
    else:
        assert (c.status, c.data["reason"]) == ("unchecked", "no AMD LDS model")


@pytest.mark.parametrize("data,what", [(b"\xff\xfe", "UTF-8"), ("tensor<" * 5000, "nested"),
                                       ("x" * ((64 << 20) + 1), "exceeds")])
def test_bad_input_is_a_layout_error(data, what):
    with pytest.raises(LayoutError, match=what):
        audit_text(data if what != "nested" else _mod("  %1 = ttg.local_load %0 : " + data + " loc(#loc1)"))


# ----- CLI and API -----------------------------------------------------------------------------

def test_cli_exit_codes_json_junit_sarif(tmp_path, capsys):
    sarif, junit = tmp_path / "a.sarif", tmp_path / "a.xml"
    assert main(["audit", str(FP8)]) == 0                     # a conflict is a warning
    capsys.readouterr()
    assert main(["audit", str(FP8), "--fail-on", "warning", "--json", "--sarif", str(sarif),
                 "--junit", str(junit)]) == 1
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"files", "errors", "summary"} and out["errors"] == []
    f = out["files"][0]
    assert set(f) >= {"path", "target", "num_warps", "layouts", "checks"}
    assert set(f["checks"][0]) == {"op", "line", "loc", "check", "status", "severity", "message", "data"}
    s = json.loads(sarif.read_text())
    res = s["runs"][0]["results"]
    assert s["version"] == "2.1.0" and len(res) == 1         # the warning (the note: only under --level note)
    warn = next(r for r in res if r["level"] == "warning")
    loc = warn["locations"][0]["physicalLocation"]
    # the path the TTGIR's loc holds (relative: to the source root, the current directory)
    assert loc["artifactLocation"] == {"uri": "examples/matmul_fp8.py", "uriBaseId": "SRCROOT"}
    assert loc["region"]["startLine"] == _b_load_line()
    assert junit.read_text().count("<testcase") == out["summary"]["checks"]
    assert main(["audit", str(tmp_path / "missing.ttgir")]) == 2
    bad = tmp_path / "bad.ttgir"
    bad.write_bytes(b"\xff")
    assert main(["audit", str(bad)]) == 2


def test_directory_and_stdin(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "k.ttgir").write_text(FP8.read_text())
    (tmp_path / "ignored.txt").write_text("x")
    rep = audit_paths([str(tmp_path)])
    assert [os.path.basename(f.path) for f in rep.files] == ["k.ttgir"]
    r = subprocess.run([sys.executable, "-m", "verilayout.cli", "audit", "-", "--fail-on", "warning"],
                       input=FP8.read_bytes(), capture_output=True, cwd=ROOT)
    assert r.returncode == 1 and b"8-way" in r.stdout


def test_assert_kernel_clean():
    assert assert_kernel_clean(str(FP8)).counts()["warnings"] == 1
    with pytest.raises(KernelNotClean, match="8-way"):
        assert_kernel_clean(FP8.read_text(), fail_on="warning")


def test_field_bug_transposed_zero_swizzle_b_operand_is_an_error():
    # Triton #10453 reconstructed: a K-major (transposed) B tile in nvmma_shared with swizzle 0.
    # Triton 3.9's own linear layout for it is plain column-major (checked with the wheel:
    # offset bases [1,0]..[32,0] then [0,1]..[0,32]): 8 consecutive K elements of one column
    # are 16 contiguous bytes, but the next column (n + 1) is 128 bytes away, while a no-swizzle
    # wgmma descriptor reads 8 x 16-byte core matrices as 128 contiguous bytes. No descriptor
    # reads it: the audit must say so without any property written for it.
    text = _mod("  %d = ttng.warp_group_dot %a, %b, %c {inputPrecision = 0 : i32} : "
                "!ttg.memdesc<64x64xf16, #sa, #smem> * !ttg.memdesc<64x64xf16, #sb, #smem> -> "
                "tensor<64x64xf32, #mma> loc(#loc1)", 4,
                aliases="#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], "
                "instrShape = [16, 64, 16]}>\n#sa = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = "
                "false, elementBitWidth = 16}>\n#sb = #ttg.nvmma_shared<{swizzlingByteWidth = 0, transposed = "
                "true, elementBitWidth = 16}>\n#smem = #ttg.shared_memory\n")
    rep = audit_text(text, "bug10453.ttgir")
    by = {c.data["operand"]: c for c in rep.checks}
    assert by["A"].status == "proved"
    assert (by["B"].status, by["B"].severity, by["B"].loc) == ("counterexample", "error", "k.py:7")
    assert "no sm_90 descriptor" in by["B"].message


# ----- AMD targets: the LDS model of hw/amd/lds.py ------------------------------------------------

def test_amd_corpus_loads_and_stores_are_checked_with_the_lds_model():
    for target in ("gfx942", "gfx950"):
        files = sorted((ROOT / "tests" / "corpus" / target).glob("*.ttgir"))
        banks = [c for f in files for c in audit_file(str(f)).checks if c.check == "bank-conflicts"]
        assert banks and all(c.status != "unchecked" for c in banks), [c.message for c in banks if c.status == "unchecked"][:3]
        assert {c.data["target"] for c in banks} == {target}


def test_amd_unswizzled_transposed_k_read_is_16_way():
    # attention on gfx942 reads K (64x64 f16) from #ttg.swizzled_shared<{vec = 1, perPhase = 1,
    # maxPhase = 1}> (no swizzle: row r at byte 128 r) into #linear1, whose lane bits 0-3 step rows
    # 1, 2, 4, 8 at the same columns. ds_read_b64 (8 bytes a lane) on gfx942 serves 16 consecutive
    # lanes per phase (AMD's guide, hw/amd/lds.py): lanes 0-15 read rows 0-15, all in banks 0-1
    # at 16 distinct words -> 16 cycles a phase; 4 phases -> 64 cycles against the ideal of
    # 64 lanes x 8 B / 128 B = 4.
    path = ROOT / "tests" / "corpus" / "gfx942" / "attention_fwd_d64_128x64_w4_s2.ttgir"
    c = next(c for c in audit_file(str(path)).checks if c.check == "bank-conflicts" and c.line == 107)
    assert (c.status, c.data["instruction"], c.data["ways"], c.data["wavefronts"], c.data["ideal"]) == \
        ("counterexample", "ds_read_b64", 16, 64, 4)


# ----- tensor memory (sm_100) ---------------------------------------------------------------------

def test_every_tmem_load_and_store_in_the_corpus_is_a_tcgen05_message():
    # Triton 3.9 assigns tmem_load/tmem_store register layouts that tcgen05.ld/st messages move
    # (32x32b for M = 128 tiles, 16x32bx2 for M = 64); the scale factors go through tcgen05.cp
    checks = [c for f in sorted((ROOT / "tests" / "corpus" / "cuda100").glob("*.ttgir"))
              for c in audit_file(str(f)).checks if c.check == "tmem-layout"]
    proved = [c for c in checks if c.status == "proved"]
    assert len(proved) >= 40 and {c.data["tmem_message"] for c in proved} == {"32x32b", "16x32bx2"}
    assert all(c.status == "proved" or c.data.get("reason") == "tcgen05.cp" for c in checks)


def test_a_tmem_load_into_a_layout_no_message_delivers_is_an_error():
    # the accumulator (128 x 128 f32 in TMEM lanes = rows) loaded into #blocked, where lane l holds
    # columns l (threadsPerWarp [1, 32]): a tcgen05.ld lane reads one TMEM lane = one row, so lane 1
    # would need row 0 column 1 from TMEM lane 0: no message shape delivers it
    path = ROOT / "tests" / "corpus" / "cuda100" / "matmul_f16_128x128x64_w4_s3.ttgir"
    lines = path.read_text().split("\n")
    assert "ttng.tmem_load" in lines[127] and lines[127].count("#linear>") == 1
    lines[127] = lines[127].replace("#linear>", "#blocked>")
    c = next(c for c in audit_text("\n".join(lines), "mutated.ttgir").checks if c.line == 128)
    assert (c.check, c.status, c.severity) == ("tmem-layout", "counterexample", "error")


def test_the_whole_corpus_is_read_and_only_unmodelled_ops_stay_unchecked():
    # the TTGIR files only (the PTX beside them have their own whole-corpus tests); the audits
    # test_corpus_audits_cleanly made of each file (tests/audited.py memoizes them)
    files = [audit_file(p) for p in CORPUS]
    assert len(files) >= 100
    for f in files:
        assert f.layouts_parsed == f.layouts_seen and not f.unsupported, (f.path, f.unsupported[:2])
    reasons = {c.data.get("reason") for f in files for c in f.checks if c.status == "unchecked"}
    # what no model covers yet, each named: tcgen05.cp of scale factors, TMEM A operands, and
    # NVIDIA padded_shared banks on the TTGIR side (an address map; the PTX audit checks them)
    assert reasons <= {"tcgen05.cp", "tensor-memory operand", "padded shared (NVIDIA TTGIR)"}, reasons
    assert not [c for f in files for c in f.checks if c.data.get("reason") == "internal error"]


# ----- TMA copies ----------------------------------------------------------------------------------

TMA = ROOT / "tests" / "corpus" / "cuda90" / "persistent_tma_matmul_128x128x64_w4_s3.ttgir"


def test_every_tma_copy_of_the_corpus_writes_the_declared_layout():
    checks = [c for f in sorted((ROOT / "tests" / "corpus").glob("cuda*/*.ttgir"))
              for c in audit_file(str(f)).checks if "tma_copy" in c.op]
    assert len(checks) >= 20 and {c.status for c in checks} == {"proved"}


def test_deepgemm_379_tma_swizzle_mismatch_is_an_error():
    # DeepGEMM #379: TMA wrote a tile with a 64-byte swizzle, the reader assumed 128-byte. Rebuilt
    # here: A's tensor descriptor gets a 64-byte nvmma_shared while the buffer keeps the 128-byte one
    text = TMA.read_text()
    lines = text.split("\n")
    i = next(k for k, ln in enumerate(lines) if "async_tma_copy_global_to_local %a_desc" in ln)
    assert "!tt.tensordesc<128x64xf16, #shared>" in lines[i]
    lines[i] = lines[i].replace("!tt.tensordesc<128x64xf16, #shared>", "!tt.tensordesc<128x64xf16, #sw64>")
    lines.insert(0, "#sw64 = #ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = false, elementBitWidth = 16}>")
    c = next(c for c in audit_text("\n".join(lines), "bug379.ttgir").checks if c.line == i + 2)
    assert (c.op, c.check, c.status, c.severity) == ("ttng.async_tma_copy_global_to_local", "copy-layout",
                                                     "counterexample", "error")
    assert "swizzlingByteWidth = 64" in c.data["descriptor_layout"] and "= 128" in c.data["shared_layout"]


# ----- TMA descriptors of rank 3 and 5 (rank-reducing copies) ----------------------------------------
# Triton writes a descriptor of rank 3 to 5 whose block is [1, ..., 1, M, K] into a 2-d buffer: the
# lowering drops the leading unit dims (a unit dim adds no element and no byte to the packed box).
# The corpus kernels batched_tma_matmul (block [1, 128, 64]) and ragged_tma_matmul ([1, 1, 1, 128, 64])
# are Triton's own output for correct kernels: every copy must be proved.

RANKED = {3: ROOT / "tests" / "corpus" / "cuda90" / "batched_tma_matmul_128x128x64_w4_s3.ttgir",
          5: ROOT / "tests" / "corpus" / "cuda90" / "ragged_tma_matmul_128x128x64_w4_s3.ttgir"}


@pytest.mark.parametrize("rank", sorted(RANKED))
@pytest.mark.parametrize("target", ["cuda90", "cuda100"])
def test_tma_copies_of_rank_3_and_5_are_proved(rank, target):
    path = Path(str(RANKED[rank]).replace("cuda90", target))
    text = path.read_text()
    assert f"rank = {rank}" in text                       # the descriptor really has that rank
    checks = [c for c in audit_file(str(path)).checks if "tma_copy" in c.op]
    kinds = {c.check for c in checks}
    assert {"copy-layout", "tma-write"} <= kinds
    assert {(c.check, c.status) for c in checks} == {(k, "proved") for k in kinds}, \
        [(c.line, c.check, c.message) for c in checks if c.status != "proved"]


def _mutated(path: Path, old: str, new: str) -> tuple[str, int]:
    """The TTGIR with ``old`` replaced by ``new`` on the first TMA load line holding it, and that line."""
    lines = path.read_text().split("\n")
    i = next(k for k, ln in enumerate(lines) if "async_tma_copy_global_to_local" in ln and old in ln)
    lines[i] = lines[i].replace(old, new)
    return "\n".join(lines), i + 1


def test_a_dropped_descriptor_dim_that_is_not_unit_is_an_error():
    # the block [2, 128, 64] holds twice the elements of the 128x64 buffer it is copied into
    text, line = _mutated(RANKED[3], "!tt.tensordesc<1x128x64xf16", "!tt.tensordesc<2x128x64xf16")
    got = [c for c in audit_text(text, "mutant.ttgir").checks if c.line == line and c.check == "copy-layout"]
    assert [(c.status, c.severity) for c in got] == [("counterexample", "error")]
    assert "[2, 128, 64]" in got[0].message and "[128, 64]" in got[0].message


def test_a_rank_5_descriptor_with_another_swizzle_is_an_error():
    text, line = _mutated(RANKED[5], "!tt.tensordesc<1x1x1x128x64xf16, #shared>",
                          "!tt.tensordesc<1x1x1x128x64xf16, #sw64r5>")
    text = ("#sw64r5 = #ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = false, elementBitWidth = 16, "
            "rank = 5}>\n" + text)
    got = [c for c in audit_text(text, "mutant.ttgir").checks if c.line == line + 1 and c.check == "copy-layout"]
    assert [(c.status, c.severity) for c in got] == [("counterexample", "error")]
