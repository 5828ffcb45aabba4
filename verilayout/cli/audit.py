"""`verilayout audit`: check whole kernels as the compiler wrote them (TTGIR files)."""
from __future__ import annotations

import argparse
import json
import os
import sys

from verilayout.audit import cache
from verilayout.audit.formats import FAIL_ON, LEVELS, ORDER, fails, finding_text, junit_xml, sarif, shown
from verilayout.audit.kernel_names import target_name
from verilayout.audit.model import TIME_LIMIT, AuditReport, is_confirmation, time_limited
from verilayout.audit.paths import audit_paths
from verilayout.cli.options import add_jobs_option, check_output_file
from verilayout.errors import LayoutError

EPILOG = """\
what is checked (no property typed by hand): bank conflicts of every shared-memory load and
store, the wgmma/tcgen05 descriptors of every MMA shared operand (one per instruction: each
K-block, and each M and N block a TMEM layout splits the tile into; proved), the register
fragment of a register A operand, what each convert_layout costs, and that
trans/reshape/join/split views need no data movement. Ops no check models are listed
'unchecked' with the reason.

examples:
  verilayout audit kernel.ttgir
  verilayout audit ~/.triton/cache --fail-on warning          # every *.ttgir and *.ptx below the folder
  verilayout audit k.ptx                                       # the lowering, against k.ttgir beside it
  verilayout audit k.ttgir --json > audit.json
  verilayout audit k.ttgir --sarif audit.sarif --junit audit.xml --source-root .
  verilayout audit ~/.triton/cache -j 0 --cache .verilayout-cache    # CI: only new kernels audited
  cat k.ttgir | verilayout audit -
  verilayout audit ~/.triton/cache --timeout 30                # no file's audit runs past 30 s
exit codes: 0 clean, 1 findings at or above --fail-on (default error), or a file past --timeout
(its one 'time-limit' check is unknown, an error; not with --fail-on never), 2 unreadable input
(a file with no whole kernel: empty, truncated, a folder with no kernel file; the others are
still audited)
"""

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
    add_jobs_option(p, "audit files")
    p.add_argument("--timeout", type=timeout_arg, default=None, metavar="SECONDS",
                   help="wall time per file (default: no limit); files are audited in worker processes, one "
                   "killed when its file reaches the limit: that file's checks are unknown (one 'time-limit' error check with "
                   "the reason), the next file is audited, and the summary counts such files")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--cache", metavar="DIR", default=None,
                   help="keep results in DIR and skip files audited before with the same content, "
                   "verilayout version and options (default: the user cache dir, "
                   "~/.cache/verilayout/audit; a DIR that is a file or cannot be written is said once "
                   "on stderr and the audit runs uncached)")
    g.add_argument("--no-cache", action="store_true", help="audit every file, keep nothing")
    p.add_argument("--json", action="store_true", help="print the report as JSON (the documented contract)")
    p.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report (one testcase per check; "
                   "findings at or above --fail-on are failures)")
    p.add_argument("--sarif", metavar="FILE", help="also write SARIF 2.1.0 (results at the kernel's "
                   "source lines, for GitHub code scanning)")
    p.add_argument("--source-root", metavar="DIR", default=".",
                   help="SARIF paths are relative to DIR, an existing folder (uriBaseId SRCROOT; "
                   "default: the current directory, the repository root in CI)")
    p.add_argument("--fail-on", choices=FAIL_ON, default="error",
                   help="exit 1 when a finding of this severity or worse exists (default error; "
                   "never: no finding fails; unreadable input still exits 2)")
    p.add_argument("--level", choices=LEVELS, default="warning",
                   help="the least severe finding reported in the text and the SARIF (default "
                   "warning: errors and warnings; note adds the notes, such as a convert_layout's "
                   "cheaper layout)")
    p.add_argument("-v", "--verbose", action="store_true", help="full messages (witness, best layout), and "
                   "also list proved and unchecked checks")
    p.set_defaults(func=cmd_audit, intermixed="paths")


def timeout_arg(text: str) -> float:
    """``--timeout SECONDS``: a positive number of seconds; argparse's type hook.

    >>> timeout_arg("2.5")
    2.5
    """
    try:
        t = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--timeout {text!r}: expected a number of seconds") from None
    if not 0 < t < float("inf"):
        raise argparse.ArgumentTypeError(f"--timeout {text}: expected a positive number of seconds")
    return t


def exit_code(report: AuditReport, fail_on: str) -> int:
    """0 clean, 1 a finding at or above ``fail_on``.

    >>> exit_code(AuditReport(()), "error")
    0
    """
    return int(any(fails(c, fail_on) for f in report.files for c in f.checks))


def _file_line(f) -> str:
    c = f.counts()
    warps = f", {f.num_warps} warps" if f.num_warps else ""
    name = f" ({f.kernel})" if f.kernel else ""
    return (f"{f.path}{name}: target {target_name(f.target) or '?'}{warps}, {len(f.checks)} checks "
            f"({_counts(c)})" + ("" if f.checks or f.unsupported else NOTHING_CHECKED))


#: said on a file line with no check: why a kernel can pass with nothing proved
NOTHING_CHECKED = ("; nothing to check: no shared- or tensor-memory access, MMA, layout conversion or "
                   "view in this kernel (global loads and stores are not checked)")


def _counts(counts: dict) -> str:
    """The counts of a file or of the run, by :func:`verilayout.audit.model.count_checks`'s one
    rule (the JSON's); unknown, notes and confirmations only when there are some.

    >>> _counts({"proved": 20, "errors": 0, "warnings": 1, "unchecked": 0, "unknown": 0, "notes": 2, "confirmations": 8})
    '20 proved, 0 errors, 1 warnings, 0 unchecked, 2 notes, 8 confirmations of TTGIR findings'
    """
    out = (f"{counts['proved']} proved, {counts['errors']} errors, {counts['warnings']} warnings, "
           f"{counts['unchecked']} unchecked{_unknown(counts)}")
    if counts.get("notes"):
        out += f", {counts['notes']} notes"
    if counts.get("confirmations"):
        out += f", {counts['confirmations']} confirmations of TTGIR findings"
    return out


def _unknown(counts: dict) -> str:
    """``", N unknown"`` when checks were undecided (a solver timeout, a case no model covers),
    else nothing: every check of a file is counted in its line.

    >>> _unknown({"unknown": 2}), _unknown({"unknown": 0})
    (', 2 unknown', '')
    """
    return f", {counts['unknown']} unknown" if counts.get("unknown") else ""


def _check_line(c, verbose: bool) -> str:
    sev = c.severity or c.status
    helper = ", ".join(c.data.get("inlined_from", ()))
    where = f"line {c.line}" + (f" ({c.loc}{'; inlined from ' + helper if helper else ''})" if c.loc else "")
    msg = finding_text(c, verbose)
    return f"  {sev}: {where}: {c.op} [{c.check}] {msg}"


def format_text(report: AuditReport, verbose: bool = False, level: str = "warning") -> str:
    """Text for people: per file, findings at ``level`` or worse by severity (errors first), each
    on one short line (the full message, and every other check, under ``-v``), then a summary
    line. A PTX finding that confirms a TTGIR finding is shown once, with the TTGIR one."""
    lines = []
    for f in report.files:
        lines.append(_file_line(f))
        listed = [x for x in f.checks if (verbose or shown(x, level)) and not is_confirmation(x)]
        for x in sorted(listed, key=lambda x: (ORDER[x.severity], x.line)):
            lines.append(_check_line(x, verbose))
        for u in f.unsupported:
            lines.append(f"  unsupported layout: {u.text[:100]}: {u.why}")
    s = report.summary()
    bad = f", {s['unreadable']} unreadable" if s["unreadable"] else ""
    lines.append(f"{s['files']} file(s){bad}, {s['checks']} checks: {_counts(s)} in {s['seconds']:.2f}s"
                 + _time_limited(report))
    return "\n".join(lines)


def _time_limited(report: AuditReport) -> str:
    """The summary's clause on files whose audit passed its time limit, else nothing.

    >>> from verilayout.audit.paths import time_limit_report
    >>> _time_limited(AuditReport((time_limit_report("k.ptx", 2.0, "audit time limit of 2 s reached"),)))
    '; 1 file(s) past the audit time limit of 2 s: their checks are unknown'
    """
    limits = sorted({c.data.get("timeout") for f in report.files if time_limited(f)
                     for c in f.checks if c.check == TIME_LIMIT})
    if not limits:
        return ""
    n = sum(map(time_limited, report.files))
    return (f"; {n} file(s) past the audit time limit of {', '.join(f'{t:g}' for t in limits)} s: "
            "their checks are unknown")


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as e:
        raise LayoutError(f"cannot write {path}: {e.strerror}") from None


EMPTY_PATH = "an empty path was given (is the variable that names it, such as $TRITON_CACHE_DIR, set?)"


def _check_paths(args) -> None:
    """Refuse, before auditing, a path that cannot be meant: empty (an unset variable), missing, a
    ``--source-root`` that is no folder."""
    for p in args.paths:
        if p == "" or not p.strip():
            raise LayoutError(EMPTY_PATH)
        if p != "-" and not os.path.exists(p):
            raise LayoutError(f"{p}: no such file or directory")
    if args.cache is not None and not args.cache.strip():
        raise LayoutError(f"--cache: {EMPTY_PATH}")
    for flag in ("junit", "sarif"):
        check_output_file(f"--{flag}", getattr(args, flag))
    root = args.source_root
    if not root.strip():
        raise LayoutError(f"--source-root: {EMPTY_PATH}")
    if not os.path.isdir(root):
        raise LayoutError(f"--source-root {root}: " + ("not a folder" if os.path.exists(root)
                                                       else "no such folder"))


def _cache_folder(args) -> str | None:
    """The cache folder to use, or None; a folder that cannot be used is said once on stderr."""
    if args.no_cache:
        return None
    folder = args.cache or cache.default_dir()
    why = cache.unusable(folder)
    if why:
        what = "--cache" if args.cache else "the cache folder"
        print(f"warning: {what} {folder}: {why}: results are not cached in this run", file=sys.stderr)
        return None
    return folder


def cmd_audit(args) -> int:
    _check_paths(args)
    folder = _cache_folder(args)
    report = audit_paths(args.paths, jobs=args.jobs, cache_dir=folder, timeout=args.timeout)
    if args.json:
        print(report.to_json())
    else:
        print(format_text(report, args.verbose, args.level))
    if args.junit:
        _write(args.junit, junit_xml(report, args.fail_on))
    if args.sarif:
        _write(args.sarif, json.dumps(sarif(report, args.source_root, args.level), indent=1))
    sys.stdout.flush()
    for e in report.errors:
        print(e.line(), file=sys.stderr)
    return 2 if report.errors else exit_code(report, args.fail_on)
