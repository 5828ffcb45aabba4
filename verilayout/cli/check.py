"""`verilayout check`: prove every obligation of the spec files; exit 0, 1 or 2."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ProcessPoolExecutor

from verilayout.errors import LayoutError

EPILOG = """\
spec format: see specs/README.md (layouts by name, then [[obligation]] tables with a kind:
equal, injective, surjective, invertible, and the kinds the capabilities add).

examples:
  verilayout check                       # every spec under ./specs
  verilayout check specs/ proofs/ --jobs 2 --junit report.xml
  verilayout check my.toml --json
exit codes: 0 every obligation holds, 1 a counterexample (or unknown), 2 bad input
"""


def register(sub) -> None:
    p = sub.add_parser("check", help="prove the obligations of spec files (CI entry point)",
                       description="Prove every obligation in the given spec files "
                       "(default: ./specs).", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="*", help="spec files or directories (default: specs)")
    p.add_argument("--json", action="store_true", help="print one JSON document with every result")
    p.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report to FILE")
    p.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                   help="prove obligations in N processes (default 1)")
    p.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                   help="solver time per obligation; past it the verdict is 'unknown' (default 30)")
    p.add_argument("--smt2", metavar="DIR", help="write every z3 query as an SMT-LIB2 file with "
                   "z3's answer (a certificate another solver can re-check) into DIR")
    p.add_argument("--list-kinds", action="store_true", help="list the obligation kinds and exit")
    p.set_defaults(func=cmd_check)


def _worker(args):
    path, index, timeout_ms, smt2 = args
    import contextlib
    from verilayout.core.smt import record_smt2
    from verilayout.spec.core import load_spec, run_obligation
    spec = _SPEC_CACHE.get(path) or load_spec(path)
    _SPEC_CACHE[path] = spec
    ob = spec.obligations[index]
    ctx = record_smt2(smt2, ob.id) if smt2 else contextlib.nullcontext()
    try:
        with ctx:
            r = run_obligation(spec, ob, timeout_ms)
    except LayoutError as e:
        return {"error": str(e)}
    return {"status": r.verdict.status, "reason": r.verdict.reason,
            "counterexample": r.verdict.counterexample, "method": r.verdict.method,
            "seconds": r.seconds}


_SPEC_CACHE: dict = {}


def _progress(done: int, total: int, start: float) -> None:
    if not sys.stderr.isatty():
        return
    width = 30
    filled = int(width * done / max(total, 1))
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} "
                     f"{time.perf_counter() - start:5.1f}s")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def _fmt_value(v) -> str:
    if isinstance(v, dict):
        return "(" + ", ".join(f"{k}={_fmt_value(x)}" for k, x in v.items()) + ")"
    if isinstance(v, int) and not isinstance(v, bool) and v >= 4096:
        return hex(v)
    return str(v)


def format_counterexample(cex: dict) -> str:
    """One line: inputs first, then each side's value."""
    return ", ".join(f"{k}={_fmt_value(v)}" for k, v in cex.items())


def cmd_check(args) -> int:
    from verilayout.spec.core import collect, kinds, load_spec
    if args.list_kinds:
        print("\n".join(kinds()))
        return 0
    if args.jobs < 1:
        raise LayoutError(f"--jobs {args.jobs}: need at least 1")
    if args.timeout <= 0:
        raise LayoutError(f"--timeout {args.timeout}: need a positive number of seconds")
    paths = args.paths or ["specs"]
    files = collect(paths)
    if not files:
        raise LayoutError(f"no spec files (*.toml) under {', '.join(paths)}")
    specs = [load_spec(f) for f in files]  # every file is read and validated before any proof
    for s in specs:  # layouts that do not parse are input errors, reported before any proof
        for name in s.layouts:
            s.layout(name, f"{s.path}: layouts.{name}")
        _SPEC_CACHE[s.path] = s
    jobs = [(s.path, i, int(args.timeout * 1000), args.smt2)
            for s in specs for i in range(len(s.obligations))]
    obs = [s.obligations[i] for s in specs for i in range(len(s.obligations))]
    start = time.perf_counter()
    results = []
    if args.jobs == 1 or len(jobs) <= 1:
        for k, j in enumerate(jobs):
            results.append(_worker(j))
            _progress(k + 1, len(jobs), start)
    else:
        with ProcessPoolExecutor(max_workers=args.jobs) as ex:
            for k, r in enumerate(ex.map(_worker, jobs, chunksize=max(1, len(jobs) // (4 * args.jobs)))):
                results.append(r)
                _progress(k + 1, len(jobs), start)
    errors = [(ob, r["error"]) for ob, r in zip(obs, results) if "error" in r]
    if errors:
        ob, msg = errors[0]
        raise LayoutError(msg)
    total = time.perf_counter() - start
    rows = []
    for ob, r in zip(obs, results):
        ok = r["status"] == ob.expect
        rows.append({"id": ob.id, "file": ob.file, "name": ob.name, "kind": ob.kind,
                     "expect": ob.expect, "ok": ok, **r})
    failed = [r for r in rows if not r["ok"]]
    if args.json:
        print(json.dumps({"ok": not failed, "total": len(rows), "failed": len(failed),
                          "seconds": total, "results": rows}, indent=1))
    else:
        for r in rows:
            if r["ok"]:
                note = " (expected counterexample)" if r["expect"] == "counterexample" else ""
                print(f"PASS {r['id']} [{r['kind']}] {r['status']}{note}  {r['seconds'] * 1e3:.1f} ms")
            else:
                print(f"FAIL {r['id']} [{r['kind']}] expected {r['expect']}, got {r['status']}")
                print(f"     {r['reason']}")
                if r.get("counterexample"):
                    print(f"     counterexample: {format_counterexample(r['counterexample'])}")
        counts = {s: sum(r["status"] == s for r in rows) for s in ("proved", "counterexample", "unknown")}
        print(f"{len(rows) - len(failed)} passed, {len(failed)} failed "
              f"({counts['proved']} proved, {counts['counterexample']} counterexamples, "
              f"{counts['unknown']} unknown) in {total:.2f}s")
    if args.junit:
        write_junit(args.junit, rows, total)
    return 1 if failed else 0


def write_junit(path: str, rows: list[dict], seconds: float) -> None:
    """JUnit XML: one testsuite per spec file, one testcase per obligation."""
    root = ET.Element("testsuites", name="verilayout", tests=str(len(rows)),
                      failures=str(sum(not r["ok"] for r in rows)), time=f"{seconds:.3f}")
    by_file: dict[str, list[dict]] = {}
    for r in rows:
        by_file.setdefault(r["file"], []).append(r)
    for f, rs in by_file.items():
        suite = ET.SubElement(root, "testsuite", name=f, tests=str(len(rs)),
                              failures=str(sum(not r["ok"] for r in rs)))
        for r in rs:
            case = ET.SubElement(suite, "testcase", classname=f, name=r["name"],
                                 time=f"{r['seconds']:.4f}")
            if not r["ok"]:
                fail = ET.SubElement(case, "failure", type=r["status"],
                                     message=f"{r['kind']}: expected {r['expect']}, got {r['status']}: "
                                     f"{r['reason']}")
                if r.get("counterexample"):
                    fail.text = "counterexample: " + format_counterexample(r["counterexample"])
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
