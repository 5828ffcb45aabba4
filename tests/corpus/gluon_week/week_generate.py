"""Compile ``week_kernels.WEEK`` with the Triton 3.9 wheel (no GPU) into this folder:

    python tests/corpus/gluon_week/week_generate.py [NAME ...]

writes ``<name>_<good|bad>_sm<arch>.{ttgir,ptx}`` (4 warps, pointers 16-byte aligned; paths in ``loc(...)`` reduced to base
names) and prints each kernel that Triton rejects with its reason.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
_ABS = re.compile(r'"(?:/[^"/\n]+)+/([^"/\n]+)"')


def compile_one(fn, sig: dict, bad: bool, arch: int) -> dict:
    """The TTGIR and PTX of one kernel variant for ``sm_<arch>``."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource
    attrs = {(i,): [["tt.divisibility", 16]] for i, t in enumerate(sig.values()) if t.startswith("*")}
    k = triton.compile(GluonASTSource(fn, {**sig, "BAD": "constexpr"}, {"BAD": bad}, attrs=attrs),
                       target=GPUTarget("cuda", arch, 32), options={"num_warps": 4})
    return {ext: _ABS.sub(lambda m: f'"{m.group(1)}"', k.asm[ext]) for ext in ("ttgir", "ptx")}


def main(names: list[str]) -> None:
    from week_kernels import WEEK
    for name, fn, sig, archs, _why in WEEK:
        if names and name not in names:
            continue
        for arch in archs:
            for bad in (False, True):
                stem = f"{name}_{'bad' if bad else 'good'}_sm{arch}"
                try:
                    asm = compile_one(fn, sig, bad, arch)
                except Exception as e:  # Triton's rejection is a result of the week, kept in the log
                    print(f"{stem}: rejected: {' '.join(str(e).split())[-300:]}")
                    continue
                for ext, text in asm.items():
                    (HERE / f"{stem}.{ext}").write_text(text)
                print(f"{stem}: ok")


if __name__ == "__main__":
    main(sys.argv[1:])
