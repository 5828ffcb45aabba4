"""The ``stmatrix`` of CuTe-DSL epilogues proved against the MLIR (check ``smem-copy``,
audit/cute_dsl_copies): the stored corpus (tests/cutedsl/corpus: the DSL's own Hopper examples and
quack-kernels' sm_90 GEMMs, compiled for sm_90a) has every stmatrix proved, and bugs planted in the PTX
text here are errors at the edited line.

Oracles: the instruction lines come from the PTX text (a regex here); the wanted addresses of the planted
swizzle bug are derived in the test from the PTX ISA fragments (wgmma D: thread ``t`` of warp 0 holds row
``t / 4``, columns ``2 (t % 4)``, ``+1``; stmatrix: lane ``8 j + r`` gives row ``r`` of matrix ``j``) and
the epilogue buffer as the MLIR prints it (``S<2,4,3>`` on bytes, ``((8,8),(32,1),(1,4)):((32,256),(1,0),
(0,2048))`` f16, at byte 1024 of the allocation: its ``smem.struct_fields`` ``sA:114688:1024``)."""
from __future__ import annotations

import gzip
import os
import re

import numpy as np
import pytest

from verilayout.audit.cute_dsl import audit_pair
from verilayout.audit.cute_dsl_copies import CHECK, stmatrix_rows
from tests.audited import audit_cute_pair

CORPUS = os.path.join(os.path.dirname(__file__), "cutedsl", "corpus")
SM90 = ["hopper_fmha_f16_d128_64x128", "hopper_gemm_e4m3_kk_128x128", "hopper_gemm_f16_kk_128x128",
        "hopper_gemm_f16_kk_128x256", "hopper_gemm_f16_mn_128x128", "hopper_grouped_gemm_f16_kk_128x128",
        "quack_gemm_sm90_bf16_kk_128x192_pingpong", "quack_gemm_sm90_f16_kk_128x128",
        "quack_gemm_sm90_f16_kk_128x128_cluster2x1", "quack_gemm_sm90_f16_mn_128x128"]
SM100 = ["blackwell_gemm_f16_kk_128x128", "blackwell_gemm_f16_kk_256x128_2cta", "quack_gemm_sm100_f16_kk_128x128",
         "quack_gemm_sm100_f16_kk_256x128_cluster2x1"]
KK = "hopper_gemm_f16_kk_128x128"


def _text(name: str, kind: str) -> str:
    with gzip.open(os.path.join(CORPUS, f"{name}.{kind}.gz"), "rt") as f:
        return f.read()


def _copy_lines(ptx: str) -> list[int]:
    return [n for n, line in enumerate(ptx.split("\n"), 1) if re.match(r"\s*(st|ld)matrix\.", line)]


def _copies(mlir: str, ptx: str) -> list:
    return [c for c in audit_pair(mlir, ptx, "k.ptx").checks if c.check == CHECK]


def _corpus_copies(name: str, ptx: str) -> list:
    """The checks of a corpus kernel as stored: its audit shared with the other CuTe-DSL test files."""
    return [c for c in audit_cute_pair(_text(name, "mlir"), ptx, f"{name}.ptx").checks if c.check == CHECK]


@pytest.mark.parametrize("name", SM90 + SM100)
def test_corpus_every_stmatrix_proved(name: str) -> None:
    ptx = _text(name, "ptx")
    checks = _corpus_copies(name, ptx)
    lines = _copy_lines(ptx)
    assert sorted(c.line for c in checks) == lines           # every stmatrix/ldmatrix gets exactly one check
    assert all(c.status == "proved" for c in checks), [(c.line, c.status, c.message) for c in checks
                                                       if c.status != "proved"]
    assert bool(lines) == (name in SM90)                      # the sm_100 kernels store through tcgen05.ld / st


def _planted(old: str, new: str, nth: int = 0) -> tuple[int, list]:
    ptx = _text(KK, "ptx")
    lines = ptx.split("\n")
    at = [k for k, line in enumerate(lines) if old in line][nth]
    lines[at] = lines[at].replace(old, new, 1)
    return at + 1, _copies(_text(KK, "mlir"), "\n".join(lines))


def _errors_at(checks: list) -> set[int]:
    return {c.line for c in checks if c.status == "error"}


def _swizzle(byte: int, mask: int = 0x30) -> int:
    """S<2,4,3> on byte addresses: bits 7-8 XOR into bits 4-5 (the PTX computes ``(a >> 3) & 48``)."""
    return byte ^ ((byte >> 3) & mask)


def test_planted_swizzle_mask_is_an_error_at_its_line_with_both_addresses() -> None:
    line, checks = _planted("and.b32 \t%r160, %r159, 48", "and.b32 \t%r160, %r159, 32")
    assert line in _errors_at(checks)
    first = next(c for c in checks if c.status == "error" and c.op.startswith("stmatrix"))
    t = first.data["thread"]                                  # a warp-0 thread: its d0 is C[t / 4, 2 (t % 4)]
    row, col = t // 4, 2 * (t % 4)
    plain = 1024 + 2 * (32 * (row % 8) + 256 * (row // 8) + col)   # the memref's f16 layout, buffer at 1024
    assert first.data["want"] == _swizzle(plain)
    assert first.data["got"] == _swizzle(plain, 0x20)
    assert first.data["want"] != first.data["got"]


def test_planted_address_plus_16_is_an_error_at_the_stmatrix() -> None:
    line, checks = _planted("[%r15], {%r151", "[%r15+16], {%r151")
    assert _errors_at(checks) == {line}
    bad = next(c for c in checks if c.line == line)
    assert bad.data["got"] - bad.data["want"] == 16


def test_planted_cvt_operand_swap_is_an_error_at_the_cvt() -> None:
    line, checks = _planted("%r151, %r381, %r382", "%r151, %r382, %r381")
    assert line in _errors_at(checks)
    assert next(c for c in checks if c.line == line).op.startswith("cvt")


def test_planted_stmatrix_register_order_is_an_error_at_the_stmatrix() -> None:
    line, checks = _planted("{%r151, %r152,", "{%r152, %r151,")
    assert _errors_at(checks) == {line}


def test_a_sub_tile_stored_twice_is_an_error() -> None:
    """The third stmatrix stores the first one's registers at the first one's address: every byte sits
    where the memref puts its element, but the epilogue's iterations no longer tile the C tile."""
    line, checks = _planted("[%r17], {%r164, %r165, %r166, %r167}", "[%r15], {%r151, %r152, %r153, %r154}")
    assert _errors_at(checks) == {line}


def test_ldmatrix_is_unchecked_with_its_reason() -> None:
    line, checks = _planted("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r15], {%r151, %r152, %r153, %r154}",
                            "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r151, %r152, %r153, %r154}, [%r15]")
    got = next(c for c in checks if c.line == line)
    assert got.status == "unchecked" and "ldmatrix" in got.data["reason"]


def test_without_an_stsm_copy_in_the_mlir_every_stmatrix_is_unchecked() -> None:
    mlir = "\n".join(line for line in _text(KK, "mlir").split("\n") if "tiled.copy.partition_D" not in line)
    ptx = _text(KK, "ptx")
    checks = _copies(mlir, ptx)
    assert sorted(c.line for c in checks) == _copy_lines(ptx)
    assert {c.status for c in checks} == {"unchecked"} and all("stsm" in c.data["reason"] for c in checks)


def test_stmatrix_rows_follow_the_ptx_isa_fragment() -> None:
    lane = np.arange(32)
    for j in range(4):
        src, off = stmatrix_rows(lane, j)
        assert src.tolist() == [8 * j + t // 4 for t in range(32)]
        assert off.tolist() == [4 * (t % 4) for t in range(32)]


def test_planted_stage_is_an_error_where_the_tma_store_reads_another() -> None:
    """The first stmatrix moved to stage 1 (+4096 bytes: the memref's stage stride 2048 f16): its bytes sit
    where the memref puts them in stage 1, but the TMA store after the fence reads stage 0 (+1024 of the
    base: the buffer's offset), so the stmatrix is an error naming both stages."""
    line, checks = _planted("[%r15], {%r151", "[%r15+4096], {%r151")
    assert _errors_at(checks) == {line}
    bad = next(c for c in checks if c.line == line)
    assert "1024" in bad.message and str(1024 + 4096) in bad.message


def test_every_corpus_stmatrix_is_tied_to_the_tma_store_that_reads_its_stage() -> None:
    for name in ("hopper_gemm_f16_kk_128x128", "hopper_fmha_f16_d128_64x128", "quack_gemm_sm90_f16_kk_128x128"):
        ptx = _text(name, "ptx")
        stores = [n for n, line in enumerate(ptx.split("\n"), 1)
                  if re.match(r"\s*cp\.async\.bulk\.tensor\.\dd\.global\.shared", line)]
        for c in _corpus_copies(name, ptx):
            assert c.data["tma_line"] == min(s for s in stores if s > c.line)   # the next bulk store after it
