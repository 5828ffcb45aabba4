"""Rank-3 tensors for 2D block loads: a leading batch dim, loaded one batch index at a time.

Triton's Intel backend loads a rank-3 tensor (the batch dim of a 3-D ``tt.dot``) with 2D block
loads over its last two dims; a load's batch index is folded into its base pointer, ``base +
batch * baseHeight * pitch`` (``Subgroup2DBlockLoadOpConversion``, "Batch dimensions: fold into
base pointer via GEP", ``third_party/intel/lib/TritonIntelGPUToLLVM/LoadStoreOpToLLVM.cpp`` of
intel-xpu-backend-for-triton), one offset for all 16 lanes of the load. So every load covers
exactly one batch index, and a sub-group's needs split by batch index.

:func:`batch_slices` splits a ``register, lane, warp -> dim0 (batch), dim1, dim2`` layout into
its *slice*: the rank-2 ``register, lane, warp -> dim0, dim1`` layout of one batch index (the
register bits that do not move the batch), the batch indices a sub-group holds, and where each
register of the rank-3 layout sits (its batch index and its slice register). It refuses, with
the reason, a layout whose lanes move the batch (one load cannot give its lanes different batch
indices) or whose register or warp bits move the batch and the rows or columns at once (the
batch indices would not share one slice).

>>> L = LinearLayout({"register": [[0, 0, 1], [1, 0, 0]], "lane": [[0, 1, 0]], "warp": []},
...                  {"dim0": 2, "dim1": 2, "dim2": 2})
>>> s = batch_slices(L, 0)
>>> s.slice.bases["register"], s.batches, s.registers
([[0, 1]], (0, 1), ((0, 0), (0, 1), (1, 0), (1, 1)))
"""
from __future__ import annotations

from dataclasses import dataclass

from verilayout.core.linear_layout import LinearLayout
from verilayout.errors import LayoutError

__all__ = ["BatchSlices", "batch_slices", "is_batched"]

_SOURCE = ("Triton's Intel backend folds the batch offset into the load's base pointer: "
           "LoadStoreOpToLLVM.cpp")


@dataclass(frozen=True)
class BatchSlices:
    """``slice``: the rank-2 layout of one batch index; ``batches``: the batch indices sub-group
    ``warp`` holds, ascending; ``registers[r] = (batch, slice register)`` for every register ``r``
    of the rank-3 layout; ``batch_size``: the batch dim's extent."""

    slice: LinearLayout
    batches: tuple
    registers: tuple
    warp: int
    batch_size: int


def is_batched(layout: object) -> bool:
    """Whether ``layout`` is a rank-3 distributed layout (out dims ``dim0, dim1, dim2``).

    >>> is_batched(LinearLayout({"register": [[1, 0, 0]]}, ["dim0", "dim1", "dim2"]))
    True
    """
    return isinstance(layout, LinearLayout) and layout.out_dim_names == ["dim0", "dim1", "dim2"]


def _split(layout: LinearLayout, dim: str) -> tuple[list[int], list[list[int]]]:
    """Per basis of ``dim``: its batch part and its (row, col) part; a basis moving both is refused."""
    batch, rest = [], []
    for k, b in enumerate(layout.bases.get(dim, [])):
        if b[0] and any(b[1:]):
            raise LayoutError(f"{dim} bit {k} (basis {b}) moves the batch index and the rows or "
                              "columns at once; block-load plans take a rank-3 layout whose register "
                              "and warp bits move either the batch or the rows and columns (each batch "
                              "index planned as one rank-2 slice)")
        batch.append(b[0])
        rest.append(list(b[1:]))
    return batch, rest


def _xor_span(values: list[int], bits: int) -> int:
    out = 0
    for k, v in enumerate(values):
        if bits >> k & 1:
            out ^= v
    return out


def batch_slices(layout: LinearLayout, warp: int) -> BatchSlices:
    """The rank-2 slice of a rank-3 layout, the batch indices sub-group ``warp`` holds, and each
    register's (batch index, slice register).

    Law: for every register ``r`` and lane ``l``, ``layout(r, l, warp) == (b, slice(i, l, warp))``
    where ``(b, i) = registers[r]``; ``batches`` is the set of those ``b``.

    >>> L = LinearLayout({"register": [[1, 0, 0]], "lane": [[0, 0, 1]], "warp": [[2, 0, 0]]},
    ...                  {"dim0": 4, "dim1": 1, "dim2": 2})
    >>> batch_slices(L, 1).batches
    (2, 3)
    """
    if not is_batched(layout):
        raise LayoutError(f"expected a rank-3 layout (out dims dim0, dim1, dim2), got out dims "
                          f"{getattr(layout, 'out_dim_names', type(layout).__name__)}")
    lane_batch, _ = _split(layout, "lane")
    moving = [k for k, b in enumerate(lane_batch) if b]
    if moving:
        k = moving[0]
        raise LayoutError(f"lane bit {k} (basis {layout.bases['lane'][k]}) moves the batch index: "
                          "one 2D block load covers one batch index for all its lanes "
                          f"({_SOURCE}); such a rank-3 layout is not supported")
    reg_batch, reg_rest = _split(layout, "register")
    _split(layout, "warp")
    _split(layout, "block")
    n_warps = layout.in_dims.get("warp", 1)
    if not isinstance(warp, int) or isinstance(warp, bool) or not 0 <= warp < n_warps:
        raise LayoutError(f"warp {warp!r} is outside [0, {n_warps})")
    base = layout.apply({n: (warp if n == "warp" else 0) for n in layout.in_dim_names})["dim0"]
    keep = [k for k, b in enumerate(reg_batch) if not b]           # slice register bits
    registers = []
    for r in range(layout.in_dims.get("register", 1)):
        i = sum(1 << j for j, k in enumerate(keep) if r >> k & 1)
        registers.append((base ^ _xor_span(reg_batch, r), i))
    names = {"dim0": layout.out_dim_size("dim1"), "dim1": layout.out_dim_size("dim2")}
    bases = {n: [list(b[1:]) for b in bs] for n, bs in layout.bases.items()}
    bases["register"] = [reg_rest[k] for k in keep]
    sl = LinearLayout(bases, names, require_surjective=False)
    return BatchSlices(sl, tuple(sorted({b for b, _ in registers})), tuple(registers), warp,
                       layout.out_dim_size("dim0"))
