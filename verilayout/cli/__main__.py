"""``python -m verilayout.cli`` and the ``verilayout`` program run the command line (Ctrl-C at any
point: one line, exit 130)."""
import os
import signal
import sys

from verilayout.cli.main import main


def run() -> None:
    """Run :func:`verilayout.cli.main.main` and exit with its code.

    Law: Ctrl-C while the command runs is one ``error:`` line and exit 130; a Ctrl-C that lands
    after the command has finished is ignored: Python's shutdown puts back the default action (death by
    SIGINT, whichever thread receives it) unless the handler is ``SIG_IGN``, so the exit code is the
    command's own.
    """
    try:
        code = main()
    except KeyboardInterrupt:
        print("error: interrupted (Ctrl-C)", file=sys.stderr)
        code = 130
    except Exception as e:      # a Ctrl-C that a C extension wrapped in its own error
        if not interrupted(e):
            raise
        print("error: interrupted (Ctrl-C)", file=sys.stderr)
        code = 130
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except KeyboardInterrupt:   # a second Ctrl-C as the command ends: it has its code already
        pass
    if code == 130:             # interrupted (here or in main): leave before Python's own exit
        _exit_now(130)
    sys.exit(code)


def interrupted(e: BaseException) -> bool:
    """Law: true when ``e`` is a Ctrl-C, or carries one: ctypes (under z3's API) turns a
    KeyboardInterrupt raised while it converts an argument into ``ArgumentError("argument N:
    KeyboardInterrupt: ")``; the chain of causes and contexts is followed too.

    >>> import ctypes
    >>> interrupted(ctypes.ArgumentError("argument 2: KeyboardInterrupt: ")), interrupted(ValueError("x"))
    (True, False)
    """
    seen: set[int] = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, KeyboardInterrupt):
            return True
        if type(e).__name__ == "ArgumentError" and ": KeyboardInterrupt" in str(e):
            return True
        e = e.__cause__ or e.__context__
    return False


def _exit_now(code: int) -> None:
    """Flush and leave with ``code`` at once: after a KeyboardInterrupt, Python's own exit can
    replace any exit code by death by SIGINT (it re-raises the signal when it judges the
    interrupt unhandled), which is not the documented 130."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


if __name__ == "__main__":
    run()
