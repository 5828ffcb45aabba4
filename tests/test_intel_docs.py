"""The examples in the Intel modules' docstrings hold (they are part of the documentation)."""
from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["verilayout.hw.intel.dpas", "verilayout.hw.intel.block_io",
           "verilayout.frontends.triton.intel", "verilayout.prove.coverage",
           "verilayout.synth.blockload", "verilayout.blockload"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0
