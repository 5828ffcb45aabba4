"""The harvested corpus (see README.md): ``manifest()`` and ``extract(dest)``.

    from tests.harvest.corpus import extract, manifest   # or with tests/harvest on sys.path
    folder = extract(Path("/tmp/harvest"))             # folder/cuda90/<package>__<kernel>_<config>.ttgir
"""
from __future__ import annotations

import json
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARBALL = HERE / "corpus.tar.xz"
MANIFEST = HERE / "manifest.json"


def manifest() -> dict:
    """The manifest: ``packages``, ``targets``, ``files`` (one row per TTGIR/PTX pair), ``failed``."""
    return json.loads(MANIFEST.read_text())


def members() -> list[str]:
    """The file names the tarball holds (``<target>/<stem>.ttgir`` / ``.ptx``)."""
    with tarfile.open(TARBALL, "r:xz") as tar:
        return tar.getnames()


def extract(dest: Path) -> Path:
    """Unpack the tarball into ``dest``; return the folder holding ``<target>/<package>__<kernel>_<config>.*``."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(TARBALL, "r:xz") as tar:
        tar.extractall(dest, filter="data")
    return dest
