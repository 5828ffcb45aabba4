"""``frontends/cute_mlir._scan`` (a regular expression jumps between the characters that matter) against a
character-by-character reference written here: the same index or the same one-line error on random texts
of brackets, quotes, escapes, arrows and separators."""
from __future__ import annotations

import random

import pytest

from verilayout.errors import LayoutError
from verilayout.frontends.cute_mlir import _scan, split_top

_OPEN = {"(": ")", "[": "]", "{": "}", "<": ">"}


def _reference(text: str, stop: str, start: int) -> int | str:
    """The index of the first ``stop`` character at depth 0 outside strings (``->`` no bracket), or
    the error's kind: each character read in turn."""
    depth, i = [], start
    while i < len(text):
        ch = text[i]
        if ch == '"':
            j = text.find('"', i + 1)
            while j > 0 and text[j - 1] == "\\":
                j = text.find('"', j + 1)
            if j < 0:
                return "unterminated"
            i = j + 1
            continue
        if not depth and ch in stop:
            return i
        if text[i:i + 2] == "->":
            i += 2
            continue
        if ch in _OPEN:
            depth.append(_OPEN[ch])
        elif ch in _OPEN.values():
            if not depth or depth[-1] != ch:
                return "unbalanced"
            depth.pop()
        i += 1
    return "not closed" if depth else len(text)


def _ours(text: str, stop: str, start: int) -> int | str:
    try:
        return _scan(text, stop, start)
    except LayoutError as e:
        return next(k for k in ("unterminated", "unbalanced", "not closed") if k in str(e))


@pytest.mark.parametrize("stop", [",", "=", ":", ")", "", ",-", ">"])
def test_scan_matches_the_reference_on_random_texts(stop: str) -> None:
    rng = random.Random(stop)
    alphabet = list('()[]{}<>"\\,=:-> ab%1') + ["->", "-> ", '\\"']
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 24)))
        start = rng.randrange(0, len(text) + 1)
        assert _ours(text, stop, start) == _reference(text, stop, start), (text, stop, start)


def test_split_top_keeps_an_arrow_and_a_quoted_comma() -> None:
    assert split_top('(a, b) -> c, "x,y", <1, 2>') == ["(a, b) -> c", '"x,y"', "<1, 2>"]
