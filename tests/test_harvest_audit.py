"""The audit on the harvested corpus (tests/harvest: 2068 TTGIR+PTX pairs of 14 public packages'
kernels, compiled by Triton 3.9 from the packages' own sources and launch configurations; see its
README). These kernels are correct (they ship in released packages), so what the audit may say about
them is known from outside: no error. Audited here on a fixed sample (every ``STEP``-th pair of the
manifest, all targets and packages represented), in groups of one target.

What holds on the sample and is asserted: every file read and every layout parsed; every wgmma /
tcgen05 shared-memory operand counted in the PTX text proved; no error finding from any check,
``smem-address`` included; every unchecked result with its reason, and unchecked/unknown results
at most 0.5% of the checks (0.28% measured). On the whole harvest (its own audit run,
tests/harvest/README.md): 0 error findings on its 2068 pairs, 0.21% unchecked/unknown.
"""
from __future__ import annotations

import functools
import tarfile
import tempfile
from pathlib import Path

import pytest

from tests.harvest.corpus import TARBALL, manifest
from tests.test_thirdparty import _descriptor_operands
from verilayout.audit import audit_paths

pytestmark = pytest.mark.slow

STEP = 8                                  # one pair in eight of the manifest's order


@functools.lru_cache(maxsize=1)
@functools.lru_cache(maxsize=4)
def _folder(names: frozenset[str] | None = None) -> Path:
    """The sample's files (or the stored files ``names``) unpacked, once per process (one forward
    pass over the tarball; the others not written)."""
    root = Path(tempfile.mkdtemp(prefix="verilayout-harvest-"))
    want = names or {f[k] for fs in _sample().values() for f in fs for k in ("ttgir", "ptx") if f.get(k)}
    with tarfile.open(TARBALL, "r:xz") as tar:
        tar.extractall(root, members=[m for m in tar if m.name in want], filter="data")
    assert all((root / n).is_file() for n in want), "a sampled file is not in the tarball"
    return root


def _sample() -> dict[str, list[dict]]:
    by: dict[str, list[dict]] = {}
    for f in manifest()["files"][::STEP]:
        by.setdefault(f["ttgir"].split("/")[0], []).append(f)
    return by


_TARGETS = sorted(_sample())


@functools.lru_cache(maxsize=8)
def _report(target: str):
    root = _folder()
    files = _sample()[target]
    paths = [str(root / f["ttgir"]) for f in files] + [str(root / f["ptx"]) for f in files if f.get("ptx")]
    return audit_paths(paths, jobs=1, cache_dir=None)


def test_the_sample_spans_the_harvest():
    files = [f for fs in _sample().values() for f in fs]
    assert len(files) >= 250
    assert len({f["package"] for f in files}) >= 10
    assert set(_TARGETS) == {"cuda80", "cuda90", "cuda100"}


@pytest.mark.parametrize("target", _TARGETS)
def test_every_file_is_read_and_every_layout_parsed(target):
    rep = _report(target)
    assert not rep.errors
    assert len(rep.files) == sum(1 + bool(f.get("ptx")) for f in _sample()[target])
    bad = [(f.path, f.unsupported[:2]) for f in rep.files if f.layouts_parsed != f.layouts_seen or f.unsupported]
    assert not bad, bad[:5]


@pytest.mark.parametrize("target", _TARGETS)
def test_every_wgmma_and_tcgen05_operand_is_proved(target):
    missing, not_proved = [], []
    for f in _report(target).files:
        if not f.path.endswith(".ptx"):
            continue
        want = _descriptor_operands(Path(f.path).read_text())
        mma = [c for c in f.checks if c.check == "mma-descriptor"]
        proved = {(c.line, c.data.get("operand")) for c in mma if c.status == "proved"}
        not_proved += [(f.path, c.line, c.message) for c in mma if c.status != "proved"]
        missing += [(f.path, line, op) for line, op in sorted(want - proved)]
    assert not not_proved, (len(not_proved), not_proved[:5])
    assert not missing, (len(missing), missing[:5])


@pytest.mark.parametrize("target", _TARGETS)
def test_no_error_on_these_correct_kernels(target):
    errors = [(f.path, c.line, c.check, c.message) for f in _report(target).files for c in f.checks
              if c.severity == "error" and c.status != "proved"]
    assert not errors, (len(errors), errors[:5])


#: the warp-reduce check reports what it does not model (the inter-warp stage of a reduction, whose
#: lanes come from a shared-memory round; chains several reduces could own): counted on their own
_REPORTING = ("warp-reduce", "gather-shuffle")


def test_unchecked_and_unknown_are_rare():
    checks = [c for t in _TARGETS for f in _report(t).files for c in f.checks if c.check not in _REPORTING]
    open_ = [c for c in checks if c.status in ("unchecked", "unknown")]
    assert len(checks) > 5000
    assert len(open_) <= 0.005 * len(checks), (len(open_), len(checks))


def test_warp_reductions_mostly_proved():
    checks = [c for t in _TARGETS for f in _report(t).files for c in f.checks if c.check == "warp-reduce"]
    proved = [c for c in checks if c.status == "proved"]
    assert checks and len(proved) >= 0.6 * len(checks), (len(proved), len(checks))


@pytest.mark.parametrize("target", _TARGETS)
def test_each_unchecked_has_its_reason(target):
    unchecked = [c for f in _report(target).files for c in f.checks if c.status in ("unchecked", "unknown")]
    assert all(c.message.strip() and c.data.get("reason") for c in unchecked), \
        [(c.check, c.message) for c in unchecked if not c.data.get("reason")][:3]
