#!/usr/bin/env python3
"""Compare a probe run (hwtests/run.sh) with verilayout's models; print the agreement per rule.

    PYTHONPATH=. python hwtests/compare.py hwtests/results/h100-2026-11-26

Exit 0 when every measured case agrees with the model, 1 when some do not (each named), 2 when a file is
missing. The recorded runs are asserted on every CI run by tests/test_hw_ground_truth.py; this script is
for a new run on another GPU or driver, before its files are added to hwtests/results.
"""
from __future__ import annotations

import gzip
import json
import pathlib
import sys

import numpy as np


def _lines(path: pathlib.Path) -> list[dict]:
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def wgmma_disagreements(path: pathlib.Path) -> tuple[int, list[str]]:
    """(cases compared, names of those whose addresses differ from the descriptor address model)."""
    from verilayout.hw.nvidia.descriptor import decode, hardware_address_function
    cases = [d for d in _lines(path) if "addr" in d]
    bad = []
    for d in cases:
        fn = hardware_address_function(decode(int(d["desc"], 16), "sm_90"), major="MN" if d["tnspA"] else "K",
                                       dtype="f16", mn_extent=64)
        if not np.array_equal(fn.table() // 8, np.array(d["addr"])):
            bad.append(d["name"])
    return len(cases), bad


def tma_disagreements(path: pathlib.Path, arch: str) -> tuple[int, list[str]]:
    """(cases compared, names where the hardware and limit_findings / write_table disagree)."""
    from verilayout.hw.nvidia.tma import TensorMap, limit_findings, write_table
    bad, n = [], 0
    for d in (d for d in _lines(path) if "index" in d):
        err = d.get("error", "")
        if err.startswith(("skipped", "timeout")) or ("off" not in d and not d.get("encode")
                                                       and "IllegalInstruction" not in err):
            continue
        n += 1
        t = TensorMap(d["dtype"], global_dims=tuple(d["global_dims"]), global_strides=(d["global_stride"],),
                      box=tuple(d["box"]), element_strides=tuple(d["elem_strides"]), swizzle=d["swizzle"])
        rules = [f.rule for f in limit_findings(t, arch=arch, start=tuple(d["coord"]))]
        if "off" in d and not err:
            ok = not rules and (write_table(t, d["dst"]) - d["dst"]).reshape(-1).tolist() == d["off"]
        else:
            ok = bool(rules)
        if not ok:
            bad.append(f"{d['name']} (hardware: {err or 'placed'}; model: {rules or 'placed elsewhere'})")
    return n, bad


def main(prefix: str, arch: str = "sm_90") -> int:
    paths = {k: pathlib.Path(f"{prefix}-{k}.jsonl.gz") for k in ("wgprobe", "tma")}
    if not any(p.exists() for p in paths.values()):
        print(f"no {prefix}-wgprobe.jsonl.gz or {prefix}-tma.jsonl.gz", file=sys.stderr)
        return 2
    worst = 0
    for kind, fn in (("wgprobe", wgmma_disagreements), ("tma", lambda p: tma_disagreements(p, arch))):
        if paths[kind].exists():
            n, bad = fn(paths[kind])
            print(f"{kind}: {n - len(bad)} of {n} cases agree with the model")
            for b in bad:
                print(f"  differs: {b}")
            worst = max(worst, 1 if bad else 0)
    return worst


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: compare.py RESULTS_PREFIX [ARCH]", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:3]))
