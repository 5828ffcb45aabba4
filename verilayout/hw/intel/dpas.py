"""Intel DPAS (dot product accumulate systolic) layouts as linear layouts.

A DPAS instruction multiplies an ``M x K`` tile of A (``M = repeatCount``,
``K = systolicDepth * opsPerChan``) by a ``K x N`` tile of B (``N = executionSize``)
into an ``M x N`` accumulator, cooperatively over one sub-group. The layout of each
operand inside a sub-group (registers x lanes), then ``repCluster`` repetitions
(registers), ``warpsPerCTA`` (warps) and the repetitions needed to cover the tensor
(registers), follows the Intel XPU Triton backend's ``DPAStoLinearLayout``
(``third_party/intel/lib/Dialect/TritonIntelGPU/IR/LinearLayoutConversions.cpp``);
the parameter rules follow ``DpasEncodingAttr::verify`` in the same backend.
``docs/BLOCK_LOADS_LAYOUT.md`` of intel-xpu-backend-for-triton prints two of these layouts (A and B,
Warp0).

>>> d = Dpas(8, 8, 16, 2, 16, (8, 4), (4, 2))
>>> d.shape_a, d.shape_b, d.shape_c
((32, 16), (16, 32), (32, 32))
>>> d.layout((256, 32), 0).in_dims
{'register': 64, 'lane': 16, 'warp': 32, 'block': 1}
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from verilayout.bits import doubling
from verilayout.bits import is_pow2 as _pow2
from verilayout.dtypes import subset
from verilayout.errors import LayoutError
from verilayout.core.cga import combine_cta_cga_with_shape
from verilayout.core.linear_layout import LinearLayout

OP_A, OP_B, OP_C = 0, 1, 2
#: The scale operands of block-scaled DPAS (Intel backend: ``BlockScaledDPAStoLinearLayout``).
OP_SCALE_A, OP_SCALE_B = 3, 4

#: opsPerChan for each element type DPAS multiplies (32 bits per channel / element bits).
OPS_PER_CHAN = {"tf32": 1, "f32": 1, "f16": 2, "bf16": 2, "i8": 4, "s8": 4, "u8": 4}

#: Bytes per element of those types.
DTYPE_BYTES = {name: b // 8 for name, b in subset(tuple(OPS_PER_CHAN)).items()}


def _names(rank: int) -> list[str]:
    return [f"dim{i}" for i in range(rank)]


@dataclass(frozen=True)
class Dpas:
    """The parameters of ``#triton_intel_gpu.dpas`` (alias ``#ttig.dpas``).

    Field order follows the attribute: repeatCount, systolicDepth, executionSize,
    opsPerChan, threadsPerWarp, warpsPerCTA, repCluster, then the optional ``fp4KPack``
    (fp4 values packed into one i8 along K; ``DpasEncodingAttr::verify``: 2, and only with
    opsPerChan 4). Invalid parameters raise :class:`LayoutError` naming the attribute key.

    >>> Dpas(8, 8, 16, 2, 16, (1, 1), (1, 1)).inst_shape_a
    (8, 16)
    >>> Dpas(9, 8, 16, 2, 16, (1, 1), (1, 1))
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: 'repeatCount' must be in [1, 8], got 9
    """

    repeat_count: int
    systolic_depth: int
    execution_size: int
    ops_per_chan: int
    threads_per_warp: int
    warps_per_cta: tuple
    rep_cluster: tuple
    fp4_k_pack: int | None = None

    def __post_init__(self):
        object.__setattr__(self, "warps_per_cta", tuple(self.warps_per_cta))
        object.__setattr__(self, "rep_cluster", tuple(self.rep_cluster))
        self._validate()

    def _validate(self) -> None:
        # DpasEncodingAttr::verify (Intel backend) plus what a linear layout needs.
        if not 1 <= self.repeat_count <= 8:
            raise LayoutError(f"'repeatCount' must be in [1, 8], got {self.repeat_count}")
        if not _pow2(self.repeat_count):
            raise LayoutError(f"'repeatCount' = {self.repeat_count} is not a power of two "
                              "(a linear layout needs one)")
        if self.ops_per_chan not in (1, 2, 4):
            raise LayoutError(f"'opsPerChan' must be 1, 2 or 4, got {self.ops_per_chan}")
        if self.systolic_depth != 8:
            raise LayoutError(f"'systolicDepth' must be 8, got {self.systolic_depth}")
        for key, v in (("executionSize", self.execution_size),
                       ("threadsPerWarp", self.threads_per_warp)):
            if not _pow2(v):
                raise LayoutError(f"'{key}' = {v!r} is not a power of two")
        if self.threads_per_warp < self.execution_size:
            raise LayoutError(f"'threadsPerWarp' = {self.threads_per_warp} is smaller than "
                              f"'executionSize' = {self.execution_size}")
        if self.fp4_k_pack is not None:
            if self.fp4_k_pack != 2 or isinstance(self.fp4_k_pack, bool):
                raise LayoutError(f"'fp4KPack' must be 2, got {self.fp4_k_pack!r}")
            if self.ops_per_chan != 4:
                raise LayoutError(f"'fp4KPack' needs 'opsPerChan' = 4 (fp4 packed in i8), got "
                                  f"{self.ops_per_chan}")
        rank = len(self.rep_cluster)
        if rank not in (2, 3):
            raise LayoutError(f"'repCluster' must have 2 or 3 entries, got {list(self.rep_cluster)}")
        if len(self.warps_per_cta) != rank:
            raise LayoutError(f"'warpsPerCTA' has {len(self.warps_per_cta)} entries but "
                              f"'repCluster' has {rank}")
        for key, vals in (("warpsPerCTA", self.warps_per_cta), ("repCluster", self.rep_cluster)):
            for i, v in enumerate(vals):
                if not _pow2(v):
                    raise LayoutError(f"'{key}'[{i}] = {v!r} is not a power of two")

    # ----- shapes ----------------------------------------------------------------
    @property
    def rank(self) -> int:
        return len(self.rep_cluster)

    @property
    def inst_shape_a(self) -> tuple[int, int]:
        """One instruction's A tile: ``(repeatCount, systolicDepth * opsPerChan)``."""
        return (self.repeat_count, self.systolic_depth * self.ops_per_chan)

    @property
    def inst_shape_b(self) -> tuple[int, int]:
        """One instruction's B tile: ``(systolicDepth * opsPerChan, executionSize)``."""
        return (self.systolic_depth * self.ops_per_chan, self.execution_size)

    @property
    def inst_shape_c(self) -> tuple[int, int]:
        """One instruction's accumulator tile: ``(repeatCount, executionSize)``."""
        return (self.repeat_count, self.execution_size)

    @property
    def shape_a(self) -> tuple[int, int]:
        """A per warp and repCluster (the attribute's printed ``A``)."""
        m, k = self.inst_shape_a
        return (m * self.rep_cluster[-2], k)

    @property
    def shape_b(self) -> tuple[int, int]:
        """B per warp and repCluster (the attribute's printed ``B``)."""
        k, n = self.inst_shape_b
        return (k, n * self.rep_cluster[-1])

    @property
    def shape_c(self) -> tuple[int, int]:
        """C per warp and repCluster (the attribute's printed ``C``)."""
        m, n = self.inst_shape_c
        return (m * self.rep_cluster[-2], n * self.rep_cluster[-1])

    def inst_shape(self, op_idx: int) -> tuple[int, int]:
        """One instruction's tile of operand ``op_idx`` (0 A, 1 B, 2 C)."""
        return (self.inst_shape_a, self.inst_shape_b, self.inst_shape_c)[_op(op_idx)]

    def k_width(self, op_idx: int) -> int:
        """The ``kWidth`` a ``#ttg.dot_op`` with this parent must carry.

        B must match opsPerChan; A is packed to 16-bit lanes, so it carries
        ``opsPerChan / 2`` (at least 1) (Intel backend: dot_op kWidth verification,
        PR #1166 and #3165).

        >>> d = Dpas(8, 8, 16, 2, 16, (1, 1), (1, 1)); d.k_width(0), d.k_width(1)
        (1, 2)
        """
        if _op(op_idx) == OP_B:
            return self.ops_per_chan
        return max(1, self.ops_per_chan // 2)

    def repetitions(self, shape: Sequence[int], op_idx: int) -> tuple[int, int, int]:
        """Triton's ``getDPASRepetitions``: (batch, dim -2, dim -1) repetitions per warp.

        >>> Dpas(8, 8, 16, 2, 16, (8, 4), (4, 2)).repetitions((32, 256), 1)
        (1, 2, 2)
        """
        op = _op(op_idx)
        rank = len(shape)
        w = self.warps_per_cta
        per = (self.shape_a, self.shape_b, self.shape_c)[op]
        batch = max(1, shape[0] // w[0]) if rank == 3 else 1
        rows, cols = shape[-2], shape[-1]
        if op == OP_A:
            return (batch, max(1, rows // (per[0] * w[-2])), max(1, cols // per[1]))
        if op == OP_B:
            return (batch, max(1, rows // per[0]), max(1, cols // (per[1] * w[-1])))
        return (batch, max(1, rows // (per[0] * w[-2])), max(1, cols // (per[1] * w[-1])))

    # ----- the layout ---------------------------------------------------------------
    def tile_bases(self, op_idx: int) -> tuple[list[list[int]], list[list[int]]]:
        """Register and lane bases ``(row, col)`` of one instruction's operand tile.

        >>> Dpas(8, 8, 16, 2, 16, (1, 1), (1, 1)).tile_bases(1)
        ([[1, 0], [2, 0], [4, 0], [8, 0]], [[0, 1], [0, 2], [0, 4], [0, 8]])
        """
        op = _op(op_idx)
        tpw, opc = self.threads_per_warp, self.ops_per_chan
        if op == OP_A:
            return self._bases_a()
        rows_per_warp = tpw // self.execution_size
        lanes = [[0, t] for t in doubling(1, self.execution_size)]
        if op == OP_B:
            regs = [[o, 0] for o in doubling(1, opc)]
            regs += [[r * opc, 0] for r in doubling(rows_per_warp, self.systolic_depth)]
            lanes += [[r * opc, 0] for r in doubling(1, rows_per_warp)]
            return regs, lanes
        regs = [[r, 0] for r in doubling(rows_per_warp, self.repeat_count)]
        lanes += [[r, 0] for r in doubling(1, rows_per_warp)]
        return regs, lanes

    def _bases_a(self) -> tuple[list[list[int]], list[list[int]]]:
        # Operand A is packed to 16 bits per lane for elements of 16 bits or less.
        tpw, opc = self.threads_per_warp, self.ops_per_chan
        packed = 2 if opc == 4 else 1
        cols = self.systolic_depth * opc // packed
        rows_per_warp = -(-tpw // cols)
        repeats = self.repeat_count // rows_per_warp
        if repeats < 1:
            raise LayoutError(
                f"'repeatCount' = {self.repeat_count} is too small for operand A: its "
                f"{self.repeat_count} x {cols} packed tile has fewer values than "
                f"'threadsPerWarp' = {tpw} lanes")
        regs = [[0, o] for o in doubling(1, packed)]
        regs += [[w * rows_per_warp, 0] for w in doubling(1, repeats)]
        lanes = [[0, packed * t] for t in doubling(1, cols)]
        lanes += [[t // cols, 0] for t in doubling(cols, tpw)]
        return regs, lanes

    def layout(self, shape: Sequence[int], op_idx: int = OP_C) -> LinearLayout:
        """The operand's linear layout over ``shape`` (in dims register, lane, warp, block).

        ``op_idx`` 3 and 4 are the scale operands of block-scaled DPAS (:meth:`scale_layout`).

        >>> L = Dpas(8, 8, 16, 2, 16, (1, 1), (1, 1)).layout((8, 16), 2)
        >>> L.bases["register"], L.bases["lane"][:2]
        ([[1, 0], [2, 0], [4, 0]], [[0, 1], [0, 2]])
        """
        if op_idx in (OP_SCALE_A, OP_SCALE_B) and not isinstance(op_idx, bool):
            return self.scale_layout(shape, op_idx)
        op = _op(op_idx)
        shape = _check_shape(shape, self.rank)
        rank = self.rank
        names = _names(rank)
        regs, lanes = self.tile_bases(op)
        tile = LinearLayout({"register": regs, "lane": lanes}, names[-2:])
        w, rc = self.warps_per_cta, self.rep_cluster
        row, col = rank - 2, rank - 1
        if op == OP_A:
            k_dim, non_k = col, row
            tile = tile * LinearLayout.identity1D(rc[non_k], "register", names[non_k])
            tile = tile * LinearLayout.zeros1D(w[k_dim], "warp", names[k_dim])
            tile = tile * LinearLayout.identity1D(w[non_k], "warp", names[non_k])
        elif op == OP_B:
            k_dim, non_k = row, col
            tile = tile * LinearLayout.identity1D(rc[non_k], "register", names[non_k])
            tile = tile * LinearLayout.identity1D(w[non_k], "warp", names[non_k])
            tile = tile * LinearLayout.zeros1D(w[k_dim], "warp", names[k_dim])
        else:
            k_dim, non_k = col, row
            tile = tile * LinearLayout.identity1D(rc[k_dim], "register", names[k_dim])
            tile = tile * LinearLayout.identity1D(rc[non_k], "register", names[non_k])
            tile = tile * LinearLayout.identity1D(w[k_dim], "warp", names[k_dim])
            tile = tile * LinearLayout.identity1D(w[non_k], "warp", names[non_k])
        if rank == 3:
            tile = tile * LinearLayout.identity1D(w[0], "warp", names[0])
        reps = self.repetitions(shape, op)
        tile = tile * LinearLayout.identity1D(reps[2] if k_dim == col else reps[1], "register",
                                              names[k_dim])
        tile = tile * LinearLayout.identity1D(reps[2] if non_k == col else reps[1], "register",
                                              names[non_k])
        if rank == 3:
            tile = tile * LinearLayout.identity1D(reps[0], "register", names[0])
        return combine_cta_cga_with_shape(tile, {}, shape)


    # ----- block-scaled DPAS: the scale operands ---------------------------------------
    @property
    def scale_ops_per_chan(self) -> int:
        """opsPerChan of block-scaled DPAS: ``opsPerChan * fp4KPack`` (fp4 packed in i8)."""
        return self.ops_per_chan * (self.fp4_k_pack or 1)

    def scale_tile_bases(self, op_idx: int) -> tuple[list[list[int]], list[list[int]]]:
        """Register and lane bases ``(non-K, K)`` of one block-scaled DPAS's scale operand.

        Law (Intel backend, ``BlockScaledDPASRegBasesScale{A,B}`` and ``...LaneBasesScale{A,B}``
        in ``LinearLayoutConversions.cpp``): lane ``t < repeatCount`` (A) or ``< executionSize``
        (B) holds row ``t``, the other lanes repeat it (zero bases); with 8 ops per channel
        (fp4 packed twice) a register holds the second K scale.

        >>> Dpas(8, 8, 16, 4, 16, (1, 1), (1, 1), fp4_k_pack=2).scale_tile_bases(3)
        ([[0, 1]], [[1, 0], [2, 0], [4, 0], [0, 0]])
        """
        if op_idx not in (OP_SCALE_A, OP_SCALE_B) or isinstance(op_idx, bool):
            raise LayoutError(f"a scale operand has opIdx 3 (scale A) or 4 (scale B), got "
                              f"{op_idx!r}")
        if self.repeat_count != 8:
            raise LayoutError(f"'repeatCount' = {self.repeat_count}: block-scaled DPAS needs 8 "
                              "(Intel backend, BlockScaledDPAStoLinearLayout)")
        opc = self.scale_ops_per_chan
        if opc not in (2, 4, 8):
            raise LayoutError(f"'opsPerChan' (times 'fp4KPack') = {opc}: block-scaled DPAS "
                              "needs 2, 4 or 8")
        rows = self.repeat_count if op_idx == OP_SCALE_A else self.execution_size
        if op_idx == OP_SCALE_B and rows != 16:
            raise LayoutError(f"'executionSize' = {rows}: block-scaled DPAS scale B needs 16")
        regs = [[0, 1]] if opc == 8 else []
        lanes = [[t, 0] for t in doubling(1, rows)]
        lanes += [[0, 0] for _ in doubling(max(rows, 1), self.threads_per_warp)]
        return regs, lanes

    def scale_layout(self, shape: Sequence[int], op_idx: int) -> LinearLayout:
        """The layout of a block-scaled DPAS scale operand (3: scale A ``M x K/32``, 4: scale
        B ``N x K/32``) over ``shape``, K last, as the Intel backend builds it.

        Law (``BlockScaledDPAStoLinearLayout``, K index -1): the tile of
        :meth:`scale_tile_bases`, repeated in registers by repCluster along the non-K dim,
        spread over warps along the non-K dim and broadcast over the K warps, then repeated
        in registers to cover ``shape`` (K first, then non-K, then the batch).

        >>> d = Dpas(8, 8, 16, 4, 16, (2, 2), (4, 2))
        >>> d.layout((128, 2), 4).bases["register"]
        [[16, 0], [0, 1], [64, 0]]
        """
        regs, lanes = self.scale_tile_bases(op_idx)
        shape = _check_shape(shape, self.rank)
        rank = self.rank
        names = _names(rank)
        k_out, non_k_out = names[rank - 1], names[rank - 2]
        w, rc = self.warps_per_cta, self.rep_cluster
        tile = LinearLayout({"register": regs, "lane": lanes}, names[-2:])
        if op_idx == OP_SCALE_A:
            dpas_non_k, dpas_k = rank - 2, rank - 1
            tile = tile * LinearLayout.identity1D(rc[dpas_non_k], "register", non_k_out)
            tile = tile * LinearLayout.zeros1D(w[dpas_k], "warp", k_out)
            tile = tile * LinearLayout.identity1D(w[dpas_non_k], "warp", non_k_out)
        else:
            dpas_non_k, dpas_k = rank - 1, rank - 2
            tile = tile * LinearLayout.identity1D(rc[dpas_non_k], "register", non_k_out)
            tile = tile * LinearLayout.identity1D(w[dpas_non_k], "warp", non_k_out)
            tile = tile * LinearLayout.zeros1D(w[dpas_k], "warp", k_out)
        if rank == 3:
            tile = tile * LinearLayout.identity1D(w[0], "warp", names[0])
        reps = {n: -(-s // tile.out_dims.get(n, 1)) for n, s in zip(names, shape)}
        tile = tile * LinearLayout.identity1D(reps[k_out], "register", k_out)
        tile = tile * LinearLayout.identity1D(reps[non_k_out], "register", non_k_out)
        if rank == 3:
            tile = tile * LinearLayout.identity1D(reps[names[0]], "register", names[0])
        return combine_cta_cga_with_shape(tile, {}, shape)


def _op(op_idx: int) -> int:
    if op_idx not in (OP_A, OP_B, OP_C) or isinstance(op_idx, bool):
        raise LayoutError(f"opIdx must be 0 (A), 1 (B) or 2 (the accumulator), got {op_idx!r}")
    return op_idx


def _check_shape(shape: Sequence[int], rank: int) -> tuple:
    shape = tuple(shape)
    if len(shape) != rank:
        raise LayoutError(f"tensor shape {list(shape)} has rank {len(shape)}; the DPAS layout "
                          f"has rank {rank} ('warpsPerCTA' and 'repCluster' entries)")
    for i, s in enumerate(shape):
        if not _pow2(s):
            raise LayoutError(f"tensor shape {list(shape)}: dim {i} has size {s!r}, not a power "
                              "of two")
    return shape


def dpas_for_dtype(dtype: str, warps_per_cta: Sequence[int], rep_cluster: Sequence[int], *,
                   repeat_count: int = 8, threads_per_warp: int = 16,
                   execution_size: int = 16) -> Dpas:
    """The DPAS parameters Triton picks for ``dtype`` on Xe2 (systolic depth 8).

    >>> dpas_for_dtype("i8", (4, 1), (4, 2)).shape_a
    (32, 32)
    """
    if dtype not in OPS_PER_CHAN:
        raise LayoutError(f"DPAS does not multiply {dtype!r} (known: {', '.join(OPS_PER_CHAN)})")
    return Dpas(repeat_count, 8, execution_size, OPS_PER_CHAN[dtype], threads_per_warp,
                tuple(warps_per_cta), tuple(rep_cluster))


# ----- a DPAS operand, and a distributed tensor, as read at the door ------------------------------

@dataclass(frozen=True, eq=False)
class Operand:
    """A DPAS operand resolved from text or a layout: its linear layout, element type,
    ``op_idx`` (0 A, 1 B), one instruction's tile ``inst_shape`` and the DPAS parameters
    (``None`` when given as a bare layout); ``text``: the Triton text it was read from
    (:func:`verilayout.frontends.shared_text.operand`; empty for a bare layout).

    >>> L = LinearLayout({"register": [[0, 1]], "lane": [[1, 0]]}, ["dim0", "dim1"])
    >>> layout_operand(L, dtype="f16", op_idx=0).shape
    (2, 2)
    """

    layout: LinearLayout
    dtype: str
    op_idx: int
    inst_shape: tuple
    dpas: Dpas | None = None
    text: str = ""

    @property
    def shape(self) -> tuple:
        return (self.layout.out_dim_size("dim0"), self.layout.out_dim_size("dim1"))


def check_dtype(dtype: object) -> str:
    """``dtype`` if DPAS multiplies it, else LayoutError naming the known types.

    >>> check_dtype("bf16")
    'bf16'
    """
    if dtype not in DTYPE_BYTES:
        raise LayoutError(f"element type {dtype!r} is not one DPAS multiplies (known: "
                          f"{', '.join(DTYPE_BYTES)})")
    return dtype


def layout_operand(layout: LinearLayout, *, shape: Sequence[int] | None = None, dtype: str | None = None,
                   op_idx: int | None = None, inst_shape: Sequence[int] | None = None) -> Operand:
    """A DPAS operand given as a bare LinearLayout (``op_idx`` and ``dtype`` required; the
    instruction tile defaults to ``8 x K`` for A and ``K x 16`` for B, K = 8 * opsPerChan).

    Law: ``shape``, where given, equals the layout's shape (every out dim's size).

    >>> L = LinearLayout({"register": [[0, 1]], "lane": [[1, 0]]}, ["dim0", "dim1"])
    >>> layout_operand(L, dtype="f16", op_idx=1).inst_shape
    (16, 16)
    """
    if op_idx is None or dtype is None:
        raise LayoutError("a LinearLayout operand needs op_idx= (0 A, 1 B) and dtype=")
    have = [layout.out_dim_size(n) for n in layout.out_dim_names]
    if shape is not None and list(shape) != have:
        raise LayoutError(f"shape {list(shape)} differs from the layout's shape {have} (out dims "
                          f"{', '.join(layout.out_dim_names)})")
    check_dtype(dtype)
    inst = tuple(inst_shape) if inst_shape is not None else None
    if inst is None:
        k = 8 * OPS_PER_CHAN[dtype]
        inst = (8, k) if op_idx == 0 else (k, 16)
    return Operand(layout, dtype, op_idx, inst)


@dataclass(frozen=True)
class TensorLayout:
    """A distributed layout of a rank-2 tensor (in dims register, lane, warp), its element type and
    shape, as read from Triton text at the door (:func:`verilayout.frontends.shared_text.load_block_layout`),
    for block-load plans of tensors that are not DPAS operands.

    >>> L = LinearLayout({"register": [[0, 1]], "lane": [[1, 0]]}, ["dim0", "dim1"])
    >>> TensorLayout(L, "f16", (2, 2)).dtype
    'f16'
    """

    layout: LinearLayout
    dtype: str
    shape: tuple | None = None


@dataclass(frozen=True)
class DpasTile:
    """One DPAS GEMM tile read at the door (:func:`verilayout.frontends.shared_text.dpas_tile`): the
    ``#ttig.dpas`` attribute text, the A (``m x k``) and B (``k x n``) operands Triton derives from it
    (``#ttg.dot_op`` with kWidth from opsPerChan), and the accumulator layout of C (``m x n``).

    >>> L = LinearLayout({"register": [[0, 1]], "lane": [[1, 0]]}, ["dim0", "dim1"])
    >>> op = layout_operand(L, dtype="f16", op_idx=0)
    >>> DpasTile("#ttig.dpas<{...}>", (2, 2, 2), "f16", op, op, L).mnk
    (2, 2, 2)
    """

    parent: str
    mnk: tuple
    dtype: str
    a: Operand
    b: Operand
    c: LinearLayout

