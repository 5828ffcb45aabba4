"""``verilayout.cute.from_dsl``: CuTe-DSL layouts, composed layouts and tensors read from the text
the DSL prints for them. Oracle: the DSL itself (nvidia-cutlass-dsl 4.8.1, run here by
``tests/cutedsl/generate_printed.py``; stored in ``tests/cutedsl/dsl_printed.json``: each object's
print and the offset the DSL's own ``obj(i)`` computes at every index), and for a swizzled
shared-memory pointer the 128-byte swizzle written out from the PTX ISA (byte address bits 4-6
XOR bits 7-9, "Shared Memory Matrix Layout" / the TMA swizzle modes)."""
from __future__ import annotations

import importlib.util
import json
import os

import pytest

from verilayout.cute import from_dsl, parse_cute
from verilayout.errors import LayoutError

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "cutedsl", "dsl_printed.json")) as _f:
    RECORDED = {o["name"]: o for o in json.load(_f)["objects"]}


class Printed:
    """Stands for a DSL object: what ``str()`` gives is what the DSL printed for it."""

    def __init__(self, text: str):
        self.text = text

    def __str__(self) -> str:
        return self.text


@pytest.mark.parametrize("name", [n for n, o in RECORDED.items() if "offsets" in o])
def test_every_index_is_the_offset_the_dsl_computes(name):
    o = RECORDED[name]
    layout = from_dsl(Printed(o["text"]))
    assert [layout(i) for i in range(len(o["offsets"]))] == o["offsets"]


def _sw128(byte: int) -> int:
    return byte ^ ((byte >> 3) & 0x70)


def test_a_swizzled_shared_tensor_swizzles_byte_addresses_of_its_elements():
    o = RECORDED["smem_swizzled"]
    t = from_dsl(Printed(o["text"]))
    inner = parse_cute(o["layout"])                       # the tensor's layout, element offsets
    for i in range(128 * 64):
        assert t.offset_bytes(i) == _sw128(2 * inner(i)), i


@pytest.mark.parametrize("name,elements", [("smem_plain", 32 * 8), ("gmem", 128 * 64)])
def test_an_unswizzled_tensor_is_its_layout(name, elements):
    o = RECORDED[name]
    t = from_dsl(Printed(o["text"]))
    # the fake gmem tensor is row-major 128 x 64 (stride_order (1, 0)); the shared one column-major
    want = (lambda i: (i % 128) * 64 + i // 128) if name == "gmem" else (lambda i: i)
    assert [t(i) for i in range(elements)] == [want(i) for i in range(elements)]


@pytest.mark.parametrize("text,says", [
    ("tensor<ptr<f16, smem, align<128>, S<3,4,3>> o (8,64):(64,1)>", "alignment"),
    ("tensor<ptr<f16, gmem, align<16>, S<3,4,3>> o (8,64):(64,1)>", "gmem"),
    ("tensor<ptr<q7, smem, align<1024>, S<3,4,3>> o (8,64):(64,1)>", "unknown width"),
    ("tensor<ptr<f16, smem> (8,64):(64,1)>", "not a CuTe-DSL tensor print"),
    ("tensor<garbage", "not a CuTe-DSL tensor print"),
    ("#ttg.blocked<{sizePerThread = [1]}>", "col 1: expected a number"),
])
def test_what_is_not_a_dsl_print_is_one_line(text, says):
    with pytest.raises(LayoutError, match=says) as e:
        from_dsl(Printed(text))
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("obj", [None, 3, (8, 4), b"(8,4):(4,1)"])
def test_what_is_not_a_dsl_object_is_one_line(obj):
    with pytest.raises(LayoutError, match="from_dsl needs a CuTe-DSL Layout, ComposedLayout or Tensor"):
        from_dsl(obj)


@pytest.mark.skipif(importlib.util.find_spec("cutlass") is None,
                    reason="the optional extra cutedsl (nvidia-cutlass-dsl) is not installed (optional tool)")
def test_live_objects_of_a_trace_read_as_recorded():       # pragma: no cover - optional extra
    import subprocess
    import sys
    out = subprocess.run([sys.executable, os.path.join(HERE, "cutedsl", "generate_printed.py")],
                         capture_output=True, text=True, check=True).stdout
    live = {o["name"]: o for o in json.loads(out)["objects"]}
    assert {n: o["text"] for n, o in live.items()} == {n: o["text"] for n, o in RECORDED.items()}
