"""How `blockload plan` grows with the operand: time and peak memory per size, 256^2 .. 8192^2.

    python benchmarks/blockload_scaling.py [--sizes 256,512,...] [--op A|B|BT]

Each size runs in a fresh subprocess (so peak memory is that size's own): it parses the DPAS
operand ``tensor<NxNxf16, #dot_op<opIdx, #dpas<warpsPerCTA [8, 4], repCluster [4, 2]>>>``, then
times ``verilayout.blockload.plan`` (plan + minimality proof + correctness check) for
sub-group 0. The baseline is the smallest size measured in the same run: the ratio column is
(seconds per emitted load at this size) / (seconds per load at the smallest size). Linear
growth in the number of loads keeps that ratio near 1 (the issue's bar: at most linear).
Peak memory is the subprocess's maximum resident set (ru_maxrss) minus its resident set after
the imports.
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
text = f"tensor<{n}x{n}xf16, #ttg.dot_op<{{opIdx = {op_idx}, parent = {dpas}, kWidth = 1}}>>"
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
p = plan(text, transpose=transpose)
dt = time.perf_counter() - t
rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"loads": len(p.loads), "seconds": dt, "peak_kb": rss1 - rss0,
                  "status": p.verdict.status}))
"""


def run(n: int, op: str, timeout: float) -> dict:
    op_idx, transpose = {"A": (0, "0"), "B": (1, "0"), "BT": (1, "1")}[op]
    try:
        out = subprocess.run([sys.executable, "-c", WORKER, str(ROOT), str(n), str(op_idx), transpose, DPAS],
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout:.0f} s"}
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["exit %d" % out.returncode])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="256,512,1024,2048,4096,8192")
    ap.add_argument("--op", default="A", choices=("A", "B", "BT"))
    ap.add_argument("--timeout", type=float, default=300.0)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"operand {args.op}, f16, warpsPerCTA [8, 4], repCluster [4, 2], sub-group 0")
    print(f"{'size':>10} {'loads':>7} {'seconds':>9} {'ms/load':>9} {'ratio':>7} {'peak MB':>8}  verdict")
    base = None
    for n in sizes:
        r = run(n, args.op, args.timeout)
        if "error" in r:
            print(f"{n:>5}^2     error: {r['error']}")
            continue
        per = r["seconds"] / max(r["loads"], 1)
        base = base or per
        print(f"{n:>5}^2 {r['loads']:>10} {r['seconds']:>9.3f} {per * 1e3:>9.3f} {per / base:>7.2f} "
              f"{r['peak_kb'] / 1024:>8.1f}  {r['status']}")


if __name__ == "__main__":
    main()
