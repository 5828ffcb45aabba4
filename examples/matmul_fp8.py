"""An fp8 matmul for sm_90 whose B tile store has an 8-way bank conflict, and its audit.

Run ``python examples/matmul_fp8.py`` (needs the Triton wheel; no GPU) to compile the kernel
and write ``examples/matmul_fp8.ttgir``, then ``verilayout audit examples/matmul_fp8.ttgir``.
B (K x N, N contiguous in global memory) is loaded 16 N-elements per thread, and stored into
``#ttg.nvmma_shared<{transposed = true}>`` (K contiguous: fp8 wgmma reads B K-major only), so
each thread's 16 bytes land in 16 rows 64 bytes apart: ``st.shared.b8`` with 8 lanes per bank.
"""
import os
import sys

import triton
import triton.language as tl


@triton.jit
def matmul_fp8(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak: tl.constexpr, sbk, sbn: tl.constexpr, scm,
               scn: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b_ptrs = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)                 # the B tile: stored to shared memory with an 8-way conflict
        acc += tl.dot(a, b)
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    c_ptrs = c_ptr + rm[:, None] * scm + rn[None, :] * scn
    tl.store(c_ptrs, acc.to(tl.float16))


def compile_ttgir(dtype: str = "fp8e4nv", capability: int = 90, num_stages: int = 1) -> str:
    """The TTGIR Triton writes for this kernel (CPU only)."""
    from triton.backends.compiler import GPUTarget
    sig = {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
           "sam": "i32", "sak": "constexpr", "sbk": "i32", "sbn": "constexpr", "scm": "i32", "scn": "constexpr"}
    attrs = {(i,): [["tt.divisibility", 16]] for i in (0, 1, 2, 6, 8, 10)}
    consts = {"BM": 128, "BN": 128, "BK": 64, "sak": 1, "sbn": 1, "scn": 1}
    k = triton.compile(triton.compiler.ASTSource(matmul_fp8, sig, consts, attrs),
                       target=GPUTarget("cuda", capability, 32), options={"num_stages": num_stages})
    return k.asm["ttgir"]


if __name__ == "__main__":
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "matmul_fp8.ttgir")
    with open(out, "w") as f:
        f.write(compile_ttgir(*(sys.argv[1:2] or ["fp8e4nv"])))
    print(out)
    os._exit(0)
