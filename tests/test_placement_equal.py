"""`equal` on placed layouts: absolute vs buffer-relative swizzles compared on absolute addresses.

Expectations come from brute force written here: every (row, col) of an 8 x 64 f16 tile, its
byte address under the 128-byte swizzle written from its definition (CuTe ``Swizzle<3,4,3>``:
bits 7..9 of the byte address XORed into bits 4..6; Triton's ``#ttg.swizzled_shared`` with
vec 8, perPhase 1, maxPhase 8: the 8-element chunk index XORed with the row modulo 8), once on
the absolute address (``swz(base + L)``, the writer that swizzles absolute bits, as TMA does) and
once on the offset inside the buffer (``base + swz(L)``).
"""
from __future__ import annotations

import textwrap

import pytest

from verilayout.cli.main import main
from verilayout.core.cute.layout import ComposedLayout
from verilayout.core.linear_layout import LinearLayout
from verilayout.core.smt import equal, placed
from verilayout.errors import LayoutError
from verilayout.frontends.cute_text import parse_cute
from verilayout.frontends.triton import parse

ROWS, COLS = 8, 64
RELATIVE_CUTE = "Sw<3,4,3> o smem_ptr[16b](unset) o (8,64):(64,1)"
RELATIVE_TRITON = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"
BASES = [0, 0x400, 0x800, 0x1C00, 0x480, 0x4A0, 0x410, 0x80, 0x100]


def _swz(byte: int) -> int:
    return byte ^ ((byte >> 3) & (0b111 << 4))


def _relative_triton(r: int, c: int) -> int:
    """Element offset of Triton's swizzled_shared (vec 8, perPhase 1, maxPhase 8), 64 cols."""
    return r * COLS + (((c // 8) ^ (r % 8)) * 8) + c % 8


def _absolute(base: int, r: int, c: int) -> int:
    return _swz(base + 2 * (r * COLS + c)) // 2


def _mismatches(base: int, relative) -> set:
    return {(r, c) for r in range(ROWS) for c in range(COLS)
            if base // 2 + relative(r, c) != _absolute(base, r, c)}


def _absolute_layout(base: int) -> ComposedLayout:
    rel = parse_cute(RELATIVE_CUTE)
    return ComposedLayout(rel.swizzle, rel.layout, base // 2, ptr_bits=16)


def _check(v, base, relative):
    bad = _mismatches(base, relative)
    if not bad:
        assert v.status == "proved", (hex(base), v.reason)
        return
    assert v.status == "counterexample", hex(base)
    c = v.counterexample
    r, col = c["dim0"], c["dim1"]
    assert (r, col) in bad
    assert c["lhs"]["offset"] == base // 2 + relative(r, col)
    assert c["rhs"]["offset"] == _absolute(base, r, col)


def test_the_brute_force_agrees_at_1024_aligned_bases_only():
    # the derivation behind the expectations: the swizzle reads bits 7..9, which a
    # 1024-aligned base leaves alone; 0x480 sets bit 7
    rel_cute = lambda r, c: _swz(2 * (r * COLS + c)) // 2  # noqa: E731
    for base in BASES:
        assert (not _mismatches(base, rel_cute)) == (base % 1024 == 0), hex(base)
        assert _mismatches(base, rel_cute) == _mismatches(base, _relative_triton)


@pytest.mark.parametrize("base", BASES)
def test_cute_relative_placed_vs_absolute(base):
    rel = parse_cute(RELATIVE_CUTE)
    rel_fn = lambda r, c: _swz(2 * (r * COLS + c)) // 2  # noqa: E731
    _check(equal(placed(rel, base // 2), _absolute_layout(base)), base, rel_fn)


@pytest.mark.parametrize("base", BASES)
def test_triton_shared_placed_vs_absolute(base):
    smem = parse(RELATIVE_TRITON, [ROWS, COLS])
    _check(equal(placed(smem, base // 2), _absolute_layout(base)), base, _relative_triton)


@pytest.mark.parametrize("a,b", [(0x400, 0x800), (0x480, 0x480), (0, 0x480)])
def test_two_placed_layouts_at_different_bases(a, b):
    smem = parse(RELATIVE_TRITON, [ROWS, COLS])
    v = equal(placed(smem, a // 2), placed(smem, b // 2))
    assert v.status == ("proved" if a == b else "counterexample")
    if a != b:
        c = v.counterexample
        want = _relative_triton(c["dim0"], c["dim1"])
        assert (c["lhs"]["offset"], c["rhs"]["offset"]) == (a // 2 + want, b // 2 + want)


def test_placed_law_on_every_input():
    L = LinearLayout({"i": [[3], [5], [8]]}, {"offset": 16}, False)
    for base in (0, 1, 64, 1000):
        f = placed(L, base)
        for i in range(8):
            assert f.apply({"i": i}) == {"offset": base + L.apply({"i": i})["offset"]}


@pytest.mark.parametrize("base", [-1, 1.5, True])
def test_bad_bases(base):
    with pytest.raises(LayoutError, match="base"):
        placed(parse_cute(RELATIVE_CUTE), base)


def test_a_non_invertible_shared_layout_is_refused():
    L = LinearLayout({"offset": [[1, 0], [1, 0]]}, {"dim0": 4, "dim1": 1}, False)
    with pytest.raises(LayoutError, match="not invertible"):
        placed(L, 4)


def _spec(tmp_path, body: str):
    p = tmp_path / "s.toml"
    p.write_text(textwrap.dedent(body))
    return str(p)


def _check_equal_to_absolute(tmp_path, base: int, rel_at: str) -> int:
    """``verilayout check``'s exit code for: the layout ``rel_at`` (TOML, 8-space indented) equals
    the swizzled f16 8x64 tile ``Sw<3,4,3>`` at element offset ``base // 2``."""
    return main(["check", _spec(tmp_path, rel_at + f"""
        [layouts.abs_at]
        text = "Sw<3,4,3> o smem_ptr[16b](unset) o {base // 2} o (8,64):(64,1)"
        [[obligation]]
        kind = "equal"
        lhs = "rel_at"
        rhs = "abs_at"
    """)])


@pytest.mark.parametrize("base,rc", [(0x800, 0), (0x480, 1), (0x4A0, 1), (0x1C00, 0)])
def test_spec_placed_source(tmp_path, base, rc):
    expected = 0 if not _mismatches(base, _relative_triton) else 1
    assert rc == expected
    assert _check_equal_to_absolute(tmp_path, base, f"""
        [layouts.rel]
        text = "{RELATIVE_TRITON}"
        shape = [8, 64]
        [layouts.rel_at]
        placed = "rel"
        base_address = {base}
        dtype = "f16"
    """) == rc


@pytest.mark.parametrize("base,rc", [(0x800, 0), (0x480, 1)])
def test_spec_banks_shared_source_with_base_address_in_equal(tmp_path, base, rc):
    assert _check_equal_to_absolute(tmp_path, base, f"""
        [layouts.rel_at]
        shared = "{RELATIVE_TRITON}"
        shape = [8, 64]
        dtype = "f16"
        base_address = {base}
    """) == rc


@pytest.mark.parametrize("extra,msg", [
    ("base_address = 0x481\ndtype = \"f16\"", "multiple of the element size"),
    ("base_address = 0x480", "needs the element type"),
    ("base_address = -4\ndtype = \"f16\"", "base_address"),
    ("base_address = 0x480\ndtype = \"f16\"\nbogus = 1", "unknown keys"),
])
def test_spec_placed_bad_input_is_exit_2(tmp_path, capsys, extra, msg):
    spec = _spec(tmp_path, f"""
        [layouts.rel]
        text = "{RELATIVE_TRITON}"
        shape = [8, 64]
        [layouts.rel_at]
        placed = "rel"
        {extra.replace(chr(10), chr(10) + "        ")}
        [[obligation]]
        kind = "injective"
        layout = "rel_at"
    """)
    assert main(["check", spec]) == 2
    err = capsys.readouterr().err
    assert msg in err and "Traceback" not in err


def test_spec_example_passes():
    assert main(["check", "specs/placement_equal.toml"]) == 0
