"""Spec-file source and obligation kinds for shared-memory bank conflicts. Exported as the mappings
``SOURCES`` and ``KINDS``, joined by :func:`verilayout.spec.kinds.registry`.

* source ``shared = "TEXT"`` (with ``shape``, ``dtype`` or ``elem_bits``): a shared
  layout read as ``verilayout banks --smem`` reads it, so ``#ttg.padded_shared`` and
  ``#ttg.shared_linear`` work too (plain ``text`` entries cover the rest); ``stage = N`` picks one
  stage of a staged CuTe layout (3 modes, the stage last: its tile at the base moved by the
  stage's offset); a CuTe thread-value register layout is a ``text`` entry with
  ``thread_value = true`` and ``shape`` (the tile);
* kind ``conflict_free``: ``reg`` accessing ``smem`` has no bank conflict (the proof, or a
  witness: two accesses of one phase in one bank at different words);
* kind ``max_wavefronts``: the worst instruction of the access needs at most
  ``wavefronts`` wavefronts (per instruction, the sum over its phases).

Both take ``elem_bits`` or ``dtype``, and optionally ``instruction`` (default ``auto``:
the widest ``ld.shared``/``st.shared`` vector, or text such as ``ldmatrix.x4``), ``store``,
``num_banks`` and ``target`` (``nvidia``, default; ``gfx942`` / ``gfx950``: the AMD LDS model,
instructions such as ``ds_read_b128``, a 64-lane register layout, wavefronts counted in cycles).

>>> from verilayout.spec import load_spec_text, run_spec
>>> spec = load_spec_text('''
... [layouts.col]                  # lanes 0-15 read column 0 of a 16x32 f32 tensor
... bases = { register = [], lane = [[1, 0], [2, 0], [4, 0], [8, 0], [0, 0]] }
... out_dims = { dim0 = 16, dim1 = 32 }
... [layouts.rows]
... text = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"
... shape = [16, 32]
... [[obligation]]
... kind = "max_wavefronts"
... reg = "col"
... smem = "rows"
... dtype = "f32"
... wavefronts = 8
... ''', "inline.toml")
>>> r = run_spec(spec)[0]; r.verdict.status, r.verdict.counterexample["wavefronts"]
('counterexample', 16)
"""
from __future__ import annotations

from verilayout.errors import LayoutError
from verilayout.core.linear_layout import LinearLayout
from verilayout.core.smt import Verdict
from types import MappingProxyType

from verilayout.frontends.names import read_instruction, read_lds_instruction
from verilayout.core.cute.stages import is_staged, stage_view
from verilayout.frontends.cute_text import looks_like_cute, parse_cute
from verilayout.frontends.shared_text import load_shared
from verilayout.hw.nvidia.banks import as_shared, placed
from verilayout.prove.banks import check_banks, check_lds_banks
from verilayout.spec.format import Kind, elem_bits_of, only_keys

_SHARED_KEYS = {"shared", "shape", "dtype", "elem_bits", "base_address", "description", "stage"}


def _src_shared(entry, spec, where):
    path = spec.path
    w = f"{path}: {where}"
    only_keys(entry, "shared", sorted(_SHARED_KEYS), w)
    text = entry["shared"]
    if not isinstance(text, str):
        raise LayoutError(f"{w}: shared must be layout text")
    bits = None
    if "dtype" in entry or "elem_bits" in entry:
        bits = elem_bits_of(entry.get("elem_bits"), entry.get("dtype"), w)
    base = entry.get("base_address", 0)
    if base and bits is None:
        raise LayoutError(f"{w}: base_address needs the element type (dtype or elem_bits)")
    try:
        if "stage" in entry:
            return _stage_of(text, entry["stage"], base, bits)
        smem = load_shared(text, entry.get("shape"), bits)
        return placed(smem, base, bits) if base or "base_address" in entry else smem
    except LayoutError as e:
        raise LayoutError(f"{w}: {e}") from None


def _stage_of(text: str, stage, base: int, bits: int | None):
    """``stage = N`` of a staged CuTe layout (3 modes, the stage last): that stage's tile at
    ``base`` moved by the stage's offset."""
    if bits is None:
        raise LayoutError("stage needs the element type (dtype or elem_bits)")
    staged = parse_cute(text, elem_bits=bits) if looks_like_cute(text) else None
    if staged is None or not is_staged(staged):
        raise LayoutError("stage applies to a staged CuTe layout (3 modes: the tile's two, then the stage)")
    view = stage_view(staged, stage, bits)
    return placed(as_shared(view.layout, bits), base + view.shift_bytes, bits)


def _report(reg, smem, where, timeout_ms, elem_bits, dtype, instruction, store, num_banks):
    if not isinstance(reg, LinearLayout):
        raise LayoutError(f"{where}: reg must be a distributed layout (register, lane, warp -> dims)")
    if not isinstance(store, bool):
        raise LayoutError(f"{where}: store must be true or false, got {store!r}")
    bits = elem_bits_of(elem_bits, dtype, where)
    try:
        return check_banks(reg, smem, elem_bits=bits, instruction=read_instruction(instruction), num_banks=num_banks,
                       store=store, timeout_ms=timeout_ms)
    except LayoutError as e:
        raise LayoutError(f"{where}: {e}") from None


def _witness(rep) -> dict:
    w = rep.witness
    if w is None:
        return {}
    a, b = w.accesses[0], w.accesses[1]
    return {"instruction": w.instruction, "warp": w.warp, "bank": w.bank,
            "first": _access(a), "second": _access(b)}


def _access(a) -> dict:
    return {"lane": a.lane, "register": a.register, "element": dict(a.element),
            "byte_address": a.byte_address}


def _lds(reg, smem, where, elem_bits, dtype, instruction, store, target):
    if not isinstance(reg, LinearLayout):
        raise LayoutError(f"{where}: reg must be a distributed layout (register, lane, warp -> dims)")
    try:
        return check_lds_banks(reg, smem, elem_bits=elem_bits_of(elem_bits, dtype, where), target=target,
                           instruction=read_lds_instruction(instruction), store=bool(store))
    except LayoutError as e:
        raise LayoutError(f"{where}: {e}") from None


def _conflict_free(spec, where, timeout_ms, reg, smem, elem_bits=None, dtype=None,
                   instruction="auto", store=False, num_banks=32, target="nvidia"):
    """No two accesses of one phase hit one bank at different words."""
    if target != "nvidia":
        return _lds(reg, smem, where, elem_bits, dtype, instruction, store, target).verdict
    rep = _report(reg, smem, where, timeout_ms, elem_bits, dtype, instruction, store, num_banks)
    v = rep.verdict
    if v.status != "counterexample":
        return v
    cex = {"wavefronts": rep.wavefronts, "ideal": rep.ideal_wavefronts, **_witness(rep)}
    return Verdict.fails(cex, f"{rep.conflict_ways}-way bank conflict: {v.reason}", method=v.method)


def _max_wavefronts(spec, where, timeout_ms, reg, smem, wavefronts, elem_bits=None, dtype=None,
                    instruction="auto", store=False, num_banks=32, target="nvidia"):
    """The worst instruction of the access needs at most ``wavefronts`` wavefronts."""
    if isinstance(wavefronts, bool) or not isinstance(wavefronts, int) or wavefronts < 1:
        raise LayoutError(f"{where}: wavefronts must be a positive integer, got {wavefronts!r}")
    if target != "nvidia":
        r = _lds(reg, smem, where, elem_bits, dtype, instruction, store, target)
        what = f"{r.instruction} on {r.target}: {r.wavefronts} cycles per instruction (ideal {r.ideal})"
        if r.wavefronts <= wavefronts:
            return Verdict.holds(f"{what} <= {wavefronts}", method=r.method)
        return Verdict.fails({"wavefronts": r.wavefronts, "limit": wavefronts, "ideal": r.ideal,
                              "bank": r.bank, "accesses": [list(a) for a in r.witness]},
                             f"{what} > {wavefronts}", method=r.method)
    rep = _report(reg, smem, where, timeout_ms, elem_bits, dtype, instruction, store, num_banks)
    what = f"{rep.instruction}: {rep.wavefronts} wavefronts per instruction (ideal {rep.ideal_wavefronts})"
    if rep.exact and rep.conflict_free is not None:
        if rep.wavefronts <= wavefronts:
            return Verdict.holds(f"{what} <= {wavefronts}", method=rep.method)
        return Verdict.fails({"wavefronts": rep.wavefronts, "limit": wavefronts,
                              "ideal": rep.ideal_wavefronts, **_witness(rep)},
                             f"{what} > {wavefronts}", method=rep.method)
    # not exact: the witness is a lower bound (its accesses in one phase, one wavefront
    # for every other phase of the instruction)
    lower = rep.ideal_wavefronts
    if rep.witness is not None:
        lower = len(rep.witness.accesses) + rep.phases_per_instruction - 1
    if lower > wavefronts:
        return Verdict.fails({"wavefronts_at_least": lower, "limit": wavefronts, **_witness(rep)},
                             f"{rep.instruction}: at least {lower} wavefronts > {wavefronts}",
                             method=rep.method)
    return Verdict.unknown(f"{rep.instruction}: the solver could not settle the wavefront count "
                           f"(at least {lower}); cannot decide <= {wavefronts}", method=rep.method)


_PARAMS = {"reg": "layout", "smem": "layout", "elem_bits": "optional", "dtype": "optional",
           "instruction": "optional", "store": "optional", "num_banks": "optional", "target": "optional"}

SOURCES = MappingProxyType({"shared": _src_shared})
KINDS = MappingProxyType({
    "conflict_free": Kind(_conflict_free, MappingProxyType(_PARAMS),
                          "no two accesses of one phase hit one bank at different words"),
    "max_wavefronts": Kind(_max_wavefronts, MappingProxyType({**_PARAMS, "wavefronts": "required"}),
                           "the worst instruction needs at most `wavefronts` wavefronts"),
})
