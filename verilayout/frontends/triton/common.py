"""Attribute helpers shared by the Triton converters: positioned errors, typed parameter readers
(``read_uint``, ``read_uints``, ``read_order``, ...) and the CGA (CTA-split) helpers.

Every reader raises :class:`~verilayout.errors.LayoutError` naming the attribute's line and
column, and the key's when the fault is in one key.

>>> from verilayout.frontends.mlir import parse_value
>>> read_uints(parse_value("#ttg.blocked<{order = [1, 0]}>"), "order", 2)
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

def attr_error(attr: Attr, key: str | None, msg: str) -> LayoutError:
    """The ``LayoutError`` for ``msg``, located at ``attr`` (and at ``key`` when given)."""
    return LayoutError(f"{attr.where(key)}: {msg}")


def check_keys(attr: Attr, allowed: Sequence[str], required: Sequence[str] = ()) -> None:
    """Raise unless every key of ``attr`` is in ``allowed`` and every ``required`` key is present."""
    for k in attr.params:
        if k not in allowed:
            raise attr_error(attr, k, f"unknown key '{k}' for #{attr.name} "
                                      f"(known: {', '.join(allowed)})")
    for k in required:
        if k not in attr.params:
            raise attr_error(attr, None, f"#{attr.name} is missing the key '{k}'")


def is_int(v: Any) -> bool:
    """Whether ``v`` is an ``int`` and not a ``bool``."""
    return isinstance(v, int) and not isinstance(v, bool)


def read_uint(attr: Attr, key: str, default: int | None = None) -> int:
    """The unsigned integer at ``key`` (``default`` when absent and given)."""
    if key not in attr.params:
        if default is None:
            raise attr_error(attr, None, f"#{attr.name} is missing the key '{key}'")
        return default
    v = attr.params[key]
    if not is_int(v) or v < 0:
        raise attr_error(attr, key, f"'{key}' must be an unsigned integer, got {format_value(v)}")
    return v


def read_bool(attr: Attr, key: str, default: bool | None = None) -> bool:
    """The boolean at ``key`` (``default`` when absent and given)."""
    if key not in attr.params:
        if default is None:
            raise attr_error(attr, None, f"#{attr.name} is missing the key '{key}'")
        return default
    v = attr.params[key]
    if not isinstance(v, bool):
        raise attr_error(attr, key, f"'{key}' must be true or false, got {format_value(v)}")
    return v


def read_uints(attr: Attr, key: str, rank: int | None = None) -> list[int]:
    """The list of unsigned integers at ``key`` (of length ``rank`` when given)."""
    v = attr.params.get(key)
    if v is None:
        raise attr_error(attr, None, f"#{attr.name} is missing the key '{key}'")
    if not isinstance(v, list) or not all(is_int(x) and x >= 0 for x in v):
        raise attr_error(attr, key, f"'{key}' must be a list of unsigned integers, got {format_value(v)}")
    if rank is not None and len(v) != rank:
        raise attr_error(attr, key, f"'{key}' has {len(v)} entries; expected {rank} (the rank)")
    return list(v)


def check_pow2s(attr: Attr, key: str, values: Sequence[int]) -> None:
    """Raise unless every entry of ``values`` (read from ``key``) is a power of two."""
    for i, v in enumerate(values):
        if v <= 0 or v & (v - 1):
            raise attr_error(attr, key, f"'{key}'[{i}] = {v} is not a power of two")


def read_order(attr: Attr, key: str, rank: int) -> list[int]:
    """The permutation of ``0..rank-1`` at ``key``."""
    order = read_uints(attr, key, rank)
    if sorted(order) != list(range(rank)):
        raise attr_error(attr, key, f"'{key}' = {order} is not a permutation of 0..{rank - 1}")
    return order


def check_rank(attr: Attr, rank: int, shape: tuple, what: str) -> None:
    """Raise unless ``rank`` (what ``what`` names) equals the rank of ``shape``."""
    if rank != len(shape):
        raise attr_error(attr, None, f"#{attr.name} has rank {rank} ({what}) but the tensor shape "
                                     f"{list(shape)} has rank {len(shape)}")


def check_cga(attr: Attr, rank: int) -> None:
    """Validate the CGA keys now, so errors carry the key's position."""
    key = next((k for k in _cga.ANY_CGA_KEYS if k in attr.params), None)
    try:
        make_cga_layout(attr.params, rank)
    except LayoutError as e:
        raise attr_error(attr, key, str(e)) from None


def combine_cga(attr: Attr, cta: LinearLayout, shape: tuple) -> LinearLayout:
    """``cta`` combined with the CGA keys of ``attr`` over ``shape``, errors located at ``attr``."""
    try:
        return combine_cta_cga_with_shape(cta, attr.params, shape)
    except LayoutError as e:
        raise attr_error(attr, None, str(e)) from None


def _cga_split(attr: Attr, rank: int) -> list[int]:
    cga = make_cga_layout(attr.params, rank)
    return [cga.out_dim_size(n) for n in standard_out_dims(rank)]


def shape_per_cta(attr: Attr, shape: tuple) -> list[int]:
    """Triton's ``getShapePerCTA``: ``shape[d] / min(shape[d], split[d])``."""
    split = _cga_split(attr, len(shape))
    return [s // min(s, n) for s, n in zip(shape, split)]



def located_call(attr: Attr, call: Callable[[], Any]) -> Any:
    """``call()``, with a converter's error located at the attribute (and at the key it names)."""
    try:
        return call()
    except LayoutError as e:
        msg = str(e)
        if re.match(r"line \d+, col \d+:", msg):
            raise
        key = next((k for k in attr.params if f"'{k}'" in msg), None)
        raise attr_error(attr, key, msg) from None


def checked_linear(attr: Attr, call: Callable[[], LinearLayout]) -> LinearLayout:
    """``call()``'s ``LinearLayout``, errors located at ``attr``; raise if it returns anything else."""
    out = located_call(attr, call)
    if not isinstance(out, LinearLayout):
        raise LayoutError(f"{attr.where()}: converter for #{attr.name} returned {type(out).__name__}")
    return out
