"""``#ttng.tensor_memory_encoding`` and ``#ttng.tensor_memory_scales_encoding`` -> linear layouts,
compared basis for basis with the Triton wheel's own conversion (``to_linear_layout`` of the
Gluon ``TensorMemoryLayout`` / ``TensorMemoryScalesLayout``), run in a subprocess (Triton aborts
the process on invalid layouts)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from verilayout.frontends.triton import attr_to_linear, parse_attr

CASES = [(bm, bn, cs, shape) for bm, bn, cs, shape in [
    (128, 128, 1, (128, 128)), (128, 64, 1, (128, 128)), (128, 256, 1, (128, 256)), (128, 32, 1, (128, 32)),
    (64, 128, 1, (64, 128)), (64, 64, 1, (64, 128)), (64, 64, 1, (128, 64)), (64, 32, 1, (64, 32)),
    (128, 128, 2, (128, 128)), (64, 128, 2, (64, 128)), (128, 64, 4, (128, 64)), (64, 64, 1, (256, 64)),
    (128, 64, 1, (256, 128)),
]]
SCALES = [(128, 4), (128, 8), (128, 16), (64, 4), (256, 4), (32, 4), (128, 2)]

WORKER = r"""
import json, os, sys
from triton._C.libtriton import gluon_ir, ir
import triton.experimental.gluon.language.nvidia.blackwell as B
ctx = ir.context(); ir.load_dialects(ctx)
b = gluon_ir.GluonOpBuilder(ctx, "sm100")
cases, scales = json.loads(sys.stdin.read())
out = []
for bm, bn, cs, shape in cases:
    ll = b.to_linear_layout(B.TensorMemoryLayout((bm, bn), cs)._to_ir(b), list(shape))
    out.append({"row": ll.rows, "col": ll.cols, "shape": list(ll.shape)})
for shape in scales:
    ll = b.to_linear_layout(B.TensorMemoryScalesLayout()._to_ir(b), list(shape))
    out.append({"row": ll.rows, "col": ll.cols, "shape": list(ll.shape)})
print(json.dumps(out)); sys.stdout.flush(); os._exit(0)
"""


@pytest.fixture(scope="module")
def triton_answers():
    pytest.importorskip("triton")
    r = subprocess.run([sys.executable, "-c", WORKER], input=json.dumps([CASES, SCALES]),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("i", range(len(CASES)))
def test_tensor_memory_encoding_equals_triton(triton_answers, i):
    bm, bn, cs, shape = CASES[i]
    ours = attr_to_linear(parse_attr(f"#ttng.tensor_memory_encoding<blockM = {bm}, blockN = {bn}, "
                                     f"colStride = {cs}>"), shape)
    want = triton_answers[i]
    assert ours.bases["row"] == want["row"] and ours.bases["col"] == want["col"], (CASES[i], ours.bases, want)


@pytest.mark.parametrize("j", range(len(SCALES)))
def test_tensor_memory_scales_equal_triton(triton_answers, j):
    shape = SCALES[j]
    ours = attr_to_linear(parse_attr("#ttng.tensor_memory_scales_encoding<>"), shape)
    want = triton_answers[len(CASES) + j]
    assert ours.bases["row"] == want["row"] and ours.bases["col"] == want["col"], (shape, ours.bases, want)
