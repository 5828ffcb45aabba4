"""Brute-force bank counting: the reference the bank analysis is tested against.

Nothing here comes from ``verilayout.prove`` or ``verilayout.hw``: every access of
every instruction of every warp is enumerated (numpy tables of the layouts), its
bytes turned into 4-byte words, and wavefronts counted by the rule of the issue and
of the PTX ISA: per phase, the largest number of distinct words any bank must
deliver; an instruction is the sum of its phases; the report is the worst
instruction. Phases: ``ld/st`` of ``A`` bits per lane serve ``min(lanes,
num_banks*32/max(A, 32))`` consecutive lanes together (whole warp up to 32 bits,
half-warp for 64, quarter-warp for 128); ``ldmatrix``/``stmatrix`` serve one 8x8
matrix (all 32 lanes, one 32-bit word each) per phase.

The tests at the end pin the counter itself on cases small enough to do by hand.
"""
from __future__ import annotations

import numpy as np

from verilayout.core.linear_layout import LinearLayout, identity_standard_nd


def _aligned(reg: LinearLayout, out_dims: dict) -> LinearLayout:
    reg = reg.transpose_outs(list(out_dims))
    return LinearLayout(reg.bases, dict(out_dims), require_surjective=False)


def element_offsets(reg: LinearLayout, smem) -> np.ndarray:
    """Element offset of the element held by every flattened input of ``reg`` (register bits lowest).

    ``smem``: a LinearLayout ``offset[, block] -> dims`` or ``(shape_dict, fn(coords) -> offset)``.
    """
    if isinstance(smem, LinearLayout):
        reg = _aligned(reg, smem.out_dims)
        packed = reg.apply_all()
        table = smem.invert().apply_all()
        return table[packed] & (smem.in_dims["offset"] - 1)
    shape, fn = smem
    reg = _aligned(reg, shape)
    names = list(shape)
    out = np.zeros(reg.total_in_size, dtype=np.int64)
    packed = reg.apply_all()
    for i, p in enumerate(packed.tolist()):
        coords = {}
        for n in names:
            coords[n] = p & (shape[n] - 1)
            p >>= shape[n].bit_length() - 1
        out[i] = fn(coords)
    return out


def _bit_fields(reg: LinearLayout) -> dict:
    """dim -> (shift, nbits) in the flattened input index."""
    out, shift = {}, 0
    for d, size in reg.in_dims.items():
        nb = size.bit_length() - 1
        out[d] = (shift, nb)
        shift += nb
    return out


def find_vector_registers(reg: LinearLayout, offs: np.ndarray, elems: int) -> list[int] | None:
    """Register bits whose elements sit at offsets +1, +2, ... from the element of input 0."""
    fields = _bit_fields(reg)
    shift, nb = fields["register"]
    out = []
    for i in range((elems).bit_length() - 1):
        hit = [j for j in range(nb) if offs[1 << (shift + j)] - offs[0] == 1 << i and j not in out]
        if not hit:
            return None
        out.append(hit[0])
    return out


def count(reg: LinearLayout, smem, elem_bits: int, *, vector_regs=(), phase_lanes=32,
          matrix_regs=None, num_banks: int = 32) -> int:
    """Worst wavefronts per instruction.

    ld/st: ``vector_regs`` are one lane's access, ``phase_lanes`` lanes are served
    together. Matrix ops: give ``matrix_regs`` (the register bits selecting the
    matrix); each matrix (all lanes and the ``vector_regs`` word) is one phase.
    """
    offs = element_offsets(reg, smem)
    fields = _bit_fields(reg)
    idx = np.arange(reg.total_in_size, dtype=np.int64)

    def bits(d):
        s, n = fields.get(d, (0, 0))
        return (idx >> s) & ((1 << n) - 1)

    regv = bits("register")
    zero = [j for j, b in enumerate(reg.bases["register"]) if not any(b)]
    keep = np.ones(len(idx), dtype=bool)
    for j in zero:
        keep &= ((regv >> j) & 1) == 0
    inner = set(vector_regs) | set(matrix_regs or ())
    inst_mask = sum(1 << j for j in range(fields["register"][1]) if j not in inner)
    inst = (regv & inst_mask) | (bits("warp") << 20) | (bits("block") << 26)
    if matrix_regs is None:
        phase = bits("lane") // phase_lanes
    else:
        phase = np.zeros(len(idx), dtype=np.int64)
        for t, j in enumerate(matrix_regs):
            phase |= ((regv >> j) & 1) << t
    nbytes = elem_bits // 8
    rows = []
    for b in range(nbytes):
        byte = offs * nbytes + b
        rows.append(np.stack([inst, phase, (byte // 4) % num_banks, byte // 4], axis=1)[keep])
    cols = np.concatenate(rows)
    # distinct (inst, phase, word) accesses (the word fixes the bank), each column ranked so the
    # triple packs into one integer key
    inst_r = np.unique(cols[:, 0], return_inverse=True)[1].ravel()
    phase_r = np.unique(cols[:, 1], return_inverse=True)[1].ravel()
    words, word_r = np.unique(cols[:, 3], return_inverse=True)
    n_phase, n_word = int(phase_r.max()) + 1, len(words)
    keys = np.unique((inst_r * n_phase + phase_r) * n_word + word_r.ravel())
    ip, bank = keys // n_word, words[keys % n_word] % num_banks
    # distinct words per (inst, phase, bank)
    ipb, per_bank = np.unique(ip * num_banks + bank, return_counts=True)
    ip = ipb // num_banks
    # max over banks per (inst, phase), then summed over the phases of an instruction
    first = np.flatnonzero(np.r_[True, ip[1:] != ip[:-1]])
    worst_phase = np.maximum.reduceat(per_bank, first)
    inst_of = ip[first] // n_phase
    per_inst = np.add.reduceat(worst_phase, np.flatnonzero(np.r_[True, inst_of[1:] != inst_of[:-1]]))
    return int(per_inst.max())


def phase_lanes_for(access_bits: int, lanes: int = 32, num_banks: int = 32) -> int:
    """The issue's rule: whole warp up to 32 bits, half-warp 64, quarter-warp 128 (32 banks)."""
    return min(lanes, num_banks * 32 // max(32, access_bits))


def auto_count(reg: LinearLayout, smem, elem_bits: int, num_banks: int = 32, max_bits: int = 128):
    """(elements per access, wavefronts) for the widest aligned contiguous vector (brute force)."""
    offs = element_offsets(reg, smem)
    elems = max(1, max_bits // elem_bits)
    while elems > 1:
        vec = find_vector_registers(reg, offs, elems)
        if vec is not None and _aligned_everywhere(reg, offs, vec, elems):
            break
        elems //= 2
    vec = find_vector_registers(reg, offs, elems) or []
    lanes = reg.in_dims["lane"]
    return elems, count(reg, smem, elem_bits, vector_regs=vec,
                        phase_lanes=phase_lanes_for(elems * elem_bits, lanes, num_banks), num_banks=num_banks)


def _aligned_everywhere(reg, offs, vec, elems) -> bool:
    """Every access's elements are the consecutive, aligned offsets of one vector."""
    fields = _bit_fields(reg)
    shift, _ = fields["register"]
    vmask = sum(1 << (shift + j) for j in vec)
    idx = np.arange(len(offs))
    base = idx[(idx & vmask) == 0]
    if np.any(offs[base] % elems):
        return False
    for t in range(elems):
        moved = base.copy()
        for i, j in enumerate(vec):
            if (t >> i) & 1:
                moved |= 1 << (shift + j)
        if np.any(offs[moved] != offs[base] + t):
            return False
    return True


# ----- the counter on cases done by hand ------------------------------------------------
