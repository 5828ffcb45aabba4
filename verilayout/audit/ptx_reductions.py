"""Warp reductions checked per lane: each butterfly chain (``shfl.sync.bfly.b32 d, a, m, 31, -1``, each
followed by the combine op) that Triton emits for a ``tt.reduce`` is run on the 32 lanes against the
reduce operand's linear layout (check ``warp-reduce``); a ``tt.gather``'s data-dependent
``shfl.sync.idx`` is reported.

What Triton emits (``lib/Conversion/TritonGPUToLLVM/ReduceOpToLLVM.cpp``): the region is first applied
within each thread to the registers that share their non-reduced coordinates (``reduceWithinThreads``),
then across the lanes of the warp by one butterfly per lane bit that moves along the reduced axis (none
over a replicated lane bit, as the kernels Triton 3.9 compiles show: tests/test_ptx_reductions.py), each
shuffle followed by the region inlined on (accumulator, shuffled value) (``warpReduce``); the partials
of warps along the axis go through shared memory and are combined by a second butterfly chain on the
loaded values; a one-op integer region over all 32 lanes may use ``redux.sync`` (sm_80+).

Semantics (PTX ISA 9.7.8.6 shfl.sync): with ``c = 31`` and membermask ``0xffffffff`` every lane takes
part and ``.bfly`` makes lane ``l`` read ``a`` of lane ``l ^ m``. So a chain of masks ``m_1 .. m_k`` leaves
in lane ``t`` the combination of ``C_k[t]`` where ``C_0 = I`` and ``C_j[t] = C_{j-1}[t] + C_{j-1}[t ^ m_j]``
(counts over source lanes; ``redux.sync``: every lane once).

Law (``warp-reduce``): let ``L`` be the reduce operand's layout, ``lane(u)`` the XOR of its lane bases
of the set bits of ``u`` and ``key(u)`` that coordinate with the ``axis`` component removed (the
register and warp parts are the same for all lanes of one register, so they cancel). Lane ``t`` must
combine exactly the distinct elements ``{lane(u) : key(u) = key(t)}``, each once: for every element
``e`` of them, ``sum(C_k[t][u] : lane(u) = e) = 1``, and no lane ``u`` with ``key(u) != key(t)`` is counted
(an idempotent one-op region, ``max``/``min``/``and``/``or``, may count an element more than once: ``>= 1``).
For single-bit masks this says: one butterfly per lane bit whose basis is nonzero and moves only along
``axis``; none over a lane bit whose basis is 0 (a replicated lane: its elements would be counted twice)
or moves along another dimension (elements of other rows would mix). It is decided by brute force over
the 32 lanes, a proof for that layout.

Ties, by dataflow: the butterflies form chains (a shuffle's successor is a shuffle whose source the
combine instructions reading the first's result define; shuffles of one step of a multi-operand
region are joined by those instructions); a chain's inputs are traced back through its function's
definitions: an input loaded from shared memory (through moves, or an ``and`` with an immediate) is the
inter-warp stage, checked per thread by :mod:`verilayout.audit.ptx_interwarp` against the reduces of its
width whose region its combine op meets and that may own it (``proved`` only when every one accepts it,
an error only when every one refuses it); a load it finds no first-stage store for keeps the
``unchecked`` reason here. Ownership is dataflow, not the source line (several ``tt.reduce`` ops of one
line share it): Triton shuffles only over the lanes along the axis (``warpReduce``) and goes through
shared memory only for warps along it, so a reduce none of whose lane bases moves along its axis owns
no butterfly or ``redux.sync`` (nor the inter-warp round of shuffled partials), and one with no warp
along its axis owns no inter-warp stage (each filter kept only when it leaves some). The candidates are the ``tt.reduce``
ops with as many 32-bit words per step as the chain has shuffles (one per operand, two for 64-bit
elements); among several whose layouts or regions differ, the tie keeps those whose region the chain's
combine op matches, then those whose operand is defined (through register views) at the source line of
an instruction defining a leaf of the chain's in-thread accumulation tree (traced back through the
combine ops and moves; a leaf that is another chain's shuffle ties to a reduce of a reduce, whose lane
bases are its operand's without the reduced coordinate). The chain is ``proved`` when it meets every
reduce the tie keeps; its errors are reported when the tie keeps one and no reduce of its width would
be met (LLVM merges equal values of different ops, so a source line alone never makes an error), and,
among several of its width, its combine op matches some region; else
it is ``unchecked`` with the reason (as when no reduce has its width): one result at the chain's first
shuffle naming every shuffle's line, successive chains of one reason and mask sequence merged. A ``redux.sync``
whose input is selected per lane against the op's identity and whose result a per-lane ``selp`` takes
(LLVM's segmented reduction) is checked on the lanes that take part and the lanes that take its result
(:mod:`verilayout.audit.ptx_segments`); a form of it that module does not read is ``unchecked``.

Combine: a one-op region must be the PTX op of the shuffled value's first non-move user
(``arith.addf`` -> ``add.f32``, ``arith.maxnumf`` -> ``max.f32``, ``arith.maximumf`` -> ``max.NaN.f32``,
...): another op is an ``error`` at its line. A region of several ops (``argmin``) is accepted when the
first users' op kinds are all the region's (``setp`` for compares, ``selp`` for selects, ...); else the
chain is ``unchecked`` (the region is not modelled).

Verdict per chain: ``proved`` (masks, ``c``, membermask, combine op and width all match); an ``error`` at
the ``shfl`` line naming the lane bit, its basis and what the reduce needs; ``unchecked`` as above.
``tt.gather`` (``gather-shuffle``): every ``shfl.sync.idx`` of a kernel with a ``tt.gather`` whose lane
index is not a function of ``%tid`` (it comes from the gather's index tensor) is ``unchecked`` with that
reason.

>>> required_lanes(((0, 1), (0, 2), (0, 4), (0, 8), (0, 16)), 1)
[1, 2, 4, 8, 16]
>>> lane_counts([16, 8, 4, 2, 1])[3].tolist() == [1] * 32
True
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np

from verilayout.audit.model import Check
from verilayout.audit.ptx_context import PtxContext
from verilayout.audit.ptx_interwarp import Finding, check_stage, converted_input, source_load
from verilayout.audit.ptx_segments import Segment, segment
from verilayout.audit.ptx_shuffles import TagRun
from verilayout.audit.ttgir import layout_shape
from verilayout.errors import LayoutError
from verilayout.frontends.ptx import decode_operand, operand_registers
from verilayout.frontends.triton import attr_to_linear
from verilayout.frontends.ttgir import Module, Op
from verilayout.hw.nvidia.ptx_model import Imm, Instr, Reg, Vec

CHECK = "warp-reduce"
GATHER_CHECK = "gather-shuffle"
#: one-op regions: TTGIR op -> (PTX head, whether ``.NaN`` is required)
_COMBINE = {"arith.addf": ("add", False), "arith.mulf": ("mul", False), "arith.maxnumf": ("max", False),
            "arith.minnumf": ("min", False), "arith.maximumf": ("max", True), "arith.minimumf": ("min", True),
            "arith.addi": ("add", False), "arith.muli": ("mul", False), "arith.maxsi": ("max", False),
            "arith.minsi": ("min", False), "arith.maxui": ("max", False), "arith.minui": ("min", False),
            "arith.andi": ("and", False), "arith.ori": ("or", False), "arith.xori": ("xor", False)}
#: region op -> the PTX heads it may lower to (multi-op regions)
_KINDS = {"arith.cmpf": ("setp",), "arith.cmpi": ("setp",), "arith.select": ("selp", "mov"),
          "arith.andi": ("and",), "arith.ori": ("or",), "arith.xori": ("xor", "not"),
          "arith.extui": ("cvt", "selp"), "arith.extsi": ("cvt",), "arith.trunci": ("cvt",)}
_MOVES = ("mov", "cvt")
_JOIN = ("setp", "selp", "and", "or", "xor", "not", "mov")
_FLOATS = ("f16", "bf16", "f32", "f64")
_BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64}


# ----- the plan: each tt.reduce's lanes and region --------------------------------------------------

@dataclass(frozen=True)
class Reduce:
    """A ``tt.reduce``: its op, axis, operand lane bases and register bases (per input bit, one
    coordinate per dimension), its region's ops (``name``, types) and returned element types."""
    op: Op
    axis: int
    lanes: tuple[tuple[int, ...], ...]
    registers: tuple[tuple[int, ...], ...]
    region: tuple[tuple[str, tuple[str, ...]], ...]
    types: tuple[str, ...]
    source: frozenset = frozenset()
    warps: tuple[tuple[int, ...], ...] = ()

    def __post_init__(self) -> None:
        ops = tuple(n for n, _t in self.region)              # derived once, no fields (eq, repr as before)
        object.__setattr__(self, "_derived", (sum(2 if _BITS.get(t, 32) > 32 else 1 for t in self.types),
                                              _COMBINE.get(ops[0]) if len(ops) == 1 else None,
                                              (self.lanes, self.axis, ops, self.types)))

    @property
    def words(self) -> int:
        """32-bit words shuffled per butterfly step: one per operand, two for a 64-bit one."""
        return self._derived[0]

    @property
    def combine(self) -> tuple[str, bool] | None:
        """The one-op region's PTX head and whether ``.NaN`` is needed (:func:`_expected`)."""
        return self._derived[1]

    @property
    def shape(self) -> tuple:
        """What decides a chain's verdict against it (:func:`_shape`)."""
        return self._derived[2]


def _region(tmod: Module, at: int) -> tuple[list[Op], Op | None]:
    """The ops of the region of the reduce at index ``at`` of ``tmod.ops`` and its ``tt.reduce.return``."""
    body: list[Op] = []
    for op in tmod.ops[at + 1:]:
        if op.name == "tt.reduce.return":
            return body, op
        if op.name == "tt.reduce":
            break
        body.append(op)
    return body, None


def _tensor_type(tmod: Module, value: str, depth: int = 0) -> Any:
    """The tensor type of ``value``: its defining op's, or for a loop-carried value (an ``scf.for``
    result or iter_arg, whose op prints the loop's own types) the yielded value's."""
    typ = tmod.def_type(value)
    t = typ.read() if typ is not None else None
    if getattr(t, "encoding", None) is not None:
        return t
    hit = tmod.carried.get(value)
    if hit is None or depth > 4:
        raise LayoutError(f"no tensor type for {value}")
    loop, i = hit
    return _tensor_type(tmod, loop.yielded[i], depth + 1)


def _operand_type(tmod: Module, at: int) -> Any:
    """The tensor type of the first operand of ``tmod.ops[at]``: as the op prints it, else the type
    of the nearest definition of that name before it (a ``ttg.warp_specialize`` partition is an
    isolated region that may define the same name again: within a region a name is defined before
    its uses, so the nearest earlier definition is this region's), else :func:`_tensor_type`.

    >>> from verilayout.frontends.ttgir import parse_module
    >>> _operand_type(parse_module("module {}"), 0) is None
    True
    """
    if at >= len(tmod.ops):
        return None
    op = tmod.ops[at]
    value = op.operands[0]
    t = op.in_types[0].read() if op.operand_types else None
    if getattr(t, "encoding", None) is not None:
        return t
    for d in reversed(tmod.ops[:at]):
        if value in d.results and d.result_types:
            k = d.results.index(value)
            t = d.out_types[min(k, len(d.out_types) - 1)].read()
            if getattr(t, "encoding", None) is not None:
                return t
            break
    return _tensor_type(tmod, value)


def _bases(tmod: Module, value: str, t: Any = None) -> tuple[tuple, tuple]:
    """(lane bases, register bases) of ``value``'s layout (of type ``t`` when given), 5 lane bases
    (missing ones 0)."""
    return _lane_register_bases(_linear(tmod, value, t))


def _linear(tmod: Module, value: str, t: Any = None) -> Any:
    """The linear layout of ``value`` (of type ``t`` when given)."""
    t = _tensor_type(tmod, value) if t is None else t
    return attr_to_linear(t.encoding, layout_shape(t))


def _lane_register_bases(ll: Any) -> tuple[tuple, tuple]:
    """:func:`_bases` of the linear layout ``ll``."""
    rank = len(ll.out_dims)
    lanes = [tuple(b) for b in ll.bases.get("lane", [])]
    lanes += [(0,) * rank] * (5 - len(lanes))
    return tuple(lanes), tuple(tuple(b) for b in ll.bases.get("register", []))


#: TTGIR ops that move no data in registers (a reduce's operand through them is its source's registers)
_VIEWS = ("tt.trans", "tt.reshape", "ttg.convert_layout", "tt.broadcast", "tt.expand_dims", "tt.join", "tt.split")


def _sources(tmod: Module, value: str, depth: int = 0) -> frozenset:
    """The source lines (``loc``) of the op defining ``value`` and, through register views, of theirs."""
    op = tmod.defs.get(value)
    if op is None or depth > 6:
        return frozenset()
    if op.name == "tt.reduce":
        return frozenset({"<reduce>"})
    own = frozenset({op.loc}) if op.loc else frozenset()
    if op.name not in _VIEWS:
        return own
    return own.union(*(_sources(tmod, v, depth + 1) for v in op.operands))


def _projected(prev: Reduce) -> tuple[tuple, tuple]:
    """The lane and register bases of ``prev``'s result: its operand's without the reduced coordinate
    (Triton's slice layout; a lane whose basis moved only along the axis now holds a replica)."""
    drop = lambda bases: tuple(tuple(x for d, x in enumerate(b) if d != prev.axis) for b in bases)
    return drop(prev.lanes), tuple(b for b in drop(prev.registers) if any(b))


def _nearest_def(tmod: Module, at: int, value: str) -> Op | None:
    """The op defining ``value`` nearest before ``tmod.ops[at]``: a name may be defined again in a
    sibling region (the branches of one ``scf.if``, the partitions of a ``ttg.warp_specialize``), and
    within a region a name is defined before its uses.

    >>> from verilayout.frontends.ttgir import parse_module
    >>> _nearest_def(parse_module("module {}"), 0, "%x") is None
    True
    """
    return next((d for d in reversed(tmod.ops[:at]) if value in d.results), None)


def reduces(tmod: Module) -> list[Reduce | tuple[Op, str]]:
    """Every ``tt.reduce`` of the plan as a :class:`Reduce`, or ``(op, why)`` when its layout or region
    does not read."""
    out: list = []
    for at, op in enumerate(tmod.ops):
        if op.name != "tt.reduce":
            continue
        body, ret = _region(tmod, at)
        src = _nearest_def(tmod, at, op.operands[0])
        prev = next((r for r in out if isinstance(r, Reduce) and r.op is src
                     and r.op.result_types[:1] == op.operand_types[:1]), None)
        try:
            ll = _linear(tmod, op.operands[0], _operand_type(tmod, at)) if prev is None else None
            lanes, regs = _projected(prev) if prev is not None else _lane_register_bases(ll)
            axis = int(op.attributes["axis"])
        except (LayoutError, KeyError, AttributeError, TypeError, ValueError) as e:
            out.append((op, f"the reduce operand's layout does not read ({e})"))
            continue
        types = tuple(t.strip() for t in ret.operand_types) if ret is not None else ()
        warps = tuple(tuple(x for d, x in enumerate(b) if d != prev.axis) for b in prev.warps) if prev is not None \
            else tuple(tuple(b) for b in ll.bases.get("warp", []))         # the operand's layout, read above
        out.append(Reduce(op, axis, lanes, regs, tuple((o.name, o.operand_types) for o in body), types,
                          _sources(tmod, op.operands[0]), warps))
    return out


def required_lanes(lanes: tuple, axis: int) -> list[int]:
    """The butterfly masks Triton needs for a reduce over ``axis``: ``1 << i`` for each lane bit ``i``
    whose basis is nonzero and moves only along ``axis``.

    >>> required_lanes(((0, 1), (0, 0), (1, 0), (0, 2), (0, 4)), 1)
    [1, 8, 16]
    """
    return [1 << i for i, b in enumerate(lanes) if any(b) and all(x == 0 for d, x in enumerate(b) if d != axis)]


def lane_counts(masks: list[int]) -> np.ndarray:
    """``C[t][u]``: how many times lane ``t`` holds lane ``u``'s value after butterflies ``masks``
    (PTX ISA 9.7.8.6: ``.bfly`` reads lane ``t ^ m``); a mask of ``-1`` stands for ``redux.sync``.

    >>> lane_counts([1])[0][:3].tolist()
    [1, 1, 0]
    """
    c = np.eye(32, dtype=np.int64)
    for m in masks:
        c = np.ones((32, 32), dtype=np.int64) if m < 0 else c + c[np.arange(32) ^ (m & 31)]
    return c


@lru_cache(maxsize=1024)
def _fault(masks: tuple, lanes: tuple, axis: int, idempotent: bool) -> str | None:
    """:func:`lane_fault` of the butterflies ``masks``, once per chain shape."""
    return lane_fault(lane_counts(list(masks)), lanes, axis, idempotent)


def lane_fault(counts: np.ndarray, lanes: tuple, axis: int, idempotent: bool = False,
               takers: tuple[bool, ...] | None = None) -> str | None:
    """None when every lane (of ``takers``, when given: the lanes that take the result) combines exactly
    the distinct elements of its non-reduced coordinates, each once (``idempotent``: at least once;
    ``max``, ``min``, ``and``, ``or`` may see one twice) (module law); else the first lane's fault in words.

    >>> lane_fault(lane_counts([1, 2]), ((0, 1), (0, 2), (1, 0), (2, 0), (4, 0)), 1) is None
    True
    """
    bits = (np.arange(32)[:, None] >> np.arange(len(lanes))[None, :]) & 1
    coords = np.bitwise_xor.reduce(bits[:, :, None] * np.array(lanes, dtype=np.int64)[None, :, :], axis=1)
    rows = [tuple(r) for r in coords.tolist()]
    ids: dict = {}
    keys: dict = {}
    eid = np.array([ids.setdefault(r, len(ids)) for r in rows])
    kid = np.array([keys.setdefault(r[:axis] + r[axis + 1:], len(keys)) for r in rows])
    keep = np.ones((32, 1), dtype=bool) if takers is None else np.array(takers, dtype=bool)[:, None]
    foreign = (counts > 0) & (kid[None, :] != kid[:, None]) & keep
    if foreign.any():
        t, u = (int(x) for x in np.argwhere(foreign)[0])
        return f"lane {t} combines lane {u}'s element {tuple(coords[u].tolist())}, of other non-reduced coordinates"
    per = counts @ (eid[:, None] == np.arange(eid.max() + 1)[None, :])      # [t, element]: times combined
    own = kid[:, None] == kid[np.argmax(eid[None, :] == np.arange(eid.max() + 1)[:, None], axis=1)][None, :]
    missing, twice = own & (per == 0) & keep, own & (per > 1) & keep
    if twice.any() and not idempotent:
        t, e = (int(x) for x in np.argwhere(twice)[0])
        return f"lane {t} combines element {tuple(coords[list(eid).index(e)].tolist())} {int(per[t, e])} times"
    if missing.any():
        t, e = (int(x) for x in np.argwhere(missing)[0])
        return f"lane {t} misses element {tuple(coords[list(eid).index(e)].tolist())}"
    return None


# ----- the PTX: butterfly chains by dataflow --------------------------------------------------------

@dataclass(frozen=True)
class Chain:
    """One reduction's butterflies in one function: ``steps`` (each the shuffles of one mask, in order),
    or one ``redux.sync`` as a step of mask -1."""
    func: str
    steps: tuple[tuple[Instr, ...], ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "_shuffles", tuple(i for s in self.steps for i in s))   # no field: eq, repr as before

    @property
    def shuffles(self) -> tuple[Instr, ...]:
        """Every step's shuffles, in order."""
        return self._shuffles


class Readers(dict):
    """Register -> the instructions reading it (one function), with ``memo``: what the chain checks derive
    from it, kept per instruction or chain (each asked again by every reduce and tie)."""

    def __init__(self) -> None:
        super().__init__()
        self.memo: dict = {}
        self.shared: list[Instr] = []       # the ld.shared/st.shared indexed (a register operand), in order
        self.shuffles: list[Instr] = []     # the shfl.sync.bfly and redux.sync, in order
        self.ones: dict[str, int] = {}      # register -> the immediate bits a lone ``mov`` gives it (:func:`_one`)


def _index(instrs: list[Instr]) -> tuple[dict, dict]:
    """(register -> defining instructions, register -> reading instructions (:class:`Readers`)) of one
    function. The registers are read from the operands as written (:func:`operand_registers`): an
    instruction's ``args`` are not decoded for the index."""
    defs: dict[str, list[Instr]] = {}
    uses: dict[str, list[Instr]] = Readers()
    put_def, put_use = defs.setdefault, uses.setdefault
    shared, shuffles = uses.shared, uses.shuffles
    for ins in instrs:
        parts = ins.parts
        head = parts[0] if parts else ins.opcode
        put = put_use if head in _NO_WRITE else put_def
        seen = False
        d = ins.__dict__
        for t in d["operands"] if "args" not in d else ():    # as written: `%r1` is Reg('%r1')
            c = t[:1]
            if c == "%" and "|" not in t:
                put(t, []).append(ins)
                seen = True
            elif c == "{" and "|" not in t:
                for x in decode_operand(t).items:
                    if type(x) is Reg:
                        put(x.name, []).append(ins)
                        seen = True
            put = put_use
        for regs in operand_registers(ins) if "args" in d else ():     # decoded already
            for r in regs:
                put(r, []).append(ins)
                seen = True
            put = put_use
        if ins.pred:
            put_use(ins.pred.lstrip("@!"), []).append(ins)
            seen = True
        if seen and (head == "ld" or head == "st") and "shared" in parts:
            shared.append(ins)
        elif (head == "shfl" or head == "redux") and (_is_bfly(ins) or parts[:2] == ("redux", "sync")):
            shuffles.append(ins)
        elif head == "mov" and len(ops := ins.operands) == 2 and ops[0][:1] == "%" and ops[1][:1] not in "%{[":
            src = decode_operand(ops[1])                # the immediate alone: the index decodes no args
            if type(src) is Imm and "|" not in ops[0]:
                uses.ones[ops[0]] = src.value
    uses.ones = {r: v for r, v in uses.ones.items() if len(defs.get(r, ())) == 1 and v in _ONE.values()}
    return defs, uses


#: the bits of 1.0 per element type: an ``fma`` by it is an ``add`` (Triton lowers a bf16 ``arith.addf``
#: below sm_90 to ``fma.rn.bf16 d, a, 1.0, b``: PTX ISA 9.7.4, half precision ``add.bf16``, needs sm_90)
_ONE = {"bf16": 0x3F80, "f16": 0x3C00, "f32": 0x3F800000, "f64": 0x3FF0000000000000}


def _one(uses: dict, reg: str, elem: str) -> bool:
    """Whether ``reg`` holds 1.0 of ``elem`` (one ``mov`` of its bits)."""
    return getattr(uses, "ones", {}).get(reg, -1) == _ONE.get(elem)


_NO_WRITE = frozenset({"st", "bar", "bra", "red", "ret", "stmatrix", "cp", "mbarrier", "fence", "barrier"})


def _writes(ins: Instr) -> bool:
    return ins.head not in _NO_WRITE


def _dests(ins: Instr) -> list[str]:
    args, parts = ins.args, ins.parts
    if not args or (parts[0] if parts else ins.opcode) in _NO_WRITE:
        return []
    d = args[0]
    if isinstance(d, Reg):
        return [d.name]
    return [x.name for x in d.items if isinstance(x, Reg)] if isinstance(d, Vec) else []


def _reads(ins: Instr) -> list[str]:
    out = [x.name for a in ins.args[1:] for x in (a.items if isinstance(a, Vec) else (a,)) if isinstance(x, Reg)]
    return out + ([ins.pred.lstrip("@!")] if ins.pred else [])


def _is_bfly(ins: Instr) -> bool:
    return ins.parts[:3] == ("shfl", "sync", "bfly")


def _first_users(ins: Instr, uses: dict) -> list[Instr]:
    """The first instructions past moves that read ``ins``'s result (:func:`_first_reads`)."""
    return [u for u, _r in _first_reads(ins, uses)]


#: opcode parts -> (a move of bits but for ``prmt``, a join (:func:`_joins`), a butterfly)
_MOVE_OF: dict = {}


def _opcode_facts(u: Instr) -> tuple[bool, bool, bool]:
    """(:func:`_is_move` for any opcode but ``prmt``, :func:`_joins`, :func:`_is_bfly`) of ``u``'s opcode,
    decided once per opcode."""
    key = u.parts or u.opcode
    hit = _MOVE_OF.get(key)
    if hit is None:
        integer = not any(p in _FLOATS for p in u.parts[1:])
        hit = _MOVE_OF[key] = (u.head in _MOVES and integer, integer if u.head == "cvt" else u.head in _JOIN,
                               _is_bfly(u))
    return hit


def _is_move(u: Instr) -> bool:
    """A move of bits: ``mov``, an integer ``cvt``, a default-mode ``prmt`` with an immediate selector
    (LLVM packs two chains' last values into one register before a ``.x2`` combine)."""
    if u.parts[:1] == ("prmt",) or not u.parts and u.opcode == "prmt":
        return u.parts == ("prmt", "b32") and len(u.args) == 4 and isinstance(u.args[3], Imm)
    return _opcode_facts(u)[0]


def _first_reads(ins: Instr, uses: dict) -> list[tuple[Instr, str]]:
    """``(user, register it reads)`` for the first instructions past moves that read ``ins``'s result (kept in
    the memo of :class:`Readers`; the list is not to be changed)."""
    memo = getattr(uses, "memo", None)
    if memo is None:
        return _first_reads_of(ins, uses)
    key = ("first-reads", id(ins))
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = (ins, _first_reads_of(ins, uses))     # ins kept: its id stays unique
    return hit[1]


def _first_reads_of(ins: Instr, uses: dict) -> list[tuple[Instr, str]]:
    """:func:`_first_reads`, computed."""
    dests = _dests
    out, todo, seen = [], list(dests(ins)), set()
    while todo:
        r = todo.pop()
        for u in uses.get(r, ()):
            if id(u) in seen:
                continue
            seen.add(id(u))
            if _is_move(u) and not _opcode_facts(u)[2]:
                todo.extend(dests(u))
            else:
                out.append((u, r))
    return out


def _cluster(ins: Instr, uses: dict) -> set[int]:
    """The ids of the combine instructions after shuffle ``ins``: its first users, then what only joins
    them (compares, selects, predicate logic, moves)."""
    first = _first_users(ins, uses)
    dests = _dests
    got, todo = {id(u) for u in first}, [u for u in first if not _opcode_facts(u)[2]]
    while todo:
        u = todo.pop()
        for r in dests(u):
            for v in uses.get(r, ()):
                if id(v) not in got and _opcode_facts(v)[1]:
                    got.add(id(v))
                    todo.append(v)
    return got


def _joins(v: Instr) -> bool:
    """Whether ``v`` may be part of a combine region past its first op: compares, selects, predicate
    logic, moves and integer conversions (a value narrowed back after its shuffle)."""
    return _opcode_facts(v)[1]


def chains(instrs: list[Instr], index: tuple[dict, dict] | None = None) -> list[Chain]:
    """The butterfly chains of one function's instructions (module law: a successor's source is
    defined in its predecessor's combine instructions; joined shuffles share a step); ``index``: their
    :func:`_index` where the caller has it."""
    defs, uses = index if index is not None else _index(instrs)
    shfl = uses.shuffles if isinstance(uses, Readers) else [
        i for i in instrs if _is_bfly(i) or i.parts[:2] == ("redux", "sync")]
    parent = {id(i): id(i) for i in shfl}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    fed: dict[int, list[Instr]] = {}                 # defining instruction -> the shuffles it feeds
    for t in shfl:
        for d in {id(d) for r in _reads(t)[:1] for d in defs.get(r, [])}:
            fed.setdefault(d, []).append(t)
    succ: dict[int, list[Instr]] = {}
    perm = {id(s) for s in shfl if _permutes(s, defs, uses)}
    for s in shfl:
        cl = _cluster(s, uses) if _is_bfly(s) and id(s) not in perm else ()
        nxt = {id(t): t for c in cl for t in fed.get(c, []) if t is not s and id(t) not in perm and _follows(s, t)}
        succ[id(s)] = list(nxt.values())
        for t in nxt.values():
            parent[find(id(s))] = find(id(t))
    groups: dict[int, list[Instr]] = {}
    for s in shfl:
        groups.setdefault(find(id(s)), []).append(s)
    return [_steps(g, succ, instrs[0].func if instrs else "") for g in groups.values()]


def _follows(s: Instr, t: Instr) -> bool:
    """Whether shuffle ``t`` may be the next step after butterfly ``s`` in one reduction: Triton's
    ``warpReduce`` (``lib/Conversion/TritonGPUToLLVM/ReduceOpToLLVM.cpp``) halves its lane mask each step,
    and a ``redux.sync`` reduces all 32 lanes in one step, after no butterfly. A shuffle with a larger mask,
    or a ``redux.sync``, reached through selects and compares past a finished combine (a later reduce of a
    value chosen from this one) starts a chain of its own; an equal mask stays (a step repeated is the
    chain's own bug, reported there). A mask that is no immediate decides nothing (True).

    >>> from verilayout.frontends.ptx import make_instr
    >>> a, b = (make_instr("shfl.sync.bfly.b32", (f"%r{m}", "%r0", str(m), "31", "-1"), m) for m in (1, 16))
    >>> _follows(b, a), _follows(a, b)
    (True, False)
    """
    a, b = _mask(s), _mask(t)
    return b != -1 and (a is None or b is None or b <= a)


def _moved_from(reg: str, defs: dict, depth: int = 0) -> set[str]:
    """``reg`` and the registers it is a move of (``mov``, integer ``cvt``, a vector unpack), traced back."""
    out = {reg}
    for d in defs.get(reg, []) if depth < 4 else ():
        if _is_move(d):
            for r in _reads(d):
                out |= _moved_from(r, defs, depth + 1)
    return out


def _moved_to(regs: set[str], uses: dict) -> set[str]:
    """``regs`` and the registers moves carry them into (a vector pack too), traced forward."""
    out, todo = set(regs), list(regs)
    while todo and len(out) < 64:
        for u in uses.get(todo.pop(), []):
            if _is_move(u) and not _is_bfly(u):
                new = set(_dests(u)) - out
                out |= new
                todo.extend(new)
    return out


def _permutes(ins: Instr, defs: dict, uses: dict) -> bool:
    """Whether butterfly ``ins`` only moves values between lanes. A reduction step shuffles by one lane
    bit and combines the shuffled value with the one it shuffled (``warpReduce`` in
    ``lib/Conversion/TritonGPUToLLVM/ReduceOpToLLVM.cpp``: ``acc = combine(acc, shuffleXor(acc, N))``,
    ``N`` a power of two); a reverse ``tt.scan`` flips its lanes with a butterfly of mask ``lanes - 1``
    whose result is scanned or selected on its own (``ScanOpToLLVM.cpp``).

    Law: ``True`` iff ``ins`` is a ``shfl.sync.bfly`` whose immediate mask has two or more bits set and,
    for every ``(u, r)`` of :func:`_first_reads`, ``reads(u) - {r}`` meets no register its source is
    moved from or into. (A single-bit mask is always a reduction step: LLVM may fold the shuffled
    value's definition into the combine, ``fma`` for ``x * x`` then ``add``.)
    """
    m = _mask(ins) if _is_bfly(ins) else None
    if m is None or m & (m - 1) == 0:
        return False
    memo = getattr(uses, "memo", {})
    key = ("permutes", id(ins))
    if key not in memo:
        src = _moved_to(set().union(*(_moved_from(r, defs) for r in _reads(ins)[:1])), uses)
        memo[key] = (ins, not any(src & (set(_reads(u)) - {r}) for u, r in _first_reads(ins, uses)))
    return memo[key][1]


def _steps(group: list[Instr], succ: dict, func: str) -> Chain:
    """A chain's shuffles in steps: a shuffle's depth is one more than its deepest predecessor's."""
    depth = {id(s): 0 for s in group}
    for s in sorted(group, key=lambda i: i.line):
        for t in succ.get(id(s), []):
            depth[id(t)] = max(depth[id(t)], depth[id(s)] + 1)
    by: dict[int, list[Instr]] = {}
    for s in group:
        by.setdefault(depth[id(s)], []).append(s)
    return Chain(func, tuple(tuple(sorted(by[d], key=lambda i: i.line)) for d in sorted(by)))


# ----- one chain against its reduce -----------------------------------------------------------------

def _mask(ins: Instr) -> int | None:
    """The butterfly's lane mask (``redux.sync``: -1), or None when it is not an immediate."""
    parts, args = ins.parts, ins.args
    if (parts[0] if parts else ins.opcode) == "redux":
        return -1
    m = args[2] if len(args) > 2 else None
    return m.value if isinstance(m, Imm) else None


def _full_warp(ins: Instr, run: Any) -> bool:
    """``c = 31`` and membermask ``0xffffffff`` in every thread (``redux.sync``: its membermask); ``run``
    evaluates a register operand per thread (``audit.ptx_shuffles.TagRun``), or None."""
    imms = ins.args[3:5] if ins.head == "shfl" else ins.args[2:3]
    want = (31, 0xFFFFFFFF) if ins.head == "shfl" else (0xFFFFFFFF,)
    if len(imms) != len(want):
        return False
    for x, w in zip(imms, want):
        if isinstance(x, Imm):
            if x.value % (1 << 32) != w:
                return False
            continue
        got = run.per_thread(x, ins) if run is not None and isinstance(x, Reg) else None
        if got is None or not bool(np.all(got % (1 << 32) == w)):
            return False
    return True


def _loaded_shared(reg: str, defs: dict, depth: int = 0) -> bool:
    """Whether ``reg`` is (through moves) a value loaded from shared memory."""
    for d in defs.get(reg, []):
        if d.head == "ld" and "shared" in d.parts:
            return True
        if d.head in _MOVES and depth < 4 and any(_loaded_shared(r, defs, depth + 1) for r in _reads(d)):
            return True
    return False


def _expected(r: Reduce) -> tuple[str, bool] | None:
    """The one-op region's PTX head and whether ``.NaN`` is needed; None for another region."""
    return r.combine


def _shape(r: Reduce) -> tuple:
    """What decides a chain's verdict against ``r``: lanes, axis, region."""
    return r.shape


def tie(chain: Chain, wide: list[Reduce], defs: dict, uses: dict, by_line: bool = True) -> list[Reduce]:
    """Among the reduces ``wide`` of the chain's width, those it lowers (module law): those whose region
    the chain's combine op matches (dataflow), then, with ``by_line``, those whose operand's source
    lines define the chain's in-thread leaves (``<reduce>``: a leaf is another reduction's result);
    each filter kept only when it leaves some. The source-line step never makes an error (an error
    needs every reduce of the width to refuse the chain); a ``proved`` it decided says so.

    >>> tie(None, [], {}, {})
    []
    """
    fit = wide
    if len({_shape(r) for r in fit}) > 1:
        fit = [r for r in fit if not any(_combine_errors(chain, r, uses))] or fit
    if by_line and len({_shape(r) for r in fit}) > 1:
        heads = frozenset(u.head for s in chain.steps[0] for u in _first_users(s, uses)) - {"shfl", "redux"}
        heads = heads | ({"add"} if "fma" in heads else set())
        leaves = [d for s in chain.steps[0] for r in _reads(s)[:1] for d in _leaf_defs(r, heads, defs)]
        locs = {d.loc for d in leaves} | ({"<reduce>"} if any(_is_bfly(d) or d.head == "redux" for d in leaves)
                                          else set())
        fit = [r for r in fit if r.source & locs] or fit
    return fit


def _by_line(checks: list[Check], fit: list[Reduce], flow: list[Reduce]) -> list[Check]:
    """``checks`` (a proved verdict against ``fit``), saying so when the source-line step of :func:`tie`
    narrowed the dataflow candidates ``flow`` to ``fit`` (LLVM may move code across lines: the tie is
    then an inference, not a dataflow fact)."""
    if len({_shape(r) for r in flow}) == len({_shape(r) for r in fit}):
        return checks
    lines = ", ".join(str(r.op.line) for r in flow)
    why = (f"; tied to this reduce by the source line of its operand's definitions (by dataflow it "
           f"could be any of the tt.reduce ops at TTGIR lines {lines})")
    return [replace(c, message=c.message + why, data=dict(c.data, tie="source line")) for c in checks]


def _leaf_defs(reg: str, heads: frozenset, defs: dict, depth: int = 0) -> list[Instr]:
    """The instructions that define the leaves of ``reg``'s in-thread accumulation tree (the reduce's
    operand registers): ``reg``'s definitions traced back through the chain's combine ops ``heads`` and
    moves; an ``fma`` (a product fused into an ``add``) is a leaf and its addend traced on."""
    ds = defs.get(reg, [])
    if len(ds) != 1 or depth > 16:
        return ds
    d = ds[0]
    if d.head == "fma" and "add" in heads:
        return [d] + [x for r in _reads(d)[2:3] for x in _leaf_defs(r, heads, defs, depth + 1)]
    if d.head not in heads and not _is_move(d):
        return [d]
    return [x for r in _reads(d) for x in _leaf_defs(r, heads, defs, depth + 1)]


def _idempotent(r: Reduce) -> bool:
    """Whether ``r``'s region is one op that may see an element twice (max, min, and, or)."""
    e = _expected(r)
    return e is not None and e[0] in ("max", "min", "and", "or")


def _bit_fault(m: int, r: Reduce, seen: set[int], idempotent: bool = False) -> str | None:
    """What is wrong with a butterfly of single-bit mask ``m`` for ``r``; None if it is one it needs."""
    if m < 0 or m & (m - 1):
        return None
    i = m.bit_length() - 1
    b = r.lanes[i] if i < len(r.lanes) else ()
    if m in seen and not idempotent:
        return f"lane bit {i} (mask {m}) is combined a second time; the reduce needs each element once"
    if not any(b) and not idempotent:
        return (f"lane bit {i} has basis {list(b)}: lanes l and l^{m} hold the same elements (replicated), so the "
                f"butterfly with mask {m} counts each twice; the reduce over axis {r.axis} needs no butterfly over it")
    if any(x for d, x in enumerate(b) if d != r.axis):
        return (f"lane bit {i} has basis {list(b)}, which moves along a dimension other than the reduced axis "
                f"{r.axis}: the butterfly with mask {m} mixes elements of other non-reduced coordinates")
    return None


def _lane_errors(chain: Chain, r: Reduce) -> list[tuple[Instr, str]]:
    """Each faulty step's shuffle and why; empty when the masks meet the law."""
    masks = [_mask(s[0]) for s in chain.steps]
    fault = _fault(tuple(masks), r.lanes, r.axis, _idempotent(r))
    if fault is None:
        return []
    out, seen = [], set()
    for step, m in zip(chain.steps, masks):
        why = _bit_fault(m, r, seen, _idempotent(r))
        seen.add(m)
        if why:
            out.append((step[0], why))
    if not out:
        need = [m for m in required_lanes(r.lanes, r.axis) if m not in masks]
        bits = "; ".join(f"lane bit {m.bit_length() - 1} (basis {list(r.lanes[m.bit_length() - 1])}) moves along "
                         f"the reduced axis {r.axis} and has no butterfly" for m in need)
        out.append((chain.steps[-1][0], bits or f"the masks {masks} do not combine the lanes' elements: {fault}"))
    return out


def _only_selected(chain: Chain, uses: dict) -> bool:
    """Whether every shuffle of the butterfly chain is read, past moves, by ``selp`` only (Triton lowers a
    ``ttg.convert_layout`` within a warp to shuffles and selects; a reduction combines what it shuffles)."""
    if chain.steps[0][0].head == "redux":
        return False
    users = [[u for u in _first_users(s, uses) if not _is_bfly(u)] for s in chain.shuffles]
    return all(us and all(u.head == "selp" for u in us) for us in users)


def _segment_errors(chain: Chain, r: Reduce, seg: Segment) -> list[tuple[Instr, str]]:
    """A segmented ``redux.sync``'s fault against ``r`` (:mod:`verilayout.audit.ptx_segments`), at it."""
    fault = lane_fault(seg.counts(), r.lanes, r.axis, _idempotent(r), seg.takers)
    return [] if fault is None else [(chain.steps[0][0], f"a segmented redux.sync ({seg.describe()}): {fault}")]


def _combine_errors(chain: Chain, r: Reduce, uses: dict) -> tuple[list[tuple[Instr, str]], str | None]:
    """(errors, why unchecked) of the chain's combine ops against ``r``'s region (kept in the memo of
    :class:`Readers` per chain and region; the result is not to be changed)."""
    memo = getattr(uses, "memo", None)
    if memo is None:
        return _combine_errors_of(chain, r, uses)
    key = ("combine", id(chain), r.region, r.types)          # all of ``r`` that the check reads
    if key not in memo:
        memo[key] = (chain, _combine_errors_of(chain, r, uses))      # chain kept: its id stays unique
    return memo[key][1]


def _combine_errors_of(chain: Chain, r: Reduce, uses: dict) -> tuple[list[tuple[Instr, str]], str | None]:
    """:func:`_combine_errors`, computed."""
    want = _expected(r)
    if want is None:
        kinds = {h for name, _t in r.region for h in _KINDS.get(name, (_COMBINE.get(name, ("?",))[0],))}
        heads = {u.head for s in chain.shuffles for u in _first_users(s, uses)} - {"shfl", "redux"}
        extra = sorted(heads - kinds - set(_MOVES))
        return [], (f"the combine region ({', '.join(n for n, _t in r.region)}) is not modelled: its shuffled values' "
                    f"first users include {', '.join(extra)}" if extra else None)
    if chain.steps[0][0].head == "redux":
        return [], None
    head, nan = want
    elem = r.types[0] if r.types else ""
    out = []
    for s in chain.shuffles:
        reads = [(u, r) for u, r in _first_reads(s, uses) if not _is_bfly(u)]
        users = [u for u, _r in reads]
        if not any(_matches(u, head, nan, elem, r) or _add_by_one(u, head, elem, r, uses) for u, r in reads):
            at = users[0] if users else s
            got = ", ".join(sorted({u.opcode for u in users})) or "nothing"
            out.append((at, f"the value shuffled at PTX line {s.line} is combined by {got}; the reduce's region "
                            f"{r.region[0][0]} on {elem} lowers to {head}{'.NaN' if nan else ''}"))
    return out, None


def _matches(u: Instr, head: str, nan: bool, elem: str, shuffled: str = "") -> bool:
    """Whether ``u`` is PTX op ``head`` on element type ``elem`` (``.NaN`` as required); an ``fma`` whose
    addend is the ``shuffled`` register is an ``add`` (the accumulator's product fused into it)."""
    if head == "add" and u.head == "fma" and _reads(u)[2:3] == [shuffled]:
        return elem in u.parts
    if u.head != head or ("NaN" in u.parts) != nan:
        return False
    if elem in _FLOATS:
        return elem in u.parts or f"{elem}x2" in u.parts
    return not any(p in _FLOATS for p in u.parts)


def _add_by_one(u: Instr, head: str, elem: str, shuffled: str, uses: dict) -> bool:
    """Whether ``u`` is an ``add`` of ``shuffled`` written ``fma shuffled, 1.0, c`` (or ``1.0, shuffled``): the
    shuffled value a multiplicand, the other one 1.0 of ``elem`` (a bf16 add below sm_90; LLVM may fold the
    thread's own value into the addend when it is a constant)."""
    regs = _reads(u)
    if head != "add" or u.head != "fma" or elem not in u.parts or shuffled not in regs[:2] or len(regs) < 3:
        return False
    other = regs[1] if regs[0] == shuffled else regs[0]
    return _one(uses, other, elem)


def _check(ins: Instr, status: str, message: str, data: dict, op: str = "tt.reduce", check: str = CHECK) -> Check:
    return Check(op, ins.line, ins.loc, check, status, "error" if status == "counterexample" else None,
                 message, dict(data, source="ptx"))


def _unchecked(chain: Chain, why: str, data: dict) -> list[Check]:
    """One ``unchecked`` result for the chain, at its first shuffle, naming every shuffle's line."""
    lines = [s.line for s in chain.shuffles]
    first = chain.steps[0][0]
    return [_check(first, "unchecked", f"butterflies {[_mask(s[0]) for s in chain.steps]} at PTX lines "
                   f"{', '.join(map(str, lines))}: unchecked: {why}", dict(data, reason=why))]


def chain_checks(chain: Chain, cands: list, defs: dict, uses: dict, run: Any = None, cta: Any = None) -> list[Check]:
    """The ``warp-reduce`` checks of one chain (module law); ``cands``: :func:`reduces` (a reduce whose
    layout does not read may own the chain: then no error is reported); ``run`` evaluates register
    operands per thread (``audit.ptx_shuffles.TagRun``) over a warp, ``cta`` over the CTA (default ``run``)."""
    got = _chain_checks(chain, [r for r in cands if isinstance(r, Reduce)], defs, uses, run, cta or run)
    unread = [r for r in cands if not isinstance(r, Reduce)]
    if unread and any(c.status == "counterexample" for c in got):
        op, why = unread[0]
        return _unchecked(chain, f"the tt.reduce at TTGIR line {op.line} may own it and {why}",
                          {"instructions": [s.line for s in chain.shuffles], "masks": [_mask(s[0]) for s in chain.steps]})
    return got


def _chain_checks(chain: Chain, cands: list[Reduce], defs: dict, uses: dict, run: Any, cta: Any,
                  converted: bool = False) -> list[Check]:
    """:func:`chain_checks` over the reduces whose layouts read (``converted``: its loaded inputs are a layout
    conversion's, :func:`_loaded_input`)."""
    masks = [_mask(s[0]) for s in chain.steps]
    data: dict[str, Any] = {"instructions": [s.line for s in chain.shuffles], "masks": masks}
    partial = [s for s in chain.shuffles if not _full_warp(s, run)]
    if partial:
        return [_check(s, "counterexample", f"{s.opcode} is not a full-warp butterfly (c = 31, membermask "
                       "0xffffffff): lanes outside it read undefined values (PTX ISA 9.7.8.6)", data) for s in partial]
    if any(m is None for m in masks) or any(_mask(s) != _mask(st[0]) for st in chain.steps for s in st):
        return _unchecked(chain, "a lane mask is not one immediate per step", data)
    inter = _interwarp(chain, cands, defs, uses, cta, data)
    if inter is not None:
        return inter
    if not converted and any(_loaded_shared(r, defs) for s in chain.steps[0] for r in _reads(s)[:1]):
        return _loaded_input(chain, cands, defs, uses, (run, cta), data)
    seg = segment(chain.steps[0][0], defs, uses, cta) if chain.steps[0][0].head == "redux" else None
    if isinstance(seg, str):
        return _unchecked(chain, seg, data)
    if seg is not None and _loaded_shared(seg.value, defs):
        return _unchecked(chain, "inter-warp stage: its inputs are loaded from shared memory (each warp's "
                          "partial moved into lanes, a segment of them selected per lane); which lane holds which "
                          "partial is the scratch round's", data)
    if all(_permutes(s, defs, uses) for s in chain.shuffles):
        return _unchecked(chain, "a lane permutation, not a reduction: no reader of a shuffled value also reads "
                          "the value shuffled (a reverse tt.scan's lane flip); the scan's lanes are not checked "
                          "here", data)
    if _only_selected(chain, uses):
        return _unchecked(chain, "each shuffled value is only selected (selp) by the lanes, never combined: a "
                          "register permute (a layout conversion through shuffles), not a reduction", data)
    wide = _shufflers([r for r in cands if r.words == len(chain.steps[0])])
    if not wide:
        return _unchecked(chain, f"no tt.reduce of the plan shuffles {len(chain.steps[0])} 32-bit word(s) per step",
                          data)
    if len(wide) > 1 and all(any(_combine_errors(chain, r, uses)) for r in wide):
        lines = ", ".join(str(r.op.line) for r in wide)
        return _unchecked(chain, f"its combine instructions match the region of none of the tt.reduce ops of its "
                          f"width (TTGIR lines {lines}): not a reduction the plan names (e.g. a compare-exchange "
                          "LLVM made of a sort's reductions)", data)
    fit = tie(chain, wide, defs, uses)
    verdicts = {id(r): _verdict(chain, r, uses, data, seg) for r in fit}
    if all(verdicts[id(r)][0].status == "proved" for r in fit):
        return _by_line(verdicts[id(fit[0])], fit, tie(chain, wide, defs, uses, by_line=False))
    if len(fit) == 1 and not any(_verdict(chain, r, uses, data, seg)[0].status == "proved"
                                 for r in wide if r is not fit[0]):
        return verdicts[id(fit[0])]
    by_lanes = _by_lanes(chain, fit, verdicts)
    if by_lanes is not None:
        return by_lanes
    lines = ", ".join(str(r.op.line) for r in fit)
    return _unchecked(chain, f"the tt.reduce ops at TTGIR lines {lines} fit the chain's width, combine op and "
                      "inputs; it does not meet all of their layouts, and another reduce's it would", data)


def _loaded_input(chain: Chain, cands: list[Reduce], defs: dict, uses: dict, runs: tuple, data: dict) -> list[Check]:
    """A chain on values loaded from shared memory that no reduce owns as its inter-warp stage: when every
    such round's stores come from no shuffle (:func:`ptx_interwarp.converted_input`: a layout conversion
    into the reduce's operand layout), the chain is a first stage, judged as one and kept only when proved
    (which element each lane holds is the conversion's own check); else unchecked."""
    why = ("inter-warp stage: its inputs are loaded from shared memory (each warp's partial moved into lanes); "
           "which lane holds which partial is the scratch round's")
    memo = getattr(uses, "memo", None)
    regs = [r for s in chain.steps[0] for r in _reads(s)[:1] if _loaded_shared(r, defs)]
    if not all(converted_input(r, defs, uses, memo) for r in regs):
        return _unchecked(chain, why, data)
    got = _chain_checks(chain, cands, defs, uses, runs[0], runs[1], converted=True)
    if not got or any(c.status != "proved" for c in got):
        return _unchecked(chain, why, data)
    note = ("; its inputs are loaded from a shared-memory round whose stores come from no shuffle (a layout "
            "conversion's: which element each lane holds is that conversion's check)")
    return [replace(c, message=c.message + note) for c in got]


def _by_lanes(chain: Chain, fit: list[Reduce], verdicts: dict) -> list[Check] | None:
    """The proved verdict of the reduces of ``fit`` whose lane bases along their axis are the chain's masks
    (a reduce's butterflies are the lane bits of its axis, Triton's ``ReduceOpToLLVM`` warp step), when
    every such reduce proves it and some other reduce of ``fit`` does not: the chain is tied to them by
    its masks, and says so. None otherwise (a chain whose masks are no reduce's lanes stays unchecked)."""
    lanes = [r for r in fit if not _lane_errors(chain, r)]
    if not lanes or len(lanes) == len(fit) or any(verdicts[id(r)][0].status != "proved" for r in lanes):
        return None
    others = ", ".join(str(r.op.line) for r in fit if all(r is not o for o in lanes))
    why = (f"; tied to this reduce by its lane masks (the tt.reduce ops at TTGIR lines {others} also fit its "
           "width, combine op and inputs; their lanes along their axes are other butterflies)")
    return [replace(c, message=c.message + why, data=dict(c.data, tie="lane masks")) for c in verdicts[id(lanes[0])]]


def _interwarp(chain: Chain, cands: list[Reduce], defs: dict, uses: dict, cta: Any, data: dict) -> list[Check] | None:
    """The checks of an inter-warp stage (:mod:`verilayout.audit.ptx_interwarp`) against the reduces of the
    chain's width whose region its combine op meets; None when its loads are no inter-warp stage of them.
    An error needs every such reduce to refuse it; a proof, every one to accept it."""
    if not any(_loaded_from(r, defs, uses) for s in chain.steps[0] for r in _reads(s)[:1]):
        return None
    wide = [r for r in cands if r.words == len(chain.steps[0])]
    fit = [r for r in (tie(chain, wide, defs, uses, by_line=False) if wide else [])
           if not any(_combine_errors(chain, r, uses)) and _redux_fits(chain.steps[0][0], r)]
    fit0 = fit
    found = [check_stage(chain, r, defs, uses, cta, data["masks"]) for r in fit]
    if fit and all(f is None for f in found):       # no owner by its stores: a carried first stage may own it
        found = [check_stage(chain, r, defs, uses, cta, data["masks"], carried=True) for r in fit]
    if not fit or all(f is None for f in found):
        return None
    owned = [(f, r) for f, r in zip(found, fit) if f is not None]     # None: no warp along its axis
    got = _agreed(owned, data, [r for r in fit0 if all(r is not o for _f, o in owned)])
    if got is not None:
        return got
    why = next((f for f in found if isinstance(f, str)), None) if not any(isinstance(f, Finding) for f in found) \
        else None
    said = {None: "no inter-warp stage of it (no warp along its axis, or no first-stage store)", "proved": "proved",
            "counterexample": "an error"}
    told = [said[f.status] if isinstance(f, Finding) else said[None] if f is None else f"unchecked, {f}" for f in found]
    each = "; ".join(f"TTGIR line {r.op.line}: {t}" for t, r in zip(told, fit)) if why is None else ""
    why = why or "the tt.reduce ops of its width and combine op disagree on it"
    return _unchecked(chain, f"inter-warp stage: {why}{' (' + each + ')' if each else ''}", data)


def _shufflers(rs: list[Reduce]) -> list[Reduce]:
    """The reduces of ``rs`` that combine across lanes (some lane basis moves along the axis), or ``rs``
    when none does: Triton shuffles only over the lanes along the axis (``ReduceOpToLLVM.cpp``,
    ``warpReduce``), so a reduce with none emits no butterfly or ``redux.sync`` and its inter-warp
    round (if any) stores partials no shuffle made.

    >>> _shufflers([])
    []
    """
    return [r for r in rs if any(b[r.axis] for b in r.lanes)] or rs


def _agreed(owned: list, data: dict, dropped: list[Reduce]) -> list[Check] | None:
    """The one verdict of an inter-warp stage when every reduce that may own it (``owned``: pairs of a
    :class:`Finding` and its reduce) gives the same status, said with the reduces the dataflow left out
    (``dropped``: of its width and combine op, with no warp along the axis, or a first stage of shuffles
    where none made the round's stores, or none where one did: :func:`ptx_interwarp.check_stage`); else None."""
    if not owned or not all(isinstance(f, Finding) for f, _r in owned) or len({f.status for f, _r in owned}) > 1:
        return None
    f, r = owned[0]
    msg = f.message
    if dropped:
        lines = ", ".join(str(o.op.line) for _f, o in owned)
        out = ", ".join(str(o.op.line) for o in dropped)
        msg += (f"; by dataflow it is the stage of the tt.reduce at TTGIR line(s) {lines}, each with this verdict "
                f"(those at TTGIR line(s) {out} of its width and combine op cannot own it: no warp along their "
                "axis, or lanes along it where no shuffle made the round's stores, or none where one did)")
    return [_check(f.ins, f.status, msg, dict(data, ttgir_line=r.op.line, axis=r.axis,
                                             warp_groups=[list(g) for g in f.groups]))]


def _loaded_from(reg: str, defs: dict, uses: dict) -> bool:
    """Whether ``reg`` is loaded from shared memory (:func:`ptx_interwarp.source_load`; kept in the memo of
    :class:`Readers`)."""
    memo = getattr(uses, "memo", None)
    if memo is None:
        return source_load(reg, defs) is not None
    key = ("source-load", reg)
    if key not in memo:
        memo[key] = source_load(reg, defs) is not None
    return memo[key]


def _redux_fits(ins: Instr, r: Reduce) -> bool:
    """Whether a ``redux.sync``'s op and its float or integer type are the one-op region's (a butterfly's
    combine op is checked elsewhere)."""
    want = _expected(r)
    if ins.head != "redux":
        return True
    floats = ins.parts[-1] in _FLOATS
    return want is not None and len(ins.parts) > 2 and ins.parts[2] == want[0] and \
        floats == (bool(r.types) and r.types[0] in _FLOATS)


def _verdict(chain: Chain, r: Reduce, uses: dict, base: dict, seg: Segment | None = None) -> list[Check]:
    """The chain's checks against reduce ``r`` (``seg``: a segmented ``redux.sync``'s lanes): errors at
    their lines, or one ``proved``/``unchecked``."""
    data = dict(base, ttgir_line=r.op.line, axis=r.axis, lane_bases=[list(b) for b in r.lanes])
    masks = data["masks"]
    if any(len(s) != r.words for s in chain.steps):
        return _unchecked(chain, f"a step shuffles other than the reduce's {r.words} word(s)", data)
    bad = _lane_errors(chain, r) if seg is None else _segment_errors(chain, r, seg)
    wrong, loose = _combine_errors(chain, r, uses)
    if bad or wrong:
        return [_check(i, "counterexample", f"reduce at TTGIR line {r.op.line} over axis {r.axis}: {msg}", data)
                for i, msg in bad + wrong]
    if loose:
        return _unchecked(chain, loose, data)
    what = "redux.sync over the 32 lanes" if masks == [-1] else f"butterflies {masks}"
    if seg is not None:
        what = f"a segmented redux.sync ({seg.describe()})"
    op = "the region's op" if _expected(r) else "the region's op kinds (first users of each shuffled value)"
    once = "at least once (an idempotent op)" if _idempotent(r) else "once"
    return [_check(chain.steps[0][0], "proved", f"reduce at TTGIR line {r.op.line} over axis {r.axis}: {what} "
                   f"combine, in every lane, each element of its non-reduced coordinates {once} (lane bases "
                   f"{[list(b) for b in r.lanes]}), with {op}", data)]


def merged(checks: list[Check]) -> list[Check]:
    """Successive ``unchecked`` results of one reason and one mask sequence (the chains of one reduce's
    registers, one round's loads) as one, at the first chain's line, naming every shuffle's line."""
    out: list[Check] = []
    for c in checks:
        last = out[-1] if out else None
        if last is not None and c.status == last.status == "unchecked" and \
                (c.data.get("reason"), c.data.get("masks")) == (last.data.get("reason"), last.data.get("masks")):
            lines = list(last.data["instructions"]) + list(c.data["instructions"])
            why = last.data["reason"]
            out[-1] = Check(last.op, last.line, last.loc, last.check, "unchecked", None,
                            f"butterflies {last.data['masks']} of several chains at PTX lines "
                            f"{', '.join(map(str, lines))}: unchecked: {why}",
                            dict(last.data, instructions=lines))
        else:
            out.append(c)
    return out


def _gather_checks(ctx: PtxContext) -> list[Check]:
    """Each ``shfl.sync.idx`` of a kernel with a ``tt.gather`` whose lane is not a function of ``%tid``."""
    if ctx.tmod is None or not any(op.name == "tt.gather" for op in ctx.tmod.ops):
        return []                        # an idx shuffle of no gather: a conversion's (register-permute)
    out = []
    for func in ctx.ptx.functions:
        idx = [i for i in ctx.ptx.instrs if i.func == func and i.parts[:3] == ("shfl", "sync", "idx")]
        ev = ctx.values.get(func)
        run = TagRun(ev, 32) if ev is not None else None
        for i in idx:
            if run is not None and len(i.args) > 2 and run.per_thread(i.args[2], i) is not None:
                continue
            why = ("the lane index is data-dependent (a tt.gather's index tensor): which lane each thread reads "
                   "is not modelled")
            out.append(_check(i, "unchecked", f"{i.opcode}: unchecked: {why}", {"reason": why}, "tt.gather",
                              GATHER_CHECK))
    return out


def warp_reduce_checks(ctx: PtxContext) -> list[Check]:
    """The ``warp-reduce`` checks of every butterfly chain of a kernel and the ``gather-shuffle`` reports
    (module law).

    >>> from verilayout.frontends.ptx import parse_ptx
    >>> from verilayout.frontends.ttgir import parse_module
    >>> warp_reduce_checks(PtxContext("x", parse_ptx(".version 8.7\\n.entry f()\\n{\\nret;\\n}"),
    ...                               parse_module("module {\\n}"), (), {}))
    []
    """
    out: list[Check] = []
    cands: list | None = None
    funcs = {i.func for i in ctx.ptx.instrs if i.opcode.startswith(("shfl.sync.bfly", "redux"))   # parts: the
             and (i.parts[:3] == ("shfl", "sync", "bfly") or i.parts[:1] == ("redux",))}              # opcode's
    for func in [f for f in ctx.ptx.functions if f in funcs]:
        code = getattr(ctx.values.get(func), "code", None)            # the same list, kept by the evaluator
        instrs = list(code) if code else [i for i in ctx.ptx.instrs if i.func == func]
        if cands is None:
            cands = reduces(ctx.tmod) if ctx.tmod is not None else []
        defs, uses = _index(instrs)
        ev = ctx.values.get(func)
        run = TagRun(ev, 32) if ev is not None else None
        warps = (ctx.tmod.num_warps if ctx.tmod is not None else None) or 1
        # the CTA's run shares the file's memo (the shared-memory checks' address terms, simplified once)
        cta = TagRun(ev, 32 * warps, memo=ctx.memo) if ev is not None and warps > 1 else run
        got: list[Check] = []
        for chain in chains(instrs, (defs, uses)):
            got.extend(chain_checks(chain, cands, defs, uses, run, cta))
        out.extend(merged(got))
    return out + _gather_checks(ctx)
