"""Verdicts and z3 encodings: the GF(2) path and the z3 path must agree with brute force."""
from __future__ import annotations

import itertools

import pytest
import z3
from hypothesis import given, settings, strategies as st

from verilayout import LayoutError, LinearLayout, Verdict, equal
from verilayout.core.smt import check_claim
from verilayout.core.smt import FunctionLayout, check_injective, input_vars, z3_apply_linear


@st.composite
def pairs(draw):
    out = {"dim0": 1 << draw(st.integers(0, 3)), "dim1": 1 << draw(st.integers(0, 2))}
    nb = {"register": draw(st.integers(0, 3)), "lane": draw(st.integers(0, 3))}

    def one():
        return LinearLayout({n: [[draw(st.integers(0, s - 1)) for s in out.values()]
                                 for _ in range(k)] for n, k in nb.items()}, out, False)
    a = one()
    b = one() if draw(st.booleans()) else a
    return a, b


def brute_equal(a: LinearLayout, b: LinearLayout) -> bool:
    names = a.in_dim_names
    for vals in itertools.product(*(range(a.in_dims[n]) for n in names)):
        c = dict(zip(names, vals))
        if a.apply(c) != b.apply(c):
            return False
    return True


def as_z3_only(L: LinearLayout) -> FunctionLayout:
    """Hide linearity so `equal` must take the z3 path."""
    return FunctionLayout(L.in_dims, L.out_dims, L.apply, lambda v: z3_apply_linear(L, v))


@settings(max_examples=60, deadline=None)
@given(pairs())
def test_equal_agrees_with_brute_force_on_both_paths(p):
    a, b = p
    truth = brute_equal(a, b)
    for v in (equal(a, b), equal(as_z3_only(a), as_z3_only(b))):
        assert v.proved == truth
        if not truth:
            cex = v.counterexample
            inp = {n: cex[n] for n in a.in_dim_names}
            # the counterexample really distinguishes the two layouts
            assert a.apply(inp) == cex["lhs"] and b.apply(inp) == cex["rhs"]
            assert cex["lhs"] != cex["rhs"]


@settings(max_examples=60, deadline=None)
@given(pairs())
def test_injectivity_agrees_with_brute_force(p):
    a, _ = p
    images = a.apply_all().tolist()
    truth = len(set(images)) == len(images)
    for v in (check_injective(a), check_injective(as_z3_only(a))):
        assert v.proved == truth


def test_timeout_is_unknown_never_proved():
    # The claim is false (x = p, y = q is a counterexample), but finding it means factoring
    # a 64-bit semiprime by bit-blasting: far beyond a 50 ms budget. The verdict must be
    # 'unknown' (never 'proved').
    p, q = 4294967291, 4294967279  # the two largest primes below 2**32
    x, y = z3.BitVec("x", 64), z3.BitVec("y", 64)
    claim = z3.Implies(z3.And(z3.UGT(x, 1), z3.UGT(y, 1), z3.ULT(x, 2**32), z3.ULT(y, 2**32)),
                       x * y != p * q)
    v = check_claim(claim, variables={"x": x, "y": y}, timeout_ms=50)
    assert v.status == "unknown" and not v.proved and v.counterexample is None
    assert "timeout" in v.reason


def test_verdict_refuses_truthiness_and_bad_status():
    with pytest.raises(TypeError):
        bool(Verdict.unknown("gave up"))
    with pytest.raises(ValueError):
        Verdict("maybe", "x")


def test_equal_rejects_mismatched_dims():
    with pytest.raises(LayoutError, match="input dims differ"):
        equal(LinearLayout.identity1D(4, "i", "o"), LinearLayout.identity1D(8, "i", "o"))


def test_input_vars_widths():
    v = input_vars({"lane": 32, "warp": 1})
    assert v["lane"].size() == 5 and v["warp"].size() == 1
