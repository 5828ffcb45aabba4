"""The cluster K ring's searches side by side, measured in the same run: the full breadth-first
search (``simulate.mcast_ring.explore_mcast``), the same up to the ring's symmetries
(``simulate.mcast_symmetry.explore_symmetric``), the stubborn-set reduced search
(``simulate.mcast_stubborn.explore_stubborn``) and the same with symmetry reduction
(``explore_stubborn(..., symmetric=True)``), on the rings of emitted
kernels: the shipped cluster kernels and planted protocol bugs of ``benchmarks/mcast_ring_speed.py``
and the large rings of ``BIG`` (6-stage one-CTA 2x2, 8-stage f16 4x1 pair, 6-stage 2x2 pair, 4- and
6-stage 2x1 / 1x2), whose full searches pass any affordable bound. Where two searches finish they
are asserted to agree (outcome and finding kind).

    python benchmarks/mcast_symmetry.py [--cap N] [--fixture] [--write-fixture] [NAME-SUBSTRING ...]

``--fixture``: the systems of ``tests/mcast_ring_systems.json`` (no nvcc); else built here from
the emitter's kernels (nvcc). ``--write-fixture``: write that file from the kernels and stop.
Prints per search (model, each verdict, states, CPU seconds) and the ratios symmetric / reduced.
"""
from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

from cpu_timing import timed

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "benchmarks")]

_PAIR = dict(tile=(256, 128, 64), ctas=2)
#: (name, dtype, manifest keywords): large rings the full search does not finish.
BIG = (
    ("big 1cta 2x2 s6", "bf16", dict(tile=(128, 128, 64), stages=6, cluster=(2, 2))),
    ("big pair 4x1 f16 s8", "f16", dict(_PAIR, stages=8, cluster=(4, 1))),
    ("big pair 2x2 256x256 s6", "bf16", dict(tile=(256, 256, 64), stages=6, ctas=2, cluster=(2, 2))),
    ("big 1cta 2x1 s4", "bf16", dict(tile=(128, 128, 64), stages=4, cluster=(2, 1))),
    ("big 1cta 1x2 s6", "bf16", dict(tile=(128, 128, 64), stages=6, cluster=(1, 2))),
)


def _kind(r) -> tuple:
    return r.outcome, (r.error[0].what if r.outcome == "counterexample" else None)


def _capture(name: str, dt: str, kw: dict, edit) -> object:
    """The system the ``mcast-ring`` check of the kernel reads (marks left out), not searched."""
    import verilayout.simulate.mcast_check as mc
    from verilayout.emit.tcgen05_gemm import build_tcgen05_manifest, render_tcgen05_cuda
    got, real = [], mc._ring_verdict
    mc._ring_verdict = lambda s: (got.append(mc.ring_content(s)), mc.KernelCheck("mcast-ring", "unknown", "-"))[1]
    try:
        man = build_tcgen05_manifest(dt, **kw)
        src = render_tcgen05_cuda(man)
        new = src if edit is None else src.replace(*edit)
        assert new != src or edit is None, f"{name}: the planted edit did not change kernel.cu"
        mc.check_sm100_source(man, new)
    finally:
        mc._ring_verdict = real
    assert got, f"{name}: no mcast-ring system (nvcc missing?)"
    return got[0]


def _kernel_systems(only) -> dict:
    from mcast_ring_speed import KERNELS
    out = {}
    for name, dt, kw, edit in list(KERNELS) + [(n, d, k, None) for n, d, k in BIG]:
        if not only or any(o in name for o in only):
            out[name] = _capture(name, dt, kw, edit)
    return out


def _models(name: str, system) -> tuple:
    """The finest landing model (the check's with every cluster) and the coarsest."""
    return ("per-dest", "eager") if name.startswith("big") or system.ncta > 2 else ("per-dest", "atomic", "eager")


def _run(name: str, system, cap: int) -> None:
    from verilayout.simulate.mcast_ring import explore_mcast
    from verilayout.simulate.mcast_stubborn import explore_stubborn
    from verilayout.simulate.mcast_symmetry import explore_symmetric
    full, tf = (None, 0.0) if name.startswith("big") else timed(explore_mcast, system, max_states=cap)
    whole, tw = timed(explore_symmetric, system, max_states=cap)
    red, tr = timed(explore_stubborn, system, max_states=cap)
    sym, ts = timed(explore_stubborn, system, max_states=cap, symmetric=True)
    done = [r for r in (full, whole, red, sym) if r is not None and r.outcome != "unknown"]
    assert len({_kind(r) for r in done}) <= 1, (name, system.landing, full, whole, red, sym)
    cols = [] if full is None else [f"full {'/'.join(map(str, _kind(full)))} {full.states} {tf:.2f}s"]
    cols += [f"full-sym {'/'.join(map(str, _kind(whole)))} {whole.states} {tw:.2f}s",
             f"reduced {'/'.join(map(str, _kind(red)))} {red.states} {tr:.2f}s",
             f"reduced-sym {'/'.join(map(str, _kind(sym)))} {sym.states} {ts:.2f}s",
             f"reduced-sym/reduced states x{sym.states / red.states:.3f} CPU x{ts / max(tr, 1e-9):.2f}"]
    if full is not None:
        cols.append(f"full-sym/full states x{whole.states / full.states:.3f} CPU x{tw / max(tf, 1e-9):.2f}")
    print(f"{name:34s} {system.landing:8s} " + "  ".join(cols), flush=True)


def main(argv: list) -> int:
    cap = 200000
    if argv[:1] == ["--cap"]:
        cap, argv = int(argv[1]), argv[2:]
    import mcast_systems
    if argv[:1] == ["--write-fixture"]:
        systems = _kernel_systems(argv[1:])
        mcast_systems.FIXTURE.write_text(json.dumps({k: mcast_systems.encode(s) for k, s in systems.items()}) + "\n")
        print(f"wrote {len(systems)} systems to {mcast_systems.FIXTURE}")
        return 0
    if argv[:1] == ["--fixture"]:
        systems = {k: s for k, s in mcast_systems.load().items() if not argv[1:] or any(o in k for o in argv[1:])}
    else:
        systems = _kernel_systems(argv)
    for name, system in systems.items():
        for landing in _models(name, system):
            _run(name, replace(system, landing=landing), cap)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
