"""Whether a TTGIR or PTX text holds a whole kernel, read before the text is parsed (the door's
first look: never green on nothing). A TTGIR text holds a kernel when it has a ``module`` with a
``tt.func`` and its brackets and strings close; a PTX text when it has ``.version``/``.target``,
an ``.entry`` or ``.func``, and its braces close.

Law: ``missing_part(t, kind)`` is None for every file Triton writes (the corpus), and not None
for each proper prefix of it that cuts a bracket pair, and for empty text.

>>> missing_part("", "ttgir")
'empty: no TTGIR module'
>>> missing_part('module {\\n  tt.func @k() {\\n    tt.return\\n', "ttgir")
'truncated: 2 unclosed { (the file ends inside an op or function)'
"""
from __future__ import annotations

import re

__all__ = ["looks_like_ptx", "missing_part"]

_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_PTX_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_PAIRS = (("{", "}"), ("(", ")"), ("[", "]"))


def looks_like_ptx(text: str) -> bool:
    """True when ``text`` starts like PTX (``.version``/``.target`` before any MLIR module).

    >>> looks_like_ptx("//\\n.version 8.4\\n.target sm_90a\\n"), looks_like_ptx("module {\\n}")
    (True, False)
    """
    head = _PTX_COMMENT.sub("", text[:4096]).lstrip()
    return head.startswith((".version", ".target"))


def _unclosed(text: str, pairs=_PAIRS) -> str | None:
    """The first bracket kind left open (or closed too often) in ``text`` without strings."""
    for o, c in pairs:
        n = text.count(o) - text.count(c)
        if n:
            return f"{n} unclosed {o}" if n > 0 else f"{-n} more {c} than {o}"
    return None


def missing_part(text: str, kind: str) -> str | None:
    """What ``text`` (``kind`` ``"ttgir"`` or ``"ptx"``) lacks to hold a whole kernel, or None.

    >>> missing_part(".version 8.4\\n.target sm_90\\n", "ptx")
    'no .entry or .func: the PTX holds no kernel'
    """
    if not text.strip():
        return f"empty: no {'PTX' if kind == 'ptx' else 'TTGIR module'}"
    if kind == "ptx":
        return _ptx_missing(text)
    return _ttgir_missing(text)


def _ttgir_missing(text: str) -> str | None:
    if not re.search(r"^\s*module\b", text, re.M):
        if looks_like_ptx(text):
            return "this is PTX, not TTGIR (audit the .ptx file by path: its TTGIR beside it is the plan)"
        return "no `module`: not a TTGIR module"
    if not re.search(r"\btt\.func\b", text):
        return "no tt.func: the module holds no kernel"
    body = _STRING.sub('""', text)
    if body.count('"') % 2:
        return "truncated: the file ends inside a string"
    bad = _unclosed(body)
    if bad:
        return f"truncated: {bad} (the file ends inside an op or function)"
    return None


def _ptx_missing(text: str) -> str | None:
    body = _PTX_COMMENT.sub("", _STRING.sub('""', text))
    missing = [d for d in (".version", ".target") if not re.search(rf"^\s*\{d}\s", body, re.M)]
    if missing:
        return f"no {' or '.join(missing)} directive: not PTX"
    if not re.search(r"\.(entry|func)\b", body):
        return "no .entry or .func: the PTX holds no kernel"
    if body.count('"') % 2:
        return "truncated: the file ends inside a string"
    bad = _unclosed(body, (("{", "}"),))
    if bad:
        return f"truncated: {bad} (the file ends inside a function or section)"
    return None
