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

from verilayout.audit.model import AuditReport, Check, FileReport, is_confirmation

#: Severity order: lower is worse (``--fail-on`` compares with it).
ORDER = {"error": 0, "warning": 1, "note": 2, None: 3}


def fails(c: Check, fail_on: str) -> bool:
    """True when ``c`` is a finding at or above ``fail_on`` (``error``/``warning``/``never``).

    >>> fails(Check("x", 1, None, "c", "counterexample", "warning", "m"), "error")
    False
    """
    return fail_on != "never" and c.severity in ("error", "warning") and not is_confirmation(c) \
        and ORDER[c.severity] <= ORDER[fail_on]


def short_message(c: Check) -> str:
    """The first clause of a finding's message, without the layout text (the details stay in
    ``-v`` and the JSON).

    >>> short_message(Check("x", 1, None, "c", "counterexample", "warning", "4-way conflict, #ttg.x<>; witness: w"))
    '4-way conflict'
    """
    return c.message.split("; ", 1)[0].split(", #", 1)[0]


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
    for p in c.data.get("confirmed_by", []):
        out.append({**_physical(p["path"], p["line"], root), "message": {"text": "confirmed in the PTX"}})
    return [dict(r, id=i) for i, r in enumerate(out, 1)]


def sarif(report: AuditReport, source_root: str) -> dict:
    """SARIF 2.1.0: one result per finding (a PTX confirmation is a related location of the TTGIR
    finding it confirms), at the kernel's source line when the compiler recorded one."""
    root = os.path.abspath(source_root)
    rules: dict[str, dict] = {}
    results = []
    for f in report.files:
        for c in f.checks:
            if c.severity is None or is_confirmation(c):
                continue
            rid = f"verilayout/{c.check}"
            rules.setdefault(rid, {"id": rid, "name": c.check,
                                   "shortDescription": {"text": f"verilayout audit: {c.check}"}})
            src = _loc_parts(c.loc)
            if src:
                src = (f.sources.get(src[0], src[0]), src[1])
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


def junit_xml(report: AuditReport, fail_on: str = "error") -> str:
    """JUnit XML: one testsuite per file, one uniquely named testcase per check; a finding at or
    above ``fail_on`` is a ``<failure>``, an unchecked op ``<skipped>``, anything else passes with
    its severity as a property and its message in ``<system-out>``."""
    root = ET.Element("testsuites", name="verilayout audit")
    for f in report.files:
        suite = ET.SubElement(root, "testsuite", name=f.path, tests=str(len(f.checks)),
                              failures=str(sum(fails(c, fail_on) for c in f.checks)),
                              skipped=str(sum(c.status == "unchecked" for c in f.checks)))
        for c, name in zip(f.checks, _unique([case_name(c) for c in f.checks])):
            case = ET.SubElement(suite, "testcase", classname=f.kernel or f.path, name=name)
            if fails(c, fail_on):
                ET.SubElement(case, "failure", type=c.severity, message=short_message(c)[:500]).text = c.message
            elif c.status == "unchecked":
                ET.SubElement(case, "skipped", message=c.message[:500])
            elif c.severity:
                props = ET.SubElement(case, "properties")
                ET.SubElement(props, "property", name="severity", value=c.severity)
                ET.SubElement(case, "system-out").text = c.message
    return ET.tostring(root, encoding="unicode")
