"""Benchmark: prove every canonical wgmma configuration, against brute-force enumeration.

Catalogue: swizzle (none, 32B, 64B, 128B) x major-ness (K for every sm_90 type; MN for
f16/bf16, the only types sm_90 transposes) x dtype x N = 8, 16, ..., 256 (the operand's
M/N extent) x every K-block of a K tile one swizzle atom wide (128/64/32 bytes of K, at least
one 32-byte K-block). The tile is CuTe's tile_to_shape of the GMMA atom (rounded up to whole
atoms along M/N; the wgmma reads the first N rows); its descriptor comes from
``derive_descriptor`` (not timed). Timed per obligation:

* proof: ``check_block`` (contract checks, hardware model, bases or z3);
* brute force: numpy enumeration of both address functions over every (mn, k), compared;
* z3 only: the same proof with the basis shortcut switched off (a sample).

    python benchmarks/wgmma_catalogue.py              # the whole catalogue
    python benchmarks/wgmma_catalogue.py --z3-sample 0 --limit 200
"""
from __future__ import annotations

import argparse
import itertools
import random
import statistics
import sys
import time
from collections import Counter

import numpy as np

from verilayout.hw.nvidia.descriptor import hardware_address_function
from verilayout.hw.nvidia.wgmma import dtype_bits, elems_per_unit, k_of_dtype, swizzle_log2, swizzle_units
from verilayout.prove.wgmma import operand_block, strided_tile, check_block
from verilayout.synth.descriptor import derive_descriptor

DTYPES = ("f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8", "b1")
SWIZZLES = ("none", "32B", "64B", "128B")


def tile_for(major: str, sw: str, dtype: str, n: int):
    """tile_to_shape(GMMA atom, (N rounded up to atoms, K tile)) as a TileAddress."""
    t, w, bits = elems_per_unit(dtype), swizzle_units(sw), dtype_bits(dtype)
    kx = k_of_dtype(dtype)
    k_tile = max(w * 16 * 8 // bits, kx)          # one atom's width of K bytes, >= one K-block
    if major == "MN":
        amn, ak, smn, sk = t * w, 8, 1, t * w
    else:
        amn, ak, smn, sk = 8, t * w, t * w, 1
    mn_tile = -(-n // amn) * amn
    nmn, nk = mn_tile // amn, max(1, k_tile // ak)
    size = amn * ak
    shape = ((amn, nmn), (ak, nk))
    stride = ((smn, size), (sk, size * nmn))
    tile = strided_tile(shape, stride, dtype=dtype, swizzle=(swizzle_log2(sw), 4, 3))
    return tile, ak * nk


def catalogue():
    for sw, major, dtype in itertools.product(SWIZZLES, ("K", "MN"), DTYPES):
        if major == "MN" and dtype_bits(dtype) != 16:
            continue
        for n in range(8, 257, 8):
            tile, k_tile = tile_for(major, sw, dtype, n)
            for kb in range(k_tile // k_of_dtype(dtype)):
                yield sw, major, dtype, n, kb, tile


def brute_force(desc, tile, major, block) -> bool:
    hw = hardware_address_function(desc, major=major, dtype=tile.dtype, mn_extent=block.mn)
    want = tile.fn.restrict({"mn": block.mn_offset, "k": block.k_offset},
                            {"mn": block.mn, "k": block.k})
    return bool(np.array_equal(hw.table(), want.table()))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=0, help="only the first N obligations")
    ap.add_argument("--z3-sample", type=int, default=100,
                    help="obligations also proved with z3 only (default 100; 0 = none)")
    args = ap.parse_args(argv)

    jobs = []
    t0 = time.perf_counter()
    for i, (sw, major, dtype, n, kb, tile) in enumerate(catalogue()):
        if args.limit and i >= args.limit:
            break
        block = operand_block(tile, k_block=kb, mn=n)
        desc = derive_descriptor(tile, dtype=dtype, major=major, k_block=kb, mn=n).descriptor
        jobs.append((sw, major, dtype, n, kb, tile, block, desc))
    setup = time.perf_counter() - t0

    proof_t, brute_t, methods, failed = [], [], Counter(), []
    per_group: dict = {}
    for sw, major, dtype, n, kb, tile, block, desc in jobs:
        t1 = time.perf_counter()
        v = check_block(desc, tile, major=major, block=block)
        t2 = time.perf_counter()
        ok = brute_force(desc, tile, major, block)
        t3 = time.perf_counter()
        proof_t.append(t2 - t1)
        brute_t.append(t3 - t2)
        methods[v.method] += 1
        per_group.setdefault((major, sw), []).append(t2 - t1)
        if not v.proved or not ok:
            failed.append((sw, major, dtype, n, kb, v.status, ok, v.reason))

    z3_t = []
    sample = random.Random(0).sample(jobs, min(args.z3_sample, len(jobs))) if args.z3_sample else []
    for sw, major, dtype, n, kb, tile, block, desc in sample:
        t1 = time.perf_counter()
        v = check_block(desc, tile, major=major, block=block, method="z3")
        z3_t.append(time.perf_counter() - t1)
        if not v.proved:
            failed.append((sw, major, dtype, n, kb, v.status, True, "z3: " + v.reason))

    ms = lambda xs: statistics.median(xs) * 1e3
    print(f"wgmma catalogue: {len(jobs)} obligations (swizzle x major x dtype x N=8..256 x K-blocks)")
    print(f"  descriptors derived (not timed below) in {setup:.2f} s")
    print(f"  {'group':<12} {'proofs':>7} {'median ms':>10} {'max ms':>8}")
    for (major, sw), ts in sorted(per_group.items()):
        print(f"  {major + ' ' + sw:<12} {len(ts):>7} {ms(ts):>10.3f} {max(ts) * 1e3:>8.2f}")
    print(f"proof:       total {sum(proof_t):7.3f} s   median {ms(proof_t):7.3f} ms   "
          f"p99 {np.percentile(proof_t, 99) * 1e3:7.3f} ms   methods {dict(methods)}")
    print(f"brute force: total {sum(brute_t):7.3f} s   median {ms(brute_t):7.3f} ms")
    print(f"ratio brute force / proof: total {sum(brute_t) / sum(proof_t):.2f}x, "
          f"median {ms(brute_t) / ms(proof_t):.2f}x")
    if z3_t:
        print(f"z3 only ({len(z3_t)} sampled obligations): median {ms(z3_t):.2f} ms, "
              f"max {max(z3_t) * 1e3:.1f} ms; bases save {ms(z3_t) / ms(proof_t):.0f}x at the median")
    goal = sum(proof_t) <= 30 and ms(proof_t) <= 20
    print(f"goal (catalogue <= 30 s, median <= 20 ms): {'met' if goal else 'NOT met'}")
    if failed:
        print(f"{len(failed)} obligations NOT proved:")
        for f in failed[:20]:
            print("  ", f)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
