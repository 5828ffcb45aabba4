"""The sm_100a GEMM manifest typed (``emit gemm --arch sm_100a``): what ``kernel.cu`` is written
from, as frozen dataclasses built by :func:`verilayout.emit.tcgen05_gemm.build_tcgen05_manifest`
and read by its renderer and by :mod:`verilayout.simulate.tcgen05_check`.

``manifest.json`` is :meth:`Tcgen05Manifest.to_dict` written as JSON (the key order of the file);
a file read back is :meth:`Tcgen05Manifest.from_dict`, a one-line ``LayoutError`` naming the first
missing, unknown or ill-typed field. Sections whose fact is the sm_90a manifest's are its types
(:class:`verilayout.emit.gemm_plan.StageOperand`, ``Epilogue``, ``TmaBoxes``, ``SmemBudget``); the
swizzle of the K ring has one home (``tma.swizzle``; the file repeats it at the top) and the
instruction descriptor's fields are decoded from its value (PTX ISA "Instruction descriptor").

>>> from verilayout.emit.tcgen05_gemm import build_tcgen05_manifest
>>> m = build_tcgen05_manifest("bf16", tile=(128, 128, 64), stages=4)
>>> Tcgen05Manifest.from_dict(m.to_dict()) == m, m.swizzle, m.ctas
(True, '128B', 1)
"""
from __future__ import annotations

import typing
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields, is_dataclass

from verilayout.emit.gemm_plan import (GEMM_FORMAT, Epilogue, GemmManifest, SmemBudget, StageOperand,
                                       TmaBoxes)
from verilayout.errors import LayoutError

__all__ = ["IDESC_FIELDS", "decode_idesc", "InstrDescriptor", "TmemPlan", "Warps", "Schedule",
           "RingBarriers", "DStore", "GlobalLayouts", "ManifestObligation", "CtaPair", "Cluster",
           "Tcgen05Manifest", "typed_tcgen05"]

#: Instruction descriptor fields (name, first bit, width), PTX ISA "Instruction descriptor format"
#: for .kind::f16 / tf32 / f8f6f4: sparsity 0-2, saturate 3, D type 4-5, A type 7-9, B type
#: 10-12, negate A 13, negate B 14, transpose (major) A 15, B 16, N >> 3 17-22, M >> 4 24-28,
#: max shift 30-31.
IDESC_FIELDS = (("sparse_id2", 0, 2), ("sparse_flag", 2, 1), ("saturate", 3, 1), ("d_type", 4, 2),
                ("a_type", 7, 3), ("b_type", 10, 3), ("negate_a", 13, 1), ("negate_b", 14, 1),
                ("a_major", 15, 1), ("b_major", 16, 1), ("n_dim", 17, 6), ("m_dim", 24, 5),
                ("max_shift", 30, 2))


def decode_idesc(value: int) -> dict:
    """Field name -> value of a 32-bit instruction descriptor.

    >>> d = decode_idesc(0x8400490); d["n_dim"] << 3, d["m_dim"] << 4, d["a_type"]
    (256, 128, 1)
    """
    return {n: (value >> b) & ((1 << w) - 1) for n, b, w in IDESC_FIELDS}


# ----- reading and writing: one generic walk over the frozen dataclasses -----------------------

def _key(f) -> str:
    """The JSON key of a dataclass field (``metadata["key"]``, else its name)."""
    return f.metadata.get("key", f.name)


def _expect(value: object, kind: object, where: str) -> object:
    """Law: ``value`` read as the annotated ``kind`` (int, str, bool, ``tuple[X, ...]``, a frozen
    dataclass, ``X | None``); a one-line ``LayoutError`` naming ``where`` otherwise."""
    args = typing.get_args(kind)
    if type(None) in args:                          # X | None: given, so an X
        return _expect(value, next(a for a in args if a is not type(None)), where)
    if typing.get_origin(kind) is tuple:
        if not isinstance(value, list):
            raise LayoutError(f"manifest: field '{where}' is {value!r}, expected a list")
        return tuple(_expect(v, args[0], f"{where}[{i}]") for i, v in enumerate(value))
    if isinstance(kind, type) and is_dataclass(kind):
        return _section(kind, value, where)
    ok = isinstance(value, kind) and (kind is not int or not isinstance(value, bool))
    if not ok:
        name = {int: "an integer", str: "a text", bool: "a bool"}.get(kind, str(kind))
        raise LayoutError(f"manifest: field '{where}' is {value!r}, expected {name}")
    return value


def _section(cls: type, d: object, where: str) -> object:
    """Law: the dataclass ``cls`` read from the JSON object ``d`` (the sm_90a section types through
    their own ``from_dict``); a one-line ``LayoutError`` naming ``where``."""
    if not isinstance(d, Mapping):
        raise LayoutError(f"manifest: field '{where}' is {d!r}, expected an object")
    if cls is InstrDescriptor:
        return _idesc(d, where)
    if cls not in (StageOperand, Epilogue, TmaBoxes, SmemBudget):
        return _read(cls, d, where + ".")
    obj = StageOperand.from_dict(d, where) if cls is StageOperand else cls.from_dict(d)
    unknown = next((k for k in d if k not in _json(obj)), None)
    if unknown is not None:
        raise LayoutError(f"manifest: unknown field '{where}.{unknown}'")
    return obj


def _read(cls: type, d: Mapping, where: str = "", extra: tuple = ()) -> object:
    """Law: ``cls(**fields)``, each field from its key of ``d`` as its annotation says (a field
    with a default may be absent); a key of no field (and not in ``extra``) is refused."""
    hints = typing.get_type_hints(cls)
    known = {_key(f) for f in fields(cls)} | set(extra)
    unknown = next((k for k in d if k not in known), None)
    if unknown is not None:
        raise LayoutError(f"manifest: unknown field '{where}{unknown}'")
    got = {}
    for f in fields(cls):
        k = _key(f)
        if k in d:
            got[f.name] = _expect(d[k], hints[f.name], where + k)
        elif f.default is MISSING:
            raise LayoutError(f"manifest: missing field '{where}{k}'")
    return cls(**got)


def _json(value: object) -> object:
    """Law: the JSON value of a typed manifest part: ``to_dict()`` where a type has one, a
    dataclass's fields by key in order (a ``None`` one left out), tuples as lists."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if is_dataclass(value):
        return _json_fields(value)
    if isinstance(value, tuple):
        return [_json(v) for v in value]
    return value


# ----- the sections --------------------------------------------------------------------------

@dataclass(frozen=True)
class InstrDescriptor:
    """The 32-bit ``tcgen05.mma`` instruction descriptor; its fields are decoded from the value.

    >>> InstrDescriptor(0x8400490).fields["n_dim"] << 3
    256
    """
    value: int

    @property
    def fields(self) -> dict:
        """Field name -> value (:func:`decode_idesc`)."""
        return decode_idesc(self.value)

    def to_dict(self) -> dict:
        """Law: ``{"value", "fields"}`` as ``manifest.json`` has them."""
        return {"value": self.value, "fields": self.fields}


def _idesc(d: object, where: str = "idesc") -> InstrDescriptor:
    """Law: the ``idesc`` object; its ``fields`` must be the value's decoding."""
    if not isinstance(d, Mapping):
        raise LayoutError(f"manifest: field '{where}' is {d!r}, expected an object")
    if "value" not in d:
        raise LayoutError(f"manifest: missing field '{where}.value'")
    value = _expect(d["value"], int, f"{where}.value")
    if d.get("fields") != decode_idesc(value) or set(d) != {"value", "fields"}:
        raise LayoutError(f"manifest: field '{where}.fields' is not the decoding of {value:#010x}")
    return InstrDescriptor(value)


@dataclass(frozen=True)
class TmemPlan:
    """The TMEM allocation (columns), the epilogue's load shape and columns per load, and the
    accumulator stages."""
    columns: int
    ld: str
    ld_num: int
    acc_stages: int


@dataclass(frozen=True)
class Warps:
    """The warp roles: the TMA warp, the MMA warp, the epilogue warps."""
    tma: int
    mma: int
    epilogue: tuple[int, ...]


@dataclass(frozen=True)
class Schedule:
    """The persistent schedule in words (kind, grid, raster order) and the warp roles."""
    kind: str
    grid: str
    order: str
    warps: Warps


@dataclass(frozen=True)
class RingBarriers:
    """Where the mbarriers start in shared memory (full and empty per stage, acc_full and
    acc_empty per accumulator stage, then the TMEM address slot: fixed counts, unlike sm_90a's)."""
    offset: int


@dataclass(frozen=True)
class DStore:
    """D's store: ``tma`` (staged boxes, their shared offset, box, swizzle, buffers per warp, row
    bytes) or ``per element`` (split-K), and when the TMA store applies."""
    kind: str
    offset: int
    box: tuple[int, ...]
    swizzle: str
    buffers_per_warp: int
    row_bytes: int
    when: str


@dataclass(frozen=True)
class GlobalLayouts:
    """A, B and D in global memory, in words."""
    a: str
    b: str
    d: str


@dataclass(frozen=True)
class ManifestObligation:
    """One proof obligation listed at the top of ``kernel.cu``."""
    claim: str
    status: str
    method: str
    reason: str


@dataclass(frozen=True)
class CtaPair:
    """The CTA pair of ``cta_group::2`` (cluster 2 x 1): leader, commit mask, rows per CTA, the
    pair's tile, where its barriers live and the facts it relies on."""
    ctas: int
    cluster: tuple[int, ...]
    leader: int
    commit_mask: int
    rows_per_cta: int
    b_rows_per_cta: int
    tile: tuple[int, ...]
    barriers: str
    facts: tuple[str, ...]


@dataclass(frozen=True)
class Cluster:
    """The thread-block cluster ``m x n`` of ``cta_group::1`` CTAs with TMA multicast (the plan of
    :func:`verilayout.emit.gemm_cluster.cluster_plan`): rank ``r`` computes tile ``(r % m, r // m)``
    of each cluster tile; per rank the CTA masks of its A slice and B slice multicasts and of its
    ``tcgen05.commit`` releasing a stage (``peers``), each empty barrier's count, the rows of one
    slice of A and of B. ``commits``: with CTA pairs (``cta_group::2``, the plan of
    :func:`verilayout.emit.gemm_cluster.pair_cluster_plan`) the commit mask of each pair's leader
    (0 for a non-leader); None (left out of the file) for one CTA per tile."""
    m: int
    n: int
    size: int
    a_masks: tuple[int, ...]
    b_masks: tuple[int, ...]
    peers: tuple[int, ...]
    empty_count: int
    a_slice_rows: int
    b_slice_rows: int
    release: str
    commits: tuple[int, ...] | None = None

    @property
    def shape(self) -> tuple[int, int]:
        """``(m, n)``."""
        return self.m, self.n


@dataclass(frozen=True)
class Tcgen05Manifest:
    """The sm_100a GEMM manifest, every section typed (``global`` is :attr:`layouts`; ``cta_pair``
    None for one CTA per tile; ``cluster`` None without a multicast cluster).

    Law: ``Tcgen05Manifest.from_dict(m.to_dict()) == m`` and ``to_dict`` gives the JSON keys in
    the builder's order; a malformed object is a one-line ``LayoutError`` naming the field.

    >>> Tcgen05Manifest.from_dict({"format": GEMM_FORMAT})
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: manifest: missing field 'kind'
    """
    format: str
    kind: str
    arch: str
    tag: str
    dtype: str
    acc: str
    elem_bytes: int
    bm: int
    bn: int
    bk: int
    stages: int
    consumers: int
    threads: int
    k_inst: int
    k_blocks: int
    splits: int
    group_m: int
    instruction: str
    a: StageOperand
    b: StageOperand
    idesc: InstrDescriptor
    tmem: TmemPlan
    schedule: Schedule
    barriers: RingBarriers
    d_store: DStore
    tma: TmaBoxes
    smem: SmemBudget
    epilogue: Epilogue
    layouts: GlobalLayouts = field(metadata={"key": "global"})
    obligations: tuple[ManifestObligation, ...]
    cta_pair: CtaPair | None = None
    cluster: Cluster | None = None

    @property
    def swizzle(self) -> str:
        """The K ring's swizzle (one home: ``tma.swizzle``)."""
        return self.tma.swizzle

    @property
    def ctas(self) -> int:
        """CTAs per MMA: 2 for the CTA pair, else 1."""
        return self.cta_pair.ctas if self.cta_pair else 1

    @property
    def a_rows(self) -> int:
        """Rows of the A tile each CTA loads (128)."""
        return self.bm // self.ctas

    @property
    def b_rows(self) -> int:
        """Rows of the B tile each CTA loads (BN, or BN / 2 in a pair)."""
        return self.bn // self.ctas

    @property
    def gemm(self) -> GemmManifest:
        """The GEMM specification as the sm_90a helpers read it (tag, dtype, tile, epilogue,
        obligations): the same JSON object read by :class:`GemmManifest`."""
        return GemmManifest.from_dict(self.to_dict())

    def to_dict(self) -> dict:
        """Law: the JSON object of ``manifest.json`` (``swizzle`` repeated after ``instruction``)."""
        items = list(_json_fields(self).items())
        at = next(i for i, (k, _) in enumerate(items) if k == "a")
        return dict(items[:at] + [("swizzle", self.swizzle)] + items[at:])

    @staticmethod
    def from_dict(d: object) -> "Tcgen05Manifest":
        """Law: the typed manifest of the JSON object ``d``; a ``LayoutError`` naming the first
        missing, unknown or ill-typed field, a ``swizzle`` other than ``tma.swizzle``, or a manifest
        that is not an sm_100a GEMM of this format."""
        if not isinstance(d, Mapping):
            raise LayoutError(f"manifest: expected a JSON object, got {type(d).__name__}")
        return _require_sm100(_read(Tcgen05Manifest, d, extra=("swizzle",)), d)


def _json_fields(obj: object) -> dict:
    """Law: a dataclass's fields as JSON, by key in field order, a ``None`` one left out."""
    return {_key(f): _json(getattr(obj, f.name)) for f in fields(obj)
            if getattr(obj, f.name) is not None}


def _require_sm100(man: Tcgen05Manifest, d: Mapping) -> Tcgen05Manifest:
    """Law: ``man`` when it is an sm_100a GEMM manifest of this format, split-K 1 to 16, whose
    top-level ``swizzle`` (if given) is ``tma.swizzle``; a one-line ``LayoutError`` otherwise."""
    if (man.format, man.kind, man.arch) != (GEMM_FORMAT, "gemm", "sm_100a"):
        raise LayoutError(f"manifest: format {man.format!r}, kind {man.kind!r}, arch {man.arch!r}: "
                          f"not an sm_100a GEMM manifest ({GEMM_FORMAT})")
    if not 1 <= man.splits <= 16:
        raise LayoutError(f"manifest: splits {man.splits} is not 1 to 16")
    if d.get("swizzle", man.swizzle) != man.swizzle:
        raise LayoutError(f"manifest: field 'swizzle' is {d['swizzle']!r}, but tma.swizzle is "
                          f"{man.swizzle!r}")
    return man


def typed_tcgen05(man: Tcgen05Manifest | Mapping) -> Tcgen05Manifest:
    """Law: ``man`` itself when typed, else its JSON object read once (:meth:`Tcgen05Manifest.from_dict`).

    >>> typed_tcgen05([])
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: manifest: expected a JSON object, got list
    """
    return man if isinstance(man, Tcgen05Manifest) else Tcgen05Manifest.from_dict(man)
