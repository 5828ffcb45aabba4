"""Kernel names in a Triton cache: ``matmul_kernel[fp8e4nv, fp32, sm_90a]`` rather than
``<hash>/matmul_kernel.ttgir``.

Triton's cache keeps, per compiled kernel, ``<hash>/<name>.json`` (the metadata: ``name``,
``target`` with ``backend`` and ``arch``) beside ``<name>.ttgir`` and ``<name>.ptx``. The name is
the function name, the element types of its pointer arguments (Triton's spelling, in argument
order, each once) read from the ``tt.func`` line of the TTGIR, and the target.

Law: a file with no Triton metadata beside it has no kernel name (None); the target is spelled
as the PTX ``.target`` directive spells it (``sm_90a``), one spelling everywhere.

>>> target_name("cuda:90"), target_name("cuda:80"), target_name("hip:gfx942"), target_name("sm_90a")
('sm_90a', 'sm_80', 'gfx942', 'sm_90a')
"""
from __future__ import annotations

import json
import os
import posixpath

from verilayout.frontends.prescan import pointer_element_types, source_files, target_name

#: Triton's names of MLIR element types (``triton.language`` dtypes).
TRITON_DTYPE = {"f16": "fp16", "bf16": "bf16", "f32": "fp32", "f64": "fp64", "i1": "i1", "i8": "i8",
                "i16": "i16", "i32": "i32", "i64": "i64", "f8E4M3FN": "fp8e4nv", "f8E5M2": "fp8e5",
                "f8E4M3FNUZ": "fp8e4b8", "f8E5M2FNUZ": "fp8e5b16", "f8E4M3B11FNUZ": "fp8e4b15"}


def pointer_dtypes(ttgir_text: str) -> tuple[str, ...]:
    """Triton's names of the element types of the first ``tt.func``'s pointer arguments, each once.

    >>> pointer_dtypes("tt.func public @k(%a: !tt.ptr<f8E4M3FN> loc(#l), %c: !tt.ptr<f32>) {")
    ('fp8e4nv', 'fp32')
    """
    names = (TRITON_DTYPE.get(t, t) for t in pointer_element_types(ttgir_text))
    return tuple(dict.fromkeys(names))


def source_paths(text: str, kind: str) -> dict[str, str]:
    """Base name -> full path of the source files a TTGIR (``loc("/a/k.py":3:1)``) or PTX
    (``.file 1 "/a/k.py"``) text names; a base name shared by two paths is left out.

    >>> source_paths('#loc = loc("/src/k.py":4:1)\\n#loc2 = loc("k.py":5:1)', "ttgir")
    {}
    >>> source_paths('.file 1 "/src/k.py"', "ptx")
    {'k.py': '/src/k.py'}
    """
    found = source_files(text, kind)
    out: dict[str, str | None] = {}
    for full in found:
        base = posixpath.basename(full)
        out[base] = full if base not in out else None
    return {b: f for b, f in out.items() if f and f != b}


def triton_metadata(json_path: str) -> dict | None:
    """Triton's metadata of a compiled kernel (``<hash>/<name>.json`` in its cache), or None where
    there is none or it does not read as Triton's (no ``name``)."""
    try:
        with open(json_path, "rb") as f:
            meta = json.loads(f.read(1 << 20))
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) and isinstance(meta.get("name"), str) else None


def _meta_target(meta: dict) -> str | None:
    t = meta.get("target")
    if isinstance(t, dict) and t.get("backend") and t.get("arch") is not None:
        return target_name(f"{t['backend']}:{t['arch']}")
    return None


def cache_kernel_name(path: str, ttgir_text: str | None = None) -> str | None:
    """``name[dtypes..., target]`` of a ``.ttgir``/``.ptx`` file in a Triton cache, or None when no
    Triton metadata (``<stem>.json``) is beside it. ``ttgir_text``: the TTGIR, when already read."""
    stem, ext = os.path.splitext(path)
    if ext not in (".ttgir", ".ptx"):
        return None
    meta = triton_metadata(stem + ".json")
    if meta is None:
        return None
    if ttgir_text is None:
        try:
            with open(stem + ".ttgir", "rb") as f:
                ttgir_text = f.read(1 << 20).decode("utf-8", "replace")
        except OSError:
            ttgir_text = ""
    parts = [*pointer_dtypes(ttgir_text), _meta_target(meta)]
    return f"{meta['name']}[{', '.join(p for p in parts if p)}]"
