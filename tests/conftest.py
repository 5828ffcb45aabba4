"""Suite-wide rules.

With ``VERILAYOUT_REQUIRE_ORACLES=1`` (set by ``.ci/run``) a skipped test is a failure: a missing
oracle (Triton, CUTLASS, pycute, cvc5, nvcc, a C++ compiler) must fail CI, not silently pass it.
A skip whose reason contains ``(optional tool)`` names a tool CI does not promise (e.g. clang for
an OpenCL syntax check) and stays a skip.
"""
import os
import subprocess
import sys

import pytest

# the corpus scripts compile kernels with Triton when run; --doctest-modules must not import them
collect_ignore_glob = ["corpus/*.py", "thirdparty/*.py", "fixtures/*", "cutedsl/generate*.py"]  # (the DSL scripts import the optional extra)

REQUIRE = os.environ.get("VERILAYOUT_REQUIRE_ORACLES") == "1"

#: Test files whose tests compile (nvcc, a C++ compiler, Triton), run subprocess batteries or
#: prove whole catalogues: each is marked ``slow`` (with every test of ``tests/oracles`` and every
#: ``oracle`` test), so ``pytest -m "not slow"`` is the fast subset for local work.
SLOW_FILES = frozenset({
    "test_emit_independent.py", "test_ptx_cutlass.py", "test_tmem_triton.py", "test_upstream_triton_ll.py",
    "test_audit_oracle.py", "test_bad_input.py", "test_emit_gemm.py", "test_emit_blockload.py",
    "test_emit_dpas.py", "test_emit_wgmma.py", "test_proofs.py", "test_readme.py", "test_fuzz.py",
    "test_triton_hook.py", "test_corpus_files.py", "test_corpus_coverage.py", "test_upstream_dump.py",
    "test_upstream_conversions.py", "test_upstream_intel.py", "test_size_limits.py",
    "test_emit_gemm_cluster.py", "test_thirdparty.py", "test_hwtests_build.py",
    # whole-corpus batteries: the harvested corpus' sample (259 pairs) and the PTX mutation sweep
    # (about 60 s each in CI's --durations, the two slowest files of the suite)
    "test_harvest_audit.py", "test_ptx_mutations.py",
    # the CTA-pair GEMM: each check compiles (nvcc, ptxas) and searches the pair's barrier protocol
    # (about 10 s a kernel), the heaviest file of the suite
    "test_emit_gemm_sm100_2cta.py",
    # the ping-pong GEMM: every test but a few compiles its kernel with nvcc and explores its turns
    # (52 s of CPU in all, measured with -p tests.cpu_table)
    "test_emit_gemm_pingpong.py"})

#: CPU seconds of each test file of at least 9 s in a ``.ci/run`` (a fresh clone, two
#: workers, ``PYTEST_ADDOPTS="-p tests.cpu_table"``, 2026-11-30, commit 937192a, on the shared machine
#: at load 6-10: the figures are the files' own CPU, not wall). They are handed out first, largest
#: first, so that the two xdist workers end together (longest processing time first) instead of one
#: of them starting a one-minute file at the end; the other files keep their collection order.
HEAVY_FILES = {
    # the emitted-kernel files: each test compiles (nvcc, ptxas) and checks a kernel; test_emit_gemm_sm100
    # was 86 s, 48 s of it its 12 auto-chosen configurations (their mcast-ring searches): the four
    # 1x2-cluster ones build one ring system, searched once per process since (mcast_check's memo),
    # 20 s (56.5 s for the file, -p tests.cpu_table, 2026-11-30, one process at load 5)
    "test_emit_gemm_sm100.py": 57, "test_emit_independent.py": 78, "test_emit_gemm_select.py": 61,
    "test_emit_wgmma.py": 60, "test_emit_gemm_pingpong.py": 46, "test_emit_gemm_sm100_2cta.py": 34,
    "test_thirdparty.py": 25, "test_emit_gemm.py": 21, "test_ptx_mutations.py": 21, "test_ptx_shuffles.py": 20,
    "test_harvest_audit.py": 18, "test_triton_layouts.py": 13, "test_emit_gemm_sm100_cluster.py": 18,
    "test_ptx_cutlass.py": 18, "test_emit_gemm_epilogue.py": 17,
    "test_emit_gemm_tma_store.py": 16, "test_emit_gemm_cluster.py": 16, "test_fuzz.py": 15,
    "test_ptx_audit.py": 15, "test_audit.py": 13, "test_cute.py": 13, "test_cute_pycute.py": 13,
    "test_bad_input.py": 12, "test_cli_gate_second_pass.py": 11,
    "test_audit_warp_specialize.py": 11, "test_cutedsl_ldmatrix.py": 10,
    "test_emit_gemm_sm100_pair_cluster.py": 29, "test_cli_gate.py": 10, "test_hwtests_build.py": 9,
    "test_emit_gemm_swap.py": 9, "test_banks_oracle.py": 9,
    # test_emit_gemm_sm100_pair_cluster (29 s, same measurement): 19 s of it the 6-stage 2x2 pair
    # cluster's ring, whose full searches pass their bound before the stubborn-set reduced search
    # test_emit_gemm_cover (was 18 s) and test_emit_gemm_pingpong (50 s): their grid-size loops run
    # the CTAs of a grid as one batch (simulate/ptx_run.run_ctas), 15.3 -> 4.8 and 33.6 -> 29.6 s
    # (-p tests.cpu_table, one process each, compiles cached, main then branch back to back at load
    # 9-11): about 7.5 and 46 s in CI; the cover file is off the list
    # the Triton-wheel oracles answer in forked children of one worker (an abort costs a fork, not a
    # new interpreter importing Triton): test_triton_mma_oracle 13.3 -> 2.4 s, test_lit_layouts_oracle
    # 13.5 -> 6.7 s (both off the list now), test_triton_layouts 15.5 -> 12.6 s (-p tests.cpu_table,
    # one process, base then branch back to back at load 8-10, 2026-11-30)
    # the CuTe-DSL host tests (18 s): their fixture audits the corpus' kernels of test_cutedsl_audit
    # and test_cutedsl_quack as well (tests/audited.audit_cute_pair, shared on disk between the
    # workers); those two (16 and 17 s) are left off the list and stay in collection order, so they
    # start after it has written them
    "test_cutedsl_host.py": 19}


#: Test files whose oracle is a C++ build (``tests/oracles/cutlass_build.py``): they run last, and
#: the first process that collects them starts :func:`~tests.oracles.cutlass_build.prebuild` in the
#: background, so the compiler works while the rest of the suite runs and no test waits for it.
LATE_FILES = ("test_cutlass_gmma_desc.py", "test_cutlass_umma_desc.py")
_prebuild: list = []


def _start_prebuild() -> None:
    """Build the CUTLASS oracles in a background process (once per session: only the first
    xdist worker or the single pytest process starts it)."""
    if _prebuild or os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0":
        return
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    _prebuild.append(subprocess.Popen(
        [sys.executable, "-c", "from tests.oracles.cutlass_build import prebuild; prebuild()"],
        cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}))


def pytest_collection_finish(session):
    """Start the background build once the selection is final (``-m``, ``-k`` applied)."""
    if not session.config.getoption("collectonly") and any(
            os.path.basename(str(getattr(it, "path", it.fspath))) in LATE_FILES for it in session.items):
        _start_prebuild()


def pytest_unconfigure(config):
    for proc in _prebuild:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=30)


def pytest_configure(config):
    """Under xdist, hand out test files in the order :func:`pytest_collection_modifyitems` gives
    (xdist's default for ``--dist loadfile`` reorders them by their number of tests, which sent
    the one-test, one-minute files last)."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def _order(item) -> tuple[bool, int]:
    name = os.path.basename(str(getattr(item, "path", item.fspath)))
    return name in LATE_FILES, -HEAVY_FILES.get(name, 0)


def _needs_nvcc(item) -> bool:
    """A test skipped without nvcc (a ``skipif`` whose reason names it): its oracle is an nvcc
    compile of an emitted kernel and the checks of its PTX, seconds of CPU each (90 s in all
    outside SLOW_FILES, measured with -p tests.cpu_table)."""
    return any("nvcc" in str(m.kwargs.get("reason", "")) for m in item.iter_markers("skipif"))


def pytest_collection_modifyitems(config, items):
    """Mark the slow tests (see ``SLOW_FILES``, :func:`_needs_nvcc`); the heaviest files first
    (``HEAVY_FILES``), the C++-built oracles last (``LATE_FILES``, their build started in the
    background); the sort is stable, so the other files keep their collection order."""
    items.sort(key=_order)
    for item in items:
        path = str(getattr(item, "path", item.fspath))
        if (os.path.basename(path) in SLOW_FILES or f"{os.sep}oracles{os.sep}" in path
                or item.get_closest_marker("oracle") or _needs_nvcc(item)):
            item.add_marker(pytest.mark.slow)
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
