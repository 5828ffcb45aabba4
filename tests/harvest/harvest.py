"""Harvest every launched ``@triton.jit`` kernel of public PyPI packages, with no hand-written catalogue.

    python tests/harvest/harvest.py [--packages NAME==VERSION ...] [--jobs 2] [--cache DIR] [--out DIR]

Each package is fetched with ``pip download --no-deps`` and unpacked (wheel or sdist). Its Python
files are read with ``ast`` (nothing of the package is imported here):

- kernels: module-level functions decorated with ``triton.jit`` (under ``autotune``/``heuristics``
  too) that are launched somewhere in the package (``kernel[grid](...)``) or that no jit function
  calls (jit helpers are compiled inside their callers);
- signature (:func:`infer_signature`): ``tl.constexpr`` parameters are constexprs; a parameter is a
  pointer when it is the base of an address given to ``tl.load``/``tl.store``/``tl.atomic_*``/
  ``tl.make_block_ptr``/``tl.make_tensor_descriptor`` (through local variables and jit helpers), or
  when the body reads its ``.dtype``; other parameters are ``fp32`` when their name or use is
  float-like (``eps``, ``sm_scale``, a float default), else ``i32``;
- pointer element types (:func:`pointer_dtype`): ``i32`` for index-like names or loaded values used
  as bits/addresses, ``fp8e4nv`` (``fp8e5`` on sm80) when the name says fp8, else ``bf16``
  (``fp16`` in the second configuration);
- constexpr values: the package's ``triton.Config`` lists (the ``autotune`` decorator evaluated in
  the worker, so helper functions and comprehensions work), ``heuristics``, literal keywords of the
  launch sites, the defaults, and name-based values (:func:`name_default`).

Up to three configurations per kernel are compiled for cuda:80, cuda:90 and cuda:100, each kernel
file in a worker subprocess (``worker.py``) with a per-compile timeout; a dead or stuck worker is
restarted after the job that killed it. Written: ``--out`` (``<target>/<package>__<kernel>_<config>
.ttgir`` and ``.ptx``), ``corpus.tar.xz`` (deterministic) and ``manifest.json`` beside this file.
"""
from __future__ import annotations

import argparse
import ast
import io
import json
import lzma
import os
import queue
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGES = ["auto-gptq==0.7.1", "axolotl==0.19.0", "bitsandbytes==0.50.2", "colossalai==0.5.0",
            "cut-cross-entropy==25.1.1", "deepspeed==0.19.8", "flashinfer-python==0.7.4",
            "fms-acceleration-foak==0.7.4", "gptqmodel==7.7.0", "lightllm==0.0.1", "lightning-attn==0.0.5",
            "mlstm-kernels==2.0.6", "sageattention==1.0.6", "torchtitan==0.3.0"]
TARGETS = {"cuda80": ("cuda", 80, 32), "cuda90": ("cuda", 90, 32), "cuda100": ("cuda", 100, 32)}
TIMEOUT_S = 60
MAX_CONFIGS = 3
MAX_DOWNLOAD_MB = 200

_MEMORY_OPS = {"load", "store", "make_block_ptr", "make_tensor_descriptor", "_experimental_make_tensor_descriptor",
               "atomic_add", "atomic_max", "atomic_min", "atomic_cas", "atomic_xchg", "atomic_and", "atomic_or",
               "atomic_xor", "prefetch"}
_PASS_THROUGH = {"multiple_of", "max_contiguous", "max_constancy", "advance", "cast", "to"}
_INT_NAME = re.compile(r"(^|_)(off|offs|offset|offsets|start|stride|strides|idx|index|pos|shift|len|size|num|n|"
                       r"step|row|col|dim|batch|head|seq|token|block|page)(_|$)", re.I)
_PTR_NAME = re.compile(r"(ptr|Ptr|PTR|_p$|^[A-Z][A-Za-z0-9]*$)")
_FLOAT_NAME = re.compile(r"(eps|epsilon|scale|alpha|beta|gamma|temperature|softcap|theta|momentum|^lr$|decay|dropout|"
                         r"p_drop|prob|factor|margin|smoothing|tau|sigma|lambda|clip|rope_base|^base$|logit_cap|"
                         r"inv_freq|sm_scale|weight_decay|penalty)", re.I)
_I32_PTR = re.compile(r"(idx|indices|index|indexes|offsets|offs_ptr|seq_?lens?|seqlen|cu_seq|indptr|lens\b|_lens|"
                      r"lengths|_ids?\b|ids_ptr|_id_ptr|count|sorted|block_table|page_table|req_to_token|positions|"
                      r"\blocs?\b|_loc|mapping|slot|expert_ids|topk_ids|perm|table|num_tokens|lock|mutex|barrier|signal|flag|"
                      r"sem|counter)", re.I)
_BOOL_PREFIX = re.compile(r"^(IS|HAS|USE|ENABLE|EVEN|DO|NEED|APPLY|WITH|RETURN|SAVE|STORE|LOAD|FUSE|ALLOW|"
                          r"CAUSAL|TRANS|TRANSPOSE|REVERSE|INPLACE|NO|SKIP|COMPUTE)(_|$)", re.I)


# ---------------------------------------------------------------------------------------- fetching
def fetch(requirement: str, cache: Path) -> tuple[Path, str]:
    """Download ``NAME==VERSION`` (no dependencies) into ``cache`` and unpack it once; return (root, archive name)."""
    name, _, version = requirement.partition("==")
    root = cache / f"{name}-{version}"
    if (root / ".done").exists():
        return root, (root / ".done").read_text()
    dl = cache / "dl" / f"{name}-{version}"
    dl.mkdir(parents=True, exist_ok=True)
    if not any(dl.iterdir()):
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", requirement, "-d", str(dl)],
                       check=True)
    archive = sorted(dl.iterdir())[0]
    if archive.stat().st_size > MAX_DOWNLOAD_MB * 2**20:
        raise RuntimeError(f"{archive.name} is over {MAX_DOWNLOAD_MB} MB")
    _unpack(archive, root, cache)
    (root / ".done").write_text(archive.name)
    return root, archive.name


def source_folder(spec: str) -> tuple[str, Path]:
    """``NAME==VERSION=DIR`` -> (``NAME==VERSION``, DIR): a package read from a source folder, not downloaded.

    For packages whose sdist cannot be downloaded here (its metadata build imports torch): a
    checkout of the public repository holding the package's import folders at its top.
    """
    name, _, rest = spec.partition("==")
    version, sep, folder = rest.partition("=")
    if not name or not version or not sep or not Path(folder).is_dir():
        raise SystemExit(f"--source {spec!r}: expected NAME==VERSION=DIR with DIR a folder")
    requirement = f"{name}=={version}"
    return requirement, Path(folder).resolve()


def _unpack(archive: Path, root: Path, cache: Path) -> None:
    """Unpack a wheel into ``root``, or an sdist's single top folder's content into ``root``."""
    if root.exists():
        shutil.rmtree(root)
    if archive.suffix == ".whl":
        shutil.unpack_archive(str(archive), str(root), "zip")
        return
    tmp = cache / (root.name + ".unpack")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.unpack_archive(str(archive), str(tmp))
    tops = list(tmp.iterdir())
    shutil.move(str(tops[0] if len(tops) == 1 and tops[0].is_dir() else tmp), str(root))
    shutil.rmtree(tmp, ignore_errors=True)


# ----------------------------------------------------------------------------------------- scanning
def _decorator_name(dec: ast.expr) -> str:
    """``triton.autotune`` for ``@triton.autotune(...)``, ``jit`` for ``@jit``."""
    return ast.unparse(dec.func if isinstance(dec, ast.Call) else dec)


def is_triton_jit(fn: ast.FunctionDef, bare_jit: bool) -> bool:
    """Whether ``fn`` carries ``@triton.jit`` (or a bare ``@jit`` imported from triton when ``bare_jit``)."""
    names = {_decorator_name(d) for d in fn.decorator_list}
    return bool(names & {"triton.jit", "tl.jit", "triton.language.jit"}) or (bare_jit and "jit" in names)


def module_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    """Module-level functions, also those under a top-level ``if``/``try`` (``if HAS_TRITON:``)."""
    out, todo = [], list(tree.body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, ast.FunctionDef):
            out.append(node)
        elif isinstance(node, (ast.If, ast.Try)):
            todo[:0] = node.body
    return out


def jit_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    """The ``@triton.jit`` functions of a parsed module."""
    bare = any(isinstance(n, ast.ImportFrom) and n.module == "triton" and any(a.name == "jit" for a in n.names)
               for n in ast.walk(tree))
    wrapped = jit_wrapped_names(tree)
    return [f for f in module_functions(tree) if is_triton_jit(f, bare) or f.name in wrapped]


def jit_wrapped_names(tree: ast.Module) -> set[str]:
    """Functions made jit by assignment: ``name = triton.jit(name)`` (under other decorators too)."""
    out = set()
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for call in ast.walk(node.value):
                if isinstance(call, ast.Call) and ast.unparse(call.func) in ("triton.jit", "jit") and call.args \
                        and isinstance(call.args[0], ast.Name):
                    out.add(call.args[0].id)
    return out


def _callee(call: ast.Call) -> str | None:
    """The last name of a call's function (``f`` for ``f(...)``, ``mod.f(...)``)."""
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def launched_names(tree: ast.AST) -> set[str]:
    """Names launched as ``name[grid](...)`` (also ``mod.name[grid](...)``)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
            v = node.func.value
            name = v.id if isinstance(v, ast.Name) else v.attr if isinstance(v, ast.Attribute) else None
            if name:
                out.add(name)
    return out


def referenced_names(fn: ast.FunctionDef) -> set[str]:
    """Names a function's body calls or mentions (a combine function given to ``tl.reduce``, say)."""
    out = {c for n in ast.walk(fn) if isinstance(n, ast.Call) and (c := _callee(n))}
    return out | {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} - {fn.name}


def returns_value(fn: ast.FunctionDef) -> bool:
    """Whether a function returns a value (a jit helper; a kernel returns nothing)."""
    return any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(fn))


@dataclass
class Kernel:
    """One harvested kernel: where it is and what the scan inferred."""
    package: str
    source: str
    name: str
    label: str = ""
    signature: dict[str, str] = field(default_factory=dict)
    defaults: dict[str, object] = field(default_factory=dict)
    name_defaults: dict[str, object] = field(default_factory=dict)
    launches: list[dict] = field(default_factory=list)

    def spec(self) -> dict:
        """The JSON the worker receives."""
        return {"package": self.package, "source": self.source, "kernel": self.name, "label": self.label,
                "signature": self.signature, "defaults": self.defaults, "name_defaults": self.name_defaults,
                "launches": self.launches}


def python_files(root: Path) -> list[Path]:
    """The package's ``.py`` files, sorted."""
    return sorted(p for p in root.rglob("*.py") if p.is_file())


def parse_files(root: Path) -> dict[str, ast.Module]:
    """Relative path -> parsed module, for every file that parses and mentions triton."""
    out = {}
    for path in python_files(root):
        try:
            text = path.read_text(errors="replace")
            if "triton" in text and len(text) < 2_000_000:
                out[str(path.relative_to(root))] = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
    return out


def scan(package: str, root: Path) -> list[Kernel]:
    """Every launched jit kernel of an unpacked package, with its inferred signature and values."""
    trees = parse_files(root)
    jits = {rel: jit_functions(t) for rel, t in trees.items()}
    helpers: dict[str, list[ast.FunctionDef]] = {}
    for fns in jits.values():
        for f in fns:
            helpers.setdefault(f.name, []).append(f)
    launched = set().union(*(launched_names(t) for t in trees.values())) if trees else set()
    from_jit = set().union(*(referenced_names(f) for fns in jits.values() for f in fns)) if jits else set()
    sites = launch_sites(trees)
    kernels = []
    for rel, fns in sorted(jits.items()):
        for fn in fns:
            if fn.name not in launched and (fn.name in from_jit or returns_value(fn)):
                continue
            k = Kernel(package, rel, fn.name, signature=infer_signature(fn, helpers),
                       defaults=literal_defaults(fn), launches=sites.get(fn.name, []))
            k.name_defaults = {p: name_default(p) for p, t in k.signature.items() if t == "constexpr"}
            kernels.append(k)
    _label(kernels)
    return kernels


def _label(kernels: list[Kernel]) -> None:
    """File-name labels: the kernel name, prefixed by path parts where a package has it twice."""
    for depth in range(0, 8):
        seen: dict[str, int] = {}
        for k in kernels:
            parts = Path(k.source).with_suffix("").parts
            k.label = ".".join(list(parts[len(parts) - depth:] if depth else []) + [k.name.strip("_")])
            seen[k.label] = seen.get(k.label, 0) + 1
        if all(v == 1 for v in seen.values()):
            return
    for i, k in enumerate(kernels):
        k.label = f"{k.label}.{i}"


# ------------------------------------------------------------------------------------- signatures
def _params(fn: ast.FunctionDef) -> list[ast.arg]:
    return list(fn.args.posonlyargs) + list(fn.args.args)


def _is_constexpr(arg: ast.arg) -> bool:
    return arg.annotation is not None and "constexpr" in ast.unparse(arg.annotation)


def literal_defaults(fn: ast.FunctionDef) -> dict[str, object]:
    """Parameter -> default value, for defaults that are literals (or ``tl.<dtype>`` as a string)."""
    args = _params(fn)
    out = {}
    for a, d in zip(args[len(args) - len(fn.args.defaults):], fn.args.defaults):
        if isinstance(d, ast.Attribute) and ast.unparse(d).startswith("tl."):
            out[a.arg] = ast.unparse(d)
            continue
        try:
            out[a.arg] = ast.literal_eval(d)
        except ValueError:
            pass
    return out


def _assignments(fn: ast.FunctionDef) -> dict[str, list[ast.expr]]:
    """Local name -> every expression assigned to it (``x = e``, ``x += e``, ``x: T = e``)."""
    out: dict[str, list[ast.expr]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, []).append(node.value)
                elif isinstance(t, ast.Tuple) and isinstance(node.value, ast.Tuple):
                    for el, v in zip(t.elts, node.value.elts):
                        if isinstance(el, ast.Name):
                            out.setdefault(el.id, []).append(v)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name) and node.value:
            out.setdefault(node.target.id, []).append(node.value)
    return out


_HELPER_POINTERS: dict[int, set[str]] = {}   # id(jit helper) -> its pointer parameters


class _PointerScan:
    """Which parameters of one jit function are pointers (see :func:`infer_signature`)."""

    def __init__(self, fn: ast.FunctionDef, helpers: dict[str, list[ast.FunctionDef]], stack: tuple = ()):
        self.fn, self.helpers, self.stack = fn, helpers, stack + (fn.name,)
        self.params = [a.arg for a in _params(fn) if not _is_constexpr(a)]
        self.assigned = _assignments(fn)
        self.int_used = _int_used(fn)
        self.memo: dict[str, list[str]] = {}

    def bases(self, expr: ast.expr | None, seen: frozenset = frozenset()) -> list[str]:
        """Parameters that may be the base pointer of an address expression, in source order."""
        if expr is None:
            return []
        if isinstance(expr, ast.Name):
            if expr.id in self.params:
                return [expr.id]
            if expr.id in seen:
                return []
            if expr.id not in self.memo:
                self.memo[expr.id] = list(dict.fromkeys(
                    b for v in self.assigned.get(expr.id, []) for b in self.bases(v, seen | {expr.id})))
            return self.memo[expr.id]
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
            right = self.bases(expr.right, seen) if isinstance(expr.op, ast.Add) else []
            return self.bases(expr.left, seen) + right
        if isinstance(expr, ast.Subscript):
            return self.bases(expr.value, seen)
        if isinstance(expr, ast.IfExp):
            return self.bases(expr.body, seen) + self.bases(expr.orelse, seen)
        if isinstance(expr, ast.Call):
            name = _callee(expr)
            if name in _PASS_THROUGH:
                return self.bases(_pass_through_operand(expr, name), seen)
            if name == "where" and len(expr.args) == 3:
                return self.bases(expr.args[1], seen) + self.bases(expr.args[2], seen)
        return []

    def pick(self, cands: list[str]) -> list[str]:
        """The pointer among an address's candidate bases: not used as an integer, pointer-like name first."""
        cands = list(dict.fromkeys(cands))
        if len(cands) <= 1:
            return cands
        ok = [c for c in cands if c not in self.int_used and not _INT_NAME.search(c)] or \
            [c for c in cands if c not in self.int_used] or cands[:1]
        named = [c for c in ok if _PTR_NAME.search(c)]
        return named or ok[:1]

    def roots(self) -> list[ast.expr]:
        """Address expressions handed to memory operations."""
        out = []
        for node in ast.walk(self.fn):
            if isinstance(node, ast.Call) and _callee(node) in _MEMORY_OPS and isinstance(node.func, ast.Attribute):
                kw = {k.arg: k.value for k in node.keywords}
                first = node.args[0] if node.args else kw.get("pointer", kw.get("base", kw.get("ptr")))
                if first is not None:
                    out.append(first)
        return out

    def pointers(self) -> set[str]:
        """The parameters used as pointers here or by the jit helpers this function calls."""
        found = {b for r in self.roots() for b in self.pick(self.bases(r))}
        for node in ast.walk(self.fn):
            if isinstance(node, ast.Attribute) and node.attr == "dtype" and isinstance(node.value, ast.Name) \
                    and node.value.id in self.params:
                found.add(node.value.id)
            if isinstance(node, ast.Call) and not isinstance(node.func, ast.Subscript):
                found |= self._through_helper(node)
        return found

    def _through_helper(self, call: ast.Call) -> set[str]:
        """Arguments given to a jit helper's pointer parameters."""
        name = _callee(call)
        if name not in self.helpers or name in self.stack:
            return set()
        out = set()
        for helper in self.helpers[name]:
            if id(helper) not in _HELPER_POINTERS:
                _HELPER_POINTERS[id(helper)] = _PointerScan(helper, self.helpers, self.stack).pointers()
            ptrs = _HELPER_POINTERS[id(helper)]
            names = [a.arg for a in _params(helper)]
            pairs = list(zip(names, call.args)) + [(k.arg, k.value) for k in call.keywords if k.arg]
            for pname, arg in pairs:
                if pname in ptrs:
                    out.update(self.pick(self.bases(arg)))
        return out


def _pass_through_operand(call: ast.Call, name: str) -> ast.expr | None:
    """The pointer a pass-through call keeps: ``x`` of ``x.to(...)`` / ``x.cast()``, else its first argument."""
    method = isinstance(call.func, ast.Attribute)
    if method and (name == "to" or (name == "cast" and not call.args)):
        return call.func.value
    return call.args[0] if call.args else None


def _int_used(fn: ast.FunctionDef) -> set[str]:
    """Names used as integers: multiplied, divided, compared, or given to range/arange/cdiv."""
    out = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.FloorDiv, ast.Mod, ast.Div,
                                                                  ast.LShift, ast.RShift)):
            out |= {n.id for n in (node.left, node.right) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Compare):
            out |= {n.id for n in [node.left, *node.comparators] if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Call) and _callee(node) in ("range", "arange", "cdiv", "static_range", "minimum",
                                                              "maximum", "min", "max"):
            out |= {n.id for a in node.args for n in ast.walk(a) if isinstance(n, ast.Name)}
    return out


def _float_used(fn: ast.FunctionDef) -> set[str]:
    """Names combined with a float literal in arithmetic or a comparison."""
    out = set()
    for node in ast.walk(fn):
        operands = [node.left, node.right] if isinstance(node, ast.BinOp) else \
            [node.left, *node.comparators] if isinstance(node, ast.Compare) else []
        if any(isinstance(o, ast.Constant) and isinstance(o.value, float) for o in operands):
            out |= {o.id for o in operands if isinstance(o, ast.Name)}
    return out


def infer_signature(fn: ast.FunctionDef, helpers: dict[str, list[ast.FunctionDef]] | None = None) -> dict[str, str]:
    """Parameter -> Triton type: ``constexpr``, ``*<dtype>`` (see :func:`pointer_dtype`), ``fp32`` or ``i32``."""
    helpers = helpers if helpers is not None else {fn.name: [fn]}
    scan_ = _PointerScan(fn, helpers)
    ptrs = scan_.pointers()
    floats = _float_used(fn)
    defaults = literal_defaults(fn)
    bits, addresses = _loaded_uses(fn, scan_)
    bits |= _sync_pointers(scan_)
    sig = {}
    for a in _params(fn):
        if _is_constexpr(a):
            sig[a.arg] = "constexpr"
        elif a.arg in ptrs:
            sig[a.arg] = "*" + pointer_dtype(a.arg, a.arg in bits or a.arg in addresses)
        elif isinstance(defaults.get(a.arg), float) or a.arg in floats or \
                (_FLOAT_NAME.search(a.arg) and not _INT_NAME.search(a.arg)):
            sig[a.arg] = "fp32"
        else:
            sig[a.arg] = "i32"
    return sig


def _loaded_uses(fn: ast.FunctionDef, scan_: _PointerScan) -> tuple[set[str], set[str]]:
    """Pointer parameters whose loaded values are used as bits (shifts, masks) or inside addresses."""
    loaded: dict[str, set[str]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            calls = [c for c in ast.walk(node.value) if isinstance(c, ast.Call) and _callee(c) == "load" and c.args]
            for c in calls:
                loaded.setdefault(node.targets[0].id, set()).update(scan_.pick(scan_.bases(c.args[0])))
    bits, addresses = set(), set()
    for node in ast.walk(fn):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.RShift, ast.LShift, ast.BitAnd, ast.BitOr,
                                                                  ast.BitXor)):
            for n in ast.walk(node):
                if isinstance(n, ast.Name) and n.id in loaded:
                    bits |= loaded[n.id]
    for root in scan_.roots():
        for n in ast.walk(root):
            if isinstance(n, ast.Name) and n.id in loaded:
                addresses |= loaded[n.id]
    return bits, addresses


def _sync_pointers(scan_: _PointerScan) -> set[str]:
    """Pointers given to ``tl.atomic_cas``/``tl.atomic_xchg`` (locks and flags: integers)."""
    out = set()
    for node in ast.walk(scan_.fn):
        if isinstance(node, ast.Call) and _callee(node) in ("atomic_cas", "atomic_xchg") and node.args:
            out.update(scan_.pick(scan_.bases(node.args[0])))
    return out


def pointer_dtype(name: str, integer_use: bool = False) -> str:
    """A pointer's element type from its name (and whether its loaded values are used as integers)."""
    if integer_use or _I32_PTR.search(name):
        return "i32"
    if "fp8" in name.lower() or "f8" in name.lower():
        return "fp8e4nv"
    return "bf16"


def name_default(name: str) -> object:
    """A constexpr's value when the package gives none, from its name."""
    upper = name.upper()
    if "DTYPE" in upper or upper.endswith("_TYPE") or upper.endswith("_TY"):
        return "tl.bfloat16"
    if _BOOL_PREFIX.search(name) or upper.startswith("IS") or upper.endswith("_ENABLED"):
        return False
    if re.search(r"GROUP_(SIZE_)?M$|GROUP_M|GROUP_SIZE", upper):
        return 8
    if re.search(r"HEAD_?DIM|HEAD_SIZE|DMODEL|D_HEAD|^D$|^DK$|^DV$|^K_DIM|^V_DIM|HIDDEN|EMBED", upper):
        return 128
    if re.search(r"BLOCK|TILE|^B[A-Z]{1,2}$|CHUNK|^BS$", upper):
        return 64
    if upper.startswith("NUM_") or upper.startswith("N_"):
        return 4
    return 64


# ------------------------------------------------------------------------------------ launch sites
def launch_sites(trees: dict[str, ast.Module]) -> dict[str, list[dict]]:
    """Kernel name -> distinct literal keyword sets of its ``kernel[grid](...)`` launches (sorted)."""
    out: dict[str, list[dict]] = {}
    for tree in trees.values():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)):
                continue
            v = node.func.value
            name = v.id if isinstance(v, ast.Name) else v.attr if isinstance(v, ast.Attribute) else None
            lits = {}
            for k in node.keywords:
                try:
                    if k.arg:
                        lits[k.arg] = ast.literal_eval(k.value)
                except ValueError:
                    continue
            if name and lits and all(isinstance(x, (int, float, bool, str, type(None))) for x in lits.values()):
                if lits not in out.setdefault(name, []):
                    out[name].append(lits)
    return {k: sorted(v, key=lambda d: json.dumps(d, sort_keys=True)) for k, v in out.items()}


# ----------------------------------------------------------------------------------------- workers
_ABS = re.compile(r'"(?:/[^"/\n]+)+/([^"/\n]+)"')


def strip_paths(text: str) -> str:
    """Absolute paths in string literals (locations, PTX ``.file``) become their base names.

    >>> strip_paths('loc("/a/b/k.py":3:7) .file 1 "/x/y.py"')
    'loc("k.py":3:7) .file 1 "y.py"'
    """
    return _ABS.sub(lambda m: f'"{m.group(1)}"', text)


def run_worker(root: Path, specs: list[dict], timeout: float = TIMEOUT_S) -> list[dict]:
    """Compile one source file's kernels in ``worker.py``; a job that hangs or kills the process is
    recorded as refused and the worker restarted on the jobs after it."""
    results: list[dict] = []
    done: set[str] = set()
    while True:
        status, current = _run_once(root, specs, sorted(done), timeout, results)
        if status == "ok":
            return results
        if current is None:   # died before its first job: every kernel refused
            results += [{**s, "id": s["label"], "error": f"loader: {status}"} for s in specs]
            return results
        results.append({**current, "error": status})
        done |= {r["id"] for r in results}


def _run_once(root: Path, specs: list[dict], skip: list[str], timeout: float,
              results: list[dict]) -> tuple[str, dict | None]:
    """One worker process; appends its results. Returns ("ok", None) or (why it stopped, job in flight)."""
    proc = subprocess.Popen([sys.executable, str(HERE / "worker.py"), str(root)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tempfile.gettempdir())
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout] + [lines.put(None)], daemon=True).start()
    err: list[str] = []
    threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True).start()
    proc.stdin.write(json.dumps({"specs": specs, "skip": skip}))
    proc.stdin.close()
    current = None
    while True:
        try:
            line = lines.get(timeout=timeout)
        except queue.Empty:
            proc.kill()
            proc.wait()
            return f"timeout after {timeout:g} s", current
        if line is None:
            proc.wait()
            tail = " ".join((err[-1] if err else f"exit {proc.returncode}").split())[-200:]
            return ("ok", None) if proc.returncode == 0 else (f"compiler process died: {tail}", current)
        if not line.startswith("@@harvest "):
            continue
        msg = json.loads(line[len("@@harvest "):])
        if "start" in msg:
            current = msg["start"]
        else:
            results.append(msg)
            current = None


# ----------------------------------------------------------------------------------------- writing
def write_outputs(results: list[dict], out: Path) -> tuple[list[dict], list[dict]]:
    """Write each compiled TTGIR/PTX under ``out``; return (file rows, refusal rows) of the manifest."""
    files, failed = [], []
    keys = ("package", "version", "source", "kernel", "config", "signature", "constexprs", "num_warps",
            "num_stages", "target")
    for r in results:
        meta = {k: r.get(k) for k in keys}
        if "error" in r:
            failed.append({**meta, "why": " ".join(str(r["error"]).split())[:300]})
            continue
        stem = f"{r['package']}__{r['label']}_{r['config']}"
        (out / r["target"]).mkdir(parents=True, exist_ok=True)
        meta["ttgir"] = f"{r['target']}/{stem}.ttgir"
        meta["ptx"] = f"{r['target']}/{stem}.ptx"
        (out / meta["ttgir"]).write_text(strip_paths(r["ttgir"]))
        (out / meta["ptx"]).write_text(strip_paths(r["ptx"]))
        files.append(meta)
    files.sort(key=lambda m: m["ttgir"])
    failed.sort(key=lambda m: json.dumps([m["target"], m["package"], m["source"], m["kernel"], m["config"]]))
    return files, failed


def write_tarball(folder: Path, tarball: Path) -> None:
    """A deterministic ``tar.xz`` of ``folder``'s files: sorted names, zero times and owners."""
    paths = sorted(p for t in TARGETS if (folder / t).is_dir() for p in (folder / t).iterdir() if p.is_file())
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for p in paths:
            data = p.read_bytes()
            info = tarfile.TarInfo(str(p.relative_to(folder)))
            info.size, info.mtime, info.mode, info.uid, info.gid = len(data), 0, 0o644, 0, 0
            tar.addfile(info, io.BytesIO(data))
    tarball.write_bytes(lzma.compress(buf.getvalue(), preset=9))


def scan_package(requirement: str, cache: Path,
                 folder: Path | None = None) -> tuple[dict, list[tuple[Path, list[dict]]]]:
    """Fetch (or read ``folder``) and scan one package; return (its manifest entry, (root, specs) per file)."""
    name, _, version = requirement.partition("==")
    try:
        root, archive = (folder, f"source folder {folder.name}") if folder else fetch(requirement, cache)
    except Exception as e:   # noqa: BLE001 - a package that cannot be fetched is reported, not fatal
        return {"pypi": name, "version": version, "error": " ".join(str(e).split())[:300]}, []
    kernels = scan(name, root)
    by_file: dict[str, list[dict]] = {}
    for k in kernels:
        by_file.setdefault(k.source, []).append({**k.spec(), "version": version})
    entry = {"pypi": name, "version": version, "archive": archive, "kernels": len(kernels)}
    return entry, [(root, specs) for _, specs in sorted(by_file.items())]


def _compile_file(unit: tuple[Path, list[dict]], timeout: float) -> list[dict]:
    """Compile one source file's kernels; every row carries the package version."""
    root, specs = unit
    return [{**r, "version": specs[0]["version"]} for r in run_worker(root, specs, timeout)]


def main() -> None:
    """Parse arguments, harvest every package, write the corpus, tarball and manifest."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--packages", nargs="+", default=PACKAGES, metavar="NAME==VERSION")
    ap.add_argument("--source", action="append", default=[], metavar="NAME==VERSION=DIR",
                    help="also harvest a package from a source folder (no download)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "verilayout-harvest"))
    ap.add_argument("--out", default=None, help="folder of the extracted corpus (default: a temp folder)")
    ap.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds per compile")
    ap.add_argument("--no-store", action="store_true", help="do not write corpus.tar.xz and manifest.json")
    ap.add_argument("--targets", nargs="+", choices=sorted(TARGETS), default=None,
                    help="compile for these targets only (a quick sweep; default all three)")
    ap.add_argument("--max-configs", type=int, default=None,
                    help="configurations per kernel, 1 to 3 (a quick sweep; default 3, and no added variant at 1)")
    args = ap.parse_args()
    if args.targets:
        os.environ["VL_HARVEST_TARGETS"] = ",".join(args.targets)     # read by worker.py
    if args.max_configs:
        os.environ["VL_HARVEST_MAX_CONFIGS"] = str(max(1, min(MAX_CONFIGS, args.max_configs)))
    start = time.time()
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    out = Path(args.out or tempfile.mkdtemp(prefix="harvest-"))
    out.mkdir(parents=True, exist_ok=True)
    for t in TARGETS:
        shutil.rmtree(out / t, ignore_errors=True)
    packages = [] if args.source and args.packages == PACKAGES else args.packages
    scanned = [scan_package(r, cache) for r in sorted(packages)]
    scanned += [scan_package(r, cache, d) for r, d in sorted(map(source_folder, args.source))]
    units = sorted((u for _, us in scanned for u in us), key=lambda u: -len(u[1]))   # biggest files first
    with ThreadPoolExecutor(args.jobs) as pool:
        results = [r for rs in pool.map(lambda u: _compile_file(u, args.timeout), units) for r in rs]
    files, failed = write_outputs(results, out)
    import triton
    manifest = {"triton": triton.__version__, "targets": {t: list(map(str, v)) for t, v in TARGETS.items()},
                "packages": {e["pypi"]: e for e, _ in scanned}, "files": files, "failed": failed}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    if not args.no_store:
        write_tarball(out, HERE / "corpus.tar.xz")
        (HERE / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    summary(manifest, time.time() - start, out)


def summary(manifest: dict, seconds: float, out: Path) -> None:
    """Print pairs per package and target, refusals and the wall time."""
    counts: dict[str, dict[str, int]] = {}
    for f in manifest["files"]:
        counts.setdefault(f["package"], {}).setdefault(f["target"], 0)
        counts[f["package"]][f["target"]] += 1
    for pkg, e in sorted(manifest["packages"].items()):
        print(f"{pkg}=={e['version']}: kernels {e.get('kernels', '-')} pairs {counts.get(pkg, {})}"
              + (f" error {e['error']}" if "error" in e else ""))
    print(f"{len(manifest['files'])} pairs, {len(manifest['failed'])} refused, {seconds:.0f} s; corpus in {out}")


if __name__ == "__main__":
    main()
