"""Which files an audit reads, and the audit of many of them: ``.ttgir`` (the plan) and ``.ptx``
(the lowering, paired with the ``.ttgir`` beside it), files as given and folders searched
recursively (Triton's cache keeps both per kernel), optionally in parallel processes.

A file that holds no whole kernel (empty, truncated, unreadable; ``audit.inputs``) is not audited:
it becomes an :class:`InputError` of the report (exit 2) and the other files are still audited.
A folder with no kernel file is an input error too (never green on nothing).

Law: the report lists the files in the order :func:`expand_paths` gives, whatever ``jobs`` is.

A time limit (``timeout``: ``verilayout audit --timeout SECONDS``) bounds each file's audit in wall
time. The files are audited in forked worker processes (``audit.limits``), and a worker whose file
runs past the limit is killed (SIGKILL): no check has to poll a clock, and a z3 query or a numpy
pass that runs long is stopped where it is. The price: a killed audit reports nothing of what it
had done, so such a file has one check, ``time-limit``, status ``unknown``, severity ``error`` (an
audit that did not finish fails the gate; ``--fail-on never`` excepted), with the reason, and the
run goes on with the next file in a fresh worker.

>>> expand_paths(["-"])
['-']
"""
from __future__ import annotations

import bisect
import contextlib
import gc
import os
import signal
import time
from dataclasses import replace
from typing import Callable, Iterable, Iterator

from verilayout.audit import cache
from verilayout.audit.advice import gluon_kernel, may_suggest, suggestion
from verilayout.audit.kernel_names import cache_kernel_name, source_paths
from verilayout.audit.limits import run_limited
from verilayout.audit.inputs import looks_like_ptx, missing_part, read_input
from verilayout.frontends.prescan import PtxLocs, ttgir_inline_chains
from verilayout.audit.model import (TIME_LIMIT, AuditReport, Check, FileReport, InputError, merge_confirmations,
                                    time_limited)
from verilayout.errors import LayoutError

SUFFIXES = (".ttgir", ".ptx")


def expand_paths(paths: Iterable[str]) -> list[str]:
    """Files to audit: files as given, directories searched recursively for ``*.ttgir`` and ``*.ptx``.

    A directory with no such file stays in the list (:func:`audit_one` reports it as an error).
    ``X.mlir`` (a CuTe-DSL kernel's kept MLIR) beside ``X.ptx`` stands for ``X.ptx``, audited against it.
    """
    paths = list(paths)
    out = []
    for p in paths:
        if p != "-" and os.path.isdir(p):
            found = [os.path.join(root, f) for root, _dirs, files in sorted(os.walk(p))
                     for f in sorted(files) if f.endswith(SUFFIXES)]
            out.extend(found or [p])
        elif p.endswith(".mlir") and os.path.isfile(p[:-5] + ".ptx"):
            if p[:-5] + ".ptx" not in paths:   # a CuTe-DSL kernel's MLIR: the plan of the PTX beside it
                out.append(p[:-5] + ".ptx")
        else:
            out.append(p)
    return out


def _decoded(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise LayoutError(f"{name}: byte {e.start}: not UTF-8 text (a kernel file is text)") from None


def audit_any(path: str) -> FileReport:
    """A ``.ptx`` file's lowering audit, or the TTGIR audit of anything else (``-``: stdin).
    Raises ``LayoutError`` (naming the file and what is missing) when it holds no whole kernel."""
    return _audit_data(path, _read(path))


def audit_file(path: str) -> FileReport:
    """The audit of one ``.ttgir`` file (a ``.ptx`` file: its lowering audit; ``-``: TTGIR on
    standard input), as ``verilayout.audit.audit_file``. A file that holds no whole kernel (empty,
    truncated, not a kernel at all) raises a one-line LayoutError naming it and what is missing,
    as the CLI exits 2 on it: never a report of 0 checks. Findings of inlined helpers are at their
    call sites, as the CLI reports them (:func:`at_call_sites`).

    >>> import tempfile; f = tempfile.NamedTemporaryFile(suffix=".ttgir")
    >>> try: audit_file(f.name)
    ... except LayoutError as e: print(str(e) == f.name + ": empty: no TTGIR module")
    True
    """
    name = "<stdin>" if path == "-" else path
    data = _read(path)
    text = _decoded(data, name)
    kind = "ptx" if path.endswith(".ptx") else "ttgir"
    why = missing_part(text, kind)
    if why:
        raise LayoutError(f"{name}: {why}")
    if kind == "ptx":
        from verilayout.audit.ptx import audit_ptx_file  # deferred: start-up (z3)
        return at_call_sites(audit_ptx_file(path, data), text, kind)
    from verilayout.audit.ttgir import audit_text  # deferred: start-up (numpy, z3)
    try:
        return at_call_sites(audit_text(text, name), text, kind)
    except LayoutError as e:
        msg = str(e)
        raise LayoutError(msg if msg.startswith(name + ":") else f"{name}: {msg}") from None


def _read(path: str) -> bytes:
    if os.path.isdir(path):
        raise LayoutError(f"{path}: no .ttgir or .ptx file in this folder (nothing to audit)")
    return read_input(path)


def _audit_data(path: str, data: bytes) -> FileReport:
    """The audit of ``data``, the bytes of ``path`` (see :func:`audit_any`)."""
    name = "<stdin>" if path == "-" else path
    text = _decoded(data, name)
    kind = "ptx" if path.endswith(".ptx") else "ttgir"
    if path == "-" and looks_like_ptx(text):
        raise LayoutError("<stdin>: PTX on standard input: audit the .ptx file by path (the "
                          "TTGIR beside it is the plan), or pipe its TTGIR")
    why = missing_part(text, kind)
    if why:
        raise LayoutError(f"{name}: {why}")
    if kind == "ptx":
        from verilayout.audit.ptx import audit_ptx_file  # deferred: start-up (z3; a cached audit needs none)
        rep = audit_ptx_file(path, data)
    else:
        from verilayout.audit.ttgir import audit_text  # deferred: start-up (numpy, z3; a cached audit needs none)
        try:
            rep = audit_text(data, name)     # the bytes read (the text's UTF-8): its audit's cache key
        except LayoutError as e:
            msg = str(e)
            raise LayoutError(msg if msg.startswith(name + ":") else f"{name}: {msg}") from None
    kernel = cache_kernel_name(path, None if kind == "ptx" else text) if path != "-" else None
    rep = at_call_sites(rep, text, kind)
    return _with_suggestions(replace(rep, kernel=kernel, sources=source_paths(text, kind)),
                             (lambda: gluon_kernel(None if path == "-" else path, text)) if kind == "ttgir" else False)


#: How many ``.loc`` directives back from a PTX check its own ``.loc`` is looked for.
MAX_LOC_LOOKBACK = 64


def at_call_sites(rep: FileReport, text: str, kind: str) -> FileReport:
    """Each check of an op inlined from a ``@triton.jit`` helper located at its call site in the
    kernel (the TTGIR's ``loc(callsite(helper at site))``, the PTX's ``.loc ..., inlined_at``), the
    helper's line kept as ``data["inlined_from"]`` (innermost first): a helper that loads A and B
    gives two findings at two lines, each pointing at the helper as a related location.

    >>> from verilayout.audit.model import Check
    >>> t = ('#loc1 = loc("/s/k.py":9:12)\\n#loc2 = loc("/s/k.py":14:9)\\n#loc3 = loc("b"(#loc2))\\n'
    ...      '#loc4 = loc(callsite(#loc1 at #loc3))\\n  %0 = ttg.local_alloc %x : (t) -> m loc(#loc4)\\n')
    >>> c = Check("ttg.local_alloc", 5, "k.py:9", "bank-conflicts", "counterexample", "warning", "4-way")
    >>> out = at_call_sites(FileReport("k.ttgir", None, None, (c,)), t, "ttgir").checks[0]
    >>> out.loc, out.data["inlined_from"]
    ('k.py:14', ['k.py:9'])
    """
    if not rep.checks or ("inlined_at" not in text if kind == "ptx" else "callsite(" not in text):
        return rep                      # no check, or nothing inlined: no check moves
    if kind == "ptx":
        locs = PtxLocs(text, max(c.line for c in rep.checks))   # a check looks back only
        lines = locs.lines

        def site(c):
            i = bisect.bisect_right(lines, c.line) - 1
            for j in range(i, max(-1, i - MAX_LOC_LOOKBACK), -1):
                here, at = locs.names(j)
                if here == c.loc:
                    return (at, [c.loc]) if at else None
            return None
    else:
        chains = ttgir_inline_chains(text, {c.line for c in rep.checks})

        def site(c):
            ch = chains.get(c.line)
            return (ch[0], list(reversed(ch[1:]))) if ch and c.loc == ch[-1] else None
    if not (lines if kind == "ptx" else chains):
        return rep
    checks = tuple(replace(c, loc=s[0], data={**c.data, "inlined_from": s[1]}) if (s := site(c)) else c
                   for c in rep.checks)
    return replace(rep, checks=checks)


def audit_ttgir_text(text: str, name: str = "<text>") -> FileReport:
    """The CLI's audit of TTGIR ``text`` (named ``name``): a LayoutError when it holds no whole
    kernel, else the report with call sites and suggestions as ``verilayout audit`` prints them."""
    why = missing_part(text, "ttgir")
    if why:
        raise LayoutError(f"{name}: {why}")
    from verilayout.audit.ttgir import audit_text  # deferred: start-up (numpy, z3)
    rep = at_call_sites(audit_text(text, name), text, "ttgir")
    return _with_suggestions(replace(rep, sources=source_paths(text, "ttgir")), lambda: gluon_kernel(None, text))


def _with_suggestions(rep: FileReport, gluon: bool | Callable[[], bool] = False) -> FileReport:
    """Each finding with a Python-level suggestion (``audit.advice``) gets it as ``data["suggestion"]``
    (for a Gluon kernel, ``gluon``: the shared layout to write, as Gluon code; ``data["gluon"]``).
    ``gluon`` may be a function, asked (once) only when a check can have a suggestion: telling a
    Gluon kernel reads files (``advice.gluon_kernel``), which a report without findings never needs."""
    if callable(gluon):
        if not any(may_suggest(c) for c in rep.checks):
            return rep
        gluon = gluon()
    checks = tuple(replace(c, data={**c.data, "suggestion": s, **({"gluon": True} if gluon else {})})
                   if (s := suggestion(c, gluon)) else c for c in rep.checks)
    return replace(rep, checks=checks)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while one file is audited (and restored after):
    an audit allocates many small containers (per-thread byte sets, z3 wrappers) that live until
    its end, and each collection would walk all of them again; what the audit leaves behind is
    collected by the next collection after it."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def audit_one(path: str, cache_dir: str | None = None) -> FileReport | InputError:
    """:func:`audit_any`, with bad input returned as an :class:`InputError` instead of raised;
    with ``cache_dir``, a result cached under the same key (``audit.cache``) is returned as is."""
    name = "<stdin>" if path == "-" else path
    try:
        data = _read(path)
        k = cache.key(path, data) if cache_dir and path != "-" else None
        hit = cache.load(cache_dir, k) if k else None
        if hit is not None:
            return hit
        with _gc_paused():
            rep = _audit_data(path, data)
        if k:
            cache.store(cache_dir, k, rep)
        return rep
    except LayoutError as e:
        msg = str(e)
        return InputError(name, msg[len(name) + 2:] if msg.startswith(name + ": ") else msg)
    except RecursionError:
        return InputError(name, "nested too deeply")


def time_limit_report(path: str, timeout: float, reason: str) -> FileReport:
    """The report of a file whose audit did not finish: one ``time-limit`` check, status
    ``unknown``, severity ``error`` (a gate fails on an audit that did not finish), with the
    ``reason`` (the limit reached, or how the audit's process ended).

    >>> c = time_limit_report("k.ptx", 0.5, "audit time limit of 0.5 s reached").checks[0]
    >>> c.status, c.severity, c.message.split(":")[0], c.data["timeout"]
    ('unknown', 'error', 'audit time limit of 0.5 s reached', 0.5)
    """
    kind = "ptx" if path.endswith(".ptx") else "ttgir"
    c = Check(kind, 1, None, TIME_LIMIT, "unknown", "error",
              f"{reason}: this file's checks were not finished and none is reported (each is "
              "unknown); audit it with a larger --timeout", {"reason": reason, "timeout": timeout})
    return FileReport(path, None, None, (c,), kernel=cache_kernel_name(path) if path != "-" else None)


def _limited(files: list[str], jobs: int, cache_dir: str | None, timeout: float) -> list:
    """``audit_one`` over ``files`` in ``jobs`` forked workers (``audit.limits``), each file given
    ``timeout`` seconds: a file past it is :func:`time_limit_report` (never cached)."""
    from verilayout.audit import ptx, ttgir  # noqa: F401  # deferred: imported once, before the workers fork
    out = run_limited(audit_one, [(f, cache_dir) for f in files], jobs, timeout)
    return [r if how == "ok" else time_limit_report(f, timeout, r) for f, (how, r) in zip(files, out)]


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the parent handles Ctrl-C and ends the pool


def _map(files: list[str], jobs: int, cache_dir: str | None) -> list:
    """``audit_one`` over ``files`` in ``jobs`` processes (in order); Ctrl-C ends the workers."""
    import multiprocessing  # deferred: only a parallel audit starts processes (start-up time)
    pool = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn").Pool(
        min(jobs, len(files)), initializer=_ignore_sigint)
    try:
        out = pool.starmap(audit_one, [(f, cache_dir) for f in files],
                           chunksize=max(1, min(8, len(files) // (4 * jobs))))
        pool.close()
        return out
    finally:
        pool.terminate()
        pool.join()


def require_timeout(timeout: object) -> float | None:
    """``timeout`` as seconds (None: no limit), or a one-line LayoutError: a positive finite number
    is needed, and ``os.fork`` (the audit of a file is a child process killed at the limit).

    >>> require_timeout(2), require_timeout(None)
    (2.0, None)
    >>> require_timeout(0)
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: audit timeout=0: expected a positive number of seconds
    """
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
        raise LayoutError(f"audit timeout={timeout!r}: expected a positive number of seconds")
    if not hasattr(os, "fork"):
        raise LayoutError("audit timeout: needs os.fork (Linux, macOS); not available on this system")
    return float(timeout)


def audit_paths(paths: Iterable[str], jobs: int = 1, cache_dir: str | None = None,
                timeout: float | None = None) -> AuditReport:
    """Audit files, stdin (``-``) and directories; ``jobs > 1`` audits files in that many processes;
    ``cache_dir``: reuse and keep results there (``audit.cache``; stdin is never cached);
    ``timeout``: seconds of wall time per file (``audit.limits``: the files are audited in
    forked workers, one killed when its file runs past the limit), past which that file's checks
    are unknown (one ``time-limit`` error check with the reason) and the next file is audited.

    Law: ``timeout=None`` and a timeout no file reaches give the same report.

    >>> import tempfile; d = tempfile.mkdtemp()
    >>> audit_paths([d], timeout=1).errors[0].message
    'no .ttgir or .ptx file in this folder (nothing to audit)'
    """
    timeout = require_timeout(timeout)
    t0 = time.perf_counter()
    files = expand_paths(paths)
    if timeout is not None:
        results = _limited(files, jobs, cache_dir, timeout)
    elif jobs > 1 and len(files) > 1 and "-" not in files:
        results = _map(files, jobs, cache_dir)
    else:
        results = [audit_one(p, cache_dir) for p in files]
    reports = tuple(r for r in results if isinstance(r, FileReport))
    errors = tuple(r for r in results if isinstance(r, InputError))
    return AuditReport(merge_confirmations(reports), time.perf_counter() - t0, errors)
