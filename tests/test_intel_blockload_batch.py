"""2D block loads for rank-3 tensors (a leading batch dim), loaded one batch index at a time.

Triton's Intel backend lowers a rank-3 block load to 2D loads over the last two dims, the batch
index folded into each load's base pointer (``base + batch * baseHeight * pitch``,
``Subgroup2DBlockLoadOpConversion`` in ``third_party/intel/lib/TritonIntelGPUToLLVM/
LoadStoreOpToLLVM.cpp`` of intel-xpu-backend-for-triton): a load covers one batch index for all
its lanes. Everything expected here is derived in this file: which element each work-item holds
(Triton's ``#ttg.blocked`` definition, rank 3, written below), which lane a load gives which
element (the Khronos data layout, ``tests/test_intel_blockload_blocked.py``'s model), and the
fewest loads (per batch index, ``ceil(pairs / most one legal load serves)``; the batch indices'
needs are disjoint, a load serving one, so the total is the sum).
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from verilayout.blockload import BatchedPlan, check, plan
from verilayout.cli.main import main
from verilayout.core.linear_layout import LinearLayout
from verilayout.errors import LayoutError
from verilayout.frontends.triton import parse
from verilayout.synth.blockload import plan_tensor
from tests.test_intel_blockload_blocked import lane_elements, legal_shapes, most_served

BATCHED = ("#ttg.blocked<{sizePerThread = [1, 1, 8], threadsPerWarp = [1, 16, 1], "
           "warpsPerCTA = [2, 2, 1], order = [2, 1, 0]}>")
TEXT = f"tensor<4x64x128xf16, {BATCHED}>"


def blocked3_coords(spt, tpw, wpc, order, shape):
    """coords[reg, lane, warp] = (dim0, dim1, dim2) of a rank-3 #ttg.blocked: sizePerThread x
    threadsPerWarp x warpsPerCTA, each counted in ``order`` (fastest first), then repetitions."""
    tile = [spt[d] * tpw[d] * wpc[d] for d in range(3)]
    reps = [max(1, shape[d] // tile[d]) for d in range(3)]

    def digits(v, radix):
        idx = [0, 0, 0]
        for d in order:
            idx[d] = v % radix[d]
            v //= radix[d]
        return idx, v

    n_reg = math.prod(spt) * math.prod(reps)
    out = np.zeros((n_reg, math.prod(tpw), math.prod(wpc), 3), dtype=np.int64)
    for reg in range(n_reg):
        s, rest = digits(reg, spt)
        rep, _ = digits(rest, reps)
        for lane in range(math.prod(tpw)):
            ln, _ = digits(lane, tpw)
            for warp in range(math.prod(wpc)):
                wp, _ = digits(warp, wpc)
                for d in range(3):
                    out[reg, lane, warp, d] = (rep[d] * tile[d] + (wp[d] * tpw[d] + ln[d]) * spt[d]
                                               + s[d]) % shape[d]
    return out


COORDS = blocked3_coords([1, 1, 8], [1, 16, 1], [2, 2, 1], [2, 1, 0], (4, 64, 128))


def delivered(p, t: int) -> dict:
    """{(load, lane, k): (row, col)} of one batch index's loads, by the test's lane model."""
    got = {}
    legal = {(e, w, a, m) for e, w, _, a, m in legal_shapes()}
    for i, ld in enumerate(p.to_dict()["loads"]):
        mode = "transpose" if ld["transpose"] else "vnni" if ld["vnni"] else "plain"
        e = ld["elem_bytes"]
        assert (e, ld["width"], ld["array_length"], mode) in legal, ld
        s = ld["surface"]
        for (lane, k), (dy, b0) in lane_elements(e, ld["width"], ld["height"], ld["array_length"],
                                                 mode, t).items():
            row, byte = ld["y"] + dy, ld["x"] * e + b0
            if 0 <= row < s["height"] and 0 <= byte and byte + t <= s["width"] and byte % t == 0:
                got[(i, lane, k)] = (row, byte // t)
    return got


@pytest.mark.parametrize("warp", range(4))
def test_each_register_gets_its_element_from_its_batch_indexs_loads(warp):
    p = plan(TEXT, warp=warp)
    assert isinstance(p, BatchedPlan)
    c = COORDS[:, :, warp, :]
    # warpsPerCTA [2, 2, 1]: warp w is batch (w // 2) of the first two; the batch dim (4) is two
    # such tiles, so registers repeat it: batch indices w // 2 and w // 2 + 2
    want_batches = sorted({int(b) for b in c[..., 0].ravel()})
    assert want_batches == [warp // 2, warp // 2 + 2]
    assert list(p.batches) == want_batches
    got = delivered(p.plan, 2)
    for r in range(c.shape[0]):
        b, i = p.registers[r]
        for lane in range(16):
            assert b == c[r, lane, 0], (r, lane)                  # one batch index per register
            load, k = p.plan.shuffle[i][lane]
            assert got[(load, lane, k)] == (int(c[r, lane, 1]), int(c[r, lane, 2])), (r, lane)
    # batch b's loads read its own matrix: base + b * 64 rows * pitch (Triton's batch offset)
    s = p.loads[0].surface
    assert s.height == 64
    for b in p.batches:
        assert p.batch_surface(b).base == s.base + b * 64 * s.pitch


def test_the_fewest_loads_are_the_batch_indices_times_one_indexs_fewest():
    p = plan(TEXT)
    c = COORDS[:, :, 0, :]
    least = 0
    for b in sorted({int(v) for v in c[..., 0].ravel()}):
        pairs = sorted({(lane, int(c[r, lane, 1]), int(c[r, lane, 2]))
                        for r in range(c.shape[0]) for lane in range(16) if c[r, lane, 0] == b})
        least += math.ceil(len(pairs) / most_served(pairs, 2))
    # lane l holds row l (and row l + 32: two row tiles of 2 warps x 16 lanes) of its batch
    # index, 8 f16 per register: each index needs 32 rows x 128 cols = 4096 pairs, and a d32
    # 16r8c transposed load serves at most 256 of them (16 lanes x 16 f16): 16 loads per index
    assert least == 2 * 16
    assert p.total_loads == least and p.plan.lower_bound == 16
    assert p.verdict.proved and p.plan.minimal


def test_json_round_trip_and_check_for_every_warp():
    p = plan(TEXT, warp=3)
    q = BatchedPlan.from_dict(json.loads(json.dumps(p.to_dict())))
    assert q.batches == p.batches and q.registers == p.registers and q.plan.loads == p.plan.loads
    assert check(q, TEXT, warps="all").proved
    d = p.to_dict()
    d["batches"] = [0, 3]                                       # warp 3 holds 1 and 3
    v = check(BatchedPlan.from_dict(d), TEXT, warps=3)
    assert not v.proved and v.counterexample["batches"] == [1, 3]
    d = p.to_dict()
    d["registers"][5] = [3, 5]                                  # register 5 is in batch 1
    v = check(BatchedPlan.from_dict(d), TEXT, warps=3)
    assert not v.proved and v.counterexample["register"] == 5


def test_a_dpas_batch_operand_is_planned_per_batch_index():
    text = ("tensor<4x32x64xf16, #ttg.dot_op<{opIdx = 1, parent = #ttig.dpas<{repeatCount = 8, "
            "systolicDepth = 8, executionSize = 16, opsPerChan = 2, threadsPerWarp = 16, "
            "warpsPerCTA = [2, 2, 2], repCluster = [1, 2, 2]}>, kWidth = 2}>>")
    lay = parse(text)
    for warp in (0, 5):
        p = plan(text, warp=warp)
        got = delivered(p.plan, 2)
        held = set()
        for r in range(lay.in_dims["register"]):
            b, i = p.registers[r]
            for lane in range(16):
                v = lay.apply({"register": r, "lane": lane, "warp": warp, "block": 0})
                held.add(v["dim0"])
                assert v["dim0"] == b
                # a VNNI B load packs pairs of rows: element k of a lane is row 2 (k // 2)-ish;
                # compare through the memory view the plan states (not transposed here)
                load, k = p.plan.shuffle[i][lane]
                assert got[(load, lane, k)] == (v["dim1"], v["dim2"]), (r, lane)
        assert list(p.batches) == sorted(held)
    assert check(plan(text), text, warps="all").proved


def _one_line(capsys, argv, *needles):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err, err
    for n in needles:
        assert n in err, err
    return err


def test_shape_mismatch_message_names_two_different_shapes():
    L = parse(TEXT)
    with pytest.raises(LayoutError) as e:
        plan_tensor(L, dtype="f16", shape=[4, 64, 64])
    assert "[4, 64, 64]" in str(e.value) and "[4, 64, 128]" in str(e.value)
    L2 = LinearLayout({"register": [[0, 1]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0]]},
                      {"dim0": 16, "dim1": 2}, require_surjective=False)
    with pytest.raises(LayoutError) as e:
        plan_tensor(L2, dtype="f16", shape=[16, 2, 1])
    msg = str(e.value)
    assert "[16, 2, 1]" in msg and "[16, 2]" in msg


def test_lanes_moving_the_batch_are_refused_with_the_reason(capsys):
    text = ("#ttg.linear<{register = [[0, 0, 1], [0, 0, 2], [0, 0, 4]], lane = [[0, 1, 0], "
            "[0, 2, 0], [0, 4, 0], [1, 0, 0]], warp = [], block = []}>")
    _one_line(capsys, ["blockload", "plan", "--layout", text, "-t", "tensor<2x8x8xf16>"],
              "lane bit 3", "moves the batch index", "one batch index for all its lanes")


def test_cli_plans_and_checks_a_batched_tensor(capsys, tmp_path):
    assert main(["blockload", "plan", "--layout", BATCHED, "-t", "tensor<4x64x128xf16>"]) == 0
    out = capsys.readouterr().out
    assert "batch indices [0, 2]" in out and "32 in all" in out
    assert main(["blockload", "plan", "--layout", BATCHED, "-t", "tensor<4x64x128xf16>",
                 "--json"]) == 0
    path = tmp_path / "p.json"
    path.write_text(capsys.readouterr().out)
    assert main(["blockload", "check", "--plan", str(path), "--layout", BATCHED, "-t",
                 "tensor<4x64x128xf16>", "--all-warps"]) == 0
    capsys.readouterr()
    _one_line(capsys, ["blockload", "check", "--plan", str(path), "--layout", BATCHED, "-t",
                       "tensor<8x64x128xf16>"], "[4, 64, 128]", "[8, 64, 128]")


def test_emit_refuses_a_batched_operand_with_the_reason(capsys, tmp_path):
    text = ("#ttg.dot_op<{opIdx = 1, parent = #ttig.dpas<{repeatCount = 8, systolicDepth = 8, "
            "executionSize = 16, opsPerChan = 2, threadsPerWarp = 16, warpsPerCTA = [2, 2, 2], "
            "repCluster = [1, 2, 2]}>, kWidth = 2}>")
    _one_line(capsys, ["emit", "blockload", "--layout", text, "-t", "tensor<4x32x64xf16>", "-o",
                       str(tmp_path / "o")], "rank-2 operand", "dim2")
