"""Block-load plans for DPAS operands: the seed's worked examples, field failures,
lower bounds, the baseline, plan files.

Sources: the seed ``002_5b1756cea8788f7c.txt`` (the A, B and transposed-B examples, their
printed layouts and load counts), ``shared/reference/intel_2d_block_io.md`` (the limits
and the field failures), derivations written in the tests (counting arguments), and an
independent element-by-element simulation of the loads written here from the OpenCL
built-ins' register images.
"""
from __future__ import annotations

import dataclasses
import itertools
import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from verilayout import blockload
from verilayout.errors import LayoutError
from verilayout.hw.intel.block_io import BlockLoad, Surface
from verilayout.hw.intel.dpas import OPS_PER_CHAN, Dpas, dpas_for_dtype
from verilayout.core.linear_layout import LinearLayout
from verilayout.prove.coverage import Needed, compare_load_layout, lower_bound, search_fewer
from verilayout.synth.blockload import Plan, plan_baseline, plan_minimal

DPAS = ("#triton_intel_gpu.dpas<{repeatCount = 8, systolicDepth = 8, executionSize = 16, "
        "opsPerChan = 2, threadsPerWarp = 16, warpsPerCTA = [8, 4], repCluster = [4, 2], "
        "A = [32, 16], B = [16, 32], C = [32, 32]}>")
A_TYPE = f"tensor<256x32xf16, #ttg.dot_op<{{opIdx = 0, parent = {DPAS}, kWidth = 1}}>>"
B_TYPE = f"tensor<32x256xf16, #ttg.dot_op<{{opIdx = 1, parent = {DPAS}, kWidth = 2}}>>"
SEED_DPAS = Dpas(8, 8, 16, 2, 16, (8, 4), (4, 2))

# seed 002, A, "Block load tile layout after adding loads"
SEED_A_OFFSET = [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0], [4, 0]]
SEED_A_ITERATION = [[8, 0], [16, 0], [0, 16]]


@pytest.fixture(scope="module")
def plans():
    return {"A": blockload.plan(A_TYPE), "B": blockload.plan(B_TYPE),
            "BT": blockload.plan(B_TYPE, transpose=True)}


# ----------------------------------------------------------------------------
# the seed's three worked examples
# ----------------------------------------------------------------------------

def test_seed_a_is_one_32x32_load_with_the_printed_bases(plans):
    p = plans["A"]
    assert len(p.loads) == 1 and p.verdict.proved and p.minimal and p.lower_bound == 1
    ld = p.loads[0]
    assert (ld.height, ld.width * ld.array_length, ld.vnni, ld.transpose) == (32, 32, False, False)
    L = p.layout
    assert L.bases == {"offset": SEED_A_OFFSET, "iteration": SEED_A_ITERATION, "load": []}
    assert L.out_dims == {"dim0": 32, "dim1": 32}   # seed: dim0 (size 32), dim1 (size 32)


def test_seed_a_layout_gives_the_printed_first_and_last_offsets(plans):
    # seed 002, A: "0, 0 : 0, 0 / 0, 127 : 7, 15 / 1, 0 : 8, 0 / ... / 7, 127 : 31, 31"
    printed = {(0, 0): (0, 0), (0, 127): (7, 15), (1, 0): (8, 0), (1, 127): (15, 15),
               (2, 0): (16, 0), (2, 127): (23, 15), (3, 0): (24, 0), (3, 127): (31, 15),
               (4, 0): (0, 16), (4, 127): (7, 31), (5, 0): (8, 16), (5, 127): (15, 31),
               (6, 0): (16, 16), (6, 127): (23, 31), (7, 0): (24, 16), (7, 127): (31, 31)}
    L = plans["A"].layout
    for (it, off), (r, c) in printed.items():
        assert L.apply({"offset": off, "iteration": it, "load": 0}) == {"dim0": r, "dim1": c}


def test_seed_b_is_two_vnni_loads_128_apart_along_n(plans):
    p = plans["B"]
    assert len(p.loads) == 2 and p.verdict.proved and p.lower_bound == 2
    a, b = p.loads
    assert a.vnni and b.vnni and not a.transpose
    assert (b.x - a.x, b.y - a.y) == (128, 0)       # x counts N (columns)
    # seed 002, B "Block load tile layout": offset bases in packed rows (VNNI pairs)
    assert p.layout.bases["offset"] == [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0], [4, 0]]
    assert p.pack == (0, 2)                          # "multiply the first value by 2"
    assert p.layout.bases["load"] == [[0, 128]]


def test_seed_transposed_b_is_four_d32_transposed_loads(plans):
    p = plans["BT"]
    assert len(p.loads) == 4 and p.verdict.proved and p.lower_bound == 4
    assert all(ld.transpose and ld.elem_bytes == 4 for ld in p.loads)
    # seed 002, AxBT: "load=1 -> (0, 16), load=2 -> (128, 0)" in B^T's [256 x 32]
    # coordinates; our layout counts dim1 in dwords (pairs), so 16 elements = 8 slots.
    assert p.pack == (1, 2)
    assert p.layout.bases["load"] == [[0, 16 // 2], [128, 0]]


def test_baseline_reproduces_the_seeds_plans(plans):
    for name, typ, tr, n in (("A", A_TYPE, False, 1), ("B", B_TYPE, False, 2),
                             ("BT", B_TYPE, True, 4)):
        b = blockload.plan(typ, transpose=tr, baseline=True)
        assert len(b.loads) == n and b.verdict.proved, name
        assert [ld.describe() for ld in b.loads] == [ld.describe() for ld in plans[name].loads]
    # seed 002, AxBT "after adding iterations": iteration=1 -> (16, 0) in B^T coordinates
    bt = blockload.plan(B_TYPE, transpose=True, baseline=True)
    assert bt.iterations == ((16, 0),)


@pytest.mark.parametrize("name", ["A", "B", "BT"])
def test_seed_plans_hold_for_every_warp(plans, name):
    typ = A_TYPE if name == "A" else B_TYPE
    assert blockload.check(plans[name], typ, warps="all").proved


# ----------------------------------------------------------------------------
# the seed's printed load layouts, checked against the operands
# ----------------------------------------------------------------------------

def _b_needed(transpose=False):
    # B's real layout, the one whose Warp0 view matches the seed line for line
    # (tests/test_intel_seed_views.py).
    return Needed.from_layout(SEED_DPAS.layout((32, 256), 1), 0, transpose)


def test_seed_b_after_adding_loads_puts_the_second_load_outside_b():
    # seed 002, B "Block load tile layout after adding loads", verbatim:
    seed = LinearLayout({"offset": [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0], [4, 0]],
                         "iteration": [[0, 16], [8, 0]], "load": [[128, 0]]},
                        {"dim0": 256, "dim1": 32}, require_surjective=False)
    v = compare_load_layout(seed, _b_needed(), pack=(0, 2))
    # Finding: load=1 starts at (128, 0), i.e. rows 256.. of B once unpacked; B is 32x256
    # (seed: tensor<32x256xf16>). The printed out dims [256, 32] are B's transposed.
    assert v.status == "counterexample"
    assert v.counterexample == {"offset": 0, "iteration": 0, "load": 1, "slot": [128, 0],
                                "element": [256, 0], "shape": [32, 256]}
    # The element warp 0's second N block starts with, (0, 128), is named by no input.
    covered = {(r * 2 + j, c) for r, c in _all_outputs(seed) for j in (0, 1)}
    assert (0, 128) not in covered
    # With the load basis along N instead, the same layout is exactly right.
    fixed = LinearLayout({**seed.bases, "load": [[0, 128]]}, {"dim0": 16, "dim1": 256},
                         require_surjective=False)
    assert compare_load_layout(fixed, _b_needed(), pack=(0, 2)).proved


def test_seed_b_after_adding_iterations_overruns_k():
    # seed 002, B "after adding iterations": iteration bases (8,0), (16,0), (0,16) in packed
    # rows; iteration=2 -> packed row 16 = K rows 32, 33, past B's K = 32.
    seed = LinearLayout({"offset": [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0], [4, 0]],
                         "iteration": [[8, 0], [16, 0], [0, 16]]}, {"dim0": 32, "dim1": 32},
                        require_surjective=False)
    v = compare_load_layout(seed, _b_needed(), pack=(0, 2))
    assert v.counterexample["iteration"] == 2 and v.counterexample["element"] == [32, 0]


def test_seed_transposed_b_after_adding_loads_mixes_units():
    # seed 002, AxBT "after adding loads" in B^T coordinates [256 x 32], dim1 packed by 2
    # (each dword holds two f16; offsets 1, 2, 4 step through dwords): load=1 -> (0, 16)
    # then reaches f16 column 32, past K = 32.
    seed = LinearLayout({"offset": [[0, 1], [0, 2], [0, 4], [1, 0], [2, 0], [4, 0], [8, 0]],
                         "iteration": [[16, 0]], "load": [[0, 16], [128, 0]]},
                        {"dim0": 256, "dim1": 32}, require_surjective=False)
    v = compare_load_layout(seed, _b_needed(transpose=True), pack=(1, 2))
    assert v.counterexample["load"] == 1 and v.counterexample["element"] == [0, 32]
    # Read in f16 units instead, the offsets miss K 8..15: also not a cover.
    unpacked = compare_load_layout(seed.with_out_dim_sizes({"dim1": 32}),
                                   _b_needed(transpose=True), pack=(1, 1))
    assert unpacked.status == "counterexample"


def _all_outputs(L):
    out = []
    for ins in itertools.product(*[range(s) for s in L.in_dims.values()]):
        o = L.apply(dict(zip(L.in_dim_names, ins)))
        out.append((o["dim0"], o["dim1"]))
    return out


# ----------------------------------------------------------------------------
# failure patterns from the field (reference: "Known failures in the wild")
# ----------------------------------------------------------------------------

def _with_load(p, i, **changes):
    loads = list(p.loads)
    loads[i] = dataclasses.replace(loads[i], **changes)
    return dataclasses.replace(p, loads=tuple(loads))


def test_a_load_taller_than_32_rows_is_rejected(plans):
    # 64 rows of A in one (VNNI or plain) load: the hardware returns zeros.
    p = _with_load(plans["A"], 0, height=64)
    v = blockload.check(p, A_TYPE)
    assert v.counterexample["limit"] == "block height" and v.counterexample["value"] == 64


def test_a_base_16_but_not_64_byte_aligned_is_rejected(plans):
    p = _with_load(plans["B"], 1, surface=Surface(512, 32, 512, base=16))
    v = blockload.check(p, B_TYPE)
    assert v.counterexample["limit"] == "surface base" and v.counterexample["value"] == 16
    assert v.counterexample["load"] == 1


def test_a_block_widened_past_the_surface_pitch_is_rejected(plans):
    # Alignment compensation: a base 32 bytes past a 64-byte boundary is moved down by 32
    # bytes, x grows by 16 f16 and the surface width by 32 bytes: 64 -> 96 > pitch 64.
    p = plans["A"]
    ld = p.loads[0]
    comp = dataclasses.replace(ld, x=ld.x + 16, surface=Surface(96, 256, 64, base=0))
    v = blockload.check(dataclasses.replace(p, loads=(comp,)), A_TYPE)
    assert v.counterexample["limit"] == "surface pitch"
    assert "at least the surface width (96 bytes)" in v.counterexample["rule"]


def test_a_transposed_load_of_16_bit_data_is_rejected(plans):
    p = _with_load(plans["BT"], 0, elem_bytes=2, width=16)
    v = blockload.check(p, B_TYPE)
    assert v.counterexample["limit"] == "transpose element size"


def test_a_plan_that_drops_one_dpas_repetition_is_rejected(plans):
    # B without its second load: the DPAS repetition at N = 128 is never loaded.
    p = plans["B"]
    short = dataclasses.replace(p, loads=p.loads[:1], shuffle=tuple(
        tuple((0, e) if i == 1 else (i, e) for i, e in row) for row in p.shuffle))
    v = blockload.check(short, B_TYPE)
    # B's register 64, lane 0 holds (0, 128): the 7th register bit is the N repetition.
    assert v.counterexample == {"register": 64, "lane": 0, "element": [0, 128],
                                "missed": True, "warp": 0}


def test_a_shuffle_that_picks_the_wrong_slot_names_the_register(plans):
    p = plans["A"]
    bad = list(p.shuffle)
    bad[3] = bad[4]
    v = blockload.check(dataclasses.replace(p, shuffle=tuple(bad)), A_TYPE)
    assert v.counterexample["register"] == 3 and v.counterexample["lane"] == 0
    assert v.counterexample["expected"] == [3, 0] and v.counterexample["received"] == [4, 0]


def test_the_transpose_flag_dropped_on_a_transposed_operand_is_rejected(plans):
    # "the transpose flag hard-coded to false on a path that needed it": B's plan applied
    # to B stored transposed reads rows of B^T as if they were rows of B.
    wrong = dataclasses.replace(plans["B"], transpose=True)
    v = blockload.check(wrong, B_TYPE)
    assert v.status == "counterexample" and v.counterexample.get("missed")


def test_rows_outside_the_surface_read_as_zero(plans):
    # reference: "loaded elements outside the surface read as zero": a surface of 16 rows
    # cannot supply A's rows 16..31 even though the load spans them.
    p = _with_load(plans["A"], 0, surface=Surface(64, 16, 64))
    v = blockload.check(p, A_TYPE)
    assert v.counterexample == {"register": 16, "lane": 0, "element": [16, 0], "missed": True,
                                "warp": 0}


def test_one_load_per_dpas_operand_for_transposed_b_is_valid_but_not_minimal(plans):
    # "a transposed load split into one load per DPAS operand doubled the number of loads"
    p = plans["BT"]
    split = []
    for ld in p.loads:
        split += [dataclasses.replace(ld, height=16), dataclasses.replace(ld, height=16, y=ld.y + 16)]
    sp = dataclasses.replace(p, loads=tuple(split), shuffle=_reshuffle(split, B_TYPE, True))
    assert blockload.check(sp, B_TYPE).proved
    assert len(split) == 2 * p.lower_bound


def _reshuffle(loads, typ, transpose):
    from verilayout.synth.blockload import _shuffle
    op = blockload.operand(typ)
    return _shuffle(loads, Needed.from_layout(op.layout, 0, transpose), 2)


# ----------------------------------------------------------------------------
# lower bounds
# ----------------------------------------------------------------------------

def test_counting_bounds_for_the_seed_examples(plans):
    # Derivation: a load delivers at most 32 rows x 64 bytes = 1024 f16 (plain, VNNI) or,
    # transposed, 32 rows x 8 dwords = 512 f16; a sub-group reads 32x32 of A (1024),
    # 32x64 of B (2048). So A >= 1, B >= 2, transposed B >= 4 loads.
    assert (plans["A"].lower_bound, plans["B"].lower_bound, plans["BT"].lower_bound) == (1, 2, 4)
    b = lower_bound(_b_needed(transpose=True), 2)
    assert (b.needed, b.per_load) == (2048, 512)
    assert plans["BT"].verdict.method == "counting"


def test_exhaustive_search_settles_what_counting_cannot():
    # Six 1x16 rows of f16 (lane = column): rows 0, 1, 2 fit one load, rows 100, 200, 300
    # are 100 apart. Counting: a load serves at most 3 rows (48 pairs) of 96 -> >= 2 loads.
    # Any load spans < 33 rows, so the far rows need a load each: exactly 4.
    rows = [0, 1, 2, 100, 200, 300]
    coords = np.array([[[r, l] for l in range(16)] for r in rows])
    need = Needed(coords, (512, 16))
    assert lower_bound(need, 2).value == 2
    s = Surface(64, 512, 64)
    assert search_fewer(need, 2, 3, s).status == "none"
    found = search_fewer(need, 2, 4, s)
    assert found.status == "found" and len(found.loads) <= 4


def test_minimal_beats_the_baseline_when_k_repetitions_come_first():
    # repCluster [1, 1], one warp: A 256x64 f16 register bases after the 8x16 tile are
    # K+16, K+32, then M+8, M+16, ... The seed's algorithm grows K to 32 columns, cannot
    # grow to 64 (128 bytes > 64), so every later basis (all of M) becomes a load:
    # 2 x 32 = 64 loads of 8x32. Minimal: 32-row x 32-column loads, 256/32 x 64/32 = 16,
    # and 16 = 256*64 / 1024 by counting.
    d = dpas_for_dtype("f16", (1, 1), (1, 1))
    L = d.layout((256, 64), 0)
    base = plan_baseline(L, dtype="f16", op_idx=0, inst_shape=d.inst_shape_a)
    best = plan_minimal(L, dtype="f16", op_idx=0, inst_shape=d.inst_shape_a)
    assert len(base.loads) == 64 and base.loads[0].height == 8
    assert len(best.loads) == 16 and best.verdict.proved and best.lower_bound == 16


# ----------------------------------------------------------------------------
# independent simulation of random plans
# ----------------------------------------------------------------------------

def _simulate(ld: BlockLoad, t: int):
    """Per lane, the (row, col) of each t-byte element, by loops over the OpenCL images."""
    def p2(v):
        return 1 << (v - 1).bit_length() if v > 1 else 1
    e, w, h, a = ld.elem_bytes, ld.width, ld.height, ld.array_length
    image = {}
    if ld.transpose:
        size = -(-w * p2(h) * e // 64) * 64
        for c, r, j in itertools.product(range(w), range(h), range(e)):
            image[(c * p2(h) + r) * e + j] = (ld.y + r, (ld.x + c) * e + j)
    elif ld.vnni:
        k = 4 // e
        size = -(-(-(-h // k)) * p2(w) * 4 // 64) * 64
        for b, r, c, j in itertools.product(range(a), range(h), range(w), range(e)):
            image[b * size + ((r // k) * p2(w) + c) * 4 + (r % k) * e + j] = \
                (ld.y + r, (ld.x + b * w + c) * e + j)
    else:
        size = -(-h * p2(w) * e // 64) * 64
        for b, r, c, j in itertools.product(range(a), range(h), range(w), range(e)):
            image[b * size + (r * p2(w) + c) * e + j] = (ld.y + r, (ld.x + b * w + c) * e + j)
    u = e if ld.transpose else 4 if ld.vnni else max(2, e)
    total = size * (1 if ld.transpose else a)
    lanes = [[] for _ in range(16)]
    for unit in range(total // u):
        lanes[unit % 16].extend(image.get(unit * u + i) for i in range(u))
    out = []
    for bytes_ in lanes:
        elems = []
        for i in range(0, len(bytes_) - t + 1, t):
            chunk = bytes_[i:i + t]
            ok = chunk[0] is not None and chunk[0][1] % t == 0 and all(
                c == (chunk[0][0], chunk[0][1] + n) for n, c in enumerate(chunk))
            elems.append((chunk[0][0], chunk[0][1] // t) if ok else None)
        out.append(elems)
    return out


@settings(max_examples=12, deadline=None)
@given(dtype=st.sampled_from(["f16", "bf16", "i8", "tf32"]), rc=st.sampled_from([(1, 1), (2, 2), (4, 1)]),
       warps=st.sampled_from([(1, 1), (2, 2), (4, 1)]), op=st.sampled_from([0, 1]),
       transpose=st.booleans(), warp=st.integers(0, 3))
def test_plans_feed_every_register_in_an_independent_simulation(dtype, rc, warps, op, transpose, warp):
    if dtype == "i8" and op == 0 and transpose:
        return  # no structured plan exists; see test_transposed_int8_a_gets_a_cover_plan
    d = dpas_for_dtype(dtype, warps, rc)
    k = 2 * 8 * OPS_PER_CHAN[dtype]
    shape = (d.shape_a[0] * warps[0] * 2, k) if op == 0 else (k, d.shape_b[1] * warps[1] * 2)
    L = d.layout(shape, op)
    warp = warp % L.in_dims["warp"]
    p = plan_minimal(L, dtype=dtype, op_idx=op, inst_shape=d.inst_shape(op),
                     transpose=transpose, warp=warp)
    assert p.verdict.proved
    t = {"f16": 2, "bf16": 2, "i8": 1, "tf32": 4}[dtype]
    sims = [_simulate(ld, t) for ld in p.loads]
    read = set()
    for r in range(L.in_dims["register"]):
        for l in range(16):
            o = L.apply({"register": r, "lane": l, "warp": warp, "block": 0})
            want = (o["dim1"], o["dim0"]) if transpose else (o["dim0"], o["dim1"])
            i, e = p.shuffle[r][l]
            assert sims[i][l][e] == want, (r, l)
            read.add(want)
    # a load delivers at most 2048 bytes (reference table), so at least this many loads:
    assert len(p.loads) >= -(-len(read) * t // 2048)
    assert len(p.loads) >= p.lower_bound


def test_transposed_int8_a_gets_a_cover_plan_with_minimality_unknown():
    # int8 A packs two K values per lane (lane l: k = 2l, 2l+1); stored transposed, a
    # d32 transposed load gives lane l one K row, a plain load splits M across lanes: no
    # load family matches, so only a load-by-load cover exists, and counting (16) does
    # not settle its size. The plan must still be correct, and say "unknown".
    d = dpas_for_dtype("i8", (1, 1), (1, 1))
    L = d.layout((8, 32), 0)
    p = plan_minimal(L, dtype="i8", op_idx=0, inst_shape=d.inst_shape_a, transpose=True,
                     search=False)
    assert p.verdict.status == "unknown" and not p.minimal
    assert p.lower_bound == 16 and len(p.loads) > 16
    assert blockload.check(p, L).proved


# ----------------------------------------------------------------------------
# the API around plans
# ----------------------------------------------------------------------------

def test_plan_json_round_trip(plans):
    for p in plans.values():
        q = Plan.from_dict(json.loads(json.dumps(p.to_dict())))
        assert q.loads == p.loads and q.shuffle == p.shuffle
        assert q.verdict is None and not q.minimal      # outputs are not trusted on input
        typ = A_TYPE if p.op_idx == 0 else B_TYPE
        assert blockload.check(q, typ).proved


def test_plan_files_are_strict(plans):
    d = plans["A"].to_dict()
    with pytest.raises(LayoutError, match="unknown key 'note' in plan"):
        Plan.from_dict({**d, "note": 1})
    with pytest.raises(LayoutError, match="names load 3; the plan has 1"):
        Plan.from_dict({**d, "shuffle": [[3, 0]] * 64})
    wrong = json.loads(json.dumps(d))
    wrong["layout"]["bases"]["iteration"][0] = [0, 16]
    with pytest.raises(LayoutError, match="differs from the layout its loads imply"):
        Plan.from_dict(wrong)


def test_operand_errors_name_the_problem():
    # a #blocked tensor is planned too (tests/test_intel_blockload_blocked.py); a 32-lane one
    # has no 2D block loads
    with pytest.raises(LayoutError, match="2D block loads serve 16-lane sub-groups"):
        blockload.plan("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], "
                       "warpsPerCTA = [1, 1], order = [1, 0]}>", shape=[32, 32], dtype="f16")
    with pytest.raises(LayoutError, match="opsPerChan = 2 but i8 needs 4"):
        blockload.plan(A_TYPE.replace("xf16", "xi8"))
    with pytest.raises(LayoutError, match=r"line 1, col \d+: 'kWidth' = 2"):
        blockload.plan(A_TYPE.replace("kWidth = 1", "kWidth = 2"))
    with pytest.raises(LayoutError, match="needs op_idx= .* and dtype="):
        blockload.plan(SEED_DPAS.layout((256, 32), 0))
    with pytest.raises(LayoutError, match="no load can use this surface: surface base 8"):
        blockload.plan(A_TYPE, surface=Surface(64, 256, 64, base=8))


def test_plan_for_another_warp_starts_at_that_warps_rows():
    # The seed's A layout has warp bases [[0, 0], [0, 0], [32, 0], [64, 0], [128, 0]]
    # (warpsPerCTA [8, 4]: the first two warp bits run along N, where A is shared):
    # warp 3 reads warp 0's rows, warp 4 starts at row 32.
    p = blockload.plan(A_TYPE, warp=3)
    assert p.loads[0].y == 0 and p.verdict.proved
    q = blockload.plan(A_TYPE, warp=4)
    assert q.loads[0].y == 32 and q.verdict.proved and q.layout.bases == p.layout.bases
