"""Spec files: CuTe thread-value register layouts (``thread_value = true``), staged CuTe shared
layouts in ``conflict_free`` (``shared`` source with ``stage``) and ``tma_matches`` (the ring read off
the layout, or ``stage = N``); ``specs/cute_tv_stages.toml`` is the worked example."""
from __future__ import annotations

import pytest

from verilayout.errors import LayoutError
from verilayout.spec import load_spec_text, run_spec

RING = "Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_16),(_64,_1),(_1,_4)):((_64,_512),(_1,_0),(_0,_8192))"
TV = "((_4,_8,_2,_2),((_2,_2,_2),_1)):((_64,_1,_16,_0),((_32,_8,_256),_0))"


def _run(text: str):
    return run_spec(load_spec_text(text, "inline.toml"))


def test_the_example_spec_holds():
    import pathlib
    results = run_spec(load_spec_text(pathlib.Path("specs/cute_tv_stages.toml").read_text(), "specs/cute_tv_stages.toml"))
    assert [r.ok for r in results] == [True] * 5


def test_thread_value_layout_is_the_register_layout():
    from verilayout.cute import parse_cute_tv
    spec = load_spec_text(f'''
[layouts.tv]
text = "{TV}"
thread_value = true
shape = [32, 16]
[layouts.smem]
text = "(_32,_16):(_16,_1)"
[[obligation]]
kind = "conflict_free"
reg = "tv"
smem = "smem"
dtype = "f16"
instruction = "ldmatrix.x4"
''', "inline.toml")
    assert spec.layout("tv", "here") == parse_cute_tv(TV, [32, 16])
    [r] = run_spec(spec)
    # rows 0 and 4 of a matrix are 4 * 32 = 128 bytes apart: one bank, two words
    assert r.verdict.status == "counterexample" and r.verdict.counterexample["wavefronts"] == 8


def _ring_spec(extra: str = "") -> str:
    """A spec whose one obligation: the 64x128 f16 TMA box, 128B swizzle, fills each stage of
    ``RING``; ``extra`` lines are added to the obligation."""
    return f'''
[layouts.ring]
text = "{RING}"
[[obligation]]
kind = "tma_matches"
tensor_map = {{ dtype = "f16", box = [64, 128], swizzle = "128B" }}
layout = "ring"
dtype = "f16"
{extra}
'''


def test_the_ring_is_read_off_the_staged_layout():
    [r] = _run(_ring_spec())
    assert r.verdict.proved and "4-stage ring" in r.verdict.reason and "16384" in r.verdict.reason


@pytest.mark.parametrize("extra,msg", [
    ("stages = 3", "disagree"),
    ("stage_bytes = 8192", "disagree"),
    ("stage = 4", "stages 0..3"),
])
def test_ring_keys_must_agree_with_the_layout(extra, msg):
    with pytest.raises(LayoutError, match=msg):
        _run(_ring_spec(extra))


@pytest.mark.parametrize("entry,msg", [
    ('text = "%s"\nthread_value = true' % TV, "needs shape"),
    ('text = "%s"\nthread_value = "yes"\nshape = [32, 16]' % TV, "true or false"),
    ('text = "%s"\nthread_value = true\nshape = [16, 16]' % TV, "reaches tile index"),
    ('shared = "(_64,_64):(_64,_1)"\ndtype = "f16"\nstage = 0', "staged CuTe layout"),
    ('shared = "%s"\nstage = 0' % RING, "element type"),
])
def test_bad_entries_are_one_line(entry, msg):
    with pytest.raises(LayoutError, match=msg) as e:
        _run(f'''
[layouts.x]
{entry}
[layouts.smem]
text = "(_32,_16):(_16,_1)"
[[obligation]]
kind = "conflict_free"
reg = "x"
smem = "smem"
dtype = "f16"
''')
    assert "\n" not in str(e.value)
