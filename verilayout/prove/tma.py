"""Prove that what TMA writes into a shared-memory ring is what its reader reads, at any base.

The claim, for a tensor map ``t`` (:mod:`verilayout.hw.nvidia.tma`), a reader, a ring of
``stages`` buffers ``stage_bytes`` apart and every buffer base allowed by the stated alignment:

    for every stage s, every tile coordinate (mn, k):
        TMA's byte of (mn, k) in stage s  ==  the reader's byte of (mn, k) in stage s

where TMA writes ``copies`` boxes side by side along its inner dimension (copy ``j`` at
``stage base + j * box bytes``, as Triton's and CUTLASS's multi-box tiles do) with the swizzle on
the ABSOLUTE address, and the reader is

* a layout (:func:`layout_reader`): CuTe text/objects, Triton ``#ttg.*`` text, a LinearLayout
  ``offset -> dim0, dim1``, or a :class:`~verilayout.prove.wgmma.TileAddress`. A CuTe swizzle on
  byte addresses (``smem_ptr``) is absolute; a swizzle on element offsets and every linear layout
  (Triton computes shared offsets from the buffer start) is buffer-RELATIVE: such a reader agrees
  with TMA only on buffers aligned to the swizzle repeat (1024 bytes for 128B);
* wgmma/tcgen05 descriptors (:func:`descriptor_reader`): one descriptor per (MN block, K-block),
  start address = stage base + ``start_address + kb * k_step + mb * mn_step``, read through the
  hardware address model (:func:`verilayout.hw.nvidia.descriptor.hardware_address_function`).

Assumptions, stated in every verdict: base = a multiple of ``base_align`` (default 128, the TMA
destination alignment; or one concrete ``base``), and the whole ring below the 256 KiB shared
window. The base and the stage are z3 variables, so "proved" covers every such base and stage.
A counterexample names the base, the stage, the coordinate, the byte TMA wrote and the byte the
reader reads. A box larger than the reader's tile (or than a stage) is a counterexample at the
first coordinate the reader does not read, with the reader's (stage, coordinate) that the write
lands on.

>>> from verilayout.hw.nvidia.tma import TensorMap
>>> from verilayout.frontends.shared_text import load_operand_layout     # the door: text read there
>>> t = TensorMap("f16", global_dims=(4096, 4096), box=(64, 64), swizzle="128B")
>>> r = layout_reader(load_operand_layout("Sw<3,4,3> o smem_ptr[16b](unset) o (64,64):(64,1)", dtype="f16"),
...                   dtype="f16")
>>> check_ring(t, r, stages=4, stage_bytes=8192).status          # absolute reader: any 128-aligned base
'proved'
>>> rel = layout_reader(load_operand_layout("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, "
...                     "elementBitWidth = 16}>", dtype="f16", shape=[64, 64]), dtype="f16")
>>> v = check_ring(t, rel, stages=4, stage_bytes=8192); v.status, v.counterexample["base"] % 1024 != 0
('counterexample', True)
>>> check_ring(t, rel, stages=4, stage_bytes=8192, base_align=1024).status
'proved'
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from verilayout.bits import index_bits
from verilayout.core.smt import Verdict, check_claim
from verilayout.errors import LayoutError
from verilayout.hw.nvidia.descriptor import ADDR_BITS, SMEM_WINDOW, Descriptor, contract_findings, hardware_address_function, operand_bits
from verilayout.core.linear_layout import LinearLayout
from verilayout.hw.nvidia.tma import SMEM_ALIGN, Limit, TensorMap, TmaEncoding, limit_findings, require_arch, tma_element_bits, write_address, write_z3
from verilayout.dtypes import require_major
from verilayout.hw.nvidia.wgmma import k_of_dtype
from verilayout.prove.wgmma import INFERRED_RULES, TileAddress, as_descriptor, intended_tile

__all__ = ["LayoutReader", "DescriptorReader", "layout_reader", "descriptor_reader", "check_ring",
           "triton_copy_verdict", "squeeze_block", "rows_view", "slot_type", "HOST_NOTE", "DEFAULT_TIMEOUT_MS"]

DEFAULT_TIMEOUT_MS = 20_000
_B = ADDR_BITS


@dataclass(frozen=True)
class LayoutReader:
    """A reader that reads tile element ``(mn, k)`` at ``stage base + offset + tile(mn, k)``;
    ``relative``: its swizzle counts from the buffer start (else from address 0)."""

    tile: TileAddress
    relative: bool
    offset: int = 0

    @property
    def extents(self) -> tuple[int, int]:
        return self.tile.mn_extent, self.tile.k_extent

    @property
    def dtype(self) -> str:
        return self.tile.dtype

    def describe(self) -> str:
        return (f"layout {self.tile.text or self.tile.fn.name or '(given)'} "
                f"({'buffer-relative' if self.relative else 'absolute'} swizzle)")


@dataclass(frozen=True)
class DescriptorReader:
    """wgmma/tcgen05 reads: descriptor ``desc`` (its start address relative to the stage base) for
    MN block ``mb`` < ``mn_blocks`` of ``mn`` rows and K-block ``kb`` < ``k_blocks``, started at
    ``desc.start_address + kb * k_step + mb * mn_step`` bytes into the stage."""

    desc: Descriptor
    major: str
    dtype: str
    mn: int
    k_blocks: int = 1
    k_step: int = 0
    mn_blocks: int = 1
    mn_step: int = 0

    @property
    def extents(self) -> tuple[int, int]:
        return self.mn * self.mn_blocks, k_of_dtype(self.dtype) * self.k_blocks

    def describe(self) -> str:
        return (f"descriptor {self.desc.value:#x} ({self.major}-major, {self.mn_blocks} x {self.mn} rows, "
                f"{self.k_blocks} K-block(s), k_step {self.k_step} B, mn_step {self.mn_step} B)")


def layout_reader(layout: Any, *, dtype: str, mn_dim: int = 0, offset: int = 0,
                  relative: bool | None = None) -> LayoutReader:
    """A layout (any parsed layout :func:`~verilayout.prove.wgmma.intended_tile` takes; text is
    read at the door, :func:`verilayout.frontends.shared_text.load_operand_layout`) as a reader
    (see the module text for which layouts swizzle relative addresses; ``relative`` overrides it,
    e.g. for an ldmatrix reader that XORs buffer offsets itself).

    >>> from verilayout.hw.nvidia.wgmma import swizzle_atom
    >>> layout_reader(swizzle_atom("64B", "K", "f16").cute_layout(), dtype="f16").relative
    False
    """
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise LayoutError(f"reader offset {offset!r}: expected bytes >= 0")
    tile = intended_tile(layout, dtype=slot_type(dtype), base_address=0, mn_dim=mn_dim)
    rel = tile.pattern_start is not None if relative is None else bool(relative)
    return LayoutReader(tile, rel, offset)


def slot_type(dtype: str) -> str:
    """The element type a layout reader of ``dtype`` elements reads its layout as (what the door,
    :func:`verilayout.frontends.shared_text.load_operand_layout`, reads the reader's text for).

    Law: an MMA operand type unchanged (its slot width is :func:`operand_bits`'s); any other
    element type a tensor map moves (``f32``, ``f64``, ``i32``, ``ui8``, ``FLOAT64``, ...) as the
    untyped storage element of its width (``b32``, ``b64``, ...); else LayoutError.

    >>> slot_type("f16"), slot_type("u16"), slot_type("FLOAT64")
    ('f16', 'b16', 'b64')
    """
    try:
        operand_bits(dtype)
        return dtype
    except LayoutError:
        pass
    bits = tma_element_bits(dtype)
    if bits not in (8, 16, 32, 64):
        raise LayoutError(f"reader element type {dtype!r} ({bits} bits): a layout reader reads whole bytes")
    return f"b{bits}"


def descriptor_reader(descriptor, *, major: str, dtype: str, mn: int, k_blocks: int = 1,
                      k_step: int | None = None, mn_blocks: int = 1, mn_step: int | None = None,
                      arch: str | None = None) -> DescriptorReader:
    """Descriptors as a reader. ``k_step`` (bytes the start advances per K-block) defaults to the
    K-major swizzled advance, one K-block's bytes along the row (``K * element bytes``, as CUTLASS's
    descriptor iterator and Triton advance it inside one swizzle atom; K-blocks past the atom's row
    need their own start, and the proof refutes the default there); other cases must give it when
    ``k_blocks > 1``.
    ``mn_step`` must be given when ``mn_blocks > 1``.

    >>> r = descriptor_reader("0x4000004000010000", major="K", dtype="f16", mn=64, k_blocks=4)
    >>> r.k_step, r.extents
    (32, (64, 64))
    """
    desc = as_descriptor(descriptor, arch)
    mj = require_major(major)
    for name, v in (("mn", mn), ("k_blocks", k_blocks), ("mn_blocks", mn_blocks)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise LayoutError(f"descriptor reader {name} = {v!r}: expected an integer >= 1")
    if k_step is None:
        if k_blocks > 1 and (mj != "K" or desc.swizzle == "none"):
            raise LayoutError("k_step: give the bytes the descriptor start advances per K-block "
                              "(only the K-major swizzled advance has a default)")
        k_step = k_of_dtype(dtype) * _bytes(dtype) if k_blocks > 1 else 0
    if mn_step is None:
        if mn_blocks > 1:
            raise LayoutError("mn_step: give the bytes between the MN blocks' descriptor starts")
        mn_step = 0
    for name, v in (("k_step", k_step), ("mn_step", mn_step)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 0 or v % 16:
            raise LayoutError(f"descriptor reader {name} = {v!r}: expected bytes >= 0, a multiple of 16")
    return DescriptorReader(desc, mj, dtype, mn, k_blocks, k_step, mn_blocks, mn_step)


def _bytes(dtype: str) -> int:
    return tma_element_bits(dtype) // 8


# ----- z3 encodings -----------------------------------------------------------------------------

def _bv(x, width: int = _B) -> z3.BitVecRef:
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    if isinstance(x, int):
        return z3.BitVecVal(x, width)
    return z3.ZeroExt(width - x.size(), x) if x.size() < width else x


def _layout_bits(r: LayoutReader, base: z3.BitVecRef, mn, k) -> z3.BitVecRef:
    """Bit address the layout reader reads ``(mn, k)`` at, the stage starting at byte ``base``."""
    fn = r.tile.fn
    start = (base + r.offset) * 8
    v = {"mn": mn, "k": k}
    if r.relative or fn.swizzle is None:
        return fn.z3(v) + start
    inner = replace(fn, swizzle=None, post=0).z3(v) + start
    return fn.swizzle.z3(inner) + fn.post


def _descriptor_bits(r: DescriptorReader, base: z3.BitVecRef, mn, k, mb: int, kb: int) -> z3.BitVecRef:
    """Bit address descriptor block ``(mb, kb)`` reads its ``(mn, k)`` at (block-local coordinates)."""
    fn = hardware_address_function(r.desc.with_start(0), major=r.major, dtype=r.dtype, mn_extent=r.mn)
    start = (base + r.desc.start_address + kb * r.k_step + mb * r.mn_step) * 8
    inner = replace(fn, swizzle=None, post=0).z3({"mn": mn, "k": k}) + start
    return (fn.swizzle.z3(inner) if fn.swizzle is not None else inner) + fn.post


def _tma_bits(t: TensorMap, copies: int, stage_base, x, y) -> z3.BitVecRef:
    """Bit address TMA writes tile coordinate (inner x, outer y) at."""
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    n0 = t.smem_box[0]
    xv = _bv(x)
    j = z3.UDiv(xv, n0)
    x0 = z3.URem(xv, n0)
    others = [z3.BitVecVal(0, 8)] * (t.rank - 2)
    coord = (x0, _bv(y)) + tuple(others) if t.rank >= 2 else (x0,)
    return write_z3(t, stage_base + j * t.smem_bytes, coord) * 8


def _eval(e: z3.BitVecRef) -> int:
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    return z3.simplify(e).as_long()


# ----- the proof --------------------------------------------------------------------------------

def _int_arg(name: str, v, lo: int) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or v < lo:
        raise LayoutError(f"{name} = {v!r}: expected an integer >= {lo}")
    return v


def check_ring(tmap: TensorMap, reader: LayoutReader | DescriptorReader, *, stages: int = 1,
                stage_bytes: int | None = None, base_align: int = 128, base: int | None = None,
                copies: int = 1, inner: str | None = None, trust_inferred: bool = False,
                arch: str | None = None, start=None, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Verdict:
    """Prove TMA's writes into every stage of the ring equal what ``reader`` reads (module text).

    ``inner`` is the reader coordinate that is TMA's dim 0: ``"k"`` (default for K-major readers
    and row-major tiles) or ``"mn"`` (MN-major descriptors default to it). Swizzle modes whose
    pattern is an inference answer ``unknown`` unless ``trust_inferred`` (then the reason says so).
    ``arch`` (default: the descriptor reader's, else sm_90) picks the measured per-architecture rules
    (the 128B_ATOM_* modes are refused on sm_90 and an inference on sm_100). A box narrower than the
    swizzle span is written with its rows padded to the span (measured on the H100). ``start``: the
    global coordinate a load starts at (dims innermost first); its innermost one must be a multiple
    of 16 bytes (measured).

    >>> from verilayout.hw.nvidia.tma import TensorMap
    >>> t = TensorMap("bf16", global_dims=(4096, 4096), box=(32, 64), swizzle="64B")
    >>> from verilayout.core.cute import ComposedLayout, Layout, Swizzle
    >>> r = layout_reader(ComposedLayout(Swizzle(3, 4, 3), Layout((64, 32), (32, 1)), ptr_bits=16), dtype="bf16")
    >>> v = check_ring(t, r, base_align=1024); v.status, sorted(v.counterexample)[:3]
    ('counterexample', ['base', 'k', 'mn'])
    """
    stages, copies, base_align, base = _ring_arguments(tmap, reader, stages, copies, base_align,
                                                       base)
    if tmap.bits % 8 or tmap.interleave != "none":
        return Verdict.unknown(f"the shared-memory placement of {tmap.dtype} / interleave {tmap.interleave} "
                               "is not modelled", method="model")
    if tmap.bits != _bits_of(reader.dtype if isinstance(reader, DescriptorReader) else reader.tile.dtype):
        raise LayoutError(f"the tensor map moves {tmap.bits}-bit elements but the reader reads "
                          f"{reader.dtype if isinstance(reader, DescriptorReader) else reader.tile.dtype}")
    if tmap.rank < 2 or any(b != 1 for b in tmap.smem_box[2:]):
        raise LayoutError(f"box {list(tmap.box)}: the ring proof covers 2-d boxes (outer dims of 1)")
    tile_bytes = copies * tmap.smem_bytes
    stage_bytes = tile_bytes if stage_bytes is None else _int_arg("stage_bytes", stage_bytes, 1)
    if inner is None:
        inner = "mn" if isinstance(reader, DescriptorReader) and reader.major == "MN" else "k"
    if inner not in ("k", "mn"):
        raise LayoutError(f"inner = {inner!r}: expected 'k' or 'mn'")
    arch = require_arch(arch if arch is not None else
                      reader.desc.arch if isinstance(reader, DescriptorReader) else "sm_90")
    notes = tmap.notes(arch)
    if notes and not trust_inferred:
        return Verdict.unknown(f"the write model rests on an inference ({'; '.join(notes)}); pass "
                               "trust_inferred to prove under it", method="model", notes=notes)
    broken = _limit_or_contract(tmap, reader, base, base_align, arch, start)
    if broken is not None:
        return broken
    assume = _assumption_text(base, base_align, stages, stage_bytes)
    pre = "; ".join(notes) + "; " if notes else ""
    # ----- domains and stage overlap (concrete) ----------------------------------------------
    r_mn, r_k = reader.extents
    r_inner, r_outer = (r_k, r_mn) if inner == "k" else (r_mn, r_k)
    t_inner, t_outer = copies * tmap.smem_box[0], tmap.smem_box[1]
    b0 = base if base is not None else 0
    if (t_inner, t_outer) != (r_inner, r_outer) or (stages > 1 and tile_bytes > stage_bytes):
        return _domain_verdict(tmap, reader, inner, copies, stages, stage_bytes, b0, (t_inner, t_outer),
                               (r_inner, r_outer), pre + assume)
    return _symbolic_ring(tmap, reader, (inner, copies, stages, stage_bytes, base, base_align),
                          timeout_ms, pre, assume)


def _ring_arguments(tmap, reader, stages, copies, base_align, base) -> tuple:
    """Law: (stages, copies, base_align, base) when the types and ranges are right (a base
    inside the 256 KiB shared window); else LayoutError names the argument."""
    if not isinstance(tmap, TensorMap):
        raise LayoutError(f"expected a TensorMap, got {type(tmap).__name__}")
    if not isinstance(reader, (LayoutReader, DescriptorReader)):
        raise LayoutError(f"expected a layout_reader(...) or descriptor_reader(...), got {type(reader).__name__}")
    stages, copies = _int_arg("stages", stages, 1), _int_arg("copies", copies, 1)
    base_align = _int_arg("base_align", base_align, 1)
    if base is not None:
        base = _int_arg("base", base, 0)
        if base >= SMEM_WINDOW:
            raise LayoutError(f"base = {base:#x} is outside the 256 KiB shared window")
    return stages, copies, base_align, base


def _limit_or_contract(tmap: TensorMap, reader, base: int | None, base_align: int,
                       arch: str = "sm_90", start=None) -> Verdict | None:
    """Law: the failing Verdict of the first hardware limit the tensor map or buffer base breaks,
    else of the first contract rule (not an inferred one) a descriptor reader breaks (unknown where
    the rule is unmodelled); None when neither breaks one."""
    lims = limit_findings(tmap, arch=arch, start=start)
    if base is not None and base % SMEM_ALIGN:
        lims.append(Limit("smem-alignment", f"the buffer base {base:#x} is not {SMEM_ALIGN}-byte aligned",
                          "PTX ISA cp.async.bulk.tensor"))
    elif base is None and base_align % SMEM_ALIGN:
        lims.append(_align_limit(base_align))
    if lims:
        f = lims[0]
        return Verdict.fails({"rule": f.rule, "finding": f.message},
                             f"the tensor map breaks a hardware limit ({f.rule}): {f.message} [{f.source}]",
                             method="limits", rule=f.rule, source=f.source)
    if isinstance(reader, DescriptorReader):
        for fd in contract_findings(reader.desc, major=reader.major, dtype=reader.dtype, mn_extent=reader.mn):
            if fd.rule not in INFERRED_RULES:
                if fd.rule.startswith("unmodelled"):
                    return Verdict.unknown(f"not modelled: {fd.message}", method="contract", rule=fd.rule)
                return Verdict.fails({"rule": fd.rule, "finding": fd.message},
                                     f"the descriptor breaks its contract ({fd.rule}): {fd.message}",
                                     method="contract", rule=fd.rule)
    return None


def _symbolic_ring(tmap: TensorMap, reader, ring: tuple, timeout_ms: int, pre: str,
                   assume: str) -> Verdict:
    """Law: proved when z3 shows, piece by piece of the reader, that TMA's write of every element
    of every stage is the byte the reader reads, over every base the assumption allows; else the
    first counterexample (both bytes) or unknown on a timeout."""
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    inner, copies, stages, stage_bytes, base, base_align = ring
    r_mn, r_k = reader.extents
    qbits = max(1, (SMEM_WINDOW // base_align).bit_length())
    q = z3.BitVec("q", qbits)
    s = z3.BitVec("stage", index_bits(stages))
    base_e = _bv(base) if base is not None else _bv(q) * base_align
    stage_base = base_e + _bv(s) * stage_bytes
    cons = [z3.ULT(_bv(s), stages)]
    if base is None:
        cons.append(z3.ULE(_bv(q) * base_align + stages * stage_bytes, SMEM_WINDOW))
        cons.append(z3.ULT(_bv(q), SMEM_WINDOW // base_align + 1))
    pieces = _pieces(reader)
    for (mb, kb, mn_off, k_off, mn_n, k_n) in pieces:
        mn = z3.BitVec("mn", index_bits(mn_n))
        k = z3.BitVec("k", index_bits(k_n))
        cc = cons + [z3.ULT(_bv(mn, 16), mn_n), z3.ULT(_bv(k, 16), k_n)]
        gmn, gk = _bv(mn) + mn_off, _bv(k) + k_off
        x, y = (gk, gmn) if inner == "k" else (gmn, gk)
        tma = _tma_bits(tmap, copies, stage_base, x, y)
        if isinstance(reader, DescriptorReader):
            rd = _descriptor_bits(reader, stage_base, mn, k, mb, kb)
        else:
            rd = _layout_bits(reader, stage_base, gmn, gk)
        v = check_claim(tma == rd, variables={"q": q, "stage": s, "mn": mn, "k": k}, assumptions=cc,
                  timeout_ms=timeout_ms, what="TMA write == reader read")
        if v.status == "unknown":
            return Verdict.unknown(f"{pre}z3 gave up on the TMA/reader equality ({assume})", method="z3")
        if v.status == "counterexample":
            return _ring_counterexample(tmap, reader, ring, v.counterexample, pieces,
                                        (mb, kb, mn_off, k_off, mn.size(), k.size()), pre, assume)
    return Verdict.holds(f"{pre}for every stage of the {stages}-stage ring and every element of the "
                         f"{r_mn}x{r_k} tile, TMA's write (SWIZZLE_{tmap.swizzle}, {copies} box(es) of "
                         f"{list(tmap.box)}{_padded_text(tmap)}) is the byte the {reader.describe()} reads ({assume})",
                         method="z3", assumption=assume)


def _padded_text(tmap: TensorMap) -> str:
    """Law: "" for a box as wide as its swizzle span; else the padded row pitch and its source."""
    if tmap.row_bytes == tmap.smem_box[0] * tmap.elem_bytes:
        return ""
    return (f", rows padded from {tmap.smem_box[0] * tmap.elem_bytes} to {tmap.row_bytes} bytes as measured on "
            "the H100")


def _ring_counterexample(tmap: TensorMap, reader, ring: tuple, cx: dict, pieces: list,
                         piece: tuple, pre: str, assume: str) -> Verdict:
    """Law: the failing Verdict of z3's model ``cx`` on one reader piece: the base, stage and
    element, and the bytes TMA writes and the reader reads there, both evaluated concretely."""
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    inner, copies, _stages, stage_bytes, base, base_align = ring
    mb, kb, mn_off, k_off, mn_bits, k_bits = piece
    bval = base if base is not None else cx["q"] * base_align
    sval = cx["stage"]
    sb = z3.BitVecVal(bval + sval * stage_bytes, _B)
    m_, k_ = cx["mn"] + mn_off, cx["k"] + k_off
    xx, yy = (k_, m_) if inner == "k" else (m_, k_)
    tbyte = _eval(_tma_bits(tmap, copies, sb, xx, yy)) // 8
    mnv, kv = z3.BitVecVal(cx["mn"], mn_bits), z3.BitVecVal(cx["k"], k_bits)
    if isinstance(reader, DescriptorReader):
        rbyte = _eval(_descriptor_bits(reader, sb, mnv, kv, mb, kb)) // 8
    else:
        rbyte = _eval(_layout_bits(reader, sb, z3.BitVecVal(m_, 16), z3.BitVecVal(k_, 16))) // 8
    cex = {"base": bval, "stage": sval, "mn": m_, "k": k_, "tma_byte": tbyte, "reader_byte": rbyte}
    where = f", K-block {kb}" + (f", MN block {mb}" if reader.extents[0] != pieces[0][4] else "") \
        if isinstance(reader, DescriptorReader) else ""
    return Verdict.fails(cex, f"{pre}at buffer base {bval:#x}, stage {sval}, element (mn={m_}, k={k_}){where}: "
                         f"TMA wrote byte {tbyte:#x} but the {reader.describe()} reads byte {rbyte:#x}",
                         method="z3", assumption=assume)


def _bits_of(dtype: str) -> int:
    try:
        return tma_element_bits(dtype)
    except LayoutError:
        return operand_bits(dtype)


def _align_limit(base_align: int):
    return Limit("smem-alignment", f"buffers aligned to {base_align} bytes may start off the {SMEM_ALIGN}-byte "
                 "alignment TMA destinations need", "PTX ISA cp.async.bulk.tensor")


def _assumption_text(base, base_align, stages, stage_bytes) -> str:
    where = f"buffer base {base:#x}" if base is not None else f"any buffer base that is a multiple of {base_align} bytes"
    return (f"assumption: {where}, stage s at base + s * {stage_bytes} for s < {stages}, the ring inside the "
            "256 KiB shared window")


def _pieces(reader) -> list[tuple[int, int, int, int, int, int]]:
    """``(mn block, k block, mn offset, k offset, mn extent, k extent)`` of each reader piece."""
    if isinstance(reader, LayoutReader):
        mn, k = reader.extents
        return [(0, 0, 0, 0, mn, k)]
    kx = k_of_dtype(reader.dtype)
    return [(mb, kb, mb * reader.mn, kb * kx, reader.mn, kx)
            for mb in range(reader.mn_blocks) for kb in range(reader.k_blocks)]


def _reader_table(reader, stage_base: int) -> np.ndarray:
    """``table[mn, k]``: the byte the reader reads each element of its tile at (brute force)."""
    import numpy as np  # deferred: start-up time (only array code needs numpy)
    if isinstance(reader, LayoutReader):
        fn = reader.tile.fn
        start = (stage_base + reader.offset) * 8
        if reader.relative or fn.swizzle is None:
            return (fn.table() + start) // 8
        return replace(fn, const=fn.const + start).table() // 8
    mn_n, k_n = reader.extents
    kx = k_of_dtype(reader.dtype)
    out = np.zeros((mn_n, k_n), dtype=np.int64)
    for mb in range(reader.mn_blocks):
        for kb in range(reader.k_blocks):
            start = stage_base + reader.desc.start_address + kb * reader.k_step + mb * reader.mn_step
            fn = hardware_address_function(reader.desc.with_start(start), major=reader.major,
                                           dtype=reader.dtype, mn_extent=reader.mn)
            out[mb * reader.mn:(mb + 1) * reader.mn, kb * kx:(kb + 1) * kx] = fn.table() // 8
    return out


def _domain_verdict(tmap, reader, inner, copies, stages, stage_bytes, base, t_ext, r_ext, assume) -> Verdict:
    """The box and the reader's tile differ in extent, or a stage's box spills into the next."""
    import numpy as np  # deferred: start-up time (only array code needs numpy)
    (ti, to), (ri, ro) = t_ext, r_ext
    n0 = tmap.smem_box[0]

    def tma_byte(sb, x, y):
        j, x0 = divmod(x, n0)
        return write_address(tmap, sb + j * tmap.smem_bytes, (x0, y) + (0,) * (tmap.rank - 2))

    def mnk(x, y):
        return (y, x) if inner == "k" else (x, y)
    if ti > ri or to > ro or (stages > 1 and copies * tmap.smem_bytes > stage_bytes):
        x, y = (ri, 0) if ti > ri else ((0, ro) if to > ro else (0, 0))
        if not (ti > ri or to > ro):            # spill: first element past the stage
            y = next((yy for yy in range(to) if tma_byte(base, 0, yy) >= base + stage_bytes), 0)
        tb = tma_byte(base, x, y)
        hit = None
        for st in range(stages):                # which element the reader reads at that byte
            where = np.argwhere(_reader_table(reader, base + st * stage_bytes) == tb)
            if len(where):
                hit = (st, int(where[0][0]), int(where[0][1]))
                break
        m_, k_ = mnk(x, y)
        cex = {"base": base, "stage": 0, "mn": m_, "k": k_, "tma_byte": tb, "reader_byte": None,
               "tma_tile": [t_ext[1], t_ext[0]] if inner == "k" else list(t_ext),
               "reader_tile": list(reader.extents)}
        over = ""
        if hit:
            cex["overwrites"] = {"stage": hit[0], "mn": hit[1], "k": hit[2]}
            over = f", where the reader reads element (mn={hit[1]}, k={hit[2]}) of stage {hit[0]}"
        return Verdict.fails(cex, f"the TMA box ({copies} x {list(tmap.box)}, {copies * tmap.smem_bytes} bytes) is larger "
                             f"than the reader's {reader.extents[0]}x{reader.extents[1]} tile / {stage_bytes}-byte stage: "
                             f"at base {base:#x}, stage 0, TMA writes element (mn={m_}, k={k_}) to byte {tb:#x}"
                             f"{over} ({assume})", method="domain", assumption=assume)
    x, y = (ti, 0) if ri > ti else (0, to)
    m_, k_ = mnk(x, y)
    rb = int(_reader_table(reader, base)[m_, k_])
    cex = {"base": base, "stage": 0, "mn": m_, "k": k_, "tma_byte": None, "reader_byte": rb,
           "reader_tile": list(reader.extents)}
    return Verdict.fails(cex, f"the reader reads element (mn={m_}, k={k_}) at byte {rb:#x}, which the TMA box "
                         f"({copies} x {list(tmap.box)}) never writes ({assume})", method="domain", assumption=assume)


# ----- a Triton TMA copy ------------------------------------------------------------------------

#: What the TTGIR does not show about a TMA copy, said on every verdict of :func:`triton_copy_verdict`.
HOST_NOTE = ("the tensor map itself is encoded on the host (make_tensor_descriptor / TensorDescriptor) and "
             "is not in the TTGIR: its box and swizzle are taken as Triton's lowering derives them from the "
             "descriptor type (getTMABlockShape)")
_READ_AS = {8: "b8", 16: "b16", 32: "b32", 64: "b64"}
_SWZ = {0: "none", 32: "32B", 64: "64B", 128: "128B"}


def squeeze_block(block, view_rank: int) -> list[int] | None:
    """The descriptor block a TMA copy writes into a shared-memory view of ``view_rank`` dims:
    Triton's rank-reducing copies (a descriptor of rank 3 to 5 whose block is ``[1, ..., 1, M, K]``
    written into a 2-d buffer, e.g. batched and ragged descriptors) drop the block's leading dims
    (Triton's ``getEncodingFromDescriptor`` / ``updateEncodingForShape`` in
    ``lib/Dialect/TritonNvidiaGPU/Transforms/TMAUtilities.cpp``: the buffer's encoding is the
    descriptor's, re-made for the loaded tensor's shape).

    Law: the last ``view_rank`` dims of ``block`` when every dropped leading dim is 1 (a unit dim
    adds no element and no byte to the box TMA packs into shared memory), else None (the copy
    writes more elements than the view holds, or the view has more dims than the block).

    >>> squeeze_block([1, 1, 1, 64, 64], 2), squeeze_block([1, 128, 64], 3)
    ([64, 64], [1, 128, 64])
    >>> squeeze_block([2, 128, 64], 2) is None
    True
    """
    block = [int(b) for b in block]
    drop = len(block) - int(view_rank)
    if drop < 0 or any(b != 1 for b in block[:drop]):
        return None
    return block[drop:]


def rows_view(layout: LinearLayout) -> LinearLayout:
    """A shared layout ``offset -> dim0, ..., dim{n-1}`` read as ``offset -> dim0, dim1`` with the
    outer dims flattened row-major into rows (dim0) and the innermost dim kept (dim1); a 1-d
    layout gets one row.

    Law: ``rows_view(L)(o) == (sum_i c_i * prod(sizes[i+1:n-1]), c_{n-1})`` where ``(c_0, ..,
    c_{n-1}) = L(o)``: the row-major order in which a box of any rank is packed into shared memory
    (PTX ISA, "Tensors": the bounding box is laid out in shared memory densely, innermost
    dimension first; so an n-d box is the 2-d box of its flattened outer dims).

    >>> ll = LinearLayout({"offset": [[0, 0, 1], [0, 1, 0], [1, 0, 0]]}, [("dim0", 2), ("dim1", 2), ("dim2", 2)])
    >>> rows_view(ll).bases["offset"], rows_view(ll).out_dims
    ([[0, 1], [1, 0], [2, 0]], {'dim0': 4, 'dim1': 2})
    """
    names = list(layout.out_dims)
    sizes = [layout.out_dims[n] for n in names]
    if len(names) == 2:
        return layout
    if len(names) == 1:
        return LinearLayout({k: [[0, v[0]] for v in vs] for k, vs in layout.bases.items()},
                            [("dim0", 1), ("dim1", sizes[0])], require_surjective=False)
    rows = 1
    for s in sizes[:-1]:
        rows *= s
    flat = layout.transpose_outs(names[::-1]).reshape_outs([("_inner", sizes[-1]), ("_rows", rows)])
    return flat.transpose_outs(["_rows", "_inner"]).rename_dims(outs={"_rows": "dim0", "_inner": "dim1"})


def _two_d(block: list[int], box: list[int], transposed: bool) -> tuple[list[int], list[int]] | str:
    """A squeezed block and its box as the 2-d block and box of :func:`rows_view` (outer dims
    flattened), or why that is not the same copy (a transposed box or an outer dim split into
    several boxes keeps boxes apart that the 2-d model would pack side by side)."""
    if len(block) == 2:
        return block, box
    if len(block) == 1:
        return [1] + block, [1] + box
    if transposed:
        return f"a transposed rank-{len(block)} box: only 2-d transposed boxes are modelled"
    if block[:-1] != box[:-1]:
        return f"block {block} in boxes of {box}: copies along an outer dim of a rank-{len(block)} box are not modelled"
    rows = 1
    for b in block[:-1]:
        rows *= b
    return [rows, block[-1]], [rows, box[-1]]


def triton_copy_verdict(encoding: TmaEncoding | None, block, elem: str, mem_layout: LinearLayout,
                        timeout_ms: int = DEFAULT_TIMEOUT_MS) -> tuple[TensorMap | None, Verdict]:
    """A Triton TMA copy (``ttng.async_tma_copy_*``): the box Triton's lowering uses for a descriptor
    whose encoding reads as ``encoding`` (:class:`~verilayout.hw.nvidia.tma.TmaEncoding`, None for
    an encoding other than ``#ttg.nvmma_shared``) and block ``block`` (TTGIR order, rank 1 to 5),
    written by TMA, equals the shared memory's layout ``mem_layout`` (``offset -> dim0, ...``,
    buffer-relative as Triton addresses it), at any buffer base aligned to the swizzle repeat (the
    stated assumption). Leading unit dims of the block beyond the view's rank are dropped
    (:func:`squeeze_block`); a block of rank other than 2 is the 2-d box of its flattened outer
    dims (:func:`rows_view`).

    >>> from verilayout.frontends.triton import parse_attr, attr_to_linear
    >>> from verilayout.frontends.triton.shared import tma_encoding
    >>> a = parse_attr("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>")
    >>> t, v = triton_copy_verdict(tma_encoding(a, [128, 128]), [128, 128], "f16", attr_to_linear(a, (128, 128)))
    >>> t.box, v.status, v.details["copies"]
    ((64, 128), 'proved', 2)
    >>> a5 = parse_attr("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16, rank = 5}>")
    >>> triton_copy_verdict(tma_encoding(a5, [1, 1, 1, 64, 64]), [1, 1, 1, 64, 64], "f16", attr_to_linear(a, (64, 64)))[1].status
    'proved'
    """
    block = [int(b) for b in block]
    if not isinstance(encoding, TmaEncoding):
        return None, Verdict.unknown(f"the descriptor's encoding is not #ttg.nvmma_shared; {HOST_NOTE}",
                                     method="model")
    view_rank = len(mem_layout.out_dims)
    squeezed = squeeze_block(block, view_rank)
    if squeezed is None:
        return None, Verdict.unknown(f"the block {block} does not fit the {view_rank}-d shared-memory view "
                                     "(only leading unit dims are dropped); the copy-layout check reports it",
                                     method="model")
    if encoding.box is not None:
        two = _two_d(squeezed, list(encoding.box[len(block) - view_rank:]), encoding.transposed)
        if isinstance(two, str):
            return None, Verdict.unknown(two, method="model")
        block, box2 = two
        encoding = replace(encoding, rank=2, box=tuple(box2))
        mem_layout = rows_view(mem_layout)
    swizzle, bits, transposed, fp4 = encoding.swizzle, encoding.bits, encoding.transposed, encoding.fp4
    if fp4 or bits not in _READ_AS or encoding.box is None:
        return None, Verdict.unknown(f"{'fp4-padded' if fp4 else f'{bits}-bit'} TMA boxes are not modelled",
                                     method="model")
    box = list(encoding.box)
    contig = 0 if transposed else 1
    other = 1 - contig
    if block[other] != box[other] or block[contig] % box[contig]:
        return None, Verdict.unknown(f"block {block} in boxes of {box}: copies along the outer dim are not "
                                     "modelled", method="model")
    copies = block[contig] // box[contig]
    tmap = TensorMap(elem, global_dims=(box[contig], box[other]), box=(box[contig], box[other]),
                     swizzle=_SWZ[swizzle])
    reader = layout_reader(mem_layout, dtype=_READ_AS[bits])
    align = max(SMEM_ALIGN, tmap.pattern.repeat)
    v = check_ring(tmap, reader, copies=copies, base_align=align, inner="mn" if transposed else "k",
                    timeout_ms=timeout_ms)
    return tmap, replace(v, reason=f"{v.reason}; {HOST_NOTE}",
                         details={**v.details, "copies": copies, "box": list(tmap.box), "swizzle": tmap.swizzle})
