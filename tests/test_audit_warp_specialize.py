"""Warp-specialized kernels (``ttg.warp_specialize``: a load partition and an MMA partition over a
3-stage TMA ring) audited like any other code. The corpus kernel ``ws_tma_matmul`` is Triton's own
output for a correct kernel, so every MMA operand must be proved.

Its PTX advances each ring buffer's base by one stage per iteration in one loop-carried register
(``add.s32 %r, %r, 16384`` for the 128x64 f16 B tile) and wraps it with another (the iteration count
divided by the 3 stages, times 3 stages of bytes): the 1024-byte alignment of the base the wgmma
descriptors read is then a fact about two loop-carried values, proved under each one's alignment
(each by induction over its definitions). A stride that breaks the alignment leaves it unproved.
"""
from __future__ import annotations

import re
from pathlib import Path

from tests.audited import audit_pair

CORPUS = Path(__file__).resolve().parent / "corpus"
WS = {t: CORPUS / t / "ws_tma_matmul_128x128x64_w4_s3" for t in ("cuda90", "cuda100")}


def _ptx_checks(stem: Path, ptx: str | None = None):
    ttgir = stem.with_suffix(".ttgir").read_text()
    ptx = stem.with_suffix(".ptx").read_text() if ptx is None else ptx
    return audit_pair(ttgir, ptx, "ws").checks


def test_the_corpus_kernel_is_warp_specialized():
    for stem in WS.values():
        text = stem.with_suffix(".ttgir").read_text()
        assert "ttg.warp_specialize" in text and "partition0" in text


def test_every_mma_operand_of_the_warp_specialized_kernel_is_proved():
    for target, stem in WS.items():
        mma = [c for c in _ptx_checks(stem) if c.check == "mma-descriptor"]
        assert len(mma) >= 8, target
        assert {c.status for c in mma} == {"proved"}, [(c.line, c.message) for c in mma if c.status != "proved"]


def test_the_ring_base_alignment_is_proved_over_two_loop_carried_values():
    mma = [c for c in _ptx_checks(WS["cuda90"]) if c.check == "mma-descriptor"]
    laws = [c.data.get("induction", "") for c in mma]
    assert any("is a multiple of" in law for law in laws), laws


def test_a_ring_stride_off_the_swizzle_repeat_is_not_proved():
    ptx = WS["cuda90"].with_suffix(".ptx").read_text()
    strides = re.findall(r"add\.s32\s+(%r\d+), \1, 16384;", ptx)
    assert strides
    mutant = re.sub(r"(add\.s32\s+(%r\d+), \2, )16384;", r"\g<1>16400;", ptx)
    mma = [c for c in _ptx_checks(WS["cuda90"], mutant) if c.check == "mma-descriptor" and c.data.get("operand") == "B"]
    assert mma and "proved" not in {c.status for c in mma}
