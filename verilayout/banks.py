"""Shared-memory bank conflicts: how many wavefronts a warp's access needs, proved.

``check_banks(reg_layout, smem_layout, elem_bits=..., instruction="auto")`` (also importable
under its first name, ``analyze``, for scripts written against earlier releases) takes a
register layout (who holds which element: ``register, lane, warp[, block] -> dim0..``),
a shared layout (where each element lives: ``offset[, block] -> dim0..`` as Triton
writes it, or a non-linear :class:`~verilayout.hw.nvidia.banks.SharedAddressMap`), the
element width and the instruction, and returns a :class:`BankReport`.

* ``wavefronts``: per instruction (the sum over its phases), for the worst
  instruction of the access (the model: :mod:`verilayout.hw.nvidia.banks`);
* ``ideal_wavefronts``: one per phase (what a conflict-free access needs);
* ``conflict_free`` and ``verdict``: the proof (GF(2) rank argument, or z3), or the
  counterexample, which is also ``witness``: accesses of one phase that hit one bank
  at distinct words (lanes, registers, elements, byte addresses, bank);
* ``triton_conflicts``: what Triton 3.9's ``get_shared_bank_conflicts`` returns for
  the same pair ("excess accesses per wavefront" of the widest ld/st, computed on
  the shared layout's segment bits; see :mod:`verilayout.prove.banks` for its exact
  definition and where it differs from the hardware count). ``None`` when Triton
  cannot answer (non-linear shared memory, or its computation aborts).

The bank-conflict example of Lei Zhang's "Triton Linear Layout: Concept"
(https://www.lei.chat/posts/triton-linear-layout-concept/): a 16x32 tensor of 32-bit elements whose column 0 is read by lanes 0-15 (lanes 16-31 read it again).

>>> from verilayout.core.linear_layout import LinearLayout, identity_standard_nd
>>> col = LinearLayout({"register": [], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 0]]}, {"dim0": 16, "dim1": 32})
>>> check_banks(col, identity_standard_nd("offset", [16, 32], [1, 0]), elem_bits=32).wavefronts
16
>>> xor = LinearLayout({"offset": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [1, 1], [2, 2], [4, 4], [8, 8]]},
...                    ["dim0", "dim1"])
>>> check_banks(col, xor, elem_bits=32).conflict_free
True
"""
from __future__ import annotations

from verilayout.errors import publish
from typing import Any

from verilayout.core.linear_layout import LinearLayout
from verilayout.frontends.names import read_instruction
from verilayout.frontends.shared_text import load_register, load_shared, parse_shared_linear
from verilayout.prove import banks as _prove
from verilayout.prove.banks import DEFAULT_TIMEOUT_MS, Access, BankReport, Witness, as_shared


def check_banks(reg_layout: LinearLayout, smem_layout: Any, *, elem_bits: int, instruction: Any = "auto",
                num_banks: int = 32, store: bool = False, timeout_ms: int = DEFAULT_TIMEOUT_MS,
                witness_size: int = 2) -> BankReport:
    """:func:`verilayout.prove.banks.check_banks`, the ``instruction`` text (``"auto"``,
    ``"ld.shared.v2.b32"``, ``"ldmatrix.x4"``, ...) read at the door
    (:func:`verilayout.frontends.names.read_instruction`).

    >>> from verilayout.core.linear_layout import identity_standard_nd
    >>> row = LinearLayout({"register": [[0, 1]], "lane": [[0, 2], [0, 4], [0, 8], [0, 16], [1, 0]]},
    ...                    ["dim0", "dim1"])
    >>> check_banks(row, identity_standard_nd("offset", [2, 32], [1, 0]), elem_bits=16, instruction="ld.shared.b32").wavefronts
    1
    """
    return _prove.check_banks(reg_layout, smem_layout, elem_bits=elem_bits, instruction=read_instruction(instruction),
                              num_banks=num_banks, store=store, timeout_ms=timeout_ms, witness_size=witness_size)


#: The first public name of :func:`check_banks`, kept for scripts outside the project.
analyze = check_banks

__all__ = ["check_banks", "analyze", "BankReport", "Access", "Witness", "as_shared", "load_shared", "load_register",
           "parse_shared_linear"]

publish(globals(), __all__, "verilayout.banks")
