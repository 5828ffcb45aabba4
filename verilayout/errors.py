"""Exceptions shared by every layer of verilayout."""
from __future__ import annotations


class LayoutError(ValueError):
    """Bad layout input: malformed text, wrong sizes, an operation whose preconditions fail.

    The message is one line that names what is wrong and, for text input, where
    (``"line 1, col 14: expected ',' in shape"``).

    >>> raise LayoutError("in dim 'lane' has size 3, not a power of two")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: in dim 'lane' has size 3, not a power of two
    """
