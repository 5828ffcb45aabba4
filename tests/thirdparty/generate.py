"""Regenerate the third-party corpus: Triton kernels from public PyPI packages, compiled with the
Triton wheel (no GPU, no torch) for cuda:80, cuda:90, cuda:100 and hip:gfx942.

    python tests/thirdparty/generate.py [--jobs 2] [--only SUBSTRING] [--cache DIR]

Each package of ``PACKAGES`` is fetched with ``pip download --no-deps`` into a cache directory
(default: a folder under the system temp dir) and unpacked there. A kernel is loaded without
importing its package: the source file's ``@triton.jit`` functions (other decorators such as
``triton.autotune`` removed), module constants and the jit functions it imports from its own
package are executed with ``triton``/``tl`` in scope (``torch`` is a permissive stub). Each
(source file, target) compiles in its own subprocess, as in ``tests/corpus/generate.py``.

Written files: ``<target>/<package>__<kernel>_<config>.ttgir`` (``.ptx`` beside it for CUDA),
``manifest.json`` (every file with its package, version, source path, kernel, signature,
constexprs, num_warps, num_stages, target; every refusal with its one-line reason). Absolute
paths are reduced to base names. Pointer and ``i32`` arguments are specialised as multiples of 16.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from kernels import ENTRIES, PACKAGES  # noqa: E402

TARGETS = {"cuda80": ("cuda", 80, 32), "cuda90": ("cuda", 90, 32), "cuda100": ("cuda", 100, 32),
           "gfx942": ("hip", "gfx942", 64)}

WORKER = r'''
import ast, json, math, sys, types, warnings
warnings.filterwarnings("ignore")
import triton, triton.language as tl
from triton.backends.compiler import GPUTarget
from pathlib import Path

class _Stub(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Stub(name)
for _m in ("torch", "torch.nn", "torch.nn.functional", "torch.distributed", "torch.library"):
    sys.modules.setdefault(_m, _Stub(_m))
sys.modules["torch"].version = types.SimpleNamespace(hip=None, cuda="12.8")   # a CUDA build of torch

ROOT = Path(sys.argv[1])
_CACHE = {}

def _resolve(mod, cur, level):
    if level:
        base = cur.parent
        for _ in range(level - 1):
            base = base.parent
        parts = mod.split(".") if mod else []
        cand = base.joinpath(*parts)
    else:
        cand = ROOT.joinpath(*mod.split("."))
    for p in (cand.with_suffix(".py"), cand / "__init__.py"):
        if p.is_file():
            return p
    return None

def _is_jit(dec):
    return "jit" in ast.unparse(dec)

def load(path):
    path = path.resolve()
    if path in _CACHE:
        return _CACHE[path]
    ns = {"triton": triton, "tl": tl, "math": math, "__name__": "tp_" + path.stem, "__file__": str(path)}
    _CACHE[path] = ns
    tree = ast.parse(path.read_text())
    body = list(tree.body)
    while any(isinstance(n, (ast.If, ast.Try)) for n in body):   # kernels defined under `if has_triton():`
        body = [m for n in body for m in (n.body if isinstance(n, (ast.If, ast.Try)) else [n])]
    for node in body:
        if isinstance(node, ast.ImportFrom):
            src = _resolve(node.module or "", path, node.level)
            if src is not None:
                try:
                    other = load(src)
                except Exception:
                    continue
                for a in node.names:
                    if a.name == "*":
                        ns.update({k: v for k, v in other.items() if not k.startswith("_")})
                    elif a.name in other:
                        ns[a.asname or a.name] = other[a.name]
                continue
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign)):
            try:
                exec(compile(ast.Module([node], []), str(path), "exec"), ns)
            except Exception:
                pass
        elif isinstance(node, ast.FunctionDef):
            jit = [d for d in node.decorator_list if _is_jit(d)]
            node.decorator_list = jit[-1:]
            try:
                exec(compile(ast.Module([node], []), str(path), "exec"), ns)
            except Exception:
                pass
    return ns

rel, backend, arch, warp = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
arch = int(arch) if arch.isdigit() else arch
jobs = json.loads(sys.stdin.read())
out = []
try:
    ns = load(ROOT / rel)
except Exception as e:
    ns = {}
    err = f"{type(e).__name__}: {' '.join(str(e).split())[-300:]}"
for j in jobs:
    try:
        fn = ns[j["kernel"]]
        sig = j["signature"]
        attrs = {(i,): [["tt.divisibility", 16]] for i, t in enumerate(sig.values())
                 if t.startswith("*") or t == "i32"}
        consts = {k: (getattr(tl, v[3:]) if isinstance(v, str) and v.startswith("tl.") else v)
                  for k, v in j["constexprs"].items()}
        k = triton.compile(triton.compiler.ASTSource(fn, sig, consts, attrs=attrs),
                           target=GPUTarget(backend, arch, warp),
                           options={"num_warps": j["num_warps"], "num_stages": j["num_stages"]})
        out.append({"id": j["id"], "ttgir": k.asm["ttgir"],
                    "ptx": k.asm.get("ptx") if backend == "cuda" else None})
    except Exception as e:
        head = str(e).strip().splitlines()[0] if str(e).strip() else ""
        cause = e.__cause__ or e.__context__
        why = f"{type(cause).__name__}: {cause}" if cause is not None else str(e).strip().splitlines()[-1:]
        msg = " ".join(f"{type(e).__name__} {head} {why}".split())
        out.append({"id": j["id"], "error": msg[:300]})
print(json.dumps(out))
'''

_ABS = re.compile(r'"(?:/[^"/\n]+)+/([^"/\n]+)"')


def strip_paths(text: str) -> str:
    """Absolute paths in string literals (locations, PTX .file) become their base names.

    >>> strip_paths('loc("/a/b/kernels.py":3:7) .file 1 "/x/y.py"')
    'loc("kernels.py":3:7) .file 1 "y.py"'
    """
    return _ABS.sub(lambda m: f'"{m.group(1)}"', text)


def fetch(pkg: str, version: str, cache: Path) -> Path:
    """Download ``pkg==version`` (no dependencies) into ``cache`` and unpack it; return its root."""
    root = cache / f"{pkg}-{version}"
    if (root / ".done").exists():
        return root
    dl = cache / "dl"
    dl.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", f"{pkg}=={version}",
                    "-d", str(dl)], check=True)
    norm = re.sub(r"[-_.]+", "_", pkg).lower()
    arch = next(p for p in sorted(dl.iterdir())
                if re.sub(r"[-_.]+", "_", p.name).lower().startswith(f"{norm}_{re.sub(r'[-_.]+', '_', version)}"))
    root.mkdir(parents=True, exist_ok=True)
    import shutil
    if arch.suffix == ".whl":
        shutil.unpack_archive(str(arch), str(root), "zip")
    else:
        tmp = cache / f"{pkg}-{version}.unpack"
        shutil.unpack_archive(str(arch), str(tmp))
        top = next(tmp.iterdir())
        for child in top.iterdir():
            child.rename(root / child.name)
    (root / ".done").write_text(arch.name)
    return root


def _params(root: Path, rel: str, kernel: str) -> list[tuple[str, bool, object]]:
    """(name, is_constexpr, default or None) of each parameter of ``kernel`` in ``root/rel``."""
    import ast
    tree = ast.parse((root / rel).read_text())
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == kernel)
    args = fn.args.args
    defaults = [None] * (len(args) - len(fn.args.defaults)) + list(fn.args.defaults)
    out = []
    for a, d in zip(args, defaults):
        const = a.annotation is not None and "constexpr" in ast.unparse(a.annotation)
        try:
            dv = ast.literal_eval(d) if d is not None else None
        except ValueError:
            dv = None
        out.append((a.arg, const, dv))
    return out


def expand(spec: dict, root: Path) -> list[dict]:
    """One job per configuration of a catalogue entry: the full signature and constexprs."""
    ptrs = {}
    for tok in spec.get("ptrs", "").split():
        name, _, dt = tok.partition(":")
        ptrs[name] = "*" + (dt or spec.get("dt", "fp16"))
    floats = set(spec.get("floats", "").split())
    jobs = []
    for n, (tag, cfg, warps, stages) in enumerate(spec["cfgs"]):
        values = {**spec.get("consts", {}), **cfg}
        sig, consts = {}, {}
        for name, const, default in _params(root, spec["source"], spec["kernel"]):
            if const:
                sig[name] = "constexpr"
                consts[name] = values[name] if name in values else default
            elif name in values:
                sig[name] = "constexpr"
                consts[name] = values[name]
            else:
                sig[name] = ptrs.get(name) or ("fp32" if name in floats else "i32")
        jobs.append({"id": f"{spec['package']}__{spec['kernel'].lstrip('_')}_{tag}", "package": spec["package"],
                     "source": spec["source"], "kernel": spec["kernel"], "config": tag, "signature": sig,
                     "constexprs": consts, "num_warps": warps, "num_stages": stages,
                     "skip": tuple(spec.get("skip", ())) + (("cuda80", "cuda100") if n else ())})   # size: first config only
    return jobs


def compile_group(root: Path, rel: str, target: str, jobs: list[dict]) -> list[dict]:
    """Compile every job of one source file for one target in a fresh process."""
    backend, arch, warp = TARGETS[target]
    try:
        out = subprocess.run([sys.executable, "-c", WORKER, str(root), rel, backend, str(arch), str(warp)],
                             input=json.dumps(jobs), capture_output=True, text=True, timeout=1800)
    except subprocess.TimeoutExpired:
        return [{"id": j["id"], "error": "timeout after 1800 s"} for j in jobs]
    if out.returncode != 0 or not out.stdout.strip():
        tail = (out.stderr.strip().splitlines() or [f"exit {out.returncode}"])[-1]
        return [{"id": j["id"], "error": f"compiler process died: {tail[-300:]}"} for j in jobs]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _prune(manifest: dict, jobs: list[dict], dry: bool) -> None:
    """Drop manifest rows of (kernel, config, target)s the catalogue no longer has, and stored files
    no manifest row names."""
    valid = {(j["package"], j["kernel"], j["config"], t) for j in jobs for t in TARGETS if t not in j["skip"]}
    for key in ("files", "failed"):
        manifest[key] = [m for m in manifest[key] if (m["package"], m["kernel"], m["config"], m["target"]) in valid]
    keep = {m[k] for m in manifest["files"] for k in ("ttgir", "ptx") if k in m}
    for path in HERE.glob("*/*"):
        if path.suffix in (".ttgir", ".ptx") and str(path.relative_to(HERE)) not in keep and not dry:
            path.unlink()


def main() -> None:  # long: download, group, compile, write and summarise in one pass
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", help="comma-separated substrings of '<package>__<kernel>_<config>' or the source path; "
                    "the rest of the manifest is kept")
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "verilayout-thirdparty"))
    ap.add_argument("--no-write", action="store_true", help="compile and report only")
    args = ap.parse_args()
    import triton
    cache = Path(args.cache)
    roots = {p: fetch(name, ver, cache) for p, (name, ver) in PACKAGES.items()}
    entries = [j for spec in ENTRIES for j in expand(spec, roots[spec["package"]])]
    entries = [e for e in entries if not args.only or any(o in e["id"] + e["source"] for o in args.only.split(","))]
    groups: dict[tuple[str, str, str], list[dict]] = {}
    for e in entries:
        for t in TARGETS:
            if t in e.get("skip", ()):
                continue
            groups.setdefault((e["package"], e["source"], t), []).append(e)
    with ThreadPoolExecutor(args.jobs) as pool:
        futs = {k: pool.submit(compile_group, roots[k[0]], k[1], k[2], v) for k, v in groups.items()}
        results = {k: f.result() for k, f in futs.items()}
    by_id = {e["id"]: e for e in entries}
    manifest = {"triton": triton.__version__, "targets": {t: list(map(str, v)) for t, v in TARGETS.items()},
                "packages": {p: {"pypi": n, "version": v} for p, (n, v) in PACKAGES.items()},
                "files": [], "failed": []}
    for (pkg, rel, target), outs in results.items():
        for o in outs:
            e = by_id[o["id"]]
            meta = {k: e[k] for k in ("package", "source", "kernel", "config", "signature", "constexprs",
                                      "num_warps", "num_stages")}
            meta["version"] = PACKAGES[pkg][1]
            meta["target"] = target
            if "error" in o:
                manifest["failed"].append({**meta, "why": o["error"]})
                continue
            stem = e["id"]
            meta["ttgir"] = f"{target}/{stem}.ttgir"
            if not args.no_write:
                (HERE / target).mkdir(exist_ok=True)
                (HERE / target / f"{stem}.ttgir").write_text(strip_paths(o["ttgir"]))
            if o.get("ptx"):
                meta["ptx"] = f"{target}/{stem}.ptx"
                if not args.no_write:
                    (HERE / target / f"{stem}.ptx").write_text(strip_paths(o["ptx"]))
            manifest["files"].append(meta)
    if args.only and (HERE / "manifest.json").exists():   # keep what this run did not regenerate
        old = json.loads((HERE / "manifest.json").read_text())
        mine = {(e["package"], e["kernel"], e["config"]) for e in entries}
        for key in ("files", "failed"):
            manifest[key] += [m for m in old[key] if (m["package"], m["kernel"], m["config"]) not in mine]
    _prune(manifest, [j for spec in ENTRIES for j in expand(spec, roots[spec["package"]])], args.no_write)
    manifest["files"].sort(key=lambda m: m["ttgir"])
    manifest["failed"].sort(key=lambda m: (m["target"], m["package"], m["kernel"], m["config"]))
    if not args.no_write:
        (HERE / "manifest.json").write_text(json.dumps(manifest, indent=1, default=str) + "\n")
    ok = {t: sum(1 for f in manifest["files"] if f["target"] == t) for t in TARGETS}
    print(f"{len(manifest['files'])} files, {len(manifest['failed'])} failed; per target {ok}")
    for f in manifest["failed"]:
        print(f"  failed {f['target']} {f['package']} {f['kernel']} {f['config']}: {f['why'][:200]}")


if __name__ == "__main__":
    main()
