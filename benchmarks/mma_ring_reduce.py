"""The reduced MMA-ring search (``simulate.ring.explore_mma_rings``, the default) against the plain
one (``reduce=False``: every successor of every process canonicalized), measured in the same run
on the searches of the shipped CTA-pair sm_100a GEMM (256x128x64 bf16, 4 stages) and of its
planted protocol bugs, each checked to give the same answer and to step the same states in the
same order (``tests/ring_reference.same_search``).

    python benchmarks/mma_ring_reduce.py

Needs nvcc (sm_100a). Prints one line per search (outcome, states, plain s, reduced s, ratio) and
the total ratio reduced / plain (CPU seconds of this process).
"""
from __future__ import annotations

import sys
from pathlib import Path

from cpu_timing import timed

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

#: The planted edits of ``tests/test_emit_gemm_sm100_2cta.py`` that change the pair's protocol.
EDITS = (("shipped", None),
         ("commit mask of one CTA", ("constexpr uint16_t PAIR_MASK = 3;", "constexpr uint16_t PAIR_MASK = 1;")),
         ("peer loads on their own barrier", ("full_leader0 + 8u * stage);", "full0 + 8u * stage);")),
         ("acc_empty counting one CTA", ("mbar_init(acc_empty0 + 8u * a, uint32_t(CTAS) * EPI_WARPS);",
                                         "mbar_init(acc_empty0 + 8u * a, EPI_WARPS);")))


def _systems() -> list:
    """The pair-ring systems the pair check searches, one per edit, in EDITS order."""
    import verilayout.simulate.pair_ring as pair_ring
    from verilayout.emit.tcgen05_gemm import build_tcgen05_manifest, render_tcgen05_cuda
    from verilayout.simulate.tcgen05_check import check_tcgen05_source
    found: list = []
    real = pair_ring.explore_mma_rings

    def record(system, *, max_states):
        found.append((system, max_states))
        return real(system, max_states=max_states)
    pair_ring.explore_mma_rings = record
    man = build_tcgen05_manifest("bf16", tile=(256, 128, 64), stages=4, ctas=2)
    src = render_tcgen05_cuda(man)
    for _, edit in EDITS:
        check_tcgen05_source(man, src if edit is None else src.replace(*edit))
    pair_ring.explore_mma_rings = real
    return found


def main() -> int:
    from ring_reference import same_search
    from verilayout.simulate.ring import explore_mma_rings
    systems = _systems()
    if len(systems) != len(EDITS):
        print(f"expected {len(EDITS)} pair-ring searches, found {len(systems)} (nvcc missing?)")
        return 2
    plain_total = fast_total = 0.0
    for (name, _), (system, cap) in zip(EDITS, systems):
        same_search(system, cap)                      # same answer, same states stepped in order
        slow, plain = timed(explore_mma_rings, system, max_states=cap, reduce=False)
        fast, reduced = timed(explore_mma_rings, system, max_states=cap)
        assert fast == slow
        plain_total, fast_total = plain_total + plain, fast_total + reduced
        print(f"{name:34s} {fast.outcome:15s} {fast.states:7d} states  plain {plain:6.2f} s  "
              f"reduced {reduced:6.2f} s  ratio {reduced / plain:.2f}")
    print(f"total: plain {plain_total:.2f} s, reduced {fast_total:.2f} s, ratio {fast_total / plain_total:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
