"""Issue 26, root causes 1 and 2: the PTX audit matches wgmma groups to TTGIR dots by order and
proves each warpgroup's descriptors against the M/N block the plan gives that warpgroup.

Fixtures: ``tests/fixtures/ptxflow`` (Triton 3.9 wheel, sm_90, 8 warps; ``generate.py`` there
rewrites them). The facts the tests rest on are read from the compiler's own text here (the
``warpsPerCTA``, the instruction shapes, the dots sharing a source line), and each mutant's
expected offset is the one the test writes into the PTX; none comes from the audit.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from verilayout.audit.ptx import audit_ptx_text
from verilayout.audit.ttgir import audit_module
from verilayout.frontends.ttgir import parse_module

HERE = Path(__file__).resolve().parent / "fixtures" / "ptxflow"


def _audit(name: str, ptx: str | None = None):
    ttgir = (HERE / f"{name}.ttgir").read_text()
    tmod = parse_module(ttgir)
    plan = audit_module(tmod, f"{name}.ttgir").checks
    text = ptx if ptx is not None else (HERE / f"{name}.ptx").read_text()
    return audit_ptx_text(text, f"{name}.ptx", ttgir, plan, ttgir_module=tmod)


def _mutate(name: str, old: str, new: str) -> str:
    text = (HERE / f"{name}.ptx").read_text()
    assert text.count(old) == 1, f"the fixture {name}.ptx changed: {old!r} is not there once"
    return text.replace(old, new)


def _wgmma_lines(text: str) -> list[int]:
    return [n for n, line in enumerate(text.splitlines(), 1) if line.strip().startswith("wgmma.mma_async")]


def test_split_n_gemm_is_the_case_of_the_issue():
    ttgir = (HERE / "gemm_split_n.ttgir").read_text()
    ptx = (HERE / "gemm_split_n.ptx").read_text()
    assert "warpsPerCTA = [4, 2], instrShape = [16, 64, 16]" in ttgir
    assert re.search(r"memdesc<64x128xf16", ttgir)                 # the B operand: N = 128
    assert set(re.findall(r"wgmma\.mma_async\.sync\.aligned\.(m\d+n\d+k\d+)", ptx)) == {"m64n64k16"}
    assert re.search(r"shfl\.sync\.idx\.b32\s+%r\d+, %r\d+, 0, 31, -1;\s+shl\.b32\s+%r\d+, %r\d+, 7;\s+"
                     r"and\.b32\s+%r\d+, %r\d+, 512;", ptx)           # the warp-id term of B's start


def test_split_n_gemm_proves_per_warpgroup():
    rep = _audit("gemm_split_n")
    mma = [c for c in rep.checks if c.check == "mma-descriptor"]
    lines = _wgmma_lines((HERE / "gemm_split_n.ptx").read_text())
    assert len(lines) == 4                                            # K = 64: four k16 blocks
    assert {(c.line, c.data["operand"]) for c in mma} == {(n, o) for n in lines for o in "AB"}
    assert all(c.status == "proved" for c in rep.checks), [c.message for c in rep.checks if c.status != "proved"]
    assert {c.data["warpgroups"] for c in mma} == {2}                 # 8 warps: two warpgroups each proved


def test_split_n_gemm_warpgroup_1_one_atom_off_is_an_error():
    # warpgroup 1's B start term 512 (x 16 bytes) becomes 512 + 64: one 1024-byte atom (8 rows of the
    # 128-byte swizzle) further on; warpgroup 0's term stays 0
    text = _mutate("gemm_split_n", "and.b32 \t%r65, %r64, 512;",
                   "and.b32 \t%r900, %r64, 512;\n\tshr.u32 \t%r901, %r900, 3;\n\tadd.s32 \t%r65, %r900, %r901;")
    rep = _audit("gemm_split_n", text)
    errors = [c for c in rep.checks if c.severity == "error"]
    assert {c.line for c in errors} == set(_wgmma_lines(text))
    for c in errors:
        assert c.data["operand"] == "B" and c.data["warpgroup"] == 1 and "warpgroup 1" in c.message
        assert c.data["ptx_offset_bytes"] == 1024


def _attention_dots() -> list[int]:
    ttgir = (HERE / "causal_attention.ttgir").read_text()
    return [n for n, line in enumerate(ttgir.splitlines(), 1) if "= ttng.warp_group_dot " in line]


def test_attention_two_dots_on_one_line():
    ttgir = (HERE / "causal_attention.ttgir").read_text()
    assert "warpsPerCTA = [8, 1]" in ttgir
    dots = _attention_dots()
    assert len(dots) == 4
    lines = ttgir.splitlines()
    # the two QK^T dots (operand A from shared memory) are the 1st and 3rd, on one Python line
    qk = [n for n in dots if re.search(r"warp_group_dot %\w+, %\w+, %\w+ .*: !ttg\.memdesc", lines[n - 1])]
    assert qk == [dots[0], dots[2]]
    loc = [re.search(r"loc\((#\w+)\)\s*$", lines[n - 1]).group(1) for n in qk]
    callee = [re.search(rf"^{re.escape(x)} = loc\(callsite\((#\w+) at (#\w+)\)\)", ttgir, re.M) for x in loc]
    assert callee[0] and callee[1]
    assert callee[0].group(1) == callee[1].group(1)                   # one Python line (the helper's dot)
    assert callee[0].group(2) != callee[1].group(2)                   # called from two places


def test_attention_dots_matched_by_order_and_proved():
    rep = _audit("causal_attention")
    assert all(c.status == "proved" for c in rep.checks), [c.message for c in rep.checks if c.status != "proved"]
    mma = [c for c in rep.checks if c.check == "mma-descriptor"]
    lines = _wgmma_lines((HERE / "causal_attention.ptx").read_text())
    assert len(lines) == 16                                           # four dots, four k16 blocks each
    dots = _attention_dots()
    got = {c.line: c.data["dot_line"] for c in mma}
    assert [got[n] for n in lines] == [d for d in dots for _ in range(4)]   # program order on both sides
    assert {c.data["matched_by"] for c in mma} == {"order"}
    assert {c.data["warpgroups"] for c in mma} == {2}
    buffers = [c for c in rep.checks if c.check == "operand-buffers"]
    assert buffers and all(c.status == "proved" for c in buffers)


def test_attention_warpgroup_1_q_one_atom_off_is_an_error():
    # the second stage's Q (operand A) start for warpgroup 1: 512 (x 16 bytes, its 64 rows) becomes 576
    text = _mutate("causal_attention", "and.b32 \t%r455, %r454, 512;",
                   "and.b32 \t%r900, %r454, 512;\n\tshr.u32 \t%r901, %r900, 3;\n\tadd.s32 \t%r455, %r900, %r901;")
    rep = _audit("causal_attention", text)
    errors = [c for c in rep.checks if c.severity == "error"]
    third = _wgmma_lines(text)[8:12]                                  # the third dot: the second QK^T
    assert {c.line for c in errors} == set(third)
    assert all(c.data["operand"] == "A" and c.data["warpgroup"] == 1 and c.data["ptx_offset_bytes"] == 1024
               and "warpgroup 1" in c.message for c in errors)


def test_attention_pv_dot_reading_the_qk_dots_buffer_is_an_error():
    # the first stage's P.V dot takes its B start from K's buffer (its own buffer is 24576 bytes on)
    text = _mutate("causal_attention", "add.s32 \t%r174, %r165, 24576;", "add.s32 \t%r174, %r165, 0;")
    rep = _audit("causal_attention", text)
    errors = [c for c in rep.checks if c.severity == "error"]
    second = _wgmma_lines(text)[4]                                    # the second dot's first wgmma
    assert [(c.line, c.check) for c in errors] == [(second, "operand-buffers")]
    assert errors[0].data["distance_bytes"] == 0 and "warpgroup" in errors[0].message


@pytest.mark.parametrize("name", ["gemm_split_n", "causal_attention"])
def test_internal_failure_is_unchecked(name, monkeypatch):
    import verilayout.audit.ptx as ptx

    def boom(*_a, **_k):
        raise KeyError("simulated")
    monkeypatch.setattr(ptx, "_wgmma_checks", boom)
    rep = _audit(name)
    got = [c for c in rep.checks if c.op.startswith("wgmma")]
    assert got and all(c.status == "unchecked" and "internal error" in c.message for c in got)


def test_shfl_idx_of_the_warp_id_is_the_warp_id():
    # shfl.sync.idx with lane 0, c = 31, full mask: every lane gets lane 0's value (PTX ISA, shfl.sync);
    # here (tid >> 5) << 7 & 512, brute-forced over the 256 threads of 8 warps
    import z3
    from verilayout.frontends.ptx import parse_ptx
    from verilayout.prove.ptx_values import TID, PtxValues
    src = (".version 8.7\n.visible .entry f()\n{\nmov.u32 %r1, %tid.x;\nshr.u32 %r2, %r1, 5;\n"
           "shfl.sync.idx.b32 %r3, %r2, 0, 31, -1;\nshl.b32 %r4, %r3, 7;\nand.b32 %r5, %r4, 512;\n"
           "ld.param.u32 %r6, [p];\nshfl.sync.idx.b32 %r7, %r6, 0, 31, -1;\n}")
    v = PtxValues(parse_ptx(src), "f")
    e = v.reg("%r5")
    for tid in range(256):
        got = z3.simplify(z3.substitute(e, (TID, z3.BitVecVal(tid, 32)))).as_long()
        assert got == (((tid >> 5) << 7) & 512)
    assert z3.is_const(v.reg("%r7")) and not z3.is_bv_value(v.reg("%r7"))   # a loaded value: a lane's own symbol


@pytest.mark.parametrize("name, warps, shape, groups", [("gemm_m256_w8", "[8, 1]", "m64n128k16", 2),
                                                        ("gemm_w16", "[8, 2]", "m64n64k16", 4)])
def test_more_warpgroups_prove(name, warps, shape, groups):
    assert f"warpsPerCTA = {warps}" in (HERE / f"{name}.ttgir").read_text()
    ptx = (HERE / f"{name}.ptx").read_text()
    assert set(re.findall(r"wgmma\.mma_async\.sync\.aligned\.(m\d+n\d+k\d+)", ptx)) == {shape}
    rep = _audit(name)
    mma = [c for c in rep.checks if c.check in ("mma-descriptor", "operand-buffers")]
    assert mma and all(c.status == "proved" for c in mma), [c.message for c in mma if c.status != "proved"]
    assert not [c for c in rep.checks if c.severity == "error"]
    mma = [c for c in mma if c.check == "mma-descriptor"]
    assert {c.line for c in mma} == set(_wgmma_lines(ptx)) and {c.data["warpgroups"] for c in mma} == {groups}


def test_m256_second_m_block_is_interleaved():
    # [8, 1] over 256 rows: warpgroup 0 holds rows 0-63 and 128-191 (the warps tile first, then repeat),
    # so its second accumulator block's A starts 128 rows (16384 bytes = 1024 x 16) on. A lowering that
    # walked consecutive 64-row blocks would start it 64 rows on: 8192 bytes short.
    text = _mutate("gemm_m256_w8", "add.s32 \t%r102, %r96, 1024;", "add.s32 \t%r102, %r96, 512;")
    rep = _audit("gemm_m256_w8", text)
    errors = [c for c in rep.checks if c.severity == "error"]
    fifth = _wgmma_lines(text)[4]                                     # block 2, K-block 0
    assert [(c.line, c.data["operand"], c.data["ptx_offset_bytes"]) for c in errors] == [(fifth, "A", -8192)]


def test_internal_failure_in_the_buffer_check_is_unchecked(monkeypatch):
    import verilayout.audit.ptx as ptx

    def boom(*_a, **_k):
        raise AssertionError("simulated")
    monkeypatch.setattr(ptx, "live_lines", boom)
    rep = _audit("causal_attention")
    got = [c for c in rep.checks if c.check == "operand-buffers"]
    assert got and all(c.status == "unchecked" and "internal error (AssertionError" in c.message for c in got)
    assert not [c for c in rep.checks if c.severity == "error"]


def test_internal_failure_in_the_evaluator_is_a_named_symbol(monkeypatch):
    from verilayout.frontends.ptx import parse_ptx
    from verilayout.prove.ptx_values import PtxValues
    v = PtxValues(parse_ptx(".version 8.7\n.visible .entry f()\n{\nmov.u32 %r1, %tid.x;\nadd.s32 %r2, %r1, 1;\n}"), "f")

    def boom(*_a, **_k):
        raise KeyError("simulated")
    monkeypatch.setattr(v, "_instr", boom)
    v.reg("%r2")
    assert any("internal error (KeyError" in o for o in v.opaque)


def test_if_else_join_is_one_of_the_two_values():
    # r3/r4 set in both arms of an if/else (the shape sglang's and torchao's dequantizing GEMMs take
    # for a tcgen05 descriptor), read after the join; r5 is a loop counter (reads itself): a symbol
    import z3
    from verilayout.frontends.ptx import parse_ptx
    from verilayout.prove.ptx_values import PtxValues, symbol_names
    src = (".version 8.7\n.visible .entry f()\n{\nmov.u32 %r1, %tid.x;\nsetp.eq.s32 %p1, %r1, 0;\n"
           "@%p1 bra ELSE;\nmov.b32 %r3, 100;\nmov.b32 %r4, 7;\nbra.uni JOIN;\nELSE:\nmov.b32 %r3, 200;\n"
           "mov.b32 %r4, 7;\nJOIN:\nmov.b32 %r5, 0;\nLOOP:\nadd.s32 %r5, %r5, 1;\nsetp.lt.s32 %p2, %r5, 9;\n"
           "@%p2 bra LOOP;\nadd.s32 %r6, %r3, %r4;\nadd.s32 %r7, %r5, 0;\n}")
    m = parse_ptx(src)
    v = PtxValues(m, "f")
    last = next(i for i in m.instrs if i.operands and i.operands[0] == "%r6")
    e = v.reg("%r6", at=last)
    paths = [z3.Bool(n) for n in symbol_names(e) if n.startswith("path")]
    assert len(paths) == 1
    got = {z3.simplify(z3.substitute(e, (paths[0], z3.BoolVal(b)))).as_long() for b in (True, False)}
    assert got == {107, 207}
    assert z3.simplify(v.reg("%r4", at=last)).as_long() == 7      # same value on both arms: one constant
    r7 = v.reg("%r5", at=next(i for i in m.instrs if i.operands and i.operands[0] == "%r7"))
    assert not z3.is_bv_value(z3.simplify(r7))                     # the loop counter stays free
