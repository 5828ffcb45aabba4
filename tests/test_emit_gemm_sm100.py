"""``emit gemm --arch sm_100a``: the Blackwell GEMM (tcgen05.mma, TMEM accumulator, TMA).

It cannot run here (no sm_100 GPU): these tests compile it with ptxas for sm_100a and check its
PTX (:mod:`verilayout.simulate.tcgen05_check`). The instruction-descriptor oracle is CUTLASS's
``cute/arch/mma_sm100_desc.hpp`` (``UMMA::InstrDescriptor`` bit fields and format enums), read
as text from the CUTLASS wheel.
"""
from __future__ import annotations

import functools
import json
import os
import re
import shutil

import pytest

from verilayout.frontends.names import parse_tile
from verilayout.emit.gemm_select import choose_tcgen05
from verilayout.emit.tcgen05_gemm import build_tcgen05_manifest, emit_tcgen05_gemm
from verilayout.emit.tcgen05_manifest import Tcgen05Manifest
from verilayout.errors import LayoutError
from verilayout.simulate.tcgen05_check import check_tcgen05_source

NVCC = shutil.which("nvcc") or (os.path.exists("/usr/local/cuda/bin/nvcc") and "/usr/local/cuda/bin/nvcc")
needs_nvcc = pytest.mark.skipif(not NVCC, reason="nvcc (CUDA 12.8 or newer for sm_100a) is not installed")
SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (2048, 2048, 2048), (16, 4096, 4096),
          (128, 8192, 8192), (8192, 1024, 8192), (4096, 14336, 4096), (8191, 8193, 4104)]


def _cutlass_header() -> str | None:
    try:
        import cutlass_library
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(cutlass_library.__file__), "source", "include", "cute",
                        "arch", "mma_sm100_desc.hpp")
    return open(path, encoding="utf-8").read() if os.path.exists(path) else None


def _cutlass_idesc(dtype: str, n: int) -> int:
    """UMMA::InstrDescriptor of CUTLASS for M = 128, N = n, K-major A and B, f32 D: the bit
    offsets summed from the field widths in declaration order, the codes from its enums."""
    text = _cutlass_header()
    body = text[text.index("union InstrDescriptor\n"):]
    body = body[body.index("struct {"):body.index("};")]
    off, fields = 0, {}
    for name, width in re.findall(r"(\w*)\s*:\s*(\d+)\s*[,;]", body):
        if name and name != "uint16_t":
            fields[name.strip("_")] = (off, int(width))
        off += int(width)
    enum = {}
    for ename in ("F16F32Format", "MXF8F6F4Format", "CFormat"):
        blk = text[text.index(f"enum class {ename}"):]
        blk = blk[:blk.index("};")]
        enum[ename] = {k: int(v) for k, v in re.findall(r"(\w+)\s*=\s*(\d+)", blk)}
    code = {"f16": enum["F16F32Format"]["F16"], "bf16": enum["F16F32Format"]["BF16"],
            "tf32": enum["F16F32Format"]["TF32"], "e4m3": enum["MXF8F6F4Format"]["E4M3"]}[dtype]
    vals = {"c_format": enum["CFormat"]["F32"], "a_format": code, "b_format": code,
            "n_dim": n >> 3, "m_dim": 128 >> 4, "a_major": 0, "b_major": 0}
    return sum(v << fields[k][0] for k, v in vals.items())


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", ["f16", "bf16", "tf32", "e4m3"])
@pytest.mark.parametrize("bn", [64, 128, 256])
def test_the_instruction_descriptor_equals_cutlass(dtype, bn):
    if _cutlass_header() is None:
        pytest.fail("the CUTLASS wheel (cutlass_library) with mma_sm100_desc.hpp is the oracle")
    eb = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1}[dtype]
    m = build_tcgen05_manifest(dtype, tile=parse_tile(f"128x{bn}x{128 // eb}"), stages=2)
    assert m.idesc.value == _cutlass_idesc(dtype, bn)


def test_every_obligation_is_proved_and_the_allocation_is_a_power_of_two():
    for dtype, tile in (("bf16", "128x256x64"), ("e4m3", "128x64x128"), ("tf32", "128x128x32")):
        m = build_tcgen05_manifest(dtype, tile=parse_tile(tile), stages=3)
        assert {o.status for o in m.obligations} == {"proved"}
        cols, bn = m.tmem.columns, m.bn
        # two accumulator stages of BN f32 columns; the least power of two >= 32 holding them
        assert cols >= max(32, 2 * bn) and cols & (cols - 1) == 0 and cols < 2 * max(32, 2 * bn)


def test_bad_sm100_tiles_are_layout_errors():
    with pytest.raises(LayoutError, match="BM 128"):
        build_tcgen05_manifest("bf16", tile=(64, 128, 64))


@functools.lru_cache(maxsize=None)   # one emission per configuration per session (immutable results)
def _kernel(dtype="bf16", tile=(128, 128, 64), stages=3, splits=1, **epi):
    e = emit_tcgen05_gemm(dtype, tile=parse_tile(tile), stages=stages, splits=splits, **epi)
    return Tcgen05Manifest.from_dict(json.loads(e.files["manifest.json"])), e.files["kernel.cu"]


def _planted(old: str, new: str, check: str, *kernel, **options):
    """The failures named ``check`` of the checks of ``kernel.cu`` (``_kernel(*kernel, **options)``)
    with ``old`` replaced by ``new``, and the report; ``old`` must be in the file."""
    man, src = _kernel(*kernel, **options)
    assert old in src, "the planted edit is not in kernel.cu"
    r = check_tcgen05_source(man, src.replace(old, new))
    return [c for c in r.failures if c.check == check], r


@needs_nvcc
def test_the_sm100_kernel_passes_every_independent_check_with_0_spills(monkeypatch):
    compared = _compared(monkeypatch)
    man, src = _kernel()
    r = check_tcgen05_source(man, src)
    assert [o for o, _ in compared] == ["proved"], compared        # its acc-ring, both searches
    assert r.ok, [c.to_dict() for c in r.failures]
    assert {c.check for c in r.checks} == {"compile", "spills", "tma", "instruction", "descriptor",
                                           "tmem", "d-store", "protocol", "acc-ring", "schedule",
                                           "store-order", "smem-banks"}
    assert any("0 bytes spilled" in c.message for c in r.checks if c.check == "spills")


@needs_nvcc
def test_planted_tmem_column_off_by_one_is_caught_by_tmem():
    old = "tmem + ((quad * 32u) << 16) + acc_col + c * uint32_t(LD_NUM)"
    hits, r = _planted(old, old + " + 1u", "tmem")
    assert hits and "column" in hits[0].message, [c.to_dict() for c in r.failures]


@needs_nvcc
def test_planted_tmem_lane_of_another_warp_is_caught_by_tmem():
    old = "tmem + ((quad * 32u) << 16)"
    hits, r = _planted(old, "tmem + (((quad ^ 1u) * 32u) << 16)", "tmem")
    assert hits and "may reach only" in hits[0].message, [c.to_dict() for c in r.failures]


@needs_nvcc
def test_planted_instruction_descriptor_n_is_caught():
    man, src = _kernel()
    v = man.idesc.value
    bad = v ^ (1 << 18)                      # N field (bits 17-22) changed
    assert f"IDESC = {v:#010x}u" in src
    r = check_tcgen05_source(man, src.replace(f"IDESC = {v:#010x}u", f"IDESC = {bad:#010x}u"))
    hits = [c for c in r.failures if c.check == "instruction"]
    assert hits and "n_dim" in hits[0].message, [c.to_dict() for c in r.failures]


@needs_nvcc
def test_planted_descriptor_of_the_wrong_stage_is_caught():
    man, src = _kernel()
    old = "with_start(desc_b0(kb), base + B_OFFSET + stage * B_STAGE_BYTES)"
    assert old in src
    r = check_tcgen05_source(man, src.replace(old, "with_start(desc_b0(kb), base + B_OFFSET)"))
    assert any(c.check == "descriptor" for c in r.failures), [c.to_dict() for c in r.failures]


def test_the_sm100_readme_says_it_cannot_run_here(tmp_path, capsys):
    from verilayout.cli import main
    rc = main(["emit", "gemm", "--arch", "sm_100a", "--dtype", "bf16", "--problem", "16,4096,4096",
               "--explain", "-o", str(tmp_path / "b")])
    out = capsys.readouterr().out
    assert rc == 0 and "unmeasured" in out
    assert "Not run" in (tmp_path / "b" / "README.md").read_text()
    assert "compute_100a" in (tmp_path / "b" / "Makefile").read_text()


def test_sm100_takes_group_m_for_its_persistent_raster(tmp_path, capsys):
    from verilayout.cli import main
    rc = main(["emit", "gemm", "--arch", "sm_100a", "--dtype", "bf16", "--group-m", "4",
               "-o", str(tmp_path / "b")])
    assert rc == 0 and "GROUP_M 4 tile rows" in capsys.readouterr().out
    assert "constexpr int GROUP_M = 4;" in (tmp_path / "b" / "kernel.cu").read_text()
    rc = main(["emit", "gemm", "--arch", "sm_100a", "--dtype", "bf16", "--group-m", "0",
               "-o", str(tmp_path / "c")])
    assert rc == 2 and "--group-m 0" in capsys.readouterr().err


def _chosen() -> list:
    seen = []
    for dt in ("bf16", "f16", "e4m3", "tf32"):
        for M, N, K in SHAPES:
            if dt == "e4m3" and K % 16:
                continue
            b = choose_tcgen05(M, N, K, dt).best
            if (dt, b.tile, b.stages, b.splits, b.cluster) not in seen:
                seen.append((dt, b.tile, b.stages, b.splits, b.cluster))
    return seen


@pytest.mark.slow
@needs_nvcc
@pytest.mark.parametrize("cfg", _chosen(), ids=lambda c: "_".join(map(str, c)))
def test_every_auto_chosen_sm100_configuration_has_0_spills_and_passes(cfg):
    from verilayout.emit.tcgen05_gemm import render_tcgen05_cuda
    from verilayout.simulate.mcast_check import check_sm100_source
    dt, tile, stages, splits, cluster = cfg             # a 256-row tile is a CTA pair's
    man = build_tcgen05_manifest(dt, tile=parse_tile(tile), stages=stages, splits=splits,
                                 ctas=2 if tile.startswith("256x") else 1, cluster=cluster)
    r = check_sm100_source(man, render_tcgen05_cuda(man))
    assert r.ok, [c.to_dict() for c in r.failures]
    assert any("0 bytes spilled" in c.message for c in r.checks if c.check == "spills")


# ----- the sm_100a ring as a transition system (TMA thread, MMA thread, tcgen05.commit) ------------

@needs_nvcc
def test_planted_commit_on_the_full_barrier_is_caught_by_protocol():
    """tcgen05.commit arrives on the stage's full barrier instead of its empty one: that arrival
    completes a later phase of the full barrier early (the MMA thread then reads a stage before its
    bytes land), or the producer is never released -- the exploration names it."""
    old = "mma_commit(empty0 + 8u * stage);"
    hits, r = _planted(old, "mma_commit(full0 + 8u * stage);", "protocol")
    assert hits and re.search(r"deadlock|more arrivals|reads stage buffer \S+ before",
                              hits[0].message), \
        [c.to_dict() for c in r.failures]


@needs_nvcc
def test_planted_mma_before_the_full_barrier_is_caught_by_protocol():
    """The MMA thread skips its wait on the full barrier: it reads a stage before its TMA landed."""
    man, src = _kernel()
    old = "          mbar_wait(full0 + 8u * stage, phase);\n          tc_fence_after();"
    assert old in src
    r = check_tcgen05_source(man, src.replace(old, "          tc_fence_after();"))
    assert any(c.check in ("protocol", "descriptor") for c in r.failures), \
        [c.to_dict() for c in r.failures]
    assert any(c.check == "protocol" and "before" in c.message for c in r.failures), \
        [c.to_dict() for c in r.failures]


# ----- split-K and the fused epilogue on sm_100a -----------------------------------------------------

def test_the_sm100_split_k_manifest_proves_its_slices_and_names_the_epilogue():
    m = build_tcgen05_manifest("bf16", tile=(128, 64, 64), stages=4, splits=3, out="bf16", bias=True,
                               activation="silu")
    split = [o for o in m.obligations if o.claim.startswith("split-K")]
    assert len(split) == 1 and split[0].status == "proved"
    assert m.splits == 3 and m.epilogue.where == "reduction kernel"
    with pytest.raises(LayoutError, match="--activation"):
        build_tcgen05_manifest("bf16", tile=(128, 64, 64), stages=4, activation="tanh")
    with pytest.raises(LayoutError, match="--split-k"):
        build_tcgen05_manifest("bf16", tile=(128, 64, 64), stages=4, splits=17)


def test_the_sm100_selector_splits_k_on_the_decode_shape():
    """16x4096x4096 bf16 on 148 SMs, derived by hand from the model's terms (emit/cost_sm100):
    per K-tile max(128 BN 64 2 / 8192, (128 + BN) 64 2 / 128) clocks (tensor rate vs operand
    reads from shared memory), fill 1400, f32 epilogue 128 BN 4 / 64, compulsory DRAM bytes at
    8e12 / 1.85e9 bytes per clock, reduction: workspace read + D written + a 1850-clock launch.
    128x64 split 2: 128 units on 148 SMs, 32 K-tiles x max(128, 192) = 6144; compute 1400 + 6144
    + 512 = 8056 > DRAM (16*4096*2 + 4096*4096*2 + 2*16*4096*4) / 4324.3 = 7911; reduction
    (2 + 1) 16 4096 4 / 4324.3 + 1850 = 2031.9: 10087.9. 128x128 split 3: 96 units, 22 x 256 =
    5632, compute 1400 + 5632 + 1024 = 8056, reduction 4 x 262144 / 4324.3 + 1850: 10148.5."""
    c = choose_tcgen05(16, 4096, 4096, "bf16")
    assert (c.best.tile, c.best.splits) == ("128x64x64", 2)
    bpc = 8e12 / 1.85e9
    assert abs(c.clocks - (8056 + 3 * 16 * 4096 * 4 / bpc + 1850)) < 1
    other = next(t for x, t in c.ranked if (x.tile, x.splits) == ("128x128x64", 3))
    assert abs(other["total"] - (8056 + 4 * 16 * 4096 * 4 / bpc + 1850)) < 1
    assert choose_tcgen05(8192, 8192, 8192, "bf16").best.splits == 1


def test_the_sm100_model_is_never_faster_than_reading_b_once():
    """128x8192x8192 bf16: B alone is 8192 * 8192 * 2 bytes, 16.8 us at 8 TB/s (B200 datasheet);
    the model without a memory term predicted 11.4 us."""
    c = choose_tcgen05(128, 8192, 8192, "bf16")
    assert c.clocks / 1.85e3 >= 8192 * 8192 * 2 / 8e12 * 1e6


def test_explain_shows_the_sm100_features_and_why(tmp_path, capsys):
    from verilayout.cli import main
    rc = main(["emit", "gemm", "--arch", "sm_100a", "--dtype", "bf16", "--problem", "4096,4096,4096",
               "--explain", "-o", str(tmp_path / "e")])
    out = capsys.readouterr().out
    assert rc == 0
    # the model's choice here is the 256x256x64 CTA pair (its halved B loads credited by the L2
    # term): (4096 / 256)^2 = 256 units on 148 / 2 = 74 pairs, ceil(256 / 74) = 4 per CTA; two
    # accumulator stages of 256 columns in a 512-column allocation
    for words in ("persistent grid: 148 CTAs for 256 units (4 per CTA", "warp specialization",
                  "TMEM accumulator double-buffered: 2 x 256 of 512 columns", "grouped raster",
                  "TMA stores", "compute-bound", "2-CTA MMA (tcgen05.mma.cta_group::2", "chosen",
                  "clusters (TMA multicast, --cluster CMxCN)", "cited: NVIDIA B200 datasheet",
                  "assumed, not fitted"):
        assert words in out, words


@pytest.mark.slow
@needs_nvcc
@pytest.mark.parametrize("splits, epi", [(2, dict(out="bf16", bias=True, activation="gelu")),
                                         (3, dict())], ids=["k2_bf16_bias_gelu", "k3_f32"])
def test_sm100_split_k_passes_every_check_with_the_reduction(splits, epi):
    """S = 3 divides by a non-power of two (mul.hi in the PTX); 5 K-tiles in 3 slices."""
    man, src = _kernel(tile=(128, 64, 64), splits=splits, **epi)
    r = check_tcgen05_source(man, src)
    assert r.ok, [c.to_dict() for c in r.failures]
    split = [c.message for c in r.checks if c.check == "split-k"]
    words = f"{epi.get('out', 'f32')}{' + bias' if epi.get('bias') else ''}, {epi.get('activation', 'none')}"
    assert len(split) == 3 and words in split[-1], split   # 2 problems + the reduction
    assert any(f"workspace slot {splits - 1}" in c.message for c in r.checks if c.check == "d-store")
    assert any("0 bytes spilled" in c.message for c in r.checks if c.check == "spills")


@pytest.mark.slow
@needs_nvcc
def test_planted_sm100_slice_summed_twice_is_caught_by_split_k():
    """Slice s > 0 starts one K-tile early: that K-tile is in two slots."""
    man, src = _kernel(tile=(128, 64, 64), splits=2)
    old = "const uint32_t kbeg = (s * k_tiles) / uint32_t(SPLITS), kend"
    assert old in src
    r = check_tcgen05_source(man, src.replace(old, "const uint32_t kbeg = (s * k_tiles) / "
                                              "uint32_t(SPLITS) - (s > 0u ? 1u : 0u), kend"))
    hits = [c for c in r.failures if c.check == "split-k"]
    assert hits and "summed twice" in hits[0].message, [c.to_dict() for c in r.failures]


@pytest.mark.slow
@needs_nvcc
@pytest.mark.parametrize("epi", [dict(out="bf16", bias=True, activation="gelu"),
                                 dict(out="f16", activation="silu"),
                                 dict(out="f32", bias=True, activation="relu")],
                         ids=["bf16_bias_gelu", "f16_silu", "f32_bias_relu"])
def test_sm100_fused_epilogues_pass_with_0_spills(epi):
    man, src = _kernel(tile=(128, 64, 64), **epi)
    r = check_tcgen05_source(man, src)
    assert r.ok, [c.to_dict() for c in r.failures]
    names = {c.check for c in r.checks}
    assert {"epilogue", "d-store", "tmem"} <= names and ("bias" in names) == epi.get("bias", False)
    assert any("0 bytes spilled" in c.message for c in r.checks if c.check == "spills")


@pytest.mark.slow
@needs_nvcc
def test_planted_sm100_bias_read_past_n_is_caught_by_bias():
    """The epilogue runs for every loaded column; the ragged run's N = BN - 5 leaves 5 beyond N."""
    old = "  if (col < uint32_t(N)) v += bias[col];"
    hits, r = _planted(old, "  v += bias[col];", "bias", tile=(128, 64, 64), out="f32", bias=True,
                       activation="none")
    assert hits and "beyond N = 59" in hits[0].message, [c.to_dict() for c in r.failures]


@pytest.mark.slow
@needs_nvcc
def test_planted_sm100_wrong_activation_is_caught_by_epilogue():
    old = "  return 0.5f * x * (1.0f + tanh_approx(u));"
    hits, r = _planted(old, "  (void)u;\n  return fmaxf(x, 0.0f);", "epilogue", tile=(128, 64, 64),
                       out="bf16", activation="gelu")
    assert hits and "expected bf16(gelu(" in hits[0].message, [c.to_dict() for c in r.failures]


@pytest.mark.slow
@needs_nvcc
def test_planted_sm100_tmem_column_off_by_one_in_the_epilogue_is_caught_by_epilogue():
    """With an epilogue the stored value is checked: D(r, c) holds cell (r, c + 1)'s value."""
    man, src = _kernel(tile=(128, 64, 64), out="bf16", bias=True, activation="relu")
    old = "tmem + ((quad * 32u) << 16) + acc_col + c * uint32_t(LD_NUM)"
    r = check_tcgen05_source(man, src.replace(old, old + " + 1u"))
    names = {c.check for c in r.failures}
    assert {"epilogue", "tmem"} <= names, [c.to_dict() for c in r.failures]


def test_the_interpreter_computes_mul_hi_as_the_upper_half_of_the_product():
    """An odd split factor divides by SPLITS with mul.hi (ptxas's reciprocal multiply): the
    interpreter's values against Python's unbounded integers."""
    from verilayout.frontends.ptx import parse_ptx
    from verilayout.simulate.ptx_run import run_threads
    m = parse_ptx(".version 8.7\n.visible .entry f()\n{\nmov.u32 %r1, %tid.x;\n"
                  "mul.hi.u32 %r2, %r1, 1431655766;\nmul.hi.s32 %r3, %r1, -7;\n"
                  "st.global.u32 [%r2], %r3;\nret;\n}")
    tids = [0, 5, 3_000_000_000, 2 ** 32 - 1]
    ev = run_threads(m, "f", threads=tids).events[0]
    assert ev.values["addr"].tolist() == [(t * 1431655766) >> 32 for t in tids]
    signed = [t - 2 ** 32 if t >= 2 ** 31 else t for t in tids]
    assert ev.values["a0"].tolist() == [((t * -7) >> 32) % 2 ** 32 for t in signed]


def test_cli_sm100_split_k_and_epilogue_options(tmp_path, capsys):
    import json
    from verilayout.cli import main
    rc = main(["emit", "gemm", "--arch", "sm_100a", "--dtype", "bf16", "--tile", "128x64x64",
               "--split-k", "2", "--out-dtype", "bf16", "--bias", "--activation", "silu", "--json",
               "-o", str(tmp_path / "b")])
    d = json.loads(capsys.readouterr().out)
    assert rc == 0 and d["split_k"] == 2 and d["epilogue"]["activation"] == "silu"
    assert d["epilogue"]["where"] == "reduction kernel"
    src = (tmp_path / "b" / "kernel.cu").read_text()
    assert "vl_splitk_reduce" in src and "bf16(silu(acc + bias[col]))" in src


@pytest.mark.slow
@needs_nvcc
def test_simulate_of_an_sm100_emission_runs_the_tcgen05_checks(tmp_path, capsys):
    """``verilayout simulate DIR`` of an ``--arch sm_100a`` emission compiles kernel.cu for
    sm_100a and runs the tcgen05 checks (it compiled for sm_90a, where ptxas refuses
    ``tcgen05.alloc``, before)."""
    from verilayout.cli.main import main
    out = str(tmp_path / "g")
    assert main(["emit", "gemm", "--tile", "128x128x64", "--arch", "sm_100a", "-o", out]) == 0
    capsys.readouterr()
    assert main(["simulate", out]) == 0
    text = capsys.readouterr().out
    assert "independent checks proved" in text and "tmem" in text and "sm_90a" not in text


# ----- the persistent kernel: tile scheduler, warp specialization, TMEM accumulator ring ---------

LOOP = "for (uint32_t u = blockIdx.x; u < units; u += gridDim.x)"


def test_the_schedule_formula_covers_every_tile_once_by_brute_force():
    """Brute force written here (not the emitter's obligation): the grouped raster of
    GROUP_M rows (a group's tiles column by column, the rows of a column in turn) enumerated
    directly, then dealt round-robin to every grid of 1 .. tiles + 1 CTAs."""
    from verilayout.emit.tcgen05_gemm import tile_coords
    for g in (1, 2, 3, 8):
        for tiles_m in range(1, 7):
            for tiles_n in range(1, 6):
                order = []
                for first in range(0, tiles_m, g):
                    rows = range(first, min(first + g, tiles_m))
                    order += [(m, n) for n in range(tiles_n) for m in rows]
                tiles = tiles_m * tiles_n
                assert [tile_coords(t, tiles_m, tiles_n, g) for t in range(tiles)] == order
                for grid in range(1, tiles + 2):
                    dealt = [order[u] for b in range(grid) for u in range(b, tiles, grid)]
                    assert sorted(dealt) == sorted(order)


@needs_nvcc
def test_planted_tile_skipped_when_tiles_do_not_divide_the_grid_is_caught_by_schedule():
    """Each CTA takes tiles / grid units (rounded down): at 6 tiles and grid 4 two tiles are
    never loaded; grids that divide 6 still cover every tile."""
    man, src = _kernel()
    assert src.count(LOOP) == 3
    bad = "for (uint32_t i = 0, u = blockIdx.x; i < units / gridDim.x; ++i, u += gridDim.x)"
    r = check_tcgen05_source(man, src.replace(LOOP, bad))
    hits = [c for c in r.failures if c.check == "schedule"]
    assert hits and "loaded by no CTA at grid 4" in hits[0].message, [c.to_dict() for c in r.failures]


@needs_nvcc
def test_planted_epilogue_tile_order_off_is_caught_by_d_store():
    """The epilogue warps walk the tiles in row-major order while the producer walks the
    grouped raster: every value lands in the wrong tile on the 2 x 2 run."""
    man, src = _kernel()
    old = "      tile_coords(u / uint32_t(SPLITS), tiles_m, tiles_n, tm, tn);\n      const uint32_t s = u % uint32_t(SPLITS);\n      const uint32_t kbeg"
    assert src.count(old) == 1
    new = old.replace("tile_coords(u / uint32_t(SPLITS), tiles_m, tiles_n, tm, tn);",
                      "tm = (u / uint32_t(SPLITS)) / tiles_n; tn = (u / uint32_t(SPLITS)) % tiles_n;")
    r = check_tcgen05_source(man, src.replace(old, new))
    hits = [c for c in r.failures if c.check == "d-store"]
    assert hits and "origin" in hits[0].message, [c.to_dict() for c in r.failures]


def _compared(monkeypatch) -> list:
    """Every acc-ring search of the test also run by the reference search (``tests/ring_reference``):
    the same answer and the same states stepped; the list of the searches compared."""
    import verilayout.simulate.tmem_ring as tmem_ring
    from ring_reference import recording
    compared: list = []
    monkeypatch.setattr(tmem_ring, "explore_mma_rings", recording(compared))
    return compared


@needs_nvcc
def test_planted_mma_writing_the_stage_the_epilogue_reads_is_caught_by_acc_ring(monkeypatch):
    """The MMA warp does not wait for acc_empty: tile 2's MMAs may write accumulator stage 0
    while an epilogue warp still reads tile 0 there."""
    compared = _compared(monkeypatch)
    old = "mbar_wait(acc_empty0 + 8u * acc, acc_phase ^ 1u);"
    hits, r = _planted(old, "", "acc-ring")
    assert ("counterexample" in {o for o, _ in compared}), compared
    assert hits and re.search(r"writes TMEM columns 0\.\.127 while epilogue warp \d has not finished "
                              r"reading tile 0", hits[0].message), [c.to_dict() for c in r.failures]


@needs_nvcc
def test_planted_epilogue_reading_the_stage_the_mma_is_writing_is_caught_by_acc_ring(monkeypatch):
    """The epilogue warps read accumulator stage acc ^ 1: the stage the MMA thread fills next."""
    compared = _compared(monkeypatch)
    old = "const uint32_t acc_col = acc * uint32_t(BN);"
    hits, r = _planted(old, "const uint32_t acc_col = (acc ^ 1u) * uint32_t(BN);", "acc-ring")
    assert ("counterexample" in {o for o, _ in compared}), compared
    assert hits and "for tile 0, whose accumulator the MMAs wrote at columns 0..127" in hits[0].message, \
        [c.to_dict() for c in r.failures]


@needs_nvcc
def test_planted_epilogue_skipping_the_acc_full_wait_is_caught_by_acc_ring(monkeypatch):
    compared = _compared(monkeypatch)
    old = "      mbar_wait(acc_full0 + 8u * acc, acc_phase);\n"
    hits, r = _planted(old, "", "acc-ring")
    assert ("counterexample" in {o for o, _ in compared}), compared
    assert hits and "before its MMAs completed" in hits[0].message, [c.to_dict() for c in r.failures]


def test_the_sm100_manifest_declares_the_persistent_warp_specialized_schedule():
    m = build_tcgen05_manifest("bf16", tile=(128, 256, 64), stages=4)
    assert m.threads == 192 and m.tmem.acc_stages == 2 and m.tmem.columns == 512
    assert m.schedule.kind == "persistent" and m.group_m == 8
    sched = [o for o in m.obligations if o.claim.startswith("persistent schedule")]
    assert len(sched) == 1 and sched[0].status == "proved"


# ----- the TMA-store epilogue: D staged in shared memory, stored by cp.async.bulk.tensor ----------

@needs_nvcc
@pytest.mark.parametrize("epi", [dict(), dict(out="bf16", bias=True, activation="relu")], ids=["f32", "bf16_bias_relu"])
def test_the_tma_store_epilogue_passes_store_order_and_d_store(epi):
    """N = BN (a 16-byte multiple of output bytes): D goes through the staging buffers and TMA
    stores; the ragged run (N = BN - 5) through one store per element."""
    man, src = _kernel(**epi)
    assert "cp.async.bulk.tensor.2d.global.shared::cta" in src and man.d_store.kind == "tma"
    r = check_tcgen05_source(man, src)
    assert r.ok, [c.to_dict() for c in r.failures]
    orders = [c for c in r.checks if c.check == "store-order"]
    assert len(orders) == 2 and all(c.status == "proved" for c in orders)
    assert any("(TMA stores)" in c.message for c in r.checks if c.check == "d-store") or epi


@needs_nvcc
def test_planted_store_buffer_reused_before_wait_group_read_is_caught_by_store_order():
    old = "if (lane == 0) bulk_wait_read_1();"
    hits, r = _planted(old, "", "store-order", out="bf16")
    assert hits and "before the issuing thread's cp.async.bulk.wait_group.read waited" in hits[0].message, \
        [c.to_dict() for c in r.failures]


@needs_nvcc
def test_planted_store_without_the_proxy_fence_is_caught_by_store_order():
    man, src = _kernel(out="bf16")
    old = "          fence_proxy_async();"
    assert src.count(old) == 1
    r = check_tcgen05_source(man, src.replace(old, ""))
    hits = [c for c in r.failures if c.check == "store-order"]
    assert hits and "without a fence.proxy.async after the write" in hits[0].message, \
        [c.to_dict() for c in r.failures]


@needs_nvcc
def test_planted_staging_swizzle_off_is_caught_by_d_store():
    """The staged rows unswizzled while the D tensor map says SWIZZLE_64B: the TMA store reads
    the bytes at the swizzled places (hw/nvidia/tma's model) and writes them to the wrong columns."""
    man, src = _kernel()
    old = "((j ^ ((lane * D_ROW_BYTES >> 7) % D_SPAN_CHUNKS)) << 4)"
    assert old in src
    r = check_tcgen05_source(man, src.replace(old, "(j << 4)"))
    assert any(c.check == "d-store" for c in r.failures), [c.to_dict() for c in r.failures]


@needs_nvcc
def test_the_swizzled_staging_writes_are_conflict_free_and_unswizzled_ones_are_not():
    """Bank rule written here (32 banks of 4 bytes, a 16-byte store served 8 lanes at a time):
    unswizzled bf16 rows are 64 bytes apart, so lanes 0, 2, 4, 6 of a quarter-warp write the
    same four banks: 4 wavefronts per quarter, 16 per store instead of 4; the check on the PTX
    must say the swizzled kernel has none and name the unswizzled one."""
    def wavefronts(addrs):
        total = 0
        for q in range(0, 32, 8):
            banks = {}
            for a in addrs[q:q + 8]:
                for w in range(a // 4, a // 4 + 4):
                    banks.setdefault(w % 32, set()).add(w)
            total += max(len(v) for v in banks.values())
        return total
    assert wavefronts([lane * 64 for lane in range(32)]) == 16
    assert wavefronts([lane * 64 + (((lane >> 1) & 3) << 4) for lane in range(32)]) == 4
    man, src = _kernel(out="bf16")
    r = check_tcgen05_source(man, src)
    assert [c.status for c in r.checks if c.check == "smem-banks"] == ["proved"]
    old = "((j ^ ((lane * D_ROW_BYTES >> 7) % D_SPAN_CHUNKS)) << 4)"
    r = check_tcgen05_source(man, src.replace(old, "(j << 4)"))
    bad = [c for c in r.checks if c.check == "smem-banks"]
    assert bad and bad[0].status == "warning" and "16 wavefronts where its bytes need 4" in bad[0].message
