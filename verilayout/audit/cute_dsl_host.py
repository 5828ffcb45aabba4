"""A CuTe-DSL kernel's host side checked against its device side: the tensor maps the host encodes,
the launch, and the premises the device-side checks state.

The host side is read by :mod:`verilayout.frontends.cute_host` (the kept MLIR's host function: per TMA
atom the arguments ``cuTensorMapEncodeTiled`` receives; the ``cuda.launch_ex`` with its ``launch_cfg``).
The kernel's ``%arg<i>`` is the launch's argument ``i``; a ``cute_nvgpu.atom.tma_partition(%argK, ...)`` of
the kernel partitions with the map the host built for argument ``K``, and a PTX copy is tied to its
partition by the ``tma-smem-box`` proof (:func:`verilayout.audit.cute_dsl.tma_checks`).

Checks (each names the MLIR and PTX lines it compares):

* ``tma-map`` (one per host map, at the PTX line of its first copy): the driver's field rules (CUDA
  driver API, ``cuTensorMapEncodeTiled``: rank 1..5; ``globalDim[i]`` in 1..2^32; ``globalStrides[i]`` a
  multiple of 16 below 2^40, and dim 0 contiguous, the driver taking no stride for it; ``boxDim[i]`` in
  1..256 with ``boxDim[0] x elementSize`` a multiple of 16; with a swizzle, the inner box at most its span:
  32/64/128 bytes); the box each partition of the kernel expects equals the map's (dims past the
  partition's rank of extent 1); the element type and swizzle are the kernel's shared buffer's. A
  dynamic dim or stride (``?``) is a premise, stated; ``?{div=N}`` proves the 16-byte rule where ``N``
  elements are 16 bytes. Where the PTX rewrites its tensor maps (``tensormap.replace``), the host's dims,
  strides and address are placeholders: only the fields it does not replace are compared.
* ``tma-grid`` (one per PTX copy with a map and a coordinate that is a function of the CTA's place alone):
  for every CTA of the grid the host launches, that coordinate lies in ``[0, globalDim)``: the special
  registers obey the launch (``%nctaid = grid``, ``%nclusterid = grid / cluster``, ``%ctaid = %clusterid x
  cluster + %cluster_ctaid``, each id below its count: PTX ISA, special registers); a CTA whose box
  starts past the tensor for every path is an error naming the CTA and both values.
* ``launch`` (one per kernel): grid, block and cluster agree with the kernel's ``cutlass_launch_facts``
  (and the block with the PTX's ``.reqntid``); the grid is a multiple of the cluster (CUDA Programming
  Guide, thread block clusters); the dynamic shared bytes cover the kernel's buffers (``cute.kernel_smem_size``
  of the launched kernel: its own count, read as covering; a constant: compared with the end of the last
  buffer the MLIR places).
* ``host-premise`` (one per device-side check resting on a premise the host side bears on): (a) a loop
  counter below ``2^B`` (:func:`trip_premise`); (b) a CTA pair or multicast group: the cluster launched
  holds it and the host's ``num_multicast`` is 1 or the group's size; (c) a coordinate's int32 product:
  decided for coordinates that are functions of the CTA's place. Proved, an error naming the field and
  both values, or ``unknown`` (the premise stays as the check states it).

>>> TILE_INFERENCE.startswith("inference")
True
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import product as cartesian
from typing import Any, Callable

import z3

from verilayout.audit.model import Check
from verilayout.core.cute.int_tuple import product
from verilayout.core.smt import solve
from verilayout.errors import LayoutError
from verilayout.frontends.cute_host import HostLaunch, HostTmaMap, KernelFacts, host_launch, host_tma_maps, kernel_facts
from verilayout.frontends.cute_mlir import CuteModule, Memref, interpret, parse_cute_mlir
from verilayout.frontends.cute_text import parse_cute
from verilayout.hw.nvidia.ptx_model import Instr, PtxModule
from verilayout.prove.ptx_values import PtxValues, symbol_names

__all__ = ["NEW_CHECKS", "DeviceSide", "host_checks", "map_findings", "trip_premise", "grid_laws", "path_laws",
           "coordinate_range", "overflow_for_grid", "HostView", "TILE_INFERENCE",
           "DRIVER", "CLUSTER_GUIDE"]

#: the names of the checks this module adds
NEW_CHECKS = ("tma-map", "tma-grid", "launch", "host-premise")
#: the source of the tensor-map field rules
DRIVER = "CUDA driver API cuTensorMapEncodeTiled"
#: the source of the grid/cluster rule
CLUSTER_GUIDE = "CUDA Programming Guide, thread block clusters: the grid is a whole number of clusters"
#: what a tile-count bound rests on (the MLIR states the problem and the grid, not the scheduler's order)
TILE_INFERENCE = ("inference: the persistent loop runs once per output tile its CTA is handed, each tile handed to "
                  "one CTA, so a CTA runs it at most ceil(tiles / CTAs) times; an output tile is no smaller than "
                  "the epilogue's TMA store box, so tiles <= prod ceil(globalDim / boxDim) of the store's map")
_SPAN = {"none": 0, "32B": 32, "64B": 64, "128B": 128}
_AXES = "xyz"


@dataclass(frozen=True)
class DeviceSide:
    """What the device-side audit (:mod:`verilayout.audit.cute_dsl`) hands the host checks: a kernel
    function's evaluator (``evaluator(func)``), a copy's coordinates as it reads them (``coords(func, ins)``,
    None where not read), the int32-product premise of a coordinate (``no_overflow(e)``: (law, text) or
    None), the end of the last shared buffer the MLIR places (``smem_end``), the TMA plans and each copy's
    proved one (``matched``, by ``id``), and the premises the device checks stated (``premises``:
    ``("a", line)`` -> (bound bits, step, register); ``("b", line)`` -> ("pair" | "multicast", ...);
    ``("c", line)`` -> the coordinates resting on an int32 product)."""

    evaluator: Callable[[str], PtxValues]
    coords: Callable[[str, Instr], list]
    no_overflow: Callable[[z3.BitVecRef], Any]
    smem_end: int | None
    tplans: tuple
    matched: dict
    premises: dict


@dataclass(frozen=True)
class HostView:
    """What the host side says about one launched kernel: its facts, the launch, the maps by the
    kernel argument they are passed as (``%arg<i>``), and whether the PTX rewrites its maps."""

    kernel: KernelFacts
    launch: HostLaunch
    maps: dict
    all_maps: tuple
    rewritten: tuple[int, ...]

    def map_of_arg(self, arg: str) -> HostTmaMap | None:
        return self.maps.get(arg)


def _view(mod: CuteModule, ptx: PtxModule) -> HostView | None:
    """The host view of the module's one launched kernel; None where the MLIR launches none it defines."""
    kernels = {k.name: k for k in kernel_facts(mod)}
    launches = [la for la in host_launch(mod) if la.kernel in kernels]
    if len(launches) != 1:
        return None
    la = launches[0]
    k = kernels[la.kernel]
    maps = host_tma_maps(mod)
    by_value = {m.value: m for m in maps}
    by_arg = {f"%arg{i}": by_value[v] for i, v in enumerate(la.args) if v in by_value}
    rewritten = tuple(i.line for i in ptx.instrs if i.opcode.startswith("tensormap.replace"))
    return HostView(k, la, by_arg, tuple(maps), rewritten)


def _check(op: str, line: int, name: str, status: str, msg: str, data: dict) -> Check:
    sev = None if status == "proved" else "error" if status == "counterexample" else "note"
    return Check(op, line, None, name, status, sev, msg, dict(data, source="mlir host side", plan="cute-dsl mlir"))


# ---------------------------------------------------------------------------------------------- tma-map


def map_findings(m: HostTmaMap, rewritten: bool = False) -> tuple[list[str], list[str]]:
    """``(broken, premises)`` of a host map against the driver's field rules (module docstring): each
    broken rule names the field and its value; each premise a rule a dynamic value is not known to meet.
    With ``rewritten`` the dims and strides (which the kernel replaces) are not judged.

    >>> from verilayout.frontends.cute_host import HostTmaMap
    >>> m = HostTmaMap(1, "%a", "load", "f16", 16, (512, 1024), (2, 1000), (2, 1000), (64, 128), "128B", "", 1, "")
    >>> map_findings(m)[0]
    ['globalStrides[1] = 1000 bytes is not a multiple of 16 (CUDA driver API cuTensorMapEncodeTiled)']
    """
    bad, prem = [], []
    esize = m.elem_bits // 8
    if not 1 <= m.rank <= 5:
        bad.append(f"tensorRank = {m.rank} is outside 1..5")
    if not rewritten:
        for d, (dim, st, div) in enumerate(zip(m.global_dims, m.global_strides, m.stride_divisors)):
            if dim is None:
                prem.append(f"globalDim[{d}] is dynamic (?): taken in 1..2^32")
            elif not 1 <= dim <= 1 << 32:
                bad.append(f"globalDim[{d}] = {dim} is outside 1..2^32")
            if d == 0:
                if st is None:
                    prem.append("dim 0's stride is dynamic (?): taken as contiguous")
                elif st != esize:
                    bad.append(f"dim 0's stride is {st} bytes, not the element size {esize}: the driver takes no "
                               "stride for dim 0 (its elements are contiguous)")
            elif st is None:
                if div % 16:
                    prem.append(f"globalStrides[{d}] is dynamic (a multiple of {div} bytes): taken a multiple of 16")
                prem.append(f"globalStrides[{d}] is dynamic: taken below 2^40")
            elif st % 16 or not 0 < st < 1 << 40:
                bad.append(f"globalStrides[{d}] = {st} bytes is not a multiple of 16" if st % 16
                           else f"globalStrides[{d}] = {st} bytes is outside 1..2^40-1")
    for d, b in enumerate(m.box):
        if not 1 <= b <= 256:
            bad.append(f"boxDim[{d}] = {b} is outside 1..256")
    if m.box and (m.box[0] * m.elem_bits) % 128:
        bad.append(f"boxDim[0] x elementSize = {m.box[0] * m.elem_bits // 8} bytes is not a multiple of 16")
    span = _SPAN.get(m.swizzle or "", None)
    if m.swizzle is None:
        bad.append(f"the shared layout's swizzle {m.swizzle_text} has no CUtensorMapSwizzle")
    elif span and m.box and m.box[0] * m.elem_bits // 8 > span:
        bad.append(f"boxDim[0] x elementSize = {m.box[0] * m.elem_bits // 8} bytes exceeds the {span}-byte span of "
                   f"SWIZZLE_{m.swizzle}")
    return [f"{b} ({DRIVER})" for b in bad], prem


def _partition_facts(mod: CuteModule, line: int) -> tuple[str, Memref | None]:
    """The kernel argument a ``tma_partition`` at ``line`` partitions with, and its shared memref."""
    op = next((o for o in mod.ops if o.line == line), None)
    if op is None or not op.operands:
        return "", None
    mem = interpret(op.operand_types[3]) if len(op.operand_types) > 3 else None
    return op.operands[0], mem if isinstance(mem, Memref) else None


def _kernel_side(m: HostTmaMap, tplan: Any, mem: Memref | None) -> list[str]:
    """What a kernel partition (``tplan``, with its shared memref) expects of map ``m`` and the map
    does not give: box dims, element type, swizzle; each naming both values."""
    bad = []
    if tplan.grid is not None:
        kbox = tuple(tplan.grid.box) + (1,) * (m.rank - tplan.grid.rank)
        for d, (h, k) in enumerate(zip(m.box, kbox)):
            if h != k:
                bad.append(f"boxDim[{d}]: the host encodes {h} (MLIR line {m.line}), the kernel's partition (MLIR line "
                           f"{tplan.line}) expects {k}")
        if len(kbox) != m.rank:
            bad.append(f"rank: the host encodes {m.rank} dims, the kernel's partition (MLIR line {tplan.line}) "
                       f"{tplan.grid.rank}")
    if mem is not None:
        if mem.elem != m.elem:
            bad.append(f"element type: the host encodes {m.elem}, the kernel's buffer is {mem.elem}")
        want = {None: "none", (1, 4, 3): "32B", (2, 4, 3): "64B", (3, 4, 3): "128B"}.get(mem.swizzle, "?")
        if want != m.swizzle:
            bad.append(f"swizzle: the host encodes SWIZZLE_{m.swizzle} ({m.swizzle_text or 'no swizzle'}), the kernel's "
                       f"buffer is {'S<%d,%d,%d>' % mem.swizzle if mem.swizzle else 'unswizzled'} (SWIZZLE_{want})")
    return bad


def _map_checks(mod: CuteModule, view: HostView, tplans: list, matched: dict, copies: list[Instr]) -> list[Check]:
    """One ``tma-map`` per host map (module docstring)."""
    out = []
    users: dict[int, list] = {}
    for p in tplans:
        arg, mem = _partition_facts(mod, p.line)
        m = view.map_of_arg(arg)
        if m is not None:
            users.setdefault(m.line, []).append((p, mem))
    first = {}
    for ins in copies:
        p = matched.get(id(ins))
        arg = _partition_facts(mod, p.line)[0] if p is not None else ""
        m = view.map_of_arg(arg)
        if m is not None:
            first.setdefault(m.line, ins.line)
    fallback = copies[0].line if copies else 1
    for m in view.all_maps:
        bad, prem = map_findings(m, bool(view.rewritten))
        for p, mem in users.get(m.line, []):
            bad += _kernel_side(m, p, mem)
        data = {"mlir_line": m.line, "tensor_map": _map_dict(m), "assumptions": prem,
                "partitions": [p.line for p, _mem in users.get(m.line, [])]}
        head = (f"the TMA {m.kind} map the host encodes at MLIR line {m.line} (globalDim {_fmt(m.global_dims)}, "
                f"globalStrides {_fmt(m.global_strides[1:])} bytes, boxDim {_fmt(m.box)}, {m.elem}, "
                f"SWIZZLE_{m.swizzle}, num_multicast {m.num_multicast})")
        if bad:
            out.append(_check("cuTensorMapEncodeTiled", first.get(m.line, fallback), "tma-map", "counterexample",
                              f"{head}: " + "; ".join(dict.fromkeys(bad)), data))
            continue
        parts = [f"meets the driver's field rules ({DRIVER})"]
        if view.rewritten:
            parts.append(f"its dims, strides and address are rewritten in the kernel (tensormap.replace at PTX line "
                         f"{view.rewritten[0]}): those fields of the host's map are placeholders, not compared")
        n = len(users.get(m.line, []))
        parts.append(f"{n} kernel partition(s) expect its box, element type and swizzle" if n
                     else "no kernel partition tied to it")
        if prem:
            parts.append("premises: " + "; ".join(prem))
        out.append(_check("cuTensorMapEncodeTiled", first.get(m.line, fallback), "tma-map",
                          "proved" if n else "unknown", f"{head}: " + "; ".join(parts), data))
    return out


def _fmt(vals: tuple) -> str:
    return "(" + ", ".join("?" if v is None else str(v) for v in vals) + ")"


def _map_dict(m: HostTmaMap) -> dict:
    return {"global_dims": list(m.global_dims), "global_strides": list(m.global_strides[1:]), "box": list(m.box),
            "elem": m.elem, "swizzle": m.swizzle, "num_multicast": m.num_multicast}


# ---------------------------------------------------------------------------------------------- tma-grid


def grid_laws(grid: tuple[int, int, int], cluster: tuple[int, int, int]) -> tuple[dict, list]:
    """The special registers' values and bounds for a launch of ``grid`` CTAs in clusters of ``cluster``:
    ``(constants, laws)``, constants by the evaluator's symbol name (``v%nctaid.x``), laws over the ids.

    Law (PTX ISA, special registers): ``%nctaid`` is the grid, ``%cluster_nctaid`` the cluster,
    ``%nclusterid`` their quotient; each id is below its count; a CTA's ``%ctaid`` is its cluster's
    ``%clusterid`` times the cluster plus its ``%cluster_ctaid``; ``%cluster_ctarank`` is ``%cluster_ctaid``
    numbered x fastest.

    >>> consts, laws = grid_laws((8, 8, 1), (2, 1, 1)); consts["v%nclusterid.x"], len(laws)
    (4, 11)
    """
    bv = {n: z3.BitVec(n, 32) for a in _AXES for n in (f"v%ctaid.{a}", f"v%clusterid.{a}", f"v%cluster_ctaid.{a}")}
    consts = {}
    laws = []
    for i, a in enumerate(_AXES):
        g, c = grid[i], cluster[i]
        consts.update({f"v%nctaid.{a}": g, f"v%cluster_nctaid.{a}": c, f"v%nclusterid.{a}": g // c})
        laws += [z3.ULT(bv[f"v%clusterid.{a}"], g // c), z3.ULT(bv[f"v%cluster_ctaid.{a}"], c),
                 bv[f"v%ctaid.{a}"] == bv[f"v%clusterid.{a}"] * c + bv[f"v%cluster_ctaid.{a}"]]
    consts["v%cluster_nctarank"] = cluster[0] * cluster[1] * cluster[2]
    rank = z3.BitVec("v%cluster_ctarank", 32)
    laws += [rank == bv["v%cluster_ctaid.x"] + cluster[0] * (bv["v%cluster_ctaid.y"] + cluster[1] * bv["v%cluster_ctaid.z"]),
             z3.ULT(rank, consts["v%cluster_nctarank"])]
    return consts, laws


_GRID_SYMS = tuple(f"v%{r}.{a}" for r in ("ctaid", "clusterid", "cluster_ctaid", "nctaid", "nclusterid",
                                          "cluster_nctaid") for a in _AXES) + ("v%cluster_ctarank", "v%cluster_nctarank")


def _pinned(e: z3.BitVecRef, consts: dict) -> z3.BitVecRef:
    subs = [(z3.BitVec(n, 32), z3.BitVecVal(v, 32)) for n, v in consts.items() if n in symbol_names(e)]
    return z3.simplify(z3.substitute(e, *subs)) if subs else e


def _paths(e: z3.ExprRef) -> list:
    """The boolean path symbols of ``e`` (the evaluator's ``path_*``)."""
    found, seen, todo = {}, set(), [e]
    while todo:
        t = todo.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_const(t) and z3.is_bool(t) and not z3.is_true(t) and not z3.is_false(t):
            found[str(t)] = t
        todo.extend(t.children())
    return list(found.values())


def path_laws(ev: PtxValues, e: z3.ExprRef) -> list:
    """``path == p`` for each two-way path symbol of ``e`` (``path_<b0>_<b1>_0``: the value defined in block
    ``b0`` rather than ``b1``) whose blocks form an if-then: ``b0`` ends in ``@p bra L``, ``b1`` follows it
    and falls through to ``L``; the value of ``b0`` reaches ``L`` exactly when the branch is taken, i.e.
    when ``p`` holds (:meth:`PtxValues.pred`, negated as the guard says). Other path symbols stay free."""
    out = []
    for sym in _paths(e):
        b0, _u, rest = str(sym).removeprefix("path_").partition("_")
        b1, _u, j = rest.partition("_")
        if not (b0.isdigit() and b1.isdigit()) or j != "0":
            continue
        b0, b1 = int(b0), int(b1)
        _starts, block, _succ = ev._blocks()
        in0 = [k for k, b in enumerate(block) if b == b0]
        in1 = [k for k, b in enumerate(block) if b == b1]
        if b1 != b0 + 1 or not in0 or not in1:
            continue
        last = ev.code[in0[-1]]
        target = last.args[0] if last.opcode.startswith("bra") and last.args and last.pred is not None else None
        name = getattr(target, "name", None)
        if name is None or ev.labels.get(name) != [in1[-1] + 1] or ev.code[in1[-1]].opcode.startswith(("bra", "ret", "exit")):
            continue
        out.append(sym == ev.pred(last.pred))
    return out


def _grid_function(e: z3.BitVecRef) -> bool:
    names = symbol_names(e)
    return bool(names) and all(n in _GRID_SYMS or n.startswith("path") for n in names)


def coordinate_range(e: z3.BitVecRef, dim: int, grid: tuple, cluster: tuple, timeout_ms: int = 20000,
                     paths: tuple = ()) -> tuple[str, str]:
    """Whether coordinate ``e`` (a function of the CTA's place) lies in ``[0, dim)`` for every CTA of the
    launch: ``("proved", "")``, ``("counterexample", witness)`` (a CTA for which it is out of range on every
    path), or ``("unknown", why)``.

    >>> x = z3.BitVec("v%ctaid.x", 32)
    >>> coordinate_range(x * 128, 1024, (8, 1, 1), (1, 1, 1))[0], coordinate_range(x * 128, 1024, (16, 1, 1), (1, 1, 1))[0]
    ('proved', 'counterexample')
    """
    consts, laws = grid_laws(grid, cluster)
    e = _pinned(e, consts)
    laws = laws + [_pinned(p, consts) for p in paths]
    ok = z3.And(e >= 0, e < dim)
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    s.add(*laws, z3.Not(ok))
    r = solve(s)
    if r == z3.unsat:
        return "proved", ""
    if r != z3.sat:
        return "unknown", "the solver timed out"
    if len(paths) >= len(_paths(e)):            # every path symbol is its branch's condition: a real CTA
        return "counterexample", _witness(s.model(), e)
    paths = _paths(e)
    if len(paths) > 4:
        return "unknown", f"out of range for some CTA on some of its {len(paths)} paths"
    bad = z3.Solver()
    bad.set("timeout", timeout_ms)
    bad.add(*laws)
    for vals in cartesian((False, True), repeat=len(paths)):
        bad.add(z3.Not(z3.substitute(ok, *[(p, z3.BoolVal(v)) for p, v in zip(paths, vals)])))
    if solve(bad) != z3.sat:
        return "unknown", "out of range for some CTA on some path, not on every path"
    return "counterexample", _witness(bad.model(), z3.substitute(e, *[(p, z3.BoolVal(False)) for p in paths]))


def _witness(mdl: z3.ModelRef, e: z3.BitVecRef) -> str:
    """``CTA (x, y, z): coordinate v`` of a model."""
    cta = tuple(mdl.eval(z3.BitVec(f"v%ctaid.{a}", 32), model_completion=True).as_long() for a in _AXES)
    val = mdl.eval(e, model_completion=True).as_long()
    return f"CTA {cta}: coordinate {val - (1 << 32) if val >= 1 << 31 else val}"


def _grid_checks(dev: DeviceSide, func: str, mod: CuteModule, view: HostView,
                 copies: list[Instr]) -> tuple[list[Check], int]:
    """``tma-grid`` per copy (module docstring), and how many copies have no coordinate that is a function
    of the CTA's place alone."""
    la = view.launch
    cluster = la.cluster or (1, 1, 1)
    if None in la.grid or None in cluster:
        return [], 0
    out, skipped, seen = [], 0, {}
    for ins in copies:
        p = dev.matched.get(id(ins))
        m = view.map_of_arg(_partition_facts(mod, p.line)[0]) if p is not None else None
        if m is None:
            continue
        results = []
        for d, e in enumerate(dev.coords(func, ins)[:m.rank]):
            if e is None or not _grid_function(e) or m.global_dims[d] is None or view.rewritten:
                continue
            key = (e.get_id(), m.global_dims[d])              # one proof per distinct coordinate and extent
            if key not in seen:
                seen[key] = coordinate_range(e, m.global_dims[d], la.grid, cluster,
                                             paths=tuple(path_laws(dev.evaluator(func), e)))
            results.append((d, m.global_dims[d]) + seen[key])
        if not results:
            skipped += 1
            continue
        out.append(_grid_check(ins, m, la, cluster, results))
    return out, skipped


def _grid_check(ins: Instr, m: HostTmaMap, la: HostLaunch, cluster: tuple, results: list) -> Check:
    launch = f"grid {_fmt(la.grid)} in clusters of {_fmt(cluster)} (MLIR line {la.line})"
    data = {"mlir_line": m.line, "grid": list(la.grid), "cluster": list(cluster),
            "coordinates": {str(d): st for d, _dim, st, _w in results}}
    bad = [(d, dim, w) for d, dim, st, w in results if st == "counterexample"]
    if bad:
        d, dim, w = bad[0]
        return _check("cp.async.bulk.tensor", ins.line, "tma-grid", "counterexample",
                      f"the launch's {launch} overruns the tensor: for {w} along TMA dim {d}, past globalDim[{d}] = {dim} "
                      f"of the map the host encodes at MLIR line {m.line}", data)
    unk = [(d, w) for d, _dim, st, w in results if st != "proved"]
    dims = ", ".join(f"{d} (< {dim})" for d, dim, _st, _w in results)
    if unk:
        return _check("cp.async.bulk.tensor", ins.line, "tma-grid", "unknown",
                      f"coordinate {unk[0][0]} is not proved inside the tensor for every CTA of the {launch}: {unk[0][1]}",
                      data)
    return _check("cp.async.bulk.tensor", ins.line, "tma-grid", "proved",
                  f"for every CTA of the {launch}, coordinate(s) {dims} lie inside the map the host encodes at MLIR "
                  f"line {m.line} (PTX ISA special registers: each id below its count)", data)


# ---------------------------------------------------------------------------------------------- launch


def _launch_findings(view: HostView, ptx: PtxModule, func: str) -> tuple[list[str], list[str]]:
    """(broken, proved) facts of the launch against the kernel (module docstring)."""
    la, k = view.launch, view.kernel
    bad, ok = [], []
    for field, host, kern in (("gridDim", la.grid, k.grid), ("blockDim", la.block, k.block),
                              ("cluster_dim", la.cluster, k.cluster)):
        if host is None or kern is None or None in host:
            continue
        if tuple(host) != tuple(kern):
            bad.append(f"{field}: the launch passes {_fmt(host)} (MLIR line {la.line}), the kernel is compiled for "
                       f"{_fmt(kern)} (exact_{ {'gridDim': 'grid', 'blockDim': 'block', 'cluster_dim': 'cluster'}[field]}"
                       f"_dim, MLIR line {k.line})")
        else:
            ok.append(f"{field} {_fmt(host)} as the kernel's launch facts state")
    threads = ptx.threads_of(func)
    if threads is not None and None not in la.block and la.block[0] * la.block[1] * la.block[2] != threads:
        bad.append(f"blockDim: the launch passes {_fmt(la.block)}, the PTX's .reqntid is {threads} threads")
    cl = la.cluster
    if cl is not None and None not in cl:
        for i, a in enumerate(_AXES):
            g = la.grid[i]
            if g is not None and g % cl[i]:
                bad.append(f"gridDim.{a} = {g} is not a multiple of cluster_dim.{a} = {cl[i]} ({CLUSTER_GUIDE})")
    return bad, ok


def _smem_finding(need: int | None, view: HostView) -> tuple[str, str]:
    """``(status, text)`` of the dynamic shared bytes against the kernel's buffers (they end at ``need``)."""
    la = view.launch
    if la.smem_from.startswith("cute.kernel_smem_size"):
        own = la.smem_kernel
        if own == view.kernel.name:
            return "proved", (f"dynamicSmemBytes is cute.kernel_smem_size of the launched kernel (the compiler's count "
                              f"of its shared memory" + (f"; its buffers end at byte {need} as the MLIR places them"
                                                        if need is not None else "") + ")")
        return "counterexample", f"dynamicSmemBytes is the shared-memory size of @{own}, not of the launched kernel"
    if la.smem is None:
        return "unknown", f"dynamicSmemBytes is computed at run time ({la.smem_from or 'not read'})"
    if need is None:
        return "unknown", f"dynamicSmemBytes = {la.smem}; the kernel's buffers are not static in the MLIR"
    if la.smem < need:
        return "counterexample", (f"dynamicSmemBytes: the launch passes {la.smem} bytes, the kernel's buffers end at byte "
                                  f"{need} (its cute.memref.alloca ops as the MLIR places them)")
    return "proved", f"dynamicSmemBytes = {la.smem} covers the kernel's buffers (they end at byte {need})"


def _launch_check(dev: DeviceSide, view: HostView, ptx: PtxModule, func: str, line: int, skipped: int) -> Check:
    bad, ok = _launch_findings(view, ptx, func)
    st, smem = _smem_finding(dev.smem_end, view)
    if st == "counterexample":
        bad.append(smem)
    la = view.launch
    data = {"mlir_line": la.line, "grid": list(la.grid), "block": list(la.block),
            "cluster": list(la.cluster) if la.cluster else None, "dynamic_smem": la.smem, "smem_from": la.smem_from}
    head = f"the launch at MLIR line {la.line} (grid {_fmt(la.grid)}, block {_fmt(la.block)}, cluster " \
           f"{_fmt(la.cluster) if la.cluster else 'unset'})"
    if bad:
        return _check("cuda.launch_ex", line, "launch", "counterexample", f"{head}: " + "; ".join(bad), data)
    notes = ok + [smem] + ([f"{skipped} TMA copies take coordinates that are not functions of the CTA's place alone "
                             "(a tile scheduler's): not compared with the grid"] if skipped else [])
    status = "proved" if st == "proved" else "unknown"
    return _check("cuda.launch_ex", line, "launch", status, f"{head}: " + "; ".join(notes), data)


# ---------------------------------------------------------------------------------------------- premises


def _tiles(view: HostView) -> tuple[int | None, str]:
    """An upper bound on the tiles a CTA is handed (:data:`TILE_INFERENCE`), and what it rests on."""
    stores = [m for m in view.all_maps if m.kind == "store"]
    if len(stores) != 1:
        return None, f"{len(stores)} TMA store maps (the output's extent is not one map's)"
    m = stores[0]
    if view.rewritten:
        return None, "the kernel rewrites its tensor maps (tensormap.replace): the problem's shape is not the host's"
    if None in m.global_dims:
        return None, f"the output's globalDim {_fmt(m.global_dims)} is dynamic (MLIR line {m.line})"
    tiles = 1
    for dim, box in zip(m.global_dims, m.box):
        tiles *= -(-dim // box)
    grid = view.launch.grid
    ctas = grid[0] * grid[1] * grid[2] if None not in grid else 1
    per = -(-tiles // ctas)
    return per, (f"at most {per} tile(s) per CTA: {tiles} store boxes of {_fmt(m.box)} over globalDim "
                 f"{_fmt(m.global_dims)} (MLIR line {m.line}), {ctas} CTA(s)"
                 + ("" if None not in grid else " (the grid is dynamic: 1 taken)"))


def trip_premise(bits: int, step: int, per: int | None, why: str) -> tuple[str, str]:
    """(a): a loop counter stated below ``2^bits`` (start below 2^16, ``+step`` per iteration: the device
    side's counter rule) against ``per``, the most iterations the host side allows (None: unknown).

    Law: after ``n <= per`` iterations the counter is below ``2^16 + step x per``; proved when that is at
    most ``2^bits``, else the premise stays (``unknown``: the bound is an upper bound, never a refutation).

    >>> trip_premise(29, 1, 256, "")[0], trip_premise(20, 2, 2**20, "")[0]
    ('proved', 'unknown')
    """
    if per is None:
        return "unknown", f"the trip-count premise (below 2^{bits}) stays: {why}"
    top = (1 << 16) + step * per
    if top <= 1 << bits:
        return "proved", (f"the host side proves the trip-count premise: the counter stays below 2^16 + {step} x {per} "
                          f"= {top} <= 2^{bits}; {why} ({TILE_INFERENCE})")
    return "unknown", f"the trip-count premise (below 2^{bits}) stays: the host's bound {top} is past it; {why}"


def _premise_b(kinds: tuple, view: HostView, dev: DeviceSide, mod: CuteModule) -> tuple[str, str]:
    """(b): the cluster the host launches holds the CTA pair (2 CTAs along x) and each load's multicast
    group (its ``multicast_layout`` spans the cluster; the host's ``num_multicast`` is 1 or the group's size)."""
    cl = view.launch.cluster
    if cl is None or None in cl:
        return "unknown", "the cluster the host launches is not stated: the premise stays"
    n = cl[0] * cl[1] * cl[2]
    bad, ok = [], []
    if "pair" in kinds:
        (bad if cl[0] % 2 else ok).append(
            f"cluster_dim.x = {cl[0]} (MLIR line {view.launch.line}) holds no CTA pair: cta_group::2 needs 2 CTAs "
            "along x" if cl[0] % 2 else f"cluster_dim {_fmt(cl)} pairs CTAs along x (the pair's peer is in the cluster)")
    for p in dev.tplans if "multicast" in kinds else ():
        if not p.mcast or p.kind != "load":
            continue
        try:
            lay = parse_cute(p.mcast)
            size = int(product(lay.shape))
        except (LayoutError, TypeError, ValueError):
            continue
        if size != n:
            bad.append(f"cluster_dim {_fmt(cl)} has {n} CTA(s) (MLIR line {view.launch.line}); the copy's "
                       f"multicast_layout {p.mcast} (partition at MLIR line {p.line}) spans {size}")
            continue
        g = max(sum(1 for r in range(n) if int(lay(r)) == int(lay(q))) for q in range(n))
        m = view.map_of_arg(_partition_facts(mod, p.line)[0])
        if m is not None and m.num_multicast not in (1, g):
            bad.append(f"num_multicast: the host encodes {m.num_multicast} (MLIR line {m.line}), the copy's multicast "
                       f"group is {g} CTAs")
        else:
            ok.append(f"the multicast_layout {p.mcast} spans the cluster's {n} CTAs"
                      + (f" (groups of {g}; the host encodes num_multicast 1: which box slice each CTA's copy reads "
                         "is the kernel's reading, not the host's)" if g > 1 and m is not None and m.num_multicast == 1
                         else ""))
    if bad:
        return "counterexample", "; ".join(bad)
    return "proved", ("the host side proves the cluster part of the premise: " + "; ".join(dict.fromkeys(ok))
                      + "; that each CTA runs the same loads stays the premise (one kernel, its branches per rank)")


def _premise_c(dims: tuple, line: int, dev: DeviceSide, func: str, view: HostView, ptx: PtxModule) -> tuple[str, str]:
    """(c): the int32 products of a copy's coordinates ``dims``, decided where each is a function of the
    CTA's place and the grid is static: no product overflows for any CTA (proved), or one does for some
    CTA (an error, where every path symbol is bound to its branch)."""
    la = view.launch
    cluster = la.cluster or (1, 1, 1)
    if None in la.grid or None in cluster:
        return "unknown", f"the grid {_fmt(la.grid)} is dynamic (its CTAs' places are not bounded by the host): the premise stays"
    ins = next((i for i in ptx.instrs if i.line == line), None)
    coords = dev.coords(func, ins) if ins is not None else []
    for d in dims:
        e = coords[d] if d < len(coords) else None
        fits = dev.no_overflow(e) if e is not None else None
        if fits is None or not _grid_function(e):
            return "unknown", f"coordinate {d} is not a function of the CTA's place alone (a tile scheduler's): the premise stays"
        st, w = overflow_for_grid(fits[0], la.grid, cluster, tuple(path_laws(dev.evaluator(func), fits[0])))
        if st != "proved":
            return st, (f"coordinate {d}: its int32 product overflows for {w} of the launch's grid {_fmt(la.grid)}"
                        if st == "counterexample" else f"coordinate {d}: {w}; the premise stays")
    return "proved", (f"the host side proves the premise: no int32 product of coordinate(s) {list(dims)} overflows "
                      f"for any CTA of the grid {_fmt(la.grid)} in clusters of {_fmt(cluster)}")


def overflow_for_grid(fits: z3.BoolRef, grid: tuple, cluster: tuple, paths: tuple = ()) -> tuple[str, str]:
    """Whether the no-overflow law ``fits`` holds for every CTA of the launch (:func:`grid_laws`, ``paths``
    binding path symbols): ``proved``, ``counterexample`` (a CTA breaks it, every path symbol bound) or
    ``unknown``, with the CTA."""
    consts, laws = grid_laws(grid, cluster)
    laws = laws + [_pinned(p, consts) for p in paths]
    fits = _pinned(fits, consts)
    s = z3.Solver()
    s.set("timeout", 20000)
    s.add(*laws, z3.Not(fits))
    r = solve(s)
    if r == z3.unsat:
        return "proved", ""
    if r != z3.sat:
        return "unknown", "the solver timed out"
    cta = tuple(s.model().eval(z3.BitVec(f"v%ctaid.{a}", 32), model_completion=True).as_long() for a in _AXES)
    return ("counterexample" if len(paths) >= len(_paths(fits)) else "unknown"), f"CTA {cta}"


#: the device check a premise kind belongs to
_OF = {"a": "tma-smem-box", "b": "tma-box", "c": "tma-box"}


def _premise_checks(checks: list[Check], dev: DeviceSide, func: str, mod: CuteModule, view: HostView,
                    ptx: PtxModule) -> list[Check]:
    """One ``host-premise`` per premise a device check stated (module docstring)."""
    at = {(c.check, c.line): c for c in checks}
    per, why = _tiles(view)
    out = []
    for (kind, line), what in sorted(dev.premises.items()):
        c = at.get((_OF[kind], line))
        if c is None or what is None:
            continue
        if kind == "a":
            st, text = trip_premise(what[0], what[1], per, why)
        elif kind == "b":
            st, text = _premise_b(what, view, dev, mod)
        else:
            st, text = _premise_c(what, line, dev, func, view, ptx)
        out.append(_check(c.op, c.line, "host-premise", st, f"the premise of the {c.check} check at this line: {text}",
                          {"premise_kind": kind, "of_check": c.check}))
    return out


# ---------------------------------------------------------------------------------------------- driver


def host_checks(mod: CuteModule, ptx: PtxModule, dev: DeviceSide, checks: list[Check]) -> list[Check]:
    """The host-side checks of the module docstring, to follow the device side's ``checks``; none where
    the MLIR launches no kernel it defines.

    >>> dev = DeviceSide(None, None, None, None, (), {}, {})
    >>> host_checks(parse_cute_mlir('%0 = cute.static : !cute.int_tuple<"1">'), PtxModule(None, (), ()), dev, [])
    []
    """
    try:
        view = _view(mod, ptx)
    except LayoutError as e:
        return [Check("cuda.launch_ex", 1, None, "launch", "unknown", "note", f"the host side is not read: {e}",
                      {"source": "mlir host side"})]
    if view is None:
        return []
    func = next((f for f in ptx.functions if f == view.kernel.name), ptx.functions[0] if ptx.functions else "")
    instrs = [i for i in ptx.instrs if i.func == func]
    copies = [i for i in instrs if i.opcode.startswith("cp.async.bulk.tensor")]
    out = _map_checks(mod, view, list(dev.tplans), dev.matched, copies)
    grid, skipped = _grid_checks(dev, func, mod, view, copies)
    out += grid
    out.append(_launch_check(dev, view, ptx, func, instrs[0].line if instrs else 1, skipped))
    out += _premise_checks(checks, dev, func, mod, view, ptx)
    return out
