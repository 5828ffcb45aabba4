"""The shared-memory path with the register forms against the same path through z3 terms alone,
measured in one run on the same harvested pairs.

    python benchmarks/smem_forms.py [--pairs N] [--reps R] [--harvest-dir DIR]

For the pairs ``benchmarks/audit.py --harvest N`` audits (evenly over ``tests/harvest/manifest.json``)
that access shared memory, the smaller half by PTX lines (``--all``: every one; the small pairs are
those whose audit the fixed cost per check dominates), the PTX is parsed once; then,
``R`` times each, alternately: (a) the PTX tracker alone (``PtxValues.operand`` of every
shared-memory address, fresh evaluators: the z3 terms), (b) ``audit.ptx_smem.shared_accesses`` with
the forms switched off (``forms_of`` answering None: the z3 path of the audit before the forms),
(c) the same with the forms. Each figure is the least CPU time per pair over the repetitions
(``time.process_time``); the ratios (b)/(c) and (a)/(c) are printed. The checks' output is not
compared here (``/tmp/dump_all.py`` and ``tests/test_ptx_forms.py`` do that).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from verilayout.audit import ptx_smem  # noqa: E402
from verilayout.frontends.ptx import parse_ptx  # noqa: E402
from verilayout.prove.ptx_values import PtxValues  # noqa: E402


def _pairs(folder: Path, n: int, small: bool) -> list[Path]:
    """The PTX files of ``n`` pairs evenly over the harvested corpus (``benchmarks/audit.py
    --harvest``'s choice) that have a shared-memory access; ``small``: the half with the fewest lines."""
    files = json.loads((ROOT / "tests" / "harvest" / "manifest.json").read_text())["files"]
    rows = [files[round(i * (len(files) - 1) / max(1, n - 1))] for i in range(n)] if n > 1 else files[:n]
    paths = [folder / (r["ttgir"][:-len(".ttgir")] + ".ptx") for r in rows]
    paths = [p for p in paths if p.exists() and ("shared" in p.read_text() or "ldmatrix" in p.read_text())]
    if small:
        paths = sorted(paths, key=lambda p: p.read_text().count("\n"))[:max(1, len(paths) // 2)]
    return paths


def _evals(mod) -> dict:
    return {f: PtxValues(mod, f, first_iteration=True) for f in mod.functions}


def _track(mods) -> None:
    for mod in mods:
        evs = _evals(mod)
        for ins in mod.instrs:
            acc = ptx_smem.smem_access(ins)
            if acc is not None and len(ins.args) > acc[1] and isinstance(ins.args[acc[1]], ptx_smem.Addr):
                evs[ins.func].operand(ins.args[acc[1]].base, 32, at=ins)


def _shared(mods) -> None:
    for mod in mods:
        ptx_smem.shared_accesses(mod, _evals(mod), {})


def _least(fn, mods, reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        t = time.process_time()
        fn(mods)
        best = min(best, time.process_time() - t)
    return best / len(mods)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=60)
    ap.add_argument("--all", action="store_true", help="every chosen pair, not only the smaller half")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--harvest-dir", default="/tmp/harvest_corpus")
    args = ap.parse_args(argv)
    mods = [parse_ptx(p.read_text()) for p in _pairs(Path(args.harvest_dir), args.pairs, not args.all)]
    if not mods:
        print(f"no harvested PTX under {args.harvest_dir}")
        return 2
    forms_of = ptx_smem.forms_of
    figures: dict[str, float] = {"tracker": float("inf"), "z3 path": float("inf"), "forms": float("inf")}
    _shared(mods)                                      # warm-up: imports, opcode caches
    for _ in range(2):                                 # alternately, twice
        figures["tracker"] = min(figures["tracker"], _least(_track, mods, args.reps))
        ptx_smem.forms_of = lambda ev: None
        try:
            figures["z3 path"] = min(figures["z3 path"], _least(_shared, mods, args.reps))
        finally:
            ptx_smem.forms_of = forms_of
        figures["forms"] = min(figures["forms"], _least(_shared, mods, args.reps))
    which = "all" if args.all else "the smaller half"
    print(f"{len(mods)} harvested PTX files with shared-memory accesses ({which} of {args.pairs} pairs evenly), "
          "least CPU per file:")
    for k, v in figures.items():
        print(f"  {k:28s} {v * 1e3:8.3f} ms")
    print(f"shared-memory path (shared_accesses), z3 terms / forms: {figures['z3 path'] / figures['forms']:.2f}x "
          f"(the z3 tracker alone on the addresses: {figures['tracker'] / figures['z3 path']:.0%} of the z3 path)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
