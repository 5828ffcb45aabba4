"""The house rules of docs/architecture.md, checked on the real package and on planted trees."""
import pathlib
import subprocess
import sys

from verilayout.devtools import layers

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_the_package_has_no_layer_violation():
    _, problems = layers.violations(ROOT)
    assert problems == [], "\n".join(problems)


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
        for node in ast.walk(ast.parse(path.read_text())):
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
