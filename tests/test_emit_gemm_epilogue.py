"""The fused epilogue of ``emit gemm``: D = out(act(acc + bias[col])) for out f32 / f16 / bf16,
with or without bias, activation none / ReLU / GELU (tanh form) / SiLU; verified on the PTX by
:mod:`verilayout.simulate.gemm_check` (every stored element is the value of the accumulator
element the PTX D fragment puts there, with its column's bias, activation and rounding).

The expected values of the checks come from the activations' definitions (float64, numpy) and
IEEE round-to-nearest-even, not from the kernel; the bias the run loads is ``(col mod 5) - 2``.
"""
from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

from verilayout.frontends.names import parse_tile
from verilayout.emit.cuda_gemm import emit_gemm
from verilayout.emit.gemm_plan import GemmManifest
from verilayout.errors import LayoutError
from verilayout.simulate.gemm_check import act_reference, check_gemm_source, round_out

NVCC = shutil.which("nvcc") or (os.path.exists("/usr/local/cuda/bin/nvcc") and "/usr/local/cuda/bin/nvcc")
needs_nvcc = pytest.mark.skipif(not NVCC, reason="nvcc (CUDA 12 or newer) is not installed")
TILE = ("bf16", "128x64x64", 3)


def _emit(**kw):
    e = emit_gemm(TILE[0], tile=parse_tile(TILE[1]), stages=TILE[2], **kw)
    return e.manifest, e.files["kernel.cu"]


def _failures(man, src):
    r = check_gemm_source(GemmManifest.from_dict(man), src, host=False)
    return r, [c for c in r.checks if c.status != "proved"]


def test_the_reference_activations_match_their_definitions():
    """Hand values: GELU(1) = 0.5 (1 + tanh(sqrt(2/pi) 1.044715)) = 0.8412, SiLU(-1) =
    -1 / (1 + e) = -0.2689, ReLU(-3) = 0; bf16(1 + 2^-8) ties to 1.0, f16(2049) to 2048."""
    assert round(float(act_reference("gelu", np.array([1.0]))[0]), 4) == 0.8412
    assert round(float(act_reference("silu", np.array([-1.0]))[0]), 4) == -0.2689
    assert float(act_reference("relu", np.array([-3.0]))[0]) == 0.0
    assert round_out("bf16", np.array([1.0 + 2 ** -8])).tolist() == [1.0]
    assert round_out("f16", np.array([2049.0])).tolist() == [2048.0]


@needs_nvcc
@pytest.mark.parametrize("kw", [dict(out="bf16", bias=True, activation="gelu"),
                                dict(out="f16", activation="silu"),
                                dict(out="f32", bias=True, activation="relu")],
                         ids=["bf16_bias_gelu", "f16_silu", "f32_bias_relu"])
def test_fused_epilogues_pass_every_independent_check(kw):
    man, src = _emit(**kw)
    r, bad = _failures(man, src)
    assert not bad, [c.to_dict() for c in bad]
    msgs = [c.message for c in r.checks if c.check == "d-store"]
    assert msgs and all("each the value" in m for m in msgs)
    assert any(c.check == "spills" and "0 bytes spilled" in c.message for c in r.checks)


@needs_nvcc
def test_split_k_with_an_epilogue_applies_it_once_in_the_reduction():
    man, src = _emit(out="bf16", bias=True, activation="silu", splits=2)
    r, bad = _failures(man, src)
    assert not bad, [c.to_dict() for c in bad]
    red = [c for c in r.checks if c.check == "split-k" and "reduction" in c.message]
    assert red and "bf16 + bias, silu" in red[0].message


@needs_nvcc
def test_planted_bias_of_the_next_column_is_caught():
    man, src = _emit(out="bf16", bias=True, activation="relu")
    old = "  if (col < uint32_t(N)) v += bias[col];"
    assert old in src
    _, bad = _failures(man, src.replace(old, "  if (col < uint32_t(N)) v += bias[col ^ 1u];"))
    assert any(c.check == "d-store" for c in bad), bad


@needs_nvcc
def test_planted_swapped_halves_of_the_16_bit_pair_are_caught():
    man, src = _emit(out="f16", activation="none", bias=True)
    old = '"=r"(x) : "f"(v1), "f"(v0));'
    assert old in src
    _, bad = _failures(man, src.replace(old, '"=r"(x) : "f"(v0), "f"(v1));'))
    assert any(c.check == "d-store" and "is stored at D" in c.message for c in bad), bad


@needs_nvcc
def test_planted_missing_activation_is_caught():
    man, src = _emit(out="bf16", activation="gelu")
    start = src.index("__device__ __forceinline__ float activation(float x) {")
    end = src.index("}", start)
    bad_src = src[:start] + "__device__ __forceinline__ float activation(float x) {\n  return x;\n" + src[end:]
    _, bad = _failures(man, bad_src)
    assert any(c.check == "d-store" for c in bad), bad


@needs_nvcc
def test_planted_reduction_epilogue_skipped_is_caught():
    man, src = _emit(out="f32", bias=True, activation="relu", splits=2)
    old = "store_one(D + i, epilogue(acc, bias, uint32_t(i % size_t(N)), N));"
    assert old in src
    _, bad = _failures(man, src.replace(old, "store_one(D + i, acc);"))
    assert any(c.check == "split-k" and "expected" in c.message for c in bad), bad


def test_bad_epilogue_options_are_layout_errors():
    with pytest.raises(LayoutError, match="--out"):
        emit_gemm("bf16", tile=(128, 64, 64), stages=3, out="f8")
    with pytest.raises(LayoutError, match="--activation"):
        emit_gemm("bf16", tile=(128, 64, 64), stages=3, activation="tanh")


def test_cli_epilogue_options(capsys, tmp_path):
    import json
    from verilayout.cli import main
    rc = main(["emit", "gemm", "--dtype", "bf16", "--tile", "128x64x64", "--stages", "3",
               "--out-dtype", "bf16", "--bias", "--activation", "silu", "--json",
               "-o", str(tmp_path / "g")])
    d = json.loads(capsys.readouterr().out)
    assert rc == 0 and d["epilogue"]["out"] == "bf16" and d["epilogue"]["activation"] == "silu"
    src = (tmp_path / "g" / "kernel.cu").read_text()
    assert "bf16(silu(acc + bias[col]))" in src and "cvt.rn.bf16x2.f32" in src


@needs_nvcc
def test_the_host_program_with_an_epilogue_builds(tmp_path):
    e = emit_gemm("f16", tile=(128, 64, 64), stages=3, out="f16", bias=True, activation="gelu",
                  splits=2)
    for name, text in e.files.items():
        (tmp_path / name).write_text(text)
    r = subprocess.run([NVCC, "-std=c++17", "-gencode=arch=compute_90a,code=sm_90a", "-o",
                        str(tmp_path / "gemm"), str(tmp_path / "main.cu"), "-ldl"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]


@needs_nvcc
def test_planted_bias_read_beyond_n_is_caught():
    """The ragged run has an odd N: without the guard the pair's second column reads bias[N]."""
    man, src = _emit(out="f32", bias=True, activation="none")
    old = "  if (col < uint32_t(N)) v += bias[col];"
    _, bad = _failures(man, src.replace(old, "  v += bias[col];"))
    assert any(c.check == "d-store" and "beyond N" in c.message for c in bad), bad
