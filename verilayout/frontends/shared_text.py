"""Shared-memory layouts from text: ``#ttg.padded_shared``, ``#ttg.shared_linear``, and the
"shared or register layout from whatever the user typed" doors of the bank analysis.

One converter per kind: :func:`parse_padded_shared` (``#ttg.padded_shared<[interval:+pad, ...]
{...}>`` -> a :class:`~verilayout.hw.nvidia.banks.SharedAddressMap`) and
:func:`parse_shared_linear` (``#ttg.shared_linear<{offset = ..., block = ...}, alignment = N>``
-> an ``offset, block -> dims`` LinearLayout). Every other Triton kind (``#ttg.swizzled_shared``,
``#ttg.nvmma_shared``, ...) is converted by :mod:`verilayout.frontends.triton`.

>>> parse_shared_linear("#ttg.shared_linear<{offset = [[0, 1], [1, 0]]}, alignment = 16>", [2, 2]).bases
{'offset': [[0, 1], [1, 0]], 'block': []}
>>> parse_padded_shared("#ttg.padded_shared<[32:+1] {order = [1, 0], shape = [16, 32]}>", [16, 32]).offset({"dim0": 1, "dim1": 0})
33
"""
from __future__ import annotations

import json
import re
from typing import Any, Sequence

from verilayout.frontends.cute_text import looks_like_cute, parse_cute, parse_cute_tv
from verilayout.core.linear_layout import LinearLayout
from verilayout.bits import plain_ints
from verilayout.errors import LayoutError
from verilayout.frontends.triton import intel as triton_intel
from verilayout.frontends.triton import memory as triton_memory
from verilayout.frontends.mlir import Attr, TensorType
from verilayout.frontends.triton import attr_to_linear, parse, parse_attr
from verilayout.hw.intel.dpas import OPS_PER_CHAN, DpasTile, Operand, TensorLayout, check_dtype, layout_operand
from verilayout.hw.nvidia.banks import SharedAddressMap, as_shared
from verilayout.hw.nvidia.descriptor import operand_bits
from verilayout.hw.nvidia.wgmma import OperandLayout

__all__ = ["parse_padded_shared", "parse_shared_linear", "load_shared", "load_register", "attr_text",
           "shared_text_to_layout", "operand", "operand_tile_layout",
           "load_operand_layout", "load_block_layout", "is_dpas_operand_text", "tensor_layout", "dpas_tile",
           "operand_of"]

_PADDED = re.compile(r"^\s*#(?:ttg|triton_gpu)\.padded_shared\s*<\s*\[(?P<pairs>[^\]]*)\]\s*\{(?P<body>.*)\}\s*>\s*$",
                     re.S)
_SHARED_LINEAR = re.compile(r"\s*#(?:ttg|triton_gpu)\.shared_linear\s*<\s*\{(?P<body>.*)\}\s*"
                            r"(?:,\s*alignment\s*=\s*(?P<align>\d+)\s*)?>\s*", re.S)
_FIELD = re.compile(r"(\w+)\s*=\s*(\[[^=]*\])\s*(?:,|$)")


def _fields(body: str, what: str) -> dict:
    out = {}
    for fm in _FIELD.finditer(body.strip()):
        try:
            out[fm.group(1)] = json.loads(fm.group(2))
        except ValueError:
            raise LayoutError(f"{what}: cannot read {fm.group(1)} = {fm.group(2)}") from None
    return out


def _shape(shape: Any, what: str) -> list[int]:
    if shape is None:
        raise LayoutError(f"{what} needs the tensor shape (-t/--type or shape=)")
    try:
        dims = [int(s.__index__()) for s in shape]
    except (AttributeError, TypeError):
        raise LayoutError(f"{what}: shape {shape!r} must be a list of integers") from None
    if not dims or any(d < 1 for d in dims):
        raise LayoutError(f"{what}: shape {dims} must be positive integers")
    return dims


def parse_padded_shared(text: str, shape: Sequence[int] | None) -> SharedAddressMap:
    """``#ttg.padded_shared<[interval:+pad, ...] {offset = [...], block = []}>`` (or ``{order, shape}``).

    Law: the physical offset of logical offset ``o`` is ``o + sum(pad * (o // interval))``
    (``PaddedSharedEncodingAttr`` in Triton's ``TritonGPUAttrDefs.td``); the one converter is
    :func:`verilayout.frontends.triton.memory.padded_shared_to_map`, so a ``shape`` that differs
    from the layout's extent is refused. Without ``shape``, an ``{order, shape}`` text gives its own.

    >>> m = parse_padded_shared("#ttg.padded_shared<[32:+1] {order = [1, 0], shape = [16, 32]}>", [16, 32])
    >>> m.offset({"dim0": 1, "dim1": 0}), m.name, m.padding
    (33, '#ttg.padded_shared<[32:+1]>', ((32, 1),))
    """
    m = _PADDED.match(text) if isinstance(text, str) else None
    if not m:
        raise LayoutError("padded_shared: expected '#ttg.padded_shared<[interval:+pad, ...] {offset = [...], "
                          "block = [...]}>' or '{order = [...], shape = [...]}'")
    body = text[text.index("<") + 1:text.rindex(">")]
    try:
        pairs, params = triton_memory.padded_shared_parts(body)
        if shape is None and isinstance(params.get("shape"), list):
            shape = params["shape"]
        label = "#ttg.padded_shared<[" + ", ".join(f"{a}:+{b}" for a, b in pairs) + "]>"
        return triton_memory.padded_shared_to_map(body, _shape(shape, "padded_shared"), label)
    except LayoutError as e:
        msg = str(e)
        raise LayoutError(msg if msg.startswith("padded_shared") else f"padded_shared: {msg}") from None


def parse_shared_linear(text: str, shape: Sequence[int]) -> LinearLayout:
    """``#ttg.shared_linear<{offset = [[..], ..], block = [..]}, alignment = N>`` -> ``offset, block -> dims``.

    Law: the result's bases are the text's bases; ``alignment`` (the byte alignment of the
    allocation) does not change where elements live and is accepted without effect.

    >>> parse_shared_linear("#ttg.shared_linear<{offset = [[0, 1], [1, 0]]}, alignment = 16>", [2, 2]).bases
    {'offset': [[0, 1], [1, 0]], 'block': []}
    """
    m = _SHARED_LINEAR.fullmatch(text) if isinstance(text, str) else None
    if not m:
        raise LayoutError("shared_linear: expected '#ttg.shared_linear<{offset = [[...], ...]}, alignment = N>'")
    fields = _fields(m.group("body"), "shared_linear")
    unknown = set(fields) - {"offset", "block"}
    if unknown or "offset" not in fields:
        raise LayoutError(f"shared_linear: expected keys offset (and block), got {sorted(fields)}")
    dims = {f"dim{i}": s for i, s in enumerate(_shape(shape, "shared_linear"))}
    return LinearLayout({"offset": fields["offset"], "block": fields.get("block", [])}, dims,
                        require_surjective=False)


def _looks_like_mlir(text: str) -> bool:
    t = text.lstrip()
    return t.startswith(("#", "!", "tensor<", "module")) or "#ttg." in t or "#triton_gpu." in t


def attr_text(text: str) -> str:
    """The layout attribute of a ``!ttg.memdesc<...>`` type, or the text itself.

    >>> attr_text("!ttg.memdesc<4x4xf16, #ttg.shared_linear<{offset = [[0, 1]]}>, #smem>")
    '#ttg.shared_linear<{offset = [[0, 1]]}>'
    """
    t = text.strip()
    if t.startswith("!") and "#" in t:
        start = t.index("#")
        depth = 0
        for i in range(start, len(t)):
            if t[i] == "<":
                depth += 1
            elif t[i] == ">":
                depth -= 1
                if depth == 0:
                    return t[start:i + 1]
    return t


def _memdesc_shape(text: str) -> list[int] | None:
    m = re.match(r"\s*!(?:ttg|triton_gpu)\.memdesc<\s*((?:\d+x)+)", text)
    return [int(v) for v in m.group(1).rstrip("x").split("x")] if m else None


def _buffer_shape(attr: str, shape: list[int] | None) -> list[int] | None:
    """A memdesc with leading pipeline-buffer dims (``3x128x64``) holds buffers of the encoding's
    rank (the length of its first offset basis): the layout is one buffer's (see
    ``frontends.triton.memdesc_buffers``)."""
    m = re.search(r"offset\s*=\s*\[\s*\[([^\]]*)\]", attr)
    if shape is None or not m:
        return shape
    rank = m.group(1).count(",") + 1
    return shape[-rank:] if len(shape) > rank else shape


def memdesc_view_shapes(text: str) -> tuple[list[int], list[int]] | None:
    """``(view shape, allocation shape)`` of a ``!ttg.memdesc`` type that is a view into a larger
    allocation (Triton prints the allocation's shape last), else None.

    >>> memdesc_view_shapes("!ttg.memdesc<128x16xf16, #shared, #smem, mutable, 128x64>")
    ([128, 16], [128, 64])
    >>> memdesc_view_shapes("!ttg.memdesc<128x64xf16, #shared, #smem>") is None
    True
    """
    view = _memdesc_shape(text)
    m = re.search(r",\s*((?:\d+x)*\d+)\s*>\s*$", text.strip())
    if view is None or not m:
        return None
    alloc = [int(v) for v in m.group(1).split("x")]
    alloc = alloc[-len(view):] if len(alloc) >= len(view) else alloc
    return (view, alloc) if alloc != view else None


def shared_text_to_layout(text: str, shape: Sequence[int] | None = None):
    """The converter ``verilayout.parse`` calls for ``#ttg.padded_shared`` and ``#ttg.shared_linear``
    (the attribute, or a ``!ttg.memdesc`` type carrying it); ``None`` for any other text.

    >>> shared_text_to_layout("#ttg.shared_linear<{offset = [[1]]}, alignment = 4>", [2]).bases["offset"]
    [[1]]
    >>> shared_text_to_layout("#ttg.blocked<{}>", [2]) is None
    True
    """
    attr = attr_text(text)
    shape = plain_ints(shape)
    if shape is None:
        shape = _buffer_shape(attr, _memdesc_shape(text))
    if re.match(r"\s*#(?:ttg|triton_gpu)\.padded_shared\b", attr):
        return parse_padded_shared(attr, shape)
    if re.match(r"\s*#(?:ttg|triton_gpu)\.shared_linear\b", attr):
        return parse_shared_linear(attr, _shape(shape, "shared_linear"))
    return None


def _mlir_like(text: str) -> bool:
    t = text.lstrip()
    return t.startswith(("#", "!")) or "ttg." in t or "tensor<" in t


def operand_tile_layout(text: str, *, elem_bits: int, shape=None, swizzle_units: str | None = None):
    """The layout an MMA operand tile was stored in, from text: Triton MLIR (with ``shape``; a
    LinearLayout) or CuTe (a CuTe object carrying its own shape).

    Law: an ``elementBitWidth`` in the text must equal ``elem_bits``.

    >>> operand_tile_layout("#ttg.nvmma_shared<{swizzlingByteWidth = 32, transposed = false, "
    ...                     "elementBitWidth = 16}>", elem_bits=16, shape=[8, 16]).out_dims
    {'dim0': 8, 'dim1': 16}
    >>> type(operand_tile_layout("(8,16):(16,1)", elem_bits=16)).__name__
    'Layout'
    """
    if not isinstance(text, str):
        raise LayoutError(f"operand layout: expected text, got {type(text).__name__}")
    shape = plain_ints(shape)
    if _mlir_like(text):
        m = re.search(r"elementBitWidth\s*=\s*(\d+)", text)
        if m and int(m.group(1)) != elem_bits:
            raise LayoutError(f"the layout says elementBitWidth = {m.group(1)} but the element type "
                              f"has {elem_bits} bits")
        return parse(text, shape=shape)
    if shape is not None:
        raise LayoutError("shape applies to Triton layouts; CuTe text carries its own shape")
    return parse_cute(text, swizzle_units=swizzle_units)


def load_operand_layout(layout: Any, *, dtype: str, shape=None, swizzle_units: str | None = None) -> Any:
    """The door of the descriptor proofs: text (CuTe, or Triton MLIR with ``shape``) read once into
    an :class:`~verilayout.hw.nvidia.wgmma.OperandLayout` for ``dtype`` operands; anything else
    (a parsed layout, a ``TileAddress``) is returned unchanged for the prover to take or refuse.

    Law: an ``elementBitWidth`` in the text must equal ``dtype``'s width; ``fp4Padded = true``
    needs ``dtype="e2m1_padded"``.

    >>> o = load_operand_layout("Sw<1,4,3> o smem_ptr[16b](unset) o (8,16):(16,1)", dtype="f16")
    >>> type(o.layout).__name__, o.text[:8], o.fp4_padded
    ('ComposedLayout', 'Sw<1,4,3', False)
    """
    if not isinstance(layout, str):
        return layout
    try:
        parsed = operand_tile_layout(layout, elem_bits=operand_bits(dtype), shape=shape,
                                     swizzle_units=swizzle_units)
    except LayoutError as e:
        raise LayoutError(str(e).replace("the element type", f"dtype {dtype}")) from None
    if isinstance(parsed, SharedAddressMap):
        raise LayoutError(f"{parsed.name} is not supported as an MMA operand tile: the descriptor proofs "
                          "take CuTe layouts and GF(2)-linear Triton layouts, and a padded layout's offset "
                          "o + pad * (o // interval) is neither")
    padded = isinstance(parsed, LinearLayout) and "fp4Padded = true" in layout
    if padded and dtype != "e2m1_padded":
        raise LayoutError(f"an fp4Padded layout holds padded e2m1 (dtype e2m1_padded), not {dtype}")
    return OperandLayout(parsed, layout, padded)


def load_shared(text: str, shape=None, elem_bits: int | None = None):
    """Shared layout from text: Triton MLIR (nvmma, swizzled, shared_linear, padded) or CuTe.

    Law: a LinearLayout (GF(2)-linear) or a SharedAddressMap that places every element
    where the text does.

    >>> load_shared("#ttg.padded_shared<[32:+1] {order = [1, 0], shape = [16, 32]}>", [16, 32]).name
    '#ttg.padded_shared<[32:+1]>'
    """
    if not isinstance(text, str):
        raise LayoutError(f"shared layout: expected text, got {type(text).__name__}")
    shape, elem_bits = plain_ints(shape), plain_ints(elem_bits)
    if _looks_like_mlir(text):
        special = shared_text_to_layout(text, shape)
        if special is not None:
            return special
        return parse(text, shape=shape)
    return as_shared(parse(text, elem_bits=elem_bits), elem_bits)


def load_register(text: str, shape=None, what: str = "--reg") -> LinearLayout:
    """Register (distributed) layout from Triton MLIR text (attribute with shape, or a tensor type),
    or a CuTe thread-value layout over the tile ``shape`` (:func:`parse_cute_tv`); ``what`` names
    the argument in the refusal of any other layout (a shared one, say).

    >>> load_register("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], "
    ...               "order = [0]}>", [32]).in_dims["lane"]
    32
    """
    if not isinstance(text, str):
        raise LayoutError(f"register layout: expected text, got {type(text).__name__}")
    shape = plain_ints(shape)
    if not _looks_like_mlir(text) and looks_like_cute(text):     # a CuTe thread-value layout over the tile
        if shape is None:
            raise LayoutError(f"{what}: a CuTe thread-value layout needs its tile's shape (its index runs over it)")
        return parse_cute_tv(text, shape)
    lay = parse(text, shape=shape)
    if not isinstance(lay, LinearLayout) or "lane" not in lay.in_dim_names:
        got = f"one with inputs {lay.in_dim_names}" if isinstance(lay, LinearLayout) else \
            f"a {type(lay).__name__} (a shared layout)"
        raise LayoutError(f"{what}: expected a distributed layout (register, lane, warp -> dims), "
                          f"got {got}")
    return lay


# ----- DPAS operands of Intel 2D block-load plans -----------------------------------------

def operand(layout: Any, *, shape: Sequence[int] | None = None, dtype: str | None = None,
            op_idx: int | None = None, inst_shape: Sequence[int] | None = None) -> Operand:
    """Resolve a DPAS operand from MLIR text or a LinearLayout.

    >>> operand("#ttg.dot_op<{opIdx = 1, parent = #ttig.dpas<{repeatCount = 8, systolicDepth = 8, "
    ...         "executionSize = 16, opsPerChan = 2, threadsPerWarp = 16, warpsPerCTA = [1, 1], "
    ...         "repCluster = [1, 1]}>, kWidth = 2}>", shape=[16, 16], dtype="bf16").inst_shape
    (16, 16)
    """
    shape, op_idx, inst_shape = plain_ints(shape), plain_ints(op_idx), plain_ints(inst_shape)
    if isinstance(layout, LinearLayout):
        return layout_operand(layout, shape=shape, dtype=dtype, op_idx=op_idx, inst_shape=inst_shape)
    if not isinstance(layout, str):
        raise LayoutError(f"expected MLIR text or a LinearLayout, got {type(layout).__name__}")
    return _from_text(layout, shape, dtype, op_idx)


def type_shape_and_dtype(value: TensorType, shape: Any, dtype: Any) -> tuple[tuple, str]:
    """The shape and element type of a ``tensor<...>`` type, where a ``shape``/``dtype`` given
    beside it must agree (``None``: not given).

    >>> type_shape_and_dtype(parse_attr("tensor<16x32xf16>"), None, "f16")
    ((16, 32), 'f16')
    """
    if shape is not None and tuple(shape) != tuple(value.shape):
        raise LayoutError(f"shape {list(shape)} differs from the type's "
                          f"{'x'.join(map(str, value.shape))}")
    if dtype is not None and dtype != value.elem:
        raise LayoutError(f"dtype {dtype!r} differs from the type's element type {value.elem!r}")
    return tuple(value.shape), value.elem


def _from_text(text: str, shape, dtype, op_idx) -> Operand:
    value = parse_attr(text)
    if isinstance(value, TensorType):
        shape, dtype = type_shape_and_dtype(value, shape, dtype)
        attr = value.encoding
    else:
        attr = value
    if shape is None or dtype is None:
        raise LayoutError("give the tensor type (tensor<256x32xf16, #ttg.dot_op<...>>), or "
                          "shape= and dtype= with the attribute")
    check_dtype(dtype)
    parent = attr.params.get("parent") if isinstance(attr, Attr) else None
    if not (isinstance(attr, Attr) and attr.name in ("ttg.dot_op", "triton_gpu.dot_op")
            and triton_intel.is_dpas(parent)):
        name = f"#{attr.name}" if isinstance(attr, Attr) else repr(attr)
        raise LayoutError(f"block-load plans feed DPAS operands: expected #ttg.dot_op with a "
                          f"#ttig.dpas parent, got {name}")
    try:
        layout = triton_intel.dot_op_dpas_to_linear(attr.params, parent, tuple(shape))
        dpas = triton_intel.dpas_params(parent.params)
    except LayoutError as e:
        key = next((k for k in (*attr.params, *parent.params) if f"'{k}'" in str(e)), None)
        where = parent.where(key) if key in parent.params else attr.where(key)
        raise LayoutError(f"{where}: {e}") from None
    idx = attr.params["opIdx"]
    if op_idx is not None and op_idx != idx:
        raise LayoutError(f"op_idx={op_idx} but the text has opIdx = {idx}")
    if OPS_PER_CHAN[dtype] != dpas.ops_per_chan:
        raise LayoutError(f"{attr.where('parent')}: the DPAS layout has opsPerChan = "
                          f"{dpas.ops_per_chan} but {dtype} needs {OPS_PER_CHAN[dtype]}")
    return Operand(layout, dtype, idx, dpas.inst_shape(idx), dpas, text)


# ----- the doors of the block-load plans and the OpenCL emitters -----------------------------------

def is_dpas_operand_text(text: str) -> bool:
    """Whether Triton text (a tensor type or an attribute) is a ``#ttg.dot_op`` with a
    ``#ttig.dpas`` parent.

    >>> is_dpas_operand_text("tensor<16x16xf16, #ttg.blocked<{sizePerThread = [1, 1], "
    ...     "threadsPerWarp = [16, 1], warpsPerCTA = [1, 1], order = [1, 0]}>>")
    False
    """
    value = parse_attr(text)
    attr = value.encoding if isinstance(value, TensorType) else value
    return isinstance(attr, Attr) and attr.name in ("ttg.dot_op", "triton_gpu.dot_op") and \
        triton_intel.is_dpas(attr.params.get("parent"))


def tensor_layout(text: str, shape: Any = None, dtype: Any = None) -> TensorLayout:
    """A distributed layout of a rank-2 tensor from Triton text (a tensor type, or an attribute
    with ``shape`` and ``dtype``), for block-load plans.

    Law: a ``shape``/``dtype`` given beside a tensor type must agree with it; the layout has in
    dims register, lane (and warp).

    >>> tensor_layout("tensor<64x128xf16, #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [16, 1], "
    ...               "warpsPerCTA = [4, 1], order = [1, 0]}>>").shape
    (64, 128)
    """
    shape = plain_ints(shape)
    value = parse_attr(text)
    if isinstance(value, TensorType):
        shape, dtype = type_shape_and_dtype(value, shape, dtype)
    if shape is None or dtype is None:
        raise LayoutError("give the tensor type (tensor<64x128xf16, #ttg.blocked<...>>), or "
                          "shape= and dtype= with the attribute")
    lay = parse(text, shape=None if isinstance(value, TensorType) else list(shape))
    if not isinstance(lay, LinearLayout) or "lane" not in lay.in_dims:
        name = f"#{value.name}" if isinstance(value, Attr) else "this layout"
        raise LayoutError(f"block-load plans fill the registers of a distributed layout (in dims "
                          f"register, lane, warp); {name} is not one")
    return TensorLayout(lay, dtype, tuple(shape))


def load_block_layout(layout: Any, *, shape: Any = None, dtype: Any = None, op_idx: Any = None,
                      inst_shape: Any = None, dpas: bool | None = None) -> Any:
    """The door of the block-load plans: Triton text read once into a DPAS ``Operand``
    (``dpas=True``, or ``None`` and the text is a ``#ttg.dot_op`` with a ``#ttig.dpas`` parent)
    or a ``TensorLayout`` (any other distributed layout); anything else is returned unchanged
    for the planner to take or refuse.

    >>> load_block_layout("tensor<8x16xf16, #ttg.dot_op<{opIdx = 0, parent = #ttig.dpas<{repeatCount = 8, "
    ...     "systolicDepth = 8, executionSize = 16, opsPerChan = 2, threadsPerWarp = 16, "
    ...     "warpsPerCTA = [1, 1], repCluster = [1, 1]}>, kWidth = 1}>>").inst_shape
    (8, 16)
    """
    if not isinstance(layout, str):
        return layout
    if dpas if dpas is not None else is_dpas_operand_text(layout):
        return operand(layout, shape=shape, dtype=dtype, op_idx=op_idx, inst_shape=inst_shape)
    return tensor_layout(layout, shape, dtype)


def operand_of(man: dict) -> Operand:
    """The DPAS operand a block-load manifest names, parsed afresh from its text.

    >>> operand_of({"operand": {"layout": "tensor<8x16xf16, #ttg.dot_op<{opIdx = 0, parent = "
    ...     "#ttig.dpas<{repeatCount = 8, systolicDepth = 8, executionSize = 16, opsPerChan = 2, "
    ...     "threadsPerWarp = 16, warpsPerCTA = [1, 1], repCluster = [1, 1]}>, kWidth = 1}>>",
    ...     "shape": [8, 16], "dtype": "f16"}}).inst_shape
    (8, 16)
    """
    o = man.get("operand") if isinstance(man, dict) else None
    if not isinstance(o, dict) or not isinstance(o.get("layout"), str):
        raise LayoutError("manifest: 'operand' must hold the layout text, shape and dtype")
    shape = o.get("shape")
    return operand(o["layout"], shape=shape, dtype=o.get("dtype"))


def _kwidth(attr: Any, op_idx: int) -> int:
    ops = attr.params.get("opsPerChan") if hasattr(attr, "params") else None
    if not isinstance(ops, int):
        raise LayoutError("the DPAS attribute has no integer 'opsPerChan'")
    return ops if op_idx == 1 else max(1, ops // 2)


def dpas_tile(parent: Any, *, m: Any, n: Any, k: Any, dtype: str, max_volume: int | None = None) -> DpasTile:
    """The door of the DPAS GEMM emitter: the ``#ttig.dpas`` attribute text and the tile
    ``m x n x k`` read into the A and B operands (``#ttg.dot_op``, kWidth from opsPerChan) and
    C's accumulator layout. ``max_volume``: refuse ``m * n * k`` above it before reading anything.

    Law: m, n, k positive integers; ``dtype`` ``s8`` is spelled ``i8``.

    >>> t = dpas_tile("#ttig.dpas<{repeatCount = 8, systolicDepth = 8, executionSize = 16, opsPerChan = 2, "
    ...               "threadsPerWarp = 16, warpsPerCTA = [1, 1], repCluster = [1, 1]}>", m=8, n=16, k=32, dtype="f16")
    >>> t.a.shape, t.b.inst_shape, t.c.out_dims
    ((8, 32), (16, 16), {'dim0': 8, 'dim1': 16})
    """
    if not isinstance(parent, str) or "dpas" not in parent:
        raise LayoutError("the DPAS emitter takes the '#ttig.dpas<{...}>' attribute text")
    for key, v in (("m", m), ("n", n), ("k", k)):
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            raise LayoutError(f"{key} must be a positive integer, got {v!r}")
    if max_volume is not None and m * n * k > max_volume:
        raise LayoutError(f"tile {m}x{n}x{k} has {m * n * k} products; the emitter proves by "
                          f"enumeration up to {max_volume}")
    dtype = {"s8": "i8"}.get(dtype, dtype)
    attr = parse_attr(parent)
    a_text = (f"tensor<{m}x{k}x{dtype}, #ttg.dot_op<{{opIdx = 0, parent = {parent}, "
              f"kWidth = {_kwidth(attr, 0)}}}>>")
    b_text = (f"tensor<{k}x{n}x{dtype}, #ttg.dot_op<{{opIdx = 1, parent = {parent}, "
              f"kWidth = {_kwidth(attr, 1)}}}>>")
    opa, opb = operand(a_text), operand(b_text)
    return DpasTile(parent, (m, n, k), dtype, opa, opb, attr_to_linear(attr, (m, n)))
