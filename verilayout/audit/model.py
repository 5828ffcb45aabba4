"""The audit report: what ``verilayout audit`` prints, as frozen dataclasses with a stable JSON form.

The JSON contract (documented in the README) is::

    {"files": [{"path", "target", "num_warps", "layouts": {"seen", "parsed", "unsupported": [...]},
                "checks": [{"op", "line", "loc", "check", "status", "severity", "message", "data"}]}],
     "errors": [{"path", "message"}],        # files that hold no whole kernel (exit 2)
     "summary": {"files", "checks", "proved", "counterexample", "unknown", "unchecked", "errors",
                 "warnings", "notes", "confirmations", "unreadable", "time_limited", "seconds"}}
                 # count_checks; time_limited: files past the audit's time limit

Law: ``AuditReport.to_json()`` round-trips through ``json.loads`` and its ``summary`` counts equal
the counts of the checks it holds.

>>> c = Check(op="ttg.local_load", line=12, loc="k.py:3", check="bank-conflicts", status="proved",
...           severity=None, message="conflict-free", data={})
>>> FileReport(path="k.ttgir", target="cuda:90", num_warps=4, checks=(c,)).counts()["proved"]
1
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Mapping

from verilayout.audit.kernel_names import target_name
from verilayout.errors import one_line

Status = Literal["proved", "counterexample", "unknown", "unchecked"]
Severity = Literal["error", "warning", "note"]
STATUSES: tuple[str, ...] = ("proved", "counterexample", "unknown", "unchecked")
SEVERITIES: tuple[str, ...] = ("error", "warning", "note")

#: The check of a file whose audit passed its time limit (``audit_paths(timeout=...)``,
#: ``verilayout audit --timeout``): status unknown, severity error, ``data["reason"]`` says why.
TIME_LIMIT = "time-limit"


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
    #: the kernel's name in a Triton cache (``matmul_kernel[fp8e4nv, sm_90a]``), or None
    kernel: str | None = None
    #: the full path of each source file a ``loc`` names by its base name (from the file's
    #: ``loc("...")`` / ``.file`` entries; a base name two paths share is left out)
    sources: Mapping[str, str] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        """Checks by status and findings by severity, by the one rule every output follows
        (:func:`count_checks`).

        >>> FileReport("x", None, None).counts()["errors"]
        0
        """
        return count_checks(self.checks)

    def to_dict(self) -> dict:
        """The JSON object of this file."""
        d = {"path": self.path, "target": target_name(self.target), "num_warps": self.num_warps,
             "layouts": {"seen": self.layouts_seen, "parsed": self.layouts_parsed,
                         "unsupported": [{"text": u.text, "why": u.why} for u in self.unsupported]},
             "checks": [c.to_dict() for c in self.checks]}
        if self.assumptions:
            d["assumptions"] = list(self.assumptions)
        if self.kernel:
            d["kernel"] = self.kernel
        if self.sources:
            d["sources"] = dict(self.sources)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "FileReport":
        """The report :meth:`to_dict` wrote (the audit's result cache reads it back); the target
        comes back in its one spelling (``sm_90a`` for ``cuda:90``).

        >>> c = Check("tt.trans", 3, None, "view-layout", "proved", None, "ok", {"k": [1]})
        >>> f = FileReport("k.ttgir", "sm_90a", 4, (c,), 2, 2, (Unsupported("#x", "why"),), ("a",), "k[sm_90a]")
        >>> FileReport.from_dict(json.loads(json.dumps(f.to_dict()))) == f
        True
        """
        lay = d.get("layouts", {})
        return cls(d["path"], d.get("target"), d.get("num_warps"),
                   tuple(Check(**c) for c in d.get("checks", ())), lay.get("seen", 0), lay.get("parsed", 0),
                   tuple(Unsupported(u["text"], u["why"]) for u in lay.get("unsupported", ())),
                   tuple(d.get("assumptions", ())), d.get("kernel"), dict(d.get("sources", {})))


@dataclass(frozen=True)
class InputError:
    """A file given to the audit that holds no whole kernel (empty, truncated, unreadable): bad
    input, reported on one line and exit 2; the other files are still audited."""
    path: str
    message: str

    def line(self) -> str:
        """The one line printed for it.

        >>> InputError("k.ttgir", "empty: no TTGIR module").line()
        'error: k.ttgir: empty: no TTGIR module'
        """
        return one_line(f"error: {self.path}: {self.message}")


@dataclass(frozen=True)
class AuditReport:
    """The audit of several files, the files that could not be audited, and the time it took."""
    files: tuple[FileReport, ...]
    seconds: float = 0.0
    errors: tuple[InputError, ...] = ()

    def summary(self) -> dict:
        """Totals over every file (the ``summary`` of the JSON contract).

        >>> AuditReport(()).summary()["files"]
        0
        """
        total = {"files": len(self.files), "checks": sum(len(f.checks) for f in self.files)}
        for key in SUMMARY_COUNTS:
            total[key] = sum(f.counts()[key] for f in self.files)
        total["unreadable"] = len(self.errors)
        total["time_limited"] = sum(map(time_limited, self.files))
        total["seconds"] = round(self.seconds, 4)
        return total

    def to_json(self) -> str:
        """The whole report as the JSON contract's text."""
        return json.dumps({"files": [f.to_dict() for f in self.files],
                           "errors": [{"path": e.path, "message": e.message} for e in self.errors],
                           "summary": self.summary()}, indent=1)

    def worst(self) -> str | None:
        """``error`` if any check is an error, else ``warning`` if any is, else None."""
        sev = {c.severity for f in self.files for c in f.checks if not is_confirmation(c)}
        return "error" if "error" in sev else "warning" if "warning" in sev else None


def time_limited(f: "FileReport | InputError") -> bool:
    """True for the report of a file whose audit did not finish within its time limit (its one
    check is :data:`TIME_LIMIT`, unknown).

    >>> c = Check("ptx", 1, None, TIME_LIMIT, "unknown", "error", "audit time limit of 1 s reached")
    >>> time_limited(FileReport("k.ptx", None, None, (c,))), time_limited(FileReport("k.ptx", None, None))
    (True, False)
    """
    return isinstance(f, FileReport) and any(c.check == TIME_LIMIT for c in f.checks)


#: The counts of the JSON ``summary`` (besides files, checks, unreadable and seconds).
SUMMARY_COUNTS = ("proved", "counterexample", "unknown", "unchecked", "errors", "warnings", "notes",
                  "confirmations")


def count_checks(checks) -> dict[str, int]:
    """The one counting rule of the text, JSON, JUnit and exit code: each check counts once by
    status (``proved + counterexample + unknown + unchecked`` = checks), and each *finding* once
    by severity (``errors``, ``warnings``, ``notes``); a PTX check that confirms a TTGIR finding
    (``data["confirms"]``) is part of that finding, counted under ``confirmations`` instead. So the
    checks whose severity is error or warning number ``errors + warnings + confirmations``.

    >>> w = Check("ttg.local_store", 6, "k.py:2", "bank-conflicts", "counterexample", "warning", "4-way")
    >>> p = Check("st.shared", 9, "k.py:2", "bank-conflicts", "counterexample", "warning", "4-way", {"confirms": {}})
    >>> n = Check("ttg.convert_layout", 7, None, "convert-layout", "proved", "note", "cheaper")
    >>> c = count_checks((w, p, p, n)); c["warnings"], c["confirmations"], c["notes"], c["counterexample"]
    (1, 2, 1, 3)
    """
    checks = tuple(checks)
    out = {s: sum(c.status == s for c in checks) for s in STATUSES}
    for key, sev in (("errors", "error"), ("warnings", "warning"), ("notes", "note")):
        out[key] = sum(c.severity == sev and not is_confirmation(c) for c in checks)
    out["confirmations"] = sum(map(is_confirmation, checks))
    return out


def is_confirmation(c: Check) -> bool:
    """True for a PTX finding that confirms a TTGIR finding of the same report (one finding, the
    TTGIR's, with both locations; see :func:`merge_confirmations`).

    >>> is_confirmation(Check("st.shared", 9, "k.py:3", "bank-conflicts", "counterexample", "warning",
    ...                       "4 wavefronts", {"confirms": {"path": "k.ttgir", "line": 68}}))
    True
    """
    return "confirms" in c.data


def _inner(c: Check) -> str | None:
    """The innermost source line of a check: an inlined helper's own line, else its ``loc``."""
    inl = c.data.get("inlined_from")
    return inl[0] if inl else c.loc


def _paired(files: tuple[FileReport, ...]) -> dict[int, int]:
    """Index of each ``X.ptx`` report -> index of the ``X.ttgir`` report of the same stem."""
    ttgir = {f.path[:-len(".ttgir")]: i for i, f in enumerate(files) if f.path.endswith(".ttgir")}
    return {i: ttgir[f.path[:-len(".ptx")]] for i, f in enumerate(files)
            if f.path.endswith(".ptx") and f.path[:-len(".ptx")] in ttgir}


def merge_confirmations(files: tuple[FileReport, ...]) -> tuple[FileReport, ...]:
    """One finding per conflict: a PTX finding (error or warning) with the same check, severity and
    source line as a finding of the TTGIR beside it (both in ``files``) confirms that finding. The
    PTX check gets ``data["confirms"]`` (the TTGIR path and line; it is no longer counted or
    reported on its own) and the TTGIR check ``data["confirmed_by"]`` (each PTX path and line).

    Law: the checks and their statuses are unchanged; only findings counted twice are merged.

    >>> t = Check("ttg.local_store", 68, "k.py:26", "bank-conflicts", "counterexample", "warning", "4-way")
    >>> p = Check("st.shared", 1806, "k.py:26", "bank-conflicts", "counterexample", "warning", "4 wavefronts")
    >>> out = merge_confirmations((FileReport("k.ptx", None, None, (p,)), FileReport("k.ttgir", None, None, (t,))))
    >>> out[0].checks[0].data["confirms"], out[1].checks[0].data["confirmed_by"]
    ({'path': 'k.ttgir', 'line': 68}, [{'path': 'k.ptx', 'line': 1806}])
    """
    files = list(files)
    for pi, ti in _paired(tuple(files)).items():
        findings = [c for c in files[ti].checks if c.severity in ("error", "warning") and c.loc]
        key = {(c.check, c.severity, c.loc, _inner(c)): c for c in findings}
        inner = {(c.check, c.severity, _inner(c)): c for c in findings}
        by: dict[int, list[dict]] = {}
        ptx_checks = []
        for c in files[pi].checks:
            t = None
            if c.severity in ("error", "warning"):
                # the same source line (and call site of an inlined helper); a PTX without the
                # call site (no inlined_at) matches the helper's line alone
                t = key.get((c.check, c.severity, c.loc, _inner(c)))
                if t is None and "inlined_from" not in c.data:
                    t = inner.get((c.check, c.severity, c.loc))
            if t is not None:
                by.setdefault(id(t), []).append({"path": files[pi].path, "line": c.line})
                c = replace(c, data={**c.data, "confirms": {"path": files[ti].path, "line": t.line}})
            ptx_checks.append(c)
        if by:
            files[pi] = replace(files[pi], checks=tuple(ptx_checks))
            files[ti] = replace(files[ti], checks=tuple(
                replace(c, data={**c.data, "confirmed_by": c.data.get("confirmed_by", []) + by[id(c)]})
                if id(c) in by else c for c in files[ti].checks))
    return tuple(files)
