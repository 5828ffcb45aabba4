"""Thread-block clusters of the Hopper GEMM: which CTA of a ``CM x CN`` cluster loads which slice
of a shared operand, the TMA multicast masks, the bytes each CTA's full barrier expects and the
CTAs each consumer releases a stage to, each with its proof.

The cluster's CTAs work on neighbouring tiles: rank ``r`` (``%cluster_ctarank``) sits at
``(r % CM, r // CM)`` and, in cluster tile ``(ctm, ctn)``, computes tile
``(ctm CM + r % CM, ctn CN + r // CM)``. The ``CN`` CTAs with the same ``r % CM`` share A's M block:
each loads ``BM / CN`` rows of it and multicasts them to the group (``.multicast::cluster`` with a
CTA mask); likewise the ``CM`` CTAs with the same ``r // CM`` share B's N block. Each CTA's full
barrier then receives a whole stage (its expect_tx is unchanged) and a stage slot of CTA ``x`` is
written by the producers of every CTA in ``x``'s two groups, so each consumer releases its slot
to all of them (a remote ``mbarrier.arrive`` through ``mapa``), and each producer's empty barrier
counts the consumers of every CTA it writes into.

>>> p = cluster_plan(2, 1, consumers=2)
>>> p["a_masks"], p["b_masks"], p["peers"], p["empty_count"]
([1, 2], [3, 3], [3, 3], 16)
>>> sorted({o["status"] for o in p["obligations"]})
['proved']
"""
from __future__ import annotations


from verilayout.errors import LayoutError

__all__ = ["CLUSTER_SHAPES", "SM100_CLUSTER_SHAPES", "SM100_PAIR_CLUSTER_SHAPES", "require_cluster", "cluster_tile",
           "share_mask", "cluster_plan", "pair_share_mask", "pair_cluster_plan"]

#: Cluster shapes ``(CM, CN)`` the emitter writes (1x1: no cluster).
CLUSTER_SHAPES = ((1, 1), (2, 1), (1, 2))
#: Cluster shapes of the sm_100a ``cta_group::1`` kernel: up to 4 CTAs (a multicast mask names
#: each CTA of the cluster; PTX ISA 9.7.9.25 cp.async.bulk.tensor, ``ctaMask``).
SM100_CLUSTER_SHAPES = ((1, 1), (2, 1), (1, 2), (2, 2), (4, 1), (1, 4))
#: Cluster shapes (in CTAs) of the sm_100a ``cta_group::2`` kernel: CTA pairs (ranks ``2k, 2k + 1``,
#: neighbours along M: PTX ISA 9.7.16, the peer CTA's ``%cluster_ctarank`` differs in bit 0) -- 2x1
#: one pair, 4x1 two pairs along M sharing B, 2x2 two pairs along N sharing A.
SM100_PAIR_CLUSTER_SHAPES = ((2, 1), (4, 1), (2, 2))


def _shape_words(shapes: tuple) -> str:
    """``1x1, 2x1 or 1x2``: the shapes in words."""
    names = [f"{m}x{n}" for m, n in shapes]
    return ", ".join(names[:-1]) + " or " + names[-1]


def require_cluster(shape: object, shapes: tuple = CLUSTER_SHAPES) -> tuple[int, int]:
    """``shape`` if it is one of ``shapes`` (:data:`CLUSTER_SHAPES`), else ``LayoutError`` (the spelling
    ``2x1`` is read at the door: :func:`verilayout.frontends.names.parse_cluster`).

    >>> require_cluster((2, 1))
    (2, 1)
    >>> require_cluster((4, 4))
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: --cluster '4x4': expected 1x1, 2x1 or 1x2
    """
    if isinstance(shape, tuple) and shape in shapes:
        return shape
    ok = isinstance(shape, tuple) and len(shape) == 2 and all(type(v) is int for v in shape)
    shown = repr(f"{shape[0]}x{shape[1]}") if ok else repr(shape)
    raise LayoutError(f"--cluster {shown}: expected {_shape_words(shapes)}")


def cluster_tile(rank: int, ctm: int, ctn: int, cm: int, cn: int) -> tuple[int, int]:
    """The tile ``(tm, tn)`` rank ``rank`` computes in cluster tile ``(ctm, ctn)``.

    >>> [cluster_tile(r, 3, 5, 2, 1) for r in range(2)]
    [(6, 5), (7, 5)]
    """
    return ctm * cm + rank % cm, ctn * cn + rank // cm


def share_mask(rank: int, cm: int, cn: int, operand: str) -> int:
    """The CTA mask of the ranks that read the same A (M block) or B (N block) as ``rank``.

    >>> share_mask(0, 1, 2, "A"), share_mask(1, 2, 1, "A"), share_mask(1, 2, 1, "B")
    (3, 2, 3)
    """
    if operand == "A":
        return sum(1 << (rank % cm + cm * j) for j in range(cn))
    return sum(1 << (rank // cm * cm + i) for i in range(cm))


def _mask_obligation(masks: list[int], cm: int, cn: int, operand: str, span: int = 4) -> dict:
    """Brute force over the ranks and ``span x span`` cluster tiles: bit ``x`` of rank ``r``'s
    mask is set exactly when CTA ``x`` computes a tile in the same M block (A) or N block (B)."""
    axis = 0 if operand == "A" else 1
    bad = None
    size = cm * cn
    for ctm in range(span):
        for ctn in range(span):
            tiles = [cluster_tile(x, ctm, ctn, cm, cn) for x in range(size)]
            for r in range(size):
                want = sum(1 << x for x in range(size) if tiles[x][axis] == tiles[r][axis])
                if masks[r] != want and bad is None:
                    miss = [x for x in range(size) if want >> x & 1 and not masks[r] >> x & 1]
                    bad = (r, ctm, ctn, want, miss)
    what = "M block" if operand == "A" else "N block"
    return {"claim": f"multicast mask of {operand}: rank r's mask names exactly the CTAs of the "
                     f"{cm}x{cn} cluster whose tile has r's {what}",
            "status": "proved" if bad is None else "counterexample", "method": "exhaustive",
            "reason": (f"every rank, cluster tiles 0..{span - 1} x 0..{span - 1}" if bad is None
                       else f"rank {bad[0]}, cluster tile ({bad[1]}, {bad[2]}): mask "
                            f"{masks[bad[0]]:#x}, the CTAs sharing it are {bad[3]:#x}"
                            + (f" (misses CTA {bad[4][0]})" if bad[4] else ""))}


def _landing_obligation(masks: list[int], cm: int, cn: int, operand: str, rows: int) -> dict:
    """Every rank receives each row of its operand stage exactly once: rank ``s`` sends rows
    ``[q rows/g, (q+1) rows/g)`` (``q`` its place in the group, ``g`` the group size) to the
    CTAs of its mask."""
    size = cm * cn
    g = cn if operand == "A" else cm
    part = rows // g
    bad = None
    for x in range(size):
        got = [0] * rows
        for s in range(size):
            if masks[s] >> x & 1:
                q = s // cm if operand == "A" else s % cm
                for row in range(q * part, (q + 1) * part):
                    got[row] += 1
        if any(c != 1 for c in got) and bad is None:
            bad = (x, next(i for i, c in enumerate(got) if c != 1), got)
    return {"claim": f"{operand} slices: each CTA's stage receives every one of its {rows} rows "
                     f"exactly once ({g} slice(s) of {part} rows, each sent to its mask)",
            "status": "proved" if bad is None else "counterexample", "method": "exhaustive",
            "reason": (f"all {size} CTAs x {rows} rows" if bad is None else
                       f"CTA {bad[0]}, row {bad[1]}: received {bad[2][bad[1]]} times")}


def _release_obligation(masks_a, masks_b, peers, empty_count, per_cta, cm, cn) -> dict:
    """For every producer rank ``s`` and every CTA ``x`` it writes into, ``x``'s consumers
    release to ``s``; ``s``'s empty barrier counts ``per_cta`` arrivals per releasing CTA (one
    per consumer warp on sm_90a, one ``tcgen05.commit`` on sm_100a)."""
    size = cm * cn
    bad = None
    for s in range(size):
        writes = masks_a[s] | masks_b[s]
        for x in range(size):
            if writes >> x & 1 and not peers[x] >> s & 1 and bad is None:
                bad = f"CTA {x} is written by CTA {s}'s producer but never releases to it"
        arrivals = per_cta * sum(1 for x in range(size) if peers[x] >> s & 1)
        if arrivals != empty_count and bad is None:
            bad = f"CTA {s}'s empty barrier gets {arrivals} arrivals per phase, init {empty_count}"
    return {"claim": "release: each consumer warp arrives on the empty barrier of every CTA whose "
                     "producer writes into its stage; each empty barrier's count is those arrivals",
            "status": "proved" if bad is None else "counterexample", "method": "exhaustive",
            "reason": f"all {size} x {size} (producer, CTA) pairs" if bad is None else bad}


def cluster_plan(cm: int, cn: int, *, consumers: int, bm: int = 128, bn: int = 128,
                 a_stage: int = 0, b_stage: int = 0, shapes: tuple = CLUSTER_SHAPES,
                 per_cta: int | None = None) -> dict:
    """The cluster fields of a GEMM manifest: masks per rank, the CTAs each rank releases to, the
    empty-barrier count, slice rows, the bytes each CTA's stage receives, and the obligations.
    ``shapes``: the shapes the caller's kernel is written for; ``per_cta``: arrivals each CTA
    that reads a stage makes on a producer's empty barrier (default ``4 consumers``: one per
    consumer warp; the sm_100a kernel's MMA warp releases with one ``tcgen05.commit``).

    Law: with ``(cm, cn) = (1, 1)`` the masks are ``[1]`` and the fields describe the plain kernel.

    >>> cluster_plan(1, 2, consumers=1, bm=64)["a_slice_rows"]
    32
    >>> cluster_plan(2, 2, consumers=1, per_cta=1, shapes=SM100_CLUSTER_SHAPES)["peers"]
    [7, 11, 13, 14]
    """
    cm, cn = require_cluster((cm, cn), shapes)
    size = cm * cn
    per = 4 * consumers if per_cta is None else per_cta
    ma = [share_mask(r, cm, cn, "A") for r in range(size)]
    mb = [share_mask(r, cm, cn, "B") for r in range(size)]
    peers = [ma[r] | mb[r] for r in range(size)]
    empty = per * bin(peers[0]).count("1")
    for rows, g, what in ((bm, cn, "BM"), (bn, cm, "BN")):
        if rows % (8 * g):
            raise LayoutError(f"--cluster {cm}x{cn}: {what} {rows} is not a multiple of 8 rows per "
                              f"slice (the swizzle repeat) when split {g} ways")
    obls = [_mask_obligation(ma, cm, cn, "A"), _mask_obligation(mb, cm, cn, "B"),
            _landing_obligation(ma, cm, cn, "A", bm), _landing_obligation(mb, cm, cn, "B", bn),
            _release_obligation(ma, mb, peers, empty, per, cm, cn)] if size > 1 else []
    if size > 1:
        obls.append({"claim": f"expect_tx: each CTA's stage receives {a_stage} + {b_stage} bytes "
                              "(its slices and its peers'), the count its producer expects",
                     "status": "proved" if a_stage % cn == 0 and b_stage % cm == 0 else
                     "counterexample", "method": "exhaustive",
                     "reason": f"A: {cn} slice(s) of {a_stage // cn} B, B: {cm} slice(s) of "
                               f"{b_stage // cm} B (rows received once each, above)"})
    return {"m": cm, "n": cn, "size": size, "a_masks": ma, "b_masks": mb, "peers": peers,
            "empty_count": empty, "a_slice_rows": bm // cn, "b_slice_rows": bn // cm,
            "obligations": obls}


def pair_share_mask(rank: int, cm: int, cn: int, operand: str) -> int:
    """The CTA mask of the ranks of a ``cm x cn`` cluster of CTA pairs that hold the same rows of
    A (same place along M: the same half of the same pair tile's M block) or of B (the same N
    block and the same half of it: bit 0 of the rank, the CTA's place in its pair).

    >>> pair_share_mask(0, 4, 1, "B"), pair_share_mask(1, 4, 1, "B"), pair_share_mask(1, 2, 2, "A")
    (5, 10, 10)
    """
    if operand == "A":
        return share_mask(rank, cm, cn, "A")
    return sum(1 << (rank // cm * cm + 2 * i + rank % 2) for i in range(cm // 2))


def _leader_masks(peers: list) -> list:
    """Per rank, the commit mask of its pair's leader (rank ``r & ~1``): every CTA whose producer
    writes into either CTA of the pair (the leader's MMA reads both); 0 for a non-leader."""
    return [peers[r] | peers[r + 1] if r % 2 == 0 else 0 for r in range(len(peers))]


def _pair_release_obligation(ma: list, mb: list, commits: list, empty: int) -> dict:
    """Brute force: every producer ``s`` and CTA ``x`` it writes into, the leader of ``x``'s pair
    commits to ``s``; each CTA's empty barrier counts the leaders' commits reaching it."""
    size, bad = len(ma), None
    for s in range(size):
        for x in range(size):
            if (ma[s] | mb[s]) >> x & 1 and not commits[x & ~1] >> s & 1 and bad is None:
                bad = f"CTA {x} is written by CTA {s}'s producer but its leader never releases to {s}"
        got = sum(1 for x in range(0, size, 2) if commits[x] >> s & 1)
        if got != empty and bad is None:
            bad = f"CTA {s}'s empty barrier gets {got} commits per phase, init {empty}"
    return {"claim": "release: each pair's leader commits (cta_group::2, multicast) to the empty barrier of "
                     "every CTA whose producer writes into either CTA of the pair; each empty barrier's "
                     "count is the leaders' commits reaching it",
            "status": "proved" if bad is None else "counterexample", "method": "exhaustive",
            "reason": f"all {size} x {size} (producer, CTA) pairs" if bad is None else bad}


def _pair_landing_obligation(masks: list, cm: int, cn: int, operand: str, rows: int) -> dict:
    """Every CTA receives each of its ``rows`` rows of ``operand`` once: sender ``s`` sends its
    slice (its place ``q`` in the group sharing the rows) to the CTAs of its mask."""
    size = cm * cn
    g = cn if operand == "A" else cm // 2
    part, bad = rows // g, None
    for x in range(size):
        got = [0] * rows
        for s in (s for s in range(size) if masks[s] >> x & 1):
            q = s // cm if operand == "A" else s % cm // 2
            for row in range(q * part, (q + 1) * part):
                got[row] += 1
        if any(c != 1 for c in got) and bad is None:
            bad = (x, next(i for i, c in enumerate(got) if c != 1), got)
    return {"claim": f"{operand} slices (pairs): each CTA's stage receives each of its {rows} rows of "
                     f"{operand} exactly once ({g} slice(s) of {part} rows, each sent to its mask)",
            "status": "proved" if bad is None else "counterexample", "method": "exhaustive",
            "reason": (f"all {size} CTAs x {rows} rows" if bad is None else
                       f"CTA {bad[0]}, row {bad[1]}: received {bad[2][bad[1]]} times")}


def pair_cluster_plan(cm: int, cn: int, *, bn: int, a_stage: int, b_stage: int) -> dict:
    """The cluster fields of the ``cta_group::2`` kernel on a ``cm x cn`` cluster of CTAs
    (:data:`SM100_PAIR_CLUSTER_SHAPES`): CTA pairs ``(2k, 2k + 1)`` along M, each computing a
    256 x ``bn`` tile; rank ``r`` holds 128 rows of A (half ``r % 2`` of its pair's M block) and
    ``bn / 2`` rows of B (half ``r % 2`` of its N block). The ``cn`` CTAs holding the same A rows
    each load ``128 / cn`` of them and multicast them, the ``cm / 2`` CTAs holding the same B rows
    ``bn / cm`` each; every byte completes on the full barrier of the destination's pair leader,
    which expects both CTAs' stages (``2 (a_stage + b_stage)``); the leader's MMA warp frees a stage
    with one commit to ``commits[leader]``.

    Law: ``(2, 1)`` is the CTA pair without multicast (masks of one CTA, commit mask ``0b11``).

    >>> p = pair_cluster_plan(4, 1, bn=256, a_stage=16384, b_stage=16384)
    >>> p["b_masks"], p["commits"], p["empty_count"], p["b_slice_rows"]
    ([5, 10, 5, 10], [15, 0, 15, 0], 2, 64)
    """
    cm, cn = require_cluster((cm, cn), SM100_PAIR_CLUSTER_SHAPES)
    size, half = cm * cn, bn // 2
    if half % (8 * (cm // 2)) or 128 % (8 * cn):
        raise LayoutError(f"--cluster {cm}x{cn}: BN {bn} is not a multiple of 8 rows per B slice")
    ma = [pair_share_mask(r, cm, cn, "A") for r in range(size)]
    mb = [pair_share_mask(r, cm, cn, "B") for r in range(size)]
    peers = [ma[r] | mb[r] for r in range(size)]
    commits = _leader_masks(peers)
    empty = sum(1 for x in range(0, size, 2) if commits[x] & 1)
    obls = [_pair_landing_obligation(ma, cm, cn, "A", 128), _pair_landing_obligation(mb, cm, cn, "B", half),
            _pair_release_obligation(ma, mb, commits, empty),
            {"claim": f"expect_tx: each leader's full barrier receives 2 x ({a_stage} + {b_stage}) bytes "
                      "(both CTAs' stages: every multicast completes on the destination's leader), "
                      "the count its producer expects; a non-leader's full barrier receives none",
             "status": "proved" if a_stage % cn == 0 and b_stage % (cm // 2) == 0 else "counterexample",
             "method": "exhaustive", "reason": f"A: {cn} slice(s) of {a_stage // cn} B, B: {cm // 2} "
                                               f"slice(s) of {b_stage // (cm // 2)} B per CTA"}]
    return {"m": cm, "n": cn, "size": size, "a_masks": ma, "b_masks": mb, "peers": peers, "commits": commits,
            "empty_count": empty, "a_slice_rows": 128 // cn, "b_slice_rows": half // (cm // 2),
            "obligations": obls}
