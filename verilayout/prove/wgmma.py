"""Prove that a wgmma descriptor reads the bytes an intended shared-memory layout wrote.

The claim, for one wgmma K-block: for every coordinate ``(mn, k)`` of the operand,
the address the hardware computes from the descriptor (see
:func:`verilayout.hw.nvidia.descriptor.hardware_address_function`) equals the address
where the intended layout (CuTe text, ``#ttg.nvmma_shared``, a linear layout),
placed at ``base_address``, put that element.

>>> from verilayout.hw.nvidia.descriptor import encode
>>> tile = strided_tile(((8, 8), (8, 2)), ((8, 64), (1, 512)), dtype="f16")  # A K-major, no swizzle (PTX ISA 9.7.15.5.1.2.1.3)
>>> check_descriptor(encode(lbo=1024, sbo=128), tile, dtype="f16", major="K").status
'proved'
>>> v = check_descriptor(encode(lbo=128, sbo=1024), tile, dtype="f16", major="K")   # LBO and SBO swapped
>>> v.status, v.counterexample["mn"], v.counterexample["k"]
('counterexample', 8, 0)

Equality is decided by bases when both address functions are certified
GF(2)-affine in the coordinate bits (no carries possible), or split into a GF(2)
part below some address bit and an integer-linear part above it
(:meth:`AddressFunction.split`); otherwise by z3 over bit-vectors of the coordinates.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from verilayout.bits import ceil_log2, index_bits, log2
from verilayout.core.cute import ComposedLayout, Layout, flatten
from verilayout.core.cute.swizzle import PhasedSwizzle, Swizzle
from verilayout.errors import LayoutError
from verilayout.bits import plain_ints
from verilayout.hw.nvidia.descriptor import ABSOLUTE_LBO_K_BYTES, ADDR_BITS, SMEM_WINDOW, AddressFunction, Descriptor, Finding, Term, contract_findings, decode, hardware_address_function, operand_bits, operand_k, pattern_repeat_bytes, required_base_offset
from verilayout.dtypes import require_major
from verilayout.hw.nvidia.wgmma import OperandLayout
from verilayout.core.linear_layout import LinearLayout
from verilayout.core.smt import Verdict, check_claim

__all__ = ["TileAddress", "strided_tile", "linear_tile", "cute_tile", "intended_tile", "as_descriptor",
           "fp4_padded_slots",
           "OperandBlock", "operand_block", "check_descriptor", "check_block", "equal_addresses"]

DEFAULT_TIMEOUT_MS = 10_000


@dataclass(frozen=True)
class TileAddress:
    """Where an intended layout puts each element of a whole smem tile.

    ``fn`` maps tile coordinates ``(mn, k)`` to bit addresses; ``pattern_start`` is
    the byte address where the layout's swizzle pattern starts counting rows
    (``None``: the swizzle reads absolute address bits, as CuTe's ``smem_ptr``);
    ``swizzle_hint`` is the wgmma swizzle mode the layout's own swizzle matches
    (or None).
    """

    fn: AddressFunction
    dtype: str
    pattern_start: int | None
    swizzle_hint: str | None
    text: str = ""

    @property
    def mn_extent(self) -> int:
        return self.fn.domain["mn"]

    @property
    def k_extent(self) -> int:
        return self.fn.domain["k"]


_HINTS = {1: "32B", 2: "64B", 3: "128B"}


def _hint(bits: int, base_bits: int, shift: int) -> str | None:
    """A swizzle on bit addresses matching the wgmma ``Swizzle<B,4,3>`` on bytes."""
    if bits == 0:
        return "none"
    if base_bits == 7 and shift == 3 and bits in _HINTS:
        return _HINTS[bits]
    return None


def _mode_terms(coord: str, shape, stride, bits: int) -> tuple[list[Term], int]:
    """CuTe crd2idx of one top-level mode as terms (colexicographic sub-modes)."""
    shapes = list(flatten(shape)) if isinstance(shape, tuple) else [shape]
    strides = list(flatten(stride)) if isinstance(stride, tuple) else [stride]
    terms, div = [], 1
    for i, (s, d) in enumerate(zip(shapes, strides)):
        s, d = int(s), int(d)
        last = i == len(shapes) - 1
        if s > 1 and d != 0:
            terms.append(Term(coord, div, 0 if last else s, d * bits))
        div *= s
    return terms, div


def strided_tile(shape, stride, *, dtype: str, swizzle: tuple[int, int, int] | None = None,
                 swizzle_units: str = "bytes", offset: int = 0, base_address: int = 0,
                 mn_dim: int = 0, text: str = "") -> TileAddress:
    """A rank-2 CuTe layout ``[swizzle o] offset o shape:stride`` (strides in elements)
    as a tile address function.

    ``swizzle=(B, M, S)`` acts on byte addresses (``swizzle_units="bytes"``, CuTe's
    ``smem_ptr``: absolute addresses, so ``base_address`` is inside the swizzle) or on
    element offsets (``"elements"``: relative to ``base_address``). ``mn_dim`` says
    which mode is M/N (the other is K).

    >>> t = strided_tile(((8, 8), (64, 1)), ((64, 512), (1, 0)), dtype="f16", swizzle=(3, 4, 3))
    >>> t.mn_extent, t.k_extent, t.swizzle_hint, t.fn.eval(1, 0) // 8
    (64, 64, '128B', 144)
    """
    bits = operand_bits(dtype)
    if not isinstance(shape, tuple) or len(shape) != 2 or not isinstance(stride, tuple) \
            or len(stride) != 2:
        raise LayoutError("a wgmma operand tile is a rank-2 layout (MN, K); got shape "
                          f"{shape!r}")
    if mn_dim not in (0, 1):
        raise LayoutError(f"mn_dim = {mn_dim!r}: expected 0 or 1")
    base_address = _check_base(base_address)
    coords = ("mn", "k") if mn_dim == 0 else ("k", "mn")
    terms, ext = [], {}
    for c, s, d in zip(coords, shape, stride):
        t, size = _mode_terms(c, s, d, bits)
        terms += t
        ext[c] = size
    extents = (("mn", ext["mn"]), ("k", ext["k"]))
    lg = log2(bits)
    if swizzle is None or swizzle[0] == 0:
        fn = AddressFunction(extents, tuple(terms), const=offset * bits, post=base_address * 8)
        return TileAddress(fn, dtype, base_address, "none" if swizzle else None, text)
    b, m, s = swizzle
    if s < b:
        raise LayoutError(f"Swizzle<{b},{m},{s}>: S must be >= B for a wgmma layout")
    if swizzle_units == "bytes":
        sw = PhasedSwizzle(Swizzle(b, m + 3, s))
        fn = AddressFunction(extents, tuple(terms), const=base_address * 8 + offset * bits,
                             swizzle=sw)
        return TileAddress(fn, dtype, None, _hint(b, m + 3, s), text)
    if swizzle_units == "elements":
        sw = PhasedSwizzle(Swizzle(b, m + lg, s))
        fn = AddressFunction(extents, tuple(terms), const=offset * bits, swizzle=sw,
                             post=base_address * 8)
        return TileAddress(fn, dtype, base_address, _hint(b, m + lg, s), text)
    raise LayoutError(f"swizzle_units {swizzle_units!r}: expected bytes or elements")


def _check_base(base_address) -> int:
    if not isinstance(base_address, int) or isinstance(base_address, bool) or base_address < 0:
        raise LayoutError(f"base_address = {base_address!r}: expected a byte address >= 0")
    if base_address >= SMEM_WINDOW:
        raise LayoutError(f"base_address = {base_address:#x} is outside the 256 KiB shared window")
    return base_address


def cute_tile(obj, *, dtype: str, base_address: int = 0, mn_dim: int = 0, text: str = "") -> TileAddress:
    """A :mod:`verilayout.cute` Layout / ComposedLayout as a tile address function.

    >>> c = ComposedLayout(Swizzle(1, 4, 3), Layout(((8, 4), (16, 1)), ((16, 128), (1, 0))), ptr_bits=16)
    >>> cute_tile(c, dtype="f16").swizzle_hint
    '32B'
    """
    bits = operand_bits(dtype)
    if isinstance(obj, ComposedLayout):
        if obj.elem_bits is not None and obj.elem_bits != bits:
            raise LayoutError(f"the layout is for {obj.elem_bits}-bit elements but dtype {dtype} "
                              f"has {bits} bits")
        layout, swz = obj.layout, obj.swizzle
        units = obj.swizzle_units
        if not swz.is_identity and units is None:
            raise LayoutError(f"the units of {swz} are unknown: say whether it acts on byte "
                              "addresses or element offsets (swizzle_units)")
        if swz.shift < 0:
            raise LayoutError(f"{swz}: a negative shift is not a wgmma swizzle")
        sw = (swz.bits, swz.base, swz.shift)
        offset = int(obj.offset)
    elif isinstance(obj, Layout):
        layout, sw, units, offset = obj, None, "bytes", 0
    else:
        raise LayoutError(f"expected a CuTe Layout or ComposedLayout, got {type(obj).__name__}")
    if layout.is_symbolic:
        raise LayoutError(f"layout {layout} has symbols {sorted(map(str, layout.free_symbols))}; "
                          "substitute them first")
    if layout.rank != 2:
        raise LayoutError(f"a wgmma operand tile is a rank-2 layout (MN, K); {layout} has rank "
                          f"{layout.rank}")
    return strided_tile(tuple(layout.shape), tuple(layout.stride), dtype=dtype, swizzle=sw,
                        swizzle_units=units or "bytes", offset=offset, base_address=base_address,
                        mn_dim=mn_dim, text=text or str(obj))


def linear_tile(layout: LinearLayout, *, dtype: str, base_address: int = 0, mn_dim: int = 0,
                text: str = "") -> TileAddress:
    """A shared-memory linear layout (``offset[, block] -> dim0, dim1``, Triton's
    convention; or ``dim0, dim1 -> offset``) as a tile address function. Element
    offsets count from ``base_address``.

    >>> L = LinearLayout({"offset": [[0, 1], [0, 2], [0, 4], [1, 0], [2, 0]]}, ["dim0", "dim1"])
    >>> linear_tile(L, dtype="f16").fn.eval(1, 3) // 8      # row 1 starts at element 8
    22
    """
    bits = operand_bits(dtype)
    base_address = _check_base(base_address)
    if mn_dim not in (0, 1):
        raise LayoutError(f"mn_dim = {mn_dim!r}: expected 0 or 1")
    ins, outs = layout.in_dims, layout.out_dims
    if set(outs) == {"dim0", "dim1"} and "offset" in ins:
        extra = {n: s for n, s in ins.items() if n != "offset"}
        if any(s != 1 for s in extra.values()):
            raise LayoutError(f"the layout has input dims {dict(ins)}; only 'offset' (and "
                              "size-1 'block') describe one CTA's tile")
        sub = layout.sublayout(["offset"], ["dim0", "dim1"])
        if not sub.is_invertible():
            raise LayoutError("the shared layout is not a bijection between offsets and "
                              "tile elements, so an element has no single address")
        inv = sub.invert()
    elif set(ins) == {"dim0", "dim1"} and list(outs) == ["offset"]:
        inv = layout
    else:
        raise LayoutError(f"expected a shared layout offset -> (dim0, dim1), got "
                          f"{list(ins)} -> {list(outs)}")
    names = {f"dim{mn_dim}": "mn", f"dim{1 - mn_dim}": "k"}
    cols = []
    for d, blist in inv.bases.items():
        for bit, b in enumerate(blist):
            if b[0]:
                cols.append((names[d], bit, b[0] * bits))
    ext = {names[d]: s for d, s in inv.in_dims.items()}
    fn = AddressFunction((("mn", ext["mn"]), ("k", ext["k"])), xor_cols=tuple(cols),
                         post=base_address * 8)
    return TileAddress(fn, dtype, base_address, None, text)


def fp4_padded_slots(layout: LinearLayout) -> LinearLayout:
    """Triton's ``fp4Padded`` shared layout (byte offsets -> packed e2m1 pairs, its offset basis 3 zero:
    bytes 8-15 of every 16-byte unit are the pad) as the 8-bit slots of single e2m1 values that
    :func:`verilayout.hw.nvidia.descriptor.hardware_address_function` reads.

    Law: the pair at byte ``o`` (``o % 16 < 8``), nibble ``h`` is slot ``16*(o // 16) + 2*(o % 8) + h``
    (16 values of a 16-byte unit in order: PTX ISA 9.7.16.10.4.4, cuda.h 16U4_ALIGN16B), so slot
    bit 0 is the nibble, slot bits 1-3 are offset bits 0-2 and slot bits 4+ are offset bits 4+;
    the packed dim (the one offset bit 0 moves) counts values, twice its pairs.

    >>> L = LinearLayout({"offset": [[0, 1], [0, 2], [0, 4], [0, 0], [1, 0]]}, ["dim0", "dim1"])
    >>> fp4_padded_slots(L).bases["offset"]
    [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0]]
    """
    offs = [list(b) for b in layout.bases.get("offset", [])]
    if len(offs) < 4 or any(offs[3]) or not any(offs[0]) or any(not any(b) for i, b in enumerate(offs) if i != 3):
        raise LayoutError("not an fp4Padded layout: expected offset basis 3 (the pad of each 16-byte "
                          "unit) to be zero and every other offset basis non-zero")
    names = list(layout.out_dims)
    packed = next(i for i, v in enumerate(offs[0]) if v)
    double = lambda b: [v * 2 if i == packed else v for i, v in enumerate(b)]
    bases = {"offset": [[int(i == packed) for i in range(len(names))]]
             + [double(b) for i, b in enumerate(offs) if i != 3]}
    for name, blist in layout.bases.items():
        if name != "offset":
            bases[name] = [double(b) for b in blist]
    sizes = {n: layout.out_dim_size(n) * (2 if i == packed else 1) for i, n in enumerate(names)}
    return LinearLayout(bases, sizes)


def intended_tile(layout: Any, *, dtype: str, base_address: int = 0, mn_dim: int = 0) -> TileAddress:
    """Any intended layout as a :class:`TileAddress`: a TileAddress, a LinearLayout, a CuTe
    object, or an :class:`~verilayout.hw.nvidia.wgmma.OperandLayout` read from text at the door
    (:func:`verilayout.frontends.shared_text.load_operand_layout`).

    Law: a text is refused (read it at the door); an ``OperandLayout`` gives the tile of its layout,
    named by its text, ``fp4Padded`` ones in packed pairs.

    >>> from verilayout.hw.nvidia.wgmma import swizzle_atom
    >>> t = intended_tile(swizzle_atom("128B", "K", "f16").cute_layout(), dtype="f16")
    >>> t.fn.eval(1, 0) // 8        # row 1, 16-byte unit 0 XOR 1
    144
    """
    if isinstance(layout, TileAddress):
        return layout
    if isinstance(layout, LinearLayout):
        offs = layout.bases.get("offset", [])
        if dtype == "e2m1_padded" and len(offs) > 3 and not any(offs[3]):
            layout = fp4_padded_slots(layout)          # Triton's fp4Padded, in packed pairs
        return linear_tile(layout, dtype=dtype, base_address=base_address, mn_dim=mn_dim)
    if isinstance(layout, OperandLayout):
        parsed = layout.layout
        if isinstance(parsed, LinearLayout):
            if layout.fp4_padded:
                parsed = fp4_padded_slots(parsed)
            return linear_tile(parsed, dtype=dtype, base_address=base_address, mn_dim=mn_dim,
                               text=layout.text)
        return cute_tile(parsed, dtype=dtype, base_address=base_address, mn_dim=mn_dim, text=layout.text)
    if isinstance(layout, (Layout, ComposedLayout)):
        return cute_tile(layout, dtype=dtype, base_address=base_address, mn_dim=mn_dim)
    if isinstance(layout, str):
        raise LayoutError("intended layout: text is read at the door "
                          "(verilayout.frontends.shared_text.load_operand_layout), not here")
    name = getattr(layout, "name", None)
    what = f"{type(layout).__name__} ({name})" if isinstance(name, str) else type(layout).__name__
    raise LayoutError(f"cannot read an intended layout from {what}: the descriptor proofs take CuTe "
                      "layouts and GF(2)-linear Triton layouts (a padded layout's offset "
                      "o + pad * (o // interval) is neither)")


def as_descriptor(descriptor, arch: str | None = None) -> Descriptor:
    """A Descriptor from a Descriptor, an int or a hex string (decoded for ``arch``,
    default sm_90).

    >>> as_descriptor("0x4000004000010040").swizzle
    '128B'
    """
    if isinstance(descriptor, Descriptor):
        if arch is not None and arch != descriptor.arch:
            raise LayoutError(f"the descriptor is for {descriptor.arch}, not {arch}")
        return descriptor
    return decode(descriptor, arch or "sm_90")


# ----- the operand block ----------------------------------------------------------------------

@dataclass(frozen=True)
class OperandBlock:
    """Which part of the tile one wgmma reads: ``mn`` x ``k`` elements starting at
    tile coordinate ``(mn_offset, k_offset)``."""

    mn: int
    k: int
    mn_offset: int
    k_offset: int
    k_block: int
    mn_block: int


def operand_block(tile: TileAddress, *, k_block: int = 0, mn: int | None = None,
                  mn_block: int = 0, k: int | None = None) -> OperandBlock:
    """The operand of one wgmma / tcgen05.mma inside ``tile`` (K-block ``k_block``, MN block
    ``mn_block``). ``k``: the K of one instruction (default :func:`operand_k`, 256 bits; the
    48-byte K-blocks of the absolute LBO mode pass ``k`` explicitly).

    >>> t = strided_tile(((8, 8), (8, 2)), ((8, 64), (1, 512)), dtype="f16")
    >>> operand_block(t, k_block=0)
    OperandBlock(mn=64, k=16, mn_offset=0, k_offset=0, k_block=0, mn_block=0)
    """
    kx = operand_k(tile.dtype) if k is None else k
    if not isinstance(kx, int) or isinstance(kx, bool) or kx <= 0 or kx * operand_bits(tile.dtype) % 128:
        raise LayoutError(f"k = {kx!r}: expected a whole number of 16-byte units of {tile.dtype}")
    for name, v in (("k_block", k_block), ("mn_block", mn_block)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise LayoutError(f"{name} = {v!r}: expected an integer >= 0")
    if tile.k_extent % kx:
        raise LayoutError(f"the tile's K extent {tile.k_extent} is not a multiple of one MMA's "
                          f"K ({kx} {tile.dtype} elements = {kx * operand_bits(tile.dtype) // 8} bytes)")
    nk = tile.k_extent // kx
    if k_block >= nk:
        raise LayoutError(f"k_block {k_block} is outside the tile's {nk} K-block(s)")
    if mn is None:
        if tile.mn_extent > 256:
            raise LayoutError(f"the tile's MN extent {tile.mn_extent} exceeds one wgmma (at most "
                              "256); pass mn= (and mn_block=)")
        mn = tile.mn_extent
    if not isinstance(mn, int) or mn % 8 or not 8 <= mn <= 256:
        raise LayoutError(f"mn = {mn!r}: one wgmma reads 8..256 rows of M/N, a multiple of 8")
    if (mn_block + 1) * mn > tile.mn_extent:
        raise LayoutError(f"MN block {mn_block} of {mn} rows is outside the tile's MN extent "
                          f"{tile.mn_extent}")
    return OperandBlock(mn, kx, mn_block * mn, k_block * kx, k_block, mn_block)


# ----- equality of two address functions ------------------------------------------------------

def equal_addresses(a: AddressFunction, b: AddressFunction, *,
                    timeout_ms: int = DEFAULT_TIMEOUT_MS,
                    method: str = "auto") -> tuple[str, tuple[int, int] | None, str]:
    """Decide ``a(mn, k) == b(mn, k)`` on ``a``'s domain.

    Returns ``(status, (mn, k) or None, method)``. Both sides first lose a common
    constant (:meth:`AddressFunction.rebase`); then, at a cut where both certify
    ``f = low + high`` (:meth:`AddressFunction.split`: low GF(2)-affine, high
    integer-linear in the coordinate bits), they are equal iff constants, columns
    and weights are: decided on 0 and the unit vectors, and a difference there is
    the counterexample (``"gf2"`` when no integer part is needed, else ``"split"``).
    Otherwise a domain of at most :data:`ENUMERATION_LIMIT` points is decided on every point
    (``"enumeration"``), a larger one by z3 over bit-vectors. ``method="z3"`` skips both shortcuts.

    >>> f = AddressFunction((("mn", 8), ("k", 8)), terms=(Term("mn", 1, 0, 64), Term("k", 1, 0, 8)))
    >>> equal_addresses(f, f)[0], equal_addresses(f, AddressFunction(f.extents, terms=f.terms[:1]))[1]
    ('proved', (0, 1))
    """
    d = a.domain
    a, b = _rebased(a, b)                           # both minus the same constant
    if method not in ("auto", "z3"):
        raise LayoutError(f"method {method!r}: expected auto or z3")
    if method == "auto":
        decided = _split_decision(a, b)
        if decided is not None:
            return decided
        if d["mn"] * d["k"] <= ENUMERATION_LIMIT:
            return _enumerated_difference(a, b)
    return _z3_decision(a, b, timeout_ms)


def _rebased(a: AddressFunction, b: AddressFunction) -> tuple[AddressFunction, AddressFunction]:
    """Law: ``a`` and ``b`` both minus the largest common constant both can lose (at most four
    rounds of :meth:`AddressFunction.fit`; 0 where they do not agree), so a - b is unchanged."""
    common = min(a.movable(), b.movable())
    for _ in range(4):
        nxt = min(a.fit(common), b.fit(common))
        if nxt == common:
            break
        common = nxt
    if a.fit(common) != common or b.fit(common) != common:
        common = 0
    return a.rebase(common), b.rebase(common)


def _split_decision(a: AddressFunction, b: AddressFunction):
    """Law: at the first cut where both sides certify ``low + high`` (widest GF(2) part first),
    ``("proved", None, how)`` or ``("counterexample", (mn, k), how)`` decided on 0 and the unit
    vectors; None where no cut serves (the caller enumerates or asks z3)."""
    d = a.domain
    cuts = a.cuts() & b.cuts()
    starts = [c for c in range(ADDR_BITS, -1, -1)   # the start of each interval of
              if (cuts >> c) & 1 and not (c and (cuts >> (c - 1)) & 1)]   # valid cuts
    if (cuts >> ADDR_BITS) & 1:
        starts.insert(0, ADDR_BITS)                 # all GF(2) first: the plain bases
    for cut in starts:
        sa, sb = a.split(cut), b.split(cut)
        if sa is None or sb is None:
            continue
        how = "split" if sa.high or sb.high else "gf2"
        cand = _split_difference(sa, sb, d)
        if cand is None:
            return "proved", None, how
        if a.eval(*cand) != b.eval(*cand):
            return "counterexample", cand, how
        break                                       # (cannot happen: both certified) -> z3
    return None


def _z3_decision(a: AddressFunction, b: AddressFunction, timeout_ms: int):
    """Law: ``a(mn, k) == b(mn, k)`` on ``a``'s domain decided by z3 over bit-vectors: proved,
    a counterexample (mn, k), or unknown on a timeout."""
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    d = a.domain
    mn = z3.BitVec("mn", index_bits(d["mn"]))
    k = z3.BitVec("k", index_bits(d["k"]))
    assume = []
    if d["mn"] < 1 << mn.size():
        assume.append(z3.ULT(mn, d["mn"]))
    if d["k"] < 1 << k.size():
        assume.append(z3.ULT(k, d["k"]))
    v = check_claim(a.z3({"mn": mn, "k": k}) == b.z3({"mn": mn, "k": k}), variables={"mn": mn, "k": k},
              assumptions=assume, timeout_ms=timeout_ms, what="address equality")
    if v.status == "proved":
        return "proved", None, "z3"
    if v.status == "unknown":
        return "unknown", None, "z3"
    return "counterexample", (v.counterexample["mn"], v.counterexample["k"]), "z3"


#: Domains up to this many (mn, k) points are decided by evaluating both sides on every point
#: (a proof by exhaustion, method ``enumeration``) instead of asking z3.
ENUMERATION_LIMIT = 1 << 16


def _enumerated_difference(a: AddressFunction, b: AddressFunction) -> tuple[str, tuple[int, int] | None, str]:
    """Both address functions on every point of ``a``'s domain, compared modulo 2^ADDR_BITS (the
    width z3 decides in): proved when every point agrees, else the first point that differs."""
    import numpy as np  # deferred: start-up time (only array code needs numpy)
    diff = (a.table() - b.table()) & ((1 << ADDR_BITS) - 1)
    bad = np.argwhere(diff != 0)
    if not len(bad):
        return "proved", None, "enumeration"
    return "counterexample", (int(bad[0][0]), int(bad[0][1])), "enumeration"


def _split_difference(sa, sb, d) -> tuple[int, int] | None:
    """A coordinate where two certified splits differ (0 or a unit vector), or None."""
    if sa.low.const != sb.low.const or sa.high_const != sb.high_const:
        return (0, 0)
    for c in ("mn", "k"):
        for bit in range(ceil_log2(d[c])):
            key = (c, bit)
            if sa.low.col(c, bit) != sb.low.col(c, bit) or \
                    sa.high.get(key, 0) != sb.high.get(key, 0):
                return (1 << bit, 0) if c == "mn" else (0, 1 << bit)
    return None


# ----- check_descriptor ---------------------------------------------------------------------------------

#: Contract rules that are inferences (reasoning about the address arithmetic), not cited
#: hardware facts: they are reported as notes and never turn an address-exact match into a
#: counterexample; the address proof decides.
INFERRED_RULES = frozenset({"stride-repeat", "inferred-layout"})


def _inferred_note(findings: list[Finding]) -> str:
    return "".join(f"inferred rule {f.rule} (an inference, not a cited hardware fact): {f.message}; "
                   for f in findings)


def _finding_verdict(f: Finding, **details) -> Verdict:
    if f.rule.startswith("unmodelled"):
        return Verdict.unknown(f"not modelled: {f.message}", method="contract", rule=f.rule,
                               **details)
    return Verdict.fails({"rule": f.rule, "finding": f.message},
                         f"contract broken ({f.rule}): {f.message}", method="contract",
                         rule=f.rule, **details)


def _address_bound(fn: AddressFunction) -> int:
    """An upper bound of the byte addresses ``fn`` reaches (interval arithmetic)."""
    d = fn.domain
    top = fn.const
    for t in fn.terms:
        hi = (d[t.coord] - 1 + fn.offset_of(t.coord)) // t.div
        if t.mod:
            hi = min(hi, t.mod - 1)
        top += max(0, t.stride) * hi
    if fn.swizzle is not None:
        top |= fn.swizzle.swizzle.zzz_mask
    return (top + fn.post) // 8


def _fmt_addr(bits_addr: int, elem_bits: int) -> str:
    if elem_bits >= 8:
        return f"byte {bits_addr // 8:#x}"
    return f"byte {bits_addr // 8:#x} bit {bits_addr % 8}"


def check_block(desc: Descriptor, tile: TileAddress, *, major: str, block: OperandBlock,
                 timeout_ms: int = DEFAULT_TIMEOUT_MS, method: str = "auto") -> Verdict:
    """Prove ``desc`` reads ``block`` of ``tile`` (see :func:`check_descriptor`; ``method="z3"``
    forces the solver even where bases decide)."""
    major = require_major(major)
    dtype = tile.dtype
    bits = operand_bits(dtype)
    findings = contract_findings(desc, major=major, dtype=dtype, mn_extent=block.mn)
    for f in findings:
        if f.rule not in INFERRED_RULES:
            return _finding_verdict(f)
    note = _inferred_note([f for f in findings if f.rule in INFERRED_RULES])
    if desc.swizzle != "none":
        start = tile.pattern_start if tile.pattern_start is not None else 0
        need = required_base_offset(desc.swizzle, start)
        if need is None:
            return _finding_verdict(Finding(
                "base-offset", f"the swizzle pattern starts at {start:#x}, which is not on a "
                "128-byte row, so no base offset describes it"))
        if desc.swizzle == "128B_base32B" and (desc.base_offset or need):
            note += ("inferred rule base-offset: the base offset of 128B_base32B is modelled as for "
                     "the PTX modes (phase = 128 * base offset, pattern repeat 512 bytes); PTX ISA "
                     "Table 41 does not list this mode; ")
        if desc.base_offset != need:
            msg = (f"base offset {desc.base_offset}, but the {desc.swizzle} pattern starting at "
                   f"{start:#x} needs {need} ((start >> 7) & 7 unless the start is on a "
                   f"{pattern_repeat_bytes(desc.swizzle)}-byte boundary)")
            if desc.base_offset:
                return _finding_verdict(Finding("base-offset", msg))
            note += f"base-offset rule broken: {msg}; "
    hw = hardware_address_function(desc, major=major, dtype=dtype, mn_extent=block.mn,
                                   k_extent=block.k)
    if _address_bound(hw) >= SMEM_WINDOW:
        top = int(hw.table().max()) // 8
        if top >= SMEM_WINDOW:
            return _finding_verdict(Finding(
                "address-window", f"the descriptor reaches byte {top:#x}, past the 256 KiB "
                "shared-memory window the descriptor addresses"))
    want = tile.fn.restrict({"mn": block.mn_offset, "k": block.k_offset},
                            {"mn": block.mn, "k": block.k})
    status, cand, method = equal_addresses(hw, want, timeout_ms=timeout_ms, method=method)
    where = f"K-block {block.k_block}" + (f", MN block {block.mn_block}" if block.mn_block else "")
    if status == "proved":
        return Verdict.holds(f"{note}for every (mn, k) of the {block.mn}x{block.k} operand ({where}) the "
                             "descriptor reads the element's byte", method=method)
    if status == "unknown":
        return Verdict.unknown(f"{note}the solver gave up on the {where} address equality",
                               method=method)
    mn, k = cand
    a, b = hw.eval(mn, k), want.eval(mn, k)
    cex = {"mn": mn, "k": k, "tile_mn": mn + block.mn_offset, "tile_k": k + block.k_offset,
           "descriptor_address": a // 8, "layout_address": b // 8}
    if bits < 8:
        cex["descriptor_bit"], cex["layout_bit"] = a % 8, b % 8
    reason = (f"{note}at (mn={mn}, k={k}) of {where} (tile element ({cex['tile_mn']}, "
              f"{cex['tile_k']})) the descriptor reads {_fmt_addr(a, bits)} but the layout put the "
              f"element at {_fmt_addr(b, bits)}")
    return Verdict.fails(cex, reason, method=method)


def check_descriptor(descriptor, layout, *, dtype: str, major: str, k_block: int = 0, base_address: int = 0,
           mn: int | None = None, mn_block: int = 0, mn_dim: int = 0, arch: str | None = None,
           timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Verdict:
    """Prove a descriptor reads, for every ``(mn, k)`` of one wgmma K-block, the byte
    where ``layout`` (placed at ``base_address``) put that element.

    ``descriptor``: a :class:`Descriptor`, or the 64-bit value (decoded for ``arch``,
    default sm_90). ``layout``: a CuTe object, a LinearLayout, an ``OperandLayout`` read from
    text at the door, or a :class:`TileAddress` (see :func:`intended_tile`). ``mn_dim``: which dim of the layout
    is M/N (1 for Triton's ``[K, N]`` B operands). ``mn``/``mn_block``: the rows of a
    wider tile one wgmma reads. The counterexample names the coordinate and both
    byte addresses; a descriptor that breaks the contract gets the broken rule. ``dtype`` may be a
    tcgen05 fp4/fp6 type (``e2m1`` packed, ``e2m1_padded``/``e3m2``/``e2m3`` as 8-bit slots); with
    the absolute LBO mode (bit 52) a K-block is 48 bytes (``k_block`` counts those).

    >>> L = ComposedLayout(Swizzle(3, 4, 3), Layout(((8, 8), (64, 1)), ((64, 512), (1, 0))), ptr_bits=16)
    >>> check_descriptor(0x4000004000010000, L, dtype="f16", major="K", k_block=1).status
    'counterexample'
    >>> check_descriptor(0x4000004000010002, L, dtype="f16", major="K", k_block=1).proved
    True
    """
    k_block, base_address, mn, mn_block, mn_dim = plain_ints(
        (k_block, base_address, mn, mn_block, mn_dim))
    desc = as_descriptor(descriptor, arch)
    tile = intended_tile(layout, dtype=dtype, base_address=base_address, mn_dim=mn_dim)
    k = ABSOLUTE_LBO_K_BYTES * 8 // operand_bits(dtype) if desc.lbo_mode else None
    block = operand_block(tile, k_block=k_block, mn=mn, mn_block=mn_block, k=k)
    return check_block(desc, tile, major=major, block=block, timeout_ms=timeout_ms)
