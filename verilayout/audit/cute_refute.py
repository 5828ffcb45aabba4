"""A prover that first looks for a concrete counterexample: a claim false at one point of its symbols is
not proved, and z3 need not spend its timeout learning that.

The CuTe-DSL audit asks z3 many claims over a persistent tile scheduler's fast division (``mul.hi`` then
shifts, PTX ISA 9.7.1.5 ``mul``): a candidate bound ``x < 2`` of such a value is false, but the solver,
facing 64-bit products of unconstrained registers, often runs to its timeout before it says so. Here a
few fixed assignments of the symbols, tried once the solver has not decided the claim in a short first
attempt, (all zero, then small and random values drawn from a seeded
generator: the same ones on every run) are substituted into ``assume and not claim`` and simplified by z3
itself (so the arithmetic is z3's own, division by zero included); where one makes it true the claim is
not proved, exactly what the solver would answer (a model, or a timeout: both ``False``); where none
does, the solver decides as before.
"""
from __future__ import annotations

import random

import z3

from verilayout.core.smt import solve
from verilayout.prove.ptx_values import Prover

#: the assignments tried once the solver's first, short attempt is ``unknown`` (each a substitution of the
#: query's terms; the first that refutes ends the search)
TRIES = 24
#: the first attempt's timeout (ms): most claims are decided well within it
QUICK_MS = 30
#: the longest timeout of a query that gets the short attempt and the search: a candidate bound of a loop
#: invariant (``PtxValues.invariant`` asks with 2 s, and most candidates are false); a query with a longer
#: timeout (a claim the audit expects to hold) goes to the solver directly
SHORT_MS = 2000
#: the small values an assignment draws most symbols from (loop counters, flags, stage indices)
_SMALL = (0, 1, 2, 3, 4, 7, 8, 16)


def _symbols(e: z3.ExprRef) -> list[z3.ExprRef]:
    """The uninterpreted constants of ``e`` (bit-vectors and booleans), each once, in a fixed order.

    >>> x = z3.BitVec("x", 8)
    >>> [str(s) for s in _symbols(z3.And(x + 1 > x, z3.Bool("p")))]
    ['x', 'p']
    """
    seen: set[int] = set()
    out: list[z3.ExprRef] = []
    todo = [e]
    while todo:
        t = todo.pop()
        k = t.get_id()
        if k in seen:
            continue
        seen.add(k)
        if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out.append(t)
        else:
            todo.extend(reversed(t.children()))
    return out


def _value(s: z3.ExprRef, rng: random.Random) -> z3.ExprRef | None:
    """One value for symbol ``s``: a small one most often, else any of its width; None for another sort."""
    if z3.is_bool(s):
        return z3.BoolVal(rng.random() < 0.5)
    if not z3.is_bv(s):
        return None
    w = s.size()
    v = rng.choice(_SMALL) if rng.random() < 0.7 else rng.getrandbits(w)
    return z3.BitVecVal(v % (1 << w), w)


def refuted(claim: z3.BoolRef, assume: z3.BoolRef | None) -> bool:
    """True when one of :data:`TRIES` fixed assignments satisfies ``assume`` and falsifies ``claim``
    (so ``claim`` does not follow from ``assume``). Law: z3's simplifier evaluates a closed term exactly.

    >>> x = z3.BitVec("x", 32)
    >>> refuted(z3.ULT(x * x, 2), z3.ULT(x, 8)), refuted(z3.ULT(x & 1, 2), None)
    (True, False)
    """
    query = z3.Not(claim) if assume is None else z3.And(assume, z3.Not(claim))
    syms = _symbols(query)
    rng = random.Random(0)
    for k in range(TRIES):
        pairs = []
        for s in syms:
            v = (z3.BoolVal(False) if z3.is_bool(s) else z3.BitVecVal(0, s.size())) if k == 0 else _value(s, rng)
            if v is None or not (z3.is_bool(s) or z3.is_bv(s)):
                return False
            pairs.append((s, v))
        if z3.is_true(z3.simplify(z3.substitute(query, *pairs) if pairs else query)):
            return True
    return False


class RefutingProver(Prover):
    """:class:`~verilayout.prove.ptx_values.Prover` whose :meth:`proves` answers False at once where
    :func:`refuted` finds a counterexample (the solver would answer False too: a model or a timeout),
    and remembers each answer by the claim and assumption (bounded; the same query asked again, e.g.
    an invariant's candidate tried alone and then jointly, is answered once).

    >>> x = z3.BitVec("x", 16)
    >>> p = RefutingProver(); p.proves(z3.ULT(x, 2), z3.ULT(x, 9)), p.proves(z3.ULT(x, 9), z3.ULT(x, 2))
    (False, True)
    """

    MEMO = 4096

    def __init__(self, max_solvers: int = 16):
        super().__init__(max_solvers)
        self._memo: dict = {}

    def proves(self, claim: z3.BoolRef, assume: z3.BoolRef | None = None, timeout_ms: int = 5000) -> bool:
        key = (claim.hash(), None if assume is None else assume.hash(), timeout_ms)
        for c, a, r in self._memo.get(key, ()):
            if z3.eq(c, claim) and (a is None if assume is None else a is not None and z3.eq(a, assume)):
                return r
        r = self._decide(claim, assume, timeout_ms)
        if len(self._memo) >= self.MEMO:
            self._memo.pop(next(iter(self._memo)))
        self._memo.setdefault(key, []).append((claim, assume, r))
        return r

    def _decide(self, claim: z3.BoolRef, assume: z3.BoolRef | None, timeout_ms: int) -> bool:
        """The solver with :data:`QUICK_MS`; on ``unknown``, :func:`refuted`; then the solver with the
        caller's timeout (the same answer the caller's one call gives: unsat is True, else False)."""
        if z3.is_true(z3.simplify(claim)):
            return True
        if timeout_ms > SHORT_MS:                   # a claim the caller expects to be proved: no detour
            return self._check(claim, assume, timeout_ms) == z3.unsat
        first = self._check(claim, assume, min(timeout_ms, QUICK_MS))
        if first != z3.unknown or timeout_ms <= QUICK_MS:
            return first == z3.unsat
        return False if refuted(claim, assume) else self._check(claim, assume, timeout_ms) == z3.unsat

    def _check(self, claim: z3.BoolRef, assume: z3.BoolRef | None, timeout_ms: int) -> z3.CheckSatResult:
        s = self._solver(assume)
        s.set("timeout", timeout_ms)
        s.push()
        try:
            s.add(z3.Not(claim))
            return solve(s)
        finally:
            s.pop()
