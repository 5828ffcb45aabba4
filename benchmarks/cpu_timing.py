"""One CPU-timed call for the benchmarks that compare two searches in the same run.

>>> r, s = timed(sum, [1, 2, 3])
>>> r, s >= 0
(6, True)
"""
from __future__ import annotations

import time
from typing import Any, Callable


def timed(fn: Callable, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    """``(fn(*args, **kwargs), CPU seconds it took)`` (``time.process_time``: this process only)."""
    t = time.process_time()
    r = fn(*args, **kwargs)
    return r, time.process_time() - t
