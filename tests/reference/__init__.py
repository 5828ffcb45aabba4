"""Brute-force reference models the tests compare verilayout with (independent of the
code under test), and shared random strategies. Imported as ``tests.reference.<module>``
(``pythonpath = ["."]`` in pyproject.toml puts the repository root on the path)."""
