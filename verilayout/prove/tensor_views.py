"""Register views that move no data: ``tt.join`` / ``tt.split`` and ``tt.reshape {allow_reorder}``.

Both questions are GF(2) comparisons of basis lists, decided exactly.

* **join / split** (Triton 3.9's ``JoinOpConversion`` / ``SplitOpConversion``, from its source):
  the lowering finds the *first* register basis of the joined layout whose last coordinate is 1,
  bit ``p``, and interleaves the two halves in runs of ``2**p`` registers (split: source registers
  with bit ``p`` clear go to the first result, set to the second). So the op moves no data iff the
  joined layout's register basis ``p`` is exactly the unit vector of the last dim, no other basis
  touches the last dim, and the half layout is the joined one with basis ``p`` removed (and the
  last coordinate dropped). Any register bit ``p`` qualifies, not only bit 0.
* **reshape with allow_reorder**: ``ReshapeOpConversion`` copies each thread's registers in order,
  so the element the result holds at hardware point ``x`` is the source's, i.e. the exact
  reshape ``want(x)``; the type declares ``have(x)``. Triton allows the two to differ when the
  user passed ``can_reorder=True``. Such a reorder is harmless to a consumer that reduces over
  the dims where they differ: :func:`reorder_verdict` proves that ``want`` and ``have`` agree on
  every other dim and hold the same duplicates (equal kernels), so each output of the reduction
  sums the same multiset of elements. (That a ``tt.reduce`` combine is insensitive to order is an
  inference from Triton's lowering, which already reduces in a tree order of its own choosing.)

>>> from verilayout.core.linear_layout import LinearLayout
>>> full = LinearLayout({"register": [[1, 0], [0, 1]], "lane": [[2, 0]]}, ["dim0", "dim1"])
>>> half = LinearLayout({"register": [[1]], "lane": [[2]]}, ["dim0"])
>>> join_split_verdict(full, half).details["register_bit"]
1
"""
from __future__ import annotations

from verilayout.core import gf2
from verilayout.core.linear_layout import LinearLayout
from verilayout.core.smt import Verdict
from verilayout.errors import LayoutError

__all__ = ["join_split_verdict", "split_register_bit", "reorder_verdict"]


def split_register_bit(full: LinearLayout) -> int | None:
    """The register bit Triton's join/split lowering treats as the last dim: the first register
    basis whose last coordinate is 1 (None when no register holds it).

    >>> from verilayout.core.linear_layout import LinearLayout
    >>> split_register_bit(LinearLayout({"register": [[1, 0], [0, 1]]}, ["dim0", "dim1"]))
    1
    """
    for i, b in enumerate(full.bases.get("register", [])):
        if b[-1] == 1:
            return i
    return None


def _half_index(d: str, j: int, p: int) -> int:
    return j - 1 if d == "register" and j > p else j


def join_split_verdict(full: LinearLayout, part: LinearLayout) -> Verdict:
    """Proved when ``part`` (each half) is ``full`` (the joined tensor, last dim of size 2) with
    the join register bit removed; else the first basis that differs (``input`` names it on
    ``full``).

    Law: proved iff ``p = split_register_bit(full)`` exists, ``full.register[p]`` is the last
    dim's unit vector, every other basis ``b`` of ``full`` has ``b[-1] == 0``, and the bases of
    ``part`` are those of ``full`` without register ``p``, each with ``b[-1]`` dropped.

    >>> from verilayout.core.linear_layout import LinearLayout
    >>> full = LinearLayout({"register": [[1, 0], [0, 1]]}, ["dim0", "dim1"])
    >>> join_split_verdict(full, LinearLayout({"register": [[2]]}, ["dim0"], require_surjective=False)).status
    'counterexample'
    """
    names = full.out_dim_names
    if len(names) < 2 or full.out_dims[names[-1]] != 2 or part.out_dim_names != names[:-1]:
        raise LayoutError(f"join/split: the joined layout's dims {full.out_dims} are not the half's "
                          f"{part.out_dims} plus a last dim of 2")
    p = split_register_bit(full)
    if p is None:
        return Verdict.fails({"register_bit": None}, f"no register holds the last dim ({names[-1]}): "
                             "the halves would have to cross threads", method="gf2")
    unit = [0] * (len(names) - 1) + [1]
    if list(full.bases["register"][p]) != unit:
        return Verdict.fails({"input": {"register": 1 << p}, "expected": unit,
                              "actual": list(full.bases["register"][p])},
                             f"register {1 << p} selects the half but also moves {names[:-1]}", method="gf2")
    for d, bases in full.bases.items():
        half = [list(b) for b in part.bases.get(d, [])]
        kept = [list(b) for j, b in enumerate(bases) if not (d == "register" and j == p)]
        if len(kept) != len(half):
            return Verdict.fails({"input": {d: None}, "expected": len(kept), "actual": len(half)},
                                 f"the halves have {len(half)} {d} bit(s), the joined layout without "
                                 f"register bit {p} has {len(kept)}", method="gf2", register_bit=p)
        for j, b in enumerate(bases):
            if d == "register" and j == p:
                continue
            h = half[_half_index(d, j, p)]
            if b[-1] != 0 or list(b[:-1]) != h:
                return Verdict.fails({"input": {d: 1 << j}, "expected": list(b[:-1]) + [0], "actual": h},
                                     f"{d} {1 << j}: the joined layout holds {list(b)}, the half holds "
                                     f"{h}", method="gf2", register_bit=p)
    return Verdict.holds(f"the last dim ({names[-1]}) is register bit {p} and every other basis is the "
                         "half's", method="gf2", register_bit=p)


def _packed_kernel_rank(a: LinearLayout, b: LinearLayout) -> tuple[int, int, int]:
    width = a.total_out_bits
    ca, cb = a.columns, b.columns
    return gf2.rank(ca), gf2.rank(cb), gf2.rank([x | (y << width) for x, y in zip(ca, cb)])


def reorder_verdict(want: LinearLayout, have: LinearLayout, free: frozenset[str] | set[str]) -> Verdict:
    """Proved when a reshape that put the data at ``want`` (the exact reshape of the source) while
    its type says ``have`` only permutes elements within the ``free`` output dims (the dims a
    consumer reduces over) and keeps the same duplicates; else the first input bit where the two
    disagree on another dim.

    Law: proved iff both have the same input dims and sizes (each thread holds as many registers),
    ``want(b)`` and ``have(b)`` agree on every output dim outside ``free`` for every basis ``b``,
    and ``rank(want) == rank(have) == rank(want x have)`` (equal kernels).

    >>> from verilayout.core.linear_layout import LinearLayout
    >>> a = LinearLayout({"register": [[1]], "lane": [[2]]}, ["dim0"])
    >>> b = LinearLayout({"register": [[2]], "lane": [[1]]}, ["dim0"])
    >>> reorder_verdict(a, b, {"dim0"}).status, reorder_verdict(a, b, set()).status
    ('proved', 'counterexample')
    """
    if want.in_dims != have.in_dims:
        return Verdict.fails({"input": None, "expected": want.in_dims, "actual": have.in_dims},
                             f"the result holds {have.in_dims} hardware bits, the source {want.in_dims}: "
                             "the register-by-register copy does not fit", method="gf2")
    if want.out_dims != have.out_dims:
        raise LayoutError(f"reorder: output dims differ ({want.out_dims} vs {have.out_dims})")
    fixed = [i for i, n in enumerate(want.out_dim_names) if n not in free]
    hb = have.bases
    for d, bases in want.bases.items():
        for j, b in enumerate(bases):
            h = hb[d][j]
            if any(b[i] != h[i] for i in fixed):
                return Verdict.fails({"input": {d: 1 << j}, "expected": list(b), "actual": list(h)},
                                     f"{d} {1 << j}: the data is at {list(b)}, the type says {list(h)}, "
                                     f"which differs outside the reduced dims {sorted(free)}", method="gf2")
    ra, rb, rab = _packed_kernel_rank(want, have)
    if not ra == rb == rab:
        return Verdict.fails({"input": None, "expected": ra, "actual": rb},
                             "the data and the type broadcast different hardware bits: a reduction "
                             "would count some elements twice", method="gf2")
    return Verdict.holds(f"the reorder only permutes elements within {sorted(free)}", method="gf2")
