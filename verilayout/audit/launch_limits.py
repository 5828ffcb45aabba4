"""Kernels that can never launch: a configuration whose shared memory exceeds what its target gives
one CTA (NVIDIA) or workgroup (AMD). Triton compiles such a kernel, but its driver compares the
kernel's ``metadata.shared`` with the device's maximum shared memory per block and raises
``OutOfResources`` at launch (``triton/backends/nvidia/driver.py``, ``.../amd/driver.py``), so an
autotuner drops the configuration and no wrong number can come from it. The file's findings then
describe code that never runs: each ``error`` becomes ``unchecked`` with the reason, and one
``launch-resources`` warning says why.

The bytes a kernel needs: the module's ``ttg.shared`` attribute where the TTGIR carries it (Triton
sets it in its AllocateSharedMemory pass, after the ``.ttgir`` its cache keeps is printed), else a
lower bound, the largest single ``ttg.local_alloc`` in shared memory (every allocated buffer must fit
whole: ``triton/lib/Analysis/Allocation.cpp`` gives each its full size). A lower bound above the limit
proves the kernel cannot launch; one below it proves nothing, and nothing is reported.

Law: ``cannot_launch(rep, mod)`` is ``rep`` itself (no check added, none changed) unless the target
is in :data:`SHARED_LIMITS` and the bytes needed exceed its limit.

>>> shared_limit("cuda:90").bytes, shared_limit("hip:gfx942").bytes, shared_limit("cuda:75")
(232448, 65536, None)
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from math import prod

from verilayout.audit.model import Check, FileReport
from verilayout.dtypes import mlir_bits
from verilayout.frontends.ttgir import Module, Op

__all__ = ["SharedLimit", "SHARED_LIMITS", "shared_limit", "shared_need", "launch_check", "cannot_launch"]

#: the check's name
LAUNCH_RESOURCES = "launch-resources"

_NV = ("NVIDIA CUDA C++ Programming Guide, Technical Specifications per Compute Capability: "
       "maximum amount of shared memory per thread block")
_CDNA3 = "AMD Instinct MI300 (CDNA3) ISA reference guide: LDS, 64 KiB per workgroup"
_CDNA4 = "AMD Instinct MI355X (CDNA4) ISA reference guide: LDS, 160 KiB per workgroup"


@dataclass(frozen=True)
class SharedLimit:
    """The most shared memory (bytes) one CTA/workgroup of a target may use, and where that is stated."""
    bytes: int
    source: str


#: TTGIR target (``ttg.target``) -> its per-block shared-memory limit (NVIDIA: the opt-in maximum,
#: KB = 1024 bytes; AMD: the LDS one workgroup may allocate). A target not listed is not checked.
SHARED_LIMITS: dict[str, SharedLimit] = {
    "cuda:80": SharedLimit(163 * 1024, f"{_NV} (8.0: 163 KB)"),
    "cuda:86": SharedLimit(99 * 1024, f"{_NV} (8.6: 99 KB)"),
    "cuda:87": SharedLimit(163 * 1024, f"{_NV} (8.7: 163 KB)"),
    "cuda:89": SharedLimit(99 * 1024, f"{_NV} (8.9: 99 KB)"),
    "cuda:90": SharedLimit(227 * 1024, f"{_NV} (9.0: 227 KB)"),
    "cuda:100": SharedLimit(227 * 1024, f"{_NV} (10.0: 227 KB)"),
    "cuda:120": SharedLimit(99 * 1024, f"{_NV} (12.0: 99 KB)"),
    "cuda:121": SharedLimit(99 * 1024, f"{_NV} (12.1: 99 KB)"),
    "hip:gfx942": SharedLimit(64 * 1024, _CDNA3),
    "hip:gfx950": SharedLimit(160 * 1024, _CDNA4),
}


def shared_limit(target: str | None) -> SharedLimit | None:
    """The shared-memory limit of TTGIR target ``target`` (:data:`SHARED_LIMITS`), None if unknown.

    >>> shared_limit("cuda:100").bytes // 1024
    227
    """
    return SHARED_LIMITS.get(target) if isinstance(target, str) else None


def _alloc_bytes(mod: Module, op: Op) -> int:
    """Bytes of a ``ttg.local_alloc``'s buffer in shared memory; 0 when it is not one or its type
    cannot be read."""
    if op.name != "ttg.local_alloc" or not op.result_types:
        return 0
    try:
        t = mod.type_of(op.result_types[0])
    except Exception:  # noqa: BLE001 - an unreadable type is no evidence; its own check reports it
        return 0
    space = getattr(getattr(t, "memory_space", None), "name", None)
    bits = mlir_bits(getattr(t, "elem", "") or "")
    if space != "ttg.shared_memory" or not bits:
        return 0
    return -(-prod(t.alloc_shape or t.shape) * bits // 8)


def shared_need(mod: Module) -> tuple[int, bool, Op | None]:
    """The shared memory ``mod``'s kernel needs: ``(bytes, exact, op)``; exact from ``ttg.shared``,
    else the largest ``ttg.local_alloc`` buffer (a lower bound) and its op (None: no buffer).

    >>> from verilayout.frontends.ttgir import parse_module
    >>> shared_need(parse_module("module attributes {ttg.shared = 512 : i32} {\\n}"))
    (512, True, None)
    """
    if mod.shared is not None:
        return mod.shared, True, None
    best, where = 0, None
    for op in mod.ops:
        b = _alloc_bytes(mod, op)
        if b > best:
            best, where = b, op
    return best, False, where


def launch_check(mod: Module) -> Check | None:
    """The ``launch-resources`` warning of a kernel that needs more shared memory than its target
    gives one block, else None (target unknown, or within the limit).

    >>> from verilayout.frontends.ttgir import parse_module
    >>> c = launch_check(parse_module('module attributes {ttg.shared = 300000 : i32, ttg.target = "cuda:90"} {\\n}'))
    >>> c.severity, c.data["shared"], c.data["limit"]
    ('warning', 300000, 232448)
    """
    limit = shared_limit(mod.target)
    if limit is None:
        return None
    need, exact, op = shared_need(mod)
    if need <= limit.bytes:
        return None
    what = "its ttg.shared" if exact else f"at least: its largest buffer, {op.name} at line {op.line} of the TTGIR"
    msg = (f"the kernel cannot launch on {mod.target}: it needs {need} bytes of shared memory ({what}), "
           f"more than the {limit.bytes} a block may use ({limit.source}); Triton raises OutOfResources "
           "at launch, so this configuration never runs")
    return Check(op.name if op else "module", op.line if op else 1, op.loc if op else None, LAUNCH_RESOURCES,
                 "counterexample", "warning", msg,
                 {"shared": need, "exact": exact, "limit": limit.bytes, "target": mod.target,
                  "source": limit.source})


def _unlaunched(c: Check, prefix: str) -> Check:
    """A check of a kernel that cannot launch: an error becomes ``unchecked`` (its status kept as
    ``data["was"]``), and it and every ``unchecked`` check get ``prefix`` before the message."""
    if c.severity == "error":
        return replace(c, status="unchecked", severity=None, message=prefix + c.message,
                       data={**c.data, "reason": "cannot launch", "was": c.status})
    return replace(c, message=prefix + c.message) if c.status == "unchecked" else c


def cannot_launch(rep: FileReport, mod: Module | None, at: tuple[str, int] | None = None) -> FileReport:
    """``rep`` with the launch-resources warning first and every error ``unchecked`` (the reason
    prefixed, as it is before each unchecked check) when ``mod``'s kernel cannot launch on its
    target; else ``rep`` itself (module law).
    ``at``: the warning's ``(op, line)`` in a file other than the TTGIR (its PTX), no source line.

    >>> from verilayout.frontends.ttgir import parse_module
    >>> e = Check("ttng.warp_group_dot", 3, None, "x", "counterexample", "error", "bad")
    >>> m = parse_module('module attributes {ttg.shared = 300000 : i32, ttg.target = "cuda:90"} {\\n}')
    >>> [(c.check, c.status) for c in cannot_launch(FileReport("k", "cuda:90", 4, (e,)), m).checks]
    [('launch-resources', 'counterexample'), ('x', 'unchecked')]
    """
    found = launch_check(mod) if mod is not None else None
    if found is None:
        return rep
    if at is not None:
        found = replace(found, op=at[0], line=at[1], loc=None)
    prefix = (f"the kernel cannot launch on {mod.target} ({found.data['shared']} > {found.data['limit']} "
              "bytes of shared memory): ")
    return replace(rep, checks=(found, *(_unlaunched(c, prefix) for c in rep.checks)))
