"""wgmma operands that are sub-tiles of larger shared buffers (``ttg.memdesc_subslice`` along M, N or K),
audited like whole tiles: the descriptors are the buffer's at the sub-tile's block, and operands that
read one buffer must place it at one base.

The fixtures (``tests/fixtures/ptx/subtile_*``, made by ``gluon_subtiles.py`` beside them) are Triton's
own output for correct kernels. Expected values are derived here from the layout's definition: a
128-byte-swizzled f16 ``nvmma_shared`` buffer is stored as column blocks of 64 elements (128 bytes a
row), each ``rows x 128`` bytes, rows in order inside a block (8-row swizzle atoms of 1024 bytes).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.audited import audit_pair
from verilayout.audit import audit_paths

FIX = Path(__file__).resolve().parent / "fixtures" / "ptx"

#: fixture -> operand -> (MN block, K-block) of its buffer where the sub-tile starts, and the byte
#: offset of that block in the buffer: derived from the offsets in the kernel (gluon_subtiles.py)
EXPECTED = {
    # A = rows 64..127, K 0..63 of a 128x128 buffer: MN block 1 of 64 rows, row 64 at 64 * 128 bytes
    # B = K rows 0..63, N columns 64..127: MN block 1 of 64 columns, column block 1 at 128 * 128 bytes
    "subtile_m64_sm90": {"A": ((1, 0), 64 * 128), "B": ((1, 0), 128 * 128)},
    # A = K columns 64..127: K-block 64 / 16 = 4, column block 1 at 128 rows * 128 bytes
    # B = K rows 64..127 of the first 64 columns: K-block 4, row 64 of column block 0 at 64 * 128 bytes
    "subtile_k64_sm90": {"A": ((0, 4), 128 * 128), "B": ((0, 4), 64 * 128)},
}


def _report(name: str):
    return {Path(f.path).suffix: f for f in audit_paths([str(FIX / f"{name}.ttgir"), str(FIX / f"{name}.ptx")],
                                                        cache_dir=None).files}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sub_tile_operands_are_proved_at_their_block_of_the_buffer(name):
    rep = _report(name)
    mma = {c.data["operand"]: c for c in rep[".ttgir"].checks if c.check == "mma-descriptor"}
    assert set(mma) == {"A", "B"}
    for operand, ((mb, kb), byte) in EXPECTED[name].items():
        c = mma[operand]
        assert c.status == "proved", c.message
        assert (c.data["sub_tile"]["mn_block"], c.data["sub_tile"]["k_block"]) == (mb, kb)
        first = next(d for d in c.data["descriptors"] if (d["mn_block"], d["k_block"]) == (0, 0))
        assert int(first["descriptor"], 16) & 0x3FFF == byte >> 4       # start address, 16-byte units
    ptx = [c for c in rep[".ptx"].checks if c.check == "mma-descriptor"]
    assert ptx and {c.status for c in ptx} == {"proved"}, [c.message for c in ptx if c.status != "proved"]


def test_split_k_sub_tiles_of_one_buffer_are_proved_at_one_base():
    rep = _report("subtile_splitk_sm90")
    assert {c.status for f in rep.values() for c in f.checks} == {"proved"}
    same = [c for c in rep[".ptx"].checks if c.check == "operand-buffers" and "buffer" in c.data]
    assert {c.data["operand"] for c in same} == {"A", "B"} and all(c.data["distance_bytes"] == 0 for c in same)


def test_a_sub_tile_one_swizzle_atom_off_is_an_error_at_its_wgmma():
    # the second MMA's A sub-tile (K columns 64..127, column block 1 at 64 rows * 128 bytes = 8192) is
    # moved one 1024-byte swizzle atom in the PTX
    ttgir = (FIX / "subtile_splitk_sm90.ttgir").read_text()
    ptx = (FIX / "subtile_splitk_sm90.ptx").read_text()
    first_mma = ptx.index("wgmma.mma_async")
    m = re.search(r"add\.s32\s+%r\d+, %r\d+, 8192;", ptx[first_mma:])
    assert m is not None
    at = first_mma + m.start()
    mutant = ptx[:at] + ptx[at:].replace(", 8192;", ", 9216;", 1)
    checks = audit_pair(ttgir, mutant, "mutant").checks
    bad = [c for c in checks if c.severity == "error"]
    assert bad and {c.check for c in bad} == {"operand-buffers"}
    assert {c.data["operand"] for c in bad} == {"A"}
    # one atom from the other sub-tile of its buffer (and, moved, it now overlaps B's buffer too)
    assert [c.data["distance_bytes"] for c in bad if "buffer" in c.data] == [-1024]
    assert all("wgmma.mma_async" in mutant.splitlines()[c.line - 1] for c in bad)


def test_a_sub_tile_whose_plan_offset_is_another_block_is_an_error():
    # the TTGIR says the second MMA reads K columns 0..63 of A again, the PTX reads 64..127
    ttgir = (FIX / "subtile_splitk_sm90.ttgir").read_text()
    subs = re.findall(r"ttg\.memdesc_subslice (%a_s\w*)\[0, 64\]", ttgir)
    assert len(subs) == 1
    mutant = ttgir.replace(f"ttg.memdesc_subslice {subs[0]}[0, 64]", f"ttg.memdesc_subslice {subs[0]}[0, 0]")
    ptx = (FIX / "subtile_splitk_sm90.ptx").read_text()
    checks = audit_pair(mutant, ptx, "mutant").checks
    bad = [c for c in checks if c.severity == "error"]
    assert {(c.check, c.data["operand"], abs(c.data["distance_bytes"])) for c in bad} == {("operand-buffers", "A", 8192)}


def test_tcgen05_split_k_sub_tiles_are_proved_at_one_base():
    # the sm_100 form: A = K columns 0..63 and 64..127 of a 128x128 buffer (column block 1 at 128 rows
    # * 128 bytes), B = K rows 0..63 and 64..127 of a 128x64 buffer (row 64 at 64 * 128 bytes)
    rep = _report("subtile_splitk_sm100")
    assert {c.status for f in rep.values() for c in f.checks} == {"proved"}
    mma = [c for c in rep[".ttgir"].checks if c.check == "mma-descriptor"]
    starts = sorted((c.data["operand"], c.data["sub_tile"]["k_block"],
                     int(next(d for d in c.data["descriptors"] if d["k_block"] == 0)["descriptor"], 16) & 0x3FFF)
                    for c in mma)
    assert starts == [("A", 0, 0), ("A", 4, 128 * 128 >> 4), ("B", 0, 0), ("B", 4, 64 * 128 >> 4)]
    same = [c for c in rep[".ptx"].checks if c.check == "operand-buffers" and "buffer" in c.data]
    assert {(c.op, c.data["operand"], c.data["distance_bytes"]) for c in same} == \
        {("tcgen05.mma", "A", 0), ("tcgen05.mma", "B", 0)}


# ----- several shared-memory ops on one source line, tied by what the addresses say -------------------
# dot_scaled_e2m1_e4m3_sm100 (tests/fixtures/ptx/README.md): on one Python line a local_alloc writes a
# 128x128 e4m3 buffer with st.shared and, in the same barrier epoch, two convert_layouts of the scale
# factors write their scratch with stmatrix (read back after the barrier by ld.shared). Only the
# stmatrix bytes are what the scratch loads read; the local_alloc's stores are its own.

DOT_SCALED = FIX / "dot_scaled_e2m1_e4m3_sm100"


def _smem(ptx: str | None = None):
    ttgir = DOT_SCALED.with_suffix(".ttgir").read_text()
    ptx = DOT_SCALED.with_suffix(".ptx").read_text() if ptx is None else ptx
    return [c for c in audit_pair(ttgir, ptx, "k").checks
            if c.check == "smem-address"]


def test_a_local_alloc_and_two_conversions_on_one_line_are_each_proved():
    checks = _smem()
    assert {c.status for c in checks} == {"proved"}, [(c.line, c.message) for c in checks if c.status != "proved"]
    owners = {c.data.get("ttgir_line") for c in checks}
    ttgir = DOT_SCALED.with_suffix(".ttgir").read_text().splitlines()
    for line in owners - {None}:
        assert any(op in ttgir[line - 1] for op in ("ttg.local_alloc", "ttg.convert_layout"))
    convs = [n + 1 for n, ln in enumerate(ttgir) if "ttg.convert_layout" in ln and "128x4xi8" in ln]
    assert len(convs) == 2 and set(convs) <= owners          # each conversion got its own round


def test_a_conversion_store_moved_16_bytes_is_an_error_at_its_line():
    ptx = DOT_SCALED.with_suffix(".ptx").read_text()
    lines = ptx.splitlines()
    i = next(n for n, ln in enumerate(lines) if ln.strip().startswith("stmatrix") and "+32768]" in ln)
    lines[i] = lines[i].replace("+32768]", "+32784]")
    load = next(n for n in range(i, len(lines)) if lines[n].strip().startswith("ld.shared") and "+32768]" in lines[n])
    bad = [c for c in _smem("\n".join(lines) + "\n") if c.severity == "error"]
    # the moved store is an error at its line (its round's load, a constant apart, is as much to blame)
    assert any(c.line == i + 1 and "ttg.convert_layout" in c.message for c in bad), [(c.line, c.message) for c in bad]
    assert {c.line for c in bad} <= {i + 1, load + 1}
