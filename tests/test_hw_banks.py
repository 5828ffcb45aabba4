"""The PTX audit's shared-memory wavefronts against what an NVIDIA H100 measured (ncu, 2026-11-26).

Data: ``hwtests/results/h100-2026-11-26-banks_triton36.tar.gz`` (56 Triton 3.6 matmuls: the TTGIR and
PTX Triton wrote, ncu's per-kernel counters, and per-SASS-instruction wavefronts of 11 of them; README
beside it). The expected values are the measurements; the audit's figures are recomputed here from the
PTX in the tarball. Exceptions are pinned by name and explained (or marked unexplained) in
``docs/ground_truth.md``, section "Shared-memory wavefronts".
"""
from __future__ import annotations

import collections
import functools
import re

import pytest

import hw_banks_data as D
from verilayout.audit import ptx_smem
from verilayout.audit.ptx import audit_ptx_text
from verilayout.audit.ttgir import audit_module
from verilayout.frontends.ptx import parse_ptx
from verilayout.frontends.ttgir import parse_module
from verilayout.hw.nvidia.banks import BankModel
from verilayout.prove.ptx_values import PtxValues

#: The SASS-profiled instructions where the hardware differs from the static model: LDGSTS.128 of the
#: fp8 A tile (64-byte rows, 64B swizzle) in kernels 025/037, PTX lines of the stage-0 prologue copies
#: and the loop copies: model 4, ncu 8 (README of the data, section 2). Dynamic (the LDGSTS
#: microbenchmark): the same copies measure 4 or 8 depending on issue timing.
LDGSTS_EXCEPTIONS = {(k, line) for k in ("025_e4m3_BN_128x128x64_w4_s3", "037_e5m2_BN_128x128x64_w4_s3")
                     for line in (94, 98, 102, 106, 733, 737, 741, 745)}

#: Kernel-level excesses of the hardware over the model, by kernel stem: (counter, why).
#: "dynamic": the excess is not a multiple of the CTA count, while every CTA runs the same shared
#: addresses, so no address pattern explains it; "unexplained": a static cause is not ruled out.
KERNEL_EXCEPTIONS = {
    "024_e4m3_BN_128x128x64_w4_s1": ("st_wf", "dynamic"), "025_e4m3_BN_128x128x64_w4_s3": ("st_wf", "dynamic"),
    "027_e4m3_BN_64x128x32_w4_s3": ("st_wf", "dynamic"), "029_e4m3_BN_128x64x128_w8_s3": ("st_wf", "dynamic"),
    "036_e5m2_BN_128x128x64_w4_s1": ("st_wf", "dynamic"), "037_e5m2_BN_128x128x64_w4_s3": ("st_wf", "dynamic"),
    "039_e5m2_BN_64x128x32_w4_s3": ("st_wf", "dynamic"), "041_e5m2_BN_128x64x128_w8_s3": ("st_wf", "dynamic"),
    "030_e4m3_BK_128x128x64_w4_s1": ("st_wf", "dynamic"), "042_e5m2_BK_128x128x64_w4_s1": ("st_wf", "dynamic"),
    "028_e4m3_BN_128x64x128_w8_s1": ("ld_wf", "unexplained"), "040_e5m2_BN_128x64x128_w8_s1": ("ld_wf", "unexplained"),
}


def accesses(index: int) -> list[ptx_smem.SharedAccess]:
    """The audit's per-instruction figures for one kernel's PTX (the evaluator the audit uses).
    Computed once per kernel and bank rule: several tests read the same kernels, and the planted
    wrong rules (a patched ``_MODEL`` or ``smem_access``) are other keys, so they are recomputed."""
    return _accesses(index, ptx_smem._MODEL, ptx_smem.smem_access)


@functools.lru_cache(maxsize=256)   # 56 kernels x the real rule and the two planted wrong ones
def _accesses(index: int, model, smem_access) -> list[ptx_smem.SharedAccess]:
    mod = parse_ptx(D.text(index, "ptx"))
    evals = {f: PtxValues(mod, f, first_iteration=True) for f in mod.functions}
    return ptx_smem.shared_accesses(mod, evals)


def matched(index: int, accs: list) -> list[tuple]:
    """(PTX access, SASS access) pairs: per (kind, width) in program order (README: ptxas kept each
    PTX shared access as one SASS instruction of the same width)."""
    ptx, sass = collections.defaultdict(list), collections.defaultdict(list)
    for a in accs:
        ptx[(D.ptx_kind(a.ins.opcode), D.ptx_width(a.ins.opcode, a.ins.operands))].append(a)
    for s in D.sass_accesses()[index]:
        sass[(s.kind, s.width)].append(s)
    assert {k: len(v) for k, v in ptx.items()} == {k: len(v) for k, v in sass.items()}, D.kernels()[index]
    return [pair for k in ptx for pair in zip(ptx[k], sass[k])]


def disagreements(accs_of) -> tuple[int, list[tuple[str, int, float, int]]]:
    """(instructions compared, [(kernel, PTX line, measured per execution, model)] that differ)."""
    total, bad = 0, []
    for index in D.sass_accesses():
        for a, s in matched(index, accs_of(index)):
            total += 1
            if (a.wavefronts, a.ideal) != (s.per_execution, s.ideal / s.executed):
                bad.append((D.kernels()[index], a.ins.line, s.per_execution, a.wavefronts))
    return total, bad


def test_sass_instructions_agree_except_the_pinned_ldgsts():
    total, bad = disagreements(accesses)
    assert total == 820                                 # README: 820 SASS shared instructions
    assert {(k, line) for k, line, _, _ in bad} == LDGSTS_EXCEPTIONS
    assert all(meas == 8 and model == 4 for _, _, meas, model in bad)   # README: model 4, hardware 8


def test_stage1_copies_with_the_same_lanes_agree():
    # 025's stage-1 prologue copies (PTX lines 121-133) have the stage-0 lane pattern 8192 B further:
    # the hardware took 4 there, as modelled (README, section 2)
    pairs = {a.ins.line: (a, s) for a, s in matched(25, accesses(25))}
    for line in (121, 125, 129, 133):
        a, s = pairs[line]
        assert s.kind == "cp" and s.per_execution == a.wavefronts == 4
    assert pairs[121][0].lane_offsets == pairs[94][0].lane_offsets


def predicted_counts(index: int, accs: list) -> collections.Counter:
    """Kernel-level predictions: each access's wavefronts and executions summed over the warps that
    execute it, the CTAs of the 512^3 grid, and the K loop's trips when the PTX loop holds it."""
    cfg, loops = D.config(index), D.loop_lines(D.text(index, "ptx"))
    ctas, trips = (512 // cfg["BM"]) * (512 // cfg["BN"]), 512 // cfg["BK"]
    out: collections.Counter = collections.Counter()
    for a in accs:
        times = ctas * (trips if any(lo <= a.ins.line <= hi for lo, hi in loops) else 1)
        kind = D.ptx_kind(a.ins.opcode)
        out[{"stsm": "st", "ldsm": "ld"}.get(kind, kind) + "_wf"] += times * sum(a.per_warp)
        out[kind + "_inst"] += times * len(a.warps)
    return out


@pytest.mark.parametrize("index", list(D.kernels()))
def test_kernel_counts(index):
    stem, meas = D.kernels()[index], D.kernel_counters()[index]
    pred = predicted_counts(index, accesses(index))
    # instruction counts: exact on every kernel (ncu counts stmatrix with the shared stores)
    assert (meas["st_inst"], meas["ld_inst"], meas["ldsm_inst"], meas["ldgsts_inst"]) == \
        (pred["st_inst"] + pred["stsm_inst"], pred["ld_inst"], pred["ldsm_inst"], pred["cp_inst"])
    cfg = D.config(index)
    ctas = (512 // cfg["BM"]) * (512 // cfg["BN"])
    for counter in ("st_wf", "ld_wf"):
        excess = meas[counter] - pred[counter]
        pinned = KERNEL_EXCEPTIONS.get(stem)
        if pinned is None or pinned[0] != counter:
            assert excess == 0, (stem, counter, meas[counter], pred[counter])
            continue
        assert excess > 0, (stem, counter)                          # the model is a floor
        if pinned[1] == "dynamic":
            assert excess % ctas != 0, (stem, excess, ctas)          # not the same in every CTA
            if index in D.sass_accesses():                           # the SourceCounters run of the
                kinds = ("st", "stsm") if counter == "st_wf" else ("ld", "ldsm")   # same kernel: no excess
                assert sum(s.wavefronts for s in D.sass_accesses()[index] if s.kind in kinds) == pred[counter]
        else:
            assert excess == 96                                     # README: 028/040 +96 ld wavefronts


def test_kernel_excess_figures_recorded_in_the_readme():
    got = {}
    for index, stem in D.kernels().items():
        if stem in KERNEL_EXCEPTIONS:
            counter = KERNEL_EXCEPTIONS[stem][0]
            pred = predicted_counts(index, accesses(index))[counter]
            got[stem] = 100 * (D.kernel_counters()[index][counter] - pred) / pred
    assert round(got["030_e4m3_BK_128x128x64_w4_s1"], 1) == 8.8       # README: +8.8% st
    assert round(got["042_e5m2_BK_128x128x64_w4_s1"], 1) == 13.9      # README: +13.9% st
    fp8_bn = [v for k, v in got.items() if "_BN_" in k and KERNEL_EXCEPTIONS[k][0] == "st_wf"]
    assert len(fp8_bn) == 8 and max(fp8_bn) < 0.25                    # README: fp8 kernels +0.2% st


def report(index: int):
    """``verilayout audit``'s report on a kernel's PTX with the TTGIR beside it as the plan (what
    ``audit_ptx_file`` does with the two files)."""
    stem, ttgir = D.kernels()[index], D.text(index, "ttgir")
    tmod = parse_module(ttgir)
    plan = audit_module(tmod, stem + ".ttgir").checks
    assert plan, stem
    return audit_ptx_text(D.text(index, "ptx"), stem + ".ptx", ttgir, plan, ttgir_module=tmod)


def test_the_audit_reads_every_kernel():
    """``verilayout audit`` on each PTX with its TTGIR (Triton 3.6): the plan parses, every shared
    access has exact lane addresses, and each check reports its access's figure."""
    for index, stem in D.kernels().items():
        rep = report(index)
        banks = [c for c in rep.checks if c.check == "bank-conflicts"]
        figures = {a.ins.line: a.wavefronts for a in accesses(index)}
        assert banks and all(c.status in ("proved", "counterexample") for c in banks), stem
        assert all(c.data["wavefronts"] == figures[c.line] for c in banks), stem


def test_cp_async_verdict_says_the_runtime_bound():
    rep = report(25)
    cps = [c for c in rep.checks if c.check == "bank-conflicts" and c.op.startswith("cp.")]
    assert cps and all("up to twice" in c.message and ptx_smem.LDGSTS_MEASUREMENT in c.message for c in cps)
    assert all(c.data["runtime_wavefronts_up_to"] == 2 * c.data["wavefronts"] for c in cps)


def test_ldgsts_exception_within_the_measured_runtime_range():
    # the microbenchmark (hwtests/results/...ldgsts_microbench.txt): every static pattern 4, the
    # replica of 025's copy stream 4 or 8 on its first two stage copies; the model's 4 is the floor
    text = D.LDGSTS.read_text()
    per_exec = [float(x) for x in re.findall(r"wf/exec\s+([\d.]+)", text)]
    assert min(per_exec) == 4.0 and max(per_exec) == 8.0
    replica = re.findall(r"^ldg_R025\w*: s0 ([\d.]+)\s+s1 ([\d.]+)\s+loop mean ([\d.]+)", text, re.M)
    assert {tuple(map(float, r)) for r in replica} == {(4.0, 8.0, 4.0), (8.0, 8.0, 4.0)}
    _, bad = disagreements(accesses)
    model = {a.ins.line: a.wavefronts for a in accesses(25)}
    for stem, line, meas, _ in bad:
        assert model[line] == 4 <= meas <= 2 * model[line]


@pytest.mark.parametrize("wrong", ["16 banks", "vector width ignored"])
def test_a_wrong_bank_rule_fails_the_data(monkeypatch, wrong):
    if wrong == "16 banks":
        monkeypatch.setattr(ptx_smem, "_MODEL", BankModel(num_banks=16))
    else:                       # every access read as one 4-byte word per lane, 32 lanes a phase
        real = ptx_smem.smem_access

        def narrow(ins):
            acc = real(ins)
            return acc if acc is None or acc[2] <= 4 else (acc[0], acc[1], 4, 32)
        monkeypatch.setattr(ptx_smem, "smem_access", narrow)
    total, bad = disagreements(accesses)
    assert total == 820 and len(bad) > len(LDGSTS_EXCEPTIONS)
