"""A CuTe-DSL kernel's ``ldmatrix`` and the ``mma.sync`` it feeds, proved against the MLIR: each register
element an ``ldmatrix`` loads is the element of the shared buffer the tiled copy's thread-value layout
assigns to that thread and value (check ``smem-copy``, the direction shared -> registers of the
``stmatrix`` check in :mod:`verilayout.audit.cute_dsl_copies`), and each ``mma.sync`` A, B and C operand
register holds the element the PTX ISA fragment wants for the tiled MMA's partition of the tile (check
``mma-operand``: a different question, the registers against the MMA, not the memory against the copy).

The plan (:func:`ldsm_plans`): each ``cute.tiled.copy.partition_S(%copy, %view, ...)`` whose tiled copy is an
``!cute_nvgpu.atom.ldsm<..., num_matrices = N, n|t>`` atom (``t``: ``.trans``) names the shared buffer it
reads: its memref ``(MN, K, stage...)`` (:class:`verilayout.audit.cute_dsl_copies.CopyPlan`: the same
reading as the ``stmatrix`` buffer: swizzle on byte addresses, stage offsets, the byte offset in the
allocation from the dataflow), its ``layout_copy_tv`` (thread, value) -> a coordinate of the
``tiler_mn`` tile ``TM x TK`` (column-major: ``(c mod TM, c div TM)``).

Law (``ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16``; PTX ISA 9.7.9.x ``ldmatrix``, Data
Movement and Conversion Instructions): lanes ``8j .. 8j+7`` give the row addresses of matrix ``j``; lane
``l`` receives in register ``j`` the two 16-bit elements ``(row l/4, columns 2 (l%4), 2 (l%4)+1)`` of
matrix ``j``, or with ``.trans`` ``(rows 2 (l%4), 2 (l%4)+1, column l/4)``; a row is 8 elements, 16 bytes.
So half ``h`` of register ``j`` of thread ``t`` holds the element at byte ``row address(lane 8j + l/4) +
4 (l%4) + 2h`` (``.trans``: ``row address(lane 8j + 2 (l%4) + h) + 2 (l/4)``), which the buffer's memref
places at ``(r, c)`` of stage ``s`` (the inverse of ``swizzle(origin + stage + layout(r, c))``, by brute
force over the memref). The tiled copy wants value ``v = 2j + h`` of thread ``t`` (the copy atom's
destination: the thread's 16-bit values in register order): ``(r, c) = (m + i TM, k + kb TK)`` with
``(m, k)`` the tiler coordinate ``layout_copy_tv(t, v)``, for one tile ``(i, kb)`` and one stage ``s`` per
instruction (the copy's iteration); the ``ldmatrix`` of one address register (one ``cute.copy``) read one
stage.

``mma.sync.aligned.m16n8k16.row.col`` (PTX ISA 9.7.14.5.8, "Matrix Fragments for mma.m16n8k16" with
floating point type): thread ``t`` (warp ``w``, lane ``l``, group ``g = l/4``, ``q = l%4``) holds A
element ``i`` (register ``i/2``, half ``i%2``) at ``(g + 8 ((i/2) % 2), 2q + i%2 + 8 (i/4))``, B element
``i`` at ``(k, n) = (2q + i%2 + 8 (i/2), g)``, C/D element ``i`` at ``(g + 8 (i/2), 2q + i%2)``. The tiled
MMA (``atom_layout_MNK``: warp ``w`` is atom ``(wm, wn)``; an identity ``permutation_MNK``) puts that at
``(m0 + 16 wm + row, k0 + col)`` of A's (M, K) buffer tile and ``(n0 + 8 wn + n, k0 + k)`` of B's (N, K)
one, for one block ``(m0, n0, k0)`` per instruction (``m0`` a multiple of ``16 Am``, ``n0`` of ``8 An``,
``k0`` of 16), A and B from one stage, and it accumulates into ``C[m0 + 16 wm + row, n0 + 8 wn + col]``:
its C registers hold those elements (the previous ``mma.sync`` of the block left them) or a constant (the
zero the accumulator starts from); over the function the instructions cover each block of the tile once.

Tags (:mod:`verilayout.audit.ptx_shuffles`' run, each loop body twice): after each ``ldmatrix`` its
registers hold the buffer elements its addresses read (the address at the first loop iteration where a
loop-carried register enters it: ``data["addresses"]``); after each ``mma.sync`` its D registers hold its
block's C elements. Verdicts: ``proved``; an ``error`` at the PTX line naming thread, register, the wanted
and the found element (an ``ldmatrix``; an ``mma.sync``; an instruction computing a wrong ``ldmatrix``
address that no proved ``ldmatrix`` reads: a tie); ``unchecked`` with the reason (an address that is not a
function of ``%tid``, a copy whose values span several instructions, no ``ldsm`` copy in the MLIR, a
permuted tiled MMA, a register that holds no traced element).

>>> ldmatrix_source(np.array([5]), 2, 1, False), ldmatrix_source(np.array([5]), 2, 1, True)
((array([17]), array([6])), (array([19]), array([2])))
"""
from __future__ import annotations

import functools
import itertools
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from verilayout.audit.cute_dsl_copies import (CHECK, CopyPlan, address_chain, address_values, buffer_plan, operand_type,
                                              reaching_threads, smem_partitions, stmatrix_rows)
from verilayout.audit.model import Check
from verilayout.audit.ptx_shuffles import Frag, TagRun, Val, frag_a, frag_b, frag_d, schedule, step_tags
from verilayout.core.cute.int_tuple import product
from verilayout.core.cute.layout import Layout
from verilayout.errors import LayoutError
from verilayout.frontends.cute_mlir import CuteModule, Memref, TiledCopy, mma_permutation, tiled_copy
from verilayout.frontends.cute_text import parse_cute
from verilayout.hw.nvidia.ptx_model import Addr, Instr, PtxModule, Reg, Vec
from verilayout.prove.ptx_values import PtxValues

__all__ = ["MMA_CHECK", "LdsmPlan", "ldsm_plans", "ldmatrix_checks", "ldmatrix_source"]

MMA_CHECK = "mma-operand"
#: tag of element C[m, n] of product ``p``'s accumulator: ``end + (p * _C_COLS + m) * _C_COLS + n`` (after
#: the buffers' elements); decoded with the source code ``_ACC + p``
_C_COLS = 1 << 12
_ACC = 1 << 20


@dataclass(frozen=True)
class LdsmPlan:
    """One ``ldsm`` tiled copy: the buffer it reads, its thread-value layout over a ``TM x TK`` tiler tile,
    whether it transposes, and the MLIR line of its ``partition_S``."""

    buffer: CopyPlan
    tv: Layout
    tiler: tuple[int, int]
    trans: bool
    line: int
    #: the TV layout at every (thread, value) index, thread fastest (evaluated once)
    coords: tuple[int, ...] = ()

    @property
    def values(self) -> int:
        """16-bit values per thread of one copy (the TV layout's value mode)."""
        return int(product(self.tv.shape[1]))


def _tiler(modes: tuple[str, ...]) -> tuple[int, int]:
    """``("32:1", "16:1")`` -> ``(32, 16)``: the tile of identity modes (a permuting tiler is refused)."""
    lays = [parse_cute(m) for m in modes]
    if len(lays) != 2 or any(m.stride not in (1, 0) or not isinstance(m.shape, int) for m in lays):
        raise LayoutError(f"tiler {modes}: only identity modes N:1 are read")
    return int(lays[0].shape), int(lays[1].shape)


def _ldsm_plan(cp: TiledCopy, mem: Memref, line: int, origin: int | None) -> LdsmPlan:
    tv = parse_cute(cp.tv)
    if not isinstance(tv, Layout) or not isinstance(tv.shape, tuple) or len(tv.shape) != 2:
        raise LayoutError(f"MLIR line {line}: layout_copy_tv {cp.tv} is not (thread, value)")
    coords = tuple(int(tv(i)) for i in range(int(product(tv.shape))))
    return LdsmPlan(buffer_plan(mem, line, origin), tv, _tiler(cp.tiler), cp.atom_args[-1:] == ("t",), line, coords)


def ldsm_plans(mod: CuteModule, origin_of: Callable[[str, int], int | None] | None = None) -> list[LdsmPlan]:
    """Every ``ldsm`` tiled copy's source buffer and thread-value layout (see the module docstring).

    >>> ldsm_plans(CuteModule((), {}, {}))
    []
    """
    out = []
    for op, cp, mem, origin in smem_partitions(mod, "cute.tiled.copy.partition_S", origin_of):
        if getattr(cp, "name", "") != "cute.tiled_copy":
            continue
        try:
            copy = tiled_copy(cp)
            if copy.atom != "cute_nvgpu.atom.ldsm":
                continue
            out.append(_ldsm_plan(copy, mem, op.line, origin))
        except (LayoutError, KeyError, ValueError):
            continue
    return out


def ldmatrix_source(lane: np.ndarray, j: int, h: int, trans: bool) -> tuple[np.ndarray, np.ndarray]:
    """PTX ISA ``ldmatrix`` (``.b16``): for half ``h`` of register ``j`` of each ``lane``, the lane that
    supplies the row address and the byte offset in that row.

    >>> ldmatrix_source(np.array([0, 31]), 0, 0, False)
    (array([0, 7]), array([ 0, 12]))
    """
    if trans:
        return 8 * j + 2 * (lane % 4) + h, 2 * (lane // 4)
    src, off = stmatrix_rows(lane, j)
    return src, off + 2 * h


# ----- the buffers' elements: brute force over the memref ----------------------------------------------

@dataclass(frozen=True)
class _Table:
    """Every element of the plans' buffers: ``at[byte]`` its tag (0: none), ``fields[tag]`` = (buffer,
    row, col, stage index) of each tag."""

    at: np.ndarray
    fields: np.ndarray
    end: int


def _table(plans: list[LdsmPlan]) -> _Table:
    """The inverse of each buffer's memref: the tag of the element that starts at each shared byte (tags
    numbered stage, then column, then row within a buffer; where two elements start at one byte, the later
    tag). Each buffer's addresses are one numpy expression, swizzled as arrays."""
    addrs, fields, tag = [], [np.full((1, 4), -1, dtype=np.int64)], 1
    for b, p in enumerate(plans):
        cp = p.buffer
        st, co, ro = (np.asarray(x, dtype=np.int64) for x in (cp.stages, cp.cols[:cp.en], cp.rows[:cp.em]))
        base = (cp.origin or 0) + st[:, None, None] + co[None, :, None] + ro[None, None, :]
        addrs.append(np.asarray(cp.swizzle(base.ravel()), dtype=np.int64))
        s, c, r = (g.ravel() for g in np.meshgrid(np.arange(len(st)), np.arange(len(co)), np.arange(len(ro)),
                                                  indexing="ij"))
        fields.append(np.stack([np.full(len(s), b), r, c, s], axis=1).astype(np.int64))
        tag += len(s)
    a = np.concatenate(addrs) if addrs else np.zeros(0, dtype=np.int64)
    at = np.zeros(int(a.max(initial=0)) + 1, dtype=np.int64)
    np.maximum.at(at, a, np.arange(1, tag, dtype=np.int64))      # the later tag where two share a byte
    return _Table(at, np.concatenate(fields), tag)


def _lookup(tab: _Table, addr: np.ndarray) -> np.ndarray:
    """The tag of the element at each byte address (0 outside every buffer)."""
    ok = (addr >= 0) & (addr < len(tab.at))
    return np.where(ok, tab.at[np.clip(addr, 0, len(tab.at) - 1)], 0)


# ----- the ldmatrix check ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Load:
    """One ``ldmatrix`` over its threads (flat arrays): thread, register, half, element tag read."""

    thread: np.ndarray
    reg: np.ndarray
    half: np.ndarray
    tag: np.ndarray


def _loaded(ins: Instr, addr: np.ndarray, reach: np.ndarray, trans: bool, tab: _Table) -> _Load:
    """What each reaching thread's registers receive (PTX ISA ldmatrix), as element tags."""
    tid = np.flatnonzero(reach)
    cols = []
    for j in range(len(ins.args[0].items)):
        for h in range(2):
            src, off = ldmatrix_source(tid % 32, j, h, trans)
            cols.append((tid, np.full_like(tid, j), np.full_like(tid, h), _lookup(tab, addr[(tid & ~31) | src] + off)))
    t, j, h, tag = (np.concatenate(x) for x in zip(*cols))
    return _Load(t, j, h, tag)


def _tile_coords(p: LdsmPlan, got: _Load) -> tuple[np.ndarray, np.ndarray]:
    """(m, k) of the tiler tile the TV layout gives each (thread, value ``2 reg + half``)."""
    nt = int(product(p.tv.shape[0]))
    idx = (got.thread % nt) + nt * (2 * got.reg + got.half)
    c = np.array(p.coords, dtype=np.int64)[idx]
    return c % p.tiler[0], c // p.tiler[0]


def _tile_offset(p: LdsmPlan, dr: np.ndarray, dc: np.ndarray, st: np.ndarray) -> tuple[int, int, int]:
    """The (row, col) offset of whole tiles and the stage that place most elements (the instruction's copy
    iteration); where none is whole, the most common offset rounded down to whole tiles."""
    whole = (dr % p.tiler[0] == 0) & (dc % p.tiler[1] == 0)
    key = Counter(zip(dr[whole].tolist(), dc[whole].tolist(), st[whole].tolist()))
    if key:
        return key.most_common(1)[0][0]
    key = Counter(zip(dr.tolist(), dc.tolist(), st.tolist()))
    if not key:
        return 0, 0, 0
    r, c, s = key.most_common(1)[0][0]
    return r // p.tiler[0] * p.tiler[0], c // p.tiler[1] * p.tiler[1], s


def _element_text(p: LdsmPlan, r: int, c: int, s: int) -> str:
    return f"[{r}, {c}] of stage {s}" if r >= 0 else "no element of the buffer"


def _verdict(ins: Instr, p: LdsmPlan, got: _Load, tab: _Table, b: int) -> tuple[str, str, dict]:
    """Compare one ``ldmatrix``'s elements with the copy's TV layout; (status, message, data)."""
    f = tab.fields[got.tag]
    m, k = _tile_coords(p, got)
    ok = (f[:, 0] == b)
    di, dk, s = _tile_offset(p, f[ok, 1] - m[ok], f[ok, 2] - k[ok], f[ok, 3])
    bad = np.flatnonzero(~ok | (f[:, 1] != m + di) | (f[:, 2] != k + dk) | (f[:, 3] != s))
    tile_ok = di % p.tiler[0] == 0 and dk % p.tiler[1] == 0
    data = {"tile": (di // p.tiler[0], dk // p.tiler[1]), "stage": s, "plan_line": p.line, "buffer": b,
            "threads": int(len(np.unique(got.thread)))}
    if not len(bad) and tile_ok:
        return "proved", (f"{ins.opcode}: every element of every thread ({data['threads']} threads) is the one the "
                          f"tiled copy (MLIR line {p.line}) assigns to its value: tile {data['tile']} of "
                          f"{p.tiler[0]}x{p.tiler[1]}, stage {s}"), data
    i = int(bad[0]) if len(bad) else 0
    t, reg = int(got.thread[i]), _name(ins.args[0].items[int(got.reg[i])])
    want = (int(m[i] + di), int(k[i] + dk), s)
    found = _element_text(p, *(int(x) for x in f[i, 1:])) if f[i, 0] in (b, -1) else f"an element of another buffer"
    why = "" if tile_ok else f"; the tile offset ({di}, {dk}) is not a whole tile of {p.tiler[0]}x{p.tiler[1]}"
    return "error", (f"{ins.opcode}: thread {t} (warp {t // 32}, lane {t % 32}) register {reg} half {int(got.half[i])} "
                     f"holds {found}, but the tiled copy (MLIR line {p.line}) wants [{want[0]}, {want[1]}] of stage "
                     f"{s} there ({len(bad)} of {len(got.tag)} elements wrong){why}"), \
        dict(data, thread=t, register=str(reg), half=int(got.half[i]), want=want,
             got=tuple(int(x) for x in f[i, 1:]))


def _name(x: Any) -> str:
    return x.name if isinstance(x, Reg) else str(x)


def _check(ins: Instr, name: str, status: str, message: str, data: dict) -> Check:
    return Check(ins.parts[0], ins.line, ins.loc, name, status, "error" if status == "error" else None, message,
                 dict(data, source="ptx", plan="cute-dsl mlir"))


def _unchecked(ins: Instr, why: str, name: str = CHECK) -> Check:
    return _check(ins, name, "unchecked", f"{ins.opcode}: {why}", {"reason": why})


def _unmodelled(ins: Instr, plans: list[LdsmPlan]) -> str | None:
    if "m8n8" not in ins.parts or "b16" not in ins.parts:
        return "only ldmatrix .m8n8 .b16 is modelled"
    if ins.guard is not None:
        return "a predicated ldmatrix (its guard is not evaluated per thread)"
    if not isinstance(ins.args[0], Vec) or len(ins.args) < 2:
        return "its operands are not a register vector and an address"
    if not plans:
        return "no ldsm tiled copy of the MLIR (with a stated buffer offset) describes what this ldmatrix reads"
    return None


def _pick(plans: list[LdsmPlan], tabs: _Table, ins: Instr, addr: np.ndarray, reach: np.ndarray,
          unplaced: str = "") -> tuple[int, _Load] | str:
    """The plan whose buffer (and transposition) the instruction reads, with what it loads."""
    trans = "trans" in ins.parts
    fits = [b for b, p in enumerate(plans) if p.values == 2 * len(ins.args[0].items)]
    if not fits:
        return f"no ldsm tiled copy of the MLIR has {2 * len(ins.args[0].items)} values per thread"
    got = _loaded(ins, addr, reach, trans, tabs)
    hits = Counter(tabs.fields[got.tag[got.tag > 0], 0].tolist())
    if not hits and unplaced:
        return f"it reads no element of a placed ldsm buffer, and the MLIR states no offset for {unplaced}"
    return max(fits, key=lambda x: hits.get(x, 0)), got         # reading no buffer's element is an error


def _ldmatrix_check(ins: Instr, plans: list[LdsmPlan], tab: _Table, evs: tuple, memo: dict,
                    threads: int, unplaced: str = "") -> tuple[Check, _Load | None, int | None]:
    """The ``smem-copy`` check of one ``ldmatrix`` (with what it loads and its plan's index when read)."""
    why = _unmodelled(ins, plans)
    if why:
        return _unchecked(ins, why), None, None
    found = address_values(evs, ins, memo, threads, 1)
    if isinstance(found, str):
        return _unchecked(ins, found), None, None
    addr, how = found
    reach = reaching_threads(evs[0], ins, memo, threads)
    if not reach.any():
        return _unchecked(ins, "no thread reaches it (its branch guards on %tid)"), None, None
    picked = _pick(plans, tab, ins, addr, reach, unplaced)
    if isinstance(picked, str):
        return _unchecked(ins, picked), None, None
    b, got = picked
    p = plans[b]
    if p.trans != ("trans" in ins.parts):
        t = int(np.flatnonzero(reach)[0])
        return _check(ins, CHECK, "error", (f"{ins.opcode}: the tiled copy (MLIR line {p.line}) is an ldsm atom "
                                            f"{'with' if p.trans else 'without'} .trans (thread {t} and every other "
                                            f"receive the transposed elements)"),
                      {"plan_line": p.line, "thread": t, "trans": p.trans}), got, b
    status, msg, data = _verdict(ins, p, got, tab, b)
    return _check(ins, CHECK, status, msg, dict(data, addresses=how)), got, b


def _same_stage(checks: list[Check], instrs: dict[int, Instr]) -> list[Check]:
    """The ``ldmatrix`` of one address register (one copy: its tiles at constant offsets) read one stage: a
    proved one whose stage is not its siblings' most common one becomes an error."""
    def base(c: Check) -> str | None:
        a = instrs[c.line].args[1] if len(instrs[c.line].args) > 1 else None
        return a.base.name if isinstance(a, Addr) and isinstance(a.base, Reg) else None

    groups: dict[tuple, list[Check]] = {}
    for c in checks:
        if c.status == "proved" and base(c):
            groups.setdefault((base(c), c.data["buffer"]), []).append(c)
    odd: dict[int, str] = {}
    for (reg, _b), cs in groups.items():
        common = Counter(c.data["stage"] for c in cs).most_common(1)[0][0]
        for c in cs:
            if c.data["stage"] != common:
                odd[c.line] = (f"{c.op}: reads stage {c.data['stage']} of the buffer (MLIR line {c.data['plan_line']}), "
                               f"but the other ldmatrix of its copy (address register {reg}) read stage {common}")
    return [c if c.line not in odd else Check(c.op, c.line, c.loc, c.check, "error", "error", odd[c.line],
                                                dict(c.data, want_stage=c.data["stage"]))
            for c in checks]


def _address_blame(checks: list[Check], at: dict[int, Instr], ev: PtxValues) -> list[Check]:
    """An error (a tie) at each instruction computing a wrong ``ldmatrix``'s address register that no proved
    ``ldmatrix``'s address reads."""
    def base(line: int) -> str | None:
        a = at[line].args[1] if len(at[line].args) > 1 else None
        return a.base.name if isinstance(a, Addr) and isinstance(a.base, Reg) else None

    good: set[int] = set()
    for c in checks:
        if c.status == "proved" and base(c.line):
            good |= address_chain(ev, base(c.line))
    out, seen = [], set()
    for c in checks:
        if c.status != "error" or "thread" not in c.data or not base(c.line):
            continue
        for line in sorted(address_chain(ev, base(c.line)) - good - seen):
            seen.add(line)
            out.append(Check(at[line].opcode, line, at[line].loc, CHECK, "error", "error",
                             f"computes the address of the ldmatrix at PTX line {c.line}, which is wrong, and no proved "
                             f"ldmatrix's address reads it (the error is here or at the ldmatrix: a tie): {c.message}",
                             dict(c.data, ldmatrix_line=c.line)))
    return out


# ----- mma.sync: the operands against the tiled MMA ------------------------------------------------------------

@dataclass(frozen=True)
class _Mma:
    """The tiled MMA of an ``mma.sync``: the ldsm buffers (plan indices) the MLIR partitions as its A and as
    its B, each warp's atom (wm, wn) and the block multiples (M, N, K)."""

    a: tuple[int, ...]
    b: tuple[int, ...]
    wm: tuple[int, ...]
    wn: tuple[int, ...]
    step: tuple[int, int, int]


def _warps(atom_layout: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(wm, wn) of each warp ``w``: the atom coordinate at which the atom layout is ``w``."""
    lay = parse_cute(atom_layout)
    shape = lay.shape if isinstance(lay.shape, tuple) else (lay.shape,)
    dims = [int(product(s)) for s in shape] + [1, 1]
    n = int(product(shape))
    wm, wn = [0] * n, [0] * n
    for i in range(n):
        w = int(lay(i))
        if w < n:
            wm[w], wn[w] = i % dims[0], (i // dims[0]) % dims[1]
    return tuple(wm), tuple(wn)


def _partitioned(mod: CuteModule, value: str, plans: list[LdsmPlan],
                 origin_of: Callable[[str, int], int | None] | None) -> dict[str, tuple[int, ...]]:
    """The ldsm buffers each ``cute.tiled.mma.partition A|B (value, view)`` names (same memref and offset)."""
    out: dict[str, list[int]] = {"A": [], "B": []}
    for op in mod.ops:
        if op.name != "cute.tiled.mma.partition" or not op.words or op.words[0] not in out \
                or len(op.operands) < 2 or op.operands[0] != value:
            continue
        mem, org = operand_type(mod, op, 1), origin_of(op.operands[1], op.line) if origin_of else None
        out[op.words[0]] += [b for b, p in enumerate(plans) if org is not None and p.buffer.origin == org
                             and isinstance(mem, Memref) and p.buffer.memref.layout == mem.layout]
    return {k: tuple(sorted(set(v))) for k, v in out.items()}


def _mma_plan(mod: CuteModule, mma_plans: list, plans: list[LdsmPlan],
              origin_of: Callable[[str, int], int | None] | None) -> _Mma | str:
    """The one sm_80 tiled MMA whose A and B buffers are ldsm buffers, or why there is none."""
    for mp in mma_plans:
        if mp.mma.arch != "sm80" or mp.operand("A") is None or mp.operand("B") is None:
            continue
        perm = mma_permutation(mp.mma)
        if any(not m.endswith(":1") for m in perm):
            return f"the tiled MMA (MLIR line {mp.operand('A').line}) permutes its tile: [{';'.join(perm)}]"
        bufs = _partitioned(mod, mp.value, plans, origin_of)
        if not bufs["A"] or not bufs["B"]:
            return "the tiled MMA's operand buffers are not those of the MLIR's ldsm copies"
        wm, wn = _warps(mp.mma.atom_layout)
        am, an, _ = mp.mma.atoms
        m, n, k = mp.mma.shape
        return _Mma(bufs["A"], bufs["B"], wm, wn, (m * am, n * an, k))
    return "the MLIR has no sm_80 tiled MMA with both operands in ldsm buffers"


def _c_base(tab: _Table) -> int:
    return tab.end


def _operand_regs(ins: Instr, slot: int) -> list:
    a = ins.args[slot] if len(ins.args) > slot else None
    return list(a.items) if isinstance(a, Vec) else []


def _half_elements(tags: np.ndarray, h: int) -> np.ndarray:
    """The element of 16-bit half ``h`` of a 32-bit register's tags per thread (0: none or a mix)."""
    e = tags[:, 2 * h] // 8
    ok = (tags[:, 2 * h] == e * 8) & (tags[:, 2 * h + 1] == e * 8 + 1) & (e > 0)
    return np.where(ok, e, 0)


def _halves(run: Any, regs: list) -> np.ndarray | None:
    """Element tags of each 16-bit half (threads x 2 per register), None when a register is untraced."""
    cols = []
    for x in regs:
        v = run.val(x)
        if v is None or v.tags.shape[1] < 4:
            return None
        cols.extend([_half_elements(v.tags, 0), _half_elements(v.tags, 1)])
    return np.stack(cols, axis=1)


@dataclass(frozen=True)
class _Seen:
    """An ``mma.sync`` at a visit: its A, B, C operand tags (threads x elements) and their writers."""

    ins: Instr
    a: np.ndarray | None
    b: np.ndarray | None
    c: np.ndarray | None
    writers: tuple


def _writer(run: Any, x: Any) -> int | None:
    v = run.val(x)
    return v.ins.line if v is not None and v.ins is not None else None


def _c_tags(ins: Instr, block: tuple[int, int, int], mp: _Mma, tab: _Table, threads: int) -> dict[str, Val]:
    """The C elements an ``mma.sync`` leaves in its D registers (PTX ISA C/D fragment of its block ``(m0, n0,
    product)``)."""
    tid = np.arange(threads)
    lane, warp = tid % 32, tid // 32
    f = Frag("mma", 16, 8, 16, 16, 16)
    wm, wn = np.array(mp.wm)[warp % len(mp.wm)], np.array(mp.wn)[warp % len(mp.wn)]
    out = {}
    for i, x in enumerate(_operand_regs(ins, 0)):
        r, c = frag_d(f, lane, warp, i)
        e = _c_base(tab) + (block[2] * _C_COLS + block[0] + 16 * wm + r) * _C_COLS + block[1] + 8 * wn + c
        if isinstance(x, Reg):
            out[x.name] = Val(e[:, None] * 8 + np.arange(4)[None, :], ins, ())
    return out


def _run(ptx: PtxModule, func: str, ev: PtxValues, loads: dict, mp: _Mma | None, tab: _Table,
         threads: int) -> tuple[dict[int, list[_Seen]], dict]:
    """Run the function's schedule on tags: each ``ldmatrix`` leaves the elements it reads, each ``mma.sync``
    its block's C elements; the operands of each ``mma.sync`` at each visit, and the products' numbers."""
    run = TagRun(ev, threads)
    seen: dict[int, list[_Seen]] = {}
    pairs: dict = {}
    for ins in schedule(ptx, func):
        if ins.opcode.startswith("mma.sync") and len(ins.args) == 4:
            ops = [_halves(run, _operand_regs(ins, s)) for s in (1, 2)]
            cs = [run.val(x) for x in _operand_regs(ins, 3)]
            c = None if any(v is None for v in cs) else np.stack([v.tags[:, 0] for v in cs], axis=1)
            seen.setdefault(id(ins), []).append(_Seen(ins, ops[0], ops[1], c, tuple(
                _writer(run, x) for x in _operand_regs(ins, 1) + _operand_regs(ins, 2))))
        step_tags(run, ins)
        if id(ins) in loads:
            run.regs.update(_load_tags(ins, loads[id(ins)], threads))
        if id(ins) in seen and mp is not None:
            block = _block(seen[id(ins)][-1], mp, tab, pairs)
            if block is not None and block[2] < _C_COLS:
                run.regs.update(_c_tags(ins, block, mp, tab, threads))
    return seen, pairs


def _load_tags(ins: Instr, got: _Load, threads: int) -> dict[str, Val]:
    """The tags an ``ldmatrix`` leaves in its registers: two 16-bit elements each."""
    out = {}
    for j, x in enumerate(ins.args[0].items):
        if not isinstance(x, Reg):
            continue
        tags = np.zeros((threads, 4), dtype=np.int64)
        for h in range(2):
            sel = (got.reg == j) & (got.half == h)
            e = np.zeros(threads, dtype=np.int64)
            e[got.thread[sel]] = got.tag[sel]
            tags[:, 2 * h] = np.where(e > 0, e * 8, 0)
            tags[:, 2 * h + 1] = np.where(e > 0, e * 8 + 1, 0)
        out[x.name] = Val(tags, ins, ())
    return out


@functools.lru_cache(maxsize=64)
def _expected(mp: _Mma, threads: int, operand: str) -> tuple[np.ndarray, np.ndarray]:
    """(row, col) of each thread's A elements (M, K) or B elements (N, K) relative to the block origin: the
    PTX ISA m16n8k16 fragments placed at the warp's atom (read-only arrays, once per tiled MMA)."""
    return tuple(_frozen(x) for x in _expected_fresh(mp, threads, operand))


def _frozen(x: np.ndarray) -> np.ndarray:
    x.setflags(write=False)
    return x


def _expected_fresh(mp: _Mma, threads: int, operand: str) -> tuple[np.ndarray, np.ndarray]:
    tid = np.arange(threads)
    lane, warp = tid % 32, tid // 32
    f = Frag("mma", 16, 8, 16, 16, 16)
    if operand == "A":
        wm = np.array(mp.wm)[warp % len(mp.wm)]
        rc = [frag_a(f, lane, warp, i) for i in range(8)]
        return np.stack([16 * wm + r for r, _ in rc], axis=1), np.stack([c for _, c in rc], axis=1)
    wn = np.array(mp.wn)[warp % len(mp.wn)]
    kn = [frag_b(f, lane, i) for i in range(4)]
    return np.stack([8 * wn + n for _, n in kn], axis=1), np.stack([k for k, _ in kn], axis=1)


#: :func:`_decode`'s recent answers by the identity of (tags, table), each kept with both (so no identity is
#: reused while it is here): an ``mma.sync``'s operands are decoded by each of its checks
_DECODED: dict[tuple[int, int], tuple] = {}


def _decode(tags: np.ndarray, tab: _Table) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(source, row, col, stage) of element tags: a buffer's index and its element, or ``_ACC + p`` and
    C[row, col] of product ``p``'s accumulator (stage -1); source -1 for no element (read-only arrays)."""
    key = (id(tags), id(tab))
    got = _DECODED.get(key)
    if got is not None and got[0] is tags and got[1] is tab:
        return got[2]
    out = tuple(_frozen(x) for x in _decode_fresh(tags, tab))
    if len(_DECODED) >= 64:
        _DECODED.clear()
    _DECODED[key] = (tags, tab, out)
    return out


def _decode_fresh(tags: np.ndarray, tab: _Table) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    t = np.asarray(tags)
    f = tab.fields[np.clip(t, 0, tab.end - 1)]
    src = np.where((t > 0) & (t < tab.end), f[..., 0], -1)
    e = t - tab.end
    acc = e >= 0
    return (np.where(acc, _ACC + e // (_C_COLS * _C_COLS), src), np.where(acc, (e // _C_COLS) % _C_COLS, f[..., 1]),
            np.where(acc, e % _C_COLS, f[..., 2]), np.where(acc, -1, f[..., 3]))


def _source_of(tags: np.ndarray, tab: _Table, allowed: tuple[int, ...], acc: bool) -> int | None:
    """The source (one of the ``allowed`` buffers, or with ``acc`` an accumulator) most of an operand's
    elements come from; None if none does."""
    src = _decode(tags, tab)[0].ravel()
    keep = np.isin(src, np.asarray(allowed, dtype=src.dtype)) | ((src >= _ACC) if acc else False)
    vals = src[keep]
    if not vals.size:
        return None
    u, first, count = np.unique(vals, return_index=True, return_counts=True)
    best = count == count.max()                 # a tie: the value seen first (as Counter.most_common keeps)
    return int(u[best][np.argmin(first[best])])


def _offsets(tags: np.ndarray, rel: tuple[np.ndarray, np.ndarray], tab: _Table, src: int | None) -> tuple | None:
    """The one (row offset, col offset, stage) that places every element from ``src``, or None."""
    got, r, c, st = _decode(tags, tab)
    if src is None or (got != src).any():
        return None
    dr, dc = r - rel[0], c - rel[1]
    one = (dr == dr.flat[0]).all() and (dc == dc.flat[0]).all() and (st == st.flat[0]).all()
    return (int(dr.flat[0]), int(dc.flat[0]), int(st.flat[0])) if one else None


def _block(seen: _Seen, mp: _Mma, tab: _Table, pairs: dict) -> tuple[int, int, int] | None:
    """(m0, n0, product) of an ``mma.sync`` whose A and B place as one block, else None; a new (A source, B
    buffer) pair gets the next product number."""
    if seen.a is None or seen.b is None:
        return None
    n = seen.a.shape[0]
    sa, sb = _source_of(seen.a, tab, mp.a, True), _source_of(seen.b, tab, mp.b, False)
    a = _offsets(seen.a, _expected(mp, n, "A"), tab, sa)
    b = _offsets(seen.b, _expected(mp, n, "B"), tab, sb)
    if a is None or b is None:
        return None
    return a[0], b[0], pairs.setdefault((sa, sb), len(pairs))


def _first_wrong(tags: np.ndarray, rel: tuple[np.ndarray, np.ndarray], tab: _Table,
                 src: int) -> tuple[tuple[int, int, int], int, int, tuple[int, ...]] | None:
    """The most common (row offset, col offset, stage) of the operand's elements and its first element that
    does not follow it: (offsets, thread, element index, found (source, row, col, stage)); None if none."""
    got, r, c, st = _decode(tags, tab)
    valid = got == src
    dr, dc = r - rel[0], c - rel[1]
    common = Counter(zip(dr[valid].tolist(), dc[valid].tolist(), st[valid].tolist())).most_common(1)
    off = common[0][0] if common else (0, 0, 0)
    bad = np.argwhere(~valid | (dr != off[0]) | (dc != off[1]) | (st != off[2]))
    if not len(bad):
        return None
    t, i = (int(x) for x in bad[0])
    return off, t, i, (int(got[t, i]), int(r[t, i]), int(c[t, i]), int(st[t, i]))


def _element_name(src: int, r: int, c: int, st: int) -> str:
    if src < 0:
        return "no element of an ldsm buffer or accumulator"
    if src >= _ACC:
        return f"C[{r}, {c}] of the accumulator of product {src - _ACC}"
    return f"[{r}, {c}] of stage {st} of the buffer of ldsm copy {src}"


def _operand_error(seen: _Seen, name: str, tags: np.ndarray, rel: tuple, tab: _Table,
                   buf: int) -> tuple[str, dict] | None:
    """Why an A or B operand is not one block of its buffer (thread, register, wanted and found element),
    with the register's writer (its PTX line); None when it is one."""
    wrong = _first_wrong(tags, rel, tab, buf)
    if wrong is None:
        return None
    (dr, dc, s), t, i, got = wrong
    regs = _operand_regs(seen.ins, 1 if name == "A" else 2)
    want = f"{name} = {_element_name(buf, int(rel[0][t, i]) + dr, int(rel[1][t, i]) + dc, s)}"
    found = _element_name(*got)
    writer = seen.writers[i // 2 + (0 if name == "A" else 4)]
    return (f"thread {t} (warp {t // 32}, lane {t % 32}) register {_name(regs[i // 2])} half {i % 2} holds {found}, "
            f"but the PTX ISA m16n8k16 {name} fragment of the tiled MMA's block wants {want} there"), \
        {"operand": name, "thread": t, "register": _name(regs[i // 2]), "half": i % 2, "writer_line": writer,
         "want": (int(rel[0][t, i]) + dr, int(rel[1][t, i]) + dc, s), "got": got[1:], "source": got[0]}


def _c_error(seen: _Seen, block: tuple[int, int, int], mp: _Mma, tab: _Table) -> str | None:
    """Why the C registers hold neither the block's accumulator elements nor a constant."""
    want = np.stack([v.tags[:, 0] for v in _c_tags(seen.ins, block, mp, tab, seen.c.shape[0]).values()], axis=1)
    regs = _operand_regs(seen.ins, 3)
    for i in range(seen.c.shape[1]):
        col = seen.c[:, i]
        if (col < 0).all() or (col == want[:, i]).all():
            continue
        t = int(np.flatnonzero(col != want[:, i])[0])
        found = _element_name(*(int(x[0]) for x in _decode(np.array([col[t] // 8]), tab)))
        wanted = _element_name(*(int(x[0]) for x in _decode(np.array([want[t, i] // 8]), tab)))
        return (f"thread {t} (warp {t // 32}, lane {t % 32}) C register {_name(regs[i])} holds {found}, but the "
                f"block's accumulator fragment wants {wanted}")
    return None


def _tile(src: int, b: int, plans: list[LdsmPlan], products: list) -> tuple[int, int, int]:
    """(M, N, K) of a product of A ``src`` (a buffer, or an accumulator: its M x N) and B buffer ``b``."""
    if src >= _ACC:
        sa, sb = products[src - _ACC]
        m, k, _ = _tile(sa, sb, plans, products)
        return m, plans[b].buffer.em, k
    return plans[src].buffer.em, plans[b].buffer.em, plans[src].buffer.en


def _mma_verdict(seen: _Seen, mp: _Mma, tab: _Table, pairs: dict, plans: list[LdsmPlan]) -> tuple[str, str, dict]:
    """(status, message, data) of one ``mma.sync`` (see the module docstring)."""
    if seen.a is None or seen.b is None:
        return "unchecked", "an A or B register holds no element an ldmatrix or an mma.sync left there", {}
    n = seen.a.shape[0]
    ra, rb = _expected(mp, n, "A"), _expected(mp, n, "B")
    bufs = (_source_of(seen.a, tab, mp.a, True), _source_of(seen.b, tab, mp.b, False))
    for name, buf in zip("AB", bufs):
        if buf is None:
            return "unchecked", (f"its {name} registers hold no element of a buffer the MLIR partitions as {name} "
                                 f"{'or of an earlier mma.sync accumulator ' if name == 'A' else ''}(an operand "
                                 f"source not traced)"), {}
    for name, tags, rel, buf in (("A", seen.a, ra, bufs[0]), ("B", seen.b, rb, bufs[1])):
        why = _operand_error(seen, name, tags, rel, tab, buf)
        if why:
            return "error", why[0], why[1]
    (m0, ka, sa), (n0, kb, sb) = _offsets(seen.a, ra, tab, bufs[0]), _offsets(seen.b, rb, tab, bufs[1])
    products = sorted(pairs, key=pairs.get)
    data = {"block": (m0, n0, ka), "stage": sb, "buffers": bufs, "tile": _tile(bufs[0], bufs[1], plans, products)}
    if ka != kb or (sa != sb and sa >= 0):
        return "error", (f"A is K-block {ka} of stage {sa} but B is K-block {kb} of stage {sb}: one mma.sync "
                         f"multiplies one K-block of one stage"), data
    if m0 % mp.step[0] or n0 % mp.step[1] or ka % mp.step[2]:
        return "error", (f"its block (M {m0}, N {n0}, K {ka}) is not a repeat of the tiled MMA "
                         f"({mp.step[0]} x {mp.step[1]} x {mp.step[2]})"), data
    if seen.c is None or (seen.c == 0).all(axis=0).any() or (bufs[0], bufs[1]) not in pairs:
        return "unchecked", (f"A and B are block (M {m0}, N {n0}, K {ka}) of stage {sb}, but a C register holds no "
                             f"traced accumulator element (the block's previous mma.sync is wrong, or an unmodelled "
                             f"instruction wrote it)"), data
    why = _c_error(seen, (m0, n0, pairs[(bufs[0], bufs[1])]), mp, tab)
    if why:
        return "error", why, data
    a_from = "an earlier mma.sync's accumulator" if bufs[0] >= _ACC else f"stage {sa}"
    return "proved", (f"every A, B and C register of every thread ({n} threads) holds the element the PTX ISA "
                      f"m16n8k16 fragments want for block (M {m0}, N {n0}, K {ka}): A from {a_from}, B from stage "
                      f"{sb}"), data


def _coverage(checks: list[Check], mp: _Mma) -> list[Check]:
    """Where every ``mma.sync`` is proved: for each (A source, B buffer) product, an error at its last one if a
    block of its tile (``data["tile"]``: M x N x K) is never multiplied."""
    if not checks or any(c.status != "proved" for c in checks):
        return checks
    out = list(checks)
    for pair in sorted({tuple(c.data["buffers"]) for c in checks}):
        mine = [k for k, c in enumerate(checks) if tuple(c.data["buffers"]) == pair]
        tile = checks[mine[0]].data["tile"]
        want = set(itertools.product(*(range(0, t, st) for t, st in zip(tile, mp.step))))
        missing = sorted(want - {tuple(checks[k].data["block"]) for k in mine})
        if missing:
            last = checks[mine[-1]]
            out[mine[-1]] = Check(last.op, last.line, last.loc, last.check, "error", "error",
                                  f"{last.op}: the function's mma.sync of A source {pair[0]} and B buffer {pair[1]} "
                                  f"never multiply {len(missing)} of the {len(want)} blocks of the "
                                  f"{tile[0]}x{tile[1]}x{tile[2]} tile, e.g. (M, N, K) {missing[0]}",
                                  dict(last.data, missing=len(missing)))
    return out


def _mma_checks(mmas: list[Instr], run: tuple[dict, dict], mp: _Mma | str, tab: _Table, loads: dict[int, Instr],
                plans: list[LdsmPlan]) -> list[Check]:
    """The ``mma-operand`` check of each ``mma.sync`` (every visit; a proof names the block of its last);
    ``run``: the tag run's visits and products; ``loads``: the proved ``ldmatrix`` by PTX line (where a wrong
    register is tied)."""
    if isinstance(mp, str):
        return [_unchecked(i, mp, MMA_CHECK) for i in mmas]
    seen, pairs = run
    out = []
    for ins in mmas:
        s = seen.get(id(ins))
        if s is None or "m16n8k16" not in ins.parts or not all(p in ins.parts for p in ("row", "col")):
            out.append(_unchecked(ins, "only mma.sync.m16n8k16.row.col with 16-bit A and B is modelled", MMA_CHECK))
            continue
        verdicts = [_mma_verdict(v, mp, tab, pairs, plans) for v in s]
        status, msg, data = next((v for v in verdicts if v[0] != "proved"), verdicts[-1])
        out.append(_check(ins, MMA_CHECK, status, f"{ins.opcode}: {msg}", data))
    return _coverage(out, mp) + _ties(out, loads)


def _ties(checks: list[Check], loads: dict[int, Instr]) -> list[Check]:
    """An error (a tie) at each proved ``ldmatrix`` whose register an ``mma.sync`` reads wrong: its elements
    sit where the copy wants them, but in registers the MMA reads in another order (the error is at the
    ``ldmatrix``'s register list or at the ``mma.sync``'s)."""
    out, seen = [], set()
    for c in checks:
        w = c.data.get("writer_line")
        if c.status != "error" or w not in loads or w in seen:
            continue
        seen.add(w)
        ld = loads[w]
        out.append(Check(ld.parts[0], ld.line, ld.loc, MMA_CHECK, "error", "error",
                         f"{ld.opcode}: loads register {c.data['register']}, which the mma.sync at PTX line {c.line} "
                         f"reads wrong (the error is here or at the mma.sync: a tie): {c.message}",
                         dict(c.data, mma_line=c.line, source="ptx", plan="cute-dsl mlir")))
    return out


def _function_checks(ptx: PtxModule, func: str, plans: list[LdsmPlan], mmp: list, evs: tuple[PtxValues, PtxValues],
                     mod: CuteModule, origin_of: Callable[[str, int], int | None] | None) -> list[Check]:
    """The checks of one function's ``ldmatrix`` and ``mma.sync``."""
    instrs = [i for i in ptx.instrs if i.func == func]
    lds = [i for i in instrs if i.parts and i.parts[0] == "ldmatrix"]
    mmas = [i for i in instrs if i.opcode.startswith("mma.sync")]
    threads = ptx.threads_of(func) or 128
    usable = [p for p in plans if p.buffer.origin is not None]
    unplaced = ", ".join(f"the buffer of the ldsm copy at MLIR line {p.line}" for p in plans if p.buffer.origin is None)
    tab = _table(usable)
    memo: dict = {}
    checks, loads = [], {}
    for ins in lds:
        c, got, _b = _ldmatrix_check(ins, usable, tab, evs, memo, threads, unplaced)
        checks.append(c)
        if got is not None:
            loads[id(ins)] = got
    at = {i.line: i for i in instrs}
    checks = _same_stage(checks, at)
    checks += _address_blame(checks, at, evs[0])
    if not mmas:
        return checks
    mp = _mma_plan(mod, mmp, usable, origin_of) if usable else \
        "the MLIR has no ldsm tiled copy whose buffer offset it states"
    run = _run(ptx, func, evs[1], loads, mp if isinstance(mp, _Mma) else None, tab, threads) if loads else ({}, {})
    proved = {c.line: at[c.line] for c in checks if c.status == "proved" and c.line in at}
    return checks + _mma_checks(mmas, run, mp, tab, proved, usable)


def ldmatrix_checks(mod: CuteModule, ptx: PtxModule, mma_plans: list,
                    origin_of: Callable[[str, int], int | None] | None = None) -> list[Check]:
    """One ``smem-copy`` check per ``ldmatrix`` and, in a function with any, one ``mma-operand`` check per
    ``mma.sync`` of ``ptx`` against the MLIR ``mod`` (its tiled MMAs ``mma_plans`` from
    :func:`verilayout.audit.cute_dsl.mma_plans`; ``origin_of(value, line)``: a shared view's byte offset in
    the allocation): see the module docstring.

    >>> from verilayout.frontends.ptx import parse_ptx
    >>> ldmatrix_checks(CuteModule((), {}, {}), parse_ptx(".version 8.7\\n.entry f()\\n{\\nret;\\n}"), [])
    []
    """
    plans = ldsm_plans(mod, origin_of)
    out: list[Check] = []
    for func in ptx.functions:
        if not any(i.func == func and i.parts and i.parts[0] == "ldmatrix" for i in ptx.instrs):
            continue
        names = tuple(ptx.shared) if len(ptx.shared) == 1 else ("global_smem",)
        evs = (PtxValues(ptx, func, smem_names=names), PtxValues(ptx, func, first_iteration=True, smem_names=names))
        out.extend(_function_checks(ptx, func, plans, mma_plans, evs, mod, origin_of))
    return out
