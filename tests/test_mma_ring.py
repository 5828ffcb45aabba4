"""The tcgen05 MMA ring (``simulate/ring.MmaRingSystem`` / ``explore_mma_rings``) on rings written
here by hand: one CTA (the TMEM accumulator ring of ``acc-ring``) and a CTA pair (``pair-ring``).

Oracle: the PTX ISA's rules applied by hand to each tiny program below, the expected verdict of
each derived in its comment: an mbarrier phase completes when its pending arrivals and its
tx-count are both zero, a TMA's ``complete_tx`` lowers the tx-count by the bytes that land (PTX ISA
9.7.13.15, "mbarrier"); ``tcgen05.commit`` arrives once the MMAs issued before it completed, with
``.multicast::cluster`` on the barrier at its offset in every CTA of its mask (PTX ISA 9.7.16,
"tcgen05.commit").
"""
from verilayout.simulate.ring import (MMA_OBSERVED, Arrive, Load, Mma, MmaCommit, MmaRingSystem, TmemRead, TmemTile,
                                      Wait, explore_mma_rings)

FULL, EMPTY, ACC = 0x10, 0x18, 0x20
MMA, EPI = (0, "mma"), (0, "epilogue")


def _acc_ring(wait_full: bool) -> MmaRingSystem:
    """MMA thread: one MMA into tile 0 (columns 0..63), commit arriving on ACC (count 1);
    epilogue warp: (wait ACC parity 0), read columns 0..63 of tile 0."""
    mma = (Mma("mma", -1, 0, 1), MmaCommit("mma-commit", ((0, ACC),), 1, 2))
    epi = ((Wait("wait", (0, ACC), 0, 3),) if wait_full else ()) + (TmemRead("tmem-read", 0, 0, 64, 4),)
    return MmaRingSystem(1, (mma, epi), (MMA, EPI), (TmemTile(0, 64, 0),), (((0, ACC), 1),), MMA_OBSERVED)


def test_an_epilogue_waiting_for_the_commit_reads_a_completed_accumulator():
    # ACC's phase 0 completes only with the commit's arrival, after which the one MMA (index 0)
    # has completed: every read of tile 0 comes after it
    assert explore_mma_rings(_acc_ring(True), max_states=1000).outcome == "proved"


def test_an_epilogue_not_waiting_may_read_before_the_mma_completed():
    # without the wait the read may run first, when no MMA has completed (0 <= index 0)
    r = explore_mma_rings(_acc_ring(False), max_states=1000)
    assert r.outcome == "counterexample"
    finding, line = r.error
    assert (finding.what, finding.p, finding.values[0], line) == ("read-early", 1, 0, 4)


def _two_tiles(wait_empty: bool) -> MmaRingSystem:
    """Two tiles through one TMEM stage (columns 0..63): the MMA thread writes tile 0, commits to
    ACC, (waits EMPTY parity 0), writes tile 1; the epilogue warp waits ACC, reads tile 0,
    arrives on EMPTY."""
    mma = (Mma("mma", -1, 0, 1), MmaCommit("mma-commit", ((0, ACC),), 1, 2)) + \
        ((Wait("wait", (0, EMPTY), 0, 3),) if wait_empty else ()) + (Mma("mma", -1, 1, 4),)
    epi = (Wait("wait", (0, ACC), 0, 5), TmemRead("tmem-read", 0, 0, 64, 6), Arrive("arrive", (0, EMPTY), 1, 0, 7))
    return MmaRingSystem(1, (mma, epi), (MMA, EPI), (TmemTile(0, 64, 0), TmemTile(0, 64, 1)),
                         (((0, ACC), 1), ((0, EMPTY), 1)), MMA_OBSERVED)


def test_the_next_tile_waits_for_the_epilogue_to_release_the_stage():
    # EMPTY's phase 0 completes only with the epilogue's arrival, after its read of tile 0
    assert explore_mma_rings(_two_tiles(True), max_states=1000).outcome == "proved"


def test_the_next_tile_without_the_wait_writes_columns_still_to_be_read():
    # without the wait, tile 1's MMA may run while the epilogue still has tile 0 to read there
    r = explore_mma_rings(_two_tiles(False), max_states=1000)
    assert r.outcome == "counterexample"
    finding, line = r.error
    assert (finding.what, finding.values[:5], line) == ("mma-writes-read", (1, 0, 64, 1, 0), 4)


def _pair(peer_bar_cta: int, mask_ctas: tuple) -> MmaRingSystem:
    """A CTA pair. CTA 0's producer: expect 256 bytes on (0, FULL), load 128 bytes of iteration 0
    on it; CTA 1's producer: load 128 bytes on (peer_bar_cta, FULL) (the leader's through mapa
    when 0). The MMA thread (CTA 0): wait (0, FULL), MMA iteration 0 into tile 0, commit
    multicast to ACC in the CTAs ``mask_ctas``. One epilogue warp per CTA: wait its ACC, read."""
    prod0 = (Arrive("arrive", (0, FULL), 1, 256, 1), Load("load", 0, 0, (0, FULL), 128, ((0x400, 0x480),), 2))
    prod1 = (Load("load", 1, 0, (peer_bar_cta, FULL), 128, ((0x400, 0x480),), 3),)
    mma = (Wait("wait", (0, FULL), 0, 4), Mma("mma", 0, 0, 5),
           MmaCommit("mma-commit", tuple((c, ACC) for c in mask_ctas), 1, 6))
    epi = [(Wait("wait", (c, ACC), 0, 7 + c), TmemRead("tmem-read", 0, 0, 64, 9 + c)) for c in (0, 1)]
    bars = sorted({(0, FULL), (peer_bar_cta, FULL), (0, ACC), (1, ACC)})
    return MmaRingSystem(2, (prod0, prod1, mma, epi[0], epi[1]),
                         ((0, "producer"), (1, "producer"), MMA, (0, "epilogue"), (1, "epilogue")),
                         (TmemTile(0, 64, 0),), tuple((b, 1) for b in bars), MMA_OBSERVED)


def test_a_pair_whose_bytes_complete_on_the_leader_and_whose_commit_reaches_both_ctas_is_proved():
    # (0, FULL): pending 1, tx 0; the expect makes pending 0, tx +256; the two landings (either
    # order, either before the expect: tx may go below zero while the arrival is pending) bring
    # tx to 0 only when both 128-byte loads landed, so the MMA runs after both; the commit
    # completes ACC in both CTAs after the MMA completed
    assert explore_mma_rings(_pair(0, (0, 1)), max_states=10000).outcome == "proved"


def test_a_commit_mask_naming_only_the_leader_leaves_the_peer_epilogue_waiting():
    # (1, ACC) never receives an arrival: CTA 1's epilogue waits on its phase 0 for ever
    r = explore_mma_rings(_pair(0, (0,)), max_states=10000)
    assert r.outcome == "deadlock"
    assert [(p, a.bar) for p, a in r.blocked] == [(4, (1, ACC))]


def test_peer_bytes_completing_on_its_own_barrier_leave_the_leader_short():
    # CTA 1's 128 bytes lower (1, FULL)'s tx-count instead: (0, FULL) keeps tx 128 > 0 and the MMA
    # thread waits on its phase 0 for ever (and both epilogues behind it)
    r = explore_mma_rings(_pair(1, (0, 1)), max_states=10000)
    assert r.outcome == "deadlock"
    assert (2, (0, FULL)) in [(p, a.bar) for p, a in r.blocked]


def test_an_mma_not_waiting_for_the_full_barrier_may_read_before_the_bytes_landed():
    # without its wait the MMA may be the first step of all: no load of iteration 0 issued yet
    s = _pair(0, (0, 1))
    prog = list(s.prog)
    prog[2] = prog[2][1:]
    r = explore_mma_rings(MmaRingSystem(2, tuple(prog), s.roles, s.tiles, s.init, s.observed), max_states=10000)
    assert r.outcome == "counterexample"
    assert r.error[0].what == "mma-early" and r.error[0].values == (0, 0) and r.error[1] == 5


def test_an_arrival_beyond_the_count_is_an_error():
    # (0, EMPTY) counts 2: one arrival leaves 1 pending (a phase never completes with arrivals
    # left over), so an arrival of 2 threads (a whole warp's lanes counted, say) after it goes
    # beyond phase 0's count
    one, two = Arrive("arrive", (0, EMPTY), 1, 0, 1), Arrive("arrive", (0, EMPTY), 2, 0, 2)
    s = MmaRingSystem(1, ((), (one, two)), (MMA, EPI), (), (((0, EMPTY), 2),), MMA_OBSERVED)
    r = explore_mma_rings(s, max_states=100)
    assert r.outcome == "counterexample" and r.error[0].what == "over-arrive" and r.error[1] == 2
    ok = MmaRingSystem(1, ((), (one, one._replace(mark=2))), (MMA, EPI), (), s.init, MMA_OBSERVED)
    assert explore_mma_rings(ok, max_states=100).outcome == "proved"     # 1 + 1 completes phase 0


def test_interchangeable_epilogue_warps_are_explored_once():
    # two epilogue warps with equal actions (marks aside): the states of (pc 0, pc 1) and
    # (pc 1, pc 0) are one. Each warp has 2 pcs (before, after its one arrival on a count-2
    # barrier), the MMA thread none: unordered pairs of {0, 1} = 3 states, not 4
    a = Arrive("arrive", (0, EMPTY), 1, 0, 1)
    s = MmaRingSystem(1, ((), (a,), (a._replace(mark=2),)), (MMA, EPI, EPI), (), (((0, EMPTY), 2),), MMA_OBSERVED)
    assert explore_mma_rings(s, max_states=100).states == 3
    s2 = MmaRingSystem(2, s.prog, (MMA, EPI, (1, "epilogue")), (), s.init, MMA_OBSERVED)
    assert explore_mma_rings(s2, max_states=100).states == 4      # different CTAs: not interchangeable


def test_a_role_outside_the_ctas_is_a_layout_error():
    import pytest
    from verilayout.errors import LayoutError
    s = _acc_ring(True)
    with pytest.raises(LayoutError, match="MmaRingSystem: roles"):
        explore_mma_rings(MmaRingSystem(1, s.prog, (MMA, (1, "epilogue")), s.tiles, s.init, s.observed), max_states=10)
