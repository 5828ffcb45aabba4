"""The array tally of a round trip's reads (:func:`verilayout.audit.ptx_tally.wrong_reads`) against
the per-byte walk written out here: every read visited in order, its writer looked up, the
holders intersected, the counts and the first wrong read of each line kept by hand."""
from __future__ import annotations

import random

from verilayout.audit.ptx_tally import wrong_reads


class _Access:
    def __init__(self, line: int) -> None:
        self.line = line


def _walk(wrote: dict, reads: list[dict], hs: list[set[int]], hd: list[set[int]], n: int) -> tuple:
    wrong_l: dict[int, int] = {}
    wrong_s: dict[int, int] = {}
    total: dict[int, int] = {}
    first_bad: dict[int, tuple] = {}
    n_wrong = unwritten = 0
    for td in range(n):
        for b, ins in reads[td].items():
            w = wrote.get(b)
            total[ins.line] = total.get(ins.line, 0) + 1
            if w is not None:
                total[w[1].line] = total.get(w[1].line, 0) + 1
            if w is None or not hs[w[0]] & hd[td]:
                n_wrong += 1
                unwritten += w is None
                wrong_l[ins.line] = wrong_l.get(ins.line, 0) + 1
                first_bad.setdefault(ins.line, (td, b, w[0] if w else None, ins))
                if w is not None:
                    wrong_s[w[1].line] = wrong_s.get(w[1].line, 0) + 1
                    first_bad.setdefault(w[1].line, (td, b, w[0], w[1]))
    return wrong_l, wrong_s, total, first_bad, n_wrong, unwritten


def _case(rng: random.Random) -> tuple:
    n = rng.choice([1, 2, 4, 8, 32])
    lines = [_Access(ln) for ln in rng.sample(range(1, 60), rng.randint(1, 6))]  # a line may load and store
    span = rng.choice([8, 64, 512, (1 << 32) - 1])
    wrote = {rng.randint(0, span): (rng.randrange(n), rng.choice(lines)) for _ in range(rng.randint(0, 80))}
    reads = [{rng.choice([*wrote, rng.randint(0, span)] if wrote and rng.random() < 0.8 else [rng.randint(0, span)]):
              rng.choice(lines) for _ in range(rng.randint(0, 12))} for _ in range(n)]
    hs = [set(rng.sample(range(16), rng.randint(0, 3))) for _ in range(n)]
    hd = [set(rng.sample(range(16), rng.randint(0, 3))) for _ in range(n)]
    return wrote, reads, hs, hd, n


def test_wrong_reads_equals_the_per_byte_walk():
    rng = random.Random(20261129)
    for _ in range(3000):
        args = _case(rng)
        assert wrong_reads(*args) == _walk(*args)


def test_no_reads_is_an_empty_tally():
    assert wrong_reads({4: (0, _Access(3))}, [{}, {}], [{0}, {1}], [{0}, {1}], 2) == ({}, {}, {}, {}, 0, 0)


def test_a_read_of_a_byte_no_store_wrote_is_wrong_and_unwritten():
    ld = _Access(7)
    wrong_l, wrong_s, total, first_bad, n_wrong, unwritten = wrong_reads({}, [{12: ld}], [{0}], [{0}], 1)
    assert (wrong_l, wrong_s, total, n_wrong, unwritten) == ({7: 1}, {}, {7: 1}, 1, 1)
    assert first_bad == {7: (0, 12, None, ld)}


def _dicts(parts: list, accesses: list, n: int) -> tuple[dict, list[dict]]:
    """The round trip's dicts built byte by byte: the last store of a byte holds it, a thread's
    first load of a byte reads it (insertion order: first store, first load)."""
    wrote: dict = {}
    reads: list[dict] = [{} for _ in range(n)]
    for (store, th, by), acc in zip(parts, accesses):
        for t, b in zip(th.tolist(), by.tolist()):
            if store:
                wrote[b] = (t, acc)
            else:
                reads[t].setdefault(b, acc)
    return wrote, reads


def test_the_scratch_map_is_the_per_byte_dicts():
    import numpy as np
    from verilayout.audit.ptx_tally import scratch_map
    rng = random.Random(7)
    for _ in range(500):
        n = rng.choice([1, 2, 4, 32])
        accesses = [_Access(rng.randint(1, 99)) for _ in range(rng.randint(1, 6))]
        parts = []
        for _a in accesses:
            k = rng.randint(0, 40)
            parts.append((rng.random() < 0.5, np.array([rng.randrange(n) for _ in range(k)], dtype=np.int64),
                          np.array([rng.choice([0, 4, 8, 12, rng.randint(0, (1 << 32) - 1)]) for _ in range(k)],
                                   dtype=np.int64)))
        wrote, reads = _dicts(parts, accesses, n)
        m = scratch_map(parts, accesses)
        assert m.w_key.tolist() == list(wrote)
        assert [(t, accesses[a]) for t, a in zip(m.w_thread.tolist(), m.w_acc.tolist())] == list(wrote.values())
        got = [(t, b, accesses[a]) for t, b, a in zip(m.r_thread.tolist(), m.r_key.tolist(), m.r_acc.tolist())]
        assert got == [(t, b, x) for t in range(n) for b, x in reads[t].items()]


def test_the_tally_without_the_join_is_the_same(monkeypatch):
    import verilayout.audit.ptx_tally as tally
    monkeypatch.setattr(tally, "_JOIN_MAX", 0)
    rng = random.Random(20261130)
    for _ in range(500):
        args = _case(rng)
        assert wrong_reads(*args) == _walk(*args)
