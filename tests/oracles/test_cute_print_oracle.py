"""CuTe's printed forms read back, against what CuTe itself prints and computes.

``cutlass/cute_print_oracle.cpp`` (host-only, the nvidia-cutlass wheel's CuTe headers) prints, for
each case, the text CuTe's ``print`` writes and the offset, address or coordinate of every element
in CuTe's order; its output is recorded in ``cutlass/cute_print_oracle.recorded.txt`` (the
recorded lines are checked on every run; with a C++ compiler the program is rebuilt and must print
them again). Cases: ``composition(Swizzle, Layout)`` (``Sw<3,3,3> o _0 o L``: element units),
``print(tensor)`` with a swizzled pointer (``Sw<3,4,3>_smem_ptr[16b](0x400) o L``: absolute byte
addresses), a plain pointer, ``gmem_ptr``, ``tmem_``, scaled-basis strides (``_1@0``), and
``zipped_divide`` / ``tiled_divide`` (printed text and offsets).
"""
from __future__ import annotations

import pathlib

import pytest

from verilayout.core.cute import Layout, StaticInt, dynamic, Swizzle, composition, format_cute, tiled_divide, zipped_divide
from verilayout.core.cute.int_tuple import basis_coords
from verilayout.errors import LayoutError
from verilayout.frontends.cute_text import parse_cute, parse_cute_tensor

HERE = pathlib.Path(__file__).resolve().parent / "cutlass"
SOURCE = HERE / "cute_print_oracle.cpp"
RECORDED = HERE / "cute_print_oracle.recorded.txt"


def _cases(text: str) -> dict[str, tuple[str, list[str]]]:
    lines = text.splitlines()
    out = {}
    for i, ln in enumerate(lines):
        if ln.startswith("CASE "):
            assert lines[i + 2].startswith("VALUES")
            out[ln[5:]] = (lines[i + 1], lines[i + 2].split()[1:])
    return out


CASES = _cases(RECORDED.read_text())


def test_every_case_is_checked():
    assert set(CASES) == set(LAYOUTS) | set(TENSORS) | set(COORDS) | set(DIVIDES) | {"gmma_k_sw128_f16"}


# ----- layouts: element offsets -----------------------------------------------------------------

LAYOUTS = ("composition_sw333", "composition_sw333_dynamic", "composition_sw233_tile")


@pytest.mark.parametrize("name", LAYOUTS)
def test_composition_print_form_is_read_in_elements(name):
    printed, values = CASES[name]
    L = parse_cute(printed)                                   # no swizzle_units needed
    assert L.swizzle_units == "elements"
    assert [int(L(i)) for i in range(L.size)] == [int(v) for v in values]
    assert format_cute(L) == printed


def test_gmma_atom_print_round_trips():
    # CuTe evaluates this layout without its pointer; only the text is compared here
    printed, _ = CASES["gmma_k_sw128_f16"]
    L = parse_cute(printed)
    assert (L.swizzle_units, L.elem_bits) == ("bytes", 16) and format_cute(L) == printed


# ----- tensors: addresses ----------------------------------------------------------------------

TENSORS = ("tensor_swizzle_ptr", "tensor_swizzle_ptr_0x480", "tensor_plain_ptr_composed", "tensor_plain_ptr",
           "tensor_gmem_ptr", "tensor_tmem")


@pytest.mark.parametrize("name", TENSORS)
def test_print_tensor_gives_each_elements_address(name):
    printed, values = CASES[name]
    t = parse_cute_tensor(printed)
    assert parse_cute(printed) == t.layout
    L = t.layout
    if t.memory == "tmem_":                  # TMEM address lane << 16 | column, 32-bit columns
        got = [t.base + int(L(i)) for i in range(L.size)]
    else:                                    # a swizzled pointer: from the base rounded to the span
        got = [t.origin + int(L(i)) * t.elem_bits // 8 for i in range(L.size)]
    if t.swizzle is not None:
        span = {"tensor_swizzle_ptr": 1024, "tensor_swizzle_ptr_0x480": 512}[name]   # 2^(B+M+S) bytes
        assert t.origin == t.base - t.base % span
        assert L.offset * t.elem_bits // 8 == t.base % span
    assert got == [int(v) for v in values]


def test_null_and_unset_pointers_read_as_address_zero():
    # CuTe prints a pointer with printf("%p"): glibc writes a null pointer as "(nil)"
    for text in ("smem_ptr[16b]((nil)) o (_4,_8):(_8,_1)", "gmem_ptr[16b](0) o (_4,_8):(_8,_1)"):
        t = parse_cute_tensor(text)
        assert (t.base, t.layout) == (0, Layout((4, 8), (8, 1)))


def test_dynamic_pointer_address_refused_only_where_it_matters():
    assert parse_cute("smem_ptr[16b](?) o (_4,_8):(_8,_1)") == Layout((4, 8), (8, 1))
    with pytest.raises(LayoutError, match=r"^col 1: the swizzled pointer's address is dynamic"):
        parse_cute("Sw<3,4,3>_smem_ptr[16b](?) o (_8,_64):(_64,_1)")


# ----- scaled bases: coordinates -------------------------------------------------------------------

COORDS = ("identity_layout", "scaled_basis", "scaled_basis_nested")


@pytest.mark.parametrize("name", COORDS)
def test_scaled_basis_strides_give_cutes_coordinates(name):
    printed, values = CASES[name]
    L = parse_cute(printed)
    assert format_cute(L) == printed
    want = [tuple(int(x) for x in v.strip("()").split(",")) for v in values]
    assert [basis_coords(L(i), 2) for i in range(L.size)] == want


# ----- zipped_divide / tiled_divide ------------------------------------------------------------------

_S = StaticInt
_DYN = Layout(dynamic((8, 16)), dynamic((16, 1)))      # make_layout(make_shape(8, 16), ...): run-time ints
_STA = Layout((_S(8), _S(16)), (_S(16), _S(1)))
_TILER = (Layout(_S(2), _S(1)), Layout(_S(4), _S(1)))
DIVIDES = {
    "zipped_divide_dynamic": lambda: zipped_divide(_DYN, _TILER),
    "zipped_divide_static": lambda: zipped_divide(_STA, _TILER),
    "tiled_divide_dynamic": lambda: tiled_divide(_DYN, _TILER),
    "tiled_divide_static": lambda: tiled_divide(_STA, _TILER),
    # a tiler of plain Python ints is CuTe's static Shape<_2,_4> (the CuTe DSL reads Python ints as static)
    "zipped_divide_shape_tiler": lambda: zipped_divide(Layout(dynamic((8, 16))), (2, 4)),
    "zipped_divide_strided_tiler": lambda: zipped_divide(Layout((_S(8), _S(16))), (Layout(_S(2), _S(4)),
                                                                                   Layout(_S(4), _S(2)))),
    "tiled_divide_swizzled": lambda: tiled_divide(
        composition(Swizzle(3, 3, 3), Layout((_S(16), _S(64)), (_S(64), _S(1)))), (Layout(_S(8), _S(1)), Layout(_S(16), _S(1)))),
}


@pytest.mark.parametrize("name", sorted(DIVIDES))
def test_divides_print_and_evaluate_as_cute(name):
    printed, values = CASES[name]
    L = DIVIDES[name]()
    assert format_cute(L) == printed        # static marks where CuTe has them, plain ints where not
    assert [int(L(i)) for i in range(L.size)] == [int(v) for v in values]


# ----- the live build ---------------------------------------------------------------------------------

@pytest.mark.oracle
def test_recorded_output_is_what_cute_prints():
    from tests.oracles.cutlass_build import run_program
    out = run_program("cute_print", SOURCE.read_text())
    assert out == RECORDED.read_text()


# ----- the CuTe DSL's print forms -----------------------------------------------------------------

def test_dsl_swizzle_form_is_the_byte_pattern_cute_cpp_addresses():
    # the CuTe DSL's make_smem_layout_atom(K_SW128, Float16) is S<3,4,3> o 0 o (8,64):(64,1) (the
    # byte pattern Swizzle<3,4,3> over an f16 element layout, cute/nvgpu/warpgroup/helpers.py);
    # tiled to 16 x 64 it is CuTe C++'s tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>, 16 x 64),
    # whose elements' addresses CuTe printed for a pointer at 0x400 (case tensor_swizzle_ptr)
    printed, values = CASES["tensor_swizzle_ptr"]
    dsl = parse_cute("S<3,4,3> o 0 o ((8,2),(64,1)):((64,512),(1,0))", elem_bits=16)
    assert (dsl.swizzle_units, dsl.elem_bits) == ("bytes", 16)
    t = parse_cute_tensor(printed)
    assert [t.origin + 2 * int(dsl(i)) for i in range(dsl.size)] == [int(v) for v in values]
    no_offset = parse_cute("S<3,4,3> o ((8,2),(64,1)):((64,512),(1,0))", elem_bits=16)
    assert [int(no_offset(i)) for i in range(no_offset.size)] == [int(dsl(i)) for i in range(dsl.size)]


@pytest.mark.parametrize("text, col, what", [
    ("(8,?):(1,8)", 4, "a shape value is dynamic"),
    ("((8,2),?):((1,8),16)", 8, "a shape value is dynamic"),
    ("(8,4):(?,8)", 8, "a stride value is dynamic"),
    ("S<3,4,3> o ? o (8,64):(64,1)", 12, "the offset must be an integer (it is dynamic"),
    ("(8,4):(1,2*?)", 12, "arithmetic on a dynamic value"),
])
def test_dsl_dynamic_value_is_one_line_with_its_column(text, col, what):
    with pytest.raises(LayoutError) as e:
        parse_cute(text)
    msg = str(e.value)
    assert msg.startswith(f"col {col}: {what}") and "\n" not in msg


def test_dsl_dynamic_stride_of_an_extent_one_mode_does_not_matter():
    # no coordinate of an extent-1 mode steps its stride: CuTe's offset is the same for any value
    L = parse_cute("(8,1):(1,?)")
    assert L == Layout((8, 1), (1, 0))
    assert [int(L(i)) for i in range(8)] == list(range(8))
