"""Options several commands share, in one vocabulary (``--jobs/-j N``, ``--timeout SECONDS``),
without importing any model (start-up time: ``verilayout audit`` loads only this and the audit).

>>> import argparse; p = argparse.ArgumentParser(); add_jobs_option(p, "work")
>>> p.parse_args(["-j", "2"]).jobs, p.parse_args([]).jobs
(2, 1)
"""
from __future__ import annotations

import argparse
import os


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


