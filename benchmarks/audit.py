"""verilayout audit: time per TTGIR file (warm, one process), Triton's compile time, cold start.

    python benchmarks/audit.py [PATH ...] [--reps 5]

* warm: every ``*.ttgir`` and ``*.ptx`` under the paths (default: ``tests/corpus`` and ``examples``) audited
  in this process, ``--reps`` times; median ms per file over the files (each file's best run);
* Triton: ``triton.compile`` of the example kernels (``examples/*.py`` with ``compile_ttgir``),
  each in a fresh subprocess (its in-process cache would otherwise answer), best of 2, against
  the audit of the TTGIR it writes;
* cold start: ``python -m verilayout.cli audit FILE`` wall time, median of 5 runs.

* the PTX audit: every ``*.ptx`` (paired with its ``.ttgir``) timed like the TTGIR files, and the
  PTX each example compiles to audited in the same run as its compile.

* ``--checks-out FILE`` writes every PTX check of the run as ``[file, line, check, status]`` (files
  relative to the repository root; an example's compiled PTX as ``examples/<name>.py:kernel.ptx``);
  ``--checks-expect FILE`` compares the run's with such a file (written by another version of the
  code, e.g. before a speed-up) and exits 1 on any difference (as a multiset: the order of a file's checks is not compared): a
  faster audit proves the same.

Goals: median < 20 ms per TTGIR file, median < 100 ms per PTX file and < 5% of Triton's compile of
the same kernel, cold start < 0.3 s.
"""
from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from verilayout.audit import audit_file  # noqa: E402
from verilayout.audit.paths import audit_any, expand_paths  # noqa: E402

COMPILE = """
import os, sys, time, importlib.util
import triton
got = []
_compile = triton.compile
def _capture(*a, **k):
    r = _compile(*a, **k)
    got.append(r)
    return r
triton.compile = _capture
spec = importlib.util.spec_from_file_location("k", sys.argv[1]); m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
t = time.perf_counter(); m.compile_ttgir(); dt = time.perf_counter() - t
if len(sys.argv) > 2 and got:
    for kind in ("ttgir", "ptx"):
        with open(os.path.join(sys.argv[2], "kernel." + kind), "w") as f:
            f.write(got[-1].asm[kind])
print(dt); sys.stdout.flush(); os._exit(0)
"""


def _rows(name, report):
    return [[name, c.line, c.check, c.status] for c in report.checks]


def warm(files, reps, rows=None):
    per = {}
    for f in files:
        r = audit_any(f)                     # first touch: imports, caches
        if rows is not None and f.endswith(".ptx"):
            rows.extend(_rows(os.path.relpath(f, ROOT), r))
        best = min(_time(lambda: audit_any(f)) for _ in range(reps))
        per[f] = best * 1e3
    return per


def _time(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def triton_compile_ms(py, out_dir=None):
    """Best of 2 compiles of an example, in fresh processes; with ``out_dir`` the TTGIR and PTX it
    wrote are saved there as ``kernel.ttgir`` / ``kernel.ptx``."""
    env = dict(os.environ, TRITON_CACHE_DIR=os.path.join("/tmp", f"vl-bench-cache-{os.getpid()}"),
               TRITON_ALWAYS_COMPILE="1", TRITON_DEFAULT_FP_FUSION="1")
    best = None
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", COMPILE, str(py)] + ([out_dir] if out_dir else []),
                           capture_output=True, text=True, env=env)
        if r.returncode != 0 or not r.stdout.strip():
            return None
        t = float(r.stdout.strip().splitlines()[-1]) * 1e3
        best = t if best is None else min(best, t)
    return best


def cold_start(path):
    times = []
    for _ in range(5):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "verilayout.cli", "audit", path], capture_output=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--checks-out", metavar="FILE", help="write every PTX check [file, line, check, status]")
    ap.add_argument("--checks-expect", metavar="FILE", help="compare the PTX checks with a --checks-out file")
    args = ap.parse_args(argv)
    rows: list = []
    paths = args.paths or [p for p in (str(ROOT / "tests" / "corpus"), str(ROOT / "examples")) if os.path.isdir(p)]
    files = expand_paths(paths)
    if not files:
        print("no .ttgir files")
        return 2
    t0 = time.perf_counter()
    per = warm(files, args.reps, rows)
    total = time.perf_counter() - t0
    print(f"{len(files)} files, {args.reps} reps, {total:.1f} s in one process")
    medians = {}
    for kind in (".ttgir", ".ptx"):
        sub = {f: t for f, t in per.items() if f.endswith(kind)}
        if not sub:
            continue
        ms = sorted(sub.values())
        medians[kind] = statistics.median(ms)
        print(f"{kind[1:].upper()} audit, warm: {len(ms)} files, median {medians[kind]:.2f} ms/file, "
              f"p90 {ms[int(0.9 * (len(ms) - 1))]:.2f}, max {ms[-1]:.2f} ({max(sub, key=sub.get)})")
    for py in sorted(glob.glob(str(ROOT / "examples" / "*.py"))):
        tt = Path(py).with_suffix(".ttgir")
        if not tt.exists() or "def compile_ttgir" not in Path(py).read_text():
            continue
        with tempfile.TemporaryDirectory() as d:
            c = triton_compile_ms(py, d)
            a = per.get(str(tt)) or min(_time(lambda: audit_file(str(tt))) for _ in range(args.reps)) * 1e3
            ctext = "n/a (Triton not importable)" if c is None else f"{c:.0f} ms"
            ratio = "" if c is None else f" ({a / c * 100:.1f}% of the compile)"
            print(f"{Path(py).name}: Triton compile {ctext}, TTGIR audit {a:.2f} ms{ratio}")
            kp = os.path.join(d, "kernel.ptx")
            if c is not None and os.path.exists(kp):
                rows.extend(_rows(f"examples/{Path(py).name}:kernel.ptx", audit_any(kp)))
                pa = min(_time(lambda: audit_any(kp)) for _ in range(args.reps)) * 1e3
                print(f"  PTX audit of this kernel (paired with its TTGIR) {pa:.2f} ms = {pa / c * 100:.1f}% "
                      "of its compile")
            if c is not None and ".ptx" in medians:
                print(f"  PTX audit median over the corpus {medians['.ptx']:.2f} ms = "
                      f"{medians['.ptx'] / c * 100:.1f}% of this compile")
    print(f"cold start (python -m verilayout.cli audit {Path(files[0]).name}): {cold_start(files[0]):.3f} s")
    if args.checks_out:
        with open(args.checks_out, "w") as f:
            json.dump(rows, f)
    if args.checks_expect:
        with open(args.checks_expect) as f:
            want = [list(r) for r in json.load(f)]
        # a multiset: the order of checks within a file follows the audit's walk, not a contract
        got = collections.Counter(map(tuple, rows))
        exp = collections.Counter(map(tuple, want))
        if got != exp:
            extra, lost = sorted((got - exp).elements()), sorted((exp - got).elements())
            print(f"PTX checks DIFFER from {args.checks_expect}: {len(rows)} vs {len(want)} checks; "
                  f"{len(extra)} new (first {extra[:3]}), {len(lost)} gone (first {lost[:3]})")
            return 1
        print(f"PTX checks: all {len(rows)} (file, line, check, status) of {len({r[0] for r in rows})} PTX files "
              f"equal those of {args.checks_expect}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
