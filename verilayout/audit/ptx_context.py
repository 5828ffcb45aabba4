"""What every PTX check of one file shares, built once by the driver (``audit.ptx.ptx_context``) and
handed to each check module's entry point: the typed PTX module (``frontends.ptx``, read once),
the plan beside it (the TTGIR's typed module and its audit's checks), the evaluators of the PTX's
registers, the warp-specialized partitions the PTX's dispatch gives, each family's MMA groups tied
to the TTGIR dots they lower, and the file's memo (term values and per-file results the checks
reuse: lane offsets, the scratch rounds' claims).

Law: a check reads the file through this context only; it neither parses text nor builds another
context, and it calls no other check module's entry point nor the driver (``devtools.layers.
ptx_hand_offs``). :class:`PartitionMap` is the partitions' data (read by ``audit.ptx_partitions``).

>>> p = Partition(1, (4, 5), 2, frozenset({30, 31}), "L", 232)
>>> m = PartitionMap((p,), None, None, None, {}, frozenset({7}))
>>> m.partition_of(31).index, m.partition_of(3), threads_at(m, 31, 128), threads_at("why", 31, 128)
(1, None, 64, 128)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from verilayout.audit.model import Check
from verilayout.audit.ptx_dots import DotTies
from verilayout.frontends.ttgir import Module
from verilayout.hw.nvidia.ptx_model import Instr, PtxModule

__all__ = ["PtxContext", "Partition", "PartitionMap", "threads_at", "machinery_of"]


@dataclass(frozen=True)
class Partition:
    """One worker partition: its TTGIR index, the CTA warps the PTX's table sends to it, its TTGIR
    ``num_warps``, the PTX lines of its region, the region's label, its ``requestedRegisters``, the
    PTX line of the region's first instruction."""
    index: int
    warps: tuple[int, ...]
    num_warps: int
    lines: frozenset[int]
    label: str
    registers: int | None
    entry: int = 0


@dataclass(frozen=True)
class PartitionMap:
    """What the PTX says about one ``ttg.warp_specialize``: its worker partitions, the last
    instruction of the dispatch (``brx.idx``, or the last ``@p bra`` of a compare chain), the
    state-byte load, the table store, each warp's state byte (offset from ``global_smem``), the PTX
    lines of the machinery's own shared-memory accesses (table, state byte, captures), the capture
    stores and the capture loads with the bytes each touches."""
    partitions: tuple[Partition, ...]
    dispatch: Instr
    state_load: Instr
    table_store: Instr
    state_bytes: dict[int, int]
    machinery: frozenset[int]
    captures: tuple[tuple[Instr, tuple[int, int]], ...] = ()
    captured: tuple[tuple[Instr, tuple[int, int]], ...] = ()
    ttgir: tuple = field(default=())
    table_stores: tuple[Instr, ...] = ()

    def partition_of(self, line: int) -> Partition | None:
        """The worker partition whose region holds PTX line ``line``, or None (default code)."""
        for p in self.partitions:
            if line in p.lines:
                return p
        return None


def threads_at(pmap: PartitionMap | str | None, line: int, default: int) -> int:
    """The threads that run PTX line ``line``: ``32 k`` in the region of a worker partition of ``k``
    warps of ``pmap``, else ``default`` (also when ``pmap`` is a reason or None)."""
    p = pmap.partition_of(line) if isinstance(pmap, PartitionMap) else None
    return 32 * p.num_warps if p is not None else default


def machinery_of(pmap: PartitionMap | str | None) -> set[int]:
    """The PTX lines of a ``ttg.warp_specialize``'s own shared-memory accesses (its state table, the
    state-byte load, the captures), checked by ``audit.ptx_partitions``; empty without a map."""
    return set(pmap.machinery) if isinstance(pmap, PartitionMap) else set()


@dataclass(frozen=True)
class PtxContext:
    """One PTX file's shared context (module law). ``values``: per function, the evaluator the
    checks share (with a plan: first iteration of each loop, ``%tid.x`` per partition; without one:
    the whole function over the module's shared base); ``partitions``: the :class:`PartitionMap`,
    the reason it could not be read, or None (no ``ttg.warp_specialize``); ``ties``: per MMA
    family (``audit.ptx_dots.DOT_FAMILIES``), the PTX groups and their dots; ``memo``: the file's
    memo (filled by the checks, in the driver's order)."""
    path: str
    ptx: PtxModule
    tmod: Module | None
    plan: tuple[Check, ...]
    values: Mapping[str, Any]
    partitions: PartitionMap | str | None = None
    ties: Mapping[str, DotTies] = field(default_factory=dict)
    memo: dict = field(default_factory=dict)

    def threads_at(self, line: int, default: int) -> int:
        """:func:`threads_at` of this file's partitions."""
        return threads_at(self.partitions, line, default)

    def machinery(self) -> set[int]:
        """:func:`machinery_of` this file's partitions."""
        return machinery_of(self.partitions)
