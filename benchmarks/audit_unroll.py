"""verilayout audit time per PTX instruction as one kernel's loop is unrolled 1x, 2x, 4x, 8x.

    python benchmarks/audit_unroll.py [--unroll 1 2 4 8] [--reps 3] [--arch 90] [--profile]

The kernel (below) is a K loop of ``tl.dot`` over fp16 tiles whose body is repeated UNROLL times
by ``tl.static_range`` (one compile per factor, Triton 3.9, ``GPUTarget("cuda", ARCH, 32)``, one
stage so the repetitions are the only growth); the body also stores a tile transposed through
shared memory (``tl.trans`` + ``convert_layout`` work for the element checks). Each factor's TTGIR
and PTX are audited together (``audit_paths([X.ttgir, X.ptx])``) in a fresh forked process (no
cache shared between factors), ``--reps`` times; the figure is the least CPU time (the worker's,
read from the parent's child times) divided by the PTX instructions of the kernel, and its ratio
to the 1x figure in the same run. Goal (issue "the audit at the compiler's speed"): flat, i.e.
ratios near 1.0: repeated instructions cost once per distinct address function.

``--profile`` prints where the time goes for the largest factor (cProfile, own time).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

KERNEL = '''
import triton
import triton.language as tl


@triton.jit
def unrolled(a_ptr, b_ptr, c_ptr, t_ptr, K, UNROLL: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
             BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK * UNROLL):
        for u in tl.static_range(UNROLL):
            k = k0 + u * BK
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
            b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
            acc = tl.dot(a, b, acc)
            tl.store(t_ptr + u * BM * BK + rk[:, None] * BM + rm[None, :], tl.trans(a))
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)
'''


def compile_factor(unroll: int, arch: int, out: Path) -> tuple[Path, float]:
    """Compile the kernel with ``UNROLL=unroll``; the stem of its ``.ttgir``/``.ptx`` in ``out``
    and the compile's wall seconds."""
    import importlib.util
    import triton
    from triton.backends.compiler import GPUTarget
    src = out / "unrolled_kernel.py"
    if not src.exists():
        src.write_text(KERNEL)
    spec = importlib.util.spec_from_file_location("unrolled_kernel", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "t_ptr": "*fp16", "K": "i32"}
    consts = {"UNROLL": unroll, "BM": 64, "BN": 64, "BK": 32}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(5)}
    t = time.perf_counter()
    k = triton.compile(triton.compiler.ASTSource(mod.unrolled, {**sig, **{c: "constexpr" for c in consts}},
                                                 consts, attrs=attrs),
                       target=GPUTarget("cuda", arch, 32), options={"num_warps": 4, "num_stages": 1})
    dt = time.perf_counter() - t
    stem = out / f"unrolled_x{unroll}"
    for kind in ("ttgir", "ptx"):
        (stem.parent / f"{stem.name}.{kind}").write_text(k.asm[kind])
    return stem, dt


def _children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def audit_cpu(stem: Path) -> tuple[float, int]:
    """CPU seconds of auditing the pair in a fresh forked worker, and the checks it reports."""
    from verilayout.audit.paths import audit_paths
    c0 = _children_cpu()
    rep = audit_paths([f"{stem}.ttgir", f"{stem}.ptx"], timeout=3600)
    return _children_cpu() - c0, sum(len(f.checks) for f in rep.files)


def ptx_instructions(stem: Path) -> int:
    from verilayout.frontends.ptx import parse_ptx
    return len(parse_ptx(Path(f"{stem}.ptx").read_text()).instrs)


def profile(stem: Path, top: int = 15) -> None:
    import cProfile
    import pstats
    from verilayout.audit.paths import audit_paths
    pr = cProfile.Profile(time.process_time)        # CPU seconds: the machine may be shared
    pr.enable()
    audit_paths([f"{stem}.ttgir", f"{stem}.ptx"])
    pr.disable()
    pstats.Stats(pr).sort_stats("tottime").print_stats(top)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--unroll", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--arch", type=int, default=90)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args(argv)
    os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="vl-unroll-cache-"))
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    out = Path(tempfile.mkdtemp(prefix="vl-unroll-"))
    from verilayout.audit import ptx, ttgir  # noqa: F401  imported before the workers fork
    base = None
    print(f"{'unroll':>6s} {'PTX instr':>9s} {'checks':>6s} {'compile':>8s} {'audit CPU':>9s} {'us/instr':>9s} ratio")
    last = None
    for u in args.unroll:
        stem, c = compile_factor(u, args.arch, out)
        n = ptx_instructions(stem)
        best, checks = min(audit_cpu(stem) for _ in range(args.reps))
        per = best / n * 1e6
        base = base or per
        print(f"{u:6d} {n:9d} {checks:6d} {c:7.2f}s {best:8.3f}s {per:9.1f} {per / base:5.2f}x")
        last = stem
    if args.profile and last is not None:
        profile(last)
    return 0


if __name__ == "__main__":
    sys.exit(main())
