"""Assertions for projects that keep layout checks in their own test suites.

Each helper proves its claim and, when it fails, raises ``AssertionError`` whose
message carries the counterexample; an ``unknown`` verdict fails too (a proof that
did not finish is not a pass).

>>> from verilayout.core.linear_layout import LinearLayout
>>> assert_equivalent(LinearLayout.identity1D(4, "lane", "dim0"),
...                   LinearLayout({"lane": [[1], [2]]}, ["dim0"]))
"""
from __future__ import annotations

from verilayout.audit.testing import KernelNotClean, assert_kernel_clean  # noqa: F401 (re-export)
from verilayout.banks import check_banks
from verilayout.blockload import check
from verilayout.core.linear_layout import LinearLayout
from verilayout.core.smt import DEFAULT_TIMEOUT_MS, Verdict, check_injective, equal
from verilayout.errors import LayoutError
from verilayout.frontends.triton import parse
from verilayout.spec.kinds.linear import as_linear as _linear, check_surjective
from verilayout.wgmma import check_descriptor


def _layout(x, shape=None):
    if isinstance(x, str):
        return parse(x, shape=shape)
    return x


def assert_verdict(verdict: Verdict, what: str) -> None:
    """Raise AssertionError unless ``verdict`` is proved; the message has the counterexample."""
    if verdict.proved:
        return
    msg = f"{what}: {verdict.status}: {verdict.reason}"
    if verdict.counterexample:
        msg += f"\ncounterexample: {verdict.counterexample}"
    raise AssertionError(msg)


def assert_equivalent(a, b, *, shape=None, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> None:
    """Both layouts (objects or text) are the same function."""
    assert_verdict(equal(_layout(a, shape), _layout(b, shape), timeout_ms=timeout_ms),
                   "layouts are not equivalent")


def assert_injective(layout, *, shape=None, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> None:
    """No two inputs map to the same output."""
    assert_verdict(check_injective(_layout(layout, shape), timeout_ms=timeout_ms),
                   "layout is not injective")


def assert_surjective(layout, *, shape=None) -> None:
    """Every output coordinate is reached."""
    assert_verdict(check_surjective(_linear(_layout(layout, shape), "assert_surjective")),
                   "layout is not surjective")


def assert_conflict_free(reg_layout, smem_layout, *, elem_bits: int, instruction: str = "auto",
                         shape=None) -> None:
    """The shared-memory access of ``reg_layout`` into ``smem_layout`` has no bank conflict."""
    rep = check_banks(_layout(reg_layout, shape), _layout(smem_layout, shape),
                  elem_bits=elem_bits, instruction=instruction)
    if not rep.conflict_free:
        raise AssertionError(f"bank conflicts: {rep.wavefronts} wavefronts, ideal "
                             f"{rep.ideal_wavefronts}; witness: {rep.witness}")


def assert_descriptor_matches(descriptor, layout, **kw) -> None:
    """A wgmma descriptor addresses exactly the bytes ``layout`` placed the data at."""
    assert_verdict(check_descriptor(descriptor, _layout(layout), **kw), "descriptor does not match layout")


def assert_covers(plan, layout, **kw) -> None:
    """An Intel 2D block-load plan loads every element the DPAS operand needs."""
    assert_verdict(check(plan, layout, **kw), "block-load plan does not cover the operand")
