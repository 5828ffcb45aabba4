"""A round's store, byte by byte (``ptx_interwarp._store_bytes``, built on arrays once per partial): each scratch
byte holds the partial of its last writer in (thread, element, byte) order, or None where two writers store
partials of different owners or elements.

Oracle written here: the writes replayed one at a time in that order (PTX ISA 9.7.9.9 st: a ``.vN`` store
writes element ``j`` at ``addr + j * size``), over random thread offsets, guards and layouts."""
from __future__ import annotations

import random

import numpy as np

from verilayout.audit.ptx_interwarp import _owners, _store_bytes, _store_layout
from verilayout.frontends.ptx import make_instr

LINE = 41


def _replayed(base: list[int], guard: list[bool], words: int, size: int, owners) -> dict:
    """byte -> (owner kind, (element, 32-bit word), warp) of its last writer, None for a clash."""
    seen: dict = {}
    for t, on in enumerate(guard):
        for j in range(words):
            for b in range(size) if on else ():
                key = (int(owners.kind[t]), (j, b // 4))
                prev = seen.get(base[t] + j * size + b)
                clash = prev is not None and (prev == "clash" or prev[0] != key)
                seen[base[t] + j * size + b] = "clash" if clash else (key, t // 32)
    return {a: None if v == "clash" else v for a, v in seen.items()}


def _store(words: int, size: int):
    regs = [f"%r{k}" for k in range(10, 10 + words)]
    data = "{" + ", ".join(regs) + "}" if words > 1 else regs[0]
    width = f".v{words}" if words > 1 else ""
    return make_instr(f"st.shared{width}.b{8 * size}", ("[%r1]", data), LINE)


def test_store_bytes_match_the_writes_replayed_one_by_one():
    rng = random.Random(7)
    for _case in range(60):
        n = rng.choice([64, 128, 256])
        lanes = tuple((rng.choice([0, 1, 2, 4]), rng.choice([0, 1, 8])) for _ in range(5))
        warps = tuple((rng.choice([0, 1, 16]), rng.choice([0, 2, 32])) for _ in range(n.bit_length() - 6))
        owners = _owners(rng.choice([0, 1]), lanes, warps, n)
        words, size = rng.choice([(1, 4), (2, 4), (4, 4), (1, 2), (2, 8), (1, 1)])
        stride = rng.choice([0, size, words * size, 4 * words * size])
        base = [(t // rng.choice([1, 8, 32])) * stride for t in range(n)] if rng.random() < 0.8 else \
            [rng.randrange(0, 64) * size for _ in range(n)]
        guard = [rng.random() < 0.85 for _ in range(n)]
        s = _store(words, size)
        lay = _store_layout(s, np.array(base), guard, size, {})
        got = _store_bytes(LINE, lay, size, owners)
        want = _replayed(base, guard, words, size, owners)
        assert list(got) == sorted(want)                      # every written byte, in address order
        for a, p in got.items():
            if want[a] is None:
                assert p is None
                continue
            (kind, elem), warp = want[a]
            coords, part = owners.kinds[kind]
            assert p is not None and (p.element, p.part, p.warp) == ((LINE, elem, coords), part, warp)
