"""CuTe-DSL kernels audited like Triton's: the stored corpus (tests/cutedsl/corpus, the CUTLASS Python
DSL's own Hopper dense GEMM example compiled for sm_90a by tests/cutedsl/generate.py) read by
frontends/cute_mlir, and every wgmma descriptor of its PTX proved against the MLIR's shared layouts
(audit/cute_dsl). Planted bugs are edits of the stored PTX/MLIR text made here."""
from __future__ import annotations

import gzip
import json
import os
import re

import pytest

from verilayout.audit.cute_dsl import audit_pair, block_of, mma_plans
from verilayout.core.cute.units import offset_bytes
from verilayout.errors import LayoutError
from verilayout.frontends.cute_mlir import Memref, TiledMma, TmaAtom, parse_cute_mlir, split_top
from tests.audited import audit_cute_pair

CORPUS = os.path.join(os.path.dirname(__file__), "cutedsl", "corpus")
with open(os.path.join(CORPUS, "manifest.json")) as _f:
    MANIFEST = json.load(_f)
KERNELS = sorted(MANIFEST["kernels"])
GEMMS = [k for k in KERNELS if k.startswith("hopper_gemm")]
HOPPER = [k for k in KERNELS if k.startswith("hopper")]
BLACKWELL = "blackwell_gemm_f16_kk_128x128"
PAIR = "blackwell_gemm_f16_kk_256x128_2cta"
GROUPED = "hopper_grouped_gemm_f16_kk_128x128"
KK = "hopper_gemm_f16_kk_128x128"
FMHA = "hopper_fmha_f16_d128_64x128"
#: the 128B-swizzle descriptor constant the DSL ORs into every operand's start (bits 14-63):
#: LBO 1 (16 B), SBO 64 (1024 B), layout type 1 = 128B swizzle (PTX ISA, matrix descriptor format)
DESC_HI = (1 << 62) | (64 << 32) | (1 << 16)


def _text(name: str, kind: str) -> str:
    with gzip.open(os.path.join(CORPUS, f"{name}.{kind}.gz"), "rt") as f:
        return f.read()


def _wgmma_lines(ptx: str) -> list[int]:
    return [n for n, line in enumerate(ptx.splitlines(), 1) if line.lstrip().startswith("wgmma.mma_async")]


def _shared_a_lines(ptx: str) -> list[int]:
    """wgmma lines whose A is a descriptor (``wgmma ... {d...}, %rdA, %rdB, ...``), not a register
    vector (``{d...}, {a...}, %rdB``)."""
    return [n for n, line in enumerate(ptx.splitlines(), 1) if line.lstrip().startswith("wgmma.mma_async")
            and not line.split("}", 1)[1].lstrip(" ,").startswith("{")]


def _groups(ptx: str) -> list[list[int]]:
    """wgmma line numbers cut at each wgmma.commit_group (written here from the text)."""
    out, cur = [], []
    for n, line in enumerate(ptx.splitlines(), 1):
        s = line.strip()
        if s.startswith("wgmma.mma_async"):
            cur.append(n)
        elif s.startswith("wgmma.commit_group") and cur:
            out.append(cur)
            cur = []
    return out + ([cur] if cur else [])


def _by(report, operand: str, status: str | None = None) -> set[int]:
    return {c.line for c in report.checks if c.data.get("operand") == operand
            and (status is None or c.status == status)}


def _mma(rep) -> list:
    return [c for c in rep.checks if c.check == "mma-descriptor"]


@pytest.fixture(scope="module")
def audited() -> dict:
    return {k: audit_cute_pair(_text(k, "mlir"), _text(k, "ptx"), f"{k}.ptx") for k in KERNELS}


# ----- the corpus and its manifest -------------------------------------------------------------

def test_manifest_records_versions_and_every_file_exists():
    assert MANIFEST["nvidia-cutlass-dsl"] == "4.8.1"
    assert re.fullmatch(r"[0-9a-f]{40}", MANIFEST["cutlass_commit"])
    for name, cfg in MANIFEST["kernels"].items():
        assert cfg["arch"] in ("sm_90a", "sm_100a")
        for f in cfg["files"]:
            assert os.path.getsize(os.path.join(CORPUS, f)) > 1000, f
        assert f".target {cfg['arch']}" in _text(name, "ptx")


# ----- the front end ---------------------------------------------------------------------------

def test_split_top_respects_brackets_and_strings():
    assert split_top('f16, smem, align<1024>, S<3,4,3>, "((8,16),(64,1)):((64,512),(1,0))"') == \
        ["f16", "smem", "align<1024>", "S<3,4,3>", '"((8,16),(64,1)):((64,512),(1,0))"']


def test_memref_reads_the_dsl_k_major_sw128_atom_as_the_ptx_isa_swizzle():
    """The A operand's smem tensor of the K-major f16 GEMM: every (m, k) of the 128 x 64 tile at the
    byte the PTX ISA's 128B swizzle gives (16-byte chunk index XOR row mod 8 inside 8 x 128-byte
    atoms stacked 1024 bytes apart along M), written out here."""
    mod = parse_cute_mlir(_text(KK, "mlir"))
    plan = mma_plans(mod)[0]
    a = plan.operand("A")
    assert isinstance(a.memref, Memref) and a.memref.space == "smem" and a.memref.swizzle == (3, 4, 3)
    assert a.memref.layout.startswith("((8,16),(64,1),(1,")           # (M, K, stage)
    for m in range(128):
        for k in range(64):
            lin = (m % 8) * 128 + (m // 8) * 1024 + 2 * k
            want = lin ^ (((lin >> 7) & 7) << 4)
            assert offset_bytes(a.tile, (m, k)) == want, (m, k)


def test_memref_reads_the_mn_major_tile_as_the_ptx_isa_swizzle():
    """The M-major A tile (128 x 64 f16): M contiguous in 64-element (128-byte) rows, 8 K rows per
    1024-byte atom, two M atoms 8 KB apart (128 x 64 x 2 bytes / 2), K groups of 8 1 KB apart."""
    a = mma_plans(parse_cute_mlir(_text("hopper_gemm_f16_mn_128x128", "mlir")))[0].operand("A")
    assert a.major == "MN"
    for m in range(128):
        for k in range(64):
            lin = (m % 64) * 2 + (k % 8) * 128 + (k // 8) * 1024 + (m // 64) * 8192
            want = lin ^ (((lin >> 7) & 7) << 4)
            assert offset_bytes(a.tile, (m, k)) == want, (m, k)


@pytest.mark.parametrize("name", GEMMS)
def test_tiled_mma_and_tma_atoms_match_the_config(name):
    cfg = MANIFEST["kernels"][name]
    mod = parse_cute_mlir(_text(name, "mlir"))
    tm, tn = cfg["tile_shape_mn"]
    (plan,) = mma_plans(mod)
    mma = plan.mma
    assert isinstance(mma, TiledMma) and mma.arch == "sm90"
    # the example's rule: two MMA warpgroups along M when M > 64 and N > 128, and one m64nN atom
    # spans the CTA tile's N
    assert mma.atoms == ((2, 1, 1) if tm > 64 and tn > 128 else (1, 1, 1))
    assert mma.shape[:2] == (64, tn)
    bits = 8 if "e4m3" in name else 16
    assert mma.shape[2] == 256 // bits                               # K = 32 bytes
    assert mma.majors == (cfg["a_major"] if cfg["a_major"] == "k" else "mn",
                          cfg["b_major"] if cfg["b_major"] == "k" else "mn")
    assert plan.operand("A").extents == (tm, 4 * mma.shape[2])       # the example: 4 K-blocks per tile
    assert plan.operand("B").extents == (tn, 4 * mma.shape[2])
    tmas = {t.text: t for t in (mod.type_of(v) for v in mod.types) if isinstance(t, TmaAtom)}
    loads = [t for t in tmas.values() if t.kind == "non_exec_tiled_tma_load"]
    # a 128B-swizzled TMA box is 128 bytes along its contiguous dimension (cuTensorMapEncodeTiled:
    # boxDim[0] x element size <= the swizzle span) and spans the operand tile's other extent:
    # MN rows for a K-major operand, the 4 K-blocks for an MN-major one
    outer = {name: (ext[0] if major == "k" else ext[1]) for name, major, ext in
             (("A", cfg["a_major"], plan.operand("A").extents), ("B", cfg["b_major"], plan.operand("B").extents))}
    assert sorted({t.copy_bits for t in loads}) == sorted({128 * 8 * outer["A"], 128 * 8 * outer["B"]})


def test_bad_mlir_is_one_line_errors():
    with pytest.raises(LayoutError, match="no CuTe op"):
        parse_cute_mlir("module {\n}\n")
    with pytest.raises(LayoutError, match=r"^line 1, col \d+: unbalanced"):
        parse_cute_mlir('%a = cute.get_iter(%s) : !cute.memref<i8, smem, align<1024>, "64:1">>\n')
    with pytest.raises(LayoutError, match="expected align<N>"):
        parse_cute_mlir('%a = cute.get_iter(%s) : !cute.memref<i8, smem, 1024, "64:1">\n').type_of("%a")


def test_block_order_is_cutes_column_major_serpentine():
    # cute/algorithm/gemm.hpp: for n, for m, ms = (n odd) ? M-1-m : m
    got, want = [block_of(b, 3) for b in range(6)], []
    for n in range(2):
        for m in range(3):
            want.append((3 - 1 - m if n & 1 else m, n))
    assert got == want


# ----- the audit on the unmodified corpus -------------------------------------------------------

@pytest.mark.parametrize("name", HOPPER)
def test_corpus_every_wgmma_operand_proved_no_error(name, audited):
    rep = audited[name]
    lines = _wgmma_lines(_text(name, "ptx"))
    assert lines, name
    assert [c for c in rep.checks if c.severity == "error"] == []
    assert all(c.status == "proved" for c in _mma(rep)), [c.message for c in _mma(rep) if c.status != "proved"][:2]
    # each wgmma: one proved check per shared operand (B always; A where it is a descriptor)
    assert _by(rep, "B", "proved") == set(lines)
    assert _by(rep, "A", "proved") == set(_shared_a_lines(_text(name, "ptx")))
    assert len(_mma(rep)) == len(lines) + len(_shared_a_lines(_text(name, "ptx")))


def test_fmha_q_operand_spans_two_swizzle_atom_columns_and_is_proved(audited):
    """The DSL's Hopper FMHA (head dim 128): Q is 64 x 128 f16 K-major, two 128-byte atom columns
    4096 elements (8 KB) apart (S<3,4,3> o ((8,8),(64,2)):((64,512),(1,4096))); K-blocks 0-3 start
    32 bytes apart in the first column, K-blocks 4-7 in the second, 8192 bytes on (16-byte units:
    2 k and 512 + 2 (k - 4)). Every one is proved (the descriptor-only audit once called 5-7 errors)."""
    plans = mma_plans(parse_cute_mlir(_text(FMHA, "mlir")))
    assert sorted(p.mma.frag_kind for p in plans) == ["rs", "ss"]          # Q K^T from smem, P V with P in registers
    qk = next(p for p in plans if p.mma.frag_kind == "ss")
    assert qk.operand("A").memref.layout.startswith("((8,8),(64,2),")
    rep = audited[FMHA]
    a = sorted((c.data["k_block"], int(c.data["plan_descriptor"], 16) & 0x3FFF) for c in rep.checks
               if c.data.get("operand") == "A")
    assert a == [(k, 2 * k if k < 4 else 512 + 2 * (k - 4)) for k in range(8)]
    assert all(c.status == "proved" for c in _mma(rep))


# ----- planted bugs ----------------------------------------------------------------------------

def _plant(ptx: str, old: str, new: str, nth: int = 0) -> str:
    parts = ptx.split(old)
    assert len(parts) > nth + 1, old
    return old.join(parts[:nth + 1]) + new + old.join(parts[nth + 1:])


def _first_group_a_lines(ptx: str) -> set[int]:
    return set(_groups(ptx)[0])


@pytest.mark.parametrize("bug, hi", [("SBO 2048", (1 << 62) | (128 << 32) | (1 << 16)),
                                     ("swizzle 64B", (2 << 62) | (64 << 32) | (1 << 16))])
def test_planted_descriptor_field_bug_is_an_error_at_each_wgmma_reading_it(bug, hi):
    """The first descriptor constant of the PTX is operand A's of the first (prologue) wgmma group
    (shared memory + 1024: the MLIR's ``sA`` field); changing it breaks exactly that group's A."""
    ptx = _text(KK, "ptx")
    first = ptx.index(str(DESC_HI))
    assert "1024" in ptx[ptx.rfind("add.s32", 0, first):first]   # the A buffer, 1024 bytes in
    bad = _plant(ptx, f", {DESC_HI};", f", {hi};")
    rep = audit_pair(_text(KK, "mlir"), bad)
    errors = {c.line for c in rep.checks if c.severity == "error"}
    assert errors == _first_group_a_lines(ptx) == _by(rep, "A", "counterexample"), bug
    assert _by(rep, "B", "proved") == set(_wgmma_lines(ptx))
    assert all("do not read the MLIR's shared layout" in c.message for c in rep.checks if c.severity == "error")


def test_planted_k_block_start_is_an_error_at_its_line():
    """One K-block's start moved by 64 bytes (``| 6`` -> ``| 10`` in 16-byte units): only the wgmma
    reading that descriptor is an error, with the distance in bytes."""
    ptx = _text(KK, "ptx")
    m = re.search(r"or\.b32 \t(%r\d+), (%r\d+), 6;", ptx)
    reg = m.group(1)
    desc = re.search(r"mov\.b64 \t(%rd\d+), \{" + re.escape(reg) + r",", ptx).group(1)
    target = [n for n, line in enumerate(ptx.splitlines(), 1)
              if line.startswith("wgmma.mma_async") and re.search(r"\}, " + re.escape(desc) + r",", line)]
    assert len(target) == 1
    bad = ptx.replace(m.group(0), m.group(0).replace(", 6;", ", 10;"), 1)
    rep = audit_pair(_text(KK, "mlir"), bad)
    errors = [c for c in rep.checks if c.severity == "error"]
    assert {c.line for c in errors} == set(target)
    assert errors[0].data["operand"] == "A"
    assert any(c.data.get("ptx_offset_bytes") == 64 or "64 bytes" in c.message for c in errors)


def test_planted_plan_change_in_the_mlir_is_caught():
    """The plan matters: the operands' shared layout in the MLIR given 8-row groups 2048 bytes apart
    (stride 1024 elements: what an SBO of 2048 reads) and the unchanged PTX (SBO 1024) is an error at
    every wgmma, for both operands (A and B share the memref type in this config)."""
    mlir = _text(KK, "mlir")
    alias = re.search(r"^!memref_smem_f16 = .*$", mlir, re.M).group(0)
    assert "(64,512),(1,0),(0,8192)" in alias
    bad = mlir.replace(alias, alias.replace("(64,512),(1,0),(0,8192)", "(64,1024),(1,0),(0,16384)"), 1)
    rep = audit_pair(bad, _text(KK, "ptx"))
    lines = set(_wgmma_lines(_text(KK, "ptx")))
    assert _by(rep, "A", "counterexample") == lines == _by(rep, "B", "counterexample")
    assert all(c.severity == "error" for c in _mma(rep))


def test_plan_no_descriptor_can_read_is_unknown_never_proved():
    """A 64-byte swizzle on 128-byte rows (S<3,4,3> -> S<2,4,3> in the MLIR) is no layout a wgmma
    descriptor reads: every operand check is unknown, with the reason, never proved."""
    mlir = _text(KK, "mlir")
    alias = re.search(r"^!memref_smem_f16 = .*$", mlir, re.M).group(0)
    rep = audit_pair(mlir.replace(alias, alias.replace("S<3,4,3>", "S<2,4,3>"), 1), _text(KK, "ptx"))
    assert _mma(rep) and all(c.status == "unknown" for c in _mma(rep))
    assert "no sm_90 descriptor reads this layout" in _mma(rep)[0].message


def test_wgmma_without_a_plan_is_unchecked_not_proved():
    mlir = _text(KK, "mlir").replace("cute.tiled.mma.partition", "cute.tiled.mma.partitionX")
    rep = audit_pair(mlir, _text(KK, "ptx"))
    assert _mma(rep) and all(c.status == "unchecked" for c in _mma(rep))
    assert {c.line for c in _mma(rep)} == set(_wgmma_lines(_text(KK, "ptx")))


# ----- the command line ------------------------------------------------------------------------

def test_cli_audits_a_ptx_against_the_mlir_beside_it(tmp_path, capsys):
    """``verilayout audit K.ptx`` with ``K.mlir`` beside it (as ``K.ttgir`` for Triton): exit 0 on the
    DSL's kernel, 1 on the planted SBO, and the finding names the PTX line and the Python line."""
    from verilayout.cli.main import main
    ptx = _text(KK, "ptx")
    for stem, text in (("good", ptx), ("bad", _plant(ptx, f", {DESC_HI};", f", {(1 << 62) | (128 << 32) | (1 << 16)};"))):
        (tmp_path / f"{stem}.mlir").write_text(_text(KK, "mlir"))
        (tmp_path / f"{stem}.ptx").write_text(text)
    assert main(["audit", "--no-cache", str(tmp_path / "good.ptx")]) == 0
    # 32 descriptors, 12 TMA copies x 2 checks, 16 stmatrix; the host side: 3 tensor maps, 12 copies' grid, 1 launch
    assert "88 proved, 0 errors" in capsys.readouterr().out
    assert main(["audit", "--no-cache", str(tmp_path / "bad.ptx")]) == 1
    out = capsys.readouterr().out
    first = _groups(ptx)[0][0]
    assert f"error: line {first} (dense_gemm.py:" in out
    # both files named, as for TTGIR + PTX: one report, the PTX's
    assert main(["audit", "--no-cache", str(tmp_path / "good.mlir"), str(tmp_path / "good.ptx")]) == 0
    assert "1 file(s), 88 checks: 88 proved, 0 errors" in capsys.readouterr().out


def test_planted_buffer_offset_is_an_error_at_each_wgmma_of_its_group():
    """The main loop's A buffer moved 1 KB (``smem + 1024`` -> ``smem + 2048``: the MLIR allocates sA
    1024 bytes into shared memory, 7 stages 16 KB apart): its descriptors are still well formed and
    consistent with each other, but their base is no stage of the buffer for any value of the stage
    register: an error at each wgmma of that group, operand A only."""
    ptx = _text(KK, "ptx")
    mainloop = ptx.index("wgmma.commit_group")             # after the prologue's group
    m = re.compile(r"add\.s32 \t(%r\d+), (%r\d+), 1024;").search(ptx, mainloop)
    bad = ptx[:m.start()] + m.group(0).replace("1024;", "2048;") + ptx[m.end():]
    rep = audit_pair(_text(KK, "mlir"), bad)
    errors = {c.line for c in rep.checks if c.severity == "error"}
    assert errors == set(_groups(ptx)[1]) == _by(rep, "A", "counterexample")
    assert _by(rep, "B", "proved") == set(_wgmma_lines(ptx))
    assert all("no pipeline stage of the buffer" in c.message for c in rep.checks if c.severity == "error")


# ----- sm_100a (tcgen05) ------------------------------------------------------------------------

def _tc05_lines(ptx: str) -> list[int]:
    return [n for n, line in enumerate(ptx.splitlines(), 1) if line.lstrip().startswith("tcgen05.mma")]


#: the sm_100 descriptor constant of the DSL's Blackwell GEMM (bits 14-63): version 0b001 (bits 46-48),
#: swizzle code 2 = 128B (bits 61-63), SBO 1024 B, LBO 16 B, base offset 0 (PTX ISA 9.7.16.4.1, Table 40)
BW_HI = (2 << 61) | (1 << 46) | (64 << 32) | (1 << 16)


def test_blackwell_tcgen05_descriptors_proved_at_a_128_byte_aligned_buffer(audited):
    """The DSL's Blackwell dense GEMM (1 CTA, 128 x 128 x 64 tile, 6 stages): every tcgen05.mma's A and
    B descriptor is proved against the MLIR's K-major SW128 tile, although the DSL places A at shared
    memory + 16512 (16512 mod 1024 = 128: its sm_100 memrefs are align<128>) with base offset 0: the
    position-dependent swizzle rule, its sm_100 part labelled an inference in every message; the stage
    check places A and B at the offsets the PTX adds (16512, 114816), itself labelled an inference."""
    ptx = _text(BLACKWELL, "ptx")
    assert "[%r13+16512]" in ptx and "[%r13+114816]" in ptx and f", {BW_HI};" in ptx
    assert 16512 % 1024 == 128
    rep = audited[BLACKWELL]
    lines = set(_tc05_lines(ptx))
    assert len(lines) == 4                                       # K = 64 in 4 K-blocks of 16
    assert _by(rep, "A", "proved") == lines == _by(rep, "B", "proved")
    assert not [c for c in rep.checks if c.severity == "error"]
    for c in _mma(rep):
        assert "at any base: base offset 0" in c.message and "inference: tcgen05" in c.message
        assert c.data["base_offset"] == 0
    assert all("16512 bytes into" in c.message for c in _mma(rep) if c.data["operand"] == "A")
    assert all("114816 bytes into" in c.message for c in _mma(rep) if c.data["operand"] == "B")
    assert all("inference: the DSL places" in c.message for c in _mma(rep))


def test_position_dependent_swizzle_rule_against_the_address_model_brute_force():
    """The rule the sm_100 proofs rest on, by brute force (every element of the DSL's 128 x 64 f16
    K-major A tile, each of the 4 K-blocks): with base offset 0 the hardware address model
    (measured on sm_90: swizzle on absolute address bits) reads element (m, k) at the buffer base
    16512 at exactly the byte CuTe's position-dependent swizzle (``swizzle_ptr``: the 128B swizzle,
    16-byte chunk XOR 128-byte row mod 8, applied to the ABSOLUTE address ``16512 + L(m, k)``,
    written out here) gives it; the buffer-relative reading (``16512 + Sw(L)``) differs; base offset 1
    (what ``(16512 >> 7) & 7`` would give) reads neither."""
    from verilayout.hw.nvidia.descriptor import encode, hardware_address_function
    base = 16512

    def sw(x):
        return x ^ (((x >> 7) & 7) << 4)
    for bo, want_match in ((0, True), (1, False)):
        hits = rel = 0
        for kb in range(4):
            d = encode(start_address=base + 32 * kb, lbo=16, sbo=1024, swizzle="128B", arch="sm_100", base_offset=bo)
            f = hardware_address_function(d, major="K", dtype="f16", mn_extent=128)
            for m in range(128):
                for k in range(16):
                    lin = (m % 8) * 128 + (m // 8) * 1024 + 2 * (16 * kb + k)     # L(m, k) in bytes
                    got = f.eval(m, k) // 8
                    hits += got == sw(base + lin)
                    rel += got == base + sw(lin)
        assert (hits == 4 * 128 * 16) == want_match and (bo == 1 or rel < hits), (bo, hits, rel)


def test_cutlass_make_umma_desc_never_encodes_a_base_offset():
    """CUTLASS's ``make_umma_desc`` (the recorded host-only oracle run over every atom, element width
    and K-block, tests/oracles/cutlass/umma_desc_oracle.recorded.txt) writes base offset 0 whatever the
    start: the convention the DSL's PTX follows at its 128-byte-aligned buffers."""
    path = os.path.join(os.path.dirname(__file__), "oracles", "cutlass", "umma_desc_oracle.recorded.txt")
    with open(path) as f:
        rows = [line.split() for line in f if line.startswith("D ")]
    assert len(rows) > 100
    assert {r[7] for r in rows} == {"0"}                         # column base_offset
    assert {r[8] for r in rows} == {"1"}                         # version 0b001


def _bw_plant(old: str, new: str) -> str:
    return _plant(_text(BLACKWELL, "ptx"), old, new)


@pytest.mark.parametrize("bug, new, why", [
    ("base offset 1", BW_HI | (1 << 49), "misreads at every base"),
    ("swizzle 64B", (4 << 61) | (1 << 46) | (64 << 32) | (1 << 16), "do not read the MLIR's shared layout"),
    ("SBO 2048", BW_HI + (64 << 32), "do not read the MLIR's shared layout")])
def test_blackwell_planted_descriptor_field_is_an_error_at_each_tcgen05_reading_it(bug, new, why):
    """A's descriptor constant (the first in the text) changed: an error at each of the 4 tcgen05.mma,
    operand A only; B stays proved."""
    bad = _bw_plant(f", {BW_HI};", f", {new};")
    rep = audit_pair(_text(BLACKWELL, "mlir"), bad)
    lines = set(_tc05_lines(bad))
    assert _by(rep, "A", "counterexample") == lines, bug
    assert {c.line for c in rep.checks if c.severity == "error"} == lines
    assert _by(rep, "B", "proved") == lines
    assert all(why in c.message for c in rep.checks if c.severity == "error")


def test_blackwell_planted_k_block_start_is_an_error_at_its_line():
    """K-block 2 of A starts 64 bytes late (``+ 2`` -> ``+ 6`` in 16-byte units on the register only the
    third tcgen05.mma reads): an error at that instruction alone, with the distance."""
    ptx = _text(BLACKWELL, "ptx")
    old = "add.s32 \t%r98, %r25, 2;"
    assert ptx.count(old) == 1
    bad = ptx.replace(old, old.replace(", 2;", ", 6;"))
    third = _tc05_lines(ptx)[2]
    assert "%rd28" in ptx.splitlines()[third - 1]               # it reads {%r98, ...}
    rep = audit_pair(_text(BLACKWELL, "mlir"), bad)
    errors = [c for c in rep.checks if c.severity == "error"]
    assert [(c.line, c.data["operand"]) for c in errors] == [(third, "A")]
    assert "64 bytes away" in errors[0].message


@pytest.mark.parametrize("name", ["hopper_gemm_f16_kk_128x128", "hopper_gemm_f16_mn_128x128",
                                  "hopper_gemm_e4m3_kk_128x128", FMHA])
def test_derived_starts_equal_the_dsls_own_descriptor_offsets(name, audited):
    """An oracle from the DSL itself: ``cute.mma.make_fragment`` types each operand's descriptors as
    ``!cute_nvgpu.smem_desc_view<..., "(V, MN blocks, K-blocks, stages):(...)">``, the start offset
    (16-byte units) of each block; the start verilayout derives from the memref for each (MN block,
    K-block) of the PTX's wgmmas equals it."""
    from verilayout.frontends.cute_mlir import DescView
    from verilayout.frontends.cute_text import parse_cute
    mod = parse_cute_mlir(_text(name, "mlir"))
    views = {}
    for op in mod.ops:
        if op.name == "cute.mma.make_fragment" and op.words[0] in ("A", "B") and op.result_types:
            t = mod.type_of(op.results[0])
            if isinstance(t, DescView):
                views.setdefault((op.operands[0], op.words[0]), parse_cute(t.layout))
    assert views
    seen = 0
    for c in _mma(audited[name]):
        mma_value = next(p.value for p in mma_plans(mod) if p.operand(c.data["operand"]) is not None
                         and p.operand(c.data["operand"]).line == c.data["plan_line"])
        view = views[(mma_value, c.data["operand"])]
        want = view((0, c.data["mn_block"], c.data["k_block"], 0))
        assert int(c.data["plan_descriptor"], 16) & 0x3FFF == want, (c.line, c.data)
        seen += 1
    assert seen == len(_mma(audited[name]))


# ----- TMA copies ------------------------------------------------------------------------------

def _tma_lines(ptx: str) -> list[int]:
    """Lines of cp.async.bulk.tensor instructions, guarded (``@%p1 cp.async...``) or not."""
    return [n for n, line in enumerate(ptx.splitlines(), 1)
            if re.match(r"\s*(@!?%\w+\s+)?cp\.async\.bulk\.tensor", line)]


@pytest.mark.parametrize("name", GEMMS)
def test_every_tma_copy_of_the_gemms_starts_a_box_of_a_planned_stage(name, audited):
    tma = [c for c in audited[name].checks if c.check in ("tma-smem-box", "tma-box")]
    assert len(tma) == 2 * len(_tma_lines(_text(name, "ptx")))
    assert {c.line for c in tma} == set(_tma_lines(_text(name, "ptx")))
    assert all(c.status == "proved" for c in tma), [c.message for c in tma if c.status != "proved"][:1]


def test_fmha_tma_loads_and_per_warpgroup_stores_proved(audited):
    """Q, K and V loads are proved to fill boxes of their buffers' stages; the O stores read the
    buffer at ``1024 + (w - 1) x 8192`` bytes for consumer warpgroup ``w = %tid.x / 128``, and only
    warpgroups 1 and 2 get there (the branch ``setp.gt.u32 (w - 1), 1`` at PTX line 343 skips the
    others): 1024 or 9216, boxes 0 and 2 of the 4 boxes of 4096 bytes the plan's store atom copies."""
    tma = [c for c in audited[FMHA].checks if c.check == "tma-smem-box"]
    assert all(c.status == "proved" for c in audited[FMHA].checks if c.check == "tma-box")
    loads = [c for c in tma if "TMA load" in c.message]
    stores = [c for c in tma if "TMA store" in c.message]
    assert len(loads) + len(stores) == len(tma) == len(_tma_lines(_text(FMHA, "ptx")))
    assert loads and all(c.status == "proved" for c in loads)
    assert stores and all(c.status == "proved" for c in stores)
    assert all("the branch at PTX line 343 is not taken on the way here" in c.data["assumptions"] for c in stores)
    assert {1024 + w * 8192 for w in (0, 1)} <= {1024 + 4096 * j for j in range(4)}


def test_fmha_planted_wider_guard_leaves_the_stores_unproved():
    """The consumer branch widened to let warpgroup 3 through (``> 1`` -> ``> 2``): its store would read
    1024 + 2 x 8192 = 17408, past the 4 x 4096-byte buffer: unknown (other warpgroups fit), never proved."""
    ptx = _text(FMHA, "ptx")
    was = "setp.gt.u32 \t%p59, %r9, 1;"
    assert ptx.count(was) == 1 and 1024 + 2 * 8192 >= 1024 + 4 * 4096
    rep = audit_pair(_text(FMHA, "mlir"), ptx.replace(was, was.replace(", 1;", ", 2;")))
    stores = [c for c in rep.checks if c.check == "tma-smem-box" and "TMA store" in c.message]
    assert stores and all(c.status == "unknown" for c in stores)


def test_planted_tma_destination_is_an_error_at_its_line():
    """The prologue's A load written 512 bytes past its stage's start (``[%rX+1024]`` ->
    ``[%rX+1536]``): no box of any stage of any loaded buffer starts there."""
    ptx = _text(KK, "ptx")
    m = re.search(r"cp\.async\.bulk\.tensor\.2d\.shared::cta\.global[^\n]*\[(%r\d+)\+1024\]", ptx)
    line = ptx.count("\n", 0, m.start()) + 1
    bad = ptx[:m.start()] + m.group(0).replace("+1024]", "+1536]") + ptx[m.end():]
    rep = audit_pair(_text(KK, "mlir"), bad)
    errors = [c for c in rep.checks if c.severity == "error"]
    assert [(c.line, c.check) for c in errors] == [(line, "tma-smem-box")]      # the box itself is unchanged


def test_grouped_gemm_tma_copies_proved_stores_under_a_trip_count_premise(audited):
    """The persistent grouped GEMM: its A/B loads fill stages of the planned buffers; its epilogue stores
    subtile j (of 8: a 128 x 128 tile in 32 x 64 boxes) of the CTA's t-th tile from stage (8t + j) rem 4
    (PTX: ``shl.b32 %r385, %r676, 3`` then a signed remainder by 4), t the tile counter %r676 (0, +1 per
    tile) whose loop the PTX bounds by no constant. 8t + 7 stays a non-negative int32 exactly while
    t <= 2^28 - 1, so the stores with j > 0 are proved under the stated premise t < 2^28 (j = 0: 8t rem 4
    is 0 for every t, no premise)."""
    assert 8 * (2**28 - 1) + 7 <= 2**31 - 1 < 8 * 2**28 + 1
    tma = [c for c in audited[GROUPED].checks if c.check == "tma-smem-box"]
    assert {c.line for c in tma} == set(_tma_lines(_text(GROUPED, "ptx")))
    assert all(c.status == "proved" for c in tma)
    stores = [c for c in tma if "TMA store" in c.message]
    premised = [c for c in stores if "premise" in c.message]
    assert len(stores) == 8 and len(premised) == 6
    assert all("the loop counter %r676 (PTX lines 1015, 1936: +1 per iteration) stays below 2^28," in c.message
               for c in premised)


def test_grouped_gemm_planted_store_offset_is_an_error_at_its_line():
    """The last epilogue store read 512 bytes into its stage (``[%r509+197632]`` -> ``+198144``): no box of
    any stage of the store buffer, for every tile counter: an error at that line only."""
    ptx = _text(GROUPED, "ptx")
    assert ptx.count("[%r509+197632]") == 1
    line = ptx[:ptx.index("[%r509+197632]")].count("\n") + 1
    rep = audit_pair(_text(GROUPED, "mlir"), ptx.replace("[%r509+197632]", "[%r509+198144]"))
    errors = [c for c in rep.checks if c.severity == "error"]
    assert [(c.line, c.check) for c in errors] == [(line, "tma-smem-box")]


def test_blackwell_tma_copies_proved_at_the_inferred_buffer_offsets(audited):
    """The Blackwell kernel allocates its buffers separately (4 ``cute.memref.alloca``); placed in text
    order at their alignment (128 B barriers at 0, C at 128, A at 16512, B at 114816: the offsets its
    PTX adds), every TMA copy starts a box of a stage: proved, the placement labelled an inference."""
    tma = [c for c in audited[BLACKWELL].checks if c.check == "tma-smem-box"]
    assert {c.line for c in tma} == set(_tma_lines(_text(BLACKWELL, "ptx")))
    assert all(c.status == "proved" and "inference: the DSL places" in c.message for c in tma)
    ptx = _text(BLACKWELL, "ptx")
    assert {("16512 bytes" in c.message) or ("114816 bytes" in c.message) or ("128 bytes into" in c.message)
            for c in tma} == {True}
    assert "[%r1+8320]" in ptx                                    # C's second stage: 128 + 8192


def test_blackwell_misplaced_copy_at_an_inferred_offset_is_unknown_not_an_error():
    """An inference is never an error: the A load moved 512 bytes is ``unknown`` with the reason."""
    bad = _bw_plant("[%r13+16512]", "[%r13+17024]")
    tma = [c for c in audit_pair(_text(BLACKWELL, "mlir"), bad).checks if c.check == "tma-smem-box"]
    assert [c.status for c in tma if "never an error" in c.message] == ["unknown"]
    assert not [c for c in tma if c.severity == "error"]


# ----- bad input -------------------------------------------------------------------------------

def test_cli_bad_mlir_beside_the_ptx_is_exit_2_one_line(tmp_path, capsys):
    from verilayout.cli.main import main
    (tmp_path / "k.mlir").write_text("module {\n}\n")
    (tmp_path / "k.ptx").write_text(_text(KK, "ptx"))
    assert main(["audit", "--no-cache", str(tmp_path / "k.ptx")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "k.mlir" in err[0] and "no CuTe op" in err[0]


def test_truncated_or_mangled_mlir_is_a_layout_error_or_reads():
    """Every prefix of a kept module cut at a line, and every line with one bracket dropped, either
    reads or is a one-line LayoutError: never another exception."""
    lines = _text(KK, "mlir").splitlines(keepends=True)[:260]
    for n in range(0, len(lines), 7):
        for text in ("".join(lines[:n]), "".join(lines[:n]) + lines[n].replace(">", "", 1)):
            try:
                mod = parse_cute_mlir(text)
                mma_plans(mod)
            except LayoutError as e:
                assert "\n" not in str(e)


def test_planted_lbo_of_an_mn_major_operand_is_an_error():
    """The N-major B operand (128 N = two 64-element 128B atoms 8 KB apart): its descriptor's LBO is
    the 8 KB between the atoms (field 512 in 16-byte units, PTX ISA matrix descriptor, MN-major
    swizzled); 4 KB reads the second atom's columns from the first's rows: an error at each wgmma
    of the group that reads it (the first, prologue group: its constant is the first in the text)."""
    name = "hopper_gemm_f16_mn_128x128"
    ptx = _text(name, "ptx")
    hi = (1 << 62) | (64 << 32) | (512 << 16)
    assert ptx.index(f", {hi};") < ptx.index("wgmma.commit_group")
    bad = _plant(ptx, f", {hi};", f", {(1 << 62) | (64 << 32) | (256 << 16)};")
    rep = audit_pair(_text(name, "mlir"), bad)
    assert _by(rep, "B", "counterexample") == set(_groups(ptx)[0])
    assert _by(rep, "A", "proved") == set(_wgmma_lines(ptx))


# ----- TMA boxes: the MLIR's partition against the PTX's coordinates and expect_tx ---------------

def _box(rep) -> list:
    return [c for c in rep.checks if c.check == "tma-box"]


def test_partition_boxes_read_from_the_mlir_are_the_configs():
    """The box each ``tma_partition`` states, per TMA coordinate (innermost first), against the
    example's configuration: a K-major operand's box is 128 bytes of K by the tile's MN rows (the
    128B swizzle span bounds boxDim[0] x element size: cuTensorMapEncodeTiled); an MN-major one
    64 MN elements (128 bytes) by the tile's 64 K, two boxes per 128-row stage; and box bits equal
    the atom's copy_bits."""
    from verilayout.audit.cute_dsl import tma_plans
    for name in GEMMS:
        cfg = MANIFEST["kernels"][name]
        tm, tn = cfg["tile_shape_mn"]
        elem = 1 if "e4m3" in name else 2
        loads = [p for p in tma_plans(parse_cute_mlir(_text(name, "mlir")))[0] if p.kind == "load"]
        want = []
        for mn, major in ((tm, cfg["a_major"]), (tn, cfg["b_major"])):
            want.append(((128 // elem, mn), 1) if major == "k" else ((128 // elem, 64), mn // 64))
        assert [(p.grid.box, p.grid.boxes) for p in loads] == want, name
        assert all(p.grid.elements * p.elem_bits == p.box_bytes * 8 for p in loads)


@pytest.mark.parametrize("name", KERNELS)
def test_every_tma_box_check_proved_on_the_corpus(name, audited):
    box = _box(audited[name])
    assert {c.line for c in box} == set(_tma_lines(_text(name, "ptx")))
    assert all(c.status == "proved" for c in box), [c.message for c in box if c.status != "proved"][:1]


def test_grouped_gemm_3d_copies_of_2d_partitions_compared_on_their_2d_modes(audited):
    """The grouped GEMM's loads are 3-d (its tensor maps keep the group mode: ``{m, k, 0}``) while the MLIR
    partitions the 2-d tile: the third coordinate is the literal 0 (a mode the partition does not index), the
    first two are compared with the partition's grid and the barrier's bytes with its boxes: proved."""
    box = _box(audited[GROUPED])
    loads = [c for c in box if "TMA load" in c.message]
    assert loads and all(c.status == "proved" and "coordinate 2 is 0: a mode of its tensor map the MLIR's 2-d "
                         "partition does not index" in c.message for c in loads)
    assert all(c.status == "proved" for c in box if "TMA store" in c.message)


def test_grouped_gemm_planted_extra_coordinate_is_not_proved():
    """The group-mode coordinate of the A load made a register (``{%r587,%r588,0}`` -> ``{..,%r587}``): that mode
    is no longer read at its index 0, so the 3-d copy is not compared with the 2-d partition: never proved."""
    ptx = _text(GROUPED, "ptx")
    assert ptx.count("{%r587,%r588,0}") == 1
    line = ptx[:ptx.index("{%r587,%r588,0}")].count("\n") + 1
    rep = audit_pair(_text(GROUPED, "mlir"), ptx.replace("{%r587,%r588,0}", "{%r587,%r588,%r587}"))
    (c,) = [c for c in _box(rep) if c.line == line]
    assert c.status == "unknown" and "coordinate 2 is not proved 0" in c.message


def _kk_errors_at_the_first_two_loads(old: str, new: str) -> list:
    """The errors of the KK pair audited with its PTX's one ``old`` replaced by ``new``: asserted to
    be tma-box errors, at both of the first two TMA loads and at no other line."""
    ptx = _text(KK, "ptx")
    assert ptx.count(old) == 1
    rep = audit_pair(_text(KK, "mlir"), ptx.replace(old, new))
    errors = [c for c in rep.checks if c.severity == "error"]
    assert {(c.line, c.check) for c in errors} == {(ln, "tma-box") for ln in _tma_lines(ptx)[:2]}
    return errors


def test_planted_expect_tx_bytes_are_an_error_at_each_load_of_the_barrier():
    """The prologue's barrier armed for 16384 bytes instead of the 16384 + 16384 its A and B boxes
    (64 x 128 f16 each, from the MLIR) bring: an error at both loads, nothing else."""
    errors = _kk_errors_at_the_first_two_loads("mov.b32 \t%r57, 32768;", "mov.b32 \t%r57, 16384;")
    assert all("waits for 16384 bytes" in c.message and "16384 + 16384" in c.message for c in errors)


def test_planted_coordinate_off_the_box_grid_is_an_error_at_its_loads():
    """The prologue's K coordinate moved 32 elements (``%r250 + 448`` -> ``+ 480``; %r250 steps by 64
    from -448): never a multiple of the 64-element box the MLIR states along K: an error at the two
    loads that use it."""
    errors = _kk_errors_at_the_first_two_loads("add.s32 \t%r11, %r250, 448;", "add.s32 \t%r11, %r250, 480;")
    assert all("never a multiple of 64" in c.message for c in errors)


def test_planted_box_change_in_the_mlir_is_an_error_at_each_load():
    """The MLIR's load boxes made 64 x 64 (the atoms' copy_bits and basis, and the partitions' box):
    the PTX's barriers still expect 2 x 16384 bytes: an error at every load, for the bytes."""
    mlir = _text(KK, "mlir")
    atom = 'copy_bits = 131072, tma_gbasis = <"(64,128):(1@1,1@0)">'
    part = '"(((64,128),1),8):(((1@0,1@1),0),64@0)"'
    assert atom in mlir and mlir.count(part) >= 2
    bad = mlir.replace(atom, 'copy_bits = 65536, tma_gbasis = <"(64,64):(1@1,1@0)">').replace(
        part, '"(((64,64),1),8):(((1@0,1@1),0),64@0)"')
    rep = audit_pair(bad, _text(KK, "ptx"))
    errors = [c for c in rep.checks if c.severity == "error"]
    loads = _tma_lines(_text(KK, "ptx"))[:4]                      # 2 prologue + 2 main-loop loads
    assert {(c.line, c.check) for c in errors} == {(ln, "tma-box") for ln in loads}
    assert all("8192 + 8192" in c.message for c in errors)


def test_box_placement_against_the_tile_written_out():
    """The K-major A tile of the Hopper GEMM (128 x 64 f16, 8-row groups 512 elements apart): TMA's box
    64 (K, contiguous) x 128 (M), written row after row, puts (m, k) at element 64 m + k, which is where
    ``((8,16),(64,1)):((64,512),(1,0))`` puts it (64 (m mod 8) + 512 (m div 8) + k = 64 m + k), every
    element; an M-major box order (K rows of 128 M) is refused at tile element 1."""
    from verilayout.audit.cute_dsl import box_placement
    from verilayout.core.cute.layout import Layout
    from verilayout.frontends.cute_mlir import TmaBox
    tile = Layout(((8, 16), (64, 1)), ((64, 512), (1, 0)))
    for m, k in ((0, 0), (9, 3), (127, 63)):
        assert 64 * (m % 8) + 512 * (m // 8) + k == 64 * m + k
    ok = box_placement(tile, [(128, {1: 1}), (64, {0: 1})], TmaBox(2, (64, 128), (64, 128), 1), [(0, 0)], 16, 128)
    assert ok == (True, "8192 elements: each where the memref puts it")
    bad = box_placement(tile, [(128, {0: 1}), (64, {1: 1})], TmaBox(2, (128, 64), (128, 64), 1), [(0, 0)], 16, 128)
    assert bad[0] is False and bad[1].startswith("tile element 1 ")


def test_every_partition_of_the_corpus_writes_its_memref():
    from verilayout.audit.cute_dsl import tma_plans
    for name in KERNELS:
        plans = tma_plans(parse_cute_mlir(_text(name, "mlir")))[0]
        assert plans and all(p.placement and p.placement[0] for p in plans), name


def test_planted_shared_layout_the_box_does_not_write_is_an_error_at_each_load():
    """The memref the A/B TMA partitions write given 8-row groups 1024 elements apart (the box writes
    them 512 apart): an error at every load, naming the first element placed elsewhere."""
    mlir = _text(KK, "mlir")
    old = '"(((8,16),(64,1)),(1,7)):(((64,512),(1,0)),(0,8192))"'
    assert mlir.count(old) == 1
    bad = mlir.replace(old, '"(((8,16),(64,1)),(1,7)):(((64,1024),(1,0)),(0,8192))"')
    rep = audit_pair(bad, _text(KK, "ptx"))
    errors = [c for c in rep.checks if c.severity == "error"]
    loads = _tma_lines(_text(KK, "ptx"))[:4]
    assert {(c.line, c.check) for c in errors} == {(ln, "tma-box") for ln in loads}
    assert all("tile element 8 " in c.message and "not what the box writes" in c.message for c in errors)


def test_blackwell_planted_absolute_lbo_mode_is_an_error_on_sm_100a():
    """Bit 52 (leading-dimension stride mode, 1 = absolute address) set in A's descriptor: the PTX ISA
    (9.7.16.4.1, Target ISA note) supports that mode on sm_103a only and this PTX targets sm_100a: an
    error at each tcgen05.mma reading it."""
    bad = _bw_plant(f", {BW_HI};", f", {BW_HI | (1 << 52)};")
    assert ".target sm_100a" in bad
    rep = audit_pair(_text(BLACKWELL, "mlir"), bad)
    errors = [c for c in rep.checks if c.severity == "error"]
    assert {c.line for c in errors} == set(_tc05_lines(bad)) and {c.data["operand"] for c in errors} == {"A"}
    assert all("sm_103a only" in c.message for c in errors)


def test_multicast_load_barrier_bytes_are_not_compared():
    """A multicast load (``.multicast::cluster``) also lands bytes other CTAs copy, which the barrier's
    expect_tx counts: with the count doubled, the two loads' ``tma-box`` checks are ``unknown``, never errors."""
    ptx = _text(KK, "ptx")
    head = "cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%r12+1024]"
    assert ptx.count(head) == 1
    bad = ptx.replace(head, head.replace("shared::cta", "shared::cluster").replace(
        "bytes.L2", "bytes.multicast::cluster.L2")).replace("mov.b32 \\t%r57, 32768;", "mov.b32 \\t%r57, 65536;")
    rep = audit_pair(_text(KK, "mlir"), bad)
    box = [c for c in rep.checks if c.check == "tma-box" and c.line in _tma_lines(ptx)[:2]]
    assert len(box) == 2 and all(c.status == "unknown" and "other CTAs" in c.message for c in box)
    assert not [c for c in rep.checks if c.severity == "error"]


def test_blackwell_cta_pair_operands_proved(audited):
    """The DSL's Blackwell GEMM on a CTA pair (``use_2cta_instrs``, 256 x 128 tile, 2x1 cluster):
    ``tcgen05.mma.cta_group::2`` with the MLIR's ``num_cta = 2`` atom; each CTA's A and B descriptors are
    proved against its half (128 rows of A, 64 of B: the MLIR's per-CTA fragment), 0 errors. The loads'
    barrier (the leader's) also counts the peer's copies: 2 x (64 x 128 + 64 x 64) f16 = 49152 bytes, the
    expect_tx the PTX arms, proved under the stated premise that the peer runs the same loads."""
    ptx, mlir = _text(PAIR, "ptx"), _text(PAIR, "mlir")
    assert "tcgen05.mma.cta_group::2" in ptx and "num_cta = 2" in mlir
    rep = audited[PAIR]
    lines = set(_tc05_lines(ptx))
    assert len(lines) == 4 and _by(rep, "A", "proved") == lines == _by(rep, "B", "proved")
    assert not [c for c in rep.checks if c.severity == "error"]
    (a,) = {c.data["mn"] for c in _mma(rep) if c.data["operand"] == "A"}
    (b,) = {c.data["mn"] for c in _mma(rep) if c.data["operand"] == "B"}
    assert (a, b) == (256 // 2, 128 // 2)
    loads = [c for c in rep.checks if c.check == "tma-box" and "TMA load" in c.message]
    assert 2 * (64 * 128 + 64 * 64) * 2 == 49152
    assert loads and all(c.status == "proved" and "waits for 49152 bytes" in c.message and "32768 + 16384" in c.message
                         and "premise: the pair's peer CTA runs the same loads" in c.message for c in loads)
    smem = [c for c in rep.checks if c.check == "tma-smem-box"]
    assert smem and all(c.status == "proved" for c in smem)
    assert any("cvta.to.shared::cluster" in " ".join(c.data["assumptions"]) for c in smem)


def test_blackwell_cta_pair_planted_expect_tx_without_the_peer_is_an_error():
    """The leader's barrier armed for its own boxes only (49152 -> 24576, the peer's 24576 forgotten): an error
    at every load of that barrier (the prologue's two)."""
    ptx = _text(PAIR, "ptx")
    assert ptx.count("mov.b32 \t%r75, 49152;") == 1
    rep = audit_pair(_text(PAIR, "mlir"), ptx.replace("mov.b32 \t%r75, 49152;", "mov.b32 \t%r75, 24576;"))
    errors = [c for c in rep.checks if c.severity == "error"]
    assert {(c.line, c.check) for c in errors} == {(ln, "tma-box") for ln in _tma_lines(ptx)[:2]}
    assert all("waits for 24576 bytes" in c.message for c in errors)


def test_blackwell_cta_pair_planted_destination_is_not_proved():
    """The pair's A load reaches its own buffer through the cluster window (``cvta.shared`` then
    ``cvta.to.shared::cluster``, read as the CTA's own address: an inference, stated); moved 512 bytes
    (``[%r78+16640]`` -> ``+17152``) it starts no box of a stage: never proved (the offsets are inferred, so
    ``unknown``, not an error), and the other loads stay proved."""
    ptx = _text(PAIR, "ptx")
    assert ptx.count("[%r78+16640]") == 1
    line = ptx[:ptx.index("[%r78+16640]")].count("\n") + 1
    rep = audit_pair(_text(PAIR, "mlir"), ptx.replace("[%r78+16640]", "[%r78+17152]"))
    smem = {c.line: c for c in rep.checks if c.check == "tma-smem-box"}
    assert smem[line].status == "unknown" and "never an error" in smem[line].message
    assert all(c.status == "proved" for ln, c in smem.items() if ln != line)
