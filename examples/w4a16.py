"""A W4A16 matmul for sm_90 (int4 weights packed two per byte, dequantized in registers) whose
dequantized B tile store has an 8-way bank conflict.

Run ``python examples/w4a16.py`` (Triton wheel, no GPU) to write ``examples/w4a16.ttgir``, then
``verilayout audit examples/w4a16.ttgir``. The two nibbles of a byte are unpacked with
``tl.join`` into K rows ``2k`` and ``2k + 1``; the dequantized tile is then stored K-major
(``nvmma_shared<{transposed = true}>``) with 32-bit stores whose lanes step through N, i.e.
through rows 128 bytes apart.
"""
import os

import triton
import triton.language as tl


@triton.jit
def w4a16(a_ptr, b_ptr, c_ptr, K, sam, sbk, scm, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    rk2 = tl.arange(0, BK // 2)
    a_ptrs = a_ptr + rm[:, None] * sam + rk[None, :]
    b_ptrs = b_ptr + rk2[:, None] * sbk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs)
        packed = tl.load(b_ptrs)
        lo = (packed << 4) >> 4
        hi = packed >> 4
        b = tl.join(lo, hi).permute(0, 2, 1).reshape(BK, BN)
        b = b.to(tl.float16)                 # the dequantized B tile: stored with an 8-way conflict
        acc += tl.dot(a, b)
        a_ptrs += BK
        b_ptrs += (BK // 2) * sbk
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :], acc.to(tl.float16))


def compile_ttgir(capability: int = 90) -> str:
    """The TTGIR Triton writes for this kernel (CPU only)."""
    from triton.backends.compiler import GPUTarget
    sig = {"a_ptr": "*fp16", "b_ptr": "*i8", "c_ptr": "*fp16", "K": "i32", "sam": "i32", "sbk": "i32",
           "scm": "i32"}
    attrs = {(i,): [["tt.divisibility", 16]] for i in (0, 1, 2, 4, 5, 6)}
    k = triton.compile(triton.compiler.ASTSource(w4a16, sig, {"BM": 64, "BN": 128, "BK": 64}, attrs),
                       target=GPUTarget("cuda", capability, 32), options={"num_stages": 1})
    return k.asm["ttgir"]


if __name__ == "__main__":
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "w4a16.ttgir")
    with open(out, "w") as f:
        f.write(compile_ttgir())
    print(out)
    os._exit(0)
