"""Sweep DPAS configurations: minimal 2D block-load plans vs the seed's algorithm.

For every configuration (element type f16 / bf16 / i8 / tf32, repCluster,
warpsPerCTA, tile shape; operand A, B, and B stored transposed) it builds the
minimal plan and the baseline plan (the seed's algorithm, 002_5b1756cea8788f7c.txt),
requires the minimal plan's verdict to be proved (correct and minimal), and prints
the median time per minimal plan and how many plans need fewer loads than the
baseline, and by how much.

    python benchmarks/blockload_sweep.py            # the full sweep (>= 500 configurations)
    python benchmarks/blockload_sweep.py --limit 50 # a quick look
"""
from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from collections import Counter

from verilayout.hw.intel.dpas import OPS_PER_CHAN, dpas_for_dtype
from verilayout.synth.blockload import plan_baseline, plan_minimal

DTYPES = ("f16", "bf16", "i8", "tf32")
REP_CLUSTERS = ((1, 1), (2, 1), (4, 2), (8, 1), (1, 4), (2, 2))
WARPS = ((1, 1), (2, 2), (8, 4), (1, 8))
TILES = ((64, 64, 1), (128, 256, 2), (256, 128, 4))  # (M, N, K in units of one DPAS K)
OPERANDS = (("A", 0, False), ("B", 1, False), ("BT", 1, True))


def configs():
    """Yield (name, layout, dtype, op_idx, transpose, inst_shape)."""
    for dtype, rc, w, (m, n, kk), (opn, op, tr) in itertools.product(
            DTYPES, REP_CLUSTERS, WARPS, TILES, OPERANDS):
        d = dpas_for_dtype(dtype, w, rc)
        k = kk * 8 * OPS_PER_CHAN[dtype]
        shape = (m, k) if op == 0 else (k, n)
        name = f"{dtype} {opn} {shape[0]}x{shape[1]} repCluster={list(rc)} warps={list(w)}"
        yield name, d.layout(shape, op), dtype, op, tr, d.inst_shape(op)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=0, help="only the first N configurations")
    args = ap.parse_args(argv)
    times, cpu, base_times, saved, unproved, wrong_base = [], [], [], Counter(), [], []
    methods = Counter()
    ratios = []
    n = 0
    for name, layout, dtype, op, tr, inst in configs():
        if args.limit and n >= args.limit:
            break
        n += 1
        kw = dict(dtype=dtype, op_idx=op, inst_shape=inst, transpose=tr)
        t0, c0 = time.perf_counter(), time.process_time()
        p = plan_minimal(layout, **kw)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        t0 = time.perf_counter()
        b = plan_baseline(layout, **kw)
        base_times.append(time.perf_counter() - t0)
        methods[p.verdict.method] += 1
        if not p.verdict.proved:
            unproved.append((name, p.verdict.status, p.verdict.reason))
        if b.verdict.status == "counterexample":
            wrong_base.append((name, b.verdict.reason))
        diff = len(b.loads) - len(p.loads)
        if diff < 0:
            unproved.append((name, "worse", f"minimal {len(p.loads)} > baseline {len(b.loads)}"))
        if diff > 0:
            saved[diff] += 1
            ratios.append(len(b.loads) / len(p.loads))
    ms = sorted(1e3 * t for t in times)
    print(f"configurations: {n} (dtypes {', '.join(DTYPES)}; operands A, B, transposed B)")
    print(f"minimal plans proved (correct and minimal): {n - len(unproved)}/{n}")
    print(f"time per minimal plan: median {statistics.median(ms):.1f} ms, "
          f"p90 {ms[int(0.9 * (len(ms) - 1))]:.1f} ms, max {ms[-1]:.1f} ms")
    print(f"CPU time per minimal plan: median {1e3 * statistics.median(cpu):.1f} ms")
    print("minimality proved by: " + ", ".join(f"{k} {v}" for k, v in sorted(methods.items())))
    print(f"time per baseline plan: median {1e3 * statistics.median(base_times):.1f} ms")
    fewer = sum(saved.values())
    print(f"plans needing fewer loads than the baseline: {fewer}/{n}")
    if fewer:
        print("  loads saved -> plans: " + ", ".join(f"{k}: {v}" for k, v in sorted(saved.items())))
        print(f"  baseline/minimal load ratio: median {statistics.median(ratios):.2f}, "
              f"max {max(ratios):.2f}")
    print(f"baseline plans that are wrong (counterexample): {len(wrong_base)}")
    for name, why in wrong_base[:5]:
        print(f"  {name}: {why}")
    for name, status, why in unproved[:10]:
        print(f"NOT PROVED {name}: {status}: {why}")
    return 1 if unproved else 0


if __name__ == "__main__":
    sys.exit(main())
