"""Record what the CuTe DSL prints for its layouts, composed layouts and tensors, and what it
computes for them, for ``tests/test_cute_from_dsl.py`` (``verilayout.cute.from_dsl`` reads these
objects from their print). Needs the optional extra ``cutedsl`` (nvidia-cutlass-dsl); the test reads
the stored ``dsl_printed.json`` only.

    python tests/cutedsl/generate_printed.py > tests/cutedsl/dsl_printed.json
"""
from __future__ import annotations

import json
import sys
import warnings

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_compact_tensor

RECORD: list[dict] = []


def _layout(name: str, obj, n: int) -> None:
    """The print and the DSL's own offset at each of the first ``n`` indices (``obj(i)``)."""
    RECORD.append({"name": name, "kind": type(obj).__name__, "text": str(obj),
                   "offsets": [int(obj(i)) for i in range(n)]})


def _tensor(name: str, t) -> None:
    RECORD.append({"name": name, "kind": type(t).__name__, "text": str(t), "layout": str(t.layout),
                   "element_type": str(t.element_type), "iterator": str(t.iterator)})


@cute.kernel
def _kernel(a: cute.Tensor):
    nested = cute.make_layout((8, (4, 2)), stride=(4, (1, 32)))
    _layout("nested", nested, 64)
    _layout("zipped_divide", cute.zipped_divide(nested, (2, 4)), 64)
    _layout("coalesce", cute.coalesce(cute.make_layout((4, (2, 8)), stride=(16, (8, 1)))), 64)
    atom = cute.make_composed_layout(cute.make_swizzle(3, 4, 3), 0,
                                     cute.make_layout(((8, 16), (64, 1)), stride=((64, 512), (1, 0))))
    _layout("composed_sw343", atom, 1024)
    _layout("composed_sw232_offset", cute.make_composed_layout(cute.make_swizzle(2, 3, 2), 4,
                                                                cute.make_layout((16, 16), stride=(16, 1))), 256)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        smem = cutlass.utils.SmemAllocator()
    _tensor("smem_swizzled", smem.allocate_tensor(cutlass.Float16, atom.outer, byte_alignment=1024, swizzle=atom.inner))
    _tensor("smem_plain", smem.allocate_tensor(cutlass.Float32, cute.make_layout((32, 8)), byte_alignment=128))
    _tensor("gmem", a)


@cute.jit
def _host(a: cute.Tensor):
    _kernel(a).launch(grid=(1, 1, 1), block=(32, 1, 1), smem=65536)


if __name__ == "__main__":
    a = make_fake_compact_tensor(cutlass.Float16, (128, 64), stride_order=(1, 0), assumed_align=16)
    cute.compile(_host, a)
    rows = ",\n".join(json.dumps(o) for o in RECORD)       # one object a line
    sys.stdout.write(f'{{"nvidia-cutlass-dsl": {json.dumps(getattr(cutlass, "__version__", "?"))}, "objects": [\n{rows}]}}\n')
