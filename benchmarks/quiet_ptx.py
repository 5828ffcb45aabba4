"""The audit of pairs whose PTX no check reads, with and without the shortcut that skips parsing it.

    python benchmarks/quiet_ptx.py [--pairs 200] [--reps 3]

Pairs of the harvested corpus (``/tmp/harvest_corpus``, else ``tests/corpus``) taken evenly; for
each, ``audit_paths([X.ttgir, X.ptx])`` is timed in CPU (``time.process_time``, best of ``--reps``,
the pair's TTGIR audit cache emptied before each run) twice in the same process, alternately:
as shipped (a PTX file that ``audit.ptx._quiet_report`` answers is not parsed) and with the
shortcut turned off (every PTX parsed and checked: the baseline). Printed: how many pairs take the
shortcut, the CPU per pair of both over those pairs and over all pairs, and their ratios; every
report of both runs is compared (any difference exits 1).
"""
from __future__ import annotations

import argparse
import glob
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from verilayout.audit import ptx as audit_ptx  # noqa: E402
from verilayout.audit import ttgir as audit_ttgir  # noqa: E402
from verilayout.audit.paths import audit_paths  # noqa: E402


def _stems(n: int) -> list[str]:
    folder = "/tmp/harvest_corpus" if os.path.isdir("/tmp/harvest_corpus") else str(ROOT / "tests" / "corpus")
    stems = sorted(p[:-4] for p in glob.glob(os.path.join(folder, "*", "*.ptx")) if os.path.exists(p[:-4] + ".ttgir"))
    if len(stems) <= n:
        return stems
    return [stems[round(i * (len(stems) - 1) / max(1, n - 1))] for i in range(n)]


def _timed(stem: str, reps: int, shortcut: bool) -> tuple[float, object]:
    """Best CPU seconds of ``reps`` audits of the pair, and the report of the last."""
    real = audit_ptx._quiet_report
    if not shortcut:
        audit_ptx._quiet_report = lambda *a, **k: None
    try:
        best, rep = float("inf"), None
        for _ in range(reps):
            audit_ttgir._audited.cache_clear()
            t = time.process_time()
            rep = audit_paths([stem + ".ttgir", stem + ".ptx"])
            best = min(best, time.process_time() - t)
        return best, rep
    finally:
        audit_ptx._quiet_report = real


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=200)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    stems = _stems(args.pairs)
    _timed(stems[0], 1, True)                          # imports, not counted
    rows, differ = [], []
    for s in stems:
        with open(s + ".ptx", encoding="utf-8") as f:
            text = f.read()
        fast, a = _timed(s, args.reps, True)
        slow, b = _timed(s, args.reps, False)
        quiet = audit_ptx._quiet_report(text, audit_ptx.parse_module(Path(s + ".ttgir").read_bytes()), s) is not None
        rows.append((quiet, fast, slow))
        if a.files != b.files or a.errors != b.errors:
            differ.append(s)
    for label, sel in (("pairs whose PTX takes the shortcut", [r for r in rows if r[0]]), ("all pairs", rows)):
        if not sel:
            continue
        fast, slow = sum(r[1] for r in sel), sum(r[2] for r in sel)
        print(f"{label}: {len(sel)}; audit CPU {fast / len(sel) * 1e3:.2f} ms a pair with the shortcut, "
              f"{slow / len(sel) * 1e3:.2f} ms without (baseline, same run): ratio {fast / slow:.2f}")
    print(f"reports equal in both runs: {len(rows) - len(differ)} of {len(rows)}"
          + (f"; DIFFER: {differ[:5]}" if differ else ""))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
