"""The tabled cluster-ring search (``simulate.mcast_ring.explore_mcast``, the default) against the
previous one (``explore_mcast(..., reference=True)``), measured in the same run on every search the
``mcast-ring`` check makes (each landing model it tries) for the shipped cluster kernels (one-CTA
clusters 2x1, 1x2, 2x2, 4x1, 1x4; CTA-pair clusters 4x1, 2x2; the auto-chosen 1x2 configurations)
and for the planted protocol bugs of ``tests/test_emit_gemm_sm100_cluster.py`` and
``tests/test_emit_gemm_sm100_pair_cluster.py``; each pair of searches is asserted to give the same
answer (outcome, finding with its mark, blocked processes, state count) and to step the same states
in the same order (``tests/mcast_reference.same_search``, outside the timed runs).

    python benchmarks/mcast_ring_speed.py [NAME-SUBSTRING ...]

Needs nvcc (sm_100a). Prints one line per search (model, outcome, states, reference s, tabled s,
ratio) and the total ratio tabled / reference (CPU seconds of this process).
"""
from __future__ import annotations

import sys
from pathlib import Path

from cpu_timing import timed

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

_PAIR = dict(tile=(256, 128, 64), stages=2, ctas=2)
_MCAST = "uint16_t((r == 0u ? 0x5u"
#: (name, dtype, manifest keywords, planted edit of kernel.cu or None).
KERNELS = (
    ("2x1", "bf16", dict(tile=(128, 128, 64), stages=2, cluster=(2, 1)), None),
    ("1x2", "bf16", dict(tile=(128, 128, 64), stages=2, cluster=(1, 2)), None),
    ("2x2", "bf16", dict(tile=(128, 128, 64), stages=2, cluster=(2, 2)), None),
    ("4x1", "bf16", dict(tile=(128, 64, 64), stages=2, cluster=(4, 1)), None),
    ("1x4", "bf16", dict(tile=(128, 128, 64), stages=2, cluster=(1, 4)), None),
    ("pair 4x1", "bf16", dict(_PAIR, cluster=(4, 1)), None),
    ("pair 2x2", "bf16", dict(_PAIR, cluster=(2, 2)), None),
    ("2x2 wrong A mask", "bf16", dict(tile=(128, 128, 64), stages=2, cluster=(2, 2)), (_MCAST, "uint16_t((r == 0u ? 0x1u")),
    ("2x1 missing slice", "bf16", dict(tile=(128, 128, 64), stages=2, cluster=(2, 1)),
     ("int32_t(tn * BN + rm * B_SLICE_ROWS), full, b_mask(rank));",
      "int32_t(tn * BN + rm * B_SLICE_ROWS), full, uint16_t(b_mask(rank) & ~1u));")),
    ("2x1 expect_tx of one slice", "bf16", dict(tile=(128, 128, 64), stages=2, cluster=(2, 1)),
     ("mbar_arrive_expect_tx(full, TX_BYTES);", "mbar_arrive_expect_tx(full, TX_BYTES / uint32_t(CLUSTER));")),
    ("2x2 release to one CTA", "bf16", dict(tile=(128, 128, 64), stages=2, cluster=(2, 2)),
     ("mma_commit_mc(empty0 + 8u * stage, peer_mask(rank));", "mma_commit_mc(empty0 + 8u * stage, uint16_t(1u << rank));")),
    ("2x1 missing producer tail", "bf16", dict(tile=(128, 128, 64), stages=2, cluster=(2, 1)),
     ("for (uint32_t s = 0; s < uint32_t(STAGES); ++s) {   // tail", "for (uint32_t s = 0; s < 0u; ++s) {   // tail")),
    ("pair 4x1 B mask", "bf16", dict(_PAIR, cluster=(4, 1)), (_MCAST, "uint16_t((r == 0u ? 0x1u")),
    ("pair 2x2 A mask", "bf16", dict(_PAIR, cluster=(2, 2)), (_MCAST, "uint16_t((r == 0u ? 0x1u")),
    ("pair 4x1 expect_tx non-leader", "bf16", dict(_PAIR, cluster=(4, 1)),
     ("if (half == 0u) mbar_arrive_expect_tx", "if (half == 1u) mbar_arrive_expect_tx")),
    ("pair 2x2 release one pair", "bf16", dict(_PAIR, cluster=(2, 2)),
     ("uint16_t((r == 0u ? 0xfu", "uint16_t((r == 0u ? 0x3u")),
    ("pair 4x1 B slice twice", "bf16", dict(_PAIR, cluster=(4, 1)), ("(rm / 2u) * B_SLICE_ROWS", "0u * B_SLICE_ROWS")),
)


def _chosen_1x2() -> list:
    """The auto-chosen configurations of ``tests/test_emit_gemm_sm100.py`` on 1x2 clusters."""
    from test_emit_gemm_sm100 import _chosen
    from verilayout.frontends.names import parse_tile
    out = []
    for dt, tile, stages, splits, cluster in _chosen():
        if tuple(cluster or ()) == (1, 2):
            kw = dict(tile=parse_tile(tile), stages=stages, splits=splits, cluster=cluster,
                      ctas=2 if tile.startswith("256x") else 1)
            out.append((f"chosen {dt} {tile} s{stages} 1x2", dt, kw, None))
    return out


def _systems(only=None) -> list:
    """``(name, system, max_states)`` of every search the ``mcast-ring`` check makes on each kernel."""
    import verilayout.simulate.mcast_check as mc
    from verilayout.emit.tcgen05_gemm import build_tcgen05_manifest, render_tcgen05_cuda
    found: list = []
    real = mc.explore_mcast
    kernels = list(KERNELS) + _chosen_1x2()
    for name, dt, kw, edit in kernels:
        if only and not any(o in name for o in only):
            continue

        def record(system, *, max_states, name=name):
            found.append((name, system, max_states))
            return real(system, max_states=max_states)
        mc.explore_mcast = record
        man = build_tcgen05_manifest(dt, **kw)
        src = render_tcgen05_cuda(man)
        new = src if edit is None else src.replace(*edit)
        assert new != src or edit is None, f"{name}: the planted edit did not change kernel.cu"
        try:
            mc.check_sm100_source(man, new)
        finally:
            mc.explore_mcast = real
    return found


def main(argv: list) -> int:
    from mcast_reference import same_search
    from verilayout.simulate.mcast_ring import explore_mcast
    systems = _systems(argv or None)
    if not systems:
        print("no mcast-ring search found (nvcc missing?)")
        return 2
    ref_total = fast_total = 0.0
    for name, system, cap in systems:
        slow, ref = timed(explore_mcast, system, max_states=cap, reference=True)
        fast, tabled = timed(explore_mcast, system, max_states=cap)
        assert fast == slow, (name, fast, slow)
        same_search(system, cap)                      # and the same states stepped in the same order
        ref_total, fast_total = ref_total + ref, fast_total + tabled
        print(f"{name:32s} {system.landing:8s} {fast.outcome:14s} {fast.states:7d} states  reference {ref:6.2f} s  "
              f"tabled {tabled:6.2f} s  ratio {tabled / ref:.2f}", flush=True)
    print(f"total: reference {ref_total:.2f} s, tabled {fast_total:.2f} s, ratio {fast_total / ref_total:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
