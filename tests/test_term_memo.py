"""The process-wide memo of answers about z3 terms (prove.term_memo) as the PTX descriptor checks
use it: the answer for a term built again (structurally equal, as the next kernel of a test run
builds it) is the kept one and equals a brute-force evaluation; a solver's "no value" (possibly a
timeout) is never kept; the memo keeps nothing past its bound."""
import z3

import verilayout.audit.ptx as X
from verilayout.prove.term_memo import MISSING, TermMemo
from verilayout.prove.ptx_values import SMEM

ALIGN, BELOW = 1024, 1 << 17       # the shared-memory assumption the PTX audit states


def brute_values(fn) -> set[int]:
    """``fn(base)`` at every base the assumption allows (aligned, below the bound), in Python."""
    return {fn(b) for b in range(0, BELOW, ALIGN)}


def test_a_rebuilt_term_is_answered_from_the_memo_with_the_brute_force_value(monkeypatch):
    calls = []
    real = X._constant_of
    monkeypatch.setattr(X, "_constant_of", lambda e, c, p: calls.append(1) or real(e, c, p))
    monkeypatch.setattr(X, "_TERMS", TermMemo())
    first = X._constant(z3.Extract(31, 17, SMEM + 1023) + 7)
    again = X._constant(z3.Extract(31, 17, SMEM + 1023) + 7)        # a new Python object, same term
    assert brute_values(lambda b: (((b + 1023) >> 17) + 7) & 0x7FFF) == {7}
    assert first == again == 7 and len(calls) == 1


def test_a_term_that_varies_is_kept_as_none_and_matches_brute_force(monkeypatch):
    monkeypatch.setattr(X, "_TERMS", TermMemo())
    e = z3.Extract(13, 4, SMEM)          # base bits 10-13 vary over the allowed bases
    assert len(brute_values(lambda b: (b >> 4) & 0x3FF)) > 1
    assert X._constant(e) is None
    assert X._TERMS.get(("constant", e.get_id())) is None          # kept: a sure answer


def test_a_solver_without_a_value_is_asked_again(monkeypatch):
    calls = []
    monkeypatch.setattr(X, "_TERMS", TermMemo())
    monkeypatch.setattr(X, "_constant_of", lambda e, c, p: calls.append(1) or (None, False))
    x = z3.BitVec("x_term_memo", 32)
    assert X._constant(x + SMEM) is None and X._constant(x + SMEM) is None
    assert len(calls) == 2 and X._TERMS.get(("constant", (x + SMEM).get_id())) is MISSING


def test_only_proofs_of_claims_are_kept(monkeypatch):
    monkeypatch.setattr(X, "_TERMS", TermMemo())
    x = z3.BitVec("y_term_memo", 8)
    p = X.Prover()
    assert X._prove((x & 7) + 0 == (x & 7) | 0, prover=p)[0] == "proved"
    assert X._prove(x == 3, prover=p)[0] == "counterexample"
    kept = [k for k in X._TERMS._kept if k[0] == "proved"]
    assert len(kept) == 1
    assert X._proves(p, z3.ULT(x & 7, 8)) and not X._proves(p, x == 3)
    assert [k[0] for k in X._TERMS._kept].count("proves") == 1


def test_the_memo_keeps_nothing_past_its_bound():
    m = TermMemo(2)
    xs = [z3.BitVec(f"z{i}_term_memo", 4) for i in range(3)]
    for i, x in enumerate(xs):
        m.put(("k", x.get_id()), (x,), i)
    assert len(m) == 2 and m.get(("k", xs[2].get_id())) is MISSING and m.get(("k", xs[1].get_id())) == 1
