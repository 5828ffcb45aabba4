"""Bank-model rules measured on H100 kernels outside the shared data (issue 27), one test each.

The PTX below is written by hand; each expected figure is derived in the test from the lanes'
addresses and the measured rule it pins:
- ``stmatrix .x1``/``.x2`` take row addresses from lanes 0-7 / 0-15 only (PTX ISA, stmatrix), so
  an ``.x1`` is one phase (hardware: 1 wavefront where the 32-lane evaluation predicted 4);
- a ``ld.shared.v4`` where every lane reads the same 16 bytes took 2 wavefronts, not 4;
- an access under a guard only warp 0 passes (a cross-warp reduction) costs nothing in the other warps.
"""
from __future__ import annotations

from verilayout.audit.ptx_context import PtxContext
from verilayout.audit.ptx_smem import shared_accesses, smem_checks
from verilayout.frontends.ptx import parse_ptx
from verilayout.hw.nvidia.banks import warp_wavefronts
from verilayout.prove.ptx_values import PtxValues

HEAD = ".version 8.7\n.target sm_90a\n.extern .shared .align 16 .b8 global_smem[];\n.visible .entry k()\n.reqntid {n}\n{{\n"


def run(body: str, threads: int = 128):
    mod = parse_ptx(HEAD.format(n=threads) + body + "\nret;\n}\n")
    return mod, shared_accesses(mod, {"k": PtxValues(mod, "k", first_iteration=True)})


def test_stmatrix_x1_x2_use_only_their_address_lanes():
    # lane t gives row address 16 t: lanes 0-7 cover 128 contiguous bytes (one wavefront per matrix);
    # lanes 8-31 (not address lanes of .x1) would add 3 more phases if they were counted
    body = ("mov.u32 %r1, %tid.x;\nand.b32 %r2, %r1, 31;\nshl.b32 %r3, %r2, 4;\nmov.b32 %r4, global_smem;\n"
            "add.s32 %r5, %r4, %r3;\n"
            "stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r5], {%r6};\n"
            "stmatrix.sync.aligned.m8n8.x2.shared.b16 [%r5], {%r6, %r7};\n"
            "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r5], {%r6, %r7, %r8, %r9};\n"
            "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r10}, [%r5];")
    _, accs = run(body)
    assert [(a.ins.opcode.split(".")[4], a.wavefronts, a.ideal) for a in accs] == \
        [("x1", 1, 1), ("x2", 2, 2), ("x4", 4, 4), ("x1", 1, 1)]


def test_uniform_v4_load_takes_two_wavefronts():
    # every lane reads global_smem[0:16]: one distinct 16-byte chunk per half-warp -> measured 2
    body = ("mov.b32 %r1, global_smem;\nld.shared.v4.b32 {%r2, %r3, %r4, %r5}, [%r1];")
    _, accs = run(body)
    assert (accs[0].wavefronts, accs[0].per_warp) == (2, (2, 2, 2, 2))


def test_v4_rule_keeps_quarter_warps_when_a_half_does_not_fit_one_wavefront():
    contiguous = [16 * t for t in range(32)]                        # 512 B: 4 wavefronts, ideal
    same_bank = [512 * t for t in range(32)]                        # 8 lanes of a phase in banks 0-3
    pairs = [16 * (t % 8) for t in range(32)]                       # each quarter-warp the same 128 B
    assert warp_wavefronts(contiguous, 16, 8) == 4
    assert warp_wavefronts(same_bank, 16, 8) == 4 * 8
    assert warp_wavefronts(pairs, 16, 8) == 2                       # each half-warp fits one wavefront
    assert warp_wavefronts([0] * 32, 8, 16) == 2                    # 64-bit accesses: no rule measured


def test_a_guard_only_warp_0_passes_costs_nothing_in_the_other_warps():
    # cross-warp reduction: every warp's lane 0 writes its partial sum (word = warp id), then warp 0
    # reads the 4 partials; lanes 4-31 of warp 0 and warps 1-3 do not execute the load
    body = ("mov.u32 %r1, %tid.x;\nand.b32 %r2, %r1, 31;\nshr.u32 %r3, %r1, 5;\nmov.b32 %r4, global_smem;\n"
            "setp.eq.s32 %p1, %r2, 0;\nshl.b32 %r5, %r3, 2;\nadd.s32 %r6, %r4, %r5;\n"
            "@%p1 st.shared.b32 [%r6], %r7;\nbar.sync 0;\n"
            "setp.lt.u32 %p2, %r1, 4;\nshl.b32 %r8, %r1, 2;\nadd.s32 %r9, %r4, %r8;\n"
            "@%p2 ld.shared.b32 %r10, [%r9];")
    mod, accs = run(body)
    st, ld = accs
    assert (st.per_warp, st.warps, st.guard) == ((1, 1, 1, 1), (0, 1, 2, 3), "evaluated")
    assert (ld.per_warp, ld.warps, ld.wavefronts, ld.ideal) == ((1, 0, 0, 0), (0,), 1, 1)
    checks = smem_checks(PtxContext("k.ptx", mod, None, (), {"k": PtxValues(mod, "k", first_iteration=True)}))
    load = next(c for c in checks if c.data["kind"] == "load")
    assert load.data["warps"] == [0] and "executed by warp(s) 0 of 4" in load.message


def test_a_guard_excluding_warp_0_is_costed_in_the_warps_that_run_it():
    # only warp 1 passes; its lanes write words 32 apart (32-way conflict), warp 0's would not conflict
    body = ("mov.u32 %r1, %tid.x;\nshr.u32 %r2, %r1, 5;\nsetp.eq.s32 %p1, %r2, 1;\nand.b32 %r3, %r1, 31;\n"
            "mul.lo.s32 %r4, %r3, %r2;\nshl.b32 %r5, %r4, 7;\nmov.b32 %r6, global_smem;\n"
            "add.s32 %r7, %r6, %r5;\n@%p1 st.shared.b32 [%r7], %r8;")
    _, accs = run(body)
    assert (accs[0].per_warp, accs[0].wavefronts) == ((0, 32, 0, 0), 32)


def test_a_guard_on_other_values_counts_every_warp():
    body = ("ld.param.u32 %r1, [k_param_0];\nsetp.gt.s32 %p1, %r1, 0;\nmov.u32 %r2, %tid.x;\n"
            "shl.b32 %r3, %r2, 2;\nmov.b32 %r4, global_smem;\nadd.s32 %r5, %r4, %r3;\n@%p1 st.shared.b32 [%r5], %r6;")
    _, accs = run(body)
    assert (accs[0].guard, accs[0].per_warp) == ("free", (1, 1, 1, 1))


def test_without_reqntid_warp_0_alone_is_evaluated():
    mod = parse_ptx(".version 8.7\n.extern .shared .align 16 .b8 global_smem[];\n.visible .entry k()\n{\n"
                    "mov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 2;\nmov.b32 %r3, global_smem;\nadd.s32 %r4, %r3, %r2;\n"
                    "st.shared.b32 [%r4], %r5;\nret;\n}\n")
    accs = shared_accesses(mod, {"k": PtxValues(mod, "k", first_iteration=True)})
    assert accs[0].per_warp == (1,)


def test_a_compiled_kernel_guarded_to_warp_0():
    # Triton 3.9's persistent TMA matmul (tests/corpus): `setp.lt.u32 %p4, %r2, 32` with
    # %r2 = %tid.x & 127 guards the tensor-map copy to shared memory: warp 0 writes it, warps 1-3 do not
    from pathlib import Path
    path = Path(__file__).parent / "corpus" / "cuda90" / "persistent_tma_matmul_128x128x64_w4_s3.ptx"
    text = path.read_text()
    assert "and.b32 \t%r2, %r1, 127;" in text and "setp.lt.u32 \t%p4, %r2, 32;" in text
    mod = parse_ptx(text)
    evals = {f: PtxValues(mod, f, first_iteration=True) for f in mod.functions}
    guarded = [a for a in shared_accesses(mod, evals) if a.ins.pred == "%p4"]
    assert guarded and all(a.per_warp == (1, 0, 0, 0) and a.guard == "evaluated" for a in guarded)


def test_uniform_v4_store_is_not_merged():
    # only the load was measured: a store where every lane writes the same 16 bytes stays 4 (quarter-warps)
    _, accs = run("mov.b32 %r1, global_smem;\nst.shared.v4.b32 [%r1], {%r2, %r3, %r4, %r5};")
    assert accs[0].wavefronts == 4
