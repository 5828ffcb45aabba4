"""Synthesize the shared-memory swizzle that needs the fewest wavefronts, with a lower-bound proof.

Given the register layout that writes a tile into shared memory and the one that
reads it back (each ``register, lane, warp[, block] -> dim0..``), :func:`synthesize`
returns the GF(2) swizzle (a shared layout ``offset -> dim0..``) minimising the
wavefronts one warp needs to write plus read the tile with ``st.shared``/``ld.shared``
of any width the layouts allow, and proves that no linear swizzle needs fewer.

The argument (notation of :mod:`verilayout.prove.banks`). A linear swizzle is an
ordered basis ``e_0, ..., e_{n-1}`` of the tensor's index space (``e_i`` is the
element at offset ``2**i``). An access of ``2**k`` elements per lane needs
``e_0..e_{k-1}`` to be register bases of its layout and every other basis of the
layout to lie in ``O = span(e_k, ...)``; when the layout covers the tensor, ``O`` is
exactly the span of those other bases. With ``rho`` the first offset bit of the
second 128-byte row and ``S = span(e_rho, ...)`` (``sigma = n - rho`` bits), one phase
needs ``2**c`` wavefronts with ``c = dim(P ∩ S)``, ``P`` the span of the phase's input
bits plus the sub-word offsets. ``S`` lies in ``O``, so
``c >= dim(P ∩ O) + sigma - dim(O)`` (the dimension formula inside ``O``). For each
choice of vectors (enumerated: every register subset and order that matters) this
bound is attained for *both* accesses at once by building ``S`` from a complement of
``P_A + P_B`` in ``O``, then the sums ``a_j + b_j`` of paired complements of
``P_A ∩ P_B`` (they avoid both), then the vectors that hit only one side, then the
common part (the construction behind Triton's ``computeSegment``, made general).
The minimum of the bound over all vector choices is the lower bound; the plan is
proved optimal when the layout built for the best choice meets it (the costs of the
built layout are recomputed by the analysis, not taken from the construction).

Also: the best layout of each wgmma swizzle mode (``#ttg.nvmma_shared`` with
swizzle 0/32/64/128 bytes, either major-ness) and the best ``#ttg.swizzled_shared``
(``vec, perPhase, maxPhase, order``), found by evaluating every candidate exactly.
"""
from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from typing import Iterable, Sequence

from verilayout.bits import log2 as _log2
from verilayout.core import gf2
from verilayout.errors import LayoutError
from verilayout.core.cga import combine_cta_cga_with_shape
from verilayout.core.triton_shared import nvmma_block_shape, nvmma_cta, swizzled_shared_cta
from verilayout.hw.nvidia.banks import (BankModel, element_bytes, lanes_per_phase, ld_st, plan_ldst,
                                        widest_chain)
from verilayout.core.linear_layout import LinearLayout
from verilayout.prove.banks import align_outs, bit_images, plan_wavefronts
from verilayout.core.smt import Verdict
from verilayout.core.mlir_print import format_attr


# ----- shared layouts Triton can name ------------------------------------------------------

def swizzled_shared_layout(shape: Sequence[int], vec: int, per_phase: int, max_phase: int,
                           order: Sequence[int]) -> LinearLayout:
    """``#ttg.swizzled_shared<{vec, perPhase, maxPhase, order}>`` as ``offset -> dim0..``, by the
    parameter-level builder the Triton front-end's converter calls too
    (:func:`verilayout.core.triton_shared.swizzled_shared_cta`, one CTA).

    Law: equals ``parse(mlir_text("swizzled_shared", ...), shape)`` (Triton ``SwizzledSharedEncodingAttr``, ``LinearLayoutConversions.cpp``).

    >>> swizzled_shared_layout([4, 8], 2, 1, 4, [1, 0]).apply({"offset": 8})
    {'dim0': 1, 'dim1': 2}
    """
    for name, v in (("vec", vec), ("perPhase", per_phase), ("maxPhase", max_phase)):
        if v < 1 or v & (v - 1):
            raise LayoutError(f"swizzled_shared {name}={v}: expected a power of two")
    shape, order = [int(v) for v in shape], [int(v) for v in order]
    if sorted(order) != list(range(len(shape))):
        raise LayoutError(f"swizzled_shared order={order}: expected a permutation of the "
                          f"{len(shape)} dims of shape {shape}")
    cta = swizzled_shared_cta(vec, per_phase, max_phase, order, shape)
    return _offset_only(combine_cta_cga_with_shape(cta, {}, tuple(shape)))


def _swizzled_2d(shape: tuple, vec: int, per_phase: int, max_phase: int, order: tuple) -> LinearLayout:
    """:func:`swizzled_shared_layout` of a 2-D tile of power-of-two dims, its bases written at once:
    offset ``2**i`` below the column count is column ``2**i``; above it, row ``r = 2**j`` at
    column ``(vec * ((r / perPhase) % maxPhase)) % ncols`` (the rows' XOR pattern of Triton's
    ``swizzledSharedToLinearLayout``; one CTA, so Triton's fit to the shape changes nothing).

    Law: ``_swizzled_2d(s, v, p, m, o) == swizzled_shared_layout(s, v, p, m, o)`` for every
    power-of-two 2-D shape (the candidate table's, tested over a sweep of shapes and parameters).

    >>> _swizzled_2d((4, 8), 2, 1, 4, (1, 0)) == swizzled_shared_layout([4, 8], 2, 1, 4, [1, 0])
    True
    """
    col, row = order
    ncols, nrows = shape[col], shape[row]
    rows = [(0, c) for c in _powers(ncols)] + [(r, (vec * ((r // per_phase) % max_phase)) % ncols)
                                               for r in _powers(nrows)]
    bases = [[b[0], b[1]] if row == 0 else [b[1], b[0]] for b in rows]
    return LinearLayout({"offset": bases}, {"dim0": shape[0], "dim1": shape[1]}, require_surjective=False)


def _powers(n: int) -> list[int]:
    """``1, 2, 4, ...`` below ``n``."""
    return [1 << i for i in range(max(0, n.bit_length() - 1))]


def nvmma_shared_layout(shape: Sequence[int], swizzle_bytes: int, elem_bits: int,
                        transposed: bool = False) -> LinearLayout:
    """``#ttg.nvmma_shared<{swizzlingByteWidth, transposed, elementBitWidth}>`` of a 2-D tile, by the
    parameter-level builder the Triton front-end's converter calls too
    (:func:`verilayout.core.triton_shared.nvmma_cta`, one CTA).

    Law: equals ``parse(mlir_text("nvmma", ...), shape)`` (Triton ``NVMMASharedEncodingAttr``; the atoms of PTX ISA 9.7.15.5.1.2).

    >>> L = nvmma_shared_layout([8, 64], 128, 16)
    >>> L.apply({"offset": 64})
    {'dim0': 1, 'dim1': 8}
    """
    if len(shape) != 2:
        raise LayoutError(f"nvmma_shared: only 2-D tiles are built here, got shape {list(shape)}")
    if swizzle_bytes not in (0, 32, 64, 128):
        raise LayoutError(f"nvmma_shared swizzlingByteWidth = {swizzle_bytes}; expected 0, 32, 64 or 128")
    if elem_bits not in (8, 16, 32, 64):
        raise LayoutError(f"nvmma_shared elementBitWidth = {elem_bits}; expected 8, 16, 32 or 64")
    shape = [int(v) for v in shape]
    tma = nvmma_block_shape(shape, elem_bits, swizzle_bytes, False, bool(transposed))
    cta = nvmma_cta(tma, shape, elem_bits, swizzle_bytes, False, bool(transposed))
    return _offset_only(combine_cta_cga_with_shape(cta, {}, tuple(shape)))


def _offset_only(lay: LinearLayout) -> LinearLayout:
    """Drop a trivial ``block`` input (one CTA): the synthesis works on ``offset -> dims``."""
    if lay.in_dims.get("block", 1) == 1 and "block" in lay.in_dims:
        return LinearLayout({"offset": lay.bases["offset"]}, dict(lay.out_dims), require_surjective=False)
    return lay


# ----- costs -------------------------------------------------------------------------------

@dataclass(frozen=True)
class AccessCost:
    """One access (write or read) of a shared layout with its best instruction."""

    role: str
    instruction: str
    wavefronts: int
    ideal_wavefronts: int
    instructions_per_warp: int

    @property
    def total(self) -> int:
        """Wavefronts one warp needs for the whole tile."""
        return self.wavefronts * self.instructions_per_warp

    def to_dict(self) -> dict:
        return {"role": self.role, "instruction": self.instruction, "wavefronts": self.wavefronts,
                "ideal_wavefronts": self.ideal_wavefronts, "instructions_per_warp": self.instructions_per_warp,
                "total": self.total}


@dataclass(frozen=True)
class Candidate:
    """A shared layout and what the accesses cost with it."""

    name: str
    layout: LinearLayout
    params: dict
    costs: tuple
    mlir: str = ""

    @property
    def total(self) -> int:
        return sum(c.total for c in self.costs)

    def to_dict(self) -> dict:
        return {"name": self.name, "mlir": self.mlir, "params": dict(self.params),
                "total_wavefronts": self.total, "costs": [c.to_dict() for c in self.costs],
                "layout": self.layout.to_dict()}

    def describe(self) -> str:
        """One line: total and per access."""
        parts = ", ".join(f"{c.role} {c.total} ({c.instruction}, {c.wavefronts}/{c.ideal_wavefronts} per "
                          f"instruction x {c.instructions_per_warp})" for c in self.costs)
        return f"{self.total} wavefronts per warp: {parts}"


def mlir_text(kind: str, params: dict, layout: LinearLayout | None = None, elem_bits: int = 16) -> str:
    """Triton MLIR attribute text of a candidate shared layout.

    >>> mlir_text("swizzled", {"vec": 8, "perPhase": 1, "maxPhase": 8, "order": [1, 0]})
    '#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>'
    """
    if kind == "wgmma":
        return format_attr("ttg.nvmma_shared", {"swizzlingByteWidth": int(params["swizzle_byte_width"]),
                                                "transposed": bool(params["transposed"]),
                                                "elementBitWidth": int(elem_bits)})
    if kind == "swizzled":
        return format_attr("ttg.swizzled_shared", {"vec": int(params["vec"]), "perPhase": int(params["perPhase"]),
                                                   "maxPhase": int(params["maxPhase"]),
                                                   "order": [int(o) for o in params["order"]]})
    bases = [[int(v) for v in b] for b in layout.bases["offset"]]
    return format_attr("ttg.shared_linear", {"offset": bases}, ", alignment = 16")


def access_cost(layout: LinearLayout, smem: LinearLayout, elem_bits: int, role: str,
                model: BankModel = BankModel()) -> AccessCost:
    """Best ``ld.shared``/``st.shared`` width for this access: fewest wavefronts per warp.

    Law: every width from one element up to the widest vector Triton's lowering takes for the
    pair (:data:`~verilayout.hw.nvidia.banks.AUTO_RULE`: register bits reaching offsets 1, 2, 4,
    ... and every other bit a multiple of the vector) is counted, ties to the wider access; one
    element per lane is always allowed. The synthesized layouts are Triton's, and the optimality
    bound of :func:`optimal_swizzle` counts over the same vectors.

    >>> from verilayout.synth.swizzle import swizzled_shared_layout
    >>> reg = LinearLayout({"register": [[0, 1], [0, 2]], "lane": [[0, 4], [0, 8], [1, 0], [2, 0], [4, 0]],
    ...                     "warp": []}, {"dim0": 8, "dim1": 16})
    >>> access_cost(reg, swizzled_shared_layout([8, 16], 1, 1, 1, [1, 0]), 32, "read").instruction
    'ld.shared.v4.b32'
    """
    return _access_cost(layout, smem, elem_bits, role, model)


@functools.lru_cache(maxsize=4096)   # the same access meets the same candidate layouts pair after pair
def _access_cost(layout: LinearLayout, smem: LinearLayout, elem_bits: int, role: str,
                 model: BankModel) -> AccessCost:
    store = role == "write"
    img = bit_images(layout, smem)
    best = None
    bits = elem_bits
    while bits <= 128:
        chain = widest_chain(img, elem_bits, bits)
        if (1 << len(chain)) * elem_bits < bits:     # Triton does not vectorise this wide
            break
        try:
            plan = plan_ldst(img, ld_st(bits, store), elem_bits, model, vector=chain)
        except LayoutError:
            break
        c = AccessCost(role, plan.instruction.name, plan_wavefronts(img, plan, model), plan.ideal_wavefronts,
                       plan.instructions_per_warp)
        if best is None or c.total <= best.total:  # ties: the wider access (fewer instructions)
            best = c
        bits *= 2
    if best is None:
        raise LayoutError(f"{role} access: no ld.shared/st.shared width fits these layouts")
    return best


def evaluate(name: str, smem: LinearLayout, accesses, elem_bits: int, params: dict | None = None,
             model: BankModel = BankModel()) -> Candidate:
    """Exact costs of every access of ``smem`` (each with its best instruction)."""
    costs = tuple(access_cost(lay, smem, elem_bits, role, model) for lay, role in accesses)
    return Candidate(name, smem, dict(params or {}), costs)


# ----- the optimum -------------------------------------------------------------------------

@dataclass(frozen=True)
class _Access:
    role: str
    layout: LinearLayout
    regs: tuple      # packed element vectors of non-broadcast register bases
    lanes: tuple     # packed element vectors of lane bases (may be 0)
    others: tuple    # warps and blocks


def _prepare(layout: LinearLayout, role: str, out_dims: dict) -> _Access:
    if not isinstance(layout, LinearLayout):
        raise LayoutError(f"{role} layout: expected a LinearLayout")
    for need in ("register", "lane"):
        if need not in layout.in_dim_names:
            raise LayoutError(f"{role} layout has no '{need}' input dim")
    shape_ref = LinearLayout({"offset": []}, out_dims, require_surjective=False)
    lay = align_outs(layout, shape_ref)
    if lay.rank() != lay.total_out_bits:
        raise LayoutError(f"{role} layout does not cover the whole tensor {dict(out_dims)}")
    cols, off, mask = {}, 0, (1 << lay.total_out_bits) - 1
    for d, b in lay._in:                 # lay.sublayout([d], every out dim).columns, read in place
        cols[d] = [c & mask for c in lay.columns[off:off + b]]
        off += b
    regs = tuple(c for c in cols["register"] if c)
    others = tuple(c for d in lay.in_dim_names if d not in ("register", "lane") for c in cols[d])
    return _Access(role, lay, regs, tuple(cols["lane"]), others)


def _pivots(vectors: Iterable[int]) -> dict[int, int]:
    """``{leading bit: vector}``: each vector reduced by the ones kept before it, kept when not
    zero, in input order; the vectors of :func:`verilayout.core.gf2.echelon` (its table without
    the combinations), so ``len`` is the rank.

    >>> _pivots([3, 1, 2])
    {1: 3, 0: 1}
    """
    return _extended({}, vectors)


def _table_of(basis: Sequence[int]) -> dict[int, int]:
    """A :func:`_pivots` table spanning ``basis``: the basis itself when its leading bits are
    distinct (a reduced basis: :func:`_reduce_basis`), else its pivots."""
    table = {v.bit_length() - 1: v for v in basis}
    return table if len(table) == len(basis) and 0 not in basis else _pivots(basis)


def _extended(table: dict[int, int], vectors: Iterable[int]) -> dict[int, int]:
    """A :func:`_pivots` table of ``span(table) + span(vectors)`` (``table`` itself not changed)."""
    table = dict(table)
    get = table.get
    for v in vectors:
        while v:
            top = v.bit_length() - 1
            p = get(top)
            if p is None:
                table[top] = v
                break
            v ^= p
    return table


def _in_span(table: dict[int, int], vectors: Iterable[int]) -> bool:
    """Every vector lies in the span of a :func:`_pivots` table."""
    get = table.get
    for v in vectors:
        while v:
            p = get(v.bit_length() - 1)
            if p is None:
                return False
            v ^= p
    return True


def _span_contains(basis: Sequence[int], vectors: Iterable[int]) -> bool:
    return _in_span(_pivots(basis), vectors)


def _reduce_basis(vectors: Sequence[int]) -> list[int]:
    return list(_pivots(vectors).values())


def _complement(sub: Sequence[int], within: Sequence[int]) -> list[int]:
    """Vectors of ``within`` extending a basis of ``sub`` to a basis of ``span(sub + within)``."""
    out = []
    base = _reduce_basis(sub)
    r = len(base)
    for v in within:
        if gf2.rank(base + out + [v]) > r + len(out):
            out.append(v)
    return out


@dataclass(frozen=True)
class _Choice:
    order: tuple          # e_0 .. e_{kmax-1}
    ks: tuple             # vector bits of each access
    lower: int            # lower bound on the summed wavefronts
    lbs: tuple            # per access: lower bound on log2 wavefronts per phase


def _phase_lanes(elem_bits: int, k: int, lane_bits: int, model: BankModel) -> int:
    return _log2(lanes_per_phase((1 << k) * elem_bits, 1 << lane_bits, model))


def _weight(acc: _Access, elem_bits: int, k: int, model: BankModel) -> int:
    nl = len(acc.lanes)
    p = _phase_lanes(elem_bits, k, nl, model)
    return (1 << (len(acc.regs) - k)) * (1 << (nl - p))


def _geometry(n: int, elem_bits: int, model: BankModel) -> tuple[int, int]:
    """(sw, rho): sub-word offset bits, and the first offset bit of the next bank row."""
    beta = _log2(element_bytes(elem_bits))
    sw = max(0, 2 - beta)
    rho = model.log2_banks + 2 - beta
    return sw, rho


def _orders(accs: Sequence[_Access], ks: Sequence[int], sw: int) -> Iterable[tuple]:
    """Vector orders that differ in what matters: each access's vector set and the sub-word set."""
    kmax = max(ks) if ks else 0
    if kmax == 0:
        yield ()
        return
    kmin = min(ks)
    small = [a for a, k in zip(accs, ks) if k > kmin] or list(accs)
    common = set(accs[0].regs)
    for a in accs[1:]:
        common &= set(a.regs)
    common_l = sorted(common)
    large = sorted(set(small[0].regs).intersection(*[set(a.regs) for a in small]))
    nsub = min(sw, kmax)
    for vs in itertools.combinations(common_l, kmin):
        rest_pool = [r for r in large if r not in vs]
        for vl in itertools.combinations(rest_pool, kmax - kmin):
            if nsub <= kmin:
                subs = itertools.combinations(vs, nsub)
                for sub in subs:
                    yield tuple(sub) + tuple(v for v in vs if v not in sub) + vl
            else:
                for extra in itertools.combinations(vl, nsub - kmin):
                    yield vs + extra + tuple(v for v in vl if v not in extra)


def _choices(accs: Sequence[_Access], n: int, elem_bits: int, model: BankModel):
    """Every feasible vector choice (up to what changes the cost) with its lower bound."""
    kcap = _log2(max(1, 128 // elem_bits))
    sw, _ = _geometry(n, elem_bits, model)
    sigma = max(0, n - _geometry(n, elem_bits, model)[1])
    memo: dict = {}          # the per-access spaces, shared by the orders that repeat a vector
    for ks in itertools.product(range(kcap + 1), repeat=len(accs)):
        for order in _orders(accs, ks, sw):
            ch = _lower_bound(accs, order, ks, n, elem_bits, sw, sigma, model, memo)
            if ch is not None:
                yield ch


def _others_of(acc: _Access, vec: Sequence[int]) -> list[int]:
    vs = list(vec)
    rest = [r for r in acc.regs]
    for v in vs:
        rest.remove(v)
    return rest + list(acc.lanes) + list(acc.others)


def _vector_space(acc: _Access, vec: tuple, n: int) -> list[int] | None:
    """A reduced basis of ``O`` (the span of ``acc``'s bases other than the vector ``vec``), or
    None when ``vec`` is no vector of ``acc`` (not its register bases, dependent, or ``O`` and
    ``vec`` do not span the ``n``-bit tensor)."""
    got = _space_of(acc.regs, acc.lanes, acc.others, vec, n)
    return None if got is None else list(got)


@functools.lru_cache(maxsize=1 << 14)   # packed vectors only: the searches of a process share them
def _space_of(regs: tuple, lanes: tuple, others: tuple, vec: tuple, n: int) -> tuple | None:
    """:func:`_vector_space` of the access whose register, lane and other bases are given."""
    k = len(vec)
    if any(v not in regs for v in vec):
        return None
    if len(set(vec)) != k or len(_pivots(vec)) != k:
        return None
    rest = list(regs)
    for v in vec:
        rest.remove(v)
    o = _reduce_basis(rest + list(lanes) + list(others))
    if len(o) != n - k or len(_extended(_table_of(o), vec)) != n:
        return None
    return tuple(o)


def _lower_bound(accs, order, ks, n, elem_bits, sw, sigma, model, memo: dict | None = None) -> _Choice | None:
    memo = {} if memo is None else memo
    kmax = len(order)
    os_ = []
    for i, (acc, k) in enumerate(zip(accs, ks)):
        key = ("o", i, order[:k])
        if key not in memo:
            memo[key] = _vector_space(acc, order[:k], n)
        if memo[key] is None:
            return None
        os_.append(memo[key])
    # nested: span(e_k..) must be the same space whichever access defines it
    big = os_[ks.index(kmax)] if kmax else os_[0]
    tbig = tuple(big)
    for acc, k, o in zip(accs, ks, os_):
        if not _nested(order[k:], tbig, tuple(o), n - k):
            return None
    fixed_sub = tuple(order[:min(sw, kmax)])
    total, lbs = 0, []
    for i, (acc, k) in enumerate(zip(accs, ks)):
        key = ("w", i, k)                    # the access's phase lanes and weight at vector k
        if key not in memo:
            memo[key] = (acc.lanes[:_phase_lanes(elem_bits, k, len(acc.lanes), model)],
                         _weight(acc, elem_bits, k, model))
        lanes, weight = memo[key]
        q = _meet_dim(order[:k] + lanes + fixed_sub, tbig) if big else 0
        lb = max(0, q + sigma - len(big))
        lbs.append(lb)
        total += weight << lb
    return _Choice(tuple(order), tuple(ks), total, tuple(lbs))


@functools.lru_cache(maxsize=1 << 16)   # GF(2) facts of packed vectors: the searches of one audit share them
def _nested(rest: tuple, big: tuple, o: tuple, dim: int) -> bool:
    """``span(rest + big)`` contains ``o`` and has dimension ``dim``."""
    table = _shared_table(big)
    get, own = table.get, {}            # _extended(table, rest) without copying the table: its new rows
    for v in rest:
        while v:
            top = v.bit_length() - 1
            p = get(top)
            if p is None:
                p = own.get(top)
                if p is None:
                    own[top] = v
                    break
            v ^= p
    if len(table) + len(own) != dim:
        return False
    for v in o:                         # _in_span of the table and its new rows
        while v:
            top = v.bit_length() - 1
            p = get(top)
            if p is None:
                p = own.get(top)
                if p is None:
                    return False
            v ^= p
    return True


@functools.lru_cache(maxsize=1 << 16)
def _meet_dim(phase: tuple, big: tuple) -> int:
    """The dimension of ``span(phase) & span(big)``: ``rank(phase) + rank(big) - rank(phase + big)``."""
    table = _shared_table(big)
    get, own, grown = table.get, {}, 0      # _pivots(phase) and _extended(table, phase), one pass each
    for v in phase:
        while v:                            # v reduced by big and the phase vectors kept
            top = v.bit_length() - 1
            p = get(top)
            if p is None:
                p = own.get(top)
                if p is None:
                    own[top] = v
                    grown += 1
                    break
            v ^= p
    return len(_pivots(phase)) - grown


@functools.lru_cache(maxsize=1 << 12)   # one search meets the same span for many vector orders
def _shared_table(basis: tuple) -> dict[int, int]:
    """:func:`_table_of` ``basis``, made once; shared by its callers, so read only (``_extended``
    copies the table it is given)."""
    return _table_of(basis)


def _build_s(big: list[int], qs: list[list[int]], sigma: int) -> list[int]:
    """A ``sigma``-dim subspace of span(big) meeting each span(qs[i]) as little as possible."""
    qs = [_reduce_basis(q) for q in qs]
    if len(qs) == 1:
        qa = qs[0]
        free = _complement(qa, big)
        return (free + qa)[:sigma]
    qa, qb = qs[0], qs[1]
    inter = _reduce_basis(gf2.intersect(qa, qb))
    a_only = _complement(inter, qa)
    b_only = _complement(inter, qb)
    free = _complement(qa + qb, big)
    pairs = [x ^ y for x, y in zip(a_only, b_only)]
    m = min(len(a_only), len(b_only))
    left = a_only[m:] + b_only[m:]
    seq = free + pairs + left + inter + b_only[:m]
    out: list[int] = []
    for v in seq:
        if len(out) == sigma:
            break
        if gf2.rank(out + [v]) > len(out):
            out.append(v)
    return out


def _layout_from_basis(basis: Sequence[int], ref: LinearLayout) -> LinearLayout:
    """``offset -> dims`` whose offset ``2**i`` is the packed element ``basis[i]``."""
    mask = (1 << ref.total_out_bits) - 1       # each row is the basis value split over ref's out dims
    return LinearLayout._raw((("offset", len(basis)),), ref._out, [v & mask for v in basis])


def _construct(accs, choice: _Choice, n: int, elem_bits: int, model: BankModel) -> list[int] | None:
    sw, rho = _geometry(n, elem_bits, model)
    sigma = max(0, n - rho)
    order = list(choice.order)
    kmax = len(order)
    main = accs[choice.ks.index(kmax)] if kmax else accs[0]
    big = _reduce_basis(_others_of(main, order))
    fixed_sub = order[:min(sw, kmax)]
    qs = []
    for acc, k in zip(accs, choice.ks):
        p = _phase_lanes(elem_bits, k, len(acc.lanes), model)
        phase = order[:k] + list(acc.lanes[:p]) + fixed_sub
        qs.append(gf2.intersect(phase, big))
    s = _build_s(big, qs, sigma) if sigma else []
    if len(s) < sigma:
        return None
    rest = _complement(s, big)  # bank part (and free sub-word offsets)
    nsub = max(0, sw - kmax)
    if nsub:
        common = big
        for acc, k in zip(accs, choice.ks):
            p = _phase_lanes(elem_bits, k, len(acc.lanes), model)
            common = gf2.intersect(common, order[:k] + list(acc.lanes[:p]))
        pick = [v for v in _reduce_basis(common) if gf2.rank(s + [v]) > len(s)][:nsub]
        pick = _complement([], pick)
        rest = pick + [v for v in _complement(pick + s, big)]
    basis = order + rest + s
    if gf2.rank(basis) != n or len(basis) != n:
        return None
    return basis


@dataclass(frozen=True)
class SwizzlePlan:
    """The synthesized swizzle, its proof of optimality, and the best named alternatives."""

    best: Candidate
    lower_bound: int
    verdict: Verdict
    wgmma: dict
    swizzled: Candidate | None
    elem_bits: int
    shape: dict

    def summary(self) -> str:
        """Lines for people: the optimum, its proof, the best named layouts."""
        state = "proved optimal over GF(2) swizzles" if self.verdict.proved else \
            f"optimality {self.verdict.status}: {self.verdict.reason}"
        lines = [f"optimal swizzle: {self.best.describe()}",
                 f"  lower bound {self.lower_bound}: {state}",
                 f"  {self.best.mlir}",
                 "best per wgmma swizzle mode (#ttg.nvmma_shared):"]
        for mode, cand in self.wgmma.items():
            if cand is None:
                lines.append(f"  {mode:>4}: not available for this tile")
            else:
                lines.append(f"  {mode:>4}: {cand.describe()}")
                lines.append(f"        {cand.mlir}")
        if self.swizzled is not None:
            lines.append(f"best #ttg.swizzled_shared: {self.swizzled.describe()}")
            lines.append(f"  {self.swizzled.mlir}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"best": self.best.to_dict(), "lower_bound": self.lower_bound, "verdict": self.verdict.to_dict(),
                "wgmma": {k: (v.to_dict() if v else None) for k, v in self.wgmma.items()},
                "swizzled_shared": self.swizzled.to_dict() if self.swizzled else None,
                "elem_bits": self.elem_bits, "shape": dict(self.shape)}


def optimal_swizzle(accesses, elem_bits: int, out_dims: dict, model: BankModel = BankModel()
                    ) -> tuple[Candidate, int, Verdict]:
    """The best GF(2) swizzle for ``accesses`` (``[(layout, "write"|"read"), ...]``), bound, verdict."""
    if not 1 <= len(accesses) <= 2:
        raise LayoutError("swizzle synthesis takes one or two accesses (write and/or read)")
    return _optimal_swizzle(tuple((lay, role) for lay, role in accesses), elem_bits,
                            tuple(out_dims.items()), model)


@functools.lru_cache(maxsize=256)   # the audit meets one conversion's layout pair kernel after kernel
def _optimal_swizzle(accesses: tuple, elem_bits: int, out_items: tuple, model: BankModel
                     ) -> tuple[Candidate, int, Verdict]:
    out_dims = dict(out_items)
    accs = [_prepare(lay, role, out_dims) for lay, role in accesses]
    n = accs[0].layout.total_out_bits
    choices = sorted(_choices(accs, n, elem_bits, model), key=lambda c: (c.lower, -len(c.order)))
    if not choices:
        raise LayoutError("no shared layout lets both accesses work (their layouts conflict)")
    lower = choices[0].lower
    ref = accs[0].layout
    best: Candidate | None = None
    for ch in choices:
        if best is not None and ch.lower >= best.total:
            break
        basis = _construct(accs, ch, n, elem_bits, model)
        if basis is None:
            continue
        smem = _layout_from_basis(basis, ref)
        cand = evaluate("optimal", smem, [(a.layout, a.role) for a in accs], elem_bits,
                        {"vector_elems": [1 << k for k in ch.ks]}, model)
        cand = Candidate(cand.name, cand.layout, cand.params, cand.costs, mlir_text("linear", {}, smem))
        if best is None or cand.total < best.total:
            best = cand
    assert best is not None
    if best.total < lower:      # the bound's own premise failed: claim nothing
        v = Verdict.unknown(f"best found needs {best.total} wavefronts per warp, below the computed "
                            f"bound {lower}: the bound does not hold here; optimality not proved",
                            method="gf2", lower_bound=lower)
    elif best.total == lower:
        v = Verdict.holds(f"{best.total} wavefronts per warp meets the lower bound: for every vector "
                          f"choice, dim(P ∩ S) >= dim(P ∩ O) + dim S - dim O inside O", method="gf2",
                          lower_bound=lower)
    else:
        v = Verdict.unknown(f"best found needs {best.total} wavefronts per warp, the lower bound is "
                            f"{lower}; optimality not proved", method="gf2", lower_bound=lower)
    return best, lower, v


def _named_candidates(shape: Sequence[int], elem_bits: int, swizzled: bool = True):
    """``(family, name, layout, params)`` of every layout Triton can name for ``shape``: the
    ``nvmma_shared`` modes, then (``swizzled``) every invertible ``swizzled_shared``."""
    for family, name, lay, params in _candidate_table(tuple(int(v) for v in shape), elem_bits, swizzled):
        yield family, name, lay, {k: (list(v) if isinstance(v, tuple) else v) for k, v in params}


class _Lazy:
    """The items of ``gen``, each made once when first asked for and kept for every later pass
    (a scan that stops early leaves the rest unmade); an error of ``gen`` is raised again by
    every pass that reaches it, as a table built at once would raise on every call."""

    def __init__(self, gen) -> None:
        self._gen, self._done, self._error = gen, [], None

    def __iter__(self):
        i = 0
        while True:
            if i == len(self._done):
                if self._error is not None:
                    raise self._error
                try:
                    nxt = next(self._gen, None)
                except Exception as e:   # kept: the generator is closed after raising
                    self._error = e
                    raise
                if nxt is None:
                    return
                self._done.append(nxt)
            yield self._done[i]
            i += 1


@functools.lru_cache(maxsize=32)   # the audit asks for the same tile shapes kernel after kernel
def _candidate_table(shape: tuple, elem_bits: int, swizzled: bool) -> _Lazy:
    """``(family, name, layout, params)`` of every named layout for ``shape``, made as scanned."""
    return _Lazy(_candidates(shape, elem_bits, swizzled))


def _candidates(shape: tuple, elem_bits: int, swizzled: bool):
    for sw in (0, 32, 64, 128):
        for tr in (False, True):
            try:
                lay = nvmma_shared_layout(shape, sw, elem_bits, tr)
            except LayoutError:
                continue
            yield ("wgmma", f"{sw}B" if sw else "none", lay, (("swizzle_byte_width", sw), ("transposed", tr)))
    if swizzled:
        yield from _swizzled_candidates(shape)


def _swizzled_candidates(shape: tuple):
    rank = len(shape)
    seen: set = set()
    fast = rank == 2 and all(v >= 1 and v & (v - 1) == 0 for v in shape)   # else the builder's own errors
    for order in ((1, 0), (0, 1)) if rank == 2 else (tuple(range(rank))[::-1],):
        for vec in (1, 2, 4, 8, 16):
            for per in (1, 2, 4, 8):
                for mx in (1, 2, 4, 8, 16):
                    if mx == 1 and (vec, per) != (1, 1):
                        continue
                    lay = _swizzled_2d(shape, vec, per, mx, order) if fast else \
                        swizzled_shared_layout(shape, vec, per, mx, order)
                    if lay in seen or not lay.is_invertible():
                        continue          # a layout named before costs the same: the first name is kept
                    seen.add(lay)
                    yield ("swizzled", "swizzled_shared", lay,
                           (("vec", vec), ("perPhase", per), ("maxPhase", mx), ("order", order)))


def synthesize(write: LinearLayout | None, read: LinearLayout | None, *, elem_bits: int,
               num_banks: int = 32, swizzled: bool = True) -> SwizzlePlan:
    """Best swizzle for writing with ``write`` and reading with ``read`` (either may be None).
    ``swizzled=False`` skips the ``swizzled_shared`` family (when only an MMA-readable
    ``nvmma_shared`` layout can be used, as for a wgmma operand).

    >>> from verilayout.core.linear_layout import LinearLayout
    >>> rows = LinearLayout({"register": [[0, 1], [0, 2]], "lane": [[0, 4], [0, 8], [0, 16], [1, 0], [2, 0]],
    ...                      "warp": [[4, 0], [8, 0]]}, ["dim0", "dim1"])
    >>> cols = LinearLayout({"register": [[1, 0], [2, 0]], "lane": [[4, 0], [8, 0], [0, 1], [0, 2], [0, 4]],
    ...                      "warp": [[0, 8], [0, 16]]}, ["dim0", "dim1"])
    >>> p = synthesize(rows, cols, elem_bits=32)
    >>> p.best.total, p.lower_bound, p.verdict.status
    (8, 8, 'proved')
    """
    return _synthesize(write, read, elem_bits, num_banks, swizzled)


@functools.lru_cache(maxsize=256)   # an audit meets the same (layout, tile) pair in kernel after kernel
def _synthesize(write: LinearLayout | None, read: LinearLayout | None, elem_bits: int,
                num_banks: int, swizzled: bool) -> SwizzlePlan:
    model = BankModel(num_banks=num_banks)
    accesses = [(lay, role) for lay, role in ((write, "write"), (read, "read")) if lay is not None]
    if not accesses:
        raise LayoutError("give a write layout, a read layout, or both")
    out_dims = _common_out_dims([lay for lay, _ in accesses])
    best, lower, verdict = optimal_swizzle(accesses, elem_bits, out_dims, model)
    shape = list(out_dims.values())
    floor = lower if best.total >= lower else None      # the bound, where its premise held
    wgmma, swz = _best_named(accesses, elem_bits, shape, tuple(out_dims), swizzled, model, floor)
    wgmma = {k: _with_mlir(c, "wgmma", elem_bits) for k, c in wgmma.items()}   # the text of the kept ones only
    return SwizzlePlan(best, lower, verdict, wgmma, _with_mlir(swz, "swizzled", elem_bits), elem_bits, out_dims)


def _best_named(accesses: list, elem_bits: int, shape: list, names: tuple, swizzled: bool,
                model: BankModel, floor: int | None) -> tuple[dict, Candidate | None]:
    """The cheapest ``nvmma_shared`` layout of each swizzle width and the cheapest
    ``swizzled_shared`` layout (the first named on ties) for ``accesses``.

    Law: every candidate is a linear shared layout, so none costs fewer than the lower bound
    ``floor`` of :func:`optimal_swizzle`; once a ``swizzled_shared`` layout reaches ``floor``
    no later one can replace it (ties keep the first), and the rest of that family is skipped.
    ``floor=None`` evaluates every candidate.

    >>> reg = LinearLayout({"register": [[0, 1]], "lane": [[0, 2], [0, 4], [0, 8], [1, 0], [2, 0]],
    ...                     "warp": []}, {"dim0": 4, "dim1": 16})
    >>> _best_named([(reg, "read")], 32, [4, 16], ("dim0", "dim1"), True, BankModel(), 2)[1].total
    2
    """
    wgmma: dict = {"none": None, "32B": None, "64B": None, "128B": None}
    swz = None
    for family, name, lay, params in _named_candidates(shape, elem_bits, swizzled):
        if family != "wgmma" and swz is not None and floor is not None and swz.total <= floor:
            break                 # the table lists every nvmma_shared layout first: none is left
        lay = _transposed(lay, names)
        cand = evaluate(f"{family} {name}" if family == "wgmma" else name, lay, accesses, elem_bits, params, model)
        if family == "wgmma":
            cur = wgmma[name]
            if cur is None or cand.total < cur.total:
                wgmma[name] = cand
        elif swz is None or cand.total < swz.total:
            swz = cand
    return wgmma, swz


def _with_mlir(cand: Candidate | None, family: str, elem_bits: int) -> Candidate | None:
    """``cand`` with its MLIR attribute text (:func:`mlir_text`)."""
    if cand is None:
        return None
    return Candidate(cand.name, cand.layout, cand.params, cand.costs,
                     mlir_text(family, cand.params, cand.layout, elem_bits))


@functools.lru_cache(maxsize=1024)   # a candidate table's layouts, in the dim order of the accesses
def _transposed(lay: LinearLayout, names: tuple) -> LinearLayout:
    return lay.transpose_outs(list(names))


def _common_out_dims(layouts: Sequence[LinearLayout]) -> dict:
    names = layouts[0].out_dim_names
    out = {}
    for lay in layouts:
        if set(lay.out_dim_names) != set(names):
            raise LayoutError(f"the write and read layouts cover different dims: "
                              f"{layouts[0].out_dim_names} vs {lay.out_dim_names}")
    for n in names:
        out[n] = max(lay.out_dims[n] for lay in layouts)
    return out
