// verilayout hwtests: where does one TMA tile load put each box element in shared memory?
//
// Measures what verilayout.hw.nvidia.tma models (limit_findings, write_table): for a 2-D tiled tensor
// map (cuTensorMapEncodeTiled: element type, swizzle mode, box, element strides) and one
// cp.async.bulk.tensor.2d load of the box at (x, y) to a shared destination DST, the byte offset
// from DST of every box element, or the refusal (the driver's CUresult, or the kernel's CUDA error).
//
// Method. A global tensor of 160 rows x 256 bytes (pitch 256) whose element (row r, column c) holds
// a code naming (r, c): code = r * (256 / esize) + c for 16- and 32-bit types (float32: the code as a
// float, exact), and for uint8 two tensors holding the low and the high byte of r * 256 + c. Each
// load runs twice, into a window prefilled with all-zero and with all-one bytes: a byte that reads
// the same in both runs was written by the load (codes never need a prefill value to be told
// apart). The host decodes every written slot to (r, c) and reports its offset from DST.
// Kernel: one CTA of 128 threads; the window is the first 1024-aligned address of the dynamic shared
// memory (WINDOW bytes), the mbarrier right after it; thread 0 arms the mbarrier with the box's
// bytes and issues
//   cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// every thread waits (bounded by kSpin clock64 cycles: "timeout"), then the window is copied out.
//
// Usage: tma_probe CASES [FIRST]
//   CASES: "name dtype swizzle box0 box1 dst_offset x y es1" per line (dtype: uint8 uint16 uint32
//   float32; swizzle: none 32B 64B 128B 128B_ATOM_32B 128B_ATOM_32B_FLIP_8B 128B_ATOM_64B;
//   dst_offset: bytes after the 1024-aligned window start, hex or decimal).
//   stdout, JSON lines: a {"probe":"tma_probe",...} header, then per case {"index","name","dtype",
//   "esize","swizzle","box","elem_strides","smem_box","coord","base","dst","tx_bytes","encode",
//   "timeout","written","missing","dup","stray","off"} with off[r * smem_box0 + c] the byte offset
//   from dst (absolute shared address) of box element (row r, column c), or null. An encode failure
//   gives "encode" (the CUresult) and "error"; a CUDA error gives "error" and exit status 3 (the
//   context is lost: run.sh goes on after that case).
// Build: nvcc -arch=sm_90a -std=c++17 -O2 -o tma_probe tma_probe.cu
//   (cuTensorMapEncodeTiled comes from cudaGetDriverEntryPointByVersion: no -lcuda needed)
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

constexpr int kWindow = 32 * 1024;
constexpr int kDynamic = kWindow + 1024 + 64;
constexpr int kPitch = 256, kRows = 160;
constexpr long long kSpin = 1000000000LL;

__global__ void __launch_bounds__(128) load_kernel(const __grid_constant__ CUtensorMap map, int dst_off, int x,
                                                   int y, int tx_bytes, uint32_t fill, uint32_t* out,
                                                   uint32_t* info) {
  extern __shared__ unsigned char dyn[];
  const uint32_t dyn_addr = static_cast<uint32_t>(__cvta_generic_to_shared(dyn));
  const uint32_t win_addr = (dyn_addr + 1023u) & ~1023u;
  uint32_t* win = reinterpret_cast<uint32_t*>(dyn + (win_addr - dyn_addr));
  const uint32_t bar = win_addr + kWindow;
  for (int i = threadIdx.x; i < kWindow / 4; i += blockDim.x) win[i] = fill;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bar));
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(tx_bytes) : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
        ::"r"(win_addr + dst_off), "l"(&map), "r"(x), "r"(y), "r"(bar) : "memory");
  }
  uint32_t done = 0;
  const long long t0 = clock64();
  while (!done && clock64() - t0 < kSpin) {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done) : "r"(bar) : "memory");
  }
  __syncthreads();
  for (int i = threadIdx.x; i < kWindow / 4; i += blockDim.x) out[i] = win[i];
  if (threadIdx.x == 0) { info[0] = dyn_addr; info[1] = win_addr; info[2] = done; }
}

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

struct Case { std::string name, dtype, swizzle; int box0, box1, dst, x, y, es1; };

static const char* kSwizzles[] = {"none", "32B", "64B", "128B", "128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B",
                                  "128B_ATOM_64B"};

static std::vector<Case> read_cases(const char* path) {
  std::ifstream f(path);
  std::vector<Case> out;
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    Case c;
    std::string dst;
    if (!(s >> c.name >> c.dtype >> c.swizzle >> c.box0 >> c.box1 >> dst >> c.x >> c.y >> c.es1)) continue;
    c.dst = static_cast<int>(std::stol(dst, nullptr, 0));
    out.push_back(c);
  }
  return out;
}

static int esize_of(const std::string& t) { return t == "uint8" ? 1 : t == "uint16" ? 2 : 4; }

static CUtensorMapDataType type_of(const std::string& t) {
  return t == "uint8" ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : t == "uint16" ? CU_TENSOR_MAP_DATA_TYPE_UINT16
       : t == "uint32" ? CU_TENSOR_MAP_DATA_TYPE_UINT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
}

// The global tensors: per element size, the code tensor(s) (uint8: low byte, high byte).
static std::vector<std::vector<unsigned char>> host_tensors(const std::string& dtype) {
  const int es = esize_of(dtype), cols = kPitch / es;
  std::vector<std::vector<unsigned char>> out(es == 1 ? 2 : 1, std::vector<unsigned char>(kPitch * kRows));
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < cols; ++c) {
      const uint32_t code = r * cols + c;
      unsigned char* p = &out[0][r * kPitch + c * es];
      if (es == 1) { p[0] = code & 0xFF; out[1][r * kPitch + c] = code >> 8; }
      else if (es == 2) { uint16_t v = code; memcpy(p, &v, 2); }
      else if (dtype == "float32") { float v = float(code); memcpy(p, &v, 4); }
      else memcpy(p, &code, 4);
    }
  return out;
}

struct Run { cudaError_t err; uint32_t dyn, win, done; std::vector<unsigned char> bytes; };

// TMA_PROBE_SIMULATE=1: no GPU; each load is computed on the host by the rules measured on the H100
// (absolute-address swizzle, narrow rows padded to the span, ATOM modes refused, innermost start off
// 16 bytes an illegal instruction). It tests this file's decoding and output, not the hardware.
static bool simulating() { return std::getenv("TMA_PROBE_SIMULATE") != nullptr; }

static Run simulate(const Case& c, const unsigned char* g, uint32_t fill, CUresult* encode_result) {
  Run r{cudaSuccess, 0x400, 0x400, 1, std::vector<unsigned char>(kWindow)};
  int sw = 0;
  while (sw < 7 && c.swizzle != kSwizzles[sw]) ++sw;
  *encode_result = sw >= 4 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
  const int es = esize_of(c.dtype), rows = (c.box1 + c.es1 - 1) / c.es1;
  if (sw >= 4) return r;
  if ((c.x * es) % 16) { r.err = cudaErrorIllegalInstruction; return r; }
  for (int i = 0; i < kWindow; i += 4) memcpy(&r.bytes[i], &fill, 4);
  const int row_bytes = sw ? std::max(c.box0 * es, 16 << sw) : c.box0 * es;
  for (int br = 0; br < rows; ++br)
    for (int bc = 0; bc < c.box0; ++bc) {
      const int gy = c.y + br * c.es1, gx = c.x + bc;
      if (gy >= kRows || gx * es >= kPitch) continue;
      uint32_t a = r.win + c.dst + br * row_bytes + bc * es;
      if (sw) a ^= ((a >> 7) & ((1u << sw) - 1)) << 4;
      memcpy(&r.bytes[a - r.win], &g[gy * kPitch + gx * es], es);
    }
  return r;
}

static Run load(EncodeTiled enc, const Case& c, void* d_tensor, uint32_t fill, uint32_t* d_out, uint32_t* d_info,
                CUresult* encode_result) {
  if (simulating()) return simulate(c, static_cast<const unsigned char*>(d_tensor), fill, encode_result);
  CUtensorMap map;
  const int es = esize_of(c.dtype);
  cuuint64_t dims[2] = {cuuint64_t(kPitch / es), cuuint64_t(kRows)}, strides[1] = {kPitch};
  cuuint32_t box[2] = {cuuint32_t(c.box0), cuuint32_t(c.box1)}, estr[2] = {1, cuuint32_t(c.es1)};
  int sw = 0;
  while (sw < 7 && c.swizzle != kSwizzles[sw]) ++sw;
  *encode_result = enc(&map, type_of(c.dtype), 2, d_tensor, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                       CUtensorMapSwizzle(sw), CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  Run r{cudaSuccess, 0, 0, 0, {}};
  if (*encode_result != CUDA_SUCCESS) return r;
  const int rows = (c.box1 + c.es1 - 1) / c.es1;
  load_kernel<<<1, 128, kDynamic>>>(map, c.dst, c.x, c.y, c.box0 * rows * es, fill, d_out, d_info);
  r.err = cudaDeviceSynchronize();
  if (r.err != cudaSuccess) return r;
  uint32_t info[3];
  cudaMemcpy(info, d_info, sizeof(info), cudaMemcpyDeviceToHost);
  r.dyn = info[0]; r.win = info[1]; r.done = info[2];
  r.bytes.resize(kWindow);
  r.err = cudaMemcpy(r.bytes.data(), d_out, kWindow, cudaMemcpyDeviceToHost);
  return r;
}

// the case's parameters: the head of every output line of a case (a result or an error)
static void print_head(size_t index, const Case& c, int encode) {
  const int es = esize_of(c.dtype), cols = kPitch / es, rows = (c.box1 + c.es1 - 1) / c.es1;
  printf("{\"index\":%zu,\"name\":\"%s\",\"dtype\":\"%s\",\"esize\":%d,\"swizzle\":\"%s\",\"global_dims\":[%d,%d],"
         "\"global_stride\":%d,\"box\":[%d,%d],\"elem_strides\":[1,%d],\"smem_box\":[%d,%d],\"coord\":[%d,%d],"
         "\"base\":%d,\"tx_bytes\":%d,\"encode\":%d", index, c.name.c_str(), c.dtype.c_str(), es, c.swizzle.c_str(),
         cols, kRows, kPitch, c.box0, c.box1, c.es1, c.box0, rows, c.x, c.y, c.dst, c.box0 * rows * es, encode);
}

static void report(size_t index, const Case& c, const std::vector<Run>& runs, int encode) {
  const int es = esize_of(c.dtype), cols = kPitch / es, rows = (c.box1 + c.es1 - 1) / c.es1;
  print_head(index, c, encode);
  if (encode) { printf(",\"error\":\"cuTensorMapEncodeTiled failed: CUresult %d\"}\n", encode); return; }
  const uint32_t dst = runs[0].win + c.dst;
  bool timeout = false;
  for (const Run& r : runs) timeout |= !r.done;
  // slot -> code, for slots written in both prefills (every byte of the slot equal across the pair)
  std::vector<long> off(size_t(c.box0) * rows, -1);
  int written = 0, dup = 0, stray = 0;
  const int passes = es == 1 ? 2 : 1;
  for (int s = 0; s + es <= kWindow; s += es) {
    uint32_t code = 0;
    bool ok = true;
    for (int p = 0; p < passes && ok; ++p) {
      const auto& a = runs[2 * p].bytes;
      const auto& b = runs[2 * p + 1].bytes;
      ok = memcmp(&a[s], &b[s], es) == 0;
      uint32_t v = 0;
      if (es == 4 && c.dtype == "float32") { float f; memcpy(&f, &a[s], 4); v = uint32_t(f); }
      else memcpy(&v, &a[s], es);
      code |= v << (8 * p);
    }
    if (!ok) continue;
    ++written;
    const long r = code / cols, col = code % cols;
    const long br = (r - c.y), bc = col - c.x;
    if (br < 0 || br % c.es1 || br / c.es1 >= rows || bc < 0 || bc >= c.box0) { ++stray; continue; }
    long& o = off[size_t(br / c.es1) * c.box0 + bc];
    if (o != -1) ++dup;
    o = long(runs[0].win) + s - long(dst);
  }
  int missing = 0;
  for (long o : off) missing += o == -1;
  printf(",\"smem_dyn\":%u,\"smem_buf\":%u,\"dst\":%u,\"timeout\":%d,\"written\":%d,\"missing\":%d,\"dup\":%d,"
         "\"stray\":%d,\"off\":[", runs[0].dyn, runs[0].win, dst, int(timeout), written, missing, dup, stray);
  for (size_t i = 0; i < off.size(); ++i) {
    if (off[i] == -1) printf(i ? ",null" : "null");
    else printf(i ? ",%ld" : "%ld", off[i]);
  }
  printf("]}\n");
}

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s CASES [FIRST]\n", argv[0]); return 2; }
  const std::vector<Case> cases = read_cases(argv[1]);
  const size_t first = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 0;
  const bool sim = simulating();
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q;
  if (!sim && (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q)
               != cudaSuccess || !fn)) { fprintf(stderr, "no cuTensorMapEncodeTiled\n"); return 2; }
  const EncodeTiled enc = reinterpret_cast<EncodeTiled>(fn);
  if (!sim) cudaFuncSetAttribute(load_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kDynamic);
  static std::map<std::string, std::vector<std::vector<unsigned char>>> host;
  std::map<std::string, std::vector<void*>> tensors;
  for (const char* t : {"uint8", "uint16", "uint32", "float32"}) {
    host[t] = host_tensors(t);
    for (auto& h : host[t]) {
      void* d = h.data();
      if (!sim) {
        cudaMalloc(&d, h.size());
        cudaMemcpy(d, h.data(), h.size(), cudaMemcpyHostToDevice);
      }
      tensors[t].push_back(d);
    }
  }
  uint32_t *d_out = nullptr, *d_info = nullptr;
  cudaDeviceProp prop{};
  int driver = 0, runtime = 0;
  if (!sim) {
    cudaMalloc(&d_out, kWindow);
    cudaMalloc(&d_info, 16);
    cudaGetDeviceProperties(&prop, 0);
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
  } else {
    snprintf(prop.name, sizeof(prop.name), "simulated (TMA_PROBE_SIMULATE)");
  }
  printf("{\"probe\":\"tma_probe\",\"simulated\":%s,\"device\":\"%s\",\"cc\":\"%d.%d\",\"driver\":%d,\"runtime\":%d,\"win_bytes\":%d,"
         "\"global_pitch\":%d,\"global_rows\":%d,\"cases\":%zu,\"first\":%zu}\n", sim ? "true" : "false", prop.name,
         prop.major, prop.minor,
         driver, runtime, kWindow, kPitch, kRows, cases.size(), first);
  fflush(stdout);
  for (size_t i = first; i < cases.size(); ++i) {
    const Case& c = cases[i];
    std::vector<Run> runs;
    CUresult encode = CUDA_SUCCESS;
    for (void* t : tensors[c.dtype]) {
      for (uint32_t fill : {0u, 0xFFFFFFFFu}) {
        runs.push_back(load(enc, c, t, fill, d_out, d_info, &encode));
        if (encode != CUDA_SUCCESS) break;
        if (runs.back().err != cudaSuccess) {
          print_head(i, c, 0);
          printf(",\"error\":\"%s: %s\"}\n", cudaGetErrorName(runs.back().err), cudaGetErrorString(runs.back().err));
          fflush(stdout);
          return 3;
        }
      }
      if (encode != CUDA_SUCCESS) break;
    }
    report(i, c, runs, int(encode));
    fflush(stdout);
  }
  return 0;
}
