"""verilayout emit blockload + its executable model, on the seed 002 operands.

Expected values: seed 002_5b1756cea8788f7c.txt (the A operand's Warp0 hardware view, the
number of loads and their kind for A, B and transposed B), the cl_intel_subgroup_2d_block_io
extension's list of built-ins (names and destination types), and the DPAS layout the
Triton front-end parses (every register of every lane of every sub-group).
"""
import copy
import doctest
import importlib
import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from verilayout.blockload import operand
from verilayout.emit.cuda_wgmma import write_emission
from verilayout.emit import opencl_block_io
from verilayout.emit.opencl_block_io import builtin_for, render_opencl
from verilayout.simulate.replay import simulate, simulate_blockload
from verilayout.errors import LayoutError
from verilayout.hw.intel.block_io import BlockLoad, Surface


def build_manifest(text, *, shape=None, dtype=None, **kw):
    """The door (``operand`` reads the text), then the emitter's manifest."""
    return opencl_block_io.build_manifest(operand(text, shape=shape, dtype=dtype), **kw)


def emit_blockload(text, *, shape=None, dtype=None, **kw):
    """The door (``operand`` reads the text), then the emitter."""
    return opencl_block_io.emit_blockload(operand(text, shape=shape, dtype=dtype), **kw)


PARENT = ("#triton_intel_gpu.dpas<{repeatCount = 8, systolicDepth = 8, executionSize = 16, "
          "opsPerChan = 2, threadsPerWarp = 16, warpsPerCTA = [8, 4], repCluster = [4, 2], "
          "A = [32, 16], B = [16, 32], C = [32, 32]}>")
A = f"#ttg.dot_op<{{opIdx = 0, parent = {PARENT}, kWidth = 1}}>"     # seed 002, verbatim
B = f"#ttg.dot_op<{{opIdx = 1, parent = {PARENT}, kWidth = 2}}>"
SEED = {"A": (A, [256, 32], False), "B": (B, [32, 256], False), "BT": (B, [32, 256], True)}


@pytest.fixture(scope="module")
def emitted():
    return {k: emit_blockload(t, shape=s, dtype="f16", transpose=tr)
            for k, (t, s, tr) in SEED.items()}


# seed 002: A is one load of the 32x32 block; B needs two (VNNI) loads 128 elements apart;
# transposed B needs four 32-bit transposed loads.
@pytest.mark.parametrize("name,builtin,count,xs", [
    ("A", "intel_sub_group_2d_block_read_16b_32r16x2c", 1, [0]),
    ("B", "intel_sub_group_2d_block_read_transform_16b_32r16x2c", 2, [0, 128]),
    ("BT", "intel_sub_group_2d_block_read_transpose_32b_32r8x1c", 4, [0, 8, 0, 8]),
])
def test_the_seed_plans_emit_with_the_extensions_built_ins(emitted, name, builtin, count, xs):
    m = emitted[name].manifest
    assert [b["name"] for b in m["builtins"]] == [builtin] * count
    assert [ld["x"] for ld in m["loads"]] == xs
    src = emitted[name].files["kernel.cl"]
    assert src.count(builtin + "(base,") == count
    assert all(o["status"] == "proved" for o in m["obligations"])
    assert "[proved," in src.split("#ifdef")[0]


@pytest.mark.parametrize("name", ["A", "B", "BT"])
def test_the_seed_plans_simulate_exactly_for_every_sub_group(emitted, name, tmp_path):
    write_emission(emitted[name], str(tmp_path))
    r = simulate(str(tmp_path))
    assert r.ok, r.summary
    text, shape, tr = SEED[name]
    L = operand(text, shape=shape, dtype="f16").layout
    warps, regs = L.in_dims["warp"], L.in_dims["register"]
    assert r.output.shape == (warps, regs, 16, 2)
    for w in (0, 5, warps - 1):                  # the Triton front-end's DPAS layout
        for reg in range(0, regs, 7):
            for lane in range(16):
                out = L.apply({"register": reg, "lane": lane, "warp": w, "block": 0})
                assert tuple(r.output[w, reg, lane]) == (out["dim0"], out["dim1"])


def test_the_a_operand_registers_are_the_seeds_warp0_hardware_view(emitted):
    # seed 002, Warp0 of A: rows 0..31 list (r, 0..15), rows 32..63 list (r-32, 16..31):
    # register r of lane l holds (r, l) for r < 32 and (r - 32, l + 16) after
    r = simulate_blockload(emitted["A"].manifest)
    want = [[(reg, lane) if reg < 32 else (reg - 32, lane + 16) for lane in range(16)]
            for reg in range(64)]
    np.testing.assert_array_equal(r.output[0], want)


def test_a_transposed_load_hands_each_lane_pairs_of_k(emitted):
    # seed 002 (AxBT): a d32 transposed load of f16 data delivers two consecutive K values
    # per 32-bit slot, so registers 2j and 2j+1 come from one uint of the load
    src = emitted["BT"].files["kernel.cl"]
    assert "op[0] = (ushort)(ld0[0] >> 0);" in src and "op[1] = (ushort)(ld0[0] >> 16);" in src


def test_a_moved_load_is_caught_with_sub_group_register_and_lane(emitted):
    m = copy.deepcopy(emitted["B"].manifest)
    m["loads"][1]["x"] += 16                      # the second load 16 columns too far
    r = simulate_blockload(m, source=render_opencl(m))
    assert not r.ok
    mm = r.mismatch
    assert mm["where"] == "DPAS operand" and mm["got"] != mm["expected"]
    assert {"sub_group", "register", "lane"} <= set(mm)


def test_a_wrong_shuffle_entry_is_caught(emitted):
    m = copy.deepcopy(emitted["A"].manifest)
    m["shuffle"][5] = [0, 6]
    r = simulate_blockload(m)
    assert not r.ok and r.mismatch["register"] == 5
    # register 5 of lane l holds (5, l) (seed Warp0 view); element 6 of the load is (6, l)
    assert r.mismatch["expected"] == [5, r.mismatch["lane"]]
    assert r.mismatch["got"] == [6, r.mismatch["lane"]]


def test_a_wrong_sub_group_offset_is_caught(emitted):
    m = copy.deepcopy(emitted["A"].manifest)
    m["warps"]["offsets"][3][1] += 8
    r = simulate_blockload(m)
    assert not r.ok and r.mismatch["sub_group"] == 3


def test_an_edited_kernel_is_reported_with_its_line(emitted, tmp_path):
    write_emission(emitted["A"], str(tmp_path))
    path = tmp_path / "kernel.cl"
    path.write_text(path.read_text().replace("op[3] = ld0[3];", "op[3] = ld0[4];"))
    r = simulate(str(tmp_path))
    assert not r.ok and r.mismatch["where"] == "kernel.cl" and "ld0[4]" in r.mismatch["got"]


def test_built_in_names_and_types_follow_the_extension():
    s = Surface(64, 64, 64)
    # cl_intel_subgroup_2d_block_io 1.1: 8-bit 32-column reads hand out ushorts, 32-bit
    # reads uints ("reads one uint" for 2r8x1c), transforms and transposes uints
    assert builtin_for(BlockLoad(1, 32, 4, s)).to_dict() == {
        "name": "intel_sub_group_2d_block_read_8b_4r32x1c", "dest_type": "ushort", "dest_count": 4}
    assert builtin_for(BlockLoad(4, 8, 2, s)).to_dict() == {
        "name": "intel_sub_group_2d_block_read_32b_2r8x1c", "dest_type": "uint", "dest_count": 1}
    assert builtin_for(BlockLoad(1, 16, 32, s, array_length=4, vnni=True)).name == \
        "intel_sub_group_2d_block_read_transform_8b_32r16x4c"
    assert builtin_for(BlockLoad(4, 8, 16, s, transpose=True)).dest_count == 8   # "eight uints"


@pytest.mark.parametrize("load,why", [
    (BlockLoad(2, 8, 8, Surface(64, 64, 64)), "no built-in of this shape"),
    (BlockLoad(2, 16, 8, Surface(64, 64, 64), vnni=True), "no built-in of this shape"),
    (BlockLoad(4, 8, 8, Surface(64, 64, 64), transpose=True), "no built-in of this shape"),
    (BlockLoad(1, 16, 8, Surface(64, 64, 64), array_length=4), "no built-in of this shape"),
])
def test_shapes_without_a_built_in_are_refused(load, why):
    with pytest.raises(LayoutError, match=why):
        builtin_for(load)


def test_a_layout_that_is_not_a_dpas_operand_is_bad_input():
    with pytest.raises(LayoutError, match="DPAS"):
        build_manifest("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], "
                       "warpsPerCTA = [4, 1], order = [1, 0]}>", shape=[32, 16], dtype="f16")


def test_a_malformed_manifest_is_bad_input(emitted):
    m = copy.deepcopy(emitted["A"].manifest)
    m["shuffle"][0] = "x"
    with pytest.raises(LayoutError, match="shuffle"):
        simulate_blockload(m)
    m = json.loads(json.dumps(emitted["A"].manifest))
    del m["loads"]
    with pytest.raises(LayoutError, match="loads"):
        simulate_blockload(m)
    m = json.loads(json.dumps(emitted["A"].manifest))
    m["elem_bytes"] = -2
    with pytest.raises(LayoutError, match="elem_bytes = -2"):
        simulate_blockload(m)


def test_the_manifest_round_trips_through_json(emitted):
    for e in emitted.values():
        m = json.loads(e.files["manifest.json"])
        assert render_opencl(m) == e.files["kernel.cl"]


def test_the_kernel_declares_the_built_ins_for_offline_checks(emitted):
    src = emitted["BT"].files["kernel.cl"]
    decl = re.search(r"#ifdef VL_DECLARE_BUILTINS.*?#endif", src, re.S).group(0)
    assert "private uint* destination" in decl and "transpose_32b_32r8x1c" in decl
    assert "intel_reqd_sub_group_size(16)" in src


def test_docstring_examples_run():
    result = doctest.testmod(importlib.import_module("verilayout.emit.opencl_block_io"))
    assert result.attempted > 0 and result.failed == 0


def _dpas(ops, warps, reps):
    return (f"#ttig.dpas<{{repeatCount = 8, systolicDepth = 8, executionSize = 16, "
            f"opsPerChan = {ops}, threadsPerWarp = 16, warpsPerCTA = {warps}, "
            f"repCluster = {reps}}}>")


def _spec_reads():
    """The read built-ins of cl_intel_subgroup_2d_block_io 1.1 and their destination types,
    transcribed from the extension's list."""
    rows = (1, 2, 4, 8, 16, 32)
    spec = {}
    for h in rows:
        spec[f"8b_{h}r32x1c"] = spec[f"8b_{h}r32x2c"] = "ushort"
        spec[f"16b_{h}r16x1c"] = spec[f"16b_{h}r16x2c"] = "ushort"
        spec[f"32b_{h}r8x1c"] = spec[f"32b_{h}r16x1c"] = spec[f"32b_{h}r8x2c"] = "uint"
    for h in (8, 16, 32):
        spec[f"8b_{h}r16x4c"] = "uchar"
    for c in ("32r16x1c", "32r16x2c", "32r16x4c"):
        spec[f"transform_8b_{c}"] = "uint"
    for c in ("16r16x1c", "16r16x2c", "32r16x1c", "32r16x2c"):
        spec[f"transform_16b_{c}"] = "uint"
    for c in ("16r8x1c", "32r8x1c"):
        spec[f"transpose_32b_{c}"] = "uint"
    return {"intel_sub_group_2d_block_read_" + k: v for k, v in spec.items()}


SPEC_READS = _spec_reads()


@pytest.mark.parametrize("dtype,ops,idx,kw,shape,tr,kind", [
    ("bf16", 2, 1, 2, [32, 64], True, "transpose_32b"),
    ("bf16", 2, 1, 2, [32, 64], False, "transform_16b"),
    ("i8", 4, 1, 4, [64, 64], False, "transform_8b"),
    ("i8", 4, 0, 2, [64, 64], False, "read_8b"),
    ("tf32", 1, 0, 1, [64, 16], False, "read_32b"),
])
def test_other_element_types_emit_and_simulate(dtype, ops, idx, kw, shape, tr, kind):
    text = f"#ttg.dot_op<{{opIdx = {idx}, parent = {_dpas(ops, [2, 2], [1, 1])}, kWidth = {kw}}}>"
    e = emit_blockload(text, shape=shape, dtype=dtype, transpose=tr)
    for b in e.manifest["builtins"]:
        assert SPEC_READS.get(b["name"]) == b["dest_type"] and kind in b["name"]
    assert simulate_blockload(e.manifest, source=e.files["kernel.cl"]).ok


def test_a_plan_with_a_shape_the_extension_lacks_is_refused_by_name():
    # a transposed tf32 A: the plan's d32 transposed load is 8 rows tall; the extension's
    # transposed built-ins read 16 or 32 rows
    text = f"#ttg.dot_op<{{opIdx = 0, parent = {_dpas(1, [2, 2], [1, 1])}, kWidth = 1}}>"
    with pytest.raises(LayoutError, match="no built-in of this shape"):
        emit_blockload(text, shape=[64, 16], dtype="tf32", transpose=True)


CLANG = next((c for c in ("clang", "clang-18", "clang-17", "clang-16", "clang-15", "clang-14")
              if shutil.which(c)), None)


@pytest.mark.skipif(CLANG is None, reason="(optional tool) clang (OpenCL C front-end) is not installed; the "
                    "OpenCL C syntax check needs it")
@pytest.mark.parametrize("name", ["A", "B", "BT"])
def test_the_opencl_kernel_is_valid_opencl_c(emitted, name, tmp_path):
    path = tmp_path / "kernel.cl"
    path.write_text(emitted[name].files["kernel.cl"])
    base = [CLANG, "-x", "cl", "-cl-std=CL3.0", "-Xclang", "-finclude-default-header",
            "-fsyntax-only", "-target", "spir64", str(path)]
    ok = subprocess.run(base[:-1] + ["-DVL_DECLARE_BUILTINS", str(path)], capture_output=True,
                        text=True)
    assert ok.returncode == 0, ok.stderr
    # without the declarations the built-ins are unknown to clang: the check is not vacuous
    assert subprocess.run(base, capture_output=True, text=True).returncode != 0
