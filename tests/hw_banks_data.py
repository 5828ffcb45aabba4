"""The H100 shared-memory measurements of ``hwtests/results/h100-2026-11-26-banks_triton36.tar.gz``
read for the tests (``tests/test_hw_banks.py``): the TTGIR/PTX Triton 3.6 wrote for 56 matmuls, what
ncu measured per kernel and per SASS instruction, and the audit's figures for the same files.

The measurement is outside the code under test (ncu on an NVIDIA H100, 2026-11-26, README beside the
tarball); the matching of PTX to SASS follows what that README records: ptxas kept each PTX shared
access as one SASS instruction of the same width, so the PTX accesses of one kind and width are
matched with the SASS instructions of that kind and width in program order.
"""
from __future__ import annotations

import csv
import io
import json
import re
import tarfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "hwtests" / "results"
TARBALL = RESULTS / "h100-2026-11-26-banks_triton36.tar.gz"
LDGSTS = RESULTS / "h100-2026-11-26-ldgsts_microbench.txt"

#: ncu's per-kernel metric -> short name (hwtests/results/...banks.README.md).
METRICS = {
    "smsp__sass_inst_executed_op_shared_st.sum": "st_inst",
    "smsp__sass_inst_executed_op_shared_ld.sum": "ld_inst",
    "smsp__sass_inst_executed_op_ldsm.sum": "ldsm_inst",
    "smsp__inst_executed_op_ldgsts.sum": "ldgsts_inst",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": "st_wf",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": "ld_wf",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": "st_conflicts",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "ld_conflicts",
}

#: SASS opcode head -> the PTX kind it lowers (README: one SASS instruction per PTX access).
SASS_KIND = {"STS": "st", "LDS": "ld", "LDSM": "ldsm", "STSM": "stsm", "LDGSTS": "cp"}


@lru_cache(maxsize=1)
def files() -> dict[str, bytes]:
    """Every member of the tarball by its path (``src/000_....ptx``, ``sass/sass.ncu.csv``)."""
    with tarfile.open(TARBALL) as t:
        return {m.name.lstrip("./"): t.extractfile(m).read() for m in t.getmembers() if m.isfile()}


@lru_cache(maxsize=1)
def kernels() -> dict[int, str]:
    """Kernel index -> its stem (``025_e4m3_BN_128x128x64_w4_s3``)."""
    out = {}
    for name in files():
        m = re.match(r"src/(\d{3})_(.+)\.json$", name)
        if m:
            out[int(m.group(1))] = f"{m.group(1)}_{m.group(2)}"
    return dict(sorted(out.items()))


def config(index: int) -> dict:
    """The probe's configuration of a kernel (tile, warps, stages, dtype)."""
    return json.loads(files()[f"src/{kernels()[index]}.json"])


def text(index: int, ext: str, folder: str = "src") -> str:
    return files()[f"{folder}/{kernels()[index]}.{ext}"].decode()


def _number(s: str) -> float:
    return float(s.replace(",", "")) if s.strip() not in ("", "-") else 0.0


def _csv_rows(data: bytes) -> list[list[str]]:
    lines = [ln for ln in data.decode().splitlines() if not ln.startswith("==")]
    return list(csv.reader(io.StringIO("\n".join(lines))))


@lru_cache(maxsize=1)
def kernel_counters() -> dict[int, dict[str, float]]:
    """ncu's per-kernel counters (``src/kernels.ncu.csv``) by kernel index."""
    rows = _csv_rows(files()["src/kernels.ncu.csv"])
    head = rows[0]
    order = json.loads(files()["src/launch_order.json"])
    out: dict[int, dict[str, float]] = {}
    for r in rows[1:]:
        rec = dict(zip(head, r))
        name = METRICS.get(rec.get("Metric Name", ""))
        if name:
            out.setdefault(order[int(rec["ID"])], {})[name] = _number(rec["Metric Value"])
    return out


@dataclass(frozen=True)
class SassAccess:
    """One SASS shared-memory instruction with what ncu measured for it."""
    sass: str
    kind: str
    width: int
    executed: int
    wavefronts: float
    ideal: float

    @property
    def per_execution(self) -> float:
        return self.wavefronts / self.executed


def _sass_kind(src: str) -> tuple[str, int] | None:
    words = [w for w in src.split() if not w.startswith("@")]
    if not words:
        return None
    parts = words[0].split(".")
    kind = SASS_KIND.get(parts[0])
    if kind is None:
        return None
    if kind == "ldsm" or kind == "stsm":
        return kind, 16
    sizes = {"U8": 1, "S8": 1, "U16": 2, "S16": 2, "64": 8, "128": 16}
    return kind, next((sizes[p] for p in parts[1:] if p in sizes), 4)


@lru_cache(maxsize=1)
def sass_accesses() -> dict[int, list[SassAccess]]:
    """Per SASS-profiled kernel (11), its executed shared-memory instructions in address order."""
    rows = _csv_rows(files()["sass/sass.ncu.csv"])
    order = json.loads(files()["sass/launch_order.json"])
    blocks: list[list[dict]] = []
    head: list[str] = []
    for i, r in enumerate(rows):
        if r and r[0] == "Kernel Name":
            blocks.append([])
            head = rows[i + 1]
        elif blocks and r and r[0].startswith("0x"):
            blocks[-1].append(dict(zip(head, r)))
    out = {}
    for idx, block in zip(order, blocks):
        accs = []
        for rec in block:
            k = _sass_kind(rec["Source"])
            ex = int(_number(rec["Instructions Executed"]))
            # ptxas's never-true filler (``@!PT LDS RZ, [RZ]``) is issued but no lane executes it
            if k is None or ex == 0 or _number(rec["Predicated-On Thread Instructions Executed"]) == 0:
                continue
            accs.append(SassAccess(rec["Source"].strip(), k[0], k[1], ex, _number(rec["L1 Wavefronts Shared"]),
                                   _number(rec["L1 Wavefronts Shared Ideal"])))
        out[idx] = accs
    return out


def ptx_kind(opcode: str) -> str:
    head = opcode.split(".")[0]
    return {"st": "st", "ld": "ld", "ldmatrix": "ldsm", "stmatrix": "stsm", "cp": "cp"}[head]


def loop_lines(ptx: str) -> list[tuple[int, int]]:
    """``(first, last)`` PTX line of each loop: from a label to the last branch back to it."""
    lines = ptx.split("\n")
    labels = {}
    out = []
    for n, ln in enumerate(lines, 1):
        m = re.match(r"^\s*(\$?[\w$]+):", ln)
        if m:
            labels[m.group(1)] = n
        b = re.search(r"\bbra(?:\.uni)?\s+(\$?[\w$]+);", ln)
        if b and b.group(1) in labels:
            out.append((labels[b.group(1)], n))
    return out


def ptx_width(opcode: str, operands: tuple[str, ...]) -> int:
    """Bytes per lane of a PTX shared access, read from its text (PTX ISA): ``ldmatrix``/``stmatrix``
    rows are 16 bytes; ``cp.async`` copies its size operand; ``ld/st`` ``.vN`` times the type's bytes."""
    parts = opcode.split(".")
    if parts[0] in ("ldmatrix", "stmatrix"):
        return 16
    if parts[0] == "cp":
        return int(operands[2], 0)
    vec = next((int(p[1:]) for p in parts if re.fullmatch(r"v\d", p)), 1)
    bits = next(int(p[1:]) for p in reversed(parts) if re.fullmatch(r"[bsuf]\d+", p))
    return vec * bits // 8
