"""Run one PTX kernel function concretely for a set of threads of one CTA, and record what it does.

Law: every thread executes the instructions of :mod:`verilayout.frontends.ptx`'s reading of the
function with the given special registers and parameter values; threads run in lock step by the
lowest program counter first (they reconverge at the join of structured branches), with values
held as numpy ``uint64`` arrays over the threads. Memory is not modelled: ``ld.global`` yields a
*tag* (its address), remembered as the register's origin, so a store of a loaded value records
which global address it copies; ``mbarrier.try_wait`` succeeds at once (its ``(barrier,
parity)`` is recorded: :mod:`verilayout.simulate.independent` replays the waits against the
arrivals). Every ``st``, ``cp.async``, ``mbarrier``, ``wgmma``, ``fence`` and ``bar`` instruction
is an :class:`Event` with its operand values per thread (a ``wgmma.mma_async`` also records its
descriptors, A registers, whether its accumulators are all zero ``d_zero``, ``scale_d``, and
``unfenced``: whether another instruction accessed a wgmma register of the thread since its last
``wgmma.fence``); after it, its
accumulator register ``r`` holds the tag ``r + 1`` (f16 accumulators: the halves ``2r + 1`` and
``2r + 2``), so a store shows which accumulator element it writes. An instruction that is not modelled
makes its destination *unknown*; a branch on an unknown value, or more than ``max_steps`` steps,
stops the run with ``complete = False`` and the reason. What an integer instruction computes is the
table of :mod:`verilayout.prove.ptx_semantics`, read in its numpy domain (the symbolic evaluator
:mod:`verilayout.prove.ptx_values` reads the same table over z3); operands are the decoded ones of
:mod:`verilayout.hw.nvidia.ptx_model` (registers inline assembly names without ``%`` are symbols).

>>> from verilayout.frontends.ptx import parse_ptx
>>> m = parse_ptx(".version 8.7\\n.visible .entry f(.param .u64 f_param_0)\\n{\\nmov.u32 %r1, %tid.x;\\n"
...               "shl.b32 %r2, %r1, 2;\\nst.shared.u32 [%r2], %r1;\\nret;\\n}")
>>> r = run_threads(m, "f", threads=range(4))
>>> [e.values["addr"].tolist() for e in r.events if e.op == "st.shared.u32"]
[[0, 4, 8, 12]]
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from verilayout.frontends.ptx import Instr, PtxModule, decode_operand, split_operands
from verilayout.hw.nvidia.ptx_model import Addr, Imm, Operand, Other, Reg, Sym, Vec
from verilayout.prove.ptx_semantics import NUMPY, PRED, compute, form

__all__ = ["Event", "RunResult", "run_threads", "run_ctas", "EVENT_HEADS", "CLUSTER_WINDOW", "init_count",
           "phase_parity", "tx_count", "pending_groups", "tma_mbarrier", "cta_mask", "mma_descriptors",
           "mma_idesc", "alloc_columns", "stored_values", "barrier_key"]

#: Opcode heads recorded as events.
EVENT_HEADS = ("st", "cp", "mbarrier", "wgmma", "fence", "bar", "barrier", "red", "atom", "tcgen05")
#: Tensor-memory base address a ``tcgen05.alloc`` hands out in a run (lane 0, column 0); an
#: ``ld.shared`` of the address the alloc wrote reads it back.
TMEM_BASE = 0
#: ``tcgen05.ld`` result tags: bit 31 set, TMEM lane in bits 16-30, column in bits 0-15.
TMEM_TAG = 1 << 31
#: ``mapa`` of shared address ``a`` and CTA ``r`` yields ``a + (r + 1) * CLUSTER_WINDOW`` in a run
#: (a modelling choice: the interpreter's distributed-shared-memory window of CTA ``r``; a plain
#: shared address, below the window, is the executing CTA's own).
CLUSTER_WINDOW = 1 << 24


def barrier_key(addr: int, cta: int) -> tuple[int, int]:
    """Law: ``(CTA, shared offset)`` of a shared address used by CTA ``cta``: an address in the
    window of CTA ``r`` (:data:`CLUSTER_WINDOW`, ``mapa``'s result) names ``r``, a plain one is
    ``cta``'s own.

    >>> barrier_key(0x100, 1), barrier_key(2 * CLUSTER_WINDOW + 0x100, 0)
    ((1, 256), (1, 256))
    """
    if addr >= CLUSTER_WINDOW:
        return addr // CLUSTER_WINDOW - 1, addr % CLUSTER_WINDOW
    return cta, addr
_U64 = np.uint64
_ALL = (1 << 64) - 1
_WIDTH = {"8": 8, "16": 16, "32": 32, "64": 64}


@dataclass(frozen=True)
class Event:
    """One executed event instruction: ``op``, its PTX ``line``, the thread indices (positions in
    ``threads``) that ran it, in run order ``seq``, and operand values (arrays over those
    threads): ``addr`` (the first memory operand), ``a0``, ``a1``, ... (the others, in order;
    vectors flattened), ``origin`` (global address tags of stored loaded values)."""
    op: str
    line: int
    seq: int
    lanes: np.ndarray
    values: dict = field(default_factory=dict, compare=False)
    instr: Instr | None = field(default=None, compare=False)

    def __repr__(self) -> str:
        """``Event(op, line, threads)``.

        >>> Event("bar.sync", 7, 0, np.arange(3))
        Event(bar.sync, line 7, 3 threads)
        """
        return f"Event({self.op}, line {self.line}, {len(self.lanes)} threads)"


# ----- named operands ---------------------------------------------------------------------------
# An event's values are keyed by position (``addr``, then ``a0``, ``a1``, ... for the other
# operands, ``map``/``c<j>`` for a tensor map); the checkers read them by role, through these.
# The operand orders are the PTX ISA's (9.7.13.15 mbarrier, 9.7.9.25 cp.async.bulk.tensor,
# 9.7.15 wgmma, 9.7.16 tcgen05). Each takes an event's ``values`` (or a slice of them over some
# threads) and returns the operand's values over those threads.

def init_count(values: dict):
    """Law: the expected-arrival count of ``mbarrier.init [addr], count`` (operand ``a0``).

    >>> init_count({"addr": [8], "a0": [2]})
    [2]
    """
    return values["a0"]


def phase_parity(values: dict):
    """Law: the phase parity of ``mbarrier.try_wait.parity waitComplete, [addr], parity``
    (operand ``a1``; ``a0`` is the predicate written).

    >>> phase_parity({"a0": None, "addr": [8], "a1": [1]})
    [1]
    """
    return values["a1"]


def tx_count(values: dict):
    """Law: the bytes of ``mbarrier.arrive.expect_tx state, [addr], txCount`` (operand ``a1``;
    ``a0`` is the state written).

    >>> tx_count({"a0": [0], "addr": [8], "a1": [4096]})
    [4096]
    """
    return values["a1"]


def pending_groups(values: dict):
    """Law: ``N`` of ``wgmma.wait_group N`` (operand ``a0``; None where the run does not know it).

    >>> pending_groups({"a0": [1]}), pending_groups({})
    ([1], None)
    """
    return values.get("a0")


def tma_mbarrier(values: dict):
    """Law: the completion mbarrier of ``cp.async.bulk.tensor [dst], [map, {c..}], [mbar]``
    (operand ``a0``; a multicast one is followed by its CTA mask, :func:`cta_mask`).

    >>> tma_mbarrier({"addr": [0], "map": [1], "c0": [0], "c1": [0], "a0": [64]})
    [64]
    """
    return values["a0"]


def cta_mask(values: dict):
    """Law: the CTA mask of ``cp.async.bulk.tensor...multicast::cluster [dst], [map, {c..}],
    [mbar], ctaMask`` (operand ``a1``; None without one or where the run does not know it).

    >>> cta_mask({"a0": [64], "a1": [3]}), cta_mask({"a0": [64]})
    ([3], None)
    """
    return values.get("a1")


def mma_descriptors(values: dict) -> tuple:
    """Law: the A and B shared-memory descriptors of ``tcgen05.mma [d], adesc, bdesc, idesc, en``
    (operands ``a0``, ``a1``), each None where the run does not know it.

    >>> mma_descriptors({"addr": [0], "a0": [5], "a2": [9]})
    ([5], None)
    """
    return values.get("a0"), values.get("a1")


def mma_idesc(values: dict):
    """Law: the instruction descriptor of ``tcgen05.mma [d], adesc, bdesc, idesc, en``
    (operand ``a2``; None where the run does not know it).

    >>> mma_idesc({"a0": [5], "a1": [6], "a2": [9]})
    [9]
    """
    return values.get("a2")


def alloc_columns(values: dict):
    """Law: the column count of ``tcgen05.alloc [dst], ncols`` (operand ``a0``; None where the
    run does not know it).

    >>> alloc_columns({"addr": [0], "a0": [64]})
    [64]
    """
    return values.get("a0")


def stored_values(values: dict) -> list:
    """Law: the values a ``st [addr], v`` / ``st.v<n> [addr], {v0, ...}`` stores, in order
    (operands ``a0`` .. ``a7`` present; each None where the run does not know it).

    >>> stored_values({"addr": [0], "a0": [1], "a1": None})
    [[1], None]
    """
    return [values.get(f"a{j}") for j in range(8) if f"a{j}" in values]


@dataclass(frozen=True)
class RunResult:
    """The events of a run, in execution order, whether it ran to the end, and why not.

    >>> RunResult((), False, "more than 10 steps").complete
    False
    """
    events: tuple[Event, ...]
    complete: bool
    reason: str = ""
    threads: tuple[int, ...] = ()


def _width(parts: tuple[str, ...], default: int = 32) -> int:
    for p in reversed(parts):
        if len(p) >= 2 and p[0] in "usbf" and p[1:] in _WIDTH:
            return _WIDTH[p[1:]]
        if p == "pred":
            return 1
    return default


_MASKS = tuple(_U64((1 << w) - 1) for w in range(64)) + (_U64(_ALL),)


def _mask(w: int) -> np.uint64:
    return _MASKS[w if w < 64 else 64]


class _Unknown(Exception):
    pass


class _Diverged(Exception):
    """A batched run (:func:`run_ctas`) met state its CTAs could share (an unknown register, a
    load tag, TMEM, a register one executing CTA never wrote): the CTAs are run one by one."""


class _Machine:
    float_tags = False
    tmem_value = None

    def __init__(self, mod: PtxModule, func: str, threads, special: dict, params: dict,
                 shared: dict, stop_at=None, load_value=None):
        self.instrs = [i for i in mod.instrs if i.func == func]
        first = next(n for n, i in enumerate(mod.instrs) if i.func == func)
        self.labels = {lab: at - first for f, lab, at in mod.labels if f == func}
        self.t = np.asarray(list(threads), dtype=np.int64)
        self.n = len(self.t)
        self.special = special
        self.params = params
        self.shared = shared
        self.regs: dict[str, np.ndarray] = {}
        self.origin: dict[str, np.ndarray] = {}
        self.unknown: set[str] = set()
        self.events: list[Event] = []
        self.stop_at = stop_at or (lambda i: False)
        self.load_value = load_value
        # registers a wgmma reads or writes (accumulators, A registers): an access by any other
        # instruction marks the thread until its next wgmma.fence (PTX ISA 9.7.15, ``wgmma.fence``)
        self.mma_regs: set[str] = set()
        for i in self.instrs:
            if i.opcode.startswith("wgmma.mma_async") and len(i.args) > 1:
                for op in i.args[:2]:
                    self.mma_regs.update(_regs(op) if isinstance(op, Vec) else ())
        self.touched = np.zeros(self.n, dtype=bool)
        self.tmem_slots: set[int] = set()
        self.cur_sel: np.ndarray | None = None
        self.in_wgmma = False
        # a batch of CTAs (run_ctas): each lane's CTA, the CTAs that wrote each register, and the
        # lanes of the CTAs taking the current step
        self.cta: np.ndarray | None = None
        self.defined: dict[str, np.ndarray] = {}
        self.exec_mask: np.ndarray | None = None

    # ---- values ----
    def value(self, op: Operand, w: int) -> np.ndarray:
        """The ``w``-bit value of a decoded source operand for every thread (a register, special
        register, immediate, shared variable or parameter name; inline assembly names registers
        without ``%``, so a name is a register once written); raises :class:`_Unknown` for a value
        not modelled (an unwritten or unknown register, any other operand form)."""
        if isinstance(op, Imm):
            return np.full(self.n, op.value % (1 << 64), dtype=_U64) & _mask(w)
        if not isinstance(op, (Reg, Sym)):
            raise _Unknown(_spelling(op))
        t = op.name
        if t in self.mma_regs and not self.in_wgmma and self.cur_sel is not None:
            self.touched |= self.cur_sel
        if t in self.unknown:
            raise _Unknown(t)
        if t in self.regs and (self.cta is None or self._defined_here(t)):
            return self.regs[t] & _mask(w)
        if t in self.shared:
            return np.full(self.n, self.shared[t], dtype=_U64) & _mask(w)
        if t in self.params:
            return np.full(self.n, self.params[t], dtype=_U64) & _mask(w)
        sp = self.special.get(t)
        if sp is not None:
            return np.broadcast_to(np.asarray(sp, dtype=_U64), (self.n,)).copy() & _mask(w)
        raise _Unknown(t)                       # read before any write

    def address(self, op: Operand) -> np.ndarray:
        """The 64-bit address ``[base+offset]`` of a decoded address operand for every thread."""
        if not isinstance(op, Addr) or not op.modelled or op.offset is None:
            raise _Unknown(_spelling(op))
        base = op.base
        if isinstance(base, Sym) and base.name in self.params:   # [param_name]: the parameter's value
            return np.full(self.n, self.params[base.name], dtype=_U64)
        v = self.value(base, 64)
        return (v + _U64(op.offset % (1 << 64))) & _mask(64)

    def write(self, name: str, v: np.ndarray, sel: np.ndarray, w: int, origin=None) -> None:
        if name in self.mma_regs and not self.in_wgmma:
            self.touched |= sel
        v = np.asarray(v, dtype=_U64) & _mask(w)
        old = self.regs.get(name)
        if self.cta is not None:
            sel = sel | self._first_write(name)
        self.regs[name] = v if old is None else np.where(sel, v, old)
        self.unknown.discard(name)
        if origin is not None:
            o = self.origin.get(name, np.zeros(self.n, dtype=_U64))
            self.origin[name] = np.where(sel, origin, o)
        elif name in self.origin:
            self.origin[name] = np.where(sel, _U64(0), self.origin[name])

    def _first_write(self, name: str) -> np.ndarray:
        """Law (batch): the lanes of the executing CTAs that had not written ``name``; a CTA's
        first write sets all its lanes, as :meth:`write` does in a run of that CTA alone."""
        d = self.defined.get(name)
        fill = self.exec_mask if d is None else self.exec_mask & ~d
        self.defined[name] = self.exec_mask if d is None else d | self.exec_mask
        return fill

    def _defined_here(self, t: str) -> bool:
        """Law (batch): whether every executing CTA wrote ``t`` (False: none did, as in a run of
        each alone, where ``t`` is not a register yet); raises ``_Diverged`` where some did."""
        d = self.defined[t][self.exec_mask]
        if d.all():
            return True
        if d.any():
            raise _Diverged(t)
        return False

    def enter(self, sel: np.ndarray) -> None:
        """Law (batch): ``exec_mask`` is every lane of each CTA with a lane in ``sel``."""
        hit = np.zeros(int(self.cta[-1]) + 1, dtype=bool)
        hit[self.cta[sel]] = True
        self.exec_mask = hit[self.cta]

    # ---- one instruction ----
    def step(self, i: Instr, sel: np.ndarray) -> np.ndarray | None:
        """Execute ``i`` for the threads ``sel``; the branch-taken mask for a ``bra``."""
        if self.cta is not None:
            self.enter(sel)
        parts = i.parts
        head = parts[0]
        args = i.args
        if i.guard is not None:
            p = self.value(Reg(i.guard.reg), 1).astype(bool)
            sel = sel & (~p if i.guard.negated else p)
        self.cur_sel = sel
        self.in_wgmma = i.opcode.startswith("wgmma.mma_async")
        if head == "bra":
            return sel
        if head in EVENT_HEADS or head == "prefetch":
            if head in EVENT_HEADS:
                self._event(i, sel)
            if i.opcode.startswith(("mbarrier.try_wait", "mbarrier.test_wait")) and args \
                    and isinstance(args[0], (Reg, Sym)):
                self.write(args[0].name, np.ones(self.n, dtype=_U64), sel, 1)   # the wait succeeds
            return None
        if head in ("setmaxnreg", "ret", "exit", "griddepcontrol", "trap", "membar", "nanosleep"):
            return None
        if not args:
            return None
        dest = args[0]
        try:
            v, w, origin = self._compute(i, parts, head, args)
        except _Unknown:
            v, w, origin = None, 0, None
        if v is None:
            for name in _regs(dest):
                self.unknown.add(name)
                self.regs.pop(name, None)
            return None
        if isinstance(dest, Vec):                 # mov.b64 {lo, hi}, src: each element its bits
            items = _regs(dest)
            ew = w // len(items) if items and len(items) == len(dest.items) else 0
            if not ew:
                for name in items:
                    self.unknown.add(name)
                    self.regs.pop(name, None)
                return None
            for k, name in enumerate(items):
                self.write(name, (v >> _U64(ew * k)) & _mask(ew), sel, ew)
            return None
        if isinstance(dest, (Reg, Sym)):
            self.write(dest.name, v, sel, w, origin)
        return None

    def _compute(self, i, parts, head, args):
        # long: the opcode dispatch of the interpreter (one branch per PTX instruction family)
        w = _width(parts)
        if head == "mbarrier" or head == "elect":
            return None, w, None
        fl = self._float(parts, head, args)
        if fl is not None:
            return fl
        if head == "ld":
            if "param" in parts:
                return self.address(args[1]), w, None
            if "shared" in parts and self.tmem_slots:
                a = self.address(args[1])
                if np.isin(a, list(self.tmem_slots)).all():
                    return np.full(self.n, TMEM_BASE, dtype=_U64), w, None
            if "global" in parts or parts[1] in ("nc",):
                if isinstance(args[0], Vec):
                    return None, w, None        # vector loads are not modelled
                a = self.address(args[1])
                if self.load_value is not None:  # a chosen memory content, read by the executing threads
                    sel = self.cur_sel if self.cur_sel is not None else np.ones(self.n, dtype=bool)
                    out = np.zeros(self.n, dtype=_U64)
                    if sel.any():
                        out[sel] = np.asarray(self.load_value(a[sel], w), dtype=_U64)
                    return out & _mask(w), w, a
                return a, 64, a                 # the tag: the address read
            return None, w, None
        if head == "mov" and len(args) == 2:
            src = args[1]
            if isinstance(src, Vec):
                pw = w // len(src.items)
                v = np.zeros(self.n, dtype=_U64)
                for k, r in enumerate(src.items):
                    v |= (self.value(r, pw) & _mask(pw)) << _U64(pw * k)
                return v, w, None
            v = self.value(src, max(w, 1) if w else 64)
            return v, w, self.origin.get(src.name) if isinstance(src, (Reg, Sym)) else None
        if head == "mapa":                      # the cluster window of CTA r (see CLUSTER_WINDOW)
            a, r = self.value(args[1], w), self.value(args[2], 32)
            return (a & _U64(CLUSTER_WINDOW - 1)) | ((r + _U64(1)) * _U64(CLUSTER_WINDOW)), w, None
        if head == "cvta":
            return self.value(args[1], 64), 64, None
        f = form(parts)
        if f is None or len(args) != len(f.sources) + 1 or f.result > 64:
            return None, w, None
        srcs = [self.value(o, 1).astype(bool) if sw == PRED else self.value(o, sw)
                for o, sw in zip(args[1:], f.sources)]
        v = compute(NUMPY, parts, srcs)
        if v is None:
            return None, w, None
        if f.result == PRED:
            return np.asarray(v, dtype=bool).astype(_U64), 1, None
        origin = self.origin.get(args[1].name) if head == "cvt" and isinstance(args[1], (Reg, Sym)) else None
        return np.broadcast_to(np.asarray(v, dtype=_U64), (self.n,)).copy(), f.result, origin

    def _float(self, parts, head, ops):
        """``(value, width, None)`` of an f32 arithmetic / comparison, ``tanh.approx.f32``
        (modelled as the exact tanh: the hardware's is within 2^-10.99 relative) or an
        f32 -> f16 / bf16 conversion (round to nearest even; ``x2``: ``a`` to the upper half);
        None where the instruction is not one of these."""
        f32 = "f32" in parts
        if head in ("add", "sub", "mul", "max", "min") and f32 and len(ops) == 3:
            return _f32_arith(head, self.value(ops[1], 32), self.value(ops[2], 32)), 32, None
        if head == "fma" and f32 and len(ops) == 4:
            a, b, c = (_as_f32(self.value(o, 32)) for o in ops[1:4])
            return _bits(a.astype(np.float64) * b + c), 32, None
        if head in ("neg", "abs", "tanh") and f32 and len(ops) == 2:
            a = _as_f32(self.value(ops[1], 32))
            return _bits({"neg": -a, "abs": np.abs(a), "tanh": np.tanh(a)}[head]), 32, None
        if head == "setp" and f32 and len(ops) == 3:
            a, b = _as_f32(self.value(ops[1], 32)), _as_f32(self.value(ops[2], 32))
            r = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b,
                 "ge": a >= b}.get(parts[1])
            return (None if r is None else r.astype(_U64)), 1, None
        if head == "cvt" and len(parts) >= 4 and parts[-1] == "f32" and parts[-2] in (
                "f16", "bf16", "f16x2", "bf16x2"):
            half = _half_bits(parts[-2].rstrip("x2"))
            if parts[-2].endswith("x2") and len(ops) == 3:
                hi, lo = (half(_as_f32(self.value(o, 32))) for o in ops[1:3])
                return (hi << _U64(16)) | lo, 32, None
            return half(_as_f32(self.value(ops[1], 32))), 16, None
        return None

    def _event(self, i: Instr, sel: np.ndarray) -> None:
        """Law: records ``i`` for the threads ``sel``; in a batch (:func:`run_ctas`) one event for
        all of them, or one per CTA where its CTAs read a register not all of them wrote (what a
        run of each alone reads; the side effects before the record are idempotent)."""
        if self.cta is None:
            return self._event_of(i, sel)
        try:
            return self._event_of(i, sel)
        except _Diverged:
            pass
        full, cur = self.exec_mask, self.cur_sel
        for c in np.unique(self.cta[sel]).tolist():
            self.exec_mask = self.cta == c
            self.cur_sel = sel & self.exec_mask
            self._event_of(i, self.cur_sel)
        self.exec_mask, self.cur_sel = full, cur

    def _event_of(self, i: Instr, sel: np.ndarray) -> None:
        lanes = np.nonzero(sel)[0]
        if not len(lanes):
            return
        vals: dict[str, np.ndarray] = {}
        if i.opcode.startswith("wgmma.fence"):
            self.touched[lanes] = False
        if i.opcode.startswith("wgmma.mma_async"):
            vals["unfenced"] = self.touched[lanes].copy()
        if i.opcode.startswith("wgmma.mma_async") and len(i.args) >= 3:
            vals.update(self._wgmma_values(i, lanes))
        self._operand_values(i, lanes, vals)
        if "st" == i.parts[0] and len(i.args) == 2 and "origin" not in vals:
            src = i.args[1]
            if isinstance(src, (Reg, Sym)) and src.name in self.origin:
                vals["origin"] = self.origin[src.name][lanes]
        self.events.append(Event(i.opcode, i.line, len(self.events), lanes, vals, i))
        if i.opcode.startswith("tcgen05.alloc") and vals.get("addr") is not None:
            self.tmem_slots.update(int(x) for x in vals["addr"])
        if i.opcode.startswith("tcgen05.ld.") and "32x32b" in i.parts and vals.get("addr") is not None:
            # register r of lane l: TMEM lane (address lane) + l, column (address column) + r
            lane = (self.t % 32).astype(np.uint64)
            taddr = np.zeros(self.n, dtype=_U64)
            taddr[lanes] = vals["addr"]
            dregs = _regs(i.args[0]) if i.args else []
            for r, name in enumerate(dregs):
                t_lane = ((taddr >> _U64(16)) + lane) & _U64(0x7FFF)
                t_col = ((taddr & _U64(0xFFFF)) + _U64(r)) & _U64(0xFFFF)
                tag = _U64(TMEM_TAG) | (t_lane << _U64(16)) | t_col
                if self.tmem_value is not None:      # the chosen f32 content of the TMEM cell
                    tag = np.asarray(self.tmem_value(t_lane, t_col), dtype=np.float32).view(
                        np.uint32).astype(_U64)
                self.write(name, tag, sel, 32)
        if i.opcode.startswith("wgmma.mma_async") and i.args:
            # accumulator tags: D register r holds r + 1 (32-bit), or halves 2r + 1 | 2r + 2 (f16)
            half = len(i.parts) > 5 and i.parts[5] == "f16"
            dregs = _regs(i.args[0])
            for r, name in enumerate(dregs):
                tag = (2 * r + 1) | ((2 * r + 2) << 16) if half else r + 1
                if self.float_tags and not half:
                    tag = int(np.float32(r + 1).view(np.uint32))
                self.write(name, np.full(self.n, tag, dtype=_U64), sel, 32)

    def _known(self, read):
        """Law: ``read()``, or None where it reads a value the interpreter does not model."""
        try:
            return read()
        except _Unknown:
            return None

    def _wgmma_values(self, i: Instr, lanes: np.ndarray) -> dict:
        """Law: a wgmma.mma_async's per-lane values before it runs: ``d_zero`` (every accumulator
        register 0), ``scale_d``, ``a_regs`` (A from registers: registers x lanes), ``desc_a`` and
        ``desc_b`` (descriptors); None where a value is not modelled."""
        def d_zero():                                   # accumulators all zero before it?
            z = np.ones(len(lanes), dtype=bool)
            for r in _items(i.args[0]):
                z &= self.value(r, 32)[lanes] == 0
            return z
        vals = {"d_zero": self._known(d_zero)}
        if len(i.args) > 3:
            vals["scale_d"] = self._known(lambda: self.value(i.args[3], 1)[lanes])
        if isinstance(i.args[1], Vec):                  # A from registers: (registers, lanes)
            vals["a_regs"] = self._known(lambda: np.stack(
                [self.value(r, 32)[lanes] for r in i.args[1].items]))
        for key, op in (("desc_a", i.args[1]), ("desc_b", i.args[2])):
            if not isinstance(op, Vec):
                vals[key] = self._known(lambda op=op: self.value(op, 64)[lanes])
        return vals

    def _operand_values(self, i: Instr, lanes: np.ndarray, vals: dict) -> None:
        """Law: adds to ``vals`` each operand's per-lane value in order: ``addr`` for the first
        address (later ones ``a<k>``), ``map``/``c<j>`` for a tensor-map operand, ``a<k>`` for
        registers and vector members, ``origin`` of the first tagged register; None if unknown."""
        k = 0
        for op in i.args:
            try:
                if isinstance(op, Addr):
                    tmap = _tensor_operand(op)
                    if tmap is not None:           # [map, {c0, c1}]: "map", "c0", "c1"
                        vals["map"] = self.value(tmap[0], 64)[lanes]
                        for j, r in enumerate(tmap[1]):
                            vals[f"c{j}"] = self.value(r, 32)[lanes]
                        continue
                    key = "addr" if "addr" not in vals else f"a{k}"
                    vals[key] = self.address(op)[lanes]
                    if key != "addr":
                        k += 1
                    continue
                if isinstance(op, Vec):
                    for r in op.items:
                        name = r.name if isinstance(r, (Reg, Sym)) else ""
                        vals[f"a{k}"] = self.value(r, 64 if name.startswith("%rd") else 32)[lanes]
                        if name in self.origin:
                            vals.setdefault("origin", self.origin[name][lanes])
                        k += 1
                    continue
                name = op.name if isinstance(op, (Reg, Sym)) else ""
                vals[f"a{k}"] = self.value(op, 64 if name.startswith("%rd") else 32)[lanes]
                if name in self.origin:
                    vals["origin"] = self.origin[name][lanes]
            except _Unknown:
                vals[f"a{k}"] = None
            k += 1


def _spelling(op: Operand) -> str:
    """An operand as a message names it."""
    if isinstance(op, (Reg, Sym)):
        return op.name
    if isinstance(op, Imm):
        return str(op.value)
    if isinstance(op, Other):
        return op.text
    if isinstance(op, Addr):
        return f"[{op.base_name}{'' if not op.offset else f'+{op.offset}'}]"
    return str(op)


def _items(op: Operand) -> tuple:
    """The elements of a vector operand, or the operand alone."""
    return op.items if isinstance(op, Vec) else (op,)


def _regs(op: Operand) -> list[str]:
    """The register names of a register or vector operand (inline assembly's registers are names
    without ``%``: decoded as symbols)."""
    return [r.name for r in _items(op) if isinstance(r, (Reg, Sym))]


def _tensor_operand(addr: Addr) -> tuple[Operand, tuple] | None:
    """``(tensor map, coordinates)`` of a ``[map, {c0, ...}]`` operand (PTX ISA 9.7.9.25,
    ``cp.async.bulk.tensor``), which the reader keeps whole as an address of no modelled form;
    None for any other address. The inside is decoded by the reader's own operand decoder."""
    if addr.modelled or not isinstance(addr.base, Other):
        return None
    parts = split_operands(addr.base.text)
    if len(parts) != 2:
        return None
    coords = decode_operand(parts[1])
    return decode_operand(parts[0]), _items(coords)


def _as_f32(v: np.ndarray) -> np.ndarray:
    return (v & _U64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)


def _bits(x) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(x, dtype=np.float32).view(np.uint32).astype(_U64)


def _half_bits(kind: str):
    """f32 array -> its f16 or bf16 bits (round to nearest even), as uint64.

    >>> hex(int(_half_bits("bf16")(np.array([1.00390625], dtype=np.float32))[0]))
    '0x3f80'
    """
    if kind == "f16":
        def f16(a):
            with np.errstate(over="ignore", invalid="ignore"):
                return a.astype(np.float16).view(np.uint16).astype(_U64)
        return f16

    def bf16(a):
        u = a.view(np.uint32).astype(np.uint64)
        r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
        return np.where(np.isnan(a), _U64(0x7FC0), r & _U64(0xFFFF))
    return bf16


def _f32_arith(head: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``add/sub/mul.f32`` on the bit patterns (IEEE binary32, round to nearest even).

    >>> one, two = np.array([0x3F800000], dtype=np.uint64), np.array([0x40000000], dtype=np.uint64)
    >>> hex(int(_f32_arith("add", one, two)[0]))
    '0x40400000'
    """
    x = (a & _U64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
    y = (b & _U64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        r = {"add": x + y, "sub": x - y, "mul": x * y, "max": np.fmax(x, y),
             "min": np.fmin(x, y)}[head].astype(np.float32)
    return r.view(np.uint32).astype(_U64)


def run_threads(mod: PtxModule, func: str, threads, *, ctaid: int = 0, nctaid: int = 1,
                ntid: int | None = None, params: dict | None = None, shared_base: int = 0,
                param_values: dict | None = None, stop=None, max_steps: int = 200000,
                load_value=None, float_tags: bool = False, cluster_rank: int = 0,
                cluster_size: int = 1, tmem_value=None) -> RunResult:
    """Run ``func`` for the thread ids ``threads`` of CTA ``ctaid`` (see the module docstring).

    ``param_values``: the value of parameter ``i`` (``ld.param [..._param_<i>]``, or the address of
    a by-value parameter); ``shared_base``: the address of every ``.shared`` variable; ``stop``:
    a predicate on an instruction at which a thread stops (before executing it);
    ``load_value(addresses, bits)``: what ``ld.global`` returns (default: the address, a tag);
    ``float_tags``: a 32-bit accumulator register ``r`` holds the f32 value ``r + 1`` instead of
    the integer (so float epilogue arithmetic on it can be evaluated); ``cluster_rank`` /
    ``cluster_size``: ``%cluster_ctarank`` / ``%cluster_nctarank`` (``mapa``: :data:`CLUSTER_WINDOW`);
    ``tmem_value(lanes, columns)``: the f32 values a ``tcgen05.ld.32x32b`` reads from those TMEM
    cells (default: a tag naming the cell, :data:`TMEM_TAG`).

    >>> from verilayout.frontends.ptx import parse_ptx
    >>> m = parse_ptx(".version 8.7\\n.visible .entry f()\\n{\\nmov.u32 %r1, %tid.x;\\nsetp.lt.u32 %p1, "
    ...               "%r1, 2;\\n@%p1 bra L;\\nst.shared.u32 [%r1], 7;\\nL:\\nret;\\n}")
    >>> [e.values["addr"].tolist() for e in run_threads(m, "f", threads=range(4)).events]
    [[2, 3]]
    """
    threads = list(threads)
    tid = np.asarray(threads, dtype=_U64)
    special = _specials(tid, ntid or max(threads) + 1, ctaid, nctaid, cluster_rank, cluster_size)
    names = {**_param_names(mod, func, dict(param_values or {})), **(params or {})}
    mach = _Machine(mod, func, threads, special, names, {s: shared_base for s in mod.shared},
                    stop, load_value)
    mach.float_tags = float_tags
    mach.tmem_value = tmem_value
    return _run(mach, threads, max_steps)


def _specials(tid: np.ndarray, ntid: int, ctaid, nctaid: int, rank, size: int) -> dict:
    """Law: the special registers of threads ``tid`` (``ctaid``, ``rank``: one value, or one per
    thread)."""
    return {"%tid.x": tid, "%tid.y": 0, "%tid.z": 0, "%ntid.x": ntid, "%ntid.y": 1,
            "%ntid.z": 1, "%ctaid.x": ctaid, "%ctaid.y": 0, "%ctaid.z": 0, "%nctaid.x": nctaid,
            "%nctaid.y": 1, "%nctaid.z": 1, "%laneid": tid % _U64(32),
            "%warpid": tid // _U64(32), "%cluster_ctarank": rank, "%cluster_nctarank": size}


def run_ctas(mod: PtxModule, func: str, threads, ctas, *, nctaid: int, cluster_size: int = 1,
             params: dict | None = None, shared_base: int = 0, param_values: dict | None = None,
             stop=None, max_steps: int = 200000) -> list[RunResult]:
    """Law: ``[run_threads(mod, func, threads, ctaid=b, nctaid=nctaid, cluster_rank=b %
    cluster_size, cluster_size=cluster_size, ...) for b in ctas]``, each event equal in ``op``,
    ``line``, ``seq``, ``lanes`` and ``values``; computed as one run of all the CTAs' threads
    (they share no state: each CTA takes the steps it takes alone, the lowest program counter
    first), and CTA by CTA where that run meets state they could share (``_Diverged``) or does
    not complete.

    >>> from verilayout.frontends.ptx import parse_ptx
    >>> m = parse_ptx(".version 8.7\\n.visible .entry f()\\n{\\nmov.u32 %r1, %ctaid.x;\\n"
    ...               "st.shared.u32 [%r1], %r1;\\nret;\\n}")
    >>> [[e.values["addr"].tolist() for e in r.events] for r in run_ctas(m, "f", [0], [0, 3], nctaid=4)]
    [[[0]], [[3]]]
    """
    threads, ctas = list(threads), list(ctas)
    solo = dict(nctaid=nctaid, cluster_size=cluster_size, params=params, shared_base=shared_base,
                param_values=param_values, stop=stop, max_steps=max_steps)
    if len(ctas) > 1:
        try:
            run = _batch_run(mod, func, threads, ctas, solo)
            if run.complete:
                return _split_run(run, len(ctas), threads)
        except _Diverged:
            pass
    return [run_threads(mod, func, threads, ctaid=b, cluster_rank=b % cluster_size, **solo) for b in ctas]


def _batch_run(mod: PtxModule, func: str, threads: list, ctas: list, kw: dict) -> RunResult:
    """Law: one run of ``threads`` of every CTA of ``ctas`` (lane ``c * len(threads) + j``:
    thread ``threads[j]`` of CTA ``ctas[c]``); raises ``_Diverged`` (see :func:`run_ctas`)."""
    k, n = len(ctas), len(threads)
    tid = np.tile(np.asarray(threads, dtype=_U64), k)
    cta = np.repeat(np.asarray(ctas, dtype=_U64), n)
    special = _specials(tid, max(threads) + 1, cta, kw["nctaid"], cta % _U64(kw["cluster_size"]),
                        kw["cluster_size"])
    names = {**_param_names(mod, func, dict(kw["param_values"] or {})), **(kw["params"] or {})}
    mach = _Machine(mod, func, threads * k, special, names,
                    {s: kw["shared_base"] for s in mod.shared}, kw["stop"], None)
    mach.cta = np.repeat(np.arange(k), n)
    return _run(mach, threads * k, kw["max_steps"])


def _split_run(run: RunResult, k: int, threads: list) -> list[RunResult]:
    """Law: the complete batched ``run`` of ``k`` CTAs as one run per CTA: each event's lanes of
    CTA ``c`` (renumbered from 0) with their values, numbered in the CTA's own order."""
    n = len(threads)
    per: list[list[Event]] = [[] for _ in range(k)]
    for ev in run.events:
        owner = ev.lanes // n
        for c in np.unique(owner).tolist():
            m = owner == c
            vals = {key: None if v is None else v[:, m] if v.ndim == 2 else v[m]
                    for key, v in ev.values.items()}
            per[c].append(Event(ev.op, ev.line, len(per[c]), ev.lanes[m] - c * n, vals, ev.instr))
    return [RunResult(tuple(evs), True, "", tuple(threads)) for evs in per]


def _param_names(mod: PtxModule, func: str, pv: dict) -> dict:
    """Law: each parameter symbol ``<name>_param_<i>`` that ``func``'s operands name, with
    ``i`` a key of ``pv``, maps to ``pv[i]``."""
    names = {}
    for i in mod.instrs:
        if i.func != func:
            continue
        for o in i.args:
            sym = o.base if isinstance(o, Addr) else o
            if isinstance(sym, Sym):
                k = sym.name.rpartition("_param_")[2]
                if sym.name != k and k.isdigit() and int(k) in pv:
                    names[sym.name] = pv[int(k)]
    return names


def _run(mach: "_Machine", threads: list, max_steps: int) -> RunResult:
    """Law: steps the threads in lock step, always the lowest program counter first, until every
    thread returns, stops or falls off the end; not complete (with the reason) on a value not
    modelled, a branch to an unknown label, or more than ``max_steps`` steps."""
    n = len(mach.instrs)
    pc = np.zeros(mach.n, dtype=np.int64)
    done = np.zeros(mach.n, dtype=bool)
    steps = 0
    while not done.all():
        steps += 1
        if steps > max_steps:
            return RunResult(tuple(mach.events), False, f"more than {max_steps} steps", tuple(threads))
        live = ~done
        p = int(pc[live].min())
        sel = live & (pc == p)
        if p >= n:
            done |= sel
            continue
        ins = mach.instrs[p]
        if mach.stop_at(ins):
            done |= sel
            continue
        if ins.parts[0] in ("ret", "exit") and ins.guard is None:
            done |= sel
            continue
        try:
            taken = mach.step(ins, sel)
            if mach.cta is not None and (mach.unknown or mach.origin or mach.tmem_slots):
                raise _Diverged(ins.line)
        except _Unknown as e:
            return RunResult(tuple(mach.events), False, f"PTX line {ins.line}: {ins.opcode} reads "
                             f"{e.args[0]}, which is not modelled", tuple(threads))
        if taken is not None:
            target = ins.args[0] if ins.args else None
            tgt = mach.labels.get(target.name) if isinstance(target, Sym) else None
            if tgt is None:
                return RunResult(tuple(mach.events), False, f"PTX line {ins.line}: branch to an "
                                 "unknown label", tuple(threads))
            pc = np.where(taken, tgt, np.where(sel, pc + 1, pc))
        else:
            pc = np.where(sel, pc + 1, pc)
    return RunResult(tuple(mach.events), True, "", tuple(threads))
