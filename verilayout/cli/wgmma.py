"""``verilayout wgmma ...``: register fragments, descriptors, proofs, synthesis.

The command holds no logic: it parses arguments, calls :mod:`verilayout.wgmma`
and prints. Exit codes: 0 proved / done, 1 counterexample or unknown, 2 bad input.
"""
from __future__ import annotations

import argparse
import json

from verilayout.cli.common import int_arg, parse_shape_arg, read_layout_arg, timeout_ms
from verilayout.core.cute.layout import format_cute
from verilayout.core.cute.stages import is_staged, stage_views
from verilayout.errors import LayoutError
from verilayout.frontends.cute_text import looks_like_cute, parse_cute
from verilayout.hw.nvidia.descriptor import decode, encode, field_findings, operand_bits, operand_k
from verilayout.frontends.shared_text import load_operand_layout
from verilayout.frontends.names import parse_major, parse_shape, parse_swizzle
from verilayout.hw.nvidia.wgmma import fragment
from verilayout.prove.wgmma import as_descriptor, intended_tile
from verilayout.synth.descriptor import derive_descriptor, synth
from verilayout.wgmma import check_descriptor


_FMT = argparse.RawDescriptionHelpFormatter

GROUP_EPILOG = """\
examples:
  verilayout wgmma fragment m64n32k16 --operand D --dtype f16 --acc f32
  verilayout wgmma decode 0x4000004000010040
  verilayout wgmma encode --start 0x400 --lbo 16 --sbo 1024 --swizzle 128B
  verilayout wgmma verify --desc 0x4000004000010040 --base-address 0x400 --dtype f16 --major K \\
      --layout 'Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_8),(_64,_1)):((_64,_512),(_1,_0))'
  verilayout wgmma desc --dtype f16 --major K --k-block all \\
      --layout 'Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_8),(_64,_1)):((_64,_512),(_1,_0))'
  verilayout wgmma desc --dtype f16 --major K --stage 1 \\
      --layout 'Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_16),(_64,_1),(_1,_4)):((_64,_512),(_1,_0),(_0,_8192))'
  verilayout wgmma synth --dtype bf16 --major MN --mn 64 --k 64
exit codes: 0 proved / done, 1 counterexample or unknown, 2 bad input
"""


# ----- fragment -----------------------------------------------------------------------------

def _cmd_fragment(args) -> int:
    f = fragment(parse_shape(args.shape), args.operand, args.dtype, acc=args.acc)
    if args.json:
        print(json.dumps(f.to_dict()))
        return 0
    name = f.element_name
    print(f"wgmma.{args.shape} operand {f.operand}: {f.dtype} x {f.dtype} -> {f.acc}; "
          f"{f.rows}x{f.cols} over 128 threads (4 warps)")
    print(f"per thread: {f.registers} elements {name}0..{name}{f.registers - 1} in "
          f"{f.registers // f.elems_per_reg} {f.reg_type} registers")
    print("bases (register = element index; out dims dim0 = row, dim1 = column):")
    for dim, b in f.layout.bases.items():
        print(f"  {dim}: {b}")
    if f.layout.out_dims["dim1"] != f.cols:
        print(f"  (register padded to {f.layout.in_dims['register']}: elements "
              f">= {f.registers} do not exist; N = {f.cols} is not a power of two)")
    rows = f.rows if args.grid == "full" else 8
    cols = f.cols if args.grid == "full" else min(f.cols, 16)
    table = f.table()
    cells = [[f"T{t}:{name}{r}" for t, r in row[:cols]] for row in table[:rows]]
    width = max(len(c) for row in cells for c in row)
    print(f"owner of each element (rows 0..{rows - 1}, cols 0..{cols - 1}"
          + ("" if args.grid == "full" else "; --grid full for all") + "):")
    print("     " + " ".join(str(c).rjust(width) for c in range(cols)))
    for r, row in enumerate(cells):
        print(f"{r:>4} " + " ".join(c.rjust(width) for c in row))
    return 0


# ----- decode / encode ------------------------------------------------------------------------

def _print_descriptor(d, findings=()) -> None:
    print(f"value          {d.value:#018x}  ({d.arch})")
    print(f"start address  {d.start_address:#x} ({d.start_address} bytes; field {d.start_field})")
    print(f"LBO            {d.lbo} bytes (field {d.lbo_field})")
    print(f"SBO            {d.sbo} bytes (field {d.sbo_field})")
    print(f"base offset    {d.base_offset}")
    print(f"swizzle        {d.swizzle} (field {d.layout_type})")
    if d.arch == "sm_100":
        print(f"LBO mode       {d.lbo_mode} ({'absolute' if d.lbo_mode else 'relative'})")
    for f in findings:
        print(f"finding        {f.rule}: {f.message}")


def _cmd_decode(args) -> int:
    if len(args.value) > 64:
        raise LayoutError(f"descriptor of {len(args.value)} characters: a 64-bit descriptor is at most "
                          "16 hex digits (0x4000004000010040) or 20 decimal digits")
    d = decode(args.value, args.arch)
    findings = field_findings(d)
    if args.json:
        print(json.dumps({**d.to_dict(), "findings": [f.to_dict() for f in findings]}))
    else:
        _print_descriptor(d, findings)
    return 1 if findings else 0


def _cmd_encode(args) -> int:
    d = encode(start_address=args.start, lbo=args.lbo, sbo=args.sbo,
               swizzle=parse_swizzle(args.swizzle, "descriptor"), base_offset=args.base_offset, arch=args.arch,
               lbo_mode=args.lbo_mode)
    if args.json:
        print(json.dumps(d.to_dict()))
    else:
        _print_descriptor(d)
    return 0


# ----- verify / desc --------------------------------------------------------------------------

def _layout_text(args) -> str:
    return read_layout_arg(args.layout)


def _shape(args):
    if not args.shape:
        return None
    return parse_shape_arg(args.shape)


def _common(args) -> dict:
    return dict(dtype=args.dtype, major=parse_major(args.major), base_address=args.base_address, mn=args.mn,
                mn_block=args.mn_block, mn_dim=args.mn_dim, shape=_shape(args),
                swizzle_units=args.swizzle_units, timeout_ms=timeout_ms(args.timeout))


def _print_verdict(v) -> None:
    print(f"{v.status}: {v.reason} [{v.method}]")
    if v.counterexample and "mn" in v.counterexample:
        c = v.counterexample
        print(f"  coordinate      (mn={c['mn']}, k={c['k']}); tile element ({c['tile_mn']}, "
              f"{c['tile_k']})")
        print(f"  descriptor reads  byte {c['descriptor_address']:#x}"
              + (f" bit {c['descriptor_bit']}" if "descriptor_bit" in c else ""))
        print(f"  layout put it at  byte {c['layout_address']:#x}"
              + (f" bit {c['layout_bit']}" if "layout_bit" in c else ""))


def _stages(args, text: str) -> list[tuple[int | None, object, int]]:
    """``[(stage, layout, base address)]``: one entry ``(None, text, --base-address)`` for a layout
    without a stage mode; for a staged CuTe layout (3 modes: M/N, K, stage) each stage (or the
    ``--stage`` one) as its tile layout at the base address moved by the stage's offset."""
    staged = None
    if looks_like_cute(text):
        try:
            staged = parse_cute(text, swizzle_units=args.swizzle_units)
        except LayoutError:
            staged = None                      # the loader below says what is wrong with it
    if staged is None or not is_staged(staged):
        if args.stage is not None:
            raise LayoutError("--stage: the layout has no stage mode (a staged CuTe layout has 3 modes: "
                              "M/N, K, stage)")
        return [(None, text, args.base_address)]
    return [(v.stage, v.layout, args.base_address + v.shift_bytes)
            for v in stage_views(staged, args.stage, operand_bits(args.dtype))]


def _moved(d, shift: int):
    """Descriptor ``d`` with its start address moved by ``shift`` bytes (a later stage's copy)."""
    if not shift:
        return d
    return encode(start_address=d.start_address + shift, lbo=d.lbo, sbo=d.sbo, swizzle=d.swizzle,
                  base_offset=d.base_offset, arch=d.arch, lbo_mode=getattr(d, "lbo_mode", 0))


def _cmd_verify(args) -> int:
    d0 = as_descriptor(args.desc, args.arch)
    stages = _stages(args, _layout_text(args))
    common = _common(args)
    results = []
    for stage, layout, base in stages:
        # a stage's descriptor is the first stage's moved by the stage offset (as a ring advances it)
        d = _moved(d0, base - stages[0][2]) if args.stage is None else d0
        common["base_address"] = base
        try:
            v = check_descriptor(d, layout, k_block=args.k_block, **common)
        except OverflowError:
            raise LayoutError("--layout: its offsets do not fit 64 bits (a stride or size far beyond "
                              "any shared memory, e.g. a stride of 2^62)") from None
        results.append((stage, layout, base, d, v))
    if args.json:
        out = [{"descriptor": d.to_dict(), "k_block": args.k_block, **v.to_dict(),
                **({} if st is None else {"stage": st, "layout": format_cute(lay), "base_address": b})}
               for st, lay, b, d, v in results]
        print(json.dumps(out[0] if len(out) == 1 and results[0][0] is None else out))
    else:
        for st, lay, b, d, v in results:
            if st is not None:
                print(f"stage {st}: {format_cute(lay)} at base address {b:#x}")
            print(f"descriptor {d}")
            _print_verdict(v)
    return 0 if all(r[4].proved for r in results) else 1


def _k_blocks(args, layout, door: dict, base: int) -> list[int]:
    """The K-blocks ``--k-block`` names (``all``: every K-block of the tile)."""
    if args.k_block == "all":
        tile = intended_tile(load_operand_layout(layout, **door), dtype=args.dtype, base_address=base,
                             mn_dim=args.mn_dim)
        return list(range(max(1, tile.k_extent // operand_k(args.dtype))))
    try:
        return [int(str(args.k_block).replace("_", ""), 0)]
    except ValueError:
        raise LayoutError(f"--k-block {args.k_block!r}: expected a K-block number or 'all'") from None


def _cmd_desc(args) -> int:
    common = _common(args)
    door = dict(dtype=args.dtype, shape=common.pop("shape"), swizzle_units=common.pop("swizzle_units"))
    plans = []
    for stage, layout, base in _stages(args, _layout_text(args)):
        blocks = _k_blocks(args, layout, door, base)
        loaded = load_operand_layout(layout, **door)
        common["base_address"] = base
        try:
            plans += [(stage, derive_descriptor(loaded, k_block=kb, arch=args.arch, **common)) for kb in blocks]
        except LayoutError as e:
            if not str(e).startswith(f"no {args.arch} descriptor reads"):
                raise
            print(f"counterexample: {'' if stage is None else f'stage {stage}: '}{e}")  # a finding
            return 1
    if args.json:
        out = [{**p.to_dict(), **({} if st is None else {"stage": st})} for st, p in plans]
        print(json.dumps(out if len(out) > 1 else out[0]))
        return 0
    for st, p in plans:
        d = p.descriptor
        print(f"{'' if st is None else f'stage {st} '}K-block {p.block.k_block}: {d.value:#018x}  "
              f"start {d.start_address:#x}  "
              f"LBO {d.lbo} B (field {d.lbo_field})  SBO {d.sbo} B (field {d.sbo_field})  "
              f"base offset {d.base_offset}  swizzle {d.swizzle}  [{p.verdict.status}, "
              f"{p.verdict.method}]")
    return 0


def _cmd_synth(args) -> int:
    p = synth(dtype=args.dtype, major=parse_major(args.major), mn=args.mn, k=args.k, arch=args.arch,
              base_address=args.base_address)
    if args.json:
        print(json.dumps(p.to_dict()))
        return 0
    print(f"layout       {p.layout_text}")
    print(f"swizzle      {p.swizzle} ({p.major}-major {p.dtype}, {p.mn}x{p.k} tile)")
    step = f"{p.k_step_bytes} bytes" if p.k_step_bytes is not None else \
        "not constant: " + ", ".join(hex(s) for s in p.k_block_starts)
    print(f"K-block step {step} (start address of K-block i = K-block 0 + i * step)")
    for i, d in enumerate(p.descriptors):
        print(f"K-block {i}: {d.value:#018x}  start {d.start_address:#x}  LBO field "
              f"{d.lbo_field}  SBO field {d.sbo_field}  base offset {d.base_offset}")
    print(f"{p.verdict.status}: {p.verdict.reason} [{p.verdict.method}]")
    return 0


# ----- argparse -------------------------------------------------------------------------------

def _operand_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--layout", required=True, metavar="TEXT",
                   help="intended smem layout: CuTe text, Triton MLIR (#ttg.nvmma_shared with "
                   "--shape, or a !ttg.memdesc type), or @FILE")
    p.add_argument("--dtype", required=True, help="element type as PTX spells it: f16, bf16, "
                   "tf32, e4m3, e5m2, s8, u8, b1; sm_100 also e2m1 (packed), e2m1_padded, e3m2, e2m3")
    p.add_argument("--major", required=True, help="K or MN (M/N-major = transposed)")
    p.add_argument("--base-address", type=int_arg, default=0, metavar="BYTES",
                   help="shared-memory byte address where the layout's element offset 0 lies "
                   "(default 0)")
    p.add_argument("--mn", type=int_arg, metavar="ROWS", help="M/N rows one wgmma reads (default: "
                   "the tile's MN extent)")
    p.add_argument("--mn-block", type=int_arg, default=0, metavar="I",
                   help="which block of --mn rows of a wider tile (default 0)")
    p.add_argument("--mn-dim", type=int, choices=[0, 1], default=0,
                   help="which layout dim is M/N (default 0; 1 for Triton [K, N] B operands)")
    p.add_argument("--shape", metavar="AxB", help="tile shape for a Triton attribute, e.g. 64x64")
    p.add_argument("--swizzle-units", choices=["bytes", "elements"],
                   help="for a bare CuTe 'Swizzle<B,M,S> o L': the swizzle acts on byte "
                   "addresses (as smem_ptr) or element offsets")
    p.add_argument("--arch", choices=["sm_90", "sm_100"], default="sm_90",
                   help="descriptor format (default sm_90 wgmma; sm_100 tcgen05)")
    p.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS",
                   help="solver seconds per proof; past it the verdict is 'unknown' (default 10)")
    p.add_argument("--stage", type=int_arg, metavar="N",
                   help="a staged CuTe layout (3 modes: M/N, K, stage, as sm90 collectives declare "
                   "them): which stage (default: every stage, each reported; verify moves the "
                   "descriptor's start address by each stage's offset)")
    p.add_argument("--json", action="store_true", help="print JSON")


def _add_fragment(sub) -> None:
    """``verilayout wgmma fragment``: its options and examples."""
    p = sub.add_parser("fragment", help="a register fragment (A or D) as a linear layout",
                       formatter_class=_FMT, description="Print the wgmma register fragment of "
                       "operand A or the accumulator D: bases of (register, lane, warp) -> (row, "
                       "col) and who holds each element (PTX 9.7.15.5.1.1).",
                       epilog="examples:\n"
                       "  verilayout wgmma fragment m64n32k16 --operand D --dtype f16 --acc f32\n"
                       "  verilayout wgmma fragment m64n8k32 --operand A --dtype e4m3 --json\n")
    p.add_argument("shape", help="instruction shape m64nNkK, e.g. m64n32k16")
    p.add_argument("--operand", default="D", help="A or D (default D)")
    p.add_argument("--dtype", required=True, help="multiplicand type: f16, bf16, tf32, e4m3, "
                   "e5m2, s8, u8, b1")
    p.add_argument("--acc", help="accumulator type for D: f16, f32, s32 (default f32, or s32 "
                   "for integer types)")
    p.add_argument("--grid", choices=["head", "full"], default="head",
                   help="owner grid: first 8 rows x 16 cols (head, default) or all")
    p.add_argument("--json", action="store_true", help="print JSON (bases and sizes)")
    p.set_defaults(func=_cmd_fragment)


def _add_decode(sub) -> None:
    """``verilayout wgmma decode``: its options and examples."""
    p = sub.add_parser("decode", help="split a 64-bit descriptor into fields",
                       formatter_class=_FMT, description="Decode a shared-memory matrix "
                       "descriptor and list the contract rules its fields break.",
                       epilog="examples:\n  verilayout wgmma decode 0x4000004000010040\n"
                       "  verilayout wgmma decode 0x4000404000010040 --arch sm_100 --json\n"
                       "exit code 1 when a field breaks a rule\n")
    p.add_argument("value", help="the descriptor, e.g. 0x4000004000010040")
    p.add_argument("--arch", choices=["sm_90", "sm_100"], default="sm_90",
                   help="sm_90 wgmma (default) or sm_100 tcgen05 format")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_decode)


def _add_encode(sub) -> None:
    """``verilayout wgmma encode``: its options and examples."""
    p = sub.add_parser("encode", help="build a descriptor from byte values",
                       formatter_class=_FMT, description="Encode start address, LBO and SBO "
                       "(bytes, multiples of 16) and the swizzle mode into a 64-bit descriptor. "
                       "Misaligned or oversized values are errors.",
                       epilog="examples:\n"
                       "  verilayout wgmma encode --start 0x400 --lbo 16 --sbo 1024 --swizzle 128B\n"
                       "  verilayout wgmma encode --lbo 256 --sbo 128 --swizzle none --json\n")
    p.add_argument("--start", type=int_arg, default=0, metavar="BYTES", help="start address (bytes)")
    p.add_argument("--lbo", type=int_arg, default=0, metavar="BYTES",
                   help="leading dimension byte offset (bytes)")
    p.add_argument("--sbo", type=int_arg, default=0, metavar="BYTES",
                   help="stride dimension byte offset (bytes)")
    p.add_argument("--swizzle", default="none", help="none, 32B, 64B, 128B (sm_100 also "
                   "128B_base32B)")
    p.add_argument("--base-offset", type=int_arg, default=0, metavar="N", help="base offset 0..7")
    p.add_argument("--arch", choices=["sm_90", "sm_100"], default="sm_90")
    p.add_argument("--lbo-mode", type=int_arg, default=0, metavar="0|1",
                   help="sm_100 only: 1 = absolute LBO address")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_encode)


def _add_verify(sub) -> None:
    """``verilayout wgmma verify``: its options and examples."""
    p = sub.add_parser("verify", help="prove a descriptor reads the bytes a layout wrote",
                       formatter_class=_FMT, description="Prove that for every (mn, k) of one "
                       "wgmma K-block the descriptor addresses the byte where the layout put "
                       "that element; otherwise print a coordinate and both addresses.",
                       epilog="examples:\n"
                       "  verilayout wgmma verify --desc 0x4000004000010040 --base-address 0x400 --dtype f16 --major K \\\n"
                       "      --layout 'Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_8),(_64,_1)):((_64,_512),(_1,_0))'\n"
                       "  verilayout wgmma verify --desc 0x40000040000000c0 --k-block 1 --dtype f16 \\\n"
                       "      --major MN --mn-dim 1 --shape 64x64 --base-address 0x400 \\\n"
                       "      --layout '#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = "
                       "false, elementBitWidth = 16}>'\n"
                       "(--mn-dim 1: the layout's dim 1 is N, as in Triton's [K, N] B operand)\n")
    p.add_argument("--desc", required=True, help="the 64-bit descriptor (hex or decimal)")
    p.add_argument("--k-block", type=int_arg, default=0, metavar="N",
                   help="which wgmma K-block of the tile (default 0)")
    _operand_options(p)
    p.set_defaults(func=_cmd_verify)


def _add_desc(sub) -> None:
    """``verilayout wgmma desc``: its options and examples."""
    p = sub.add_parser("desc", help="derive the descriptor for a layout (proved)",
                       formatter_class=_FMT, description="Derive the descriptor (fields and "
                       "64-bit value) that reads a layout's K-block, including dynamic strides "
                       "and bases that are not 1024-aligned; every answer is proved.",
                       epilog="examples:\n"
                       "  verilayout wgmma desc --dtype f16 --major K --k-block all \\\n"
                       "      --layout 'Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_8),(_64,_1)):((_64,_512),(_1,_0))'\n"
                       "  verilayout wgmma desc --dtype bf16 --major MN --base-address 0x480 \\\n"
                       "      --shape 64x64 --layout '#ttg.nvmma_shared<{swizzlingByteWidth = 128, "
                       "transposed = true, elementBitWidth = 16}>'\n"
                       "  verilayout wgmma desc --dtype f16 --major K --k-block all \\\n"
                       "      --layout 'Sw<3,4,3> o smem_ptr[16b](unset) o "
                       "((_8,_16),(_64,_1),(_1,_4)):((_64,_512),(_1,_0),(_0,_8192))'\n"
                       "(a staged layout, mode 2 the stage: every stage, or --stage N)\n")
    p.add_argument("--k-block", default="0", metavar="N|all",
                   help="which wgmma K-block, or 'all' (default 0)")
    _operand_options(p)
    p.set_defaults(func=_cmd_desc)


def _add_synth(sub) -> None:
    """``verilayout wgmma synth``: its options and examples."""
    p = sub.add_parser("synth", help="choose smem layout, descriptors and K-block step",
                       formatter_class=_FMT, description="Choose the shared-memory layout of an "
                       "mn x k operand tile (the widest swizzle whose atom fits), its descriptor "
                       "for every K-block and the start-address step; all proved.",
                       epilog="examples:\n"
                       "  verilayout wgmma synth --dtype bf16 --major MN --mn 64 --k 64\n"
                       "  verilayout wgmma synth --dtype e4m3 --major K --mn 128 --k 128 --json\n")
    p.add_argument("--dtype", required=True, help="f16, bf16, tf32, e4m3, e5m2, s8, u8, b1")
    p.add_argument("--major", required=True, help="K or MN")
    p.add_argument("--mn", type=int_arg, required=True, help="rows along M/N (8..256)")
    p.add_argument("--k", type=int_arg, required=True, help="columns along K (a multiple of the "
                   "instruction's K)")
    p.add_argument("--base-address", type=int_arg, default=0, metavar="BYTES")
    p.add_argument("--arch", choices=["sm_90", "sm_100"], default="sm_90")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_synth)


def register(subparsers) -> None:
    """Add the ``wgmma`` command group to a ``argparse`` subparsers object."""
    g = subparsers.add_parser(
        "wgmma", help="wgmma fragments, descriptors: decode, encode, verify, derive, synthesize",
        description="Hopper wgmma: register fragments, shared-memory descriptors, the proof that "
        "a descriptor reads the bytes a layout wrote, and layouts/descriptors chosen for a tile.",
        epilog=GROUP_EPILOG, formatter_class=_FMT)
    sub = g.add_subparsers(dest="wgmma_command", metavar="SUBCOMMAND")
    g.set_defaults(func=lambda a: (g.print_help(), 2)[1])
    for add in (_add_fragment, _add_decode, _add_encode, _add_verify, _add_desc, _add_synth):
        add(sub)
