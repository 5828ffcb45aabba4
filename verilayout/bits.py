"""Power-of-two helpers shared by every layer (one home for them).

Law: ``is_pow2(x)`` iff ``x == 1 << log2(x)``; ``log2`` is defined on powers of two only.

>>> is_pow2(64), is_pow2(0), is_pow2(12)
(True, False, False)
>>> log2(64)
6
"""
from __future__ import annotations


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
