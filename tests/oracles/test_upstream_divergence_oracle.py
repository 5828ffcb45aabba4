"""Where Triton's unit tests and the Triton 3.9 wheel disagree, the wheel is asked here, so that the
values ``tests/test_upstream_conversions.py`` asserts instead of the unit tests' come from Triton
itself, not from verilayout.

* ``Blocked4D``: the wheel's ``to_linear_layout`` of the blocked layout (no zero register bases).
* ``fp4Subview``: the wheel's fp4Padded tensor-memory layout of the 128x1 view's shape (two
  columns, one zero basis), and of the 256x1 allocation (whose restriction to the view is that).
* the view rule (``withHole``): the wheel's TMEM register layout (``compute_tmem_reg_layout``) of a
  128x256 view of a 256x256 allocation has a zero register basis exactly where verilayout's view
  layout has its zero column basis, and none when the allocation is the view.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.test_upstream_conversions import MEMDESC_CASES, MEMDESC_WHEEL_DIFFERS, WHEEL_DIFFERS
from verilayout import parse

WORKER = r"""
import json, os, sys
from triton._C.libtriton import gluon_ir, ir
import triton.experimental.gluon.language as gl
import triton.experimental.gluon.language.nvidia.blackwell as B
ctx = ir.context(); ir.load_dialects(ctx)
b = gluon_ir.GluonOpBuilder(ctx, "sm100")
out = {}
ll = b.to_linear_layout(gl.BlockedLayout([1, 1, 1, 4], [2, 1, 1, 16], [1, 2, 4, 1], [3, 0, 1, 2])._to_ir(b),
                        [2, 1, 1, 1])
out["blocked4d"] = {"register": ll.reg_bases, "lane": ll.lane_bases, "warp": ll.warp_bases,
                    "block": ll.block_bases}
for shape in ([128, 1], [256, 1]):
    t = b.to_linear_layout(B.TensorMemoryLayout((128, 1), 1, fp4_padded=True)._to_ir(b), shape)
    out[f"fp4_{shape[0]}"] = {"row": t.rows, "col": t.cols}
lay = B.TensorMemoryLayout((128, 64), 1)
for alloc in ([256, 256], [128, 256]):
    r = gluon_ir.compute_tmem_reg_layout(gl.float32, [128, 256], alloc, lay, 4, "32x32b")
    out[f"reg_{alloc[0]}"] = r.reg_bases
print(json.dumps(out)); sys.stdout.flush(); os._exit(0)
"""


@pytest.fixture(scope="module")
def wheel():
    pytest.importorskip("triton")
    r = subprocess.run([sys.executable, "-c", WORKER], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_blocked4d_is_what_the_wheel_computes(wheel):
    assert wheel["blocked4d"] == WHEEL_DIFFERS[("Blocked4D", (2, 1, 1, 1))][0]


def test_fp4_subview_is_what_the_wheel_computes(wheel):
    want = MEMDESC_WHEEL_DIFFERS["fp4Subview"][0]
    assert wheel["fp4_128"] == {"row": want["row"], "col": want["col"]}
    # the allocation's only other column basis reaches row 128, outside the view
    assert wheel["fp4_256"]["col"] == want["col"] + [[128, 0]]


def test_the_view_hole_is_where_the_wheels_register_layout_has_it(wheel):
    text = dict((c[0], c[1]) for c in MEMDESC_CASES)["withHole"]
    cols = parse(text).bases["col"]
    assert cols.count([0, 0]) == 1 and [0, 0] not in wheel["reg_128"]
    # the 32x32b message puts TMEM columns in registers, in order: same hole, same place
    assert wheel["reg_256"] == cols
