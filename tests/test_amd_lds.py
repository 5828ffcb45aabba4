"""AMD LDS model: phase tables, their GF(2) affine structure, and wavefront counts.

Sources of the expected values (written here, not taken from the code under test):
* nod-ai/amd-shark-ai ``docs/amdgpu_kernel_optimization_guide.md`` ("Avoiding LDS Bank
  Conflicts", MI300 and MI350): the phase groups of ds_read_b32/b64/b128 and ds_write_b128,
  32 banks on MI300, 64 on MI355X;
* Triton PR #11365 ("[AMD][LAYOUTS] Refine segment computation to support DS_READ_B128"): the same
  ds_read_b128 groups and their affine subspaces ``V0 = span(l0, l1, l2^l4)`` (MI300),
  ``span(l0, l1, l2^l3, l2^l4)`` (MI350) with the phase shifts ``V_k = V0 xor ...``;
* brute force written in this file: every lane's dwords, per phase, per bank.
"""
from __future__ import annotations

import random

import pytest

from verilayout.core.linear_layout import LinearLayout, identity_standard_nd
from verilayout.errors import LayoutError
from verilayout.frontends.names import parse_lds_instruction
from verilayout.hw.amd import lds
from verilayout.hw.nvidia.banks import padded_address_map
from verilayout.prove.banks import check_lds_banks


def _runs(*pairs):
    """Lanes of runs (start, length)."""
    return sorted(s + i for s, n in pairs for i in range(n))


# the guide's tables, copied as numbers
GUIDE = {
    ("gfx942", "read", 32): [_runs((0, 32)), _runs((32, 32))],
    ("gfx942", "read", 64): [_runs((0, 16)), _runs((16, 16)), _runs((32, 16)), _runs((48, 16))],
    ("gfx942", "read", 128): [_runs((0, 4), (20, 4)), _runs((32, 4), (52, 4)), _runs((4, 4), (16, 4)),
                              _runs((36, 4), (48, 4)), _runs((8, 4), (28, 4)), _runs((40, 4), (60, 4)),
                              _runs((12, 4), (24, 4)), _runs((44, 4), (56, 4))],
    ("gfx942", "write", 128): [_runs((8 * i, 8)) for i in range(8)],
    ("gfx950", "read", 32): [list(range(64))],
    ("gfx950", "read", 64): [_runs((0, 32)), _runs((32, 32))],
    ("gfx950", "read", 128): [_runs((0, 4), (12, 4), (20, 4), (24, 4)), _runs((32, 4), (44, 4), (52, 4), (56, 4)),
                              _runs((4, 4), (8, 4), (16, 4), (28, 4)), _runs((36, 4), (40, 4), (48, 4), (60, 4))],
}


@pytest.mark.parametrize("key", sorted(GUIDE))
def test_phase_groups_are_the_published_tables(key):
    name, op, bits = key
    groups = lds.phase_groups(lds.target(name), lds.LdsAccess(op, bits))
    assert [sorted(g) for g in groups] == GUIDE[key]
    assert sorted(x for g in groups for x in g) == list(range(64))  # a partition of the wavefront


def test_bank_counts():
    assert lds.target("gfx942").num_banks == 32 and lds.target("hip:gfx950").num_banks == 64
    with pytest.raises(LayoutError):
        lds.target("gfx90z")


def _span(vs):
    out = {0}
    for v in vs:
        out |= {x ^ v for x in out}
    return out


L0, L1, L2, L3, L4, L5 = (1 << i for i in range(6))


@pytest.mark.parametrize("name,v0,shifts", [
    # PR #11365: V1 = V0+l5, V2 = V0+l2, V3 = V0+l5+l2, V4 = V0+l3, ... (MI300)
    ("gfx942", [L0, L1, L2 ^ L4], [0, L5, L2, L5 ^ L2, L3, L5 ^ L3, L3 ^ L2, L5 ^ L3 ^ L2]),
    ("gfx950", [L0, L1, L2 ^ L3, L2 ^ L4], [0, L5, L2, L5 ^ L2]),
])
def test_read_b128_phases_are_the_affine_subspaces_of_triton_11365(name, v0, shifts):
    groups = lds.phase_groups(lds.target(name), lds.LdsAccess("read", 128))
    base = _span(v0)
    assert [sorted(x ^ s for x in base) for s in shifts] == [sorted(g) for g in groups]
    ps = lds.phase_subspace(groups)
    assert _span(ps.basis) == base
    assert [ps.lanes(k) for k in range(len(groups))] == [tuple(sorted(g)) for g in groups]


def test_non_affine_table_is_refused():
    with pytest.raises(LayoutError):
        lds.phase_subspace([[0, 1, 2, 4], [3, 5, 6, 7]])


def test_instruction_names():
    assert parse_lds_instruction("ds_read_b64_tr_b16") == lds.LdsAccess("read", 64, "b16")
    assert parse_lds_instruction("ds_store_b128").name == "ds_write_b128"
    for bad in ("ds_read_b96", "ld.shared.b32", "ds_write_b64_tr_b16"):
        with pytest.raises(LayoutError):
            parse_lds_instruction(bad)


def _brute(addrs, groups, nbytes, banks):
    """Per phase: max over banks of distinct dwords (written independently of the model)."""
    out = []
    for g in groups:
        per = {}
        for lane in g:
            a = addrs[lane]
            for byte in range(a, a + nbytes, 4 if nbytes >= 4 else nbytes):
                per.setdefault((byte // 4) % banks, set()).add(byte // 4)
        out.append(max(len(s) for s in per.values()))
    return out


@pytest.mark.parametrize("key", sorted(GUIDE))
def test_wavefronts_equal_brute_force_on_random_addresses(key):
    name, op, bits = key
    t, acc = lds.target(name), lds.LdsAccess(op, bits)
    rng = random.Random(hash(key) & 0xFFFF)
    nbytes = bits // 8
    for _ in range(60):
        span = rng.choice([4, 16, 64, 512])
        addrs = [nbytes * rng.randrange(span) for _ in range(64)]
        got = lds.wavefronts(addrs, t, acc)
        assert list(got.per_phase) == _brute(addrs, GUIDE[key], nbytes, t.num_banks)
        if got.ways > 1:
            lanes = [lane for lane, _ in got.witness]
            assert len(got.witness) == got.ways
            assert len({a // 4 for _, a in got.witness}) == got.ways
            assert {(a // 4) % t.num_banks for _, a in got.witness} == {got.bank}
            assert any(set(lanes) <= set(g) for g in GUIDE[key])


def test_the_read_b128_groups_matter():
    # lane i reads 16 bytes of row i >> 3 (128 bytes apart), chunk (i % 4) + 4 * (bit2(i) ^ bit4(i)).
    # 8 consecutive lanes (the naive rule) read chunks 0..7 of one row: conflict-free, 8 cycles.
    # gfx942's phase 0 is lanes 0-3 (row 0, chunks 0-3) and 20-23 (row 2, chunks 0-3 since
    # bit2 ^ bit4 = 0): the same 16 banks at two rows -> 2 ways in every phase, 16 cycles.
    t = lds.target("gfx942")
    addrs = [16 * ((i % 4) + 4 * (((i >> 2) ^ (i >> 4)) & 1)) + 128 * (i >> 3) for i in range(64)]
    naive = [list(range(8 * k, 8 * k + 8)) for k in range(8)]
    assert sum(_brute(addrs, naive, 16, 32)) == 8
    got = lds.wavefronts(addrs, t, lds.LdsAccess("read", 128))
    assert (got.total, got.ways) == (16, 2)
    assert sorted(lane for lane, _ in got.witness) in ([0, 20], [1, 21], [2, 22], [3, 23])


# ----- layouts: GF(2) proof against brute force over every lane ---------------------------------

def _random_reg(rng, shape, lanes=64):
    units = [[1 << b if d == k else 0 for k in range(2)] for d, n in enumerate(shape)
             for b in range(n.bit_length() - 1)]
    # keep the contiguous dim's low bits in registers sometimes, so vectors exist
    rng.shuffle(units)
    if rng.random() < 0.6:
        low = [[0, 1 << b] for b in range(rng.randint(1, 3))]
        units = low + [u for u in units if u not in low]
    nl = lanes.bit_length() - 1
    k = len(units) - nl
    k_reg = rng.randint(0, max(0, k))
    reg = units[:k_reg]
    lane = units[k_reg:k_reg + nl]
    warp = units[k_reg + nl:]
    return LinearLayout({"register": reg, "lane": lane, "warp": warp}, ["dim0", "dim1"])


def _random_smem(rng, shape):
    units = [[1 << b if d == k else 0 for k in range(2)] for d in (1, 0) for b in range(shape[d].bit_length() - 1)]
    for i in range(1, len(units)):
        if rng.random() < 0.3:
            j = rng.randrange(i)
            units[i] = [x ^ y for x, y in zip(units[i], units[j])]
    return LinearLayout({"offset": units}, ["dim0", "dim1"])


def _brute_layout(reg, smem, bits, name, acc, vec):
    """Worst instruction's cycles: enumerate every instruction of warp 0 and every lane."""
    inv = smem.invert()
    groups = GUIDE.get((name, acc.op, max(32, acc.bits)))
    nreg = reg.in_dims["register"]
    eb = bits // 8
    worst = 0
    vec_mask = sum(1 << j for j in vec)
    for r0 in range(nreg):
        if r0 & vec_mask:
            continue
        addrs = []
        for lane in range(64):
            offs = [inv.apply(reg.apply({"register": r0 | sum(1 << j for i, j in enumerate(vec) if m >> i & 1),
                                         "lane": lane, "warp": 0}))["offset"] for m in range(1 << len(vec))]
            addrs.append(min(offs) * eb)
        worst = max(worst, sum(_brute(addrs, groups, max(1, acc.bits // 8), lds.target(name).num_banks)))
    return worst


@pytest.mark.parametrize("name", ["gfx942", "gfx950"])
def test_layout_analysis_equals_brute_force(name):
    rng = random.Random(7 if name == "gfx942" else 8)
    checked = 0
    while checked < 25:
        bits = rng.choice([16, 32, 32])
        shape = [rng.choice([8, 16, 32]), rng.choice([16, 32, 64])]
        if shape[0] * shape[1] < 64:
            continue
        reg, smem = _random_reg(rng, shape), _random_smem(rng, shape)
        try:
            rep = check_lds_banks(reg, smem, elem_bits=bits, target=name)
        except LayoutError:
            continue
        acc = parse_lds_instruction(rep.instruction)
        if acc.bits < 32:  # sub-dword accesses: not in the guide's tables
            continue
        from verilayout.prove.banks import _pair, widest_chain  # the vector Triton's rule picks
        vec = widest_chain(_pair(reg, smem).images(), bits)
        assert rep.wavefronts == _brute_layout(reg, smem, bits, name, acc, vec), (reg, smem, bits)
        assert rep.conflict_free == (rep.wavefronts == rep.ideal)
        checked += 1


def test_column_read_and_its_padding_fix():
    # 64x32 f32 tile, row-major: lane i reads row i, column 0 with ds_read_b32 -> byte 128*i, bank 0
    # for every lane: 32 dwords in bank 0 per 32-lane phase (gfx942), 2 phases -> 64 cycles.
    col = LinearLayout({"register": [], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [32, 0]]},
                       {"dim0": 64, "dim1": 32})
    plain = identity_standard_nd("offset", [64, 32], [1, 0])
    r = check_lds_banks(col, plain, elem_bits=32, target="gfx942")
    assert (r.wavefronts, r.ideal, r.ways, r.method) == (64, 2, 32, "gf2")
    assert not r.conflict_free and r.verdict.status == "counterexample"
    # gfx950: one 64-lane phase, 64 banks: byte 128*i -> bank 32*(i%2): 32 dwords in each of 2 banks
    assert check_lds_banks(col, plain, elem_bits=32, target="gfx950").wavefronts == 32
    # one padding dword per row: byte 132*i -> bank i % 32 (gfx942): conflict-free, by enumeration
    padded = padded_address_map(plain, [(32, 1)])
    r = check_lds_banks(col, padded, elem_bits=32, target="gfx942")
    assert (r.wavefronts, r.conflict_free, r.method) == (2, True, "enumeration")
    # gfx950: 64 lanes at bank (33*i) % 64 are all distinct -> 1 cycle
    assert check_lds_banks(col, padded, elem_bits=32, target="gfx950").wavefronts == 1


def test_wrong_lane_count_is_refused():
    reg32 = LinearLayout({"register": [], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]]}, {"dim0": 32, "dim1": 2})
    with pytest.raises(LayoutError, match="64 lanes"):
        check_lds_banks(reg32, identity_standard_nd("offset", [32, 2], [1, 0]), elem_bits=32, target="gfx942")


def test_transposing_read_is_refused_on_register_layouts_but_counted_on_addresses():
    col = LinearLayout({"register": [[0, 1], [0, 2]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [32, 0]]},
                       {"dim0": 64, "dim1": 4})
    with pytest.raises(LayoutError, match="transposing"):
        check_lds_banks(col, identity_standard_nd("offset", [64, 4], [1, 0]), elem_bits=16, target="gfx950",
                    instruction=parse_lds_instruction("ds_read_b64_tr_b16"))
    # on addresses: lane i reads 8 bytes at 8*i -> 2 phases of 32 lanes x 8 bytes = 256 bytes each:
    # every bank once per phase (the inferred ds_read_b64 groups on gfx950)
    t, acc = lds.target("gfx950"), parse_lds_instruction("ds_read_b64_tr_b16")
    got = lds.wavefronts([8 * i for i in range(64)], t, acc)
    assert (got.per_phase, lds.inferred(t, acc)) == ((1, 1), True)
