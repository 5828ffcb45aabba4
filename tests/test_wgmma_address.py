"""The address IR behind the proofs: its certificates are checked against brute force.

Every claim here is checked by evaluating the function at every coordinate of its domain:
the split / affine certificates (the shortcut that decides equality without z3), rebase,
restrict, the z3 encoding, and equal_addresses itself.
"""
from __future__ import annotations

import numpy as np
import z3
from hypothesis import HealthCheck, given, settings, strategies as st

from verilayout.hw.nvidia.descriptor import ADDR_BITS, AddressFunction, BitSwizzle, Term
from verilayout.prove.wgmma import equal_addresses


def evaluate_split(s, mn, k):
    low = s.low.const
    high = s.high_const
    for c, x in (("mn", mn), ("k", k)):
        for bit in range(16):
            if (x >> bit) & 1:
                low ^= s.low.col(c, bit)
                high += s.high.get((c, bit), 0)
    return low + high


@st.composite
def functions(draw, extents=None):
    if extents is None:
        extents = (("mn", draw(st.sampled_from([8, 16, 24, 64]))), ("k", draw(st.sampled_from([8, 16, 32]))))
    terms = []
    for c in ("mn", "k"):
        lo = 0
        while lo < 6 and draw(st.booleans()):
            w = draw(st.integers(1, 3))
            last = draw(st.booleans())
            stride = draw(st.sampled_from([1, 2, 8, 16, 128, 384, 1024, 1152, 4096, 8192]))
            terms.append(Term(c, 1 << lo, 0 if last else 1 << w, stride))
            lo += w
            if last:
                break
    sw = None
    if draw(st.booleans()):
        b = draw(st.integers(1, 3))
        sw = BitSwizzle(b, 7, 3, phase=draw(st.sampled_from([0, 0, 1024, 3072])))
    xor_cols = ()
    if draw(st.booleans()) and (sw is None or sw.phase == 0):
        xor_cols = tuple((c, bit, draw(st.sampled_from([16, 128, 256, 2048])))
                         for c, bit in (("mn", 0), ("k", 1)) if draw(st.booleans()))
    return AddressFunction(extents, tuple(terms), const=draw(st.sampled_from([0, 128, 1024, 8192, 9216])),
                           xor_cols=xor_cols, swizzle=sw,
                           post=draw(st.sampled_from([0, 1024, 8192, 9216, 65536])))


def brute(f):
    return f.table()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(functions())
def test_split_certificates_are_sound(f):
    table = brute(f)
    cuts = f.cuts()
    for cut in range(ADDR_BITS + 1):
        s = f.split(cut)
        if s is None:
            continue
        assert (cuts >> cut) & 1
        d = f.domain
        for mn in range(d["mn"]):
            for k in range(d["k"]):
                assert evaluate_split(s, mn, k) == table[mn, k]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(functions(), st.integers(0, 1 << 16))
def test_rebase_subtracts_a_constant(f, c):
    c = f.fit(c)
    assert np.array_equal(f.rebase(c).table(), brute(f) - c)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(functions(extents=(("mn", 64), ("k", 32))), st.sampled_from([0, 8, 16, 24]),
       st.sampled_from([0, 8, 16]))
def test_restrict_reads_the_sub_block(f, mn_off, k_off):
    g = f.restrict({"mn": mn_off, "k": k_off}, {"mn": 8, "k": 16 if k_off % 16 == 0 else 8})
    want = brute(f)[mn_off:mn_off + 8, k_off:k_off + g.domain["k"]]
    assert np.array_equal(g.table(), want)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(functions(), st.data())
def test_z3_encoding_matches_evaluation(f, data):
    d = f.domain
    mn = data.draw(st.integers(0, d["mn"] - 1))
    k = data.draw(st.integers(0, d["k"] - 1))
    e = f.z3({"mn": z3.BitVecVal(mn, 8), "k": z3.BitVecVal(k, 8)})
    assert z3.simplify(e).as_long() == f.eval(mn, k)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_equal_addresses_agrees_with_brute_force(data):
    ext = (("mn", data.draw(st.sampled_from([8, 16, 24, 64]))), ("k", data.draw(st.sampled_from([8, 16]))))
    a = data.draw(functions(extents=ext))
    b = a if data.draw(st.booleans()) else data.draw(functions(extents=ext))
    if data.draw(st.booleans()):        # a near miss: one stride changed
        if b.terms:
            i = data.draw(st.integers(0, len(b.terms) - 1))
            t = b.terms[i]
            b = AddressFunction(b.extents, b.terms[:i] + (Term(t.coord, t.div, t.mod, t.stride * 2),)
                                + b.terms[i + 1:], b.const, b.xor_cols, b.xor_const, b.swizzle, b.post)
    status, cand, _ = equal_addresses(a, b)
    same = np.array_equal(brute(a), brute(b))
    assert status == ("proved" if same else "counterexample")
    if cand is not None:
        assert a.eval(*cand) != b.eval(*cand)
