"""The `verilayout` command line: one module per command, argument parsing and printing only.

``build_parser`` and ``main`` are loaded on first use, so that the program's entry point
(:func:`verilayout.cli.__main__.run`) is inside its Ctrl-C handler before any heavy import.
"""
from typing import Any

__all__ = ["build_parser", "main"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from verilayout.cli import main as _main_module
        return getattr(_main_module, name)
    raise AttributeError(f"module 'verilayout.cli' has no attribute {name!r}")
