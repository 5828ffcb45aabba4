"""Which PTX MMA instructions lower which TTGIR dot, and which M/N block each warpgroup issues:
the correspondence the PTX audit (``verilayout.audit.ptx``) proves descriptors over.

Law (by dataflow and order, never by source location or counts alone):

* :func:`mma_groups`: the MMA instructions of a function in program order, cut at each
  ``wgmma.commit_group`` / ``tcgen05.commit`` and wherever the source location or the function
  changes: one group is one lowered dot (Triton issues a dot's wgmmas between one
  ``wgmma.fence`` and one ``wgmma.commit_group``);
* :func:`match_dots`: groups are matched to the TTGIR's dots in order (both lists are in program
  order). When there are as many groups as dots and each pair has the same source location, the
  i-th group is the i-th dot's (exact). Otherwise each group goes to the first dot not yet matched
  at or after the last match with its location, else (a copy, e.g. a peeled loop iteration) to the
  last dot matched with its location; a group no dot shares a location with is unmatched.
  Two dots on one Python line (the two loop stages of a causal attention) are thus told apart by
  their order, not merged;
* :func:`accumulator_blocks`: a dot's wgmmas that write the same accumulator registers are the
  successive K-blocks of one (M, N) block; blocks in order of first appearance;
* :func:`warpgroup_blocks`: the 64-row and ``n``-column blocks of the dot's result that
  warpgroup ``w`` holds (the result layout at warp ``4 w``): the blocks it issues wgmmas for;
* :func:`memdesc_root` / :func:`live_lines`: the allocation an operand's memdesc views, and the
  TTGIR lines over which that allocation is live.

>>> from verilayout.frontends.ptx import make_instr as Instr
>>> a = Instr("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", ("{%r1}", "%rd1", "%rd2"), 5, loc="k.py:3")
>>> c = Instr("wgmma.commit_group.sync.aligned", (), 6)
>>> b = Instr("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", ("{%r2}", "%rd1", "%rd2"), 9, loc="k.py:3")
>>> [[i.line for i in g] for g in mma_groups([a, c, b], ("wgmma.mma_async",), ("wgmma.commit_group",))]
[[5], [9]]
>>> match_dots(["k.py:3", "k.py:3"], ["k.py:3", "k.py:3"])
([0, 1], 'order')
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from verilayout.core.linear_layout import LinearLayout
from verilayout.frontends.ttgir import Op
from verilayout.hw.nvidia.ptx_model import Instr

#: Opcode prefixes of the MMA instructions and of what closes one dot's group, per architecture.
MMA_OPS = {"sm_90": (("wgmma.mma_async",), ("wgmma.commit_group",)),
           "sm_100": (("tcgen05.mma",), ("tcgen05.commit",))}


#: The MMA families a PTX file's dots are tied in: the TTGIR dot ops, the PTX MMA opcode prefixes and
#: what closes a group (``wgmma.commit_group``, ``tcgen05.commit``; ``mma.sync`` groups only by line).
DOT_FAMILIES = {"sm_90": (("ttng.warp_group_dot",),) + MMA_OPS["sm_90"],
                "sm_100": (("ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled"),) + MMA_OPS["sm_100"],
                "mma.sync": (("tt.dot",), ("mma.sync",), ())}


@dataclass(frozen=True)
class DotTies:
    """One family's PTX MMA groups (:func:`mma_groups`, in program order), the TTGIR dots (in line
    order), each group's dot index (None: unmatched) and how they were matched (:func:`match_dots`)."""
    dots: tuple[Op, ...]
    groups: tuple[tuple[Instr, ...], ...]
    owner: tuple[int | None, ...]
    how: str

    def by_dot(self) -> dict[int, list[list[Instr]]]:
        """``id(dot)`` -> its groups, in program order (unmatched groups left out)."""
        out: dict[int, list[list[Instr]]] = {}
        for g, j in zip(self.groups, self.owner):
            if j is not None:
                out.setdefault(id(self.dots[j]), []).append(list(g))
        return out


def dot_ties(instrs: Sequence[Instr], ops: Sequence[Op], family: str) -> DotTies:
    """The :class:`DotTies` of ``family`` (a key of :data:`DOT_FAMILIES`) between the PTX ``instrs``
    and the TTGIR ``ops``: :func:`mma_groups` matched to the family's dots by :func:`match_dots`.

    >>> from verilayout.frontends.ptx import make_instr
    >>> t = dot_ties([make_instr("mma.sync.aligned.m16n8k16", ("{%r1}",), 4, loc="k.py:3")],
    ...              [Op("tt.dot", 9, ("%d",), (), (), (), loc="k.py:3")], "mma.sync")
    >>> t.owner, t.how, [len(g) for gs in t.by_dot().values() for g in gs]
    ((0,), 'order', [1])
    """
    names, mma, close = DOT_FAMILIES[family]
    dots = tuple(o for o in ops if o.name in names)
    groups = mma_groups(instrs, mma, close)
    owner, how = match_dots([d.loc for d in dots], [g[0].loc for g in groups])
    return DotTies(dots, tuple(tuple(g) for g in groups), tuple(owner), how)


def mma_groups(instrs: Sequence[Instr], mma: tuple[str, ...], close: tuple[str, ...]) -> list[list[Instr]]:
    """The MMA instructions of ``instrs`` (``mma`` opcode prefixes), in order, cut at an
    instruction of ``close`` and where the location or the function changes (see the module law).

    >>> from verilayout.frontends.ptx import make_instr
    >>> x = [make_instr("tcgen05.mma.cta.kind::f16", ("[%r1]",), n, loc=l) for n, l in ((1, "a:1"), (2, "a:1"), (3, "a:2"))]
    >>> [len(g) for g in mma_groups(x, ("tcgen05.mma",), ("tcgen05.commit",))]
    [2, 1]
    """
    groups: list[list[Instr]] = []
    cur: list[Instr] = []
    for i in instrs:
        if i.opcode.startswith(close):
            if cur:
                groups.append(cur)
            cur = []
        elif i.opcode.startswith(mma):
            if cur and (cur[-1].loc != i.loc or cur[-1].func != i.func):
                groups.append(cur)
                cur = []
            cur.append(i)
    if cur:
        groups.append(cur)
    return groups


def match_dots(dot_locs: Sequence[str | None], group_locs: Sequence[str | None]) -> tuple[list[int | None], str]:
    """For each group, the index of its dot (None: unmatched), and ``"order"`` when the match is
    the exact one-to-one pairing of the module law, else ``"order and location"``.

    >>> match_dots(["a:1", "a:2"], ["a:1", "a:1", "a:2"])
    ([0, 0, 1], 'order and location')
    >>> match_dots(["a:1"], ["a:9"])
    ([None], 'order and location')
    """
    if len(dot_locs) == len(group_locs) and all(d == g for d, g in zip(dot_locs, group_locs)):
        return list(range(len(dot_locs))), "order"
    out: list[int | None] = []
    used: set[int] = set()
    last = -1
    last_by_loc: dict[str | None, int] = {}
    for loc in group_locs:
        nxt = next((j for j in range(max(last, 0), len(dot_locs)) if j not in used and dot_locs[j] == loc), None)
        if nxt is None:
            nxt = last_by_loc.get(loc)
        if nxt is not None:
            used.add(nxt)
            last = max(last, nxt)
            last_by_loc[loc] = nxt
        out.append(nxt)
    return out, "order and location"


def accumulator_blocks(group: Sequence[Instr]) -> list[list[Instr]]:
    """The group's instructions by accumulator (operand 0, whitespace ignored), blocks in order of
    first appearance, each block's instructions in program order.

    >>> from verilayout.frontends.ptx import make_instr
    >>> g = [make_instr("wgmma", (d,), n) for n, d in ((1, "{%r1}"), (2, "{%r2}"), (3, "{ %r1 }"))]
    >>> [[i.line for i in b] for b in accumulator_blocks(g)]
    [[1, 3], [2]]
    """
    blocks: dict[object, list[Instr]] = {}
    for i in group:
        blocks.setdefault(i.args[0] if i.args else None, []).append(i)
    return list(blocks.values())


def warpgroup_blocks(result: LinearLayout, num_warps: int, n_inst: int) -> list[tuple[list[int], list[int]]]:
    """For each warpgroup ``w`` of ``num_warps`` warps: the 64-row blocks and the ``n_inst``-column
    blocks of the dot's result that warp ``4 w`` holds (lane 0, every register; ``dim0``/``dim1``
    of the result layout), each sorted: the M and N blocks the plan gives that warpgroup, whose
    wgmmas it issues in this order (M blocks outer, Triton's lowering order; an inference).

    >>> from verilayout.core.linear_layout import LinearLayout
    >>> ll = LinearLayout({"register": [[0, 1], [128, 0]], "lane": [], "warp": [[0, 0], [0, 0], [64, 0]],
    ...                    "block": []}, {"dim0": 256, "dim1": 64}, require_surjective=False)
    >>> warpgroup_blocks(ll, 8, 64)
    [([0, 2], [0]), ([1, 3], [0])]
    """
    names = result.out_dim_names
    span = _register_span(result.bases.get("register", []))
    out = []
    for w in range(max(1, num_warps // 4)):
        coords = {d: 0 for d in result.in_dims}
        coords.update(register=0, warp=4 * w)
        origin = result.apply(coords)
        r0, c0 = origin[names[0]], origin[names[1]]
        out.append((sorted({(r0 ^ r) // 64 for r, _ in span}), sorted({(c0 ^ c) // n_inst for _, c in span})))
    return out


def _register_span(bases: list[list[int]]) -> set[tuple[int, int]]:
    """The (dim0, dim1) images of every register index under the register bases (each the XOR of
    the bases of its set bits: a linear layout over GF(2)), as a set.

    >>> sorted(_register_span([[0, 1], [128, 0]]))
    [(0, 0), (0, 1), (128, 0), (128, 1)]
    """
    span = {(0, 0)}
    for b in bases:
        span |= {(r ^ b[0], c ^ b[1]) for r, c in span}
    return span


def producers_by_name(ops: Sequence[Op]) -> dict[str, list[Op]]:
    """SSA name -> the ops defining it, in line order (MLIR reuses a name in sibling regions: the
    two loops of a kernel can both define ``%qk``).

    >>> from verilayout.frontends.ttgir import Op
    >>> [o.line for o in producers_by_name([Op("a", 1, ("%x",), (), (), ()), Op("b", 5, ("%x",), (), (), ())])["%x"]]
    [1, 5]
    """
    out: dict[str, list[Op]] = {}
    for op in sorted(ops, key=lambda o: o.line):
        for r in op.results:
            out.setdefault(r, []).append(op)
    return out


def memdesc_root(value: str, producers: Mapping[str, list[Op]], line: int, depth: int = 64) -> Op | None:
    """The ``ttg.local_alloc`` whose memory the memdesc ``value``, read at TTGIR ``line``, views:
    followed through the ``ttg.memdesc_*`` view ops (index, subslice, trans, reshape,
    reinterpret), each name resolved to its last definition before the line that reads it; None
    where the chain leaves them (a loop-carried block argument, a function argument, ...).

    >>> from verilayout.frontends.ttgir import Op
    >>> a = Op("ttg.local_alloc", 3, ("%a",), (), (), ())
    >>> v = Op("ttg.memdesc_index", 4, ("%v",), ("%a", "%i"), (), ())
    >>> memdesc_root("%v", producers_by_name([a, v]), 9).line
    3
    """
    for _ in range(depth):
        op = next((o for o in reversed(producers.get(value, ())) if o.line < line), None)
        if op is None:
            return None
        if op.name == "ttg.local_alloc":
            return op
        if not op.name.startswith("ttg.memdesc_") or not op.operands:
            return None
        value, line = op.operands[0], op.line
    return None


def stage_view(value: str, producers: Mapping[str, list[Op]], line: int) -> tuple[str, int]:
    """The buffer view an MMA operand read at TTGIR ``line`` is a sub-tile of, as (SSA name, line of
    its definition): ``value`` followed up through ``ttg.memdesc_subslice`` ops (static sub-tiles),
    each name resolved to its last definition before the line that reads it, stopping at anything
    else (an allocation, a pipeline slot ``memdesc_index``): two operands with the same stage view
    read one buffer at one base.

    >>> from verilayout.frontends.ttgir import Op
    >>> a = Op("ttg.local_alloc", 3, ("%a",), (), (), ())
    >>> v = Op("ttg.memdesc_subslice", 4, ("%v",), ("%a",), (), ())
    >>> stage_view("%v", producers_by_name([a, v]), 9)
    ('%a', 3)
    """
    for _ in range(64):
        op = next((o for o in reversed(producers.get(value, ())) if o.line < line), None)
        if op is None or op.name != "ttg.memdesc_subslice" or not op.operands:
            return (value, op.line if op is not None else -1)
        value, line = op.operands[0], op.line
    return (value, -1)


def live_lines(alloc: Op, ops: Sequence[Op]) -> tuple[int, int]:
    """``(first, last)`` TTGIR line at which ``alloc``'s memory is live: its definition to the last
    op that reads it or a view of it (views through ``ttg.memdesc_*`` ops; a name defined again
    by another op stops naming the view). Triton's allocator gives two buffers overlapping memory
    only when their liveness (op order, widened over loops) does not intersect; this interval is
    contained in that liveness, so two intersecting intervals mean disjoint buffers (an inference
    from Triton's allocation rule).

    >>> from verilayout.frontends.ttgir import Op
    >>> a = Op("ttg.local_alloc", 3, ("%a",), (), (), ())
    >>> live_lines(a, [a, Op("ttg.memdesc_index", 5, ("%v",), ("%a",), (), ()), Op("ttng.x", 9, (), ("%v",), (), ()),
    ...                Op("ttg.local_alloc", 11, ("%v",), (), (), ()), Op("ttng.x", 12, (), ("%v",), (), ())])
    (3, 9)
    """
    names = set(alloc.results)
    last = alloc.line
    for op in sorted(ops, key=lambda o: o.line):
        if op.line <= alloc.line:
            continue
        if names.intersection(op.operands):
            last = max(last, op.line)
            if op.name.startswith("ttg.memdesc_"):
                names.update(op.results)
                continue
        names.difference_update(op.results)
    return alloc.line, last
