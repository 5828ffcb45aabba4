"""The house rules of docs/architecture.md, checked on the real package and on planted trees."""
import pathlib
import subprocess
import sys

import pytest

from verilayout.devtools import layers

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_the_package_has_no_layer_violation():
    _, problems = layers.violations(ROOT)
    assert problems == [], "\n".join(problems)


# slow: 7.2 s of CPU (-p tests.cpu_table), a second interpreter running every check of the package;
# test_the_package_has_no_layer_violation keeps the same checks in the fast subset (pytest -m 'not slow')
@pytest.mark.slow
def test_the_checker_runs_as_a_module_and_exits_0():
    p = subprocess.run([sys.executable, "-m", "verilayout.devtools.layers"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout[-2000:]
    assert "core       verilayout.core.gf2" in p.stdout


def _tree(tmp_path, files: dict[str, str]) -> pathlib.Path:
    for name, text in files.items():
        f = tmp_path / "verilayout" / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    return tmp_path


def test_an_upward_import_is_a_violation(tmp_path):
    root = _tree(tmp_path, {"__init__.py": "", "core/__init__.py": "", "cli/__init__.py": "",
                            "core/a.py": "from verilayout.cli import b\n", "cli/b.py": ""})
    _, problems = layers.violations(root)
    assert any("imports upward verilayout.cli.b" in p for p in problems)


def test_a_sideways_import_between_vendors_is_a_violation(tmp_path):
    root = _tree(tmp_path, {"__init__.py": "", "hw/__init__.py": "", "hw/amd/__init__.py": "",
                            "hw/nvidia/__init__.py": "", "hw/amd/lds.py": "",
                            "hw/nvidia/x.py": "from verilayout.hw.amd import lds\n"})
    _, problems = layers.violations(root)
    assert any("sideways" in p for p in problems)


def test_function_level_imports_and_cycles_are_violations(tmp_path):
    root = _tree(tmp_path, {"__init__.py": "", "core/__init__.py": "",
                            "core/a.py": "from verilayout.core import b\n",
                            "core/b.py": "def f():\n    from verilayout.core import a\n",
                            "core/c.py": "def g():\n    import verilayout.core.a  # deferred: test\n"})
    _, problems = layers.violations(root)
    assert any("inside a function" in p and "core/b.py" in p for p in problems)
    assert not any("core/c.py" in p for p in problems)
    assert any(p.startswith("import cycle") for p in problems)


def test_every_cache_is_bounded():
    # docs/architecture.md: caches are keyed and bounded (lru_cache(maxsize=N)); an unbounded
    # cache (maxsize=None, functools.cache) is hidden global state that grows with every call
    import ast
    from pathlib import Path
    bad = []
    for path in sorted((Path(__file__).resolve().parent.parent / "verilayout").rglob("*.py")):
        for node in ast.walk(layers.source_tree(path.read_text())):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for dec in node.decorator_list:
                name = ast.unparse(dec)
                if name.endswith(("functools.cache", "cache")) and "lru" not in name:
                    bad.append(f"{path.name}:{node.lineno} {name}")
                if isinstance(dec, ast.Call) and ast.unparse(dec.func).endswith("lru_cache"):
                    size = next((k.value for k in dec.keywords if k.arg == "maxsize"), None)
                    if size is None or (isinstance(size, ast.Constant) and size.value is None):
                        bad.append(f"{path.name}:{node.lineno} {name}")
                elif ast.unparse(dec).endswith("lru_cache"):
                    bad.append(f"{path.name}:{node.lineno} {name} (default maxsize, say it)")
    assert not bad, bad


# docs/architecture.md: a function over 60 lines is split or says why. A function longer than
# LONG_LINES lines carries a comment `# long: <reason>` between its `def` line and its first
# statement after the docstring.
LONG_LINES = 60

# No exceptions beyond the `# long:` reasons: every function of the package is short or says why.
_LONG_ALLOWED_WHILE_OWNED_ELSEWHERE: set = set()


def long_functions_without_reason(text: str) -> list[tuple[str, int, int]]:
    """(name, def line, length) of each function over LONG_LINES lines whose lines between the
    `def` and its first statement after the docstring hold no `# long: <reason>` comment."""
    import ast
    lines = text.splitlines()
    out = []
    for node in ast.walk(layers.source_tree(text)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        length = node.end_lineno - node.lineno + 1
        if length <= LONG_LINES:
            continue
        body = node.body
        first = body[1] if (len(body) > 1 and isinstance(body[0], ast.Expr)
                            and isinstance(body[0].value, ast.Constant)
                            and isinstance(body[0].value.value, str)) else body[0]
        head = lines[node.lineno - 1:first.lineno - 1]
        reason = [ln.split("# long:", 1)[1].strip() for ln in head if "# long:" in ln]
        if not any(reason):
            out.append((node.name, node.lineno, length))
    return out


def test_the_long_function_rule_reads_reasons():
    short = "def f():\n" + "    x = 1\n" * 10
    long_ = "def g(a,\n      b):\n    '''doc'''\n" + "    x = 1\n" * 70
    reasoned = long_.replace("'''doc'''\n", "'''doc'''\n    # long: a table\n", 1)
    empty = long_.replace("'''doc'''\n", "'''doc'''\n    # long:\n", 1)
    assert long_functions_without_reason(short) == []
    assert long_functions_without_reason(long_) == [("g", 1, 73)]
    assert long_functions_without_reason(reasoned) == []
    assert long_functions_without_reason(empty) == [("g", 1, 74)]


def test_every_long_function_says_why():
    pkg = ROOT / "verilayout"
    bad = []
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg).as_posix()
        for name, line, length in long_functions_without_reason(path.read_text()):
            if (rel, name) in _LONG_ALLOWED_WHILE_OWNED_ELSEWHERE or \
                    (rel, "*") in _LONG_ALLOWED_WHILE_OWNED_ELSEWHERE:
                continue
            bad.append(f"{rel}:{line} {name} ({length} lines): split it or say `# long: <why>`")
    assert not bad, "\n".join(bad)


# The ladder (text read at the door) and the private-import rule are violations.
# Each planted tree breaks one rule.

def test_prove_reading_text_is_a_violation(tmp_path):
    root = _tree(tmp_path, {"__init__.py": "", "frontends/__init__.py": "", "prove/__init__.py": "",
                            "frontends/mlir.py": "", "prove/a.py": "from verilayout.frontends import mlir\n"})
    _, problems = layers.violations(root)
    assert problems == []                       # the old ladder allows it (frontends < prove)
    found = layers.ladder_findings(root)
    assert len(found) == 1 and "reads text" in found[0] and "prove/a.py:1" in found[0]
    assert layers.main(["--root", str(root)]) == 1


#: the layers below the door (frontends), sorted, and the module x.py that _below_the_door puts in each
_BELOW_THE_DOOR = ("emit", "hw", "prove", "synth")
_X_BELOW_THE_DOOR = [f"verilayout/{layer}/x.py" for layer in _BELOW_THE_DOOR]


def _below_the_door(tmp_path, files: dict, source: str):
    """The tree of ``files`` plus a module ``x.py`` holding ``source`` in every layer below the door."""
    for layer in _BELOW_THE_DOOR:
        files[f"{layer}/__init__.py"] = ""
        files[f"{layer}/x.py"] = source
    return _tree(tmp_path, files)


def test_each_layer_below_the_door_reading_text_is_a_violation(tmp_path):
    files = {"__init__.py": "", "frontends/__init__.py": "", "frontends/t.py": ""}
    root = _below_the_door(tmp_path, files, "from verilayout.frontends import t\n")
    found = layers.ladder_findings(root)
    assert sorted(f.split(":")[0] for f in found) == _X_BELOW_THE_DOOR
    assert layers.main(["--root", str(root)]) == 1


def test_frontends_importing_prove_breaks_the_new_ladder(tmp_path):
    # {frontends | prove < synth}: the wing and the chain are side by side
    root = _tree(tmp_path, {"__init__.py": "", "frontends/__init__.py": "", "prove/__init__.py": "",
                            "synth/__init__.py": "", "prove/p.py": "", "synth/s.py": "",
                            "frontends/a.py": "from verilayout.prove import p\n",
                            "frontends/b.py": "from verilayout.synth import s\n"})
    found = layers.ladder_findings(root)
    assert any("frontends/a.py:1" in f and "sideways" in f for f in found)
    assert any("frontends/b.py:1" in f and "upward" in f for f in found)
    assert layers.main(["--root", str(root)]) == 1


def test_the_ptx_evaluator_reading_text_is_a_violation(tmp_path):
    # the edge that is gone (prove/ptx_values reads hw/nvidia/ptx_model's typed module now)
    root = _tree(tmp_path, {"__init__.py": "", "frontends/__init__.py": "", "prove/__init__.py": "",
                            "frontends/ptx.py": "",
                            "prove/ptx_values.py": "from verilayout.frontends import ptx\n"})
    found = layers.ladder_findings(root)
    assert len(found) == 1 and "prove/ptx_values.py:1" in found[0]
    assert layers.main(["--root", str(root)]) == 1


def test_a_private_import_across_modules_is_a_violation(tmp_path):
    root = _tree(tmp_path, {"__init__.py": "", "core/__init__.py": "",
                            "core/a.py": "def _helper():\n    pass\ndef ok():\n    pass\n",
                            "core/b.py": "from verilayout.core.a import _helper, ok\n",
                            "core/c.py": "from verilayout.core.a import ok as _ok\n"})
    found = layers.private_imports(root)
    assert found == ["verilayout/core/b.py:1: verilayout.core.b imports private verilayout.core.a._helper"]
    assert layers.main(["--root", str(root)]) == 1


def test_a_tree_that_keeps_both_rules_passes(tmp_path):
    root = _tree(tmp_path, {"__init__.py": "", "core/__init__.py": "", "prove/__init__.py": "",
                            "core/a.py": "def helper():\n    pass\n",
                            "prove/b.py": "from verilayout.core.a import helper\n"})
    assert layers.ladder_findings(root) == [] and layers.private_imports(root) == []
    assert layers.main(["--root", str(root)]) == 0


def test_the_package_keeps_the_ladder():
    """No layer below the door reads text."""
    left = layers.ladder_findings(ROOT)
    assert left == [], "\n".join(left)


def test_a_text_reader_below_the_door_is_a_violation(tmp_path):
    # option spellings are read in frontends (frontends/names.py); hw/prove/synth/emit
    # take the parsed value, so a `def parse_*` there is a violation, one per layer
    files = {"__init__.py": "", "frontends/__init__.py": "",
             "frontends/names.py": "def parse_shape(text):\n    return text\n"}
    root = _below_the_door(tmp_path, files, "import re\ndef shape(t):\n    return t\ndef parse_major(text):\n"
                           "    return text\n")
    found = layers.text_readers(root)
    assert sorted(f.split(":")[0] for f in found) == _X_BELOW_THE_DOOR
    assert all(":4:" in f and "parse_major" in f for f in found)
    assert layers.main(["--root", str(root)]) == 1


def test_a_once_known_text_reader_is_a_violation_too(tmp_path):
    # the readers once reported instead of failing (hw/nvidia/tma.parse_arch, emit/gemm_plan.parse_tile,
    # ...) moved to frontends/names: planted back, each fails, with or without the old --strict
    files = {"__init__.py": "", "hw/__init__.py": "", "hw/nvidia/__init__.py": "", "emit/__init__.py": "",
             "hw/nvidia/tma.py": "def parse_arch(a):\n    return a\n",
             "emit/gemm_plan.py": "def parse_tile(t):\n    return t\n"}
    root = _tree(tmp_path, files)
    found = layers.text_readers(root)
    assert sorted(f.split(":")[0] for f in found) == ["verilayout/emit/gemm_plan.py", "verilayout/hw/nvidia/tma.py"]
    assert not hasattr(layers, "KNOWN_TEXT_READERS") and not hasattr(layers, "known_readers")
    assert layers.main(["--root", str(root)]) == 1
    assert layers.main(["--root", str(root), "--strict"]) == 1
    clean = _tree(tmp_path / "clean", {"__init__.py": "", "hw/__init__.py": "",
                                       "hw/nvidia/__init__.py": "",
                                       "hw/nvidia/tma.py": "def require_arch(a):\n    return a\n"})
    assert layers.main(["--root", str(clean)]) == 0 and layers.main(["--root", str(clean), "--strict"]) == 0


def test_the_package_defines_no_text_reader_below_the_door():
    left = layers.text_readers(ROOT)
    assert left == [], "\n".join(left)


def test_no_private_import_between_modules():
    """Every private name one module took from another has a public home now."""
    left = list(layers.private_imports(ROOT))
    assert left == [], "\n".join(left)


def test_every_solver_check_goes_through_solve():
    """z3 answers a Ctrl-C during ``check()`` with ``unknown``; only ``core.smt.solve`` turns that
    back into an interrupt, so no other module calls a solver's ``check()`` itself."""
    import ast
    direct = []
    for path in sorted((ROOT / "verilayout").rglob("*.py")):
        if path.relative_to(ROOT).as_posix() == "verilayout/core/smt.py":
            continue
        for node in ast.walk(layers.source_tree(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr == "check" and not node.args and not node.keywords:
                direct.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert direct == []


# Compiler text is read at the door: outside frontends, a module that takes TTGIR/PTX models uses no
# regular expression and no split (today's remaining readers have an explicit, commented bound).

def test_compiler_text_read_outside_frontends_is_a_violation(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "", "frontends/__init__.py": "", "audit/__init__.py": "", "report/__init__.py": "",
        "frontends/ttgir.py": "import re\nX = re.compile('a')\n",
        # a consumer splitting an op's text: two uses (the import, re.match) plus one split
        "audit/bad.py": "import re\nfrom verilayout.frontends.ttgir import X\n"
                        "def f(op):\n    return re.match('a', op.text), op.attrs.split(',')\n",
        # the same reading with the typed fields: nothing to count
        "audit/good.py": "from verilayout.frontends import ttgir\ndef f(op):\n    return op.attributes['axis']\n",
        # text that is not compiler text, in a module that takes no compiler model: not judged
        "report/words.py": "def f(s):\n    return s.split()\n"})
    found = layers.text_splits(root, allowed={})
    assert len(found) == 1 and "audit/bad.py" in found[0] and "(3 regular-expression uses" in found[0], found
    assert layers.text_splits(root, allowed={"verilayout.audit.bad": (3, "test")}) == []
    assert len(layers.text_splits(root, allowed={"verilayout.audit.bad": (2, "test")})) == 1


def test_text_uses_counts_each_regex_use_and_split_call():
    # counted by hand: `from re import`, `re.sub`, `.rsplit`, `.split`; not `.strip`, not a `re` attribute
    src = ("from re import sub\nimport os\nx = re.sub('a', 'b', t)\ny = t.rsplit('/', 1)\n"
           "z = [w for w in t.split()]\nw = t.strip()\nv = obj.re\n")
    assert layers.text_uses(src) == 4


def test_the_package_reads_no_compiler_text_outside_frontends():
    assert layers.text_splits(ROOT) == []


def test_each_text_reading_exception_is_live_and_not_the_typed_audit():
    # an exception names a module that exists and takes a compiler model; the TTGIR audit and the
    # readers themselves (frontends) are not exceptions: the TTGIR audit reads no text at all
    pkg = ROOT / "verilayout"
    modules = {layers.module_name(p, ROOT) for p in pkg.rglob("*.py")}
    for mod, (bound, why) in layers.TEXT_SPLITS_ALLOWED.items():
        assert mod in modules, mod
        assert bound > 0 and why, mod
        path = ROOT / (mod.replace(".", "/") + ".py")
        assert any(i.target in layers.COMPILER_TEXT_MODELS for i in layers.imports_of(path, ROOT, modules)), mod
    assert "verilayout.audit.ttgir" not in layers.TEXT_SPLITS_ALLOWED
    assert layers.text_uses((pkg / "audit" / "ttgir.py").read_text()) == 0
    # nor are the PTX audit's modules and the PTX evaluator: opcode parts, wgmma shapes, register
    # names and targets are read in frontends (frontends/ptx, frontends/prescan)
    for name in ("ptx", "ptx_wgmma", "ptx_tmem", "ptx_smem", "ptx_scratch", "ptx_dots", "kernel_names", "advice",
                 "ptx_partitions", "ptx_shuffles"):
        assert f"verilayout.audit.{name}" not in layers.TEXT_SPLITS_ALLOWED, name
        assert layers.text_uses((pkg / "audit" / f"{name}.py").read_text()) == 0, name
    assert layers.text_uses((pkg / "prove" / "ptx_values.py").read_text()) == 0


def test_the_ptx_audit_reads_ttgir_types_from_the_typed_ops():
    # the PTX audit takes each TTGIR op's parsed types (Op.in_types / out_types, read once by the
    # frontend); it never hands a type text back to the module to parse (ptx_elements keeps the
    # printed texts only as the key that groups ops of one type on one line)
    for name in ("ptx", "ptx_tmem", "ptx_elements", "ptx_dots", "ptx_smem", "ptx_wgmma", "ptx_partitions",
                 "ptx_shuffles"):
        src = (ROOT / "verilayout" / "audit" / f"{name}.py").read_text()
        assert "type_of(" not in src, name
        assert name == "ptx_elements" or "operand_types" not in src, name
    assert not any(m.startswith("verilayout.frontends") for m in layers.TEXT_SPLITS_ALLOWED)


def test_a_ptx_operand_taken_as_text_is_a_violation(tmp_path):
    # planted: each union of an operand type with str, in every spelling the rule reads, and the
    # annotations that are not such a union
    root = _tree(tmp_path, {
        "__init__.py": "", "prove/__init__.py": "",
        "prove/bad.py": "from typing import Optional, Union\n"
                        "def a(x: Operand | str) -> int: ...\n"
                        "def b(x: 'str | Reg | None') -> int: ...\n"
                        "def c(x) -> Union[Operand, str]: ...\n",
        "prove/good.py": "def d(x: Operand | None, name: str) -> Reg | int: ...\n"})
    found = layers.operand_or_text(root)
    assert [f.split(" ")[0] for f in found] == ["verilayout/prove/bad.py:2", "verilayout/prove/bad.py:3",
                                                 "verilayout/prove/bad.py:4"], found
    assert layers.operand_or_text(ROOT) == []    # the package itself: none left


_CTX = "from verilayout.audit.ptx_context import PtxContext\n"


def _audit_tree(tmp_path, files: dict[str, str]) -> pathlib.Path:
    base = {"__init__.py": "", "audit/__init__.py": "", "audit/ptx_context.py": "class PtxContext:\n    pass\n",
            "audit/ptx.py": "", "audit/ptx_smem.py": _CTX + "def smem_checks(ctx: PtxContext) -> list:\n    return []\n"
            "def values_at(e, var, points):\n    return None\n"}
    return _tree(tmp_path, {**base, **files})


def test_a_ptx_check_module_calling_the_driver_back_is_a_violation(tmp_path):
    root = _audit_tree(tmp_path, {"audit/ptx_tmem.py": "from verilayout.audit.ptx import audit_ptx_text\n",
                                  "audit/ptx_dots.py": "from verilayout.audit import ptx\n"})
    got = layers.ptx_hand_offs(root)
    assert len(got) == 2 and all("imports the driver verilayout.audit.ptx" in p for p in got)
    assert got[0].startswith("verilayout/audit/ptx_dots.py:1:") and got[1].startswith("verilayout/audit/ptx_tmem.py:1:")


def test_a_ptx_check_module_calling_another_entry_point_is_a_violation(tmp_path):
    # smem_checks takes the context: an entry point; values_at is a helper any module may share
    root = _audit_tree(tmp_path, {"audit/ptx_elements.py": "from verilayout.audit.ptx_smem import smem_checks\n",
                                  "audit/ptx_partitions.py": "from verilayout.audit.ptx_smem import values_at\n",
                                  "audit/cute_dsl.py": "from verilayout.audit.ptx_smem import smem_checks\n"})
    got = layers.ptx_hand_offs(root)
    assert [p.split(":")[0] for p in got] == ["verilayout/audit/cute_dsl.py", "verilayout/audit/ptx_elements.py"]
    assert all("another check module's entry point verilayout.audit.ptx_smem.smem_checks" in p for p in got)
    assert layers.ptx_entry_points(root)["verilayout.audit.ptx_smem"] == {"smem_checks"}


def test_a_ptx_check_module_building_its_own_context_is_a_violation(tmp_path):
    root = _audit_tree(tmp_path, {"audit/ptx_tmem.py": _CTX + "def f(m):\n    return PtxContext('k', m)\n"})
    got = layers.ptx_hand_offs(root)
    assert got == ["verilayout/audit/ptx_tmem.py:3: verilayout.audit.ptx_tmem builds a PtxContext (the driver "
                   "builds the one context)"]
    # the driver builds it; a module outside the PTX checks is not judged by this rule
    assert layers.ptx_hand_offs(_audit_tree(tmp_path / "ok", {"audit/ptx.py": _CTX + "c = PtxContext()\n"})) == []


def test_the_package_ptx_checks_hand_nothing_off():
    assert layers.ptx_hand_offs(ROOT) == []
    entries = layers.ptx_entry_points(ROOT)
    # the entry points the driver calls, each taking the one context (the CuTe-DSL audit its parsed plan)
    assert {"smem_checks"} <= entries["verilayout.audit.ptx_smem"]
    assert {"element_checks", "convert_checks"} <= entries["verilayout.audit.ptx_elements"]
    assert {"partition_checks"} <= entries["verilayout.audit.ptx_partitions"]
    assert {"register_permute_checks"} <= entries["verilayout.audit.ptx_shuffles"]
    assert {"tmem_message_checks"} <= entries["verilayout.audit.ptx_tmem"]
    assert {"wgmma_checks_without_plan"} <= entries["verilayout.audit.ptx_wgmma"]
    assert entries["verilayout.audit.cute_dsl"] == {"audit_modules"}
