"""The one table of element types: every name verilayout reads, and its width in bits.

Names are the ones PTX (``f16``, ``e4m3``, ``s8``), Triton's MLIR (``f8E4M3FN``, ``i8``) and the
CLI use; each capability keeps only the list of names it supports, and takes widths from here.

Law: ``bits(name) == BITS[name]``; an unknown name raises ``LayoutError`` naming the known ones.

>>> bits("bf16"), bits("e4m3"), bits("f8E5M2")
(16, 8, 8)
>>> bytes_of("tf32")
4
"""
from __future__ import annotations

import re
from typing import Literal

from verilayout.errors import LayoutError

#: Element width in bits of every element type name verilayout reads.
BITS: dict[str, int] = {
    "i1": 1, "b1": 1,
    "i4": 4, "e2m1": 4, "f4E2M1FN": 4,
    "e2m3": 6, "e3m2": 6, "f6E2M3FN": 6, "f6E3M2FN": 6,
    "i8": 8, "s8": 8, "u8": 8, "e4m3": 8, "e5m2": 8,
    "f8e4m3fn": 8, "f8e5m2": 8, "f8E4M3FN": 8, "f8E5M2": 8, "f8E4M3FNUZ": 8, "f8E5M2FNUZ": 8,
    "f8E8M0FNU": 8, "e8m0": 8,
    "i16": 16, "f16": 16, "bf16": 16,
    "i32": 32, "f32": 32, "tf32": 32, "s32": 32,
    "i64": 64, "f64": 64,
}

#: Names of the operand-major choices of an MMA operand.
Major = Literal["K", "MN"]
#: Names of the swizzle modes of NVIDIA shared-memory descriptors and tensor maps.
SwizzleMode = Literal["none", "32B", "64B", "128B"]

#: The one table of NVIDIA shared-memory swizzle modes: ``(B, M, S, row bytes)``, the CuTe functor
#: ``Swizzle<B,M,S>`` on byte addresses and the bytes of one swizzled row. Sources: wgmma's four
#: modes, PTX ISA 9.7.15.5.1.2 ("Shared Memory Matrix Layout", the swizzle atoms); tcgen05's ``128B_base32B``, CUTLASS
#: ``cute/atom/mma_traits_sm100.hpp`` (``Swizzle<2,5,2>``); the tensor-map modes, CUDA ``cuda.h``
#: ``CUtensorMapSwizzle`` with CUTLASS ``cute/atom/copy_traits_sm90_tma_swizzle.hpp``
#: (``Swizzle<2,5,2>`` = 128B_ATOM_32B). ``128B_ATOM_64B`` as ``Swizzle<1,6,1>`` and the FLIP_8B
#: variant are inferences, said so in ``hw/nvidia/tma.py``.
SWIZZLE_MODES: dict[str, tuple[int, int, int, int]] = {
    "none": (0, 4, 3, 16), "32B": (1, 4, 3, 32), "64B": (2, 4, 3, 64), "128B": (3, 4, 3, 128),
    "128B_base32B": (2, 5, 2, 128),
    "128B_ATOM_32B": (2, 5, 2, 128), "128B_ATOM_32B_FLIP_8B": (2, 5, 2, 128),
    "128B_ATOM_64B": (1, 6, 1, 128),
}
#: The wgmma / descriptor modes (:data:`SwizzleMode`).
WGMMA_SWIZZLES: tuple[str, ...] = ("none", "32B", "64B", "128B")
#: ``CUtensorMapSwizzle``, in enum order (cuda.h).
TMA_SWIZZLES: tuple[str, ...] = ("none", "32B", "64B", "128B", "128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B",
                                 "128B_ATOM_64B")
#: Spellings of the wgmma modes (lower case): PTX's "interleave" (no swizzle), CuTe's ``SW128``.
_WGMMA_ALIASES = {"none": "none", "0": "none", "interleave": "none", "inter": "none",
                  "no": "none", "32b": "32B", "32": "32B", "sw32": "32B",
                  "64b": "64B", "64": "64B", "sw64": "64B",
                  "128b": "128B", "128": "128B", "sw128": "128B"}


def swizzle_mode(value: object, family: Literal["wgmma", "tma"] = "wgmma") -> str:
    """The canonical name of a swizzle mode, as the ``family`` spells it; else ``LayoutError``.

    ``wgmma``: ``none``/``32B``/``64B``/``128B`` from ``128``, ``SW64``, ``interleave``, ...;
    ``tma``: one of :data:`TMA_SWIZZLES` from a ``CUtensorMapSwizzle`` name in any case
    (``CU_TENSOR_MAP_SWIZZLE_128B``, ``swizzle_64b``) or its enum value.

    >>> swizzle_mode("SW64"), swizzle_mode("interleave"), swizzle_mode(3, "tma")
    ('64B', 'none', '128B')
    """
    if family == "wgmma":
        t = str(value).strip().lower()
        if t not in _WGMMA_ALIASES:
            raise LayoutError(f"swizzle {value!r}: expected none, 32B, 64B or 128B")
        return _WGMMA_ALIASES[t]
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(TMA_SWIZZLES):
        return TMA_SWIZZLES[value]
    if isinstance(value, str):
        s = value.strip().upper().removeprefix("CU_TENSOR_MAP_").removeprefix("SWIZZLE_").removeprefix("_")
        for name in TMA_SWIZZLES:
            if s == name.upper():
                return name
        if s in ("0", "NONE", "DISABLE"):
            return "none"
    raise LayoutError(f"swizzle {value!r}: expected one of {', '.join(TMA_SWIZZLES)}")


def require_swizzle(mode: object, family: Literal["wgmma", "tma"] = "wgmma") -> str:
    """``mode`` if it is a canonical mode name of ``family`` (:data:`WGMMA_SWIZZLES` or
    :data:`TMA_SWIZZLES`), else ``LayoutError``; spellings are read at the door
    (:func:`verilayout.frontends.names.parse_swizzle`).

    >>> require_swizzle("64B"), require_swizzle("128B_ATOM_32B", "tma")
    ('64B', '128B_ATOM_32B')
    """
    names = WGMMA_SWIZZLES if family == "wgmma" else TMA_SWIZZLES
    if isinstance(mode, str) and mode in names:
        return mode
    if family == "wgmma":
        raise LayoutError(f"swizzle {mode!r}: expected none, 32B, 64B or 128B")
    raise LayoutError(f"swizzle {mode!r}: expected one of {', '.join(TMA_SWIZZLES)}")


def require_major(major: object) -> Major:
    """``major`` if it is ``"K"`` or ``"MN"``, else ``LayoutError`` (spellings such as ``n`` are
    read at the door: :func:`verilayout.frontends.names.parse_major`).

    >>> require_major("MN")
    'MN'
    """
    if major in ("K", "MN"):
        return major  # type: ignore[return-value]
    raise LayoutError(f"major {major!r}: expected K or MN")


#: Architectures verilayout models.
Arch = Literal["sm_80", "sm_90", "sm_90a", "sm_100", "sm_100a", "gfx942", "gfx950", "pvc", "xe2", "xe3"]
#: NVIDIA architectures with shared-memory matrix descriptors (wgmma, tcgen05).
NvArch = Literal["sm_90", "sm_100"]
#: Intel generations with 2D block loads.
IntelArch = Literal["pvc", "xe2", "xe3"]


def bits(name: str) -> int:
    """Width in bits of element type ``name``; ``LayoutError`` for an unknown name.

    >>> bits("f16")
    16
    """
    if not isinstance(name, str) or name not in BITS:
        raise LayoutError(f"unknown element type {name!r} (known: {', '.join(sorted(BITS))})")
    return BITS[name]


def bytes_of(name: str) -> int:
    """Whole bytes of one element (types narrower than a byte are refused).

    >>> bytes_of("f16"), bytes_of("i8")
    (2, 1)
    """
    b = bits(name)
    if b % 8:
        raise LayoutError(f"element type {name!r} is {b} bits, not a whole number of bytes")
    return b // 8


_PTX_TYPE = re.compile(r"[bsuf](8|16|32|64|128)")


def ptx_reg_width(name: str) -> int:
    """The width in bits of a PTX register by nvcc's and Triton's naming (``%rd`` 64, ``%rs`` 16,
    ``%p`` 1, others 32).

    >>> ptx_reg_width("%rd3"), ptx_reg_width("%rs1"), ptx_reg_width("%r7")
    (64, 16, 32)
    """
    if name.startswith("%rd"):
        return 64
    if name.startswith("%rs"):
        return 16
    if name.startswith("%p"):
        return 1
    return 32


def ptx_bits(suffix: str) -> int | None:
    """Bits of a PTX type suffix (``b32``, ``u64``, ``f16``, ``s8``, ``b128``), else None.

    >>> ptx_bits("u32"), ptx_bits("b128"), ptx_bits("f16"), ptx_bits("sync")
    (32, 128, 16, None)
    """
    m = _PTX_TYPE.fullmatch(suffix)
    return int(m.group(1)) if m else None


def mlir_bits(elem: str) -> int | None:
    """Bits of an MLIR element type, or None when it is not an element type.

    Pointers (``!tt.ptr<...>``) are 64 bits; ``iN``/``uiN``/``siN`` are N bits.

    >>> mlir_bits("bf16"), mlir_bits("f8E5M2"), mlir_bits("!tt.ptr<f16>"), mlir_bits("foo")
    (16, 8, 64, None)
    """
    if elem in BITS:
        return BITS[elem]
    if elem.startswith("f8"):
        return 8
    if elem.startswith("f6"):
        return 6
    if elem.startswith("f4"):
        return 4
    if elem.startswith("!tt.ptr"):
        return 64
    m = re.fullmatch(r"[isu]i?([0-9]+)", elem)
    return int(m.group(1)) if m else None


def subset(names: tuple[str, ...]) -> dict[str, int]:
    """The widths of a capability's supported names, in the order given.

    >>> subset(("f16", "tf32"))
    {'f16': 16, 'tf32': 32}
    """
    return {n: bits(n) for n in names}
