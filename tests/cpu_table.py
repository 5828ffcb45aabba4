"""The suite's cost per test file in CPU seconds, not wall seconds: on a shared machine the wall
time of a test moves with everyone else's load, its CPU time (this process and the children it
waited for: nvcc, ptxas, a C++ compiler, Triton in a subprocess) does not.

A pytest plugin and a printer, not a test module:

    python -m pytest -q -n 2 --dist loadfile -p tests.cpu_table        # one line per test, appended
    python tests/cpu_table.py [FILE] [--top N]                          # the table, heaviest first

Each test appends ``worker, file, cpu_s, wall_s, node id`` (tab-separated) to
``$VERILAYOUT_CPU_TABLE`` (default ``verilayout-cpu-table.tsv`` in the temp folder; delete it
before a run) as it ends, so a run cut short still leaves every finished test's line. A module-scoped fixture's set-up counts toward
the first test that needs it, so the per-file sums are whole. Collection (about 10 s of CPU per
process, most of it pytest's assertion rewriting of the test modules) is outside every test.
"""
from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from collections import defaultdict

import pytest


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _out() -> str:
    return os.environ.get("VERILAYOUT_CPU_TABLE") or os.path.join(tempfile.gettempdir(), "verilayout-cpu-table.tsv")


def _relative(path: str) -> str:
    at = path.rfind(f"{os.sep}tests{os.sep}")
    return path[at + 1:] if at >= 0 else path


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cpu, wall = _cpu(), time.perf_counter()
    yield
    line = "\t".join((os.environ.get("PYTEST_XDIST_WORKER", "main"), _relative(str(item.fspath)),
                      f"{_cpu() - cpu:.3f}", f"{time.perf_counter() - wall:.3f}", item.nodeid))
    with open(_out(), "a", encoding="utf-8") as f:
        f.write(line + "\n")


def read(path: str) -> dict[str, list[float]]:
    """file -> [cpu seconds, wall seconds, tests] summed over the lines of ``path``.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
    ...     _ = f.write("gw0\\ttests/a.py\\t1.5\\t3.0\\ta::x\\ngw1\\ttests/a.py\\t0.5\\t1.0\\ta::y\\n")
    >>> read(f.name)["tests/a.py"]
    [2.0, 4.0, 2]
    """
    out: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    with open(path, encoding="utf-8") as f:
        for row in f:
            parts = row.rstrip("\n").split("\t")
            if len(parts) < 5:
                continue
            acc = out[parts[1]]
            acc[0] += float(parts[2])
            acc[1] += float(parts[3])
            acc[2] += 1
    return {k: [round(v[0], 3), round(v[1], 3), v[2]] for k, v in out.items()}


def table(rows: dict[str, list[float]], top: int) -> str:
    """A markdown table of the ``top`` heaviest files by CPU, then the totals."""
    cpu = sum(v[0] for v in rows.values())
    lines = ["| CPU s | wall s | tests | share | file |", "|---:|---:|---:|---:|---|"]
    for name, (c, w, n) in sorted(rows.items(), key=lambda kv: -kv[1][0])[:top]:
        lines.append(f"| {c:.1f} | {w:.1f} | {n} | {100 * c / cpu if cpu else 0:.1f}% | {name} |")
    lines.append(f"| {cpu:.1f} | {sum(v[1] for v in rows.values()):.1f} | "
                 f"{sum(v[2] for v in rows.values())} | 100% | all {len(rows)} files |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Print the per-file CPU table of a run made with -p tests.cpu_table.")
    ap.add_argument("file", nargs="?", default=_out())
    ap.add_argument("--top", type=int, default=40)
    args = ap.parse_args(argv)
    print(table(read(args.file), args.top))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
