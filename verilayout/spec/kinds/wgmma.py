"""Spec-file sources and obligation kinds for wgmma (register fragments, shared-memory
layouts, descriptors). Exported as the mappings ``SOURCES`` and ``KINDS``,
joined by :func:`verilayout.spec.kinds.registry`.

Sources (a ``[layouts.NAME]`` entry holding the key):

* ``fragment = {shape, operand, dtype, acc}``: a register fragment (PTX ISA 9.7.15.5.1.1) as a
  LinearLayout ``register, lane, warp -> dim0 (row), dim1 (column)``;
* ``descriptor = "0x..."`` or ``{value, arch}`` or ``{start_address, lbo | lbo_field,
  sbo | sbo_field, base_offset, swizzle | layout_type, arch}``: a matrix descriptor
  (bytes for ``start_address``, ``lbo``, ``sbo``; ``*_field`` the encoded value);
* ``canonical = {major, swizzle, dtype | T, m, k, LBO, SBO}``: a row of the PTX
  canonical-layout table (PTX ISA 9.7.15.5.1.2) with the symbols substituted (LBO, SBO in elements);
* ``swizzle_atom = {swizzle, major, dtype}``: a swizzle atom of PTX Table 38 (without
  ``dtype``: in 128-bit elements, as the table draws it);
* ``tile_to_shape = {atom = "NAME", shape = [...], order = [...]}``: CuTe's tile_to_shape.

Obligation kinds: ``descriptor_matches``, ``descriptor_fields``, ``fragment_table``,
``wgmma_n``, ``offsets`` (see ``specs/README.md``).

>>> from verilayout.spec import load_spec_text, run_spec
>>> spec = load_spec_text('''
... [layouts.tile]
... text = "Sw<0,4,3> o smem_ptr[16b](unset) o ((_8,8),(_8,2)):((_8,_64),(_1,512))"
... [layouts.d]
... descriptor = { lbo_field = 64, sbo_field = 8, swizzle = "none" }
... [[obligation]]
... kind = "descriptor_matches"
... descriptor = "d"
... layout = "tile"
... dtype = "f16"
... major = "K"
... ''', "inline.toml")
>>> [r.verdict.status for r in run_spec(spec)]
['proved']
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from verilayout.errors import LayoutError
from verilayout.core.smt import Verdict
from types import MappingProxyType

from verilayout.core.cute import ComposedLayout, Layout, Swizzle, offset_bytes, offset_elements, tile_to_shape
from verilayout.core.cute.stages import is_staged, stage_views
from verilayout.hw.nvidia.descriptor import Descriptor, decode, encode, operand_bits
from verilayout.frontends.names import parse_major, parse_shape, parse_swizzle
from verilayout.hw.nvidia.wgmma import DTYPE_BITS, canonical_layout, dtype_bits, fragment, k_of_dtype, swizzle_atom
from verilayout.prove.wgmma import check_descriptor
from verilayout.spec.format import Kind, only_keys, prefixed

__all__ = ["resolve_descriptor", "fragment_coverage"]


# ----- helpers --------------------------------------------------------------------------------

def _args(entry: Any, key: str, path: str, where: str, allowed: set, required=()) -> dict:
    """The table under ``entry[key]``; only ``key`` and ``description`` may sit beside it."""
    only_keys(entry, key, (key, "description"), f"{path}: {where}")
    args = entry[key]
    if not isinstance(args, dict):
        raise LayoutError(f"{path}: {where}: '{key}' must be a table {{{', '.join(sorted(allowed))}}}")
    unknown = set(args) - set(allowed)
    if unknown:
        raise LayoutError(f"{path}: {where}: unknown keys {sorted(unknown)} in '{key}' "
                          f"(accepted: {', '.join(sorted(allowed))})")
    for r in required:
        if r not in args:
            raise LayoutError(f"{path}: {where}: '{key}' needs '{r}'")
    return args


def _int(v: Any, what: str, where: str, minimum: int = 0) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise LayoutError(f"{where}: {what} must be an integer >= {minimum}, got {v!r}")
    return v


# ----- sources ------------------------------------------------------------------------------

_FRAGMENT_KEYS = {"shape", "operand", "dtype", "acc"}


def _fragment_of(args: dict, where: str):
    return prefixed(where, lambda: fragment(parse_shape(args["shape"]), args["operand"], args["dtype"],
                                            acc=args.get("acc")))


def _src_fragment(entry, spec, where):
    path = spec.path
    args = _args(entry, "fragment", path, where, _FRAGMENT_KEYS, ("shape", "operand", "dtype"))
    return _fragment_of(args, f"{path}: {where}").layout


_DESC_FIELDS = {"start_address", "lbo", "lbo_field", "sbo", "sbo_field", "base_offset",
                "swizzle", "layout_type", "arch"}


def _swizzle(d: dict, where: str) -> str:
    """The descriptor table's ``swizzle`` (default ``none``), read at the door."""
    return prefixed(where, parse_swizzle, d.get("swizzle", "none"), "descriptor")


def _descriptor_from_table(d: dict, where: str):
    """A Descriptor from ``{value, arch}`` or from fields (bytes or encoded fields)."""
    if "value" in d:
        extra = set(d) - {"value", "arch"}
        if extra:
            raise LayoutError(f"{where}: a descriptor 'value' stands alone (with 'arch'); "
                              f"drop {sorted(extra)}")
        return prefixed(where, decode, d["value"], d.get("arch", "sm_90"))
    unknown = set(d) - _DESC_FIELDS
    if unknown:
        raise LayoutError(f"{where}: unknown descriptor keys {sorted(unknown)} (accepted: value, "
                          f"{', '.join(sorted(_DESC_FIELDS))})")
    for a, b in (("lbo", "lbo_field"), ("sbo", "sbo_field"), ("swizzle", "layout_type")):
        if a in d and b in d:
            raise LayoutError(f"{where}: give '{a}' or '{b}', not both")
    arch = d.get("arch", "sm_90")
    if "layout_type" in d or "lbo_field" in d or "sbo_field" in d:
        fields = {}
        for name, key in (("lbo_field", "lbo"), ("sbo_field", "sbo")):
            if name in d:
                fields[name] = _int(d[name], name, where)
            else:
                b = _int(d.get(key, 0), key, where)
                if b % 16:
                    raise LayoutError(f"{where}: {key} = {b} bytes is not a multiple of 16")
                fields[name] = b >> 4
        if "layout_type" in d:
            lt = _int(d["layout_type"], "layout_type", where)
        else:
            lt = prefixed(where, encode, swizzle=_swizzle(d, where), arch=arch).layout_type
        return prefixed(where, Descriptor, _int(d.get("start_address", 0), "start_address", where),
                     fields["lbo_field"], fields["sbo_field"],
                     _int(d.get("base_offset", 0), "base_offset", where), lt, arch)
    return prefixed(where, encode, start_address=d.get("start_address", 0), lbo=d.get("lbo", 0),
                 sbo=d.get("sbo", 0), swizzle=_swizzle(d, where),
                 base_offset=d.get("base_offset", 0), arch=arch)


def _src_descriptor(entry, spec, where):
    path = spec.path
    extra = set(entry) - {"descriptor", "description"}
    if extra:
        raise LayoutError(f"{path}: {where}: unknown keys {sorted(extra)} next to 'descriptor' "
                          "(accepted: descriptor, description)")
    v = entry["descriptor"]
    w = f"{path}: {where}"
    if isinstance(v, dict):
        return _descriptor_from_table(v, w)
    if isinstance(v, (int, str)) and not isinstance(v, bool):
        return prefixed(w, decode, v)
    raise LayoutError(f"{w}: descriptor must be a 64-bit value (\"0x...\") or a table of fields")


def resolve_descriptor(spec, value: Any, where: str):
    """An obligation's ``descriptor``: the name of a ``descriptor`` layout entry, a 64-bit
    value (int or ``"0x..."``), or a table of fields.

    >>> resolve_descriptor(None, "0x4000004000010040", "here").swizzle
    '128B'
    """
    if isinstance(value, str) and spec is not None and value in spec.layouts:
        d = spec.layout(value, where)
        if not isinstance(d, Descriptor):
            raise LayoutError(f"{where}: layout '{value}' is not a descriptor")
        return d
    if isinstance(value, dict):
        return _descriptor_from_table(value, where)
    if isinstance(value, (int, str)) and not isinstance(value, bool):
        return prefixed(where, decode, value)
    raise LayoutError(f"{where}: descriptor must name a descriptor entry, or be a value or a "
                      "table of fields")


def _src_canonical(entry, spec, where):
    path = spec.path
    w = f"{path}: {where}"
    args = _args(entry, "canonical", path, where, {"major", "swizzle", "dtype", "T", "m", "k",
                                                     "LBO", "SBO"}, ("major", "swizzle", "m", "k"))
    if "dtype" in args:
        bits = prefixed(w, dtype_bits, args["dtype"])
        if "T" in args and args["T"] != 128 // bits:
            raise LayoutError(f"{w}: T = {args['T']!r} but {args['dtype']} has T = 128/{bits} = "
                              f"{128 // bits}")
    elif "T" in args:
        t = _int(args["T"], "T", w, 1)
        if 128 % t or t & (t - 1):
            raise LayoutError(f"{w}: T = {t}: expected 128 / (element bits), a power of two")
        bits = 128 // t
    else:
        raise LayoutError(f"{w}: canonical needs 'dtype' or 'T'")
    c = prefixed(w, lambda: canonical_layout(parse_major(args["major"]), parse_swizzle(args["swizzle"])))
    used = {str(s) for mode in c.stride for e in mode for s in getattr(e, "free_symbols", ())}
    for sym in ("LBO", "SBO"):
        if sym in args and sym not in used:
            raise LayoutError(f"{w}: {sym} is not part of the {c.major}-major {c.swizzle} canonical "
                              f"layout ({c.text()}); drop it")
    vals = {k: _int(args[k], k, w, 1 if k in ("m", "k") else 0)
            for k in ("m", "k", "LBO", "SBO") if k in args}
    c = c.subs(T=128 // bits, **vals)
    if not c.is_concrete:
        missing = sorted(({"LBO", "SBO"} & used) - set(vals))
        raise LayoutError(f"{w}: the {c.major}-major {c.swizzle} canonical layout needs {missing}")
    shape, stride = c.concrete()
    return ComposedLayout(Swizzle(c.swizzle_bits, 4, 3), Layout(shape, stride), ptr_bits=bits)


def _src_swizzle_atom(entry, spec, where):
    path = spec.path
    w = f"{path}: {where}"
    args = _args(entry, "swizzle_atom", path, where, {"swizzle", "major", "dtype"},
                 ("swizzle", "major"))
    a = prefixed(w, lambda: swizzle_atom(parse_swizzle(args["swizzle"]), parse_major(args["major"]),
                                         args.get("dtype", "f16")))
    if "dtype" in args:
        shape, stride, bits = a.shape, a.stride, DTYPE_BITS[a.dtype]
    else:                                   # 128-bit elements: the table's own units
        shape, stride, bits = a.units, ((1, a.units[0]) if a.major == "MN" else (a.units[1], 1)), 128
    return ComposedLayout(Swizzle(a.swizzle_bits, 4, 3), Layout(tuple(shape), tuple(stride)),
                          ptr_bits=bits)


def _src_tile_to_shape(entry, spec, where):
    path = spec.path
    w = f"{path}: {where}"
    args = _args(entry, "tile_to_shape", path, where, {"atom", "shape", "order"}, ("atom", "shape"))
    atom = spec.layout(args["atom"], w) if isinstance(args["atom"], str) else None
    if not isinstance(atom, (Layout, ComposedLayout)):
        raise LayoutError(f"{w}: tile_to_shape needs 'atom' naming a CuTe layout entry")
    shape = args["shape"]
    if not isinstance(shape, list) or not all(isinstance(s, int) and s > 0 for s in shape):
        raise LayoutError(f"{w}: shape must be a list of positive integers, got {shape!r}")
    return prefixed(w, tile_to_shape, atom, tuple(shape), args.get("order"))


# ----- kinds --------------------------------------------------------------------------------

def _descriptor_matches(spec, where, timeout_ms, descriptor, layout, dtype, major, k_block=0,
                        base_address=0, mn=None, mn_block=0, mn_dim=0, stage=None):
    """The descriptor reads, for every (mn, k) of one wgmma K-block, the byte where
    ``layout`` (placed at ``base_address``) put that element. A staged CuTe layout (3 modes, the
    stage last, as sm90 collectives declare it) is checked per stage: ``stage = N`` against that
    stage (the descriptor is that stage's, as CUTLASS's ``make_gmma_desc`` builds it on the slice
    ``layout(_, _, N)``), or, without ``stage``, every stage against the descriptor moved by the
    stage's offset (the descriptor is stage 0's)."""
    desc = resolve_descriptor(spec, descriptor, where)
    kw = dict(dtype=dtype, major=prefixed(where, parse_major, major), k_block=k_block, mn=mn, mn_block=mn_block,
              mn_dim=mn_dim, timeout_ms=timeout_ms)
    if stage is not None and not is_staged(layout):
        raise LayoutError(f"{where}: stage applies to a staged CuTe layout (3 modes: M/N, K, stage)")
    if not is_staged(layout):
        return prefixed(where, check_descriptor, desc, layout, base_address=base_address, **kw)
    views = prefixed(where, stage_views, layout, stage, prefixed(where, operand_bits, dtype))
    return _staged_verdict(where, desc, views, base_address, stage is None, kw)


def _staged_verdict(where: str, desc, views: list, base: int, moved: bool, kw: dict) -> Verdict:
    """The descriptor against each stage view (moved by the stage's shift when ``moved``): the
    first verdict that is not a proof, said with its stage, else one proof over every stage."""
    for v in views:
        d = prefixed(where, desc.with_start, desc.start_address + v.shift_bytes) if moved else desc
        got = prefixed(where, check_descriptor, d, v.layout, base_address=base + v.shift_bytes, **kw)
        if not got.proved:
            return replace(got, reason=f"stage {v.stage} (start {d.start_address:#x}, the stage {v.shift_bytes} bytes "
                           f"in): {got.reason}")
    last = got
    what = f"stage {views[0].stage}" if len(views) == 1 and not moved else \
        f"each of the {len(views)} stages (the descriptor moved by the stage's offset)"
    return replace(last, reason=f"{what}: {last.reason}")


_FIELD_NAMES = ("value", "start_address", "start_field", "lbo", "lbo_field", "sbo", "sbo_field",
                "base_offset", "layout_type", "swizzle", "arch", "lbo_mode")


def _descriptor_fields(spec, where, timeout_ms, descriptor, fields):
    """The descriptor's value and fields are as stated (the bitfield of PTX ISA 9.7.15.5.1.2.2, "Matrix Descriptor Format")."""
    desc = resolve_descriptor(spec, descriptor, where)
    if not isinstance(fields, dict) or not fields:
        raise LayoutError(f"{where}: fields must be a table such as {{lbo_field = 16, swizzle = "
                          "\"none\"}}")
    unknown = set(fields) - set(_FIELD_NAMES)
    if unknown:
        raise LayoutError(f"{where}: unknown descriptor fields {sorted(unknown)} (known: "
                          f"{', '.join(_FIELD_NAMES)})")
    for name in _FIELD_NAMES[1:] + _FIELD_NAMES[:1]:     # the value last: fields say more
        if name not in fields:
            continue
        want, got = fields[name], getattr(desc, name)
        if name == "value":
            want = _value_int(want, where)
        if name == "swizzle" and desc.arch == "sm_90":
            want = prefixed(where, parse_swizzle, want)
        if want != got:
            show = (lambda v: f"{v:#018x}") if name == "value" else (lambda v: v)
            return Verdict.fails({"field": name, "expected": show(want), "actual": show(got),
                                  "descriptor": f"{desc.value:#018x}"},
                                 f"descriptor {desc.value:#018x}: {name} is {show(got)}, the "
                                 f"spec says {show(want)}", method="evaluation")
    return Verdict.holds(f"descriptor {desc.value:#018x} has the {len(fields)} stated field(s)",
                         method="evaluation")


def _value_int(v: Any, where: str) -> int:
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, str):
        try:
            return int(v.strip().replace("_", ""), 0)
        except ValueError:
            pass
    raise LayoutError(f"{where}: value {v!r} is not an integer (decimal or 0x...)")


def fragment_coverage(frag) -> tuple[dict | None, int]:
    """``(problem, cells)``: the first element of the ``rows x cols`` tile held by other
    than exactly one ``(thread, element)`` (None: every element exactly once).

    >>> from verilayout.hw.nvidia.wgmma import fragment
    >>> fragment_coverage(fragment((64, 24, 16), "D", "f16"))
    (None, 1536)
    """
    L = frag.layout
    nreg, rows = L.in_dims["register"], L.out_dims["dim0"]
    packed = L.apply_all().reshape(-1, nreg)[:, :frag.registers]  # (thread, element)
    r, c = packed % rows, packed // rows
    inside = (r < frag.rows) & (c < frag.cols)
    if not inside.all():
        t, e = (int(v) for v in np.argwhere(~inside)[0])
        return {"thread": t, "element": e, "coordinate": [int(r[t, e]), int(c[t, e])],
                "problem": "outside the tile"}, frag.rows * frag.cols
    count = np.zeros((frag.rows, frag.cols), dtype=np.int64)
    np.add.at(count, (r.ravel(), c.ravel()), 1)
    bad = np.argwhere(count != 1)
    if bad.size:
        i, j = (int(v) for v in bad[0])
        holders = [[int(t), int(e)] for t, e in np.argwhere((r == i) & (c == j))]
        return {"coordinate": [i, j], "holders": holders,
                "problem": "held by no thread" if not holders else "held more than once"}, \
            frag.rows * frag.cols
    return None, frag.rows * frag.cols


def _fragment_entry(spec, name: Any, where: str) -> dict:
    entry = spec.layouts.get(name) if isinstance(name, str) else None
    if not isinstance(entry, dict) or "fragment" not in entry:
        raise LayoutError(f"{where}: 'fragment' must name a [layouts] entry written "
                          "fragment = {shape, operand, dtype, acc}")
    spec.layout(name, where)          # validates the entry
    return entry["fragment"]


def _fragment_table(spec, where, timeout_ms, fragment, elements=None, registers=None,
                    register_type=None):
    """The PTX ISA 9.7.15.5.1.1 table of a fragment: elements per thread, 32-bit registers and their type;
    and every element of the tile is held by exactly one (thread, element)."""
    frag = _fragment_of(_fragment_entry(spec, fragment, where), where)
    regs32 = frag.registers // frag.elems_per_reg
    for name, want, got in (("elements", elements, frag.registers), ("registers", registers, regs32),
                            ("register_type", register_type, frag.reg_type)):
        if want is not None and want != got:
            return Verdict.fails({"field": name, "expected": want, "actual": got},
                                 f"each thread holds {frag.registers} elements in {regs32} "
                                 f"{frag.reg_type} registers; the spec says {name} = {want!r}",
                                 method="evaluation")
    problem, cells = fragment_coverage(frag)
    if problem is not None:
        return Verdict.fails(problem, f"element {problem['coordinate']} is {problem['problem']}",
                             method="enumeration")
    return Verdict.holds(f"{frag.registers} elements x 128 threads hold each of the {cells} "
                         f"elements of the {frag.rows}x{frag.cols} tile exactly once",
                         method="enumeration")


def _wgmma_n(spec, where, timeout_ms, dtype, acc, n):
    """Exactly the N in ``n`` make a valid m64nNkK wgmma with this multiplicand and
    accumulator type, and each such D fragment holds the 64xN tile exactly once."""
    k = prefixed(where, k_of_dtype, dtype)
    if not isinstance(n, list) or not all(isinstance(x, int) and not isinstance(x, bool)
                                          for x in n):
        raise LayoutError(f"{where}: n must be a list of integers")
    prefixed(where, fragment, (64, 8, k), "D", dtype, acc=acc)     # N = 8 is valid for every type
    claimed = set(n)
    for cand in sorted(set(range(1, 257)) | claimed):
        try:
            frag = fragment((64, cand, k), "D", dtype, acc=acc)
        except LayoutError:
            frag = None
        if (frag is not None) != (cand in claimed):
            return Verdict.fails({"n": cand, "accepted": frag is not None, "claimed": cand in claimed},
                                 f"m64n{cand}k{k} with {dtype} -> {acc} is "
                                 f"{'valid' if frag else 'invalid'}, the spec says "
                                 f"{'valid' if cand in claimed else 'invalid'}", method="enumeration")
        if frag is not None:
            problem, _ = fragment_coverage(frag)
            if problem is not None:
                return Verdict.fails({"n": cand, **problem}, f"m64n{cand}k{k}: element "
                                     f"{problem['coordinate']} is {problem['problem']}",
                                     method="enumeration")
    return Verdict.holds(f"the {len(claimed)} stated N are exactly the valid ones (1..256), and "
                         "each D fragment holds its 64xN tile exactly once", method="enumeration")


def _coord(c: Any):
    if isinstance(c, list):
        return tuple(_coord(x) for x in c)
    return c


def _offsets(spec, where, timeout_ms, layout, points, unit="elements"):
    """A CuTe layout's offset at each stated coordinate (e.g. a figure's cells)."""
    if not isinstance(layout, (Layout, ComposedLayout)):
        raise LayoutError(f"{where}: offsets are stated for CuTe layouts; state a Triton layout's "
                          "points with maps or table (a padded shared layout: coordinates -> offset)")
    if unit not in ("elements", "bytes"):
        raise LayoutError(f"{where}: unit must be 'elements' or 'bytes', not {unit!r}")
    if not isinstance(points, list) or not all(isinstance(p, list) and len(p) == 2 and
                                               isinstance(p[1], int) for p in points):
        raise LayoutError(f"{where}: points must be a list of [coordinate, offset] pairs")
    fn = offset_elements if unit == "elements" else offset_bytes
    for coord, want in points:
        got = prefixed(where, fn, layout, _coord(coord))
        if got != want:
            return Verdict.fails({"coordinate": coord, "expected": want, "actual": got},
                                 f"at {coord} the layout gives {unit} offset {got}, the spec says "
                                 f"{want}", method="evaluation")
    return Verdict.holds(f"all {len(points)} offsets as stated", method="evaluation")


SOURCES = MappingProxyType({"fragment": _src_fragment, "descriptor": _src_descriptor,
                            "canonical": _src_canonical, "swizzle_atom": _src_swizzle_atom,
                            "tile_to_shape": _src_tile_to_shape})
KINDS = MappingProxyType({
    "descriptor_matches": Kind(_descriptor_matches, MappingProxyType(
        {"descriptor": "required", "layout": "layout", "dtype": "required", "major": "required",
         "k_block": "optional", "base_address": "optional", "mn": "optional",
         "mn_block": "optional", "mn_dim": "optional", "stage": "optional"}),
        "the descriptor reads every element where the layout put it (a staged layout: stage = N, or every stage)"),
    "descriptor_fields": Kind(_descriptor_fields, MappingProxyType(
        {"descriptor": "required", "fields": "required"}),
        "the descriptor's decoded fields are as stated"),
    "fragment_table": Kind(_fragment_table, MappingProxyType(
        {"fragment": "required", "elements": "optional", "registers": "optional",
         "register_type": "optional"}),
        "a register fragment holds the stated elements/registers"),
    "wgmma_n": Kind(_wgmma_n, MappingProxyType({"dtype": "required", "acc": "required", "n": "required"}),
                    "the valid N sizes of wgmma for a dtype and accumulator"),
    "offsets": Kind(_offsets, MappingProxyType({"layout": "layout", "points": "required",
                                                "unit": "optional"}),
                    "a CuTe layout's offset at each coordinate (unit elements or bytes)"),
})
