"""The sub-group matrix multiply-accumulate built-ins of OpenCL C on Intel GPUs (DPAS).

Source: Khronos OpenCL extension ``cl_intel_subgroup_matrix_multiply_accumulate`` (rev 1.1.0),
the functions for devices whose minimum sub-group size is 16 (Xe-HPC, Xe2, Xe3), and its
description of the operands:

* ``a`` (``M`` rows, ``K`` columns) is a vector of ``M`` components (``short``, ``short2``,
  ``short4``, ``short8`` for ``M`` = 1, 2, 4, 8); component ``m`` is row ``m``; each work-item
  contributes 16 bits of each row, so work-item ``l`` holds columns ``l * p .. l * p + p - 1``
  with ``p = 16 / element bits`` (one f16/bf16, two 8-bit integers), lowest bits first.
* ``b`` (``K`` rows, ``N`` = 16 columns) is an ``int8``: work-item ``n`` holds column ``n``;
  its ``int`` ``j`` holds rows ``j * q .. j * q + q - 1`` with ``q = 32 / element bits``,
  lowest bits first (the extension's reference code reads ``as_char4(b.sj)`` as four
  consecutive K values).
* ``acc`` and the result (``M`` x 16) are vectors of ``M`` components: component ``m`` of
  work-item ``n`` is element ``(m, n)``; ``float`` for fp16/bf16 sources, ``int`` for 8-bit.

``K`` is 16 for fp16/bf16 and 32 for 8-bit integers. The element order inside a 16- or 32-bit
value (lowest bits = lowest K) is the little-endian reading of ``as_char4``/``as_half2`` in the
extension's reference code: an inference from that code, stated here.

>>> mad_builtin("f16", 8).name, mad_builtin("f16", 8).signature()
('intel_sub_group_f16_f16_matrix_mad_k16', 'float8 intel_sub_group_f16_f16_matrix_mad_k16(short8 a, int8 b, float8 acc)')
>>> a_slot("i8", 3, 5, 1), b_slot("f16", 2, 7, 1), c_slot(4, 9)
((3, 11), (5, 7), (4, 9))
"""
from __future__ import annotations

from dataclasses import dataclass

from verilayout.errors import LayoutError

__all__ = ["MadBuiltin", "MAD_DTYPES", "SUB_GROUP", "mad_builtin", "a_slot", "b_slot", "c_slot"]

#: Sub-group size of the built-ins modelled here (devices whose minimum sub-group size is 16).
SUB_GROUP = 16

#: element type -> (name part, element bits, K, accumulator type)
MAD_DTYPES = {"f16": ("f16_f16", 16, 16, "float"), "bf16": ("bf16_bf16", 16, 16, "float"),
              "i8": ("i8_i8", 8, 32, "int"), "s8": ("i8_i8", 8, 32, "int"),
              "u8": ("u8_u8", 8, 32, "int")}


def _vec(base: str, m: int) -> str:
    return base if m == 1 else f"{base}{m}"


@dataclass(frozen=True)
class MadBuiltin:
    """One ``intel_sub_group_*_matrix_mad_k*`` overload: its name, ``M``, ``K``, the element
    bits of A and B and the accumulator's scalar type.

    >>> mad_builtin("i8", 4).signature()
    'int4 intel_sub_group_i8_i8_matrix_mad_k32(short4 a, int8 b, int4 acc)'
    """

    name: str
    m: int
    k: int
    elem_bits: int
    acc_type: str

    @property
    def a_type(self) -> str:
        """The type of ``a``: ``short`` .. ``short8`` (``ushort`` for unsigned 8-bit A)."""
        return _vec("ushort" if self.name.startswith("intel_sub_group_u8") else "short", self.m)

    @property
    def c_type(self) -> str:
        """The type of ``acc`` and of the result."""
        return _vec(self.acc_type, self.m)

    @property
    def b_type(self) -> str:
        """The type of ``b``: ``int8`` (``uint8`` for unsigned 8-bit B)."""
        return "uint8" if self.name.endswith("u8_matrix_mad_k32") else "int8"

    @property
    def a_parts(self) -> int:
        """Elements of one row that one work-item holds in its 16-bit component of ``a``."""
        return 16 // self.elem_bits

    @property
    def b_parts(self) -> int:
        """Elements of one column that one ``int`` of ``b`` holds."""
        return 32 // self.elem_bits

    def signature(self) -> str:
        """The overload as the extension declares it."""
        return f"{self.c_type} {self.name}({self.a_type} a, {self.b_type} b, {self.c_type} acc)"


def mad_builtin(dtype: str, m: int) -> MadBuiltin:
    """The built-in that multiplies ``M x K`` by ``K x 16`` for ``dtype`` sources; ``M`` must be
    1, 2, 4 or 8, and the type one the extension lists (fp16, bf16, 8-bit integers).

    >>> mad_builtin("tf32", 8)
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: cl_intel_subgroup_matrix_multiply_accumulate has no built-in for 'tf32' sources (known: f16, bf16, i8, s8, u8)
    """
    if dtype not in MAD_DTYPES:
        raise LayoutError(f"cl_intel_subgroup_matrix_multiply_accumulate has no built-in for "
                          f"{dtype!r} sources (known: {', '.join(MAD_DTYPES)})")
    if m not in (1, 2, 4, 8) or isinstance(m, bool):
        raise LayoutError(f"M = {m!r}: the matrix-mad built-ins take M = 1, 2, 4 or 8 rows "
                          "(the DPAS repeatCount)")
    part, bits, k, acc = MAD_DTYPES[dtype]
    return MadBuiltin(f"intel_sub_group_{part}_matrix_mad_k{k}", m, k, bits, acc)


def a_slot(dtype: str, component: int, lane: int, part: int) -> tuple[int, int]:
    """``(row, k)`` of A that bits ``part`` (in element units) of component ``component`` of
    work-item ``lane``'s ``a`` hold: row ``component``, column ``lane * p + part``.

    >>> a_slot("f16", 7, 15, 0)
    (7, 15)
    """
    p = 16 // MAD_DTYPES[dtype][1]
    return component, lane * p + part


def b_slot(dtype: str, j: int, lane: int, part: int) -> tuple[int, int]:
    """``(k, column)`` of B that element ``part`` of ``int`` ``j`` of work-item ``lane``'s ``b``
    holds: row ``j * q + part``, column ``lane``.

    >>> b_slot("i8", 7, 0, 3)
    (31, 0)
    """
    q = 32 // MAD_DTYPES[dtype][1]
    return j * q + part, lane


def c_slot(component: int, lane: int) -> tuple[int, int]:
    """``(row, column)`` of the accumulator that component ``component`` of work-item ``lane``
    holds.

    >>> c_slot(0, 3)
    (0, 3)
    """
    return component, lane
