"""Triton's own lit tests as input (``tests/upstream/lit_layouts.json``, made by
``tests/upstream/extract_lit_layouts.py``; the comparison with the Triton 3.9 wheel is
``tests/oracles/test_lit_layouts_oracle.py``). Without the wheel: every stored type and every alias
definition no type uses is read by verilayout's MLIR reader, and each type's layout is computed or
refused with a one-line LayoutError, never another exception.
"""
from __future__ import annotations

import json
from pathlib import Path

from verilayout.errors import LayoutError
from verilayout.frontends.mlir import Attr, TensorType, parse_value
from verilayout.frontends.triton import type_to_layout

LIT = json.loads((Path(__file__).resolve().parent / "upstream" / "lit_layouts.json").read_text())


def test_the_data_is_triton_lit_tests():
    src = LIT["source"]
    assert src["files"] > 300 and len(LIT["types"]) > 4000
    assert all(e["file"].startswith("test/") and e["file"].endswith(".mlir") for e in LIT["types"])
    assert not any(e["file"].startswith("test/TLX/") for e in LIT["types"])


def test_every_type_reads_or_is_a_one_line_layout_error():
    read = refused = 0
    for e in LIT["types"]:
        try:
            t = parse_value(e["type"])
            assert isinstance(t, TensorType) and isinstance(t.encoding, Attr), e
            type_to_layout(t)
            read += 1
        except LayoutError as err:
            assert "\n" not in str(err)
            refused += 1
    assert refused < read / 20, (read, refused)


def test_unused_alias_definitions_parse():
    for e in LIT["unused_attributes"]:
        try:
            assert isinstance(parse_value(e["attribute"]), Attr)
        except LayoutError as err:
            assert "\n" not in str(err), e
