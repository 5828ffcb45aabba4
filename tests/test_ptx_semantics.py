"""The one table of PTX integer semantics (``prove.ptx_semantics``): its z3 domain, its numpy domain
and the z3-to-numpy evaluator (``prove.z3_numpy``) on the z3 terms agree with each other and with
brute-force definitions written here from the PTX ISA (section 9.7.1 integer arithmetic, 9.7.8
logic and shift, 9.7.9.7 ``prmt``, 9.7.7 ``selp``/``setp``, 9.7.9.21 ``cvt``), on random values.
"""
from __future__ import annotations

import numpy as np
import pytest
import z3
from hypothesis import given, settings, strategies as st

from verilayout.prove.ptx_semantics import NUMPY, PRED, Z3, compute, form
from verilayout.prove.z3_numpy import evaluate


# ----- the PTX ISA's definitions, on Python integers ---------------------------------------------

def _s(x: int, w: int) -> int:
    """Two's-complement value of a ``w``-bit word."""
    return x - (1 << w) if x >> (w - 1) & 1 else x


def _tdiv(a: int, b: int) -> int:
    """C's truncating division (PTX ``div.s``)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _bfe(a: int, b: int, c: int, w: int, signed: bool) -> int:
    # PTX ISA, bfe: msb = w-1; pos = b & 0xff; len = c & 0xff; sbit = a[min(pos+len-1, msb)] for
    # signed types with len != 0, else 0; d[i] = a[pos+i] for i < len and pos+i <= msb, else sbit
    msb, pos, ln = w - 1, b & 0xFF, c & 0xFF
    sbit = 0 if not signed or ln == 0 else (a >> min(pos + ln - 1, msb)) & 1
    d = 0
    for i in range(w):
        bit = (a >> (pos + i)) & 1 if i < ln and pos + i <= msb else sbit
        d |= bit << i
    return d


def _bfi(a: int, b: int, c: int, d: int, w: int) -> int:
    # PTX ISA, bfi: f = b; for i < len and pos+i <= msb: f[pos+i] = a[i]
    msb, pos, ln = w - 1, c & 0xFF, d & 0xFF
    f = b
    i = 0
    while i < ln and pos + i <= msb:
        f = (f & ~(1 << (pos + i))) | (((a >> i) & 1) << (pos + i))
        i += 1
    return f


def _prmt(a: int, b: int, c: int) -> int:
    # PTX ISA, prmt (default mode): bytes b7..b4 of b and b3..b0 of a; selector nibble k picks
    # byte (nibble & 7), or with bit 3 set that byte's sign bit replicated
    both = a | (b << 32)
    d = 0
    for k in range(4):
        s = (c >> (4 * k)) & 0xF
        byte = (both >> (8 * (s & 7))) & 0xFF
        if s & 8:
            byte = 0xFF if byte & 0x80 else 0
        d |= byte << (8 * k)
    return d


def _divmod_ref(a: int, b: int, w: int, signed: bool, div: bool) -> int:
    m = (1 << w) - 1
    if b == 0:                     # unspecified in PTX; SMT-LIB's bvudiv/bvurem/bvsdiv/bvsrem
        if not div:
            return a
        return m if not signed or not a >> (w - 1) else 1
    if not signed:
        return a // b if div else a % b
    x, y = _s(a, w), _s(b, w)
    q = _tdiv(x, y)
    return (q if div else x - q * y) & m


def _wide(a: int, b: int, w: int, s: bool) -> int:
    return (_s(a, w) * _s(b, w) if s else a * b) % (1 << 2 * w)


# (opcode parts, source widths from the ISA, reference) for each modelled opcode and type
CASES: list[tuple[tuple[str, ...], tuple[int, ...], object]] = []
for t in ("u16", "s16", "u32", "s32", "u64", "s64"):
    w, sg = int(t[1:]), t[0] == "s"
    m = (1 << w) - 1
    CASES += [
        (("add", t), (w, w), lambda a, b, w=w, m=m: (a + b) & m),
        (("sub", t), (w, w), lambda a, b, w=w, m=m: (a - b) & m),
        (("add", "cc", t), (w, w), lambda a, b, w=w, m=m: (a + b) & m),
        (("mul", "lo", t), (w, w), lambda a, b, m=m: (a * b) & m),
        (("mul", "hi", t), (w, w), lambda a, b, w=w, s=sg: (_wide(a, b, w, s) >> w)),
        (("mad", "lo", t), (w, w, w), lambda a, b, c, m=m: (a * b + c) & m),
        (("mad", "hi", t), (w, w, w), lambda a, b, c, w=w, s=sg, m=m: ((_wide(a, b, w, s) >> w) + c) & m),
        (("min", t), (w, w), lambda a, b, w=w, s=sg: min(a, b, key=(lambda x: _s(x, w)) if s else None)),
        (("max", t), (w, w), lambda a, b, w=w, s=sg: max(b, a, key=(lambda x: _s(x, w)) if s else None)),
        (("div", t), (w, w), lambda a, b, w=w, s=sg: _divmod_ref(a, b, w, s, True)),
        (("rem", t), (w, w), lambda a, b, w=w, s=sg: _divmod_ref(a, b, w, s, False)),
        (("shr", t), (w, 32), lambda a, n, w=w, s=sg, m=m: ((_s(a, w) if s else a) >> min(n, w)) & m),
        (("selp", t), (w, w, PRED), lambda a, b, c: a if c else b),
    ]
    if sg:
        CASES += [(("neg", t), (w,), lambda a, m=m: -a & m),
                  (("abs", t), (w,), lambda a, w=w, m=m: abs(_s(a, w)) & m)]
    if w < 64:
        CASES += [(("mul", "wide", t), (w, w), lambda a, b, w=w, s=sg: _wide(a, b, w, s)),
                  (("mad", "wide", t), (w, w, 2 * w),
                   lambda a, b, c, w=w, s=sg: (_wide(a, b, w, s) + c) % (1 << 2 * w))]
for t in ("b16", "b32", "b64"):
    w = int(t[1:])
    m = (1 << w) - 1
    CASES += [
        (("and", t), (w, w), lambda a, b: a & b), (("or", t), (w, w), lambda a, b: a | b),
        (("xor", t), (w, w), lambda a, b: a ^ b), (("not", t), (w,), lambda a, m=m: ~a & m),
        (("shl", t), (w, 32), lambda a, n, w=w, m=m: (a << min(n, w)) & m),
        (("shr", t), (w, 32), lambda a, n, w=w: a >> min(n, w)),
        (("mov", t), (w,), lambda a: a),
    ]
for t in ("u32", "s32", "u64", "s64"):
    w = int(t[1:])
    CASES.append((("bfe", t), (w, 32, 32), lambda a, b, c, w=w, s=t[0] == "s": _bfe(a, b, c, w, s)))
for t in ("b32", "b64"):
    w = int(t[1:])
    CASES.append((("bfi", t), (w, w, 32, 32), lambda a, b, c, d, w=w: _bfi(a, b, c, d, w)))
CASES += [(("prmt", "b32"), (32, 32, 32), _prmt),
          (("and", "pred"), (1, 1), lambda a, b: a & b), (("not", "pred"), (1,), lambda a: a ^ 1)]
_CMP = {"eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
        "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y}
for t in ("u16", "s16", "u32", "s32", "b32", "u64", "s64"):
    w, sg = int(t[1:]), t[0] == "s"
    for cmp in ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"):
        rel = _CMP[{"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}.get(cmp, cmp)]
        signed = sg and cmp not in ("lo", "ls", "hi", "hs")

        def ref(a, b, w=w, rel=rel, signed=signed):
            return rel(_s(a, w), _s(b, w)) if signed else rel(a, b)
        CASES.append((("setp", cmp, t), (w, w), ref))
        if cmp in ("lt", "ne"):
            CASES.append((("setp", cmp, "and", t), (w, w, PRED), lambda a, b, c, ref=ref: ref(a, b) and c))
            CASES.append((("setp", cmp, "xor", t), (w, w, PRED), lambda a, b, c, ref=ref: ref(a, b) != c))
for dst in ("u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64"):
    for src in ("u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64"):
        dw, sw = int(dst[1:]), int(src[1:])

        # 9.7.9.21 / 6.5: wider: sign-extend a signed source, zero-extend an unsigned one; narrower: chop
        def conv(a, dw=dw, sw=sw, ss=src[0] == "s"):
            return (_s(a, sw) if ss else a) % (1 << dw)
        CASES.append((("cvt", dst, src), (sw,), conv))

IDS = [".".join(p) for p, _, _ in CASES]


def _value(w: int):
    """Random ``w``-bit words, the edges (0, 1, all ones, the sign bit, small counts) often."""
    if w == PRED:
        return st.booleans()
    edges = [0, 1, 2, (1 << w) - 1, 1 << (w - 1), (1 << (w - 1)) - 1, w - 1, w, w + 1, 8, 0xFF]
    return st.one_of(st.sampled_from([e % (1 << w) for e in edges]), st.integers(0, (1 << w) - 1))


def _z3_term(parts, widths, vals):
    """The z3 domain's term over fresh symbols (constants where the z3 domain needs them: the
    position and length of bfe/bfi, prmt's selector), and the symbol -> value pairs."""
    fixed = {"bfe": (1, 2), "bfi": (2, 3), "prmt": (2,)}.get(parts[0], ())
    srcs, pairs = [], []
    for k, (w, v) in enumerate(zip(widths, vals)):
        if k in fixed:
            srcs.append(z3.BitVecVal(v, w))
        elif w == PRED:
            x = z3.Bool(f"p{k}")
            srcs.append(x)
            pairs.append((x, z3.BoolVal(v), v))
        else:
            x = z3.BitVec(f"x{k}", w)
            srcs.append(x)
            pairs.append((x, z3.BitVecVal(v, w), v))
    return compute(Z3, parts, srcs), pairs


def _plain(v) -> int:
    v = np.asarray(v).reshape(-1)[0]
    return bool(v) if isinstance(v, (bool, np.bool_)) else int(v)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_form_reads_the_isa_widths(case):
    parts, widths, _ = case
    assert form(parts).sources == widths


@settings(max_examples=1200, deadline=None)
@given(st.data())
def test_both_domains_and_the_evaluator_compute_the_isa_definition(data):
    parts, widths, ref = data.draw(st.sampled_from(CASES), label="opcode")
    vals = [data.draw(_value(w), label=f"source {k}") for k, w in enumerate(widths)]
    want = ref(*vals)
    f = form(parts)
    # numpy domain: the values as one-element arrays (predicates as bool arrays)
    np_srcs = [np.array([v], dtype=bool if w == PRED else np.uint64) for v, w in zip(vals, widths)]
    got_np = _plain(compute(NUMPY, parts, np_srcs))
    # z3 domain: the term over symbols, then the symbols replaced by the values and simplified
    term, pairs = _z3_term(parts, widths, vals)
    got_z3 = z3.simplify(z3.substitute(term, *[(x, c) for x, c, _ in pairs]) if pairs else term)
    got_z3 = z3.is_true(got_z3) if z3.is_bool(got_z3) else got_z3.as_long()
    # the one z3-to-numpy evaluator on the same term
    got_ev = _plain(evaluate(term, {str(x): np.array([v], dtype=bool if z3.is_bool(x) else np.uint64)
                                    for x, _, v in pairs}))
    if f.result == PRED:
        want = bool(want)
    assert got_np == got_z3 == got_ev == want, (parts, vals)


@pytest.mark.parametrize("parts", [("add", "f32"), ("add", "sat", "s32"), ("mul", "s32"), ("cvt", "rn", "f32", "s32"),
                                   ("setp", "lt", "f32"), ("mul24", "lo", "s32"), ("shf", "l", "wrap", "b32")],
                         ids=lambda p: ".".join(p))
def test_what_the_table_does_not_hold_is_not_modelled(parts):
    # floats, saturation, mul without .lo/.hi/.wide, 24-bit multiplies, funnel shifts: None
    assert form(parts) is None and compute(NUMPY, parts, [np.uint64(1), np.uint64(2)]) is None


def test_z3_bitfields_need_constant_positions():
    # bfe/bfi/prmt build z3 extracts at fixed bits: a variable position or selector is not modelled
    x, p = z3.BitVec("x", 32), z3.BitVec("p", 32)
    assert compute(Z3, ("bfe", "u32"), [x, p, z3.BitVecVal(4, 32)]) is None
    assert compute(Z3, ("prmt", "b32"), [x, x, p]) is None
    # ... and the numpy domain takes each thread's own position: bits 4..7 of 0xABCD at pos 4, 8 at pos 8
    got = compute(NUMPY, ("bfe", "u32"), [np.array([0xABCD, 0xABCD], dtype=np.uint64),
                                          np.array([4, 8], dtype=np.uint64), np.uint64(4)])
    assert got.tolist() == [0xC, 0xB]
