"""What a Triton user can change in Python for a finding, where the finding says enough to tell.

These rules are inferences from how Triton 3.9 picks shared layouts (an MMA operand stored
MN-major gets ``transposed = true`` in its ``#ttg.nvmma_shared``; the swizzle Triton picks
depends on the tile's contiguous extent, so the block size and element width change it), not
cited hardware facts; the precise layout is in the finding's ``best`` data either way.

Law: ``suggestion(c)`` is None for a check that is not a finding, or whose data name no layout.

>>> c = Check("ttg.local_alloc", 68, "k.py:26", "bank-conflicts", "counterexample", "warning", "4-way",
...           {"shared_layout": "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = true, "
...            "elementBitWidth = 8}>"})
>>> suggestion(c).startswith("load this operand with K contiguous")
True
"""
from __future__ import annotations

from verilayout.audit.model import Check

_STORES = ("ttg.local_alloc", "ttg.local_store", "ttg.async_copy_global_to_local")


def suggestion(c: Check) -> str | None:
    """A Python-level change that may remove the finding ``c`` (see the module docstring)."""
    if c.severity not in ("error", "warning") or c.check != "bank-conflicts":
        return None
    layout = str(c.data.get("shared_layout", ""))
    if not layout:
        return None
    if "nvmma_shared" in layout and "transposed = true" in layout and c.op in _STORES:
        return ("load this operand with K contiguous (e.g. B from a [N, K] row-major tensor, "
                "then tl.trans(b) before tl.dot) so Triton stores it K-major")
    if "nvmma_shared" in layout and c.op in _STORES:
        return ("transpose the stored value with tl.trans before the store, or change the block "
                "size so its contiguous extent fills the swizzle (128 bytes)")
    return "choose the block size or num_stages whose shared layout is the `best` one in the details (-v)"
