"""``#ttng.tensor_memory_encoding<{..., fp4Padded = true}>`` -> linear layouts, compared basis for
basis with the Triton 3.9 wheel's own conversion (the Gluon ``TensorMemoryLayout(fp4_padded=True)``
through ``GluonOpBuilder.to_linear_layout``), in a subprocess: Triton aborts the process on shapes
it asserts against, so only shapes it converts are asked, and its refusal of ``colStride`` other
than 1 is asked separately (a Python exception there, not an abort)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from verilayout.errors import LayoutError
from verilayout.frontends.triton import attr_to_linear, parse_attr

CASES = [(bm, bn, shape) for bm in (64, 128) for bn in (1, 2, 16, 64, 128)
         for shape in ((bm, bn), (2 * bm, bn), (bm, 2 * bn), (128, 128), (256, 64))
         if shape[0] >= bm]

WORKER = r"""
import json, os, sys
from triton._C.libtriton import gluon_ir, ir
import triton.experimental.gluon.language.nvidia.blackwell as B
ctx = ir.context(); ir.load_dialects(ctx)
b = gluon_ir.GluonOpBuilder(ctx, "sm100")
out = []
for bm, bn, shape in json.loads(sys.stdin.read()):
    ll = b.to_linear_layout(B.TensorMemoryLayout((bm, bn), 1, fp4_padded=True)._to_ir(b), list(shape))
    out.append({"row": ll.rows, "col": ll.cols})
try:
    b.to_linear_layout(B.TensorMemoryLayout((128, 64), 2, fp4_padded=True)._to_ir(b), [128, 64])
    out.append({"refused": None})
except Exception as e:
    out.append({"refused": str(e)})
print(json.dumps(out)); sys.stdout.flush(); os._exit(0)
"""


@pytest.fixture(scope="module")
def triton_answers():
    pytest.importorskip("triton")
    r = subprocess.run([sys.executable, "-c", WORKER], input=json.dumps(CASES),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def _attr(bm, bn, cs=1):
    return parse_attr(f"#ttng.tensor_memory_encoding<{{blockM = {bm}, blockN = {bn}, colStride = {cs}, "
                      "fp4Padded = true}>")


@pytest.mark.parametrize("i", range(len(CASES)), ids=[f"{c[0]}x{c[1]}-{c[2][0]}x{c[2][1]}" for c in CASES])
def test_fp4_padded_tensor_memory_equals_triton(triton_answers, i):
    bm, bn, shape = CASES[i]
    ours = attr_to_linear(_attr(bm, bn), shape)
    want = triton_answers[i]
    assert ours.bases["row"] == want["row"] and ours.bases["col"] == want["col"], (CASES[i], ours.bases, want)


def test_fp4_padded_with_col_stride_2_is_refused_like_triton(triton_answers):
    assert "requires colStride 1" in (triton_answers[-1]["refused"] or "")
    with pytest.raises(LayoutError, match="Triton refuses it too.*requires colStride 1"):
        attr_to_linear(_attr(128, 64, 2), (128, 64))
