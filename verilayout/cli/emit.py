"""``verilayout emit wgmma|blockload`` and ``verilayout simulate``: write verified kernels,
and run their executable model without a GPU.

Thin glue over :mod:`verilayout.emit`. Exit codes: 0 written / the model reproduces the
kernel's result, 1 the model finds a mismatch (the differing coordinate is printed),
2 bad input (one line ``error: ...`` on stderr).
"""
from __future__ import annotations

import argparse
import os
import json
import sys

from verilayout.cli.common import parse_type_arg, read_layout_arg
from verilayout.emit.gemm_select import choose_gemm, choose_tcgen05, configure, emission_for, explain
from verilayout.emit.cuda_wgmma import emit_wgmma, write_emission
from verilayout.frontends.names import (parse_cluster, parse_operand, parse_problem, parse_shape,
                                        parse_tile)
from verilayout.emit.gemm_plan import ACTIVATIONS, GEMM_DTYPES, OUT_DTYPES, default_tile
from verilayout.emit.opencl_block_io import emit_blockload
from verilayout.emit.opencl_dpas import DPAS_MAX_VOLUME, emit_dpas
from verilayout.emit.tcgen05_manifest import Tcgen05Manifest
from verilayout.frontends.shared_text import dpas_tile, operand
from verilayout.simulate.replay import KERNEL_FILES, load_emission, simulate
from verilayout.errors import LayoutError

_FMT = argparse.RawDescriptionHelpFormatter

_DOT_A = ("'#ttg.dot_op<{opIdx = 0, parent = #triton_intel_gpu.dpas<{repeatCount = 8, "
          "systolicDepth = 8, executionSize = 16, opsPerChan = 2, threadsPerWarp = 16, "
          "warpsPerCTA = [8, 4], repCluster = [4, 2]}>, kWidth = 1}>'")

EPILOG_EMIT = """\
examples:
  verilayout emit gemm --dtype bf16 -o out/gemm
  verilayout emit wgmma --instr m64n32k16 --dtype f16 --acc f32 --a K:none --b K:none -o out/ss
  verilayout emit wgmma --instr m64n32k16 --dtype f16 --a reg --b N:64B --k 64 -o out/rs
  verilayout emit blockload --layout {a} -t 'tensor<256x32xf16>' -o out/a
  verilayout simulate out/ss
exit codes: 0 written, 2 bad input
""".format(a=_DOT_A)

EPILOG_WGMMA = """\
examples (m64n32k16: A and B in canonical layouts of PTX ISA 9.7.15.5.1.2, or A in registers):
  verilayout emit wgmma --instr m64n32k16 --dtype f16 --acc f32 --a K:none --b K:none -o out/ex1
  verilayout emit wgmma --instr m64n32k16 --dtype f16 --acc f32 --a MN:64B --b N:none -o out/ex2
  verilayout emit wgmma --instr m64n32k16 --dtype f16 --acc f32 --a M:128B --b K:32B -o out/ex3
  verilayout emit wgmma --instr m64n32k16 --dtype f16 --acc f32 --a reg --b N:64B -o out/ex4
  verilayout emit wgmma --instr m64n256k8 --dtype tf32 --a K:128B --b K:64B --k 64 -o out/tf32
then:
  verilayout simulate out/ex1                 # the numpy model: D must equal A @ B
  nvcc -gencode=arch=compute_90a,code=sm_90a -c out/ex1/kernel.cu
  out/ex1/run.sh                              # on an H100: build, run, compare, TFLOP/s
DIR gets kernel.cu (kernel + host harness), manifest.json (what kernel.cu is generated from;
`simulate` reads it) and run.sh.
exit codes: 0 written, 2 bad input
"""

EPILOG_GEMM = """\
examples:
  verilayout emit gemm --dtype f16 -o out/gemm_f16                  # 128x256x64, 4 stages
  verilayout emit gemm --arch sm_90a --dtype bf16 --tile 128x256x64 --stages 4 -o out/bf16
  verilayout emit gemm --dtype e4m3 --tile 128x128x128 --stages 6 -o out/e4m3
  verilayout emit gemm --dtype tf32 --tile 64x128x16 --stages 5 -o out/tf32
  verilayout emit gemm --dtype bf16 --problem 16,4096,4096 --explain -o out/decode   # chosen for the problem
  verilayout emit gemm --dtype bf16 --tile 128x256x64 --cluster 2x1 -o out/c2x1    # B multicast to 2 CTAs
  verilayout emit gemm --arch sm_100a --dtype bf16 --tile 128x128x64 --cluster 2x2 -o out/b200_c2x2   # A and B multicast
  verilayout emit gemm --arch sm_100a --dtype bf16 --tile 256x256x64 --cluster 4x1 -o out/b200_p4x1   # two CTA pairs share B
  verilayout emit gemm --dtype bf16 --tile 64x256x64 --schedule pingpong -o out/pp  # ping-pong consumers
  verilayout emit gemm --dtype bf16 --problem 4096,14336,4096 --out-dtype bf16 --bias --activation silu -o out/mlp
then, on an H100 / H200:
  nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o out/gemm_f16/gemm out/gemm_f16/main.cu -ldl
  out/gemm_f16/gemm                 # exact checks on small shapes, then TFLOP/s and % of cuBLASLt at 8192^3
DIR gets kernel.cu (kernel, tensor maps, launch(); the proof obligations at its top), main.cu (the
host program), manifest.json (what kernel.cu is written from), Makefile and README.md.
defaults: --arch sm_90a, --tile 128x256x(128 bytes of K: 64 f16/bf16, 128 e4m3, 32 tf32), --stages 4
exit codes: 0 written, 2 bad input
"""

EPILOG_BLOCKLOAD = f"""\
examples (the operands of intel-xpu-backend-for-triton docs/BLOCK_LOADS_LAYOUT.md):
  verilayout emit blockload --layout {_DOT_A} -t 'tensor<256x32xf16>' -o out/a
  verilayout emit blockload --layout @b_operand.mlir -t 'tensor<32x256xf16>' -o out/b
  verilayout emit blockload --layout @b_operand.mlir -t 'tensor<32x256xf16>' --transpose -o out/bt
then:
  verilayout simulate out/a     # the numpy model of the loads and the shuffle
DIR gets kernel.cl (OpenCL C, cl_intel_subgroup_2d_block_io built-ins) and manifest.json.
exit codes: 0 written, 2 bad input
"""

_DPAS = ("'#ttig.dpas<{repeatCount = 8, systolicDepth = 8, executionSize = 16, opsPerChan = 2, "
         "threadsPerWarp = 16, warpsPerCTA = [8, 4], repCluster = [4, 2]}>'")

EPILOG_DPAS = f"""\
examples (the DPAS parent of intel-xpu-backend-for-triton docs/BLOCK_LOADS_LAYOUT.md: one
256x256 tile of C over K = 32):
  verilayout emit dpas --parent {_DPAS} --tile 256x256x32 --dtype f16 -o out/dpas
  verilayout emit dpas --parent @dpas.mlir --tile 256x256x32 --dtype bf16 --transpose-b -o out/bt
DIR gets kernel.cl (OpenCL C: cl_intel_subgroup_2d_block_io loads, cl_intel_subgroup_matrix_
multiply_accumulate calls, the obligations proved at its top) and manifest.json.
compile offline: clang -x cl -cl-std=CL2.0 -Xclang -finclude-default-header -target spir64
  -DVL_DECLARE_BUILTINS -c -emit-llvm out/dpas/kernel.cl
exit codes: 0 written, 2 bad input
"""

EPILOG_SIMULATE = """\
examples:
  verilayout simulate out/ex1
  verilayout simulate out/ex1 --seed 7 --base-address 0x8000 --json
  verilayout simulate out/a
wgmma: builds the shared-memory image the emitted copy produces, reads every K-block through
the descriptor address model and the PTX fragment tables, and compares D with A @ B; with nvcc,
kernel.cu is also compiled and checked on its PTX, independently of the renderer (wgmma operands
and immediates, the copy of every element, descriptors at 3 shared bases, fence/commit/wait
order, D stores, ptxas spills, host-compiled index functions); comments are not failures.
gemm: the independent checks alone (needs nvcc): tensor maps, TMA boxes, descriptors, the
mbarrier ring over every interleaving, the epilogue.
blockload: runs the loads (the block-IO model's register placement) and the shuffle, and
compares every DPAS operand register of every lane of every sub-group with the DPAS layout.
exit codes: 0 the model reproduces the result, 1 a mismatch (coordinate printed), 2 bad input
"""


def _int(text: str) -> int:
    try:
        return int(str(text).replace("_", ""), 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer (decimal or 0x...)") from None


def _guard(fn):
    def run(args) -> int:
        try:
            return fn(args)
        except LayoutError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    return run


# ----- emit wgmma -----------------------------------------------------------------------------

def _cmd_emit_wgmma(args) -> int:
    e = emit_wgmma(parse_shape(args.shape), args.dtype, args.acc, a=parse_operand(args.a, "A"),
                   b=parse_operand(args.b, "B"), k=args.k)
    paths = write_emission(e, args.out)
    m = e.manifest
    if args.json:
        print(json.dumps({"directory": args.out, "files": paths, "tag": m["tag"],
                          "instruction": m["instruction"], "smem_bytes": m["smem"]["bytes"],
                          "a": _operand_summary(m["a"]), "b": _operand_summary(m["b"]),
                          "obligations": m["obligations"]}))
        return 0
    print(f"wrote {', '.join(paths)}")
    print(f"{m['instruction']} x {m['k_blocks']} K-block(s): {m['m']}x{m['n']}x{m['k']}, "
          f"{m['smem']['bytes']} bytes of shared memory")
    for name in ("a", "b"):
        op = m[name]
        if op["source"] == "reg":
            f = op["fragment"]
            print(f"{name.upper()}: registers, {f['registers']} elements per thread in "
                  f"{f['registers'] // f['elements_per_register']} 32-bit registers per K-block "
                  "(PTX A fragment)")
            continue
        print(f"{name.upper()}: {op['major']}-major {op['swizzle']}, {op['layout']} at byte "
              f"{op['offset_bytes']:#x} (trans {op['trans']})")
        for kb, (d, v) in enumerate(zip(op["descriptors"], op["verdicts"])):
            print(f"  K-block {kb}: descriptor {d}  [{v['status']}, {v['method']}]")
    f = m["d"]["fragment"]
    print(f"D: {f['registers']} {m['acc']} elements per thread in "
          f"{f['registers'] // f['elements_per_register']} registers (PTX D fragment)")
    n_ok = sum(o["status"] == "proved" for o in m["obligations"])
    print(f"obligations: {n_ok} of {len(m['obligations'])} proved (listed at the top of "
          "kernel.cu)")
    print(f"next: verilayout simulate {args.out}")
    return 0 if n_ok == len(m["obligations"]) else 1


def _operand_summary(op: dict) -> dict:
    if op["source"] == "reg":
        return {"source": "reg", "registers": op["fragment"]["registers"]}
    return {k: op[k] for k in ("source", "major", "swizzle", "layout", "offset_bytes", "trans",
                               "descriptors")}


# ----- emit gemm ------------------------------------------------------------------------------

def _cluster_words(cl: dict) -> str:
    """Law: ``", cluster MxN (TMA multicast)"`` for a manifest's cluster of more than one CTA (of
    CTA pairs: the leaders named), ``""`` otherwise."""
    if cl.get("size", 1) <= 1:
        return ""
    pairs = ", CTA pairs: each leader issues cta_group::2 MMAs" if "commits" in cl else ""
    return f", cluster {cl['m']}x{cl['n']} (TMA multicast{pairs})"


def _cmd_emit_gemm(args) -> int:
    choice = None
    if args.problem is not None:
        choose = choose_tcgen05 if args.arch == "sm_100a" else choose_gemm
        choice = choose(*parse_problem(args.problem), args.dtype)
    elif args.explain:
        raise LayoutError("--explain: needs --problem M,N,K (the choice it explains)")
    tile = None if args.tile is None else parse_tile(args.tile)
    cluster = None if args.cluster is None else parse_cluster(args.cluster)
    man = configure(args.dtype, choice, tile=tile, stages=args.stages, group_m=args.group_m,
                    splits=args.split_k, arch=args.arch, out=args.out_dtype, bias=args.bias,
                    activation=args.activation, cluster=cluster,
                    swap_ab=True if args.swap_ab else None, schedule=args.schedule)
    e = emission_for(man)
    paths = write_emission(e, args.out)
    m = e.manifest
    if args.explain and not args.json:
        print(explain(choice))
    n_ok = sum(o["status"] == "proved" for o in m["obligations"])
    if args.json:
        print(json.dumps({"directory": args.out, "files": paths, "tag": m["tag"],
                          "instruction": m["instruction"], "tile": [m["bm"], m["bn"], m["bk"]],
                          "stages": m["stages"], "threads": m["threads"],
                          "smem_bytes": m["smem"]["bytes"], "swizzle": m["swizzle"],
                          "group_m": m["group_m"], "split_k": m["splits"],
                          "swap_ab": bool(m.get("swap_ab", False)),
                          **({"consumer_schedule": m["consumer_schedule"]}
                             if "consumer_schedule" in m else {}),
                          "cluster": [m.get("cluster", {}).get("m", 1), m.get("cluster", {}).get("n", 1)],
                          "epilogue": m["epilogue"],
                          **({"explain": explain(choice)} if args.explain else {}),
                          "obligations": m["obligations"]}))
        return 0
    print(f"wrote {', '.join(paths)}")
    print(f"{m['tag']}: {m['instruction']} x {m['k_blocks']} per stage, tile {m['bm']}x{m['bn']}x"
          f"{m['bk']}, {m['stages']} stages, {m['consumers']} consumer warpgroup(s) + 1 producer "
          f"({m['threads']} threads), {m['smem']['bytes']} bytes of shared memory")
    t = m["tma"]
    sm100 = man if isinstance(man, Tcgen05Manifest) else None   # sm_100a: the typed manifest
    print((f"schedule: persistent, GROUP_M {m['group_m']} tile rows at a time; warp 0 TMA, warp 1 MMA, warps 2-5 epilogue, TMEM accumulator x2 (sm_100a), split-K " if sm100 else
           f"schedule: persistent, GROUP_M {m['group_m']} tile rows at a time, split-K ") +
          f"{m['splits']}" + (" (partial sums to a workspace, then one reduction kernel)"
                              if m["splits"] > 1 else "") +
          _cluster_words(m.get("cluster", {})) +
          (", swap-AB (the kernel computes D^T = B A^T: its A operand is B, its tile's N runs "
           "over M)" if m.get("swap_ab") else "") +
          (", ping-pong consumer warpgroups (each owns whole tiles; turn mbarriers order their "
           "MMAs and epilogues)" if m.get("consumer_schedule") == "pingpong" else ""))
    cl = m.get("cluster", {})                     # sm_100a: each CTA (of a pair) loads its rows of A and B
    a_rows, b_rows = (sm100.a_rows, sm100.b_rows) if sm100 else (m['bm'], m['bn'])
    print(f"TMA: SWIZZLE_{t['swizzle']}, boxes of {t['box_k']} x {cl.get('a_slice_rows', a_rows)} "
          f"(A) and {t['box_k']} x {cl.get('b_slice_rows', b_rows)} (B), {t['boxes']} per stage, "
          f"expect_tx {t['tx_bytes']} bytes")
    print(f"A stage: {m['a']['layout']}")
    print(f"B stage: {m['b']['layout']}")
    print(f"obligations: {n_ok} of {len(m['obligations'])} proved (listed at the top of kernel.cu)")
    print(f"next: nvcc -O3 -std=c++17 -gencode=arch=compute_{m['arch'][3:]},code={m['arch']} -o {args.out}/gemm "
          f"{args.out}/main.cu -ldl   (on a GPU: {args.out}/gemm)")
    return 0


# ----- emit blockload ------------------------------------------------------------------------

def _cmd_emit_blockload(args) -> int:
    text = read_layout_arg(args.layout)
    shape = dtype = None
    if args.type:
        shape, dtype = parse_type_arg(args.type)
    e = emit_blockload(operand(text, shape=shape, dtype=dtype), transpose=args.transpose, arch=args.arch,
                       baseline=args.baseline)
    paths = write_emission(e, args.out)
    m = e.manifest
    if args.json:
        print(json.dumps({"directory": args.out, "files": paths, "loads": m["loads"],
                          "builtins": m["builtins"], "registers": m["registers"],
                          "subgroups": m["warps"]["count"], "obligations": m["obligations"]}))
        return 0
    print(f"wrote {', '.join(paths)}")
    o = m["operand"]
    print(f"operand {'AB'[o['op_idx']]} {'x'.join(map(str, o['shape']))}x{o['dtype']}"
          f"{' stored transposed' if m['transpose'] else ''}: {m['registers']} DPAS registers "
          f"per lane, {m['warps']['count']} sub-group(s), {len(m['loads'])} load(s) each")
    for i, (ld, b) in enumerate(zip(m["loads"], m["builtins"])):
        print(f"  load {i}: {b['name']} at (x={ld['x']}, y={ld['y']}) -> {b['dest_count']} "
              f"{b['dest_type']} per work-item")
    for ob in m["obligations"]:
        print(f"[{ob['status']}, {ob['method']}] {ob['claim']}")
    print(f"next: verilayout simulate {args.out}")
    return 0


# ----- emit dpas -----------------------------------------------------------------------------

def _mnk(text: str) -> tuple[int, int, int]:
    parts = str(text).lower().split("x")
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(f"{text!r} is not MxNxK (e.g. 256x256x32)")
    return tuple(int(p) for p in parts)


def _cmd_emit_dpas(args) -> int:
    parent = read_layout_arg(args.parent)
    m, n, k = args.shape
    e = emit_dpas(dpas_tile(parent, m=m, n=n, k=k, dtype=args.dtype, max_volume=DPAS_MAX_VOLUME),
                  transpose_b=args.transpose_b, arch=args.arch)
    paths = write_emission(e, args.out)
    man = e.manifest
    if args.json:
        print(json.dumps({"directory": args.out, "files": paths, "mad": man["mad"],
                          "sub_groups": man["sub_groups"],
                          "calls_per_sub_group": len(man["instructions"]),
                          "loads": {"a": len(man["a"]["loads"]), "b": len(man["b"]["loads"])},
                          "obligations": man["obligations"]}))
        return 0
    print(f"wrote {', '.join(paths)}")
    print(f"C {m}x{n} = A {m}x{k} x B {k}x{n}{' (B stored transposed)' if args.transpose_b else ''}"
          f", {args.dtype}: {man['sub_groups']} sub-group(s), {len(man['instructions'])} "
          f"{man['mad']['name']} call(s) each, {len(man['a']['loads'])} A and "
          f"{len(man['b']['loads'])} B load(s) each")
    for ob in man["obligations"]:
        print(f"[{ob['status']}, {ob['method']}] {ob['claim']}")
    return 0


# ----- simulate ------------------------------------------------------------------------------

def _cmd_simulate(args) -> int:
    if not args.dir.strip():
        raise LayoutError("an empty path was given (is the variable that names it set?)")
    if not os.path.exists(args.dir):
        raise LayoutError(f"{args.dir}: no such folder (give the folder `verilayout emit -o` wrote)")
    if not os.path.isdir(args.dir):
        raise LayoutError(f"{args.dir}: not a folder (give the folder `verilayout emit -o` wrote)")
    _, source, kind = load_emission(args.dir)
    if source is None:
        raise LayoutError(f"{args.dir}: no {KERNEL_FILES[kind]} next to manifest.json (the kernel "
                          "the model is checked against)")
    if not 0 <= args.seed < 1 << 32:
        raise LayoutError(f"--seed {args.seed}: need a whole number from 0 to 2^32 - 1")
    if not 0 <= args.smem_base < 1 << 32:
        raise LayoutError(f"--base-address {args.smem_base:#x}: need a shared-memory address from 0 "
                          "to 2^32 - 1 (a multiple of 1024)")
    r = simulate(args.dir, seed=args.seed, smem_base=args.smem_base)
    if args.json:
        print(json.dumps(r.to_dict()))
        return 0 if r.ok else 1
    if r.ok:
        print(f"ok: {r.summary}")
        return 0
    print(f"mismatch: {r.summary}")
    mm = r.mismatch or {}
    coord = ", ".join(f"{k}={v}" for k, v in mm.items() if k not in ("where",))
    print(f"  at {mm.get('where', '?')}: {coord}")
    for c in r.causes:
        print(f"  cause: {c}")
    return 1


def register(subparsers) -> None:
    """Add ``emit`` (``emit wgmma``, ``emit blockload``) and ``simulate`` to an argparse
    subparsers object."""
    # long: a declarative argparse table (every option of emit wgmma/blockload/dpas and simulate)
    g = subparsers.add_parser("emit", help="write a verified kernel: wgmma (CUDA) or Intel block "
                              "loads (OpenCL C)", formatter_class=_FMT, epilog=EPILOG_EMIT,
                              description="Write a kernel whose every index comes from a proved "
                              "object, with the manifest `verilayout simulate` runs.")
    sub = g.add_subparsers(dest="emit_command", metavar="KIND")
    g.set_defaults(func=lambda a: (g.print_help(sys.stderr), 2)[1])

    p = sub.add_parser("wgmma", help="a CUDA C++ wgmma kernel and its host harness",
                       formatter_class=_FMT, epilog=EPILOG_WGMMA,
                       description="Write a self-contained sm_90a kernel computing D = A @ B for "
                       "one 64 x N x K tile per CTA: the global-to-shared copy follows the proved "
                       "shared-memory layout, the descriptors are the proved ones, registers "
                       "follow the PTX fragments.")
    p.add_argument("--instr", dest="shape", required=True, metavar="m64nNkK", help="one instruction, m64nNkK (e.g. m64n32k16; K "
                   "is 16 for f16/bf16, 8 for tf32, 32 for s8/u8)")
    p.add_argument("--dtype", required=True, help="multiplicand type: f16, bf16, tf32, s8, u8")
    p.add_argument("--acc", help="accumulator: f32 or f16 (f16 inputs), s32 (integers); default "
                   "f32 / s32")
    p.add_argument("--a", default="K:none", metavar="MAJOR:SWIZZLE|reg",
                   help="operand A: K:none, MN:64B, M:128B, ... or reg (from registers); "
                   "default K:none")
    p.add_argument("--b", default="K:none", metavar="MAJOR:SWIZZLE",
                   help="operand B: K:none, N:64B, K:32B, ...; default K:none")
    p.add_argument("--k", type=_int, metavar="K", help="K of the whole tile, a multiple of the "
                   "instruction's K (default: one instruction)")
    p.add_argument("-o", "--out", required=True, metavar="DIR", help="directory to write")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_guard(_cmd_emit_wgmma))

    p = sub.add_parser("gemm", help="a complete Hopper GEMM (TMA, mbarrier ring, warp-specialized "
                       "wgmma, persistent) and its host program", formatter_class=_FMT,
                       epilog=EPILOG_GEMM,
                       description="Write a persistent, warp-specialized sm_90a GEMM D = A @ B^T "
                       "(A M x K, B N x K, both row-major; D f32 row-major) for any M, N, K: TMA "
                       "loads into a multistage mbarrier ring, a producer warpgroup and one consumer "
                       "warpgroup per 64 tile rows issuing wgmma with the proved descriptors.")
    p.add_argument("--arch", default="sm_90a", choices=("sm_90a", "sm_100a"), metavar="ARCH",
                   help="sm_90a (Hopper: wgmma, default) or sm_100a (Blackwell: tcgen05.mma with a "
                   "TMEM accumulator; compiled and checked here, cannot run here)")
    p.add_argument("--dtype", default="bf16", choices=GEMM_DTYPES, metavar="DTYPE",
                   help=f"multiplicand type: {', '.join(GEMM_DTYPES)} (default bf16; f32 accumulation)")
    p.add_argument("--tile", metavar="BMxBNxBK", help="CTA tile: BM 64 or 128, BN a multiple of 16 "
                   f"up to 256, BK a multiple of 32 bytes (default 128x256x(128 bytes), e.g. "
                   f"{default_tile('f16')} for f16)")
    p.add_argument("--stages", type=_int, default=None, metavar="N", help="pipeline stages, 2 to 8 "
                   "(default 4, with --problem the deepest ring that fits; must fit 227 KiB of "
                   "shared memory)")
    p.add_argument("--problem", metavar="M,N,K", help="choose tile, stages, raster and split-K "
                   "for this problem from the cost model (--tile, --stages, --group-m, --split-k "
                   "override its choice)")
    p.add_argument("--explain", action="store_true", help="with --problem: print the cost of "
                   "every configuration considered and why the chosen one wins")
    p.add_argument("--group-m", type=_int, default=None, metavar="G", help="tile rows the "
                   "persistent scheduler visits together, 1 to 64 (default 8)")
    p.add_argument("--split-k", type=_int, default=None, metavar="S", help="K slices per tile, "
                   "1 to 16, summed by a reduction kernel (default 1)")
    p.add_argument("--cluster", default=None, metavar="MxN", help="thread-block cluster: 2x1 (two "
                   "CTAs along M share B by TMA multicast), 1x2 (along N, share A) or 1x1 (default; "
                   "with --problem the model's choice); sm_100a (one CTA per 128-row tile) also 2x2, "
                   "4x1 and 1x4: the CTAs of one M block (N block) each load a slice of A (B) and "
                   "multicast it (cp.async.bulk.tensor .multicast::cluster, PTX ISA 9.7.9.25), each "
                   "MMA warp frees a stage with one tcgen05.commit multicast to the CTAs that wrote it. "
                   "sm_100a CTA pairs (--tile 256xBNxBK, tcgen05.mma.cta_group::2, ranks 2k and 2k+1 a "
                   "pair along M): 2x1 (one pair, the default), 4x1 (two pairs along M share B: the two "
                   "CTAs holding the same half of B each load half of it and multicast it) or 2x2 (two "
                   "pairs along N share A); every byte completes on the destination pair's leader, "
                   "whose MMA warp frees a stage with one tcgen05.commit.cta_group::2 multicast to every "
                   "CTA that wrote into the pair")
    p.add_argument("--swap-ab", action="store_true", help="compute D^T = B A^T so that N fills "
                   "wgmma's 64 rows (decode shapes, small M; with --problem the model's choice)")
    p.add_argument("--schedule", default=None, choices=("cooperative", "pingpong"), metavar="S",
                   help="sm_90a consumer warpgroups: cooperative (two split each 128-row tile) or "
                   "pingpong (64-row tiles, each consumer owns whole tiles and they take turns on "
                   "the tensor cores and the epilogue, as CUTLASS's "
                   "sm90_gemm_tma_warpspecialized_pingpong.hpp; without --tile its tile is "
                   "64x256x(128 bytes of K)); default cooperative, with "
                   "--problem the model's choice (--explain says why)")
    p.add_argument("--out-dtype", default="f32", choices=OUT_DTYPES, metavar="T",
                   help=f"type of D: {', '.join(OUT_DTYPES)} (default f32)")
    p.add_argument("--bias", action="store_true", help="add bias[col] (N floats) to each output")
    p.add_argument("--activation", default="none", choices=ACTIVATIONS, metavar="ACT",
                   help=f"after the bias: {', '.join(ACTIVATIONS)} (GELU in its tanh form; "
                   "default none)")
    p.add_argument("-o", "--out", required=True, metavar="DIR", help="directory to write")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_guard(_cmd_emit_gemm))

    p = sub.add_parser("blockload", help="an OpenCL C kernel: 2D block loads + shuffle for a DPAS "
                       "operand", formatter_class=_FMT, epilog=EPILOG_BLOCKLOAD,
                       description="Write an OpenCL C kernel issuing the proved minimal 2D "
                       "block-load plan of a DPAS operand with the cl_intel_subgroup_2d_block_io "
                       "built-ins, and the register shuffle into the DPAS operand registers.")
    p.add_argument("--layout", required=True, metavar="DOT_OP",
                   help="#ttg.dot_op with a #ttig.dpas parent (or a full tensor type), literal "
                   "text or @FILE")
    p.add_argument("-t", "--type", metavar="TYPE", help="tensor type giving shape and element "
                   "type, e.g. 'tensor<256x32xf16>'")
    p.add_argument("--transpose", action="store_true", help="the operand is stored transposed "
                   "in memory (the AxBT case of intel-xpu-backend-for-triton "
                   "docs/BLOCK_LOADS_LAYOUT.md)")
    p.add_argument("--arch", choices=["pvc", "xe2", "xe3"], default="xe2",
                   help="hardware generation for the limits (default xe2)")
    p.add_argument("--baseline", action="store_true", help="emit the plan of the Intel XPU "
                   "backend's algorithm (docs/BLOCK_LOADS_LAYOUT.md) instead of the minimal one")
    p.add_argument("-o", "--out", required=True, metavar="DIR", help="directory to write")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_guard(_cmd_emit_blockload))

    p = sub.add_parser("dpas", help="an OpenCL C kernel: C = A*B with DPAS on block-loaded "
                       "operands", formatter_class=_FMT, epilog=EPILOG_DPAS,
                       description="Write an OpenCL C kernel in which the sub-groups of a "
                       "#ttig.dpas layout load A and B with the proved 2D block-load plans and "
                       "compute one MxN tile of C = A*B with the sub-group matrix-mad built-ins.")
    p.add_argument("--parent", required=True, metavar="DPAS",
                   help="the #ttig.dpas<{...}> attribute, literal text or @FILE")
    p.add_argument("--tile", dest="shape", required=True, type=_mnk, metavar="MxNxK",
                   help="the work-group tile, e.g. 256x256x32")
    p.add_argument("--dtype", required=True, choices=["f16", "bf16", "i8", "u8"],
                   help="element type of A and B (f32 accumulators for f16/bf16, i32 for 8-bit)")
    p.add_argument("--transpose-b", action="store_true", help="B is stored transposed (N x K)")
    p.add_argument("--arch", choices=["pvc", "xe2", "xe3"], default="xe2",
                   help="hardware generation for the block-load limits (default xe2)")
    p.add_argument("-o", "--out", required=True, metavar="DIR", help="directory to write")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_guard(_cmd_emit_dpas))

    p = subparsers.add_parser("simulate", help="run the numpy model of an emitted kernel",
                              formatter_class=_FMT, epilog=EPILOG_SIMULATE,
                              description="Run the executable model of a kernel written by "
                              "`verilayout emit` from its manifest.json (and check the kernel "
                              "file is what that manifest generates).")
    p.add_argument("dir", metavar="DIR", help="a directory written by `verilayout emit`")
    p.add_argument("--seed", type=_int, default=0, help="seed of the random integer inputs "
                   "(default 0)")
    p.add_argument("--base-address", dest="smem_base", type=_int, default=0, metavar="BYTES",
                   help="wgmma: shared address of the kernel's aligned buffer, a multiple of "
                   "1024 (default 0)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_guard(_cmd_simulate))
