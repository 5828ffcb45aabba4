"""What an audit accepts as input: bounded reads (files and standard input), and the test that a
text holds a whole kernel before it is audited (never green on nothing): that test reads the text,
so it lives at the door (:mod:`verilayout.frontends.prescan`) and is re-exported here.

>>> missing_part("", "ttgir")
'empty: no TTGIR module'
"""
from __future__ import annotations

import os
import sys
from typing import BinaryIO

from verilayout.errors import LayoutError
from verilayout.frontends.prescan import looks_like_ptx, missing_part

__all__ = ["MAX_INPUT_BYTES", "read_bounded", "read_input", "looks_like_ptx", "missing_part"]

#: The largest input read (files and standard input alike): a TTGIR or PTX file is at most a few MiB.
MAX_INPUT_BYTES = 64 << 20


def read_bounded(stream: BinaryIO, name: str, limit: int = MAX_INPUT_BYTES, size: int | None = None) -> bytes:
    """At most ``limit`` bytes of ``stream``; a larger input is a LayoutError naming ``name``.
    ``size``: the stream's expected length (a file's ``fstat``): read at once, without a buffer of
    ``limit`` bytes; a stream longer than that is read on to the limit, so the result is the same.

    >>> import io; read_bounded(io.BytesIO(b"abc"), "<stdin>", limit=2)
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: <stdin>: input larger than the 0 MiB limit (read 3 bytes and stopped)
    """
    first = limit + 1 if size is None or size < 0 else min(limit, size) + 1
    data = stream.read(first)
    if len(data) == first <= limit:          # longer than its size said (a growing file): read on
        data += stream.read(limit + 1 - first)
    if len(data) > limit:
        raise LayoutError(f"{name}: input larger than the {limit >> 20} MiB limit "
                          f"(read {len(data)} bytes and stopped)")
    return data


def read_input(path: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of a file, or of standard input for ``-``, bounded by ``limit``.

    >>> read_input("/nonexistent.ttgir")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: /nonexistent.ttgir: cannot read: No such file or directory
    """
    if path == "-":
        return read_bounded(sys.stdin.buffer, "<stdin>", limit)
    try:
        with open(path, "rb") as f:
            return read_bounded(f, path, limit, os.fstat(f.fileno()).st_size)
    except IsADirectoryError:
        raise LayoutError(f"{path}: cannot read: it is a directory") from None
    except OSError as e:
        raise LayoutError(f"{path}: cannot read: {e.strerror}") from None
