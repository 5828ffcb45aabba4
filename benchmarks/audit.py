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

* ``--harvest [N]``: the harvested third-party corpus (``tests/harvest``: 2068 TTGIR+PTX pairs of
  14 PyPI packages), N pairs (default 60) taken evenly from the manifest's order: each pair audited
  in this process (TTGIR and PTX together, as ``verilayout audit X.ttgir X.ptx``; CPU time, the
  first audit of that pair) and its kernel compiled again by Triton from the package's source, as
  the harvester compiled it (``tests/harvest/worker.py``'s loader and ``compile_one``, the recorded
  signature, constexprs, warps, stages and target) in a subprocess per source file, after a
  warm-up compile there (CPU time of the process and of its ptxas children). Prints per pair audit
  CPU / compile CPU, the median, p90 and max ratio, and the slowest audits with their seconds;
  ``--profile K`` runs cProfile on the K slowest audits and prints where their time goes.
  ``--phases`` times the audit's phases (:data:`PHASES`: reading each text, the TTGIR checks, each
  family of PTX checks; each phase's CPU counted at its outermost call, the rest "other") in the
  same audits (each pair's first), over all pairs and over the pairs whose compile is below the
  median (the small kernels that set the median ratio): where the audit's time goes without
  cProfile's per-call cost, which inflates Python-heavy code several times over against z3 and
  numpy (the clock's own cost, a few calls a pair, is in the figures).
  ``--harvest-dir`` (default ``/tmp/harvest_corpus``, else extracted to a temp folder) and
  ``--packages-dir`` (the harvester's download cache, default ``/tmp/verilayout-harvest``, holding
  ``<name>-<version>/``; a pair whose package is missing has no compile figure).
  ``--compile-record FILE`` keeps the compile figures (JSON, per pair): pairs already in FILE are
  not compiled again (the compile does not depend on verilayout), new ones are added.
  Goals (issue "the audit at the compiler's speed"): median <= 2%, p90 <= 8%, max <= 25%, no
  kernel's audit above 5 s.

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


HARVEST_COMPILE = r"""
import json, os, sys, time
from pathlib import Path
req = json.loads(sys.stdin.read())
sys.path.insert(0, req["harvest"])
import worker                                   # tests/harvest/worker.py
import triton, triton.language as tl
worker.install_stubs()

def cpu():
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system

@triton.jit
def _warm(x_ptr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(x_ptr + o, tl.load(x_ptr + o) + 1)

root = Path(req["root"])
ns = worker.Loader(root).load(root / req["source"])
for job in req["jobs"]:
    worker.compile_one(_warm, {"x_ptr": "*fp32"}, {"BLOCK": 128}, job["target"], 4, 1)  # warm-up
    out = {"key": job["key"]}
    try:
        fn = worker.unwrap(ns[job["kernel"]])[0]
        c0, w0 = cpu(), time.perf_counter()
        res = worker.compile_one(fn, job["signature"], job["constexprs"], job["target"], job["num_warps"],
                                 job["num_stages"])
        out.update(cpu=cpu() - c0, wall=time.perf_counter() - w0)
        if "error" in res:
            out["error"] = res["error"]
        else:
            out["ptx_lines"] = res["ptx"].count(chr(10))
    except Exception as e:
        out["error"] = f"{type(e).__name__}: {e}"[:300]
    print(json.dumps(out), flush=True)
"""


def _evenly(n_all: int, n: int) -> list[int]:
    """``n`` indices spread evenly over ``range(n_all)`` (first and last included)."""
    if n >= n_all:
        return list(range(n_all))
    return sorted({round(i * (n_all - 1) / max(1, n - 1)) for i in range(n)})


def _harvest_folder(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    if (Path("/tmp/harvest_corpus") / "manifest.json").exists() or (Path("/tmp/harvest_corpus") / "cuda90").is_dir():
        return Path("/tmp/harvest_corpus")
    sys.path.insert(0, str(ROOT / "tests" / "harvest"))
    from corpus import extract  # noqa: E402  (tests/harvest/corpus.py)
    return extract(Path(tempfile.mkdtemp(prefix="vl-harvest-")))


def _cpu() -> float:
    """CPU seconds of this process (``process_time``: fine-grained) and its waited-for children."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


def _compile_harvest(rows: list[dict], packages: Path) -> dict[str, dict]:
    """Each row's kernel compiled again (see the module docstring); key -> {cpu, wall} or {error}."""
    groups: dict[tuple, list] = collections.defaultdict(list)
    versions = {}
    for r in rows:
        groups[(r["package"], r["version"], r["source"])].append(r)
    out: dict[str, dict] = {}
    tmp = tempfile.mkdtemp(prefix="vl-bench-harvest-")
    env = dict(os.environ, TRITON_CACHE_DIR=os.path.join(tmp, "cache"), TRITON_ALWAYS_COMPILE="1")
    script = os.path.join(tmp, "compile_harvested.py")        # a file: @triton.jit reads its source
    Path(script).write_text(HARVEST_COMPILE)
    for (pkg, version, source), rs in groups.items():
        root = packages / f"{pkg}-{version}"
        keys = [r["ttgir"][:-len(".ttgir")] for r in rs]
        if not root.is_dir():
            out.update({k: {"error": f"package not in {packages}"} for k in keys})
            continue
        req = {"harvest": str(ROOT / "tests" / "harvest"), "root": str(root), "source": source,
               "jobs": [{**{f: r[f] for f in ("kernel", "signature", "constexprs", "target", "num_warps",
                                               "num_stages")}, "key": k} for r, k in zip(rs, keys)]}
        p = subprocess.run([sys.executable, script], input=json.dumps(req), capture_output=True,
                           text=True, env=env, cwd=str(root), timeout=1800)
        got = {}
        for line in p.stdout.splitlines():
            if line.startswith("{") and '"key"' in line:
                d = json.loads(line)
                got[d.pop("key")] = d
        for k in keys:
            out[k] = got.get(k, {"error": f"compile process ended with {p.returncode}: {p.stderr.strip()[-200:]}"})
        versions[pkg] = version
    return out


#: The audit's phases timed by ``--phases``: (module, function), each a sibling of the others in
#: the audit of a pair (none calls another).
PHASES = (("verilayout.frontends.ttgir", "parse_module"), ("verilayout.audit.ttgir", "audit_module"),
          ("verilayout.frontends.ptx", "parse_ptx"), ("verilayout.audit.ptx_partitions", "partitioned"),
          ("verilayout.audit.ptx", "_dot_checks"), ("verilayout.audit.ptx_smem", "smem_checks"),
          ("verilayout.audit.ptx_elements", "element_checks"), ("verilayout.audit.ptx_elements", "convert_checks"),
          ("verilayout.audit.ptx_shuffles", "register_permute_checks"),
          ("verilayout.audit.ptx_tmem", "tmem_message_checks"), ("verilayout.audit.paths", "at_call_sites"),
          ("verilayout.audit.ptx_reductions", "warp_reduce_checks"))


class PhaseClock:
    """CPU seconds per phase of :data:`PHASES` (outermost calls only), by wrapping each function
    where the audit's modules hold it; :meth:`restore` puts the functions back."""

    def __init__(self) -> None:
        import importlib
        self.cpu: dict[str, float] = collections.Counter()
        self._patched: list[tuple[object, str, object]] = []
        for mod_name, fn in PHASES:
            f = getattr(importlib.import_module(mod_name), fn)
            w = self._wrapped(f, f"{mod_name.rsplit('.', 1)[-1]}.{fn}")
            for mod in list(sys.modules.values()):
                if (getattr(mod, "__name__", "") or "").startswith("verilayout") and getattr(mod, fn, None) is f:
                    self._patched.append((mod, fn, f))
                    setattr(mod, fn, w)

    def _wrapped(self, f, name: str):
        active: list[bool] = []

        def timed(*a, **k):
            if active:                                  # a nested call: counted by the outer one
                return f(*a, **k)
            active.append(True)
            t = _cpu()
            try:
                return f(*a, **k)
            finally:
                self.cpu[name] += _cpu() - t
                active.pop()
        return timed

    def restore(self) -> None:
        for mod, fn, f in self._patched:
            setattr(mod, fn, f)


def _phases(per_pair: dict[str, dict[str, float]], audits: dict, compiles: dict) -> None:
    """The ``--phases`` table (see the module docstring) from each pair's phase CPU."""
    cpus = [compiles[k]["cpu"] for k in audits if "cpu" in compiles.get(k, {})]
    cut = statistics.median(cpus) if cpus else float("inf")
    sets = {"pairs": list(audits), "pairs compiled in under the median compile CPU": [
        k for k in audits if compiles.get(k, {}).get("cpu", float("inf")) < cut]}
    for label, ks in sets.items():
        total = sum(audits[k][0] for k in ks)
        got: dict[str, float] = collections.Counter()
        for k in ks:
            got.update(per_pair[k])
        print(f"phases over {len(ks)} {label}: {total:.2f} s audit CPU, {total / max(1, len(ks)) * 1e3:.1f} ms a pair")
        rows = sorted(got.items(), key=lambda kv: -kv[1]) + [("other (files, prescan, suggestions, ...)",
                                                              total - sum(got.values()))]
        for name, sec in rows:
            print(f"  {name:42s} {sec:8.3f} s {sec / total * 100 if total else 0:5.1f}%")


def _audit_cpu(stem: Path) -> tuple[float, float, int]:
    """CPU and wall seconds of ``verilayout audit X.ttgir X.ptx`` in this process, and the checks."""
    from verilayout.audit.paths import audit_paths
    c0, w0 = _cpu(), time.perf_counter()
    rep = audit_paths([str(stem) + ".ttgir", str(stem) + ".ptx"])
    return _cpu() - c0, time.perf_counter() - w0, sum(len(f.checks) for f in rep.files)


def _quantile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))]


def harvest(n: int, folder: str | None, packages: str, profile: int, record: str | None = None,
            phases: bool = False) -> int:
    """The ``--harvest`` mode (see the module docstring)."""
    folder_p = _harvest_folder(folder)
    man = json.loads((ROOT / "tests" / "harvest" / "manifest.json").read_text())
    rows = [man["files"][i] for i in _evenly(len(man["files"]), n)]
    warm_up = sorted((ROOT / "tests" / "corpus" / "cuda90").glob("*.ptx"))[:1]
    if warm_up:
        _audit_cpu(warm_up[0].with_suffix(""))           # imports, not counted
    t0 = time.perf_counter()
    audits = {}
    clock = PhaseClock() if phases else None
    per_pair: dict[str, dict[str, float]] = {}
    try:
        for r in rows:
            key = r["ttgir"][:-len(".ttgir")]
            before = dict(clock.cpu) if clock else {}
            audits[key] = _audit_cpu(folder_p / key)
            if clock:
                per_pair[key] = {k: v - before.get(k, 0.0) for k, v in clock.cpu.items()}
    finally:
        if clock:
            clock.restore()
    t_audit = time.perf_counter() - t0
    t0 = time.perf_counter()
    kept = json.loads(Path(record).read_text()) if record and Path(record).exists() else {}
    todo = [r for r in rows if r["ttgir"][:-len(".ttgir")] not in kept or "cpu" not in kept[r["ttgir"][:-len(".ttgir")]]]
    compiles = {**kept, **(_compile_harvest(todo, Path(packages)) if todo else {})}
    if record:
        Path(record).write_text(json.dumps(compiles, indent=0, sort_keys=True))
    t_compile = time.perf_counter() - t0
    print(f"harvested corpus: {len(rows)} of {len(man['files'])} pairs (evenly), audited in {t_audit:.0f} s, "
          f"compiled again in {t_compile:.0f} s wall ({len(rows) - len(todo)} compile figures from {record})")
    print(f"{'pair':72s} {'audit CPU':>9s} {'compile CPU':>11s} {'ratio':>7s} checks")
    ratios = []
    for key, (a_cpu, _a_wall, n_checks) in audits.items():
        c = compiles.get(key, {})
        if "cpu" in c and "error" not in c:
            ratios.append((a_cpu / c["cpu"], key))
            stored = (folder_p / (key + ".ptx")).read_text().count("\n")
            same = "" if c.get("ptx_lines", stored) == stored else f"  (recompiled PTX {c.get('ptx_lines')} lines, stored {stored})"
            print(f"{key:72s} {a_cpu:8.3f}s {c['cpu']:10.3f}s {a_cpu / c['cpu'] * 100:6.1f}% {n_checks}{same}")
        else:
            print(f"{key:72s} {a_cpu:8.3f}s {'n/a':>11s} {'':7s} {n_checks}  ({c.get('error', 'not compiled')[:80]})")
    if ratios:
        rs = sorted(x for x, _ in ratios)
        worst = max(ratios)
        print(f"audit CPU / compile CPU over {len(rs)} pairs: median {statistics.median(rs) * 100:.1f}%, "
              f"p90 {_quantile(rs, 0.9) * 100:.1f}%, max {worst[0] * 100:.1f}% ({worst[1]}); "
              "goals: median <= 2%, p90 <= 8%, max <= 25%")
        print(f"sum: audit {sum(audits[k][0] for _r, k in ratios):.1f} s CPU, compile "
              f"{sum(compiles[k]['cpu'] for _r, k in ratios):.1f} s CPU (the pairs with both figures)")
    slow = sorted(audits.items(), key=lambda kv: -kv[1][0])
    print("slowest audits (CPU s, compile CPU s): " + "; ".join(
        f"{k} {a[0]:.2f} s ({compiles.get(k, {}).get('cpu', float('nan')):.2f} s)" for k, a in slow[:5]))
    over = [k for k, a in audits.items() if a[0] > 5]
    print(f"audits above 5 s: {len(over)}" + (f" ({', '.join(over)})" if over else ""))
    for k, _a in slow[:profile]:
        _profile(folder_p / k)
    if phases:
        _phases(per_pair, audits, compiles)
    return 0


def _profile(stem: Path, top: int = 14) -> None:
    """cProfile of one pair's audit: the functions with the most own time, and cumulative time."""
    import cProfile
    import io
    import pstats
    from verilayout.audit.paths import audit_paths
    pr = cProfile.Profile(time.process_time)        # CPU seconds: the machine may be shared
    pr.enable()
    audit_paths([str(stem) + ".ttgir", str(stem) + ".ptx"])
    pr.disable()
    for order in ("tottime", "cumulative"):
        buf = io.StringIO()
        pstats.Stats(pr, stream=buf).sort_stats(order).print_stats(top)
        lines = [ln for ln in buf.getvalue().splitlines() if ln.strip()]
        head = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("ncalls")), 0)
        print(f"profile of {stem.name} by {order}:")
        print("\n".join(lines[head:head + top + 1]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--harvest", type=int, nargs="?", const=60, default=None, metavar="N",
                    help="the harvested corpus mode: N pairs (default 60), audit CPU / compile CPU")
    ap.add_argument("--harvest-dir", default=None, help="the extracted harvested corpus")
    ap.add_argument("--packages-dir", default="/tmp/verilayout-harvest", help="the harvester's package cache")
    ap.add_argument("--profile", type=int, default=0, metavar="K", help="--harvest: profile the K slowest audits")
    ap.add_argument("--phases", action="store_true",
                    help="--harvest: CPU per phase of the audit (reading, TTGIR checks, each PTX check family)")
    ap.add_argument("--compile-record", default=None, metavar="FILE",
                    help="--harvest: compile figures kept in FILE (JSON); pairs in it are not compiled again")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--checks-out", metavar="FILE", help="write every PTX check [file, line, check, status]")
    ap.add_argument("--checks-expect", metavar="FILE", help="compare the PTX checks with a --checks-out file")
    args = ap.parse_args(argv)
    if args.harvest is not None:
        return harvest(args.harvest, args.harvest_dir, args.packages_dir, args.profile, args.compile_record,
                       args.phases)
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
