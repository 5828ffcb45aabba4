"""Triton kernels of the corpus: what users commonly compile (matmuls in every element type,
persistent TMA matmul, attention, block-scaled dot, dequantizing matmul, norms, reductions,
views). Each entry of ``KERNELS`` is ``(name, fn, signature, configs)``; a config is
``(tag, constexprs, num_warps, num_stages)``. ``generate.py`` compiles them for five targets.
Written for this corpus; the kernels are small on purpose (the TTGIR is what matters).
"""
from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, ACC: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b_ptrs = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=ACC)
    for _ in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc.to(c_ptr.dtype.element_ty))


@triton.jit
def matmul_bt(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # B given as N x K (row-major), used transposed
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + rn[:, None] * K + (k + rk)[None, :])
        acc += tl.dot(a, tl.trans(b))
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def matmul_masked(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def persistent_tma_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                          NUM_SMS: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    tiles_n = tl.cdiv(N, BN)
    tiles = tl.cdiv(M, BM) * tiles_n
    for tile in tl.range(tl.program_id(0), tiles, NUM_SMS):
        om = (tile // tiles_n) * BM
        on = (tile % tiles_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            a = a_desc.load([om, k])
            b = b_desc.load([on, k])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([om, on], acc.to(c_desc.dtype))


@triton.jit
def batched_tma_matmul(a_ptr, b_ptr, c_ptr, B, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # rank-3 descriptors whose block has a leading unit dim (a batch index per program), as
    # batched and MoE matmuls make them: the copies write 2-d shared buffers
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[B, M, K], strides=[M * K, K, 1], block_shape=[1, BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[B, N, K], strides=[N * K, K, 1], block_shape=[1, BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[B, M, N], strides=[M * N, N, 1], block_shape=[1, BM, BN])
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    bz = tl.program_id(2)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([bz, om, k]).reshape(BM, BK)
        b = b_desc.load([bz, on, k]).reshape(BN, BK)
        acc = tl.dot(a, b.T, acc)
    c_desc.store([bz, om, on], acc.to(tl.float16).reshape(1, BM, BN))


@triton.jit
def ragged_tma_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # rank-5 descriptors with block [1, 1, 1, BM, BK] (the shape of ragged TMA descriptors)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[1, 1, 1, M, K], strides=[M * K, M * K, M * K, K, 1],
                                       block_shape=[1, 1, 1, BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[1, 1, 1, M, N], strides=[M * N, M * N, M * N, N, 1],
                                       block_shape=[1, 1, 1, BM, BN])
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([0, 0, 0, om, k]).reshape(BM, BK)
        b = b_desc.load([on, k])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([0, 0, 0, om, on], acc.to(tl.float16).reshape(1, 1, 1, BM, BN))


@triton.jit
def ws_tma_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # a warp-specialized K loop (load and MMA partitions, ttg.warp_specialize), a 3-stage TMA ring
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, warp_specialize=True):
        a = a_desc.load([om, k])
        b = b_desc.load([on, k])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([om, on], acc.to(tl.float16))


@triton.jit
def attention_fwd(q_ptr, k_ptr, v_ptr, o_ptr, L, scale, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :])
    m_i = tl.full((BM,), float("-inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for start in range(0, L, BN):
        rn = start + tl.arange(0, BN)
        k = tl.load(k_ptr + rn[:, None] * D + rd[None, :])
        v = tl.load(v_ptr + rn[:, None] * D + rd[None, :])
        s = tl.dot(q, tl.trans(k)) * scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    tl.store(o_ptr + rm[:, None] * D + rd[None, :], (acc / l_i[:, None]).to(o_ptr.dtype.element_ty))


@triton.jit
def dot_scaled_mx(a_ptr, sa_ptr, b_ptr, sb_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  FMT: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    rs = tl.arange(0, BK // 32)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    sa = tl.load(sa_ptr + rm[:, None] * (BK // 32) + rs[None, :])
    sb = tl.load(sb_ptr + rn[:, None] * (BK // 32) + rs[None, :])
    c = tl.dot_scaled(a, sa, FMT, b, sb, FMT)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], c)


@triton.jit
def dot_scaled_fp4_bf16(a_ptr, sa_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # e2m1 A (two values per byte) with e8m0 scales against an unscaled bf16 B
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk2 = tl.arange(0, BK // 2)
    rk = tl.arange(0, BK)
    rs = tl.arange(0, BK // 32)
    a = tl.load(a_ptr + rm[:, None] * (BK // 2) + rk2[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    sa = tl.load(sa_ptr + rm[:, None] * (BK // 32) + rs[None, :])
    c = tl.dot_scaled(a, sa, "e2m1", b, None, "bf16")
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], c)


@triton.jit
def w4a16_matmul(a_ptr, b_ptr, s_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # B packs two int4 values per byte along K; unpacked with shifts, scaled per column
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    rkh = tl.arange(0, BK // 2)
    acc = tl.zeros((BM, BN), tl.float32)
    scale = tl.load(s_ptr + rn)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        packed = tl.load(b_ptr + ((k // 2) + rkh)[:, None] * 4096 + rn[None, :])
        lo = (packed & 0xF).to(tl.int8) - 8
        hi = ((packed >> 4) & 0xF).to(tl.int8) - 8
        b = tl.join(lo, hi).permute(0, 2, 1).reshape(BK, BN)
        b = b.to(tl.float16) * scale[None, :].to(tl.float16)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * 4096 + rn[None, :], acc.to(tl.float16))


@triton.jit
def layer_norm(x_ptr, y_ptr, w_ptr, b_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, 0) / N
    d = tl.where(mask, x - mean, 0.0)
    var = tl.sum(d * d, 0) / N
    y = d / tl.sqrt(var + eps) * tl.load(w_ptr + cols, mask=mask) + tl.load(b_ptr + cols, mask=mask)
    tl.store(y_ptr + row * N + cols, y, mask=mask)


@triton.jit
def softmax_rows(x_ptr, y_ptr, N, BR: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=cols[None, :] < N, other=float("-inf"))
    z = x - tl.max(x, 1)[:, None]
    e = tl.exp(z)
    tl.store(y_ptr + rows[:, None] * N + cols[None, :], e / tl.sum(e, 1)[:, None], mask=cols[None, :] < N)


@triton.jit
def rope(x_ptr, cos_ptr, sin_ptr, y_ptr, BR: tl.constexpr, D: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    half = tl.arange(0, D // 2)
    base = x_ptr + rows[:, None] * D
    x1 = tl.load(base + half[None, :])
    x2 = tl.load(base + D // 2 + half[None, :])
    c = tl.load(cos_ptr + rows[:, None] * (D // 2) + half[None, :])
    s = tl.load(sin_ptr + rows[:, None] * (D // 2) + half[None, :])
    out = tl.join(x1 * c - x2 * s, x1 * s + x2 * c)          # [BR, D/2, 2]
    out = tl.reshape(tl.permute(out, (0, 2, 1)), (BR, D))
    tl.store(y_ptr + rows[:, None] * D + tl.arange(0, D)[None, :], out)


@triton.jit
def grouped_gemm(a_ptrs, b_ptrs, c_ptrs, sizes, G, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    g = tl.program_id(1)
    a_ptr = tl.load(a_ptrs + g).to(tl.pointer_type(tl.float16))
    b_ptr = tl.load(b_ptrs + g).to(tl.pointer_type(tl.float16))
    c_ptr = tl.load(c_ptrs + g).to(tl.pointer_type(tl.float16))
    K = tl.load(sizes + g)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc.to(tl.float16))


@triton.jit
def transpose2d(x_ptr, y_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * BN + rn[None, :])
    tl.store(y_ptr + rn[:, None] * BM + rm[None, :], tl.trans(x))


@triton.jit
def row_sum(x_ptr, y_ptr, BR: tl.constexpr, BC: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    cols = tl.arange(0, BC)
    x = tl.load(x_ptr + rows[:, None] * BC + cols[None, :])
    tl.store(y_ptr + rows, tl.sum(x, 1))
    tl.store(y_ptr + BR + cols, tl.max(x, 0))


@triton.jit
def cumsum_rows(x_ptr, y_ptr, BR: tl.constexpr, BC: tl.constexpr):
    rows = tl.arange(0, BR)
    cols = tl.arange(0, BC)
    x = tl.load(x_ptr + rows[:, None] * BC + cols[None, :])
    tl.store(y_ptr + rows[:, None] * BC + cols[None, :], tl.cumsum(x, 1))


@triton.jit
def join_split(x_ptr, y_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * BN + rn[None, :])
    y = tl.join(x, x + 1)
    a, b = tl.split(y)
    z = tl.reshape(tl.trans(tl.reshape(a * b, (BM // 2, 2, BN)), (1, 0, 2)), (BM, BN))
    tl.store(y_ptr + rm[:, None] * BN + rn[None, :], z)


@triton.jit
def gather_rows(x_ptr, idx_ptr, y_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * BN + rn[None, :])
    idx = tl.load(idx_ptr + rm[:, None] * BN + rn[None, :])
    tl.store(y_ptr + rm[:, None] * BN + rn[None, :], tl.gather(x, idx, 0))


@triton.jit
def batched_dot(a_ptr, b_ptr, c_ptr, B: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rb = tl.arange(0, B)
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rb[:, None, None] * BM * BK + rm[None, :, None] * BK + rk[None, None, :])
    b = tl.load(b_ptr + rb[:, None, None] * BK * BN + rk[None, :, None] * BN + rn[None, None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + rb[:, None, None] * BM * BN + rm[None, :, None] * BN + rn[None, None, :], c)


@triton.jit
def add_vec(x_ptr, y_ptr, z_ptr, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < N
    tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def histogram_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr, BINS: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(y_ptr + tl.arange(0, BINS), tl.histogram(x, BINS))


def _mm_sig(dt, out="*fp16"):
    s = {n: "i32" for n in ("M", "N", "K", "sam", "sak", "sbk", "sbn", "scm", "scn")}
    return {"a_ptr": dt, "b_ptr": dt, "c_ptr": out, **s, "BM": "constexpr", "BN": "constexpr",
            "BK": "constexpr", "ACC": "constexpr"}


def _mm(bm, bn, bk, acc="fp32"):
    return {"BM": bm, "BN": bn, "BK": bk, "ACC": getattr(__import__("triton").language, {"fp32": "float32", "i32": "int32"}[acc])}


SIG3 = {"M": "i32", "N": "i32", "K": "i32", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}

# (name, kernel, signature, [(tag, constexprs, num_warps, num_stages), ...], targets or None = all)
KERNELS = [
    ("matmul_f16", matmul, _mm_sig("*fp16"),
     [("128x128x64_w4_s3", _mm(128, 128, 64), 4, 3), ("64x64x32_w4_s2", _mm(64, 64, 32), 4, 2),
      ("128x256x64_w8_s3", _mm(128, 256, 64), 8, 3)], None),
    ("matmul_bf16", matmul, _mm_sig("*bf16", "*bf16"), [("128x128x64_w4_s3", _mm(128, 128, 64), 4, 3)], None),
    ("matmul_fp8", matmul, _mm_sig("*fp8e4nv"), [("128x128x128_w8_s3", _mm(128, 128, 128), 8, 3),
                                                  ("64x128x64_w4_s4", _mm(64, 128, 64), 4, 4)], None),
    ("matmul_fp8e5", matmul, _mm_sig("*fp8e5"), [("128x64x64_w4_s3", _mm(128, 64, 64), 4, 3)], None),
    ("matmul_tf32", matmul, _mm_sig("*fp32", "*fp32"), [("128x128x32_w4_s3", _mm(128, 128, 32), 4, 3)], None),
    ("matmul_int8", matmul, _mm_sig("*i8", "*i32"), [("128x128x64_w4_s3", _mm(128, 128, 64, "i32"), 4, 3)], None),
    ("matmul_bt_f16", matmul_bt, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", **SIG3},
     [("128x128x64_w4_s3", {"BM": 128, "BN": 128, "BK": 64}, 4, 3)], None),
    ("matmul_masked_f16", matmul_masked, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", **SIG3},
     [("64x64x32_w4_s2", {"BM": 64, "BN": 64, "BK": 32}, 4, 2)], None),
    ("persistent_tma_matmul", persistent_tma_matmul, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16",
                                                      **SIG3, "NUM_SMS": "constexpr"},
     [("128x128x64_w4_s3", {"BM": 128, "BN": 128, "BK": 64, "NUM_SMS": 132}, 4, 3),
      # 256 accumulator columns on 4 warps: sm_100 splits each TMEM copy into several messages
      ("128x256x64_w4_s2", {"BM": 128, "BN": 256, "BK": 64, "NUM_SMS": 148}, 4, 2)], None),
    ("persistent_tma_matmul_fp8", persistent_tma_matmul, {"a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv",
                                                          "c_ptr": "*fp16", **SIG3, "NUM_SMS": "constexpr"},
     [("128x128x128_w4_s3", {"BM": 128, "BN": 128, "BK": 128, "NUM_SMS": 132}, 4, 3)], None),
    ("batched_tma_matmul", batched_tma_matmul, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "B": "i32",
                                                **SIG3},
     [("128x128x64_w4_s3", {"BM": 128, "BN": 128, "BK": 64}, 4, 3)], None),
    ("ragged_tma_matmul", ragged_tma_matmul, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", **SIG3},
     [("128x128x64_w4_s3", {"BM": 128, "BN": 128, "BK": 64}, 4, 3)], None),
    ("ws_tma_matmul", ws_tma_matmul, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", **SIG3},
     [("128x128x64_w4_s3", {"BM": 128, "BN": 128, "BK": 64}, 4, 3)], None),
    ("attention_fwd", attention_fwd, {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16",
                                      "L": "i32", "scale": "fp32", "D": "constexpr", "BM": "constexpr",
                                      "BN": "constexpr"},
     [("d64_128x64_w4_s2", {"D": 64, "BM": 128, "BN": 64}, 4, 2), ("d128_128x64_w8_s2", {"D": 128, "BM": 128, "BN": 64}, 8, 2)], None),
    ("dot_scaled_mxfp8", dot_scaled_mx, {"a_ptr": "*fp8e4nv", "sa_ptr": "*u8", "b_ptr": "*fp8e4nv", "sb_ptr": "*u8",
                                         "c_ptr": "*fp32", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr",
                                         "FMT": "constexpr"},
     [("128x128x128_w4", {"BM": 128, "BN": 128, "BK": 128, "FMT": "e4m3"}, 4, 1)], None),
    ("dot_scaled_fp4_bf16", dot_scaled_fp4_bf16, {"a_ptr": "*u8", "sa_ptr": "*u8", "b_ptr": "*bf16", "c_ptr": "*fp32",
                                                  "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
     [("128x128x128_w4", {"BM": 128, "BN": 128, "BK": 128}, 4, 1)], None),
    ("w4a16_matmul", w4a16_matmul, {"a_ptr": "*fp16", "b_ptr": "*u8", "s_ptr": "*fp16", "c_ptr": "*fp16", "K": "i32",
                                    "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
     [("64x128x64_w4_s3", {"BM": 64, "BN": 128, "BK": 64}, 4, 3)], None),
    ("layer_norm", layer_norm, {"x_ptr": "*fp16", "y_ptr": "*fp16", "w_ptr": "*fp16", "b_ptr": "*fp16", "N": "i32",
                                "eps": "fp32", "BLOCK": "constexpr"}, [("b1024_w4", {"BLOCK": 1024}, 4, 1)], None),
    ("softmax_rows", softmax_rows, {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", "BR": "constexpr",
                                    "BLOCK": "constexpr"}, [("4x256_w4", {"BR": 4, "BLOCK": 256}, 4, 1)], None),
    ("rope", rope, {"x_ptr": "*fp16", "cos_ptr": "*fp16", "sin_ptr": "*fp16", "y_ptr": "*fp16", "BR": "constexpr",
                    "D": "constexpr"}, [("16x128_w4", {"BR": 16, "D": 128}, 4, 1)], None),
    ("grouped_gemm", grouped_gemm, {"a_ptrs": "*i64", "b_ptrs": "*i64", "c_ptrs": "*i64", "sizes": "*i32", "G": "i32",
                                    "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
     [("128x128x32_w4_s2", {"BM": 128, "BN": 128, "BK": 32}, 4, 2)], None),
    ("transpose2d", transpose2d, {"x_ptr": "*fp16", "y_ptr": "*fp16", "BM": "constexpr", "BN": "constexpr"},
     [("64x64_w4", {"BM": 64, "BN": 64}, 4, 1)], None),
    ("row_sum", row_sum, {"x_ptr": "*fp32", "y_ptr": "*fp32", "BR": "constexpr", "BC": "constexpr"},
     [("32x128_w4", {"BR": 32, "BC": 128}, 4, 1)], None),
    ("cumsum_rows", cumsum_rows, {"x_ptr": "*fp32", "y_ptr": "*fp32", "BR": "constexpr", "BC": "constexpr"},
     [("16x128_w4", {"BR": 16, "BC": 128}, 4, 1)], None),
    ("join_split", join_split, {"x_ptr": "*fp32", "y_ptr": "*fp32", "BM": "constexpr", "BN": "constexpr"},
     [("32x64_w4", {"BM": 32, "BN": 64}, 4, 1)], None),
    ("gather_rows", gather_rows, {"x_ptr": "*fp32", "idx_ptr": "*i32", "y_ptr": "*fp32", "BM": "constexpr",
                                  "BN": "constexpr"}, [("32x32_w4", {"BM": 32, "BN": 32}, 4, 1)], None),
    ("batched_dot", batched_dot, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "B": "constexpr",
                                  "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
     [("4x64x64x32_w4", {"B": 4, "BM": 64, "BN": 64, "BK": 32}, 4, 1)], None),
    ("add_vec", add_vec, {"x_ptr": "*fp32", "y_ptr": "*fp32", "z_ptr": "*fp32", "N": "i32", "BLOCK": "constexpr"},
     [("b1024_w4", {"BLOCK": 1024}, 4, 1)], None),
    ("histogram", histogram_kernel, {"x_ptr": "*i32", "y_ptr": "*i32", "BLOCK": "constexpr", "BINS": "constexpr"},
     [("1024x64_w4", {"BLOCK": 1024, "BINS": 64}, 4, 1)], None),
]
