"""Triton 3.9's memory layouts that ``triton.py`` does not build itself: tensor memory
(``#ttng.tensor_memory_encoding``, ``#ttng.tensor_memory_scales_encoding``), AMD's rotating
shared layout (``#ttg.amd_rotating_shared``), ``#ttg.shared_linear`` and ``#ttg.padded_shared``.

Each converter takes the attribute's parameters (and, for the padded layout, its raw body) and
the shape, and returns what Triton computes; bad or refused input raises ``LayoutError`` naming
the key. The rules follow Triton's ``lib/Dialect/TritonGPU/IR/LinearLayoutConversions.cpp``
(``tensorMemoryToLinearLayout``, ``tensorMemoryScalesToLinearLayout``,
``sharedToLinearLayoutAMDRotating``) and ``Dialect.cpp`` (``SharedLinearEncodingAttr::
toLinearLayout``, the padded layout's linear component); the tests check them against the
Triton 3.9 wheel.

Tensor-memory layouts have in dims ``row, col`` (TMEM lanes and 32-bit columns, as Triton
names them, and Triton's size-1 ``block``) and out dims ``dim0, dim1``.

>>> L = tensor_memory_to_linear({"blockM": 128, "blockN": 32, "colStride": 1}, (128, 64))
>>> L.in_dims, L.bases["col"][-1]
({'row': 128, 'col': 64, 'block': 1}, [0, 32])
"""
from __future__ import annotations

import re
from typing import Mapping, Sequence

from verilayout.bits import is_pow2, log2
from verilayout.core.cga import combine_cta_cga_with_shape, ensure_layout_not_larger_than, standard_out_dims
from verilayout.core.linear_layout import LinearLayout
from verilayout.errors import LayoutError
from verilayout.frontends.mlir import Scanner
from verilayout.hw.nvidia.banks import SharedAddressMap, padded_address_map

__all__ = ["tensor_memory_to_linear", "tensor_memory_view", "tensor_memory_scales_to_linear", "amd_rotating_to_linear",
           "shared_linear_to_linear", "padded_shared_parts", "padded_shared_to_map",
           "TMEM_KEYS", "TMEM_SCALES_KEYS", "ROTATING_KEYS", "SHARED_LINEAR_KEYS"]

#: the keys Triton 3.9 prints; it refuses the older ``unpacked``, ``CTASplitM``, ``CTASplitN``
TMEM_KEYS = ("blockM", "blockN", "colStride", "CGALayout", "twoCTAs", "fp4Padded")
TMEM_SCALES_KEYS = ("CGALayout",)
ROTATING_KEYS = ("vec", "perPhase", "maxPhase", "order", "CGALayout", "CTAsPerCGA", "CTASplitNum",
                 "CTAOrder")
SHARED_LINEAR_KEYS = ("offset", "block", "alignment")


def _int(params: Mapping, key: str, default: int | None = None) -> int:
    v = params.get(key, default)
    if v is None:
        raise LayoutError(f"the key '{key}' is missing")
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise LayoutError(f"'{key}' must be an unsigned integer, got {v!r}")
    return v


def _pows(n: int) -> list[int]:
    return [1 << i for i in range(max(n, 1).bit_length() - 1)]


def _single_cta(params: Mapping, keys: Sequence[str], what: str) -> None:
    for k in keys:
        v = params.get(k)
        if v in (None, 1, [], False):
            continue
        raise LayoutError(f"'{k}' = {v!r}: a multi-CTA {what} is not modelled here (Triton 3.9's "
                          "Python binding does not expose its block bases to check against)")


def tensor_memory_to_linear(params: Mapping, shape: Sequence[int]) -> LinearLayout:
    """``#ttng.tensor_memory_encoding<blockM, blockN, colStride>``: TMEM ``row, col`` -> ``dim0, dim1``.

    Triton's ``tensorMemoryToLinearLayout``: ``log2(colStride)`` zero column bases (a packed
    element spreads over ``colStride`` columns; ``fp4Padded``: one, and ``colStride`` must be 1,
    as the Triton 3.9 wheel computes and checks), then ``blockM`` rows and ``min(blockN, N)``
    columns; a ``blockM = 64`` tile uses 16 rows of each 32-lane quarter and puts its third row
    bit on the next 64 rows (``M > 64``), on the next ``blockN`` columns, or nowhere (``[0, 0]``,
    undefined lanes); the tile then repeats along dim0, then dim1, in columns.

    >>> tensor_memory_to_linear({"blockM": 64, "blockN": 32, "colStride": 1}, (64, 64)).bases["row"]
    [[1, 0], [2, 0], [4, 0], [8, 0], [0, 32], [16, 0], [32, 0]]
    """
    if len(shape) != 2:
        raise LayoutError(f"a tensor-memory layout is 2-d; the shape {list(shape)} has rank {len(shape)}")
    _single_cta(params, ("CGALayout", "twoCTAs"), "tensor-memory layout")
    fp4 = params.get("fp4Padded", False)
    if not isinstance(fp4, bool):
        raise LayoutError(f"'fp4Padded' must be true or false, got {fp4!r}")
    block_m, block_n = _int(params, "blockM"), _int(params, "blockN")
    col_stride = _int(params, "colStride", 1)
    if fp4 and col_stride != 1:
        raise LayoutError(f"'fp4Padded' = true needs 'colStride' = 1, got {col_stride} (Triton "
                          "refuses it too: 'fp4Padded tensor memory layout requires colStride 1')")
    if block_m not in (64, 128):
        raise LayoutError(f"'blockM' = {block_m}; Triton accepts 64 or 128")
    if not is_pow2(block_n) or not is_pow2(col_stride):
        raise LayoutError(f"'blockN' = {block_n} and 'colStride' = {col_stride} must be powers of two")
    m, n = shape
    block_n = min(block_n, n)
    if m < block_m:
        raise LayoutError(f"Triton refuses it too: the tensor shape must be at least "
                          f"{block_m}x{block_n}, got {m}x{n}")
    # fp4Padded: each packed pair of fp4 values (one i8 element) is padded to two columns
    pad = log2(col_stride) + (1 if fp4 else 0)
    cols = [[0, 0] for _ in range(pad)] + [[0, c] for c in _pows(block_n)]
    rows: list[list[int]]
    if block_m == 64:
        third = [64, 0] if m > 64 else [0, block_n] if n > block_n else [0, 0]
        rows = [[r, 0] for r in _pows(16)] + [third, [16, 0], [32, 0]]
        tile_m = 128 if third == [64, 0] else 64
        tile_n = 2 * block_n if third == [0, block_n] else block_n
    else:
        rows = [[r, 0] for r in _pows(128)]
        tile_m, tile_n = 128, block_n
    cols += [[tile_m * r, 0] for r in _pows(m // tile_m)]
    cols += [[0, tile_n * r] for r in _pows(n // tile_n)]
    # Triton's TMEM layouts carry a size-1 ``block`` input dim (one CTA)
    return LinearLayout({"row": rows, "col": cols, "block": []}, {"dim0": m, "dim1": n},
                        require_surjective=False)


def tensor_memory_view(full: LinearLayout, view: Sequence[int]) -> LinearLayout:
    """The layout of a tensor-memory view (``!ttg.memdesc<VIEW, #tmem, ..., ALLOC>``, from
    ``memdesc_index``/``tmem_subslice``) at the allocation's origin: the allocation's layout with
    every basis whose element lies outside the view zeroed (a TMEM row or column the view does not
    use), and the trailing column bases that only reach outside the view dropped (the view spans
    fewer columns). Out dims are the view's.

    Evidence (an inference, stated): the Triton 3.9 wheel's ``compute_tmem_reg_layout`` for a
    ``128x256`` view of a ``256x256`` allocation (blockM 128, blockN 64) has a zero register basis
    where the allocation's column bit 6 reaches row 128, and none when the allocation is the view;
    Triton's unit test ``TensorMemory_subview`` (upstream, after 3.9) expects these layouts.

    >>> full = tensor_memory_to_linear({"blockM": 128, "blockN": 64, "colStride": 1}, (256, 256))
    >>> tensor_memory_view(full, (128, 256)).bases["col"][5:]
    [[0, 32], [0, 0], [0, 64], [0, 128]]
    """
    names = list(full.out_dims)
    if len(view) != len(names) or any(v > full.out_dims[n] or v < 1 or v & (v - 1)
                                      for v, n in zip(view, names)):
        raise LayoutError(f"view shape {list(view)} does not fit the tensor-memory allocation "
                          f"{[full.out_dims[n] for n in names]}")
    def inside(b):
        return all(x < v for x, v in zip(b, view))
    bases = {}
    for dim, bs in full.bases.items():
        out = [list(b) if inside(b) else [0] * len(b) for b in bs]
        if dim == "col":
            while out and not inside(bs[len(out) - 1]):
                out.pop()
        bases[dim] = out
    return LinearLayout(bases, dict(zip(names, view)), require_surjective=False)


def tensor_memory_scales_to_linear(params: Mapping, shape: Sequence[int]) -> LinearLayout:
    """``#ttng.tensor_memory_scales_encoding<>``: the block-scale factors in TMEM (PTX's
    "scale factor A layout, 1X"): 32 rows, broadcast over the four 32-lane warps, 4 byte columns,
    then the next 32 rows in the next column; repeated along dim0, then dim1; fitted to the shape
    by zeroing the largest bases (Triton's ``tensorMemoryScalesToLinearLayout``).

    >>> tensor_memory_scales_to_linear({}, (128, 4)).bases["col"]
    [[0, 1], [0, 2], [32, 0], [64, 0]]
    """
    if len(shape) != 2:
        raise LayoutError(f"a tensor-memory layout is 2-d; the shape {list(shape)} has rank {len(shape)}")
    _single_cta(params, ("CGALayout",), "tensor-memory scales layout")
    m, n = shape
    rows = [[r, 0] for r in _pows(32)] + [[0, 0], [0, 0]]
    cols = [[0, 1], [0, 2], [32, 0]]
    cols += [[64 * r, 0] for r in _pows(-(-m // 64))]
    cols += [[0, 4 * r] for r in _pows(-(-n // 4))]
    reps_m, reps_n = -(-m // 64), -(-n // 4)
    full = LinearLayout({"row": rows, "col": cols}, {"dim0": 64 * reps_m, "dim1": 4 * reps_n},
                        require_surjective=False)
    return ensure_layout_not_larger_than(full, {"dim0": m, "dim1": n})


def amd_rotating_to_linear(params: Mapping, shape: Sequence[int], order: Sequence[int]) -> LinearLayout:
    """``#ttg.amd_rotating_shared``: a swizzle whose phase is XORed with the block of rows it
    is in (Triton's ``sharedToLinearLayoutAMDRotating``): row ``r`` XORs
    ``vec * (((r / perPhase) % maxPhase) ^ ((r / perPhase / maxPhase) % maxPhase))``.

    >>> amd_rotating_to_linear({"vec": 1, "perPhase": 1, "maxPhase": 2}, (8, 2), [1, 0]).bases["offset"]
    [[0, 1], [1, 1], [2, 1], [4, 0]]
    """
    vec, per_phase, max_phase = (_int(params, k) for k in ("vec", "perPhase", "maxPhase"))
    if per_phase == 0 or max_phase == 0:
        raise LayoutError("'perPhase' and 'maxPhase' must be positive")
    rank = len(shape)
    names = standard_out_dims(rank)
    if rank == 1:
        return combine_cta_cga_with_shape(LinearLayout.identity1D(shape[0], "offset", "dim0"), params, shape)
    col, row = order[0], order[1]
    ncols, nrows = shape[col], shape[row]
    bases = [[0, c] for c in _pows(ncols)]
    for r in _pows(nrows):
        phase = (r // per_phase) % max_phase
        block = (r // max_phase // per_phase) % max_phase
        bases.append([r, (vec * (phase ^ block)) % ncols])
    cta = LinearLayout({"offset": bases}, [names[row], names[col]], require_surjective=False)
    cta = LinearLayout(cta.bases, {names[row]: nrows, names[col]: ncols}, require_surjective=False)
    if not cta.is_surjective():
        raise LayoutError(f"the rotating swizzle (vec={vec}, perPhase={per_phase}, maxPhase={max_phase}) "
                          f"is not a permutation of the {nrows}x{ncols} tile")
    for d in order[2:]:
        cta = cta * LinearLayout.identity1D(shape[d], "offset", names[d])
    return combine_cta_cga_with_shape(cta, params, shape)


def _bases(params: Mapping, key: str, rank: int | None) -> list[list[int]]:
    v = params.get(key, [])
    if not isinstance(v, list) or not all(isinstance(b, list) for b in v):
        raise LayoutError(f"'{key}' must be an array of bases (arrays of integers)")
    for i, b in enumerate(v):
        if rank is not None and len(b) != rank:
            raise LayoutError(f"'{key}' basis {i} has {len(b)} entries; expected {rank}")
        if not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in b):
            raise LayoutError(f"'{key}' basis {i} = {b} must hold non-negative integers")
    return [list(b) for b in v]


def _linear_component(params: Mapping, what: str) -> LinearLayout:
    offs = _bases(params, "offset", None)
    if not offs:
        raise LayoutError(f"#{what} has no 'offset' bases")
    rank = len(offs[0])
    offs = _bases(params, "offset", rank)
    block = _bases(params, "block", rank)
    try:
        return LinearLayout({"offset": offs, "block": block}, standard_out_dims(rank))
    except LayoutError as e:
        raise LayoutError(f"'offset': Triton refuses it too: {e}") from None


def shared_linear_to_linear(params: Mapping, shape: Sequence[int]) -> LinearLayout:
    """``#ttg.shared_linear<{offset, block}, alignment = N>``: the bases as written. Triton's
    ``SharedLinearEncodingAttr::toLinearLayout`` neither repeats nor broadcasts: the shape must
    be the bases' extent. ``alignment`` (bytes) does not move elements.

    >>> shared_linear_to_linear({"offset": [[0, 1], [1, 0]], "alignment": 16}, (2, 2)).bases
    {'offset': [[0, 1], [1, 0]], 'block': []}
    """
    if "alignment" in params:
        a = _int(params, "alignment")
        if not is_pow2(a):
            raise LayoutError(f"'alignment' = {a} is not a power of two")
    ll = _linear_component(params, "ttg.shared_linear")
    have = [ll.out_dim_size(n) for n in ll.out_dim_names]
    if have != list(shape):
        raise LayoutError(f"Triton refuses it too: a #ttg.shared_linear layout is neither repeated nor "
                          f"broadcast, so the shape {list(shape)} must equal its bases' extent {have}")
    return ll


_PAIR = re.compile(r"\s*(\d+)\s*:\s*\+\s*(\d+)\s*")


def padded_shared_parts(body: str | None) -> tuple[list[tuple[int, int]], dict]:
    """The ``[interval:+pad, ...]`` pairs and the ``{...}`` params of a ``#ttg.padded_shared`` body.

    >>> padded_shared_parts("[512:+8] {offset = [[0, 1]], block = []}")
    ([(512, 8)], {'offset': [[0, 1]], 'block': []})
    """
    text = (body or "").strip()
    if not text.startswith("[") or "]" not in text:
        raise LayoutError("expected '#ttg.padded_shared<[interval:+pad, ...] {offset = [...], block = [...]}>'")
    inner, rest = text[1:text.index("]")], text[text.index("]") + 1:]
    pairs = []
    for k, part in enumerate(p for p in inner.split(",") if p.strip()):
        m = _PAIR.fullmatch(part)
        if not m:
            raise LayoutError(f"padding {k} is {part.strip()!r}; expected 'interval:+pad'")
        interval, pad = int(m.group(1)), int(m.group(2))
        if not is_pow2(interval) or not is_pow2(pad):
            raise LayoutError(f"padding {interval}:+{pad}: Triton refuses it too: interval and "
                              "padding must be powers of two")
        pairs.append((interval, pad))
    if not pairs:
        raise LayoutError("#ttg.padded_shared needs at least one interval:+pad pair")
    s = Scanner(rest)
    params, _ = s.dictionary() if s.peek("{") else ({}, {})
    if not s.at_end():
        raise LayoutError(f"unexpected {s.found()} after the padded layout's parameters")
    return pairs, params


def padded_shared_to_map(body: str | None, shape: Sequence[int], name: str) -> SharedAddressMap:
    """``#ttg.padded_shared<[interval:+pad, ...] {offset, block}>``: the linear component places
    element ``x`` at logical offset ``o``, stored at ``o + sum(pad * (o // interval))`` (not
    GF(2)-linear: an address map with a z3 encoding). The shape must be the component's extent
    (``{order, shape}`` is the older spelling of a row-major component).

    >>> m = padded_shared_to_map("[4:+1] {offset = [[0, 1], [0, 2], [1, 0]], block = []}", (2, 4), "p")
    >>> m.offset({"dim0": 1, "dim1": 0})
    5
    """
    pairs, params = padded_shared_parts(body)
    if "offset" in params:
        unknown = set(params) - {"offset", "block"}
        if unknown:
            raise LayoutError(f"unknown keys {sorted(unknown)} in #ttg.padded_shared")
        lin = _linear_component(params, "ttg.padded_shared")
        if any(any(b) for b in lin.bases.get("block", [])):
            raise LayoutError("'block': multi-CTA padded layouts are not modelled here")
        lin = LinearLayout({"offset": lin.bases["offset"]}, lin.out_dim_names)
    elif "order" in params:
        unknown = set(params) - {"order", "shape"}
        if unknown:
            raise LayoutError(f"unknown keys {sorted(unknown)} in #ttg.padded_shared (its short form "
                              "is '{order = [...], shape = [...]}')")
        order = params["order"]
        dims = params.get("shape", list(shape))
        if not isinstance(dims, list) or not dims or not all(
                isinstance(d, int) and not isinstance(d, bool) and d >= 1 and is_pow2(d) for d in dims):
            raise LayoutError(f"'shape' = {dims!r}: expected a list of powers of two")
        if not isinstance(order, list) or sorted(order) != list(range(len(dims))):
            raise LayoutError(f"'order' = {order!r} is not a permutation of the {len(dims)} dims")
        lin = LinearLayout.empty()
        names = standard_out_dims(len(dims))
        for d in order:
            lin = lin * LinearLayout.identity1D(dims[d], "offset", names[d])
        lin = lin.transpose_outs(names)
    else:
        raise LayoutError("#ttg.padded_shared needs 'offset = [...]' bases (or 'order = [...]')")
    have = [lin.out_dim_size(n) for n in lin.out_dim_names]
    if have != list(shape):
        raise LayoutError(f"the shape {list(shape)} differs from the padded layout's extent {have}")
    if not lin.is_invertible():
        raise LayoutError("'offset': the bases are not a bijection onto the tensor")
    return padded_address_map(lin, pairs, name)
