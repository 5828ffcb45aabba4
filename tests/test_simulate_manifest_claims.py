"""A GEMM manifest read by ``verilayout simulate`` is the emitter's claim field for field: a field
the checks never read (``k_blocks``, ``threads``, ``elem_bytes``, the tag) or an emitter parameter
out of range is one line naming it, exit 2, before anything is compiled (was: an edited derived
field passed silently, a zero tile extent raised ZeroDivisionError)."""
from __future__ import annotations

import json

import pytest

from verilayout.cli.main import main
from verilayout.emit.cuda_wgmma import write_emission
from verilayout.emit.cuda_gemm import emit_gemm
from verilayout.emit.tcgen05_gemm import emit_tcgen05_gemm
from verilayout.errors import LayoutError
from verilayout.simulate.replay import as_emitted

EMITTERS = {
    "sm90a": lambda: emit_gemm("bf16", tile=(128, 256, 64), stages=4),
    "sm90a_pingpong": lambda: emit_gemm("f16", tile=(64, 128, 64), stages=3, schedule="pingpong"),
    "sm100a": lambda: emit_tcgen05_gemm("bf16", tile=(128, 128, 64), stages=4),
    "sm100a_pair": lambda: emit_tcgen05_gemm("bf16", tile=(256, 128, 64), stages=4, ctas=2),
}


@pytest.mark.parametrize("kind", EMITTERS)
def test_every_emitted_manifest_is_its_own_claim(kind):
    as_emitted(json.loads(EMITTERS[kind]().files["manifest.json"]))


# (field, value written, what the one line must say). BK = 64 bf16/f16 elements with K = 16 per
# instruction (PTX ISA wgmma/tcgen05 kind::f16 shapes) is 64 / 16 = 4 K-blocks: 5 is not it.
EDITS = [("bk", 0, "field 'bk' is 0, expected an integer 1 to 65536"),
         ("stages", -1, "field 'stages' is -1, expected an integer 1 to 65536"),
         ("group_m", 2 ** 70, "field 'group_m' is 1180591620717411303424, expected an integer 1 to 65536"),
         ("k_blocks", 5, "field 'k_blocks' is 5, but the emitter writes 4 for its parameters"),
         ("elem_bytes", 4, "field 'elem_bytes' is 4, but the emitter writes 2 for its parameters"),
         ("tag", "gemm", "field 'tag' is 'gemm', but the emitter writes")]


@pytest.mark.parametrize("kind", EMITTERS)
@pytest.mark.parametrize("field,value,says", EDITS, ids=[e[0] + "_" + str(e[1])[:6] for e in EDITS])
def test_simulate_names_the_edited_field_with_exit_2(kind, field, value, says, tmp_path, capsys):
    e = EMITTERS[kind]()
    write_emission(e, str(tmp_path))
    d = json.loads(e.files["manifest.json"])
    d[field] = value
    (tmp_path / "manifest.json").write_text(json.dumps(d, indent=1) + "\n")
    assert main(["simulate", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0], err
    with pytest.raises(LayoutError, match=field):
        as_emitted(d)
