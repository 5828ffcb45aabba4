"""Placement of block-load surfaces: an operand whose first byte is not 64-byte aligned.

The rule (SPV_INTEL_2d_block_io / cl_intel_subgroup_2d_block_io, shared/reference/
intel_2d_block_io.md [S, O, T]): a surface's base address is 64-byte aligned, so an operand at
byte B is read through the surface at B & ~63 with the operand at x0 = (B % 64) / elem_bytes.

The oracle is a byte-level model of the loads written here from the extensions' text (not the
package's): a plain load writes each block's rows row-major, width padded to a power of two,
each block filling whole 64-byte registers; a 16-bit VNNI load packs row pairs into 32-bit
values; the register bytes go to lanes in units of 2 bytes (plain 16-bit) or 4 bytes (VNNI):
unit U to lane U % 16. A load at (x, y) of surface (base, pitch) reads element (y + r, x + c)
at byte base + (y + r) * pitch + (x + c) * 2. Each DPAS register's expected byte is the
operand's first byte plus row * pitch + col * 2 of the element the layout names.
"""
from __future__ import annotations

import json

import pytest

from verilayout.cli.main import main
from verilayout.errors import LayoutError
from verilayout.hw.intel.block_io import Surface, placement
from verilayout.prove.coverage import Needed
from verilayout.blockload import check as check_operand_plan, plan as plan_operand

_DPAS = ("#ttig.dpas<{{repeatCount = 8, systolicDepth = 8, executionSize = 16, opsPerChan = 2, "
         "threadsPerWarp = 16, warpsPerCTA = [1, 1], repCluster = [{rc}]}}>")
A_SMALL = ("tensor<8x16xf16, #ttg.dot_op<{opIdx = 0, parent = " + _DPAS.format(rc="1, 1")
           + ", kWidth = 1}>>")
A_BIG = ("tensor<32x32xf16, #ttg.dot_op<{opIdx = 0, parent = " + _DPAS.format(rc="4, 2")
         + ", kWidth = 1}>>")
B_OP = ("tensor<32x32xf16, #ttg.dot_op<{opIdx = 1, parent = " + _DPAS.format(rc="4, 2")
        + ", kWidth = 2}>>")
BLOCKED = ("tensor<64x128xf16, #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [16, 1], "
           "warpsPerCTA = [4, 1], order = [1, 0]}>>")


def _pow2(v: int) -> int:
    p = 1
    while p < v:
        p *= 2
    return p


def _lane_bytes(ld: dict) -> dict:
    """(lane, element index in the lane) -> absolute byte, for 16-bit plain and VNNI loads."""
    assert ld["elem_bytes"] == 2 and not ld["transpose"], ld
    s = ld["surface"]
    w, h, a = ld["width"], ld["height"], ld["array_length"]
    wp = _pow2(w)
    out = {}
    for b in range(a):
        if ld["vnni"]:
            block = -(-((h + 1) // 2 * wp * 4) // 64) * 64
        else:
            block = -(-(h * wp * 2) // 64) * 64
        for r in range(h):
            for c in range(w):
                if ld["vnni"]:
                    dst = ((r // 2) * wp + c) * 4 + (r % 2) * 2
                    unit_bytes = 4
                else:
                    dst = (r * wp + c) * 2
                    unit_bytes = 2
                dst += b * block
                unit = dst // unit_bytes
                lane = unit % 16
                local = (unit // 16) * unit_bytes + dst % unit_bytes
                byte = s["base"] + (ld["y"] + r) * s["pitch"] + (ld["x"] + b * w + c) * 2
                out[(lane, local // 2)] = byte
    return out


def _expected_bytes(plan, layout_text: str, first_byte: int, pitch: int) -> dict:
    """(register, lane) -> the byte the operand's element there sits at (layout enumerated)."""
    from verilayout.frontends.shared_text import operand, tensor_layout
    if plan.op_idx is None:
        lay = tensor_layout(layout_text).layout
    else:
        lay = operand(layout_text).layout
    out = {}
    for r in range(lay.in_dims["register"]):
        for lane in range(16):
            c = lay.apply({"register": r, "lane": lane, **{d: 0 for d in lay.in_dim_names
                                                          if d not in ("register", "lane")}})
            row, col = (c["dim1"], c["dim0"]) if plan.transpose else (c["dim0"], c["dim1"])
            out[(r, lane)] = first_byte + row * pitch + col * 2
    return out


def _delivered(plan) -> dict:
    d = plan.to_dict()
    per_load = [_lane_bytes(ld) for ld in d["loads"]]
    out = {}
    for r, row in enumerate(plan.shuffle):
        for lane, (i, k) in enumerate(row):
            out[(r, lane)] = per_load[i].get((lane, k))
    return out


@pytest.mark.parametrize("address", [0x480 + k for k in range(0, 64, 2)] + [0, 0x4A2, 0x1FFE])
@pytest.mark.parametrize("elem_bytes", [1, 2, 4])
def test_placement_is_the_aligned_base_and_the_element_offset(address, elem_bytes):
    if address % elem_bytes:
        with pytest.raises(LayoutError, match="multiple of the element size"):
            placement(address, elem_bytes)
        return
    base, (x0, y0) = placement(address, elem_bytes)
    assert base % 64 == 0 and base <= address < base + 64
    assert (x0, y0) == ((address - base) // elem_bytes, 0)
    assert base + x0 * elem_bytes == address


@pytest.mark.parametrize("layout", [A_SMALL, A_BIG, B_OP], ids=["A8x16", "A32x32", "B32x32"])
@pytest.mark.parametrize("address", [0x480, 0x4A0, 0x4B8, 0x4BC, 0x4A4])
def test_a_plan_from_the_first_byte_reads_exactly_the_operands_bytes(layout, address):
    p = plan_operand(layout, base_address=address)
    s = p.loads[0].surface
    assert s.base == address & ~63 and p.origin == ((address % 64) // 2, 0)
    assert p.verdict.status == "proved"
    want = _expected_bytes(p, layout, address, s.pitch)
    got = _delivered(p)
    assert got == want
    assert check_operand_plan(p, layout).proved


@pytest.mark.parametrize("origin", [(32, 0), (16, 3), (2, 1)])
def test_a_plan_at_an_origin_reads_exactly_the_operands_bytes(origin):
    p = plan_operand(A_BIG, origin=origin)
    s = p.loads[0].surface
    first = s.base + origin[1] * s.pitch + origin[0] * 2
    assert _delivered(p) == _expected_bytes(p, A_BIG, first, s.pitch)
    assert p.verdict.proved and check_operand_plan(p, A_BIG).proved


def test_a_tensor_plan_at_an_origin_reads_exactly_the_tensors_bytes():
    # the blocked tensor stored transposed: plain 16-bit loads (the byte model above applies)
    p = plan_operand(BLOCKED, transpose=True, base_address=0x4A0)
    assert all(not ld.vnni and not ld.transpose and ld.elem_bytes == 2 for ld in p.loads)
    s = p.loads[0].surface
    assert (s.base, p.origin) == (0x480, (16, 0))
    assert _delivered(p) == _expected_bytes(p, BLOCKED, 0x4A0, s.pitch)
    assert check_operand_plan(p, BLOCKED, warps="all").proved


@pytest.mark.parametrize("dx,dy", [(1, 0), (2, 0), (0, 1), (-2, 0)])
def test_an_off_by_one_origin_names_the_load_and_the_byte(dx, dy):
    p = plan_operand(A_BIG, base_address=0x4A0)
    x0, y0 = p.origin
    truth = (x0 + dx, y0 + dy)
    v = check_operand_plan(p, A_BIG, origin=truth)
    assert v.status == "counterexample"
    cex = v.counterexample
    assert {"load", "byte", "read_byte", "register", "lane"} <= set(cex)
    s = p.loads[0].surface
    row, col = cex["element"] if "element" in cex else cex["expected"]
    assert cex["byte"] == s.base + (truth[1] + row) * s.pitch + (truth[0] + col) * 2
    assert cex["byte"] != cex["read_byte"]
    # what the named load gives there, by the byte model
    k = p.shuffle[cex["register"]][cex["lane"]][1]
    assert cex["read_byte"] == _lane_bytes(p.to_dict()["loads"][cex["load"]])[(cex["lane"], k)]


def test_a_surface_at_another_aligned_base_is_a_byte_mismatch():
    p = plan_operand(A_SMALL, base_address=0x4A0)
    s = p.loads[0].surface
    other = Surface(s.width, s.height, s.pitch, s.base + 64)
    v = check_operand_plan(p, A_SMALL, surface=other)
    assert v.status == "counterexample"
    # load 0 reads its surface's element (0, 16) first: byte 0x480 + 32
    assert (v.counterexample["load"], v.counterexample["byte"]) == (0, 0x480 + 32)


def test_needed_placed_shifts_coordinates_and_maps_back():
    from verilayout.frontends.shared_text import operand
    lay = operand(A_SMALL).layout
    n = Needed.from_layout(lay)
    m = n.placed(16, 2)
    assert (m.coords - n.coords).reshape(-1, 2).tolist() == [[2, 16]] * (n.coords.size // 2)
    assert m.shape == (n.shape[0] + 2, n.shape[1] + 16)
    assert all(m.operand(*m.coords[r, l]) == n.operand(*n.coords[r, l])
               for r in range(n.registers) for l in range(n.lanes))


def test_cli_plan_and_check_with_base_address(tmp_path, capsys):
    assert main(["blockload", "plan", "--layout", A_SMALL, "--base-address", "0x4a0",
                 "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["origin"] == [16, 0] and d["loads"][0]["surface"]["base"] == 0x480
    assert d["loads"][0]["x"] == 16
    f = tmp_path / "p.json"
    f.write_text(json.dumps(d))
    assert main(["blockload", "check", "--plan", str(f), "--layout", A_SMALL]) == 0
    capsys.readouterr()
    assert main(["blockload", "check", "--plan", str(f), "--layout", A_SMALL,
                 "--base-address", "0x4a2", "--json"]) == 1
    cex = json.loads(capsys.readouterr().out)["counterexample"]
    assert cex["byte"] == 0x4A2 and cex["read_byte"] == 0x4A0 and cex["load"] == 0
    assert main(["blockload", "check", "--plan", str(f), "--layout", A_SMALL,
                 "--origin", "16,1"]) == 1
    capsys.readouterr()
    # --origin alone is relative to the plan's surface base (0x480): x = 16 is byte 0x4A0 again
    assert main(["blockload", "check", "--plan", str(f), "--layout", A_SMALL,
                 "--origin", "16,0"]) == 0


@pytest.mark.parametrize("argv,msg", [
    (["--base-address", "0x4a1"], "multiple of the element size"),
    (["--origin", "1"], "--origin"),
    (["--origin=-1,0"], "--origin"),
    (["--origin", "a,b"], "--origin"),
])
def test_cli_bad_placement_is_exit_2(capsys, argv, msg):
    assert main(["blockload", "plan", "--layout", A_SMALL, *argv]) == 2
    err = capsys.readouterr().err
    assert msg in err and "Traceback" not in err


def test_spec_example_passes():
    assert main(["check", "specs/blockload_placed.toml"]) == 0
