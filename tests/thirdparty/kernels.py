"""The catalogue of the third-party corpus: which kernel of which public package, with which
argument types and launch configurations. Plain data (no triton import); ``generate.py`` reads the
parameter list from the package's source and builds the full signature: pointers as listed in
``ptrs`` (``name:dtype``, else ``dt``), ``floats`` as fp32, every other runtime argument i32,
constexprs from the configuration, then ``consts``, then the source's default.

Configurations follow the packages' own launch code and autotune tables (block sizes, warps,
stages); a few extra ones (``BLOCK_M`` 64 with 8 warps) give GEMMs whose ``warpsPerCTA`` splits N.
"""
from __future__ import annotations

PACKAGES = {"sglang": ("sglang", "0.5.23"), "fla": ("fla-core", "0.6.0"), "unsloth": ("unsloth", "2026.10.9"),
            "torchao": ("torchao", "0.18.0"), "gemlite": ("gemlite", "0.6.0.post2")}

SG = "sglang/kernels/ops/"
ENTRIES: list[dict] = []


def K(package: str, source: str, kernel: str, cfgs: list, **kw) -> None:
    """Add one catalogue entry (``kw``: ptrs, dt, floats, consts, skip)."""
    ENTRIES.append({"package": package, "source": source, "kernel": kernel, "cfgs": cfgs, **kw})


def _mm(bm: int, bn: int, bk: int, w: int, s: int, **extra) -> tuple:
    return (f"{bm}x{bn}x{bk}_w{w}_s{s}", {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, **extra}, w, s)


def _mm2(bm: int, bn: int, bk: int, w: int, s: int, **extra) -> tuple:
    return (f"{bm}x{bn}x{bk}_w{w}_s{s}", {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, **extra}, w, s)


# ---- attention -------------------------------------------------------------------------------
def _pa(bm: int, bn: int, d: int, w: int, s: int, causal: bool = True) -> tuple:
    tag = f"d{d}_{bm}x{bn}_w{w}_s{s}" + ("_causal" if causal else "")
    return (tag, {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_DMODEL": d, "Lk": d, "IS_CAUSAL": causal}, w, s)


K("sglang", SG + "attention/prefill_attention.py", "_fwd_kernel",
  [_pa(128, 128, 128, 8, 1), _pa(128, 128, 128, 8, 2), _pa(64, 64, 128, 4, 1), _pa(128, 64, 64, 4, 2),
   _pa(64, 64, 64, 8, 2), _pa(128, 128, 128, 8, 2, False), _pa(128, 64, 128, 8, 3)],
  ptrs="Q K V Out B_Start_Loc:i32 B_Seqlen:i32", dt="bf16", floats="sm_scale", consts={"kv_group_num": 1})


def _dp(bm: int, bn: int, d: int, w: int, s: int, fp8: bool = False, causal: bool = True, dv: int = 0) -> tuple:
    dv = dv or d
    tag = f"d{d}v{dv}_{bm}x{bn}_w{w}_s{s}" + ("_fp8" if fp8 else "") + ("_causal" if causal else "")
    return (tag, {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_DMODEL": d, "Lq": d, "Lv": dv, "BLOCK_DV": dv,
                  "IS_CAUSAL": causal, "USE_FP8": fp8}, w, s)


K("sglang", SG + "attention/extend_attention.py", "_fwd_kernel_dense_prefill",
  [_dp(128, 64, 128, 8, 2), _dp(128, 64, 128, 4, 3), _dp(128, 64, 128, 8, 2, fp8=True),
   _dp(128, 64, 128, 8, 2, causal=False), _dp(128, 32, 256, 8, 1)],
  ptrs="Q K V O Lse:fp32 qo_indptr:i32 kv_indptr:i32", dt="bf16", floats="sm_scale k_scale v_scale",
  consts={"kv_group_num": 1, "logit_cap": 0.0, "BLOCK_DPE": 0, "STORE_LSE": False, "LOG2_FP8_MAX": 8.807354922057604,
          "EVEN_D": True, "NUM_BLOCKS_M": 16})

K("sglang", SG + "attention/decode_attention.py", "_fwd_grouped_kernel_stage1",
  [("d128_h16_n32_w4_s2", {"BLOCK_DMODEL": 128, "BLOCK_DV": 128, "Lk": 128, "Lv": 128, "BLOCK_N": 32,
                           "BLOCK_H": 16, "kv_group_num": 8, "q_head_num": 32}, 4, 2),
   ("d512pe64_h16_n32_w4_s2_mla", {"BLOCK_DMODEL": 512, "BLOCK_DPE": 64, "BLOCK_DV": 512, "Lk": 576, "Lv": 512,
                                   "BLOCK_N": 32, "BLOCK_H": 16, "kv_group_num": 16, "q_head_num": 16,
                                   "HAS_MLA": True}, 4, 2)],
  ptrs="Q K_Buffer V_Buffer kv_indptr:i32 kv_indices:i32 Att_Out:fp32 Att_Lse:fp32 num_kv_splits:i32 Aux0:fp32",
  dt="bf16", floats="sm_scale_withk",
  consts={"BLOCK_DPE": 0, "MIN_BLOCK_KV": 32, "logit_cap": 0.0, "xai_temperature_len": -1, "HAS_MLA": False,
          "USE_PDL": False, "IS_GFX1250": False, "PAGE_SIZE": 1, "SCORE_MOD": None, "USE_FORCED": False,
          "ROTATE_BATCH": False})

K("sglang", SG + "attention/decode_attention.py", "_fwd_kernel_stage2",
  [("dv128_s16_w4_s2", {"MAX_KV_SPLITS": 16, "BLOCK_DV": 128, "Lv": 128}, 4, 2)],
  ptrs="Mid_O:fp32 Mid_O_1:fp32 O kv_indptr:i32 num_kv_splits:i32 sink_ptr:fp32", dt="bf16", floats="v_scale",
  consts={"MIN_BLOCK_KV": 32, "HAS_SINK": False, "USE_PDL": False, "FORCED_KV_SPLITS": 0})


def _fla(bt: int, bs: int, k: int, w: int, s: int, hq: int = 16, h: int = 16) -> tuple:
    return (f"k{k}_bt{bt}_bs{bs}_g{hq // h}_w{w}_s{s}",
            {"BT": bt, "BS": bs, "BK": k, "BV": k, "K": k, "V": k, "HQ": hq, "H": h, "G": hq // h}, w, s)


K("fla", "fla/ops/attn/parallel.py", "parallel_attn_fwd_kernel",
  [_fla(128, 64, 128, 8, 2), _fla(64, 64, 128, 4, 2), _fla(128, 64, 64, 8, 3, 32, 8), _fla(64, 32, 64, 4, 2)],
  ptrs="q k v o g_cumsum:fp32 sink_bias:fp32 lse:fp32 cu_seqlens:i32 chunk_indices:i32", dt="bf16",
  floats="scale", consts={"W": 0, "B": 2, "USE_G": False, "USE_SINK_BIAS": False, "USE_WINDOW": False,
                          "IS_VARLEN": False})
K("fla", "fla/ops/attn/parallel.py", "parallel_attn_bwd_kernel_dq",
  [_fla(64, 32, 128, 4, 2), _fla(128, 64, 64, 8, 2)],
  ptrs="q k v lse:fp32 delta:fp32 do dq dg_cumsum:fp32 g_cumsum:fp32 cu_seqlens:i32 chunk_indices:i32", dt="bf16",
  floats="scale", consts={"W": 0, "B": 2, "USE_G": False, "USE_WINDOW": False, "IS_VARLEN": False})
K("fla", "fla/ops/attn/parallel.py", "parallel_attn_bwd_kernel_dkv",
  [_fla(64, 32, 128, 4, 2), _fla(128, 64, 64, 8, 2)],
  ptrs="q k v g_cumsum:fp32 lse:fp32 delta:fp32 do dk dv dg_cumsum:fp32 cu_seqlens:i32 chunk_indices:i32",
  dt="bf16", floats="scale", consts={"W": 0, "B": 2, "USE_G": False, "USE_WINDOW": False, "IS_VARLEN": False})

K("unsloth", "unsloth/kernels/large_head_attention.py", "_lh_fwd",
  [("d256_64x64_w8_s2", {"HEAD_DIM": 256, "BLOCK_M": 64, "BLOCK_N": 64}, 8, 2),
   ("d512_64x32_w8_s1", {"HEAD_DIM": 512, "BLOCK_M": 64, "BLOCK_N": 32}, 8, 1),
   ("d256_128x32_w8_s2", {"HEAD_DIM": 256, "BLOCK_M": 128, "BLOCK_N": 32}, 8, 2)],
  ptrs="Q K V O LSE:fp32 LO:i32 HI:i32", dt="bf16", floats="qk_scale")

# ---- GEMMs ---------------------------------------------------------------------------------------
_BLK = {"GROUP_SIZE_M": 8, "needs_masking": True}
K("sglang", SG + "gemm/fp8_kernel.py", "_w8a8_block_fp8_matmul",
  [_mm(64, 128, 128, 4, 3), _mm(64, 128, 128, 8, 3), _mm(64, 256, 128, 8, 3), _mm(128, 128, 128, 8, 3),
   _mm(64, 64, 128, 4, 4), _mm(16, 128, 128, 4, 3)],
  ptrs="A:fp8e4nv B:fp8e4nv C:bf16 As:fp32 Bs:fp32", consts=_BLK, skip=("cuda80",))
K("sglang", SG + "gemm/fp8_kernel.py", "_w8a8_block_fp8_matmul_hopper",
  [_mm(64, 128, 128, 8, 3), _mm(64, 256, 128, 8, 3), _mm(128, 128, 128, 4, 3)],
  ptrs="A:fp8e4nv B:fp8e4nv C:bf16 As:fp32 Bs:fp32", consts={**_BLK, "SWAP_AB": False, "SPLIT_K": 1},
  skip=("cuda80",))
K("sglang", SG + "gemm/int8_kernel.py", "_w8a8_block_int8_matmul",
  [_mm(64, 128, 128, 8, 3), _mm(128, 128, 128, 4, 3), _mm(64, 256, 128, 8, 3)],
  ptrs="A:i8 B:i8 C:bf16 As:fp32 Bs:fp32", consts={"GROUP_SIZE_M": 8})
K("sglang", SG + "gemm/fp8_kernel.py", "scaled_mm_kernel",
  [_mm(64, 128, 128, 8, 3), _mm(128, 128, 128, 4, 3), _mm(64, 256, 64, 8, 4)],
  ptrs="a_ptr:fp8e4nv b_ptr:fp8e4nv scale_a_ptr:fp32 scale_b_ptr:fp32 c_ptr:bf16 bias_ptr:bf16",
  consts={"ACCUMULATOR_DTYPE": "tl.float32", "BLOCK_SIZE_SCALE_A": 1, "BLOCK_SIZE_SCALE_B": 1}, skip=("cuda80",))
_BI = {"GROUP_SIZE_M": 8, "NUM_SMS": 132, "A_LARGE": False, "B_LARGE": False, "C_LARGE": False}
K("sglang", "sglang/srt/batch_invariant_ops/batch_invariant_ops.py", "matmul_kernel_persistent",
  [_mm(128, 256, 64, 8, 3, HAS_BIAS=False), _mm(64, 256, 64, 8, 3, HAS_BIAS=False),
   _mm(64, 128, 64, 8, 4, HAS_BIAS=True), _mm(128, 128, 64, 4, 3, HAS_BIAS=False)],
  ptrs="a_ptr b_ptr c_ptr bias_ptr", dt="bf16", consts=_BI)
K("sglang", "sglang/srt/batch_invariant_ops/batch_invariant_ops.py", "bmm_kernel_persistent",
  [_mm(64, 256, 64, 8, 3), _mm(128, 128, 64, 4, 3)], ptrs="a_ptr b_ptr c_ptr", dt="bf16", consts=_BI)
_MOE = {"GROUP_SIZE_M": 1, "MUL_ROUTED_WEIGHT": False, "top_k": 2, "compute_type": "tl.bfloat16",
        "even_Ks": True}
K("sglang", SG + "moe/fused_moe_triton_kernels.py", "fused_moe_kernel",
  [_mm(64, 128, 64, 8, 3), _mm(64, 64, 64, 4, 4), _mm(64, 256, 64, 8, 3)],
  ptrs="a_ptr b_ptr bias_ptr c_ptr a_scale_ptr:fp32 b_scale_ptr:fp32 topk_weights_ptr:fp32 "
       "sorted_token_ids_ptr:i32 expert_ids_ptr:i32 num_tokens_post_padded_ptr:i32 add_mask_ptr:i32", dt="bf16",
  consts={**_MOE, "a_desc": None, "b_desc": None, "group_n": 0, "group_k": 0, "use_fp8_w8a8": False,
          "use_int8_w8a8": False, "use_int8_w8a16": False, "per_channel_quant": False, "c_sorted": False,
          "swap_ab": False, "FUSE_ADD_TO_OUTPUT": False, "MASK_OUTPUT": False, "FUSE_SUM_ALL_REDUCE": False,
          "ROUTER_TOPK": 0, "FUSE_SWIGLU": False, "USE_GDC": False, "GDC_EARLY": False, "A_OUTPUT_SLICES": 1,
          "A_OUTPUT_SLICE_WIDTH": 0, "A_OUTPUT_SLICE_K": 0})
K("sglang", SG + "moe/fused_moe_triton_kernels.py", "fused_moe_kernel_gptq_awq",
  [_mm(64, 128, 64, 8, 3, use_int4_w4a16=True, has_zp=True), _mm(16, 128, 128, 4, 3, use_int4_w4a16=True,
                                                                  has_zp=False),
   _mm(64, 64, 64, 4, 3, use_int8_w8a16=True, has_zp=False), _mm(64, 256, 64, 8, 3, use_int4_w4a16=True,
                                                                  has_zp=False)],
  ptrs="a_ptr b_ptr:u8 c_ptr b_scale_ptr b_zp_ptr:u8 topk_weights_ptr:fp32 sorted_token_ids_ptr:i32 "
       "expert_ids_ptr:i32 num_tokens_post_padded_ptr:i32", dt="bf16",
  consts={**_MOE, "N": 4096, "K": 4096, "group_size": 128, "use_int4_w4a16": False, "use_int8_w8a16": False})

K("torchao", "torchao/kernel/intmm_triton.py", "matmul_kernel_with_block_pointers",
  [_mm2(64, 128, 64, 8, 3, GROUP_M=8)], ptrs="a_ptr:i8 b_ptr:i8 c_ptr:i32")   # block pointers: refused by 3.9
K("torchao", "torchao/kernel/intmm_triton.py", "scaled_matmul_kernel_with_block_pointers",
  [_mm2(64, 128, 64, 8, 3, GROUP_M=8), _mm2(128, 64, 64, 4, 3, GROUP_M=8)],
  ptrs="a_ptr:i8 b_ptr:i8 c_ptr:bf16 s1_ptr:bf16", consts={"EVEN_K": True, "ACC_TYPE": "tl.int32"})
K("torchao", "torchao/prototype/quantized_training/int8_mm.py", "_scaled_int8_mm_kernel",
  [_mm2(64, 128, 64, 8, 3, GROUP_M=8), _mm2(128, 128, 64, 8, 3, GROUP_M=8), _mm2(64, 256, 128, 8, 3, GROUP_M=8)],
  ptrs="A_ptr:i8 B_ptr:i8 C_ptr:bf16 row_scale_ptr:fp32 col_scale_ptr:fp32",
  consts={"EVEN_K": True, "COL_SCALE_SCALAR": False})
K("torchao", "torchao/prototype/hqq/kernels.py", "_mixed_mm_kernel",
  [_mm2(64, 128, 64, 8, 3, SPLIT_K=1, GROUP_M=8), _mm2(16, 128, 128, 4, 3, SPLIT_K=1, GROUP_M=8),
   _mm2(128, 128, 64, 4, 3, SPLIT_K=1, GROUP_M=8), _mm2(64, 256, 64, 8, 4, SPLIT_K=1, GROUP_M=8)],
  ptrs="A B:u8 scales_ptr zeros_ptr C", dt="fp16",
  consts={"IS_BFLOAT16": False, "QGROUP_SIZE": 64, "EVEN_K": True, "TRANSPOSED": False, "acc_dtype": "tl.float32",
          "input_precision": "ieee", "fp8_fast_accum": False, "DEBUG": False})
K("sglang", SG + "moe/inkling_moe.py", "_grouped_gemm_kernel",
  [_mm(64, 128, 64, 8, 3), _mm(64, 256, 64, 8, 3), _mm(128, 128, 64, 4, 4)],
  ptrs="A B C NumTokensPerExpert:i32 ExpertTokenOffs:i32 ExpertBlockOffs:i32 ExpertBlockSchedule:i32", dt="bf16",
  consts={"a_stride_0": 4096, "b_stride_0": 4096 * 2048, "b_stride_1": 4096, "c_stride_0": 2048, "E": 8, "N": 2048,
          "K": 4096, "GROUP_SIZE_M": 8, "KN_MASK": False, "INT64_INDEX": False})
K("unsloth", "unsloth/kernels/moe/grouped_gemm/kernels/forward.py", "_grouped_gemm_forward_kernel",
  [_mm(64, 128, 64, 8, 3), _mm(128, 128, 64, 4, 3), _mm(64, 256, 64, 8, 3)],
  ptrs="x_ptr w_ptr y_ptr m_sizes_ptr:i32 gather_indices_ptr:i32 topk_weights_ptr:fp32", dt="bf16",
  consts={"NUM_EXPERTS": 8, "TOPK": 2, "N": 2048, "K": 4096, "PERMUTE_X": False, "PERMUTE_Y": False,
          "FUSE_MUL_PRE": False, "FUSE_MUL_POST": False, "USE_FAST_ACCUM": False, "USE_TMA_LOAD_W": False,
          "USE_TMA_LOAD_X": False, "USE_TMA_STORE": False, "acc_dtype": "tl.float32", "FLATTEN": True})

# ---- dequantizing matmuls ------------------------------------------------------------------------
_GL = {"W_nbits": 4, "group_size": 128, "unpack_mask": 15, "elements_per_sample": 8, "type_id": 0, "a_sizeof": 2,
       "b_sizeof": 4, "input_dtype": "tl.float16", "output_dtype": "tl.float16", "acc_dtype": "tl.float32",
       "meta_dtype": "tl.float16", "channel_scale_mode": 0, "W_group_mode": 3, "zero_is_scalar": False,
       "GROUP_SIZE_M": 8, "data_contiguous": True, "EVEN_M": True, "EVEN_K": True, "EVEN_N": True,
       "meta_scale_norm_ptr": None, "use_tma": False, "N": 4096, "K": 4096, "load_scales_as_block": False}


def _gl(bm: int, bn: int, bk: int, w: int, s: int, order: int = 0, **kw) -> tuple:
    return (f"{bm}x{bn}x{bk}_w{w}_s{s}" + "".join(f"_{k}" for k in kw),
            {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "NUM_STAGES": s, "A_load_order": order,
             **kw}, w, s)


K("gemlite", "gemlite/triton_kernels/gemm_kernels.py", "gemm_INT_kernel",
  [_gl(64, 64, 64, 4, 5), _gl(64, 128, 32, 8, 5, 2), _gl(64, 128, 64, 4, 5), _gl(64, 256, 64, 8, 5, 2),
   _gl(128, 128, 64, 8, 4), _gl(64, 128, 128, 8, 4, warp_specialize=True)],
  ptrs="a_ptr b_ptr:i32 c_ptr scales_ptr zeros_ptr scales_a_ptr:fp32", dt="fp16", consts=_GL)
K("unsloth", "unsloth/kernels/nvfp4.py", "_nvfp4_matmul_fwd_kernel",
  [_mm2(64, 128, 64, 8, 3, GROUP_M=8), _mm2(128, 64, 64, 4, 3, GROUP_M=8), _mm2(16, 128, 128, 4, 4, GROUP_M=8)],
  ptrs="x_ptr packed_ptr:u8 scale_ptr:u8 global_scale_ptr:fp32 y_ptr", dt="bf16",
  consts={"SCALE_E4M3_BYTES": True, "INT64_OFFSETS": False, "MASK_PAD": False})
K("unsloth", "unsloth/kernels/nvfp4.py", "_nvfp4_dequant_kernel",
  [("32x256_w4", {"BLOCK_R": 32, "BLOCK_C": 256}, 4, 1)],
  ptrs="packed_ptr:u8 scale_ptr:u8 global_scale_ptr:fp32 out_ptr", dt="bf16",
  consts={"SCALE_E4M3_BYTES": True, "INT64_OFFSETS": False})
K("sglang", SG + "attention/dsv4/fp4_indexer.py", "_fp4_index_logits_kernel",
  [("h64_d64_l64_w4", {"H": 64, "HALF_D": 64, "BLOCK_L": 64}, 4, 2),
   ("h64_d64_l128_w8", {"H": 64, "HALF_D": 64, "BLOCK_L": 128}, 8, 2)],
  ptrs="q_ptr:fp8e4nv w_ptr:fp32 slots_ptr:i32 lens_ptr:i32 table_ptr:u8 out_ptr:fp32", skip=("cuda80",))
K("sglang", SG + "moe/fused_moe_triton_kernels.py", "fused_moe_kernel",
  [(t + "_swiglu", c, w, s) for t, c, w, s in [_mm(64, 128, 64, 8, 3, FUSE_SWIGLU=True)]]
  + [(t + "_fp8w8a8", c, w, s) for t, c, w, s in [_mm(64, 64, 128, 4, 3, use_fp8_w8a8=True, group_n=128,
                                                       group_k=128)]],
  ptrs="a_ptr b_ptr bias_ptr c_ptr a_scale_ptr:fp32 b_scale_ptr:fp32 topk_weights_ptr:fp32 "
       "sorted_token_ids_ptr:i32 expert_ids_ptr:i32 num_tokens_post_padded_ptr:i32 add_mask_ptr:i32", dt="bf16",
  consts={**_MOE, "a_desc": None, "b_desc": None, "group_n": 0, "group_k": 0, "use_fp8_w8a8": False,
          "use_int8_w8a8": False, "use_int8_w8a16": False, "per_channel_quant": False, "c_sorted": False,
          "swap_ab": False, "FUSE_ADD_TO_OUTPUT": False, "MASK_OUTPUT": False, "FUSE_SUM_ALL_REDUCE": False,
          "ROUTER_TOPK": 0, "FUSE_SWIGLU": False, "USE_GDC": False, "GDC_EARLY": False, "A_OUTPUT_SLICES": 1,
          "A_OUTPUT_SLICE_WIDTH": 0, "A_OUTPUT_SLICE_K": 0})

# ---- reductions, norms, elementwise ----------------------------------------------------------------
K("sglang", SG + "moe/inkling_moe.py", "silu_and_mul_interleaved_kernel",
  [("n2048_8x128_w4", {"N": 2048, "BLOCK_M": 8, "BLOCK_N": 128}, 4, 1)],
  ptrs="gateup_out_ptr topk_weights_ptr:fp32 down_inp_ptr", dt="bf16",
  consts={"HAS_TOPK_WEIGHTS": True, "INT64_INDEX": False})
K("sglang", SG + "moe/fused_moe_triton_kernels.py", "_moe_sum_reduce_kernel",
  [("m16_d2048_w8", {"BLOCK_M": 16, "BLOCK_DIM": 2048, "NUM_STAGE": 1}, 8, 1)],
  ptrs="input_ptr output_ptr", dt="bf16", consts={"routed_scaling_factor": 1.0, "USE_GDC": False})
K("sglang", "sglang/srt/batch_invariant_ops/batch_invariant_ops.py", "_log_softmax_kernel",
  [("n4096_w8", {"input_row_stride": 4096, "output_row_stride": 4096, "n_cols": 4096, "BLOCK_SIZE": 1024}, 8, 1)],
  ptrs="input_ptr output_ptr", dt="fp32")
K("sglang", "sglang/srt/batch_invariant_ops/batch_invariant_ops.py", "mean_kernel",
  [("b1024_w4", {"BLOCK_SIZE": 1024}, 4, 1)], ptrs="input_ptr output_ptr", dt="fp32")
K("sglang", "sglang/srt/batch_invariant_ops/batch_invariant_ops.py", "_rms_norm_kernel",
  [("n4096_w8", {"input_row_stride": 4096, "output_row_stride": 4096, "n_cols": 4096, "BLOCK_SIZE": 1024}, 8, 1)],
  ptrs="input_ptr weight_ptr output_ptr", dt="bf16", floats="eps")
K("sglang", SG + "quantization/fp8_kernel.py", "_per_token_group_quant_8bit",
  [("g128_w1", {"BLOCK": 128}, 1, 1)], ptrs="y_ptr y_q_ptr:fp8e4nv y_s_ptr:fp32", dt="bf16",
  floats="eps bit8_min bit8_max", skip=("cuda80",))
K("sglang", SG + "quantization/int8_kernel.py", "_per_token_quant_int8",
  [("n4096_w8", {"BLOCK": 4096, "CAL_SUM": False, "IS_HIP": False}, 8, 1)],
  ptrs="x_ptr xq_ptr:i8 scale_ptr:fp32 x_sum_ptr:fp32", dt="bf16")
K("unsloth", "unsloth/kernels/rms_layernorm.py", "_rms_layernorm_forward",
  [("n4096_w8", {"Y_row_stride": 4096, "X_row_stride": 4096, "W_row_stride": 0, "r_row_stride": 1,
                 "n_cols": 4096, "eps": 1e-6, "LONG_INDEXING": False, "BLOCK_SIZE": 4096}, 8, 1)],
  ptrs="Y X W r:fp32", dt="bf16")
K("unsloth", "unsloth/kernels/swiglu.py", "_fg_kernel",
  [("b1024_w4", {"BLOCK_SIZE": 1024, "LONG_INDEXING": False}, 4, 1)], ptrs="e g h", dt="bf16")
K("unsloth", "unsloth/kernels/fp8.py", "weight_dequant_kernel",
  [("b128_w4", {"BLOCK_SIZE": 128, "EXACT_F16": False}, 4, 1)], ptrs="x_ptr:fp8e4nv s_ptr:fp32 y_ptr:bf16",
  skip=("cuda80",))
K("unsloth", "unsloth/kernels/fp8.py", "act_quant_kernel",
  [("b128_w4", {"BLOCK_SIZE": 128, "LONG_INDEXING": False}, 4, 1)], ptrs="x_ptr:bf16 y_ptr:fp8e4nv s_ptr:fp32",
  skip=("cuda80",))
K("unsloth", "unsloth/kernels/fp8.py", "_w8a8_block_fp8_matmul",
  [_mm(64, 128, 128, 8, 3, GROUP_SIZE_M=8), _mm(128, 128, 128, 4, 3, GROUP_SIZE_M=8)],
  ptrs="A:fp8e4nv B:fp8e4nv C:bf16 As:fp32 Bs:fp32", consts={"LONG_INDEXING": False}, skip=("cuda80",))
K("fla", "fla/ops/utils/cumsum.py", "chunk_local_cumsum_vector_kernel",
  [("bt64_s128_w4", {"B": 2, "H": 16, "S": 128, "BT": 64, "BS": 64}, 4, 1)],
  ptrs="s:fp32 o:fp32 cu_seqlens:i32 chunk_indices:i32", floats="scale",
  consts={"REVERSE": False, "HAS_SCALE": False, "IS_VARLEN": False, "USE_GRAPH": False})
K("fla", "fla/ops/common/chunk_o.py", "chunk_fwd_kernel_o",
  [("k128_bt64_w4_s2", {"H": 16, "HV": 16, "K": 128, "V": 128, "BT": 64, "BK": 64, "BV": 64}, 4, 2),
   ("k128_bt64_bv128_w8_s3", {"H": 16, "HV": 16, "K": 128, "V": 128, "BT": 64, "BK": 64, "BV": 128}, 8, 3)],
  ptrs="q k v h g:fp32 g_gamma:fp32 o cu_seqlens:i32 chunk_indices:i32", dt="bf16", floats="scale",
  consts={"USE_G": True, "USE_G_GAMMA": False, "STATE_V_FIRST": False, "IS_VARLEN": False})
K("fla", "fla/ops/common/chunk_o.py", "chunk_bwd_kernel_dv",
  [("k128_bt64_w4_s2", {"H": 16, "HV": 16, "K": 128, "V": 128, "BT": 64, "BK": 64, "BV": 64}, 4, 2)],
  ptrs="q k g:fp32 g_gamma:fp32 do dv dh cu_seqlens:i32 chunk_indices:i32", dt="bf16", floats="scale",
  consts={"USE_G": True, "USE_G_GAMMA": False, "STATE_V_FIRST": False, "IS_VARLEN": False})
K("torchao", "torchao/prototype/moe_training/nvfp4_training/hadamard_amax_triton.py", "_hadamard_amax_kernel",
  [("64x64_w4_s2_ws", {"BLOCK_M": 64, "BLOCK_N": 64, "NUM_STAGES": 2}, 4, 2),
   ("64x128_w8_s3_ws", {"BLOCK_M": 64, "BLOCK_N": 128, "NUM_STAGES": 3}, 8, 3),
   ("128x64_w4_s3_ws", {"BLOCK_M": 128, "BLOCK_N": 64, "NUM_STAGES": 3}, 4, 3)],
  ptrs="a_ptr b_ptr global_rht_amax_ptr:fp32 global_a_amax_ptr:fp32", dt="bf16",
  consts={"GROUP_SIZE_N": 8, "NUM_SMS": 132}, skip=("cuda80", "gfx942"))
K("sglang", SG + "attention/prefill_attention.py", "_fwd_kernel",
  [(t + "_fp8", c, w, s) for t, c, w, s in (_pa(128, 64, 128, 8, 2), _pa(128, 128, 128, 8, 2),
                                            _pa(64, 64, 128, 4, 3))],
  ptrs="Q K V Out:bf16 B_Start_Loc:i32 B_Seqlen:i32", dt="fp8e4nv", floats="sm_scale", consts={"kv_group_num": 1},
  skip=("cuda80",))
