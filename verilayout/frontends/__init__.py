"""Front-ends: text in, layouts out (Triton MLIR attributes and types, TTGIR files, CuTe text).

The names below are loaded on first use, so ``verilayout.core.cga`` can be
imported on its own.

>>> from verilayout.frontends import parse
>>> parse("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>",
...       shape=[32]).in_dims
{'register': 1, 'lane': 32, 'warp': 1, 'block': 1}
"""
from __future__ import annotations

import importlib

__all__ = ["parse", "parse_attr", "format_attr", "format_hardware_view", "format_tensor_view",
           "with_layout_kind"]


def __getattr__(name: str):
    if name in __all__:
        return getattr(importlib.import_module(".triton", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
