"""`verilayout check`: prove every obligation of the spec files; exit 0, 1 or 2.

This module parses arguments and prints; loading is :mod:`verilayout.spec.format`,
running :mod:`verilayout.spec.runner`, the report :mod:`verilayout.spec.junit`.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

from verilayout.cli.options import add_jobs_option, add_timeout_option, check_output_file
from verilayout.errors import one_line
from verilayout.errors import LayoutError
from verilayout.spec import collect, load_spec_text, read_text, registry
from verilayout.spec.runner import progress_bar, run_all
from verilayout.spec import junit as spec_junit
from verilayout.spec.junit import write_junit
from verilayout.spec.sarif import sarif_report

EPILOG = """\
spec format: see specs/README.md (layouts by name, then [[obligation]] tables with a kind;
`verilayout check --list-kinds` lists every kind and its keys).

examples:
  verilayout check                       # every spec under ./specs
  verilayout check specs/ proofs/ --jobs 2 --junit report.xml
  verilayout check my.toml --json
  verilayout check --sarif check.sarif    # for GitHub code scanning
exit codes: 0 every obligation holds, 1 a counterexample or unknown (or, with --strict, a spec
file without obligations), 2 an input could not be read or an obligation could not be
evaluated (the others still run and the JUnit report is still written)
"""


def register(sub) -> None:
    p = sub.add_parser("check", help="prove the obligations of spec files (CI entry point)",
                       description="Prove every obligation in the given spec files "
                       "(default: ./specs).", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="*", help="spec files or directories (default: specs)")
    p.add_argument("--json", action="store_true", help="print one JSON document with every result")
    p.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report to FILE "
                   "(its folder must exist)")
    p.add_argument("--sarif", metavar="FILE", help="also write SARIF 2.1.0 to FILE (one error result "
                   "per obligation that fails or cannot be evaluated, at its spec file and line, paths "
                   "relative to the current directory; for GitHub code scanning)")
    add_jobs_option(p, "prove obligations")
    add_timeout_option(p, 30.0, "solver time per obligation")
    p.add_argument("--smt2", metavar="DIR", help="write every z3 query as an SMT-LIB2 file with "
                   "z3's answer (a certificate another solver can re-check) into DIR")
    p.add_argument("--strict", action="store_true",
                   help="a spec file that is empty or has no obligations fails the run (exit 1)")
    p.add_argument("--list-kinds", action="store_true",
                   help="list the obligation kinds with their keys and exit")
    p.set_defaults(func=cmd_check, intermixed="paths")


def format_counterexample(cex: object) -> str:
    """One line: inputs first, then each side's value.

    >>> format_counterexample({"input": {"lane": 2}, "lhs": 4096})
    'input=(lane=2), lhs=0x1000'
    """
    return one_line(spec_junit.format_counterexample(cex))


def list_kinds() -> list[str]:
    """One line per kind: its name, keys (``?`` marks optional ones) and what it claims.

    >>> next(l for l in list_kinds() if l.startswith("equal:"))
    'equal: lhs, rhs  -- the two layouts agree on every input (z3 or GF(2))'
    """
    out = []
    for name, kind in sorted(registry().kinds.items()):
        keys = ", ".join(k + ("?" if role == "optional" else "") for k, role in kind.params.items())
        out.append(f"{name}: {keys}  -- {kind.doc}")
    return out


def _check_options(args) -> None:
    if not math.isfinite(args.timeout) or args.timeout <= 0:
        raise LayoutError(f"--timeout {args.timeout}: need a positive, finite number of seconds")
    if args.timeout > 86400:
        raise LayoutError(f"--timeout {args.timeout}: at most 86400 seconds")
    if args.jobs < 1 or args.jobs > 256:
        raise LayoutError(f"--jobs {args.jobs}: need a number of processes from 1 to 256")
    for flag in ("junit", "sarif"):
        check_output_file(f"--{flag}", getattr(args, flag))
    if args.smt2 is not None:
        d = args.smt2
        if not d or (os.path.exists(d) and not os.path.isdir(d)):
            raise LayoutError(f"--smt2 {d!r}: exists and is not a directory")
        parent = os.path.dirname(os.path.abspath(d))
        if not os.path.isdir(d) and not os.path.isdir(parent):
            raise LayoutError(f"--smt2 {d}: the folder {parent} does not exist")
        if not os.access(d if os.path.isdir(d) else parent, os.W_OK):
            raise LayoutError(f"--smt2 {d}: cannot write there")


def _load(files: list[str]):
    """Every file read and validated before any proof: (specs, texts, load errors)."""
    reg = registry()
    specs, texts, errors = [], [], []
    for f in files:
        try:
            text = read_text(f, "spec")
            spec = load_spec_text(text, f, reg)
        except LayoutError as e:
            errors.append({"id": f, "file": f, "name": "(spec file)", "kind": "load",
                           "expect": "proved", "ok": False, "status": "error", "reason": "",
                           "counterexample": None, "method": "", "seconds": 0.0,
                           "error": str(e)})
            continue
        for name in spec.layouts:  # an unused layout that does not build is still an error
            try:
                spec.layout(name, f"{f}: layouts.{name}")
            except LayoutError as e:
                errors.append({"id": f"{f}::layouts.{name}", "file": f, "name": f"layouts.{name}",
                               "kind": "layout", "expect": "proved", "ok": False,
                               "status": "error", "reason": "", "counterexample": None,
                               "method": "", "seconds": 0.0, "error": str(e)})
            except RecursionError:
                errors.append({"id": f"{f}::layouts.{name}", "file": f, "name": f"layouts.{name}",
                               "kind": "layout", "expect": "proved", "ok": False,
                               "status": "error", "reason": "", "counterexample": None,
                               "method": "", "seconds": 0.0,
                               "error": f"{f}: layouts.{name}: nested too deeply"})
        specs.append(spec)
        texts.append(text)
    return specs, texts, errors


def _print_text(rows: list[dict], warnings: list[str], total: float) -> None:
    for r in rows:
        rid = one_line(r["id"])
        if "error" in r:
            print(f"ERROR {rid} [{one_line(r['kind'])}] {one_line(r['error'])}")
        elif r["ok"]:
            note = " (expected counterexample)" if r["expect"] == "counterexample" else ""
            print(f"PASS {rid} [{r['kind']}] {r['status']}{note}  {r['seconds'] * 1e3:.1f} ms")
        else:
            print(f"FAIL {rid} [{r['kind']}] expected {r['expect']}, got {r['status']}")
            print(f"     {one_line(r['reason'])}")
            if r.get("counterexample"):
                print(f"     counterexample: {format_counterexample(r['counterexample'])}")
    counts = {s: sum(r["status"] == s for r in rows)
              for s in ("proved", "counterexample", "unknown", "error")}
    failed = sum(not r["ok"] and "error" not in r for r in rows)
    errs = f", {counts['error']} errors" if counts["error"] else ""
    print(f"{sum(r['ok'] for r in rows)} passed, {failed} failed{errs} "
          f"({counts['proved']} proved, {counts['counterexample']} counterexamples, "
          f"{counts['unknown']} unknown) in {total:.2f}s")


def cmd_check(args) -> int:
    if args.list_kinds:
        print("\n".join(list_kinds()))
        return 0
    _check_options(args)
    paths = args.paths or ["specs"]
    files = collect(paths)
    if not files:
        raise LayoutError(f"no spec files (*.toml) under {', '.join(paths)}")
    specs, texts, load_errors = _load(files)
    warnings = [w for s in specs for w in s.warnings]
    start = time.perf_counter()
    progress = progress_bar(sys.stderr) if sys.stderr.isatty() else None
    outcomes = run_all(specs, int(args.timeout * 1000), args.jobs, args.smt2, texts, progress)
    total = time.perf_counter() - start
    rows = load_errors + [o.to_dict() for o in outcomes]
    if args.json:
        print(json.dumps({"ok": all(r["ok"] for r in rows) and not (args.strict and warnings),
                          "total": len(rows), "failed": sum(not r["ok"] for r in rows),
                          "errors": sum("error" in r for r in rows), "warnings": warnings,
                          "seconds": total, "results": rows}, indent=1, default=str))
    else:
        _print_text(rows, warnings, total)
    if args.junit:
        try:
            write_junit(args.junit, rows, total)
        except OSError as e:
            raise LayoutError(f"--junit {args.junit}: cannot write: {e.strerror}") from None
    if args.sarif:
        try:
            with open(args.sarif, "w", encoding="utf-8") as fh:
                json.dump(sarif_report(rows, dict(zip([s.path for s in specs], texts)), "."), fh, indent=1)
        except OSError as e:
            raise LayoutError(f"--sarif {args.sarif}: cannot write: {e.strerror}") from None
    for w in warnings:
        if not any("error" in r for r in rows):
            print(f"{'error' if args.strict else 'warning'}: {one_line(w)}"
                  f"{' (--strict)' if args.strict else ''}", file=sys.stderr)
    errors = [r["error"] for r in rows if "error" in r]
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise LayoutError(errors[0] + more)
    if any(not r["ok"] for r in rows) or (args.strict and warnings):
        return 1
    return 0
