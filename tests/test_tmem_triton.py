"""TMEM model against Triton 3.9 (the wheel, run in a subprocess): the register layouts Triton's
``compute_tmem_reg_layout`` assigns to ``ttng.tmem_load`` are exactly ``tcgen05.ld`` messages
(:func:`verilayout.prove.tmem.load_verdict`), and Triton's ``#ttng.tensor_memory_encoding``
(``TensorMemoryLayout`` as a linear layout) is the PTX accumulator datapath layout for M = 128
(layout D) and M = 64 (layout F).
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from verilayout.core.linear_layout import LinearLayout
from verilayout.prove.tmem import accumulator_verdict, load_verdict

pytestmark = pytest.mark.oracle

SCRIPT = r"""
import json, os, sys
from triton._C.libtriton import gluon_ir, ir
import triton.experimental.gluon.language as gl
from triton.experimental.gluon.language.nvidia.blackwell import TensorMemoryLayout
from triton.experimental.gluon.language._semantic import _compute_tmem_reg_layout
ctx = ir.context(); ir.load_dialects(ctx)
b = gluon_ir.GluonOpBuilder(ctx, "sm100")
out = []
for m in (64, 128):
    for n in (16, 32, 64, 128, 256):
        lay = TensorMemoryLayout((m, n), col_stride=1)
        t = b.to_linear_layout(lay._to_ir(b), [m, n])
        for nw in (4, 8):
            for var in ("32x32b", "16x64b", "16x128b", "16x256b"):
                try:
                    r = _compute_tmem_reg_layout(gl.float32, [m, n], [m, n], lay, nw, var)
                except Exception as e:
                    out.append({"m": m, "n": n, "nw": nw, "var": var, "error": str(e)[:200]})
                    continue
                out.append({"m": m, "n": n, "nw": nw, "var": var, "reg": r.reg_bases, "lane": r.lane_bases,
                            "warp": r.warp_bases, "rows": t.rows, "cols": t.cols})
print(json.dumps(out))
sys.stdout.flush()
os._exit(0)
"""


@pytest.fixture(scope="module")
def cases():
    pytest.importorskip("triton")
    p = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def _tmem(c):
    return LinearLayout({"lane": c["rows"], "col": c["cols"]}, {"dim0": c["m"], "dim1": c["n"]})


def _reg(c):
    return LinearLayout({"register": c["reg"], "lane": c["lane"], "warp": c["warp"]},
                        {"dim0": c["m"], "dim1": c["n"]})


def test_triton_tensor_memory_encoding_is_the_ptx_datapath(cases):
    seen = set()
    for c in cases:
        if "rows" in c and (c["m"], c["n"]) not in seen:
            seen.add((c["m"], c["n"]))
            v = accumulator_verdict(_tmem(c), c["m"], c["n"])
            assert v.proved, (c["m"], c["n"], v.reason)
    assert len(seen) == 10


def test_every_triton_tmem_load_layout_is_tcgen05_messages(cases):
    ok = [c for c in cases if "reg" in c]
    assert len(ok) >= 40
    for c in ok:
        shape = c["var"]
        split = None
        if c["m"] == 64 and shape == "32x32b":  # Triton lowers this to 16x32bx2 (halves N/2 apart)
            shape, split = "16x32bx2", c["n"] // (c["nw"] // 4) // 2
        v = load_verdict(_reg(c), _tmem(c), shape, split=split)
        assert v.proved, (c, v.reason)


def test_the_32x32b_message_on_m64_is_refused(cases):
    # a plain 32x32b message would read lanes 16-31, which the M = 64 datapath leaves empty
    c = next(c for c in cases if "reg" in c and c["m"] == 64 and c["var"] == "32x32b" and c["nw"] == 4)
    assert load_verdict(_reg(c), _tmem(c), "32x32b").status == "counterexample"
