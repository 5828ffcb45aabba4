"""Exceptions shared by every layer of verilayout."""
from __future__ import annotations

import re


class LayoutError(ValueError):
    """Bad layout input: malformed text, wrong sizes, an operation whose preconditions fail.

    The message is one line that names what is wrong and, for text input, where
    (``"line 1, col 14: expected ',' in shape"``).

    >>> raise LayoutError("in dim 'lane' has size 3, not a power of two")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: in dim 'lane' has size 3, not a power of two
    """


_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f\u2028\u2029\x85]")


def one_line(text: str) -> str:
    """``text`` with newlines and other control characters escaped, so it prints as one line.

    >>> one_line("a\\nFAIL b")
    'a\\\\nFAIL b'
    """
    return _UNPRINTABLE.sub(lambda m: ascii(m.group())[1:-1], str(text))
