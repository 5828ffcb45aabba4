"""Swap-AB for decode shapes (``emit gemm --swap-ab``, chosen by ``--problem`` for M <= 64): the
kernel computes ``D^T[N, M] = B[N, K] @ A[M, K]^T`` so that N fills wgmma's 64 rows, and stores
element ``(n, m)`` of its product at ``D(m, n)``.

Oracles: numpy's ``A @ B.T`` on integer-valued inputs (every sum exact in f32), against the
values the kernel's PTX computes when its dataflow is replayed (which array each tensor map reads,
from the host code; which rows and K-tile each iteration loads, from the run; where each
accumulator element is stored, from the run); nvcc / ptxas (compiled for sm_90a, 0 spills); the
multiply-add counts of each tile written out here. Each planted bug is an edit of the emitted
``kernel.cu`` text written here; the check must name it.
"""
import shutil
from functools import lru_cache

import numpy as np
import pytest

from verilayout.emit.gemm_plan import GemmManifest, build_gemm_manifest
from verilayout.emit.gemm_select import choose_gemm, configure, explain
from verilayout.errors import LayoutError
from tests.planted_gemm import caught, check_planted

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc (CUDA 12 or newer) is "
                                "not installed; the independent check compiles kernel.cu")


@lru_cache(maxsize=4)
def _emitted(dtype="bf16", tile=(64, 16, 64), stages=3, splits=1):
    from verilayout.emit.cuda_gemm import emit_gemm
    e = emit_gemm(dtype, tile=tile, stages=stages, splits=splits, swap_ab=True)
    return e.manifest, e.files["kernel.cu"]


def _check(edit=None, host=False, ragged=True, **cfg):
    return check_planted(*_emitted(**cfg), edit, host, ragged)


_caught = caught


def _ints(shape, seed):
    return np.random.default_rng(seed).integers(-3, 4, shape)


# ----- the manifest and the choice -------------------------------------------------------------

def test_the_manifest_says_swap_ab_and_round_trips():
    m = build_gemm_manifest("bf16", tile=(64, 16, 64), stages=3, swap_ab=True)
    assert m["swap_ab"] is True and m["tag"].endswith("_swapab")
    assert GemmManifest.from_dict(m).swap_ab and GemmManifest.from_dict(m).to_dict() == m
    plain = build_gemm_manifest("bf16", tile=(64, 16, 64), stages=3)
    assert plain["swap_ab"] is False and not plain["tag"].endswith("_swapab")


def test_a_decode_shape_chooses_swap_ab_and_explain_says_why():
    c = choose_gemm(16, 4096, 4096, "bf16")
    assert c.best.swap and c.best.bn == 16          # M = 16 is the tile's N: no padded columns
    text = explain(c)
    assert "chose swap-AB" in text.splitlines()[0]
    line = next(ln for ln in text.splitlines() if ln.startswith("swap-AB ("))
    # the MMA work each issues, written out: unswapped 64 x BN tiles over M = 16 pad 48 zero
    # rows (16 of 64 useful); swapped tiles 64 x 16 over (N = 4096, M = 16) pad nothing
    assert "swapped 25% of the unswapped" in line and "split-K" in line
    m = configure("bf16", c)
    assert m["swap_ab"] is True and m["bn"] == 16


def test_a_large_m_never_considers_swap_ab():
    c = choose_gemm(4096, 4096, 4096, "bf16")
    assert not any(x.swap for x, _ in c.ranked)
    assert "swap-AB: not considered (M = 4096" in explain(c)


def test_sm_100a_refuses_swap_ab():
    with pytest.raises(LayoutError, match="--swap-ab"):
        configure("bf16", tile=(128, 64, 64), stages=2, arch="sm_100a", swap_ab=True)


def test_cli_swap_ab_and_json(capsys, tmp_path):
    import json
    from verilayout.cli import main
    rc = main(["emit", "gemm", "--dtype", "bf16", "--tile", "64x16x64", "--stages", "3",
               "--swap-ab", "--json", "-o", str(tmp_path / "g")])
    d = json.loads(capsys.readouterr().out)
    assert rc == 0 and d["swap_ab"] is True and d["tag"].endswith("_swapab")
    rc = main(["emit", "gemm", "--dtype", "bf16", "--arch", "sm_100a", "--swap-ab",
               "-o", str(tmp_path / "h")])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "--swap-ab" in err


# ----- the emitted kernel: independent checks and numerics --------------------------------------

@needs_nvcc
@pytest.mark.parametrize("splits", [1, 2])
def test_the_swap_ab_kernel_passes_every_independent_check(splits):
    r = _check(host=True, splits=splits)
    assert r.ok, [c.to_dict() for c in r.failures]
    names = {c.check for c in r.checks if c.status == "proved"}
    assert {"compile", "spills", "tensor-map", "instruction", "tma", "descriptor", "d-store",
            "protocol"} <= names
    assert splits == 1 or "split-k" in names
    assert "0 bytes spilled" in next(c.message for c in r.checks if c.check == "spills")
    maps = [c.message for c in r.checks if c.check == "tensor-map"]
    assert any("A (over the problem's B" in m for m in maps), maps


@needs_nvcc
@pytest.mark.parametrize("dtype,tile,splits,N", [("bf16", (64, 16, 64), 1, 150), ("bf16", (64, 16, 64), 1, 160),
                                                 ("bf16", (64, 16, 64), 2, 150), ("tf32", (128, 32, 32), 1, 150)])
def test_the_swap_ab_kernel_computes_a_at_b_transposed(dtype, tile, splits, N):
    """Decode shape with ragged edges: M = 13 (< BN), N = 150 or 160 (two and a bit 64-row
    tiles; D's rows 600 bytes: plain stores, or 640: the TMA-store epilogue), K = 200 (a partial
    K-tile); the replayed PTX gives numpy's A @ B^T exactly."""
    from verilayout.simulate.gemm_check import replay_gemm
    man, src = _emitted(dtype, tile, 3, splits)
    M, K = 13, 200
    A, B = _ints((M, K), 1), _ints((N, K), 2)
    D = replay_gemm(GemmManifest.from_dict(man), src, A, B)
    assert not np.isnan(D).any()
    assert np.array_equal(D, A @ B.T)


@needs_nvcc
def test_planted_untransposed_store_is_caught_and_the_numbers_differ():
    """The swap-AB epilogue stores the product's (n, m) at D(n, m) (D^T's layout) instead of
    D(m, n)."""
    from verilayout.simulate.gemm_check import replay_gemm
    old = "size_t(col) * size_t(M) + r;"
    edit = lambda s: s.replace(old, "size_t(r) * size_t(N) + col;")  # noqa: E731
    r = _check(edit)
    _caught(r, "d-store", r"accumulator element \d+ of tile .* is stored at D\(.*\[M=87, N=11")
    man, src = _emitted()
    M, N, K = 16, 75, 64        # D's rows 300 bytes: the plain-store epilogue
    A, B = _ints((M, K), 3), _ints((N, K), 4)
    D = replay_gemm(GemmManifest.from_dict(man), edit(src), A, B)
    assert not np.array_equal(D, A @ B.T)


@needs_nvcc
def test_planted_tma_store_at_untransposed_coordinates_is_caught():
    """The swap-AB TMA store puts the chunk at (row, column) = (its D column, its D row)."""
    old = ("tma_store_2d(&tmap_d, buf + b * EPI_ROWS * EPI_SPAN, int32_t(tm * BM + c * 64u + b * (EPI_SPAN / OUT_BYTES)),\n"
           "                             int32_t(tn * BN + q * EPI_CW));")
    new = ("tma_store_2d(&tmap_d, buf + b * EPI_ROWS * EPI_SPAN, int32_t(tn * BN + q * EPI_CW),\n"
           "                             int32_t(tm * BM + c * 64u + b * (EPI_SPAN / OUT_BYTES)));")
    r = _check(lambda s: s.replace(old, new), ragged=False)
    _caught(r, "d-store", r"(is stored at D\(|expected \d+ once each)")


@needs_nvcc
def test_planted_unswapped_tensor_maps_are_caught():
    """launch() builds the kernel's A map over A (not B) although the kernel computes D^T."""
    r = _check(lambda s: s.replace("const void* ka = SWAP_AB ? B : A;", "const void* ka = A;")
               .replace("const void* kb = SWAP_AB ? A : B;", "const void* kb = B;"), host=True,
               ragged=False)
    # the map over B has A's rows (M) and the kernel's B box; the kernel's A operand wants N rows
    _caught(r, "tensor-map", r"tensor map of A \(over the problem's B: swap-AB\): dims \[\d+, \d+\], "
            r"expected \[K=\d+, rows=\d+\]")
