"""`verilayout show`: print a layout as bases, Triton's views, a grid, JSON or SVG."""
from __future__ import annotations

import argparse
import json

from verilayout.cli.common import (DTYPE_BITS, add_layout_options, cute_as_linear, load_layout,
                                   parse_type_arg)
from verilayout.core.linear_layout import LinearLayout
from verilayout.errors import LayoutError
from verilayout.hw.nvidia.banks import SharedAddressMap
from verilayout.report.svg import layout_svg
from verilayout.report.views import layout_dict
from verilayout.views import format_bases, format_owner_grid, hardware_view, tensor_view


def cmd_show(args) -> int:
    """Print the layout in the asked view. A padded shared layout is an address map (not
    GF(2)-linear): its bases are its linear component's plus its padding, its grid and picture
    each element's padded offset (``report.views``)."""
    layout, shape = load_layout(args)
    if not isinstance(layout, (LinearLayout, SharedAddressMap)):
        layout = cute_as_linear(layout, args)
    if args.json:
        if args.view not in (None, "bases"):
            raise LayoutError(f"--json prints the layout's bases; it has no --view {args.view} form "
                              "(drop --json to see that view)")
        print(json.dumps(layout_dict(layout)))
    elif args.view == "hw":
        print(hardware_view(layout, shape))
    elif args.view == "tensor":
        print(tensor_view(layout, shape))
    elif args.view == "grid":
        print(format_owner_grid(layout))
    else:
        print(format_bases(layout))
    if args.svg:
        bits = DTYPE_BITS[parse_type_arg(args.type)[1]] if args.type else 16
        try:
            with open(args.svg, "w", encoding="utf-8") as f:
                f.write(layout_svg(layout, elem_bits=bits))
        except OSError as e:
            raise LayoutError(f"cannot write {args.svg}: {e.strerror}") from None
    return 0




def register(sub) -> None:
    p = sub.add_parser("show", help="print a layout: its bases, the hardware view, or the tensor grid",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Parse a layout and print it.",
                       epilog="examples:\n"
                       "  verilayout show '#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], "
                       "warpsPerCTA = [4, 1], order = [1, 0]}>' -t 'tensor<32x16xf16>' --view hw\n"
                       "  verilayout show kernel.ttgir --name '#mma' --shape 128x128 --json\n"
                       "  verilayout show 'Sw<3,3,3> o _0 o (_8,_64):(_64,_1)'\n\n"
                       "CuTe text is read as CuTe prints it; a swizzle's units follow the form:\n"
                       "  Sw<B,M,S> o smem_ptr[16b](unset) o L   byte addresses (CuTe's GMMA/UMMA atoms)\n"
                       "  Sw<B,M,S> o _0 o L                     element offsets (composition(Swizzle, Layout))\n"
                       "  S<B,M,S> o 0 o L                       byte addresses (the CuTe DSL's smem atoms)\n"
                       "  Sw<B,M,S> o L                          give --swizzle-units\n"
                       "print(tensor) forms (smem_ptr[16b](0x400) o L, Sw<3,4,3>_smem_ptr[16b](0x400) o L,\n"
                       "tmem_[32b](0x0000.0000) o L) read as their layout; a dynamic value '?' is refused.\n")
    add_layout_options(p)
    p.add_argument("--view", choices=["bases", "hw", "tensor", "grid"], default=None,
                   help="bases: the basis of every input bit (default); hw: 'Warp0:' listing of who "
                   "holds what, as Triton's format_hardware_view; tensor: Triton's tensor view; "
                   "grid: one cell per element with its owners (T<thread>:<register>) or its "
                   "shared-memory offset")
    p.add_argument("--json", action="store_true", help="print the layout as JSON "
                   '({"in_dims", "out_dims", "bases"})')
    p.add_argument("--svg", metavar="FILE", help="also draw the layout as an SVG picture")
    p.set_defaults(func=cmd_show)
