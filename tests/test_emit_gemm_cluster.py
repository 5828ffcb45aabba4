"""Thread-block clusters of the emitted Hopper GEMM (``emit gemm --cluster 2x1|1x2``): the
manifest's multicast masks, slices and releases, and the independent checks of the PTX run for
every CTA of the cluster.

Oracles: the cluster's contract written here (rank r computes tile (ctm CM + r % CM, ctn CN +
r // CM); the CTAs sharing A are those with the same tile row, B the same tile column), nvcc /
ptxas (the kernel compiled for sm_90a, 0 spills) and the PTX ISA's mbarrier rules (a phase
completes when pending arrivals and tx-count are zero). Each planted bug is an edit of the emitted
``kernel.cu`` text written here; the check must name it.
"""
import shutil
from functools import lru_cache

import pytest

from verilayout.frontends.names import parse_tile, parse_cluster
from verilayout.emit.gemm_cluster import cluster_plan, require_cluster, share_mask
from verilayout.emit.gemm_plan import GemmManifest, build_gemm_manifest
from verilayout.errors import LayoutError
from tests.planted_gemm import caught, check_planted

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc (CUDA 12 or newer) is "
                                "not installed; the independent check compiles kernel.cu")
CFG = ("bf16", "128x64x64", 3, "1x2")


def _sharing(r: int, cm: int, cn: int, operand: str) -> set:
    """The ranks whose tile has r's tile row (A) or tile column (B): the contract, restated."""
    pos = [(x % cm, x // cm) for x in range(cm * cn)]
    axis = 0 if operand == "A" else 1
    return {x for x in range(cm * cn) if pos[x][axis] == pos[r][axis]}


@pytest.mark.parametrize("shape", [(2, 1), (1, 2)])
def test_the_masks_name_exactly_the_ctas_that_share_the_block(shape):
    cm, cn = shape
    p = cluster_plan(cm, cn, consumers=2)
    for r in range(cm * cn):
        assert {x for x in range(cm * cn) if p["a_masks"][r] >> x & 1} == _sharing(r, cm, cn, "A")
        assert {x for x in range(cm * cn) if p["b_masks"][r] >> x & 1} == _sharing(r, cm, cn, "B")
        # every CTA writing into r's stages (its A and B groups) gets r's releases
        assert {x for x in range(cm * cn) if p["peers"][r] >> x & 1} == \
            _sharing(r, cm, cn, "A") | _sharing(r, cm, cn, "B")
    # the empty barrier counts one arrival per consumer warp (4 per warpgroup) of both CTAs
    assert p["empty_count"] == 4 * 2 * 2
    assert all(o["status"] == "proved" for o in p["obligations"])


def test_a_mask_missing_a_cta_is_a_counterexample_of_the_manifest():
    from verilayout.emit import gemm_cluster as gc
    o = gc._mask_obligation([0b01, 0b10], 1, 2, "A")   # 1x2: both CTAs share A's M block
    assert o["status"] == "counterexample" and "misses CTA 1" in o["reason"]


def test_the_manifest_carries_the_cluster_and_its_obligations():
    m = build_gemm_manifest("bf16", tile=(128, 128, 64), stages=4, cluster=(2, 1))
    assert m["tag"].endswith("_c2x1") and m["cluster"]["size"] == 2
    assert m["barriers"]["empty_count"] == 16          # 2 consumers x 4 warps x 2 CTAs
    claims = " ".join(o["claim"] for o in m["obligations"])
    assert "multicast mask of A" in claims and "expect_tx" in claims and "release" in claims
    assert share_mask(1, 2, 1, "B") == 0b11 and share_mask(1, 2, 1, "A") == 0b10


@pytest.mark.parametrize("bad", ["3x1", "2x2", "x"])
def test_bad_cluster_shapes_are_layout_errors(bad):
    with pytest.raises(LayoutError, match="--cluster"):
        require_cluster(parse_cluster(bad))


@lru_cache(maxsize=2)
def _emitted(cfg=CFG):
    from verilayout.emit.cuda_gemm import emit_gemm
    e = emit_gemm(cfg[0], tile=parse_tile(cfg[1]), stages=cfg[2], cluster=parse_cluster(cfg[3]))
    return e.manifest, e.files["kernel.cu"]


def _check(edit=None, host=False, cfg=CFG, ragged=False):
    return check_planted(*_emitted(cfg), edit, host, ragged)


_caught = caught


@needs_nvcc
def test_the_cluster_kernel_passes_every_independent_check():
    r = _check(host=True, ragged=True)
    assert r.ok, [c.to_dict() for c in r.failures]
    names = {c.check for c in r.checks if c.status == "proved"}
    assert names == {"compile", "spills", "tensor-map", "index-functions", "multicast",
                     "expect-tx", "instruction", "tma", "descriptor", "d-store", "protocol",
                     "tma-store"}
    spills = next(c for c in r.checks if c.check == "spills")
    assert "0 bytes spilled" in spills.message
    # both CTAs were checked, and the ragged problem (a cluster tile past N)
    assert any("[CTA 1" in c.message for c in r.checks)
    assert any("N=" in c.message for c in r.checks)


_MASK_A = "uint16_t a_mask(uint32_t r) { (void)r; return uint16_t((r == 0u ? 0x3u : 0x3u)); }"
_PEERS = "uint32_t peers(uint32_t r) { (void)r; return (r == 0u ? 0x3u : 0x3u); }"

#: planted cluster bugs: kernel.cu's text ``old`` replaced by ``new``, and the check that must name it
_PLANTED = [
    # rank 0 sends its A slice to itself only: CTA 1, which shares the M block, never gets it
    pytest.param(_MASK_A, _MASK_A.replace("0x3u : ", "0x1u : "),
                 "multicast",
                 r"CTA 0, iteration 0: the multicast mask 0b0001 of its A slice .* misses CTA 1",
                 id="multicast_mask_missing_a_cta"),
    # consumers release a stage to their own producer only: the peer's producer, which also
    # writes into it, waits forever for half its arrivals
    pytest.param(_PEERS, _PEERS.replace("0x3u : 0x3u", "0x1u : 0x2u"),
                 "protocol", r"deadlock: .*producer waits", id="release_to_the_own_cta_only"),
    pytest.param("  cluster_sync();   // no CTA leaves", "  // no CTA leaves",
                 "protocol", r"after CTA \d has exited", id="missing_cluster_barrier_at_exit"),
    pytest.param("  cluster_sync();   // every CTA's mbarriers initialised",
                 "  __syncthreads();   // every CTA's mbarriers initialised",
                 "protocol", r"before CTA \d initialised it",
                 id="cta_barrier_instead_of_the_cluster_barrier_after_init"),
    # rank 1 loads A rows from the block start (slice 0's rows) into slice 1's place
    pytest.param("int32_t(tm * BM + rn * A_SLICE_ROWS)", "int32_t(tm * BM)",
                 "multicast", r"A slices landing there start at rows \[0, 0\]", id="slice_at_the_wrong_row"),
]


@needs_nvcc
@pytest.mark.parametrize("old,new,check,pattern", _PLANTED)
def test_planted_cluster_bug_is_caught(old, new, check, pattern):
    r = _check(lambda s: s.replace(old, new))
    _caught(r, check, pattern)
    assert not r.ok


@needs_nvcc
def test_a_2x1_cluster_with_split_k_2_passes_every_independent_check():
    """A 2x1 cluster with split-K 2: each CTA stores both K slots of its own rank's tiles only
    (the other rank's tiles are not its to store), and in the ragged problem rank 1's second
    cluster tile lies past M (its sums are never stored, so each slice may start afresh)."""
    from verilayout.emit.cuda_gemm import emit_gemm
    from verilayout.simulate.cluster_check import check_gemm
    e = emit_gemm("bf16", tile=(128, 64, 64), stages=3, cluster=(2, 1), splits=2)
    r = check_gemm(GemmManifest.from_dict(e.manifest), e.files["kernel.cu"], host=False, ragged=True)
    assert r.ok, [c.to_dict() for c in r.failures]
    names = {c.check for c in r.checks if c.status == "proved"}
    assert {"split-k", "d-store", "instruction", "protocol"} <= names
    # both CTAs and the ragged problem were checked for the K-slice cover
    cover = [c.message for c in r.checks if c.check == "split-k" and c.status == "proved"]
    assert any("[CTA 1" in m and "M=" in m for m in cover), cover
