"""`verilayout blockload plan|check`: Intel 2D block loads for DPAS operands and for any
distributed layout of a rank-2 tensor (#ttg.blocked, #ttg.linear, slices, ...); a rank-3 tensor
(a leading batch dim) is planned one batch index at a time.

Thin glue over :mod:`verilayout.blockload`. Exit codes: 0 the plan is proved
(``check``) / a plan was built with its minimality proved, 1 a counterexample or a plan whose
minimality could not be settled, 2 bad input.
"""
from __future__ import annotations

import argparse
import json
import sys

from verilayout import blockload
from verilayout.blockload import BatchedPlan, Plan
from verilayout.cli.common import int_arg, parse_type_arg, read_layout_arg
from verilayout.errors import LayoutError
from verilayout.hw.intel.block_io import Surface, placement
from verilayout.spec.format import MAX_SPEC_BYTES, read_text

_A = ("'#ttg.dot_op<{opIdx = 0, parent = #triton_intel_gpu.dpas<{repeatCount = 8, "
      "systolicDepth = 8, executionSize = 16, opsPerChan = 2, threadsPerWarp = 16, "
      "warpsPerCTA = [8, 4], repCluster = [4, 2], A = [32, 16], B = [16, 32], C = [32, 32]}>, "
      "kWidth = 1}>'")

_BLOCKED = ("'#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [16, 1], "
            "warpsPerCTA = [4, 1], order = [1, 0]}>'")

_BATCHED = ("'#ttg.blocked<{sizePerThread = [1, 1, 8], threadsPerWarp = [1, 16, 1], "
            "warpsPerCTA = [2, 2, 1], order = [2, 1, 0]}>'")

EPILOG_PLAN = f"""\
A DPAS operand (#ttg.dot_op with a #ttig.dpas parent) is planned for the DPAS instructions;
any other distributed layout (#ttg.blocked, #ttg.linear, #ttig.subgroup_2d_block, #ttg.slice)
gets the fewest loads that put every element each work-item holds into that work-item
(plain loads of any width, VNNI, d32/d64 transposed), with the in-lane shuffle. A rank-3
tensor (a leading batch dim, e.g. tensor<4x64x128xf16>) is loaded one batch index at a time, as
Triton's Intel backend does: the plan of one index's matrix, issued at each index the
sub-group holds (batch b's surface based b * height * pitch bytes further).

examples:
  verilayout blockload plan --layout {_A} -t 'tensor<256x32xf16>'
  verilayout blockload plan --layout {_BLOCKED} -t 'tensor<64x128xf16>'
  verilayout blockload plan --layout {_BLOCKED} -t 'tensor<128x64xf16>' --transpose
  verilayout blockload plan --layout {_BATCHED} -t 'tensor<4x64x128xf16>'
  verilayout blockload plan --layout @b_operand.mlir -t 'tensor<32x256xf16>' --transpose --json
  verilayout blockload plan --layout @b_operand.mlir -t 'tensor<32x256xf16>' --baseline
  verilayout blockload plan --layout {_A} -t 'tensor<256x32xf16>' --base-address 0x4a0
  verilayout blockload plan --layout {_A} -t 'tensor<256x32xf16>' --origin 32,0
placement: --base-address B is the operand's first byte; the surface then starts at the
  64-byte aligned B & ~63 and the operand at x0 = (B % 64) / element bytes of it. --origin X,Y
  places the operand at element column X, row Y of the surface (added to what --base-address
  gives). Loads' x and y are the surface's.
exit codes: 0 plan built and proved minimal, 1 the plan is wrong or its minimality is unknown,
  2 bad input (including a layout no legal block load can deliver: the message names the
  element, the lane and why)
"""

EPILOG_CHECK = f"""\
examples:
  verilayout blockload plan --layout {_A} -t 'tensor<256x32xf16>' --json > plan.json
  verilayout blockload check --plan plan.json --layout {_A} -t 'tensor<256x32xf16>' --all-warps
  verilayout blockload plan --layout {_BLOCKED} -t 'tensor<64x128xf16>' --json > t.json
  verilayout blockload check --plan t.json --layout {_BLOCKED} -t 'tensor<64x128xf16>'
  verilayout blockload check --plan plan.json --layout {_A} -t 'tensor<256x32xf16>' --origin 33,0
placement: by default the operand sits where the plan says (its "origin"); --base-address B
  and --origin X,Y state where it really is (as for `plan`), and a load that reads another
  byte is a counterexample naming the load and the byte.
exit codes: 0 proved, 1 a counterexample was found, 2 bad input
"""


def register(subparsers) -> None:
    """Add ``blockload plan`` and ``blockload check`` to an argparse subparsers object."""
    p = subparsers.add_parser(
        "blockload", help="Intel 2D block loads for DPAS operands and any distributed tensor "
        "layout: minimal plans, proofs",
        description="Plan the 2D block loads one sub-group issues for a DPAS operand or for "
        "any distributed layout of a rank-2 tensor (#ttg.blocked, #ttg.linear, ...) or of a "
        "rank-3 tensor (per batch index), or prove a plan right.", formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG_PLAN)
    sub = p.add_subparsers(dest="blockload_command", metavar="ACTION")
    pp = sub.add_parser("plan", help="the plan with the fewest loads, with a lower-bound proof",
                        formatter_class=argparse.RawDescriptionHelpFormatter,
                        epilog=EPILOG_PLAN,
                        description="Build the plan with the fewest 2D block loads per "
                        "sub-group for a DPAS operand, or for any distributed layout of a "
                        "rank-2 tensor, and prove that no valid plan uses fewer.")
    _operand_args(pp)
    pp.add_argument("--transpose", action="store_true",
                    help="memory holds the tensor transposed (column-major; for a DPAS B "
                    "operand the A x B^T case)")
    pp.add_argument("--baseline", action="store_true",
                    help="the plan the Intel XPU backend for Triton builds (LoadStoreOpToLLVM.cpp: grow the DPAS tile by "
                    "iterations up to the limits, then add loads; DPAS operands only)")
    pp.add_argument("--arch", choices=["pvc", "xe2", "xe3"], default="xe2",
                    help="hardware generation for the limits (default xe2)")
    pp.add_argument("--no-negative-offsets", action="store_true",
                    help="tensor plans: every load starts at x, y >= 0 (by default a load may "
                    "start above or left of the tensor; those rows and columns read as zero)")
    _placement_args(pp)
    pp.add_argument("--no-search", action="store_true",
                    help="do not run the exhaustive search when counting does not settle "
                    "minimality")
    pp.set_defaults(func=cmd_plan)
    pc = sub.add_parser("check", help="prove a plan (from `plan --json`) right, or show the "
                        "counterexample", formatter_class=argparse.RawDescriptionHelpFormatter,
                        epilog=EPILOG_CHECK, description="Prove that a plan respects every "
                        "limit, loads every element the DPAS instructions (or the layout's "
                        "work-items) hold and shuffles each into the right register.")
    pc.add_argument("--plan", required=True, metavar="FILE",
                    help="plan JSON as written by `verilayout blockload plan --json` ('-': stdin)")
    _operand_args(pc)
    pc.add_argument("--all-warps", action="store_true",
                    help="check the plan moved to every warp, not only its own")
    _placement_args(pc)
    pc.set_defaults(func=cmd_check)
    p.set_defaults(func=lambda args: _no_action(p))


def _operand_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--layout", required=True, metavar="LAYOUT",
                   help="#ttg.dot_op with a #ttig.dpas parent, or any distributed layout "
                   "(#ttg.blocked, #ttg.linear, #ttig.subgroup_2d_block, #ttg.slice), or a full "
                   "tensor type; literal text or @FILE")
    p.add_argument("-t", "--type", metavar="TYPE",
                   help="tensor type giving shape and element type, e.g. 'tensor<256x32xf16>'")
    p.add_argument("--warp", type=int, default=0, help="which sub-group (default 0)")
    p.add_argument("--json", action="store_true", help="print JSON")


def _placement_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--base-address", type=int_arg, default=None, metavar="BYTES",
                   help="the operand's first byte: the surface starts at BYTES & ~63 (64-byte "
                   "aligned) and the operand at x0 = (BYTES %% 64) / element bytes")
    p.add_argument("--origin", default=None, metavar="X,Y",
                   help="the operand at element column X, row Y of its surface (added to what "
                   "--base-address gives; default 0,0)")


def _origin(text) -> tuple[int, int]:
    if text is None:
        return (0, 0)
    parts = str(text).split(",")
    try:
        x, y = (int(v.strip().replace("_", ""), 0) for v in parts)
    except ValueError:
        raise LayoutError(f"--origin {text!r}: expected X,Y, two integers >= 0 (x in elements, "
                          "y in rows)") from None
    if x < 0 or y < 0:
        raise LayoutError(f"--origin {text!r}: expected X,Y, two integers >= 0")
    return x, y


def _no_action(p: argparse.ArgumentParser) -> int:
    p.print_help(sys.stderr)
    return 2


def _operand(args):
    text = read_layout_arg(args.layout)
    shape = dtype = None
    if args.type:
        shape, dtype = parse_type_arg(args.type)
    return text, shape, dtype, blockload


def cmd_plan(args) -> int:
    text, shape, dtype, bl = _operand(args)
    p = bl.plan(text, shape=shape, dtype=dtype, transpose=args.transpose, arch=args.arch,
                warp=args.warp, baseline=args.baseline, search=not args.no_search,
                negative_offsets=not args.no_negative_offsets, origin=_origin(args.origin),
                base_address=args.base_address)
    try:
        layout = p.layout
    except LayoutError as e:
        layout, why = None, str(e)
    if args.json:
        print(json.dumps(p.to_dict()))
    else:
        print(p.describe())
        if layout is not None:
            print("loaded data (offset, iteration, load -> memory-view slots):")
            print(bl.format_load_layout(layout))
        else:
            print(f"loaded data: no linear layout ({why})")
    return 0 if p.verdict.proved else 1


def cmd_check(args) -> int:
    text, shape, dtype, bl = _operand(args)
    plan = _read_plan(args.plan)
    surface = origin = None
    if args.base_address is not None:
        base, origin = placement(args.base_address, plan.elem_bytes, _origin(args.origin))
        s = plan.loads[0].surface
        surface = Surface(s.width, s.height, s.pitch, base)
    elif args.origin is not None:
        origin = _origin(args.origin)
    v = bl.check(plan, text, shape=shape, warps="all" if args.all_warps else args.warp,
                 surface=surface, origin=origin)
    if args.json:
        print(json.dumps(v.to_dict()))
    else:
        print(f"{v.status}: {v.reason}")
        if v.counterexample:
            print("counterexample: " + ", ".join(f"{k}={val}" for k, val in
                                                 v.counterexample.items()))
    return 0 if v.proved else 1


def _read_plan(path: str):
    if path == "-":
        try:
            text = sys.stdin.read(MAX_SPEC_BYTES + 1)
        except UnicodeDecodeError:
            raise LayoutError("plan on stdin: not UTF-8 text") from None
        if len(text) > MAX_SPEC_BYTES:
            raise LayoutError(f"plan on stdin: larger than the {MAX_SPEC_BYTES >> 20} MiB limit")
    else:
        text = read_text(path, "plan file")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise LayoutError(f"plan file {path!r}: line {e.lineno}, col {e.colno}: {e.msg}") \
            from None
    except RecursionError:
        raise LayoutError(f"plan file {path!r}: JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise LayoutError(f"plan file {path!r}: expected a JSON object (Plan.to_dict())")
    if "batches" in data:                        # a rank-3 tensor's plan (BatchedPlan.to_dict())
        return BatchedPlan.from_dict(data)
    return Plan.from_dict(data)
