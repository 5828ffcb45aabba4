"""The stubborn-set reduced search of the cluster K ring (``simulate.mcast_stubborn.explore_stubborn``)
against the full breadth-first search (``simulate.mcast_ring.explore_mcast``), measured in the same
run: on the hand-made rings of ``tests/test_mcast_ring_tabled.py`` and on every search the
``mcast-ring`` check makes for the kernels of ``benchmarks/mcast_ring_speed.py`` (shipped clusters
and planted protocol bugs; needs nvcc), in each landing model. Each pair is asserted to give the
same verdict (outcome and finding kind); where the full search passes ``--cap`` states only the
reduced one is run (its answer printed, ``unknown`` included).

    python benchmarks/mcast_stubborn.py [--cap N] [NAME-SUBSTRING ...]

Prints one line per search (model, verdicts, states of each, CPU seconds of each, state and time
ratios reduced / full) and the totals over the searches both finished.
"""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from cpu_timing import timed

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "benchmarks")]


def _kind(r) -> tuple:
    return r.outcome, (r.error[0].what if r.outcome == "counterexample" else None)


def _systems(only: list) -> list:
    from test_mcast_ring_tabled import RINGS
    out = [(f"hand: {n}", s) for n, (s, _) in sorted(RINGS.items()) if not only or any(o in n for o in only)]
    try:
        from mcast_ring_speed import _systems as kernels
        seen = set()
        for name, s, _ in kernels(only or None):    # one system per kernel (each model run below)
            if name not in seen:
                seen.add(name)
                out.append((name, s))
    except Exception as e:                     # no nvcc: the hand-made rings only
        print(f"kernels skipped: {e}")
    return out


def main(argv: list) -> int:
    from verilayout.simulate.mcast_ring import explore_mcast
    from verilayout.simulate.mcast_stubborn import explore_stubborn
    cap = 200000
    if argv[:1] == ["--cap"]:
        cap, argv = int(argv[1]), argv[2:]
    tot = [0, 0, 0.0, 0.0]
    for name, base in _systems(argv):
        for landing in ("per-dest", "atomic", "eager"):
            system = replace(base, landing=landing)
            full, tf = timed(explore_mcast, system, max_states=cap)
            red, tr = timed(explore_stubborn, system, max_states=cap)
            line = f"{name:34s} {landing:8s} full {'/'.join(map(str, _kind(full))):28s} {full.states:7d} {tf:6.2f}s  " \
                   f"reduced {'/'.join(map(str, _kind(red))):28s} {red.states:7d} {tr:6.2f}s"
            if full.outcome != "unknown" and red.outcome != "unknown":
                assert _kind(full) == _kind(red), (name, landing, full, red)
                tot = [tot[0] + full.states, tot[1] + red.states, tot[2] + tf, tot[3] + tr]
                line += f"  states x{red.states / full.states:.3f} time x{tr / max(tf, 1e-9):.2f}"
            print(line, flush=True)
    if tot[0]:
        print(f"total (both finished): states {tot[0]} -> {tot[1]} (x{tot[1] / tot[0]:.3f}), "
              f"CPU {tot[2]:.2f} s -> {tot[3]:.2f} s (x{tot[3] / max(tot[2], 1e-9):.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
