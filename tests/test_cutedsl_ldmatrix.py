"""``ldmatrix`` and the ``mma.sync`` it feeds in CuTe-DSL kernels, proved against the MLIR (checks
``smem-copy`` and ``mma-operand``, audit/cute_dsl_ldmatrix): the stored corpus (tests/cutedsl/corpus/ampere_*:
the DSL's Ampere ``tensorop_gemm.py`` compiled for sm_80 by tests/cutedsl/generate_ldmatrix.py) has every
``ldmatrix`` and every ``mma.sync`` proved, and bugs planted here in the PTX or the MLIR text are errors at
the edited line.

Oracles, written out here, not taken from the code under test:

* PTX ISA, ``ldmatrix`` (Data Movement and Conversion Instructions): for ``.x4`` lanes ``8j .. 8j+7`` give
  the row addresses of matrix ``j``; without ``.trans`` lane ``l`` receives in register ``j`` row ``l/4``,
  elements ``2 (l%4)`` and ``2 (l%4)+1`` of matrix ``j``; with ``.trans`` column ``l/4``, rows ``2 (l%4)``
  and ``2 (l%4)+1``; a row is 8 16-bit elements.
* PTX ISA 9.7.14.5.8, "Matrix Fragments for mma.m16n8k16" (f16/bf16): ``groupID = lane >> 2``,
  ``threadID_in_group = lane % 4``; A: ``a0,a1: (g, 2q + i)``, ``a2,a3: (g + 8, 2q + i - 2)``, ``a4,a5:
  (g, 2q + i - 4 + 8)``, ``a6,a7: (g + 8, 2q + i - 6 + 8)``; B: ``b0,b1: (k 2q + i, n g)``, ``b2,b3:
  (2q + i - 2 + 8, g)``; C/D: ``c0,c1: (g, 2q + i)``, ``c2,c3: (g + 8, 2q + i - 2)`` (tables below).
* The MLIR as printed: A's buffer ``S<2,4,3>`` on bytes, ``((8,16),(32,1),(1,4)):((32,256),(1,0),(0,4096))``
  f16 at byte 0 of the allocation; the tiled MMA ``16x8x16``, atoms ``(2,2,1):(1,2,0)`` (warp ``w``: atom
  ``(w % 2, w / 2)``), ``permutation_MNK [32:1;32:1;16:1]``, the CTA tile 128 x 128 x 32.
"""
from __future__ import annotations

import gzip
import itertools
import os
import re

import numpy as np
import pytest

from verilayout.audit.cute_dsl import audit_pair
from verilayout.audit.cute_dsl_ldmatrix import MMA_CHECK, ldmatrix_source
from verilayout.frontends.ptx import parse_ptx

CORPUS = os.path.join(os.path.dirname(__file__), "cutedsl", "corpus")
KERNELS = ["ampere_gemm_f16_kk_128x128", "ampere_gemm_f16_mn_128x128", "ampere_gemm_bf16_kk_128x128_4x1"]
KK, MN = KERNELS[0], KERNELS[1]

#: PTX ISA 9.7.14.5.8 m16n8k16 A fragment, element i of a thread: (row, col) as functions of (g, q)
A_FRAG = {0: (0, 0), 1: (0, 1), 2: (8, 0), 3: (8, 1), 4: (0, 8), 5: (0, 9), 6: (8, 8), 7: (8, 9)}
#: B fragment, element i: (k, n) offsets: k = 2q + dk, n = g
B_FRAG = {0: 0, 1: 1, 2: 8, 3: 9}


def _text(name: str, kind: str) -> str:
    with gzip.open(os.path.join(CORPUS, f"{name}.{kind}.gz"), "rt") as f:
        return f.read()


def _lines(ptx: str, pattern: str) -> list[int]:
    return [n for n, line in enumerate(ptx.split("\n"), 1) if re.match(pattern, line)]


def _audit(mlir: str, ptx: str) -> list:
    return [c for c in audit_pair(mlir, ptx, "k.ptx").checks if c.check in ("smem-copy", MMA_CHECK)]


def _planted(old: str, new: str, name: str = KK, nth: int = 0, kind: str = "ptx") -> tuple[int, list]:
    texts = {"ptx": _text(name, "ptx"), "mlir": _text(name, "mlir")}
    lines = texts[kind].split("\n")
    at = [k for k, line in enumerate(lines) if old in line][nth]
    lines[at] = lines[at].replace(old, new, 1)
    texts[kind] = "\n".join(lines)
    return at + 1, _audit(texts["mlir"], texts["ptx"])


def _errors_at(checks: list) -> set[int]:
    return {c.line for c in checks if c.status == "error"}


def _a_byte(r: int, c: int, s: int, mask: int = 0x30) -> int:
    """A's buffer in the kk kernel: byte of element (r, c) of stage s, S<2,4,3> on bytes (bits 7-8 XOR
    into bits 4-5; ``mask`` 0x20: the planted swizzle)."""
    plain = 2 * ((r % 8) * 32 + (r // 8) * 256 + c + 4096 * s)
    return plain ^ ((plain >> 3) & mask)


@pytest.fixture(scope="module")
def corpus() -> dict:
    return {n: (_text(n, "ptx"), _audit(_text(n, "mlir"), _text(n, "ptx"))) for n in KERNELS}


@pytest.mark.parametrize("name", KERNELS)
def test_corpus_every_ldmatrix_and_mma_proved(corpus: dict, name: str) -> None:
    ptx, checks = corpus[name]
    loads = _lines(ptx, r"\s*ldmatrix\.")
    mmas = _lines(ptx, r"\s*mma\.sync\.")
    assert loads and mmas
    assert sorted(c.line for c in checks if c.check == "smem-copy") == loads    # one check per ldmatrix
    assert sorted(c.line for c in checks if c.check == MMA_CHECK) == mmas       # one per mma.sync
    bad = [(c.line, c.check, c.status, c.message) for c in checks if c.status != "proved"]
    assert not bad, bad[:3]


FA2 = "ampere_fa2_f16_d128_128x64"


def test_flash_attention_every_ldmatrix_and_mma_proved() -> None:
    """The DSL's Ampere FlashAttention-2 (Q, K from K-major buffers, V through ``.trans``; the buffers'
    swizzle composed into the layout text, ``S<3,3,3> o 0 o ...``, element units): every ldmatrix proved;
    every mma.sync proved, S = Q K^T from the Q and K buffers and O += P V with P from S's accumulator
    registers (through the softmax's arithmetic and the f16x2 packing)."""
    ptx = _text(FA2, "ptx")
    checks = _audit(_text(FA2, "mlir"), ptx)
    loads = [c for c in checks if c.check == "smem-copy"]
    assert sorted(c.line for c in loads) == _lines(ptx, r"\s*ldmatrix\.")
    assert any(".trans." in line for line in ptx.split("\n") if "ldmatrix." in line)
    mmas = [c for c in checks if c.check == MMA_CHECK]
    assert sorted(c.line for c in mmas) == _lines(ptx, r"\s*mma\.sync\.")
    assert {c.status for c in checks} == {"proved"}
    assert any("A from an earlier mma.sync's accumulator" in c.message for c in mmas)


def test_flash_attention_p_packed_in_the_wrong_halves_is_an_error_at_the_pv_mma() -> None:
    """The first f16x2 packing of P swapped (``cvt.rn.f16x2.f32 d, a, b``: ``a`` to the upper half, PTX ISA
    cvt): thread 0's A register a0/a1 then holds S[0, 1] in half 0, where the ISA A fragment wants S[0, 0]
    (row g = 0, column 2q = 0)."""
    line, checks = _planted("%r1298, %r1022, %r1021;", "%r1298, %r1021, %r1022;", name=FA2)
    bad = [c for c in checks if c.status == "error"]
    assert bad and all(c.check == MMA_CHECK for c in bad)
    first = min(bad, key=lambda c: c.line)
    assert first.data["register"] == "%r1298" and first.data["thread"] == 0 and first.data["half"] == 0
    assert tuple(first.data["want"][:2]) == (0, 0) and tuple(first.data["got"][:2]) == (0, 1)


def test_transposed_kernel_uses_trans(corpus: dict) -> None:
    ptx, checks = corpus[MN]
    assert all(".trans." in line for line in ptx.split("\n") if "ldmatrix." in line)
    assert all(c.status == "proved" for c in checks)


def test_mma_blocks_cover_the_tile_once_per_k_block(corpus: dict) -> None:
    """64 mma.sync: 4 M blocks of 32 (16 x 2 atoms) x 8 N blocks of 16 (8 x 2 atoms) x 2 K blocks of 16."""
    _ptx, checks = corpus[KK]
    blocks = sorted(tuple(c.data["block"]) for c in checks if c.check == MMA_CHECK)
    assert blocks == sorted(itertools.product(range(0, 128, 32), range(0, 128, 16), range(0, 32, 16)))


def test_ldmatrix_source_follows_the_ptx_isa() -> None:
    lane = np.arange(32)
    for j, h in itertools.product(range(4), range(2)):
        src, off = ldmatrix_source(lane, j, h, False)
        assert src.tolist() == [8 * j + t // 4 for t in range(32)]          # row t/4 of matrix j
        assert off.tolist() == [2 * (2 * (t % 4) + h) for t in range(32)]  # element 2 (t%4) + h, 2 bytes each
        src, off = ldmatrix_source(lane, j, h, True)
        assert src.tolist() == [8 * j + 2 * (t % 4) + h for t in range(32)]  # row 2 (t%4) + h of matrix j
        assert off.tolist() == [2 * (t // 4) for t in range(32)]           # column t/4


def test_the_copy_tv_layout_is_the_isa_a_fragment() -> None:
    """The A copy's ``layout_copy_tv`` as the MLIR prints it, evaluated here (colexicographic), puts value
    ``2r + h`` of lane ``l`` of warp 0 at the PTX ISA A fragment's (row, col) of element ``2r + h``: the
    convention the ldmatrix check rests on (value order = register order)."""
    mlir = _text(KK, "mlir")
    tv = re.search(r'!copy_ldsm_4 = .*layout_copy_tv = <"([^"]+)">', mlir).group(1)
    assert tv == "((4,8,2,2),((2,2,2),(1,1))):((64,1,16,0),((32,8,256),(0,0)))"
    for lane, v in itertools.product(range(32), range(8)):
        t0, t1 = lane % 4, lane // 4
        v0, v1, v2 = v % 2, (v // 2) % 2, v // 4
        coord = 64 * t0 + t1 + 32 * v0 + 8 * v1 + 256 * v2            # the layout at ((t0,t1,0,0),(v0,v1,v2))
        dr, dc = A_FRAG[v]
        assert (coord % 32, coord // 32) == (t1 + dr, 2 * t0 + dc)


def test_planted_swizzle_mask_is_an_error_at_its_line() -> None:
    line, checks = _planted("and.b32 \t%r85, %r84, 48", "and.b32 \t%r85, %r84, 32")
    assert line in _errors_at(checks)
    first = next(c for c in checks if c.status == "error" and c.op == "ldmatrix" and c.check == "smem-copy")
    want, got = first.data["want"], first.data["got"]
    assert _a_byte(*got) == _a_byte(*want, mask=0x20)                # read where the planted swizzle puts it
    assert want != got


def test_planted_address_plus_16_is_an_error_at_the_ldmatrix() -> None:
    """The second A ldmatrix of the first copy (rows 32..63 of K-block 0, stage 0: tile (1, 0) of the
    32 x 16 tiler) reads 16 bytes further on: the element it finds sits 16 bytes past the one the A
    fragment wants in that register half (value ``2 reg + half``, the ISA table above)."""
    line, checks = _planted("[%r86+2048]", "[%r86+2064]")
    bad = next(c for c in checks if c.line == line and c.check == "smem-copy")
    assert bad.status == "error"
    t, reg, h = bad.data["thread"], bad.data["register"], bad.data["half"]
    j = ["%r461", "%r462", "%r463", "%r464"].index(reg)
    g, q, wm = (t % 32) // 4, t % 4, (t // 32) % 2
    want = (32 + 16 * wm + g + A_FRAG[2 * j + h][0], 2 * q + A_FRAG[2 * j + h][1], 0)
    assert _a_byte(*bad.data["got"]) - _a_byte(*want) == 16
    assert tuple(bad.data["want"]) == want
    assert {c.line for c in checks if c.status == "error" and c.check == "smem-copy"} == {line}


def test_planted_trans_dropped_is_an_error_at_the_ldmatrix() -> None:
    line, checks = _planted("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
                            name=MN)
    assert line in _errors_at(checks)
    assert next(c for c in checks if c.line == line and c.check == "smem-copy").status == "error"


def test_planted_ldmatrix_register_order_is_an_error_at_the_ldmatrix() -> None:
    """Registers 0 and 1 of the first A ldmatrix swapped: the ldmatrix still loads matrix 0 into its first
    register, now named %r466, but the mma.sync reads %r465 as a0/a1 (ISA: rows g) and finds rows g + 8."""
    line, checks = _planted("{%r465, %r466,", "{%r466, %r465,")
    assert line in _errors_at(checks)
    mma = next(c for c in checks if c.check == MMA_CHECK and c.status == "error" and c.op == "mma")
    t, h = mma.data["thread"], mma.data["half"]
    g, q = (t % 32) // 4, t % 4
    wm = (t // 32) % 2
    assert mma.data["register"] == "%r465"
    assert mma.data["want"][:2] == (16 * wm + g + A_FRAG[h][0], 2 * q + A_FRAG[h][1])   # a0/a1: row g
    assert tuple(mma.data["got"][:2]) == (16 * wm + g + A_FRAG[2 + h][0], 2 * q + A_FRAG[2 + h][1])  # a2/a3: g + 8


def test_planted_mma_operand_order_is_an_error_at_the_mma() -> None:
    """a0 and a2 swapped in the first mma.sync's A vector: register 0 holds A[g, 2q + 8 + h] (ISA a4/a5)."""
    ptx = _text(KK, "ptx")
    first = next(i for i in parse_ptx(ptx).instrs if i.opcode.startswith("mma.sync"))
    line, checks = _planted("{%r465, %r466, %r467, %r468},", "{%r467, %r466, %r465, %r468},", nth=1)
    assert first.line in _errors_at(checks) and line > first.line      # the vector's own line, inside it
    bad = next(c for c in checks if c.line == first.line and c.check == MMA_CHECK)
    t, h = bad.data["thread"], bad.data["half"]
    g, q, wm = (t % 32) // 4, t % 4, (t // 32) % 2
    assert bad.data["register"] == "%r467"
    assert tuple(bad.data["got"][:2]) == (16 * wm + g + A_FRAG[4 + h][0], 2 * q + A_FRAG[4 + h][1])
    assert bad.data["want"][:2] == (16 * wm + g + A_FRAG[h][0], 2 * q + A_FRAG[h][1])


def test_planted_stage_is_an_error_at_the_ldmatrix() -> None:
    """The fourth A ldmatrix of the first copy reads one stage further on (+8192 bytes: stage stride 4096
    f16): its elements are the tiled copy's, of stage 1, where its copy's other three read stage 0."""
    line, checks = _planted("[%r86+6144]", "[%r86+14336]")
    bad = next(c for c in checks if c.line == line and c.check == "smem-copy")
    assert bad.status == "error" and bad.data["stage"] == 1
    assert {c.line for c in checks if c.status == "error" and c.check == "smem-copy"} == {line}


def test_planted_mlir_swizzle_makes_every_ldmatrix_of_the_buffer_an_error() -> None:
    """The MLIR's A/B buffer type given S<3,4,3> instead of S<2,4,3>: the PTX's swizzle is no longer the plan's."""
    _line, checks = _planted('!memref_smem_f16 = !cute.memref<f16, smem, align<16>, S<2,4,3>,',
                             '!memref_smem_f16 = !cute.memref<f16, smem, align<16>, S<3,4,3>,', kind="mlir")
    loads = _lines(_text(KK, "ptx"), r"\s*ldmatrix\.")
    assert {c.line for c in checks if c.check == "smem-copy" and c.status == "error"} >= set(loads)


def test_without_an_ldsm_copy_in_the_mlir_every_ldmatrix_is_unchecked() -> None:
    mlir = "\n".join(line for line in _text(KK, "mlir").split("\n") if "tiled.copy.partition_S" not in line
                     or "ldsm" not in line)
    ptx = _text(KK, "ptx")
    checks = _audit(mlir, ptx)
    loads = [c for c in checks if c.check == "smem-copy"]
    assert sorted(c.line for c in loads) == _lines(ptx, r"\s*ldmatrix\.")
    assert {c.status for c in loads} == {"unchecked"} and all("ldsm" in c.data["reason"] for c in loads)
    assert {c.status for c in checks if c.check == MMA_CHECK} == {"unchecked"}


def test_multiline_mma_sync_is_read_with_its_operands() -> None:
    """LLVM's multi-line mma.sync (operand vectors on the following lines) is one instruction at its first line."""
    ptx = parse_ptx(".version 8.0\n.target sm_80\n.entry f()\n{\nmma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32\n"
                    "\t\t{%r1, %r2, %r3, %r4},\n\t\t{%r5, %r6, %r7, %r8},\n\t\t{%r9, %r10},\n"
                    "\t\t{%r11, %r12, %r13, %r14};\nret;\n}")
    mma = ptx.instrs[0]
    assert mma.line == 5 and len(mma.args) == 4 and [len(a.items) for a in mma.args] == [4, 4, 2, 4]
    assert ptx.instrs[1].opcode == "ret" and ptx.instrs[1].line == 10
