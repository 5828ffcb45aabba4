"""Differential test: verilayout's bank analysis against Triton 3.9's get_shared_bank_conflicts.

Source of truth: the Triton wheel, run in a subprocess through ``triton_oracle.run_oracle``
(the Gluon layout objects give the linear layouts, ``GluonOpBuilder.get_shared_bank_conflicts``
the conflict figure), and brute-force enumeration written in this file (every lane's bytes,
banks and words, counted per phase) for the hardware wavefront count and the witnesses.

The random pairs are made by :func:`random_pairs` (also used by ``benchmarks/banks.py``).
"""
from __future__ import annotations

import random
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

from tests.reference.banks import auto_count  # noqa: E402

from verilayout.banks import check_banks  # noqa: E402
from verilayout.core.linear_layout import LinearLayout
from verilayout.prove.banks import triton_bank_conflicts  # noqa: E402
from verilayout.synth.swizzle import (mlir_text, nvmma_shared_layout, optimal_swizzle,  # noqa: E402
                                      swizzled_shared_layout)

DTYPE = {8: "i8", 16: "f16", 32: "f32", 64: "f64"}


# ----- random (register layout, shared layout, shape, bits) requests ------------------------------

def _pow2(rng, lo, hi):
    return 1 << rng.randint(lo.bit_length() - 1, hi.bit_length() - 1)


def _split(rng, total_log2, parts):
    """Random split of 2**total_log2 into `parts` powers of two."""
    out = [0] * parts
    for _ in range(total_log2):
        out[rng.randrange(parts)] += 1
    return [1 << x for x in out]


def _unit_bases(shape):
    return [[1 << b if d == k else 0 for k in range(len(shape))]
            for d, n in enumerate(shape) for b in range(n.bit_length() - 1)]


def _mix(rng, bases, p=0.3):
    """Elementary row operations (b_i ^= b_j, j < i): the span stays the whole tensor."""
    bases = [list(b) for b in bases]
    for i in range(1, len(bases)):
        if rng.random() < p:
            j = rng.randrange(i)
            bases[i] = [x ^ y for x, y in zip(bases[i], bases[j])]
    return bases


def _random_linear_distributed(rng, shape, lanes=32):
    units = _unit_bases(shape)  # Triton's linear encodings must be permutations (+ zeros)
    rng.shuffle(units)
    nl = lanes.bit_length() - 1
    lane = units[:nl]
    rest = units[nl:]
    while len(lane) < nl:
        lane.append([0] * len(shape))
    nw = rng.randint(0, min(2, len(rest)))
    warp, reg = rest[:nw], rest[nw:]
    if rng.random() < 0.2:
        reg.insert(rng.randrange(len(reg) + 1), [0] * len(shape))
    return {"kind": "linear", "reg_bases": reg, "lane_bases": lane, "warp_bases": warp, "block_bases": []}


def _random_blocked(rng, shape):
    tpw = _split(rng, 5, 2)
    spt = [_pow2(rng, 1, 8), _pow2(rng, 1, 8)]
    wpc = _split(rng, rng.randint(0, 3), 2)
    order = rng.choice([[1, 0], [0, 1]])
    return {"kind": "blocked", "size_per_thread": spt, "threads_per_warp": tpw, "warps_per_cta": wpc,
            "order": order}


def _random_mma(rng, bits):
    if rng.random() < 0.5:
        wpc = rng.choice([[1, 1], [2, 1], [1, 2], [2, 2], [4, 1], [1, 4]])
        parent = {"kind": "nvidia_mma", "version": [2, 0], "warps_per_cta": wpc, "instr_shape": [16, 8]}
        if rng.random() < 0.5 and bits in (8, 16, 32):
            return {"kind": "dot_operand", "operand_index": rng.randint(0, 1), "parent": parent,
                    "k_width": max(1, 32 // bits)}, (16 * wpc[0], 8 * wpc[1])
        return parent, (16 * wpc[0], 8 * wpc[1])
    wpc = rng.choice([[4, 1], [4, 2], [8, 1]])
    n = rng.choice([8, 16, 32, 64])
    k = 256 // max(bits, 16) if bits != 8 else 32
    return ({"kind": "nvidia_mma", "version": [3, 0], "warps_per_cta": wpc, "instr_shape": [16, n, k]},
            (16 * wpc[0], n * wpc[1]))


def _random_shared(rng, shape, bits):
    r = rng.random()
    if r < 0.4:
        return {"kind": "swizzled_shared", "vec": _pow2(rng, 1, 16), "per_phase": _pow2(rng, 1, 8),
                "max_phase": _pow2(rng, 1, 16), "order": rng.choice([[1, 0], [0, 1]])}
    contig_bytes = shape[1] * bits // 8
    if r < 0.8 and min(contig_bytes, shape[0] * bits // 8) >= 128 and min(shape) >= 8:
        return {"kind": "nvmma_shared", "swizzle_byte_width": rng.choice([0, 32, 64, 128]),
                "element_bitwidth": bits, "transposed": rng.random() < 0.5}
    units = _mix(rng, _unit_bases(shape), 0.3)
    rng.shuffle(units)
    return {"kind": "shared_linear", "offset_bases": units}


def random_pairs(n, seed=0):
    """``n`` random bank-conflict cases: dicts with reg, shared (oracle layout specs), shape, bits."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        bits = rng.choice([8, 16, 16, 32, 32, 64])
        kind = rng.random()
        if kind < 0.3 and bits != 64:
            reg, minshape = _random_mma(rng, bits)
            shape = [max(minshape[0], _pow2(rng, 16, 128)), max(minshape[1], _pow2(rng, 16, 128))]
        else:
            shape = [_pow2(rng, 8, 128), _pow2(rng, 8, 128)]
            reg = _random_linear_distributed(rng, shape) if kind < 0.65 else _random_blocked(rng, shape)
        if shape[0] * shape[1] > 1 << 14:
            continue
        out.append({"reg": reg, "shared": _random_shared(rng, shape, bits), "shape": shape, "bits": bits})
    return out


def oracle_requests(cases):
    """Three oracle requests per case: the two layouts' bases and the conflict figure."""
    reqs = []
    for c in cases:
        dt = DTYPE[c["bits"]]
        reqs.append(dict(c["reg"], shape=c["shape"], dtype=dt, views=False, props=False))
        reqs.append(dict(c["shared"], shape=c["shape"], dtype=dt, views=False, props=False))
        reqs.append({"kind": "bank_conflicts", "reg_layout": c["reg"], "shared_layout": c["shared"],
                     "shape": c["shape"], "bitwidth": c["bits"]})
    return reqs


def writer_requests(cases, seed=1):
    """A random blocked writer per case: its bases and Triton's figure against the case's shared layout."""
    rng = random.Random(seed)
    reqs = []
    for c in cases:
        w = _random_blocked(rng, c["shape"])
        c["writer"] = w
        reqs.append(dict(w, shape=c["shape"], dtype=DTYPE[c["bits"]], views=False, props=False))
        reqs.append({"kind": "bank_conflicts", "reg_layout": w, "shared_layout": c["shared"],
                     "shape": c["shape"], "bitwidth": c["bits"]})
    return reqs


def linear_from_response(resp):
    """LinearLayout from an oracle layout response (bases, in_dims, out_dims)."""
    bases = {d: [list(b) for b in v] for d, v in resp["bases"].items()}
    return LinearLayout(bases, dict(resp["out_dims"]), require_surjective=False)


def resolved_cases(cases, responses):
    """(case, reg LinearLayout, shared LinearLayout, triton conflicts | None if aborted) per usable case."""
    out = []
    for i, c in enumerate(cases):
        r_reg, r_smem, r_bc = responses[3 * i: 3 * i + 3]
        if not (r_reg.get("ok") and r_smem.get("ok")):
            continue
        reg = linear_from_response(r_reg)
        smem = linear_from_response(r_smem)
        if not smem.is_surjective() or not smem.is_injective():
            continue
        if r_bc.get("ok"):
            tc = r_bc["conflicts"]
        elif r_bc.get("error") == "aborted":
            tc = None
        else:
            continue
        out.append((c, reg, smem, tc))
    return out


# ----- the tests ----------------------------------------------------------------------------

pytestmark = pytest.mark.oracle


def _oracle():
    pytest.importorskip("triton")
    from tests.oracles import triton_oracle
    if not triton_oracle.oracle_available():
        pytest.skip("the Triton oracle worker does not start")
    return triton_oracle


@pytest.fixture(scope="module")
def oracle():
    return _oracle()


@pytest.fixture(scope="module")
def differential(oracle):
    """>= 200 usable pairs: (case, reg, smem, Triton's figure or None, writer, writer's figure)."""
    cases = random_pairs(300, seed=4)
    reqs = oracle_requests(cases) + writer_requests(cases)
    resp = oracle.run_oracle(reqs)
    n = 3 * len(cases)
    usable = resolved_cases(cases, resp[:n])
    out = []
    index = {id(c): i for i, c in enumerate(cases)}
    for c, reg, smem, tc in usable:
        i = index[id(c)]
        r_w, r_wbc = resp[n + 2 * i], resp[n + 2 * i + 1]
        writer = linear_from_response(r_w) if r_w.get("ok") else None
        wtc = r_wbc["conflicts"] if r_wbc.get("ok") else None
        out.append((c, reg, smem, tc, writer, wtc))
    return out


def test_differential_set_covers_the_layout_kinds(differential):
    kinds_r = {c["reg"]["kind"] for c, *_ in differential}
    kinds_s = {c["shared"]["kind"] for c, *_ in differential}
    assert len(differential) >= 200
    assert {"nvidia_mma", "dot_operand", "blocked", "linear"} <= kinds_r
    assert {"nvmma_shared", "swizzled_shared", "shared_linear"} <= kinds_s
    assert {c["bits"] for c, *_ in differential} == {8, 16, 32, 64}
    assert sum(1 for *_, tc, _w, _wt in differential if tc) > 50  # many non-zero figures


def test_triton_figure_agrees_with_the_wheel_on_every_pair(differential):
    bad = [(c, tc, triton_bank_conflicts(reg, smem, c["bits"])) for c, reg, smem, tc, _, _ in differential
           if triton_bank_conflicts(reg, smem, c["bits"]) != tc]
    assert bad == []


def test_wavefronts_agree_with_brute_force_and_every_conflict_has_a_confirmed_witness(differential):
    for c, reg, smem, tc, _, _ in differential:
        rep = check_banks(reg, smem, elem_bits=c["bits"])
        elems, waves = auto_count(reg, smem, c["bits"])
        assert (rep.vector_elems, rep.wavefronts) == (elems, waves), c
        assert rep.triton_conflicts == tc
        if tc:  # a non-zero figure from the wheel is a real conflict: our witness shows it
            assert not rep.conflict_free
        if not rep.conflict_free:
            inv = smem.invert()
            words = set()
            for a in rep.witness.accesses:
                coords = reg.apply({d: getattr(a, d) for d in reg.in_dim_names})
                off = inv.apply(coords)["offset"]
                assert coords == a.element and off == a.offset
                assert off * c["bits"] // 8 <= a.byte_address < (off + 1) * c["bits"] // 8
                assert (a.byte_address // 4) % 32 == rep.witness.bank
                words.add(a.byte_address // 4)
            assert len(words) == len(rep.witness.accesses) >= 2


def _triton_answer(reg, smem, bits, figure, store=False):
    """Triton's figure in wavefronts per warp: (figure + 1) per phase of the widest ld/st."""
    rep = check_banks(reg, smem, elem_bits=bits, store=store)
    return (figure + 1) * rep.phases_per_instruction * rep.instructions_per_warp


def test_synthesized_swizzle_never_needs_more_wavefronts_than_triton(differential, oracle):
    feedback, checked = [], 0
    for c, reg, smem, tc, writer, wtc in differential:
        if tc is None or writer is None or wtc is None:
            continue
        bits = c["bits"]
        shape = dict(smem.out_dims)
        best, _, verdict = optimal_swizzle([(reg, "read")], bits, shape)
        assert verdict.proved
        assert best.total <= _triton_answer(reg, smem, bits, tc)
        best, _, verdict = optimal_swizzle([(writer, "write"), (reg, "read")], bits, shape)
        assert verdict.proved
        assert best.total <= (_triton_answer(writer, smem, bits, wtc, store=True)
                              + _triton_answer(reg, smem, bits, tc))
        checked += 1
        bases = best.layout.bases["offset"]
        feedback.append((c, reg, best.layout, {"kind": "bank_conflicts", "reg_layout": c["reg"],
                         "shared_layout": {"kind": "shared_linear", "offset_bases": bases},
                         "shape": c["shape"], "bitwidth": bits}))
    assert checked >= 200
    # the synthesized layouts are valid Triton layouts, and the figure agrees on them too
    resp = oracle.run_oracle([f[3] for f in feedback])
    for (c, reg, lay, _), r in zip(feedback, resp):
        assert r.get("ok"), r
        assert triton_bank_conflicts(reg, lay, c["bits"]) == r["conflicts"]


def test_wheel_undercounts_subword_lane_mixing(oracle):
    # lanes down column 0 of a 32x64 f16 tile, #ttg.swizzled_shared vec=1 maxPhase=8: brute force
    # counts 8 wavefronts (bank (j % 8) // 2 for lane j); Triton's figure is 3 (4 wavefronts)
    reg = {"kind": "blocked", "size_per_thread": [1, 1], "threads_per_warp": [32, 1], "warps_per_cta": [1, 1],
           "order": [0, 1]}
    smem = {"kind": "swizzled_shared", "vec": 1, "per_phase": 1, "max_phase": 8, "order": [1, 0]}
    case = {"reg": reg, "shared": smem, "shape": [32, 64], "bits": 16}
    resp = oracle.run_oracle(oracle_requests([case]))
    (_, r, s, tc), = resolved_cases([case], resp)
    rep = check_banks(r, s, elem_bits=16)
    assert tc == 3 == rep.triton_conflicts
    assert rep.wavefronts == 8 == auto_count(r, s, 16)[1]


def test_small_tensor_makes_the_wheel_abort_and_the_figure_is_none(oracle):
    reg = {"kind": "blocked", "size_per_thread": [1, 4], "threads_per_warp": [4, 8], "warps_per_cta": [1, 2],
           "order": [0, 1]}
    smem = {"kind": "swizzled_shared", "vec": 16, "per_phase": 8, "max_phase": 8, "order": [1, 0]}
    case = {"reg": reg, "shared": smem, "shape": [8, 8], "bits": 8}
    resp = oracle.run_oracle(oracle_requests([case]))
    assert resp[2]["ok"] is False and resp[2]["error"] == "aborted"
    r, s = linear_from_response(resp[0]), linear_from_response(resp[1])
    assert triton_bank_conflicts(r, s, 8) is None


def test_named_layout_builders_match_the_wheel(oracle):
    reqs, mine = [], []
    for shape in ([8, 64], [64, 64], [128, 32], [16, 256], [256, 16], [32, 512], [512, 32]):
        for bits in (8, 16, 32, 64):
            for sw in (0, 32, 64, 128):
                for tr in (False, True):
                    try:
                        lay = nvmma_shared_layout(shape, sw, bits, tr)
                    except Exception:
                        continue
                    reqs.append({"kind": "nvmma_shared", "swizzle_byte_width": sw, "element_bitwidth": bits,
                                 "transposed": tr, "shape": shape, "dtype": DTYPE[bits], "views": False,
                                 "props": False})
                    mine.append(lay)
        for vec, per, mx, order in ((1, 1, 8, [1, 0]), (2, 2, 4, [0, 1]), (8, 1, 8, [1, 0]), (16, 1, 16, [1, 0])):
            reqs.append({"kind": "swizzled_shared", "vec": vec, "per_phase": per, "max_phase": mx, "order": order,
                         "shape": shape, "views": False, "props": False})
            mine.append(swizzled_shared_layout(shape, vec, per, mx, order))
    resp = oracle.run_oracle(reqs)
    assert len(reqs) > 200
    for q, r, lay in zip(reqs, resp, mine):
        assert r.get("ok"), (q, r)
        assert linear_from_response(r).bases["offset"] == lay.bases["offset"], q
        assert dict(r["out_dims"]) == lay.out_dims


def test_mlir_text_of_candidates_parses_in_the_wheel(oracle):
    texts = [mlir_text("wgmma", {"swizzle_byte_width": 128, "transposed": False}, None, 16),
             mlir_text("swizzled", {"vec": 8, "perPhase": 1, "maxPhase": 8, "order": [1, 0]})]
    resp = oracle.run_oracle([{"kind": "mlir_attr", "attr": t, "shape": [64, 64], "dtype": "f16",
                               "views": False} for t in texts])
    for t, r in zip(texts, resp):
        assert r.get("ok"), r
        assert r["mlir"] == t
