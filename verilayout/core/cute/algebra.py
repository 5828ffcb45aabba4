"""CuTe's layout algebra on concrete layouts: :func:`coalesce`, :func:`filter_layout`,
:func:`composition`, :func:`complement`, :func:`logical_divide`, :func:`logical_product`,
:func:`blocked_product`, :func:`tile_to_shape`, :func:`right_inverse`, :func:`left_inverse`.

They follow CuTe's published definitions; where CuTe would return a layout that is not the
composed function (its weak divisibility checks), these raise :class:`LayoutError` instead.
Modes are merged and dropped by value (as pycute does): with all-static inputs the printed results
are CuTe C++'s, static marks included; with dynamic ints CuTe C++ may keep extra extent-1 modes
(same function, different nesting).

>>> composition(Layout((4, 2), (2, 1)), Layout(4, 2)), complement(Layout(4, 2), 24)
(Layout('(_2,_2):(_4,_1)'), Layout('(_2,_3):(_1,_8)'))
"""
from __future__ import annotations

from numbers import Integral
from typing import Any, Callable, Iterable, Sequence, Union

from verilayout.core.cute.int_tuple import (IntTuple, StaticInt, is_tuple, normalize_tree, static_ceil_div, static_div, static_min,
                                            static_mul, compact_col_major, product)
from verilayout.core.cute.layout import (AnyLayout, ComposedLayout, Layout, append_modes, require_concrete, concrete_int,
                                         format_cute, make_layout, make_ordered_layout)
from verilayout.core.cute.swizzle import Swizzle
from verilayout.core.cute.units import offsets_table
from verilayout.errors import LayoutError

__all__ = ["Tiler", "coalesce", "filter_layout", "composition", "complement", "logical_divide",
           "logical_product", "blocked_product", "tile_to_shape", "right_inverse", "left_inverse"]


# ----- algebra ------------------------------------------------------------------------------

def _concrete_layout(x: Any, what: str) -> Layout:
    if isinstance(x, ComposedLayout):
        raise LayoutError(f"{what} is defined on plain layouts; this one has a swizzle")
    if isinstance(x, bool) or not isinstance(x, (Layout, Integral)):
        raise LayoutError(f"{what} needs a Layout, got {type(x).__name__}")
    # an int n (a tiler's extent) is CuTe's static `_n:_1`: the CuTe DSL reads Python ints as static
    # values and C++ writes such tilers `Shape<_2,_4>{}`
    L = Layout(x) if isinstance(x, Integral) else x      # a plain int is static, a DynamicInt not
    require_concrete(L, what)
    return L


def _from_leaves(leaves: list[tuple[int, int]]) -> Layout:
    if not leaves:
        return Layout(StaticInt(1), StaticInt(0))
    if len(leaves) == 1:
        return Layout(leaves[0][0], leaves[0][1])
    return Layout(tuple(s for s, _ in leaves), tuple(d for _, d in leaves))


def _coalesce_leaves(leaves: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, d in leaves:
        if s == 1:
            continue
        if out and out[-1][0] * out[-1][1] == d:
            out[-1] = (static_mul(out[-1][0], s), out[-1][1])
        else:
            out.append((s, d))
    return out


def coalesce(layout: Layout, profile: IntTuple | None = None) -> Layout:
    """Merge modes that continue each other; same function on ``[0, size)``, depth <= 1.

    With a tuple ``profile``, coalesce each of the first ``len(profile)`` modes separately.

    >>> coalesce(Layout((2, (1, 6)), (1, (6, 2))))
    Layout('_12:_1')
    """
    layout = _concrete_layout(layout, "coalesce")
    if is_tuple(profile):
        modes = layout.modes()
        if len(profile) > len(modes):
            raise LayoutError(f"coalesce profile has {len(profile)} modes, layout only {len(modes)}")
        return make_layout(*[coalesce(m, p) for m, p in zip(modes, profile)], *modes[len(profile):])
    return _from_leaves(_coalesce_leaves(layout.leaves()))


def filter_layout(layout: Layout) -> Layout:
    """Drop extent-1 and stride-0 modes, then coalesce (CuTe's ``filter``).

    >>> filter_layout(Layout((4, 2, 3), (1, 0, 4)))
    Layout('_12:_1')
    """
    layout = _concrete_layout(layout, "filter_layout")
    return _from_leaves(_coalesce_leaves((s, d) for s, d in layout.leaves() if s != 1 and d != 0))


def _coalesce_keep_last(layout: Layout) -> list[tuple[int, int]]:
    """Coalesce but keep the last mode's stride, which defines evaluation past the size."""
    leaves = layout.leaves()
    body, last = _coalesce_leaves(leaves[:-1]), leaves[-1]
    if body and body[-1][0] * body[-1][1] == last[1]:
        s, d = body.pop()
        last = (static_mul(s, last[0]), d)  # same values inside the size and past it
    return body + [last]


def _compose_leaf(flat: list[tuple[int, int]], s: int, d: int) -> tuple[list, list]:
    if d == 0:
        return [s], [d]
    if d < 0:
        raise LayoutError(f"composition with a negative stride {d} is not supported")
    if len(flat) == 1:
        return [s], [static_mul(d, flat[0][1])]
    shapes: list = []
    strides: list = []
    rest_s, rest_d = s, d
    for cs, cd in flat[:-1]:
        if rest_s == 1:  # done; CuTe still divides the stride (it only shows on extent-1 modes)
            rest_d = static_ceil_div(rest_d, cs)
            continue
        if rest_d % cs == 0:
            rest_d = static_div(rest_d, cs)
            continue
        if rest_d > cs:
            raise LayoutError(f"composition: stride {rest_d} neither divides nor is divided by "
                              f"extent {cs} (CuTe's stride divisibility condition)")
        fits = (rest_s - 1) * rest_d < cs
        if cs % rest_d and not fits:
            raise LayoutError(f"composition: extent {cs} is not a multiple of stride {rest_d} and "
                              f"{rest_s} steps do not fit in it")
        new = static_min(static_ceil_div(cs, rest_d), rest_s)
        if rest_s % new:
            raise LayoutError(f"composition: extent {rest_s} is not a multiple of {new} "
                              "(CuTe's shape divisibility condition)")
        shapes.append(new)
        strides.append(static_mul(rest_d, cd))
        rest_s = static_div(rest_s, new)
        rest_d = static_ceil_div(rest_d, cs)
    if rest_s != 1 or not shapes:
        shapes.append(rest_s)
        strides.append(static_mul(rest_d, flat[-1][1]))
    return shapes, strides


def _compose_tree(flat: list, shape: IntTuple, stride: IntTuple) -> tuple[IntTuple, IntTuple]:
    if is_tuple(shape):
        parts = [_compose_tree(flat, s, d) for s, d in zip(shape, stride)]
        return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
    shapes, strides = _compose_leaf(flat, shape, stride)
    if len(shapes) == 1:
        return shapes[0], strides[0]
    return tuple(shapes), tuple(strides)


Tiler = Union[None, int, Layout, tuple]


def _modewise(op: Callable, name: str, a: AnyLayout, b: Tiler, verify: bool, leaf: Callable) -> AnyLayout:
    """CuTe's conventions for a layout op ``op(a, b, verify=...)`` (``name`` for errors): a swizzled
    ``a`` keeps its swizzle (``op`` on its layout), ``b`` None keeps ``a``, a tuple ``b`` applies
    ``op`` mode by mode; otherwise ``leaf(a, b, verify)`` on the two concrete layouts.

    >>> _modewise(composition, "composition", Layout(8, 1), None, False, _compose_concrete)
    Layout('_8:_1')
    """
    if isinstance(a, ComposedLayout):
        return a.with_layout(op(a.layout, b, verify=verify))
    a = _concrete_layout(a, name)
    if b is None:
        return a
    if isinstance(b, tuple):
        return _tiler_modes(a, b, lambda m, t: op(m, t, verify=verify))
    return leaf(a, _concrete_layout(b, name), verify)


def composition(a: AnyLayout, b: Tiler, *, verify: bool = False) -> AnyLayout:
    """``a o b``: ``R(i) == a(b(i))`` for every ``i < size(b)`` when ``b`` has one mode.

    ``b`` may be a Layout, an int ``n`` (meaning ``n:_1``), ``None`` (keep), or a tuple
    of those applied mode by mode. ``a`` is evaluated past its size through its
    last mode, as CuTe does. A multi-mode ``b`` is composed mode by mode (CuTe's
    right-distributivity); that is ``a o b`` as functions when the modes of ``b``
    do not carry into each other in ``a``'s coordinates, and ``verify=True``
    checks it on every coordinate (LayoutError with the first mismatch).
    A swizzled ``a`` keeps its swizzle. A :class:`Swizzle` ``a`` and a Layout ``b`` give CuTe's
    ``Sw<B,M,S> o _0 o b`` (``cute/swizzle_layout.hpp``): the swizzle on ``b``'s offsets, in
    elements.

    >>> composition(Layout((4, 2), (2, 1)), Layout(4, 2))
    Layout('(_2,_2):(_4,_1)')
    >>> print(composition(Swizzle(3, 3, 3), Layout((8, 64), (64, 1))))
    Sw<3,3,3> o _0 o (_8,_64):(_64,_1)
    """
    if isinstance(a, Swizzle):
        if not isinstance(b, Layout):
            raise LayoutError(f"composition of a Swizzle needs a Layout, got {type(b).__name__}")
        return ComposedLayout(a, b, StaticInt(0), swizzle_units="elements")
    return _modewise(composition, "composition", a, b, verify, _compose_concrete)


def _compose_concrete(a: Layout, b: Layout, verify: bool) -> Layout:
    """:func:`composition` of two concrete layouts (``b`` one tiler, not a tuple of them)."""
    flat = _coalesce_keep_last(a)
    shape, stride = _compose_tree(flat, b.shape, b.stride)
    result = Layout(shape, stride)
    if verify:
        _verify_composition(a, b, result)
    return result


def _verify_composition(a: Layout, b: Layout, r: Layout) -> None:
    import numpy as np  # deferred: start-up time (only array code needs numpy)
    size = int(b.size)
    if size > 1 << 22:
        raise LayoutError(f"verify: {size} coordinates are too many to check by enumeration")
    rhs = offsets_table(b)
    got = offsets_table(r)
    leaves = [(int(s), int(d)) for s, d in a.leaves()]
    want = np.zeros(size, dtype=np.int64)
    idx = rhs.copy()
    for k, (s, d) in enumerate(leaves):
        want += (idx if k == len(leaves) - 1 else idx % s) * d
        idx //= s
    bad = np.nonzero(got != want)[0]
    if bad.size:
        i = int(bad[0])
        raise LayoutError(f"composition of {format_cute(a)} with {format_cute(b)} is not a o b: at "
                          f"index {i}, b gives {int(rhs[i])}, a of that is {int(want[i])}, "
                          f"the mode-wise result {format_cute(r)} gives {int(got[i])}")


def complement(layout: Layout, cotarget: int | None = None) -> Layout:
    """CuTe's complement: the layout of the offsets ``layout`` skips, up to ``cotarget``.

    Ordered by stride, each mode ``s:d`` leaves a gap ``d / current`` (current
    starts at 1 and becomes ``s*d``); the last mode repeats the whole up to
    ``cotarget`` (default: the cosize). Interleaved modes (a stride inside the span of
    the smaller modes) raise. As in CuTe, a stride that is not a multiple of that span
    leaves holes (the gap mode is rounded down), so ``(layout, result)`` is then
    injective but does not reach ``cotarget`` offsets.

    >>> complement(Layout(4, 2), 24)
    Layout('(_2,_3):(_1,_8)')
    """
    layout = _concrete_layout(layout, "complement")
    leaves = [(s, d) for s, d in layout.leaves() if s != 1 and d != 0]
    if cotarget is None:
        cotarget = _from_leaves(leaves).cosize if leaves else StaticInt(1)
    if isinstance(cotarget, bool) or not isinstance(cotarget, Integral) or cotarget < 1:
        raise LayoutError(f"complement cotarget must be a positive integer, got {cotarget!r}")
    if any(d < 0 for _, d in leaves):
        raise LayoutError("complement of a layout with negative strides is not supported")
    if not leaves:
        return Layout(cotarget, compact_col_major(cotarget))
    cur: int = StaticInt(1)
    out: list[tuple[int, int]] = []
    for s, d in sorted(leaves, key=lambda sd: int(sd[1])):
        if d < cur:
            raise LayoutError(f"complement of {format_cute(layout)} is undefined: stride {d} "
                              f"falls inside the span {cur} of the smaller modes")
        out.append((static_div(d, cur), cur))
        cur = static_mul(d, s)
    rest = static_ceil_div(cotarget, cur)
    out.append((rest, StaticInt(0) if isinstance(rest, StaticInt) and rest == 1 else cur))
    return _from_leaves(_coalesce_leaves(out))


def _tiler_modes(a: Layout, tiler: tuple, fn: Callable) -> Layout:
    """Law: ``fn`` applied mode by mode (mode i of ``a`` with ``tiler[i]``), the modes past the
    tiler kept; LayoutError where the tiler has more modes than ``a``."""
    modes = a.modes()
    if len(tiler) > len(modes):
        raise LayoutError(f"tiler has {len(tiler)} modes but the layout only {len(modes)}")
    return make_layout(*[fn(m, t) for m, t in zip(modes, tiler)], *modes[len(tiler):])


def logical_divide(a: AnyLayout, tiler: Tiler, *, verify: bool = False) -> AnyLayout:
    """Split ``a`` into (tile, rest): ``a o (tiler, complement(tiler, size(a)))``.

    A tuple tiler divides mode by mode; ``None`` keeps a mode. ``verify`` as in
    :func:`composition`. (CuTe C++ uses ``shape(coalesce(a))`` as the cotarget,
    which may split the rest mode further; the function is the same.)

    >>> logical_divide(Layout(16, 1), Layout(4, 2))
    Layout('(_4,(_2,_2)):(_2,(_1,_8))')
    """
    return _modewise(logical_divide, "logical_divide", a, tiler, verify,
                     lambda a, b, verify: composition(a, make_layout(b, complement(b, a.size)), verify=verify))


def _hier_unzip(split: Callable, a: Layout, tiler: Tiler) -> Layout:
    """CuTe's ``hier_unzip`` (``cute/layout.hpp``; pycute ``hier_unzip``): ``split`` (a divide or a
    product giving ``(tile, rest)``) mode by mode, the tiles gathered in mode 0 and the rests
    (then the modes past the tiler) in mode 1; a ``None`` tiler mode is the tile ``_1:_0``."""
    if tiler is None:
        return make_layout(Layout(StaticInt(1), StaticInt(0)), a)
    if isinstance(tiler, tuple):
        modes = a.modes()
        if len(tiler) > len(modes):
            raise LayoutError(f"tiler has {len(tiler)} modes but the layout only {len(modes)}")
        parts = [_hier_unzip(split, m, t) for m, t in zip(modes, tiler)]
        return make_layout(make_layout(*[p[0] for p in parts]),
                           make_layout(*[p[1] for p in parts], *modes[len(tiler):]))
    return split(a, tiler)


def _zipped(split: Callable, name: str, a: AnyLayout, tiler: Tiler) -> AnyLayout:
    """``zipped_divide`` / ``zipped_product`` (``name``, for errors) with ``split`` their logical
    form: :func:`_hier_unzip` on ``a``'s layout, a swizzle or offset kept around it.

    >>> _zipped(logical_divide, "zipped_divide", Layout(8, 1), Layout(2, 1))
    Layout('(_2,_4):(_1,_2)')
    """
    if isinstance(a, ComposedLayout):
        return a.with_layout(_zipped(split, name, a.layout, tiler))
    return _hier_unzip(split, _concrete_layout(a, name), tiler)


def _tiled(zipped: Callable, a: AnyLayout, tiler: Tiler) -> AnyLayout:
    """``zipped(a, tiler)`` with its rest mode unpacked into the top-level modes (CuTe's
    ``tiled_divide`` / ``tiled_product``); a swizzle or offset kept around the layout.

    >>> _tiled(zipped_divide, Layout(8, 1), Layout(2, 1))
    Layout('(_2,_4):(_1,_2)')
    """
    if isinstance(a, ComposedLayout):
        return a.with_layout(_tiled(zipped, a.layout, tiler))
    z = zipped(a, tiler)
    return make_layout(z[0], *z[1].modes())


def zipped_divide(a: AnyLayout, tiler: Tiler) -> AnyLayout:
    """``((tile modes), (rest modes))``: :func:`logical_divide` mode by mode with the tiles
    gathered in mode 0 and the rests in mode 1 (CuTe ``zipped_divide``, ``cute/layout.hpp``).

    >>> zipped_divide(Layout((8, 16), (16, 1)), (Layout(2, 1), Layout(4, 1)))
    Layout('((_2,_4),(_4,_4)):((_16,_1),(_32,_4))')
    """
    return _zipped(logical_divide, "zipped_divide", a, tiler)


def tiled_divide(a: AnyLayout, tiler: Tiler) -> AnyLayout:
    """``((tile modes), rest mode 0, rest mode 1, ...)``: :func:`zipped_divide` with its rest mode
    unpacked (CuTe ``tiled_divide``).

    >>> tiled_divide(Layout((8, 16), (16, 1)), (Layout(2, 1), Layout(4, 1)))
    Layout('((_2,_4),_4,_4):((_16,_1),_32,_4)')
    """
    return _tiled(zipped_divide, a, tiler)


def zipped_product(a: AnyLayout, tiler: Tiler) -> AnyLayout:
    """``((a's modes), (the copies' modes))``: :func:`logical_product` mode by mode, gathered as in
    :func:`zipped_divide` (CuTe ``zipped_product``).

    >>> zipped_product(Layout((2, 2), (1, 2)), (Layout(3, 1), Layout(2, 1)))
    Layout('((_2,_2),(_3,_2)):((_1,_2),(_2,_1))')
    """
    return _zipped(logical_product, "zipped_product", a, tiler)


def tiled_product(a: AnyLayout, tiler: Tiler) -> AnyLayout:
    """:func:`zipped_product` with its second mode unpacked (CuTe ``tiled_product``).

    >>> tiled_product(Layout((2, 2), (1, 2)), (Layout(3, 1), Layout(2, 1)))
    Layout('((_2,_2),_3,_2):((_1,_2),_2,_1)')
    """
    return _tiled(zipped_product, a, tiler)


def logical_product(a: Layout, tiler: Tiler) -> Layout:
    """(a, copies of a laid out by tiler): ``(a, complement(a, size(a)*cosize(b)) o b)``.

    >>> logical_product(Layout(2, 1), Layout(3, 1))
    Layout('(_2,_3):(_1,_2)')
    """
    a = _concrete_layout(a, "logical_product")
    if tiler is None:
        return a
    if isinstance(tiler, tuple):
        return _tiler_modes(a, tiler, logical_product)
    b = _concrete_layout(tiler, "logical_product")
    return make_layout(a, composition(complement(a, static_mul(a.size, b.cosize)), b))


def blocked_product(block: Layout, tiler: Layout) -> Layout:
    """Mode-wise product: mode ``i`` is (block mode ``i``, tiler mode ``i``).

    >>> blocked_product(Layout((2, 2), (1, 2)), Layout((2, 3)))
    Layout('((_2,_2),(_2,_3)):((_1,_4),(_2,_8))')
    """
    block = _concrete_layout(block, "blocked_product")
    tiler = _concrete_layout(tiler, "blocked_product")
    r = max(block.rank, tiler.rank)
    prod = logical_product(append_modes(block, r), append_modes(tiler, r))
    first, second = prod.modes()
    return make_layout(*[make_layout(x, y) for x, y in zip(first.modes(), second.modes())])


def tile_to_shape(block: AnyLayout, shape: IntTuple, order: Sequence[int] | None = None) -> AnyLayout:
    """Repeat ``block`` to fill ``shape``: ``blocked_product(block, ordered tile counts)``.

    As CuTe: block modes are padded to the rank of ``shape``; the tile counts
    ``shape_i / block_i`` are laid out column-major (or by ``order``). The block
    must divide the shape. A swizzled block keeps its swizzle.

    >>> from verilayout.frontends.cute_text import parse_cute
    >>> tile_to_shape(parse_cute("(_8,_8):(_8,_1)"), (64, 16))
    Layout('((_8,_8),(_8,_2)):((_8,_64),(_1,_512))')
    """
    if isinstance(block, ComposedLayout):
        return block.with_layout(tile_to_shape(block.layout, shape, order))
    block = _concrete_layout(block, "tile_to_shape")
    shape = normalize_tree(shape, "target shape")
    if not is_tuple(shape):
        shape = (shape,)
    if block.rank > len(shape):
        raise LayoutError(f"block has rank {block.rank}, more than the target shape's {len(shape)}")
    padded = append_modes(block, len(shape))
    counts = []
    for i, (bm, t) in enumerate(zip(padded.modes(), shape)):
        bs, ts = bm.size, concrete_int(product(t), "target shape")
        if ts % bs:
            raise LayoutError(f"tile_to_shape: block extent {bs} does not divide target extent "
                              f"{ts} in mode {i}")
        counts.append(static_div(ts, bs))
    return blocked_product(padded, make_ordered_layout(tuple(counts), order))


def right_inverse(layout: Layout) -> Layout:
    """A layout ``R`` with ``layout(R(i)) == i`` for ``i < size(R)`` (largest such prefix).

    >>> right_inverse(Layout((4, 2), (2, 1)))
    Layout('(_2,_4):(_4,_1)')
    """
    layout = _concrete_layout(layout, "right_inverse")
    leaves = _coalesce_leaves(layout.leaves())
    prefix, p = [], StaticInt(1)
    for s, _ in leaves:
        prefix.append(p)
        p = static_mul(p, s)
    out: list[tuple[int, int]] = []
    cur: int = StaticInt(1)
    for (s, d), pre in sorted(zip(leaves, prefix), key=lambda x: int(x[0][1])):
        if d == cur:  # modes that do not continue the run are skipped, as in CuTe
            out.append((s, pre))
            cur = static_mul(s, d)
    return _from_leaves(_coalesce_leaves(out))


def left_inverse(layout: Layout) -> Layout:
    """A layout ``R`` with ``R(layout(i)) == i`` for ``i < size(layout)`` (injective layouts).

    >>> left_inverse(Layout(4, 2))(6)
    3
    """
    import numpy as np  # deferred: start-up time (only array code needs numpy)
    layout = _concrete_layout(layout, "left_inverse")
    try:
        rest = complement(layout)
    except LayoutError as e:
        raise LayoutError(f"{format_cute(layout)} has no left inverse layout: {e}") from None
    result = right_inverse(make_layout(layout, rest))
    offs = offsets_table(layout)
    if (offs < 0).any() or int(offs.max()) >= int(result.size) or \
            (offsets_table(result)[offs] != np.arange(offs.size)).any():
        raise LayoutError(f"{format_cute(layout)} has no left inverse layout (it is not injective, "
                          "or its image has gaps its complement cannot fill)")
    return result

