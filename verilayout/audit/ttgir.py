"""Audit a TTGIR module: check every op that moves data through shared memory or hands it to MMA.

No property is typed by hand: each check follows from the op and the layouts the compiler
wrote on its types. The text is read once, by :func:`verilayout.frontends.ttgir.parse_module`: each
op carries its types as :class:`~verilayout.frontends.ttgir.Type` objects (parsed value, Triton
layout), its attributes and static indices, and the module its def-use graph (``defs``, ``users``);
the checks here walk those objects and apply no regular expression or ``split`` to TTGIR text. The
bank-conflict checks are in :mod:`verilayout.audit.ttgir_banks`, the per-file context and the view
walks they share in :mod:`verilayout.audit.ttgir_context`.

* ``bank-conflicts`` (``ttg.local_alloc`` with a source, ``ttg.local_store``,
  ``ttg.local_load``): wavefronts per instruction of the widest ``ld/st.shared`` the two
  layouts allow (the vector width Triton's generic lowering picks) vs one per phase,
  proved in GF(2) by :mod:`verilayout.prove.banks`; a conflict carries the witness and the
  best swizzle :mod:`verilayout.synth.swizzle` finds for the access (a ``warning``: the
  kernel is correct, only slower). ldmatrix/stmatrix paths are not modelled (assumption
  recorded on the file).
* ``mma-descriptor`` (``ttng.warp_group_dot`` sm_90, ``ttng.tc_gen5_mma`` sm_100): the
  descriptor of every K-block (and 64-row block of A) derived from the operand's shared
  layout and proved to read it (:mod:`verilayout.synth.descriptor`); no descriptor is an
  ``error``. ``mma-fragment``: a register A operand's lane/warp/register bases against the
  wgmma fragment (:mod:`verilayout.hw.nvidia.wgmma`).
* ``tma-write`` (``ttng.async_tma_copy_*``): the box Triton derives from the tensor descriptor type,
  written with the descriptor's swizzle on absolute addresses, is the destination memdesc's layout
  at any base on the swizzle repeat (:mod:`verilayout.prove.tma`); the host-built tensor map is out
  of view, said on the check.
* ``convert-layout``: classified from ``dst^-1 o src`` (which input dims move data).
* ``view-layout`` (``tt.trans``, ``tt.reshape``, ``tt.join``, ``tt.split``,
  ``ttg.memdesc_trans``, ``ttg.memdesc_reshape``): the result layout equals the transformed
  source layout; a difference is an ``error`` (the op would need data movement the
  compiler did not plan). join/split: the new last dim is one register bit, any bit, as Triton
  3.9 lowers them (:mod:`verilayout.prove.tensor_views`). ``tt.reshape allow_reorder`` whose type
  is a permutation: proved when every consumer reduces over the permuted dims, else
  ``unchecked`` with the reason (can_reorder=True allowed it); an error only when the
  register-by-register copy cannot fit.
* ``mma-tmem-operand`` (``tc_gen5_mma`` with A in tensor memory): A's TMEM layout is the data
  path layout the instruction reads, and every writer of the allocation wrote that layout;
  ``tmem-layout`` also covers ``ttng.tmem_subslice`` (the view is the source's cells at the
  address Triton adds), ``ttng.tmem_copy`` (tcgen05.cp of scale factors lands where the TMEM
  layout keeps them) and the scale factors' ``tcgen05.st``. gfx950 MFMA operands from M/N-contiguous buffers are banked as the
  ``ds_read_b64_tr_b16/b8`` Triton emits (:mod:`verilayout.prove.lds_tr`).
* an internal failure of a model is ``unchecked`` with ``reason = "internal error"``, never
  silence and never a finding.
* everything else that carries a shared-memory type: ``unchecked`` with the reason.

Law: every op whose types mention a memdesc, and every op named above, yields at least
one :class:`~verilayout.audit.model.Check`; a check is ``proved`` only when proved.

>>> rep = audit_text(EXAMPLE, "ex.ttgir")
>>> [(c.op, c.check, c.status) for c in rep.checks]
[('ttg.local_load', 'bank-conflicts', 'counterexample')]
>>> rep.checks[0].data["wavefronts"], rep.checks[0].loc
(16, 'k.py:9')
"""
from __future__ import annotations

import functools

import sys
from functools import lru_cache
from typing import Any

from verilayout.audit.inputs import read_bounded
from verilayout.audit.launch_limits import cannot_launch
from verilayout.audit.model import FileReport, Unsupported
from verilayout.audit.ttgir_banks import async_copy_check, attach_joint, bank_check
from verilayout.audit.ttgir_context import (AuditContext, internal_message, internal_unchecked, is_nvidia,
                                            layout_shape, root_alloc, same_layout, subslice_offsets)
from verilayout.core.linear_layout import LinearLayout
from verilayout.core.smt import Verdict
from verilayout.errors import LayoutError
from verilayout.frontends.mlir import Attr, TensorType, elem_bit_width
from verilayout.frontends.triton.shared import tma_encoding
from verilayout.frontends.ttgir import Module, Op, Type, parse_module
from verilayout.hw.nvidia.banks import BankModel
from verilayout.hw.nvidia.descriptor import operand_k
from verilayout.hw.nvidia.wgmma import fragment, k_of_dtype
from verilayout.prove.tensor_views import join_split_verdict, reorder_verdict
from verilayout.prove.tma import HOST_NOTE, squeeze_block, triton_copy_verdict
from verilayout.prove.tmem import COPY_RULE as TMEM_COPY_RULE
from verilayout.prove.tmem import SUBSLICE_RULE as TMEM_SUBSLICE_RULE
from verilayout.prove.tmem import A_OPERAND_RULE, copy_verdict, load_verdict, operand_a_verdict, subslice_verdict
from verilayout.synth.descriptor import derive_descriptor
from verilayout.synth.swizzle import optimal_swizzle

__all__ = ["audit_text", "audit_file", "audit_module", "EXAMPLE", "layout_shape", "classify_conversion"]

EXAMPLE = """#b = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], order = [0, 1]}>
#s = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
#loc1 = loc("k.py":9:4)
module attributes {"ttg.num-warps" = 1 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  %1 = ttg.local_load %0 : !ttg.memdesc<16x32xf32, #s, #smem> -> tensor<16x32xf32, #b> loc(#loc1)
}
"""

TMEM_SHAPES = ("32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2")
UNCHECKED = {
    "ttng.async_tma_gather": "TMA copies are not modelled yet",
    "ttng.async_tma_scatter": "TMA copies are not modelled yet",
    "ttg.local_dealloc": "frees memory: nothing to check",
}
#: ops on memdescs that move no data: waits, barriers, loop plumbing; tc_gen5_commit (tcgen05.commit)
#: only makes an mbarrier track the completion of the tcgen05 ops issued before it
NO_DATA = frozenset({"ttng.warp_group_dot_wait", "ttg.local_dealloc", "scf.yield", "scf.for", "ttng.init_barrier",
                     "ttng.wait_barrier", "ttng.barrier_expect", "ttng.inval_barrier", "ttng.arrive_barrier",
                     "ttg.async_wait", "ttg.async_commit_group", "ttng.tc_gen5_commit"})
_MMA_DTYPES = {"f16": "f16", "bf16": "bf16", "f32": "tf32", "f8E4M3FN": "e4m3", "f8E5M2": "e5m2",
               "i8": "s8", "ui8": "u8"}


#: the tcgen05.ld/st message shapes tried, in order (``16x32bx2`` with each second half-warp offset)
_TMEM_TRIES = tuple([(shape, None) for shape in TMEM_SHAPES if shape != "16x32bx2"] +
                    [("16x32bx2", 1 << k) for k in range(9)])


@lru_cache(maxsize=256)   # keyed by the two layouts; a kernel's TMEM loads repeat them
def _tmem_message(reg: LinearLayout, tmem: LinearLayout) -> tuple[str, int | None] | None:
    """``(shape, .num in elements)`` of the first message shape of :data:`_TMEM_TRIES` whose
    messages deliver ``reg`` from ``tmem`` (``prove.tmem.load_verdict``), or None."""
    for shape, split in _TMEM_TRIES:
        try:
            v = load_verdict(reg, tmem, shape, split=split)
        except LayoutError:
            continue
        if v.status == "proved":
            return shape, v.details.get("num")
    return None


def _tmem_check(ctx: AuditContext, op: Op) -> None:
    """``ttng.tmem_load`` / ``tmem_store`` / ``tmem_alloc`` with a source: the register layout must be
    what ``tcgen05.ld``/``st`` messages deliver from the TMEM layout (``prove.tmem.load_verdict``);
    the first message shape that fits is reported."""
    types = op.in_types + op.out_types
    mem = next((t for t in types if t.is_memdesc), None)
    reg_t = next((t for t in types if t.is_tensor), None)
    if mem is None or reg_t is None:
        ctx.add(op, "tmem-layout", "unchecked", None, f"{op.name}: no register and TMEM types on the op",
                reason="no type")
        return
    reg, tm = ctx.layout(reg_t), ctx.layout(mem)
    if reg is None or tm is None or "row" not in tm.in_dims:
        ctx.add(op, "tmem-layout", "unchecked", None, f"{op.name}: a layout could not be read as a register "
                "and a tensor-memory layout", reason="unsupported layout")
        return
    tmem = _tmem_rows(tm)
    mt = ctx.typ(mem)
    pack = max(1, 32 // (elem_bit_width(mt.elem) or 32)) if mt is not None else 1   # elements a 32-bit cell
    fits = _tmem_message(reg, tmem)
    if fits is not None:                     # the first shape that proves (the loop below finds the same)
        shape, n = fits
        num = max(1, n // pack) if n else None
        ctx.add(op, "tmem-layout", "proved", None, f"{op.name}: the register layout is what "
                f"tcgen05.{'ld' if op.name == 'ttng.tmem_load' else 'st'}.{shape}.x{num or '?'}.b32 "
                "messages move", tmem_message=shape, num=num, elements_per_register=pack)
        return
    first = None
    for shape, split in _TMEM_TRIES:
        try:
            v = load_verdict(reg, tmem, shape, split=split)
        except LayoutError as e:
            first = str(e) if first is None else first
            continue
        if v.status == "proved":
            # the proof counts columns in elements (as Triton's TMEM layouts do); the instruction's
            # .num counts 32-bit registers, each holding `pack` elements
            num = max(1, v.details["num"] // pack) if v.details.get("num") else None
            ctx.add(op, "tmem-layout", "proved", None, f"{op.name}: the register layout is what "
                    f"tcgen05.{'ld' if op.name == 'ttng.tmem_load' else 'st'}.{shape}.x{num or '?'}.b32 "
                    "messages move", tmem_message=shape, num=num, elements_per_register=pack)
            return
        first = v if first is None or isinstance(first, str) else first
    if isinstance(first, Verdict):
        ctx.add(op, "tmem-layout", "counterexample", "error", f"{op.name}: no tcgen05.ld/st message shape "
                f"delivers this register layout; with 32x32b: {first.reason}", counterexample=first.counterexample)
    else:
        ctx.add(op, "tmem-layout", "unchecked", None, f"{op.name}: {first}", reason=str(first))


TMA_RULE = ("a TMA copy writes (reads) its box with the swizzle of the tensor descriptor's encoding, "
            "applied to the shared-memory address; Triton builds the descriptor's box from that encoding "
            "(a box inner extent of at most the swizzle width, CUDA's cuTensorMapEncodeTiled limits)")


def _tma_check(ctx: AuditContext, op: Op) -> None:
    """``ttng.async_tma_copy_*``: the tensor descriptor's encoding and block must be the shared
    memory's (a TMA box written with one swizzle and read with another is DeepGEMM #379's bug)."""
    types = op.in_types + op.out_types
    desc = next((t for t in types if t.is_tensordesc), None)
    mems = [t for t in types if t.is_memdesc]
    mt = None
    for t in mems:
        tt = ctx.typ(t)
        if tt is not None and len(tt.shape) >= 2:   # not the 1xi64 barrier
            mt = tt
            mem_t = t
    dt = ctx.typ(desc) if desc else None
    if dt is None or mt is None:
        ctx.add(op, "copy-layout", "unchecked", None, f"{op.name}: no tensor descriptor and shared-memory "
                "types on the op", reason="no type")
        return
    d_enc, m_enc = desc.encoding_text, mem_t.encoding_text
    data = {"descriptor_layout": d_enc, "shared_layout": m_enc, "box": list(dt.shape),
            "shared_shape": list(mt.shape), "rule": TMA_RULE,
            "assumption": "the destination buffer is aligned to the swizzle pattern (1024 bytes for the "
                          "128-byte swizzle); allocation offsets are not in the TTGIR"}
    ctx.layout(mem_t)                         # counted as read
    box = squeeze_block(dt.shape, len(mt.shape))
    if box is None or box != list(mt.shape):
        ctx.add(op, "copy-layout", "counterexample", "error", f"{op.name}: the descriptor's block "
                f"{list(dt.shape)} is not the shared-memory view {list(mt.shape)}"
                + (" (Triton's lowering drops only leading unit dims of the block)"
                   if len(dt.shape) > len(mt.shape) else ""), **data)
        return
    if d_enc != m_enc:
        d_ll, m_ll = ctx.layout(desc), ctx.layout(mem_t)
        if d_ll is not None and len(dt.shape) > len(mt.shape):
            d_ll = _drop_leading_outs(d_ll, len(dt.shape) - len(mt.shape))
        same = d_ll is not None and m_ll is not None and same_layout(d_ll, m_ll)
        if not same:
            ctx.add(op, "copy-layout", "counterexample", "error", f"{op.name}: the tensor descriptor's layout "
                    f"{d_enc} is not the shared memory's {m_enc}: TMA writes the box with one swizzle and the "
                    "readers of the buffer assume the other", **data)
            return
    dropped = len(dt.shape) - len(mt.shape)
    ctx.add(op, "copy-layout", "proved", None, f"{op.name}: the TMA box {list(dt.shape)} is written with the "
            "layout the shared memory declares" + (" (same encoding)" if d_enc == m_enc else
                                                   f" (the same layout{' once its leading unit dims are dropped' if dropped else ''})"),
            **data)


def _drop_leading_outs(ll: LinearLayout, n: int) -> LinearLayout:
    """``ll`` without its first ``n`` output dims (each of size 1: no basis reaches them), the
    others renamed ``dim0, dim1, ...`` as a layout of the squeezed shape is.

    >>> l3 = LinearLayout({"offset": [[0, 0, 1], [0, 1, 0]]}, [("dim0", 1), ("dim1", 2), ("dim2", 2)])
    >>> _drop_leading_outs(l3, 1).out_dims
    {'dim0': 2, 'dim1': 2}
    """
    names = list(ll.out_dims)
    for name in names[:n]:
        ll = ll.squeeze_outs(name)
    return ll.rename_dims(outs={old: f"dim{i}" for i, old in enumerate(names[n:])})


def _tma_write_check(ctx: AuditContext, op: Op) -> None:
    """``tma-write``: the box Triton's lowering derives from the descriptor type (its inner bytes within
    the swizzle span), written by TMA with the descriptor's swizzle on absolute addresses, is the
    destination memdesc's layout at any base aligned to the swizzle repeat
    (:func:`verilayout.prove.tma.triton_copy_verdict`); the host-built tensor map is out of view."""
    types = op.in_types + op.out_types
    desc = next((t for t in types if t.is_tensordesc), None)
    mem_t = next((t for t in types if t.is_memdesc and (ctx.typ(t) is not None)
                     and len(ctx.typ(t).shape) >= 2), None)
    dt = ctx.typ(desc) if desc else None
    if dt is None or mem_t is None:
        return                                    # _tma_check reported it
    mem_ll = ctx.layout(mem_t)
    if mem_ll is None:
        ctx.add(op, "tma-write", "unchecked", None, f"{op.name}: the shared memory's layout is not read",
                reason="layout", host=HOST_NOTE)
        return
    key = ("TMA", desc, mem_t)                 # the same copy types: one proof per file
    try:
        if key not in ctx.proofs:
            ctx.proofs[key] = triton_copy_verdict(tma_encoding(dt.encoding, list(dt.shape)), list(dt.shape),
                                                  dt.elem, mem_ll)
        tmap, v = ctx.proofs[key]
    except LayoutError as e:
        ctx.add(op, "tma-write", "unchecked", None, f"{op.name}: {e}", reason=str(e), host=HOST_NOTE)
        return
    data = {"host": HOST_NOTE, **({"tensor_map": tmap.to_dict()} if tmap is not None else {})}
    if v.status == "counterexample":
        ctx.add(op, "tma-write", "counterexample", "error", f"{op.name}: {v.reason}",
                counterexample=v.counterexample, **data)
    else:
        ctx.add(op, "tma-write", v.status, None, f"{op.name}: {v.reason}", reason=v.reason, **data)


# ----- MMA ---------------------------------------------------------------------------------

def _mma_check(ctx: AuditContext, op: Op, arch: str) -> None:
    for idx, operand in ((0, "A"), (1, "B")):
        if idx >= len(op.in_types):
            ctx.add(op, "mma-descriptor", "unchecked", None, f"operand {operand}: no type on the op",
                    operand=operand, reason="no type")
            continue
        typ = op.in_types[idx]
        if typ.is_memdesc:
            _descriptor_check(ctx, op, operand, typ, arch, op.operands[idx] if idx < len(op.operands) else None)
        elif operand == "A":
            _fragment_check(ctx, op, typ, arch)


def _major(ll: LinearLayout, k_dim: str) -> str:
    first = ll.bases["offset"][0] if ll.bases.get("offset") else None
    if first is None:
        return "K"
    names = ll.out_dim_names
    moved = [n for n, v in zip(names, first) if v]
    return "K" if moved == [k_dim] else "MN"


def _sub_tile(ctx: AuditContext, t: TensorType, value: str | None, mn_dim: int, mn: int, kx: int) -> tuple[int, int] | str:
    """The (MN block, K-block) of the allocation's layout at which an operand that is a sub-tile of a
    larger shared buffer (``memdesc_subslice`` views along M, N or K) starts: its static offsets
    within the buffer divided by the instruction's block (``mn`` rows, ``kx`` elements of K); (0, 0)
    for a whole tile; else why it is not modelled.

    Law: a sub-tile's MN x K block of an instruction is the allocation's block at its offset, so its
    descriptors are the allocation's (the data it reads are the same bytes); only offsets on the
    instruction's block grid are such blocks."""
    if tuple(t.shape) == layout_shape(t):
        return (0, 0)
    if len(t.shape) != 2 or len(layout_shape(t)) != 2:
        return f"shape {list(t.shape)} (layout over {list(layout_shape(t))}): only 2-D tiles are modelled"
    offs = subslice_offsets(ctx, value, t)
    if isinstance(offs, str):
        return f"a {list(t.shape)} sub-tile of a {list(layout_shape(t))} buffer: {offs}"
    off_mn, off_k = offs[mn_dim], offs[1 - mn_dim]
    if off_mn % mn or off_k % kx:
        return (f"a {list(t.shape)} sub-tile at offsets {list(offs)} of a {list(layout_shape(t))} buffer: the "
                f"offsets are not on the instruction's {mn} x {kx} block grid")
    return (off_mn // mn, off_k // kx)


def _block_descriptors(ll: LinearLayout, dtype: str, major: str, blocks: tuple[int, int], mn: int,
                       at: tuple[int, int], mn_dim: int, arch: str) -> tuple[list[dict], tuple | None]:
    """The descriptor of each (MN block, K-block) of an operand of ``blocks`` blocks (at least one
    each) whose first block is the buffer's block ``at``, derived on the buffer's layout ``ll``;
    and the first block no descriptor reads, with why (None when every block has one)."""
    descs, why = _block_descriptors_of(ll, dtype, major, blocks, mn, at, mn_dim, arch)
    return [dict(d) for d in descs], why


@lru_cache(maxsize=256)   # keyed by the operand's layout and blocks; a kernel's dots repeat their operands
def _block_descriptors_of(ll: LinearLayout, dtype: str, major: str, blocks: tuple[int, int], mn: int,
                          at: tuple[int, int], mn_dim: int, arch: str) -> tuple[tuple[dict, ...], tuple | None]:
    """:func:`_block_descriptors`, shared by the callers (read only: they get copies)."""
    descs: list[dict] = []
    for mb in range(max(1, blocks[0])):
        for kb in range(max(1, blocks[1])):
            try:
                p = derive_descriptor(ll, dtype=dtype, major=major, k_block=at[1] + kb, mn=mn,
                                      mn_block=at[0] + mb, mn_dim=mn_dim, arch=arch)
            except LayoutError as e:
                return tuple(descs), (mb, kb, str(e))
            descs.append({"mn_block": mb, "k_block": kb, "descriptor": f"{p.descriptor.value:#018x}",
                          "swizzle": p.descriptor.swizzle, "status": p.verdict.status})
    return tuple(descs), None


def _descriptor_check(ctx: AuditContext, op: Op, operand: str, mem: Type, arch: str, value: str | None = None) -> None:
    t, ll = ctx.typ(mem), ctx.layout(mem)
    base = {"operand": operand, "arch": arch}
    if t is None or ll is None:
        ctx.add(op, "mma-descriptor", "unchecked", None, f"operand {operand}: its layout could not be read",
                reason="unsupported layout", **base)
        return
    if "row" in ll.in_dims and "col" in ll.in_dims:
        _tmem_operand_check(ctx, op, operand, mem, ll)
        return
    dtype = _MMA_DTYPES.get(t.elem)
    if dtype is None:
        ctx.add(op, "mma-descriptor", "unchecked", None, f"operand {operand}: element type {t.elem} has "
                "no wgmma dtype in the model", reason="dtype", **base)
        return
    if len(t.shape) != 2 or len(layout_shape(t)) != 2:
        ctx.add(op, "mma-descriptor", "unchecked", None, f"operand {operand}: shape {list(t.shape)} "
                f"(layout over {list(layout_shape(t))}): only 2-D tiles are modelled",
                reason="shape", **base)
        return
    names = ll.out_dim_names
    mn_dim = 0 if operand == "A" else 1
    k_dim = names[1 - mn_dim]
    major = _major(ll, k_dim)
    mn_ext, k_ext = t.shape[mn_dim], t.shape[1 - mn_dim]
    if isinstance(t.encoding, Attr) and t.encoding.params.get("fp4Padded") is True and major == "K":
        # i8 pairs of e2m1, each 16-byte unit half pad: tcgen05 reads them as slots of single values
        dtype, k_ext = "e2m1_padded", 2 * k_ext
    kx = operand_k(dtype)
    mn = 64 if operand == "A" and mn_ext >= 64 else min(mn_ext, 256)
    at = _sub_tile(ctx, t, value, mn_dim, mn, kx if dtype != "e2m1_padded" else kx // 2)
    if isinstance(at, str):
        ctx.add(op, "mma-descriptor", "unchecked", None, f"operand {operand}: {at}", reason="sub-tile", **base)
        return
    descs, failed = _block_descriptors(ll, dtype, major, (mn_ext // mn, k_ext // kx), mn, at, mn_dim, arch)
    data = dict(base, dtype=dtype, major=major, layout=mem.encoding_text, shape=list(t.shape),
                descriptors=descs, **({"sub_tile": {"buffer": list(layout_shape(t)), "mn_block": at[0],
                                                    "k_block": at[1], "mn": mn}} if at != (0, 0) or
                                      tuple(t.shape) != layout_shape(t) else {}))
    if failed:
        mb, kb, why = failed
        ctx.add(op, "mma-descriptor", "counterexample", "error",
                f"operand {operand}: no {arch} descriptor reads {data['layout']} for K-block {kb} "
                f"(MN block {mb}): {why}", **data)
        return
    statuses = {d["status"] for d in descs}
    status = "proved" if statuses == {"proved"} else "unknown"
    ctx.add(op, "mma-descriptor", status, None if status == "proved" else "note",
            f"operand {operand} ({major}-major {dtype}, {descs[0]['swizzle'] if descs else '?'} swizzle): "
            f"{len(descs)} descriptor(s) proved to read {data['layout']}"
            + (f" (a {list(t.shape)} sub-tile of the {list(layout_shape(t))} buffer from its MN block {at[0]}, "
               f"K-block {at[1]})" if "sub_tile" in data else ""), **data)


def _tmem_rows(ll: LinearLayout) -> LinearLayout:
    """A ``#ttng.tensor_memory_encoding`` layout (``row, col``) with TMEM's input names (``lane, col``)."""
    return LinearLayout({"lane": [list(b) for b in ll.bases["row"]], "col": [list(b) for b in ll.bases["col"]]},
                        ll.out_dims, require_surjective=False)


def _tmem_writers(ctx: AuditContext, root: Op | None) -> list[tuple[Op, Type]]:
    """(op, memdesc type) of every ``tmem_store`` / ``tmem_copy`` / sourced ``tmem_alloc`` into the
    allocation ``root``."""
    out = []
    for o in ctx.mod.ops if root is not None else []:
        if o.name == "ttng.tmem_alloc" and o is root and o.operands and o.out_types:
            out.append((o, o.out_types[0]))
        elif o.name in ("ttng.tmem_store", "ttng.tmem_copy") and len(o.operands) > 1 \
                and root_alloc(ctx, o.operands[1]) is root:
            mem = next((t for t in o.in_types + o.out_types if t.is_memdesc and t.in_tensor_memory), None)
            if mem is not None:
                out.append((o, mem))
    return out


def _tmem_operand_check(ctx: AuditContext, op: Op, operand: str, mem_t: Type, ll: LinearLayout) -> None:
    """``tc_gen5_mma`` with A in tensor memory: the operand's TMEM layout is the data path layout the
    instruction reads (:func:`verilayout.prove.tmem.operand_a_verdict`, M and cta_group from the
    accumulator's encoding), and every writer of that allocation wrote this same layout (a
    ``tmem_store``'s registers are proved against it by its own ``tmem-layout`` check)."""
    base = {"operand": operand, "arch": "sm_100", "rule": A_OPERAND_RULE}
    t = ctx.typ(mem_t)
    d = ctx.typ(op.in_types[2]) if len(op.in_types) > 2 else None
    if operand != "A" or t is None or d is None or not isinstance(d.encoding, Attr) \
            or "blockM" not in d.encoding.params:
        ctx.add(op, "mma-tmem-operand", "unchecked", None, f"operand {operand} in tensor memory: the "
                "accumulator's tensor_memory_encoding is not on the op", reason="no accumulator type", **base)
        return
    two = bool(d.encoding.params.get("twoCTAs", False))
    m = int(d.encoding.params["blockM"]) * (2 if two else 1)
    v = operand_a_verdict(_tmem_rows(ll), m, int(t.shape[1]), 2 if two else 1)
    writers = _tmem_writers(ctx, root_alloc(ctx, op.operands[0]) if op.operands else None)
    data = dict(base, m=m, k=int(t.shape[1]), layout=mem_t.encoding_text, writers=[w.line for w, _ in writers])
    if v.status != "proved":
        ctx.add(op, "mma-tmem-operand", "counterexample", "error", f"operand A in tensor memory: {v.reason}",
                counterexample=v.counterexample, **data)
        return
    for w, mem in writers:
        wl = ctx.layout(mem)
        if wl is None or not same_layout(wl, ll):
            ctx.add(op, "mma-tmem-operand", "counterexample", "error", f"operand A in tensor memory: line "
                    f"{w.line} ({w.name}) writes the allocation as {mem.text}, the MMA reads it as {mem_t.text}", **data)
            return
    note = (f"; written by {', '.join(f'{w.name} (line {w.line})' for w, _ in writers)} in this layout"
            if writers else "; no writer of the allocation in this file")
    ctx.add(op, "mma-tmem-operand", "proved", None, f"operand A in tensor memory: {v.reason}{note}", **data)


def _tmem_copy_check(ctx: AuditContext, op: Op) -> None:
    """``ttng.tmem_copy`` (tcgen05.cp of MMA scale factors, shared memory to tensor memory): every
    element lands where the destination's TMEM layout keeps it
    (:func:`verilayout.prove.tmem.copy_verdict`)."""
    mems = [t for t in op.in_types if t.is_memdesc]
    src = next((t for t in mems if not t.in_tensor_memory), None)
    dst = next((t for t in mems if t.in_tensor_memory), None)
    sl, dl = (ctx.layout(src) if src else None), (ctx.layout(dst) if dst else None)
    st = ctx.typ(src) if src else None
    if sl is None or dl is None or st is None or "row" not in dl.in_dims or "offset" not in sl.in_dims:
        ctx.add(op, "tmem-layout", "unchecked", None, f"{op.name}: no readable shared and tensor-memory types "
                "on the op", reason="no type")
        return
    v = copy_verdict(sl, _tmem_rows(dl), elem_bit_width(st.elem) or 0)
    if v.status == "proved":
        ctx.add(op, "tmem-layout", "proved", None, f"{op.name}: {v.reason}", rule=TMEM_COPY_RULE)
    else:
        ctx.add(op, "tmem-layout", "counterexample", "error", f"{op.name}: {v.reason}",
                counterexample=v.counterexample, rule=TMEM_COPY_RULE)


def _count(v: Any) -> bool:
    """An attribute value that is a count or an index: an int >= 0 (not a bool)."""
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _tmem_subslice_check(ctx: AuditContext, op: Op) -> None:
    """``ttng.tmem_subslice {offset = N}``: the view is the source's TMEM layout at the address of
    element ``(0, N)`` (:func:`verilayout.prove.tmem.subslice_verdict`); loads and stores through it
    are proved against that layout by their own ``tmem-layout`` checks."""
    offset = op.attributes.get("offset")
    src_t = ctx.typ(op.in_types[0]) if op.in_types else None
    dst_t = ctx.typ(op.out_types[0]) if op.out_types else None
    src = ctx.layout(op.in_types[0]) if op.in_types else None
    if not _count(offset) or src_t is None or dst_t is None or src is None or "row" not in src.in_dims:
        ctx.add(op, "tmem-layout", "unchecked", None, f"{op.name}: no offset or no readable TMEM types on "
                "the op", reason="no type")
        return
    if tuple(src_t.shape) != layout_shape(src_t):
        ctx.add(op, "tmem-layout", "unchecked", None, f"{op.name}: a subslice of a subslice is not modelled",
                reason="subslice view")
        return
    width = int(dst_t.shape[-1])
    v = subslice_verdict(_tmem_rows(src), offset, width)
    data = {"offset": offset, "width": width, "rule": TMEM_SUBSLICE_RULE}
    if v.status == "proved":
        ctx.add(op, "tmem-layout", "proved", None, f"{op.name}: {v.reason}", address=v.details.get("address"),
                **data)
    else:
        ctx.add(op, "tmem-layout", "counterexample", "error", f"{op.name}: {v.reason}",
                counterexample=v.counterexample, **data)


def _fragment_check(ctx: AuditContext, op: Op, reg_t: Type, arch: str) -> None:
    t, ll = ctx.typ(reg_t), ctx.layout(reg_t)
    base = {"operand": "A", "arch": arch}
    if arch != "sm_90" or t is None or ll is None or _MMA_DTYPES.get(t.elem) is None:
        ctx.add(op, "mma-fragment", "unchecked", None, "register A operand: not modelled for this "
                "arch/type/layout", reason="not modelled", **base)
        return
    dtype = _MMA_DTYPES[t.elem]
    kx = k_of_dtype(dtype)
    try:
        frag = fragment((64, 8, kx), "A", dtype)
    except LayoutError as e:
        ctx.add(op, "mma-fragment", "unchecked", None, f"register A operand: {e}", reason=str(e), **base)
        return
    fb, lb = frag.layout.bases, ll.bases
    problems = []
    if [list(b) for b in lb.get("lane", [])] != [list(b) for b in fb["lane"]]:
        problems.append(f"lane bases {lb.get('lane')} differ from the fragment's {fb['lane']}")
    if [list(b) for b in lb.get("warp", [])[:2]] != [list(b) for b in fb["warp"][:2]]:
        problems.append(f"warp bases {lb.get('warp', [])[:2]} differ from the fragment's {fb['warp'][:2]}")
    regs = [list(b) for b in lb.get("register", [])]
    for b in fb["register"]:
        if list(b) not in regs:
            problems.append(f"fragment register basis {b} is not a register basis of the operand")
            break
    data = dict(base, dtype=dtype, fragment=f"m64n8k{kx}", layout=reg_t.encoding_text)
    if problems:
        ctx.add(op, "mma-fragment", "counterexample", "error",
                "register A operand does not hold the wgmma fragment: " + "; ".join(problems), **data)
    else:
        ctx.add(op, "mma-fragment", "proved", None, "register A operand holds the wgmma A fragment "
                f"(lanes, warps and registers of m64n*k{kx} {dtype})", **data)


# ----- convert_layout ----------------------------------------------------------------------

def classify_conversion(src: LinearLayout, dst: LinearLayout) -> str:
    """``none`` / ``register`` / ``warp-shuffle`` / ``shared-memory`` for ``src -> dst``.

    The conversion ``dst^-1 o src`` maps (register, lane, warp, block) of the source to the
    destination's; data crosses warps (or blocks) through shared memory, crosses lanes by
    shuffles, else stays in the thread.

    >>> a = LinearLayout({"register": [[1]], "lane": [[2]], "warp": [], "block": []}, ["dim0"])
    >>> b = LinearLayout({"register": [[2]], "lane": [[1]], "warp": [], "block": []}, ["dim0"])
    >>> classify_conversion(a, a), classify_conversion(a, b)
    ('none', 'warp-shuffle')
    """
    if src.bases == dst.bases:
        return "none"
    cvt = src.invert_and_compose(dst)
    outs = cvt.out_dim_names
    worst = 0
    rank = {"none": 0, "register": 1, "warp-shuffle": 2, "shared-memory": 3}
    names = ["none", "register", "warp-shuffle", "shared-memory"]
    for d, bases in cvt.bases.items():
        for i, b in enumerate(bases):
            img = dict(zip(outs, b))
            if not any(img.values()) or img == {o: (1 << i if o == d else 0) for o in outs}:
                continue
            touched = {o for o, v in img.items() if v} | {d}
            if touched & {"warp", "block"}:
                k = "shared-memory"
            elif "lane" in touched:
                k = "warp-shuffle"
            else:
                k = "register"
            worst = max(worst, rank[k])
    return names[worst]


@lru_cache(maxsize=1024)   # kernels convert between the same few layout pairs again and again
def _classified(src: LinearLayout, dst: LinearLayout) -> str:
    """:func:`classify_conversion`, once per pair of layouts (a bad pair raises again each time)."""
    return classify_conversion(src, dst)


def _convert_check(ctx: AuditContext, op: Op) -> None:
    if not op.in_types or not op.out_types:
        ctx.add(op, "convert-layout", "unchecked", None, "no types on the op", reason="no type")
        return
    src, dst = ctx.layout(op.in_types[0]), ctx.layout(op.out_types[0])
    if src is None or dst is None:
        ctx.add(op, "convert-layout", "unchecked", None, "a layout could not be read", reason="unsupported layout")
        return
    try:
        kind = _classified(src, dst)
    except LayoutError as e:
        ctx.add(op, "convert-layout", "unchecked", None, f"cannot compose the layouts: {e}", reason=str(e))
        return
    text = {"none": "no data movement (the layouts are equal up to naming)",
            "register": "a permutation of each thread's registers",
            "warp-shuffle": "warp shuffles (data crosses lanes, not warps)",
            "shared-memory": "a round trip through shared memory (data crosses warps)"}[kind]
    sev = "note" if kind == "shared-memory" else None
    data: dict = {"movement": kind}
    msg = f"layout conversion needs {text}"
    if kind == "shared-memory" and is_nvidia(ctx.mod.target):
        best = _scratch_swizzle(ctx, op, src, dst)
        if best is not None and "internal_error" in best:
            internal_unchecked(ctx, op, "scratch-swizzle", "the best scratch swizzle", best["internal_error"])
            best = None
        if best is not None:
            data["best"] = best
            msg += (f"; the best scratch swizzle for this pair takes {best['wavefronts_per_warp']} "
                    f"wavefronts per warp (write + read; lower bound {best['lower_bound']}, "
                    f"{best['status']}): {best['layout']}")
    ctx.add(op, "convert-layout", "proved", sev, msg, **data)


def _scratch_swizzle(ctx: AuditContext, op: Op, src: LinearLayout, dst: LinearLayout) -> dict | None:
    """The GF(2) swizzle with the fewest wavefronts for writing ``src`` and reading ``dst``
    through scratch memory (``swizzle synth``'s optimum), or None when out of its reach."""
    t = ctx.typ(op.in_types[0])
    bits = elem_bit_width(t.elem) if t is not None else None
    if not bits or src.total_in_bits > 16:
        return None
    return _optimal_scratch(src, dst, bits)


@lru_cache(maxsize=256)  # keyed by the two layouts and the width; kernels repeat their epilogue pairs
def _optimal_scratch(src: LinearLayout, dst: LinearLayout, bits: int) -> dict | None:
    try:
        outs = {n: max(src.out_dims[n], dst.out_dims[n]) for n in src.out_dim_names}
        best, lower, verdict = optimal_swizzle([(src, "write"), (dst, "read")], bits, outs, BankModel())
    except LayoutError:
        return None                      # out of the synthesizer's reach: no swizzle to offer
    except (AssertionError, ValueError, KeyError) as e:
        return {"internal_error": internal_message(e)}
    return {"layout": best.mlir, "wavefronts_per_warp": best.total, "lower_bound": lower,
            "status": verdict.status}


# ----- views -------------------------------------------------------------------------------

def _order_attr(op: Op) -> list[int] | None:
    order = op.attributes.get("order")
    return list(order) if isinstance(order, tuple) and order else None


def _expected_view(op: Op, src: LinearLayout, dst_shape: tuple, src_shape: tuple) -> LinearLayout | str:
    names = src.out_dim_names
    if op.name in ("tt.trans", "ttg.memdesc_trans"):
        order = _order_attr(op)
        if order is None or sorted(order) != list(range(len(names))):
            return "no permutation order on the op"
        # result dim i is source dim order[i]
        moved = src.transpose_outs([names[o] for o in order])
        return moved.with_out_names([f"dim{i}" for i in range(len(order))]) if hasattr(moved, "with_out_names") \
            else _rename_outs(moved, [f"dim{i}" for i in range(len(order))])
    if op.name in ("tt.reshape", "ttg.memdesc_reshape"):
        # Triton flattens row-major (last dim fastest): reverse to our first-dim-low order
        rev = src.transpose_outs(list(reversed(names)))
        flat = rev.reshape_outs([("flat", src.total_out_size if src.is_surjective() else _size(src_shape))])
        new = [(f"dim{i}", s) for i, s in reversed(list(enumerate(dst_shape)))]
        return flat.reshape_outs(new).transpose_outs([f"dim{i}" for i in range(len(dst_shape))])
    return "not modelled"


def _size(shape: tuple) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _rename_outs(ll: LinearLayout, names: list[str]) -> LinearLayout:
    outs = dict(zip(names, [ll.out_dims[n] for n in ll.out_dim_names]))
    return LinearLayout({k: [list(b) for b in v] for k, v in ll.bases.items()}, outs)


def _view_check(ctx: AuditContext, op: Op) -> None:
    if op.name in ("tt.join", "tt.split"):
        _join_split_check(ctx, op)
        return
    if not op.in_types or not op.out_types:
        ctx.add(op, "view-layout", "unchecked", None, "no types on the op", reason="no type")
        return
    st, dt = ctx.typ(op.in_types[0]), ctx.typ(op.out_types[0])
    src, dst = ctx.layout(op.in_types[0]), ctx.layout(op.out_types[0])
    if src is None or dst is None or st is None or dt is None:
        ctx.add(op, "view-layout", "unchecked", None, "a layout could not be read", reason="unsupported layout")
        return
    if st.kind == "memdesc" and (layout_shape(st) != tuple(st.shape) or layout_shape(dt) != tuple(dt.shape)):
        ctx.add(op, "view-layout", "unchecked", None, "view of a subslice: not modelled", reason="subslice")
        return
    try:
        want = _expected_view(op, src, tuple(dt.shape), tuple(st.shape))
    except LayoutError as e:
        want = str(e)
    if isinstance(want, str):
        ctx.add(op, "view-layout", "unchecked", None, f"{op.name}: {want}", reason=want)
        return
    if op.name == "tt.reshape" and op.allow_reorder and not same_layout(want, dst):
        _reorder_check(ctx, op, want, dst)
        return
    _view_result(ctx, op, same_layout(want, dst),
                 f"{op.name}: the result layout is the source layout, "
                 f"{'transposed' if 'trans' in op.name else 'reshaped'} (no data movement)",
                 f"{op.name}: the result layout is not the {'transpose' if 'trans' in op.name else 'reshape'} of the "
                 f"source layout: expected bases {want.bases}, the op's type says {dst.bases}",
                 want, dst)


def _view_result(ctx: AuditContext, op: Op, ok: bool, proved: str, failed: str, expected: LinearLayout,
                 actual: LinearLayout) -> None:
    """Law: one ``view-layout`` result: proved with ``proved`` when ``ok``, else an error
    counterexample with ``failed`` and both layouts as data."""
    if ok:
        ctx.add(op, "view-layout", "proved", None, proved)
    else:
        ctx.add(op, "view-layout", "counterexample", "error", failed,
                expected=expected.to_dict(), actual=actual.to_dict())



def _join_split_check(ctx: AuditContext, op: Op) -> None:
    """join: the result is the sources with a new last dim of 2 held by one register bit, any bit
    (split the inverse): :func:`verilayout.prove.tensor_views.join_split_verdict`."""
    joined = op.out_types[0] if op.name == "tt.join" and op.out_types else \
        (op.in_types[0] if op.in_types else None)
    piece = (op.in_types[0] if op.name == "tt.join" else op.out_types[0]) \
        if op.in_types and op.out_types else None
    if joined is None or piece is None:
        ctx.add(op, "view-layout", "unchecked", None, "no types on the op", reason="no type")
        return
    full, part = ctx.layout(joined), ctx.layout(piece)
    if full is None or part is None:
        ctx.add(op, "view-layout", "unchecked", None, "a layout could not be read", reason="unsupported layout")
        return
    v = join_split_verdict(full, part)
    if v.status == "proved":
        ctx.add(op, "view-layout", "proved", None, f"{op.name}: {v.reason} (no data movement)",
                register_bit=v.details.get("register_bit"), rule=JOIN_SPLIT_RULE)
        return
    ctx.add(op, "view-layout", "counterexample", "error",
            f"{op.name}: the result layout is not the source with the new last dim as one register bit: "
            f"{v.reason}; the op needs data movement", counterexample=v.counterexample, rule=JOIN_SPLIT_RULE,
            expected=part.to_dict(), actual=full.to_dict())


JOIN_SPLIT_RULE = ("Triton 3.9's Join/SplitOpConversion interleaves the halves in runs of 2^p registers, p the "
                   "first register basis of the joined layout with last coordinate 1 (its source)")
REORDER_RULE = ("tt.reshape allow_reorder: Triton's lowering copies each thread's registers in order, so "
                "the data sits at the exact reshape of the source while the type may declare a permutation "
                "(allowed by can_reorder=True); a reduction over the permuted dims sees the same elements")
_ELEMENTWISE = ("arith.", "math.", "tt.fp_to_fp", "tt.bitcast", "tt.extern_elementwise", "tt.precise_")


def _uniform(ctx: AuditContext, name: str) -> bool:
    """A value every element of which is the same (a splat or a splat constant)."""
    p = ctx.mod.defs.get(name)
    return p is not None and p.splat


def _reduced_dims(ctx: AuditContext, name: str, dims: tuple[str, ...], depth: int = 0) -> tuple[frozenset, str | None]:
    """(the dims of ``name`` that every consumer reduces away before the values are seen, the first
    consumer that sees them otherwise): consumers are followed through element-wise ops whose other
    operands are uniform, layout conversions, and reductions (whose result's dims map back)."""
    free: frozenset | None = None
    blocker = None
    for u in ctx.mod.users.get(name, ()) if depth < 32 else ():
        if u.name == "tt.reduce" and len(u.operands) == 1 and u.results:
            axis = u.attributes.get("axis")
            if not _count(axis) or axis >= len(dims):
                path, why = frozenset(), f"tt.reduce at line {u.line} (no axis)"
            else:
                a = axis
                sub, why = _reduced_dims(ctx, u.results[0], dims[:a] + dims[a + 1:], depth + 1)
                path, why = sub | {dims[a]}, None
        elif u.name == "ttg.convert_layout" or (u.name.startswith(_ELEMENTWISE) and len(u.results) == 1
                                                and all(o == name or _uniform(ctx, o) for o in u.operands)):
            path, why = _reduced_dims(ctx, u.results[0], dims, depth + 1)
        else:
            path, why = frozenset(), f"{u.name} at line {u.line}"
        free = path if free is None else free & path
        blocker = blocker or why
    return (free if free is not None else frozenset()), (blocker if free is not None else "no consumer")


def _reorder_check(ctx: AuditContext, op: Op, want: LinearLayout, have: LinearLayout) -> None:
    """``tt.reshape allow_reorder`` whose type is not the exact reshape: proved when its consumers
    reduce over the permuted dims (:func:`verilayout.prove.tensor_views.reorder_verdict`); an error
    only when the register-by-register copy cannot fit; otherwise unchecked with the reason."""
    if want.in_dims != have.in_dims:
        v = reorder_verdict(want, have, frozenset())
        ctx.add(op, "view-layout", "counterexample", "error", f"{op.name} allow_reorder: {v.reason}",
                counterexample=v.counterexample, rule=REORDER_RULE, expected=want.to_dict(), actual=have.to_dict())
        return
    free, blocker = _reduced_dims(ctx, op.results[0], tuple(have.out_dim_names)) if op.results \
        else (frozenset(), "no result")
    v = reorder_verdict(want, have, free)
    if v.status == "proved":
        ctx.add(op, "view-layout", "proved", None, f"{op.name} allow_reorder: {v.reason}, and every consumer "
                f"reduces over {sorted(free)} (order-insensitive)", rule=REORDER_RULE, reduced=sorted(free))
        return
    seen = f"a consumer ({blocker}) sees the elements in their order" if blocker else \
        f"the consumers reduce over {sorted(free)} only"
    ctx.add(op, "view-layout", "unchecked", None, f"{op.name} allow_reorder: Triton permuted the elements "
            f"({v.reason}) and {seen}: allowed by can_reorder=True, whether the order matters is not decided",
            reason="allow_reorder", rule=REORDER_RULE, counterexample=v.counterexample)


# ----- the driver --------------------------------------------------------------------------

#: the MMA ops checked by ``_mma_check``, with the architecture of their descriptors
ARCH_MMA = {"ttng.warp_group_dot": "sm_90", "ttng.tc_gen5_mma": "sm_100", "ttng.tc_gen5_mma_scaled": "sm_100"}


def _audit_op(ctx: AuditContext, op: Op) -> None:
    n = op.name
    arch_mma = ARCH_MMA
    if n == "ttg.local_alloc":
        if op.operands and op.in_types and op.out_types:
            bank_check(ctx, op, op.in_types[0], op.out_types[0], op.results[0] if op.results else None, True)
        # an allocation without a source moves no data: nothing to check
        return
    if n == "ttg.local_store":
        if len(op.in_types) >= 1 and op.out_types:
            mem = op.out_types[0] if op.out_types[0].is_memdesc else None
            mem = mem or next((t for t in op.in_types if t.is_memdesc), None)
            reg = next((t for t in op.in_types if not t.is_memdesc), None)
            if mem and reg:
                bank_check(ctx, op, reg, mem, op.operands[1] if len(op.operands) > 1 else None, True)
                return
        ctx.add(op, "bank-conflicts", "unchecked", None, "local_store without readable types", reason="no type")
        return
    if n == "ttg.local_load":
        if op.in_types and op.out_types:
            bank_check(ctx, op, op.out_types[0], op.in_types[0], op.operands[0] if op.operands else None, False)
        else:
            ctx.add(op, "bank-conflicts", "unchecked", None, "local_load without types", reason="no type")
        return
    if n in ("ttng.tmem_load", "ttng.tmem_store") or (n == "ttng.tmem_alloc" and op.operands):
        _tmem_check(ctx, op)
        return
    if n == "ttng.tmem_alloc":
        return  # an allocation without a source moves no data: nothing to check
    if n == "ttg.async_copy_global_to_local":
        async_copy_check(ctx, op)
        return
    if n in ("ttng.async_tma_copy_global_to_local", "ttng.async_tma_copy_local_to_global"):
        _tma_check(ctx, op)
        _tma_write_check(ctx, op)
        return
    if n in arch_mma:
        _mma_check(ctx, op, arch_mma[n])
        return
    if n == "ttg.convert_layout":
        _convert_check(ctx, op)
        return
    if n in ("tt.trans", "tt.reshape", "tt.join", "tt.split", "ttg.memdesc_trans", "ttg.memdesc_reshape"):
        _view_check(ctx, op)
        return
    if n in ("ttng.tmem_subslice", "ttng.tmem_copy"):
        (_tmem_subslice_check if n == "ttng.tmem_subslice" else _tmem_copy_check)(ctx, op)
        return
    if n in ("ttg.memdesc_index", "ttg.memdesc_subslice", "ttg.memdesc_subview"):
        return  # views that only select part of the allocation: checked at their loads/stores
    if n in UNCHECKED:
        if n != "ttg.local_dealloc":
            ctx.add(op, "copy-layout", "unchecked", None, f"{n}: {UNCHECKED[n]}", reason=UNCHECKED[n])
        return
    # Type.is_memdesc on the printed texts, without a Type per text (most ops touch no memory; a
    # line without the word has no such type, and its types are then never decoded)
    if "memdesc<" in op.text and any("memdesc<" in t for t in op.operand_types + op.result_types) \
            and n not in NO_DATA:
        ctx.add(op, "shared-memory", "unchecked", None, f"{n} uses shared memory; no check models it",
                reason="op not modelled")


def audit_module(mod: Module, path: str) -> FileReport:
    """Every check of one parsed module (see the module docstring)."""
    ctx = AuditContext(mod, path)
    for op in mod.ops:
        try:
            _audit_op(ctx, op)
        except LayoutError as e:
            ctx.add(op, "layout", "unchecked", None, f"{op.name}: {e}", reason=str(e))
        except RecursionError:
            ctx.add(op, "layout", "unchecked", None, f"{op.name}: nested too deeply", reason="recursion")
        except Exception as e:  # noqa: BLE001 - one op the models trip on must not stop the audit
            ctx.add(op, "layout", "unchecked", "note", f"{op.name}: {internal_message(e)}; please report it",
                    reason="internal error", error=internal_message(e))
    attach_joint(ctx)
    assumptions = ("shared loads/stores use the widest ld/st.shared vector both layouts allow "
                   "(ldmatrix/stmatrix lowering not modelled)", "NVIDIA: 32 banks of 4 bytes")
    unsup = tuple(Unsupported(t, w) for t, w in ctx.unsupported.items())
    return FileReport(path, mod.target, mod.num_warps, tuple(ctx.checks), len(ctx.seen | set(ctx.unsupported)),
                      len(ctx.parsed), unsup, assumptions)


def audit_text(text: str | bytes, path: str = "<text>") -> FileReport:
    """Audit TTGIR text. Raises ``LayoutError`` only when the text is not readable at all.

    >>> audit_text("module {\\n}\\n", "empty.ttgir").checks
    ()
    """
    try:
        mod, rep = audited(text, path)
    except RecursionError:
        raise LayoutError(f"{path}: nested too deeply") from None
    return cannot_launch(rep, mod)     # a kernel that cannot launch: its errors are unchecked


def audited(text: str | bytes, path: str) -> tuple[Module, FileReport]:
    """The parsed module of TTGIR ``text`` and its audit at ``path``, the last two kept: a pair's
    TTGIR is audited once when its file and its PTX (whose plan it is) are audited in one process.
    Raises what :func:`parse_module` raises (``RecursionError`` included).

    >>> audited("module {\\n}\\n", "a.ttgir")[1] is audited(b"module {\\n}\\n", "a.ttgir")[1]
    True
    """
    return _audited(text.encode() if isinstance(text, str) else bytes(text), path)


@functools.lru_cache(maxsize=2)
def _audited(data: bytes, path: str) -> tuple[Module, FileReport]:
    mod = parse_module(data)
    return mod, audit_module(mod, path)


def audit_file(path: str) -> FileReport:
    """Audit one ``.ttgir`` file (``-``: standard input).

    >>> audit_file("/nonexistent.ttgir")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: /nonexistent.ttgir: cannot read: No such file or directory
    """
    if path == "-":
        return audit_text(read_bounded(sys.stdin.buffer, "<stdin>"), "<stdin>")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise LayoutError(f"{path}: cannot read: {e.strerror}") from None
    try:
        return audit_text(data, path)
    except LayoutError as e:
        raise LayoutError(f"{path}: {e}") from None
