"""What `verilayout.triton.install()` costs a test run that compiles N small kernels from scratch.

    python benchmarks/triton_hook.py [--kernels 36] [--repeat 1] [--modes off,hook,background,cached]

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
``flush()``), ``cached`` (``install()`` on the kept audit cache).

CPU time of a run is the user + system time of that process and everything it waited for
(ptxas, the background worker), read with ``resource.getrusage(RUSAGE_CHILDREN)`` around it;
wall time is measured too. Printed per mode: CPU seconds, wall seconds, and the ratios
against ``off`` measured in the same round (the issue's bar: CPU ratio <= 1.10).
"""
from __future__ import annotations

import argparse
import compileall
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
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
import sys
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
mode = sys.argv[1]
if mode in ("hook", "cached"):
    import verilayout.triton
    verilayout.triton.install()
elif mode == "background":
    import verilayout.triton
    verilayout.triton.install(background=True)
{kernels}
target = GPUTarget("cuda", 90, 32)
for fn, sig, consts, warps in JOBS:
    attrs = {{(i,): [["tt.divisibility", 16]] for i, t in enumerate(sig.values()) if t.startswith("*")}}
    triton.compile(triton.compiler.ASTSource(fn, sig, consts, attrs=attrs), target=target,
                   options={{"num_warps": warps, "num_stages": 2}})
if mode == "background":
    verilayout.triton.flush()
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


def run(script: str, mode: str, triton_dir: str, xdg: str, src: str) -> tuple[float, float, str]:
    """(CPU seconds, wall seconds, error or "") of one fresh process compiling the kernels into
    the (emptied) Triton cache ``triton_dir``."""
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
    err = "" if r.returncode == 0 else (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]
    return cpu, wall, err


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
    totals = {m: [0.0, 0.0] for m in modes}
    with tempfile.TemporaryDirectory() as work:
        script = os.path.join(work, "compile_kernels.py")
        Path(script).write_text(DRIVER.format(kernels=kernels_source(args.kernels)))
        src = snapshot(work)
        for rnd in range(args.repeat):
            kept = tempfile.mkdtemp(dir=work)           # the hook run's cache, reused by `cached`
            for m in modes:
                xdg = kept if m in ("hook", "cached") else tempfile.mkdtemp(dir=work)
                # the audit cache keys a file by its path too: `cached` compiles to the same paths
                triton_dir = os.path.join(work, f"triton-{rnd}-{'hook' if m == 'cached' else m}")
                cpu, wall, err = run(script, m, triton_dir, xdg, src)
                if err:
                    sys.exit(f"mode {m}: {err}")
                totals[m][0] += cpu
                totals[m][1] += wall
                print(f"round {rnd + 1} {m:>10}: CPU {cpu:7.2f} s  wall {wall:7.2f} s", flush=True)
    base_cpu, base_wall = totals["off"]
    print(f"\n{args.kernels} kernels, {args.repeat} round(s); ratios against `off` in the same run")
    print(f"{'mode':>10} {'CPU s':>8} {'wall s':>8} {'CPU ratio':>10} {'wall ratio':>11}")
    for m in modes:
        cpu, wall = totals[m]
        print(f"{m:>10} {cpu:8.2f} {wall:8.2f} {cpu / base_cpu:10.3f} {wall / base_wall:11.3f}")


if __name__ == "__main__":
    main()
