"""Running obligations: one at a time, or many in a process pool, one bad obligation never
stopping the others.

:func:`run_obligation` is the library call (bad input raises ``LayoutError``);
:func:`evaluate` and :func:`run_all` are what CI needs: every obligation gets an
:class:`Outcome` (a verdict, or the error that kept it from being evaluated).

>>> from verilayout.spec.kinds import registry
>>> from verilayout.spec.format import parse_spec
>>> spec = parse_spec('[layouts.l]\\nbases = {lane = [[1], [2]]}\\nout_dims = {dim0 = 4}\\n'
...                   '[[obligation]]\\nkind = "invertible"\\nlayout = "l"\\n', "inline.toml", registry())
>>> [o.status for o in run_all([spec])]
['proved']
"""
from __future__ import annotations

import contextlib
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from verilayout.core.smt import DEFAULT_TIMEOUT_MS, Verdict, record_smt2
from verilayout.errors import LayoutError
from verilayout.spec.format import Obligation, Spec, parse_spec
from verilayout.spec.kinds import registry


@dataclass(frozen=True)
class Result:
    """An obligation and what the prover said about it."""

    obligation: Obligation
    verdict: Verdict
    seconds: float

    @property
    def ok(self) -> bool:
        return self.verdict.status == self.obligation.expect


@dataclass(frozen=True)
class Outcome:
    """What became of one obligation in a CI run: a verdict, or ``error`` (status "error").

    >>> Outcome(Obligation("f.toml", 1, "n", "equal", {}), "error", error="bad").ok
    False
    """

    obligation: Obligation
    status: str
    reason: str = ""
    counterexample: Any = None
    method: str = ""
    seconds: float = 0.0
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.status == self.obligation.expect

    def to_dict(self) -> dict:
        ob = self.obligation
        d = {"id": ob.id, "file": ob.file, "name": ob.name, "kind": ob.kind, "expect": ob.expect,
             "ok": self.ok, "status": self.status, "reason": self.reason,
             "counterexample": self.counterexample, "method": self.method,
             "seconds": self.seconds}
        if self.error is not None:
            d["error"] = self.error
        return d


def run_obligation(spec: Spec, ob: Obligation, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Result:
    """Prove one obligation; bad layout text or parameters raise a LayoutError."""
    kind = spec.registry.kinds[ob.kind]
    where = f"{ob.file}: obligation {ob.index} ({ob.name})"
    args = {p: (spec.layout(ob.params[p], where) if role == "layout" else ob.params[p])
            for p, role in kind.params.items() if p in ob.params}
    t0 = time.perf_counter()
    verdict = kind.fn(spec=spec, where=where, timeout_ms=timeout_ms, **args)
    return Result(ob, verdict, time.perf_counter() - t0)


def run_spec(spec: Spec, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> list[Result]:
    """Every obligation of ``spec`` in order (the first bad one raises)."""
    return [run_obligation(spec, ob, timeout_ms) for ob in spec.obligations]


def evaluate(spec: Spec, ob: Obligation, timeout_ms: int = DEFAULT_TIMEOUT_MS,
             smt2: str | None = None) -> Outcome:
    """:func:`run_obligation` that never raises: an error becomes an Outcome naming it.

    >>> from verilayout.spec.format import parse_spec
    >>> s = parse_spec('[[obligation]]\\nkind = "injective"\\nlayout = "nope"\\n', "f.toml", registry())
    >>> evaluate(s, s.obligations[0]).status
    'error'
    """
    t0 = time.perf_counter()
    ctx = record_smt2(smt2, ob.id) if smt2 else contextlib.nullcontext()
    try:
        with ctx:
            r = run_obligation(spec, ob, timeout_ms)
    except LayoutError as e:
        return Outcome(ob, "error", seconds=time.perf_counter() - t0, error=str(e))
    except RecursionError:
        return Outcome(ob, "error", seconds=time.perf_counter() - t0,
                       error=f"{ob.file}: obligation {ob.index} ({ob.name}): input nested too deeply")
    except Exception as e:  # noqa: BLE001 - one broken obligation must not stop a CI run
        return Outcome(ob, "error", seconds=time.perf_counter() - t0,
                       error=f"{ob.file}: obligation {ob.index} ({ob.name}): internal error "
                       f"({type(e).__name__}: {e})")
    v = r.verdict
    return Outcome(ob, v.status, v.reason, v.counterexample, v.method, r.seconds)


def _work(task: tuple) -> list[Outcome]:
    """Process-pool task: re-read one spec from its text, evaluate some of its obligations."""
    path, text, indices, timeout_ms, smt2 = task
    spec = parse_spec(text, path, registry())
    return [evaluate(spec, spec.obligations[i], timeout_ms, smt2) for i in indices]


def run_all(specs: Sequence[Spec], timeout_ms: int = DEFAULT_TIMEOUT_MS, jobs: int = 1,
            smt2: str | None = None, texts: Sequence[str] | None = None,
            progress: Callable[[int, int], None] | None = None) -> list[Outcome]:
    """Every obligation of ``specs`` in order; ``jobs > 1`` uses a process pool, which
    needs the spec ``texts`` (the workers re-read them)."""
    obs = [(k, i) for k, s in enumerate(specs) for i in range(len(s.obligations))]
    total = len(obs)
    out: list[Outcome] = []
    if jobs <= 1 or total <= 1 or texts is None:
        for k, i in obs:
            out.append(evaluate(specs[k], specs[k].obligations[i], timeout_ms, smt2))
            if progress:
                progress(len(out), total)
        return out
    size = max(1, total // (4 * jobs))
    tasks = []
    for k, s in enumerate(specs):
        idx = list(range(len(s.obligations)))
        for c in range(0, len(idx), size):
            tasks.append((s.path, texts[k], idx[c:c + size], timeout_ms, smt2))
    with ProcessPoolExecutor(max_workers=jobs) as ex:
        for chunk in ex.map(_work, tasks):
            out.extend(chunk)
            if progress:
                progress(len(out), total)
    return out


def progress_bar(stream, width: int = 30) -> Callable[[int, int], None]:
    """A ``progress(done, total)`` callback drawing ``[####....] done/total seconds`` on ``stream``."""
    start = time.perf_counter()

    def draw(done: int, total: int) -> None:
        filled = int(width * done / max(total, 1))
        stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} "
                     f"{time.perf_counter() - start:5.1f}s")
        if done == total:
            stream.write("\n")
        stream.flush()
    return draw
