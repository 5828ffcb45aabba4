"""Cluster K-ring systems (``simulate.mcast_ring.McastSystem``) of emitted kernels kept as JSON, so
that tests compare searches on kernel-sized rings without nvcc or a compile. The file
``tests/mcast_ring_systems.json`` is written by ``python benchmarks/mcast_symmetry.py --write-fixture``
(nvcc needed there): per kernel of that benchmark the system the ``mcast-ring`` check reads off the
PTX runs, its marks (PTX events) left out."""
from __future__ import annotations

import json
from pathlib import Path

from verilayout.simulate.mcast_ring import McastLoad, McastSystem
from verilayout.simulate.ring import Arrive, Mma, MmaCommit, Wait

FIXTURE = Path(__file__).resolve().parent / "mcast_ring_systems.json"
_KINDS = {"wait": Wait, "arrive": Arrive, "mcast-load": McastLoad, "mma": Mma, "mma-commit": MmaCommit}


def _tup(x):
    return tuple(_tup(y) for y in x) if isinstance(x, list) else x


def _action(row: list):
    cls = _KINDS[row[0]]
    fields = dict(zip([f for f in cls._fields if f != "mark"], [row[0]] + [_tup(x) for x in row[1:]]))
    return cls(**fields, mark=None)


def encode(system: McastSystem) -> dict:
    """A JSON-able dict of ``system`` (each action its fields but ``mark``)."""
    prog = [[[getattr(a, f) for f in a._fields if f != "mark"] for a in acts] for acts in system.prog]
    return {"ncta": system.ncta, "prog": prog, "roles": system.roles, "init": system.init,
            "landing": system.landing, "reads": system.reads}


def decode(d: dict) -> McastSystem:
    """The system :func:`encode` wrote."""
    return McastSystem(d["ncta"], tuple(tuple(_action(r) for r in acts) for acts in d["prog"]), _tup(d["roles"]),
                       _tup(d["init"]), d["landing"], _tup(d["reads"]))


def load() -> dict:
    """``{kernel name: McastSystem}`` of the fixture."""
    return {k: decode(v) for k, v in json.loads(FIXTURE.read_text()).items()}
