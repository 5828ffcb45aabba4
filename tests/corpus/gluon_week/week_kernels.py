"""A Gluon author's first week: hand-layout kernels of the kinds the Gluon tutorials teach, each
with a ``BAD`` constexpr that plants one plausible author mistake. ``week_generate.py`` compiles
them with the Triton 3.9 wheel (no GPU needed) into ``<name>_<good|bad>_sm<arch>.{ttgir,ptx}``.

``WEEK``: ``(name, kernel, signature, extra constexprs, archs, mistake)``.
"""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy as cp
from triton.experimental.gluon.language.nvidia.blackwell import (TensorMemoryLayout, allocate_tensor_memory,
                                                                  tcgen05_commit, tcgen05_mma)
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma, warpgroup_mma,
                                                               warpgroup_mma_wait)


@gluon.jit
def copy2d(x_ptr, y_ptr, BAD: gl.constexpr):
    # a 64x64 copy; the mistake: 32 rows of lanes over a 64-column-major tile (lanes replicate)
    if BAD:
        blk: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
    else:
        blk: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    r = gl.arange(0, 64, layout=gl.SliceLayout(1, blk))
    c = gl.arange(0, 64, layout=gl.SliceLayout(0, blk))
    gl.store(y_ptr + r[:, None] * 64 + c[None, :], gl.load(x_ptr + r[:, None] * 64 + c[None, :]))


@gluon.jit
def copy_replicated(x_ptr, y_ptr, BAD: gl.constexpr):
    # a 16x16 tile; the mistake: a layout that covers 32x16, so each element lives in two lanes
    if BAD:
        blk: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])
    else:
        blk: gl.constexpr = gl.BlockedLayout([1, 2], [8, 4], [2, 2], [1, 0])
    r = gl.arange(0, 16, layout=gl.SliceLayout(1, blk))
    c = gl.arange(0, 16, layout=gl.SliceLayout(0, blk))
    gl.store(y_ptr + r[:, None] * 16 + c[None, :], gl.load(x_ptr + r[:, None] * 16 + c[None, :]))


@gluon.jit
def transpose_swizzled(x_ptr, y_ptr, BAD: gl.constexpr):
    # a 64x64 f16 transpose through shared memory, read 8 rows x 4 columns a warp (one 16-byte
    # swizzle group per row); the mistake: no swizzle (vec=1, max_phase=1), the 8 rows in one bank
    src: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    dst: gl.constexpr = gl.BlockedLayout([1, 1], [8, 4], [1, 4], [0, 1])
    if BAD:
        sl: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    else:
        sl: gl.constexpr = gl.SwizzledSharedLayout(8, 1, 8, [1, 0])
    r = gl.arange(0, 64, layout=gl.SliceLayout(1, src))
    c = gl.arange(0, 64, layout=gl.SliceLayout(0, src))
    s = gl.allocate_shared_memory(gl.float16, [64, 64], sl, gl.load(x_ptr + r[:, None] * 64 + c[None, :]))
    t = s.load(dst)
    rr = gl.arange(0, 64, layout=gl.SliceLayout(1, dst))
    cc = gl.arange(0, 64, layout=gl.SliceLayout(0, dst))
    gl.store(y_ptr + cc[None, :] * 64 + rr[:, None], t)


@gluon.jit
def transpose_wrong_vec(x_ptr, y_ptr, BAD: gl.constexpr):
    # the swizzle's vector (8 halves = 16 bytes) against the register vector; the mistake: vec=2
    src: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    dst: gl.constexpr = gl.BlockedLayout([1, 1], [8, 4], [1, 4], [0, 1])
    if BAD:
        sl: gl.constexpr = gl.SwizzledSharedLayout(2, 1, 8, [1, 0])
    else:
        sl: gl.constexpr = gl.SwizzledSharedLayout(8, 1, 8, [1, 0])
    r = gl.arange(0, 64, layout=gl.SliceLayout(1, src))
    c = gl.arange(0, 64, layout=gl.SliceLayout(0, src))
    s = gl.allocate_shared_memory(gl.float16, [64, 64], sl, gl.load(x_ptr + r[:, None] * 64 + c[None, :]))
    t = s.load(dst)
    rr = gl.arange(0, 64, layout=gl.SliceLayout(1, dst))
    cc = gl.arange(0, 64, layout=gl.SliceLayout(0, dst))
    gl.store(y_ptr + cc[None, :] * 64 + rr[:, None], t)


@gluon.jit
def transpose_padded(x_ptr, y_ptr, BAD: gl.constexpr):
    # a 64x64 f32 transpose with a padded layout: one word after each 64-element row; the mistake:
    # the padding every 32 words of 2 (even stride: a column read hits every other bank twice)
    src: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])
    dst: gl.constexpr = gl.BlockedLayout([1, 1], [32, 1], [1, 4], [0, 1])
    if BAD:
        sl: gl.constexpr = gl.PaddedSharedLayout.with_identity_for([[64, 2]], [64, 64], [1, 0])
    else:
        sl: gl.constexpr = gl.PaddedSharedLayout.with_identity_for([[64, 1]], [64, 64], [1, 0])
    r = gl.arange(0, 64, layout=gl.SliceLayout(1, src))
    c = gl.arange(0, 64, layout=gl.SliceLayout(0, src))
    s = gl.allocate_shared_memory(gl.float32, [64, 64], sl, gl.load(x_ptr + r[:, None] * 64 + c[None, :]))
    t = s.load(dst)
    rr = gl.arange(0, 64, layout=gl.SliceLayout(1, dst))
    cc = gl.arange(0, 64, layout=gl.SliceLayout(0, dst))
    gl.store(y_ptr + cc[None, :] * 64 + rr[:, None], t)


@gluon.jit
def convert_hand(x_ptr, y_ptr, BAD: gl.constexpr):
    # convert_layout between two hand blocked layouts; the mistake: a destination linear layout
    # with a zero lane basis (lanes 16..31 hold copies of lanes 0..15)
    src: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])
    if BAD:
        dst: gl.constexpr = gl.DistributedLinearLayout(
            reg_bases=[[1, 0], [2, 0], [16, 0], [0, 16], [0, 32], [32, 0]], lane_bases=[[0, 1], [0, 2], [0, 4], [0, 8], [0, 0]],
            warp_bases=[[4, 0], [8, 0]], block_bases=[], shape=[64, 64])
    else:
        dst: gl.constexpr = gl.DistributedLinearLayout(
            reg_bases=[[1, 0], [2, 0], [16, 0], [0, 32], [32, 0]], lane_bases=[[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]],
            warp_bases=[[4, 0], [8, 0]], block_bases=[], shape=[64, 64])
    r = gl.arange(0, 64, layout=gl.SliceLayout(1, src))
    c = gl.arange(0, 64, layout=gl.SliceLayout(0, src))
    x = gl.convert_layout(gl.load(x_ptr + r[:, None] * 64 + c[None, :]), dst)
    rr = gl.arange(0, 64, layout=gl.SliceLayout(1, dst))
    cc = gl.arange(0, 64, layout=gl.SliceLayout(0, dst))
    gl.store(y_ptr + rr[:, None] * 64 + cc[None, :], x)


@gluon.jit
def linear_reduce(x_ptr, y_ptr, BAD: gl.constexpr):
    # a row sum over a DistributedLinearLayout (rows over warps, columns over lanes and registers);
    # the mistake: a lane basis of zero (lane 16..31 replicate), the sum still right
    if BAD:
        ll: gl.constexpr = gl.DistributedLinearLayout(
            reg_bases=[[0, 1], [0, 2], [0, 16], [4, 0], [8, 0], [16, 0]], lane_bases=[[0, 4], [0, 8], [1, 0], [2, 0], [0, 0]],
            warp_bases=[[32, 0], [0, 32]], block_bases=[], shape=[64, 64])
    else:
        ll: gl.constexpr = gl.DistributedLinearLayout(
            reg_bases=[[0, 1], [0, 2], [4, 0], [8, 0], [16, 0]], lane_bases=[[0, 4], [0, 8], [0, 16], [1, 0], [2, 0]],
            warp_bases=[[32, 0], [0, 32]], block_bases=[], shape=[64, 64])
    r = gl.arange(0, 64, layout=gl.SliceLayout(1, ll))
    c = gl.arange(0, 64, layout=gl.SliceLayout(0, ll))
    s = gl.sum(gl.load(x_ptr + r[:, None] * 64 + c[None, :]), axis=1)
    gl.store(y_ptr + r, s)


@gluon.jit
def cp_async_tile(x_ptr, y_ptr, BAD: gl.constexpr):
    # cp.async of a 64x64 f16 tile into a swizzled buffer, read back transposed; the mistake: a
    # register vector of 4 halves (8-byte cp.async) for a swizzle of 8
    if BAD:
        src: gl.constexpr = gl.BlockedLayout([1, 4], [2, 16], [4, 1], [1, 0])
    else:
        src: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    dst: gl.constexpr = gl.BlockedLayout([1, 1], [8, 4], [1, 4], [0, 1])
    sl: gl.constexpr = gl.SwizzledSharedLayout(8, 1, 8, [1, 0])
    s = gl.allocate_shared_memory(gl.float16, [64, 64], sl)
    r = gl.arange(0, 64, layout=gl.SliceLayout(1, src))
    c = gl.arange(0, 64, layout=gl.SliceLayout(0, src))
    cp.async_load(s, x_ptr + r[:, None] * 64 + c[None, :])
    cp.commit_group()
    cp.wait_group(0)
    t = s.load(dst)
    rr = gl.arange(0, 64, layout=gl.SliceLayout(1, dst))
    cc = gl.arange(0, 64, layout=gl.SliceLayout(0, dst))
    gl.store(y_ptr + cc[None, :] * 64 + rr[:, None], t)


@gluon.jit
def tma_copy2d(x_ptr, y_ptr, BAD: gl.constexpr):
    # TMA load and store of a 64x64 f16 block; the mistake: the descriptor's layout and the
    # buffer's layout are different NVMMA swizzles (128 vs 64 bytes)
    sl: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
    if BAD:
        bl: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=64, element_bitwidth=16, rank=2)
    else:
        bl: gl.constexpr = sl
    xd = tma.make_tensor_descriptor(x_ptr, [256, 256], [256, 1], [64, 64], sl)
    yd = tma.make_tensor_descriptor(y_ptr, [256, 256], [256, 1], [64, 64], sl)
    s = gl.allocate_shared_memory(gl.float16, [64, 64], bl)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    mbarrier.expect(bar, 64 * 64 * 2)
    tma.async_load(xd, [0, 64], bar, s)
    mbarrier.wait(bar, 0)
    tma.async_store(yd, [64, 0], s)
    tma.store_wait(0)


@gluon.jit
def tma_copy3d(x_ptr, y_ptr, BAD: gl.constexpr):
    # a 3-D TMA block 2x32x64 f16 through a 128-byte NVMMA buffer and back via registers; the
    # mistake: the buffer allocated 2x64x32 (the block's last two dimensions swapped)
    sl: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=3)
    blk: gl.constexpr = gl.BlockedLayout([1, 1, 8], [1, 4, 8], [2, 2, 1], [2, 1, 0])
    xd = tma.make_tensor_descriptor(x_ptr, [4, 64, 64], [4096, 64, 1], [2, 32, 64], sl)
    if BAD:
        s = gl.allocate_shared_memory(gl.float16, [2, 64, 32], sl)
    else:
        s = gl.allocate_shared_memory(gl.float16, [2, 32, 64], sl)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    mbarrier.expect(bar, 2 * 32 * 64 * 2)
    tma.async_load(xd, [0, 0, 0], bar, s)
    mbarrier.wait(bar, 0)
    v = s.load(blk)
    a = gl.arange(0, 2, layout=gl.SliceLayout(1, gl.SliceLayout(2, blk)))
    b = gl.arange(0, 32, layout=gl.SliceLayout(0, gl.SliceLayout(2, blk)))
    c = gl.arange(0, 64, layout=gl.SliceLayout(0, gl.SliceLayout(1, blk)))
    gl.store(y_ptr + a[:, None, None] * 2048 + b[None, :, None] * 64 + c[None, None, :], v)


@gluon.jit
def tma_copy5d(x_ptr, y_ptr, BAD: gl.constexpr):
    # a 5-D TMA block 1x1x2x16x32 f32 (128-byte rows) loaded and stored back; the mistake: the
    # swizzle width of 64 bytes for a 128-byte inner row (legal, only slower)
    if BAD:
        sl: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=64, element_bitwidth=32, rank=5)
    else:
        sl: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=32, rank=5)
    xd = tma.make_tensor_descriptor(x_ptr, [2, 2, 4, 64, 32], [16384, 8192, 2048, 32, 1], [1, 1, 2, 16, 32], sl)
    yd = tma.make_tensor_descriptor(y_ptr, [2, 2, 4, 64, 32], [16384, 8192, 2048, 32, 1], [1, 1, 2, 16, 32], sl)
    s = gl.allocate_shared_memory(gl.float32, [1, 1, 2, 16, 32], sl)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    mbarrier.expect(bar, 2 * 16 * 32 * 4)
    tma.async_load(xd, [1, 0, 2, 16, 0], bar, s)
    mbarrier.wait(bar, 0)
    tma.async_store(yd, [0, 1, 0, 32, 0], s)
    tma.store_wait(0)


@gluon.jit
def wgmma_gemm(a_ptr, b_ptr, c_ptr, K, BAD: gl.constexpr):
    # a 64x128x64-blocked wgmma GEMM with TMA operands; the mistake: B's buffer uses a 64-byte
    # swizzle while its 64-wide f16 rows (128 bytes) want 128 (legal: the descriptor follows it)
    al: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
    if BAD:
        bl: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=64, element_bitwidth=16, rank=2)
    else:
        bl: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
    mma: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 64, 16])
    ad = tma.make_tensor_descriptor(a_ptr, [64, K], [K, 1], [64, 64], al)
    bd = tma.make_tensor_descriptor(b_ptr, [K, 64], [64, 1], [64, 64], bl)
    a_s = gl.allocate_shared_memory(gl.float16, [64, 64], al)
    b_s = gl.allocate_shared_memory(gl.float16, [64, 64], bl)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    acc = gl.zeros([64, 64], gl.float32, mma)
    phase = 0
    for k in range(0, K, 64):
        mbarrier.expect(bar, 2 * 64 * 64 * 2)
        tma.async_load(ad, [0, k], bar, a_s)
        tma.async_load(bd, [k, 0], bar, b_s)
        mbarrier.wait(bar, phase)
        phase ^= 1
        acc = warpgroup_mma(a_s, b_s, acc)
        acc = warpgroup_mma_wait(0, deps=[acc])
    om = gl.arange(0, 64, layout=gl.SliceLayout(1, mma))
    on = gl.arange(0, 64, layout=gl.SliceLayout(0, mma))
    gl.store(c_ptr + om[:, None] * 64 + on[None, :], acc)


@gluon.jit
def wgmma_reg_a(a_ptr, b_ptr, c_ptr, BAD: gl.constexpr):
    # wgmma with A in registers (DotOperandLayout of the accumulator, k_width 2 for f16), B stored
    # to a 128-byte NVMMA buffer by a blocked layout whose 16 lanes cover a 128-byte row; the
    # mistake: 4 lanes a row (64 bytes), so two rows of a quarter warp share 16 banks
    mma: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 64, 16])
    opa: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=mma, k_width=2)
    if BAD:
        blk: gl.constexpr = gl.BlockedLayout([1, 8], [8, 4], [4, 1], [1, 0])
    else:
        blk: gl.constexpr = gl.BlockedLayout([1, 8], [2, 16], [4, 1], [1, 0])
    bl: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
    r = gl.arange(0, 64, layout=gl.SliceLayout(1, blk))
    c = gl.arange(0, 64, layout=gl.SliceLayout(0, blk))
    a = gl.convert_layout(gl.load(a_ptr + r[:, None] * 64 + c[None, :]), opa)
    b_s = gl.allocate_shared_memory(gl.float16, [64, 64], bl, gl.load(b_ptr + r[:, None] * 64 + c[None, :]))
    fence_async_shared()
    acc = warpgroup_mma(a, b_s, gl.zeros([64, 64], gl.float32, mma))
    acc = warpgroup_mma_wait(0, deps=[acc])
    om = gl.arange(0, 64, layout=gl.SliceLayout(1, mma))
    on = gl.arange(0, 64, layout=gl.SliceLayout(0, mma))
    gl.store(c_ptr + om[:, None] * 64 + on[None, :], acc)


@gluon.jit
def tcgen05_gemm(a_ptr, b_ptr, c_ptr, BAD: gl.constexpr):
    # a 128x64x64 tcgen05 GEMM, accumulator in TMEM, read back in a 32x32b-style layout; the
    # mistake: B's smem written through a 32-byte swizzle by a register layout of 8-half vectors
    blk: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    out_l: gl.constexpr = gl.BlockedLayout([1, 64], [32, 1], [4, 1], [0, 1])
    al: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
    if BAD:
        bl: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=32, element_bitwidth=16, rank=2)
    else:
        bl: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
    r = gl.arange(0, 128, layout=gl.SliceLayout(1, blk))
    r64 = gl.arange(0, 64, layout=gl.SliceLayout(1, blk))
    c = gl.arange(0, 64, layout=gl.SliceLayout(0, blk))
    a_s = gl.allocate_shared_memory(gl.float16, [128, 64], al, gl.load(a_ptr + r[:, None] * 64 + c[None, :]))
    b_s = gl.allocate_shared_memory(gl.float16, [64, 64], bl, gl.load(b_ptr + r64[:, None] * 64 + c[None, :]))
    fence_async_shared()
    acc = allocate_tensor_memory(gl.float32, [128, 64], TensorMemoryLayout(block=(128, 64), col_stride=1))
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    tcgen05_mma(a_s, b_s, acc, use_acc=False)
    tcgen05_commit(bar)
    mbarrier.wait(bar, 0)
    om = gl.arange(0, 128, layout=gl.SliceLayout(1, out_l))
    on = gl.arange(0, 64, layout=gl.SliceLayout(0, out_l))
    gl.store(c_ptr + om[:, None] * 64 + on[None, :], acc.load(out_l))


@gluon.jit
def _ws_default(s, ready, y_ptr):
    rd: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    mbarrier.wait(ready, 0)
    t = s.load(rd)
    r = gl.arange(0, 64, layout=gl.SliceLayout(1, rd))
    c = gl.arange(0, 64, layout=gl.SliceLayout(0, rd))
    gl.store(y_ptr + r[:, None] * 64 + c[None, :], t)


@gluon.jit
def _ws_producer(s, ready, x_ptr, BAD: gl.constexpr):
    if BAD:
        wl: gl.constexpr = gl.BlockedLayout([8, 1], [8, 4], [1, 1], [0, 1])
    else:
        wl: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [1, 1], [1, 0])
    r = gl.arange(0, 64, layout=gl.SliceLayout(1, wl))
    c = gl.arange(0, 64, layout=gl.SliceLayout(0, wl))
    s.store(gl.load(x_ptr + r[:, None] * 64 + c[None, :]))
    mbarrier.arrive(ready, count=1)


@gluon.jit
def ws_producer_consumer(x_ptr, y_ptr, BAD: gl.constexpr):
    # a 1-warp producer writes a 64x64 f16 tile to a swizzled buffer, the default partition reads
    # it; the mistake: the producer writes in column-major vectors against the row swizzle
    sl: gl.constexpr = gl.SwizzledSharedLayout(8, 1, 8, [1, 0])
    s = gl.allocate_shared_memory(gl.float16, [64, 64], sl)
    ready = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(ready, count=1)
    gl.warp_specialize([(_ws_default, (s, ready, y_ptr)), (_ws_producer, (s, ready, x_ptr, BAD))], [1], [48])


S2 = {"x_ptr": "*fp16", "y_ptr": "*fp16"}
S2F = {"x_ptr": "*fp32", "y_ptr": "*fp32"}
G3 = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32"}
WEEK = [
    ("copy2d", copy2d, S2, (80, 90), "lanes along a 64-wide row with width-1 vectors: uncoalesced, same result"),
    ("copy_replicated", copy_replicated, S2, (80,), "layout covers 32x16 for a 16x16 tile: replicated lanes, same result"),
    ("transpose_swizzled", transpose_swizzled, S2, (80, 90), "no swizzle: the transposed read (8 rows a warp) is 8-way conflicted"),
    ("transpose_wrong_vec", transpose_wrong_vec, S2, (90,), "swizzle vec 2 against 8-half register vectors: split stores, 2-way conflicted reads"),
    ("transpose_padded", transpose_padded, S2F, (80, 90), "padding 2 words per 64-word row: 2-way conflicted column read"),
    ("convert_hand", convert_hand, S2, (90,), "destination with a zero lane basis (replicated lanes)"),
    ("linear_reduce", linear_reduce, S2F, (90,), "linear layout with a zero lane basis: the sum is still right"),
    ("cp_async_tile", cp_async_tile, S2, (80,), "4-half cp.async against a vec-8 swizzle"),
    ("tma_copy2d", tma_copy2d, S2, (90,), "descriptor layout 128B swizzle, buffer 64B swizzle"),
    ("tma_copy3d", tma_copy3d, S2, (90,), "buffer shape 2x64x32 for a 2x32x64 block"),
    ("tma_copy5d", tma_copy5d, S2F, (90,), "64B swizzle for 128-byte rows: legal, slower"),
    ("wgmma_gemm", wgmma_gemm, {**G3, "K": "i32"}, (90,), "B 64B swizzle for 128-byte rows: legal, slower"),
    ("wgmma_reg_a", wgmma_reg_a, G3, (90,), "B stored by 4 lanes a 128-byte swizzled row: 2-way conflicted st.shared.v4"),
    ("tcgen05_gemm", tcgen05_gemm, G3, (100,), "B through a 32-byte swizzle (legal, descriptor follows)"),
    ("ws_producer_consumer", ws_producer_consumer, S2, (90, 100), "producer writes column vectors into a row swizzle"),
]


@gluon.jit
def shared_linear_transpose(x_ptr, y_ptr, BAD: gl.constexpr):
    # a hand SharedLinearLayout for a 32x32 f32 tile: column bases XOR-ed with the row (a swizzle
    # written as bases), read by columns; the mistake: plain row-major bases (column read 32-way)
    src: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])
    dst: gl.constexpr = gl.BlockedLayout([1, 1], [32, 1], [1, 4], [0, 1])
    if BAD:
        sl: gl.constexpr = gl.SharedLinearLayout([[0, 1], [0, 2], [0, 4], [0, 8], [0, 16],
                                                   [1, 0], [2, 0], [4, 0], [8, 0], [16, 0]])
    else:
        sl: gl.constexpr = gl.SharedLinearLayout([[0, 1], [0, 2], [0, 4], [0, 8], [0, 16],
                                                   [1, 1], [2, 2], [4, 4], [8, 8], [16, 16]])
    r = gl.arange(0, 32, layout=gl.SliceLayout(1, src))
    c = gl.arange(0, 32, layout=gl.SliceLayout(0, src))
    s = gl.allocate_shared_memory(gl.float32, [32, 32], sl, gl.load(x_ptr + r[:, None] * 32 + c[None, :]))
    t = s.load(dst)
    rr = gl.arange(0, 32, layout=gl.SliceLayout(1, dst))
    cc = gl.arange(0, 32, layout=gl.SliceLayout(0, dst))
    gl.store(y_ptr + cc[None, :] * 32 + rr[:, None], t)


@gluon.jit
def wgmma_mn_major(a_ptr, b_ptr, c_ptr, BAD: gl.constexpr):
    # wgmma with an MN-major B (NVMMASharedLayout transposed=True over an N x K buffer); the
    # mistake: B's buffer 64-byte swizzled for 128-byte rows (legal, the descriptor follows)
    blk: gl.constexpr = gl.BlockedLayout([1, 8], [2, 16], [4, 1], [1, 0])
    al: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
    if BAD:
        bl: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=64, element_bitwidth=16, rank=2, transposed=True)
    else:
        bl: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2, transposed=True)
    mma: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 64, 16])
    r = gl.arange(0, 64, layout=gl.SliceLayout(1, blk))
    c = gl.arange(0, 64, layout=gl.SliceLayout(0, blk))
    a_s = gl.allocate_shared_memory(gl.float16, [64, 64], al, gl.load(a_ptr + r[:, None] * 64 + c[None, :]))
    b_s = gl.allocate_shared_memory(gl.float16, [64, 64], bl, gl.load(b_ptr + r[:, None] * 64 + c[None, :]))
    fence_async_shared()
    acc = warpgroup_mma(a_s, b_s.permute((1, 0)), gl.zeros([64, 64], gl.float32, mma))
    acc = warpgroup_mma_wait(0, deps=[acc])
    om = gl.arange(0, 64, layout=gl.SliceLayout(1, mma))
    on = gl.arange(0, 64, layout=gl.SliceLayout(0, mma))
    gl.store(c_ptr + om[:, None] * 64 + on[None, :], acc)


@gluon.jit
def tcgen05_packed(a_ptr, b_ptr, c_ptr, BAD: gl.constexpr):
    # tcgen05 into an f32 TMEM accumulator of block 128x32 (two blocks for N=64), read back with the
    # TMEM layout's own register layout; the mistake: read back in a hand blocked layout (one
    # row a thread: the same as 32x32b, so still right)
    blk: gl.constexpr = gl.BlockedLayout([1, 8], [2, 16], [4, 1], [1, 0])
    sl: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
    tl_: gl.constexpr = TensorMemoryLayout(block=(128, 32), col_stride=1)
    r = gl.arange(0, 128, layout=gl.SliceLayout(1, blk))
    r64 = gl.arange(0, 64, layout=gl.SliceLayout(1, blk))
    c = gl.arange(0, 64, layout=gl.SliceLayout(0, blk))
    a_s = gl.allocate_shared_memory(gl.float16, [128, 64], sl, gl.load(a_ptr + r[:, None] * 64 + c[None, :]))
    b_s = gl.allocate_shared_memory(gl.float16, [64, 64], sl, gl.load(b_ptr + r64[:, None] * 64 + c[None, :]))
    fence_async_shared()
    acc = allocate_tensor_memory(gl.float32, [128, 64], tl_)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    tcgen05_mma(a_s, b_s, acc, use_acc=False)
    tcgen05_commit(bar)
    mbarrier.wait(bar, 0)
    if BAD:
        out_l: gl.constexpr = gl.BlockedLayout([1, 64], [32, 1], [4, 1], [0, 1])
    else:
        out_l: gl.constexpr = acc.get_reg_layout()
    om = gl.arange(0, 128, layout=gl.SliceLayout(1, out_l))
    on = gl.arange(0, 64, layout=gl.SliceLayout(0, out_l))
    gl.store(c_ptr + om[:, None] * 64 + on[None, :], acc.load(out_l))


@gluon.jit
def colmajor_buffer(x_ptr, y_ptr, BAD: gl.constexpr):
    # a column-major swizzled buffer (order [0, 1]) written by column vectors and read by rows; the
    # mistake: the buffer order [1, 0] against column-vector writes
    src: gl.constexpr = gl.BlockedLayout([8, 1], [8, 4], [1, 4], [0, 1])
    dst: gl.constexpr = gl.BlockedLayout([1, 1], [4, 8], [4, 1], [1, 0])
    if BAD:
        sl: gl.constexpr = gl.SwizzledSharedLayout(8, 1, 8, [1, 0])
    else:
        sl: gl.constexpr = gl.SwizzledSharedLayout(8, 1, 8, [0, 1])
    r = gl.arange(0, 64, layout=gl.SliceLayout(1, src))
    c = gl.arange(0, 64, layout=gl.SliceLayout(0, src))
    s = gl.allocate_shared_memory(gl.float16, [64, 64], sl, gl.load(x_ptr + r[:, None] + c[None, :] * 64))
    t = s.load(dst)
    rr = gl.arange(0, 64, layout=gl.SliceLayout(1, dst))
    cc = gl.arange(0, 64, layout=gl.SliceLayout(0, dst))
    gl.store(y_ptr + rr[:, None] * 64 + cc[None, :], t)


WEEK += [
    ("shared_linear_transpose", shared_linear_transpose, S2F, (90,), "row-major SharedLinearLayout: column read 32-way"),
    ("wgmma_mn_major", wgmma_mn_major, G3, (90,), "MN-major B 64B swizzle for 128-byte rows: legal"),
    ("tcgen05_packed", tcgen05_packed, G3, (100,), "hand blocked read-back of TMEM (equal to 32x32b): same result"),
    ("colmajor_buffer", colmajor_buffer, S2, (80, 90), "row-major buffer written by column vectors: split, conflicted stores"),
]


@gluon.jit
def wgmma_instr_n(a_ptr, b_ptr, c_ptr, BAD: gl.constexpr):
    # a 64x64x64 wgmma whose accumulator layout fixes the instruction N; the mistake: instr_shape
    # [16, 32, 16] (two m64n32 wgmmas per K-block instead of one m64n64: legal, same result)
    blk: gl.constexpr = gl.BlockedLayout([1, 8], [2, 16], [4, 1], [1, 0])
    sl: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
    if BAD:
        mma: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 32, 16])
    else:
        mma: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 64, 16])
    r = gl.arange(0, 64, layout=gl.SliceLayout(1, blk))
    c = gl.arange(0, 64, layout=gl.SliceLayout(0, blk))
    a_s = gl.allocate_shared_memory(gl.float16, [64, 64], sl, gl.load(a_ptr + r[:, None] * 64 + c[None, :]))
    b_s = gl.allocate_shared_memory(gl.float16, [64, 64], sl, gl.load(b_ptr + r[:, None] * 64 + c[None, :]))
    fence_async_shared()
    acc = warpgroup_mma(a_s, b_s, gl.zeros([64, 64], gl.float32, mma))
    acc = warpgroup_mma_wait(0, deps=[acc])
    om = gl.arange(0, 64, layout=gl.SliceLayout(1, mma))
    on = gl.arange(0, 64, layout=gl.SliceLayout(0, mma))
    gl.store(c_ptr + om[:, None] * 64 + on[None, :], acc)


@gluon.jit
def tcgen05_block_m(a_ptr, b_ptr, c_ptr, BAD: gl.constexpr):
    # a 128x64x64 tcgen05 GEMM; the mistake: the accumulator's TMEM block 64 rows for M = 128
    blk: gl.constexpr = gl.BlockedLayout([1, 8], [2, 16], [4, 1], [1, 0])
    sl: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
    if BAD:
        tl_: gl.constexpr = TensorMemoryLayout(block=(64, 64), col_stride=1)
    else:
        tl_: gl.constexpr = TensorMemoryLayout(block=(128, 64), col_stride=1)
    r = gl.arange(0, 128, layout=gl.SliceLayout(1, blk))
    r64 = gl.arange(0, 64, layout=gl.SliceLayout(1, blk))
    c = gl.arange(0, 64, layout=gl.SliceLayout(0, blk))
    a_s = gl.allocate_shared_memory(gl.float16, [128, 64], sl, gl.load(a_ptr + r[:, None] * 64 + c[None, :]))
    b_s = gl.allocate_shared_memory(gl.float16, [64, 64], sl, gl.load(b_ptr + r64[:, None] * 64 + c[None, :]))
    fence_async_shared()
    acc = allocate_tensor_memory(gl.float32, [128, 64], tl_)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    tcgen05_mma(a_s, b_s, acc, use_acc=False)
    tcgen05_commit(bar)
    mbarrier.wait(bar, 0)
    out_l: gl.constexpr = acc.get_reg_layout()
    om = gl.arange(0, 128, layout=gl.SliceLayout(1, out_l))
    on = gl.arange(0, 64, layout=gl.SliceLayout(0, out_l))
    gl.store(c_ptr + om[:, None] * 64 + on[None, :], acc.load(out_l))


WEEK += [
    ("wgmma_instr_n", wgmma_instr_n, G3, (90,), "instr_shape N 32 for N = 64: two wgmmas a K-block, same result"),
    ("tcgen05_block_m", tcgen05_block_m, G3, (100,), "TMEM block 64 rows for M = 128"),
]
