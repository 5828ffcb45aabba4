"""The audit report for machines and people: SARIF 2.1.0 (GitHub code scanning), JUnit XML, and
the short one-line message of a finding with the Python-level suggestion (``audit.advice``).

SARIF results sit at the user's source line the compiler recorded (``loc``), the path made
relative to a source root (``uriBaseId`` ``SRCROOT``, the root in ``originalUriBaseIds``); the
TTGIR/PTX lines are ``relatedLocations``. JUnit has one test case per check, named by op,
operand and line (unique within a file), and only findings at or above ``fail_on`` are
``<failure>``; the others are properties and ``<system-out>``.

Law: ``sarif(r, root)`` validates against the published SARIF 2.1.0 schema (tests/fixtures/sarif).

>>> sarif(AuditReport(()), "/src")["version"], junit_xml(AuditReport(()), "error").startswith("<testsuites")
('2.1.0', True)
"""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

from verilayout.audit.kernel_names import triton_metadata
from verilayout.audit.model import AuditReport, Check, FileReport, is_confirmation
from verilayout.errors import LayoutError

#: Severity order: lower is worse (``--fail-on`` compares with it).
ORDER = {"error": 0, "warning": 1, "note": 2, None: 3}

#: The one vocabulary of ``fail_on`` (``verilayout audit --fail-on``, ``verilayout.triton.install``,
#: ``verilayout.testing.assert_kernel_clean``): the least severe finding that fails, or never.
FAIL_ON: tuple[str, ...] = ("error", "warning", "note", "never")

#: ``--level``: the least severe finding reported (text and SARIF); notes only when asked.
LEVELS: tuple[str, ...] = ("error", "warning", "note")


def require_fail_on(value: object, where: str) -> str:
    """``value`` when it is one of :data:`FAIL_ON`, else a one-line LayoutError naming ``where``.

    >>> require_fail_on("note", "x")
    'note'
    >>> require_fail_on("warnings", "assert_kernel_clean")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: assert_kernel_clean: fail_on='warnings': expected one of 'error', 'warning', 'note', 'never'
    """
    if not isinstance(value, str) or value not in FAIL_ON:
        raise LayoutError(f"{where}: fail_on={value!r}: expected one of "
                          + ", ".join(repr(v) for v in FAIL_ON))
    return value


def fails(c: Check, fail_on: str) -> bool:
    """True when ``c`` is a finding at or above ``fail_on`` (one of :data:`FAIL_ON`); a PTX check
    that confirms a TTGIR finding is that finding's, never counted on its own.

    >>> fails(Check("x", 1, None, "c", "counterexample", "warning", "m"), "error")
    False
    >>> fails(Check("x", 1, None, "c", "proved", "note", "m"), "note")
    True
    """
    return fail_on != "never" and c.severity in LEVELS and not is_confirmation(c) \
        and ORDER[c.severity] <= ORDER[fail_on]


def shown(c: Check, level: str) -> bool:
    """True when ``c`` is a finding reported at ``level`` (one of :data:`LEVELS`): its severity is
    ``level`` or worse, and it is not a PTX confirmation (that is part of its TTGIR finding).

    >>> shown(Check("x", 1, None, "c", "proved", "note", "m"), "warning")
    False
    """
    return c.severity in LEVELS and not is_confirmation(c) and ORDER[c.severity] <= ORDER[level]


def short_message(c: Check) -> str:
    """The first clause of a finding's message, without the layout text (the details stay in
    ``-v`` and the JSON).

    >>> short_message(Check("x", 1, None, "c", "counterexample", "warning", "4-way conflict, #ttg.x<>; witness: w"))
    '4-way conflict'
    """
    return c.message.split("; ", 1)[0].split(", #", 1)[0]


def finding_text(c: Check, verbose: bool = False) -> str:
    """A finding as ``verilayout audit`` and the compile hook say it: its short message (the full
    one when ``verbose``), the PTX lines that confirm it, and what to change in Python.

    >>> finding_text(Check("x", 1, None, "c", "counterexample", "warning", "4-way, #ttg.x<>",
    ...                    {"confirmed_by": [{"line": 7}], "suggestion": "do y"}))
    '4-way (confirmed in the PTX at line 7); in Python: do y'
    """
    msg = c.message if verbose else short_message(c)
    also = c.data.get("confirmed_by", [])
    if also:
        msg += f" (confirmed in the PTX at line{'s' if len(also) > 1 else ''} " \
               f"{', '.join(str(p['line']) for p in also)})"
    if c.data.get("suggestion"):
        msg += f"; in Python: {c.data['suggestion']}"
    return msg


def _loc_parts(loc: str | None) -> tuple[str, int] | None:
    if not loc or ":" not in loc:
        return None
    path, _, line = loc.rpartition(":")
    return (path, int(line)) if line.isdigit() and path else None


def _artifact(path: str, root: str) -> dict:
    """An artifactLocation: relative to ``root`` (``uriBaseId`` SRCROOT) where the path is a
    relative path or lies below the root, else an absolute ``file://`` URI."""
    p = Path(path)
    if not p.is_absolute():
        return {"uri": p.as_posix(), "uriBaseId": "SRCROOT"}
    try:
        return {"uri": p.relative_to(root).as_posix(), "uriBaseId": "SRCROOT"}
    except ValueError:
        return {"uri": p.as_uri()}


def _physical(path: str, line: int, root: str) -> dict:
    return {"physicalLocation": {"artifactLocation": _artifact(path, root),
                                 "region": {"startLine": max(1, line)}}}


def _related(f: FileReport, c: Check, root: str) -> list[dict]:
    kind = "PTX" if f.path.endswith(".ptx") else "TTGIR"
    out = [{**_physical(f.path, c.line, root), "message": {"text": f"{c.op} in the {kind}"}}]
    for depth, loc in enumerate(c.data.get("inlined_from", ())):
        src = _source(f, loc)
        if src:
            what = "in the inlined @triton.jit helper" if depth == 0 else "called from here, inlined"
            out.append({**_physical(src[0], src[1], root), "message": {"text": f"{c.op} {what} ({loc})"}})
    for p in c.data.get("confirmed_by", []):
        out.append({**_physical(p["path"], p["line"], root), "message": {"text": "confirmed in the PTX"}})
    return [dict(r, id=i) for i, r in enumerate(out, 1)]


#: The rule of a file the audit could not read (empty, truncated, not a kernel): an error result.
UNREADABLE = "verilayout/unreadable-input"


def _input_error_results(report: AuditReport, root: str, rules: dict) -> list[dict]:
    """One SARIF error result per file that holds no whole kernel (the run's exit code is 2)."""
    out = []
    for e in report.errors:
        rules.setdefault(UNREADABLE, {"id": UNREADABLE, "name": "unreadable-input",
                                      "shortDescription": {"text": "verilayout audit: a file that holds "
                                                           "no whole kernel (not audited)"}})
        res = {"ruleId": UNREADABLE, "level": "error", "message": {"text": f"{e.path}: {e.message}"},
               "properties": {"file": e.path}}
        if e.path != "<stdin>":
            res["locations"] = [{"physicalLocation": {"artifactLocation": _artifact(e.path, root)}}]
        out.append(res)
    return out


def sarif(report: AuditReport, source_root: str, level: str = "warning") -> dict:
    """SARIF 2.1.0: one result per finding at ``level`` or worse (:func:`shown`; a PTX confirmation
    is a related location of the TTGIR finding it confirms), at the kernel's source line when the
    compiler recorded one (the call site of an inlined helper, the helper's line related), and one
    error result per unreadable file."""
    root = os.path.abspath(source_root)
    rules: dict[str, dict] = {}
    results = _input_error_results(report, root, rules)
    for f in report.files:
        for c in f.checks:
            if not shown(c, level):
                continue
            rid = f"verilayout/{c.check}"
            rules.setdefault(rid, {"id": rid, "name": c.check,
                                   "shortDescription": {"text": f"verilayout audit: {c.check}"}})
            src = _source(f, c.loc)
            loc = _physical(src[0], src[1], root) if src else _physical(f.path, c.line, root)
            props = {"op": c.op, "status": c.status, "line": c.line, "file": f.path}
            if f.kernel:
                props["kernel"] = f.kernel
            results.append({"ruleId": rid, "level": c.severity, "message": {"text": c.message},
                            "locations": [loc], "relatedLocations": _related(f, c, root),
                            "properties": props})
    base = Path(root).as_uri() + "/"
    return {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0",
            "runs": [{"tool": {"driver": {"name": "verilayout", "rules": list(rules.values())}},
                      "originalUriBaseIds": {"SRCROOT": {"uri": base}}, "results": results}]}


def _source(f: FileReport, loc: str | None) -> tuple[str, int] | None:
    """``(path, line)`` of a ``file.py:42`` location, the base name widened to the full path the
    file's locations name."""
    src = _loc_parts(loc)
    return (f.sources.get(src[0], src[0]), src[1]) if src else None


def case_name(c: Check) -> str:
    """A JUnit test-case name: op, operand (where the check has one) and line.

    >>> case_name(Check("ttng.warp_group_dot", 40, "k.py:9", "mma-descriptor", "proved", None, "", {"operand": "B"}))
    'ttng.warp_group_dot mma-descriptor operand B line 40 (k.py:9)'
    """
    operand = c.data.get("operand")
    extra = f" operand {operand}" if operand else ""
    return f"{c.op} {c.check}{extra} line {c.line}" + (f" ({c.loc})" if c.loc else "")


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n} #{seen[n]}")
    return out


def _num_stages(f: FileReport) -> int | None:
    """``num_stages`` of Triton's metadata beside a kernel file in its cache, or None."""
    stem = os.path.splitext(f.path)[0]
    meta = triton_metadata(stem + ".json") if f.kernel else None
    n = meta.get("num_stages") if meta else None
    return n if isinstance(n, int) else None


def class_names(files: tuple[FileReport, ...]) -> list[str]:
    """The JUnit class name of each file: its kernel name in a Triton cache (else its path), with
    what tells apart specializations of one kernel where several files share it: ``num_warps``,
    then ``num_stages`` (Triton's metadata), then the file's path (Triton's cache folder is a hash
    of the constexprs and options).

    >>> a, b = FileReport("h1/m.ttgir", None, 4, kernel="m[fp16, sm_90a]"), FileReport("h2/m.ttgir", None, 8, kernel="m[fp16, sm_90a]")
    >>> class_names((a, b))
    ['m[fp16, sm_90a] num_warps=4', 'm[fp16, sm_90a] num_warps=8']
    >>> class_names((a, FileReport("h3/m.ttgir", None, 4, kernel="m[fp16, sm_90a]")))
    ['m[fp16, sm_90a] num_warps=4 (h1/m.ttgir)', 'm[fp16, sm_90a] num_warps=4 (h3/m.ttgir)']
    """
    base = [f.kernel or f.path for f in files]
    groups: dict[tuple, list[int]] = {}
    for i, f in enumerate(files):
        groups.setdefault((base[i], os.path.splitext(f.path)[1]), []).append(i)
    out = list(base)
    for idx in (g for g in groups.values() if len(g) > 1):
        names = {i: base[i] + (f" num_warps={files[i].num_warps}" if files[i].num_warps else "") for i in idx}
        stages = {i: _num_stages(files[i]) for i in idx}
        before = dict(names)
        for i in idx:
            rivals = [j for j in idx if before[j] == before[i]]
            if len({stages[j] for j in rivals}) > 1 and stages[i] is not None:
                names[i] += f" num_stages={stages[i]}"
        for i in idx:
            clash = sum(names[j] == names[i] for j in idx) > 1
            out[i] = names[i] + (f" ({files[i].path})" if clash else "")
    return out


def junit_xml(report: AuditReport, fail_on: str = "error") -> str:
    """JUnit XML: one testsuite per file, one uniquely named testcase per check (class names tell
    specializations of one kernel apart: :func:`class_names`); a finding at or above ``fail_on`` is
    a ``<failure>``, an unchecked op ``<skipped>``, anything else passes with its severity as a
    property and its message in ``<system-out>``. A file that holds no whole kernel is a suite of
    one failing testcase (``unreadable input``): the run's exit code is 2, whatever ``fail_on``."""
    root = ET.Element("testsuites", name="verilayout audit")
    for f, cls in zip(report.files, class_names(report.files)):
        suite = ET.SubElement(root, "testsuite", name=f.path, tests=str(len(f.checks)),
                              failures=str(sum(fails(c, fail_on) for c in f.checks)),
                              skipped=str(sum(c.status == "unchecked" for c in f.checks)))
        for c, name in zip(f.checks, _unique([case_name(c) for c in f.checks])):
            case = ET.SubElement(suite, "testcase", classname=cls, name=name)
            if fails(c, fail_on):
                ET.SubElement(case, "failure", type=c.severity, message=short_message(c)[:500]).text = c.message
            elif c.status == "unchecked":
                ET.SubElement(case, "skipped", message=c.message[:500])
            elif c.severity:
                props = ET.SubElement(case, "properties")
                ET.SubElement(props, "property", name="severity", value=c.severity)
                ET.SubElement(case, "system-out").text = c.message
    for e in report.errors:
        suite = ET.SubElement(root, "testsuite", name=e.path, tests="1", failures="1", skipped="0")
        case = ET.SubElement(suite, "testcase", classname=e.path, name="unreadable input")
        ET.SubElement(case, "failure", type="unreadable-input", message=e.message[:500]).text = e.line()
    return ET.tostring(root, encoding="unicode")
