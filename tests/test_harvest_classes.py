"""Each kind of false error the harvest showed (tests/harvest/README.md), on the real kernel it was
seen on: the kernel ships in a released package (correct: no error), the shared-memory op that was an
error is proved now, and one of its accesses moved 16 bytes (a real bug, planted here by text) is an
error at that PTX line. Lines are those of the stored corpus (tests/harvest/corpus.tar.xz)."""
from __future__ import annotations

import functools
from pathlib import Path

import pytest

from tests.reference.ptx_mutations import errors_at, plant, sites
from tests.test_harvest_audit import _folder
from tests.test_ptx_mutations import _smem_address
from verilayout.frontends.ttgir import parse_module

pytestmark = pytest.mark.slow


@functools.lru_cache(maxsize=8)
def _pair(name: str) -> tuple[str, object]:
    stem = str(_folder(_CLASS_FILES) / name)  # (stems hold dots: no with_suffix)
    return Path(stem + ".ptx").read_text(), parse_module(Path(stem + ".ttgir").read_text())


@functools.lru_cache(maxsize=8)
def _checks(name: str) -> tuple:
    ptx, tmod = _pair(name)
    return tuple(_smem_address(ptx, tmod))


def _of(name: str, ttgir_line: int) -> list:
    return [c for c in _checks(name) if c.data.get("ttgir_line") == ttgir_line]


def _moved(name: str, line: int, opcode: str) -> list:
    """The element and conversion checks of the kernel with the access at PTX ``line`` moved 16 bytes."""
    ptx, tmod = _pair(name)
    site = [s for s in sites(ptx) if s.line == line]
    assert len(site) == 1 and site[0].opcode == opcode, site
    return _smem_address(plant(ptx, site[0]), tmod)


INDEXER = "cuda100/axolotl__dsv4.indexer.indexer_score_kernel_at0_w4_s2"
LIGHTNING = "cuda100/lightning-attn__lightning_attn2.bwd_inter_kernel_d0_w4_s3"
DECODE = "cuda90/lightllm__llama.triton_kernel.gqa_flash_decoding_stage1.fwd_kernel_flash_decode_stage1_ls0_w1_s2"
AWQ = "cuda100/gptqmodel__awq_gemm_kernel_d0_w4_s3"
FP8 = "cuda90/deepspeed__matmul_kernel_fp8_bf16_d0_w4_s3"
#: the stored files these tests read (only they are unpacked)
_CLASS_FILES = frozenset(f"{n}.{ext}" for n in (INDEXER, LIGHTNING, DECODE, AWQ, FP8) for ext in ("ptx", "ttgir"))


@pytest.mark.parametrize("name", [INDEXER, LIGHTNING, DECODE, AWQ, FP8])
def test_the_kernel_has_no_error(name):
    errors = [(c.line, c.message) for c in _checks(name) if c.severity == "error"]
    assert not errors, errors[:3]


def test_a_byte_read_twice_by_a_load():
    # the FMA dot's A operand (TTGIR line 117): LLVM kept a v4 load and scalar loads of one element
    got = _of(INDEXER, 117)
    assert got and all(c.status == "proved" for c in got)
    assert any(c.data.get("reread_bytes", 0) > 0 for c in got)
    assert errors_at(_moved(INDEXER, 597, "ld.shared.v4.b32"), 597)


def test_i1_conversions_through_one_byte_each():
    ptx, tmod = _pair(LIGHTNING)
    i1 = {op.line for op in tmod.ops if op.name == "ttg.convert_layout" and "xi1," in op.operand_types[0] + ","}
    proved = {c.data["ttgir_line"] for c in _checks(LIGHTNING) if c.status == "proved" and c.data.get("ttgir_line") in i1}
    assert len(proved) >= 4, (sorted(i1), sorted(proved))
    store = next(c.line for c in _checks(LIGHTNING) if c.status == "proved" and c.data.get("ttgir_line") in i1)
    assert errors_at(_moved(LIGHTNING, store, "st.shared.b8"), store)


def test_a_round_whose_loads_were_dropped_is_a_warning():
    # the pointer conversion of line 348 (PTX 5950..): its second round of stores has no load at all
    # (cp.async uses one pointer of eight); written inside the scratch, never read: a warning
    warned = [c for c in _checks(LIGHTNING) if c.severity == "warning" and c.data.get("unread_only")]
    assert any(c.data.get("ttgir_line") == 406 and c.line == 5964 for c in warned), \
        [(c.line, c.message[:80]) for c in warned]


def test_a_second_conversion_beside_a_local_load_and_two_copies_of_one_buffer():
    # k's conversion (line 237) stores in the epoch of k's ldmatrix; k's async copy fills one buffer twice
    copies = _of(DECODE, 157)
    assert len(copies) == 2 and all(c.status == "proved" for c in copies)
    assert [c.status for c in _of(DECODE, 188)] == ["proved"]
    assert errors_at(_moved(DECODE, 781, "cp.async.cg.shared.global"), 781)


def test_guarded_copies_of_a_broadcast_layout():
    # a 1x8 i32 copy held by many lanes, copied by the 8 the guard leaves on, into 2 stages
    got = _of(AWQ, 184)
    assert len(got) == 4 and all(c.status == "proved" for c in got)
    assert errors_at(_moved(AWQ, 442, "cp.async.ca.shared.global"), 442)


def test_a_load_narrowed_to_part_of_each_element():
    # an i32 tile masked and truncated to i16: LLVM loads the low two bytes of each element
    got = _of(FP8, 136)
    assert [c.status for c in got] == ["proved"] and got[0].data["narrowed"] == [0, 1]
    assert errors_at(_moved(FP8, 1345, "ld.shared.b16"), 1345)
