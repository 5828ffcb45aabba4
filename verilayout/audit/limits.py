"""Work under a wall-time limit per task: forked worker processes, one killed when its task runs
past the limit (``verilayout audit --timeout``).

Why processes and not a clock polled between checks: a z3 query or a numpy pass inside one check
can run for minutes without returning to Python, and a SIGKILL stops it where it is, with no
check of any module having to know about time. Each worker is forked once (the parent imports
the audit's modules first, so a worker starts warm) and audits task after task, keeping its
in-process caches; only a worker that overran is killed (SIGKILL, then reaped) and a fresh one
forked for the next task. On 2 cores the cost over auditing in the parent is one fork per worker
and one pickle of each report; ``jobs`` workers run at once.

Law: :func:`run_limited` returns, in task order, ``("ok", fn(*task))`` for each task that ended
within ``timeout`` seconds of its start and ``("late", reason)`` for each that did not; an
exception ``fn`` raised is raised again here.

>>> run_limited(len, [("ab",), ("abc",)], jobs=1, timeout=30)
[('ok', 2), ('ok', 3)]
"""
from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

#: The length prefix of a message between the parent and a worker.
_HEADER = struct.Struct("<Q")


@dataclass(frozen=True)
class Worker:
    """A forked worker: its process id, the pipe end the parent writes tasks to, and the one it
    reads answers from."""
    pid: int
    tasks: int
    answers: int


def _send(fd: int, obj: Any) -> None:
    blob = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(blob)) + blob)
    while view:
        view = view[os.write(fd, view):]


def _recv(fd: int) -> Any:
    """One message from ``fd``, or None at its end (the writer is gone)."""
    head = _read_exactly(fd, _HEADER.size)
    if head is None:
        return None
    body = _read_exactly(fd, _HEADER.unpack(head)[0])
    return None if body is None else pickle.loads(body)


def _read_exactly(fd: int, n: int) -> bytes | None:
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _serve(fn: Callable, tasks: int, answers: int) -> None:
    """The worker's loop: each task from ``tasks`` answered on ``answers`` as ``("ok", value)`` or
    ``("raise", exception)``, until the parent closes ``tasks``; never returns."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)    # the parent handles Ctrl-C and kills us
        while (task := _recv(tasks)) is not None:
            try:
                out = ("ok", fn(*task))
            except Exception as e:                      # raised again in the parent
                out = ("raise", e)
            try:
                _send(answers, out)
            except (pickle.PicklingError, TypeError, AttributeError) as e:
                _send(answers, ("raise", RuntimeError(f"{type(out[1]).__name__}: {e}")))
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _spawn(fn: Callable, others: Sequence[Worker | None]) -> Worker:
    """A forked worker serving ``fn``; it closes its copies of the ``others``' pipe ends (else a
    worker would hold another's task pipe open and that one never see its end)."""
    tr, tw = os.pipe()
    ar, aw = os.pipe()
    pid = os.fork()
    if pid == 0:
        for fd in [tw, ar] + [fd for w in others if w is not None for fd in (w.tasks, w.answers)]:
            os.close(fd)
        _serve(fn, tr, aw)
    os.close(tr)
    os.close(aw)
    return Worker(pid, tw, ar)


def _end(w: Worker) -> int:
    """Close ``w``'s pipes, SIGKILL it (a worker is ended when it overran, died, or is idle with
    every answer read) and reap it; its wait status."""
    os.close(w.tasks)
    os.close(w.answers)
    try:
        os.kill(w.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return os.waitpid(w.pid, 0)[1]


def _died(status: int) -> str:
    """Why a worker that gave no answer ended, from its wait status.

    >>> _died(9)
    'the audit process ended by signal 9 before the time limit'
    """
    if os.WIFSIGNALED(status):
        return f"the audit process ended by signal {os.WTERMSIG(status)} before the time limit"
    return f"the audit process ended with status {os.waitstatus_to_exitcode(status)} before the time limit"


def run_limited(fn: Callable, tasks: Sequence[tuple], jobs: int, timeout: float) -> list[tuple[str, Any]]:
    """``fn(*task)`` for each task in up to ``jobs`` forked workers, each task given ``timeout``
    seconds of wall time from when its worker takes it; see the module's law. A task past its
    limit answers ``("late", "audit time limit of N s reached")`` (its worker is killed), one whose
    worker died without an answer ``("late", why)``. Ctrl-C kills every worker and is raised."""
    # long: one scheduling loop (hand out, wait for the first answer or deadline, collect) is
    # clearer whole than split across helpers that share its four pieces of state
    results: list = [None] * len(tasks)
    slots: list[Worker | None] = [None] * max(1, min(jobs, len(tasks)))
    busy: dict[int, tuple[int, float]] = {}            # slot -> (task index, deadline)
    nxt = 0
    try:
        while nxt < len(tasks) or busy:
            for s in range(len(slots)):
                if s not in busy and nxt < len(tasks):
                    slots[s] = slots[s] or _spawn(fn, slots)
                    _send(slots[s].tasks, tasks[nxt])
                    busy[s] = (nxt, time.perf_counter() + timeout)
                    nxt += 1
            wait = max(0.0, min(d for _, d in busy.values()) - time.perf_counter())
            ready = set(select.select([slots[s].answers for s in busy], [], [], wait)[0])
            now = time.perf_counter()
            for s, (i, deadline) in list(busy.items()):
                w = slots[s]
                if w.answers in ready:
                    out = _recv(w.answers)
                    if out is None:
                        results[i] = ("late", _died(_end(w)))
                        slots[s] = None
                    elif out[0] == "raise":
                        raise out[1]
                    else:
                        results[i] = out
                elif now >= deadline:
                    _end(w)
                    slots[s] = None
                    results[i] = ("late", f"audit time limit of {timeout:g} s reached")
                else:
                    continue
                del busy[s]
    except BaseException:
        for w in slots:
            if w is not None:
                _end(w)
        slots = []
        raise
    finally:
        for w in slots:
            if w is not None:
                _end(w)
    return results
