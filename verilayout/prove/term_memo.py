"""Answers about z3 terms kept for the whole process, by the terms' ids: the one home of the
audit's per-process memos keyed by term (descriptor proofs, addresses at thread 0, threads'
offsets, guards, inter-warp offsets and differences).

z3 shares structurally equal terms of one context (hash-consing): the PTX evaluator builds the
same descriptor and address terms again for each kernel of a test run that shares a tile and a
loop (only the epilogue's constants differ), and each gets the id of the first. An answer that is
a function of its terms alone (a term's symbols, its one constant value, a proof of a claim) is
kept here under ``(kind, ids..., plain values...)`` with the terms themselves, so an id can never
name another term while its answer is kept (z3 reuses an id only once its term is freed). At most
``max_entries`` answers are kept; past that, new answers are computed and not kept.

Law: ``memo.get(k)`` is :data:`MISSING` or the value last ``put`` under ``k``; a caller puts only
answers that the same question would give again (a proof, a value, never a solver's timeout).

>>> import z3
>>> m, x = TermMemo(2), z3.BitVec("x", 8)
>>> m.get(("k", (x + 1).get_id())) is MISSING
True
>>> m.put(("k", (x + 1).get_id()), (x + 1,), 7); m.get(("k", (x + 1).get_id()))
7
>>> m.answer(("j", x.get_id()), (x,), lambda: 3), m.answer(("j", x.get_id()), (x,), lambda: 4)
(3, 3)
"""
from __future__ import annotations

from typing import Any, Callable, Hashable

#: what :meth:`TermMemo.get` returns for a key not kept (``None`` is a value a caller may keep)
MISSING = object()


class TermMemo:
    """A bounded dict of answers about z3 terms, each kept with the terms its key names."""

    def __init__(self, max_entries: int = 8192) -> None:
        self.max_entries = max_entries
        self._kept: dict[Hashable, tuple[tuple, Any]] = {}

    def get(self, key: Hashable) -> Any:
        """The answer kept under ``key``, else :data:`MISSING`."""
        hit = self._kept.get(key)
        return MISSING if hit is None else hit[1]

    def put(self, key: Hashable, terms: tuple, value: Any) -> None:
        """Keep ``value`` under ``key`` (``terms``: the z3 terms whose ids the key holds, kept
        alive with it); nothing is kept past ``max_entries``."""
        if len(self._kept) < self.max_entries:
            self._kept[key] = (terms, value)

    def answer(self, key: Hashable, terms: tuple, compute: Callable[[], Any]) -> Any:
        """The answer kept under ``key``, else ``compute()``, kept with ``terms`` (``compute`` must
        be a function of the terms the key names and of the plain values it holds)."""
        hit = self._kept.get(key)
        if hit is not None:
            return hit[1]
        value = compute()
        self.put(key, terms, value)
        return value

    def clear(self) -> None:
        """Forget every answer (and release the terms kept with them)."""
        self._kept.clear()

    def __len__(self) -> int:
        return len(self._kept)
