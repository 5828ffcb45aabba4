"""The harvester's quick-sweep options (``--targets``, ``--max-configs``), read by ``tests/harvest/worker.py``
from the environment its parent sets: the configurations a kernel gets and the targets it is compiled for.

Oracle: the rule of ``tests/harvest/README.md`` written out here (up to three launch sites, else the
defaults plus a warps/stages variant; each compiled for cuda:90, cuda:80, cuda:100 in that order), and
its limits under the options (one configuration and no added variant; only the named targets).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("triton")

HARVEST = Path(__file__).parent / "harvest"

_PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import worker
spec = {"signature": {"X": "*bf16", "BLOCK": "constexpr"}, "name_defaults": {"BLOCK": 64}, "defaults": {},
        "launches": [{"BLOCK": 128}, {"BLOCK": 256, "num_warps": 8}, {"BLOCK": 32}, {"BLOCK": 16}]}
none = dict(spec, launches=[])
print(json.dumps({"sites": [r["config"] for r in worker.plan(spec, [], [])],
                  "defaults": [r["config"] for r in worker.plan(none, [], [])],
                  "targets": worker._TARGETS}))
"""


def _probe(**env: str) -> dict:
    full = {k: v for k, v in os.environ.items() if not k.startswith("VL_HARVEST_")} | env
    out = subprocess.run([sys.executable, "-c", _PROBE, str(HARVEST)], env=full, capture_output=True, text=True,
                         timeout=300, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_defaults_are_the_documented_sweep():
    got = _probe()
    assert got["sites"] == ["ls0_w4_s3", "ls1_w8_s3", "ls2_w4_s3"]          # the first three launch sites
    assert got["defaults"] == ["d0_w4_s3", "d1_w8_s2"]                      # defaults and a variant
    assert got["targets"] == ["cuda90", "cuda80", "cuda100"]


def test_quick_sweep_limits_configurations_and_targets():
    got = _probe(VL_HARVEST_MAX_CONFIGS="1", VL_HARVEST_TARGETS="cuda100,cuda80")
    assert got["sites"] == ["ls0_w4_s3"]
    assert got["defaults"] == ["d0_w4_s3"]                                  # no added variant at one
    assert got["targets"] == ["cuda80", "cuda100"]                          # the worker's order kept
