"""Benchmark: compose + invert + equality on 20-input-bit layouts.

GF(2) path (verilayout.LinearLayout, Gaussian elimination on packed ints) against
numpy brute force (enumerate all 2**20 inputs, gather, scatter, compare), in the
same run on the same layouts. Prints per-trial times and the ratio.

    python benchmarks/core_algebra.py [--bits 20] [--trials 5]
"""
from __future__ import annotations

import argparse
import random
import statistics
import time

import numpy as np

from verilayout import LinearLayout, equal
from verilayout.core import gf2


def random_invertible(rng: random.Random, bits: int, ins: list[tuple[str, int]], out: str) -> LinearLayout:
    cols: list[int] = []
    while len(cols) < bits:
        v = rng.randrange(1, 1 << bits)
        if gf2.rank(cols + [v]) == len(cols) + 1:
            cols.append(v)
    bases, k = {}, 0
    for name, nb in ins:
        bases[name] = [[c] for c in cols[k:k + nb]]
        k += nb
    return LinearLayout(bases, [out])


def gf2_path(A: LinearLayout, B: LinearLayout) -> bool:
    C = A.compose(B)            # (register, lane, warp) -> z
    Ci = C.invert()             # z -> (register, lane, warp)
    back = Ci.compose(C)        # z -> z, must be the identity
    ident = LinearLayout.identity1D(C.total_out_size, "z", "z")
    return equal(back, ident).proved


def brute_path(A: LinearLayout, B: LinearLayout) -> bool:
    ta = A.apply_all()          # flat input -> y
    tb = B.apply_all()          # y -> z
    tc = tb[ta]                 # compose
    inv = np.empty_like(tc)
    inv[tc] = np.arange(tc.size)  # invert (a permutation)
    back = tc[inv]              # C(C^-1(z))
    return bool(np.array_equal(back, np.arange(tc.size)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bits", type=int, default=20)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    nb = a.bits
    ins = [("register", nb // 4), ("lane", nb // 2 - nb // 4), ("warp", nb - nb // 2)]
    t_gf2, t_brute = [], []
    for _ in range(a.trials):
        A = random_invertible(rng, nb, ins, "y")
        B = random_invertible(rng, nb, [("y", nb)], "z")
        t0 = time.perf_counter()
        ok1 = gf2_path(A, B)
        t1 = time.perf_counter()
        ok2 = brute_path(A, B)
        t2 = time.perf_counter()
        assert ok1 and ok2, "both paths must establish C^-1 o C = id"
        t_gf2.append(t1 - t0)
        t_brute.append(t2 - t1)
    g, b = statistics.median(t_gf2), statistics.median(t_brute)
    print(f"layouts: {nb} input bits ({1 << nb} elements), {a.trials} trials")
    print(f"GF(2) compose+invert+equal: median {g * 1e3:.3f} ms")
    print(f"numpy brute force          : median {b * 1e3:.3f} ms")
    print(f"ratio brute/GF(2): {b / g:.0f}x (goal >= 100x)")


if __name__ == "__main__":
    main()
