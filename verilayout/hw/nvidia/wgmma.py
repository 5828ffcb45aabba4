"""wgmma (sm_90 warpgroup MMA) facts as data: register fragments, canonical
shared-memory layouts, swizzle atoms.

Everything here restates the PTX ISA tables of 9.7.15.5.1.1 ("Register Fragments") and
9.7.15.5.1.2 ("Shared Memory Matrix Layout").

>>> f = fragment((64, 32, 16), "D", "f16", acc="f32")
>>> f.layout.apply({"register": 2, "lane": 5, "warp": 1})   # d2 of thread 37
{'dim0': 25, 'dim1': 2}

Conventions: a fragment maps ``register`` (the element index a0, a1, ... / d0,
d1, ... a thread holds), ``lane`` and ``warp`` to ``dim0`` (row, M) and ``dim1``
(column, K for A, N for D). Shared-memory coordinates are ``(mn, k)``: ``mn``
along M (operand A) or N (operand B), ``k`` along K.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass


from verilayout.bits import ceil_log2, log2
from verilayout.core.cute.int_tuple import dynamic
from verilayout.core.cute.layout import ComposedLayout, Layout
from verilayout.core.cute.swizzle import Swizzle
from verilayout.dtypes import SWIZZLE_MODES, WGMMA_SWIZZLES, Major, SwizzleMode, require_major, require_swizzle, subset
from verilayout.errors import LayoutError
from verilayout.core.linear_layout import LinearLayout

__all__ = [
    "WGMMA_DTYPE_BITS", "ACCUMULATORS", "SWIZZLES", "MAJORS",
    "dtype_bits", "elems_per_unit", "k_of_dtype", "k_block_bytes",
    "swizzle_units", "swizzle_log2", "valid_n",
    "Fragment", "fragment",
    "SwizzleAtom", "swizzle_atom", "CanonicalLayout", "canonical_layout", "OperandLayout", "OperandSpec",
]

#: Element width in bits of every wgmma multiplicand type, spelled as PTX spells it.
WGMMA_DTYPE_BITS: dict[str, int] = subset(("f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8", "b1"))
#: The old name of :data:`WGMMA_DTYPE_BITS`, kept (out of ``__all__``) for the modules that still
#: import it (``spec/kinds/wgmma.py``, ``audit/ptx_wgmma.py``); every type's width is ``dtypes.BITS``.
DTYPE_BITS = WGMMA_DTYPE_BITS

#: K of one wgmma per multiplicand type: m64nNk16, m64nNk8, m64nNk32, m64nNk256.
_K_OF: dict[str, int] = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32,
                         "s8": 32, "u8": 32, "b1": 256}

#: Accumulator (D) types allowed for each multiplicand type (PTX ISA 9.7.15.5.1.1 tables).
ACCUMULATORS: dict[str, tuple[str, ...]] = {
    "f16": ("f16", "f32"), "bf16": ("f32",), "tf32": ("f32",),
    "e4m3": ("f16", "f32"), "e5m2": ("f16", "f32"), "s8": ("s32",), "u8": ("s32",),
    "b1": ("s32",)}

#: Swizzling modes and their width in bytes (one row of the swizzle atom), from the one table
#: :data:`verilayout.dtypes.SWIZZLE_MODES`.
SWIZZLES: dict[str, int] = {m: SWIZZLE_MODES[m][3] for m in WGMMA_SWIZZLES}
MAJORS = ("K", "MN")


def dtype_bits(dtype: str) -> int:
    """Bits of one element of a wgmma multiplicand type.

    >>> dtype_bits("bf16"), dtype_bits("e4m3"), dtype_bits("b1")
    (16, 8, 1)
    """
    if dtype not in WGMMA_DTYPE_BITS:
        raise LayoutError(f"unknown wgmma element type {dtype!r} "
                          f"(PTX names: {', '.join(WGMMA_DTYPE_BITS)})")
    return WGMMA_DTYPE_BITS[dtype]


def elems_per_unit(dtype: str) -> int:
    """T = 128 / bits: elements in one 16-byte unit (the PTX's normalising factor).

    >>> elems_per_unit("tf32"), elems_per_unit("f16"), elems_per_unit("s8")
    (4, 8, 16)
    """
    return 128 // dtype_bits(dtype)


def k_of_dtype(dtype: str) -> int:
    """K of one wgmma instruction for this multiplicand type (always 32 bytes of K).

    >>> k_of_dtype("f16"), k_of_dtype("tf32"), k_of_dtype("u8"), k_of_dtype("b1")
    (16, 8, 32, 256)
    """
    dtype_bits(dtype)
    return _K_OF[dtype]


def k_block_bytes(dtype: str) -> int:
    """Bytes of K that one wgmma reads per row: 32 for every type.

    >>> k_block_bytes("tf32")
    32
    """
    return k_of_dtype(dtype) * dtype_bits(dtype) // 8


def swizzle_units(swizzle: SwizzleMode) -> int:
    """Width of the swizzle atom in 16-byte units: none 1, 32B 2, 64B 4, 128B 8.

    >>> swizzle_units("64B")
    4
    """
    return SWIZZLES[require_swizzle(swizzle)] // 16


def swizzle_log2(swizzle: SwizzleMode) -> int:
    """B of the swizzle functor ``Swizzle<B,4,3>`` of a mode: none 0 ... 128B 3.

    >>> swizzle_log2("128B")
    3
    """
    return SWIZZLE_MODES[require_swizzle(swizzle)][0]


def valid_n(acc: str) -> tuple[int, ...]:
    """The N a wgmma accepts for an accumulator type (PTX ISA 9.7.15.5.1.1).

    f16/f32: 8, 16, ..., 256; s32: 8, 16, 24, 32, then 48, 64, ..., 256.

    >>> valid_n("s32")[:6]
    (8, 16, 24, 32, 48, 64)
    """
    if acc == "s32":
        return tuple(8 * i for i in (1, 2, 3, 4)) + tuple(16 * i for i in range(3, 17))
    if acc in ("f16", "f32"):
        return tuple(8 * i for i in range(1, 33))
    raise LayoutError(f"unknown accumulator type {acc!r} (expected f16, f32 or s32)")


# ----- register fragments ---------------------------------------------------------------------

@dataclass(frozen=True)
class Fragment:
    """One wgmma register fragment as a linear layout.

    ``layout`` maps ``register`` (element index within the thread), ``lane`` and
    ``warp`` to ``dim0`` (row) and ``dim1`` (column). When N is not a power of two
    the register dim is padded to the next power of two; only registers below
    ``registers`` exist (the padded ones map outside the ``rows x cols`` tile).

    >>> fragment((64, 8, 16), "A", "f16").registers
    8
    """

    shape: tuple[int, int, int]
    operand: str
    dtype: str
    acc: str | None
    rows: int
    cols: int
    registers: int
    elems_per_reg: int
    reg_type: str
    layout: LinearLayout

    @property
    def element_name(self) -> str:
        return "a" if self.operand == "A" else "d"

    def owner(self, row: int, col: int) -> tuple[int, int]:
        """``(thread, element)`` holding ``(row, col)``.

        >>> fragment((64, 8, 16), "D", "f16", acc="f32").owner(9, 3)
        (5, 3)
        """
        if not (0 <= row < self.rows and 0 <= col < self.cols):
            raise LayoutError(f"({row}, {col}) is outside the {self.rows}x{self.cols} fragment")
        for t in range(128):
            for r in range(self.registers):
                if self.coord(t, r) == (row, col):
                    return t, r
        raise LayoutError(f"no thread holds ({row}, {col})")  # pragma: no cover

    def coord(self, thread: int, element: int) -> tuple[int, int]:
        """``(row, col)`` of element ``element`` of thread ``thread`` (0..127).

        >>> fragment((64, 8, 16), "A", "f16").coord(37, 6)
        (25, 10)
        """
        if not 0 <= thread < 128:
            raise LayoutError(f"thread {thread} is outside the warpgroup (0..127)")
        if not 0 <= element < self.registers:
            raise LayoutError(f"element {element} is outside 0..{self.registers - 1}")
        out = self.layout.apply({"register": element, "lane": thread % 32, "warp": thread // 32})
        return out["dim0"], out["dim1"]

    def table(self) -> list[list[tuple[int, int]]]:
        """``table[row][col] = (thread, element)`` for the whole tile."""
        grid: list[list[tuple[int, int]]] = [[(-1, -1)] * self.cols for _ in range(self.rows)]
        for t in range(128):
            for r in range(self.registers):
                row, col = self.coord(t, r)
                grid[row][col] = (t, r)
        return grid

    def to_dict(self) -> dict:
        return {"shape": "m{}n{}k{}".format(*self.shape), "operand": self.operand,
                "dtype": self.dtype, "acc": self.acc, "rows": self.rows, "cols": self.cols,
                "registers": self.registers, "elements_per_register": self.elems_per_reg,
                "register_type": self.reg_type, "layout": self.layout.to_dict()}


_LANE_ROWS = [[1, 0], [2, 0], [4, 0]]   # lane / 4 selects the row within 8
_WARP_ROWS = [[16, 0], [32, 0]]          # warp selects 16 rows


def _a_fragment_bases(bits: int) -> dict[str, list[list[int]]]:
    """A: four 32-bit registers per thread laid like mma.m16n8kK (per warp, 16 rows).

    In units of 32-bit columns: register r adds row 8*(r & 1) and column 4*(r >> 1);
    lane adds column lane % 4 and row lane / 4. Elements inside a register run
    along the column.
    """
    per = 32 // bits                                   # elements per 32-bit register
    lg = log2(per)
    reg = [[0, 1 << i] for i in range(lg)] + [[8, 0], [0, 4 * per]]
    lane = [[0, per], [0, 2 * per]] + _LANE_ROWS
    return {"register": reg, "lane": lane, "warp": _WARP_ROWS}


def _d_fragment_bases(n: int) -> dict[str, list[list[int]]]:
    """D: d_i at row lane/4 + 8*((i/2)%2) + 16*warp, column 2*(lane%4) + i%2 + 8*(i/4)."""
    npad = 1 << max(3, ceil_log2(n))
    reg = [[0, 1], [8, 0]] + [[0, 8 << j] for j in range(log2(npad // 8))]
    lane = [[0, 2], [0, 4]] + _LANE_ROWS
    return {"register": reg, "lane": lane, "warp": _WARP_ROWS}


def _require_shape(shape: object) -> tuple[int, int, int]:
    """``shape`` as three ints (text such as ``M64N32K16`` is read at the door:
    :func:`verilayout.frontends.names.parse_shape`)."""
    if not isinstance(shape, tuple) or len(shape) != 3 or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in shape):
        raise LayoutError(f"shape {shape!r}: expected (m, n, k), e.g. (64, 32, 16)")
    return shape


@functools.lru_cache(maxsize=64)   # key: the fragment's (shape, operand, dtype, acc)
def fragment_coords(shape: tuple[int, int, int], operand: str, dtype: str,
                    acc: str | None = None) -> tuple[tuple[tuple[int, int], ...], ...]:
    """``fragment_coords(...)[t][e] == fragment(...).coord(t, e)`` for every thread ``t`` of the
    warpgroup and element ``e`` below ``registers``: the whole table, computed once per fragment
    (the GEMM checks read it for every kernel).

    >>> fragment_coords((64, 8, 16), "A", "f16")[37][6] == fragment((64, 8, 16), "A", "f16").coord(37, 6)
    True
    """
    import numpy as np  # deferred: start-up time (as LinearLayout.apply_all)
    f = fragment(shape, operand, dtype, acc)
    lay = f.layout
    t = np.arange(128, dtype=np.int64)[:, None]
    ins = {"register": np.arange(f.registers, dtype=np.int64)[None, :], "lane": t % 32, "warp": t // 32}
    x, off = np.zeros((128, f.registers), dtype=np.int64), 0
    for name in lay.in_dim_names:            # the flattened input, first in dim lowest (apply_all)
        x |= ins[name] << off
        off += lay.in_dim_bits(name)
    y, out = lay.apply_all()[x], {}
    for name in lay.out_dim_names:           # unpacked: the first out dim lowest
        b = lay.out_dim_bits(name)
        out[name], y = y & ((1 << b) - 1), y >> b
    rows, cols = out["dim0"], out["dim1"]
    return tuple(tuple(zip(r, c)) for r, c in zip(rows.tolist(), cols.tolist()))


def fragment(shape: tuple[int, int, int], operand: str, dtype: str, acc: str | None = None) -> Fragment:
    """The wgmma register fragment of operand ``A`` or ``D`` (PTX ISA 9.7.15.5.1.1 tables) of
    the instruction shape ``(m, n, k)``.

    ``dtype`` is the multiplicand type (f16, bf16, tf32, e4m3, e5m2, s8, u8, b1);
    ``acc`` the accumulator type for D (default f32 for float types, s32 for
    integer types).

    >>> fragment((64, 16, 8), "A", "tf32").layout.bases["register"]
    [[8, 0], [0, 4]]
    >>> fragment((64, 24, 16), "D", "bf16").registers
    12
    """
    m, n, k = _require_shape(shape)
    shape = f"m{m}n{n}k{k}"
    op = str(operand).strip().upper()
    if op not in ("A", "D"):
        raise LayoutError(f"operand {operand!r}: register fragments exist for A and D "
                          "(B is always read from shared memory)")
    bits = dtype_bits(dtype)
    if m != 64:
        raise LayoutError(f"shape {shape}: wgmma has M = 64, not {m}")
    if k != _K_OF[dtype]:
        raise LayoutError(f"shape {shape}: {dtype} needs k{_K_OF[dtype]}, not k{k}")
    if acc is None:
        acc = ACCUMULATORS[dtype][-1]
    if acc not in ACCUMULATORS[dtype]:
        raise LayoutError(f"accumulator {acc!r} is not allowed with {dtype} "
                          f"(allowed: {', '.join(ACCUMULATORS[dtype])})")
    if n not in valid_n(acc):
        raise LayoutError(f"shape {shape}: N = {n} is not valid with a {acc} accumulator "
                          f"(valid: {_ranges(valid_n(acc))})")
    if op == "A":
        bases = _a_fragment_bases(bits)
        regs, per = 4 * (32 // bits), 32 // bits
        # PTX ISA 9.7.15.5.1.1: f16 and bf16 A fragments are both ".f16x2" registers
        rtype = {16: ".f16x2", 32: ".b32", 8: ".b32", 1: ".b32"}[bits]
        layout = LinearLayout(bases, [("dim0", 64), ("dim1", k)])
        return Fragment((m, n, k), "A", dtype, acc, 64, k, regs, per, rtype, layout)
    bases = _d_fragment_bases(n)
    npad = 1 << max(3, ceil_log2(n))
    per = 2 if acc == "f16" else 1
    rtype = ".f16x2" if acc == "f16" else f".{acc}"
    layout = LinearLayout(bases, [("dim0", 64), ("dim1", npad)], require_surjective=False)
    return Fragment((m, n, k), "D", dtype, acc, 64, n, n // 2, per, rtype, layout)


def _ranges(values: tuple[int, ...]) -> str:
    return ", ".join(str(v) for v in values[:5]) + (f", ..., {values[-1]}" if len(values) > 5 else "")


# ----- swizzle atoms and canonical layouts -------------------------------------------------------

@dataclass(frozen=True)
class SwizzleAtom:
    """A swizzle layout atom of PTX Table 38 (PTX ISA 9.7.15.5.1.2) for one element type.

    ``units`` is ``(mn, k)`` in 128-bit elements as the table lists it (MN-major
    ``Wx8``, K-major ``8xW``, W the swizzle width in 16-byte units); ``shape`` is
    ``(mn, k)`` in elements: the leading dimension multiplied by T = 128 / bits;
    ``stride`` the element strides of ``(mn, k)`` before the swizzle.

    >>> a = swizzle_atom("128B", "MN", "tf32"); a.units, a.shape
    ((8, 8), (32, 8))
    """

    swizzle: SwizzleMode
    major: Major
    dtype: str
    units: tuple[int, int]
    shape: tuple[int, int]
    stride: tuple[int, int]
    swizzle_bits: int

    @property
    def bytes(self) -> int:
        """Size of the atom in bytes (8 rows of the swizzle width)."""
        return 8 * SWIZZLES[self.swizzle]

    def functor(self, units: str = "bytes") -> Swizzle:
        """The atom's swizzle as the core :class:`~verilayout.core.cute.swizzle.Swizzle`, on byte
        addresses (``Swizzle<B,4,3>``) or on element offsets (``Swizzle<B,log2(T),3>``).

        >>> str(swizzle_atom("128B", "K", "f16").functor()), str(swizzle_atom("64B", "K", "f16").functor("elements"))
        ('Sw<3,4,3>', 'Sw<2,3,3>')
        """
        if units == "bytes":
            return Swizzle(self.swizzle_bits, 4, 3)
        if units == "elements":
            return Swizzle(self.swizzle_bits, log2(128 // WGMMA_DTYPE_BITS[self.dtype]), 3)
        raise LayoutError(f"units {units!r}: expected bytes or elements")

    def cute_layout(self) -> ComposedLayout:
        """The atom as a CuTe layout object: its swizzle on byte addresses of ``dtype`` elements
        (CuTe's ``smem_ptr[Nb]``) over the ``shape:stride`` element layout; the object that
        :meth:`cute_text` prints.

        Law: ``str(a.cute_layout()) == a.cute_text()``.

        >>> a = swizzle_atom("64B", "MN", "f16"); str(a.cute_layout()) == a.cute_text()
        True
        >>> swizzle_atom("128B", "K", "f16").cute_layout().offset_bytes((1, 0))   # row 1, unit 0 XOR 1
        144
        """
        return ComposedLayout(self.functor("bytes"), Layout(dynamic(self.shape), dynamic(self.stride)),
                              ptr_bits=WGMMA_DTYPE_BITS[self.dtype])     # plain ints, as cute_text prints them

    def cute_text(self, units: str = "bytes") -> str:
        """The atom as CuTe text, with the swizzle on byte addresses (CuTe's
        ``smem_ptr`` form) or on element offsets.

        >>> swizzle_atom("128B", "K", "f16").cute_text("elements")
        'Sw<3,3,3> o 0 o (8,64):(64,1)'
        >>> swizzle_atom("64B", "MN", "f16").cute_text()
        'Sw<2,4,3> o smem_ptr[16b](unset) o (32,8):(1,32)'
        """
        sw = self.functor(units)
        body = f"({self.shape[0]},{self.shape[1]}):({self.stride[0]},{self.stride[1]})"
        if units == "bytes":
            return f"{sw} o smem_ptr[{WGMMA_DTYPE_BITS[self.dtype]}b](unset) o {body}"
        return f"{sw} o 0 o {body}"


def swizzle_atom(swizzle: SwizzleMode, major: Major, dtype: str) -> SwizzleAtom:
    """The swizzle atom of a mode, major-ness and element type (PTX Table 38).

    >>> swizzle_atom("32B", "K", "f16").shape       # 8 rows x 2 units of 8 halves
    (8, 16)
    >>> swizzle_atom("none", "MN", "f16").shape     # 1 unit of MN x 8 rows of K
    (8, 8)
    """
    sw = require_swizzle(swizzle)
    mj = require_major(major)
    t = elems_per_unit(dtype)
    w = swizzle_units(sw)
    if mj == "MN":
        units, shape, stride = (w, 8), (w * t, 8), (1, w * t)
    else:
        units, shape, stride = (8, w), (8, w * t), (w * t, 1)
    return SwizzleAtom(sw, mj, dtype, units, shape, stride, swizzle_log2(sw))


@dataclass(frozen=True)
class OperandSpec:
    """Where an operand lives: ``source`` ``"smem"`` (with ``major`` and ``swizzle``) or
    ``"reg"`` (A only).

    Built at the door from ``MAJOR:SWIZZLE`` text (:func:`verilayout.frontends.names.parse_operand`).

    >>> OperandSpec("smem", "MN", "64B").text
    'MN:64B'
    """

    source: str
    major: str | None = None
    swizzle: str | None = None

    @property
    def text(self) -> str:
        return "reg" if self.source == "reg" else f"{self.major}:{self.swizzle}"


@dataclass(frozen=True)
class OperandLayout:
    """The layout an MMA operand tile was stored in, as read from text at the door
    (:func:`verilayout.frontends.shared_text.load_operand_layout` builds it): the parsed
    ``layout`` (a ``LinearLayout`` or a CuTe ``Layout``/``ComposedLayout``), the ``text`` it was
    read from (named in messages) and whether Triton marked it ``fp4Padded`` (padded e2m1:
    each 8-bit slot holds one fp4 value).

    >>> L = LinearLayout({"offset": [[0, 1], [1, 0]]}, ["dim0", "dim1"])
    >>> OperandLayout(L, "#ttg.shared_linear<...>").fp4_padded
    False
    """

    layout: LinearLayout | Layout | ComposedLayout
    text: str = ""
    fp4_padded: bool = False


def _symbols() -> tuple:
    """The canonical layouts' parameters T, m, k, LBO, SBO as sympy symbols."""
    import sympy  # deferred: sympy costs ~0.2 s at start-up; only canonical layouts need it
    return sympy.symbols("T m k LBO SBO", positive=True, integer=True)


@dataclass(frozen=True)
class CanonicalLayout:
    """A canonical layout of the PTX table (PTX ISA 9.7.15.5.1.2.1.3).

    ``shape`` and ``stride`` are ``((mn modes), (k modes))`` of sympy expressions in
    T, m, k, LBO, SBO (strides in elements); ``swizzle`` is the B of
    ``Swizzle<B,4,3>`` acting on byte addresses. :meth:`subs` makes it concrete.

    >>> c = canonical_layout("K", "none"); c.text()
    'Swizzle<0,4,3> o ((8,m),(T,2*k)):((T,SBO),(1,LBO))'
    >>> c.subs(T=4, m=2, k=2, LBO=64, SBO=32).text()
    'Swizzle<0,4,3> o ((8,2),(4,4)):((4,32),(1,64))'
    """

    major: Major
    swizzle: SwizzleMode
    shape: tuple
    stride: tuple
    swizzle_bits: int

    def subs(self, **values) -> "CanonicalLayout":
        """Substitute values for T, m, k, LBO, SBO (missing ones stay symbolic)."""
        unknown = set(values) - {"T", "m", "k", "LBO", "SBO"}
        if unknown:
            raise LayoutError(f"unknown canonical-layout parameters {sorted(unknown)} "
                              "(expected T, m, k, LBO, SBO)")
        import sympy  # deferred: sympy costs ~0.2 s at start-up; only canonical layouts need it
        T_, m_, k_, LBO_, SBO_ = _symbols()
        table = {T_: values.get("T", T_), m_: values.get("m", m_), k_: values.get("k", k_),
                 LBO_: values.get("LBO", LBO_), SBO_: values.get("SBO", SBO_)}
        f = lambda tup: tuple(tuple(sympy.sympify(e).subs(table) for e in mode) for mode in tup)
        return CanonicalLayout(self.major, self.swizzle, f(self.shape), f(self.stride),
                               self.swizzle_bits)

    @property
    def is_concrete(self) -> bool:
        import sympy  # deferred: sympy costs ~0.2 s at start-up; only canonical layouts need it
        return all(sympy.sympify(e).is_Integer for t in (self.shape, self.stride)
                   for mode in t for e in mode)

    def concrete(self) -> tuple[tuple, tuple]:
        """``(shape, stride)`` as nested tuples of ints (every parameter substituted)."""
        if not self.is_concrete:
            raise LayoutError("canonical layout still has symbols; call subs() first")
        f = lambda tup: tuple(tuple(int(e) for e in mode) for mode in tup)
        return f(self.shape), f(self.stride)

    def text(self) -> str:
        """CuTe notation as the PTX table writes it."""
        fmt = lambda tup: "(" + ",".join("(" + ",".join(str(e).replace(" ", "") for e in mode)
                                          + ")" for mode in tup) + ")"
        return f"Swizzle<{self.swizzle_bits},4,3> o {fmt(self.shape)}:{fmt(self.stride)}"


def canonical_layout(major: Major, swizzle: SwizzleMode, dtype: str | None = None) -> CanonicalLayout:
    """The canonical layout of a major-ness and swizzling mode, symbolic in
    T, m, k, LBO, SBO (the PTX ISA 9.7.15.5.1.2 table); with ``dtype``, T = 128 / bits is
    substituted (strides stay in elements).

    >>> canonical_layout("MN", "128B").text()
    'Swizzle<3,4,3> o ((T,8,m),(8,k)):((1,T,LBO),(8*T,SBO))'
    >>> canonical_layout("K", "64B", "f16").subs(m=2, k=1, SBO=512).text()
    'Swizzle<2,4,3> o ((8,2),(8,2)):((32,512),(1,8))'
    """
    import sympy  # deferred: sympy costs ~0.2 s at start-up; only canonical layouts need it
    T_, m_, k_, LBO_, SBO_ = _symbols()
    mj, sw = require_major(major), require_swizzle(swizzle)
    w = swizzle_units(sw)
    if mj == "MN":
        if sw == "none":
            shape, stride = ((T_, 1, m_), (8, k_)), ((1, T_, SBO_), (T_, LBO_))
        else:
            shape, stride = ((T_, w, m_), (8, k_)), ((1, T_, LBO_), (w * T_, SBO_))
    else:
        if sw == "none":
            shape, stride = ((8, m_), (T_, 2 * k_)), ((T_, SBO_), (1, LBO_))
        else:
            shape, stride = ((8, m_), (T_, 2 * k_)), ((w * T_, SBO_), (1, T_))
    s = lambda tup: tuple(tuple(sympy.sympify(e) for e in mode) for mode in tup)
    c = CanonicalLayout(mj, sw, s(shape), s(stride), swizzle_log2(sw))
    return c if dtype is None else c.subs(T=elems_per_unit(dtype))
