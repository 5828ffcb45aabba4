"""The persistent scheduler's tile cover of an emitted sm_90a GEMM, checked on its PTX for every
grid size: each CTA's producer and first consumer thread run (:func:`verilayout.simulate.ptx_run.run_ctas`,
CTA ``b`` of a grid of ``G``), the tiles read off what they do, never off the emitter.

* the producer's tiles: each TMA load's coordinates (the A map's row ``c1 // BM``, the B map's
  ``c1 // BN``, the K-tile ``c0 // BK``), paired per pipeline iteration (its ``empty`` wait);
* the consumer's tiles: each ``st.global`` address of thread 128 (consumer 0's first thread)
  read back as ``(slot, row, col)`` of D (or of the split-K workspace), then ``(slot, row // BM,
  col // BN)``, or each TMA store's box coordinates (D's column, row); with swap-AB the kernel's
  product is ``D^T`` (its ``(row, col)`` at ``col * M + row``).

Law (``tile-cover`` proved): for every grid size ``G`` from 1 to ``units + 1`` (``units``: tiles
x K slices, cluster tiles for a cluster, in CTAs), each ``(tile, K-tile)`` of the problem's tile
grid is loaded by exactly one CTA once, and each ``(tile, slot)`` is stored by exactly one CTA;
the problem is chosen so that ``tiles % G != 0`` for most ``G`` (5 x 3 tiles, a partial raster
group). A grid of more than ``units + 1`` CTAs is not run (``launch`` never starts one: it caps
the grid at the units).

>>> COVER_SHAPE
(5, 3)
"""
from __future__ import annotations

from collections import Counter

from verilayout.emit.gemm_plan import GemmManifest
from verilayout.frontends.ptx import parse_ptx
from verilayout.simulate.gemm_check import (D_ADDR, MAP_A_ADDR, MAP_B_ADDR, PARAMS, SMEM_BASE,
                                            cluster_shape, gemm_spec, is_tma_store)
from verilayout.simulate.independent import KernelCheck, compile_ptx
from verilayout.simulate.ptx_run import run_ctas

__all__ = ["COVER_SHAPE", "check_tile_cover", "cta_tiles"]

#: The tile grid of the cover problem (tiles along M, along N of the kernel's product).
COVER_SHAPE = (5, 3)
_OUT_BYTES = {"f32": 4, "f16": 2, "bf16": 2}


def cta_tiles(events, bm: int, bn: int, bk: int) -> tuple[list, list]:
    """Law: ``(loads, stores)`` of one CTA's run: ``loads`` the ``(tm, tn, kt)`` of each pipeline
    iteration of the producer (its TMA load coordinates), ``stores`` the D element indices each
    ``st.global`` of the consumer thread writes (with the bytes of one element), or for a TMA
    store ``(("tma", row, column), 0)`` of its box's first element of D.

    >>> cta_tiles([], 128, 128, 64)
    ([], [])
    """
    loads: dict = {}
    stores: list = []
    it = -1
    for ev in events:
        if ev.op.startswith("mbarrier.try_wait") and 0 in ev.lanes:
            it += 1
        if is_tma_store(ev.op):     # a box of D at (column, row): one element of it stands for the box
            stores.append((("tma", int(ev.values["c1"][0]), int(ev.values["c0"][0])), 0))
            continue
        if ev.op.startswith("cp.async.bulk.tensor"):
            c0, c1, mp = int(ev.values["c0"][0]), int(ev.values["c1"][0]), int(ev.values["map"][0])
            x = loads.setdefault(max(it, 0), [None, None, set()])
            x[2].add(c0 // bk)
            if mp == MAP_A_ADDR:
                x[0] = c1 // bm
            elif mp == MAP_B_ADDR:
                x[1] = c1 // bn
        if ev.op.startswith("st.global"):
            bits = int("".join(ch for ch in ev.instr.parts[-1] if ch.isdigit()) or 32)
            width = bits // 8 * (4 if ".v4" in ev.op else 2 if ".v2" in ev.op else 1)
            stores.append((int(ev.values["addr"][0]) - D_ADDR, width))
    out = []
    for i in sorted(loads):
        tm, tn, ks = loads[i]
        out += [(tm, tn, k) for k in sorted(ks)]
    return out, stores


def check_tile_cover(man: GemmManifest, source: str, *, max_grid: int | None = None) -> KernelCheck:
    """The ``tile-cover`` check of the module docstring (``max_grid``: run grids up to this
    size only, for a quicker look; the message says so).

    >>> from verilayout.emit.gemm_plan import build_gemm_manifest
    >>> man = GemmManifest.from_dict(build_gemm_manifest("f16", tile=(64, 64, 64), stages=2))
    >>> check_tile_cover(man, "not CUDA").status
    'counterexample'
    """
    # long: every grid size, every CTA, the producer's and the consumer's tiles
    dt, bm, bn, bk, stages, cons, _la, _lb = gemm_spec(man)
    cm, cn = cluster_shape(man)
    size = cm * cn
    splits = man.splits
    ok, ptx = compile_ptx(source)
    if not ok:
        return KernelCheck("tile-cover", "counterexample", f"kernel.cu does not compile: {ptx}")
    mod = parse_ptx(ptx)
    entry = next((f for f in mod.functions if "vl_gemm_kernel" in f), None)
    if entry is None:
        return KernelCheck("tile-cover", "counterexample", "no vl_gemm_kernel entry in the PTX")
    tm_n, tn_n = COVER_SHAPE
    M, N = tm_n * bm - 8, tn_n * bn - 8            # ragged: the last tile row and column partial
    k_tiles = max(2, splits + 1)
    K = k_tiles * bk
    ob = 4 if splits > 1 else _OUT_BYTES[man.epilogue.out]
    cunits = -(-tm_n // cm) * -(-tn_n // cn) * splits
    last = cunits + 1 if max_grid is None else min(cunits + 1, max_grid)
    want_loads = Counter((a, b, k) for a in range(tm_n) for b in range(tn_n) for k in range(k_tiles))
    want_stores = Counter((s, a, b) for s in range(splits) for a in range(tm_n) for b in range(tn_n))
    for g in range(1, last + 1):
        grid = g * size
        loads: Counter = Counter()
        stores: Counter = Counter()
        owner: dict = {}
        runs = run_ctas(mod, entry, [0, 128], range(grid), nctaid=grid, cluster_size=size,
                        param_values=PARAMS(M, N, K), shared_base=SMEM_BASE)
        for b, run in enumerate(runs):
            if not run.complete:
                return KernelCheck("tile-cover", "unknown", f"grid {grid}, CTA {b} could not be run "
                                   f"on the PTX: {run.reason}")
            ld, st = cta_tiles(run.events, bm, bn, bk)
            loads.update(t for t in ld if t[0] < tm_n and t[1] < tn_n)
            mine = set()
            for off, width in st:
                if isinstance(off, tuple):         # a TMA store of D's box at (row, column)
                    row, col = (off[2], off[1]) if man.swap_ab else off[1:]
                    mine.add((0, row // bm, col // bn))
                    continue
                for e in range(0, width, ob):
                    pos = (off + e) // ob
                    slot, rem = divmod(pos, M * N)
                    row, col = (rem % M, rem // M) if man.swap_ab else divmod(rem, N)
                    mine.add((slot, row // bm, col // bn))
            for key in mine:
                stores[key] += 1
                owner.setdefault(key, []).append(b)
        bad = _cover_error(loads, want_loads, "loaded", "(tile row, tile column, K-tile)") or \
            _cover_error(stores, want_stores, "stored", "(K slot, tile row, tile column)", owner)
        if bad:
            return KernelCheck("tile-cover", "counterexample", f"grid of {grid} CTAs "
                               f"({cunits} units, {cunits} % {g} = {cunits % g}): {bad} "
                               f"[M={M}, N={N}, K={K}]")
    return KernelCheck("tile-cover", "proved", f"every grid of 1..{last} {'clusters' if size > 1 else 'CTAs'}"
                       f"{'' if max_grid is None else f' (up to {max_grid} only)'}: each of the "
                       f"{tm_n * tn_n} tiles x {k_tiles} K-tiles loaded by exactly one CTA once, "
                       f"each tile's {splits} K slot(s) stored by exactly one CTA (producer TMA "
                       f"coordinates and consumer store addresses on the PTX) [M={M}, N={N}, K={K}]")


def _cover_error(got: Counter, want: Counter, verb: str, what: str, owner: dict | None = None) -> str | None:
    """Law: None when ``got`` is ``want`` (each key exactly once, nothing else); else the first
    key missed, repeated or unexpected, in words.

    >>> _cover_error(Counter({(0, 0, 0): 2}), Counter({(0, 0, 0): 1}), "loaded", "(tm, tn, kt)")
    '(tm, tn, kt) (0, 0, 0) loaded 2 times'
    """
    for key in sorted(want):
        if got.get(key, 0) == 0:
            return f"{what} {key} {verb} by no CTA"
        if got[key] != 1:
            who = f" (CTAs {owner[key]})" if owner and key in owner else ""
            return f"{what} {key} {verb} {got[key]} times{who}"
    extra = sorted(set(got) - set(want))
    if extra:
        return f"{what} {extra[0]} {verb}, outside the tile grid"
    return None

