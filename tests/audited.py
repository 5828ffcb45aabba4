"""The audit of a file, memoized per test process: several tests read the audit of the same
corpus files (the whole-corpus checks of ``test_audit``, ``test_ptx_audit``, ``test_ptx_elements``),
and each file is audited once per process instead of once per test.

The key is the path and a hash of the bytes there (and, for a PTX file, of the TTGIR beside it,
which gives the plan), so a test that writes a file and audits it again sees the new audit.

Each report is also kept on disk, pickled (the exact object, not its JSON form), under
``$XDG_CACHE_HOME/verilayout/tests-audit`` and the audit cache's key (``verilayout.audit.cache.key``:
the file's bytes, the TTGIR and metadata beside it, and every source file of the package), so the
test processes of one run (the xdist workers, which take one test file each at a time) audit a
corpus file once between them, and a rerun with unchanged code and files audits nothing again.
``.ci/run`` points ``XDG_CACHE_HOME`` at a fresh folder: CI shares within its own run only.
A test that patches the audit (monkeypatch) must call ``verilayout.audit`` itself: here it would
read the unpatched result.
"""
from __future__ import annotations

import functools
import hashlib
import os
import pathlib
import pickle
import tempfile

from verilayout.audit import audit_file as _audit_ttgir, audit_ptx_file as _audit_ptx
from verilayout.audit import audit_ptx_text as _audit_ptx_text, audit_text as _audit_text
from verilayout.audit import cache as _cache
from verilayout.audit.cute_dsl import audit_pair as _audit_cute_pair
from verilayout.audit.model import FileReport


def _digest(path: str) -> str:
    h = hashlib.sha256()
    for p in (pathlib.Path(path), pathlib.Path(path).with_suffix(".ttgir")):
        try:
            h.update(p.read_bytes())
        except OSError:
            h.update(b"<none>")
    return h.hexdigest()


def _disk_entry(kind: str, path: str) -> str | None:
    try:
        data = pathlib.Path(path).read_bytes()
    except OSError:                     # unreadable: the audit itself says why
        return None
    key = _cache.key(path, data, f"tests.audited:{kind}")
    folder = os.path.join(os.path.dirname(_cache.default_dir()), "tests-audit", key[:2])
    return os.path.join(folder, key + ".pickle")


def _text_entry(kind: str, *texts: str) -> str:
    """The disk entry of an audit of ``texts`` (no file behind them): their bytes and the code."""
    h = hashlib.sha256(f"{_cache.code_fingerprint()}\0tests.audited:{kind}".encode())
    for t in texts:
        h.update(b"\0" + hashlib.sha256(t.encode()).digest())
    key = h.hexdigest()
    return os.path.join(os.path.dirname(_cache.default_dir()), "tests-audit", key[:2], key + ".pickle")


def _disk_load(entry: str) -> FileReport | None:
    try:
        with open(entry, "rb") as f:
            rep = pickle.load(f)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError):
        return None
    return rep if isinstance(rep, FileReport) else None


def _disk_store(entry: str, rep: FileReport) -> None:
    try:
        os.makedirs(os.path.dirname(entry), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(entry), suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(rep, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, entry)          # atomic: a parallel reader sees all of it or nothing
    except OSError:
        return


@functools.lru_cache(maxsize=1024)
def _memo(kind: str, path: str, digest: str) -> FileReport:
    entry = _disk_entry(kind, path)
    rep = _disk_load(entry) if entry else None
    if rep is None:
        rep = _audit_ttgir(path) if kind == "ttgir" else _audit_ptx(path)
        if entry:
            _disk_store(entry, rep)
    return rep


def audit_file(path: str) -> FileReport:
    """``verilayout.audit.audit_file(path)``, once per content."""
    return _memo("ttgir", str(path), _digest(str(path)))


def audit_ptx_file(path: str) -> FileReport:
    """``verilayout.audit.audit_ptx_file(path)``, once per content (and the TTGIR beside it)."""
    return _memo("ptx", str(path), _digest(str(path)))


def audit_pair(ttgir: str, ptx: str, stem: str = "k") -> FileReport:
    """The PTX audit of ``ptx`` against the plan its TTGIR ``ttgir`` gives (both as text, e.g. one
    of them mutated): ``verilayout.audit.audit_ptx_text`` with ``audit_text(ttgir)``'s checks (the
    plan audited once per TTGIR text and name in a process: the mutation tests of a file mutate
    the PTX of one kernel, whose TTGIR stays the same)."""
    return _audit_ptx_text(ptx, f"{stem}.ptx", ttgir, _plan(ttgir, stem))


@functools.lru_cache(maxsize=64)
def _plan(ttgir: str, stem: str) -> tuple:
    return _audit_text(ttgir, f"{stem}.ttgir").checks


def audit_cute_pair(mlir: str, ptx: str, path: str) -> FileReport:
    """``verilayout.audit.cute_dsl.audit_pair(mlir, ptx, path)``, once per content (memory, then
    disk): the CuTe-DSL corpus' unmodified kernels are audited by the fixtures of three test files
    (``test_cutedsl_audit``, ``test_cutedsl_quack``, ``test_cutedsl_host``), once between them."""
    return _cute_memo(mlir, ptx, path)


@functools.lru_cache(maxsize=64)
def _cute_memo(mlir: str, ptx: str, path: str) -> FileReport:
    entry = _text_entry("cute-pair", mlir, ptx, path)
    rep = _disk_load(entry)
    if rep is None:
        rep = _audit_cute_pair(mlir, ptx, path)
        _disk_store(entry, rep)
    return rep
