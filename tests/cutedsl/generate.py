"""Regenerate the CuTe-DSL corpus (``tests/cutedsl/corpus/``): a few of the CUTLASS Python DSL's own
example kernels compiled here, without a GPU, and their kept MLIR and PTX stored (gzip, no time
stamp) with ``manifest.json`` (versions, the CUTLASS commit the examples came from, each config).

Needs the optional extra ``cutedsl`` (``pip install -e .[cutedsl]``, nvidia-cutlass-dsl) and a CUTLASS
checkout or bare clone (``--cutlass``) for ``examples/python/CuTeDSL``; the tests read the stored
files only. How it compiles with no GPU: the kernel's ``@cute.jit`` entry gets fake tensors
(``cutlass.cute.runtime.make_fake_compact_tensor``) and a fake stream (``make_fake_stream``), and is
compiled by ``cute.compile[cute.KeepPTX, cute.GPUArch("sm_90a")]`` with ``CUTE_DSL_KEEP=ir,ptx``
(the MLIR after canonicalize+cse, and the PTX, written to ``CUTE_DSL_DUMP_DIR``) and
``CUTE_DSL_LINEINFO=1`` (``.loc`` lines of the example's Python source in the PTX). Each config is
compiled in its own process (the DSL reads its environment once, at import).

    python tests/cutedsl/generate.py --cutlass /path/to/cutlass            # every config
    python tests/cutedsl/generate.py --cutlass /path/to/cutlass --only hopper_gemm_f16_kk_128x128
"""
from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
HOPPER_GEMM = "examples/python/CuTeDSL/cute/hopper/kernel/dense_gemm/dense_gemm.py"
HOPPER_FMHA = "examples/python/CuTeDSL/cute/hopper/kernel/attention/fmha.py"
BLACKWELL_GEMM = "examples/python/CuTeDSL/cute/blackwell/kernel/dense_gemm/dense_gemm.py"
HOPPER_GROUPED = "examples/python/CuTeDSL/cute/hopper/kernel/grouped_gemm/grouped_gemm.py"
#: examples that import torch at module level for their ``run()`` only get a stand-in module
NEEDS_TORCH_STUB = (HOPPER_GROUPED,)
#: modules an example imports from examples/python/CuTeDSL (``from helpers import fmha_helpers``)
HELPERS = {HOPPER_FMHA: ("examples/python/CuTeDSL/helpers/fmha_helpers.py",)}

#: name -> the example and its configuration (the example's own ``run()`` options, by their names)
CONFIGS = {
    "hopper_gemm_f16_kk_128x128": dict(example=HOPPER_GEMM, arch="sm_90a", ab_dtype="Float16", c_dtype="Float16",
                                       acc_dtype="Float32", a_major="k", b_major="k", c_major="n",
                                       tile_shape_mn=(128, 128), cluster_shape_mn=(1, 1), mnkl=(1024, 1024, 512, 1)),
    "hopper_gemm_f16_mn_128x128": dict(example=HOPPER_GEMM, arch="sm_90a", ab_dtype="Float16", c_dtype="Float16",
                                       acc_dtype="Float32", a_major="m", b_major="n", c_major="n",
                                       tile_shape_mn=(128, 128), cluster_shape_mn=(1, 1), mnkl=(1024, 1024, 512, 1)),
    "hopper_gemm_f16_kk_128x256": dict(example=HOPPER_GEMM, arch="sm_90a", ab_dtype="Float16", c_dtype="Float16",
                                       acc_dtype="Float32", a_major="k", b_major="k", c_major="n",
                                       tile_shape_mn=(128, 256), cluster_shape_mn=(1, 1), mnkl=(1024, 1024, 512, 1)),
    "hopper_fmha_f16_d128_64x128": dict(example=HOPPER_FMHA, arch="sm_90a", in_dtype="Float16", out_dtype="Float16",
                                        qk_acc_dtype="Float32", pv_acc_dtype="Float32", mma_tiler_mn=(64, 128),
                                        q_shape=(1, 128, 16, 128), k_shape=(1, 128, 16, 128), is_persistent=False,
                                        mask="WINDOW_MASK"),
    "blackwell_gemm_f16_kk_128x128": dict(example=BLACKWELL_GEMM, arch="sm_100a", ab_dtype="Float16",
                                          c_dtype="Float16", acc_dtype="Float32", a_major="k", b_major="k",
                                          c_major="n", mma_tiler_mn=(128, 128), cluster_shape_mn=(1, 1),
                                          use_2cta_instrs=False, use_tma_store=True, mnkl=(1024, 1024, 512, 1)),
    "blackwell_gemm_f16_kk_256x128_2cta": dict(example=BLACKWELL_GEMM, arch="sm_100a", ab_dtype="Float16",
                                               c_dtype="Float16", acc_dtype="Float32", a_major="k", b_major="k",
                                               c_major="n", mma_tiler_mn=(256, 128), cluster_shape_mn=(2, 1),
                                               use_2cta_instrs=True, use_tma_store=True, mnkl=(1024, 1024, 512, 1)),
    "hopper_grouped_gemm_f16_kk_128x128": dict(example=HOPPER_GROUPED, arch="sm_90a", ab_dtype="Float16",
                                               c_dtype="Float16", acc_dtype="Float32", tile_shape_mn=(128, 128),
                                               cluster_shape_mn=(1, 1), groups=2, sm_count=132, total_num_clusters=16,
                                               tensormap_update_mode="SMEM"),
    "hopper_gemm_e4m3_kk_128x128": dict(example=HOPPER_GEMM, arch="sm_90a", ab_dtype="Float8E4M3FN",
                                        c_dtype="Float16", acc_dtype="Float32", a_major="k", b_major="k", c_major="n",
                                        tile_shape_mn=(128, 128), cluster_shape_mn=(1, 1), mnkl=(1024, 1024, 512, 1)),
}


def _example_source(cutlass: str, path: str) -> tuple[str, str]:
    """(text, commit) of ``path`` in a CUTLASS checkout (work tree) or bare clone."""
    git = ["git", "-C", cutlass]
    commit = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    full = os.path.join(cutlass, path)
    if os.path.exists(full):
        with open(full) as f:
            return f.read(), commit
    out = subprocess.run(git + ["show", f"HEAD:{path}"], capture_output=True, text=True, check=True)
    return out.stdout, commit


def _compile_gemm(module, cfg: dict) -> None:
    """Compile the Hopper or Blackwell dense GEMM example's kernel class on fake tensors (A: (M, K, L),
    B: (N, K, L), C: (M, N, L), as the examples' ``run()`` makes them)."""
    import cutlass                                  # deferred: the optional DSL
    import cutlass.cute as cute                     # deferred: the optional DSL
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream  # deferred: the optional DSL
    m, n, k, l = cfg["mnkl"]
    ab, cd, acc = (getattr(cutlass, cfg[x]) for x in ("ab_dtype", "c_dtype", "acc_dtype"))

    def tensor(dtype, rows, cols, major_rows):       # (rows, cols, L); major_rows: rows contiguous
        order = (0, 1, 2) if major_rows else (1, 0, 2)
        return make_fake_compact_tensor(dtype, (rows, cols, l), stride_order=order, assumed_align=16)

    a = tensor(ab, m, k, cfg["a_major"] == "m")
    b = tensor(ab, n, k, cfg["b_major"] == "n")
    c = tensor(cd, m, n, cfg["c_major"] == "m")
    if cfg["example"] == BLACKWELL_GEMM:
        gemm = module.DenseGemmKernel(acc, cfg["use_2cta_instrs"], tuple(cfg["mma_tiler_mn"]),
                                      tuple(cfg["cluster_shape_mn"]), cfg["use_tma_store"])
    else:
        gemm = module.HopperWgmmaGemmKernel(acc, tuple(cfg["tile_shape_mn"]), tuple(cfg["cluster_shape_mn"]))
    cute.compile[cute.KeepPTX, cute.GPUArch(cfg["arch"])](gemm, a, b, c, make_fake_stream())


def _compile_hopper_fmha(module, cfg: dict) -> None:
    """Compile the Hopper FMHA example's kernel class on fake tensors, laid out as its ``run()``
    lays them out: (s, d, h_r, h_k, b) with d contiguous, then h_r, h_k, s, b."""
    import math
    import cutlass                                  # deferred: the optional DSL
    import cutlass.cute as cute                     # deferred: the optional DSL
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream  # deferred: the optional DSL
    b, s_q, h, d = cfg["q_shape"]
    _b, s_k, h_k, _d = cfg["k_shape"]
    order = (3, 0, 1, 2, 4)
    dt, out_dt, acc = (getattr(cutlass, cfg[x]) for x in ("in_dtype", "out_dtype", "qk_acc_dtype"))

    def tensor(dtype, s, dd, h_r, hk):
        return make_fake_compact_tensor(dtype, (s, dd, h_r, hk, b), stride_order=order, assumed_align=16)

    q, o = tensor(dt, s_q, d, h // h_k, h_k), tensor(out_dt, s_q, d, h // h_k, h_k)
    k, v = tensor(dt, s_k, d, 1, h_k), tensor(dt, s_k, d, 1, h_k)
    lse = tensor(acc, s_q, 1, h // h_k, h_k)
    fmha = module.HopperFusedMultiHeadAttentionForward(acc, getattr(cutlass, cfg["pv_acc_dtype"]),
                                                       (*cfg["mma_tiler_mn"], d), cfg["is_persistent"],
                                                       getattr(module.fmha_utils.MaskEnum, cfg["mask"]))
    scale = 1.0 / math.sqrt(d)
    cute.compile[cute.KeepPTX, cute.GPUArch(cfg["arch"])](fmha, q, k, v, o, lse, scale * math.log2(math.e), scale,
                                                          1.0, None, None, make_fake_stream())


def _compile_hopper_grouped(module, cfg: dict) -> None:
    """Compile the Hopper grouped GEMM example (persistent, tensor maps updated in shared memory) on
    fake tensors: 16-byte "initial" A/B/C tensors (K/K/N-major, as its ``run()`` makes them), the
    per-group problem sizes, strides and pointers, and the tensor-map workspace for ``sm_count``
    SMs (``run()`` asks the GPU; a fixed count here)."""
    import cutlass                                  # deferred: the optional DSL
    import cutlass.cute as cute                     # deferred: the optional DSL
    import cutlass.utils as utils                   # deferred: the optional DSL
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream  # deferred: the optional DSL
    g, sms = cfg["groups"], cfg["sm_count"]
    ab, cd = getattr(cutlass, cfg["ab_dtype"]), getattr(cutlass, cfg["c_dtype"])
    small = [make_fake_compact_tensor(t, (16 * 8 // t.width,) * 2 + (1,), stride_order=(1, 0, 2), assumed_align=16)
             for t in (ab, ab, cd)]
    probs = make_fake_compact_tensor(cutlass.Int32, (g, 4), stride_order=(1, 0), assumed_align=16)
    strides = make_fake_compact_tensor(cutlass.Int32, (g, 3, 2), stride_order=(2, 1, 0), assumed_align=16)
    ptrs = make_fake_compact_tensor(cutlass.Int64, (g, 3), stride_order=(1, 0), assumed_align=16)
    kernel = module.HopperGroupedGemmPersistentKernel
    maps = make_fake_compact_tensor(cutlass.Int64, (sms, kernel.num_tensormaps, kernel.bytes_per_tensormap // 8),
                                    stride_order=(2, 1, 0), assumed_align=16)
    gemm = kernel(getattr(cutlass, cfg["acc_dtype"]), tuple(cfg["tile_shape_mn"]), tuple(cfg["cluster_shape_mn"]),
                  swizzle_size=1, raster_along_m=True,
                  tensormap_update_mode=getattr(utils.TensorMapUpdateMode, cfg["tensormap_update_mode"]))
    cute.compile[cute.KeepPTX, cute.GPUArch(cfg["arch"])](gemm, *small, g, probs, strides, ptrs,
                                                          cfg["total_num_clusters"], maps, sms, make_fake_stream())


class _TorchStub(types.ModuleType):
    """A stand-in ``torch`` for examples that import it at module level but use it only in their
    ``run()`` (any attribute is an empty class: annotations evaluate)."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (), {})


def compile_one(name: str, cutlass: str, out: str) -> None:
    """Child process: compile config ``name`` with the DSL's dump directory set to ``out``."""
    cfg = CONFIGS[name]
    text, _commit = _example_source(cutlass, cfg["example"])
    src = os.path.join(out, os.path.basename(cfg["example"]))
    with open(src, "w") as f:
        f.write(text)
    for helper in HELPERS.get(cfg["example"], ()):
        rel = os.path.relpath(helper, "examples/python/CuTeDSL")
        os.makedirs(os.path.join(out, "lib", os.path.dirname(rel)), exist_ok=True)
        with open(os.path.join(out, "lib", rel), "w") as f:
            f.write(_example_source(cutlass, helper)[0])
    sys.path.insert(0, os.path.join(out, "lib"))
    if cfg["example"] in NEEDS_TORCH_STUB:
        try:
            import torch  # noqa: F401  # deferred: only to know whether the real one is installed
        except ImportError:
            sys.modules["torch"] = _TorchStub("torch")
    spec = importlib.util.spec_from_file_location("cutedsl_example", src)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if cfg["example"] in (HOPPER_GEMM, BLACKWELL_GEMM):
        _compile_gemm(module, cfg)
    elif cfg["example"] == HOPPER_FMHA:
        _compile_hopper_fmha(module, cfg)
    elif cfg["example"] == HOPPER_GROUPED:
        _compile_hopper_grouped(module, cfg)
    os.remove(src)


def _store(data: str, path: str) -> None:
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as f:
        f.write(data.encode())


def generate(name: str, cutlass: str) -> dict:
    """Compile one config in a child process and store its MLIR and PTX; its manifest entry."""
    cfg = CONFIGS[name]
    with tempfile.TemporaryDirectory(prefix="cutedsl-") as tmp:
        env = dict(os.environ, CUTE_DSL_KEEP="ir,ptx", CUTE_DSL_LINEINFO="1", CUTE_DSL_DUMP_DIR=tmp,
                   CUTE_DSL_NO_CACHE="1")
        subprocess.run([sys.executable, __file__, "--child", name, "--cutlass", cutlass, "--out", tmp],
                       env=env, check=True)
        mlir = [f for f in os.listdir(tmp) if f.endswith("_clean.mlir")]
        ptx = [f for f in os.listdir(tmp) if f.endswith(".ptx")]
        if len(mlir) != 1 or len(ptx) != 1:
            raise SystemExit(f"{name}: expected one kept MLIR and one PTX in {tmp}, found {sorted(os.listdir(tmp))}")
        texts = {}
        for kind, fname in (("mlir", mlir[0]), ("ptx", ptx[0])):
            with open(os.path.join(tmp, fname)) as f:      # the example's temporary path -> its CUTLASS path
                texts[kind] = f.read().replace(os.path.join(tmp, os.path.basename(cfg["example"])), cfg["example"]) \
                    .replace(os.path.join(tmp, "lib") + os.sep, "examples/python/CuTeDSL/")
    for kind, text in texts.items():
        _store(text, os.path.join(CORPUS, f"{name}.{kind}.gz"))
    return dict(cfg, files=[f"{name}.mlir.gz", f"{name}.ptx.gz"],
                sizes={k: len(v) for k, v in texts.items()})


def _versions() -> dict:
    from importlib.metadata import version         # the DSL's wheel, as installed here
    return {"nvidia-cutlass-dsl": version("nvidia-cutlass-dsl"), "python": platform.python_version()}


def load_manifest(path: str) -> dict:
    """The corpus manifest at ``path``, or an empty one (``{"kernels": {}}``) where there is none
    (``generate_quack.py`` reads its manifest this way too)."""
    if not os.path.exists(path):
        return {"kernels": {}}
    with open(path) as f:
        return json.load(f)


def save_manifest(path: str, manifest: dict) -> None:
    """Write ``manifest`` as the corpus keeps it: JSON, indent 1, keys sorted, a final newline."""
    with open(path, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cutlass", required=True, help="a CUTLASS checkout or bare clone (examples/python/CuTeDSL)")
    ap.add_argument("--only", action="append", choices=sorted(CONFIGS), help="configs to regenerate (default all)")
    ap.add_argument("--child", choices=sorted(CONFIGS), help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        compile_one(args.child, args.cutlass, args.out)
        return 0
    os.makedirs(CORPUS, exist_ok=True)
    path = os.path.join(CORPUS, "manifest.json")
    manifest = load_manifest(path)
    _text, commit = _example_source(args.cutlass, HOPPER_GEMM)
    manifest.update(_versions(), cutlass_commit=commit,
                    how="cute.compile[cute.KeepPTX, cute.GPUArch(arch)] on make_fake_compact_tensor tensors, "
                        "CUTE_DSL_KEEP=ir,ptx CUTE_DSL_LINEINFO=1 (tests/cutedsl/generate.py)")
    for name in args.only or sorted(CONFIGS):
        print(f"compiling {name}", flush=True)
        manifest["kernels"][name] = generate(name, args.cutlass)
    save_manifest(path, manifest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
