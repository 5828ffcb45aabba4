"""The CTA-pair sm_100a GEMM (``build_tcgen05_manifest(..., ctas=2)``): a 256 x BN tile per cluster
of two CTAs with ``tcgen05.mma.cta_group::2``.

Nothing here runs on hardware (no sm_100 GPU): the kernel is compiled by nvcc/ptxas for sm_100a and
checked on its PTX by ``simulate/tcgen05_check.check_pair_source`` and ``simulate/pair_ring``,
which read only the specification from the manifest. Each planted bug is an edit of ``kernel.cu``
and must be caught by the named check.
"""
from __future__ import annotations

import functools
import os
import shutil

import pytest

from planted_gemm import caught
from verilayout.emit.tcgen05_gemm import build_tcgen05_manifest, decode_idesc, render_tcgen05_cuda
from verilayout.errors import LayoutError

NVCC = shutil.which("nvcc") or (os.path.exists("/usr/local/cuda/bin/nvcc") and "/usr/local/cuda/bin/nvcc")
needs_nvcc = pytest.mark.skipif(not NVCC, reason="nvcc (CUDA 12.8 or newer for sm_100a) is not installed")


@functools.lru_cache(maxsize=None)
def _pair(dtype: str = "bf16", bn: int = 128, stages: int = 4):
    man = build_tcgen05_manifest(dtype, tile=(256, bn, 128 // {"bf16": 2, "f16": 2, "e4m3": 1, "tf32": 4}[dtype]),
                                 stages=stages, ctas=2)
    return man, render_tcgen05_cuda(man)


def _check(edit=None):
    from verilayout.simulate.tcgen05_check import check_tcgen05_source
    man, src = _pair()
    if edit is not None:
        new = edit(src)
        assert new != src, "the planted edit did not change kernel.cu"
        src = new
    return check_tcgen05_source(man, src)


@pytest.mark.parametrize("dtype,bn", [("bf16", 128), ("bf16", 256), ("f16", 256), ("e4m3", 128), ("tf32", 256)])
def test_the_pair_instruction_descriptor_matches_the_ptx_isa_table(dtype, bn):
    """PTX ISA 9.7.16 (tcgen05), "Instruction descriptor" for .kind::f16/tf32/f8f6f4: D type at bits
    4-5 (F32 = 1), A type 7-9 and B type 10-12 (kind::f16: F16 0, BF16 1; kind::tf32: TF32 2;
    kind::f8f6f4: E4M3 0), N >> 3 at bits 17-22, M >> 4 at bits 24-28; "Matrix shape": with
    .cta_group::2, M = 256 takes N from 32 to 256 in steps of 16. The value is assembled here from
    that table, not from the emitter."""
    code = {"f16": 0, "bf16": 1, "tf32": 2, "e4m3": 0}[dtype]
    want = (1 << 4) | (code << 7) | (code << 10) | ((bn >> 3) << 17) | ((256 >> 4) << 24)
    man, _ = _pair(dtype, bn)
    assert man.idesc.value == want
    assert 32 <= bn <= 256 and bn % 16 == 0
    kind = {"f16": "f16", "bf16": "f16", "tf32": "tf32", "e4m3": "f8f6f4"}[dtype]
    assert man.instruction == f"tcgen05.mma.cta_group::2.kind::{kind}"
    assert decode_idesc(man.idesc.value)["m_dim"] == 16        # 256 >> 4: fits the 5-bit field
    assert all(o.status == "proved" for o in man.obligations)
    assert man.cta_pair.b_rows_per_cta == bn // 2 and man.b.stage_bytes * 2 == bn * man.bk * man.elem_bytes


def test_bad_pair_configurations_are_layout_errors():
    with pytest.raises(LayoutError, match="--split-k 2: the CTA pair kernel"):
        build_tcgen05_manifest("bf16", tile=(256, 128, 64), ctas=2, splits=2)
    with pytest.raises(LayoutError, match="BM 256"):
        build_tcgen05_manifest("bf16", tile=(128, 128, 64), ctas=2)
    with pytest.raises(LayoutError, match="BN 128/256"):
        build_tcgen05_manifest("bf16", tile=(256, 64, 64), ctas=2)
    with pytest.raises(LayoutError, match="ctas 3"):
        build_tcgen05_manifest("bf16", tile=(256, 128, 64), ctas=3)


@needs_nvcc
def test_the_pair_kernel_compiles_with_0_spills_and_passes_every_independent_check():
    rep = _check()
    status = {(c.check, c.status) for c in rep.checks}
    assert all(c.status == "proved" for c in rep.checks), [c.to_dict() for c in rep.checks if c.status != "proved"]
    for name in ("compile", "spills", "instruction", "descriptor", "tmem", "pair-split", "pair-cover",
                 "pair-ring", "pair-schedule"):
        assert (name, "proved") in status, name
    msg = next(c.message for c in rep.checks if c.check == "instruction")
    assert "M 256" in msg and "cta_group::2" in msg


def _compared(monkeypatch) -> list:
    """Every pair-ring search of the test also run by the reference search (``tests/ring_reference``:
    the same answer and the same states stepped), none reused from an earlier test; the list of
    the searches compared."""
    import verilayout.simulate.pair_ring as pair_ring
    from ring_reference import recording
    compared: list = []
    monkeypatch.setattr(pair_ring, "_MEMO", {})
    monkeypatch.setattr(pair_ring, "explore_mma_rings", recording(compared))
    return compared


@needs_nvcc
def test_planted_commit_mask_naming_one_cta_is_caught_by_pair_ring(monkeypatch):
    """A CTA pair committing to one barrier: the leader's tcgen05.commit multicast mask names only
    itself, so CTA 1's producer and epilogue wait for phases that never complete."""
    compared = _compared(monkeypatch)
    rep = _check(lambda s: s.replace("constexpr uint16_t PAIR_MASK = 3;", "constexpr uint16_t PAIR_MASK = 1;"))
    caught(rep, "pair-ring", "deadlock")
    assert [o for o, _ in compared] == ["deadlock"], compared


@needs_nvcc
def test_planted_peer_loads_completing_on_its_own_barrier_are_caught_by_pair_ring(monkeypatch):
    """CTA 1's TMA bytes complete on its own full barrier (no mapa to the leader's): the leader's
    barrier, expecting both CTAs' bytes, never completes."""
    compared = _compared(monkeypatch)
    rep = _check(lambda s: s.replace("full_leader0 + 8u * stage);", "full0 + 8u * stage);"))
    caught(rep, "pair-ring", "deadlock")
    assert [o for o, _ in compared] == ["deadlock"], compared


@needs_nvcc
def test_planted_epilogue_rows_without_the_cta_rank_are_caught_by_pair_cover():
    """Each CTA's epilogue must store its own 128 rows: without ``rank * BM`` CTA 1 stores rows 0..127."""
    rep = _check(lambda s: s.replace("row0 = tm * TILE_M + rank * BM + quad * 32u;", "row0 = tm * TILE_M + quad * 32u;"))
    caught(rep, "pair-cover", "CTA 1 stores D")


@needs_nvcc
def test_planted_instruction_descriptor_with_m_128_is_caught_by_instruction():
    man, src = _pair()
    v = man.idesc.value
    wrong = (v & ~(0x1F << 24)) | ((128 >> 4) << 24)
    rep = _check(lambda s: s.replace(f"IDESC = {v:#010x}u", f"IDESC = {wrong:#010x}u"))
    caught(rep, "instruction", r"m_dim = 8 \(expected 16\)")


@needs_nvcc
def test_planted_pair_stride_of_ctas_instead_of_pairs_is_caught_by_pair_schedule():
    """The persistent loop strides by gridDim.x (CTAs) instead of gridDim.x / 2 (pairs): tiles are
    skipped once there are more tiles than pairs."""
    rep = _check(lambda s: s.replace("u += pairs)", "u += gridDim.x)"))
    caught(rep, "pair-schedule", "tile")


@pytest.mark.slow
@needs_nvcc
@pytest.mark.parametrize("dtype, tile, epi", [("bf16", (256, 256, 64), dict(out="bf16", bias=True, activation="gelu")),
                                              ("e4m3", (256, 128, 128), {}),
                                              ("tf32", (256, 256, 32), dict(out="f16", activation="relu"))])
def test_pair_kernels_of_other_types_and_fused_epilogues_pass_every_check(dtype, tile, epi):
    """The pair's stored values are checked against out(act(cell + bias)) computed in float64 from
    the chosen TMEM cell values (``tmem_cell_value``) and the bias (``bias_value``)."""
    from verilayout.simulate.tcgen05_check import check_tcgen05_source
    man = build_tcgen05_manifest(dtype, tile=tile, stages=4, ctas=2, **epi)
    rep = check_tcgen05_source(man, render_tcgen05_cuda(man))
    assert all(c.status == "proved" for c in rep.checks), [c.to_dict() for c in rep.checks if c.status != "proved"]
    assert {"pair-ring", "pair-cover", "spills"} <= {c.check for c in rep.checks}


@needs_nvcc
def test_planted_pair_activation_off_is_caught_by_pair_cover():
    """A fused epilogue whose ReLU is dropped stores the negative cells as they are."""
    from verilayout.simulate.tcgen05_check import check_tcgen05_source
    man = build_tcgen05_manifest("bf16", tile=(256, 128, 64), stages=4, ctas=2, out="bf16", activation="relu")
    src = render_tcgen05_cuda(man)
    new = src.replace("return fmaxf(x, 0.0f);", "return x;")
    assert new != src
    rep = check_tcgen05_source(man, new)
    caught(rep, "pair-cover", "expected bf16")


@needs_nvcc
def test_planted_pair_store_buffer_reused_before_wait_group_read_is_caught_by_store_order():
    """A store buffer reused before ``cp.async.bulk.wait_group.read``: caught in both CTAs."""
    rep = _check(lambda s: s.replace("if (lane == 0) bulk_wait_read_1();", ""))
    caught(rep, "store-order", r"before the issuing thread's cp.async.bulk.wait_group.read.*\[CTA 1\]")


def test_explain_gives_the_pair_terms_and_why_it_was_not_chosen(tmp_path, capsys):
    """The per-SM K-tile terms of the 256x256x64 bf16 pair, derived here: tensor 128 x 256 x 64 x 2
    FLOP at 8192 FLOP/clk (B200 datasheet, 2.25 PFLOP/s dense / 148 SMs / 1.85 GHz, rounded) = 512
    clk; shared-memory reads (128 rows of A + 128 of B) x 64 x 2 bytes at 128 B/clk = 256 clk; one
    CTA's 128x256x64 reads (128 + 256) x 128 bytes: 384 clk. Both are within the tensor rate in
    shared memory; from L2 (assumed 64 B/clk/SM, all 148 SMs busy) the one-CTA tile loads
    (128 + 256) x 128 bytes = 768 clk per K-tile, the pair's CTA (128 + 128) x 128 = 512 clk: the
    pair now keeps the tensor rate and is chosen."""
    from verilayout.cli import main
    rc = main(["emit", "gemm", "--arch", "sm_100a", "--dtype", "bf16", "--problem", "8192,8192,8192",
               "--explain", "-o", str(tmp_path / "e")])
    out = capsys.readouterr().out
    assert rc == 0
    line = next(x for x in out.splitlines() if "per SM and K-tile, pair 256x256x64" in x)
    assert "tensor 512, shared-memory reads 256" in line
    assert "2-CTA MMA (tcgen05.mma.cta_group::2" in out and "chosen, 256x256x64" in out
    from verilayout.emit.gemm_select import choose_tcgen05
    terms = {(c.tile, c.cluster): t for c, t in choose_tcgen05(8192, 8192, 8192, "bf16").ranked if c.splits == 1}
    assert terms[("128x256x64", (1, 1))]["l2_per_k"] == (128 + 256) * 64 * 2 / 64
    assert terms[("256x256x64", (1, 1))]["l2_per_k"] == (128 + 128) * 64 * 2 / 64


@needs_nvcc
def test_planted_acc_empty_counting_one_ctas_warps_is_caught_by_pair_ring():
    """The leader's acc_empty expects only 4 arrivals: its own epilogue warps release the stage and
    the MMA writes it while CTA 1's epilogue is still reading (the stage the MMA is writing)."""
    rep = _check(lambda s: s.replace("mbar_init(acc_empty0 + 8u * a, uint32_t(CTAS) * EPI_WARPS);",
                                     "mbar_init(acc_empty0 + 8u * a, EPI_WARPS);"))
    caught(rep, "pair-ring", "writes TMEM columns .* while CTA 1's epilogue warp")
