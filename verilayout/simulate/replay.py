"""The executable model of an emitted kernel: run it on integer data in numpy, without a GPU.

``simulate(DIR)`` reads what ``verilayout emit`` wrote, never the objects it was built
from: ``manifest.json`` (the numbers the kernel source is generated from) and the
kernel file. Where nvcc is installed, ``kernel.cu`` of a wgmma emission is compiled and
checked independently of the renderer (:mod:`verilayout.simulate.independent`: PTX-level
wgmma operands, descriptors, copy, fence/commit/wait order, D stores, host-compiled index
functions): its findings judge the file itself. The model below replays the manifest, so it
speaks for the file only where the file's code is what the manifest generates (comments and
spacing aside): a kernel that differs is reported at the first differing line, with the
independent check's findings as the causes. A GEMM (``emit gemm``) is checked by :mod:`verilayout.simulate.gemm_check`
alone (tensor maps, TMA, descriptors, the mbarrier ring, the epilogue); it needs nvcc.

* **wgmma** (:func:`simulate_wgmma`). The *kernel side* is the manifest: the
  global-to-shared copy (its terms and swizzle) builds a shared-memory byte image of
  random integer-valued A and B; the descriptors, the ``imm-trans`` flags and the
  instruction string are what the kernel passes to ``wgmma``; the fragment tables say
  where the kernel loads A registers from and stores D to. The *hardware side* is the
  models of :mod:`verilayout.hw`: the descriptor address model reads each K-block's
  operands out of the image, the PTX fragment tables of the instruction's shape say
  which element each register holds. D must equal ``A @ B`` exactly; the first
  differing coordinate is reported, with what the hardware read there.
* **blockload** (:func:`simulate_blockload`). Each load of the manifest, moved to
  each sub-group's origin, delivers bytes to lanes as the block-I/O model places them
  (:func:`verilayout.hw.intel.block_io.lane_bytes`); the emitted shuffle picks each
  DPAS operand register out of the built-ins' destination arrays. Every register of
  every lane of every sub-group must hold the element the DPAS layout names.

>>> import tempfile
>>> from verilayout.emit.cuda_wgmma import emit_wgmma, write_emission
>>> d = tempfile.mkdtemp(); _ = write_emission(emit_wgmma((64, 32, 16), "f16", "f32"), d)
>>> r = simulate(d); r.ok, r.checked
(True, 2048)
"""
from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass, field, replace

import numpy as np

from verilayout.errors import LayoutError
from verilayout.emit.cuda_wgmma import FORMAT as WGMMA_FORMAT, SMEM_ALIGN, render_cuda, value_range
from verilayout.emit.opencl_block_io import FORMAT as BLOCKLOAD_FORMAT, builtin_for, render_opencl
from verilayout.emit.gemm_plan import GemmManifest, build_gemm_manifest
from verilayout.emit.tcgen05_gemm import build_tcgen05_manifest
from verilayout.emit.tcgen05_manifest import Tcgen05Manifest
from verilayout.frontends.shared_text import operand_of
from verilayout.hw.intel.block_io import BlockLoad, lane_bytes
from verilayout.simulate.cluster_check import check_gemm
from verilayout.simulate.independent import check_wgmma_source, nvcc_path, read_manifest
from verilayout.simulate.mcast_check import check_sm100_source
from verilayout.hw.nvidia.descriptor import contract_findings, decode, hardware_address_function
from verilayout.frontends.names import parse_shape
from verilayout.hw.nvidia.wgmma import fragment
from verilayout.prove.wgmma import INFERRED_RULES

__all__ = ["SimulationResult", "simulate", "simulate_wgmma", "simulate_blockload",
           "load_emission", "KERNEL_FILES", "code_lines"]

#: The kernel file each kind of emission writes next to ``manifest.json``.
KERNEL_FILES = {"wgmma": "kernel.cu", "blockload": "kernel.cl", "gemm": "kernel.cu"}


@dataclass(frozen=True)
class SimulationResult:
    """The outcome of running the model: ``ok``, how many values were compared, and the
    first mismatch (``mismatch``: where, the coordinate, expected and received values)
    with up to a few ``causes`` (what the modelled hardware read there).

    >>> SimulationResult("wgmma", True, "ok", 4).to_dict()["ok"]
    True
    """

    kind: str
    ok: bool
    summary: str
    checked: int = 0
    mismatch: dict | None = None
    causes: tuple = ()
    details: dict = field(default_factory=dict)
    output: object = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "ok": self.ok, "summary": self.summary,
                "checked": self.checked, "mismatch": self.mismatch,
                "causes": list(self.causes), **self.details}


def _fail(kind: str, summary: str, mismatch: dict, causes=(), checked: int = 0,
          **details) -> SimulationResult:
    return SimulationResult(kind, False, summary, checked, mismatch, tuple(causes), details)


#: The largest extent a manifest may state (a tile dimension, K, a bit width): far above any
#: emitted kernel's, small enough that the model's arrays stay allocatable.
_MAX_EXTENT = 1 << 16


def _manifest_errors(fn):
    """A manifest with a missing key or a wrong type is bad input (LayoutError), whatever
    line of the model trips over it."""
    @functools.wraps(fn)
    def run(man, *args, **kw):
        if not isinstance(man, dict):
            raise LayoutError(f"manifest: expected a JSON object, got {type(man).__name__}")
        try:
            return fn(man, *args, **kw)
        except LayoutError:
            raise
        except (KeyError, TypeError, IndexError, AttributeError, ValueError, OverflowError) as e:
            raise LayoutError(f"manifest: malformed ({type(e).__name__}: {e})") from None
    return run


# ----- reading an emission ---------------------------------------------------------------------

def load_emission(directory: str) -> tuple[dict, str | None, str]:
    """``(manifest, kernel source or None, kind)`` of an emitted directory.

    >>> load_emission("/nonexistent")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: /nonexistent: no manifest.json (expected a directory written by `verilayout emit`)
    """
    path = os.path.join(directory, "manifest.json")
    man = read_manifest(directory)
    kind = man.get("kind") if isinstance(man, dict) else None
    if kind not in KERNEL_FILES:
        raise LayoutError(f"{path}: 'kind' must be one of {', '.join(KERNEL_FILES)}, got {kind!r}")
    src_path = os.path.join(directory, KERNEL_FILES[kind])
    source = None
    if os.path.isfile(src_path):
        with open(src_path, encoding="utf-8") as f:
            source = f.read()
    return man, source, kind


def simulate(directory: str, *, seed: int = 0, smem_base: int = 0) -> SimulationResult:
    """Run the model of the kernel emitted into ``directory`` (either kind).

    ``seed`` picks the random integer inputs; ``smem_base`` (wgmma) is the runtime
    address of the kernel's aligned shared-memory buffer (a multiple of 1024).

    >>> import tempfile
    >>> from verilayout.emit.cuda_wgmma import emit_wgmma, write_emission
    >>> from verilayout.hw.nvidia.wgmma import OperandSpec
    >>> d = tempfile.mkdtemp(); _ = write_emission(emit_wgmma((64, 8, 32), "s8", b=OperandSpec("smem", "K", "32B")), d)
    >>> simulate(d, seed=2, smem_base=0x400).ok
    True
    """
    man, source, kind = load_emission(directory)
    if kind == "gemm":
        sm100 = man.get("arch") == "sm_100a"    # the Blackwell GEMM: tcgen05 checks, compiled for sm_100a
        # read once, here: the checks take it typed
        gemm = Tcgen05Manifest.from_dict(man) if sm100 else GemmManifest.from_dict(man)
        as_emitted(man)
        if source is None or nvcc_path() is None:
            raise LayoutError(f"{directory}: a GEMM is checked by compiling its kernel.cu; "
                              + ("kernel.cu is missing" if source is None else
                                 "nvcc is not installed"))
        if sm100:
            return _gemm_result(check_sm100_source(gemm, source))
        return _gemm_result(check_gemm(gemm, source))
    if kind == "wgmma":
        if source is None or nvcc_path() is None:   # no compiler: the kernel file against the manifest
            return simulate_wgmma(man, source=source, seed=seed, smem_base=smem_base)
        ind = check_wgmma_source(man, source)
        drift = _source_check("wgmma", source, render_cuda, man, "kernel.cu")
        if drift is not None:       # the model replays the manifest: it says nothing of this file
            found = tuple(f"independent check of kernel.cu: {c.check}: {c.message}"
                          for c in ind.failures[:4]) or \
                (f"independent check of kernel.cu: {ind.summary()}",)
            return SimulationResult(drift.kind, False, drift.summary, drift.checked,
                                    drift.mismatch, found + drift.causes,
                                    dict(drift.details, independent=ind.to_dict()))
        return _with_independent(simulate_wgmma(man, seed=seed, smem_base=smem_base), ind)
    return simulate_blockload(man, source=source, seed=seed)


#: The fields a GEMM manifest is built from (the emitter's parameters); every other field follows.
_GEMM_PARAMS = ("bm", "bn", "bk", "stages", "splits", "group_m")


def _gemm_params(man: dict) -> dict:
    """The builder's arguments read from ``man``: each of :data:`_GEMM_PARAMS` an integer 1 to
    65536, the epilogue and the cluster as the emitter writes them; else a one-line ``LayoutError``."""
    for key in _GEMM_PARAMS:
        v = man.get(key)
        if type(v) is not int or not 1 <= v <= 1 << 16:
            raise LayoutError(f"manifest: field {key!r} is {v!r}, expected an integer 1 to 65536")
    epi = man.get("epilogue") if isinstance(man.get("epilogue"), dict) else {}
    args = dict(tile=(man["bm"], man["bn"], man["bk"]), stages=man["stages"], splits=man["splits"],
                group_m=man["group_m"], out=epi.get("out", "f32"), bias=epi.get("bias", False),
                activation=epi.get("activation", "none"))
    cl = man.get("cluster") if isinstance(man.get("cluster"), dict) else {}
    if man.get("arch") == "sm_100a":
        return dict(args, ctas=2 if isinstance(man.get("cta_pair"), dict) else 1,
                    cluster=(cl.get("m", 1), cl.get("n", 1)))
    return dict(args, arch=man.get("arch"), cluster=(cl.get("m", 1), cl.get("n", 1)),
                swap_ab=man.get("swap_ab", False),
                schedule=man.get("consumer_schedule", "cooperative"))


def _first_difference(got, want, path: str = "") -> tuple[str, object, object] | None:
    """``(path, got, want)`` of the first place two JSON values differ, None where they are equal."""
    if isinstance(got, dict) and isinstance(want, dict):
        for k in list(want) + [k for k in got if k not in want]:
            if k not in got or k not in want:
                return f"{path}{k}", got.get(k, "<missing>"), want.get(k, "<missing>")
            d = _first_difference(got[k], want[k], f"{path}{k}.")
            if d is not None:
                return d
        return None
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        return next((d for i, (g, w) in enumerate(zip(got, want))
                     if (d := _first_difference(g, w, f"{path}{i}.")) is not None), None)
    same = got == want and type(got) is type(want)
    return None if same else (path.rstrip(".") or "<manifest>", got, want)


def as_emitted(man: dict) -> None:
    """Law: a GEMM manifest read from disk is, field for field, the one the emitter writes for
    its own parameters (tile, stages, split-K, GROUP_M, epilogue, arch, cluster, swap-AB,
    schedule, CTA pair); else a ``LayoutError`` naming the first field that differs and both values
    (a field the checks do not read is still the emitter's claim: none is silently dropped).

    >>> from verilayout.emit.gemm_plan import build_gemm_manifest
    >>> m = build_gemm_manifest("f16", tile=(128, 128, 64), stages=3); m["k_blocks"] += 1
    >>> as_emitted(m)
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: manifest: field 'k_blocks' is 5, but the emitter writes 4 for its parameters (tile 128x128x64, 3 stages, split-K 1, GROUP_M 8)
    """
    p = _gemm_params(man)
    if man.get("arch") == "sm_100a":
        want = build_tcgen05_manifest(man.get("dtype"), **p).to_dict()
    else:
        want = build_gemm_manifest(man.get("dtype"), **p)
    diff = _first_difference(man, json.loads(json.dumps(want)))
    if diff is not None:
        where, got, exp = diff
        bm, bn, bk = p["tile"]
        raise LayoutError(f"manifest: field {where!r} is {got!r}, but the emitter writes {exp!r} for its "
                          f"parameters (tile {bm}x{bn}x{bk}, {p['stages']} stages, split-K {p['splits']}, "
                          f"GROUP_M {p['group_m']})")


def _gemm_result(ind) -> SimulationResult:
    """A GEMM has no numpy model: its result is the independent checks of the compiled kernel."""
    details = {"independent": ind.to_dict()}
    if ind.ok:
        return SimulationResult("gemm", True, f"kernel.cu compiled by nvcc: {ind.summary()}",
                                len(ind.checks), None, (), details)
    first = ind.failures[0]
    return SimulationResult("gemm", False, f"kernel.cu ({first.check}, {first.status}): "
                            f"{first.message}", len(ind.checks),
                            {"where": first.check, "ptx_line": first.ptx_line,
                             "source": first.source},
                            tuple(f"{c.check}: {c.message}" for c in ind.failures[1:5]), details)


def _with_independent(model: SimulationResult, ind) -> SimulationResult:
    """The model's result joined with the independent checks of the compiled ``kernel.cu``
    (:mod:`verilayout.simulate.independent`): ok only when both are."""
    details = dict(model.details, independent=ind.to_dict())
    if not model.ok:
        return SimulationResult(model.kind, False, model.summary, model.checked, model.mismatch,
                                model.causes, details, model.output)
    if not ind.ok:
        first = ind.failures[0]
        return SimulationResult(model.kind, False, f"kernel.cu ({first.check}, {first.status}): "
                                f"{first.message}", model.checked,
                                {"where": first.check, "ptx_line": first.ptx_line,
                                 "source": first.source},
                                tuple(f"{c.check}: {c.message}" for c in ind.failures[1:5]),
                                details, model.output)
    return SimulationResult(model.kind, True, f"{model.summary}; kernel.cu compiled by nvcc: "
                            f"{ind.summary()}", model.checked, None, (), details, model.output)


def _source_check(kind: str, source: str | None, render, man: dict, name: str):
    """The kernel file must be what the manifest generates: the first differing line."""
    if source is None:
        return None
    try:
        expected = render(man)
    except (KeyError, TypeError, IndexError, ValueError) as e:
        raise LayoutError(f"manifest: cannot generate {name} from it "
                          f"({type(e).__name__}: {e})") from None
    if source == expected:
        return None
    got, want = code_lines(source), code_lines(expected)
    for i in range(max(len(got), len(want))):
        g = got[i] if i < len(got) else (0, "<end of file>")
        w = want[i] if i < len(want) else (0, "<end of file>")
        if g[1] != w[1]:
            return _fail(kind, f"{name} line {g[0]} differs from what manifest.json generates; "
                         "the kernel does not run what the manifest describes",
                         {"where": name, "line": g[0], "expected": w[1], "got": g[1]})
    return None      # only comments, blank lines or spacing differ: the same program


def code_lines(source: str) -> list[tuple[int, str]]:
    """The code of a C-family source without its comments: ``(line number, text)`` of every
    line that keeps code, runs of blanks squeezed (a comment or blank line changes nothing).

    Law: two sources with equal ``code_lines`` differ only in comments and spacing outside
    string literals.

    >>> code_lines('int a; // one\\n/* two\\n lines */ int  b = 1;\\n\\nchar* s = "//x";')
    [(1, 'int a;'), (3, 'int b = 1;'), (5, 'char* s = "//x";')]
    """
    out: list[tuple[int, str]] = []
    buf: list[str] = []
    line, i, n = 1, 0, len(source)
    in_block = False

    def flush(at: int) -> None:
        text = " ".join("".join(buf).split())
        if text:
            out.append((at, text))
        buf.clear()

    while i < n:
        c = source[i]
        if in_block:
            if source.startswith("*/", i):
                in_block, i = False, i + 2
                buf.append(" ")
                continue
            if c == "\n":
                flush(line)
                line += 1
            i += 1
            continue
        if source.startswith("//", i):
            j = source.find("\n", i)
            i = n if j < 0 else j
            continue
        if source.startswith("/*", i):
            in_block, i = True, i + 2
            continue
        if c in "\"'":
            j = i + 1
            while j < n and source[j] != c and source[j] != "\n":
                j += 2 if source[j] == "\\" else 1
            buf.append(source[i:j + 1])
            i = j + 1
            continue
        if c == "\n":
            flush(line)
            line += 1
        else:
            buf.append(c)
        i += 1
    flush(line)
    return out


def _need(d: dict, key: str, kind: type, where: str):
    """``d[key]``, which must exist and be a ``kind`` (a bool is not an int)."""
    if not isinstance(d, dict) or key not in d:
        raise LayoutError(f"manifest: {where} is missing '{key}'")
    v = d[key]
    if not isinstance(v, kind) or (isinstance(v, bool) and kind is not bool):
        raise LayoutError(f"manifest: {where}.{key} = {v!r} is not a {kind.__name__}")
    return v


# ----- wgmma --------------------------------------------------------------------------------

_INSTR = re.compile(r"wgmma\.mma_async\.sync\.aligned\.(m64n\d+k\d+)\.(f16|f32|s32)\."
                    r"(f16|bf16|tf32|s8|u8)\.(f16|bf16|tf32|s8|u8)")


def _encode(values: np.ndarray, dtype: str) -> np.ndarray:
    """Integer values -> the raw little-endian element bits (uint array)."""
    v = np.asarray(values)
    if dtype == "f16":
        return v.astype(np.float16).view(np.uint16)
    if dtype == "bf16":
        return (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    if dtype == "tf32":
        return v.astype(np.float32).view(np.uint32)
    if dtype == "s8":
        return v.astype(np.int8).view(np.uint8)
    if dtype == "u8":
        return v.astype(np.uint8)
    raise LayoutError(f"manifest: element type {dtype!r} is not simulated")


def _decode(bits: np.ndarray, dtype: str) -> np.ndarray:
    """Raw element bits -> the value the tensor core multiplies (float64)."""
    b = np.asarray(bits, dtype=np.uint64)
    if dtype == "f16":
        return b.astype(np.uint16).view(np.float16).astype(np.float64)
    if dtype == "bf16":
        return (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if dtype == "tf32":      # the tensor core ignores the low 13 mantissa bits
        return (b.astype(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    if dtype == "s8":
        return b.astype(np.uint8).view(np.int8).astype(np.float64)
    return b.astype(np.float64)


@dataclass(frozen=True)
class CopyTerm:
    """One term of the emitted global-to-shared copy: ``(coord // div) % mod * stride_bytes``
    (no ``% mod`` where ``mod`` is 0), ``coord`` being ``mn`` or ``k``."""

    coord: str
    div: int
    mod: int
    stride_bytes: int


@dataclass(frozen=True)
class CopyPlan:
    """The emitted copy's byte offset of element ``(mn, k)``: ``const_bytes`` plus its
    :class:`CopyTerm` s, XOR-swizzled (``bits`` bits at ``base`` from ``base + shift``), plus
    ``post_bytes``."""

    terms: tuple[CopyTerm, ...]
    const_bytes: int
    swizzle: tuple[int, int, int]
    post_bytes: int

    def addresses(self, mn: int, k: int) -> np.ndarray:
        """Law: the byte offset of each element ``(i, j)``, ``i < mn``, ``j < k``: an
        ``(mn, k)`` array.

        >>> CopyPlan((CopyTerm("k", 1, 0, 2),), 0, (0, 0, 0), 0).addresses(1, 3).tolist()
        [[0, 2, 4]]
        """
        c = {"mn": np.arange(mn, dtype=np.int64)[:, None] + np.zeros((1, k), dtype=np.int64),
             "k": np.arange(k, dtype=np.int64)[None, :] + np.zeros((mn, 1), dtype=np.int64)}
        x = np.full((mn, k), self.const_bytes, dtype=np.int64)
        for t in self.terms:
            v = c[t.coord] // t.div
            if t.mod:
                v = v % t.mod
            x = x + v * t.stride_bytes
        bits, base, shift = self.swizzle
        if bits:
            x = x ^ (((x >> (base + shift)) & ((1 << bits) - 1)) << base)
        return x + self.post_bytes


def _read_copy(copy: dict, where: str) -> CopyPlan:
    """Law: the :class:`CopyPlan` of a manifest's ``copy`` object, read field by field; the
    first missing or mistyped field is a ``LayoutError`` naming it under ``where``.

    >>> _read_copy({"terms": [], "const_bytes": 4, "swizzle": {"bits": 0, "base": 4, "shift": 3}}, "a.copy")
    CopyPlan(terms=(), const_bytes=4, swizzle=(0, 4, 3), post_bytes=0)
    """
    terms = _need(copy, "terms", list, where)
    const = int(_need(copy, "const_bytes", int, where))
    out = []
    for i, t in enumerate(terms):
        coord = _need(t, "coord", str, f"{where}.terms[{i}]")
        if coord not in ("mn", "k"):
            raise LayoutError(f"manifest: {where}.terms[{i}].coord = {coord!r} (expected mn or k)")
        div = _need(t, "div", int, f"{where}.terms[{i}]")
        mod = _need(t, "mod", int, f"{where}.terms[{i}]")
        if div <= 0 or mod < 0:
            raise LayoutError(f"manifest: {where}.terms[{i}] has div {div}, mod {mod}")
        out.append(CopyTerm(coord, div, mod, int(_need(t, "stride_bytes", int, f"{where}.terms[{i}]"))))
    sw = _need(copy, "swizzle", dict, where)
    bits, base, shift = (int(_need(sw, key, int, f"{where}.swizzle"))
                         for key in ("bits", "base", "shift"))
    return CopyPlan(tuple(out), const, (bits, base, shift), int(copy.get("post_bytes", 0)))


def _copy_addresses(copy: dict, mn: int, k: int, where: str) -> np.ndarray:
    """The byte offset the emitted copy (a manifest's ``copy`` object, read by :func:`_read_copy`)
    writes element ``(mn, k)`` to: ``(mn, k)`` array."""
    return _read_copy(copy, where).addresses(mn, k)


def _bases_table(bases: dict, dims: tuple, sizes: dict) -> np.ndarray:
    """``(row, col)`` of every input of a linear layout given by bases: shape (*sizes, 2)."""
    out = np.zeros(tuple(sizes[d] for d in dims) + (2,), dtype=np.int64)
    for axis, d in enumerate(dims):
        b = bases.get(d, [])
        idx = np.arange(sizes[d])
        shape = [1] * len(dims) + [2]
        for bit, vec in enumerate(b):
            sel = ((idx >> bit) & 1).reshape([-1 if i == axis else 1 for i in range(len(dims))]
                                              + [1])
            out = out ^ (sel * np.array(vec, dtype=np.int64).reshape(shape))
    return out


def _thread_table(frag_bases: dict, registers: int) -> np.ndarray:
    """``(thread, element) -> (row, col)`` for 128 threads: shape (128, registers, 2)."""
    t = _bases_table(frag_bases, ("warp", "lane", "register"),
                     {"warp": 4, "lane": 32, "register": registers})
    return t.reshape(128, registers, 2)


@dataclass(frozen=True)
class Fragment:
    """Where a kernel's registers go: each thread's element ``e`` at the ``(row, col)`` its
    ``bases`` (``warp``/``lane``/``register`` -> lists of ``[row, col]``) give, ``registers``
    elements per thread, ``per`` elements per 32-bit register."""

    bases: tuple[tuple[str, tuple[tuple[int, int], ...]], ...]
    registers: int
    per: int

    def table(self) -> np.ndarray:
        """``(thread, element) -> (row, col)`` for 128 threads: shape (128, registers, 2)."""
        return _thread_table({d: [list(v) for v in b] for d, b in self.bases}, self.registers)


def _check_fragment(d: dict, where: str) -> Fragment:
    bases = _need(d, "bases", dict, where)
    for dim, b in bases.items():
        if dim not in ("register", "lane", "warp") or not isinstance(b, list) or not all(
                isinstance(v, list) and len(v) == 2 and all(isinstance(x, int) for x in v)
                for v in b):
            raise LayoutError(f"manifest: {where}.bases.{dim} must be a list of [row, col]")
    return Fragment(tuple((dim, tuple(tuple(v) for v in b)) for dim, b in bases.items()),
                    _need(d, "registers", int, where), _need(d, "elements_per_register", int, where))


@dataclass(frozen=True)
class WgmmaOperandPlan:
    """Operand ``a`` or ``b`` of a wgmma manifest: its ``source`` (``smem``, ``reg``, ...), the
    copy into shared memory (``smem``), each K-block's descriptor (not from registers), the
    ``imm-trans`` flag, and the register fragment (``reg``, A only)."""

    name: str
    source: object
    copy: CopyPlan | None
    descriptors: tuple[int, ...]
    trans: bool
    fragment: Fragment | None


@dataclass(frozen=True)
class WgmmaPlan:
    """A wgmma manifest read once: the instruction's ``shape``, ``acc`` and ``dtype``, the
    problem ``m x n x k`` in ``k_blocks`` K-blocks, the element type ``elem_dtype`` of
    ``elem_bits`` bits, the shared buffer's ``smem_bytes``, operands ``a``/``b`` and D's
    register fragment ``d``."""

    shape: str
    acc: str
    dtype: str
    m: int
    n: int
    k: int
    k_blocks: int
    elem_bits: int
    elem_dtype: str
    smem_bytes: int
    a: WgmmaOperandPlan
    b: WgmmaOperandPlan
    d: Fragment


def _read_descriptors(op: dict, name: str, k_blocks: int) -> tuple[int, ...]:
    descs = _need(op, "descriptors", list, name)
    if len(descs) != k_blocks:
        raise LayoutError(f"manifest: {name}.descriptors has {len(descs)} entries, "
                          f"k_blocks is {k_blocks}")
    out = []
    for kb in range(k_blocks):
        try:
            out.append(int(descs[kb], 16))
        except (TypeError, ValueError):
            raise LayoutError(f"manifest: {name}.descriptors[{kb}] = {descs[kb]!r} is not hex") from None
    return tuple(out)


def _read_operand(man: dict, name: str) -> WgmmaOperandPlan:
    op = man[name]
    copy = _read_copy(_need(op, "copy", dict, name), f"{name}.copy") \
        if op.get("source") == "smem" else None
    return WgmmaOperandPlan(name, op.get("source"), copy, (), bool(op.get("trans", 0)), None)


def _read_wgmma(man: dict, hw: dict) -> WgmmaPlan:
    """Law: the :class:`WgmmaPlan` of a validated wgmma manifest (:func:`_validate_wgmma`'s
    ``hw``), its fields read in the order the model uses them; the first missing or mistyped
    one is a ``LayoutError`` naming it (:func:`_need`)."""
    elem_dtype = man["dtype"]
    smem = _need(_need(man, "smem", dict, "manifest"), "bytes", int, "smem")
    ops = {name: _read_operand(man, name) for name in ("a", "b")}
    for name in ("a", "b"):
        op, plan = man[name], ops[name]
        if plan.source == "reg":
            if name != "a":
                raise LayoutError("manifest: B cannot come from registers")
            ops[name] = replace(plan, fragment=_check_fragment(_need(op, "fragment", dict, "a"), "a.fragment"))
        elif man["k_blocks"] > 0:         # no K-block (as before): no descriptor read
            ops[name] = replace(plan, descriptors=_read_descriptors(op, name, man["k_blocks"]))
    d = _check_fragment(_need(man["d"], "fragment", dict, "d"), "d.fragment")
    return WgmmaPlan(hw["shape"], hw["acc"], hw["dtype"], man["m"], man["n"], man["k"], man["k_blocks"],
                     man["elem_bits"], elem_dtype, smem, ops["a"], ops["b"], d)


@dataclass
class _Image:
    """Shared memory as the copy leaves it: bytes, and which operand element each holds."""

    data: np.ndarray
    owner: np.ndarray       # element id (-1: never written)
    byte: np.ndarray        # which byte of that element


def _build_image(plan: WgmmaPlan, vals: dict, smem_base: int):
    eb, dtype, size = plan.elem_bits // 8, plan.elem_dtype, plan.smem_bytes
    n_img = smem_base + size
    img = _Image(np.zeros(n_img, dtype=np.uint8), np.full(n_img, -1, dtype=np.int64),
                 np.zeros(n_img, dtype=np.int64))
    ids = {"a": 0, "b": vals["a"].size}
    problems = []
    for op in (plan.a, plan.b):
        if op.copy is None:
            continue
        name = op.name
        x = vals[name]                               # (mn, k) integer values
        addr = smem_base + op.copy.addresses(*x.shape)
        flat = addr.ravel()
        elem_id = ids[name] + np.arange(x.size)
        inside = (flat >= smem_base) & (flat + eb <= n_img)
        if not inside.all():
            i = int(np.nonzero(~inside)[0][0])
            problems.append(f"the copy writes {_name_of(int(elem_id[i]), vals)} at byte "
                            f"{int(flat[i]) - smem_base:#x}, outside the {size}-byte shared "
                            "buffer")
        flat, elem_id = flat[inside], elem_id[inside]
        order = np.argsort(flat, kind="stable")
        dup = np.nonzero(np.diff(flat[order]) < eb)[0]
        if dup.size:
            i, j2 = int(order[dup[0]]), int(order[dup[0] + 1])
            problems.append(f"the copy writes {_name_of(int(elem_id[j2]), vals)} at byte "
                            f"{int(flat[j2]) - smem_base:#x}, over "
                            f"{_name_of(int(elem_id[i]), vals)} at byte "
                            f"{int(flat[i]) - smem_base:#x}")
        bits = _encode(x.ravel()[inside], dtype).astype(np.uint64)
        clashed = False
        for j in range(eb):
            hit = img.owner[flat + j]
            clash = np.nonzero(hit >= 0)[0]
            if clash.size and not clashed:
                clashed = True
                i = int(clash[0])
                problems.append(f"the copy writes {_name_of(int(elem_id[i]), vals)} over byte "
                                f"{int(flat[i]) + j - smem_base:#x}, which already holds "
                                f"{_name_of(int(hit[i]), vals)}")
            img.data[flat + j] = ((bits >> np.uint64(8 * j)) & np.uint64(0xFF)).astype(np.uint8)
            img.owner[flat + j] = elem_id
            img.byte[flat + j] = j
    return img, ids, problems


def _name_of(eid: int, vals: dict) -> str:
    if eid < 0:
        return "nothing (never written)"
    na = vals["a"].size
    name, i = ("A", eid) if eid < na else ("B", eid - na)
    shape = vals[name.lower()].shape
    mn, k = np.unravel_index(i, shape)
    return f"{name}({'m' if name == 'A' else 'n'}={mn}, k={k})"


def _validate_wgmma(man: dict) -> dict:
    if man.get("format") != WGMMA_FORMAT:
        raise LayoutError(f"manifest: format {man.get('format')!r}, expected {WGMMA_FORMAT!r}")
    instr = _need(man, "instruction", str, "manifest")
    m = _INSTR.fullmatch(instr)
    if not m or m.group(3) != m.group(4):
        raise LayoutError(f"manifest: instruction {instr!r} is not a wgmma.mma_async this "
                          "model runs")
    for key in ("k", "k_blocks", "m", "n", "elem_bits"):
        if not 0 < _need(man, key, int, "manifest") <= _MAX_EXTENT:
            raise LayoutError(f"manifest: {key} = {man[key]!r} is out of range (1..{_MAX_EXTENT})")
    for key in ("a", "b", "d"):
        _need(man, key, dict, "manifest")
    return {"shape": m.group(1), "acc": m.group(2), "dtype": m.group(3)}


@_manifest_errors
def simulate_wgmma(man: dict, *, source: str | None = None, seed: int = 0,
                   smem_base: int = 0, inputs=None) -> SimulationResult:
    """Run the model of an emitted wgmma kernel (see the module docstring).

    ``inputs=(A, B)`` gives the integer matrices (``M x K`` and ``K x N``) instead of
    random ones; ``output`` of the result is then the D the kernel stores.

    >>> from verilayout.emit.cuda_wgmma import build_manifest
    >>> from verilayout.hw.nvidia.wgmma import OperandSpec
    >>> m = build_manifest((64, 8, 16), "bf16", a=OperandSpec("reg"), b=OperandSpec("smem", "MN", "none"), k=32)
    >>> simulate_wgmma(m).ok
    True
    >>> m["b"]["copy"]["const_bytes"] += 2                 # the copy is off by one element
    >>> r = simulate_wgmma(m); r.ok, r.mismatch["where"]
    (False, 'D')
    """
    hw = _validate_wgmma(man)
    bad = _source_check("wgmma", source, render_cuda, man, "kernel.cu")
    if bad is not None:
        return bad
    if not isinstance(smem_base, int) or smem_base < 0 or smem_base % SMEM_ALIGN:
        raise LayoutError(f"smem base {smem_base!r}: the kernel aligns its buffer to "
                          f"{SMEM_ALIGN} bytes; give a multiple of {SMEM_ALIGN}")
    A, B = _draw_inputs(man, hw, seed, inputs)
    plan = _read_wgmma(man, hw)                       # the manifest read once, typed
    vals = {"a": A, "b": B.T.copy()}                  # operand coordinates (mn, k)
    img, ids, problems = _build_image(plan, vals, smem_base)
    res = _hardware_product(plan, A, vals, img, ids, smem_base)
    if isinstance(res, SimulationResult):
        return res
    D_hw, why = res
    C, store_problem = _store(plan, D_hw)
    return _verdict(plan, C, A @ B, store_problem, problems + why, smem_base)


def _draw_inputs(man: dict, hw: dict, seed: int, inputs):
    M, N, K = man["m"], man["n"], man["k"]
    if inputs is None:
        lo, hi = value_range(hw["dtype"], hw["acc"], K)
        rng = np.random.default_rng(seed)
        return rng.integers(lo, hi + 1, size=(M, K)), rng.integers(lo, hi + 1, size=(K, N))
    A, B = (np.asarray(x, dtype=np.int64) for x in inputs)
    if A.shape != (M, K) or B.shape != (K, N):
        raise LayoutError(f"inputs: expected A {M}x{K} and B {K}x{N}, got "
                          f"{'x'.join(map(str, A.shape))} and {'x'.join(map(str, B.shape))}")
    return A, B


def _hardware_product(plan: WgmmaPlan, A, vals, img, ids, smem_base):
    """Sum over the kernel's K-blocks of what the instruction multiplies: ``(D, causes)``."""
    _, n_hw, kx = parse_shape(plan.shape)
    D_hw = np.zeros((64, n_hw), dtype=np.float64)
    a_frag_hw = fragment(parse_shape(plan.shape), "A", plan.dtype)
    causes = []
    for kb in range(plan.k_blocks):
        ops = {}
        for op, ext in ((plan.a, 64), (plan.b, n_hw)):
            name = op.name
            if op.fragment is not None:
                ops[name], why = _a_from_registers(op.fragment, A, kb, kx, a_frag_hw)
            else:
                res = _read_smem(plan, op, kb, ext, kx, smem_base, img, ids, vals)
                if isinstance(res, SimulationResult):
                    return res
                ops[name], why = res
            causes += why
        D_hw += ops["a"] @ ops["b"].T
    return D_hw, causes


def _verdict(plan: WgmmaPlan, C, want, store_problem, causes, smem_base) -> SimulationResult:
    """Compare the stored D with ``A @ B``: the first differing coordinate, or ok."""
    M, N = plan.m, plan.n
    if store_problem is not None:
        return SimulationResult("wgmma", False, store_problem["message"], M * N, store_problem,
                                tuple(causes[:4]), output=C)
    diff = np.argwhere(~(C == want))
    if diff.size:
        r, c = (int(v) for v in diff[0])
        got = C[r, c]
        mm = {"where": "D", "row": r, "col": c, "expected": float(want[r, c]),
              "got": None if np.isnan(got) else float(got), "differing": int(diff.shape[0])}
        return SimulationResult("wgmma", False, f"D({r}, {c}) = {mm['got']} but A @ B = "
                                f"{want[r, c]:g} ({diff.shape[0]} of {M * N} outputs differ)",
                                M * N, mm, tuple(causes[:4]), output=C)
    if causes:   # right numbers, wrong bytes (equal values by chance): still a bug
        return SimulationResult("wgmma", False, "D equals A @ B for these inputs but the "
                                "hardware read wrong elements: " + causes[0], M * N,
                                {"where": "read"}, tuple(causes[:4]), output=C)
    return SimulationResult("wgmma", True, f"D = A @ B exactly for all {M}x{N} outputs "
                            f"({plan.k_blocks} K-block(s), {plan.dtype} -> {plan.acc}, smem "
                            f"base {smem_base:#x}); every operand element read from the byte "
                            "it was written to", M * N, output=C)


def _read_smem(plan: WgmmaPlan, op: WgmmaOperandPlan, kb, ext, kx, smem_base, img, ids, vals):
    """Read one K-block of an operand as the hardware does through the descriptor."""
    name, dtype = op.name, plan.dtype
    value = op.descriptors[kb] + (smem_base >> 4)       # as the kernel: DESC + (base >> 4)
    d = decode(value)
    major = "MN" if op.trans and dtype in ("f16", "bf16") else "K"
    findings = contract_findings(d, major=major, dtype=dtype, mn_extent=ext)
    why = [f"descriptor {name.upper()}[{kb}] = {value:#018x} breaks the descriptor contract "
           f"({f.rule}): {f.message}"
           for f in findings if f.rule not in INFERRED_RULES]
    # an inferred rule never outvotes the bytes read: it is named only next to a real failure
    inferred = [f"descriptor {name.upper()}[{kb}] = {value:#018x}: inferred rule {f.rule} (an "
                f"inference, not a cited hardware fact): {f.message}"
                for f in findings if f.rule in INFERRED_RULES]
    try:
        fn = hardware_address_function(d, major=major, dtype=dtype, mn_extent=ext)
    except LayoutError as e:              # the hardware's behaviour is not modelled
        return _fail("wgmma", why[0] if why else f"descriptor {name.upper()}[{kb}]: {e}",
                     {"where": f"{name.upper()}[{kb}]", "descriptor": f"{value:#018x}"}, why)
    x = vals[name]
    if ext > x.shape[0]:
        return _fail("wgmma", f"the instruction reads {ext} rows of {name.upper()} but the "
                     f"kernel stages {x.shape[0]}", {"where": name.upper(), "rows": ext})
    addr = fn.table() // 8                                  # (ext, kx) byte addresses
    eb = plan.elem_bits // 8
    inside = (addr >= smem_base) & (addr + eb <= img.data.size)
    safe = np.where(inside, addr, smem_base)
    bits = np.zeros(addr.shape, dtype=np.uint64)
    for j in range(eb):
        bits |= img.data[safe + j].astype(np.uint64) << np.uint64(8 * j)
    values = np.where(inside, _decode(bits, dtype), np.nan)
    want_id = ids[name] + np.arange(ext)[:, None] * x.shape[1] + kb * kx + np.arange(kx)[None, :]
    got_id = np.where(inside, img.owner[safe], -2)
    wrong = np.argwhere((got_id != want_id) | (img.byte[safe] != 0))
    what = "A" if name == "a" else "B"
    for mn, k in wrong[:2]:
        coord = f"{'m' if name == 'a' else 'n'}={mn}, k={kb * kx + k}"
        held = "is outside the shared buffer" if got_id[mn, k] == -2 else \
            f"holds {_name_of(int(got_id[mn, k]), vals)}"
        why.append(f"wgmma K-block {kb} reads {what}({coord}) from byte "
                   f"{int(addr[mn, k]) - smem_base:#x} (descriptor {value:#x}), which {held}")
    return values, (why + inferred if why else why)


def _a_from_registers(frag: Fragment, A, kb, kx, frag_hw):
    """The A operand of one K-block as the hardware sees the registers the kernel loaded."""
    regs, per = frag.registers, frag.per
    src = frag.table()                                       # kernel: (t, e) -> global A
    hw = _thread_table(frag_hw.layout.bases, frag_hw.registers)
    why = []
    if regs != frag_hw.registers or per != frag_hw.elems_per_reg:
        why.append(f"the kernel loads {regs} A elements per thread, {per} per register; the "
                   f"instruction reads {frag_hw.registers}, {frag_hw.elems_per_reg} per register")
    n = min(regs, frag_hw.registers)
    s = src[:, :n].reshape(-1, 2)                            # what thread t put in element e
    h = hw[:, :n].reshape(-1, 2)                             # what wgmma takes element e for
    k = kb * kx + s[:, 1]
    ok = (s[:, 0] >= 0) & (s[:, 0] < A.shape[0]) & (s[:, 1] >= 0) & (s[:, 1] < kx) & \
        (k < A.shape[1])
    out = np.full((64, kx), np.nan)                          # never loaded: NaN
    out[h[ok, 0], h[ok, 1]] = A[s[ok, 0], k[ok]]
    for i in np.nonzero(np.any(s != h, axis=1))[0][:2]:
        t, e = divmod(int(i), n)
        why.append(f"thread {t} loads A(m={s[i, 0]}, k={k[i]}) into element {e}, which "
                   f"wgmma reads as A(m={h[i, 0]}, k={kb * kx + h[i, 1]})")
    return out, why


def _store(plan: WgmmaPlan, D_hw):
    """C as the kernel stores the accumulator registers."""
    f_hw = fragment(parse_shape(plan.shape), "D", plan.dtype, acc=plan.acc)
    regs, per = plan.d.registers, plan.d.per
    if regs != f_hw.registers or per != f_hw.elems_per_reg:
        return None, {"where": "D registers", "message":
                      f"the kernel stores {regs} accumulator elements per thread ({per} per "
                      f"register) but {plan.shape}.{plan.acc} writes {f_hw.registers} "
                      f"({f_hw.elems_per_reg} per register)"}
    M, N = plan.m, plan.n
    C = np.full((M, N), np.nan)
    count = np.zeros((M, N), dtype=np.int64)
    dst = plan.d.table().reshape(-1, 2)
    src = _thread_table(f_hw.layout.bases, f_hw.registers).reshape(-1, 2)
    ok = (dst[:, 0] < M) & (dst[:, 1] < N)
    if not ok.all():
        i = int(np.nonzero(~ok)[0][0])
        return C, {"where": "D", "row": int(dst[i, 0]), "col": int(dst[i, 1]), "message":
                   f"thread {i // regs} stores element {i % regs} outside the {M}x{N} D tile "
                   f"at ({dst[i, 0]}, {dst[i, 1]})"}
    C[dst[:, 0], dst[:, 1]] = D_hw[src[:, 0], src[:, 1]]
    np.add.at(count, (dst[:, 0], dst[:, 1]), 1)
    twice = np.argwhere(count > 1)
    if twice.size:
        r, c = (int(v) for v in twice[0])
        return C, {"where": "D", "row": r, "col": c, "message":
                   f"D({r}, {c}) is stored by {count[r, c]} accumulator elements"}
    return C, None


# ----- Intel block loads ------------------------------------------------------------------------

@_manifest_errors
def simulate_blockload(man: dict, *, source: str | None = None, seed: int = 0) -> SimulationResult:
    """Run the model of an emitted block-load kernel: every DPAS operand register of every
    lane of every sub-group.

    >>> from verilayout.emit.opencl_block_io import build_manifest
    >>> from verilayout.frontends.shared_text import operand
    >>> m = build_manifest(operand("tensor<8x16xf16, #ttg.dot_op<{opIdx = 0, parent = #ttig.dpas<{"
    ...     "repeatCount = 8, systolicDepth = 8, executionSize = 16, opsPerChan = 2, "
    ...     "threadsPerWarp = 16, warpsPerCTA = [1, 1], repCluster = [1, 1]}>, kWidth = 1}>>"))
    >>> r = simulate_blockload(m); r.ok, r.checked
    (True, 128)
    """
    if man.get("format") != BLOCKLOAD_FORMAT:
        raise LayoutError(f"manifest: format {man.get('format')!r}, expected {BLOCKLOAD_FORMAT!r}")
    bad = _source_check("blockload", source, render_opencl, man, "kernel.cl")
    if bad is not None:
        return bad
    op = operand_of(man)                              # the DPAS layout, parsed afresh
    plan = _read_blockload(man, op)                   # the manifest read once, typed
    loads, offsets, t, transpose, table = plan.loads, plan.offsets, plan.elem_bytes, plan.transpose, plan.table
    regs, n_warps = op.layout.in_dims["register"], op.layout.in_dims.get("warp", 1)
    mem_shape = op.shape[::-1] if transpose else op.shape
    rng = np.random.default_rng(seed)
    mem = rng.integers(0, 256, size=(mem_shape[0], mem_shape[1] * t), dtype=np.int64)
    expect = _expected(op, n_warps, transpose)                # (warp, reg, lane, 2)
    out = np.full((n_warps, regs, 16, 2), -1, dtype=np.int64)   # operand (dim0, dim1)
    first = None
    for w, (dx, dy) in enumerate(offsets):
        streams = []
        for ld in loads:
            builtin_for(ld)                                   # the kernel names a real built-in
            streams.append(lane_bytes(ld.moved(int(dx), int(dy))))
        got = _shuffled_coords(streams, table, t)             # (reg, lane, 2) memory view
        ok = got[..., 0] >= 0
        out[w][ok] = got[ok][:, ::-1] if transpose else got[ok]
        bad = np.argwhere(np.any(got != expect[w], axis=-1))
        if bad.size and first is None:
            first = (w, int(bad[0][0]), int(bad[0][1]), dx, dy)
    if first is not None:
        return _blockload_mismatch(first, out, expect, (mem, t, transpose), table, loads)
    return SimulationResult("blockload", True, f"every DPAS operand register reproduced: "
                            f"{regs} registers x 16 lanes x {n_warps} sub-group(s), "
                            f"{len(loads)} load(s) per sub-group", n_warps * regs * 16,
                            output=out)


def _blockload_mismatch(first: tuple, out: np.ndarray, expect: np.ndarray, memory: tuple,
                        table: tuple, loads: tuple) -> SimulationResult:
    """Law: the failed result for the first (sub-group, register, lane) whose shuffled element
    ``out`` differs from the DPAS layout's ``expect``, with both elements' memory values and the
    load and shuffle entry it came from."""
    mem, t, transpose = memory
    n_warps, regs = out.shape[0], out.shape[1]
    w, r, l, dx, dy = first
    g, e = out[w, r, l], expect[w, r, l]
    e_op = [int(e[1]), int(e[0])] if transpose else [int(e[0]), int(e[1])]
    g_op = None if g[0] < 0 else [int(g[0]), int(g[1])]
    mm = {"where": "DPAS operand", "sub_group": w, "register": r, "lane": l,
          "expected": e_op, "got": g_op,
          "expected_value": _mem_value(mem, e, t),
          "got_value": None if g_op is None else
          _mem_value(mem, g[::-1] if transpose else g, t)}
    src = table[r][l]
    return SimulationResult(
        "blockload", False, f"sub-group {w}, lane {l}, register {r} receives "
        f"{'no whole element' if g_op is None else 'element ' + str(tuple(g_op))} but DPAS "
        f"reads element {tuple(e_op)}", n_warps * regs * 16, mm,
        (f"the shuffle takes element {src[1]} of load {src[0]} "
         f"({loads[src[0]].describe()} moved by ({dx}, {dy}))",), output=out)


@dataclass(frozen=True)
class BlockloadPlan:
    """A block-load manifest read once: its ``loads``, each sub-group's origin ``offsets`` (as
    written), the element width ``elem_bytes``, whether memory holds the operand transposed
    (``transpose``), and the shuffle ``table``: per DPAS register, per lane, the ``(load, element)`` it takes."""

    loads: tuple[BlockLoad, ...]
    offsets: tuple
    elem_bytes: int
    transpose: bool
    table: tuple[tuple[tuple[int, int], ...], ...]


def _read_blockload(man: dict, op) -> BlockloadPlan:
    """Law: the :class:`BlockloadPlan` of a block-load manifest for DPAS operand ``op``, its
    fields read in order (loads, shuffle, warps.offsets, elem_bytes, transpose); the first
    missing, mistyped or inconsistent one is a ``LayoutError`` naming it."""
    loads = tuple(BlockLoad.from_dict(ld) for ld in _need(man, "loads", list, "manifest"))
    if not loads:
        raise LayoutError("manifest: 'loads' is empty")
    shuffle = _need(man, "shuffle", list, "manifest")
    offsets = _need(_need(man, "warps", dict, "manifest"), "offsets", list, "warps")
    t = _need(man, "elem_bytes", int, "manifest")
    if t not in (1, 2, 4, 8):
        raise LayoutError(f"manifest: elem_bytes = {t!r} (expected 1, 2, 4 or 8)")
    transpose = _need(man, "transpose", bool, "manifest")
    regs, n_warps = op.layout.in_dims["register"], op.layout.in_dims.get("warp", 1)
    if len(shuffle) != regs:
        raise LayoutError(f"manifest: shuffle has {len(shuffle)} registers, the operand {regs}")
    if len(offsets) != n_warps:
        raise LayoutError(f"manifest: warps.offsets has {len(offsets)} entries, the operand "
                          f"{n_warps} warps")
    table = tuple(tuple(row) for row in _shuffle_table(shuffle, regs, len(loads)))
    return BlockloadPlan(loads, tuple(offsets), t, transpose, table)


def _shuffle_table(shuffle, regs: int, n_loads: int) -> list:
    out = []
    for r, entry in enumerate(shuffle):
        if isinstance(entry, list) and len(entry) == 2 and all(isinstance(v, int) for v in entry):
            row = [tuple(entry)] * 16
        elif isinstance(entry, list) and len(entry) == 16:
            row = [tuple(v) for v in entry]
        else:
            raise LayoutError(f"manifest: shuffle[{r}] must be [load, element] or 16 such pairs")
        for ld, e in row:
            if not (isinstance(ld, int) and 0 <= ld < n_loads and isinstance(e, int) and e >= 0):
                raise LayoutError(f"manifest: shuffle[{r}] names load {ld} element {e}")
        out.append(row)
    return out


def _shuffled_coords(streams, table, t: int) -> np.ndarray:
    """Memory-view ``(row, col)`` each register of each lane holds after the shuffle
    (``-1`` where its bytes are not one whole element): shape (registers, 16, 2)."""
    regs = len(table)
    out = np.full((regs, 16, 2), -1, dtype=np.int64)
    for r in range(regs):
        for lane in range(16):
            ld, e = table[r][lane]
            rows, cols = streams[ld]
            if (e + 1) * t > rows.shape[1]:
                continue
            rr = rows[lane, e * t:(e + 1) * t]
            cc = cols[lane, e * t:(e + 1) * t]
            if rr[0] >= 0 and (rr == rr[0]).all() and cc[0] % t == 0 and \
                    (cc == cc[0] + np.arange(t)).all():
                out[r, lane] = (rr[0], cc[0] // t)
    return out


def _expected(op, n_warps: int, transpose: bool) -> np.ndarray:
    """(warp, register, lane) -> memory-view (row, col) the DPAS instructions read."""
    L = op.layout
    sizes = {d: L.in_dims.get(d, 1) for d in ("warp", "register", "lane")}
    tab = _bases_table({d: [list(b) for b in L.bases.get(d, [])] for d in sizes},
                       ("warp", "register", "lane"), sizes)
    return tab[..., ::-1] if transpose else tab


def _mem_value(mem, coord, t: int) -> int | None:
    r, c = int(coord[0]), int(coord[1])
    if not (0 <= r < mem.shape[0] and 0 <= (c + 1) * t <= mem.shape[1]):
        return None
    v = 0
    for j in range(t):
        v |= int(mem[r, c * t + j]) << (8 * j)
    return v
