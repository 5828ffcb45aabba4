"""Regenerate the corpus: compile every kernel of ``kernels.py`` for five targets with the Triton
wheel (no GPU needed) and write ``<target>/<kernel>_<config>.ttgir`` (and ``.ptx`` beside it for
the CUDA targets, as Triton's cache keeps them), plus ``manifest.json``.

    python tests/corpus/generate.py [--jobs 2] [--only NAME]     (--only: that kernel again, the manifest's other entries kept)

Each (kernel, target) compiles in its own subprocess: Triton aborts the process on some
unsupported combinations, and one abort must cost only that job. Paths that name this machine
(``loc("/abs/path/kernels.py":L:C)``, PTX ``.file`` lines) are reduced to the file's base name.
Pointer and integer arguments are specialised as multiples of 16 (``tt.divisibility``), as Triton
does for aligned launches, so that loads vectorise and loops pipeline (cp.async, TMA).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGETS = {"cuda80": ("cuda", 80, 32), "cuda90": ("cuda", 90, 32), "cuda100": ("cuda", 100, 32),
           "gfx942": ("hip", "gfx942", 64), "gfx950": ("hip", "gfx950", 64)}

WORKER = r"""
import json, sys, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, sys.argv[1])
import triton
from triton.backends.compiler import GPUTarget
import kernels
name, backend, arch, warp = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
arch = int(arch) if arch.isdigit() else arch
entry = next(k for k in kernels.KERNELS if k[0] == name)
_, fn, sig, configs, _targets = entry
attrs = {(i,): [["tt.divisibility", 16]] for i, t in enumerate(sig.values()) if t.startswith("*") or t == "i32"}
out = []
for tag, consts, warps, stages in configs:
    try:
        k = triton.compile(triton.compiler.ASTSource(fn, sig, consts, attrs=attrs),
                           target=GPUTarget(backend, arch, warp),
                           options={"num_warps": warps, "num_stages": stages})
        out.append({"tag": tag, "ttgir": k.asm["ttgir"], "ptx": k.asm.get("ptx") if backend == "cuda" else None})
    except Exception as e:
        msg = " ".join(str(e).split())
        out.append({"tag": tag, "error": f"{type(e).__name__}: {msg[-300:]}"})
print(json.dumps(out))
"""

_ABS = re.compile(r'"(?:/[^"/\n]+)+/([^"/\n]+)"')


def strip_paths(text: str) -> str:
    """Absolute paths in string literals (locations, PTX .file) become their base names.

    >>> strip_paths('loc("/a/b/kernels.py":3:7) .file 1 "/x/y.py"')
    'loc("kernels.py":3:7) .file 1 "y.py"'
    """
    return _ABS.sub(lambda m: f'"{m.group(1)}"', text)


def run_worker(worker: str, argv: list[str], name: str, target: str) -> tuple[str, str, list]:
    """``(name, target, configs)``: the JSON list the compile ``worker`` script prints last when
    run with ``argv`` in its own Python process, or one entry ``{"tag": "*", "error": ...}`` when
    that process times out (600 s), dies or prints nothing (``ws_generate.py`` uses it too)."""
    try:
        out = subprocess.run([sys.executable, "-c", worker, *argv], capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return name, target, [{"tag": "*", "error": "timeout after 600 s"}]
    if out.returncode != 0 or not out.stdout.strip():
        tail = (out.stderr.strip().splitlines() or [f"exit {out.returncode}"])[-1]
        return name, target, [{"tag": "*", "error": f"compiler process died: {tail[-300:]}"}]
    return name, target, json.loads(out.stdout.strip().splitlines()[-1])


def compile_one(name: str, target: str) -> tuple[str, str, list]:
    backend, arch, warp = TARGETS[target]
    return run_worker(WORKER, [str(HERE), name, backend, str(arch), str(warp)], name, target)


def add_results(manifest: dict, results: list) -> None:
    """Write each compiled config's ``.ttgir`` (and ``.ptx`` where there is one) under its target's
    folder and list it in ``manifest["files"]``; each error goes to ``manifest["failed"]``; both
    lists sorted (``ws_generate.py`` uses it too)."""
    for name, target, outs in results:
        (HERE / target).mkdir(exist_ok=True)
        for o in outs:
            stem = f"{name}_{o['tag']}"
            if "error" in o:
                manifest["failed"].append({"kernel": name, "config": o["tag"], "target": target,
                                           "why": o["error"]})
                continue
            (HERE / target / f"{stem}.ttgir").write_text(strip_paths(o["ttgir"]))
            entry = {"kernel": name, "config": o["tag"], "target": target, "ttgir": f"{target}/{stem}.ttgir"}
            if o.get("ptx"):
                (HERE / target / f"{stem}.ptx").write_text(strip_paths(o["ptx"]))
                entry["ptx"] = f"{target}/{stem}.ptx"
            manifest["files"].append(entry)
    manifest["files"].sort(key=lambda e: e["ttgir"])
    manifest["failed"].sort(key=lambda e: (e["target"], e["kernel"], e["config"]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", help="one kernel name")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE))
    import kernels  # noqa: E402 (the kernels module needs triton)
    import triton  # noqa: E402
    names = [k[0] for k in kernels.KERNELS if not args.only or k[0] == args.only]
    jobs = [(n, t) for n in names for t in TARGETS]
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda j: compile_one(*j), jobs))
    manifest = {"triton": triton.__version__, "targets": {t: list(map(str, v)) for t, v in TARGETS.items()},
                "files": [], "failed": []}
    if args.only and (HERE / "manifest.json").exists():      # one kernel again: the others' entries kept
        old = json.loads((HERE / "manifest.json").read_text())
        manifest["files"] = [e for e in old["files"] if e["kernel"] != args.only]
        manifest["failed"] = [e for e in old["failed"] if e["kernel"] != args.only]
    elif (HERE / "manifest.json").exists():                 # ws_generate.py's kernels (ws_kernels.py) kept
        import ws_kernels  # noqa: E402
        ws = {k[0] for k in ws_kernels.WS_KERNELS}
        old = json.loads((HERE / "manifest.json").read_text())
        manifest["files"] = [e for e in old["files"] if e["kernel"] in ws]
        manifest["failed"] = [e for e in old["failed"] if e["kernel"] in ws]
    add_results(manifest, results)
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    ok = {t: sum(1 for f in manifest["files"] if f["target"] == t) for t in TARGETS}
    print(f"{len(manifest['files'])} files, {len(manifest['failed'])} failed; per target {ok}")
    for f in manifest["failed"]:
        print(f"  failed {f['target']} {f['kernel']} {f['config']}: {f['why'][:160]}")


if __name__ == "__main__":
    main()
