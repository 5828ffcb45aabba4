"""Blackwell tensor memory (TMEM): the address space, ``tcgen05.ld/st`` messages, accumulator layouts.

The rules, with their sources
-----------------------------
1. **Address space.** Per CTA, 128 lanes x 512 columns of 32-bit cells, allocated in units of 32
   columns (``tcgen05.alloc`` takes 32, 64, 128, 256 or 512 columns). Warp ``w`` of a warpgroup
   reaches only lanes ``32 * (w % 4) .. + 31`` (PTX ISA, "Tensor Memory" and "tcgen05.ld": access
   restrictions per warp; :func:`warp_lanes`).
2. **Messages.** ``tcgen05.ld/st.<shape>.<num>`` moves one fixed image between a warp's registers
   and TMEM. With ``l`` the thread's lane id and ``r`` the register index (PTX ISA, "Matrix
   fragments for tcgen05.ld/st"; TVM's ``tcgen05_ld_st`` page restates the figures):

   ========== ============ ================= ==============================================
   shape      image (xN)   registers/thread  register ``r`` of lane ``l`` holds (row, col)
   ========== ============ ================= ==============================================
   32x32b     32 x N       N                 ``(l, r)``
   16x64b     16 x 2N      N                 ``(l//4 + 8*(l%2), (l//2)%2 + 2*r)``
   16x128b    16 x 4N      2N                ``(l//4 + 8*(r%2), l%4 + 4*(r//2))``
   16x256b    16 x 8N      4N                ``(l//4 + 8*((r//2)%2), r%2 + 2*(l%4) + 8*(r//4))``
   16x32bx2   16 x (2 s)   N                 ``(l%16, r + s*(l//16))``, ``s`` = immHalfSplitoff
   ========== ============ ================= ==============================================

   ``row`` is a TMEM lane relative to the address's lane, ``col`` a 32-bit column relative to the
   address's column. ``.num`` is ``.x1 .. .x128`` with at most 128 registers per thread. The
   16x32bx2 row is *inferred* from Triton's M = 64 load layout (threads 16-31 read the same 16
   lanes ``s`` columns further); the others are checked against Triton 3.9's
   ``compute_tmem_reg_layout`` in ``tests/test_tmem_triton.py``.
3. **Accumulator datapath** (PTX ISA, "Data path layout organization", layouts A-G): where
   ``tcgen05.mma`` puts row ``i``, column ``j`` of D (32-bit elements, one per column):

   * M = 128, ``cta_group::1`` (layout D) and M = 256, ``cta_group::2`` (layout A, each CTA its
     128 rows): lane ``i``, column ``j``;
   * M = 64, ``cta_group::1`` (layout F): lane ``32*(i//16) + i%16``, column ``j`` (lanes 16-31
     of every warp's slice stay unused);
   * M = 128, ``cta_group::2`` (layout B; also M = 64 ``.ws``, layout E): each CTA holds 64 rows,
     the two column halves folded: lane ``i + 64*(j // (N/2))``, column ``j % (N/2)``.

   Layouts C and G (sparse and M = 32 ``.ws``) are not modelled.

>>> message("16x64b", 2).apply({"register": 1, "lane": 3})
{'row': 8, 'col': 3}
>>> warp_lanes(5)
range(32, 64)
"""
from __future__ import annotations

from dataclasses import dataclass

from verilayout.bits import is_pow2, log2
from verilayout.core.linear_layout import LinearLayout
from verilayout.errors import LayoutError

LANES = 128
COLUMNS = 512
CELL_BITS = 32
ALLOC_UNIT = 32
SHAPES = ("32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2")
_REGS_PER_NUM = {"32x32b": 1, "16x64b": 1, "16x128b": 2, "16x256b": 4, "16x32bx2": 1}


def warp_lanes(warp: int) -> range:
    """The TMEM lanes warp ``warp`` may access: ``32 * (warp % 4) .. + 31`` (rule 1)."""
    if not isinstance(warp, int) or warp < 0:
        raise LayoutError(f"warp {warp!r}: expected a non-negative warp index")
    base = 32 * (warp % 4)
    return range(base, base + 32)


def alloc_columns(columns: int) -> int:
    """Columns ``tcgen05.alloc`` grants for ``columns`` needed: the next power of two >= 32, <= 512.

    >>> alloc_columns(40), alloc_columns(1)
    (64, 32)
    """
    if not isinstance(columns, int) or columns < 1 or columns > COLUMNS:
        raise LayoutError(f"TMEM allocation of {columns!r} columns: expected 1..{COLUMNS}")
    n = ALLOC_UNIT
    while n < columns:
        n *= 2
    return n


@dataclass(frozen=True)
class Message:
    """A ``tcgen05.ld/st.<shape>.x<num>`` (``split``: 16x32bx2's immHalfSplitoff, in columns)."""

    shape: str
    num: int = 1
    split: int | None = None

    def __post_init__(self):
        if self.shape not in SHAPES:
            raise LayoutError(f"tcgen05 shape {self.shape!r}: expected one of {', '.join(SHAPES)}")
        if not isinstance(self.num, int) or not is_pow2(self.num) or not 1 <= self.num <= 128:
            raise LayoutError(f"tcgen05.{self.shape}.x{self.num}: .num is .x1, .x2, .x4, ... .x128")
        if self.registers > 128:
            raise LayoutError(f"tcgen05.{self.shape}.x{self.num} needs {self.registers} registers per "
                              "thread; at most 128")
        if self.shape == "16x32bx2":
            if self.split is None or not is_pow2(self.split) or self.split < self.num:
                raise LayoutError(f"tcgen05.16x32bx2.x{self.num}: immHalfSplitoff must be a power of two "
                                  f">= {self.num} columns to be GF(2)-linear (got {self.split!r})")
        elif self.split is not None:
            raise LayoutError(f"tcgen05.{self.shape}: only 16x32bx2 takes immHalfSplitoff")

    @property
    def registers(self) -> int:
        """32-bit registers per thread."""
        return _REGS_PER_NUM[self.shape] * self.num

    @property
    def rows(self) -> int:
        """TMEM lanes one warp's message covers."""
        return 32 if self.shape == "32x32b" else 16

    @property
    def columns(self) -> int:
        """32-bit columns the message covers."""
        if self.shape == "16x32bx2":
            return 2 * self.split
        return {"32x32b": 1, "16x64b": 2, "16x128b": 4, "16x256b": 8}[self.shape] * self.num

    @property
    def name(self) -> str:
        return f"tcgen05.ld.{self.shape}.x{self.num}"


def _bits(n: int) -> int:
    return log2(n)


def message(shape: str, num: int = 1, split: int | None = None) -> LinearLayout:
    """Rule 2 as a LinearLayout: ``register, lane -> row, col`` (TMEM lane and 32-bit column
    relative to the message's address).

    Law: a bijection onto ``rows x columns`` (16x32bx2: onto the two ``16 x num`` halves), and
    ``apply`` gives the table of rule 2 for every (register, lane).

    >>> message("32x32b", 4).apply({"register": 3, "lane": 7})
    {'row': 7, 'col': 3}
    >>> message("16x256b").apply({"register": 2, "lane": 1})
    {'row': 8, 'col': 2}
    """
    m = Message(shape, num, split)
    nreg = _bits(m.registers)
    if shape == "32x32b":
        reg = [[0, 1 << k] for k in range(nreg)]
        lane = [[1 << k, 0] for k in range(5)]
    elif shape == "16x64b":
        reg = [[0, 2 << k] for k in range(nreg)]
        lane = [[8, 0], [0, 1], [1, 0], [2, 0], [4, 0]]
    elif shape == "16x128b":
        reg = [[8, 0]] + [[0, 4 << k] for k in range(nreg - 1)]
        lane = [[0, 1], [0, 2], [1, 0], [2, 0], [4, 0]]
    elif shape == "16x256b":
        reg = [[0, 1], [8, 0]] + [[0, 8 << k] for k in range(nreg - 2)]
        lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]
    else:  # 16x32bx2
        reg = [[0, 1 << k] for k in range(nreg)]
        lane = [[1, 0], [2, 0], [4, 0], [8, 0], [0, m.split]]
    return LinearLayout({"register": reg, "lane": lane}, {"row": m.rows, "col": m.columns},
                        require_surjective=False)


def warpgroup_message(shape: str, num: int = 1, split: int | None = None, warps: int = 4) -> LinearLayout:
    """The message issued by ``warps`` warps (4 or 8): ``register, lane, warp -> lane, col`` in the
    CTA's TMEM (rule 1: warp ``w`` at lanes ``32 * (w % 4)``; warps 4-7 reach the same lanes, so
    their warp bit maps to nothing here and the caller places them at other columns).

    >>> warpgroup_message("32x32b").apply({"register": 0, "lane": 5, "warp": 3})
    {'lane': 101, 'col': 0}
    """
    if warps not in (4, 8):
        raise LayoutError(f"{warps} warps: tcgen05.ld/st is issued by a warpgroup (4 warps) or two")
    m = message(shape, num, split)
    out = {"lane": LANES, "col": dict(m.out_dims)["col"]}
    reg = [list(b) for b in m.bases["register"]]
    lane = [list(b) for b in m.bases["lane"]]
    warp = [[32, 0], [64, 0]] + ([[0, 0]] if warps == 8 else [])
    return LinearLayout({"register": reg, "lane": lane, "warp": warp}, out, require_surjective=False)


# ----- the accumulator in TMEM ------------------------------------------------------------------

_LAYOUT_LETTER = {(128, 1, False): "D", (256, 2, False): "A", (64, 1, False): "F", (128, 2, False): "B",
                  (64, 1, True): "E"}


def datapath_letter(m: int, cta_group: int = 1, ws: bool = False) -> str:
    """PTX's layout letter for an accumulator of ``M = m`` (rule 3).

    >>> datapath_letter(256, 2), datapath_letter(64)
    ('A', 'F')
    """
    key = (m, cta_group, bool(ws))
    if key not in _LAYOUT_LETTER:
        raise LayoutError(f"tcgen05.mma M={m} cta_group::{cta_group}{' .ws' if ws else ''}: datapath "
                          "layouts modelled: M=128/64 cta_group::1, M=256/128 cta_group::2, M=64 .ws")
    return _LAYOUT_LETTER[key]


def accumulator_layout(m: int, n: int, cta_group: int = 1, ws: bool = False) -> LinearLayout:
    """Where ``tcgen05.mma`` keeps one CTA's part of D (32-bit elements): ``lane, col -> dim0, dim1``
    (rule 3). Unused lanes map to nothing (all-zero bases).

    Law: injective on the lanes it uses, covering the CTA's ``(M / cta_group) x N`` tile.

    >>> accumulator_layout(64, 32).apply({"lane": 35, "col": 4})
    {'dim0': 19, 'dim1': 4}
    >>> accumulator_layout(128, 32, cta_group=2).apply({"lane": 70, "col": 3})
    {'dim0': 6, 'dim1': 19}
    """
    letter = datapath_letter(m, cta_group, ws)
    if not isinstance(n, int) or not is_pow2(n) or not 8 <= n <= 256:
        raise LayoutError(f"tcgen05.mma N={n!r}: expected a power of two in 8..256 for these layouts")
    rows = m // cta_group
    cols = [[0, 1 << k] for k in range(_bits(n))]
    if letter in ("A", "D"):
        lane = [[1 << k, 0] for k in range(7)]
        return LinearLayout({"lane": lane, "col": cols}, {"dim0": rows, "dim1": n})
    if letter == "F":
        lane = [[1, 0], [2, 0], [4, 0], [8, 0], [0, 0], [16, 0], [32, 0]]
        return LinearLayout({"lane": lane, "col": cols}, {"dim0": rows, "dim1": n})
    # B / E: 64 rows, column halves folded onto lanes 64..127
    lane = [[1 << k, 0] for k in range(6)] + [[0, n // 2]]
    return LinearLayout({"lane": lane, "col": cols[:-1]}, {"dim0": rows, "dim1": n})
