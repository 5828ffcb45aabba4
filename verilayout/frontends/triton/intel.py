"""Intel DPAS layouts from Triton's MLIR: ``#triton_intel_gpu.dpas`` / ``#ttig.dpas`` and
``#ttg.dot_op`` with a DPAS parent.

The conversion itself lives in :mod:`verilayout.hw.intel.dpas`; this module reads
the attribute parameters (every key checked, ``A``/``B``/``C`` compared with the
shapes the other keys imply) and plugs the converters into the Triton front-end's
registry (:func:`register`).

>>> p = {"repeatCount": 8, "systolicDepth": 8, "executionSize": 16, "opsPerChan": 2,
...      "threadsPerWarp": 16, "warpsPerCTA": [1, 1], "repCluster": [1, 1]}
>>> dpas_to_linear(p, (8, 16)).in_dims
{'register': 8, 'lane': 16, 'warp': 1, 'block': 1}
>>> dot_op_dpas_to_linear({"opIdx": 1, "kWidth": 2}, p, (16, 16)).bases["register"]
[[1, 0], [2, 0], [4, 0], [8, 0]]
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from verilayout.bits import doubling
from verilayout.bits import is_pow2
from verilayout.core.cga import ANY_CGA_KEYS, combine_cta_cga_with_shape
from verilayout.errors import LayoutError
from verilayout.hw.intel.dpas import Dpas
from verilayout.core.linear_layout import LinearLayout

__all__ = ["DPAS_KEYS", "DOT_KEYS", "dpas_params", "dpas_to_linear", "dot_op_dpas_to_linear",
           "is_dpas", "DPAS_NAMES", "SUBGROUP_2D_BLOCK_KEYS", "subgroup_2d_block_to_linear",
           "subgroup_2d_block_tile"]

#: The attribute names that mean a DPAS layout.
DPAS_NAMES = ("triton_intel_gpu.dpas", "ttig.dpas")

_REQUIRED = ("repeatCount", "systolicDepth", "executionSize", "opsPerChan", "threadsPerWarp",
             "warpsPerCTA", "repCluster")
#: Keys ``#ttig.dpas`` accepts; ``A``, ``B``, ``C`` are printed by Triton and derived;
#: ``fp4KPack`` is optional (``DpasEncodingAttr::parse`` in the Intel backend).
DPAS_KEYS = _REQUIRED + ("fp4KPack", "A", "B", "C")
#: Keys ``#ttg.dot_op`` accepts.
DOT_KEYS = ("opIdx", "parent", "kWidth")


def _uint(params: Mapping[str, Any], key: str) -> int:
    v = params[key]
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise LayoutError(f"'{key}' must be an unsigned integer, got {v!r}")
    return v


def _uints(params: Mapping[str, Any], key: str) -> list[int]:
    v = params[key]
    if not isinstance(v, (list, tuple)) or not all(
            isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in v):
        raise LayoutError(f"'{key}' must be a list of unsigned integers, got {v!r}")
    return list(v)


def _check_keys(params: Mapping[str, Any], allowed: Sequence[str], what: str) -> None:
    for k in params:
        if k not in allowed:
            raise LayoutError(f"unknown key '{k}' for {what} (known: {', '.join(allowed)})")


def _check_params(params, allowed: Sequence[str], required: Sequence[str], what: str,
                  kind: str) -> None:
    """Law: returns only for a mapping whose keys are all ``allowed`` and include every one of
    ``required``; else LayoutError names the first wrong or missing key (``kind``: the message's
    name for the parameters, ``what``: the attribute)."""
    if not isinstance(params, Mapping):
        raise LayoutError(f"{kind} parameters must be a dict, got {type(params).__name__}")
    _check_keys(params, allowed, what)
    for k in required:
        if k not in params:
            raise LayoutError(f"{what} is missing the key '{k}'")


def dpas_params(params: Mapping[str, Any]) -> Dpas:
    """Validate a ``#ttig.dpas`` parameter dict and return the :class:`Dpas` it describes.

    ``A``, ``B`` and ``C`` are optional; when present they must equal the shapes
    Triton derives (``A = [repeatCount * repCluster[-2], systolicDepth * opsPerChan]``...).

    >>> dpas_params({"repeatCount": 8, "systolicDepth": 8, "executionSize": 16, "opsPerChan": 2,
    ...              "threadsPerWarp": 16, "warpsPerCTA": [1, 1], "repCluster": [1, 1],
    ...              "A": [8, 8]})
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: 'A' = [8, 8] differs from the shape the parameters imply, [8, 16] (repeatCount * repCluster[-2], systolicDepth * opsPerChan)
    """
    _check_params(params, DPAS_KEYS, _REQUIRED, "#ttig.dpas", "DPAS")
    d = Dpas(_uint(params, "repeatCount"), _uint(params, "systolicDepth"),
             _uint(params, "executionSize"), _uint(params, "opsPerChan"),
             _uint(params, "threadsPerWarp"), tuple(_uints(params, "warpsPerCTA")),
             tuple(_uints(params, "repCluster")),
             _uint(params, "fp4KPack") if "fp4KPack" in params else None)
    derived = {"A": (d.shape_a, "repeatCount * repCluster[-2], systolicDepth * opsPerChan"),
               "B": (d.shape_b, "systolicDepth * opsPerChan, executionSize * repCluster[-1]"),
               "C": (d.shape_c, "repeatCount * repCluster[-2], executionSize * repCluster[-1]")}
    for key, (shape, how) in derived.items():
        if key in params:
            given = _uints(params, key)
            want = [1] * (d.rank - 2) + list(shape)
            if given != want:
                raise LayoutError(f"'{key}' = {given} differs from the shape the parameters "
                                  f"imply, {want} ({how})")
    return d


def dpas_to_linear(params: Mapping[str, Any], shape: Sequence[int]) -> LinearLayout:
    """The accumulator layout ``#ttig.dpas<{...}>`` over ``shape``.

    >>> p = {"repeatCount": 8, "systolicDepth": 8, "executionSize": 16, "opsPerChan": 2,
    ...      "threadsPerWarp": 16, "warpsPerCTA": [2, 1], "repCluster": [1, 1]}
    >>> dpas_to_linear(p, (16, 16)).bases["warp"]
    [[8, 0]]
    """
    return dpas_params(params).layout(shape, 2)


def _parent_params(parent: Any) -> Mapping[str, Any]:
    if isinstance(parent, Mapping):
        return parent
    name = getattr(parent, "name", None)
    params = getattr(parent, "params", None)
    if name is None or params is None:
        raise LayoutError(f"'parent' must be a #ttig.dpas attribute, got {parent!r}")
    if name not in DPAS_NAMES:
        raise LayoutError(f"'parent' must be a #ttig.dpas attribute, got #{name}")
    return params


def dot_op_dpas_to_linear(params: Mapping[str, Any], parent: Any,
                          shape: Sequence[int]) -> LinearLayout:
    """``#ttg.dot_op<{opIdx, parent = #ttig.dpas<...>, kWidth}>`` over ``shape``.

    ``parent`` is the parsed DPAS attribute (``.name``, ``.params``) or its
    parameter dict. ``kWidth`` must be what the Intel backend requires: opsPerChan
    for B, opsPerChan / 2 (at least 1) for A.

    >>> p = {"repeatCount": 8, "systolicDepth": 8, "executionSize": 16, "opsPerChan": 2,
    ...      "threadsPerWarp": 16, "warpsPerCTA": [1, 1], "repCluster": [1, 1]}
    >>> dot_op_dpas_to_linear({"opIdx": 0, "kWidth": 2}, p, (8, 16))
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: 'kWidth' = 2 but a DPAS operand A with opsPerChan = 2 needs kWidth = 1
    """
    if not isinstance(params, Mapping):
        raise LayoutError(f"dot_op parameters must be a dict, got {type(params).__name__}")
    _check_keys(params, DOT_KEYS, "#ttg.dot_op")
    if "opIdx" not in params:
        raise LayoutError("#ttg.dot_op is missing the key 'opIdx'")
    op_idx = _uint(params, "opIdx")
    if op_idx not in (0, 1):
        raise LayoutError(f"'opIdx' must be 0 or 1, got {op_idx}")
    d = dpas_params(_parent_params(parent))
    if "kWidth" not in params:
        raise LayoutError("#ttg.dot_op with a DPAS parent is missing the key 'kWidth'")
    k_width = _uint(params, "kWidth")
    if k_width != d.k_width(op_idx):
        raise LayoutError(f"'kWidth' = {k_width} but a DPAS operand {'AB'[op_idx]} with "
                          f"opsPerChan = {d.ops_per_chan} needs kWidth = {d.k_width(op_idx)}")
    return d.layout(shape, op_idx)


def is_dpas(attr: Any) -> bool:
    """Whether a parsed attribute is ``#triton_intel_gpu.dpas`` / ``#ttig.dpas``.

    >>> from types import SimpleNamespace as A
    >>> is_dpas(A(name="ttig.dpas", params={})), is_dpas(A(name="ttg.blocked", params={}))
    (True, False)
    """
    return getattr(attr, "name", None) in DPAS_NAMES


# ----- #ttig.subgroup_2d_block --------------------------------------------------------------

_SG2D_REQUIRED = ("warpsPerCTA", "instrShape", "numBlocks", "order", "kWidth", "threadsPerWarp")
#: Keys ``#ttig.subgroup_2d_block`` accepts (``Subgroup2DBlockEncodingAttr::parse``, Intel
#: backend), the CGA keys in either spelling.
SUBGROUP_2D_BLOCK_KEYS = _SG2D_REQUIRED + ANY_CGA_KEYS


def subgroup_2d_block_tile(height: int, width: int,
                           threads_per_warp: int) -> tuple[list[list[int]], list[list[int]]]:
    """Register and lane bases ``(row, col)`` of one ``height x width`` block load's data in a
    sub-group, as the Intel backend lays it out (``createRegisterLaneBases``).

    Law: each lane holds ``p = ceil(width / threadsPerWarp)`` consecutive elements of a row
    (registers), lanes run along the row, then further rows fill the remaining lanes; the
    rows beyond those go to registers.

    >>> subgroup_2d_block_tile(4, 8, 16)
    ([[2, 0]], [[0, 1], [0, 2], [0, 4], [1, 0]])
    """
    packed = -(-width // threads_per_warp)
    lanes = [[0, i] for i in doubling(packed, width)]
    rows_per_warp = -(-threads_per_warp // (1 << len(lanes)))
    lanes += [[i, 0] for i in doubling(1, rows_per_warp)]
    regs = [[0, i] for i in doubling(1, packed)]
    regs += [[i * rows_per_warp, 0] for i in doubling(1, height // rows_per_warp)]
    return regs, lanes


def subgroup_2d_block_to_linear(params: Mapping[str, Any], shape: Sequence[int]) -> LinearLayout:
    """``#ttig.subgroup_2d_block<{...}>`` over ``shape``, exactly as the Intel backend converts it
    (``subgroup2DBlockToLinearLayout``).

    Law: the block tile of :func:`subgroup_2d_block_tile` for ``instrShape``, ``numBlocks``
    blocks side by side along dim 1 (registers, whatever the order), warps laid out row-major
    over ``warpsPerCTA`` and broadcast (zero bases) along ``order[0]``, then fitted to
    ``shape`` with the CGA layout. Checked as ``Subgroup2DBlockEncodingAttr::verify`` checks:
    rank 2, ``kWidth`` 1, 2 or 4, ``threadsPerWarp`` 16; sizes must be powers of two (a linear
    layout needs them: verilayout's restriction).

    >>> p = {"warpsPerCTA": [2, 1], "instrShape": [8, 16], "numBlocks": 2, "order": [1, 0],
    ...      "kWidth": 2, "threadsPerWarp": 16}
    >>> subgroup_2d_block_to_linear(p, (16, 32)).bases["warp"]
    [[8, 0]]
    """
    _check_params(params, SUBGROUP_2D_BLOCK_KEYS, _SG2D_REQUIRED, "#ttig.subgroup_2d_block",
                  "subgroup_2d_block")
    warps, instr, order = (_uints(params, k) for k in ("warpsPerCTA", "instrShape", "order"))
    for key, v in (("instrShape", instr), ("order", order), ("warpsPerCTA", warps)):
        if len(v) != 2:
            raise LayoutError(f"'{key}' must be rank 2 but has {len(v)} entries")
    if sorted(order) != [0, 1]:
        raise LayoutError(f"'order' = {order} is not a permutation of 0..1")
    k_width, tpw, blocks = (_uint(params, k) for k in ("kWidth", "threadsPerWarp", "numBlocks"))
    if k_width not in (1, 2, 4):
        raise LayoutError(f"'kWidth' must be 1, 2 or 4, got {k_width}")
    if tpw != 16:
        raise LayoutError(f"'threadsPerWarp' must be 16, got {tpw}")
    for key, vals in (("instrShape", instr), ("warpsPerCTA", warps), ("numBlocks", [blocks])):
        for v in vals:
            if not is_pow2(v):
                raise LayoutError(f"'{key}' has {v}, not a power of two (a linear layout needs one)")
    if len(shape) != 2:
        raise LayoutError(f"tensor shape {list(shape)} has rank {len(shape)}; "
                          "#ttig.subgroup_2d_block has rank 2")
    regs, lanes = subgroup_2d_block_tile(instr[0], instr[1], tpw)
    cta = LinearLayout({"register": regs, "lane": lanes}, ["dim0", "dim1"])
    cta = cta * LinearLayout.identity1D(blocks, "register", "dim1")
    inner = order[0]
    warp = LinearLayout.empty()
    for d in (1, 0):  # row-major warp order, the inner (order[0]) dim broadcast
        make = LinearLayout.zeros1D if d == inner else LinearLayout.identity1D
        warp = warp * make(warps[d], "warp", f"dim{d}")
    cta = cta * warp.transpose_outs(cta.out_dim_names)
    return combine_cta_cga_with_shape(cta, params, shape)
