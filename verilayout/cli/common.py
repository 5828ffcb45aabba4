"""What every command shares: reading layout arguments, shapes, types and options."""
from __future__ import annotations

import argparse
import math
import os
import re

from verilayout import parse
from verilayout.core import cute
from verilayout.dtypes import BITS as DTYPE_BITS
from verilayout.errors import LayoutError
from verilayout.frontends.names import parse_tensor_type
from verilayout.spec.format import read_text

def timeout_ms(seconds: float, flag: str = "--timeout") -> int:
    """A positive, finite number of seconds as milliseconds; anything else is a LayoutError.

    >>> timeout_ms(1.5)
    1500
    """
    if not math.isfinite(seconds) or seconds <= 0 or seconds > 86400:
        raise LayoutError(f"{flag} {seconds}: need a positive, finite number of seconds (at most 86400)")
    return max(1, int(seconds * 1000))


def int_arg(text: str) -> int:
    """An integer option, decimal or ``0x...`` (``_`` separators allowed); argparse's type hook.

    >>> int_arg("0x4_80"), int_arg("1152")
    (1152, 1152)
    """
    try:
        return int(str(text).replace("_", ""), 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer (decimal or 0x...)") from None


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
    >>> parse_type_arg("tensor<8x16xf16")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: -t 'tensor<8x16xf16': the < is never closed by a > (expected a type like tensor<256x32xf16>)
    """
    opened, closed = str(text).count("<"), str(text).count(">")
    if opened != closed:
        what = "the < is never closed by a >" if opened > closed else "a > closes no <"
        raise LayoutError(f"-t {text!r}: {what} (expected a type like tensor<256x32xf16>)")
    shape, dtype = parse_tensor_type(text, "-t")
    if dtype not in DTYPE_BITS:
        raise LayoutError(f"-t {text!r}: unknown element type '{dtype}' "
                          f"(known: {', '.join(sorted(DTYPE_BITS))})")
    return shape, dtype


#: what a file path looks like and layout text never does: no layout punctuation, and a
#: folder separator or a file extension (``kernel.ttgir``, ``out/a.mlir``, ``~/k.ptx``)
_PATH_LIKE = re.compile(r"[^\s()<>:\[\]{}#!,=@]*(/|\.[A-Za-z]\w*$)[^\s()<>:\[\]{}#!,=@]*")


def read_layout_arg(text: str) -> str:
    """A layout argument is literal text, ``@FILE``, or the path of an existing file. Law: text
    that can only be a path (:data:`_PATH_LIKE`) but names no file is refused as a missing file,
    not parsed as a layout.

    >>> read_layout_arg("(8,8):(8,1)")
    '(8,8):(8,1)'
    >>> read_layout_arg("no/such/kernel.ttgir")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: cannot read layout file no/such/kernel.ttgir: no such file (a layout argument is layout text, @FILE or an existing file)
    """
    if text.startswith("@"):
        path = text[1:]
    elif os.path.isfile(text) and not text.lstrip().startswith(("#", "(", "Sw", "!")):
        path = text
    elif _PATH_LIKE.fullmatch(text):
        raise LayoutError(f"cannot read layout file {text}: no such file (a layout argument is "
                          "layout text, @FILE or an existing file)")
    else:
        return text
    return read_text(path, "layout file")


def _is_mlir(text: str) -> bool:
    t = text.lstrip()
    return t.startswith(("#", "!", "tensor", "module", "//")) or "\n#" in t


def load_layout(args) -> object:
    """Parse ``args.layout`` with the shape/type/name options of the command."""
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


def cute_as_linear(layout, args):
    """A CuTe layout as GF(2) bases: coordinates -> element offset for ``--view bases``,
    Triton's shared view (offset -> dim0, dim1, ...) for the pictures and the other views."""
    bits = DTYPE_BITS[parse_type_arg(args.type)[1]] if args.type else None
    reason = cute.why_not_linear(layout, "elements", bits)
    if reason:
        raise LayoutError(f"this layout is not GF(2)-linear ({reason}); it has no bases to "
                          "show, but `verilayout check` proves properties of it with z3")
    if args.view in (None, "bases") and not args.svg:
        return cute.to_linear(layout, "elements", bits)
    return cute.shared_linear_layout(layout, bits)


def add_layout_options(p: argparse.ArgumentParser) -> None:
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


