"""The corpus of real compiler output (tests/corpus, made by generate.py with the Triton wheel) is
what the coverage, audit and PTX tests stand on: check that it is complete and clean."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parent / "corpus"
TARGETS = {"cuda80": "cuda:80", "cuda90": "cuda:90", "cuda100": "cuda:100", "gfx942": "hip:gfx942",
           "gfx950": "hip:gfx950"}


def _manifest() -> dict:
    return json.loads((CORPUS / "manifest.json").read_text())


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_at_least_20_kernels_per_target(target):
    kernels = {f["kernel"] for f in _manifest()["files"] if f["target"] == target}
    assert len(kernels) >= 20, sorted(kernels)


def test_manifest_matches_the_files():
    listed = set()
    for f in _manifest()["files"]:
        listed.add(f["ttgir"])
        assert (CORPUS / f["ttgir"]).is_file()
        if f["target"].startswith("cuda"):
            assert f.get("ptx") and (CORPUS / f["ptx"]).is_file(), f   # Triton's cache keeps both
            listed.add(f["ptx"])
    folders = set(_manifest()["targets"]) | {f["target"] for f in _manifest()["files"]}
    on_disk = {str(p.relative_to(CORPUS)) for p in CORPUS.glob("*/*")
               if p.suffix in (".ttgir", ".ptx") and p.parent.name in folders}
    assert on_disk == listed


def test_each_other_corpus_folder_says_where_its_files_came_from():
    # folders beside the generated targets (hand-layout Gluon kernels, pairs from a package
    # sweep) are not in the manifest: each has a README naming how its pairs were made
    folders = set(_manifest()["targets"]) | {f["target"] for f in _manifest()["files"]}
    others = [d for d in CORPUS.iterdir() if d.is_dir() and d.name not in folders and d.name != "__pycache__"]
    assert others, "expected the gluon_week and unseen folders"
    for d in others:
        pairs = list(d.glob("*.ttgir"))
        assert pairs and (d / "README.md").is_file(), d
        assert all(p.with_suffix(".ptx").is_file() for p in pairs), d


def test_no_path_of_this_machine_remains():
    pat = re.compile(r"/(?:work|tmp|root|home)/")
    bad = [str(p) for p in CORPUS.glob("*/*") if pat.search(p.read_text())]
    assert not bad, bad[:5]


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_each_file_is_for_its_target(target):
    for p in (CORPUS / target).glob("*.ttgir"):
        assert f'ttg.target = "{TARGETS[target]}"' in p.read_text(), p.name
