"""CTA-group (CGA) layouts and Triton's ``combineCtaCgaWithShape``.

A *CTA layout* maps ``register``/``lane``/``warp`` (or ``offset``) to tensor
coordinates inside one CTA; a *CGA layout* maps ``block`` (the CTA id inside a
cluster) to the tile of the tensor that CTA owns (Triton ``CTALayoutAttr`` in
``TritonGPUAttrDefs.td``, converted in ``lib/Dialect/TritonGPU/IR/LinearLayoutConversions.cpp``).

Triton prints the CGA part of an attribute in one of two spellings:

* Triton 3.9: ``CGALayout = [[1, 0], [0, 1]]``, the bases of ``block`` in units
  of CTA tiles (zero bases are broadcasts; the non-zero bases must form a
  permutation matrix);
* older Triton: ``CTAsPerCGA = [2, 2], CTASplitNum = [2, 1], CTAOrder = [1, 0]``
  (all three or none), turned into bases as Triton's ``makeCgaLayout`` does
  (``lib/Dialect/TritonGPU/IR/LinearLayoutConversions.cpp``).

>>> make_cga_layout({"CGALayout": [[1, 0]]}, 2).bases
{'block': [[1, 0]]}
>>> make_cga_layout({"CTAsPerCGA": [2, 2], "CTASplitNum": [2, 1], "CTAOrder": [1, 0]}, 2).bases
{'block': [[0, 0], [1, 0]]}
"""
from __future__ import annotations

from typing import Mapping, Sequence

from verilayout.bits import is_pow2
from verilayout.errors import LayoutError
from verilayout.core.linear_layout import LinearLayout

__all__ = [
    "CGA_KEYS",
    "OLD_CGA_KEYS",
    "standard_out_dims",
    "identity_standard_nd_raw",
    "make_cga_layout",
    "ensure_layout_not_larger_than",
    "ensure_layout_not_smaller_than",
    "combine_cta_cga_with_shape",
]

#: The Triton 3.9 key.
CGA_KEYS = ("CGALayout",)
#: The pre-3.9 keys (all three or none).
OLD_CGA_KEYS = ("CTAsPerCGA", "CTASplitNum", "CTAOrder")
#: Every key an attribute may use for its CTA layout (the 3.9 key or the old ones).
ANY_CGA_KEYS = CGA_KEYS + OLD_CGA_KEYS


def standard_out_dims(rank: int) -> list[str]:
    """``["dim0", ..., "dim{rank-1}"]``.

    >>> standard_out_dims(2)
    ['dim0', 'dim1']
    """
    return [f"dim{i}" for i in range(rank)]


def identity_standard_nd_raw(in_dim: str, shape: Sequence[int], order: Sequence[int]) -> LinearLayout:
    """Triton's ``identityStandardND``: out dims left in ``order`` (most minor first).

    Unlike :func:`verilayout.core.linear_layout.identity_standard_nd` the output dims are not
    transposed back to ``dim0, dim1, ...``; Triton's later steps
    (``ensureLayoutNotSmallerThan``) depend on that order.

    >>> identity_standard_nd_raw("lane", [4, 8], [1, 0]).out_dim_names
    ['dim1', 'dim0']
    """
    names = standard_out_dims(len(shape))
    ret = LinearLayout.empty()
    for d in order:
        ret = ret * LinearLayout.identity1D(shape[d], in_dim, names[d])
    return ret


def _int_list(value, key: str, rank: int | None) -> list[int]:
    if not isinstance(value, (list, tuple)) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise LayoutError(f"'{key}' must be a list of integers, got {value!r}")
    if rank is not None and len(value) != rank:
        raise LayoutError(f"'{key}' has {len(value)} entries; the layout has rank {rank}")
    return [int(v) for v in value]


def _old_cga(params: Mapping, rank: int) -> LinearLayout:
    present = [k for k in OLD_CGA_KEYS if k in params]
    if len(present) != 3:
        missing = [k for k in OLD_CGA_KEYS if k not in params]
        raise LayoutError(f"CTAsPerCGA, CTASplitNum and CTAOrder must all be present or all "
                          f"absent (missing {', '.join(missing)})")
    ctas = _int_list(params["CTAsPerCGA"], "CTAsPerCGA", rank)
    split = _int_list(params["CTASplitNum"], "CTASplitNum", rank)
    order = _int_list(params["CTAOrder"], "CTAOrder", rank)
    if sorted(order) != list(range(rank)):
        raise LayoutError(f"'CTAOrder' {order} is not a permutation of 0..{rank - 1}")
    names = standard_out_dims(rank)
    ret = LinearLayout.empty()
    for dim in order:
        for key, v in (("CTAsPerCGA", ctas[dim]), ("CTASplitNum", split[dim])):
            if not is_pow2(v):
                raise LayoutError(f"'{key}'[{dim}] = {v} is not a power of two")
        if ctas[dim] % split[dim]:
            raise LayoutError(f"'CTAsPerCGA'[{dim}] = {ctas[dim]} is not a multiple of "
                              f"'CTASplitNum'[{dim}] = {split[dim]}")
        ret = ret * LinearLayout.identity1D(split[dim], "block", names[dim]) \
            * LinearLayout.zeros1D(ctas[dim] // split[dim], "block", names[dim])
    return ret.transpose_outs(names)


def _new_cga(bases, rank: int) -> LinearLayout:
    if not isinstance(bases, (list, tuple)):
        raise LayoutError(f"'CGALayout' must be a list of bases, got {bases!r}")
    rows = []
    for i, b in enumerate(bases):
        if not isinstance(b, (list, tuple)) or len(b) != rank:
            raise LayoutError(f"'CGALayout' entry {i} is {b!r}; expected {rank} integers "
                              f"(one per tensor dim)")
        for v in b:
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise LayoutError(f"'CGALayout' entry {i} has {v!r}; expected unsigned integers")
        rows.append([int(v) for v in b])
    seen: set[tuple[int, int]] = set()
    for i, b in enumerate(rows):
        nz = [(d, v) for d, v in enumerate(b) if v]
        if not nz:
            continue
        if len(nz) != 1 or not is_pow2(nz[0][1]) or (nz[0][0], nz[0][1]) in seen:
            raise LayoutError(f"'CGALayout' entry {i} = {b}: after removing broadcast (zero) "
                              "bases the CGA bases must form a permutation matrix")
        seen.add((nz[0][0], nz[0][1]))
    names = standard_out_dims(rank)
    try:
        return LinearLayout({"block": rows}, names)
    except LayoutError:
        raise LayoutError(f"'CGALayout' {rows}: after removing broadcast (zero) bases the CGA "
                          "bases must form a permutation matrix (some tile bit is missing)") from None


def make_cga_layout(params: Mapping, rank: int) -> LinearLayout:
    """The CGA layout (in dim ``block``, out dims ``dim0..``) of an attribute's parameters.

    ``params`` holds the attribute's keys as Triton prints them; other keys are
    ignored here. No CGA key means one CTA (``block`` of size 1).

    >>> make_cga_layout({}, 2).in_dims
    {'block': 1}
    >>> make_cga_layout({"CGALayout": [[0, 1], [0, 0]]}, 2).bases
    {'block': [[0, 1], [0, 0]]}
    """
    has_new = "CGALayout" in params
    has_old = any(k in params for k in OLD_CGA_KEYS)
    if has_new and has_old:
        raise LayoutError("give either 'CGALayout' or CTAsPerCGA/CTASplitNum/CTAOrder, not both")
    if has_new:
        return _new_cga(params["CGALayout"], rank)
    if has_old:
        return _old_cga(params, rank)
    ret = LinearLayout.empty()
    for name in standard_out_dims(rank):
        ret = ret * LinearLayout.identity1D(1, "block", name)
    return ret


def _shape_map(layout: LinearLayout, shape: Mapping[str, int]) -> None:
    missing = [n for n in layout.out_dim_names if n not in shape]
    if missing or len(shape) != len(layout.out_dim_names):
        raise LayoutError(f"shape {dict(shape)} does not name the layout's out dims "
                          f"{layout.out_dim_names}")


def ensure_layout_not_larger_than(layout: LinearLayout, shape: Mapping[str, int],
                                  broadcast_registers: bool = True) -> LinearLayout:
    """Triton's ``ensureLayoutNotLargerThan``: shrink out dims to ``shape`` by broadcasting.

    Per out dim that is too large, the non-zero bases (all input dims, in order)
    are visited from the largest value down and zeroed until the dim fits; bases of
    equal value are one output bit and go together (the Triton 3.9 wheel on a
    ``#ttg.generic_linear`` of Triton's lit tests whose warp bases repeat). With
    ``broadcast_registers=False`` such register bases are dropped instead.

    >>> L = LinearLayout.identity1D(8, "register", "dim0")
    >>> ensure_layout_not_larger_than(L, {"dim0": 2}).bases
    {'register': [[1], [0], [0]]}
    """
    _shape_map(layout, shape)
    bases = layout.bases
    out_names = layout.out_dim_names
    dropped: set[int] = set()
    for k, name in enumerate(out_names):
        actual = layout.out_dim_size(name)
        desired = shape[name]
        if actual <= desired:
            continue
        if actual % desired:
            raise LayoutError(f"out dim '{name}' of size {actual} cannot shrink to {desired}")
        found = []
        for in_dim, blist in bases.items():
            for i, b in enumerate(blist):
                if b[k]:
                    if b[k] & (b[k] - 1):
                        raise LayoutError(
                            f"basis {i} of '{in_dim}' has {b[k]} along '{name}', not a power "
                            f"of two; Triton cannot broadcast it down to size {desired}")
                    found.append((in_dim, i, b[k]))
        found.sort(key=lambda t: -t[2])  # stable, as std::sort is on Triton's short lists
        j = 0
        while j < len(found) and actual > desired:
            value = found[j][2]
            while j < len(found) and found[j][2] == value:   # equal bases: one output bit
                in_dim, i, _ = found[j]
                if not broadcast_registers and in_dim == "register":
                    dropped.add(i)
                else:
                    bases[in_dim][i][k] = 0
                j += 1
            actual >>= 1
    if not broadcast_registers and "register" in bases:
        bases["register"] = [b for i, b in enumerate(bases["register"]) if i not in dropped]
    try:
        return LinearLayout(bases, out_names)
    except LayoutError as e:
        raise LayoutError(f"cannot broadcast the layout down to shape {dict(shape)}: {e}") from None


def ensure_layout_not_smaller_than(layout: LinearLayout, shape: Mapping[str, int]) -> LinearLayout:
    """Triton's ``ensureLayoutNotSmallerThan``: grow out dims to ``shape`` by repeating.

    Each out dim (in the layout's out-dim order) that is too small gets extra
    bits of the first input dim (``register`` or ``offset``).

    >>> L = LinearLayout.identity1D(2, "register", "dim0")
    >>> ensure_layout_not_smaller_than(L, {"dim0": 8}).bases
    {'register': [[1], [2], [4]]}
    """
    _shape_map(layout, shape)
    if not layout.in_dim_names:
        raise LayoutError("cannot grow a layout with no input dims")
    k_dim = layout.in_dim_names[0]
    ret = layout
    for name in layout.out_dim_names:
        actual = layout.out_dim_size(name)
        desired = shape[name]
        if actual >= desired:
            continue
        if desired % actual:
            raise LayoutError(f"out dim '{name}': size {desired} is not a multiple of {actual}")
        ret = ret * LinearLayout.identity1D(desired // actual, k_dim, name)
    return ret


def _check_shape(shape: Sequence[int]) -> list[int]:
    out = []
    for i, s in enumerate(shape):
        if not isinstance(s, int) or isinstance(s, bool) or not is_pow2(s):
            raise LayoutError(f"shape {list(shape)}: dim {i} has size {s!r}, not a power of two")
        out.append(int(s))
    return out


def combine_cta_cga_with_shape(cta: LinearLayout, params: Mapping,
                               shape: Sequence[int]) -> LinearLayout:
    """Triton's ``combineCtaCgaWithShape``: the CTA layout tiled over the CGA, fitted to ``shape``.

    The CGA layout is first broadcast down to ``shape``; each CTA then owns
    ``shape / cga_size`` (at least 1) along each dim, and the CTA layout is fitted
    to that: a smaller layout repeats in its first input dim (registers), a
    larger one broadcasts: its largest register bases are dropped, its largest
    other bases zeroed (Triton 3.9 drops registers here; checked against the wheel). The result's out dims
    are ``dim0..`` in order, sized exactly ``shape``.

    >>> cta = LinearLayout.identity1D(4, "register", "dim0")
    >>> combine_cta_cga_with_shape(cta, {"CGALayout": [[1]]}, [16]).bases
    {'register': [[1], [2], [4]], 'block': [[8]]}
    """
    shape = _check_shape(shape)
    rank = len(shape)
    names = standard_out_dims(rank)
    if sorted(cta.out_dim_names) != names:
        raise LayoutError(f"CTA layout out dims {cta.out_dim_names} do not match rank {rank}")
    labeled = dict(zip(names, shape))
    cga = ensure_layout_not_larger_than(make_cga_layout(params, rank), labeled)
    cga = cga.transpose_outs(cta.out_dim_names)
    cta_shape = {n: max(1, labeled[n] // cga.out_dim_size(n)) for n in cta.out_dim_names}
    cta = ensure_layout_not_smaller_than(cta, cta_shape)
    cta = ensure_layout_not_larger_than(cta, cta_shape, broadcast_registers=False)
    ret = (cta * cga).transpose_outs(names)
    for n in names:
        if ret.out_dim_size(n) != labeled[n]:
            raise LayoutError(f"layout covers {ret.out_dim_size(n)} along '{n}' but the shape "
                              f"has {labeled[n]}")
    return ret
