"""An op's attributes and static index lists, read once from its TTGIR text (the door: the audit
asks for values, never applies a regular expression to compiler text itself).

An op prints its attributes as a dictionary after its operands, ``{contiguity = 8 : i32}``, or, in
MLIR's generic form, as properties ``<{axis = 1 : i32}>`` (``"tt.reduce"(%x) <{axis = 1 : i32}>
({ ... })``); view ops print static indices after the source, ``ttg.memdesc_subslice %a[0, 64]``.

Law: :func:`read_attributes` maps each ``key = value`` pair of those dictionaries (before the op's
type signature) to an ``int`` (``N : i32``, ``N``), a ``tuple`` of ints (``array<i32: 1, 0>``, ``[1, 0]``),
a ``bool`` or a ``str``; a pair of another form is left out (no caller reads it). The first pair of a
key wins. ``frontends.ttgir.Op`` reads them once (``Op.attributes``, ``Op.indices``); :func:`attributes`,
:func:`attribute` and :func:`static_indices` ask an op for them.

>>> from verilayout.frontends.ttgir import Op
>>> op = Op("ttg.memdesc_trans", 3, ("%t",), ("%b",), (), (), "{order = array<i32: 1, 0>}")
>>> attributes(op)["order"]
(1, 0)
"""
from __future__ import annotations

import functools
import re
from typing import Any

__all__ = ["read_attributes", "read_indices", "attributes", "attribute", "static_indices"]

_PAIR = re.compile(r'(?<![\w.$%#"])([A-Za-z_][\w.]*)\s*=\s*'
                   r'(array<\s*[iu]\d+\s*:?\s*(-?\d+(?:\s*,\s*-?\d+)*)?\s*>'
                   r'|\[\s*(-?\d+(?:\s*,\s*-?\d+)*)?\s*\]'
                   r'|(-?\d+)(?:\s*:\s*[iu]\d+)?'
                   r'|(true|false)'
                   r'|"((?:[^"\\]|\\.)*)")')
_INDICES = re.compile(r"^\s*%[\w.$-]+(?:#\d+)?\s*\[\s*(-?\d+(?:\s*,\s*-?\d+)*)\s*\]")


def _ints(text: str | None) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(",")) if text else ()


def _value(m: re.Match) -> Any:
    if m.group(2).startswith("array<"):
        return _ints(m.group(3))
    if m.group(2).startswith("["):
        return _ints(m.group(4))
    if m.group(5) is not None:
        return int(m.group(5))
    if m.group(6) is not None:
        return m.group(6) == "true"
    return m.group(7)


@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> tuple[tuple[str, Any], ...]:
    """The ``key = value`` pairs of one attribute text, in order (keyed by the text: ops repeat
    the same few attribute dictionaries)."""
    return tuple((m.group(1), _value(m)) for m in _PAIR.finditer(text))


def _attribute_text(attrs: str, text: str) -> str:
    """An op's attribute and property dictionaries: its ``attrs`` and, in the generic form, the
    ``<{...}>`` of its text before the signature."""
    body = text.split(" : ", 1)[0] if text else ""
    k = body.find("<{")
    props = body[k:body.find("}>", k) + 2] if k >= 0 else ""
    return f"{attrs} {props}"


def read_attributes(attrs: str, text: str) -> dict[str, Any]:
    """Every attribute of an op from its ``{...}`` text and its line (module docstring's law).

    >>> read_attributes("{contiguity = 8 : i32, order = array<i32: 1, 0>}", "")
    {'contiguity': 8, 'order': (1, 0)}
    """
    out: dict[str, Any] = {}
    for key, value in _parse(_attribute_text(attrs, text)):
        out.setdefault(key, value)
    return out


def read_indices(text: str, name: str, has_results: bool) -> tuple[int, ...] | None:
    """The static index list a view op prints after its source (``memdesc_subslice %a[0, 64]``),
    or None when it prints none.

    >>> read_indices("%s = ttg.memdesc_subslice %a[0, 64] : !ttg.memdesc<...>", "ttg.memdesc_subslice", True)
    (0, 64)
    """
    head = text.split("=", 1)[-1] if has_results else text
    head = head.split(name, 1)[-1]
    m = _INDICES.match(head)
    return _ints(m.group(1)) if m else None


def attributes(op: Any) -> dict[str, Any]:
    """Every attribute of a ``frontends.ttgir.Op`` (its :attr:`attributes`, as a dict).

    >>> from verilayout.frontends.ttgir import parse_module
    >>> m = parse_module('module attributes {"ttg.num-warps" = 4 : i32} {\\n'
    ...                  '  %m = "tt.reduce"(%s) <{axis = 1 : i32}> ({\\n  }) : (tensor<4x4xf32>) -> tensor<4xf32>\\n}')
    >>> attributes(m.ops[0])
    {'axis': 1}
    """
    return dict(op.attributes)


def attribute(op: Any, key: str, default: Any = None) -> Any:
    """One attribute of an op (:func:`attributes`), or ``default`` when it has none.

    >>> from verilayout.frontends.ttgir import Op
    >>> attribute(Op("ttg.async_copy_global_to_local", 1, (), (), (), (), "{contiguity = 8 : i32}"), "contiguity", 1)
    8
    """
    return op.attributes.get(key, default)


def static_indices(op: Any) -> tuple[int, ...] | None:
    """The static index list of a view op (its :attr:`indices`), or None when it prints none.

    >>> from verilayout.frontends.ttgir import Op
    >>> static_indices(Op("ttg.memdesc_subslice", 1, ("%s",), ("%a",), (), (), "",
    ...                   text="%s = ttg.memdesc_subslice %a[0, 64] : !ttg.memdesc<...>"))
    (0, 64)
    """
    return op.indices
