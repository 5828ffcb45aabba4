// verilayout hwtests: which shared-memory byte does wgmma read for each A(m, k)?
//
// Measures the rule verilayout.hw.nvidia.descriptor.hardware_address_function models: for one
// 64-bit shared-memory matrix descriptor (used verbatim), the byte address of every element of a
// 64 x 16 f16 A operand (K-major: tnspA 0; MN-major: tnspA 1).
//
// Method. One warpgroup (128 threads) computes D = A * I with
//     wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16
// B is the 16 x 16 identity (K-major canonical, no swizzle: core matrices (n/8, k/8) at
// n/8 * 256 + k/8 * 128, the identity core matrix on the diagonal, zeros off it; it reads as the
// identity whether LBO or SBO walks K), so D[m][n] = A[m][n]. The whole dynamic shared window is
// filled so that the 16-bit slot at ABSOLUTE shared address a holds a small integer naming a / 2:
//     pass 0: (a / 2) mod 1024        pass 1: (a / 2) / 1024
// (integers below 2048 are exact in f16 and in the f32 sum, every other product being 0 * x).
// The two passes give the slot, hence the byte address, of every A(m, k).
// D fragment of m64nNk16 with f32 accumulators (PTX ISA, wgmma register fragments): thread
// t = 32 w + l, register i: row 16 w + l / 4 + 8 ((i / 2) % 2), column 2 (l % 4) + i % 2 + 8 (i / 4).
// A self-test runs first: two canonical no-swizzle K-major descriptors built here, compared with the
// PTX canonical formula over all 1024 elements.
//
// Usage: wgmma_probe CASES [FIRST]
//   CASES: "name desc_hex tnspA" per line ('#' and blank lines skipped); FIRST: first case index.
//   stdout, JSON lines: {"probe":"wgmma_probe",...} header, {"selftest":...}, then per case
//   {"index","name","desc","tnspA","bad","addr":[64 rows of 16 byte addresses]} (bad: elements
//   whose code did not decode, addr -1). A CUDA error prints {"index",...,"error"} and exits 3
//   (the context is lost; run.sh restarts after that case).
// Build: nvcc -arch=sm_90a -std=c++17 -O2 -o wgmma_probe wgmma_probe.cu
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

constexpr int kWindow = 160 * 1024;            // dynamic shared bytes: codes everywhere
constexpr int kBOffset = kWindow - 512;        // the identity B (512 bytes) at the top

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define NO_WGMMA 1                             // the plain compute_90 image: wgmma does not exist
#endif

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

template <int kTnspA>
__device__ __forceinline__ void mma(float (&d)[8], uint64_t desc_a, uint64_t desc_b) {
#ifdef NO_WGMMA
  __trap();
#else
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 "
      "{%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1, %11, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
      : "l"(desc_a), "l"(desc_b), "r"(0), "n"(kTnspA)
      : "memory");
#endif
}

__device__ __forceinline__ void mma_fence() {
#ifndef NO_WGMMA
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

// out[pass][thread][8]: the accumulators of pass 0 (low code) and pass 1 (high code).
template <int kTnspA>
__global__ void __launch_bounds__(128) probe_kernel(uint64_t desc_a, float* out, uint32_t* window_base) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const uint32_t base = smem_addr(smem);
  if (threadIdx.x == 0) *window_base = base;
  __half* slots = reinterpret_cast<__half*>(smem);
  const uint32_t b_addr = base + kBOffset;
  // B descriptor: start >> 4, LBO 128 >> 4 (bits 16..29), SBO 256 >> 4 (bits 32..45), no swizzle
  const uint64_t desc_b = ((b_addr & 0x3FFFF) >> 4) | (uint64_t(128 >> 4) << 16) | (uint64_t(256 >> 4) << 32);
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = threadIdx.x; i < kBOffset / 2; i += blockDim.x) {
      const uint32_t slot = (base >> 1) + i;               // absolute 16-bit slot
      slots[i] = __int2half_rn(pass == 0 ? int(slot & 1023) : int(slot >> 10));
    }
    for (int i = threadIdx.x; i < 256; i += blockDim.x) {   // B: 2 x 2 core matrices of 8 x 8
      const int core = i / 64, r = (i % 64) / 8, c = i % 8;  // core 0: (n0,k0), 1: (n0,k1) ...
      const bool diagonal = core == 0 || core == 3;
      slots[kBOffset / 2 + core * 64 + r * 8 + c] = __float2half(diagonal && r == c ? 1.f : 0.f);
    }
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");   // generic writes -> async proxy
    __syncthreads();
    float d[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    mma_fence();
    mma<kTnspA>(d, desc_a, desc_b);
#ifndef NO_WGMMA
    asm volatile("wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#endif
    for (int i = 0; i < 8; ++i) out[(pass * 128 + threadIdx.x) * 8 + i] = d[i];
    __syncthreads();
  }
}

__global__ void where_kernel(uint32_t* window_base) {
  extern __shared__ __align__(1024) unsigned char smem[];
  if (threadIdx.x == 0) *window_base = smem_addr(smem);
}

struct Case { std::string name, hex; uint64_t desc; int tnsp; };

static std::vector<Case> read_cases(const char* path) {
  std::ifstream f(path);
  std::vector<Case> out;
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    Case c;
    if (!(s >> c.name >> c.hex >> c.tnsp)) continue;
    c.desc = std::stoull(c.hex, nullptr, 16);
    out.push_back(c);
  }
  return out;
}

// addr[m][k] (bytes), from the two passes' accumulators; returns the number of undecodable values.
static int decode(const std::vector<float>& acc, long (&addr)[64][16]) {
  int bad = 0;
  for (int t = 0; t < 128; ++t) {
    const int w = t / 32, l = t % 32;
    for (int i = 0; i < 8; ++i) {
      const int row = 16 * w + l / 4 + 8 * ((i / 2) % 2), col = 2 * (l % 4) + i % 2 + 8 * (i / 4);
      const float lo = acc[(0 * 128 + t) * 8 + i], hi = acc[(1 * 128 + t) * 8 + i];
      const bool ok = lo >= 0 && lo < 1024 && hi >= 0 && hi < 1024 && lo == (int)lo && hi == (int)hi;
      addr[row][col] = ok ? 2L * ((long)hi * 1024 + (long)lo) : -1;
      bad += !ok;
    }
  }
  return bad;
}

static cudaError_t run_case(uint64_t desc, int tnsp, float* d_out, uint32_t* d_base, std::vector<float>& acc) {
  if (tnsp) probe_kernel<1><<<1, 128, kWindow>>>(desc, d_out, d_base);
  else probe_kernel<0><<<1, 128, kWindow>>>(desc, d_out, d_base);
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaMemcpy(acc.data(), d_out, acc.size() * sizeof(float), cudaMemcpyDeviceToHost);
  return e;
}

static void print_addr(const long (&addr)[64][16]) {
  printf("[");
  for (int m = 0; m < 64; ++m) {
    printf(m ? ",[" : "[");
    for (int k = 0; k < 16; ++k) printf(k ? ",%ld" : "%ld", addr[m][k]);
    printf("]");
  }
  printf("]");
}

// Canonical K-major, no swizzle (PTX): start + 16 (m % 8) + SBO (m / 8) + 2 (k % 8) + LBO (k / 8).
static void selftest(uint32_t base, float* d_out, uint32_t* d_base, std::vector<float>& acc) {
  const int lbo_sbo[2][2] = {{128, 256}, {1024, 128}};
  for (auto& ls : lbo_sbo) {
    const uint32_t start = base + 0x800;
    const uint64_t desc = ((start & 0x3FFFF) >> 4) | (uint64_t(ls[0] >> 4) << 16) | (uint64_t(ls[1] >> 4) << 32);
    long addr[64][16];
    cudaError_t e = run_case(desc, 0, d_out, d_base, acc);
    int bad = e == cudaSuccess ? decode(acc, addr) : 1024, wrong = 0;
    for (int m = 0; m < 64 && e == cudaSuccess; ++m)
      for (int k = 0; k < 16; ++k)
        wrong += addr[m][k] != long(start + 16 * (m % 8) + ls[1] * (m / 8) + 2 * (k % 8) + ls[0] * (k / 8));
    printf("{\"selftest\":\"K-none-LBO%d-SBO%d\",\"desc\":\"0x%016llx\",\"pass\":%s,\"mismatches\":%d,\"bad\":%d}\n",
           ls[0], ls[1], (unsigned long long)desc, wrong == 0 && bad == 0 ? "true" : "false", wrong, bad);
  }
}

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s CASES [FIRST]\n", argv[0]); return 2; }
  const std::vector<Case> cases = read_cases(argv[1]);
  const size_t first = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 0;
  cudaFuncSetAttribute(probe_kernel<0>, cudaFuncAttributeMaxDynamicSharedMemorySize, kWindow);
  cudaFuncSetAttribute(probe_kernel<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, kWindow);
  float* d_out; uint32_t* d_base;
  cudaMalloc(&d_out, 2 * 128 * 8 * sizeof(float));
  cudaMalloc(&d_base, sizeof(uint32_t));
  std::vector<float> acc(2 * 128 * 8);
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  // where the dynamic window starts (the same kernel shape as the probe's; checked per case)
  cudaFuncSetAttribute(where_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kWindow);
  where_kernel<<<1, 128, kWindow>>>(d_base);
  if (cudaDeviceSynchronize() != cudaSuccess) { fprintf(stderr, "cannot start a kernel\n"); return 2; }
  uint32_t base = 0;
  cudaMemcpy(&base, d_base, sizeof(base), cudaMemcpyDeviceToHost);
  printf("{\"probe\":\"wgmma_probe\",\"device\":\"%s\",\"sm\":\"%d.%d\",\"driver\":%d,\"runtime\":%d,"
         "\"smem_base\":%u,\"smem_bytes\":%d,\"b_addr\":%u,\"first_index\":%zu,\"cases\":%zu}\n",
         prop.name, prop.major, prop.minor, driver, runtime, base, kBOffset, base + kBOffset, first, cases.size());
  if (first == 0) selftest(base, d_out, d_base, acc);
  fflush(stdout);
  for (size_t i = first; i < cases.size(); ++i) {
    const Case& c = cases[i];
    cudaError_t e = run_case(c.desc, c.tnsp, d_out, d_base, acc);
    if (e != cudaSuccess) {
      printf("{\"index\":%zu,\"name\":\"%s\",\"desc\":\"%s\",\"tnspA\":%d,\"error\":\"%s\"}\n", i, c.name.c_str(),
             c.hex.c_str(), c.tnsp, cudaGetErrorString(e));
      fflush(stdout);
      return 3;
    }
    uint32_t case_base = 0;
    cudaMemcpy(&case_base, d_base, sizeof(case_base), cudaMemcpyDeviceToHost);
    if (case_base != base) { fprintf(stderr, "the window moved: %u != %u\n", case_base, base); return 4; }
    long addr[64][16];
    const int bad = decode(acc, addr);
    printf("{\"index\":%zu,\"name\":\"%s\",\"desc\":\"%s\",\"tnspA\":%d,\"bad\":%d,\"addr\":", i, c.name.c_str(),
           c.hex.c_str(), c.tnsp, bad);
    print_addr(addr);
    printf("}\n");
    fflush(stdout);
  }
  return 0;
}
