"""Derive wgmma descriptors for shared-memory layouts, and choose layouts for tiles.

Every answer here is checked by the verifier of :mod:`verilayout.prove.wgmma`: a
descriptor is returned only with a proof that it reads the intended bytes.

>>> from verilayout.core.cute import ComposedLayout, Layout
>>> L = ComposedLayout(Swizzle(2, 4, 3), Layout(((32, 2), (8, 2)), ((1, 256), (32, 512))), ptr_bits=16)
>>> d = descriptor_for(L, dtype="f16", major="MN")          # A M-major 64B (PTX ISA 9.7.15.5.1.2.1.3)
>>> d.swizzle, d.lbo_field, d.sbo_field
('64B', 32, 64)
>>> p = synth(dtype="bf16", major="MN", mn=64, k=64)
>>> p.swizzle, p.k_step_bytes, p.verdict.proved
('128B', 2048, True)
"""
from __future__ import annotations

from dataclasses import dataclass

from verilayout.dtypes import Major, NvArch, SwizzleMode, require_major
from verilayout.core.cute.layout import ComposedLayout, Layout, format_cute
from verilayout.core.cute.swizzle import PhasedSwizzle, Swizzle
from verilayout.errors import LayoutError
from verilayout.hw.nvidia.descriptor import SMEM_WINDOW, Descriptor, operand_elems_per_unit, required_base_offset, swizzle_geometry
from verilayout.hw.nvidia.wgmma import dtype_bits, elems_per_unit, k_of_dtype, swizzle_log2, swizzle_units
from verilayout.prove.wgmma import DEFAULT_TIMEOUT_MS, OperandBlock, TileAddress, intended_tile, operand_block, strided_tile, check_block
from verilayout.core.smt import Verdict
from verilayout.bits import plain_ints

__all__ = ["DescriptorPlan", "derive_descriptor", "descriptor_for", "SynthPlan", "synth"]

_CODES = {"sm_90": {"none": 0, "128B": 1, "64B": 2, "32B": 3},
          "sm_100": {"none": 0, "128B": 2, "64B": 4, "32B": 6, "128B_base32B": 1}}


@dataclass(frozen=True)
class DescriptorPlan:
    """A derived descriptor with the proof that it reads the layout's bytes."""

    descriptor: Descriptor
    verdict: Verdict
    block: OperandBlock
    tried: tuple = ()

    def to_dict(self) -> dict:
        return {"descriptor": self.descriptor.to_dict(), "verdict": self.verdict.to_dict(),
                "k_block": self.block.k_block, "mn_block": self.block.mn_block,
                "operand": [self.block.mn, self.block.k]}


def _candidates(tile: TileAddress, arch: str = "sm_90") -> list[str]:
    order = ["128B", "64B", "32B", "none"] + (["128B_base32B"] if arch == "sm_100" else [])
    if tile.swizzle_hint in order:
        order.remove(tile.swizzle_hint)
        order.insert(0, tile.swizzle_hint)
    return order


def _fields(tile: TileAddress, block: OperandBlock, major: Major, swizzle: SwizzleMode,
            base_offset: int) -> tuple[int, int, int] | str:
    """``(start, lbo, sbo)`` in bytes read off the layout, or why they cannot be."""
    fn = tile.fn.restrict({"mn": block.mn_offset, "k": block.k_offset},
                          {"mn": block.mn, "k": block.k})
    b, m, s, krows = swizzle_geometry(swizzle) if swizzle != "none" else (0, 4, 3, 8)
    unswz = PhasedSwizzle(Swizzle(b, m + 3, s), base_offset * 1024) if b else (lambda a: a)
    a00 = unswz(fn.eval(0, 0))
    if a00 % 128:
        return f"element (0, 0) of the operand is at bit address {a00}, not 16-byte aligned"
    start = a00 // 8
    if start >= SMEM_WINDOW:
        return f"the operand starts at {start:#x}, outside the 256 KiB window"
    t = operand_elems_per_unit(tile.dtype)
    w = 8 if swizzle == "128B_base32B" else swizzle_units(swizzle)

    def delta(mn: int, k: int, name: str):
        if mn >= block.mn or k >= block.k:
            return 0                      # the field is never used by this operand
        a = unswz(fn.eval(mn, k))
        if a % 128:
            return f"{name}: element ({mn}, {k}) is at bit address {a}, not 16-byte aligned"
        d = a // 8 - start
        if d < 0:
            return f"{name} would be negative ({d} bytes)"
        if d >> 4 >= 1 << 14:
            return f"{name} = {d} bytes does not fit the 14-bit field"
        return d

    if major == "K":
        sbo = delta(8, 0, "SBO")
        lbo = delta(0, t, "LBO") if swizzle == "none" else 16
    elif swizzle == "none":
        sbo, lbo = delta(t, 0, "SBO"), delta(0, 8, "LBO")
    else:
        lbo, sbo = delta(t * w, 0, "LBO"), delta(0, krows, "SBO")
    for v in (lbo, sbo):
        if isinstance(v, str):
            return v
    return start, lbo, sbo


#: :func:`intended_tile` answers by ``(layout, dtype, base address, MN dim)``: the K-blocks and MN
#: blocks of one operand read one tile (an audit derives a descriptor per block); emptied past 512
_TILES: dict[tuple, TileAddress] = {}


def _tile_of(layout, dtype: str, base_address: int, mn_dim: int) -> TileAddress:
    """``intended_tile(layout, ...)``, once per hashable layout and arguments (a frozen answer)."""
    try:
        key = (layout, dtype, base_address, mn_dim)
        hit = _TILES.get(key)
    except TypeError:                        # a layout that is not hashable: computed each time
        return intended_tile(layout, dtype=dtype, base_address=base_address, mn_dim=mn_dim)
    if hit is None:
        if len(_TILES) >= 512:
            _TILES.clear()
        hit = _TILES[key] = intended_tile(layout, dtype=dtype, base_address=base_address, mn_dim=mn_dim)
    return hit


def derive_descriptor(layout, *, dtype: str, major: Major, k_block: int = 0, base_address: int = 0,
                      mn: int | None = None, mn_block: int = 0, mn_dim: int = 0,
                      arch: NvArch = "sm_90", timeout_ms: int = DEFAULT_TIMEOUT_MS) -> DescriptorPlan:
    """The descriptor for one wgmma K-block of ``layout``, with its proof.

    Reads start address, LBO and SBO off the layout for each swizzle mode (the
    layout's own first), sets the base offset by the PTX rule, and keeps the first
    candidate the verifier proves. A layout no descriptor expresses raises
    :class:`LayoutError` naming, per mode, why.

    >>> from verilayout.core.cute import ComposedLayout, Layout
    >>> L = Layout(((8, 4), (8, 2)), ((1, 64), (8, 256)))       # B N-major, no swizzle
    >>> p = derive_descriptor(L, dtype="f16", major="MN")
    >>> p.descriptor.lbo_field, p.descriptor.sbo_field, p.verdict.proved
    (32, 8, True)
    """
    if arch not in _CODES:
        raise LayoutError(f"arch {arch!r}: expected sm_90 or sm_100")
    k_block, base_address, mn, mn_block, mn_dim = plain_ints(
        (k_block, base_address, mn, mn_block, mn_dim))
    major = require_major(major)
    tile = _tile_of(layout, dtype, base_address, mn_dim)
    block = operand_block(tile, k_block=k_block, mn=mn, mn_block=mn_block)
    tried = []
    for sw in _candidates(tile, arch):
        bo = 0
        if sw != "none":
            start = tile.pattern_start if tile.pattern_start is not None else 0
            bo = required_base_offset(sw, start)
            if bo is None:
                tried.append((sw, f"the pattern start {start:#x} is not on a 128-byte row"))
                continue
        fields = _fields(tile, block, major, sw, bo)
        if isinstance(fields, str):
            tried.append((sw, fields))
            continue
        start, lbo, sbo = fields
        desc = Descriptor(start, lbo >> 4, sbo >> 4, bo, _CODES[arch][sw], arch)
        v = check_block(desc, tile, major=major, block=block, timeout_ms=timeout_ms)
        if v.proved:
            return DescriptorPlan(desc, v, block, tuple(tried))
        tried.append((sw, v.reason))
    why = "; ".join(f"{sw}: {r}" for sw, r in tried)
    raise LayoutError(f"no {arch} descriptor reads this layout for K-block {k_block} "
                      f"({major}-major {dtype}): {why}")


def descriptor_for(layout, *, dtype: str, major: Major, k_block: int = 0, base_address: int = 0,
                   **options) -> Descriptor:
    """The descriptor one wgmma K-block needs to read ``layout`` (proved; see
    :func:`derive_descriptor` for the options).

    >>> from verilayout.core.cute import ComposedLayout, Layout
    >>> L = ComposedLayout(Swizzle(1, 4, 3), Layout(((8, 4), (16, 1)), ((16, 128), (1, 0))), ptr_bits=16)
    >>> d = descriptor_for(L, dtype="f16", major="K")          # B K-major 32B
    >>> d.lbo_field, d.sbo_field, d.swizzle
    (1, 16, '32B')
    """
    return derive_descriptor(layout, dtype=dtype, major=major, k_block=k_block,
                             base_address=base_address, **options).descriptor


# ----- choosing a layout -------------------------------------------------------------------

@dataclass(frozen=True)
class SynthPlan:
    """A chosen smem layout, one proved descriptor per K-block, and the start-address step.

    ``k_step_bytes`` is the constant step between consecutive K-blocks' start
    addresses (None when the steps differ; ``k_block_starts`` lists them all).
    """

    dtype: str
    major: Major
    mn: int
    k: int
    swizzle: SwizzleMode
    layout_text: str
    tile: TileAddress
    descriptors: tuple
    k_block_starts: tuple
    k_step_bytes: int | None
    verdict: Verdict
    verdicts: tuple
    base_address: int = 0

    def to_dict(self) -> dict:
        return {"dtype": self.dtype, "major": self.major, "mn": self.mn, "k": self.k,
                "swizzle": self.swizzle, "layout": self.layout_text,
                "base_address": self.base_address,
                "descriptors": [d.to_dict() for d in self.descriptors],
                "k_block_starts": list(self.k_block_starts), "k_step_bytes": self.k_step_bytes,
                "verdict": self.verdict.to_dict()}


def _atom_fits(major: Major, sw: SwizzleMode, dtype: str, mn: int, k: int) -> bool:
    t, w = elems_per_unit(dtype), swizzle_units(sw)
    if major == "MN":
        return mn % (t * w) == 0 and k % 8 == 0
    return mn % 8 == 0 and k % (t * w) == 0


def _tiled(major: Major, sw: SwizzleMode, dtype: str, mn: int, k: int) -> tuple[tuple, tuple]:
    """CuTe's ``tile_to_shape(atom, (mn, k))`` (atoms column-major) as (shape, stride)."""
    t, w = elems_per_unit(dtype), swizzle_units(sw)
    if major == "MN":
        amn, ak, smn, sk = t * w, 8, 1, t * w
    else:
        amn, ak, smn, sk = 8, t * w, t * w, 1
    size = amn * ak
    nmn, nk = mn // amn, k // ak
    shape = ((amn, nmn), (ak, nk))
    stride = ((smn, size if nmn > 1 else 0), (sk, size * nmn if nk > 1 else 0))
    return shape, stride


def synth(*, dtype: str, major: Major, mn: int, k: int, arch: NvArch = "sm_90", base_address: int = 0,
          timeout_ms: int = DEFAULT_TIMEOUT_MS) -> SynthPlan:
    """Choose the smem layout of an ``mn x k`` operand tile (the widest swizzle whose
    atom fits), its descriptor for every K-block, and the start-address step; proved.

    >>> p = synth(dtype="f16", major="K", mn=64, k=64)
    >>> p.layout_text
    'Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_8),(_64,_1)):((_64,_512),(_1,_0))'
    >>> p.k_step_bytes, [hex(d.value) for d in p.descriptors][:2]
    (32, ['0x4000004000010000', '0x4000004000010002'])
    """
    mn, k, base_address = plain_ints((mn, k, base_address))
    major = require_major(major)
    bits = dtype_bits(dtype)
    if arch not in _CODES:
        raise LayoutError(f"arch {arch!r}: expected sm_90 or sm_100")
    if arch == "sm_90" and major == "MN" and bits != 16:
        raise LayoutError(f"wgmma reads MN-major operands only for f16/bf16; make the {dtype} "
                          "operand K-major")
    for name, v in (("mn", mn), ("k", k)):
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            raise LayoutError(f"{name} = {v!r}: expected a positive integer")
    kx = k_of_dtype(dtype)
    if k % kx:
        raise LayoutError(f"k = {k} is not a multiple of one wgmma's K ({kx} for {dtype})")
    if mn % 8 or mn > 256:
        raise LayoutError(f"mn = {mn}: one wgmma reads 8..256 rows, a multiple of 8")
    fits = [sw for sw in ("128B", "64B", "32B", "none") if _atom_fits(major, sw, dtype, mn, k)]
    if not fits:
        t = elems_per_unit(dtype)
        raise LayoutError(f"no swizzle atom fits a {mn}x{k} {major}-major {dtype} tile "
                          f"(the smallest needs {'mn' if major == 'MN' else 'k'} to be a multiple "
                          f"of {t})")
    sw = fits[0]
    shape, stride = _tiled(major, sw, dtype, mn, k)
    b = swizzle_log2(sw)
    text = format_cute(ComposedLayout(Swizzle(b, 4, 3), Layout(shape, stride), ptr_bits=bits))   # CuTe's print
    tile = strided_tile(shape, stride, dtype=dtype, swizzle=(b, 4, 3), swizzle_units="bytes",
                        base_address=base_address, text=text)
    plans = [derive_descriptor(tile, dtype=dtype, major=major, k_block=i, arch=arch,
                               timeout_ms=timeout_ms) for i in range(k // kx)]
    starts = tuple(p.descriptor.start_address for p in plans)
    steps = {b2 - a for a, b2 in zip(starts, starts[1:])}
    step = steps.pop() if len(steps) == 1 else (0 if not steps else None)
    verdicts = tuple(p.verdict for p in plans)
    verdict = Verdict.holds(f"all {len(plans)} K-block descriptors read the {sw} {major}-major "
                            f"layout's bytes", method="+".join(sorted({v.method for v in verdicts})))
    return SynthPlan(dtype, major, mn, k, sw, text, tile, tuple(p.descriptor for p in plans),
                     starts, step, verdict, verdicts, base_address)
