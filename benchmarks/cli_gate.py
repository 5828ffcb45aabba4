"""verilayout as a CI gate: cold start, the result cache, and ``--jobs`` scaling.

    python benchmarks/cli_gate.py [--files 300] [--reps 5] [--skip-jobs]

Each figure is a ratio against a baseline measured in the same run:

* cold start: ``verilayout --help``, ``--version`` and ``audit`` of one small file (uncached, and
  answered from the result cache), each the median wall time of ``--reps`` fresh processes, next
  to ``python -c pass`` (the interpreter's own start). Goal: <= 0.3 s.
* result cache: ``verilayout audit DIR`` of a folder of ``--files`` kernel files (the corpus'
  TTGIR and PTX files, copied round-robin, each copy made distinct by a trailing comment line)
  with an empty cache, then again with the cache it filled. Goal: the second run <= 5% of the first.
* ``--jobs``: the same folder audited with ``--no-cache`` at 1, 2 and 4 processes; speedup over
  1 process. Goal: >= 0.8 x N up to the number of cores (printed: more processes than cores
  cannot help).
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# byte-compiled modules as an installed package has them (PYTHONDONTWRITEBYTECODE would make every
# start compile the whole package from source); the bytecode goes to a folder of this run
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV.update(PYTHONPATH=str(ROOT), PYTHONPYCACHEPREFIX=os.path.join(tempfile.gettempdir(), "vl-gate-pyc"))
SMALL = ROOT / "examples" / "w4a16.ttgir"


def wall(argv: list[str], reps: int) -> tuple[float, float]:
    """Median wall seconds and median CPU seconds (user + system) of ``reps`` fresh processes
    running ``argv`` (CPU time is what a loaded machine does not inflate)."""
    times, cpu = [], []
    for _ in range(reps):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(argv, env=ENV, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    return statistics.median(times), statistics.median(cpu)


def cold_start(reps: int, cache: str) -> None:
    cli = [sys.executable, "-m", "verilayout.cli"]
    base, base_cpu = wall([sys.executable, "-c", "pass"], reps)
    print(f"cold start (median of {reps}; python -c pass = {base:.3f} s wall, {base_cpu:.3f} s CPU; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} core(s)):")
    subprocess.run(cli + ["audit", str(SMALL), "--cache", cache], env=ENV, stdout=subprocess.DEVNULL)
    subprocess.run(cli + ["--help"], env=ENV, stdout=subprocess.DEVNULL)   # bytecode written once
    for name, argv in (("--help", ["--help"]), ("--version", ["--version"]),
                       ("audit small file, uncached", ["audit", str(SMALL), "--no-cache"]),
                       ("audit small file, cached", ["audit", str(SMALL), "--cache", cache])):
        t, c = wall(cli + argv, reps)
        print(f"  {name:28s} wall {t:6.3f} s = {t / base:5.1f}x python -c pass; CPU {c:6.3f} s, "
              f"{c - base_cpu:6.3f} s over python -c pass  (goal <= 0.3 s: wall "
              f"{'met' if t <= 0.3 else 'NOT met'}, CPU {'met' if c <= 0.3 else 'NOT met'})")


def make_folder(n: int, where: Path) -> Path:
    """``n`` kernel files (TTGIR with the PTX beside it where the corpus has one), distinct bytes."""
    src = sorted((ROOT / "tests" / "corpus").rglob("*.ttgir"))
    out = where / "kernels"
    count = 0
    for i in range(n):
        t = src[i % len(src)]
        d = out / f"{i:04d}"
        d.mkdir(parents=True)
        for ext in (".ttgir", ".ptx"):
            f = t.with_suffix(ext)
            if f.exists() and count < n:
                (d / f.name).write_bytes(f.read_bytes() + f"\n// copy {i}\n".encode())
                count += 1
        if count >= n:
            break
    return out


def run_audit(folder: Path, *extra: str) -> float:
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "verilayout.cli", "audit", str(folder), "--fail-on", "never",
                        *extra], env=ENV, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise SystemExit(f"audit failed ({r.returncode}): {r.stderr.decode()[-300:]}")
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=300)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--skip-jobs", action="store_true")
    ap.add_argument("--cold-only", action="store_true", help="only the cold-start figures")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="vl-gate-"))
    try:
        cold_start(args.reps, str(tmp / "cache-small"))
        if args.cold_only:
            return
        folder = make_folder(args.files, tmp)
        n = sum(1 for _ in folder.rglob("*.*"))
        first = run_audit(folder, "--cache", str(tmp / "cache"))
        second = run_audit(folder, "--cache", str(tmp / "cache"))
        print(f"result cache, {n} files: first {first:.2f} s, second {second:.2f} s = "
              f"{100 * second / first:.1f}% of the first (goal <= 5%: {'met' if second <= 0.05 * first else 'NOT met'})")
        if not args.skip_jobs:
            cores = os.cpu_count() or 1
            one = run_audit(folder, "--no-cache", "--jobs", "1")
            print(f"--jobs on {n} files, {cores} CPU core(s) on this machine (load average "
                  f"{os.getloadavg()[0]:.1f}): 1 job {one:.2f} s")
            for j in (2, 4):
                t = run_audit(folder, "--no-cache", "--jobs", str(j))
                goal = 0.8 * min(j, cores)
                print(f"  {j} jobs {t:.2f} s: speedup {one / t:.2f}x (goal >= {goal:.1f}x with "
                      f"{min(j, cores)} usable core(s): {'met' if one / t >= goal else 'NOT met'})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
