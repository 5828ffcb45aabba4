"""`verilayout audit`: check whole kernels as the compiler wrote them (TTGIR files)."""
from __future__ import annotations

import argparse
import json
import os
import sys
import xml.etree.ElementTree as ET

from verilayout.audit import AuditReport, audit_paths
from verilayout.errors import LayoutError

EPILOG = """\
what is checked (no property typed by hand): bank conflicts of every shared-memory load and
store, the wgmma/tcgen05 descriptors of every MMA shared operand (one per K-block, proved),
the register fragment of a register A operand, what each convert_layout costs, and that
trans/reshape/join/split views need no data movement. Ops no check models are listed
'unchecked' with the reason.

examples:
  verilayout audit kernel.ttgir
  verilayout audit ~/.triton/cache --fail-on warning          # every *.ttgir and *.ptx below the folder
  verilayout audit k.ptx                                       # the lowering, against k.ttgir beside it
  verilayout audit k.ttgir --json > audit.json
  verilayout audit k.ttgir --sarif audit.sarif --junit audit.xml
  cat k.ttgir | verilayout audit -
exit codes: 0 clean, 1 findings at or above --fail-on (default error), 2 unreadable input
"""

_ORDER = {"error": 0, "warning": 1, "note": 2, None: 3}


def _jobs(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--jobs {text!r}: expected a whole number >= 0") from None
    if n < 0 or n > 1024:
        raise argparse.ArgumentTypeError(f"--jobs {n}: expected 0 (one per CPU) to 1024")
    return n or (os.cpu_count() or 1)


def register(sub) -> None:
    p = sub.add_parser("audit", help="check every layout of compiled kernels (TTGIR and PTX files)",
                       description="Audit TTGIR files (or folders of them, such as Triton's cache): "
                       "every op that moves data through shared memory or feeds an MMA is checked "
                       "with a proof or a counterexample located at the kernel's source line. PTX files "
                       "(X.ptx beside X.ttgir, as Triton's cache keeps them) are checked against that "
                       "plan: each wgmma descriptor the compiler wrote is proved to read the planned "
                       "K-block of the planned layout.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="+", metavar="PATH", help=".ttgir or .ptx file, folder, or - for stdin (TTGIR)")
    p.add_argument("--jobs", type=_jobs, default=0, metavar="N",
                   help="audit files in N processes (default 0: one per CPU); the report does not depend on N")
    p.add_argument("--json", action="store_true", help="print the report as JSON (the documented contract)")
    p.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report (one testcase per check)")
    p.add_argument("--sarif", metavar="FILE", help="also write SARIF 2.1.0 (results at the kernel's "
                   "source lines, for GitHub code scanning)")
    p.add_argument("--fail-on", choices=("error", "warning", "never"), default="error",
                   help="exit 1 when a finding of this severity or worse exists (default error)")
    p.add_argument("-v", "--verbose", action="store_true", help="also list proved and unchecked checks")
    p.set_defaults(func=cmd_audit)


def exit_code(report: AuditReport, fail_on: str) -> int:
    """0 clean, 1 a finding at or above ``fail_on``.

    >>> exit_code(AuditReport(()), "error")
    0
    """
    worst = report.worst()
    if fail_on == "never" or worst is None:
        return 0
    return 1 if _ORDER[worst] <= _ORDER[fail_on] else 0


def format_text(report: AuditReport, verbose: bool = False) -> str:
    """Text for people: per file, findings by severity (errors first), then a summary line."""
    lines = []
    for f in report.files:
        c = f.counts()
        warps = f", {f.num_warps} warps" if f.num_warps else ""
        lines.append(f"{f.path}: target {f.target or '?'}{warps}, "
                     f"{len(f.checks)} checks ({c['proved']} proved, {c['errors']} errors, "
                     f"{c['warnings']} warnings, {c['unchecked']} unchecked)")
        shown = [x for x in f.checks if verbose or x.severity in ("error", "warning")]
        for x in sorted(shown, key=lambda x: (_ORDER[x.severity], x.line)):
            sev = x.severity or x.status
            where = f"line {x.line}" + (f" ({x.loc})" if x.loc else "")
            lines.append(f"  {sev}: {where}: {x.op} [{x.check}] {x.message}")
        for u in f.unsupported:
            lines.append(f"  unsupported layout: {u.text[:100]}: {u.why}")
    s = report.summary()
    lines.append(f"{s['files']} file(s), {s['checks']} checks: {s['proved']} proved, {s['errors']} "
                 f"errors, {s['warnings']} warnings, {s['unchecked']} unchecked in {s['seconds']:.2f}s")
    return "\n".join(lines)


def junit_xml(report: AuditReport) -> str:
    """JUnit XML: one testsuite per file, one testcase per check (failure: error/warning).

    >>> junit_xml(AuditReport(())).startswith("<testsuites")
    True
    """
    root = ET.Element("testsuites", name="verilayout audit")
    for f in report.files:
        fails = sum(c.severity in ("error", "warning") for c in f.checks)
        suite = ET.SubElement(root, "testsuite", name=f.path, tests=str(len(f.checks)), failures=str(fails),
                              skipped=str(sum(c.status == "unchecked" for c in f.checks)))
        for c in f.checks:
            case = ET.SubElement(suite, "testcase", classname=f.path,
                                 name=f"line {c.line} {c.op} {c.check}" + (f" ({c.loc})" if c.loc else ""))
            if c.severity in ("error", "warning"):
                ET.SubElement(case, "failure", type=c.severity, message=c.message[:500]).text = c.message
            elif c.status == "unchecked":
                ET.SubElement(case, "skipped", message=c.message[:500])
    return ET.tostring(root, encoding="unicode")


def _loc_parts(loc: str | None) -> tuple[str, int] | None:
    if not loc or ":" not in loc:
        return None
    path, _, line = loc.rpartition(":")
    return (path, int(line)) if line.isdigit() else None


def sarif(report: AuditReport) -> dict:
    """SARIF 2.1.0: one result per error/warning/note, located at the kernel's source line when
    the compiler recorded one (else at the TTGIR line).

    >>> sarif(AuditReport(()))["version"]
    '2.1.0'
    """
    rules: dict[str, dict] = {}
    results = []
    for f in report.files:
        for c in f.checks:
            if c.severity is None:
                continue
            rid = f"verilayout/{c.check}"
            rules.setdefault(rid, {"id": rid, "name": c.check,
                                   "shortDescription": {"text": f"verilayout audit: {c.check}"}})
            src = _loc_parts(c.loc)
            locs = [{"physicalLocation": {"artifactLocation": {"uri": src[0] if src else f.path},
                                          "region": {"startLine": src[1] if src else max(1, c.line)}}}]
            related = [{"id": 1, "physicalLocation": {"artifactLocation": {"uri": f.path},
                                                      "region": {"startLine": max(1, c.line)}},
                        "message": {"text": f"{c.op} in the TTGIR"}}]
            results.append({"ruleId": rid, "level": c.severity, "message": {"text": c.message},
                            "locations": locs, "relatedLocations": related,
                            "properties": {"op": c.op, "status": c.status, "ttgir_line": c.line}})
    return {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0",
            "runs": [{"tool": {"driver": {"name": "verilayout", "informationUri":
                                          "https://github.com/", "rules": list(rules.values())}},
                      "results": results}]}


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as e:
        raise LayoutError(f"cannot write {path}: {e.strerror}") from None


def cmd_audit(args) -> int:
    for p in args.paths:
        if p != "-" and not os.path.exists(p):
            raise LayoutError(f"{p}: no such file or directory")
    report = audit_paths(args.paths, jobs=args.jobs)
    if args.json:
        print(report.to_json())
    else:
        print(format_text(report, args.verbose))
    if args.junit:
        _write(args.junit, junit_xml(report))
    if args.sarif:
        _write(args.sarif, json.dumps(sarif(report), indent=1))
    sys.stdout.flush()
    return exit_code(report, args.fail_on)
