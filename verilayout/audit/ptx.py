"""Audit the lowering: prove from a kernel's PTX that each ``wgmma.mma_async`` reads the shared
operand layout its TTGIR planned (``X.ptx`` beside ``X.ttgir``, as in Triton's cache).

How: every register a descriptor operand depends on is evaluated symbolically over z3 bit-vectors
(``%tid``, kernel parameters, loads and registers defined more than once, i.e. loop-carried, are
free symbols; ``global_smem`` is the shared-memory base, a symbol assumed 1024-byte aligned).

Correspondence (``audit.ptx_dots``, by dataflow and order, never by source line alone): the MMA
instructions between two ``wgmma.commit_group`` (``tcgen05.commit``) of one source line are one
lowered dot; groups and TTGIR dots are paired in program order; within a group, wgmmas writing the
same accumulator registers are the K-blocks of one (M, N) block, and each warpgroup ``w`` issues
the M and N blocks the dot's result layout gives warp ``4 w``. The shape is the instruction's
(``m64nNkK``: an operand B block is ``N`` columns, whatever the memdesc's width).

Per wgmma ``i`` (K-block ``k`` of the block ``b_w`` warpgroup ``w`` holds) and per warpgroup ``w``
(``%tid.x`` ranging over ``128 w .. 128 w + 127``; the descriptor must be one value for all of them),
with the descriptor the plan derives for that K-block of that block (``derived``, base address 0):

* fields: the PTX descriptor's bits other than the 14-bit start address are one constant ``H``
  for every value of the symbols, and ``H | start(derived)`` is proved to read the block
  (``prove.wgmma.check_descriptor``): LBO, SBO, swizzle mode and the operand order;
* start: ``start_i,w - start(derived)`` (the base it implies, mod 2^14) is one value for every
  instruction and warpgroup of the dot's operand; one that differs is an error naming the
  warpgroup and the offset;
* base: that common base is a multiple of the swizzle pattern's repeat (in 16-byte units) whenever
  the shared-memory base is 1024-byte aligned (the assumption is reported);
* ``operand-buffers``: two operands that view different TTGIR allocations, both live (traced
  through the ``ttg.memdesc_*`` views to their ``ttg.local_alloc``), read disjoint bytes, where
  their bases are one constant distance apart.

A PTX file that no check reads (its TTGIR holds element-wise arithmetic, global loads and stores and
control flow alone, :data:`_QUIET_OPS`; its text spells no shared-memory, MMA, ``tcgen05``, shuffle,
``redux`` or ``brx`` instruction, ``frontends.prescan.quiet_ptx``) is reported without being
parsed: no check, on the PTX's target, as the full path finds it.

An exception inside one dot's checks is one ``unchecked: internal error (...)`` result.
A descriptor the evaluator cannot reduce (an unmodelled instruction on its path) gives
``unknown``, never ``proved``.

>>> v = _Eval(parse_ptx(".version 8.7\\n.visible .entry f()\\n{\\nmov.b32 %r1, global_smem;\\n"
...                      "add.s32 %r2, %r1, 16;\\nbfe.u32 %r3, %r2, 4, 14;\\n}"))
>>> str(z3.simplify(v.reg("%r3") - z3.Extract(31, 0, z3.LShR(z3.ZeroExt(32, SMEM), 4)) & 0x3FFF)) != ""
True
"""
from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

import numpy as np
import z3

from verilayout.audit.launch_limits import cannot_launch, launch_check
from verilayout.audit.model import Check, FileReport
from verilayout.audit.ptx_context import PtxContext
from verilayout.audit.ptx_elements import convert_checks, element_checks
from verilayout.audit.ptx_known_bits import known_bits, known_constant
from verilayout.audit.ptx_partitions import partition_checks, partitioned, with_partitions
from verilayout.audit.ptx_smem import smem_checks, values_at
from verilayout.audit.ptx_shuffles import register_permute_checks
from verilayout.audit.ptx_reductions import warp_reduce_checks
from verilayout.audit.ptx_dots import (DOT_FAMILIES, accumulator_blocks, dot_ties, live_lines, memdesc_root,
                                       producers_by_name, stage_view, warpgroup_blocks)
from verilayout.audit.ptx_wgmma import planned_tile, wgmma_checks_without_plan
from verilayout.audit.ttgir import audited, layout_shape
from verilayout.audit.ptx_tmem import tmem_message_checks
from verilayout.prove.term_memo import MISSING, TermMemo
from verilayout.core.linear_layout import LinearLayout
from verilayout.core.smt import solve
from verilayout.errors import LayoutError
from verilayout.frontends.prescan import quiet_ptx
from verilayout.frontends.ptx import MAX_PTX_BYTES, parse_ptx, wgmma_shape
from verilayout.frontends.mlir import elem_bit_width
from verilayout.frontends.triton import attr_to_linear
from verilayout.frontends.ttgir import Module, parse_module
from verilayout.hw.nvidia.descriptor import operand_k
from verilayout.hw.nvidia.ptx_model import Addr, Instr, PtxModule, Vec
from verilayout.prove.ptx_values import (SMEM, TID, Prover, PtxValues as _Eval, constant, decide_claim, symbol_names,
                                         symbol_widths)
from verilayout.prove.z3_numpy import compile_term
from verilayout.prove.wgmma import check_descriptor
from verilayout.synth.descriptor import derive_descriptor

#: The shared-memory base (``global_smem``), 32 bits.
SMEM_ALIGNMENT = 1024
SMEM_BELOW = 1 << 17
ASSUMPTIONS = (f"the dynamic shared-memory base (global_smem) is {SMEM_ALIGNMENT}-byte aligned and below "
               f"{SMEM_BELOW >> 10} KB (an sm_90 CTA has at most 227 KB, so its shared addresses stay below 2^18)",
               "registers written more than once (loop-carried) and values loaded from memory are "
               "unconstrained symbols")
SMEM_ASSUMPTIONS = ("shared-memory bank figures from PTX: warp 0, the first iteration of each loop "
                    "(loop-carried registers at their entry value), lane addresses exact relative to lane 0, "
                    "the access's base 128-byte aligned",)
#: every base the assumption allows (aligned, below the bound): what ``_constant`` enumerates
_SMEM_BASES = np.arange(0, SMEM_BELOW, SMEM_ALIGNMENT, dtype=np.uint64)
_START = 0x3FFF
_FIELDS = ~0xFFFF & ((1 << 64) - 1)     # LBO, SBO, base offset, layout type: bits 16-63
_BASE_OFFSET = 7 << 49
# swizzle code -> swizzle pattern repeat in 16-byte units: sm_90 layout type (bits 62-63: 1 = 128B,
# 2 = 64B, 3 = 32B); sm_100 swizzle mode (bits 61-63: 1 = 128B with 32B atoms, 2 = 128B, 4 = 64B, 6 = 32B)
_REPEATS = {"sm_90": {0: 1, 1: 64, 2: 32, 3: 16}, "sm_100": {0: 1, 1: 64, 2: 64, 4: 32, 6: 16}}


NO_PLAN_ASSUMPTIONS = ("without a TTGIR: the shared-memory base (Triton's global_smem, or the module's one "
                      f".shared variable) is {SMEM_ALIGNMENT}-byte aligned and the largest offset the kernel adds "
                      "to it stays inside the 227 KB of an sm_90 CTA (each proof states the bound it used)",
                      "wgmmas between a wgmma.fence and a wgmma.commit_group that accumulate into the same "
                      "registers are successive K-blocks, in program order",
                      "loop-carried registers are free symbols, bounded where an invariant is proved by "
                      "induction over their reaching definitions")


def _smem_names(mod) -> tuple[str, ...]:
    """Names whose address is the shared-memory base: Triton's ``global_smem``, else the module's
    only ``.shared`` variable (nvcc's ``extern __shared__`` array)."""
    if "global_smem" in mod.shared or len(mod.shared) != 1:
        return ("global_smem",)
    return tuple(mod.shared)


def _swizzle_code(hi: int, arch: str) -> int:
    return (hi >> 62) & 3 if arch == "sm_90" else (hi >> 61) & 7


def _operand_layout(op: Any, idx: int) -> tuple[Any, LinearLayout] | None:
    """The parsed type of TTGIR ``op``'s operand ``idx`` (its ``Type``, read once) and the layout
    of its encoding over one buffer; None when the op prints no type there."""
    typ = op.operand_type(idx)
    if typ is None:
        return None
    t = typ.read()
    return t, attr_to_linear(t.encoding, layout_shape(t))


#: answers that are functions of their z3 terms alone, kept for the process (``prove.term_memo``):
#: the kernels of one test run share their descriptor and address terms
_TERMS = TermMemo()


def _prove(claim: z3.BoolRef, assume: z3.BoolRef | None = None, timeout_ms: int = 5000,
           prover: Prover | None = None) -> tuple[str, Any]:
    if prover is None:
        return decide_claim(claim, assume, timeout_ms)
    key = ("proved", claim.get_id(), None if assume is None else assume.get_id(), timeout_ms)
    if _TERMS.get(key) is not MISSING:
        return ("proved", None)                 # a proof is kept; other answers are asked again
    got = prover.decide(claim, assume, timeout_ms)
    if got[0] == "proved":
        _TERMS.put(key, (claim, assume), True)
    return got


def _proves(prover: Prover, claim: z3.BoolRef) -> bool:
    """``prover.proves(claim)``, a proof kept for the process (other answers asked again)."""
    key = ("proves", claim.get_id())
    if _TERMS.get(key) is not MISSING:
        return True
    ok = prover.proves(claim)
    if ok:
        _TERMS.put(key, (claim,), True)
    return ok


def _smem_assumption() -> z3.BoolRef:
    return z3.And(z3.URem(SMEM, SMEM_ALIGNMENT) == 0, z3.ULT(SMEM, SMEM_BELOW))


def _constant(e: z3.BitVecRef, cache: dict | None = None, prover: Prover | None = None) -> int | None:
    """``e``'s value if it is one constant for every value of its symbols (under the assumptions);
    ``cache``: the answers already found in this file; ``prover``: the function's solvers. When the
    shared-memory base is ``e``'s only symbol, by enumeration: the assumption admits exactly the
    ``SMEM_BELOW / SMEM_ALIGNMENT`` bases of ``_SMEM_BASES``, and ``e`` is evaluated at each; with
    other symbols, None at once when a sample shows two values (:func:`_varies`), else the solver.
    The answer is a function of ``e`` alone: kept for the process (not a None of the solver's,
    which may be a timeout).

    >>> _constant(z3.Extract(31, 17, SMEM + 1023) + 1), _constant(z3.Extract(31, 17, SMEM + 1024))
    (1, None)
    """
    key = ("constant", e.get_id())
    hit = _TERMS.get(key)
    if hit is not MISSING:
        return hit
    v, sure = _constant_of(e, cache, prover)
    if sure:
        _TERMS.put(key, (e,), v)
    return v


def _constant_of(e: z3.BitVecRef, cache: dict | None, prover: Prover | None) -> tuple[int | None, bool]:
    """:func:`_constant`'s answer, and whether it is sure (False: the solver found no value,
    or timed out)."""
    known = known_constant(e)                # all bits known without a solver (sound: the same value)
    if known is not None:
        return known, True
    widths = symbol_widths(e)
    memo = {} if cache is None else cache.setdefault(("compiled",), {})
    if widths is None or set(widths) <= {_SMEM_NAME}:
        vals = _at_smem_bases(e, cache, memo)
        if vals is not None:
            return (vals[0] if all(v == vals[0] for v in vals) else None), True
    elif _varies(e, memo, widths):
        return None, True                    # two values where the assumption holds: no solver needed
    known = known_constant(_aligned_smem(e))  # every bit known for every aligned base: the one value
    if known is not None:
        return known, True
    v = constant(e, _smem_assumption(), cache, prover)
    return v, v is not None


def _at_smem_bases(e: z3.BitVecRef, cache: dict | None, memo: dict) -> list[int] | None:
    """``values_at(e)`` at every base of ``_SMEM_BASES``; with ``cache``, once per term and file
    (the term kept with its answer: its id stays unique)."""
    if cache is None:
        return values_at(e, _SMEM_NAME, _SMEM_BASES)
    hit = cache.get(("at_smem_bases", e.get_id()))
    if hit is None:
        hit = cache[("at_smem_bases", e.get_id())] = (e, values_at(e, _SMEM_NAME, _SMEM_BASES, memo))
    return hit[1]


#: The shared-memory base's bits above its alignment: ``SMEM`` is ``Concat(_SMEM_HIGH, 0)`` for every
#: base the assumption allows (and for more: the bound ``SMEM_BELOW`` is dropped).
_SMEM_HIGH = z3.BitVec("smem_base_above_alignment", 32 - (SMEM_ALIGNMENT.bit_length() - 1))


def _aligned_smem(e: z3.ExprRef) -> z3.ExprRef:
    """``e`` with the shared-memory base written as its aligned form, ``Concat(_SMEM_HIGH, 0)``:
    a fact of every value of the result (known bits included) holds of ``e`` for every base the
    shared-memory assumption allows.

    >>> known_constant(_aligned_smem(z3.Extract(9, 0, SMEM + 4))), known_constant(z3.Extract(9, 0, SMEM + 4))
    (4, None)
    """
    return z3.simplify(z3.substitute(e, (SMEM, z3.Concat(_SMEM_HIGH, z3.BitVecVal(0, SMEM_ALIGNMENT.bit_length() - 1)))))


def _aligned_by_known_bits(base: z3.BitVecRef, rep: int) -> bool:
    """True when ``base``'s low ``log2(rep)`` bits are known zero for every aligned shared-memory
    base (:func:`_aligned_smem`, ``ptx_known_bits``): then ``base`` is a multiple of ``rep`` (a
    power of two) under the assumption, proved without a solver; False when not known.

    >>> _aligned_by_known_bits(z3.Extract(13, 0, SMEM >> 4) + 128, 64), _aligned_by_known_bits(z3.Extract(13, 0, SMEM >> 4) + 8, 64)
    (True, False)
    """
    if rep & (rep - 1):
        return False
    got = known_bits(_aligned_smem(base))
    return got is not None and got[0] & (rep - 1) == rep - 1


def _varies(e: z3.BitVecRef, memo: dict, widths: dict[str, int] | None = None) -> bool:
    """True when ``e`` takes two values at assignments the shared-memory assumption allows (then it
    is not one constant): a sample, each aligned base of ``_SMEM_BASES`` with every other bit-vector
    symbol at a pattern of its width, evaluated at once (``prove.z3_numpy``); False when the sample
    shows one value, or ``e`` has a symbol that is not a bit-vector or an operator not modelled;
    ``widths``: ``symbol_widths(e)`` where the caller has it.

    >>> v = z3.ZeroExt(7, z3.BitVec("v", 8))
    >>> _varies(z3.Extract(31, 17, SMEM) + v, {}), _varies(z3.Extract(31, 17, SMEM) + (v & 0), {})
    (True, False)
    """
    widths = symbol_widths(e) if widths is None else widths
    if widths is None:
        return False
    n = len(_SMEM_BASES)
    env: dict[str, np.ndarray] = {}
    for k, (name, w) in enumerate(widths.items()):
        if name == _SMEM_NAME:
            env[name] = _SMEM_BASES
        else:                                # 0, then spread bits; the symbol is otherwise free
            mask = (1 << min(w, 64)) - 1
            env[name] = np.array([(j * (0x9E3779B97F4A7C15 + 2 * k) + (j > 1)) & mask for j in range(n)],
                                 dtype=np.uint64)
    try:
        out = compile_term(e, memo, tuple(env), wide=False)(env)
    except ValueError:                       # TooWide is a ValueError; an operator not modelled
        return False
    return bool(np.any(out != out[0]))


def _tc05_checks(ev: _Eval, wg: list[Instr], dot: Any, mma_checks: list[Check],
                  path: str, arch: str = "sm_100", bases: list | None = None) -> list[Check]:
    out = []
    by_operand = {c.data.get("operand"): c for c in mma_checks if c.line == dot.line}
    for slot, name in ((1, "A"), (2, "B")):
        tcheck = by_operand.get(name)
        descs = (tcheck.data.get("descriptors") if tcheck is not None else None) or []
        if tcheck is None or not descs or isinstance(wg[0].args[slot], (Vec, Addr)):
            continue                                   # register / tensor-memory operand, or nothing derived
        got = _operand_layout(dot, 0 if name == "A" else 1)
        if got is None:
            continue
        _t, ll = got
        mn = None
        if arch == "sm_100":
            # one tcgen05.mma covers the whole M (64-256 rows) of a K-block: the plan's MN block 0
            # descriptor (64 rows, the SBO step then repeats) stands for the instruction
            split, every = _n_split(dot, by_operand), descs
            descs = [x for x in descs if x["mn_block"] == 0]
            descs, mn = _n_split_descs(descs, name, tcheck, ll, split)
            descs = descs if split else _m_split_descs(descs, every, name, _m_split(dot, by_operand))
        per_group = len(descs)
        if len(wg) % per_group == 0:
            chunks = [(wg[c:c + per_group], descs) for c in range(0, len(wg), per_group)]
        elif per_group % len(wg) == 0:
            # several warpgroups: each issues the K-blocks of its own MN block, whose offset comes from
            # the warp id (a free symbol that cancels in the K-block advance): compare with MN block 0
            chunks = [(wg, descs[:len(wg)])]
        else:
            out.append(_check(wg[0], path, name, "unknown", "note", f"operand {name}: {len(wg)} MMA "
                              f"instructions cannot be matched to the {per_group} derived K-block descriptors",
                              {"reason": "instruction count"}))
            continue
        for part, idx in chunks:                       # each copy of the loop body has its own base
            out.extend(_tc05_operand_checks(ev, part, slot, name, idx, tcheck, ll, path, arch, bases, mn))
    return out


def _n_split(dot: Any, by_operand: dict) -> tuple[int, int] | None:
    """``(block_n, reps)`` when the accumulator's TMEM layout splits the B operand's ``N``: its
    ``#ttng.tensor_memory_encoding`` ``blockN`` is less than ``n = min(N, 256)`` and divides it, and
    Triton's MMAv5 lowering (``third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/DotOpToLLVM/MMAv5.cpp``)
    issues ``reps = n / blockN`` instructions of ``blockN`` columns per K-block, N blocks inner;
    else None.

    >>> _n_split(None, {})          # no B plan: no split
    """
    b = by_operand.get("B")
    typ = dot.operand_type(2) if b is not None and b.data.get("shape") else None
    enc = typ.read().encoding if typ is not None else None
    if getattr(enc, "name", "") != "ttng.tensor_memory_encoding":
        return None
    bn, n = enc.params.get("blockN"), min(b.data["shape"][1], 256)
    return (bn, n // bn) if isinstance(bn, int) and 8 <= bn < n and n % bn == 0 else None


def _m_split(dot: Any, by_operand: dict) -> tuple[int, int] | None:
    """``(step, reps)`` when the accumulator's TMEM layout splits A's ``M`` rows: its ``blockM``
    (64 or more) is less than M and divides it, and Triton's MMAv5 lowering issues ``reps = M /
    blockM`` instructions per K-block, M blocks outer (each writing its own TMEM lanes), the one of
    M block ``i`` reading A's rows from ``i * blockM``: the plan's 64-row block ``i * step``,
    ``step = blockM / 64``; else None.

    >>> _m_split(None, {})          # no A plan: no split
    """
    a = by_operand.get("A")
    typ = dot.operand_type(2) if a is not None and a.data.get("shape") else None
    enc = typ.read().encoding if typ is not None else None
    if getattr(enc, "name", "") != "ttng.tensor_memory_encoding":
        return None
    bm, m = enc.params.get("blockM"), a.data["shape"][0]
    return (bm // 64, m // bm) if isinstance(bm, int) and 64 <= bm < m and m % bm == 0 else None


def _m_split_descs(descs: list[dict], every: list[dict], name: str,
                   split: tuple[int, int] | None) -> list[dict]:
    """The plan's descriptors in the order of the instructions when M is split (``split``, see
    :func:`_m_split`): for each M block, A's K-block descriptors of its 64-row plan block (from
    ``every``, all of A's plan), B's K-block descriptors again; ``descs`` (MN block 0) unchanged
    without a split or where the plan lacks a block. Law: ``len(result) == len(descs) * reps``.

    >>> _m_split_descs([{"mn_block": 0, "k_block": 0}], [], "B", (1, 2))
    [{'mn_block': 0, 'k_block': 0}, {'mn_block': 0, 'k_block': 0}]
    """
    if split is None:
        return descs
    step, reps = split
    if name == "B":
        return descs * reps
    out = [x for i in range(reps) for x in every if x["mn_block"] == i * step]
    return out if len(out) == len(descs) * reps else descs


def _n_split_descs(descs: list[dict], name: str, tcheck: Check, ll: LinearLayout,
                   split: tuple[int, int] | None) -> tuple[list[dict], int | None]:
    """The plan's descriptors in the order of the instructions when each K-block is issued as
    ``reps`` instructions of ``block_n`` columns (``split``, see :func:`_n_split`): A's K-block
    descriptor repeated, B's derived for each ``block_n``-column block; and B's MN extent (None:
    unchanged). Law: ``len(result[0]) == len(descs) * reps``.

    >>> _n_split_descs([{"k_block": 0}], "A", None, None, (32, 2))
    ([{'k_block': 0}, {'k_block': 0}], None)
    """
    if split is None:
        return descs, None
    block_n, reps = split
    if name == "A":
        return [x for x in descs for _ in range(reps)], None
    cache: dict = {}
    return [_derived(cache, tcheck, ll, x["k_block"], block_n, n, "B") for x in descs for n in range(reps)], block_n


def _tc05_operand_checks(ev: _Eval, wg: list[Instr], slot: int, name: str, idx: list[dict], tcheck: Check,
                    ll: LinearLayout, path: str, arch: str = "sm_100", bases: list | None = None,
                    mn: int | None = None) -> list[Check]:
    out = []
    d = tcheck.data
    mn_dim = 0 if name == "A" else 1
    t_shape = d["shape"]
    mn = mn or (64 if name == "A" and t_shape[0] >= 64 else min(t_shape[mn_dim], 256))
    exprs = [ev.operand(i.args[slot], 64, at=i) for i in wg]
    # the base each instruction implies: its start minus the start the plan derives at base 0
    starts: list[tuple[int, Instr, z3.BitVecRef, dict, int]] = []
    for i, (ins, e, want) in enumerate(zip(wg, exprs, idx)):
        derived = int(want["descriptor"], 16)
        data = {"source": "ptx", "operand": name, "instruction": i, "k_block": want["k_block"],
                "mn_block": want["mn_block"], "ttgir_descriptor": want["descriptor"]}
        if e is None:
            out.append(_check(ins, path, name, "unknown", "note", f"operand {name}: the descriptor "
                              f"{ins.operands[slot]} is not a register the evaluator reads", data))
            continue
        hi = _constant(e & z3.BitVecVal(_FIELDS, 64), ev.const_cache, ev.prover)
        if hi is None:
            out.append(_check(ins, path, name, "unknown", "note", f"operand {name}, {ins.head} {i}: the descriptor's "
                              "LBO/SBO/swizzle bits are not one constant (opaque values on its path: "
                              f"{sorted(ev.opaque)[:3]})", data))
            continue
        data["ptx_fields"] = f"{hi:#018x}"
        if _swizzle_code(hi, arch) == 0 and hi & _BASE_OFFSET:
            # PTX ISA (matrix descriptor, bits 49-51): the base offset "is valid for all swizzling modes
            # except no-swizzle mode"; Triton 3.9 sets it on unswizzled operands. Reported, then ignored.
            out.append(_check(ins, path, name, "counterexample", "warning", f"operand {name}, {ins.head} {i}: base "
                              f"offset {(hi & _BASE_OFFSET) >> 49} is set on an unswizzled operand; the PTX ISA "
                              "defines the field for the swizzling modes (0 for canonical layouts); an H100 ignored it in every "
                              "unswizzled case measured (docs/ground_truth.md), and the check goes on without it", dict(data)))
            hi &= ~_BASE_OFFSET
        value = hi | (derived & _START)
        kb0, mb0 = sub_tile_blocks(d, mn)
        v = _checked_descriptor(value, ll, d["dtype"], d["major"], want["k_block"] + kb0, mn, want["mn_block"] + mb0,
                                mn_dim, arch)
        if v.status != "proved":
            out.append(_check(ins, path, name, v.status, "error" if v.status == "counterexample" else "note",
                              f"operand {name}, {ins.head} {i} (K-block {want['k_block']}): the PTX descriptor's fields "
                              f"{hi:#018x} do not read the planned layout {d['layout']}: {v.reason} "
                              f"(the TTGIR plan derives {want['descriptor']})",
                              dict(data, counterexample=v.counterexample)))
            continue
        base = z3.Extract(13, 0, e) - z3.BitVecVal(derived & _START, 14)
        starts.append((i, ins, base, data, _REPEATS[arch].get(_swizzle_code(hi, arch), 1)))
    got, base = _start_checks([s + (0,) for s in starts], name, 1, ev.prover, ev)
    for i, st, sev, msg, data in got:
        out.append(_check(next(x[1] for x in starts if x[0] == i), path, name, st, sev, msg, data))
    if base is not None and bases is not None:
        bases.append((name, starts[0][1], base))
    return out


def _dot_plan(dot: Any, mma_checks: list[Check]) -> dict[str, tuple[Check, LinearLayout]]:
    """The TTGIR audit's ``mma-descriptor`` check and the layout of each shared operand of ``dot``
    (those with derived descriptors)."""
    out = {}
    for c in mma_checks:
        name = c.data.get("operand")
        if c.line != dot.line or name not in ("A", "B") or not c.data.get("descriptors"):
            continue
        got = _operand_layout(dot, 0 if name == "A" else 1)
        if got is not None:
            out[name] = (c, got[1])
    return out


def _wg_tiles(dot: Any, tmod: Module, n_inst: int) -> list[tuple[list[int], list[int]]] | None:
    """Each warpgroup's M blocks (64 rows) and N blocks (``n_inst`` columns) from the dot's result
    layout (:func:`warpgroup_blocks`); None when the result is not a 2-D tensor."""
    if not dot.out_types:
        return None
    t = dot.out_types[0].read()
    if t is None or len(t.shape) != 2:
        return None
    ll = attr_to_linear(t.encoding, layout_shape(t))
    return warpgroup_blocks(ll, ll.in_dims.get("warp", tmod.num_warps or 4), n_inst)   # the warps that run it


def _wgmma_checks(ev: _Eval, group: list[Instr], dot: Any, tmod: Module, mma_checks: list[Check],
                  path: str, derived: dict, bases: list) -> list[Check]:
    """sm_90: each wgmma of the dot's group, for each warpgroup, against the M/N block the plan
    gives that warpgroup (shapes from the instruction ``m64nNkK``); each proved operand's base
    goes to ``bases``."""
    plan = _dot_plan(dot, mma_checks)
    shape = wgmma_shape(group[0].opcode)
    if shape is None:
        return [_check(i, path, "?", "unknown", "note", f"{i.opcode}: no m64nNkK shape", {"reason": "shape"})
                for i in group]
    n_inst, k_inst = shape[1], shape[2]
    tiles = _wg_tiles(dot, tmod, n_inst)
    blocks = accumulator_blocks(group)
    reps_k = {len(b) for b in blocks}
    if tiles is None or any(len(m) * len(n) != len(blocks) for m, n in tiles) or len(reps_k) != 1:
        return [_check(i, path, "?", "unknown", "note", f"{len(group)} wgmma instruction(s) in "
                       f"{len(blocks)} accumulator block(s) do not tile the dot's result by m64n{n_inst} "
                       "blocks per warpgroup", {"reason": "instruction count"}) for i in group]
    out = []
    for slot, name in ((1, "A"), (2, "B")):
        if isinstance(group[0].args[slot], (Vec, Addr)):
            continue                                   # a register operand: no descriptor
        if name not in plan:
            out.extend(_check(i, path, name, "unchecked", None, f"operand {name}: the TTGIR plan derived no "
                              "descriptor to compare with (see the TTGIR's mma-descriptor check)",
                              {"reason": "no plan descriptor"}) for i in group)
            continue
        tcheck, ll = plan[name]
        d = tcheck.data
        kx = operand_k(d["dtype"])
        k_ext = d["shape"][1] if name == "A" else d["shape"][0]
        if kx != k_inst or k_ext // kx != len(blocks[0]):
            out.extend(_check(i, path, name, "unknown", "note", f"operand {name}: {len(blocks[0])} "
                              f"K-block(s) of k{k_inst} do not cover the planned K = {k_ext}",
                              {"reason": "instruction count"}) for i in group)
            continue
        mn = 64 if name == "A" else n_inst
        items = []
        for b, blk in enumerate(blocks):
            for kb, ins in enumerate(blk):
                per_wg = []
                for w, (ms, ns) in enumerate(tiles):
                    mr, nr = divmod(b, len(ns))
                    mb = ms[mr] if name == "A" else ns[nr]
                    want = _derived(derived, tcheck, ll, kb, mn, mb, name)
                    per_wg.append((w, mb, want))
                items.append((ins, kb, per_wg))
        out.extend(_operand_checks(ev, items, slot, name, tcheck, ll, path, mn, len(tiles), bases))
    return out


def sub_tile_blocks(plan: dict, mn: int) -> tuple[int, int]:
    """(K-block, MN block) of the buffer's layout at which an operand the TTGIR plan read as a
    sub-tile starts, for instruction blocks of ``mn`` rows (``plan``: the TTGIR ``mma-descriptor``
    check's data; its ``sub_tile`` entry holds the offsets in blocks of its own ``mn``); (0, 0) for a
    whole tile.

    >>> sub_tile_blocks({"sub_tile": {"mn_block": 1, "k_block": 4, "mn": 64}}, 32), sub_tile_blocks({}, 64)
    ((4, 2), (0, 0))
    """
    st = plan.get("sub_tile")
    if not st:
        return (0, 0)
    return (st["k_block"], st["mn_block"] * st["mn"] // mn)


def _derived(cache: dict, tcheck: Check, ll: LinearLayout, kb: int, mn: int, mb: int, name: str) -> dict:
    """The plan's descriptor for K-block ``kb`` of MN block ``mb`` (``mn`` rows): the TTGIR audit's
    own where it derived that block at that width, else derived here (cached per file)."""
    d = tcheck.data
    plan_mn = 64 if name == "A" and d["shape"][0] >= 64 else min(d["shape"][1 if name == "B" else 0], 256)
    if plan_mn == mn:
        got = next((x for x in d["descriptors"] if x["mn_block"] == mb and x["k_block"] == kb), None)
        if got is not None:
            return got
    kb0, mb0 = sub_tile_blocks(d, mn)
    key = (d["layout"], tuple(d["shape"]), d["dtype"], d["major"], name, kb + kb0, mn, mb + mb0)
    if key not in cache:
        p = derive_descriptor(ll, dtype=d["dtype"], major=d["major"], k_block=kb + kb0, mn=mn, mn_block=mb + mb0,
                              mn_dim=0 if name == "A" else 1, arch="sm_90")
        cache[key] = {"mn_block": mb, "k_block": kb, "descriptor": f"{p.descriptor.value:#018x}",
                      "status": p.verdict.status}
    return cache[key]


#: a thread's index in its warpgroup (``%tid.x = 128 w + t``)
_THREAD = z3.BitVec("thread_in_warpgroup", 7)
#: the symbols' names as ``symbol_names`` gives them (``str`` of a z3 term runs its printer: once here)
_SMEM_NAME, _TID_NAME, _THREAD_NAME = str(SMEM), str(TID), str(_THREAD)

#: proved descriptor checks of this process, by their arguments (a test run's kernels repeat their
#: tiles: the same layout, descriptor fields and block are proved once); at most _PROVED_MAX kept
_PROVED: dict[tuple, Any] = {}
_PROVED_MAX = 4096


def _checked_descriptor(value: int, ll: LinearLayout, dtype: str, major: str, k_block: int, mn: int,
                        mn_block: int, mn_dim: int, arch: str) -> Any:
    """``check_descriptor(value, ll, ...)`` (``prove.wgmma``), a proved verdict kept for the same
    arguments (a proof does not depend on anything else; other verdicts are not kept: a timeout
    may be ``unknown`` once and proved later).

    >>> from verilayout.synth.descriptor import derive_descriptor
    >>> from verilayout.frontends.triton import attr_to_linear
    >>> from verilayout.frontends.mlir import parse_value
    >>> ll = attr_to_linear(parse_value("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, "
    ...                                 "elementBitWidth = 16}>"), (64, 64))
    >>> p = derive_descriptor(ll, dtype="f16", major="K", k_block=1, mn=64, mn_block=0, mn_dim=0, arch="sm_90")
    >>> _checked_descriptor(p.descriptor.value, ll, "f16", "K", 1, 64, 0, 0, "sm_90").status
    'proved'
    """
    key = (value, ll, dtype, major, k_block, mn, mn_block, mn_dim, arch)
    hit = _PROVED.get(key)
    if hit is not None:
        return hit
    v = check_descriptor(value, planned_tile(ll, dtype, mn_dim), dtype=dtype, major=major, k_block=k_block,
                         mn=mn, mn_block=mn_block, mn_dim=mn_dim, arch=arch)
    if v.status == "proved" and len(_PROVED) < _PROVED_MAX:
        _PROVED[key] = v
    return v


def _in_warpgroup(e: z3.BitVecRef, w: int) -> tuple[z3.BitVecRef, z3.BitVecRef]:
    """``e`` for the threads of warpgroup ``w`` (``%tid.x = 128 w + t``, ``t < 128`` free) and for
    its thread 0."""
    key = ("warpgroup", e.get_id(), w)
    hit = _TERMS.get(key)
    if hit is MISSING:
        hit = (z3.simplify(z3.substitute(e, (TID, z3.Concat(z3.BitVecVal(w, 25), _THREAD)))),
               z3.substitute(e, (TID, z3.BitVecVal(128 * w, 32))))
        _TERMS.put(key, (e,), hit)
    return hit


def _operand_checks(ev: _Eval, items: list, slot: int, name: str, tcheck: Check, ll: LinearLayout,
                    path: str, mn: int, n_wg: int, bases: list) -> list[Check]:
    """One check per instruction of one operand: every warpgroup's descriptor proved (fields,
    then a common base), else the first warpgroup that fails, named; the operand's base (16-byte
    units, 14 bits) goes to ``bases`` as ``(operand, first instruction, base)``."""
    results: dict[int, list] = {}
    starts = []
    for i, (ins, kb, per_wg) in enumerate(items):
        e = ev.operand(ins.args[slot], 64, at=ins)
        res = results.setdefault(i, [])
        for w, mb, want in per_wg:
            data = {"source": "ptx", "operand": name, "instruction": i, "k_block": kb, "mn_block": mb,
                    "mn": mn, "ttgir_descriptor": want["descriptor"], "warpgroup": w}
            got = _field_check(ev, ins, e, slot, name, i, kb, w, mb, want, tcheck, ll, mn, n_wg, data)
            if got[0] == "start":
                starts.append((i, ins, got[1], data, got[2], w))
            else:
                res.append(got)
    got, base = _start_checks(starts, name, n_wg, ev.prover, ev)
    for i, st, sev, msg, data in got:
        results[i].append((st, sev, msg, data))
    out = []
    for i, (ins, _kb, _w) in enumerate(items):
        out.extend(_aggregate(ins, path, name, results[i]))
    if base is not None:
        bases.append((name, items[0][0], base))
    return out


def _wg_text(w: int, n_wg: int) -> str:
    return f", warpgroup {w}" if n_wg > 1 else ""


def _field_check(ev: _Eval, ins: Instr, e, slot: int, name: str, i: int, kb: int, w: int, mb: int,
                 want: dict, tcheck: Check, ll: LinearLayout, mn: int, n_wg: int, data: dict) -> tuple:
    """``("start", base, repeat)`` when warpgroup ``w``'s descriptor fields read the plan's block
    (its base goes on to the start check), else ``(status, severity, message, data)``."""
    d = tcheck.data
    where = f"operand {name}, {ins.head} {i} (K-block {kb}{_wg_text(w, n_wg)})"
    if e is None:
        return ("unknown", "note", f"{where}: the descriptor {ins.operands[slot]} is not a register the "
                "evaluator reads", data)
    some, e0 = _in_warpgroup(e, w) if _TID_NAME in _names(e, ev.const_cache) else (e, e)
    if some is not e0 and _THREAD_NAME in _names(some, ev.const_cache) and not _proves(ev.prover, some == e0):
        return ("unknown", "note", f"{where}: the descriptor is not proved the same for every thread of "
                "the warpgroup", data)
    hi = _constant(e0 & z3.BitVecVal(_FIELDS, 64), ev.const_cache, ev.prover)
    if hi is None:
        return ("unknown", "note", f"{where}: the descriptor's LBO/SBO/swizzle bits are not one constant "
                f"(opaque values on its path: {sorted(ev.opaque)[:3]})", data)
    data["ptx_fields"] = f"{hi:#018x}"
    if _swizzle_code(hi, "sm_90") == 0 and hi & _BASE_OFFSET:
        # PTX ISA (matrix descriptor, bits 49-51): the base offset "is valid for all swizzling modes
        # except no-swizzle mode"; Triton 3.9 sets it on unswizzled operands. Reported, then ignored.
        data["base_offset_warning"] = (hi & _BASE_OFFSET) >> 49
        hi &= ~_BASE_OFFSET
    derived = int(want["descriptor"], 16)
    kb0, mb0 = sub_tile_blocks(d, mn)
    v = _checked_descriptor(hi | (derived & _START), ll, d["dtype"], d["major"], kb + kb0, mn, mb + mb0,
                            0 if name == "A" else 1, "sm_90")
    if v.status != "proved":
        return (v.status, "error" if v.status == "counterexample" else "note",
                f"{where}: the PTX descriptor's fields {hi:#018x} do not read the planned layout {d['layout']} "
                f"(m64n{mn if name == 'B' else '*'} block {mb}): {v.reason} (the TTGIR plan derives "
                f"{want['descriptor']})", dict(data, counterexample=v.counterexample))
    base = z3.Extract(13, 0, e0) - z3.BitVecVal(derived & _START, 14)
    return ("start", base, _REPEATS["sm_90"].get(_swizzle_code(hi, "sm_90"), 1))


def _names(e: z3.ExprRef, cache: dict) -> set[str]:
    """``symbol_names(e)``, once per term in the process (``prove.term_memo``; ``cache``, the
    evaluator's, is not needed: the answer is the term's alone)."""
    key = ("names", e.get_id())
    hit = _TERMS.get(key)
    if hit is MISSING:
        hit = symbol_names(e)
        _TERMS.put(key, (e,), hit)
    return hit


def _start_checks(starts: list, name: str, n_wg: int, prover: Prover | None = None,
                  ev: _Eval | None = None) -> tuple[list[tuple], Any]:
    """Every (instruction, warpgroup) must imply the same operand base (its start minus the planned
    block's); the base most agree on is the reference, and it must sit on the swizzle repeat under
    the shared-memory assumption. ``(instruction, status, severity, message, data)`` per item, and
    the reference base (None without items)."""
    groups: list[list] = []
    for item in starts:
        for g in groups:
            if _prove(item[2] == g[0][2], prover=prover)[0] == "proved":
                g.append(item)
                break
        else:
            groups.append([item])
    if not groups:
        return [], None
    ref = max(groups, key=len)
    rep = ref[0][4]
    bases = values_at(z3.ZeroExt(18, ref[0][2]), _SMEM_NAME, _SMEM_BASES)    # every base the assumption allows
    if bases is not None:
        aligned = "proved" if all(b % rep == 0 for b in bases) else "counterexample"
    elif _aligned_by_known_bits(ref[0][2], rep):
        aligned = "proved"
    else:
        aligned, _ = _prove(z3.URem(z3.ZeroExt(18, ref[0][2]), rep) == 0, _smem_assumption(), prover=prover)
    induction = None
    if aligned != "proved" and ev is not None:     # a loop-carried buffer pointer: by induction
        induction = ev.by_induction(z3.URem(z3.ZeroExt(18, ref[0][2]), rep) == 0, _smem_assumption())
        aligned = "proved" if induction else aligned
    out = []
    for g in groups:
        for i, ins, base, data, _mode, w in g:
            where = f"operand {name}, {ins.head} {i} (K-block {data['k_block']}{_wg_text(w, n_wg)})"
            if g is ref:
                ok = aligned == "proved"
                where = f"operand {name}, {ins.head} {i} (K-block {data['k_block']})"
                out.append((i, "proved" if ok else "unknown", None if ok else "note",
                            f"{where}: fields read the planned layout and the start address is the planned "
                            f"block's" + (f" at a {rep * 16}-byte-aligned base" + (f" ({induction})" if induction else "") if ok else "; the base is not "
                            f"proved aligned to the {rep * 16}-byte swizzle repeat (free values on its path)"),
                            dict(data, assumption=ASSUMPTIONS[0], **({"induction": induction} if induction else {}))))
                continue
            s = z3.Solver()
            s.add(_smem_assumption())
            off = s.model().eval(base - ref[0][2], model_completion=True).as_long() if solve(s) == z3.sat else None
            off = None if off is None else (off if off < 1 << 13 else off - (1 << 14)) * 16
            out.append((i, "counterexample", "error",
                        f"{where}: its descriptor starts {off} bytes away from where the plan puts MN block "
                        f"{data['mn_block']}, K-block {data['k_block']} relative to the other {len(ref)} "
                        f"instruction(s) and warpgroup(s) (the TTGIR plan derives {data['ttgir_descriptor']} at "
                        "base 0)", dict(data, ptx_offset_bytes=off)))
    return out, ref[0][2]


def _aggregate(ins: Instr, path: str, name: str, results: list[tuple]) -> list[Check]:
    """One instruction's check of one operand over its warpgroups: the first error, else the first
    unknown, else proved (a base-offset warning first, as reported for the fields)."""
    out = []
    warn = next((r[3] for r in results if "base_offset_warning" in r[3]), None)
    if warn is not None:
        out.append(_check(ins, path, name, "counterexample", "warning", f"operand {name}: base offset "
                          f"{warn['base_offset_warning']} is set on an unswizzled operand; the PTX ISA defines "
                          "the field for the swizzling modes (0 for canonical layouts); an H100 ignored it in every "
                          "unswizzled case measured (docs/ground_truth.md), and the check goes on without it", dict(warn)))
    for want in ("counterexample", "unknown", "unchecked"):
        bad = next((r for r in results if r[0] == want), None)
        if bad is not None:
            return out + [_check(ins, path, name, bad[0], bad[1], bad[2], bad[3])]
    if not results:
        return out
    st, sev, msg, data = results[0]
    n = len(results)
    return out + [_check(ins, path, name, st, sev, msg + (f" (each of the {n} warpgroups)" if n > 1 else ""),
                         dict(data, warpgroups=n))]


def _mma_name(ins: Instr) -> str:
    """An MMA instruction's name in checks: its opcode's first two parts (``wgmma.mma_async``,
    ``tcgen05.mma``)."""
    return ".".join(ins.parts[:2])


def _check(ins: Instr, path: str, operand: str, status: str, severity: str | None, message: str,
           data: dict) -> Check:
    return Check(_mma_name(ins), ins.line, ins.loc, "mma-descriptor", status, severity, message,
                 dict(data, source="ptx"))


def audit_ptx_text(text: str | bytes, path: str = "<ptx>", ttgir: str | bytes | None = None,
                   ttgir_checks: tuple[Check, ...] = (),
                   no_plan: str = "no TTGIR beside this PTX (X.ttgir)", ttgir_module: Module | None = None) -> FileReport:
    """The PTX checks of one file (see the module docstring); ``ttgir``: the TTGIR beside it and
    ``ttgir_checks`` its audit's checks (the plan), ``ttgir_module`` its parsed module where the
    caller has it. The PTX is parsed here, once, and every check module takes the one
    :class:`PtxContext` (:func:`ptx_context`). Without a TTGIR each wgmma is checked on its own
    (``verilayout.audit.ptx_wgmma``: valid canonical descriptors, shape, K-block advance) and each
    tcgen05.mma is listed unchecked."""
    if ttgir is not None and ttgir_module is not None:
        quiet = _quiet_report(text, ttgir_module, path)     # no check reads this PTX: not parsed
        if quiet is not None:
            return quiet
    mod = parse_ptx(text)
    if ttgir is None:
        return _without_plan(mod, path, no_plan)
    tmod = ttgir_module if ttgir_module is not None else parse_module(ttgir)
    return cannot_launch(_with_plan(ptx_context(mod, tmod, ttgir_checks, path)), tmod, _first_shared(mod))


#: TTGIR ops no PTX check reads (element-wise arithmetic, global loads and stores, control flow):
#: a kernel of these alone, whose PTX has no instruction a PTX check reads either
#: (``frontends.prescan.quiet_ptx``), has no PTX check; every other op (shared memory, conversions,
#: reductions, dots, tensor memory, warp specialization, ...) has its PTX read.
_QUIET_OPS = frozenset(("tt.func", "tt.return", "tt.load", "tt.store", "tt.addptr", "tt.get_program_id",
                        "tt.get_num_programs", "tt.make_range", "tt.splat", "tt.broadcast", "tt.expand_dims",
                        "tt.bitcast", "tt.fp_to_fp", "tt.ptr_to_int", "tt.int_to_ptr", "tt.approx_divf",
                        "tt.precise_divf", "tt.precise_sqrt", "tt.extern_elementwise", "tt.atomic_rmw",
                        "tt.atomic_cas", "scf.for", "scf.yield", "scf.if", "scf.while", "scf.condition",
                        "cf.br", "cf.cond_br"))
_QUIET_DIALECTS = ("arith.", "math.")


def _quiet_report(text: str | bytes, tmod: Module, path: str) -> FileReport | None:
    """The report of a PTX file that no check reads, without parsing it (what :func:`_with_plan`
    finds there: no check, on the PTX's target): its TTGIR holds only :data:`_QUIET_OPS` and
    arithmetic, its kernel can launch, and its text spells no instruction a check reads and parses
    (``frontends.prescan.quiet_ptx``); else None (the file is parsed and checked)."""
    if not all(op.name in _QUIET_OPS or op.name.startswith(_QUIET_DIALECTS) for op in tmod.ops):
        return None
    if isinstance(text, (bytes, bytearray)):
        if len(text) > MAX_PTX_BYTES:
            return None
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            return None
    quiet = quiet_ptx(text) if len(text) <= MAX_PTX_BYTES else None
    if quiet is None or launch_check(tmod) is not None:
        return None
    return FileReport(path, quiet.target, None, (), assumptions=ASSUMPTIONS + SMEM_ASSUMPTIONS)


def _first_shared(mod: PtxModule) -> tuple[str, int]:
    """The first instruction that addresses shared memory (where a launch-resources warning of the
    PTX points), else the module's first instruction, else line 1."""
    first = next((i for i in mod.instrs if "shared" in i.parts), mod.instrs[0] if mod.instrs else None)
    return (first.opcode, first.line) if first is not None else ("module", 1)


#: The first opcode part (``Instr.parts[0]``) of every MMA opcode prefix and group close of
#: :data:`DOT_FAMILIES` (``wgmma.mma_async``, ``wgmma.commit_group``, ``tcgen05.mma``, ``tcgen05.commit``,
#: ``mma.sync``): the instructions :func:`ptx_context` hands to ``dot_ties``.
_MMA_HEADS = frozenset(("wgmma", "tcgen05", "mma"))


def ptx_context(mod: PtxModule, tmod: Module, plan: tuple[Check, ...] = (), path: str = "<ptx>") -> PtxContext:
    """The one context of a PTX file audited against its TTGIR plan: the first-iteration evaluator of
    each function (the worker regions' ``%tid.x`` per partition, ``audit.ptx_partitions``), the
    partition map, each MMA family's groups tied to their dots (``audit.ptx_dots.dot_ties``) and an
    empty memo; ``plan``: the TTGIR audit's checks.

    >>> from verilayout.frontends.ptx import parse_ptx
    >>> c = ptx_context(parse_ptx(".version 8.7\\n.entry f()\\n{\\nret;\\n}"), parse_module("module {\\n}"))
    >>> sorted(c.values), c.partitions, sorted(c.ties)
    (['f'], None, ['mma.sync', 'sm_100', 'sm_90'])
    """
    values, pmap = partitioned(mod, tmod, {f: _Eval(mod, f, first_iteration=True) for f in mod.functions})
    mmas = [i for i in mod.instrs if i.parts[0] in _MMA_HEADS]   # what mma_groups reads; the rest it skips
    ties = {family: dot_ties(mmas, tmod.ops, family) for family in DOT_FAMILIES}
    return PtxContext(path, mod, tmod, tuple(plan), values, pmap, ties, {})


def _without_plan(mod: PtxModule, path: str, no_plan: str) -> FileReport:
    """No plan: each wgmma's own descriptors and K-block chain (``audit.ptx_wgmma``, evaluators over
    the module's shared base); each tcgen05.mma ``unchecked`` with ``no_plan``."""
    values = {f: _Eval(mod, f, smem_names=_smem_names(mod)) for f in mod.functions}
    checks = wgmma_checks_without_plan(PtxContext(path, mod, None, (), values))
    for i in mod.instrs:
        if i.opcode.startswith("tcgen05.mma"):
            checks.append(_check(i, path, "?", "unchecked", None, f"{i.opcode}: {no_plan}: the plan to "
                                 "compare with is missing", {"reason": "no ttgir"}))
    return FileReport(path, mod.target, None, tuple(checks), assumptions=NO_PLAN_ASSUMPTIONS)


def _with_plan(ctx: PtxContext) -> FileReport:
    """Every check of a PTX file against its plan, each check module's entry point called once with
    ``ctx``, in this order (the memo's users rely on it: the element checks before the conversions)."""
    checks, operands = _mma_checks(ctx)
    checks.extend(_safe_buffer_checks(operands, ctx.tmod, ctx.path))
    checks.extend(smem_checks(ctx))
    elements = element_checks(ctx)
    checks.extend(elements + partition_checks(ctx, elements))
    checks.extend(convert_checks(ctx))
    checks.extend(register_permute_checks(ctx))
    checks.extend(warp_reduce_checks(ctx))
    checks.extend(tmem_message_checks(ctx))
    return FileReport(ctx.path, ctx.ptx.target, None, tuple(checks), assumptions=ASSUMPTIONS + SMEM_ASSUMPTIONS)


def _mma_checks(ctx: PtxContext) -> tuple[list[Check], list]:
    """The descriptor checks of every dot's MMA group (sm_90 wgmma, then sm_100 tcgen05; a group no
    dot owns is ``unchecked``), each function's loop evaluator built at its first group; and each
    proved operand as ``(dot, operand, instruction, base, evaluator)`` for the buffer checks."""
    checks: list[Check] = []
    by_func: dict[str, Any] = {}
    derived: dict = {}                                  # descriptors derived here, per file
    operands: list = []
    for arch in ("sm_90", "sm_100"):
        ops = DOT_FAMILIES[arch][0]
        mma_checks = [c for c in ctx.plan if c.check == "mma-descriptor" and c.op in ops]
        ties = ctx.ties[arch]
        work: list[tuple[Any, list[Instr]]] = []
        for g, j in zip(ties.groups, ties.owner):
            if j is None:
                checks.extend(_check(i, ctx.path, "?", "unchecked", None, f"no {' / '.join(ops)} of the TTGIR has "
                                     f"this instruction's source line ({i.loc})", {"reason": "unmatched"}) for i in g)
            elif arch == "sm_100" and work and work[-1][0] is ties.dots[j]:
                work[-1][1].extend(g)                  # tcgen05: a dot's instructions checked together
            else:
                work.append((ties.dots[j], list(g)))
        for dot, g in work:
            func = g[0].func
            ev = by_func.get(func) or by_func.setdefault(func, with_partitions(_Eval(ctx.ptx, func), ctx.partitions))
            found: list = []
            checks.extend(_dot_checks(ev, g, dot, ctx.tmod, mma_checks, ctx.path, arch, derived, ties.how, found))
            operands.extend((dot, name, ins, base, ev) for name, ins, base in found)
    return checks, operands


def _dot_checks(ev: _Eval, group: list[Instr], dot: Any, tmod: Module, mma_checks: list[Check], path: str,
                arch: str, derived: dict, how: str, bases: list) -> list[Check]:
    """The checks of one dot's instruction group, each saying how the group was matched to the dot;
    a layout the model refuses, or an internal failure, is one ``unchecked`` result, never silence."""
    try:
        if arch == "sm_90":
            got = _wgmma_checks(ev, group, dot, tmod, mma_checks, path, derived, bases)
        else:
            got = _tc05_checks(ev, group, dot, mma_checks, path, arch, bases) + \
                _idesc_checks(ev, group, mma_checks, dot, path)
    except LayoutError as e:
        return [_check(i, path, "?", "unchecked", None, f"{i.opcode}: {e}", {"reason": str(e)}) for i in group]
    except (AssertionError, ValueError, KeyError, IndexError, TypeError, z3.Z3Exception) as e:
        why = f"internal error ({type(e).__name__}: {e})"
        return [_check(i, path, "?", "unchecked", None, f"{i.opcode}: unchecked: {why}", {"reason": why})
                for i in group]
    return [replace(c, data=dict(c.data, dot_line=dot.line, matched_by=how)) for c in got]


def _safe_buffer_checks(operands: list, tmod: Module, path: str) -> list[Check]:
    """:func:`_buffer_checks`, an internal failure reported as ``unchecked`` at each operand."""
    try:
        return _buffer_checks(operands, tmod, path)
    except (AssertionError, ValueError, KeyError, IndexError, TypeError, z3.Z3Exception) as e:
        why = f"internal error ({type(e).__name__}: {e})"
        return [Check(_mma_name(ins), ins.line, ins.loc, "operand-buffers", "unchecked", None,
                      f"operand {name}: unchecked: {why}", {"source": "ptx", "operand": name, "reason": why})
                for _dot, name, ins, _base, _ev in operands]


def _buffer_checks(operands: list, tmod: Module, path: str) -> list[Check]:
    """Two MMA operands that view different TTGIR allocations live at the same time
    (:func:`live_lines` intersect) must read disjoint bytes: for each such pair in one function,
    the later operand's first instruction gets a ``operand-buffers`` check that the two views' byte
    ranges (each base to base + the view's bytes, modulo the 14-bit start field's 256 KB) do not
    meet: proved, or a counterexample (the descriptor reads another buffer). Only pairs whose
    bases are one constant distance apart for every value of the symbols are compared (a shared
    pipeline index cancels); others have independent free indices and get no check."""
    producers = producers_by_name(tmod.ops)
    views = []
    for dot, name, ins, base, ev in operands:
        idx = 0 if name == "A" else 1
        root = memdesc_root(dot.operands[idx], producers, dot.line) if idx < len(dot.operands) else None
        t = dot.in_types[idx].read() if root is not None else None
        bits = elem_bit_width(t.elem) if t is not None else None
        if root is None or not bits:
            continue
        size = int(np.prod(layout_shape(t))) * bits // 8 // 16     # the buffer (a sub-tile's base is its buffer's)
        stage = stage_view(dot.operands[idx], producers, dot.line)
        views.append((dot, name, ins, base, ev, root, live_lines(root, tmod.ops), size, stage))
    out = []
    done: set = set()
    for k, (dot, name, ins, base, ev, root, live, size, stage) in enumerate(views):
        for dot2, name2, ins2, base2, ev2, root2, live2, size2, stage2 in views[:k]:
            key = (ins.line, name, root2.line)
            if ev2 is not ev or key in done:
                continue
            if root2 is root:
                if stage == stage2 and (dot2.line, name2) != (dot.line, name):
                    done.add(key)
                    got = _same_buffer_check(ev, (dot, name, ins, base), (dot2, name2, ins2, base2), stage)
                    if got is not None:
                        out.append(got)
                continue
            if live[0] > live2[1] or live2[0] > live[1]:
                continue
            done.add(key)
            got = _disjoint_check(ev, (dot, name, ins, base, size), (dot2, name2, ins2, base2, size2), path)
            if got is not None:
                out.append(got)
    return out


def _same_buffer_check(ev: _Eval, cur: tuple, other: tuple, stage: str) -> Check | None:
    """Two MMA operands that are sub-tiles (or the whole) of one buffer view ``stage``: the buffer base
    each one's descriptors imply (its start minus its planned block's offset in the buffer) must be
    the same; a sub-tile at another place than its offsets say is off by the difference. None
    when the distance is not one constant."""
    dot, name, ins, base = cur
    dot2, name2, ins2, base2 = other
    d = _constant(z3.ZeroExt(18, base2 - base), ev.const_cache, ev.prover)
    if d is None:
        return None
    off = (d if d < 1 << 13 else d - (1 << 14)) * 16
    data = {"source": "ptx", "operand": name, "dot_line": dot.line, "other_dot_line": dot2.line,
            "other_operand": name2, "other_instruction_line": ins2.line, "buffer": stage[0],
            "distance_bytes": off, "assumption": ASSUMPTIONS[0]}
    what = (f"operand {name} of the dot at TTGIR line {dot.line} and operand {name2} of the dot at TTGIR line "
            f"{dot2.line} (PTX line {ins2.line}) read the buffer {stage[0]}")
    if d == 0:
        return Check(_mma_name(ins), ins.line, ins.loc, "operand-buffers", "proved", None,
                     f"{what}: their descriptors place it at the same base (each sub-tile where its offsets say)",
                     data)
    return Check(_mma_name(ins), ins.line, ins.loc, "operand-buffers", "counterexample", "error",
                 f"{what}: their descriptors place it {off} bytes apart: this operand's sub-tile is {off} bytes "
                 f"from where its offsets in the buffer put it, relative to the other's", data)


def _disjoint_check(ev: _Eval, cur: tuple, other: tuple, path: str) -> Check | None:
    """The ``operand-buffers`` check of :func:`_buffer_checks` for one pair of views; None when the
    distance between their bases is not one constant (independent buffer indices: not compared)."""
    dot, name, ins, base, size = cur
    dot2, name2, ins2, base2, size2 = other
    d = _constant(z3.ZeroExt(18, base2 - base), ev.const_cache, ev.prover)   # 14-bit, modulo the start field
    if d is None:
        return None
    apart = d >= size and (1 << 14) - d >= size2 if d else False
    data = {"source": "ptx", "operand": name, "dot_line": dot.line, "other_dot_line": dot2.line,
            "other_operand": name2, "other_instruction_line": ins2.line, "bytes": size * 16,
            "other_bytes": size2 * 16, "distance_bytes": d * 16, "assumption": ASSUMPTIONS[0]}
    what = (f"operand {name} of the dot at TTGIR line {dot.line} and operand {name2} of the dot at TTGIR "
            f"line {dot2.line} (PTX line {ins2.line}) view different allocations, both live")
    if apart:
        return Check(_mma_name(ins), ins.line, ins.loc, "operand-buffers", "proved", None,
                     f"{what}: in every warpgroup their descriptors start {d * 16} bytes apart (mod 256 KB) "
                     f"and read disjoint bytes ({size * 16} and {size2 * 16} bytes)", data)
    return Check(_mma_name(ins), ins.line, ins.loc, "operand-buffers", "counterexample", "error",
                 f"{what}: in every warpgroup their descriptors start {d * 16} bytes apart (mod 256 KB), so "
                 f"their ranges ({size * 16} and {size2 * 16} bytes) overlap: one reads the other's buffer", data)


def _idesc_checks(ev: _Eval, instrs: list[Instr], mma_checks: list[Check], dot: Any, path: str) -> list[Check]:
    """tcgen05 ``kind::f16``/``tf32``/``f8f6f4`` instruction descriptor (PTX ISA, "Instruction
    descriptor"): bit 15 A transposed (MN-major), bit 16 B transposed, bits 17-22 N >> 3, bits 24-28
    M >> 4; compared with the majors the plan derived and the operands' M and N extents (N: the
    accumulator's ``blockN`` where it splits B, :func:`_n_split`)."""
    out = []
    plan = {c.data.get("operand"): c.data for c in mma_checks if c.line == dot.line}
    split = _n_split(dot, {c.data.get("operand"): c for c in mma_checks if c.line == dot.line})
    for ins in instrs:
        kind = next((p for p in ins.parts if p.startswith("kind::")), "")
        if kind not in ("kind::f16", "kind::tf32", "kind::f8f6f4") or len(ins.args) < 4:
            continue
        e = ev.operand(ins.args[3], 32, at=ins)
        val = _constant(e, ev.const_cache, ev.prover) if e is not None else None
        data = {"source": "ptx", "operand": "idesc", "kind": kind}
        if val is None:
            out.append(Check("tcgen05.mma", ins.line, ins.loc, "mma-instruction", "unknown", "note",
                             "the instruction descriptor is not one constant", data))
            continue
        m, n = ((val >> 24) & 0x1F) * 16, ((val >> 17) & 0x3F) * 8
        got = {"A": "MN" if (val >> 15) & 1 else "K", "B": "MN" if (val >> 16) & 1 else "K"}
        data.update(idesc=f"{val:#010x}", m=m, n=n, a_major=got["A"], b_major=got["B"])
        wrong = [f"operand {o} is read {got[o]}-major, the plan stores it {plan[o]['major']}-major"
                 for o in ("A", "B") if o in plan and plan[o].get("major") and plan[o]["major"] != got[o]]
        if "B" in plan and plan["B"].get("shape") and n != (split[0] if split else min(plan["B"]["shape"][1], 256)):
            wrong.append(f"N = {n}, the B operand has {plan['B']['shape'][1]} columns"
                         + (f" issued in blocks of the accumulator's blockN = {split[0]}" if split else ""))
        if "A" in plan and plan["A"].get("shape") and m not in (min(plan["A"]["shape"][0], 128), 64):
            wrong.append(f"M = {m}, the A operand has {plan['A']['shape'][0]} rows")
        if wrong:
            out.append(Check("tcgen05.mma", ins.line, ins.loc, "mma-instruction", "counterexample", "error",
                             f"instruction descriptor {val:#010x}: " + "; ".join(wrong), data))
        else:
            out.append(Check("tcgen05.mma", ins.line, ins.loc, "mma-instruction", "proved", None,
                             f"instruction descriptor {val:#010x}: M {m}, N {n}, A {got['A']}-major, "
                             f"B {got['B']}-major, as planned", data))
    return out


def audit_ptx_file(path: str, data: bytes | None = None) -> FileReport:
    """Audit one ``.ptx`` file, paired with the ``.ttgir`` of the same stem beside it (Triton's cache
    keeps both), whose own audit gives the plan, or else with a kept CuTe-DSL ``.mlir`` (the plan of
    ``audit.cute_dsl``). ``data``: the file's bytes where the caller has read them already
    (``audit.paths``), else the file is read here; either way it is read once, and so is the plan.

    >>> audit_ptx_file("/nonexistent.ptx")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: /nonexistent.ptx: cannot read: No such file or directory
    """
    if data is None:
        data = _read_ptx(path)
    stem = path[:-4] if path.endswith(".ptx") else path
    if not os.path.isfile(stem + ".ttgir") and os.path.isfile(stem + ".mlir"):
        from verilayout.audit.cute_dsl import audit_modules, read_plan  # deferred: start-up time
        plan = read_plan(stem + ".mlir")                # a CuTe-DSL kernel: its kept MLIR is the plan
        try:
            return audit_modules(plan, parse_ptx(data), path)
        except LayoutError as e:
            raise LayoutError(f"{path}: {e}") from None
    ttgir, plan, why, tmod = _ttgir_plan(stem + ".ttgir")
    try:
        return audit_ptx_text(data, path, ttgir, plan, why, tmod if ttgir is not None else None)
    except LayoutError as e:
        raise LayoutError(f"{path}: {e}") from None


def _ttgir_plan(ttgir_path: str) -> tuple[bytes | None, tuple[Check, ...], str, Module | None]:
    """The TTGIR beside a PTX file: its bytes, its audit's checks and its parsed module (``audit.ttgir.
    audited``: parsed and audited once, kept for the pair's TTGIR file), or None and why not."""
    if not os.path.isfile(ttgir_path):
        return None, (), "no TTGIR beside this PTX (X.ttgir)", None
    try:
        with open(ttgir_path, "rb") as f:
            ttgir = f.read()
        tmod, rep = audited(ttgir, ttgir_path)
        return ttgir, rep.checks, "", tmod
    except RecursionError:
        return None, (), f"the TTGIR beside it cannot be read ({ttgir_path}: nested too deeply)", None
    except (OSError, LayoutError) as e:
        return None, (), f"the TTGIR beside it cannot be read ({ttgir_path}: {e})", None


def _read_ptx(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise LayoutError(f"{path}: cannot read: {e.strerror}") from None
