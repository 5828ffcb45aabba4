"""``emit gemm --problem``: the configuration chosen for the problem (tile, stages, raster,
split-K), its cost model against the H100 measurements, and split-K's verification.

Hardware data: ``hwtests/results/h100-2026-11-26-gemm_sweep.txt`` (copied from
/work/shared/hw/gemm_sweep_h100.txt: the emitted GEMM at three tiles per shape, TFLOP/s measured
on an H100 80GB HBM3 with CUDA 13.0).
"""
from __future__ import annotations

import functools
import json
import math
import os
import re
import shutil

import pytest

from verilayout.frontends.names import parse_problem, parse_tile
from verilayout.emit.gemm_plan import GemmManifest, build_gemm_manifest, split_bounds
from verilayout.emit.gemm_select import (Candidate, H100, candidates, choose_gemm, configure,
                                         cost, explain, tile_coords)
from verilayout.errors import LayoutError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWEEP = os.path.join(ROOT, "hwtests", "results", "h100-2026-11-26-gemm_sweep.txt")
NVCC = shutil.which("nvcc") or (os.path.exists("/usr/local/cuda/bin/nvcc") and "/usr/local/cuda/bin/nvcc")
needs_nvcc = pytest.mark.skipif(not NVCC, reason="nvcc (CUDA 12 or newer) is not installed")
#: The shape set of issue 24.
SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (2048, 2048, 2048), (16, 4096, 4096),
          (128, 8192, 8192), (8192, 1024, 8192), (4096, 14336, 4096), (8191, 8193, 4104)]


def _sweep() -> dict:
    """(dtype, M, N, K) -> [(TFLOP/s, tile, stages)], best first, from the measured file."""
    out: dict = {}
    with open(SWEEP, encoding="utf-8") as f:
        for line in f.read().splitlines()[1:]:
            p = line.split()
            if len(p) < 4 or p[3] == "?":
                continue
            _, dt, tile, st = p[0].split("_")
            M, N, K = map(int, p[1].split("x"))
            out.setdefault((dt, M, N, K), []).append((float(p[3]), tile, int(st[1:])))
    return {k: sorted(v, reverse=True) for k, v in out.items()}


def _cand(dt: str, tile: str, stages: int) -> Candidate:
    bm, bn, bk = map(int, tile.split("x"))
    return Candidate(dt, bm, bn, bk, stages)


# ----- the cost model against the measured sweep ----------------------------------------------

def test_the_model_ranks_the_measured_winner_first_where_the_sweep_separates_them():
    """For every shape and dtype of the sweep whose best tile beat the runner-up by >= 5%, the
    model, given the same three configurations (GROUP_M 8, no split, as measured), ranks the
    measured winner first; a configuration the one-consumer rule leaves out was measured slower
    than the winner. Near-ties (2048^3: 1.4% and 2.5%) are not asserted."""
    data = _sweep()
    asserted = 0
    for (dt, M, N, K), rows in data.items():
        if rows[0][0] < 1.05 * rows[1][0]:
            continue
        considered = [r for r in rows if not (r[1].startswith("64x") and M > 64)]
        for r in rows:
            if r not in considered:
                assert r[0] < rows[0][0], (dt, M, N, K, r)
        ranked = sorted(considered, key=lambda r: cost(_cand(dt, r[1], r[2]), M, N, K)["total"])
        assert ranked[0][1:] == rows[0][1:], (dt, M, N, K, ranked, rows)
        asserted += 1
    assert asserted == 12, asserted   # 15 measured shape/dtype rows: 2048^3 x 2 and bf16 M=16 (4.8%) are near-ties


def test_the_modelled_tflops_of_the_measured_large_shapes_are_within_15_percent():
    """Where the kernels are MMA-bound (every shape with M, N >= 1024 and aligned strides),
    the model's TFLOP/s for each measured two-consumer configuration (the 64-row tiles are not
    considered at these M) is within 15% of the measurement."""
    n = 0
    for (dt, M, N, K), rows in _sweep().items():
        if min(M, N) < 1024 or M % 8 or N % 8 or M == 2048:
            continue
        for tflops, tile, st in rows:
            if tile.startswith("64x"):
                continue
            n += 1
            t = cost(_cand(dt, tile, st), M, N, K)["total"] / (H100.clock_ghz * 1e9)
            model = 2.0 * M * N * K / t / 1e12
            assert abs(model / tflops - 1) < 0.15, (dt, M, N, K, tile, model, tflops)
    assert n == 16   # 4 shapes x 2 dtypes x 2 tiles


def test_waves_and_fill_are_the_tile_arithmetic():
    """8192^3 at 128x256: 64 x 32 = 2048 tiles on 132 SMs = 15.5 -> 16 waves, the last
    2048 - 15 * 132 = 68 tiles; 16 x 4096 x 4096 at 64x64, split 2: 64 tiles x 2 = 128 units."""
    t = cost(Candidate("bf16", 128, 256, 64, 4), 8192, 8192, 8192)
    assert (t["tiles"], t["waves"]) == (2048, 16)
    assert math.isclose(t["wave_fill"], 2048 / (16 * 132))
    t = cost(Candidate("bf16", 64, 64, 64, 8, 8, 2), 16, 4096, 4096)
    assert (t["tiles"], t["units"], t["waves"], t["k_tiles_per_unit"]) == (64, 128, 1, 32)


def test_the_choice_is_the_least_modelled_time_of_every_candidate_considered():
    for dt in ("bf16", "e4m3"):
        for M, N, K in SHAPES[:5]:
            c = choose_gemm(M, N, K, dt)
            assert all(c.clocks <= t["total"] for _, t in c.ranked)
            assert c.clocks == cost(c.best, M, N, K)["total"]


def test_candidates_fit_shared_memory_and_registers():
    """Each candidate's ring fits 227 KiB (stages x (BM + BN) x BK x bytes + 16 per stage +
    1024 alignment) and one stage more would not (or it has the 6-stage cap: deeper rings' mbarrier
    protocols are too large to explore); accumulators BN / 2 + 40 registers fit 232."""
    for dt, eb in (("bf16", 2), ("e4m3", 1), ("tf32", 4)):
        ok, _bad = candidates(dt, 16)
        for c in ok:
            ring = lambda s: s * ((c.bm + c.bn) * c.bk * eb + 16) + 1024  # noqa: E731
            assert ring(c.stages) <= 232448
            assert c.stages == 6 or ring(c.stages + 1) > 232448
            assert c.bn // 2 + 40 <= 232


def test_the_one_consumer_rule_applies_above_64_rows():
    _, bad = candidates("bf16", 4096)
    assert any(t.startswith("64x") and "M <= 64" in why for t, why in bad)
    ok, _ = candidates("bf16", 64)
    assert any(c.bm == 64 for c in ok)


def test_tile_coords_visits_every_tile_once_grouped():
    """Brute force: for grids up to 9 x 7 and every raster width, t -> (tm, tn) is a bijection
    and tiles t < G * tiles_n stay in the first G tile rows."""
    for tm_n in range(1, 10):
        for tn_n in range(1, 8):
            for g in (1, 2, 4, 8, 16):
                seen = [tile_coords(t, tm_n, tn_n, g) for t in range(tm_n * tn_n)]
                assert sorted(seen) == [(a, b) for a in range(tm_n) for b in range(tn_n)]
                assert all(a < g for a, _ in seen[:g * tn_n])


def test_split_bounds_partition_k_by_brute_force():
    for splits in range(1, 9):
        for kt in range(1, 70):
            covered = [k for s in range(splits) for k in range(*split_bounds(s, kt, splits))]
            assert covered == list(range(kt))


def test_the_split_obligation_is_proved_and_in_the_manifest():
    m = build_gemm_manifest("bf16", tile=(64, 64, 64), stages=8, splits=2)
    ob = [o for o in m["obligations"] if o["claim"].startswith("split-K")]
    assert len(ob) == 1 and ob[0]["status"] == "proved"
    assert m["tag"].endswith("_k2") and m["splits"] == 2


def test_explain_names_the_choice_the_others_and_the_rejected():
    c = choose_gemm(128, 8192, 8192, "bf16")
    text = explain(c)
    first = text.splitlines()[0]
    assert f"chose {c.best.tile}" in first and f"split-K {c.best.splits}" in first
    assert "* " + f"{c.best.tile:>11}" in text
    assert "rejected 64x" in text and "slower" in text


def test_overrides_keep_the_rest_of_the_choice():
    c = choose_gemm(16, 4096, 4096, "bf16")
    m = configure("bf16", c, tile=(128, 128, 64))
    # 7 stages of (128 + 128) x 64 x 2 + 16 bytes + 1024 fit 232448, 8 do not; the cap is 6
    assert (m["bm"], m["bn"], m["stages"], m["splits"]) == (128, 128, min(7, 6), c.best.splits)
    m = configure("bf16", c, splits=1, group_m=4)
    assert (m["splits"], m["group_m"], m["bm"]) == (1, 4, c.best.bm)


@pytest.mark.parametrize("text", ["16,4096", "a,b,c", "0,1,1", "1,2,3,4"])
def test_bad_problems_are_layout_errors(text):
    with pytest.raises(LayoutError, match="--problem"):
        parse_problem(text)


def test_e4m3_with_k_off_16_bytes_is_refused():
    with pytest.raises(LayoutError, match="multiple of 16"):
        choose_gemm(8191, 8193, 4104, "e4m3")


# ----- the CLI --------------------------------------------------------------------------------

def test_cli_problem_explain_and_json(capsys, tmp_path):
    from verilayout.cli import main
    rc = main(["emit", "gemm", "--dtype", "bf16", "--problem", "16,4096,4096", "--explain",
               "-o", str(tmp_path / "g")])
    out = capsys.readouterr().out
    assert rc == 0 and "chose" in out and "split-K" in out
    assert (tmp_path / "g" / "kernel.cu").exists()
    rc = main(["emit", "gemm", "--dtype", "e4m3", "--problem", "8192,8192,8192", "--json",
               "-o", str(tmp_path / "h")])
    d = json.loads(capsys.readouterr().out)
    assert rc == 0 and d["tile"] == [128, 256, 128] and d["split_k"] == 1


def test_cli_explain_without_problem_is_one_error_line(capsys, tmp_path):
    from verilayout.cli import main
    rc = main(["emit", "gemm", "--dtype", "bf16", "--explain", "-o", str(tmp_path / "g")])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "--problem" in err


# ----- split-K: the emitted kernel and its independent checks ---------------------------------

def _split_gemm():
    from verilayout.emit.cuda_gemm import emit_gemm
    e = emit_gemm("bf16", tile=(128, 64, 64), stages=3, splits=3)
    return e.manifest, e.files["kernel.cu"]


def _check(src: str, man: dict):
    from verilayout.simulate.gemm_check import check_gemm_source
    return check_gemm_source(GemmManifest.from_dict(man), src, host=False)


def _planted_split(old: str, new: str, occurrences: int | None = None) -> list:
    """The independent check's failures on the split-K GEMM whose kernel.cu has ``old`` (present,
    ``occurrences`` times where given) replaced by ``new``."""
    man, src = _split_gemm()
    assert old in src and (occurrences is None or src.count(old) == occurrences)
    return _check(src.replace(old, new), man).failures


def _split_k_says(failures: list, text: str) -> None:
    """The first split-k failure names ``text``."""
    hits = [c for c in failures if c.check == "split-k"]
    assert hits and text in hits[0].message, [c.to_dict() for c in failures]


@needs_nvcc
def test_a_split_k_kernel_passes_every_independent_check():
    man, src = _split_gemm()
    r = _check(src, man)
    assert r.ok, [c.to_dict() for c in r.failures]
    names = {c.check for c in r.checks if c.status == "proved"}
    assert {"split-k", "d-store", "tma", "protocol", "instruction"} <= names


@needs_nvcc
def test_planted_k_slice_summed_twice_is_caught_by_split_k():
    """Slice s starts one K-tile early (s > 0): K-tile kbeg - 1 is summed by two slices."""
    old = "const uint32_t kbeg = (s * k_tiles) / uint32_t(SPLITS), kend"
    failures = _planted_split(old, "const uint32_t kbeg = (s * k_tiles) / uint32_t(SPLITS) - "
                                   "(s > 0u ? 1u : 0u), kend", occurrences=2)
    _split_k_says(failures, "summed twice")


@needs_nvcc
def test_planted_reduction_adding_slot_0_twice_is_caught_by_split_k():
    old = "for (int s = 1; s < SPLITS; ++s) acc += W[size_t(s) * mn + i];"
    _split_k_says(_planted_split(old, old.replace("int s = 1", "int s = 0")), "slot 0 summed 2 times")


@needs_nvcc
def test_planted_partial_sum_to_the_wrong_slot_is_caught():
    failures = _planted_split("D + (size_t(s) * size_t(M) + size_t(r)) * size_t(N) + col",
                              "D + (size_t(s / 2u) * size_t(M) + size_t(r)) * size_t(N) + col")
    assert any(c.check in ("split-k", "d-store") for c in failures), [c.to_dict() for c in failures]


def test_the_reduction_check_without_the_kernel_says_so():
    from verilayout.frontends.ptx import parse_ptx
    from verilayout.simulate.gemm_check import reduce_check
    c = reduce_check(parse_ptx(".version 8.7\n.visible .entry f()\n{\nret;\n}"), 2)
    assert c.status == "counterexample" and re.search("no vl_splitk_reduce", c.message)


# ----- acceptance: every configuration chosen for the shape set builds and passes ---------------

@functools.lru_cache(maxsize=1)   # two parametrizations read it at collection
def _chosen() -> tuple:
    """(dtype, tile, stages, group_m, splits, swap-AB) of every distinct auto-chosen configuration
    over the shape set and bf16, f16, e4m3, tf32 (e4m3 skips K = 4104: 4104 bytes is not
    16-aligned)."""
    seen = []
    for dt in ("bf16", "f16", "e4m3", "tf32"):
        for M, N, K in SHAPES:
            if dt == "e4m3" and K % 16:
                continue
            b = choose_gemm(M, N, K, dt).best
            key = (dt, b.tile, b.stages, b.group_m, b.splits, b.swap)
            if key not in seen:
                seen.append(key)
    return tuple(seen)


def _emitted(cfg):
    from verilayout.emit.cuda_gemm import emit_gemm
    dt, tile, stages, g, s, swap = cfg
    e = emit_gemm(dt, tile=parse_tile(tile), stages=stages, group_m=g, splits=s, swap_ab=swap)
    return e.manifest, e.files["kernel.cu"]


@pytest.mark.slow
@needs_nvcc
@pytest.mark.parametrize("cfg", _chosen(), ids=lambda c: "_".join(map(str, c)))
def test_every_auto_chosen_configuration_has_0_spills_and_passes_the_ptx_checks(cfg):
    from verilayout.simulate.gemm_check import check_gemm_source
    man, src = _emitted(cfg)
    r = check_gemm_source(GemmManifest.from_dict(man), src, host=False)
    assert r.ok, [c.to_dict() for c in r.failures]
    spills = [c for c in r.checks if c.check == "spills"]
    assert spills and spills[0].status == "proved" and "0 bytes spilled" in spills[0].message
    want = {"compile", "spills", "instruction", "tma", "descriptor", "protocol", "d-store"} | \
        ({"split-k"} if cfg[4] > 1 else set()) | \
        ({"tma-store"} if man["store"]["kind"] == "tma" else set())   # the TMA-store epilogue
    assert {c.check for c in r.checks if c.status == "proved"} == want


@pytest.mark.slow
@needs_nvcc
@pytest.mark.parametrize("cfg", _chosen(), ids=lambda c: "_".join(map(str, c)))
def test_every_auto_chosen_configuration_passes_the_host_checks(cfg):
    """The host half of the independent checks (tensor maps through a recording encoder,
    d_row/d_col and tile_coords compiled for the host), apart to keep each test under 60 s."""
    from verilayout.simulate.gemm_check import tensor_maps
    man, src = _emitted(cfg)
    _maps, checks = tensor_maps(src, GemmManifest.from_dict(man))
    assert checks and all(c.status == "proved" for c in checks), [c.to_dict() for c in checks]
    assert {c.check for c in checks} == {"tensor-map", "index-functions"}


def test_a_problem_past_the_kernels_int_is_refused():
    """The emitted kernels take M, N and K as C ``int`` (32-bit): 2^31 does not fit."""
    from verilayout.errors import LayoutError
    assert parse_problem(f"{2**31 - 1},8,16") == (2**31 - 1, 8, 16)
    with pytest.raises(LayoutError, match="below 2\\^31"):
        parse_problem(f"{2**31},8,16")


@pytest.mark.slow
@needs_nvcc
def test_the_cluster_variant_of_the_8192_cubed_choice_passes_the_ptx_checks():
    """The model's 8192^3 bf16 configuration with --cluster 2x1 (B multicast to both CTAs):
    compiled with 0 spills and every check of both CTAs proved, the rings explored together."""
    from verilayout.emit.cuda_gemm import emission_of
    from verilayout.simulate.cluster_check import check_gemm
    man = configure("bf16", choose_gemm(8192, 8192, 8192, "bf16"), cluster=(2, 1))
    assert man["cluster"]["size"] == 2 and man["tag"].endswith("_c2x1")
    r = check_gemm(GemmManifest.from_dict(man), emission_of(man).files["kernel.cu"], host=False, ragged=False)
    assert r.ok, [c.to_dict() for c in r.failures]
    assert {c.check for c in r.checks if c.status == "proved"} == {
        "compile", "spills", "multicast", "expect-tx", "instruction", "tma", "descriptor",
        "d-store", "protocol", "tma-store"}
    assert "0 bytes spilled" in next(c for c in r.checks if c.check == "spills").message


def test_clusters_are_considered_and_explained():
    """A cluster shares one operand: per CTA and stage it loads BM/CN + BN/CM rows of BK, not
    BM + BN (the multicast saving, derived here); --explain lists each shape of the chosen tile."""
    ch = choose_gemm(4096, 4096, 4096, "bf16")
    seen = {c.cluster for c, _t in ch.ranked}
    assert {(1, 1), (2, 1), (1, 2)} <= seen
    for c, t in ch.ranked:
        cm, cn = c.cluster
        assert t["l2_bytes_per_stage"] == (c.bm / cn + c.bn / cm) * c.bk * 2
        assert c.cluster == (1, 1) or c.stages <= 4
    text = explain(ch)
    assert "clusters of the chosen tile" in text and "2x1" in text and "1x2" in text
    # an override keeps the rest of the choice
    m = configure("bf16", ch, cluster=(1, 2))
    assert (m["bm"], m["bn"], m["group_m"]) == (ch.best.bm, ch.best.bn, ch.best.group_m)
    assert (m["cluster"]["m"], m["cluster"]["n"]) == (1, 2)


def test_a_row_stride_off_128_bytes_is_modelled_and_fitted_to_the_measured_shape():
    """8191x8193x4104 bf16 (K x 2 = 8208 bytes: 16-byte aligned as TMA needs, not 128): the
    three measured configurations ran 2.0-2.4x below the aligned model; with the one fitted
    per-stage factor each is within 15% of the measurement, and an aligned K is unaffected."""
    from verilayout.emit.gemm_select import MISALIGNED_FIT
    rows = _sweep()[("bf16", 8191, 8193, 4104)]
    assert len(rows) == 3
    for tflops, tile, st in rows:
        t = cost(_cand("bf16", tile, st), 8191, 8193, 4104)["total"] / (H100.clock_ghz * 1e9)
        assert abs(2.0 * 8191 * 8193 * 4104 / t / 1e12 / tflops - 1) < 0.15, (tile, tflops)
    a = cost(_cand("bf16", "128x256x64", 4), 8192, 8192, 4096)["stage"]
    b = cost(_cand("bf16", "128x256x64", 4), 8192, 8192, 4104)["stage"]
    assert math.isclose(b, a * MISALIGNED_FIT)
    assert "misaligned" in explain(choose_gemm(8191, 8193, 4104, "bf16"))
