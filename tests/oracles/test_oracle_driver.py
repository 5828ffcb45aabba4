"""The Triton oracle's crash handling (``triton_oracle.run_oracle``): the worker imports Triton once
and answers in forked children, so a request that aborts its child must still be answered
``aborted`` with its own stderr, the requests after it must still be answered, and a request that
hangs must be answered ``timeout`` without leaving a process behind.

The aborting and sleeping requests are the harness's own test hooks (``_abort`` calls
``os.abort()``, ``_sleep`` sleeps; tests/oracles/README.md), so the expected answers are known
without Triton: SIGABRT is signal 6, which ``subprocess`` reports as return code -6.
"""
from __future__ import annotations

import os
import time

import pytest

from tests.oracles import triton_oracle as oracle

pytestmark = pytest.mark.oracle

PING, ABORT = {"kind": "ping"}, {"kind": "_abort"}


def _ids(n: int) -> list[str]:
    return [f"r{k}" for k in range(n)]


def _run(kinds: list[dict], **kw) -> list[dict]:
    return oracle.run_oracle([dict(k, id=i) for k, i in zip(kinds, _ids(len(kinds)))], **kw)


def test_an_abort_is_answered_and_the_requests_after_it_are_too():
    got = _run([PING, ABORT, PING, ABORT, ABORT, PING])
    assert [a["id"] for a in got] == _ids(6)
    for k in (0, 2, 5):
        assert got[k]["ok"] is True and got[k]["triton_version"].startswith("3.9"), got[k]
    for k in (1, 3, 4):
        assert got[k]["ok"] is False and got[k]["error"] == "aborted" and got[k]["returncode"] == -6, got[k]
        # its own stderr (the hook's line), never the text of another request
        assert got[k]["detail"].count("oracle test hook: calling os.abort()") == 1, got[k]["detail"]
        assert "isolated_retry" not in got[k]


def test_the_isolated_retry_answers_an_abort_as_aborted_once_more():
    # with retry_isolated (the default) the culprit runs again alone: it aborts again, so the
    # answer is still aborted, and the detail is the retry's stderr (one hook line)
    got = _run([ABORT, PING], retry_isolated=True)
    assert got[0]["error"] == "aborted" and got[0]["returncode"] == -6
    assert got[0]["detail"].count("oracle test hook") == 1
    assert got[1]["ok"] is True


def _tagged(tag: str) -> list[int]:
    """The processes whose environment holds ``VL_ORACLE_TEST_TAG=tag``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if f"VL_ORACLE_TEST_TAG={tag}".encode() in f.read().split(b"\0"):
                    found.append(int(pid))
        except OSError:
            continue
    return found


def test_a_hang_is_a_timeout_and_leaves_no_process_behind(monkeypatch):
    tag = f"{os.getpid()}-{time.time_ns()}"
    monkeypatch.setenv("VL_ORACLE_TEST_TAG", tag)  # the worker and its forked children inherit it
    got = _run([PING, {"kind": "_sleep", "seconds": 60}, ABORT, PING], timeout=2)
    assert got[0]["ok"] is True
    assert got[1]["ok"] is False and got[1]["error"] == "timeout"
    assert got[2]["error"] == "aborted" and got[3]["ok"] is True
    deadline = time.monotonic() + 5        # a killed process may take a moment to be reaped
    while _tagged(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _tagged(tag) == []
