"""frontends/ttgir reads a module once into typed IR: ops with their types (parsed value and Triton
layout), attributes, static indices, and the module's def-use graph; the audit walks those objects.

Expected values are read off the texts below by hand (which line defines and uses each value) or
derived from Triton's definition of the blocked layout (TritonGPUAttrDefs.td: lanes fill `order`'s
fastest dim first, then registers repeat the warp's tile along the same order)."""
from collections import Counter
from pathlib import Path

import pytest

from verilayout.audit.ttgir import audit_module
from verilayout.errors import LayoutError
from verilayout.frontends import ttgir as ttgir_frontend
from verilayout.frontends.ttgir import Op, Type, TypeTable, parse_module

ROOT = Path(__file__).resolve().parents[1]
MEM = "!ttg.memdesc<16x16xf16, #s, #smem, mutable>"
TEXT = f'''#b = #ttg.blocked<{{sizePerThread = [1, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [1, 0]}}>
#s = #ttg.swizzled_shared<{{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}}>
#smem = #ttg.shared_memory
module attributes {{"ttg.num-warps" = 1 : i32, "ttg.threads-per-warp" = 32 : i32}} {{
  %a = ttg.local_alloc : () -> !ttg.memdesc<2x16x16xf16, #s, #smem, mutable>
  %v = ttg.memdesc_index %a[%c0] : !ttg.memdesc<2x16x16xf16, #s, #smem, mutable> -> {MEM}
  %x = ttg.local_load %v : {MEM} -> tensor<16x16xf16, #b>
  %y = arith.addf %x, %x : tensor<16x16xf16, #b>
  ttg.local_store %y, %v : tensor<16x16xf16, #b> -> {MEM}
  %w = ttg.memdesc_subslice %v[0, 8] : {MEM} -> !ttg.memdesc<16x8xf16, #s, #smem, mutable, 16x16>
  %c = arith.constant dense<0.000000e+00> : tensor<16x16xf16, #b>
  %d = arith.constant dense<[1, 2]> : tensor<2xi32>
  %r = tt.reshape %y allow_reorder : tensor<16x16xf16, #b> -> tensor<256xf16, #b>
  %k = ttg.async_copy_global_to_local %p, %v {{contiguity = 8 : i32}} : tensor<16x16x!tt.ptr<f16>, #b> -> <16x16xf16, #s, #smem, mutable>
}}
'''


@pytest.fixture(scope="module")
def mod():
    return parse_module(TEXT)


def _op(mod, line: int) -> Op:
    return next(o for o in mod.ops if o.line == line)


def test_the_def_use_graph_is_the_texts(mod):
    # read off TEXT: %a at line 5, %v at 6, ...; %x is named twice by line 8 and listed once
    assert {n: o.line for n, o in mod.defs.items()} == {"%a": 5, "%v": 6, "%x": 7, "%y": 8, "%w": 10, "%c": 11,
                                                        "%d": 12, "%r": 13, "%k": 14}
    users = {n: [o.line for o in ops] for n, ops in mod.users.items()}
    assert users["%a"] == [6] and users["%v"] == [7, 9, 10, 14] and users["%x"] == [8] and users["%y"] == [9, 13]
    assert "%w" not in mod.users and mod.defs.get("%p") is None          # no user; a block argument
    assert mod.def_type("%v").text == MEM and mod.def_type("%p") is None and mod.def_type(None) is None
    assert mod.producers() == dict(mod.defs)


def test_one_type_object_per_text_and_its_layout(mod):
    load, store = _op(mod, 7), _op(mod, 9)
    assert load.in_types[0] is store.out_types[0] is mod.def_type("%v")   # the same text, one Type
    reg = load.out_types[0]
    assert reg.tensor.shape == (16, 16) and reg.tensor.elem == "f16" and not reg.is_memdesc and reg.is_tensor
    # blocked [1,1] x [8,4] lanes, order [1,0], 16x16: lanes take dim1 (x1, x2) then dim0 (x1, x2, x4);
    # the 8x4 tile repeats along dim1 (4, 8), then dim0 (8); (dim0, dim1) per basis
    assert reg.layout.bases["lane"] == [[0, 1], [0, 2], [1, 0], [2, 0], [4, 0]]
    assert reg.layout.bases["register"] == [[0, 4], [0, 8], [8, 0]]
    assert reg.encoding_as_printed == "#b" and reg.encoding_text.startswith("#ttg.blocked<")
    ring = _op(mod, 5).out_types[0]
    assert ring.is_memdesc and ring.tensor.shape == (2, 16, 16) and ring.layout_shape == (16, 16)
    assert ring.layout.out_dims == {"dim0": 16, "dim1": 16}


def test_a_bare_memdesc_is_read_as_one_and_keeps_its_text(mod):
    printed = _op(mod, 14).out_types[0]            # Triton prints the cp.async destination bare
    assert printed.text.startswith("<") and not printed.is_memdesc and printed.tensor.kind == "memdesc"
    full = printed.as_memdesc(_op(mod, 14).table)
    assert full.is_memdesc and full.text == "!ttg.memdesc" + printed.text and full.tensor == printed.tensor


def test_attributes_indices_and_flags_are_read_once(mod):
    assert _op(mod, 14).attributes == {"contiguity": 8}
    assert _op(mod, 14).attributes is _op(mod, 14).attributes
    assert _op(mod, 10).indices == (0, 8) and _op(mod, 7).indices is None
    assert _op(mod, 13).allow_reorder and not _op(mod, 8).allow_reorder
    assert _op(mod, 11).splat and not _op(mod, 12).splat and not _op(mod, 8).splat
    with pytest.raises(TypeError):
        _op(mod, 14).attributes["contiguity"] = 4          # read-only


def test_an_unreadable_type_or_layout_is_a_value_not_an_exception():
    bad = Type("tensor<16xf16, #nope>")
    assert bad.tensor is None and bad.layout is None and "undefined alias #nope" in bad.error
    unknown = Type("tensor<16xf16, #ttg.no_such_kind<{}>>")
    assert unknown.tensor is not None and unknown.layout is None and unknown.layout_error
    plain = Type("tensor<16xf16>")
    assert plain.encoding is None and plain.layout is None and plain.layout_error is None


def test_read_gives_the_text_readers_value_or_its_error():
    # the oracle is Module.type_of, the reader of one type text: every operand and result type of a
    # real pipelined matmul reads to the same value through its op's Type, and a text that does not
    # read raises the same one-line LayoutError both ways
    m = parse_module((ROOT / "examples" / "matmul_fp8.ttgir").read_text())
    pairs = [(t, text) for op in m.ops for t, text in zip(op.in_types + op.out_types,
                                                          op.operand_types + op.result_types)]
    assert len(pairs) > 100
    for typ, text in pairs:
        if typ.error is None:
            assert typ.read() == m.type_of(text), text
    bad = "tensor<16xf16, #nope>"
    with pytest.raises(LayoutError) as direct:
        m.type_of(bad)
    with pytest.raises(LayoutError) as through:
        m.table.type(bad).read()
    assert str(through.value) == str(direct.value) and "#nope" in str(direct.value)


def test_a_hand_built_op_gets_its_own_table():
    op = Op("ttg.local_load", 1, ("%x",), ("%v",), ("!ttg.memdesc<4xf16, #ttg.shared_memory>",), ())
    assert op.in_types[0].tensor.shape == (4,) and op.out_types == ()
    table = TypeTable()
    assert table.type("tensor<4xf16>") is table.type("tensor<4xf16>")


def test_the_audit_parses_each_type_text_at_most_once(monkeypatch):
    # a pipelined matmul repeats its few types on every op line: each distinct text is parsed once
    path = ROOT / "examples" / "matmul_fp8.ttgir"
    text = path.read_text()
    calls: Counter = Counter()
    real = ttgir_frontend.read_type

    def counting(t, aliases, parsed):
        calls[t] += 1
        return real(t, aliases, parsed)

    monkeypatch.setattr(ttgir_frontend, "read_type", counting)
    rep = audit_module(parse_module(text), str(path))
    assert rep.checks and calls and max(calls.values()) == 1
