"""The spec file format: reading TOML, building its layouts, the obligations it states.

A spec file names layouts and states obligations about them::

    [layouts.blocked]                   # any text verilayout.parse accepts
    text = "tensor<32x16xf16, #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>>"

    [[obligation]]
    name = "blocked covers every element"
    kind = "surjective"                 # see `verilayout check --list-kinds`
    layout = "blocked"
    expect = "proved"                   # or "counterexample": a known-wrong claim stays wrong

A layout entry is a table with exactly one source: ``text``, ``file`` (a path relative
to the spec, with optional ``name`` for a TTGIR alias), ``bases`` (with optional
``in_dims``/``out_dims``, the JSON form of ``LinearLayout.to_dict``) or one of the
sources of the kinds modules (``identity``, ``descriptor``, ``plan``, ...). A bare string
is ``text``. Unknown keys and two sources in one entry are errors: nothing written in a
spec is silently ignored.

Nothing here is global: the kinds and sources a spec may use come in a :class:`Registry`
(``verilayout.spec.kinds.registry()``), and a :class:`Spec` carries the registry it was
loaded with, so sources that refer to other layouts resolve them through the spec itself.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from verilayout.core.linear_layout import LinearLayout
from verilayout.core.smt import Verdict
from verilayout.dtypes import BITS
from verilayout.errors import LayoutError
from verilayout.frontends.triton import parse as parse_layout
from verilayout.frontends.cute_text import parse_cute_tv

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MAX_SPEC_BYTES = 64 << 20
"""The most bytes read from one spec or layout file (64 MiB)."""

EXPECTS = ("proved", "counterexample")
ROLES = ("layout", "required", "optional")


@dataclass(frozen=True)
class Kind:
    """An obligation kind: ``fn(spec, where, timeout_ms, **params) -> Verdict``.

    ``params`` maps each accepted key to its role: ``"layout"`` (a layout name, resolved
    before the call), ``"required"`` or ``"optional"`` (plain values).

    >>> Kind(lambda **kw: None, {"layout": "layout"}, "doc").keys()
    ['layout']
    """

    fn: Callable[..., Verdict]
    params: Mapping[str, str]
    doc: str = ""

    def keys(self) -> list[str]:
        """The keys an obligation of this kind accepts besides kind/name/expect/description."""
        return list(self.params)


@dataclass(frozen=True)
class Registry:
    """The layout sources and obligation kinds a spec may use (immutable mappings).

    A source is ``fn(entry, spec, where) -> layout``: ``entry`` the table, ``spec`` the
    :class:`Spec` being built (to resolve other layouts by name), ``where`` e.g.
    ``"layouts.acc"``.
    """

    sources: Mapping[str, Callable[[dict, "Spec", str], Any]]
    kinds: Mapping[str, Kind]


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
    """A parsed spec file: its layout entries (unparsed), obligations, and the registry.

    Layouts are built on first use and cached in the object (never globally).
    """

    path: str
    layouts: dict
    obligations: list
    registry: Registry
    warnings: tuple = ()
    _cache: dict = field(default_factory=dict, repr=False)
    _building: set = field(default_factory=set, repr=False)

    def layout(self, name: Any, where: str) -> Any:
        """The parsed layout called ``name`` (parsed once, then cached in this spec)."""
        if not isinstance(name, str) or name not in self.layouts:
            raise LayoutError(f"{where}: no layout named {name!r} in [layouts] "
                              f"(have {sorted(self.layouts)})")
        if name not in self._cache:
            if name in self._building:
                raise LayoutError(f"{where}: layout '{name}' is defined in terms of itself")
            self._building.add(name)
            try:
                self._cache[name] = build_layout(self.layouts[name], self, f"layouts.{name}")
            finally:
                self._building.discard(name)
        return self._cache[name]


def prefixed(where: str, fn, *args, **kw):
    """Call ``fn``; a LayoutError it raises is re-raised with ``where: `` in front.

    >>> prefixed("here", int, "7")
    7
    """
    try:
        return fn(*args, **kw)
    except LayoutError as e:
        raise LayoutError(f"{where}: {e}") from None


def only_keys(entry: Mapping, key: str, accepted: Sequence[str], where: str) -> None:
    """Refuse a layout-source entry (``key = ...``) holding a key outside ``accepted``, listed in
    the error in that order. Law: returns None exactly when ``set(entry) <= set(accepted)``.

    >>> only_keys({"plan": {}, "description": "x"}, "plan", ("plan", "description"), "f.toml: x")
    """
    extra = set(entry) - set(accepted)
    if extra:
        raise LayoutError(f"{where}: unknown keys {sorted(extra)} next to '{key}' (accepted: "
                          f"{', '.join(accepted)})")


# ----- reading files ---------------------------------------------------------------------------

def elem_bits_of(elem_bits: Any, dtype: Any, where: str) -> int:
    """The element width of an entry that gives exactly one of ``elem_bits`` and ``dtype``.

    >>> elem_bits_of(None, "bf16", "x"), elem_bits_of(8, None, "x")
    (16, 8)
    """
    if (elem_bits is None) == (dtype is None):
        raise LayoutError(f"{where}: give exactly one of 'elem_bits' and 'dtype'")
    if dtype is not None:
        if dtype not in BITS:
            raise LayoutError(f"{where}: unknown dtype {dtype!r} (known: {', '.join(sorted(BITS))})")
        return BITS[dtype]
    if isinstance(elem_bits, bool) or not isinstance(elem_bits, int) or elem_bits < 1:
        raise LayoutError(f"{where}: elem_bits must be a positive integer, got {elem_bits!r}")
    return elem_bits


def read_text(path: str, what: str = "file", limit: int = MAX_SPEC_BYTES) -> str:
    """The UTF-8 text of ``path``, reading at most ``limit`` bytes; anything else is a LayoutError.

    >>> read_text("/nonexistent/x.toml", "spec")
    Traceback (most recent call last):
    verilayout.errors.LayoutError: cannot read spec /nonexistent/x.toml: No such file or directory
    """
    try:
        if os.path.isdir(path):
            raise LayoutError(f"cannot read {what} {path}: it is a directory")
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise LayoutError(f"cannot read {what} {path}: {e.strerror}") from None
    if len(data) > limit:
        raise LayoutError(f"cannot read {what} {path}: larger than the {limit >> 20} MiB limit")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise LayoutError(f"cannot read {what} {path}: not UTF-8 text "
                          f"(byte 0x{data[e.start]:02x} at offset {e.start})") from None


# ----- layouts ---------------------------------------------------------------------------------

LAYOUT_KEYS = ("text", "file", "name", "shape", "swizzle_units", "elem_bits", "dtype",
               "bases", "in_dims", "out_dims", "description", "thread_value")
_BUILTIN_SOURCES = ("text", "file", "bases")


def build_layout(entry: Any, spec: Spec, where: str) -> Any:
    """Build the layout of one ``[layouts.NAME]`` entry of ``spec``."""
    path = spec.path
    if isinstance(entry, str):
        entry = {"text": entry}
    if not isinstance(entry, dict):
        raise LayoutError(f"{path}: {where}: a layout is a string or a table")
    given = [k for k in (*_BUILTIN_SOURCES, *spec.registry.sources) if k in entry]
    if len(given) > 1:
        raise LayoutError(f"{path}: {where}: give one of {', '.join(repr(g) for g in given)}, "
                          "not several")
    if not given:
        raise LayoutError(f"{path}: {where}: needs one of "
                          f"{', '.join(repr(k) for k in (*_BUILTIN_SOURCES, *spec.registry.sources))}")
    if given[0] in spec.registry.sources:
        return spec.registry.sources[given[0]](entry, spec, where)
    unknown = set(entry) - set(LAYOUT_KEYS)
    if unknown:
        raise LayoutError(f"{path}: {where}: unknown keys {sorted(unknown)} "
                          f"(known: {sorted(set(LAYOUT_KEYS) | set(spec.registry.sources))})")
    if "bases" in entry:
        extra = set(entry) - {"bases", "in_dims", "out_dims", "description"}
        if extra:
            raise LayoutError(f"{path}: {where}: {sorted(extra)} do not apply to 'bases'")
        d = {k: entry[k] for k in ("bases", "in_dims", "out_dims") if k in entry}
        if not isinstance(d["bases"], dict):
            raise LayoutError(f"{path}: {where}: bases must be a table {{in_dim = [[...], ...]}}")
        if "in_dims" not in d:
            d["in_dims"] = {n: 1 << len(b) if isinstance(b, list) else b
                            for n, b in entry["bases"].items()}
        try:
            return LinearLayout.from_dict(d)
        except LayoutError as e:
            raise LayoutError(f"{path}: {where}: {e}") from None
        except (TypeError, ValueError, AttributeError, KeyError) as e:
            raise LayoutError(f"{path}: {where}: malformed bases ({type(e).__name__})") from None
    for k in ("in_dims", "out_dims"):
        if k in entry:
            raise LayoutError(f"{path}: {where}: '{k}' applies only to 'bases'")
    if "text" in entry:
        text = entry["text"]
        if not isinstance(text, str):
            raise LayoutError(f"{path}: {where}: text must be a string")
    else:
        if not isinstance(entry["file"], str):
            raise LayoutError(f"{path}: {where}: file must be a string")
        text = prefixed(f"{path}: {where}", read_text,
                        os.path.join(os.path.dirname(path), entry["file"]), "layout file")
    kw = {k: entry[k] for k in ("name", "swizzle_units", "elem_bits") if k in entry}
    if "dtype" in entry:
        if entry["dtype"] not in BITS:
            raise LayoutError(f"{path}: {where}: unknown dtype {entry['dtype']!r}")
        kw["elem_bits"] = BITS[entry["dtype"]]
    shape = entry.get("shape")
    if shape is not None and not (isinstance(shape, list) and shape and all(
            isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in shape)):
        raise LayoutError(f"{path}: {where}: shape must be a list of positive integers")
    if entry.get("thread_value", False) is not False:
        return _thread_value(entry, text, shape, kw, f"{path}: {where}")
    return prefixed(f"{path}: {where}", parse_layout, text, shape=shape, **kw)


def _thread_value(entry: dict, text: str, shape, kw: dict, where: str) -> Any:
    """``thread_value = true``: the CuTe text is a thread-value layout (mode 0 the thread, mode 1 the
    value) whose index runs over the tile ``shape`` column-major; read as the register layout
    ``register, lane, warp -> dim0, dim1, ...`` (:func:`verilayout.frontends.cute_text.parse_cute_tv`)."""
    if entry["thread_value"] is not True:
        raise LayoutError(f"{where}: thread_value must be true or false")
    if shape is None:
        raise LayoutError(f"{where}: a thread_value layout needs shape = [M, N] (the tile its index runs over)")
    if set(kw) - {"elem_bits"}:
        raise LayoutError(f"{where}: {sorted(set(kw) - {'elem_bits'})} do not apply to a thread_value layout")
    return prefixed(where, parse_cute_tv, text, shape)


# ----- spec files ------------------------------------------------------------------------------

def _toml(text: str, path: str) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise LayoutError(f"{path}: {e}") from None
    except RecursionError:
        raise LayoutError(f"{path}: TOML nested too deeply") from None


def _obligation(ob: Any, i: int, path: str, registry: Registry, names: set) -> Obligation:
    where = f"{path}: obligation {i}"
    if not isinstance(ob, dict):
        raise LayoutError(f"{where}: an obligation is a table")
    kind = ob.get("kind")
    known = ", ".join(sorted(registry.kinds))
    if "kind" not in ob:
        name = f" ({ob['name']})" if isinstance(ob.get("name"), str) else ""
        raise LayoutError(f"{where}{name}: the key 'kind' is missing (one of: {known})")
    if not isinstance(kind, str) or kind not in registry.kinds:
        raise LayoutError(f"{where}: unknown kind {kind!r} (known: {known})")
    params = registry.kinds[kind].params
    allowed = set(params) | {"kind", "name", "expect", "description"}
    extra = set(ob) - allowed
    if extra:
        raise LayoutError(f"{where} ({kind}): unknown keys {sorted(extra)} (accepted: {sorted(allowed)})")
    for p, role in params.items():
        if role in ("layout", "required") and p not in ob:
            raise LayoutError(f"{where} ({kind}): missing '{p}'")
    expect = ob.get("expect", "proved")
    if expect not in EXPECTS:
        raise LayoutError(f"{where}: expect must be 'proved' or 'counterexample', not {expect!r}")
    name = ob.get("name", f"{i}-{kind}")
    if not isinstance(name, str) or not name:
        raise LayoutError(f"{where}: name must be a non-empty string")
    if name in names:
        raise LayoutError(f"{where}: duplicate obligation name {name!r}")
    names.add(name)
    return Obligation(path, i, name, kind, {k: v for k, v in ob.items() if k in params}, expect)


def parse_spec(text: str, path: str, registry: Registry) -> Spec:
    """Parse the TOML text of a spec file; errors name the file and the entry.

    An empty file or one without obligations loads, with a warning in ``Spec.warnings``.
    """
    data = _toml(text, path)
    unknown = set(data) - {"layouts", "obligation", "description"}
    if unknown:
        raise LayoutError(f"{path}: unknown top-level keys {sorted(unknown)} "
                          "(known: layouts, obligation, description)")
    layouts = data.get("layouts", {})
    if not isinstance(layouts, dict):
        raise LayoutError(f"{path}: [layouts] must be a table")
    raw = data.get("obligation", [])
    if not isinstance(raw, list):
        raise LayoutError(f"{path}: obligations are written [[obligation]]")
    names: set = set()
    obs = [_obligation(ob, i, path, registry, names) for i, ob in enumerate(raw, 1)]
    warnings = ()
    if not data:
        warnings = (f"{path}: empty spec file",)
    elif not obs:
        warnings = (f"{path}: no [[obligation]] in this spec file",)
    return Spec(path, layouts, obs, registry, warnings)


def collect(paths: list[str]) -> list[str]:
    """Spec files under ``paths`` (directories are searched for ``*.toml``), sorted.

    >>> collect(["/nonexistent"])
    Traceback (most recent call last):
    verilayout.errors.LayoutError: no such spec file or directory: /nonexistent
    """
    files = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                files.extend(os.path.join(root, n) for n in names if n.endswith(".toml"))
        elif os.path.exists(p):
            files.append(p)
        else:
            raise LayoutError(f"no such spec file or directory: {p}")
    return sorted(files)
