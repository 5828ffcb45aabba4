"""verilayout: proofs and synthesis for GPU tensor layouts.

>>> from verilayout import LinearLayout, equal
>>> L = LinearLayout.identity1D(32, "lane", "dim0")
>>> equal(L, L).proved
True
"""
from verilayout.errors import LayoutError
from verilayout.core.linear_layout import LinearLayout
from verilayout.core.smt import Verdict, equal
from verilayout.frontends.shared_text import shared_text_to_layout
from verilayout.frontends.triton import parse as _parse

# ``verilayout.prove`` is the package of provers (wgmma, banks, coverage); the generic
# z3 entry point is ``verilayout.core.smt.prove``.
__all__ = ["LayoutError", "LinearLayout", "Verdict", "equal", "parse"]
__version__ = "0.1.0"


def parse(text: str, shape=None, **options):
    """Parse layout text: Triton MLIR (attributes, types, TTGIR files) or CuTe.

    Returns a LinearLayout when the layout is GF(2)-linear, otherwise a CuTe
    layout object with a z3 encoding. See :func:`verilayout.frontends.triton.parse`.
    ``#ttg.padded_shared`` and ``#ttg.shared_linear<{...}, alignment = N>`` (the text Triton
    prints) go through the same converter that ``banks`` uses.

    >>> parse("#ttg.shared_linear<{offset = [[0, 1], [1, 0]]}, alignment = 16>", shape=[2, 2]).bases["offset"]
    [[0, 1], [1, 0]]
    """
    if isinstance(text, str) and not options and ("padded_shared" in text or "shared_linear" in text):
        special = shared_text_to_layout(text, shape)
        if special is not None:
            return special
    return _parse(text, shape=shape, **options)
