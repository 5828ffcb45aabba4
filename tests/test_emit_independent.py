"""The independent check of emitted wgmma kernels (verilayout.simulate.independent).

Oracles: nvcc (the kernel is compiled to PTX and, for the index functions, to a host program),
seed 003 (the descriptor values of its example 1), the PTX ISA matrix-descriptor field layout
(bits 16-29 LBO, 32-45 SBO, in 16-byte units) and the PTX ISA rules quoted in seed 003
(wgmma.fence, commit_group, wait_group, the async-proxy fence). Each planted bug is an edit of the
emitted ``kernel.cu`` text, written here; the check must name what is wrong.
"""
import re
import shutil

import pytest

from verilayout.emit import cuda_wgmma
from verilayout.emit.gemm_plan import GemmManifest
from verilayout.frontends.names import parse_operand, parse_shape, parse_tile
from verilayout.simulate.independent import SMEM_SAMPLES, check_wgmma_source


def emit_wgmma(shape, dtype, acc=None, a="K:none", b="K:none", k=None):
    """The emitter on the CLI's spellings, read at the door as ``verilayout emit wgmma`` reads them."""
    return cuda_wgmma.emit_wgmma(parse_shape(shape), dtype, acc, parse_operand(a, "A"),
                                 parse_operand(b, "B"), k)


pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc (CUDA 12 or newer) "
                                "is not installed; the independent check compiles kernel.cu")

SS = ("m64n32k16", "f16", "f32", "M:128B", "K:32B", 32)      # both operands in shared memory
RS = ("m64n32k16", "f16", "f32", "reg", "N:64B", 32)         # A from registers
SEED1 = ("m64n32k16", "f16", "f32", "K:none", "K:none", 16)  # seed 003, example 1


@pytest.fixture(scope="module")
def kernels():
    out = {}
    for name, cfg in (("ss", SS), ("rs", RS), ("seed1", SEED1)):
        e = emit_wgmma(*cfg)
        out[name] = (e.manifest, e.files["kernel.cu"])
    return out


def _check(kernels, name, edit=None, host=False):
    man, src = kernels[name]
    if edit is not None:
        new = edit(src)
        assert new != src, "the planted edit did not change kernel.cu"
        src = new
    return check_wgmma_source(man, src, host=host)


def _caught(report, check, pattern):
    bad = [c for c in report.checks if c.status == "counterexample" and c.check == check]
    assert bad, [c.to_dict() for c in report.checks]
    assert any(re.search(pattern, c.message) for c in bad), [c.message for c in bad]
    assert not report.ok


def _sub(pattern, repl, count=0):
    def edit(src):
        return re.sub(pattern, repl, src, count=count)
    return edit


# ----- the emitted kernels pass --------------------------------------------------------------

@pytest.mark.parametrize("name", ["ss", "rs", "seed1"])
def test_emitted_kernels_pass_every_independent_check(kernels, name):
    r = _check(kernels, name, host=name != "seed1")
    assert r.ok, [c.to_dict() for c in r.failures]
    kinds = {c.check for c in r.checks}
    assert {"compile", "spills", "instruction", "order", "d-store"} <= kinds
    assert ("index-functions" in kinds) == (name != "seed1")
    if name != "rs":
        assert {"copy", "descriptor"} <= kinds


@pytest.mark.parametrize("cfg", [("m64n8k8", "tf32", "f32", "K:32B", "K:32B", 8),
                                 ("m64n16k32", "s8", "s32", "K:64B", "K:none", 64),
                                 ("m64n64k16", "bf16", "f32", "MN:64B", "N:128B", 32),
                                 ("m64n256k16", "f16", "f16", "MN:128B", "N:128B", 16)])
def test_more_configurations_pass(cfg):
    e = emit_wgmma(*cfg)
    r = check_wgmma_source(e.manifest, e.files["kernel.cu"], host=False)
    assert not [c for c in r.checks if c.status == "counterexample"], \
        [c.to_dict() for c in r.failures]
    assert {c.check for c in r.checks if c.status == "proved"} >= {"instruction", "copy",
                                                                   "descriptor", "order"}


def test_descriptors_read_from_the_ptx_are_seed_003_example_1(kernels):
    """Seed 003 example 1 (A K:none 64x16 -> 0x0000000800400000, B K:none 32x16 at byte 2048 ->
    0x0000000800200080 at base 0): nvcc's PTX evaluated at shared base 0 gives these values."""
    r = _check(kernels, "seed1")
    got = {c.message[0]: c.data["descriptors"][f"{SMEM_SAMPLES[0]:#x}"]
           for c in r.checks if c.check == "descriptor" and c.status == "proved"}
    assert got == {"A": ["0x0000000800400000"], "B": ["0x0000000800200080"]}


def test_comments_and_spacing_are_not_failures(kernels):
    r = _check(kernels, "ss", lambda s: s.replace("\n  asm volatile(\"fence.proxy",
                                                  "\n  // a harmless comment\n\n   asm volatile("
                                                  "\"fence.proxy", 1))
    assert r.ok, [c.to_dict() for c in r.failures]


# ----- the four planted bugs of issue 15 -----------------------------------------------------

def test_planted_copy_swizzle_xor_is_caught(kernels):
    # the Swizzle<3,4,3> line of a_smem_offset dropped: the copy writes an unswizzled A
    edit = _sub(r"(a_smem_offset\(uint32_t mn, uint32_t k\) \{(?:\n[^\n]*){4})\n  x \^= [^\n]*",
                r"\1", 1)
    r = _check(kernels, "ss", edit, host=True)
    _caught(r, "copy", r"writes A\(mn=\d+, k=\d+\) at buffer byte")
    _caught(r, "index-functions", r"a_smem_offset\(\d+, \d+\)")


# ----- planted bugs: one edit of kernel.cu each, and the check that must name it -----------------

_PLANTED = [
    pytest.param("ss", _sub(r'  asm volatile\("fence\.proxy\.async[^\n]*\n', ""),
                 "order", r"no fence\.proxy\.async", id="missing_fence_proxy_async"),
    pytest.param("ss", _sub(r'"l"\(DESC_A_(\d) \+ base_field\), "l"\(DESC_B_\d \+ base_field\)',
                            r'"l"(DESC_B_\1 + base_field), "l"(DESC_A_\1 + base_field)'),
                 "descriptor", r"swapped", id="swapped_descriptor_operands"),
    pytest.param("ss", _sub(r'wait_group\.sync\.aligned %0;\\n" :: "n"\(0\)',
                            r'wait_group.sync.aligned %0;\\n" :: "n"(1)'),
                 "order", r"accumulator %f\d+ written by a wgmma group that may still be pending",
                 id="wait_group_1"),
    pytest.param("ss", _sub(r'  asm volatile\("wgmma\.wait_group[^\n]*\n', ""),
                 "order", r"may still be pending", id="missing_wait_group"),
    # the start field without the & 0x3FFFF: a cluster rank above bit 18 reaches LBO
    pytest.param("ss", _sub(r"\(\(base & 0x3FFFFu\) >> 4\)", "(base >> 4)"),
                 "descriptor", r"not confined to its 14-bit field", id="unmasked_14_bit_start"),
    # imm-trans-b 1 (MN-major) for the K-major B
    pytest.param("ss", _sub(r"p, 1, 1, 1, 0;", "p, 1, 1, 1, 1;"),
                 "instruction", r"imm-trans-b is 1, but B is K-major", id="wrong_trans_immediate"),
    # K-block 1 of B reads K-block 0's start
    pytest.param("ss", _sub(r'"l"\(DESC_B_1 \+ base_field\)', '"l"(DESC_B_0 + base_field)'),
                 "descriptor", r"B descriptor of wgmma 1 \(K-block 1\)", id="k_block_start"),
    pytest.param("ss", _sub(r"const int scale_d_1 = 1;", "const int scale_d_1 = 0;"),
                 "instruction", r"scale-d is 0: D = A\*B discards K-blocks 0\.\.0", id="scale_d_zero"),
    pytest.param("ss", _sub(r"p, 1, 1, 1, 0;", "p, -1, 1, 1, 0;", 1),
                 "instruction", r"imm-scale-a is -1", id="negated_operand"),
    pytest.param("ss", _sub(r'  asm volatile\("wgmma\.fence[^\n]*\n', ""),
                 "order", r"not preceded by wgmma\.fence", id="missing_wgmma_fence"),
    pytest.param("ss", _sub(r'  asm volatile\("wgmma\.commit_group[^\n]*\n', ""),
                 "order", r"not yet committed|never committed", id="missing_commit_group"),
    pytest.param("ss", _sub(r"\n  __syncthreads\(\);", "", 1),
                 "order", r"not followed by a CTA barrier", id="missing_barrier"),
    # the copy loop itself (not the index function) reads A column-major
    pytest.param("ss", _sub(r"a_smem_offset\(i / K, i % K\)", "a_smem_offset(i % M, i / M)"),
                 "copy", r"writes A\(mn=\d+, k=\d+\)", id="transposed_copy_in_the_kernel"),
    pytest.param("ss", _sub(r"smem \+ b_smem_offset\(i % N, i / N\)",
                            "smem + (b_smem_offset(i % N, i / N) ^ 16u)"),
                 "copy", r"writes B\(mn=\d+, k=\d+\)", id="xor_in_the_copy_loop"),
    # the two halves of each A register swapped: PTX puts the lower-indexed element in the low bits
    pytest.param("rs", _sub(r"<< \(16u \* s\)", "<< (16u * (s ^ 1u))"),
                 "a-registers", r"A register \d+ holds A\(\d+, \d+\) in element [01]; the PTX A fragment reads",
                 id="register_a_packing_order"),
    pytest.param("ss", _sub(r"__syncthreads\(\);", "__syncthreads()", 1),
                 "compile", r"does not compile", id="kernel_that_does_not_compile"),
]


@pytest.mark.parametrize("kernel,edit,check,pattern", _PLANTED)
def test_planted_bug_is_caught(kernels, kernel, edit, check, pattern):
    _caught(_check(kernels, kernel, edit), check, pattern)


# ----- more planted bugs ---------------------------------------------------------------------

def _swap_lbo_sbo(value: int) -> int:
    """PTX ISA matrix descriptor: LBO bits 16-29, SBO bits 32-45 (16-byte units)."""
    lbo, sbo = (value >> 16) & 0x3FFF, (value >> 32) & 0x3FFF
    return value & ~((0x3FFF << 16) | (0x3FFF << 32)) | (sbo << 16) | (lbo << 32)


def test_planted_lbo_sbo_swap_is_caught(kernels):
    man, src = kernels["ss"]
    m = re.search(r"constexpr uint64_t DESC_B_0 = (0x[0-9a-f]+)ull", src)
    old = int(m.group(1), 16)
    assert (old >> 16) & 0x3FFF != (old >> 32) & 0x3FFF
    new = _swap_lbo_sbo(old)
    r = _check(kernels, "ss", lambda s: s.replace(m.group(0), m.group(0).replace(m.group(1),
                                                                                 f"{new:#018x}")))
    _caught(r, "descriptor", r"B descriptor of wgmma 0 .* does not read B's layout")


def test_planted_d_store_index_is_caught(kernels):
    # d_index: lane bit 2 moves to row 2 instead of row 1 (the PTX D fragment: row lane / 4)
    edit = _sub(r"if \(lane & 4u\) \{ r \^= 1u; \}", "if (lane & 4u) { r ^= 2u; }")
    r = _check(kernels, "ss", edit, host=True)
    _caught(r, "d-store", r"accumulator element \d+ .* PTX D fragment puts it at")
    _caught(r, "index-functions", r"d_index")


def test_planted_register_a_index_is_caught(kernels):
    # a_index: lane bit 2 moves to row 2 instead of row 1 (the PTX A fragment: row lane / 4)
    def edit(src):
        head, tail = src.split("uint32_t a_index(uint32_t tid", 1)
        body, rest = tail.split("return ", 1)
        return head + "uint32_t a_index(uint32_t tid" + body.replace(
            "if (lane & 4u) { r ^= 1u; }", "if (lane & 4u) { r ^= 2u; }") + "return " + rest
    r = _check(kernels, "rs", edit, host=True)
    _caught(r, "index-functions", r"a_index")
    _caught(r, "a-registers", r"thread \d+'s A register \d+ holds A\(\d+, \d+\) in element \d")


# ----- simulate runs the independent check -----------------------------------------------------

def test_simulate_reports_the_independent_checks_and_their_findings(tmp_path):
    from verilayout.emit.cuda_wgmma import write_emission
    from verilayout.simulate.replay import simulate
    write_emission(emit_wgmma(*SEED1), str(tmp_path))
    path = tmp_path / "kernel.cu"
    path.write_text("// an edited comment\n" + path.read_text().replace("\n", "\n\n", 3))
    r = simulate(str(tmp_path))
    assert r.ok and "independent checks proved" in r.summary
    assert r.details["independent"]["ok"]
    path.write_text(path.read_text().replace('"n"(0)', '"n"(1)'))
    r = simulate(str(tmp_path))            # the file no longer is what the manifest generates
    assert not r.ok and r.mismatch["where"] == "kernel.cu"
    assert any(c.startswith("independent check of kernel.cu: order: ") and "pending" in c
               for c in r.causes), r.causes


def test_run_threads_follows_an_unrolled_copy_loop():
    """The copy of a K = 64 bf16 kernel is unrolled by nvcc with a remainder loop; every element
    is still found (4096 of A, 2048 of B) through the run of the 128 threads."""
    e = emit_wgmma("m64n32k16", "bf16", "f32", "K:none", "K:none", 64)
    r = check_wgmma_source(e.manifest, e.files["kernel.cu"], host=False)
    msgs = [c.message for c in r.checks if c.check == "copy" and c.status == "proved"]
    assert any("4096 elements" in m for m in msgs) and any("2048 elements" in m for m in msgs)


# ----- the GEMM: tensor maps, TMA, descriptors, the mbarrier ring, the epilogue ------------------

GEMM = ("f16", "128x256x64", 4)      # BM != BN, 4 stages, 2 consumer warpgroups


@pytest.fixture(scope="module")
def gemm():
    from verilayout.emit.cuda_gemm import emit_gemm
    e = emit_gemm(GEMM[0], tile=parse_tile(GEMM[1]), stages=GEMM[2])
    return e.manifest, e.files["kernel.cu"]


def _gemm(gemm, edit=None, host=False):
    from verilayout.simulate.gemm_check import check_gemm_source
    man, src = gemm
    if edit is not None:
        new = edit(src)
        assert new != src, "the planted edit did not change kernel.cu"
        src = new
    return check_gemm_source(GemmManifest.from_dict(man), src, host=host)


def test_the_emitted_gemm_passes_every_independent_check(gemm):
    r = _gemm(gemm, host=True)
    assert r.ok, [c.to_dict() for c in r.failures]
    assert {c.check for c in r.checks} == {"compile", "spills", "instruction", "tensor-map", "tma",
                                           "descriptor", "protocol", "d-store", "index-functions",
                                           "tma-store"}     # the TMA-store epilogue


@pytest.mark.parametrize("cfg", [("e4m3", "128x128x128", 6), ("tf32", "64x128x16", 5)])
def test_other_gemm_configurations_pass(cfg):
    from verilayout.emit.cuda_gemm import emit_gemm
    from verilayout.simulate.gemm_check import check_gemm_source
    e = emit_gemm(cfg[0], tile=parse_tile(cfg[1]), stages=cfg[2])
    r = check_gemm_source(GemmManifest.from_dict(e.manifest), e.files["kernel.cu"], host=False)
    assert r.ok, [c.to_dict() for c in r.failures]


def test_planted_gemm_host_side_bugs_are_caught(gemm):
    # CUtensorMapSwizzle(2) is cuda.h's 64B (the 128-byte-row layout needs 128B), and B's box
    # rows BM instead of BN (one host build for both plants)
    # (with a third plant in the same build: d_col's lane bit 0 moved to column 4, and a fourth:
    # tile_coords walking tile rows with / instead of %)
    edit = _sub(r"CUtensorMapSwizzle\(3\)", "CUtensorMapSwizzle(2)")
    r = _gemm(gemm, lambda s: edit(s).replace("make_tensor_map(&tb, kb, KN, K, BN)",
                                              "make_tensor_map(&tb, kb, KN, K, BM)")
              .replace("(((lane >> 0u) & 1u) * 2u)", "(((lane >> 0u) & 1u) * 4u)")
              .replace("tm = first + (t % per_group) % rows;", "tm = first + (t % per_group) / rows;"),
              host=True)
    _caught(r, "index-functions", r"d_row/d_col\(\d+, \d+\) = \(\d+, \d+\) compiled for the host")
    _caught(r, "index-functions", r"tile_coords over an 11 x 7 grid does not visit every tile once")
    _caught(r, "tensor-map", r"tensor map of A: swizzle 2, but the layout Sw<3,4,3> is the "
            r"128-byte swizzle")
    _caught(r, "tensor-map", r"tensor map of B: box \[64, 128\], expected \[64 .*, 256\]")


# ----- planted GEMM bugs: one edit of the GEMM's kernel.cu each, and the check that must name it --

_PLANTED_GEMM = [
    pytest.param(_sub(r"mbar_arrive_expect_tx\(full, TX_BYTES\);", "mbar_arrive(full);"),
                 "protocol", r"landed|beyond its expect_tx", id="missing_expect_tx"),
    pytest.param(_sub(r"mbar_arrive_expect_tx\(full, TX_BYTES\);",
                      "mbar_arrive_expect_tx(full, TX_BYTES / 2u);"),
                 "protocol", r"landed|beyond its expect_tx", id="short_expect_tx"),
    pytest.param(_sub(r"mbar_wait\(full0 \+ 8u \* stage, phase\);",
                      "mbar_wait(full0 + 8u * stage, phase ^ 1u);"),
                 "protocol", r"consumer \d, iteration \d+: a wgmma reads stage buffer",
                 id="wrong_wait_parity"),
    # the consumer releases the stage it just issued wgmmas on, whose group may still be pending
    pytest.param(_sub(r"if \(kt > kbeg && lane == 0\) mbar_arrive\(empty0 \+ 8u \* prev\);",
                      "if (lane == 0) mbar_arrive(empty0 + 8u * stage);"),
                 "protocol", r"overwrites stage buffer|more arrivals", id="early_release"),
    # wait_group 2 with one group per iteration: the released stage's reads may be pending
    pytest.param(_sub(r"wgmma_wait<1>\(\);", "wgmma_wait<2>();"),
                 "protocol", r"overwrites stage buffer .* may still read", id="wait_group_too_shallow"),
    pytest.param(_sub(r"&tmap_a, k0, int32_t\(tm \* BM\)", "&tmap_a, k0, int32_t(tn * BM)"),
                 "tma", r"do not walk the 2x1 tile grid", id="tile_coordinate"),
    pytest.param(_sub(r"const uint32_t row0 = tm \* BM \+ c \* 64u",
                      "const uint32_t row0 = tm * BM + c * 32u"),
                 "d-store", r"is stored at D\(\d+, \d+\); the PTX D fragment puts it at", id="epilogue_row"),
    # empty[s] initialised for 4 arrivals: one consumer warpgroup's 4 warps release the stage
    pytest.param(_sub(r"EMPTY_ARRIVALS = 8u", "EMPTY_ARRIVALS = 4u"),
                 "protocol", r"overwrites stage buffer .* consumer \d may still read",
                 id="empty_barrier_count"),
    # scale-d 0 at K-block 0 of every K-tile: each stage overwrites the sum of the earlier ones
    pytest.param(_sub(r"\(kt != kbeg\) \|\| \(kb != 0u\)", "kb != 0u"),
                 "instruction", r"scale-d 0 discards the K-blocks summed before it", id="scale_d_per_k_tile"),
    pytest.param(_sub(r"p, 1, 1, 0, 0;", "p, 1, 1, 1, 0;"),
                 "instruction", r"imm-trans-a is 1, expected 0", id="trans_immediate"),
    # the ragged run (M = 2 BM - 40): rows past M must not be stored
    pytest.param(_sub(r"if \(r < uint32_t\(M\)\) \{", "if (true) {"),
                 "d-store",
                 r"outside the 216x251 D, and is stored .*missing edge predicate.*\[M=216, N=251, K=184\]",
                 id="missing_row_predicate"),
    pytest.param(_sub(r"wgmma_wait<0>\(\);", "wgmma_wait<1>();"),
                 "d-store", r"stores its accumulators while a wgmma group that may still be pending",
                 id="epilogue_without_wait_group_0"),
    # the accumulators are zeroed for each tile; without wgmma.fence the next wgmma races them
    pytest.param(_sub(r"\n        wgmma_fence\(\);", ""),
                 "instruction", r"no wgmma.fence in between", id="missing_wgmma_fence"),
]


@pytest.mark.parametrize("edit,check,pattern", _PLANTED_GEMM)
def test_planted_gemm_bug_is_caught(gemm, edit, check, pattern):
    _caught(_gemm(gemm, edit), check, pattern)


def test_planted_gemm_stage_index_off_by_one_is_caught(gemm):
    # the consumer's descriptors read the next stage of the ring
    edit = _sub(r"desc_a\(base, stage, c, kb\), desc_b\(base, stage, kb\)",
                "desc_a(base, (stage + 1u) % STAGES, c, kb), desc_b(base, (stage + 1u) % STAGES, kb)")
    r = _gemm(gemm, edit)
    _caught(r, "descriptor", r"does not read that K-block of the stage the iteration's TMA filled")
    _caught(r, "protocol", r"holds iteration|landed")


def test_simulate_checks_an_emitted_gemm_directory(tmp_path):
    from verilayout.emit.cuda_gemm import emit_gemm
    from verilayout.emit.cuda_wgmma import write_emission
    from verilayout.simulate.replay import simulate
    write_emission(emit_gemm("bf16", tile=(64, 128, 32), stages=3), str(tmp_path))
    path = tmp_path / "kernel.cu"
    path.write_text(path.read_text().replace("wgmma_wait<1>();", "wgmma_wait<2>();"))
    r = simulate(str(tmp_path))
    assert not r.ok and r.kind == "gemm" and r.mismatch["where"] == "protocol", r.summary
    assert r.details["independent"]["checks"][0]["check"] == "compile"


def test_ptxas_spill_figures_are_reported(kernels):
    """ptxas -v (the oracle) on nvcc's PTX of the seed kernel: 0 bytes spilled."""
    r = _check(kernels, "seed1")
    spills = [c for c in r.checks if c.check == "spills"]
    assert len(spills) == 1 and spills[0].status == "proved" and "0 bytes spilled" in spills[0].message


def test_planted_gemm_tile_sum_leak_is_caught(gemm):
    # accumulate onto the previous tile: no zeroing and scale-d 1 at each tile's first K-block
    edit = _sub(r"\(kt != kbeg\) \|\| \(kb != 0u\)", "1u")
    r = _gemm(gemm, lambda s: edit(s).replace("for (int i = 0; i < D_REGS; ++i) d[i] = 0.0f;", ""))
    _caught(r, "instruction", r"first wgmma of a tile accumulates")


def test_planted_gemm_init_after_the_barrier_is_caught(gemm):
    # the CTA barrier moved above the mbarrier.init loop: consumers may wait on uninitialised bars
    def edit(src):
        head, tail = src.split("  if (threadIdx.x == 0) {\n    asm volatile(\"prefetch.tensormap", 1)
        body, rest = tail.split("  __syncthreads();\n", 1)
        return head + "  __syncthreads();\n  if (threadIdx.x == 0) {\n    asm volatile(\"prefetch.tensormap" \
            + body + rest
    r = _gemm(gemm, edit)
    _caught(r, "protocol", r"before the CTA barrier that publishes its initialisation|mbarrier.init "
            r"after the CTA barrier")
