"""Regenerate the quack-kernels part of the CuTe-DSL corpus (``tests/cutedsl/corpus/quack_*``): the GEMM
kernels of the public package ``quack-kernels`` (a CuTe-DSL library) compiled here without a GPU, their
kept MLIR and PTX stored (gzip, no time stamp) and recorded in ``corpus/manifest_quack.json``.

quack imports torch, so this runs in a separate environment, never the project's own (the tests read
only the stored files)::

    python3 -m venv /tmp/quackenv
    /tmp/quackenv/bin/pip install torch nvidia-cutlass-dsl==4.8.1 quack-kernels==0.6.5
    /tmp/quackenv/bin/python tests/cutedsl/generate_quack.py            # every config
    /tmp/quackenv/bin/python tests/cutedsl/generate_quack.py --only quack_gemm_sm90_f16_kk_128x128

How it compiles with no GPU: quack's own GEMM front door ``quack.gemm._compile_gemm`` builds fake tensors
(``quack.compile_utils.make_fake_tensor``) and calls ``cute.compile``; quack reads the target from
``QUACK_ARCH`` (which kernel class is traced) and ``CUTE_DSL_ARCH`` (the ptxas target); the DSL keeps its
MLIR and PTX with ``CUTE_DSL_KEEP=ir,ptx`` in ``CUTE_DSL_DUMP_DIR`` and puts Python lines in the PTX with
``CUTE_DSL_LINEINFO=1``; ``QUACK_CACHE_ENABLED=0`` (quack keeps compiled kernels on disk: a cached one
is not compiled, so nothing would be kept). Each config runs in its own process (the DSL reads its
environment at import).
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from generate import load_manifest, save_manifest  # noqa: E402 (this folder is not a package)

CORPUS = os.path.join(HERE, "corpus")
MANIFEST = os.path.join(CORPUS, "manifest_quack.json")

#: name -> (QUACK_ARCH, CUTE_DSL_ARCH, the GEMM's options: dtypes and majors of A, B, D, the tile,
#: the cluster, pingpong, persistent)
CONFIGS = {
    "quack_gemm_sm90_f16_kk_128x128": dict(quack_arch="90", arch="sm_90a", dtype="Float16", a_major="k",
                                           b_major="k", d_major="n", tile=(128, 128), cluster=(1, 1, 1),
                                           pingpong=False, persistent=True),
    "quack_gemm_sm90_bf16_kk_128x192_pingpong": dict(quack_arch="90", arch="sm_90a", dtype="BFloat16",
                                                     a_major="k", b_major="k", d_major="n", tile=(128, 192),
                                                     cluster=(1, 1, 1), pingpong=True, persistent=True),
    "quack_gemm_sm90_f16_mn_128x128": dict(quack_arch="90", arch="sm_90a", dtype="Float16", a_major="m",
                                           b_major="n", d_major="n", tile=(128, 128), cluster=(1, 1, 1),
                                           pingpong=False, persistent=True),
    "quack_gemm_sm90_f16_kk_128x128_cluster2x1": dict(quack_arch="90", arch="sm_90a", dtype="Float16",
                                                      a_major="k", b_major="k", d_major="n", tile=(128, 128),
                                                      cluster=(2, 1, 1), pingpong=False, persistent=True),
    "quack_gemm_sm100_f16_kk_256x128_cluster2x1": dict(quack_arch="100", arch="sm_100a", dtype="Float16",
                                                       a_major="k", b_major="k", d_major="n", tile=(256, 128),
                                                       cluster=(2, 1, 1), pingpong=False, persistent=True),
    "quack_gemm_sm100_f16_kk_128x128": dict(quack_arch="100", arch="sm_100a", dtype="Float16", a_major="k",
                                            b_major="k", d_major="n", tile=(128, 128), cluster=(1, 1, 1),
                                            pingpong=False, persistent=True),
}

_CHILD = r'''
import json, sys
import cutlass
from quack.gemm import _compile_gemm
from quack.gemm_config import SplitKMode
from quack.rounding import RoundingMode
cfg = json.loads(sys.argv[1])
dt = getattr(cutlass, cfg["dtype"])
cap = (int(cfg["quack_arch"]) // 10, 0)
_compile_gemm(dt, dt, dt, None, cfg["a_major"], cfg["b_major"], cfg["d_major"], None, tuple(cfg["tile"]),
              tuple(cfg["cluster"]), cfg["pingpong"], cfg["persistent"], False, None, None, 0, 0, 0, False,
              None, False, False, False, False, False, cap, RoundingMode.RN, 0, None)
'''


def _gz(src: str, dst: str) -> int:
    with open(src, "rb") as f:
        data = f.read()
    with open(dst, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as z:
        z.write(data)
    return len(data)


def _pick(out: str, suffix: str) -> str:
    """The one kept file of the kernel (``*_clean.mlir`` / ``*.ptx``) under ``out``."""
    found = [os.path.join(d, f) for d, _s, fs in os.walk(out) for f in fs if f.endswith(suffix)]
    if len(found) != 1:
        raise SystemExit(f"expected one {suffix} under {out}, found {found}")
    return found[0]


def compile_one(name: str, python: str) -> dict:
    cfg = CONFIGS[name]
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, QUACK_ARCH=cfg["quack_arch"], CUTE_DSL_ARCH=cfg["arch"], QUACK_CACHE_ENABLED="0",
                   CUTE_DSL_KEEP="ir,ptx",
                   CUTE_DSL_LINEINFO="1", CUTE_DSL_DUMP_DIR=out)
        r = subprocess.run([python, "-c", _CHILD, json.dumps(cfg)], env=env, capture_output=True, text=True,
                           timeout=900)
        if r.returncode:
            raise SystemExit(f"{name}: compiling failed:\n{r.stderr[-4000:]}")
        sizes = {"mlir": _gz(_pick(out, "_clean.mlir"), os.path.join(CORPUS, f"{name}.mlir.gz")),
                 "ptx": _gz(_pick(out, ".ptx"), os.path.join(CORPUS, f"{name}.ptx.gz"))}
    return dict(cfg, files=[f"{name}.mlir.gz", f"{name}.ptx.gz"], sizes=sizes)


def _version(python: str, module: str) -> str:
    r = subprocess.run([python, "-c", f"import importlib.metadata as m; print(m.version({module!r}))"],
                       capture_output=True, text=True)
    return r.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", choices=sorted(CONFIGS))
    ap.add_argument("--python", default=sys.executable, help="the interpreter with quack installed")
    a = ap.parse_args(argv)
    manifest = load_manifest(MANIFEST)
    for name in a.only or sorted(CONFIGS):
        manifest["kernels"][name] = compile_one(name, a.python)
        print(name, manifest["kernels"][name]["sizes"])
    manifest.update({"quack-kernels": _version(a.python, "quack-kernels"),
                     "nvidia-cutlass-dsl": _version(a.python, "nvidia-cutlass-dsl"),
                     "how": "quack.gemm._compile_gemm (fake tensors) with QUACK_ARCH, CUTE_DSL_ARCH, "
                            "CUTE_DSL_KEEP=ir,ptx, CUTE_DSL_LINEINFO=1 (tests/cutedsl/generate_quack.py)"})
    save_manifest(MANIFEST, manifest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
