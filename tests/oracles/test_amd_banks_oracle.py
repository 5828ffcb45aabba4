"""AMD LDS bank figures against Triton 3.9's own query (the wheel, in a subprocess).

* With ``ttg.target = hip:gfx942`` / ``hip:gfx950`` the wheel's ``get_shared_bank_conflicts`` does
  not answer: it aborts (``LinearLayout::getInDimSizeLog2: inDim not found``) on every layout tried.
  :func:`test_wheel_hip_query` records that, and compares figures if a later wheel answers.
* Triton's generic figure (the CUDA path) splits a warp into phases of consecutive lanes, each
  moving 128 bytes over 32 banks: for a 64-lane wavefront that is exactly the gfx942 rule for
  32- and 64-bit accesses (2 phases of 32 lanes, 4 of 16; the AMDGPU optimization guide's MI300
  table). There the wheel's figure is "excess dwords per bank and phase", i.e. ``ways - 1`` of
  :func:`verilayout.prove.banks.check_lds_banks` on ``gfx942`` for 32-bit elements.
"""
from __future__ import annotations

import random
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

from verilayout.core.linear_layout import LinearLayout  # noqa: E402
from verilayout.prove.banks import check_lds_banks  # noqa: E402

pytestmark = pytest.mark.oracle


@pytest.fixture(scope="module")
def oracle():
    pytest.importorskip("triton")
    from tests.oracles import triton_oracle
    if not triton_oracle.oracle_available():
        pytest.fail("the Triton oracle worker does not start")
    return triton_oracle


def _units(shape):
    return [[1 << b if d == k else 0 for k in range(2)] for d, n in enumerate(shape) for b in range(n.bit_length() - 1)]


def _case(rng):
    shape = [rng.choice([16, 32, 64]), rng.choice([16, 32, 64])]
    units = _units(shape)
    rng.shuffle(units)
    k = rng.randint(0, 1)  # 0 or 1 register bits below the lanes: b32 or b64 accesses
    low = [[0, 1]][:k]
    rest = [u for u in units if u not in low]
    reg = low + rest[6:]
    lane, warp = rest[:6], []
    off = _units(shape)[::-1] if rng.random() < 0.5 else _units(shape)
    off = [list(o) for o in off]
    for i in range(1, len(off)):
        if rng.random() < 0.3:
            j = rng.randrange(i)
            off[i] = [x ^ y for x, y in zip(off[i], off[j])]
    return {"shape": shape, "reg": {"kind": "linear", "reg_bases": reg, "lane_bases": lane, "warp_bases": warp,
                                    "block_bases": []},
            "shared": {"kind": "shared_linear", "offset_bases": off}}


def _layouts(c):
    out = {"dim0": c["shape"][0], "dim1": c["shape"][1]}
    reg = LinearLayout({"register": c["reg"]["reg_bases"], "lane": c["reg"]["lane_bases"], "warp": []}, out)
    smem = LinearLayout({"offset": c["shared"]["offset_bases"]}, out)
    return reg, smem


def test_gfx942_b32_b64_agree_with_the_wheels_generic_figure(oracle):
    rng = random.Random(11)
    cases = [_case(rng) for _ in range(60)]
    reqs = [{"kind": "bank_conflicts", "reg_layout": c["reg"], "shared_layout": c["shared"], "shape": c["shape"],
             "bitwidth": 32, "target": "cuda:90"} for c in cases]
    resp = oracle.run_oracle(reqs)
    checked = nonzero = 0
    for c, r in zip(cases, resp):
        if not r.get("ok"):
            continue
        reg, smem = _layouts(c)
        rep = check_lds_banks(reg, smem, elem_bits=32, target="gfx942")
        if rep.instruction not in ("ds_read_b32", "ds_read_b64"):
            continue
        assert r["conflicts"] == rep.ways - 1, (c, r["conflicts"], rep.summary())
        checked += 1
        nonzero += r["conflicts"] > 0
    assert checked >= 40 and nonzero >= 10


def test_wheel_hip_query(oracle):
    c = _case(random.Random(3))
    reqs = [{"kind": "bank_conflicts", "reg_layout": c["reg"], "shared_layout": c["shared"], "shape": c["shape"],
             "bitwidth": 32, "target": f"hip:{t}", "arch": t} for t in ("gfx942", "gfx950")]
    resp = oracle.run_oracle(reqs)
    reg, smem = _layouts(c)
    for t, r in zip(("gfx942", "gfx950"), resp):
        if r.get("ok"):  # a wheel that answers: its figure must agree on conflict-freedom
            rep = check_lds_banks(reg, smem, elem_bits=32, target=t)
            assert (r["conflicts"] == 0) == rep.conflict_free, (t, r, rep.summary())
        else:  # Triton 3.9: the hip path aborts before answering
            assert r.get("error") == "aborted" and "inDim not found" in r.get("detail", ""), r
