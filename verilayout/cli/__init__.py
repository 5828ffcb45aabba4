"""The `verilayout` command line: one module per command, argument parsing and printing only."""
from verilayout.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
