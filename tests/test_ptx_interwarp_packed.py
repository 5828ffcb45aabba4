"""The inter-warp stage of ``warp-reduce`` when Triton 3.9 on sm_100 packs two f32 partials in one 64-bit
register (``add.f32x2``): the round stores ``st.shared.v2.b64`` and the second stage loads
``ld.shared.v2.b64`` and unpacks each 64-bit slot with ``mov.b64 {lo, hi}, x`` (PTX ISA 9.7.9.1 mov: the
first register takes the low 32 bits, which sit at the lower address), each 32-bit word then reduced by
its own butterfly chain. Triton is the oracle: its stage must be proved; planted bugs in its PTX (the
round's stores moved by one slot, a load reading a slot twice so a warp's partial is never read, the
barrier removed, the second-stage mask changed) must not be.

The expected warp groups are derived here from the TTGIR's ``#blocked`` layout written out
(``warpsPerCTA = [w0, w1]``, ``order = [1, 0]``: warp ``w`` at ``(w // w1, w % w1)``; the warps with the
same coordinate off the reduced axis share an output element).
"""
from __future__ import annotations

import re

import pytest

from audited import audit_pair
from test_ptx_interwarp import expected_groups, stage_checks

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def _rowsum(X, Y, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(Y + tl.arange(0, M), tl.sum(x, axis=1))


#: name -> (M, N, num_warps); all for sm_100, whose f32x2 adds pack the partials
KERNELS = {"rows32_w4": (32, 64, 4), "rows64_w4": (64, 64, 4)}
_CACHE: dict = {}


def kernel(name: str) -> tuple[str, str]:
    if name not in _CACHE:
        from triton.backends.compiler import GPUTarget
        m, n, warps = KERNELS[name]
        src = triton.compiler.ASTSource(_rowsum, {"X": "*fp32", "Y": "*fp32", "M": "constexpr", "N": "constexpr"},
                                        {"M": m, "N": n})
        k = triton.compile(src, target=GPUTarget("cuda", 100, 32), options={"num_warps": warps})
        _CACHE[name] = (k.asm["ttgir"], k.asm["ptx"])
    return _CACHE[name]


def _round_lines(ptx: str) -> tuple[list[int], int, list[int]]:
    """(indices of the first round's ``st.shared``, of the ``bar.sync`` after them, of its ``ld.shared``)."""
    lines = ptx.splitlines()
    st = next(i for i, s in enumerate(lines) if re.search(r"\bst\.shared\.v2\.b64", s))
    bar = next(i for i in range(st, len(lines)) if "bar.sync" in lines[i])
    end = next(i for i in range(bar + 1, len(lines)) if "bar.sync" in lines[i])
    stores = [i for i in range(st, bar) if re.search(r"\bst\.shared\.", lines[i])]
    loads = [i for i in range(bar, end) if re.search(r"\bld\.shared\.", lines[i])]
    return stores, bar, loads


def _first_round_checks(ttgir: str, planted: str, ptx: str) -> list:
    """The stage checks of ``planted`` over a shuffle of the chains that, in ``ptx``, load in its first
    round (a plant keeps the line numbers; merged checks name their shuffles in ``instructions``)."""
    _s, _b, loads = _round_lines(ptx)
    names = tuple(f"load at PTX line {i + 1}," for i in loads)
    mine = {x for c in stage_checks(ttgir, ptx) if any(n in c.message for n in names)
            for x in c.data["instructions"]}
    assert mine
    return [c for c in stage_checks(ttgir, planted) if mine & set(c.data.get("instructions", [c.line]))]


def test_kernels_pack_partials_in_64_bit_slots():
    for name in KERNELS:
        _t, ptx = kernel(name)
        assert re.search(r"ld\.shared\.v2\.b64", ptx) and re.search(r"mov\.b64\s+\{%r\d+, %r\d+\}, %rd\d+", ptx)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_packed_inter_warp_stage_is_proved_with_the_warps_of_each_element(name):
    ttgir, ptx = kernel(name)
    checks = stage_checks(ttgir, ptx)
    assert checks and all(c.status == "proved" for c in checks), [c.message for c in checks]
    want = expected_groups(ttgir, 1)
    assert want == {(0, 1), (2, 3)}                 # warpsPerCTA [2, 2]: warps 0,1 and 2,3 share rows
    for c in checks:
        assert {tuple(g) for g in c.data["warp_groups"]} == want


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_stores_moved_by_one_slot_are_not_proved(name):
    ttgir, ptx = kernel(name)
    lines = ptx.splitlines()
    stores, _b, _l = _round_lines(ptx)
    for i in stores:                                # each store 16 bytes (v2.b64) further: the next slot
        m = re.search(r"\[(%r\d+)(\+(\d+))?\]", lines[i])
        lines[i] = lines[i].replace(m.group(0), f"[{m.group(1)}+{int(m.group(3) or 0) + 16}]")
    got = _first_round_checks(ttgir, "\n".join(lines), ptx)
    assert got and not any(c.status == "proved" for c in got), [c.message for c in got]


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_a_slot_read_twice_leaves_a_partial_unread_and_is_not_proved(name):
    ttgir, ptx = kernel(name)
    lines = ptx.splitlines()
    _s, _b, loads = _round_lines(ptx)
    first = re.search(r"\[(%r\d+)(\+\d+)?\]", lines[loads[0]]).group(0)
    last = re.search(r"\[(%r\d+)(\+\d+)?\]", lines[loads[-1]]).group(0)
    assert first != last
    lines[loads[-1]] = lines[loads[-1]].replace(last, first)      # the last slot's partials never read
    got = _first_round_checks(ttgir, "\n".join(lines), ptx)
    assert got and not any(c.status == "proved" for c in got), [c.message for c in got]


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_removed_barrier_is_an_error(name):
    ttgir, ptx = kernel(name)
    lines = ptx.splitlines()
    _s, bar, _l = _round_lines(ptx)
    got = _first_round_checks(ttgir, "\n".join(lines[:bar] + [""] + lines[bar + 1:]), ptx)
    assert any(c.status == "counterexample" and "barrier" in c.message for c in got), [c.message for c in got]


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_changed_second_stage_mask_is_an_error(name):
    ttgir, ptx = kernel(name)
    lines = ptx.splitlines()
    _s, _b, loads = _round_lines(ptx)
    i = next(k for k in range(loads[0], len(lines)) if re.search(r"shfl\.sync\.bfly\.b32.*, 1, 31, -1;", lines[k]))
    lines[i] = lines[i].replace(", 1, 31, -1;", ", 2, 31, -1;")   # lane l ^ 2 holds another row's partial
    checks = [c for c in audit_pair(ttgir, "\n".join(lines), "k").checks if c.check == "warp-reduce"]
    assert any(c.status == "counterexample" and c.line == i + 1 for c in checks), \
        [(c.line, c.status, c.message[:200]) for c in checks if c.line == i + 1]
