"""A TTGIR cut inside the table of location aliases MLIR prints after the module (``#locN = loc(...)``
lines) closes every bracket, so the bracket count took it for a whole kernel: the audit ran with
the lost aliases' ops unplaced (their PTX twins reported as ``unchecked`` for reasons such as "no
ttng.warp_group_dot of the TTGIR has this instruction's source line") and exited 0. A harvest or a
copy killed while writing leaves such files (seen here on a torchao 0.18 kernel cut at 16,000 of
17,065 bytes). Now a location alias used but never defined makes the file bad input: one line naming
it, exit 2.

The oracle for "a prefix drops a used alias" is computed in the test, line by line (a use is
``#loc`` + word characters anywhere, a definition a line starting ``#locN = ``).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from verilayout.audit.inputs import missing_part

ROOT = Path(__file__).resolve().parents[1]
ATT = ROOT / "tests" / "corpus" / "cuda90" / "attention_fwd_d64_128x64_w4_s2"
ENV = dict(os.environ, PYTHONPATH=str(ROOT))


def drops_a_used_alias(prefix: str) -> bool:
    lines = prefix.split("\n")
    defined = {ln.split(" = ", 1)[0] for ln in lines if ln.startswith("#loc") and " = " in ln}
    used = {m for ln in lines for m in re.findall(r"#loc\w*", ln)}
    return bool(used - defined)


def test_every_cut_in_the_location_table_is_refused():
    text = ATT.with_suffix(".ttgir").read_text()
    assert missing_part(text, "ttgir") is None
    lines = text.split("\n")
    end = max(i for i, ln in enumerate(lines) if ln.startswith("}"))      # the module's closing line
    table = [i for i in range(end + 1, len(lines)) if lines[i].startswith("#loc")]
    assert len(table) > 5, "the corpus kernel prints a location table after its module"
    refused = 0
    for k in range(end + 1, len(lines)):
        for prefix in ("\n".join(lines[:k]), "\n".join(lines[:k]) + "\n#lo"):
            if drops_a_used_alias(prefix):
                assert missing_part(prefix, "ttgir") is not None, k
                refused += 1
    assert refused >= len(table)


def test_cut_location_table_is_exit_2_with_one_line(tmp_path):
    text = ATT.with_suffix(".ttgir").read_text()
    lines = text.split("\n")
    end = max(i for i, ln in enumerate(lines) if ln.startswith("}"))
    cut = "\n".join(lines[: end + 3]) + "\n#lo"
    assert drops_a_used_alias(cut)
    (tmp_path / "k.ttgir").write_text(cut)
    r = subprocess.run([sys.executable, "-m", "verilayout.cli", "audit", str(tmp_path / "k.ttgir")],
                       capture_output=True, cwd=ROOT, env=ENV, timeout=120)
    err = r.stderr.decode()
    assert r.returncode == 2 and "Traceback" not in err
    errs = [ln for ln in err.splitlines() if ln.strip()]
    assert len(errs) == 1 and errs[0].startswith("error: ") and "k.ttgir" in errs[0] and "#loc" in errs[0]
