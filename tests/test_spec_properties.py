"""One property test per spec obligation kind: the verdict of a random small instance equals a
brute-force answer computed here (issue 11: "a property test per obligation kind compares the
verdict with brute force on random small instances").

The brute force is independent of the code under test: a linear layout's value is the XOR of
the bases of the set input bits (Triton's definition, seed 004); a CuTe offset is the inner
product of the coordinate with the strides (seed 003); bank counts come from
``tests/reference/banks.py`` (every byte of every access enumerated); descriptor fields from
the bit positions of the PTX ISA's matrix-descriptor table, written out below.
"""
from __future__ import annotations

import itertools
import json
import random

from hypothesis import given, settings, strategies as st

from tests.reference.banks import auto_count
from tests.reference.strategies import random_reg, random_smem
from verilayout.spec.format import parse_spec
from verilayout.spec.kinds import registry
from verilayout.spec.runner import evaluate

REG = registry()
SETTINGS = settings(max_examples=25, deadline=None)


# ---------------------------------------------------------------- helpers ------------------

def run(text: str) -> str:
    """The status of the single obligation of a spec text."""
    spec = parse_spec(text, "prop.toml", REG)
    out = evaluate(spec, spec.obligations[0])
    assert out.status != "error", out.error
    return out.status


def layout_toml(name: str, bases: dict, out_dims: dict) -> str:
    b = ", ".join(f"{k} = {json.dumps(v)}" for k, v in bases.items())
    o = ", ".join(f"{k} = {v}" for k, v in out_dims.items())
    return f"[layouts.{name}]\nbases = {{ {b} }}\nout_dims = {{ {o} }}\n\n"


def value(bases: dict, ins: dict) -> list[int]:
    """Brute force: XOR of the bases of every set bit of every input (seed 004)."""
    n_out = len(next(iter(b for bs in bases.values() for b in bs), [0, 0]))
    acc = [0] * max(n_out, 2)
    for dim, bs in bases.items():
        for bit, vec in enumerate(bs):
            if ins.get(dim, 0) >> bit & 1:
                acc = [a ^ v for a, v in zip(acc, vec)]
    return acc


def all_inputs(bases: dict):
    names = list(bases)
    for vals in itertools.product(*[range(1 << len(bases[n])) for n in names]):
        yield dict(zip(names, vals))


@st.composite
def linear(draw, out=(4, 4), dims=("a", "b"), max_bits=3):
    """A random (not necessarily injective or surjective) linear layout into ``out``."""
    xb, yb = out[0].bit_length() - 1, out[1].bit_length() - 1
    vec = st.tuples(st.integers(0, (1 << xb) - 1), st.integers(0, (1 << yb) - 1)).map(list)
    bases = {d: draw(st.lists(vec, min_size=0, max_size=max_bits)) for d in dims}
    if not any(bases.values()):
        bases[dims[0]] = [draw(vec)]
    return bases


UNITS = [[1, 0], [2, 0], [0, 1], [0, 2]]


@st.composite
def bijection(draw):
    """A random invertible 16 -> 4x4 layout: the unit vectors permuted, some XOR-mixed."""
    vecs = [list(v) for v in draw(st.permutations(UNITS))]
    for i in range(1, 4):
        if draw(st.booleans()):
            j = draw(st.integers(0, i - 1))
            vecs[i] = [p ^ q for p, q in zip(vecs[i], vecs[j])]
    return {"a": vecs[:2], "b": vecs[2:]}


# layouts for which some of FORMULAS hold (x = a, y = b; swapped; a split over x and y; XOR)
KNOWN = [({"a": [[1, 0], [2, 0]], "b": [[0, 1], [0, 2]]}, "a", "b"),
         ({"a": [[0, 1], [0, 2]], "b": [[1, 0], [2, 0]]}, "b", "a"),
         ({"a": [[0, 1], [1, 0]], "b": []}, "a // 2", "a % 2"),
         ({"a": [[1, 1], [2, 2]], "b": [[0, 1], [0, 2]]}, "a", "xor(a, b)")]


def image(bases):
    return [tuple(value(bases, i)) for i in all_inputs(bases)]


OUT = {"x": 4, "y": 4}


def ob(kind: str, **kw) -> str:
    body = "".join(f"{k} = {v}\n" for k, v in kw.items())
    return f'[[obligation]]\nname = "p"\nkind = "{kind}"\n{body}'


# ---------------------------------------------------------------- GF(2) kinds --------------

@SETTINGS
@given(linear())
def test_injective(bases):
    img = image(bases)
    want = "proved" if len(set(img)) == len(img) else "counterexample"
    assert run(layout_toml("l", bases, OUT) + ob("injective", layout='"l"')) == want


@SETTINGS
@given(linear(max_bits=4))
def test_surjective(bases):
    want = "proved" if len(set(image(bases))) == 16 else "counterexample"
    assert run(layout_toml("l", bases, OUT) + ob("surjective", layout='"l"')) == want


@SETTINGS
@given(st.one_of(linear(max_bits=4), bijection()))
def test_invertible(bases):
    img = image(bases)
    want = "proved" if len(img) == 16 and len(set(img)) == 16 else "counterexample"
    assert run(layout_toml("l", bases, OUT) + ob("invertible", layout='"l"')) == want


@SETTINGS
@given(linear(), st.data())
def test_equal(lhs, data):
    # the right side: the same bases (sometimes one vector changed), same input sizes
    rhs = {d: [list(v) for v in bs] for d, bs in lhs.items()}
    if data.draw(st.booleans()):
        d = data.draw(st.sampled_from([d for d in rhs if rhs[d]]))
        i = data.draw(st.integers(0, len(rhs[d]) - 1))
        rhs[d][i] = [data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))]
    want = "proved" if image(lhs) == image(rhs) else "counterexample"
    text = layout_toml("l", lhs, OUT) + layout_toml("r", rhs, OUT) + ob("equal", lhs='"l"', rhs='"r"')
    assert run(text) == want


@SETTINGS
@given(linear(), st.data())
def test_bases(bases, data):
    claim = {d: [list(v) for v in bs] for d, bs in bases.items()}
    if data.draw(st.booleans()):
        d = data.draw(st.sampled_from([d for d in claim if claim[d]]))
        claim[d][0] = [data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))]
    want = "proved" if claim == bases else "counterexample"
    expected = "{ " + ", ".join(f"{d} = {json.dumps(v)}" for d, v in claim.items()) + " }"
    assert run(layout_toml("l", bases, OUT) + ob("bases", layout='"l"', expected=expected)) == want


@SETTINGS
@given(linear(), st.data())
def test_maps(bases, data):
    ins = data.draw(st.sampled_from(list(all_inputs(bases))))
    out = value(bases, ins)
    if data.draw(st.booleans()):
        out = [data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))]
    want = "proved" if out == value(bases, ins) else "counterexample"
    pin = "{ " + ", ".join(f"{k} = {v}" for k, v in ins.items()) + " }"
    pts = f"[[{pin}, {{ x = {out[0]}, y = {out[1]} }}]]"
    assert run(layout_toml("l", bases, OUT) + ob("maps", layout='"l"', points=pts)) == want


FORMULAS = ["a", "a // 2", "a % 2", "a * 2", "a / 2", "xor(a, b)", "b", "(a + b) % 4", "a // 2 + b"]


@SETTINGS
@given(st.one_of(linear().map(lambda b: (b, "a", "b")), st.sampled_from(KNOWN)), st.booleans(),
       st.sampled_from(FORMULAS))
def test_formula(known, keep, other):
    # a layout with formulas that may hold (the KNOWN ones do, by construction), one sometimes
    # replaced by another formula; the brute force below decides
    bases, fx, fy = known
    if not keep:
        fx = other
    from fractions import Fraction

    def ev(f, a, b):
        env = {"a": Fraction(a), "b": Fraction(b), "xor": lambda p, q: Fraction(int(p) ^ int(q))}
        return eval(f, {"__builtins__": {}}, env)  # our own fixed formulas, Fraction arithmetic

    ok = all(value(bases, i) == [ev(fx, i.get("a", 0), i.get("b", 0)), ev(fy, i.get("a", 0), i.get("b", 0))]
             for i in all_inputs(bases))
    want = "proved" if ok else "counterexample"
    outs = f'{{ x = "{fx}", y = "{fy}" }}'
    assert run(layout_toml("l", bases, OUT) + ob("formula", layout='"l"', outputs=outs)) == want


@SETTINGS
@given(st.permutations(range(4)), st.data())
def test_table_offsets(perm, data):
    # a shared layout over a 4x4 tile: offset bits -> (row, col) bits through a permutation
    units = [[0, 1], [0, 2], [1, 0], [2, 0]]
    bases = {"offset": [units[p] for p in perm]}
    rows = [[0] * 4 for _ in range(4)]
    for i in all_inputs(bases):
        r, c = value(bases, i)
        rows[r][c] = i["offset"]
    claim = [list(r) for r in rows]
    if data.draw(st.booleans()):
        r, c = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))
        claim[r][c] = data.draw(st.integers(0, 15))
    want = "proved" if claim == rows else "counterexample"
    text = layout_toml("s", bases, {"dim0": 4, "dim1": 4}) + ob("table", layout='"s"', rows=json.dumps(claim))
    assert run(text) == want


# ---------------------------------------------------------------- CuTe offsets -------------

@SETTINGS
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(0, 9)), min_size=1, max_size=3), st.data())
def test_offsets(modes, data):
    shape = [s for s, _ in modes]
    stride = [d for _, d in modes]
    coord = [data.draw(st.integers(0, s - 1)) for s in shape]
    off = sum(c * d for c, d in zip(coord, stride))          # seed 003: inner product
    claim = off if data.draw(st.booleans()) else off + data.draw(st.integers(1, 5))
    text_l = "(" + ",".join(map(str, shape)) + "):(" + ",".join(map(str, stride)) + ")"
    want = "proved" if claim == off else "counterexample"
    text = (f'[layouts.c]\ntext = "{text_l}"\n\n'
            + ob("offsets", layout='"c"', points=f"[[{json.dumps(coord)}, {claim}]]"))
    assert run(text) == want


# ---------------------------------------------------------------- banks --------------------

BANK_SHAPES = [[8, 32], [16, 16], [32, 32]]


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10 ** 9), st.sampled_from([16, 32]), st.sampled_from(BANK_SHAPES))
def test_max_wavefronts(seed, bits, shape):
    rng = random.Random(seed)
    reg, smem = random_reg(rng, shape), random_smem(rng, shape)
    _, waves = auto_count(reg, smem, bits)
    text = (layout_toml("r", reg.bases, {"dim0": shape[0], "dim1": shape[1]})
            + layout_toml("s", smem.bases, {"dim0": shape[0], "dim1": shape[1]}))
    # max_wavefronts: holds iff the brute-force count is at most the bound
    bound = rng.choice([waves, max(1, waves - 1)])
    status = run(text + ob("max_wavefronts", reg='"r"', smem='"s"', elem_bits=bits, wavefronts=bound))
    assert status == ("proved" if waves <= bound else "counterexample")


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10 ** 9), st.sampled_from([16, 32]), st.sampled_from(BANK_SHAPES))
def test_conflict_free(seed, bits, shape):
    rng = random.Random(seed)
    reg, smem = random_reg(rng, shape), random_smem(rng, shape, mix=rng.choice([0.0, 0.3]))
    elems, waves = auto_count(reg, smem, bits)
    # the ideal: one wavefront per 128 bytes the warp moves with one instruction
    ideal = max(1, 32 * elems * bits // 1024)
    text = (layout_toml("r", reg.bases, {"dim0": shape[0], "dim1": shape[1]})
            + layout_toml("s", smem.bases, {"dim0": shape[0], "dim1": shape[1]}))
    status = run(text + ob("conflict_free", reg='"r"', smem='"s"', elem_bits=bits))
    assert status == ("proved" if waves <= ideal else "counterexample")


# ---------------------------------------------------------------- wgmma descriptors -------

@SETTINGS
@given(st.integers(0, (1 << 14) - 1), st.integers(0, (1 << 14) - 1), st.integers(0, (1 << 14) - 1),
       st.sampled_from([0, 1, 2, 3]), st.booleans())
def test_descriptor_fields(start, lbo, sbo, mode, lie):
    # sm_90 matrix descriptor (PTX ISA, "Matrix Descriptor Format"): start address bits 0-13,
    # leading byte offset bits 16-29, stride byte offset bits 32-45, layout type bits 62-63
    val = start | lbo << 16 | sbo << 32 | mode << 62
    claim_sbo = sbo ^ 1 if lie else sbo
    fields = f'{{ start_field = {start}, lbo_field = {lbo}, sbo_field = {claim_sbo}, layout_type = {mode} }}'
    text = (f'[[obligation]]\nname = "p"\nkind = "descriptor_fields"\n'
            f'descriptor = {{ value = "{val:#x}" }}\nfields = {fields}\n')
    assert run(text) == ("counterexample" if lie else "proved")


# ---------------------------------------------------------------- wgmma N ------------------

# seed 001 (001_afc8e6ab5857294e.txt, "Accumulator D"): .f32 accumulators take N = 8*i for
# i = 1..32; .s32 (s8/u8 multiplicands) take N = 8*i for i = 1..4 and 16*i for i = 3..16
SEED_N = {("f16", "f32"): [8 * i for i in range(1, 33)],
          ("s8", "s32"): [8 * i for i in range(1, 5)] + [16 * i for i in range(3, 17)]}


@SETTINGS
@given(st.sampled_from(sorted(SEED_N)), st.sampled_from(["keep", "drop", "add"]), st.data())
def test_wgmma_n(types, edit, data):
    dtype, acc = types
    true = SEED_N[types]
    claim = list(true)
    if edit == "drop":
        claim.remove(data.draw(st.sampled_from(true)))
    elif edit == "add":
        claim.append(data.draw(st.sampled_from([n for n in range(1, 300) if n not in true])))
    text = f'[[obligation]]\nname = "p"\nkind = "wgmma_n"\ndtype = "{dtype}"\nacc = "{acc}"\nn = {claim}\n'
    assert run(text) == ("proved" if sorted(claim) == sorted(true) else "counterexample")


# ---------------------------------------------------------------- wgmma fragments -----------

@SETTINGS
@given(st.integers(1, 32), st.sampled_from(["f32", "f16"]), st.integers(-1, 1), st.integers(-1, 1))
def test_fragment_table(i, acc, de, dr):
    # seed 001, accumulator D of m64nNk16: .f32 -> N/2 registers of one element each;
    # .f16 -> N/4 .f16x2 registers holding two elements each (N/2 elements per thread)
    n = 8 * i
    elements = n // 2
    registers = n // 2 if acc == "f32" else n // 4
    text = (f'[layouts.d]\nfragment = {{ shape = "m64n{n}k16", operand = "D", dtype = "f16", acc = "{acc}" }}\n\n'
            + ob("fragment_table", fragment='"d"', elements=elements + de, registers=registers + dr))
    assert run(text) == ("proved" if de == dr == 0 else "counterexample")


# ---------------------------------------------------------------- 2D block loads ------------

# specs/blockload.toml's A operand: 128x32 bf16, DPAS repeatCount 8 x repCluster 2 = 16 rows per
# repetition, warpsPerCTA [4, 2] puts the next repetition 4 x 16 = 64 rows below: sub-group 0
# reads rows 0..15 and 64..79, all 32 columns
A_TEXT = ("tensor<128x32xbf16, #ttg.dot_op<{opIdx = 0, parent = #ttig.dpas<{repeatCount = 8, systolicDepth = 8, "
          "executionSize = 16, opsPerChan = 2, threadsPerWarp = 16, warpsPerCTA = [4, 2], repCluster = [2, 2]}>, "
          "kWidth = 1}>>")
NEEDED_ROWS = set(range(0, 16)) | set(range(64, 80))
STRIPS = [0, 8, 16, 32, 64, 72]          # 8-row x 32-column loads (16 bf16 x 2 arrays) at these rows


@settings(max_examples=20, deadline=None)
@given(st.sets(st.sampled_from(STRIPS), min_size=1))
def test_blockload_covers(ys):
    loads = ", ".join(f"{{ elem_bytes = 2, width = 16, height = 8, array_length = 2, x = 0, y = {y} }}"
                      for y in sorted(ys))
    text = (f'[layouts.A]\ntext = "{A_TEXT}"\n\n'
            f'[[obligation]]\nname = "p"\nkind = "blockload_covers"\noperand = "A"\n'
            f'plan = {{ operand = "A", loads = [{loads}] }}\n')
    covered = {r for y in ys for r in range(y, y + 8)}
    assert run(text) == ("proved" if NEEDED_ROWS <= covered else "counterexample")


@settings(max_examples=6, deadline=None)
@given(st.integers(1, 4))
def test_plan_minimal(n):
    # a load is at most 32 rows tall (Xe2), rows 0..15 and 64..79 are 80 rows apart: one load
    # cannot reach both, and two 16-row x 32-column loads read them all -> the fewest is 2
    text = (f'[layouts.A]\ntext = "{A_TEXT}"\n\n'
            f'[[obligation]]\nname = "p"\nkind = "plan_minimal"\noperand = "A"\nloads = {n}\n')
    assert run(text) == ("proved" if n == 2 else "counterexample")


# ---------------------------------------------------------------- descriptor vs layout -------

K128 = "Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_8),(_64,_1)):((_64,_512),(_1,_0))"


@settings(max_examples=20, deadline=None)
@given(st.sampled_from([1, 2, 8, 32, 64]), st.sampled_from([8, 32, 64, 128]), st.sampled_from(["128B", "64B"]))
def test_descriptor_matches(lbo, sbo, swizzle):
    # CUTLASS's K-major 128-byte-swizzle atom of f16 (specs/wgmma.toml): rows of 128 bytes, 8-row
    # core-matrix groups 8 x 128 = 1024 bytes apart -> SBO = 1024 / 16 = 64; the K extent of one
    # wgmma (16 f16 = 32 bytes) stays inside the swizzle atom, so LBO is never used
    text = (f'[layouts.t]\ntext = "{K128}"\n\n[layouts.d]\n'
            f'descriptor = {{ lbo_field = {lbo}, sbo_field = {sbo}, swizzle = "{swizzle}" }}\n\n'
            f'[[obligation]]\nname = "p"\nkind = "descriptor_matches"\ndescriptor = "d"\nlayout = "t"\n'
            f'dtype = "f16"\nmajor = "K"\n')
    assert run(text) == ("proved" if (sbo, swizzle) == (64, "128B") else "counterexample")
