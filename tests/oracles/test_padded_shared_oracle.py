"""``#ttg.padded_shared`` read by the Triton 3.9 wheel and by verilayout: the wheel parses each
``!ttg.memdesc`` type (its verifier included) and gives its Gluon ``PaddedSharedLayout``'s
``interval_padding_pairs`` and ``offset_bases`` (the worker of ``test_lit_layouts_oracle``, a
subprocess); every element's padded offset is then computed from the wheel's own fields by the
rule of ``PaddedSharedEncodingAttr`` (``TritonGPUAttrDefs.td``) and compared with verilayout's
address map, for every element. Where the wheel refuses a type, verilayout refuses it too.
Without Triton this module is skipped (a failure under ``VERILAYOUT_REQUIRE_ORACLES=1``).
"""
from __future__ import annotations

import pytest

from tests.oracles.test_lit_layouts_oracle import run_workers
from tests.test_padded_shared import identity_bases, triton_offsets
from verilayout import LayoutError, parse

pytestmark = pytest.mark.oracle

AGREE = [
    ("#ttg.padded_shared<[32:+4] {order = [1, 0], shape = [16, 64]}>", [16, 64]),
    ("#ttg.padded_shared<[4:+2] {order = [0, 1], shape = [4, 8]}>", [4, 8]),
    ("#ttg.padded_shared<[8:+1, 32:+2] {offset = [[0, 1], [0, 2], [2, 0], [4, 0], [1, 0]], block = []}>",
     [8, 4]),
    ("#ttg.padded_shared<[16:+1] {offset = [[0, 1], [0, 2], [2, 0], [4, 0], [1, 0]], block = []}>", [8, 4]),
    ("#ttg.padded_shared<[64:+8, 256:+16] {order = [1, 0], shape = [32, 32]}>", [32, 32]),
]
REFUSED = [
    ("#ttg.padded_shared<[32:+4] {order = [1, 0], shape = [64, 64]}>", [32, 64]),   # shape mismatch
    ("#ttg.padded_shared<[8:+3] {order = [1, 0], shape = [8, 8]}>", [8, 8]),        # pad not 2^k
]


def _memdesc(text: str, shape: list[int]) -> str:
    return f"!ttg.memdesc<{'x'.join(map(str, shape))}xf16, {text}, #ttg.shared_memory>"


@pytest.fixture(scope="module")
def answers():
    reqs = [{"type": _memdesc(t, s), "kind": "memdesc", "shape": [1]} for t, s in AGREE + REFUSED]
    return run_workers(reqs, timeout=300)


@pytest.mark.parametrize("k", range(len(AGREE)))
def test_every_element_sits_where_the_wheels_fields_put_it(answers, k):
    text, shape = AGREE[k]
    ans = answers[k]
    assert "padded" in ans, ans
    pairs = [tuple(p) for p in ans["padded"]["pairs"]]
    want = triton_offsets(pairs, ans["padded"]["offset"])
    ours = parse(text, shape=shape)
    assert ours.padding == tuple(pairs)
    assert {c: ours.offset({"dim0": c[0], "dim1": c[1]}) for c in want} == want


def test_the_short_form_is_the_identity_component_in_the_wheel_too(answers):
    assert answers[0]["padded"]["offset"] == identity_bases([16, 64], [1, 0])
    assert answers[1]["padded"]["offset"] == identity_bases([4, 8], [0, 1])


@pytest.mark.parametrize("k", range(len(REFUSED)))
def test_what_the_wheel_refuses_verilayout_refuses(answers, k):
    text, shape = REFUSED[k]
    assert "refused" in answers[len(AGREE) + k], answers[len(AGREE) + k]
    with pytest.raises(LayoutError):
        parse(text, shape=shape)
