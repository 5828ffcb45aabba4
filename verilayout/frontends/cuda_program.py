"""The text around an emitted kernel that the emitted-kernel checks read: the CUDA source
(``kernel.cu``: its ``namespace vl_<tag>`` and which host-callable index functions it defines),
the lines a host program built from it prints, and ``ptxas -v``'s resource report.

Nothing here is TTGIR or PTX; the checks in ``simulate`` read these texts through this module
only. The report lines are ptxas's ``-v`` (``--verbose``) output as printed by the CUDA
toolkit's ptxas ("Used N registers", "N bytes spill stores, N bytes spill loads").

>>> cuda_namespace("namespace vl_f16_64x64 {\\n}")
'vl_f16_64x64'
>>> tagged_rows(["MAP 1 2 3", "ENUM 4", "MAP 5 6"], "MAP")
[[1, 2, 3], [5, 6]]
"""
from __future__ import annotations

import re

__all__ = ["cuda_namespace", "defines_index_function", "tagged_rows", "program_words", "ptxas_report"]

_NAMESPACE = re.compile(r"namespace\s+(vl_\w+)\s*\{")
_SPILLS = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
_REGISTERS = re.compile(r"Used (\d+) registers")


def cuda_namespace(source: str) -> str | None:
    """Law: the name of the first ``namespace vl_<tag> {`` of a CUDA source, None without one.

    >>> cuda_namespace("namespace vl_a {"), cuda_namespace("namespace other {")
    ('vl_a', None)
    """
    m = _NAMESPACE.search(source)
    return m.group(1) if m else None


def defines_index_function(source: str, name: str) -> bool:
    """Law: the source spells ``name(uint32_t`` at a word start (an index function taking a
    ``uint32_t`` first argument: ``d_row``, ``d_col``, ``tile_coords``).

    >>> defines_index_function("uint32_t d_row(uint32_t t)", "d_row")
    True
    >>> defines_index_function("uint32_t add_row(uint32_t t)", "d_row")
    False
    """
    return re.search(rf"\b{re.escape(name)}\(uint32_t", source) is not None


def tagged_rows(lines, tag: str, skip: int = 1) -> list[list[int]]:
    """Law: for each line starting with ``tag``, in order, its whitespace-separated words after
    the first ``skip`` read as integers (a program's ``MAP``/``ENUM``/``FRAG``/``TILE`` lines).

    >>> tagged_rows(["TILE 3 1 2", "FRAG 0 1"], "TILE", skip=2)
    [[1, 2]]
    """
    return [list(map(int, ln.split()[skip:])) for ln in lines if ln.startswith(tag)]


def program_words(out: str) -> list[str]:
    """Law: a program's output split at whitespace.

    >>> program_words("1 2\\n3\\n")
    ['1', '2', '3']
    """
    return out.split()


def ptxas_report(text: str) -> tuple[list[tuple[int, int]], list[int]]:
    """Law: ``(spills, registers)`` of ``ptxas -v`` output: per function, in order, its
    ``(spill store bytes, spill load bytes)`` and its register count.

    >>> ptxas_report("Used 40 registers\\n0 bytes spill stores, 8 bytes spill loads")
    ([(0, 8)], [40])
    """
    spills = [(int(a), int(b)) for a, b in _SPILLS.findall(text)]
    return spills, [int(r) for r in _REGISTERS.findall(text)]
