"""``python -m verilayout.cli`` and the ``verilayout`` program run the command line (Ctrl-C at any
point: one line, exit 130)."""
import os
import signal
import sys

from verilayout.cli.main import INTERRUPTED, main


_MAIN_PID = -1     # the process that runs the command (its forked workers are not it)


def run() -> None:
    """Run :func:`verilayout.cli.main.main` and exit with its code.

    Law: Ctrl-C while the command runs is one ``error:`` line and exit 130, written by the SIGINT
    handler itself (:func:`_on_sigint`: no KeyboardInterrupt is raised, so none can be swallowed by
    a finalizer such as z3's ``AstRef.__del__`` or wrapped by ctypes; only while worker processes
    run is it a KeyboardInterrupt, for the code that started them to end them); a Ctrl-C that lands
    after the command has finished is ignored: Python's shutdown puts back the default action (death by
    SIGINT, whichever thread receives it) unless the handler is ``SIG_IGN``, so the exit code is the
    command's own.
    """
    global _MAIN_PID
    _MAIN_PID = os.getpid()
    signal.signal(signal.SIGINT, _on_sigint)
    try:
        code = main()
    except KeyboardInterrupt:   # a Ctrl-C met while something had put the default handler back
        print(INTERRUPTED, file=sys.stderr)
        code = 130
    except Exception as e:      # a Ctrl-C that a C extension wrapped in its own error
        if not interrupted(e):
            raise
        print(INTERRUPTED, file=sys.stderr)
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


def _on_sigint(signum: int, frame: object) -> None:
    """SIGINT while a command runs: write the one line and leave with 130 at once. Law: it never
    returns; nothing of the interrupted code runs after it (finalizers included), so the outcome
    does not depend on where the Ctrl-C landed. While the command has worker processes it raises
    KeyboardInterrupt instead, so that the code that started them ends them."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)       # a second Ctrl-C cannot interrupt this one
    if os.getpid() != _MAIN_PID:        # a worker forked before its initializer ignored SIGINT
        os._exit(130)
    if _has_workers():
        # worker processes: the code that started them ends them (a pool's terminate() in its
        # ``finally``; killing them here would only make the pool fork new ones), then run() prints;
        # SIGINT stays ignored meanwhile, so a second Ctrl-C cannot cut that cleanup short
        raise KeyboardInterrupt
    try:
        sys.stdout.flush()              # what was printed comes first
    except (OSError, ValueError, RuntimeError):   # RuntimeError: the Ctrl-C landed inside a write
        pass
    try:
        os.write(2, f"{INTERRUPTED}\n".encode())
    except OSError:
        pass
    os._exit(130)


def _has_workers() -> bool:
    """Whether the command has worker processes now. Law: never raises: a Ctrl-C can land while
    ``multiprocessing`` is half imported (no ``active_children`` yet), and an exception raised in
    the handler would surface inside the interrupted code (an import then fails as a missing module).

    >>> _has_workers()
    False
    """
    try:
        mp = sys.modules.get("multiprocessing")
        return bool(mp is not None and mp.active_children())
    except Exception:
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
