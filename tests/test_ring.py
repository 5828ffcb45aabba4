"""The one explorer of the mbarrier stage rings (``simulate/ring.explore_rings``) on rings written
here by hand, for one CTA and for a cluster of two.

Oracle: the PTX ISA's mbarrier rules (section "mbarrier": a phase completes when its pending
arrival count and its tx-count are both zero; ``complete_tx`` by a TMA lowers the tx-count by the
bytes that land) applied by hand to each tiny program below; the expected verdict of each is
derived in its comment.
"""
from verilayout.simulate.ring import (Arrive, Commit, Issue, Read, Retire, RingSystem, RingTma,
                                      Wait, explore_rings)

FULL, BUF = 0x8, 0x400


def _m(i):
    return (i, 100 + i)             # a mark: (index, PTX line)


def _one_cta(expect_tx: int) -> RingSystem:
    """Producer: arrive.expect_tx(expect_tx) on FULL (count 1), TMA of 128 bytes into BUF;
    consumer: wait FULL parity 0, read BUF, commit, wait_group 0."""
    prod = (Arrive("arrive", (0, FULL), 1, expect_tx, _m(0)), Issue("tma", 0, _m(1)))
    cons = (Wait("wait", (0, FULL), 0, _m(2)), Read("read", ((0, BUF),), 0, _m(3)),
            Commit("commit", _m(4)), Retire("retire", 0, _m(5)))
    tma = RingTma(0, BUF, 128, FULL, 0, (0,), BUF, _m(6))
    return RingSystem(1, 1, (prod, cons), (tma,), (((0, FULL), 1),), False)


def test_one_cta_with_its_expect_tx_is_proved():
    # the arrival leaves tx = 128 pending; the phase completes only when the 128 bytes land, so
    # the consumer's wait passes after the landing and its read sees iteration 0's bytes
    assert explore_rings(_one_cta(128), max_states=1000).outcome == "proved"


def test_one_cta_without_expect_tx_reads_before_the_tma_filled_the_stage():
    # without expect_tx the single arrival completes phase 0 at once: the consumer may pass its
    # wait and read BUF before the TMA was even issued
    r = explore_rings(_one_cta(0), max_states=1000)
    assert r.outcome == "counterexample"
    assert "before iteration 0's TMA filled it" in r.error[0] and r.error[1] == _m(3)


def _two_ctas(mask_of_cta1: tuple) -> RingSystem:
    """Two CTAs; each producer announces 128 bytes on its FULL and multicasts a 64-byte slice
    (CTA 0: BUF, CTA 1: BUF + 64) of one stage buffer at BUF; each consumer waits FULL and
    reads BUF."""
    prog, tmas = [], []
    for x in range(2):
        prog.append((Arrive("arrive", (x, FULL), 1, 128, _m(10 * x)), Issue("tma", x, _m(10 * x + 1))))
        prog.append((Wait("wait", (x, FULL), 0, _m(10 * x + 2)), Read("read", ((x, BUF),), 0, _m(10 * x + 3)),
                     Commit("commit", _m(10 * x + 4)), Retire("retire", 0, _m(10 * x + 5))))
        tmas.append(RingTma(x, BUF + 64 * x, 64, FULL, 0, (0, 1) if x == 0 else mask_of_cta1, BUF,
                            _m(10 * x + 6)))
    return RingSystem(2, 1, tuple(prog), tuple(tmas), (((0, FULL), 1), ((1, FULL), 1)), True)


def test_two_ctas_each_receiving_both_slices_are_proved():
    # each FULL expects 128 bytes = its own slice and its peer's (a peer's slice may land before
    # this CTA's expect_tx: the tx-count goes below zero while the arrival is pending), so each
    # consumer reads only after both 64-byte slices of BUF landed
    r = explore_rings(_two_ctas((0, 1)), max_states=10000)
    assert r.outcome == "proved"


def test_a_multicast_mask_missing_a_cta_deadlocks_its_consumer():
    # CTA 1's slice does not reach CTA 0: CTA 0's FULL receives 64 of the 128 bytes it expects,
    # its phase never completes and CTA 0's consumer waits forever
    r = explore_rings(_two_ctas((1,)), max_states=10000)
    assert r.outcome == "deadlock"
    assert any(b.startswith("CTA 0 consumer 0 waits") for b in r.blocked), r.blocked
