"""SARIF 2.1.0 for a ``verilayout check`` run (GitHub code scanning), as ``verilayout audit``
writes it: one result per obligation that fails (a counterexample or unknown where a proof was
expected, or the reverse) and one per spec file or obligation that could not be evaluated, each at
the spec file (at the obligation's ``name = "..."`` line when it is found there). Obligations that
hold are not results (nothing to act on).

Law: the document validates against the published SARIF 2.1.0 schema (tests/fixtures/sarif), and
its results are exactly the rows whose ``ok`` is false.

>>> doc = sarif_report([{"id": "s.toml::a", "file": "s.toml", "name": "a", "kind": "equal", "expect": "proved",
...                      "ok": False, "status": "counterexample", "reason": "differ", "counterexample": {"lane": 1}}], {}, ".")
>>> doc["version"], doc["runs"][0]["results"][0]["ruleId"], doc["runs"][0]["results"][0]["level"]
('2.1.0', 'verilayout/equal', 'error')
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Mapping, Sequence

from verilayout.spec.junit import format_counterexample

#: The rule of a spec file or obligation that could not be evaluated (the run's exit code is 2).
SPEC_ERROR = "verilayout/spec-error"


def _artifact(path: str, root: str) -> dict:
    p = Path(os.path.abspath(path))
    try:
        return {"uri": p.relative_to(root).as_posix(), "uriBaseId": "SRCROOT"}
    except ValueError:
        return {"uri": p.as_uri()}


def _line_of(text: str | None, name: str) -> int | None:
    """The 1-based line of ``name = "<name>"`` in a spec text, or None."""
    if not text:
        return None
    m = re.search(rf'^\s*name\s*=\s*["\']{re.escape(name)}["\']', text, re.M)
    return text.count("\n", 0, m.start()) + 1 if m else None


def _message(r: Mapping) -> str:
    if "error" in r:
        return str(r["error"])
    msg = f"{r['name']} [{r['kind']}]: expected {r['expect']}, got {r['status']}"
    if r.get("reason"):
        msg += f": {r['reason']}"
    if r.get("counterexample"):
        msg += f"; counterexample: {format_counterexample(r['counterexample'])}"
    return msg


def sarif_report(rows: Sequence[Mapping], texts: Mapping[str, str], source_root: str) -> dict:
    """The SARIF document of ``rows`` (``Outcome.to_dict()`` and load errors); ``texts``: each spec
    file's text (to find an obligation's line); paths relative to ``source_root`` (SRCROOT)."""
    root = os.path.abspath(source_root)
    rules: dict[str, dict] = {}
    results = []
    for r in rows:
        if r.get("ok"):
            continue
        rid = SPEC_ERROR if "error" in r else f"verilayout/{r['kind']}"
        rules.setdefault(rid, {"id": rid, "name": rid.split("/", 1)[1],
                               "shortDescription": {"text": f"verilayout check: {rid.split('/', 1)[1]}"}})
        loc: dict = {"artifactLocation": _artifact(r["file"], root)}
        line = _line_of(texts.get(r["file"]), r["name"])
        if line:
            loc["region"] = {"startLine": line}
        results.append({"ruleId": rid, "level": "error", "message": {"text": _message(r)},
                        "locations": [{"physicalLocation": loc}],
                        "properties": {"id": r["id"], "status": r["status"], "expect": r["expect"]}})
    return {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0",
            "runs": [{"tool": {"driver": {"name": "verilayout", "rules": list(rules.values())}},
                      "originalUriBaseIds": {"SRCROOT": {"uri": Path(root).as_uri() + "/"}},
                      "results": results}]}
