"""``verilayout audit --timeout`` / ``audit_paths(timeout=)``: each file's audit bounded in wall time.

What is asserted comes from the option's contract, not from the code's output: a file past its
limit has one ``time-limit`` check, ``unknown``, with the reason "audit time limit of N s reached";
the run goes on with the next file; the exit code is 1 (0 with ``--fail-on never``), bad values
exit 2 with one line; a limit no file reaches changes nothing (the report without a limit, in
this process, is the reference); the killed audit's process is gone.

The slow file is a real corpus kernel (an sm_90 attention forward whose PTX audit takes over a
second: 49 checks); its limit here is 0.05 s.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from verilayout.audit.paths import audit_paths
from verilayout.errors import LayoutError

ROOT = Path(__file__).resolve().parent.parent
SLOW = str(ROOT / "tests" / "corpus" / "cuda90" / "attention_fwd_d128_128x64_w8_s2.ptx")
SMALL = str(ROOT / "examples" / "w4a16.ttgir")
REASON = "audit time limit of 0.05 s reached"


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "verilayout.cli", "audit", "--no-cache", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


def _children() -> set[int]:
    """The process ids whose parent is this process (Linux /proc)."""
    me, out = os.getpid(), set()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == me:
                out.add(int(d))
    return out


def test_a_file_past_its_limit_is_unknown_with_the_reason_and_the_next_file_is_audited():
    before = _children() if os.path.isdir("/proc") else set()
    rep = audit_paths([SLOW, SMALL], timeout=0.05)
    slow, small = rep.files
    assert slow.path == SLOW and small.path == SMALL
    (c,) = slow.checks
    assert (c.check, c.status, c.severity) == ("time-limit", "unknown", "error")
    assert c.message.startswith(REASON) and c.data["reason"] == REASON
    # the next file is audited as without a limit (if it too ran past 0.05 s, it says so)
    small_limited = small.checks[0].check == "time-limit"
    if not small_limited:
        assert small == audit_paths([SMALL]).files[0]
    assert rep.summary()["time_limited"] == 1 + small_limited and rep.summary()["unknown"] >= 1
    if os.path.isdir("/proc"):
        assert _children() <= before          # the killed audit's process is reaped, not running


def test_a_limit_no_file_reaches_changes_nothing():
    want = audit_paths([SMALL]).files
    assert audit_paths([SMALL], timeout=300).files == want
    assert audit_paths([SMALL, SMALL], jobs=2, timeout=300).files == want * 2
    assert audit_paths([SMALL]).summary()["time_limited"] == 0


def test_parallel_audit_keeps_order_and_limits_each_file():
    rep = audit_paths([SLOW, SLOW], jobs=2, timeout=0.05)
    assert [f.path for f in rep.files] == [SLOW, SLOW]
    assert all(f.checks[0].data["reason"] == REASON for f in rep.files)


def test_a_time_limited_result_is_not_cached(tmp_path):
    # the slow file: a small one can be audited whole by the forked worker while a loaded machine
    # holds the parent between handing out the task and looking for its answer (a complete answer
    # found is taken, whatever the limit)
    rep = audit_paths([SLOW], cache_dir=str(tmp_path), timeout=0.05)
    assert rep.files[0].checks[0].check == "time-limit"
    assert audit_paths([SLOW], cache_dir=str(tmp_path)).files == audit_paths([SLOW]).files


@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan"), "5", True])
def test_a_bad_timeout_is_one_line(bad):
    with pytest.raises(LayoutError, match="expected a positive number of seconds"):
        audit_paths([SMALL], timeout=bad)


def test_cli_exit_code_summary_and_json():
    p = _cli(SLOW, "--timeout", "0.05")
    assert p.returncode == 1, p.stderr
    assert "Traceback" not in p.stderr + p.stdout
    assert REASON in p.stdout
    assert p.stdout.strip().splitlines()[-1].endswith(
        "1 file(s) past the audit time limit of 0.05 s: their checks are unknown")
    assert _cli(SLOW, "--timeout", "0.05", "--fail-on", "never").returncode == 0
    j = json.loads(_cli(SLOW, "--timeout", "0.05", "--json").stdout)
    assert j["summary"]["time_limited"] == 1 and j["summary"]["unknown"] == 1
    assert j["files"][0]["checks"][0]["data"]["reason"] == REASON


@pytest.mark.parametrize("value", ["0", "-3", "abc", "inf"])
def test_cli_bad_timeout_exits_2_with_one_line(value):
    p = _cli(SMALL, "--timeout", value)
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "--timeout" in p.stderr and "Traceback" not in p.stderr
