"""verilayout: proofs and synthesis for GPU tensor layouts.

>>> from verilayout import LinearLayout, equal
>>> L = LinearLayout.identity1D(32, "lane", "dim0")
>>> equal(L, L).proved
True
"""
from importlib import import_module
from typing import Sequence

from verilayout.errors import LayoutError, public

# ``verilayout.prove`` is the package of provers (wgmma, banks, coverage); the generic
# z3 entry point is ``verilayout.core.smt.check_claim``.
__all__ = ["LayoutError", "LinearLayout", "Verdict", "equal", "parse"]
__version__ = "0.1.0"

#: Names loaded on first use (PEP 562), so that importing one module of the package (the CLI,
#: ``verilayout.core.gf2``) does not import numpy, z3 and every front end: start-up time.
_LAZY = {"LinearLayout": "verilayout.core.linear_layout", "Verdict": "verilayout.core.smt",
         "equal": "verilayout.core.smt"}


def __getattr__(name: str):
    """Load ``LinearLayout``, ``Verdict`` and ``equal`` when first asked for.

    Law: ``verilayout.X is M.X`` for the defining module ``M`` of every lazy name ``X``.

    >>> import verilayout, verilayout.core.smt
    >>> verilayout.Verdict is verilayout.core.smt.Verdict
    True

    (``equal`` is wrapped as a :func:`~verilayout.errors.public` entry point: misuse is a LayoutError.)
    """
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        if name == "equal":
            value = public(value, "verilayout.equal")
        globals()[name] = value
        return value
    raise AttributeError(f"module 'verilayout' has no attribute {name!r}")


@public
def parse(text: str, shape: Sequence[int] | None = None, *, name: str | None = None,
          swizzle_units: str | None = None, elem_bits: int | None = None):
    """Parse layout text: Triton MLIR (attributes, types, TTGIR files) or CuTe.

    Returns a LinearLayout when the layout is GF(2)-linear, otherwise a CuTe
    layout object with a z3 encoding. See :func:`verilayout.frontends.triton.parse`.
    ``#ttg.padded_shared`` and ``#ttg.shared_linear<{...}, alignment = N>`` (the text Triton
    prints) go through the same converter that ``banks`` uses. Law: any misuse (a non-text
    ``text``, an unknown keyword, input nested past Python's recursion limit) is a
    :class:`LayoutError` with one line naming the argument.

    >>> parse("#ttg.shared_linear<{offset = [[0, 1], [1, 0]]}, alignment = 16>", shape=[2, 2]).bases["offset"]
    [[0, 1], [1, 0]]
    """
    from verilayout.frontends.shared_text import shared_text_to_layout  # deferred: start-up
    from verilayout.frontends.triton import parse as _parse  # deferred: start-up time
    options = {"name": name, "swizzle_units": swizzle_units, "elem_bits": elem_bits}
    plain = all(v is None for v in options.values())
    if plain and ("padded_shared" in text or "shared_linear" in text):
        special = shared_text_to_layout(text, shape)
        if special is not None:
            return special
    return _parse(text, shape=shape, **options)
