"""Random linear layouts for property tests (shared by the bank tests)."""
from __future__ import annotations

from verilayout.core.linear_layout import LinearLayout


def _units(shape):
    return [[1 << b if d == k else 0 for k in range(len(shape))]
            for d, n in enumerate(shape) for b in range(n.bit_length() - 1)]


def _mixed(rng, bases, p):
    bases = [list(b) for b in bases]
    for i in range(1, len(bases)):
        if rng.random() < p:
            j = rng.randrange(i)
            bases[i] = [x ^ y for x, y in zip(bases[i], bases[j])]
    return bases


def random_reg(rng, shape, zero_reg=False, zero_lane=False, mix=0.2):
    units = _units(shape)
    rng.shuffle(units)
    units = _mixed(rng, units, mix)
    if zero_lane:
        units.insert(rng.randrange(5), [0, 0])
    lane, rest = units[:5], units[5:]
    while len(lane) < 5:
        lane.append([0, 0])
    nw = rng.randint(0, min(1, len(rest)))
    warp, reg = rest[:nw], rest[nw:]
    if zero_reg:
        reg.insert(rng.randrange(len(reg) + 1), [0, 0])
    out = {"dim0": shape[0], "dim1": shape[1]}
    return LinearLayout({"register": reg, "lane": lane, "warp": warp}, out, require_surjective=False)


def random_smem(rng, shape, mix=0.3, keep_low=0):
    units = _units(shape)
    low, rest = units[:keep_low], units[keep_low:]
    rng.shuffle(rest)
    return LinearLayout({"offset": low + _mixed(rng, rest, mix)}, {"dim0": shape[0], "dim1": shape[1]},
                        require_surjective=False)
