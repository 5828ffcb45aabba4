"""Issue 26's acceptance figures on the third-party corpus (tests/thirdparty: kernels of public
packages nobody here wrote, compiled by the Triton wheel; see its README). They run with the
suite; ``pytest -m thirdparty`` runs them alone. The corpus is audited in groups of at most
``GROUP`` kernels of one package and target (each test stays well under a minute), and every
figure holds in every group, so it holds for the whole corpus.

Expected values come from outside the audit: the files are the manifest's (written by the
generator), and the MMA operands that must be proved are counted from the PTX text here (every
``wgmma.mma_async`` / ``tcgen05.mma`` line; A is a shared-memory descriptor unless it is a
register fragment ``{...}`` or a tensor-memory address ``[...]``, B always is). The figures
(every file read, every layout parsed, every operand proved, 0 errors, unchecked at most 1% of
checks and each with its reason) are the issue's acceptance criteria.
"""
from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path

import pytest

from verilayout.audit import audit_paths

CORPUS = Path(__file__).resolve().parent / "thirdparty"
ISSUE_MIN_KERNELS = 100      # issue 26: at least 100 kernels from at least four packages
ISSUE_MIN_PACKAGES = 4

pytestmark = pytest.mark.thirdparty

_MMA = re.compile(r"\b(wgmma\.mma_async|tcgen05\.mma)\S*\s+(.*);")


def _manifest() -> dict:
    return json.loads((CORPUS / "manifest.json").read_text())


GROUP = 12


def _groups() -> list[tuple[str, tuple[dict, ...]]]:
    """The manifest's files in groups of at most GROUP of one target and package, in order."""
    by: dict[tuple[str, str], list[dict]] = {}
    for f in _manifest()["files"]:
        by.setdefault((f["ttgir"].split("/")[0], f["package"]), []).append(f)
    out = []
    for (target, package), fs in sorted(by.items()):
        for i in range(0, len(fs), GROUP):
            out.append((f"{target}-{package}-{i // GROUP}", tuple(fs[i:i + GROUP])))
    return out


_GROUPS = dict(_groups()) if (CORPUS / "manifest.json").exists() else {}


@functools.lru_cache(maxsize=64)
def _report(group: str):
    files = _GROUPS[group]
    paths = [str(CORPUS / f["ttgir"]) for f in files] + [str(CORPUS / f["ptx"]) for f in files if "ptx" in f]
    return audit_paths(paths, jobs=1)


def _descriptor_operands(ptx: str) -> set[tuple[int, str]]:
    """(line, operand) of every shared-memory descriptor operand of an MMA in the PTX text."""
    out = set()
    for no, line in enumerate(ptx.splitlines(), 1):
        m = _MMA.search(line)
        if not m:
            continue
        args = m.group(2)
        if m.group(1).startswith("wgmma"):
            args = args[args.index("}") + 1:].lstrip(" ,")      # drop the accumulator group
        else:
            args = args[args.index("]") + 1:].lstrip(" ,")      # drop the TMEM accumulator address
        first = args.lstrip()
        out.add((no, "B"))
        if not first.startswith(("{", "[")):
            out.add((no, "A"))
    return out


def test_the_corpus_is_big_enough():
    files = _manifest()["files"]
    kernels = {(f["package"], f["kernel"], f["config"]) for f in files}
    assert len(kernels) >= ISSUE_MIN_KERNELS
    assert len({f["package"] for f in files}) >= ISSUE_MIN_PACKAGES


def test_the_groups_cover_the_manifest():
    assert sum(len(fs) for fs in _GROUPS.values()) == len(_manifest()["files"])


group = pytest.mark.parametrize("group", sorted(_GROUPS))


@group
def test_every_file_is_read_and_every_layout_parsed(group):
    rep = _report(group)
    listed = {f["ttgir"] for f in _GROUPS[group]} | {f["ptx"] for f in _GROUPS[group] if "ptx" in f}
    read = {str(Path(f.path).relative_to(CORPUS)) for f in rep.files}
    assert read == listed
    bad = [(f.path, f.unsupported[:2]) for f in rep.files
           if f.path.endswith(".ttgir") and (f.layouts_parsed != f.layouts_seen or f.unsupported)]
    assert not bad, bad[:5]


@group
def test_every_wgmma_and_tcgen05_operand_is_proved(group):
    rep = _report(group)
    missing, not_proved = [], []
    for f in rep.files:
        if not f.path.endswith(".ptx"):
            continue
        want = _descriptor_operands(Path(f.path).read_text())
        mma = [c for c in f.checks if c.check == "mma-descriptor"]
        proved = {(c.line, c.data.get("operand")) for c in mma if c.status == "proved"}
        not_proved += [(f.path, c.line, c.status, c.message) for c in mma if c.status != "proved"]
        missing += [(f.path, line, op) for line, op in sorted(want - proved)]
    assert not not_proved, (len(not_proved), not_proved[:5])
    assert not missing, (len(missing), missing[:5])


@group
def test_no_error_finding(group):
    errors = [(f.path, c.line, c.op, c.message) for f in _report(group).files for c in f.checks
              if c.severity == "error"]
    assert not errors, (len(errors), errors[:5])


@group
def test_each_unchecked_has_its_reason(group):
    unchecked = [c for f in _report(group).files for c in f.checks if c.status == "unchecked"]
    assert all(c.message.strip() and c.data.get("reason") for c in unchecked), unchecked[:3]


def test_unchecked_is_at_most_one_percent_of_the_corpus():
    """Over the whole corpus (the group reports are cached in this process: under
    ``--dist loadfile`` this file's tests run in order in one worker, so this reuses them)."""
    checks = [c for g in sorted(_GROUPS) for f in _report(g).files for c in f.checks]
    unchecked = [c for c in checks if c.status == "unchecked"]
    assert checks
    assert len(unchecked) <= 0.01 * len(checks), (len(unchecked), len(checks))
