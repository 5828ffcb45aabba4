"""SVG pictures: parsed back and checked against the layout they draw (brute force)."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from verilayout import LayoutError, LinearLayout
from verilayout.report.svg import layout_svg
from verilayout.core.linear_layout import identity_standard_nd

NS = {"s": "http://www.w3.org/2000/svg"}


def cells(svg: str) -> dict[tuple[int, int], tuple[int, str]]:
    root = ET.fromstring(svg)
    out = {}
    for g in root.findall("s:g", NS):
        rect = g.find("s:rect", NS)
        out[(int(rect.get("data-row")), int(rect.get("data-col")))] = (int(rect.get("data-key")),
                                                                        g.find("s:title", NS).text)
    return out


def test_distributed_picture_colors_each_element_by_its_thread():
    # blocked: sizePerThread [1, 2], threadsPerWarp [4, 8] on an 4x16 tile: thread t holds
    # row t // 8 and columns 2*(t % 8) .. +1 (derived from the blocked definition, seed 004)
    L = (identity_standard_nd("register", [1, 2], [1, 0])
         * identity_standard_nd("lane", [4, 8], [1, 0]))
    got = cells(layout_svg(L))
    assert len(got) == 64
    for (r, c), (key, tip) in got.items():
        t = r * 8 + c // 2
        assert key == t and f"T{t}:R{c % 2}" in tip


def test_shared_picture_colors_by_bank_and_marks_cells():
    # row-major 16x32 of 32-bit elements (seed 004's bank example): element (i, j) sits at
    # offset 32*i + j, bank j; column 0 is all bank 0
    L = LinearLayout({"offset": [[0, 1 << k] for k in range(5)] + [[1 << k, 0] for k in range(4)]},
                     ["dim0", "dim1"])
    svg = layout_svg(L, elem_bits=32, marked=[(0, 0), (1, 0)])
    got = cells(svg)
    assert all(key == c for (r, c), (key, _) in got.items())
    root = ET.fromstring(svg)
    red = [g.find("s:rect", NS) for g in root.findall("s:g", NS)
           if g.find("s:rect", NS).get("stroke") == "#d00000"]
    assert {(int(r.get("data-row")), int(r.get("data-col"))) for r in red} == {(0, 0), (1, 0)}


def test_too_large_or_3d_is_an_error():
    with pytest.raises(LayoutError, match="1-D or 2-D"):
        layout_svg(LinearLayout({"lane": [[1, 0, 0]]}, ["a", "b", "c"], False))
    with pytest.raises(LayoutError, match="too large"):
        layout_svg(LinearLayout.identity1D(1 << 17, "offset", "dim0"))


def test_banks_svg_marks_the_conflicting_column(tmp_path, capsys):
    # seed 004: a 16x32 tensor of 32-bit elements read by column without swizzling: all of
    # column 0 sits in bank 0, so the witness's accesses are the 16 cells of that column
    from verilayout.cli.main import main
    out = tmp_path / "b.svg"
    rc = main(["banks", "-t", "tensor<16x32xf32>",
               "--reg", "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [16, 2], "
               "warpsPerCTA = [1, 1], order = [0, 1]}>",
               "--smem", "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>",
               "--svg", str(out)])
    assert rc == 1
    root = ET.fromstring(out.read_text())
    red = {(int(r.get("data-row")), int(r.get("data-col")))
           for g in root.findall("s:g", NS) for r in [g.find("s:rect", NS)]
           if r.get("stroke") == "#d00000"}
    assert red == {(i, 0) for i in range(16)}
    assert all(key == c for (r, c), (key, _) in cells(out.read_text()).items())
