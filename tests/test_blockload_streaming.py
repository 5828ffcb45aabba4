"""The block-load coverage tables built load by load from a layout's GF(2) span
(``verilayout.prove.coverage``: ``delivery_table``, ``delivered_mask``, ``Needed.count``,
``rows_read``, ``columns_by_band``) against brute force written here: every register of every
lane looked up in every load's lane elements, in load order, then lane-element order (a load
delivers an element inside the tensor and inside its surface: Intel's 2D block loads read zeros
outside the surface)."""
from __future__ import annotations

import numpy as np
import pytest

from verilayout.core.linear_layout import LinearLayout
from verilayout.hw.intel.block_io import BlockLoad, Surface, lane_elements
from verilayout.hw.intel.dpas import Dpas
from verilayout.prove.coverage import Needed, delivered_mask, delivery_table


def brute_table(loads, need: Needed, t: int) -> np.ndarray:
    """(load, lane element) of the first delivery of each register's element into its lane."""
    out = np.full((need.registers, need.lanes, 2), -1)
    els = [lane_elements(ld, t) for ld in loads]
    for r in range(need.registers):
        for lane in range(need.lanes):
            row, col = (int(v) for v in need.coords[r, lane])
            for i, (ld, el) in enumerate(zip(loads, els)):
                inside = row < ld.surface.height and (col + 1) * t <= ld.surface.width
                ks = [k for k in range(el.shape[1]) if inside and lane < 16
                      and (int(el[lane, k, 0]), int(el[lane, k, 1])) == (row, col)]
                if ks:
                    out[r, lane] = (i, ks[0])
                    break
    return out


# a layout whose register bases are dependent: basis 2 is zero (a broadcast) and basis 3 is the
# sum of bases 0 and 1, so four registers hold each element of a lane
REDUNDANT = LinearLayout({"register": [[0, 1], [1, 0], [0, 0], [1, 1]],
                          "lane": [[0, 2], [0, 4], [0, 8], [2, 0]]}, ["dim0", "dim1"])
DPAS_A = Dpas(8, 8, 16, 2, 16, (2, 1), (2, 1)).layout((32, 16), 0)


def _cases():
    wide = Surface(64, 64, 64)
    yield "dpas A, one load", Needed.from_layout(DPAS_A), [BlockLoad(2, 16, 32, wide)], 2
    yield "dpas A, overlapping loads", Needed.from_layout(DPAS_A), \
        [BlockLoad(2, 16, 8, wide, 0, 4), BlockLoad(2, 16, 16, wide), BlockLoad(2, 16, 32, wide)], 2
    yield "dpas A, warp 1", Needed.from_layout(DPAS_A, warp=1), [BlockLoad(2, 16, 32, wide)], 2
    yield "dpas A, clipped by the surface", Needed.from_layout(DPAS_A), \
        [BlockLoad(2, 16, 32, Surface(64, 12, 64))], 2
    yield "transposed", Needed.from_layout(DPAS_A, transpose=True), \
        [BlockLoad(4, 8, 16, wide, transpose=True), BlockLoad(2, 16, 16, wide)], 2
    yield "placed at (3, 2)", Needed.from_layout(DPAS_A).placed(2, 3), \
        [BlockLoad(2, 16, 32, wide, 0, 3), BlockLoad(2, 16, 32, wide, 2, 3)], 2
    yield "dependent register bases", Needed.from_layout(REDUNDANT), \
        [BlockLoad(2, 16, 4, wide), BlockLoad(2, 8, 4, wide, 8, 0, vnni=True)], 2


CASES = list(_cases())


@pytest.mark.parametrize("name, need, loads, t", CASES, ids=[c[0] for c in CASES])
def test_delivery_table_is_the_first_delivery_of_each_register(name, need, loads, t):
    want = brute_table(loads, need, t)
    assert (want[..., 0] >= 0).any(), "the case delivers something"
    assert delivery_table(loads, need, t).tolist() == want.tolist()
    assert delivered_mask(loads, need, t).tolist() == (want[..., 0] >= 0).tolist()


@pytest.mark.parametrize("name, need, loads, t", CASES, ids=[c[0] for c in CASES])
def test_the_table_given_as_it_is_agrees(name, need, loads, t):
    plain = Needed(need.coords.copy(), need.shape, need.transpose, need.warp, need.origin)
    assert plain.span is None
    assert delivery_table(loads, plain, t).tolist() == brute_table(loads, need, t).tolist()


@pytest.mark.parametrize("layout", [DPAS_A, REDUNDANT])
def test_counts_rows_and_band_columns_match_the_enumeration(layout):
    need = Needed.from_layout(layout)
    pairs = {(lane, int(r), int(c)) for lane in range(need.lanes)
             for r, c in need.coords[:, lane]}
    assert need.count == len(pairs)
    rows = sorted({r for _, r, _ in pairs})
    assert need.rows_read().tolist() == rows
    bands = [(rows[0], rows[len(rows) // 2 - 1]), (rows[len(rows) // 2], rows[-1])]
    got = need.columns_by_band(bands)
    for (lo, hi), cols in zip(bands, got):
        assert cols.tolist() == sorted({c for _, r, c in pairs if lo <= r <= hi})
