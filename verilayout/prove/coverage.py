"""Do 2D block loads feed a DPAS operand? Coverage proofs and lower bounds on the load count.

Vocabulary. The *memory view* of an operand is the matrix as stored: the operand
itself, or its transpose when it is stored transposed (``transpose=True``, the
AxBT case of intel-xpu-backend-for-triton ``docs/BLOCK_LOADS_LAYOUT.md``). A sub-group's DPAS instructions read, in lane ``l``, register
``r`` of the operand layout, the element ``layout(register=r, lane=l, warp=w)``:
the *needed* ``(lane, element)`` pairs. A load delivers element ``e`` to lane
``l`` (:func:`verilayout.hw.intel.block_io.lane_elements`); the register shuffle
from loaded data to DPAS operands moves values inside a lane only, so a needed
pair is served only by a load that puts that element into that lane.

* :func:`check_plan` proves, by enumerating every register of every lane, that
  loads respect every limit, deliver every needed pair, and that the shuffle
  hands each DPAS register its element; otherwise it returns the counterexample.
* :func:`lower_bound` is a counting argument: no valid load serves more than
  ``X`` needed pairs (``X`` from the largest load window and a per-lane match
  count, both maximised over every valid load shape and position), so every
  plan has at least ``ceil(pairs / X)`` loads.
* :func:`search_fewer` settles the rest exhaustively: every valid load (shape x
  position) is enumerated and z3 decides whether ``k`` of them cover the pairs.

>>> from verilayout.hw.intel.dpas import Dpas
>>> L = Dpas(8, 8, 16, 2, 16, (1, 1), (1, 1)).layout((8, 16), 0)
>>> need = Needed.from_layout(L)
>>> need.count, lower_bound(need, 2).value
(128, 1)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterator, Sequence

import numpy as np
import z3

from verilayout.dtypes import IntelArch
from verilayout.errors import LayoutError
from verilayout.hw.intel.block_io import ARCHS, MAX_HEIGHT, PLAIN_ARRAY, PLAIN_WIDTH, SUBGROUP_SIZE, VNNI_WIDTH, BlockLoad, Surface, lane_elements, violations
from verilayout.core.linear_layout import LinearLayout
from verilayout.core.smt import Verdict, record_query, solve

#: A surface large enough that no load shape is limited by it.
_BIG = Surface(width=1 << 16, height=1 << 16, pitch=1 << 16)


# ----------------------------------------------------------------------------
# what the DPAS instructions read
# ----------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Needed:
    """The ``(register, lane) -> element`` table of one sub-group's DPAS operand.

    ``coords[r, l]`` is the memory-view ``(row, col)`` register ``r`` of lane ``l``
    holds; ``shape`` the memory-view shape of the whole tensor; ``transpose``
    whether memory holds the operand transposed; ``warp`` which sub-group. ``span``: when
    built from a layout, its GF(2) structure (:class:`_Span`: which register of a lane holds an
    element, solved without enumerating); ``None`` for a table given as it is.
    """

    coords: np.ndarray
    shape: tuple
    transpose: bool = False
    warp: int = 0
    origin: tuple = (0, 0)
    span: "_Span | None" = field(default=None, repr=False)

    @classmethod
    def from_layout(cls, layout: LinearLayout, warp: int = 0,
                    transpose: bool = False) -> "Needed":
        """Enumerate a rank-2 distributed layout's registers x lanes for one warp.

        >>> from verilayout.core.linear_layout import LinearLayout
        >>> L = LinearLayout({"register": [[1, 0]], "lane": [[0, 1]] * 1}, ["dim0", "dim1"])
        >>> Needed.from_layout(L).coords.tolist()
        [[[0, 0], [0, 1]], [[1, 0], [1, 1]]]
        """
        if not isinstance(layout, LinearLayout):
            raise LayoutError(f"expected a LinearLayout, got {type(layout).__name__}")
        ins = layout.in_dims
        extra = set(ins) - {"register", "lane", "warp", "block"}
        if extra or "register" not in ins or "lane" not in ins:
            raise LayoutError(f"a distributed register layout has in dims register, lane, warp, "
                              f"block; got {layout.in_dim_names}")
        if layout.out_dim_names != ["dim0", "dim1"]:
            raise LayoutError(f"2D block loads feed rank-2 tensors; the layout has out dims "
                              f"{layout.out_dim_names} (a rank-3 layout, a leading batch dim, is "
                              "planned one batch index at a time: verilayout.blockload.plan, "
                              "`verilayout blockload plan`)")
        n_warps = ins.get("warp", 1)
        if not isinstance(warp, int) or isinstance(warp, bool) or not 0 <= warp < n_warps:
            raise LayoutError(f"warp {warp!r} is outside [0, {n_warps})")
        view = slice(None, None, -1 if transpose else 1)       # memory view: (dim1, dim0) when transposed
        regs = _span_table(layout, "register")[:, view]
        lanes = _span_table(layout, "lane")[:, view]
        base = np.array(_coord(layout, {"warp": warp} if "warp" in ins else {}), dtype=np.int64)[view]
        coords = np.empty((regs.shape[0], lanes.shape[0], 2), dtype=np.int64)
        np.bitwise_xor(regs[:, None, :], lanes[None, :, :], out=coords)     # in place: one table
        coords ^= base
        shape = (layout.out_dim_size("dim0"), layout.out_dim_size("dim1"))[view]
        reg_bases = [tuple(b)[view] for b in layout.bases["register"]]
        return cls(coords, tuple(shape), bool(transpose), warp,
                   span=_Span.of(reg_bases, lanes ^ base, tuple(shape)))

    def placed(self, x0: int, y0: int) -> "Needed":
        """The same needs with the operand placed at ``(x0, y0)`` of the surface: memory-view
        element ``(r, c)`` becomes surface element ``(y0 + r, x0 + c)`` (coords and shape
        shifted; :meth:`operand` maps back). Law: ``placed(0, 0)`` changes nothing.

        >>> from verilayout.core.linear_layout import LinearLayout
        >>> L = LinearLayout({"register": [[1, 0]], "lane": [[0, 1]]}, ["dim0", "dim1"])
        >>> n = Needed.from_layout(L).placed(32, 1); n.coords[1, 1].tolist(), n.operand(2, 33)
        ([2, 33], (1, 1))
        """
        for v, k in ((x0, "x"), (y0, "y")):
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 0:
                raise LayoutError(f"origin {k} {v!r}: expected an integer >= 0")
        if (x0, y0) == (0, 0):
            return self
        oy, ox = self.origin
        shift = np.array([y0, x0], dtype=np.int64)
        return Needed(self.coords + shift, (self.shape[0] + y0, self.shape[1] + x0),
                      self.transpose, self.warp, (oy + int(y0), ox + int(x0)), self.span)

    @property
    def placed_at(self) -> bool:
        """Whether the operand sits away from the surface's origin."""
        return tuple(self.origin) != (0, 0)

    @property
    def registers(self) -> int:
        return self.coords.shape[0]

    @property
    def lanes(self) -> int:
        return self.coords.shape[1]

    def keys(self) -> np.ndarray:
        """One int per ``(register, lane)``: ``(lane * rows + row) * cols + col``."""
        lane = np.arange(self.lanes, dtype=np.int64)[None, :]
        return _key(lane, self.coords[..., 0], self.coords[..., 1], self.shape)

    def pair_keys(self) -> np.ndarray:
        """The distinct needed ``(lane, element)`` pairs as sorted keys."""
        return np.unique(self.keys(), return_index=True)[0]  # sorts: plain unique hashes (numpy 2.4), 20x slower

    @property
    def count(self) -> int:
        """How many distinct ``(lane, element)`` pairs the DPAS instructions read: from a layout,
        ``lanes * 2**rank`` (a lane's registers hold the span of the register bases, moved)."""
        if self.span is not None:
            return self.lanes << len(self.span.pivots)
        return int(self.pair_keys().size)

    def pieces(self) -> "Iterator[tuple[int, np.ndarray]]":
        """``(first flat index, (n, 2) coords)`` of the table in register-major slices of about
        ``_CHUNK`` pairs: per-element work on them holds one slice at a time."""
        flat = self.coords.reshape(-1, 2)
        step = _CHUNK
        for i in range(0, flat.shape[0], step):
            yield i, flat[i:i + step]

    def element_mask(self) -> np.ndarray:
        """Boolean ``rows x cols`` mask of the elements read (by any lane)."""
        m = np.zeros(self.shape, dtype=bool)
        for _, c in self.pieces():
            m[c[:, 0], c[:, 1]] = True
        return m

    def rows_read(self) -> np.ndarray:
        """The rows holding a needed element, sorted.

        >>> Needed(np.array([[[2, 1], [0, 0]], [[2, 0], [0, 1]]]), (4, 2)).rows_read().tolist()
        [0, 2]
        """
        m = np.zeros(self.shape[0], dtype=bool)
        for _, c in self.pieces():
            m[c[:, 0]] = True
        return np.flatnonzero(m)

    def columns_by_band(self, bands: Sequence[tuple[int, int]]) -> list[np.ndarray]:
        """For each band of rows ``(first, last)`` (disjoint), the sorted columns of the needed
        elements in it. Law: band ``b``'s list is the distinct ``col`` of ``coords`` with
        ``first <= row <= last``.

        >>> n = Needed(np.array([[[2, 1], [0, 0]], [[3, 0], [0, 1]]]), (4, 2))
        >>> [c.tolist() for c in n.columns_by_band([(0, 0), (1, 3)])]
        [[0, 1], [0, 1]]
        """
        band_of = np.full(self.shape[0], -1, dtype=np.int64)
        for b, (first, last) in enumerate(bands):
            band_of[first:last + 1] = b
        seen = np.zeros((len(bands), self.shape[1]), dtype=bool)
        for _, c in self.pieces():
            b = band_of[c[:, 0]]
            keep = b >= 0
            seen[b[keep], c[keep, 1]] = True
        return [np.flatnonzero(row) for row in seen]

    def operand(self, row: int, col: int) -> tuple[int, int]:
        """Memory-view (surface) ``(row, col)`` -> the operand's ``(dim0, dim1)`` (the origin
        subtracted)."""
        row, col = int(row) - self.origin[0], int(col) - self.origin[1]
        return (col, row) if self.transpose else (row, col)


def _coord(layout: LinearLayout, ins: dict) -> list[int]:
    full = {n: ins.get(n, 0) for n in layout.in_dim_names}
    out = layout.apply(full)
    return [out["dim0"], out["dim1"]]


def _span_table(layout: LinearLayout, dim: str) -> np.ndarray:
    table = np.zeros((1, 2), dtype=np.int64)
    for b in layout.bases[dim]:
        table = np.concatenate([table, table ^ np.array(b, dtype=np.int64)])
    return table


#: Pairs per slice when a per-pair table is streamed (bounded temporaries: a few MB).
_CHUNK = 1 << 16


@dataclass(frozen=True, eq=False)
class _Span:
    """The GF(2) structure of a layout's needs, in the memory view before placement: register
    ``r`` of lane ``l`` holds ``XOR_{i in r} regs[i] ^ lanes[l]`` (``regs[i]``: register basis
    ``i``; ``lanes[l]`` includes the warp's offset). Points are packed ``(row << cb) | col``, so
    XOR of points is XOR of packed ints. ``pivots``: the bases in echelon form, ``(pivot bit,
    packed vector, register bits)``, highest pivot first; ``deps``: ``(basis, register bits)``
    of each basis in the span of earlier ones (a register holding what another does).

    Law: ``solve(l, coords[r, l])`` is ``r`` with its dependent bits folded (:meth:`rep`), and
    ``-1`` for a point no register of lane ``l`` holds.

    >>> sp = _Span.of([(0, 1), (1, 0), (1, 1)], np.array([[0, 0]]), (2, 2))
    >>> sp.solve(np.array([0, 0]), np.array([1, 1]), np.array([1, 0])).tolist(), sp.rep(8).tolist()
    ([3, 2], [0, 1, 2, 3, 3, 2, 1, 0])
    """

    pivots: tuple
    deps: tuple
    lanes: np.ndarray
    cb: int
    shape: tuple

    @classmethod
    def of(cls, reg_bases: Sequence[tuple], lanes: np.ndarray, shape: tuple) -> "_Span":
        """From the register bases and each lane's ``(row, col)`` (memory view)."""
        cb = max([int(shape[1]) - 1] + [int(c) for _, c in reg_bases] +
                 [int(v) for v in lanes[:, 1]]).bit_length()
        pivots: list = []
        deps: list = []
        for i, (row, col) in enumerate(reg_bases):
            v, m = (int(row) << cb) | int(col), 1 << i
            for p, pv, pm in pivots:
                if v >> p & 1:
                    v, m = v ^ pv, m ^ pm
            if v == 0:
                deps.append((i, m ^ (1 << i)))
            else:
                pivots.append((v.bit_length() - 1, v, m))
                pivots.sort(key=lambda t: -t[0])
        packed = (lanes[:, 0].astype(np.int64) << cb) | lanes[:, 1]
        return cls(tuple(pivots), tuple(deps), packed, cb, tuple(int(x) for x in shape))

    def solve(self, lane: np.ndarray, row: np.ndarray, col: np.ndarray) -> np.ndarray:
        """The register (dependent bits folded) of ``lane`` that holds ``(row, col)``, or ``-1``."""
        ok = (row >= 0) & (row < self.shape[0]) & (col >= 0) & (col < self.shape[1]) & \
            (lane >= 0) & (lane < self.lanes.size)
        v = np.where(ok, (row << self.cb) | col, 0) ^ self.lanes[np.where(ok, lane, 0)]
        r = np.zeros(v.shape, dtype=np.int64)
        for p, pv, pm in self.pivots:
            sel = (v >> p) & 1
            v ^= sel * pv
            r ^= sel * pm
        return np.where(ok & (v == 0), r, -1)

    def rep(self, registers: int) -> np.ndarray:
        """Each register's representative: the register with only independent bases that
        holds the same points (itself when no basis is dependent)."""
        r = np.arange(registers, dtype=np.int64)
        out = r.copy()
        for j, m in self.deps:
            bit = (r >> j) & 1
            out ^= bit * ((1 << j) | m)
        return out


def _key(lane, row, col, shape) -> np.ndarray:
    rows, cols = shape
    return (np.asarray(lane, dtype=np.int64) * rows + row) * cols + col


def _in_bounds(rc: np.ndarray, shape) -> np.ndarray:
    return (rc[..., 0] >= 0) & (rc[..., 0] < shape[0]) & (rc[..., 1] >= 0) & (rc[..., 1] < shape[1])


# ----------------------------------------------------------------------------
# checking a plan
# ----------------------------------------------------------------------------


def delivered_arrays(loads: Sequence[BlockLoad], elem_bytes: int, shape):
    """Sorted distinct keys ``(lane * rows + row) * cols + col`` of what the loads put inside
    the tensor, with the (first) load and lane element index that holds each. Elements
    outside a load's surface read as zero [S], so they are not delivered.

    >>> k, i, e = delivered_arrays([BlockLoad(2, 16, 1, Surface(64, 8, 64))], 2, (8, 32))
    >>> k[:2].tolist(), i[:2].tolist(), e[:2].tolist()
    ([0, 257], [0, 0], [0, 0])
    """
    keys, load, elem = [], [], []
    for i, ld in enumerate(loads):
        el = lane_elements(ld, elem_bytes)
        lane = np.broadcast_to(np.arange(SUBGROUP_SIZE)[:, None], el.shape[:2])
        kidx = np.broadcast_to(np.arange(el.shape[1])[None, :], el.shape[:2])
        ok = _in_bounds(el, shape) & _in_surface(el, ld.surface, elem_bytes)
        keys.append(_key(lane[ok], el[..., 0][ok], el[..., 1][ok], shape))
        load.append(np.full(int(ok.sum()), i, dtype=np.int64))
        elem.append(kidx[ok])
    if not keys:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    keys_a = np.concatenate(keys)
    uniq, first = np.unique(keys_a, return_index=True)
    return uniq, np.concatenate(load)[first], np.concatenate(elem)[first]


def delivery_table(loads: Sequence[BlockLoad], needed: Needed, elem_bytes: int) -> np.ndarray:
    """``table[r, l] = (load, element)``: the first load (then the first element of it in that
    lane) that puts register ``r``'s element of lane ``l`` into lane ``l``, inside the tensor and
    the load's surface; ``(-1, -1)`` where no load does. An ``int32`` array ``(registers, lanes,
    2)``. Law: it equals ``lookup(needed.keys(), delivered_arrays(loads, elem_bytes,
    needed.shape))`` (load, element); for needs built from a layout it is computed load by load
    (:class:`_Span` solves which register a delivered element is), holding no per-pair keys.

    >>> from verilayout.hw.intel.dpas import Dpas
    >>> need = Needed.from_layout(Dpas(8, 8, 16, 2, 16, (1, 1), (1, 1)).layout((8, 16), 0))
    >>> delivery_table([BlockLoad(2, 16, 8, Surface(64, 8, 64))], need, 2)[3, :2].tolist()
    [[0, 3], [0, 3]]
    """
    if needed.span is None:
        found, load, elem = lookup(needed.keys(), delivered_arrays(loads, elem_bytes, needed.shape))
        return np.stack([load, elem], axis=-1).astype(np.int32)
    table = np.full((needed.registers, needed.lanes, 2), -1, dtype=np.int32)
    flat = table.reshape(-1, 2)
    for target, load, elem in _delivered_stream(loads, needed, elem_bytes):
        new = flat[target, 0] < 0
        flat[target[new], 0] = load[new]
        flat[target[new], 1] = elem[new]
    _copy_to_dependent(table, needed.span)
    return table


def delivered_mask(loads: Sequence[BlockLoad], needed: Needed, elem_bytes: int) -> np.ndarray:
    """Boolean ``(registers, lanes)``: whether some load puts that register's element into that
    lane (inside the tensor and its surface). Law: ``delivery_table(...)[..., 0] >= 0``.

    >>> from verilayout.hw.intel.dpas import Dpas
    >>> need = Needed.from_layout(Dpas(8, 8, 16, 2, 16, (1, 1), (1, 1)).layout((8, 16), 0))
    >>> bool(delivered_mask([BlockLoad(2, 16, 4, Surface(64, 8, 64))], need, 2)[3:5, 0].tolist() == [True, False])
    True
    """
    if needed.span is None:
        return lookup(needed.keys(), delivered_arrays(loads, elem_bytes, needed.shape))[0]
    found = np.zeros((needed.registers, needed.lanes), dtype=bool)
    flat = found.reshape(-1)
    for target, _, _ in _delivered_stream(loads, needed, elem_bytes):
        flat[target] = True
    _copy_to_dependent(found, needed.span)
    return found


def _copy_to_dependent(table: np.ndarray, span: _Span) -> None:
    """Registers holding what a representative holds get its row (in place)."""
    if not span.deps:
        return
    rep = span.rep(table.shape[0])
    moved = np.flatnonzero(rep != np.arange(rep.size))
    table[moved] = table[rep[moved]]


def _delivered_stream(loads: Sequence[BlockLoad], needed: Needed, t: int):
    """Per slice of loads (about ``_CHUNK`` delivered elements), the needed pairs they deliver:
    ``(target, load, element)`` with ``target = register * lanes + lane`` (the representative
    register), each target once: its first delivery in load order, then lane-element order."""
    parts: list = []
    size = 0
    for i, ld in enumerate(loads):
        el = lane_elements(ld, t)
        lane, k = np.nonzero(_in_bounds(el, needed.shape) & _in_surface(el, ld.surface, t))
        parts.append((lane, k, el[lane, k], i))
        size += lane.size
        if size >= _CHUNK:
            yield _first_deliveries(parts, needed)
            parts, size = [], 0
    if parts:
        yield _first_deliveries(parts, needed)


def _first_deliveries(parts: list, needed: Needed) -> tuple:
    lane = np.concatenate([p[0] for p in parts])
    elem = np.concatenate([p[1] for p in parts])
    rc = np.concatenate([p[2] for p in parts]).reshape(-1, 2)
    load = np.concatenate([np.full(p[0].size, p[3], dtype=np.int64) for p in parts])
    oy, ox = needed.origin
    reg = needed.span.solve(lane, rc[:, 0] - oy, rc[:, 1] - ox)
    hit = reg >= 0
    target = reg[hit] * needed.lanes + lane[hit]
    target, first = np.unique(target, return_index=True)
    return target, load[hit][first], elem[hit][first]


def _in_surface(el: np.ndarray, surface: Surface, t: int) -> np.ndarray:
    """Elements a load reads from inside its surface (outside, the hardware returns zeros)."""
    return (el[..., 0] >= 0) & (el[..., 0] < surface.height) & (el[..., 1] >= 0) & \
        ((el[..., 1] + 1) * t <= surface.width)


def lookup(keys: np.ndarray, table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each key: whether the loads deliver it, and the (load, element) that does."""
    uniq, load, elem = table
    if uniq.size == 0:
        z = np.zeros(keys.shape, dtype=np.int64)
        return np.zeros(keys.shape, dtype=bool), z - 1, z - 1
    idx = np.clip(np.searchsorted(uniq, keys), 0, uniq.size - 1)
    found = uniq[idx] == keys
    return found, np.where(found, load[idx], -1), np.where(found, elem[idx], -1)


def surface_mismatch(loads: Sequence[BlockLoad], storage: Surface | Sequence[Surface],
                     elem_bytes: int) -> Verdict | None:
    """The first load that reads a byte outside the operand's storage, or reads a byte the
    storage holds as another element; ``None`` when every load reads the storage.

    Coverage identifies elements by ``(row, column)`` of each load's own surface; that is the
    operand's element only when the load's surface addresses it at the byte the storage does
    (``base + row * pitch + column * elem_bytes``). ``storage``: the operand's surface, or the
    surfaces the user declares (a byte must be one of them at the same element).

    >>> op = Surface(64, 8, 64)
    >>> surface_mismatch([BlockLoad(2, 16, 8, op)], op, 2) is None
    True
    >>> surface_mismatch([BlockLoad(2, 16, 8, Surface(64, 8, 64, base=4096))], op, 2).counterexample["byte"]
    4096
    """
    stores = (storage,) if isinstance(storage, Surface) else tuple(storage)
    for i, ld in enumerate(loads):
        s = ld.surface
        if s in stores:
            continue
        el = lane_elements(ld, elem_bytes)
        ok = (el[..., 0] >= 0) & _in_surface(el, s, elem_bytes)
        rows, cols = el[..., 0][ok], el[..., 1][ok]
        if rows.size == 0:
            continue
        addr = s.base + rows * s.pitch + cols * elem_bytes
        good = np.zeros(addr.shape, dtype=bool)
        for st in stores:
            rel = addr - st.base
            r, c = np.divmod(rel, st.pitch) if st.pitch > 0 else (rel * 0 - 1, rel * 0)
            good |= (rel >= 0) & (r == rows) & (c == cols * elem_bytes) & (r < st.height) & \
                ((cols + 1) * elem_bytes <= st.width)
        if not good.all():
            k = int(np.argmin(good))
            byte, row, col = int(addr[k]), int(rows[k]), int(cols[k])
            return Verdict.fails(
                {"load": i, "byte": byte, "element": [row, col], "surface": s.to_dict(),
                 "storage": [st.to_dict() for st in stores]},
                f"load {i} ({ld.describe()}) reads element ({row}, {col}) of its surface at byte "
                f"{byte}, which the operand's storage (base {stores[0].base}, pitch "
                f"{stores[0].pitch}) does not hold as that element", method="enumeration")
    return None


def _limits_and_surfaces(loads: Sequence[BlockLoad], elem_bytes: int, arch: IntelArch,
                         storage: Surface | Sequence[Surface] | None) -> Verdict | None:
    """The first hardware limit a load breaks, else the first byte a load reads outside the
    operand's storage (:func:`surface_mismatch`), else ``None``."""
    for i, ld in enumerate(loads):
        for v in violations(ld, arch):
            return Verdict.fails({"load": i, "limit": v.limit, "value": v.value,
                                  "rule": v.rule}, f"load {i} ({ld.describe()}) breaks the "
                                  f"{v.limit} limit: {v.message}", method="limits")
    if loads:
        return surface_mismatch(loads, loads[0].surface if storage is None else storage, elem_bytes)
    return None


def _explain_bytes(cex: dict, needed: Needed, loads, table, r: int, l: int, home: Surface | None,
                   elem_bytes: int) -> str:
    """For an operand placed away from the surface origin: add the bytes involved to ``cex``
    (the byte the register must hold, the load and the byte it delivers) and say it; else ``""``."""
    if not needed.placed_at or home is None:
        return ""
    got = _shuffled(loads, table[r:r + 1], elem_bytes)[0, l]
    cex.update(_bytes_of(needed, got, table, r, l, home, elem_bytes))
    return _bytes_reason(cex)


def check_plan(loads: Sequence[BlockLoad], shuffle, needed: Needed, elem_bytes: int,
               arch: IntelArch = "xe2", storage: Surface | Sequence[Surface] | None = None,
               *, consumer: str = "DPAS") -> Verdict:
    """Prove that ``loads`` and ``shuffle`` feed the DPAS operand (``consumer="DPAS"``) or fill
    the registers of any distributed layout (``consumer="layout"``), or give a counterexample.

    ``shuffle[r][l] = (load, element)``: DPAS register ``r`` of lane ``l`` takes that
    element of that load's data in lane ``l``. Checked, in this order: every limit of
    every load (the limit that is broken); every needed pair is loaded into its lane
    (the element that is missed); every register receives its element (the register
    that receives the wrong one). The proof enumerates all registers of all lanes.
    ``storage``: the operand's surface (or the surfaces the user declares); ``None`` takes
    the first load's surface. A load that reads any other byte is a counterexample naming
    the load and the byte (:func:`surface_mismatch`).

    >>> from verilayout.hw.intel.dpas import Dpas
    >>> need = Needed.from_layout(Dpas(8, 8, 16, 2, 16, (1, 1), (1, 1)).layout((8, 16), 0))
    >>> ld = BlockLoad(2, 16, 8, Surface(64, 8, 64))
    >>> check_plan([ld], [[(0, r)] * 16 for r in range(8)], need, 2).proved
    True
    >>> check_plan([ld.moved(0, 1)], [[(0, r)] * 16 for r in range(8)], need, 2).counterexample
    {'register': 0, 'lane': 0, 'element': [0, 0], 'missed': True}
    """
    bad = _limits_and_surfaces(loads, elem_bytes, arch, storage)
    if bad is not None:
        return bad
    table = _shuffle_array(shuffle, needed)
    found = delivered_mask(loads, needed, elem_bytes)
    home = storage if isinstance(storage, Surface) else \
        (storage[0] if storage else (loads[0].surface if loads else None))
    if not found.all():
        r, l = divmod(int(np.argmin(found.reshape(-1))), needed.lanes)
        el = needed.operand(*needed.coords[r, l])
        cex = {"register": r, "lane": l, "element": list(el), "missed": True}
        why = _explain_bytes(cex, needed, loads, table, r, l, home, elem_bytes)
        return Verdict.fails(
            cex, f"element {el} read by {consumer} register {r} of lane {l} is loaded into lane "
            f"{l} by no load{why}", method="enumeration")
    wrong = _first_wrong(loads, table, needed, elem_bytes)
    if wrong is not None:
        r, l, got = wrong
        want = needed.operand(*needed.coords[r, l])
        src = [int(v) for v in table[r, l]]
        have = None if got[0] < 0 else list(needed.operand(*got))
        cex = {"register": r, "lane": l, "expected": list(want), "received": have,
               "source": src}
        why = _explain_bytes(cex, needed, loads, table, r, l, home, elem_bytes)
        return Verdict.fails(cex, f"{consumer} register {r} of lane {l} receives "
                             f"{tuple(have) if have else 'nothing'} from load {src[0]} element "
                             f"{src[1]}, not {want}{why}", method="enumeration")
    return Verdict.holds(
        f"{len(loads)} load(s) respect every limit and feed all {needed.registers} registers "
        f"x {needed.lanes} lanes of the sub-group's "
        f"{'DPAS operand' if consumer == 'DPAS' else 'tensor'} (each checked)",
        method="enumeration", registers=needed.registers, lanes=needed.lanes,
        loads=len(loads))


def _bytes_of(needed: Needed, got: np.ndarray, table: np.ndarray, r: int, l: int,
              home: Surface, t: int) -> dict:
    """For a placed operand: the byte register ``r`` of lane ``l`` must hold, and the load
    its shuffle names with the byte that load puts there (``got``: the element it gives that
    register, ``-1``: nothing)."""
    row, col = (int(v) for v in needed.coords[r, l])
    out = {"byte": home.base + row * home.pitch + col * t, "load": int(table[r, l, 0])}
    gr, gc = (int(v) for v in got)
    out["read_byte"] = None if gr < 0 else home.base + gr * home.pitch + gc * t
    return out


def _bytes_reason(cex: dict) -> str:
    read = "nothing" if cex["read_byte"] is None else f"byte {cex['read_byte']}"
    return (f" (it sits at byte {cex['byte']}; the shuffle takes load {cex['load']}, which "
            f"gives {read} there)")


def unreachable(needed: Needed, elem_bytes: int, surface: Surface,
                arch: IntelArch = "xe2", *, negative_offsets: bool = True) -> Verdict | None:
    """The first needed ``(lane, element)`` pair that no valid load, of any shape at any
    position, puts into its lane, as a counterexample saying why; ``None`` when each pair is
    delivered by some valid load (a plan then exists: one load per pair at worst).

    A load of shape ``S`` at ``(y, x)`` gives element ``(R, C)`` to lane ``S.lanes[R - y,
    C - x]``; ``y`` is free and ``x`` any multiple of the shape's alignment (negative offsets
    read zeros outside the surface [S]), so the pair is reachable iff the element lies in the
    surface and some cell of some shape gives that lane at a column offset congruent to
    ``C`` modulo the alignment. With ``negative_offsets=False`` (loads start at ``x, y >= 0``)
    the cell must also lie at ``dy <= R`` and ``dx <= C``: near the top and left edges some
    lanes cannot receive some elements at all (a 32-bit element ``(0, 0)`` reaches lane 0 only).

    >>> from verilayout.core.linear_layout import LinearLayout
    >>> L = LinearLayout({"register": [[0, 1]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0]]},
    ...                  ["dim0", "dim1"])
    >>> unreachable(Needed.from_layout(L), 2, Surface(64, 16, 64)) is None
    True
    >>> unreachable(Needed.from_layout(L), 2, Surface(64, 8, 64)).counterexample["lane"]
    8
    """
    t = elem_bytes
    shapes = load_shapes(t, arch)
    align = max((s.x_align for s in shapes), default=1)
    reach = np.zeros((SUBGROUP_SIZE, align), dtype=bool)
    for s in shapes:
        dy, dx = np.nonzero(s.lanes >= 0)
        for r in range(s.x_align):
            sel = dx % s.x_align == r
            for rho in range(r, align, s.x_align):
                reach[s.lanes[dy[sel], dx[sel]], rho] = True
    lane = np.broadcast_to(np.arange(needed.lanes)[None, :], needed.coords.shape[:2])
    rows, cols = needed.coords[..., 0], needed.coords[..., 1]
    inside = (rows < surface.height) & ((cols + 1) * t <= surface.width)
    ok = inside & reach[lane % SUBGROUP_SIZE, cols % align]
    if not negative_offsets:
        ok &= _reach_from_origin(lane, rows, cols, shapes)
    if ok.all():
        return None
    r, l = (int(v) for v in np.argwhere(~ok)[0])
    el = needed.operand(*needed.coords[r, l])
    row, col = int(rows[r, l]), int(cols[r, l])
    if not inside[r, l]:
        why = (f"memory element ({row}, {col}) lies outside the surface ({surface.height} rows "
               f"of {surface.width} bytes), where loads read zeros [S]")
    elif not negative_offsets and reach[l % SUBGROUP_SIZE, col % align]:
        why = (f"every legal load that gives lane {l} memory element ({row}, {col}) starts "
               "above or left of the surface, and negative offsets are excluded")
    else:
        why = (f"no valid load shape gives lane {l} an element at a column congruent to {col} "
               f"modulo {align}")
    return Verdict.fails({"register": r, "lane": l, "element": list(el)},
                         f"element {el} of register {r} of lane {l} cannot be delivered to lane "
                         f"{l} by any valid 2D block load: {why}", method="enumeration")


def _reach_from_origin(lane: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                       shapes) -> np.ndarray:
    """Whether some shape has a cell ``(dy, dx)`` with the pair's lane, ``dy <= row``,
    ``dx <= col`` and ``dx`` congruent to ``col`` modulo its alignment (a load at
    ``(row - dy, col - dx) >= 0``). Only pairs within a box of the top or left edge can fail."""
    ok = np.ones(lane.shape, dtype=bool)
    edge = (rows < MAX_HEIGHT) | (cols < 64)
    if not edge.any():
        return ok
    L, R, C = lane[edge], rows[edge], cols[edge]
    hit = np.zeros(L.shape, dtype=bool)
    for s in shapes:
        dy, dx = np.nonzero(s.lanes >= 0)
        cl = s.lanes[dy, dx]
        todo = np.flatnonzero(~hit)
        for i in range(0, todo.size, 1024):  # bounded memory: 1024 pairs x the box's cells
            j = todo[i:i + 1024]
            m = (cl[None, :] == L[j, None]) & (dy[None, :] <= R[j, None]) & \
                (dx[None, :] <= C[j, None]) & ((C[j, None] - dx[None, :]) % s.x_align == 0)
            hit[j[m.any(axis=1)]] = True
    ok[edge] = hit
    return ok


def _shuffle_array(shuffle, needed: Needed) -> np.ndarray:
    try:
        table = np.asarray(shuffle)         # a plan's int32 ShuffleTable: itself, no copy
        if table.dtype not in (np.int32, np.int64):
            table = np.asarray(shuffle, dtype=np.int64)
    except (TypeError, ValueError):
        raise LayoutError("the shuffle must give (load, element) for every register and lane") \
            from None
    want = (needed.registers, needed.lanes, 2)
    if table.shape != want:
        raise LayoutError(f"the shuffle has shape {list(table.shape)}; the operand needs "
                          f"{list(want)} (register x lane x (load, element))")
    return table


def _shuffled(loads: Sequence[BlockLoad], table: np.ndarray, elem_bytes: int) -> np.ndarray:
    """What each (register, lane) receives under the shuffle ``table``; ``-1`` where nothing.

    Entries are grouped by load once (a stable sort) and only the loads named are visited, so
    the cost is linear in the number of entries plus those loads' elements.
    """
    got = np.full(table.shape, -1, dtype=np.int64)
    flat, gflat = table.reshape(-1, 2), got.reshape(-1, 2)
    lanes = np.broadcast_to(np.arange(table.shape[1])[None, :], table.shape[:2]).reshape(-1)
    order = np.argsort(flat[:, 0], kind="stable")
    named = flat[order, 0]
    starts = np.flatnonzero(np.r_[True, named[1:] != named[:-1]]) if named.size else named
    for a, b in zip(starts.tolist(), starts[1:].tolist() + [named.size]):
        i = int(named[a])
        if not 0 <= i < len(loads):
            continue
        idx = order[a:b]
        el = lane_elements(loads[i], elem_bytes)
        k = flat[idx, 1]
        ok = (k >= 0) & (k < el.shape[1])
        idx, k = idx[ok], k[ok]
        gflat[idx] = el[lanes[idx], k]
    return got


def _first_wrong(loads: Sequence[BlockLoad], table: np.ndarray, needed: Needed,
                 elem_bytes: int) -> tuple | None:
    """The first ``(register, lane, received (row, col))`` whose shuffle entry does not give
    its needed element, in register-major order; ``None`` when every entry does. Checked a
    slice of registers at a time (temporaries of one slice)."""
    step = max(1, _CHUNK // max(1, needed.lanes))
    for r0 in range(0, needed.registers, step):
        got = _shuffled(loads, table[r0:r0 + step], elem_bytes)
        bad = np.any(got != needed.coords[r0:r0 + step], axis=2).reshape(-1)
        if bad.any():
            r, l = divmod(int(np.argmax(bad)), needed.lanes)
            return r0 + r, l, got[r, l]
    return None


def compare_load_layout(layout: LinearLayout, needed: Needed, pack: tuple = (0, 1)) -> Verdict:
    """Does a load layout in that note's terms (in dims ``offset``, ``iteration``, ``load``;
    out dims the memory-view coordinates, dim ``pack[0]`` counted in slots of ``pack[1]``
    elements) name exactly the elements the sub-group's DPAS instructions read?

    Expands each slot to its elements (the note's rule: multiply the packed coordinate
    by the number of packed values, add 0, 1, ...), then checks every named element is
    inside the tensor and read by the sub-group, and every element read is named. The
    counterexample names the input and coordinate, or the register and lane.

    >>> from verilayout.hw.intel.dpas import Dpas
    >>> need = Needed.from_layout(Dpas(8, 8, 16, 2, 16, (1, 1), (1, 1)).layout((8, 16), 0))
    >>> L = LinearLayout({"offset": [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0], [4, 0]],
    ...                   "iteration": [], "load": []}, ["dim0", "dim1"])
    >>> compare_load_layout(L, need).proved
    True
    """
    if layout.out_dim_names != ["dim0", "dim1"]:
        raise LayoutError(f"a load layout has out dims dim0, dim1; got {layout.out_dim_names}")
    dim, k = pack
    if dim not in (0, 1) or not isinstance(k, int) or k < 1:
        raise LayoutError(f"pack must be (dim 0 or 1, count >= 1), got {pack!r}")
    names = layout.in_dim_names
    sizes = [layout.in_dim_size(n) for n in names]
    table = layout.apply_all()
    b0 = layout.total_out_bits - layout.out_dim_bits("dim1")
    slots = np.stack([table & ((1 << b0) - 1), table >> b0], axis=1)
    mask = needed.element_mask()
    rows, cols = needed.shape
    for flat in range(slots.shape[0]):
        for j in range(k):
            y, x = int(slots[flat, 0]), int(slots[flat, 1])
            y, x = (y * k + j, x) if dim == 0 else (y, x * k + j)
            if not (y < rows and x < cols and mask[y, x]):
                ins = _unflat(flat, names, sizes)
                where = "outside the tensor" if not (y < rows and x < cols) else \
                    "not read by the sub-group"
                return Verdict.fails({**ins, "slot": [int(v) for v in slots[flat]],
                                      "element": [y, x], "shape": [rows, cols]},
                                     f"{_fmt_ins(ins)} -> slot {tuple(int(v) for v in slots[flat])}"
                                     f" holds element ({y}, {x}), {where} {rows}x{cols}",
                                     method="enumeration")
    named = np.zeros(needed.shape, dtype=bool)
    for j in range(k):
        y = slots[:, 0] * (k if dim == 0 else 1) + (j if dim == 0 else 0)
        x = slots[:, 1] * (k if dim == 1 else 1) + (j if dim == 1 else 0)
        named[y, x] = True
    miss = ~named[needed.coords[..., 0], needed.coords[..., 1]]
    if miss.any():
        r, l = (int(v) for v in np.argwhere(miss)[0])
        y, x = (int(v) for v in needed.coords[r, l])
        return Verdict.fails({"register": r, "lane": l, "element": [y, x]},
                             f"element ({y}, {x}) read by DPAS register {r} of lane {l} is "
                             "named by no (offset, iteration, load)", method="enumeration")
    return Verdict.holds(f"the layout names exactly the {int(mask.sum())} elements the "
                         "sub-group reads", method="enumeration")


def _unflat(flat: int, names, sizes) -> dict:
    out = {}
    for n, s in zip(names, sizes):
        out[n] = flat % s
        flat //= s
    return out


def _fmt_ins(ins: dict) -> str:
    return ", ".join(f"{n}={v}" for n, v in ins.items())


# ----------------------------------------------------------------------------
# the load shapes that exist
# ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Shape:
    """A load shape at the origin, with its lane pattern over the tensor-element box.

    ``lanes[dy, dx]`` is the lane that receives the element at ``(y + dy, x + dx)``
    (``-1``: none), for ``t``-byte tensor elements.
    """

    load: BlockLoad
    lanes: np.ndarray
    x_align: int

    @property
    def box(self) -> tuple[int, int]:
        return self.lanes.shape

    @property
    def name(self) -> str:
        return self.load.describe().split(" at ")[0]


def load_shapes(elem_bytes: int, arch: IntelArch = "xe2") -> tuple[Shape, ...]:
    """Every valid load shape that may serve ``elem_bytes``-byte tensor elements, with
    shorter shapes left out where a taller one receives a superset in the same lanes
    (plain and VNNI loads: lanes do not depend on the height; transposed loads: the
    height pads to a power of two, so only powers of two are listed).

    >>> names = [s.name for s in load_shapes(2)]
    >>> "16b 32r16x2c" in names, "32b 32r8x1c transpose" in names
    (True, True)
    """
    return _load_shapes(elem_bytes, arch)


@lru_cache(maxsize=64)  # keyed by (lanes, arch): a handful of values
def _load_shapes(t: int, arch: IntelArch) -> tuple[Shape, ...]:
    if arch not in ARCHS:
        raise LayoutError(f"unknown architecture {arch!r} (known: {', '.join(ARCHS)})")
    protos: list[BlockLoad] = []
    for e in (1, 2, 4, 8):
        lo, hi = PLAIN_WIDTH[e]
        for w in _pow2_range(lo, hi):
            for a in PLAIN_ARRAY[e]:
                protos.append(BlockLoad(e, w, MAX_HEIGHT, _BIG, array_length=a))
    for e in (1, 2):
        lo, hi = VNNI_WIDTH[arch][e]
        for w in _pow2_range(lo, hi):
            for a in (1, 2, 4):
                protos.append(BlockLoad(e, w, MAX_HEIGHT, _BIG, array_length=a, vnni=True))
    for w in (1, 2, 4, 8):
        for h in (1, 2, 4, 8, 16, 32):
            protos.append(BlockLoad(4, w, h, _BIG, transpose=True))
    for w in (1, 2, 4):
        protos.append(BlockLoad(8, w, 8, _BIG, transpose=True))
    out = []
    for p in protos:
        if violations(p, arch):
            continue
        pat = _pattern(p, t)
        if pat is not None:
            out.append(Shape(p, pat, max(1, 4 // t) if p.elem_bytes <= 2 else
                             max(1, p.elem_bytes // t)))
    return tuple(out)


def _pow2_range(lo: int, hi: int) -> list[int]:
    out, v = [], 1
    while v <= hi:
        if v >= lo:
            out.append(v)
        v *= 2
    return out


def _pattern(load: BlockLoad, t: int) -> np.ndarray | None:
    el = lane_elements(load, t)
    ok = el[..., 0] >= 0
    if not ok.any():
        return None
    rows = int(el[..., 0][ok].max()) + 1
    cols = int(el[..., 1][ok].max()) + 1
    pat = np.full((rows, cols), -1, dtype=np.int64)
    lane = np.broadcast_to(np.arange(SUBGROUP_SIZE)[:, None], el.shape[:2])
    pat[el[..., 0][ok], el[..., 1][ok]] = lane[ok]
    pat.setflags(write=False)
    return pat


# ----------------------------------------------------------------------------
# the counting lower bound
# ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Bound:
    """``value``: no valid plan has fewer loads. ``per_load``: the most needed pairs one
    valid load can serve; ``needed``: the pairs; ``argument``: the proof in one line."""

    value: int
    needed: int
    per_load: int
    shape: str
    argument: str


def lower_bound(needed: Needed, elem_bytes: int, arch: IntelArch = "xe2", *,
                exact: bool = True) -> Bound:
    """Counting bound on the loads any valid plan needs.

    For every valid load shape, the needed pairs it can serve at any position are
    at most (a) the needed elements inside its box (a sliding-window maximum over
    the tensor), (b) the box cells whose receiving lane is one that needs an
    element at that position modulo a period (a cyclic correlation), and (c) the
    box cells whose receiving lane needs exactly that element (a correlation over
    the zero-padded tensor; with ``exact=True``, and only for shapes (a) and (b) do
    not already rule out); each maximised over all positions. ``X`` is the largest
    min(a, b[, c]); the bound is ``ceil(pairs / X)``.

    >>> from verilayout.hw.intel.dpas import Dpas
    >>> need = Needed.from_layout(Dpas(8, 8, 16, 2, 16, (8, 4), (4, 2)).layout((32, 256), 1),
    ...                           transpose=True)
    >>> b = lower_bound(need, 2); b.value, b.per_load, b.needed
    (4, 512, 2048)
    """
    total = needed.count
    mask = needed.element_mask()
    window = _Windows(mask)
    residues = _Residues(needed)
    shapes = sorted(load_shapes(elem_bytes, arch),
                    key=lambda s: (-window.max(*s.box), s.load.elem_bytes != elem_bytes))
    sharp = _Exact(needed) if exact else None
    best, best_shape = 0, ""
    for s in shapes:
        a = window.max(*s.box)
        if a <= best:
            break
        b = min(a, residues.max_matches(s.lanes))
        if b > best and sharp is not None:
            b = min(b, sharp.max_matches(s.lanes))
        if b > best:
            best, best_shape = b, s.name
    if best == 0:
        raise LayoutError("no valid load shape can serve any element of this operand")
    value = -(-total // best)
    arg = (f"no valid load serves more than {best} of the {total} needed (lane, element) pairs "
           f"(best shape {best_shape}), so at least ceil({total}/{best}) = {value} "
           f"load{'s' if value != 1 else ''}")
    return Bound(value, total, best, best_shape, arg)


class _Windows:
    """Sliding-window maxima of a boolean mask (product sets use 1D maxima)."""

    def __init__(self, mask: np.ndarray):
        self.mask = mask
        rows = np.flatnonzero(mask.any(axis=1))
        cols = np.flatnonzero(mask.any(axis=0))
        self.rows, self.cols = rows, cols
        self.product = int(mask.sum()) == rows.size * cols.size
        self._cache: dict = {}
        if not self.product:
            self.prefix = np.pad(mask.astype(np.int64).cumsum(0).cumsum(1), ((1, 0), (1, 0)))

    def max(self, h: int, w: int) -> int:
        if (h, w) not in self._cache:
            self._cache[(h, w)] = self._compute(h, w)
        return self._cache[(h, w)]

    def _compute(self, h: int, w: int) -> int:
        if self.product:
            return _win1d(self.rows, h) * _win1d(self.cols, w)
        p = self.prefix
        R, C = self.mask.shape
        y0 = np.arange(-h + 1, R)[:, None]
        x0 = np.arange(-w + 1, C)[None, :]
        y1, x1 = np.clip(y0 + h, 0, R), np.clip(x0 + w, 0, C)
        y0, x0 = np.clip(y0, 0, R), np.clip(x0, 0, C)
        return int((p[y1, x1] - p[y0, x1] - p[y1, x0] + p[y0, x0]).max())


def _win1d(values: np.ndarray, length: int) -> int:
    """Most of the sorted ``values`` inside any window ``[s, s + length)``."""
    if values.size == 0:
        return 0
    ends = np.searchsorted(values, values + length, side="left")
    return int((ends - np.arange(values.size)).max())


class _Residues:
    """Which lanes need an element at each position modulo (py, px), for bound (b)."""

    def __init__(self, needed: Needed):
        rows, cols = needed.shape
        self.py, self.px = min(rows, 32), min(cols, 64)
        self.masks = np.zeros((SUBGROUP_SIZE, self.py, self.px), dtype=np.float64)
        for i, c in needed.pieces():            # flat index i = register * lanes + lane
            lane = np.arange(i, i + c.shape[0]) % needed.lanes
            self.masks[lane, c[:, 0] % self.py, c[:, 1] % self.px] = 1.0
        self.spectra = np.fft.rfft2(self.masks)

    def max_matches(self, pattern: np.ndarray) -> int:
        """Max over positions of the box cells whose lane needs that position (mod period)."""
        py, px = self.py, self.px
        folded = np.zeros((SUBGROUP_SIZE, py, px), dtype=np.float64)
        dy, dx = np.nonzero(pattern >= 0)
        np.add.at(folded, (pattern[dy, dx], dy % py, dx % px), 1.0)
        spec = np.fft.rfft2(folded)
        corr = np.fft.irfft2((self.spectra * np.conj(spec)).sum(axis=0), s=(py, px))
        return int(np.rint(corr.max()))


class _Exact:
    """Needed pairs a load pattern serves, exactly, at every position (FFT correlation over
    the tensor padded by the largest box, so nothing wraps around)."""

    def __init__(self, needed: Needed):
        self.needed = needed
        rows, cols = needed.shape
        self.size = (rows + MAX_HEIGHT, cols + 64)
        self.spectra = None

    def _prepare(self) -> None:
        n = self.needed
        lanes = np.broadcast_to(np.arange(n.lanes)[None, :], n.coords.shape[:2])
        masks = np.zeros((SUBGROUP_SIZE,) + self.size, dtype=np.float64)
        masks[lanes.ravel(), n.coords[..., 0].ravel(), n.coords[..., 1].ravel()] = 1.0
        self.spectra = np.fft.rfft2(masks)

    def max_matches(self, pattern: np.ndarray) -> int:
        if self.spectra is None:
            self._prepare()
        folded = np.zeros((SUBGROUP_SIZE,) + self.size, dtype=np.float64)
        dy, dx = np.nonzero(pattern >= 0)
        folded[pattern[dy, dx], dy, dx] = 1.0
        spec = np.fft.rfft2(folded)
        corr = np.fft.irfft2((self.spectra * np.conj(spec)).sum(axis=0), s=self.size)
        return int(np.rint(corr.max()))


# ----------------------------------------------------------------------------
# exhaustive search
# ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Search:
    """Outcome of :func:`search_fewer`: ``status`` is ``"none"`` (no plan with at most
    ``limit`` loads exists: proved), ``"found"`` (``loads`` is one) or ``"unknown"``."""

    status: str
    limit: int
    loads: tuple = ()
    candidates: int = 0
    reason: str = ""


def search_fewer(needed: Needed, elem_bytes: int, limit: int, surface: Surface,
                 arch: IntelArch = "xe2", *, max_candidates: int = 200_000,
                 timeout_ms: int = 20_000, candidates=None,
                 negative_offsets: bool = True) -> Search:
    """Is there a valid plan of at most ``limit`` loads? Enumerates every valid load (each
    shape of :func:`load_shapes` at every aligned position that serves a needed pair),
    keeps those whose served set no other load's contains, and asks z3.
    ``candidates``: the result of :func:`candidate_loads`, when already computed;
    ``negative_offsets=False``: only loads starting at ``x, y >= 0``.

    >>> from verilayout.hw.intel.dpas import Dpas
    >>> need = Needed.from_layout(Dpas(8, 8, 16, 2, 16, (1, 1), (1, 1)).layout((8, 16), 0))
    >>> search_fewer(need, 2, 0, Surface(64, 8, 64)).status
    'none'
    """
    keys = needed.pair_keys()
    if limit < 0:
        return Search("none", limit, reason="a plan cannot have fewer than 0 loads")
    if candidates is None:
        candidates = _candidates(needed, keys, elem_bytes, arch, surface, max_candidates,
                                 negative_offsets)
    sets, loads, n = candidates
    if sets is None:
        return Search("unknown", limit, candidates=n,
                      reason=f"more than {max_candidates} candidate load positions")
    full = (1 << keys.size) - 1
    union = 0
    for m in sets:
        union |= m
    if union != full:
        return Search("none", limit, candidates=len(sets),
                      reason="some needed pair is served by no valid load at all")
    if limit == 0:
        return Search("none", limit, candidates=len(sets), reason="the operand needs data")
    pick = [z3.Bool(f"l{i}") for i in range(len(sets))]
    s = z3.Solver()
    s.set("timeout", int(timeout_ms))
    for j in range(keys.size):
        s.add(z3.Or([pick[i] for i, m in enumerate(sets) if m >> j & 1]))
    s.add(z3.AtMost(*pick, limit))
    res = solve(s)
    record_query(s, res, f"{limit} loads cover all {keys.size} needed pairs")
    if res == z3.unsat:
        return Search("none", limit, candidates=len(sets),
                      reason=f"z3: no {limit} of the {len(sets)} undominated valid loads cover "
                      f"all {keys.size} needed pairs")
    if res == z3.unknown:
        return Search("unknown", limit, candidates=len(sets),
                      reason=f"z3 gave up: {s.reason_unknown()}")
    model = s.model()
    chosen = tuple(loads[i] for i, p in enumerate(pick) if z3.is_true(model.eval(p)))
    return Search("found", limit, chosen, len(sets), reason=f"z3 found {len(chosen)} loads")


def _starts(values: np.ndarray, length: int, step: int) -> np.ndarray:
    """Every ``step``-aligned start ``s`` with some value in ``[s, s + length)``."""
    lo = (values - length + 1)
    lo = -(-lo // step) * step
    spans = [np.arange(a, v + 1, step) for a, v in zip(lo.tolist(), values.tolist())]
    return np.unique(np.concatenate(spans)) if spans else np.zeros(0, dtype=np.int64)


def candidate_loads(needed: Needed, elem_bytes: int, surface: Surface, arch: IntelArch = "xe2",
                    max_candidates: int = 200_000):
    """Every valid load that serves a needed pair, up to domination: a list of served-pair
    bitmasks (bit ``j``: the ``j``-th of :meth:`Needed.pair_keys`) and the loads, keeping
    only loads whose served set no other load's contains; ``(None, None, n)`` when more
    than ``max_candidates`` positions would have to be tried.

    >>> from verilayout.hw.intel.dpas import Dpas
    >>> need = Needed.from_layout(Dpas(8, 8, 16, 2, 16, (1, 1), (1, 1)).layout((8, 16), 0))
    >>> sets, loads, n = candidate_loads(need, 2, Surface(64, 8, 64))
    >>> len(sets), bin(sets[0]).count("1")
    (1, 128)
    """
    return _candidates(needed, needed.pair_keys(), elem_bytes, arch, surface, max_candidates)


def _candidates(needed: Needed, keys: np.ndarray, t: int, arch: IntelArch, surface: Surface,
                max_candidates: int, negative_offsets: bool = True):
    rows, cols = needed.shape
    coords = needed.coords.reshape(-1, 2)
    need_rows, need_cols = np.unique(coords[:, 0]), np.unique(coords[:, 1])
    best: dict[int, BlockLoad] = {}
    count = 0
    for s in load_shapes(t, arch):
        h, w = s.box
        step = s.x_align
        # only positions whose box holds a needed row and a needed column can serve
        y0 = _starts(need_rows, h, 1)
        x0 = _starts(need_cols, w, step)
        if not negative_offsets:
            y0, x0 = y0[y0 >= 0], x0[x0 >= 0]
        count += y0.size * x0.size
        if count > max_candidates:
            return None, None, count
        dy, dx = np.nonzero(s.lanes >= 0)
        lane = s.lanes[dy, dx]
        Y = y0[:, None, None] + dy[None, None, :]
        X = x0[None, :, None] + dx[None, None, :]
        ok = (Y >= 0) & (Y < min(rows, surface.height)) & (X >= 0) & (X < cols) & \
            ((X + 1) * t <= surface.width)
        k = _key(lane[None, None, :], Y, X, (rows, cols))
        idx = np.clip(np.searchsorted(keys, k), 0, keys.size - 1)
        hit = ok & (keys[idx] == k)
        for iy, ix in zip(*np.nonzero(hit.any(axis=2))):
            bits = np.zeros(keys.size, dtype=bool)
            bits[idx[iy, ix][hit[iy, ix]]] = True
            m = int.from_bytes(np.packbits(bits, bitorder="little").tobytes(), "little")
            if m not in best:
                xe = int(x0[ix]) * t // s.load.elem_bytes
                ld = BlockLoad(s.load.elem_bytes, s.load.width, s.load.height, surface, xe,
                               int(y0[iy]), s.load.array_length, s.load.vnni, s.load.transpose)
                if not violations(ld, arch):
                    best[m] = ld
    masks = sorted(best, key=lambda m: -bin(m).count("1"))
    kept: list[int] = []
    for m in masks:
        if not any(m & ~k == 0 for k in kept):
            kept.append(m)
    return kept, [best[m] for m in kept], count
