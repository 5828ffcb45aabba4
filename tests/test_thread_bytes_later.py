"""verilayout.audit.ptx_scratch.ThreadBytes.later: an access's per-thread byte sets built only when
the list itself is read give what the eager list of the same sets gives (the sets, their iteration
order, every list operation), and its counts and arrays (read without building the sets) are those
of the eager sets, counted here by brute force."""
import random

import numpy as np

from verilayout.audit.ptx_scratch import ThreadBytes, byte_stats, thread_arrays, thread_keys


def _rows(offs: list[int], width: int, active: list[bool]) -> list[set[int]]:
    return [set(range(o, o + width)) if a else set() for o, a in zip(offs, active)]


def _later(offs: list[int], width: int, active: list[bool]) -> ThreadBytes:
    """Built as ptx_elements builds an access's bytes: arrays now, sets later."""
    on = np.array(active, dtype=bool)
    th = np.repeat(np.arange(len(offs), dtype=np.int64)[on], width)
    by = (np.array(offs, dtype=np.int64)[on][:, None] + np.arange(width, dtype=np.int64)).ravel()
    return ThreadBytes.later(lambda: _rows(offs, width, active), {"flat": (th, by), "n": len(offs)})


def _cases():
    rng = random.Random(3)
    for _ in range(40):
        n = rng.choice([32, 64, 128])
        width = rng.choice([1, 2, 4, 8, 16])
        offs = [rng.randrange(-64, 4096) for _ in range(n)]
        active = [rng.random() < 0.8 for _ in range(n)] if rng.random() < 0.5 else [True] * n
        yield offs, width, active


def test_counts_without_the_sets_are_the_sets_counts():
    for offs, width, active in _cases():
        tb = _later(offs, width, active)
        rows = _rows(offs, width, active)
        want = (sum(len(s) for s in rows), len(set().union(*rows)), any(not s for s in rows))
        assert byte_stats(tb) == want
        assert "_rows" in tb.__dict__                       # counted from the arrays: no set built
        th, by = thread_arrays(tb)
        assert [(int(t), int(b)) for t, b in zip(th, by)] == [(t, b) for t, s in enumerate(rows) for b in sorted(s)]
        keys, least = thread_keys(tb)
        assert keys.tolist() == [(t << 40) + b for t, s in enumerate(rows) for b in sorted(s)]
        assert least == min((b for s in rows for b in s), default=0)
        assert "_rows" in tb.__dict__


def test_reading_the_list_builds_the_same_sets_in_the_same_order():
    for offs, width, active in _cases():
        tb, rows = _later(offs, width, active), _rows(offs, width, active)
        assert len(tb) == len(rows) and tb == rows and tb[3] == rows[3]
        assert [list(s) for s in tb] == [list(s) for s in rows]       # each set's iteration order
        got = thread_arrays(tb, ordered=False)[1].tolist()
        assert got == [b for s in rows for b in s]


def test_every_list_operation_sees_the_sets():
    offs, width, active = [0, 8, 16, 24], 4, [True, False, True, True]
    rows = _rows(offs, width, active)
    for op in (lambda x: list(x), lambda x: x[1:], lambda x: set() in x, lambda x: x.index(set()),
               lambda x: x.count(set()), lambda x: list(reversed(x)), lambda x: repr(x), lambda x: bool(x),
               lambda x: x + [], lambda x: x.copy(), lambda x: sorted(map(len, x)), lambda x: set().union(*x)):
        assert op(_later(offs, width, active)) == op(rows)


def test_writer_classes_from_rows_are_those_of_the_sets():
    """The conversion's writer classes (threads holding equal sets of elements, numbered by first
    thread) read from the sorted rows kept with lazily built holders equal those read from the sets."""
    from verilayout.audit.ptx_elements import _writer_classes
    rng = random.Random(5)
    for _ in range(30):
        n, r = rng.choice([32, 64]), rng.choice([1, 2, 4])
        pool = [sorted(rng.sample(range(64), r)) for _ in range(rng.randint(1, 6))]
        rows = np.array([rng.choice(pool) for _ in range(n)], dtype=np.int64)
        sets = [set(x) for x in rows.tolist()]
        lazy = ThreadBytes.later(lambda rows=rows: (set(x) for x in rows.tolist()), {"rows": rows, "n": n})
        cls: dict = {}
        want = [cls.setdefault(frozenset(h), len(cls)) for h in sets]
        of, k = _writer_classes(lazy)
        assert of.tolist() == want and k == len(cls)
        assert "_rows" in lazy.__dict__                      # decided on the rows: no set built
        of2, k2 = _writer_classes(sets)
        assert of2.tolist() == want and k2 == k
