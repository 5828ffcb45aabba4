"""Staged (rank-3) CuTe shared layouts in wgmma spec obligations (``descriptor_matches`` with
``stage = N`` or every stage), against the descriptors CUTLASS's ``make_gmma_desc`` computes on each
stage's slice ``tensor(_, _, s)`` for every K-block (the recorded host-only oracle run
``tests/oracles/cutlass/cute_tv_stage_oracle.recorded.txt``, built from the CUTLASS headers as
``tests/oracles/test_cute_tv_stage_oracle.py`` describes)."""
from __future__ import annotations

import pathlib

import pytest

from verilayout.errors import LayoutError
from verilayout.spec import load_spec_text, run_spec

RECORDED = pathlib.Path(__file__).parent / "oracles" / "cutlass" / "cute_tv_stage_oracle.recorded.txt"


def _stages() -> dict:
    out, cur = {}, None
    lines = [ln for ln in RECORDED.read_text().splitlines() if not ln.startswith("ERROR")]
    for i, ln in enumerate(lines):
        if ln.startswith("STAGE "):
            cur = ln[6:]
            out[cur] = (lines[i + 1], [])
        elif ln.startswith("TV "):
            cur = None
        elif ln.startswith("D ") and cur is not None:
            out[cur][1].append(tuple(int(x) for x in ln.split()[1:]))
    return out


STAGES = _stages()


def _case(name):
    layout, rows = STAGES[name]
    major = "K" if name.startswith("k_") else "MN"
    dtype = "tf32" if "tf32" in name else "f16"
    return layout, rows, major, dtype, 4 if dtype == "tf32" else 2


def _spec(layout: str, desc: dict, major: str, dtype: str, k_block: int, stage=None, expect=None) -> str:
    fields = ", ".join(f"{k} = {v}" for k, v in desc.items())
    return "\n".join([
        "[layouts.ring]", f'text = "{layout}"',
        "[[obligation]]", 'kind = "descriptor_matches"', "layout = \"ring\"", f"descriptor = {{ {fields} }}",
        f'dtype = "{dtype}"', f'major = "{major}"', f"k_block = {k_block}"]
        + ([f"stage = {stage}"] if stage is not None else [])
        + ([f'expect = "{expect}"'] if expect else [])) + "\n"


def _desc(row, ebytes, start=None) -> dict:
    _stage, _kb, offset, lbo, sbo, layout_type, base_offset = row
    return {"start_address": offset * ebytes if start is None else start, "lbo_field": lbo, "sbo_field": sbo,
            "layout_type": layout_type, "base_offset": base_offset}


def _verdict(text: str):
    (res,) = run_spec(load_spec_text(text, "inline.toml"))
    return res.verdict


def test_the_recording_has_the_four_staged_cases():
    assert sorted(STAGES) == ["k_sw128_f16_128x64x4", "k_sw128_tf32_64x32x2", "k_sw64_f16_64x32x3",
                              "mn_sw128_f16_64x64x2"]


@pytest.mark.parametrize("name", sorted(STAGES))
def test_each_stage_with_cutlass_descriptor_is_proved(name):
    """``stage = s`` with the descriptor CUTLASS builds on stage s's slice (start = the slice's
    offset, every K-block): proved, for every (stage, K-block) CUTLASS printed."""
    layout, rows, major, dtype, eb = _case(name)
    assert len(rows) >= 4
    for row in rows:
        v = _verdict(_spec(layout, _desc(row, eb), major, dtype, row[1], stage=row[0]))
        assert v.status == "proved", (name, row, v.reason)


@pytest.mark.parametrize("name", sorted(STAGES))
def test_every_stage_at_once_moves_stage_0s_descriptor_to_cutlass_start(name):
    """Without ``stage``: stage 0's descriptor (CUTLASS's, per K-block) moved by each stage's offset
    reads that stage; the moved starts are the ones CUTLASS computes for each stage's slice."""
    layout, rows, major, dtype, eb = _case(name)
    by = {(r[0], r[1]): r for r in rows}
    for (stage, kb), row in by.items():
        if stage:
            continue
        v = _verdict(_spec(layout, _desc(row, eb), major, dtype, kb))
        n = 1 + max(s for s, _ in by)
        assert v.status == "proved" and f"each of the {n} stages" in v.reason, (name, kb, v.reason)
        shift = (by[(1, kb)][2] - row[2]) * eb if (1, kb) in by else 0
        assert shift > 0                                    # CUTLASS's stage 1 starts one stage further


@pytest.mark.parametrize("name", sorted(STAGES))
def test_stage_descriptor_of_another_stage_is_a_counterexample(name):
    """Stage 1's descriptor given for ``stage = 0`` (it reads the next stage's bytes): a counterexample
    naming the stage."""
    layout, rows, major, dtype, eb = _case(name)
    row1 = next(r for r in rows if r[0] == 1 and r[1] == 0)
    v = _verdict(_spec(layout, _desc(row1, eb), major, dtype, 0, stage=0))
    assert v.status == "counterexample" and v.reason.startswith("stage 0")


def test_every_stage_with_a_wrong_sbo_fails_at_stage_0():
    layout, rows, major, dtype, eb = _case("k_sw128_f16_128x64x4")
    d = _desc(rows[0], eb)
    d["sbo_field"] *= 2
    v = _verdict(_spec(layout, d, major, dtype, 0))
    assert v.status == "counterexample" and v.reason.startswith("stage 0")


def test_stage_out_of_range_and_stage_on_an_unstaged_layout_are_one_line_errors():
    layout, rows, major, dtype, eb = _case("k_sw64_f16_64x32x3")
    with pytest.raises(LayoutError, match="stages 0..2"):
        _verdict(_spec(layout, _desc(rows[0], eb), major, dtype, 0, stage=3))
    flat = "Sw<2,4,3> o smem_ptr[16b](unset) o ((_8,_8),(_32,_1)):((_32,_256),(_1,_0))"
    with pytest.raises(LayoutError, match="stage applies to a staged CuTe layout"):
        _verdict(_spec(flat, _desc(rows[0], eb), major, dtype, 0, stage=0))


def test_the_example_spec_holds():
    """``specs/cute_staged_wgmma.toml``: its descriptors are CUTLASS's (the recorded row for stage 2,
    K-block 1 of the 128 x 64 x 4 ring) and each obligation holds as stated."""
    text = pathlib.Path("specs/cute_staged_wgmma.toml").read_text()
    layout, rows, _major, _dtype, eb = _case("k_sw128_f16_128x64x4")
    assert f'text = "{layout}"' in text
    row = next(r for r in rows if r[:2] == (2, 1))
    assert f"start_address = {row[2] * eb}," in text and f"lbo_field = {row[3]}, sbo_field = {row[4]}" in text
    results = run_spec(load_spec_text(text, "specs/cute_staged_wgmma.toml"))
    assert [r.ok for r in results] == [True] * 3
