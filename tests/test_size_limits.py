"""Documented size limits are enforced before any allocation (issue 11), with the limit and
the requested size in the message. The sizes below are derived by hand in each test."""
from __future__ import annotations

import resource
import subprocess
import sys

import pytest

from verilayout.errors import LayoutError
from verilayout.views import VIEW_MAX_ELEMENTS, hardware_view, tensor_view
from verilayout.synth.blockload import PLAN_MAX_ELEMENTS
from verilayout import parse

BLOCKED = ("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], "
           "warpsPerCTA = [4, 1], order = [1, 0]}>")


def dpas_a(n: int, warps: tuple[int, int]) -> str:
    return (f"tensor<{n}x{n}xf16, #ttg.dot_op<{{opIdx = 0, parent = #ttig.dpas<{{repeatCount = 8, "
            f"systolicDepth = 8, executionSize = 16, opsPerChan = 2, threadsPerWarp = 16, "
            f"warpsPerCTA = [{warps[0]}, {warps[1]}], repCluster = [4, 2]}}>, kWidth = 1}}>>")


@pytest.mark.parametrize("view", [hardware_view, tensor_view])
def test_views_refuse_a_2_20_square_tensor(view):
    layout = parse(BLOCKED, [1 << 20, 1 << 20])
    with pytest.raises(LayoutError) as e:
        view(layout, [1 << 20, 1 << 20])
    # 2^20 * 2^20 elements requested, limit 2^20
    assert str(1 << 40) in str(e.value) and str(VIEW_MAX_ELEMENTS) in str(e.value)
    assert VIEW_MAX_ELEMENTS == 1 << 20


def test_view_just_under_the_limit_is_drawn():
    # 32 lanes x 4 warps hold a 128 x 8 tensor: 1024 elements, one "(row,col)" entry each
    text = hardware_view(parse(BLOCKED, [128, 8]), [128, 8])
    assert text.count("(") == 1024 and text.count("Warp") == 4


def test_plan_refuses_more_than_2_23_elements_per_subgroup():
    from verilayout.blockload import plan
    # A operand 16384 x 16384 = 2^28 elements; warpsPerCTA [4, 4]: M is split over 4 sub-groups
    # (the 4 along N hold copies of A), so each sub-group needs 2^26 elements, over 2^23
    assert PLAN_MAX_ELEMENTS == 1 << 23
    with pytest.raises(LayoutError) as e:
        plan(dpas_a(16384, (4, 4)))
    assert str(1 << 26) in str(e.value) and str(PLAN_MAX_ELEMENTS) in str(e.value)


def test_plan_refusal_allocates_nothing_large():
    # a 65536^2 operand on one sub-group (2^32 elements): refused in a subprocess capped at 1 GiB
    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
            "from verilayout.blockload import plan\nfrom verilayout.errors import LayoutError\n"
            f"try:\n    plan({dpas_a(65536, (1, 1))!r})\nexcept LayoutError as e:\n    print('refused', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("refused"), out.stderr[-400:]
