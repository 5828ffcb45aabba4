"""Emit a CUDA C++ wgmma kernel (and its host harness) whose every index comes from a
proved object.

:func:`build_manifest` chooses nothing by hand: the shared-memory layout of each
operand is CuTe's ``tile_to_shape`` of the requested swizzle atom (PTX ISA 9.7.15.5.1.2, "Shared
Memory Matrix Layout", the swizzle-atom table; CuTe ``cute/atom/mma_traits_sm90_gmma.hpp``), each K-block's descriptor is derived from that layout
and proved to read the bytes it wrote (:func:`verilayout.synth.descriptor.derive_descriptor`),
and the register fragments of A and D are the PTX tables (PTX ISA 9.7.15.5.1.1, "Register Fragments").
The manifest is plain JSON; :func:`render_cuda` turns a manifest, and nothing else,
into ``kernel.cu``, so the kernel and the executable model
(:mod:`verilayout.simulate.replay`) read the same numbers.

>>> m = build_manifest((64, 32, 16), "f16", acc="f32")
>>> m["a"]["descriptors"], m["b"]["descriptors"]        # A and B K-major, no swizzle (PTX ISA 9.7.15.5.1.2.1.3)
(['0x0000000800400000'], ['0x0000000800200080'])
>>> [o["status"] for o in m["obligations"]]
['proved', 'proved']
>>> "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16" in render_cuda(m)
True
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

from verilayout.core.cute import dynamic, tile_to_shape
from verilayout.dtypes import require_major, require_swizzle
from verilayout.errors import LayoutError
from verilayout.hw.nvidia.descriptor import contract_findings, decode
from verilayout.prove.wgmma import INFERRED_RULES, intended_tile
from verilayout.synth.descriptor import derive_descriptor
from verilayout.hw.nvidia.wgmma import ACCUMULATORS, OperandSpec, dtype_bits, fragment, k_of_dtype, swizzle_atom

__all__ = ["FORMAT", "SUPPORTED_DTYPES", "MAX_SMEM_BYTES", "OperandSpec", "K_NONE",
           "build_manifest", "render_cuda", "render_run_script", "Emission", "emit_wgmma",
           "write_emission", "config_tag", "value_range"]

FORMAT = "verilayout-emit-wgmma/1"
#: Multiplicand types the emitter writes kernels for (fp8 and b1 are not emitted yet).
SUPPORTED_DTYPES = ("f16", "bf16", "tf32", "s8", "u8")
#: Dynamic shared memory one sm_90 CTA may use (227 KiB).
MAX_SMEM_BYTES = 232448
#: The swizzle pattern repeats after at most 1024 bytes; the kernel aligns its buffer so.
SMEM_ALIGN = 1024
CTA_THREADS = 128

_BITS_T = {8: "uint8_t", 16: "uint16_t", 32: "uint32_t"}


# ----- operands --------------------------------------------------------------------------------

def _spec(spec: OperandSpec, operand: str) -> OperandSpec:
    """``spec`` checked: ``reg`` for A only, else a K/MN major and a wgmma swizzle mode."""
    if not isinstance(spec, OperandSpec):
        raise LayoutError(f"--{operand.lower()} {spec!r}: expected an OperandSpec (text is read by "
                          "verilayout.frontends.names.parse_operand)")
    if spec.source == "reg" and operand == "A":
        return spec
    if spec.source != "smem":
        raise LayoutError(f"--{operand.lower()} {spec.text!r}: B is always read from shared memory")
    require_major(spec.major)
    require_swizzle(spec.swizzle)
    return spec


def value_range(dtype: str, acc: str, k: int) -> tuple[int, int]:
    """Integer input range whose every product sum is exact in the accumulator (and every
    input exact in ``dtype``).

    >>> value_range("f16", "f16", 64), value_range("s8", "s32", 64), value_range("u8", "s32", 64)
    ((-4, 4), (-8, 7), (0, 15))
    """
    if dtype == "s8":
        return (-8, 7)
    if dtype == "u8":
        return (0, 15)
    limit = 2048 if acc == "f16" else 1 << 24       # integers exact in the accumulator
    r = 4
    while r > 1 and k * r * r > limit:
        r -= 1
    return (-r, r)


# ----- the manifest ------------------------------------------------------------------------------

def _copy_spec(tile, offset: int, bits: int) -> dict:
    """The byte address of element ``(mn, k)`` as the proved layout says (bits -> bytes)."""
    fn = tile.fn
    if fn.xor_cols or fn.xor_const or any(o for _, o in fn.offsets):
        raise LayoutError("the operand layout is not a strided CuTe layout; the emitter writes "
                          "copies for strided (optionally swizzled) layouts only")
    terms = []
    for t in fn.terms:
        if t.stride % 8:
            raise LayoutError(f"layout stride {t.stride} bits is not a whole number of bytes")
        terms.append({"coord": t.coord, "div": t.div, "mod": t.mod, "stride_bytes": t.stride // 8})
    if fn.const % 8 or fn.post % 8:
        raise LayoutError("the layout's offset is not a whole number of bytes")
    sw = {"bits": 0, "base": 4, "shift": 3}
    if fn.swizzle is not None:
        if fn.swizzle.phase or fn.swizzle.base < 3:
            raise LayoutError("the layout's swizzle does not act on whole bytes from address 0")
        sw = {"bits": fn.swizzle.bits, "base": fn.swizzle.base - 3, "shift": fn.swizzle.shift}
    const, post = fn.const // 8, fn.post // 8
    if fn.swizzle is None:
        const, post = const + post, 0
    return {"terms": terms, "const_bytes": const, "swizzle": sw, "post_bytes": post,
            "elem_bytes": bits // 8}


def _operand_bytes(copy: dict, mn: int, k: int) -> int:
    """One past the highest byte the copy writes, relative to the operand's own start."""
    top = copy["const_bytes"]
    for t in copy["terms"]:
        ext = mn if t["coord"] == "mn" else k
        hi = (ext - 1) // t["div"]
        if t["mod"]:
            hi = min(hi, t["mod"] - 1)
        top += t["stride_bytes"] * hi
    sw = copy["swizzle"]
    top |= ((1 << sw["bits"]) - 1) << sw["base"]
    return top + copy["post_bytes"] + copy["elem_bytes"]


def _smem_operand(name: str, spec: OperandSpec, dtype: str, mn: int, k: int,
                  offset: int) -> dict:
    bits = dtype_bits(dtype)
    if spec.major == "MN" and bits != 16:
        raise LayoutError(f"--{name.lower()} {spec.text}: wgmma reads MN-major (transposed) "
                          f"operands only for f16/bf16; make the {dtype} operand K-major")
    atom = swizzle_atom(spec.swizzle, spec.major, dtype)
    try:
        tiled = tile_to_shape(atom.cute_layout(), dynamic((mn, k)))     # make_shape(mn, k): run-time ints
    except LayoutError as e:
        raise LayoutError(f"--{name.lower()} {spec.text}: the {atom.shape[0]}x{atom.shape[1]} "
                          f"swizzle atom does not tile the {mn}x{k} {name} operand ({e})") from None
    text = str(tiled)
    tile = intended_tile(tiled, dtype=dtype, base_address=offset)
    copy = _copy_spec(tile, offset, bits)
    size = _operand_bytes(copy, mn, k) - offset
    _check_smem(offset + size)
    descs, verdicts = [], []
    for kb in range(k // k_of_dtype(dtype)):
        plan = derive_descriptor(tiled, dtype=dtype, major=spec.major, k_block=kb,
                                 base_address=offset)
        d = plan.descriptor
        if d.swizzle != spec.swizzle:
            raise LayoutError(f"{name} K-block {kb}: the proved descriptor uses the {d.swizzle} "
                              f"mode, not the requested {spec.swizzle}")
        descs.append(d)
        verdicts.append(plan.verdict)
    return {"source": "smem", "major": spec.major, "swizzle": spec.swizzle, "layout": text,
            "offset_bytes": offset, "bytes": size, "trans": int(spec.major == "MN"),
            "copy": copy, "descriptors": [f"{d.value:#018x}" for d in descs],
            "verdicts": [v.to_dict() for v in verdicts]}


def _check_smem(total: int) -> None:
    if total + SMEM_ALIGN > MAX_SMEM_BYTES:
        raise LayoutError(f"A and B need {total} bytes of shared memory (+{SMEM_ALIGN} for "
                          f"alignment), more than the {MAX_SMEM_BYTES} one CTA may use; "
                          "lower --k or N")


def _fragment_dict(f) -> dict:
    return {"bases": {d: [list(b) for b in v] for d, v in f.layout.bases.items()},
            "registers": f.registers, "elements_per_register": f.elems_per_reg,
            "rows": f.rows, "cols": f.cols}


def _instruction(shape: str, dtype: str, acc: str) -> str:
    return f"wgmma.mma_async.sync.aligned.{shape}.{acc}.{dtype}.{dtype}"


def config_tag(shape: str, dtype: str, acc: str, a: OperandSpec, b: OperandSpec, k: int) -> str:
    """A C identifier naming one configuration.

    >>> config_tag("m64n32k16", "f16", "f32", OperandSpec("reg"), OperandSpec("smem", "MN", "64B"), 16)
    'm64n32k16_f16_f32_areg_bMN64B_k16'
    """
    op = lambda s: "reg" if s.source == "reg" else f"{s.major}{s.swizzle}"
    return f"{shape}_{dtype}_{acc}_a{op(a)}_b{op(b)}_k{k}"


#: The default operand: K-major in shared memory, no swizzle (``K:none``).
K_NONE = OperandSpec("smem", "K", "none")


def build_manifest(shape: tuple[int, int, int], dtype: str, acc: str | None = None, a: OperandSpec = K_NONE,
                   b: OperandSpec = K_NONE, k: int | None = None) -> dict:
    """Everything the kernel needs, as JSON-ready data, with the proof of every descriptor.

    ``shape`` is one instruction ``(m, n, k)``; ``k`` the K of the whole tile (a multiple of
    the instruction's K; default one instruction). ``a``/``b``: where each operand lives (text
    such as ``MN:64B`` or ``reg`` is read at the door: :func:`verilayout.frontends.names.parse_operand`).

    >>> m = build_manifest((64, 32, 16), "f16", a=OperandSpec("smem", "MN", "64B"),
    ...                    b=OperandSpec("smem", "MN", "none"))   # A M-major 64B, B N-major no swizzle
    >>> m["a"]["descriptors"][0], m["a"]["trans"], m["b"]["trans"]
    ('0x8000004000200000', 1, 1)
    """
    if not (isinstance(shape, tuple) and len(shape) == 3 and all(type(v) is int for v in shape)):
        raise LayoutError(f"shape {shape!r}: expected (m, n, k) (text is read by "
                          "verilayout.frontends.names.parse_shape)")
    m_, n, kx = shape
    shape_text = f"m{m_}n{n}k{kx}"
    if dtype not in SUPPORTED_DTYPES:
        raise LayoutError(f"--dtype {dtype!r}: the emitter writes kernels for "
                          f"{', '.join(SUPPORTED_DTYPES)}")
    acc = acc or ACCUMULATORS[dtype][-1]
    fragment((m_, n, kx), "D", dtype, acc=acc)       # validates M, K, N and the accumulator
    k = kx if k is None else k
    if not isinstance(k, int) or isinstance(k, bool) or k <= 0 or k % kx:
        raise LayoutError(f"--k {k!r}: expected a positive multiple of the instruction's K ({kx})")
    sa, sb = _spec(a, "A"), _spec(b, "B")
    bits = dtype_bits(dtype)
    man: dict = {"format": FORMAT, "kind": "wgmma", "tag": config_tag(shape_text, dtype, acc, sa, sb, k),
                 "shape": shape_text, "m": m_, "n": n, "k_inst": kx, "k": k, "k_blocks": k // kx,
                 "dtype": dtype, "acc": acc, "elem_bits": bits,
                 "instruction": _instruction(shape_text, dtype, acc)}
    offset = 0
    if sa.source == "reg":
        man["a"] = {"source": "reg", "fragment": _fragment_dict(fragment((m_, n, kx), "A", dtype))}
    else:
        man["a"] = _smem_operand("A", sa, dtype, m_, k, 0)
        offset = -(-man["a"]["bytes"] // SMEM_ALIGN) * SMEM_ALIGN
    man["b"] = _smem_operand("B", sb, dtype, n, k, offset)
    total = offset + man["b"]["bytes"]
    man["smem"] = {"bytes": total, "alignment": SMEM_ALIGN}
    man["d"] = {"fragment": _fragment_dict(fragment((m_, n, kx), "D", dtype, acc=acc))}
    man["global"] = {"a": "row-major M x K", "b": "row-major K x N", "d": "row-major M x N"}
    man["inputs"] = {"range": list(value_range(dtype, acc, k)), "seed": 1234}
    man["obligations"] = _obligations(man)
    return man


def _obligations(man: dict) -> list[dict]:
    out = []
    for name in ("a", "b"):
        op = man[name]
        if op["source"] != "smem":
            continue
        for kb, (dv, v) in enumerate(zip(op["descriptors"], op["verdicts"])):
            d = decode(dv)
            extent = man["m"] if name == "a" else man["n"]
            findings = contract_findings(d, major=op["major"], dtype=man["dtype"],
                                         mn_extent=extent)
            facts = [f for f in findings if f.rule not in INFERRED_RULES]
            status = v["status"] if not facts else "counterexample"
            out.append({"claim": f"descriptor {name.upper()}[{kb}] = {dv} reads, for every "
                                 f"(mn, k) of K-block {kb}, the byte the copy wrote",
                        "status": status, "method": v.get("method", ""),
                        "reason": v.get("reason", ""),
                        "findings": [f.message if f.rule not in INFERRED_RULES else
                                     f"inferred rule {f.rule} (an inference, not a cited hardware "
                                     f"fact): {f.message}" for f in findings]})
    return out


# ----- rendering -------------------------------------------------------------------------------

def _u(v: int) -> str:
    return f"{int(v)}u"


def _offset_function(name: str, copy: dict) -> list[str]:
    lines = [f"// byte offset of {name}(mn, k) in shared memory: the proved layout "
             f"(terms and swizzle from manifest.json)",
             f"__host__ __device__ __forceinline__ uint32_t {name.lower()}_smem_offset(uint32_t mn, "
             f"uint32_t k) {{",
             f"  uint32_t x = {_u(copy['const_bytes'])};"]
    for t in copy["terms"]:
        v = t["coord"] if t["div"] == 1 else f"({t['coord']} / {_u(t['div'])})"
        if t["mod"]:
            v = f"({v} % {_u(t['mod'])})"
        lines.append(f"  x += {v} * {_u(t['stride_bytes'])};")
    sw = copy["swizzle"]
    if sw["bits"]:
        lines.append(f"  x ^= ((x >> {sw['base'] + sw['shift']}u) & {_u((1 << sw['bits']) - 1)})"
                     f" << {sw['base']}u;   // Swizzle<{sw['bits']},{sw['base']},{sw['shift']}> "
                     "on byte addresses")
    if copy["post_bytes"]:
        lines.append(f"  x += {_u(copy['post_bytes'])};")
    lines += ["  return x;", "}"]
    return lines


def _fragment_function(name: str, what: str, f: dict, index: str, extra: str = "") -> list[str]:
    """``name(tid, e)``: the global index of element ``e`` of thread ``tid`` of a PTX
    fragment, the XOR of the bases its register, lane and warp bits select."""
    args = "uint32_t tid, uint32_t e" + (f", {extra}" if extra else "")
    L = [f"// {what}: element e of thread tid is (row, col) of the PTX fragment (bases from "
         "manifest.json)",
         f"__host__ __device__ __forceinline__ uint32_t {name}({args}) {{",
         "  const uint32_t lane = tid % 32u, warp = tid / 32u;",
         "  uint32_t r = 0u, c = 0u;"]
    for dim, src in (("register", "e"), ("lane", "lane"), ("warp", "warp")):
        for bit, (br, bc) in enumerate(f["bases"].get(dim, [])):
            parts = ([f"r ^= {_u(br)};"] if br else []) + ([f"c ^= {_u(bc)};"] if bc else [])
            if parts:
                L.append(f"  if ({src} & {_u(1 << bit)}) {{ {' '.join(parts)} }}")
    L += [f"  return {index};", "}", ""]
    return L


def _acc_info(acc: str) -> tuple[str, str, str]:
    """(register C type, asm constraint, stored element C type)."""
    return {"f32": ("float", "+f", "float"), "s32": ("int32_t", "+r", "int32_t"),
            "f16": ("uint32_t", "+r", "uint16_t")}[acc]


def _header(man: dict) -> list[str]:
    a, b = man["a"], man["b"]
    desc = lambda op: "registers" if op["source"] == "reg" else \
        f"smem {op['major']}-major {op['swizzle']} {op['layout']}"
    lines = [f"// verilayout emit wgmma: {man['shape']} {man['dtype']} x {man['dtype']} -> "
             f"{man['acc']}, K = {man['k']} ({man['k_blocks']} K-block(s))",
             f"//   A: {desc(a)}", f"//   B: {desc(b)}",
             "// Generated from manifest.json; `verilayout simulate DIR` checks this file against "
             "it and runs the executable model.",
             "// Obligations proved for this kernel:"]
    for o in man["obligations"]:
        lines.append(f"//   [{o['status']}, {o['method']}] {o['claim']}: {o['reason']}")
        for f in o.get("findings", []):
            lines.append(f"//     contract finding: {f}")
    lines += ["// By construction (facts of PTX ISA 9.7.15: 9.7.15.5.1.1 fragments, 9.7.15.5.1.2 layouts):",
              "//   * the copy writes element (mn, k) at the byte the proved layout names;",
              "//   * A/D registers follow the PTX fragment tables (register counts from the "
              "fragment layouts);",
              "//   * smem writes -> fence.proxy.async.shared::cta -> __syncthreads -> "
              "wgmma.fence -> wgmma x K-blocks -> commit_group -> wait_group 0."]
    return lines


def _wgmma_call(man: dict, kb: int, d_regs: int, aconstr: str) -> list[str]:
    a_reg = man["a"]["source"] == "reg"
    dtype = man["dtype"]
    ops = [f"%{i}" for i in range(d_regs)]
    rows = [", ".join(ops[i:i + 8]) for i in range(0, d_regs, 8)]
    nxt = d_regs
    if a_reg:
        a_txt = "{" + ", ".join(f"%{nxt + i}" for i in range(4)) + "}"
        nxt += 4
    else:
        a_txt = f"%{nxt}"
        nxt += 1
    b_txt = f"%{nxt}"
    nxt += 1
    p_idx = nxt
    imm = []
    if dtype in ("f16", "bf16", "tf32"):
        imm = ["1", "1"]                               # imm-scale-a, imm-scale-b
        if dtype != "tf32":
            if not a_reg:
                imm.append(str(man["a"]["trans"]))       # imm-trans-a
            imm.append(str(man["b"]["trans"]))           # imm-trans-b
    tail = ", ".join(["p"] + imm)
    lines = ["  asm volatile(", '      "{\\n"', '      ".reg .pred p;\\n"',
             f'      "setp.ne.b32 p, %{p_idx}, 0;\\n"',
             f'      "{man["instruction"]} "', '      "{"']
    for i, r in enumerate(rows):
        lines.append(f'      "{r}{"," if i < len(rows) - 1 else ""}"')
    lines.append(f'      "}}, {a_txt}, {b_txt}, {tail};\\n"')
    lines.append('      "}\\n"')
    outs = [f'"{aconstr}"(d[{i}])' for i in range(d_regs)]
    lines.append("      : " + ",\n        ".join(", ".join(outs[i:i + 4])
                                                  for i in range(0, d_regs, 4)))
    if a_reg:
        ins = [f'"r"(a_reg[{kb}][{i}])' for i in range(4)]
    else:
        ins = [f'"l"(DESC_A_{kb} + base_field)']
    ins += [f'"l"(DESC_B_{kb} + base_field)', f'"r"(scale_d_{kb})']
    lines.append("      : " + ", ".join(ins) + ");")
    return lines


def render_cuda(man: dict) -> str:
    """``kernel.cu`` for a manifest: the kernel, the host harness (``main`` unless
    ``VL_NO_MAIN`` is defined), everything in namespace ``vl_<tag>``.

    >>> src = render_cuda(build_manifest((64, 8, 8), "tf32", b=OperandSpec("smem", "K", "32B")))
    >>> src.count("wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32"), "imm" in src
    (1, False)
    """
    _check_manifest_shape(man)
    bits = man["elem_bits"]
    bits_t = _BITS_T[bits]
    a, b, d = man["a"], man["b"], man["d"]["fragment"]
    reg_t, aconstr, store_t = _acc_info(man["acc"])
    d_regs = d["registers"] // d["elements_per_register"]
    nkb = man["k_blocks"]
    tag = man["tag"]
    L = _header(man)
    L += ["", "#include <cstdint>", "#include <cstdio>", "#include <cstdlib>", "#include <cstring>",
          "#include <cmath>", "#include <vector>", "#include <cuda_runtime.h>", "",
          f"namespace vl_{tag} {{", "",
          f"constexpr int M = {man['m']}, N = {man['n']}, K = {man['k']}, "
          f"K_INST = {man['k_inst']}, K_BLOCKS = {nkb};",
          "static_assert(K == K_INST * K_BLOCKS, \"K is a whole number of wgmma K-blocks\");",
          f"constexpr uint32_t SMEM_BYTES = {_u(man['smem']['bytes'])};   // A and B",
          f"constexpr uint32_t SMEM_ALIGN = {_u(man['smem']['alignment'])};",
          f"constexpr int INPUT_LO = {man['inputs']['range'][0]}, INPUT_HI = "
          f"{man['inputs']['range'][1]};",
          f"typedef {bits_t} elem_bits_t;   // one {man['dtype']} element, as raw bits",
          f"typedef {store_t} out_t;        // one {man['acc']} result"]
    for name, op in (("A", a), ("B", b)):
        if op["source"] == "smem":
            for kb, dv in enumerate(op["descriptors"]):
                L.append(f"constexpr uint64_t DESC_{name}_{kb} = {dv}ull;   "
                         f"// {op['verdicts'][kb]['status']}")
    L.append("")
    for name, op in (("A", a), ("B", b)):
        if op["source"] == "smem":
            L += _offset_function(name, op["copy"]) + [""]
    if a["source"] == "reg":
        L += _fragment_function("a_index", "index into global A (row-major M x K) of A register "
                                "element e in K-block kb", a["fragment"],
                                "r * uint32_t(K) + kb * uint32_t(K_INST) + c", "uint32_t kb")
    L += _fragment_function("d_index", "index into global D (row-major M x N) of accumulator "
                            "element e", d, "r * uint32_t(N) + c")
    L += _kernel(man, reg_t, aconstr, store_t, d_regs)
    L += _harness(man)
    L += [f"}}  // namespace vl_{tag}", "", "#ifndef VL_NO_MAIN",
          f"int main(int argc, char** argv) {{ return vl_{tag}::run(argc, argv); }}",
          "#endif", ""]
    return "\n".join(L)


def _kernel(man, reg_t, aconstr, store_t, d_regs) -> list[str]:
    a = man["a"]
    nkb = man["k_blocks"]
    L = ["__global__ void __launch_bounds__(128, 1)",
         "vl_wgmma_kernel(const elem_bits_t* __restrict__ A, const elem_bits_t* __restrict__ B, "
         "out_t* __restrict__ D) {",
         "  extern __shared__ __align__(1024) uint8_t smem_raw[];",
         "  const uint32_t tid = threadIdx.x;",
         "  const uint32_t raw = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));",
         "  const uint32_t base = (raw + SMEM_ALIGN - 1u) & ~(SMEM_ALIGN - 1u);   "
         "// swizzle patterns start on 1024-byte rows",
         "  uint8_t* smem = smem_raw + (base - raw);",
         "  // descriptors hold (address & 0x3FFFF) >> 4 in a 14-bit field: under a cluster launch",
         "  // the CTA rank sits above bit 18 of the shared address and must not reach LBO",
         "  const uint64_t base_field = static_cast<uint64_t>((base & 0x3FFFFu) >> 4);",
         "  const elem_bits_t* At = A + static_cast<size_t>(blockIdx.x) * M * K;",
         "  out_t* Dt = D + static_cast<size_t>(blockIdx.x) * M * N;", ""]
    if a["source"] == "smem":
        L += ["  // global A (row-major M x K) -> shared memory, element (m, k) at a_smem_offset(m, k)",
              "  for (uint32_t i = tid; i < uint32_t(M * K); i += 128u) {",
              "    *reinterpret_cast<elem_bits_t*>(smem + a_smem_offset(i / K, i % K)) = At[i];",
              "  }"]
    L += ["  // global B (row-major K x N) -> shared memory, element (n, k) at b_smem_offset(n, k)",
          "  for (uint32_t i = tid; i < uint32_t(K * N); i += 128u) {",
          "    *reinterpret_cast<elem_bits_t*>(smem + b_smem_offset(i % N, i / N)) = B[i];",
          "  }",
          "  // make the generic-proxy writes visible to the async proxy wgmma reads through",
          '  asm volatile("fence.proxy.async.shared::cta;\\n" ::: "memory");',
          "  __syncthreads();", ""]
    if a["source"] == "reg":
        L += _a_register_loads(man)
    L += [f"  {reg_t} d[{d_regs}];",
          f"  for (int i = 0; i < {d_regs}; ++i) d[i] = 0;"]
    for kb in range(nkb):
        L.append(f"  const int scale_d_{kb} = {0 if kb == 0 else 1};   "
                 f"// {'D = A*B' if kb == 0 else 'D += A*B'}")
    L += _operand_fence(d_regs, aconstr)
    L += ['  asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");']
    for kb in range(nkb):
        L.append(f"  // K-block {kb}")
        L += _wgmma_call(man, kb, d_regs, aconstr)
    L += ['  asm volatile("wgmma.commit_group.sync.aligned;\\n" ::: "memory");',
          '  asm volatile("wgmma.wait_group.sync.aligned %0;\\n" :: "n"(0) : "memory");']
    L += _operand_fence(d_regs, aconstr)
    L += _d_store(man, reg_t, store_t)
    L += ["}", ""]
    return L


def _operand_fence(d_regs: int, constr: str) -> list[str]:
    return [f"  for (int i = 0; i < {d_regs}; ++i) asm volatile(\"\" : \"{constr}\"(d[i]) :: "
            "\"memory\");"]


def _a_register_loads(man) -> list[str]:
    f = man["a"]["fragment"]
    per, bits = f["elements_per_register"], man["elem_bits"]
    nkb, regs = man["k_blocks"], f["registers"] // f["elements_per_register"]
    return ["  // A from registers: a_reg[kb][j] packs elements j*PER .. j*PER+PER-1, low first",
            f"  uint32_t a_reg[{nkb}][{regs}];",
            "#pragma unroll",
            f"  for (uint32_t kb = 0; kb < {_u(nkb)}; ++kb) {{",
            "#pragma unroll",
            f"    for (uint32_t j = 0; j < {_u(regs)}; ++j) {{",
            "      uint32_t w = 0u;",
            "#pragma unroll",
            f"      for (uint32_t s = 0; s < {_u(per)}; ++s)",
            f"        w |= uint32_t(At[a_index(tid, j * {_u(per)} + s, kb)]) << ({bits}u * s);",
            "      a_reg[kb][j] = w;",
            "    }",
            "  }"]


def _d_store(man, reg_t, store_t) -> list[str]:
    f = man["d"]["fragment"]
    per = f["elements_per_register"]
    value = "d[e]" if per == 1 else f"static_cast<uint16_t>(d[e / {_u(per)}] >> (16u * (e % {_u(per)})))"
    return ["  // store D: element e of this thread goes to D(row, col) of the PTX D fragment",
            "#pragma unroll",
            f"  for (uint32_t e = 0; e < {_u(f['registers'])}; ++e) Dt[d_index(tid, e)] = {value};"]


def _harness(man) -> list[str]:
    # long: a kernel text template (the host harness, line by line as nvcc reads it)
    dtype, acc = man["dtype"], man["acc"]
    enc = {"f16": "f32_to_f16_bits(static_cast<float>(v))",
           "bf16": "static_cast<uint16_t>(f32_bits(static_cast<float>(v)) >> 16)",
           "tf32": "f32_bits(static_cast<float>(v))",
           "s8": "static_cast<uint8_t>(static_cast<int8_t>(v))",
           "u8": "static_cast<uint8_t>(v)"}[dtype]
    dec = {"f32": "static_cast<double>(x)", "s32": "static_cast<double>(x)",
           "f16": "static_cast<double>(f16_bits_to_f32(x))"}[acc]
    ops = "OP" if dtype in ("s8", "u8") else "FLOP"
    return [
        "// ----- host harness: integer-valued inputs, CPU reference, timing -----",
        "static uint32_t f32_bits(float f) { uint32_t x; std::memcpy(&x, &f, 4); return x; }",
        "[[maybe_unused]] static uint16_t f32_to_f16_bits(float f) {   // exact for the integers used",
        "  uint32_t x = f32_bits(f), sign = (x >> 16) & 0x8000u;",
        "  if ((x & 0x7fffffffu) == 0u) return static_cast<uint16_t>(sign);",
        "  uint32_t e = ((x >> 23) & 0xffu) - 127u + 15u, m = (x >> 13) & 0x3ffu;",
        "  return static_cast<uint16_t>(sign | (e << 10) | m);",
        "}",
        *_f16_decoder(acc),
        "static uint32_t lcg(uint64_t& s) { s = s * 6364136223846793005ull + "
        "1442695040888963407ull; return static_cast<uint32_t>(s >> 33); }",
        "#define VL_CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { "
        "std::fprintf(stderr, \"%s: %s\\n\", #x, cudaGetErrorString(e_)); return 3; } } while (0)",
        "",
        "int run(int argc, char** argv) {",
        "  const int tiles = argc > 1 ? std::atoi(argv[1]) : 1056;   // CTAs: 64-row slabs of A and D",
        "  const int iters = argc > 2 ? std::atoi(argv[2]) : 50;",
        "  const size_t mt = static_cast<size_t>(tiles) * M;",
        "  std::vector<int> a_val(mt * K), b_val(static_cast<size_t>(K) * N);",
        "  std::vector<elem_bits_t> a_bits(a_val.size()), b_bits(b_val.size());",
        "  uint64_t s = 1234;",
        "  for (size_t i = 0; i < a_val.size(); ++i) {",
        "    int v = INPUT_LO + static_cast<int>(lcg(s) % uint32_t(INPUT_HI - INPUT_LO + 1));",
        f"    a_val[i] = v; a_bits[i] = {enc};",
        "  }",
        "  for (size_t i = 0; i < b_val.size(); ++i) {",
        "    int v = INPUT_LO + static_cast<int>(lcg(s) % uint32_t(INPUT_HI - INPUT_LO + 1));",
        f"    b_val[i] = v; b_bits[i] = {enc};",
        "  }",
        "  elem_bits_t *dA = nullptr, *dB = nullptr; out_t* dD = nullptr;",
        "  VL_CHECK(cudaMalloc(&dA, a_bits.size() * sizeof(elem_bits_t)));",
        "  VL_CHECK(cudaMalloc(&dB, b_bits.size() * sizeof(elem_bits_t)));",
        "  VL_CHECK(cudaMalloc(&dD, mt * N * sizeof(out_t)));",
        "  VL_CHECK(cudaMemcpy(dA, a_bits.data(), a_bits.size() * sizeof(elem_bits_t), "
        "cudaMemcpyHostToDevice));",
        "  VL_CHECK(cudaMemcpy(dB, b_bits.data(), b_bits.size() * sizeof(elem_bits_t), "
        "cudaMemcpyHostToDevice));",
        "  VL_CHECK(cudaMemset(dD, 0xff, mt * N * sizeof(out_t)));",
        "  const int smem = static_cast<int>(SMEM_BYTES + SMEM_ALIGN);",
        "  VL_CHECK(cudaFuncSetAttribute(vl_wgmma_kernel, "
        "cudaFuncAttributeMaxDynamicSharedMemorySize, smem));",
        "  vl_wgmma_kernel<<<tiles, 128, smem>>>(dA, dB, dD);",
        "  VL_CHECK(cudaGetLastError());",
        "  VL_CHECK(cudaDeviceSynchronize());",
        "  std::vector<out_t> d_out(mt * N);",
        "  VL_CHECK(cudaMemcpy(d_out.data(), dD, d_out.size() * sizeof(out_t), "
        "cudaMemcpyDeviceToHost));",
        "  double max_err = 0.0; size_t bad = 0, first_bad = 0;",
        "  for (size_t r = 0; r < mt; ++r) {",
        "    for (int c = 0; c < N; ++c) {",
        "      double ref = 0.0;",
        "      for (int k = 0; k < K; ++k) ref += double(a_val[r * K + k]) * double(b_val[size_t(k) * N + c]);",
        "      const out_t x = d_out[r * N + c];",
        f"      const double got = {dec};",
        "      const double err = std::fabs(got - ref);",
        "      if (!(err == 0.0)) { if (bad++ == 0) first_bad = r * N + c; }",
        "      if (err > max_err || err != err) max_err = err != err ? INFINITY : err;",
        "    }",
        "  }",
        "  cudaEvent_t t0, t1;",
        "  VL_CHECK(cudaEventCreate(&t0)); VL_CHECK(cudaEventCreate(&t1));",
        "  VL_CHECK(cudaEventRecord(t0));",
        "  for (int i = 0; i < iters; ++i) vl_wgmma_kernel<<<tiles, 128, smem>>>(dA, dB, dD);",
        "  VL_CHECK(cudaEventRecord(t1));",
        "  VL_CHECK(cudaEventSynchronize(t1));",
        "  float ms = 0.f; VL_CHECK(cudaEventElapsedTime(&ms, t0, t1));",
        "  const double ops = 2.0 * double(mt) * N * K * iters;",
        f"  std::printf(\"config {man['tag']}: M=%zu N=%d K=%d, %d tiles, %d iterations\\n\", "
        "mt, N, K, tiles, iters);",
        "  std::printf(\"max error %g over %zu outputs (%zu differ)\\n\", max_err, mt * N, bad);",
        f"  std::printf(\"%.3f T{ops}/s (%.3f ms per launch)\\n\", ops / (ms * 1e-3) / 1e12, "
        "ms / iters);",
        "  if (bad) std::printf(\"FAIL: first difference at row %zu col %zu\\n\", first_bad / N, "
        "first_bad % N);",
        "  else std::printf(\"PASS\\n\");",
        "  cudaFree(dA); cudaFree(dB); cudaFree(dD);",
        "  return bad ? 1 : 0;",
        "}", ""]


def _f16_decoder(acc: str) -> list[str]:
    if acc != "f16":
        return []
    return ["static float f16_bits_to_f32(uint16_t h) {",
            "  uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;",
            "  float mag = e == 0 ? std::ldexp(static_cast<float>(m), -24)",
            "                     : std::ldexp(static_cast<float>(m | 0x400u), int(e) - 25);",
            "  uint32_t x = f32_bits(mag) | sign; float f; std::memcpy(&f, &x, 4); return f;",
            "}"]


def _check_manifest_shape(man) -> None:
    if not isinstance(man, dict) or man.get("format") != FORMAT:
        raise LayoutError(f"not a wgmma emit manifest (expected format {FORMAT!r})")


def render_run_script(man: dict) -> str:
    """``run.sh``: build ``kernel.cu`` for sm_90a, run it, fail unless it prints PASS.

    >>> "compute_90a" in render_run_script(build_manifest((64, 8, 16), "f16"))
    True
    """
    return "\n".join([
        "#!/usr/bin/env bash",
        f"# Build and run the verilayout wgmma kernel {man['tag']} on an H100 (sm_90a).",
        "# Usage: ./run.sh [TILES [ITERATIONS]]   (needs nvcc >= 12 and an sm_90 GPU)",
        "set -euo pipefail",
        'cd "$(dirname "$0")"',
        "if command -v verilayout >/dev/null 2>&1; then verilayout simulate . ; fi",
        "nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o kernel kernel.cu",
        './kernel "$@" | tee run.log',
        "grep -q '^PASS' run.log", ""])


# ----- emission -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Emission:
    """What ``emit`` writes: ``files`` maps a file name to its text."""

    manifest: dict
    files: dict

    @property
    def kind(self) -> str:
        return self.manifest["kind"]


def emit_wgmma(shape: tuple[int, int, int], dtype: str, acc: str | None = None, a: OperandSpec = K_NONE,
               b: OperandSpec = K_NONE, k: int | None = None) -> Emission:
    """The manifest, ``kernel.cu`` and ``run.sh`` of one configuration.

    >>> e = emit_wgmma((64, 32, 16), "f16", "f32", a=OperandSpec("reg"), b=OperandSpec("smem", "MN", "64B"))   # A from registers, B N-major 64B
    >>> sorted(e.files), e.manifest["a"]["source"]
    (['kernel.cu', 'manifest.json', 'run.sh'], 'reg')
    """
    man = build_manifest(shape, dtype, acc, a, b, k)
    return Emission(man, {"manifest.json": json.dumps(man, indent=1) + "\n",
                          "kernel.cu": render_cuda(man), "run.sh": render_run_script(man)})


def write_emission(emission: Emission, directory: str) -> list[str]:
    """Write every file of an emission into ``directory`` (created if missing); the paths.

    >>> import tempfile; d = tempfile.mkdtemp()
    >>> [os.path.basename(p) for p in write_emission(emit_wgmma((64, 8, 16), "f16"), d)]
    ['kernel.cu', 'manifest.json', 'run.sh']
    """
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        raise LayoutError(f"cannot create {directory!r}: {e.strerror}") from None
    paths = []
    for name in sorted(emission.files):
        path = os.path.join(directory, name)
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(emission.files[name])
        except OSError as e:
            raise LayoutError(f"cannot write {path!r}: {e.strerror}") from None
        if name.endswith(".sh"):
            os.chmod(path, 0o755)
        paths.append(path)
    return paths
