"""The PTX audit (issue 18): the reader on all real PTX of the corpus, and the wgmma descriptor
checks against the TTGIR plan, with lowering bugs planted in copies of real PTX.

Expected values come from outside the auditor: the sm_90 matrix-descriptor bit positions of the
PTX ISA (start address bits 0-13 in 16-byte units, LBO bits 16-29, SBO bits 32-45, layout type
bits 62-63: 1 = 128-byte swizzle, 2 = 64-byte, 3 = 32-byte), the lines of the corpus PTX found by
their text, and the planted edits derived below."""
from __future__ import annotations

import glob
from pathlib import Path

import pytest

from verilayout.audit import audit_ptx_text
from tests.audited import audit_file, audit_ptx_file
from verilayout.cli.main import main
from verilayout.errors import LayoutError
from verilayout.frontends.ptx import parse_ptx

ROOT = Path(__file__).resolve().parent.parent
PTX = sorted(glob.glob(str(ROOT / "tests" / "corpus" / "cuda*" / "*.ptx")))
STEM = ROOT / "tests" / "corpus" / "cuda90" / "matmul_f16_128x128x64_w4_s3"
SW128_SBO64 = (1 << 62) | (64 << 32)       # 128B swizzle, SBO 64 x 16 = 1024 bytes


def test_reader_reads_every_corpus_ptx():
    assert len(PTX) >= 60
    for p in PTX:
        m = parse_ptx(Path(p).read_bytes())
        assert m.target and m.target.startswith("sm_") and m.instrs and m.functions


@pytest.mark.parametrize("data, where", [(b"\xff\xfe", "byte 0"), (b"hello world\n", "not PTX"),
                                         (b".version 8.7\n.visible .entry f()\n{\nadd.s32 %r1, " + b"{" * 100 + b";\n}",
                                          "nested")])
def test_reader_bad_input_is_one_line_error(data, where):
    with pytest.raises(LayoutError) as e:
        parse_ptx(data)
    assert where in str(e.value) and "\n" not in str(e.value)


def _plan():
    ttgir = (STEM.with_suffix(".ttgir")).read_text()
    return ttgir, audit_file(str(STEM.with_suffix(".ttgir"))).checks


def _audit(ptx_text: str):
    ttgir, plan = _plan()
    return [c for c in audit_ptx_text(ptx_text, "mutated.ptx", ttgir, plan).checks if c.check.startswith("mma-")]


def _line(lines: list[str], text: str) -> int:
    hits = [i for i, ln in enumerate(lines) if text in ln]
    assert len(hits) == 1, (text, hits)
    return hits[0]


def test_every_wgmma_of_the_sm90_corpus_reads_its_planned_k_block():
    n = 0
    for p in [p for p in PTX if "/cuda90/" in p]:
        for c in audit_ptx_file(p).checks:
            if c.check != "mma-descriptor":
                continue
            assert c.status == "proved", (p, c.line, c.message)
            assert c.data["source"] == "ptx" and c.loc
            n += 1
    assert n >= 200


def test_unmutated_file_is_all_proved():
    checks = _audit(STEM.with_suffix(".ptx").read_text())
    assert len(checks) == 16 and {c.status for c in checks} == {"proved"}


def _first_wgmma(lines):
    return next(i for i, ln in enumerate(lines) if "wgmma.mma_async" in ln) + 1


@pytest.mark.parametrize("name, edit, operand", [
    # A's K-block 0 descriptor: SBO 32 x 16 = 512 bytes instead of 1024 (the 8-row group stride)
    ("sbo", lambda v: (1 << 62) | (32 << 32), "A"),
    # A's K-block 0 descriptor: layout type 2 (64-byte swizzle) over a 128-byte swizzled tile
    ("swizzle", lambda v: (2 << 62) | (64 << 32), "A"),
    # A's K-block 0 descriptor: the 128-byte swizzle with LBO and SBO exchanged (#8378's edit)
    ("lbo-sbo-swapped", lambda v: (1 << 62) | (1 << 32) | (64 << 16), "A"),
])
def test_planted_descriptor_field_bugs_are_errors_at_the_instruction(name, edit, operand):
    lines = STEM.with_suffix(".ptx").read_text().split("\n")
    k = _line(lines, f"or.b64 \t%rd210, %rd71, {SW128_SBO64};")
    lines[k] = lines[k].replace(str(SW128_SBO64), str(edit(SW128_SBO64)))
    bad = [c for c in _audit("\n".join(lines)) if c.status != "proved"]
    assert bad and all(c.severity == "error" for c in bad), [(c.line, c.message) for c in bad]
    assert {(c.line, c.data["operand"], c.data["k_block"]) for c in bad} == {(_first_wgmma(lines), operand, 0)}


def test_planted_k_block_start_bug_names_the_offset():
    # A's K-block 1 starts 2 x 16 = 32 bytes after K-block 0 (64 f16 of a 128-byte swizzled row are
    # 16 elements = 32 bytes per wgmma K of 16); plant 3 (48 bytes)
    lines = STEM.with_suffix(".ptx").read_text().split("\n")
    k = _line(lines, "add.s32 \t%r119, %r115, 2;")
    lines[k] = lines[k].replace("%r115, 2;", "%r115, 3;")
    bad = [c for c in _audit("\n".join(lines)) if c.status != "proved"]
    assert len(bad) == 1 and bad[0].severity == "error"
    c = bad[0]
    # 16 bytes away from where the plan puts K-block 1 relative to the other 7 instructions
    assert (c.data["operand"], c.data["k_block"], c.data["ptx_offset_bytes"]) == ("A", 1, 16)
    assert c.line == _first_wgmma(lines) + 5          # the second wgmma (5 PTX lines later)


def test_planted_b_lbo_bug():
    # B is MN-major: its LBO field (bits 16-29 of the 64-bit descriptor, bit 25 of the low word
    # = field 512, 8192 bytes between 64-element MN groups) planted as 256
    lines = STEM.with_suffix(".ptx").read_text().split("\n")
    k = _line(lines, "or.b32 \t%r118, %r117, 33554432;")
    lines[k] = lines[k].replace("33554432", str(256 << 16))
    bad = [c for c in _audit("\n".join(lines)) if c.status != "proved"]
    assert bad and {c.data["operand"] for c in bad} == {"B"} and all(c.severity == "error" for c in bad)


def test_swapped_operands_are_errors():
    lines = STEM.with_suffix(".ptx").read_text().split("\n")
    k = _first_wgmma(lines) - 1
    assert "%rd210, %rd211," in lines[k]
    lines[k] = lines[k].replace("%rd210, %rd211,", "%rd211, %rd210,")
    bad = [c for c in _audit("\n".join(lines)) if c.status != "proved"]
    assert {(c.line, c.data["operand"]) for c in bad} == {(k + 1, "A"), (k + 1, "B")}


def test_cli_pairs_ptx_with_ttgir_and_jobs_do_not_change_the_report(tmp_path, capsys):
    d = tmp_path / "cache" / "abc"
    d.mkdir(parents=True)
    for suf in (".ttgir", ".ptx"):
        (d / ("k" + suf)).write_text(STEM.with_suffix(suf).read_text())
    import json
    outs = []
    for jobs in ("1", "2"):
        assert main(["audit", str(tmp_path / "cache"), "--json", "--jobs", jobs]) == 0
        rep = json.loads(capsys.readouterr().out)
        for f in rep["files"]:
            for c in f["checks"]:
                c.pop("seconds", None)
        rep.pop("summary")
        outs.append(rep)
    assert outs[0] == outs[1]
    paths = [f["path"] for f in outs[0]["files"]]
    assert [Path(p).name for p in paths] == ["k.ptx", "k.ttgir"]
    ptx = outs[0]["files"][0]
    assert all(c["data"]["source"] == "ptx" for c in ptx["checks"])
    assert len([c for c in ptx["checks"] if c["check"] == "mma-descriptor"]) == 16


def test_ptx_without_ttgir_is_checked_on_its_own(tmp_path):
    # no plan: each wgmma's descriptors and K-block chain are checked from the PTX alone (the
    # corpus kernel: 8 wgmma m64n128k16, 2 chains of 4 K-blocks); 8 shape checks, 16 descriptor
    # checks, 2 x 2 x 3 = 12 K-block advances, all proved
    p = tmp_path / "alone.ptx"
    p.write_text(STEM.with_suffix(".ptx").read_text())
    mma = [c for c in audit_ptx_file(str(p)).checks if c.check.startswith("mma-")]
    assert {c.status for c in mma} == {"proved"}
    assert len([c for c in mma if c.check == "mma-instruction"]) == 8
    assert len([c for c in mma if "advance_bytes" in c.data]) == 12
    assert all(c.data["plan"] == "none" for c in mma)


# ----- Triton #8378: LBO and SBO swapped for an unswizzled operand --------------------------------

UNSW = ROOT / "tests" / "fixtures" / "ptx" / "matmul_sm90_n8_unswizzled"


def _audit_unswizzled(ptx_text: str):
    ttgir = UNSW.with_suffix(".ttgir").read_text()
    return [c for c in audit_ptx_text(ptx_text, "k.ptx", ttgir, audit_file(str(UNSW.with_suffix(".ttgir"))).checks).checks
            if c.check.startswith("mma-")]


def test_unswizzled_operand_as_triton_lowers_it_is_proved():
    # B (64 x 8 f16, MN-major, no swizzle) is read with LBO 8 x 16 = 128 bytes and SBO 0: proved;
    # Triton 3.9 also sets the base-offset field (bits 49-51) on K-blocks 1-3, which the PTX ISA
    # defines only for swizzled modes: reported as warnings, never as a proof failure
    checks = _audit_unswizzled(UNSW.with_suffix(".ptx").read_text())
    assert not [c for c in checks if c.severity == "error"]
    assert len([c for c in checks if c.status == "proved"]) == 8
    warns = [c for c in checks if c.severity == "warning"]
    assert len(warns) == 3 and {c.data["operand"] for c in warns} == {"B"}


def test_triton_8378_lbo_sbo_swapped_on_the_unswizzled_operand_is_caught():
    # the lowering of #8378 wrote the leading-byte offset into SBO and the stride into LBO: B's
    # K-block 0 descriptor gets LBO 0 and SBO 8 (bits 32-45) instead of LBO 8 (bits 16-29)
    lines = UNSW.with_suffix(".ptx").read_text().split("\n")
    k = _line(lines, "or.b32 \t%r46, %r45, 524288;")
    lines[k] = lines[k].replace("524288", "0")
    c = _line(lines, "cvt.u64.u32 \t%rd55, %r46;")
    lines[c] = "\tcvt.u64.u32 \t%rd990, %r46;\n\tor.b64 \t%rd55, %rd990, " + str(8 << 32) + ";"
    text = "\n".join(lines)
    bad = [x for x in _audit_unswizzled(text) if x.severity == "error"]
    first = next(i for i, ln in enumerate(text.split("\n")) if "wgmma.mma_async" in ln) + 1
    assert [(x.line, x.data["operand"], x.data["k_block"]) for x in bad] == [(first, "B", 0)]
    assert bad[0].data["counterexample"]


# ----- sm_100: tcgen05.mma shared-memory and instruction descriptors --------------------------

BW = ROOT / "tests" / "corpus" / "cuda100" / "matmul_f16_128x128x64_w4_s3"


def _audit_bw(text: str):
    return [c for c in audit_ptx_text(text, "k.ptx", BW.with_suffix(".ttgir").read_text(),
                                      audit_file(str(BW.with_suffix(".ttgir"))).checks).checks
            if c.check.startswith("mma-")]


def test_every_tcgen05_mma_of_the_sm100_corpus_is_proved():
    kinds = {"mma-descriptor": 0, "mma-instruction": 0}
    for p in [p for p in PTX if "/cuda100/" in p]:
        for c in audit_ptx_file(p).checks:
            if c.check not in kinds:
                continue
            assert c.status == "proved", (p, c.line, c.message)
            kinds[c.check] += 1
    assert kinds["mma-descriptor"] >= 200 and kinds["mma-instruction"] >= 100


# the instruction descriptor Triton wrote: 0x08210010 = M 128 (bits 24-28: 8 x 16), N 128
# (bits 17-22: 16 x 8), A K-major (bit 15 = 0), B MN-major (bit 16 = 1), D f32 (bit 4)
IDESC = 136380432


@pytest.mark.parametrize("new, what", [
    ((IDESC & ~(0x3F << 17)) | (8 << 17), "N = 64"),          # N field 8: 64 columns, B has 128
    (IDESC ^ (1 << 16), "operand B is read K-major"),          # B major bit cleared
    (IDESC ^ (1 << 15), "operand A is read MN-major"),         # A major bit set
])
def test_planted_instruction_descriptor_bugs(new, what):
    lines = BW.with_suffix(".ptx").read_text().split("\n")
    k = _line(lines, f"mov.b32 \t%r254, {IDESC};")
    lines[k] = lines[k].replace(str(IDESC), str(new))
    bad = [c for c in _audit_bw("\n".join(lines)) if c.severity == "error"]
    assert bad and all(c.check == "mma-instruction" for c in bad) and what in bad[0].message


def test_planted_sm100_swizzle_mode_bug():
    # the descriptors' high word 0x40004040: SBO 64 (1024 B), bit 46 set (the fixed 0b001 of bits
    # 46-48), swizzle mode 2 (bits 61-63: 128-byte); plant mode 4 (64-byte) on the first K-block
    hi = 0x40004040
    lines = BW.with_suffix(".ptx").read_text().split("\n")
    k = _line(lines, f"mov.b32 \t%r260, {hi};")
    lines[k] = lines[k].replace(str(hi), str((hi & ~(7 << 29)) | (4 << 29)))
    bad = [c for c in _audit_bw("\n".join(lines)) if c.severity == "error"]
    # the word is shared by A and B and by the 4 K-blocks of the first copy of the loop body
    firsts = [i + 1 for i, ln in enumerate(lines) if "tcgen05.mma" in ln][:4]
    assert {(c.line, c.data["k_block"], c.data["operand"]) for c in bad} == \
        {(ln, k, o) for k, ln in enumerate(firsts) for o in "AB"}


# ----- shared-memory accesses from PTX addresses ----------------------------------------------

def _bank(path):
    return [c for c in audit_ptx_file(str(path)).checks if c.check == "bank-conflicts"]


def test_w4a16_dequantized_store_conflict_is_seen_in_the_ptx_too():
    # the TTGIR model counts 8 wavefronts for the dequantized B store (examples/w4a16 and the
    # corpus); the PTX stores (st.shared.v2.b16, 4 bytes a lane) of the same line: lanes 0..7 at
    # offsets 0, 2048, ... (one bank, 8 words) -> 8 wavefronts for 1 ideal, from the addresses alone
    p = ROOT / "tests" / "corpus" / "cuda90" / "w4a16_matmul_64x128x64_w4_s3.ptx"
    stores = [c for c in _bank(p) if c.loc == "kernels.py:146" and c.data["kind"] == "store"
              and c.status == "counterexample"]
    assert stores and all(c.data["wavefronts"] == 8 and c.data["ideal"] == 1 for c in stores)
    assert all(c.data["ttgir_wavefronts"] == 8 for c in stores)


def test_tf32_four_byte_cp_async_is_4_way_in_ptx_and_ttgir():
    # B's cp.async copies 4 bytes a lane (no contiguity attribute): lane offsets step 144 bytes
    # (a 128-byte row plus the 16-byte swizzle step), so lanes 0, 8, 16, 24 land 1024 bytes apart
    # in bank 0: 4 words -> 4 wavefronts, ideal 1
    p = ROOT / "tests" / "corpus" / "cuda90" / "matmul_tf32_128x128x32_w4_s3.ptx"
    cps = [c for c in _bank(p) if c.op.startswith("cp.async") and c.loc == "kernels.py:26"]
    assert cps and all((c.data["wavefronts"], c.data["ideal"]) == (4, 1) for c in cps)
    offs = cps[0].data["lane_offsets"]
    assert offs[:2] == [0, 144]
    assert all(c.data["ttgir_wavefronts"] == 4 for c in cps)


def test_ptx_and_ttgir_conflict_factors_agree_on_the_corpus():
    from collections import defaultdict
    agree = differ = 0
    for p in PTX:
        per = defaultdict(list)
        for c in _bank(p):
            if c.data.get("ttgir_wavefronts") is not None:
                per[(c.loc, c.data["kind"])].append(c)
        for cs in per.values():
            ptx = max(c.data["wavefronts"] / c.data["ideal"] for c in cs)
            d = cs[0].data
            ttgir = d["ttgir_wavefronts"] / max(1, d["ttgir_ideal"])
            agree += ptx == ttgir
            differ += ptx != ttgir
    # no difference: the one reported earlier (fp8 B stores) was A's stores read with B's source
    # line, a .loc written inside an inline-asm load outliving the asm region (see the reader)
    assert agree >= 150 and differ == 0, (agree, differ)
