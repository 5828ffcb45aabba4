"""The Triton MLIR front-end: seed 004's worked examples, files with aliases, positioned errors.

Expected values come from ``/work/shared/seeds/004_d7c7c1cef06bdad0.txt`` (cited per
test), from derivations written in the tests, or from text the Triton 3.9 wheel
printed (quoted literally). The differential test against the wheel itself is
``tests/oracles/test_triton_layouts.py``.
"""
from __future__ import annotations

import sys
import types

import pytest

from verilayout.errors import LayoutError
from verilayout.core import cga
from verilayout.frontends import triton as tfe
from verilayout.frontends.mlir import Attr, TensorType, parse_aliases, parse_value
from verilayout.core.linear_layout import LinearLayout

SEED = "004_d7c7c1cef06bdad0.txt"


def offset_table(L: LinearLayout, rows: int, cols: int) -> list[list[int]]:
    """table[i][j] = the shared-memory offset that holds element (i, j)."""
    table = [[-1] * cols for _ in range(rows)]
    for k in range(L.in_dim_size("offset")):
        out = L.apply({"offset": k, "block": 0})
        table[out["dim0"]][out["dim1"]] = k
    return table


def holders(L: LinearLayout) -> dict[tuple, set]:
    """element -> set of (block, warp, lane, register) holding it."""
    res: dict[tuple, set] = {}
    d = L.in_dims
    for blk in range(d["block"]):
        for w in range(d["warp"]):
            for ln in range(d["lane"]):
                for r in range(d["register"]):
                    out = L.apply({"register": r, "lane": ln, "warp": w, "block": blk})
                    res.setdefault(tuple(out.values()), set()).add((blk, w, ln, r))
    return res


# ---------------------------------------------------------------------------
# seed 004: swizzled shared layouts
# ---------------------------------------------------------------------------

# Seed 004, "vec=1, perPhase=2, maxPhase=2, order=[1,0]", as printed under "shape=[4, 8]".
SEED_SWIZZLE_V1_P2_M2 = [
    [0, 1, 2, 3],
    [4, 5, 6, 7],
    [9, 8, 11, 10],
    [13, 12, 15, 14],
    [16, 17, 18, 19],
    [20, 21, 22, 23],
    [25, 24, 27, 26],
    [29, 28, 31, 30],
]
# Seed 004, "vec=2, perPhase=1, maxPhase=4, order=[1,0]" (shape [4, 8]).
SEED_SWIZZLE_V2_P1_M4 = [
    [0, 1, 2, 3, 4, 5, 6, 7],
    [10, 11, 8, 9, 14, 15, 12, 13],
    [20, 21, 22, 23, 16, 17, 18, 19],
    [30, 31, 28, 29, 26, 27, 24, 25],
]


def swizzled(vec, per_phase, max_phase, shape):
    return tfe.parse(f"#ttg.swizzled_shared<{{vec = {vec}, perPhase = {per_phase}, "
                     f"maxPhase = {max_phase}, order = [1, 0]}}>", shape=shape)


def test_seed_swizzle_table_vec1_is_an_8x4_tensor_not_4x8():
    """Seed 004 prints this table under "shape=[4, 8]" but lists 8 rows of 4 offsets.

    What holds: read as the [8, 4] layout (M=8 rows, N=4 columns) every entry
    matches. The [4, 8] layout has 4 rows of 8, so the listing cannot be it; the
    consistent reading is shape [8, 4] (the seed's second table, vec=2, is [4, 8]
    as printed).
    """
    L = swizzled(1, 2, 2, [8, 4])
    assert offset_table(L, 8, 4) == SEED_SWIZZLE_V1_P2_M2
    assert swizzled(1, 2, 2, [4, 8]).out_dims == {"dim0": 4, "dim1": 8}


def test_seed_swizzle_table_vec2():
    L = swizzled(2, 1, 4, [4, 8])
    assert offset_table(L, 4, 8) == SEED_SWIZZLE_V2_P1_M4


@pytest.mark.parametrize("vec,pp,mp,shape", [(1, 2, 2, (8, 4)), (1, 2, 2, (4, 8)), (2, 1, 4, (4, 8)),
                                             (4, 2, 4, (16, 32)), (8, 1, 8, (8, 64)),
                                             (1, 1, 1, (4, 4))])
def test_swizzled_shared_matches_the_seed_formula(vec, pp, mp, shape):
    """Seed 004's formula: k = i*N + j%vec + ((i//perPhase % maxPhase) XOR j//vec) * vec."""
    M, N = shape
    L = swizzled(vec, pp, mp, list(shape))
    table = offset_table(L, M, N)
    for i in range(M):
        for j in range(N):
            f = (i // pp) % mp
            want = i * N + j % vec + (f ^ (j // vec)) * vec
            assert table[i][j] == want, (i, j)


# ---------------------------------------------------------------------------
# seed 004: CGA layouts and the 2x2-CTA blocked example
# ---------------------------------------------------------------------------

def test_cga_ctas_per_cga_8_split_2_alternates():
    """Seed 004: CTAsPerCGA[0]=8, CTASplitNum[0]=2 map CTAs to tiles (0,1,0,1,0,1,0,1)."""
    L = cga.make_cga_layout({"CTAsPerCGA": [8], "CTASplitNum": [2], "CTAOrder": [0]}, 1)
    assert [L.apply({"block": b})["dim0"] for b in range(8)] == [0, 1, 0, 1, 0, 1, 0, 1]


def test_cga_order_puts_cta_order_0_in_the_low_bits():
    """Seed 004: CTAsPerCGA=[2,4], CTAOrder=[1,0]: coordinate (1, 1) is input 0b101."""
    L = cga.make_cga_layout({"CTAsPerCGA": [2, 4], "CTASplitNum": [2, 4], "CTAOrder": [1, 0]}, 2)
    assert L.apply({"block": 0b101}) == {"dim0": 1, "dim1": 1}


# Seed 004, the CTA [0,0] table of the blocked example (rows 0-3 and 14-15 are printed;
# the elided rows continue the pattern: row pair p holds threads 4p..4p+3 twice each).
SEED_BLOCKED_ROWS = {
    0: [0, 0, 1, 1, 2, 2, 3, 3, 32, 32, 33, 33, 34, 34, 35, 35],
    1: [0, 0, 1, 1, 2, 2, 3, 3, 32, 32, 33, 33, 34, 34, 35, 35],
    2: [4, 4, 5, 5, 6, 6, 7, 7, 36, 36, 37, 37, 38, 38, 39, 39],
    3: [4, 4, 5, 5, 6, 6, 7, 7, 36, 36, 37, 37, 38, 38, 39, 39],
    14: [28, 28, 29, 29, 30, 30, 31, 31, 60, 60, 61, 61, 62, 62, 63, 63],
    15: [28, 28, 29, 29, 30, 30, 31, 31, 60, 60, 61, 61, 62, 62, 63, 63],
}


def seed_blocked_thread(r: int, c: int) -> int:
    if r in SEED_BLOCKED_ROWS:
        return SEED_BLOCKED_ROWS[r][c]
    return 4 * (r // 2) + (c % 8) // 2 + 32 * (c // 8)


def test_seed_blocked_32x32_on_2x2_ctas():
    """Seed 004: sizePerThread [2,2], threadsPerWarp [8,4], warpsPerCTA [1,2], CTAs 2x2, 32x32.

    Every CTA holds a 16x16 tile laid out as the seed's table; with CTAOrder [1,0]
    block b owns tile (b // 2, b % 2).
    """
    text = ("tensor<32x32xf16, #ttg.blocked<{sizePerThread = [2, 2], threadsPerWarp = [8, 4], "
            "warpsPerCTA = [1, 2], order = [1, 0], CTAsPerCGA = [2, 2], CTASplitNum = [2, 2], "
            "CTAOrder = [1, 0]}>>")
    L = tfe.parse(text)
    assert L.in_dims == {"register": 4, "lane": 32, "warp": 2, "block": 4}
    for (r, c), hs in holders(L).items():
        assert len(hs) == 1
        (blk, w, ln, _), = hs
        assert (r // 16, c // 16) == (blk // 2, blk % 2)
        assert ln + 32 * w == seed_blocked_thread(r % 16, c % 16), (r, c)


def test_new_cga_spelling_gives_the_same_layout_as_the_old():
    old = ("#ttg.blocked<{sizePerThread = [2, 2], threadsPerWarp = [8, 4], warpsPerCTA = [1, 2], "
           "order = [1, 0], CTAsPerCGA = [2, 2], CTASplitNum = [2, 2], CTAOrder = [1, 0]}>")
    # makeCgaLayout (seed 004) with CTAOrder [1, 0]: block bit 0 -> dim1, bit 1 -> dim0.
    new = ("#ttg.blocked<{sizePerThread = [2, 2], threadsPerWarp = [8, 4], warpsPerCTA = [1, 2], "
           "order = [1, 0], CGALayout = [[0, 1], [1, 0]]}>")
    assert tfe.parse(old, [32, 32]) == tfe.parse(new, [32, 32])


def test_size_per_thread_4x4_registers_are_row_major():
    """Seed 004: sizePerThread [4, 4], order [1, 0]: register i sits at (i // 4, i % 4)."""
    L = tfe.parse("#ttg.blocked<{sizePerThread = [4, 4], threadsPerWarp = [1, 1], "
                  "warpsPerCTA = [1, 1], order = [1, 0]}>", [4, 4])
    for i in range(16):
        assert L.apply({"register": i, "lane": 0, "warp": 0, "block": 0}) == \
            {"dim0": i // 4, "dim1": i % 4}


# ---------------------------------------------------------------------------
# seed 004: broadcasting, wrapping, slices
# ---------------------------------------------------------------------------

THREADS_4X4 = ("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 4], warpsPerCTA = [1, 1], "
               "order = [1, 0]}>")  # L[i][j] = thread 4i + j, the seed's 4x4 matrix


def threads_of(L: LinearLayout) -> dict[tuple, set]:
    return {k: {ln for (_, _, ln, _) in v} for k, v in holders(L).items()}


def test_seed_broadcast_and_wrap_of_a_4x4_layout_on_a_2x8_tensor():
    """Seed 004: T [2, 8] under L [4, 4] gives {0,8},{1,9},{2,10},{3,11} repeated; row 1 +4."""
    got = threads_of(tfe.parse(THREADS_4X4, [2, 8]))
    for i in range(2):
        for j in range(8):
            base = 4 * i + j % 4
            assert got[(i, j)] == {base, base + 8}


def test_seed_slice_of_a_4x4_layout_along_dim0():
    """Seed 004: squeezing dim 0 gives {j, j+4, j+8, j+12}; a longer tensor wraps around."""
    sl = f"#ttg.slice<{{dim = 0, parent = {THREADS_4X4}}}>"
    got = threads_of(tfe.parse(sl, [4]))
    assert got == {(j,): {j, j + 4, j + 8, j + 12} for j in range(4)}
    got8 = threads_of(tfe.parse(sl, [8]))
    assert got8 == {(j,): {j % 4, j % 4 + 4, j % 4 + 8, j % 4 + 12} for j in range(8)}


def test_slice_drops_register_bases_that_become_zero():
    """Triton's slice fix-up: zero register bases go, zero lane bases stay (derivation:
    sizePerThread [2, 1] puts register bit 0 on dim0, which the slice removes)."""
    L = tfe.parse("#ttg.slice<{dim = 0, parent = #ttg.blocked<{sizePerThread = [2, 1], "
                  "threadsPerWarp = [2, 2], warpsPerCTA = [1, 1], order = [1, 0]}>}>", [2])
    assert L.bases == {"register": [], "lane": [[1], [0]], "warp": [], "block": []}


def test_ensure_not_smaller_repeats_in_registers_and_not_larger_broadcasts():
    cta = LinearLayout({"register": [[1]], "lane": [[2], [4]]}, ["dim0"])
    grown = cga.ensure_layout_not_smaller_than(cta, {"dim0": 32})
    assert grown.bases == {"register": [[1], [8], [16]], "lane": [[2], [4]]}
    shrunk = cga.ensure_layout_not_larger_than(cta, {"dim0": 2})
    assert shrunk.bases == {"register": [[1]], "lane": [[0], [0]]}
    dropped = cga.ensure_layout_not_larger_than(
        LinearLayout({"register": [[1], [2]]}, ["dim0"]), {"dim0": 2}, broadcast_registers=False)
    assert dropped.bases == {"register": [[1]]}


# ---------------------------------------------------------------------------
# MLIR reading: aliases, files, types, printing back
# ---------------------------------------------------------------------------

# Printed by the Triton 3.9 wheel (str(module) of a function taking these types).
TTGIR = """#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [2, 2], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#shared = #ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 4, order = [1, 0]}>
#smem = #ttg.shared_memory
module {
  tt.func public @f(%arg0: tensor<64x64xf16, #blocked>, %arg1: tensor<64x64xf16, #ttg.slice<{dim = 1, parent = #blocked}>>, %arg2: !ttg.memdesc<64x64xf16, #shared, #smem, mutable>) {
    tt.return
  }
}
#loc = loc(unknown)
"""

PRINTED = [
    "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [2, 2], order = [1, 0], CGALayout = [[1, 0], [0, 1], [0, 0]]}>",
    "#ttg.linear<{register = [[0, 1]], lane = [[0, 2], [0, 4], [0, 8], [1, 0], [2, 0]], warp = [[4, 0]], block = []}>",
    "#ttg.amd_wmma<{version = 2, isTranspose = true, ctaLayout = {warp = [[0, 1], [1, 0]]}}>",
    "#ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = true, elementBitWidth = 8, CGALayout = [[0, 1]]}>",
    "tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>, kWidth = 2}>>",
    "!ttg.memdesc<64x64xf16, #ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 4, order = [1, 0]}>, #ttg.shared_memory, mutable>",
]


@pytest.mark.parametrize("text", PRINTED)
def test_printed_text_round_trips(text):
    assert tfe.format_attr(tfe.parse_attr(text)) == text


def test_file_alias_picked_by_name_takes_its_shape_from_the_file():
    L = tfe.parse(TTGIR, name="#blocked")
    assert L.out_dims == {"dim0": 64, "dim1": 64}
    assert L == tfe.parse(TTGIR.splitlines()[0].split(" = ", 1)[1], [64, 64])
    S = tfe.parse(TTGIR, name="shared")
    assert S.in_dim_names == ["offset", "block"]


def test_file_with_several_layouts_needs_a_name():
    with pytest.raises(LayoutError, match=r"#blocked, #mma, #shared.*name="):
        tfe.parse(TTGIR)


def test_file_with_one_alias_is_the_default():
    text = TTGIR.splitlines()[0] + "\nmodule {\n  tt.func @f(%a: tensor<32x8xf16, #blocked>)\n}\n"
    assert tfe.parse(text).out_dims == {"dim0": 32, "dim1": 8}


def test_alias_used_with_two_shapes_needs_shape():
    text = (TTGIR.splitlines()[0] + "\n%a : tensor<32x8xf16, #blocked>\n"
            "%b : tensor<64x8xf16, #blocked>\n")
    with pytest.raises(LayoutError, match="several shapes"):
        tfe.parse(text, name="blocked")
    assert tfe.parse(text, [16, 16], name="blocked").out_dims == {"dim0": 16, "dim1": 16}


def test_type_after_alias_lines_is_read_with_them():
    text = TTGIR.splitlines()[0] + "\ntensor<16x64xf16, #ttg.slice<{dim = 0, parent = #blocked}>>"
    with pytest.raises(LayoutError, match="rank"):
        tfe.parse(text)   # a slice of a rank-2 parent is rank 1
    text = TTGIR.splitlines()[0] + "\ntensor<64xf16, #ttg.slice<{dim = 0, parent = #blocked}>>"
    assert tfe.parse(text).out_dims == {"dim0": 64}


def test_parse_attr_resolves_aliases_and_keeps_positions():
    a = tfe.parse_attr(TTGIR, name="#blocked")
    assert isinstance(a, Attr) and a.name == "ttg.blocked" and a.alias == "blocked"
    assert a.key_pos["order"] == (1, TTGIR.index("order") + 1)
    t = parse_value("!ttg.memdesc<3x64x64xf16, #shared, #smem, mutable, 3x64x64>",
                    parse_aliases(TTGIR))
    assert isinstance(t, TensorType) and t.mutable and t.alloc_shape == (3, 64, 64)


def test_a_negative_allocation_size_in_a_memdesc_is_a_layout_error():
    # found by tests/test_fuzz.py: "-1" matched the integer test but not the size reader (a crash)
    text = "!ttg.memdesc<64x64xf16, #ttg.shared_memory, -1>"
    with pytest.raises(LayoutError, match=rf"col {text.index('-1') + 1}: unexpected '-' in memdesc type"):
        parse_value(text)


def test_old_dialect_name_is_accepted():
    new = tfe.parse("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], "
                    "order = [0]}>", [128])
    old = tfe.parse("#triton_gpu.blocked<{sizePerThread = [1], threadsPerWarp = [32], "
                    "warpsPerCTA = [4], order = [0]}>", [128])
    assert new == old


# ---------------------------------------------------------------------------
# errors: one line, what and where
# ---------------------------------------------------------------------------

BLOCKED = ("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
           "order = [1, 0]")


def col_of(text: str, needle: str) -> int:
    return text.index(needle) + 1


def test_unknown_key_names_key_and_column():
    text = BLOCKED + ", bogus = 3}>"
    with pytest.raises(LayoutError, match=rf"^line 1, col {col_of(text, 'bogus')}: unknown key 'bogus'"):
        tfe.parse(text, [32, 32])


def test_malformed_text_names_position():
    text = BLOCKED.replace("[4, 8], warps", "[4, 8] warps") + "}>"
    with pytest.raises(LayoutError, match=rf"^line 1, col {col_of(text, 'warps')}: expected ','"):
        tfe.parse(text, [32, 32])
    with pytest.raises(LayoutError, match=r"^line 1, col \d+: expected"):
        tfe.parse("#ttg.blocked<{sizePerThread = [1, 4}>", [4])


def test_non_power_of_two_names_the_key():
    text = BLOCKED.replace("sizePerThread = [1, 4]", "sizePerThread = [1, 3]") + "}>"
    with pytest.raises(LayoutError, match=rf"col {col_of(text, 'sizePerThread')}: 'sizePerThread'\[1\] = 3"):
        tfe.parse(text, [32, 32])
    with pytest.raises(LayoutError, match="not a power of two"):
        tfe.parse(BLOCKED + "}>", [32, 24])


def test_shape_mismatch_and_missing_shape():
    with pytest.raises(LayoutError, match=r"line 1, col 1: shape mismatch"):
        tfe.parse(f"tensor<64x64xf16, {BLOCKED}}}>>", [32, 32])
    with pytest.raises(LayoutError, match="has no shape"):
        tfe.parse(BLOCKED + "}>")
    with pytest.raises(LayoutError, match=r"rank 2 .* rank 3"):
        tfe.parse(BLOCKED + "}>", [4, 4, 4])


def test_error_on_second_line_of_a_file():
    text = "#a = #ttg.shared_memory\n#blocked = " + BLOCKED + ", order2 = 1}>\n"
    with pytest.raises(LayoutError, match=rf"^line 2, col {text.split(chr(10))[1].index('order2') + 1}:"):
        tfe.parse(text, [8, 8], name="blocked")


def test_undefined_alias_lists_the_defined_ones():
    with pytest.raises(LayoutError, match=r"col 19: undefined alias #blocked"):
        tfe.parse("tensor<32x32xf16, #blocked>")


def test_cga_must_be_a_permutation_matrix():
    text = BLOCKED + ", CGALayout = [[1, 0], [1, 0]]}>"
    with pytest.raises(LayoutError, match=rf"col {col_of(text, 'CGALayout')}: .*permutation"):
        tfe.parse(text, [64, 64])


def test_old_cga_triple_all_or_none():
    with pytest.raises(LayoutError, match="CTAOrder must all be present"):
        tfe.parse(BLOCKED + ", CTAsPerCGA = [2, 1], CTASplitNum = [2, 1]}>", [64, 64])
    with pytest.raises(LayoutError, match="multiple"):
        tfe.parse(BLOCKED + ", CTAsPerCGA = [2, 1], CTASplitNum = [4, 1], CTAOrder = [1, 0]}>",
                  [64, 64])


def test_unknown_and_unsupported_kinds():
    with pytest.raises(LayoutError, match=r"unknown layout kind #ttg.foo"):
        tfe.parse("#ttg.foo<{a = 1}>", [4])
    # #ttig.subgroup_2d_block is read since ba0b6ef; an incomplete one names the missing key
    with pytest.raises(LayoutError, match=r"#ttig.subgroup_2d_block is missing the key 'instrShape'"):
        tfe.parse("#ttig.subgroup_2d_block<{warpsPerCTA = [8, 4]}>", [8, 8])
    with pytest.raises(LayoutError, match=r"missing the key 'perPhase'"):
        tfe.parse("#triton_gpu.amd_rotating_shared<{vec = 1}>", [8, 8])


def test_tensor_may_carry_a_shared_layout():
    # Triton's toLinearLayout(tensor type) takes a shared layout too: the Triton 3.9 wheel's bases
    # for test/TritonGPU/amd/invalid.mlir:395 of Triton's lit tests (tests/upstream/lit_layouts.json)
    L = tfe.parse("tensor<16x8xbf16, #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, "
                  "order = [1, 0]}>>")
    assert L.bases == {"offset": [[0, 1], [0, 2], [0, 4], [1, 0], [2, 0], [4, 0], [8, 0]], "block": []}
    with pytest.raises(LayoutError, match="needs a shared layout"):
        tfe.parse("!ttg.memdesc<4x4xf16, #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], "
                  "warpsPerCTA = [1, 1], order = [1, 0]}>, #ttg.shared_memory>")


def test_linear_bases_move_in_one_dim():
    with pytest.raises(LayoutError, match="more than one dimension"):
        tfe.parse("#ttg.linear<{register = [[1, 1]], lane = [], warp = [], block = []}>", [2, 2])


def test_non_text_input():
    with pytest.raises(LayoutError):
        tfe.parse(42)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# registry and the CuTe door
# ---------------------------------------------------------------------------

def test_a_kind_table_with_one_more_kind_plugs_into_parse():
    seen = {}

    def dpas(attr, shape):
        seen["params"] = attr.params
        return LinearLayout.identity1D(shape[0], "register", "dim0") * \
            LinearLayout.identity1D(shape[1], "lane", "dim1")

    mine = tfe.with_layout_kind("ttig.dpas", dpas, keys=["repeatCount"])
    L = tfe.parse("#triton_intel_gpu.dpas<{repeatCount = 8}>", [2, 4], kinds=mine)
    assert seen["params"] == {"repeatCount": 8} and L.in_dims == {"register": 2, "lane": 4}
    text = "#ttig.dpas<{x = 1}>"
    with pytest.raises(LayoutError, match=rf"col {col_of(text, 'x =')}: unknown key 'x'"):
        tfe.parse(text, [2, 4], kinds=mine)
    # the built-in table is untouched: its own #ttig.dpas converter still runs (and wants its keys)
    assert tfe.KINDS["ttig.dpas"].fn is not dpas and mine["ttig.dpas"].fn is dpas
    with pytest.raises(LayoutError, match="repeatCount|missing|required"):
        tfe.parse("#ttig.dpas<{x = 1}>", [2, 4])
    with pytest.raises(TypeError):
        tfe.KINDS._kinds["test.k"] = None       # read-only: a MappingProxyType inside


def test_non_mlir_text_goes_to_the_cute_reader(monkeypatch):
    calls = []
    fake = types.SimpleNamespace(parse_cute=lambda text, swizzle_units=None, elem_bits=None:
                                 calls.append((text, swizzle_units, elem_bits)) or "cute-layout")
    from verilayout.frontends.triton import text as tfe_text
    monkeypatch.setattr(tfe_text, "cute_text", fake)
    assert tfe.parse("(4,8):(8,1)", elem_bits=16) == "cute-layout"
    assert calls == [("(4,8):(8,1)", None, 16)]
    with pytest.raises(LayoutError, match="apply to Triton MLIR"):
        tfe.parse("(4,8):(8,1)", shape=[4, 8])
    with pytest.raises(LayoutError, match="apply to CuTe"):
        tfe.parse(BLOCKED + "}>", [4, 8], elem_bits=16)


# ---------------------------------------------------------------------------
# text views (byte-for-byte checks against the wheel are in tests/oracles)
# ---------------------------------------------------------------------------

def test_hardware_view_lists_each_register_row_per_warp():
    """Triton's format (one 'WarpN:' block, one line per register, '(i,j)' per lane)."""
    L = tfe.parse("#ttg.blocked<{sizePerThread = [2, 1], threadsPerWarp = [1, 2], "
                  "warpsPerCTA = [2, 1], order = [1, 0]}>", [4, 2])
    assert tfe.format_hardware_view(L) == (
        "Warp0:\n(0,0), (0,1)\n(1,0), (1,1)\n"
        "Warp1:\n(2,0), (2,1)\n(3,0), (3,1)\n")


def test_hardware_view_pads_coordinates_to_the_widest_index():
    L = tfe.parse("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [2], warpsPerCTA = [1], "
                  "order = [0]}>", [16])
    first = tfe.format_hardware_view(L).splitlines()[1]
    assert first == "( 0), ( 1)"


def test_shared_views_show_offsets_and_memory_order():
    """Seed 004's vec=2 table read from memory's side: offset 8 holds element (1, 2)."""
    L = swizzled(2, 1, 4, [4, 8])
    hw = tfe.format_hardware_view(L).splitlines()
    assert hw[0] == "Block: 0:" and hw[9] == "Offset: 8 -> (1,2)"
    tv = tfe.format_tensor_view(L).splitlines()
    assert tv[1].startswith("[ (1:2),(1:3),(1:0),(1:1)")
