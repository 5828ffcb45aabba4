"""CuTe's ``Swizzle<B,M,S>``: an XOR of address bits, on ints, numpy arrays and z3 bit-vectors.

>>> str(Swizzle(3, 4, 3)), Swizzle(3, 4, 3)(0b1010000000)
('Sw<3,4,3>', 720)
"""
from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

from verilayout.errors import LayoutError

__all__ = ["Swizzle", "PhasedSwizzle"]


# ----- Swizzle -------------------------------------------------------------------------

@dataclass(frozen=True)
class Swizzle:
    """CuTe's ``Swizzle<B,M,S>``: XOR ``B`` bits taken ``S`` above bit ``M`` into bit ``M``.

    ``yyy_mask = ((1<<B)-1) << (M + max(0,S))``, ``zzz_mask = ((1<<B)-1) << (M - min(0,S))``
    and ``swizzle(x) = x ^ shiftr(x & yyy_mask, S)`` (a negative ``S`` shifts left).
    It is a GF(2)-linear involution. It works on ints and numpy integer arrays.

    >>> Swizzle(3, 4, 3)(0b1010000000), Swizzle(3, 4, 3)(Swizzle(3, 4, 3)(1234))
    (720, 1234)
    """

    bits: int
    base: int
    shift: int

    def __post_init__(self):
        for name in ("bits", "base", "shift"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, Integral):
                raise LayoutError(f"Swizzle {name} must be an integer, got {v!r}")
            object.__setattr__(self, name, int(v))
        if self.bits < 0 or self.base < 0:
            raise LayoutError(f"Swizzle<{self.bits},{self.base},{self.shift}>: B and M must be >= 0")
        if abs(self.shift) < self.bits:
            raise LayoutError(f"Swizzle<{self.bits},{self.base},{self.shift}>: |S| must be >= B "
                              "(the XOR source and target bits would overlap)")

    @property
    def yyy_mask(self) -> int:
        """Bits read (the source of the XOR): ``((1<<B)-1) << (M + max(0,S))``.

        >>> bin(Swizzle(3, 4, 3).yyy_mask), bin(Swizzle(3, 4, 3).zzz_mask)
        ('0b1110000000', '0b1110000')
        """
        return ((1 << self.bits) - 1) << (self.base + max(0, self.shift))

    @property
    def zzz_mask(self) -> int:
        """Bits changed (the target of the XOR): ``((1<<B)-1) << (M - min(0,S))``."""
        return ((1 << self.bits) - 1) << (self.base - min(0, self.shift))

    @property
    def is_identity(self) -> bool:
        """``B == 0``: the swizzle changes nothing (units then do not matter).

        >>> Swizzle(0, 4, 3).is_identity, Swizzle(1, 4, 3).is_identity
        (True, False)
        """
        return self.bits == 0

    def __call__(self, x):
        y = x & self.yyy_mask
        return x ^ (y >> self.shift if self.shift >= 0 else y << -self.shift)

    def xor_term(self, x):
        """The bits the swizzle XORs in: ``self(x) == x ^ self.xor_term(x)`` (ints, numpy arrays).

        >>> Swizzle(3, 4, 3).xor_term(0b1010000000) == 0b1010000
        True
        """
        mask = (1 << self.bits) - 1
        if self.shift >= 0:
            return ((x >> (self.base + self.shift)) & mask) << self.base
        return ((x >> self.base) & mask) << (self.base - self.shift)

    def z3_xor_term(self, x: z3.BitVecRef) -> z3.BitVecRef:
        """:meth:`xor_term` on a z3 bit-vector (logical shifts).

        >>> import z3
        >>> z3.simplify(Swizzle(3, 4, 3).z3_xor_term(z3.BitVecVal(0b1010000000, 16))).as_long()
        80
        """
        import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
        mask = (1 << self.bits) - 1
        if self.shift >= 0:
            return (z3.LShR(x, self.base + self.shift) & mask) << self.base
        return (z3.LShR(x, self.base) & mask) << (self.base - self.shift)

    def rebased(self, extra: int) -> "Swizzle":
        """The same swizzle on addresses ``2**extra`` times finer (``M + extra``).

        >>> Swizzle(3, 3, 3).rebased(1)
        Swizzle(bits=3, base=4, shift=3)
        """
        return Swizzle(self.bits, self.base + extra, self.shift)

    def z3(self, x: z3.BitVecRef) -> z3.BitVecRef:
        """The swizzle on a z3 bit-vector (logical shifts): ``z3.simplify(sw.z3(c)) == sw(c)``.

        >>> import z3
        >>> z3.simplify(Swizzle(3, 4, 3).z3(z3.BitVecVal(0b1010000000, 16))).as_long()
        720
        """
        import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
        if self.bits == 0:
            return x
        y = x & z3.BitVecVal(self.yyy_mask % (1 << x.size()), x.size())
        return x ^ (z3.LShR(y, self.shift) if self.shift >= 0 else y << -self.shift)

    def __str__(self) -> str:
        return f"Sw<{self.bits},{self.base},{self.shift}>"



# ----- a swizzle whose pattern starts at an offset ------------------------------------------

@dataclass(frozen=True)
class PhasedSwizzle:
    """A :class:`Swizzle` plus an offset: the pattern starts at address ``phase``, so the XOR reads
    its source bits from ``x - phase``: ``f(x) = x ^ swizzle.xor_term(x - phase)``.

    ``phase = 0`` is the swizzle itself. The sm_90 matrix descriptor's base offset is such a
    phase (``128 * base_offset`` bytes, PTX ISA 9.7.15.5.1.2.2 "Matrix Descriptor Format").
    ``bits``/``base``/``shift`` are the swizzle's ``B``/``M``/``S``.

    >>> f = PhasedSwizzle(Swizzle(3, 4, 3), phase=128)
    >>> f(128), f(0), PhasedSwizzle(Swizzle(3, 4, 3))(1234) == Swizzle(3, 4, 3)(1234)
    (128, 112, True)
    """

    swizzle: Swizzle
    phase: int = 0

    @property
    def bits(self) -> int:
        return self.swizzle.bits

    @property
    def base(self) -> int:
        return self.swizzle.base

    @property
    def shift(self) -> int:
        return self.swizzle.shift

    def __call__(self, x):
        return x ^ self.swizzle.xor_term(x - self.phase)

    def apply(self, x):
        """The swizzled address (ints or numpy arrays): the same as calling the object."""
        return self(x)

    def z3(self, x: z3.BitVecRef) -> z3.BitVecRef:
        """:meth:`apply` on a z3 bit-vector.

        >>> import z3
        >>> z3.simplify(PhasedSwizzle(Swizzle(3, 4, 3), 128).z3(z3.BitVecVal(0, 32))).as_long()
        112
        """
        return x ^ self.swizzle.z3_xor_term(x - self.phase)

    def __str__(self) -> str:
        return f"{self.swizzle}@{self.phase}" if self.phase else str(self.swizzle)
