"""Spec-file sources and kinds of the capabilities: verilayout/spec_wgmma.py, spec_banks.py,
spec_blockload.py.

Expected values come from the seeds (cited per test) or from derivations written here:
the descriptor bitfield of seed 003 (start >> 4 in bits 0-13, LBO in 16-29, SBO in 32-45,
base offset 49-51, layout type 62-63), the PTX canonical-layout formulas of seed 000, the
128B swizzle as "16-byte unit XOR row" on byte addresses, the seed 003 store loop for D,
and brute-force bank counting.
"""
from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verilayout.errors import LayoutError
from verilayout.spec import kinds, load_spec_text, run_spec


def run(text: str, path: str = "inline.toml"):
    """Verdicts of every obligation of a spec given as text."""
    return [r.verdict for r in run_spec(load_spec_text(text, path))]


def build(text: str, name: str, path: str = "inline.toml"):
    spec = load_spec_text(text, path)
    return spec.layout(name, f"{path}: layouts.{name}")


def test_the_capability_kinds_are_registered():
    have = set(kinds())
    assert {"descriptor_matches", "descriptor_fields", "fragment_table", "wgmma_n", "offsets",
            "conflict_free", "max_wavefronts", "blockload_covers", "plan_minimal"} <= have


# ----- wgmma: sources -----------------------------------------------------------------------

def desc_value(start=0, lbo_field=0, sbo_field=0, base_offset=0, layout_type=0) -> int:
    """Seed 003's GmmaDesc bitfield, assembled by hand."""
    return ((start >> 4) | lbo_field << 16 | sbo_field << 32 | base_offset << 49
            | layout_type << 62)


@pytest.mark.parametrize("entry", [
    'descriptor = "0x4000004000010040"',
    "descriptor = { value = \"0x4000004000010040\" }",
    'descriptor = { start_address = 1024, lbo = 16, sbo = 1024, swizzle = "128B" }',
    "descriptor = { start_address = 1024, lbo_field = 1, sbo_field = 64, layout_type = 1 }",
])
def test_descriptor_source_reads_a_value_or_fields(entry):
    d = build(f"[layouts.d]\n{entry}\n", "d")
    assert d.value == desc_value(start=1024, lbo_field=1, sbo_field=64, layout_type=1)
    assert (d.start_address, d.lbo, d.sbo, d.swizzle) == (1024, 16, 1024, "128B")


@pytest.mark.parametrize("entry, message", [
    ("descriptor = { lbo = 16, lbo_field = 1 }", "give 'lbo' or 'lbo_field', not both"),
    ("descriptor = { value = 5, sbo = 16 }", "stands alone"),
    ("descriptor = { lbo = 24 }", "not a multiple of 16"),
    ("descriptor = { lbo = 16, bogus = 1 }", "unknown descriptor keys ['bogus']"),
    ("descriptor = \"0xzz\"", "expected a 64-bit integer"),
    ("descriptor = 1.5", "descriptor must be"),
    ("descriptor = 5\nextra = 1", "unknown keys ['extra']"),
])
def test_descriptor_source_rejects_bad_input_naming_file_and_entry(entry, message):
    with pytest.raises(LayoutError) as e:
        build(f"[layouts.d]\n{entry}\n", "d", path="my.toml")
    assert str(e.value).startswith("my.toml: layouts.d") and message in str(e.value)
    assert "\n" not in str(e.value)


def canonical_offset(major, swizzle, T, m, k, LBO, SBO, mn, kk):
    """Element offset before the swizzle, read off the PTX canonical table (seed 000)."""
    W = {"none": 1, "32B": 2, "64B": 4, "128B": 8}[swizzle]
    if major == "K":
        if swizzle == "none":   # ((8,m),(T,2k)):((1T,SBO),(1,LBO))
            return (mn % 8) * T + (mn // 8) * SBO + kk % T + (kk // T) * LBO
        return (mn % 8) * W * T + (mn // 8) * SBO + kk % T + (kk // T) * T
    if swizzle == "none":       # ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
        return mn % T + (mn // T) * SBO + (kk % 8) * T + (kk // 8) * LBO
    return mn % T + ((mn // T) % W) * T + (mn // (T * W)) * LBO + (kk % 8) * W * T + (kk // 8) * SBO


@pytest.mark.parametrize("major, swizzle, params", [
    ("K", "none", dict(m=2, k=1, LBO=128, SBO=64)),
    ("K", "64B", dict(m=2, k=1, SBO=256)),
    ("MN", "none", dict(m=2, k=2, LBO=128, SBO=64)),
    ("MN", "128B", dict(m=2, k=2, LBO=512, SBO=1024)),
])
def test_canonical_source_is_the_ptx_table_row(major, swizzle, params):
    from verilayout.core.cute import offset_elements
    args = ", ".join(f"{k} = {v}" for k, v in params.items())
    L = build(f'[layouts.c]\ncanonical = {{ major = "{major}", swizzle = "{swizzle}", dtype = "f16", '
              f"{args} }}\n", "c")
    T = 8
    mn_ext = 8 * params["m"] if major == "K" else T * {"none": 1, "128B": 8}[swizzle] * params["m"]
    k_ext = 2 * T * params["k"] if major == "K" else 8 * params["k"]
    b = {"none": 0, "32B": 1, "64B": 2, "128B": 3}[swizzle]
    for mn, kk in itertools.product(range(mn_ext), range(k_ext)):
        pre = canonical_offset(major, swizzle, T, LBO=params.get("LBO"), SBO=params["SBO"],
                               m=params["m"], k=params["k"], mn=mn, kk=kk)
        byte = pre * 2
        byte ^= ((byte >> 7) & ((1 << b) - 1)) << 4         # Swizzle<b,4,3> on bytes
        assert offset_elements(L, (mn, kk)) == byte // 2


@pytest.mark.parametrize("args, message", [
    ('major = "K", swizzle = "32B", dtype = "f16", m = 2, k = 1, SBO = 64, LBO = 8',
     "LBO is not part of the K-major 32B canonical layout"),
    ('major = "K", swizzle = "none", dtype = "f16", m = 2, k = 1, SBO = 64',
     "needs ['LBO']"),
    ('major = "K", swizzle = "none", dtype = "f16", T = 4, m = 2, k = 1, SBO = 64, LBO = 8',
     "T = 4 but f16 has T = 128/16 = 8"),
    ('major = "K", swizzle = "none", m = 2, k = 1, SBO = 64, LBO = 8', "needs 'dtype' or 'T'"),
    ('major = "K", swizzle = "none", dtype = "f16", m = 0, k = 1, SBO = 64, LBO = 8',
     "m must be an integer >= 1"),
    ('major = "X", swizzle = "none", dtype = "f16", m = 1, k = 1, SBO = 64, LBO = 8',
     "major 'X'"),
    ('major = "K", swizzle = "none", dtype = "f16", m = 1, k = 1, SBO = 64, LBO = 8, n = 1',
     "unknown keys ['n']"),
])
def test_canonical_source_rejects_bad_parameters(args, message):
    with pytest.raises(LayoutError, match="inline.toml: layouts.c") as e:
        build(f"[layouts.c]\ncanonical = {{ {args} }}\n", "c")
    assert message in str(e.value)


def test_swizzle_atom_source_is_16_byte_units_xor_row():
    # seed 003: the half 128B K-major atom; byte address = 128 r + 16 (u ^ r) + 2 (k % 8), u = k / 8
    from verilayout.core.cute import offset_bytes
    atom = build('[layouts.a]\nswizzle_atom = { swizzle = "128B", major = "K", dtype = "f16" }\n', "a")
    for r, k in itertools.product(range(8), range(64)):
        assert offset_bytes(atom, (r, k)) == 128 * r + 16 * ((k // 8) ^ r) + 2 * (k % 8)


def test_swizzle_atom_without_dtype_is_in_128_bit_elements():
    # PTX Table 38: the 64B MN-major atom is 4 x 8 128-bit elements
    atom = build('[layouts.a]\nswizzle_atom = { swizzle = "64B", major = "MN" }\n', "a")
    assert tuple(atom.shape) == (4, 8) and atom.elem_bits == 128


def test_tile_to_shape_source_gives_the_seed_003_layout():
    text = """
[layouts.atom]
text = "(_8,_8):(_8,_1)"
[layouts.t]
tile_to_shape = { atom = "atom", shape = [64, 16] }
[layouts.printed]
text = "((_8,8),(_8,2)):((_8,_64),(_1,512))"
[[obligation]]
kind = "equal"
lhs = "t"
rhs = "printed"
"""
    assert [v.status for v in run(text)] == ["proved"]


def test_tile_to_shape_needs_an_atom_that_divides():
    text = ('[layouts.atom]\ntext = "(_8,_8):(_8,_1)"\n'
            '[layouts.t]\ntile_to_shape = { atom = "atom", shape = [60, 16] }\n')
    with pytest.raises(LayoutError, match="inline.toml: layouts.t: .*does not divide"):
        build(text, "t")


def test_fragment_source_is_the_seed_003_store_loop():
    L = build('[layouts.f]\nfragment = { shape = "m64n32k16", operand = "D", dtype = "f16" }\n', "f")
    for warp, lane, i in itertools.product(range(4), range(32), range(16)):
        row = lane // 4 + warp * 16 + (8 if i % 4 >= 2 else 0)
        col = lane % 4 * 2 + 8 * (i // 4) + i % 2
        assert L.apply({"register": i, "lane": lane, "warp": warp}) == {"dim0": row, "dim1": col}


def test_fragment_source_rejects_unknown_keys_and_bad_shapes():
    with pytest.raises(LayoutError, match=r"layouts.f: unknown keys \['n'\] in 'fragment'"):
        build('[layouts.f]\nfragment = { shape = "m64n8k16", operand = "D", dtype = "f16", n = 1 }\n', "f")
    with pytest.raises(LayoutError, match="layouts.f: .*f16 needs k16"):
        build('[layouts.f]\nfragment = { shape = "m64n8k8", operand = "A", dtype = "f16" }\n', "f")


# ----- wgmma: kinds -------------------------------------------------------------------------

EX1 = """
[layouts.a]
text = "Sw<0,4,3> o smem_ptr16b o ((_8,8),(_8,2)):((_8,_64),(_1,512))"
"""


def test_descriptor_matches_proves_seed_003_example_1():
    # seed 003: "LBO = 64, SBO = 8", no swizzle, K-major
    text = EX1 + """
[[obligation]]
kind = "descriptor_matches"
descriptor = { lbo_field = 64, sbo_field = 8 }
layout = "a"
dtype = "f16"
major = "K"
"""
    assert run(text)[0].status == "proved"


def test_descriptor_matches_counterexample_names_the_misread_element():
    # LBO and SBO swapped: row 8 is read SBO' = 64 units = 1024 bytes in, but the layout put
    # it 64 elements = 128 bytes in (stride _64 of the (8,8) mode)
    text = EX1 + """
[[obligation]]
kind = "descriptor_matches"
descriptor = "0x0000004000080000"
layout = "a"
dtype = "f16"
major = "K"
"""
    v = run(text)[0]
    assert v.status == "counterexample"
    c = v.counterexample
    assert (c["mn"], c["k"], c["descriptor_address"], c["layout_address"]) == (8, 0, 1024, 128)


def test_descriptor_matches_with_a_non_descriptor_name_is_bad_input():
    text = EX1 + ('[[obligation]]\nkind = "descriptor_matches"\ndescriptor = "a"\nlayout = "a"\n'
                  'dtype = "f16"\nmajor = "K"\n')
    with pytest.raises(LayoutError, match="layout 'a' is not a descriptor"):
        run(text)


def test_descriptor_fields_reports_the_differing_field():
    text = """
[[obligation]]
kind = "descriptor_fields"
descriptor = { lbo = 256, sbo = 128 }
fields = { lbo_field = 16, sbo_field = 9 }
"""
    v = run(text)[0]
    assert v.status == "counterexample"
    assert v.counterexample["field"] == "sbo_field" and v.counterexample["actual"] == 8
    ok = text.replace("sbo_field = 9", "sbo_field = 8, value = \"%#x\"" % desc_value(lbo_field=16, sbo_field=8))
    assert run(ok)[0].status == "proved"


def test_descriptor_fields_rejects_unknown_field_names():
    text = '[[obligation]]\nkind = "descriptor_fields"\ndescriptor = 0\nfields = { lbo_bytes = 1 }\n'
    with pytest.raises(LayoutError, match=r"unknown descriptor fields \['lbo_bytes'\]"):
        run(text)


FRAG = '[layouts.f]\nfragment = { shape = "m64n24k16", operand = "D", dtype = "f16", acc = "f16" }\n'


def test_fragment_table_states_the_seed_001_counts():
    # seed 001: .f16 accumulator: N/4 .f16x2 registers, d0 .. d(N/2 - 1)
    ok = FRAG + ('[[obligation]]\nkind = "fragment_table"\nfragment = "f"\nelements = 12\n'
                 'registers = 6\nregister_type = ".f16x2"\n')
    assert run(ok)[0].status == "proved"
    v = run(ok.replace("registers = 6", "registers = 12"))[0]
    assert v.status == "counterexample" and v.counterexample == {
        "field": "registers", "expected": 12, "actual": 6}


def test_fragment_coverage_finds_an_element_held_twice():
    from dataclasses import replace

    from verilayout.wgmma import fragment
    from verilayout.core.linear_layout import LinearLayout
    from verilayout.spec.kinds.wgmma import fragment_coverage
    f = fragment("m64n8k16", "D", "f16")
    bases = {k: [list(b) for b in v] for k, v in f.layout.bases.items()}
    bases["register"][0] = [8, 0]          # d1 now lands where d2 is
    broken = replace(f, layout=LinearLayout(bases, f.layout.out_dims, require_surjective=False))
    problem, _ = fragment_coverage(broken)
    assert problem["problem"] in ("held more than once", "held by no thread")


def test_fragment_table_needs_a_fragment_entry():
    text = ('[layouts.l]\nbases = { lane = [[1]] }\nout_dims = { dim0 = 2 }\n'
            '[[obligation]]\nkind = "fragment_table"\nfragment = "l"\n')
    with pytest.raises(LayoutError, match="'fragment' must name a \\[layouts\\] entry"):
        run(text)


S32 = [8, 16, 24, 32] + list(range(48, 257, 16))      # seed 001: 8i (1..4), 16i (3..16)


def test_wgmma_n_accepts_exactly_the_seed_001_list():
    text = f'[[obligation]]\nkind = "wgmma_n"\ndtype = "s8"\nacc = "s32"\nn = {S32}\n'
    assert run(text)[0].status == "proved"
    v = run(text.replace("[8, 16, 24, 32,", "[8, 16, 24, 32, 40,"))[0]
    assert v.counterexample == {"n": 40, "accepted": False, "claimed": True}
    v = run(text.replace("[8, 16,", "[16,"))[0]
    assert v.counterexample == {"n": 8, "accepted": True, "claimed": False}


def test_wgmma_n_rejects_an_accumulator_the_type_does_not_have():
    text = '[[obligation]]\nkind = "wgmma_n"\ndtype = "bf16"\nacc = "f16"\nn = [8]\n'
    with pytest.raises(LayoutError, match="accumulator 'f16' is not allowed with bf16"):
        run(text)


def test_offsets_of_figure_167():
    # seed 000 Figure 167: ((8,2),(4,4)):((8,64),(1,4)): (1,0) -> 8, (0,8) -> 0 + 2*4 = 8
    text = """
[layouts.f]
text = "Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))"
swizzle_units = "bytes"
dtype = "tf32"
[[obligation]]
kind = "offsets"
layout = "f"
points = [[[0, 8], 8], [[1, 0], 8], [[9, 0], 72]]
"""
    assert run(text)[0].status == "proved"
    v = run(text.replace("[[9, 0], 72]", "[[9, 0], 73]"))[0]
    assert v.counterexample == {"coordinate": [9, 0], "expected": 73, "actual": 72}


# ----- banks --------------------------------------------------------------------------------

COL = """
[layouts.col]        # seed 004: lanes 0-15 read column 0 of a 16x32 f32 tensor (16-31 repeat)
bases = { register = [], lane = [[1, 0], [2, 0], [4, 0], [8, 0], [0, 0]] }
out_dims = { dim0 = 16, dim1 = 32 }
[layouts.rows]
text = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"
shape = [16, 32]
[layouts.padded]
shared = "#ttg.padded_shared<[32:+1] {order = [1, 0], shape = [16, 32]}>"
shape = [16, 32]
dtype = "f32"
"""


def brute_wavefronts(rows: int, pitch_words: int) -> int:
    """Lanes 0-15 read (r, 0) of a row-major f32 tensor with rows ``pitch_words`` words apart."""
    banks: dict = {}
    for r in range(rows):
        word = r * pitch_words
        banks.setdefault(word % 32, set()).add(word)
    return max(len(w) for w in banks.values())


def test_max_wavefronts_on_the_seed_004_column_read():
    assert brute_wavefronts(16, 32) == 16
    ok = COL + ('[[obligation]]\nkind = "max_wavefronts"\nreg = "col"\nsmem = "rows"\n'
                'dtype = "f32"\nwavefronts = 16\n')
    assert run(ok)[0].status == "proved"
    v = run(ok.replace("wavefronts = 16", "wavefronts = 15"))[0]
    assert v.status == "counterexample" and v.counterexample["wavefronts"] == 16
    first, second = v.counterexample["first"], v.counterexample["second"]
    assert first["byte_address"] % 128 == second["byte_address"] % 128   # one bank
    assert first["byte_address"] != second["byte_address"]


def test_conflict_free_with_padding_via_the_shared_source():
    assert brute_wavefronts(16, 33) == 1
    text = COL + ('[[obligation]]\nkind = "conflict_free"\nreg = "col"\nsmem = "padded"\n'
                  'elem_bits = 32\n')
    assert run(text)[0].status == "proved"


@pytest.mark.parametrize("extra, message", [
    ("elem_bits = 32\ndtype = \"f32\"", "give exactly one of 'elem_bits' and 'dtype'"),
    ("", "give exactly one of 'elem_bits' and 'dtype'"),
    ("dtype = \"f99\"", "unknown dtype 'f99'"),
    ("dtype = \"f32\"\nstore = \"yes\"", "store must be true or false"),
    ("dtype = \"f32\"\ninstruction = \"ld.global.b32\"", "only shared-memory accesses"),
])
def test_bank_kinds_reject_bad_parameters(extra, message):
    text = COL + f'[[obligation]]\nkind = "conflict_free"\nreg = "col"\nsmem = "rows"\n{extra}\n'
    with pytest.raises(LayoutError, match="inline.toml: obligation 1") as e:
        run(text)
    assert message in str(e.value)


def test_shared_source_rejects_unknown_keys():
    text = '[layouts.s]\nshared = "#ttg.padded_shared<[32:+1] {order = [1, 0], shape = [16, 32]}>"\npitch = 3\n'
    with pytest.raises(LayoutError, match=r"inline.toml: layouts.s: unknown keys \['pitch'\]"):
        build(text, "s")


# ----- block loads --------------------------------------------------------------------------

DPAS1 = ("#ttig.dpas<{repeatCount = 8, systolicDepth = 8, executionSize = 16, opsPerChan = 2, "
         "threadsPerWarp = 16, warpsPerCTA = [1, 1], repCluster = [1, 1]}>")
TILE = f"""
[layouts.A]       # one DPAS A tile: lane l, register r reads (r, l) (seed 002)
text = "tensor<8x16xf16, #ttg.dot_op<{{opIdx = 0, parent = {DPAS1}, kWidth = 1}}>>"
"""


def test_a_written_plan_covers_and_a_moved_one_misses_row_0():
    ok = TILE + """
[[obligation]]
kind = "blockload_covers"
plan = { operand = "A", loads = [{ elem_bytes = 2, width = 16, height = 8 }] }
operand = "A"
"""
    assert run(ok)[0].status == "proved"
    v = run(ok.replace("height = 8 }", "height = 8, y = 1 }"))[0]
    # rows 1..8 are loaded; element (0, 0), register 0 of lane 0, is not
    assert v.status == "counterexample"
    assert v.counterexample["element"] == [0, 0] and v.counterexample["missed"] is True


def test_a_load_layout_in_the_seeds_terms_exact_and_within():
    # seed 002: the tile layout offset -> (offset / 16, offset % 16) names one A tile
    tile = TILE + """
[layouts.t]
bases = { offset = [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0], [4, 0]] }
out_dims = { dim0 = 8, dim1 = 16 }
[layouts.half]
bases = { offset = [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0]] }
out_dims = [["dim0", 8], ["dim1", 16]]
[[obligation]]
kind = "blockload_covers"
plan = "t"
operand = "A"
[[obligation]]
kind = "blockload_covers"
plan = "half"
operand = "A"
[[obligation]]
kind = "blockload_covers"
plan = "half"
operand = "A"
mode = "within"
"""
    exact, half_exact, half_within = run(tile)
    assert exact.status == "proved"
    assert half_exact.status == "counterexample" and half_exact.counterexample["element"] == [4, 0]
    assert half_within.status == "proved"


def test_plan_minimal_one_tile_is_one_load():
    text = TILE + '[[obligation]]\nkind = "plan_minimal"\noperand = "A"\nloads = 1\n'
    assert run(text)[0].status == "proved"
    v = run(text.replace("loads = 1", "loads = 2"))[0]
    assert v.counterexample["claimed"] == 2 and v.counterexample["minimum"] == 1
    with pytest.raises(LayoutError, match="give exactly one of 'loads'"):
        run(text.replace("loads = 1", ""))


def test_plan_layout_and_sublayout_sources():
    text = TILE + """
[layouts.p]
plan = { operand = "A", algorithm = "baseline" }
[layouts.pl]
plan_layout = "p"
[layouts.seed]
bases = { offset = [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0], [4, 0]], iteration = [], load = [] }
out_dims = { dim0 = 8, dim1 = 16 }
[layouts.w0]
sublayout = { layout = "A", ins = ["register", "lane"] }
[[obligation]]
kind = "equal"
lhs = "pl"
rhs = "seed"
[[obligation]]
kind = "formula"
layout = "w0"
outputs = { dim0 = "register", dim1 = "lane" }
"""
    assert [v.status for v in run(text)] == ["proved", "proved"]


@pytest.mark.parametrize("entry, message", [
    ('plan = { operand = "A", algorithm = "greedy" }', "algorithm must be 'minimal' or 'baseline'"),
    ('plan = { operand = "A", speed = 1 }', "unknown keys ['speed']"),
    ('plan = { algorithm = "minimal" }', "plan needs 'operand'"),
    ('plan = { operand = "nope" }', "operand must name a [layouts] entry"),
    ('plan = { operand = "A", loads = [{ elem_bytes = 2, width = 16 }] }', "height"),
    ('plan = { operand = "A", dtype = "bf16", loads = [] }', "dtype 'bf16' differs"),
    ('plan = { operand = "A", op_idx = 1, loads = [] }', "plan op_idx = 1 but the operand has 0"),
    ('plan_layout = "A"', "plan_layout must name"),
    ('sublayout = { layout = "A", ins = ["thread"] }', "ins must list input dims"),
])
def test_blockload_sources_reject_bad_input(entry, message):
    with pytest.raises(LayoutError) as e:
        build(TILE + f"[layouts.p]\n{entry}\n", "p")
    assert str(e.value).startswith("inline.toml: layouts.p") and message in str(e.value)


# ----- no crash on arbitrary field values -----------------------------------------------------

VALUES = st.one_of(st.integers(-5, 300), st.text(max_size=6), st.booleans(),
                   st.lists(st.integers(-2, 64), max_size=3), st.just("f16"), st.just("K"),
                   st.just("128B"), st.just("A"), st.floats(allow_nan=False, width=16))
SOURCES = {
    "fragment": ["shape", "operand", "dtype", "acc"],
    "descriptor": ["value", "start_address", "lbo", "lbo_field", "sbo", "swizzle", "layout_type"],
    "canonical": ["major", "swizzle", "dtype", "T", "m", "k", "LBO", "SBO"],
    "swizzle_atom": ["swizzle", "major", "dtype"],
    "tile_to_shape": ["atom", "shape", "order"],
    "plan": ["operand", "algorithm", "transpose", "loads", "warp"],
    "sublayout": ["layout", "ins"],
}


def toml_value(v) -> str:
    import json
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if v == v and abs(v) != float("inf") else "0.5"
    return json.dumps(v)


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(source=st.sampled_from(sorted(SOURCES)), data=st.data())
def test_sources_never_crash_on_random_fields(source, data):
    keys = data.draw(st.lists(st.sampled_from(SOURCES[source] + ["bogus"]), unique=True, max_size=5))
    fields = ", ".join(f"{k} = {toml_value(data.draw(VALUES))}" for k in keys)
    text = TILE + f"[layouts.x]\n{source} = {{ {fields} }}\n"
    try:
        build(text, "x")
    except LayoutError as e:
        assert str(e) and "\n" not in str(e)


def test_plan_minimal_with_a_stated_plan_checks_it_first():
    # a load one row too low misses element (0, 0): the plan is not valid, so not minimal
    text = TILE + """
[layouts.low]
plan = { operand = "A", loads = [{ elem_bytes = 2, width = 16, height = 8, y = 1 }] }
[[obligation]]
kind = "plan_minimal"
operand = "A"
plan = "low"
"""
    v = run(text)[0]
    assert v.status == "counterexample" and v.counterexample["element"] == [0, 0]
    with pytest.raises(LayoutError, match="transpose come from the plan"):
        run(text + "transpose = true\n")


def test_load_layout_keys_are_refused_for_plans():
    text = TILE + """
[[obligation]]
kind = "blockload_covers"
plan = { operand = "A" }
operand = "A"
pack = [0, 2]
"""
    with pytest.raises(LayoutError, match="'pack' is for load layouts"):
        run(text)
