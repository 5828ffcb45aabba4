"""Fuzzing every text front-end and the spec format (hypothesis, fixed seed, >= 10,000 inputs).

The property: any input either parses or raises LayoutError with a non-empty one-line
message. No other exception, no hang (a per-example deadline).
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, seed, settings, strategies as st

from verilayout import LayoutError, parse
from verilayout.spec import load_spec_text, run_spec

VALID = [
    "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>",
    "tensor<32x16xf16, #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>>",
    "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0], CTAsPerCGA = [2, 1], CTASplitNum = [2, 1], CTAOrder = [1, 0]}>",
    "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0], CGALayout = [[1, 0]]}>",
    "#ttg.slice<{dim = 0, parent = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>}>",
    "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>",
    "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>",
    "#ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>, kWidth = 2}>",
    "#ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>",
    "#ttg.amd_wmma<{version = 2, isTranspose = true, ctaLayout = {warp = [[1, 0], [0, 1]]}}>",
    "#ttg.linear<{register = [[0, 1]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[8, 0]], block = []}>",
    "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>",
    "#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 4, order = [1, 0]}>",
    "!ttg.memdesc<64x64xf16, #ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 4, order = [1, 0]}>, #ttg.shared_memory, mutable>",
    "#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>\n"
    "module { tt.func @f(%a: tensor<32x16xf16, #blocked>) { tt.return } }",
    "Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_8),(_64,_1)):((_64,_512),(_1,_0))",
    "Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))",
    "((8,m),(T,2k)):((8T,SBO),(1,T))",
    "(_8,_4):(_4,_1)",
    "Sw<3,3,3> o smem_ptr16b o (_64,_64):(_64,_1)",
]
SHAPES = [None, [64, 64], [32, 16], [256, 32], [16], [4, 8, 2], [0, 4], [3, 5]]
ALPHABET = "#<>{}[](),=:_ox0123456789abcdefghijklmnopqrstuvwxyzSTWABCDEFGHIKLMNOPQRUVXYZ.!%-+* \n\"'"


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(VALID))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.integers(0, 3))
        i = draw(st.integers(0, len(text)))
        if op == 0:
            text = text[:i] + draw(st.text(alphabet=ALPHABET, min_size=1, max_size=4)) + text[i:]
        elif op == 1:
            j = draw(st.integers(i, min(len(text), i + 6)))
            text = text[:i] + text[j:]
        elif op == 2:
            num = str(draw(st.sampled_from([0, 1, 2, 3, 5, 7, 64, 1024, 2**31, 2**64, -1])))
            text = text[:i] + num + text[i:]
        else:
            j = draw(st.integers(0, len(text)))
            text = text[:min(i, j)]  # truncation
    return text


texts = st.one_of(mutated(), st.text(alphabet=ALPHABET, max_size=60), st.sampled_from(VALID))


def _check_parse(text, shape):
    try:
        parse(text, shape=shape)
    except LayoutError as e:
        msg = str(e)
        assert msg and "\n" not in msg, repr(msg)


@pytest.fixture(scope="module", autouse=True)
def _imported():
    """Every front-end's lazy imports (sympy, z3: 0.3 s of CPU, over 2 s of wall on a loaded
    machine) happen here, before hypothesis times the first example against its deadline."""
    for text in VALID:
        for shape in SHAPES:
            _check_parse(text, shape)
    run_spec(load_spec_text(SPEC_VALID, "warm.toml"), timeout_ms=2000)


@seed(20261121)
@settings(max_examples=9000, deadline=2000, suppress_health_check=list(HealthCheck),
          database=None)
@given(texts, st.sampled_from(SHAPES))
def test_text_front_ends_never_crash(text, shape):
    _check_parse(text, shape)


SPEC_VALID = """
[layouts.a]
bases = { lane = [[1, 0], [2, 0]], warp = [[0, 1]] }
out_dims = { dim0 = 4, dim1 = 2 }

[layouts.b]
text = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
shape = [32, 16]

[[obligation]]
name = "x"
kind = "equal"
lhs = "a"
rhs = "a"

[[obligation]]
kind = "surjective"
layout = "b"
expect = "proved"
"""


@st.composite
def spec_texts(draw):
    text = SPEC_VALID
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(text)))
        op = draw(st.integers(0, 2))
        if op == 0:
            text = text[:i] + draw(st.sampled_from(
                ["=", "[", "]", "{", "}", '"', "\n", "kind = 'injective'\n", "lhs = 'b'\n", "shape = [3]\n",
                 "expect = 'maybe'\n", "bases = 1\n", "out_dims = { dim0 = 3 }\n", "x", "0", "-1"])) + text[i:]
        elif op == 1:
            j = draw(st.integers(i, min(len(text), i + 10)))
            text = text[:i] + text[j:]
        else:
            text = text[:i]
    return text


@seed(20261121)
@settings(max_examples=1500, deadline=5000, suppress_health_check=list(HealthCheck),
          database=None)
@given(spec_texts())
def test_spec_format_never_crashes(text):
    try:
        spec = load_spec_text(text, "fuzz.toml")
        for name in spec.layouts:
            spec.layout(name, "fuzz")
        run_spec(spec, timeout_ms=2000)
    except LayoutError as e:
        assert str(e) and "\n" not in str(e)
