"""CuTe layouts in one import: the algebra (``verilayout.core.cute``) and its text reader.

>>> from verilayout import cute
>>> L = cute.parse_cute("(_8,_8):(_8,_1)")
>>> cute.offset_elements(L, (1, 2))
10
"""
from verilayout.errors import publish
from verilayout.core.cute import *  # noqa: F401,F403  (the public algebra, listed in its __all__)
from verilayout.core.cute import __all__ as _algebra
from verilayout.frontends.cute_mlir import from_dsl  # noqa: F401  (a CuTe-DSL object from its print)
from verilayout.frontends.cute_text import parse_cute, parse_cute_tensor, parse_cute_tv  # noqa: F401  (the text readers)

__all__ = [*_algebra, "parse_cute", "parse_cute_tensor", "parse_cute_tv", "from_dsl"]

publish(globals(), __all__, "verilayout.cute")
