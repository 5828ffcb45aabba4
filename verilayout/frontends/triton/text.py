"""From MLIR text to layouts: :func:`parse`, :func:`parse_attr`, :func:`format_attr`, the layout of
a type (:func:`type_to_layout`, :func:`memdesc_view_layout`, :func:`memdesc_buffers`) and the
resolution of ``#name = ...`` alias lines in a TTGIR file. Text that is not MLIR goes to the CuTe
reader (``verilayout.cute.parse_cute``).

>>> parse("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [2], warpsPerCTA = [1], order = [0]}>", [2]).bases
{'register': [], 'lane': [[1]], 'warp': [], 'block': []}
"""
from __future__ import annotations

import re
from typing import Any, Sequence

from verilayout.errors import LayoutError
from verilayout.core.linear_layout import LinearLayout
from verilayout.core.cga import standard_out_dims
from verilayout.dtypes import mlir_bits
from verilayout.frontends.mlir import Attr, Scanner, TensorType, format_value, parse_aliases, parse_value
from verilayout.frontends import cute_text
from verilayout.frontends.triton import memory as triton_memory
from verilayout.frontends.triton.common import attr_error
from verilayout.frontends.triton.registry import (DISTRIBUTED, KINDS, SHARED, KindTable, known_kind, lookup_kind,
                                                  attr_to_layout, canonical_kind)
from verilayout.frontends.triton.shared import nvmma_rank
from verilayout.hw.nvidia.banks import SharedAddressMap


def _looks_like_mlir(text: str) -> bool:
    s = text.lstrip()
    return s.startswith(("#", "!", "tensor<", "module", '"builtin.module"', "//")) or \
        bool(re.search(r"^[ \t]*#[\w$.\-]+[ \t]*=", text, re.M))


def _non_alias_text(text: str, aliases) -> str:
    """The text with alias-definition lines blanked (positions kept)."""
    lines = text.split("\n")
    for a in aliases.values():
        lines[a.line - 1] = " " * len(lines[a.line - 1])
    return "\n".join(lines)


def _layout_aliases(aliases, kinds: KindTable = KINDS) -> list[str]:
    out = []
    for name, a in aliases.items():
        m = re.match(r"#([A-Za-z_][\w$]*\.[\w$.]+)", a.text)
        if not m:
            continue
        kind = canonical_kind(m.group(1))
        if known_kind(kind, kinds):
            out.append(name)
    return out


def _types_in(text: str, aliases) -> list[TensorType]:
    """The distinct tensor/memdesc types written in ``text`` (unparsable ones skipped)."""
    found: dict[str, TensorType] = {}
    for m in re.finditer(r"tensor<|!ttg\.memdesc<|!triton_gpu\.memdesc<", text):
        s = Scanner(text, m.start(), aliases)
        try:
            v = s.value()
        except LayoutError:
            continue
        if isinstance(v, TensorType) and v.encoding is not None:
            found.setdefault(format_value(v), v)
    return list(found.values())


def _uses_of(types: list[TensorType], name: str) -> list[tuple]:
    """Shapes of the types whose encoding is the alias ``#name``: a memdesc ring of buffers
    (``!ttg.memdesc<2x64x64xf16, #shared, ...>`` with a rank-2 ``#shared``) counts one buffer's."""
    shapes: list[tuple] = []
    for t in types:
        if isinstance(t.encoding, Attr) and t.encoding.alias == name:
            shp = memdesc_buffers(t)[0]
            if shp not in shapes:
                shapes.append(shp)
    return shapes


def shared_rank(attr: Any) -> int | None:
    """The rank a shared-memory encoding is written for (None when it does not say).

    >>> shared_rank(parse_attr("#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>"))
    1
    """
    if not isinstance(attr, Attr):
        return None
    p, kind = attr.params, attr.name.split(".")[-1]
    if kind in ("swizzled_shared", "amd_rotating_shared") and isinstance(p.get("order"), list):
        return len(p["order"])
    if kind == "nvmma_shared":
        return int(p["rank"]) if isinstance(p.get("rank"), int) else nvmma_rank(attr)
    if kind in ("shared_linear", "padded_shared"):
        if kind == "padded_shared":
            try:
                p = triton_memory.padded_shared_parts(attr.body)[1]
            except LayoutError:
                return None
            if isinstance(p.get("order"), list):
                return len(p["order"])
        offs = p.get("offset")
        if isinstance(offs, list) and offs and isinstance(offs[0], list):
            return len(offs[0])
    if kind in ("tensor_memory_encoding", "tensor_memory_scales_encoding"):
        return 2
    if kind == "partitioned_shared":
        return shared_rank(p.get("partitionLayout"))
    return None


def memdesc_buffers(t: TensorType) -> tuple[tuple, int, int]:
    """``(layout shape, buffers, buffer stride in elements)`` of a type: a memdesc whose leading
    dims exceed its encoding's rank is a ring of buffers (Triton's pipelining allocates
    ``!ttg.memdesc<3x128x64xf16, #shared, ...>``); each buffer has the encoding's layout over the
    trailing dims, and buffer ``i`` starts ``i * stride`` elements after buffer 0. Triton's own
    ``toLinearLayout`` refuses these types; the layout of one buffer is what its views use.

    >>> from verilayout.frontends.mlir import TensorType
    >>> a = parse_attr("#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>")
    >>> memdesc_buffers(TensorType("memdesc", (3, 128, 64), "f16", a, None, True, None))
    ((128, 64), 3, 8192)
    """
    shape = _type_layout_shape(t)
    r = shared_rank(t.encoding) if t.kind == "memdesc" else None
    if r is None or len(shape) <= r:
        return shape, 1, 0
    per, lead = tuple(shape[-r:]), shape[:-r]
    count, stride = 1, 1
    for d in lead:
        count *= d
    for d in per:
        stride *= d
    return per, count, stride


def _type_layout_shape(t: TensorType) -> tuple:
    if t.kind == "memdesc" and t.alloc_shape:
        return tuple(t.alloc_shape[-len(t.shape):]) if t.shape else tuple(t.alloc_shape)
    return tuple(t.shape)


def _resolve(text: str, name: str | None, kinds: KindTable = KINDS) -> tuple[Any, tuple | None]:
    """The value the caller asked for, and (alias, shapes it is used with) for an alias.

    Rules for text with ``#name = ...`` alias lines: ``name`` picks an alias; else
    a single value left after removing the alias lines is the answer; else the
    file's only layout alias, when every typed value in the file uses it; else the
    file's only tensor/memdesc type; else an error listing the choices.
    """
    aliases = parse_aliases(text)
    table: dict[str, Any] = dict(aliases)
    if not aliases and name is None:
        return parse_value(text), None
    rest = _non_alias_text(text, aliases)
    if name is not None:
        key = name[1:] if name.startswith("#") else name
        if key not in aliases:
            have = ", ".join("#" + n for n in _layout_aliases(aliases, kinds)) or "none"
            raise LayoutError(f"no alias #{key} in the text (layout aliases: {have})")
        val = parse_value(f"#{key}", table)
        return val, (key, _uses_of(_types_in(rest, table), key))
    if rest.lstrip().startswith(("#", "!", "tensor<", "[")):
        s = Scanner(rest, 0, table)
        body = s.value()
        if s.at_end():
            return body, None
    layouts = _layout_aliases(aliases, kinds)
    types = _types_in(rest, table)
    if len(layouts) == 1:
        uses = [t for t in types if isinstance(t.encoding, Attr) and t.encoding.alias == layouts[0]]
        if len(uses) == len(types):
            val = parse_value(f"#{layouts[0]}", table)
            return val, (layouts[0], _uses_of(types, layouts[0]))
    if len(types) == 1:
        return types[0], None
    if not layouts and not types:
        raise LayoutError("the text defines no layout alias (#name = #ttg.<kind><{...}>) and "
                          "uses no tensor or memdesc type")
    listed = ", ".join("#" + n for n in layouts) or "none"
    raise LayoutError(f"the text has {len(layouts)} layout aliases ({listed}) and {len(types)} "
                      f"distinct tensor/memdesc types; pick an alias with name=")


def _single_use_shape(name: str, uses: list[tuple]) -> tuple | None:
    if len(uses) > 1:
        shown = ", ".join("x".join(map(str, u)) for u in uses)
        raise LayoutError(f"#{name} is used with several shapes ({shown}); pass shape=")
    return uses[0] if uses else None


def parse_attr(text: str, *, name: str | None = None) -> Any:
    """Parse MLIR text into its value: an :class:`Attr`, or a :class:`TensorType` for a type.

    Alias lines (``#name = ...``) in the text are resolved; ``name`` picks one.

    >>> parse_attr("#ttg.slice<{dim = 0, parent = #b}>\\n#b = #ttg.blocked<{order = [0]}>").params["parent"].alias
    'b'
    """
    if not isinstance(text, str):
        raise LayoutError(f"expected MLIR text, got {type(text).__name__}")
    if name is not None and not isinstance(name, str):
        raise LayoutError(f"name= must be an alias name such as '#blocked', got {type(name).__name__}")
    return _resolve(text, name)[0]


def format_attr(attr: Any) -> str:
    """Print a parsed attribute or type back as MLIR text (aliases written out in full).

    >>> format_attr(parse_attr("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>"))
    '#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>'
    """
    return format_value(attr)


def parse(text: str, shape: Sequence[int] | None = None, *, name: str | None = None,
          swizzle_units: Any = None, elem_bits: int | None = None, kinds: KindTable = KINDS) -> Any:
    """Parse Triton MLIR (or CuTe) text into the layout Triton computes.

    * an attribute needs ``shape=``; a ``tensor<...>`` / ``!ttg.memdesc<...>`` type
      carries its own (``shape=``, if given too, must agree);
    * in a TTGIR file, ``name="#blocked"`` picks an alias; without ``name`` the
      file's only layout alias is used. The shape then comes from ``shape=`` or
      from the file's types that use the alias;
    * text that is not MLIR is CuTe: ``verilayout.cute.parse_cute(text,
      swizzle_units=..., elem_bits=...)``;
    * ``kinds``: the layout kinds to convert with (the built-in read-only table, or one from
      ``with_layout_kind``).

    >>> parse("#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>", [2, 2]).bases
    {'offset': [[0, 1], [1, 0]], 'block': []}
    >>> parse("#ttg.blocked<{sizePerThread = [1]}>")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: line 1, col 1: #ttg.blocked has no shape: give a full type (tensor<...>) or pass shape=[...]
    """
    if not isinstance(text, str):
        raise LayoutError(f"expected layout text, got {type(text).__name__}")
    if name is not None and not isinstance(name, str):
        raise LayoutError(f"name= must be an alias name such as '#blocked', got {type(name).__name__}")
    if not text.strip():
        raise LayoutError("empty text: expected Triton MLIR (an attribute, a type or a TTGIR "
                          "file) or a CuTe layout")
    if not _looks_like_mlir(text):
        if shape is not None or name is not None:
            raise LayoutError("shape= and name= apply to Triton MLIR text; this looks like CuTe "
                              "text, which carries its own shape")
        return cute_text.parse_cute(text, swizzle_units=swizzle_units, elem_bits=elem_bits)
    if swizzle_units is not None or elem_bits is not None:
        raise LayoutError("swizzle_units= and elem_bits= apply to CuTe text, not to Triton MLIR")
    value, file_shape = _resolve(text, name, kinds)
    if isinstance(value, TensorType):
        return _type_to_linear(value, shape, kinds)
    if not isinstance(value, Attr):
        raise LayoutError(f"expected a layout attribute or a tensor/memdesc type, got "
                          f"{format_value(value)}")
    if shape is None and file_shape is not None:
        shape = _single_use_shape(*file_shape)
    if shape is None:
        raise attr_error(value, None, f"#{value.name} has no shape: give a full type (tensor<...>) or "
                                      "pass shape=[...]")
    return attr_to_layout(value, shape, kinds)


def type_to_layout(t: TensorType) -> LinearLayout | SharedAddressMap:
    """The layout of a parsed ``tensor<>``/``!ttg.memdesc<>``/``!tt.tensordesc<>`` type, as Triton's
    ``toLinearLayout(type)``: a memdesc view uses its allocation's trailing dims, a ring of
    pipeline buffers (leading dims beyond the encoding's rank) the layout of one buffer.

    >>> from verilayout.frontends.mlir import parse_value
    >>> type_to_layout(parse_value("!ttg.memdesc<2x4x4xf16, #ttg.swizzled_shared<{vec = 1, "
    ...     "perPhase = 1, maxPhase = 1, order = [1, 0]}>, #ttg.shared_memory>")).out_dims
    {'dim0': 4, 'dim1': 4}
    """
    if not isinstance(t, TensorType):
        raise LayoutError(f"expected a tensor, memdesc or tensordesc type, got {format_value(t)}")
    return _type_to_linear(t, None)


def memdesc_view_layout(t: TensorType) -> LinearLayout:
    """Where a memdesc view's elements live: view coordinates (``dim0, ...`` of the view's shape)
    -> ``offset`` (and ``block``) in the allocation. Triton lays the allocation out
    (:func:`type_to_layout`) and inverts it, trimmed to the view (its ``invertAndCompose``); a
    subslice starting at ``o`` adds the constant ``view(o)`` (XOR: the map is linear).

    Law: for ``x`` in the view, ``type_to_layout(t)`` maps ``memdesc_view_layout(t)(x)`` back to ``x``.

    >>> from verilayout.frontends.mlir import parse_value
    >>> t = parse_value("!ttg.memdesc<2x4xf16, #ttg.swizzled_shared<{vec = 1, perPhase = 1, "
    ...                 "maxPhase = 4, order = [1, 0]}>, #ttg.shared_memory, mutable, 4x4>")
    >>> memdesc_view_layout(t).bases      # row 1 is stored at offset 4 XOR 1 (its swizzle)
    {'dim0': [[5, 0]], 'dim1': [[1, 0], [2, 0]]}
    """
    full = type_to_layout(t)
    if not isinstance(full, LinearLayout) or "offset" not in full.in_dim_names:
        raise LayoutError(f"line {t.pos[0]}, col {t.pos[1]}: a view layout needs a GF(2)-linear "
                          "shared-memory layout")
    inv = full.invert() if full.is_invertible() else full.pseudoinvert()
    lshape = memdesc_buffers(t)[0]
    view = tuple(t.shape[-len(lshape):])
    bases = inv.bases
    kept = {}
    for i, (name, size) in enumerate(zip(standard_out_dims(len(lshape)), view)):
        if size > lshape[i] or size & (size - 1):
            raise LayoutError(f"line {t.pos[0]}, col {t.pos[1]}: view shape {list(view)} does not "
                              f"fit the allocation {list(lshape)}")
        kept[name] = bases[name][:size.bit_length() - 1]
    return LinearLayout(kept, inv.out_dims, require_surjective=False)


def _memdesc_checked(t: TensorType, where: str) -> None:
    """What Triton 3.9's memdesc verifier refuses (seen on Triton's lit tests with the wheel):
    an unknown memory space; a shared-memory element narrower than a byte or not a whole number of
    bytes, a tensor-memory one of 2..7 bits; no memory space; a ``#ttg.padded_shared`` whose rank is neither the
    type's nor one less; a tensor-memory view with fewer rows than ``blockM``."""
    space = t.memory_space
    if space is None:
        raise LayoutError(f"{where}: the memdesc type names no memory space (#ttg.shared_memory or "
                          "#ttng.tensor_memory after the encoding); Triton refuses it too")
    if isinstance(space, Attr) and canonical_kind(space.name) not in ("ttg.shared_memory", "ttng.tensor_memory"):
        raise LayoutError(f"{where}: unknown memory space #{space.name} (Triton 3.9 knows "
                          "#ttg.shared_memory and #ttng.tensor_memory)")
    bits = mlir_bits(t.elem)
    kind = canonical_kind(t.encoding.name)
    tmem = kind.startswith("ttng.tensor_memory")
    if bits is not None and not tmem and bits % 8:
        raise LayoutError(f"{where}: a shared-memory element of {bits} bits: Triton requires a whole "
                          "number of bytes")
    if bits is not None and tmem and 1 < bits < 8:
        raise LayoutError(f"{where}: a tensor-memory element of {bits} bits: Triton requires 1 or at least 8")
    r = shared_rank(t.encoding)
    if kind == "ttg.padded_shared" and r is not None and r not in (len(t.shape), len(t.shape) - 1):
        raise LayoutError(f"{where}: #ttg.padded_shared of rank {r} on a memdesc of rank {len(t.shape)}: "
                          "the rank must be the type's or one less")
    block_m = t.encoding.params.get("blockM")
    if kind == "ttng.tensor_memory_encoding" and isinstance(block_m, int) and len(t.shape) >= 2 \
            and t.shape[-2] < block_m:
        raise LayoutError(f"{where}: a tensor-memory view of {t.shape[-2]} rows is smaller than "
                          f"blockM = {block_m}; Triton refuses it too")


def _type_to_linear(t: TensorType, shape: Sequence[int] | None, kinds: KindTable = KINDS) -> LinearLayout:
    where = f"line {t.pos[0]}, col {t.pos[1]}"
    tshape = _type_layout_shape(t)
    if shape is not None and tuple(shape) != tshape:
        raise LayoutError(f"{where}: shape mismatch: the type says {list(tshape)} but "
                          f"shape={list(shape)}")
    if not isinstance(t.encoding, Attr):
        raise LayoutError(f"{where}: the type has no layout encoding")
    kind = lookup_kind(t.encoding, kinds)
    want = DISTRIBUTED if t.kind == "tensor" else SHARED
    # Triton's toLinearLayout(tensor type) takes any layout: a tensor<> may carry a shared one
    if kind.memory != want and not (t.kind == "tensor" and kind.memory == SHARED):
        what = {"tensor": "tensor<>", "tensordesc": "!tt.tensordesc<>"}.get(t.kind, "!ttg.memdesc<>")
        raise attr_error(t.encoding, None, f"a {what} type needs a {want} layout, not #{t.encoding.name}")
    if t.kind == "memdesc":
        _memdesc_checked(t, where)
    if re.fullmatch(r"!tt\.ptr<.*,\s*[0-9]+\s*>", t.elem):
        raise LayoutError(f"{where}: element type {t.elem}: Triton 3.9 reads no address space in "
                          "!tt.ptr<...> (its parser expects a string there)")
    full = attr_to_layout(t.encoding, memdesc_buffers(t)[0], kinds)
    if t.kind == "memdesc" and t.alloc_shape and t.encoding.name.endswith("tensor_memory_encoding") \
            and tuple(t.shape) != tshape:
        try:
            return triton_memory.tensor_memory_view(full, t.shape)
        except LayoutError as e:
            raise LayoutError(f"{where}: {e}") from None
    return full
