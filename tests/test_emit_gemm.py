"""`verilayout emit gemm`: the emitted Hopper GEMM compiles for sm_90a without spills, its
compiled index functions agree with derivations written here, and the CLI's exit codes.

Oracles (none is the renderer's own output):
* ptxas (nvcc -cubin -Xptxas -v): spill bytes, registers, warnings of every emitted kernel;
* the PTX ISA's wgmma D-fragment figure for m64nNk* f32 ("Matrix fragments for wgmma .m64nNk*",
  accumulator D): thread t = 32 * warp + lane, element e holds row 16 * warp + lane / 4 +
  8 * ((e / 2) % 2), column 8 * (e / 4) + 2 * (lane % 4) + e % 2;
* the PTX ISA's shared-memory matrix descriptor ("Matrix Descriptor Format"): start address
  (addr & 0x3FFFF) >> 4 in bits 0-13, LBO in bits 16-29, SBO in bits 32-45, the swizzle mode in
  bits 62-63 (1: 128B, 2: 64B, 3: 32B); for a K-major swizzled operand the 8-row core-matrix
  groups lie 8 * swizzle-bytes apart (SBO) and LBO is unused (1, as CUTLASS's make_gmma_desc
  writes it); the start of K-block kb of rows r0.. in a stage written by TMA boxes of
  (swizzle bytes) x rows placed at box * rows * swizzle-bytes is derived below.
nvcc missing: the compile tests skip locally and fail under VERILAYOUT_REQUIRE_ORACLES=1.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from verilayout.frontends.names import parse_tile
from verilayout.cli.main import main
from verilayout.dtypes import bytes_of
from verilayout.emit.cuda_gemm import emit_gemm
from verilayout.emit.cuda_wgmma import write_emission

NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc (CUDA 12 or newer) is not installed; "
                                "the sm_90a compile check needs it")
SM90A = ["-std=c++17", "-gencode=arch=compute_90a,code=sm_90a"]
WGMMA_K = {"f16": 16, "bf16": 16, "e4m3": 32, "tf32": 8}     # PTX ISA: K of wgmma per type


def _tiles(dtype):
    """Three tile shapes per dtype: 128x256 (4 stages), 128x128 (6), 64x128 with half the K (5)."""
    k = 128 // bytes_of(dtype)
    return [(f"128x256x{k}", 4), (f"128x128x{k}", 6), (f"64x128x{k // 2}", 5)]


CONFIGS = [(dt, tile, st) for dt in ("f16", "bf16", "e4m3", "tf32") for tile, st in _tiles(dt)]


def _emit(root, dtype, tile, stages):
    e = emit_gemm(dtype, tile=None if tile is None else parse_tile(tile), stages=stages)
    d = root / e.manifest["tag"]
    write_emission(e, str(d))
    return e.manifest, d


def _run_parallel(cmds, jobs=2, timeout=300):
    """Run commands two at a time (the machine has two cores); (returncode, output) each."""
    results = [None] * len(cmds)
    running = []
    for i, cmd in enumerate(cmds):
        running.append((i, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                            text=True)))
        if len(running) >= jobs or i == len(cmds) - 1:
            while running:
                j, p = running.pop(0)
                out, _ = p.communicate(timeout=timeout)
                results[j] = (p.returncode, out)
    return results


# ----- ptxas: 12 kernels compile for sm_90a with no spills ---------------------------------------

@needs_nvcc
def test_every_dtype_at_three_tiles_compiles_for_sm_90a_without_spills(tmp_path):
    emitted = [_emit(tmp_path, *c) for c in CONFIGS]
    cmds = [[NVCC, *SM90A, "-cubin", "-Xptxas", "-v", "-o", str(d / "kernel.cubin"),
             str(d / "kernel.cu")] for _, d in emitted]
    for (man, _), (rc, out) in zip(emitted, _run_parallel(cmds)):
        assert rc == 0, f"{man['tag']}:\n{out}"
        spills = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", out)
        assert spills == [("0", "0")], f"{man['tag']}: {spills}\n{out}"
        regs = int(re.search(r"Used (\d+) registers", out)[1])
        # launch bounds (threads, 1 CTA/SM): 65536 registers / threads, in steps of 8, at most 255
        limit = min(255, 65536 // man["threads"] // 8 * 8)
        assert regs <= limit, (man["tag"], regs, limit)
        assert "warning" not in out.lower(), f"{man['tag']}:\n{out}"   # e.g. wgmma serialization


@needs_nvcc
def test_the_host_program_builds_for_every_dtype(tmp_path):
    emitted = [_emit(tmp_path, dt, None, 4) for dt in ("f16", "bf16", "e4m3", "tf32")]
    cmds = [[NVCC, "-O1", *SM90A, "-o", str(d / "gemm"), str(d / "main.cu"), "-ldl"]
            for _, d in emitted]
    for (man, d), (rc, out) in zip(emitted, _run_parallel(cmds)):
        assert rc == 0, f"{man['tag']}:\n{out}"
        assert (d / "gemm").exists()


# ----- the compiled index functions against derivations ------------------------------------------

def _fragment_ref(t, e):
    """PTX ISA wgmma f32 D fragment (see the module docstring)."""
    warp, lane = divmod(t, 32)
    return 16 * warp + lane // 4 + 8 * ((e // 2) % 2), 8 * (e // 4) + 2 * (lane % 4) + e % 2


SWIZZLE_MODE = {128: 1, 64: 2, 32: 3}       # descriptor bits 62-63


def _desc_ref(man, smem_base, stage, operand, block, kb):
    """The descriptor of K-block kb of 64-row block `block` of A (or all of B) at stage `stage`."""
    eb, span = man["elem_bytes"], {"128B": 128, "64B": 64, "32B": 32}[man["swizzle"]]
    rows = man["bm"] if operand == "a" else man["bn"]
    stage_bytes = rows * man["bk"] * eb
    start_of_stage = (0 if operand == "a" else man["stages"] * man["bm"] * man["bk"] * eb) \
        + stage * stage_bytes
    kbyte = kb * WGMMA_K[man["dtype"]] * eb
    box, within = divmod(kbyte, span)            # TMA box of K, byte inside its swizzled row
    addr = smem_base + start_of_stage + box * rows * span + block * 64 * span + within
    start = (addr & 0x3FFFF) >> 4
    return start | (1 << 16) | ((8 * span >> 4) << 32) | (SWIZZLE_MODE[span] << 62)


def _probe_program(emitted):
    """A host program printing the compiled d_row/d_col, desc_a/desc_b and tile_coords."""
    inc = "".join(f'#include "{d / "kernel.cu"}"\n' for _, d in emitted)
    body = []
    for man, _ in emitted:
        ns = f"vl_{man['tag']}"
        body += [f'  std::printf("config {man["tag"]}\\n");',
                 f"  for (uint32_t t = 0; t < 128; ++t) for (uint32_t e = 0; e < {man['bn'] // 2}; ++e)",
                 f'    std::printf("f %u %u %u %u\\n", t, e, {ns}::d_row(t, e), {ns}::d_col(t, e));',
                 "  for (uint32_t base : {0x400u, 0x1000400u, 0x3c00u})",
                 f"    for (uint32_t s = 0; s < {man['stages']}; ++s)",
                 f"      for (uint32_t kb = 0; kb < {man['k_blocks']}; ++kb) {{",
                 f"        for (uint32_t w = 0; w < {man['consumers']}; ++w)",
                 f'          std::printf("a %u %u %u %u %llu\\n", base, s, w, kb, '
                 f"(unsigned long long){ns}::desc_a(base, s, w, kb));",
                 f'        std::printf("b %u %u 0 %u %llu\\n", base, s, kb, '
                 f"(unsigned long long){ns}::desc_b(base, s, kb));",
                 "      }",
                 "  for (uint32_t tm_n : {1u, 3u, 8u, 13u}) for (uint32_t tn_n : {1u, 2u, 7u})",
                 "    for (uint32_t t = 0; t < tm_n * tn_n; ++t) {",
                 "      uint32_t tm, tn;",
                 f"      {ns}::tile_coords(t, tm_n, tn_n, tm, tn);",
                 '      std::printf("t %u %u %u %u %u\\n", tm_n, tn_n, t, tm, tn);',
                 "    }"]
    return ("#include <cstdio>\n" + inc + "int main() {\n" + "\n".join(body) +
            "\n  return 0;\n}\n")


@needs_nvcc
def test_compiled_fragment_descriptors_and_scheduler_match_the_derivations(tmp_path):
    emitted = [_emit(tmp_path, "f16", None, 4), _emit(tmp_path, "e4m3", "128x128x128", 6),
               _emit(tmp_path, "tf32", "64x128x16", 5), _emit(tmp_path, "bf16", "128x64x32", 3),
               _emit(tmp_path, "bf16", "128x128x128", 3)]   # two TMA boxes of K per stage
    src = tmp_path / "probe.cu"
    src.write_text(_probe_program(emitted))
    exe = tmp_path / "probe"
    (rc, out), = _run_parallel([[NVCC, *SM90A, "-o", str(exe), str(src)]])
    assert rc == 0, out
    text = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    by_tag = {m["tag"]: m for m, _ in emitted}
    man, seen, counts = None, {}, {"f": 0, "a": 0, "b": 0, "t": 0}
    for line in text.splitlines():
        kind, *v = line.split()
        if kind == "config":
            man = by_tag[v[0]]
            continue
        counts[kind] += 1
        if kind == "f":
            t, e, r, c = map(int, v)
            assert (r, c) == _fragment_ref(t, e), (man["tag"], t, e)
        elif kind in "ab":
            base, s, w, kb, got = map(int, v)
            want = _desc_ref(man, base, s, kind, w, kb)
            assert got == want, (man["tag"], kind, hex(base), s, w, kb, hex(got), hex(want))
        else:
            tm_n, tn_n, t, tm, tn = map(int, v)
            assert 0 <= tm < tm_n and 0 <= tn < tn_n
            seen.setdefault((man["tag"], tm_n, tn_n), set()).add((tm, tn))
    # every tile visited exactly once: as many distinct (tm, tn) as tiles
    assert all(len(s) == a * b for (_, a, b), s in seen.items())
    assert counts["f"] == sum(128 * m["bn"] // 2 for m, _ in emitted)
    assert counts["a"] == sum(3 * m["stages"] * m["k_blocks"] * m["consumers"] for m, _ in emitted)


def test_the_cluster_rank_bit_never_reaches_lbo():
    """A shared address with bit 24 set (a CTA rank under a cluster launch) gives the same
    descriptor as without it: the derivation keeps 18 address bits."""
    man = emit_gemm("f16").manifest
    assert _desc_ref(man, 0x1000400, 1, "a", 1, 3) == _desc_ref(man, 0x400, 1, "a", 1, 3)


# ----- the CLI ------------------------------------------------------------------------------------

def _cli(capsys, *argv):
    try:
        rc = main(list(argv))
    except SystemExit as e:          # argparse's own errors (bad choice, bad integer)
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def test_emit_gemm_writes_the_directory_with_defaults(capsys, tmp_path):
    rc, out, err = _cli(capsys, "emit", "gemm", "--dtype", "bf16", "-o", str(tmp_path))
    assert rc == 0 and err == ""
    assert {p.name for p in tmp_path.iterdir()} == {"kernel.cu", "main.cu", "manifest.json",
                                                      "Makefile", "README.md"}
    # default tile 128 x 256 x (128 bytes of K) = 64 bf16, 4 stages, 2 consumers + 1 producer
    assert "tile 128x256x64, 4 stages" in out and "384 threads" in out
    assert re.search(r"obligations: (\d+) of \1 proved", out)
    head = (tmp_path / "kernel.cu").read_text().split("#include")[0]
    assert head.count("[proved") == int(re.search(r"obligations: (\d+) of", out)[1])


@pytest.mark.parametrize("argv, message", [
    (["--dtype", "f64"], "invalid choice"),
    (["--dtype", "f16", "--tile", "128x256"], "expected BMxBNxBK"),
    (["--dtype", "f16", "--tile", "96x256x64"], "BM 96"),
    (["--dtype", "f16", "--tile", "128x250x64"], "BN 250"),
    (["--dtype", "f16", "--tile", "128x256x24"], "BK 24"),
    (["--dtype", "f16", "--stages", "1"], "--stages 1"),
    (["--dtype", "f16", "--stages", "x"], "--stages"),
    (["--dtype", "f16", "--stages", "6"], "exceed"),
    (["--dtype", "f16", "--arch", "sm_89"], "--arch"),          # sm_100a is written since issue 24
])
def test_bad_input_is_one_error_line_and_exit_2(capsys, tmp_path, argv, message):
    rc, out, err = _cli(capsys, "emit", "gemm", *argv, "-o", str(tmp_path / "x"))
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error:") and message in err, err
    assert not (tmp_path / "x").exists()


def test_help_has_examples(capsys):
    with pytest.raises(SystemExit) as e:
        main(["emit", "gemm", "--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0
    assert "verilayout emit gemm --dtype f16 -o" in out and "--stages" in out


def test_emit_gemm_json(capsys, tmp_path):
    rc, out, err = _cli(capsys, "emit", "gemm", "--dtype", "e4m3", "--tile", "128x128x128",
                        "--stages", "6", "-o", str(tmp_path), "--json")
    doc = json.loads(out)
    assert rc == 0 and err == ""
    # e4m3: 128 bytes of K per stage -> one 128-byte swizzle row (PTX Table: widest swizzle)
    assert doc["tile"] == [128, 128, 128] and doc["stages"] == 6 and doc["swizzle"] == "128B"
    assert doc["instruction"] == "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"
    assert {o["status"] for o in doc["obligations"]} == {"proved"}


# ----- the renderer refuses what is not proved; the H100 script ---------------------------------

def test_an_unproved_obligation_writes_no_kernel():
    from verilayout.emit.cuda_gemm import render_gemm_cuda
    from verilayout.emit.gemm_plan import build_gemm_manifest
    from verilayout.errors import LayoutError
    man = build_gemm_manifest("f16", tile=(128, 128, 64), stages=3)
    man["obligations"][2]["status"] = "unknown"
    with pytest.raises(LayoutError, match="obligation not proved"):
        render_gemm_cuda(man)


SCRIPT = Path(__file__).parents[1] / "scripts" / "run_on_h100.sh"


def test_the_h100_script_emits_the_tested_gemm_set():
    if shutil.which("bash"):
        subprocess.run(["bash", "-n", str(SCRIPT)], check=True)
    text = SCRIPT.read_text()
    block = text[text.index("<<'EOF2'\n") + 9:text.index("\nEOF2\n")]
    cfgs = [(dt, tile, int(st)) for dt, tile, st in (ln.split() for ln in block.splitlines() if ln.strip())]
    assert sorted(cfgs) == sorted(CONFIGS)
    # the GPU step runs no python: nothing after the --emit branch calls it
    run_part = text[text.index('echo "now carry'):]
    assert "python" not in run_part.lower().replace("no python", "")


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is needed to run the script "
                    "(optional tool)")
def test_the_h100_script_without_a_gpu_says_so_and_exits_2(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "nvcc").write_text("#!/bin/sh\nexit 0\n")
    (fake / "nvcc").chmod(0o755)
    env = {"PATH": f"{fake}:/usr/bin:/bin", "HOME": str(tmp_path)}
    r = subprocess.run(["bash", str(SCRIPT), str(tmp_path)], capture_output=True, text=True,
                       env=env, timeout=60)
    assert r.returncode == 2 and r.stderr.startswith("error:") and "GPU" in r.stderr, r.stderr


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is needed to run the script "
                    "(optional tool)")
def test_the_h100_sweep_prints_each_shape_and_the_geometric_mean(tmp_path):
    """The GPU step of --sweep with a stand-in nvcc (its 'gemm' prints what main.cu prints) and a
    stand-in nvidia-smi: per shape the TFLOP/s and % of cuBLASLt, then the geometric mean:
    sqrt(100 * 81) = 90.0 for bf16, and 64.0 for the one e4m3 shape."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "nvidia-smi").write_text("#!/bin/sh\ncase \"$*\" in *compute_cap*) echo 9.0;; "
                                     "*) echo 'NVIDIA H100, 1';; esac\n")
    (fake / "nvcc").write_text(
        "#!/bin/sh\nout=''\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n"
        "[ -z \"$out\" ] && { echo 'Cuda compilation tools, release 13.0'; exit 0; }\n"
        "pct=$(cat \"$(dirname \"$out\")/pct\")\n"
        "printf '#!/bin/sh\\necho PASS reference checks\\necho \"verilayout $1 x $2 x $3: 1.0 ms, "
        "500.0 TFLOP/s\"\\necho \"cuBLASLt $1 x $2 x $3: 1.0 ms, 600.0 TFLOP/s\"\\n"
        "echo \"verilayout / cuBLAS: %s %% (outputs differing from cuBLAS: 0 of 4)\"\\n' \"$pct\" "
        ">\"$out\"\nchmod +x \"$out\"\n")
    for f in ("nvidia-smi", "nvcc"):
        (fake / f).chmod(0o755)
    sweep = tmp_path / "sweep"
    for name, pct in (("sweep_bf16_16x4096x4096", "100.0"), ("sweep_bf16_2048x2048x2048", "81.0"),
                      ("sweep_e4m3_2048x2048x2048", "64.0")):
        d = sweep / name
        d.mkdir(parents=True)
        for f in ("kernel.cu", "main.cu"):
            (d / f).write_text("")
        (d / "manifest.json").write_text('{"tag": "gemm_%s"}' % name)
        (d / "shape").write_text(name.split("_")[2].replace("x", " ") + "\n")
        (d / "pct").write_text(pct)
    env = {"PATH": f"{fake}:/usr/bin:/bin", "HOME": str(tmp_path)}
    r = subprocess.run(["bash", str(SCRIPT), "--sweep", str(sweep)], capture_output=True, text=True,
                       env=env, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "16x4096x4096" in r.stdout and "500.0" in r.stdout and "600.0" in r.stdout
    assert re.search(r"geometric mean bf16\s+90\.0 % of cuBLASLt over 2 shapes; below 90%: "
                     r"bf16_2048x2048x2048", r.stdout), r.stdout
    assert re.search(r"geometric mean e4m3\s+64\.0 %", r.stdout)
    assert re.search(r"geometric mean all\s+\S+ % of cuBLASLt over 3 shapes", r.stdout)
