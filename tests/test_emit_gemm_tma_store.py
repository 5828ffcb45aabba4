"""The TMA-store epilogue of the emitted sm_90a GEMM (registers -> shared in D's orientation and
output type -> ``cp.async.bulk.tensor`` global <- shared) and its ordering, checked on the PTX
independently of the emitter (:meth:`verilayout.simulate.gemm_check.GemmSim.tma_store_checks`).

Oracles: the PTX ISA's rules, restated in the check (a TMA store reads shared bytes its writers
fenced with ``fence.proxy.async`` and a barrier ordered before it; a staging byte is rewritten only
after ``cp.async.bulk.wait_group.read`` retired the store reading it, and a barrier ordered the
wait; every bulk group retired before exit); cuda.h's tensor-map enums for D's map (recorded from
the host code); the D fragment of the PTX ISA for where each staged element lands. Each planted bug
is an edit of the emitted ``kernel.cu`` text written here; the check must name it.
"""
import shutil
from functools import lru_cache

import pytest

from verilayout.emit.gemm_plan import build_gemm_manifest, store_plan
from tests.planted_gemm import caught, check_planted

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc (CUDA 12 or newer) is "
                                "not installed; the independent check compiles kernel.cu")
WAIT = "          if (tid == 0) bulk_wait_read0();          // the last TMA store from this buffer has read it ...\n"
BARRIER = "          epi_sync(c);                              // ... before any thread of the warpgroup rewrites it\n"
FENCE = "          fence_proxy_async();                      // each thread"
DRAIN = "    if (d_tma && tid == 0) bulk_wait0();"


@lru_cache(maxsize=4)
def _emitted(out="f32", swap_ab=False, cluster=(1, 1)):
    from verilayout.emit.cuda_gemm import emit_gemm
    tile = (64, 16, 64) if swap_ab else (128, 64, 64)
    e = emit_gemm("bf16", tile=tile, stages=3, out=out, swap_ab=swap_ab, cluster=cluster,
                  bias=out != "f32", activation="relu" if out != "f32" else "none")
    return e.manifest, e.files["kernel.cu"]


def _check(edit=None, host=False, ragged=False, **cfg):
    return check_planted(*_emitted(**cfg), edit, host, ragged)


_caught = caught


def test_the_store_plan_stages_chunks_of_d_in_the_output_type():
    # 128-byte rows of D per box: 32 f32 or 64 bf16 columns x 64 rows; swap-AB: D's rows are the
    # tile's N (16 here), its columns the 64 rows of a consumer
    p = store_plan(128, 64, "f32", False, 1, 0)
    assert (p["kind"], p["rows"], p["cols"], p["span"], p["chunks"], p["bytes"]) == ("tma", 64, 32, 128, 2, 8192)
    p = store_plan(128, 64, "bf16", False, 1, 0)
    assert (p["cols"], p["chunks"], p["bytes"]) == (64, 1, 8192)
    p = store_plan(64, 16, "f32", True, 1, 0)
    assert (p["rows"], p["cols"], p["boxes"], p["chunks"]) == (16, 64, 2, 1)
    assert store_plan(128, 64, "f32", False, 2, 0)["kind"] == "pointer"      # split-K workspace
    m = build_gemm_manifest("bf16", tile=(128, 64, 64), stages=3)
    assert m["store"]["kind"] == "tma" and m["store"]["offset"] % 1024 == 0
    assert any("TMA-store staging" in o["claim"] and o["status"] == "proved" for o in m["obligations"])


@needs_nvcc
@pytest.mark.parametrize("cfg", [{}, {"out": "bf16"}, {"swap_ab": True}, {"cluster": (2, 1)}],
                         ids=["f32", "bf16_bias_relu", "swap_ab", "cluster_2x1"])
def test_the_tma_store_kernels_pass_every_independent_check(cfg):
    r = _check(host=True, ragged=True, **cfg)
    assert r.ok, [c.to_dict() for c in r.failures]
    proved = {c.check for c in r.checks if c.status == "proved"}
    assert {"tma-store", "d-store", "tensor-map", "spills"} <= proved
    assert any(c.check == "tensor-map" and "tensor map of D" in c.message for c in r.checks)
    assert "0 bytes spilled" in next(c.message for c in r.checks if c.check == "spills")


@needs_nvcc
def test_planted_buffer_reused_before_wait_group_read_is_caught():
    r = _check(lambda s: s.replace(WAIT, ""))
    _caught(r, "tma-store", r"rewrites shared byte 0x[0-9a-f]+ of a staging buffer that the TMA "
            r"store at PTX line \d+ may still be reading: the buffer is reused before "
            r"cp.async.bulk.wait_group.read retired that store")


@needs_nvcc
def test_planted_missing_barrier_after_the_wait_is_caught():
    r = _check(lambda s: s.replace(BARRIER, ""))
    _caught(r, "tma-store", r"its wait_group was not followed by a barrier")


@needs_nvcc
def test_planted_missing_proxy_fence_is_caught():
    r = _check(lambda s: s.replace(FENCE, "          // " + FENCE.strip()))
    _caught(r, "tma-store", r"no fence.proxy.async.shared::cta after the write")


@needs_nvcc
def test_planted_exit_with_a_store_in_flight_is_caught():
    r = _check(lambda s: s.replace(DRAIN, "    // " + DRAIN.strip()))
    _caught(r, "tma-store", r"may exit while a TMA store still reads its staging buffer")


@needs_nvcc
def test_planted_unswizzled_staging_is_caught_by_d_store():
    """The epilogue writes the chunk row-major, without TMA's swizzle: the store puts elements
    at the wrong places of D."""
    r = _check(lambda s: s.replace("return b * EPI_ROWS * EPI_SPAN + (off ^ (((off >> 7) & (EPI_SPAN / 16u - 1u)) << 4));",
                                   "return b * EPI_ROWS * EPI_SPAN + off;"))
    _caught(r, "d-store", r"is stored at D\(\d+, \d+\); the PTX D fragment puts it at D\(")
