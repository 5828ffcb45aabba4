"""Ping-pong consumer warpgroups of the sm_90a GEMM (``emit gemm --schedule pingpong``): two
consumer warpgroups each own whole 64-row tiles (the CTA's units alternate between them) and hand
each other the tensor cores and the epilogue through turn mbarriers, the kernel schedule of
CUTLASS's ``include/cutlass/gemm/kernel/sm90_gemm_tma_warpspecialized_pingpong.hpp`` (MMA turns
and epilogue turns ordered consumer 0, 1, 0, ...; consumer 1 starts a tile later in the ring).

Oracles: the checks of ``simulate.gemm_check`` run on the PTX nvcc writes (the ring, the turn
exploration, each tile's stores for every grid size), sharing nothing with the emitter; the
planted bugs are text edits of ``kernel.cu`` whose effect is derived in each test; the cost
model's ping-pong term against an event simulation of two consumers and one tensor pipe written
here.
"""
from __future__ import annotations

import functools
import json
import random
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from tests.planted_gemm import caught, check_planted
from verilayout.emit.cuda_gemm import emit_gemm, render_gemm_cuda
from verilayout.emit.gemm_plan import MAX_SMEM_BYTES, GemmManifest, build_gemm_manifest
from verilayout.emit.gemm_select import (H100, choose_gemm, configure, emission_for, explain,
                                         pingpong_candidates, pingpong_terms)
from verilayout.errors import LayoutError
from verilayout.simulate.gemm_check import replay_gemm
from verilayout.simulate.independent import compiled_checks


def _emitted(**cfg):
    """The ping-pong emission of ``cfg``: (a fresh copy of its manifest dict, kernel.cu)."""
    text, src = _emission(tuple(sorted(cfg.items())))
    return json.loads(text), src


@functools.lru_cache(maxsize=None)   # one emission per configuration per session
def _emission(cfg: tuple) -> tuple[str, str]:
    e = emit_gemm(schedule="pingpong", **dict(cfg))
    return json.dumps(e.manifest), e.files["kernel.cu"]


def _check(edit=None, host=False, ragged=False, **cfg):
    return check_planted(*_emitted(**cfg), edit, host, ragged)


SMALL = dict(dtype="f16", tile=(64, 64, 64), stages=2)


# ----- the manifest -------------------------------------------------------------------------

def test_the_manifest_names_two_consumers_of_whole_64_row_tiles():
    m = build_gemm_manifest("bf16", tile=(64, 128, 64), stages=4, schedule="pingpong")
    assert m["consumer_schedule"] == "pingpong" and m["tag"].endswith("_pp")
    assert m["consumers"] == 2 and m["threads"] == 3 * 128         # producer + two consumers
    # one consumer warpgroup reads and releases each stage: one lane of each of its 4 warps
    assert m["barriers"]["empty_count"] == 128 // 32
    # the four turn mbarriers (8 bytes each) follow full[4] and empty[4]
    assert m["barriers"]["turn_offset"] == m["barriers"]["offset"] + 2 * 8 * 4
    assert m["barriers"]["turn_count"] == 128                      # a whole warpgroup hands over
    assert len(m["a"]["descriptors"]) == 1                          # one 64-row block of A
    assert m["smem"]["bytes"] + 1024 <= MAX_SMEM_BYTES
    assert {o["status"] for o in m["obligations"]} == {"proved"}


def test_the_cooperative_manifest_has_no_schedule_field_and_no_turns():
    m = build_gemm_manifest("bf16", tile=(128, 128, 64), stages=4)
    assert "consumer_schedule" not in m and "turn_offset" not in m["barriers"]
    src = emit_gemm("bf16", tile=(128, 128, 64), stages=4).files["kernel.cu"]
    assert "TURN_OFFSET" not in src and "mma_turn" not in src


@pytest.mark.parametrize("cfg, what", [
    (dict(tile=(128, 128, 64)), "BM 128 must be 64"),
    (dict(tile=(64, 128, 64), cluster=(2, 1)), "one CTA without swap-AB"),
    (dict(tile=(64, 128, 64), swap_ab=True), "one CTA without swap-AB"),
])
def test_configurations_the_ping_pong_kernel_is_not_written_for_are_refused(cfg, what):
    with pytest.raises(LayoutError, match=what) as e:
        build_gemm_manifest("bf16", stages=3, schedule="pingpong", **cfg)
    assert "\n" not in str(e.value)


def test_an_unknown_schedule_is_refused_in_one_line():
    with pytest.raises(LayoutError, match="--schedule 'zigzag'"):
        build_gemm_manifest("bf16", tile=(64, 128, 64), stages=3, schedule="zigzag")


# ----- every independent check -------------------------------------------------------------

@pytest.mark.parametrize("cfg", [
    SMALL,
    dict(dtype="bf16", tile=(64, 128, 64), stages=4, out="bf16", bias=True, activation="gelu"),
    dict(dtype="e4m3", tile=(64, 128, 128), stages=3, splits=2),
], ids=["f16-64x64", "bf16-epilogue", "e4m3-splitk"])
def test_the_ping_pong_kernels_pass_every_independent_check(cfg):
    r = _check(host=True, ragged=True, **cfg)
    bad = [c.to_dict() for c in r.checks if c.status != "proved"]
    assert not bad, bad
    names = {c.check for c in r.checks}
    assert {"compile", "spills", "protocol", "turn", "cover", "d-store", "descriptor"} <= names


@pytest.mark.parametrize("dtype, out", [("bf16", "bf16"), ("f16", "f32"), ("e4m3", "bf16"),
                                        ("tf32", "f32")])
def test_the_widest_ping_pong_candidates_compile_for_sm_90a_without_spills(dtype, out):
    # the selector's BN 256 candidates at their deepest ring: the most accumulator registers
    for c in [c for c in pingpong_candidates(dtype) if c.bn == 256]:
        src = emit_gemm(dtype, tile=(c.bm, c.bn, c.bk), stages=c.stages, out=out,
                        schedule="pingpong").files["kernel.cu"]
        checks, ptx = compiled_checks(src)
        assert ptx is not None and [x.status for x in checks] == ["proved", "proved"], \
            [x.to_dict() for x in checks]


@pytest.mark.parametrize("problem, dtype", [((1024, 14336, 1024), "e4m3")])
def test_the_configuration_chosen_for_a_problem_passes_every_independent_check(problem, dtype):
    # whichever schedule the model picks (its --explain line says which and why), the kernel
    # written for the choice must pass the checks
    m = configure(dtype, choose_gemm(*problem, dtype))
    e = emission_for(m)
    r = check_planted(m, e.files["kernel.cu"], host=True, ragged=True)
    bad = [c.to_dict() for c in r.checks if c.status != "proved"]
    assert not bad, bad


def test_the_replayed_ping_pong_kernel_computes_a_times_b_transposed_exactly():
    # 150 x 100 with 192 of K: 3 x 2 tiles of 64 x 64 on one CTA, so each consumer takes three
    # (ragged rows and columns included); integer inputs, so the f32 sums are exact
    rng = np.random.default_rng(1)
    A = rng.integers(-3, 4, (150, 192)).astype(float)
    B = rng.integers(-3, 4, (100, 192)).astype(float)
    man, src = _emitted(**SMALL)
    D = replay_gemm(GemmManifest.from_dict(man), src, A, B)
    assert np.array_equal(D, A @ B.T)


def test_a_malformed_ping_pong_manifest_is_refused_in_one_line():
    m = build_gemm_manifest("f16", tile=(64, 64, 64), stages=2, schedule="pingpong")
    del m["barriers"]["turn_offset"]
    with pytest.raises(LayoutError, match="turn_offset"):
        render_gemm_cuda(m)
    m = build_gemm_manifest("f16", tile=(64, 64, 64), stages=2)
    m["consumer_schedule"] = "zigzag"
    with pytest.raises(LayoutError, match="field 'consumer_schedule' is 'zigzag'"):
        render_gemm_cuda(m)


# ----- planted bugs, each caught by name -----------------------------------------------------

def test_planted_both_consumers_entering_the_mma_at_once_is_caught():
    # consumer 1 starts with parity 1 as consumer 0 does: its first turn wait passes on the
    # fresh mbarrier, so it issues wgmmas while consumer 0 holds the turn
    r = _check(lambda s: s.replace("uint32_t turn_mma = c ^ 1u,", "uint32_t turn_mma = 1u,"), **SMALL)
    caught(r, "turn", r"both in their MMA")


def test_planted_both_consumers_in_the_epilogue_at_once_is_caught():
    r = _check(lambda s: s.replace("turn_epi = c ^ 1u;", "turn_epi = 1u;"), **SMALL)
    caught(r, "turn", r"both in their epilogue")


def test_planted_consumer_skipping_its_hand_over_deadlocks():
    # no arrival on the other consumer's MMA turn barrier: consumer 1 waits for ever, and with
    # it every later tile of consumer 0
    r = _check(lambda s: s.replace("      mbar_arrive(mma_turn + 8u * (c ^ 1u));", "      (void)mma_turn;"),
               **SMALL)
    caught(r, "turn", r"deadlock: .*consumer 1 waits for its turn")
    caught(r, "protocol", r"deadlock")


def test_planted_tile_assigned_to_both_consumers_is_caught():
    # unit 0 of every CTA is taken by consumer 1 as well
    r = _check(lambda s: s.replace("if ((j & 1u) != c) {", "if ((j & 1u) != c && j != 0u) {"), **SMALL)
    caught(r, "cover", r"tile \(0, 0\) stored by CTA 0 consumer 0, CTA 0 consumer 1 at grid 1")


def test_planted_skip_without_advancing_the_ring_is_caught():
    # 4 stages, 3 K-tiles per tile (stages + 2 iterations over two tiles' worth): stepping over
    # the other consumer's 3 stages without moving the stage index leaves consumer 0's second
    # tile reading the wrong stages (the phase still flips)
    r = _check(lambda s: s.replace("        stage = (stage + n) % uint32_t(STAGES);\n", ""),
               dtype="f16", tile=(64, 64, 64), stages=4)
    caught(r, "descriptor", r"no TMA filled [AB] for this iteration")


# ----- the cost model -----------------------------------------------------------------------

def _two_consumers(mma: float, rest: float, n: int) -> float:
    """Event simulation: tile k belongs to consumer k % 2; one tensor pipe runs the MMA turns in
    tile order; a consumer's next turn waits for its previous tile's fill and epilogue."""
    pipe, ready = 0.0, [0.0, 0.0]
    for k in range(n):
        q = k % 2
        start = max(pipe, ready[q])
        pipe = start + mma
        ready[q] = pipe + rest
    return max(ready)


def test_the_ping_pong_term_matches_an_event_simulation_of_two_consumers():
    rng = random.Random(7)
    for _ in range(3000):
        mma, fill, epi, n = rng.randint(1, 5000), rng.randint(0, 3000), rng.randint(0, 3000), rng.randint(1, 60)
        assert pingpong_terms(float(mma), float(fill), float(epi), n)["cta"] == \
            _two_consumers(mma, fill + epi, n), (mma, fill, epi, n)


def test_the_model_refuses_ping_pong_at_8192_cubed_and_says_why():
    c = choose_gemm(8192, 8192, 8192, "bf16")
    assert not c.best.pingpong
    line = next(x for x in explain(c).splitlines() if x.startswith("ping-pong:"))
    assert "refused" in line and "o_one" in line and "assumed for a turn" in line


def test_ping_pong_with_one_tile_per_cta_is_rejected_by_the_rule():
    # 128 x 8192: 2 x 64 = 128 tiles of 64 x 128 on 132 SMs: fewer than two per CTA
    c = choose_gemm(128, 8192, 8192, "bf16")
    assert not c.best.pingpong
    assert any(t.startswith("ping-pong 64x128") and "fewer than 2 tiles per CTA" in why
               for t, why in c.rejected)


def test_the_model_chooses_ping_pong_where_the_cooperative_stage_is_slow():
    # with o_two raised to 2000 clocks a cooperative 128 x 256 x 64 bf16 stage costs
    # max(2 x 512, 512 + 2000) = 2512 clocks per 128 rows, a ping-pong turn's two 64-row stages
    # 2 x (512 + 230) = 1484: ping-pong must win at 8192^3
    hw = replace(H100, o_two=2000.0)
    c = choose_gemm(8192, 8192, 8192, "bf16", hw=hw)
    assert c.best.pingpong and c.tile.startswith("64x")
    line = next(x for x in explain(c, hw=hw).splitlines() if x.startswith("ping-pong:"))
    assert line.startswith("ping-pong: chosen")


# ----- the command line -----------------------------------------------------------------------

def _cli(*args):
    return subprocess.run([sys.executable, "-m", "verilayout.cli", *args], capture_output=True,
                          text=True, timeout=600)


def test_cli_schedule_pingpong_writes_the_ping_pong_kernel(tmp_path):
    p = _cli("emit", "gemm", "--dtype", "bf16", "--tile", "64x128x64", "--schedule", "pingpong",
             "--stages", "3", "-o", str(tmp_path), "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["consumer_schedule"] == "pingpong"
    assert json.loads((tmp_path / "manifest.json").read_text())["consumer_schedule"] == "pingpong"


@pytest.mark.parametrize("dtype,bk", [("bf16", 64), ("e4m3", 128), ("tf32", 32)])
def test_cli_schedule_pingpong_without_a_tile_takes_a_64_row_tile(dtype, bk, tmp_path):
    # each consumer owns a whole 64-row tile; K is one 128-byte swizzle row: 128 / element bytes
    p = _cli("emit", "gemm", "--dtype", dtype, "--schedule", "pingpong", "-o", str(tmp_path))
    assert p.returncode == 0, p.stderr
    m = json.loads((tmp_path / "manifest.json").read_text())
    assert (m["bm"], m["bn"], m["bk"], m["consumer_schedule"]) == (64, 256, bk, "pingpong")


def test_cli_refuses_a_128_row_ping_pong_tile_in_one_line(tmp_path):
    p = _cli("emit", "gemm", "--dtype", "bf16", "--tile", "128x128x64", "--schedule", "pingpong",
             "-o", str(tmp_path))
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip().count("\n") == 0 and "BM 128 must be 64" in p.stderr


def test_cli_explain_says_why_ping_pong_was_refused(tmp_path):
    p = _cli("emit", "gemm", "--dtype", "bf16", "--problem", "4096,4096,4096", "--explain",
             "-o", str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert any(x.startswith("ping-pong: refused") for x in p.stdout.splitlines())
