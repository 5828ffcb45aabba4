"""The stubborn-set reduced search of the cluster K ring (``simulate.mcast_stubborn.explore_stubborn``,
symmetric, as the ``mcast-ring`` check runs it) against the same search at an earlier revision of
that module (default: the one before interference was limited to the seed's reach and mbarrier
updates were judged by their (pending, tx) sums), both measured in the same run on the ring systems
of ``tests/mcast_ring_systems.json`` (no nvcc), in the per-destination and eager landing models.
Where both finish they are asserted to agree (outcome and finding kind).

    python benchmarks/mcast_reach.py [--cap N] [--base GIT-REV] [NAME-SUBSTRING ...]

Prints per system and model: each verdict, states, CPU seconds, and the ratios new / baseline.
"""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from cpu_timing import timed

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "benchmarks")]
BASE = "652b5ff"


def _kind(r) -> tuple:
    return r.outcome, (r.error[0].what if r.outcome == "counterexample" else None)


def _baseline(rev: str):
    """The module ``verilayout/simulate/mcast_stubborn.py`` at ``rev``, imported under another name."""
    text = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:verilayout/simulate/mcast_stubborn.py"],
                          capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / "mcast_stubborn_base.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("mcast_stubborn_base", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv: list) -> int:
    cap, base = 100000, BASE
    while argv[:1] in (["--cap"], ["--base"]):
        if argv[0] == "--cap":
            cap = int(argv[1])
        else:
            base = argv[1]
        argv = argv[2:]
    import mcast_systems
    from verilayout.simulate.mcast_stubborn import explore_stubborn
    old = _baseline(base)
    for name, system in mcast_systems.load().items():
        if argv and not any(o in name for o in argv):
            continue
        for landing in ("per-dest", "eager"):
            s = replace(system, landing=landing)
            a, ta = timed(old.explore_stubborn, s, max_states=cap, symmetric=True)
            b, tb = timed(explore_stubborn, s, max_states=cap, symmetric=True)
            if a.outcome != "unknown" and b.outcome != "unknown":
                assert _kind(a) == _kind(b), (name, landing, a, b)
            print(f"{name:32s} {landing:8s} base {'/'.join(map(str, _kind(a))):26s} {a.states:7d} {ta:6.2f}s  "
                  f"new {'/'.join(map(str, _kind(b))):26s} {b.states:6d} {tb:6.2f}s  "
                  f"states x{b.states / a.states:.4f} CPU x{tb / max(ta, 1e-9):.3f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
