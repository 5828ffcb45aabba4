"""The typed sm_100a manifest (:class:`verilayout.emit.tcgen05_manifest.Tcgen05Manifest`):
``manifest.json`` read back gives the same bytes and the same object, the sections read as the
file says, and a malformed file is a one-line error naming its field (``simulate``: exit 2)."""
from __future__ import annotations

import json

import pytest

from verilayout.cli.main import main
from verilayout.emit.cuda_wgmma import write_emission
from verilayout.emit.gemm_plan import Epilogue, SmemBudget, StageOperand, TmaBoxes
from verilayout.emit.tcgen05_gemm import emit_tcgen05_gemm
from verilayout.emit.tcgen05_manifest import Tcgen05Manifest
from verilayout.errors import LayoutError

CONFIGS = [("bf16", (128, 256, 64), {}), ("e4m3", (128, 64, 128), {"splits": 3}),
           ("f16", (128, 128, 64), {"out": "bf16", "bias": True, "activation": "gelu"}),
           ("tf32", (128, 64, 32), {"group_m": 4}), ("bf16", (256, 128, 64), {"ctas": 2}),
           ("e4m3", (256, 256, 128), {"ctas": 2, "out": "f16", "activation": "relu"})]


def _file(dtype="bf16", tile=(128, 128, 64), **opts) -> str:
    return emit_tcgen05_gemm(dtype, tile=tile, stages=4, **opts).files["manifest.json"]


@pytest.mark.parametrize("dtype,tile,opts", CONFIGS, ids=[f"{d}_{t[0]}x{t[1]}_{'_'.join(map(str, o.values()))}"
                                                        for d, t, o in CONFIGS])
def test_the_file_read_back_writes_the_same_bytes(dtype, tile, opts):
    text = _file(dtype, tile, **opts)
    man = Tcgen05Manifest.from_dict(json.loads(text))
    assert json.dumps(man.to_dict(), indent=1) + "\n" == text
    assert Tcgen05Manifest.from_dict(man.to_dict()) == man
    raw = json.loads(text)                      # the typed sections hold what the file says
    assert (man.bm, man.bn, man.bk, man.splits) == (raw["bm"], raw["bn"], raw["bk"], raw["splits"])
    assert man.swizzle == raw["swizzle"] == raw["tma"]["swizzle"]
    assert man.idesc.fields == raw["idesc"]["fields"] and man.layouts.d == raw["global"]["d"]
    assert (man.cta_pair is None) == ("cta_pair" not in raw)
    assert [o.status for o in man.obligations] == [o["status"] for o in raw["obligations"]]


def test_the_sections_are_the_sm90a_types_and_read_only():
    man = Tcgen05Manifest.from_dict(json.loads(_file(ctas=2, tile=(256, 128, 64))))
    assert isinstance(man.a, StageOperand) and isinstance(man.epilogue, Epilogue)
    assert isinstance(man.tma, TmaBoxes) and isinstance(man.smem, SmemBudget)
    # the pair: 128 rows of A and BN / 2 rows of B per CTA (each CTA's half of the 256 x 128 tile)
    assert (man.ctas, man.a_rows, man.b_rows) == (2, 128, 64)
    with pytest.raises(AttributeError):
        man.bm = 128                                            # type: ignore[misc]


def _edited(edit) -> dict:
    d = json.loads(_file())
    edit(d)
    return d


@pytest.mark.parametrize("edit, match", [
    (lambda d: d.pop("tmem"), "manifest: missing field 'tmem'$"),
    (lambda d: d["tmem"].pop("columns"), "manifest: missing field 'tmem.columns'$"),
    (lambda d: d.update(stages="4"), "manifest: field 'stages' is '4', expected an integer$"),
    (lambda d: d.update(splits=True), "manifest: field 'splits' is True, expected an integer$"),
    (lambda d: d["d_store"].update(box=32), "manifest: field 'd_store.box' is 32, expected a list$"),
    (lambda d: d["schedule"]["warps"].update(epilogue=[2, "3"]),
     r"manifest: field 'schedule.warps.epilogue\[1\]' is '3', expected an integer$"),
    (lambda d: d.update(extra=1), "manifest: unknown field 'extra'$"),
    (lambda d: d["barriers"].update(full_count=1), "manifest: unknown field 'barriers.full_count'$"),
    (lambda d: d["tma"].update(box_m=128), "manifest: unknown field 'tma.box_m'$"),
    (lambda d: d.pop("obligations"), "manifest: missing field 'obligations'$"),
    (lambda d: d.update(swizzle="64B"), "manifest: field 'swizzle' is '64B', but tma.swizzle is '128B'$"),
    (lambda d: d["idesc"]["fields"].update(n_dim=1), "manifest: field 'idesc.fields' is not the decoding of"),
    (lambda d: d.update(arch="sm_90a"), "not an sm_100a GEMM manifest"),
    (lambda d: d.update(splits=0), "manifest: splits 0 is not 1 to 16$"),
    (lambda d: d.update(a=[]), "manifest: field 'a' is \\[\\], expected an object$"),
])
def test_a_malformed_manifest_is_one_line_naming_the_field(edit, match):
    with pytest.raises(LayoutError, match=match) as e:
        Tcgen05Manifest.from_dict(_edited(edit))
    assert "\n" not in str(e.value)


def test_simulate_refuses_a_malformed_sm100_manifest_with_exit_2(tmp_path, capsys):
    e = emit_tcgen05_gemm("bf16", tile=(128, 128, 64), stages=4)
    d = json.loads(e.files["manifest.json"])
    d["tmem"]["ld_num"] = "32"
    write_emission(e, str(tmp_path))
    (tmp_path / "manifest.json").write_text(json.dumps(d, indent=1) + "\n")
    assert main(["simulate", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: manifest: field 'tmem.ld_num' is '32', expected an integer"]
