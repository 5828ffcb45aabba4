"""The sm_100a GEMM on clusters of ``cta_group::1`` CTAs with TMA multicast
(``build_tcgen05_manifest(..., cluster=(CM, CN))``, ``emit gemm --arch sm_100a --cluster CMxCN``).

Nothing here runs on hardware (no sm_100 GPU): the kernels are compiled by nvcc/ptxas for sm_100a
and checked on their PTX by ``simulate/mcast_check`` and ``simulate/mcast_ring``, which read only
the specification from the manifest. The expected masks are written out by hand from the cluster's
contract (rank r computes tile (r % CM, r // CM) of its cluster tile; PTX ISA 9.7.9.25: bit i of a
ctaMask names the CTA of %cluster_ctarank i); bytes are computed here from the tile. Each planted bug
is an edit of ``kernel.cu`` and must be caught by the named check.
"""
from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys

import pytest

from planted_gemm import caught
from verilayout.emit.tcgen05_gemm import build_tcgen05_manifest, emit_tcgen05_gemm, render_tcgen05_cuda
from verilayout.errors import LayoutError

NVCC = shutil.which("nvcc") or (os.path.exists("/usr/local/cuda/bin/nvcc") and "/usr/local/cuda/bin/nvcc")
needs_nvcc = pytest.mark.skipif(not NVCC, reason="nvcc (CUDA 12.8 or newer for sm_100a) is not installed")
EB = {"bf16": 2, "f16": 2, "e4m3": 1, "tf32": 4}

#: Per shape, by hand: rank -> (CTAs sharing its A M block, CTAs sharing its B N block) as masks.
#: 2x1: ranks 0, 1 at M places 0, 1 (one N block); 1x2: at N places 0, 1; 2x2: rank r at (r % 2,
#: r // 2); 4x1: four M places; 1x4: four N places.
HAND_MASKS = {
    (2, 1): ([0b01, 0b10], [0b11, 0b11]),
    (1, 2): ([0b11, 0b11], [0b01, 0b10]),
    (2, 2): ([0b0101, 0b1010, 0b0101, 0b1010], [0b0011, 0b0011, 0b1100, 0b1100]),
    (4, 1): ([0b0001, 0b0010, 0b0100, 0b1000], [0b1111] * 4),
    (1, 4): ([0b1111] * 4, [0b0001, 0b0010, 0b0100, 0b1000]),
}


@functools.lru_cache(maxsize=None)
def _kernel(shape=(2, 2), dtype="bf16", bn=128, stages=2):
    man = build_tcgen05_manifest(dtype, tile=(128, bn, 128 // EB[dtype]), stages=stages, cluster=shape)
    return man, render_tcgen05_cuda(man)


#: (outcome, states) of each mcast-ring search compared with the reference search (tests/mcast_reference).
COMPARED: list = []


def _check(shape=(2, 2), edit=None, **kw):
    """The report of ``check_sm100_source``, each of its mcast-ring searches of at most 20000
    states also run by the reference search and asserted to agree (``COMPARED``)."""
    from mcast_reference import compared_check
    man, src = _kernel(shape, **kw)
    if edit is not None:
        new = edit(src)
        assert new != src, "the planted edit did not change kernel.cu"
        src = new
    return compared_check(man, src, COMPARED)


@pytest.mark.parametrize("shape", sorted(HAND_MASKS))
def test_masks_slices_and_release_counts_are_the_hand_derived_ones(shape):
    cm, cn = shape
    bn = 128
    man, src = _kernel(shape, bn=bn)
    a, b = HAND_MASKS[shape]
    peers = [x | y for x, y in zip(a, b)]
    cl = man.cluster
    assert (cl.m, cl.n, cl.size) == (cm, cn, cm * cn)
    assert list(cl.a_masks) == a and list(cl.b_masks) == b and list(cl.peers) == peers
    # each producer's empty barrier: one tcgen05.commit from every CTA it writes into (itself too)
    assert cl.empty_count == bin(peers[0]).count("1") == cm + cn - 1
    assert (cl.a_slice_rows, cl.b_slice_rows) == (128 // cn, bn // cm)
    assert all(o.status == "proved" for o in man.obligations)
    assert f"__cluster_dims__(CLUSTER, 1, 1)" in src and man.tag.endswith(f"_c{cm}x{cn}_sm100a")


@pytest.mark.parametrize("shape,dtype,bn", [((2, 1), "bf16", 256), ((2, 2), "e4m3", 128), ((1, 4), "tf32", 64)])
def test_expect_tx_is_the_whole_stage_and_the_slices_add_up_to_it(shape, dtype, bn):
    cm, cn = shape
    man, _ = _kernel(shape, dtype=dtype, bn=bn)
    bk = 128 // EB[dtype]
    stage = (128 + bn) * bk * EB[dtype]                       # A's 128 rows and B's BN rows of one K-tile
    assert man.tma.tx_bytes == stage
    a_slice, b_slice = (128 // cn) * bk * EB[dtype], (bn // cm) * bk * EB[dtype]
    assert cn * a_slice + cm * b_slice == stage                # what lands in one CTA: every slice once


def test_bad_cluster_configurations_are_one_line_layout_errors():
    with pytest.raises(LayoutError, match=r"--cluster '4x4': expected 1x1, 2x1, 1x2, 2x2, 4x1 or 1x4"):
        build_tcgen05_manifest("bf16", tile=(128, 128, 64), stages=2, cluster=(4, 4))
    with pytest.raises(LayoutError, match="CTA pair kernel"):
        build_tcgen05_manifest("bf16", tile=(256, 128, 64), stages=2, ctas=2, cluster=(1, 2))   # pairs take 2x1, 4x1, 2x2
    with pytest.raises(LayoutError, match="no split-K"):
        build_tcgen05_manifest("bf16", tile=(128, 128, 64), stages=2, splits=2, cluster=(2, 1))


def test_without_a_cluster_the_kernel_has_no_multicast_and_the_manifest_no_cluster():
    e = emit_tcgen05_gemm("bf16", tile=(128, 128, 64), stages=4)
    assert "cluster" not in e.manifest and "multicast" not in e.files["kernel.cu"]
    assert "__cluster_dims__" not in e.files["kernel.cu"]
    assert e.files == emit_tcgen05_gemm("bf16", tile=(128, 128, 64), stages=4, cluster=(1, 1)).files


@needs_nvcc
@pytest.mark.parametrize("shape", [(2, 1), (1, 2), (2, 2), (4, 1)])
def test_cluster_kernels_compile_with_0_spills_and_pass_every_independent_check(shape):
    rep = _check(shape, bn=64 if shape == (4, 1) else 128)
    assert all(c.status == "proved" for c in rep.checks), [c.to_dict() for c in rep.checks if c.status != "proved"]
    names = {c.check for c in rep.checks}
    for name in ("compile", "spills", "multicast", "slices", "expect-tx", "release", "instruction", "descriptor",
                 "tmem", "cluster-cover", "mcast-ring", "cluster-schedule"):
        assert name in names, name
    assert "0 bytes spilled" in next(c.message for c in rep.checks if c.check == "spills")


@needs_nvcc
def test_planted_wrong_cta_mask_is_caught_by_multicast():
    """Rank 0's A multicast names only itself: CTA 2 (same M block in a 2x2 cluster) never gets it."""
    rep = _check(edit=lambda s: s.replace("uint16_t a_mask(uint32_t r) { (void)r; return uint16_t((r == 0u ? 0x5u",
                                          "uint16_t a_mask(uint32_t r) { (void)r; return uint16_t((r == 0u ? 0x1u"))
    caught(rep, "multicast", r"CTA 0's A load .* mask 0x1; .* are 0x5 \(misses CTA 2\)")
    caught(rep, "expect-tx", "CTA 2's producer expects")


@needs_nvcc
def test_planted_slice_loaded_twice_is_caught_by_slices():
    """Every CTA of an N block loads B slice 0 (the slice index left out): slice 0 twice, slice 1 never."""
    rep = _check(edit=lambda s: s.replace("rm * B_SLICE_ROWS", "0u * B_SLICE_ROWS"))
    caught(rep, "slices", "arrives twice")


@needs_nvcc
def test_planted_missing_slice_is_caught_by_slices_and_the_ring():
    """A multicast mask that leaves the loader itself out: its own slice is missing in its stage."""
    rep = _check((2, 1), lambda s: s.replace("int32_t(tn * BN + rm * B_SLICE_ROWS), full, b_mask(rank));",
                                             "int32_t(tn * BN + rm * B_SLICE_ROWS), full, uint16_t(b_mask(rank) & ~1u));"))
    caught(rep, "slices", "arrives never")
    caught(rep, "mcast-ring", "deadlock")
    assert COMPARED and COMPARED[-1][0] == "deadlock"          # the reference search agreed


@needs_nvcc
def test_planted_expect_tx_of_one_slice_is_caught_by_expect_tx_and_the_ring():
    rep = _check((2, 1), lambda s: s.replace("mbar_arrive_expect_tx(full, TX_BYTES);",
                                             "mbar_arrive_expect_tx(full, TX_BYTES / uint32_t(CLUSTER));"))
    man, _ = _kernel((2, 1))
    caught(rep, "expect-tx", f"expects {man.tma.tx_bytes // 2} bytes in iteration 0, {man.tma.tx_bytes} arrive")
    caught(rep, "mcast-ring", "mma-early")
    assert COMPARED and COMPARED[-1][0] == "counterexample"    # the reference search agreed


@needs_nvcc
def test_planted_release_to_one_cta_only_is_caught_by_release_and_the_ring():
    """Each MMA warp commits the freed stage to itself only: its peers' producers never learn it."""
    rep = _check(edit=lambda s: s.replace("mma_commit_mc(empty0 + 8u * stage, peer_mask(rank));",
                                          "mma_commit_mc(empty0 + 8u * stage, uint16_t(1u << rank));"))
    caught(rep, "release", r"CTA 0's commit .* arrives in CTAs \[0\], but CTA 1's producer wrote into it")
    caught(rep, "mcast-ring", "deadlock")


@needs_nvcc
def test_planted_missing_producer_tail_is_caught_by_the_ring_after_exit():
    """Without the producer's tail a peer's last commit can reach a CTA that has finished."""
    rep = _check((2, 1), lambda s: s.replace("for (uint32_t s = 0; s < uint32_t(STAGES); ++s) {   // tail",
                                             "for (uint32_t s = 0; s < 0u; ++s) {   // tail"))
    caught(rep, "mcast-ring", "after-exit")


def test_mcast_ring_finds_a_release_that_misses_a_producer():
    """A hand-made ring of two CTAs, one stage, two iterations: CTA 1 loads into CTA 0's stage, but
    CTA 0's commit releases only itself: CTA 1's producer waits for ever."""
    from verilayout.simulate.mcast_ring import McastLoad, McastSystem, explore_mcast
    from verilayout.simulate.ring import Arrive, Mma, MmaCommit, Wait
    E, F = 8, 0                                                   # empty and full barrier offsets
    prod = lambda x, dests: tuple(a for it in range(2) for a in (
        Wait("wait", (x, E), 1 - it % 2, None), Arrive("arrive", (x, F), 1, 64, None),
        McastLoad("mcast-load", x, it, dests, F, 32, ((32 * x, 32 * x + 32),), None))) + (
        Wait("wait", (x, E), 1, None),)                           # the tail: the last use released
    mma = lambda x, to: tuple(a for it in range(2) for a in (
        Wait("wait", (x, F), it % 2, None), Mma("mma", it, 0, None), MmaCommit("mma-commit", to, 0, None)))
    init = (((0, F), 1), ((0, E), 2), ((1, F), 1), ((1, E), 2))
    good = McastSystem(2, (prod(0, (0, 1)), mma(0, ((0, E), (1, E))), prod(1, (0, 1)), mma(1, ((0, E), (1, E)))),
                       ((0, "producer"), (0, "mma"), (1, "producer"), (1, "mma")), init)
    assert explore_mcast(good, max_states=100000).outcome == "proved"
    bad = McastSystem(2, (prod(0, (0, 1)), mma(0, ((0, E),)), prod(1, (0, 1)), mma(1, ((0, E), (1, E)))),
                      good.roles, init)
    r = explore_mcast(bad, max_states=100000)
    assert r.outcome == "deadlock" and any(p == 2 for p, _ in r.blocked)
    untailed = McastSystem(2, tuple(p[:-1] if r[1] == "producer" else p for p, r in zip(good.prog, good.roles)),
                           good.roles, init)
    assert explore_mcast(untailed, max_states=100000).error[0].what == "after-exit"


def test_selector_chooses_a_cluster_where_the_l2_term_pays_and_explains_it(tmp_path):
    """128 x 8192 x 8192 bf16 (one tile row): the one-CTA 128x64x64 tile loads (128 + 64) x 64 x 2
    = 24 KiB from L2 per K-tile; a 1x2 cluster (two CTAs along N share A) loads (64 + 64) x 64 x 2
    = 16 KiB, a 2x2 cluster (64 + 32) x 64 x 2 = 12 KiB."""
    from verilayout.emit.gemm_select import SM100_CLUSTER_MAX_STAGES, choose_tcgen05
    c = choose_tcgen05(128, 8192, 8192, "bf16")
    by = {(x.cluster, x.tile): t for x, t in c.ranked if x.splits == 1}
    assert by[((1, 1), "128x64x64")]["l2_bytes_per_k"] == (128 + 64) * 64 * 2
    assert by[((1, 2), "128x64x64")]["l2_bytes_per_k"] == (64 + 64) * 64 * 2
    assert by[((2, 2), "128x64x64")]["l2_bytes_per_k"] == (64 + 32) * 64 * 2
    assert c.best.cluster == (1, 2) and c.clocks < by[((1, 1), "128x64x64")]["total"]
    assert all(x.stages <= SM100_CLUSTER_MAX_STAGES[x.cluster[0] * x.cluster[1]] for x, _ in c.ranked if x.cluster != (1, 1))
    out = subprocess.run([sys.executable, "-m", "verilayout.cli", "emit", "gemm", "--arch", "sm_100a", "--dtype",
                          "bf16", "--problem", "128,8192,8192", "--explain", "-o", str(tmp_path / "o")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "clusters (TMA multicast, --cluster CMxCN)" in out.stdout and "assumed" in out.stdout
    m = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert [m["cluster"]["m"], m["cluster"]["n"]] == list(c.best.cluster)


def test_cli_cluster_forces_a_shape_and_refuses_others_in_one_line(tmp_path):
    run = lambda *a: subprocess.run([sys.executable, "-m", "verilayout.cli", "emit", "gemm", "--arch", "sm_100a",
                                     "--dtype", "bf16", *a, "-o", str(tmp_path / "o")], capture_output=True, text=True)
    ok = run("--tile", "128x128x64", "--cluster", "4x1")
    assert ok.returncode == 0 and "cluster 4x1 (TMA multicast)" in ok.stdout
    assert "boxes of 64 x 128 (A) and 64 x 32 (B)" in ok.stdout     # B's 128 rows in 4 slices of 32
    bad = run("--tile", "128x128x64", "--cluster", "4x4")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "2x2, 4x1 or 1x4" in bad.stderr
    helptext = subprocess.run([sys.executable, "-m", "verilayout.cli", "emit", "gemm", "--help"],
                              capture_output=True, text=True).stdout
    assert "2x2" in helptext and "multicast" in helptext
