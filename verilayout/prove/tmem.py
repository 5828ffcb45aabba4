"""Proofs about tensor memory: a register layout is what ``tcgen05.ld`` messages deliver, and the
MMA's accumulator sits where the epilogue reads it.

The model is :mod:`verilayout.hw.nvidia.tmem`. Both questions are GF(2): a register layout
``reg`` (``register, lane, warp -> dim0, dim1``) and a TMEM layout ``tmem`` (``lane, col -> dim0,
dim1``) give the conversion ``C = reg ; tmem^-1`` (which TMEM cell each register must read).
:func:`load_verdict` proves that ``C`` is exactly a warpgroup's ``tcgen05.ld.<shape>.x<num>``
(its registers and lanes bit for bit, warp ``w`` at lane ``32 * (w % 4)``) repeated at aligned
offsets (the other register bits and warps move whole messages: columns by multiples of the
message's width, or the other 16-lane half for 16-lane shapes), or gives the first input bit where
the register layout asks for a cell the message does not deliver.

>>> from verilayout.core.linear_layout import LinearLayout
>>> reg = LinearLayout({"register": [[0, 1], [0, 2]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]],
...                     "warp": [[32, 0], [64, 0]]}, ["dim0", "dim1"])
>>> load_verdict(reg, accumulator_layout(128, 8), "32x32b").status
'proved'
"""
from __future__ import annotations

from verilayout.core import gf2
from verilayout.core.linear_layout import LinearLayout
from verilayout.core.smt import Verdict
from verilayout.errors import LayoutError
from verilayout.hw.nvidia.tmem import Message, accumulator_layout, message

__all__ = ["load_verdict", "accumulator_verdict", "epilogue_verdict", "conversion", "operand_a_verdict",
           "A_OPERAND_RULE", "subslice_verdict", "SUBSLICE_RULE", "copy_verdict",
           "COPY_RULE"]


def _check(reg: LinearLayout, tmem: LinearLayout) -> None:
    if not isinstance(reg, LinearLayout) or not isinstance(tmem, LinearLayout):
        raise LayoutError("tmem proofs take LinearLayouts (register layout, TMEM layout)")
    for d in ("register", "lane", "warp"):
        if d not in reg.in_dims:
            raise LayoutError(f"register layout has no '{d}' input (has {reg.in_dim_names})")
    if reg.in_dims["lane"] != 32 or reg.in_dims["warp"] not in (4, 8):
        raise LayoutError(f"tcgen05.ld is issued by 4 or 8 warps of 32 lanes; the layout has "
                          f"{reg.in_dims['warp']} warps of {reg.in_dims['lane']} lanes")
    if set(tmem.in_dim_names) != {"lane", "col"}:
        raise LayoutError(f"TMEM layout: expected inputs 'lane' and 'col', got {tmem.in_dim_names}")


def conversion(reg: LinearLayout, tmem: LinearLayout) -> LinearLayout:
    """``register, lane, warp -> lane, col``: the TMEM cell each register's element lives in.

    >>> from verilayout.core.linear_layout import LinearLayout
    >>> reg = LinearLayout({"register": [[0, 1]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]],
    ...                     "warp": [[32, 0], [64, 0]]}, ["dim0", "dim1"])
    >>> conversion(reg, accumulator_layout(128, 8)).apply({"register": 1, "lane": 3, "warp": 1})
    {'lane': 35, 'col': 1}
    """
    _check(reg, tmem)
    if reg.out_dim_names != tmem.out_dim_names:
        reg = reg.transpose_outs(tmem.out_dim_names)
    return reg.invert_and_compose(tmem)


def _expected(msg: LinearLayout) -> list[tuple[str, int, tuple[int, int]]]:
    out = []
    for d in ("register", "lane"):
        for j, (row, col) in enumerate(msg.bases[d]):
            out.append((d, j, (row, col)))
    return out


def _aligned(m: Message, lane: int, col: int) -> bool:
    """A repeat offset that moves a whole message (rule: aligned, non-overlapping)."""
    if lane not in ((0, 16) if m.rows == 16 else (0,)):
        return False
    if lane and col:
        return False
    if m.shape == "16x32bx2":
        return col % m.num == 0 and not (col & m.split)
    return col % m.columns == 0


def _same_element(tmem: LinearLayout | None):
    """Whether two TMEM cells hold the same element of ``tmem`` (a layout that replicates, e.g. the
    MMA scale factors copied into every 32-lane quarter, holds one element in several cells)."""
    if tmem is None:
        return lambda a, b: a == b
    ins = [d for d in tmem.in_dim_names if d != "block"]

    def same(a: tuple, b: tuple) -> bool:
        if a == b:
            return True
        try:
            return tmem.apply({**{d: 0 for d in tmem.in_dim_names}, **dict(zip(ins, a))}) == \
                tmem.apply({**{d: 0 for d in tmem.in_dim_names}, **dict(zip(ins, b))})
        except LayoutError:
            return False
    return same


def _try(conv: LinearLayout, m: Message, tmem: LinearLayout | None = None) -> tuple | None:
    """None when ``conv`` is messages of ``m`` (cells compared by the element ``tmem`` keeps there);
    else (input dim, bit, expected, actual)."""
    msg = message(m.shape, m.num, m.split)
    bases = conv.bases
    same = _same_element(tmem)
    nreg = len(msg.bases["register"])
    if len(bases["register"]) < nreg:
        return ("register", len(bases["register"]), "a register bit", "none")
    for d, j, (row, col) in _expected(msg):
        got = tuple(bases[d][j])
        if not same(got, (row, col)):
            return (d, j, (row, col), got)
    for j, want in ((0, (32, 0)), (1, (64, 0))):
        got = tuple(bases["warp"][j])
        if not same(got, want):
            return ("warp", j, want, got)
    extra = [("register", j) for j in range(nreg, len(bases["register"]))]
    extra += [("warp", j) for j in range(2, len(bases["warp"]))]
    extra += [("block", j) for j in range(len(bases.get("block", [])))]
    for d, j in extra:
        lane, col = bases[d][j]
        if not _aligned(m, lane, col):
            return (d, j, "a whole-message offset", (lane, col))
    return None


def load_verdict(reg: LinearLayout, tmem: LinearLayout, shape: str, num: int | None = None,
                 split: int | None = None) -> Verdict:
    """Proved when every register of ``reg`` receives its element from ``tcgen05.ld.<shape>.x<num>``
    messages reading ``tmem`` (``num=None``: the widest ``.num`` that fits); else the first input
    bit whose cell differs from what the message delivers.

    Law: proved iff ``conversion(reg, tmem)`` restricted to the message's registers, lanes and
    warps 0-3 equals :func:`~verilayout.hw.nvidia.tmem.warpgroup_message`, and every other input
    bit moves by a whole message.
    """
    conv = conversion(reg, tmem)
    nums = [num] if num is not None else [1 << k for k in range(7, -1, -1)]
    first_fail = None
    for n in nums:
        try:
            m = Message(shape, n, split)
        except LayoutError:
            if num is not None:
                raise
            continue
        bad = _try(conv, m, tmem)
        if bad is None:
            return Verdict.holds(f"the register layout is {m.name} messages (registers, lanes, warps "
                                 "bit for bit; other bits move whole messages)", method="gf2",
                                 num=n, shape=shape)
        if first_fail is None or n == 1:
            first_fail = (m, bad)
    if first_fail is None:
        raise LayoutError(f"tcgen05.{shape}: no .num fits this register layout")
    m, (d, j, want, got) = first_fail
    cex = {"input": {d: 1 << j}, "message_reads": list(want) if isinstance(want, tuple) else want,
           "layout_needs": list(got) if isinstance(got, tuple) else got,
           "element": dict(zip(reg.out_dim_names, reg.bases[d][j])) if j < len(reg.bases.get(d, [])) else None}
    return Verdict.fails(cex, f"{d} {1 << j}: {m.name} delivers TMEM (lane, col) {want}, the register "
                         f"layout's element lives at {got}", method="gf2")


def accumulator_verdict(tmem: LinearLayout, m: int, n: int, cta_group: int = 1, ws: bool = False) -> Verdict:
    """Proved when ``tmem`` (e.g. a ``#ttng.tensor_memory_encoding`` as a LinearLayout) places every
    element where ``tcgen05.mma`` M=``m`` N=``n`` writes D; else a cell where they differ.

    >>> accumulator_verdict(accumulator_layout(128, 64), 128, 64).status
    'proved'
    """
    acc = accumulator_layout(m, n, cta_group, ws)
    if set(tmem.in_dim_names) != {"lane", "col"}:
        raise LayoutError(f"TMEM layout: expected inputs 'lane' and 'col', got {tmem.in_dim_names}")
    t = tmem.transpose_outs(acc.out_dim_names) if tmem.out_dim_names != acc.out_dim_names else tmem
    for d in ("lane", "col"):
        mine, theirs = acc.bases.get(d, []), t.bases.get(d, [])
        for j in range(max(len(mine), len(theirs))):
            a = tuple(mine[j]) if j < len(mine) else None
            b = tuple(theirs[j]) if j < len(theirs) else None
            if a != b:
                return Verdict.fails({"cell": {d: 1 << j}, "mma_writes": a, "layout_says": b},
                                     f"TMEM {d} {1 << j}: the MMA writes element {a}, the layout expects {b}",
                                     method="gf2")
    return Verdict.holds(f"the TMEM layout is the M={m} cta_group::{cta_group} datapath layout", method="gf2")


def epilogue_verdict(reg: LinearLayout, m: int, n: int, shape: str = "32x32b", cta_group: int = 1,
                     num: int | None = None, split: int | None = None) -> Verdict:
    """The epilogue's register layout ``reg`` reads D where ``tcgen05.mma`` wrote it:
    :func:`load_verdict` against the datapath layout of ``M = m``.

    >>> from verilayout.core.linear_layout import LinearLayout
    >>> rows = LinearLayout({"register": [[0, 1], [0, 2], [0, 4]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]],
    ...                      "warp": [[32, 0], [0, 0]]}, ["dim0", "dim1"])   # lane 16 wants row 16
    >>> v = epilogue_verdict(rows, 64, 8); v.status, v.counterexample["input"]   # M=64 puts row 16 at lane 32
    ('counterexample', {'lane': 16})
    """
    return load_verdict(reg, accumulator_layout(m, n, cta_group), shape, num, split)


A_OPERAND_RULE = ("tcgen05.mma with A in tensor memory reads A's rows from the lanes of the data path layout "
                  "its M and cta_group select, as it writes D (PTX ISA 'Data path layout organization'; TVM's "
                  "tmem_mma_operand_layout resolves A-in-TMEM from the same layouts), K along the columns "
                  "packed 32/bits elements a 32-bit column (columns counted in elements, as Triton's "
                  "tensor_memory_encoding does)")


def operand_a_verdict(tmem: LinearLayout, m: int, k: int, cta_group: int = 1) -> Verdict:
    """Proved when ``tmem`` (the A operand's ``#ttng.tensor_memory_encoding`` as a LinearLayout,
    ``lane, col -> dim0 (M), dim1 (K)``) places every element of A where ``tcgen05.mma`` with M = ``m``
    and ``cta_group`` reads it from tensor memory (:data:`A_OPERAND_RULE`); else the first cell where
    they differ. A taller tile (several blocks of ``m / cta_group`` rows: Triton issues one MMA per
    block, its A address that of the block's first element) is proved block by block, by
    enumeration: each block is the data path layout moved by that address.

    Law: one block: the verdict of :func:`accumulator_verdict` for an ``m x k`` tile (the same data
    path); more: every element ``(b * rows + r, c)`` sits at ``datapath(r, c) + cell(b * rows, 0)``.

    >>> from verilayout.hw.nvidia.tmem import accumulator_layout
    >>> operand_a_verdict(accumulator_layout(128, 64), 128, 64).status
    'proved'
    """
    rows = m // cta_group
    names = tmem.out_dim_names
    if tmem.out_dims[names[0]] > rows:
        return _blocks_verdict(tmem, m, k, cta_group)
    v = accumulator_verdict(tmem, m, k, cta_group)
    if v.proved:
        return Verdict.holds(f"A sits where tcgen05.mma M={m} cta_group::{cta_group} reads it from tensor "
                             "memory (its data path layout)", method="gf2")
    cex = dict(v.counterexample or {})
    cex["mma_reads"] = cex.pop("mma_writes", None)
    return Verdict.fails(cex, v.reason.replace("the MMA writes", "the MMA reads A's"), method="gf2")


def _blocks_verdict(tmem: LinearLayout, m: int, k: int, cta_group: int) -> Verdict:
    """:func:`operand_a_verdict` for a tile of several ``m / cta_group``-row blocks, by enumeration."""
    rows, names = m // cta_group, tmem.out_dim_names
    cells = _cells(tmem)
    path = _cells(accumulator_layout(m, k, cta_group))
    blocks = tmem.out_dims[names[0]] // rows
    for blk in range(blocks):
        if (blk * rows, 0) not in cells:
            return Verdict.fails({"block": blk}, f"row {blk * rows} is in no TMEM cell", method="enumeration")
        bl, bc = cells[(blk * rows, 0)]
        for (r, c), (lane, col) in path.items():
            want = (lane + bl, col + bc)
            if cells.get((blk * rows + r, c)) != want:
                return Verdict.fails({"element": [blk * rows + r, c], "mma_reads": list(want),
                                      "layout_says": list(cells.get((blk * rows + r, c), ()))},
                                     f"element ({blk * rows + r}, {c}): the MMA of row block {blk} reads A "
                                     f"at TMEM (lane, col) {want}, the layout keeps it at "
                                     f"{cells.get((blk * rows + r, c))}", method="enumeration")
    return Verdict.holds(f"A's {blocks} row blocks each sit where a tcgen05.mma M={m} cta_group::{cta_group} "
                         "reads them (its data path layout at the block's address)", method="enumeration",
                         blocks=blocks)


SUBSLICE_RULE = ("Triton 3.9 lowers ttng.tmem_subslice {offset = N} to the source's TMEM base plus the (lane, "
                 "column) address of the source element (0, N) (getTMemViewElementOffset, in its source); the "
                 "view is right when every view element (r, c) then lands on the source's cell of (r, N + c)")


def _cells(tmem: LinearLayout) -> dict[tuple[int, ...], tuple[int, int]]:
    """Every element of ``tmem`` (``lane, col -> dims``) and its first (lowest) TMEM cell ``(lane, col)``."""
    lanes, cols = tmem.bases["lane"], tmem.bases["col"]
    order = [tmem._pack(b) for b in cols] + [tmem._pack(b) for b in lanes]   # index: lane high, col low
    img = [0] * (1 << len(order))
    for i in range(1, len(img)):
        img[i] = img[i & (i - 1)] ^ order[(i & -i).bit_length() - 1]
    out: dict = {}
    for i, v in enumerate(img):
        out.setdefault(tuple(tmem.unpack(v)), (i >> len(cols), i & ((1 << len(cols)) - 1)))
    return out


def subslice_verdict(tmem: LinearLayout, offset: int, width: int) -> Verdict:
    """Proved when the ``width``-column view at column ``offset`` of a TMEM tile laid out as ``tmem``
    (``lane, col -> dim0, dim1``, Triton's tensor_memory_encoding) reads the source's cells: every view
    element ``(r, c)``, at its cell in ``tmem`` plus the address of element ``(0, offset)``, is on the
    cell of ``(r, offset + c)`` (:data:`SUBSLICE_RULE`, checked on every element); else the first
    element that is not.

    >>> from verilayout.hw.nvidia.tmem import accumulator_layout
    >>> subslice_verdict(accumulator_layout(128, 128), 64, 64).details["address"]
    {'lane': 0, 'col': 64}
    >>> subslice_verdict(accumulator_layout(128, 128, cta_group=2), 32, 64).status   # halves folded onto lanes
    'counterexample'
    """
    names = tmem.out_dim_names
    if len(names) != 2 or set(tmem.in_dim_names) - {"block"} != {"lane", "col"}:
        raise LayoutError(f"TMEM subslice: expected lane, col -> 2 dims, got {tmem.in_dim_names} -> {names}")
    cells = _cells(tmem.sublayout(["lane", "col"], names) if "block" in tmem.in_dim_names else tmem)
    rows, n = tmem.out_dims[names[0]], tmem.out_dims[names[1]]
    if offset < 0 or width <= 0 or offset + width > n or (0, offset) not in cells:
        return Verdict.fails({"offset": offset, "width": width}, f"columns {offset}..{offset + width - 1} are "
                             f"not inside the {rows} x {n} tile", method="enumeration")
    bl, bc = cells[(0, offset)]
    for r in range(rows):
        for c in range(width):
            lane, col = cells[(r, c)]
            if (lane + bl, col + bc) != cells[(r, offset + c)]:
                return Verdict.fails({"element": [r, c], "reads": [lane + bl, col + bc],
                                      "holds": list(cells[(r, offset + c)])},
                                     f"view element ({r}, {c}) is read at TMEM (lane, col) ({lane + bl}, "
                                     f"{col + bc}), but ({r}, {offset + c}) lives at {cells[(r, offset + c)]}",
                                     method="enumeration")
    return Verdict.holds(f"columns {offset}..{offset + width - 1} are the source's cells at address offset "
                         f"(lane {bl}, col {bc})", method="enumeration", address={"lane": bl, "col": bc})


COPY_RULE = ("tcgen05.cp.32x128b.warpx4 (what Triton 3.9 emits for ttng.tmem_copy of scale factors) copies a "
             "matrix of 32 rows of 16 bytes from shared memory to TMEM lanes 0-31 (and, .warpx4, to the "
             "same lanes of the other three 32-lane quarters), 4 columns; successive 512-byte chunks of "
             "the buffer go to successive 4-column groups (PTX ISA, tcgen05.cp shapes; that Triton's "
             "descriptor lays the rows 16 bytes apart without swizzle is an inference, the descriptor "
             "is not read here)")


def copy_verdict(smem: LinearLayout, tmem: LinearLayout, elem_bits: int) -> Verdict:
    """Proved when ``tcgen05.cp.32x128b.warpx4`` copies of the shared buffer ``smem`` (``offset ->
    dims``, in elements) put every element where ``tmem`` (``lane, col -> dims``, columns in
    elements) keeps it (:data:`COPY_RULE`); else the first element that lands elsewhere.

    Law: for every byte ``o`` of the buffer, chunk ``q = o // 512``, row ``r = o % 512 // 16``, byte
    ``b = o % 16``: the element at ``o`` is the element ``tmem`` keeps at lane ``r``, column
    ``(16 q + b) * 8 / elem_bits``.

    >>> from verilayout.core.linear_layout import LinearLayout
    >>> sm = LinearLayout({"offset": [[0, 1], [0, 2], [32, 0], [64, 0], [1, 0], [2, 0], [4, 0], [8, 0], [16, 0]]},
    ...                   ["dim0", "dim1"])
    >>> tm = LinearLayout({"lane": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 0], [0, 0]],
    ...                    "col": [[0, 1], [0, 2], [32, 0], [64, 0]]}, {"dim0": 128, "dim1": 4},
    ...                   require_surjective=False)
    >>> copy_verdict(sm, tm, 8).status
    'proved'
    """
    if elem_bits not in (8, 16, 32) or "offset" not in smem.in_dims:
        raise LayoutError(f"tcgen05.cp: modelled for 8/16/32-bit elements of a shared layout, got {elem_bits}")
    per_byte = 8 / elem_bits
    zero = {d: 0 for d in smem.in_dim_names}
    tz = {d: 0 for d in tmem.in_dim_names}
    for o in range(smem.in_dims["offset"]):
        byte = o * elem_bits // 8
        q, r, b = byte // 512, byte % 512 // 16, byte % 16
        col = int((16 * q + b) * per_byte)
        if col >= tmem.in_dims["col"]:
            return Verdict.fails({"offset": o, "col": col}, f"shared element {o} would land in column {col}, "
                                 "past the tensor memory layout", method="enumeration")
        have = smem.apply({**zero, "offset": o})
        got = tmem.apply({**tz, "lane": r, "col": col})
        if have != got:
            return Verdict.fails({"offset": o, "lane": r, "col": col, "copied": have, "tmem_keeps": got},
                                 f"shared element {o} ({have}) is copied to TMEM lane {r}, column {col}, "
                                 f"where the layout keeps {got}", method="enumeration")
    return Verdict.holds(f"every element is copied where the tensor memory layout keeps it "
                         f"({max(1, smem.in_dims['offset'] * elem_bits // 8 // 512)} 32x128b chunk(s))",
                         method="enumeration")
