"""verilayout.cute against independent implementations of CuTe and of Triton's shared layouts.

* pycute (pure Python, in the nvidia-cutlass wheel): composition, logical_divide, complement,
  logical_product, coalesce, right_inverse on random small layouts. Where verilayout refuses a
  case, pycute must either refuse it too or return a layout that is not the composed function
  (checked by enumeration); where both answer and pycute is right, the shapes are the same.
* CuTe C++ (host-only, the wheel's headers): the exact text CuTe prints for ``tile_to_shape``
  of every GMMA swizzle atom and for random static algebra cases (static ``_N`` marks included).
* Triton 3.9 (subprocess harness ``triton_oracle.py``): ``NVMMASharedLayout`` offset bases equal
  ``shared_linear_layout`` of the CuTe GMMA atom tiled to the same shape.
"""
from __future__ import annotations

import random

import pytest

from tests.cute_strategies import like as _cute_like, tree as _cute_tree
from tests.oracles.cutlass_build import recorded_lines, run_program
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from verilayout.core.cute import ComposedLayout, DynamicInt, dynamic, Layout, LayoutLeft, LayoutRight, StaticInt, Swizzle, coalesce, compact_col_major, compact_row_major, complement, composition, flatten, format_cute, logical_divide, logical_product, make_layout, make_ordered_layout, right_inverse, shared_linear_layout, tile_to_shape
from verilayout.frontends.cute_text import parse_cute
from verilayout.errors import LayoutError

pytestmark = pytest.mark.oracle
ORACLE = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ----- helpers (brute force) -----------------------------------------------------------------

def ext_eval(a: Layout, x: int) -> int:
    """CuTe's evaluation of a flat index; the last mode takes the quotient (past the size)."""
    leaves = [(int(s), int(d)) for s, d in zip(flatten(a.shape), flatten(a.stride))]
    total = 0
    for k, (s, d) in enumerate(leaves):
        total += (x if k == len(leaves) - 1 else x % s) * d
        x //= s
    return total


def py_eval(shape, stride, i: int) -> int:
    leaves = list(zip(flatten(shape), flatten(stride)))
    total = 0
    for s, d in leaves:
        total += (i % s) * d
        i //= s
    return total


def py_flatten(t):
    return [x for c in t for x in py_flatten(c)] if isinstance(t, tuple) else [t]


def py_size(t) -> int:
    out = 1
    for x in py_flatten(t):
        out *= x
    return out


def leafwise_ok(a: Layout, bs, bd, rs, rd) -> bool:
    """Each leaf s:d of b becomes a sub-layout of the result equal to i -> a(i*d)."""
    if isinstance(bs, tuple):
        return isinstance(rs, tuple) and len(rs) == len(bs) and all(
            leafwise_ok(a, *z) for z in zip(bs, bd, rs, rd))
    if py_size(rs) != int(bs):
        return False
    return all(py_eval(rs, rd, i) == ext_eval(a, i * int(bd)) for i in range(int(bs)))


def plain(t):
    return tuple(plain(x) for x in t) if isinstance(t, tuple) else int(t)


def to_pycute(pycute, L: Layout):
    return pycute.Layout(plain(L.shape), plain(L.stride))


# ----- strategies -----------------------------------------------------------------------------

@st.composite
def layouts(draw, extents=(1, 2, 2, 3, 4, 4, 6, 8), strides=(0, 1, 1, 2, 3, 4, 6, 8, 12, 16, 32),
            max_size=256, compact=False):
    shape = draw(_cute_tree(st.sampled_from(extents)))
    assume(py_size(shape) <= max_size)
    if compact and draw(st.booleans()):
        return Layout(shape)
    return Layout(shape, draw(_cute_like(shape, st.sampled_from(strides))))


# ----- pycute -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pycute():
    return pytest.importorskip("pycute")


def _run(fn, *args):
    try:
        return fn(*args), None
    except (LayoutError, AssertionError, ZeroDivisionError) as e:
        return None, e


def _check_against_pycute(a: Layout, b_full: Layout | None, mine, theirs):
    """verilayout is right; it refuses only what pycute gets wrong or refuses; same shapes."""
    if mine is not None:
        assert b_full is not None and leafwise_ok(a, b_full.shape, b_full.stride, mine.shape, mine.stride)
    theirs_ok = theirs is not None and b_full is not None and leafwise_ok(
        a, b_full.shape, b_full.stride, theirs.shape, theirs.stride)
    if theirs_ok:
        assert mine is not None, f"verilayout refused {a} o {b_full}; pycute gives {theirs}"
        assert plain(mine.shape) == theirs.shape


@ORACLE
@given(layouts(), layouts(max_size=64, compact=True))
def test_composition_agrees_with_pycute(pycute, a, b):
    mine, _ = _run(composition, a, b)
    theirs, _ = _run(pycute.composition, to_pycute(pycute, a), to_pycute(pycute, b))
    _check_against_pycute(a, b, mine, theirs)


@ORACLE
@given(layouts(), layouts(max_size=32, compact=True))
def test_logical_divide_agrees_with_pycute(pycute, a, tiler):
    mine, _ = _run(logical_divide, a, tiler)
    theirs, _ = _run(pycute.logical_divide, to_pycute(pycute, a), to_pycute(pycute, tiler))
    full, _ = _run(lambda: make_layout(tiler, complement(tiler, a.size)))
    _check_against_pycute(a, full, mine, theirs)


@ORACLE
@given(layouts(max_size=64), st.integers(1, 512))
def test_complement_agrees_with_pycute(pycute, a, cotarget):
    mine, _ = _run(complement, a, cotarget)
    theirs, _ = _run(pycute.complement, to_pycute(pycute, a), cotarget)
    if mine is None:  # verilayout refuses interleaved modes; pycute then makes an empty mode
        assert theirs is None or 0 in py_flatten(theirs.shape)
        return
    assert theirs is not None  # pycute asserts only on what verilayout refuses
    assert plain(mine.shape) == theirs.shape
    size = py_size(theirs.shape)
    assert [mine(i) for i in range(size)] == [theirs(i) for i in range(size)]


@ORACLE
@given(layouts(extents=(1, 2, 3, 4), strides=(0, 1, 2, 3, 4, 8), max_size=16),
       layouts(extents=(1, 2, 3), strides=(0, 1, 2, 3), max_size=9))
def test_logical_product_agrees_with_pycute(pycute, a, b):
    mine, _ = _run(logical_product, a, b)
    theirs, _ = _run(pycute.logical_product, to_pycute(pycute, a), to_pycute(pycute, b))
    rest, _ = _run(complement, a, int(a.size) * int(b.cosize))
    if mine is not None:  # (a, complement(a, size(a)*cosize(b)) o b), leaf by leaf
        assert mine[0] == a and leafwise_ok(rest, b.shape, b.stride, mine[1].shape, mine[1].stride)
    if theirs is not None and rest is not None and leafwise_ok(
            rest, b.shape, b.stride, theirs[1].shape, theirs[1].stride):
        assert mine is not None and plain(mine.shape) == theirs.shape


@ORACLE
@given(layouts())
def test_coalesce_and_right_inverse_agree_with_pycute(pycute, a):
    c, pc = coalesce(a), pycute.coalesce(to_pycute(pycute, a))
    assert (plain(c.shape), plain(c.stride)) == (pc.shape, pc.stride)
    r, pr = right_inverse(a), pycute.right_inverse(to_pycute(pycute, a))
    size = py_size(pr.shape)
    assert all(a(int(r(i))) == i for i in range(int(r.size)))  # a right inverse
    strides = [int(d) for s, d in zip(flatten(a.shape), flatten(a.stride)) if s != 1]
    if 0 not in strides and len(set(strides)) == len(strides):
        # pycute stops at the first mode that does not continue the run, CuTe C++ (and
        # verilayout) skip it; pycute does not coalesce first, so it may stop earlier.
        # With distinct nonzero strides verilayout's inverse extends pycute's.
        assert r.size >= size and [r(i) for i in range(size)] == [pr(i) for i in range(size)]


def test_swizzle_agrees_with_pycute(pycute):
    for b, m, s in [(3, 4, 3), (2, 4, 3), (1, 4, 3), (3, 3, 3), (2, 1, -3), (0, 4, 3)]:
        ps = pycute.Swizzle(b, m, s)
        assert [Swizzle(b, m, s)(x) for x in range(4096)] == [ps(x) for x in range(4096)]


# ----- CuTe C++ ------------------------------------------------------------------------------------

GMMA_ATOMS = ["Layout_K_INTER_Atom", "Layout_K_SW32_Atom", "Layout_K_SW64_Atom",
              "Layout_K_SW128_Atom", "Layout_MN_INTER_Atom", "Layout_MN_SW32_Atom",
              "Layout_MN_SW64_Atom", "Layout_MN_SW128_Atom"]
GMMA_TYPES = ["half_t", "tfloat32_t", "float_e4m3_t"]
TARGETS = [("make_shape(128,128)", dynamic((128, 128))),           # run-time ints
           ("make_shape(Int<128>{},Int<128>{})", (StaticInt(128), StaticInt(128))),
           ("make_shape(Int<128>{},256)", (StaticInt(128), DynamicInt(256)))]


def _cpp_tree(t, fn="make_shape"):
    if isinstance(t, tuple):
        return f"{fn}(" + ",".join(_cpp_tree(x, fn) for x in t) + ")"
    return f"Int<{int(t)}>{{}}" if isinstance(t, StaticInt) else str(int(t))


def _cpp_layout(L: Layout) -> str:
    return f"make_layout({_cpp_tree(L.shape)}, {_cpp_tree(L.stride, 'make_stride')})"


def _static(t):
    return tuple(_static(x) for x in t) if isinstance(t, tuple) else StaticInt(int(t))


def _algebra_cases(n: int):
    """Random all-static cases verilayout answers; the C++ program prints CuTe's answer."""
    rnd = random.Random(20240607)
    ex = [1, 2, 2, 3, 4, 4, 6, 8]
    sd = [0, 1, 1, 2, 3, 4, 8, 16, 32, 6, 12]

    def tree(depth=0):
        if depth < 2 and rnd.random() < 0.35:
            return tuple(tree(depth + 1) for _ in range(rnd.randint(1, 3)))
        return rnd.choice(ex)

    def strides(t):
        return tuple(strides(x) for x in t) if isinstance(t, tuple) else rnd.choice(sd)

    cases = []
    while len(cases) < n:
        s = tree()
        a = Layout(_static(s), _static(strides(s)))
        sb = tree()
        b = Layout(_static(sb)) if rnd.random() < 0.7 else Layout(_static(sb), _static(strides(sb)))
        op = rnd.choice(["composition", "logical_divide", "logical_product", "complement",
                         "coalesce", "right_inverse"])
        if op in ("coalesce", "right_inverse"):
            expr, fn = f"{op}({_cpp_layout(a)})", lambda a=a, op=op: globals()[op](a)
        elif op == "complement":
            cot = int(b.size) * 8
            expr, fn = f"complement({_cpp_layout(a)}, Int<{cot}>{{}})", \
                lambda a=a, cot=cot: complement(a, StaticInt(cot))
        else:
            expr = f"{op}({_cpp_layout(a)}, {_cpp_layout(b)})"
            fn = lambda a=a, b=b, op=op: globals()[op](a, b)  # noqa: E731
        try:
            fn()
        except LayoutError:
            continue  # CuTe static_asserts on what verilayout refuses; it would stop the build
        cases.append((expr, fn))
    return cases


def cute_exprs() -> tuple[list[str], list, list]:
    """The C++ expressions the CuTe oracle prints: every GMMA atom's tiles, then the algebra cases."""
    tiles = []
    for atom in GMMA_ATOMS:
        for t in GMMA_TYPES:
            tiles.append((f"{atom}<{t}>{{}}", None, None))
            for cpp_shape, shape in TARGETS:
                for order in (None, (1, 0)):
                    step = ", Step<_2,_1>{}" if order else ""
                    tiles.append((f"tile_to_shape({atom}<{t}>{{}}, {cpp_shape}{step})", shape, order))
    algebra = _algebra_cases(60)
    return [e for e, *_ in tiles] + [e for e, _ in algebra], tiles, algebra


def run_cute(exprs: list[str]) -> list[str]:
    """Build (cached by source) and run a program that prints each of ``exprs``, one line each."""
    src = ("#include <cute/tensor.hpp>\n#include <cute/atom/mma_traits_sm90_gmma.hpp>\n"
           "using namespace cute;\nusing namespace cute::SM90::GMMA;\nint main() {\n"
           + "\n".join(f'  print({e}); printf("\\n");' for e in exprs) + "\n}\n")
    out = run_program("cute_oracle", src).splitlines()
    assert len(out) == len(exprs)
    return out


@pytest.fixture(scope="module")
def cute_cpp():
    """CuTe's printed answer to every expression: recorded, a sixth of them built live and compared
    (``cutlass_build.recorded_lines``)."""
    exprs, tiles, algebra = cute_exprs()
    return tiles, algebra, recorded_lines("cute_oracle", exprs, run_cute)


def test_tile_to_shape_of_every_gmma_atom_prints_as_cute_cpp(cute_cpp):
    tiles, _, out = cute_cpp
    atom = None
    for (expr, shape, order), printed in zip(tiles, out):
        if shape is None:
            atom = parse_cute(printed)  # the atom as CuTe prints it
            assert format_cute(atom) == printed
            continue
        assert format_cute(tile_to_shape(atom, shape, order)) == printed, expr


def test_static_algebra_prints_as_cute_cpp(cute_cpp):
    tiles, algebra, out = cute_cpp
    for (expr, fn), printed in zip(algebra, out[len(tiles):]):
        assert format_cute(fn()) == printed, expr


# ----- Triton -----------------------------------------------------------------------------------

def _gmma_atom(swizzle_bytes: int, bits: int, mn_major: bool) -> ComposedLayout:
    """The GMMA swizzle atom from seed 000's table: 8 rows of swizzle_bytes, Swizzle<B,4,3> on bytes."""
    t, w = 128 // bits, swizzle_bytes // 16
    b = w.bit_length() - 1
    if mn_major:
        inner = Layout((StaticInt(t * w), StaticInt(8)), (StaticInt(1), StaticInt(t * w)))
    else:
        inner = Layout((StaticInt(8), StaticInt(t * w)), (StaticInt(t * w), StaticInt(1)))
    return ComposedLayout(Swizzle(b, 4, 3), inner, ptr_bits=bits)


def test_nvmma_shared_layouts_are_tiled_gmma_atoms():
    pytest.importorskip("triton")
    from tests.oracles import triton_oracle
    reqs = []
    for sw in (32, 64, 128):
        for bits, dtype in ((8, "i8"), (16, "f16"), (32, "f32")):
            for transposed in (False, True):
                for shape in ([64, 128], [128, 128], [256, 64], [8, 256], [256, 8]):
                    reqs.append({"kind": "nvmma_shared", "swizzle_byte_width": sw,
                                 "element_bitwidth": bits, "transposed": transposed,
                                 "shape": shape, "dtype": dtype, "views": False, "props": False})
    answers = triton_oracle.run_oracle(reqs)
    compared = 0
    for req, ans in zip(reqs, answers):
        if not ans.get("ok"):
            assert ans.get("error") == "exception" and "too small" in ans.get("message", "")
            continue
        atom = _gmma_atom(req["swizzle_byte_width"], req["element_bitwidth"], req["transposed"])
        # Triton tiles the non-contiguous dim first: CuTe's column-major tile order for
        # K-major (dim1 contiguous), row-major tile order for MN-major (dim0 contiguous)
        tiled = tile_to_shape(atom, tuple(req["shape"]), (1, 0) if req["transposed"] else None)
        assert shared_linear_layout(tiled).bases["offset"] == ans["bases"]["offset"], req
        compared += 1
    assert compared >= 60


# ----- compact major orders over nested shapes (issue 12) ------------------------------------------

def _rev(t):
    """The nested tuple reversed at every level (a derivation: row-major is column-major of this)."""
    return tuple(_rev(x) for x in reversed(t)) if isinstance(t, tuple) else t


nested_shapes = _cute_tree(st.sampled_from((1, 2, 3, 4, 5)), depth=3).filter(lambda s: py_size(s) <= 4096)


@ORACLE
@given(shape=nested_shapes)
def test_compact_col_major_agrees_with_pycute(pycute, shape):
    # pycute's Layout(shape) strides are its prefix_product: compact column-major over nested shapes
    # pycute's values are CuTe's dynamic ints (a dynamic extent 1 keeps its stride; a static _1 gets _0)
    assert plain(compact_col_major(dynamic(shape))) == pycute.prefix_product(shape)
    assert plain(make_layout(dynamic(shape), LayoutLeft).stride) == pycute.Layout(shape).stride


@ORACLE
@given(shape=nested_shapes)
def test_compact_row_major_is_pycute_col_major_of_the_reversed_shape(pycute, shape):
    assert plain(compact_row_major(dynamic(shape))) == _rev(pycute.prefix_product(_rev(shape)))
    assert plain(make_layout(dynamic(shape), LayoutRight).stride) == _rev(pycute.Layout(_rev(shape)).stride)


@st.composite
def ordered_cases(draw):
    shape = draw(_cute_tree(st.sampled_from((1, 2, 3, 4)), depth=2).filter(lambda s: py_size(s) <= 4096))

    def profile(s):  # an order that stops above the leaves somewhere
        if isinstance(s, tuple) and draw(st.booleans()):
            return tuple(profile(x) for x in s)
        return None
    prof = profile(shape)
    holes = len(py_flatten(prof)) if isinstance(prof, tuple) else 1
    values = draw(st.permutations(range(holes)))
    it = iter(values)

    def fill(p):
        return tuple(fill(x) for x in p) if isinstance(p, tuple) else next(it)
    return shape, fill(prof)


@ORACLE
@given(case=ordered_cases())
def test_make_ordered_layout_agrees_with_pycute_prefix_products(pycute, case):
    shape, order = case
    mine = make_ordered_layout(dynamic(shape), order)     # pycute's values: dynamic ints
    # CuTe's compact_order, with pycute's prefix_product for each block: the block with order o starts
    # at the product of the sizes of the blocks with smaller orders

    def blocks(s, o):
        if isinstance(o, tuple):
            return [b for si, oi in zip(s, o) for b in blocks(si, oi)]
        return [(s, o)]
    bl = blocks(shape, order)

    def strides(s, o):
        if isinstance(o, tuple):
            return tuple(strides(si, oi) for si, oi in zip(s, o))
        start = 1
        for t, p in bl:
            if p < o:
                start *= pycute.product(t)
        return pycute.prefix_product(s, start)
    assert plain(mine.shape) == shape  # (an order tuple only ever sits over a shape tuple here)
    assert plain(mine.stride) == strides(shape, order)
    # and it is compact: pycute's layout of it enumerates [0, size) exactly once
    theirs = pycute.Layout(shape, strides(shape, order))
    assert sorted(theirs(i) for i in range(pycute.size(theirs))) == list(range(py_size(shape)))


@st.composite
def _divisible(draw):
    """A rank-2 layout and a per-mode tiler of sizes dividing each mode, strides 1 or 2."""
    dims = [draw(st.sampled_from([2, 4, 8, 12, 16])) for _ in range(2)]
    a = Layout(tuple(dims), tuple(draw(st.sampled_from([1, 2, 3, 16, 64])) for _ in dims))
    tiles = []
    for d in dims:
        t = draw(st.sampled_from([x for x in (1, 2, 4) if d % x == 0]))
        s = draw(st.sampled_from([x for x in (1, 2) if d % (t * x) == 0]))
        tiles.append(Layout(t, s))
    return a, tuple(tiles)


@ORACLE
@given(_divisible())
def test_zipped_and_tiled_divide_agree_with_pycute(pycute, case):
    from verilayout.core.cute import tiled_divide, zipped_divide
    a, tiler = case
    pa, pt = to_pycute(pycute, a), tuple(to_pycute(pycute, t) for t in tiler)
    for mine_fn, theirs_fn in ((zipped_divide, pycute.zipped_divide), (tiled_divide, pycute.tiled_divide)):
        mine, theirs = mine_fn(a, tiler), theirs_fn(pa, pt)
        assert [int(mine(i)) for i in range(int(mine.size))] == [theirs(i) for i in range(pycute.size(theirs))]
        assert plain(mine.shape) == theirs.shape
