"""Regenerate the ``ldmatrix`` part of the CuTe-DSL corpus (``tests/cutedsl/corpus/ampere_*``): the CUTLASS
Python DSL's Ampere tensor-core GEMM example (``ldmatrix`` from a swizzled, staged shared buffer feeding
``mma.sync.m16n8k16``), compiled here without a GPU for ``sm_80``, its kept MLIR and PTX stored (gzip, no
time stamp) and recorded in ``corpus/manifest_ldmatrix.json``.

It compiles exactly as ``generate.py`` does (whose helpers it imports): the example's kernel class gets
fake tensors (``make_fake_compact_tensor``: A ``(M, K, L)``, B ``(N, K, L)``, C ``(M, N, L)``, the modes the
example's ``bmm`` wrapper hands it) and a fake stream, and is compiled by ``cute.compile[cute.KeepPTX,
cute.GPUArch("sm_80")]`` with ``CUTE_DSL_KEEP=ir,ptx`` and ``CUTE_DSL_LINEINFO=1``, one process per config::

    python tests/cutedsl/generate_ldmatrix.py --cutlass /path/to/cutlass              # every config
    python tests/cutedsl/generate_ldmatrix.py --cutlass /path/to/cutlass --only ampere_gemm_f16_kk_128x128
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from generate import _example_source, _store, _versions, load_manifest, save_manifest  # noqa: E402

CORPUS = os.path.join(HERE, "corpus")
MANIFEST = os.path.join(CORPUS, "manifest_ldmatrix.json")
AMPERE_GEMM = "examples/python/CuTeDSL/cute/ampere/kernel/dense_gemm/tensorop_gemm.py"
AMPERE_FA2 = "examples/python/CuTeDSL/cute/ampere/kernel/attention/flash_attention_v2.py"

#: name -> the example's options (its ``run()`` names): dtypes, majors, the atom layout
CONFIGS = {
    "ampere_gemm_f16_kk_128x128": dict(example=AMPERE_GEMM, arch="sm_80", ab_dtype="Float16", c_dtype="Float16",
                                       acc_dtype="Float32", a_major="k", b_major="k", c_major="n",
                                       atom_layout_mnk=(2, 2, 1), mnkl=(1024, 1024, 512, 1)),
    "ampere_gemm_f16_mn_128x128": dict(example=AMPERE_GEMM, arch="sm_80", ab_dtype="Float16", c_dtype="Float16",
                                       acc_dtype="Float32", a_major="m", b_major="n", c_major="n",
                                       atom_layout_mnk=(2, 2, 1), mnkl=(1024, 1024, 512, 1)),
    "ampere_gemm_bf16_kk_128x128_4x1": dict(example=AMPERE_GEMM, arch="sm_80", ab_dtype="BFloat16",
                                            c_dtype="BFloat16", acc_dtype="Float32", a_major="k", b_major="k",
                                            c_major="n", atom_layout_mnk=(4, 1, 1), mnkl=(1024, 1024, 512, 1)),
    "ampere_fa2_f16_d128_128x64": dict(example=AMPERE_FA2, arch="sm_80", dtype="Float16", batch_size=1,
                                       seqlen=1024, num_head=8, head_dim=128, m_block_size=128, n_block_size=64,
                                       num_threads=128, is_causal=False),
}


def _compile_ampere(module, cfg: dict) -> None:
    """Compile the Ampere tensor-op GEMM's kernel class on fake (M, K, L), (N, K, L), (M, N, L) tensors."""
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
    gemm = module.TensorOpGemm(ab, cd, acc, tuple(cfg["atom_layout_mnk"]), cfg["c_major"] == "m")
    cute.compile[cute.KeepPTX, cute.GPUArch(cfg["arch"])](gemm, a, b, c, make_fake_stream())


def _compile_fa2(module, cfg: dict) -> None:
    """Compile the Ampere FlashAttention-2 forward example on fake (batch, seqlen, heads, head_dim) tensors,
    head_dim contiguous (its ``run()`` makes them so)."""
    import math
    import cutlass                                  # deferred: the optional DSL
    import cutlass.cute as cute                     # deferred: the optional DSL
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream  # deferred: the optional DSL
    dt = getattr(cutlass, cfg["dtype"])
    shape = (cfg["batch_size"], cfg["seqlen"], cfg["num_head"], cfg["head_dim"])
    q, k, v, o = (make_fake_compact_tensor(dt, shape, stride_order=(3, 2, 1, 0), assumed_align=16) for _ in range(4))
    fa2 = module.FlashAttentionForwardAmpere(cfg["head_dim"], cfg["m_block_size"], cfg["n_block_size"],
                                             cfg["num_threads"], cfg["is_causal"])
    cute.compile[cute.KeepPTX, cute.GPUArch(cfg["arch"])](fa2, q, k, v, o, 1.0 / math.sqrt(cfg["head_dim"]),
                                                          make_fake_stream())


def compile_one(name: str, cutlass: str, out: str) -> None:
    """Child process: compile config ``name`` with the DSL's dump directory set to ``out``."""
    cfg = CONFIGS[name]
    src = os.path.join(out, os.path.basename(cfg["example"]))
    with open(src, "w") as f:
        f.write(_example_source(cutlass, cfg["example"])[0])
    spec = importlib.util.spec_from_file_location("cutedsl_example", src)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    (_compile_fa2 if cfg["example"] == AMPERE_FA2 else _compile_ampere)(module, cfg)
    os.remove(src)


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
                texts[kind] = f.read().replace(os.path.join(tmp, os.path.basename(cfg["example"])), cfg["example"])
    for kind, text in texts.items():
        _store(text, os.path.join(CORPUS, f"{name}.{kind}.gz"))
    return dict(cfg, files=[f"{name}.mlir.gz", f"{name}.ptx.gz"], sizes={k: len(v) for k, v in texts.items()})


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
    manifest = load_manifest(MANIFEST)
    manifest.update(_versions(), cutlass_commit=_example_source(args.cutlass, AMPERE_GEMM)[1],
                    how="cute.compile[cute.KeepPTX, cute.GPUArch(arch)] on make_fake_compact_tensor tensors, "
                        "CUTE_DSL_KEEP=ir,ptx CUTE_DSL_LINEINFO=1 (tests/cutedsl/generate_ldmatrix.py)")
    for name in args.only or sorted(CONFIGS):
        print(f"compiling {name}", flush=True)
        manifest["kernels"][name] = generate(name, args.cutlass)
    save_manifest(MANIFEST, manifest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
