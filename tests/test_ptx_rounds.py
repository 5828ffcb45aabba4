"""PTX accesses matched to TTGIR shared-memory ops by dataflow, not by ``.loc`` alone (issue 26):
barrier rounds for ``convert_layout`` through scratch memory, the address register for an access
the scheduler moved under another line's ``.loc``; and the PTX bank figure set beside the TTGIR
model's by conflict factor.

Expected values come from outside the checker: PTX lines are found by their text in kernels
compiled by the Triton 3.9 wheel (tests/thirdparty, written by tests/thirdparty/generate.py), the
planted edits are written here, and the ldmatrix wavefronts are counted by brute force over the
row addresses (PTX ISA: ``.x4`` lanes 8i..8i+7 give the 16-byte rows of matrix i; one matrix a
phase; a phase takes as many wavefronts as the most distinct 4-byte words one of the 32 banks
holds)."""
from __future__ import annotations

from pathlib import Path

import pytest

from verilayout.audit import audit_file, audit_ptx_text

ROOT = Path(__file__).resolve().parent.parent
TP = ROOT / "tests" / "thirdparty"
#: unsloth nvfp4 matmul (16x128x128, 4 warps, sm_90): LLVM hoisted the last A-operand load of the
#: ``ttg.local_load`` (nvfp4.py:287) below the loads and gave it the dot's ``.loc`` (nvfp4.py:312),
#: the line of a ``convert_layout`` through scratch memory
NVFP4 = TP / "cuda90" / "unsloth__nvfp4_matmul_fwd_kernel_16x128x128_w4_s4"
STRAY = "ld.shared.v2.b32 \t{%r290, %r302}, [%r45+8192];"


def _checks(stem: Path, text: str | None = None, kind: str = "smem-address"):
    ptx = text if text is not None else stem.with_suffix(".ptx").read_text()
    ttgir = stem.with_suffix(".ttgir")
    rep = audit_ptx_text(ptx, "k.ptx", ttgir.read_text(), audit_file(str(ttgir)).checks)
    return [c for c in rep.checks if c.check == kind]


def _line_of(stem: Path, find: str) -> int:
    lines = stem.with_suffix(".ptx").read_text().split("\n")
    hits = [i + 1 for i, ln in enumerate(lines) if find in ln]
    assert len(hits) == 1, (find, hits)
    return hits[0]


def _mutate(stem: Path, find: str, new: str) -> tuple[str, int]:
    line = _line_of(stem, find)
    lines = stem.with_suffix(".ptx").read_text().split("\n")
    lines[line - 1] = lines[line - 1].replace(find, new)
    return "\n".join(lines), line


def test_the_stray_load_carries_the_dot_line():
    # the premise, read from the PTX text: the load sits after the local_load's loads, under .loc 312
    lines = NVFP4.with_suffix(".ptx").read_text().split("\n")
    at = _line_of(NVFP4, STRAY)
    loc = next(ln for ln in reversed(lines[:at - 1]) if ln.strip().startswith(".loc"))
    assert "nvfp4.py:312" in loc and "nvfp4.py:287" in lines[at - 18]


def test_moved_load_is_adopted_and_conversion_found_by_rounds():
    cs = _checks(NVFP4)
    assert not [c for c in cs if c.status == "counterexample"], [c.message for c in cs]
    ll = [c for c in cs if "local_load (TTGIR line 219)" in c.message]
    assert len(ll) == 1 and ll[0].status == "proved"
    assert _line_of(NVFP4, STRAY) in ll[0].data["instructions"]
    cv = [c for c in cs if "convert_layout (TTGIR line 158)" in c.message]
    assert len(cv) == 1 and cv[0].status == "proved"
    # the conversion's stores and loads: the first st.shared under nvfp4.py:312, not the stray load
    assert cv[0].line == _line_of(NVFP4, "st.shared.b32 \t[%r30], %r401;")


@pytest.mark.parametrize("find, new, what", [
    (STRAY, STRAY.replace("+8192]", "+8200]"), "local_load (TTGIR line 219)"),      # the moved load, 8 B off
    ("st.shared.b32 \t[%r30+128], %r408;", "st.shared.b32 \t[%r30+132], %r408;",    # one conversion store
     "convert_layout (TTGIR line 158)"),
])
def test_a_wrong_offset_is_still_an_error_at_its_line(find, new, what):
    text, line = _mutate(NVFP4, find, new)
    bad = [c for c in _checks(NVFP4, text) if c.status == "counterexample"]
    assert len(bad) == 1 and bad[0].severity == "error", [(c.line, c.message) for c in bad]
    assert bad[0].line == line and what in bad[0].message, (line, bad[0].message)


# ----- bank figures: PTX ldmatrix .trans against the TTGIR model's ld.shared.b16 ------------------

GPTQ = ROOT / "tests" / "fixtures" / "ptx_rounds" / "sglang__fused_moe_kernel_gptq_awq_16x128x128_w4_s3"


def _brute_ldmatrix_x4(rows: list[int]) -> int:
    total = 0
    for i in range(4):
        banks: dict[int, set[int]] = {}
        for r in rows[8 * i:8 * i + 8]:
            for b in range(r, r + 16, 4):
                banks.setdefault(b // 4 % 32, set()).add(b // 4)
        total += max(len(w) for w in banks.values())
    return total


def test_ldmatrix_trans_and_ttgir_model_agree_on_the_conflict_factor():
    from verilayout.frontends.ptx import parse_ptx
    from verilayout.prove.ptx_values import PtxValues
    from verilayout.audit.ptx_smem import thread_offsets
    line = _line_of(GPTQ, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r246, %r258, %r247, %r259}, [%r20];")
    c = next(c for c in _checks(GPTQ, kind="bank-conflicts") if c.line == line)
    mod = parse_ptx(GPTQ.with_suffix(".ptx").read_text())
    ins = next(i for i in mod.instrs if i.line == line)
    rows = thread_offsets(PtxValues(mod, ins.func), ins, ins.args[-1].base, 32, {})[1]
    assert _brute_ldmatrix_x4(rows) == c.data["wavefronts"] == 8 and c.data["ideal"] == 4
    # the TTGIR model costs one ld.shared.b16 per element: 2 wavefronts, ideal 1: also 2-way
    assert (c.data["ttgir_wavefronts"], c.data["ttgir_ideal"]) == (2, 1)
    assert c.data["agrees"] is True and "the same 2-way conflict" in c.message


# ----- conversions in several rounds, broadcast layouts, several ops of one line -----------------

def _status(stem: Path, what: str, text: str | None = None) -> list:
    return [c for c in _checks(stem, text) if what in c.message]


def test_multi_round_broadcast_conversion_is_proved():
    # convert_layout 212 (#blocked1 -> a slice of #linear2: a broadcast destination) goes through
    # scratch memory in four rounds: stmatrix, barrier, two ld.shared.v4, barrier (read off the PTX)
    text = NVFP4.with_suffix(".ptx").read_text()
    assert text.count("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%r42]") == 4
    cs = _status(NVFP4, "convert_layout (TTGIR line 212)")
    assert len(cs) == 1 and cs[0].status == "proved" and cs[0].data["rounds"] == 4
    assert "in 4 rounds" in cs[0].message


@pytest.mark.parametrize("find, new", [
    # the third round's second load moved 16 bytes
    ("ld.shared.v4.b32 \t{%r752, %r753, %r754, %r755}, [%r43+64];",
     "ld.shared.v4.b32 \t{%r752, %r753, %r754, %r755}, [%r43+80];"),
    # the second round's store moved one 16-byte row
    ("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%r42], {%r726, %r727};",
     "stmatrix.sync.aligned.m8n8.x2.shared.b16 [%r42+16], {%r726, %r727};"),
])
def test_a_moved_access_of_one_round_is_an_error_at_its_line(find, new):
    text, line = _mutate(NVFP4, find, new)
    bad = [c for c in _checks(NVFP4, text) if c.status == "counterexample"]
    assert len(bad) == 1 and bad[0].severity == "error", [(c.line, c.message) for c in bad]
    assert bad[0].line == line and "convert_layout (TTGIR line 212)" in bad[0].message, bad[0].message


#: sglang w8a8 block FP8 matmul (16x128x128, 4 warps, sm_100): fp8_kernel.py:126 holds the A and B
#: local_alloc/local_load pairs (two types each) and a broadcast conversion (#blocked1 -> a slice
#: of #mma) that every thread stores to once
FP8 = ROOT / "tests" / "fixtures" / "ptx_rounds" / "sglang__w8a8_block_fp8_matmul_16x128x128_w4_s3"


def test_ops_of_one_line_each_get_their_own_accesses():
    cs = _checks(FP8)
    assert not [c for c in cs if c.status != "proved"], [c.message for c in cs if c.status != "proved"]
    for what, find in [("local_alloc (TTGIR line 122)", "st.shared.b8 \t[%r10], "),
                       ("local_alloc (TTGIR line 128)", "st.shared.b8 \t[%r22+128], "),
                       ("local_load (TTGIR line 123)", "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r"),
                       ("convert_layout (TTGIR line 142)", "st.shared.b32 \t[%r46], ")]:
        text = FP8.with_suffix(".ptx").read_text().split("\n")
        lines = [i + 1 for i, ln in enumerate(text) if find in ln]
        hit = [c for c in cs if what in c.message]
        assert len(hit) == 1 and hit[0].status == "proved", what
        assert hit[0].line in lines or set(hit[0].data.get("instructions", [])) & set(lines), (what, hit[0].line)


@pytest.mark.parametrize("find, new, what", [
    ("st.shared.b8 \t[%r22+2176], ", "st.shared.b8 \t[%r22+2177], ", "local_alloc (TTGIR line 128)"),
    ("st.shared.b32 \t[%r46], %r348;", "st.shared.b32 \t[%r46+4], %r348;", "convert_layout (TTGIR line 142)"),
])
def test_a_wrong_offset_on_a_shared_line_is_an_error_at_its_line(find, new, what):
    text, line = _mutate(FP8, find, new)
    bad = [c for c in _checks(FP8, text) if c.status == "counterexample"]
    assert len(bad) == 1 and bad[0].severity == "error", [(c.line, c.message) for c in bad]
    assert bad[0].line == line and what in bad[0].message, (line, bad[0].message)


# ----- broadcast layouts in local ops: a guarded copy by one of the lanes holding an element ---------

#: fla parallel attention backward dk/dv (sm_100): the 32-element lse/delta vectors (#blocked over
#: 128 threads: lanes hold copies) are copied by cp.async under `@%p16` (%p16: a test on %tid.x)
#: and read back by a broadcast local_load
FLA = TP / "cuda100" / "fla__parallel_attn_bwd_kernel_dkv_k128_bt64_bs32_g1_w4_s2"
COPY = "@%p16 cp.async.ca.shared.global [ %r1047 + 0 ], [ %rd141 + 0 ], 0x4, %r167;"


def test_guarded_copy_of_a_broadcast_layout_is_proved():
    assert "setp.eq.b32 \t%p16, %r4, 0;" in FLA.with_suffix(".ptx").read_text()
    cs = _checks(FLA)
    assert cs and all(c.status == "proved" for c in cs), [c.message for c in cs if c.status != "proved"]
    hit = [c for c in cs if "async_copy_global_to_local (TTGIR line 216)" in c.message]
    assert len(hit) == 3 and any(_line_of(FLA, COPY) in c.data["instructions"] for c in hit)   # 3 stages
    assert [c for c in cs if "local_load (TTGIR line 255)" in c.message][0].status == "proved"


def test_a_guarded_copy_too_wide_is_an_error_at_its_line():
    # 8 bytes a lane instead of 4: each copying lane overwrites its neighbour's element (a uniform
    # move of the one instruction of a copy is not seen: the law is relative to the warp's first byte)
    text, line = _mutate(FLA, COPY, COPY.replace("0x4, %r167", "0x8, %r167"))
    bad = [c for c in _checks(FLA, text) if c.status == "counterexample"]
    assert len(bad) == 1 and bad[0].severity == "error", [(c.line, c.message) for c in bad]
    assert bad[0].line == line and "TTGIR line 216" in bad[0].message, bad[0].message
