"""Loop-carried bounds proved by induction (``verilayout.prove.ptx_values``) where the stage register
is reduced through a compiler's signed division by a constant: the magic-number quotient
(``mul.hi.s32`` + shifts) and the remainder (``mul.lo`` + ``sub``), and two stage registers bounded
together. Every expected value is derived here: by brute force over 16-bit ints, by Python's own
integer division, or by the modular arithmetic written in each test."""
from __future__ import annotations

import random

import z3

from verilayout.frontends.ptx import parse_ptx
from verilayout.prove.ptx_values import PtxValues, division_idiom, magic_divisor


def _trunc_div(n: int, d: int) -> int:
    """PTX ISA ``div.s32``: the quotient rounded toward zero."""
    q = abs(n) // d
    return q if n >= 0 else -q


def _magic_quotient(n: int, m: int, s: int, w: int) -> int:
    """What ``mul.hi.s`` then ``shr.s`` by ``s`` plus the high product's sign bit compute (integers)."""
    h = (n * m) >> w                      # floor of the 2w-bit signed product's high half
    return (h >> s) + (1 if h < 0 else 0)


def test_magic_divisor_agrees_with_brute_force_on_every_16_bit_int():
    """For each (m, s) that magic_divisor accepts at w = 16, the quotient sequence equals truncated
    division by its d for all 65536 inputs; and the well-known pairs are found."""
    ns = range(-(1 << 15), 1 << 15)
    accepted = 0
    for m in list(range(1, 1 << 15, 97)) + [0x6667, 0x5556, 0x4925]:
        for s in range(0, 4):
            d = magic_divisor(m, s, 16)
            if d is None:
                continue
            accepted += 1
            assert all(_magic_quotient(n, m, s, 16) == _trunc_div(n, d) for n in ns), (m, s, d)
    assert accepted > 10
    # 16-bit: 0x6667 = ceil(2^17 / 5) (2^17 = 131072, 5 * 26215 = 131075)
    assert magic_divisor(0x6667, 1, 16) == 5


def test_magic_divisor_of_the_pingpong_kernel_on_32_bit_samples():
    """nvcc's ``mul.hi.s32 x, 1717986919`` then ``>> 1`` (quack's pingpong PTX): 1717986919 =
    ceil(2^33 / 5); checked against Python's division on random and boundary 32-bit ints."""
    assert 1717986919 == -(-(1 << 33) // 5)
    d = magic_divisor(1717986919, 1)
    assert d == 5
    rng = random.Random(7)
    ns = [-(1 << 31), (1 << 31) - 1, -1, 0, 1, 4, 5, -5, -6] + [rng.randrange(-(1 << 31), 1 << 31) for _ in range(20000)]
    assert all(_magic_quotient(n, 1717986919, 1, 32) == _trunc_div(n, 5) for n in ns)


def test_division_idiom_keeps_the_value():
    """The rewritten term equals the original for random values of the symbol (z3's own evaluation)."""
    n = z3.BitVec("n", 32)
    h = z3.Extract(63, 32, z3.SignExt(32, n) * z3.SignExt(32, z3.BitVecVal(1717986919, 32)))
    q_raw = (h >> 1) + z3.LShR(h, 31)
    q = division_idiom(q_raw)
    r_raw = n - q * 5
    r = division_idiom(r_raw)
    assert z3.is_app_of(r, z3.Z3_OP_BSREM)
    rng = random.Random(3)
    for v in [0, 1, 4, 5, (1 << 32) - 1, 1 << 31] + [rng.randrange(1 << 32) for _ in range(200)]:
        sub = (n, z3.BitVecVal(v, 32))
        assert z3.simplify(z3.substitute(r, sub)).as_long() == z3.simplify(z3.substitute(r_raw, sub)).as_long()
        sv = v - (1 << 32) if v >> 31 else v
        assert z3.simplify(z3.substitute(r, sub)).as_long() == (sv - 5 * _trunc_div(sv, 5)) % (1 << 32)


_RING = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .align 4 .b8 k_param_0[12])
{{
ld.param.b32 %r10, [k_param_0+4];
shr.s32 %r11, %r10, 6;
mov.b32 %r1, 0;
L:
shl.b32 %r20, %r1, 10;
add.s32 %r3, %r1, 1;
setp.eq.b32 %p1, %r3, {wrap};
selp.b32 %r1, 0, %r3, %p1;
setp.ne.b32 %p2, %r20, 0;
@%p2 bra L;
add.s32 %r4, %r1, %r11;
mul.hi.s32 %r5, %r4, 1717986919;
shr.u32 %r6, %r5, 31;
shr.s32 %r7, %r5, 1;
add.s32 %r8, %r7, %r6;
mul.lo.s32 %r9, %r8, 5;
sub.s32 %r2, %r4, %r9;
mov.b32 %r1, %r2;
bra L;
}}
"""


def _stage_law(wrap: int, facts: dict | None):
    m = parse_ptx(_RING.format(wrap=wrap))
    use = next(i for i in m.instrs if i.opcode.startswith("shl"))
    v = PtxValues(m, "k", nonneg_params=facts)
    x = v.reg("%r1", at=use)
    return v.laws(x)


def test_stage_reduced_mod_5_by_a_signed_division_is_proved_below_5():
    """s' = (s + k) mod 5 (signed remainder through the magic quotient) and s' = (s + 1 == 5 ? 0 : s + 1):
    with K >= 0 (a shape extent) and k = K >> 6 <= 2^25, 0 <= s + k < 2^31 (no wrap), so (s + k) rem 5
    is in [0, 5) (truncated remainder of a non-negative int); the two registers are bounded together."""
    assert all(0 <= (s + k) - 5 * _trunc_div(s + k, 5) < 5 for s in range(5) for k in (0, 1, 7, 1 << 25))
    laws = _stage_law(5, {("k_param_0", 4): "a shape extent"})
    assert any(t.startswith("loop-carried %r1 < 5") for _, t in laws)
    assert any("%r10 (PTX line 6) >= 0: a shape extent" in t for _, t in laws)


def test_without_the_sign_of_k_the_bound_is_not_proved():
    """K = -64, k = -1 from s = 0 gives (0 - 1) rem 5 = -1 (PTX rem.s32 takes the dividend's sign), a huge
    unsigned stage: no bound below 2^32 - 1 may be proved without k >= 0."""
    assert (-1) - 5 * _trunc_div(-1, 5) == -1
    assert not any("< 5" in t for _, t in _stage_law(5, None))


def test_planted_wrap_at_6_never_proves_below_5():
    """The wrap compare changed from 5 to 6: s reaches 5 (s = 4 -> 5 is not wrapped), so no law < 5."""
    laws = _stage_law(6, {("k_param_0", 4): "a shape extent"})
    assert not any("%r1 < 5" in t for _, t in laws)
    assert any(t.startswith("loop-carried %r1 < 6") for _, t in laws)   # s' < 6 holds: s < 6 -> s + 1 < 6 or 0
