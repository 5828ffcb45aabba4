"""Read the ops of a TTGIR module: names, SSA values, types, lines and source locations.

A TTGIR file (what ``triton.compile`` keeps as ``k.asm["ttgir"]``) holds alias lines
(``#blocked = #ttg.blocked<...>``, ``#loc12 = loc("k.py":42:13)``), then a module whose
attributes name the target and the warp count, and one op per line. :func:`parse_module`
returns a :class:`Module`: every op with its 1-based line, its result and operand SSA
names, its operand and result types, and its ``loc`` resolved through the ``#locN`` aliases
(named, fused and call-site locations) to the user's ``file:line``. The module is the typed IR
the audit walks: each op's types are :class:`Type` objects (``Op.in_types``/``out_types``: the
parsed type, its Triton layout; one object per distinct text, each read on first use and kept),
its attributes and static indices are read once (``Op.attributes``, ``Op.indices``), and the
module holds its def-use graph (``Module.defs``, ``Module.users``, ``Module.def_type``) and its
``scf.for`` loops (``Module.loops``: iter_args, inits, yield operands; ``Module.carried``). A type's
value is ``Type.tensor`` (None when unreadable) or ``Type.read()`` (its ``LayoutError`` when
unreadable): the audits take types this way. The raw texts stay on :class:`Op` for messages and
keys; ``Module.type_of`` reads a type text that no op holds. The text is read in one pass that
keeps each op's name, line and results; the rest of an op (operands, types, attributes, ``loc``) is
decoded from its line when first read, so the many ops a check only dispatches on by name cost a
match each.

Law: every op line of the text (``%x = dialect.op ...`` or ``dialect.op ...``) yields one
:class:`Op` whose ``line`` is that line; bad input raises ``LayoutError``, never another
exception.

>>> m = parse_module('#loc3 = loc("k.py":7:1)\\nmodule attributes {"ttg.num-warps" = 4 : i32, '
...                  'ttg.target = "cuda:90"} {\\n  %0 = ttg.local_load %a : '
...                  '!ttg.memdesc<16x16xf16, #s, #smem> -> tensor<16x16xf16, #b> loc(#loc3)\\n}')
>>> m.target, m.num_warps, m.ops[0].name, m.ops[0].line, m.ops[0].loc
('cuda:90', 4, 'ttg.local_load', 3, 'k.py:7')
"""
from __future__ import annotations

import functools
import re
import struct
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from types import MappingProxyType
from typing import Any, Mapping

from verilayout.core.linear_layout import LinearLayout
from verilayout.errors import LayoutError
from verilayout.frontends.mlir import Attr, Scanner, TensorType, format_value, parse_aliases
from verilayout.frontends.prescan import LOC_ALIAS, LOC_REF
from verilayout.frontends.shared_text import shared_text_to_layout
from verilayout.frontends.triton import attr_to_linear, memdesc_buffers
from verilayout.frontends.ttgir_attrs import read_attributes, read_indices

__all__ = ["Op", "Module", "Type", "TypeTable", "Loop", "parse_module", "MAX_BYTES", "TRITON_DIALECTS"]

MAX_BYTES = 64 << 20          # larger input is refused (a TTGIR file is a few hundred KiB)
MAX_DEPTH = 200               # deeper bracket nesting is refused
MAX_PARSED_TYPES = 4096       # distinct type texts a Module keeps parsed (its TypeTable, Module.type_of)

_OP = re.compile(r"^\s*(?:(?P<res>%[\w.$#:-]+(?:\s*,\s*%[\w.$#:-]+)*)\s*=\s*)?"
                 r"(?P<name>\"?[a-z_][\w]*\.[\w.]+\"?)(?P<rest>.*)$")
_PARTITION = re.compile(r"partition(\d+)\(.*\)\s+num_warps\((\d+)\)\s*\{\s*$")
_SSA = re.compile(r"%[\w.$-]+(?:#\d+)?")
_LOC_FILE = re.compile(r'"([^"\\]*(?:\\.[^"\\]*)*)"\s*:\s*(\d+)(?:\s*:\s*\d+)?')   # a string's body unrolled: the same matches
_MULTI_RESULT = re.compile(r"(%[\w.$-]+):(\d+)$")
_MODULE_ATTR = {"ttg.target": "target", "ttg.num-warps": "num_warps",
                "ttg.threads-per-warp": "threads_per_warp", "ttg.num-ctas": "num_ctas", "ttg.shared": "shared"}


#: the dialects whose encodings are Triton layouts (converted by ``frontends.triton``)
TRITON_DIALECTS = ("ttg", "ttng", "triton_gpu")


def read_type(text: str, aliases: Mapping[str, Any], parsed: dict) -> Any:
    """Parse one type text (``tensor<...>``, ``!ttg.memdesc<...>``, or a memdesc printed bare as
    ``<...>``) with a module's aliases; ``parsed`` keeps each text's value (at most
    MAX_PARSED_TYPES; values are frozen).

    Law: the value of ``text`` is the MLIR value of the whole text (a bare ``<...>`` read as
    ``!ttg.memdesc<...>``); anything after the type is a ``LayoutError``.

    >>> read_type("<4x8xf16, #ttg.shared_memory>", {}, {}).kind
    'memdesc'
    """
    hit = parsed.get(text)
    if hit is not None:
        return hit
    key = text
    if text.lstrip().startswith("<"):   # Triton prints some memdesc results without `!ttg.memdesc`
        text = "!ttg.memdesc" + text.lstrip()
    s = Scanner(text, 0, aliases)
    try:
        v = s.value()
    except RecursionError:
        raise LayoutError(f"type {text[:60]!r}: nested too deeply") from None
    if not s.at_end():
        raise s.error(f"unexpected {s.found()} after the type")
    if len(parsed) < MAX_PARSED_TYPES:
        parsed[key] = v
    return v


@dataclass(frozen=True, eq=False)
class Type:
    """One type as an op prints it, read once: its parsed value and the layout of its encoding.

    Each attribute is computed on first use and kept (a module hands out one :class:`Type` per
    distinct text, :class:`TypeTable`), so a type is parsed and its layout converted at most once
    per module; reading never raises ``LayoutError``: a type that cannot be read has ``error``, an
    encoding that cannot be converted has ``layout_error``.

    Law: ``tensor`` is the parsed ``tensor<...>``/``!ttg.memdesc<...>`` (None for any other type or
    an unreadable one); ``layout`` is ``attr_to_linear(encoding, layout_shape)`` when the encoding is
    a Triton attribute (:data:`TRITON_DIALECTS`) and converts.

    >>> t = Type("tensor<32xf16, #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], "
    ...          "warpsPerCTA = [1], order = [0]}>>")
    >>> t.tensor.shape, t.layout.bases["lane"][0], t.is_memdesc
    ((32,), [1], False)
    """
    text: str
    aliases: Mapping[str, Any] = field(default_factory=dict, repr=False)
    parsed: dict = field(default_factory=dict, repr=False)

    @cached_property
    def _read(self) -> tuple[Any, str | None]:
        try:
            return read_type(self.text, self.aliases, self.parsed), None
        except LayoutError as e:
            return None, str(e)

    @property
    def value(self) -> Any:
        """The parsed MLIR value, or None when the text cannot be read (:attr:`error`)."""
        return self._read[0]

    @property
    def error(self) -> str | None:
        """Why the text cannot be read (the ``LayoutError`` message), or None."""
        return self._read[1]

    def read(self) -> Any:
        """The parsed MLIR value, read once; an unreadable text raises its ``LayoutError``.

        Law: ``t.read()`` is ``read_type(t.text, aliases, parsed)`` (what ``Module.type_of`` gives
        for the same text), and raises ``LayoutError(t.error)`` where that raises.

        >>> Type("tensor<4x8xf16>").read().shape
        (4, 8)
        >>> Type("tensor<4x").read()
        Traceback (most recent call last):
        ...
        verilayout.errors.LayoutError: line 1, col 10: expected an element type in tensor type, found end of text
        """
        value, error = self._read
        if error is not None:
            raise LayoutError(error)
        return value

    @property
    def tensor(self) -> TensorType | None:
        """The parsed tensor or memdesc type; None for other types and unreadable texts."""
        v = self._read[0]
        return v if isinstance(v, TensorType) else None

    @property
    def is_memdesc(self) -> bool:
        """The op printed a ``memdesc<...>`` type (a memdesc printed bare, ``<...>``, is not one)."""
        return "memdesc<" in self.text

    @property
    def is_tensor(self) -> bool:
        """The op printed a ``tensor<...>`` type."""
        return self.text.lstrip().startswith("tensor<")

    @property
    def is_tensordesc(self) -> bool:
        """The op printed a TMA tensor descriptor type (``!tt.tensordesc<...>``)."""
        return self.text.lstrip().startswith("!tt.tensordesc")

    @property
    def in_tensor_memory(self) -> bool:
        """The printed type names tensor memory (``#ttng.tensor_memory``)."""
        return "tensor_memory" in self.text

    @property
    def encoding_as_printed(self) -> str:
        """The encoding as the op wrote it: ``#blocked`` of ``tensor<64xf16, #blocked>``."""
        return self.text.split(",", 1)[-1].strip()[:-1]

    @property
    def encoding(self) -> Attr | None:
        """The Triton layout attribute of the type (:data:`TRITON_DIALECTS`), or None."""
        t = self.tensor
        enc = t.encoding if t is not None else None
        return enc if isinstance(enc, Attr) and enc.dialect in TRITON_DIALECTS else None

    @cached_property
    def encoding_text(self) -> str | None:
        """The type's encoding printed in full (aliases resolved), or None for no tensor type."""
        t = self.tensor
        if t is None:
            return None
        enc = t.encoding               # an attribute's key is this text when not preset: printed once, kept
        return enc.key() if isinstance(enc, Attr) and "_key" not in enc.__dict__ else format_value(enc)

    @property
    def layout_shape(self) -> tuple:
        """The shape the encoding's layout covers (a memdesc ring's layout covers one buffer)."""
        return memdesc_buffers(self.tensor)[0]

    @cached_property
    def _resolved(self) -> tuple[LinearLayout | None, str | None]:
        if self.encoding is None:
            return None, None
        try:
            return attr_to_linear(self.encoding, self.layout_shape), None
        except LayoutError as e:
            return None, str(e)

    @property
    def layout(self) -> LinearLayout | None:
        """The linear layout of the encoding over :attr:`layout_shape`, or None."""
        return self._resolved[0]

    @property
    def layout_error(self) -> str | None:
        """Why a Triton encoding has no linear layout (the converter's message), or None."""
        return self._resolved[1]

    @cached_property
    def padded(self) -> Any:
        """A ``#ttg.padded_shared`` memdesc's address map (not GF(2)-linear); None otherwise."""
        t = self.tensor
        if t is None or "padded_shared" not in (self.encoding_text or ""):
            return None
        try:
            return shared_text_to_layout(self.encoding_text, list(self.layout_shape))
        except LayoutError:
            return None

    def as_memdesc(self, table: "TypeTable") -> "Type":
        """This type read as a memdesc: itself when printed as one, else ``!ttg.memdesc`` + its text
        (Triton prints a cp.async destination bare, ``<...>``)."""
        return self if self.is_memdesc else table.type("!ttg.memdesc" + self.text)


class TypeTable:
    """A module's alias table and the :class:`Type` of each distinct type text (at most
    MAX_PARSED_TYPES kept; past that each request gets a fresh, equally correct Type).

    >>> tt = TypeTable(); tt.type("tensor<4xf16>") is tt.type("tensor<4xf16>")
    True
    """

    def __init__(self, aliases: Mapping[str, Any] | None = None, parsed: dict | None = None):
        self.aliases = aliases if aliases is not None else {}
        self.parsed = parsed if parsed is not None else {}
        self.types: dict[str, Type] = {}

    def type(self, text: str) -> Type:
        """The one :class:`Type` of ``text`` in this module."""
        got = self.types.get(text)
        if got is None:
            got = Type(text, self.aliases, self.parsed)
            if len(self.types) < MAX_PARSED_TYPES:
                self.types[text] = got
        return got


@dataclass(frozen=True)
class Op:
    """One op: ``results = name operands {attrs} : operand types -> result types loc(...)``.

    ``operand_types``/``result_types`` are the raw type texts and ``attrs`` the raw ``{...}`` text
    (kept for callers that print them); the typed views beside them are read once:
    :attr:`in_types`/:attr:`out_types` (:class:`Type`), :attr:`attributes`, :attr:`indices`.
    """
    name: str
    line: int
    results: tuple[str, ...]
    operands: tuple[str, ...]
    operand_types: tuple[str, ...]
    result_types: tuple[str, ...]
    attrs: str = ""
    loc: str | None = None
    text: str = field(default="", repr=False, compare=False)
    #: the module's types (aliases and parsed values); a hand-built op gets an empty table
    table: TypeTable = field(default_factory=TypeTable, repr=False, compare=False)

    @cached_property
    def in_types(self) -> tuple[Type, ...]:
        """The operand types as printed, each a :class:`Type` of the module."""
        return tuple(self.table.type(t) for t in self.operand_types)

    @cached_property
    def out_types(self) -> tuple[Type, ...]:
        """The result types as printed, each a :class:`Type` of the module."""
        return tuple(self.table.type(t) for t in self.result_types)

    @cached_property
    def attributes(self) -> Mapping[str, Any]:
        """The op's attributes and properties (``frontends.ttgir_attrs.read_attributes``), read-only."""
        return MappingProxyType(read_attributes(self.attrs, self.text))

    @cached_property
    def indices(self) -> tuple[int, ...] | None:
        """The static index list a view prints after its source (``ttgir_attrs.read_indices``)."""
        return read_indices(self.text, self.name, bool(self.results))

    @property
    def allow_reorder(self) -> bool:
        """The op's text carries ``allow_reorder`` (``tt.reshape``'s can_reorder keyword)."""
        return "allow_reorder" in self.text

    @property
    def splat(self) -> bool:
        """Every element of the result is the same value: ``tt.splat``, or an ``arith.constant``
        of a splat ``dense<v>`` (not a ``dense<[...]>`` list)."""
        return self.name == "tt.splat" or (self.name == "arith.constant" and "dense<" in self.text
                                           and "dense<[" not in self.text)

    @cached_property
    def scalar(self) -> float | int | bool | None:
        """The one value of an ``arith.constant`` that is a scalar (``0 : i32``) or a splat
        (``dense<v>``): an int, a bool, a float (decimal, or a hex bit pattern of the result's float
        type); None for a list, another op, or text that does not read.

        >>> parse_module("module {\\n  %c = arith.constant dense<0xFF800000> : tensor<4xf32>\\n}").ops[0].scalar
        -inf
        """
        return _scalar_of(self)

    @property
    def predicate(self) -> str | None:
        """The predicate an ``arith.cmpi`` / ``arith.cmpf`` prints first (``slt``, ``oge``), else None."""
        if self.name not in ("arith.cmpi", "arith.cmpf"):
            return None
        return self.text.split(self.name, 1)[1].split(",", 1)[0].strip() or None

    def operand_type(self, i: int) -> Type | None:
        """The type printed at position ``i`` of the operand types, or None."""
        return self.in_types[i] if i < len(self.in_types) else None


_ITER_ARG = re.compile(r"(%[\w.$-]+)\s*=\s*(%[\w.$-]+(?:#\d+)?)")


@dataclass(frozen=True)
class Loop:
    """An ``scf.for`` and its loop-carried values: ``args[i]`` (a block argument of the body) is
    ``inits[i]`` in the first iteration and ``yielded[i]`` (operand ``i`` of the body's ``scf.yield``)
    of the previous iteration after that; the loop's result ``i`` (``results[i]``) is the last yield.

    >>> m = parse_module("module {\\n  %r:2 = scf.for %i = %a to %b step %c iter_args(%x = %p, %y = %q) -> "
    ...                  "(f32, f32) {\\n    %n = arith.addf %x, %y : f32\\n    scf.yield %n, %y : f32, f32\\n  }\\n}")
    >>> m.loops[0].args, m.loops[0].inits, m.loops[0].yielded, m.loops[0].results
    (('%x', '%y'), ('%p', '%q'), ('%n', '%y'), ('%r', '%r#1'))
    """
    op: Op
    args: tuple[str, ...]
    inits: tuple[str, ...]
    yielded: tuple[str, ...]
    yield_line: int | None

    @property
    def results(self) -> tuple[str, ...]:
        return self.op.results


_FLOAT_BITS = {"f64": ("<Q", "<d"), "f32": ("<I", "<f"), "f16": ("<H", "<e")}


def _scalar_of(op: Op) -> float | int | bool | None:
    if op.name != "arith.constant" or "dense<[" in op.text:
        return None
    body = (op.text.split("dense<", 1)[1].split(">", 1)[0] if "dense<" in op.text
            else op.text.split("arith.constant", 1)[1].split(":", 1)[0]).strip()
    t = op.out_types[0].tensor if op.out_types else None
    elem = t.elem if t is not None else (op.result_types[0].strip() if op.result_types else "")
    if body in ("true", "false"):
        return body == "true"
    try:
        if body.startswith("0x") and elem in _FLOAT_BITS or (body.startswith("0x") and elem == "bf16"):
            bits = int(body, 16) << (16 if elem == "bf16" else 0)
            word, real = _FLOAT_BITS["f32" if elem == "bf16" else elem]
            return struct.unpack(real, struct.pack(word, bits))[0]
        if not elem.startswith(("f", "bf")) and not any(ch in body for ch in ".en"):
            return int(body, 0)
        return float(body)
    except (ValueError, struct.error):
        return None


def _indent(op: Op) -> int:
    return len(op.text) - len(op.text.lstrip())


def _loop_of(ops: tuple, k: int) -> Loop:
    """The :class:`Loop` of the ``scf.for`` at ``ops[k]``: its iter_args from its text, its yield the last
    ``scf.yield`` one level deeper before the next op at the for's own depth (MLIR's printer indents
    each region level by two spaces; a for without iter_args prints no yield)."""
    op = ops[k]
    head = op.text.split("iter_args(", 1)
    pairs = _ITER_ARG.findall(head[1].split(")", 1)[0]) if len(head) == 2 else []
    depth, found = _indent(op), None
    for inner in ops[k + 1:]:
        if _indent(inner) <= depth:
            break
        if inner.name == "scf.yield" and _indent(inner) == depth + 2:
            found = inner
    yielded = found.operands if found is not None else ()
    return Loop(op, tuple(a for a, _ in pairs), tuple(b for _, b in pairs), tuple(yielded),
                found.line if found is not None else None)


@dataclass(frozen=True)
class Module:
    """A TTGIR module: its attributes, ops and alias table, and its def-use graph
    (:attr:`defs`, :attr:`users`, :meth:`def_type`)."""
    target: str | None
    num_warps: int | None
    threads_per_warp: int
    num_ctas: int
    ops: tuple[Op, ...]
    aliases: Mapping[str, Any] = field(repr=False, compare=False, default_factory=dict)
    #: type text -> parsed type: a module repeats its few types on every op line, so each is
    #: parsed once (at most MAX_PARSED_TYPES kept; values are frozen)
    parsed_types: dict = field(repr=False, compare=False, default_factory=dict)
    #: the worker regions of ``ttg.warp_specialize`` ops, each ``(line, index, num_warps)`` of its
    #: header ``partitionN(...) num_warps(k) {`` in file order (Triton's WarpSpecializeOp printer)
    partitions: tuple[tuple[int, int, int], ...] = ()
    #: the module's ``ttg.shared = N : i32``: the bytes of shared memory its kernel allocates, set by
    #: Triton's AllocateSharedMemory pass (``triton/lib/Analysis/Allocation.cpp``; the driver's
    #: ``metadata.shared``); None where the text does not carry it (Triton's dumped ``.ttgir`` is
    #: printed before that pass)
    shared: int | None = None

    def type_of(self, text: str) -> Any:
        """Parse one type text (``tensor<...>``/``!ttg.memdesc<...>``) with the module's aliases
        (:func:`read_type`; a ``LayoutError`` when it cannot be read).

        >>> m = parse_module('#b = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], '
        ...                  'warpsPerCTA = [1], order = [0]}>\\nmodule {\\n}')
        >>> m.type_of("tensor<32xf16, #b>").shape
        (32,)
        >>> m.type_of("<32xf16, #b, #ttg.shared_memory, mutable>").kind   # a memdesc printed bare
        'memdesc'
        """
        return read_type(text, self.aliases, self.parsed_types)

    @cached_property
    def table(self) -> TypeTable:
        """The module's :class:`TypeTable` (its ops share it when :func:`parse_module` built them)."""
        return self.ops[0].table if self.ops else TypeTable(self.aliases, self.parsed_types)

    def producers(self) -> dict[str, Op]:
        """SSA name (``%x``, ``%x#1`` for the second result of ``%x:2``) -> the op defining it."""
        return dict(self.defs)

    @cached_property
    def defs(self) -> Mapping[str, Op]:
        """The def side of the graph: SSA name -> the op defining it (a later definition of a
        name wins, as in :meth:`producers`); block arguments have none."""
        out: dict[str, Op] = {}
        for op in self.ops:
            for r in op.results:
                out[r] = op
        return MappingProxyType(out)

    @cached_property
    def users(self) -> Mapping[str, tuple[Op, ...]]:
        """The use side: SSA name -> the ops that take it as an operand, in file order (an op
        naming a value twice is listed once)."""
        out: dict[str, list[Op]] = {}
        for op in self.ops:
            for a in dict.fromkeys(op.operands):
                out.setdefault(a, []).append(op)
        return MappingProxyType({k: tuple(v) for k, v in out.items()})

    @cached_property
    def loops(self) -> tuple[Loop, ...]:
        """Every ``scf.for`` of the module as a :class:`Loop` (its iter_args, inits and yield), in file order."""
        return tuple(_loop_of(self.ops, k) for k, op in enumerate(self.ops) if op.name == "scf.for")

    @cached_property
    def carried(self) -> Mapping[str, tuple[Loop, int]]:
        """Loop-carried values: an iter_arg's name or an ``scf.for`` result's name -> (its loop, its
        position); the block argument has no defining op (:attr:`defs`), the result is the last yield."""
        out: dict[str, tuple[Loop, int]] = {}
        for loop in self.loops:
            for i, a in enumerate(loop.args):
                out[a] = (loop, i)
            for i, r in enumerate(loop.results[:len(loop.args)]):
                out[r] = (loop, i)
        return MappingProxyType(out)

    def def_type(self, name: str | None) -> Type | None:
        """The type the defining op prints for value ``name`` (None: no defining op, or it prints
        no type at that result).

        >>> m = parse_module("module {\\n  %a = ttg.local_alloc : () -> !ttg.memdesc<4xf16, #s, #m>\\n}")
        >>> m.def_type("%a").text
        '!ttg.memdesc<4xf16, #s, #m>'
        """
        op = self.defs.get(name) if name else None
        if op is None:
            return None
        for res, typ in zip(op.results, op.out_types):
            if res == name:
                return typ
        return None


_OP_FIELDS = tuple(f.name for f in fields(Op))
_new = object.__new__
#: the fields alone make an Op (no __post_init__, no slots): what _op_of relies on
_PLAIN_OP = not hasattr(Op, "__post_init__") and not hasattr(Op, "__slots__")
_set = object.__setattr__


def _split_top(text: str, sep: str) -> list[str]:
    """Split at ``sep`` outside brackets and strings (the ``>`` of ``->`` closes nothing).

    >>> _split_top('a<b, c>, "d, e", f', ",")
    ['a<b, c>', ' "d, e"', ' f']
    """
    if sep not in text and len(text) <= MAX_DEPTH:   # nothing to split, too short to nest too deep
        return [text]
    if '"' not in text:
        # no string and no depth past the limit (a text that short cannot have more openers): count whole pieces
        if len(text) <= MAX_DEPTH or (text.count("(") + text.count("[") + text.count("{")
                                      + text.count("<")) <= MAX_DEPTH:
            head, got, tail = text.partition(sep)
            if got and sep not in tail and not _BRACKET.search(head):
                return [head, tail]     # the common op line: one separator, nothing open before it
            return _split_counted(text, sep)
    out, depth, cur, skip = [], 0, 0, -1
    in_str = False
    for m in _splitter(sep).finditer(text):
        i, tok = m.start(), m.group(0)
        if i < skip:
            continue
        if in_str:
            if tok == "\\":
                skip = i + 2
            elif tok == '"':
                in_str = False
        elif tok == '"':
            in_str = True
        elif tok in "([{<":
            depth += 1
            if depth > MAX_DEPTH:
                raise LayoutError(f"brackets nested deeper than {MAX_DEPTH}")
        elif tok in ")]}>" and len(tok) == 1:
            if not (tok == ">" and i > 0 and text[i - 1] == "-"):
                depth -= 1
        elif tok == sep and depth == 0 and i >= cur:
            out.append(text[cur:i])
            cur = m.end()
    out.append(text[cur:])
    return out


def _split_counted(text: str, sep: str) -> list[str]:
    """:func:`_split_top` of a text with no string: the depth before each ``sep`` is the openers
    minus the closers of the pieces before it (a ``>`` after ``-`` closes nothing), so whole
    pieces between separators are counted at once.

    >>> _split_counted("a<b : c> : d -> e : f", " : ")
    ['a<b : c>', 'd -> e', 'f']
    """
    pieces = text.split(sep)
    if len(pieces) == 1:
        return pieces
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for piece in pieces[:-1]:           # the depth after the last piece splits nothing
        cur.append(piece)
        if _BRACKET.search(piece):
            depth += (piece.count("(") + piece.count("[") + piece.count("{") + piece.count("<")
                      - piece.count(")") - piece.count("]") - piece.count("}") - piece.count(">")
                      + piece.count("->"))
        if depth == 0:
            out.append(sep.join(cur))
            cur = []
    cur.append(pieces[-1])
    out.append(sep.join(cur))
    return out


_BRACKET = re.compile(r"[()\[\]{}<>]")


@functools.lru_cache(maxsize=16)
def _splitter(sep: str) -> re.Pattern:
    """Tokens :func:`_split_top` looks at: quotes, escapes, brackets and ``sep`` (a handful of
    separators, each compiled once)."""
    return re.compile(r'[\\"()\[\]{}<>]|' + re.escape(sep))


def _strip_loc(rest: str) -> tuple[str, str | None]:
    """Remove a trailing ``loc(...)``; return the rest and the loc body."""
    r = rest.rstrip()
    if r.endswith("{"):          # a region op: `scf.for ... {` has its loc on the closing line
        r = r[:-1].rstrip()
    j = r.rfind("loc(")
    if j < 0 or not r.endswith(")"):
        return r, None
    return r[:j].rstrip(), r[j:]


def _type_list(text: str) -> tuple[str, ...]:
    t = text.strip()
    if t.startswith("(") and t.endswith(")"):
        t = t[1:-1]
    parts = []
    for chunk in _split_top(t, ","):
        for p in _split_top(chunk, " * "):
            p = p.strip()
            if p:
                parts.append(p)
    return tuple(parts)


def _results(res: str | None) -> tuple[str, ...]:
    if not res:
        return ()
    if ":" not in res and "," not in res:          # the common op: one result, no `%x:2` count
        return (res.strip(),)
    out = []
    for r in res.split(","):
        r = r.strip()
        m = _MULTI_RESULT.match(r)
        if m:
            out.append(m.group(1))
            out.extend(f"{m.group(1)}#{k}" for k in range(1, int(m.group(2))))
        else:
            out.append(r)
    return tuple(out)


def _parse_op(line_no: int, m: re.Match, locs: Mapping[str, str] | None = None, table: TypeTable | None = None,
              seen: dict | None = None) -> Op:
    """The op of one matched line; with ``locs`` its ``loc`` resolved through them and ``table``
    the module's types (built once: an :class:`Op` is frozen); ``seen``: the module's resolved
    ``loc`` bodies (ops of one source line print the same one)."""
    op = _deferred_op(line_no, m, locs, table if table is not None else TypeTable(), seen)
    for group in _GROUPS:               # every field now (equal to the deferred op's, read later)
        op.__dict__.update(group(op.__dict__[_SRC]))
    return op


#: the instance key of a deferred :class:`Op`'s source: (results text, rest of the line, locs, loc memo)
_SRC = "_src"


def _deferred_op(line_no: int, m: re.Match, locs: Mapping[str, str] | None, table: TypeTable,
                 seen: dict | None) -> Op:
    """An :class:`Op` whose ``name``, ``line``, ``results``, ``text`` and ``table`` are set and whose
    other fields are read from the line when first asked for (:class:`_Deferred`): most ops of a
    kernel are only dispatched on by name; their operands, types, attributes and ``loc`` are
    decoded for the few a check reads. Equal, field by field, to :func:`_parse_op`'s op.

    >>> op = _deferred_op(3, _OP.match("  %0 = tt.splat %a : f32 -> tensor<4xf32>"), None, TypeTable(), None)
    >>> "operands" in op.__dict__, op.results, op.operands, op.result_types
    (False, ('%0',), ('%a',), ('tensor<4xf32>',))
    """
    res, name, rest = m.groups()        # _OP's groups: res, name, rest
    if '"' in name:
        name = name.strip('"')
    op = _new(Op)                       # results at once: the def-use graph reads every op's
    _set(op, "__dict__", {"name": name, "line": line_no, "text": m.group(0), "table": table,
                          "results": (res.strip(),) if res and ":" not in res and "," not in res else _results(res),
                          _SRC: (res, rest, locs, seen)})
    return op


def _body_of(rest: str) -> tuple[str, str | None]:
    """(the line after the op name without its trailing ``loc(...)``, that loc's text)."""
    r = rest.rstrip()                   # _strip_loc(rest), inline: its common case, no region
    j = r.rfind("loc(")
    if r[-1:] == "{" or j < 0 or r[-1:] != ")":
        return _strip_loc(rest)
    return r[:j].rstrip(), r[j:]


def _loc_of(src: tuple) -> dict:
    _, rest, locs, seen = src
    loc = _body_of(rest)[1]
    if locs is not None:
        if seen is None:
            loc = _resolve_loc(loc, locs)
        elif loc in seen:
            loc = seen[loc]
        else:                           # kept under the body as printed (ops of one line repeat it)
            got = seen[loc] = _resolve_alias_loc(loc, locs, seen)
            loc = got
    return {"loc": loc}


def _signature_of(src: tuple) -> dict:
    body = _body_of(src[1])[0]
    parts = _split_top(body, " : ")
    head = parts[0]
    n = len(parts)
    sig = parts[1] if n == 2 else " : ".join(parts[1:]) if n > 1 else ""
    attrs = ""
    k = head.find("{")
    if k >= 0:
        attrs = head[k:]
        head = head[:k]
    operands = tuple(_SSA.findall(head))
    if "#0" in head:            # `%x#0` is the first result of `%x:n = ...`, which :func:`_results` names `%x`
        operands = tuple(o.partition("#")[0] if o.partition("#")[2] == "0" else o for o in operands)
    ins, outs = _signature(sig) if sig else ((), ())
    return {"operands": operands, "operand_types": ins, "result_types": outs, "attrs": attrs}


#: the deferred fields of an :class:`Op`, in groups read together from its source
_GROUPS = (_loc_of, _signature_of)


class _Deferred:
    """The class attribute of one deferred field of :class:`Op`: a non-data descriptor, so a field
    set in the instance (every op built by ``Op(...)`` or ``replace``) is read as usual; a deferred
    op's missing field is computed with its group from the op's source and stored in the instance.

    Law: ``op.f`` is the value :func:`_parse_op` gives ``f`` for the same line."""

    def __init__(self, group, default: Any) -> None:
        self.group, self.default, self.name = group, default, ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, op: Any, owner: type | None = None) -> Any:
        if op is None:
            return self.default         # the class's default, as the dataclass left it
        d = op.__dict__
        src = d.get(_SRC)
        if src is None:
            raise AttributeError(self.name)
        d.update(self.group(src))
        return d[self.name]


for _group, _fields in ((_loc_of, ("loc",)),
                        (_signature_of, ("operands", "operand_types", "result_types", "attrs"))):
    for _f in _fields:
        _d = _Deferred(_group, Op.__dataclass_fields__[_f].default)
        _d.__set_name__(Op, _f)
        setattr(Op, _f, _d)


def _may_raise(line: str) -> bool:
    """A line whose decoding can raise (brackets nested past :data:`MAX_DEPTH` need more openers
    than that): :func:`parse_module` decodes it at once, so its error is the module's, as before."""
    return len(line) > MAX_DEPTH and (line.count("(") + line.count("[") + line.count("{")
                                      + line.count("<")) > MAX_DEPTH


def _op_of(values: tuple) -> Op:
    """``Op(*values)`` (every field given) without the frozen dataclass's per-field
    ``object.__setattr__`` calls: the same fields in the instance's ``__dict__`` (``Op`` has no
    ``__post_init__``).

    >>> _op_of(("tt.return", 3, (), (), (), (), "", None, "tt.return", TypeTable())) == Op("tt.return", 3, (), (), (), ())
    True
    """
    if not _PLAIN_OP:
        return Op(*values)
    op = _new(Op)
    op.__dict__.update(zip(_OP_FIELDS, values))
    return op


@functools.lru_cache(maxsize=4096)   # key: an op's signature text (a module prints a few dozen distinct ones)
def _signature(sig: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The operand and result type texts of an op's signature (the text after its top-level
    ``" : "``): ``ins -> outs``, a cast's ``src to dst``, or one list that is both.

    >>> _signature("tensor<4xf16, #b>, i32 -> !tt.ptr<f16>")
    (('tensor<4xf16, #b>', 'i32'), ('!tt.ptr<f16>',))
    """
    ins, outs = sig, sig
    arrow = _split_top(sig, "->")
    if len(arrow) == 2:
        ins, outs = arrow
    elif len(cast := _split_top(sig, " to ")) == 2:    # casts print `: srcType to dstType`
        ins, outs = cast
    return _type_list(ins), _type_list(outs)


def _resolve_loc(body: str | None, locs: Mapping[str, str], depth: int = 0, memo: dict | None = None) -> str | None:
    """``loc("f.py":42:1)``, ``loc(#loc3)``, ``loc("name"(#loc3))``, fused/callsite -> ``f.py:42``;
    ``memo``: the module's answers for ``(alias, depth)`` (the ops of a kernel share their
    aliases' chains)."""
    if body is None or depth > 32:
        return None
    if '"' in body:                     # a file location holds its file as a string
        m = _LOC_FILE.search(body)
        if m:
            return f"{m.group(1).rsplit('/', 1)[-1]}:{m.group(2)}"    # os.path.basename
    for ref in _refs(body):
        if ref in locs:
            if memo is None:
                got = _resolve_loc(locs[ref], locs, depth + 1)
            elif (ref, depth + 1) in memo:
                got = memo[(ref, depth + 1)]
            else:
                got = memo[(ref, depth + 1)] = _resolve_loc(locs[ref], locs, depth + 1, memo)
            if got:
                return got
    return None


def _resolve_alias_loc(body: str | None, locs: Mapping[str, str], memo: dict) -> str | None:
    """``_resolve_loc(body, locs, 0, memo)``, with the common op's ``loc(#locN)`` (one alias, no
    string) looked up at once: the alias's answer at depth 1, as :func:`_resolve_loc` keeps it.

    >>> _resolve_alias_loc("loc(#loc2)", {"loc2": 'loc("/s/k.py":7:3)'}, {})
    'k.py:7'
    """
    if body is None or body[:8] != "loc(#loc" or body[-1:] != ")" or not body[5:-1].replace("_", "").isalnum():
        return _resolve_loc(body, locs, 0, memo)
    ref = body[5:-1]
    if ref not in locs:
        return None
    key = (ref, 1)
    if key in memo:
        return memo[key]
    got = memo[key] = _resolve_loc(locs[ref], locs, 1, memo)
    return got


def _refs(body: str) -> list[str]:
    """``LOC_REF.findall(body)``: the location aliases a ``loc(...)`` body names; an op's
    ``loc(#locN)`` read without the expression.

    >>> _refs("loc(#loc12)"), _refs('loc(callsite(#loc1 at #loc_2))')
    (['loc12'], ['loc1', 'loc_2'])
    """
    if body[:8] == "loc(#loc" and body[-1:] == ")" and body[5:-1].replace("_", "").isalnum():
        return [body[5:-1]]             # `loc\w*` whole: the one name findall gives
    return LOC_REF.findall(body)


def _location_table(text: str, lines: list[str]) -> tuple[dict[str, str], str]:
    """The ``#locN = loc(...)`` lines of a TTGIR text (``lines``: its lines): each alias's body
    (a later line of one name wins), and the text with those lines emptied (what the other
    aliases are read from). A line is one when ``LOC_ALIAS`` matches it whole; the lines are found
    by the expression's literal start (:data:`_LOC_LINE_HIT`), each hit on one line and preceded
    by white space alone, else by matching every line.

    >>> _location_table('#loc3 = loc("k.py":7:1)\\nmodule {\\n} loc(#loc3)', ['#loc3 = loc("k.py":7:1)', 'module {', '} loc(#loc3)'])
    ({'loc3': 'loc("k.py":7:1)'}, '\\nmodule {\\n} loc(#loc3)')
    """
    locs: dict[str, str] = {}
    blank: list[int] = []
    row, pos = 0, 0
    for m in _LOC_LINE_HIT.finditer(text):
        i = m.start()
        start = i if not i or text[i - 1] == "\n" else text.rfind("\n", 0, i) + 1
        if start != i and not text[start:i].isspace() or text.find("\n", i, m.end(2)) >= 0:
            return _location_lines(lines)
        row, pos = row + text.count("\n", pos, start), start
        locs[m.group(1)] = m.group(2)
        blank.append(row)
    if not blank:
        return locs, text
    out = list(lines)
    for r in blank:
        out[r] = ""
    return locs, "\n".join(out)


#: ``LOC_ALIAS`` without its line anchor: searched by its literal start ``#loc``
_LOC_LINE_HIT = re.compile(LOC_ALIAS.pattern[len(r"^\s*"):], re.M)


def _location_lines(lines: list[str]) -> tuple[dict[str, str], str]:
    """:func:`_location_table`, line by line."""
    locs: dict[str, str] = {}
    layout_text = []
    for ln in lines:
        lm = LOC_ALIAS.match(ln) if "#loc" in ln else None
        if lm:
            locs[lm.group(1)] = lm.group(2)
            layout_text.append("")
        else:
            layout_text.append(ln)
    return locs, "\n".join(layout_text)


_MODULE_HEAD = re.compile(r"module\b[^\n]*?attributes\s*\{([^\n]*)\}\s*\{")


def _module_head(text: str) -> re.Match | None:
    """``re.search(r"^\\s*" + _MODULE_HEAD.pattern, text, re.M)``'s group 1 (the module's attributes),
    searched by the literal ``module``: the first hit with only white space before it on its line."""
    i = 0
    while (m := _MODULE_HEAD.search(text, i)) is not None:
        start = text.rfind("\n", 0, m.start()) + 1
        if start == m.start() or text[start:m.start()].isspace():
            return m
        i = m.start() + 1
    return None


def _module_attrs(text: str) -> dict:
    m = _module_head(text)
    out: dict = {}
    if not m:
        return out
    for key, val in re.findall(r'"?([\w.-]+)"?\s*=\s*("[^"]*"|[-\w]+)', m.group(1)):
        if key in _MODULE_ATTR:
            out[_MODULE_ATTR[key]] = val.strip('"') if val.startswith('"') else int(val) \
                if re.fullmatch(r"-?\d+", val) else val
    return out


def _decode(data: bytes | str) -> str:
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise LayoutError(f"byte {e.start}: not UTF-8 text (a TTGIR file is text)") from None


#: first characters of the lines :func:`parse_module` skips (``""``: an empty line; ``/`` and
#: ``m`` only as ``//`` and ``module``)
_SKIP_FIRST = ("", "#", "/", "}", "m", "^")


def parse_module(text: str | bytes) -> Module:
    """The :class:`Module` of a TTGIR text (see the module docstring for the law).

    >>> parse_module("module {\\n  %0:2 = tt.split %x : tensor<4x2xf32, #b> -> tensor<4xf32, #c>\\n}").ops[0].results
    ('%0', '%0#1')
    >>> parse_module(b"\\xff")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: byte 0: not UTF-8 text (a TTGIR file is text)
    """
    if len(text) > MAX_BYTES:
        raise LayoutError(f"input of {len(text)} bytes exceeds the {MAX_BYTES >> 20} MiB limit")
    text = _decode(text)
    if "\x00" in text:
        raise LayoutError("the input holds NUL bytes: not a TTGIR text file")
    lines = text.split("\n")
    locs, layout_text = _location_table(text, lines)
    try:
        aliases: dict[str, Any] = dict(parse_aliases(layout_text))
    except RecursionError:
        raise LayoutError("alias definitions nested too deeply") from None
    attrs = _module_attrs(text)
    parsed: dict = {}
    table = TypeTable(aliases, parsed)
    ops = []
    seen: dict = {}                     # loc bodies and (alias, depth) -> resolved (_resolve_loc)
    heads: list[tuple[int, int, int]] = []
    regions: list[int] = []             # ops printed `... ({` (tt.reduce, tt.scan) whose `})` line is ahead
    for i, ln in enumerate(lines, 1):
        s = ln.lstrip()
        if regions and s.startswith("})"):
            _closing_loc(ops, regions.pop(), s, locs, seen)
        c = s[:1]
        if c in _SKIP_FIRST and (c != "/" or s[1:2] == "/") and (c != "m" or s.startswith("module")):
            continue                    # empty, `#`, `//`, `}`, `module`, `^`: no op
        if c == "p" and s.startswith("partition") and (pm := _PARTITION.match(s)):
            heads.append((i, int(pm.group(1)), int(pm.group(2))))
            continue
        m = _OP.match(ln)
        if not m:
            continue
        ops.append(_parse_op(i, m, locs, table, seen) if len(ln) > MAX_DEPTH and _may_raise(ln)
                   else _deferred_op(i, m, locs, table, seen))
        if s.rstrip().endswith("({"):
            regions.append(len(ops) - 1)
    nw = attrs.get("num_warps")
    return Module(attrs.get("target"), nw if isinstance(nw, int) else None,
                  int(attrs.get("threads_per_warp", 32)) if str(attrs.get("threads_per_warp", 32)).isdigit() else 32,
                  int(attrs.get("num_ctas", 1)) if str(attrs.get("num_ctas", 1)).isdigit() else 1,
                  tuple(ops), aliases, parsed, tuple(heads), _int_attr(attrs.get("shared")))


def _closing_loc(ops: list, at: int, closing: str, locs: Mapping[str, str], seen: dict) -> None:
    """A generic region op (``%r = "tt.reduce"(%x) <{axis = 1 : i32}> ({``) prints its ``loc`` on
    its closing line (``}) : (tensor<...>) -> tensor<...> loc(#loc7)``, the MLIR generic form):
    ``ops[at]`` takes it there when its first line had none.

    >>> m = parse_module('#loc7 = loc("k.py":9:1)\\nmodule {\\n  %r = "tt.reduce"(%x) <{axis = 0 : i32}> ({\\n'
    ...                  '  }) : (tensor<4xi32, #b>) -> i32 loc(#loc7)\\n}')
    >>> m.ops[0].name, m.ops[0].loc
    ('tt.reduce', 'k.py:9')
    """
    if ops[at].loc is not None:
        return
    loc = _strip_loc(closing)[1]
    if loc is not None:
        if loc not in seen:
            seen[loc] = _resolve_loc(loc, locs, 0, seen)
        ops[at] = replace(ops[at], loc=seen[loc])


def _int_attr(val: Any) -> int | None:
    """A module attribute read as a non-negative integer, else None (absent or not a number)."""
    return val if isinstance(val, int) and val >= 0 else None
