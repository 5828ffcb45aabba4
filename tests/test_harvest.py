"""The harvested corpus (tests/harvest, see its README) and the harvester's inference, independent
of the audit: the manifest's figures, the tarball's content, and the harvester's kernel discovery
and signature inference on small kernels written here, against types written by hand.
"""
from __future__ import annotations

import importlib.util
import sys
import tarfile
from pathlib import Path

import pytest

HARVEST = Path(__file__).resolve().parent / "harvest"
MIN_PAIRS = 1000       # the issue: at least 1000 TTGIR+PTX pairs from at least 10 packages
MIN_PACKAGES = 10

pytestmark = pytest.mark.slow


def _module(name: str):
    """Load ``tests/harvest/<name>.py`` without putting it on ``sys.path``."""
    spec = importlib.util.spec_from_file_location(f"harvest_{name}", HARVEST / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def corpus():
    return _module("corpus")


@pytest.fixture(scope="module")
def harvest():
    return _module("harvest")


def test_manifest_counts(corpus):
    rows = corpus.manifest()["files"]
    pairs = [r for r in rows if r.get("ttgir") and r.get("ptx")]
    assert len(pairs) >= MIN_PAIRS
    assert len({r["package"] for r in pairs}) >= MIN_PACKAGES
    assert {r["target"] for r in pairs} == {"cuda80", "cuda90", "cuda100"}
    for r in pairs:
        assert r["version"] and r["source"].endswith(".py") and r["num_warps"] in (1, 2, 4, 8, 16, 32)


def test_every_refusal_has_a_reason(corpus):
    for r in corpus.manifest()["failed"]:
        assert r["why"].strip() and "\n" not in r["why"]


def test_tarball_holds_the_listed_files(corpus, tmp_path):
    rows = corpus.manifest()["files"]
    listed = {r[k] for r in rows for k in ("ttgir", "ptx")}
    with tarfile.open(corpus.TARBALL, "r:xz") as tar:
        names = tar.getnames()
    assert listed <= set(names)
    assert len(names) == len(set(names))
    folder = corpus.extract(tmp_path)
    for r in rows:
        ttgir = (folder / r["ttgir"]).read_text()
        ptx = (folder / r["ptx"]).read_text()
        assert "tt.func" in ttgir and "ttg.num-warps" in ttgir, r["ttgir"]
        assert ".entry" in ptx, r["ptx"]
        assert '"/' not in ttgir, r["ttgir"]      # no absolute paths left in loc(...)


KERNELS = '''
import triton
import triton.language as tl


@triton.jit
def add(x_ptr, y_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs * stride, mask=offs < n)
    y = tl.load(y_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x + y, mask=offs < n)


@triton.jit
def _row_load(p, cols, n):
    return tl.load(p + cols, mask=cols < n, other=0.0)


@triton.jit
def rms(X, W, Y, row_idx, row_stride, N, eps, BLOCK_N: tl.constexpr):
    row = tl.load(row_idx + tl.program_id(0))
    X += row * row_stride
    cols = tl.arange(0, BLOCK_N)
    x = _row_load(X, cols, N).to(tl.float32)
    w = tl.load(W + cols)
    y_ptrs = Y + row * row_stride + cols
    r = tl.rsqrt(tl.sum(x * x, 0) / N + eps)
    tl.store(y_ptrs, x * r * w, mask=cols < N)


@triton.autotune(configs=[triton.Config({"BLOCK_K": 64}, num_warps=4)], key=["K"])
@triton.jit
def dequant(qweight, scales, out, K, BLOCK_K: tl.constexpr, HAS_BIAS: tl.constexpr = False):
    bp = tl.make_block_ptr(base=scales, shape=(K,), strides=(1,), offsets=(0,), block_shape=(BLOCK_K,),
                           order=(0,))
    s = tl.load(bp)
    offs = tl.arange(0, BLOCK_K)
    q = tl.load(qweight + offs // 8)
    v = (q >> ((offs % 8) * 4)) & 0xF
    tl.store(out + offs, v.to(tl.float32) * s)


def launch(x, w, y, idx, n):
    rms[(1,)](x, w, y, idx, n, n, 1e-6, BLOCK_N=256, num_warps=8)
'''

# written by hand from the kernels above
EXPECTED = {
    "add": {"x_ptr": "*bf16", "y_ptr": "*bf16", "out_ptr": "*bf16", "n": "i32", "stride": "i32",
            "BLOCK": "constexpr"},
    # X is a pointer through the helper; row_idx's loaded value is an address offset: an i32 pointer
    "rms": {"X": "*bf16", "W": "*bf16", "Y": "*bf16", "row_idx": "*i32", "row_stride": "i32", "N": "i32",
            "eps": "fp32", "BLOCK_N": "constexpr"},
    # qweight's loaded values are shifted and masked: packed i32; scales is a block pointer's base
    "dequant": {"qweight": "*i32", "scales": "*bf16", "out": "*bf16", "K": "i32", "BLOCK_K": "constexpr",
                "HAS_BIAS": "constexpr"},
}


@pytest.fixture()
def scanned(harvest, tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "kernels.py").write_text(KERNELS)
    return {k.name: k for k in harvest.scan("pkg", tmp_path)}


def test_helpers_are_not_kernels(scanned):
    assert sorted(scanned) == ["add", "dequant", "rms"]


@pytest.mark.parametrize("kernel", sorted(EXPECTED))
def test_signature_inference(scanned, kernel):
    assert scanned[kernel].signature == EXPECTED[kernel]
    assert list(scanned[kernel].signature) == list(EXPECTED[kernel])   # parameter order kept


def test_launch_site_literals_and_defaults(scanned):
    assert scanned["rms"].launches == [{"BLOCK_N": 256, "num_warps": 8}]
    assert scanned["dequant"].defaults == {"HAS_BIAS": False}
    assert scanned["add"].launches == []


@pytest.mark.parametrize("name, value", [("BLOCK_SIZE_M", 64), ("HEAD_DIM", 128), ("IS_CAUSAL", False),
                                         ("GROUP_SIZE_M", 8), ("OUT_DTYPE", "tl.bfloat16")])
def test_name_defaults(harvest, name, value):
    assert harvest.name_default(name) == value


def test_strip_paths(harvest):
    assert harvest.strip_paths('loc("/tmp/x/pkg/k.py":3:7)') == 'loc("k.py":3:7)'


def test_source_folder_spec(harvest, tmp_path):
    # NAME==VERSION=DIR, the folder resolved; anything else is one line, not a traceback
    assert harvest.source_folder(f"mamba-ssm==2.3.2={tmp_path}") == ("mamba-ssm==2.3.2", tmp_path.resolve())
    for bad in ("mamba-ssm", f"mamba-ssm={tmp_path}", "mamba-ssm==2.3.2", f"mamba-ssm==2.3.2={tmp_path}/none"):
        with pytest.raises(SystemExit, match="NAME==VERSION=DIR"):
            harvest.source_folder(bad)


def test_scan_package_reads_a_source_folder(harvest, tmp_path):
    # a package read from a folder is never downloaded: its kernels are those written above
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "kernels.py").write_text(KERNELS)
    entry, units = harvest.scan_package("pkg==0.1", tmp_path / "cache", tmp_path / "src")
    assert entry == {"pypi": "pkg", "version": "0.1", "archive": "source folder src", "kernels": 3}
    assert [(root, sorted(s["kernel"] for s in specs)) for root, specs in units] \
        == [(tmp_path / "src", ["add", "dequant", "rms"])]
    assert not (tmp_path / "cache").exists()
