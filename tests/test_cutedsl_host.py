"""The host side of the CuTe-DSL corpus (tests/cutedsl/corpus): the tensor maps the host encodes and the
launch, read from the kept MLIR's host function (frontends/cute_host) and checked against the kernel
(audit/cute_dsl_host). Expected values are read here by hand from the MLIR text and the corpus manifest;
the field rules are the CUDA driver API's (cuTensorMapEncodeTiled: globalStrides multiples of 16 bytes,
boxDim in 1..256, boxDim[0] x elementSize a multiple of 16 bytes). Planted bugs are edits of the MLIR's
host side made here, each asserted to change exactly one place of the text."""
from __future__ import annotations

import gzip
import json
import os

import pytest
import z3

from verilayout.audit.cute_dsl import audit_pair
from verilayout.audit.cute_dsl_host import NEW_CHECKS, coordinate_range, map_findings, overflow_for_grid, trip_premise
from verilayout.frontends.cute_host import HostTmaMap, host_launch, host_tma_maps, kernel_facts
from verilayout.frontends.cute_mlir import parse_cute_mlir
from tests.audited import audit_cute_pair

CORPUS = os.path.join(os.path.dirname(__file__), "cutedsl", "corpus")
with open(os.path.join(CORPUS, "manifest.json")) as _f:
    MANIFEST = json.load(_f)["kernels"]
with open(os.path.join(CORPUS, "manifest_quack.json")) as _f:
    QUACK = json.load(_f)["kernels"]
KERNELS = sorted(MANIFEST) + sorted(QUACK)
KK = "hopper_gemm_f16_kk_128x128"
PAIR = "blackwell_gemm_f16_kk_256x128_2cta"
MCAST = "quack_gemm_sm90_f16_kk_128x128_cluster2x1"
QUACK_KK = "quack_gemm_sm90_f16_kk_128x128"


def _text(name: str, kind: str) -> str:
    with gzip.open(os.path.join(CORPUS, f"{name}.{kind}.gz"), "rt") as f:
        return f.read()


def _edit(text: str, old: str, new: str) -> str:
    """``text`` with its one occurrence of ``old`` replaced (a planted bug changes exactly one place)."""
    assert text.count(old) == 1, (old, text.count(old))
    return text.replace(old, new)


def _host(checks) -> list:
    return [c for c in checks if c.check in NEW_CHECKS]


def _errors(checks) -> list:
    return [c for c in checks if c.severity == "error"]


@pytest.fixture(scope="module")
def kk() -> tuple[str, str]:
    return _text(KK, "mlir"), _text(KK, "ptx")


# ------------------------------------------------------------------------------------------ the reader


def test_hopper_gemm_maps_read_as_the_driver_receives_them(kk):
    """A is (M, K, L) = (1024, 512, 1) K-major (manifest mnkl, a_major k): the memref
    "(1024,512,1):(512,1,524288)" of f16. The TMA's dim 0 is the contiguous K (the coordinate tensor's 1@0
    on mode 1), dim 1 is M, 512 x 2 = 1024 bytes apart; the box is tma_gbasis "(64,128)": 64 f16 = 128 bytes
    of K (the 128B swizzle row) by the 128-row tile. C is (M, N) = (1024, 1024) N-major: dims (N, M), rows
    1024 x 2 = 2048 bytes apart, box "(32,64)" under S<2,4,3> (64B)."""
    m, n, k, _l = MANIFEST[KK]["mnkl"]
    maps = host_tma_maps(parse_cute_mlir(kk[0]))
    assert [t.kind for t in maps] == ["load", "load", "store"]
    a, b, c = maps
    assert (a.global_dims, a.global_strides, a.box, a.swizzle, a.elem) == ((k, m), (2, k * 2), (64, 128), "128B", "f16")
    assert (b.global_dims, b.global_strides, b.box) == ((k, n), (2, k * 2), (64, 128))
    assert (c.global_dims, c.global_strides, c.box, c.swizzle) == ((n, m), (2, n * 2), (32, 64), "64B")
    assert all(t.num_multicast == 1 for t in maps)


def test_launch_read_from_the_launch_cfg(kk):
    """gridDim = (M / 128, N / 128, L) (manifest: mnkl, tile 128x128), blockDim the kernel's nvvm.reqntid
    = array<i32: 128, 1, 1>, cluster_dim (1, 1, 1); dynamicSmemBytes is cute.kernel_smem_size of the kernel."""
    m, n, _k, l = MANIFEST[KK]["mnkl"]
    tm, tn = MANIFEST[KK]["tile_shape_mn"]
    mod = parse_cute_mlir(kk[0])
    (la,) = host_launch(mod)
    (kern,) = kernel_facts(mod)
    assert la.grid == (m // tm, n // tn, l) and la.block == (128, 1, 1) and la.cluster == (1, 1, 1)
    assert la.smem is None and la.smem_from == f"cute.kernel_smem_size @kernels::@{kern.name}"
    assert la.kernel == kern.name and len(la.args) == len(kern.args) and kern.grid == la.grid


def test_quack_maps_keep_dynamic_dims_and_stride_divisibility():
    """quack's global tensors are "(?,?,?):(?{i64 div=8},1,?{i64 div=8})": every dim dynamic, the strides of
    dims 1 and 2 multiples of 8 f16 = 16 bytes; the grid's z is computed at run time (%86)."""
    mod = parse_cute_mlir(_text(QUACK_KK, "mlir"))
    for t in host_tma_maps(mod):
        assert t.global_dims == (None, None, None) and t.global_strides == (2, None, None)
        assert t.stride_divisors[1:] == (16, 16)
        broken, premises = map_findings(t)
        assert broken == [] and any("globalDim[0] is dynamic" in p for p in premises)
        assert not any("multiple of 16" in p for p in premises)          # ?{div=8} f16: 16 bytes, proved
    (la,) = host_launch(mod)
    assert la.grid[:2] == (1, 1) and la.grid[2] is None


def test_driver_field_rules_name_field_and_value():
    """cuTensorMapEncodeTiled: boxDim in 1..256; boxDim[0] x elementSize a multiple of 16; globalStrides
    multiples of 16; with SWIZZLE_128B the inner box at most 128 bytes."""
    ok = HostTmaMap(1, "%a", "load", "f16", 16, (512, 1024), (2, 1024), (2, 1024), (64, 128), "128B", "", 1, "")
    assert map_findings(ok) == ([], [])
    box = HostTmaMap(1, "%a", "load", "f16", 16, (512, 1024), (2, 1024), (2, 1024), (68, 300), "128B", "", 1, "")
    broken = " | ".join(map_findings(box)[0])
    assert "boxDim[1] = 300 is outside 1..256" in broken
    assert "boxDim[0] x elementSize = 136 bytes is not a multiple of 16" in broken      # 68 f16
    assert "136 bytes exceeds the 128-byte span of SWIZZLE_128B" in broken


def test_trip_premise_bound():
    """A counter starting below 2^16 and stepping 2 per iteration, run at most 1000 times, stays below
    2^16 + 2000 < 2^17: a premise of 2^17 is proved, one of 2^16 is not (it stays)."""
    assert trip_premise(17, 2, 1000, "")[0] == "proved"
    assert trip_premise(16, 2, 1000, "")[0] == "unknown"
    assert trip_premise(29, 1, None, "the output's globalDim is dynamic") == (
        "unknown", "the trip-count premise (below 2^29) stays: the output's globalDim is dynamic")


# ------------------------------------------------------------------------------------------ the corpus


@pytest.fixture(scope="module")
def audited() -> dict:
    return {k: audit_cute_pair(_text(k, "mlir"), _text(k, "ptx"), f"{k}.ptx") for k in KERNELS}


@pytest.mark.parametrize("name", KERNELS)
def test_no_false_error_on_the_unmodified_kernels(name, audited):
    """Every kernel: a tma-map per host map, one launch check, none of them an error; tma-map proved where
    a kernel partition is tied to the map (every map of the corpus)."""
    checks = audited[name].checks
    host = _host(checks)
    assert _errors(host) == []
    nmaps = len(host_tma_maps(parse_cute_mlir(_text(name, "mlir"))))
    maps = [c for c in host if c.check == "tma-map"]
    assert len(maps) == nmaps and all(c.status == "proved" for c in maps), [c.message for c in maps][:1]
    assert [c.status for c in host if c.check == "launch"] == ["proved"]


@pytest.mark.parametrize("name", [k for k in sorted(MANIFEST) if "grouped" not in k])
def test_every_grid_coordinate_inside_the_tensor(name, audited):
    """The DSL examples launch one CTA per output tile (grid = tiles, static): every TMA copy's coordinate
    that is a function of the CTA's place is proved inside its map's globalDim for every CTA."""
    grid = [c for c in audited[name].checks if c.check == "tma-grid"]
    copies = [n for n, line in enumerate(_text(name, "ptx").splitlines(), 1)
              if line.lstrip().startswith("cp.async.bulk.tensor")]
    assert sorted(c.line for c in grid) == copies
    assert all(c.status == "proved" for c in grid), [c.message for c in grid if c.status != "proved"][:1]


def test_device_side_checks_unchanged_by_the_host_side(audited):
    """The host-side checks come after the device side's, which keep their order: no device check is
    one of the new names, and the new ones are a suffix of the list."""
    for name in KERNELS:
        checks = list(audited[name].checks)
        first = next(i for i, c in enumerate(checks) if c.check in NEW_CHECKS)
        assert all(c.check in NEW_CHECKS for c in checks[first:]), name


def test_pair_and_multicast_premises_checked_against_the_cluster(audited):
    """(b): the 2-CTA kernel's pair premise and the cluster kernel's multicast premise: the host launches
    clusters of (2, 1, 1) (its cluster_dim), which hold the pair along x and the multicast_layout's 2 CTAs."""
    for name, what in ((PAIR, "pairs CTAs along x"), (MCAST, "the multicast_layout (2,1):(0,1) spans the cluster's 2")):
        prem = [c for c in audited[name].checks if c.check == "host-premise" and c.data["premise_kind"] == "b"]
        assert prem and all(c.status == "proved" and what in c.message for c in prem), name


def test_dynamic_problem_shapes_leave_the_trip_count_premise_stated(audited):
    """(a): quack's problem shape is dynamic ("(?,?,?)"), so the trip-count premise stays (unknown), and the
    grouped GEMM rewrites its maps in the kernel (tensormap.replace): the host's shape is a placeholder."""
    for name, why in ((QUACK_KK, "is dynamic"), ("hopper_grouped_gemm_f16_kk_128x128", "tensormap.replace")):
        prem = [c for c in audited[name].checks if c.check == "host-premise" and c.data["premise_kind"] == "a"]
        assert prem and all(c.status == "unknown" and why in c.message for c in prem), name


# ------------------------------------------------------------------------------------------ planted bugs

_A_HOST = ('make_non_exec_tiled_tma_load(%arg0, %slice, %4) <{kind = <sm_90> num_multicast = 1}> : (!memref_gmem_f16, '
           '!cute.composed_layout<"S<3,4,3> o 0 o ((8,16),(64,1)):((64,512),(1,0))">, !cute.layout<"(128,64):(1@0,1@1)">) '
           '-> (!cute_nvgpu.atom.non_exec_tiled_tma_load<sm_90, f16, copy_bits = 131072, tma_gbasis = <"')
_LAUNCH = "%9 = cuda.launch_cfg.create<max_attrs = 17 : i32> (blockDim = (%c128_i32, %c1_i32, %c1_i32), dynamicSmemBytes = %7, "


def test_planted_box_dim_is_an_error_naming_both_values(kk):
    """The host encodes A's box as 64x64 (its tma_gbasis), the kernel's partition copies 64x128 boxes."""
    mlir = _edit(kk[0], _A_HOST + '(64,128):', _A_HOST + '(64,64):')
    bad = _errors(_host(audit_pair(mlir, kk[1]).checks))
    assert [c.check for c in bad] == ["tma-map"]
    assert "boxDim[1]: the host encodes 64 (MLIR line 1221), the kernel's partition (MLIR line 233) expects 128" \
        in bad[0].message


def test_planted_global_stride_is_an_error_naming_the_field(kk):
    """A's rows 500 f16 apart: globalStrides[1] = 1000 bytes, not a multiple of 16 (cuTensorMapEncodeTiled)."""
    mlir = _edit(kk[0], '!memref_gmem_f16 = !cute.memref<f16, gmem, align<16>, "(1024,512,1):(512,1,524288)">',
                 '!memref_gmem_f16 = !cute.memref<f16, gmem, align<16>, "(1024,512,1):(500,1,524288)">')
    bad = _errors(_host(audit_pair(mlir, kk[1]).checks))
    assert {c.check for c in bad} == {"tma-map"} and len(bad) == 2          # A and B share the memref type
    assert all("globalStrides[1] = 1000 bytes is not a multiple of 16 (CUDA driver API cuTensorMapEncodeTiled)"
               in c.message for c in bad)


def test_planted_grid_overrun_is_caught_at_the_copies(kk):
    """A grid of 16 x 8 CTAs (launch and launch facts alike) over M = 1024 rows of 128-row tiles: the CTAs
    with x >= 8 load rows from 1024 on, past globalDim[1] = 1024 of A's map."""
    m = MANIFEST[KK]["mnkl"][0]
    mlir = _edit(kk[0], _LAUNCH + "gridDim = (%c8_i32, %c8_i32, %c1_i32)",
                 _LAUNCH + "gridDim = (%c16_i32, %c8_i32, %c1_i32)")
    mlir = _edit(mlir, "    %9 = cuda.launch_cfg.create", "    %c16_i32 = arith.constant 16 : i32\n    %9 = cuda.launch_cfg.create")
    mlir = _edit(mlir, "exact_grid_dim = array<i64: 8, 8, 1>", "exact_grid_dim = array<i64: 16, 8, 1>")
    bad = _errors(_host(audit_pair(mlir, kk[1]).checks))
    assert bad and {c.check for c in bad} == {"tma-grid"}
    assert all(f"past globalDim[1] = {m}" in c.message and "overruns the tensor" in c.message for c in bad)


def test_planted_launch_grid_disagreeing_with_the_kernel_is_an_error(kk):
    """Only the launch's grid changed: it disagrees with the kernel's exact_grid_dim; the field and both
    values are named."""
    mlir = _edit(kk[0], _LAUNCH + "gridDim = (%c8_i32, %c8_i32, %c1_i32)",
                 _LAUNCH + "gridDim = (%c8_i32, %c1_i32, %c1_i32)")
    launch = [c for c in audit_pair(mlir, kk[1]).checks if c.check == "launch"]
    assert launch[0].status == "counterexample"
    assert "gridDim: the launch passes (8, 1, 1)" in launch[0].message and "compiled for (8, 8, 1)" in launch[0].message


def test_planted_small_dynamic_smem_is_an_error(kk):
    """dynamicSmemBytes = 1024 instead of cute.kernel_smem_size: the kernel's one shared allocation holds
    the struct fields "sA:114688:1024" and "sB:114688:115712" (size:offset), so it ends at 115712 + 114688."""
    end = 115712 + 114688
    assert '"sB:114688:115712"' in kk[0]
    mlir = _edit(kk[0], "dynamicSmemBytes = %7,", "dynamicSmemBytes = %c1024_i64,")
    mlir = _edit(mlir, "    %9 = cuda.launch_cfg.create", "    %c1024_i64 = arith.constant 1024 : i64\n    %9 = cuda.launch_cfg.create")
    launch = [c for c in audit_pair(mlir, kk[1]).checks if c.check == "launch"]
    assert launch[0].status == "counterexample"
    assert f"dynamicSmemBytes: the launch passes 1024 bytes, the kernel's buffers end at byte {end}" in launch[0].message


def test_planted_cluster_disagreeing_with_the_multicast_is_an_error():
    """quack's 2x1 cluster kernel launched with cluster_dim (1, 1, 1): the copies' multicast_layout
    (2,1):(0,1) spans 2 CTAs, and the kernel was compiled for exact_cluster_dim (2, 1, 1)."""
    mlir, ptx = _text(MCAST, "mlir"), _text(MCAST, "ptx")
    mlir = _edit(mlir, "cuda.launch_cfg.cluster_dim[%91] (%c2_i32, %c1_i32, %c1_i32)",
                 "cuda.launch_cfg.cluster_dim[%91] (%c1_i32, %c1_i32, %c1_i32)")
    checks = _host(audit_pair(mlir, ptx).checks)
    launch = [c for c in checks if c.check == "launch"]
    assert launch[0].status == "counterexample" and "cluster_dim: the launch passes (1, 1, 1)" in launch[0].message \
        and "compiled for (2, 1, 1)" in launch[0].message
    prem = [c for c in checks if c.check == "host-premise" and c.data["premise_kind"] == "b"]
    assert prem and all(c.status == "counterexample" and "cluster_dim (1, 1, 1) has 1 CTA(s)" in c.message
                        and "spans 2" in c.message for c in prem)


def test_planted_cluster_without_a_pair_is_an_error():
    """The 2-CTA Blackwell GEMM (cta_group::2) launched on clusters of one CTA: no peer for the pair."""
    mlir, ptx = _text(PAIR, "mlir"), _text(PAIR, "ptx")
    old = next(line.strip().split(" loc(")[0] for line in mlir.splitlines() if "cuda.launch_cfg.cluster_dim[" in line)
    assert "(%c2_i32, %c1_i32, %c1_i32)" in old
    mlir = _edit(mlir, old, old.replace("(%c2_i32, %c1_i32, %c1_i32)", "(%c1_i32, %c1_i32, %c1_i32)"))
    prem = [c for c in _host(audit_pair(mlir, ptx).checks) if c.check == "host-premise"]
    assert prem and all(c.status == "counterexample" and "cluster_dim.x = 1" in c.message for c in prem)


def test_static_problem_shape_proves_the_trip_count_premise():
    """quack's output given a static shape (the store's memref "(?,?,?)" planted as 1024 x 1024 x 1): at
    most ceil(1024/32) x ceil(1024/128) = 256 store boxes, one CTA taken for the dynamic grid, so the
    counter stays below 2^16 + 256 < 2^29: the premise is proved."""
    mlir, ptx = _text(QUACK_KK, "mlir"), _text(QUACK_KK, "ptx")
    store = next(line for line in mlir.splitlines() if "make_non_exec_tiled_tma_store(" in line)
    gmem = store.split(" : (")[1].split(",")[0].strip()                    # the store's global memref alias
    alias = next(line for line in mlir.splitlines() if line.startswith(gmem + " = "))
    assert '"(?,?,?):(?{i64 div=8},1,?{i64 div=8})"' in alias
    mlir = _edit(mlir, alias, alias.replace('"(?,?,?):(?{i64 div=8},1,?{i64 div=8})"', '"(1024,1024,1):(1024,1,1048576)"'))
    prem = [c for c in audit_pair(mlir, ptx).checks if c.check == "host-premise" and c.data["premise_kind"] == "a"]
    assert prem and all(c.status == "proved" and "256 store boxes" in c.message for c in prem)


def test_planted_swizzle_disagreeing_with_the_kernel_buffer_is_an_error(kk):
    """A's host map encoded from a 64B-swizzled shared layout (S<2,4,3>): the kernel's buffer is S<3,4,3>
    (128B), and the 128-byte inner box (64 f16) is past the 64-byte span (cuTensorMapEncodeTiled)."""
    old = _A_HOST.replace('!cute.composed_layout<"S<3,4,3>', '!cute.composed_layout<"S<2,4,3>')
    mlir = _edit(kk[0], _A_HOST, old)
    bad = _errors(_host(audit_pair(mlir, kk[1]).checks))
    assert [c.check for c in bad] == ["tma-map"]
    assert "swizzle: the host encodes SWIZZLE_64B (S<2,4,3>), the kernel's buffer is S<3,4,3> (SWIZZLE_128B)" in bad[0].message
    assert "128 bytes exceeds the 64-byte span of SWIZZLE_64B" in bad[0].message


def test_grid_coordinate_and_int32_product_over_the_launch():
    """A coordinate 192 x %ctaid.x (the pingpong kernel's N tile): with a grid of 1000 CTAs along x it is
    below 192 x 1000 and its int32 product never overflows; with 2^24 CTAs, CTA 2^24 - 1 gives
    192 x (2^24 - 1) > 2^31: the product overflows for that CTA (an error, every id bounded by the grid)."""
    x = z3.BitVec("v%ctaid.x", 32)
    e = x * 192
    fits = z3.And(z3.BVMulNoOverflow(x, z3.BitVecVal(192, 32), True), z3.BVMulNoUnderflow(x, z3.BitVecVal(192, 32)))
    assert coordinate_range(e, 192 * 1000, (1000, 1, 1), (1, 1, 1))[0] == "proved"
    assert coordinate_range(e, 192 * 999, (1000, 1, 1), (1, 1, 1))[0] == "counterexample"
    assert overflow_for_grid(fits, (1000, 1, 1), (1, 1, 1))[0] == "proved"
    assert overflow_for_grid(fits, (1 << 24, 1, 1), (1, 1, 1))[0] == "counterexample"
    assert overflow_for_grid(fits, ((1 << 31) // 192, 1, 1), (1, 1, 1))[0] == "proved"   # x <= 2^31/192 - 1
