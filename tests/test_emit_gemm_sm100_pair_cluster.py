"""The sm_100a GEMM on clusters of CTA pairs: ``tcgen05.mma.cta_group::2`` with TMA multicast
(``build_tcgen05_manifest(..., ctas=2, cluster=(CM, CN))``, ``emit gemm --arch sm_100a --tile
256xBNxBK --cluster 4x1|2x2``).

Nothing here runs on hardware (no sm_100 GPU): each kernel is compiled once per session by
nvcc/ptxas for sm_100a and checked on its PTX by ``simulate/mcast_check`` and
``simulate/mcast_ring``, which read only the specification from the manifest.

The expected masks and bytes are derived here by hand from the contract: ranks 2k and 2k + 1 are a
pair (PTX ISA 9.7.16: the peer CTA's %cluster_ctarank differs in bit 0) computing one 256 x BN tile,
the pair at place (r % CM // 2, r // CM) of the cluster tile, rank r holding half r % 2 of it (128
rows of A, BN / 2 rows of B); bit i of a ctaMask names the CTA of %cluster_ctarank i (PTX ISA
9.7.9.25). Each planted bug is an edit of ``kernel.cu`` and must be caught by the named check.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from verilayout.emit.tcgen05_gemm import build_tcgen05_manifest, render_tcgen05_cuda
from verilayout.errors import LayoutError
from verilayout.simulate.mcast_ring import McastLoad, McastSystem, explore_mcast
from verilayout.simulate.ring import Arrive, Mma, MmaCommit, Wait

NVCC = shutil.which("nvcc") or (os.path.exists("/usr/local/cuda/bin/nvcc") and "/usr/local/cuda/bin/nvcc")
needs_nvcc = pytest.mark.skipif(not NVCC, reason="nvcc (CUDA 12.8 or newer for sm_100a) is not installed")

#: By hand, BN 128, bf16, BK 64 (128 bytes of K).
#: 4x1: ranks 0..3 along M, pairs {0,1} and {2,3} in one N block. A: no CTA shares a CTA's 128 rows
#: (CN 1) -> own CTA. B: half r % 2 of the N block is held by ranks {0,2} (half 0) and {1,3} (half 1),
#: each loading 64 / 2 = 32 of its 64 rows. Leader 0's pair is written by 0, 1 (themselves) and by 2,
#: 3 (their B halves): commit mask 0b1111; leader 2 likewise; each empty barrier gets 2 commits.
#: 2x2: pairs {0,1} (N block 0) and {2,3} (N block 1) in one M block. A: half r % 2 of the M block
#: (128 rows) is held by {0,2} and {1,3}, each loading 128 / 2 = 64 rows. B: each CTA's 64 rows are
#: its own (one pair per N block). Commits 0b1111 from leaders 0 and 2; 2 per empty barrier.
HAND = {
    (4, 1): dict(a=[0b0001, 0b0010, 0b0100, 0b1000], b=[0b0101, 0b1010, 0b0101, 0b1010],
                 commits=[0b1111, 0, 0b1111, 0], empty=2, a_rows=128, b_rows=32),
    (2, 2): dict(a=[0b0101, 0b1010, 0b0101, 0b1010], b=[0b0001, 0b0010, 0b0100, 0b1000],
                 commits=[0b1111, 0, 0b1111, 0], empty=2, a_rows=64, b_rows=64),
}
#: One CTA's stage: 128 rows of A and 64 of B, 64 bf16 each (2 bytes); a leader expects both CTAs'.
CTA_STAGE = (128 + 64) * 64 * 2
LEADER_EXPECTS = 2 * CTA_STAGE


def _man(shape):
    return build_tcgen05_manifest("bf16", tile=(256, 128, 64), stages=2, ctas=2, cluster=shape)


@pytest.mark.parametrize("shape", sorted(HAND))
def test_plan_masks_commits_and_counts_are_the_hand_derived_ones(shape):
    h, m = HAND[shape], _man(shape)
    cl = m.cluster
    assert (cl.m, cl.n, cl.size) == (*shape, 4) and m.instruction == "tcgen05.mma.cta_group::2.kind::f16"
    assert list(cl.a_masks) == h["a"] and list(cl.b_masks) == h["b"] and list(cl.commits) == h["commits"]
    assert cl.empty_count == h["empty"] and (cl.a_slice_rows, cl.b_slice_rows) == (h["a_rows"], h["b_rows"])
    assert m.tma.tx_bytes == CTA_STAGE                       # per CTA; the leader expects CTAS x that
    assert all(o.status == "proved" for o in m.obligations)
    assert m.tag.endswith(f"_c{shape[0]}x{shape[1]}_2cta_sm100a")


def test_pair_cluster_shapes_and_the_plain_pair():
    with pytest.raises(LayoutError, match="2x1, 4x1 or 2x2"):
        build_tcgen05_manifest("bf16", tile=(256, 128, 64), stages=2, ctas=2, cluster=(1, 2))
    with pytest.raises(LayoutError, match="split-K"):
        build_tcgen05_manifest("bf16", tile=(256, 128, 64), stages=2, ctas=2, cluster=(4, 1), splits=2)
    plain = build_tcgen05_manifest("bf16", tile=(256, 128, 64), stages=2, ctas=2)
    assert build_tcgen05_manifest("bf16", tile=(256, 128, 64), stages=2, ctas=2, cluster=(2, 1)) == plain
    assert plain.cluster is None


@pytest.fixture(scope="session")
def reports():
    """One compile and one check per shape for the whole session (and ptxas's content cache)."""
    out = {}
    for shape in sorted(HAND):
        m = _man(shape)
        out[shape] = (m, _compared_check(m, render_tcgen05_cuda(m)))
    return out


#: (outcome, states) of each mcast-ring search compared with the reference search (tests/mcast_reference).
COMPARED: list = []


def _compared_check(man, src: str):
    """``check_sm100_source``, each mcast-ring search of at most 20000 states also run by the
    reference search and asserted to agree (``COMPARED``)."""
    from mcast_reference import compared_check
    return compared_check(man, src, COMPARED)


@needs_nvcc
@pytest.mark.parametrize("shape", sorted(HAND))
def test_every_independent_check_proves(reports, shape):
    _, r = reports[shape]
    got = {c.check: c for c in r.checks}
    bad = [(c.check, c.status, c.message) for c in r.checks if c.status != "proved"]
    assert not bad
    for name in ("compile", "spills", "multicast", "slices", "expect-tx", "release", "instruction",
                 "descriptor", "tmem", "cluster-cover", "mcast-ring", "cluster-schedule"):
        assert name in got, name
    assert "0 bytes spilled" in got["spills"].message
    assert "M 256" in got["instruction"].message and "cta_group::2" in got["instruction"].message


@needs_nvcc
def test_leaders_expect_both_ctas_stages_on_the_ptx(reports):
    from verilayout.simulate.independent import compiled_checks
    from verilayout.frontends.ptx import parse_ptx
    from verilayout.simulate.mcast_check import _expects, cluster_runs
    m, _ = reports[(4, 1)]
    _, ptx = compiled_checks(render_tcgen05_cuda(m), "sm_100a")
    mod = parse_ptx(ptx)
    entry = next(f for f in mod.functions if "vl_gemm_kernel" in f)
    runs = cluster_runs(mod, entry, 4, (512, 128, 64), threads=range(32))   # one K-tile, one cluster tile
    exp = _expects(runs)
    assert exp == {0: [LEADER_EXPECTS], 2: [LEADER_EXPECTS]}


#: Planted bugs: (shape, name, edit of kernel.cu, the check that must name it).
PLANTED = [
    ((4, 1), "B ctaMask misses the peer pair", ("uint16_t((r == 0u ? 0x5u", "uint16_t((r == 0u ? 0x1u"), "multicast"),
    ((2, 2), "A ctaMask misses the peer pair", ("uint16_t((r == 0u ? 0x5u", "uint16_t((r == 0u ? 0x1u"), "multicast"),
    ((4, 1), "expect_tx on the non-leader CTA", ("if (half == 0u) mbar_arrive_expect_tx",
                                                 "if (half == 1u) mbar_arrive_expect_tx"), "expect-tx"),
    ((2, 2), "release to one pair only", ("uint16_t((r == 0u ? 0xfu", "uint16_t((r == 0u ? 0x3u"), "release"),
    ((4, 1), "a B slice loaded twice", ("(rm / 2u) * B_SLICE_ROWS", "0u * B_SLICE_ROWS"), "slices"),
]


@needs_nvcc
@pytest.mark.parametrize("shape,name,edit,check", PLANTED, ids=[p[1] for p in PLANTED])
def test_planted_bug_is_caught_by_name(reports, shape, name, edit, check):
    m, _ = reports[shape]
    src = render_tcgen05_cuda(m)
    new = src.replace(*edit)
    assert new != src, "the planted edit did not change kernel.cu"
    r = _compared_check(m, new)
    got = {c.check: c for c in r.checks if c.status == "counterexample"}
    assert check in got, [(c.check, c.status) for c in r.checks]


def _leader_reads_both(landed_peer_first: bool):
    """By hand: CTA 0 (leader) and CTA 1 (peer) each load their half of one stage (1 K iteration),
    the bytes of both completing on the leader's full barrier 0x10 (expect_tx 2 x 100); the leader's
    MMA waits on it, reads both CTAs' stages, commits to both empty barriers 0x20; each producer then
    waits for that release (the kernel's tail)."""
    full, empty = 0x10, 0x20
    p0 = (Wait("wait", (0, empty), 1, None), Arrive("arrive", (0, full), 1, 200, None),
          McastLoad("mcast-load", 0, 0, (0,), full, 100, ((0, 100),), None, (0,)), Wait("wait", (0, empty), 0, None))
    p1 = (Wait("wait", (1, empty), 1, None),     # the tail: each producer waits for the stage's release
          McastLoad("mcast-load", 1, 0, (1,), full, 100, ((0, 100),), None, (0,)), Wait("wait", (1, empty), 0, None))
    wait_full = () if not landed_peer_first else (Wait("wait", (0, full), 0, None),)
    mma = wait_full + (Mma("mma", 0, 0, None), MmaCommit("mma-commit", ((0, empty), (1, empty)), 0, None))
    init = (((0, full), 1), ((0, empty), 1), ((1, empty), 1))
    return McastSystem(2, (p0, mma, p1, ()), ((0, "producer"), (0, "mma"), (1, "producer"), (1, "mma")), init,
                       reads=((), (0, 1), (), ()))


def test_ring_leader_mma_reads_the_peer_stage():
    """The leader's MMA reading the peer's stage: waiting on the leader's full barrier (both CTAs'
    bytes) is proved; without the wait, the MMA may run before the peer's half landed."""
    assert explore_mcast(_leader_reads_both(True), max_states=10000).outcome == "proved"
    r = explore_mcast(_leader_reads_both(False), max_states=10000)
    assert r.outcome == "counterexample" and r.error[0].what == "mma-early"


def test_cli_help_and_refusal():
    env = dict(os.environ)
    cmd = [sys.executable, "-m", "verilayout.cli"]
    h = subprocess.run(cmd + ["emit", "gemm", "--help"], capture_output=True, text=True, env=env)
    text = " ".join(h.stdout.split())
    assert "4x1 (two pairs along M share B" in text and "--cluster 4x1" in text
    bad = subprocess.run(cmd + ["emit", "gemm", "--arch", "sm_100a", "--tile", "256x128x64", "--cluster", "1x2",
                                "-o", "/tmp/vl_pair_cluster_refused"], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "2x1, 4x1 or 2x2" in bad.stderr


@needs_nvcc
def test_six_stage_pair_cluster_ring_is_proved_by_the_reduced_search():
    """256x256x64, 6 stages, 2x2 (``emit gemm --arch sm_100a --tile 256x256x64 --stages 6 --cluster
    2x2``): with 4 CTAs the ring is searched by the stubborn-set reduced search
    (tests/test_mcast_stubborn.py, tests/test_mcast_symmetry.py: the full search's verdict on every
    ring that one finishes), which proves it with every landing order. Releasing to one pair only
    deadlocks it (``release`` names it too)."""
    from verilayout.simulate.mcast_check import LANDINGS, check_sm100_source
    m = build_tcgen05_manifest("bf16", tile=(256, 256, 64), stages=6, ctas=2, cluster=(2, 2))
    src = render_tcgen05_cuda(m)
    ring = next(c for c in check_sm100_source(m, src).checks if c.check == "mcast-ring")
    assert ring.status == "proved", ring.message
    assert "stubborn-set reduced search" in ring.message and LANDINGS["per-dest"] in ring.message
    bad = src.replace("uint16_t((r == 0u ? 0xfu", "uint16_t((r == 0u ? 0x3u")
    assert bad != src
    got = {c.check: c for c in check_sm100_source(m, bad).checks}
    assert got["release"].status == "counterexample"
    assert got["mcast-ring"].status == "counterexample" and "deadlock" in got["mcast-ring"].message


@needs_nvcc
def test_the_planted_pair_cluster_rings_get_the_full_search_verdict():
    """The rings of the planted bugs above (4 CTAs, searched by the reduced search in the check):
    under eager landings, where the full search ends (a few thousand states), the reduced search's
    verdict is the full search's, which the reference search repeats (tests/mcast_reference)."""
    from dataclasses import replace
    from mcast_reference import same_search
    import verilayout.simulate.mcast_check as mc
    from verilayout.simulate.mcast_stubborn import explore_stubborn
    for shape, name, edit, _ in PLANTED:
        m = _man(shape)
        got, real, memo = [], mc._ring_verdict, dict(mc._RING_MEMO)
        mc._ring_verdict = lambda s: (got.append(s), mc.KernelCheck("mcast-ring", "unknown", "-"))[1]
        mc._RING_MEMO.clear()                 # the check builds its ring (none from the memo)
        try:
            mc.check_sm100_source(m, render_tcgen05_cuda(m).replace(*edit))
        finally:
            mc._ring_verdict = real
            mc._RING_MEMO.update(memo)
        system = replace(got[0], landing="eager")
        full = same_search(system, 200000)
        red = explore_stubborn(system, max_states=200000, symmetric=True)
        assert full.outcome != "unknown" and red.outcome == full.outcome, (name, full, red)
