"""A small reader for the MLIR text Triton prints: attributes, tensor/memdesc types, alias lines.

Grammar (the subset Triton's layouts use)::

    value   := attr | '[' [value {',' value}] ']' | '{' [entry {',' entry}] '}'
             | integer [':' type] | 'true' | 'false' | string | type | bare-identifier
    attr    := '#' dialect '.' kind ['<' ( '{' entries '}' | balanced-text ) '>']
             | '#' alias                                  (looked up in the alias table)
    entry   := key ['=' value]
    type    := 'tensor' '<' dims 'x' elem [',' value] '>'
             | '!ttg.memdesc' '<' dims 'x' elem ',' value ',' value [',' 'mutable'] [',' dims] '>'
    file    := lines; '#name = value' lines define aliases, other lines are ignored

Every value remembers where it started (line and column, both from 1), and
every error says where it went wrong:

>>> a = parse_value("#ttg.slice<{dim = 1, parent = #p}>", aliases={"p": "#ttg.shared_memory"})
>>> a.name, a.params["dim"], a.params["parent"].name
('ttg.slice', 1, 'ttg.shared_memory')
>>> parse_value("[1, 2")
Traceback (most recent call last):
...
verilayout.errors.LayoutError: line 1, col 6: expected ',' or ']' in array, found end of text
"""
from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from verilayout.core.mlir_print import IDENT, format_plain
from verilayout.dtypes import mlir_bits
from verilayout.errors import LayoutError

__all__ = ["Attr", "TensorType", "Scanner", "parse_value", "parse_aliases", "format_value",
           "elem_bit_width", "AliasDef"]


@dataclass(frozen=True)
class Attr:
    """A dialect attribute: ``#ttg.blocked<{...}>`` has name ``ttg.blocked`` and a params dict.

    ``pos`` is the (line, col) of its ``#``; ``key_pos`` the (line, col) of each key;
    ``alias`` the alias it was reached through (``"blocked"`` for ``#blocked``), if any;
    ``body`` the raw text between ``<`` and ``>`` when it was not a dictionary.

    >>> parse_value("#ttg.shared_memory").params
    {}
    """

    name: str
    params: dict = field(default_factory=dict)
    pos: tuple = field(default=(1, 1), compare=False)
    key_pos: dict = field(default_factory=dict, compare=False)
    alias: str | None = field(default=None, compare=False)
    body: str | None = None

    @property
    def kind(self) -> str:
        """The name without its dialect: ``blocked`` for ``ttg.blocked``."""
        return self.name.split(".", 1)[1] if "." in self.name else self.name

    @property
    def dialect(self) -> str:
        return self.name.split(".", 1)[0] if "." in self.name else ""

    def key(self) -> str:
        """Text that fixes the attribute's meaning, for caches: its printed form with aliases
        written out (or the text it was read from, when that names no alias); kept once computed.

        >>> parse_value("#ttg.slice<{dim = 0, parent = #b}>", {"b": "#ttg.blocked<{order = [0]}>"}).key()
        '#ttg.slice<{dim = 0, parent = #ttg.blocked<{order = [0]}>}>'
        """
        k = self.__dict__.get("_key")
        if k is None:
            k = format_value(self)
            object.__setattr__(self, "_key", k)   # frozen: a memo, not a field
        return k

    def where(self, key: str | None = None) -> str:
        """``"line L, col C"`` of a key (or of the attribute itself)."""
        line, col = self.key_pos.get(key, self.pos) if key else self.pos
        return f"line {line}, col {col}"


@dataclass(frozen=True)
class TensorType:
    """``tensor<64x64xf16, #enc>`` (kind ``tensor``) or ``!ttg.memdesc<...>`` (kind ``memdesc``).

    >>> t = parse_value("tensor<4x8xf16, #ttg.shared_memory>"); t.shape, t.elem
    ((4, 8), 'f16')
    """

    kind: str
    shape: tuple
    elem: str
    encoding: Any = None
    memory_space: Any = None
    mutable: bool = False
    alloc_shape: tuple | None = None
    pos: tuple = field(default=(1, 1), compare=False)


@dataclass(frozen=True)
class AliasDef:
    """One ``#name = value`` line of a file: where its value starts and its raw text."""

    name: str
    line: int
    col: int
    offset: int
    text: str
    source: str = field(default="", repr=False, compare=False)


_ALIAS_NAME = re.compile(r"[A-Za-z_0-9][A-Za-z0-9_$.\-]*")
#: How deep values may nest (a dot_op's parent's parent ... is a few levels in real TTGIR).
MAX_NESTING = 32
_DIMS = re.compile(r"((?:[0-9]+|\?)x)+")
_INT = re.compile(r"-?[0-9]+")
#: a memdesc's allocation shape (``..., mutable, 2x64x64>``): unsigned sizes joined by ``x``
_ALLOC_SHAPE = re.compile(r"[0-9]+(?:x[0-9]+)*")


@functools.lru_cache(maxsize=64)
def _line_starts(text: str) -> tuple[int, ...]:
    """Offsets where the lines of ``text`` start. Every alias of a file is read by a scanner over
    the whole file, so the table is kept for the last 64 texts (a string hashes once)."""
    starts = tuple(itertools.accumulate(map((1).__add__, map(len, text.split("\n"))), initial=0))
    return starts[:-1]                  # each line's start: the lengths before it, each with its line break


@functools.lru_cache(maxsize=1024)
def _standalone_value(text: str, line: int, col: int) -> tuple[Any, int]:
    """An alias value that names no other alias (``#ttg.blocked<{...}>``), parsed as if it stood
    at ``line``, ``col`` (so positions are right), and where it ends in ``text``. Files repeat the
    same alias lines (``#blocked = ...`` on line 1), so the last 1024 are kept; values are frozen."""
    pad = "\n" * (line - 1) + " " * (col - 1)
    sub = Scanner(pad + text, len(pad), {})
    v = sub.value()
    end = sub.i - len(pad)
    if isinstance(v, Attr):
        object.__setattr__(v, "_key", text[:end].strip())
    return v, end


class Scanner:
    """A cursor over text that knows line and column; raises positioned ``LayoutError``.

    >>> s = Scanner("  [1]"); s.skip_ws(); s.here()
    (1, 3)
    """

    def __init__(self, text: str, offset: int = 0, aliases: Mapping[str, Any] | None = None):
        self.text = text
        self.i = offset
        self.aliases = aliases if aliases is not None else {}
        self._resolving: list[str] = []
        self._line_starts = _line_starts(text)

    # ----- positions -----
    def pos_of(self, i: int) -> tuple[int, int]:
        lo, hi = 0, len(self._line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._line_starts[mid] <= i:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, i - self._line_starts[lo] + 1

    def here(self) -> tuple[int, int]:
        return self.pos_of(self.i)

    def error(self, msg: str, at: int | None = None) -> LayoutError:
        line, col = self.pos_of(self.i if at is None else at)
        return LayoutError(f"line {line}, col {col}: {msg}")

    def found(self) -> str:
        if self.i >= len(self.text):
            return "end of text"
        m = re.compile(r"[A-Za-z0-9_]+|\S").match(self.text, self.i)
        return repr(m.group(0)) if m else repr(self.text[self.i])

    # ----- lexing -----
    def skip_ws(self) -> None:
        t, n = self.text, len(self.text)
        while self.i < n:
            c = t[self.i]
            if c in " \t\r\n":
                self.i += 1
            elif t.startswith("//", self.i):
                j = t.find("\n", self.i)
                self.i = n if j < 0 else j + 1
            else:
                break

    def peek(self, s: str) -> bool:
        self.skip_ws()
        return self.text.startswith(s, self.i)

    def accept(self, s: str) -> bool:
        if self.peek(s):
            self.i += len(s)
            return True
        return False

    def expect(self, s: str, context: str) -> None:
        if not self.accept(s):
            raise self.error(f"expected '{s}' {context}, found {self.found()}")

    def ident(self, context: str) -> str:
        self.skip_ws()
        m = IDENT.match(self.text, self.i)
        if not m:
            raise self.error(f"expected a name {context}, found {self.found()}")
        self.i = m.end()
        return m.group(0)

    def at_end(self) -> bool:
        self.skip_ws()
        return self.i >= len(self.text)

    # ----- values -----
    def value(self) -> Any:
        """One value; nesting past :data:`MAX_NESTING` is an error at its position (a positioned
        LayoutError instead of Python's RecursionError)."""
        depth = getattr(self, "_depth", 0)
        if depth >= MAX_NESTING:
            raise self.error(f"values nested more than {MAX_NESTING} deep (attributes, arrays, "
                             "dictionaries); no Triton layout is")
        self._depth = depth + 1
        try:
            return self._value()
        finally:
            self._depth = depth

    def _value(self) -> Any:
        self.skip_ws()
        start = self.i
        if self.i >= len(self.text):
            raise self.error("expected a value, found end of text")
        c = self.text[self.i]
        if c == "#":
            return self.attr()
        if c == "[":
            return self.array()
        if c == "{":
            return self.dictionary()[0]
        if c == '"':
            return self.string()
        if c == "!" :
            return self.bang_type()
        m = _INT.match(self.text, self.i)
        if m:
            self.i = m.end()
            nxt = self.text[self.i:self.i + 1]
            if nxt and (nxt.isalpha() or nxt in "._"):
                self.i = start
                raise self.error(f"malformed number {self.found()}")
            if self.peek(":") and not self.peek("::"):
                self.i += 1
                self.elem_type("after ':' (the integer's type)")
            return int(m.group(0))
        m = IDENT.match(self.text, self.i)
        if m:
            word = m.group(0)
            if word == "tensor" and self.text.startswith("<", m.end()):
                return self.tensor_type()
            self.i = m.end()
            if word == "true":
                return True
            if word == "false":
                return False
            return word
        raise self.error(f"expected a value, found {self.found()}")

    def string(self) -> str:
        start = self.i
        self.i += 1
        out = []
        while self.i < len(self.text):
            c = self.text[self.i]
            if c == '"':
                self.i += 1
                return "".join(out)
            if c == "\\" and self.i + 1 < len(self.text):
                out.append(self.text[self.i + 1])
                self.i += 2
                continue
            if c == "\n":
                break
            out.append(c)
            self.i += 1
        raise self.error("unterminated string", at=start)

    def array(self) -> list:
        self.expect("[", "to open an array")
        items: list = []
        if self.accept("]"):
            return items
        while True:
            items.append(self.value())
            if self.accept("]"):
                return items
            if not self.accept(","):
                raise self.error(f"expected ',' or ']' in array, found {self.found()}")

    def dictionary(self) -> tuple[dict, dict]:
        """``{key = value, ...}`` -> (values, key positions)."""
        self.expect("{", "to open a dictionary")
        values: dict = {}
        where: dict = {}
        if self.accept("}"):
            return values, where
        while True:
            self.skip_ws()
            kstart = self.i
            key = self.string() if self.text.startswith('"', self.i) else self.ident("as a dictionary key")
            if key in values:
                raise self.error(f"duplicate key '{key}'", at=kstart)
            where[key] = self.pos_of(kstart)
            values[key] = self.value() if self.accept("=") else True
            if self.accept("}"):
                return values, where
            if not self.accept(","):
                raise self.error(f"expected ',' or '}}' after the value of '{key}', found {self.found()}")

    def balanced(self, open_: str, close: str) -> str:
        """Raw text up to the matching ``close`` (the opener already consumed)."""
        start = self.i
        depth = 1
        pairs = {"<": ">", "{": "}", "[": "]", "(": ")"}
        stack = [close]
        while self.i < len(self.text):
            c = self.text[self.i]
            if c == '"':
                self.string()
                continue
            if c in pairs:
                stack.append(pairs[c])
            elif c in ")]}>":
                if c != stack[-1]:
                    raise self.error(f"unbalanced '{c}'")
                stack.pop()
                if not stack:
                    body = self.text[start:self.i]
                    self.i += 1
                    return body
            self.i += 1
        del depth
        raise self.error(f"missing '{close}'", at=start - 1)

    def attr(self) -> Attr:
        start = self.i
        self.i += 1  # '#'
        m = _ALIAS_NAME.match(self.text, self.i)
        if not m:
            raise self.error(f"expected a name after '#', found {self.found()}")
        name = m.group(0)
        self.i = m.end()
        if "." not in name or not IDENT.fullmatch(name):
            return self.alias_ref(name, start)
        line, col = self.pos_of(start)
        if not self.text.startswith("<", self.i):
            return Attr(name, {}, (line, col))
        self.i += 1
        save = self.i
        if self.peek("{"):
            params, where = self.dictionary()
            if self.accept(">"):
                return Attr(name, params, (line, col), where)
            if not self.peek(","):
                raise self.error(f"expected '>' to close #{name}, found {self.found()}")
            self.i = save      # `<{...}, alignment = N>`: the dictionary, then trailing pairs
            body = self.balanced("<", ">")
            params, where = self._keyed_body(body, save)
            return Attr(name, params, (line, col), where, None, body.strip())
        body = self.balanced("<", ">")
        params, where = self._keyed_body(body, save)
        return Attr(name, params, (line, col), where, None, body.strip())

    def _keyed_body(self, body: str, offset: int) -> tuple[dict, dict]:
        """Params of an attribute body written as ``{...}, k = v`` or ``k = v, ...`` (Triton
        prints ``#ttng.tensor_memory_encoding<blockM = 128, ...>`` this way); ``{}`` when the
        body is anything else (the converter reads the raw body)."""
        sub = Scanner(self.text[:offset + len(body)], offset, self.aliases)
        sub._line_starts = self._line_starts
        params: dict = {}
        where: dict = {}
        try:
            if sub.peek("{"):
                params, where = sub.dictionary()
                if not sub.accept(","):
                    return ({}, {}) if not sub.at_end() else (params, where)
            while not sub.at_end():
                kstart = sub._ws_i()
                key = sub.ident("as a key")
                sub.expect("=", f"after '{key}'")
                if key in params:
                    return {}, {}
                where[key] = sub.pos_of(kstart)
                params[key] = sub.value()
                if not sub.accept(","):
                    break
            if not sub.at_end():
                return {}, {}
        except LayoutError:
            return {}, {}
        return params, where

    def alias_ref(self, name: str, start: int) -> Any:
        if name not in self.aliases:
            known = ", ".join("#" + k for k in self.aliases) or "none"
            raise self.error(f"undefined alias #{name} (defined: {known})", at=start)
        val = self.aliases[name]
        if isinstance(val, AliasDef):
            if name in self._resolving:
                raise self.error(f"alias #{name} refers to itself", at=start)
            self._resolving.append(name)
            try:
                if val.source and val.text.startswith("#") and val.text.count("#") == 1:
                    got, end = _standalone_value(val.text, val.line, val.col)
                    sub = Scanner(val.source, val.offset + end, self.aliases)
                else:
                    sub = Scanner(val.source or val.text, val.offset if val.source else 0, self.aliases)
                    sub._resolving = self._resolving
                    got = sub.value()
                eol = sub.text.find("\n", sub.i)
                rest = sub.text[sub.i:len(sub.text) if eol < 0 else eol].strip()
                if rest and not rest.startswith("//"):
                    raise sub.error(f"unexpected {sub.found()} after the value of #{name}")
            finally:
                self._resolving.pop()
            self.aliases[name] = got
            val = got
        elif isinstance(val, str):
            sub = Scanner(val, 0, self.aliases)
            val = sub.value()
        if isinstance(val, Attr):
            out = Attr(val.name, val.params, val.pos, val.key_pos, name, val.body)
            if "_key" in val.__dict__:
                object.__setattr__(out, "_key", val.__dict__["_key"])
            return out
        return val

    def elem_type(self, context: str) -> str:
        self.skip_ws()
        start = self.i
        if self.text.startswith("!", self.i):
            self.i += 1
        m = IDENT.match(self.text, self.i)
        if not m:
            self.i = start
            raise self.error(f"expected an element type {context}, found {self.found()}")
        self.i = m.end()
        if self.text.startswith("<", self.i):
            self.i += 1
            self.balanced("<", ">")
        return self.text[start:self.i]

    def dims(self, context: str) -> tuple:
        self.skip_ws()
        m = _DIMS.match(self.text, self.i)
        if not m:
            raise self.error(f"expected a shape like 64x64x {context}, found {self.found()}")
        out = []
        for part in m.group(0)[:-1].split("x"):
            if part == "?":
                raise self.error("dynamic dimension '?' has no layout")
            out.append(int(part))
        self.i = m.end()
        return tuple(out)

    def tensor_type(self) -> TensorType:
        self.skip_ws()
        start = self.i
        self.i += len("tensor")
        self.expect("<", "after 'tensor'")
        shape = self.dims("in tensor type") if _DIMS.match(self.text, self._ws_i()) else ()
        elem = self.elem_type("in tensor type")
        enc = None
        if self.accept(","):
            enc = self.value()
        self.expect(">", "to close the tensor type")
        return TensorType("tensor", shape, elem, enc, None, False, None, self.pos_of(start))

    def _ws_i(self) -> int:
        self.skip_ws()
        return self.i

    def bang_type(self) -> Any:
        start = self.i
        m = IDENT.match(self.text, self.i + 1)
        if not m:
            raise self.error(f"expected a type name after '!', found {self.found()}")
        name = m.group(0)
        if name == "tt.tensordesc":
            return self._tensordesc(start, m.end())
        if name not in ("ttg.memdesc", "triton_gpu.memdesc", "tt.memdesc"):
            self.i = start
            return self.elem_type("")
        self.i = m.end()
        self.expect("<", f"after '!{name}'")
        shape = self.dims("in memdesc type") if _DIMS.match(self.text, self._ws_i()) else ()
        elem = self.elem_type("in memdesc type")
        self.expect(",", "before the memdesc's encoding")
        enc = self.value()
        space = None
        mutable = False
        alloc = None
        while self.accept(","):
            self.skip_ws()
            if self.text.startswith("mutable", self.i):
                self.i += len("mutable")
                mutable = True
            elif self.text.startswith("#", self.i):
                space = self.value()
            elif (m2 := _ALLOC_SHAPE.match(self.text, self.i)) is not None:
                alloc = tuple(int(p) for p in m2.group(0).split("x"))
                self.i = m2.end()
            else:
                raise self.error(f"unexpected {self.found()} in memdesc type")
        self.expect(">", "to close the memdesc type")
        return TensorType("memdesc", shape, elem, enc, space, mutable, alloc, self.pos_of(start))

    def _tensordesc(self, start: int, after_name: int) -> TensorType:
        """``!tt.tensordesc<128x64xf16, #shared>`` (Triton 3.9; older Tritons wrote the block as
        ``!tt.tensordesc<tensor<128x64xf16, #shared>>``): kind ``tensordesc``, the block's shape,
        element and shared encoding."""
        self.i = after_name
        self.expect("<", "after '!tt.tensordesc'")
        if self.peek("tensor<"):
            inner = self.tensor_type()
            shape, elem, enc = inner.shape, inner.elem, inner.encoding
        else:
            shape = self.dims("in tensordesc type") if _DIMS.match(self.text, self._ws_i()) else ()
            elem = self.elem_type("in tensordesc type")
            enc = self.value() if self.accept(",") else None
        self.expect(">", "to close the tensordesc type")
        return TensorType("tensordesc", shape, elem, enc, None, False, None, self.pos_of(start))


def parse_value(text: str, aliases: Mapping[str, Any] | None = None, offset: int = 0) -> Any:
    """Parse one value (attribute, type, array, ...) and require nothing after it.

    >>> parse_value("[[0, 1], []]")
    [[0, 1], []]
    """
    s = Scanner(text, offset, dict(aliases or {}))
    v = s.value()
    if not s.at_end():
        raise s.error(f"unexpected {s.found()} after the value")
    return v


_ALIAS_LINE = re.compile(r"^[ \t]*#([A-Za-z_0-9][A-Za-z0-9_$.\-]*)[ \t]*=[ \t]*", re.M)


#: ``_ALIAS_LINE`` without its line anchor and indent: searched by its literal start ``#``
_ALIAS_HIT = re.compile(_ALIAS_LINE.pattern[len(r"^[ \t]*"):])


def _alias_lines(text: str) -> list[re.Match]:
    """The matches of ``_ALIAS_LINE.finditer(text)`` as group 1 and the end read them: each hit of
    ``_ALIAS_HIT`` (one line long) with only blanks and tabs before it on its line.

    >>> [m.group(1) for m in _alias_lines("#a = 1\\n  #b = x\\n %0 = #c = 2\\n\\t#d=3")]
    ['a', 'b', 'd']
    """
    out = []
    for m in _ALIAS_HIT.finditer(text):
        i = m.start()
        start = text.rfind("\n", 0, i) + 1
        if start == i or not text[start:i].strip(" \t"):
            out.append(m)
    return out


def parse_aliases(text: str) -> dict[str, AliasDef]:
    """The ``#name = value`` lines of a file (values are parsed later, on demand).

    >>> list(parse_aliases("#a = #ttg.shared_memory\\nmodule {}\\n"))
    ['a']
    """
    out: dict[str, AliasDef] = {}
    s = Scanner(text)
    for m in _alias_lines(text):
        name = m.group(1)
        line, col = s.pos_of(m.start(1) - 1)
        if name in out:
            raise LayoutError(f"line {line}, col {col}: alias #{name} is defined twice")
        end = text.find("\n", m.end())
        raw = text[m.end(): len(text) if end < 0 else end].strip()
        vline, vcol = s.pos_of(m.end())
        out[name] = AliasDef(name, vline, vcol, m.end(), raw, text)
    return out


def format_value(v: Any) -> str:
    """Print a value back the way Triton does (``[1, 2]``, ``true``, ``#ttg.x<{k = v}>``).

    >>> format_value({"a": [1, 2], "b": True})
    '{a = [1, 2], b = true}'
    """
    if isinstance(v, (bool, int, str, list, tuple, dict)):
        return format_plain(v, format_value)     # the one printer of plain values (core/mlir_print)
    if isinstance(v, Attr):
        if v.body is not None:
            return f"#{v.name}<{v.body}>"
        if not v.params:
            return f"#{v.name}"
        return f"#{v.name}<{format_value(v.params)}>"
    if isinstance(v, TensorType):
        dims = "".join(f"{d}x" for d in v.shape)
        if v.kind == "tensor":
            enc = f", {format_value(v.encoding)}" if v.encoding is not None else ""
            return f"tensor<{dims}{v.elem}{enc}>"
        if v.kind == "tensordesc":
            enc = f", {format_value(v.encoding)}" if v.encoding is not None else ""
            return f"!tt.tensordesc<{dims}{v.elem}{enc}>"
        parts = [f"{dims}{v.elem}", format_value(v.encoding)]
        if v.memory_space is not None:
            parts.append(format_value(v.memory_space))
        if v.mutable:
            parts.append("mutable")
        if v.alloc_shape:
            parts.append("x".join(str(d) for d in v.alloc_shape))
        return "!ttg.memdesc<" + ", ".join(parts) + ">"
    raise LayoutError(f"cannot print {v!r} as MLIR")


def elem_bit_width(elem: str) -> int | None:
    """Bits of an MLIR element type (``f16`` -> 16, ``f8E4M3FN`` -> 8, ``!tt.ptr<..>`` -> 64);
    the one table is :func:`verilayout.dtypes.mlir_bits`.

    >>> elem_bit_width("bf16"), elem_bit_width("f8E5M2"), elem_bit_width("!tt.ptr<f16>")
    (16, 8, 64)
    """
    return mlir_bits(elem)
