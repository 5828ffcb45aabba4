"""The harvester's compile worker: ``python worker.py PACKAGE_ROOT`` with ``{"specs": [...], "skip": [...]}``
on stdin (the specs of one source file's kernels, see ``harvest.Kernel.spec``).

The source file is loaded without importing its package: its imports, assignments, classes and
functions are executed with ``triton``/``tl`` in scope and a permissive stub ``torch`` (imports from
its own package load those files the same way; what fails is left out). jit functions keep their
``triton.autotune``/``triton.heuristics`` decorators, so the package's ``triton.Config`` lists are
evaluated as the package builds them. For each kernel up to three configurations are planned and
compiled for every target; before each compile the worker prints ``{"start": job}``, after it the
job with ``ttgir``/``ptx`` or ``error`` (one JSON line each), so that the parent can tell which job
hung or killed the process.
"""
from __future__ import annotations

import ast
import json
import math
import sys
import os
import types
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402

from harvest import MAX_CONFIGS, TARGETS  # noqa: E402

_TRITON_DECORATORS = {"triton.jit", "jit", "tl.jit", "triton.autotune", "autotune", "triton.heuristics",
                      "heuristics", "triton.language.jit"}
RUNTIME_INT = 1024
_LIMIT = int(os.environ.get("VL_HARVEST_MAX_CONFIGS", MAX_CONFIGS))   # --max-configs of harvest.py
_TARGETS = [t for t in ("cuda90", "cuda80", "cuda100")
            if t in os.environ.get("VL_HARVEST_TARGETS", "cuda90,cuda80,cuda100").split(",")]   # --targets
MARK = "@@harvest "   # prefix of the worker's own stdout lines (loaded modules may print)


class _Stub(types.ModuleType):
    """A module whose every attribute is another stub, callable, and false-ish in comparisons."""

    def __getattr__(self, name: str) -> "_Stub":
        if name.startswith("__"):
            raise AttributeError(name)
        return _Stub(name)

    def __call__(self, *a, **k) -> "_Stub":
        return _Stub("call")

    def __getitem__(self, key) -> "_Stub":
        return _Stub("item")

    def __iter__(self):
        return iter(())

    def __bool__(self) -> bool:
        return False


def install_stubs() -> None:
    """Stub ``torch`` (a CUDA build) and its common submodules."""
    for m in ("torch", "torch.nn", "torch.nn.functional", "torch.distributed", "torch.library", "torch.cuda",
              "torch.autograd", "torch.utils", "torch._dynamo", "torch.nn.parameter", "torch.amp",
              "torch.distributed.tensor", "torch.fx", "torch._inductor", "torch.utils.cpp_extension"):
        sys.modules.setdefault(m, _Stub(m))
    sys.modules["torch"].version = types.SimpleNamespace(hip=None, cuda="12.8")
    sys.modules["torch"].__version__ = "2.9.0"


class Loader:
    """Loads package source files into namespaces (see the module docstring)."""

    def __init__(self, root: Path):
        self.root = root
        self.cache: dict[Path, dict] = {}

    def resolve(self, module: str, current: Path, level: int) -> Path | None:
        """The file of ``from <level dots><module> import ...`` inside the package, if any."""
        if level:
            base = current.parent
            for _ in range(level - 1):
                base = base.parent
        else:
            base = self.root
        cand = base.joinpath(*module.split(".")) if module else base
        for p in (cand.with_suffix(".py"), cand / "__init__.py"):
            if p.is_file() and self.root in p.resolve().parents:
                return p.resolve()
        return None

    def load(self, path: Path) -> dict:
        """The namespace of one source file (loaded once)."""
        path = path.resolve()
        if path in self.cache:
            return self.cache[path]
        ns = {"triton": triton, "tl": tl, "math": math, "__name__": "harvest_" + path.stem, "__file__": str(path)}
        self.cache[path] = ns
        try:
            tree = ast.parse(path.read_text(errors="replace"))
        except SyntaxError:
            return ns
        for node in _flatten(tree.body):
            self._run(node, path, ns)
        return ns

    def _run(self, node: ast.stmt, path: Path, ns: dict) -> None:
        """Execute one top-level statement into ``ns``; failures are ignored."""
        if isinstance(node, ast.ImportFrom) and self._import_own(node, path, ns):
            return
        if isinstance(node, ast.FunctionDef):
            decs = [d for d in node.decorator_list if _dname(d) in _TRITON_DECORATORS]
            if any(_dname(d) in _TRITON_DECORATORS for d in node.decorator_list):
                node.decorator_list = decs
                if _exec(node, path, ns):
                    return
                node.decorator_list = [d for d in decs if "jit" in _dname(d)]
            else:
                node.decorator_list = []
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign, ast.FunctionDef,
                             ast.ClassDef, ast.AugAssign)):
            _exec(node, path, ns)

    def _import_own(self, node: ast.ImportFrom, path: Path, ns: dict) -> bool:
        """``from <own package module> import names``: load that file and copy the names."""
        src = self.resolve(node.module or "", path, node.level)
        if src is None:
            if node.level:
                return True
            top = (node.module or "").split(".")[0]
            return (self.root / top).is_dir() or (self.root / f"{top}.py").is_file()
        other = self.load(src)
        for a in node.names:
            if a.name == "*":
                ns.update({k: v for k, v in other.items() if not k.startswith("_")})
            elif a.name in other:
                ns[a.asname or a.name] = other[a.name]
            else:
                sub = self.resolve(a.name, src if src.name != "__init__.py" else src, 1) \
                    if src.name == "__init__.py" else None
                if sub is not None:
                    ns[a.asname or a.name] = types.SimpleNamespace(**self.load(sub))
        return True


def _flatten(body: list[ast.stmt]) -> list[ast.stmt]:
    """Top-level statements, with the bodies of top-level ``if``/``try`` spliced in."""
    out = []
    for node in body:
        if isinstance(node, ast.If):
            out += _flatten(node.body)
        elif isinstance(node, ast.Try):
            out += _flatten(node.body)
        else:
            out.append(node)
    return out


def _dname(dec: ast.expr) -> str:
    return ast.unparse(dec.func if isinstance(dec, ast.Call) else dec)


def _exec(node: ast.stmt, path: Path, ns: dict) -> bool:
    """Execute one statement; True when it ran."""
    try:
        exec(compile(ast.Module([node], []), str(path), "exec"), ns)  # noqa: S102 - the harvested source
        return True
    except BaseException:   # noqa: BLE001 - SystemExit too: a module may refuse to load
        return False


# ------------------------------------------------------------------------------------------ planning
def unwrap(obj) -> tuple[object, list, list]:
    """(JITFunction, autotune configs, heuristics (name, fn) pairs) of a decorated kernel."""
    configs, heur = [], []
    while not isinstance(obj, triton.runtime.jit.JITFunction):
        if hasattr(obj, "configs") and not configs:
            configs = list(obj.configs)
        if hasattr(obj, "values") and isinstance(obj.values, dict):
            heur = list(obj.values.items()) + heur
        if not hasattr(obj, "fn"):
            raise TypeError(f"not a jit function: {type(obj).__name__}")
        obj = obj.fn
    return obj, configs, heur


def _pick(n: int) -> list[int]:
    """Up to three spread indices of an n-long list: first, middle, last."""
    return sorted({0, n // 2, n - 1})[:_LIMIT] if n else []


def plan(spec: dict, configs: list, heur: list) -> list[dict]:
    """Up to three (tag, constexprs, num_warps, num_stages) configurations of one kernel."""
    sig = spec["signature"]
    consts = [p for p, t in sig.items() if t == "constexpr"]
    base = {p: spec["name_defaults"].get(p) for p in consts}
    base.update({p: v for p, v in spec["defaults"].items() if p in consts})
    launches = [{k: v for k, v in L.items() if k in consts or k in ("num_warps", "num_stages")}
                for L in spec["launches"]]
    launches = [L for i, L in enumerate(launches) if L not in launches[:i]]
    first = launches[0] if launches else {}
    out = []
    if configs:
        for i in _pick(len(configs)):
            c = configs[i]
            vals = {**base, **_only(first, consts), **_only(c.kwargs, consts)}
            out.append((f"at{i}", vals, c.num_warps or 4, c.num_stages or 3))
    elif launches:
        for i, L in enumerate(launches[:_LIMIT]):
            out.append((f"ls{i}", {**base, **_only(L, consts)}, L.get("num_warps", 4), L.get("num_stages", 3)))
    else:
        out.append(("d0", dict(base), 4, 3))
    if len(out) == 1 and _LIMIT > 1:   # one known configuration: add a warps/stages variant
        tag, vals, w, s = out[0]
        out.append((tag[:-1] + "1" if tag != "d0" else "d1", dict(vals), 8 if w == 4 else 4, 2 if s != 2 else 3))
    rows = []
    for i, (tag, vals, w, s) in enumerate(out):
        vals = _heuristics(heur, vals, sig)
        w, s = vals.pop("num_warps", w), vals.pop("num_stages", s)
        vals = {k: v for k, v in vals.items() if sig.get(k) == "constexpr"}
        rows.append({"config": f"{tag}_w{w}_s{s}", "constexprs": vals, "num_warps": int(w), "num_stages": int(s),
                     "fp16": i == 1})
    return rows


def _only(d: dict, keys: list[str]) -> dict:
    return {k: v for k, v in d.items() if k in keys}


class _Arg:
    """A stand-in tensor argument for heuristics lambdas."""
    dtype = _Stub("dtype")

    def data_ptr(self) -> int:
        return 0

    def stride(self, *a) -> int:
        return 1


def _heuristics(heur: list, vals: dict, sig: dict) -> dict:
    """Apply ``triton.heuristics`` values to a configuration (runtime ints are 1024)."""
    args = {p: (_Arg() if t.startswith("*") else 1.0 if t == "fp32" else RUNTIME_INT) for p, t in sig.items()}
    args.update(vals)
    out = dict(vals)
    for name, fn in heur:
        try:
            v = fn(args)
            if isinstance(v, (bool, int, float, str, type(None))):
                out[name] = v
                args[name] = v
        except Exception:   # noqa: BLE001 - the name-based value stays
            continue
    return out


# ----------------------------------------------------------------------------------------- compiling
def _tl_value(v):
    """``"tl.bfloat16"`` -> ``tl.bfloat16``; other values unchanged."""
    return getattr(tl, v[3:]) if isinstance(v, str) and v.startswith("tl.") and hasattr(tl, v[3:]) else v


def concrete_signature(sig: dict, fp16: bool, target: str) -> dict:
    """The signature of one job: fp16 instead of bf16 in the fp16 variant, fp8e5 on sm80."""
    out = {}
    for p, t in sig.items():
        if t == "*bf16" and fp16:
            t = "*fp16"
        if t == "*fp8e4nv" and target == "cuda80":
            t = "*fp8e5"
        out[p] = t
    return out


def compile_one(fn, sig: dict, consts: dict, target: str, warps: int, stages: int) -> dict:
    """Compile one job; ``{"ttgir", "ptx"}`` or ``{"error"}``."""
    backend, arch, warp = TARGETS[target]
    attrs = {(i,): [["tt.divisibility", 16]] for i, t in enumerate(sig.values()) if t.startswith("*") or t == "i32"}
    try:
        k = triton.compile(triton.compiler.ASTSource(fn, sig, {p: _tl_value(v) for p, v in consts.items()},
                                                     attrs=attrs),
                           target=GPUTarget(backend, arch, warp), options={"num_warps": warps, "num_stages": stages})
        return {"ttgir": k.asm["ttgir"], "ptx": k.asm["ptx"]}
    except Exception as e:   # noqa: BLE001 - every refusal is recorded with its reason
        return {"error": _reason(e)}


def compile_with_fallbacks(fn, job: dict) -> tuple[dict, dict]:
    """Compile with the inferred signature; on a dtype refusal retry with fp32 pointers, on a bitwise
    refusal with u8 pointers (in place of bf16/fp16). Returns (result, signature used)."""
    sig = job["signature"]
    res = compile_one(fn, sig, job["constexprs"], job["target"], job["num_warps"], job["num_stages"])
    err = res.get("error", "")
    for needle, dtype in (("dtype", "*fp32"), ("cannot cast", "*fp32"), ("invalid operands", "*u8")):
        if needle not in err:
            continue
        alt = {p: (dtype if t in ("*bf16", "*fp16") else t) for p, t in sig.items()}
        retry = compile_one(fn, alt, job["constexprs"], job["target"], job["num_warps"], job["num_stages"])
        if "error" not in retry:
            return retry, alt
    return res, sig


def _reason(e: BaseException) -> str:
    """One line: the exception, its first line and its cause."""
    text = str(e).strip()
    head = text.splitlines()[0] if text else ""
    cause = e.__cause__ or e.__context__
    why = f"{type(cause).__name__}: {cause}" if cause is not None else " ".join(text.splitlines()[-1:])
    return " ".join(f"{type(e).__name__} {head} {why}".split())[:300]


def emit(msg: dict) -> None:
    print(MARK + json.dumps(msg), flush=True)


def run(root: Path, specs: list[dict], skip: set[str]) -> None:
    """Plan and compile every kernel of ``specs`` (one source file)."""
    loader = Loader(root)
    ns = loader.load(root / specs[0]["source"])
    for spec in specs:
        base = {k: spec[k] for k in ("package", "source", "kernel", "label")}
        try:
            fn, configs, heur = unwrap(ns[spec["kernel"]])
            rows = plan(spec, configs, heur)
        except Exception as e:   # noqa: BLE001
            if spec["label"] in skip:
                continue
            emit({**base, "id": spec["label"], "config": None, "target": None, "signature": spec["signature"],
                  "constexprs": None, "num_warps": None, "num_stages": None, "error": "not loaded: " + _reason(e)})
            continue
        for row in rows:
            refused, sig90 = None, None
            for target in _TARGETS:
                job = {**base, "id": f"{spec['label']}_{row['config']}_{target}", "config": row["config"],
                       "target": target, "signature": concrete_signature(spec["signature"], row["fp16"], target),
                       "constexprs": row["constexprs"], "num_warps": row["num_warps"],
                       "num_stages": row["num_stages"]}
                if job["id"] in skip:
                    continue
                if refused is not None:
                    emit({**job, "error": "not tried: cuda90 refused this configuration"})
                    continue
                emit({"start": job})
                if target == "cuda90":
                    res, sig = compile_with_fallbacks(fn, job)
                else:
                    sig = concrete_signature(sig90 or job["signature"], False, target)
                    res = compile_one(fn, sig, job["constexprs"], target, job["num_warps"], job["num_stages"])
                if target == "cuda90":
                    sig90 = sig
                    refused = res.get("error")
                emit({**job, "signature": sig, **res})


def main() -> None:
    install_stubs()
    req = json.loads(sys.stdin.read())
    run(Path(sys.argv[1]), req["specs"], set(req["skip"]))


if __name__ == "__main__":
    main()
