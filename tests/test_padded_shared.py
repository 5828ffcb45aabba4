"""``#ttg.padded_shared`` in every command that takes a shared layout: `show` (bases, hw, grid,
--json, --svg; the tensor view refused with its reason), `check` (maps, formula, table, bases,
equal, injective; the GF(2)-only kinds refused with the reason), `banks` (and its --svg), and the
wgmma descriptor commands (refused with the reason: one `error:` line, exit 2).

The expected addresses are derived here from Triton's documented rule, ``PaddedSharedEncodingAttr``
in ``include/triton/Dialect/TritonGPU/IR/TritonGPUAttrDefs.td``: the linear component maps the
1-D shared-memory offset ``o`` to the element whose coordinates are the XOR of the offset bases of
``o``'s set bits (``LinearLayout.h``), and "we insert a padding of ``pad_i`` elements after every
``interval_i`` elements", so that element is stored at ``o + sum_k (o / interval_k) * pad_k``.
The short form ``{order = [...], shape = [...]}`` is the identity component (the same
``.td``: ``{order = [1, 0], shape = [16, 32]}`` is ``offset = [[0, 1], ..., [0, 16], [1, 0], ...]``).
``tests/oracles/test_padded_shared_oracle.py`` reads the same texts with the Triton 3.9 wheel.
"""
from __future__ import annotations

import json
import re

import pytest

from verilayout import LayoutError, parse
from verilayout.cli.main import main

SHORT = "#ttg.padded_shared<[32:+4] {order = [1, 0], shape = [16, 64]}>"
TWO = ("#ttg.padded_shared<[8:+1, 32:+2] {offset = [[0, 1], [0, 2], [2, 0], [4, 0], [1, 0]], "
       "block = []}>")
BLOCKED = ("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], "
           "order = [1, 0]}>")


def identity_bases(shape: list[int], order: list[int]) -> list[list[int]]:
    """The short form's component: offset bits walk dim ``order[0]`` first, then ``order[1]``."""
    bases = []
    for d in order:
        for k in range(shape[d].bit_length() - 1):
            b = [0] * len(shape)
            b[d] = 1 << k
            bases.append(b)
    return bases


def triton_offsets(pairs: list[tuple[int, int]], offset_bases: list[list[int]]) -> dict:
    """Element coordinates -> padded offset, by the rule of the module docstring (every offset)."""
    out = {}
    for o in range(1 << len(offset_bases)):
        coords = [0] * len(offset_bases[0])
        for bit, b in enumerate(offset_bases):
            if o >> bit & 1:
                coords = [c ^ x for c, x in zip(coords, b)]
        out[tuple(coords)] = o + sum((o // iv) * pad for iv, pad in pairs)
    return out


CASES = [
    (SHORT, [16, 64], [(32, 4)], identity_bases([16, 64], [1, 0])),
    (TWO, [8, 4], [(8, 1), (32, 2)], [[0, 1], [0, 2], [2, 0], [4, 0], [1, 0]]),
    ("#ttg.padded_shared<[4:+2] {order = [0, 1], shape = [4, 8]}>", [4, 8], [(4, 2)],
     identity_bases([4, 8], [0, 1])),
]


def show(capsys, *argv: str) -> str:
    assert main(["show", *argv]) == 0
    return capsys.readouterr().out


def fails_with_one_line(capsys, argv: list[str], *needles: str) -> str:
    assert main(argv) == 2
    cap = capsys.readouterr()
    err = cap.err.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    assert "internal error" not in err and "Traceback" not in err
    for n in needles:
        assert n in err, err
    return err


@pytest.mark.parametrize("text, shape, pairs, bases", CASES)
def test_parse_places_every_element_by_the_documented_rule(text, shape, pairs, bases):
    m = parse(text, shape=shape)
    want = triton_offsets(pairs, bases)
    assert len(want) == shape[0] * shape[1]
    assert {c: m.offset({"dim0": c[0], "dim1": c[1]}) for c in want} == want


@pytest.mark.parametrize("text, shape, pairs, bases", CASES)
def test_show_grid_is_each_elements_padded_offset(capsys, text, shape, pairs, bases):
    want = triton_offsets(pairs, bases)
    out = show(capsys, text, "--shape", "x".join(map(str, shape)), "--view", "grid")
    rows = [[int(v) for v in line.strip("[]").split()] for line in out.strip().splitlines()]
    assert rows == [[want[(r, c)] for c in range(shape[1])] for r in range(shape[0])]


@pytest.mark.parametrize("text, shape, pairs, bases", CASES)
def test_show_hw_lists_every_offset_and_the_padding(capsys, text, shape, pairs, bases):
    want = triton_offsets(pairs, bases)
    at = {o: c for c, o in want.items()}
    out = show(capsys, text, "--shape", "x".join(map(str, shape)), "--view", "hw").strip().splitlines()
    assert out[0] == "Block: 0:"
    got = {}
    for line in out[1:]:
        m = re.fullmatch(r"Offset: (\d+) -> (pad|\(\s*(\d+),\s*(\d+)\))", line)
        assert m, line
        got[int(m.group(1))] = None if m.group(2) == "pad" else (int(m.group(3)), int(m.group(4)))
    assert got == {o: at.get(o) for o in range(max(at) + 1)}
    assert sum(v is None for v in got.values()) == max(at) + 1 - len(at) > 0


@pytest.mark.parametrize("text, shape, pairs, bases", CASES)
def test_show_bases_and_json_are_the_component_and_the_padding(capsys, text, shape, pairs, bases):
    dims = "x".join(map(str, shape))
    d = json.loads(show(capsys, text, "--shape", dims, "--json"))
    assert d["bases"] == {"offset": bases}
    assert d["padding"] == [list(p) for p in pairs]
    assert d["out_dims"] == {"dim0": shape[0], "dim1": shape[1]}
    lines = show(capsys, text, "--shape", dims).splitlines()
    assert lines[0] == f"offset: {bases}"
    assert lines[1] == "padding: " + ", ".join(f"{a}:+{b}" for a, b in pairs)


def test_show_svg_labels_and_banks_each_element(capsys, tmp_path):
    text, shape, pairs, bases = CASES[0]
    want = triton_offsets(pairs, bases)
    path = tmp_path / "p.svg"
    show(capsys, text, "-t", "tensor<16x64xf16>", "--svg", str(path))
    svg = path.read_text()
    cells = re.findall(r'<title>\((\d+), (\d+)\) bank (\d+): offset (\d+)</title>', svg)
    assert len(cells) == 16 * 64
    for r, c, bank, off in cells:
        o = want[(int(r), int(c))]
        assert int(off) == o and int(bank) == (o * 2 // 4) % 32     # f16: 2 bytes, 4-byte banks


def test_show_tensor_view_without_padding_inside_the_tensor(capsys):
    # interval 4096 > the 16 elements: no padding inside, so memory cell o (row-major in the 4x4
    # shape) holds the element at logical offset o; order [0, 1]: o = r + 4 c holds (r, c)
    out = show(capsys, "#ttg.padded_shared<[4096:+4] {order = [0, 1], shape = [4, 4]}>", "--view", "tensor")
    cells = re.findall(r"\((\d+):(\d+)\)", out)
    assert [(int(a), int(b)) for a, b in cells] == [(o % 4, o // 4) for o in range(16)]


def test_show_tensor_view_is_refused_with_the_reason(capsys):
    fails_with_one_line(capsys, ["show", SHORT, "--shape", "16x64", "--view", "tensor"],
                        "has no tensor view", "--view grid")


def test_a_shape_other_than_the_layouts_extent_is_refused(capsys):
    fails_with_one_line(capsys, ["show", SHORT, "--shape", "32x32"], "differs from", "[16, 64]")
    with pytest.raises(LayoutError, match="differs from"):
        parse(SHORT, shape=[8, 64])


def test_without_a_shape_the_short_form_gives_its_own(capsys):
    assert json.loads(show(capsys, SHORT, "--json"))["out_dims"] == {"dim0": 16, "dim1": 64}


@pytest.mark.parametrize("text, needle", [
    ("#ttg.padded_shared<[32:+4] {order = [1, 5]}>", "'order'"),
    ("#ttg.padded_shared<[32:+4] {order = [1, 0], shape = [3, 4]}>", "'shape'"),
    ("#ttg.padded_shared<[32:+4] {order = [1, 0], bogus = [1]}>", "unknown keys ['bogus']"),
    ("#ttg.padded_shared<[3:+4] {order = [1, 0]}>", "powers of two"),
    ("#ttg.padded_shared<[32:+4] {offset = 1}>", "'offset'"),
    ("#ttg.padded_shared<[] {order = [1, 0]}>", "interval:+pad"),
])
def test_bad_padded_text_is_one_line(capsys, text, needle):
    fails_with_one_line(capsys, ["show", text, "--shape", "4x4"], needle)
    with pytest.raises(LayoutError, match=re.escape(needle)):
        parse(text, shape=[4, 4])


def test_show_an_alias_used_by_a_ring_of_buffers_takes_one_buffers_shape(capsys, tmp_path):
    # a pipelined kernel allocates !ttg.memdesc<2x16x64xf16, #shared> for a rank-2 #shared: each of
    # the 2 buffers has the 16x64 layout, the shape its 16x64 views use too
    path = tmp_path / "k.ttgir"
    path.write_text(f"#shared = {SHORT}\n#smem = #ttg.shared_memory\n"
                    "module {\n  tt.func @k(%a: !ttg.memdesc<2x16x64xf16, #shared, #smem, mutable>, "
                    "%b: !ttg.memdesc<16x64xf16, #shared, #smem, mutable>) {\n    tt.return\n  }\n}\n")
    text, shape, pairs, bases = CASES[0]
    want = triton_offsets(pairs, bases)
    out = show(capsys, str(path), "--name", "#shared", "--view", "grid")
    rows = [[int(v) for v in line.strip("[]").split()] for line in out.strip().splitlines()]
    assert rows == [[want[(r, c)] for c in range(64)] for r in range(16)]


# ----- check -------------------------------------------------------------------------------------

def _spec(tmp_path, body: str) -> str:
    path = tmp_path / "p.toml"
    path.write_text(f'[layouts.p]\ntext = "{SHORT}"\nshape = [16, 64]\n'
                    f'[layouts.r]\ntext = "{BLOCKED}"\nshape = [16, 64]\n' + body)
    return str(path)


def test_check_maps_formula_table_bases_hold_on_the_documented_offsets(capsys, tmp_path):
    text, shape, pairs, bases = CASES[0]
    want = triton_offsets(pairs, bases)
    points = ", ".join(f"[{{dim0 = {r}, dim1 = {c}}}, {{offset = {want[(r, c)]}}}]"
                       for r, c in [(0, 0), (0, 31), (0, 32), (1, 0), (15, 63)])
    rows = "[" + ", ".join("[" + ", ".join(str(want[(r, c)]) for c in range(64)) + "]"
                           for r in range(16)) + "]"
    # row r starts at 64 r + 4 * (64 r // 32) = 72 r; column c adds c + 4 * (c // 32)
    body = (f'[[obligation]]\nkind = "maps"\nlayout = "p"\npoints = [{points}]\n'
            f'[[obligation]]\nkind = "table"\nlayout = "p"\nrows = {rows}\n'
            '[[obligation]]\nkind = "formula"\nlayout = "p"\noutputs = {offset = "72 * dim0 + dim1 + 4 * (dim1 // 32)"}\n'
            f'[[obligation]]\nkind = "bases"\nlayout = "p"\nexpected = {{offset = {bases}}}\n'
            '[[obligation]]\nkind = "injective"\nlayout = "p"\n'
            '[[obligation]]\nkind = "equal"\nlhs = "p"\nrhs = "p"\n')
    assert main(["check", _spec(tmp_path, body)]) == 0, capsys.readouterr()
    assert "6 passed" in capsys.readouterr().out


def test_check_formula_and_table_on_the_layout_placed_at_a_base(capsys, tmp_path):
    # placed at byte 128 of f16: every offset moves by 64 elements (the outer offset base + L)
    text, shape, pairs, bases = CASES[0]
    want = triton_offsets(pairs, bases)
    rows = "[" + ", ".join("[" + ", ".join(str(64 + want[(r, c)]) for c in range(64)) + "]"
                           for r in range(16)) + "]"
    body = ('[layouts.q]\nplaced = "p"\nbase_address = 128\ndtype = "f16"\n'
            '[[obligation]]\nkind = "formula"\nlayout = "q"\n'
            'outputs = {offset = "64 + 72 * dim0 + dim1 + 4 * (dim1 // 32)"}\n'
            f'[[obligation]]\nkind = "table"\nlayout = "q"\nrows = {rows}\n')
    assert main(["check", _spec(tmp_path, body)]) == 0, capsys.readouterr()
    assert "2 passed" in capsys.readouterr().out


def test_check_maps_finds_a_wrong_offset(capsys, tmp_path):
    # element (1, 0) is logical offset 64, stored after two paddings of 4: 72, not 64
    body = '[[obligation]]\nkind = "maps"\nlayout = "p"\npoints = [[{dim0 = 1, dim1 = 0}, {offset = 64}]]\n'
    assert main(["check", _spec(tmp_path, body)]) == 1
    assert "'offset': 72" in capsys.readouterr().out


@pytest.mark.parametrize("point, needle", [
    ("{dim0 = nan, dim1 = 0}", "dim0=nan is not an integer in [0, 16)"),
    ("{dim0 = 'x', dim1 = 0}", "dim0='x' is not an integer in [0, 16)"),
    ("{dim0 = 1.5, dim1 = 0}", "dim0=1.5 is not an integer in [0, 16)"),
    ("{dim0 = 16, dim1 = 0}", "dim0=16 is outside [0, 16)"),
    ("{offset = 3}", "unknown input dims ['offset']"),
])
def test_check_maps_bad_points_are_one_error_line(capsys, tmp_path, point, needle):
    body = f'[[obligation]]\nkind = "maps"\nlayout = "p"\npoints = [[{point}, {{offset = 0}}]]\n'
    assert main(["check", _spec(tmp_path, body)]) == 2
    out = capsys.readouterr()
    assert needle in out.out and "internal error" not in out.out + out.err


@pytest.mark.parametrize("kind", ["surjective", "invertible"])
def test_check_gf2_only_kinds_say_why(capsys, tmp_path, kind):
    body = f'[[obligation]]\nkind = "{kind}"\nlayout = "p"\n'
    assert main(["check", _spec(tmp_path, body)]) == 2
    out = capsys.readouterr()
    assert "internal error" not in out.out + out.err
    assert "needs a GF(2)-linear layout" in out.out and "not GF(2)-linear" in out.out


def test_check_descriptor_kind_says_why(capsys, tmp_path):
    body = ('[[obligation]]\nkind = "descriptor_matches"\ndescriptor = "0x4000004000010040"\n'
            'layout = "p"\ndtype = "f16"\nmajor = "K"\n')
    assert main(["check", _spec(tmp_path, body)]) == 2
    out = capsys.readouterr().out
    assert "internal error" not in out and "CuTe layouts and GF(2)-linear Triton layouts" in out


# ----- banks and wgmma ---------------------------------------------------------------------------

def test_banks_svg_draws_the_padded_layout(capsys, tmp_path):
    text, shape, pairs, bases = CASES[0]
    want = triton_offsets(pairs, bases)
    path = tmp_path / "b.svg"
    rc = main(["banks", "-t", "tensor<16x64xf16>", "--reg", BLOCKED, "--smem", text, "--svg", str(path)])
    assert rc in (0, 1)
    cells = re.findall(r'<title>\((\d+), (\d+)\) bank (\d+): offset (\d+)</title>', path.read_text())
    assert len(cells) == 16 * 64
    assert all(int(off) == want[(int(r), int(c))] for r, c, _, off in cells)


@pytest.mark.parametrize("sub", [
    ["verify", "--desc", "0x4000004000010040"],
    ["desc"],
])
def test_wgmma_commands_refuse_padded_layouts_with_the_reason(capsys, sub):
    fails_with_one_line(capsys, ["wgmma", *sub, "--dtype", "f16", "--major", "K", "--layout", SHORT,
                                 "--shape", "16x64"], "not supported as an MMA operand tile")
