"""CuTe compact major orders over nested shapes: ``compact_col_major`` (``LayoutLeft``),
``compact_row_major`` (``LayoutRight``), ``make_layout(shape, LayoutLeft/LayoutRight)`` and
``make_ordered_layout`` (issue 12's CuTe gap).

Expected values are transcribed from CUTLASS's public sources (cited per test):
``test/unit/cute/core/compact_xmajor.cpp`` (tests ``CuTe_core.CompactColMajor_Static``,
``CompactColMajor_Dynamic``, ``CompactRowMajor_Static``, ``CompactRowMajor_Dynamic``) and the worked
examples in the comment above ``make_ordered_layout`` in ``include/cute/layout.hpp``; the rest is
checked by brute force (the layout enumerates [0, size) in the stated block order).
pycute is compared in tests/oracles/test_cute_pycute.py.
"""
from __future__ import annotations

import itertools

import pytest

from verilayout.core.cute import (DynamicInt, Layout, LayoutLeft, LayoutRight, StaticInt, dynamic, compact_col_major, compact_row_major,
                                  flatten, format_cute, make_layout, make_ordered_layout, product)
from verilayout.errors import LayoutError

_ = StaticInt


def static(t):
    """A nested tuple of ints as CuTe ``Int<N>`` values (every leaf static)."""
    return tuple(static(x) for x in t) if isinstance(t, tuple) else StaticInt(t)


def same(a, b) -> bool:
    """Equal values AND the same static/dynamic marks at every leaf (CuTe's ``==`` on types)."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and \
            all(same(x, y) for x, y in zip(a, b))
    return int(a) == int(b) and isinstance(a, StaticInt) == isinstance(b, StaticInt)


# compact_xmajor.cpp, CompactColMajor_Static: (shape, result), every Int<N> static
COL_STATIC = [
    ((4, 8), (1, 4)),
    ((4, 8, 2), (1, 4, 32)),
    ((4, 8, 1, 2), (1, 4, 0, 32)),
    (((4, 8), 1, 2), ((1, 4), 0, 32)),
    ((4, (8, 1, 2)), (1, (4, 0, 32))),
    ((4, (8, 1, (2, 3))), (1, (4, 0, (32, 64)))),
]
# compact_xmajor.cpp, CompactColMajor_Dynamic: run-time ints (a dynamic 1 keeps the running product)
COL_DYNAMIC = [
    ((4, 8), (1, 4)),
    ((4, 8, 2), (1, 4, 32)),
    ((4, 8, 1, 2), (1, 4, 32, 32)),
    (((4, 8), 1, 2), ((1, 4), 32, 32)),
    ((4, (8, 1, 2)), (1, (4, 32, 32))),
    ((4, (8, 1, (2, 3))), (1, (4, 32, (32, 64)))),
]
# compact_xmajor.cpp, CompactRowMajor_Static
ROW_STATIC = [
    ((4, 8), (8, 1)),
    ((4, 8, 2), (16, 2, 1)),
    ((4, 8, 1, 2), (16, 2, 0, 1)),
    (((4, 8), 1, 2), ((16, 2), 0, 1)),
    ((4, (8, 1, 2)), (16, (2, 0, 1))),
    ((4, (8, 1, (2, 3))), (48, (6, 0, (3, 1)))),
]
# compact_xmajor.cpp, CompactRowMajor_Dynamic
ROW_DYNAMIC = [
    ((4, 8), (8, 1)),
    ((4, 8, 2), (16, 2, 1)),
    ((4, 8, 1, 2), (16, 2, 2, 1)),
    (((4, 8), 1, 2), ((16, 2), 2, 1)),
    ((4, (8, 1, 2)), (16, (2, 2, 1))),
    ((4, (8, 1, (2, 3))), (48, (6, 6, (3, 1)))),
]


@pytest.mark.parametrize("shape, want", COL_STATIC)
def test_compact_col_major_static_cutlass(shape, want):
    assert same(compact_col_major(static(shape)), static(want))


@pytest.mark.parametrize("shape, want", COL_DYNAMIC)
def test_compact_col_major_dynamic_cutlass(shape, want):
    got = compact_col_major(dynamic(shape))
    assert got == want
    # CuTe starts from Int<1>: the first stride is static, the rest dynamic
    assert isinstance(flatten(got)[0], StaticInt) and not any(isinstance(x, StaticInt) for x in flatten(got)[1:])


@pytest.mark.parametrize("shape, want", ROW_STATIC)
def test_compact_row_major_static_cutlass(shape, want):
    assert same(compact_row_major(static(shape)), static(want))


@pytest.mark.parametrize("shape, want", ROW_DYNAMIC)
def test_compact_row_major_dynamic_cutlass(shape, want):
    assert compact_row_major(dynamic(shape)) == want


def test_compact_major_of_an_integer_cutlass():
    # compact_xmajor.cpp, the scalar asserts of all four tests
    for fn in (compact_col_major, compact_row_major):
        assert same(fn(_(1)), _(0)) and same(fn(_(1), _(3)), _(0))
        assert same(fn(_(8)), _(1)) and same(fn(_(8), _(3)), _(3))
        D = DynamicInt
        assert same(fn(D(1)), _(1)) and same(fn(D(8)), _(1))
        assert fn(D(1), D(3)) == 3 and fn(D(8), D(3)) == 3
        # a plain Python int is static (CuTe's Int<N>)
        assert same(fn(1), _(0)) and same(fn(8), _(1))


@pytest.mark.parametrize("shape, want", ROW_STATIC)
def test_make_layout_layout_right_is_compact_row_major(shape, want):
    L = make_layout(static(shape), LayoutRight)
    assert same(L.stride, static(want)) and same(L.shape, static(shape))


@pytest.mark.parametrize("shape, want", COL_STATIC)
def test_make_layout_layout_left_and_default_are_compact_col_major(shape, want):
    for L in (make_layout(static(shape), LayoutLeft), make_layout(static(shape)), Layout(static(shape))):
        assert same(L.stride, static(want))


def test_make_layout_shape_stride_and_concatenation_forms():
    assert make_layout((4, 2), (2, 1)) == Layout((4, 2), (2, 1))
    assert make_layout(Layout(4, 1), Layout(2, 4)) == Layout((4, 2), (1, 4))
    assert make_layout([Layout(4, 1), Layout(2, 4)]) == Layout((4, 2), (1, 4))
    with pytest.raises(LayoutError, match="make_layout"):
        make_layout(Layout(4, 1), (2, 4))
    with pytest.raises(LayoutError, match="make_layout"):
        make_layout()


def test_make_ordered_layout_static_example_layout_hpp():
    # include/cute/layout.hpp, comment above make_ordered_layout:
    #   make_ordered_layout(Shape<_2,_2,_2,_2>{}, Step<_0,_2,_3,_1>{}) -> (_2,_2,_2,_2):(_1,_4,_8,_2)
    L = make_ordered_layout(static((2, 2, 2, 2)), (0, 2, 3, 1))
    assert format_cute(L) == "(_2,_2,_2,_2):(_1,_4,_8,_2)"


def brute_ordered(shape, order) -> dict:
    """Offsets by enumeration: blocks (the shape under each integer of ``order``) taken by increasing
    order, each block column-major inside; offset = position in that enumeration."""
    blocks = []

    def walk(s, o, path):
        if isinstance(o, tuple):
            for i, (si, oi) in enumerate(zip(s, o)):
                walk(si, oi, path + (i,))
        else:
            blocks.append((o, path, s))
    walk(shape, order, ())
    blocks.sort()
    leaves = [(path, k, n) for _, path, s in blocks for k, n in enumerate(flatten(s))]
    table = {}
    for digits in itertools.product(*[range(n) for _, _, n in leaves]):
        # colexicographic: the first leaf of the lowest block varies fastest
        offset, scale = 0, 1
        for d, (_, _, n) in zip(digits, leaves):
            offset += d * scale
            scale *= n
        table[tuple((path, k, d) for d, (path, k, _) in zip(digits, leaves))] = offset
    return table


def eval_leaf_coords(L: Layout, order, coords: dict) -> int:
    """L at the coordinate whose leaf ``k`` of the block at ``path`` is ``coords[(path, k)]``."""
    def build(s, o, path):
        if isinstance(o, tuple):
            return tuple(build(si, oi, path + (i,)) for i, (si, oi) in enumerate(zip(s, o)))
        flat = [coords[(path, k)] for k in range(len(flatten(s)))]
        it = iter(flat)

        def unflat(t):
            return tuple(unflat(x) for x in t) if isinstance(t, tuple) else next(it)
        return unflat(s)
    return L(build(L.shape, order, ()))


@pytest.mark.parametrize("shape, order", [
    ((2, 3, 4), (1, 2, 0)),
    ((2, 3, 4, 5), (3, 0, 2, 1)),
    ((2, (3, 4)), (1, (2, 0))),
    ((3, 5, (2, 4)), (2, 0, (1, 3))),          # the shape of CUTLASS's Step<_2,_0,Step<_1,_3>> (fmha example)
    (((2, 3), 4), (1, 0)),                     # a nested block under one order: column-major inside
    (((2, 3), (4, 2)), ((3, 0), 1)),
])
def test_make_ordered_layout_nested_by_brute_force(shape, order):
    L = make_ordered_layout(shape, order)
    assert L.shape == shape
    want = brute_ordered(shape, order)
    assert len(want) == product(shape)
    for key, offset in want.items():
        assert eval_leaf_coords(L, order, {(p, k): d for p, k, d in key}) == offset


def test_make_ordered_layout_refusals():
    with pytest.raises(LayoutError, match="distinct"):
        make_ordered_layout((2, 3), (0, 0))
    with pytest.raises(LayoutError, match="does not match"):
        make_ordered_layout((2, 3), (0, 1, 2))
    with pytest.raises(LayoutError, match="does not match"):
        make_ordered_layout((2, 3), ((0, 1), 2))
    with pytest.raises(LayoutError, match="not an integer"):
        make_ordered_layout((2, 3), (0, "a"))
