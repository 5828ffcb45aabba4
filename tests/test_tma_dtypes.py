"""Every CUtensorMapDataType and every element spelling Triton prints, through ``tma_matches``.

Oracles from outside the code under test:

* ``cuda.h`` (the CUDA toolkit's, and the copy the Triton wheel ships): the ``CUtensorMapDataType``
  enum, in order, with the element size its documentation comment gives ("// 4 bytes", "// 4 bits");
* the Triton wheel's own IR builder: the element type it prints in ``!tt.tensordesc<...>`` for each
  ``tl`` dtype and signedness (``ui8``, ``si32``, ``f8E4M3FN``, ...), and Triton's bit width of it;
* Triton 3.9's TTGIR in tests/corpus/ (a persistent TMA matmul), its element type respelled.
"""
from __future__ import annotations

import glob
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from verilayout.errors import LayoutError
from verilayout.hw.nvidia.tma import TMA_DTYPES, TensorMap, limit_findings, tma_element_bits
from verilayout.prove.tma import check_ring, triton_copy_verdict, slot_type
from verilayout.prove import tma as _prove_tma
from verilayout.frontends.shared_text import load_operand_layout
from verilayout.spec import load_spec_text, run_spec


def layout_reader(layout, *, dtype, shape=None, swizzle_units=None, **kw):
    """The door (text read by ``load_operand_layout`` for the reader's slot type), then the prover's reader."""
    return _prove_tma.layout_reader(load_operand_layout(layout, dtype=slot_type(dtype), shape=shape,
                                                        swizzle_units=swizzle_units), dtype=dtype, **kw)


ROOT = pathlib.Path(__file__).resolve().parent.parent


def cuda_headers() -> list[pathlib.Path]:
    found = []
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    pats = ([f"{home}/include/cuda.h"] if home else []) + ["/usr/local/cuda*/include/cuda.h"]
    for p in pats:
        found += [pathlib.Path(x) for x in glob.glob(p)]
    try:
        import triton
        p = pathlib.Path(triton.__file__).parent / "backends" / "nvidia" / "include" / "cuda.h"
        if p.exists():
            found.append(p)
    except ImportError:
        pass
    return found


def header_enum(path: pathlib.Path) -> list[tuple[str, int]]:
    """(name, bits) of CUtensorMapDataType from the documentation block's commented copy."""
    text = path.read_text(errors="replace")
    rows = re.findall(r"CU_TENSOR_MAP_DATA_TYPE_(\w+)(?: = 0)?,?\s*// (\d+) (byte|bytes|bits)\b", text)
    out = []
    for name, n, unit in rows:
        bits = int(n) * (8 if unit.startswith("byte") else 1)
        if (name, bits) in out:
            break
        out.append((name, bits))
    typedef = re.search(r"typedef enum CUtensorMapDataType_enum \{(.*?)\}", text, re.S)
    assert typedef, path
    names = re.findall(r"CU_TENSOR_MAP_DATA_TYPE_(\w+)", typedef.group(1))
    assert names == [n for n, _ in out], path          # the commented copy is the enum itself
    return out


@pytest.fixture(scope="module")
def enum() -> list[tuple[str, int]]:
    heads = cuda_headers()
    if not heads:
        pytest.fail("no cuda.h found (CUDA toolkit or the Triton wheel's copy): the oracle is missing")
    tables = [header_enum(h) for h in heads]
    assert all(t == tables[0] for t in tables)
    return tables[0]


def test_every_enum_value_in_order_with_its_size(enum):
    assert [n.lower() for n, _ in enum] == list(TMA_DTYPES)
    for name, bits in enum:
        assert tma_element_bits(name) == bits
        assert tma_element_bits(f"CU_TENSOR_MAP_DATA_TYPE_{name}") == bits
        assert TensorMap(name, global_dims=(256, 8), box=(128, 8)).bits == bits


def _spec(tmap_dtype: str, reader_dtype: str, bits: int, reader_swizzle: str) -> str:
    n = 128 * 8 // bits
    return f'''
[layouts.r]
text = "{reader_swizzle} o smem_ptr[{bits}b](unset) o (8,{n}):({n},1)"
[[obligation]]
kind = "tma_matches"
tensor_map = {{ dtype = "{tmap_dtype}", box = [{n}, 8], swizzle = "128B", global_dims = [{4 * n}, 64] }}
layout = "r"
dtype = "{reader_dtype}"
stages = 2
'''


SHORT = {8: "u8", 16: "i16", 32: "f32", 64: "f64"}


def test_tma_matches_takes_every_byte_sized_type(enum):
    for name, bits in enum:
        if bits % 8:
            continue
        for reader in (name, name.lower(), SHORT[bits]):
            ok = run_spec(load_spec_text(_spec(name, reader, bits, "Sw<3,4,3>"), "inline.toml"))
            assert [r.verdict.status for r in ok] == ["proved"], (name, reader, ok[0].verdict.reason)
            bad = run_spec(load_spec_text(_spec(name, reader, bits, "Sw<2,4,3>"), "inline.toml"))
            assert [r.verdict.status for r in bad] == ["counterexample"], (name, reader)


def test_packed_types_are_said_to_be_unmodelled(enum):
    for name, bits in enum:
        if bits % 8 == 0:
            continue
        t = TensorMap(name, global_dims=(256, 8), box=(128, 8))
        v = check_ring(t, layout_reader("(8,128):(128,1)", dtype="e2m1"))
        assert v.status == "unknown" and "not modelled" in v.reason


def triton_spellings() -> list[tuple[str, str, int]]:
    """(tl dtype, the element spelling in !tt.tensordesc, Triton's width) from the wheel's builder."""
    code = r'''
import json, triton.language as tl
from triton._C.libtriton import ir
ctx = ir.context(); ir.load_dialects(ctx); b = ir.builder(ctx)
out = []
for n in dir(tl):
    d = getattr(tl, n)
    if not isinstance(d, tl.dtype) or d.is_ptr() or n in ("void", "int1") or d.primitive_bitwidth < 8:
        continue
    for signed in (True, False):
        t = str(b.create_tensor_descriptor_type(tl.block_type(d, [64, 64]).to_ir(b), signed))
        out.append((n, t, d.primitive_bitwidth))
print(json.dumps(out))
'''
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return [tuple(x) for x in json.loads(r.stdout)]


def test_every_spelling_triton_prints_is_modelled():
    from verilayout.frontends.triton import attr_to_linear, parse_attr
    from verilayout.frontends.triton.shared import tma_encoding
    rows = triton_spellings()
    elems = set()
    for tl_name, printed, width in rows:
        m = re.fullmatch(r"!tt\.tensordesc<64x64x(\w+)>", printed)
        assert m, printed
        elem = m.group(1)
        elems.add(elem)
        assert tma_element_bits(elem) == width, (tl_name, elem)
        a = parse_attr(f"#ttg.nvmma_shared<{{swizzlingByteWidth = 128, transposed = false, elementBitWidth = {width}}}>")
        block = [64, 2 * 1024 // width]
        tmap, v = triton_copy_verdict(tma_encoding(a, block), block, elem, attr_to_linear(a, tuple(block)))
        assert v.status == "proved", (elem, v.reason)
        assert tmap.bits == width
    assert {"ui8", "si8", "ui16", "si32", "ui64", "f8E4M3FN", "f8E5M2", "f32", "f64", "bf16"} <= elems


def test_a_ui8_tma_copy_in_triton_ttgir_is_proved_not_unchecked():
    src = (ROOT / "tests/corpus/cuda90/persistent_tma_matmul_fp8_128x128x128_w4_s3.ttgir").read_text()
    text = src.replace("tensordesc<128x128xf8E4M3FN", "tensordesc<128x128xui8").replace("xf8E4M3FN", "xi8")
    assert "ui8" in text
    from verilayout.audit import audit_text
    rep = audit_text(text, "ui8.ttgir")
    tma = [c for c in rep.checks if c.check == "tma-write"]
    assert tma and all(f.status == "proved" for f in tma), [f.message for f in tma][:2]


def test_unknown_element_names_are_one_line_layout_errors():
    for bad in ("f17", "ui7", "FLOAT128", "", "f8"):
        with pytest.raises(LayoutError, match="tensor map element type"):
            tma_element_bits(bad)


def test_the_packed_types_rules_hold_under_every_spelling():
    # cuda.h: 16U4_ALIGN16B / 16U6_ALIGN16B need a 32-byte aligned global address; OOB NaN fill needs floats
    for name in ("16U4_ALIGN16B", "CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B", "16u4_align16b"):
        t = TensorMap(name, global_dims=(256, 8), box=(128, 8), global_address=0x10)
        assert "global-address" in [f.rule for f in limit_findings(t)], name
    for name, floating in (("CU_TENSOR_MAP_DATA_TYPE_FLOAT32", True), ("ui8", False), ("f8E4M3FN", True),
                           ("UINT16", False)):
        t = TensorMap(name, global_dims=(256, 8), box=(64, 8), oob_fill="nan_request_zero_fma")
        assert ("oob-fill" in [f.rule for f in limit_findings(t)]) != floating, name
