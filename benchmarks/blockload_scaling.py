"""How `blockload plan` grows with the operand: time and peak memory per load, 1024^2 .. 8192^2.

    python benchmarks/blockload_scaling.py [--sizes 1024,2048,...] [--op A|B|BT] [--no-seed]

Each size runs in a fresh subprocess (so peak memory is that size's own): it parses the DPAS
operand ``tensor<NxNxf16, #dot_op<opIdx, #dpas<warpsPerCTA [8, 4], repCluster [4, 2]>>>``, then
times ``verilayout.blockload.plan`` (plan + minimality proof + correctness check) for
sub-group 0, in CPU seconds of that process (``time.process_time``: the machine may be
shared). The ratio column is
(seconds per emitted load at this size) / (seconds per load at the smallest size). Linear
growth in the number of loads keeps that ratio near 1 (the issue's bar: at most linear).
Peak memory is the subprocess's maximum resident set (ru_maxrss) minus its resident set after
the imports; per load it is that peak over the loads emitted (the issue's bar: under 0.05 MB per
load at 8192^2, time per load flat).

The baseline measured in the same run, per size: the seed's planner (``plan(..., baseline=True)``,
the project's first algorithm: iterations then loads, its shuffle and correctness proof built the
same way) in its own subprocess; ``seed ms/load`` and ``seed MB/load`` are its figures, and
``vs seed`` the minimal planner's time per load over the seed's.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

DPAS = ("#ttig.dpas<{repeatCount = 8, systolicDepth = 8, executionSize = 16, opsPerChan = 2, "
        "threadsPerWarp = 16, warpsPerCTA = [8, 4], repCluster = [4, 2]}>")

WORKER = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from verilayout.blockload import plan
n, op_idx, transpose, dpas = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5]
seed = sys.argv[6] == "1"
k_width = 1 if op_idx == 0 else 2
text = f"tensor<{n}x{n}xf16, #ttg.dot_op<{{opIdx = {op_idx}, parent = {dpas}, kWidth = {k_width}}}>>"
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.process_time()
p = plan(text, transpose=transpose, baseline=seed)
dt = time.process_time() - t
rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"loads": len(p.loads), "seconds": dt, "peak_kb": rss1 - rss0,
                  "status": p.verdict.status}))
"""


def run(n: int, op: str, timeout: float, seed: bool = False) -> dict:
    op_idx, transpose = {"A": (0, "0"), "B": (1, "0"), "BT": (1, "1")}[op]
    try:
        out = subprocess.run([sys.executable, "-c", WORKER, str(ROOT), str(n), str(op_idx), transpose, DPAS,
                              "1" if seed else "0"],
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout:.0f} s"}
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["exit %d" % out.returncode])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1024,2048,4096,8192")
    ap.add_argument("--op", default="A", choices=("A", "B", "BT"))
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--no-seed", action="store_true", help="skip the seed planner's baseline runs")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"operand {args.op}, f16, warpsPerCTA [8, 4], repCluster [4, 2], sub-group 0")
    print(f"{'size':>7} {'loads':>6} {'seconds':>8} {'ms/load':>8} {'ratio':>6} {'peak MB':>8} "
          f"{'MB/load':>8}  {'seed ms/load':>12} {'seed MB/load':>12} {'vs seed':>8}  verdict")
    base, figures = None, {}
    for n in sizes:
        r = run(n, args.op, args.timeout)
        if "error" in r:
            print(f"{n:>5}^2     error: {r['error']}", flush=True)
            continue
        per = r["seconds"] / max(r["loads"], 1)
        mb = r["peak_kb"] / 1024
        base = base or per
        seed = {"error": "skipped"} if args.no_seed else run(n, args.op, args.timeout, seed=True)
        if "error" in seed:
            seed_cols = f"{'(' + seed['error'] + ')':>34}"
        else:
            sper = seed["seconds"] / max(seed["loads"], 1)
            seed_cols = (f"{sper * 1e3:>12.3f} {seed['peak_kb'] / 1024 / max(seed['loads'], 1):>12.4f} "
                         f"{per / sper:>8.2f}")
        print(f"{n:>5}^2 {r['loads']:>6} {r['seconds']:>8.3f} {per * 1e3:>8.3f} {per / base:>6.2f} "
              f"{mb:>8.1f} {mb / max(r['loads'], 1):>8.4f}  {seed_cols}  {r['status']}", flush=True)
        figures[n] = (mb / max(r["loads"], 1), per / base)
    print(bars(figures))


def bars(figures: dict) -> str:
    """The issue's bars on the largest size measured: under 0.05 MB per load, time per load at
    most twice the smallest size's (linear growth).

    >>> bars({1024: (0.09, 1.0), 8192: (0.03, 0.6)})
    'largest 8192^2: 0.0300 MB/load (bar 0.05: met), time ratio 0.60 (bar 2.0: met)'
    """
    if not figures:
        return "no size measured"
    n = max(figures)
    mb, ratio = figures[n]
    said = {True: "met", False: "NOT met"}
    return (f"largest {n}^2: {mb:.4f} MB/load (bar 0.05: {said[mb < 0.05]}), "
            f"time ratio {ratio:.2f} (bar 2.0: {said[ratio <= 2.0]})")


if __name__ == "__main__":
    main()
