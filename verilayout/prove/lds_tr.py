"""Banks of gfx950's transposing LDS reads (``ds_read_b64_tr_b16`` / ``_b8``) that Triton 3.9 emits for
an MFMA dot operand whose shared buffer is contiguous along M/N (the AMD backend's
``chooseDsReadTrLayout``).

The model, from the instruction's definition (each lane supplies one 8-byte aligned address; a group
of 16 lanes swaps the loaded data so that every lane receives ``64 / bits`` elements consecutive
along K, one from each of the lanes that read them), and Triton's use of it:

* a lane of the destination layout receives, per instruction, the registers whose bases step K by
  ``1, 2, ..`` (``64 / bits`` elements); the other register bits pick the instruction;
* the 16 lanes of a group read the 8-byte runs (``64 / bits`` elements consecutive along M/N in the
  buffer) that hold the elements the group receives: 16 distinct runs, else the layout is no
  transposed read;
* which lane of the group supplies which run does not change the count, because a group never
  straddles a phase (gfx950 serves 64-bit reads in 2 phases of 32 consecutive lanes); the phases
  are counted by :func:`verilayout.hw.amd.lds.wavefronts` as for ``ds_read_b64`` (that transposing
  reads bank like ``ds_read_b64`` is the LDS model's inference, stated there).

>>> from verilayout.core.linear_layout import LinearLayout
>>> r = tr_read_wavefronts(*_example(), elem_bits=16, target="gfx950", k_dim=0)
>>> r["instruction"], r["wavefronts"], r["ideal"]     # unswizzled rows 128 B apart: 4 rows a bank
('ds_read_b64_tr_b16', 8, 2)
"""
from __future__ import annotations

from typing import Any

from verilayout.core.linear_layout import LinearLayout
from verilayout.errors import LayoutError
from verilayout.hw.amd import lds as amd_lds

__all__ = ["tr_read_wavefronts", "k_registers"]


def _example() -> tuple[LinearLayout, LinearLayout]:
    """A 16 (K) x 64 (N) f16 B operand: lane l of 64 receives K 4*(l // 16)..+3 at N l % 16 (+16 per
    register bit 2), the buffer N-contiguous."""
    reg = LinearLayout({"register": [[1, 0], [2, 0], [0, 16], [0, 32]],
                        "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [4, 0], [8, 0]], "warp": []}, ["dim0", "dim1"])
    off = [[0, 1 << i] for i in range(6)] + [[1 << i, 0] for i in range(4)]
    return reg, LinearLayout({"offset": off}, ["dim0", "dim1"])


def k_registers(reg: LinearLayout, k_dim: int, count: int) -> list[int] | None:
    """The register bits whose bases step dimension ``k_dim`` by 1, 2, .., ``count / 2`` (one lane's
    elements of one transposed read), or None.

    >>> k_registers(_example()[0], 0, 4)
    [0, 1]
    """
    regs = reg.bases.get("register", [])
    out = []
    for j in range(count.bit_length() - 1):
        want = [0] * len(reg.out_dim_names)
        want[k_dim] = 1 << j
        hit = next((i for i, b in enumerate(regs) if list(b) == want), None)
        if hit is None:
            return None
        out.append(hit)
    return out


def _offset_of(smem: Any):
    """element coordinates -> offset in elements: a linear layout by its table, an address map
    (padded layouts) by its own ``offset``."""
    if isinstance(smem, LinearLayout):
        cols = [smem._pack(b) for b in smem.bases["offset"]]
        img = [0] * (1 << len(cols))
        table: dict = {}
        for o in range(len(img)):
            if o:
                img[o] = img[o & (o - 1)] ^ cols[(o & -o).bit_length() - 1]
            table.setdefault(tuple(smem.unpack(img[o])), o)
        return table.get
    names = [f"dim{i}" for i in range(2)]
    memo: dict = {}

    def offset(e: tuple[int, ...]) -> int | None:
        if e not in memo:
            memo[e] = smem.offset(dict(zip(names, e)))
        return memo[e]
    return offset


def _packed(reg: LinearLayout, d: str) -> list[int]:
    return [reg._pack(b) for b in reg.bases.get(d, [])]


def _group_addresses(reg: LinearLayout, base: int, lanes: range, vec: list[int], ctx: tuple) -> list[int]:
    """The byte addresses of the runs one 16-lane group reads for one instruction (``base``: the
    packed image of the instruction's register and warp bits; elements stay packed, the run start
    is the element with the M/N dim's low bits cleared)."""
    _, mn_dim, per, _, _ = ctx
    lane_cols = _packed(reg, "lane")
    regs = _packed(reg, "register")
    shift = sum((reg.out_dims[n] - 1).bit_length() for n in reg.out_dim_names[:mn_dim])
    clear = ~((per - 1) << shift)
    within = [0]
    for j in vec:
        within += [w ^ regs[j] for w in within]
    runs = set()
    for lane in lanes:
        at = base
        for j, c in enumerate(lane_cols):
            if lane >> j & 1:
                at ^= c
        runs.update((at ^ w) & clear for w in within)
    if len(runs) != len(lanes):
        raise LayoutError(f"a 16-lane group receives elements of {len(runs)} runs of {per} along M/N, not 16: "
                          "the layout is no transposed read")
    return [_run_address(tuple(reg.unpack(r)), ctx) for r in sorted(runs)]


def _run_address(run: tuple[int, ...], ctx: tuple) -> int:
    """The byte address of one 8-byte run (checked aligned and contiguous in the buffer, once)."""
    offset_of, mn_dim, per, nbytes, seen = ctx
    if run not in seen:
        base = offset_of(run)
        step = [tuple(x + i if d == mn_dim else x for d, x in enumerate(run)) for i in range(per)]
        if base is None or base % per or [offset_of(e) for e in step] != list(range(base, base + per)):
            raise LayoutError(f"the run at {list(run)} is not {per} aligned elements contiguous in the buffer")
        seen[run] = base * nbytes // per
    return seen[run]


def tr_read_wavefronts(reg: LinearLayout, smem: LinearLayout, *, elem_bits: int, target: str,
                       k_dim: int) -> dict[str, Any]:
    """The worst cycles per ``ds_read_b64_tr_b<elem_bits>`` over every instruction and warp of a
    transposed read of ``smem`` (``offset -> dims``, elements) into ``reg`` (the destination, K along
    ``k_dim``), with the ideal (one per phase), the ways and the worst instruction's witness.

    Law: ``wavefronts == max over (warp, instruction) of amd_lds.wavefronts`` of the runs each
    16-lane group reads (see the module docstring); raises ``LayoutError`` where the layouts are no
    transposed read.
    """
    if elem_bits not in (8, 16) or target != "gfx950":
        raise LayoutError(f"transposed LDS reads: modelled for 8/16-bit elements on gfx950, got "
                          f"{elem_bits}-bit on {target}")
    t = amd_lds.target(target)
    access = amd_lds.LdsAccess("read", 64, f"b{elem_bits}")
    per = 64 // elem_bits
    vec = k_registers(reg, k_dim, per)
    if vec is None or reg.in_dims.get("lane") != t.wave or len(reg.out_dim_names) != 2:
        raise LayoutError(f"the destination does not give each lane {per} registers consecutive along K")
    ctx = (_offset_of(smem), 1 - k_dim, per, 8, {})
    others = [i for i in range(len(reg.bases["register"])) if i not in vec]
    worst = None
    regs, warps = _packed(reg, "register"), _packed(reg, "warp")
    for warp in range(reg.in_dims.get("warp", 1)):
        for sel in range(1 << len(others)):
            base = 0
            for j, c in enumerate(warps):
                base ^= c if warp >> j & 1 else 0
            for j, r in enumerate(others):
                base ^= regs[r] if sel >> j & 1 else 0
            addrs = []
            for g in range(0, t.wave, 16):
                addrs += _group_addresses(reg, base, range(g, g + 16), vec, ctx)
            cnt = amd_lds.wavefronts(addrs, t, access)
            if worst is None or cnt.total > worst.total:
                worst = cnt
    ideal = amd_lds.ideal(t, access)
    return {"instruction": access.name, "wavefronts": worst.total, "ideal": ideal,
            "ways": max(1, worst.total // ideal), "witness": [list(w) for w in worst.witness], "bank": worst.bank,
            "instructions_per_wave": 1 << len(others), "vector_elems": per,
            "inferred_phases": amd_lds.inferred(t, access)}
