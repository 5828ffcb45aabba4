"""TMA stores of an epilogue (``cp.async.bulk.tensor`` global <- shared), checked on one CTA's
PTX run (:func:`verilayout.simulate.ptx_run.run_threads`) independently of the emitter.

What a store writes: shared memory is rebuilt from the run's ``st.shared`` events in run order
(little-endian bytes of each stored register); a TMA store of the D tensor map at coordinates
``(c0, c1)`` from shared address ``src`` writes, for every box element ``(x, y)``, the bytes at
:func:`verilayout.hw.nvidia.tma.write_table`'s address (the box's swizzle on the absolute
shared-memory address: the hardware model measured for loads, the same placement read back by a
store: PTX ISA "cp.async.bulk.tensor", "Tensor copy: shared to global uses the same layout")
to ``D(c1 + y, c0 + x)``, and nothing outside ``M x N`` (PTX ISA: out-of-bound elements of a
tensor store are not written). :func:`tma_store_elements` yields those elements for the
``d-store`` and ``epilogue`` checks.

``store-order`` (:func:`store_order_check`), per thread in program order and per warp's
``bar.warp.sync`` / CTA ``bar.sync`` (the run's lock-step order of one warp's events is its
program order):

* a TMA store reads only bytes whose writers fenced them with ``fence.proxy.async.shared::cta``
  after writing (generic-proxy writes made visible to the async proxy: PTX ISA "Memory
  consistency model: proxies") and, for a writer other than the issuing thread, synchronised
  with the issuer after that fence;
* no byte a TMA store reads is written again until the issuing thread's
  ``cp.async.bulk.wait_group.read N`` has waited for the store's bulk group (all but the ``N``
  newest committed groups: PTX ISA "cp.async.bulk.wait_group") and, for another writer, a
  synchronisation after that wait;
* every store's group was waited for before the thread exits (its shared memory stays valid).

>>> sorted(TMA_STORE_ASSUMPTIONS)[0][:24]
'a TMA store writes the b'
"""
from __future__ import annotations

import numpy as np

from verilayout.hw.nvidia.banks import lanes_per_phase, warp_wavefronts
from verilayout.hw.nvidia.tma import TensorMap, write_table
from verilayout.simulate.independent import KernelCheck
from verilayout.simulate.ptx_run import stored_values
from verilayout.simulate.ring import retire_groups

__all__ = ["TMA_STORE_ASSUMPTIONS", "is_tma_store", "tma_store_elements", "store_order_check",
           "staging_banks_check", "register_bytes", "shared_store_bytes", "store_source",
           "warpgroup_store_order"]

TMA_STORE_ASSUMPTIONS = (
    "a TMA store writes the bytes at the tensor map's swizzled shared-memory placement (the TMA "
    "load model of hw/nvidia/tma) to D, clipped to M x N; the D tensor map (box, swizzle, type) "
    "is the one manifest.json declares (the host's encoding of it is not read)",)


def is_tma_store(op: str) -> bool:
    """``cp.async.bulk.tensor.<n>d.global.shared::cta...``: a tensor store (destination global).

    >>> is_tma_store("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"), \\
    ...     is_tma_store("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes")
    (True, False)
    """
    parts = op.split(".")
    return op.startswith("cp.async.bulk.tensor") and len(parts) > 5 and parts[5] == "global"


def register_bytes(op: str) -> int:
    """Law: the bytes of one stored register of a ``st`` op: its last type part's bits / 8
    (``.b32`` 4, ``.b16`` 2, ``.b64`` 8), 4 where it has none.

    >>> register_bytes("st.shared.v4.b32"), register_bytes("st.shared.u16")
    (4, 2)
    """
    for p in reversed(op.split(".")):
        if p[:1] in "bfus" and p[1:].isdigit():
            return int(p[1:]) // 8
    return 4


def shared_store_bytes(op: str) -> int:
    """Law: the bytes one thread's ``st.shared`` writes: :func:`register_bytes` times the
    vector width (``.v2`` 2, ``.v4`` 4, else 1).

    >>> shared_store_bytes("st.shared.v4.b32"), shared_store_bytes("st.shared.v2.f32")
    (16, 8)
    """
    parts = op.split(".")
    return register_bytes(op) * (2 if "v2" in parts else 4 if "v4" in parts else 1)


def _store_map(out: str, box: tuple, swizzle: str, mn: tuple) -> TensorMap:
    M, N = mn
    return TensorMap(out, global_dims=(N, M), box=tuple(box), swizzle=swizzle)


def store_source(tmap: TensorMap, src: int, ob: int) -> np.ndarray:
    """Law: the shared bytes a TMA store of ``tmap``'s box from shared address ``src`` reads:
    each box element's byte (:func:`verilayout.hw.nvidia.tma.write_table`, the swizzle on the
    absolute address) and the ``ob - 1`` after it, element by element (row-major box order).

    >>> t = TensorMap("f32", global_dims=(8, 2), box=(8, 2), swizzle="32B")
    >>> store_source(t, 0x400, 4)[:4].tolist(), int(store_source(t, 0x400, 4).size)
    ([1024, 1025, 1026, 1027], 64)
    """
    return (write_table(tmap, src).ravel().astype(np.int64)[:, None] + np.arange(ob)).ravel()


#: Shared-memory bytes modelled (addresses of a run lie below this).
SMEM_SPAN = 1 << 19


def _shared_writes(e):
    """Law: ``(thread positions, byte addresses, byte values)`` of a ``st.shared`` event, one row
    per byte; None where a stored value is unknown."""
    w = register_bytes(e.op)
    addrs = e.values["addr"].astype(np.int64)
    cols_a, cols_v = [], []
    for j, v in enumerate(stored_values(e.values)):
        if v is None:
            return None
        v = np.asarray(v, dtype=np.uint64)
        for b in range(w):
            cols_a.append(addrs + j * w + b)
            cols_v.append((v >> np.uint64(8 * b)) & np.uint64(0xFF))
    if not cols_a:
        return None
    a = np.stack(cols_a, axis=1)
    q = np.broadcast_to(np.arange(len(addrs))[:, None], a.shape)
    return q.ravel(), a.ravel(), np.stack(cols_v, axis=1).ravel().astype(np.uint8)


def _stores_of(e, map_addr: int):
    """Law: ``(position, c0, c1, shared source)`` of each thread of a TMA store event of the map."""
    for q in range(len(e.lanes)):
        if int(e.values["map"][q]) == map_addr:
            yield q, int(e.values["c0"][q]), int(e.values["c1"][q]), int(e.values["addr"][q])


def tma_store_elements(run, out: str, box: tuple, swizzle: str, mn: tuple, map_addr: int):
    """Law: per TMA store of the map ``map_addr`` (one per issuing thread), ``(event, element
    indices row * N + col, raw bits)`` of the elements inside ``M x N`` it writes (module
    docstring); ``(event, None, None)`` where a byte it reads was never written in the run."""
    M, N = mn
    ob = 4 if out == "f32" else 2
    mem = np.zeros(SMEM_SPAN, dtype=np.uint8)
    seen = np.zeros(SMEM_SPAN, dtype=bool)
    t = _store_map(out, box, swizzle, mn)
    for e in run.events:
        if e.op.startswith("st.shared"):
            w = _shared_writes(e)
            if w is not None:
                mem[w[1]] = w[2]
                seen[w[1]] = True
        elif is_tma_store(e.op):
            for _, c0, c1, src in _stores_of(e, map_addr):
                table = write_table(t, src)            # [y, x] -> shared byte
                ys, xs = np.meshgrid(np.arange(table.shape[0]), np.arange(table.shape[1]), indexing="ij")
                r, c = c1 + ys.ravel(), c0 + xs.ravel()
                keep = (r >= 0) & (r < M) & (c >= 0) & (c < N)
                a = table.ravel()[keep].astype(np.int64)
                idx = a[:, None] + np.arange(ob)[None, :]
                if not seen[idx].all():
                    yield e, None, None
                    return
                bits = (mem[idx].astype(np.uint64) << (np.arange(ob, dtype=np.uint64) * np.uint64(8))).sum(
                    axis=1, dtype=np.uint64)
                yield e, (r[keep] * N + c[keep]).astype(np.int64), bits


def store_order_check(run, out: str, box: tuple, swizzle: str, mn: tuple, map_addr: int) -> KernelCheck:
    # long: one walk of the run's events through the per-byte and per-group state
    """The ``store-order`` check of the module docstring.
    Law: ``proved`` only when every TMA store of the run reads fenced, synchronised bytes, none
    of them is rewritten before its group was waited for, and no group is pending at exit;
    ``unknown`` without TMA stores.

    >>> from verilayout.simulate.ptx_run import RunResult
    >>> store_order_check(RunResult((), True, "", ()), "bf16", (32, 32), "64B", (64, 64), 7).status
    'unknown'
    """
    th = np.asarray(run.threads)
    ob = 4 if out == "f32" else 2
    tmap = _store_map(out, box, swizzle, mn)
    writer = np.full(SMEM_SPAN, -1, dtype=np.int64)
    state = np.zeros(SMEM_SPAN, dtype=np.int8)        # 0 clean, 1 written, 2 fenced, 3 fenced + synced
    sync_of = np.full(SMEM_SPAN, -1, dtype=np.int64)  # the synchronisation after the fence
    busy = np.full(SMEM_SPAN, -1, dtype=np.int64)     # the TMA store reading the byte, until released
    syncs: list[frozenset] = []
    groups: dict[int, list] = {}       # thread -> committed groups (lists of store ids), oldest first
    open_: dict[int, list] = {}        # thread -> stores not yet committed
    released: dict[int, set] = {}      # store id -> threads that may rewrite its bytes
    where: dict[int, tuple] = {}       # store id -> (c0, c1, issuing thread)
    for e in run.events:
        lanes = th[e.lanes]
        line = e.instr.line if e.instr else None
        if e.op.startswith("st.shared"):
            w = _shared_writes(e)
            if w is None:
                continue
            q, a, _ = w
            ts = lanes[q]
            hit = np.nonzero(busy[a] >= 0)[0]
            for k in hit.tolist():
                sid, t = int(busy[a[k]]), int(ts[k])
                if t not in released.get(sid, set()):
                    c0, c1, issuer = where[sid]
                    why = ("before the issuing thread's cp.async.bulk.wait_group.read waited for its "
                           "group" if sid not in released else
                           "after the issuer's wait but without a synchronisation with it")
                    return KernelCheck("store-order", "counterexample", f"thread {t} rewrites shared "
                                       f"byte {int(a[k]):#x} of the TMA store at ({c0}, {c1}) (thread "
                                       f"{issuer}) {why}", line)
            busy[a] = -1
            writer[a], state[a], sync_of[a] = ts, 1, -1
        elif e.op.startswith("fence.proxy.async"):
            m = (state == 1) & np.isin(writer, lanes)
            state[m] = 2
        elif e.op.startswith(("bar.warp.sync", "bar.sync", "barrier.sync", "bar.cta.sync")):
            ts = frozenset(lanes.tolist())
            syncs.append(ts)
            m = (state == 2) & np.isin(writer, lanes)
            state[m], sync_of[m] = 3, len(syncs) - 1
            for sid, r in released.items():
                if r & ts:
                    released[sid] = r | ts
        elif is_tma_store(e.op):
            for q, c0, c1, src in _stores_of(e, map_addr):
                t = int(lanes[q])
                sid = len(where)
                where[sid] = (c0, c1, t)
                a = store_source(tmap, src, ob)
                st, wr, sy = state[a], writer[a], sync_of[a]
                bad = np.nonzero((st != 0) & ~((st >= 2) & (wr == t)) & ~(
                    (st == 3) & np.array([sid_ >= 0 and t in syncs[sid_] for sid_ in sy.tolist()])))[0]
                if bad.size:
                    k = int(bad[0])
                    why = ("without a fence.proxy.async after the write" if st[k] == 1 else
                           "without a synchronisation with the issuer after its fence")
                    return KernelCheck("store-order", "counterexample", f"the TMA store at ({c0}, {c1}) "
                                       f"by thread {t} reads shared byte {int(a[k]):#x} written by "
                                       f"thread {int(wr[k])} {why}", line)
                busy[a] = sid
                open_.setdefault(t, []).append(sid)
        elif e.op.startswith("cp.async.bulk.commit_group"):
            for t in lanes.tolist():
                if open_.get(t):
                    groups.setdefault(t, []).append(open_.pop(t))
        elif e.op.startswith("cp.async.bulk.wait_group"):
            nval = e.values.get("a0")
            if nval is None:
                return KernelCheck("store-order", "unknown", "a cp.async.bulk.wait_group count the run "
                                   "does not know", line)
            for q, t in enumerate(lanes.tolist()):
                keep = int(nval[q])
                gs = groups.get(t, [])
                cut = max(0, len(gs) - keep)
                for g in gs[:cut]:
                    for sid in g:
                        released[sid] = {t}
                groups[t] = gs[cut:]
    if not where:
        return KernelCheck("store-order", "unknown", "the run issues no TMA store of D")
    pending = [(t, g) for t, gs in groups.items() for g in gs] + [(t, g) for t, g in open_.items() if g]
    if pending:
        t, g = pending[0]
        c0, c1, _ = where[g[0]]
        return KernelCheck("store-order", "counterexample", f"thread {t} exits with the TMA store at "
                           f"({c0}, {c1}) not waited for (its shared buffer may be reused)")
    return KernelCheck("store-order", "proved", f"{len(where)} TMA stores: each reads bytes fenced "
                       "(fence.proxy.async) and synchronised with the issuer after they were written; "
                       "no byte rewritten before the issuer's cp.async.bulk.wait_group.read covered "
                       "its store and a synchronisation; none pending at exit")


def staging_banks_check(run) -> KernelCheck:
    """``smem-banks``: every ``st.shared`` of the run, per warp, against the bank model of
    :mod:`verilayout.hw.nvidia.banks` (32 banks of 4 bytes; a 128-bit access served a quarter-warp
    at a time). Law: ``proved`` when each warp's store takes the fewest wavefronts its bytes can
    (``ceil(bytes / 128)``), else a ``warning`` naming the instruction (a speed finding, not a
    wrong result); ``unknown`` without shared stores.

    >>> from verilayout.simulate.ptx_run import RunResult
    >>> staging_banks_check(RunResult((), True, "", ())).status
    'unknown'
    """
    th = np.asarray(run.threads)
    n = worst = 0
    where = None
    for e in run.events:
        if not e.op.startswith("st.shared") or e.values.get("addr") is None:
            continue
        width = register_bytes(e.op) * max(1, len(stored_values(e.values)))
        addrs = e.values["addr"].astype(np.int64)
        warps = th[e.lanes] // 32
        for w in np.unique(warps).tolist():
            lanes = [None] * 32
            for q in np.nonzero(warps == w)[0].tolist():
                lanes[int(th[e.lanes[q]]) % 32] = int(addrs[q])
            got = warp_wavefronts(lanes, width, lanes_per_phase(8 * width, 32), store=True)
            need = -(-sum(width for a in lanes if a is not None) // 128)
            n += 1
            if got - need > worst:
                worst, where = got - need, (e, w, got, need)
    if not n:
        return KernelCheck("smem-banks", "unknown", "the run has no st.shared")
    if where is not None:
        e, w, got, need = where
        return KernelCheck("smem-banks", "warning", f"warp {w}'s {e.op} takes {got} wavefronts where "
                           f"its bytes need {need} (bank conflicts)", e.instr.line if e.instr else None)
    return KernelCheck("smem-banks", "proved", f"{n} warp-wide shared stores, each in the fewest "
                       "wavefronts its bytes need (no bank conflict)")


def warpgroup_store_order(steps: list, who: str, tmap: TensorMap, ob: int) -> tuple[int, tuple | None]:
    """The sm_90a ``tma-store`` order of one consumer warpgroup's trace ``steps`` (``(event,
    values, threads count, thread ids)`` in program order, D's box ``tmap`` of ``ob``-byte
    elements): a TMA store reads only bytes whose writer fenced them (``fence.proxy.async``)
    and, for another thread, a barrier of the warpgroup (128 threads or more) then ordered;
    no byte a store of a pending bulk group reads (or of a retired one before such a barrier) is
    written again; no bulk group pending at the end (``cp.async.bulk.wait_group`` retires all but
    the N newest: :func:`verilayout.simulate.ring.retire_groups`).

    Law: ``(TMA stores seen, None)`` when the order holds, else ``(stores seen, (message,
    event))`` of the first violation.

    >>> warpgroup_store_order([], "consumer 0", TensorMap("f32", global_dims=(8, 2), box=(8, 2), swizzle="32B"), 4)
    (0, None)
    """
    # long: one walk of the warpgroup's shared writes, fences, barriers and bulk groups
    written: dict = {}          # shared byte -> [thread, fenced, published]
    open_: list = []            # (bytes, event) of stores issued since the last commit
    groups: tuple = ()          # committed bulk groups, oldest first
    retired: list = []          # retired by a wait, not yet ordered by a barrier
    n_st = 0
    for ev, v, n, t in steps:
        op = ev.op
        if op.startswith("st.shared"):
            width = shared_store_bytes(op)
            for a0, th in zip(v["addr"].astype(np.int64).tolist(), np.asarray(t).tolist()):
                span_b = set(range(a0, a0 + width))
                for busy, label in ((open_ + [x for g in groups for x in g], ""),
                                    (retired, " (its wait_group was not followed by a "
                                     "barrier of the warpgroup before this write)")):
                    hit = next((x for x in busy if span_b & x[0]), None)
                    if hit is not None:
                        return n_st, (f"{who}, thread {th} rewrites shared byte "
                                      f"{min(span_b & hit[0]):#x} of a staging buffer that the TMA "
                                      f"store at PTX line {hit[1].instr.line} may still be "
                                      f"reading{label}: the buffer is reused before "
                                      "cp.async.bulk.wait_group.read retired that store", ev)
                for a in span_b:
                    written[a] = [th, False, False]
        elif op.startswith("fence.proxy.async"):
            ts = set(np.asarray(t).tolist())
            for w in written.values():
                if w[0] in ts:
                    w[1] = True
        elif op.startswith(("bar.sync", "barrier.sync", "bar.arrive")) and n >= 128:
            for w in written.values():
                w[2] = w[2] or w[1]
            retired = []
        elif is_tma_store(op):
            n_st += 1
            th = int(np.asarray(t)[0])
            read = set(store_source(tmap, int(v["addr"][0]), ob).tolist())
            for x in sorted(read):
                w = written.get(x)
                if w is not None and (not w[1] or (w[0] != th and not w[2])):
                    why = ("no fence.proxy.async.shared::cta after the write" if not w[1] else
                           "no barrier of the warpgroup between its fence and the store")
                    return n_st, (f"{who}: the TMA store reads shared byte {x:#x} that thread "
                                  f"{w[0]} wrote with {why}: the async proxy may read stale data", ev)
            open_.append((read, ev))
        elif op.startswith("cp.async.bulk.commit_group"):
            if open_:
                groups += (open_,)
            open_ = []
        elif op.startswith("cp.async.bulk.wait_group"):
            old, groups = retire_groups(groups, int(v["a0"][0]) if v.get("a0") is not None else 0)
            retired += [x for g in old for x in g]
    if open_ or groups:
        return n_st, (f"{who} may exit while a TMA store still reads its staging buffer: no "
                      "cp.async.bulk.wait_group retires the last bulk group", None)
    return n_st, None
