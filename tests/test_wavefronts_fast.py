"""The wavefront counts of :mod:`verilayout.hw.nvidia.banks` against the rule written out here
by brute force: a phase costs the largest number of distinct 4-byte words one of the banks holds
(word ``w`` in bank ``w mod banks``); a warp's instruction is the sum over its phases, except a
128-bit load half-warp that fits one wavefront, served in one (the module docstring's rule 6)."""
import random

import pytest

from verilayout.hw.nvidia.banks import BankModel, phase_wavefronts, warp_wavefronts


def _phase(ranges, banks=32):
    per_bank = {}
    for start, n in ranges:
        for byte in range(start, start + n):
            per_bank.setdefault((byte // 4) % banks, set()).add(byte // 4)
    return max((len(s) for s in per_bank.values()), default=0)


def _warp(addrs, width, per_phase, matrix=False, store=False, banks=32):
    def ph(lanes):
        return _phase([(a, width) for a in lanes if a is not None], banks)
    merge = width == 16 and not matrix and not store and 2 * per_phase * width <= 2 * 4 * banks
    total = 0
    if merge:
        for i in range(0, len(addrs), 2 * per_phase):
            halves = [addrs[j:j + per_phase] for j in range(i, min(i + 2 * per_phase, len(addrs)), per_phase)]
            parts = sum(ph(h) for h in halves)
            total += 1 if parts > 1 and ph(addrs[i:i + 2 * per_phase]) == 1 else parts
        return total
    return sum(ph(addrs[i:i + per_phase]) for i in range(0, len(addrs), per_phase))


def _addresses(rng, width):
    style = rng.randrange(4)
    if style == 0:
        return [rng.randrange(0, 4096) for _ in range(32)]
    if style == 1:
        stride = rng.choice([1, 2, 4, 8, 16, 32, 64, 128, 132, 136])
        return [i * stride + rng.choice([0, 0, width]) for i in range(32)]
    if style == 2:
        return [rng.choice([0, 16, 128, 256]) for _ in range(32)]
    return [None if rng.random() < 0.4 else rng.randrange(0, 1024) * width for _ in range(32)]


@pytest.mark.parametrize("seed", range(6))
def test_warp_wavefronts_match_the_rule(seed):
    rng = random.Random(seed)
    for _ in range(400):
        width = rng.choice([1, 2, 4, 8, 16])
        per_phase = 32 if width <= 4 else 16 if width == 8 else 8
        addrs = _addresses(rng, width)
        store = rng.random() < 0.3
        assert warp_wavefronts(addrs, width, per_phase, store=store) == _warp(addrs, width, per_phase, store=store)
        assert warp_wavefronts(addrs, 16, 8, matrix=True) == _warp(addrs, 16, 8, matrix=True)


def test_phase_wavefronts_match_the_rule_on_64_banks():
    rng = random.Random(7)
    model = BankModel(num_banks=64)
    for _ in range(500):
        ranges = [(rng.randrange(-64, 2048), rng.choice([1, 2, 3, 4, 6, 8, 16])) for _ in range(rng.randrange(0, 40))]
        assert phase_wavefronts(ranges, model) == _phase(ranges, 64)
        assert phase_wavefronts(ranges) == _phase(ranges, 32)


def test_known_figures():
    # every lane the same 16 bytes: 2 wavefronts for a load (one per half-warp), 4 for a store
    assert warp_wavefronts([0] * 32, 16, 8) == 2
    assert warp_wavefronts([0] * 32, 16, 8, store=True) == 4
    # a 4-byte access at a 128-byte stride: all 32 lanes in bank 0, 32 distinct words
    assert warp_wavefronts([128 * i for i in range(32)], 4, 32) == 32
