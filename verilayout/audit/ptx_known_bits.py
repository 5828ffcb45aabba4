"""Known bits of a bit-vector term: which bits are 0 and which are 1 for every value of its
symbols, by one pass over the term (no solver).

A descriptor's fields are often one constant although its start address is not: Triton writes
``((addr >> 4) & 0x3FFF | fields)`` with ``addr`` depending on the shared-memory base and on the
loop; the field bits of such a term are known without a proof search. The analysis is the usual
forward "known bits" abstraction (as compilers compute it for bit-twiddling, e.g. LLVM's
``computeKnownBits``): each node gets ``(zeros, ones)``, masks of the bits it is known to have,
from its operands' masks; an operator outside the table below knows nothing.

Law (soundness): for every assignment of the symbols, every bit in ``zeros`` of the term's value
is 0 and every bit in ``ones`` is 1. Hence when ``zeros | ones`` covers the width, the term is
the constant ``ones`` for every assignment (:func:`known_constant`).

>>> import z3
>>> x = z3.BitVec("x", 32)
>>> known_constant((z3.ZeroExt(32, z3.ZeroExt(17, z3.Extract(18, 4, x)) + 0x80) | 0x4000004000000000)
...                & 0xFFFFFFFFFFFF0000)
4611686293305294848
>>> known_constant(x & 0xFF00) is None
True
"""
from __future__ import annotations

import z3

__all__ = ["known_bits", "known_constant"]

#: the most nodes one term may have before the analysis gives up (it is a shortcut, never needed)
MAX_NODES = 4096


def known_constant(e: z3.BitVecRef) -> int | None:
    """The value of ``e`` when all of its bits are known (the same for every value of its
    symbols), else None (nothing is claimed: the caller decides by other means).

    >>> known_constant(z3.BitVecVal(5, 8) | (z3.BitVec("y", 8) & 0))
    5
    """
    got = known_bits(e)
    if got is None:
        return None
    zeros, ones = got
    full = (1 << e.size()) - 1
    return ones if (zeros | ones) == full else None


def known_bits(e: z3.BitVecRef) -> tuple[int, int] | None:
    """``(zeros, ones)``: the bits of ``e`` known to be 0 and known to be 1 for every value of its
    symbols (see the module's law); None for a term that is not a bit-vector or is too large.

    >>> known_bits(z3.ZeroExt(4, z3.BitVec("z", 4)))
    (240, 0)
    """
    if not z3.is_bv(e):
        return None
    ctx = e.ctx.ref()
    try:
        return _shared_walk(e, ctx)
    except _Unsure:
        pass
    try:
        return _Walk(ctx).node(e.as_ast())
    except _TooLarge:
        return None


#: Known bits and a bound on the distinct nodes below, by node id, of every term walked in this
#: process (terms are hash-consed: a descriptor chain's subterms recur across a file's
#: instructions). The terms are kept, so their nodes' ids stay theirs; cleared past _SHARED_MAX.
_SHARED: dict = {"ctx": None, "memo": {}, "bound": {}, "kept": []}
_SHARED_MAX = 200_000


def _shared_walk(e: z3.BitVecRef, ctx) -> tuple[int, int]:
    """:class:`_Walk`'s answer for ``e`` through the process-wide memo; raises ``_Unsure`` where the
    term may reach :class:`_Walk`'s size limit (the caller then walks ``e`` alone, as without the
    memo: the limit then falls where it did)."""
    if _SHARED["ctx"] is not ctx or len(_SHARED["memo"]) > _SHARED_MAX:
        _SHARED.update(ctx=ctx, memo={}, bound={}, kept=[])
    _SHARED["kept"].append(e)                # before the walk: a partial walk's nodes are kept too
    w = _MemoWalk(ctx, _SHARED["memo"], _SHARED["bound"])
    got = w.node(e.as_ast())
    if w.acc[0] > MAX_NODES:
        raise _Unsure
    return got


class _Unsure(Exception):
    pass


class _TooLarge(Exception):
    pass


class _Walk:
    """The rules over z3's C API (the Python wrappers cost several times more per node); one
    memo per term, by node id."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.memo: dict[int, tuple[int, int]] = {}

    def width(self, a) -> int:
        return z3.Z3_get_bv_sort_size(self.ctx, z3.Z3_get_sort(self.ctx, a))

    def node(self, a) -> tuple[int, int]:
        key = z3.Z3_get_ast_id(self.ctx, a)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        if len(self.memo) >= MAX_NODES:
            raise _TooLarge
        got = self.memo[key] = self.rule(a)
        return got

    def args(self, a) -> list:
        return [z3.Z3_get_app_arg(self.ctx, a, i) for i in range(z3.Z3_get_app_num_args(self.ctx, a))]

    def rule(self, a) -> tuple[int, int]:
        """The known bits of one node from its operands' (nothing known for an unlisted operator)."""
        ctx = self.ctx
        full = (1 << self.width(a)) - 1
        kind = z3.Z3_get_ast_kind(ctx, a)
        if kind == z3.Z3_NUMERAL_AST:
            v = int(z3.Z3_get_numeral_string(ctx, a))
            return full & ~v, v
        if kind != z3.Z3_APP_AST:
            return 0, 0
        d = z3.Z3_get_app_decl(ctx, a)
        k = z3.Z3_get_decl_kind(ctx, d)
        if k == z3.Z3_OP_ITE:
            _c, x, y = self.args(a)
            (xz, xo), (yz, yo) = self.node(x), self.node(y)
            return xz & yz, xo & yo
        if k == z3.Z3_OP_ZERO_EXT:
            (x,) = self.args(a)
            z, o = self.node(x)
            return z | (full & ~((1 << self.width(x)) - 1)), o
        if k == z3.Z3_OP_EXTRACT:
            lo = z3.Z3_get_decl_int_parameter(ctx, d, 1)
            z, o = self.node(self.args(a)[0])
            return (z >> lo) & full, (o >> lo) & full
        if k == z3.Z3_OP_CONCAT:
            z, o = 0, 0
            for c in self.args(a):
                cz, co = self.node(c)
                n = self.width(c)
                z, o = (z << n) | cz, (o << n) | co
            return z, o
        if k == z3.Z3_OP_BAND or k == z3.Z3_OP_BOR:
            kids = [self.node(c) for c in self.args(a)]
            if k == z3.Z3_OP_BAND:
                z, o = 0, full
                for cz, co in kids:
                    z, o = z | cz, o & co
                return z, o
            z, o = full, 0
            for cz, co in kids:
                z, o = z & cz, o | co
            return z, o
        if k == z3.Z3_OP_BADD:
            return _add([self.node(c) for c in self.args(a)], full.bit_length())
        if k == z3.Z3_OP_BSHL or k == z3.Z3_OP_BLSHR:
            x, amount = self.args(a)
            if z3.Z3_get_ast_kind(ctx, amount) != z3.Z3_NUMERAL_AST:
                return 0, 0
            return _shifted(self.node(x), int(z3.Z3_get_numeral_string(ctx, amount)), full, k == z3.Z3_OP_BSHL)
        return 0, 0


class _MemoWalk(_Walk):
    """:class:`_Walk` over a shared memo: each node's known bits once per process, and with them a
    bound on the distinct nodes the plain walk would visit from it (1 plus its walked operands'
    bounds, capped above ``MAX_NODES``). A root bound within ``MAX_NODES`` means the plain walk
    stays within its limit too (it stops only past ``MAX_NODES`` distinct nodes); any other term
    (a bound or ``MAX_NODES`` new nodes past it) is left to the plain walk (``_Unsure``)."""

    def __init__(self, ctx, shared: dict, bound: dict) -> None:
        super().__init__(ctx)
        self.shared, self.bound, self.acc, self.new = shared, bound, [0], 0

    def node(self, a) -> tuple[int, int]:
        key = z3.Z3_get_ast_id(self.ctx, a)
        hit = self.memo.get(key) or self.shared.get(key)
        if hit is None:
            self.new += 1
            if self.new > MAX_NODES:
                raise _Unsure
            self.acc.append(1)
            try:
                hit = self.rule(a)
            finally:
                b = min(self.acc.pop(), MAX_NODES + 1)
            self.shared[key], self.bound[key] = hit, b
        self.memo[key] = hit
        self.acc[-1] += self.bound[key]
        return hit


def _shifted(known: tuple[int, int], s: int, full: int, left: bool) -> tuple[int, int]:
    """Known bits of ``x << s`` (``left``) or ``x >> s`` (logical) from those of ``x``."""
    z, o = known
    if s >= full.bit_length():
        return full, 0
    if left:
        return ((z << s) | ((1 << s) - 1)) & full, (o << s) & full
    return (z >> s) | (full & ~(full >> s)), o >> s


def _add(kids: list[tuple[int, int]], w: int) -> tuple[int, int]:
    """Known bits of a sum modulo ``2**w``: operands whose possible one bits are disjoint add
    without carries (their sum is their OR); otherwise the common trailing zeros stay zero, and
    when the largest possible sum is below ``2**w`` the bits above it are zero."""
    full = (1 << w) - 1
    maybe = [full & ~z for z, _o in kids]
    seen = 0
    for m in maybe:
        if seen & m:
            break
        seen |= m
    else:                                                     # no two operands share a possible 1
        z, o = full, 0
        for cz, co in kids:
            z, o = z & cz, o | co
        return z, o
    trailing = min(((m & -m).bit_length() - 1) if m else w for m in maybe)
    zeros = (1 << trailing) - 1
    top = sum(maybe)
    if top <= full:
        zeros |= full & ~((1 << top.bit_length()) - 1)
    return zeros, 0
