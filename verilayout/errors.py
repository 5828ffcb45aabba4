"""Exceptions shared by every layer of verilayout."""
from __future__ import annotations

import collections.abc
import functools
import inspect
import numbers
import re
import types
import typing


class LayoutError(ValueError):
    """Bad layout input: malformed text, wrong sizes, an operation whose preconditions fail.

    The message is one line that names what is wrong and, for text input, where
    (``"line 1, col 14: expected ',' in shape"``).

    >>> raise LayoutError("in dim 'lane' has size 3, not a power of two")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: in dim 'lane' has size 3, not a power of two
    """


_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f\u2028\u2029\x85]")


def one_line(text: str) -> str:
    """``text`` with newlines and other control characters escaped, so it prints as one line.

    >>> one_line("a\\nFAIL b")
    'a\\\\nFAIL b'
    """
    return _UNPRINTABLE.sub(lambda m: ascii(m.group())[1:-1], str(text))


def public(fn, name: str | None = None):
    """``fn`` as a public entry point: every misuse of it raises :class:`LayoutError` with one
    line naming the function and the argument: arguments that do not bind to its signature (an
    unknown keyword, too many positionals), an argument whose type contradicts a plain annotation
    (``str``, ``int``, ``bool``, a sequence, a mapping or a verilayout class, optionally
    ``| None``), and input nested
    too deeply for Python's recursion limit. The law: ``public(fn)(*a, **k) == fn(*a, **k)``
    whenever the arguments bind and match their annotations and ``fn`` returns.

    >>> def f(text: str, n: int = 1): return text * n
    >>> public(f, "f")("ab", n=2), public(f, "f")(3)
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: f: argument 'text' must be str, got int (3)
    """
    label = name or f"{fn.__module__}.{fn.__qualname__}"
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise LayoutError(f"{label}: {one_line(e)}") from None
        for pname, value in bound.arguments.items():
            why = _annotation_mismatch(fn, pname, value)
            if why:
                raise LayoutError(f"{label}: argument {pname!r} must be {why}, got "
                                  f"{type(value).__name__} ({_short(value)})")
        try:
            return fn(*args, **kwargs)
        except RecursionError:
            raise LayoutError(f"{label}: the input is nested too deeply to read (Python's recursion "
                              "limit); flatten it") from None
    wrapper.__verilayout_public__ = True
    return wrapper


def _short(value) -> str:
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a repr that fails still names the type above
        text = "?"
    return one_line(text if len(text) <= 40 else text[:37] + "...")


@functools.lru_cache(maxsize=512)
def _hints(fn) -> dict:
    """``fn``'s resolved annotations, keyed by function; one that cannot be resolved (a name such as
    ``z3`` or ``np`` that its module imports only inside functions: start-up time) is left out and
    the others are still checked."""
    try:
        return typing.get_type_hints(fn)
    except Exception:  # noqa: BLE001 - resolved one by one below
        pass
    out = {}
    for name, ann in getattr(fn, "__annotations__", {}).items():
        one = types.SimpleNamespace(__annotations__={name: ann}, __globals__=getattr(fn, "__globals__", {}))
        try:
            out.update(typing.get_type_hints(one))
        except Exception:  # noqa: BLE001 - an unresolvable annotation is simply not checked
            continue
    return out


def _annotation_mismatch(fn, pname: str, value) -> str:
    """'' when ``value`` fits ``fn``'s annotation of ``pname`` (or the annotation is not a plain
    one this checks); else the expected kind in words."""
    hint = _hints(fn).get(pname)
    if hint is None:
        return ""
    options = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    words = []
    for opt in options:
        ok = _fits(opt, value)
        if ok is None:
            return ""          # an annotation this does not check: accept
        if ok:
            return ""
        words.append(_word(opt))
    return " or ".join(words)


def _fits(opt, value):
    """True/False when ``opt`` is a plain annotation and ``value`` fits it or not; None otherwise."""
    origin = typing.get_origin(opt) or opt
    if opt is type(None):
        return value is None
    if opt is str:
        return isinstance(value, str)
    if opt is bool:
        return isinstance(value, (bool, numbers.Integral))
    if opt is int:
        return isinstance(value, numbers.Integral)
    if opt is float:
        return isinstance(value, numbers.Real)
    if origin in (list, tuple, collections.abc.Sequence):
        return not isinstance(value, (str, bytes, numbers.Number, collections.abc.Mapping)) and \
            hasattr(value, "__iter__") and hasattr(value, "__len__")
    if origin in (dict, collections.abc.Mapping):
        return isinstance(value, collections.abc.Mapping)
    if inspect.isclass(opt) and opt.__module__.startswith("verilayout."):
        try:                   # verilayout's own classes (LinearLayout, Layout, Surface, ...)
            return isinstance(value, opt)
        except TypeError:      # a Protocol that is not runtime-checkable
            return None
    return None


def _word(opt) -> str:
    if opt is type(None):
        return "None"
    origin = typing.get_origin(opt) or opt
    if origin in (list, tuple, collections.abc.Sequence):
        return "a sequence"
    if origin in (dict, collections.abc.Mapping):
        return "a mapping"
    return getattr(opt, "__name__", str(opt))


def publish(namespace: dict, names, prefix: str) -> None:
    """Make every plain function among ``names`` of a facade's ``namespace`` a :func:`public`
    entry point named ``prefix.name`` (classes and constants stay as they are).

    >>> ns = {"f": lambda text: text}; publish(ns, ["f"], "m"); ns["f"].__verilayout_public__
    True
    """
    for n in names:
        obj = namespace.get(n)
        if inspect.isfunction(obj) and not getattr(obj, "__verilayout_public__", False):
            namespace[n] = public(obj, f"{prefix}.{n}")
