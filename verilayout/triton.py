"""Audit every kernel as Triton compiles it: one line in a ``conftest.py`` turns a test suite into
an audit of each kernel it compiles.

``install()`` sets Triton's public compilation listener (``triton.knobs.compilation.listener``,
called by ``triton.compile`` after each compile and on each cache hit with the files it keeps:
``<name>.ttgir``, ``<name>.ptx``, ...) to one that audits those files (``verilayout audit``: the
TTGIR and the PTX beside it) and reports each finding at or above ``fail_on`` as a
:class:`KernelAuditWarning`, or raises :class:`KernelAuditError` from the compile in strict mode.
A listener installed before is still called first; ``uninstall()`` puts it back. No private
function of Triton is patched.

What it costs: importing this module imports no part of the audit (nor numpy, z3); ``install()``
loads only the audit's option and cache helpers; the audit's modules (numpy, z3 with them) load at
the first kernel that is not answered from the cache, in the process that audits it. Results are
kept in the audit's content cache (``cache=``: the CLI's default folder,
``$XDG_CACHE_HOME/verilayout/audit``), so a kernel audited in an earlier run (same files at the
same paths, same verilayout) is not audited again. With ``background=True`` the audits run in one
worker process, off the compile's critical path: the compiling process sends the kernel's file
paths down a pipe and goes on; the findings are held until :func:`flush`, which waits for them and
warns or raises as the compile would have (a ``conftest.py`` calls it after each test, so a finding
fails the test that compiled the kernel; see :func:`install`). A worker that dies is a finding for
each kernel it had not answered. The worker does the same audits (and its own start), so it saves
the compile's time where a core is free, not CPU time; ``benchmarks/triton_hook.py`` prints both,
for the whole run and for the compile's critical path, against compiling without the hook.

Law: the findings reported for a compiled kernel are those ``verilayout audit`` reports for the
files Triton kept for it; a kernel is audited once per process (its cache files are content-keyed).

>>> install.__name__, uninstall.__name__, flush.__name__
('install', 'uninstall', 'flush')
"""
from __future__ import annotations

import atexit
import os
import pickle
import subprocess
import sys
import threading
import warnings
from dataclasses import dataclass
from typing import Any, Callable

from verilayout.errors import LayoutError

#: Kernel files remembered as audited (per process; one compile's files are audited once).
MAX_REMEMBERED = 4096

#: How the worker process is started: it runs :func:`serve` on its standard input and output,
#: then freezes its objects (``gc.freeze``) before it exits: every object there is the audit's own
#: (its answers are flushed as they are written), and the interpreter's exit then does not collect
#: the audit's modules (numpy, z3 and verilayout's, all in reference cycles) object by object,
#: which cost a worker about 0.07 s of CPU on this machine; the operating system frees them at once.
WORKER = "from verilayout.triton import serve; serve(); import gc; gc.freeze()"


class KernelAuditWarning(UserWarning):
    """A finding of the audit of a kernel Triton compiled."""


_ERROR_CLASS: list = []


def _error_class() -> type:
    """:class:`KernelAuditError`, made once on first use (its base, ``KernelNotClean``, lives in
    the audit, which importing this module does not load)."""
    if not _ERROR_CLASS:
        from verilayout.audit.testing import KernelNotClean  # deferred: start-up time

        class KernelAuditError(KernelNotClean):
            """Strict mode: the audit of a kernel Triton compiled found something at or above
            ``fail_on`` (a :class:`verilayout.testing.KernelNotClean`, as ``assert_kernel_clean``
            raises; ``report`` holds the audit of the kernel's files)."""

        KernelAuditError.__module__ = __name__
        _ERROR_CLASS.append(KernelAuditError)
    return _ERROR_CLASS[0]


def __getattr__(name: str):
    """``KernelAuditError`` on first use (PEP 562).

    Law: ``verilayout.triton.KernelAuditError`` is one class, a subclass of
    ``verilayout.testing.KernelNotClean``.

    >>> import verilayout.triton as t, verilayout.testing
    >>> issubclass(t.KernelAuditError, verilayout.testing.KernelNotClean)
    True
    """
    if name == "KernelAuditError":
        return _error_class()
    raise AttributeError(f"module 'verilayout.triton' has no attribute {name!r}")


def findings(report: Any, fail_on: str) -> list[str]:
    """One line per finding at or above ``fail_on`` (a PTX confirmation is its TTGIR finding's),
    as ``verilayout audit`` prints it: the PTX lines that confirm it and what to change in Python.

    >>> from verilayout.audit.model import AuditReport
    >>> findings(AuditReport(()), "warning")
    []
    """
    from verilayout.audit.formats import fails, finding_text  # deferred: start-up time
    from verilayout.audit.model import is_confirmation  # deferred: start-up time
    out = []
    for f in report.files:
        name = f.kernel or f.path
        for c in f.checks:
            if fails(c, fail_on) and not is_confirmation(c):
                where = f"line {c.line}" + (f" ({c.loc})" if c.loc else "")
                out.append(f"{name}: {c.severity}: {where}: {c.op} [{c.check}] {finding_text(c)}")
    for e in report.errors:
        out.append(e.line())
    return out


def user_site(src: Any, report: Any, fail_on: str) -> tuple[str, int]:
    """Where a kernel's audit warning is attributed: the kernel's source file (``src.fn``, Triton's
    JITFunction: ``fn.__code__.co_filename``) at the line of its first finding there (the TTGIR's
    ``loc``), else at the kernel's ``def``; ``("<triton kernel>", 0)`` without a source.

    >>> from verilayout.audit.model import AuditReport
    >>> user_site(None, AuditReport(()), "warning")
    ('<triton kernel>', 0)
    """
    fn = getattr(getattr(src, "fn", None), "fn", None)
    code = getattr(fn, "__code__", None)
    if code is None:
        return "<triton kernel>", 0
    from verilayout.audit.formats import fails  # deferred: start-up time
    filename, base = code.co_filename, os.path.basename(code.co_filename)
    for f in report.files:
        for c in f.checks:
            if fails(c, fail_on) and c.loc and ":" in c.loc:
                path, _, line = c.loc.rpartition(":")
                if line.isdigit() and os.path.basename(path) == base:
                    return filename, int(line)
    return filename, code.co_firstlineno


def _kernel_files(metadata_group: dict) -> list[str]:
    return sorted(p for name, p in (metadata_group or {}).items()
                  if isinstance(p, str) and name.endswith((".ttgir", ".ptx")))


def audit_files(files: tuple[str, ...] | list[str], cache_dir: str | None, timeout: float | None = None) -> Any:
    """The audit report of one kernel's files (``verilayout audit FILES``), answered from the
    content cache in ``cache_dir`` where it holds them (``None``: no cache); ``timeout``: seconds
    per file (``verilayout audit --timeout``: a file past it is one ``time-limit`` error, unknown).

    >>> audit_files([], None).files
    ()
    """
    from verilayout.audit.paths import audit_paths  # deferred: start-up time (the audit loads at the first kernel)
    return audit_paths(list(files), cache_dir=cache_dir, timeout=timeout)


def cache_folder(cache: bool | str) -> str | None:
    """The folder results are kept in: ``True`` the CLI's default, a string that folder, ``False``
    none; a folder that cannot be used is said once on stderr (as the CLI says it) and gives none.

    >>> cache_folder(False) is None, cache_folder("/tmp/x") == "/tmp/x"
    (True, True)
    """
    if cache is False:
        return None
    if cache is True:
        from verilayout.audit.cache import default_dir  # deferred: start-up time
        folder = default_dir()
    else:
        folder = os.path.expanduser(cache)
    from verilayout.audit.cache import unusable  # deferred: start-up time
    why = unusable(folder)
    if why is not None:
        print(f"warning: verilayout.triton cache {folder}: {why}: results are not cached in this run",
              file=sys.stderr)
        return None
    return folder


@dataclass(frozen=True)
class Done:
    """One kernel's finished audit: its name, Triton's source object (for :func:`user_site`), the
    report (``None`` when the audit did not finish) and why it did not."""
    name: str
    src: Any
    report: Any
    failure: str = ""


def report_lines(done: Done, fail_on: str) -> list[str]:
    """The finding lines of a finished audit; an audit that did not finish is one, whatever
    ``fail_on`` (never a pass on nothing).

    >>> report_lines(Done("k", None, None, "the worker ended"), "never")
    ['k: not audited: the worker ended']
    """
    if done.report is None:
        return [f"{done.name}: not audited: {done.failure}"]
    return findings(done.report, fail_on)


def deliver(done: list[Done], strict: bool, fail_on: str) -> list[str]:
    """Report finished audits as the compile would have: one :class:`KernelAuditWarning` per kernel
    with findings, or (``strict``) one :class:`KernelAuditError` naming every such kernel, its
    ``report`` the audits of them all. Returns the finding lines.

    >>> deliver([], True, "warning")
    []
    """
    texts, reports = [], []
    for d in done:
        lines = report_lines(d, fail_on)
        if not lines:
            continue
        texts.append(f"verilayout audit of {d.name}: " + "; ".join(lines))
        if d.report is not None:
            reports.append(d.report)
        if not strict:
            report = d.report if d.report is not None else _empty_report()
            filename, lineno = user_site(d.src, report, fail_on)
            warnings.warn_explicit(texts[-1], KernelAuditWarning, filename, lineno,
                                   module=os.path.splitext(os.path.basename(filename))[0] or "triton")
    if strict and texts:
        from verilayout.audit.model import AuditReport  # deferred: start-up time
        merged = AuditReport(tuple(f for r in reports for f in r.files), sum(r.seconds for r in reports),
                             tuple(e for r in reports for e in r.errors))
        raise _error_class()("\n".join(texts), merged)
    return texts


def _empty_report() -> Any:
    from verilayout.audit.model import AuditReport  # deferred: start-up time
    return AuditReport(())


def serve(inp: Any = None, out: Any = None) -> None:
    """The worker's loop: read ``(id, files, cache_dir, timeout)`` jobs (pickled) from ``inp`` (standard
    input), answer ``(id, report, failure)`` on ``out`` (the original standard output; anything
    the audit prints goes to standard error) until ``inp`` ends."""
    if out is None:
        out = os.fdopen(os.dup(1), "wb")
        os.dup2(2, 1)
    inp = inp if inp is not None else sys.stdin.buffer
    while True:
        try:
            ident, files, cache_dir, timeout = pickle.load(inp)
        except EOFError:
            return
        try:
            msg = (ident, audit_files(files, cache_dir, timeout), "")
        except BaseException as e:          # the job fails, the worker goes on
            msg = (ident, None, f"{type(e).__name__}: {e}")
        pickle.dump(msg, out)
        out.flush()


class Background:
    """The worker process the audits of ``install(background=True)`` run in (started at the first
    kernel): jobs go to it on a pipe, a reader thread collects the answers; :meth:`wait` returns
    every audit finished since the last call, after waiting for those still running."""

    def __init__(self, cache_dir: str | None, timeout: float | None = None) -> None:
        self.cache_dir = cache_dir
        self.timeout = timeout
        self.cond = threading.Condition()
        self.write_lock = threading.Lock()
        self.pending: dict[int, tuple[str, Any]] = {}
        self.done: list[Done] = []
        self.proc: subprocess.Popen | None = None
        self.next_id = 0

    def _start(self) -> subprocess.Popen:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
        proc = subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, env=env)
        threading.Thread(target=self._read, args=(proc,), daemon=True,
                         name="verilayout-audit-reader").start()
        return proc

    def submit(self, name: str, src: Any, files: tuple[str, ...]) -> None:
        """Send one kernel's files to the worker."""
        with self.cond:
            if self.proc is None:
                self.proc = self._start()
            ident, self.next_id = self.next_id, self.next_id + 1
            self.pending[ident] = (name, src)
            proc = self.proc
        try:
            with self.write_lock:           # one job at a time on the pipe (not under cond: the
                pickle.dump((ident, tuple(files), self.cache_dir, self.timeout), proc.stdin)   # reader needs it)
                proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self._fail_pending(proc)

    def _read(self, proc: subprocess.Popen) -> None:
        while True:
            try:
                ident, report, failure = pickle.load(proc.stdout)
            except (EOFError, OSError, pickle.UnpicklingError):
                self._fail_pending(proc)
                return
            with self.cond:
                name, src = self.pending.pop(ident, ("?", None))
                self.done.append(Done(name, src, report, failure))
                self.cond.notify_all()

    def _fail_pending(self, proc: subprocess.Popen) -> None:
        try:
            code = proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        with self.cond:
            why = f"the background audit process ended (exit code {code})"
            for ident, (name, src) in sorted(self.pending.items()):
                self.done.append(Done(name, src, None, why))
            self.pending.clear()
            if self.proc is proc:
                self.proc = None
            self.cond.notify_all()

    def wait(self) -> list[Done]:
        """Every audit finished since the last call, after waiting for the running ones."""
        with self.cond:
            while self.pending:
                self.cond.wait()
            done, self.done = self.done, []
        return done

    def close(self) -> None:
        """End the worker (after its running audits)."""
        with self.cond:
            proc, self.proc = self.proc, None
        if proc is not None:
            try:
                proc.stdin.close()
            except OSError:
                pass
            proc.wait()


def make_listener(strict: bool = False, fail_on: str = "warning", previous: Callable | None = None,
                  cache_dir: str | None = None, background: bool = False,
                  timeout: float | None = None) -> Callable[..., None]:
    """A Triton compilation listener auditing each compiled kernel (see the module docstring);
    with ``background``, its ``flush()`` reports the audits the worker finished."""
    seen: set[tuple[str, ...]] = set()
    worker = Background(cache_dir, timeout) if background else None

    def listener(*, src: Any, metadata: dict, metadata_group: dict, times: Any, cache_hit: bool) -> None:
        if previous is not None:
            previous(src=src, metadata=metadata, metadata_group=metadata_group, times=times, cache_hit=cache_hit)
        files = tuple(_kernel_files(metadata_group))
        if not files or files in seen:
            return
        if len(seen) < MAX_REMEMBERED:
            seen.add(files)
        name = metadata.get("name", "?")
        if worker is not None:
            worker.submit(name, src, files)
            return
        deliver([Done(name, src, audit_files(files, cache_dir))], strict, fail_on)

    def flush() -> list[str]:
        return deliver(worker.wait(), strict, fail_on) if worker is not None else []

    def at_exit() -> None:
        lines = [line for d in worker.wait() for line in report_lines(d, fail_on)]
        worker.close()
        for line in lines:
            print(f"verilayout.triton: not flushed: {line}", file=sys.stderr)

    if worker is not None:
        atexit.register(at_exit)
    listener.verilayout = True          # what uninstall() recognises
    listener.previous = previous
    listener.flush = flush
    listener.worker = worker
    return listener


def require_options(strict: object, fail_on: object, cache: object, background: object,
                    timeout: object) -> float | None:
    """Check :func:`install`'s options, each bad one a one-line :class:`LayoutError` naming it;
    returns ``timeout`` as seconds. A timeout needs ``background``: the audit of a file past it is
    a forked process killed (``verilayout audit --timeout``), and forking the compiling process
    (its threads, a GPU context) is not safe, forking the one-threaded worker is.

    >>> require_options(False, "warning", True, True, 30)
    30.0
    >>> require_options(False, "warning", True, False, 30)
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: verilayout.triton.install: timeout=30 needs background=True (only the worker forks)
    """
    from verilayout.audit.formats import require_fail_on  # deferred: start-up time
    require_fail_on(fail_on, "verilayout.triton.install")
    for name, value in (("strict", strict), ("background", background)):
        if not isinstance(value, bool):
            raise LayoutError(f"verilayout.triton.install: {name}={value!r}: expected True or False")
    if not isinstance(cache, (bool, str)):
        raise LayoutError(f"verilayout.triton.install: cache={cache!r}: expected True, False or a folder")
    if timeout is None:
        return None
    from verilayout.audit.paths import require_timeout  # deferred: start-up time (only with a timeout)
    try:
        seconds = require_timeout(timeout)
    except LayoutError as e:
        raise LayoutError(f"verilayout.triton.install: {str(e).removeprefix('audit ')}") from None
    if not background:
        raise LayoutError(f"verilayout.triton.install: timeout={timeout!r} needs background=True (only the "
                          "worker forks)")
    return seconds


def install(strict: bool = False, fail_on: str = "warning", *, cache: bool | str = True,
            background: bool = False, timeout: float | None = None) -> Callable[..., None]:
    """Audit every kernel Triton compiles from now on in this process: findings at or above
    ``fail_on`` (the one vocabulary of ``verilayout audit --fail-on`` and ``assert_kernel_clean``:
    ``"error"``, ``"warning"``, ``"note"`` or ``"never"``) are warnings, or raise
    :class:`KernelAuditError` when ``strict``; a kernel file that holds no whole kernel is reported
    whatever ``fail_on`` (the CLI's exit 2). Returns the listener installed. Needs Triton (3.4 or
    later: ``triton.knobs``).

    ``cache``: keep results in the audit's content cache (``True``: ``verilayout audit``'s default
    folder; a folder; ``False``: none). ``background``: audit in a worker process, off the
    compile's critical path; the findings are reported (warned, or raised in strict mode) by
    :func:`flush`, which waits for the audits still running. Law: ``flush()`` after a compile
    reports exactly what the compile reports without ``background``; a kernel the worker could
    not audit is a finding whatever ``fail_on``; findings never flushed are printed on stderr at
    exit. ``timeout`` (seconds of wall time per kernel file, with ``background`` only): a file
    whose audit runs past it is killed and is one ``time-limit`` check, status ``unknown``,
    severity ``error`` (a finding at any ``fail_on`` but ``"never"``, never a pass; not cached),
    as ``verilayout audit --timeout`` reports it; the worker goes on with the next file.

        # conftest.py
        import verilayout.triton
        verilayout.triton.install(strict=True)

        # conftest.py, audits in the background: each test fails on its kernels' findings
        import pytest
        import verilayout.triton
        verilayout.triton.install(strict=True, background=True)

        @pytest.hookimpl(trylast=True)
        def pytest_runtest_call(item):
            verilayout.triton.flush()
    """
    seconds = require_options(strict, fail_on, cache, background, timeout)
    try:
        from triton import knobs  # deferred: Triton is optional (installed where kernels are compiled)
    except ImportError:
        raise LayoutError("verilayout.triton.install: Triton 3.4 or later (triton.knobs) is not "
                          "installed") from None
    current = knobs.compilation.listener
    if getattr(current, "verilayout", False):
        current = current.previous
    knobs.compilation.listener = make_listener(strict, fail_on, current, cache_folder(cache), background, seconds)
    return knobs.compilation.listener


def flush() -> list[str]:
    """Wait for the background audits of the kernels compiled so far and report their findings
    as the compiles would have (warnings, or one :class:`KernelAuditError` in strict mode);
    returns the finding lines reported. Without ``install(background=True)``, or with nothing
    pending, it returns ``[]`` (the compiles reported their findings themselves).

    Law: every finding of a background audit is reported by exactly one ``flush()`` (or, if none
    comes before the process ends, printed on stderr at exit).
    """
    try:
        from triton import knobs  # deferred: Triton is optional
    except ImportError:
        return []
    current = knobs.compilation.listener
    if not getattr(current, "verilayout", False):
        return []
    return current.flush()


def uninstall() -> None:
    """Remove the listener :func:`install` set, putting back the one it found. A background worker
    finishes the audits it was sent; their findings, which :func:`flush` no longer reaches, are
    printed on stderr at exit, when the worker ends."""
    from triton import knobs  # deferred: Triton is optional
    current = knobs.compilation.listener
    if getattr(current, "verilayout", False):
        knobs.compilation.listener = current.previous
