"""verilayout emit wgmma + the executable model (verilayout simulate), without a GPU.

Expected values come from the seeds (003_ce87ea73fe8bc8cb.txt: the four m64n32k16
examples, their layouts and descriptor fields; 001_afc8e6ab5857294e.txt: register counts),
from numpy's own ``A @ B`` on matrices the test draws, and from address derivations
written out here.
"""
import copy
import doctest
import importlib
import json
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from verilayout.emit import cuda_wgmma
from verilayout.emit.cuda_wgmma import render_cuda, write_emission
from verilayout.frontends.names import parse_operand, parse_shape
from verilayout.simulate.replay import simulate, simulate_wgmma
from verilayout.errors import LayoutError
from verilayout.hw.nvidia.descriptor import decode


def build_manifest(shape, dtype, acc=None, a="K:none", b="K:none", k=None):
    """The emitter on the CLI's spellings, read at the door as ``verilayout emit wgmma`` reads them."""
    return cuda_wgmma.build_manifest(parse_shape(shape), dtype, acc, parse_operand(a, "A"),
                                     parse_operand(b, "B"), k)


def emit_wgmma(shape, dtype, acc=None, a="K:none", b="K:none", k=None):
    """:func:`emit_wgmma` on the CLI's spellings (see :func:`build_manifest`)."""
    return cuda_wgmma.emit_wgmma(parse_shape(shape), dtype, acc, parse_operand(a, "A"),
                                 parse_operand(b, "B"), k)

# The four m64n32k16 kernels of the tutorial seed 003 (f16 x f16 -> f32, K = 16).
SEED_EXAMPLES = [("K:none", "K:none"), ("MN:64B", "N:none"), ("MN:128B", "K:32B"),
                 ("reg", "N:64B")]

# Issue 6 acceptance: the seed kernels, bf16 / tf32 / int8 variants, N in {8, 64, 128, 256}
# with K = 64.  (shape, dtype, acc, A, B, K)
ACCEPTANCE = (
    [("m64n32k16", "f16", "f32", a, b, 16) for a, b in SEED_EXAMPLES]
    + [("m64n32k16", "bf16", "f32", a, b, 64) for a, b in SEED_EXAMPLES]
    + [("m64n32k8", "tf32", "f32", "K:none", "K:none", 64),
       ("m64n32k8", "tf32", "f32", "K:128B", "K:32B", 64),
       ("m64n32k8", "tf32", "f32", "reg", "K:64B", 64),
       ("m64n32k32", "s8", "s32", "K:none", "K:none", 64),
       ("m64n32k32", "s8", "s32", "K:64B", "K:32B", 64),
       ("m64n32k32", "u8", "s32", "reg", "K:none", 64),
       ("m64n32k16", "f16", "f16", "reg", "N:64B", 64),
       ("m64n8k16", "f16", "f32", "K:none", "K:none", 64),
       ("m64n8k16", "f16", "f32", "reg", "K:128B", 64),
       ("m64n64k16", "f16", "f32", "MN:128B", "N:128B", 64),
       ("m64n128k16", "f16", "f32", "K:128B", "N:64B", 64),
       ("m64n256k16", "f16", "f32", "reg", "N:128B", 64),
       ("m64n256k16", "bf16", "f32", "K:64B", "K:32B", 64),
       ("m64n256k8", "tf32", "f32", "K:128B", "K:128B", 64),
       ("m64n256k32", "s8", "s32", "K:none", "K:64B", 64)])


def ids(cfg):
    return "_".join(str(x).replace(":", "") for x in cfg)


def _inputs(man, seed):
    """Integer matrices the test draws itself (small enough to be exact in every type)."""
    rng = np.random.default_rng(seed)
    lo, hi = {"s8": (-9, 9), "u8": (0, 15)}.get(man["dtype"], (-4, 4))
    if man["acc"] == "f16":
        lo, hi = -2, 2
    return (rng.integers(lo, hi, size=(man["m"], man["k"]), endpoint=True),
            rng.integers(lo, hi, size=(man["k"], man["n"]), endpoint=True))


def _plant(man, op, kb, **fields):
    d = replace(decode(man[op]["descriptors"][kb]), **fields)
    man[op]["descriptors"][kb] = f"{d.value:#018x}"


# ----- the seed's own numbers ----------------------------------------------------------------

def _fields(man, op):
    d = decode(man[op]["descriptors"][0])
    return d.lbo_field, d.sbo_field, d.layout_type


def _strides(text):
    return re.sub(r"_", "", text.split(" o ")[-1])


def test_seed_example_1_layouts_and_descriptors_are_the_tutorials():
    # seed 003: "half: ... ((_8,8),(_8,2)):((_8,_64),(_1,512))", LBO = 64, SBO = 8, type 0;
    # B: ((_8,4),(_8,2)):((_8,_64),(_1,256)), lbo = 32, sbo = 8
    m = build_manifest("m64n32k16", "f16", "f32", "K:none", "K:none")
    assert _strides(m["a"]["layout"]) == "((8,8),(8,2)):((8,64),(1,512))"
    assert _strides(m["b"]["layout"]) == "((8,4),(8,2)):((8,64),(1,256))"
    assert _fields(m, "a") == (64, 8, 0) and _fields(m, "b") == (32, 8, 0)
    assert (m["a"]["trans"], m["b"]["trans"]) == (0, 0)      # K-major: tnspA = tnspB = 0


def test_seed_example_2_layouts_and_descriptors_are_the_tutorials():
    # seed 003: A ((_32,2),(_8,2)):((_1,_256),(_32,512)), LBO = 32, SBO = 64, LAYOUT_TYPE = 2,
    # tnspA = 1; B ((_8,4),(_8,2)):((_1,_64),(_8,256)), LBO = 32, SBO = 8, type 0, tnspB = 1
    m = build_manifest("m64n32k16", "f16", "f32", "MN:64B", "N:none")
    assert _strides(m["a"]["layout"]) == "((32,2),(8,2)):((1,256),(32,512))"
    assert _strides(m["b"]["layout"]) == "((8,4),(8,2)):((1,64),(8,256))"
    assert _fields(m, "a") == (32, 64, 2) and _fields(m, "b") == (32, 8, 0)
    assert (m["a"]["trans"], m["b"]["trans"]) == (1, 1)


def test_seed_example_3_layouts_and_descriptors_are_the_tutorials():
    # seed 003: A ((_64,1),(_8,2)):((_1,_512),(_64,512)), sbo = 64 (LBO unused: one pattern
    # along M), LAYOUT_TYPE = 1; B ((_8,4),(_16,1)):((_16,_128),(_1,512)), LBO 1, SBO 16, type 3
    m = build_manifest("m64n32k16", "f16", "f32", "MN:128B", "K:32B")
    assert _strides(m["a"]["layout"]) == "((64,1),(8,2)):((1,512),(64,512))"
    assert _strides(m["b"]["layout"]) == "((8,4),(16,1)):((16,128),(1,512))"
    lbo, sbo, kind = _fields(m, "a")
    assert (sbo, kind) == (64, 1)
    assert _fields(m, "b") == (1, 16, 3)


def test_seed_example_4_takes_a_from_four_registers():
    # seed 003: A from registers (4 registers of 2 halves per thread); B N-major 64B
    m = build_manifest("m64n32k16", "f16", "f32", "reg", "N:64B")
    f = m["a"]["fragment"]
    assert f["registers"] // f["elements_per_register"] == 4
    assert decode(m["b"]["descriptors"][0]).layout_type == 2 and m["b"]["trans"] == 1
    assert "a_desc" not in render_cuda(m) and "DESC_A" not in render_cuda(m)


def test_every_descriptor_obligation_is_proved_and_listed_at_the_top_of_the_kernel():
    m = build_manifest("m64n32k16", "f16", "f32", "MN:128B", "K:32B", k=64)
    assert len(m["obligations"]) == 8 and all(o["status"] == "proved" for o in m["obligations"])
    head = render_cuda(m).split("#include")[0]
    assert head.count("// ") > 8 and head.count("[proved,") == 8
    for o in m["obligations"]:
        assert o["claim"] in head


@pytest.mark.parametrize("shape,acc,n_regs", [("m64n32k16", "f32", 16), ("m64n32k16", "f16", 8),
                                              ("m64n256k16", "f32", 128), ("m64n8k16", "f16", 2)])
def test_the_wgmma_call_has_the_register_count_of_the_ptx_table(shape, acc, n_regs):
    # seed 001: D of .f32 is N/2 registers, of .f16 N/4 .f16x2 registers; A is four .b32
    src = render_cuda(build_manifest(shape, "f16", acc, "reg", "K:none"))
    call = src[src.index("// K-block 0"):src.index("wgmma.commit_group")]
    constraint = '"+f"' if acc == "f32" else '"+r"'
    assert call.count(constraint + "(d[") == n_regs
    assert call.count('"r"(a_reg[0][') == 4


def test_fences_commit_and_wait_come_in_the_order_ptx_requires():
    src = render_cuda(build_manifest("m64n32k16", "bf16", "f32", "reg", "N:64B", k=64))
    body = src[src.index("vl_wgmma_kernel("):]
    order = ["b_smem_offset(", "fence.proxy.async.shared::cta", "__syncthreads()",
             "a_reg[kb][j] = w", "wgmma.fence.sync.aligned", "wgmma.mma_async",
             "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned",
             "Dt[d_index("]
    pos = [body.index(s) for s in order]
    assert pos == sorted(pos)
    assert body.count("wgmma.mma_async") == 4          # one per K-block, one fence before all
    assert body.count("wgmma.fence.sync.aligned") == 1


# ----- the model: every acceptance configuration simulates exactly -------------------------------

@pytest.mark.parametrize("cfg", ACCEPTANCE, ids=ids)
def test_acceptance_configuration_simulates_to_a_times_b(cfg, tmp_path):
    e = emit_wgmma(*cfg)
    write_emission(e, str(tmp_path))
    r = simulate(str(tmp_path))                            # random inputs, smem base 0
    assert r.ok, (r.summary, r.causes)
    A, B = _inputs(e.manifest, seed=11)
    r = simulate_wgmma(e.manifest, inputs=(A, B), smem_base=0x8000)
    assert r.ok, (r.summary, r.causes)
    np.testing.assert_array_equal(r.output, A @ B)         # numpy's product of the test's own data


def test_simulation_reads_what_the_emitted_directory_says_not_a_rebuilt_plan(tmp_path):
    e = emit_wgmma("m64n32k16", "f16", "f32", "K:none", "K:none")
    man = copy.deepcopy(e.manifest)
    _plant(man, "b", 0, sbo_field=decode(man["b"]["descriptors"][0]).sbo_field + 8)
    write_emission(replace(e, files={"manifest.json": json.dumps(man),
                                     "kernel.cu": render_cuda(man)}), str(tmp_path))
    assert not simulate(str(tmp_path)).ok


# ----- planted bugs are caught, with the coordinate ----------------------------------------------

def test_a_wrong_lbo_is_caught_at_the_coordinate_the_derivation_predicts():
    # seed 003 example 1: A(m, k) lives at 16*(m%8) + 128*(m/8) + 2*(k%8) + LBO*(k/8) bytes
    # with LBO = 1024. With LBO = 1040 (field 65) the hardware reads A(m, k >= 8) 16 bytes
    # further, i.e. from A(m+1, k) while m % 8 < 7. So D(0, c) uses A(1, k) for k >= 8.
    man = build_manifest("m64n32k16", "f16", "f32", "K:none", "K:none")
    _plant(man, "a", 0, lbo_field=65)
    A, B = _inputs(man, seed=3)
    r = simulate_wgmma(man, inputs=(A, B))
    assert not r.ok and r.mismatch["where"] == "D"
    buggy_row0 = A[0, :8] @ B[:8, :] + A[1, 8:] @ B[8:, :]
    np.testing.assert_array_equal(r.output[0], buggy_row0)
    first = np.argwhere(r.output != A @ B)[0]
    assert (r.mismatch["row"], r.mismatch["col"]) == tuple(first)
    assert any("reads A(m=0, k=8)" in c and "holds A(m=1, k=8)" in c for c in r.causes)


def test_a_swapped_swizzle_code_is_caught_with_the_differing_coordinate():
    # seed 003 example 3: A is 128B-swizzled (code 1); code 2 makes the hardware XOR with
    # the 64B pattern instead
    man = build_manifest("m64n32k16", "f16", "f32", "MN:128B", "K:32B")
    _plant(man, "a", 0, layout_type=2)
    A, B = _inputs(man, seed=4)
    r = simulate_wgmma(man, inputs=(A, B))
    assert not r.ok
    diff = np.argwhere(r.output != A @ B)
    assert diff.size and (r.mismatch["row"], r.mismatch["col"]) == tuple(diff[0])
    assert r.mismatch["expected"] == (A @ B)[tuple(diff[0])]


def test_a_swizzle_code_that_breaks_the_descriptor_contract_is_named():
    # B of example 3 is 32B-swizzled with SBO = 256 bytes; as 64B (code 2) the 512-byte
    # pattern no longer repeats at SBO: the bytes read are wrong, and the inferred stride-repeat
    # rule is named beside them (as an inference, not a hardware fact)
    man = build_manifest("m64n32k16", "f16", "f32", "MN:128B", "K:32B")
    _plant(man, "b", 0, layout_type=2)
    r = simulate_wgmma(man)
    assert not r.ok and "stride-repeat" in " ".join(r.causes) and "inference" in " ".join(r.causes)


@pytest.mark.parametrize("where", ["const", "stride"])
def test_an_off_by_one_in_the_copy_is_caught(where):
    man = build_manifest("m64n32k16", "f16", "f32", "MN:64B", "N:none")
    copy_b = man["b"]["copy"]
    if where == "const":
        copy_b["const_bytes"] += 2                    # every B element one f16 to the right
    else:
        copy_b["terms"][-1]["stride_bytes"] += 2      # the outer K step one element too long
    A, B = _inputs(man, seed=5)
    r = simulate_wgmma(man, inputs=(A, B))
    assert not r.ok and r.mismatch["where"] == "D"
    assert r.output[r.mismatch["row"], r.mismatch["col"]] != (A @ B)[r.mismatch["row"],
                                                                      r.mismatch["col"]]


def test_a_wrong_transpose_flag_is_caught():
    man = build_manifest("m64n32k16", "f16", "f32", "MN:64B", "N:none")
    man["b"]["trans"] = 0                             # the hardware now reads B as K-major
    assert not simulate_wgmma(man).ok


def test_a_kernel_edited_after_emission_is_reported_with_its_line(tmp_path):
    write_emission(emit_wgmma("m64n32k16", "f16", "f32", "K:none", "K:none"), str(tmp_path))
    path = tmp_path / "kernel.cu"
    src = path.read_text()
    path.write_text(src.replace("x += (mn % 8u) * 16u;", "x += (mn % 8u) * 18u;", 1))
    r = simulate(str(tmp_path))
    assert not r.ok and r.mismatch["where"] == "kernel.cu"
    line = src.splitlines().index("  x += (mn % 8u) * 16u;") + 1
    assert r.mismatch["line"] == line and "18u" in r.mismatch["got"]


def test_a_wrong_d_store_table_is_caught():
    man = build_manifest("m64n32k16", "f16", "f32", "K:none", "K:none")
    lane = man["d"]["fragment"]["bases"]["lane"]
    lane[0], lane[1] = lane[1], lane[0]               # two lane bits swapped in the store
    r = simulate_wgmma(man)
    assert not r.ok and r.mismatch["where"] == "D"


def test_a_wrong_a_register_table_is_caught():
    man = build_manifest("m64n32k16", "f16", "f32", "reg", "N:64B")
    man["a"]["fragment"]["bases"]["register"][1] = [0, 8]   # row 8 <-> col 8 confused
    man["a"]["fragment"]["bases"]["register"][2] = [8, 0]
    r = simulate_wgmma(man)
    assert not r.ok and any("wgmma reads as A" in c for c in r.causes)


def test_the_model_is_the_same_at_another_aligned_shared_memory_base():
    man = build_manifest("m64n64k16", "f16", "f32", "MN:128B", "N:128B", k=64)
    for base in (0, 0x400, 0x2000, 0x1c000):
        assert simulate_wgmma(man, smem_base=base, seed=base).ok
    with pytest.raises(LayoutError, match="multiple of 1024"):
        simulate_wgmma(man, smem_base=0x200)


# ----- bad input -----------------------------------------------------------------------------

@pytest.mark.parametrize("args,match", [
    (("m64n32k8", "tf32", "f32", "MN:none", "K:none"), "only for f16/bf16"),
    (("m64n32k16", "f16", "f32", "K:none", "reg"), "B is always read from shared memory"),
    (("m64n32k16", "f16", "f32", "K:12B", "K:none"), "expected none, 32B, 64B or 128B"),
    (("m64n32k16", "f16", "f32", "Knone", "K:none"), "expected MAJOR:SWIZZLE"),
    (("m64n32k16", "f16", "s32", "K:none", "K:none"), "accumulator 's32' is not allowed"),
    (("m64n32k16", "e4m3", None, "K:none", "K:none"), "the emitter writes kernels for"),
    (("m64n8k16", "f16", "f32", "K:none", "N:64B"), "does not tile the 8x16 B operand"),
])
def test_bad_configurations_raise_one_line_errors(args, match):
    with pytest.raises(LayoutError, match=match) as e:
        build_manifest(*args)
    assert "\n" not in str(e.value)


def test_k_must_be_a_multiple_of_the_instruction_and_fit_shared_memory():
    with pytest.raises(LayoutError, match="multiple of the instruction's K"):
        build_manifest("m64n32k16", "f16", k=24)
    with pytest.raises(LayoutError, match="more than the 232448 one CTA may use"):
        build_manifest("m64n256k8", "tf32", a="K:none", b="K:none", k=256)


def test_a_malformed_manifest_is_bad_input_not_a_mismatch():
    man = build_manifest("m64n32k16", "f16")
    del man["b"]["copy"]
    with pytest.raises(LayoutError, match="is missing 'copy'"):
        simulate_wgmma(man)
    man = build_manifest("m64n32k16", "f16")
    man["instruction"] = "mma.sync.aligned.m16n8k16"
    with pytest.raises(LayoutError, match="not a wgmma.mma_async"):
        simulate_wgmma(man)
    for key, bad in (("m", -64), ("k", 0), ("n", 10 ** 30), ("k_blocks", -1)):   # no numpy error escapes
        man = build_manifest("m64n32k16", "f16")
        man[key] = bad
        with pytest.raises(LayoutError, match=f"{key} = {bad} is out of range"):
            simulate_wgmma(man)


@pytest.mark.parametrize("module", ["verilayout.emit.cuda_wgmma", "verilayout.simulate.replay"])
def test_docstring_examples_run(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0


# ----- nvcc: the emitted kernels compile for sm_90a (no GPU needed) -------------------------------

NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc (CUDA 12 or newer) is not installed; "
                                "the sm_90a compile check needs it")
SM90A = ["-std=c++17", "-gencode=arch=compute_90a,code=sm_90a"]


def _emit_all(root, cfgs):
    out = []
    for i, cfg in enumerate(cfgs):
        e = emit_wgmma(*cfg)
        d = root / f"c{i}"
        write_emission(e, str(d))
        out.append((e.manifest, d))
    return out


def _unit(path, dirs, main=""):
    inc = "".join(f'#include "{d / "kernel.cu"}"\n' for d in dirs)
    path.write_text("#define VL_NO_MAIN\n" + inc + main)
    return path


def _nvcc(args):
    return subprocess.Popen([NVCC, *SM90A, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


@needs_nvcc
def test_every_acceptance_kernel_compiles_for_sm_90a(tmp_path):
    emitted = _emit_all(tmp_path, ACCEPTANCE)
    dirs = [d for _, d in emitted]
    half = len(dirs) // 2
    # two translation units (several kernels each, distinct namespaces) compiled side by
    # side, plus one kernel.cu as written (with its host harness main)
    jobs = [_nvcc(["-c", str(_unit(tmp_path / "batch0.cu", dirs[:half])), "-o",
                   str(tmp_path / "batch0.o")]),
            _nvcc(["-c", str(_unit(tmp_path / "batch1.cu", dirs[half:])), "-o",
                   str(tmp_path / "batch1.o")]),
            _nvcc(["-c", str(dirs[0] / "kernel.cu"), "-o", str(tmp_path / "main.o")])]
    for j in jobs:
        out, _ = j.communicate(timeout=600)
        assert j.returncode == 0, out
        assert "error" not in out.lower(), out


def _seed_store(t, e):
    """seed 003's hand-written store for m64n32k16 f32: row_c = lane/4 + warp*16,
    col_c = lane%4*2; d[4i+0], d[4i+1] at (row_c, col_c + 8i + {0,1}), d[4i+2], d[4i+3] at
    (row_c + 8, ...)."""
    lane, warp = t % 32, t // 32
    row, col = lane // 4 + warp * 16, lane % 4 * 2
    i, j = divmod(e, 4)
    return (row + 8 * (j >= 2)) * 32 + col + 8 * i + j % 2


@needs_nvcc
def test_the_compiled_index_code_is_the_seed_store_the_ptx_fragments_and_the_model(tmp_path):
    """The kernel's own index functions, compiled by nvcc and run on the CPU, against
    seed 003's hand-written store, the PTX fragment tables and the simulated copy."""
    from verilayout.simulate.replay import _copy_addresses
    from verilayout.wgmma import fragment
    cfgs = [("m64n32k16", "f16", "f32", a, b, 16) for a, b in SEED_EXAMPLES] + \
        [("m64n32k8", "tf32", "f32", "reg", "K:64B", 64),
         ("m64n32k32", "s8", "s32", "reg", "K:none", 64),
         ("m64n256k16", "f16", "f16", "MN:128B", "N:128B", 64)]
    emitted = _emit_all(tmp_path, cfgs)
    body = ["int main() {"]
    for man, _ in emitted:
        ns = "vl_" + man["tag"]
        f = man["d"]["fragment"]
        body.append(f'  std::printf("D"); for (uint32_t t = 0; t < 128; ++t) for (uint32_t e = 0; '
                    f'e < {f["registers"]}u; ++e) std::printf(" %u", {ns}::d_index(t, e)); '
                    'std::printf("\\n");')
        if man["a"]["source"] == "reg":
            g = man["a"]["fragment"]
            body.append(f'  std::printf("R"); for (uint32_t kb = 0; kb < {man["k_blocks"]}u; ++kb) '
                        f'for (uint32_t t = 0; t < 128; ++t) for (uint32_t e = 0; e < '
                        f'{g["registers"]}u; ++e) std::printf(" %u", {ns}::a_index(t, e, kb)); '
                        'std::printf("\\n");')
        for op, ext in (("a", man["m"]), ("b", man["n"])):
            if man[op]["source"] == "smem":
                body.append(f'  std::printf("{op.upper()}"); for (uint32_t mn = 0; mn < {ext}u; '
                            f'++mn) for (uint32_t k = 0; k < {man["k"]}u; ++k) std::printf(" %u", '
                            f'{ns}::{op}_smem_offset(mn, k)); std::printf("\\n");')
    body += ["  return 0;", "}"]
    prog = _unit(tmp_path / "indices.cu", [d for _, d in emitted], "\n".join(body) + "\n")
    exe = tmp_path / "indices"
    j = _nvcc([str(prog), "-o", str(exe)])
    out, _ = j.communicate(timeout=600)
    assert j.returncode == 0, out
    lines = iter(subprocess.run([str(exe)], capture_output=True, text=True, check=True)
                 .stdout.splitlines())
    for man, _ in emitted:
        n, kx = man["n"], man["k_inst"]
        d_hw = fragment(man["shape"], "D", man["dtype"], acc=man["acc"])
        got = np.array(next(lines).split()[1:], dtype=np.int64).reshape(128, d_hw.registers)
        want = np.array([[r * n + c for r, c in (d_hw.coord(t, e) for e in range(d_hw.registers))]
                         for t in range(128)])
        np.testing.assert_array_equal(got, want)
        if man["shape"] == "m64n32k16" and man["acc"] == "f32":
            np.testing.assert_array_equal(got, [[_seed_store(t, e) for e in range(16)]
                                                for t in range(128)])
        if man["a"]["source"] == "reg":
            a_hw = fragment(man["shape"], "A", man["dtype"])
            got = np.array(next(lines).split()[1:], dtype=np.int64)
            want = [r * man["k"] + kb * kx + c for kb in range(man["k_blocks"]) for t in range(128)
                    for r, c in (a_hw.coord(t, e) for e in range(a_hw.registers))]
            np.testing.assert_array_equal(got, want)
        for op, ext in (("a", man["m"]), ("b", n)):
            if man[op]["source"] == "smem":
                got = np.array(next(lines).split()[1:], dtype=np.int64).reshape(ext, man["k"])
                np.testing.assert_array_equal(
                    got, _copy_addresses(man[op]["copy"], ext, man["k"], op))
                if man["shape"] == "m64n32k16":
                    np.testing.assert_array_equal(got, _seed_offsets(man, op, ext))


def _seed_offsets(man, op, ext):
    """Byte offsets of seed 003's layouts written out by hand (examples 1 to 4, K = 16)."""
    mn = np.arange(ext)[:, None]
    k = np.arange(16)[None, :]
    start = man[op]["offset_bytes"]
    layout = (op, man[op]["major"], man[op]["swizzle"])
    if layout in (("a", "K", "none"), ("b", "K", "none")):   # ((8,m),(8,2)):((8,64),(1,8*ext))
        x = 2 * ((mn % 8) * 8 + (mn // 8) * 64 + k % 8 + (k // 8) * 8 * ext)
    elif layout == ("a", "MN", "64B"):                        # ((32,2),(8,2)):((1,256),(32,512))
        x = 2 * (mn % 32 + (mn // 32) * 256 + (k % 8) * 32 + (k // 8) * 512)
    elif layout == ("b", "MN", "none"):                       # ((8,4),(8,2)):((1,64),(8,256))
        x = 2 * (mn % 8 + (mn // 8) * 64 + (k % 8) * 8 + (k // 8) * 256)
    elif layout == ("a", "MN", "128B"):                       # ((64,1),(8,2)):((1,512),(64,512))
        x = 2 * (mn + (k % 8) * 64 + (k // 8) * 512)
    elif layout == ("b", "K", "32B"):                         # ((8,4),(16,1)):((16,128),(1,512))
        x = 2 * ((mn % 8) * 16 + (mn // 8) * 128 + k)
    elif layout == ("b", "MN", "64B"):                        # ((32,1),(8,2)):((1,256),(32,256))
        x = 2 * (mn + (k % 8) * 32 + (k // 8) * 256)
    else:
        raise AssertionError(layout)
    x = x + start
    bits = {"none": 0, "32B": 1, "64B": 2, "128B": 3}[man[op]["swizzle"]]
    return x ^ (((x >> 7) & ((1 << bits) - 1)) << 4)          # Swizzle<B,4,3> on bytes


@needs_nvcc
def test_the_harness_encodes_and_decodes_halves_like_ieee_binary16(tmp_path):
    """The host harness builds its f16 inputs and reads f16 results with its own bit code;
    compiled and run on the CPU it must agree with numpy's IEEE binary16."""
    (man, d), = _emit_all(tmp_path, [("m64n8k16", "f16", "f16", "K:none", "K:none", 16)])
    ns = "vl_" + man["tag"]
    main = ("int main() {\n"
            "  for (int v = -2048; v <= 2048; ++v) {\n"
            f"    uint16_t h = {ns}::f32_to_f16_bits(static_cast<float>(v));\n"
            f"    std::printf(\"%u %.1f\\n\", h, {ns}::f16_bits_to_f32(h));\n"
            "  }\n  return 0;\n}\n")
    prog = _unit(tmp_path / "halves.cu", [d], main)
    j = _nvcc([str(prog), "-o", str(tmp_path / "halves")])
    out, _ = j.communicate(timeout=600)
    assert j.returncode == 0, out
    rows = [line.split() for line in subprocess.run([str(tmp_path / "halves")], capture_output=True,
                                                    text=True, check=True).stdout.splitlines()]
    values = np.arange(-2048, 2049)
    np.testing.assert_array_equal([int(r[0]) for r in rows],
                                  values.astype(np.float16).view(np.uint16))
    np.testing.assert_array_equal([float(r[1]) for r in rows], values)


def test_the_h100_run_script_parses_and_its_configurations_emit_and_simulate(tmp_path):
    script = Path(__file__).parents[1] / "scripts" / "run_on_h100.sh"
    if shutil.which("bash"):
        subprocess.run(["bash", "-n", str(script)], check=True)
    text = script.read_text()
    block = text[text.index("<<'EOF'\n") + 8:text.index("\nEOF\n")]
    cfgs = [line.split() for line in block.splitlines() if line.strip()]
    assert len(cfgs) >= 10
    for shape, dtype, acc, a, b, k in cfgs:
        man = build_manifest(shape, dtype, acc, a, b, int(k))
        assert simulate_wgmma(man, seed=1).ok
