"""wgmma against the Triton 3.9 wheel (one subprocess run for all requests).

* The accumulator fragment D equals Triton's ``nvidia_mma`` v3 layout (warpsPerCTA [4, 1],
  instrShape [16, N, K]) for the same 64 x N tile, basis for basis.
* Triton's own ``NVMMASharedLayout`` bases (from the wheel, not from verilayout's front-end)
  get a proved descriptor for every K-block, with the SBO of one 8-row atom.
"""
from __future__ import annotations


import pytest

from verilayout.wgmma import fragment
from verilayout.core.linear_layout import LinearLayout
from verilayout.wgmma import derive_descriptor

pytest.importorskip("triton")
pytestmark = pytest.mark.oracle

from tests.oracles import triton_oracle as oracle  # noqa: E402

NS = (8, 16, 32, 64, 128, 256)
MMA = [{"id": f"mma{n}k{k}", "kind": "nvidia_mma", "version": [3, 0], "warps_per_cta": [4, 1],
        "instr_shape": [16, n, k], "shape": [64, n], "views": False}
       for n in NS for k in (8, 16, 32)]
SHARED = [{"id": f"sh{sw}_{bits}_{tr}_{shape[0]}x{shape[1]}", "kind": "nvmma_shared",
           "swizzle_byte_width": sw, "element_bitwidth": bits, "transposed": tr, "shape": shape,
           "views": False}
          for sw in (32, 64, 128) for bits in (8, 16, 32) for tr in (False, True)
          for shape in ([64, 128], [128, 64])
          if not (tr and bits != 16) and shape[0 if tr else 1] * bits // 8 >= sw]


@pytest.fixture(scope="module")
def answers():
    if not oracle.oracle_available():
        pytest.skip("the Triton wheel cannot be imported in a subprocess")
    res = oracle.run_oracle(MMA + SHARED)
    return {r["id"]: r for r in res}


@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("k,dtype,acc", [(16, "f16", "f32"), (8, "tf32", "f32"), (32, "e4m3", "f32"),
                                         (16, "bf16", "f32"), (32, "s8", "s32")])
def test_d_fragment_equals_triton_nvidia_mma_v3(answers, n, k, dtype, acc):
    r = answers[f"mma{n}k{k}"]
    assert r["ok"], r
    ours = fragment(f"m64n{n}k{k}", "D", dtype, acc=acc).layout
    assert ours.bases == {d: r["bases"][d] for d in ("register", "lane", "warp")}
    assert r["out_dims"] == {"dim0": 64, "dim1": n}


@pytest.mark.parametrize("req", SHARED, ids=lambda q: q["id"])
def test_triton_nvmma_shared_bases_get_proved_descriptors(answers, req):
    r = answers[req["id"]]
    assert r["ok"], r
    bits, sw, tr = req["element_bitwidth"], req["swizzle_byte_width"], req["transposed"]
    dtype = {8: "e4m3", 16: "f16", 32: "tf32"}[bits]
    L = LinearLayout({"offset": r["bases"]["offset"]}, ["dim0", "dim1"])
    # an A operand [M, K]: K-major unless transposed; one wgmma reads 64 rows
    major = "MN" if tr else "K"
    kx = 256 // bits
    for mb in range(req["shape"][0] // 64):
        for kb in range(req["shape"][1] // kx):
            p = derive_descriptor(L, dtype=dtype, major=major, k_block=kb, mn=64, mn_block=mb)
            assert p.verdict.proved and p.descriptor.swizzle == f"{sw}B"
            if major == "K":
                assert p.descriptor.sbo == 8 * sw
