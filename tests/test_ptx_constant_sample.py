"""The audit's non-constancy sample (``audit.ptx._varies``) against brute force, and
``prove.ptx_values.symbol_widths`` against z3's own walk of a term's free symbols.

Oracle: every assignment the shared-memory assumption allows (each 1024-aligned base below
128 KB, an 8-bit symbol at each of its 256 values), evaluated by z3's simplifier; the sample
may only say "varies" when brute force finds two values (it is a shortcut to ``None``, the
answer the solver would give)."""
from __future__ import annotations

import random

import z3
from z3.z3util import get_vars

from verilayout.audit.ptx import _varies
from verilayout.prove.ptx_values import SMEM, symbol_widths


def _terms(rng: random.Random, n: int) -> list[z3.BitVecRef]:
    v = z3.ZeroExt(24, z3.BitVec("v", 8))
    out = []
    for _ in range(n):
        a, b, c = rng.randrange(1 << 10), rng.randrange(1 << 8), rng.randrange(1, 1 << 6)
        lo = rng.randrange(0, 20)
        hi = rng.randrange(lo, 32)
        term = rng.choice([SMEM + a, SMEM + (v & b) * c, (v & 0) + SMEM * c, (v * c) & b, SMEM ^ (v << 10)])
        out.append(z3.Extract(hi, lo, term))
    return out


def _brute_varies(e: z3.BitVecRef, xs: range = range(256)) -> bool:
    seen = set()
    for base in range(0, 1 << 17, 1024):
        for x in xs:
            s = z3.simplify(z3.substitute(e, (SMEM, z3.BitVecVal(base, 32)), (z3.BitVec("v", 8), z3.BitVecVal(x, 8))))
            seen.add(s.as_long())
            if len(seen) > 1:
                return True
    return False


def test_sample_says_varies_only_when_brute_force_finds_two_values():
    rng = random.Random(7)
    said = 0
    for e in _terms(rng, 40):
        if _varies(e, {}):
            said += 1
            assert _brute_varies(e), e
    assert said > 5                         # the sample answered on a fair share of the terms


def test_sample_is_silent_on_constants():
    v = z3.BitVec("v", 8)
    for e in (z3.Extract(9, 0, SMEM), z3.Extract(31, 17, SMEM), z3.ZeroExt(24, v & 0) + 5):
        assert not _brute_varies(e, range(0, 256, 51))
        assert not _varies(e, {})


def test_symbol_widths_names_each_free_symbol_with_its_width():
    a, b = z3.BitVec("a", 8), z3.BitVec("b%r1@3,4", 16)
    e = z3.ZeroExt(24, a) + z3.ZeroExt(16, b) * SMEM
    want = {str(x): x.size() for x in get_vars(e)}
    assert symbol_widths(e) == dict(sorted(want.items())) == {"a": 8, "b%r1@3,4": 16, "smem_base": 32}
    assert symbol_widths(z3.If(z3.Bool("p"), SMEM, z3.BitVecVal(0, 32))) is None   # a Boolean symbol


def test_alignment_by_known_bits_holds_at_every_allowed_base():
    """When the known-bits route says a descriptor start is a multiple of the swizzle repeat,
    brute force over every 1024-aligned base below 128 KB (and the loop symbol's 256 values) agrees;
    and it does answer for a start whose offset is a multiple of the repeat."""
    from verilayout.audit.ptx import _aligned_by_known_bits
    v = z3.BitVec("v", 8)
    rng = random.Random(3)
    hits = 0
    for _ in range(30):
        c, m, rep = rng.randrange(64) * rng.choice([16, 256, 1024]), rng.choice([1, 2, 64, 128]), rng.choice([16, 32, 64])
        start = z3.Extract(17, 4, SMEM + c + (z3.ZeroExt(24, v) << (m.bit_length() + 8)))
        if _aligned_by_known_bits(start, rep):
            hits += 1
            for base in range(0, 1 << 17, 1024):
                for x in (0, 1, 77, 255):
                    s = z3.simplify(z3.substitute(start, (SMEM, z3.BitVecVal(base, 32)), (v, z3.BitVecVal(x, 8))))
                    assert s.as_long() % rep == 0, (start, base, x)
    assert hits > 0
    assert _aligned_by_known_bits(z3.Extract(17, 4, SMEM + 8192), 64)
    assert not _aligned_by_known_bits(z3.Extract(17, 4, SMEM + 8192 + 16), 64)
