"""Every layout-carrying type Triton 3.9 printed in the corpus (tests/corpus/<target>/*.ttgir) is
read, and each layout kind added for issue 12 gives the values derived by hand below from Triton's
rules (``lib/Dialect/TritonGPU/IR/LinearLayoutConversions.cpp`` and ``Dialect.cpp`` of Triton;
the function is named in each test). The comparison with Triton itself, basis for basis, is
``tests/oracles/test_corpus_triton_oracle.py``.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import pytest

from verilayout.core.linear_layout import LinearLayout
from verilayout.errors import LayoutError
from verilayout.frontends.mlir import Attr, TensorType, format_value, parse_value
from verilayout.frontends.triton import attr_to_linear, parse, parse_attr, type_to_layout
from verilayout.frontends.ttgir import parse_module
from verilayout.hw.nvidia.banks import SharedAddressMap

CORPUS = Path(__file__).resolve().parent / "corpus"


@dataclass(frozen=True)
class CorpusType:
    """One distinct (kind, layout, shape, allocation shape, element) type of the corpus: the text
    Triton printed (``text``, with the file's aliases), the file it first appears in, and the
    parsed type."""
    key: tuple
    text: str
    file: str
    parsed: TensorType


def files() -> list[Path]:
    return sorted(CORPUS.glob("*/*.ttgir"))


@functools.lru_cache(maxsize=4)
def corpus_types() -> tuple[CorpusType, ...]:
    """The distinct layout-carrying types of every corpus file (first occurrence kept)."""
    seen: dict[tuple, CorpusType] = {}
    for path in files():
        mod = parse_module(path.read_text())
        for op in mod.ops:
            for text in op.operand_types + op.result_types:
                if "#" not in text:
                    continue
                t = mod.type_of(text)
                if not isinstance(t, TensorType) or not isinstance(t.encoding, Attr):
                    continue
                key = (t.kind, format_value(t.encoding), t.shape, t.alloc_shape, t.elem)
                if key not in seen:
                    seen[key] = CorpusType(key, text, str(path.relative_to(CORPUS)), t)
    return tuple(seen.values())


needs_corpus = pytest.mark.skipif(not files(), reason="the corpus (tests/corpus/*/*.ttgir) is absent")


@needs_corpus
def test_every_corpus_type_is_read():
    types = corpus_types()
    assert len(types) > 1000
    bad = []
    for ct in types:
        try:
            out = type_to_layout(ct.parsed)
        except LayoutError as e:
            bad.append((ct.file, ct.text, str(e)))
            continue
        assert isinstance(out, (LinearLayout, SharedAddressMap))
    assert not bad, f"{len(bad)} of {len(types)} types unread, e.g. {bad[:3]}"


@needs_corpus
def test_the_corpus_has_every_new_kind():
    kinds = {ct.parsed.encoding.name for ct in corpus_types()} | {ct.parsed.kind for ct in corpus_types()}
    for k in ("ttng.tensor_memory_encoding", "ttng.tensor_memory_scales_encoding", "ttg.padded_shared",
              "ttg.amd_rotating_shared", "tensordesc"):
        assert k in kinds


# ----- tensor memory: tensorMemoryToLinearLayout ------------------------------------------------

def _tmem(block_m, block_n, m, n, col_stride=1, elem="f32"):
    return parse(f"!ttg.memdesc<{m}x{n}x{elem}, #ttng.tensor_memory_encoding<blockM = {block_m}, "
                 f"blockN = {block_n}, colStride = {col_stride}>, #ttng.tensor_memory, mutable>")


def test_tmem_128_rows_are_lanes_and_columns_repeat_along_n():
    # blockM = 128: TMEM lane r holds row r; column c holds element c of the first blockN; the
    # 128x32 tile then repeats along dim1 in columns 32, 64 (repsN = 128 / 32 = 4).
    L = _tmem(128, 32, 128, 128)
    assert L.bases["row"] == [[1 << i, 0] for i in range(7)]
    assert L.bases["col"] == [[0, 1 << i] for i in range(7)]


def test_tmem_64_rows_use_16_lanes_per_warp_quarter():
    # blockM = 64: rows 0..15 in lanes 0..15 of each 32-lane quarter; lane bit 4 goes to the
    # next 64 rows when M > 64, else to the next blockN columns, else nowhere; lane bits 5, 6
    # give rows 16 and 32.
    assert _tmem(64, 32, 128, 32).bases["row"] == [[1, 0], [2, 0], [4, 0], [8, 0], [64, 0], [16, 0], [32, 0]]
    assert _tmem(64, 32, 64, 64).bases["row"] == [[1, 0], [2, 0], [4, 0], [8, 0], [0, 32], [16, 0], [32, 0]]
    assert _tmem(64, 32, 64, 32).bases["row"] == [[1, 0], [2, 0], [4, 0], [8, 0], [0, 0], [16, 0], [32, 0]]
    # M = 256 with a 128-row tile: one more column bit repeats along dim0 before dim1
    assert _tmem(64, 32, 256, 64).bases["col"] == [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [128, 0], [0, 32]]


def test_tmem_col_stride_spreads_an_element_over_columns():
    # colStride = 2: zeros1D(2, col, dim1) comes first: columns 2c and 2c+1 hold element c
    L = _tmem(128, 64, 128, 64, col_stride=2, elem="f16")
    assert L.bases["col"][0] == [0, 0]
    assert L.bases["col"][1:] == [[0, 1 << i] for i in range(6)]


def test_tmem_too_few_rows_is_refused_as_triton_does():
    with pytest.raises(LayoutError, match="Triton refuses it too"):
        _tmem(128, 64, 64, 64)


def test_tmem_scales_layout():
    # tensorMemoryScalesToLinearLayout: identity(32 rows) * zeros(4 rows: the four warps) *
    # identity(4 cols, dim1) * identity(2 cols, dim0), then repeats along dim0 then dim1.
    L = parse("!ttg.memdesc<128x8xi8, #ttng.tensor_memory_scales_encoding<>, #ttng.tensor_memory>")
    assert L.bases["row"] == [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 0], [0, 0]]
    assert L.bases["col"] == [[0, 1], [0, 2], [32, 0], [64, 0], [0, 4]]
    # 32 rows: the column bit that would reach row 32 is broadcast (ensureLayoutNotLargerThan)
    small = parse("!ttg.memdesc<32x4xi8, #ttng.tensor_memory_scales_encoding<>, #ttng.tensor_memory>")
    assert small.bases["col"] == [[0, 1], [0, 2], [0, 0]]


# ----- AMD rotating shared: sharedToLinearLayoutAMDRotating -------------------------------------

def test_amd_rotating_shared_xors_the_phase_with_the_row_block():
    # vec = 4, perPhase = 1, maxPhase = 2, 8x8, order [1, 0]: row r's phase is r % 2, its block
    # (r / 2) % 2; the column moves by 4 * (phase ^ block): rows 1, 2 -> 4; row 4 -> 0.
    a = "#ttg.amd_rotating_shared<{vec = 4, perPhase = 1, maxPhase = 2, order = [1, 0]}>"
    L = parse(a, [8, 8])
    assert L.bases["offset"] == [[0, 1], [0, 2], [0, 4], [1, 4], [2, 4], [4, 0]]


def test_amd_rotating_shared_column_major():
    # order = [0, 1]: dim0 is the contiguous one; the row bases move along dim1
    a = "#ttg.amd_rotating_shared<{vec = 2, perPhase = 1, maxPhase = 4, order = [0, 1]}>"
    L = parse(a, [8, 4])
    # rows (dim1) 1, 2: phase 1, 2; block 0 -> columns (dim0) 2, 4
    assert L.bases["offset"] == [[1, 0], [2, 0], [4, 0], [2, 1], [4, 2]]


# ----- shared_linear (SharedLinearEncodingAttr::toLinearLayout) --------------------------------

def test_shared_linear_with_alignment_is_its_bases():
    L = parse("!ttg.memdesc<2x4xf16, #ttg.shared_linear<{offset = [[0, 1], [1, 0], [0, 2]], "
              "block = []}, alignment = 128>, #ttg.shared_memory>")
    assert L.bases == {"offset": [[0, 1], [1, 0], [0, 2]], "block": []}


def test_shared_linear_does_not_broadcast_as_triton():
    with pytest.raises(LayoutError, match="Triton refuses it too"):
        parse("#ttg.shared_linear<{offset = [[0, 1], [1, 0]]}, alignment = 16>", [4, 2])


# ----- padded shared (PaddedSharedEncodingAttr: linear component + paddings) ---------------------

def test_padded_shared_is_an_address_map():
    # 8x8 row-major component, 8 elements then 2 pad: element (r, c) at 8r + c + 2r
    text = ("!ttg.memdesc<8x8xf16, #ttg.padded_shared<[8:+2] {offset = [[0, 1], [0, 2], [0, 4], "
            "[1, 0], [2, 0], [4, 0]], block = []}>, #ttg.shared_memory, mutable>")
    m = parse(text)
    assert isinstance(m, SharedAddressMap)
    for r in range(8):
        for c in range(8):
            assert m.offset({"dim0": r, "dim1": c}) == 10 * r + c
    with pytest.raises(LayoutError, match="not GF\\(2\\)-linear"):
        attr_to_linear(parse_value(text).encoding, [8, 8])


def test_padded_shared_with_pipeline_buffers_gives_one_buffer():
    text = ("!ttg.memdesc<3x4x4xf16, #ttg.padded_shared<[4:+4] {offset = [[0, 1], [0, 2], [1, 0], "
            "[2, 0]], block = []}>, #ttg.shared_memory, mutable>")
    m = parse(text)
    assert m.shape == {"dim0": 4, "dim1": 4}
    assert m.offset({"dim0": 3, "dim1": 1}) == 3 * 8 + 1


# ----- tensordesc, nvmma rank, views, leading buffers, #ttg.linear --------------------------------

_NVMMA = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>"


def test_tensordesc_has_its_block_layout():
    assert parse(f"!tt.tensordesc<64x64xf16, {_NVMMA}>").bases == \
        parse(f"!ttg.memdesc<64x64xf16, {_NVMMA}, #ttg.shared_memory>").bases


def test_nvmma_rank_key_sets_the_rank():
    # a 3-d nvmma layout (rank = 3) over 2x8x64 f16: the 128-byte atom is 8 rows x 64 columns;
    # Triton collapses the outer dims into rows, so dim0 moves after the 8 rows of one atom
    a = ("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16, "
         "rank = 3}>")
    L = parse(a, [2, 8, 64])
    assert L.bases["offset"][-1] == [1, 0, 0]
    with pytest.raises(LayoutError, match="rank 3"):
        parse(a, [8, 64])


def test_memdesc_view_uses_the_allocation_shape():
    # toLinearLayout(MemDescType): allocShape.take_back(rank)
    sw = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"
    view = parse(f"!ttg.memdesc<128x16xf16, {sw}, #ttg.shared_memory, mutable, 128x64>")
    assert view.out_dims == {"dim0": 128, "dim1": 64}
    ring = parse(f"!ttg.memdesc<16x64xf16, {sw}, #ttg.shared_memory, mutable, 3x128x64>")
    assert ring.out_dims == {"dim0": 128, "dim1": 64}


def test_linear_basis_in_two_dims_is_refused_as_triton_does():
    # Triton 3.9's LinearEncodingAttr verifier (Dialect.cpp): "LinearEncodingAttr requires a
    # permutation matrix layout after removing broadcast bases" -- checked against the wheel in
    # tests/oracles/test_corpus_triton_oracle.py; zero bases (broadcasts) stay allowed
    for bases in ("register = [[0, 1]], lane = [[1, 1], [2, 0]]",      # moves in two dims
                  "register = [[3, 0]], lane = [[1, 0], [0, 1]]",      # two bits in one dim
                  "register = [[1, 0], [1, 0]], lane = [[2, 0], [0, 1]]"):   # a repeated basis
        with pytest.raises(LayoutError, match="Triton refuses it too"):
            parse(f"#ttg.linear<{{{bases}, warp = [], block = []}}>", [4, 2])
    L = parse("#ttg.linear<{register = [[0, 0], [1, 0]], lane = [[2, 0], [0, 1]], warp = [], block = []}>", [4, 2])
    assert L.bases["register"] == [[0, 0], [1, 0]]


def test_attribute_forms_print_back_as_triton_wrote_them():
    for text in ("#ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>",
                 "#ttg.shared_linear<{offset = [[0, 1]], block = []}, alignment = 16>",
                 "#ttg.padded_shared<[512:+8] {offset = [[0, 1]], block = []}>"):
        assert format_value(parse_attr(text)) == text


@needs_corpus
def test_every_corpus_view_maps_back_to_itself():
    # the law of memdesc_view_layout, by brute force over every element of every view
    from verilayout.frontends.triton import memdesc_view_layout
    views = [ct for ct in corpus_types() if ct.parsed.kind == "memdesc" and ct.parsed.alloc_shape
             and isinstance(type_to_layout(ct.parsed), LinearLayout)]
    assert views
    for ct in views:
        full, view = type_to_layout(ct.parsed), memdesc_view_layout(ct.parsed)
        names = list(view.in_dims)
        sizes = [view.in_dims[n] for n in names]
        for flat in range(0, sizes[0] * sizes[-1] if len(sizes) > 1 else sizes[0], 7):
            x = {n: 0 for n in names}
            x[names[-1]] = flat % sizes[-1]
            x[names[0]] = (flat // sizes[-1]) % sizes[0] if len(sizes) > 1 else flat
            assert full.apply(view.apply(x)) == x, (ct.text, x)
