"""JUnit XML for a CI run: one testsuite per spec file, one testcase per obligation.

Always well-formed XML 1.0, whatever the names contain: characters XML cannot hold
(control characters, lone surrogates) are written as ``\\xNN`` escapes; ``<``, ``&``,
``]]>`` and newlines in attributes are escaped by the serializer.

>>> "\\x01" in xml_safe("a\\x01b"), xml_safe("a\\x01b")
(False, 'a\\\\x01b')
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Sequence

_INVALID = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: object) -> str:
    """``text`` as a string XML 1.0 can hold (invalid characters become ``\\xNN``/``\\uNNNN``)."""
    return _INVALID.sub(lambda m: ascii(m.group())[1:-1], str(text))


def _fmt_value(v) -> str:
    if isinstance(v, dict):
        return "(" + ", ".join(f"{k}={_fmt_value(x)}" for k, x in v.items()) + ")"
    if isinstance(v, int) and not isinstance(v, bool) and v >= 4096:
        return hex(v)
    return str(v)


def format_counterexample(cex: object) -> str:
    """A counterexample as ``key=value`` pairs (nested tables in parentheses, big ints in hex).

    >>> format_counterexample({"input": {"lane": 2}, "lhs": 4096})
    'input=(lane=2), lhs=0x1000'
    """
    if not isinstance(cex, dict):
        return str(cex)
    return ", ".join(f"{k}={_fmt_value(v)}" for k, v in cex.items())


def junit_tree(rows: Sequence[dict], seconds: float) -> ET.ElementTree:
    """The report for ``rows`` (``Outcome.to_dict()`` of every obligation).

    >>> t = junit_tree([{"file": "f", "name": "n]]>", "ok": True, "seconds": 0.0}], 0.0)
    >>> t.getroot().find("testsuite/testcase").get("name")
    'n]]>'
    """
    failures = sum(not r["ok"] and "error" not in r for r in rows)
    errors = sum("error" in r for r in rows)
    root = ET.Element("testsuites", name="verilayout", tests=str(len(rows)), failures=str(failures),
                      errors=str(errors), time=f"{seconds:.3f}")
    by_file: dict[str, list[dict]] = {}
    for r in rows:
        by_file.setdefault(r["file"], []).append(r)
    for f, rs in by_file.items():
        suite = ET.SubElement(root, "testsuite", name=xml_safe(f), tests=str(len(rs)),
                              failures=str(sum(not r["ok"] and "error" not in r for r in rs)),
                              errors=str(sum("error" in r for r in rs)))
        for r in rs:
            case = ET.SubElement(suite, "testcase", classname=xml_safe(f), name=xml_safe(r["name"]),
                                 time=f"{r['seconds']:.4f}")
            if "error" in r:
                err = ET.SubElement(case, "error", type="error", message=xml_safe(r["error"]))
                err.text = xml_safe(r["error"])
            elif not r["ok"]:
                fail = ET.SubElement(case, "failure", type=xml_safe(r["status"]), message=xml_safe(
                    f"{r['kind']}: expected {r['expect']}, got {r['status']}: {r['reason']}"))
                if r.get("counterexample"):
                    fail.text = xml_safe("counterexample: " + format_counterexample(r["counterexample"]))
    return ET.ElementTree(root)


def write_junit(path: str, rows: Sequence[dict], seconds: float) -> None:
    """Write :func:`junit_tree` to ``path`` (its folder must exist; nothing is created)."""
    junit_tree(rows, seconds).write(path, encoding="utf-8", xml_declaration=True)
