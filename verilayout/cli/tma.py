"""``verilayout tma check``: does a TMA box write land where the shared layout (and a wgmma / tcgen05
descriptor) reads it? The command parses arguments, reads the layout text at the door
(:func:`verilayout.frontends.shared_text.load_operand_layout`), calls
:func:`verilayout.prove.tma.check_ring` and prints.

Exit codes: 0 proved, 1 counterexample or unknown, 2 bad input (one ``error:`` line).
"""
from __future__ import annotations

import argparse
import json
import math
import re

from verilayout.cli.common import int_arg, parse_shape_arg, read_layout_arg, timeout_ms
from verilayout.core.cute.layout import format_cute
from verilayout.core.cute.stages import is_staged, stage_views
from verilayout.errors import LayoutError
from verilayout.frontends.cute_text import looks_like_cute, parse_cute
from verilayout.frontends.names import parse_arch, parse_major, parse_swizzle
from verilayout.frontends.shared_text import load_operand_layout
from verilayout.hw.nvidia.descriptor import operand_bits
from verilayout.hw.nvidia.tma import TensorMap
from verilayout.prove.tma import check_ring, descriptor_reader, layout_reader
from verilayout.prove.wgmma import as_descriptor

_FMT = argparse.RawDescriptionHelpFormatter

CHECK_EPILOG = """\
examples:
  verilayout tma check --box 64x64 --dtype bf16 --swizzle 128 \\
      --smem-layout 'Sw<3,4,3> o smem_ptr[16b](unset) o (_64,_64):(_64,_1)'
  verilayout tma check --box 32x64 --dtype bf16 --swizzle 64 \\
      --smem-layout 'Sw<3,4,3> o smem_ptr[16b](unset) o (_64,_32):(_32,_1)'
  verilayout tma check --box 64x128 --dtype f16 --swizzle 128B --base-align 1024 --shape 128x64 \\
      --smem-layout '#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>'
  verilayout tma check --box 64x128 --dtype f16 --swizzle 128 --json \\
      --smem-layout 'Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_16),(_64,_1),(_1,_4)):((_64,_512),(_1,_0),(_0,_8192))'
  verilayout tma check --box 64x64 --dtype f16 --swizzle 128 \\
      --smem-layout 'Sw<3,4,3> o smem_ptr[16b](unset) o (_64,_64):(_64,_1)' \\
      --desc 0x4000004000010000 --major K --k-blocks 4 --k-step 32
(--box is cuTensorMapEncodeTiled's boxDim, innermost dim first: 64x128 is 64 contiguous elements by
128 rows. The layout's mode 0 is M/N and mode 1 is K (--mn-dim 1 swaps them); TMA's inner dim is the
reader's K (--inner mn for an MN-major tile). A staged CuTe layout (a third mode, the stage) is
checked stage by stage, or --stage N.)
exit codes: 0 proved, 1 counterexample (base, stage, coordinate, both bytes) or unknown, 2 bad input
"""


def _box(text: str, flag: str = "--box") -> tuple[int, ...]:
    """``"64x128"`` -> ``(64, 128)`` (innermost first)."""
    if not re.fullmatch(r"\d+(x\d+)*", str(text).strip()):
        raise LayoutError(f"{flag} {text!r}: expected extents separated by 'x', innermost first, e.g. 64x128")
    return tuple(int(t) for t in str(text).strip().split("x"))


def _swizzle(text: str) -> str:
    """A TMA swizzle mode: ``128`` (bytes, as CUTLASS's ``SW128``), ``128B``, ``SW128``, ``none``,
    or a ``CU_TENSOR_MAP_SWIZZLE_*`` name."""
    t = str(text).strip()
    m = re.fullmatch(r"(?i)(?:sw)?_?(32|64|128)", t)
    try:
        return parse_swizzle(f"{m.group(1)}B" if m else t, "tma")
    except LayoutError as e:
        raise LayoutError(f"--swizzle: {e}") from None


def _tensor_map(args) -> TensorMap:
    box = _box(args.box)
    dims = _box(args.global_dims, "--global-dims") if args.global_dims else box
    return TensorMap(args.dtype, global_dims=dims, box=box, swizzle=_swizzle(args.swizzle))


def _stage_readers(args) -> list[tuple[int | None, object, int]]:
    """``[(stage, layout, byte shift)]``: the layout itself (stage None), or each stage (or the
    ``--stage`` one) of a staged CuTe layout as its tile and its offset from the ring's base."""
    text = read_layout_arg(args.smem_layout)
    staged = None
    if looks_like_cute(text):
        try:
            staged = parse_cute(text, swizzle_units=args.swizzle_units)
        except LayoutError:
            staged = None                       # the loader below says what is wrong
    if staged is None or not is_staged(staged):
        if args.stage is not None:
            raise LayoutError("--stage: --smem-layout has no stage mode (a staged CuTe layout has 3 modes: "
                              "M/N, K, stage)")
        return [(None, text, 0)]
    return [(v.stage, v.layout, v.shift_bytes) for v in stage_views(staged, args.stage, operand_bits(args.dtype))]


def _stage_base(args, shift: int) -> dict:
    """The base a stage's check quantifies over: ``--base`` moved by the stage's shift, or every
    base of ``--base-align`` moved by it (a multiple of the largest power of two dividing both)."""
    if args.base is not None:
        return {"base": args.base + shift}
    align = math.gcd(args.base_align, shift) if shift else args.base_align
    return {"base_align": align}


def _layout_checks(args, tmap: TensorMap, tmo: int) -> list[dict]:
    """One check per stage of ``--smem-layout``: TMA's box against the layout."""
    out = []
    shape = parse_shape_arg(args.shape) if args.shape else None
    for stage, layout, shift in _stage_readers(args):
        loaded = load_operand_layout(layout, dtype=args.dtype, shape=shape, swizzle_units=args.swizzle_units)
        reader = layout_reader(loaded, dtype=args.dtype, mn_dim=args.mn_dim)
        v = check_ring(tmap, reader, inner=args.inner, arch=args.arch, trust_inferred=args.trust_inferred,
                       timeout_ms=tmo, **_stage_base(args, shift))
        out.append({"reader": "layout", "layout": layout if isinstance(layout, str) else format_cute(layout),
                    **({} if stage is None else {"stage": stage, "stage_offset_bytes": shift}), "verdict": v})
    return out


def _desc_ring(args) -> dict:
    """The ring the descriptor is checked on: a staged --smem-layout's stages (each stage's
    descriptor is the first's moved by the stage offset), its ``--stage`` alone, or one buffer."""
    stages = _stage_readers(args) if args.smem_layout is not None else [(None, None, 0)]
    if stages[0][0] is None:
        return {"base": args.base} if args.base is not None else {"base_align": args.base_align}
    if args.stage is not None:
        return _stage_base(args, stages[0][2])
    step = stages[1][2] if len(stages) > 1 else 0
    if any(shift != i * step for i, (_, _, shift) in enumerate(stages)):
        raise LayoutError("--desc with a staged --smem-layout whose stages are not equally spaced: give --stage N")
    base = {"base": args.base} if args.base is not None else {"base_align": args.base_align}
    return {**base, "stages": len(stages), "stage_bytes": step or None}


def _desc_check(args, tmap: TensorMap, tmo: int) -> dict:
    """TMA's box against the wgmma / tcgen05 descriptor reader of ``--desc`` (every stage of a
    staged ``--smem-layout``)."""
    if args.major is None:
        raise LayoutError("--desc needs --major (K or MN)")
    d = as_descriptor(args.desc, args.arch if args.arch else None)
    mn = args.mn if args.mn is not None else _box(args.box)[1 if parse_major(args.major) == "K" else 0]
    reader = descriptor_reader(d, major=parse_major(args.major), dtype=args.dtype, mn=mn // args.mn_blocks,
                               k_blocks=args.k_blocks, k_step=args.k_step, mn_blocks=args.mn_blocks,
                               mn_step=args.mn_step)
    v = check_ring(tmap, reader, inner=args.inner, arch=args.arch, trust_inferred=args.trust_inferred,
                   timeout_ms=tmo, **_desc_ring(args))
    return {"reader": "descriptor", "descriptor": f"{d.value:#018x}", "verdict": v}


def _print(c: dict) -> None:
    v = c["verdict"]
    who = f"stage {c['stage']} (ring base + {c['stage_offset_bytes']:#x} bytes): " if "stage" in c else ""
    what = c["layout"] if c["reader"] == "layout" else f"descriptor {c['descriptor']}"
    print(f"{who}{what}")
    print(f"  {v.status}: {v.reason} [{v.method}]")


def _cmd_check(args) -> int:
    if args.smem_layout is None and args.desc is None:
        raise LayoutError("give --smem-layout (the shared layout the tile is read with), --desc, or both")
    if args.arch is not None:
        args.arch = parse_arch(args.arch)
    if args.base is not None and args.base < 0:
        raise LayoutError(f"--base {args.base}: expected a byte address >= 0")
    tmap = _tensor_map(args)
    tmo = timeout_ms(args.timeout)
    checks = _layout_checks(args, tmap, tmo) if args.smem_layout is not None else []
    if args.desc is not None:
        checks.append(_desc_check(args, tmap, tmo))
    if args.json:
        print(json.dumps([{**{k: x for k, x in c.items() if k != "verdict"}, **c["verdict"].to_dict()}
                          for c in checks]))
    else:
        for c in checks:
            _print(c)
    return 0 if all(c["verdict"].proved for c in checks) else 1


def _add_check(sub) -> None:
    """``verilayout tma check``: its options and examples."""
    p = sub.add_parser(
        "check", help="prove a TMA box write lands where the shared layout (and a descriptor) reads it",
        description="Prove, for every buffer base of the stated alignment, that each element TMA "
        "(cp.async.bulk.tensor, with the tensor map's swizzle on the absolute shared address) writes "
        "is at the byte the shared layout reads it from, and, with --desc, at the byte the wgmma / "
        "tcgen05 descriptor reads; otherwise print the base, the stage, the coordinate and both "
        "bytes. The tensor map's limits (cuTensorMapEncodeTiled, measured driver rules) are checked "
        "first.", epilog=CHECK_EPILOG, formatter_class=_FMT)
    p.add_argument("--box", required=True, metavar="AxB", help="the TMA box, innermost dim first (64x128: "
                   "64 contiguous elements, 128 rows)")
    p.add_argument("--dtype", required=True, help="element type (f16, bf16, tf32, e4m3, e5m2, s8, u8, "
                   "f32, ...): the tensor map's and the reader's")
    p.add_argument("--swizzle", default="none", help="TMA swizzle: none (default), 32, 64, 128 (bytes; "
                   "also 32B/64B/128B, SW128, CU_TENSOR_MAP_SWIZZLE_128B, 128B_ATOM_32B, ...)")
    p.add_argument("--global-dims", metavar="AxB", help="the global tensor's extents, innermost first "
                   "(default: the box)")
    p.add_argument("--smem-layout", metavar="LAYOUT", help="the shared layout the tile is read with: CuTe "
                   "(also staged: a third mode, the stage), Triton #ttg.nvmma_shared (with --shape) or "
                   "a !ttg.memdesc type, or @FILE")
    p.add_argument("--shape", metavar="AxB", help="tile shape (rows x cols) for a Triton attribute")
    p.add_argument("--swizzle-units", choices=["bytes", "elements"],
                   help="a bare CuTe 'Swizzle<B,M,S> o L': does the swizzle act on byte addresses or "
                   "element offsets")
    p.add_argument("--mn-dim", type=int, choices=[0, 1], default=0,
                   help="which layout mode is M/N (default 0; the other is K)")
    p.add_argument("--inner", choices=["k", "mn"], help="the reader coordinate that is TMA's dim 0 "
                   "(default: k; mn for an MN-major descriptor)")
    p.add_argument("--stage", type=int_arg, metavar="N", help="a staged --smem-layout: which stage "
                   "(default: every stage, each reported)")
    p.add_argument("--desc", metavar="DESC", help="also prove this wgmma (or --arch sm_100 tcgen05) "
                   "descriptor reads what TMA wrote (its start address relative to the stage; over every "
                   "stage of a staged --smem-layout, or its --stage)")
    p.add_argument("--major", help="the descriptor's operand majorness: K or MN")
    p.add_argument("--mn", type=int_arg, metavar="ROWS", help="M/N rows the descriptors read in all "
                   "(default: the box's M/N extent)")
    p.add_argument("--k-blocks", type=int_arg, default=1, metavar="N", help="K-blocks read (default 1)")
    p.add_argument("--k-step", type=int_arg, default=0, metavar="BYTES", help="start address step per K-block")
    p.add_argument("--mn-blocks", type=int_arg, default=1, metavar="N", help="M/N blocks read (default 1)")
    p.add_argument("--mn-step", type=int_arg, default=0, metavar="BYTES", help="start address step per M/N block")
    p.add_argument("--base-align", type=int_arg, default=128, metavar="BYTES",
                   help="prove for every buffer base that is a multiple of this (default 128, TMA's "
                   "destination alignment)")
    p.add_argument("--base", type=int_arg, metavar="BYTES", help="one concrete buffer base instead")
    p.add_argument("--arch", help="sm_90 (default) or sm_100: the measured per-architecture TMA rules")
    p.add_argument("--trust-inferred", action="store_true",
                   help="prove under the inferred write patterns the verdict names")
    p.add_argument("--timeout", type=float, default=20.0, metavar="SECONDS",
                   help="solver seconds per proof; past it the verdict is 'unknown' (default 20)")
    p.add_argument("--json", action="store_true", help="print JSON (one object per check)")
    p.set_defaults(func=_cmd_check)


def register(subparsers) -> None:
    """Add the ``tma`` command group (``check``) to argparse subparsers."""
    g = subparsers.add_parser(
        "tma", help="TMA (cp.async.bulk.tensor) box writes against shared layouts and descriptors",
        description="TMA questions on the command line: does the box a tensor map writes land where "
        "the shared layout and the MMA descriptors read it?", epilog=CHECK_EPILOG, formatter_class=_FMT)
    sub = g.add_subparsers(dest="tma_command", metavar="SUBCOMMAND")
    g.set_defaults(func=lambda a: (g.print_help(), 2)[1])
    _add_check(sub)
