#!/usr/bin/env python3
"""Write the probes' case files from a recorded run, so that a rerun measures the same cases.

    python3 hwtests/cases_from_results.py [RESULTS_PREFIX]   (default hwtests/results/h100-2026-11-26)

writes hwtests/cases/wgmma_cases.txt ("name desc_hex tnspA") and hwtests/cases/tma_cases.txt
("name dtype swizzle box0 box1 dst_offset x y es1"). Standard library only.
"""
from __future__ import annotations

import gzip
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent


def lines(path: pathlib.Path):
    with gzip.open(path, "rt") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def main(prefix: str) -> None:
    wg = [d for d in lines(pathlib.Path(prefix + "-wgprobe.jsonl.gz")) if "index" in d]
    tma = [d for d in lines(pathlib.Path(prefix + "-tma.jsonl.gz")) if "index" in d]
    out = HERE / "cases"
    out.mkdir(exist_ok=True)
    with open(out / "wgmma_cases.txt", "w") as f:
        f.write(f"# {len(wg)} wgmma A-operand descriptors (from {pathlib.Path(prefix).name}): name desc_hex tnspA\n")
        for d in sorted(wg, key=lambda d: d["index"]):
            f.write(f"{d['name']} {d['desc']} {d['tnspA']}\n")
    with open(out / "tma_cases.txt", "w") as f:
        f.write(f"# {len(tma)} TMA loads (from {pathlib.Path(prefix).name}): "
                "name dtype swizzle box0 box1 dst_offset x y es1\n")
        for d in sorted(tma, key=lambda d: d["index"]):
            f.write(f"{d['name']} {d['dtype']} {d['swizzle']} {d['box'][0]} {d['box'][1]} {d['base']:#x} "
                    f"{d['coord'][0]} {d['coord'][1]} {d['elem_strides'][1]}\n")
    print(f"wrote {len(wg)} + {len(tma)} cases to {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(HERE / "results" / "h100-2026-11-26"))
