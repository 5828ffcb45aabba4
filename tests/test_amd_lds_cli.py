"""``verilayout banks --target gfx942|gfx950`` and the SVG caption (issue 11).

Expected figures are derived in the comments from the phase tables (AMDGPU optimization guide,
Triton PR #11365), not read from the code's output.
"""
from __future__ import annotations

import json

from verilayout.cli.banks import svg_title
from verilayout.cli.main import main

ROWS = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [64, 1], warpsPerCTA = [1, 1], order = [1, 0]}>"
PLAIN = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"


def _run(capsys, *args):
    rc = main(["banks", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_target_gfx942_row_reads(capsys):
    # 64x64 f32, lane i reads row i's first 4 elements (ds_read_b128 at 256*i): in a gfx942 phase
    # the 8 lanes sit 256 bytes apart -> banks 0-3 for all 8 -> 8 ways per phase, 8 phases -> 64
    rc, out, _ = _run(capsys, "--target", "gfx942", "-t", "tensor<64x64xf32>", "--reg", ROWS, "--smem", PLAIN,
                      "--json")
    d = json.loads(out)
    assert rc == 1
    assert (d["instruction"], d["num_banks"], d["phases"], d["conflict_ways"], d["wavefronts"]) == \
        ("ds_read_b128", 32, 8, 8, 64)
    # gfx950: 4 phases of 16 lanes, 64 banks: 256*i -> banks 0-3 for every lane -> 16 ways, 64 cycles
    rc, out, _ = _run(capsys, "--target", "gfx950", "-t", "tensor<64x64xf32>", "--reg", ROWS, "--smem", PLAIN,
                      "--json")
    d = json.loads(out)
    assert (rc, d["num_banks"], d["phases"], d["conflict_ways"], d["wavefronts"]) == (1, 64, 4, 16, 64)


def test_target_rejects_nvidia_instructions_and_32_lane_layouts(capsys):
    rc, _, err = _run(capsys, "--target", "gfx942", "-t", "tensor<64x64xf32>", "--reg", ROWS, "--smem", PLAIN,
                      "--instr", "ldmatrix.x4")
    assert rc == 2 and err.startswith("error:")
    reg32 = ROWS.replace("[64, 1]", "[32, 1]")
    rc, _, err = _run(capsys, "--target", "gfx950", "-t", "tensor<64x64xf32>", "--reg", reg32, "--smem", PLAIN)
    assert rc == 2 and "64 lanes" in err


def test_default_target_is_unchanged(capsys):
    reg = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [32, 1], warpsPerCTA = [1, 1], order = [1, 0]}>"
    rc, out, _ = _run(capsys, "-t", "tensor<32x64xf32>", "--reg", reg, "--smem", PLAIN, "--json")
    assert json.loads(out)["instruction"] == "ld.shared.v4.b32"


def test_svg_caption_says_unknown_not_none():
    assert "None" not in svg_title(None, None, 4)
    assert svg_title(None, None, 4).startswith("unknown wavefronts")
    assert svg_title(True, 1, 1) == "conflict-free"
