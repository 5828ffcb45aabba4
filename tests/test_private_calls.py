"""The layering check's rule against calling another module's private method in ``simulate``
(``devtools/layers.private_calls``), on planted trees written here."""
import pathlib

from verilayout.devtools import layers
from tests.test_layers import _tree


def test_a_call_of_another_modules_private_method_is_a_violation(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "", "simulate/__init__.py": "",
        "simulate/a.py": "class Sim:\n    def _walk(self):\n        return self._x()\n",
        "simulate/b.py": "def f(sim):\n    return sim._walk()\n",           # a's private method
        "simulate/c.py": "def _g():\n    pass\n\ndef f(m):\n    return m._g(), m._replace(a=1)\n",
    })
    found = layers.private_calls(root)
    assert len(found) == 1 and found[0].startswith("verilayout/simulate/b.py:2:") and "_walk" in found[0]
    assert layers.main(["--root", str(root)]) == 1


def test_the_package_calls_no_private_method_across_simulate_modules():
    assert layers.private_calls(pathlib.Path(__file__).resolve().parents[1]) == []
