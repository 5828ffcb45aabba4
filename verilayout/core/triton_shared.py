"""Triton's shared-memory layout families as functions of their parameters, for one CTA.

Triton's ``LinearLayoutConversions.cpp`` builds a ``#ttg.swizzled_shared`` or ``#ttg.nvmma_shared``
layout from the attribute's parameters alone; so do these functions. The readers of Triton text
(:mod:`verilayout.frontends.triton.shared`) check the attribute and call them, locating any
``LayoutError`` at the attribute; the swizzle synthesis (:mod:`verilayout.synth.swizzle`) calls
them on the parameters it tries, with no text in between.

>>> swizzled_shared_cta(2, 1, 4, [1, 0], [4, 8]).bases["offset"]
[[0, 1], [0, 2], [0, 4], [1, 2], [2, 4]]
>>> nvmma_cta([8, 16], [8, 16], 16, 32, False, False).bases["offset"][4:]
[[1, 0], [2, 0], [4, 8]]
"""
from __future__ import annotations

from typing import Sequence

from verilayout.core.cga import ensure_layout_not_smaller_than, standard_out_dims
from verilayout.core.linear_layout import LinearLayout
from verilayout.errors import LayoutError

__all__ = ["powers_below", "swizzled_shared_cta", "nvmma_block_shape", "nvmma_cta"]


def powers_below(n: int) -> list[int]:
    """``[1, 2, 4, ...]`` below ``n``.

    >>> powers_below(8), powers_below(1)
    ([1, 2, 4], [])
    """
    out, p = [], 1
    while p < n:
        out.append(p)
        p *= 2
    return out


def swizzled_shared_cta(vec: int, per_phase: int, max_phase: int, order: Sequence[int],
                        per_cta: Sequence[int]) -> LinearLayout:
    """One CTA of ``#ttg.swizzled_shared<{vec, perPhase, maxPhase, order}>`` over ``per_cta``:
    row ``r`` of the two fastest dims XORs column ``vec * ((r / perPhase) % maxPhase)``
    (Triton ``swizzledSharedToLinearLayout``); further dims repeat it in ``order``.

    Law: an ``offset -> dims`` layout; a swizzle that is not linear over these rows raises.

    >>> swizzled_shared_cta(1, 1, 1, [0], [4]).bases
    {'offset': [[1], [2]]}
    """
    rank = len(per_cta)
    names = standard_out_dims(rank)
    if rank == 1:
        return LinearLayout.identity1D(per_cta[0], "offset", "dim0")
    col, row = order[0], order[1]
    ncols, nrows = per_cta[col], per_cta[row]
    bases = [[0, c] for c in powers_below(ncols)]
    bases += [[r, (vec * ((r // per_phase) % max_phase)) % ncols] for r in powers_below(nrows)]
    try:
        cta = LinearLayout({"offset": bases}, [names[row], names[col]])
    except LayoutError as e:
        raise LayoutError(f"swizzle (vec={vec}, perPhase={per_phase}, maxPhase={max_phase}) is not "
                          f"linear here: {e}") from None
    for d in order[2:]:
        cta = cta * LinearLayout.identity1D(per_cta[d], "offset", names[d])
    return cta


def nvmma_block_shape(per_cta: Sequence[int], bits: int, swizzle: int, fp4: bool,
                      transposed: bool) -> list[int]:
    """Triton's ``getTMABlockShape`` (packed size) of an nvmma_shared layout: each dim at most
    256, the contiguous one cut to one swizzle width (``8 * swizzle / bits`` elements).

    >>> nvmma_block_shape([128, 128], 16, 128, False, False)
    [128, 64]
    """
    block = list(per_cta)
    contig = 0 if transposed else len(block) - 1
    if fp4:
        block[contig] *= 2
    block = [min(s, 256) for s in block]
    if swizzle:
        need = 8 * swizzle // bits
        if block[contig] < need:
            raise LayoutError(f"Triton refuses it too: the block is {block[contig]} elements along its "
                              f"contiguous dim, less than the {need} a {swizzle}-byte swizzle of "
                              f"{bits}-bit elements needs")
        block[contig] = need
    if fp4:
        block[contig] //= 2
    return block


def _nvmma_core(bits: int, swizzle: int, fp4: bool) -> LinearLayout:
    """One 8-row swizzle atom of ``swizzle`` bytes of ``bits``-bit elements (fp4Padded: halves)."""
    vec = 128 // bits
    per_phase = 128 // swizzle
    max_phase = swizzle // 16
    cols = 8 * max(16, swizzle) // bits
    bases = []
    for c in powers_below(cols):
        bases.append([0, c // 16 * 8 + c % 8] if fp4 else [0, c])
    for r in powers_below(8):
        c = vec * ((r // per_phase) % max_phase)
        bases.append([r, c // 16 * 8 + c % 8] if fp4 else [r, c])
    return LinearLayout({"offset": bases}, ["dim0", "dim1"])


def _reshape_layout(ll: LinearLayout, shape: Sequence[int]) -> LinearLayout:
    """Triton's ``reshapeLayout``: row-major re-interpretation of the out dims."""
    rank = len(shape)
    src = list(reversed(ll.out_dim_names))
    new = list(reversed([(f"dim{i}", s) for i, s in enumerate(shape)]))
    return ll.transpose_outs(src).reshape_outs(new).transpose_outs(standard_out_dims(rank))


def _nvmma_unswizzled(tma: list[int], per_cta: list[int], transposed: bool) -> LinearLayout:
    rank = len(per_cta)
    names = standard_out_dims(rank)
    if transposed and rank > 2:
        raise LayoutError("a transposed #ttg.nvmma_shared without swizzling and rank > 2 is not "
                          "supported here (Triton 3.9's layout for it is not reproduced)")
    ll = LinearLayout.empty()
    for d in ([0] + list(range(rank - 1, 0, -1)) if transposed else reversed(range(rank))):
        ll = ll * LinearLayout.identity1D(tma[d], "offset", names[d])
    ll = ll.transpose_outs(names[::-1])  # the repeat below grows dim{rank-1} first
    return ensure_layout_not_smaller_than(ll, dict(zip(names, per_cta)))


def _nvmma_swizzled(tma: list[int], per_cta: list[int], bits: int, swizzle: int, fp4: bool,
                    transposed: bool) -> LinearLayout:
    rank = len(per_cta)
    names = standard_out_dims(rank)
    if rank < 2:
        raise LayoutError("a swizzled #ttg.nvmma_shared layout needs rank >= 2")
    collapsed = [1, tma[-1]]
    for s in tma[:-1]:
        collapsed[0] *= s
    if transposed:
        collapsed.reverse()
    tile = _nvmma_core(bits, swizzle, fp4)
    rows, cols = tile.out_dim_size("dim0"), tile.out_dim_size("dim1")
    packing = 2 if fp4 else 1
    if collapsed[1] * packing < cols or collapsed[0] < rows:
        raise LayoutError(f"Triton refuses it too: shape per CTA {per_cta} is smaller than one "
                          f"swizzle atom: need at least [{rows}, {cols // packing}], got the "
                          f"collapsed block {collapsed}")
    ll = ensure_layout_not_smaller_than(tile, {"dim0": collapsed[0], "dim1": collapsed[1]})
    target = list(tma)
    if transposed:
        target = target[1:] + target[:1]
    ll = _reshape_layout(ll, target)
    if transposed:
        perm = [rank - 1] + list(range(rank - 1))
        ll = LinearLayout({k: [[b[p] for p in perm] for b in v] for k, v in ll.bases.items()}, names)
    return ensure_layout_not_smaller_than(ll, dict(zip(names, per_cta)))


def nvmma_cta(tma: Sequence[int], per_cta: Sequence[int], bits: int, swizzle: int, fp4: bool,
              transposed: bool) -> LinearLayout:
    """One CTA of ``#ttg.nvmma_shared`` (Triton 3.9): without swizzling, the TMA block
    ``tma`` (:func:`nvmma_block_shape`) in row-major order (or transposed), repeated over
    ``per_cta``; with it, the 8-row swizzle atom repeated over the block collapsed to 2-d,
    reshaped back to the block's rank, then repeated to the CTA's shape.

    >>> nvmma_cta([8, 64], [8, 64], 16, 128, False, False).apply({"offset": 64})
    {'dim0': 1, 'dim1': 8}
    """
    if swizzle == 0:
        return _nvmma_unswizzled(list(tma), list(per_cta), transposed)
    return _nvmma_swizzled(list(tma), list(per_cta), bits, swizzle, fp4, transposed)
