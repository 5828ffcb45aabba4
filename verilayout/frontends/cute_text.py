"""CuTe layouts as text: the reader of CuTe's printed form (``Sw<3,4,3> o smem_ptr[16b](unset) o
((_8,_8),(_64,_1)):((_64,_512),(_1,_0))``), older and pycute spellings, the PTX ISA's notation (9.7.15.5.1.2) and
symbolic entries, producing :mod:`verilayout.core.cute` objects (the CuTe algebra does not read
text; printing is ``core.cute.format_cute``).

Law: ``format_cute(parse_cute(t)) == t`` for text in CuTe's print form, and ``parse_cute`` of
``format_cute(L)`` is ``L``.

>>> from verilayout.core.cute import format_cute
>>> format_cute(parse_cute("(_8,_64):(_64,_1)"))
'(_8,_64):(_64,_1)'
"""
from __future__ import annotations

import re
from typing import Any, NamedTuple

from verilayout.core.cute.int_tuple import (DynamicInt, IntTuple, StaticInt, basis_symbol, congruent, format_tree, is_sym,
                                            is_tuple, normalize_leaf, symbol)
from verilayout.core.cute.layout import UNITS, AnyLayout, ComposedLayout, Layout, require_elem_bits
from verilayout.core.cute.swizzle import Swizzle
from verilayout.core.cute.tv import tv_to_linear
from verilayout.core.linear_layout import LinearLayout
from verilayout.errors import LayoutError

__all__ = ["parse_cute", "parse_cute_tensor", "parse_cute_tv", "looks_like_cute", "CuteTensor"]


_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_INT = re.compile(r"[0-9]+")


#: How deep CuTe tuples may nest (real layouts nest a few levels).
MAX_NESTING = 32

class _Parser:
    def __init__(self, text: str, swizzle_units: str | None, elem_bits: int | None):
        self.t = text
        self.i = 0
        self.swizzle_units = swizzle_units
        self.elem_bits = elem_bits

    def error(self, msg: str, pos: int | None = None) -> LayoutError:
        pos = self.i if pos is None else pos
        if "\n" in self.t:
            line = self.t.count("\n", 0, pos) + 1
            col = pos - (self.t.rfind("\n", 0, pos) + 1) + 1
            return LayoutError(f"line {line}, col {col}: {msg}")
        return LayoutError(f"col {pos + 1}: {msg}")

    def ws(self) -> None:
        while self.i < len(self.t) and self.t[self.i].isspace():
            self.i += 1

    def peek(self, s: str) -> bool:
        return self.t.startswith(s, self.i)

    def at_end(self) -> bool:
        return self.i >= len(self.t)

    def here(self) -> str:
        return repr(self.t[self.i]) if not self.at_end() else "end of text"

    def expect(self, s: str, msg: str) -> None:
        self.ws()
        if not self.peek(s):
            raise self.error(f"{msg}, found {self.here()}")
        self.i += len(s)

    def at_compose(self) -> bool:
        if self.peek("∘"):
            return True
        return self.peek("o") and not (self.i + 1 < len(self.t) and
                                       (self.t[self.i + 1].isalnum() or self.t[self.i + 1] == "_"))

    def compose_op(self) -> None:
        self.ws()
        if not self.at_compose():
            raise self.error(f"expected 'o' (composition), found {self.here()}")
        self.i += 1

    def integer(self, what: str) -> int:
        self.ws()
        start = self.i
        if self.peek("-"):
            self.i += 1
        m = _INT.match(self.t, self.i)
        if not m:
            raise self.error(f"expected an integer for {what}, found {self.here()}", start)
        self.i = m.end()
        return int(self.t[start:self.i])

    # --- grammar
    def top(self) -> AnyLayout:
        return self.tensor()[1]

    def tensor(self) -> tuple[dict | None, AnyLayout]:
        """The text's pointer (None for a layout) and the layout (:func:`parse_cute`)."""
        self.ws()
        if self.at_end():
            raise self.error("empty text: expected a CuTe layout")
        engine = self.engine()
        self.ws()
        if self.peek("Sw<") or self.peek("Swizzle<") or self.peek("SW_") or self.peek("S<"):
            result = self.composed()
        else:
            result = self.layout()
        self.ws()
        if not self.at_end():
            raise self.error(f"unexpected {self.here()} after the layout")
        return engine, (result if engine is None else self.on_engine(engine, result))

    def engine(self) -> dict | None:
        """A tensor's pointer, as CuTe's ``print(tensor)`` writes it before `` o layout``:
        ``smem_ptr[16b](0x400)``, ``gmem_ptr[..]``, ``rmem_ptr[..]``, ``tmem_[32b](0x0020.0010)``,
        ``Sw<3,4,3>_smem_ptr[16b](0x400)`` (a swizzled pointer); None where the text has none."""
        m = _ENGINE.match(self.t, self.i)
        if not m:
            return None
        start = self.i
        sw = None
        if m.group("sw"):
            try:
                sw = Swizzle(int(m.group("b")), int(m.group("m")), int(m.group("s")))
            except LayoutError as e:
                raise self.error(str(e), start) from None
        bits = self.bits(int(m.group("bits")), m.start("bits"))
        addr = m.group("addr").strip()
        base: int | None
        if addr in ("?", "unset", "nil", "(nil)", "0x0", "0"):
            base = None if addr == "?" else 0
        else:
            try:
                base = int(addr.replace(".", ""), 16) if m.group("kind") == "tmem_" else int(addr, 0)
            except ValueError:
                raise self.error(f"the pointer address {addr!r} is not a number", m.start("addr")) from None
        self.i = m.end()
        return {"kind": m.group("kind"), "swizzle": sw, "bits": bits, "base": base, "pos": start}

    def on_engine(self, engine: dict, result: AnyLayout) -> AnyLayout:
        """The layout a tensor's text gives (see :func:`parse_cute`)."""
        sw, bits, base, pos = engine["swizzle"], engine["bits"], engine["base"], engine["pos"]
        if sw is None:
            if isinstance(result, ComposedLayout) and result.swizzle_units == "elements" and result.elem_bits is None:
                return ComposedLayout(result.swizzle, result.layout, result.offset, swizzle_units="elements",
                                      elem_bits=bits)
            return result
        if not isinstance(result, Layout):
            raise self.error("a swizzled pointer's tensor has a plain layout after it", pos)
        if base is None:
            raise self.error("the swizzled pointer's address is dynamic ('?'): the swizzle reads the address "
                             "bits, so the layout depends on it", pos)
        low = base % swizzle_span(sw)
        if low * 8 % bits:
            raise self.error(f"the pointer address {base:#x} is not a whole number of {bits}-bit elements", pos)
        return ComposedLayout(sw, result, low * 8 // bits, ptr_bits=bits)

    def swizzle(self) -> Swizzle:
        start = self.i
        m = re.compile(r"SW_([0-9]+)_([0-9]+)_(-?[0-9]+)").match(self.t, self.i)
        if m:
            self.i = m.end()
            vals = [int(g) for g in m.groups()]
        else:
            self.i += 3 if self.peek("Sw<") else 2 if self.peek("S<") else len("Swizzle<")
            vals = [self.integer("B")]
            self.expect(",", "expected ',' after B in Swizzle<B,M,S>")
            vals.append(self.integer("M"))
            self.expect(",", "expected ',' after M in Swizzle<B,M,S>")
            vals.append(self.integer("S"))
            self.expect(">", "expected '>' closing Swizzle<B,M,S>")
        try:
            return Swizzle(*vals)
        except LayoutError as e:
            raise self.error(str(e), start) from None

    def pointer(self) -> int | None:
        self.i += len("smem_ptr")
        m = re.compile(r"([0-9]+)b").match(self.t, self.i)
        if m:
            self.i = m.end()
            return self.bits(int(m.group(1)), m.start())
        if self.peek("["):
            self.i += 1
            start = self.i
            m = re.compile(r"([0-9]+)b\]").match(self.t, self.i)
            if not m:
                raise self.error("expected '<bits>b]' in smem_ptr[...]", start)
            self.i = m.end()
            if self.peek("("):
                if not self.peek("(unset)"):
                    raise self.error("expected '(unset)': a pointer with an address is not a layout")
                self.i += len("(unset)")
            return self.bits(int(m.group(1)), start)
        return None

    def bits(self, n: int, pos: int) -> int:
        if n < 1 or n & (n - 1):
            raise self.error(f"element width {n} bits is not a power of two", pos)
        return n

    def composed(self) -> ComposedLayout:
        sw_pos = self.i
        dsl = self.peek("S<")
        swz = self.swizzle()
        self.compose_op()
        ptr_bits: int | None = None
        has_ptr = False
        offset: int | None = None
        while True:
            self.ws()
            if self.peek("smem_ptr"):
                if has_ptr or offset is not None:
                    raise self.error("smem_ptr must come once, right after the swizzle")
                has_ptr = True
                ptr_bits = self.pointer()
                self.compose_op()
                continue
            start = self.i
            tree = self.tree()
            self.ws()
            if self.peek(":"):
                self.i += 1
                stride = self.tree()
                layout = self.make(tree, stride, start)
                break
            if self.at_compose() and not is_tuple(tree):
                if offset is not None:
                    raise self.error("more than one offset between the swizzle and the layout", start)
                if is_sym(tree) or _is_dynamic(tree):
                    raise self.error("the offset must be an integer" + (" (it is dynamic: '?')" if
                                                                         _is_dynamic(tree) else ""), start)
                offset = tree
                self.compose_op()
                continue
            raise self.error("expected ':' between shape and stride")
        return self.build(swz, layout, offset, has_ptr, ptr_bits, sw_pos, dsl)

    def build(self, swz, layout, offset, has_ptr, ptr_bits, pos, dsl=False) -> ComposedLayout:
        units, elem_bits = self.swizzle_units, self.elem_bits
        if units is None and not has_ptr:
            # CuTe C++ prints composition(Swizzle, Layout) as `Sw<B,M,S> o _0 o L`: the swizzle acts
            # on L's offsets (elements); the CuTe DSL's `S<B,M,S> o 0 o L` (make_smem_layout_atom:
            # the byte pattern Swizzle<B,4,3> over an element layout) acts on byte addresses
            units = "bytes" if dsl else ("elements" if offset is not None else None)
        if has_ptr:
            if units == "elements":
                raise self.error("the text has smem_ptr (byte addresses) but swizzle_units='elements'", pos)
            if ptr_bits is not None and elem_bits is not None and ptr_bits != elem_bits:
                raise self.error(f"the text says smem_ptr[{ptr_bits}b] but elem_bits={elem_bits}", pos)
            units = "bytes"
            elem_bits = ptr_bits if ptr_bits is not None else elem_bits
        try:
            return ComposedLayout(swz, layout, offset if offset is not None else 0,
                                  swizzle_units=units, elem_bits=elem_bits)
        except LayoutError as e:
            raise self.error(str(e), pos) from None

    def layout(self) -> Layout:
        start = self.i
        shape = self.tree()
        self.ws()
        if not self.peek(":"):
            raise self.error(f"expected ':' between shape and stride, found {self.here()}")
        self.i += 1
        stride = self.tree()
        return self.make(shape, stride, start)

    def make(self, shape, stride, pos) -> Layout:
        shape, stride = self.static_values(shape, stride, pos)
        if not congruent(shape, stride):
            raise self.error(f"shape {format_tree(shape, 'cute')} and stride {format_tree(stride, 'cute')} "
                             "are not congruent", pos)
        try:
            return Layout(shape, stride)
        except LayoutError as e:
            raise self.error(str(e), pos) from None

    def static_values(self, shape, stride, pos):
        """Shape and stride with each dynamic ``?`` refused, except a stride of an extent-1 mode
        (no coordinate steps it): ``0`` there."""
        def walk(sh, st):
            if is_tuple(sh):
                if not is_tuple(st) or len(sh) != len(st):
                    return sh, st
                pairs = [walk(a, b) for a, b in zip(sh, st)]
                return tuple(a for a, _ in pairs), tuple(b for _, b in pairs)
            if _is_dynamic(sh):
                raise self.error("a shape value is dynamic ('?': known only when the kernel runs); give "
                                 "its value", sh.pos)
            if is_tuple(st):
                return sh, st
            if _is_dynamic(st):
                if sh == 1:
                    return sh, 0
                raise self.error(f"a stride value is dynamic ('?': known only when the kernel runs) on a mode "
                                 f"of extent {sh}; give its value", st.pos)
            return sh, st
        return walk(shape, stride)

    def tree(self, depth: int = 0) -> IntTuple:
        self.ws()
        if depth >= MAX_NESTING:
            raise self.error(f"tuples nested more than {MAX_NESTING} deep")
        if self.peek("("):
            self.i += 1
            items = [self.tree(depth + 1)]
            while True:
                self.ws()
                if self.peek(","):
                    self.i += 1
                    items.append(self.tree(depth + 1))
                elif self.peek(")"):
                    self.i += 1
                    return tuple(items)
                else:
                    raise self.error(f"expected ',' or ')' in tuple, found {self.here()}")
        return self.expr()

    def expr(self) -> Any:
        value = self.term()
        while True:
            save = self.i
            self.ws()
            if self.peek("+") or (self.peek("-") and not self.peek("->")):
                op = self.t[self.i]
                self.i += 1
                rhs = self.term()
                value = _arith(value, rhs, op)
            else:
                self.i = save
                return value

    def term(self) -> Any:
        value = self.factor()
        while True:
            save = self.i
            self.ws()
            if self.peek("*"):
                self.i += 1
                value = _arith(value, self.factor(), "*")
            else:
                self.i = save
                return value

    def factor(self) -> Any:
        self.ws()
        start = self.i
        if self.peek("?"):
            self.i += 1
            return _Dynamic(start)
        value = self.atom(start)
        if self.peek("@"):
            if is_sym(value):
                raise self.error("a scaled basis 'k@i' needs an integer k", start)
            return _arith(value, self.basis(), "*")
        return value

    def basis(self) -> Any:
        """``@i`` (after the scale): CuTe's basis element ``E<i>`` of a scaled-basis stride."""
        self.i += 1
        m = _INT.match(self.t, self.i)
        if not m:
            raise self.error("expected a mode index after '@' (a scaled basis such as _1@0)")
        self.i = m.end()
        if self.peek("@"):
            raise self.error("nested scaled bases (k@i@j) are not read")
        return basis_symbol(int(m.group(0)))

    def atom(self, start: int) -> Any:
        if self.peek("-"):
            self.i += 1
            return _arith(0, self.factor(), "-")
        if self.peek("_"):
            m = re.compile(r"_(-?[0-9]+)").match(self.t, self.i)
            if not m:
                raise self.error("expected digits after '_' (a static integer like _8)")
            self.i = m.end()
            return StaticInt(int(m.group(1)))
        m = _INT.match(self.t, self.i)
        if m:
            self.i = m.end()
            value: Any = DynamicInt(int(m.group(0)))      # CuTe prints a dynamic int without '_'
            m2 = _IDENT.match(self.t, self.i)
            if m2:  # implicit multiplication: 8T, 2k
                self.i = m2.end()
                value = _arith(value, symbol(m2.group(0)), "*")
            return value
        m = _IDENT.match(self.t, self.i)
        if m:
            self.i = m.end()
            return symbol(m.group(0))
        raise self.error(f"expected a number or a name, found {self.here()}", start)


def swizzle_span(sw: Swizzle) -> int:
    """Bytes a swizzle's pattern spans: ``2^(max(M, M+S) + B)`` (it reads and writes no higher
    address bit, so an address that many bytes aligned moves the pattern by itself).

    >>> swizzle_span(Swizzle(3, 4, 3)), swizzle_span(Swizzle(2, 4, 3))
    (1024, 512)
    """
    return 1 << (max(sw.base, sw.base + sw.shift) + sw.bits)


class _Dynamic:
    """CuTe DSL's ``?``: a value known only at run time (its column kept for the message)."""

    def __init__(self, pos: int):
        self.pos = pos


def _is_dynamic(x: Any) -> bool:
    return isinstance(x, _Dynamic)


#: A tensor's pointer (``print(tensor)``): ``[Sw<B,M,S>_](smem|gmem|rmem)_ptr[Nb](addr) o`` or
#: ``tmem_[Nb](0xLLLL.CCCC) o`` (CUTLASS cute/pointer.hpp, cute/pointer_swizzle.hpp ``print``)
_ENGINE = re.compile(r"\s*(?P<sw>Sw<\s*(?P<b>\d+)\s*,\s*(?P<m>\d+)\s*,\s*(?P<s>\d+)\s*>_)?"
                     r"(?P<kind>smem_ptr|gmem_ptr|rmem_ptr|tmem_)\[(?P<bits>\d+)b\]\((?P<addr>\(nil\)|[^)]*)\)\s*(?:o(?![A-Za-z0-9_])|∘)")


def _arith(a: Any, b: Any, op: str) -> Any:
    if _is_dynamic(a) or _is_dynamic(b):
        raise LayoutError(f"col {(a if _is_dynamic(a) else b).pos + 1}: arithmetic on a dynamic value ('?')")
    if is_sym(a) or is_sym(b):
        r = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b}[op]()
        return normalize_leaf(r.expand(), "expression")
    r = {"+": lambda: int(a) + int(b), "-": lambda: int(a) - int(b), "*": lambda: int(a) * int(b)}[op]()
    return StaticInt(r) if isinstance(a, StaticInt) and isinstance(b, StaticInt) else DynamicInt(r)


def parse_cute(text: str, swizzle_units: str | None = None, elem_bits: int | None = None) -> AnyLayout:
    """Parse a CuTe layout: ``shape:stride``, optionally ``Swizzle o [smem_ptr|offset o] shape:stride``.

    Accepts CuTe's print form
    (``Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_8),(_64,_1)):((_64,_512),(_1,_0))``),
    older ``smem_ptr16b``, bare ``smem_ptr``, an offset (``Sw<2,0,3> o _0 o ...``), the PTX ISA's
    ``Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))``, pycute's ``SW_3_4_3``, ``o`` or ``∘``,
    ``_8`` or ``8``, and symbolic entries (``8T``, ``2k``, ``SBO``; implicit multiplication
    after a number, ``*``, ``+``, ``-``). ``swizzle_units`` ("bytes"/"elements") and
    ``elem_bits`` say how to read a swizzle in the text (a plain layout has none).

    Units of a swizzle, as CuTe means them (given ``swizzle_units`` overrides):

    * ``Sw<B,M,S> o smem_ptr[Nb](unset) o L`` (CuTe's GMMA/UMMA atoms): byte addresses of N-bit
      elements (``smem_ptr`` without a width: bytes, width unknown);
    * ``Sw<B,M,S> o _0 o L`` (CuTe C++ ``print`` of ``composition(Swizzle, Layout)``): the swizzle
      acts on ``L``'s offsets, elements (``cute/swizzle_layout.hpp``);
    * ``S<B,M,S> o 0 o L`` / ``S<B,M,S> o L`` (the CuTe DSL's print; its
      ``make_smem_layout_atom`` composes the byte pattern ``Swizzle<B,4,3>`` with an element
      layout): byte addresses (give ``elem_bits`` for byte offsets);
    * ``Sw<B,M,S> o L`` or ``Swizzle<B,M,S> o L`` alone: unknown (``swizzle_units`` says).

    A tensor as CuTe's ``print(tensor)`` writes it reads as its layout (the pointer in
    :func:`parse_cute_tensor`): ``smem_ptr[16b](0x400) o L`` (also ``gmem_ptr``, ``rmem_ptr``,
    ``tmem_[32b](0x0020.0010)``) is ``L``, offsets from the pointer (a composed ``L`` in elements
    of the pointer's width); ``Sw<3,4,3>_smem_ptr[16b](0x480) o L`` (a swizzled pointer: the
    swizzle acts on the absolute byte address, ``cute/pointer_swizzle.hpp``) is
    ``Sw<3,4,3> o smem_ptr[16b](unset) o 64 o L``: element offsets from the pointer's address
    rounded down to the pattern's span (1024 bytes here, :func:`swizzle_span`), so the part of
    the address the swizzle reads (``0x80``) is in the layout; an aligned pointer gives ``L``'s
    own swizzled offsets. Strides ``k@i`` / ``_k@i`` are CuTe's scaled bases (``E<i>``: coordinate
    layouts such as ``make_identity_layout``; ``L(c)`` is a sum of them,
    ``core.cute.int_tuple.basis_coords`` its coordinates). ``?`` (the CuTe DSL's dynamic value)
    is refused with its column, except as the stride of an extent-1 mode (read as 0).

    >>> parse_cute("Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))", swizzle_units="bytes", elem_bits=32)
    ComposedLayout('Sw<1,4,3> o smem_ptr[32b](unset) o ((8,2),(4,4)):((8,64),(1,4))')
    >>> parse_cute("((8,2),(4,4))")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: col 14: expected ':' between shape and stride, found end of text
    """
    if not isinstance(text, str):
        raise LayoutError(f"parse_cute needs text, got {type(text).__name__}")
    if swizzle_units not in (None,) + UNITS:
        raise LayoutError(f"swizzle_units must be 'bytes', 'elements' or None, got {swizzle_units!r}")
    if elem_bits is not None:
        elem_bits = require_elem_bits(elem_bits)
    return _Parser(text, swizzle_units, elem_bits).top()


class CuteTensor(NamedTuple):
    """A tensor as CuTe prints it: ``memory`` (``smem_ptr``, ``gmem_ptr``, ``rmem_ptr``,
    ``tmem_``), ``elem_bits``, ``base`` (the pointer's address: bytes, or for ``tmem_`` the TMEM
    address ``lane << 16 | column``; None where dynamic), ``swizzle`` (a swizzled pointer's, or None)
    and ``layout`` (what :func:`parse_cute` returns for the text: offsets from ``origin``)."""

    memory: str
    elem_bits: int
    base: int | None
    swizzle: Any
    layout: AnyLayout

    @property
    def origin(self) -> int | None:
        """The address the layout's offsets count from: ``base``, for a swizzled pointer rounded
        down to the pattern's span."""
        if self.base is None or self.swizzle is None:
            return self.base
        return self.base - self.base % swizzle_span(self.swizzle)


def parse_cute_tensor(text: str) -> CuteTensor:
    """CuTe's ``print(tensor)`` text: its pointer and layout (see :func:`parse_cute`).

    >>> t = parse_cute_tensor("smem_ptr[16b](0x400) o (_4,_8):(_8,_1)")
    >>> t.memory, t.base, t.origin + t.elem_bits // 8 * t.layout((1, 2))
    ('smem_ptr', 1024, 1044)
    """
    if not isinstance(text, str):
        raise LayoutError(f"parse_cute_tensor needs text, got {type(text).__name__}")
    engine, layout = _Parser(text, None, None).tensor()
    if engine is None:
        raise LayoutError("col 1: expected a tensor (a pointer such as smem_ptr[16b](0x400) o layout)")
    return CuteTensor(engine["kind"], engine["bits"], engine["base"], engine["swizzle"], layout)


def looks_like_cute(text: str) -> bool:
    """True when ``text`` reads as CuTe layout text (a shape ``(...)`` or ``_N`` first, or a swizzle
    ``Sw<``/``S<``/``Swizzle<``), not Triton MLIR (``#ttg...``, ``tensor<...>``, ``!ttg...``).

    >>> looks_like_cute("((_4,_8),_8):((_32,_1),_4)"), looks_like_cute("#ttg.blocked<{...}>")
    (True, False)
    """
    t = text.lstrip() if isinstance(text, str) else ""
    return bool(re.match(r"(\(|_?[0-9]|Sw<|S<|Swizzle<|SW_)", t))


def parse_cute_tv(text: str, tile) -> LinearLayout:
    """A CuTe thread-value layout (``print(tiled_copy.get_layoutS_TV())``: mode 0 the thread, mode 1
    the value, its value an index into ``tile`` read column-major as CuTe's ``idx2crd``) as the
    register layout ``register, lane, warp -> dim0, dim1, ...``
    (:func:`verilayout.core.cute.tv.tv_to_linear`, which states the law).

    >>> L = parse_cute_tv("((_4,_8),((_2,_2,_2),_1)):((_32,_1),((_16,_8,_128),_0))", [16, 16])
    >>> L.bases["register"], L.bases["lane"][0]
    ([[0, 1], [8, 0], [0, 8]], [0, 2])
    """
    layout = parse_cute(text)
    if not isinstance(layout, Layout):
        raise LayoutError("a CuTe thread-value layout is a plain (thread, value) -> index layout, "
                          "without a swizzle or pointer")
    return tv_to_linear(layout, list(tile) if isinstance(tile, (list, tuple)) else tile)
