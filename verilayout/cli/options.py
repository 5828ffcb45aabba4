"""Options several commands share, in one vocabulary (``--jobs/-j N``, ``--timeout SECONDS``),
without importing any model (start-up time: ``verilayout audit`` loads only this and the audit).

>>> import argparse; p = argparse.ArgumentParser(); add_jobs_option(p, "work")
>>> p.parse_args(["-j", "2"]).jobs, p.parse_args([]).jobs
(2, 1)
"""
from __future__ import annotations

import argparse
import os

from verilayout.errors import LayoutError


def jobs_arg(text: str) -> int:
    """``--jobs/-j N`` of ``check`` and ``audit``: N processes (1, the default, works in this
    process; 0 means one per CPU); argparse's type hook.

    >>> jobs_arg("2"), jobs_arg("0") >= 1
    (2, True)
    """
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--jobs {text!r}: expected a whole number >= 0") from None
    if n < 0 or n > 256:
        raise argparse.ArgumentTypeError(f"--jobs {n}: expected 0 (one per CPU) to 256")
    return n or (os.cpu_count() or 1)


def add_jobs_option(p: argparse.ArgumentParser, what: str) -> None:
    """The one ``--jobs/-j`` option: same flag, default and meaning in every command."""
    p.add_argument("--jobs", "-j", type=jobs_arg, default=1, metavar="N",
                   help=f"{what} in N processes (default 1; 0: one per CPU); the result does not depend on N")


def add_timeout_option(p: argparse.ArgumentParser, default: float, what: str) -> None:
    """The one ``--timeout SECONDS`` option (a positive number of seconds)."""
    p.add_argument("--timeout", type=float, default=default, metavar="SECONDS",
                   help=f"{what}; past it the verdict is 'unknown' (default {default:g})")




def check_output_file(flag: str, path: str | None) -> None:
    """An output file option (``--junit``, ``--sarif``) names a file that can be written, checked
    before any work: else a one-line LayoutError naming the flag (an empty path: an unset variable).

    >>> check_output_file("--sarif", "")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: --sarif: an empty path was given (is the variable that names it set?)
    """
    if path is None:
        return
    if not path.strip():
        raise LayoutError(f"{flag}: an empty path was given (is the variable that names it set?)")
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise LayoutError(f"{flag} {path!r}: is a directory, give a file name")
    if not os.path.isdir(parent):
        raise LayoutError(f"{flag} {path}: the folder {parent} does not exist")
    if not os.access(parent, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise LayoutError(f"{flag} {path}: cannot write there")
