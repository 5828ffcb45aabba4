"""Warp-specialized Gluon kernels of the corpus (``gl.warp_specialize``: a default partition and
worker partitions of 1, 2 and 4 warps, each doing its own shared-memory work), compiled by
``ws_generate.py``. Each kernel is correct: every worker writes and reads only its own buffers,
and the TMA ring hands its stages over with mbarriers.

``WS_KERNELS``: ``(name, kernel, signature, configs, targets)`` as ``kernels.KERNELS``, a config
being ``(tag, constexprs, num_warps, num_stages)``.
"""
import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma, warpgroup_mma


@gluon.jit
def _roundtrip(x_ptr, y_ptr, smem, M: gl.constexpr, N: gl.constexpr, NW: gl.constexpr):
    # a worker of NW warps: a blocked tile to shared memory and back in a transposed-order layout
    blk: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [NW, 1], [1, 0])
    rd: gl.constexpr = gl.BlockedLayout([8, 1], [8, 4], [1, NW], [0, 1])
    om = gl.arange(0, M, layout=gl.SliceLayout(1, blk))
    on = gl.arange(0, N, layout=gl.SliceLayout(0, blk))
    x = gl.load(x_ptr + om[:, None] * N + on[None, :])
    smem.store(x)
    y = smem.load(rd)
    ym = gl.arange(0, M, layout=gl.SliceLayout(1, rd))
    yn = gl.arange(0, N, layout=gl.SliceLayout(0, rd))
    gl.store(y_ptr + ym[:, None] * N + yn[None, :], y)


@gluon.jit
def _colsum(x_ptr, out_ptr, M: gl.constexpr, N: gl.constexpr, NW: gl.constexpr):
    # a cross-warp reduction (rows over the warps: the partial sums meet in scratch memory)
    blk: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [NW, 1], [1, 0])
    om = gl.arange(0, M, layout=gl.SliceLayout(1, blk))
    on = gl.arange(0, N, layout=gl.SliceLayout(0, blk))
    x = gl.load(x_ptr + om[:, None] * N + on[None, :])
    gl.store(out_ptr + on, gl.sum(x, axis=0))


@gluon.jit
def _rowmax(x_ptr, out_ptr, M: gl.constexpr, N: gl.constexpr, NW: gl.constexpr):
    # a reduction along the columns spread over the warps (max), then the result converted
    blk: gl.constexpr = gl.BlockedLayout([1, 2], [4, 8], [1, NW], [1, 0])
    out_l: gl.constexpr = gl.BlockedLayout([1], [32], [NW], [0])
    om = gl.arange(0, M, layout=gl.SliceLayout(1, blk))
    on = gl.arange(0, N, layout=gl.SliceLayout(0, blk))
    x = gl.load(x_ptr + om[:, None] * N + on[None, :])
    m = gl.convert_layout(gl.max(x, axis=1), out_l)
    gl.store(out_ptr + gl.arange(0, M, layout=out_l), m)


@gluon.jit
def _convert(x_ptr, y_ptr, M: gl.constexpr, N: gl.constexpr, NW: gl.constexpr):
    # convert_layout between two blocked layouts of the worker's warps (through scratch memory)
    src: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [NW, 1], [1, 0])
    dst: gl.constexpr = gl.BlockedLayout([4, 1], [8, 4], [1, NW], [0, 1])
    om = gl.arange(0, M, layout=gl.SliceLayout(1, src))
    on = gl.arange(0, N, layout=gl.SliceLayout(0, src))
    x = gl.load(x_ptr + om[:, None] * N + on[None, :])
    y = gl.convert_layout(x, dst)
    ym = gl.arange(0, M, layout=gl.SliceLayout(1, dst))
    yn = gl.arange(0, N, layout=gl.SliceLayout(0, dst))
    gl.store(y_ptr + ym[:, None] * N + yn[None, :], y)


@gluon.jit
def ws_roundtrip(x_ptr, y_ptr, z_ptr, w_ptr, M: gl.constexpr, N: gl.constexpr,
                 W0: gl.constexpr, W1: gl.constexpr):
    # default: a column sum over its 4 warps; two workers (W0, W1 warps): shared-memory round trips
    sl: gl.constexpr = gl.SwizzledSharedLayout(8, 1, 8, [1, 0])
    a = gl.allocate_shared_memory(gl.float16, [M, N], sl)
    b = gl.allocate_shared_memory(gl.float16, [M, N], sl)
    gl.warp_specialize([(_colsum, (x_ptr, w_ptr, M, N, gl.num_warps())),
                        (_roundtrip, (x_ptr, y_ptr, a, M, N, W0)),
                        (_roundtrip, (x_ptr, z_ptr, b, M, N, W1))], [W0, W1], [48, 48])


@gluon.jit
def ws_reduce_convert(x_ptr, y_ptr, z_ptr, w_ptr, M: gl.constexpr, N: gl.constexpr,
                      W0: gl.constexpr, W1: gl.constexpr, W2: gl.constexpr):
    # three workers: a row max (W0 warps), a layout conversion (W1), a column sum (W2)
    gl.warp_specialize([(_convert, (x_ptr, w_ptr, M, N, gl.num_warps())),
                        (_rowmax, (x_ptr, y_ptr, M, N, W0)),
                        (_convert, (x_ptr, z_ptr, M, N, W1)),
                        (_colsum, (x_ptr, y_ptr + M, M, N, W2))], [W0, W1, W2], [64, 64, 64])


@gluon.jit
def _tma_loader(a_desc, b_desc, a_s, b_s, ready, empty, K, BK: gl.constexpr, STAGES: gl.constexpr):
    # the load worker: a STAGES-deep TMA ring, each stage handed over by its `ready` barrier
    for i in range(gl.cdiv(K, BK)):
        s = i % STAGES
        mbarrier.wait(empty.index(s), ((i // STAGES) & 1) ^ 1)
        mbarrier.expect(ready.index(s), a_desc.block_type.nbytes + b_desc.block_type.nbytes)
        tma.async_load(a_desc, [0, i * BK], ready.index(s), a_s.index(s))
        tma.async_load(b_desc, [i * BK, 0], ready.index(s), b_s.index(s))


@gluon.jit
def _mma_default(a_s, b_s, ready, empty, c_ptr, K, BM: gl.constexpr, BN: gl.constexpr, BK: gl.constexpr,
                 STAGES: gl.constexpr):
    # the default partition: wgmma on each stage once it is ready, then the stage released
    acc_l: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BN, 16])
    acc = gl.zeros([BM, BN], gl.float32, acc_l)
    for i in range(gl.cdiv(K, BK)):
        s = i % STAGES
        mbarrier.wait(ready.index(s), (i // STAGES) & 1)
        acc = warpgroup_mma(a_s.index(s), b_s.index(s), acc)
        mbarrier.arrive(empty.index(s), count=1)
    om = gl.arange(0, BM, layout=gl.SliceLayout(1, acc_l))
    on = gl.arange(0, BN, layout=gl.SliceLayout(0, acc_l))
    gl.store(c_ptr + om[:, None] * BN + on[None, :], acc.to(gl.float16))


@gluon.jit
def ws_tma_wgmma(a_ptr, b_ptr, c_ptr, x_ptr, y_ptr, K, BM: gl.constexpr, BN: gl.constexpr,
                 BK: gl.constexpr, STAGES: gl.constexpr, W1: gl.constexpr):
    # a 1-warp TMA worker feeding the default partition's wgmma, and a worker of W1 warps doing a
    # shared-memory round trip of its own
    a_l: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BK], gl.float16)
    b_l: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BK, BN], gl.float16)
    a_desc = tma.make_tensor_descriptor(a_ptr, [BM, K], [K, 1], [BM, BK], a_l)
    b_desc = tma.make_tensor_descriptor(b_ptr, [K, BN], [BN, 1], [BK, BN], b_l)
    a_s = gl.allocate_shared_memory(gl.float16, [STAGES, BM, BK], a_l)
    b_s = gl.allocate_shared_memory(gl.float16, [STAGES, BK, BN], b_l)
    t = gl.allocate_shared_memory(gl.float16, [64, 64], gl.SwizzledSharedLayout(8, 1, 8, [1, 0]))
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for s in gl.static_range(STAGES):
        mbarrier.init(ready.index(s), count=1)
        mbarrier.init(empty.index(s), count=1)
    gl.warp_specialize([(_mma_default, (a_s, b_s, ready, empty, c_ptr, K, BM, BN, BK, STAGES)),
                        (_tma_loader, (a_desc, b_desc, a_s, b_s, ready, empty, K, BK, STAGES)),
                        (_roundtrip, (x_ptr, y_ptr, t, 64, 64, W1))], [1, W1], [40, 64])


@triton.jit
def ws_attention_fwd(q_ptr, k_ptr, v_ptr, o_ptr, L, scale, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    # Triton's automatic warp specialization of an attention loop (tl.range(warp_specialize=True))
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[L, D], strides=[D, 1], block_shape=[BM, D])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[L, D], strides=[D, 1], block_shape=[BN, D])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[L, D], strides=[D, 1], block_shape=[BN, D])
    om = tl.program_id(0) * BM
    q = q_desc.load([om, 0])
    m_i = tl.full((BM,), float("-inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for start in tl.range(0, L, BN, warp_specialize=True):
        k = k_desc.load([start, 0])
        s = tl.dot(q, k.T) * scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = v_desc.load([start, 0])
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    rm = om + tl.arange(0, BM)
    tl.store(o_ptr + rm[:, None] * D + tl.arange(0, D)[None, :], (acc / l_i[:, None]).to(tl.float16))


@triton.jit
def ws_persistent_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # a persistent tile loop whose K loop is warp-specialized (flattened into the tile loop)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    tiles_n = tl.cdiv(N, BN)
    tiles = tl.cdiv(M, BM) * tiles_n
    for t in tl.range(tl.program_id(0), tiles, tl.num_programs(0), warp_specialize=True, flatten=True):
        om = (t // tiles_n) * BM
        on = (t % tiles_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            acc = tl.dot(a_desc.load([om, k]), b_desc.load([on, k]).T, acc)
        c_desc.store([om, on], acc.to(tl.float16))


_P4 = {"x_ptr": "*fp16", "y_ptr": "*fp16", "z_ptr": "*fp16", "w_ptr": "*fp16"}
_C = {"M": "constexpr", "N": "constexpr"}

WS_KERNELS = [
    ("ws_roundtrip", ws_roundtrip, {**_P4, **_C, "W0": "constexpr", "W1": "constexpr"},
     [("64x64_w4_2_1", {"M": 64, "N": 64, "W0": 2, "W1": 1}, 4, 1),
      ("64x64_w4_4_2", {"M": 64, "N": 64, "W0": 4, "W1": 2}, 4, 1)], ("cuda90", "cuda100")),
    ("ws_reduce_convert", ws_reduce_convert, {**_P4, **_C, "W0": "constexpr", "W1": "constexpr", "W2": "constexpr"},
     [("32x64_w4_2_1_4", {"M": 32, "N": 64, "W0": 2, "W1": 1, "W2": 4}, 4, 1),
      ("64x32_w4_4_2_1", {"M": 64, "N": 32, "W0": 4, "W1": 2, "W2": 1}, 4, 1)], ("cuda90", "cuda100")),
    ("ws_tma_wgmma", ws_tma_wgmma, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "x_ptr": "*fp16",
                                     "y_ptr": "*fp16", "K": "i32", "BM": "constexpr", "BN": "constexpr",
                                     "BK": "constexpr", "STAGES": "constexpr", "W1": "constexpr"},
     [("64x64x64_s2_w4_1_2", {"BM": 64, "BN": 64, "BK": 64, "STAGES": 2, "W1": 2}, 4, 1)], ("cuda90",)),
    ("ws_attention_fwd", ws_attention_fwd, {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16",
                                             "L": "i32", "scale": "fp32", "D": "constexpr", "BM": "constexpr",
                                             "BN": "constexpr"},
     [("d64_128x64_w4_s2", {"D": 64, "BM": 128, "BN": 64}, 4, 2)], ("cuda90", "cuda100")),
    ("ws_persistent_matmul", ws_persistent_matmul, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16",
                                                     "M": "i32", "N": "i32", "K": "i32", "BM": "constexpr",
                                                     "BN": "constexpr", "BK": "constexpr"},
     [("128x128x64_w4_s3", {"BM": 128, "BN": 128, "BK": 64}, 4, 3)], ("cuda100",)),
]
