"""2D block-load plans for tensors that are not DPAS operands (issue 14, Intel bullet).

Everything expected here is derived in this file, independently of ``synth/blockload``,
``prove/coverage`` and ``hw/intel/block_io``:

* which lane receives which byte of a load, written from the data layout of the Khronos
  extensions (``shared/reference/intel_2d_block_io.md`` [S], [O]): a block is written row-major
  with its width padded to a power of two (transposed: the block transposed, its height padded;
  VNNI: ``4 / e`` rows packed into 32-bit values), each block filling whole 64-byte registers,
  and the register bytes dealt to lanes in units of the built-ins' per-lane type (2 bytes for 8-
  and 16-bit loads, 4 for 32-bit, VNNI and d32 transposed, 8 for 64-bit): unit ``U`` to lane
  ``U % 16``;
* the legal shapes, from the table in the same file (widths, heights, array lengths per
  element size, the 64-byte row and 2048-byte register limits, 4-byte aligned x);
* which element each work-item holds, from Triton's definition of ``#ttg.blocked``
  (sizePerThread x threadsPerWarp x warpsPerCTA in ``order``, then repetitions in ``order``);
* the fewest loads: no load serves more (lane, element) pairs than the best legal shape at the
  best aligned position (brute force over every shape and position below), so a plan needs at
  least ``ceil(pairs / most)`` loads; a plan with that many, checked element by element with the
  model above, is minimal.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from verilayout.blockload import Surface, check, plan
from verilayout.cli.main import main
from verilayout.core.linear_layout import LinearLayout
from verilayout.errors import LayoutError
from verilayout.frontends.triton import parse
from verilayout.synth.blockload import Plan, plan_tensor

SUB = 16
ELEM = {"f16": 2, "bf16": 2, "i8": 1, "f32": 4, "i64": 8}


# ----- the hardware, from the reference table ------------------------------------------------

def _pow2(lo, hi):
    return [1 << i for i in range(8) if lo <= 1 << i <= hi]


def legal_shapes():
    """(elem bytes, width, height, array length, mode) of every legal load worth trying.

    Plain and VNNI loads are listed at height 32 only: their lanes do not depend on the height
    (every block fills whole 64-byte registers, 32 or 16 units: a multiple of 16 lanes), so a
    taller load delivers a superset of a shorter one at the same lanes. Transposed loads at
    every height (the padded height moves lanes)."""
    out = []
    plain_w = {1: (4, 64), 2: (2, 32), 4: (1, 16), 8: (1, 8)}
    arrays = {1: (1, 2, 4), 2: (1, 2, 4), 4: (1, 2), 8: (1,)}
    for e, (lo, hi) in plain_w.items():
        for w in _pow2(lo, hi):
            for a in arrays[e]:
                if w * a * e <= 64:
                    out.append((e, w, 32, a, "plain"))
    for e, (lo, hi) in {1: (4, 64), 2: (2, 32)}.items():  # Xe2 VNNI widths
        for w in _pow2(lo, hi):
            for a in (1, 2, 4):
                if w * a * e <= 64:
                    out.append((e, w, 32, a, "vnni"))
    for w in (1, 2, 4, 8):
        for h in range(1, 33):
            out.append((4, w, h, 1, "transpose"))
    for w in (1, 2, 4):
        out.append((8, w, 8, 1, "transpose"))
    return out


def _np2(v):
    return 1 << (v - 1).bit_length()


def lane_bytes(e, w, h, a, mode):
    """Per data byte of a load at the origin: (row, byte column, lane, byte index in lane)."""
    out = []
    if mode == "transpose":
        hp = _np2(h)
        for r in range(h):
            for c in range(w):
                for j in range(e):
                    off = (c * hp + r) * e + j
                    out.append((r, c * e + j, off // e % SUB, off // e // SUB * e + off % e))
        return out
    wp = _np2(w)
    if mode == "vnni":
        k, u = 4 // e, 4
        block = -(-(-(-h // k) * wp * 4) // 64) * 64
    else:
        u = max(2, e)
        block = -(-(h * wp * e) // 64) * 64
    for b in range(a):
        for r in range(h):
            for c in range(w):
                for j in range(e):
                    if mode == "vnni":
                        off = b * block + ((r // k) * wp + c) * 4 + (r % k) * e + j
                    else:
                        off = b * block + (r * wp + c) * e + j
                    unit = off // u
                    out.append((r, (b * w + c) * e + j, unit % SUB, unit // SUB * u + off % u))
    return out


def lane_elements(e, w, h, a, mode, t):
    """{(lane, k): (row, byte column of the element's first byte)}: element k of a lane is its
    bytes k*t .. k*t+t-1, when they are t consecutive bytes of one row."""
    per_lane = {}
    for r, bc, lane, i in lane_bytes(e, w, h, a, mode):
        per_lane[(lane, i)] = (r, bc)
    out = {}
    for (lane, i), (r, bc) in per_lane.items():
        if i % t:
            continue
        if all(per_lane.get((lane, i + j)) == (r, bc + j) for j in range(t)):
            out[(lane, i // t)] = (r, bc)
    return out


# ----- the layouts, from Triton's definition -------------------------------------------------

def blocked_coords(spt, tpw, wpc, order, shape):
    """coords[reg, lane, warp] = (dim0, dim1) of #ttg.blocked (shape a multiple of the tile)."""
    tile = [spt[d] * tpw[d] * wpc[d] for d in (0, 1)]
    reps = [max(1, shape[d] // tile[d]) for d in (0, 1)]
    n_reg = spt[0] * spt[1] * reps[0] * reps[1]
    out = np.zeros((n_reg, tpw[0] * tpw[1], wpc[0] * wpc[1], 2), dtype=np.int64)

    def digits(v, radix):
        idx = [0, 0]
        for d in order:
            idx[d] = v % radix[d]
            v //= radix[d]
        return idx, v

    for reg in range(n_reg):
        s, rest = digits(reg, spt)
        rep, _ = digits(rest, reps)
        for lane in range(tpw[0] * tpw[1]):
            ln, _ = digits(lane, tpw)
            for warp in range(wpc[0] * wpc[1]):
                wp, _ = digits(warp, wpc)
                for d in (0, 1):
                    v = rep[d] * tile[d] + (wp[d] * tpw[d] + ln[d]) * spt[d] + s[d]
                    out[reg, lane, warp, d] = v % shape[d]  # a tile larger than the shape wraps
    return out


def blocked_text(spt, tpw, wpc, order):
    return (f"#ttg.blocked<{{sizePerThread = {spt}, threadsPerWarp = {tpw}, warpsPerCTA = {wpc}, "
            f"order = {order}}}>")


# ----- the brute-force minimum ---------------------------------------------------------------

def most_served(pairs, t):
    """The most needed (lane, row, col) pairs one legal load serves at any legal position
    (x a multiple of 4 bytes and of the load's element size; y any row)."""
    lanes = np.array([p[0] for p in pairs])
    rows = np.array([p[1] for p in pairs])
    cols = np.array([p[2] for p in pairs])
    # per lane, its pairs' rows and byte columns, padded to one width (valid marks the real ones)
    n_lanes = int(lanes.max()) + 1 if lanes.size else 1
    width = max(1, int(np.bincount(lanes, minlength=n_lanes).max()) if lanes.size else 1)
    R = np.zeros((n_lanes, width), dtype=np.int64)
    XB = np.zeros((n_lanes, width), dtype=np.int64)
    valid = np.zeros((n_lanes, width), dtype=bool)
    for ln in range(n_lanes):
        sel = lanes == ln
        k = int(sel.sum())
        R[ln, :k], XB[ln, :k], valid[ln, :k] = rows[sel], cols[sel] * t, True
    best = 0
    for e, w, h, a, mode in legal_shapes():
        cells = lane_elements(e, w, h, a, mode, t)
        if not cells:
            continue
        lane_of = np.array([lane for lane, _ in cells], dtype=np.int64)
        keep = lane_of < n_lanes
        dy_b0 = np.array(list(cells.values()), dtype=np.int64)[keep]
        lane_of = lane_of[keep]
        X = XB[lane_of] - dy_b0[:, 1:2]  # the load's x, in bytes
        ok = valid[lane_of] & (X % max(4, e) == 0)
        y, x = (R[lane_of] - dy_b0[:, 0:1])[ok], X[ok]   # the load's (y, x) serving each pair
        if y.size:   # the most pairs served at one (y, x): count each position (dense index)
            y, x = y - y.min(), x - x.min()
            best = max(best, int(np.bincount(y * (int(x.max()) + 1) + x).max()))
    return best


def memory_pairs(coords, warp, transpose):
    """Distinct (lane, row, col) the warp holds, in memory-view coordinates."""
    c = coords[:, :, warp, :]
    if transpose:
        c = c[..., ::-1]
    return sorted({(lane, int(c[r, lane, 0]), int(c[r, lane, 1]))
                   for r in range(c.shape[0]) for lane in range(c.shape[1])})


def verify_plan(p, coords, warp, t, transpose, mem_shape):
    """Every load legal and every register of every lane receives its element, by the model."""
    legal = {(e, w, a, m) for e, w, _, a, m in legal_shapes()}
    c = coords[:, :, warp, :]
    if transpose:
        c = c[..., ::-1]
    got = {}
    for i, ld in enumerate(p.to_dict()["loads"]):
        mode = "transpose" if ld["transpose"] else "vnni" if ld["vnni"] else "plain"
        e, h = ld["elem_bytes"], ld["height"]
        assert (e, ld["width"], ld["array_length"], mode) in legal, ld
        assert (1 <= h <= 32) and (mode != "transpose" or e == 4 or h == 8), ld
        assert (mode != "vnni" or h >= 4 // e), ld
        assert (ld["x"] * e) % 4 == 0, ld
        s = ld["surface"]
        assert s["base"] % 64 == 0 and s["pitch"] % 16 == 0 and s["pitch"] >= s["width"] >= 64
        for (lane, k), (dy, b0) in lane_elements(e, ld["width"], h, ld["array_length"], mode,
                                                 t).items():
            row, byte = ld["y"] + dy, ld["x"] * e + b0
            if 0 <= row < s["height"] and 0 <= byte and byte + t <= s["width"] and byte % t == 0:
                got[(i, lane, k)] = (row, byte // t)
    for r, row in enumerate(p.shuffle):
        for lane, (i, k) in enumerate(row):
            want = (int(c[r, lane, 0]), int(c[r, lane, 1]))
            assert got.get((i, lane, k)) == want, (r, lane, i, k, want)
    assert tuple(p.memory_shape) == tuple(mem_shape)


# ----- the cases ------------------------------------------------------------------------------

#: name, sizePerThread, threadsPerWarp, warpsPerCTA, order, shape, dtype, memory column-major
CASES = [
    ("row-major vec8 f16", [1, 8], [16, 1], [4, 1], [1, 0], (64, 128), "f16", False),
    ("row-major vec8 bf16", [1, 8], [16, 1], [4, 1], [1, 0], (64, 128), "bf16", False),
    ("row-major vec8 i8", [1, 8], [16, 1], [4, 1], [1, 0], (64, 128), "i8", False),
    ("lanes along rows, 8 rows each f16", [8, 1], [1, 16], [1, 4], [0, 1], (64, 128), "f16", False),
    ("column-major vec8 f16", [8, 1], [1, 16], [1, 4], [0, 1], (64, 128), "f16", True),
    ("column-major f32", [1, 1], [1, 16], [1, 4], [0, 1], (64, 128), "f32", True),
    ("row-major f32", [1, 1], [1, 16], [4, 1], [1, 0], (64, 128), "f32", False),
    ("row-major vec2 f32", [1, 2], [16, 1], [2, 2], [1, 0], (64, 64), "f32", False),
    ("i64", [1, 1], [16, 1], [4, 1], [1, 0], (64, 32), "i64", False),
    ("4 rows of a column i8 (VNNI)", [4, 1], [1, 16], [1, 4], [0, 1], (64, 128), "i8", False),
    ("2 rows of a column bf16", [2, 1], [1, 16], [2, 2], [0, 1], (64, 64), "bf16", False),
]


@pytest.fixture(scope="module")
def minima():
    """Per case: the brute-force lower bound ceil(pairs / most served per load)."""
    out = {}
    for name, spt, tpw, wpc, order, shape, dt, tr in CASES:
        coords = blocked_coords(spt, tpw, wpc, order, shape)
        pairs = memory_pairs(coords, 0, tr)
        most = most_served(pairs, ELEM[dt])
        out[name] = (len(pairs), most, math.ceil(len(pairs) / most))
    return out


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_blocked_plan_is_minimal_and_delivers_every_element(case, minima):
    name, spt, tpw, wpc, order, shape, dt, tr = case
    coords = blocked_coords(spt, tpw, wpc, order, shape)
    text = f"tensor<{shape[0]}x{shape[1]}x{dt}, {blocked_text(spt, tpw, wpc, order)}>"
    # the test's model of #ttg.blocked is the converter's (itself checked against Triton in
    # tests/oracles/test_triton_layouts.py), register for register
    lay = parse(text)
    for reg in range(coords.shape[0]):
        for lane in (0, 5, 15):
            v = lay.apply({"register": reg, "lane": lane, "warp": 0, "block": 0})
            assert (v["dim0"], v["dim1"]) == tuple(coords[reg, lane, 0]), (reg, lane)
    n_pairs, most, least = minima[name]
    p = plan(text, transpose=tr)
    mem = shape[::-1] if tr else shape
    verify_plan(p, coords, 0, ELEM[dt], tr, mem)
    assert len(p.loads) == least, (name, [ld.describe() for ld in p.loads], n_pairs, most)
    assert p.verdict.proved and p.minimal and p.op_idx is None
    assert p.lower_bound == least
    assert check(p, text, warps="all").proved
    # the model is not vacuous: the first register of lane 0 taken from another element fails
    from dataclasses import replace
    rows = [list(r) for r in p.shuffle]
    i, k = rows[0][0]
    rows[0][0] = (i, k + 1)
    with pytest.raises(AssertionError):
        verify_plan(replace(p, shuffle=tuple(tuple(r) for r in rows)), coords, 0, ELEM[dt], tr,
                    mem)


def test_expected_minima_are_what_the_block_shapes_give(minima):
    # spelled out for the first cases, from the table alone:
    # f16/bf16 [1, 8] x [16, 1]: lane l holds row l; a d32 transposed 16r8c load puts row l's
    # 8 dwords (16 f16) into lane l, 256 pairs; 16 rows x 128 cols = 2048 pairs -> 8 loads.
    assert minima["row-major vec8 f16"] == (2048, 256, 8)
    assert minima["row-major vec8 bf16"] == (2048, 256, 8)
    # i8: the same load holds 32 i8 per lane -> 512 pairs, 4 loads.
    assert minima["row-major vec8 i8"] == (2048, 512, 4)
    # f32 row-major, lane l column l, warp w rows w + 4i: a 32-bit 32r16c load (64-byte rows)
    # meets 8 of the warp's rows x 16 columns = 128 pairs; 16 rows x 128 cols -> 16 loads.
    assert minima["row-major f32"] == (2048, 128, 16)


def test_planned_for_other_warps_and_moved_plans_check():
    name, spt, tpw, wpc, order, shape, dt, tr = CASES[0]
    coords = blocked_coords(spt, tpw, wpc, order, shape)
    text = f"tensor<64x128xf16, {blocked_text(spt, tpw, wpc, order)}>"
    p = plan(text, warp=2)
    assert p.warp_origin == (32, 0)
    verify_plan(p, coords, 2, 2, False, shape)


def test_plan_json_round_trip_and_check():
    text = f"tensor<64x128xf16, {blocked_text([1, 8], [16, 1], [4, 1], [1, 0])}>"
    p = plan(text)
    d = json.loads(json.dumps(p.to_dict()))
    assert d["op_idx"] is None and d["inst_shape"] == []
    q = Plan.from_dict(d)
    assert q.loads == p.loads and check(q, text, warps="all").proved
    # a load moved one row down misses row 0: a counterexample, not a proof
    from dataclasses import replace
    bad = replace(q, loads=(q.loads[0].moved(0, 1),) + q.loads[1:])
    v = check(bad, text)
    assert not v.proved and v.counterexample["element"] == [0, 0]


def test_awkward_layout_gets_a_correct_plan_and_honest_minimality():
    # Triton's coalesced layout: lane l holds 8 consecutive f16 of one row (16 bytes); no legal
    # load gives a lane more than 8 bytes of one row, and the lanes of a row follow one another
    # in the load's register image, so many loads are needed.
    spt, tpw, wpc, order, shape = [1, 8], [1, 16], [4, 1], [1, 0], (64, 128)
    coords = blocked_coords(spt, tpw, wpc, order, shape)
    pairs = memory_pairs(coords, 0, False)
    least = math.ceil(len(pairs) / most_served(pairs, 2))
    text = f"tensor<64x128xf16, {blocked_text(spt, tpw, wpc, order)}>"
    p = plan(text, search=False)
    verify_plan(p, coords, 0, 2, False, shape)
    assert p.lower_bound <= least <= len(p.loads)
    assert p.verdict.status == ("proved" if len(p.loads) == p.lower_bound else "unknown")


def test_broadcast_layout_every_lane_holds_the_same_row():
    # a 1-row tensor under threadsPerWarp [16, 1]: all 16 lanes hold row 0 (a broadcast);
    # still planned, element by element right.
    spt, tpw, wpc, order, shape = [1, 8], [16, 1], [1, 1], [1, 0], (1, 64)
    coords = blocked_coords(spt, tpw, wpc, order, shape)
    text = f"tensor<1x64xf16, {blocked_text(spt, tpw, wpc, order)}>"
    p = plan(text, search=False)
    verify_plan(p, coords, 0, 2, False, shape)
    pairs = memory_pairs(coords, 0, False)
    assert len(pairs) == 16 * 64 and len(p.loads) >= math.ceil(len(pairs) / most_served(pairs, 2))


def test_every_lane_and_column_is_reachable_by_some_legal_load():
    # Why no 8/16/32/64-bit layout is undeliverable: for each element size, some legal load
    # puts an element at every column residue into every lane (d32/d64 transposed loads: lane =
    # padded-height x column + row, and y is free). Only the surface can make an element
    # unreachable.
    for t in (1, 2, 4, 8):
        reach = set()
        for e, w, h, a, mode in legal_shapes():
            step = max(4, e)
            for (lane, _), (_, b0) in lane_elements(e, w, h, a, mode, t).items():
                for X in range(0, 8, step):  # x positions in bytes, one period of 8 bytes
                    if (X + b0) % t == 0:
                        reach.add((lane, (X + b0) // t % (8 // t)))
        assert reach == {(lane, r) for lane in range(SUB) for r in range(8 // t)}, t


def test_without_negative_offsets_edge_elements_reach_only_some_lanes():
    # A broadcast 1x64 f32 row (every lane holds all of row 0). With x, y >= 0, element (0, 0)
    # sits at a load's top-left cell, which every legal shape gives to lane 0 (plain: unit 0;
    # VNNI: unit 0; transposed: column 0 row 0 is unit 0), so lane 1 can never receive it.
    for (e, w, h, a, mode) in legal_shapes():
        cells = lane_elements(e, w, h, a, mode, 4)
        assert all(lane == 0 for (lane, _), (dy, b0) in cells.items() if dy == 0 and b0 == 0)
    text = f"tensor<1x64xf32, {blocked_text([1, 8], [16, 1], [1, 1], [1, 0])}>"
    with pytest.raises(LayoutError, match=r"element \(0, 0\) of register 0 of lane 1 cannot be "
                       "delivered to lane 1 .* negative offsets are excluded"):
        plan(text, negative_offsets=False, search=False)
    # with negative offsets it is planned, element by element right
    p = plan(text, search=False)
    verify_plan(p, blocked_coords([1, 8], [16, 1], [1, 1], [1, 0], (1, 64)), 0, 4, False, (1, 64))
    # a layout away from the edges loses nothing: every load of the plan starts at x, y >= 0
    name, spt, tpw, wpc, order, shape, dt, tr = CASES[0]
    q = plan(f"tensor<64x128xf16, {blocked_text(spt, tpw, wpc, order)}>",
             negative_offsets=False)
    assert len(q.loads) == 8 and q.verdict.proved
    assert all(ld.x >= 0 and ld.y >= 0 for ld in q.loads)
    with pytest.raises(LayoutError, match="negative_offsets=False applies to tensor plans"):
        plan("tensor<16x16xf16, #ttg.dot_op<{opIdx = 0, parent = #ttig.dpas<{repeatCount = 8, "
             "systolicDepth = 8, executionSize = 16, opsPerChan = 2, threadsPerWarp = 16, "
             "warpsPerCTA = [1, 1], repCluster = [1, 1]}>, kWidth = 1}>>",
             negative_offsets=False)


def test_undeliverable_elements_are_named():
    text = f"tensor<64x128xf16, {blocked_text([1, 8], [16, 1], [4, 1], [1, 0])}>"
    # the surface holds 32 rows; warp 2 holds rows 32..47
    with pytest.raises(LayoutError, match=r"element \(32, 0\) of register 0 of lane 0 cannot be "
                       r"delivered to lane 0 by any valid 2D block load: .*outside the surface"):
        plan(text, warp=2, surface=Surface(width=256, height=32, pitch=256))
    with pytest.raises(LayoutError, match="16-lane sub-groups; the layout has 32 lanes"):
        plan(f"tensor<64x128xf16, {blocked_text([1, 8], [16, 2], [4, 1], [1, 0])}>")
    with pytest.raises(LayoutError, match="'i4' is 4 bits; 2D block loads move 8-, 16-, 32- or "
                       "64-bit elements"):
        plan(text.replace("xf16", "xi4"))
    with pytest.raises(LayoutError, match="baseline.* DPAS operands only"):
        plan(text, baseline=True)
    with pytest.raises(LayoutError, match="op_idx and inst_shape apply to DPAS operands"):
        plan(text, op_idx=0)
    with pytest.raises(LayoutError, match="registers of a distributed layout.*this layout is not one"):
        plan("tensor<64x128xf16, #ttg.nvmma_shared<{swizzlingByteWidth = 32, transposed = false, "
             "elementBitWidth = 16}>>")
    with pytest.raises(LayoutError, match="give the tensor type"):
        plan(blocked_text([1, 8], [16, 1], [4, 1], [1, 0]))
    lay = LinearLayout({"register": [[0, 1]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0]]},
                       ["dim0", "dim1"])
    with pytest.raises(LayoutError, match="needs op_idx= .* and dtype="):
        plan_tensor(lay)
    assert len(plan_tensor(lay, dtype="f32").loads) == 1


class _Run:
    def __init__(self, rc, out, err):
        self.returncode, self.stdout, self.stderr = rc, out, err


@pytest.fixture
def _cli(capsys):
    def run(*args):
        try:
            rc = main(list(args))
        except SystemExit as e:
            rc = e.code
        out = capsys.readouterr()
        return _Run(rc, out.out, out.err)
    return run


def test_cli_plans_a_blocked_tensor(tmp_path, _cli):
    lay = blocked_text([1, 8], [16, 1], [4, 1], [1, 0])
    r = _cli("blockload", "plan", "--layout", lay, "-t", "tensor<64x128xf16>")
    assert r.returncode == 0, r.stderr
    assert "minimal plan for tensor 64x128xf16, warp 0: 8 loads" in r.stdout
    assert "verdict: proved" in r.stdout
    r = _cli("blockload", "plan", "--layout", lay, "-t", "tensor<64x128xf16>", "--json")
    assert r.returncode == 0 and len(json.loads(r.stdout)["loads"]) == 8
    f = tmp_path / "plan.json"
    f.write_text(r.stdout)
    r = _cli("blockload", "check", "--plan", str(f), "--layout", lay, "-t", "tensor<64x128xf16>",
             "--all-warps")
    assert r.returncode == 0 and r.stdout.startswith("proved"), r.stdout + r.stderr
    awkward = blocked_text([1, 8], [1, 16], [4, 1], [1, 0])
    r = _cli("blockload", "plan", "--layout", awkward, "-t", "tensor<64x128xf16>", "--no-search")
    assert r.returncode == 1 and "verdict: unknown" in r.stdout


@pytest.mark.parametrize("args, message", [
    (["-t", "tensor<64x128xi4>"], "'i4' is 4 bits"),
    (["-t", "tensor<1x64xf32>", "--no-negative-offsets"], "negative offsets are excluded"),
    (["-t", "tensor<64x128xf16>", "--baseline"], "DPAS operands only"),
    (["-t", "tensor<4x64x128xf16>"], "rank"),
    ([], "give the tensor type"),
])
def test_cli_bad_input_exits_2(args, message, _cli):
    lay = blocked_text([1, 8], [16, 1], [4, 1], [1, 0])
    r = _cli("blockload", "plan", "--layout", lay, *args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert message in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_help_names_blocked_layouts(_cli):
    r = _cli("blockload", "plan", "--help")
    assert r.returncode == 0 and "#ttg.blocked" in r.stdout and "--transpose" in r.stdout


# ----- #ttig.subgroup_2d_block: the register layout of a 2D block load -----------------------

#: (name, attribute, shape, dtype, Intel's expected bases for the layout) from
#: intel-xpu-backend-for-triton @ 6c1649935d83, LinearLayoutConversionsTest.cpp (TEST_F names);
#: the same rows as tests/test_upstream_intel.py. The pairs each warp holds are built from these
#: bases here (XOR of the bases of the set bits), not from the converter.
SUBGROUP_2D = [
    ("FP16_32x16x2_M256_N32_K32_A", "#ttig.subgroup_2d_block<{warpsPerCTA = [8, 4], instrShape "
     "= [32, 16], numBlocks=2, order=[1, 0], kWidth=2, threadsPerWarp=16}>", (256, 32), "f16",
     {"register": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 16]],
      "lane": [[0, 1], [0, 2], [0, 4], [0, 8]]}),
    ("FP16_32x32x1_M256_N32_K32_A", "#ttig.subgroup_2d_block<{warpsPerCTA = [8, 4], instrShape "
     "= [32, 32], numBlocks=1, order=[1, 0], kWidth=2, threadsPerWarp=16}>", (256, 32), "f16",
     {"register": [[0, 1], [1, 0], [2, 0], [4, 0], [8, 0], [16, 0]],
      "lane": [[0, 2], [0, 4], [0, 8], [0, 16]]}),
    ("FP32_32x8x2_M256_N128_K32_A", "#ttig.subgroup_2d_block<{warpsPerCTA = [8, 4], instrShape "
     "= [32, 8], numBlocks=2, order=[1, 0], kWidth=4, threadsPerWarp=16}>", (256, 32), "f32",
     {"register": [[2, 0], [4, 0], [8, 0], [16, 0], [0, 8], [0, 16]],
      "lane": [[0, 1], [0, 2], [0, 4], [1, 0]]}),
    ("I8_32x32x1_M64_N128_K32_B", "#ttig.subgroup_2d_block<{warpsPerCTA = [4, 8], instrShape = "
     "[32, 16], numBlocks=1, order=[0, 1], kWidth=1, threadsPerWarp=16}>", (32, 128), "i8",
     {"register": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]],
      "lane": [[0, 1], [0, 2], [0, 4], [0, 8]]}),
]


def _span(bases):
    out = [(0, 0)]
    for b in bases:
        out += [(y ^ b[0], x ^ b[1]) for y, x in out]
    return out


@pytest.mark.parametrize("case", SUBGROUP_2D, ids=[c[0] for c in SUBGROUP_2D])
def test_subgroup_2d_block_layouts_are_planned_minimally(case):
    name, attr, shape, dt, bases = case
    regs, lanes = _span(bases["register"]), _span(bases["lane"])
    # warp 0: coords[reg, lane, 0] = reg part XOR lane part
    coords = np.array([[[[ry ^ ly, rx ^ lx]] for ly, lx in lanes] for ry, rx in regs])
    pairs = memory_pairs(coords, 0, False)
    least = math.ceil(len(pairs) / most_served(pairs, ELEM[dt]))
    p = plan(attr, shape=list(shape), dtype=dt)
    verify_plan(p, coords, 0, ELEM[dt], False, shape)
    assert len(p.loads) == least and p.verdict.proved
    # one instrShape x numBlocks block is one load's worth of data: the 16-bit A tiles are
    # exactly one load (Intel's block for that layout); f32 K = 32 spans two 8x2 blocks
    assert least == {"FP32_32x8x2_M256_N128_K32_A": 2}.get(name, 1)


def test_linear_layout_text_is_planned_minimally():
    # #ttg.linear: element = XOR of the bases of the set bits (its definition). Lane l holds a
    # 4x4 patch: columns 4 (l % 4) .. +3 of rows 4 (l // 4) .. +3.
    reg = [[0, 1], [0, 2], [1, 0], [2, 0]]
    lane = [[0, 4], [0, 8], [4, 0], [8, 0]]
    text = (f"#ttg.linear<{{register = {reg}, lane = {lane}, warp = [], block = []}}>")
    regs, lanes = _span(reg), _span(lane)
    coords = np.array([[[[ry ^ ly, rx ^ lx]] for ly, lx in lanes] for ry, rx in regs])
    pairs = memory_pairs(coords, 0, False)
    least = math.ceil(len(pairs) / most_served(pairs, 2))
    p = plan(text, shape=[16, 16], dtype="f16")
    verify_plan(p, coords, 0, 2, False, (16, 16))
    assert len(p.loads) == least == 4 and p.verdict.proved
