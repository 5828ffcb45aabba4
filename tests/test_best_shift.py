"""ptx_elements._best_shift (all candidate shifts at once) against counting each candidate shift's
matching (lane, byte) pairs one by one, written here, on random lanes."""
import random

from verilayout.audit.ptx_elements import _best_shift


def _by_hand(per_lane, lanes):
    want = {(k, b) for k in range(32) for b in lanes[k]}
    cands = set()
    for k in range(32):
        if per_lane[k] and lanes[k]:
            cands.add(min(per_lane[k]) - min(lanes[k]))
            cands.add(max(per_lane[k]) - max(lanes[k]))
    best, score = 0, -1
    for c in sorted(cands):
        n = sum((k, b - c) in want for k in range(32) for b in per_lane[k])
        if n > score:
            best, score = c, n
    return best


def test_best_shift_is_the_first_shift_of_the_most_pairs():
    rng = random.Random(3)
    for _ in range(200):
        lanes = [set(rng.sample(range(0, 256), rng.randint(0, 6))) for _ in range(32)]
        shift = rng.choice([0, 4, -16, 128])
        per_lane = [{b + shift + (rng.choice([0, 0, 0, 8]) if rng.random() < 0.2 else 0): None for b in s}
                    for s in lanes]
        assert _best_shift(per_lane, lanes) == _by_hand(per_lane, lanes)
