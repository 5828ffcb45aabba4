"""2D block-load plans for one DPAS operand of one sub-group.

A :class:`Plan` is the loads a sub-group issues for one operand of one dot and the
register shuffle from loaded data to DPAS operand registers. Two planners:

* :func:`plan_minimal`: the fewest loads. Row ranges of at most the tallest load
  and, per row range, column ranges of at most the widest load are chosen
  greedily over the elements the DPAS instructions read; every load family the
  operand allows (plain, VNNI, d32/d64 transposed) and two width preferences are
  tried, and each candidate is proved by :func:`verilayout.prove.coverage.check_plan`.
  Minimality is then proved by counting (:func:`~verilayout.prove.coverage.lower_bound`)
  or, when that bound is lower, by exhaustive search
  (:func:`~verilayout.prove.coverage.search_fewer`).
* :func:`plan_baseline`: the algorithm of the project's Intel DPAS seed (002):
  start at one DPAS instruction's tile, turn the DPAS layout's further register
  bases, in order, into *iterations* while each doubles the block along one side
  within the limits, and turn the first basis that does not, and every later
  one, into *loads*.

>>> from verilayout.hw.intel.dpas import Dpas
>>> d = Dpas(8, 8, 16, 2, 16, (8, 4), (4, 2))
>>> p = plan_minimal(d.layout((256, 32), 0), dtype="f16", op_idx=0, inst_shape=d.inst_shape_a)
>>> len(p.loads), p.loads[0].describe(), p.minimal
(1, '16b 32r16x2c at (x=0, y=0)', True)
"""
from __future__ import annotations

from collections.abc import Sequence as SequenceABC
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Mapping, Sequence

import numpy as np

from verilayout.bits import log2, next_pow2
from verilayout.dtypes import IntelArch, bits, bytes_of
from verilayout.errors import LayoutError
from verilayout.hw.intel.block_io import ARCHS, MAX_HEIGHT, VNNI_MIN_HEIGHT, BlockLoad, Surface, require_origin, placement, unit_elements, violations
from verilayout.hw.intel.dpas import DTYPE_BYTES, OPS_PER_CHAN, Operand, TensorLayout, layout_operand
from verilayout.core.linear_layout import LinearLayout
from verilayout.synth.blockload_batch import BatchSlices, batch_slices, is_batched
from verilayout.prove.coverage import Bound, Needed, Search, Shape, candidate_loads, check_plan, delivered_arrays, delivery_table, load_shapes, lookup, lower_bound, search_fewer, unreachable
from verilayout.core.smt import Verdict
from verilayout.bits import plain_ints

__all__ = ["Plan", "BlockLoadPlan", "ShuffleTable", "plan_minimal", "plan_baseline", "default_surface", "format_load_layout",
           "plan_operand", "check_operand_plan", "plan_tensor",
           "DTYPE_BYTES"]


def default_surface(memory_shape: Sequence[int], elem_bytes: int) -> Surface:
    """The operand stored densely, row-major, with rows narrower than 64 bytes widened to the
    64-byte minimum (pitch = width).

    >>> default_surface((256, 32), 2)
    Surface(width=64, height=256, pitch=64, base=0)
    """
    rows, cols = memory_shape
    width = max(64, -(-cols * elem_bytes // 4) * 4)
    return Surface(width=width, height=rows, pitch=-(-width // 16) * 16)


# ----------------------------------------------------------------------------
# the plan
# ----------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class ShuffleTable(SequenceABC):
    """A plan's register shuffle kept as one read-only ``int32`` array of shape
    ``(registers, lanes, 2)`` instead of a tuple of tuples of pairs: 8 bytes per register
    slot instead of about 100 (a 8192x8192 DPAS operand's sub-group has 2^17 registers of 16
    lanes each). It reads as that tuple: ``table[r]`` is register ``r``'s tuple of
    ``(load, element)`` pairs, one per lane, and it equals (and hashes as) the tuple of those
    rows; ``numpy.asarray(table)`` is the array itself, without a copy.

    Law: ``ShuffleTable.of(load, elem)[r][l] == (load[r, l], elem[r, l])`` and
    ``ShuffleTable.of(load, elem) == tuple(tuple(zip(lr, er)) for lr, er in zip(load, elem))``.

    >>> t = ShuffleTable.of(np.array([[0, 1]]), np.array([[2, 3]]))
    >>> len(t), t[0], t == (((0, 2), (1, 3)),)
    (1, ((0, 2), (1, 3)), True)
    """

    table: np.ndarray

    @classmethod
    def of(cls, load: np.ndarray, elem: np.ndarray) -> "ShuffleTable":
        """The shuffle whose register ``r`` of lane ``l`` takes ``(load[r, l], elem[r, l])``."""
        table = np.stack([np.asarray(load), np.asarray(elem)], axis=-1).astype(np.int32)
        table.flags.writeable = False
        return cls(table)

    def __len__(self) -> int:
        return int(self.table.shape[0])

    def __getitem__(self, r):
        if isinstance(r, slice):
            return tuple(self[i] for i in range(*r.indices(len(self))))
        return tuple(map(tuple, self.table[r].tolist()))

    def __iter__(self):
        for row in self.table:
            yield tuple(map(tuple, row.tolist()))

    def __array__(self, dtype=None, copy=None):
        if dtype is None or np.dtype(dtype) == self.table.dtype:
            return self.table.copy() if copy else self.table
        return self.table.astype(dtype)

    def __eq__(self, other) -> bool:
        if isinstance(other, ShuffleTable):
            return bool(np.array_equal(self.table, other.table))
        if isinstance(other, SequenceABC) and not isinstance(other, (str, bytes)):
            return len(other) == len(self) and tuple(self) == tuple(
                tuple(tuple(x) for x in row) for row in other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"ShuffleTable({len(self)} registers x {self.table.shape[1]} lanes)"


def _kept_shuffle(shuffle) -> "ShuffleTable | tuple":
    """A plan's shuffle as stored: a :class:`ShuffleTable` as it is, any other sequence as a tuple."""
    return shuffle if isinstance(shuffle, ShuffleTable) else tuple(shuffle)


@dataclass(frozen=True, eq=False)
class BlockLoadPlan:
    """Loads and shuffle feeding one DPAS operand of one sub-group (warp ``warp``), or, with
    ``op_idx=None`` and ``inst_shape=()``, filling the registers of any distributed layout
    of a rank-2 tensor (:func:`plan_tensor`).

    ``shuffle[r][l] = (load, element)``: (DPAS) register ``r`` of lane ``l`` receives
    element ``element`` (counted in tensor elements) of what ``load`` put in lane
    ``l`` (the planners give a :class:`ShuffleTable`: that tuple of tuples, kept as one
    ``int32`` array; any sequence of that form is accepted). ``lower_bound``: no valid plan has fewer loads (``None`` if not computed);
    ``minimal``: proved that no valid plan has fewer loads than this one;
    ``verdict``: ``proved`` iff the plan is correct and minimality is proved (the
    method says how: ``counting`` or ``exhaustive``); ``unknown`` when correct but
    minimality is unsettled; ``counterexample`` when the plan is wrong. ``origin``: where
    the operand sits in the loads' surface, ``(x0, y0)`` (x in elements): its memory-view
    element ``(r, c)`` is the surface's element ``(y0 + r, x0 + c)``.
    """

    loads: tuple
    shuffle: tuple
    dtype: str
    op_idx: int | None
    shape: tuple
    inst_shape: tuple
    transpose: bool = False
    arch: IntelArch = "xe2"
    warp: int = 0
    warp_origin: tuple = (0, 0)
    lower_bound: int | None = None
    minimal: bool = False
    verdict: Verdict | None = None
    algorithm: str = "minimal"
    bound_argument: str = ""
    iterations: tuple = field(default=())
    origin: tuple = (0, 0)

    @property
    def elem_bytes(self) -> int:
        return bytes_of(self.dtype)

    @property
    def memory_shape(self) -> tuple:
        return tuple(self.shape[::-1]) if self.transpose else tuple(self.shape)

    @property
    def pack(self) -> tuple[int, int]:
        """``(dim, n)``: each register slot of the loads holds ``n`` consecutive tensor
        elements along memory-view dim ``dim`` (the seed's packed values).

        >>> from verilayout.hw.intel.dpas import Dpas
        >>> d = Dpas(8, 8, 16, 2, 16, (8, 4), (4, 2))
        >>> plan_minimal(d.layout((32, 256), 1), dtype="f16", op_idx=1,
        ...              inst_shape=d.inst_shape_b).pack
        (0, 2)
        """
        ld = self.loads[0]
        n = max(1, ld.unit_bytes // self.elem_bytes)
        return (0 if ld.vnni else 1, n)

    @property
    def layout(self) -> LinearLayout:
        """The loaded data as a linear layout in the seed's terms: in dims ``offset`` (a
        register slot inside one DPAS instruction's share), ``iteration`` (the next such
        share of the same load), ``load``; out dims the memory-view coordinates in slots
        (the packed dim divided by :attr:`pack`), relative to the warp's origin. Sized to
        the data for one load, to the tensor for several (not surjective).

        Raises :class:`LayoutError` when the loads differ in shape, their number is not
        a power of two, or their data is not a linear function of the slot index.
        """
        return _plan_layout(self)

    def to_dict(self) -> dict:
        """JSON-ready form (:meth:`from_dict` reads it back); ``layout`` is the seed-style
        :attr:`layout` (``None`` when the plan has none).

        >>> from verilayout.hw.intel.dpas import Dpas
        >>> p = plan_minimal(Dpas(8, 8, 16, 2, 16, (1, 1), (1, 1)).layout((8, 16), 0),
        ...                  dtype="f16", op_idx=0)
        >>> d = p.to_dict(); d["shuffle"][:2], d["lower_bound"]
        ([[0, 0], [0, 1]], 1)
        >>> Plan.from_dict(d).loads == p.loads
        True
        """
        try:
            layout = self.layout.to_dict()
        except LayoutError:
            layout = None
        return {"dtype": self.dtype, "op_idx": self.op_idx, "shape": list(self.shape),
                "inst_shape": list(self.inst_shape), "transpose": self.transpose,
                "arch": self.arch, "warp": self.warp, "warp_origin": list(self.warp_origin),
                "algorithm": self.algorithm,
                "loads": [ld.to_dict() for ld in self.loads],
                "shuffle": _shuffle_to_json(self.shuffle),
                "lower_bound": self.lower_bound, "minimal": self.minimal,
                "verdict": self.verdict.to_dict() if self.verdict is not None else None,
                "layout": layout, "origin": list(self.origin)}

    @classmethod
    def from_dict(cls, d: Mapping) -> "Plan":
        """Read a plan written by :meth:`to_dict`. ``verdict``, ``lower_bound`` and
        ``minimal`` are outputs, read back as not established (prove them again with
        ``check``); a ``layout``, if given, must be the one the loads imply."""
        keys = ("dtype", "op_idx", "shape", "inst_shape", "transpose", "arch", "warp",
                "warp_origin", "algorithm", "loads", "shuffle", "lower_bound", "minimal", "verdict", "layout",
                "origin")
        if not isinstance(d, Mapping):
            raise LayoutError(f"a plan must be a JSON object, got {type(d).__name__}")
        extra = [k for k in d if k not in keys]
        if extra:
            raise LayoutError(f"unknown key '{extra[0]}' in plan (known: {', '.join(keys)})")
        for k in ("dtype", "op_idx", "shape", "loads", "shuffle"):
            if k not in d:
                raise LayoutError(f"plan is missing the key '{k}'")
        dtype = d["dtype"]
        if not isinstance(d["loads"], list) or not d["loads"]:
            raise LayoutError("plan 'loads' must be a non-empty list")
        loads = tuple(BlockLoad.from_dict(x) for x in d["loads"])
        op_idx = d["op_idx"]
        if op_idx is None:
            dtype = _tensor_dtype(d["dtype"])
        elif op_idx not in (0, 1) or isinstance(op_idx, bool):
            raise LayoutError(f"plan 'op_idx' must be 0, 1 or null (a tensor plan), got {op_idx!r}")
        else:
            dtype = _dtype(dtype)
        shape = _pair(d["shape"], "shape")
        if op_idx is None:
            if d.get("inst_shape", []) not in ([], None):
                raise LayoutError("plan 'inst_shape' must be empty for a tensor plan (op_idx null)")
            inst = ()
        else:
            inst = _pair(d.get("inst_shape", _inst_default(dtype, op_idx)), "inst_shape")
        for k in ("transpose",):
            if not isinstance(d.get(k, False), bool):
                raise LayoutError(f"plan '{k}' must be true or false, got {d[k]!r}")
        warp = d.get("warp", 0)
        if not isinstance(warp, int) or isinstance(warp, bool) or warp < 0:
            raise LayoutError(f"plan 'warp' must be a non-negative integer, got {warp!r}")
        if d.get("arch", "xe2") not in ARCHS:
            raise LayoutError(f"plan 'arch' {d['arch']!r} is unknown (known: {', '.join(ARCHS)})")
        origin = d.get("warp_origin", [0, 0])
        if not isinstance(origin, list) or len(origin) != 2 or not all(
                isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in origin):
            raise LayoutError(f"plan 'warp_origin' must be two non-negative integers, "
                              f"got {origin!r}")
        placed = require_origin(d.get("origin", [0, 0]))
        p = cls(loads, _shuffle_from_json(d["shuffle"], len(loads)), dtype, op_idx, shape,
                inst, d.get("transpose", False), d.get("arch", "xe2"), warp, tuple(origin),
                algorithm=str(d.get("algorithm", "minimal")), origin=placed)
        given = d.get("layout")
        if given is not None:
            try:
                mine = p.layout.to_dict()
            except LayoutError as e:
                raise LayoutError(f"plan 'layout' is given but the loads have none: {e}") from None
            if LinearLayout.from_dict(given).to_dict() != mine:
                raise LayoutError("plan 'layout' differs from the layout its loads imply")
        return p

    def describe(self) -> str:
        """Several lines for people: loads, minimality, verdict."""
        what = "tensor" if self.op_idx is None else "operand A" if self.op_idx == 0 else \
            "operand B"
        lines = [f"{self.algorithm} plan for {what} {'x'.join(map(str, self.shape))}"
                 f"x{self.dtype}{' (stored transposed)' if self.transpose else ''}, warp "
                 f"{self.warp}: {len(self.loads)} load{'s' if len(self.loads) != 1 else ''}"]
        for i, ld in enumerate(self.loads):
            lines.append(f"  load {i}: {ld.describe()}")
        s = self.loads[0].surface
        lines.append(f"  surface: base {s.base:#x}, width {s.width} B, height {s.height} rows, "
                     f"pitch {s.pitch} B")
        if tuple(self.origin) != (0, 0):
            x0, y0 = self.origin
            lines.append(f"  operand at (x={x0}, y={y0}) of the surface: byte "
                         f"{s.base + y0 * s.pitch + x0 * self.elem_bytes:#x}")
        if self.lower_bound is not None:
            lines.append(f"lower bound: {self.lower_bound} ({self.bound_argument})")
        if self.verdict is not None:
            lines.append(f"verdict: {self.verdict.status} ({self.verdict.method}): "
                         f"{self.verdict.reason}")
        return "\n".join(lines)


#: The old name; a :class:`verilayout.synth.plan.Plan` like every synthesized answer.
Plan = BlockLoadPlan


@dataclass(frozen=True, eq=False)
class BatchedPlan:
    """The loads of a rank-3 tensor (a leading batch dim) for one sub-group: ``plan`` loads one
    batch index's matrix (the rank-2 slice of :func:`~verilayout.synth.blockload_batch.batch_slices`)
    and is issued once per index in ``batches``, batch ``b``'s loads reading the surface based at
    ``surface.base + b * surface.height * surface.pitch`` (Triton's Intel backend: the batch
    offset ``batch * baseHeight * pitch`` folded into the load's base pointer).
    ``registers[r] = (batch, slice register)``: register ``r`` of the rank-3 layout takes its
    element where ``plan.shuffle`` sends that slice register, from that batch index's loads.

    Law: every load covers one batch index, so the sub-group's (lane, element) pairs split by
    batch index, each index needing the slice's pairs; the fewest loads are ``len(batches)``
    times the slice's fewest, and ``plan``'s proofs (correct, minimal) carry over to the total.
    """

    plan: BlockLoadPlan
    batches: tuple
    registers: tuple
    batch_size: int

    @property
    def loads(self) -> tuple:
        """One batch index's loads (batch ``batches[0]``'s; the others move the base)."""
        return self.plan.loads

    @property
    def elem_bytes(self) -> int:
        return self.plan.elem_bytes

    @property
    def dtype(self) -> str:
        return self.plan.dtype

    @property
    def op_idx(self) -> int | None:
        return self.plan.op_idx

    @property
    def inst_shape(self) -> tuple:
        return self.plan.inst_shape

    @property
    def warp(self) -> int:
        return self.plan.warp

    @property
    def total_loads(self) -> int:
        """Every load the sub-group issues: one batch index's loads times the indices."""
        return len(self.plan.loads) * len(self.batches)

    @property
    def layout(self) -> LinearLayout:
        """One batch index's loaded data (:attr:`BlockLoadPlan.layout` of :attr:`plan`)."""
        return self.plan.layout

    @property
    def verdict(self) -> Verdict | None:
        """:attr:`plan`'s verdict, stated for every batch index and the total."""
        v = self.plan.verdict
        if v is None:
            return None
        n = len(self.batches)
        why = (f"for each of the {n} batch indices {list(self.batches)} (every load covers one: "
               f"{self.total_loads} loads in all): {v.reason}")
        return Verdict(v.status, why, v.counterexample, v.method, v.details)

    def batch_surface(self, batch: int) -> Surface:
        """The surface batch index ``batch``'s loads read: the first load's, based ``batch *
        height * pitch`` bytes further.

        >>> s = Surface(64, 8, 64)
        >>> BatchedPlan(None, (0, 1), (), 2).batch_base(s, 1)
        512
        """
        s = self.plan.loads[0].surface
        return Surface(s.width, s.height, s.pitch, self.batch_base(s, batch))

    @staticmethod
    def batch_base(surface: Surface, batch: int) -> int:
        """Batch ``batch``'s base byte: ``surface.base + batch * surface.height * surface.pitch``."""
        return surface.base + batch * surface.height * surface.pitch

    def to_dict(self) -> dict:
        """JSON-ready: ``plan`` (one batch index's, :meth:`BlockLoadPlan.to_dict`), ``batches``,
        ``registers`` (``[batch, slice register]`` per register), ``batch_size``."""
        return {"plan": self.plan.to_dict(), "batches": list(self.batches),
                "registers": [list(r) for r in self.registers], "batch_size": self.batch_size,
                "total_loads": self.total_loads}

    @classmethod
    def from_dict(cls, d: Mapping) -> "BatchedPlan":
        """Read what :meth:`to_dict` wrote (the plan's proofs are outputs, proved again by check)."""
        keys = ("plan", "batches", "registers", "batch_size", "total_loads")
        extra = [k for k in d if k not in keys]
        if extra:
            raise LayoutError(f"unknown key '{extra[0]}' in a batched plan (known: {', '.join(keys)})")
        for k in ("plan", "batches", "registers", "batch_size"):
            if k not in d:
                raise LayoutError(f"batched plan is missing the key '{k}'")
        plan = BlockLoadPlan.from_dict(d["plan"])
        ints = lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0  # noqa: E731
        size = d["batch_size"]
        if not ints(size) or size < 1:
            raise LayoutError(f"batched plan 'batch_size' must be a positive integer, got {size!r}")
        batches = d["batches"]
        if not isinstance(batches, list) or not batches or not all(ints(b) and b < size for b in batches):
            raise LayoutError(f"batched plan 'batches' must be a non-empty list of batch indices "
                              f"below {size}, got {batches!r}")
        regs = d["registers"]
        if not isinstance(regs, list) or not all(isinstance(r, list) and len(r) == 2 and all(map(ints, r))
                                                 for r in regs):
            raise LayoutError("batched plan 'registers' must be a list of [batch, slice register] pairs")
        return cls(plan, tuple(batches), tuple(tuple(r) for r in regs), size)

    def describe(self) -> str:
        """The slice plan's lines, then the batch indices it is issued for."""
        s = self.plan.loads[0].surface
        return "\n".join([
            f"rank-3 tensor, batch dim of {self.batch_size}: warp {self.warp} holds batch indices "
            f"{list(self.batches)}; each is loaded by the plan below ({len(self.plan.loads)} loads "
            f"per index, {self.total_loads} in all), batch b's surface based at "
            f"{s.base:#x} + b * {s.height} rows * {s.pitch} B"
            + (f"; every load covers one batch index, so no plan has fewer than "
               f"{len(self.batches)} x {self.plan.lower_bound} loads" if self.plan.lower_bound else ""),
            self.plan.describe()])


def _batched_parts(layout: Any, shape: Any) -> tuple[LinearLayout, Any] | None:
    """``(the rank-3 layout, a function from its slice to the same kind of operand)`` when
    ``layout`` is rank 3 (a TensorLayout, an Operand or a LinearLayout); ``None`` otherwise."""
    if isinstance(layout, TensorLayout) and is_batched(layout.layout):
        shape3 = layout.shape
        return layout.layout, lambda sl: TensorLayout(sl, layout.dtype, None if shape3 is None
                                                      else tuple(shape3[1:]))
    if isinstance(layout, Operand) and is_batched(layout.layout):
        return layout.layout, lambda sl: Operand(sl, layout.dtype, layout.op_idx, layout.inst_shape,
                                                 layout.dpas, layout.text)
    if is_batched(layout):
        return layout, lambda sl: sl
    return None


def _batch_shape(layout3: LinearLayout, shape: Any) -> Any:
    """A given rank-3 ``shape`` checked against the layout and cut to the slice's."""
    shape = plain_ints(shape)
    if shape is None:
        return None
    have = [layout3.out_dim_size(n) for n in layout3.out_dim_names]
    if list(shape) != have:
        raise LayoutError(f"shape {list(shape)} differs from the layout's shape {have} (out dims "
                          f"{', '.join(layout3.out_dim_names)})")
    return list(shape[1:])


def _pair(v: Any, key: str) -> tuple:
    if not isinstance(v, (list, tuple)) or len(v) != 2 or not all(
            isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in v):
        raise LayoutError(f"plan '{key}' must be two positive integers, got {v!r}")
    return tuple(v)


def _dtype(dtype: Any) -> str:
    if dtype not in DTYPE_BYTES:
        raise LayoutError(f"element type {dtype!r} is not one DPAS multiplies (known: "
                          f"{', '.join(DTYPE_BYTES)})")
    return dtype


def _tensor_dtype(dtype: Any) -> str:
    """An element type 2D block loads move: 1, 2, 4 or 8 whole bytes [S, T]."""
    if not isinstance(dtype, str):
        raise LayoutError(f"element type must be a name such as 'f16', got {dtype!r}")
    b = bits(dtype)
    if b not in (8, 16, 32, 64):
        raise LayoutError(f"element type {dtype!r} is {b} bits; 2D block loads move 8-, 16-, "
                          "32- or 64-bit elements [S, T]")
    return dtype


def _inst_default(dtype: str, op_idx: int) -> tuple:
    k = 8 * OPS_PER_CHAN[dtype]
    return (8, k) if op_idx == 0 else (k, 16)


def _shuffle_to_json(shuffle) -> list:
    if isinstance(shuffle, ShuffleTable):
        table = shuffle.table
        same = (table == table[:, :1]).all(axis=(1, 2)).tolist()
        return [row[0] if one else row for row, one in zip(table.tolist(), same)]
    out = []
    for row in shuffle:
        first = row[0]
        out.append(list(first) if all(tuple(x) == tuple(first) for x in row)
                   else [list(x) for x in row])
    return out


def _shuffle_from_json(data: Any, n_loads: int) -> tuple:
    if not isinstance(data, list):
        raise LayoutError("plan 'shuffle' must be a list (one entry per DPAS register)")
    rows = []
    for r, entry in enumerate(data):
        if isinstance(entry, list) and len(entry) == 2 and all(isinstance(v, int) for v in entry):
            row = [tuple(entry)] * 16
        elif isinstance(entry, list) and len(entry) == 16:
            row = [tuple(x) if isinstance(x, list) and len(x) == 2 else None for x in entry]
        else:
            row = [None]
        if any(x is None or not all(isinstance(v, int) and not isinstance(v, bool) for v in x)
               for x in row):
            raise LayoutError(f"plan 'shuffle'[{r}] must be [load, element] or 16 such pairs")
        for ld, _ in row:
            if not 0 <= ld < n_loads:
                raise LayoutError(f"plan 'shuffle'[{r}] names load {ld}; the plan has "
                                  f"{n_loads}")
        rows.append(tuple(row))
    return tuple(rows)


# ----------------------------------------------------------------------------
# the seed's view of the loaded data
# ----------------------------------------------------------------------------

def _plan_layout(p: Plan) -> LinearLayout:
    first = p.loads[0]
    for i, ld in enumerate(p.loads):
        if (ld.elem_bytes, ld.width, ld.height, ld.array_length, ld.vnni, ld.transpose) != \
                (first.elem_bytes, first.width, first.height, first.array_length, first.vnni,
                 first.transpose):
            raise LayoutError(f"load {i} differs in shape from load 0; the plan has no single "
                              "(offset, iteration, load) layout")
    n = len(p.loads)
    if n & (n - 1):
        raise LayoutError(f"the plan has {n} loads, not a power of two; no 'load' dimension")
    dim, k = p.pack
    t = p.elem_bytes
    units = unit_elements(first, t)
    if (units < 0).any() or units.shape[0] & (units.shape[0] - 1):
        raise LayoutError(f"load {first.describe()} fills registers with padding; its data is "
                          "not a linear function of the register slot")
    oy, ox = p.warp_origin if not p.transpose else p.warp_origin[::-1]
    oy, ox = oy + p.origin[1], ox + p.origin[0]
    x_t = lambda ld: ld.x * ld.elem_bytes // t
    rel = [units - np.array([first.y, x_t(first)])]
    for ld in p.loads[1:]:
        rel.append(rel[0] + np.array([ld.y - first.y, x_t(ld) - x_t(first)]))
    base = np.array([first.y - oy, x_t(first) - ox])
    slots = np.stack(rel) + base
    if dim == 0:
        slots[..., 0] //= k
    else:
        slots[..., 1] //= k
    if (slots < 0).any():
        raise LayoutError("the loads start before the warp's origin; no linear layout")
    flat = slots.reshape(-1, 2)
    bases = [flat[1 << b].tolist() for b in range((flat.shape[0] - 1).bit_length())]
    span = np.zeros((1, 2), dtype=np.int64)
    for b in bases:
        span = np.concatenate([span, span ^ np.array(b)])
    if not np.array_equal(span, flat):
        raise LayoutError("the loaded data is not a linear (XOR) function of (offset, iteration, "
                          "load); no linear layout")
    n_units = units.shape[0]
    per_inst = p.inst_shape[0] * p.inst_shape[1] // k if p.inst_shape else n_units
    off_bits = log2(min(per_inst, n_units))
    it_bits = log2(n_units) - off_bits
    mem = p.memory_shape
    tensor = [mem[0] // k, mem[1]] if dim == 0 else [mem[0], mem[1] // k]
    if n == 1:
        sizes = [next_pow2(int(flat[:, d].max()) + 1) for d in (0, 1)]
    else:
        sizes = [max(next_pow2(int(flat[:, d].max()) + 1), tensor[d]) for d in (0, 1)]
    return LinearLayout({"offset": bases[:off_bits], "iteration": bases[off_bits:off_bits + it_bits],
                         "load": bases[off_bits + it_bits:]},
                        {"dim0": sizes[0], "dim1": sizes[1]}, require_surjective=False)


def format_load_layout(layout: LinearLayout) -> str:
    """Print a layout the way the seed (Triton's ``LinearLayout::toString``) does.

    >>> print(format_load_layout(LinearLayout({"offset": [[0, 1]], "load": []}, ["dim0", "dim1"])))
     - offset=1 -> (0, 1)
     - load is a size 1 dimension
    where out dims are: [dim0 (size 1), dim1 (size 2)]
    """
    lines = []
    for name, bases in layout.bases.items():
        if not bases:
            lines.append(f" - {name} is a size 1 dimension")
            continue
        for i, b in enumerate(bases):
            lead = " - " if i == 0 else "   "
            lines.append(f"{lead}{name}={1 << i} -> ({', '.join(map(str, b))})")
    outs = ", ".join(f"{n} (size {s})" for n, s in layout.out_dims.items())
    lines.append(f"where out dims are: [{outs}]")
    return "\n".join(lines)


# ----------------------------------------------------------------------------
# building plans
# ----------------------------------------------------------------------------

@dataclass(frozen=True)
class _Family:
    """A family of loads: mode, element size, tallest block, widest row (tensor elements)."""

    mode: str
    elem_bytes: int
    max_rows: int
    max_cols: int


def _families(t: int, op_idx: int, transpose: bool) -> list[_Family]:
    if transpose:
        # the receiving lane of a transposed load depends on its (padded) height, so
        # shorter caps are families of their own
        fams = [_Family("transpose", 4, h, 32 // t) for h in (MAX_HEIGHT, 16, 8)
                if 4 % t == 0]
        return fams + [_Family("transpose", 8, 8, 32 // t)] if 8 % t == 0 else fams
    plain = _Family("plain", t, MAX_HEIGHT, 64 // t)
    if t > 2:
        return [plain]
    vnni = _Family("vnni", t, MAX_HEIGHT, 64 // t)
    return [vnni, plain] if op_idx == 1 else [plain, vnni]


@lru_cache(maxsize=4096)
def _widths(fam: _Family, span_le: int, tile_le: int, arch: IntelArch, wide: bool) -> list[tuple]:
    """Valid (width, array length) pairs covering ``span_le`` load elements, best first."""
    out = []
    for w in (1, 2, 4, 8, 16, 32, 64):
        for a in (1, 2, 4):
            if w * a < span_le:
                continue
            proto = BlockLoad(fam.elem_bytes, w, 8 if fam.mode == "transpose" and
                              fam.elem_bytes == 8 else 4, _PROTO_SURFACE, array_length=a,
                              vnni=fam.mode == "vnni", transpose=fam.mode == "transpose")
            if not violations(proto, arch):
                out.append((w, a))
    key = (lambda wa: (wa[0] * wa[1], -wa[0])) if wide else \
        (lambda wa: (wa[0] != tile_le, wa[0] * wa[1], -wa[0]))
    return sorted(out, key=key)


#: The most operand elements one sub-group's plan may cover: 2**23 is an 8192 x 8192 A
#: operand split over 8 sub-groups along M. Plan time and memory grow linearly with it
#: (about 35 bytes and 0.6 us per element; ``benchmarks/blockload_scaling.py``), so the limit
#: keeps a plan near 300 MB; it is checked before anything per element is allocated.
PLAN_MAX_ELEMENTS = 1 << 23

_PROTO_SURFACE = Surface(width=1 << 16, height=1 << 16, pitch=1 << 16)


def _height(fam: _Family, rows_needed: int) -> int:
    if fam.mode == "transpose" and fam.elem_bytes == 8:
        return 8
    h = min(next_pow2(rows_needed), fam.max_rows)
    if fam.mode == "vnni":
        h = max(h, 4 // fam.elem_bytes)
    return h


def _make_load(fam: _Family, x_t: int, y: int, rows: int, cols: int, t: int, tile_w: int,
               surface: Surface, arch: IntelArch, wide: bool) -> BlockLoad | None:
    e = fam.elem_bytes
    span_le = -(-cols * t // e)
    tile_le = max(1, tile_w * t // e)
    choices = _widths(fam, span_le, tile_le, arch, wide)
    if not choices:
        return None
    w, a = choices[0]
    return BlockLoad(e, w, _height(fam, rows), surface, x_t * t // e, y, a,
                     fam.mode == "vnni", fam.mode == "transpose")


def _greedy(values: np.ndarray, length: int, align: int = 1) -> list[tuple[int, int]]:
    """Cover sorted ``values`` by ``[start, start + length)`` windows, ``start`` aligned."""
    out, i = [], 0
    while i < values.size:
        start = int(values[i]) - int(values[i]) % align
        j = int(np.searchsorted(values, start + length, side="left"))
        out.append((start, int(values[j - 1])))
        i = j
    return out


def _shuffle(loads: Sequence[BlockLoad], needed: Needed, t: int) -> ShuffleTable | None:
    table = delivery_table(loads, needed, t)            # int32, built load by load
    if (table[..., 0] < 0).any():
        return None
    table.flags.writeable = False
    return ShuffleTable(table)


@dataclass(frozen=True)
class _Request:
    layout: LinearLayout
    dtype: str
    op_idx: int
    inst_shape: tuple
    transpose: bool
    arch: IntelArch
    surface: Surface
    warp: int
    needed: Needed
    origin: tuple = (0, 0)

    @property
    def t(self) -> int:
        return DTYPE_BYTES[self.dtype]

    @property
    def tile_mem(self) -> tuple[int, int]:
        return tuple(self.inst_shape[::-1]) if self.transpose else tuple(self.inst_shape)


def _check_plan_size(layout: LinearLayout) -> None:
    ins = layout.in_dims
    per_subgroup = ins.get("register", 1) * ins.get("lane", 1)
    if per_subgroup > PLAN_MAX_ELEMENTS:
        raise LayoutError(f"a block-load plan covers at most {PLAN_MAX_ELEMENTS} = 2^23 elements per "
                          f"sub-group; this operand gives each sub-group {per_subgroup}")


def _needed_of(layout: LinearLayout, arch: Any, transpose: Any, warp: int,
               origin: Any = (0, 0)) -> Needed:
    """What one sub-group must receive, after the checks every plan shares: a known
    architecture, a boolean ``transpose``, a plannable size and 16-lane sub-groups; in surface
    coordinates (the operand placed at ``origin = (x0, y0)``)."""
    x0, y0 = require_origin(origin)
    if arch not in ARCHS:
        raise LayoutError(f"unknown architecture {arch!r} (known: {', '.join(ARCHS)})")
    if not isinstance(transpose, bool):
        raise LayoutError(f"transpose must be true or false, got {transpose!r}")
    _check_plan_size(layout)
    needed = Needed.from_layout(layout, warp, transpose)
    if needed.lanes != 16:
        raise LayoutError(f"2D block loads serve 16-lane sub-groups; the layout has "
                          f"{needed.lanes} lanes (threadsPerWarp must multiply to 16)")
    return needed.placed(x0, y0)


def _placement(base_address: Any, origin: Any, surface: Any, t: int) -> tuple:
    """``(origin, surface base or None)``: ``base_address`` (the operand's first byte) gives the
    64-byte aligned surface base and adds ``(base_address % 64) / t`` to ``origin``'s x."""
    if base_address is None:
        return require_origin(origin), None
    base, origin = placement(base_address, t, origin)
    if surface is not None and isinstance(surface, Surface) and surface.base != base:
        raise LayoutError(f"base address {base_address:#x} puts the surface at {base:#x}, but "
                          f"the given surface starts at {surface.base:#x}")
    return origin, base


def _surface_for(needed: Needed, surface: Any, base: int | None, t: int) -> Surface:
    if surface is None:
        s = default_surface(needed.shape, t)
        return s if base is None else Surface(s.width, s.height, s.pitch, base)
    if not isinstance(surface, Surface):
        raise LayoutError(f"surface must be a Surface, got {surface!r}")
    return surface


def _request(layout: LinearLayout, dtype: str, op_idx: int, inst_shape, transpose: bool,
             arch: IntelArch, surface: Surface | None, warp: int, origin=(0, 0),
             base_address: int | None = None) -> _Request:
    dtype = _dtype(dtype)
    if op_idx not in (0, 1) or isinstance(op_idx, bool):
        raise LayoutError(f"op_idx must be 0 (A) or 1 (B), got {op_idx!r}")
    t = DTYPE_BYTES[dtype]
    origin, base = _placement(base_address, origin, surface, t)
    needed = _needed_of(layout, arch, transpose, warp, origin)
    inst = _inst_default(dtype, op_idx) if inst_shape is None else _pair(list(inst_shape),
                                                                        "inst_shape")
    surface = _surface_for(needed, surface, base, t)
    probe = BlockLoad(4, 1, 1, surface)
    bad = [v for v in violations(probe, arch) if v.limit.startswith("surface")]
    if bad:
        raise LayoutError(f"no load can use this surface: {bad[0].message}")
    return _Request(layout, dtype, op_idx, inst, transpose, arch, surface, warp, needed, origin)


def _product_plans(req: _Request) -> list[tuple]:
    """The first valid (loads, shuffle) pair, in a list, among greedy row x column ranges of
    each family taken fewest loads first (ties in family order); ``[]`` when none is valid.
    Only one shuffle is built per valid candidate tried, and none kept but the answer's
    (memory). The chosen one is proved in :func:`_finish`."""
    needed, t = req.needed, req.t
    rows = needed.rows_read()
    out = []
    for fam in _families(t, req.op_idx, req.transpose):
        align = max(4, fam.elem_bytes) // t
        bands = _greedy(rows, fam.max_rows)
        cols = needed.columns_by_band(bands)
        for wide in (False, True):
            loads = _range_loads(req, fam, bands, cols, align, wide)
            if loads:
                out.append(loads)
    for loads in sorted(out, key=len):
        if any(violations(ld, req.arch) for ld in loads):
            continue
        sh = _shuffle(loads, needed, t)
        if sh is not None:
            return [(tuple(loads), sh)]
    return []


def _range_loads(req: _Request, fam: _Family, bands: list, cols: list, align: int,
                 wide: bool) -> list[BlockLoad]:
    """Greedy column ranges of each row band (``cols``: the band's needed columns, sorted)."""
    loads = []
    for (y0, ylast), band_cols in zip(bands, cols):
        for x0, xlast in _greedy(band_cols, fam.max_cols, align):
            ld = _make_load(fam, x0, y0, ylast - y0 + 1, xlast - x0 + 1, req.t,
                            req.tile_mem[1], req.surface, req.arch, wide)
            if ld is None:
                return []
            loads.append(ld)
    return loads


def _tile_plan(req: _Request) -> tuple | None:
    """One load per DPAS instruction tile: the fallback when no range plan is valid."""
    needed, t = req.needed, req.t
    th, tw = req.tile_mem
    coords = needed.coords.reshape(-1, 2)
    o = np.array(req.needed.origin)
    origins = np.unique((coords - o) // np.array([th, tw]), axis=0) * np.array([th, tw]) + o
    for fam in _families(t, req.op_idx, req.transpose):
        if th > fam.max_rows or tw > fam.max_cols:
            continue
        loads = [_make_load(fam, int(x), int(y), th, tw, t, tw, req.surface, req.arch, False)
                 for y, x in origins]
        if any(ld is None for ld in loads):
            continue
        sh = _shuffle(loads, needed, t)
        if sh is not None and not any(violations(ld, req.arch) for ld in loads):
            return tuple(loads), sh
    return None


def _cover_plan(req: _Request, max_candidates: int):
    """Greedy set cover over every valid load (:func:`candidate_loads`): the fallback for
    operands no range or tile plan feeds. Returns ((loads, shuffle) or None, candidates)."""
    cands = candidate_loads(req.needed, req.t, req.surface, req.arch, max_candidates)
    sets, loads, _ = cands
    if sets is None:
        return None, cands
    full = (1 << req.needed.count) - 1
    covered, chosen = 0, []
    while covered != full:
        gain = [bin(m & ~covered).count("1") for m in sets]
        i = int(np.argmax(gain))
        if gain[i] == 0:
            return None, cands
        chosen.append(loads[i])
        covered |= sets[i]
    sh = _shuffle(chosen, req.needed, req.t)
    return ((tuple(chosen), sh) if sh is not None else None), cands


def _plan_verdict(correct: Verdict, minimal: Verdict) -> Verdict:
    """A plan's verdict: its correctness first (a wrong plan is its counterexample), then
    ``proved`` only when minimality is proved too, else ``unknown`` saying why."""
    if not correct.proved:
        return correct
    if minimal.proved:
        return Verdict.holds(f"{correct.reason}; {minimal.reason}", method=minimal.method,
                             correctness=correct.method)
    return Verdict.unknown(f"{correct.reason}; but {minimal.reason}", method=minimal.method,
                           correctness=correct.method)


def _finish(req: _Request, loads, shuffle, algorithm: str, bound: Bound, minimal: Verdict,
            iterations: tuple = ()) -> Plan:
    correct = check_plan(loads, shuffle, req.needed, req.t, req.arch, req.surface)
    origin = req.needed.operand(*req.needed.coords[0, 0])
    verdict = _plan_verdict(correct, minimal)
    return Plan(tuple(loads), _kept_shuffle(shuffle), req.dtype, req.op_idx,
                (req.layout.out_dim_size("dim0"), req.layout.out_dim_size("dim1")),
                tuple(req.inst_shape), req.transpose, req.arch, req.warp, origin,
                bound.value, minimal.proved, verdict, algorithm, bound.argument, iterations,
                req.origin)


def _bound(req: _Request, n: int) -> Bound:
    """The counting bound; the sharper (exact-correlation) one only when the cheap one
    does not already reach ``n``."""
    bound = lower_bound(req.needed, req.t, req.arch, exact=False)
    if bound.value < n:
        bound = lower_bound(req.needed, req.t, req.arch, exact=True)
    return bound


def _minimality(req: _Request, n: int, bound: Bound, search: bool, max_candidates: int,
                pool=None) -> tuple[Verdict, Search | None]:
    if n <= bound.value:
        return Verdict.holds(f"no valid plan uses fewer loads: {bound.argument}",
                             method="counting"), None
    if not search:
        return Verdict.unknown(f"the counting bound is {bound.value} < {n} loads and no "
                               "search was run", method="counting"), None
    res = search_fewer(req.needed, req.t, n - 1, req.surface, req.arch,
                       max_candidates=max_candidates, candidates=pool)
    if res.status == "none":
        return Verdict.holds(f"no valid plan uses fewer than {n} loads: {res.reason}",
                             method="exhaustive"), res
    if res.status == "found":
        return Verdict.unknown(f"a plan with {len(res.loads)} loads exists", method="exhaustive"), res
    return Verdict.unknown(f"the counting bound is {bound.value} < {n} loads and the "
                           f"exhaustive search gave up ({res.reason})", method="exhaustive"), res


def plan_minimal(layout: LinearLayout, *, dtype: str, op_idx: int, inst_shape=None,
                 transpose: bool = False, arch: IntelArch = "xe2", surface: Surface | None = None,
                 warp: int = 0, search: bool = True, max_candidates: int = 200_000,
                 origin=(0, 0), base_address: int | None = None) -> Plan:
    """The plan with the fewest loads for sub-group ``warp``, with its minimality proof.

    ``layout`` is the DPAS operand's linear layout (in dims register, lane, warp);
    ``inst_shape`` one DPAS instruction's tile of it (default: repeatCount 8,
    executionSize 16). ``transpose``: memory holds the operand transposed. ``origin``:
    the operand sits at ``(x0, y0)`` of the surface (its element ``(r, c)`` is surface
    element ``(y0 + r, x0 + c)``; the default surface then covers it from ``(0, 0)``).
    ``base_address``: the operand's first byte; the surface starts at ``base_address & ~63``
    (64-byte aligned [S, O, T]) and ``(base_address % 64) / elem_bytes`` is added to ``x0``.

    >>> from verilayout.hw.intel.dpas import Dpas
    >>> d = Dpas(8, 8, 16, 2, 16, (8, 4), (4, 2))
    >>> p = plan_minimal(d.layout((32, 256), 1), dtype="f16", op_idx=1, transpose=True)
    >>> len(p.loads), p.verdict.status, p.verdict.method
    (4, 'proved', 'counting')
    """
    req = _request(layout, dtype, op_idx, inst_shape, transpose, arch, surface, warp, origin,
                   base_address)
    cands = _product_plans(req)
    pool = None
    if not cands:
        tile = _tile_plan(req)
        if tile is None:
            tile, pool = _cover_plan(req, max_candidates)
        if tile is None:
            raise LayoutError(
                "no block-load plan found: no load family puts this operand's elements into "
                "the lanes DPAS reads them from, and covering it load by load needs more than "
                f"{max_candidates} candidate positions")
        cands = [tile]
    loads, shuffle = min(cands, key=lambda c: len(c[0]))
    bound = _bound(req, len(loads))
    while True:
        minimal, res = _minimality(req, len(loads), bound, search, max_candidates, pool)
        if res is None or res.status != "found":
            break
        found = tuple(res.loads)
        loads, shuffle = found, _shuffle(found, req.needed, req.t)
    return _finish(req, loads, shuffle, "minimal", bound, minimal)


def plan_baseline(layout: LinearLayout, *, dtype: str, op_idx: int, inst_shape=None,
                  transpose: bool = False, arch: IntelArch = "xe2", surface: Surface | None = None,
                  warp: int = 0, origin=(0, 0), base_address: int | None = None) -> Plan:
    """The plan the algorithm of the project's Intel DPAS seed (002) builds.

    Start with one DPAS instruction's tile; take the operand layout's further
    register bases in order: while a basis doubles the block along one side and
    the doubled block is still one valid load, it becomes an *iteration*; the
    first one that does not, and all after it, become *loads*. B uses VNNI loads,
    A plain loads, a transposed operand d32 transposed loads (as the seed does).

    >>> from verilayout.hw.intel.dpas import Dpas
    >>> d = Dpas(8, 8, 16, 2, 16, (8, 4), (4, 2))
    >>> p = plan_baseline(d.layout((32, 256), 1), dtype="f16", op_idx=1)
    >>> [ld.describe() for ld in p.loads]
    ['16b 32r16x2c vnni at (x=0, y=0)', '16b 32r16x2c vnni at (x=128, y=0)']
    """
    req = _request(layout, dtype, op_idx, inst_shape, transpose, arch, surface, warp, origin,
                   base_address)
    t, fam = req.t, _families(req.t, op_idx, transpose)[0]
    th, tw = h, w = req.tile_mem
    n_tile_regs = (th * tw) // req.needed.lanes
    reg_bases = [b[::-1] if transpose else b for b in layout.bases["register"]]
    k = log2(n_tile_regs)
    iterations, load_bases, growing = [], [], True
    for dy, dx in reg_bases[k:]:
        if dy == 0 and dx == 0:
            continue
        if growing and dx == 0 and dy == h and 2 * h <= fam.max_rows:
            h *= 2
            iterations.append((dy, dx))
        elif growing and dy == 0 and dx == w and 2 * w <= fam.max_cols and \
                _widths(fam, -(-2 * w * t // fam.elem_bytes), 1, arch, False):
            w *= 2
            iterations.append((dy, dx))
        else:
            growing = False
            load_bases.append((dy, dx))
    oy, ox = (int(v) for v in req.needed.coords[0, 0])
    loads = []
    for i in range(1 << len(load_bases)):
        y, x = oy, ox
        for b, (dy, dx) in enumerate(load_bases):
            if i >> b & 1:
                y, x = y + dy, x + dx
        ld = _make_load(fam, x, y, h, w, t, tw, req.surface, arch, False)
        if ld is None:
            raise LayoutError(f"the seed's algorithm cannot build a {h}x{w} {fam.mode} load")
        loads.append(ld)
    bound = _bound(req, len(loads))
    shuffle = _shuffle(loads, req.needed, t)
    if shuffle is None:
        shuffle = tuple(tuple((0, -1) for _ in range(req.needed.lanes))
                        for _ in range(req.needed.registers))
    minimal = (Verdict.holds(f"no valid plan uses fewer loads: {bound.argument}",
                             method="counting") if len(loads) <= bound.value else
               Verdict.unknown(f"the counting bound is {bound.value} < {len(loads)} loads",
                               method="counting"))
    return _finish(req, loads, shuffle, "baseline", bound, minimal, tuple(iterations))


# ----------------------------------------------------------------------------
# any distributed layout of a rank-2 tensor (#ttg.blocked, #ttg.linear, slices, ...)
# ----------------------------------------------------------------------------

@dataclass(frozen=True)
class _Tiling:
    """Loads of one shape on the grid through ``(y0, x0)`` (tensor elements), and for each
    needed pair the grid tile that serves it (``-1``: none)."""

    shape: Shape
    y0: int
    x0: int
    tiles: np.ndarray


def _pairs(needed: Needed) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct needed ``(lane, row, col)`` pairs, row-major (row, col, lane) order."""
    keys = needed.pair_keys()
    rows, cols = needed.shape
    lane, rc = np.divmod(keys, rows * cols)
    row, col = np.divmod(rc, cols)
    order = np.lexsort((lane, col, row))
    return lane[order], row[order], col[order]


def _best_tiling(shapes, lane, row, col, todo: np.ndarray, t: int,
                 inside: bool, negative: bool = True) -> _Tiling | None:
    """The tiling, among every shape on every grid through a cell that gives the first pair
    still to do to its lane, that serves the most pairs still to do per load (ties: more
    pairs, with ``inside`` loads reaching least above or left of the tensor, fewer register
    bytes, loads of the tensor's element size, plain loads). ``negative=False``: only the
    grid's loads that start at ``x, y >= 0`` count (the one through the first pair among
    them)."""
    i0 = int(np.argmax(todo))
    l0, r0, c0 = int(lane[i0]), int(row[i0]), int(col[i0])
    L, R, C = lane[todo], row[todo], col[todo]
    best, best_key = None, None
    for s in shapes:
        h, w = s.box
        dys, dxs = np.nonzero(s.lanes == l0)
        y0, x0 = r0 - dys, c0 - dxs
        ok = x0 % s.x_align == 0
        if not negative:
            ok &= (y0 >= 0) & (x0 >= 0)
        if not ok.any():
            continue
        y0, x0 = y0[ok][:, None], x0[ok][:, None]
        ty, dy = np.divmod(R[None, :] - y0, h)
        tx, dx = np.divmod(C[None, :] - x0, w)
        served = s.lanes[dy, dx] == L[None, :]
        if not negative:
            served &= (y0 + ty * h >= 0) & (x0 + tx * w >= 0)
        tile = np.where(served, ty * (1 << 24) + tx, np.iinfo(np.int64).max)
        srt = np.sort(tile, axis=1)
        n_served = served.sum(axis=1)
        n_tiles = ((srt[:, 1:] != srt[:, :-1]) & (srt[:, 1:] != np.iinfo(np.int64).max)).sum(
            axis=1) + (n_served > 0)
        rate = n_served / np.maximum(n_tiles, 1)
        big = 1 << 40
        low_y = np.minimum(np.where(served, ty, big).min(axis=1) * h + y0[:, 0], 0)
        low_x = np.minimum(np.where(served, tx, big).min(axis=1) * w + x0[:, 0], 0)
        before = -(low_y + low_x) if inside else np.zeros_like(low_y)  # reach above/left
        k = int(np.lexsort((before, -n_served, -rate))[0])
        key = (-float(rate[k]), -int(n_served[k]), int(before[k]), s.load.register_bytes,
               s.load.elem_bytes != t, s.load.mode != "plain")
        if n_served[k] > 0 and (best_key is None or key < best_key):
            best_key = key
            full_ty, _ = np.divmod(row - y0[k, 0], h)
            full_tx, _ = np.divmod(col - x0[k, 0], w)
            dy_all = row - y0[k, 0] - full_ty * h
            dx_all = col - x0[k, 0] - full_tx * w
            hit = s.lanes[dy_all, dx_all] == lane
            if not negative:
                hit &= (y0[k, 0] + full_ty * h >= 0) & (x0[k, 0] + full_tx * w >= 0)
            tiles = np.where(hit, full_ty * (1 << 24) + full_tx, -1)
            best = _Tiling(s, int(y0[k, 0]), int(x0[k, 0]), tiles)
    return best


def _tiling_loads(needed: Needed, t: int, surface: Surface, arch: IntelArch,
                  negative: bool = True) -> list[BlockLoad]:
    """Greedy cover by tilings: take the first pair no load serves yet, and the tiling
    (shape x grid through it) that serves the most open pairs per load; add its loads that
    serve an open pair; repeat. Loads every other load makes redundant are then dropped and
    plain/VNNI loads shortened to the rows they serve. Run twice, with and without the
    preference for loads inside the tensor; the fewer loads win (ties: the first)."""
    lane, row, col = _pairs(needed)
    first = _greedy_tilings(needed, t, surface, arch, lane, row, col, True, negative)
    if len(first) == 1 or _reaches_bound(needed, t, arch, len(first)):
        return first
    second = _greedy_tilings(needed, t, surface, arch, lane, row, col, False, negative)
    return second if len(second) < len(first) else first


def _reaches_bound(needed: Needed, t: int, arch: IntelArch, n: int) -> bool:
    return lower_bound(needed, t, arch, exact=False).value >= n


def _greedy_tilings(needed: Needed, t: int, surface: Surface, arch: IntelArch, lane, row, col,
                    inside: bool, negative: bool = True) -> list[BlockLoad]:
    shapes = load_shapes(t, arch)
    todo = np.ones(lane.size, dtype=bool)
    chosen: list[tuple[BlockLoad, np.ndarray]] = []
    while todo.any():
        tl = _best_tiling(shapes, lane, row, col, todo, t, inside, negative)
        if tl is None:
            i = int(np.argmax(todo))
            raise LayoutError(f"no valid 2D block load puts element ({int(row[i])}, "
                              f"{int(col[i])}) into lane {int(lane[i])}")
        h, w = tl.shape.box
        open_tiles = np.unique(tl.tiles[todo & (tl.tiles >= 0)])
        for tid in open_tiles.tolist():
            ty, tx = divmod(tid + (1 << 23), 1 << 24)
            ty, tx = ty, tx - (1 << 23)
            y, x = tl.y0 + ty * h, tl.x0 + tx * w
            p = tl.shape.load
            ld = BlockLoad(p.elem_bytes, p.width, p.height, surface, x * t // p.elem_bytes, y,
                           p.array_length, p.vnni, p.transpose)
            mine = tl.tiles == tid
            chosen.append((ld, mine))
            todo &= ~mine
    return _prune(chosen, lane, row, col, t, needed.shape, arch)


def _prune(chosen, lane, row, col, t: int, shape, arch: IntelArch) -> list[BlockLoad]:
    """Drop loads whose pairs all others serve (smallest first); shorten plain/VNNI loads to
    the rows of the pairs they alone serve, where the shorter load still delivers them."""
    count = np.zeros(lane.size, dtype=np.int64)
    for _, m in chosen:
        count += m
    keep = []
    for ld, m in sorted(chosen, key=lambda c: int(c[1].sum())):
        if (count[m] >= 2).all():
            count -= m
        else:
            keep.append((ld, m))
    keep.sort(key=lambda c: (c[0].y, c[0].x))
    owner = np.full(lane.size, -1, dtype=np.int64)
    for i, (_, m) in enumerate(keep):
        owner[(owner < 0) & m] = i
    out = []
    for i, (ld, _) in enumerate(keep):
        mine = owner == i
        out.append(_shorten(ld, lane[mine], row[mine], col[mine], t, shape, arch) if mine.any()
                   else ld)
    return out


def _shorten(ld: BlockLoad, lane, row, col, t: int, shape, arch: IntelArch) -> BlockLoad:
    if ld.transpose:
        return ld
    k = 4 // ld.elem_bytes if ld.vnni else 1
    h = -(-(int(row.max()) - ld.y + 1) // k) * k
    h = max(h, VNNI_MIN_HEIGHT[ld.elem_bytes] if ld.vnni else 1)
    if h >= ld.height:
        return ld
    short = BlockLoad(ld.elem_bytes, ld.width, h, ld.surface, ld.x, ld.y, ld.array_length,
                      ld.vnni, ld.transpose)
    keys = (lane * shape[0] + row) * shape[1] + col
    found, _, _ = lookup(keys, delivered_arrays([short], t, shape))
    return short if found.all() and not violations(short, arch) else ld


def _tensor_layout(layout: Any, shape, dtype) -> tuple[LinearLayout, str]:
    """A distributed layout of a rank-2 tensor and its element type: a :class:`TensorLayout` read
    at the door (:func:`verilayout.frontends.shared_text.load_block_layout`; its own shape and
    dtype), or a LinearLayout with ``dtype=``."""
    shape = plain_ints(shape)
    if isinstance(layout, TensorLayout):
        lay, shape, dtype = layout.layout, layout.shape, layout.dtype
    elif isinstance(layout, LinearLayout):
        if dtype is None:
            raise LayoutError("a LinearLayout needs op_idx= (0 A, 1 B; none for a tensor that is "
                              "not a DPAS operand) and dtype=")
        lay = layout
    else:
        raise LayoutError(_not_read(layout))
    if "lane" not in lay.in_dims:
        raise LayoutError("block-load plans fill the registers of a distributed layout (in dims "
                          "register, lane, warp); this layout is not one")
    have = [lay.out_dim_size(n) for n in lay.out_dim_names]
    if shape is not None and list(shape) != have:
        raise LayoutError(f"shape {list(shape)} differs from the layout's shape {have} (out dims "
                          f"{', '.join(lay.out_dim_names)})")
    return lay, _tensor_dtype(dtype)


def _not_read(layout: Any) -> str:
    """The message for a layout the planner cannot take (text is read at the door)."""
    if isinstance(layout, str):
        return ("block-load plans take parsed layouts: read the text at the door "
                "(verilayout.frontends.shared_text.load_block_layout)")
    return f"expected MLIR text or a LinearLayout, got {type(layout).__name__}"


def _is_dpas_operand(layout: Any, op_idx) -> bool:
    if isinstance(layout, LinearLayout):
        return op_idx is not None
    return not isinstance(layout, TensorLayout)  # an Operand, or bad input _operand names


def _operand(layout: Any, *, shape, dtype, op_idx, inst_shape) -> Operand:
    """A DPAS operand: one read at the door (an :class:`Operand`), or a LinearLayout with
    ``op_idx`` and ``dtype``."""
    if isinstance(layout, Operand):
        return layout
    if isinstance(layout, LinearLayout):
        return layout_operand(layout, shape=plain_ints(shape), dtype=dtype, op_idx=plain_ints(op_idx),
                              inst_shape=plain_ints(inst_shape))
    raise LayoutError(_not_read(layout))


def _tensor_minimality(needed: Needed, t: int, surface: Surface, arch: IntelArch, loads: list,
                       shuffle, search: bool, kw: dict) -> tuple:
    """``(loads, shuffle, bound, minimal)``: the counting bound (exact when the quick one falls
    short), then, if it does not settle minimality and ``search``, the exhaustive search, which
    may find a smaller plan (kept, and searched again below it)."""
    bound = lower_bound(needed, t, arch, exact=False)
    if bound.value < len(loads):
        bound = lower_bound(needed, t, arch, exact=True)
    n = len(loads)
    if n <= bound.value:
        return loads, shuffle, bound, Verdict.holds(
            f"no valid plan uses fewer loads: {bound.argument}", method="counting")
    if not search:
        return loads, shuffle, bound, Verdict.unknown(
            f"the counting bound is {bound.value} < {n} loads and no search was run",
            method="counting")
    res = search_fewer(needed, t, n - 1, surface, arch, **kw)
    if res.status == "found":
        loads = list(res.loads)
        shuffle = _shuffle(loads, needed, t)
        n = len(loads)
        res = search_fewer(needed, t, n - 1, surface, arch, **kw)
    if res.status == "none":
        minimal = Verdict.holds(f"no valid plan uses fewer than {n} loads: {res.reason}",
                                method="exhaustive")
    else:
        minimal = Verdict.unknown(f"the counting bound is {bound.value} < {n} loads and the "
                                  f"exhaustive search did not settle it ({res.reason})",
                                  method="exhaustive")
    return loads, shuffle, bound, minimal


def plan_tensor(layout: Any, *, dtype: str | None = None, shape: Sequence[int] | None = None,
                transpose: bool = False, arch: IntelArch = "xe2", surface: Surface | None = None,
                warp: int = 0, search: bool = True, max_candidates: int = 200_000,
                negative_offsets: bool = True, origin=(0, 0),
                base_address: int | None = None) -> Plan:
    """The fewest 2D block loads that put every element each work-item of sub-group ``warp``
    holds in ``layout`` (a :class:`TensorLayout` read at the door, or a LinearLayout with ``dtype``:
    any distributed layout of a rank-2 tensor, ``#ttg.blocked``,
    ``#ttg.linear``, ``#ttig.subgroup_2d_block``, slices, ...) into that work-item, with the
    in-lane shuffle from loaded data to the layout's registers, its proof, and the proof (or
    not) that no valid plan has fewer loads.

    Law: every load respects every limit of :mod:`verilayout.hw.intel.block_io`, and
    ``shuffle[r][l]`` names an element of a load's data in lane ``l`` equal to
    ``layout(register=r, lane=l, warp=warp)`` (memory-view coordinates: transposed when
    ``transpose``, i.e. memory holds the tensor column-major). Every load mode may serve:
    plain loads of the element size or wider (a lane receives 2, 4 or 8 bytes at a time),
    VNNI, and d32/d64 transposed loads. Where no valid load can put some element into the
    lane that holds it, a ``LayoutError`` names the element, the lane and why. Loads may
    start above or left of the tensor (negative offsets: the rows and columns outside the
    surface read as zero [S]; an inference that negative offsets are legal from the signed
    ``int2`` coordinate of the built-ins and the zero fill); ``negative_offsets=False`` keeps
    every load at ``x, y >= 0``, and then some elements near the top and left edges reach only
    some lanes (the error names them). ``origin = (x0, y0)``: the tensor sits there in the
    surface (element ``(r, c)`` at surface ``(y0 + r, x0 + c)``); offsets are the surface's.
    ``base_address``: the tensor's first byte (as :func:`plan_minimal`).

    >>> B = ("tensor<64x128xf16, #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [16, 1], "
    ...      "warpsPerCTA = [4, 1], order = [1, 0]}>>")
    >>> from verilayout.frontends.shared_text import load_block_layout      # the door: text read there
    >>> p = plan_tensor(load_block_layout(B)); len(p.loads), p.loads[0].describe(), p.verdict.status
    (8, '32b 16r8x1c transpose at (x=0, y=0)', 'proved')
    """
    lay, dtype = _tensor_layout(layout, shape, dtype)
    t = bytes_of(dtype)
    origin, base = _placement(base_address, origin, surface, t)
    needed = _needed_of(lay, arch, transpose, warp, origin)
    surface = _surface_for(needed, surface, base, t)
    bad = [v for v in violations(BlockLoad(4, 1, 1, surface), arch) if v.limit.startswith("surface")]
    if bad:
        raise LayoutError(f"no load can use this surface: {bad[0].message}")
    if not isinstance(negative_offsets, bool):
        raise LayoutError(f"negative_offsets must be true or false, got {negative_offsets!r}")
    miss = unreachable(needed, t, surface, arch, negative_offsets=negative_offsets)
    if miss is not None:
        raise LayoutError(miss.reason)
    loads = _tiling_loads(needed, t, surface, arch, negative_offsets)
    shuffle = _shuffle(loads, needed, t)
    if shuffle is None:  # pragma: no cover - the tiling serves every pair by construction
        raise LayoutError("internal: the tiling plan misses an element")
    loads, shuffle, bound, minimal = _tensor_minimality(
        needed, t, surface, arch, loads, shuffle, search,
        dict(max_candidates=max_candidates, negative_offsets=negative_offsets))
    correct = check_plan(loads, shuffle, needed, t, arch, surface, consumer="layout")
    verdict = _plan_verdict(correct, minimal)
    return Plan(tuple(loads), _kept_shuffle(shuffle), dtype, None,
                (lay.out_dim_size("dim0"), lay.out_dim_size("dim1")), (), transpose, arch, warp,
                needed.operand(*needed.coords[0, 0]), bound.value, minimal.proved, verdict,
                "minimal", bound.argument, origin=origin)


# ----- an operand read at the door (frontends.shared_text.load_block_layout) or a layout ----------

def plan_operand(layout: Any, *, dtype: str | None = None, transpose: bool = False, arch: IntelArch = "xe2",
         shape: Sequence[int] | None = None, op_idx: int | None = None,
         inst_shape: Sequence[int] | None = None, surface: Surface | None = None,
         warp: int = 0, baseline: bool = False, search: bool = True,
         negative_offsets: bool = True, origin=(0, 0), base_address: int | None = None) -> Plan:
    """The plan with the fewest loads per sub-group (``baseline=True``: the seed's plan),
    with a lower-bound proof that no valid plan uses fewer. A DPAS operand (an ``Operand`` read
    at the door from a ``#ttg.dot_op`` with a ``#ttig.dpas`` parent, or a LinearLayout with
    ``op_idx=``) is planned for the DPAS instructions; any other distributed layout (a
    ``TensorLayout``, or a LinearLayout without ``op_idx``) by :func:`plan_tensor`. ``origin = (x0, y0)``
    and ``base_address`` place the operand inside its surface (:func:`plan_minimal`).

    >>> B = ("tensor<32x256xf16, #ttg.dot_op<{opIdx = 1, parent = #ttig.dpas<{repeatCount = 8, "
    ...      "systolicDepth = 8, executionSize = 16, opsPerChan = 2, threadsPerWarp = 16, "
    ...      "warpsPerCTA = [8, 4], repCluster = [4, 2]}>, kWidth = 2}>>")
    >>> from verilayout.frontends.shared_text import load_block_layout      # the door: text read there
    >>> B = load_block_layout(B)
    >>> len(plan_operand(B).loads), len(plan_operand(B, transpose=True).loads)
    (2, 4)

    A rank-3 layout (a leading batch dim) gives a :class:`BatchedPlan`: its rank-2 slice planned
    as above, issued once per batch index the sub-group holds.
    """
    parts = _batched_parts(layout, shape)
    if parts is not None:
        layout3, as_slice = parts
        _check_plan_size(layout3)               # before enumerating its registers
        s = batch_slices(layout3, warp)
        p = plan_operand(as_slice(s.slice), dtype=dtype, transpose=transpose, arch=arch,
                         shape=_batch_shape(layout3, shape), op_idx=op_idx, inst_shape=inst_shape,
                         surface=surface, warp=warp, baseline=baseline, search=search,
                         negative_offsets=negative_offsets, origin=origin, base_address=base_address)
        return BatchedPlan(p, s.batches, s.registers, s.batch_size)
    if not _is_dpas_operand(layout, op_idx):
        if op_idx is not None or inst_shape is not None:
            raise LayoutError("op_idx and inst_shape apply to DPAS operands (#ttg.dot_op with a "
                              "#ttig.dpas parent); this layout is not one")
        if baseline:
            raise LayoutError("the seed's algorithm (baseline) builds plans for DPAS operands "
                              "only; plan this layout without it")
        return plan_tensor(layout, dtype=dtype, shape=shape, transpose=transpose, arch=arch,
                           surface=surface, warp=warp, search=search,
                           negative_offsets=negative_offsets, origin=origin,
                           base_address=base_address)
    if negative_offsets is not True:
        raise LayoutError("negative_offsets=False applies to tensor plans; DPAS operand plans "
                          "take every position the candidates give")
    op = _operand(layout, shape=shape, dtype=dtype, op_idx=op_idx, inst_shape=inst_shape)
    kw = dict(dtype=op.dtype, op_idx=op.op_idx, inst_shape=op.inst_shape, transpose=transpose,
              arch=arch, surface=surface, warp=warp, origin=origin, base_address=base_address)
    if baseline:
        return plan_baseline(op.layout, **kw)
    return plan_minimal(op.layout, search=search, **kw)


def _warp_list(warps: Any, n_warps: int) -> list[int]:
    """``warps`` (a warp, a list of them, or ``"all"``) as a list of warps in ``0..n_warps-1``."""
    warps = plain_ints(warps)
    if isinstance(warps, str) and warps == "all":
        warps = list(range(n_warps))
    elif isinstance(warps, int) and not isinstance(warps, bool):
        warps = [warps]
    if not isinstance(warps, (list, tuple)) or not warps or not all(
            isinstance(w, int) and not isinstance(w, bool) and 0 <= w < n_warps for w in warps):
        raise LayoutError(f"warps={warps!r}: expected a warp in 0..{n_warps - 1}, a list of them, "
                          f"or 'all'")
    return list(warps)


def check_operand_plan(plan: Plan, layout: Any, *, shape: Sequence[int] | None = None,
          warps: Any = 0, surface: Surface | Sequence[Surface] | None = None,
          origin: Any = None) -> Verdict:
    """Prove that ``plan`` respects every limit, loads every element each DPAS instruction
    of the sub-group reads, and that its shuffle delivers each to the right register;
    otherwise the counterexample (the broken limit, the missed element, or the register
    that receives the wrong element). ``warps``: a warp, a list, or ``"all"`` (the plan
    is moved to each warp's origin). ``surface``: the operand's storage (or the surfaces
    the user declares); by default the first load's surface. A load reading any other byte
    is a counterexample naming the load and the byte. ``origin = (x0, y0)``: where the operand
    sits in the storage (default: the plan's ``origin``); away from ``(0, 0)`` a counterexample
    also names the byte the register must hold, the load giving it and the byte it gives. A
    :class:`BatchedPlan` is checked against its rank-3 layout's slices (:func:`_check_batched`).

    >>> A = ("tensor<256x32xf16, #ttg.dot_op<{opIdx = 0, parent = #ttig.dpas<{repeatCount = 8, "
    ...      "systolicDepth = 8, executionSize = 16, opsPerChan = 2, threadsPerWarp = 16, "
    ...      "warpsPerCTA = [8, 4], repCluster = [4, 2]}>, kWidth = 1}>>")
    >>> from verilayout.frontends.shared_text import load_block_layout; A = load_block_layout(A)  # the door
    >>> p = plan_operand(A)
    >>> check_operand_plan(p, A, warps="all").proved
    True
    >>> from dataclasses import replace
    >>> short = replace(p, loads=(replace(p.loads[0], height=16),))
    >>> check_operand_plan(short, A).counterexample
    {'register': 16, 'lane': 0, 'element': [16, 0], 'missed': True, 'warp': 0}
    """
    if isinstance(plan, BatchedPlan):   # a rank-3 tensor's plan, one batch index at a time
        return _check_batched(plan, layout, shape=shape, warps=warps, surface=surface, origin=origin)
    if not isinstance(plan, Plan):
        raise LayoutError(f"expected a Plan, got {type(plan).__name__}")
    if plan.op_idx is None:
        lay, _ = _tensor_layout(layout, shape, plan.dtype)
        consumer = "layout"
    else:
        op = _operand(layout, shape=shape, dtype=plan.dtype, op_idx=plan.op_idx,
                      inst_shape=plan.inst_shape)
        lay, consumer = op.layout, "DPAS"
    if (lay_shape := [lay.out_dim_size(n) for n in lay.out_dim_names]) != list(plan.shape):
        raise LayoutError(f"the plan is for shape {list(plan.shape)}, the layout has {lay_shape}")
    warps = _warp_list(warps, lay.in_dims.get("warp", 1))
    t = plan.elem_bytes
    if surface is not None and not (isinstance(surface, Surface) or (
            isinstance(surface, (list, tuple)) and surface and all(isinstance(x, Surface) for x in surface))):
        raise LayoutError(f"surface must be a Surface or a list of Surfaces, got {surface!r}")
    storage = surface if surface is not None else (plan.loads[0].surface if plan.loads else None)
    x0, y0 = require_origin(plan.origin if origin is None else origin)
    home = Needed.from_layout(lay, plan.warp, plan.transpose)
    origin = home.coords[0, 0]
    for w in warps:
        need = Needed.from_layout(lay, w, plan.transpose)
        dy, dx = (int(v) for v in need.coords[0, 0] - origin)
        need = need.placed(x0, y0)
        loads = [_moved(ld, dx, dy, t) for ld in plan.loads]
        v = check_plan(loads, plan.shuffle, need, t, plan.arch, storage, consumer=consumer)
        if not v.proved:
            cex = dict(v.counterexample, warp=w)
            return Verdict.fails(cex, f"warp {w}: {v.reason}", method=v.method)
    return Verdict.holds(f"{v.reason}, for warp{'s' if len(warps) != 1 else ''} "
                         f"{', '.join(map(str, warps))}", method="enumeration",
                         warps=list(warps))


def _check_batched(plan: BatchedPlan, layout: Any, *, shape, warps, surface, origin) -> Verdict:
    """:func:`check_operand_plan` of a rank-3 plan: the layout's slices and batch indices are the
    plan's (for its own warp), and the slice plan is right for every warp asked."""
    parts = _batched_parts(layout, shape)
    if parts is None:
        raise LayoutError("the plan is for a rank-3 tensor (a batch dim); the layout is not rank 3")
    layout3, as_slice = parts
    sub = _batch_shape(layout3, shape)
    _check_plan_size(layout3)
    home = batch_slices(layout3, plan.warp)
    have = [home.batch_size] + [home.slice.out_dim_size(n) for n in home.slice.out_dim_names]
    want = [plan.batch_size] + list(plan.plan.shape)
    if have != want:
        raise LayoutError(f"the plan is for shape {want}, the layout has {have}")
    if home.batches != plan.batches:
        return Verdict.fails({"warp": plan.warp, "batches": list(home.batches),
                              "plan_batches": list(plan.batches)},
                             f"warp {plan.warp} holds batch indices {list(home.batches)}; the plan "
                             f"loads {list(plan.batches)}", method="enumeration")
    bad = next((r for r, (a, b) in enumerate(zip(home.registers, plan.registers)) if a != b),
               None if len(home.registers) == len(plan.registers) else min(len(home.registers),
                                                                            len(plan.registers)))
    if bad is not None:
        mine = home.registers[bad] if bad < len(home.registers) else None
        said = plan.registers[bad] if bad < len(plan.registers) else None
        return Verdict.fails({"warp": plan.warp, "register": bad, "layout": mine, "plan": said},
                             f"register {bad}: the layout holds it at (batch, slice register) "
                             f"{mine}, the plan says {said}", method="enumeration")
    warp_list = _warp_list(warps, layout3.in_dims.get("warp", 1))
    v = check_operand_plan(plan.plan, as_slice(home.slice), shape=sub, warps=warp_list,
                           surface=surface, origin=origin)
    if not v.proved:
        return v
    held = {w: list(batch_slices(layout3, w).batches) for w in warp_list}
    return Verdict.holds(f"{v.reason}; each warp's loads issued once per batch index it holds "
                         f"({', '.join(f'warp {w}: {b}' for w, b in held.items())})",
                         method=v.method, warps=warp_list)


def _moved(ld: BlockLoad, dx_t: int, dy: int, t: int) -> BlockLoad:
    if (dx_t * t) % ld.elem_bytes:
        raise LayoutError(f"moving {ld.describe()} by {dx_t} elements is not a whole number "
                          f"of its {8 * ld.elem_bytes}-bit elements")
    return ld.moved(dx_t * t // ld.elem_bytes, dy)
