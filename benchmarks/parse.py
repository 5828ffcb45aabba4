"""Benchmark: parse + convert every distinct type of the corpus (tests/corpus/<target>/*.ttgir)
against Triton's own conversion of the same attribute objects.

verilayout: for each file, its alias table is read once (``parse_aliases``, not timed), then
every distinct type text is parsed (``Module.type_of``) and converted (``type_to_layout``). Triton: a worker subprocess (tests/oracles/test_corpus_triton_oracle.py
``--worker --time N``) parses the same types once and times only
``GluonOpBuilder.to_linear_layout(attr, shape)`` per type: the first call alone (cold), and the
mean of N calls (Triton caches conversions per (shape, attribute) in its dialect: warm). Both
include the Python binding's wrapping of the result into a Gluon object.

Prints, per type (medians of --rounds passes): verilayout cold (every cache emptied first; they
fill as layouts repeat across types and files), verilayout warm (the same pass again: parsed types and
conversions come from the caches, as Triton's do), and Triton's; and the ratios.

    python benchmarks/parse.py [--rounds 5] [--calls 20]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tests.oracles.test_corpus_triton_oracle import requests_for, run_worker  # noqa: E402
from tests.test_frontend_coverage import CORPUS, corpus_types  # noqa: E402
from verilayout.frontends import mlir  # noqa: E402
from verilayout.frontends.triton import dispatch, distributed  # noqa: E402
from verilayout.frontends.mlir import parse_aliases  # noqa: E402
from verilayout.frontends.triton import type_to_layout  # noqa: E402
from verilayout.frontends.ttgir import Module  # noqa: E402


def modules(by_file: dict[str, list[str]]) -> dict[str, Module]:
    """Each file's alias table (the ``#name = ...`` lines), as the reader keeps it."""
    return {f: Module(None, None, 32, 1, (), dict(parse_aliases((CORPUS / f).read_text())))
            for f in by_file}


def clear_caches() -> None:
    """Empty every cache of the reader (a fresh process, less the interpreter's own warm-up)."""
    dispatch.clear_cache()
    distributed._blocked_cta.cache_clear()
    mlir._standalone_value.cache_clear()
    mlir._line_starts.cache_clear()


def verilayout_pass(by_file: dict[str, list[str]], mods: dict[str, Module]) -> tuple[float, int]:
    """Seconds to parse + convert every distinct type of every file; the type count."""
    t0 = time.perf_counter()
    n = 0
    for f, texts in by_file.items():
        mod = mods[f]
        for text in texts:
            type_to_layout(mod.type_of(text))
            n += 1
    return time.perf_counter() - t0, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5, help="cold and warm verilayout passes (median)")
    ap.add_argument("--calls", type=int, default=20, help="Triton calls per type")
    args = ap.parse_args()
    types = corpus_types()
    if not types:
        sys.exit("the corpus (tests/corpus/*/*.ttgir) is absent")
    by_file: dict[str, list[str]] = {}
    for ct in types:
        by_file.setdefault(ct.file, []).append(ct.text)
    colds = []
    for _ in range(args.rounds):
        clear_caches()
        mods = modules(by_file)
        t, n = verilayout_pass(by_file, mods)
        colds.append(t)
    cold = statistics.median(colds)
    warm = statistics.median(verilayout_pass(by_file, mods)[0] for _ in range(args.rounds))
    reqs, order = requests_for(types)
    answers = run_worker(reqs, timing=args.calls)
    triton = [a["seconds"] for ans in answers for a in ans if "seconds" in a]
    t_mean = sum(triton) / len(triton)
    t_first = sum(a["first_seconds"] for ans in answers for a in ans if "seconds" in a) / len(triton)
    print(f"corpus: {len(by_file)} files, {n} distinct types; Triton timed {len(triton)} of them")
    print(f"verilayout cold : {cold / n * 1e3:.4f} ms per type ({cold:.2f} s)")
    print(f"verilayout warm : {warm / n * 1e3:.4f} ms per type ({warm:.3f} s)")
    print(f"Triton first    : {t_first * 1e3:.4f} ms per type (first to_linear_layout call)")
    print(f"Triton          : {t_mean * 1e3:.4f} ms per type (to_linear_layout, mean of {args.calls} calls)")
    print(f"ratio cold/Triton first: {cold / n / t_first:.2f}x   warm/Triton: {warm / n / t_mean:.2f}x")


if __name__ == "__main__":
    main()
