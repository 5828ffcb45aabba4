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

from verilayout.errors import LayoutError
from verilayout.hw.intel.dpas import Dpas
from verilayout.core.linear_layout import LinearLayout

__all__ = ["DPAS_KEYS", "DOT_KEYS", "dpas_params", "dpas_to_linear", "dot_op_dpas_to_linear",
           "is_dpas", "DPAS_NAMES"]

#: The attribute names that mean a DPAS layout.
DPAS_NAMES = ("triton_intel_gpu.dpas", "ttig.dpas")

_REQUIRED = ("repeatCount", "systolicDepth", "executionSize", "opsPerChan", "threadsPerWarp",
             "warpsPerCTA", "repCluster")
#: Keys ``#ttig.dpas`` accepts; ``A``, ``B``, ``C`` are printed by Triton and derived.
DPAS_KEYS = _REQUIRED + ("A", "B", "C")
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
    if not isinstance(params, Mapping):
        raise LayoutError(f"DPAS parameters must be a dict, got {type(params).__name__}")
    _check_keys(params, DPAS_KEYS, "#ttig.dpas")
    for k in _REQUIRED:
        if k not in params:
            raise LayoutError(f"#ttig.dpas is missing the key '{k}'")
    d = Dpas(_uint(params, "repeatCount"), _uint(params, "systolicDepth"),
             _uint(params, "executionSize"), _uint(params, "opsPerChan"),
             _uint(params, "threadsPerWarp"), tuple(_uints(params, "warpsPerCTA")),
             tuple(_uints(params, "repCluster")))
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


