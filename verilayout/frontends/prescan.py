"""What the door reads from a TTGIR or PTX text before (or without) parsing it, with nothing
heavier than ``re`` imported (the CLI's start-up path imports it): whether the text holds a whole
kernel (never green on nothing), the source files its locations name, and the element types of its
kernel's pointer arguments (a Triton cache's kernel names). A TTGIR text holds a kernel when it has a ``module`` with a
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

__all__ = ["looks_like_ptx", "missing_part", "source_files", "pointer_element_types"]

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


_FUNC_ARGS = re.compile(r"tt\.func\b[^@\n]*@[\w$.]+\((?P<args>[^\n]*)")
_PTR_ELEM = re.compile(r"!tt\.ptr<\s*([\w]+)")
_TTGIR_SOURCE = re.compile(r'loc\("((?:[^"\\\n]|\\.)*)"\s*:\s*\d+')
_PTX_SOURCE = re.compile(r'^\s*\.file\s+\d+\s+"([^"\n]*)"', re.M)


def pointer_element_types(text: str) -> tuple[str, ...]:
    """The MLIR element types of the first ``tt.func``'s pointer arguments of a TTGIR text, in
    argument order (as written on its line).

    >>> pointer_element_types("tt.func public @k(%a: !tt.ptr<f8E4M3FN> loc(#l), %c: !tt.ptr<f32>) {")
    ('f8E4M3FN', 'f32')
    """
    m = _FUNC_ARGS.search(text)
    return tuple(_PTR_ELEM.findall(m.group("args"))) if m else ()


def source_files(text: str, kind: str) -> tuple[str, ...]:
    """The source file paths a TTGIR (``loc("/a/k.py":3:1)``) or PTX (``.file 1 "/a/k.py"``, what
    a parsed module's ``files`` holds) text names, in order of first appearance, each once.

    >>> source_files('#loc = loc("/src/k.py":4:1)\\n#loc2 = loc("k.py":5:1)\\n#l3 = loc("/src/k.py":6:1)', "ttgir")
    ('/src/k.py', 'k.py')
    >>> source_files('.file 1 "/src/k.py"\\n.file 2 "/src/k.py"\\n.file 3 "lib.h"', "ptx")
    ('/src/k.py', 'lib.h')
    """
    return tuple(dict.fromkeys((_PTX_SOURCE if kind == "ptx" else _TTGIR_SOURCE).findall(text)))
