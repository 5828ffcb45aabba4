"""The proved table: wgmma swizzle mode x element width x access pattern -> conflict-free or witness.

For each wgmma swizzle mode (none, 32B, 64B, 128B; K-major, i.e. Triton's
``#ttg.nvmma_shared`` with ``transposed = false``) and element width (8, 16, 32 bits),
the tile is 64 rows of 128 bytes, and one warp accesses it with three common
patterns:

* **16-byte row stores** (producer): ``st.shared.v4.b32``; lane ``t`` stores the
  16-byte chunk ``t % 8`` of row ``t // 8`` (8 lanes cover a 128-byte row), the
  next registers go to the next rows.
* **16-byte atom-row stores** (producer): the same, but along the rows of the
  swizzle atom: ``W/16`` lanes per row of ``W`` bytes (``W`` = swizzle width, 128
  for none), as a producer that writes atom by atom does.
* **ldmatrix reads** (consumer): ``ldmatrix.x4``; the mma A-operand fragment: a
  32-bit word per thread per matrix, threads ``4r..4r+3`` read row ``r`` of an 8x8
  (16-bit) matrix, matrices 1 and 3 are 8 rows lower, matrices 2 and 3 16 bytes to
  the right (PTX ISA, ldmatrix fragment figure).
* **column reads**: ``ld.shared`` of one element per lane, lane ``t`` reads row
  ``t`` of a column.

Each cell is the GF(2) proof of :func:`verilayout.banks.check_banks`: "conflict-free"
(wavefronts = ideal, proved), or the wavefront count with a witness: two lanes of
one phase, their elements (row, column) and byte addresses, and the shared bank.

>>> rows = swizzle_table()
>>> [(r.mode, r.elem_bits, r.reports["ldmatrix reads"].conflict_free) for r in rows][:2]
[('none', 8, False), ('none', 16, False)]
"""
from __future__ import annotations

from dataclasses import dataclass
import sys
from pathlib import Path

from verilayout.frontends.names import parse_instruction
from verilayout.prove.banks import BankReport, check_banks
from verilayout.bits import log2 as _log2
from verilayout.core.linear_layout import LinearLayout
from verilayout.synth.swizzle import nvmma_shared_layout

MODES = ((0, "none"), (32, "32B"), (64, "64B"), (128, "128B"))
WIDTHS = (8, 16, 32)
PATTERNS = ("16-byte row stores", "16-byte atom-row stores", "ldmatrix reads", "column reads")
ROWS = 64


def _shape(elem_bits: int) -> tuple[int, int]:
    return ROWS, 128 * 8 // elem_bits


def row_store_layout(elem_bits: int) -> LinearLayout:
    """Lane ``t`` holds the 16 bytes ``(t % 8) * 16 ..`` of row ``t // 8``; registers: 16 bytes, then rows."""
    rows, cols = _shape(elem_bits)
    per = 16 * 8 // elem_bits
    reg = [[0, 1 << b] for b in range(_log2(per))] + [[1 << b, 0] for b in range(2, _log2(rows))]
    lane = [[0, per << b] for b in range(3)] + [[1, 0], [2, 0]]
    return LinearLayout({"register": reg, "lane": lane, "warp": []}, {"dim0": rows, "dim1": cols},
                        require_surjective=False)


def atom_store_layout(elem_bits: int, swizzle_bytes: int) -> LinearLayout:
    """16-byte stores along the rows of the swizzle atom: ``W/16`` lanes per row (``W`` = 128 for none)."""
    rows, cols = _shape(elem_bits)
    width = swizzle_bytes or 128
    per = 16 * 8 // elem_bits
    chunks = _log2(width // 16)
    reg = [[0, 1 << b] for b in range(_log2(per))]
    lane = [[0, per << b] for b in range(chunks)] + [[1 << b, 0] for b in range(5 - chunks)]
    reg += [[1 << b, 0] for b in range(5 - chunks, _log2(rows))]
    reg += [[0, (per << chunks) << b] for b in range(_log2(cols // (per << chunks)))]
    return LinearLayout({"register": reg, "lane": lane, "warp": []}, {"dim0": rows, "dim1": cols},
                        require_surjective=False)


def ldmatrix_layout(elem_bits: int) -> LinearLayout:
    """The ldmatrix.x4 (A operand) fragment, repeated over the tile by registers."""
    rows, cols = _shape(elem_bits)
    per_word = 32 // elem_bits
    row16 = 128 // elem_bits  # elements in 16 bytes
    reg = [[0, 1 << b] for b in range(_log2(per_word))]          # one 32-bit word
    lane = [[0, per_word], [0, 2 * per_word], [1, 0], [2, 0], [4, 0]]  # 16-byte rows, 8 rows
    reg += [[8, 0], [0, row16]]                                   # matrices 1, 2 (x4)
    reg += [[1 << b, 0] for b in range(4, _log2(rows))]
    reg += [[0, row16 << b] for b in range(1, _log2(cols // row16))]
    return LinearLayout({"register": reg, "lane": lane, "warp": []}, {"dim0": rows, "dim1": cols},
                        require_surjective=False)


def column_layout(elem_bits: int) -> LinearLayout:
    """Lane ``t`` reads row ``t`` of a column; registers: the rows below, then the columns."""
    rows, cols = _shape(elem_bits)
    lane = [[1 << b, 0] for b in range(5)]
    reg = [[1 << b, 0] for b in range(5, _log2(rows))] + [[0, 1 << b] for b in range(_log2(cols))]
    return LinearLayout({"register": reg, "lane": lane, "warp": []}, {"dim0": rows, "dim1": cols},
                        require_surjective=False)


def pattern_access(pattern: str, elem_bits: int, swizzle_bytes: int = 0) -> tuple[LinearLayout, str]:
    """(register layout, instruction) of one access pattern."""
    if pattern == "16-byte row stores":
        return row_store_layout(elem_bits), "st.shared.v4.b32"
    if pattern == "16-byte atom-row stores":
        return atom_store_layout(elem_bits, swizzle_bytes), "st.shared.v4.b32"
    if pattern == "ldmatrix reads":
        return ldmatrix_layout(elem_bits), "ldmatrix.x4"
    if pattern == "column reads":
        return column_layout(elem_bits), f"ld.shared.b{elem_bits}"
    raise ValueError(pattern)


@dataclass(frozen=True)
class TableRow:
    """One wgmma swizzle mode and element width: the report of each pattern."""

    mode: str
    swizzle_bytes: int
    elem_bits: int
    reports: dict

    def to_dict(self) -> dict:
        return {"mode": self.mode, "swizzle_bytes": self.swizzle_bytes, "elem_bits": self.elem_bits,
                "shape": list(_shape(self.elem_bits)),
                "patterns": {k: v.to_dict() for k, v in self.reports.items()}}


def swizzle_table() -> list[TableRow]:
    """Analyse every (mode, width, pattern)."""
    out = []
    for sw, mode in MODES:
        for bits in WIDTHS:
            smem = nvmma_shared_layout(_shape(bits), sw, bits)
            reps = {}
            for pat in PATTERNS:
                reg, instr = pattern_access(pat, bits, sw)
                reps[pat] = check_banks(reg, smem, elem_bits=bits, instruction=parse_instruction(instr))
            out.append(TableRow(mode, sw, bits, reps))
    return out


def _cell(rep: BankReport) -> str:
    if rep.conflict_free:
        return f"conflict-free ({rep.wavefronts}/{rep.ideal_wavefronts})"
    a, b = rep.witness.accesses[0], rep.witness.accesses[1]

    def who(x):
        return f"lane {x.lane} r{x.register} ({x.element['dim0']},{x.element['dim1']}) @{x.byte_address}"

    return (f"**{rep.conflict_ways}-way** ({rep.wavefronts}/{rep.ideal_wavefronts}): {who(a)} vs {who(b)}, "
            f"bank {rep.witness.bank}")


def swizzle_table_markdown(rows: list[TableRow] | None = None) -> str:
    """The table as markdown (what ``docs/swizzle_table.md`` holds)."""
    rows = rows if rows is not None else swizzle_table()
    lines = [
        "# wgmma swizzle modes: which access patterns are bank-conflict-free",
        "",
        "Generated by `python -m verilayout.report.swizzle_table` (also `verilayout swizzle table`).",
        "Shared layout: `#ttg.nvmma_shared` K-major (`transposed = false`) of a tile of 64 rows x 128",
        "bytes; one warp. Each cell is proved in GF(2) by `verilayout.banks.check_banks`: conflict-free",
        "(wavefronts per instruction / ideal), or the conflict with a witness: two lanes of one phase,",
        "their register, element (row, column), byte address, and the bank they share.",
        "Patterns: **16-byte row stores** `st.shared.v4.b32`, lane t stores 16-byte chunk t%8 of row t/8;",
        "**16-byte atom-row stores** the same along the swizzle atom's rows (W/16 lanes per W-byte row);",
        "**ldmatrix reads** `ldmatrix.x4` of the mma A-operand fragment; **column reads** `ld.shared`",
        "of one element per lane, lane t reading row t of a column.",
        "",
        "| swizzle | bits | " + " | ".join(PATTERNS) + " |",
        "|---|---|" + "---|" * len(PATTERNS),
    ]
    for r in rows:
        cells = [_cell(r.reports[p]) for p in PATTERNS]
        lines.append(f"| {r.mode} | {r.elem_bits} | " + " | ".join(cells) + " |")
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:  # pragma: no cover - a script (tested by subprocess)
    """Print the table (Markdown) on standard output, or write it to the file ``argv[0]`` names;
    nothing is written into the installed package. ``verilayout swizzle table`` prints the same.

    ``python -m verilayout.report.swizzle_table > docs/swizzle_table.md`` regenerates the docs.
    """
    argv = sys.argv[1:] if argv is None else argv
    text = swizzle_table_markdown()
    if not argv:
        sys.stdout.write(text)
        return 0
    Path(argv[0]).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
