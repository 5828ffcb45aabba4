"""The CuTe DSL's kept MLIR (``CUTE_DSL_KEEP=ir``: the module after canonicalize+cse), read as the
plan of a kernel: its ops, the SSA values' types, and the CuTe types that say where data lives.

Grammar (the subset the DSL prints, one op per line)::

    alias   := '!' name '=' type
    op      := [results '='] op-name {word} ['(' operands ')'] [attr-dict] [':' signature] [loc]
    signature := type | '(' [type {',' type}] ')' '->' (type | '(' types ')')
    type    := '!' name ['<' arg {',' arg} '>']          (an alias name is looked up)
    arg     := type | string | word ['=' value] | '<' ... '>' | '(' ... ')'

The types read into objects (everything else stays :class:`CuteType`, name and raw arguments):

* ``!cute.memref<f16, smem, align<1024>, S<3,4,3>, "((8,16),(64,1),(1,7)):((64,512),(1,0),(0,8192))">``:
  :class:`Memref` (element type, memory, alignment, swizzle, layout text). Units (the DSL's
  ``make_smem_layout_atom`` composes the byte pattern ``Swizzle<B,4,3>`` with an element layout,
  ``cutlass/utils/hopper_helpers.py``): the layout counts elements, the swizzle acts on byte
  addresses; :meth:`Memref.cute` returns the ``ComposedLayout`` read so
  (:func:`verilayout.frontends.cute_text.parse_cute` with ``elem_bits``);
* ``!cute.tiled_mma<!cute_nvgpu.sm90.mma<64x128x16, ab_major = (k, k), elem_type = (f16, f16, f32),
  frag_kind = ss>, atom_layout_MNK = <"(2,1,1):(1,0,0)">, ...>``: :class:`TiledMma`;
* ``!cute_nvgpu.atom.non_exec_tiled_tma_load<sm_90, f16, copy_bits = 131072, tma_gbasis =
  <"(64,128):(1@1,1@0)">, tma_format = F16_RN>``: :class:`TmaAtom`;
* ``!cute_nvgpu.smem_desc_view<!cute_nvgpu.smem_desc, "(1,2,4,(1,7)):(0,512,2,(0,1024))">``:
  :class:`DescView` (the descriptors' start offsets per (MN block, K-block, stage), 16-byte units).

>>> m = parse_cute_mlir('!m = !cute.memref<f16, smem, align<1024>, S<3,4,3>, "(8,64):(64,1)">\\n'
...                     '%v = cute.make_view(%p, %l) : !m loc(#loc3)\\n')
>>> t = m.type_of("%v"); t.space, t.swizzle, t.layout, str(t.cute())
('smem', (3, 4, 3), '(8,64):(64,1)', 'Sw<3,4,3> o smem_ptr[16b](unset) o (8,64):(64,1)')
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from math import gcd
from typing import Any

from verilayout.core.cute.int_tuple import flatten, product
from verilayout.core.cute.layout import AnyLayout
from verilayout.dtypes import mlir_bits
from verilayout.errors import LayoutError
from verilayout.frontends.cute_text import parse_cute, swizzle_span

__all__ = ["CuteType", "Memref", "TiledMma", "TmaAtom", "DescView", "CoordTensor", "TmaBox", "Op", "CuteModule", "parse_cute_mlir",
           "parse_type", "split_top", "dsl_tensor_memref", "from_dsl", "TiledCopy", "tiled_copy", "mma_permutation"]

_OPEN = {"(": ")", "[": "]", "{": "}", "<": ">"}
_CLOSE = {v: k for k, v in _OPEN.items()}
#: How deeply brackets may nest in one line (real types nest a few levels).
MAX_DEPTH = 64


def _scan(text: str, stop: str, start: int = 0, line: int = 1) -> int:
    """The index of the first ``stop`` character of ``text`` at bracket depth 0 (outside strings;
    ``->`` is no bracket), or ``len(text)``. Unbalanced brackets are a LayoutError. One regular
    expression (:func:`_marks`) jumps from one character that matters to the next.

    >>> _scan('f(a, b), c', ","), _scan('x -> (y, z)', ","), _scan('"a,b", c', ",")
    (7, 11, 5)
    """
    depth: list[str] = []
    find = _marks(stop).search
    n = len(text)
    m = find(text, start)
    while m is not None:
        i = m.start()
        ch = text[i]
        if ch == '"':
            j = text.find('"', i + 1)
            while j > 0 and text[j - 1] == "\\":
                j = text.find('"', j + 1)
            if j < 0:
                raise LayoutError(f"line {line}, col {i + 1}: unterminated string")
            m = find(text, j + 1)
            continue
        if not depth and ch in stop:
            return i
        if m.end() - i == 2:                # "->"
            m = find(text, i + 2)
            continue
        if ch in _OPEN:
            depth.append(_OPEN[ch])
            if len(depth) > MAX_DEPTH:
                raise LayoutError(f"line {line}, col {i + 1}: brackets nested deeper than {MAX_DEPTH}")
        elif ch in _CLOSE:
            if not depth or depth[-1] != ch:
                raise LayoutError(f"line {line}, col {i + 1}: unbalanced {ch!r}")
            depth.pop()
        m = find(text, i + 1)
    if depth:
        raise LayoutError(f"line {line}: {len(depth)} bracket(s) not closed (expected {depth[-1]!r})")
    return n


@functools.lru_cache(maxsize=64)
def _marks(stop: str) -> re.Pattern:
    """The characters :func:`_scan` acts on: a quote, ``->``, a bracket, or one of ``stop``."""
    chars = "".join(sorted(set("()[]{}<>") | set(stop) - {"-"}))
    return re.compile('"|->' + ("|-" if "-" in stop else "") + "|[" + re.escape(chars) + "]")


def split_top(text: str, sep: str = ",", line: int = 1) -> list[str]:
    """``text`` cut at each ``sep`` outside brackets and strings, each part stripped.

    >>> split_top('a<1, 2>, "x,y", (3, 4)')
    ['a<1, 2>', '"x,y"', '(3, 4)']
    """
    parts, i = [], 0
    while True:
        j = _scan(text, sep, i, line)
        parts.append(text[i:j].strip())
        if j >= len(text):
            return [p for p in parts if p] if len(parts) > 1 or parts[0] else []
        i = j + 1


@dataclass(frozen=True)
class CuteType:
    """A type ``!name<args>``: its dialect name and top-level arguments (raw text each)."""

    name: str
    args: tuple[str, ...] = ()
    text: str = ""

    def keyed(self) -> dict[str, str]:
        """The ``key = value`` arguments."""
        out = {}
        for a in self.args:
            k, eq, v = a.partition("=")
            if eq and k.strip().isidentifier():
                out[k.strip()] = v.strip()
        return out


def _unquote(text: str, what: str) -> str:
    t = text.strip()
    if len(t) < 2 or t[0] != '"' or t[-1] != '"':
        raise LayoutError(f"{what}: expected a quoted layout, got {text!r}")
    return t[1:-1]


def _bracketed(text: str, what: str) -> str:
    """The text of ``<"...">`` (an attribute holding a quoted layout)."""
    t = text.strip()
    if not (t.startswith("<") and t.endswith(">")):
        raise LayoutError(f"{what}: expected <\"...\">, got {text!r}")
    return _unquote(t[1:-1], what)


def _swizzle(text: str) -> tuple[int, int, int] | None:
    """``S<B,M,S>`` -> (B, M, S); None for anything else."""
    t = text.strip()
    if not (t.startswith("S<") and t.endswith(">")):
        return None
    parts = [p.strip() for p in t[2:-1].split(",")]
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise LayoutError(f"swizzle {text!r}: expected S<B,M,S> with three integers")
    b, m, s = (int(p) for p in parts)
    return (b, m, s)


@dataclass(frozen=True)
class Memref:
    """``!cute.memref<elem, space, [align<N>,] [S<B,M,S>,] "layout">`` (no ``align<N>``: the element's own
    alignment, as the DSL prints a partitioned view whose alignment it does not state)."""

    elem: str
    space: str
    align: int
    swizzle: tuple[int, int, int] | None
    layout: str
    text: str = ""

    @property
    def elem_bits(self) -> int:
        bits = mlir_bits(self.elem)
        if bits is None:
            raise LayoutError(f"{self.text or 'memref'}: unknown element type {self.elem!r}")
        return bits

    def cute(self) -> AnyLayout:
        """The layout as a CuTe object: ``S<B,M,S> o 0 o layout`` with the swizzle on byte
        addresses of ``elem_bits`` elements (see the module docstring), or the plain layout."""
        if self.swizzle is None:
            return parse_cute(self.layout)
        b, m, s = self.swizzle
        return parse_cute(f"S<{b},{m},{s}> o 0 o {self.layout}", elem_bits=self.elem_bits)


@dataclass(frozen=True)
class TiledMma:
    """``!cute.tiled_mma<!cute_nvgpu.sm90.mma<MxNxK, ab_major = (a, b), elem_type = (A, B, C),
    frag_kind = ss|rs>, atom_layout_MNK = <"...">, ...>`` (also an MMA atom alone)."""

    arch: str
    shape: tuple[int, int, int]
    majors: tuple[str, str]
    elem_types: tuple[str, ...]
    frag_kind: str
    atom_layout: str
    text: str = ""

    @property
    def num_cta(self) -> int:
        """CTAs one MMA spans (``num_cta = 2``: tcgen05's CTA pair, ``cta_group::2``), 1 if unstated.

        >>> parse_type('!cute_nvgpu.sm100.mma<256x128x16, num_cta = 2>').keyed()["num_cta"]
        '2'
        """
        k = self.text.find("num_cta =")
        digits = self.text[k + 9:].lstrip()[:1] if k >= 0 else ""
        return int(digits) if digits.isdigit() else 1

    @property
    def atoms(self) -> tuple[int, int, int]:
        """How many atoms (warpgroups on sm_90) tile M, N and K (the atom layout's shape)."""
        lay = parse_cute(self.atom_layout)
        shape = lay.shape if isinstance(lay.shape, tuple) else (lay.shape,)
        ints = tuple(int(x) if isinstance(x, int) else _size(x) for x in shape)
        return (ints + (1, 1, 1))[:3]


def _size(x: Any) -> int:
    return int(product(x))


@dataclass(frozen=True)
class TmaAtom:
    """``!cute_nvgpu.atom.non_exec_tiled_tma_load<sm_90, f16, copy_bits = N, tma_gbasis = <"...">, ...>``
    (and the executable ``!cute_nvgpu.atom.tma_load<...>``): what one box copy moves."""

    kind: str
    elem: str | None
    copy_bits: int | None
    gbasis: str | None
    params: tuple[tuple[str, str], ...] = ()
    text: str = ""


@dataclass(frozen=True)
class DescView:
    """``!cute_nvgpu.smem_desc_view<!cute_nvgpu.smem_desc, "layout">``: per (MN block, K-block,
    stage) the offset of a wgmma descriptor's start address, in 16-byte units."""

    layout: str
    text: str = ""


@dataclass(frozen=True)
class TmaBox:
    """What a ``cute_nvgpu.atom.tma_partition``'s coordinate tensor states about its copies, per TMA
    coordinate (dim 0 innermost, as ``cp.async.bulk.tensor`` lists them): ``box[d]`` the box's
    extent (its first mode, strides ``1@d``), ``grid[d]`` the step every copy's coordinate is a
    multiple of (the gcd of the origin's divisibility and every other mode's stride along ``d``;
    0 where every one is 0), ``boxes`` the boxes one partition step holds (the first mode's rest)."""

    rank: int
    box: tuple[int, ...]
    grid: tuple[int, ...]
    boxes: int

    @property
    def elements(self) -> int:
        """Elements one box copies."""
        return _size(self.box)


@dataclass(frozen=True)
class CoordTensor:
    """``!cute.coord_tensor<"(origin)", "layout">``: TMA coordinates, the layout's strides scaled
    bases ``k@d`` (``d`` a TMA coordinate); an origin entry is ``0``, ``?`` or ``?{div=N}``."""

    origin: tuple[str, ...]
    layout: str
    text: str = ""

    def divisors(self) -> tuple[int, ...]:
        """Per origin entry, what it is known to be a multiple of: 0 for ``0`` (or a constant's
        value), ``N`` for ``?{div=N}``, 1 for ``?``.

        >>> CoordTensor(("0", "?{div=128}", "?"), "1:0").divisors()
        (0, 128, 1)
        """
        out = []
        for o in self.origin:
            o = o.strip()
            if o.lstrip("-").isdigit():
                out.append(abs(int(o)))
            elif o.startswith("?{div=") and o.endswith("}") and o[6:-1].isdigit():
                out.append(int(o[6:-1]))
            else:
                out.append(1)
        return tuple(out)

    def box(self) -> TmaBox:
        """The :class:`TmaBox` of a TMA partition's coordinate tensor ``((box, boxes), rest...)``;
        a LayoutError where the layout is not of that form.

        >>> CoordTensor(("0", "?{div=128}"), "(((64,128),1),8):(((1@0,1@1),0),64@0)").box()
        TmaBox(rank=2, box=(64, 128), grid=(64, 128), boxes=1)
        """
        lay = parse_cute(self.layout)
        shape, stride = lay.shape, lay.stride
        if not (isinstance(shape, tuple) and isinstance(shape[0], tuple) and isinstance(shape[0][0], tuple)):
            raise LayoutError(f"{self.text or self.layout}: expected a TMA partition ((box, boxes), ...)")
        rank = len(self.origin)
        box = [1] * rank
        for ext, st in zip(flatten(shape[0][0]), flatten(stride[0][0])):
            dims = _basis_dims(st, rank, self.layout)
            if len(dims) != 1 or dims[next(iter(dims))] != 1:
                raise LayoutError(f"{self.layout}: a box stride {st} is not one unit basis 1@d")
            box[next(iter(dims))] *= int(ext)
        grid = list(self.divisors())
        for ext, st in zip(flatten(shape[0][1:] + tuple(shape[1:])), flatten(stride[0][1:] + tuple(stride[1:]))):
            if int(ext) > 1:
                for d, k in _basis_dims(st, rank, self.layout).items():
                    grid[d] = gcd(grid[d], k)
        return TmaBox(rank, tuple(box), tuple(grid), _size(shape[0][1:]))


    def tile_leaves(self) -> list[tuple[int, dict[int, int]]]:
        """The leaves of the first mode (a partition's input: the tile), colexicographic, each as
        (extent, ``{TMA coordinate: step}``).

        >>> CoordTensor(("0", "0"), "((128,64),8):((1@1,1@0),64@0)").tile_leaves()
        [(128, {1: 1}), (64, {0: 1})]
        """
        lay = parse_cute(self.layout)
        shape = lay.shape[0] if isinstance(lay.shape, tuple) else lay.shape
        stride = lay.stride[0] if isinstance(lay.stride, tuple) else lay.stride
        return [(int(e), _basis_dims(st, len(self.origin), self.layout))
                for e, st in zip(flatten(shape), flatten(stride))]

    def box_origins(self) -> list[tuple[int, ...]]:
        """For a partition's result ``((box, boxes), ...)``: each box's origin in TMA coordinates, in
        the order the boxes mode enumerates them (colexicographic).

        >>> CoordTensor(("0", "0"), "(((64,64),2),8):(((1@0,1@1),64@0),64@1)").box_origins()
        [(0, 0), (64, 0)]
        """
        lay = parse_cute(self.layout)
        rank = len(self.origin)
        leaves = [(int(e), _basis_dims(st, rank, self.layout))
                  for e, st in zip(flatten(lay.shape[0][1:]), flatten(lay.stride[0][1:]))]
        out = []
        for j in range(_size(lay.shape[0][1:])):
            o, rest = [0] * rank, j
            for ext, dims in leaves:
                c, rest = rest % ext, rest // ext
                for d, k in dims.items():
                    o[d] += c * k
            out.append(tuple(o))
        return out


def _basis_dims(stride: Any, rank: int, what: str) -> dict[int, int]:
    """``{d: k}`` of a scaled-basis stride ``k@d + ...`` (``0``: none)."""
    if isinstance(stride, int):
        if stride:
            raise LayoutError(f"{what}: stride {stride} is not a scaled basis k@d")
        return {}
    out = {}
    for sym in stride.free_symbols:
        name = str(sym)
        if not (name.startswith("_at") and name[3:].isdigit() and int(name[3:]) < rank):
            raise LayoutError(f"{what}: stride {stride}: not a basis of the {rank} TMA coordinates")
        k = stride.coeff(sym)
        if not k.is_Integer:
            raise LayoutError(f"{what}: stride {stride} is not linear in the bases")
        out[int(name[3:])] = abs(int(k))
    return out


def _tiled_mma(t: CuteType) -> TiledMma:
    atom = t if t.name.startswith("cute_nvgpu.") else parse_type(t.args[0]) if t.args else t
    if not atom.args:
        raise LayoutError(f"{t.text}: an MMA atom without a shape")
    dims = atom.args[0].split("x")
    if len(dims) != 3 or not all(d.isdigit() for d in dims):
        raise LayoutError(f"{atom.text}: expected an MxNxK shape, got {atom.args[0]!r}")
    kw = atom.keyed()
    majors = tuple(x.strip() for x in kw.get("ab_major", "(k, k)").strip("()").split(","))
    elems = tuple(x.strip() for x in kw.get("elem_type", "()").strip("()").split(","))
    outer = t.keyed() if t is not atom else {}
    atom_layout = _bracketed(outer["atom_layout_MNK"], t.text) if "atom_layout_MNK" in outer else "(1,1,1):(0,0,0)"
    arch = atom.name.split(".")[1] if atom.name.count(".") >= 2 else "?"
    return TiledMma(arch, (int(dims[0]), int(dims[1]), int(dims[2])), (majors + ("k", "k"))[:2], elems,
                    kw.get("frag_kind", "ss"), atom_layout, t.text)


def _tma(t: CuteType) -> TmaAtom:
    kw = t.keyed()
    plain = [a for a in t.args if "=" not in a]
    elem = next((a for a in plain if mlir_bits(a) is not None), None)
    bits = kw.get("copy_bits")
    gb = _bracketed(kw["tma_gbasis"].split(">")[0] + ">", t.text) if "tma_gbasis" in kw else None
    return TmaAtom(t.name.rsplit(".", 1)[-1], elem, int(bits) if bits and bits.isdigit() else None, gb,
                   tuple(sorted(kw.items())), t.text)


def interpret(t: CuteType) -> Any:
    """The object of a parsed type (see the module docstring), else ``t`` itself."""
    if t.name == "cute.memref":
        if len(t.args) < 3:
            raise LayoutError(f"{t.text}: a memref has element, memory, [alignment,] and layout")
        elem, space, align = t.args[0], t.args[1], t.args[2]
        stated = align.startswith("align<") and align.endswith(">") and align[6:-1].isdigit()
        rest = t.args[3 if stated else 2:-1]
        if len(rest) > 1 or (rest and _swizzle(rest[0]) is None) or len(t.args) < (4 if stated else 3):
            raise LayoutError(f"{t.text}: expected align<N>, got {align!r}")
        bits = mlir_bits(elem)                      # unstated: the element's own alignment
        at = int(align[6:-1]) if stated else max(1, (bits or 8) // 8)
        return Memref(elem, space, at, _swizzle(rest[0]) if rest else None, _unquote(t.args[-1], t.text), t.text)
    if t.name == "cute.tiled_mma" or (t.name.startswith("cute_nvgpu.sm") and t.name.endswith(".mma")):
        return _tiled_mma(t)
    if t.name.startswith("cute_nvgpu.atom.") and "tma" in t.name:
        return _tma(t)
    if t.name == "cute.coord_tensor" and len(t.args) == 2:
        origin = _unquote(t.args[0], t.text).strip()
        inner = origin[1:-1] if origin.startswith("(") and origin.endswith(")") else origin
        return CoordTensor(tuple(split_top(inner)), _unquote(t.args[1], t.text), t.text)
    if t.name == "cute_nvgpu.smem_desc_view" and t.args:
        return DescView(_unquote(t.args[-1], t.text), t.text)
    return t


def parse_type(text: str, aliases: dict[str, CuteType] | None = None, line: int = 1) -> CuteType:
    """One type ``!name<args>`` (an alias is looked up in ``aliases``).

    >>> parse_type('!cute.coord<"(_,?)">').args
    ('"(_,?)"',)
    """
    t = text.strip()
    if not t.startswith("!"):
        return CuteType(t, (), t)
    lt = t.find("<")
    name = t[1:lt] if lt > 0 else t[1:]
    if lt < 0:
        if aliases is not None and name in aliases:
            return aliases[name]
        return CuteType(name, (), t)
    if not t.endswith(">"):
        raise LayoutError(f"line {line}: type {t[:60]!r}: expected '>' at its end")
    return CuteType(name, tuple(split_top(t[lt + 1:-1], ",", line)), t)


@dataclass(frozen=True)
class Op:
    """One op line: results, name, the bare words after the name (``A`` in
    ``cute.tiled.mma.partition A (...)``), operands (SSA names), operand and result types."""

    line: int
    name: str
    results: tuple[str, ...]
    words: tuple[str, ...]
    operands: tuple[str, ...]
    operand_types: tuple[CuteType, ...]
    result_types: tuple[CuteType, ...]
    attrs: str = ""

    def attr_int(self, name: str) -> int | None:
        """The integer attribute ``name = N`` of the op's ``{...}`` (``smem.partition_id = 1 : i32``), or None.

        >>> Op(1, "cute.memref.alloca", (), (), (), (), (), "{smem.partition_id = 1 : i32}").attr_int("smem.partition_id")
        1
        """
        k = self.attrs.find(name + " =")
        if k < 0:
            return None
        rest = self.attrs[k + len(name) + 2:].lstrip()
        digits = rest[:len(rest) - len(rest.lstrip("-0123456789"))]
        return int(digits) if digits.lstrip("-").isdigit() else None


    def layout_attr(self, name: str) -> str | None:
        """The layout text of the attribute ``name = #cute.layout<"...">`` (a ``cute.copy``'s
        ``multicast_layout``), or None.

        >>> Op(1, "cute.copy", (), (), (), (), (), '{multicast_layout = #cute.layout<"(2,1):(0,1)">}').layout_attr(
        ...     "multicast_layout")
        '(2,1):(0,1)'
        """
        key = f'{name} = #cute.layout<"'
        k = self.attrs.find(key)
        if k < 0:
            return None
        end = self.attrs.find('"', k + len(key))
        return self.attrs[k + len(key):end] if end > 0 else None

    def has_word_attr(self, name: str) -> bool:
        """Whether the op's ``{...}`` lists the unit attribute ``name`` (``use_2cta``).

        >>> Op(1, "cute.copy", (), (), (), (), (), "{from_block_api, use_2cta}").has_word_attr("use_2cta")
        True
        """
        body = self.attrs.strip().lstrip("{").rstrip("}")
        return any(part.strip() == name for part in split_top(body, ",", self.line)) if body else False


def _ssa_names(text: str) -> tuple[str, ...]:
    """The ``%name`` tokens of ``text`` (outside strings), in order."""
    out, i = [], 0
    while i < len(text):
        if text[i] == '"':
            j = text.find('"', i + 1)
            i = len(text) if j < 0 else j + 1
            continue
        if text[i] == "%":
            j = i + 1
            while j < len(text) and (text[j].isalnum() or text[j] in "_.#"):
                j += 1
            out.append(text[i:j])
            i = j
            continue
        i += 1
    return tuple(out)


def _types(text: str, aliases: dict, line: int) -> tuple[CuteType, ...]:
    t = text.strip()
    if t.startswith("(") and t.endswith(")") and _scan(t, ")", 1, line) == len(t) - 1:
        t = t[1:-1]
    return tuple(parse_type(p, aliases, line) for p in split_top(t, ",", line))


def _balanced(text: str) -> bool:
    try:
        return _scan(text, "") == len(text)
    except LayoutError:
        return False


def _signature(text: str, aliases: dict, line: int) -> tuple[tuple, tuple]:
    """(operand types, result types) of the text after an op's top-level ``:`` (``(A, B) -> R``,
    ``A to R`` of a cast, or the result types alone)."""
    k = text.find(" to ")
    while k >= 0:
        if _balanced(text[:k]):
            return _types(text[:k], aliases, line), _types(text[k + 4:], aliases, line)
        k = text.find(" to ", k + 1)
    j = text.find("->")
    if j >= 0 and _scan(text, "", 0, line) == len(text):
        head = text[:j]
        if _scan(head, "", 0, line) == len(head):
            return _types(head, aliases, line), _types(text[j + 2:], aliases, line)
    return (), _types(text, aliases, line)


def _strip_loc(text: str) -> str:
    k = text.rfind(" loc(")
    return text[:k] if k >= 0 and text.rstrip().endswith(")") else text


def _op(text: str, line: int, aliases: dict) -> Op | None:
    body = _strip_loc(text.strip())
    if body.endswith("{"):                 # an op that opens a region: its header
        body = body[:-1].rstrip()
    results: tuple[str, ...] = ()
    eq = _scan(body, "=", 0, line)
    if body.startswith("%") and eq < len(body):
        results = tuple(r.strip().split(":")[0] for r in body[:eq].split(","))
        body = body[eq + 1:].strip()
    k = 0
    while k < len(body) and (body[k].isalnum() or body[k] in "._"):
        k += 1
    name = body[:k]
    if not name or not name[0].isalpha() or "." not in name:
        return None
    rest = body[k:]
    colon = _scan(rest, ":", 0, line)
    head, sig = rest[:colon], rest[colon + 1:] if colon < len(rest) else ""
    words = []
    for w in head.split():
        if not w.isidentifier():
            break
        words.append(w)
    brace = _scan(head, "{", 0, line)
    attrs = head[brace:] if brace < len(head) else ""
    operands = _ssa_names(head[:brace])
    ins, outs = _signature(sig, aliases, line) if sig.strip() else ((), ())
    return Op(line, name, results, tuple(words), operands, ins, outs, attrs)


@dataclass(frozen=True)
class CuteModule:
    """A kept CuTe-DSL MLIR module: its ops (one per line, nested regions flattened in text
    order), type aliases and the type of each SSA value defined or used with a type."""

    ops: tuple[Op, ...]
    aliases: dict = field(default_factory=dict, compare=False)
    types: dict = field(default_factory=dict, compare=False)
    #: per line, the text of each host-side op :func:`host_text` keeps (``arith.constant``, ``cuda.launch*``,
    #: ``cuda.kernel``, ``make_non_exec_tiled_tma_*``): their literals and keywords, which :class:`Op` does not keep
    host: dict = field(default_factory=dict, compare=False)

    def type_of(self, value: str) -> Any:
        """The interpreted type of SSA value ``value`` (a :class:`Memref`, :class:`TiledMma`, ...),
        or None when no line gives it one."""
        t = self.types.get(value)
        return None if t is None else interpret(t)

    def cluster_dim(self) -> tuple[int, int, int] | None:
        """The thread-block cluster the kernel is launched with: the ``cuda.kernel``'s
        ``cutlass_launch_facts`` entry ``exact_cluster_dim = array<i64: x, y, z>``; None where the
        MLIR states none.

        >>> parse_cute_mlir('cuda.kernel @k() attributes {cutlass_launch_facts = {exact_cluster_dim = '
        ...     'array<i64: 2, 1, 1>}} {\\n%0 = cute.static : !cute.int_tuple<"1">').cluster_dim()
        (2, 1, 1)
        """
        key = "exact_cluster_dim = array<i64:"
        for o in self.ops:
            k = o.attrs.find(key) if o.name == "cuda.kernel" else -1
            if k >= 0:
                dims = o.attrs[k + len(key):].split(">")[0].split(",")
                if len(dims) == 3 and all(d.strip().isdigit() and int(d) > 0 for d in dims):
                    return tuple(int(d) for d in dims)
        return None

    def producer(self, value: str, before: int | None = None) -> Op | None:
        """The op that defines ``value``: the last one above line ``before`` (the DSL reuses a name
        such as ``%slice_48`` in another function or region further down), else the first."""
        defs = [o for o in self.ops if value in o.results]
        above = [o for o in defs if before is not None and o.line < before]
        return above[-1] if above else (defs[0] if defs else None)

    def origin(self, value: str, depth: int = 64, before: int | None = None) -> tuple[Op, int] | None:
        """Where a tensor or pointer value points: the ``cute.memref.alloca`` it views and its byte
        offset from it, followed through ``cute.make_view`` (the iterator), ``cute.get_iter``,
        ``cute.recast_iter``, ``cute.group_modes``, ``cute.composition`` (a tensor composed with a layout keeps
        its iterator) and ``cute.add_offset`` by a constant (``!cute.int_tuple<"N">``, in
        elements of the pointer's type); None where the chain leaves those ops or is dynamic.

        >>> m = parse_cute_mlir('%s = cute.memref.alloca() : !cute.memref<i8, smem, align<1024>, "4096:1">\\n'
        ...     '%i = cute.get_iter(%s) : !cute.memref<i8, smem, align<1024>, "4096:1">\\n'
        ...     '%t = cute.make_int_tuple() : () -> !cute.int_tuple<"1024">\\n'
        ...     '%p = cute.add_offset(%i, %t) : (!cute.ptr<i8, smem, align<1024>>, !cute.int_tuple<"1024">) -> !cute.ptr<i8, smem>\\n')
        >>> op, off = m.origin("%p"); op.name, off
        ('cute.memref.alloca', 1024)
        """
        off = 0
        for _ in range(depth):
            op = self.producer(value, before)
            if op is None:
                return None
            before = op.line
            if op.name == "cute.memref.alloca":
                return op, off
            if op.name in ("cute.make_view", "cute.get_iter", "cute.recast_iter", "cute.group_modes",
                           "cute.composition") and op.operands:
                value = op.operands[0]
                continue
            if op.name == "cute.add_offset" and len(op.operands) == 2 and len(op.operand_types) == 2:
                ptr, amount = op.operand_types
                n = amount.args[0].strip('"') if amount.name == "cute.int_tuple" and amount.args else ""
                bits = mlir_bits(ptr.args[0]) if ptr.name == "cute.ptr" and ptr.args else None
                if not n.lstrip("-").isdigit() or bits is None:
                    return None
                off += int(n) * bits // 8
                value = op.operands[0]
                continue
            return None
        return None


def _alias(text: str, line: int, aliases: dict) -> None:
    name, _eq, value = text.partition("=")
    aliases[name.strip()[1:]] = parse_type(value.strip(), aliases, line)


def parse_cute_mlir(text: str | bytes) -> CuteModule:
    """Read a kept CuTe-DSL MLIR module (see the module docstring): aliases, ops and value types.
    Text that is not such a module (no ``cute`` op) is a LayoutError.

    >>> m = parse_cute_mlir('%a = cute.get_iter(%s) : !cute.memref<i8, smem, align<1024>, "64:1">\\n')
    >>> m.ops[0].name, m.type_of("%a").layout
    ('cute.get_iter', '64:1')
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    return _parse(text)


@functools.lru_cache(maxsize=32)
def _parse(text: str) -> CuteModule:
    """:func:`parse_cute_mlir` of a text, once per process and content (the module is read only: an audit
    of a mutated PTX against the same MLIR, or the several checks of one kernel, share it)."""
    aliases: dict[str, CuteType] = {}
    ops, types, host = [], {}, {}
    for n, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if not s or s.startswith(("//", "#", "}", "^")):
            continue
        if s.startswith("!") and "=" in s:
            _alias(s, n, aliases)
            continue
        try:
            op = _op(s, n, aliases)
        except LayoutError:
            if "cute" in s.split("(")[0]:          # a CuTe op this reader cannot split: say where
                raise
            continue                              # another dialect's syntax: not the plan
        if op is None:
            continue
        ops.append(op)
        if host_text(op.name):
            host[n] = _strip_loc(s)
        if len(op.operand_types) == len(op.operands):
            for v, t in zip(op.operands, op.operand_types):
                types.setdefault(v, t)
        if len(op.result_types) == len(op.results):
            for v, t in zip(op.results, op.result_types):
                types.setdefault(v, t)
        _block_args(raw, n, aliases, types)
    if not any(o.name.startswith(("cute.", "cute_nvgpu.")) for o in ops):
        raise LayoutError("no CuTe op (cute.* / cute_nvgpu.*) in the text: not a kept CuTe-DSL MLIR module")
    return CuteModule(tuple(ops), aliases, types, host)


#: the host-side ops whose text the module keeps (:attr:`CuteModule.host`)
HOST_OPS = ("arith.constant", "cuda.launch_cfg.", "cuda.launch_ex", "cuda.kernel", "cute.kernel_smem_size",
            "cute_nvgpu.atom.make_non_exec_tiled_tma_")


def host_text(name: str) -> bool:
    """Whether an op named ``name`` is one whose line the module keeps for the host-side reader.

    >>> host_text("arith.constant"), host_text("cute.copy")
    (True, False)
    """
    return name.startswith(HOST_OPS)


def _block_args(raw: str, line: int, aliases: dict, types: dict) -> None:
    """The typed arguments of a function or block header on this line (``%arg0: !type``)."""
    s = raw.strip()
    if not (s.startswith(("cuda.kernel", "func.func", "cuda.func", "gpu.func", "llvm.func")) or s.startswith("^")):
        return
    lp = s.find("(")
    if lp < 0:
        return
    rp = _scan(s, ")", lp + 1, line)
    for part in split_top(s[lp + 1:rp], ",", line):
        name, colon, t = part.partition(":")
        if colon and name.strip().startswith("%"):
            ty = t.strip()
            brace = _scan(ty, "{", 0, line)
            types.setdefault(name.strip(), parse_type(_strip_loc(ty[:brace]).strip(), aliases, line))


def dsl_tensor_memref(text: str) -> Memref:
    """The memref a CuTe-DSL tensor print stands for: ``tensor<ptr<elem, space, align<N>[, S<B,M,S>]>
    o layout>`` states the facts of ``!cute.memref<elem, space, align<N>[, S<B,M,S>], "layout">``.

    >>> dsl_tensor_memref("tensor<ptr<f16, smem, align<1024>, S<3,4,3>> o (8,64):(64,1)>").swizzle
    (3, 4, 3)
    """
    body = text[len("tensor<"):-1] if text.startswith("tensor<ptr<") and text.endswith(">") else ""
    end = _scan(body, " ", 0, 1) if body else 0
    if not body[end:].startswith(" o "):
        raise LayoutError(f"{text[:80]!r}: not a CuTe-DSL tensor print (tensor<ptr<...> o layout>)")
    args = tuple(split_top(body[len("ptr<"):end - 1]))
    return interpret(CuteType("cute.memref", (*args, f'"{body[end + 3:]}"'), text))


def from_dsl(obj: object) -> AnyLayout:
    """A CuTe-DSL ``Layout``, ``ComposedLayout`` or ``Tensor`` of a ``@cute.jit`` trace, read from
    the text the DSL prints for it (``str(obj)``; the DSL is never imported here).

    Law: a layout or composed layout gives at every index the offset the DSL's own ``obj(i)``
    gives (the DSL's ``S<B,M,S> o 0 o L`` swizzles the inner layout's offsets, element units); a
    tensor gives its memref's layout (:func:`dsl_tensor_memref`, :meth:`Memref.cute`): a
    shared-memory pointer's swizzle acts on the byte addresses of its elements
    (``cute/pointer_swizzle.hpp``), so its alignment must cover the pattern's span; ``?`` (a
    dynamic value) stays symbolic.

    >>> t = from_dsl("tensor<ptr<f16, smem, align<1024>, S<3,4,3>> o (8,64):(64,1)>")
    >>> t.offset_bytes((1, 0)), from_dsl("S<3,4,3> o 0 o (8,64):(64,1)")((1, 0))
    (144, 64)
    """
    if obj is None or isinstance(obj, (bool, int, float, bytes, tuple, list, dict)):
        raise LayoutError(f"from_dsl needs a CuTe-DSL Layout, ComposedLayout or Tensor (or what the DSL "
                          f"prints for it), got {type(obj).__name__}")
    text = " ".join(str(obj).split())
    if not text.startswith("tensor<"):
        return parse_cute(text, swizzle_units="elements" if " o " in text else None)
    mem = dsl_tensor_memref(text)
    if mem.swizzle is None:
        return mem.cute()
    if mem.space != "smem" or mlir_bits(mem.elem) is None:
        raise LayoutError(f"{text[:80]!r}: a swizzled pointer to {mem.space} memory of an element type "
                          "of unknown width (expected smem and a type such as f16)")
    out = mem.cute()
    span = swizzle_span(out.swizzle)
    if mem.align % span:
        raise LayoutError(f"{text[:80]!r}: the swizzle reads address bits below the pointer's alignment "
                          f"({mem.align} bytes, pattern span {span}); give the base address "
                          "(parse_cute_tensor of CuTe's print with the pointer's value)")
    return out


# ----- tiled copies and an MMA's permutation (the ldmatrix check's plan) ---------------------------------------

@dataclass(frozen=True)
class TiledCopy:
    """``!cute.tiled_copy<!cute_nvgpu.atom.NAME<args>, layout_copy_tv = <"TV">, tiler_mn = <"[A;B]">>``: the
    atom's name (``cute_nvgpu.atom.ldsm``) and top-level arguments, the thread-value layout text and the
    tiler's modes (``("32:1", "16:1")``)."""

    atom: str
    atom_args: tuple[str, ...]
    tv: str
    tiler: tuple[str, ...]


def tiled_copy(t: CuteType) -> TiledCopy:
    """The :class:`TiledCopy` of a parsed ``!cute.tiled_copy`` type; a one-line ``LayoutError`` for another.

    >>> c = tiled_copy(parse_type('!cute.tiled_copy<!cute_nvgpu.atom.ldsm<val_type = f16, num_matrices = 4, t>, '
    ...                           'layout_copy_tv = <"(32,8):(8,1)">, tiler_mn = <"[32:1;8:1]">>'))
    >>> c.atom, c.atom_args[-1], c.tv, c.tiler
    ('cute_nvgpu.atom.ldsm', 't', '(32,8):(8,1)', ('32:1', '8:1'))
    """
    kw = t.keyed()
    if t.name != "cute.tiled_copy" or not t.args or "layout_copy_tv" not in kw or "tiler_mn" not in kw:
        raise LayoutError(f"{t.text}: expected !cute.tiled_copy<atom, layout_copy_tv = ..., tiler_mn = ...>")
    atom = parse_type(t.args[0])
    tiler = _bracketed(kw["tiler_mn"], t.text).strip()
    if not (tiler.startswith("[") and tiler.endswith("]")):
        raise LayoutError(f"{t.text}: expected tiler_mn = <\"[...;...]\">")
    return TiledCopy(atom.name, tuple(a.strip() for a in atom.args), _bracketed(kw["layout_copy_tv"], t.text),
                     tuple(m.strip() for m in tiler[1:-1].split(";")))


def mma_permutation(mma: TiledMma) -> tuple[str, ...]:
    """The modes of a tiled MMA's ``permutation_MNK = <"[M;N;K]">`` (``()`` where it states none).

    >>> mma_permutation(interpret(parse_type('!cute.tiled_mma<!cute_nvgpu.sm80.mma<16x8x16>, '
    ...                                      'permutation_MNK = <"[32:1;32:1;16:1]">>')))
    ('32:1', '32:1', '16:1')
    """
    kw = parse_type(mma.text).keyed() if mma.text else {}
    if "permutation_MNK" not in kw:
        return ()
    text = _bracketed(kw["permutation_MNK"], mma.text).strip()
    return tuple(m.strip() for m in text.strip("[]").split(";"))
