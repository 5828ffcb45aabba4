"""All shifts of one access at once (ptx_scratch._Table.moves) against moving it shift by shift
(_Table.moved: the access's counts taken off, put back shifted, the metric recounted over the bytes
it leaves and reaches), on random rounds of stores and loads."""
import numpy as np

from verilayout.audit.ptx_scratch import _Table


def _round(rng):
    k = int(rng.integers(2, 6))
    kinds = [("store", "load")[int(rng.integers(0, 2))] for _ in range(k)]
    evs = []
    for _ in range(k):
        n = int(rng.integers(0, 40))
        evs.append((None, rng.integers(0, 64, size=n).astype(np.int64)))
    return kinds, evs


def test_moves_equal_moved_shift_by_shift():
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(300):
        kinds, evs = _round(rng)
        if not any(len(b) for _t, b in evs):
            continue
        t = _Table(kinds, evs)
        ds = sorted(set(int(x) for x in rng.integers(-200, 200, size=12)) | {0})
        for k in range(len(kinds)):
            want = [t.moved(k, d) for d in ds]
            assert t.moves(k, ds) == want
            checked += 1
    assert checked > 500


def test_a_table_from_known_distinct_bytes_is_the_table_from_the_bytes():
    from verilayout.audit.ptx_scratch import ThreadBytes, distinct_bytes
    rng = np.random.default_rng(11)
    for _ in range(200):
        k = int(rng.integers(2, 6))
        kinds = [("store", "load")[int(rng.integers(0, 2))] for _ in range(k)]
        tss = [ThreadBytes([set(rng.integers(0, 64, size=int(rng.integers(0, 6))).tolist()) for _t in range(4)])
               for _ in range(k)]
        rels = [int(x) for x in rng.integers(-100, 100, size=k)]
        evs = [(None, np.array([b for s in ts for b in sorted(s)],
                               dtype=np.int64) + rel) for ts, rel in zip(tss, rels)]
        if not any(len(b) for _t, b in evs):
            continue
        plain, known = _Table(kinds, evs), _Table(kinds, evs, [(*distinct_bytes(ts), r) for ts, r in zip(tss, rels)])
        assert (plain.w == known.w).all() and (plain.r == known.r).all()
        for (u1, c1), (u2, c2) in zip(plain.acc, known.acc):
            assert u1.tolist() == u2.tolist() and c1.tolist() == c2.tolist()
