"""Bank-conflict queries: verilayout vs Triton's get_shared_bank_conflicts vs brute force, one run.

    python benchmarks/banks.py [--pairs 1000] [--seed 4] [--reps 5]

1000 random (register layout, shared layout, shape, element width) pairs (the generator of
``tests/oracles/test_banks_oracle.py``: blocked, linear, nvidia_mma, dot_op x nvmma_shared,
swizzled_shared, shared_linear; 8/16/32/64 bits). For each pair, the per-query time of

* ``verilayout``: ``verilayout.banks.analyze`` (GF(2) wavefronts, proof, witness, and Triton's
  figure recomputed), and its GF(2) wavefront count alone;
* ``triton``: ``GluonOpBuilder.get_shared_bank_conflicts`` in the Triton 3.9 wheel, in a worker
  subprocess (layout attributes and module built beforehand; only the call is timed);
* ``brute force``: every access enumerated with numpy (``tests/test_banks_bruteforce.py``).

Each query is timed as the best of ``--reps`` runs; the table shows medians over the pairs and
the ratios of the medians. The answers are compared as they are timed.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "oracles"))


def _best_of(fn, reps: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


# ----- the Triton side (a subprocess; the wheel aborts on bad input) --------------------------

def triton_worker() -> None:
    """stdin: {"reps": n, "cases": [...]}; stdout: one JSON list of [seconds, conflicts]."""
    import triton_oracle as o
    data = json.loads(sys.stdin.read())
    o._w_init()
    out = []
    for c in data["cases"]:
        b = o._builder("sm90")
        shape = list(c["shape"])
        reg = o._build_layout(c["reg"], shape)._to_ir(b)
        smem = o._build_layout(c["shared"], shape)._to_ir(b)
        ll = b.to_linear_layout(reg, shape)
        attrs = {"ttg.target": "cuda:90", "ttg.num-warps": 1 << len(ll.warp_bases),
                 "ttg.num-ctas": 1 << len(ll.block_bases), "ttg.threads-per-warp": 1 << len(ll.lane_bases)}
        o._module_with_arg(b, None, attrs)
        best, val = _best_of(lambda: b.get_shared_bank_conflicts(reg, smem, shape, c["bits"]), data["reps"])
        out.append([best, int(val)])
    sys.stdout.write(json.dumps(out))
    sys.stdout.flush()
    os._exit(0)


def time_triton(cases, reps: int) -> list:
    payload = json.dumps({"reps": reps, "cases": [{k: c[k] for k in ("reg", "shared", "shape", "bits")}
                                                    for c in cases]})
    proc = subprocess.run([sys.executable, __file__, "--triton-worker"], input=payload.encode(),
                          capture_output=True, timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"Triton worker failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    return json.loads(proc.stdout)


# ----- one run ------------------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=4)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)

    import triton_oracle
    from test_banks_bruteforce import auto_count
    from test_banks_oracle import oracle_requests, random_pairs, resolved_cases

    from verilayout.banks import check_banks
    from verilayout.hw.nvidia.banks import plan_access
    from verilayout.prove.banks import bit_images, plan_wavefronts, triton_bank_conflicts

    from verilayout.banks import load_register, load_shared

    usable, texts = [], []
    seed = args.seed
    while len(usable) < args.pairs:
        batch = random_pairs(int((args.pairs - len(usable)) * 1.3) + 10, seed=seed)
        seed += 1000
        resp = triton_oracle.run_oracle(oracle_requests(batch))
        mlir = {id(c): (resp[3 * i]["mlir"], resp[3 * i + 1]["mlir"]) for i, c in enumerate(batch)
                if resp[3 * i].get("ok") and resp[3 * i + 1].get("ok")}
        for c, reg, smem, tc in resolved_cases(batch, resp):
            if tc is None:  # Triton aborts on these (tensor smaller than a bank row); not timeable
                continue
            usable.append((c, reg, smem, tc))
            texts.append(mlir[id(c)])
    usable, texts = usable[:args.pairs], texts[:args.pairs]
    cases = [u[0] for u in usable]

    t_tri = time_triton(cases, args.reps)
    ours, core, brute, from_text = [], [], [], []
    mismatch = {"triton figure": 0, "wavefronts": 0, "parsed text": 0}
    for (c, reg, smem, tc), (_, tval), (rtext, stext) in zip(usable, t_tri, texts):
        bits = c["bits"]
        t, rep = _best_of(lambda: check_banks(reg, smem, elem_bits=bits), args.reps)
        ours.append(t)

        def parse_and_analyze():
            return check_banks(load_register(rtext, c["shape"]), load_shared(stext, c["shape"], bits), elem_bits=bits)

        t, rep2 = _best_of(parse_and_analyze, args.reps)
        from_text.append(t)
        mismatch["parsed text"] += (rep2.wavefronts, rep2.triton_conflicts) != (rep.wavefronts, rep.triton_conflicts)

        def gf2_only():
            img = bit_images(reg, smem)
            return plan_wavefronts(img, plan_access(img, None, bits))

        t, waves = _best_of(gf2_only, args.reps)
        core.append(t)
        t, (_, bf) = _best_of(lambda: auto_count(reg, smem, bits), max(1, args.reps // 2))
        brute.append(t)
        mismatch["triton figure"] += rep.triton_conflicts != tval or triton_bank_conflicts(reg, smem, bits) != tc
        mismatch["wavefronts"] += not (rep.wavefronts == waves == bf)

    tri = [t for t, _ in t_tri]
    med = {name: statistics.median(v) * 1e6 for name, v in
           (("verilayout analyze (proof + witness + Triton figure)", ours),
            ("verilayout parse MLIR text + analyze", from_text),
            ("verilayout GF(2) wavefronts only", core),
            ("Triton get_shared_bank_conflicts (wheel)", tri),
            ("brute force (numpy enumeration)", brute))}
    print(f"{len(usable)} pairs, best of {args.reps} per query, medians over pairs")
    width = max(len(k) for k in med)
    for k, v in med.items():
        print(f"  {k:<{width}}  {v:10.1f} us")
    m_ours = med["verilayout analyze (proof + witness + Triton figure)"]
    m_core = med["verilayout GF(2) wavefronts only"]
    m_tri = med["Triton get_shared_bank_conflicts (wheel)"]
    m_bf = med["brute force (numpy enumeration)"]
    print("ratios of medians:")
    print(f"  analyze / Triton          {m_ours / m_tri:8.2f}")
    print(f"  parse + analyze / Triton  {med['verilayout parse MLIR text + analyze'] / m_tri:8.2f}")
    print(f"  GF(2) only / Triton       {m_core / m_tri:8.2f}")
    print(f"  brute force / analyze     {m_bf / m_ours:8.2f}")
    print(f"  brute force / Triton      {m_bf / m_tri:8.2f}")
    print(f"answers: Triton figure mismatches {mismatch['triton figure']}, "
          f"wavefront mismatches (analysis vs brute force) {mismatch['wavefronts']}, "
          f"parsed-text mismatches {mismatch['parsed text']}")
    print("(Triton's call starts from MLIR attributes and converts them to linear layouts inside; "
          "'analyze' starts from LinearLayout objects, 'parse + analyze' from the same MLIR text)")
    return 0 if not any(mismatch.values()) else 1


if __name__ == "__main__":
    if "--triton-worker" in sys.argv:
        triton_worker()
    sys.exit(main())
