"""The persistent tile scheduler of an emitted GEMM, checked on its PTX independently of the
emitter: which output tiles each CTA of a grid works on is read off the TMA loads its producer
thread issues, for every CTA of every grid size.

For a tile grid ``tiles_m x tiles_n`` (``M = tiles_m BM``, ``N = tiles_n BN``, ``K`` one K-tile
per K slice: ``S`` K-tiles with split-K ``S``) and each grid size ``G`` in ``1 .. grid_max``, the producer thread (thread 0) of every CTA ``b <
G`` is run on the PTX (:func:`verilayout.simulate.ptx_run.run_threads`, ``%ctaid.x = b``,
``%nctaid.x = G``; the other threads are not needed: its mbarrier waits succeed at once); the
units it loads are the ``(A row / BM, B row / BN, K-tile)`` of its ``cp.async.bulk.tensor`` loads
(A's and B's tensor maps told apart by their parameter addresses; one unit per first box of a
K-tile).

``schedule``: over the CTAs of every grid size, every unit (tile and K slice) is loaded by
exactly one CTA, and none outside the grid is loaded; a counterexample names the grid size, the tile and the CTAs
(``tile (2, 1) loaded by no CTA at grid 4``). The grid sizes include those that do not divide the
number of tiles (the tail a per-CTA count of ``tiles / grid`` would drop).

>>> schedule_problem(128, 64, 5, 3, 64), schedule_problem(128, 64, 5, 3, 64, splits=2)
((640, 192, 64), (640, 192, 128))
"""
from __future__ import annotations

from verilayout.errors import LayoutError
from verilayout.frontends.ptx import PtxModule
from verilayout.simulate.independent import KernelCheck
from verilayout.simulate.ptx_run import run_ctas, run_threads

__all__ = ["schedule_problem", "tiles_of_cta", "tile_origins", "schedule_check"]


def schedule_problem(bm: int, bn: int, tiles_m: int, tiles_n: int, bk: int,
                     splits: int = 1) -> tuple[int, int, int]:
    """``(M, N, K)`` of a ``tiles_m x tiles_n`` tile grid with one K-tile per K slice.

    >>> schedule_problem(128, 256, 2, 3, 64)
    (256, 768, 64)
    """
    return bm * tiles_m, bn * tiles_n, bk * splits


def tiles_of_cta(mod: PtxModule, entry: str, cta: int, grid: int, params: dict, maps: tuple[int, int],
                 tile: tuple[int, int, int], shared_base: int = 0) -> list[tuple[int, int, int]] | None:
    """The units ``(tm, tn, K-tile)`` CTA ``cta`` of a ``grid``-CTA launch loads, in order: thread
    0 run on the PTX, A's k-th load paired with B's k-th, a unit at each first box of a K-tile
    (A's K coordinate a multiple of BK). None where the run does not complete. Law: read from the
    PTX alone (``params``: parameter index -> value)."""
    run = run_threads(mod, entry, [0], ctaid=cta, nctaid=grid, param_values=params,
                      shared_base=shared_base, max_steps=400000)
    return _units_of_run(run, maps, tile)


def _units_of_run(run, maps: tuple[int, int], tile: tuple[int, int, int]) -> list[tuple[int, int, int]] | None:
    """Law: the units of :func:`tiles_of_cta` read off one CTA's ``run``; None where incomplete."""
    if not run.complete:
        return None
    bm, bn, bk = tile
    return [(a // bm, b // bn, k // bk) for k, a, b in _paired_loads(run, maps) if k % bk == 0]


def _paired_loads(run, maps: tuple[int, int]) -> list[tuple[int, int, int]]:
    """Law: ``(A's K coordinate, A row, B row)`` of the producer's k-th A and k-th B TMA loads."""
    loads: dict = {maps[0]: [], maps[1]: []}
    for e in run.events:
        if e.op.startswith("cp.async.bulk.tensor") and e.instr.parts[5].startswith("shared"):
            loads.setdefault(int(e.values["map"][0]), []).append((int(e.values["c0"][0]),
                                                                  int(e.values["c1"][0])))
    return [(ka, ra, rb) for (ka, ra), (_, rb) in zip(loads[maps[0]], loads[maps[1]])]


def tile_origins(run, maps: tuple[int, int]) -> list[tuple[int, int]]:
    """Law: the producer's tiles in order as ``(A row, B row)``: its k-th A load paired with its
    k-th B load (TMA loads: destination shared), a new tile at each A load of K coordinate 0 (no
    split-K: every tile starts at K-tile 0).

    >>> from verilayout.simulate.ptx_run import RunResult
    >>> tile_origins(RunResult((), True, "", ()), (1, 2))
    []
    """
    out: list = []
    for ka, ra, rb in _paired_loads(run, maps):
        if ka == 0 or not out:
            out.append((ra, rb))
    return out


def schedule_check(mod: PtxModule, entry: str, tile: tuple[int, int, int], grids: tuple[int, int],
                   params: dict, maps: tuple[int, int], grid_max: int | None = None,
                   shared_base: int = 0, splits: int = 1) -> KernelCheck:
    """The ``schedule`` check of the module docstring for a ``grids = (tiles_m, tiles_n)`` tile
    grid, ``splits`` K slices per tile and grid sizes ``1 .. grid_max`` (default: units + 1). ``params`` holds every parameter
    but M, N, K (indices 3, 4, 5 of the GEMM kernel), which are set here.
    Law: ``proved`` only when, for every grid size, the CTAs' tiles are each tile exactly once.

    >>> schedule_check(None, "k", (128, 64, 64), (0, 1), {}, (1, 2)).status
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: schedule: a tile grid of 0 x 1 tiles
    """
    bm, bn, bk = tile
    tiles_m, tiles_n = grids
    if tiles_m < 1 or tiles_n < 1:
        raise LayoutError(f"schedule: a tile grid of {tiles_m} x {tiles_n} tiles")
    M, N, K = schedule_problem(bm, bn, tiles_m, tiles_n, bk, splits)
    p = {**params, 3: M, 4: N, 5: K}
    tiles = tiles_m * tiles_n * splits                # units
    want = {(m, n, k) for m in range(tiles_m) for n in range(tiles_n) for k in range(splits)}
    top = grid_max or tiles + 1
    for g in range(1, top + 1):
        owner: dict = {}
        runs = run_ctas(mod, entry, [0], range(g), nctaid=g, param_values=p, shared_base=shared_base,
                        max_steps=400000)          # each CTA as tiles_of_cta runs it
        for b, run in enumerate(runs):
            got = _units_of_run(run, maps, (bm, bn, bk))
            if got is None:
                return KernelCheck("schedule", "unknown", f"CTA {b} of grid {g} could not be run on "
                                   "the PTX")
            for t in got:
                owner.setdefault(t, []).append(b)
        for t in sorted(want | set(owner)):
            who = owner.get(t, [])
            name = f"tile {t[:2]}" + (f" K slice {t[2]}" if splits > 1 else "")
            if t not in want:
                return KernelCheck("schedule", "counterexample", f"{name} outside the {tiles_m} x "
                                   f"{tiles_n} tiles loaded by CTA(s) {who} at grid {g}")
            if len(who) != 1:
                return KernelCheck("schedule", "counterexample", f"{name} loaded by "
                                   f"{'no CTA' if not who else f'CTAs {who}'} at grid {g} ({tiles} "
                                   f"units, {tiles % g} left over after {tiles // g} per CTA)")
    odd = [g for g in range(1, top + 1) if tiles % g]
    what = f" x {splits} K slices" if splits > 1 else ""
    return KernelCheck("schedule", "proved", f"{tiles_m} x {tiles_n} tiles{what}: every unit loaded "
                       f"by exactly one CTA for every grid of 1 .. {top} CTAs ({len(odd)} of them not "
                       "dividing the units), read from each CTA's TMA loads on the PTX")

