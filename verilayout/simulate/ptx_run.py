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
stops the run with ``complete = False`` and the reason.

>>> from verilayout.frontends.ptx import parse_ptx
>>> m = parse_ptx(".version 8.7\\n.visible .entry f(.param .u64 f_param_0)\\n{\\nmov.u32 %r1, %tid.x;\\n"
...               "shl.b32 %r2, %r1, 2;\\nst.shared.u32 [%r2], %r1;\\nret;\\n}")
>>> r = run_threads(m, "f", threads=range(4))
>>> [e.values["addr"].tolist() for e in r.events if e.op == "st.shared.u32"]
[[0, 4, 8, 12]]
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from verilayout.frontends.ptx import Instr, PtxModule, parse_immediate
from verilayout.prove.ptx_values import BITWISE

__all__ = ["Event", "RunResult", "run_threads", "EVENT_HEADS", "CLUSTER_WINDOW", "init_count",
           "phase_parity", "tx_count", "pending_groups", "tma_mbarrier", "cta_mask", "mma_descriptors",
           "mma_idesc", "alloc_columns", "stored_values"]

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
_U64 = np.uint64
_ALL = (1 << 64) - 1
_WIDTH = {"8": 8, "16": 16, "32": 32, "64": 64}
_ADDR = re.compile(r"^\[\s*([^\]+]+?)\s*(?:\+\s*(-?\w+))?\s*\]$")


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


def _signed(parts: tuple[str, ...]) -> bool:
    return any(len(p) >= 2 and p[0] == "s" and p[1:] in _WIDTH for p in parts)


_MASKS = tuple(_U64((1 << w) - 1) for w in range(64)) + (_U64(_ALL),)


def _mask(w: int) -> np.uint64:
    return _MASKS[w if w < 64 else 64]


def _to_signed(x: np.ndarray, w: int) -> np.ndarray:
    v = x.astype(np.int64) if w == 64 else (x & _mask(w)).astype(np.int64)
    if w < 64:
        v = np.where(v >= (1 << (w - 1)), v - (1 << w), v)
    return v


class _Unknown(Exception):
    pass


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
            if i.opcode.startswith("wgmma.mma_async") and len(i.operands) > 1:
                for text in i.operands[:2]:
                    if text.strip().startswith("{"):
                        self.mma_regs.update(r.strip() for r in text.strip("{} ").split(","))
        self.touched = np.zeros(self.n, dtype=bool)
        self.tmem_slots: set[int] = set()
        self.cur_sel: np.ndarray | None = None
        self.in_wgmma = False

    # ---- values ----
    def value(self, text: str, w: int) -> np.ndarray:
        t = text.strip()
        if t in self.mma_regs and not self.in_wgmma and self.cur_sel is not None:
            self.touched |= self.cur_sel
        if t.startswith("-") and t[1:].startswith("%"):
            return (_U64(0) - self.value(t[1:], w)) & _mask(w)
        if t in self.unknown:
            raise _Unknown(t)
        if t in self.regs:
            return self.regs[t] & _mask(w)
        if t in self.shared:
            return np.full(self.n, self.shared[t], dtype=_U64) & _mask(w)
        if t in self.params:
            return np.full(self.n, self.params[t], dtype=_U64) & _mask(w)
        sp = self.special.get(t)
        if sp is not None:
            return np.broadcast_to(np.asarray(sp, dtype=_U64), (self.n,)).copy() & _mask(w)
        imm = parse_immediate(t)
        if imm is not None:
            return np.full(self.n, imm % (1 << 64), dtype=_U64) & _mask(w)
        if t.startswith("%"):
            raise _Unknown(t)                   # read before any write
        raise _Unknown(t)

    def address(self, text: str) -> np.ndarray:
        m = _ADDR.match(text.strip())
        if not m:
            raise _Unknown(text)
        base = m.group(1).strip()
        if base in self.params:                 # [param_name]: the parameter's value
            return np.full(self.n, self.params[base], dtype=_U64)
        v = self.value(base, 64)
        off = parse_immediate(m.group(2)) if m.group(2) else 0
        return (v + _U64((off or 0) % (1 << 64))) & _mask(64)

    def write(self, name: str, v: np.ndarray, sel: np.ndarray, w: int, origin=None) -> None:
        if name in self.mma_regs and not self.in_wgmma:
            self.touched |= sel
        v = np.asarray(v, dtype=_U64) & _mask(w)
        old = self.regs.get(name)
        self.regs[name] = v if old is None else np.where(sel, v, old)
        self.unknown.discard(name)
        if origin is not None:
            o = self.origin.get(name, np.zeros(self.n, dtype=_U64))
            self.origin[name] = np.where(sel, origin, o)
        elif name in self.origin:
            self.origin[name] = np.where(sel, _U64(0), self.origin[name])

    # ---- one instruction ----
    def step(self, i: Instr, sel: np.ndarray) -> np.ndarray | None:
        """Execute ``i`` for the threads ``sel``; the branch-taken mask for a ``bra``."""
        parts = i.parts
        head = parts[0]
        ops = i.operands
        if i.pred is not None:
            neg = i.pred.startswith("!")
            p = self.value(i.pred.lstrip("!"), 1).astype(bool)
            sel = sel & (~p if neg else p)
        self.cur_sel = sel
        self.in_wgmma = i.opcode.startswith("wgmma.mma_async")
        if head == "bra":
            return sel
        if head in EVENT_HEADS or head == "prefetch":
            if head in EVENT_HEADS:
                self._event(i, sel)
            if i.opcode.startswith(("mbarrier.try_wait", "mbarrier.test_wait")) and ops:
                self.write(ops[0], np.ones(self.n, dtype=_U64), sel, 1)   # the wait succeeds
            return None
        if head in ("setmaxnreg", "ret", "exit", "griddepcontrol", "trap", "membar", "nanosleep"):
            return None
        if not ops:
            return None
        dest = ops[0]
        try:
            v, w, origin = self._compute(i, parts, head, ops)
        except _Unknown:
            if dest.startswith("%") or dest.isidentifier():
                self.unknown.add(dest)
                self.regs.pop(dest, None)
            return None
        if v is None:
            self.unknown.add(dest)
            self.regs.pop(dest, None)
            return None
        self.write(dest, v, sel, w, origin)
        return None

    def _compute(self, i, parts, head, ops):
        # long: the opcode dispatch of the interpreter (one branch per PTX instruction family)
        w = _width(parts)
        if head == "mbarrier" or head == "elect":
            return None, w, None
        fl = self._float(parts, head, ops)
        if fl is not None:
            return fl
        if head == "setp":
            w = _width(parts)
            a, b = self.value(ops[1], w), self.value(ops[2], w)
            cmp = parts[1]
            if _signed(parts):
                a, b = _to_signed(a, w), _to_signed(b, w)
            r = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b,
                 "lo": a < b, "ls": a <= b, "hi": a > b, "hs": a >= b}.get(cmp)
            if r is None:
                return None, 1, None
            if len(parts) > 3 and parts[2] in ("and", "or", "xor") and len(ops) > 3:
                c = self.value(ops[3].lstrip("!"), 1).astype(bool)
                if ops[3].startswith("!"):
                    c = ~c
                r = {"and": r & c, "or": r | c, "xor": r ^ c}[parts[2]]
            return r.astype(_U64), 1, None
        if head in ("and", "or", "xor", "not") and "pred" in parts:
            a = self.value(ops[1].lstrip("!"), 1)
            if ops[1].startswith("!"):
                a = a ^ _U64(1)
            if head == "not":
                return a ^ _U64(1), 1, None
            b = self.value(ops[2].lstrip("!"), 1)
            if ops[2].startswith("!"):
                b = b ^ _U64(1)
            return {"and": a & b, "or": a | b, "xor": a ^ b}[head], 1, None
        if head == "ld":
            if "param" in parts:
                return self.address(ops[1]), w, None
            if "shared" in parts and self.tmem_slots:
                a = self.address(ops[1])
                if np.isin(a, list(self.tmem_slots)).all():
                    return np.full(self.n, TMEM_BASE, dtype=_U64), w, None
            if "global" in parts or parts[1] in ("nc",):
                if ops[0].startswith("{"):
                    return None, w, None        # vector loads are not modelled
                a = self.address(ops[1])
                if self.load_value is not None:  # a chosen memory content, read by the executing threads
                    sel = self.cur_sel if self.cur_sel is not None else np.ones(self.n, dtype=bool)
                    out = np.zeros(self.n, dtype=_U64)
                    if sel.any():
                        out[sel] = np.asarray(self.load_value(a[sel], w), dtype=_U64)
                    return out & _mask(w), w, a
                return a, 64, a                 # the tag: the address read
            return None, w, None
        if head == "mov":
            src = ops[1].strip()
            if src.startswith("{"):
                regs = [r.strip() for r in src.strip("{}").split(",")]
                pw = w // len(regs)
                v = np.zeros(self.n, dtype=_U64)
                for k, r in enumerate(regs):
                    v |= (self.value(r, pw) & _mask(pw)) << _U64(pw * k)
                return v, w, None
            v = self.value(src, max(w, 1) if w else 64)
            return v, w, self.origin.get(src)
        if head == "mapa":                      # the cluster window of CTA r (see CLUSTER_WINDOW)
            a, r = self.value(ops[1], w), self.value(ops[2], 32)
            return (a & _U64(CLUSTER_WINDOW - 1)) | ((r + _U64(1)) * _U64(CLUSTER_WINDOW)), w, None
        if head == "cvta":
            return self.value(ops[1], 64), 64, None
        if head == "cvt":
            dw = _width(parts[1:2]) if len(parts) > 1 else w
            sw = _width(parts[2:]) if len(parts) > 2 else w
            if any(p.startswith("f") for p in parts[1:3]):
                return None, dw, None
            v = self.value(ops[1], sw)
            if dw > sw and parts[2].startswith("s"):
                v = _to_signed(v, sw).astype(np.int64).astype(_U64)
            return v & _mask(dw), dw, self.origin.get(ops[1].strip())
        if head == "selp":
            a, b = self.value(ops[1], w), self.value(ops[2], w)
            c = self.value(ops[3], 1).astype(bool)
            return np.where(c, a, b), w, None
        if head == "prmt" and len(parts) == 2 and len(ops) == 4:   # default byte permute
            a, b, c = (self.value(o, 32) for o in ops[1:4])
            both = a | (b << _U64(32))
            out = np.zeros(self.n, dtype=_U64)
            for k in range(4):
                sel = (c >> _U64(4 * k)) & _U64(0xF)
                byte = (both >> ((sel & _U64(7)) * _U64(8))) & _U64(0xFF)
                byte = np.where(sel & _U64(8), np.where(byte & _U64(0x80), _U64(0xFF), _U64(0)), byte)
                out |= byte << _U64(8 * k)
            return out, 32, None
        if head in ("add", "sub", "mul", "mad", "shl", "shr", "and", "or", "xor", "not", "neg",
                    "min", "max", "div", "rem", "bfe", "bfi", "abs"):
            return self._arith(parts, head, ops, w), (2 * w if "wide" in parts else w), None
        return None, w, None

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

    def _arith(self, parts, head, ops, w):
        # long: the opcode dispatch of the interpreter's integer arithmetic (one branch per opcode)
        sgn = _signed(parts)
        m = _mask(w)
        if head == "not":
            return ~self.value(ops[1], w) & m
        if head == "neg":
            return (_U64(0) - self.value(ops[1], w)) & m
        a = self.value(ops[1], w)
        if head == "bfe":
            pos, ln = (int(x) for x in (self.value(ops[2], 32)[0], self.value(ops[3], 32)[0]))
            f = (a >> _U64(pos)) & _mask(ln) if ln else np.zeros_like(a)
            if sgn and ln:
                f = np.where((f >> _U64(ln - 1)) & _U64(1), f | (m & ~_mask(ln)), f)
            return f & m
        b = self.value(ops[2], w) if head != "shl" and head != "shr" else self.value(ops[2], 32)
        with np.errstate(over="ignore"):
            if head == "add":
                return (a + b) & m
            if head == "sub":
                return (a - b) & m
            if head in BITWISE:
                return BITWISE[head](a, b)
            if head == "shl":
                return np.where(b >= w, _U64(0), (a << np.minimum(b, _U64(63))) & m)
            if head == "shr":
                if sgn:
                    sa = _to_signed(a, w)
                    return (sa >> np.minimum(b, _U64(63)).astype(np.int64)).astype(_U64) & m
                return np.where(b >= w, _U64(0), a >> np.minimum(b, _U64(63)))
            if head in ("mul", "mad"):
                if "wide" in parts:
                    if sgn:
                        p = (_to_signed(a, w) * _to_signed(b, w)).astype(_U64)
                    else:
                        p = a * b
                    p = p & _mask(2 * w)
                    if head == "mad":
                        p = (p + self.value(ops[3], 2 * w)) & _mask(2 * w)
                    return p
                if "hi" in parts:            # the upper half of the 2w-bit product (w <= 32: exact in 64 bits)
                    if w > 32 or head == "mad":
                        return None
                    if sgn:
                        return (((_to_signed(a, w) * _to_signed(b, w)) >> w).astype(_U64)) & m
                    return (a * b) >> _U64(w)
                p = (a * b) & m
                if head == "mad":
                    p = (p + self.value(ops[3], w)) & m
                return p
            if head in ("min", "max"):
                x, y = (_to_signed(a, w), _to_signed(b, w)) if sgn else (a, b)
                pick = (x < y) if head == "min" else (x > y)
                return np.where(pick, a, b)
            if head in ("div", "rem"):
                if sgn:
                    x, y = _to_signed(a, w), _to_signed(b, w)
                    y1 = np.where(y == 0, 1, y)
                    q = np.trunc(x / y1).astype(np.int64)
                    r = x - q * y1
                    return ((q if head == "div" else r).astype(_U64)) & m
                b1 = np.where(b == 0, _U64(1), b)
                return (a // b1 if head == "div" else a % b1) & m
            if head == "bfi":
                pos, ln = (int(x) for x in (self.value(ops[3], 32)[0], self.value(ops[4], 32)[0]))
                f = _mask(ln) << _U64(pos)
                return ((b & ~f) | ((a << _U64(pos)) & f)) & m
        return None

    def _event(self, i: Instr, sel: np.ndarray) -> None:
        lanes = np.nonzero(sel)[0]
        if not len(lanes):
            return
        vals: dict[str, np.ndarray] = {}
        if i.opcode.startswith("wgmma.fence"):
            self.touched[lanes] = False
        if i.opcode.startswith("wgmma.mma_async"):
            vals["unfenced"] = self.touched[lanes].copy()
        if i.opcode.startswith("wgmma.mma_async") and len(i.operands) >= 3:
            vals.update(self._wgmma_values(i, lanes))
        self._operand_values(i, lanes, vals)
        if "st" == i.parts[0] and len(i.operands) == 2 and "origin" not in vals:
            src = i.operands[1].strip()
            if src in self.origin:
                vals["origin"] = self.origin[src][lanes]
        self.events.append(Event(i.opcode, i.line, len(self.events), lanes, vals, i))
        if i.opcode.startswith("tcgen05.alloc") and vals.get("addr") is not None:
            self.tmem_slots.update(int(x) for x in vals["addr"])
        if i.opcode.startswith("tcgen05.ld.") and "32x32b" in i.parts and vals.get("addr") is not None:
            # register r of lane l: TMEM lane (address lane) + l, column (address column) + r
            lane = (self.t % 32).astype(np.uint64)
            taddr = np.zeros(self.n, dtype=_U64)
            taddr[lanes] = vals["addr"]
            dregs = [x.strip() for x in i.operands[0].strip("{}").split(",") if x.strip()]
            for r, name in enumerate(dregs):
                t_lane = ((taddr >> _U64(16)) + lane) & _U64(0x7FFF)
                t_col = ((taddr & _U64(0xFFFF)) + _U64(r)) & _U64(0xFFFF)
                tag = _U64(TMEM_TAG) | (t_lane << _U64(16)) | t_col
                if self.tmem_value is not None:      # the chosen f32 content of the TMEM cell
                    tag = np.asarray(self.tmem_value(t_lane, t_col), dtype=np.float32).view(
                        np.uint32).astype(_U64)
                self.write(name, tag, sel, 32)
        if i.opcode.startswith("wgmma.mma_async") and i.operands:
            # accumulator tags: D register r holds r + 1 (32-bit), or halves 2r + 1 | 2r + 2 (f16)
            half = len(i.parts) > 5 and i.parts[5] == "f16"
            dregs = [x.strip() for x in i.operands[0].strip("{}").split(",") if x.strip()]
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
            for r in i.operands[0].strip("{} ").split(","):
                z &= self.value(r.strip(), 32)[lanes] == 0
            return z
        vals = {"d_zero": self._known(d_zero)}
        if len(i.operands) > 3:
            vals["scale_d"] = self._known(lambda: self.value(i.operands[3].strip(), 1)[lanes])
        if i.operands[1].strip().startswith("{"):       # A from registers: (registers, lanes)
            vals["a_regs"] = self._known(lambda: np.stack(
                [self.value(r.strip(), 32)[lanes] for r in i.operands[1].strip("{} ").split(",")]))
        for key, text in (("desc_a", i.operands[1]), ("desc_b", i.operands[2])):
            if not text.strip().startswith("{"):
                vals[key] = self._known(lambda text=text: self.value(text, 64)[lanes])
        return vals

    def _operand_values(self, i: Instr, lanes: np.ndarray, vals: dict) -> None:
        """Law: adds to ``vals`` each operand's per-lane value in order: ``addr`` for the first
        address (later ones ``a<k>``), ``map``/``c<j>`` for a tensor-map operand, ``a<k>`` for
        registers and vector members, ``origin`` of the first tagged register; None if unknown."""
        k = 0
        for text in i.operands:
            t = text.strip()
            try:
                if t.startswith("["):
                    inner = t[1:-1].strip()
                    if "," in inner:               # [map, {c0, c1}]: "map", "c0", "c1"
                        first, rest = inner.split(",", 1)
                        vals["map"] = self.value(first.strip(), 64)[lanes]
                        for j, r in enumerate(re.findall(r"%[\w$]+|-?\d+", rest)):
                            vals[f"c{j}"] = self.value(r, 32)[lanes]
                        continue
                    key = "addr" if "addr" not in vals else f"a{k}"
                    vals[key] = self.address(t)[lanes]
                    if key != "addr":
                        k += 1
                    continue
                if t.startswith("{"):
                    for r in [x.strip() for x in t.strip("{}").split(",") if x.strip()]:
                        vals[f"a{k}"] = self.value(r, 64)[lanes] if r.startswith("%rd") else \
                            self.value(r, 32)[lanes]
                        if r in self.origin:
                            vals.setdefault("origin", self.origin[r][lanes])
                        k += 1
                    continue
                w = 64 if t.startswith("%rd") else 32
                vals[f"a{k}"] = self.value(t, w)[lanes]
                if t in self.origin:
                    vals["origin"] = self.origin[t][lanes]
            except _Unknown:
                vals[f"a{k}"] = None
            k += 1


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
    ntid = ntid or max(threads) + 1
    special = {"%tid.x": tid, "%tid.y": 0, "%tid.z": 0, "%ntid.x": ntid, "%ntid.y": 1,
               "%ntid.z": 1, "%ctaid.x": ctaid, "%ctaid.y": 0, "%ctaid.z": 0, "%nctaid.x": nctaid,
               "%nctaid.y": 1, "%nctaid.z": 1, "%laneid": tid % _U64(32),
               "%warpid": tid // _U64(32), "%cluster_ctarank": cluster_rank,
               "%cluster_nctarank": cluster_size}
    names = {**_param_names(mod, func, dict(param_values or {})), **(params or {})}
    mach = _Machine(mod, func, threads, special, names, {s: shared_base for s in mod.shared},
                    stop, load_value)
    mach.float_tags = float_tags
    mach.tmem_value = tmem_value
    return _run(mach, threads, max_steps)


def _param_names(mod: PtxModule, func: str, pv: dict) -> dict:
    """Law: each parameter symbol ``<name>_param_<i>`` that ``func``'s operands name, with
    ``i`` a key of ``pv``, maps to ``pv[i]``."""
    names = {}
    for i in mod.instrs:
        if i.func != func:
            continue
        for o in i.operands:
            m = re.search(r"([\w$]+_param_(\d+))", o)
            if m and int(m.group(2)) in pv:
                names[m.group(1)] = pv[int(m.group(2))]
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
        if ins.parts[0] in ("ret", "exit") and ins.pred is None:
            done |= sel
            continue
        try:
            taken = mach.step(ins, sel)
        except _Unknown as e:
            return RunResult(tuple(mach.events), False, f"PTX line {ins.line}: {ins.opcode} reads "
                             f"{e.args[0]}, which is not modelled", tuple(threads))
        if taken is not None:
            tgt = mach.labels.get(ins.operands[0].strip()) if ins.operands else None
            if tgt is None:
                return RunResult(tuple(mach.events), False, f"PTX line {ins.line}: branch to an "
                                 "unknown label", tuple(threads))
            pc = np.where(taken, tgt, np.where(sel, pc + 1, pc))
        else:
            pc = np.where(sel, pc + 1, pc)
    return RunResult(tuple(mach.events), True, "", tuple(threads))
