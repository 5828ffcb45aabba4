"""Spec files (``specs/*.toml``) and the runner behind ``verilayout check``.

A spec file names layouts and states obligations about them::

    [layouts.acc]                       # any text verilayout.parse accepts
    text = "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 32, 16]}>"
    shape = [64, 32]

    [layouts.blocked]
    text = "tensor<32x16xf16, #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>>"

    [[obligation]]
    name = "blocked covers every element"
    kind = "surjective"                 # equal | injective | surjective | invertible | ...
    layout = "blocked"

    [[obligation]]
    kind = "equal"
    lhs = "acc"
    rhs = "acc_by_hand"
    expect = "proved"                   # or "counterexample": a known-wrong claim stays wrong

A layout entry is a table with ``text`` (or ``file``, a path relative to the spec,
with optional ``name`` for a TTGIR alias), optional ``shape``, ``swizzle_units``,
``elem_bits``; or a table with ``bases`` / ``in_dims`` / ``out_dims`` (the JSON form
of ``LinearLayout.to_dict``). A bare string is ``text``. Other capabilities add layout
sources and obligation kinds through :func:`register_source` / :func:`register_kind`.

Unknown keys are errors: nothing written in a spec is silently ignored.

>>> spec = load_spec_text('[layouts.l]\\nbases = {lane = [[1], [2]]}\\nout_dims = {dim0 = 4}\\n'
...                       '[[obligation]]\\nkind = "invertible"\\nlayout = "l"\\n', "inline.toml")
>>> [r.verdict.status for r in run_spec(spec)]
['proved']
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from verilayout.errors import LayoutError
from verilayout.core.linear_layout import LinearLayout
from verilayout.core.smt import DEFAULT_TIMEOUT_MS, Verdict

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass(frozen=True)
class Obligation:
    """One claim of a spec file."""

    file: str
    index: int
    name: str
    kind: str
    params: dict
    expect: str = "proved"

    @property
    def id(self) -> str:
        return f"{self.file}::{self.name}"


@dataclass
class Spec:
    """A parsed spec file: its layout entries (unparsed) and obligations."""

    path: str
    layouts: dict
    obligations: list
    _cache: dict = field(default_factory=dict)
    _building: set = field(default_factory=set)

    def layout(self, name: str, where: str) -> Any:
        """The parsed layout called ``name`` (parsed once, then cached)."""
        if name not in self.layouts:
            raise LayoutError(f"{where}: no layout named '{name}' in [layouts] "
                              f"(have {sorted(self.layouts)})")
        if name not in self._cache:
            if name in self._building:
                raise LayoutError(f"{where}: layout '{name}' is defined in terms of itself")
            self._building.add(name)
            try:
                self._cache[name] = _build_layout(self.layouts[name], self.path, f"layouts.{name}")
            finally:
                self._building.discard(name)
        return self._cache[name]


@dataclass(frozen=True)
class Result:
    """An obligation and what the prover said about it."""

    obligation: Obligation
    verdict: Verdict
    seconds: float

    @property
    def ok(self) -> bool:
        return self.verdict.status == self.obligation.expect


# ----- registries ---------------------------------------------------------------------------

_SOURCES: dict[str, Callable[[dict, str, str], Any]] = {}
_KINDS: dict[str, tuple[Callable[..., Verdict], dict]] = {}


def register_source(key: str, fn: Callable[[dict, str, str], Any]) -> None:
    """A layout entry containing ``key`` is built by ``fn(entry, spec_path, where)``."""
    _SOURCES[key] = fn


def register_kind(kind: str, fn: Callable[..., Verdict], params: Mapping[str, str]) -> None:
    """Obligation ``kind`` is proved by ``fn(spec, where, timeout_ms, **params)``.

    ``params`` maps each accepted key to "layout" (a layout name, resolved
    before the call), "required" or "optional" (plain values).
    """
    _KINDS[kind] = (fn, dict(params))


def kinds() -> list[str]:
    _load_plugins()
    return sorted(_KINDS)


# ----- loading -----------------------------------------------------------------------------

_LAYOUT_KEYS = {"text", "file", "name", "shape", "swizzle_units", "elem_bits", "dtype",
                "bases", "in_dims", "out_dims", "description"}


def _build_layout(entry: Any, spec_path: str, where: str) -> Any:
    from verilayout import parse
    if isinstance(entry, str):
        entry = {"text": entry}
    if not isinstance(entry, dict):
        raise LayoutError(f"{spec_path}: {where}: a layout is a string or a table")
    for key, fn in _SOURCES.items():
        if key in entry:
            return fn(entry, spec_path, where)
    unknown = set(entry) - _LAYOUT_KEYS
    if unknown:
        raise LayoutError(f"{spec_path}: {where}: unknown keys {sorted(unknown)} "
                          f"(known: {sorted(_LAYOUT_KEYS | set(_SOURCES))})")
    if "bases" in entry:
        d = {k: entry[k] for k in ("bases", "in_dims", "out_dims") if k in entry}
        if "in_dims" not in d:
            d["in_dims"] = {n: 1 << len(b) for n, b in entry["bases"].items()}
        try:
            return LinearLayout.from_dict(d)
        except LayoutError as e:
            raise LayoutError(f"{spec_path}: {where}: {e}") from None
    if "text" in entry:
        text = entry["text"]
    elif "file" in entry:
        path = os.path.join(os.path.dirname(spec_path), entry["file"])
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise LayoutError(f"{spec_path}: {where}: cannot read {path}: {e.strerror}") from None
    else:
        raise LayoutError(f"{spec_path}: {where}: needs 'text', 'file' or 'bases'")
    kw = {k: entry[k] for k in ("name", "swizzle_units", "elem_bits") if k in entry}
    if "dtype" in entry:
        from verilayout.dtypes import BITS as DTYPE_BITS
        if entry["dtype"] not in DTYPE_BITS:
            raise LayoutError(f"{spec_path}: {where}: unknown dtype {entry['dtype']!r}")
        kw["elem_bits"] = DTYPE_BITS[entry["dtype"]]
    try:
        return parse(text, shape=entry.get("shape"), **kw)
    except LayoutError as e:
        raise LayoutError(f"{spec_path}: {where}: {e}") from None


def load_spec_text(text: str, path: str) -> Spec:
    """Parse the TOML text of a spec file; errors name the file and the entry."""
    _load_plugins()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise LayoutError(f"{path}: {e}") from None
    unknown = set(data) - {"layouts", "obligation", "description"}
    if unknown:
        raise LayoutError(f"{path}: unknown top-level keys {sorted(unknown)} "
                          "(known: layouts, obligation, description)")
    layouts = data.get("layouts", {})
    if not isinstance(layouts, dict):
        raise LayoutError(f"{path}: [layouts] must be a table")
    obs = []
    raw = data.get("obligation", [])
    if not isinstance(raw, list):
        raise LayoutError(f"{path}: obligations are written [[obligation]]")
    names = set()
    for i, ob in enumerate(raw, 1):
        where = f"{path}: obligation {i}"
        kind = ob.get("kind")
        if kind not in _KINDS:
            raise LayoutError(f"{where}: unknown kind {kind!r} (known: {', '.join(sorted(_KINDS))})")
        _, params = _KINDS[kind]
        allowed = set(params) | {"kind", "name", "expect", "description"}
        extra = set(ob) - allowed
        if extra:
            raise LayoutError(f"{where} ({kind}): unknown keys {sorted(extra)} "
                              f"(accepted: {sorted(allowed)})")
        for p, role in params.items():
            if role in ("layout", "required") and p not in ob:
                raise LayoutError(f"{where} ({kind}): missing '{p}'")
        expect = ob.get("expect", "proved")
        if expect not in ("proved", "counterexample"):
            raise LayoutError(f"{where}: expect must be 'proved' or 'counterexample', not {expect!r}")
        name = ob.get("name") or f"{i}-{kind}"
        if name in names:
            raise LayoutError(f"{where}: duplicate obligation name {name!r}")
        names.add(name)
        obs.append(Obligation(path, i, name, kind,
                              {k: v for k, v in ob.items() if k in params}, expect))
    spec = Spec(path, layouts, obs)
    _CURRENT[path] = spec
    return spec


def load_spec(path: str) -> Spec:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise LayoutError(f"cannot read spec {path}: {e.strerror}") from None
    return load_spec_text(text, path)


def collect(paths: list[str]) -> list[str]:
    """Spec files under ``paths`` (directories are searched for ``*.toml``), sorted."""
    files = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                files.extend(os.path.join(root, n) for n in names if n.endswith(".toml"))
        elif os.path.isfile(p):
            files.append(p)
        else:
            raise LayoutError(f"no such spec file or directory: {p}")
    return sorted(files)


# ----- running -----------------------------------------------------------------------------

def run_obligation(spec: Spec, ob: Obligation, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Result:
    """Prove one obligation; bad layout text in it becomes a LayoutError."""
    fn, params = _KINDS[ob.kind]
    where = f"{ob.file}: obligation {ob.index} ({ob.name})"
    args = {}
    for p, role in params.items():
        if p not in ob.params:
            continue
        v = ob.params[p]
        args[p] = spec.layout(v, where) if role == "layout" else v
    t0 = time.perf_counter()
    verdict = fn(spec=spec, where=where, timeout_ms=timeout_ms, **args)
    return Result(ob, verdict, time.perf_counter() - t0)


def run_spec(spec: Spec, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> list[Result]:
    return [run_obligation(spec, ob, timeout_ms) for ob in spec.obligations]


# ----- the basic obligation kinds ------------------------------------------------------------

def _equal(spec, where, timeout_ms, lhs, rhs):
    from verilayout.core.smt import equal
    return equal(lhs, rhs, timeout_ms=timeout_ms)


def _injective(spec, where, timeout_ms, layout):
    from verilayout.core.smt import check_injective
    return check_injective(layout, timeout_ms=timeout_ms)


def _surjective(spec, where, timeout_ms, layout):
    return check_surjective(_linear(layout, where))


def _invertible(spec, where, timeout_ms, layout):
    lin = _linear(layout, where)
    v = check_surjective(lin)
    if not v.proved:
        return v
    from verilayout.core.smt import check_injective
    w = check_injective(lin, timeout_ms=timeout_ms)
    if not w.proved:
        return w
    return Verdict.holds("bijective: the bases span every output bit and are independent",
                         method="gf2")


def _linear(layout, where) -> LinearLayout:
    if isinstance(layout, LinearLayout):
        return layout
    to_linear = getattr(layout, "to_linear", None)
    if to_linear is None:
        raise LayoutError(f"{where}: this obligation needs a GF(2)-linear layout")
    return to_linear()


def check_surjective(layout: LinearLayout) -> Verdict:
    """Prove every output is reached; otherwise name an output no input reaches.

    >>> check_surjective(LinearLayout({"r": [[1]]}, {"o": 4}, False)).counterexample
    {'output': {'o': 2}}
    """
    from verilayout.core import gf2
    table = gf2.echelon(list(layout.columns))
    if len(table) == layout.total_out_bits:
        return Verdict.holds("the bases span every output bit", method="gf2")
    # the lowest output bit not reachable as a leading bit: 1 << bit is not in the span
    for bit in range(layout.total_out_bits):
        if gf2.solve(list(layout.columns), 1 << bit) is None:
            missed = dict(zip(layout.out_dim_names, layout._unpack(1 << bit)))
            return Verdict.fails({"output": missed}, f"no input reaches {missed}", method="gf2")
    raise AssertionError("rank deficit without an unreachable unit vector")  # pragma: no cover


def _enumerate(layout, where, limit=1 << 20):
    lin = _linear(layout, where)
    if lin.total_in_bits > 20:
        raise LayoutError(f"{where}: layout has 2^{lin.total_in_bits} inputs; exhaustive checks "
                          "are limited to 2^20")
    names, sizes = lin.in_dim_names, list(lin.in_dims.values())
    for flat, packed in enumerate(lin.apply_all().tolist()):
        c, x = {}, flat
        for n, sz in zip(names, sizes):
            c[n], x = x % sz, x // sz
        yield c, dict(zip(lin.out_dim_names, lin._unpack(int(packed))))


def _maps(spec, where, timeout_ms, layout, points):
    """Each ``[input, output]`` pair of ``points`` holds."""
    if not isinstance(points, list) or not all(isinstance(p, list) and len(p) == 2 for p in points):
        raise LayoutError(f"{where}: points must be a list of [input-table, output-table] pairs")
    for inp, want in points:
        try:
            got = layout.apply(inp)
        except LayoutError as e:
            raise LayoutError(f"{where}: {e}") from None
        if {k: got.get(k) for k in want} != want or set(want) != set(got):
            return Verdict.fails({"input": inp, "expected": want, "actual": got},
                                 f"at {inp} the layout gives {got}, the spec says {want}",
                                 method="evaluation")
    return Verdict.holds(f"all {len(points)} points map as stated", method="evaluation")


def _formula(spec, where, timeout_ms, layout, outputs):
    """Every output equals a sympy expression of the inputs, checked on every input."""
    import sympy
    if not isinstance(outputs, dict) or not outputs:
        raise LayoutError(f"{where}: outputs must be a table {{out_dim = \"expression\"}}")
    lin = _linear(layout, where)
    unknown = set(outputs) - set(lin.out_dim_names)
    if unknown:
        raise LayoutError(f"{where}: outputs names unknown out dims {sorted(unknown)}")
    syms = {n: sympy.Symbol(n, integer=True, nonnegative=True) for n in lin.in_dim_names}
    exprs = {}
    for k, text in outputs.items():
        try:
            e = sympy.sympify(text, locals={**syms, "xor": _xor_fn()})
        except (sympy.SympifyError, TypeError, SyntaxError) as err:
            raise LayoutError(f"{where}: cannot read formula for {k}: {text!r} ({err})") from None
        extra = {str(f) for f in e.free_symbols} - set(syms)
        if extra:
            raise LayoutError(f"{where}: formula for {k} uses unknown names {sorted(extra)}")
        exprs[k] = sympy.lambdify([syms[n] for n in lin.in_dim_names], e, modules=[
            {"floor": lambda v: v // 1 if isinstance(v, int) else int(v // 1),
             "Mod": lambda a, b: a % b, "xor": lambda a, b: int(a) ^ int(b)}, "math"])
    count = 0
    for c, out in _enumerate(lin, where):
        args = [c[n] for n in lin.in_dim_names]
        for k, f in exprs.items():
            want = int(f(*args))
            if out[k] != want:
                return Verdict.fails({"input": c, "expected": {k: want}, "actual": {k: out[k]}},
                                     f"at {c}: {k} is {out[k]}, the formula {outputs[k]!r} "
                                     f"gives {want}", method="enumeration")
        count += 1
    return Verdict.holds(f"the formulas hold on all {count} inputs (exhaustive)",
                         method="enumeration")


def _xor_fn():
    import sympy

    class xor(sympy.Function):  # noqa: N801 - the name users write
        nargs = 2
    return xor


def _table(spec, where, timeout_ms, layout, rows, value="offset"):
    """A shared layout's offset (or a distributed layout's thread) at each (row, col)."""
    lin = _linear(layout, where)
    if len(lin.out_dims) != 2:
        raise LayoutError(f"{where}: a table is for 2-D layouts")
    if value not in ("offset", "thread"):
        raise LayoutError(f"{where}: value must be 'offset' or 'thread', not {value!r}")
    d0, d1 = lin.out_dim_names
    if len(rows) != lin.out_dims[d0] or any(len(r) != lin.out_dims[d1] for r in rows):
        raise LayoutError(f"{where}: the table is {len(rows)}x{len(rows[0]) if rows else 0} but "
                          f"the layout is {lin.out_dims[d0]}x{lin.out_dims[d1]}")
    held: dict = {}
    lanes = lin.in_dims.get("lane", 1)
    for c, out in _enumerate(lin, where):
        v = c.get("offset", 0) if value == "offset" else c.get("lane", 0) + lanes * c.get("warp", 0)
        held.setdefault((out[d0], out[d1]), set()).add(v)
    for i, row in enumerate(rows):
        for j, want in enumerate(row):
            wants = set(want) if isinstance(want, list) else {want}
            got = held.get((i, j), set())
            if got != wants:
                return Verdict.fails({"element": {d0: i, d1: j}, "expected": sorted(wants),
                                      "actual": sorted(got)},
                                     f"element ({i}, {j}) has {value} {sorted(got)}, the table "
                                     f"says {sorted(wants)}", method="enumeration")
    return Verdict.holds(f"all {len(rows) * len(rows[0])} entries match (exhaustive)",
                         method="enumeration")


def _bases(spec, where, timeout_ms, layout, expected):
    """The layout's bases for the named input dims are exactly ``expected``."""
    lin = _linear(layout, where)
    if not isinstance(expected, dict):
        raise LayoutError(f"{where}: expected must be a table {{in_dim = [[...], ...]}}")
    have = lin.bases
    for n, want in expected.items():
        if n not in have:
            raise LayoutError(f"{where}: no input dim '{n}' (have {lin.in_dim_names})")
        got = have[n]
        if got != want:
            i = next((k for k in range(max(len(got), len(want)))
                      if k >= len(got) or k >= len(want) or got[k] != want[k]), 0)
            return Verdict.fails({"input": {n: 1 << i},
                                  "expected": want[i] if i < len(want) else None,
                                  "actual": got[i] if i < len(got) else None},
                                 f"basis {i} of '{n}' is {got[i] if i < len(got) else 'absent'}, "
                                 f"expected {want[i] if i < len(want) else 'absent'}", method="gf2")
    return Verdict.holds("bases as stated", method="gf2")


def _src_identity(entry, path, where):
    return _factory(entry, path, where, "identity")


def _src_zeros(entry, path, where):
    return _factory(entry, path, where, "zeros")


def _factory(entry, path, where, key):
    args = entry[key]
    extra = set(entry) - {key, "description"}
    if extra or not isinstance(args, dict) or set(args) - {"size", "in", "out"}:
        raise LayoutError(f"{path}: {where}: write {key} = {{size = N, in = \"dim\", out = \"dim\"}}")
    try:
        size, i, o = args["size"], args["in"], args["out"]
    except KeyError as e:
        raise LayoutError(f"{path}: {where}: {key} needs {e}") from None
    fn = LinearLayout.identity1D if key == "identity" else LinearLayout.zeros1D
    try:
        return fn(size, i, o)
    except LayoutError as e:
        raise LayoutError(f"{path}: {where}: {e}") from None


def _src_product(entry, path, where):
    names = entry["product"]
    if set(entry) - {"product", "description"} or not isinstance(names, list) or not names:
        raise LayoutError(f"{path}: {where}: write product = [\"layout\", \"layout\", ...]")
    spec = spec_for(path)
    out = LinearLayout.empty()
    for n in names:
        out = out * _linear(spec.layout(n, f"{path}: {where}"), where)
    return out


_CURRENT: dict = {}


def spec_for(path: str) -> "Spec":
    """The spec being loaded from ``path`` (for sources that refer to other layouts)."""
    return _CURRENT[path]


def prefixed(where: str, fn, *args, **kw):
    """Call ``fn``; a LayoutError it raises is re-raised with ``where: `` in front."""
    try:
        return fn(*args, **kw)
    except LayoutError as e:
        raise LayoutError(f"{where}: {e}") from None

register_source("identity", _src_identity)
register_source("zeros", _src_zeros)
register_source("product", _src_product)
register_kind("maps", _maps, {"layout": "layout", "points": "required"})
register_kind("formula", _formula, {"layout": "layout", "outputs": "required"})
register_kind("table", _table, {"layout": "layout", "rows": "required", "value": "optional"})
register_kind("bases", _bases, {"layout": "layout", "expected": "required"})
register_kind("equal", _equal, {"lhs": "layout", "rhs": "layout"})
register_kind("injective", _injective, {"layout": "layout"})
register_kind("surjective", _surjective, {"layout": "layout"})
register_kind("invertible", _invertible, {"layout": "layout"})

_PLUGINS = ("verilayout.spec.kinds.wgmma", "verilayout.spec.kinds.banks", "verilayout.spec.kinds.blockload")
_plugins_loaded = False


def _load_plugins() -> None:
    """Capabilities register their obligation kinds in modules named in ``_PLUGINS``."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    import importlib
    for name in _PLUGINS:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:
                raise
