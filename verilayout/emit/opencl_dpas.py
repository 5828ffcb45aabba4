"""Emit an OpenCL C kernel that computes ``C = A * B`` with DPAS on operands fed by 2D block loads.

One work-group computes one ``M x N`` tile of C over the whole ``K`` with the sub-groups of a
``#ttig.dpas`` layout. Each sub-group loads its share of A and B with the proved block-load plans
of :mod:`verilayout.emit.opencl_block_io` (fewest loads, shuffle into the DPAS operand
registers), issues one ``intel_sub_group_*_matrix_mad_k*`` built-in
(``cl_intel_subgroup_matrix_multiply_accumulate``, :mod:`verilayout.hw.intel.subgroup_mma`) per
instruction tile of its accumulator, and stores its accumulator registers to C (row-major,
``M x N``) at the coordinates of the DPAS accumulator layout, written out as XOR-of-bases index
functions ``vl_c_row``/``vl_c_col``.

Obligations, each proved by enumeration before anything is written:

* the A and B block-load plans deliver, to every register of every lane of every sub-group, the
  element the DPAS operand layout names (:func:`verilayout.emit.opencl_block_io.build_manifest`);
* for every instruction, every component, lane and packed part of the built-in's ``a``, ``b`` and
  ``acc`` operands, and every sub-group, the register the kernel passes holds the element the
  extension says that slot holds (A and B tiles at the instruction's K step, C at its tile);
* the instructions of each sub-group cover each of its accumulator elements once per K
  element (every K step once), and the accumulator layout writes each element of C once.

>>> P = ("#ttig.dpas<{repeatCount = 8, systolicDepth = 8, executionSize = 16, opsPerChan = 2, "
...      "threadsPerWarp = 16, warpsPerCTA = [1, 1], repCluster = [1, 1]}>")
>>> from verilayout.frontends.shared_text import dpas_tile     # the door: the text is read there
>>> m = build_dpas_manifest(dpas_tile(P, m=8, n=16, k=32, dtype="f16"))
>>> len(m["instructions"]), m["mad"]["name"], [o["status"] for o in m["obligations"]]
(2, 'intel_sub_group_f16_f16_matrix_mad_k16', ['proved', 'proved', 'proved', 'proved'])
"""
from __future__ import annotations

import json

import numpy as np

from verilayout.core.linear_layout import LinearLayout
from verilayout.emit.cuda_wgmma import Emission
from verilayout.emit.opencl_block_io import build_manifest, builtin_for, operand_lines
from verilayout.errors import LayoutError
from verilayout.hw.intel.dpas import DpasTile
from verilayout.hw.intel.block_io import BlockLoad
from verilayout.hw.intel.subgroup_mma import SUB_GROUP, a_slot, b_slot, c_slot, mad_builtin

__all__ = ["FORMAT", "build_dpas_manifest", "render_dpas_opencl", "emit_dpas", "coordinate_table"]

FORMAT = "verilayout-emit-dpas/1"

#: Elements (M * N * K) one emitted work-group tile may have; the proofs enumerate them.
DPAS_MAX_VOLUME = 1 << 22


def coordinate_table(layout: LinearLayout) -> np.ndarray:
    """``T[warp, register, lane] = (dim0, dim1)`` of a 2-D distributed layout, by XOR of bases.

    Law: ``T[w, r, l]`` equals ``layout.apply({register: r, lane: l, warp: w, block: 0})``.

    >>> L = LinearLayout({"register": [[1, 0]], "lane": [[0, 1]], "warp": [], "block": []},
    ...                  ["dim0", "dim1"])
    >>> coordinate_table(L)[0].tolist()
    [[[0, 0], [0, 1]], [[1, 0], [1, 1]]]
    """
    def axis(name: str) -> np.ndarray:
        bases = layout.bases.get(name, [])
        vals = np.zeros((1, 2), dtype=np.int64)
        for b in bases:
            vals = np.concatenate([vals, vals ^ np.array(b[:2], dtype=np.int64)])
        return vals
    reg, lane, warp = axis("register"), axis("lane"), axis("warp")
    return warp[:, None, None, :] ^ reg[None, :, None, :] ^ lane[None, None, :, :]


def _find_registers(table: np.ndarray, want) -> int | None:
    """The register ``r`` with ``table[r, lane] == want(lane)`` for every lane, or None."""
    lanes = table.shape[1]
    target = np.array([want(l) for l in range(lanes)], dtype=np.int64)
    hits = np.nonzero((table == target[None, :, :]).all(axis=(1, 2)))[0]
    return int(hits[0]) if len(hits) else None


def _tiles(table: np.ndarray, th: int, tw: int) -> list[tuple[int, int]]:
    flat = table.reshape(-1, 2)
    return sorted({(int(r) // th, int(c) // tw) for r, c in flat})


def _operand_registers(tables, origin_fn, slot_fn, comps: int, parts: int, what: str, inst: int):
    """Per component and part, the register that holds the slot's element, the same in every
    sub-group; LayoutError naming the slot otherwise."""
    regs = []
    for c in range(comps):
        row = []
        for p in range(parts):
            found = None
            for w, tab in enumerate(tables):
                oy, ox = origin_fn(w)
                r = _find_registers(tab, lambda l: (oy + slot_fn(c, l, p)[0],
                                                    ox + slot_fn(c, l, p)[1]))
                if r is None:
                    raise LayoutError(
                        f"instruction {inst}: no {what} register of sub-group {w} holds, in every "
                        f"lane, the element the built-in reads in component {c}, part {p}")
                if found is not None and r != found:
                    raise LayoutError(
                        f"instruction {inst}: {what} component {c}, part {p} is register {found} "
                        f"in sub-group 0 but {r} in sub-group {w}; one kernel cannot serve both")
                found = r
            row.append(found)
        regs.append(row)
    return regs


def build_dpas_manifest(tile: DpasTile, *, transpose_b: bool = False, arch: str = "xe2") -> dict:
    """The proved plan of one DPAS GEMM tile (read at the door:
    :func:`verilayout.frontends.shared_text.dpas_tile`): both operands' block loads, the
    instructions with the registers each passes to the built-in, the accumulator layout, and the
    obligations.

    Law: every obligation of the module docstring holds (status ``proved``); otherwise
    :class:`LayoutError` names what fails.

    >>> from verilayout.frontends.shared_text import dpas_tile
    >>> P = ("#ttig.dpas<{repeatCount = 8, systolicDepth = 8, executionSize = 16, opsPerChan = 4, "
    ...      "threadsPerWarp = 16, warpsPerCTA = [2, 1], repCluster = [1, 1]}>")
    >>> man = build_dpas_manifest(dpas_tile(P, m=16, n=16, k=32, dtype="i8"))
    >>> man["mad"]["signature"], len(man["instructions"])
    ('int8 intel_sub_group_i8_i8_matrix_mad_k32(short8 a, int8 b, int8 acc)', 1)
    """
    _check_tile(tile)
    parent, (m, n, k), dtype = tile.parent, tile.mnk, tile.dtype
    opa, opb = tile.a, tile.b
    mi, ki = opa.inst_shape
    kb, ni = opb.inst_shape
    mad = mad_builtin(dtype, mi)
    if ki != mad.k or kb != mad.k or ni != SUB_GROUP:
        raise LayoutError(f"the DPAS instruction is {mi}x{ni}x{ki}; the built-in "
                          f"{mad.name} multiplies {mi}x{mad.k} by {mad.k}x{SUB_GROUP}")
    lc = tile.c
    if lc.in_dims.get("lane") != SUB_GROUP:
        raise LayoutError(f"the DPAS layout has {lc.in_dims.get('lane')} lanes; the built-ins "
                          f"run on sub-groups of {SUB_GROUP}")
    warps = lc.in_dims.get("warp", 1)
    if opa.layout.in_dims.get("warp", 1) != warps or opb.layout.in_dims.get("warp", 1) != warps:
        raise LayoutError("A, B and C have different numbers of sub-groups")
    man_a = build_manifest(opa, arch=arch)
    man_b = build_manifest(opb, transpose=transpose_b, arch=arch)
    ta, tb, tc = (coordinate_table(L) for L in (opa.layout, opb.layout, lc))
    # C: written once (no broadcast), and covering M x N
    flat = tc.reshape(-1, 2)
    if len({(int(r), int(c)) for r, c in flat}) != flat.shape[0]:
        raise LayoutError(f"the accumulator layout over {m}x{n} repeats elements (a broadcast "
                          "layout); the emitter needs each C element in one register")
    rel = _relative_sequence(ta, tb, tc, (mi, ni, ki, kb), k)
    insts = _instructions(rel, ta, tb, tc, mad, dtype, ki)
    steps = k // ki
    _check_accumulator_coverage(insts, tc.shape[1], steps)
    obligations = _dpas_obligations(man_a, man_b, len(insts), warps,
                                    (tc.shape[1], steps, flat.shape[0]))
    return {"format": FORMAT, "kind": "dpas", "parent": parent, "dtype": dtype,
            "shape": {"m": m, "n": n, "k": k}, "transpose_b": bool(transpose_b), "arch": arch,
            "sub_groups": warps,
            "mad": {"name": mad.name, "m": mad.m, "k": mad.k, "signature": mad.signature(),
                    "a_type": mad.a_type, "b_type": mad.b_type, "c_type": mad.c_type,
                    "acc_type": mad.acc_type, "elem_bits": mad.elem_bits},
            "a": man_a, "b": man_b,
            "c": {"layout": lc.to_dict(), "registers": tc.shape[1]},
            "instructions": insts, "obligations": obligations}


def _dpas_obligations(man_a: dict, man_b: dict, n_insts: int, warps: int,
                      counts: tuple) -> list[dict]:
    """Law: the four obligations of a DPAS tile, in order: A's and B's loads feed their DPAS
    registers (each operand manifest's proof), every matrix-mad slot gets its element, and every
    accumulator register meets every K step once; ``counts`` = (registers, K steps, C elements)."""
    registers, steps, elements = counts
    return [
        {**man_a["obligations"][1],
         "claim": "the A loads and shuffle feed every DPAS A register of every sub-group"},
        {**man_b["obligations"][1],
         "claim": "the B loads and shuffle feed every DPAS B register of every sub-group"},
        {"claim": f"each of the {n_insts} matrix-mad calls passes, in every slot of a, b and "
                  "acc, the register that holds the element cl_intel_subgroup_matrix_multiply_"
                  "accumulate reads there, in every sub-group",
         "status": "proved", "method": "enumeration",
         "reason": f"{warps} sub-group(s) x {n_insts} instruction(s) x 16 lanes checked "
                   "against the DPAS layouts"},
        {"claim": "every accumulator register meets every K step once, and C's layout writes "
                  "each element of C once",
         "status": "proved", "method": "enumeration",
         "reason": f"{registers} registers x {steps} K step(s); {elements} C elements "
                   "distinct"}]


def _check_tile(tile: DpasTile) -> None:
    """Law: returns only for a :class:`DpasTile` whose ``m * n * k`` is at most DPAS_MAX_VOLUME
    (the door, given ``max_volume``, refuses larger ones before reading them); else LayoutError."""
    if not isinstance(tile, DpasTile):
        raise LayoutError("the DPAS emitter takes the '#ttig.dpas<{...}>' attribute text (read at the "
                          "door: verilayout.frontends.shared_text.dpas_tile)")
    m, n, k = tile.mnk
    if m * n * k > DPAS_MAX_VOLUME:
        raise LayoutError(f"tile {m}x{n}x{k} has {m * n * k} products; the emitter proves by "
                          f"enumeration up to {DPAS_MAX_VOLUME}")


def _sub_group_plan(w: int, ta, tb, tc, inst: tuple, k: int) -> list[tuple[int, int, int]]:
    """Law: the (tm, tn, tk) tiles sub-group w multiplies, C tile by C tile, each C tile meeting
    every K step once from A and B tiles that the sub-group's registers hold; else LayoutError."""
    mi, ni, ki, kb = inst
    a_tiles = _tiles(ta[w], mi, ki)
    b_tiles = set(_tiles(tb[w], kb, ni))
    plan = []
    for tm, tn in _tiles(tc[w], mi, ni):
        ks = sorted(tk for am, tk in a_tiles if am == tm)
        if [tk for tk in range(k // ki)] != ks:
            raise LayoutError(f"sub-group {w}: A rows {tm * mi}.. hold K tiles {ks}, not "
                              f"every K step of {k}")
        for tk in ks:
            if (tk, tn) not in b_tiles:
                raise LayoutError(f"sub-group {w}: B tile (k {tk * ki}, n {tn * ni}) is not "
                                  "in the sub-group's registers")
            plan.append((tm, tn, tk))
    return plan


def _relative_sequence(ta, tb, tc, inst: tuple, k: int) -> list[tuple[int, int, int]]:
    """Law: the one instruction sequence (row and column offsets from a sub-group's C origin, K
    tile) that every sub-group's plan is, relative to its origin; else LayoutError."""
    mi, ni = inst[0], inst[1]
    rel = []
    for w in range(tc.shape[0]):
        c0 = tuple(int(v) for v in tc[w, 0, 0])
        rel.append([(tm * mi - c0[0], tn * ni - c0[1], tk)
                    for tm, tn, tk in _sub_group_plan(w, ta, tb, tc, inst, k)])
    if any(r != rel[0] for r in rel):
        raise LayoutError("the sub-groups' instruction sequences differ relative to their origins")
    return rel[0]


def _instructions(rel, ta, tb, tc, mad, dtype: str, ki: int) -> list[dict]:
    """Law: for each step of the relative sequence, the registers passed in every slot of a, b
    and acc hold, in every sub-group and lane, the element the built-in reads there."""
    mi = mad.m
    c0 = [tuple(int(v) for v in tc[w, 0, 0]) for w in range(tc.shape[0])]
    insts = []
    for i, (dm, dn, tk) in enumerate(rel):
        a_regs = _operand_registers(
            ta, lambda w: (c0[w][0] + dm, tk * ki), lambda c, l, p: a_slot(dtype, c, l, p),
            mi, mad.a_parts, "A", i)
        b_regs = _operand_registers(
            tb, lambda w: (tk * ki, c0[w][1] + dn), lambda j, l, p: b_slot(dtype, j, l, p),
            8, mad.b_parts, "B", i)
        c_regs = _operand_registers(
            tc, lambda w: (c0[w][0] + dm, c0[w][1] + dn), lambda c, l, p: c_slot(c, l),
            mi, 1, "C", i)
        insts.append({"c_tile": [dm, dn], "k": tk * ki, "a": a_regs, "b": b_regs,
                      "c": [r[0] for r in c_regs]})
    return insts


def _check_accumulator_coverage(insts: list[dict], registers: int, steps: int) -> None:
    """Law: returns only if each of the sub-group's accumulator registers is updated by exactly
    ``steps`` instructions (one per K step); else LayoutError names the first that is not."""
    count = np.zeros(registers, dtype=np.int64)
    for ins in insts:
        count[ins["c"]] += 1
    if not (count == steps).all():
        bad = int(np.nonzero(count != steps)[0][0])
        raise LayoutError(f"accumulator register {bad} is updated {int(count[bad])} times, not "
                          f"{steps} (one per K step)")


# ----- rendering --------------------------------------------------------------------------------

def _xor_function(name: str, bases: dict, dim: int) -> str:
    terms = []
    for var, key in (("r", "register"), ("lane", "lane"), ("sg", "warp")):
        for bit, b in enumerate(bases.get(key, [])):
            if b[dim]:
                terms.append(f"(((({var}) >> {bit}) & 1) * {b[dim]})")
    body = " ^ ".join(terms) if terms else "0"
    return f"int {name}(int r, int lane, int sg) {{ return {body}; }}"


def _vector(kind: str, items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"({kind}{len(items)})({', '.join(items)})"


def _packed(items: list[str], bits: int, unit: str) -> str:
    if len(items) == 1:
        return f"({unit}){items[0]}"
    return " | ".join(f"(({unit}){x} << {bits * i})" for i, x in enumerate(items))


def render_dpas_opencl(man: dict) -> str:
    """``kernel.cl`` of a DPAS manifest: ``vl_dpas_gemm(a, b, c)``, one work-group of
    ``16 x sub-groups`` work-items computing the ``M x N`` tile ``c = a * b``.

    >>> P = ("#ttig.dpas<{repeatCount = 8, systolicDepth = 8, executionSize = 16, "
    ...      "opsPerChan = 2, threadsPerWarp = 16, warpsPerCTA = [1, 1], repCluster = [1, 1]}>")
    >>> from verilayout.frontends.shared_text import dpas_tile
    >>> src = render_dpas_opencl(build_dpas_manifest(dpas_tile(P, m=8, n=16, k=16, dtype="f16")))
    >>> [line.strip()[:60] for line in src.splitlines() if "matrix_mad_k16(as" in line]
    ['float8 d = intel_sub_group_f16_f16_matrix_mad_k16(as_short8(']
    """
    # long: a kernel text template (kernel.cl, line by line as the OpenCL compiler reads it)
    if not isinstance(man, dict) or man.get("format") != FORMAT:
        raise LayoutError(f"not a DPAS emit manifest (expected format {FORMAT!r})")
    mad, shp, n_sg = man["mad"], man["shape"], man["sub_groups"]
    ma, mb = man["a"], man["b"]
    acc_t, bits = mad["acc_type"], mad["elem_bits"]
    cbases = man["c"]["layout"]["bases"]
    L = [f"// verilayout emit dpas: C ({shp['m']}x{shp['n']}, {acc_t}) = A ({shp['m']}x{shp['k']}) "
         f"x B ({shp['k']}x{shp['n']}{', stored transposed' if man['transpose_b'] else ''}), "
         f"{man['dtype']}, {len(man['instructions'])} DPAS call(s) per sub-group, {man['arch']}",
         f"//   parent: {man['parent']}",
         "// Obligations proved for this kernel:"]
    for ob in man["obligations"]:
        L.append(f"//   [{ob['status']}, {ob['method']}] {ob['claim']}: {ob['reason']}")
    L += [f"// Launch: global size = local size = 16 * {n_sg}; a, b as stored (row-major, the "
          "surfaces of the block reads); c row-major M x N.", ""]
    builtins = sorted({(builtin_for(BlockLoad.from_dict(x)).name,
                        builtin_for(BlockLoad.from_dict(x)).dest_type)
                       for x in ma["loads"] + mb["loads"]})
    L += ["#ifdef VL_DECLARE_BUILTINS   // for offline compiles without the Intel headers"]
    for name, dest in builtins:
        L.append(f"__attribute__((overloadable)) void {name}(global void* base_address, int width, "
                 f"int height, int pitch, int2 coord, private {dest}* destination);")
    L.append(f"__attribute__((overloadable)) {mad['signature']};")
    L += ["#endif", "", f"#define VL_M {shp['m']}", f"#define VL_N {shp['n']}",
          f"#define VL_C_REGISTERS {man['c']['registers']}", ""]
    for tag, m in (("A", ma), ("B", mb)):
        offs = m["warps"]["offsets"]
        L.append(f"__constant int VL_{tag}_DX[{n_sg}] = {{{', '.join(str(v[0]) for v in offs)}}};")
        L.append(f"__constant int VL_{tag}_DY[{n_sg}] = {{{', '.join(str(v[1]) for v in offs)}}};")
    L += ["", "// The accumulator layout: register r of work-item lane of sub-group sg holds C(row, col).",
          _xor_function("vl_c_row", cbases, 0), _xor_function("vl_c_col", cbases, 1), "",
          "__attribute__((intel_reqd_sub_group_size(16)))",
          f"__attribute__((reqd_work_group_size({16 * n_sg}, 1, 1)))",
          f"__kernel void vl_dpas_gemm(global void* a, global void* b, global {acc_t}* c) {{",
          "  const int sg = get_sub_group_id();",
          "  const int lane = get_sub_group_local_id();",
          "  const int adx = VL_A_DX[sg], ady = VL_A_DY[sg];",
          "  const int bdx = VL_B_DX[sg], bdy = VL_B_DY[sg];"]
    L += operand_lines(ma, base="a", ld="a_ld", op="a_op", dx="adx", dy="ady")
    L += operand_lines(mb, base="b", ld="b_ld", op="b_op", dx="bdx", dy="bdy")
    L += [f"  private {acc_t} acc[VL_C_REGISTERS];",
          "  for (int r = 0; r < VL_C_REGISTERS; ++r) acc[r] = 0;"]
    a_unit = "ushort"
    for i, ins in enumerate(man["instructions"]):
        a_items = [_packed([f"a_op[{r}]" for r in row], bits, a_unit) for row in ins["a"]]
        b_items = [_packed([f"b_op[{r}]" for r in row], bits, "uint") for row in ins["b"]]
        c_items = [f"acc[{r}]" for r in ins["c"]]
        a_arg = (f"as_{mad['a_type']}({_vector('ushort', a_items)})" if mad["m"] > 1
                 else f"as_{mad['a_type']}(({a_unit})({a_items[0]}))")
        b_arg = f"as_{mad['b_type']}({_vector('uint', b_items)})"
        c_arg = _vector(acc_t, c_items)
        L.append(f"  {{   // DPAS {i}: C rows +{ins['c_tile'][0]}, cols +{ins['c_tile'][1]}; "
                 f"K {ins['k']}..{ins['k'] + mad['k'] - 1}")
        L.append(f"    {mad['c_type']} d = {mad['name']}({a_arg}, {b_arg}, {c_arg});")
        if mad["m"] == 1:
            L.append(f"    acc[{ins['c'][0]}] = d;")
        else:
            L.append("    " + " ".join(f"acc[{r}] = d.s{j};" for j, r in enumerate(ins["c"])))
        L.append("  }")
    L += ["  for (int r = 0; r < VL_C_REGISTERS; ++r)",
          "    c[vl_c_row(r, lane, sg) * VL_N + vl_c_col(r, lane, sg)] = acc[r];", "}", ""]
    return "\n".join(L)


def emit_dpas(tile: DpasTile, *, transpose_b: bool = False, arch: str = "xe2") -> Emission:
    """The manifest and ``kernel.cl`` of one DPAS GEMM tile read at the door.

    >>> from verilayout.frontends.shared_text import dpas_tile
    >>> P = ("#ttig.dpas<{repeatCount = 8, systolicDepth = 8, executionSize = 16, "
    ...      "opsPerChan = 2, threadsPerWarp = 16, warpsPerCTA = [1, 1], repCluster = [1, 1]}>")
    >>> sorted(emit_dpas(dpas_tile(P, m=8, n=16, k=16, dtype="bf16")).files)
    ['kernel.cl', 'manifest.json']
    """
    man = build_dpas_manifest(tile, transpose_b=transpose_b, arch=arch)
    return Emission(man, {"manifest.json": json.dumps(man, indent=1, default=_json) + "\n",
                          "kernel.cl": render_dpas_opencl(man)})


def _json(v):
    if isinstance(v, np.integer):
        return int(v)
    raise TypeError(f"{type(v).__name__} is not JSON serialisable")
