"""Triton's MMA-family distributed layouts as linear layouts (Triton 3.9 semantics).

Converts the parameters of ``#ttg.nvidia_mma``, ``#ttg.dot_op``, ``#ttg.amd_mfma``
and ``#ttg.amd_wmma`` attributes (a dict keyed exactly as Triton prints them) and a
tensor shape into a :class:`~verilayout.core.linear_layout.LinearLayout` with input dims
``register, lane, warp, block`` and output dims ``dim0, dim1, ...``, basis for basis
what Triton 3.9's ``toLinearLayout`` returns.

Each conversion first builds the layout of one CTA (``register, lane, warp``), then
tiles or trims it to the per-CTA shape and adds the ``block`` dim from the CGA fields
(``CGALayout``, or the older ``CTAsPerCGA`` / ``CTASplitNum`` / ``CTAOrder``) with the
helpers of :mod:`verilayout.core.cga` (Triton's ``combineCtaCgaWithShape``; an MMA
layout keeps surplus registers as zero bases where a blocked layout drops them).

>>> L = nvidia_mma_to_linear({"versionMajor": 2, "versionMinor": 0,
...                           "warpsPerCTA": [1, 1], "instrShape": [16, 8]}, [16, 8])
>>> L.bases["lane"]
[[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]

Parameter keys (unknown keys raise :class:`~verilayout.errors.LayoutError`):

* ``nvidia_mma``: ``versionMajor`` (2 or 3), ``versionMinor``, ``warpsPerCTA``,
  ``instrShape`` + CGA keys.
* ``dot_op``: ``opIdx`` (0/1), ``parent``, ``kWidth``.
* ``amd_mfma``: ``version`` (0-4), ``warpsPerCTA``, ``instrShape`` (M, N, K),
  ``isTransposed``, ``tilesPerWarp``, ``elementBitWidth`` (32/64) + CGA keys.
* ``amd_wmma``: ``version`` (1-3), ``isTranspose``, ``ctaLayout``
  (``{"register": [...], "warp": [...]}``: bases in units of one instruction tile),
  ``instrShape`` (M, N, K), ``rank`` (Triton parses it but never prints it; by default
  the length of the ctaLayout bases, else the shape's rank) + CGA keys.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from verilayout.errors import LayoutError
from verilayout.core.linear_layout import LinearLayout
from verilayout.core import cga as _cga
from verilayout.core.cga import ANY_CGA_KEYS

__all__ = [
    "nvidia_mma_to_linear",
    "dot_op_to_linear",
    "amd_mfma_to_linear",
    "amd_wmma_to_linear",
]

REG, LANE, WARP = "register", "lane", "warp"
_MISSING = object()
_AMD_WARP_SIZE = 64
_WMMA_WARP_SIZE = 32


# ----- parameter access ---------------------------------------------------------------
class _Attr:
    """Typed, checked access to one attribute's parameter dict."""

    def __init__(self, kind: str, params: Mapping[str, Any], allowed: Sequence[str]):
        if not isinstance(params, Mapping):
            raise LayoutError(f"#{kind}: parameters must be a mapping, got {type(params).__name__}")
        unknown = sorted(set(params) - set(allowed))
        if unknown:
            raise LayoutError(f"#{kind}: unknown parameter(s) {unknown}; expected some of "
                              f"{list(allowed)}")
        self.kind = kind
        self.params = params

    def err(self, msg: str) -> LayoutError:
        return LayoutError(f"#{self.kind}: {msg}")

    def int(self, key: str, default: Any = _MISSING) -> int:
        if key not in self.params:
            if default is _MISSING:
                raise self.err(f"missing parameter '{key}'")
            return default
        v = self.params[key]
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise self.err(f"'{key}' must be a non-negative integer, got {v!r}")
        return v

    def bool(self, key: str, default: Any = _MISSING) -> bool:
        if key not in self.params:
            if default is _MISSING:
                raise self.err(f"missing parameter '{key}'")
            return default
        v = self.params[key]
        if not isinstance(v, bool):
            raise self.err(f"'{key}' must be true or false, got {v!r}")
        return v

    def ints(self, key: str, default: Any = _MISSING, length: int | None = None) -> list[int]:
        if key not in self.params:
            if default is _MISSING:
                raise self.err(f"missing parameter '{key}'")
            return default
        return _int_list(self, key, self.params[key], length)

    def pow2s(self, key: str, default: Any = _MISSING, length: int | None = None) -> list[int]:
        vals = self.ints(key, default, length)
        for i, v in enumerate(vals):
            if not _is_pow2(v):
                raise self.err(f"'{key}'[{i}] = {v} is not a power of two")
        return vals

    def has(self, key: str) -> bool:
        return key in self.params

    def cga(self) -> dict[str, Any]:
        return {k: self.params[k] for k in ANY_CGA_KEYS if k in self.params}


def _int_list(attr: _Attr, key: str, v: Any, length: int | None) -> list[int]:
    if isinstance(v, (str, bytes, Mapping)) or not isinstance(v, Sequence):
        raise attr.err(f"'{key}' must be a list of integers, got {v!r}")
    out = []
    for i, x in enumerate(v):
        if isinstance(x, bool) or not isinstance(x, int) or x < 0:
            raise attr.err(f"'{key}'[{i}] must be a non-negative integer, got {x!r}")
        out.append(int(x))
    if length is not None and len(out) != length:
        raise attr.err(f"'{key}' has {len(out)} entries, expected {length}")
    return out


def _is_pow2(v: int) -> bool:
    return v >= 1 and v & (v - 1) == 0


def _check_shape(attr: _Attr, shape: Sequence[int], rank: int) -> list[int]:
    if isinstance(shape, (str, bytes)) or not isinstance(shape, Sequence):
        raise attr.err(f"shape must be a list of integers, got {shape!r}")
    out = []
    for i, s in enumerate(shape):
        if isinstance(s, bool) or not isinstance(s, int) or not _is_pow2(s):
            raise attr.err(f"shape[{i}] = {s!r} is not a positive power of two")
        out.append(int(s))
    if len(out) != rank:
        hint = (f" (add 'rank = {len(out)}' to the attribute)"
                if attr.kind.endswith("amd_wmma") and "rank" not in attr.params else "")
        raise attr.err(f"shape {out} has rank {len(out)} but the layout has rank {rank}{hint}")
    return out


# ----- small layout builders (Triton's helpers, same dim orders) ------------------------
def _names(rank: int) -> list[str]:
    return [f"dim{i}" for i in range(rank)]


def _ident(size: int, in_dim: str, out_dim: str) -> LinearLayout:
    """``identity1D`` where size 0 means the empty layout (as in Triton)."""
    return LinearLayout.empty() if size == 0 else LinearLayout.identity1D(size, in_dim, out_dim)


def _matrix_order(rank: int, row_major: bool) -> list[int]:
    order = list(range(rank - 1, -1, -1))
    if not row_major:
        order[0], order[1] = order[1], order[0]
    return order


def _dot_order(op_idx: int, rank: int, k_contig: bool = True) -> list[int]:
    return _matrix_order(rank, row_major=(op_idx != 0) != k_contig)


def _ident_nd(in_dim: str, sizes: Sequence[int], order: Sequence[int]) -> LinearLayout:
    """Identity over ``sizes`` with ``order[0]`` fastest; out dims stay in ``order``."""
    names = _names(len(sizes))
    ret = LinearLayout.empty()
    for d in order:
        ret = ret * LinearLayout.identity1D(sizes[d], in_dim, names[d])
    return ret


def _broadcast_nd(in_dim: str, sizes: Sequence[int], order: Sequence[int],
                  k_dim: int) -> LinearLayout:
    """Like :func:`_ident_nd` but the ``k_dim`` bits map to 0 (broadcast along K)."""
    names = _names(len(sizes))
    ret = LinearLayout.empty()
    for d in order:
        f = LinearLayout.zeros1D if d == k_dim else LinearLayout.identity1D
        ret = ret * f(sizes[d], in_dim, names[d])
    return ret


def _in_names(names: Sequence[str], order: Sequence[int]) -> list[str]:
    return [names[d] for d in order]


def _combine(cta: LinearLayout, cga: Mapping[str, Any], shape: Sequence[int]) -> LinearLayout:
    """Triton's ``combineCtaCgaWithShape`` as the MMA conversions use it.

    Unlike a blocked layout, an MMA layout larger than its per-CTA shape keeps the
    surplus register bases as zero (broadcast) bases instead of dropping them
    (checked against the Triton 3.9 wheel).
    """
    names = [f"dim{i}" for i in range(len(shape))]
    labeled = dict(zip(names, shape))
    cga_ll = _cga.ensure_layout_not_larger_than(_cga.make_cga_layout(cga, len(shape)), labeled)
    cga_ll = cga_ll.transpose_outs(cta.out_dim_names)
    cta_shape = {n: max(1, labeled[n] // cga_ll.out_dim_size(n)) for n in cta.out_dim_names}
    cta = _cga.ensure_layout_not_smaller_than(cta, cta_shape)
    cta = _cga.ensure_layout_not_larger_than(cta, cta_shape, broadcast_registers=True)
    return (cta * cga_ll).transpose_outs(names)


def _dot_cga(cga: Mapping[str, Any], rank: int, k_dim: int) -> dict[str, Any]:
    """The parent's CGA fields with the K dim never split across CTAs.

    The parent's own fields are checked first (Triton rejects a bad parent even
    where zeroing K would repair it).
    """
    _cga.make_cga_layout(cga, rank)
    out = dict(cga)
    if "CGALayout" in out:
        out["CGALayout"] = [[0 if i == k_dim else x for i, x in enumerate(b)]
                            for b in out["CGALayout"]]
    if "CTASplitNum" in out:
        split = list(out["CTASplitNum"])
        split[k_dim] = 1
        out["CTASplitNum"] = split
    return out


# ----- NVIDIA mma (v2 Ampere, v3 Hopper) ------------------------------------------------
_NV_KEYS = ("versionMajor", "versionMinor", "warpsPerCTA", "instrShape") + ANY_CGA_KEYS


def _nv_tile(tile: Sequence[int], k_width: int, order: Sequence[int],
             rep_order: Sequence[int], attr: _Attr) -> LinearLayout:
    """Registers/lanes of one mma tile: kWidth regs, 4 lanes inner, 8 lanes outer, repeats."""
    rank = len(rep_order)
    names = _names(rank)
    inner, outer = order[0], order[1]
    m, n = tile[outer], tile[inner]
    if m % 8 or n % (k_width * 4) or not _is_pow2(m // 8) or not _is_pow2(n // (k_width * 4)):
        raise attr.err(f"tile {list(tile)} cannot be split into 8 x {4 * k_width} pieces "
                       "of a power-of-two count")
    ret = _ident_nd(REG, [1] * rank, rep_order)
    for size, in_dim, d in ((k_width, REG, inner), (4, LANE, inner), (8, LANE, outer),
                            (m // 8, REG, outer), (n // (k_width * 4), REG, inner)):
        ret = ret * LinearLayout.identity1D(size, in_dim, names[d])
    return ret


def _nv_parse(params: Mapping[str, Any]) -> tuple[_Attr, int, list[int], list[int]]:
    attr = _Attr("ttg.nvidia_mma", params, _NV_KEYS)
    major = attr.int("versionMajor")
    attr.int("versionMinor", 0)
    warps = attr.pow2s("warpsPerCTA")
    rank = len(warps)
    if major not in (2, 3):
        raise attr.err(f"versionMajor {major} has no register layout here (supported: 2, 3)")
    if rank < 2:
        raise attr.err(f"warpsPerCTA has rank {rank}; an mma layout has rank 2 or more")
    if major == 2:
        instr = attr.ints("instrShape", length=rank)
    else:
        if rank != 2:
            raise attr.err("versionMajor 3 (Hopper) layouts have rank 2")
        instr = attr.ints("instrShape")
        if len(instr) not in (2, 3):
            raise attr.err(f"'instrShape' {instr} for versionMajor 3 is [M, N] or [M, N, K]")
    return attr, major, warps, instr


def nvidia_mma_to_linear(params: Mapping[str, Any], shape: Sequence[int]) -> LinearLayout:
    """``#ttg.nvidia_mma`` (versionMajor 2 or 3) as a linear layout over ``shape``.

    >>> L = nvidia_mma_to_linear({"versionMajor": 3, "versionMinor": 0, "warpsPerCTA": [4, 1],
    ...                           "instrShape": [16, 8, 16]}, [64, 8])
    >>> L.bases["warp"]
    [[16, 0], [32, 0]]
    """
    attr, major, warps, instr = _nv_parse(params)
    rank = len(warps)
    shape = _check_shape(attr, shape, rank)
    tile = instr if major == 2 else instr[:2]
    order = _matrix_order(rank, row_major=True)
    cta = _nv_tile(tile, 2, order, order, attr)
    warp_order = _matrix_order(rank, row_major=(major != 3))
    cta = cta * _ident_nd(WARP, warps, warp_order).transpose_outs(cta.out_dim_names)
    return _combine(cta, attr.cga(), shape)


def _nv_dot_tile(op_idx: int, k_width: int, rank: int, m8: bool) -> list[int]:
    """One instruction's operand tile: A is 16 x 8*kWidth and B 8*kWidth x 8 (mma.m16n8k*); an
    Ampere parent whose instrShape has M = 8 (the f64 ``mma.m8n8k4``) has A 8 x 4*kWidth and
    B 4*kWidth x 8 (the Triton 3.9 wheel's bases on Triton's lit tests: ``tensor<16x16xf64>`` and
    ``tensor<8x4xf32>`` dot operands of ``instrShape = [8, 8]``, tests/oracles/test_lit_layouts_oracle.py).

    >>> _nv_dot_tile(0, 2, 2, False), _nv_dot_tile(0, 1, 2, True), _nv_dot_tile(1, 1, 2, True)
    ([16, 16], [8, 4], [4, 8])
    """
    tile = [1] * rank
    k = k_width * (4 if m8 else 8)
    m = 8 if m8 else 16
    if op_idx == 0:
        tile[rank - 2], tile[rank - 1] = m, k
    else:
        tile[rank - 2], tile[rank - 1] = k, 8
    return tile


def _nv_dot(dot: _Attr, op_idx: int, k_width: int, parent_params: Mapping[str, Any],
            shape: Sequence[int]) -> LinearLayout:
    pattr, major, warps, instr = _nv_parse(parent_params)
    rank = len(warps)
    shape = _check_shape(dot, shape, rank)
    if k_width == 0:
        raise dot.err("kWidth is mandatory (non-zero) for an nvidia_mma parent")
    if not _is_pow2(k_width):
        raise dot.err(f"kWidth {k_width} is not a power of two")
    if op_idx == 1 and major == 3:
        raise dot.err("opIdx must be 0 for a versionMajor 3 (Hopper) parent: "
                      "wgmma takes only A from registers")
    tile = _nv_dot_tile(op_idx, k_width, rank, major == 2 and instr[rank - 2] == 8)
    order = _dot_order(op_idx, rank)
    cta = _nv_tile(tile, k_width, order, order, dot)
    k_dim = rank - 1 if op_idx == 0 else rank - 2
    warp_order = _matrix_order(rank, row_major=(major != 3))
    cta = cta * _broadcast_nd(WARP, warps, warp_order, k_dim).transpose_outs(cta.out_dim_names)
    return _combine(cta, _dot_cga(pattr.cga(), rank, k_dim), shape)


# ----- dot operands ---------------------------------------------------------------------
_DOT_KEYS = ("opIdx", "parent", "kWidth")


def _parent_kind(parent: Any) -> tuple[str, Mapping[str, Any]]:
    name = getattr(parent, "name", None)
    pparams = getattr(parent, "params", None)
    if not isinstance(name, str) or not isinstance(pparams, Mapping):
        raise LayoutError(f"#ttg.dot_op: parent must be a layout attribute with .name and "
                          f".params, got {parent!r}")
    short = name.split(".", 1)[1] if name.startswith(("ttg.", "triton_gpu.")) else name
    return short, pparams


def dot_op_to_linear(params: Mapping[str, Any], parent: Any, shape: Sequence[int],
                     parent_to_linear: Callable[[Any, Sequence[int]], LinearLayout] | None = None
                     ) -> LinearLayout:
    """``#ttg.dot_op<{opIdx, parent, kWidth}>`` as a linear layout over ``shape``.

    ``parent`` has ``.name`` (``"ttg.nvidia_mma"``, ``"ttg.blocked"``, ``"ttg.amd_mfma"``,
    ``"ttg.amd_wmma"``) and ``.params``. ``parent_to_linear`` is accepted for interface
    symmetry; the operand layouts are built from the parent's parameters directly.

    >>> from types import SimpleNamespace as P
    >>> mma = P(name="ttg.nvidia_mma", params={"versionMajor": 2, "versionMinor": 0,
    ...         "warpsPerCTA": [2, 2], "instrShape": [16, 8]})
    >>> dot_op_to_linear({"opIdx": 0, "kWidth": 2}, mma, [32, 16]).bases["warp"]
    [[0, 0], [16, 0]]
    """
    dot = _Attr("ttg.dot_op", params, _DOT_KEYS)
    op_idx = dot.int("opIdx")
    if op_idx not in (0, 1):
        raise dot.err(f"opIdx must be 0 or 1, got {op_idx}")
    k_width = dot.int("kWidth", 0)
    if "parent" in params and parent is None:
        parent = params["parent"]
    if parent is None:
        raise dot.err("missing parent layout")
    kind, pparams = _parent_kind(parent)
    if kind == "nvidia_mma":
        return _nv_dot(dot, op_idx, k_width, pparams, shape)
    if kind == "blocked":
        return _fma_dot(dot, op_idx, k_width, pparams, shape)
    if kind == "amd_mfma":
        return _mfma_dot(dot, op_idx, k_width, pparams, shape)
    if kind == "amd_wmma":
        return _wmma_dot(dot, op_idx, k_width, pparams, shape)
    raise dot.err(f"unexpected parent layout '{getattr(parent, 'name', parent)}' "
                  "(supported: nvidia_mma, blocked, amd_mfma, amd_wmma)")


_BLOCKED_KEYS = ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order") + ANY_CGA_KEYS


def _fma_dot(dot: _Attr, op_idx: int, k_width: int, pparams: Mapping[str, Any],
             shape: Sequence[int]) -> LinearLayout:
    """FMA (blocked-parent) operand: the whole K extent sits in each thread's registers."""
    if k_width != 0:
        raise dot.err(f"kWidth must be 0 (absent) for a blocked parent, got {k_width}")
    battr = _Attr("ttg.blocked", pparams, _BLOCKED_KEYS)
    size = battr.pow2s("sizePerThread")
    rank = len(size)
    threads = battr.pow2s("threadsPerWarp", length=rank)
    warps = battr.pow2s("warpsPerCTA", length=rank)
    order = battr.ints("order", length=rank)
    if sorted(order) != list(range(rank)):
        raise battr.err(f"order {order} is not a permutation of 0..{rank - 1}")
    k_dim = rank - 1 if op_idx == 0 else rank - 2
    if k_dim < 0:
        raise dot.err(f"opIdx 1 needs a parent of rank 2 or more; the blocked parent has "
                      f"rank {rank}")
    shape = _check_shape(dot, shape, rank)
    reg_size = list(size)
    reg_size[k_dim] = shape[k_dim]
    rep = _in_names(_names(rank), order)
    cta = (_ident_nd(REG, reg_size, order).transpose_outs(rep)
           * _broadcast_nd(LANE, threads, order, k_dim).transpose_outs(rep)
           * _broadcast_nd(WARP, warps, order, k_dim).transpose_outs(rep))
    return _combine(cta, _dot_cga(battr.cga(), rank, k_dim), shape)


# ----- AMD MFMA -------------------------------------------------------------------------
_MFMA_KEYS = ("version", "warpsPerCTA", "instrShape", "isTransposed", "tilesPerWarp",
              "elementBitWidth") + ANY_CGA_KEYS
_MFMA_MN = ((32, 32), (16, 16), (64, 4), (4, 64))


def _mfma_parse(params: Mapping[str, Any], operand: bool = False
                ) -> tuple[_Attr, dict[str, Any]]:
    attr = _Attr("ttg.amd_mfma", params, _MFMA_KEYS)
    version = attr.int("version")
    if version > 4:
        raise attr.err(f"version must be in [0, 4], got {version}")
    warps = attr.pow2s("warpsPerCTA")
    rank = len(warps)
    # The operand conversion handles any rank >= 2; the accumulator only 2 and 3.
    if rank < 2 or (rank > 3 and not operand):
        raise attr.err(f"warpsPerCTA has rank {rank}; expected 2 or 3")
    instr = attr.ints("instrShape", length=3)
    if (instr[0], instr[1]) not in _MFMA_MN:
        raise attr.err(f"invalid (mDim, nDim) = ({instr[0]}, {instr[1]}); "
                       f"supported: {list(_MFMA_MN)}")
    transposed = attr.bool("isTransposed")
    tiles = attr.pow2s("tilesPerWarp", [1] * rank, length=rank)
    ebw = attr.int("elementBitWidth", 32)
    if ebw not in (32, 64):
        raise attr.err(f"elementBitWidth must be 32 or 64, got {ebw}")
    if (instr[0], instr[1]) == (64, 4) and not transposed:
        raise attr.err("a 64x4 mfma layout must be transposed (isTransposed = true)")
    return attr, dict(warps=warps, rank=rank, m=instr[0], n=instr[1], k=instr[2],
                      transposed=transposed, tiles=tiles, ebw=ebw)


def amd_mfma_to_linear(params: Mapping[str, Any], shape: Sequence[int]) -> LinearLayout:
    """``#ttg.amd_mfma`` (the accumulator of an AMD matrix-core instruction) over ``shape``.

    >>> L = amd_mfma_to_linear({"version": 3, "warpsPerCTA": [1, 1], "instrShape": [32, 32, 8],
    ...                         "isTransposed": False}, [32, 32])
    >>> L.bases["register"]
    [[1, 0], [2, 0], [8, 0], [16, 0]]
    """
    attr, p = _mfma_parse(params)
    rank = p["rank"]
    shape = _check_shape(attr, shape, rank)
    names = _names(rank)
    batch = rank == 3
    m_idx, n_idx = 0 + batch, 1 + batch
    dim_m, dim_n = names[m_idx], names[n_idx]
    m, n = p["m"], p["n"]
    height = 1 if p["ebw"] == 64 else 4
    tiles = (m * n) // (_AMD_WARP_SIZE * height)
    # Per instruction: `height` consecutive registers, lanes across one side, then the other.
    reg_dim, lane_first, lane_size = (dim_n, dim_m, m) if p["transposed"] else (dim_m, dim_n, n)
    lane_rest = dim_n if p["transposed"] else dim_m
    tile = (LinearLayout.identity1D(height, REG, reg_dim)
            * LinearLayout.identity1D(lane_size, LANE, lane_first)
            * _ident(_AMD_WARP_SIZE // lane_size, LANE, lane_rest))
    tile = tile * _ident(tiles, REG, reg_dim)
    tile = tile.transpose_outs([dim_n, dim_m])
    # Tiles per warp and warps: N first, the rest of N, then M (N-contiguous tile order).
    tpw, warps = p["tiles"], p["warps"]
    tile = tile * _ident(tpw[n_idx], REG, dim_n)
    tile = tile * _ident(warps[n_idx], WARP, dim_n)
    tile = tile * _ident(shape[n_idx] // (n * warps[n_idx] * tpw[n_idx]), REG, dim_n)
    tile = tile * _ident(tpw[m_idx], REG, dim_m)
    tile = tile * _ident(warps[m_idx], WARP, dim_m)
    if batch:
        tile = (tile * LinearLayout.identity1D(1, REG, names[0])
                * LinearLayout.identity1D(1, LANE, names[0])
                * LinearLayout.identity1D(warps[0], WARP, names[0]))
    return _combine(tile, attr.cga(), shape)


def _mfma_dot(dot: _Attr, op_idx: int, k_width: int, pparams: Mapping[str, Any],
              shape: Sequence[int]) -> LinearLayout:
    pattr, p = _mfma_parse(pparams, operand=True)
    rank = p["rank"]
    shape = _check_shape(dot, shape, rank)
    if k_width == 0:
        raise dot.err("kWidth is mandatory (non-zero) for an amd_mfma parent")
    if not _is_pow2(k_width):
        raise dot.err(f"kWidth {k_width} is not a power of two")
    names = _names(rank)
    non_k_idx = rank - 2 if op_idx == 0 else rank - 1
    k_idx = rank - 1 if op_idx == 0 else rank - 2
    m, n = p["m"], p["n"]
    non_k = m if op_idx == 0 else n
    order = _dot_order(op_idx, rank)
    dim_k, dim_non_k = names[order[0]], names[order[1]]
    tile = (LinearLayout.identity1D(k_width, REG, dim_k)
            * LinearLayout.identity1D(non_k, LANE, dim_non_k)
            * _ident(_AMD_WARP_SIZE // non_k, LANE, dim_k))
    k_tile = _AMD_WARP_SIZE // non_k * k_width
    if ((m, n) == (64, 4) and op_idx == 0) or ((m, n) == (4, 64) and op_idx == 1):
        tile = tile * LinearLayout.identity1D(16, REG, dim_k)
        k_tile *= 16
    if shape[k_idx] > k_tile:
        tile = tile * LinearLayout.identity1D(shape[k_idx] // k_tile, REG, dim_k)
    tile = tile * _ident(p["tiles"][non_k_idx], REG, dim_non_k)
    tile = tile.transpose_outs([dim_k, dim_non_k])
    if rank == 3:
        tile = (tile * LinearLayout.identity1D(1, REG, names[0])
                * LinearLayout.identity1D(1, LANE, names[0]))
    cta = tile * _ident_nd(WARP, p["warps"], _matrix_order(rank, row_major=True))
    return _combine(cta, pattr.cga(), shape).transpose_outs(names)


# ----- AMD WMMA -------------------------------------------------------------------------
_WMMA_KEYS = ("version", "isTranspose", "ctaLayout", "instrShape", "rank") + ANY_CGA_KEYS
_WMMA_INSTR = {
    1: ((16, 16, 16),),
    2: ((16, 16, 16), (16, 16, 32)),
    3: ((16, 16, 4), (16, 16, 32), (16, 16, 64), (16, 16, 128), (32, 16, 64), (32, 16, 128)),
}


def _wmma_parse(params: Mapping[str, Any]) -> tuple[_Attr, dict[str, Any]]:
    attr = _Attr("ttg.amd_wmma", params, _WMMA_KEYS)
    version = attr.int("version")
    if version not in _WMMA_INSTR:
        raise attr.err(f"version must be 1, 2 or 3, got {version}")
    transposed = attr.bool("isTranspose", False)
    instr = tuple(attr.ints("instrShape", [16, 16, 16], length=3))
    if instr not in _WMMA_INSTR[version]:
        raise attr.err(f"invalid instrShape {list(instr)} for version {version}; supported: "
                       f"{[list(s) for s in _WMMA_INSTR[version]]}")
    cta = _wmma_cta_bases(attr)
    return attr, dict(version=version, transposed=transposed, m=instr[0], n=instr[1],
                      k=instr[2], cta=cta)


def _wmma_cta_bases(attr: _Attr) -> dict[str, list[list[int]]]:
    raw = attr.params.get("ctaLayout")
    if raw is None:
        raise attr.err("missing parameter 'ctaLayout'")
    if not isinstance(raw, Mapping):
        raise attr.err(f"'ctaLayout' must be a mapping of in dims to bases, got {raw!r}")
    unknown = sorted(set(raw) - {REG, WARP})
    if unknown:
        raise attr.err(f"'ctaLayout' has unknown in dim(s) {unknown}; expected register, warp")
    out = {}
    for dim in (REG, WARP):
        v = raw.get(dim, [])
        if isinstance(v, (str, bytes, Mapping)) or not isinstance(v, Sequence):
            raise attr.err(f"'ctaLayout.{dim}' must be a list of bases, got {v!r}")
        out[dim] = [_int_list(attr, f"ctaLayout.{dim}[{i}]", b, None) for i, b in enumerate(v)]
    return out


def _wmma_cta(attr: _Attr, bases: Mapping[str, list[list[int]]], rank: int) -> LinearLayout:
    """The ctaLayout (in tile units) as a layout; it must be a permutation up to broadcasts."""
    names = _names(rank)
    seen: set[tuple[int, int]] = set()
    for dim in (REG, WARP):
        for i, b in enumerate(bases[dim]):
            if len(b) != rank:
                raise attr.err(f"'ctaLayout.{dim}[{i}]' = {b} has {len(b)} entries, "
                               f"expected {rank}")
            nz = [(j, x) for j, x in enumerate(b) if x]
            if not nz:
                continue
            if len(nz) > 1 or not _is_pow2(nz[0][1]) or nz[0] in seen:
                raise attr.err("'ctaLayout' must be a permutation layout (each non-zero basis a "
                               f"distinct power of two in one dim), got {dim} basis {b}")
            seen.add(nz[0])
    for j in range(rank):
        bits = sorted(x for d, x in seen if d == j)
        if bits != [1 << i for i in range(len(bits))]:
            raise attr.err(f"'ctaLayout' does not cover dim{j} contiguously: {bits}")
    sizes = {n: 1 << sum(1 for d, _ in seen if d == j) for j, n in enumerate(names)}
    return LinearLayout({REG: bases[REG], WARP: bases[WARP]}, sizes, require_surjective=False)


def amd_wmma_to_linear(params: Mapping[str, Any], shape: Sequence[int]) -> LinearLayout:
    """``#ttg.amd_wmma`` (the accumulator of an RDNA/gfx1250 WMMA) over ``shape``.

    >>> L = amd_wmma_to_linear({"version": 2, "isTranspose": False, "ctaLayout": {"warp": []}},
    ...                        [16, 16])
    >>> L.bases["lane"]
    [[0, 1], [0, 2], [0, 4], [0, 8], [8, 0]]
    """
    attr, p = _wmma_parse(params)
    rank = _wmma_rank(attr, p, shape)
    shape = _check_shape(attr, shape, rank)
    names = _names(rank)
    batch = rank == 3
    m_idx, n_idx = 0 + batch, 1 + batch
    fast, slow = (m_idx, n_idx) if p["transposed"] else (n_idx, m_idx)
    # 32 lanes: 16 along the fast dim, then 2 along the slow dim; 8 registers along slow.
    if p["version"] == 1:
        reg = [(2, slow), (4, slow), (8, slow)]
        lane_last = (1, slow)
    else:
        reg = [(1, slow), (2, slow), (4, slow)]
        lane_last = (8, slow)
    if p["m"] == 32:
        reg.append((16, slow))
    lanes = [(1, fast), (2, fast), (4, fast), (8, fast), lane_last]

    def vec(v: int, d: int) -> list[int]:
        return [v if j == d else 0 for j in range(rank)]

    tile = LinearLayout({REG: [vec(v, d) for v, d in reg], LANE: [vec(v, d) for v, d in lanes]},
                        names)
    rep = _in_names(names, _matrix_order(rank, row_major=True))
    cta = tile.transpose_outs(rep) * _wmma_cta(attr, p["cta"], rank).transpose_outs(rep)
    return _combine(cta, attr.cga(), shape)


def _wmma_rank(attr: _Attr, p: Mapping[str, Any], shape: Sequence[int]) -> int:
    """The layout's rank: ``rank`` if given, else 2, as Triton 3.9's parser reads it.

    Triton's printer omits ``rank``, so a rank-3 layout it prints does not parse back
    in Triton (it aborts); we refuse such text too, with a hint to add ``rank = 3``,
    rather than guess.
    """
    if attr.has("rank"):
        rank = attr.int("rank")
    else:
        rank = 2
        for dim in (REG, WARP):
            for i, b in enumerate(p["cta"][dim]):
                if len(b) != 2:
                    raise attr.err(f"'ctaLayout.{dim}[{i}]' = {b} has {len(b)} entries but "
                                   "without a 'rank' key the layout has rank 2 (as Triton "
                                   "reads it); add 'rank = 3' for a rank-3 layout")
    if rank not in (2, 3):
        raise attr.err(f"rank must be 2 or 3, got {rank}")
    for dim in (REG, WARP):
        for i, b in enumerate(p["cta"][dim]):
            if len(b) != rank:
                raise attr.err(f"'ctaLayout.{dim}[{i}]' = {b} has {len(b)} entries but the "
                               f"layout has rank {rank}")
    return rank


def _wmma_dot(dot: _Attr, op_idx: int, k_width: int, pparams: Mapping[str, Any],
              shape: Sequence[int]) -> LinearLayout:
    """WMMA operand: kWidth regs along K, lanes across non-K then K; warps broadcast on K."""
    pattr, p = _wmma_parse(pparams)
    version = p["version"]
    allowed = {1: (8, 16), 2: (4, 8, 16)}.get(version)
    if allowed and k_width not in allowed:
        raise dot.err(f"kWidth must be one of {list(allowed)} for a WMMA v{version} parent, "
                      f"got {k_width}")
    if k_width == 0:
        raise dot.err(f"kWidth is mandatory (non-zero) for a WMMA v{version} parent")
    if not _is_pow2(k_width):
        raise dot.err(f"kWidth {k_width} is not a power of two")
    rank = _wmma_rank(pattr, p, shape)
    shape = _check_shape(dot, shape, rank)
    names = _names(rank)
    order = _dot_order(op_idx, rank)
    dim_k, dim_non_k = names[order[0]], names[order[1]]
    # A transposed accumulator swaps M and N, so a 32x16 instruction is 16 x 32 then.
    m, n = (p["n"], p["m"]) if p["transposed"] else (p["m"], p["n"])
    non_k = m if op_idx == 0 else n
    non_k_lanes = min(non_k, 16)
    depth = _WMMA_WARP_SIZE // non_k_lanes
    lanes_k = LinearLayout.zeros1D if version == 1 else LinearLayout.identity1D
    tile = (LinearLayout.identity1D(k_width, REG, dim_k)
            * LinearLayout.identity1D(non_k_lanes, LANE, dim_non_k)
            * lanes_k(depth, LANE, dim_k))
    tile = tile * _ident(p["k"] // (depth * k_width), REG, dim_k)
    # A 32-wide non-K side takes a second 16-lane pass in registers.
    tile = tile * LinearLayout.identity1D(non_k // non_k_lanes, REG, dim_non_k)
    if rank == 3:
        tile = (tile * LinearLayout.identity1D(1, REG, names[0])
                * LinearLayout.identity1D(1, LANE, names[0]))
    k_dim = rank - 1 if op_idx == 0 else rank - 2
    cta_bases = {
        dim: [[0 if j == k_dim else x for j, x in enumerate(b)] for b in p["cta"][dim]]
        for dim in (REG, WARP)}
    cta_bases[REG] = [b for b in cta_bases[REG] if any(b)]
    rep = _in_names(names, order)
    cta = tile.transpose_outs(rep) * _wmma_cta(pattr, cta_bases, rank).transpose_outs(rep)
    return _combine(cta, _dot_cga(pattr.cga(), rank, k_dim), shape)
