"""Every public Python entry point (``verilayout.parse`` / ``equal`` and the functions of the
facades ``banks``, ``blockload``, ``wgmma``, ``cute``, ``views``) given odd Python values, by
hypothesis: it returns, or it raises :class:`LayoutError` with one line; never another exception
(AttributeError, TypeError, RecursionError, ...). The oracle is the project's rule itself (bad
input is a one-line LayoutError), so any other exception type is a finding.

Also the cases a new user hit (issue 26), each asserted by hand.
"""
from __future__ import annotations

import inspect
import signal
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import verilayout
from verilayout import banks, blockload, cute, views, wgmma
from verilayout.errors import LayoutError

FACADES = {"banks": banks, "blockload": blockload, "wgmma": wgmma, "cute": cute, "views": views}

BLOCKED = ("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], "
           "order = [1, 0]}>")


def entry_points() -> list[tuple[str, object]]:
    out = [("verilayout.parse", verilayout.parse), ("verilayout.equal", verilayout.equal)]
    for mod_name, mod in FACADES.items():
        for n in mod.__all__:
            obj = getattr(mod, n)
            if inspect.isfunction(obj):
                out.append((f"verilayout.{mod_name}.{n}", obj))
    return out


def nested(depth: int, kind: str):
    """A value nested ``depth`` levels deep: lists, tuples, or MLIR / CuTe text."""
    if kind == "list":
        v: object = 1
        for _ in range(depth):
            v = [v]
        return v
    if kind == "tuple":
        v = 1
        for _ in range(depth):
            v = (v,)
        return v
    if kind == "dot_op":
        return ("tensor<16x16xf16, " + "#ttg.dot_op<{opIdx = 0, parent = " * depth + BLOCKED
                + ", kWidth = 2}>" * depth + ">")
    if kind == "slice":
        return "tensor<16xf16, " + "#ttg.slice<{dim = 0, parent = " * depth + BLOCKED + "}>" * depth + ">"
    if kind == "cute":
        return "(" * depth + "4" + ")" * depth + ":1"
    return "[" * depth + "]" * depth


TEXTS = st.sampled_from([
    "", " ", "#", "#ttg.blocked", BLOCKED, f"tensor<4x8xf16, {BLOCKED}>", "(4,8):(8,1)",
    "Sw<3,4,3> o smem_ptr[16b](unset) o (8,64):(64,1)", "m64n32k16", "f16", "K", "MN", "bytes",
    "!ttg.memdesc<", "tensor<4x4xf16>", "((_8,8),(_8,2)):((_8,_64),(_1,512))", "\x00", "é", "0x1F",
])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70), st.floats(allow_nan=True),
                    st.binary(max_size=6), st.text(max_size=12), TEXTS, st.just(slice(1, 2)),
                    st.just(object()), st.just(float("inf")), st.just(2 ** 62))
DEEP = st.builds(nested, st.sampled_from([40, 1200]),
                 st.sampled_from(["list", "tuple", "dot_op", "slice", "cute", "mlir"]))
VALUES = st.recursive(st.one_of(SCALARS, DEEP),
                      lambda inner: st.one_of(st.lists(inner, max_size=3),
                                              st.tuples(inner, inner),
                                              st.dictionaries(st.text(max_size=4), inner, max_size=2)),
                      max_leaves=6)


class _Slow(Exception):
    pass


def _alarm(signum, frame):
    raise _Slow()


def call_once(fn, args, kwargs) -> None:
    """Call; pass on a return or a one-line LayoutError; a run over 5 s is left alone (the fuzz
    looks for exception types, not for speed)."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(5)
    try:
        fn(*args, **kwargs)
    except LayoutError as e:
        assert "\n" not in str(e), f"a LayoutError of several lines: {str(e)[:300]!r}"
    except _Slow:
        pass
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("label,fn", entry_points(), ids=[n for n, _ in entry_points()])
def test_odd_inputs_raise_only_layout_errors(label, fn):
    names = [p for p in inspect.signature(fn).parameters if p not in ("self", "args", "kwargs")]

    @settings(max_examples=25, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(args=st.lists(VALUES, max_size=4),
           kwargs=st.dictionaries(st.sampled_from(names + ["bogus_keyword"]), VALUES, max_size=2))
    def run(args, kwargs):
        call_once(fn, args, kwargs)

    run()


CONSTRUCTORS = [("LinearLayout", verilayout.LinearLayout, 2, 3),
                ("LinearLayout.identity1D", verilayout.LinearLayout.identity1D, 3, 3),
                ("LinearLayout.zeros1D", verilayout.LinearLayout.zeros1D, 3, 3),
                ("cute.Layout", cute.Layout, 1, 2), ("cute.Swizzle", cute.Swizzle, 3, 3),
                ("cute.ComposedLayout", cute.ComposedLayout, 2, 3)]


@pytest.mark.parametrize("label,cls,lo,hi", CONSTRUCTORS, ids=[c[0] for c in CONSTRUCTORS])
def test_constructors_given_odd_values_raise_only_layout_errors(label, cls, lo, hi):
    """The public classes, with as many arguments as they take (a wrong count stays Python's
    TypeError, as for any class): odd values are LayoutErrors."""
    @settings(max_examples=40, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(args=st.integers(lo, hi).flatmap(lambda n: st.lists(VALUES, min_size=n, max_size=n)))
    def run(args):
        call_once(cls, args, {})

    run()


def test_named_cases_of_issue_26():
    cases = [
        lambda: verilayout.parse(5),                                        # AttributeError before
        lambda: verilayout.parse("#ttg.blocked<{}>", foo=1),                # TypeError before
        lambda: verilayout.parse(BLOCKED, shape=[4, 8], name=3),            # AttributeError before
        lambda: verilayout.parse(nested(1000, "dot_op")),                   # RecursionError before
        lambda: verilayout.parse(nested(1000, "slice")),
        lambda: verilayout.parse(nested(1000, "cute")),
        lambda: verilayout.parse("#ttg.linear<{register = " + nested(1000, "mlir") + "}>", shape=[4]),
        lambda: verilayout.cute.make_layout(nested(1000, "tuple")),
        lambda: verilayout.cute.product(nested(1000, "tuple")),
        lambda: verilayout.cute.flatten(nested(1000, "tuple")),
    ]
    for case in cases:
        with pytest.raises(LayoutError) as info:
            case()
        assert "\n" not in str(info.value)
    with pytest.raises(LayoutError, match=r"verilayout.parse: .*'foo'"):
        verilayout.parse("#ttg.blocked<{}>", foo=1)
    with pytest.raises(LayoutError, match=r"argument 'text' must be str, got int"):
        verilayout.parse(5)
    with pytest.raises(LayoutError, match=r"col \d+: values nested more than 32 deep"):
        verilayout.parse(nested(1000, "dot_op"))
    assert sys.getrecursionlimit() >= 1000


def test_a_parameter_is_checked_when_another_annotation_names_a_deferred_module():
    # z3_offset's return annotation is ``z3.BitVecRef`` and z3 is imported inside the functions that need
    # it (start-up time, issue 23): its plain parameters are still checked, one line naming the argument
    # (unchecked, width="8" reached a comparison with an int: a TypeError)
    with pytest.raises(LayoutError, match="argument 'width' must be int or None, got str") as e:
        cute.z3_offset(cute.Layout(4, 1), 0, width="8")
    assert "\n" not in str(e.value)
    with pytest.raises(LayoutError, match="argument 'elem_bits' must be int or None, got str"):
        cute.offsets_table(cute.Layout(4, 1), elem_bits="16")
