"""Render the manifest of :mod:`verilayout.emit.gemm_plan` to a complete sm_90a CUDA GEMM.

``kernel.cu`` computes ``D[M, N] = A[M, K] @ B[N, K]^T`` (A, B row-major ``dtype``, D row-major
f32) for any ``M, N, K >= 1`` with ``K * bytes(dtype) % 16 == 0``:

* a persistent grid (one CTA per SM) walks the output tiles in groups of ``GROUP_M`` tile rows;
* warpgroup 0 is the producer: one thread issues the TMA loads (``cp.async.bulk.tensor.2d``,
  tensor maps encoded on the host by ``cuTensorMapEncodeTiled`` with the manifest's swizzle and
  box) into a ring of ``stages`` buffers guarded by ``full``/``empty`` mbarriers
  (``expect_tx``, phase bits); out-of-range rows and columns are zero-filled by TMA;
* warpgroups 1.. are the consumers, one per 64 rows of the tile (2 for a 128-row tile); each
  issues ``wgmma.mma_async`` with the proved descriptors (start field ``(address & 0x3FFFF) >> 4``
  added to the base-0 value), keeps one wgmma group in flight (``wgmma.wait_group 1``) and
  releases a stage only after the group that read it retired;
* with two consumers the registers are rebalanced with ``setmaxnreg`` (producer 40, consumers 232);
* the epilogue (manifest ``store``): where D's rows are 16-byte multiples, each consumer stages
  chunks of its accumulators in shared memory (output type, D's orientation, TMA's swizzle), fences
  them to the async proxy (``fence.proxy.async.shared::cta``), and one thread stores each chunk with
  ``cp.async.bulk.tensor`` (global <- shared; TMA clips rows and columns past D); a buffer is
  rewritten only after ``cp.async.bulk.wait_group.read`` and a barrier. Otherwise (split-K's
  workspace, other row lengths, or no shared memory left beside the ring) each pair of adjacent
  accumulator columns is written with one 8-byte store, predicated on ``M`` and ``N`` (scalar
  stores where ``N`` is odd);
* swap-AB (``swap_ab``): the kernel computes ``D^T = B A^T`` (``launch`` hands it B as its A
  operand), so a small M fills the tile's N instead of zero rows of the 64-row wgmma, and the
  epilogue writes the product's ``(n, m)`` at ``D(m, n)``.
* ping-pong (manifest ``consumer_schedule``): a 64-row tile; the CTA's j-th unit is consumer
  ``j % 2``'s, which steps over the other's ring stages; turn mbarriers (``mma[2]``, ``epi[2]``,
  all 128 threads arrive) hand the tensor cores and then the epilogue from one consumer to the
  other, so one's epilogue runs under the other's MMA (the kernel schedule of CUTLASS's
  ``sm90_gemm_tma_warpspecialized_pingpong.hpp``). Cooperative kernels are written as before.

The manifest's obligations are printed at the top of the file. ``main.cu`` is the host program
for a GPU: an exact reference check on small shapes (integer-valued inputs, sums exact in f32)
and a timed comparison with cuBLASLt (loaded with ``dlopen``; the header is not needed to build).

>>> m = build_gemm_manifest("f16", tile=(128, 128, 64), stages=3)
>>> src = render_gemm_cuda(m)
>>> "cp.async.bulk.tensor.2d" in src, "wgmma_wait<1>();" in src
(True, True)
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from string import Template

from verilayout.emit.cuda_wgmma import Emission
from verilayout.emit.gemm_plan import GEMM_FORMAT, GemmManifest, build_gemm_manifest
from verilayout.errors import LayoutError

__all__ = ["GROUP_M", "PRODUCER_REGS", "CONSUMER_REGS", "render_gemm_cuda", "render_gemm_main", "typed_manifest",
           "render_gemm_makefile", "render_gemm_readme", "emit_gemm", "emission_of", "wgmma_asm",
           "epilogue_source", "epilogue_subs", "epilogue_words", "REDUCE_KERNEL", "REDUCE_LAUNCH",
           "SPLIT_WORKSPACE", "ENCODE_TILED", "EPILOGUE_CONSTANTS"]

#: Tile rows (of BM) visited together by the persistent scheduler (L2 reuse of B).
GROUP_M = 8
#: ``setmaxnreg`` targets with two consumer warpgroups: 128 * 40 + 256 * 232 <= 65536.
PRODUCER_REGS = 40
CONSUMER_REGS = 232

#: The launcher's output pointer: ``D``, or with split-K a float workspace of SPLITS x M x N
#: (grown on demand, kept between launches) that the reduction kernel then sums into ``D``; the
#: sm_90a and sm_100a launchers both start with it.
SPLIT_WORKSPACE = r"""  store_t* out = reinterpret_cast<store_t*>(D);   // split-K: the partial sums go to the workspace
  static float* ws = nullptr;
  static size_t ws_elems = 0;
  if (SPLITS > 1) {
    const size_t need = size_t(SPLITS) * size_t(M) * size_t(N);
    if (need > ws_elems) {
      if (ws != nullptr) cudaFree(ws);
      ws = nullptr; ws_elems = 0;
      if (cudaMalloc(&ws, need * sizeof(float)) != cudaSuccess) return 3;
      ws_elems = need;
    }
    out = reinterpret_cast<store_t*>(ws);
  }
"""

REDUCE_KERNEL = r"""// ----- split-K reduction: D[i] = W[0][i] + W[1][i] + ... + W[SPLITS-1][i], each slot once, in order
__global__ void __launch_bounds__(256)
vl_splitk_reduce(const float* __restrict__ W, out_t* __restrict__ D, int M, int N, const float* __restrict__ bias) {
  const size_t mn = size_t(M) * size_t(N);
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < mn; i += size_t(gridDim.x) * blockDim.x) {
    float acc = W[i];
#pragma unroll
    for (int s = 1; s < SPLITS; ++s) acc += W[size_t(s) * mn + i];
    store_one(D + i, epilogue(acc, bias, uint32_t(i % size_t(N)), N));   // the epilogue, once
  }
}

"""
REDUCE_LAUNCH = """  {   // split-K: the reduction of the SPLITS partial sums, after the GEMM on the same stream
    const size_t mn = size_t(M) * size_t(N);
    const size_t blocks = (mn + 255) / 256, cap = size_t(ctas) * 8;
    vl_splitk_reduce<<<int(blocks < cap ? blocks : cap), 256, 0, stream>>>(
        reinterpret_cast<const float*>(out), reinterpret_cast<out_t*>(D), M, N, bias);
  }
"""
TMA_DTYPE = {"f16": "CU_TENSOR_MAP_DATA_TYPE_FLOAT16", "bf16": "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16",
              "e4m3": "CU_TENSOR_MAP_DATA_TYPE_UINT8", "tf32": "CU_TENSOR_MAP_DATA_TYPE_FLOAT32"}
ELEM_T = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t"}
# cudaDataType_t of library_types.h (CUDA_R_16F 2, CUDA_R_16BF 14, CUDA_R_8F_E4M3 28,
# CUDA_R_32F 0) and cublasComputeType_t (COMPUTE_32F 68, COMPUTE_32F_FAST_TF32 77)
_CUBLAS_TYPE = {"f16": (2, 68), "bf16": (14, 68), "e4m3": (28, 68), "tf32": (0, 77)}


def typed_manifest(man: GemmManifest | Mapping) -> GemmManifest:
    """Law: ``man`` itself when typed, else its JSON object read once
    (:meth:`verilayout.emit.gemm_plan.GemmManifest.from_dict`); a ``LayoutError`` unless it is a
    GEMM emit manifest of this version.

    >>> typed_manifest(build_gemm_manifest("f16", tile=(64, 64, 64), stages=2)).bm
    64
    """
    if isinstance(man, GemmManifest):
        return man
    if not isinstance(man, Mapping) or man.get("format") != GEMM_FORMAT:
        raise LayoutError(f"not a GEMM emit manifest (expected format {GEMM_FORMAT!r})")
    return GemmManifest.from_dict(man)


def require_gemm_manifest(man: GemmManifest | Mapping) -> GemmManifest:
    """Law: the typed manifest (:func:`typed_manifest`) when every obligation of ``man`` is
    proved; a ``LayoutError`` naming the first one that is not (no kernel is written)."""
    g = typed_manifest(man)
    bad = [o["claim"] for o in g.obligations if o.get("status") != "proved"]
    if bad:
        raise LayoutError(f"obligation not proved, no kernel written: {bad[0]}")
    return g


def u64_literal(text: str) -> str:
    """A hex string as a CUDA 64-bit literal: ``u64_literal("0x1f")`` is ``"0x000000000000001full"``."""
    return f"{int(text, 16):#018x}ull"


def select_expr(values: list[str], var: str) -> str:
    """``var == 0 ? v0 : var == 1 ? v1 : ... : vn`` (folded by the compiler when var is known)."""
    out = values[-1]
    for i in range(len(values) - 2, -1, -1):
        out = f"({var} == {i}u ? {values[i]} : {out})"
    return out


def _xor_terms(bases: list, var: str, axis: int) -> list[str]:
    terms = []
    for bit, b in enumerate(bases):
        if b[axis]:
            terms.append(f"((({var} >> {bit}u) & 1u) * {b[axis]}u)")
    return terms


def _fragment_function(frag: dict) -> list[str]:
    """``d_row``/``d_col``: (row, col) of accumulator element ``e`` of thread ``tid`` of one
    warpgroup, the XOR of the PTX D-fragment bases its register, lane and warp bits select."""
    b = frag["bases"]
    out = []
    for name, axis in (("d_row", 0), ("d_col", 1)):
        terms = (_xor_terms(b["register"], "e", axis) + _xor_terms(b["lane"], "lane", axis)
                 + _xor_terms(b.get("warp", []), "warp", axis))
        expr = " ^ ".join(terms) if terms else "0u"
        out += [f"__host__ __device__ __forceinline__ uint32_t {name}(uint32_t tid, uint32_t e) {{",
                "  const uint32_t lane = tid % 32u, warp = tid / 32u;",
                "  (void)lane; (void)warp; (void)e;",
                f"  return {expr};", "}"]
    return out


def wgmma_asm(man: GemmManifest) -> list[str]:
    """The C++ lines of ``wgmma_tile``: one ``wgmma.mma_async`` on the whole accumulator,
    descriptors in ``%{n}``/``%{n+1}``, the scale-d predicate from ``%{n+2}``.

    >>> m = typed_manifest(build_gemm_manifest("tf32", tile=(64, 64, 32), stages=2))
    >>> [l for l in wgmma_asm(m) if "wgmma.mma_async" in l][0].strip()[:56]
    '"wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {%0'
    """
    n = man.bn // 2
    regs = ", ".join(f"%{i}" for i in range(n))
    # f16/bf16 take imm-trans-a/b (0: K-major); tf32 and e4m3 have no transpose operands
    tail = "p, 1, 1, 0, 0" if man.dtype in ("f16", "bf16") else "p, 1, 1"
    ops = ", ".join(f'"+f"(d[{i}])' for i in range(n))
    return ["__device__ __forceinline__ void wgmma_tile(float* d, uint64_t desc_a, uint64_t desc_b, "
            "uint32_t scale_d) {",
            "  asm volatile(",
            '    "{\\n"',
            '    ".reg .pred p;\\n"',
            f'    "setp.ne.b32 p, %{n + 2}, 0;\\n"',
            f'    "{man.text("instruction")} {{{regs}}}, %{n}, %{n + 1}, {tail};\\n"',
            '    "}\\n"',
            f"    : {ops}",
            '    : "l"(desc_a), "l"(desc_b), "r"(scale_d));',
            "}"]


#: the host's 2-D tensor map of a rows x K row-major operand (box: BOX_K elements of K x box_rows
#: rows), shared by the sm_90a and sm_100a programs; ``${tma_dtype}`` and ``${swizzle_code}`` are
#: filled with the kernel's template
#: The driver's ``cuTensorMapEncodeTiled``, looked up through the runtime (no -lcuda needed);
#: the sm_90a and sm_100a host code both call it.
#: the kernel's epilogue constants (D's element and store types, the fused bias / activation
#: switches), template text of the sm_90a and the sm_100a kernels alike
EPILOGUE_CONSTANTS = r"""typedef ${out_t} out_t;                            // one D element (${out_dtype}; 16-bit types as raw bits)
typedef ${store_t} store_t;                        // what the GEMM kernel stores (f32 partials when split)
constexpr bool FUSED = ${fused};                   // bias / activation / conversion in the GEMM epilogue
[[maybe_unused]] constexpr bool HAS_BIAS = ${has_bias};
[[maybe_unused]] constexpr int ACTIVATION = ${act_code};   // 0 none, 1 ReLU, 2 GELU (tanh form), 3 SiLU
[[maybe_unused]] constexpr int OUT_BYTES = int(sizeof(out_t));
"""

ENCODE_TILED = r"""typedef CUresult (*vl_encode_tiled_t)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                      const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                      const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                      CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

static vl_encode_tiled_t encode_tiled() {
  static vl_encode_tiled_t fn = nullptr;
  if (fn == nullptr) {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q;
#if CUDART_VERSION >= 12050
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) != cudaSuccess) p = nullptr;
#else
    if (cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &p, cudaEnableDefault, &q) != cudaSuccess) p = nullptr;
#endif
    fn = reinterpret_cast<vl_encode_tiled_t>(p);
  }
  return fn;
}
"""

MAKE_TENSOR_MAP = r"""static int make_tensor_map(CUtensorMap* map, const void* ptr, int rows, int K, uint32_t box_rows) {
  vl_encode_tiled_t fn = encode_tiled();
  if (fn == nullptr) return 4;
  const cuuint64_t dims[2] = {cuuint64_t(K), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(K) * ELEM_BYTES};
  const cuuint32_t box[2] = {BOX_K, box_rows};
  const cuuint32_t estr[2] = {1u, 1u};
  const CUresult r = fn(map, ${tma_dtype}, 2, const_cast<void*>(ptr), dims, strides, box, estr,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CUtensorMapSwizzle(${swizzle_code}),
                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? 0 : 5;
}
"""


_KERNEL = Template(r"""
namespace vl_${tag} {

// ----- configuration (manifest.json) ---------------------------------------------------------
constexpr int BM = ${bm}, BN = ${bn}, BK = ${bk}, STAGES = ${stages};
constexpr int CONSUMERS = ${consumers};            // consumer warpgroups, 64 rows of the tile each
constexpr int THREADS = ${threads};               // warpgroup 0: producer; 1..CONSUMERS: consumers
constexpr int K_INST = ${k_inst}, K_BLOCKS = ${k_blocks};   // ${instruction} x K_BLOCKS per stage
constexpr int D_REGS = ${d_regs};                 // f32 accumulators per consumer thread (64 x BN / 128)
constexpr int ELEM_BYTES = ${eb};
constexpr int GROUP_M = ${group_m};                // tile rows visited together (raster)
constexpr int SPLITS = ${splits};                  // K slices per tile (1: no split-K)
constexpr bool SWAP_AB = ${swap_ab};               // the kernel computes D^T = B A^T (its M is the problem's N)
constexpr int CLUSTER_M = ${cluster_m}, CLUSTER_N = ${cluster_n};   // CTAs of a cluster along M, N
constexpr int CLUSTER = CLUSTER_M * CLUSTER_N;     // rank r computes tile (r % CLUSTER_M, r / CLUSTER_M) of its cluster tile
constexpr uint32_t A_SLICE_ROWS = BM / CLUSTER_N, B_SLICE_ROWS = BN / CLUSTER_M;   // rows one CTA loads (and multicasts)
constexpr uint32_t A_STAGE_BYTES = ${a_stage}u, B_STAGE_BYTES = ${b_stage}u;
constexpr uint32_t A_OFFSET = ${a_off}u, B_OFFSET = ${b_off}u, BAR_OFFSET = ${bar_off}u;
constexpr uint32_t SMEM_BYTES = ${smem_bytes}u, SMEM_ALIGN = ${smem_align}u;
constexpr uint32_t BOX_K = ${box_k}u, BOXES = ${boxes}u;   // TMA box: BOX_K elements x rows, SWIZZLE_${swizzle}
constexpr uint32_t A_BOX_BYTES = ${a_box}u, B_BOX_BYTES = ${b_box}u, TX_BYTES = ${tx}u;
constexpr uint32_t FULL_ARRIVALS = ${full_count}u, EMPTY_ARRIVALS = ${empty_count}u;
static_assert(BOX_K * BOXES == uint32_t(BK), "the TMA boxes cover BK");
static_assert(BK == K_INST * K_BLOCKS && THREADS == 128 * (CONSUMERS + 1), "K-blocks and warpgroups");
static_assert(TX_BYTES == A_STAGE_BYTES + B_STAGE_BYTES, "expect_tx counts one stage of A and B");
static_assert(A_SLICE_ROWS * CLUSTER_N == uint32_t(BM) && B_SLICE_ROWS * CLUSTER_M == uint32_t(BN), "slices tile a stage");
static_assert(A_BOX_BYTES * BOXES == A_STAGE_BYTES && B_BOX_BYTES * BOXES == B_STAGE_BYTES, "boxes tile a stage");
static_assert(BAR_OFFSET + 16u * STAGES <= SMEM_BYTES, "full[STAGES] and empty[STAGES] follow the ring");
// the epilogue (manifest.json "store"): TMA stores of staged chunks of D, or plain stores
constexpr bool STORE_TMA = ${store_tma};
[[maybe_unused]] constexpr uint32_t EPI_OFFSET = ${epi_off}u, EPI_BYTES = ${epi_bytes}u;   // one staging buffer per consumer warpgroup
[[maybe_unused]] constexpr uint32_t EPI_ROWS = ${epi_rows}u, EPI_COLS = ${epi_cols}u;      // a chunk: EPI_ROWS x EPI_COLS of D
[[maybe_unused]] constexpr uint32_t EPI_CW = ${epi_cw}u, EPI_CHUNKS = ${epi_chunks}u;      // accumulator columns per chunk, chunks per tile
[[maybe_unused]] constexpr uint32_t EPI_SPAN = ${epi_span}u, EPI_BOXES = ${epi_boxes}u;    // TMA store box: EPI_SPAN bytes x EPI_ROWS, SWIZZLE_<EPI_SPAN>B
static_assert(!STORE_TMA || (EPI_OFFSET + EPI_BYTES * CONSUMERS <= SMEM_BYTES && EPI_OFFSET % 1024u == 0u), "staging buffers fit");
typedef ${elem_t} elem_bits_t;                    // one ${dtype} element, as raw bits
""" + EPILOGUE_CONSTANTS + r"""
// ----- descriptors (proved at shared address 0; see the obligations above) ------------------
__host__ __device__ __forceinline__ uint64_t desc_a0(uint32_t wg, uint32_t kb) {
  return ${desc_a};
}
__host__ __device__ __forceinline__ uint64_t desc_b0(uint32_t kb) {
  return ${desc_b};
}
// the start-address field (bits 0-13) holds (address & 0x3FFFF) >> 4: add the byte address of the
// stage to the base-0 start and keep 18 bits, so a CTA rank above bit 18 never reaches LBO
__host__ __device__ __forceinline__ uint64_t with_start(uint64_t d0, uint32_t addr) {
  const uint64_t start = (((d0 & 0x3FFFull) << 4) + addr) & 0x3FFFFull;
  return (d0 & ~0x3FFFull) | (start >> 4);
}
__host__ __device__ __forceinline__ uint64_t desc_a(uint32_t smem_base, uint32_t stage, uint32_t wg, uint32_t kb) {
  return with_start(desc_a0(wg, kb), smem_base + A_OFFSET + stage * A_STAGE_BYTES);
}
__host__ __device__ __forceinline__ uint64_t desc_b(uint32_t smem_base, uint32_t stage, uint32_t kb) {
  return with_start(desc_b0(kb), smem_base + B_OFFSET + stage * B_STAGE_BYTES);
}

// ----- the accumulator fragment (PTX m64nNk* D table, bases from manifest.json) --------------
${fragment}

// ----- persistent tile scheduler: tile t -> (tile row, tile column), GROUP_M tile rows at a time
__host__ __device__ __forceinline__ void tile_coords(uint32_t t, uint32_t tiles_m, uint32_t tiles_n,
                                                     uint32_t& tm, uint32_t& tn) {
  const uint32_t per_group = GROUP_M * tiles_n;
  const uint32_t first = (t / per_group) * GROUP_M;
  const uint32_t rows = tiles_m - first < uint32_t(GROUP_M) ? tiles_m - first : uint32_t(GROUP_M);
  tm = first + (t % per_group) % rows;
  tn = (t % per_group) / rows;
}

// ----- PTX wrappers ------------------------------------------------------------------------------
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
    "{\n"
    ".reg .pred done;\n"
    "WAIT_%=:\n"
    "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
    "@!done bra WAIT_%=;\n"
    "}\n" :: "r"(bar), "r"(parity) : "memory");
}
${wait_cluster}__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, uint32_t bar) {
  asm volatile(
    "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
    :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar) : "memory");
}
// ----- the cluster (manifest.json "cluster": masks and peers proved there) -------------------------
__device__ __forceinline__ uint32_t cluster_rank() {
  if constexpr (CLUSTER == 1) {
    return 0u;
  } else {
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
  }
}
// the CTAs that read the same A rows (M block) / B rows (N block) as rank r: its multicast masks
__host__ __device__ __forceinline__ uint16_t a_mask(uint32_t r) { (void)r; return uint16_t(${a_masks}); }
__host__ __device__ __forceinline__ uint16_t b_mask(uint32_t r) { (void)r; return uint16_t(${b_masks}); }
// the CTAs whose producers write into rank r's stages: r's consumers release a stage to each
__host__ __device__ __forceinline__ uint32_t peers(uint32_t r) { (void)r; return ${peers}; }
__device__ __forceinline__ void tma_load_2d_mc(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, uint32_t bar, uint16_t mask) {
  asm volatile(
    "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n"
    :: "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar), "h"(mask) : "memory");
}
// one arrival on the mbarrier at the same shared offset in CTA `cta` of the cluster
__device__ __forceinline__ void mbar_arrive_remote(uint32_t bar, uint32_t cta) {
  asm volatile(
    "{\n"
    ".reg .b32 ra;\n"
    "mapa.shared::cluster.u32 ra, %0, %1;\n"
    "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [ra];\n"
    "}\n" :: "r"(bar), "r"(cta) : "memory");
}
// release a stage: to this CTA's producer, or to every producer writing into this CTA's stages
__device__ __forceinline__ void release_stage(uint32_t bar, uint32_t rank) {
  if constexpr (CLUSTER == 1) {
    (void)rank;
    mbar_arrive(bar);
  } else {
#pragma unroll
    for (uint32_t r = 0; r < uint32_t(CLUSTER); ++r)
      if ((peers(rank) >> r) & 1u) mbar_arrive_remote(bar, r);
  }
}
__device__ __forceinline__ void cluster_sync() {   // every thread of every CTA of the cluster
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory");
}
// keep the accumulators in place across the asynchronous wgmma (no reordering of their uses)
__device__ __forceinline__ void fence_acc(float* d) {
#pragma unroll
  for (int i = 0; i < D_REGS; ++i) asm volatile("" : "+f"(d[i]) :: "memory");
}
${wgmma}

${epilogue_funcs}
${tma_store_funcs}${pp_funcs}

// ----- the kernel ------------------------------------------------------------------------------
__global__ void ${cluster_attr}__launch_bounds__(THREADS, 1)
vl_gemm_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
               store_t* __restrict__ D, int M, int N, int K, const float* __restrict__ bias${tmap_d_param}) {
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const uint32_t raw = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
  const uint32_t base = (raw + SMEM_ALIGN - 1u) & ~(SMEM_ALIGN - 1u);   // swizzle rows start on 1024 B
  const uint32_t full0 = base + BAR_OFFSET, empty0 = full0 + 8u * STAGES;
  const uint32_t tiles_m = (uint32_t(M) + BM - 1) / BM, tiles_n = (uint32_t(N) + BN - 1) / BN;
  const uint32_t tiles = tiles_m * tiles_n, k_tiles = (uint32_t(K) + BK - 1) / BK;
  (void)tiles;
  // the cluster works on cluster tiles (CLUSTER_M x CLUSTER_N tiles; rank r takes its own one)
  const uint32_t ctiles_m = (tiles_m + CLUSTER_M - 1) / CLUSTER_M, ctiles_n = (tiles_n + CLUSTER_N - 1) / CLUSTER_N;
  const uint32_t units = ctiles_m * ctiles_n * uint32_t(SPLITS);   // unit u: cluster tile u / SPLITS, K slice u % SPLITS
  const uint32_t first_unit = blockIdx.x / uint32_t(CLUSTER), unit_step = gridDim.x / uint32_t(CLUSTER);
  const uint32_t rank = cluster_rank(), rm = rank % uint32_t(CLUSTER_M), rn = rank / uint32_t(CLUSTER_M);
  (void)rm; (void)rn;
  const uint32_t wg = threadIdx.x / 128u, tid = threadIdx.x % 128u;

  if (threadIdx.x == 0) {
    asm volatile("prefetch.tensormap [%0];\n" :: "l"(reinterpret_cast<uint64_t>(&tmap_a)) : "memory");
    asm volatile("prefetch.tensormap [%0];\n" :: "l"(reinterpret_cast<uint64_t>(&tmap_b)) : "memory");
    for (uint32_t s = 0; s < uint32_t(STAGES); ++s) {
      mbar_init(full0 + 8u * s, FULL_ARRIVALS);    // the producer's arrive.expect_tx
      mbar_init(empty0 + 8u * s, EMPTY_ARRIVALS);  // one lane of each consumer warp
    }
${pp_init}    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");   // init visible to TMA
  }
${start_sync}

  if (wg == 0) {
    // ---- producer warpgroup: one thread issues every TMA load ----
${producer_regs}
    if (tid == 0) {
      uint32_t stage = 0, phase = 0;
      for (uint32_t u = first_unit; u < units; u += unit_step) {
        uint32_t tm, tn;
        tile_coords(u / uint32_t(SPLITS), ctiles_m, ctiles_n, tm, tn);
        tm = tm * CLUSTER_M + rm; tn = tn * CLUSTER_N + rn;   // this rank's tile (may lie past M, N: zero-filled)
        const uint32_t s = u % uint32_t(SPLITS);
        const uint32_t kbeg = (s * k_tiles) / uint32_t(SPLITS), kend = ((s + 1u) * k_tiles) / uint32_t(SPLITS);
        for (uint32_t kt = kbeg; kt < kend; ++kt) {
          ${empty_wait}(empty0 + 8u * stage, phase ^ 1u);          // consumers (of every CTA written) released it
          const uint32_t full = full0 + 8u * stage;
          mbar_arrive_expect_tx(full, TX_BYTES);                // whole boxes, zero-filled ones too (peers' slices included)
          const uint32_t a_dst = base + A_OFFSET + stage * A_STAGE_BYTES;
          const uint32_t b_dst = base + B_OFFSET + stage * B_STAGE_BYTES;
#pragma unroll
          for (uint32_t j = 0; j < BOXES; ++j) {
            const int32_t k0 = int32_t(kt * BK + j * BOX_K);
            if constexpr (CLUSTER_N == 1) {
              tma_load_2d(a_dst + j * A_BOX_BYTES, &tmap_a, k0, int32_t(tm * BM), full);
            } else {   // slice rn of A's M block, to every CTA sharing it
              tma_load_2d_mc(a_dst + j * A_BOX_BYTES + rn * (A_BOX_BYTES / CLUSTER_N), &tmap_a, k0,
                             int32_t(tm * BM + rn * A_SLICE_ROWS), full, a_mask(rank));
            }
            if constexpr (CLUSTER_M == 1) {
              tma_load_2d(b_dst + j * B_BOX_BYTES, &tmap_b, k0, int32_t(tn * BN), full);
            } else {   // slice rm of B's N block, to every CTA sharing it
              tma_load_2d_mc(b_dst + j * B_BOX_BYTES + rm * (B_BOX_BYTES / CLUSTER_M), &tmap_b, k0,
                             int32_t(tn * BN + rm * B_SLICE_ROWS), full, b_mask(rank));
            }
          }
          if (++stage == uint32_t(STAGES)) { stage = 0; phase ^= 1u; }
        }
      }
    }
  } else {
    // ---- consumer warpgroup c = wg - 1: rows 64c .. 64c+63 of each tile ----
${consumer_regs}
    const uint32_t c = wg - 1u, lane = tid % 32u;
    uint32_t stage = 0, phase = 0;
    float d[D_REGS];
${consumer_for}
      uint32_t tm, tn;
      tile_coords(u / uint32_t(SPLITS), ctiles_m, ctiles_n, tm, tn);
      tm = tm * CLUSTER_M + rm; tn = tn * CLUSTER_N + rn;
      const uint32_t s = u % uint32_t(SPLITS);   // K slice s of the tile: partial sum to slot s
      const uint32_t kbeg = (s * k_tiles) / uint32_t(SPLITS), kend = ((s + 1u) * k_tiles) / uint32_t(SPLITS);
${pp_skip}#pragma unroll
      for (int i = 0; i < D_REGS; ++i) d[i] = 0.0f;
      uint32_t prev = 0;
${pp_mma_wait}      for (uint32_t kt = kbeg; kt < kend; ++kt) {
        mbar_wait(full0 + 8u * stage, phase);                    // TMA bytes of this stage landed
        fence_acc(d);
        wgmma_fence();
#pragma unroll
        for (uint32_t kb = 0; kb < uint32_t(K_BLOCKS); ++kb)
          wgmma_tile(d, desc_a(base, stage, c, kb), desc_b(base, stage, kb), (kt != kbeg) || (kb != 0u));
        wgmma_commit();
        fence_acc(d);
        wgmma_wait<1>();                                         // the previous stage's group retired
        fence_acc(d);
        if (kt > kbeg && lane == 0) ${release_fn}(empty0 + 8u * prev${release_arg});
        prev = stage;
        if (++stage == uint32_t(STAGES)) { stage = 0; phase ^= 1u; }
      }
${pp_mma_done}      wgmma_wait<0>();                                           // every group retired: d is final
      fence_acc(d);
      if (kend > kbeg && lane == 0) ${release_fn}(empty0 + 8u * prev${release_arg});
${pp_epi_wait}${tma_epilogue}      // ---- epilogue: pairs (e, e+1) are columns (c, c+1) of one row: one store of the pair ----
      // (split-K: raw f32 partial sums to slot s; otherwise bias, activation, output type here)
      const uint32_t row0 = tm * BM${c_rows}, col0 = tn * BN;
      const bool even_n = (N & 1) == 0;
      (void)even_n;
#pragma unroll
      for (uint32_t e = 0; e < uint32_t(D_REGS); e += 2) {
        const uint32_t r = row0 + d_row(tid, e), col = col0 + d_col(tid, e);
        if (r < uint32_t(M)) {
          float v0 = d[e], v1 = d[e + 1];
          if constexpr (SWAP_AB) {   // element (r, col) of D^T is D(col, r); D's rows are M (here: N) wide
            store_t* p = D + size_t(s) * size_t(M) * size_t(N) + size_t(col) * size_t(M) + r;   // slot s (split-K)
            if (FUSED) {
              v0 = epilogue(v0, bias, r, M);                     // the bias is per column of D: r here
              v1 = epilogue(v1, bias, r, M);
            }
            if (col < uint32_t(N)) store_one(p, v0);
            if (col + 1u < uint32_t(N)) store_one(p + M, v1);
          } else {
            store_t* p = D + (size_t(s) * size_t(M) + size_t(r)) * size_t(N) + col;   // slot s (split-K)
            if (FUSED) {
              v0 = epilogue(v0, bias, col, N);
              v1 = epilogue(v1, bias, col + 1u, N);
            }
            if (even_n && col + 1u < uint32_t(N)) {
              store_pair(p, v0, v1);
            } else {
              if (col < uint32_t(N)) store_one(p, v0);
              if (col + 1u < uint32_t(N)) store_one(p + 1, v1);
            }
          }
        }
      }
${pp_epi_done}    }
${tma_drain}  }
${end_sync}}

${reduce_kernel}// ----- host side: tensor maps and the launch -----------------------------------------------------
""" + ENCODE_TILED + r"""
// rows x K row-major operand; box = BOX_K elements of K x box_rows rows, SWIZZLE_${swizzle}, zero fill
""" + MAKE_TENSOR_MAP + r"""
// Why a problem is refused ("" when accepted): the TMA row stride must be a multiple of 16 bytes.
[[maybe_unused]] static const char* problem_error(int M, int N, int K) {
  if (M < 1 || N < 1 || K < 1) return "M, N and K must be at least 1";
  if ((size_t(K) * ELEM_BYTES) % 16 != 0) return "K * element bytes must be a multiple of 16 (TMA row stride)";
  return "";
}

// D = A @ B^T on `stream`; 0 on success, 2 bad problem, 3 CUDA error, 4/5 tensor-map encoding.
// sms: CTAs of the persistent grid (0: the device's SM count).
// D: M x N ${out_dtype} (row-major); bias: N floats (read only when the epilogue adds a bias)
[[maybe_unused]] static int launch(const void* A, const void* B, void* D, int M, int N, int K,
                  cudaStream_t stream = 0, int sms = 0, const float* bias = nullptr) {
  if (problem_error(M, N, K)[0] != '\0') return 2;
  static CUtensorMap ta, tb;
  static const void *last_a = nullptr, *last_b = nullptr;
  static int last_m = -1, last_n = -1, last_k = -1;
  [[maybe_unused]] static const void* last_d = nullptr;
  [[maybe_unused]] static int last_dm = -1, last_dn = -1;
  // the kernel's product is KM x KN: D itself, or with SWAP_AB D^T = B A^T (its A operand is B)
  const void* ka = SWAP_AB ? B : A;
  const void* kb = SWAP_AB ? A : B;
  const int KM = SWAP_AB ? N : M, KN = SWAP_AB ? M : N;
  if (A != last_a || B != last_b || M != last_m || N != last_n || K != last_k) {
    int e = make_tensor_map(&ta, ka, KM, K, ${a_box_rows});${box_note}
    if (e == 0) e = make_tensor_map(&tb, kb, KN, K, ${b_box_rows});
    if (e != 0) return e;
    last_a = A; last_b = B; last_m = M; last_n = N; last_k = K;
  }
${d_map}  static int smem_set = 0, sm_count = 0;
  if (!smem_set) {
    if (cudaFuncSetAttribute(vl_gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             int(SMEM_BYTES + SMEM_ALIGN)) != cudaSuccess) return 3;
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return 3;
    if (cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) return 3;
    smem_set = 1;
  }
  const long units = long(((KM + BM - 1) / BM + CLUSTER_M - 1) / CLUSTER_M) *
                     long(((KN + BN - 1) / BN + CLUSTER_N - 1) / CLUSTER_N) * SPLITS;   // cluster units
  const long ctas = long(sms > 0 ? sms : sm_count) / CLUSTER;   // clusters of the persistent grid
  const int grid = int(units < ctas ? units : (ctas > 0 ? ctas : 1)) * CLUSTER;
${split_workspace}  vl_gemm_kernel<<<grid, THREADS, SMEM_BYTES + SMEM_ALIGN, stream>>>(ta, tb, out, KM, KN, K, bias${tmap_d_arg});
${reduce_launch}  return cudaGetLastError() == cudaSuccess ? 0 : 3;
}

}  // namespace vl_${tag}
""")


_ACT_BODY = {
    "none": "  return x;",
    "relu": "  return fmaxf(x, 0.0f);",
    "gelu": ("  const float u = 0.7978845608f * (x + 0.044715f * x * x * x);   // GELU, tanh form\n"
             "  return 0.5f * x * (1.0f + tanh_approx(u));"),
    "silu": "  return x * (0.5f + 0.5f * tanh_approx(0.5f * x));   // x sigmoid(x)",
}
_STORE_F32 = """__device__ __forceinline__ void store_one(float* p, float v) { *p = v; }
__device__ __forceinline__ void store_pair(float* p, float v0, float v1) {   // 8 bytes: columns c, c+1
  *reinterpret_cast<float2*>(p) = make_float2(v0, v1);
}"""
_STORE_16 = """__device__ __forceinline__ void store_one(uint16_t* p, float v) {
  uint16_t h;
  asm("cvt.rn.${out}.f32 %0, %1;" : "=h"(h) : "f"(v));
  *p = h;
}
__device__ __forceinline__ void store_pair(uint16_t* p, float v0, float v1) {   // 4 bytes: v0 low (column c)
  uint32_t x;
  asm("cvt.rn.${out}x2.f32 %0, %1, %2;" : "=r"(x) : "f"(v1), "f"(v0));   // first source: upper half
  *reinterpret_cast<uint32_t*>(p) = x;
}"""


#: The TMA-store epilogue's device functions: the staging byte of D(row, col) within a chunk (box
#: ``col bytes / EPI_SPAN``, TMA's swizzle within the box, CUDA Programming Guide "TMA swizzle"),
#: shared stores in the output type, the async-proxy fence, the warpgroup's named barrier and
#: the bulk-group store, commit and waits (PTX ISA: cp.async.bulk.tensor, cp.async.bulk.commit_group,
#: cp.async.bulk.wait_group[.read], fence.proxy.async).
_TMA_STORE_FUNCS = Template(r"""// ----- the TMA-store epilogue: registers -> shared (D's orientation, ${out_dtype}) -> global by TMA
__device__ __forceinline__ uint32_t epi_byte(uint32_t rd, uint32_t cd) {   // D-local (row, col) of a chunk
  const uint32_t b = (cd * uint32_t(OUT_BYTES)) / EPI_SPAN;
  const uint32_t off = rd * EPI_SPAN + (cd * uint32_t(OUT_BYTES)) % EPI_SPAN;
  return b * EPI_ROWS * EPI_SPAN + (off ^ (((off >> 7) & (EPI_SPAN / 16u - 1u)) << 4));
}
${stage_store}
__device__ __forceinline__ void fence_proxy_async() {   // this thread's shared writes, visible to TMA
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void epi_sync(uint32_t c) {   // the 128 threads of consumer warpgroup c
  asm volatile("bar.sync %0, 128;\n" :: "r"(c + 1u) : "memory");
}
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, uint32_t src, int32_t c0, int32_t c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n"
               :: "l"(reinterpret_cast<uint64_t>(map)), "r"(src), "r"(c0), "r"(c1) : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_read0() {   // every committed store has read its shared source
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}
__device__ __forceinline__ void bulk_wait0() {        // every committed store is complete
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}
""")
_STAGE_F32 = """__device__ __forceinline__ void stage_one(uint32_t a, float v) {
  asm volatile("st.shared.f32 [%0], %1;\\n" :: "r"(a), "f"(v) : "memory");
}
__device__ __forceinline__ void stage_pair(uint32_t a, float v0, float v1) {   // D(row, col), D(row, col + 1)
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};\\n" :: "r"(a), "f"(v0), "f"(v1) : "memory");
}"""
_STAGE_16 = """__device__ __forceinline__ void stage_one(uint32_t a, float v) {
  uint16_t h;
  asm("cvt.rn.${out}.f32 %0, %1;" : "=h"(h) : "f"(v));
  asm volatile("st.shared.b16 [%0], %1;\\n" :: "r"(a), "h"(h) : "memory");
}
__device__ __forceinline__ void stage_pair(uint32_t a, float v0, float v1) {   // v0 low (column col)
  uint32_t x;
  asm("cvt.rn.${out}x2.f32 %0, %1, %2;" : "=r"(x) : "f"(v1), "f"(v0));
  asm volatile("st.shared.b32 [%0], %1;\\n" :: "r"(a), "r"(x) : "memory");
}"""
#: The consumer's epilogue through shared memory and TMA stores (where D's rows are 16-byte
#: multiples; else the plain stores after it run).
_TMA_EPILOGUE = r"""      if (d_tma) {   // ---- TMA-store epilogue: chunk q of EPI_CW accumulator columns at a time ----
        const uint32_t buf = base + EPI_OFFSET + c * EPI_BYTES;
#pragma unroll
        for (uint32_t q = 0; q < EPI_CHUNKS; ++q) {
          if (tid == 0) bulk_wait_read0();          // the last TMA store from this buffer has read it ...
          epi_sync(c);                              // ... before any thread of the warpgroup rewrites it
#pragma unroll
          for (uint32_t e = q * (EPI_CW / 2u); e < (q + 1u) * (EPI_CW / 2u); e += 2) {
            const uint32_t r = d_row(tid, e), cl = d_col(tid, e) - q * EPI_CW;   // tile row, chunk column
            float v0 = d[e], v1 = d[e + 1];
            if constexpr (SWAP_AB) {                // D(col, row): the chunk's rows are accumulator columns
              v0 = epilogue(v0, bias, tm * BM + c * 64u + r, M);
              v1 = epilogue(v1, bias, tm * BM + c * 64u + r, M);
              stage_one(buf + epi_byte(cl, r), v0);
              stage_one(buf + epi_byte(cl + 1u, r), v1);
            } else {
              const uint32_t col = tn * BN + q * EPI_CW + cl;
              v0 = epilogue(v0, bias, col, N);
              v1 = epilogue(v1, bias, col + 1u, N);
              stage_pair(buf + epi_byte(r, cl), v0, v1);
            }
          }
          fence_proxy_async();                      // each thread's shared writes, visible to the async proxy ...
          epi_sync(c);                              // ... all of them, before the one thread stores the chunk
          if (tid == 0) {
#pragma unroll
            for (uint32_t b = 0; b < EPI_BOXES; ++b) {   // TMA clips rows and columns past D
              if constexpr (SWAP_AB)
                tma_store_2d(&tmap_d, buf + b * EPI_ROWS * EPI_SPAN, int32_t(tm * BM + c * 64u + b * (EPI_SPAN / OUT_BYTES)),
                             int32_t(tn * BN + q * EPI_CW));
              else
                tma_store_2d(&tmap_d, buf + b * EPI_ROWS * EPI_SPAN, int32_t(tn * BN + q * EPI_CW + b * (EPI_SPAN / OUT_BYTES)),
                             int32_t(tm * BM + c * 64u));
            }
            bulk_commit();
          }
        }
        continue;
      }
"""
_TMA_DRAIN = """    if (d_tma && tid == 0) bulk_wait0();            // no CTA exit while a TMA store still reads shared memory
"""
_D_MAP = r"""  static CUtensorMap td;     // D as TMA stores it: rows M, columns N, box EPI_SPAN bytes x EPI_ROWS
  if (D != last_d || M != last_dm || N != last_dn) {
    if ((size_t(N) * OUT_BYTES) % 16 == 0 && reinterpret_cast<uintptr_t>(D) % 16 == 0) {
      vl_encode_tiled_t fn = encode_tiled();
      if (fn == nullptr) return 4;
      const cuuint64_t dims[2] = {cuuint64_t(N), cuuint64_t(M)};
      const cuuint64_t strides[1] = {cuuint64_t(N) * OUT_BYTES};
      const cuuint32_t box[2] = {EPI_SPAN / OUT_BYTES, EPI_ROWS};
      const cuuint32_t estr[2] = {1u, 1u};
      if (fn(&td, ${d_tma_dtype}, 2, D, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
             CUtensorMapSwizzle(${epi_swizzle_code}), CU_TENSOR_MAP_L2_PROMOTION_NONE,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) return 5;
    }
    last_d = D; last_dm = M; last_dn = N;
  }
"""
_D_TMA_DTYPE = {"f32": "CU_TENSOR_MAP_DATA_TYPE_FLOAT32", "f16": "CU_TENSOR_MAP_DATA_TYPE_FLOAT16",
                "bf16": "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16"}


#: Ping-pong (manifest ``schedule``): the turn mbarriers' device code and the consumer's pieces.
_PP_FUNCS = r"""
// ----- ping-pong turns (manifest.json "barriers": turn_offset): consumer c waits on its own
// barrier for its turn and hands the turn over by arriving (all 128 threads) on the other's;
// one pair orders the MMAs, one the epilogues (the order of CUTLASS's ping-pong kernel schedule)
constexpr uint32_t TURN_OFFSET = ${turn_off}u, TURN_COUNT = ${turn_count}u;   // mma[2], then epi[2]
static_assert(TURN_OFFSET == BAR_OFFSET + 16u * STAGES && TURN_OFFSET + 32u <= SMEM_BYTES, "turn barriers follow the ring's");
"""
_PP_INIT = """    for (uint32_t q = 0; q < 4u; ++q) mbar_init(base + TURN_OFFSET + 8u * q, TURN_COUNT);   // ping-pong turns
"""
_PP_FOR = """    uint32_t turn_mma = c ^ 1u, turn_epi = c ^ 1u;   // parity of this consumer's next turn: consumer 0 starts
    const uint32_t mma_turn = base + TURN_OFFSET, epi_turn = mma_turn + 16u;
    for (uint32_t u = first_unit, j = 0; u < units; u += unit_step, ++j) {   // ping-pong: the CTA's j-th unit is consumer (j % 2)'s"""
_PP_SKIP = """      if ((j & 1u) != c) {   // the other consumer's unit: step over its stages of the ring
        const uint32_t n = kend - kbeg;
        phase ^= ((stage + n) / uint32_t(STAGES)) & 1u;
        stage = (stage + n) % uint32_t(STAGES);
        continue;
      }
"""
_PP_MMA_WAIT = """      mbar_wait(mma_turn + 8u * c, turn_mma);   // this consumer's turn on the tensor cores ...
      turn_mma ^= 1u;
"""
_PP_MMA_DONE = """      mbar_arrive(mma_turn + 8u * (c ^ 1u));   // ... every MMA of the unit issued: the other consumer's turn
"""
_PP_EPI_WAIT = """      mbar_wait(epi_turn + 8u * c, turn_epi);   // this consumer's turn for the epilogue (under the other's MMA)
      turn_epi ^= 1u;
"""
_PP_EPI_DONE = """      mbar_arrive(epi_turn + 8u * (c ^ 1u));   // epilogue issued: the other consumer's turn
"""
_COOP_FOR = "    for (uint32_t u = first_unit; u < units; u += unit_step) {"


def _schedule_subs(man: GemmManifest) -> dict:
    """Template values of the consumers' schedule: nothing for cooperative (the same text as
    before the ping-pong existed), the turn code for ping-pong."""
    if man.consumer_schedule != "pingpong":
        return {"pp_init": "", "pp_funcs": "", "consumer_for": _COOP_FOR, "pp_skip": "",
                "pp_mma_wait": "", "pp_mma_done": "", "pp_epi_wait": "", "pp_epi_done": "",
                "c_rows": " + c * 64u"}
    bars = man.sections.get("barriers", {})
    if (man.bm != 64 or man.consumers != 2 or type(bars.get("turn_offset")) is not int
            or type(bars.get("turn_count")) is not int):
        raise LayoutError("manifest: consumer_schedule 'pingpong' needs BM 64, consumers 2 and "
                          "integer barriers.turn_offset / turn_count")
    return {"pp_init": _PP_INIT, "pp_funcs": Template(_PP_FUNCS).substitute(
                turn_off=bars["turn_offset"], turn_count=bars["turn_count"]),
            "consumer_for": _PP_FOR, "pp_skip": _PP_SKIP, "pp_mma_wait": _PP_MMA_WAIT,
            "pp_mma_done": _PP_MMA_DONE, "pp_epi_wait": _PP_EPI_WAIT, "pp_epi_done": _PP_EPI_DONE,
            "c_rows": ""}


def _store_subs(man: GemmManifest) -> dict:
    """Template values of the epilogue's store: the TMA-store path (manifest ``store``), or none."""
    st = man.store
    if st.kind != "tma":
        return {"store_tma": "false", "epi_off": 0, "epi_bytes": 0, "epi_rows": 1, "epi_cols": 1,
                "epi_cw": 2, "epi_chunks": 0, "epi_span": 16, "epi_boxes": 0, "tmap_d_param": "",
                "tma_epilogue": "", "tma_drain": "", "d_map": "", "tmap_d_arg": "",
                "tma_store_funcs": ""}
    out = man.epilogue.out
    stage = _STAGE_F32 if out == "f32" else Template(_STAGE_16).substitute(out=out)
    epi = _TMA_EPILOGUE
    if man.consumer_schedule == "pingpong":   # whole tiles per consumer: no row offset; hand over the turn
        epi = epi.replace(" + c * 64u", "").replace("        continue;\n", _PP_EPI_DONE.replace(
            "      mbar", "        mbar") + "        continue;\n")
    return {"store_tma": "true", "epi_off": st.offset, "epi_bytes": st.bytes,
            "epi_rows": st.rows, "epi_cols": st.cols, "epi_cw": st.acc_cols,
            "epi_chunks": st.chunks, "epi_span": st.span, "epi_boxes": st.boxes,
            "tmap_d_param": ",\n               const __grid_constant__ CUtensorMap tmap_d",
            "tma_epilogue": ("      // D's rows are 16-byte multiples (the TMA row stride): stage and store by TMA\n"
                             "      const bool d_tma = (uint32_t(SWAP_AB ? M : N) * uint32_t(OUT_BYTES)) % 16u == 0u;\n"
                             + epi),
            "tma_drain": ("    const bool d_tma = (uint32_t(SWAP_AB ? M : N) * uint32_t(OUT_BYTES)) % 16u == 0u;\n"
                          + _TMA_DRAIN),
            "d_map": Template(_D_MAP).substitute(d_tma_dtype=_D_TMA_DTYPE[out],
                                                 epi_swizzle_code=st.swizzle_code),
            "tmap_d_arg": ", td",
            "tma_store_funcs": _TMA_STORE_FUNCS.substitute(out_dtype=out, stage_store=stage)}


# the producer's wait for releases that peers' consumers made with release.cluster arrivals
_WAIT_CLUSTER = r"""__device__ __forceinline__ void mbar_wait_cluster(uint32_t bar, uint32_t parity) {
  asm volatile(
    "{\n"
    ".reg .pred done;\n"
    "WAIT_%=:\n"
    "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
    "@!done bra WAIT_%=;\n"
    "}\n" :: "r"(bar), "r"(parity) : "memory");
}
"""


def _cluster_subs(man: GemmManifest) -> dict:
    """Template values of the cluster: its shape, the kernel attribute and the per-rank masks."""
    cl = man.cluster
    many = cl.size > 1
    return {"cluster_m": cl.m, "cluster_n": cl.n,
            "cluster_attr": f"__cluster_dims__({cl.size}, 1, 1) " if many else "",
            "a_masks": select_expr([f"{x:#x}u" for x in cl.masks("a_masks")], "r"),
            "b_masks": select_expr([f"{x:#x}u" for x in cl.masks("b_masks")], "r"),
            "peers": select_expr([f"{x:#x}u" for x in cl.masks("peers")], "r"),
            "a_box_rows": "A_SLICE_ROWS" if cl.n > 1 else "BM",
            "b_box_rows": "B_SLICE_ROWS" if cl.m > 1 else "BN",
            "release_fn": "release_stage" if many else "mbar_arrive",
            "empty_wait": "mbar_wait_cluster" if many else "mbar_wait",
            "wait_cluster": _WAIT_CLUSTER if many else "",
            "release_arg": ", rank" if many else "",
            "start_sync": ("  cluster_sync();   // every CTA's mbarriers initialised before any peer "
                           "multicasts or arrives" if many else "  __syncthreads();"),
            "end_sync": ("  cluster_sync();   // no CTA leaves while a peer may still multicast "
                         "into it or arrive on its mbarriers\n" if many else ""),
            "box_note": "   // a CTA loads one slice of a shared tile" if many else ""}


def epilogue_words(man: GemmManifest | Mapping) -> str:
    """``"bf16(gelu(acc + bias[col]))"``-style words for D (``"f32"`` without an epilogue).

    >>> epilogue_words(build_gemm_manifest("f16", tile=(64, 64, 64), stages=2, out="bf16", bias=True, activation="gelu"))
    'bf16(gelu(acc + bias[col]))'
    """
    e = typed_manifest(man).epilogue
    if not e.bias and e.activation == "none":
        return e.out
    inner = "acc + bias[col]" if e.bias else "acc"
    if e.activation != "none":
        inner = f"{e.activation}({inner})"
    return f"{e.out}({inner})"


def epilogue_subs(man: GemmManifest | Mapping) -> dict:
    """Template values of the epilogue: output type, store functions, bias and activation
    (split-K: the GEMM kernel stores f32 partial sums, the reduction applies the epilogue).

    >>> d = epilogue_subs(build_gemm_manifest("f16", tile=(128, 128, 64), stages=3, splits=2, out="f16", bias=True, activation="gelu"))
    >>> d["store_t"], d["out_t"], d["fused"], d["act_code"]
    ('float', 'uint16_t', 'false', 2)
    """
    g = typed_manifest(man)
    epi = g.epilogue
    out, split = epi.out, g.splits > 1
    out_t = "float" if out == "f32" else "uint16_t"
    store = _STORE_F32 + ("\n" + Template(_STORE_16).substitute(out=out) if out != "f32" else "")
    return {"out_t": out_t, "store_t": "float" if split else out_t, "out_dtype": out,
            "fused": "false" if split else "true", "act": epi.activation,
            "act_body": _ACT_BODY[epi.activation],
            "bias_body": "  if (col < uint32_t(N)) v += bias[col];" if epi.bias else "",
            "bias_text": " + bias[col]" if epi.bias else "", "store_body": store,
            "has_bias": "true" if epi.bias else "false",
            "act_code": ("none", "relu", "gelu", "silu").index(epi.activation)}


#: The epilogue's device functions (one home: the sm_90a and sm_100a kernels and the split-K
#: reduction call ``epilogue`` and ``store_one`` / ``store_pair``).
_EPILOGUE_FUNCS = Template(r"""// ----- the epilogue: D = ${out_dtype}(${act}(acc${bias_text})) ------------------------------------------------
__device__ __forceinline__ float tanh_approx(float x) {   // tanh.approx.f32: |rel. error| < 2^-10.99
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float activation(float x) {
  (void)tanh_approx;
${act_body}
}
// a bias element beyond N is never read (the pair's second column may be N)
__device__ __forceinline__ float epilogue(float v, const float* __restrict__ bias, uint32_t col, int N) {
  (void)bias; (void)col; (void)N;
${bias_body}
  return activation(v);
}
${store_body}
""")


def epilogue_source(man: GemmManifest | Mapping) -> str:
    """The device functions ``tanh_approx``, ``activation``, ``epilogue`` (bias guarded by
    ``col < N``) and ``store_one`` / ``store_pair`` of the manifest's epilogue.

    >>> src = epilogue_source(build_gemm_manifest("f16", tile=(64, 64, 64), stages=2, out="bf16", bias=True, activation="relu"))
    >>> "fmaxf(x, 0.0f)" in src, "cvt.rn.bf16.f32" in src
    (True, True)
    """
    return _EPILOGUE_FUNCS.substitute(epilogue_subs(man))


def obligation_block(man: GemmManifest | Mapping) -> list[str]:
    """The manifest's obligations as numbered ``//`` comment lines, one claim and its reason each."""
    out = ["// Obligations (each proved by verilayout when this file was written; manifest.json has them):"]
    for i, o in enumerate(typed_manifest(man).obligations, 1):
        out.append(f"//  {i:2d}. [{o['status']}, {o['method']}] {o['claim']}")
        out.append(f"//      ({o['reason']})")
    return out


def render_gemm_cuda(man: GemmManifest | Mapping) -> str:
    """``kernel.cu``: the kernel, its tensor maps and ``launch()``, written from the manifest
    alone (every layout number is the manifest's; the obligations head the file).

    >>> m = build_gemm_manifest("e4m3", tile=(128, 256, 128), stages=4)
    >>> src = render_gemm_cuda(m)
    >>> src.count("setmaxnreg"), "0x3FFFF" in src, "CU_TENSOR_MAP_DATA_TYPE_UINT8" in src
    (2, True, True)
    """
    man = require_gemm_manifest(man)
    da = man.a.descriptors
    db = man.b.descriptors[0]
    desc_a = select_expr([select_expr([u64_literal(v) for v in row], "kb") for row in da], "wg")
    desc_b = select_expr([u64_literal(v) for v in db], "kb")
    two = man.consumers == 2
    instruction = man.text("instruction")
    head = [f"// verilayout emit gemm: {man.tag} ({man.arch})",
            f"// D[M,N] ({epilogue_words(man)}, row-major) = A[M,K] @ B[N,K]^T, A and B row-major "
            f"{man.dtype} (both K-major), f32 accumulation.",
            f"// Tile {man.bm}x{man.bn}x{man.bk}, {man.stages} stages, "
            f"{man.consumers} consumer warpgroup(s) + 1 producer warpgroup, "
            f"{instruction}.",
            *(["// Ping-pong: each consumer warpgroup owns whole 64-row tiles (the CTA's units "
               "alternate between them); turn mbarriers order their MMAs and their epilogues, so "
               "one's epilogue runs under the other's MMA."] if man.consumer_schedule == "pingpong" else []),
            *(["// Swap-AB: the kernel computes D^T[N,M] = B @ A^T (its A operand, 64 rows per "
               "wgmma, is B; a small M is the tile's N) and stores element (n, m) at D(m, n)."]
              if man.swap_ab else []),
            "// Contract: any M, N, K >= 1 with K * bytes(dtype) a multiple of 16 (TMA row "
            "stride); A, B, D 16-byte aligned.",
            "// Generated from manifest.json by verilayout.emit.cuda_gemm; do not edit by hand.",
            "//", *obligation_block(man), "",
            "#include <cuda.h>", "#include <cuda_runtime.h>", "#include <cstddef>",
            "#include <cstdint>"]
    return "\n".join(head) + "\n" + _KERNEL.substitute(_kernel_subs(man, desc_a, desc_b, two))


def _kernel_subs(man: GemmManifest, desc_a: str, desc_b: str, two: bool) -> dict:
    """Template values of ``kernel.cu``: the manifest's numbers, its sections and the pieces."""
    bars, smem, tma, eb = man.barriers, man.smem, man.tma, man.number("elem_bytes")
    split = man.splits > 1
    return {
        "tag": man.tag, "bm": man.bm, "bn": man.bn, "bk": man.bk,
        "stages": man.stages, "consumers": man.consumers, "threads": man.number("threads"),
        "k_inst": man.number("k_inst"), "k_blocks": man.number("k_blocks"),
        "instruction": man.text("instruction"),
        "d_regs": man.bn // 2, "eb": eb, "group_m": man.number("group_m", GROUP_M),
        "a_stage": man.a.stage_bytes, "b_stage": man.b.stage_bytes,
        "a_off": man.a.offset, "b_off": man.b.offset,
        "bar_off": bars.offset, "smem_bytes": smem.bytes,
        "smem_align": smem.alignment, "box_k": tma.box_k,
        "boxes": tma.boxes, "swizzle": tma.swizzle,
        "swizzle_code": tma.swizzle_code, "a_box": tma.a_box_bytes,
        "b_box": tma.b_box_bytes, "tx": tma.tx_bytes,
        "full_count": bars.full_count, "empty_count": bars.empty_count,
        "elem_t": ELEM_T[eb], "splits": man.splits,
        "swap_ab": "true" if man.swap_ab else "false",
        **_cluster_subs(man), **_store_subs(man), **_schedule_subs(man),
        **epilogue_subs(man), "epilogue_funcs": epilogue_source(man),
        "reduce_kernel": REDUCE_KERNEL if split else "",
        "split_workspace": SPLIT_WORKSPACE,
        "reduce_launch": REDUCE_LAUNCH if split else "", "dtype": man.dtype,
        "desc_a": desc_a, "desc_b": desc_b,
        "fragment": "\n".join(_fragment_function(man.sections["d"]["fragment"])),
        "wgmma": "\n".join(wgmma_asm(man)),
        "tma_dtype": TMA_DTYPE[man.dtype],
        "producer_regs": (f'    asm volatile("setmaxnreg.dec.sync.aligned.u32 {PRODUCER_REGS};\\n");'
                          if two else "    // one consumer: no register rebalancing needed"),
        "consumer_regs": (f'    asm volatile("setmaxnreg.inc.sync.aligned.u32 {CONSUMER_REGS};\\n");'
                          if two else ""),
    }


_MAIN = Template(r"""// Host program for ${tag}: exact reference check on small shapes, then TFLOP/s against cuBLASLt.
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o gemm main.cu -ldl
// Usage: ./gemm [M N K [ITERS]]      (default 8192 8192 8192, 20 timed launches)
// Exit status: 0 every reference check exact, 1 a difference, 3 a CUDA error.
#include "kernel.cu"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <vector>

namespace vl_host {
using namespace vl_${tag};

[[maybe_unused]] static uint32_t f32_bits(float f) { uint32_t x; std::memcpy(&x, &f, 4); return x; }
// an integer in [-16, 16] as ${dtype} bits (exact: at most 4 significant bits)
static elem_bits_t encode(int v) {
  const uint32_t s = v < 0 ? 1u : 0u, a = uint32_t(v < 0 ? -v : v);
  (void)s; (void)a;
${encode}
}
static uint32_t lcg(uint64_t& s) { s = s * 6364136223846793005ull + 1442695040888963407ull; return uint32_t(s >> 33); }

#define VL_CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); std::exit(3); } } while (0)

struct Problem {
  int M, N, K;
  std::vector<int> a, b;              // integer values
  elem_bits_t *dA = nullptr, *dB = nullptr;
  float* dD = nullptr;                // M x N x 4 bytes: D (OUT_BYTES each) or cuBLAS's f32 D
  float* dBias = nullptr;             // N floats: (c mod 7) - 3
  Problem(int m, int n, int k, uint64_t seed, int lo, int hi) : M(m), N(n), K(k), a(size_t(m) * k), b(size_t(n) * k) {
    std::vector<elem_bits_t> ab(a.size()), bb(b.size());
    uint64_t s = seed;
    for (size_t i = 0; i < a.size(); ++i) { a[i] = lo + int(lcg(s) % uint32_t(hi - lo + 1)); ab[i] = encode(a[i]); }
    for (size_t i = 0; i < b.size(); ++i) { b[i] = lo + int(lcg(s) % uint32_t(hi - lo + 1)); bb[i] = encode(b[i]); }
    VL_CHECK(cudaMalloc(&dA, ab.size() * sizeof(elem_bits_t)));
    VL_CHECK(cudaMalloc(&dB, bb.size() * sizeof(elem_bits_t)));
    VL_CHECK(cudaMalloc(&dD, size_t(m) * n * sizeof(float)));
    std::vector<float> bias(static_cast<size_t>(n));
    for (int c = 0; c < n; ++c) bias[size_t(c)] = float(c % 7 - 3);
    VL_CHECK(cudaMalloc(&dBias, bias.size() * sizeof(float)));
    VL_CHECK(cudaMemcpy(dBias, bias.data(), bias.size() * sizeof(float), cudaMemcpyHostToDevice));
    VL_CHECK(cudaMemcpy(dA, ab.data(), ab.size() * sizeof(elem_bits_t), cudaMemcpyHostToDevice));
    VL_CHECK(cudaMemcpy(dB, bb.data(), bb.size() * sizeof(elem_bits_t), cudaMemcpyHostToDevice));
  }
  ~Problem() { cudaFree(dA); cudaFree(dB); cudaFree(dD); cudaFree(dBias); }
};

// D element i as a double (f32, or f16 / bf16 bits)
static double out_value(const std::vector<uint8_t>& raw, size_t i) {
  if (OUT_BYTES == 4) { float f; std::memcpy(&f, &raw[4 * i], 4); return f; }
  uint16_t h; std::memcpy(&h, &raw[2 * i], 2);
  uint32_t x;
  if (${out_is_bf16}) {
    x = uint32_t(h) << 16;
  } else {                                            // f16 -> f32 bits
    const uint32_t s = uint32_t(h >> 15) << 31, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) { float f = std::ldexp(float(m), -24); return (h >> 15) ? -f : f; }
    x = s | (e == 31 ? 0x7f800000u | (m << 13) : ((e + 112u) << 23) | (m << 13));
  }
  float f; std::memcpy(&f, &x, 4); return f;
}
// a double rounded to the output type (to nearest even; exact for the f32 sums of integers here)
static double round_out(double v) {
  const float f = float(v);
  if (OUT_BYTES == 4) return f;
  if (${out_is_bf16}) {
    uint32_t x = f32_bits(f); x = (x + 0x7fffu + ((x >> 16) & 1u)) & 0xffff0000u;
    float g; std::memcpy(&g, &x, 4); return g;
  }
  const double a = std::fabs(double(f));
  const int e = a < std::ldexp(1.0, -14) ? -14 : int(std::floor(std::log2(a)));
  const double q = std::ldexp(1.0, e - 10);           // the f16 spacing at |f|
  return std::nearbyint(double(f) / q) * q;          // FE_TONEAREST: ties to even
}
static double act_ref(double x) {
  if (ACTIVATION == 1) return x > 0 ? x : 0.0;
  if (ACTIVATION == 2) return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
  if (ACTIVATION == 3) return x / (1.0 + std::exp(-x));
  return x;
}

// check: D(r, c) == out(act(sum_k a(r, k) * b(c, k) + bias(c))) for every output: exact (integers,
// |sum| < 2^24, rounded like the device) unless the activation is GELU / SiLU (tanh.approx.f32:
// then within 2^-9 relative + one output ulp)
static bool check(int M, int N, int K, uint64_t seed, int sms) {
  Problem p(M, N, K, seed, -3, 3);
  VL_CHECK(cudaMemset(p.dD, 0xff, size_t(M) * N * sizeof(float)));   // NaN: unwritten outputs show
  const int rc = launch(p.dA, p.dB, p.dD, M, N, K, 0, sms, p.dBias);
  if (rc != 0) { std::printf("launch failed (%d) for %dx%dx%d\n", rc, M, N, K); std::exit(3); }
  VL_CHECK(cudaDeviceSynchronize());
  std::vector<uint8_t> raw(size_t(M) * N * OUT_BYTES);
  VL_CHECK(cudaMemcpy(raw.data(), p.dD, raw.size(), cudaMemcpyDeviceToHost));
  size_t bad = 0, first = 0;
  const bool approx = ACTIVATION >= 2;
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) {
      long long sum = 0;
      for (int k = 0; k < K; ++k) sum += (long long)p.a[size_t(r) * K + k] * p.b[size_t(c) * K + k];
      const double ref = round_out(act_ref(double(sum) + (HAS_BIAS ? double(c % 7 - 3) : 0.0)));
      const double got = out_value(raw, size_t(r) * N + c);
      const double tol = approx ? std::ldexp(std::fabs(ref), -9) + std::ldexp(std::fabs(ref), OUT_BYTES == 4 ? -23 : (${out_is_bf16} ? -7 : -10)) + 1e-3 : 0.0;
      if (!(std::fabs(got - ref) <= tol) && bad++ == 0) first = size_t(r) * N + c;
    }
  std::vector<float> d(raw.size() / OUT_BYTES);
  for (size_t i = 0; i < d.size(); ++i) d[i] = float(out_value(raw, i));
  std::printf("check %5d x %5d x %5d (grid %3d): %s", M, N, K, sms, bad ? "FAIL" : (approx ? "within tolerance" : "exact"));
  if (bad) std::printf(" -- %zu of %zu differ, first (%zu, %zu): got %g\n", bad, d.size(), first / N, first % N, double(d[first]));
  else std::printf("\n");
  return bad == 0;
}

// ----- cuBLASLt through dlopen (declarations of the public cublasLt.h API) -----
typedef int (*lt_create_t)(void**);
typedef int (*lt_desc_create_t)(void**, int, int);
typedef int (*lt_desc_set_t)(void*, int, const void*, size_t);
typedef int (*lt_layout_create_t)(void**, int, uint64_t, uint64_t, int64_t);
typedef int (*lt_pref_create_t)(void**);
typedef int (*lt_pref_set_t)(void*, int, const void*, size_t);
struct LtAlgo { uint64_t data[8]; };
struct LtHeuristic { LtAlgo algo; size_t workspace; int state; float waves; int reserved[4]; };
typedef int (*lt_heuristic_t)(void*, void*, void*, void*, void*, void*, void*, int, LtHeuristic*, int*);
typedef int (*lt_matmul_t)(void*, void*, const void*, const void*, void*, const void*, void*, const void*,
                           const void*, void*, void*, void*, const LtAlgo*, void*, size_t, cudaStream_t);

struct Cublas {
  lt_matmul_t matmul = nullptr;
  void *handle = nullptr, *desc = nullptr, *la = nullptr, *lb = nullptr, *ld = nullptr, *ws = nullptr;
  LtHeuristic h{};
  size_t ws_bytes = size_t(64) << 20;
  const char* why = "";
  int d_type = 0;             // CUDA_R_32F; CUDA_R_16BF where cuBLASLt has no f32-output fp8 kernel
  bool fast_accum = false;    // fp8: CUBLASLT_MATMUL_DESC_FAST_ACCUM (25), as wgmma accumulates
  // cuBLAS is column-major: D^T (N x M, ld N) = op_T(B as K x N, ld K) * op_N(A^T as K x M, ld K): the "TN" case
  bool init(int M, int N, int K) {
    const char* names[] = {"libcublasLt.so", "libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11"};
    void* lib = nullptr;
    for (const char* n : names) if ((lib = dlopen(n, RTLD_NOW)) != nullptr) break;
    if (lib == nullptr) { why = "libcublasLt.so not found"; return false; }
    auto create = (lt_create_t)dlsym(lib, "cublasLtCreate");
    auto dcreate = (lt_desc_create_t)dlsym(lib, "cublasLtMatmulDescCreate");
    auto dset = (lt_desc_set_t)dlsym(lib, "cublasLtMatmulDescSetAttribute");
    auto lcreate = (lt_layout_create_t)dlsym(lib, "cublasLtMatrixLayoutCreate");
    auto pcreate = (lt_pref_create_t)dlsym(lib, "cublasLtMatmulPreferenceCreate");
    auto pset = (lt_pref_set_t)dlsym(lib, "cublasLtMatmulPreferenceSetAttribute");
    auto heur = (lt_heuristic_t)dlsym(lib, "cublasLtMatmulAlgoGetHeuristic");
    matmul = (lt_matmul_t)dlsym(lib, "cublasLtMatmul");
    if (!create || !dcreate || !dset || !lcreate || !pcreate || !pset || !heur || !matmul) { why = "a cublasLt symbol is missing"; return false; }
    const int in_type = ${cublas_type}, compute = ${cublas_compute}, f32 = 0, op_t = 1, op_n = 0;
    void* pref = nullptr;
    if (create(&handle) || dcreate(&desc, compute, f32)) { why = "cublasLtCreate/MatmulDescCreate failed"; return false; }
    if (dset(desc, 3, &op_t, sizeof(op_t)) || dset(desc, 4, &op_n, sizeof(op_n))) { why = "TRANSA/TRANSB refused"; return false; }
    if (in_type == 28) { const int8_t on = 1; fast_accum = dset(desc, 25, &on, sizeof(on)) == 0; }
    if (lcreate(&la, in_type, K, N, K) || lcreate(&lb, in_type, K, M, K)) { why = "layout refused"; return false; }
    if (pcreate(&pref) || pset(pref, 1, &ws_bytes, sizeof(ws_bytes))) { why = "preference refused"; return false; }
    int found = 0;
    const int d_types[2] = {f32, 14};
    for (int i = 0; i < (in_type == 28 ? 2 : 1) && found == 0; ++i) {
      d_type = d_types[i];
      if (lcreate(&ld, d_type, N, M, N)) { why = "layout refused"; return false; }
      if (heur(handle, desc, la, lb, ld, ld, pref, 1, &h, &found)) found = 0;
    }
    if (found == 0) { why = "no cuBLASLt algorithm for this problem"; return false; }
    VL_CHECK(cudaMalloc(&ws, ws_bytes));
    return true;
  }
  int run(const void* A, const void* B, float* D) {
    const float one = 1.0f, zero = 0.0f;
    return matmul(handle, desc, &one, B, la, A, lb, &zero, D, ld, D, ld, &h.algo, ws, ws_bytes, 0);
  }
};

template <class F> static float time_ms(F f, int iters) {
  for (int i = 0; i < 3; ++i) f();
  VL_CHECK(cudaDeviceSynchronize());
  cudaEvent_t t0, t1;
  VL_CHECK(cudaEventCreate(&t0)); VL_CHECK(cudaEventCreate(&t1));
  VL_CHECK(cudaEventRecord(t0));
  for (int i = 0; i < iters; ++i) f();
  VL_CHECK(cudaEventRecord(t1));
  VL_CHECK(cudaEventSynchronize(t1));
  float ms = 0.f; VL_CHECK(cudaEventElapsedTime(&ms, t0, t1));
  return ms / iters;
}

int run(int argc, char** argv) {
  int dev = 0, sms = 0;
  VL_CHECK(cudaGetDevice(&dev));
  VL_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  std::printf("config ${tag}: ${instruction}, tile ${bm}x${bn}x${bk}, ${stages} stages\n");
  // small shapes: whole tiles, ragged M/N/K edges (TMA zero fill + predicated stores), several
  // tiles per CTA of the persistent grid, odd N (scalar stores)
  const int KA = ${k_align};   // smallest legal K step (16 bytes)
  const int shapes[][4] = {{${bm}, ${bn}, ${bk}, 0}, {1, 1, KA, 0}, {${bm} + 3, ${bn} - 5, ${bk} * 3 + KA, 0},
                           {333, 517, ${bk} * 2 + 5 * KA, 3}, {517, 333, ${bk} + KA, 0}, {640, 768, ${bk} * 4, 5},
                           {257, 129, KA * 3, 1}};
  bool ok = true;
  for (auto& s : shapes) ok &= check(s[0], s[1], s[2], 1234u + uint64_t(s[0]), s[3]);
  std::printf(ok ? "PASS reference checks\n" : "FAIL reference checks\n");

  const int M = argc > 3 ? std::atoi(argv[1]) : 8192, N = argc > 3 ? std::atoi(argv[2]) : 8192;
  const int K = argc > 3 ? std::atoi(argv[3]) : 8192, iters = argc > 4 ? std::atoi(argv[4]) : 20;
  if (problem_error(M, N, K)[0] != '\0') { std::printf("error: %s\n", problem_error(M, N, K)); return 2; }
  Problem p(M, N, K, 99u, -2, 2);
  const double flop = 2.0 * M * N * double(K);
  const float ms = time_ms([&] { launch(p.dA, p.dB, p.dD, M, N, K, 0, 0, p.dBias); }, iters);
  VL_CHECK(cudaGetLastError());
  const double tf = flop / (ms * 1e-3) / 1e12;
  std::printf("verilayout %d x %d x %d: %.3f ms, %.1f TFLOP/s\n", M, N, K, ms, tf);
  std::vector<float> mine(size_t(M) * N), theirs(size_t(M) * N);
  VL_CHECK(cudaMemcpy(mine.data(), p.dD, mine.size() * sizeof(float), cudaMemcpyDeviceToHost));
  Cublas cb;
  if (!cb.init(M, N, K)) {
    std::printf("cuBLAS: not compared (%s)\n", cb.why);
  } else {
    const float cms = time_ms([&] { cb.run(p.dA, p.dB, p.dD); }, iters);
    VL_CHECK(cudaGetLastError());
    const double ctf = flop / (cms * 1e-3) / 1e12;
    VL_CHECK(cudaMemcpy(theirs.data(), p.dD, theirs.size() * sizeof(float), cudaMemcpyDeviceToHost));
    std::printf("cuBLASLt   %d x %d x %d: %.3f ms, %.1f TFLOP/s\n", M, N, K, cms, ctf);
    if (OUT_BYTES != 4 || HAS_BIAS || ACTIVATION != 0) {
      std::printf("verilayout / cuBLAS: %.1f %% (outputs not compared: fused epilogue ${epi_text}; cuBLAS plain f32)\n", 100.0 * tf / ctf);
    } else if (cb.d_type == 0) {
      size_t diff = 0;
      for (size_t i = 0; i < mine.size(); ++i) diff += mine[i] != theirs[i];
      std::printf("verilayout / cuBLAS: %.1f %% (outputs differing from cuBLAS: %zu of %zu%s)\n", 100.0 * tf / ctf, diff, mine.size(),
                  cb.fast_accum ? "; cuBLAS fp8 fast accumulation" : "");
    } else {
      std::printf("verilayout / cuBLAS: %.1f %% (outputs not compared: cuBLAS wrote bf16%s)\n", 100.0 * tf / ctf,
                  cb.fast_accum ? "; cuBLAS fp8 fast accumulation" : "");
    }
  }
  return ok ? 0 : 1;
}
}  // namespace vl_host

int main(int argc, char** argv) { return vl_host::run(argc, argv); }
""")

_ENCODE = {
    "f16": ["  if (a == 0) return elem_bits_t(s << 15);",
            "  uint32_t e = 0; while ((a >> (e + 1)) != 0u) ++e;          // a = 1.m x 2^e",
            "  return elem_bits_t((s << 15) | ((e + 15u) << 10) | (((a << 10) >> e) & 0x3ffu));"],
    "bf16": ["  return elem_bits_t(f32_bits(float(v)) >> 16);"],
    "tf32": ["  return f32_bits(float(v));"],
    "e4m3": ["  if (a == 0) return elem_bits_t(s << 7);",
             "  uint32_t e = 0; while ((a >> (e + 1)) != 0u) ++e;          // a = 1.m x 2^e, bias 7",
             "  return elem_bits_t((s << 7) | ((e + 7u) << 3) | (((a << 3) >> e) & 0x7u));"],
}


def render_gemm_main(man: GemmManifest | Mapping) -> str:
    """``main.cu``: includes ``kernel.cu``; exact checks on small shapes, then TFLOP/s and the
    percentage of cuBLASLt on ``M N K`` (default 8192^3).

    >>> src = render_gemm_main(build_gemm_manifest("bf16", tile=(128, 128, 64), stages=3))
    >>> '#include "kernel.cu"' in src, "cublasLtMatmul" in src
    (True, True)
    """
    man = require_gemm_manifest(man)
    t, comp = _CUBLAS_TYPE[man.dtype]
    epi = man.epilogue
    return _MAIN.substitute(tag=man.tag, dtype=man.dtype, encode="\n".join(_ENCODE[man.dtype]),
                            out_is_bf16="true" if epi.out == "bf16" else "false",
                            epi_text=f"{epi.out}{' + bias' if epi.bias else ''}, {epi.activation}",
                            instruction=man.text("instruction"), bm=man.bm, bn=man.bn, bk=man.bk,
                            stages=man.stages, k_align=16 // man.number("elem_bytes"),
                            cublas_type=t, cublas_compute=comp)


def render_gemm_makefile(man: GemmManifest | Mapping) -> str:
    """``Makefile``: ``make`` builds ``gemm`` (needs nvcc >= 12.0); ``make run`` runs it.

    >>> "compute_90a" in render_gemm_makefile(build_gemm_manifest("f16"))
    True
    """
    return "\n".join([
        f"# verilayout emit gemm: {typed_manifest(man).tag}",
        "NVCC ?= nvcc",
        "FLAGS ?= -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a",
        "gemm: main.cu kernel.cu",
        "\t$(NVCC) $(FLAGS) -o gemm main.cu -ldl",
        "kernel.cubin: kernel.cu",
        "\t$(NVCC) $(FLAGS) -cubin -Xptxas -v -o kernel.cubin kernel.cu",
        "run: gemm",
        "\t./gemm",
        ".PHONY: run", ""])


def render_gemm_readme(man: GemmManifest | Mapping) -> str:
    """``README.md`` of an emitted GEMM directory.

    >>> render_gemm_readme(build_gemm_manifest("tf32")).splitlines()[0]
    '# gemm_tf32_128x256x32_s4'
    """
    man = typed_manifest(man)
    n_ok = sum(o["status"] == "proved" for o in man.obligations)
    return "\n".join([
        f"# {man.tag}", "",
        f"`D[M,N] = A[M,K] @ B[N,K]^T` on sm_90a: {man.dtype} inputs (row-major, K-major), f32 "
        f"accumulation, D = {epilogue_words(man)}; split-K {man.splits}; tile {man.bm}x{man.bn}x{man.bk}, {man.stages} "
        f"stages, {man.consumers} consumer warpgroup(s), `{man.text('instruction')}`"
        + (f"; a {man.cluster.m}x{man.cluster.n} thread-block cluster (TMA multicast)"
           if man.cluster.plan.get("size", 1) > 1 else "")
        + ("; swap-AB (the kernel computes D^T = B A^T: a small M is the tile's N)"
           if man.swap_ab else "")
        + ("; ping-pong consumer warpgroups (each owns whole tiles, taking turns on the tensor "
           "cores and the epilogue)" if man.consumer_schedule == "pingpong" else "")
        + ("; epilogue through shared memory and TMA stores where D's rows are 16-byte multiples"
           if man.store.kind == "tma" else "") + ".", "",
        "- `kernel.cu`: the kernel, the tensor maps and `launch()`; its head lists the "
        f"{len(man.obligations)} obligations ({n_ok} proved).",
        "- `main.cu`: exact reference checks on small shapes, then TFLOP/s and % of cuBLASLt on "
        "8192^3 (`./gemm M N K ITERS` for another shape).",
        "- `manifest.json`: everything `kernel.cu` is written from.", "",
        "Build and run on an H100 / H200 (CUDA 12.0 or newer):", "",
        "    nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o gemm main.cu -ldl",
        "    ./gemm", "",
        "Contract: any M, N, K >= 1 with K * bytes(dtype) a multiple of 16 (the TMA row stride); "
        "A, B and D 16-byte aligned.", ""])


def emit_gemm(dtype: str, tile: tuple[int, int, int] | None = None, stages: int = 4,
              arch: str = "sm_90a", group_m: int = GROUP_M, splits: int = 1, out: str = "f32",
              bias: bool = False, activation: str = "none", cluster=(1, 1),
              swap_ab: bool = False, schedule: str = "cooperative") -> Emission:
    """The manifest, ``kernel.cu``, ``main.cu``, ``Makefile`` and ``README.md`` of one GEMM.

    >>> e = emit_gemm("f16", tile=(128, 128, 64), stages=3)
    >>> sorted(e.files)
    ['Makefile', 'README.md', 'kernel.cu', 'main.cu', 'manifest.json']
    """
    man = build_gemm_manifest(dtype, tile=tile, stages=stages, arch=arch, group_m=group_m,
                              splits=splits, out=out, bias=bias, activation=activation,
                              cluster=cluster, swap_ab=swap_ab, schedule=schedule)
    return emission_of(man)


def emission_of(man: dict) -> Emission:
    """The files of ``emit gemm`` written from one manifest (its JSON object, typed once here
    for the renderers).

    >>> sorted(emission_of(build_gemm_manifest("bf16", tile=(128, 128, 64), stages=2)).files)[:2]
    ['Makefile', 'README.md']
    """
    g = typed_manifest(man)
    return Emission(man, {"manifest.json": json.dumps(man, indent=1) + "\n",
                          "kernel.cu": render_gemm_cuda(g), "main.cu": render_gemm_main(g),
                          "Makefile": render_gemm_makefile(g),
                          "README.md": render_gemm_readme(g)})
