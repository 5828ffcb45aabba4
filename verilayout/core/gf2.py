"""Bit-packed linear algebra over GF(2).

A vector is a Python ``int`` (bit ``i`` is coordinate ``i``); a matrix is a list of
such ints. Addition is XOR, so every routine here is exact and needs no
per-element enumeration.

>>> rank([0b011, 0b110, 0b101])
2
>>> solve([0b01, 0b10], 0b11)   # which columns XOR to 0b11?
3
"""
from __future__ import annotations

from typing import Iterable, Sequence


def xor_span(vectors: Iterable[int], select: int) -> int:
    """XOR of ``vectors[i]`` for every set bit ``i`` of ``select``.

    >>> xor_span([1, 2, 4], 0b101)
    5
    """
    acc = 0
    for i, v in enumerate(vectors):
        if (select >> i) & 1:
            acc ^= v
    return acc


def add_to_basis(basis: list[int], v: int) -> bool:
    """Insert ``v`` into ``basis`` (kept sorted, largest first, leading bits distinct) unless
    it lies in the span; returns whether it was inserted.

    Law: afterwards span(basis) = span(old basis + [v]), and the result is True iff the rank
    grew; the inserted vector is ``v`` reduced by the basis (no leading bit of the basis).

    >>> b = [0b110]
    >>> add_to_basis(b, 0b011), add_to_basis(b, 0b101), b
    (True, False, [6, 3])
    """
    for b in basis:
        v = min(v, v ^ b)
    if not v:
        return False
    basis.append(v)
    basis.sort(reverse=True)
    return True


def _reduce(vectors: Sequence[int]) -> tuple[dict[int, tuple[int, int]], list[int]]:
    """Gaussian elimination keyed by leading bit: (echelon table, nullspace combinations)."""
    table: dict[int, tuple[int, int]] = {}
    null: list[int] = []
    for idx, v in enumerate(vectors):
        comb = 1 << idx
        while v:
            top = v.bit_length() - 1  # bits.log2 inlined: the elimination's inner loop
            if top not in table:
                table[top] = (v, comb)
                break
            pv, pc = table[top]
            v ^= pv
            comb ^= pc
        if v == 0:
            null.append(comb)
    return table, null


def echelon(vectors: Sequence[int]) -> dict[int, tuple[int, int]]:
    """Reduce ``vectors`` to echelon form keyed by leading (highest) bit.

    Returns ``{pivot_bit: (reduced_vector, combination)}`` where ``combination``
    is a bit mask over the inputs whose XOR gives ``reduced_vector``. Inputs in
    the span of earlier ones are dropped.

    >>> sorted(echelon([3, 1, 2]))
    [0, 1]
    """
    return _reduce(vectors)[0]


def rank(vectors: Sequence[int]) -> int:
    """Rank of the vectors over GF(2). ``rank([1, 1]) == 1``."""
    return len(echelon(vectors))


def independent_mask(vectors: Sequence[int]) -> int:
    """Mask of the vectors that are *not* in the span of the vectors before them.

    >>> bin(independent_mask([1, 2, 3, 4]))
    '0b1011'
    """
    table: dict[int, int] = {}
    mask = 0
    for idx, v in enumerate(vectors):
        while v:
            top = v.bit_length() - 1  # bits.log2 inlined: the elimination's inner loop
            if top not in table:
                table[top] = v
                mask |= 1 << idx
                break
            v ^= table[top]
    return mask


def solve(vectors: Sequence[int], target: int) -> int | None:
    """A selection mask ``s`` with ``xor_span(vectors, s) == target``, or None.

    Among the solutions it returns the one built from the earliest independent
    vectors (the free variables, i.e. vectors dependent on earlier ones, are 0).

    >>> solve([1, 2, 3], 3)
    3
    >>> solve([2], 1) is None
    True
    """
    return solve_echelon(echelon(vectors), target)


def solve_echelon(table: dict, target: int) -> int | None:
    """:func:`solve` against a table :func:`echelon` built once (for many targets).

    >>> solve_echelon(echelon([1, 2, 3]), 3), solve_echelon(echelon([2]), 1)
    (3, None)
    """
    comb = 0
    v = target
    while v:
        top = v.bit_length() - 1  # bits.log2 inlined: the elimination's inner loop
        if top not in table:
            return None
        pv, pc = table[top]
        v ^= pv
        comb ^= pc
    return comb


def nullspace(vectors: Sequence[int]) -> list[int]:
    """Basis of ``{s : xor_span(vectors, s) == 0}`` as selection masks.

    >>> nullspace([1, 2, 3])
    [7]
    """
    return _reduce(vectors)[1]


def transpose(rows: Sequence[int], ncols: int) -> list[int]:
    """Transpose a matrix given as ``rows`` (ints with ``ncols`` bits).

    >>> transpose([0b01, 0b11], 2)
    [3, 2]
    """
    return [sum(((r >> c) & 1) << i for i, r in enumerate(rows)) for c in range(ncols)]


def intersect(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """Basis of span(a) ∩ span(b).

    >>> intersect([1, 2], [3, 4])
    [3]
    """
    ns = nullspace(list(a) + list(b))
    res = [xor_span(a, s & ((1 << len(a)) - 1)) for s in ns]
    return _basis(res)


def _basis(vectors: Sequence[int]) -> list[int]:
    mask = independent_mask(vectors)
    return [v for i, v in enumerate(vectors) if (mask >> i) & 1]
