"""The audit's result cache: a file whose content (with the TTGIR and Triton metadata beside it),
verilayout's version and code, and the audit options were audited before is not audited again.

One JSON file per result, ``<dir>/<key[:2]>/<key>.json``, written atomically (a temporary file
renamed), so parallel audits and interrupted runs never leave a half-written entry; an entry that
does not read back is ignored and rewritten. The default folder is the user cache dir
(``$XDG_CACHE_HOME/verilayout/audit``, else ``~/.cache/verilayout/audit``).

Law: ``load(d, k)`` after ``store(d, k, r)`` is ``r`` (through its JSON form); a changed input
byte, version or source file of the package changes the key.

>>> import tempfile; d = tempfile.mkdtemp()
>>> r = FileReport("k.ttgir", "sm_90a", 4)
>>> store(d, "ab" * 32, r); load(d, "ab" * 32) == r, load(d, "cd" * 32)
(True, None)
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import threading

from verilayout.audit.model import FileReport

#: Bytes read to key a file beside the audited one (its TTGIR, Triton's metadata).
MAX_SIDE_BYTES = 64 << 20


def default_dir() -> str:
    """``$XDG_CACHE_HOME/verilayout/audit`` or ``~/.cache/verilayout/audit``.

    >>> default_dir().endswith(os.path.join("verilayout", "audit"))
    True
    """
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "verilayout", "audit")


@functools.lru_cache(maxsize=1)   # key: none (the package's files, once per process)
def code_fingerprint() -> str:
    """verilayout's version and the content of each of its source files (a fresh clone in CI
    hits what the last run kept; a changed or upgraded package never reads what another wrote)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))     # the package folder
    package = sys.modules.get("verilayout")                                # loaded: we are in it
    h = hashlib.sha256(str(getattr(package, "__version__", "?")).encode())
    for dirpath, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                with open(path, "rb") as fh:
                    h.update(f"{os.path.relpath(path, root)}\0".encode() + hashlib.sha256(fh.read()).digest())
    return h.hexdigest()


def unusable(folder: str) -> str | None:
    """Why results cannot be kept in ``folder`` (it is a file, lies below a file, or is not
    writable), or None when they can; nothing is created.

    >>> import tempfile; f = tempfile.NamedTemporaryFile()
    >>> unusable(f.name), unusable(os.path.join(f.name, "sub"))[:20], unusable(tempfile.gettempdir())
    ('it is a file, not a folder', 'a file is in the way', None)
    """
    path = os.path.abspath(folder)
    probe = path
    while not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if not os.path.isdir(probe):
        return "it is a file, not a folder" if probe == path else f"a file is in the way ({probe})"
    if not os.access(probe, os.W_OK | os.X_OK):
        return "not writable" if probe == path else f"cannot be created ({probe} is not writable)"
    return None


def _side(path: str) -> bytes:
    """The first ``MAX_SIDE_BYTES`` of ``path`` (``<none>``: unreadable), read at the size the file
    has (no buffer of the maximum for a small file; one that grows meanwhile is read on)."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if not 0 <= size < MAX_SIDE_BYTES:
                return f.read(MAX_SIDE_BYTES)
            data = f.read(size + 1)
            return data if len(data) <= size else data + f.read(MAX_SIDE_BYTES - len(data))
    except OSError:
        return b"<none>"


def key(path: str, data: bytes, options: str = "") -> str:
    """The cache key of auditing ``path`` holding ``data``: its content, the TTGIR beside a PTX
    (the plan), Triton's metadata beside it (the kernel name), the code and ``options``.

    >>> key("a.ttgir", b"x") == key("a.ttgir", b"x") != key("a.ttgir", b"y") != key("b.ttgir", b"x")
    True
    """
    stem, ext = os.path.splitext(path)
    h = hashlib.sha256(code_fingerprint().encode())
    h.update(f"\0{path}\0{options}\0".encode())
    h.update(hashlib.sha256(data).digest())
    if ext == ".ptx":
        h.update(hashlib.sha256(_side(stem + ".ttgir")).digest())
        h.update(hashlib.sha256(_side(stem + ".mlir")).digest())     # a CuTe-DSL kernel's plan
    h.update(hashlib.sha256(_side(stem + ".json")).digest())
    return h.hexdigest()


def _entry(folder: str, k: str) -> str:
    return os.path.join(folder, k[:2], k + ".json")


def load(folder: str, k: str) -> FileReport | None:
    """The cached report under key ``k``, or None (absent, or not readable back)."""
    try:
        with open(_entry(folder, k), "rb") as f:
            return FileReport.from_dict(json.loads(f.read()))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store(folder: str, k: str, report: FileReport) -> None:
    """Write ``report`` under key ``k`` (atomically; a folder that cannot be written is skipped):
    the JSON text goes to a temporary file of this process and thread beside the entry (created
    exclusively, mode 0600), which is then renamed over it; the entry's folder is made only when
    the first write finds it missing."""
    path = _entry(folder, k)
    data = json.dumps(report.to_dict()).encode("utf-8")   # the text json.dump writes, in one C call
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        try:
            fd = os.open(tmp, _CREATE, 0o600)
        except FileNotFoundError:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd = os.open(tmp, _CREATE, 0o600)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        _remove(tmp)


#: how :func:`store` opens its temporary file: created here, never an existing one (a file left by
#: a writer that died is removed and the write tried once more by the next store of the key)
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass
