"""Regenerate the warp-specialized part of the corpus: compile every kernel of ``ws_kernels.py``
(Gluon kernels with ``gl.warp_specialize``, Triton kernels with ``tl.range(..., warp_specialize=True)``)
for its CUDA targets with the Triton wheel (no GPU needed), write ``<target>/<kernel>_<config>.ttgir``
and ``.ptx`` beside it, and merge their entries into ``manifest.json`` (the other kernels' entries
kept; ``generate.py`` keeps these in turn).

    python tests/corpus/ws_generate.py [--jobs 2]

As ``generate.py``: each (kernel, target) compiles in its own subprocess, pointer and ``i32``
arguments are specialised as multiples of 16, and absolute paths are reduced to base names.
"""
from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from generate import TARGETS, add_results, run_worker  # noqa: E402 (this folder is not a package)

WORKER = r"""
import json, sys, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, sys.argv[1])
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon._runtime import GluonASTSource
import ws_kernels
name, arch = sys.argv[2], int(sys.argv[3])
_, fn, sig, configs, _targets = next(k for k in ws_kernels.WS_KERNELS if k[0] == name)
attrs = {(i,): [["tt.divisibility", 16]] for i, t in enumerate(sig.values()) if t.startswith("*") or t == "i32"}
source = GluonASTSource if fn.is_gluon() else triton.compiler.ASTSource
out = []
for tag, consts, warps, stages in configs:
    try:
        k = triton.compile(source(fn, sig, consts, attrs=attrs), target=GPUTarget("cuda", arch, 32),
                           options={"num_warps": warps, "num_stages": stages})
        out.append({"tag": tag, "ttgir": k.asm["ttgir"], "ptx": k.asm["ptx"]})
    except Exception as e:
        out.append({"tag": tag, "error": f"{type(e).__name__}: {' '.join(str(e).split())[-300:]}"})
print(json.dumps(out))
"""


def compile_one(name: str, target: str) -> tuple[str, str, list]:
    """The compiled configs of one kernel for one target (or each one's error)."""
    return run_worker(WORKER, [str(HERE), name, str(TARGETS[target][1])], name, target)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    import ws_kernels  # noqa: E402 (needs triton)
    names = {k[0] for k in ws_kernels.WS_KERNELS}
    jobs = [(k[0], t) for k in ws_kernels.WS_KERNELS for t in k[4]]
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda j: compile_one(*j), jobs))
    manifest = json.loads((HERE / "manifest.json").read_text())
    manifest["files"] = [e for e in manifest["files"] if e["kernel"] not in names]
    manifest["failed"] = [e for e in manifest["failed"] if e["kernel"] not in names]
    add_results(manifest, results)
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    done = [e for e in manifest["files"] if e["kernel"] in names]
    print(f"{len(done)} warp-specialized pairs; failed: {[e for e in manifest['failed'] if e['kernel'] in names]}")


if __name__ == "__main__":
    main()
