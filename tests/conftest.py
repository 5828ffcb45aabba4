"""Suite-wide rules.

With ``VERILAYOUT_REQUIRE_ORACLES=1`` (set by ``.ci/run``) a skipped test is a failure: a missing
oracle (Triton, CUTLASS, pycute, cvc5, nvcc, a C++ compiler) must fail CI, not silently pass it.
A skip whose reason contains ``(optional tool)`` names a tool CI does not promise (e.g. clang for
an OpenCL syntax check) and stays a skip.
"""
import os

import pytest

# the corpus scripts compile kernels with Triton when run; --doctest-modules must not import them
collect_ignore_glob = ["corpus/*.py", "thirdparty/*.py", "fixtures/*"]

REQUIRE = os.environ.get("VERILAYOUT_REQUIRE_ORACLES") == "1"
OPTIONAL = "(optional tool)"


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def _enforce(report) -> None:
    if REQUIRE and report.skipped and OPTIONAL not in _skip_reason(report):
        report.outcome = "failed"
        report.longrepr = ("VERILAYOUT_REQUIRE_ORACLES=1 but the test was skipped: "
                           + _skip_reason(report))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not hasattr(report, "wasxfail"):
        _enforce(report)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _enforce(outcome.get_result())
