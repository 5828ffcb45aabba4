"""Plain Python ints in ``verilayout.cute`` layouts are static, as CuTe's ``Int<N>`` (what the CuTe DSL
does with Python literals); ``DynamicInt`` (and CuTe text written without ``_``) is CuTe's run-time
``int``. The printed forms are checked against what CuTe C++ prints for the same construction
(``tests/oracles/cutlass/cute_print_oracle.recorded.txt`` and the CUTLASS unit test
``test/unit/cute/core/compact_xmajor.cpp``, quoted in the comments)."""
from __future__ import annotations

import pytest

from verilayout import cute
from verilayout.core.cute import DynamicInt, StaticInt, dynamic, format_cute
from verilayout.errors import LayoutError


def test_plain_ints_print_static_as_int_n():
    # CuTe: print(Layout<Shape<_8,_8>, Stride<_8,_1>>{}) -> (_8,_8):(_8,_1)
    assert format_cute(cute.Layout((8, 8), (8, 1))) == "(_8,_8):(_8,_1)"
    # CuTe: print(make_layout(Shape<_8,_8>{})) -> (_8,_8):(_1,_8) (compact column-major, static)
    assert format_cute(cute.Layout((8, 8))) == "(_8,_8):(_1,_8)"
    # compact_xmajor.cpp CompactColMajor_Static: (_4,_8,_1,_2) -> (_1,_4,_0,_32)
    assert format_cute(cute.Layout((4, 8, 1, 2))) == "(_4,_8,_1,_2):(_1,_4,_0,_32)"


def test_dynamic_ints_print_as_cutes_run_time_int():
    # CuTe: print(make_layout(make_shape(8, 8))) -> (8,8):(_1,8)
    assert format_cute(cute.Layout(dynamic((8, 8)))) == "(8,8):(_1,8)"
    # compact_xmajor.cpp CompactColMajor_Dynamic: (4,8,1,2) -> (_1,4,32,32) (a dynamic 1 keeps the product)
    assert format_cute(cute.Layout(dynamic((4, 8, 1, 2)))) == "(4,8,1,2):(_1,4,32,32)"


def test_text_keeps_what_it_says():
    for text in ("(8,8):(8,1)", "(_8,_8):(_8,_1)", "(_8,8):(8,_1)"):
        assert format_cute(cute.parse_cute(text)) == text


def test_dynamic_is_contagious_static_stays_static():
    assert isinstance(StaticInt(2) * DynamicInt(3), DynamicInt)
    assert isinstance(DynamicInt(3) * StaticInt(2), DynamicInt)
    assert isinstance(3 + DynamicInt(3), DynamicInt)
    assert StaticInt(2) * DynamicInt(3) == 6 and str(DynamicInt(6)) == "6" and f"{StaticInt(4)}" == "4"
    # the algebra on static inputs gives CuTe's static result: complement(Layout<_4,_2>{}, _24{})
    # is (_2,_3):(_1,_8) (the gap 2/1 below stride 2, then 24/8 = 3 repeats at stride 8)
    assert format_cute(cute.complement(cute.Layout(4, 2), 24)) == "(_2,_3):(_1,_8)"


def test_layout_equality_ignores_static_marks():
    assert cute.Layout((8, 8), (8, 1)) == cute.parse_cute("(8,8):(8,1)")


@pytest.mark.parametrize("bad", [True, 2.0, "8"])
def test_dynamic_int_refuses_non_integers(bad):
    with pytest.raises(LayoutError, match="DynamicInt needs an integer"):
        DynamicInt(bad)
