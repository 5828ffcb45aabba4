"""The one printer of MLIR attribute values, below both of its users.

:func:`verilayout.frontends.mlir.format_value` prints parsed attributes and types with it, and
``synth`` (which may not import ``frontends``) writes its candidates' attribute text with it
(:func:`verilayout.synth.swizzle.mlir_text`). Plain values only: booleans, integers, strings,
lists and dictionaries, printed the way Triton prints them.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Mapping

from verilayout.errors import LayoutError

__all__ = ["IDENT", "format_plain", "format_attr"]

#: A bare MLIR identifier (``ttg.nvmma_shared``, ``kWidth``): the MLIR scanner reads one, and the
#: printer writes a string bare exactly when it is one (any other string is double-quoted).
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_$.\-]*")


def format_plain(v: Any, item: Callable[[Any], str] | None = None) -> str:
    """A plain value as MLIR text.

    Law: ``True``/``False`` -> ``true``/``false``; an ``int`` -> its decimal digits; a string
    -> itself when it is an :data:`IDENT`, else double-quoted with ``"`` escaped; a list or
    tuple -> ``[a, b]``; a dict -> ``{k = v, ...}`` in its order; the items of lists and dicts
    are printed by ``item`` (default: this function); anything else is a ``LayoutError``.

    >>> format_plain({"order": [1, 0], "transposed": False, "name": "a b"})
    '{order = [1, 0], transposed = false, name = "a b"}'
    """
    item = item or format_plain
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return v if IDENT.fullmatch(v) else '"' + v.replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(item(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {item(x)}" for k, x in v.items()) + "}"
    raise LayoutError(f"cannot print {v!r} as MLIR")


def format_attr(name: str, params: Mapping[str, Any], tail: str = "") -> str:
    """The attribute ``#name<{params}tail>`` (``tail``: text after the dictionary, such as
    ``, alignment = 16``).

    Law: ``format_attr(n, p, t) == "#" + n + "<" + format_plain(dict(p)) + t + ">"``.

    >>> format_attr("ttg.swizzled_shared", {"vec": 2, "perPhase": 1, "maxPhase": 4, "order": [1, 0]})
    '#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 4, order = [1, 0]}>'
    """
    return f"#{name}<{format_plain(dict(params))}{tail}>"
