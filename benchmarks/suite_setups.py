"""The test suite's costly set-ups, each against its baseline measured in the same run (CPU seconds
of this process and its children, so a loaded machine moves both sides alike).

    python benchmarks/suite_setups.py [--skip compile,ring,tar,cute,planted,grids]

* ``compile``: ``simulate.independent.compiled_checks`` of the emitted CTA-pair sm_100a GEMM:
  nvcc + ptxas with the compile cache off, against a second process of the same run that finds
  the first one's entries (the in-process memo emptied, a fresh cache folder).
* ``ring``: the pair's ``pair-ring`` check (``simulate.pair_ring``) on the kernel's several-tile
  runs, a fresh search against the same programs again (a planted edit that leaves the barrier
  protocol unchanged); the answers are compared.
* ``tar``: the harvested pairs ``tests/test_ptx_shuffles`` reads (pairs whose TTGIR converts into
  a dot operand, 5 of them), extracted by name from the xz tarball (the old way: each extraction
  seeks back, which decompresses from the start) against one forward pass; the bytes are compared.
* ``cute``: the module fixtures of ``tests/test_cutedsl_audit``, ``test_cutedsl_quack`` and
  ``test_cutedsl_host`` (the CuTe-DSL corpus' unmodified kernels: the first two files' kernels, the
  third both sets), each auditing its kernels, against ``tests.audited.audit_cute_pair`` (each pair
  audited once between them; a fresh cache folder); the reports are compared.
* ``planted``: the mutants of ``tests/test_ptx_mutations``'s sweep parsed in full, against
  ``tests.reference.ptx_mutations.planted_module`` (the kernel's module, the planted line parsed
  again); the modules are compared.
* ``grids``: the CTA runs of ``tests/test_emit_gemm_cover``'s swap-AB split-K cover (every grid of
  1..31 CTAs, threads 0 and 128 of each), one ``run_threads`` per CTA against ``run_ctas`` (each
  grid's CTAs as one batch); every event of every run is compared.

Prints one line per set-up: baseline s, new s, ratio new/baseline. Goal: every ratio < 0.2.
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _timed(fn):
    t = _cpu()
    out = fn()
    return _cpu() - t, out


def _pair_kernel():
    from verilayout.emit.tcgen05_gemm import build_tcgen05_manifest, render_tcgen05_cuda
    man = build_tcgen05_manifest("bf16", tile=(256, 128, 64), stages=4, ctas=2)
    return man, render_tcgen05_cuda(man)


def bench_compile() -> tuple[float, float, bool]:
    from verilayout.simulate import independent as ind
    _, src = _pair_kernel()

    def fresh():
        ind.compile_ptx.cache_clear()
        ind.ptxas_spills.cache_clear()
        return ind.compiled_checks(src, "sm_100a")
    os.environ["VERILAYOUT_COMPILE_CACHE"] = ""
    base, want = _timed(fresh)
    os.environ["VERILAYOUT_COMPILE_CACHE"] = tempfile.mkdtemp(prefix="vl_bench_cache_")
    fresh()                                              # the run's first process writes the entries
    new, got = _timed(fresh)
    same = [c.message for c in got[0]] == [c.message for c in want[0]]
    return base, new, same


def bench_ring() -> tuple[float, float, bool]:
    from verilayout.frontends.ptx import parse_ptx
    from verilayout.simulate import pair_ring
    from verilayout.simulate import tcgen05_check as tc
    from verilayout.simulate.independent import compile_ptx
    g, src = _pair_kernel()                             # the typed sm_100a manifest
    mod = parse_ptx(compile_ptx(src, "sm_100a")[1])
    entry = next(f for f in mod.functions if "vl_gemm_kernel" in f)
    _, bm, bn, bk, stages, _, _ = tc._spec(g)
    runs = tc._pair_runs(mod, entry, (tc.PAIR_TILES * bm - 40, bn, (stages // tc.PAIR_TILES + 1) * bk))
    pair_ring._MEMO.clear()
    base, want = _timed(lambda: pair_ring.pair_ring_check(runs, tc._pair_load_bytes(g)))
    new, got = _timed(lambda: pair_ring.pair_ring_check(runs, tc._pair_load_bytes(g)))
    return base, new, got == want


def bench_tar() -> tuple[float, float, bool]:
    tarball = ROOT / "tests" / "harvest" / "corpus.tar.xz"
    convert = re.compile(rb"ttg\.convert_layout[^\n]*-> tensor<[^\n]*#ttg\.dot_op")

    def by_name():
        d = Path(tempfile.mkdtemp(prefix="vl_bench_tar_"))
        with tarfile.open(tarball, "r:xz") as tar:
            texts = {n: tar.extractfile(n).read() for n in tar.getnames() if n.endswith((".ttgir", ".ptx"))}
            keep = sorted(n for n in texts if n.endswith(".ttgir") and n[:-6] + ".ptx" in texts
                          and convert.search(texts[n]))[:5]
            for n in keep:
                for ext in (".ttgir", ".ptx"):
                    tar.extract(n[:-6] + ext, d, filter="data")
        return {p.relative_to(d).as_posix(): p.read_bytes() for p in d.rglob("*") if p.is_file()}

    def one_pass():
        with tarfile.open(tarball, "r:xz") as tar:
            texts = {m.name: tar.extractfile(m).read() for m in tar
                     if m.isfile() and m.name.endswith((".ttgir", ".ptx"))}
        keep = sorted(n for n in texts if n.endswith(".ttgir") and n[:-6] + ".ptx" in texts
                      and convert.search(texts[n]))[:5]
        return {n[:-6] + ext: texts[n[:-6] + ext] for n in keep for ext in (".ttgir", ".ptx")}
    base, want = _timed(by_name)
    new, got = _timed(one_pass)
    return base, new, got == want


def _cute_fixtures() -> list[list[tuple[str, str, str]]]:
    """The pairs each of the three CuTe-DSL test modules' fixtures audits: (mlir, ptx, path)."""
    import gzip
    import json
    corpus = ROOT / "tests" / "cutedsl" / "corpus"

    def kernels(manifest: str) -> list[str]:
        return sorted(json.loads((corpus / manifest).read_text())["kernels"])

    def pair(k: str) -> tuple[str, str, str]:
        return tuple(gzip.open(corpus / f"{k}.{x}.gz", "rt").read() for x in ("mlir", "ptx")) + (f"{k}.ptx",)
    main, quack = kernels("manifest.json"), kernels("manifest_quack.json")
    return [[pair(k) for k in ks] for ks in (main, quack, main + quack)]


def bench_cute() -> tuple[float, float, bool]:
    from verilayout.audit.cute_dsl import audit_pair
    from tests import audited
    files = _cute_fixtures()
    base, want = _timed(lambda: [[audit_pair(*p) for p in f] for f in files])
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="vl_bench_cute_")
    audited._cute_memo.cache_clear()
    new, got = _timed(lambda: [[audited.audit_cute_pair(*p) for p in f] for f in files])
    return base, new, got == want


def bench_planted() -> tuple[float, float, bool]:
    from verilayout.frontends.ptx import parse_ptx
    from tests.reference.ptx_mutations import plant, planted_module
    from tests.test_ptx_mutations import _sweep
    todo = _sweep()
    texts = {p: p.read_text() for p, _ in todo}
    mods = {p: parse_ptx(t) for p, t in texts.items()}
    base, want = _timed(lambda: [parse_ptx(plant(texts[p], s)) for p, s in todo])
    new, got = _timed(lambda: [planted_module(mods[p], texts[p], s) for p, s in todo])
    return base, new, got == want


def _events(runs) -> list:
    """The runs as plain values: completion, and each event's op, line, order, lanes and values."""
    def val(v):
        return None if v is None else (str(v.dtype), v.tolist())
    return [(r.complete, r.reason, [(e.op, e.line, e.seq, e.lanes.tolist(),
                                     [(k, val(v)) for k, v in e.values.items()]) for e in r.events])
            for r in runs]


def bench_grids() -> tuple[float, float, bool]:
    from verilayout.emit.cuda_gemm import emit_gemm
    from verilayout.frontends.ptx import parse_ptx
    from verilayout.simulate.gemm_check import PARAMS, SMEM_BASE
    from verilayout.simulate.independent import compile_ptx
    from verilayout.simulate.ptx_run import run_ctas, run_threads
    e = emit_gemm("bf16", tile=(64, 16, 64), stages=3, splits=2, swap_ab=True)
    mod = parse_ptx(compile_ptx(e.files["kernel.cu"])[1])
    entry = next(f for f in mod.functions if "vl_gemm_kernel" in f)
    kw = dict(param_values=PARAMS(5 * 64 - 8, 3 * 16 - 8, 3 * 64), shared_base=SMEM_BASE)
    base, want = _timed(lambda: [_events([run_threads(mod, entry, [0, 128], ctaid=b, nctaid=g, **kw)
                                          for b in range(g)]) for g in range(1, 32)])
    new, got = _timed(lambda: [_events(run_ctas(mod, entry, [0, 128], range(g), nctaid=g, **kw))
                               for g in range(1, 32)])
    return base, new, got == want


BENCHES = {"compile": bench_compile, "ring": bench_ring, "tar": bench_tar, "cute": bench_cute,
           "planted": bench_planted, "grids": bench_grids}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--skip", default="", help="comma-separated set-ups not to run (compile, ring, tar, cute, planted, grids)")
    args = ap.parse_args(argv)
    skip = {s for s in args.skip.split(",") if s}
    print(f"{'set-up':8s} {'baseline s':>10s} {'new s':>8s} {'new/base':>8s}  same answer")
    for name, fn in BENCHES.items():
        if name in skip:
            continue
        t0 = time.time()
        base, new, same = fn()
        print(f"{name:8s} {base:10.2f} {new:8.2f} {new / base:8.3f}  {same}   ({time.time() - t0:.0f} s wall)",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
