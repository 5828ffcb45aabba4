"""Power-of-two helpers shared by every layer (one home for them).

Law: ``is_pow2(x)`` iff ``x == 1 << log2(x)``; ``log2`` is defined on powers of two only.

>>> is_pow2(64), is_pow2(0), is_pow2(12)
(True, False, False)
>>> log2(64)
6
"""
from __future__ import annotations

import sys

from typing import Any

from verilayout.errors import LayoutError


def is_integer(v: object) -> bool:
    """True for an ``int`` or a numpy integer, False for a ``bool`` and everything else; it never
    imports numpy (no numpy integer exists before numpy is loaded: start-up time).

    >>> is_integer(3), is_integer(True), is_integer(3.0)
    (True, False, False)
    """
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    np = sys.modules.get("numpy")
    return np is not None and isinstance(v, np.integer)


def is_pow2(x: object) -> bool:
    """True for an int (not bool) ``x >= 1`` with one bit set.

    >>> [v for v in range(10) if is_pow2(v)]
    [1, 2, 4, 8]
    """
    if isinstance(x, bool) or not isinstance(x, int):
        try:
            x = int(x.__index__())  # numpy integers
        except (AttributeError, TypeError):
            return False
    return x >= 1 and x & (x - 1) == 0


def log2(x: int) -> int:
    """The bit index of the highest set bit: ``log2(2**k) == k`` (floor log2 for other x >= 1).

    >>> log2(1), log2(1024), log2(6)
    (0, 10, 2)
    """
    return int(x).bit_length() - 1


def log2_exact(size: object, what: str) -> int:
    """``log2(size)`` for a positive power of two, else a :class:`LayoutError` naming ``what``.

    Law: ``1 << log2_exact(n, w) == n`` for every power of two ``n``.

    >>> log2_exact(32, "dim0")
    5
    >>> log2_exact(12, "dim0")
    Traceback (most recent call last):
    verilayout.errors.LayoutError: dim0 has size 12, not a power of two
    """
    if isinstance(size, bool) or not hasattr(size, "__index__") or int(size.__index__()) < 1:
        raise LayoutError(f"{what} has size {size!r}; sizes are positive integers")
    n = int(size.__index__())
    if n & (n - 1):
        raise LayoutError(f"{what} has size {n}, not a power of two")
    return n.bit_length() - 1


def ceil_log2(x: int) -> int:
    """Bits needed to index ``x`` values: the least ``k`` with ``2**k >= x`` (0 for ``x <= 1``).

    >>> ceil_log2(1), ceil_log2(8), ceil_log2(9)
    (0, 3, 4)
    """
    return max(0, int(x) - 1).bit_length()


def next_pow2(x: int) -> int:
    """The least power of two ``>= x`` (1 for ``x <= 1``): ``next_pow2(x) == 1 << ceil_log2(x)``.

    >>> next_pow2(0), next_pow2(5), next_pow2(64)
    (1, 8, 64)
    """
    return 1 << ceil_log2(x)


def index_bits(extent: int) -> int:
    """Bits of a coordinate over ``extent`` values, at least one: ``max(1, ceil_log2(extent))``.

    >>> index_bits(1), index_bits(8), index_bits(9)
    (1, 3, 4)
    """
    return max(1, ceil_log2(extent))


def trailing_zeros(x: int) -> int:
    """The index of the lowest set bit of ``x >= 1``: ``log2(x & -x)``.

    >>> trailing_zeros(8), trailing_zeros(12), trailing_zeros(1)
    (3, 2, 0)
    """
    return log2(x & -x)


def doubling(start: int, stop: int) -> list[int]:
    """``start, 2*start, 4*start, ...`` while below ``stop`` (the strides of a layout's bases).

    Law: every value is ``start << i`` and ``< stop``; empty when ``start >= stop``.

    >>> doubling(1, 16), doubling(4, 32), doubling(8, 8)
    ([1, 2, 4, 8], [4, 8, 16], [])
    """
    out, v = [], start
    while v < stop:
        out.append(v)
        v *= 2
    return out


def plain_ints(value: Any) -> Any:
    """``value`` with numpy integers (anything with ``__index__`` that is not a bool) made Python
    ints, inside lists and tuples too; anything else unchanged, for the callee to refuse.

    Law: ``plain_ints(x) == x`` for every int, and the type is ``int``.

    >>> import numpy as np
    >>> plain_ints([np.int64(8), 16]), type(plain_ints(np.int32(4))).__name__, plain_ints("8x8")
    ([8, 16], 'int', '8x8')
    """
    if isinstance(value, (list, tuple)):
        return type(value)(plain_ints(v) for v in value)
    if isinstance(value, (bool, str, float)) or not hasattr(value, "__index__") or isinstance(value, int) \
            and type(value) is int:
        return value
    try:
        return int(value.__index__())
    except TypeError:
        return value
