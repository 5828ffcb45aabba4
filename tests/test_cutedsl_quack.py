"""A public package's CuTe-DSL kernels audited like the DSL's own examples: the GEMMs of
``quack-kernels`` 0.6.5 compiled here without a GPU by ``tests/cutedsl/generate_quack.py`` (quack's own
``_compile_gemm`` with fake tensors; sm_90a and sm_100a, one CTA and 2x1 clusters), stored gzipped beside the corpus with
``corpus/manifest_quack.json``. The tests read the stored files only (quack and torch are never needed)."""
from __future__ import annotations

import gzip
import json
import os
import re

import pytest

from verilayout.audit.cute_dsl import audit_pair
from tests.audited import audit_cute_pair

CORPUS = os.path.join(os.path.dirname(__file__), "cutedsl", "corpus")
with open(os.path.join(CORPUS, "manifest_quack.json")) as _f:
    MANIFEST = json.load(_f)
KERNELS = sorted(MANIFEST["kernels"])
PINGPONG = "quack_gemm_sm90_bf16_kk_128x192_pingpong"
PROVED = KERNELS
#: one CTA per tile: every TMA load's box and barrier are compared (a cluster's multicast loads and a CTA
#: pair's barriers also count other CTAs' bytes)
SINGLE = [k for k in KERNELS if "cluster" not in k]
CLUSTER = [k for k in KERNELS if "cluster" in k]
SM90 = "quack_gemm_sm90_f16_kk_128x128"
#: the sm_90 128B-swizzle descriptor constant quack ORs in: SBO 1024 B (64), swizzle code 1 (bits 62-63), LBO 16 B
#: (PTX ISA, matrix descriptor format)
HI90 = (1 << 62) | (64 << 32) | (1 << 16)


def _text(name: str, kind: str) -> str:
    with gzip.open(os.path.join(CORPUS, f"{name}.{kind}.gz"), "rt") as f:
        return f.read()


def _mma_lines(ptx: str) -> set[int]:
    return {n for n, line in enumerate(ptx.splitlines(), 1)
            if re.match(r"\s*(wgmma\.mma_async|tcgen05\.mma)", line)}


def _tma_loads(ptx: str) -> set[int]:
    return {n for n, line in enumerate(ptx.splitlines(), 1)
            if re.match(r"\s*(@!?%\w+\s+)?cp\.async\.bulk\.tensor\.\dd\.shared", line)}


@pytest.fixture(scope="module")
def audited() -> dict:
    return {k: audit_cute_pair(_text(k, "mlir"), _text(k, "ptx"), f"{k}.ptx") for k in KERNELS}


def test_manifest_records_versions_and_files():
    assert MANIFEST["quack-kernels"] == "0.6.5" and MANIFEST["nvidia-cutlass-dsl"] == "4.8.1"
    assert {MANIFEST["kernels"][k]["arch"] for k in KERNELS} == {"sm_90a", "sm_100a"}
    for name in KERNELS:
        cfg = MANIFEST["kernels"][name]
        for f in cfg["files"]:
            assert os.path.getsize(os.path.join(CORPUS, f)) > 1000, f
        assert f".target {cfg['arch']}" in _text(name, "ptx")
        assert "quack" in _text(name, "mlir")                      # quack's kernel class names the kernel


@pytest.mark.parametrize("name", KERNELS)
def test_no_false_error_on_any_quack_kernel(name, audited):
    assert [c for c in audited[name].checks if c.severity == "error"] == []


@pytest.mark.parametrize("name", PROVED)
def test_every_mma_operand_proved(name, audited):
    """Each wgmma / tcgen05.mma: one proved check per shared operand (A and B), against the MLIR's plan."""
    mma = [c for c in audited[name].checks if c.check == "mma-descriptor"]
    lines = _mma_lines(_text(name, "ptx"))
    assert lines and {c.line for c in mma} == lines
    assert all(c.status == "proved" for c in mma), [c.message for c in mma if c.status != "proved"][:1]
    assert {(c.line, c.data["operand"]) for c in mma} == {(ln, op) for ln in lines for op in "AB"}


def test_pingpong_stage_bound_is_proved_by_induction(audited):
    """The pingpong kernel's consumer stage registers: one wraps ``s + 1 == 5`` to 0, the other is
    ``(s + k) rem 5`` with ``k = ceil(K / 64)`` (``mul.hi.s32`` by 1717986919 = ceil(2^33 / 5), then
    ``mul.lo``/``sub``: PTX ISA ``rem.s32``, the dividend's sign). With K a shape extent (>= 0) both
    stay in [0, 5) (proved together by induction), so every operand's base is one of the 5 stages of
    its buffer and each check says which law and fact it rests on."""
    mma = [c for c in audited[PINGPONG].checks if c.check == "mma-descriptor"]
    assert all(c.status == "proved" for c in mma)
    laws = " ".join(" ".join(c.data["assumptions"]) for c in mma)
    assert "< 5 (proved by induction" in laws and "jointly with" in laws and "a CuTe shape is non-negative" in laws
    assert all("stage s < 5 of the buffer" in c.message for c in mma)


_STAGE_READS = range(1100, 1300)     # the first consumer loop: its 8 wgmmas read the stage that wraps at line 1257


@pytest.mark.parametrize("plant, was, now, hit", [
    ("the wrap compare at 6: the stage reaches 5, past the buffer's 5 stages",
     "setp.eq.b32 \t%p41, %r177, 5;", "setp.eq.b32 \t%p41, %r177, 6;", {"A", "B"}),
    ("A's stage stride 2048 x 16 bytes instead of 1024 (stage 3 would be past the buffer)",
     "shl.b32 \t%r150, %r846, 10;", "shl.b32 \t%r150, %r846, 11;", {"A"}),
])
def test_pingpong_planted_stage_change_is_never_proved(plant, was, now, hit):
    """A planted change to the modulus or to the stage stride: the wgmmas reading it are not proved
    (``unknown``: the base is a stage for some values only), never an error for a value that fits;
    the wgmmas of the other loop still prove."""
    ptx = _text(PINGPONG, "ptx")
    assert ptx.count(was) == 1
    rep = audit_pair(_text(PINGPONG, "mlir"), ptx.replace(was, now))
    mma = [c for c in rep.checks if c.check == "mma-descriptor"]
    bad = [c for c in mma if c.line in _STAGE_READS and c.data["operand"] in hit]
    assert len(bad) == 8 * len(hit) and all(c.status != "proved" for c in bad), plant
    assert all(c.status == "proved" for c in mma if c.line not in _STAGE_READS)


def test_pingpong_planted_modulus_6_is_never_proved():
    """``(s + k) - 6 * ((s + k) / 5)``: the remainder idiom no longer matches (6 is not the divisor), the
    value is not bounded, and no operand reading that stage is proved."""
    ptx = _text(PINGPONG, "ptx")
    was = "mul.lo.s32 \t%r464, %r452, 5;"
    assert ptx.count(was) == 1
    rep = audit_pair(_text(PINGPONG, "mlir"), ptx.replace(was, was.replace(", 5;", ", 6;")))
    mma = [c for c in rep.checks if c.check == "mma-descriptor"]
    assert mma and all(c.status == "unknown" for c in mma)


@pytest.mark.parametrize("name", SINGLE)
def test_every_tma_load_starts_a_box_of_a_planned_stage(name, audited):
    """quack partitions one stage at a time (``cute.slice(%staged, (_, ?))``): every load is proved to
    start a box of some stage of its staged buffer, at the offsets the allocations are placed at."""
    smem = [c for c in audited[name].checks if c.check == "tma-smem-box" and c.line in _tma_loads(_text(name, "ptx"))]
    assert {c.line for c in smem} == _tma_loads(_text(name, "ptx"))
    assert all(c.status == "proved" for c in smem), [c.message for c in smem if c.status != "proved"][:1]


@pytest.mark.parametrize("name", KERNELS)
def test_every_tma_box_proved(name, audited):
    box = [c for c in audited[name].checks if c.check == "tma-box"]
    assert box and all(c.status == "proved" for c in box), [c.message for c in box if c.status != "proved"][:1]


def test_planted_sbo_in_quacks_sm90_gemm_is_an_error_at_the_wgmmas_reading_it():
    """The first descriptor constant of quack's sm_90 GEMM with SBO 2048: an error at every wgmma reading
    it, for one operand only; the other stays proved."""
    ptx = _text(SM90, "ptx")
    assert ptx.count(f", {HI90};") == 2
    bad = ptx.replace(f", {HI90};", f", {HI90 + (64 << 32)};", 1)
    rep = audit_pair(_text(SM90, "mlir"), bad)
    errors = [c for c in rep.checks if c.severity == "error"]
    ops = {c.data["operand"] for c in errors}
    assert len(ops) == 1 and {c.line for c in errors} == _mma_lines(ptx)
    other = "B" if ops == {"A"} else "A"
    assert all(c.status == "proved" for c in rep.checks if c.data.get("operand") == other)
    assert all("do not read the MLIR's shared layout" in c.message for c in errors)


@pytest.mark.parametrize("name", CLUSTER)
def test_cluster_kernels_mma_and_tma_proved_with_other_ctas_bytes(name, audited):
    """2x1 clusters: sm_90a multicasts B to both CTAs; sm_100a runs the MMA on a CTA pair
    (``tcgen05.mma.cta_group::2``, the 256-row atom split 128 rows of A and 64 columns of B a CTA, as
    the MLIR's per-CTA fragment says). Every operand is proved; every load's barrier bytes are compared
    with what the CTAs of its group or pair bring, each under its stated premise."""
    ptx = _text(name, "ptx")
    pair = "sm_100a" in MANIFEST["kernels"][name]["arch"]
    assert ("tcgen05.mma.cta_group::2" if pair else ".multicast::cluster") in ptx
    box = [c for c in audited[name].checks if c.check == "tma-box" and c.line in _tma_loads(ptx)]
    assert box and all(c.status == "proved" for c in box), [c.message for c in box if c.status != "proved"][:1]
    premise = "premise: the pair's peer CTA" if pair else "premise: every CTA of its multicast group"
    assert all(premise in c.message for c in box)


#: quack's sm_90 2x1-cluster GEMM: B (N 128 x K 64 f16, 16384 bytes) is multicast to both CTAs (the copy's
#: multicast_layout (2,1):(0,1): both CTAs of the cluster map to 0), each CTA loading half of it (rank r:
#: N rows 64 r .. 64 r + 63, 8192 bytes r x 8192 into the stage) with ctaMask 0b11; A is its own
CL90 = "quack_gemm_sm90_f16_kk_128x128_cluster2x1"
_MCAST, _OWN = 395, 385


def test_multicast_load_is_the_ctas_slice_with_the_groups_mask(audited):
    checks = {(c.line, c.check): c for c in audited[CL90].checks}
    smem, box = checks[(_MCAST, "tma-smem-box")], checks[(_MCAST, "tma-box")]
    assert smem.status == box.status == "proved"
    assert "its slice i of the g = 2" in smem.message and "i x 8192 bytes further" in smem.message
    assert "coordinate 1 less i x 64 (its slice i of 2)" in box.message
    assert "its ctaMask is its multicast group's CTAs (per rank: 0x3, 0x3)" in box.message
    assert "waits for 32768 bytes; its 2 load(s) bring 16384 + 16384" in box.message and 2 * 64 * 128 * 2 == 32768
    assert "slice" not in checks[(_OWN, "tma-smem-box")].message


@pytest.mark.parametrize("was, now, check, want", [
    ("shl.b32 \t%r274, %r273, 13;", "shl.b32 \t%r274, %r273, 12;", "tma-smem-box", {"unknown"}),   # slice 4096 apart
    ("shl.b32 \t%r18, %r273, 6;", "shl.b32 \t%r18, %r273, 7;", "tma-box", {"unknown", "counterexample"}),  # N + 128 r
    ("mov.b16 \t%rs1, 3;", "mov.b16 \t%rs1, 1;", "tma-box", {"counterexample"}),        # multicast to CTA 0 only
])
def test_planted_multicast_slice_or_mask_is_not_proved(was, now, check, want):
    """The CTA's slice written 4096 bytes (not 8192) into the stage, its coordinate offset 128 rows (not 64),
    or its ctaMask CTA 0 only (the group is both CTAs: an error): never proved at the multicast load."""
    ptx = _text(CL90, "ptx")
    assert ptx.count(was) == 1
    rep = audit_pair(_text(CL90, "mlir"), ptx.replace(was, now))
    (c,) = [c for c in rep.checks if c.line == _MCAST and c.check == check]
    assert c.status in want
    if want == {"counterexample"}:
        assert c.severity == "error" and "ctaMask" in c.message


def test_planted_multicast_expect_tx_off_by_a_slice_is_an_error():
    """The barrier armed for A's box and one CTA's slice of B (32768 -> 24576): the other CTA's slice is not
    counted: an error at both loads of the barrier."""
    ptx = _text(CL90, "ptx")
    was = "mov.b32 \t%r282, 32768;"
    assert ptx.count(was) == 1
    rep = audit_pair(_text(CL90, "mlir"), ptx.replace(was, was.replace("32768", "24576")))
    errors = [c for c in rep.checks if c.severity == "error"]
    assert {(c.line, c.check) for c in errors} == {(_OWN, "tma-box"), (_MCAST, "tma-box")}


def test_pingpong_b_coordinate_on_the_192_grid_under_a_no_overflow_premise(audited):
    """B's N coordinate is ``n x 192`` (``mul.lo.s32 %r13, %r640, 192``); 192 does not divide 2^32, so a
    wrapped product is no multiple of 192: proved under the stated premise that the int32 product does not
    overflow (a TMA coordinate is a signed 32-bit int); with the factor 128 it is never proved."""
    (c,) = [c for c in audited[PINGPONG].checks if c.line == 372 and c.check == "tma-box"]
    assert c.status == "proved" and "its int32 product by 192 does not overflow" in c.message
    ptx = _text(PINGPONG, "ptx")
    was = "mul.lo.s32 \t%r13, %r640, 192;"
    assert ptx.count(was) == 1
    rep = audit_pair(_text(PINGPONG, "mlir"), ptx.replace(was, was.replace("192;", "128;")))
    (bad,) = [c for c in rep.checks if c.line == 372 and c.check == "tma-box"]
    assert bad.status != "proved"


# ----- epilogue TMA stores: a stage index (4 t + j) rem 4 of a tile counter t ------------------------------

#: quack's sm_90 epilogue stores: subtile j of the CTA's t-th tile goes to stage (4 t + j) rem 4 (MLIR
#: ``arith.muli %arg34, 4`` then ``arith.remsi``, i32), t the tile counter %r342 (0, +1 per tile)
_STORES = {1076: 0, 1130: 1, 1184: 2, 1239: 3}


def test_epilogue_stores_proved_under_a_stated_trip_count_premise(audited):
    """The epilogue's loop exits on a flag the scheduler leaves in shared memory, so the PTX bounds the
    tile counter t nowhere. Subtile 0's stage, 4t rem 4, is 0 for every 32-bit t (proved outright). For
    j > 0, 4t + j stays a non-negative int32 exactly while t <= (2^31 - 1 - 3) / 4 = 2^29 - 1, and at
    t = 2^29 it is 2^31 + j, negative: the remainder is j - 4, no stage. So each is proved under the
    premise t < 2^29, which the check states (register, lines, bound), and under no wider power of two."""
    assert (4 * (2**29 - 1) + 3) <= 2**31 - 1 < 4 * 2**29 + 1
    smem = {c.line: c for c in audited[SM90].checks if c.check == "tma-smem-box" and c.line in _STORES}
    assert set(smem) == set(_STORES) and all(c.status == "proved" for c in smem.values())
    assert "premise" not in smem[1076].message
    for line in (1130, 1184, 1239):
        msg = smem[line].message
        assert "premise (the PTX states no bound): the loop counter %r342" in msg and "below 2^29," in msg
        assert "at 2^30 it is not proved" in msg and smem[line].data["premise"] in smem[line].data["assumptions"]


@pytest.mark.parametrize("name", KERNELS)
def test_every_tma_store_proved(name, audited):
    """Every kernel's epilogue TMA stores start a box of a stage of the buffer the MLIR stores from."""
    ptx = _text(name, "ptx")
    stores = {n for n, line in enumerate(ptx.splitlines(), 1) if re.match(r"\s*(@!?%\w+\s+)?cp\.async\.bulk\.tensor\.\dd\.global", line)}
    smem = [c for c in audited[name].checks if c.check == "tma-smem-box" and c.line in stores]
    assert stores and {c.line for c in smem} == stores
    assert all(c.status == "proved" for c in smem), [c.message for c in smem if c.status != "proved"][:1]


@pytest.mark.parametrize("was, now, line, want", [
    ("[%r178+1024]", "[%r178+1536]", 1130, {"counterexample", "unknown"}),   # subtile 1 stored 512 bytes into its stage
    ("shl.b32 \t%r217, %r37, 1;", "shl.b32 \t%r217, %r37, 2;", 1239, {"counterexample", "unknown"}),  # stage stride x2
    ("and.b32 \t%r164, %r163, -4;", "and.b32 \t%r164, %r163, -8;", 1130, {"counterexample", "unknown"}),  # rem 8
    # 2^22 t + 1: stage 1 only while t < 2^9, a narrower count than any premise stated (2^24)
    ("shl.b32 \t%r160, %r342, 2;", "shl.b32 \t%r160, %r342, 22;", 1130, {"unknown"}),
])
def test_planted_epilogue_stage_error_is_not_proved_at_its_store(was, now, line, want):
    """A store 512 bytes into its stage (no box of any stage, for every t), subtile 3 at twice the stage
    stride (3 x 16384: past the 4 x 8192-byte buffer), a remainder by 8 (stage 5 for odd t) or a stage
    index 2^22 t + 1 (right only for t < 2^9, a narrower count than the 2^24 any premise states) is never
    proved at its line (quack's buffer offsets are an inference, never an error: the grouped GEMM's test
    has the error); subtile 0's store stays proved."""
    ptx = _text(SM90, "ptx")
    assert ptx.count(was) == 1
    rep = audit_pair(_text(SM90, "mlir"), ptx.replace(was, now))
    smem = {c.line: c for c in rep.checks if c.check == "tma-smem-box" and c.line in _STORES}
    assert smem[line].status in want
    assert smem[1076].status == "proved"                   # subtile 0 reads none of the planted values
