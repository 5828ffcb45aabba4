"""A reduce whose operand comes straight out of a layout conversion through shared memory: a Gluon kernel
loads a 64x32 f32 tile column-major (``BlockedLayout([1, 1], [32, 1], [1, 4], [0, 1])``), converts it
with ``gl.convert_layout`` to ``BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])`` (``st.shared`` then
``ld.shared``, no shuffle makes the stored values) and sums along axis 1: each butterfly chain shuffles
the loaded registers themselves (the form of a harvested liger-kernel fused-MoE backward, whose
``ttg.convert_layout`` from ``#mma`` to ``#blocked`` feeds its ``tt.reduce``). That round is no inter-warp
stage; the chains are first stages and must be proved against the destination layout's lanes (axis 1
lane bases ``[0, 1] .. [0, 16]``: butterflies 16, 8, 4, 2, 1, derived from ``threadsPerWarp = [1, 32]``
here). A planted wrong mask must not be proved.
"""
from __future__ import annotations

import re

import pytest

from audited import audit_pair

triton = pytest.importorskip("triton")
gluon = pytest.importorskip("triton.experimental.gluon")
gl = pytest.importorskip("triton.experimental.gluon.language")


@gluon.jit
def _converted_rowsum(x_ptr, y_ptr):
    src: gl.constexpr = gl.BlockedLayout([1, 1], [32, 1], [1, 4], [0, 1])
    dst: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
    r = gl.arange(0, 64, layout=gl.SliceLayout(1, src))
    c = gl.arange(0, 32, layout=gl.SliceLayout(0, src))
    x = gl.convert_layout(gl.load(x_ptr + r[:, None] * 32 + c[None, :]), dst)
    gl.store(y_ptr + gl.arange(0, 64, layout=gl.SliceLayout(1, dst)), gl.sum(x, axis=1))


_CACHE: dict = {}


def kernel() -> tuple[str, str]:
    if not _CACHE:
        from triton.backends.compiler import GPUTarget
        from triton.experimental.gluon._runtime import GluonASTSource
        src = GluonASTSource(_converted_rowsum, {"x_ptr": "*fp32", "y_ptr": "*fp32"}, {})
        k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
        _CACHE["k"] = (k.asm["ttgir"], k.asm["ptx"])
    return _CACHE["k"]


def _chains(ttgir: str, ptx: str) -> list:
    return [c for c in audit_pair(ttgir, ptx, "k").checks if c.check == "warp-reduce"]


def test_kernel_has_the_form():
    ttgir, ptx = kernel()
    assert "ttg.convert_layout" in ttgir
    lines = ptx.splitlines()
    first = next(i for i, s in enumerate(lines) if "shfl.sync.bfly" in s)
    src = re.search(r"shfl\.sync\.bfly\.b32\s+%r\d+, (%r\d+),", lines[first]).group(1)
    assert any(re.search(r"\bld\.shared\.", s) and src in s for s in lines[:first])
    assert "ldmatrix" not in ptx


def test_first_stage_on_converted_values_is_proved():
    ttgir, ptx = kernel()
    got = _chains(ttgir, ptx)
    assert len(got) == 16 and all(c.status == "proved" for c in got), [c.message[:200] for c in got]
    assert all(c.data["masks"] == [16, 8, 4, 2, 1] for c in got)


def test_planted_wrong_mask_is_not_proved():
    ttgir, ptx = kernel()
    lines = ptx.splitlines()
    at = next(i for i, s in enumerate(lines) if re.search(r"shfl\.sync\.bfly\.b32 .*, 8, 31, -1;", s))
    lines[at] = lines[at].replace(", 8, 31, -1;", ", 16, 31, -1;")
    got = [c for c in _chains(ttgir, "\n".join(lines)) if c.line == at + 1 or at + 1 in c.data.get("instructions", [])]
    assert got and not any(c.status == "proved" for c in got), [c.message[:200] for c in got]
