"""z3 bit-vector encodings of layouts, and the one answer type every proof returns.

Every question verilayout answers ends in a :class:`Verdict`:

* ``proved``: the claim holds for every input (z3 said the negation is unsat,
  or a complete GF(2) argument was made);
* ``counterexample``: a concrete input breaks the claim; ``counterexample`` holds
  the inputs and both sides' values;
* ``unknown``: the solver gave up (timeout, resource limit). Never reported as proved.

>>> import z3
>>> x = z3.BitVec("x", 4)
>>> check_claim(x ^ x == 0, variables={"x": x}).status
'proved'
>>> v = check_claim(z3.UGT(x + 1, x), variables={"x": x}, show={"x+1": x + 1})
>>> v.status, v.counterexample
('counterexample', {'x': 15, 'x+1': 0})
"""
from __future__ import annotations

import contextlib
import contextvars
import json
import os
import re
from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping

from verilayout.bits import index_bits, log2
from verilayout.core import gf2
from verilayout.errors import LayoutError
from verilayout.core.linear_layout import LinearLayout

DEFAULT_TIMEOUT_MS = 30_000

PROVED = "proved"
COUNTEREXAMPLE = "counterexample"
UNKNOWN = "unknown"


@dataclass(frozen=True)
class Verdict:
    """Outcome of a proof obligation.

    ``status`` is ``"proved" | "counterexample" | "unknown"``; ``counterexample``
    is a dict (inputs and both sides' values) or None; ``reason`` is one line.

    >>> Verdict.holds("bases equal").proved
    True
    """

    status: str
    reason: str
    counterexample: dict | None = None
    method: str = ""
    details: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.status not in (PROVED, COUNTEREXAMPLE, UNKNOWN):
            raise ValueError(f"bad verdict status {self.status!r}")
        if self.status == COUNTEREXAMPLE and self.counterexample is None:
            raise ValueError("a counterexample verdict needs the counterexample")

    @property
    def proved(self) -> bool:
        return self.status == PROVED

    @classmethod
    def holds(cls, reason: str, method: str = "", **details) -> "Verdict":
        return cls(PROVED, reason, None, method, details)

    @classmethod
    def fails(cls, counterexample: dict, reason: str, method: str = "", **details) -> "Verdict":
        return cls(COUNTEREXAMPLE, reason, dict(counterexample), method, details)

    @classmethod
    def unknown(cls, reason: str, method: str = "", **details) -> "Verdict":
        return cls(UNKNOWN, reason, None, method, details)

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {"status": self.status, "proved": self.proved, "reason": self.reason,
                "counterexample": self.counterexample, "method": self.method}

    def __bool__(self) -> bool:  # pragma: no cover - guard against `if verdict:`
        raise TypeError("use verdict.proved, not bool(verdict): unknown is not false")


# ----- SMT-LIB2 certificates ------------------------------------------------------------

@dataclass
class _Recorder:
    directory: str
    prefix: str
    count: int = 0
    files: list = field(default_factory=list)


_RECORDER: contextvars.ContextVar = contextvars.ContextVar("verilayout_smt2", default=None)


@contextlib.contextmanager
def record_smt2(directory: str, prefix: str) -> Iterator[_Recorder]:
    """Within the block, every z3 query is also written to ``directory`` as SMT-LIB2.

    Each file holds the query (declarations, assertions, ``(check-sat)``) and a
    comment ``; expected: unsat|sat|unknown`` with z3's answer; ``<prefix>.json``
    lists them. Another solver can re-check the files (see tests/test_certificates.py).
    """
    os.makedirs(directory, exist_ok=True)
    rec = _Recorder(directory, re.sub(r"[^A-Za-z0-9_.-]+", "_", prefix).strip("_") or "query")
    token = _RECORDER.set(rec)
    try:
        yield rec
    finally:
        _RECORDER.reset(token)
        if rec.files:
            with open(os.path.join(directory, rec.prefix + ".json"), "w", encoding="utf-8") as f:
                json.dump(rec.files, f, indent=1)


def record_query(solver: z3.Solver, result: z3.CheckSatResult, what: str) -> None:
    """Write ``solver``'s query and z3's ``result`` if a :func:`record_smt2` block is active."""
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    rec = _RECORDER.get()
    if rec is None:
        return
    rec.count += 1
    name = f"{rec.prefix}-{rec.count:03d}.smt2"
    expected = "unsat" if result == z3.unsat else "sat" if result == z3.sat else "unknown"
    with open(os.path.join(rec.directory, name), "w", encoding="utf-8") as f:
        f.write(f"; verilayout obligation: {what}\n; expected: {expected}\n")
        f.write("(set-logic ALL)\n" + solver.to_smt2())
    rec.files.append({"file": name, "what": what, "expected": expected})


def solve(solver: z3.Solver) -> z3.CheckSatResult:
    """``solver.check()``, where a Ctrl-C is an interrupt, not an answer.

    Law: z3 takes SIGINT for itself while it checks (its ``ctrl_c`` parameter, on by default),
    stops and answers ``unknown`` ("interrupted from keyboard"); the program's own handler never
    sees the signal. ``solve`` raises SIGINT again in that case, so the handler runs (by default a
    KeyboardInterrupt here; the command line's one line and exit 130); any other answer is returned.

    >>> import z3; s = z3.Solver(); s.add(z3.Bool("p"))
    >>> solve(s)
    sat
    """
    import signal

    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    res = solver.check()
    if res == z3.unknown and solver.reason_unknown() == "interrupted from keyboard":
        signal.raise_signal(signal.SIGINT)
    return res


def check_claim(claim: z3.BoolRef, *, variables: Mapping[str, z3.ExprRef] | None = None,
          show: Mapping[str, z3.ExprRef] | None = None, assumptions=(),
          timeout_ms: int = DEFAULT_TIMEOUT_MS, what: str = "claim") -> Verdict:
    """Prove ``claim`` for all values of its free variables (under ``assumptions``).

    ``variables`` and ``show`` name the expressions reported in a counterexample.

    >>> import z3
    >>> y = z3.BitVec("y", 3)
    >>> check_claim(z3.ULE(y, 7), variables={"y": y}).proved
    True
    """
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    s = z3.Solver()
    s.set("timeout", int(timeout_ms))
    for a in assumptions:
        s.add(a)
    s.add(z3.Not(claim))
    res = solve(s)
    record_query(s, res, what)
    if res == z3.unsat:
        return Verdict.holds(f"{what} holds for every input", method="z3")
    if res == z3.unknown:
        return Verdict.unknown(f"z3 gave up on {what}: {s.reason_unknown()}", method="z3")
    m = s.model()
    cex = {}
    for name, expr in {**(variables or {}), **(show or {})}.items():
        cex[name] = _as_int(m.eval(expr, model_completion=True))
    return Verdict.fails(cex, f"{what} fails at {_fmt(cex)}", method="z3")


def _as_int(v) -> int | bool:
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    if z3.is_bv_value(v):
        return v.as_long()
    if z3.is_int_value(v):
        return v.as_long()
    if z3.is_true(v):
        return True
    if z3.is_false(v):
        return False
    raise LayoutError(f"cannot read solver value {v}")


def _fmt(d: Mapping) -> str:
    return ", ".join(f"{k}={v}" for k, v in d.items())


# ----- encodings ------------------------------------------------------------------------

def input_vars(in_dims: Mapping[str, int], prefix: str = "") -> dict[str, z3.BitVecRef]:
    """One bit-vector per input dim, as wide as the dim needs (at least 1 bit).

    >>> sorted(input_vars({"lane": 32, "warp": 4}))
    ['lane', 'warp']
    """
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    return {n: z3.BitVec(prefix + n, index_bits(s)) for n, s in in_dims.items()}


def in_range(vars: Mapping[str, z3.BitVecRef], in_dims: Mapping[str, int]) -> list[z3.BoolRef]:
    """Constraints ``0 <= v < size`` for dims whose size is not a power of two of the width."""
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    out = []
    for n, v in vars.items():
        size = in_dims[n]
        if size < (1 << v.size()):
            out.append(z3.ULT(v, size))
    return out


def z3_apply_linear(layout: LinearLayout, vars: Mapping[str, z3.BitVecRef],
                    width: int | None = None) -> dict[str, z3.BitVecRef]:
    """Encode ``layout`` as XOR of bases selected by the bits of ``vars``.

    Output dims are ``width`` bits wide (default: just enough for their size).

    >>> import z3
    >>> L = LinearLayout.identity1D(4, "i", "o")
    >>> i = z3.BitVec("i", 2); out = z3_apply_linear(L, {"i": i})
    >>> check_claim(out["o"] == z3.ZeroExt(1, i), variables={"i": i}).proved
    True
    """
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    outs = {}
    for n, size in layout.out_dims.items():
        w = width or max(1, size.bit_length())
        acc = z3.BitVecVal(0, w)
        for in_name, blist in layout.bases.items():
            v = vars[in_name]
            k = layout.out_dim_names.index(n)
            for bit, b in enumerate(blist):
                if b[k]:
                    sel = z3.Extract(bit, bit, v)
                    acc = acc ^ z3.If(sel == 1, z3.BitVecVal(b[k], w), z3.BitVecVal(0, w))
        outs[n] = z3.simplify(acc)
    return outs


@dataclass(frozen=True)
class FunctionLayout:
    """A layout that is an integer function, not necessarily GF(2)-linear.

    ``fn`` maps an input dict to an output dict (ints); ``z3_fn`` maps a dict of
    bit-vectors to a dict of bit-vectors (the encoding used in proofs).
    """

    in_dims: dict
    out_dims: dict
    fn: Callable[[Mapping[str, int]], dict]
    z3_fn: Callable[[Mapping[str, z3.BitVecRef]], dict]
    name: str = "function"

    def apply(self, coords: Mapping[str, int]) -> dict:
        return self.fn(coords)


def as_function(layout) -> FunctionLayout:
    """View a LinearLayout (or anything with ``to_function()``) as a FunctionLayout."""
    if isinstance(layout, FunctionLayout):
        return layout
    if isinstance(layout, LinearLayout):
        return FunctionLayout(layout.in_dims, layout.out_dims, layout.apply,
                              lambda v, L=layout: z3_apply_linear(L, v), "linear")
    if hasattr(layout, "to_function"):
        return layout.to_function()
    raise LayoutError(f"cannot encode {type(layout).__name__} as a z3 function")


def placed(layout, base: int, *, out_dim: str | None = None) -> FunctionLayout:
    """``layout`` placed at ``base``: the outer offset ``base + L`` (every output of ``out_dim``
    moves by the same amount; a swizzle inside ``L`` still acts on ``L``'s own offsets, unlike
    CuTe's inner ``swz(base + L)``, written as an offset inside a ComposedLayout).

    Law: ``placed(L, b).apply(x)[o] == b + L(x)[o]`` for the out dim ``o`` (default: the only
    out dim, or ``offset``), other outputs unchanged; ``base`` is in ``o``'s units (elements for
    CuTe and Triton offsets). A Triton shared layout (in dim ``offset`` to tensor dims,
    bijective) is placed through its inverse: tensor coordinates to ``base + offset`` (dims of
    size 1, such as a single CTA's ``block``, dropped).
    Compare two placed layouts with :func:`equal`.

    >>> L = LinearLayout({"i": [[1], [2]]}, ["offset"])
    >>> placed(L, 64).apply({"i": 3})
    {'offset': 67}
    >>> equal(placed(L, 64), placed(L, 64)).proved
    True
    """
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    if isinstance(base, bool) or not isinstance(base, int) or base < 0:
        raise LayoutError(f"base {base!r}: expected an integer >= 0")
    if isinstance(layout, LinearLayout) and "offset" in layout.in_dims and \
            "offset" not in layout.out_dims:
        layout = layout.sublayout([n for n, k in layout.in_dims.items() if k > 1 or n == "offset"],
                                  [n for n, k in layout.out_dims.items() if k > 1])
        if not layout.is_invertible():
            raise LayoutError("a shared layout (offset -> tensor dims) is placed through its "
                              "inverse; this one is not invertible")
        layout = layout.invert()
    f = as_function(layout)
    outs = list(f.out_dims)
    o = out_dim if out_dim is not None else ("offset" if "offset" in outs else
                                             outs[0] if len(outs) == 1 else None)
    if o is None or o not in outs:
        raise LayoutError(f"placed: name the out dim that is an address (out_dim=; the layout "
                          f"has {outs})")
    size = int(f.out_dims[o])
    top = base + size
    out_dims = {**f.out_dims, o: 1 << max(0, (top - 1).bit_length())}
    width = max(1, top.bit_length()) + 1

    def fn(coords):
        out = dict(f.fn(coords))
        out[o] = base + int(out[o])
        return out

    def z3_fn(vars):
        out = dict(f.z3_fn(vars))
        e = out[o]
        w = max(width, e.size())
        out[o] = _zext(e, w) + z3.BitVecVal(base, w)
        return out

    return FunctionLayout(dict(f.in_dims), out_dims, fn, z3_fn, f"{f.name} at {base}")


def equal(a, b, *, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Verdict:
    """Prove two layouts are the same function (same input and output dims).

    Both GF(2)-linear: decided by comparing bases (a linear map is fixed by its
    bases), and a differing basis is the counterexample. Otherwise z3. Layouts at a base
    address compare on absolute addresses: ``equal(placed(a, base_a), placed(b, base_b))``.

    >>> A = LinearLayout.identity1D(4, "i", "o"); B = LinearLayout({"i": [[1], [3]]}, ["o"])
    >>> v = equal(A, B); v.status, v.counterexample["i"]
    ('counterexample', 2)
    """
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    if not (isinstance(a, LinearLayout) and isinstance(b, LinearLayout)):
        a, b = as_function(a), as_function(b)
    if set(a.in_dims.items()) != set(b.in_dims.items()):
        raise LayoutError(f"input dims differ: {dict(a.in_dims)} vs {dict(b.in_dims)}")
    if set(a.out_dims) != set(b.out_dims):
        raise LayoutError(f"output dims differ: {list(a.out_dims)} vs {list(b.out_dims)}")
    if isinstance(a, LinearLayout) and isinstance(b, LinearLayout):
        if a == b:
            return Verdict.holds("every basis is equal, so the linear maps are equal", method="gf2")
        bb = b.transpose_ins(a.in_dim_names).transpose_outs(a.out_dim_names)
        ab, bbb = a.bases, bb.bases
        for n in a.in_dim_names:
            for i, (x, y) in enumerate(zip(ab[n], bbb[n])):
                if x != y:
                    inp = {m: 0 for m in a.in_dim_names}
                    inp[n] = 1 << i
                    cex = {**inp, "lhs": dict(zip(a.out_dim_names, x)),
                           "rhs": dict(zip(a.out_dim_names, y))}
                    return Verdict.fails(cex, f"layouts differ at {n}={1 << i}: "
                                         f"{cex['lhs']} vs {cex['rhs']}", method="gf2")
        return Verdict.holds("every basis is equal, so the linear maps are equal", method="gf2")
    fa, fb = as_function(a), as_function(b)
    vars = input_vars(fa.in_dims)
    oa, ob = fa.z3_fn(vars), fb.z3_fn(vars)
    width = max(max(e.size() for e in oa.values()), max(e.size() for e in ob.values()))
    claim = z3.And([_zext(oa[n], width) == _zext(ob[n], width) for n in oa])
    show = {**{f"lhs.{n}": oa[n] for n in oa}, **{f"rhs.{n}": ob[n] for n in ob}}
    v = check_claim(claim, variables=vars, show=show, assumptions=in_range(vars, fa.in_dims),
              timeout_ms=timeout_ms, what="layout equality")
    if v.status == COUNTEREXAMPLE:
        c = v.counterexample
        cex = {n: c[n] for n in vars}
        cex["lhs"] = {n: c[f"lhs.{n}"] for n in oa}
        cex["rhs"] = {n: c[f"rhs.{n}"] for n in ob}
        return Verdict.fails(cex, f"layouts differ at {_fmt({n: c[n] for n in vars})}: "
                             f"{cex['lhs']} vs {cex['rhs']}", method="z3")
    return v


def _zext(e: z3.BitVecRef, width: int) -> z3.BitVecRef:
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    return z3.ZeroExt(width - e.size(), e) if e.size() < width else e


def check_injective(layout, *, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Verdict:
    """Prove no two inputs map to the same output (GF(2) rank, or z3)."""
    import z3  # deferred: start-up time (an audit whose checks need no solver never loads z3)
    if isinstance(layout, LinearLayout):
        ns = gf2.nullspace(list(layout.columns))
        if not ns:
            return Verdict.holds("the bases are linearly independent", method="gf2")
        x = ns[0]
        a = _unflatten(layout, x)
        zero = {n: 0 for n in layout.in_dim_names}
        return Verdict.fails({"input_a": a, "input_b": zero, "output": layout.apply(a)},
                             f"{_fmt(a)} and the zero input both map to {layout.apply(a)}",
                             method="gf2")
    f = as_function(layout)
    va, vb = input_vars(f.in_dims, "a_"), input_vars(f.in_dims, "b_")
    oa, ob = f.z3_fn(va), f.z3_fn(vb)
    same_out = z3.And([oa[n] == ob[n] for n in oa])
    diff_in = z3.Or([va[n] != vb[n] for n in va])
    return check_claim(z3.Not(z3.And(same_out, diff_in)),
                 variables={**{f"a.{n}": v for n, v in va.items()},
                            **{f"b.{n}": v for n, v in vb.items()}},
                 assumptions=in_range(va, f.in_dims) + in_range(vb, f.in_dims),
                 timeout_ms=timeout_ms, what="injectivity")


def _unflatten(layout: LinearLayout, x: int) -> dict[str, int]:
    out = {}
    for n, size in layout.in_dims.items():
        b = log2(size)
        out[n] = x & (size - 1)
        x >>= b
    return out
