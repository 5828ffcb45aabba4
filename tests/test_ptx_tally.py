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
