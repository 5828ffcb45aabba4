"""Text views of a layout for people: bases, and the grid of owners (or offsets) per element.

The code lives in :mod:`verilayout.report.views`; the hardware-centric and tensor views that
must match Triton's own output byte for byte live with the Triton front-end
(:func:`verilayout.frontends.triton.format_hardware_view`).

>>> from verilayout.core.linear_layout import LinearLayout
>>> print(format_bases(LinearLayout.identity1D(4, "lane", "dim0")))
lane: [[1], [2]]
out: dim0=4
"""
from verilayout.errors import publish
from verilayout.report.views import (VIEW_MAX_ELEMENTS, format_bases, format_owner_grid,
                                     hardware_view, owner_grid, tensor_view)

__all__ = ["VIEW_MAX_ELEMENTS", "format_bases", "format_owner_grid", "hardware_view", "owner_grid",
           "tensor_view"]

publish(globals(), __all__, "verilayout.views")
