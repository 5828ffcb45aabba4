"""The `verilayout` command line. Every subcommand is a thin door onto the library.

Exit codes: 0 the claim holds / the command worked, 1 a claim failed (a
counterexample was printed), 2 bad input (one line on stderr, no traceback).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Sequence

from .errors import LayoutError

DTYPE_BITS = {
    "i1": 1, "b1": 1, "i4": 4, "e2m1": 4, "i8": 8, "s8": 8, "u8": 8, "e4m3": 8, "e5m2": 8,
    "f8e4m3fn": 8, "f8e5m2": 8, "f8E4M3FN": 8, "f8E5M2": 8,
    "i16": 16, "f16": 16, "bf16": 16, "i32": 32, "f32": 32, "tf32": 32, "s32": 32, "i64": 64, "f64": 64,
}

EPILOG_MAIN = """\
examples:
  verilayout show '#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>' -t 'tensor<32x16xf16>' --view hw
  verilayout show 'Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_8),(_64,_1)):((_64,_512),(_1,_0))' --view bases
  verilayout check                 # prove every obligation in specs/
exit codes: 0 holds, 1 a counterexample was found, 2 bad input
"""


def parse_shape_arg(text: str) -> list[int]:
    """``"256x32"`` -> ``[256, 32]``.

    >>> parse_shape_arg("256x32")
    [256, 32]
    """
    if not re.fullmatch(r"\d+(x\d+)*", text.strip()):
        raise LayoutError(f"--shape {text!r}: expected sizes separated by 'x', e.g. 256x32")
    return [int(t) for t in text.strip().split("x")]


def parse_type_arg(text: str) -> tuple[list[int], str]:
    """``"tensor<256x32xf16>"`` -> ``([256, 32], "f16")``.

    >>> parse_type_arg("tensor<64x64xbf16>")
    ([64, 64], 'bf16')
    """
    m = re.fullmatch(r"\s*(?:tensor|!ttg\.memdesc|memdesc)?<?\s*((?:\d+x)+)([A-Za-z][A-Za-z0-9]*)\s*>?\s*", text)
    if not m:
        raise LayoutError(f"-t {text!r}: expected a type like tensor<256x32xf16>")
    dtype = m.group(2)
    if dtype not in DTYPE_BITS:
        raise LayoutError(f"-t {text!r}: unknown element type '{dtype}' "
                          f"(known: {', '.join(sorted(DTYPE_BITS))})")
    return [int(t) for t in m.group(1).rstrip("x").split("x")], dtype


def read_layout_arg(text: str) -> str:
    """A layout argument is literal text, ``@FILE``, or the path of an existing file."""
    if text.startswith("@"):
        path = text[1:]
    elif os.path.isfile(text) and not text.lstrip().startswith(("#", "(", "Sw", "!")):
        path = text
    else:
        return text
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise LayoutError(f"cannot read layout file {path!r}: {e.strerror}") from None


def _is_mlir(text: str) -> bool:
    t = text.lstrip()
    return t.startswith(("#", "!", "tensor", "module", "//")) or "\n#" in t


def load_layout(args) -> object:
    """Parse ``args.layout`` with the shape/type/name options of the command."""
    from . import parse
    text = read_layout_arg(args.layout)
    shape, dtype = None, None
    if getattr(args, "type", None):
        shape, dtype = parse_type_arg(args.type)
    if getattr(args, "shape", None):
        if shape is not None:
            raise LayoutError("give either -t/--type or --shape, not both")
        shape = parse_shape_arg(args.shape)
    kw = {}
    if getattr(args, "name", None):
        kw["name"] = args.name
    if getattr(args, "swizzle_units", None):
        kw["swizzle_units"] = args.swizzle_units
    if dtype is not None and not _is_mlir(text):
        kw["elem_bits"] = DTYPE_BITS[dtype]  # CuTe: the element width fixes byte/element units
    return parse(text, shape=shape, **kw), shape


def _cute_as_linear(layout, args):
    """A CuTe layout as GF(2) bases: coordinates -> element offset for ``--view bases``,
    Triton's shared view (offset -> dim0, dim1, ...) for the pictures and the other views."""
    from . import cute
    bits = DTYPE_BITS[parse_type_arg(args.type)[1]] if args.type else None
    reason = cute.why_not_linear(layout, "elements", bits)
    if reason:
        raise LayoutError(f"this layout is not GF(2)-linear ({reason}); it has no bases to "
                          "show, but `verilayout check` proves properties of it with z3")
    if args.view == "bases" and not args.svg:
        return cute.to_linear(layout, "elements", bits)
    return cute.shared_linear_layout(layout, bits)


def cmd_show(args) -> int:
    from .layout import LinearLayout
    from .views import format_bases, format_owner_grid
    layout, shape = load_layout(args)
    if not isinstance(layout, LinearLayout):
        layout = _cute_as_linear(layout, args)
    if args.json:
        print(json.dumps(layout.to_dict()))
    elif args.view == "hw":
        from .frontends.triton import format_hardware_view
        print(format_hardware_view(layout, shape or list(layout.out_dims.values())))
    elif args.view == "tensor":
        from .frontends.triton import format_tensor_view
        print(format_tensor_view(layout, shape or list(layout.out_dims.values())))
    elif args.view == "grid":
        print(format_owner_grid(layout))
    else:
        print(format_bases(layout))
    if args.svg:
        from .emit.svg import layout_svg
        bits = DTYPE_BITS[parse_type_arg(args.type)[1]] if args.type else 16
        try:
            with open(args.svg, "w", encoding="utf-8") as f:
                f.write(layout_svg(layout, elem_bits=bits))
        except OSError as e:
            raise LayoutError(f"cannot write {args.svg}: {e.strerror}") from None
    return 0


def _add_layout_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("layout", help="layout text (Triton MLIR attribute or type, CuTe layout), "
                   "@FILE, or a TTGIR file path")
    g = p.add_mutually_exclusive_group()
    g.add_argument("-t", "--type", metavar="TYPE", help="tensor type giving shape and element type, "
                   "e.g. 'tensor<256x32xf16>'")
    g.add_argument("--shape", metavar="AxB", help="tensor shape, e.g. 256x32")
    p.add_argument("--name", metavar="#ALIAS", help="which alias of a TTGIR file to use, e.g. '#blocked1'")
    p.add_argument("--swizzle-units", choices=["bytes", "elements"],
                   help="for a bare CuTe 'Swizzle<B,M,S> o L': does the swizzle act on byte "
                   "addresses or element offsets")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="verilayout", description="Prove things about GPU tensor layouts; answer with a proof "
        "or a concrete counterexample.", epilog=EPILOG_MAIN,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("show", help="print a layout: its bases, the hardware view, or the tensor grid",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Parse a layout and print it.",
                       epilog="examples:\n"
                       "  verilayout show '#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], "
                       "warpsPerCTA = [4, 1], order = [1, 0]}>' -t 'tensor<32x16xf16>' --view hw\n"
                       "  verilayout show kernel.ttgir --name '#mma' --shape 128x128 --json\n")
    _add_layout_options(p)
    p.add_argument("--view", choices=["bases", "hw", "tensor", "grid"], default="bases",
                   help="bases: the basis of every input bit (default); hw: 'Warp0:' listing of who "
                   "holds what, as Triton's format_hardware_view; tensor: Triton's tensor view; "
                   "grid: one cell per element with its owners (T<thread>:<register>) or its "
                   "shared-memory offset")
    p.add_argument("--json", action="store_true", help="print the layout as JSON "
                   '({"in_dims", "out_dims", "bases"})')
    p.add_argument("--svg", metavar="FILE", help="also draw the layout as an SVG picture")
    p.set_defaults(func=cmd_show)
    for mod in _command_modules():
        mod.register(sub)
    return parser


def _command_modules():
    import importlib
    mods = []
    for name in ("cli_wgmma", "cli_banks", "cli_blockload", "cli_emit", "cli_check"):
        try:
            mods.append(importlib.import_module(f".{name}", __package__))
        except ModuleNotFoundError as e:
            if e.name != f"{__package__}.{name}":
                raise
    return mods


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except LayoutError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
