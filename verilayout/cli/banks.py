"""``verilayout banks`` and ``verilayout swizzle synth|table``: thin doors onto the library.

The commands parse arguments, call :mod:`verilayout.banks` /
:mod:`verilayout.synth.swizzle` / :mod:`verilayout.report_swizzle_table` and print.
Exit codes: 0 conflict-free / optimality proved, 1 a conflict was found (or the
proof is unknown), 2 bad input (one line ``error: ...`` on stderr).
"""
from __future__ import annotations

import argparse
import json

from verilayout.banks import as_shared, check_banks, load_register, load_shared
from verilayout.cli.options import add_timeout_option
from verilayout.cli.common import DTYPE_BITS, int_arg, timeout_ms, parse_shape_arg, parse_type_arg, read_layout_arg
from verilayout.core.linear_layout import LinearLayout
from verilayout.errors import LayoutError
from verilayout.core.cute.layout import format_cute
from verilayout.core.cute.stages import is_staged, stage_views
from verilayout.frontends.cute_text import looks_like_cute, parse_cute, parse_cute_tv
from verilayout.frontends.names import find_tensor_type, read_lds_instruction
from verilayout.frontends.triton import parse
from verilayout.frontends.shared_text import memdesc_view_shapes
from verilayout.hw.nvidia.banks import placed
from verilayout.prove.banks import embed_in_allocation, check_lds_banks
from verilayout.report.svg import layout_svg
from verilayout.report.swizzle_table import swizzle_table, swizzle_table_markdown
from verilayout.synth.swizzle import synthesize

_FMT = argparse.RawDescriptionHelpFormatter

BANKS_EPILOG = """\
examples:
  verilayout banks -t 'tensor<64x64xf16>' \\
      --reg '#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>' \\
      --smem '#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>'
  verilayout banks -t 'tensor<16x32xf32>' --json \\
      --reg '#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], order = [0, 1]}>' \\
      --smem '#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>'
  verilayout banks -t 'tensor<16x32xf32>' --smem '(16,32):(33,1)' \\
      --reg '#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], order = [0, 1]}>'
  verilayout banks -t 'tensor<16x16xf16>' --instr ldmatrix.x4 --reg @a_operand.mlir --smem @smem.mlir
  verilayout banks -t 'tensor<32x16xf16>' --instr ldmatrix.x4 --smem 'Sw<1,3,3> o _0 o (_32,_16):(_16,_1)' \\
      --reg '((_4,_8,_2,_2),((_2,_2,_2),_1)):((_64,_1,_16,_0),((_32,_8,_256),_0))'
  verilayout banks -t 'tensor<64x64xf16>' --stage 1 \\
      --reg '#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>' \\
      --smem 'Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_8),(_64,_1),(_1,_2)):((_64,_512),(_1,_0),(_0,_4096))'
  verilayout banks --target gfx950 -t 'tensor<64x64xf16>' --instr ds_read_b128 \\
      --reg '#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [1, 1], order = [1, 0]}>' \\
      --smem '#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>'
exit codes: 0 conflict-free (proved), 1 bank conflict (witness printed) or unknown, 2 bad input
"""

SWIZZLE_EPILOG = """\
examples:
  verilayout swizzle synth -t 'tensor<64x64xf16>' \\
      --write '#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>' \\
      --read '#ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>'
  verilayout swizzle table            # wgmma swizzle mode x element width x access pattern
exit codes: 0 optimality proved / done, 1 not proved, 2 bad input
"""


def _type(args, reg_text: str | None = None) -> tuple[list[int] | None, int | None]:
    """Shape and element width from -t, else --shape, else the ``tensor<...>`` type of --reg."""
    if getattr(args, "shape", None):
        if args.type:
            raise LayoutError("give either -t/--type or --shape, not both")
        return parse_shape_arg(args.shape), None
    if args.type:
        shape, dtype = parse_type_arg(args.type)
        return shape, DTYPE_BITS[dtype]
    t = find_tensor_type(reg_text or "")
    if t is not None and t.elem in DTYPE_BITS:
        return list(t.shape), DTYPE_BITS[t.elem]
    return None, None


def _register(text: str, shape, name: str | None) -> LinearLayout:
    if name is None and looks_like_cute(text):
        if shape is None:
            raise LayoutError("--reg is a CuTe thread-value layout: give its tile with -t/--shape "
                              "(e.g. -t 'tensor<16x16xf16>'; the TV layout's index runs over it column-major)")
        return parse_cute_tv(text, shape)
    if name is None:
        return load_register(text, shape)
    lay = parse(text, shape=shape, name=name)
    if not isinstance(lay, LinearLayout) or "lane" not in lay.in_dim_names:
        raise LayoutError(f"--reg with --name {name}: expected a distributed layout "
                          "(register, lane, warp -> dims)")
    return lay


def _text(arg: str) -> str:
    return read_layout_arg(arg)


def _elem_bits(args, from_type: int | None) -> int:
    bits = args.bits if args.bits is not None else from_type
    if bits is None:
        raise LayoutError("give the element type with -t/--type (e.g. 'tensor<64x64xf16>'), --bits, "
                          "or a --reg tensor type")
    if from_type is not None and args.bits is not None and args.bits != from_type:
        raise LayoutError(f"--bits {args.bits} disagrees with the element type of -t ({from_type} bits)")
    return bits


def _cmd_banks(args) -> int:
    reg_text = _text(args.reg)
    shape, tbits = _type(args, reg_text)
    bits = _elem_bits(args, tbits)
    reg = _register(reg_text, shape, args.name)
    smem_text = _text(args.smem)
    view = memdesc_view_shapes(smem_text)
    if view is not None:
        # a view into a larger allocation: its elements sit where the allocation's layout puts them
        if shape is not None and list(shape) != view[0]:
            raise LayoutError(f"--smem is a view of shape {view[0]}, the register tensor is {list(shape)}")
        smem = load_shared(smem_text, None, bits)
        reg = embed_in_allocation(reg, view[1])
    else:
        staged = _staged_cute(args, smem_text, bits)
        if staged is not None:
            return _staged_banks(args, reg, staged, bits)
        if args.stage is not None:
            raise LayoutError("--stage: --smem has no stage mode (a staged CuTe layout has 3 modes)")
        if args.swizzle_units:
            if smem_text.lstrip().startswith(("#", "!", "tensor", "module")):
                raise LayoutError("--swizzle-units is for a CuTe layout given to --smem")
            smem = as_shared(parse_cute(smem_text, swizzle_units=args.swizzle_units, elem_bits=bits), bits)
        else:
            smem = load_shared(smem_text, shape, bits)
    if args.base_address:
        smem = placed(smem, args.base_address, bits)
    if args.target != "nvidia":
        return _amd_banks(args, reg, smem, bits)
    rep = _nvidia(args, reg, smem, bits)
    print(json.dumps(rep.to_dict()) if args.json else rep.summary())
    if args.svg:
        _write_svg(args.svg, smem, rep, bits, args.banks)
    return 0 if rep.conflict_free else 1


def _nvidia(args, reg, smem, bits: int):
    return check_banks(reg, smem, elem_bits=bits, instruction=args.instr, num_banks=args.banks,
                       store=args.store, timeout_ms=timeout_ms(args.timeout), witness_size=32)


def _staged_cute(args, text: str, bits: int):
    """The parsed CuTe --smem when it has a stage mode (3 top-level modes), else None."""
    if not looks_like_cute(text):
        return None
    try:
        lay = parse_cute(text, swizzle_units=args.swizzle_units, elem_bits=bits)
    except LayoutError:
        return None                            # the ordinary loader says what is wrong
    return lay if is_staged(lay) else None


def _staged_banks(args, reg, staged, bits: int) -> int:
    """Each stage (or ``--stage N``) of a staged --smem: its tile at the base moved by the stage's
    offset, reported one by one; exit 0 only when every stage is conflict-free."""
    if args.target != "nvidia":
        raise LayoutError("--target gfx942/gfx950 takes one shared layout; give one stage's tile")
    if args.svg:
        raise LayoutError("--svg draws one shared layout; with a staged --smem pick nothing else than the "
                          "tile (drop the stage mode)")
    reports = []
    for v in stage_views(staged, args.stage, bits):
        smem = placed(as_shared(v.layout, bits), args.base_address + v.shift_bytes, bits)
        reports.append((v, _nvidia(args, reg, smem, bits)))
    if args.json:
        print(json.dumps([{"stage": v.stage, "layout": format_cute(v.layout),
                           "base_address": args.base_address + v.shift_bytes, **r.to_dict()} for v, r in reports]))
    else:
        for v, r in reports:
            print(f"stage {v.stage} ({format_cute(v.layout)} at byte {args.base_address + v.shift_bytes:#x}):")
            print("  " + r.summary().replace("\n", "\n  "))
    return 0 if all(r.conflict_free for _, r in reports) else 1


def _amd_banks(args, reg, smem, bits: int) -> int:
    """``--target gfx942|gfx950``: the LDS model (phase groups of the AMD target)."""
    instr = args.instr
    if instr != "auto" and not instr.lower().startswith("ds_"):
        raise LayoutError(f"--instr {instr!r} with --target {args.target}: give auto or an LDS instruction "
                          "such as ds_read_b128, ds_write_b64, ds_read_b64_tr_b16")
    rep = check_lds_banks(reg, smem, elem_bits=bits, target=args.target, instruction=read_lds_instruction(instr),
                          store=args.store)
    print(json.dumps(rep.to_dict()) if args.json else rep.summary())
    if args.svg:
        title = ("conflict-free" if rep.conflict_free else
                 f"{rep.wavefronts} cycles (ideal {rep.ideal}) on {rep.target}")
        _draw(args.svg, smem, bits, rep.num_banks, [], title)
    return 0 if rep.conflict_free else 1


def svg_title(conflict_free, wavefronts, ideal) -> str:
    """The SVG caption: ``unknown`` (not ``None``) when the solver gave up.

    >>> svg_title(None, None, 2)
    'unknown wavefronts (ideal 2): the solver gave up'
    >>> svg_title(False, 4, 2)
    '4 wavefronts (ideal 2); red: one bank, distinct words'
    """
    if conflict_free:
        return "conflict-free"
    if wavefronts is None or conflict_free is None:
        shown = "unknown" if wavefronts is None else f"at least {wavefronts}"
        return f"{shown} wavefronts (ideal {ideal}): the solver gave up"
    return f"{wavefronts} wavefronts (ideal {ideal}); red: one bank, distinct words"


def _write_svg(path: str, smem, rep, bits: int, banks: int) -> None:
    """The shared layout colored by bank, the witness's conflicting elements outlined in red."""
    marked = [tuple(a.element.values()) for a in rep.witness.accesses] if rep.witness else []
    _draw(path, smem, bits, banks, marked, svg_title(rep.conflict_free, rep.wavefronts, rep.ideal_wavefronts))


def _draw(path: str, smem, bits: int, banks: int, marked, title: str) -> None:
    # a LinearLayout, or an address map (padded, placed at a base, CuTe): each element's offset
    lin = smem.sublayout([d for d in smem.in_dim_names if d != "block"], smem.out_dim_names) \
        if isinstance(smem, LinearLayout) and "block" in smem.in_dims else smem
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(layout_svg(lin, elem_bits=bits, banks=banks, marked=marked, title=title))
    except OSError as e:
        raise LayoutError(f"cannot write {path}: {e.strerror}") from None


def _cmd_synth(args) -> int:
    shape, tbits = _type(args)
    bits = _elem_bits(args, tbits)
    if not args.write and not args.read:
        raise LayoutError("give --write, --read, or both")
    write = load_register(_text(args.write), shape, "--write") if args.write else None
    read = load_register(_text(args.read), shape, "--read") if args.read else None
    plan = synthesize(write, read, elem_bits=bits, num_banks=args.banks)
    if args.json:
        print(json.dumps(plan.to_dict()))
    else:
        print(plan.summary())
    return 0 if plan.verdict.proved else 1


def _cmd_table(args) -> int:
    if args.json:
        print(json.dumps([r.to_dict() for r in swizzle_table()]))
    else:
        print(swizzle_table_markdown(), end="")
    return 0


def _add_banks(subparsers) -> None:
    """``verilayout banks``: its options and examples."""
    p = subparsers.add_parser(
        "banks", help="shared-memory bank conflicts of a register layout and a shared layout",
        description="How many wavefronts a warp needs to read (or write) a tensor held in a register "
        "layout from (to) a shared layout: proved conflict-free, or a witness (two lanes, their "
        "elements, byte addresses and bank). Also prints what Triton's get_shared_bank_conflicts "
        "reports for the same pair.", epilog=BANKS_EPILOG, formatter_class=_FMT)
    p.add_argument("--reg", required=True, metavar="LAYOUT",
                   help="register layout: Triton MLIR attribute or tensor type, @FILE, or a CuTe "
                   "thread-value layout such as '((_4,_8),((_2,_2,_2),_1)):((_32,_1),((_16,_8,_128),_0))' "
                   "(mode 0 the thread, mode 1 the value, as CuTe's get_layoutS_TV() prints it; its value "
                   "is an index into the -t tile read column-major, dim 0 fastest, as CuTe's idx2crd; "
                   "threads 0-31 are warp 0's lanes)")
    p.add_argument("--smem", required=True, metavar="LAYOUT",
                   help="shared layout: #ttg.nvmma_shared / swizzled_shared / shared_linear / "
                   "padded_shared, a CuTe layout (e.g. '(16,32):(33,1)'), or @FILE")
    p.add_argument("-t", "--type", metavar="TYPE", help="tensor type: shape and element type, "
                   "e.g. 'tensor<64x64xf16>'")
    p.add_argument("--shape", metavar="AxB", help="tensor shape, e.g. 64x64 (with --bits; instead of -t)")
    p.add_argument("--name", metavar="#ALIAS", help="which alias of a TTGIR file given to --reg, "
                   "e.g. '#blocked1'")
    p.add_argument("--bits", type=int, help="element width in bits (when -t has no element type)")
    p.add_argument("--swizzle-units", choices=["bytes", "elements"],
                   help="a CuTe --smem 'Sw<B,M,S> o L' with no pointer or offset: does the swizzle act on "
                   "byte addresses or element offsets (CuTe's own forms need none: 'Sw<..> o smem_ptr[16b]"
                   "(unset) o L' and the DSL's 'S<..> o 0 o L' are bytes, 'Sw<..> o _0 o L' elements)")
    p.add_argument("--stage", type=int_arg, metavar="N",
                   help="a staged CuTe --smem (3 modes: the tile's two, then the stage, as sm90 "
                   "collectives declare them): which stage (default: every stage, each reported)")
    p.add_argument("--instr", default="auto", metavar="INSTR",
                   help="auto (default: the widest ld.shared/st.shared the layouts allow), "
                   "ld.shared.v4.b32, st.shared.b16, ldmatrix.x4, ldmatrix.x2.trans, stmatrix.x4, ...")
    p.add_argument("--store", action="store_true", help="with --instr auto: the access is a store")
    p.add_argument("--base-address", type=int_arg, default=0, metavar="BYTES",
                   help="the buffer's byte address in shared memory (default 0): every element at "
                   "base + offset; vector accesses must stay aligned")
    p.add_argument("--banks", type=int, default=32, choices=[32, 64],
                   help="number of 4-byte banks (32 NVIDIA, default; 64 AMD)")
    p.add_argument("--target", default="nvidia", choices=["nvidia", "gfx942", "gfx950"],
                   help="hardware model: nvidia (default: ld/st.shared, ldmatrix phases) or an AMD LDS "
                   "(gfx942: 32 banks, gfx950: 64 banks, with the ds_read/ds_write phase groups; needs a "
                   "64-lane register layout)")
    add_timeout_option(p, 30.0, "z3 time per query")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--svg", metavar="FILE", help="draw the shared layout colored by bank, with the "
                   "witness's conflicting elements outlined in red")
    p.set_defaults(func=_cmd_banks)


def _add_swizzle_synth(sub) -> None:
    """``verilayout swizzle synth``: its options and examples."""
    s = sub.add_parser(
        "synth", help="best swizzle for a write layout and a read layout",
        description="The GF(2) shared layout minimising the wavefronts one warp needs to write the "
        "tile with --write and read it with --read (ld.shared/st.shared of any width they allow), "
        "with the lower bound that proves no linear swizzle does better; also the best "
        "#ttg.nvmma_shared of each wgmma swizzle mode and the best #ttg.swizzled_shared.",
        epilog="examples:\n"
        "  verilayout swizzle synth -t 'tensor<64x64xf16>' \\\n"
        "      --write '#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], "
        "order = [1, 0]}>' \\\n"
        "      --read '#ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], "
        "order = [0, 1]}>'\n"
        "exit codes: 0 optimality proved, 1 not proved (gap printed), 2 bad input\n",
        formatter_class=_FMT)
    s.add_argument("--write", metavar="LAYOUT", help="register layout that stores the tile")
    s.add_argument("--read", metavar="LAYOUT", help="register layout that loads the tile")
    s.add_argument("-t", "--type", metavar="TYPE", help="tensor type, e.g. 'tensor<64x64xf16>'")
    s.add_argument("--bits", type=int, help="element width in bits (when -t has no element type)")
    s.add_argument("--banks", type=int, default=32, choices=[32, 64], help="number of 4-byte banks")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(func=_cmd_synth)


def _add_swizzle_table(sub) -> None:
    """``verilayout swizzle table``: its options and examples."""
    t = sub.add_parser(
        "table", help="wgmma swizzle mode x element width x access pattern: conflict-free or witness",
        description="The proved table: for each wgmma swizzle mode (none/32B/64B/128B, K-major) and "
        "element width, whether 16-byte row stores, ldmatrix reads and column reads are "
        "conflict-free, with a witness where they are not.",
        epilog="examples:\n  verilayout swizzle table\n  verilayout swizzle table --json\n",
        formatter_class=_FMT)
    t.add_argument("--json", action="store_true", help="print JSON")
    t.set_defaults(func=_cmd_table)


def register(subparsers) -> None:
    """Add ``banks`` and the ``swizzle`` group (``synth``, ``table``) to argparse subparsers."""
    _add_banks(subparsers)
    g = subparsers.add_parser(
        "swizzle", help="synthesize the shared-memory swizzle with the fewest wavefronts",
        description="Swizzle synthesis (proved optimal over GF(2) swizzles) and the table of wgmma "
        "swizzle modes.", epilog=SWIZZLE_EPILOG, formatter_class=_FMT)
    sub = g.add_subparsers(dest="swizzle_command", metavar="SUBCOMMAND")
    g.set_defaults(func=lambda a: (g.print_help(), 2)[1])
    _add_swizzle_synth(sub)
    _add_swizzle_table(sub)
