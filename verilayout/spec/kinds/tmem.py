"""Spec-file source and obligation kind for Blackwell tensor memory. Exported as ``SOURCES`` and
``KINDS``, joined by :func:`verilayout.spec.kinds.registry`.

* source ``tmem_accumulator = {m = 128, n = 64, cta_group = 1}``: where ``tcgen05.mma`` keeps D
  (``lane, col -> dim0, dim1``; :func:`verilayout.hw.nvidia.tmem.accumulator_layout`);
* source ``tmem_message = {shape = "16x256b", num = 1}`` (``split`` for 16x32bx2): one warp's
  ``tcgen05.ld/st`` image (``register, lane -> row, col``);
* kind ``tmem_layout``: with ``tmem`` (a layout ``lane, col -> dim0, dim1``, e.g. bases written
  from a ``#ttng.tensor_memory_encoding``), that layout is the datapath layout of ``m``, ``n``,
  ``cta_group``; with ``reg`` (a register layout), its registers are ``tcgen05.ld.<shape>``
  messages (``shape`` default ``32x32b``; optional ``num``, ``split``) reading ``tmem`` (default:
  the datapath layout itself). Both may be given.

>>> from verilayout.spec import load_spec_text, run_spec
>>> spec = load_spec_text('''
... [layouts.epilogue]
... bases = { register = [[0, 1], [0, 2], [0, 4]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], warp = [[64, 0], [32, 0]] }
... out_dims = { dim0 = 128, dim1 = 8 }
... [[obligation]]
... kind = "tmem_layout"
... reg = "epilogue"
... m = 128
... n = 8
... ''', "inline.toml")
>>> v = run_spec(spec)[0].verdict; v.status, v.counterexample["input"]   # warp 1 is not at lanes 32..63
('counterexample', {'warp': 1})
"""
from __future__ import annotations

from types import MappingProxyType

from verilayout.core.linear_layout import LinearLayout
from verilayout.errors import LayoutError
from verilayout.hw.nvidia.tmem import accumulator_layout, message
from verilayout.prove.tmem import accumulator_verdict, load_verdict
from verilayout.spec.format import Kind


def _int(v, what: str, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise LayoutError(f"{where}: {what} must be an integer, got {v!r}")
    return v


def _src_accumulator(entry, spec, where):
    w = f"{spec.path}: {where}"
    t = entry["tmem_accumulator"]
    if not isinstance(t, dict) or set(t) - {"m", "n", "cta_group", "ws"} or not {"m", "n"} <= set(t):
        raise LayoutError(f"{w}: tmem_accumulator = {{m = ..., n = ..., cta_group = 1|2, ws = false}}")
    try:
        return accumulator_layout(_int(t["m"], "m", w), _int(t["n"], "n", w), _int(t.get("cta_group", 1),
                                  "cta_group", w), bool(t.get("ws", False)))
    except LayoutError as e:
        raise LayoutError(f"{w}: {e}") from None


def _src_message(entry, spec, where):
    w = f"{spec.path}: {where}"
    t = entry["tmem_message"]
    if not isinstance(t, dict) or set(t) - {"shape", "num", "split"} or "shape" not in t:
        raise LayoutError(f"{w}: tmem_message = {{shape = \"32x32b\", num = 1, split = ...}}")
    try:
        return message(t["shape"], _int(t.get("num", 1), "num", w), t.get("split"))
    except LayoutError as e:
        raise LayoutError(f"{w}: {e}") from None


def _tmem_layout(spec, where, timeout_ms, m, n, reg=None, tmem=None, cta_group=1, shape="32x32b",
                 num=None, split=None):
    """``tmem`` is the datapath layout of (m, n, cta_group); ``reg`` reads it with tcgen05.ld messages."""
    m, n, cta_group = _int(m, "m", where), _int(n, "n", where), _int(cta_group, "cta_group", where)
    if reg is None and tmem is None:
        raise LayoutError(f"{where}: give 'reg', 'tmem' or both")
    reg = spec.layout(reg, where) if reg is not None else None  # optional layouts: resolved here
    tmem = spec.layout(tmem, where) if tmem is not None else None
    for name, lay in (("reg", reg), ("tmem", tmem)):
        if lay is not None and not isinstance(lay, LinearLayout):
            raise LayoutError(f"{where}: {name} must be a GF(2)-linear layout (a tensor-memory or register "
                              f"layout), got {getattr(lay, 'name', None) or type(lay).__name__}")
    try:
        if tmem is not None:
            v = accumulator_verdict(tmem, m, n, cta_group)
            if reg is None or v.status != "proved":
                return v
        target = tmem if tmem is not None else accumulator_layout(m, n, cta_group)
        return load_verdict(reg, target, shape, num, split)
    except LayoutError as e:
        raise LayoutError(f"{where}: {e}") from None


SOURCES = MappingProxyType({"tmem_accumulator": _src_accumulator, "tmem_message": _src_message})
KINDS = MappingProxyType({
    "tmem_layout": Kind(_tmem_layout, MappingProxyType({
        "m": "required", "n": "required", "reg": "optional", "tmem": "optional", "cta_group": "optional",
        "shape": "optional", "num": "optional", "split": "optional"}),
        "a TMEM layout is the tcgen05.mma datapath layout, and/or a register layout is tcgen05.ld messages "
        "reading it"),
})
