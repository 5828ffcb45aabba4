"""The audit report: what ``verilayout audit`` prints, as frozen dataclasses with a stable JSON form.

The JSON contract (documented in the README) is::

    {"files": [{"path", "target", "num_warps", "layouts": {"seen", "parsed", "unsupported": [...]},
                "checks": [{"op", "line", "loc", "check", "status", "severity", "message", "data"}]}],
     "summary": {"files", "checks", "proved", "errors", "warnings", "unchecked", "seconds"}}

Law: ``AuditReport.to_json()`` round-trips through ``json.loads`` and its ``summary`` counts equal
the counts of the checks it holds.

>>> c = Check(op="ttg.local_load", line=12, loc="k.py:3", check="bank-conflicts", status="proved",
...           severity=None, message="conflict-free", data={})
>>> FileReport(path="k.ttgir", target="cuda:90", num_warps=4, checks=(c,)).counts()["proved"]
1
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

Status = Literal["proved", "counterexample", "unknown", "unchecked"]
Severity = Literal["error", "warning", "note"]
STATUSES: tuple[str, ...] = ("proved", "counterexample", "unknown", "unchecked")
SEVERITIES: tuple[str, ...] = ("error", "warning", "note")


@dataclass(frozen=True)
class Check:
    """One check of one op: where it is, what was checked, the verdict, and data for machines.

    ``line`` is 1-based in the audited file; ``loc`` is the user's source line (``file.py:42``)
    recorded by the compiler, or None. ``severity`` is None for a proof.
    """
    op: str
    line: int
    loc: str | None
    check: str
    status: str
    severity: str | None
    message: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The JSON object of this check.

        >>> Check("tt.trans", 3, None, "view-layout", "proved", None, "ok").to_dict()["status"]
        'proved'
        """
        return {"op": self.op, "line": self.line, "loc": self.loc, "check": self.check,
                "status": self.status, "severity": self.severity, "message": self.message,
                "data": dict(self.data)}


@dataclass(frozen=True)
class Unsupported:
    """A layout text the audit could not read, and why."""
    text: str
    why: str


@dataclass(frozen=True)
class FileReport:
    """Every check of one audited file (``.ttgir`` or ``.ptx``)."""
    path: str
    target: str | None
    num_warps: int | None
    checks: tuple[Check, ...] = ()
    layouts_seen: int = 0
    layouts_parsed: int = 0
    unsupported: tuple[Unsupported, ...] = ()
    assumptions: tuple[str, ...] = ()

    def counts(self) -> dict[str, int]:
        """Checks by status and by severity.

        >>> FileReport("x", None, None).counts()["errors"]
        0
        """
        out = {s: sum(c.status == s for c in self.checks) for s in STATUSES}
        out["errors"] = sum(c.severity == "error" for c in self.checks)
        out["warnings"] = sum(c.severity == "warning" for c in self.checks)
        return out

    def to_dict(self) -> dict:
        """The JSON object of this file."""
        d = {"path": self.path, "target": self.target, "num_warps": self.num_warps,
             "layouts": {"seen": self.layouts_seen, "parsed": self.layouts_parsed,
                         "unsupported": [{"text": u.text, "why": u.why} for u in self.unsupported]},
             "checks": [c.to_dict() for c in self.checks]}
        if self.assumptions:
            d["assumptions"] = list(self.assumptions)
        return d


@dataclass(frozen=True)
class AuditReport:
    """The audit of several files, and the time it took."""
    files: tuple[FileReport, ...]
    seconds: float = 0.0

    def summary(self) -> dict:
        """Totals over every file (the ``summary`` of the JSON contract).

        >>> AuditReport(()).summary()["files"]
        0
        """
        total = {"files": len(self.files), "checks": sum(len(f.checks) for f in self.files)}
        for key in ("proved", "errors", "warnings", "unchecked"):
            total[key] = sum(f.counts()[key] for f in self.files)
        total["seconds"] = round(self.seconds, 4)
        return total

    def to_json(self) -> str:
        """The whole report as the JSON contract's text."""
        return json.dumps({"files": [f.to_dict() for f in self.files], "summary": self.summary()},
                          indent=1)

    def worst(self) -> str | None:
        """``error`` if any check is an error, else ``warning`` if any is, else None."""
        sev = {c.severity for f in self.files for c in f.checks}
        return "error" if "error" in sev else "warning" if "warning" in sev else None
