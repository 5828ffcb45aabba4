"""The swizzle candidate table's direct 2-D builder against the general one.

The oracle is :func:`verilayout.synth.swizzle.swizzled_shared_layout` (Triton's
``swizzledSharedToLinearLayout`` through the converter's CTA/CGA fit), and, independently, the
formula of Triton's ``SwizzledSharedEncodingAttr``: element ``(row, col)`` of a row-major tile sits
at offset ``row * ncols + (((col / vec) ^ phase) * vec + col % vec)``, ``phase = (row / perPhase) %
maxPhase`` (``lib/Dialect/TritonGPU/IR/Dialect.cpp``), checked by brute force.
"""
import itertools

from verilayout.synth.swizzle import _swizzled_2d, swizzled_shared_layout


def test_direct_builder_equals_the_general_one():
    for a, b in itertools.product((1, 2, 8, 32, 128), repeat=2):
        for order, vec, per, mx in itertools.product(((1, 0), (0, 1)), (1, 2, 8, 16), (1, 2, 8), (1, 4, 16)):
            assert _swizzled_2d((a, b), vec, per, mx, order) == swizzled_shared_layout([a, b], vec, per, mx, order)


def test_direct_builder_places_elements_as_triton_does():
    rows, cols = 16, 64
    for vec, per, mx in ((8, 1, 8), (4, 2, 4), (2, 1, 16), (1, 1, 1)):
        lay = _swizzled_2d((rows, cols), vec, per, mx, (1, 0))
        for r, c in itertools.product(range(rows), range(cols)):
            phase = (r // per) % mx
            off = r * cols + (((c // vec) ^ phase) % (cols // vec)) * vec + c % vec
            assert lay.apply({"offset": off}) == {"dim0": r, "dim1": c}
