"""Attribute helpers shared by the Triton converters: positioned errors, typed parameter readers
(``_uint``, ``_uints``, ``_order``, ...) and the CGA (CTA-split) helpers.

Every reader raises :class:`~verilayout.errors.LayoutError` naming the attribute's line and
column, and the key's when the fault is in one key.

>>> from verilayout.frontends.mlir import parse_value
>>> _uints(parse_value("#ttg.blocked<{order = [1, 0]}>"), "order", 2)
[1, 0]
"""
from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from verilayout.errors import LayoutError
from verilayout.core.linear_layout import LinearLayout
from verilayout.core import cga as _cga
from verilayout.core.cga import combine_cta_cga_with_shape, make_cga_layout, standard_out_dims
from verilayout.frontends.mlir import Attr, format_value


# ----------------------------------------------------------------------------
# parameter helpers
# ----------------------------------------------------------------------------

def _fail(attr: Attr, key: str | None, msg: str) -> LayoutError:
    return LayoutError(f"{attr.where(key)}: {msg}")


def _check_keys(attr: Attr, allowed: Sequence[str], required: Sequence[str] = ()) -> None:
    for k in attr.params:
        if k not in allowed:
            raise _fail(attr, k, f"unknown key '{k}' for #{attr.name} "
                                 f"(known: {', '.join(allowed)})")
    for k in required:
        if k not in attr.params:
            raise _fail(attr, None, f"#{attr.name} is missing the key '{k}'")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _uint(attr: Attr, key: str, default: int | None = None) -> int:
    if key not in attr.params:
        if default is None:
            raise _fail(attr, None, f"#{attr.name} is missing the key '{key}'")
        return default
    v = attr.params[key]
    if not _is_int(v) or v < 0:
        raise _fail(attr, key, f"'{key}' must be an unsigned integer, got {format_value(v)}")
    return v


def _bool(attr: Attr, key: str, default: bool | None = None) -> bool:
    if key not in attr.params:
        if default is None:
            raise _fail(attr, None, f"#{attr.name} is missing the key '{key}'")
        return default
    v = attr.params[key]
    if not isinstance(v, bool):
        raise _fail(attr, key, f"'{key}' must be true or false, got {format_value(v)}")
    return v


def _uints(attr: Attr, key: str, rank: int | None = None) -> list[int]:
    v = attr.params.get(key)
    if v is None:
        raise _fail(attr, None, f"#{attr.name} is missing the key '{key}'")
    if not isinstance(v, list) or not all(_is_int(x) and x >= 0 for x in v):
        raise _fail(attr, key, f"'{key}' must be a list of unsigned integers, got {format_value(v)}")
    if rank is not None and len(v) != rank:
        raise _fail(attr, key, f"'{key}' has {len(v)} entries; expected {rank} (the rank)")
    return list(v)


def _pow2s(attr: Attr, key: str, values: Sequence[int]) -> None:
    for i, v in enumerate(values):
        if v <= 0 or v & (v - 1):
            raise _fail(attr, key, f"'{key}'[{i}] = {v} is not a power of two")


def _order(attr: Attr, key: str, rank: int) -> list[int]:
    order = _uints(attr, key, rank)
    if sorted(order) != list(range(rank)):
        raise _fail(attr, key, f"'{key}' = {order} is not a permutation of 0..{rank - 1}")
    return order


def _rank_matches(attr: Attr, rank: int, shape: tuple, what: str) -> None:
    if rank != len(shape):
        raise _fail(attr, None, f"#{attr.name} has rank {rank} ({what}) but the tensor shape "
                                f"{list(shape)} has rank {len(shape)}")


def _cga_checked(attr: Attr, rank: int) -> None:
    """Validate the CGA keys now, so errors carry the key's position."""
    key = next((k for k in ("CGALayout",) + _cga.OLD_CGA_KEYS if k in attr.params), None)
    try:
        make_cga_layout(attr.params, rank)
    except LayoutError as e:
        raise _fail(attr, key, str(e)) from None


def _combine(attr: Attr, cta: LinearLayout, shape: tuple) -> LinearLayout:
    try:
        return combine_cta_cga_with_shape(cta, attr.params, shape)
    except LayoutError as e:
        raise _fail(attr, None, str(e)) from None


def _cga_split(attr: Attr, rank: int) -> list[int]:
    cga = make_cga_layout(attr.params, rank)
    return [cga.out_dim_size(n) for n in standard_out_dims(rank)]


def _shape_per_cta(attr: Attr, shape: tuple) -> list[int]:
    """Triton's ``getShapePerCTA``: ``shape[d] / min(shape[d], split[d])``."""
    split = _cga_split(attr, len(shape))
    return [s // min(s, n) for s, n in zip(shape, split)]


#: The CGA keys every CTA-split layout accepts (the new ``CGALayout`` and the old spellings).
_CGA_KEYS = ("CGALayout",) + _cga.OLD_CGA_KEYS


def _located(attr: Attr, call: Callable[[], Any]) -> Any:
    """``call()``, with a converter's error located at the attribute (and at the key it names)."""
    try:
        return call()
    except LayoutError as e:
        msg = str(e)
        if re.match(r"line \d+, col \d+:", msg):
            raise
        key = next((k for k in attr.params if f"'{k}'" in msg), None)
        raise _fail(attr, key, msg) from None


def _wrap_b(attr: Attr, call: Callable[[], LinearLayout]) -> LinearLayout:
    out = _located(attr, call)
    if not isinstance(out, LinearLayout):
        raise LayoutError(f"{attr.where()}: converter for #{attr.name} returned {type(out).__name__}")
    return out
