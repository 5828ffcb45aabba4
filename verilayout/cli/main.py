"""The `verilayout` command line. Every subcommand is a thin door onto the library.

Exit codes: 0 the claim holds / the command worked, 1 a claim failed (a
counterexample was printed), 2 bad input (one line on stderr, no traceback).
"""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from verilayout.cli import banks, blockload, check, emit, show, wgmma
from verilayout.errors import LayoutError

EPILOG_MAIN = """\
examples:
  verilayout show '#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>' -t 'tensor<32x16xf16>' --view hw
  verilayout show 'Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_8),(_64,_1)):((_64,_512),(_1,_0))' --view bases
  verilayout check                 # prove every obligation in specs/
exit codes: 0 holds, 1 a counterexample was found, 2 bad input
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="verilayout", description="Prove things about GPU tensor layouts; answer with a proof "
        "or a concrete counterexample.", epilog=EPILOG_MAIN,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in (show, wgmma, banks, blockload, emit, check):
        mod.register(sub)
    return parser


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
