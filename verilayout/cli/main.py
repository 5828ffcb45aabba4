"""The `verilayout` command line. Every subcommand is a thin door onto the library.

Exit codes: 0 the claim holds / the command worked, 1 a claim failed (a
counterexample was printed), 2 bad input (one line on stderr, no traceback).
"""
from __future__ import annotations

import argparse
import sys
from typing import Any, NoReturn, Sequence

from importlib import import_module

from verilayout.errors import one_line
from verilayout.errors import LayoutError


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (``error: ...``) and exit 2."""

    def error(self, message: str):  # noqa: D102 - argparse's hook
        usage_error(self.prog, message)


def usage_error(prog: str, message: str) -> NoReturn:
    """A usage error: one line on stderr naming the command and its ``--help``, exit 2."""
    print(f"error: {prog}: {one_line(message)} (see {prog} --help)", file=sys.stderr)
    sys.exit(2)


def command_prog(prog: str, args: argparse.Namespace) -> str:
    """The name of the command ``args`` chose (``verilayout emit gemm``): a command's sub-command is
    its ``<command>_command`` attribute.

    >>> command_prog("verilayout", argparse.Namespace(command="emit", emit_command="gemm"))
    'verilayout emit gemm'
    """
    cmd = getattr(args, "command", None)
    sub = getattr(args, f"{cmd}_command", None) if cmd else None
    return " ".join(p for p in (prog, cmd, sub) if p)

#: The one line every interrupted command ends with (exit 130).
INTERRUPTED = "error: interrupted (Ctrl-C)"

EPILOG_MAIN = """\
examples:
  verilayout show '#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>' -t 'tensor<32x16xf16>' --view hw
  verilayout show 'Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_8),(_64,_1)):((_64,_512),(_1,_0))' --view bases
  verilayout check                 # prove every obligation in specs/
exit codes: 0 holds, 1 a counterexample was found, 2 bad input
"""


def cli_message(message: str) -> str:
    """A library message in the words of the command line, on one line.

    >>> cli_message("#ttg.blocked has no shape: give a full type (tensor<...>) or pass shape=[...]")
    '#ttg.blocked has no shape: give a full type (tensor<...>) or give --shape AxB or a type with -t'
    """
    for lib, cli in (("pass shape=[...]", "give --shape AxB or a type with -t"),
                     ("pass shape=", "give --shape AxB or a type with -t"),
                     ("pass mn= (and mn_block=)", "give --mn (and --mn-block)"),
                     ("pass swizzle_units='bytes'", "give --swizzle-units bytes")):
        message = message.replace(lib, cli)
    return one_line(message)


#: The one-line help of each command, for ``verilayout --help`` without loading any command.
SUMMARY = {"show": "print a layout: its bases, the hardware view, or the tensor grid",
           "wgmma": "wgmma / tcgen05 shared-memory descriptors: decode, verify, synthesize, fragments",
           "banks": "shared-memory bank conflicts of a register layout stored to / loaded from a shared layout",
           "swizzle": "the optimal shared-memory swizzle for a write and a read; the wgmma swizzle table",
           "blockload": "Intel 2D block-load plans for DPAS operands and other layouts",
           "emit": "write a kernel whose every index comes from a proved object",
           "simulate": "run the numpy model of an emitted kernel",
           "tma": "TMA box writes against shared layouts and wgmma/tcgen05 descriptors",
           "check": "prove every obligation of spec files",
           "audit": "check every layout of compiled kernels (TTGIR and PTX files)"}

#: Each top-level command and the CLI module that registers it, in ``--help`` order.
COMMANDS = {"show": "show", "wgmma": "wgmma", "banks": "banks", "swizzle": "banks",
            "blockload": "blockload", "emit": "emit", "simulate": "emit", "tma": "tma", "check": "check",
            "audit": "audit"}


def command_modules(argv: Sequence[str]) -> tuple[str, ...]:
    """The CLI modules to load for ``argv``: only the named command's (start-up time), or all of
    them when no known command comes first (``--help``, a typo: the full parser answers).

    Law: the parser built from ``command_modules(argv)`` parses ``argv`` as the full one does.

    >>> command_modules(["audit", "k.ttgir"]), command_modules(["simulate", "d"])
    (('audit',), ('emit',))
    >>> len(command_modules(["--help"])) == len(set(COMMANDS.values()))
    True
    """
    if argv and argv[0] in COMMANDS:
        return (COMMANDS[argv[0]],)
    return tuple(dict.fromkeys(COMMANDS.values()))


class _Version(argparse.Action):
    """``--version``: the installed distribution's version (read only when asked: start-up)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"verilayout {sys.modules['verilayout'].__version__}")
        parser.exit(0)


def _root_parser() -> tuple[argparse.ArgumentParser, Any]:
    """The top-level parser (``--version``, the epilog) and its command sub-parsers, empty."""
    parser = Parser(
        prog="verilayout", description="Prove things about GPU tensor layouts; answer with a proof "
        "or a concrete counterexample.", epilog=EPILOG_MAIN,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action=_Version)
    return parser, parser.add_subparsers(dest="command", metavar="COMMAND")


def _summary_parser() -> argparse.ArgumentParser:
    """The top-level parser with each command named and summarised, none loaded: what
    ``verilayout --help`` prints (start-up time; ``verilayout COMMAND --help`` loads COMMAND)."""
    parser, sub = _root_parser()
    for name, text in SUMMARY.items():
        sub.add_parser(name, help=text)
    return parser


def build_parser(modules: Sequence[str] | None = None) -> argparse.ArgumentParser:
    parser, sub = _root_parser()
    for name in modules if modules is not None else command_modules(()):
        # each command's module (and what it imports) is loaded only when that command runs
        import_module(f"verilayout.cli.{name}").register(sub)
    mark_required(parser)
    return parser


def mark_required(parser: argparse.ArgumentParser) -> None:
    """Every required option says so in its help (``(required)``), in every subcommand.

    >>> p = argparse.ArgumentParser(); _ = p.add_argument("--x", required=True, help="an x")
    >>> mark_required(p); p._actions[-1].help
    'an x (required)'
    """
    for action in parser._actions:
        if action.required and action.option_strings and "(required)" not in (action.help or ""):
            action.help = f"{action.help} (required)" if action.help else "(required)"
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                mark_required(sub)


def parse_intermixed(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """``parser.parse_args(argv)``, where a command that sets ``intermixed`` (the name of its
    positional list) also takes positionals after its options: ``audit a.ttgir --json b.ttgir``
    audits both (argparse's ``parse_intermixed_args`` refuses sub-commands).

    >>> p = argparse.ArgumentParser(); _ = p.add_argument("paths", nargs="+"); _ = p.add_argument("--json", action="store_true")
    >>> p.set_defaults(intermixed="paths"); a = parse_intermixed(p, ["a", "--json", "b"]); a.paths, a.json
    (['a', 'b'], True)
    """
    args, extra = parser.parse_known_args(argv)
    dest = getattr(args, "intermixed", None)
    if extra:
        if not dest or any(x.startswith("-") and x != "-" for x in extra):
            usage_error(command_prog(parser.prog, args), f"unrecognized arguments: {' '.join(extra)}")
        setattr(args, dest, list(getattr(args, dest) or ()) + extra)
    return args


class _Z3KeepsNoCtrlC:
    """An import hook: when z3 is first imported (lazily, inside the functions that need it), its
    ``ctrl_c`` parameter is turned off. Law: z3 otherwise takes SIGINT for itself during any of
    its calls (a check, but also ``simplify``), cancels that call and goes on, so a Ctrl-C that
    lands there never reaches the command line's handler; off, the signal waits for the call to
    return and is then a KeyboardInterrupt (one line, exit 130)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:  # noqa: D102
        if name != "z3":
            return None
        import importlib.util
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            module.set_param("ctrl_c", False)
        spec.loader.exec_module = exec_module        # type: ignore[method-assign]
        return spec


def keep_ctrl_c_from_z3() -> None:
    """Turn z3's own SIGINT handling off, now if z3 is loaded, else when it is first imported
    (:class:`_Z3KeepsNoCtrlC`); z3 is not imported here (start-up time).

    >>> keep_ctrl_c_from_z3(); import z3; z3.get_param("ctrl_c")
    'false'
    """
    if "z3" in sys.modules:
        sys.modules["z3"].set_param("ctrl_c", False)
    elif not any(isinstance(f, _Z3KeepsNoCtrlC) for f in sys.meta_path):
        sys.meta_path.insert(0, _Z3KeepsNoCtrlC())


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    keep_ctrl_c_from_z3()
    try:
        return _run(argv)
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return 130


def _run(argv: list[str]) -> int:
    """Parse ``argv`` and run the command; a LayoutError is one ``error:`` line and exit 2."""
    if not argv or argv[0] in ("-h", "--help", "--version"):
        parser = _summary_parser()
    else:
        parser = build_parser(command_modules(argv))
    args = parse_intermixed(parser, argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except LayoutError as e:
        sys.stdout.flush()             # what was printed comes first, on its own lines
        print(f"error: {cli_message(str(e))}", file=sys.stderr)
        return 2
    except OverflowError as e:         # a number of the input beyond what the model computes with
        sys.stdout.flush()
        print(f"error: a number in the input is too large ({one_line(str(e))})", file=sys.stderr)
        return 2
    except RecursionError:
        print("error: input nested too deeply", file=sys.stderr)
        return 2
    except MemoryError:
        print("error: out of memory reading the input (is it too large?)", file=sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
