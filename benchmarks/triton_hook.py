"""What `verilayout.triton.install()` costs a test run that compiles N small kernels from scratch.

    python benchmarks/triton_hook.py [--kernels 36] [--repeat 1] [--modes off,hook,background,cached]
                                     [--modes off,background,flush-each]

One run is one fresh Python process that imports Triton, optionally installs the hook, and
compiles N distinct small kernels with ``triton.compile(..., target=GPUTarget("cuda", 90, 32))``
(no GPU needed): a third element-wise (each with its own constant), a third row reductions
(sum, max, softmax), a third small fp16 ``tl.dot`` tiles (shared memory, wgmma: the audit's real
work). Every run gets an empty ``TRITON_CACHE_DIR`` and a fresh verilayout cache folder
(``XDG_CACHE_HOME``), so neither cache answers, except in mode ``cached``, which reuses the
verilayout cache the ``hook`` run of the same round filled, compiling again (Triton's cache
emptied) to the same paths: a CI run that keeps the audit cache between runs.

Modes: ``off`` (the baseline: no hook), ``hook`` (``install()``: each kernel audited in the
compile), ``background`` (``install(background=True)``: audits in a worker process, then
``flush()``), ``cached`` (``install()`` on the kept audit cache); on request (``--modes``),
``flush-each`` (``background``, with ``flush()`` after each compile: a suite whose tests do
nothing after compiling, so each test waits for its kernel's audit; its compile path holds every
wait, and its path CPU leaves out the worker's, so read its wall).

CPU time of a run is the user + system time of that process and everything it waited for
(ptxas, the background worker), read with ``resource.getrusage(RUSAGE_CHILDREN)`` around it;
wall time is measured too. The compile's critical path is the same process up to the end of its
last compile, before ``flush()``: its CPU is the driver's own time plus the ptxas runs it waited
for (``getrusage`` in the driver; the background worker is not reaped yet, so not counted), its
wall the run's wall less the time ``flush()`` waited. Modes are rotated by one each round (with
``--repeat``), so a change of the machine's load does not always fall on the same mode.

Printed per mode: CPU seconds, wall seconds, and the ratios against ``off`` measured in the same
run, for the whole run and for the compile's critical path. For the in-line modes (``hook``,
``cached``) also the CPU spent inside the listener (``time.process_time`` around each call): in all,
at the first kernel (an element-wise one, whose own audit takes a few ms: the rest is loading the
audit's modules, numpy and z3), and at the other kernels by kind; the rest of a mode's extra CPU
over ``off`` is printed in parts: the hook's start (importing ``verilayout.triton`` and ``install()``,
``time.process_time`` around them) and what is left, mostly the process's exit (Python tearing down
the audit's modules, numpy and z3: about 0.05 s measured on this machine) and the load's noise.
The issue's bar is the CPU ratio of the whole run (<= 1.10); ``background`` moves the audit off the critical path, it does not remove
its CPU (the worker does the same audits), so its whole-run CPU ratio is ``hook``'s plus the
worker's start.
"""
from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ELEMENTWISE = '''
@triton.jit
def ew_{i}(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(z_ptr + offs, x * {c} + y, mask=m)
'''

REDUCTION = '''
@triton.jit
def red_{i}(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0) * {c}
    {body}
'''

BODIES = ("tl.store(y_ptr + row, tl.sum(x, axis=0))",
          "tl.store(y_ptr + row, tl.max(x, axis=0))",
          "e = tl.exp(x - tl.max(x, axis=0))\n    tl.store(y_ptr + row * N + cols, e / tl.sum(e, axis=0), mask=cols < N)")

DOT = '''
@triton.jit
def dot_{i}(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], (acc * {c}).to(tl.float16))
'''

DRIVER = '''
import json
import resource
import sys
import time
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
mode = sys.argv[1]
HOOK = []                     # in-line modes: (kernel name, CPU seconds the audit listener took)
START = time.process_time()   # the hook's start: import verilayout.triton, install()
if mode in ("hook", "cached"):
    import verilayout.triton
    from triton import knobs
    verilayout.triton.install()
    START = time.process_time() - START
    audit = knobs.compilation.listener

    def timed(**kw):
        t = time.process_time()
        audit(**kw)
        HOOK.append((kw["metadata"].get("name", "?"), time.process_time() - t))
    knobs.compilation.listener = timed
elif mode in ("background", "flush-each"):
    import verilayout.triton
    verilayout.triton.install(background=True)
if mode not in ("hook", "cached"):
    START = time.process_time() - START if mode != "off" else 0.0
{kernels}
target = GPUTarget("cuda", 90, 32)
for fn, sig, consts, warps in JOBS:
    attrs = {{(i,): [["tt.divisibility", 16]] for i, t in enumerate(sig.values()) if t.startswith("*")}}
    triton.compile(triton.compiler.ASTSource(fn, sig, consts, attrs=attrs), target=target,
                   options={{"num_warps": warps, "num_stages": 2}})
    if mode == "flush-each":
        verilayout.triton.flush()
own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
path_cpu = own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime   # ptxas waited; the worker not
t = time.perf_counter()
if mode == "background":
    verilayout.triton.flush()
print("VL_BENCH " + json.dumps({{"path_cpu": path_cpu, "flush_wall": time.perf_counter() - t, "hook": HOOK, "start": START}}))
'''


def kernels_source(n: int) -> str:
    """N distinct kernels and the JOBS list compiling each (kind i % 3; constant 1 + i / 64)."""
    parts, jobs = [], []
    for i in range(n):
        c = f"{1 + i / 64:.6f}"
        kind = i % 3
        if kind == 0:
            parts.append(ELEMENTWISE.format(i=i, c=c))
            jobs.append(f'(ew_{i}, {{"x_ptr": "*fp32", "y_ptr": "*fp32", "z_ptr": "*fp32", "n": "i32", '
                        f'"BLOCK": "constexpr"}}, {{"BLOCK": {(256, 512, 1024)[i // 3 % 3]}}}, 4)')
        elif kind == 1:
            body = BODIES[i // 3 % 3]
            parts.append(REDUCTION.format(i=i, c=c, body=body))
            jobs.append(f'(red_{i}, {{"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", "BLOCK": "constexpr"}}, '
                        f'{{"BLOCK": {(256, 512, 1024)[i // 9 % 3]}}}, 4)')
        else:
            parts.append(DOT.format(i=i, c=c))
            bm, bn, bk = ((64, 64, 32), (64, 128, 32), (128, 64, 64))[i // 3 % 3]
            jobs.append(f'(dot_{i}, {{"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "K": "i32", '
                        f'"BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}}, '
                        f'{{"BM": {bm}, "BN": {bn}, "BK": {bk}}}, 4)')
    return "\n".join(parts) + "\nJOBS = [\n    " + ",\n    ".join(jobs) + "\n]\n"


def snapshot(work: str) -> str:
    """A copy of the package, byte-compiled, that the runs import: the audit cache's key holds
    the package's code, which other work in the same tree may change during the benchmark."""
    dest = os.path.join(work, "src")
    shutil.copytree(ROOT / "verilayout", os.path.join(dest, "verilayout"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    compileall.compile_dir(dest, quiet=1)
    return dest


@dataclass(frozen=True)
class Run:
    """One run's figures: CPU seconds of the whole process tree, wall seconds, and the same two
    on the compile's critical path (up to the end of the last compile, before ``flush()``)."""
    cpu: float
    wall: float
    path_cpu: float
    path_wall: float
    hook: tuple[tuple[str, float], ...] = ()    # in-line modes: the listener's CPU, see hook_split
    start: float = 0.0                          # CPU of importing verilayout.triton and install()

    def __add__(self, other: "Run") -> "Run":
        merged = dict(self.hook)
        for part, seconds in other.hook:
            merged[part] = merged.get(part, 0.0) + seconds
        return Run(self.cpu + other.cpu, self.wall + other.wall, self.path_cpu + other.path_cpu,
                   self.path_wall + other.path_wall, tuple(merged.items()), self.start + other.start)


def hook_split(calls: list) -> tuple[tuple[str, float], ...]:
    """The in-line listener's CPU seconds, whole and in parts: the first kernel (it loads the audit's
    modules, numpy and z3 with them; an element-wise kernel, whose own audit is a few ms), then the
    other kernels by kind (the name's prefix: ``ew``, ``red``, ``dot``).

    >>> hook_split([["ew_0", 0.2], ["red_1", 0.01], ["dot_2", 0.05], ["dot_5", 0.04]])
    (('listener', 0.3), ('first', 0.2), ('red', 0.01), ('dot', 0.09))
    """
    if not calls:
        return ()
    parts = {"listener": round(sum(s for _, s in calls), 9), "first": calls[0][1]}
    for name, seconds in calls[1:]:
        kind = name.split("_")[0]
        parts[kind] = round(parts.get(kind, 0.0) + seconds, 9)
    return tuple(parts.items())


def run(script: str, mode: str, triton_dir: str, xdg: str, src: str) -> Run:
    """The figures of one fresh process compiling the kernels into the (emptied) Triton cache
    ``triton_dir``; a run that fails ends the benchmark with its last line of stderr."""
    shutil.rmtree(triton_dir, ignore_errors=True)
    env = dict(os.environ, TRITON_CACHE_DIR=triton_dir, XDG_CACHE_HOME=xdg,
               PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-W", "ignore", script, mode], env=env, capture_output=True,
                       text=True, timeout=1800)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("VL_BENCH ")]
    if r.returncode != 0 or not lines:
        sys.exit(f"mode {mode}: " + (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1])
    got = json.loads(lines[-1].split(" ", 1)[1])
    return Run(cpu, wall, got["path_cpu"], wall - got["flush_wall"], hook_split(got.get("hook", [])),
               got.get("start", 0.0))


def round_order(modes: list[str], rnd: int) -> list[str]:
    """The modes of round ``rnd``, rotated by one each round (a load that changes during a round
    does not always fall on the same mode); ``cached`` stays right after ``hook``.

    >>> round_order(["off", "hook", "cached", "background"], 1)
    ['hook', 'cached', 'background', 'off']
    """
    groups = [[m] for m in modes if m != "cached"]
    for g in groups:
        if g == ["hook"] and "cached" in modes:
            g.append("cached")
    k = rnd % len(groups)
    return [m for g in groups[k:] + groups[:k] for m in g]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", type=int, default=36)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--modes", default="off,hook,background,cached")
    args = ap.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    if "off" not in modes:
        modes.insert(0, "off")
    if "cached" in modes and "hook" not in modes:
        modes.insert(modes.index("cached"), "hook")
    totals = {m: Run(0.0, 0.0, 0.0, 0.0) for m in modes}
    with tempfile.TemporaryDirectory() as work:
        script = os.path.join(work, "compile_kernels.py")
        Path(script).write_text(DRIVER.format(kernels=kernels_source(args.kernels)))
        src = snapshot(work)
        for rnd in range(args.repeat):
            kept = tempfile.mkdtemp(dir=work)           # the hook run's cache, reused by `cached`
            for m in round_order(modes, rnd):
                xdg = kept if m in ("hook", "cached") else tempfile.mkdtemp(dir=work)
                # the audit cache keys a file by its path too: `cached` compiles to the same paths
                triton_dir = os.path.join(work, f"triton-{rnd}-{'hook' if m == 'cached' else m}")
                got = run(script, m, triton_dir, xdg, src)
                totals[m] = totals[m] + got
                print(f"round {rnd + 1} {m:>10}: CPU {got.cpu:7.2f} s (compile path {got.path_cpu:6.2f})"
                      f"  wall {got.wall:7.2f} s (compile path {got.path_wall:6.2f})" + hook_text(got.hook), flush=True)
    print(table(totals, args.kernels, args.repeat))


def hook_text(hook: tuple[tuple[str, float], ...]) -> str:
    """The listener's CPU as printed after a run's figures (empty for the modes without it).

    >>> hook_text((("listener", 0.3), ("first", 0.2), ("dot", 0.1)))
    '  hook CPU 0.30 s: first kernel 0.20, dot 0.10'
    """
    if not hook:
        return ""
    (_, whole), *parts = hook
    return f"  hook CPU {whole:.2f} s: " + ", ".join(f"{k} {'kernel ' if k == 'first' else ''}{v:.2f}"
                                                   for k, v in parts)


def table(totals: dict[str, Run], kernels: int, repeat: int) -> str:
    """The summary: per mode the seconds and the ratios against ``off`` of the whole run and of
    the compile's critical path (for ``off``, ``hook`` and ``cached`` the two are the same run up
    to the process's exit; ``background`` leaves the worker's audits out of the path)."""
    base = totals["off"]
    out = [f"\n{kernels} kernels, {repeat} round(s); ratios against `off` in the same run",
           f"{'mode':>10} {'CPU s':>8} {'wall s':>8} {'CPU ratio':>10} {'wall ratio':>11}"
           f" {'path CPU ratio':>15} {'path wall ratio':>16}"]
    for m, r in totals.items():
        out.append(f"{m:>10} {r.cpu:8.2f} {r.wall:8.2f} {r.cpu / base.cpu:10.3f} {r.wall / base.wall:11.3f}"
                   f" {r.path_cpu / base.path_cpu:15.3f} {r.path_wall / base.path_wall:16.3f}")
    for m, r in totals.items():
        if r.hook:
            out.append(f"{m:>10} in the listener, against `off` CPU: " + ", ".join(
                f"{k} {v / base.cpu:.3f}" for k, v in r.hook))
            out.append(extra_text(m, r, base))
    return "\n".join(out)


def extra_text(mode: str, r: Run, base: Run) -> str:
    """An in-line mode's CPU over ``off``, against ``off``'s CPU, in parts: the listener, the hook's
    start (importing ``verilayout.triton``, ``install()``) and the rest (mostly the process's exit,
    which tears down the modules the audit loaded, numpy and z3; plus the load's noise).

    >>> extra_text("hook", Run(6.0, 0, 0, 0, (("listener", 0.5),), 0.05), Run(5.0, 0, 0, 0))
    '      hook extra CPU over `off`: 0.200 = listener 0.100 + start 0.010 + rest (exit, noise) 0.090'
    """
    listener = dict(r.hook).get("listener", 0.0)
    extra = r.cpu - base.cpu
    return (f"{mode:>10} extra CPU over `off`: {extra / base.cpu:.3f} = listener {listener / base.cpu:.3f}"
            f" + start {r.start / base.cpu:.3f} + rest (exit, noise) {(extra - listener - r.start) / base.cpu:.3f}")


if __name__ == "__main__":
    main()
