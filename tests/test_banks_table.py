"""The wgmma swizzle table (docs/swizzle_table.md): every cell recounted by brute force.

Sources of truth: brute-force enumeration (tests/reference/banks.py) of each access pattern
against the #ttg.nvmma_shared layouts, whose construction is checked against seed
003_ce87ea73fe8bc8cb.txt (tests/test_banks_synth.py) and the Triton wheel (oracle test); the
well-known facts the table must show: without swizzling, ldmatrix rows 128 bytes apart all hit
one bank (8-way); with the 128-byte swizzle, 16-byte row stores and ldmatrix reads are
conflict-free (seed 003: swizzling exists to avoid these conflicts).
"""
from __future__ import annotations

import sys
from pathlib import Path

from tests.reference.banks import count, phase_lanes_for

from verilayout.report.swizzle_table import PATTERNS, pattern_access, swizzle_table
from verilayout.synth.swizzle import nvmma_shared_layout  # noqa: E402


def _brute(pattern, bits, smem, reg):
    if pattern == "ldmatrix reads":
        word = list(range((32 // bits).bit_length() - 1))
        return count(reg, smem, bits, vector_regs=word, matrix_regs=[len(word), len(word) + 1])
    if pattern == "column reads":
        return count(reg, smem, bits, phase_lanes=32)
    per = (128 // bits).bit_length() - 1
    return count(reg, smem, bits, vector_regs=list(range(per)), phase_lanes=phase_lanes_for(128))


def test_every_cell_matches_brute_force_and_every_witness_checks():
    rows = swizzle_table()
    assert len(rows) == 12
    for r in rows:
        smem = nvmma_shared_layout([64, 1024 // r.elem_bits], r.swizzle_bytes, r.elem_bits)
        inv = smem.invert()
        for pat in PATTERNS:
            rep = r.reports[pat]
            reg, _ = pattern_access(pat, r.elem_bits, r.swizzle_bytes)
            assert rep.wavefronts == _brute(pat, r.elem_bits, smem, reg), (r.mode, r.elem_bits, pat)
            if not rep.conflict_free:
                a, b = rep.witness.accesses[:2]
                for x in (a, b):
                    coords = reg.apply({"register": x.register, "lane": x.lane, "warp": 0})
                    assert coords == x.element and inv.apply(coords)["offset"] == x.offset
                assert a.bank == b.bank and a.word != b.word


def test_table_shows_the_known_facts():
    cells = {(r.mode, r.elem_bits): r.reports for r in swizzle_table()}
    for bits in (8, 16, 32):
        assert cells[("none", bits)]["ldmatrix reads"].conflict_ways == 8
        assert cells[("128B", bits)]["ldmatrix reads"].conflict_free
        assert cells[("128B", bits)]["16-byte row stores"].conflict_free
        for mode in ("32B", "64B", "128B"):
            assert cells[(mode, bits)]["16-byte atom-row stores"].conflict_free
