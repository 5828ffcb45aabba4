"""Questions answered with a :class:`verilayout.core.smt.Verdict` (proved, counterexample, unknown).

:mod:`.wgmma`: a descriptor reads the bytes an intended shared-memory layout wrote.
"""
