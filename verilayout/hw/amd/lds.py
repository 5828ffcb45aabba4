"""AMD LDS (local data share): banks, the lane groups served together, and wavefront counts.

The rules, with their sources
-----------------------------
1. **Banks.** The LDS is split into banks of 4 bytes, ``bank = (byte_address // 4) % num_banks``:
   32 banks on CDNA3 (gfx942, MI300), 64 on CDNA4 (gfx950, MI350/MI355, whose read bandwidth
   doubles to 256 bytes per clock). Source: nod-ai/amd-shark-ai
   ``docs/amdgpu_kernel_optimization_guide.md``, "Workgroup Memory (LDS)", MI300X and MI355X.
2. **Phases.** A wavefront of 64 lanes is served in *phases*; each phase is a fixed group of
   lanes, not always consecutive (same guide, "Avoiding LDS Bank Conflicts"; Triton PR #11365
   "Refine segment computation to support DS_READ_B128" restates the ``ds_read_b128`` groups):

   ======== ================ ================================================================
   target   access           phases (lanes)
   ======== ================ ================================================================
   gfx942   b8/b16/b32       2 of 32 consecutive lanes
   gfx942   b64              4 of 16 consecutive lanes
   gfx942   ds_read_b128     8: {0-3, 20-23}, {32-35, 52-55}, {4-7, 16-19}, {36-39, 48-51},
                             {8-11, 28-31}, {40-43, 60-63}, {12-15, 24-27}, {44-47, 56-59}
   gfx942   ds_write_b128    8 of 8 consecutive lanes
   gfx950   b8/b16/b32 read  1 of all 64 lanes
   gfx950   b64 read         2 of 32 consecutive lanes
   gfx950   ds_read_b128     4: {0-3, 12-15, 20-23, 24-27}, {32-35, 44-47, 52-55, 56-59},
                             {4-7, 8-11, 16-19, 28-31}, {36-39, 40-43, 48-51, 60-63}
   ======== ================ ================================================================

   Inferred, not published (marked ``inferred`` in :func:`phase_groups`): gfx950 *writes* keep
   the gfx942 groups (the guide doubles only the read bandwidth), and the gfx950 transposing
   reads ``ds_read_b64_tr_b4/b8/b16`` are served like ``ds_read_b64`` (each lane still gives one
   8-byte aligned address).
3. **Affine subspaces.** Every phase group above is an affine subspace of the lane index over
   GF(2): phase 0 is a linear subspace ``V0`` and phase ``k`` is ``V0 xor r_k`` (PR #11365:
   gfx942 ``V0 = span(l0, l1, l2^l4)``, gfx950 ``V0 = span(l0, l1, l2^l3, l2^l4)``).
   :func:`phase_subspace` derives ``V0`` and the coset representatives from the tables and
   refuses a table that is not affine.
4. **Wavefronts.** Inside one phase each bank delivers one dword per cycle; lanes reading the
   same dword share it (broadcast), so a phase takes ``max over banks of distinct dwords`` cycles
   (the guide: "two or more threads accessing different addresses that map to the same bank
   create an LDS bank conflict"); an instruction takes the sum over its phases.

>>> t = target("gfx942")
>>> t.num_banks, [len(g) for g in phase_groups(t, LdsAccess("read", 128))]
(32, [8, 8, 8, 8, 8, 8, 8, 8])
>>> phase_groups(target("gfx950"), LdsAccess("read", 128))[0][:8]
(0, 1, 2, 3, 12, 13, 14, 15)
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from verilayout.bits import is_pow2, log2
from verilayout.core.gf2 import add_to_basis
from verilayout.errors import LayoutError

WAVE = 64  #: lanes of a CDNA wavefront


@dataclass(frozen=True)
class LdsTarget:
    """An AMD target's LDS: ``num_banks`` banks of 4 bytes, ``wave`` lanes per wavefront.

    >>> LdsTarget("gfx950", 64).row_bytes
    256
    """

    name: str
    num_banks: int
    wave: int = WAVE

    @property
    def row_bytes(self) -> int:
        """Bytes one cycle can move: one dword from every bank."""
        return 4 * self.num_banks

    def bank(self, byte_address: int) -> int:
        """``(byte_address // 4) % num_banks`` (rule 1)."""
        return (byte_address // 4) % self.num_banks


TARGETS = {"gfx942": LdsTarget("gfx942", 32), "gfx950": LdsTarget("gfx950", 64)}


def target(name: str) -> LdsTarget:
    """The LDS of ``gfx942`` / ``gfx950`` (``hip:gfx942`` and ``gfx942:sramecc+`` accepted).

    >>> target("hip:gfx950").num_banks
    64
    """
    if not isinstance(name, str):
        raise LayoutError(f"target {name!r}: expected a name such as 'gfx942' or 'gfx950'")
    key = name.strip().lower()
    if key.startswith("hip:"):
        key = key[4:]
    key = key.split(":")[0]
    if key not in TARGETS:
        raise LayoutError(f"target {name!r}: LDS modelled for {', '.join(sorted(TARGETS))}")
    return TARGETS[key]


_TR = ("", "b4", "b8", "b16")


@dataclass(frozen=True)
class LdsAccess:
    """One ``ds_read``/``ds_write`` of ``bits`` per lane (``tr``: the gfx950 transposing read's
    element width, ``ds_read_b64_tr_b16`` -> ``LdsAccess("read", 64, "b16")``).

    >>> LdsAccess("read", 64, "b16").name, LdsAccess("write", 128).name
    ('ds_read_b64_tr_b16', 'ds_write_b128')
    """

    op: str
    bits: int
    tr: str = ""

    def __post_init__(self):
        if self.op not in ("read", "write"):
            raise LayoutError(f"LDS access {self.op!r}: expected 'read' or 'write'")
        if self.bits not in (8, 16, 32, 64, 128):
            raise LayoutError(f"LDS access of {self.bits} bits per lane: modelled 8, 16, 32, 64, 128")
        if self.tr not in _TR or (self.tr and (self.op != "read" or self.bits != 64)):
            raise LayoutError(f"transposing LDS read {self.tr!r}: only ds_read_b64_tr_b4/b8/b16")

    @property
    def name(self) -> str:
        base = f"ds_{self.op}_b{self.bits}"
        return base + (f"_tr_{self.tr}" if self.tr else "")


def _consecutive(size: int, wave: int = WAVE) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(range(s, s + size)) for s in range(0, wave, size))


def _quads(*starts: int) -> tuple[int, ...]:
    return tuple(s + i for s in starts for i in range(4))


#: ds_read_b128 phase groups, in issue order (rule 2; the guide and Triton PR #11365).
READ_B128 = {
    "gfx942": (_quads(0, 20), _quads(32, 52), _quads(4, 16), _quads(36, 48),
               _quads(8, 28), _quads(40, 60), _quads(12, 24), _quads(44, 56)),
    "gfx950": (_quads(0, 12, 20, 24), _quads(32, 44, 52, 56), _quads(4, 8, 16, 28),
               _quads(36, 40, 48, 60)),
}


def phase_groups(t: LdsTarget, access: LdsAccess) -> tuple[tuple[int, ...], ...]:
    """The lane groups of ``access`` on ``t``, in issue order (rule 2).

    Law: the groups partition lanes ``0 .. 63``, and each group moves at most ``row_bytes`` bytes.

    >>> [g[0] for g in phase_groups(target("gfx942"), LdsAccess("read", 64))]
    [0, 16, 32, 48]
    """
    if access.bits == 128:
        if access.op == "read":
            return READ_B128[t.name]
        return _consecutive(8)
    per = 32 if access.bits <= 32 else 16  # gfx942 (and, inferred, gfx950 writes)
    if t.name == "gfx950" and access.op == "read":
        per *= 2
    return _consecutive(per)


def inferred(t: LdsTarget, access: LdsAccess) -> bool:
    """Whether the phase groups of ``access`` on ``t`` are inferred rather than published (rule 2).

    >>> inferred(target("gfx950"), LdsAccess("write", 128)), inferred(target("gfx942"), LdsAccess("write", 128))
    (True, False)
    """
    return t.name == "gfx950" and (access.op == "write" or bool(access.tr))


@dataclass(frozen=True)
class PhaseSpace:
    """Phase groups as cosets ``V0 xor rep``: ``basis`` spans ``V0`` (lane masks), ``reps[k]`` is
    the representative of phase ``k`` (rule 3)."""

    basis: tuple[int, ...]
    reps: tuple[int, ...]

    def lanes(self, k: int) -> tuple[int, ...]:
        """The lanes of phase ``k``, sorted."""
        out = {0}
        for b in self.basis:
            out |= {x ^ b for x in out}
        return tuple(sorted(x ^ self.reps[k] for x in out))


def _span(vectors: Iterable[int]) -> set[int]:
    out = {0}
    for v in vectors:
        out |= {x ^ v for x in out}
    return out


def phase_subspace(groups: Sequence[Sequence[int]]) -> PhaseSpace:
    """``V0`` (a reduced basis of phase 0) and one representative per phase, or LayoutError when
    the groups are not cosets of one subspace (rule 3).

    Law: ``PhaseSpace.lanes(k) == sorted(groups[k])`` for every phase.

    >>> ps = phase_subspace(READ_B128["gfx942"])
    >>> ps.basis, ps.reps[:3]
    ((20, 2, 1), (0, 32, 4))
    """
    g0 = set(groups[0])
    if 0 not in g0 or not is_pow2(len(g0)):
        raise LayoutError("phase 0 must hold lane 0 and a power-of-two number of lanes")
    basis: list[int] = []
    for x in sorted(g0, reverse=True):  # echelon basis of span(g0), highest lanes first
        add_to_basis(basis, x)
    for i in range(len(basis)):  # reduced: no basis vector holds another's leading bit
        for b in basis[i + 1:]:
            basis[i] = min(basis[i], basis[i] ^ b)
    if _span(basis) != g0:
        raise LayoutError(f"phase 0 lanes {sorted(g0)} are not a GF(2) subspace")
    reps = []
    for k, g in enumerate(groups):
        r = min(g)
        if {x ^ r for x in g0} != set(g):
            raise LayoutError(f"phase {k} lanes {sorted(g)} are not phase 0 shifted by one lane index")
        reps.append(r)
    return PhaseSpace(tuple(basis), tuple(reps))


# ----- counting on concrete addresses ----------------------------------------------------------

@dataclass(frozen=True)
class LdsCount:
    """Wavefronts of one instruction: ``per_phase[k]`` cycles for phase ``k``; ``total`` the sum;
    ``ways`` the worst phase; ``witness``: (lane, byte address) pairs of the worst phase that hit
    one bank at distinct dwords (empty when conflict-free), and that ``bank``."""

    access: str
    target: str
    per_phase: tuple[int, ...]
    witness: tuple[tuple[int, int], ...] = ()
    bank: int | None = None

    @property
    def phases(self) -> int:
        return len(self.per_phase)

    @property
    def total(self) -> int:
        return sum(self.per_phase)

    @property
    def ways(self) -> int:
        return max(self.per_phase, default=0)

    @property
    def conflict_free(self) -> bool:
        return self.ways <= 1


def wavefronts(byte_addresses: Sequence[int | None], t: LdsTarget, access: LdsAccess) -> LdsCount:
    """Cycles of one ``access`` whose lane ``i`` touches ``access.bits`` bits at ``byte_addresses[i]``
    (``None``: the lane is inactive), phase by phase (rules 2 and 4).

    Law: a phase costs ``max over banks of distinct dwords``; the result sums over the phases.

    >>> t = target("gfx942")
    >>> wavefronts([16 * i for i in range(64)], t, LdsAccess("read", 128)).total
    8
    >>> wavefronts([128 * i for i in range(64)], t, LdsAccess("read", 32)).ways
    32
    """
    if len(byte_addresses) != t.wave:
        raise LayoutError(f"{access.name} on {t.name}: give {t.wave} lane addresses, got {len(byte_addresses)}")
    nbytes = max(1, access.bits // 8)
    per_phase, best = [], (0, (), None)
    for group in phase_groups(t, access):
        banks: dict[int, dict[int, int]] = {}
        for lane in group:
            a = byte_addresses[lane]
            if a is None:
                continue
            if a % nbytes:
                raise LayoutError(f"{access.name}: lane {lane} address {a} is not {nbytes}-byte aligned")
            for w in range(a // 4, (a + nbytes - 1) // 4 + 1):
                banks.setdefault(w % t.num_banks, {}).setdefault(w, lane)
        ways = max((len(v) for v in banks.values()), default=0)
        per_phase.append(ways)
        if ways > best[0] and ways > 1:
            bank, words = max(banks.items(), key=lambda kv: len(kv[1]))
            best = (ways, tuple((lane, w * 4) for w, lane in sorted(words.items())), bank)
    return LdsCount(access.name, t.name, tuple(per_phase), best[1], best[2])


def ideal(t: LdsTarget, access: LdsAccess) -> int:
    """Cycles of a conflict-free ``access``: one per phase.

    >>> ideal(target("gfx950"), LdsAccess("read", 128)), ideal(target("gfx942"), LdsAccess("read", 32))
    (4, 2)
    """
    return len(phase_groups(t, access))


def lane_bits(t: LdsTarget) -> int:
    """log2 of the wavefront size."""
    return log2(t.wave)


def target_of(ttg_target: str | None) -> LdsTarget | None:
    """The LDS model for a module's ``ttg.target`` (``hip:gfx942`` -> gfx942), ``None`` for other
    targets (``cuda:90``) and unmodelled AMD chips; what the TTGIR audit calls to pick the model.

    >>> target_of("hip:gfx950").num_banks, target_of("cuda:100"), target_of("hip:gfx1100")
    (64, None, None)
    """
    if not isinstance(ttg_target, str) or not ttg_target.strip().lower().startswith("hip:"):
        return None
    try:
        return target(ttg_target)
    except LayoutError:
        return None
