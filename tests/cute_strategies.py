"""Hypothesis strategies for CuTe int-tuples, shared by the CuTe tests (``tests/test_cute.py``) and
the pycute oracle (``tests/oracles/test_cute_pycute.py``)."""
from __future__ import annotations

from hypothesis import strategies as st


def tree(leaf: st.SearchStrategy, depth: int = 2) -> st.SearchStrategy:
    """An int-tuple of ``leaf`` values nested at most ``depth`` levels, 1 to 3 modes a level.

    >>> tree(st.just(2), depth=0).example()
    2
    """
    if depth == 0:
        return leaf
    return st.one_of(leaf, st.lists(tree(leaf, depth - 1), min_size=1, max_size=3).map(tuple))


def like(shape, leaf: st.SearchStrategy) -> st.SearchStrategy:
    """An int-tuple congruent to ``shape`` (same nesting), each leaf drawn from ``leaf``.

    >>> like((4, (2, 2)), st.just(1)).example()
    (1, (1, 1))
    """
    if isinstance(shape, tuple):
        return st.tuples(*[like(t, leaf) for t in shape])
    return leaf
