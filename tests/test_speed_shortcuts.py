"""The shortcuts the element checks and the swizzle search take for speed give the answers of the
definitions they replace.

Oracles written here: GF(2) spans enumerated vector by vector (every XOR of a subset), and the
bytes each lane of a hand-made store touches (lane ``l`` writes 4 bytes at ``4 l``, one lane moved).
"""
from __future__ import annotations

import random

import z3

from verilayout.audit.ptx_elements import _VERDICT, _compare
from verilayout.audit.ptx_relabel import OpLine
from verilayout.audit.ptx_scratch import ThreadBytes
from verilayout.hw.nvidia.ptx_model import Instr
from verilayout.synth.swizzle import _meet_dim, _nested, _pivots, _reduce_basis, _table_of


def _span(vectors) -> set[int]:
    """Every XOR of a subset of ``vectors`` (the span, by enumeration)."""
    out = {0}
    for v in vectors:
        out |= {x ^ v for x in out}
    return out


def _dim(space: set[int]) -> int:
    return len(space).bit_length() - 1


def _vectors(rng: random.Random, k: int, bits: int = 6) -> tuple[int, ...]:
    return tuple(rng.randrange(1 << bits) for _ in range(k))


def test_pivots_rank_and_basis_match_enumerated_spans():
    rng = random.Random(7)
    for _ in range(400):
        vs = _vectors(rng, rng.randrange(0, 7))
        space = _span(vs)
        assert len(_pivots(vs)) == _dim(space)
        basis = _reduce_basis(vs)
        assert _span(basis) == space and len(basis) == _dim(space)
        assert _span(_table_of(basis).values()) == space
        assert _span(_table_of(list(vs)).values()) == space     # a basis with repeated leading bits


def test_meet_dim_is_the_dimension_of_the_enumerated_intersection():
    rng = random.Random(11)
    for _ in range(400):
        phase = _vectors(rng, rng.randrange(0, 6))
        big = tuple(_reduce_basis(_vectors(rng, rng.randrange(1, 6))))
        assert _meet_dim(phase, big) == _dim(_span(phase) & _span(big)), (phase, big)


def test_nested_is_containment_and_dimension_of_the_enumerated_span():
    rng = random.Random(13)
    for _ in range(400):
        rest = _vectors(rng, rng.randrange(0, 4))
        big = tuple(_reduce_basis(_vectors(rng, rng.randrange(1, 5))))
        o = _vectors(rng, rng.randrange(0, 3))
        space = _span(rest + big)
        for dim in range(7):
            want = set(o) <= space and _dim(space) == dim
            assert _nested(rest, big, o, dim) == want, (rest, big, o, dim)


def _store(lane_offsets: list[int]) -> list:
    """One ``st.shared.b32`` whose lane ``l`` writes 4 bytes at ``lane_offsets[l]`` (base 0)."""
    ins = Instr("st.shared.b32", (), 10, loc="k.py:1", parts=("st", "shared", "b32"))
    return [(ins, z3.BitVecVal(0, 32), ThreadBytes(set(range(o, o + 4)) for o in lane_offsets))]


def test_a_verdict_alone_has_the_status_of_the_explained_one():
    op = OpLine(5, "ttg.local_store")
    lanes = [set(range(4 * k, 4 * k + 4)) for k in range(32)]   # the layouts: lane l at bytes 4l..4l+3
    right = _store([4 * k for k in range(32)])
    moved = _store([4 * k if k != 9 else 4 * 40 for k in range(32)])   # lane 9 writes past the warp's bytes
    for part in (right, moved):
        full = _compare(op, part, lanes, "4-byte f32", False, 4, {})
        quick = _compare(op, part, lanes, "4-byte f32", False, 4, {}, explain=_VERDICT)
        assert (quick.status, quick.severity) == (full.status, full.severity)
    assert _compare(op, right, lanes, "4-byte f32", False, 4, {}, explain=_VERDICT) == \
        _compare(op, right, lanes, "4-byte f32", False, 4, {})
    full = _compare(op, moved, lanes, "4-byte f32", False, 4, {})
    assert full.status == "counterexample" and full.data["lane"] == 9

