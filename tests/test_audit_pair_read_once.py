"""A TTGIR+PTX pair goes through the audit reading each text once (docs/architecture.md, "A
TTGIR+PTX pair through the audit"): the PTX file is opened and parsed once, the TTGIR beside it is
parsed and audited once for both its own report and the PTX audit's plan. Counted by wrapping the
readers; the expected counts are the drawing's."""
import builtins
import shutil
from collections import Counter
from pathlib import Path

from verilayout.audit import audit_paths
from verilayout.audit import ptx as ptx_audit
from verilayout.audit import ttgir as ttgir_audit

ROOT = Path(__file__).resolve().parents[1]
PAIR = ROOT / "tests" / "corpus" / "cuda90" / "matmul_bf16_128x128x64_w4_s3"


def test_each_text_of_a_pair_is_read_once(tmp_path, monkeypatch):
    for ext in (".ptx", ".ttgir"):
        shutil.copy(str(PAIR) + ext, tmp_path / ("k" + ext))
    opened: Counter = Counter()
    parsed: Counter = Counter()
    real_open, real_ptx, real_ttgir = builtins.open, ptx_audit.parse_ptx, ttgir_audit.parse_module

    def counting_open(file, *a, **k):
        opened[str(file)] += 1
        return real_open(file, *a, **k)

    monkeypatch.setattr(builtins, "open", counting_open)
    monkeypatch.setattr(ptx_audit, "parse_ptx", lambda t: parsed.update(["ptx"]) or real_ptx(t))
    monkeypatch.setattr(ttgir_audit, "parse_module", lambda t: parsed.update(["ttgir"]) or real_ttgir(t))
    rep = audit_paths([str(tmp_path)])
    assert [Path(f.path).name for f in rep.files] == ["k.ptx", "k.ttgir"]
    assert all(f.checks for f in rep.files)
    assert opened[str(tmp_path / "k.ptx")] == 1
    assert parsed == Counter({"ptx": 1, "ttgir": 1})
