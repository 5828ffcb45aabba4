"""CuTe thread-value layouts and staged shared layouts, against what CuTe itself computes.

``cutlass/cute_tv_stage_oracle.cpp`` (host-only, the nvidia-cutlass wheel's CuTe headers) prints
(recorded in ``cutlass/cute_tv_stage_oracle.recorded.txt``; with a C++ compiler the program is
rebuilt and must print the recording again):

* for tiled copies built with ``make_tiled_copy`` / ``make_tiled_copy_A|B|C`` over ldmatrix
  (``SM75_U32x4_LDSM_N``, ``SM75_U32x2_LDSM_N``, ``SM75_U16x4_LDSM_T``) and stmatrix
  (``SM90_U32x4_STSM_N``, ``SM90_U32x2_STSM_N``) atoms, the source and destination TV layouts as
  CuTe prints them (``get_layoutS_TV()``, ``get_layoutD_TV()``), their tile and thread count, and the
  tile coordinate CuTe's ``idx2crd`` gives for every (thread, value);
* for staged layouts (``tile_to_shape(GMMA atom, make_shape(MN, K, Int<Stages>{}))``, the
  collectives' form) the descriptor fields ``make_gmma_desc`` computes on each stage's slice
  ``tensor(_, _, s)`` for every K-block, with the slice's element offset (on the host CuTe cannot read
  a shared-memory address: it prints ``ERROR: cast_smem_ptr_to_uint`` and encodes start 0).
"""
from __future__ import annotations

import json
import pathlib

import pytest

from verilayout.cli.main import main
from verilayout.errors import LayoutError
from verilayout.frontends.cute_text import parse_cute_tv

HERE = pathlib.Path(__file__).resolve().parent / "cutlass"
SOURCE = HERE / "cute_tv_stage_oracle.cpp"
RECORDED = HERE / "cute_tv_stage_oracle.recorded.txt"


def _read(text: str):
    tv, stages, cur = {}, {}, None
    lines = [ln for ln in text.splitlines() if not ln.startswith("ERROR")]
    for i, ln in enumerate(lines):
        if ln.startswith("TV "):
            m, n, t = (int(x) for x in lines[i + 2].split()[1:])
            coords = [tuple(int(c) for c in p.split(",")) for p in lines[i + 3].split()[1:]]
            tv[ln[3:]] = (lines[i + 1], (m, n), t, coords)
        elif ln.startswith("STAGE "):
            cur = ln[6:]
            stages[cur] = (lines[i + 1], [])
        elif ln.startswith("D ") and cur is not None:
            stages[cur][1].append(tuple(int(x) for x in ln.split()[1:]))
    return tv, stages


TV, STAGES = _read(RECORDED.read_text())


def test_the_recording_has_every_case():
    assert len(TV) == 12 and len(STAGES) == 4


@pytest.mark.parametrize("name", sorted(TV))
def test_tv_layout_gives_cutes_coordinate_for_every_thread_and_value(name):
    printed, tile, threads, coords = TV[name]
    L = parse_cute_tv(printed, list(tile))
    assert L.in_dims["lane"] == 32 and L.in_dims["lane"] * L.in_dims["warp"] == threads
    assert L.out_dims == {"dim0": tile[0], "dim1": tile[1]}
    for i, (m, n) in enumerate(coords):              # CuTe's order: thread fastest
        t, v = i % threads, i // threads
        got = L.apply({"register": v, "lane": t % 32, "warp": t // 32})
        assert (got["dim0"], got["dim1"]) == (m, n), (name, t, v)


def test_tv_layout_the_issue_quotes_is_read():
    # the stmatrix-style TV layout of a 16x16 tile: thread (4,8):(32,1), values (2,2,2):(16,8,128)
    L = parse_cute_tv("((_4,_8),((_2,_2,_2),_1)):((_32,_1),((_16,_8,_128),_0))", [16, 16])
    # thread 5 = (1, 1): index 32 + 1 = 33; value 3 = (1, 1, 0): 16 + 8 = 24; 33 + 24 = 57 = (9, 3)
    got = L.apply({"register": 3, "lane": 5, "warp": 0})
    assert (got["dim0"], got["dim1"]) == (57 % 16, 57 // 16)


@pytest.mark.parametrize("text,tile,msg", [
    ("((_4,_8),(_2,_2)):((_32,_1),(_16,_8))", [8, 8], "reaches tile index"),
    ("((_4,_4),(_2,_2)):((_32,_1),(_16,_8))", [16, 16], "a whole warp"),
    ("((_4,_8),(_3,_2)):((_32,_1),(_16,_8))", [16, 16], "not a power of two"),
    ("((_4,_8),(_2,_2)):((_32,_1),(_17,_8))", [16, 16], r"not GF\(2\)-linear"),
    ("(_32,_2,_2):(_1,_32,_64)", [16, 16], "2 modes"),
    ("((_4,_8),(_2,_2)):((_32,_1),(_16,_8))", [12, 16], "not a power of two"),
])
def test_tv_layout_refusals_are_one_line(text, tile, msg):
    with pytest.raises(LayoutError, match=msg):
        parse_cute_tv(text, tile)


_DTYPE = {"f16": "f16", "tf32": "tf32"}


@pytest.mark.parametrize("name", sorted(STAGES))
def test_each_stage_gets_the_descriptors_cutlass_computes(name, capsys):
    printed, rows = STAGES[name]
    major = "K" if name.startswith("k_") else "MN"
    dtype = "tf32" if "tf32" in name else "f16"
    ebytes = 4 if dtype == "tf32" else 2
    assert main(["wgmma", "desc", "--dtype", dtype, "--major", major, "--k-block", "all", "--json",
                 "--layout", printed]) == 0
    got = json.loads(capsys.readouterr().out)
    assert len(got) == len(rows)
    for plan, (stage, kb, offset, lbo, sbo, layout_type, base_offset) in zip(got, rows):
        d = plan["descriptor"]
        assert (plan["stage"], plan["k_block"]) == (stage, kb)
        assert d["start_address"] == offset * ebytes      # CuTe's slice offset, in bytes
        assert (d["lbo_field"], d["sbo_field"], d["layout_type"], d["base_offset"]) == \
            (lbo, sbo, layout_type, base_offset), (name, stage, kb)


def test_one_stage_is_picked_with_stage(capsys):
    printed, rows = STAGES["k_sw128_f16_128x64x4"]
    assert main(["wgmma", "desc", "--dtype", "f16", "--major", "K", "--stage", "2", "--json",
                 "--layout", printed]) == 0
    got = json.loads(capsys.readouterr().out)
    row = next(r for r in rows if r[0] == 2 and r[1] == 0)
    assert got["stage"] == 2 and got["descriptor"]["start_address"] == row[2] * 2


@pytest.mark.oracle
def test_recorded_output_is_what_cute_prints():
    from tests.oracles.cutlass_build import run_program
    out = run_program("cute_tv_stage", SOURCE.read_text())
    assert out == RECORDED.read_text()
