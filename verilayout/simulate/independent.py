"""Independent checks of an emitted wgmma kernel: what nvcc compiled, not what the renderer meant.

Nothing here reads the renderer (``verilayout.emit``) or the numbers it derived (the manifest's
descriptors, copy terms and fragment tables). From the manifest only the *specification* is
taken: the instruction shape, the types, each shared operand's layout **text**, its major-ness
and its byte offset in the kernel's buffer. Every value the kernel uses comes from the PTX that
``nvcc -arch=sm_90a -ptx`` writes for ``kernel.cu`` (read by :mod:`verilayout.frontends.ptx`,
evaluated over z3 bit-vectors by :mod:`verilayout.prove.ptx_values`), or from the kernel's index
functions compiled for the host and run. The checks:

* ``instruction``: each ``wgmma.mma_async`` has the opcode of the shape and types, one per
  K-block, the operand order of the PTX ISA (D, A descriptor or A registers, B descriptor,
  scale-d, imm-scale-a, imm-scale-b[, imm-trans-a][, imm-trans-b]), scales ``1``, ``imm-trans``
  equal to the operand's major-ness (1 = MN-major), and scale-d ``1`` after the first K-block.
* ``copy``: every ``st.shared`` before the first wgmma, evaluated for every thread and every
  iteration of its loop (induction registers ``r = init + step * j``), stores the global element
  its ``ld.global`` read (row-major A ``M x K``, B ``K x N``, the kernel's interface) at
  ``buffer + layout(mn, k)``, the layout of the manifest's text placed at its offset, with the
  buffer 1024-byte aligned; every element is written.
* ``descriptor``: bits 16-63 of each descriptor are one constant for every shared-memory base a
  CTA can have (the low 18 bits of the address hold its offset, higher bits, e.g. a cluster
  rank, are free), so the 14-bit start field never carries into LBO; at each sampled base the
  descriptor value, read from the PTX, is proved (:func:`verilayout.prove.wgmma.check_descriptor`) to read
  K-block ``i`` of the layout exactly where the copy put it.
* ``order``: PTX ISA 9.7.15 (``wgmma.fence``, ``wgmma.commit_group``, ``wgmma.wait_group``) and
  ``membar/fence`` (``fence.proxy.async``: generic-proxy writes made visible to the async proxy
  that wgmma reads shared memory through; CUTLASS ``cutlass/arch/barrier.h``,
  ``fence_view_async_shared``): every ``st.shared`` is
  followed by ``fence.proxy.async`` and then a barrier before a wgmma reads shared memory;
  ``wgmma.fence`` separates any other access of a wgmma's registers from it; every wgmma is
  committed; an accumulator register is not touched while a group holding a wgmma that writes it
  may be pending (``wait_group N`` completes all but the ``N`` newest groups).
* ``a-registers`` (A from registers): the kernel run with global A holding each element's index;
  every A register each wgmma receives holds the elements of the PTX A fragment.
* ``d-store``: each ``st.global`` of an accumulator register (f32/s32) writes
  ``D(row, col)`` of the PTX D fragment (:func:`verilayout.hw.nvidia.wgmma.fragment`).
* ``spills``: ``ptxas -arch=sm_90a -v`` on that PTX spills 0 bytes (a spill is a warning for these
  one-tile demo kernels: slow, not wrong; the GEMM check makes it a finding).
* ``index-functions``: the kernel's ``a_smem_offset``/``b_smem_offset``, ``d_index`` and
  ``a_index``, compiled for the host by nvcc and run, equal the layout and the PTX fragments on
  every coordinate.

Assumptions (printed with the report): the shared-memory base of the kernel's variable is a
multiple of 16 whose low 18 bits leave room for 227 KB; threads 0..127; CTA 0; kernel parameters
``(A, B, D)`` in this order.

>>> c = KernelCheck("order", "proved", "ok")
>>> IndependentReport((c,), ()).ok, c.to_dict()["check"]
(True, 'order')
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import z3

from verilayout.core.smt import solve
from verilayout.errors import LayoutError
from verilayout.frontends.cuda_program import cuda_namespace, program_words, ptxas_report
from verilayout.frontends.ptx import Instr, parse_ptx
from verilayout.frontends.shared_text import load_operand_layout
from verilayout.hw.nvidia.descriptor import decode
from verilayout.frontends.names import parse_shape
from verilayout.hw.nvidia.wgmma import dtype_bits, fragment, fragment_coords
from verilayout.hw.nvidia.ptx_model import Addr, Imm, Operand, PredPair, Reg, Vec
from verilayout.prove.ptx_values import SMEM, PtxValues, constant
from verilayout.prove.z3_numpy import evaluate
from verilayout.prove.wgmma import intended_tile, check_descriptor
from verilayout.simulate.ptx_run import run_threads

__all__ = ["KernelCheck", "IndependentReport", "nvcc_path", "compile_ptx", "ptxas_spills", "imm_operands",
           "tool_version", "compile_cache_dir",
           "WgmmaManifest", "WgmmaOperand",
           "HOST_NVCC_FLAGS",
           "check_wgmma_source",
           "check_directory", "ASSUMPTIONS", "SMEM_SAMPLES"]

NVCC_FLAGS = ("-std=c++17", "-gencode=arch=compute_90a,code=sm_90a", "-lineinfo", "-DVL_NO_MAIN")
#: nvcc flags of a host-only run (a driver around kernel.cu whose host code is run, no kernel
#: launched): the host code is nvcc's as ever (cudafe++, then the host compiler); the device pass,
#: which nvcc needs for the kernels' launch stubs, writes unoptimised compute_90a PTX and no SASS
#: (no ptxas: the device code is checked by :func:`compile_ptx` and :func:`ptxas_spills`).
HOST_NVCC_FLAGS = ("-std=c++17", "-gencode=arch=compute_90a,code=compute_90a", "-Xcicc", "-O0")
#: Shared-memory bases the concrete checks evaluate at: offset 0, a misaligned raw base (the
#: kernel must align it up), and the same with a cluster rank at bit 24 (above the 18-bit window).
SMEM_SAMPLES = (0x0, 0x410, (1 << 24) | 0x410)
MAX_DYNAMIC_SMEM = 232448
ASSUMPTIONS = (
    "the shared variable's address is a multiple of 16 and its low 18 bits leave room for 227 KB; "
    f"bits 18 and up are free (cluster rank); concrete checks at bases "
    f"{', '.join(hex(s) for s in SMEM_SAMPLES)}",
    "threads 0..127 of CTA 0; the kernel's parameters are (A, B, D), A row-major M x K, B row-major "
    "K x N, D row-major M x N",
    "the copy and the stores are run on the PTX for all 128 threads (ptx_run); the fence / commit / "
    "wait order is read in the PTX's text order (the emitted kernels are straight-line from the "
    "copy loops on)")
_FIELDS = ((1 << 64) - 1) & ~0xFFFF


@dataclass(frozen=True)
class KernelCheck:
    """One independent check: ``check`` (instruction, copy, descriptor, order, d-store,
    index-functions, compile, spills), ``status`` proved / counterexample / unknown / warning (a
    finding about performance, not the result: spills of a demo kernel), a one-line
    ``message`` naming what is wrong, and where (``ptx_line``, ``source``: kernel.cu:line).

    >>> KernelCheck("copy", "counterexample", "A(0, 1) written at 0x12", 66).to_dict()["ptx_line"]
    66
    """

    check: str
    status: str
    message: str
    ptx_line: int | None = None
    source: str | None = None
    data: dict = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict:
        return {"check": self.check, "status": self.status, "message": self.message,
                "ptx_line": self.ptx_line, "source": self.source, **self.data}


@dataclass(frozen=True)
class IndependentReport:
    """Every check run on one kernel and the assumptions they used; ``ok`` when all are proved.

    >>> r = IndependentReport((KernelCheck("copy", "counterexample", "x"),), ASSUMPTIONS)
    >>> r.ok, [c.check for c in r.failures]
    (False, ['copy'])
    """

    checks: tuple[KernelCheck, ...]
    assumptions: tuple[str, ...] = ASSUMPTIONS

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.status in ("proved", "warning") for c in self.checks)

    @property
    def failures(self) -> tuple[KernelCheck, ...]:
        return tuple(c for c in self.checks if c.status not in ("proved", "warning"))

    def summary(self) -> str:
        kinds = sorted({c.check for c in self.checks})
        n = sum(c.status == "proved" for c in self.checks)
        warn = [c.message for c in self.checks if c.status == "warning"]
        return (f"{n} of {len(self.checks)} independent checks proved ({', '.join(kinds)})"
                + "".join(f"; warning: {w}" for w in warn))

    def to_dict(self) -> dict:
        return {"ok": self.ok, "checks": [c.to_dict() for c in self.checks],
                "assumptions": list(self.assumptions)}


# ----- compiling -------------------------------------------------------------------------------

def nvcc_path() -> str | None:
    """The nvcc on PATH (``$NVCC`` first), or None.

    >>> nvcc_path() is None or nvcc_path().endswith("nvcc")
    True
    """
    env = os.environ.get("NVCC")
    return env if env and os.path.isfile(env) else shutil.which("nvcc")


def run_nvcc(args: list[str], cwd: str) -> tuple[int, str]:
    """``(exit code, stdout + stderr)`` of ``nvcc args`` run in ``cwd``; ``LayoutError`` without nvcc."""
    nvcc = nvcc_path()
    if nvcc is None:
        raise LayoutError("nvcc is not installed: the independent check compiles kernel.cu")
    p = subprocess.run([nvcc, *args], cwd=cwd, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout + p.stderr


@functools.lru_cache(maxsize=64)   # keyed by the source text; one compile per kernel per process
def compile_ptx(source: str, arch: str = "sm_90a") -> tuple[bool, str]:
    """``(True, PTX)`` of ``source`` compiled by ``nvcc -arch=<arch> -ptx -lineinfo`` (default
    sm_90a; with
    ``VL_NO_MAIN``), or ``(False, first error line)``. Kept on disk by content
    (:func:`compile_cache_dir`; key: the source, the flags and ``nvcc --version``), so a kernel
    text compiled by another process of the same run (a pytest worker) is not compiled again.

    >>> compile_ptx.cache_info().maxsize       # one compile per kernel text per process
    64
    >>> compile_ptx.__wrapped__.__name__
    'compile_ptx'
    """
    flags = [f.replace("90a", arch[3:]) for f in NVCC_FLAGS]
    key = _cache_key("nvcc", tool_version("nvcc"), " ".join(flags), source)
    hit = _cache_load(key)
    if hit is not None:
        return bool(hit["ok"]), str(hit["text"])
    ok, text = _nvcc_ptx(source, flags)
    _cache_store(key, {"ok": ok, "text": text})
    return ok, text


def _nvcc_ptx(source: str, flags: list[str]) -> tuple[bool, str]:
    """``nvcc <flags> -ptx`` on ``source`` in a fresh folder: ``(True, PTX)`` or ``(False, first error line)``."""
    with tempfile.TemporaryDirectory(prefix="vl_ind_") as d:
        with open(os.path.join(d, "kernel.cu"), "w", encoding="utf-8") as f:
            f.write(source)
        rc, out = run_nvcc([*flags, "-ptx", "kernel.cu", "-o", "kernel.ptx"], d)
        if rc != 0:
            errs = [ln for ln in out.splitlines() if "error" in ln] or out.splitlines() or ["?"]
            return False, errs[0].strip()
        with open(os.path.join(d, "kernel.ptx"), encoding="utf-8") as f:
            return True, f.read()


def _ptxas_path() -> str | None:
    nvcc = nvcc_path()
    ptxas = shutil.which("ptxas") or (os.path.join(os.path.dirname(nvcc), "ptxas") if nvcc else None)
    return ptxas if ptxas and os.path.isfile(ptxas) else None


def tool_version(tool: str) -> str | None:
    """Law: the output of ``<tool> --version`` for ``nvcc`` or ``ptxas`` (the one :func:`nvcc_path`
    and the independent checks run, looked up on each call), or None when it is not installed or
    does not answer; part of every compile cache key, so an upgraded toolkit never reads
    another's entries.

    >>> v = tool_version("nvcc"); v is None or "release" in v
    True
    """
    path = nvcc_path() if tool == "nvcc" else _ptxas_path()
    return None if path is None else _version_of(path)


@functools.lru_cache(maxsize=8)   # keyed by the tool's path; one --version per tool per process
def _version_of(path: str) -> str | None:
    try:
        p = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{path}\n{p.stdout}" if p.returncode == 0 else None


def compile_cache_dir() -> str | None:
    """Law: the folder of the compile cache: ``$VERILAYOUT_COMPILE_CACHE`` if set (empty: no
    cache), else ``$XDG_CACHE_HOME/verilayout/compile`` (``~/.cache`` without it); CI's fresh
    ``XDG_CACHE_HOME`` shares it between the workers of one run.

    >>> d = compile_cache_dir(); d is None or d.endswith("compile") or "VERILAYOUT_COMPILE_CACHE" in os.environ
    True
    """
    own = os.environ.get("VERILAYOUT_COMPILE_CACHE")
    if own is not None:
        return own or None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "verilayout", "compile")


def _cache_key(*parts: str | None) -> str | None:
    """The sha256 of the parts (None when a part, a tool's version, is unknown: no caching)."""
    if any(p is None for p in parts):
        return None
    h = hashlib.sha256()
    for p in parts:
        h.update(hashlib.sha256(p.encode()).digest())
    return h.hexdigest()


def _cache_path(key: str) -> str | None:
    folder = compile_cache_dir()
    return os.path.join(folder, key[:2], key + ".json") if folder else None


def _cache_load(key: str | None) -> dict | None:
    """The entry under ``key``, or None (no key, no folder, absent or unreadable)."""
    path = _cache_path(key) if key else None
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            entry = json.load(f)
    except (OSError, ValueError):
        return None
    return entry if isinstance(entry, dict) else None


def _cache_store(key: str | None, entry: dict) -> None:
    """Write ``entry`` under ``key`` atomically (a temporary file renamed); a folder that cannot
    be written is no error (the next run compiles again)."""
    path = _cache_path(key) if key else None
    if path is None:
        return
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(entry, f)
        os.replace(tmp, path)
    except OSError:
        return


def compiled_checks(source: str, arch: str = "sm_90a") -> tuple[list[KernelCheck], str | None]:
    """Law: ``([compile, spills], PTX)`` when ``source`` compiles for ``arch`` (:func:`compile_ptx`,
    then :func:`ptxas_spills`), else ``([compile counterexample naming nvcc's first error], None)``;
    the start every emitted-kernel check shares.

    >>> checks, ptx = compiled_checks("this is not CUDA")
    >>> [c.check for c in checks], checks[0].status, ptx is None
    (['compile'], 'counterexample', True)
    """
    ok, ptx = compile_ptx(source, arch)
    if not ok:
        return [KernelCheck("compile", "counterexample", f"kernel.cu does not compile for {arch}: {ptx}")], None
    return [KernelCheck("compile", "proved", f"kernel.cu compiles for {arch} (nvcc -ptx)"), ptxas_spills(ptx, arch)], ptx


@functools.lru_cache(maxsize=64)   # keyed by the PTX text; one ptxas run per kernel per process
def ptxas_spills(ptx: str, arch: str = "sm_90a") -> KernelCheck:
    """``ptxas -arch=<arch> -v`` (default sm_90a) on the PTX: a ``spills`` check, proved when every function
    spills 0 bytes (stores and loads), with the register counts ptxas reports. Kept on disk by
    content like :func:`compile_ptx` (key: the PTX, the arch and ``ptxas --version``).

    >>> ptxas_spills.cache_info().maxsize
    64
    """
    ptxas = _ptxas_path()
    if ptxas is None:
        return KernelCheck("spills", "unknown", "ptxas is not installed")
    key = _cache_key("ptxas -v", tool_version("ptxas"), arch, ptx)
    hit = _cache_load(key)
    if hit is not None and {"status", "message"} <= set(hit):
        return KernelCheck("spills", str(hit["status"]), str(hit["message"]))
    check = _ptxas_check(ptxas, ptx, arch)
    _cache_store(key, {"status": check.status, "message": check.message})
    return check


def _ptxas_check(ptxas: str, ptx: str, arch: str) -> KernelCheck:
    """The ``spills`` check of one ``ptxas -arch=<arch> -v`` run on ``ptx``."""
    with tempfile.TemporaryDirectory(prefix="vl_ptxas_") as d:
        path = os.path.join(d, "kernel.ptx")
        with open(path, "w", encoding="utf-8") as f:
            f.write(ptx)
        p = subprocess.run([ptxas, f"-arch={arch}", "-v", path, "-o", os.devnull],
                           capture_output=True, text=True, timeout=600)
    text = p.stdout + p.stderr
    if p.returncode != 0:
        first = next((ln for ln in text.splitlines() if "error" in ln), text[:200])
        return KernelCheck("spills", "counterexample", f"ptxas rejects the PTX: {first.strip()}")
    spills, regs = ptxas_report(text)
    if not spills:
        return KernelCheck("spills", "unknown", "ptxas -v printed no spill figures")
    if any(a or b for a, b in spills):
        return KernelCheck("spills", "counterexample", f"ptxas spills {max(a for a, _ in spills)} bytes "
                     f"(stores) / {max(b for _, b in spills)} bytes (loads) at {max(regs or [0])} "
                     "registers")
    return KernelCheck("spills", "proved", f"ptxas -v: 0 bytes spilled, {max(regs or [0])} registers "
                 "per thread")


# ----- the checks ---------------------------------------------------------------------------------

def _ptx_regs(*ops: Operand) -> list[str]:
    """The registers the decoded operands name (vector elements and address bases included), in
    order, special registers left out."""
    out: list[str] = []
    for op in ops:
        if isinstance(op, Reg):
            if not op.name.startswith(("%tid", "%ctaid", "%ntid", "%nctaid", "%laneid", "%warpid")):
                out.append(op.name)
        elif isinstance(op, Vec):
            out += _ptx_regs(*op.items)
        elif isinstance(op, PredPair):
            out += _ptx_regs(*op.regs)
        elif isinstance(op, Addr) and isinstance(op.base, Reg):
            out += _ptx_regs(op.base)
    return out


def _imm(op: Operand) -> int | None:
    """An immediate operand's value, else None."""
    return op.value if isinstance(op, Imm) else None


@dataclass(frozen=True)
class WgmmaOperand:
    """One operand of a wgmma demo manifest (``emit wgmma``): ``source`` ``smem`` (with the
    stage layout text, its major and its byte offset) or ``reg`` (A from registers)."""
    source: str
    layout: str | None = None
    major: str | None = None
    offset_bytes: int | None = None


@dataclass(frozen=True)
class WgmmaManifest:
    """The specification of a wgmma demo manifest (``emit wgmma``), read once: the instruction
    shape text (``m64n8k16``) and its parsed ``dims``, the input and accumulator types, the K
    extent and the two operands.

    Law: :meth:`from_dict` of a manifest missing a key, or with an operand source other than
    ``smem``/``reg``, is a one-line ``LayoutError`` naming it.

    >>> m = WgmmaManifest.from_dict({"shape": "m64n8k16", "dtype": "f16", "acc": "f32", "k": 32,
    ...     "a": {"source": "reg"}, "b": {"source": "smem", "layout": "L", "major": "K", "offset_bytes": 0}})
    >>> m.dims, m.k, m.operand("b").offset_bytes
    ((64, 8, 16), 32, 0)
    """
    shape: str
    dims: tuple
    dtype: str
    acc: str
    k: int
    a: WgmmaOperand
    b: WgmmaOperand

    def operand(self, name: str) -> WgmmaOperand:
        """The operand ``a`` or ``b``."""
        return self.a if name == "a" else self.b

    @staticmethod
    def from_dict(man: object) -> "WgmmaManifest":
        """Law: the typed manifest of the JSON object ``man`` (class docstring)."""
        if isinstance(man, WgmmaManifest):
            return man
        if not isinstance(man, dict):
            raise LayoutError(f"manifest: expected a JSON object, got {type(man).__name__}")
        for key in ("shape", "dtype", "acc", "k", "a", "b"):
            if key not in man:
                raise LayoutError(f"manifest: missing '{key}'")
        ops = {}
        for name in ("a", "b"):
            op = man[name]
            if not isinstance(op, dict) or op.get("source") not in ("smem", "reg"):
                raise LayoutError(f"manifest: {name}.source must be smem or reg")
            if op["source"] == "smem":
                for key in ("layout", "major", "offset_bytes"):
                    if key not in op:
                        raise LayoutError(f"manifest: {name} is missing '{key}'")
            ops[name] = WgmmaOperand(op["source"], op.get("layout"), op.get("major"),
                                     op.get("offset_bytes"))
        return WgmmaManifest(man["shape"], parse_shape(man["shape"]), man["dtype"], man["acc"],
                             int(man["k"]), ops["a"], ops["b"])


def imm_operands(dtype: str, a_source: str = "smem") -> list[str]:
    """Law: the immediates after scale-d, in PTX ISA order (9.7.15.5.2, ``wgmma.mma_async``), for
    the input type ``dtype`` and A's source (``smem`` or ``reg``): none for integer types,
    the two scales for fp8, and for f16/bf16 also the transposes (A's only from shared memory).

    >>> imm_operands("f16"), imm_operands("s8"), imm_operands("bf16", "reg")
    (['imm-scale-a', 'imm-scale-b', 'imm-trans-a', 'imm-trans-b'], [], ['imm-scale-a', 'imm-scale-b', 'imm-trans-b'])
    """
    if dtype in ("s8", "u8", "b1"):
        return []
    if dtype in ("e4m3", "e5m2"):                 # PTX ISA: fp8 has scales, no transposes
        return ["imm-scale-a", "imm-scale-b"]
    names = ["imm-scale-a", "imm-scale-b"]
    if dtype in ("f16", "bf16"):
        if a_source == "smem":
            names.append("imm-trans-a")
        names.append("imm-trans-b")
    return names


class _Ctx:
    def __init__(self, man, mod, ev, func, src_of):
        self.man, self.mod, self.ev, self.func, self.src_of = man, mod, ev, func, src_of
        self.instrs = ev.code
        self.checks: list[KernelCheck] = []

    def add(self, check, status, message, ins: Instr | None = None, **data):
        self.checks.append(KernelCheck(check, status, message, ins.line if ins else None,
                                 self.src_of(ins) if ins else None, data))


def check_wgmma_source(man: WgmmaManifest | dict, source: str, *, host: bool = True) -> IndependentReport:
    """Compile ``source`` (an emitted ``kernel.cu``) and run every independent check against the
    specification in ``man`` (shape, types, layout texts, majors, offsets: a
    :class:`WgmmaManifest`, or its JSON object, read once here).

    Law: a check is ``proved`` only when it holds for every thread, loop iteration and sampled
    shared-memory base; a wrong kernel gets a ``counterexample`` naming the instruction and the
    coordinate; whatever cannot be evaluated is ``unknown``.

    >>> check_wgmma_source({"shape": "m64n8k16"}, "")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: manifest: missing 'dtype'
    >>> check_wgmma_source.__name__
    'check_wgmma_source'
    """
    man = WgmmaManifest.from_dict(man)
    checks, ptx = compiled_checks(source)
    if ptx is None:
        return IndependentReport(tuple(checks))
    if checks[1].status == "counterexample":       # the demo kernels: slow, not wrong
        checks[1] = KernelCheck("spills", "warning", checks[1].message + " (a performance finding: the "
                                "result is unaffected)")
    checks += _ptx_checks(man, ptx)
    if host:
        checks += _host_checks(man, source)
    return IndependentReport(tuple(checks))


def _ptx_checks(man: WgmmaManifest, ptx: str) -> list[KernelCheck]:
    mod = parse_ptx(ptx)
    wg = [i for i in mod.instrs if i.opcode.startswith("wgmma.mma_async")]
    if not wg:
        return [KernelCheck("instruction", "counterexample", "the PTX holds no wgmma.mma_async")]
    func = wg[0].func
    ev = PtxValues(mod, func, smem_names=tuple(mod.shared) or ("global_smem",), kernel_inputs=True)
    ctx = _Ctx(man, mod, ev, func, lambda i: i.loc)
    _instruction_checks(ctx, wg)
    bases = _copy_checks(ctx, wg)
    _descriptor_checks(ctx, wg, bases)
    _order_checks(ctx)
    _d_store_checks(ctx, wg)
    if man.a.source == "reg":
        _a_register_checks(ctx)
    return ctx.checks


def _a_register_checks(ctx: _Ctx) -> None:
    """A from registers: run the kernel with global A holding each element's own index (split
    over as many runs as the element width needs), and read the A registers every wgmma gets:
    register j of thread t must hold elements ``per*j .. per*j+per-1`` (low bits first) of the PTX
    A fragment at K-block ``kb`` (PTX ISA 9.7.15.5.1.1, "Register Fragments")."""
    man = ctx.man
    m, n, kx = man.dims
    k = man.k
    eb = dtype_bits(man.dtype) // 8
    w = 8 * eb
    fa = fragment(man.dims, "A", man.dtype)
    per = 4 // eb
    passes = max(1, -(-int(m * k - 1).bit_length() // w))
    lo = PARAM_VALUES[0]
    got = None
    for p in range(passes):
        def load(addr, bits, p=p):
            idx = (addr.astype(np.int64) - lo) // eb
            return np.where((idx >= 0) & (idx < m * k), (idx >> (p * w)) & ((1 << w) - 1), 0)
        run = run_threads(ctx.mod, ctx.func, range(128), param_values=PARAM_VALUES, shared_base=0,
                          load_value=load)
        wgs = [e for e in run.events if e.op.startswith("wgmma.mma_async")] if run.complete else []
        if not run.complete or any(e.values.get("a_regs") is None for e in wgs) or not wgs:
            ctx.add("a-registers", "unknown", "the A registers could not be read from a run of the "
                    f"PTX ({run.reason or 'no A register operands'})")
            return
        regs = np.stack([e.values["a_regs"] for e in wgs]).astype(np.int64)   # (kb, reg, thread)
        part = np.stack([(regs >> (w * s)) & ((1 << w) - 1) for s in range(per)], axis=-1)
        got = part << (p * w) if got is None else got | (part << (p * w))
    nkb = got.shape[0]
    coord = np.array(fragment_coords(man.dims, "A", man.dtype))   # (t, e, rc)
    el = np.arange(fa.registers)
    have = got.transpose(0, 2, 1, 3)[:, :, el // per, el % per]                    # (kb, t, e)
    want = coord[None, :, :, 0] * k + (np.arange(nkb) * kx)[:, None, None] + coord[None, :, :, 1]
    bad = np.argwhere(have != want)        # in (kb, t, e) order: the first the loops would meet
    if len(bad):
        kb, t, e = (int(x) for x in bad[0])
        (j, s), (r, c), h = divmod(e, per), (int(x) for x in coord[t, e]), int(have[kb, t, e])
        ctx.add("a-registers", "counterexample", f"wgmma {kb} (K-block {kb}): thread "
                f"{t}'s A register {j} holds A({h // k}, {h % k}) in element "
                f"{s}; the PTX A fragment reads A({r}, {kb * kx + c}) there")
        return
    ctx.add("a-registers", "proved", f"every A register of all 128 threads holds, at each of the "
            f"{nkb} wgmmas, the elements of the PTX A fragment (the kernel run on the PTX)")


# --- instruction ---

def _instruction_checks(ctx: _Ctx, wg: list[Instr]) -> None:
    man = ctx.man
    m, n, kx = man.dims
    k = man.k
    want = f"wgmma.mma_async.sync.aligned.{man.shape}.{man.acc}.{man.dtype}.{man.dtype}"
    nkb = k // kx
    if len(wg) != nkb:
        ctx.add("instruction", "counterexample", f"{len(wg)} wgmma.mma_async in the PTX, but K = {k} "
                f"needs {nkb} K-blocks of {kx}", wg[0])
    imms = imm_operands(man.dtype, man.a.source)
    a_reg = man.a.source == "reg"
    bad = sum(_instruction_findings(ctx, idx, i, want, imms) for idx, i in enumerate(wg))
    if not bad and len(wg) == nkb:
        ctx.add("instruction", "proved", f"{nkb} x {want}: operands D, "
                f"{'{A regs}' if a_reg else 'A desc'}, B desc, scale-d"
                f"{''.join(', ' + x for x in imms)}; scales 1, trans as the majors, "
                "scale-d accumulates after K-block 0", wg[0])


def _instruction_findings(ctx: _Ctx, idx: int, i: Instr, want: str, imms: list[str]) -> int:
    """Law: adds a counterexample for each way wgmma ``idx`` differs from the manifest's opcode,
    operand form, immediates (scales 1, trans as the majors) and scale-d (0 or a zero accumulator
    at K-block 0, 1 after); returns how many it added."""
    man = ctx.man
    a_reg = man.a.source == "reg"
    bad = 0
    ops, args = i.operands, i.args
    where = f"wgmma {idx} (K-block {idx})"
    if i.opcode != want:
        ctx.add("instruction", "counterexample", f"{where} is {i.opcode}, expected {want}", i)
        return 1
    if len(ops) != 4 + len(imms):
        ctx.add("instruction", "counterexample", f"{where} has {len(ops)} operands; the PTX ISA "
                f"form for these operands is D, A, B, scale-d{''.join(', ' + x for x in imms)}", i)
        return 1
    if a_reg != isinstance(args[1], Vec):
        ctx.add("instruction", "counterexample", f"{where}: operand A is {ops[1]!r}, expected "
                + ("a vector of A registers" if a_reg else "a 64-bit descriptor"), i)
        bad += 1
    if isinstance(args[2], Vec):
        ctx.add("instruction", "counterexample", f"{where}: operand B must be a descriptor", i)
        bad += 1
    for name, text, arg in zip(imms, ops[4:], args[4:]):
        v = _imm(arg)
        if name.startswith("imm-scale") and v != 1:
            ctx.add("instruction", "counterexample", f"{where}: {name} is {text} (1 keeps the "
                    "operand's sign; -1 negates it)", i)
            bad += 1
        if name.startswith("imm-trans"):
            op = man.operand(name[-1])
            need = 1 if op.major == "MN" else 0
            if v != need:
                ctx.add("instruction", "counterexample", f"{where}: {name} is {text}, but "
                        f"{name[-1].upper()} is {op.major}-major (imm-trans "
                        f"{need} reads it so)", i)
                bad += 1
    sd = _scale_d(ctx, i)
    if idx > 0 and sd is not True:
        ctx.add("instruction", "counterexample", f"{where}: scale-d is "
                f"{'0' if sd is False else 'not a constant'}: D = A*B discards K-blocks "
                f"0..{idx - 1} (it must accumulate, D = A*B + D)", i)
        bad += 1
    if idx == 0 and sd is not False:
        dregs = _ptx_regs(args[0])
        zero = all(constant(ctx.ev.reg(r)) == 0 for r in dregs)
        if not zero:
            ctx.add("instruction", "counterexample", f"{where}: scale-d is not 0 and the "
                    "accumulator registers are not all zero before the first K-block", i)
            bad += 1
    return bad


def _scale_d(ctx: _Ctx, w: Instr) -> bool | None:
    """The scale-d predicate of a wgmma: the latest setp of that name before it, as a constant."""
    name = w.args[3]
    pos = ctx.ev.index[w.line]
    for j in range(pos - 1, -1, -1):
        i = ctx.instrs[j]
        if i.opcode.startswith("setp") and i.args and i.args[0] == name:
            b = ctx.ev.setp(i)
            if b is None:
                return None
            v = z3.simplify(b)
            return True if z3.is_true(v) else False if z3.is_false(v) else None
    imm = _imm(name)
    return None if imm is None else bool(imm)


# --- copy ---

PARAM_VALUES = {0: 0x10000000, 1: 0x20000000, 2: 0x30000000}   # A, B, D: disjoint, aligned


def _copy_checks(ctx: _Ctx, wg: list[Instr]) -> dict:
    """Run the 128 threads up to the first wgmma (:func:`verilayout.simulate.ptx_run.run_threads`)
    at each sampled shared base; every ``st.shared`` of a loaded global element is placed in A or
    B by the element's address. Returns {smem sample: {operand: (buffer base, address table)}}."""
    man = ctx.man
    ops = {name: man.operand(name) for name in ("a", "b") if man.operand(name).source == "smem"}
    m, n, kx = man.dims
    k = man.k
    ext = {"a": (m, k), "b": (n, k)}
    eb = dtype_bits(man.dtype) // 8
    result: dict = {}
    first_line = wg[0].line
    failed: set = set()
    for smem in SMEM_SAMPLES:
        run = run_threads(ctx.mod, ctx.func, range(128), param_values=PARAM_VALUES,
                          shared_base=smem, stop=lambda i: i.line == first_line)
        if not run.complete:
            for name in ops:
                if name not in failed:
                    ctx.add("copy", "unknown", f"operand {name.upper()}: the copy could not be run "
                            f"({run.reason})")
                    failed.add(name)
            break
        stores = [e for e in run.events if e.op.startswith("st.shared")]
        for name, op in ops.items():
            if name in failed:
                continue
            r = _copy_table(ctx, name, stores, ext[name], eb)
            if isinstance(r, KernelCheck):
                ctx.checks.append(r)
                failed.add(name)
                continue
            base = _placed_buffer(ctx, name, r, ext[name], smem)
            if base is None:
                failed.add(name)
                continue
            result.setdefault(smem, {})[name] = (base, r[0])
    for name, op in ops.items():
        if name not in failed:
            mn, kk = ext[name]
            ctx.add("copy", "proved", f"operand {name.upper()}: every one of the {mn * kk} elements "
                    f"is stored at buffer + layout(mn, k) of {op.layout} (offset "
                    f"{op.offset_bytes}), buffer 1024-aligned, at {len(SMEM_SAMPLES)} shared bases "
                    "(all 128 threads run on the PTX)")
    for smem, got in result.items():
        if len(got) == 2 and got["a"][0] != got["b"][0]:
            ctx.add("copy", "counterexample", f"A and B are placed in different buffers "
                    f"({got['a'][0]:#x}, {got['b'][0]:#x}) at smem base {smem:#x}")
    return {s: g for s, g in result.items() if not failed & set(g)}


def _placed_buffer(ctx: _Ctx, name: str, table, shape, smem: int) -> int | None:
    """Law: the buffer base B such that the copy stored every element (mn, k) of operand
    ``name`` at B + layout(mn, k), with B 1024-byte aligned at or above ``smem``; None (and a
    counterexample added) where the addresses are not one such translate of the layout."""
    man = ctx.man
    op = man.operand(name)
    addr, st_of = table
    mn, kk = shape
    want = intended_tile(load_operand_layout(op.layout, dtype=man.dtype), dtype=man.dtype,
                         base_address=int(op.offset_bytes)).fn.table() // 8
    if want.shape != (mn, kk):
        ctx.add("copy", "counterexample", f"the layout {op.layout} covers "
                f"{want.shape[0]}x{want.shape[1]}, the operand is {mn}x{kk}")
        return None
    base = int(addr[0, 0]) - int(want[0, 0])
    diff = np.argwhere(addr - base != want)
    if diff.size:
        a, b = (int(x) for x in diff[0])
        ctx.add("copy", "counterexample", f"the copy writes {name.upper()}(mn={a}, k={b}) at "
                f"buffer byte {int(addr[a, b]) - base:#x}, the layout {op.layout} at "
                f"offset {op.offset_bytes} puts it at {int(want[a, b]):#x} "
                f"({diff.shape[0]} of {mn * kk} elements differ; smem base {smem:#x})",
                st_of.get((a, b)))
        return None
    if base % 1024 or base < smem:
        ctx.add("copy", "counterexample", f"operand {name.upper()}: the layout is placed at "
                f"buffer {base:#x}, not a 1024-byte aligned address at or above the shared "
                f"variable {smem:#x} (the swizzle pattern repeats every 1024 bytes)",
                st_of.get((0, 0)))
        return None
    return base


def _copy_table(ctx: _Ctx, name: str, stores, shape, eb: int):
    """(address table (mn, k), the store instruction per element) or a failing KernelCheck."""
    mn, kk = shape
    total = mn * kk
    lo = PARAM_VALUES[0 if name == "a" else 1]
    addr = np.full((mn, kk), -1, dtype=np.int64)
    st_of: dict = {}
    for ev in stores:
        org = ev.values.get("origin")
        if org is None:
            continue
        org = org.astype(np.int64)
        sel = (org >= lo) & (org < lo + total * eb)
        if not sel.any():
            continue
        g = org[sel] - lo
        s = ev.values["addr"].astype(np.int64)[sel]
        if (g % eb).any():
            return KernelCheck("copy", "counterexample", f"the copy of {name.upper()} loads from a global "
                         "address that is not a whole element", ev.line)
        idx = g // eb
        if name == "a":
            r, c = idx // kk, idx % kk                    # A row-major M x K: (m, k)
        else:
            c, r = idx // mn, idx % mn                    # B row-major K x N: (k, n)
        prev = addr[r, c]
        clash = (prev >= 0) & (prev != s)
        if clash.any():
            i0 = int(np.nonzero(clash)[0][0])
            return KernelCheck("copy", "counterexample", f"{name.upper()}(mn={r[i0]}, k={c[i0]}) is written "
                         "to two addresses", ev.line, ev.instr.loc if ev.instr else None)
        addr[r, c] = s
        for rr, cc in zip(r.tolist(), c.tolist()):
            st_of.setdefault((rr, cc), ev.instr)
    miss = np.argwhere(addr < 0)
    if miss.size:
        a, b = (int(x) for x in miss[0])
        return KernelCheck("copy", "counterexample", f"the copy never writes {name.upper()}(mn={a}, k={b}) "
                     f"({miss.shape[0]} of {total} elements unwritten)")
    return addr, st_of


# --- descriptors ---

def _smem_assumption() -> z3.BoolRef:
    low = SMEM & 0x3FFFF
    return z3.And(SMEM & 15 == 0, z3.ULE(low, (1 << 18) - MAX_DYNAMIC_SMEM - 1024))


def _descriptor_checks(ctx: _Ctx, wg: list[Instr], bases: dict) -> None:
    """Law: for each shared-memory operand, proved when every wgmma's descriptor keeps bits 16-63
    constant over shared bases and reads its K-block of the layout where the copy put it."""
    man = ctx.man
    for slot, name in ((1, "a"), (2, "b")):
        op = man.operand(name)
        if op.source != "smem":
            continue
        values: dict[str, list[str]] = {}
        ok = sum(_descriptor_holds(ctx, ins, slot, name, kb, bases, values)
                 for kb, ins in enumerate(wg)
                 if len(ins.args) > slot and not isinstance(ins.args[slot], Vec))
        if ok == len(wg):
            ctx.add("descriptor", "proved", f"{name.upper()}: all {ok} descriptors keep bits 16-63 "
                    "constant for every shared base (14-bit start field) and read their K-block of "
                    f"{op.layout} where the copy wrote it, at {len(SMEM_SAMPLES)} shared bases",
                    wg[0], descriptors=values)


def _descriptor_holds(ctx: _Ctx, ins: Instr, slot: int, name: str, kb: int, bases: dict,
                      values: dict) -> bool:
    """Law: True when the descriptor operand ``slot`` of wgmma ``kb`` is one value per shared
    base, its bits 16-63 do not depend on the base, and at every sampled base it reads operand
    ``name``'s K-block where the copy put it; else a finding is added (and False)."""
    where = f"{name.upper()} descriptor of wgmma {kb} (K-block {kb})"
    e = ctx.ev.operand(ins.args[slot], 64)
    if e is None:
        ctx.add("descriptor", "unknown", f"{where}: {ins.operands[slot]} is not evaluable", ins)
        return False
    free = {str(v) for v in z3.z3util.get_vars(e)} - {"smem_base"}
    if free:
        ctx.add("descriptor", "unknown", f"{where} depends on {sorted(free)[:3]} (not one "
                "value per shared base)", ins)
        return False
    if constant(e & z3.BitVecVal(_FIELDS, 64), _smem_assumption()) is None:
        ctx.add("descriptor", "counterexample", f"{where}: LBO/SBO/base-offset/layout bits "
                "change with the shared-memory address: the start address is not confined "
                f"to its 14-bit field{_field_example(e)}", ins)
        return False
    major = "MN" if _trans_of(ins, imm_operands(ctx.man.dtype, ctx.man.a.source), name) == 1 else "K"
    for smem in SMEM_SAMPLES:
        placed = bases.get(smem, {})
        if name not in placed:
            ctx.add("descriptor", "unknown", f"{where}: the copy of {name.upper()} was not "
                    "proved, so where it lives is unknown", ins)
            return False
        value = int(evaluate(e, {"smem_base": np.uint64(smem)}))
        values.setdefault(f"{smem:#x}", []).append(f"{value:#018x}")
        failed = _descriptor_mismatch(ctx, value, name, kb, major, placed)
        if failed:
            ctx.add("descriptor", "counterexample", f"{where} = {value:#018x} at shared base "
                    f"{smem:#x} {failed}", ins)
            return False
    return True


def _field_example(e) -> str:
    """Law: two shared bases (both meeting the assumption) at which the descriptor ``e`` has
    different bits 16-63, phrased for a finding; empty if the solver finds none."""
    s = z3.Solver()
    s.add(_smem_assumption())
    a0 = z3.BitVec("a0", 32)
    s.add(z3.substitute(e & _FIELDS, (SMEM, a0)) != e & _FIELDS)
    s.add(z3.substitute(_smem_assumption(), (SMEM, a0)))
    if solve(s) != z3.sat:
        return ""
    mdl = s.model()
    return (f" (shared base {mdl.eval(SMEM, True).as_long():#x} gives bits 16-63 "
            f"{mdl.eval(e & _FIELDS, True).as_long():#018x}, base "
            f"{mdl.eval(a0, True).as_long():#x} gives "
            f"{mdl.eval(z3.substitute(e & _FIELDS, (SMEM, a0)), True).as_long():#018x})")


def _descriptor_mismatch(ctx: _Ctx, value: int, name: str, kb: int, major: str,
                         placed: dict) -> str | None:
    """Law: None when descriptor ``value`` reads K-block ``kb`` of operand ``name``'s layout at
    the buffer the copy placed it in (check_descriptor proves it); else why not, naming a swap of
    A and B when the descriptor reads the other operand's K-block instead."""
    man = ctx.man
    m, n, _ = man.dims
    op, other = man.operand(name), "b" if name == "a" else "a"
    buf = placed[name][0]
    local = (buf & 0x3FFFF) + int(op.offset_bytes)
    v = check_descriptor(value, load_operand_layout(op.layout, dtype=man.dtype), dtype=man.dtype, major=major, k_block=kb,
                         base_address=local, mn=m if name == "a" else n)
    if v.status == "proved":
        return None
    hint = ""
    if other in placed and man.operand(other).source == "smem":
        ob = (placed[other][0] & 0x3FFFF) + int(man.operand(other).offset_bytes)
        w2 = check_descriptor(value, load_operand_layout(man.operand(other).layout, dtype=man.dtype),
                              dtype=man.dtype,
                              major="MN" if man.operand(other).major == "MN" else "K",
                              k_block=kb, base_address=ob, mn=n if name == "a" else m)
        if w2.status == "proved":
            hint = (f"; it reads {other.upper()}'s K-block {kb} instead: the A and B "
                    "descriptor operands are swapped")
    return (f"({decode(value)}) does not read {name.upper()}'s layout {op.layout} where the "
            f"copy put it (buffer {buf:#x} + {op.offset_bytes}): {v.reason}{hint}")


def _trans_of(ins: Instr, imms: list[str], name: str) -> int:
    key = f"imm-trans-{name}"
    if key not in imms:
        return 0
    i = 4 + imms.index(key)
    return _imm(ins.args[i]) if i < len(ins.args) else 0


# --- ordering ---

def _order_checks(ctx: _Ctx) -> None:
    """Program order of the straight-line part (loops are before the first wgmma)."""
    # long: one pass of a state machine over program order; every branch updates the same fence,
    # commit and wait state, which splitting would have to thread through each helper
    writes: list[Instr] = []          # st.shared not yet fenced
    fenced: list[Instr] = []          # fenced, waiting for a barrier
    pending: list[tuple[int, set]] = []   # committed groups: (group id, registers)
    uncommitted: set = set()
    uncommitted_ins: list[Instr] = []
    touched_since_fence: dict[str, Instr] = {}
    fence_seen = False
    bad = 0
    wg_regs: set = set()
    for i in ctx.instrs:
        op = i.opcode
        if op.startswith("st.shared") or op.startswith("st.volatile.shared") or \
                op.startswith("atom.shared"):
            writes.append(i)
        elif op.startswith("fence.proxy.async"):
            fenced += writes
            writes = []
        elif op.startswith(("bar.sync", "barrier.sync", "barrier.cta.sync", "bar.cta.sync")):
            fenced = []
        elif op.startswith("wgmma.fence"):
            fence_seen = True
            touched_since_fence = {}
        elif op.startswith("wgmma.mma_async"):
            if writes:
                ctx.add("order", "counterexample", f"wgmma at PTX line {i.line} reads shared memory "
                        f"that st.shared at PTX line {writes[0].line} wrote with no "
                        "fence.proxy.async in between (generic-proxy writes are not visible to the "
                        "async proxy wgmma reads through)", i)
                bad += 1
                writes = []
            if fenced:
                ctx.add("order", "counterexample", f"wgmma at PTX line {i.line}: the "
                        f"fence.proxy.async after st.shared (line {fenced[0].line}) is not followed by "
                        "a CTA barrier, so other threads' writes may not be fenced yet", i)
                bad += 1
                fenced = []
            regs = set(_ptx_regs(i.args[0])) | (set(_ptx_regs(i.args[1]))
                                                 if isinstance(i.args[1], Vec) else set())
            if not fence_seen:
                ctx.add("order", "counterexample", f"wgmma at PTX line {i.line} is not preceded by "
                        "wgmma.fence (required before the first wgmma.mma_async)", i)
                bad += 1
                fence_seen = True
            clash = sorted(r for r in regs if r in touched_since_fence)
            if clash:
                ctx.add("order", "counterexample", f"wgmma at PTX line {i.line} uses {clash[0]}, which "
                        f"PTX line {touched_since_fence[clash[0]].line} accessed after the last "
                        "wgmma.fence", i)
                bad += 1
            uncommitted |= regs
            uncommitted_ins.append(i)
            wg_regs |= regs
        elif op.startswith("wgmma.commit_group"):
            pending.append((len(pending), set(uncommitted)))
            uncommitted, uncommitted_ins = set(), []
        elif op.startswith("wgmma.wait_group"):
            nwait = _imm(i.args[0]) if i.args else None
            if nwait is None:
                ctx.add("order", "unknown", "wgmma.wait_group without an immediate", i)
                continue
            pending = pending[len(pending) - nwait:] if nwait < len(pending) else pending
            if nwait == 0:
                pending = []
        else:
            used = set(_ptx_regs(*i.args))
            for r in used & wg_regs:
                touched_since_fence.setdefault(r, i)
            busy = set().union(*(g for _, g in pending)) | uncommitted
            hit = sorted(used & busy)
            if hit:
                why = ("a wgmma not yet committed (no wgmma.commit_group)" if hit[0] in uncommitted
                       else "a wgmma group that may still be pending (wgmma.wait_group N completes "
                       "all but the N most recent groups; this read needs N = 0)")
                ctx.add("order", "counterexample", f"PTX line {i.line} ({op}) accesses accumulator "
                        f"{hit[0]} written by {why}", i)
                bad += 1
                pending, uncommitted = [], set()
    if uncommitted_ins:
        ctx.add("order", "counterexample", f"wgmma at PTX line {uncommitted_ins[0].line} is never "
                "committed (no wgmma.commit_group after it)", uncommitted_ins[0])
        bad += 1
    elif pending:
        ctx.add("order", "counterexample", "the kernel ends with wgmma groups pending (no "
                "wgmma.wait_group 0 after the last commit)")
        bad += 1
    if not bad:
        ctx.add("order", "proved", "st.shared -> fence.proxy.async -> barrier before every wgmma; "
                "wgmma.fence before the wgmmas and after other accesses of their registers; every "
                "wgmma committed and waited for (N = 0) before its accumulators are read")


# --- D stores ---

def _d_store_checks(ctx: _Ctx, wg: list[Instr]) -> None:
    """Run all 128 threads through the whole kernel; after the wgmmas each accumulator register
    holds a tag (:mod:`verilayout.simulate.ptx_run`), so each ``st.global`` to D says which
    element of which thread it writes where."""
    man = ctx.man
    f = fragment(man.dims, "D", man.dtype, acc=man.acc)
    m, n, _ = man.dims
    half = man.acc == "f16"
    eb = 2 if half else 4
    coord = np.array(fragment_coords(man.dims, "D", man.dtype, acc=man.acc),
                     dtype=np.int64)
    want = coord[:, :, 0] * n + coord[:, :, 1]
    run = run_threads(ctx.mod, ctx.func, range(128), param_values=PARAM_VALUES, shared_base=0)
    if not run.complete:
        ctx.add("d-store", "unknown", f"the epilogue could not be run ({run.reason})")
        return
    got = np.full((128, f.registers), -1, dtype=np.int64)
    last = max(e.seq for e in run.events if e.op.startswith("wgmma.mma_async"))
    lo = PARAM_VALUES[2]
    for ev in run.events:
        if ev.seq < last or not ev.op.startswith("st.global"):
            continue
        vals = [ev.values.get(f"a{j}") for j in range(8) if f"a{j}" in ev.values]
        addr = ev.values["addr"].astype(np.int64) - lo
        for j, v in enumerate(vals):
            if v is None:
                continue
            v = v.astype(np.int64) & (0xFFFF if half else 0xFFFFFFFF)
            e = v - 1
            ok = (e >= 0) & (e < f.registers)
            x = (addr + eb * j) // eb
            t = np.asarray(run.threads)[ev.lanes]
            if ((addr + eb * j) % eb).any() or (x < 0).any() or (x >= m * n).any():
                ctx.add("d-store", "counterexample", f"an accumulator is stored outside D's {m}x{n} "
                        "elements (or not on an element)", ev.instr)
                return
            got[t[ok], e[ok]] = x[ok]
    bad = np.argwhere(got != want)
    if bad.size:
        t, e = (int(v) for v in bad[0])
        what = "never stored" if got[t, e] < 0 else \
            f"stored at D({got[t, e] // n}, {got[t, e] % n})"
        ctx.add("d-store", "counterexample", f"thread {t}'s accumulator element {e} is {what}; the "
                f"PTX D fragment puts it at D({want[t, e] // n}, {want[t, e] % n}) "
                f"({bad.shape[0]} of {got.size} differ)")
        return
    ctx.add("d-store", "proved", f"every accumulator element of all 128 threads is stored at its "
            f"D(row, col) of the PTX {man.shape} D fragment (the kernel run on the PTX)")


# ----- host-compiled index functions --------------------------------------------------------------

def _host_checks(man: WgmmaManifest, source: str) -> list[KernelCheck]:
    """Law: each index function of kernel.cu, compiled for the host and run on every argument,
    equals the layout or PTX fragment it stands for (one KernelCheck per function)."""
    ns = cuda_namespace(source)
    if ns is None:
        return [KernelCheck("index-functions", "unknown", "kernel.cu has no namespace vl_<tag>")]
    main, wanted = _host_program(man, ns)
    out = _host_run(source, main)
    if isinstance(out, KernelCheck):
        return [out]
    return _host_compare(man, np.array(program_words(out), dtype=np.int64), wanted)


def _host_program(man: WgmmaManifest, ns: str) -> tuple[str, list[tuple[str, str, int]]]:
    """Law: a ``main`` that prints, one a line, every value of the index functions of namespace
    ``ns`` the manifest uses, and the (kind, operand, extent) of each block it prints, in order."""
    m, n, kx = man.dims
    k = man.k
    body = ["int main() {"]
    wanted = []
    for name, ext in (("a", m), ("b", n)):
        if man.operand(name).source == "smem":
            body.append(f'  for (uint32_t mn = 0; mn < {ext}u; ++mn) for (uint32_t k = 0; k < {k}u; '
                        f'++k) std::printf("%u\\n", {ns}::{name}_smem_offset(mn, k));')
            wanted.append(("smem", name, ext))
    fd = fragment(man.dims, "D", man.dtype, acc=man.acc)
    body.append(f'  for (uint32_t t = 0; t < 128u; ++t) for (uint32_t e = 0; e < {fd.registers}u; '
                f'++e) std::printf("%u\\n", {ns}::d_index(t, e));')
    wanted.append(("d", "d", fd.registers))
    if man.a.source == "reg":
        fa = fragment(man.dims, "A", man.dtype)
        body.append(f'  for (uint32_t kb = 0; kb < {k // kx}u; ++kb) for (uint32_t t = 0; t < 128u; '
                    f'++t) for (uint32_t e = 0; e < {fa.registers}u; ++e) '
                    f'std::printf("%u\\n", {ns}::a_index(t, e, kb));')
        wanted.append(("areg", "a", fa.registers))
    body += ["  return 0;", "}"]
    return "\n".join(body) + "\n", wanted


def _host_compare(man: WgmmaManifest, vals: np.ndarray, wanted) -> list[KernelCheck]:
    """Law: one KernelCheck per printed block of ``vals``: proved where it equals, value for value, the
    layout (smem offsets) or the PTX fragment (d_index, a_index) it stands for."""
    m, n, kx = man.dims
    k = man.k
    fd = fragment(man.dims, "D", man.dtype, acc=man.acc)
    checks, at = [], 0
    for kind, name, ext in wanted:
        if kind == "smem":
            op = man.operand(name)
            want = intended_tile(load_operand_layout(op.layout, dtype=man.dtype), dtype=man.dtype,
                                 base_address=int(op.offset_bytes)).fn.table() // 8
            got = vals[at:at + ext * k].reshape(ext, k)
            at += ext * k
            bad = np.argwhere(got != want)
            fn = f"{name}_smem_offset"
            if bad.size:
                a, b = (int(v) for v in bad[0])
                checks.append(KernelCheck("index-functions", "counterexample", f"{fn}({a}, {b}) = "
                                    f"{int(got[a, b]):#x} compiled for the host, but the layout "
                                    f"{op.layout} at offset {op.offset_bytes} puts "
                                    f"{name.upper()}({a}, {b}) at {int(want[a, b]):#x} "
                                    f"({bad.shape[0]} of {got.size} differ)"))
            else:
                checks.append(KernelCheck("index-functions", "proved", f"{fn} equals the layout on all "
                                    f"{got.size} coordinates (host-compiled)"))
        elif kind == "d":
            coord = np.array(fragment_coords(fd.shape, "D", fd.dtype, acc=fd.acc))[:, :ext]
            want = coord[:, :, 0] * n + coord[:, :, 1]
            got = vals[at:at + 128 * ext].reshape(128, ext)
            at += 128 * ext
            checks.append(_frag_check("d_index", got, want, n, "D"))
        else:
            fa = fragment(man.dims, "A", man.dtype)
            nkb = k // kx
            coord = np.array(fragment_coords(fa.shape, "A", fa.dtype))[:, :ext]
            want = (coord[None, :, :, 0] * k + (np.arange(nkb) * kx)[:, None, None]
                    + coord[None, :, :, 1])
            got = vals[at:at + nkb * 128 * ext].reshape(nkb, 128, ext)
            at += nkb * 128 * ext
            checks.append(_frag_check("a_index", got.reshape(-1, ext), want.reshape(-1, ext), k, "A"))
    return checks


def _frag_check(fn: str, got, want, width: int, what: str) -> KernelCheck:
    bad = np.argwhere(got != want)
    if bad.size:
        t, e = (int(v) for v in bad[0])
        return KernelCheck("index-functions", "counterexample", f"{fn}: row {t} element {e} is "
                     f"{what}({got[t, e] // width}, {got[t, e] % width}) compiled for the host; the "
                     f"PTX {what} fragment says {what}({want[t, e] // width}, {want[t, e] % width}) "
                     f"({bad.shape[0]} of {got.size} differ)")
    return KernelCheck("index-functions", "proved", f"{fn} equals the PTX {what} fragment on all "
                 f"{got.size} (thread, element) pairs (host-compiled)")


@functools.lru_cache(maxsize=64)   # keyed by (kernel source, driver); one build per process
def _host_run_cached(source: str, main: str) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory(prefix="vl_host_") as d:
        with open(os.path.join(d, "kernel.cu"), "w", encoding="utf-8") as f:
            f.write(source)
        with open(os.path.join(d, "driver.cu"), "w", encoding="utf-8") as f:
            f.write('#define VL_NO_MAIN\n#include "kernel.cu"\n' + main)
        rc, out = run_nvcc([*HOST_NVCC_FLAGS, "driver.cu", "-o", "driver"], d)
        if rc != 0:
            errs = [ln for ln in out.splitlines() if "error" in ln] or out.splitlines() or ["?"]
            return False, errs[0].strip()
        p = subprocess.run([os.path.join(d, "driver")], capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            return False, f"the host driver exited {p.returncode}"
        return True, p.stdout


def _host_run(source: str, main: str):
    ok, out = _host_run_cached(source, main)
    if not ok:
        return KernelCheck("index-functions", "counterexample", f"the index functions do not build or "
                     f"run on the host: {out}")
    return out


# ----- directories --------------------------------------------------------------------------------

def read_manifest(directory: str) -> Any:
    """The parsed ``manifest.json`` of an emitted directory; every way it can be unreadable is a
    one-line :class:`LayoutError` naming the file (and the line, for bad JSON).

    >>> read_manifest("/nonexistent")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: /nonexistent: no manifest.json (expected a directory written by `verilayout emit`)
    """
    path = os.path.join(directory, "manifest.json")
    if not os.path.isfile(path):
        raise LayoutError(f"{directory}: no manifest.json (expected a directory written by "
                          "`verilayout emit`)")
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise LayoutError(f"{path}: line {e.lineno}, col {e.colno}: {e.msg}") from None
    except UnicodeDecodeError as e:
        raise LayoutError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except RecursionError:
        raise LayoutError(f"{path}: JSON nested too deeply") from None
    except OSError as e:
        raise LayoutError(f"cannot read {path}: {e.strerror}") from None


def check_directory(directory: str, *, host: bool = True) -> IndependentReport:
    """The independent checks of a directory written by ``verilayout emit wgmma``.

    >>> check_directory("/nonexistent")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: /nonexistent: no manifest.json (expected a directory written by `verilayout emit`)
    """
    path = os.path.join(directory, "manifest.json")
    man = read_manifest(directory)
    if not isinstance(man, dict) or man.get("kind") != "wgmma":
        raise LayoutError(f"{path}: not a wgmma emission (a GEMM directory is checked by "
                          "verilayout.simulate.gemm_check, or `verilayout simulate DIR`)")
    src = os.path.join(directory, "kernel.cu")
    if not os.path.isfile(src):
        raise LayoutError(f"{directory}: no kernel.cu")
    with open(src, encoding="utf-8") as f:
        source = f.read()
    return check_wgmma_source(man, source, host=host)
