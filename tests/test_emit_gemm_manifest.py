"""The typed GEMM manifest (:class:`verilayout.emit.gemm_plan.GemmManifest`): ``manifest.json``
read back gives the same bytes, and a malformed one is a one-line error naming its field."""
from __future__ import annotations

import json

import pytest

from verilayout.emit.cuda_gemm import emission_of
from verilayout.emit.gemm_plan import ClusterShape, Epilogue, GemmManifest, build_gemm_manifest
from verilayout.emit.tcgen05_gemm import build_tcgen05_manifest
from verilayout.errors import LayoutError

CONFIGS = [
    lambda: build_gemm_manifest("f16", tile=(64, 64, 64), stages=2),
    lambda: build_gemm_manifest("bf16", tile=(128, 64, 64), stages=3, cluster=(2, 1)),
    lambda: build_gemm_manifest("e4m3", tile=(64, 64, 128), stages=2, splits=3, out="bf16",
                                bias=True, activation="gelu"),
    lambda: build_tcgen05_manifest("bf16", tile=(128, 64, 64), stages=3, splits=2).to_dict(),
    lambda: build_tcgen05_manifest("f16", tile=(128, 64, 64), stages=2, out="f16",
                                   activation="silu").to_dict(),
]


@pytest.mark.parametrize("build", CONFIGS, ids=["f16", "c2x1", "splitk_epi", "sm100_k2", "sm100_epi"])
def test_the_typed_manifest_gives_back_the_same_json(build):
    man = build()
    text = json.dumps(man, indent=1) + "\n"
    g = GemmManifest.from_dict(json.loads(text))
    assert json.dumps(g.to_dict(), indent=1) + "\n" == text
    assert (g.dtype, g.bm, g.bn, g.bk, g.stages) == (man["dtype"], man["bm"], man["bn"], man["bk"],
                                                      man["stages"])
    assert g.epilogue.spec == (man["epilogue"]["out"], man["epilogue"]["bias"],
                               man["epilogue"]["activation"])
    assert g.cluster.shape == ((man["cluster"]["m"], man["cluster"]["n"]) if "cluster" in man
                               else (1, 1))


def test_the_written_file_is_what_the_typed_manifest_writes():
    man = build_gemm_manifest("tf32", tile=(64, 32, 32), stages=2, out="f16", bias=True,
                              activation="silu")
    text = emission_of(man).files["manifest.json"]
    assert json.dumps(GemmManifest.from_dict(json.loads(text)).to_dict(), indent=1) + "\n" == text


def test_the_typed_manifest_is_read_only():
    g = GemmManifest.from_dict(build_gemm_manifest("f16", tile=(64, 64, 64), stages=2))
    with pytest.raises(AttributeError):
        g.bm = 128                                              # type: ignore[misc]
    with pytest.raises(TypeError):
        g.sections["tma"]["box_k"] = 1                          # type: ignore[index]
    assert isinstance(g.epilogue, Epilogue) and isinstance(g.cluster, ClusterShape)


@pytest.mark.parametrize("edit, match", [
    (lambda m: m.pop("bm"), "manifest: missing field 'bm'"),
    (lambda m: m.update(stages="4"), "manifest: field 'stages' is '4', expected an integer"),
    (lambda m: m.update(a=[]), "manifest: field 'a' is [], expected an object"),
    (lambda m: m["b"].pop("layout"), "manifest: missing field 'b.layout'"),
    (lambda m: m["cluster"].update(m=True), "manifest: field 'cluster.m' is True, expected an integer"),
    (lambda m: m["epilogue"].update(activation="tanh"), "is not an output type and activation"),
])
def test_a_malformed_manifest_is_one_line_naming_the_field(edit, match):
    man = build_gemm_manifest("f16", tile=(64, 64, 64), stages=2)
    edit(man)
    with pytest.raises(LayoutError) as e:
        GemmManifest.from_dict(man)
    assert match in str(e.value) and "\n" not in str(e.value)


def test_simulate_names_the_bad_field_of_an_emitted_gemm(tmp_path, capsys):
    from verilayout.cli import main
    from verilayout.emit.cuda_wgmma import write_emission
    d = tmp_path / "g"
    write_emission(emission_of(build_gemm_manifest("f16", tile=(64, 64, 64), stages=2)), str(d))
    man = json.loads((d / "manifest.json").read_text())
    del man["consumers"]
    (d / "manifest.json").write_text(json.dumps(man))
    assert main(["simulate", str(d)]) == 2
    err = capsys.readouterr().err
    assert err == "error: manifest: missing field 'consumers'\n"
