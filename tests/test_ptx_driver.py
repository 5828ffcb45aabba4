"""The PTX audit has one driver (docs/architecture.md, "A TTGIR+PTX pair through the audit"):
``audit/ptx`` reads a PTX file once, reads its plan once (the TTGIR beside it, or a kept CuTe-DSL
MLIR), builds one ``PtxContext`` and calls each check module's entry point with it. Counted by
wrapping the readers and the entry points; the expected counts are the drawing's."""
import builtins
import gzip
import shutil
from collections import Counter
from pathlib import Path

from verilayout.audit import audit_paths, ptx_dots
from verilayout.audit import ptx as ptx_audit
from verilayout.audit.cute_dsl import audit_pair

ROOT = Path(__file__).resolve().parents[1]
ATTENTION = ROOT / "tests" / "corpus" / "cuda90" / "attention_fwd_d64_128x64_w4_s2"
CUTE = ROOT / "tests" / "cutedsl" / "corpus" / "hopper_gemm_f16_kk_128x128"
#: the check modules' entry points the driver calls with the plan's context, each once per file
ENTRIES = ("smem_checks", "element_checks", "partition_checks", "convert_checks", "register_permute_checks",
           "tmem_message_checks")


def _counting_open(monkeypatch) -> Counter:
    opened: Counter = Counter()
    real_open = builtins.open

    def counting_open(file, *a, **k):
        opened[str(file)] += 1
        return real_open(file, *a, **k)

    monkeypatch.setattr(builtins, "open", counting_open)
    return opened


def test_each_entry_point_gets_the_one_context_and_the_dots_are_tied_once(tmp_path, monkeypatch):
    # an attention kernel: two dots, the second's operand A converted from the first's result, so
    # the register-permute check reads the ties the MMA descriptor checks read
    for ext in (".ptx", ".ttgir"):
        shutil.copy(str(ATTENTION) + ext, tmp_path / ("k" + ext))
    seen: dict[str, list[int]] = {}
    for name in ENTRIES:
        real = getattr(ptx_audit, name)
        monkeypatch.setattr(ptx_audit, name, lambda ctx, *a, _r=real, _n=name: seen.setdefault(_n, []).append(id(ctx))
                            or _r(ctx, *a))
    matched: Counter = Counter()
    real_match = ptx_dots.match_dots
    monkeypatch.setattr(ptx_dots, "match_dots", lambda d, g: matched.update([len(d)]) or real_match(d, g))
    rep = audit_paths([str(tmp_path / "k.ptx")])
    (f,) = rep.files
    assert {c.check for c in f.checks} >= {"mma-descriptor", "register-permute", "smem-address", "bank-conflicts"}
    assert sorted(seen) == sorted(ENTRIES) and all(len(v) == 1 for v in seen.values())
    assert len({v[0] for v in seen.values()}) == 1              # one context for every check module
    # one match per MMA family (sm_90 wgmma, sm_100 tcgen05, mma.sync): the two dots once, in the sm_90 family
    assert sum(matched.values()) == 3 and matched[2] == 1


def test_a_cute_dsl_pair_reads_its_ptx_once(tmp_path, monkeypatch):
    for ext in (".ptx", ".mlir"):
        with gzip.open(str(CUTE) + ext + ".gz", "rb") as src:
            (tmp_path / ("k" + ext)).write_bytes(src.read())
    opened = _counting_open(monkeypatch)
    parsed: Counter = Counter()
    real_ptx = ptx_audit.parse_ptx
    monkeypatch.setattr(ptx_audit, "parse_ptx", lambda t: parsed.update(["ptx"]) or real_ptx(t))
    rep = audit_paths([str(tmp_path / "k.ptx")])
    (f,) = rep.files
    assert opened[str(tmp_path / "k.ptx")] == 1 and opened[str(tmp_path / "k.mlir")] == 1
    assert parsed == Counter({"ptx": 1})
    # the same checks as the CuTe-DSL audit of the two texts on its own
    want = audit_pair((tmp_path / "k.mlir").read_text(), (tmp_path / "k.ptx").read_text(), f.path).checks
    assert f.checks and [(c.line, c.check, c.status, c.message) for c in f.checks] == \
        [(c.line, c.check, c.status, c.message) for c in want]
