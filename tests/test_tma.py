"""The TMA model (verilayout.hw.nvidia.tma) and the TMA -> reader ring proof (verilayout.prove.tma).

Expected values come from outside the code under test:

* the swizzle definition of the CUDA docs, written here as arithmetic: a 16-byte chunk index XOR the
  128-byte row index modulo span/16 (cuda.h, CUtensorMapSwizzle: "Swizzle 16B chunks within 32B /
  64B / 128B span"; the CUDA C++ Programming Guide's TMA swizzle section), on absolute addresses;
* the cuTensorMapEncodeTiled requirements as cuda.h (CUDA 13.0, /usr/local/cuda/include) states them;
* CUTLASS's own mapping from CuTe swizzles to CUtensorMapSwizzle (get_tma_swizzle_bits/base,
  to_CUtensorMapSwizzle) and CuTe's Swizzle functor, compiled host-only here;
* brute force: every element of every stage at concrete bases, with the TMA byte from the docs
  formula and the reader's byte from the reader's own formula (CuTe Swizzle<B,M,S>, the PTX
  canonical K-major SW128 layout), both written in this file;
* Triton 3.9's TTGIR in tests/corpus/ (persistent TMA matmuls).
"""
from __future__ import annotations

import pathlib
import re
import subprocess

import numpy as np
import pytest

from verilayout.errors import LayoutError
from verilayout.hw.nvidia.descriptor import encode
from verilayout.frontends.names import parse_arch, parse_swizzle as _parse_swizzle
from verilayout.hw.nvidia.tma import (SWIZZLES, TensorMap, check_limits, limit_findings,
                                      swizzle_pattern, write_address, write_table)


def parse_swizzle(mode):
    """The CUtensorMapSwizzle spellings, read at the door."""
    return _parse_swizzle(mode, "tma")
from verilayout.prove.tma import descriptor_reader, check_ring, slot_type
from verilayout.prove import tma as _prove_tma
from verilayout.frontends.shared_text import load_operand_layout


def layout_reader(layout, *, dtype, shape=None, swizzle_units=None, **kw):
    """The door (text read by ``load_operand_layout`` for the reader's slot type), then the prover's reader."""
    return _prove_tma.layout_reader(load_operand_layout(layout, dtype=slot_type(dtype), shape=shape,
                                                        swizzle_units=swizzle_units), dtype=dtype, **kw)


ROOT = pathlib.Path(__file__).resolve().parent.parent
SPAN = {"32B": 32, "64B": 64, "128B": 128}


# ----- derivations written here --------------------------------------------------------------------

def docs_swizzle(a: int, span: int) -> int:
    """CUDA docs: the 16-byte chunk index within the span XOR (128-byte row index mod span/16)."""
    n = span // 16
    chunk = (a >> 4) % n
    row = (a >> 7) % n
    return a - chunk * 16 + (chunk ^ row) * 16


def cute_swizzle(a: int, b: int, m: int, s: int) -> int:
    """CuTe's Swizzle<B,M,S>: bits [M, M+B) XOR bits [M+S, M+S+B)."""
    return a ^ (((a >> (m + s)) & ((1 << b) - 1)) << m)


def docs_write(base: int, x: int, y: int, inner_bytes: int, eb: int, span: int | None) -> int:
    """TMA's byte of box element (x inner, y outer): rows ``inner_bytes`` apart, then the swizzle (callers
    pass the span: a narrower box's rows are padded to it, measured in tests/test_hw_ground_truth.py)."""
    a = base + y * inner_bytes + x * eb
    return docs_swizzle(a, span) if span else a


# ----- the swizzle patterns --------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["32B", "64B", "128B"])
def test_swizzle_is_the_docs_definition_on_absolute_addresses(mode):
    p = swizzle_pattern(mode)
    a = np.arange(1 << 14)
    assert p.apply(a).tolist() == [docs_swizzle(int(x), SPAN[mode]) for x in a]
    # the pattern repeats after 8 * span bytes (256 / 512 / 1024), as the guide's table says
    assert p.repeat == 8 * SPAN[mode]


def test_128b_atom_32b_moves_32_byte_atoms():
    # cuda.h: "Swizzle 32B chunks within 128B span": the 32-byte atom index (bits 5-6) XOR the 128-byte
    # row modulo 4 (four atoms per span; the 16-byte rule with 32-byte atoms)
    p = swizzle_pattern("128B_ATOM_32B")
    for a in range(4096):
        atom, row = (a >> 5) & 3, (a >> 7) & 3
        assert p.apply(a) == a - atom * 32 + (atom ^ row) * 32
    assert not p.inferred and p.repeat == 512


def test_inferred_modes_say_so():
    for mode in ("128B_ATOM_32B_FLIP_8B", "128B_ATOM_64B"):
        assert swizzle_pattern(mode).inferred.startswith("inference")
    t = TensorMap("f16", global_dims=(64, 64), box=(64, 8), swizzle="128B_ATOM_64B")
    r = layout_reader("Sw<1,6,1> o smem_ptr[16b](unset) o (8,64):(64,1)", dtype="f16")
    assert check_ring(t, r, arch="sm_100").status == "unknown"
    v = check_ring(t, r, trust_inferred=True, arch="sm_100")
    assert v.status == "proved" and "inference" in v.reason


def test_atom_modes_are_refused_on_sm90_and_an_inference_on_sm100():
    # measured (hwtests/results/h100-2026-11-26-tma.jsonl.gz): the CUDA 13.0 driver refuses every
    # 128B_ATOM_* map on an H100; no source says which architectures take them, sm_100 is an inference
    t = TensorMap("f16", global_dims=(64, 64), box=(64, 8), swizzle="128B_ATOM_32B")
    r = layout_reader("Sw<2,5,2> o smem_ptr[16b](unset) o (8,64):(64,1)", dtype="f16")
    v = check_ring(t, r, trust_inferred=True)
    assert v.status == "counterexample" and v.details.get("rule") == "swizzle-arch"
    assert "CUDA_ERROR_INVALID_VALUE" in v.reason and "measured" in v.reason
    v100 = check_ring(t, r, arch=parse_arch("sm_100a"))
    assert v100.status == "unknown" and "inference" in v100.reason
    assert check_ring(t, r, arch="sm_100", trust_inferred=True).status == "proved"


def test_enum_order_is_cudas():
    # cuda.h CUtensorMapSwizzle_enum order
    assert [parse_swizzle(i) for i in range(7)] == list(SWIZZLES)
    assert parse_swizzle("CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B") == "128B_ATOM_64B"
    with pytest.raises(LayoutError, match="swizzle 'SWIZZLE_256B'"):
        parse_swizzle("SWIZZLE_256B")


# ----- what a box load writes --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,eb", [("f16", 2), ("e4m3", 1), ("f32", 4)])
@pytest.mark.parametrize("mode", ["none", "32B", "64B", "128B"])
@pytest.mark.parametrize("base", [0, 0x80, 0x480, 0x1400])
def test_write_table_is_dense_rows_then_the_docs_swizzle(dtype, eb, mode, base):
    span = SPAN.get(mode)
    inner = (span or 64) // eb
    t = TensorMap(dtype, global_dims=(1024, 1024), box=(inner, 16), swizzle=mode)
    table = write_table(t, base)
    want = [[docs_write(base, x, y, inner * eb, eb, span) for x in range(inner)] for y in range(16)]
    assert table.tolist() == want
    assert write_address(t, base, (inner - 1, 15)) == want[15][inner - 1]
    assert t.box_bytes == inner * eb * 16


def test_element_strides_shrink_the_written_box():
    # cuda.h: TMA loads ceil(boxDim[i] / elementStrides[i]) elements along dim i; elementStrides[0] is
    # ignored without interleave
    t = TensorMap("f16", global_dims=(256, 256), box=(64, 10), element_strides=(4, 3), swizzle="128B")
    assert t.smem_box == (64, 4) and t.box_bytes == 64 * 2 * 4


def test_write_of_a_coordinate_outside_the_box_is_an_error():
    t = TensorMap("f16", global_dims=(64, 64), box=(64, 8), swizzle="128B")
    with pytest.raises(LayoutError, match="dim 1 is outside 0..7"):
        write_address(t, 0, (0, 8))


def test_interleaved_and_packed_placements_are_not_modelled():
    t = TensorMap("f16", global_dims=(8, 8, 8), box=(8, 8, 8), interleave="16B")
    with pytest.raises(LayoutError, match="interleave 16B is not modelled"):
        write_address(t, 0, (0, 0, 0))
    t4 = TensorMap("16u4_align8b", global_dims=(256, 8), box=(128, 8))
    r = layout_reader("(8,128):(128,1)", dtype="e2m1")
    assert check_ring(t4, r).status == "unknown"


# ----- the limits of cuTensorMapEncodeTiled (cuda.h) -------------------------------------------------

def _rules(**kw):
    base = dict(dtype="f16", global_dims=(1024, 1024), box=(64, 64), swizzle="128B")
    base.update(kw)
    smem = base.pop("smem", None)
    return [f.rule for f in limit_findings(TensorMap(**base), smem_address=smem)]


def test_a_valid_tensor_map_breaks_nothing():
    assert _rules() == [] and _rules(smem=0x480) == []


@pytest.mark.parametrize("kw,rule", [
    (dict(box=(64, 257)), "box-dim"),                       # "less than or equal to 256"
    (dict(box=(64, 0)), "box-dim"),                         # "must be non-zero"
    (dict(box=(128, 64)), "inner-box-vs-swizzle"),          # 256 B > the 128 B swizzle
    (dict(box=(48, 64), swizzle="64B"), "inner-box-vs-swizzle"),   # 96 B > 64 B
    (dict(box=(4, 8), swizzle="none"), "box-inner-16B"),    # 8 bytes: not a multiple of 16
    (dict(global_strides=(2056,)), "global-stride"),        # not a multiple of 16
    (dict(global_address=0x1008), "global-address"),        # not 16-byte aligned
    (dict(element_strides=(1, 9)), "element-stride"),       # 1..8
    (dict(smem=0x440), "smem-alignment"),                   # PTX: 128-byte destination
])
def test_each_cuda_h_limit_is_a_finding(kw, rule):
    assert rule in _rules(**kw)


def test_interleave_rules():
    # "When interleave is CU_TENSOR_MAP_INTERLEAVE_32B, swizzle must be CU_TENSOR_MAP_SWIZZLE_32B";
    # interleaved maps need rank >= 3; the global address and strides then need 32-byte alignment
    assert "interleave-swizzle" in _rules(interleave="32B", global_dims=(8, 8, 8), box=(8, 8, 8))
    assert "rank" in _rules(interleave="16B")
    r = _rules(interleave="32B", swizzle="32B", global_dims=(16, 8, 8), box=(16, 8, 8),
               global_strides=(48, 384), global_address=0x10)
    assert "global-stride" in r and "global-address" in r


def test_check_limits_is_one_line_naming_the_rule():
    with pytest.raises(LayoutError, match=r"^tensor map: the box's inner extent is 256 bytes, more than the "
                                          r"128-byte span of SWIZZLE_128B \(CUDA driver API"):
        check_limits(TensorMap("f16", global_dims=(1024, 1024), box=(128, 64), swizzle="128B"))


@pytest.mark.parametrize("kw,msg", [
    (dict(box=(1, 2, 3, 4, 5, 6)), "rank 6"),
    (dict(dtype="f17"), "element type 'f17'"),
    (dict(box=(64, 64), global_dims=(1,)), "global_dims has 1 entries"),
    (dict(interleave="8B"), "interleave '8B'"),
    (dict(oob_fill="inf"), "oob_fill 'inf'"),
    (dict(box=(64.0, 64)), "box = "),
])
def test_bad_tensor_maps_are_layout_errors(kw, msg):
    args = dict(dtype="f16", global_dims=(1024, 1024), box=(64, 64))
    args.update(kw)
    if len(args["box"]) != len(args["global_dims"]) and "global_dims" not in kw:
        args["global_dims"] = (8,) * len(args["box"])
    with pytest.raises(LayoutError, match=re.escape(msg)):
        TensorMap(**args)


# ----- the ring proof against brute force ---------------------------------------------------------------

def brute_mismatch(mode, eb, rows, base, stages, stage_bytes, reader_byte):
    """The first (stage, row, x) where the docs-formula write differs from ``reader_byte``."""
    span = SPAN[mode]
    inner = span // eb
    for s in range(stages):
        sb = base + s * stage_bytes
        for y in range(rows):
            for x in range(inner):
                w = docs_write(sb, x, y, span, eb, span)
                r = reader_byte(sb, y, x)
                if w != r:
                    return s, y, x, w, r
    return None


@pytest.mark.parametrize("mode,b", [("32B", 1), ("64B", 2), ("128B", 3)])
def test_absolute_reader_agrees_at_every_128_aligned_base(mode, b):
    eb, rows, span = 2, 64, SPAN[mode]
    inner = span // eb
    t = TensorMap("f16", global_dims=(4096, 4096), box=(inner, rows), swizzle=mode)
    r = layout_reader(f"Sw<{b},4,3> o smem_ptr[16b](unset) o ({rows},{inner}):({inner},1)", dtype="f16")
    assert check_ring(t, r, stages=3, stage_bytes=rows * span + 128).proved    # stages 128 B apart too

    def reader(sb, y, x):                      # CuTe: swizzle(base + offset), bytes
        return cute_swizzle(sb + (y * inner + x) * eb, b, 4, 3)
    for base in (0, 0x80, 0x180, 0x2280):
        assert brute_mismatch(mode, eb, rows, base, 3, rows * span + 128, reader) is None


@pytest.mark.parametrize("mode,b", [("32B", 1), ("64B", 2), ("128B", 3)])
def test_relative_reader_needs_the_repeat_alignment(mode, b):
    eb, rows, span = 2, 32, SPAN[mode]
    inner = span // eb
    t = TensorMap("f16", global_dims=(4096, 4096), box=(inner, rows), swizzle=mode)
    # an ldmatrix/SIMT reader that XORs buffer-relative element offsets (units: elements, M = 4 - 1)
    r = layout_reader(f"Sw<{b},3,3> o ({rows},{inner}):({inner},1)", dtype="f16", swizzle_units="elements")
    assert r.relative
    repeat = 8 * span
    v = check_ring(t, r, stages=2, stage_bytes=rows * span, base_align=repeat)
    assert v.proved and f"multiple of {repeat} bytes" in v.reason
    v = check_ring(t, r, stages=2, stage_bytes=rows * span, base_align=128)
    assert v.status == "counterexample"
    cx = v.counterexample
    assert cx["base"] % repeat and cx["base"] % 128 == 0

    def reader(sb, y, x):                      # swizzle of the relative byte offset, plus the base
        return sb + cute_swizzle((y * inner + x) * eb, b, 4, 3)
    got = brute_mismatch(mode, eb, rows, cx["base"], 2, rows * span, reader)
    assert got is not None
    s, mn, k = cx["stage"], cx["mn"], cx["k"]
    sb = cx["base"] + s * rows * span
    assert cx["tma_byte"] == docs_write(sb, k, mn, span, eb, span)
    assert cx["reader_byte"] == reader(sb, mn, k) != cx["tma_byte"]


def test_concrete_base_and_misaligned_base():
    t = TensorMap("f16", global_dims=(4096, 4096), box=(64, 64), swizzle="128B")
    r = layout_reader("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>",
                      dtype="f16", shape=[64, 64])
    assert check_ring(t, r, base=0x2400, stages=2, stage_bytes=8192).proved
    v = check_ring(t, r, base=0x2480, stages=2, stage_bytes=8192)
    # brute force at 0x2480: row 0, chunk 0 -> docs: chunk 0 ^ (0x2480 >> 7) % 8 = 1 -> byte 0x2490
    assert v.counterexample["tma_byte"] == docs_write(0x2480, 0, 0, 128, 2, 128) == 0x2490
    v = check_ring(t, r, base=0x2440)
    assert v.status == "counterexample" and v.counterexample["rule"] == "smem-alignment"


# ----- DeepGEMM #379: a reader that assumes 128B after TMA wrote 32B / 64B ---------------------------------

@pytest.mark.parametrize("mode", ["32B", "64B"])
def test_deepgemm_379_reader_assumes_128b_is_caught_and_the_fix_proves(mode):
    # DeepGEMM #379 (public issue): the TMA descriptor used a 32B/64B swizzle (the tile's inner extent
    # was 32/64 bytes) while the shared-memory reader computed its addresses with the 128B pattern.
    span, eb, rows = SPAN[mode], 2, 64
    inner = span // eb
    t = TensorMap("bf16", global_dims=(7168, 4096), box=(inner, rows), swizzle=mode)
    wrong = layout_reader(f"Sw<3,4,3> o smem_ptr[16b](unset) o ({rows},{inner}):({inner},1)", dtype="bf16")
    v = check_ring(t, wrong, stages=4, stage_bytes=rows * span, base_align=1024)
    assert v.status == "counterexample"
    cx = v.counterexample
    sb = cx["base"] + cx["stage"] * rows * span
    assert cx["tma_byte"] == docs_write(sb, cx["k"], cx["mn"], span, eb, span)
    assert cx["reader_byte"] == cute_swizzle(sb + (cx["mn"] * inner + cx["k"]) * eb, 3, 4, 3)
    assert cx["tma_byte"] != cx["reader_byte"]
    b = {"32B": 1, "64B": 2}[mode]
    fixed = layout_reader(f"Sw<{b},4,3> o smem_ptr[16b](unset) o ({rows},{inner}):({inner},1)", dtype="bf16")
    assert check_ring(t, fixed, stages=4, stage_bytes=rows * span).proved


# ----- Triton #7275: a box twice the tile -------------------------------------------------------------

def test_triton_7275_doubled_box_overwrites_the_next_stage():
    # the host encoded a box of 256 rows while the kernel's ring holds 128-row stages
    t = TensorMap("f16", global_dims=(4096, 4096), box=(64, 256), swizzle="128B")
    r = layout_reader("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>",
                      dtype="f16", shape=[128, 64])
    v = check_ring(t, r, stages=3, stage_bytes=128 * 128, base_align=1024)
    assert v.status == "counterexample"
    cx = v.counterexample
    # row 128 of a box of 128-byte rows starts 128 * 128 bytes in: stage 1's first byte, which the
    # reader reads as element (0, 0) of stage 1 (row 128 mod 8 = 0: no swizzle move)
    assert (cx["mn"], cx["k"], cx["tma_byte"]) == (128, 0, cx["base"] + 16384)
    assert cx["overwrites"] == {"stage": 1, "mn": 0, "k": 0}
    fixed = TensorMap("f16", global_dims=(4096, 4096), box=(64, 128), swizzle="128B")
    assert check_ring(fixed, r, stages=3, stage_bytes=128 * 128, base_align=1024).proved


def test_a_box_smaller_than_the_reader_tile_names_the_unwritten_element():
    t = TensorMap("f16", global_dims=(4096, 4096), box=(64, 64), swizzle="128B")
    r = layout_reader("Sw<3,4,3> o smem_ptr[16b](unset) o (128,64):(64,1)", dtype="f16")
    v = check_ring(t, r)
    assert v.counterexample["tma_byte"] is None and v.counterexample["mn"] == 64
    assert v.counterexample["reader_byte"] == cute_swizzle(64 * 128, 3, 4, 3)


# ----- wgmma / tcgen05 descriptors reading the ring ----------------------------------------------------

def canonical_k_sw128(start: int, mn: int, k: int, eb: int) -> int:
    """PTX canonical K-major SWIZZLE_128B: row mn at 128 * (mn % 8) + SBO * (mn / 8) with SBO = 1024,
    element k at k * eb, then Swizzle<3,4,3> on the byte address (base offset 0)."""
    return cute_swizzle(start + 128 * (mn % 8) + 1024 * (mn // 8) + k * eb, 3, 4, 3)


@pytest.mark.parametrize("dtype,eb", [("f16", 2), ("e4m3", 1)])
def test_wgmma_descriptors_read_every_stage_at_any_128_aligned_base(dtype, eb):
    inner = 128 // eb
    t = TensorMap(dtype, global_dims=(8192, 8192), box=(inner, 128), swizzle="128B")
    d = encode(lbo=16, sbo=1024, swizzle="128B")
    kb = inner // (32 // eb)
    r = descriptor_reader(d, major="K", dtype=dtype, mn=64, k_blocks=kb, mn_blocks=2, mn_step=64 * 128)
    v = check_ring(t, r, stages=5, stage_bytes=128 * 128 + 0x80)      # stages not 1024-aligned
    assert v.proved, v.reason
    for base in (0x80, 0x1380):
        for s in range(5):
            sb = base + s * (128 * 128 + 0x80)
            for mn in range(0, 128, 7):
                for k in range(0, inner, 5):
                    assert docs_write(sb, k, mn, 128, eb, 128) == canonical_k_sw128(sb, mn, k, eb)
    # SBO of 512 (a planted bug) is caught with both bytes
    bad = descriptor_reader(encode(lbo=16, sbo=512, swizzle="128B"), major="K", dtype=dtype, mn=64,
                            k_blocks=kb, mn_blocks=2, mn_step=64 * 128)
    v = check_ring(t, bad, stages=5, stage_bytes=128 * 128)
    assert v.status == "counterexample" and v.counterexample["mn"] >= 8


def test_sm100_descriptor_reads_the_ring():
    t = TensorMap("bf16", global_dims=(8192, 8192), box=(64, 128), swizzle="128B")
    d = encode(sbo=1024, swizzle="128B", arch="sm_100")
    r = descriptor_reader(d, major="K", dtype="bf16", mn=128, k_blocks=4)
    assert check_ring(t, r, stages=4, stage_bytes=16384).proved


# ----- Triton 3.9 persistent TMA matmuls (tests/corpus) -------------------------------------------------

def _corpus_copy(path: pathlib.Path):
    """(dtype, block [rows, cols], nvmma text, stages) of the A operand's TMA load, read by regex here."""
    text = path.read_text()
    aliases = dict(re.findall(r"^(#shared\d*) = (#ttg\.nvmma_shared<\{[^}]*\}>)", text, re.M))
    m = re.search(r"async_tma_copy_global_to_local %a_desc\S*\[[^\]]*\] \S+, \S+, \S+ : "
                  r"!tt\.tensordesc<(\d+)x(\d+)x(\w+), (#shared\d*)>", text)
    alloc = re.search(r"%a = ttg\.local_alloc : \(\) -> !ttg\.memdesc<(\d+)x(\d+)x(\d+)x(\w+), (#shared\d*)", text)
    rows, cols, dtype, enc = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)
    assert alloc.group(5) == enc and (int(alloc.group(2)), int(alloc.group(3))) == (rows, cols)
    return dtype, [rows, cols], aliases[enc], int(alloc.group(1))


@pytest.mark.parametrize("name", ["cuda90/persistent_tma_matmul_128x128x64_w4_s3.ttgir",
                                  "cuda90/persistent_tma_matmul_fp8_128x128x128_w4_s3.ttgir",
                                  "cuda100/persistent_tma_matmul_128x128x64_w4_s3.ttgir",
                                  "cuda100/persistent_tma_matmul_fp8_128x128x128_w4_s3.ttgir"])
def test_triton_persistent_tma_matmul_ring_proves(name):
    dtype, (rows, cols), enc, stages = _corpus_copy(ROOT / "tests" / "corpus" / name)
    assert "swizzlingByteWidth = 128" in enc
    eb = {"f16": 2, "f8E4M3FN": 1}[dtype]
    # Triton's getTMABlockShape: the box's inner extent is the swizzle width (128 bytes) here
    assert cols * eb == 128
    t = TensorMap(dtype, global_dims=(8192, 8192), box=(cols, rows), swizzle="128B")
    r = layout_reader(enc, dtype={"f16": "f16", "f8E4M3FN": "e4m3"}[dtype], shape=[rows, cols])
    stage = rows * cols * eb
    v = check_ring(t, r, stages=stages, stage_bytes=stage, base_align=1024)
    assert v.proved, v.reason
    # Triton reads shared memory with buffer-relative offsets: a 128-aligned-only base is refuted
    assert check_ring(t, r, stages=stages, stage_bytes=stage, base_align=128).status == "counterexample"


def test_triton_epilogue_store_of_two_boxes():
    # the C tile 128x128 f16 (256-byte rows) goes out as two 64-column boxes of the 128B swizzle,
    # the second 128 * 128 bytes after the first (Triton's multi-box lowering)
    t = TensorMap("f16", global_dims=(8192, 8192), box=(64, 128), swizzle="128B")
    r = layout_reader("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>",
                      dtype="f16", shape=[128, 128])
    assert check_ring(t, r, copies=2, base_align=1024).proved
    assert check_ring(t, r, copies=1, base_align=1024).status == "counterexample"


# ----- CUTLASS (host-only): CuTe swizzle -> CUtensorMapSwizzle, and CuTe's Swizzle functor ----------------

ORACLE_SRC = r"""
#include <cstdio>
#include <cute/atom/copy_traits_sm90_tma_swizzle.hpp>
template <int B, int M, int S>
void run() {
  using Sw = cute::Swizzle<B, M, S>;
  auto bits = cute::detail::get_tma_swizzle_bits(Sw{});
  auto base = cute::detail::get_tma_swizzle_base(Sw{});
  int mode = static_cast<int>(cute::TMA::to_CUtensorMapSwizzle(bits, base));
  std::printf("S %d %d %d %d", B, M, S, mode);
  for (int a = 0; a < 4096; ++a) std::printf(" %d", static_cast<int>(Sw{}(a)));
  std::printf("\n");
}
int main() { run<0, 4, 3>(); run<1, 4, 3>(); run<2, 4, 3>(); run<3, 4, 3>(); run<2, 5, 2>(); return 0; }
"""


@pytest.fixture(scope="module")
def cutlass_tma_swizzles():
    from tests.oracles.cutlass_build import run_program
    # the CUDA >= 12.7 branch of to_CUtensorMapSwizzle (the 128B atom modes) is compiled by
    # giving the host compiler the CUDA version macros nvcc would define (CUDA 13.0 here)
    out = run_program("tma_swizzle", ORACLE_SRC, ("-D__CUDACC_VER_MAJOR__=13", "-D__CUDACC_VER_MINOR__=0"))
    rows = {}
    for line in out.splitlines():
        f = line.split()
        rows[(int(f[1]), int(f[2]), int(f[3]))] = (int(f[4]), [int(x) for x in f[5:]])
    return rows


def test_cutlass_maps_cute_swizzles_to_our_tma_modes(cutlass_tma_swizzles):
    for (b, m, s), (mode_code, table) in cutlass_tma_swizzles.items():
        mode = SWIZZLES[mode_code]                    # CUtensorMapSwizzle value CUTLASS returns
        p = swizzle_pattern(mode)
        if mode != "none":
            assert p.cute == (b, m, s), mode
        assert p.apply(np.arange(4096)).tolist() == table, mode
    assert {SWIZZLES[c] for c, _ in cutlass_tma_swizzles.values()} == {"none", "32B", "64B", "128B",
                                                                       "128B_ATOM_32B"}


# ----- the spec kind ---------------------------------------------------------------------------------

def _check(path):
    import sys
    return subprocess.run([sys.executable, "-m", "verilayout.cli", "check", str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_spec_example_proves_and_the_failing_spec_fails_with_both_bytes():
    good = _check(ROOT / "specs" / "tma.toml")
    assert good.returncode == 0 and " 0 failed" in good.stdout, good.stdout
    bad = _check(ROOT / "tests" / "fixtures" / "specs" / "tma_fails.toml")
    assert bad.returncode == 1
    m = re.search(r"at buffer base (0x[0-9a-f]+), stage (\d+), element \(mn=(\d+), k=(\d+)\): TMA wrote byte "
                  r"(0x[0-9a-f]+) but the layout .* reads byte (0x[0-9a-f]+)", bad.stdout)
    base, stage, mn, k, tma, rd = m.groups()
    sb = int(base, 16) + int(stage) * 64 * 32
    # 32B swizzle (docs formula) vs the reader's CuTe Swizzle<3,4,3> on the absolute byte
    assert int(tma, 16) == docs_write(sb, int(k), int(mn), 32, 2, 32)
    assert int(rd, 16) == cute_swizzle(sb + (int(mn) * 16 + int(k)) * 2, 3, 4, 3)


def test_spec_bad_tensor_map_is_one_line_exit_2(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('[layouts.a]\ntext = "(8,64):(64,1)"\n[[obligation]]\nkind = "tma_matches"\n'
                 'tensor_map = { dtype = "f16", box = [64, 8, 1, 1, 1, 1] }\nlayout = "a"\ndtype = "f16"\n')
    r = _check(p)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "tensor_map: tensor map rank 6" in (r.stdout + r.stderr)


# ----- the TTGIR audit of TMA copies ----------------------------------------------------------------------

def test_audit_proves_every_tma_copy_of_the_corpus_and_says_the_tensor_map_is_out_of_view():
    from verilayout.audit.ttgir import audit_file
    checks = [c for f in sorted((ROOT / "tests" / "corpus").glob("cuda*/*.ttgir"))
              for c in audit_file(str(f)).checks if c.check == "tma-write"]
    assert len(checks) >= 20 and {c.status for c in checks} == {"proved"}
    assert all("encoded on the host" in c.data["host"] for c in checks)
    # the epilogue store: 128xN f16 rows of 2N bytes go as 2N / 128 boxes of 64 x 128 (inner 128 B):
    # two for the 128x128 tiles, four for the 128x256 one
    stores = [c for c in checks if c.op == "ttng.async_tma_copy_local_to_global"
              and c.data["tensor_map"]["dtype"] == "f16" and c.data["tensor_map"]["box"] == [64, 128]]
    assert {"128x128 tile", "128x256 tile"} <= {m for c in stores for m in ("128x128 tile", "128x256 tile")
                                                 if m in c.message}
    for c in stores:
        n = int(c.message.split(" tile,")[0].rsplit("x", 1)[1])
        assert f"{2 * n // 128} box(es)" in c.message, c.message


def test_audit_catches_deepgemm_379_in_ttgir_with_both_bytes():
    from verilayout.audit.ttgir import audit_text
    path = ROOT / "tests" / "corpus" / "cuda90" / "persistent_tma_matmul_128x128x64_w4_s3.ttgir"
    lines = path.read_text().split("\n")
    i = next(k for k, ln in enumerate(lines) if "async_tma_copy_global_to_local %a_desc" in ln)
    lines[i] = lines[i].replace("!tt.tensordesc<128x64xf16, #shared>", "!tt.tensordesc<128x64xf16, #sw64>")
    lines.insert(0, "#sw64 = #ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = false, elementBitWidth = 16}>")
    c = next(c for c in audit_text("\n".join(lines), "bug379.ttgir").checks
             if c.line == i + 2 and c.check == "tma-write")
    assert (c.status, c.severity) == ("counterexample", "error")
    assert c.data["tensor_map"]["box"] == [32, 128] and c.data["tensor_map"]["swizzle"] == "64B"
    cx = c.data["counterexample"]
    # TMA: two 64B-swizzled boxes of 32 f16 x 128 rows side by side (box j at j * 8192 bytes)
    j, x = divmod(cx["k"], 32)
    assert cx["tma_byte"] == docs_write(cx["base"] + j * 8192, x, cx["mn"], 64, 2, 64)
    # the reader: Triton's 128B nvmma_shared, 128-byte rows, buffer-relative Swizzle<3,4,3>
    assert cx["reader_byte"] == cx["base"] + cute_swizzle(cx["mn"] * 128 + cx["k"] * 2, 3, 4, 3)


# ----- MN-major descriptors, and random rings against brute force ------------------------------------------

def test_mn_major_wgmma_descriptor_reads_a_box_whose_inner_dim_is_n():
    # B stored N-major: the box's 64 contiguous f16 are 64 N (128 bytes), its 64 rows are K. PTX canonical
    # MN-major SW128: k row at 128 * (k % 8) + SBO * (k / 8), SBO = 1024; a 16-deep K-block is 2048 bytes
    t = TensorMap("f16", global_dims=(4096, 4096), box=(64, 64), swizzle="128B")
    d = encode(lbo=8192, sbo=1024, swizzle="128B")
    r = descriptor_reader(d, major="MN", dtype="f16", mn=64, k_blocks=4, k_step=2048)
    assert check_ring(t, r, stages=3, stage_bytes=8192 + 0x100).proved
    wrong = descriptor_reader(d, major="MN", dtype="f16", mn=64, k_blocks=4, k_step=1024)
    v = check_ring(t, wrong, stages=3, stage_bytes=8192)
    assert v.status == "counterexample" and v.counterexample["k"] >= 16


def _random_ring(seed):
    rng = np.random.default_rng(seed)
    mode = ["32B", "64B", "128B"][rng.integers(3)]
    eb = int(rng.choice([1, 2, 4]))
    dtype = {1: "e4m3", 2: "f16", 4: "tf32"}[eb]
    span = SPAN[mode]
    inner, rows = span // eb, int(rng.choice([8, 16, 32]))
    rb = int(rng.integers(0, 4))                   # the reader's Swizzle<rb,4,3>, maybe not TMA's
    relative = bool(rng.integers(2))
    align = int(rng.choice([128, 256, 512, 1024]))
    stages = int(rng.integers(1, 4))
    stage = rows * span + 128 * int(rng.integers(0, 3))
    t = TensorMap(dtype, global_dims=(4096, 4096), box=(inner, rows), swizzle=mode)
    if relative:                                   # Swizzle<rb,4,3> on bytes = <rb, 4 - log2(eb), 3> on elements
        r = layout_reader(f"Sw<{rb},{4 - (eb.bit_length() - 1)},3> o ({rows},{inner}):({inner},1)",
                          dtype=dtype, swizzle_units="elements")
    else:
        r = layout_reader(f"Sw<{rb},4,3> o smem_ptr[{8 * eb}b](unset) o ({rows},{inner}):({inner},1)", dtype=dtype)

    def reader(sb, y, x):
        off = (y * inner + x) * eb
        return sb + cute_swizzle(off, rb, 4, 3) if relative else cute_swizzle(sb + off, rb, 4, 3)
    v = check_ring(t, r, stages=stages, stage_bytes=stage, base_align=align)
    return v, (mode, eb, rows, span, align, stages, stage), reader


@pytest.mark.parametrize("seed", range(24))
def test_random_rings_agree_with_brute_force(seed):
    v, (mode, eb, rows, span, align, stages, stage), reader = _random_ring(seed)
    if v.proved:
        for q in range(0, 40, 3):                 # bases the proof covers: multiples of the alignment
            assert brute_mismatch(mode, eb, rows, q * align, stages, stage, reader) is None
    else:
        assert v.status == "counterexample"
        cx = v.counterexample
        assert cx["base"] % align == 0
        sb = cx["base"] + cx["stage"] * stage
        assert cx["tma_byte"] == docs_write(sb, cx["k"], cx["mn"], span, eb, span)
        assert cx["reader_byte"] == reader(sb, cx["mn"], cx["k"]) != cx["tma_byte"]


def test_random_rings_cover_both_outcomes():
    assert {_random_ring(seed)[0].status for seed in range(24)} == {"proved", "counterexample"}


def test_a_load_start_off_16_bytes_is_a_finding_of_the_ring_and_the_spec():
    # measured (hwtests/results/h100-2026-11-26-tma.jsonl.gz): x = 3 of uint16 (6 bytes) stopped the kernel
    # with an illegal instruction; x = 8 of uint16 (16 bytes) loaded
    t = TensorMap("uint16", global_dims=(128, 160), box=(64, 16))
    r = layout_reader("(16,64):(64,1)", dtype="u16")
    v = check_ring(t, r, start=(3, 5))
    assert v.status == "counterexample" and v.details.get("rule") == "box-start-16B"
    assert check_ring(t, r, start=(8, 5)).status == "proved"
    from verilayout.spec import load_spec_text, run_spec
    spec = ('[layouts.r]\ntext = "(16,64):(64,1)"\n[[obligation]]\nkind = "tma_matches"\n'
            'tensor_map = { dtype = "uint16", box = [64, 16], global_dims = [128, 160] }\n'
            'layout = "r"\ndtype = "u16"\nstart = [%d, 5]\n')
    assert [x.verdict.status for x in run_spec(load_spec_text(spec % 3, "a.toml"))] == ["counterexample"]
    assert [x.verdict.status for x in run_spec(load_spec_text(spec % 16, "b.toml"))] == ["proved"]


# ----- boxes of rank 1 to 5 (Triton's rank-reducing and batched copies) --------------------------

def _nv(swizzle: int, rank: int, transposed: bool = False) -> str:
    return (f"#ttg.nvmma_shared<{{swizzlingByteWidth = {swizzle}, transposed = {str(transposed).lower()}, "
            f"elementBitWidth = 16" + (f", rank = {rank}" if rank != 2 else "") + "}>")


def test_rows_view_is_the_row_major_flattening_by_brute_force():
    from verilayout.frontends.triton import attr_to_linear, parse_attr
    from verilayout.prove.tma import rows_view
    shape = (2, 4, 64)
    ll = attr_to_linear(parse_attr(_nv(128, 3)), shape)
    flat = rows_view(ll)
    assert flat.out_dims == {"dim0": 8, "dim1": 64}
    for o in range(ll.in_dim_size("offset")):
        c = ll.apply({"offset": o, "block": 0})
        want = {"dim0": c["dim0"] * shape[1] + c["dim1"], "dim1": c["dim2"]}   # row-major, written here
        assert flat.apply({"offset": o, "block": 0}) == want


@pytest.mark.parametrize("block, mem, mem_shape, status", [
    ([1, 1, 1, 64, 64], 2, [64, 64], "proved"),           # rank-5 ragged descriptor into a 2-d buffer
    ([1, 128, 64], 2, [128, 64], "proved"),               # rank-3 batched descriptor
    ([2, 64, 64], 3, [2, 64, 64], "proved"),              # a real batch of two tiles, same rank
    ([4, 32, 128], 3, [4, 32, 128], "proved"),            # two boxes along the inner dim
    ([2, 128, 64], 2, [128, 64], "unknown"),              # a non-unit dim cannot be dropped
])
def test_copies_of_every_rank_against_the_buffer_layout(block, mem, mem_shape, status):
    from verilayout.frontends.triton import attr_to_linear, parse_attr
    from verilayout.frontends.triton.shared import tma_encoding
    from verilayout.prove.tma import triton_copy_verdict
    enc = tma_encoding(parse_attr(_nv(128, len(block))), block)
    layout = attr_to_linear(parse_attr(_nv(128, mem)), tuple(mem_shape))
    assert triton_copy_verdict(enc, block, "f16", layout)[1].status == status


def test_a_rank_3_copy_into_a_buffer_of_another_swizzle_is_a_counterexample():
    from verilayout.frontends.triton import attr_to_linear, parse_attr
    from verilayout.frontends.triton.shared import tma_encoding
    from verilayout.prove.tma import triton_copy_verdict
    block = [2, 64, 64]
    enc = tma_encoding(parse_attr(_nv(128, 3)), block)
    _t, v = triton_copy_verdict(enc, block, "f16", attr_to_linear(parse_attr(_nv(64, 3)), tuple(block)))
    assert v.status == "counterexample" and v.counterexample["tma_byte"] != v.counterexample["reader_byte"]
