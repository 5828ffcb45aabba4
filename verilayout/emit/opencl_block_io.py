"""Emit an OpenCL C kernel that feeds a DPAS operand with the proved 2D block-load plan.

The loads are the plan of :func:`verilayout.blockload.plan` (fewest loads, proved), each
issued through the ``cl_intel_subgroup_2d_block_io`` built-in of its shape
(``intel_sub_group_2d_block_read_16b_32r16x2c``, ``..._transform_16b_...`` for VNNI,
``..._transpose_32b_...``); the register shuffle copies, inside each lane, the element
the plan names into each DPAS operand register. The kernel writes every operand
register of every lane to ``out`` so that a run on Intel hardware can be compared with
the model (:func:`verilayout.simulate.replay.simulate_blockload`).

The built-ins exist only for the shapes the extension lists; a plan with another shape
is refused (it needs the SPIR-V ``OpSubgroup2DBlockLoadINTEL`` instead). The 8-bit
``16x4c`` built-ins hand each lane single bytes, which is not the 2-byte unit the block-IO
model deals 8-bit loads in, so they are refused too.

>>> A = ("tensor<256x32xf16, #ttg.dot_op<{opIdx = 0, parent = #triton_intel_gpu.dpas<{"
...      "repeatCount = 8, systolicDepth = 8, executionSize = 16, opsPerChan = 2, "
...      "threadsPerWarp = 16, warpsPerCTA = [8, 4], repCluster = [4, 2]}>, kWidth = 1}>>")
>>> from verilayout.frontends.shared_text import operand  # the door: the text is read there
>>> m = build_manifest(operand(A))                         # the A operand of intel-xpu-backend-for-triton docs/BLOCK_LOADS_LAYOUT.md
>>> [b["name"] for b in m["builtins"]], m["registers"]
(['intel_sub_group_2d_block_read_16b_32r16x2c'], 64)
>>> "intel_sub_group_2d_block_read_16b_32r16x2c(" in render_opencl(m)
True
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from verilayout.errors import LayoutError
from verilayout.emit.cuda_wgmma import Emission
from verilayout.hw.intel.dpas import Operand
from verilayout.hw.intel.block_io import BlockLoad
from verilayout.prove.coverage import Needed
from verilayout.synth.blockload import check_operand_plan, plan_operand

__all__ = ["FORMAT", "Builtin", "builtin_for", "build_manifest", "render_opencl", "operand_lines",
           "emit_blockload"]

FORMAT = "verilayout-emit-blockload/1"

_TYPES = {1: "uchar", 2: "ushort", 4: "uint", 8: "ulong"}


def _builtin_table() -> dict:
    """(mode, element bits, rows, columns, blocks) -> destination type, as the extension
    lists its read built-ins (cl_intel_subgroup_2d_block_io 1.1)."""
    t = {}
    for h in (1, 2, 4, 8, 16, 32):
        for a in (1, 2):
            t[("plain", 8, h, 32, a)] = "ushort"
            t[("plain", 16, h, 16, a)] = "ushort"
            t[("plain", 32, h, 8, a)] = "uint"
        t[("plain", 32, h, 16, 1)] = "uint"
    for a in (1, 2, 4):
        t[("vnni", 8, 32, 16, a)] = "uint"
    for h in (16, 32):
        for a in (1, 2):
            t[("vnni", 16, h, 16, a)] = "uint"
        t[("transpose", 32, h, 8, 1)] = "uint"
    return t


_BUILTINS = _builtin_table()


@dataclass(frozen=True)
class Builtin:
    """The OpenCL C built-in issuing one load: its name, the destination element type and
    how many of them each work-item receives.

    >>> from verilayout.hw.intel.block_io import Surface
    >>> builtin_for(BlockLoad(2, 16, 32, Surface(64, 32, 64), vnni=True, array_length=2))
    Builtin(name='intel_sub_group_2d_block_read_transform_16b_32r16x2c', dest_type='uint', dest_count=32)
    """

    name: str
    dest_type: str
    dest_count: int

    @property
    def dest_bytes(self) -> int:
        return {v: k for k, v in _TYPES.items()}[self.dest_type]

    def to_dict(self) -> dict:
        return {"name": self.name, "dest_type": self.dest_type, "dest_count": self.dest_count}


def builtin_for(load: BlockLoad) -> Builtin:
    """The ``intel_sub_group_2d_block_read_*`` built-in of a load's shape; a load the
    extension has no built-in for raises :class:`LayoutError`.

    >>> from verilayout.hw.intel.block_io import Surface
    >>> builtin_for(BlockLoad(2, 8, 8, Surface(64, 8, 64)))
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: load 16b 8r8x1c at (x=0, y=0): cl_intel_subgroup_2d_block_io has no built-in of this shape (use SPIR-V OpSubgroup2DBlockLoadINTEL)
    """
    key = (load.mode, 8 * load.elem_bytes, load.height, load.width, load.array_length)
    dest = _BUILTINS.get(key)
    if dest is None:
        raise LayoutError(f"load {load.describe()}: cl_intel_subgroup_2d_block_io has no "
                          "built-in of this shape (use SPIR-V OpSubgroup2DBlockLoadINTEL)")
    size = {v: k for k, v in _TYPES.items()}[dest]
    if size != load.unit_bytes:
        raise LayoutError(f"load {load.describe()}: the built-in hands out {dest}s but the "
                          f"block-IO model deals {load.unit_bytes}-byte units")
    flag = "transform_" if load.vnni else "transpose_" if load.transpose else ""
    name = (f"intel_sub_group_2d_block_read_{flag}{8 * load.elem_bytes}b_{load.height}r"
            f"{load.width}x{load.array_length}c")
    return Builtin(name, dest, load.register_bytes // 16 // size)


# ----- the manifest -----------------------------------------------------------------------------

def _warp_offsets(op, plan) -> list[list[int]]:
    """Per sub-group, ``(dx, dy)`` that moves the plan's loads (x in load elements)."""
    n = op.layout.in_dims.get("warp", 1)
    home = Needed.from_layout(op.layout, plan.warp, plan.transpose).coords[0, 0]
    t, le = plan.elem_bytes, plan.loads[0].elem_bytes
    out = []
    for w in range(n):
        dy, dx_t = (int(v) for v in Needed.from_layout(op.layout, w, plan.transpose).coords[0, 0]
                    - home)
        if (dx_t * t) % le:
            raise LayoutError(f"sub-group {w} starts {dx_t} elements right of sub-group "
                              f"{plan.warp}, not a whole number of {8 * le}-bit load elements")
        out.append([dx_t * t // le, dy])
    return out


def build_manifest(op: Operand, *, transpose: bool = False, arch: str = "xe2",
                   baseline: bool = False) -> dict:
    """The plan (proved for every sub-group), its built-ins and shuffle, as JSON-ready data, for a
    DPAS operand read from its MLIR text at the door (:func:`verilayout.frontends.shared_text.operand`;
    the manifest keeps that text for the replay to read afresh).

    >>> from verilayout.frontends.shared_text import operand
    >>> B = operand("tensor<32x256xf16, #ttg.dot_op<{opIdx = 1, parent = #ttig.dpas<{repeatCount = 8, "
    ...      "systolicDepth = 8, executionSize = 16, opsPerChan = 2, threadsPerWarp = 16, "
    ...      "warpsPerCTA = [8, 4], repCluster = [4, 2]}>, kWidth = 2}>>")
    >>> m = build_manifest(B, transpose=True)                  # its AxBT case: B transposed
    >>> len(m["loads"]), m["builtins"][0]["name"], [o["status"] for o in m["obligations"]]
    (4, 'intel_sub_group_2d_block_read_transpose_32b_32r8x1c', ['proved', 'proved'])
    """
    if not isinstance(op, Operand) or not op.text:
        raise LayoutError("the block-load emitter takes the operand as MLIR text (read at the door: "
                          "verilayout.frontends.shared_text.operand)")
    if op.layout.out_dim_names != ["dim0", "dim1"]:
        raise LayoutError(f"the block-load emitter writes a rank-2 operand's kernel; this operand has "
                          f"out dims {op.layout.out_dim_names} (a rank-3 operand's batch indices are "
                          "planned by `verilayout blockload plan`, not emitted)")
    plan = plan_operand(op, transpose=transpose, arch=arch, baseline=baseline)
    if plan.verdict is not None and plan.verdict.status == "counterexample":
        raise LayoutError(f"the plan is wrong: {plan.verdict.reason}")
    check = check_operand_plan(plan, op, warps="all")
    if not check.proved:
        raise LayoutError(f"the plan does not feed every sub-group: {check.reason}")
    builtins = [builtin_for(ld) for ld in plan.loads]
    t = plan.elem_bytes
    obligations = [
        {"claim": "the loads respect every hardware limit, deliver every element the DPAS "
                  "instructions read, the shuffle hands each register its element, and no "
                  "valid plan has fewer loads",
         **_verdict(plan.verdict)},
        {"claim": "the same loads, moved to each sub-group's origin, feed every sub-group",
         **_verdict(check)}]
    return {"format": FORMAT, "kind": "blockload",
            "operand": {"layout": op.text, "shape": list(op.shape), "dtype": op.dtype,
                        "op_idx": op.op_idx},
            "transpose": bool(transpose), "arch": arch, "algorithm": plan.algorithm,
            "elem_bytes": t, "elem_type": _TYPES[t], "registers": len(plan.shuffle),
            "loads": [ld.to_dict() for ld in plan.loads],
            "builtins": [b.to_dict() for b in builtins],
            "shuffle": _shuffle_json(plan.shuffle),
            "warps": {"count": op.layout.in_dims.get("warp", 1),
                      "offsets": _warp_offsets(op, plan)},
            "lower_bound": plan.lower_bound, "minimal": plan.minimal,
            "obligations": obligations}


def _verdict(v) -> dict:
    if v is None:
        return {"status": "unknown", "method": "", "reason": "not established"}
    return {"status": v.status, "method": v.method, "reason": v.reason}


def _shuffle_json(shuffle) -> list:
    out = []
    for row in shuffle:
        first = tuple(row[0])
        out.append(list(first) if all(tuple(x) == first for x in row)
                   else [list(x) for x in row])
    return out


# ----- rendering --------------------------------------------------------------------------------

def _extract(load_var: str, e: int, per: int, t: int, elem_t: str) -> str:
    if per == 1:
        return f"{load_var}[{e}]"
    return f"({elem_t})({load_var}[{e // per}] >> {8 * t * (e % per)})"


def render_opencl(man: dict) -> str:
    """``kernel.cl`` for a manifest: one work-group of ``16 x sub-groups`` work-items; each
    sub-group issues the plan's loads at its origin, shuffles, and writes its operand
    registers to ``out[(sub_group * REGISTERS + register) * 16 + lane]``.

    >>> from verilayout.frontends.shared_text import operand
    >>> m = build_manifest(operand("tensor<8x16xf16, #ttg.dot_op<{opIdx = 0, parent = #ttig.dpas<{"
    ...     "repeatCount = 8, systolicDepth = 8, executionSize = 16, opsPerChan = 2, "
    ...     "threadsPerWarp = 16, warpsPerCTA = [1, 1], repCluster = [1, 1]}>, kWidth = 1}>>"))
    >>> [line.strip() for line in render_opencl(m).splitlines() if "block_read" in line][-1]
    'intel_sub_group_2d_block_read_16b_8r16x1c(base, 64, 8, 64, (int2)(0 + dx, 0 + dy), ld0);'
    """
    if not isinstance(man, dict) or man.get("format") != FORMAT:
        raise LayoutError(f"not a block-load emit manifest (expected format {FORMAT!r})")
    loads = [BlockLoad.from_dict(ld) for ld in man["loads"]]
    builtins = [builtin_for(ld) for ld in loads]
    if [b.to_dict() for b in builtins] != man["builtins"]:
        raise LayoutError("manifest: 'builtins' do not match the loads' shapes")
    elem_t, regs = man["elem_type"], man["registers"]
    warps = man["warps"]
    n = warps["count"]
    o = man["operand"]
    L = [f"// verilayout emit blockload: DPAS operand {'AB'[o['op_idx']]} "
         f"{'x'.join(map(str, o['shape']))}x{o['dtype']}"
         f"{' (stored transposed)' if man['transpose'] else ''}, {len(loads)} load(s) per "
         f"sub-group, {man['arch']}",
         f"//   layout: {o['layout']}",
         "// Generated from manifest.json; `verilayout simulate DIR` checks this file against it "
         "and runs the model.",
         "// Obligations proved for this kernel:"]
    for ob in man["obligations"]:
        L.append(f"//   [{ob['status']}, {ob['method']}] {ob['claim']}: {ob['reason']}")
    L += ["// Launch: global size = local size = 16 * VL_SUBGROUPS; base = the operand as stored "
          "(row-major memory view).", ""]
    L += ["#ifdef VL_DECLARE_BUILTINS   // for offline syntax checks without the Intel headers"]
    for b in sorted({(b.name, b.dest_type) for b in builtins}):
        L.append(f"__attribute__((overloadable)) void {b[0]}(global void* base_address, int width, int height, int pitch, "
                 f"int2 coord, private {b[1]}* destination);")
    L += ["#endif", "",
          f"#define VL_SUBGROUPS {n}", f"#define VL_REGISTERS {regs}", ""]
    L.append(f"__constant int VL_WARP_DX[{n}] = {{{', '.join(str(dx) for dx, _ in warps['offsets'])}}};")
    L.append(f"__constant int VL_WARP_DY[{n}] = {{{', '.join(str(dy) for _, dy in warps['offsets'])}}};")
    L += ["", "__attribute__((intel_reqd_sub_group_size(16)))",
          f"__attribute__((reqd_work_group_size({16 * n}, 1, 1)))",
          f"__kernel void vl_blockload(global void* base, global {elem_t}* out) {{",
          "  const int sg = get_sub_group_id();",
          "  const int lane = get_sub_group_local_id();",
          "  const int dx = VL_WARP_DX[sg], dy = VL_WARP_DY[sg];"]
    L += operand_lines(man, declare_op="VL_REGISTERS")
    L += ["  for (int r = 0; r < VL_REGISTERS; ++r)",
          "    out[(sg * VL_REGISTERS + r) * 16 + lane] = op[r];", "}", ""]
    return "\n".join(L)


def operand_lines(man: dict, *, base: str = "base", ld: str = "ld", op: str = "op",
                  dx: str = "dx", dy: str = "dy", declare_op: str | None = None) -> list[str]:
    """The kernel-body lines of one operand: each load of the plan issued at ``(x + dx, y + dy)``
    into ``<ld><i>``, then the shuffle into ``<op>[register]`` (declared with ``declare_op``
    registers, default the manifest's count).

    >>> from verilayout.frontends.shared_text import operand
    >>> m = build_manifest(operand("tensor<8x16xf16, #ttg.dot_op<{opIdx = 0, parent = #ttig.dpas<{"
    ...     "repeatCount = 8, systolicDepth = 8, executionSize = 16, opsPerChan = 2, "
    ...     "threadsPerWarp = 16, warpsPerCTA = [1, 1], repCluster = [1, 1]}>, kWidth = 1}>>"))
    >>> operand_lines(m, base="a", ld="a_ld", op="a_op", dx="adx", dy="ady")[1].strip()
    'intel_sub_group_2d_block_read_16b_8r16x1c(a, 64, 8, 64, (int2)(0 + adx, 0 + ady), a_ld0);'
    """
    loads = [BlockLoad.from_dict(x) for x in man["loads"]]
    builtins = [builtin_for(x) for x in loads]
    t, elem_t = man["elem_bytes"], man["elem_type"]
    L = []
    for i, (load, b) in enumerate(zip(loads, builtins)):
        s = load.surface
        L.append(f"  private {b.dest_type} {ld}{i}[{b.dest_count}];   // {load.describe()}")
        L.append(f"  {b.name}({base}, {s.width}, {s.height}, {s.pitch}, "
                 f"(int2)({load.x} + {dx}, {load.y} + {dy}), {ld}{i});")
    L.append(f"  private {elem_t} {op}[{declare_op or man['registers']}];   // the DPAS operand "
             "registers")
    pers = [b.dest_bytes // t for b in builtins]
    for r, entry in enumerate(man["shuffle"]):
        if isinstance(entry[0], int):
            src, e = entry
            L.append(f"  {op}[{r}] = {_extract(f'{ld}{src}', e, pers[src], t, elem_t)};")
        else:
            L += _lane_shuffle(r, entry, pers, t, elem_t, ld, op)
    return L


def _lane_shuffle(r: int, entry, pers, t: int, elem_t: str, ld: str = "ld",
                  op: str = "op") -> list[str]:
    L = [f"  switch (lane) {{   // register {r}: the source differs between lanes"]
    for lane, (src, e) in enumerate(entry):
        L.append(f"    case {lane}: {op}[{r}] = {_extract(f'{ld}{src}', e, pers[src], t, elem_t)}; "
                 "break;")
    L.append("  }")
    return L


def emit_blockload(op: Operand, *, transpose: bool = False, arch: str = "xe2", baseline: bool = False):
    """The manifest and ``kernel.cl`` of one operand read at the door (an
    :class:`~verilayout.emit.cuda_wgmma.Emission`; see :func:`build_manifest`).

    >>> from verilayout.frontends.shared_text import operand
    >>> A = operand("tensor<8x16xf16, #ttg.dot_op<{opIdx = 0, parent = #ttig.dpas<{repeatCount = 8, "
    ...      "systolicDepth = 8, executionSize = 16, opsPerChan = 2, threadsPerWarp = 16, "
    ...      "warpsPerCTA = [1, 1], repCluster = [1, 1]}>, kWidth = 1}>>")
    >>> sorted(emit_blockload(A).files)
    ['kernel.cl', 'manifest.json']
    """
    man = build_manifest(op, transpose=transpose, arch=arch, baseline=baseline)
    return Emission(man, {"manifest.json": json.dumps(man, indent=1, default=_json) + "\n",
                          "kernel.cl": render_opencl(man)})


def _json(v):
    if isinstance(v, np.integer):
        return int(v)
    raise TypeError(f"{type(v).__name__} is not JSON serialisable")
