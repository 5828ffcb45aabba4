"""Register views on real compiled kernels (tests/fixtures/ttgir/views, made by generate.py there):
``tt.split`` whose split dim is register bit 1 of a ``#linear`` layout, and ``tt.reshape
allow_reorder`` under reductions, each against a brute force outside the code under test:

* the layouts are Triton's own (the wheel's linear-layout conversion, through tests/oracles);
* the lowering is simulated here element by element as Triton 3.9's ``SplitOpConversion`` /
  ``ReshapeOpConversion`` do it (their source: split takes runs of ``2**p`` registers, ``p`` the
  first register basis whose last coordinate is 1; reshape copies registers in order);
* a reduction is right when each output sums exactly the elements of its fiber, counted once.
"""
from __future__ import annotations

import re
from itertools import product
from pathlib import Path

import pytest

from verilayout.audit import audit_text
from verilayout.core.linear_layout import LinearLayout
from verilayout.prove.tensor_views import join_split_verdict, reorder_verdict

pytest.importorskip("triton")
from tests.oracles import triton_oracle as oracle  # noqa: E402

HERE = Path(__file__).resolve().parent / "fixtures" / "ttgir" / "views"
W4 = {"sm90": HERE / "w4a16_nsplit_sm90.ttgir", "sm100": HERE / "w4a16_nsplit_sm100.ttgir"}
SUM, ROWS = HERE / "sum_reorder_sm90.ttgir", HERE / "rows_reorder_sm90.ttgir"


def _aliases(text: str) -> dict[str, str]:
    return dict(re.findall(r"^(#\w+) = (#ttg\.[^\n]+)$", text, re.M))


def _line(text: str, marker: str) -> tuple[int, str]:
    for i, ln in enumerate(text.split("\n"), 1):
        if marker in ln:
            return i, ln
    raise AssertionError(f"{marker!r} is not in the fixture any more")


def _types(line: str) -> list[tuple[list[int], str]]:
    return [([int(x) for x in dims.split("x")], alias)
            for dims, alias in re.findall(r"tensor<([\dx]+)x\w+, (#\w+)>", line)]


@pytest.fixture(scope="module")
def triton_layouts():
    """Triton's own bases for every (alias, shape) the view ops of the fixtures use."""
    wanted = {}
    for path in list(W4.values()) + [SUM, ROWS]:
        text = path.read_text()
        al = _aliases(text)
        for marker in ("tt.split", "allow_reorder"):
            if marker in text:
                for shape, alias in _types(_line(text, marker)[1]):
                    wanted[(path.name, alias, tuple(shape))] = al[alias]
    keys = sorted(wanted)
    answers = oracle.run_oracle([{"kind": "mlir_attr", "attr": wanted[k], "shape": list(k[2]), "dtype": "f32",
                                  "views": False, "props": False} for k in keys], timeout=120.0)
    if all(a.get("error") == "startup_failed" for a in answers):
        pytest.skip("the Triton oracle worker does not start")
    assert all(a.get("ok") for a in answers), [a for a in answers if not a.get("ok")][:1]
    return {k: a["bases"] for k, a in zip(keys, answers)}


def _apply(bases: dict, point: dict) -> tuple[int, ...]:
    n = len(next(b for bs in bases.values() for b in bs))
    out = [0] * n
    for d, v in point.items():
        for j, b in enumerate(bases.get(d, [])):
            if v >> j & 1:
                out = [x ^ y for x, y in zip(out, b)]
    return tuple(out)


def _points(bases: dict):
    """Every (lane, warp, block) and the register count of a thread."""
    sizes = {d: range(1 << len(bases.get(d, []))) for d in ("lane", "warp", "block")}
    for lane, warp, block in product(sizes["lane"], sizes["warp"], sizes["block"]):
        yield {"lane": lane, "warp": warp, "block": block}


def _split_moves_data(src: dict, half: dict) -> list:
    """Simulate SplitOpConversion on every thread: the elements each result register receives,
    against where the result type says they are; the mismatches."""
    regs = src["register"]
    p = next(i for i, b in enumerate(regs) if b[-1] == 1)
    run, n = 1 << p, 1 << len(regs)
    lhs = [i for i in range(n) if (i // run) % 2 == 0]
    rhs = [i for i in range(n) if (i // run) % 2 == 1]
    bad = []
    for thread in _points(src):
        for half_idx, picks in enumerate((lhs, rhs)):
            for j, i in enumerate(picks):
                got = _apply(src, {"register": i, **thread})
                want = _apply(half, {"register": j, **thread})
                if got != want + (half_idx,):
                    bad.append((thread, half_idx, j, got, want))
    return bad


def _split_layouts(triton_layouts, path: Path, text: str):
    _, ln = _line(text, "tt.split")
    (s_shape, s_alias), (h_shape, h_alias) = _types(ln)
    return triton_layouts[(path.name, s_alias, tuple(s_shape))], triton_layouts[(path.name, h_alias, tuple(h_shape))]


def _ll(bases: dict, shape: list[int]) -> LinearLayout:
    return LinearLayout({d: bases.get(d, []) for d in ("register", "lane", "warp", "block")},
                        [(f"dim{i}", s) for i, s in enumerate(shape)])


# ----- root cause 4: tt.split on a register bit other than 0 -----------------------------------

@pytest.mark.parametrize("arch", sorted(W4))
def test_dequant_split_on_register_bit_1_is_proved(triton_layouts, arch):
    text = W4[arch].read_text()
    src, half = _split_layouts(triton_layouts, W4[arch], text)
    # Triton's layouts: the split dim is register bit 1 (not 0), and the lowering moves no data
    assert next(i for i, b in enumerate(src["register"]) if b[-1] == 1) == 1
    assert _split_moves_data(src, half) == []
    rep = audit_text(text, W4[arch].name)
    splits = [c for c in rep.checks if c.op == "tt.split"]
    assert splits and all((c.check, c.status, c.data["register_bit"]) == ("view-layout", "proved", 1)
                          for c in splits)
    assert not [c for c in rep.checks if c.severity == "error"]


def _mutate_half(text: str) -> tuple[str, int]:
    """The half layout with its first two register bases swapped: each thread's registers hold the
    split's elements in another order, so the split really moves data."""
    line, ln = _line(text, "tt.split")
    alias = _types(ln)[1][1]
    decl = _aliases(text)[alias]
    m = re.search(r"register = \[(\[[^\]]*\]), (\[[^\]]*\])", decl)
    mutated = decl[:m.start(1)] + m.group(2) + ", " + m.group(1) + decl[m.end(2):]
    return text.replace(f"{alias} = {decl}", f"{alias} = {mutated}"), line


def test_split_mutant_that_moves_data_is_an_error_at_its_line(triton_layouts):
    text, line = _mutate_half(W4["sm90"].read_text())
    c = next(c for c in audit_text(text, "mutant.ttgir").checks if c.line == line)
    assert (c.op, c.check, c.status, c.severity) == ("tt.split", "view-layout", "counterexample", "error")
    # the brute force agrees that the mutant's half layout is not what the lowering delivers
    src, half = _split_layouts(triton_layouts, W4["sm90"], W4["sm90"].read_text())
    swapped = dict(half, register=[half["register"][1], half["register"][0]] + half["register"][2:])
    assert _split_moves_data(src, swapped)


def test_join_split_verdict_equals_the_simulated_lowering_on_every_register_bit():
    # a 2-register-bit-plus-split layout over 8 x 2: the split bit at each position p, and a
    # half layout either the true one or with two register bases swapped
    for p in range(3):
        rest = [[1, 0], [2, 0]]
        regs = rest[:p] + [[0, 1]] + rest[p:]
        src = {"register": regs, "lane": [[4, 0]], "warp": [], "block": []}
        for swap in (False, True):
            hr = [[1], [2]] if not swap else [[2], [1]]
            half = {"register": hr, "lane": [[4]], "warp": [], "block": []}
            v = join_split_verdict(_ll(src, [8, 2]), _ll(half, [8]))
            assert (v.status == "proved") == (not _split_moves_data(src, half)), (p, swap)


# ----- root cause 3: tt.reshape allow_reorder ---------------------------------------------------

def _reshape_sums(src: dict, dst: dict, src_shape: list[int], dst_shape: list[int], reduced: set[int]) -> bool:
    """Simulate ReshapeOpConversion (registers copied in order) and a reduction over ``reduced``:
    True when every output gets exactly the elements of its fiber (source row-major = dst row-major),
    each once."""
    def flat(c, shape):
        i = 0
        for x, s in zip(c, shape):
            i = i * s + x
        return i

    held: dict[tuple, set] = {}
    for thread in _points(src):
        for r in range(1 << len(src["register"])):
            pos = _apply(dst, {"register": r, **thread})
            data = flat(_apply(src, {"register": r, **thread}), src_shape)
            held.setdefault(pos, set()).add(data)
    if any(len(v) != 1 for v in held.values()):
        return False      # one position of the result holds two different elements
    fibers: dict[tuple, set] = {}
    for pos, (data,) in held.items():
        key = tuple(x for i, x in enumerate(pos) if i not in reduced)
        fibers.setdefault(key, set()).add(data)
    for key, got in fibers.items():
        want = set()
        for pos in held:
            if tuple(x for i, x in enumerate(pos) if i not in reduced) == key:
                want.add(flat(pos, dst_shape))
        if got != want:
            return False
    return True


def _reshape_layouts(triton_layouts, path: Path):
    text = path.read_text()
    line, ln = _line(text, "allow_reorder")
    (ss, sa), (ds, da) = _types(ln)
    return text, line, (triton_layouts[(path.name, sa, tuple(ss))], ss), (triton_layouts[(path.name, da, tuple(ds))], ds)


def test_sum_of_a_reordered_flatten_is_proved(triton_layouts):
    text, line, (src, ss), (dst, ds) = _reshape_layouts(triton_layouts, SUM)
    assert _reshape_sums(src, dst, ss, ds, {0})                    # the total is right
    assert not _reshape_sums(src, dst, ss, ds, set())              # yet the order did change
    c = next(c for c in audit_text(text, SUM.name).checks if c.line == line)
    assert (c.op, c.check, c.status) == ("tt.reshape", "view-layout", "proved") and c.data["reduced"] == ["dim0"]


def test_row_sums_of_a_reorder_across_rows_stay_unchecked(triton_layouts):
    # Triton's layouts really move elements across rows here (can_reorder=True allowed it): the
    # audit must not prove it, nor call the user's permission an error
    text, line, (src, ss), (dst, ds) = _reshape_layouts(triton_layouts, ROWS)
    assert not _reshape_sums(src, dst, ss, ds, {1, 2})
    c = next(c for c in audit_text(text, ROWS.name).checks if c.line == line)
    assert (c.check, c.status, c.severity, c.data["reason"]) == ("view-layout", "unchecked", None, "allow_reorder")


def test_reshape_mutants_are_errors_at_their_line():
    text = SUM.read_text()
    line, ln = _line(text, "allow_reorder")
    # without allow_reorder the same reshape is a permutation Triton did not plan
    plain = text.replace(" allow_reorder :", " :")
    c = next(c for c in audit_text(plain, "m1.ttgir").checks if c.line == line)
    assert (c.status, c.severity) == ("counterexample", "error")
    # a result layout over 2 warps (each thread holds twice the registers): the register-by-register
    # copy cannot fit
    alias = _types(ln)[1][1]
    decl = _aliases(text)[alias]
    bigger = decl.replace("warpsPerCTA = [4]", "warpsPerCTA = [2]")
    assert bigger != decl
    c = next(c for c in audit_text(text.replace(f"{alias} = {decl}", f"{alias} = {bigger}"), "m2.ttgir").checks
             if c.line == line)
    assert (c.op, c.status, c.severity) == ("tt.reshape", "counterexample", "error")


def test_reorder_verdict_equals_brute_force_on_small_layouts():
    # 1-D and 2-D 16-element layouts over 2 register and 2 lane bits; every permutation of the
    # basis vectors as the declared type, reduced over each set of dims
    from itertools import permutations
    vecs = [[1, 0], [2, 0], [0, 1], [0, 2]]
    src = {"register": vecs[:2], "lane": vecs[2:], "warp": [], "block": []}
    for perm in permutations(vecs):
        dst = {"register": list(perm[:2]), "lane": list(perm[2:]), "warp": [], "block": []}
        for red in (set(), {0}, {1}, {0, 1}):
            v = reorder_verdict(_ll(src, [4, 4]), _ll(dst, [4, 4]), {f"dim{i}" for i in red})
            assert (v.status == "proved") == _reshape_sums(src, dst, [4, 4], [4, 4], red), (perm, red)
