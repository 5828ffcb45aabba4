"""The basic obligation kinds and layout sources of spec files.

Kinds: ``equal`` (lhs, rhs), ``injective``, ``surjective``, ``invertible`` (layout),
``maps`` (layout, points), ``formula`` (layout, outputs), ``table`` (layout, rows, value),
``bases`` (layout, expected). Sources: ``identity``, ``zeros``, ``product``, ``placed``
(a layout at a base address: ``placed = "NAME"``, ``base_address`` in bytes, ``dtype`` or
``elem_bits``; the outer offset ``base + L``, compared by ``equal`` on absolute addresses).

``surjective``/``invertible``/``maps``/``formula``/``table``/``bases`` work on any
GF(2)-linear layout: Triton layouts, and CuTe layouts whose offsets are XORs of per-bit
images (``(_8,_8):(_8,_1)``); other CuTe layouts are refused with the reason.

>>> from verilayout.spec.format import parse_spec, Registry
>>> reg = Registry(SOURCES, KINDS)
>>> spec = parse_spec('[layouts.l]\\ntext = "(_8,_8):(_8,_1)"\\n'
...                   '[[obligation]]\\nkind = "invertible"\\nlayout = "l"\\n', "inline.toml", reg)
>>> KINDS["invertible"].fn(spec, "here", 1000, spec.layout("l", "here")).status
'proved'
"""
from __future__ import annotations

import ast
from fractions import Fraction
from types import MappingProxyType
from typing import Any, Iterator

from verilayout.core import cute, gf2
from verilayout.core.linear_layout import LinearLayout
from verilayout.core.smt import FunctionLayout, Verdict, as_function, check_injective, equal, placed
from verilayout.hw.nvidia.banks import SharedAddressMap
from verilayout.errors import LayoutError
from verilayout.spec.format import Kind, Spec, elem_bits_of, only_keys

ENUMERATION_LIMIT_BITS = 20


def as_linear(layout: Any, where: str) -> LinearLayout:
    """``layout`` as a LinearLayout: itself, its ``to_linear()``, or a GF(2)-linear CuTe layout.

    >>> from verilayout.frontends.triton import parse
    >>> as_linear(parse("(_8,_8):(_8,_1)"), "here").out_dims
    {'offset': 64}
    """
    if isinstance(layout, LinearLayout):
        return layout
    if isinstance(layout, (cute.Layout, cute.ComposedLayout)):
        try:
            reason = cute.why_not_linear(layout, "elements", None)
            if reason:
                raise LayoutError(f"this obligation needs a GF(2)-linear layout ({reason})")
            return cute.to_linear(layout, "elements", None)
        except LayoutError as e:
            raise LayoutError(f"{where}: {e}") from None
    to_linear = getattr(layout, "to_linear", None)
    if to_linear is None:
        name = getattr(layout, "name", type(layout).__name__)
        raise LayoutError(f"{where}: this obligation needs a GF(2)-linear layout; {name} is an address "
                          "map (e.g. a padded layout: pad elements after every interval), not GF(2)-linear "
                          "(equal, injective, maps, formula and table take it)")
    return to_linear()


def address_points(layout: Any, where: str) -> tuple[FunctionLayout, Iterator[tuple[dict, dict]]] | None:
    """For a layout that is an integer function, not GF(2)-linear (a padded shared layout, tensor
    coordinates -> offset; a layout placed at a base address), the function and every (input,
    output) pair, inputs row-major (the first in dim slowest); ``None`` for any other layout.

    >>> from verilayout.hw.nvidia.banks import padded_address_map
    >>> m = padded_address_map(LinearLayout.identity1D(4, "offset", "dim0"), [(2, 1)])
    >>> [o["offset"] for _, o in address_points(m, "here")[1]]
    [0, 1, 3, 4]
    """
    if isinstance(layout, SharedAddressMap):
        layout = layout.to_function()
    if not isinstance(layout, FunctionLayout):
        return None
    names, sizes = list(layout.in_dims), list(layout.in_dims.values())
    total = 1
    for n in sizes:
        total *= n
    if total > 1 << ENUMERATION_LIMIT_BITS:
        raise LayoutError(f"{where}: layout has {total} inputs; exhaustive checks are limited to "
                          f"2^{ENUMERATION_LIMIT_BITS}")

    def points() -> Iterator[tuple[dict, dict]]:
        for flat in range(total):
            c, x = {}, flat
            for n, sz in reversed(list(zip(names, sizes))):
                c[n], x = x % sz, x // sz
            c = {n: c[n] for n in names}
            yield c, layout.apply(c)
    return layout, points()


def check_surjective(layout: LinearLayout) -> Verdict:
    """Prove every output is reached; otherwise name an output no input reaches.

    >>> check_surjective(LinearLayout({"r": [[1]]}, {"o": 4}, False)).counterexample
    {'output': {'o': 2}}
    """
    table = gf2.echelon(list(layout.columns))
    if len(table) == layout.total_out_bits:
        return Verdict.holds("the bases span every output bit", method="gf2")
    for bit in range(layout.total_out_bits):
        if gf2.solve(list(layout.columns), 1 << bit) is None:
            missed = dict(zip(layout.out_dim_names, layout.unpack(1 << bit)))
            return Verdict.fails({"output": missed}, f"no input reaches {missed}", method="gf2")
    raise AssertionError("rank deficit without an unreachable unit vector")  # pragma: no cover


def enumerate_layout(lin: LinearLayout, where: str) -> Iterator[tuple[dict, dict]]:
    """Every (input coordinate, output coordinate) pair, inputs in row-major flat order."""
    if lin.total_in_bits > ENUMERATION_LIMIT_BITS:
        raise LayoutError(f"{where}: layout has 2^{lin.total_in_bits} inputs; exhaustive checks "
                          f"are limited to 2^{ENUMERATION_LIMIT_BITS}")
    names, sizes = lin.in_dim_names, list(lin.in_dims.values())
    for flat, packed in enumerate(lin.apply_all().tolist()):
        c, x = {}, flat
        for n, sz in zip(names, sizes):
            c[n], x = x % sz, x // sz
        yield c, dict(zip(lin.out_dim_names, lin.unpack(int(packed))))


# ----- exact formulas --------------------------------------------------------------------------

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
           ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&",
           ast.BitOr: "|"}


def _integer(v: Fraction, op: str) -> int:
    if v.denominator != 1:
        raise ArithmeticError(f"'{op}' needs integers, got {v}")
    return int(v)


def _apply(op: str, a: Fraction, b: Fraction) -> Fraction:
    if op in ("/", "//", "%") and b == 0:
        raise ArithmeticError("division by zero")
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return a / b
    if op == "//":
        return Fraction(a // b)
    if op == "%":
        return a % b
    if op == "**":
        e = _integer(b, op)
        if abs(e) > 64:
            raise ArithmeticError("exponent too large")
        return a ** e
    x, y = _integer(a, op), _integer(b, op)
    if op in ("<<", ">>") and not 0 <= y <= 64:
        raise ArithmeticError(f"shift by {y}")
    return Fraction({"<<": x << y if op == "<<" else 0, ">>": x >> y if op == ">>" else 0,
                     "&": x & y, "|": x | y, "^": x ^ y}[op])


def compile_formula(text: Any, names: list[str], where: str) -> ast.Expression:
    """Check ``text`` is an integer expression over ``names``; the parsed tree.

    Allowed: integers, the names, ``+ - * / // % ** << >> & |``, ``xor(a, b)``,
    ``floor(x)``, parentheses. ``/`` is exact rational division, ``//`` floor division;
    ``^`` is refused (write ``xor(a, b)`` or ``a ** b``).

    >>> compile_formula("lane // 2", ["lane"], "here") is not None
    True
    """
    if not isinstance(text, str):
        raise LayoutError(f"{where}: a formula is a string, got {text!r}")
    if len(text) > 10_000:
        raise LayoutError(f"{where}: formula longer than 10000 characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise LayoutError(f"{where}: cannot read formula {text!r}") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitXor):
            raise LayoutError(f"{where}: formula {text!r}: '^' is ambiguous; write xor(a, b) "
                              "or a ** b")
        ok = isinstance(node, (ast.Expression, ast.BinOp, ast.UnaryOp, ast.USub, ast.UAdd,
                               ast.Load, *_BINOPS)) \
            or (isinstance(node, ast.Constant) and type(node.value) is int) \
            or (isinstance(node, ast.Name) and (node.id in names or node.id in ("xor", "floor"))) \
            or (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("xor", "floor") and not node.keywords
                and len(node.args) == (2 if node.func.id == "xor" else 1))
        if not ok:
            what = node.id if isinstance(node, ast.Name) else type(node).__name__
            raise LayoutError(f"{where}: formula {text!r}: {what!r} is not allowed "
                              f"(inputs: {', '.join(names)}; operators + - * / // % ** << >> & | "
                              "xor() floor())")
    return tree


def eval_formula(tree: ast.AST, env: dict[str, int]) -> Fraction:
    """The exact value of a compiled formula (a Fraction; ArithmeticError when undefined).

    >>> eval_formula(compile_formula("lane/2 + 1/4", ["lane"], "w"), {"lane": 1})
    Fraction(3, 4)
    """
    if isinstance(tree, ast.Expression):
        return eval_formula(tree.body, env)
    if isinstance(tree, ast.Constant):
        return Fraction(tree.value)
    if isinstance(tree, ast.Name):
        return Fraction(env[tree.id])
    if isinstance(tree, ast.UnaryOp):
        v = eval_formula(tree.operand, env)
        return -v if isinstance(tree.op, ast.USub) else v
    if isinstance(tree, ast.BinOp):
        return _apply(_BINOPS[type(tree.op)], eval_formula(tree.left, env),
                      eval_formula(tree.right, env))
    assert isinstance(tree, ast.Call)
    args = [eval_formula(a, env) for a in tree.args]
    if tree.func.id == "floor":
        return Fraction(args[0].numerator // args[0].denominator)
    return _apply("^", *args)


# ----- the kinds -------------------------------------------------------------------------------

def _equal(spec: Spec, where: str, timeout_ms: int, lhs, rhs) -> Verdict:
    """Same function; address maps (placed layouts) compare on their absolute offsets."""
    try:
        return equal(lhs, rhs, timeout_ms=timeout_ms)
    except LayoutError as e:
        raise LayoutError(f"{where}: {e}") from None


def _injective(spec, where, timeout_ms, layout) -> Verdict:
    if isinstance(layout, (cute.Layout, cute.ComposedLayout)) and not cute.why_not_linear(
            layout, "elements", None):
        layout = as_linear(layout, where)
    try:
        return check_injective(layout, timeout_ms=timeout_ms)
    except LayoutError as e:
        raise LayoutError(f"{where}: {e}") from None


def _surjective(spec, where, timeout_ms, layout) -> Verdict:
    return check_surjective(as_linear(layout, where))


def _invertible(spec, where, timeout_ms, layout) -> Verdict:
    lin = as_linear(layout, where)
    v = check_surjective(lin)
    if not v.proved:
        return v
    w = check_injective(lin, timeout_ms=timeout_ms)
    if not w.proved:
        return w
    return Verdict.holds("bijective: the bases span every output bit and are independent",
                         method="gf2")


def _maps(spec, where, timeout_ms, layout, points) -> Verdict:
    if not isinstance(points, list) or not all(isinstance(p, list) and len(p) == 2
                                               and all(isinstance(x, dict) for x in p)
                                               for p in points):
        raise LayoutError(f"{where}: points must be a list of [input-table, output-table] pairs")
    if not hasattr(layout, "apply"):
        layout = as_function(layout)   # an address map: tensor coordinates -> {"offset": o}
    for inp, want in points:
        try:
            got = layout.apply(inp)
        except LayoutError as e:
            raise LayoutError(f"{where}: {e}") from None
        except (TypeError, ValueError, KeyError) as e:
            raise LayoutError(f"{where}: cannot apply the layout to {inp} ({type(e).__name__})") from None
        if set(want) != set(got) or any(got[k] != want[k] for k in want):
            return Verdict.fails({"input": inp, "expected": want, "actual": got},
                                 f"at {inp} the layout gives {got}, the spec says {want}",
                                 method="evaluation")
    return Verdict.holds(f"all {len(points)} points map as stated", method="evaluation")


def _formula(spec, where, timeout_ms, layout, outputs) -> Verdict:
    """Every output equals an exact integer expression of the inputs, on every input."""
    if not isinstance(outputs, dict) or not outputs:
        raise LayoutError(f"{where}: outputs must be a table {{out_dim = \"expression\"}}")
    fn = address_points(layout, where)
    if fn is None:
        lin = as_linear(layout, where)
        ins, outs, pts = lin.in_dim_names, lin.out_dim_names, enumerate_layout(lin, where)
    else:
        ins, outs, pts = list(fn[0].in_dims), list(fn[0].out_dims), fn[1]
    unknown = set(outputs) - set(outs)
    if unknown:
        raise LayoutError(f"{where}: outputs names unknown out dims {sorted(unknown)} "
                          f"(have {outs})")
    trees = {k: compile_formula(t, ins, f"{where}: formula for {k}")
             for k, t in outputs.items()}
    count = 0
    for c, out in pts:
        for k, tree in trees.items():
            try:
                want = eval_formula(tree, c)
            except ArithmeticError as e:
                raise LayoutError(f"{where}: the formula for {k} cannot be evaluated at {c} "
                                  f"({e})") from None
            if want != out[k]:
                shown: Any = int(want) if want.denominator == 1 else str(want)
                return Verdict.fails({"input": c, "expected": {k: shown}, "actual": {k: out[k]}},
                                     f"at {c}: {k} is {out[k]}, the formula {outputs[k]!r} "
                                     f"gives {shown}", method="enumeration")
        count += 1
    return Verdict.holds(f"the formulas hold on all {count} inputs (exhaustive)",
                         method="enumeration")


def _table(spec, where, timeout_ms, layout, rows, value="offset") -> Verdict:
    """A shared layout's offset (or a distributed layout's thread) at each (row, col); an
    address map (a padded shared layout) gives each element's padded offset."""
    if isinstance(layout, (SharedAddressMap, FunctionLayout)):
        return _address_table(where, layout, rows, value)
    lin = as_linear(layout, where)
    if len(lin.out_dims) != 2:
        raise LayoutError(f"{where}: a table is for 2-D layouts")
    if value not in ("offset", "thread"):
        raise LayoutError(f"{where}: value must be 'offset' or 'thread', not {value!r}")
    needed = ("offset",) if value == "offset" else ("lane",)
    missing = [n for n in needed if n not in lin.in_dims]
    if missing:
        raise LayoutError(f"{where}: value = '{value}' reads input dim '{missing[0]}', which this "
                          f"layout lacks (have {lin.in_dim_names})")
    d0, d1 = lin.out_dim_names
    if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
        raise LayoutError(f"{where}: rows must be a list of lists")
    if len(rows) != lin.out_dims[d0] or any(len(r) != lin.out_dims[d1] for r in rows):
        raise LayoutError(f"{where}: the table is {len(rows)}x{len(rows[0]) if rows else 0} but "
                          f"the layout is {lin.out_dims[d0]}x{lin.out_dims[d1]}")
    held: dict = {}
    lanes = lin.in_dims.get("lane", 1)
    for c, out in enumerate_layout(lin, where):
        v = c["offset"] if value == "offset" else c["lane"] + lanes * c.get("warp", 0)
        held.setdefault((out[d0], out[d1]), set()).add(v)
    for i, row in enumerate(rows):
        for j, want in enumerate(row):
            wants = set(want) if isinstance(want, list) else {want}
            got = held.get((i, j), set())
            if got != wants:
                return Verdict.fails({"element": {d0: i, d1: j}, "expected": sorted(wants, key=str),
                                      "actual": sorted(got)},
                                     f"element ({i}, {j}) has {value} {sorted(got)}, the table "
                                     f"says {sorted(wants, key=str)}", method="enumeration")
    return Verdict.holds(f"all {len(rows) * len(rows[0])} entries match (exhaustive)",
                         method="enumeration")


def _address_table(where: str, layout: SharedAddressMap | FunctionLayout, rows, value: str) -> Verdict:
    """``table`` on an address map (a padded shared layout, a layout placed at a base): the stated
    offset of every element of a 2-D map."""
    fn, pts = address_points(layout, where)
    if value != "offset" or "offset" not in fn.out_dims:
        raise LayoutError(f"{where}: value must be 'offset' for an address map ({fn.name} gives "
                          f"{list(fn.out_dims)}, no threads), not {value!r}")
    dims = list(fn.in_dims.values())
    if len(dims) != 2:
        raise LayoutError(f"{where}: a table is for 2-D layouts")
    if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
        raise LayoutError(f"{where}: rows must be a list of lists")
    if len(rows) != dims[0] or any(len(r) != dims[1] for r in rows):
        raise LayoutError(f"{where}: the table is {len(rows)}x{len(rows[0]) if rows else 0} but "
                          f"the layout is {dims[0]}x{dims[1]}")
    d0, d1 = fn.in_dims
    for c, out in pts:
        want = rows[c[d0]][c[d1]]
        wants = set(want) if isinstance(want, list) else {want}
        if wants != {out["offset"]}:
            return Verdict.fails({"element": c, "expected": sorted(wants, key=str), "actual": [out["offset"]]},
                                 f"element ({c[d0]}, {c[d1]}) has offset {out['offset']}, the table "
                                 f"says {sorted(wants, key=str)}", method="enumeration")
    return Verdict.holds(f"all {dims[0] * dims[1]} entries match (exhaustive)", method="enumeration")


def _bases(spec, where, timeout_ms, layout, expected) -> Verdict:
    """The layout's bases for the named input dims are exactly ``expected``; a padded shared
    layout's are its linear component's (``offset``: logical offset -> element, Triton's
    ``offset_bases``)."""
    if isinstance(layout, SharedAddressMap) and layout.component is not None:
        layout = layout.component
    lin = as_linear(layout, where)
    if not isinstance(expected, dict):
        raise LayoutError(f"{where}: expected must be a table {{in_dim = [[...], ...]}}")
    have = lin.bases
    for n, want in expected.items():
        if n not in have:
            raise LayoutError(f"{where}: no input dim '{n}' (have {lin.in_dim_names})")
        got = have[n]
        if not isinstance(want, list):
            raise LayoutError(f"{where}: expected.{n} must be a list of bases")
        if got != want:
            i = next((k for k in range(max(len(got), len(want)))
                      if k >= len(got) or k >= len(want) or got[k] != want[k]), 0)
            return Verdict.fails({"input": {n: 1 << i},
                                  "expected": want[i] if i < len(want) else None,
                                  "actual": got[i] if i < len(got) else None},
                                 f"basis {i} of '{n}' is {got[i] if i < len(got) else 'absent'}, "
                                 f"expected {want[i] if i < len(want) else 'absent'}", method="gf2")
    return Verdict.holds("bases as stated", method="gf2")


# ----- sources ---------------------------------------------------------------------------------

def _factory(entry: dict, spec: Spec, where: str, key: str) -> LinearLayout:
    path = spec.path
    args = entry[key]
    extra = set(entry) - {key, "description"}
    if extra or not isinstance(args, dict) or set(args) - {"size", "in", "out"}:
        raise LayoutError(f"{path}: {where}: write {key} = {{size = N, in = \"dim\", out = \"dim\"}}")
    try:
        size, i, o = args["size"], args["in"], args["out"]
    except KeyError as e:
        raise LayoutError(f"{path}: {where}: {key} needs {e}") from None
    if not isinstance(size, int) or isinstance(size, bool) or not isinstance(i, str) \
            or not isinstance(o, str):
        raise LayoutError(f"{path}: {where}: {key} needs an integer size and string dim names")
    fn = LinearLayout.identity1D if key == "identity" else LinearLayout.zeros1D
    try:
        return fn(size, i, o)
    except LayoutError as e:
        raise LayoutError(f"{path}: {where}: {e}") from None


def _src_identity(entry: dict, spec: Spec, where: str) -> LinearLayout:
    return _factory(entry, spec, where, "identity")


def _src_zeros(entry: dict, spec: Spec, where: str) -> LinearLayout:
    return _factory(entry, spec, where, "zeros")


def _src_product(entry: dict, spec: Spec, where: str) -> LinearLayout:
    names = entry["product"]
    w = f"{spec.path}: {where}"
    if set(entry) - {"product", "description"} or not isinstance(names, list) or not names:
        raise LayoutError(f"{w}: write product = [\"layout\", \"layout\", ...]")
    out = LinearLayout.empty()
    for n in names:
        try:
            out = out * as_linear(spec.layout(n, w), w)
        except LayoutError:
            raise
        except (TypeError, ValueError) as e:
            raise LayoutError(f"{w}: cannot multiply {n!r} ({e})") from None
    return out


_PLACED_KEYS = {"placed", "base_address", "dtype", "elem_bits", "out_dim", "description"}


def _src_placed(entry: dict, spec: Spec, where: str) -> FunctionLayout:
    """``placed = "NAME"`` at ``base_address`` bytes: ``base + L`` on element offsets (a Triton
    shared layout through its inverse), the element width from ``dtype``/``elem_bits`` or the
    CuTe layout's ``smem_ptr[Nb]``."""
    w = f"{spec.path}: {where}"
    only_keys(entry, "placed", sorted(_PLACED_KEYS), w)
    name = entry["placed"]
    if not isinstance(name, str):
        raise LayoutError(f"{w}: placed must name a [layouts] entry")
    inner = spec.layout(name, w)
    base = entry.get("base_address", 0)
    if isinstance(base, bool) or not isinstance(base, int) or base < 0:
        raise LayoutError(f"{w}: base_address must be a byte address >= 0, got {base!r}")
    if "dtype" in entry or "elem_bits" in entry:
        bits = elem_bits_of(entry.get("elem_bits"), entry.get("dtype"), w)
    else:
        bits = getattr(inner, "elem_bits", None)
    if base and bits is None:
        raise LayoutError(f"{w}: base_address needs the element type (dtype or elem_bits)")
    if base and (base * 8) % bits:
        raise LayoutError(f"{w}: base_address {base:#x} is not a multiple of the element size "
                          f"({bits} bits)")
    out_dim = entry.get("out_dim")
    if out_dim is not None and not isinstance(out_dim, str):
        raise LayoutError(f"{w}: out_dim must be a dim name")
    try:
        return placed(inner, base * 8 // bits if base else 0, out_dim=out_dim)
    except LayoutError as e:
        raise LayoutError(f"{w}: {e}") from None


SOURCES = MappingProxyType({"identity": _src_identity, "zeros": _src_zeros,
                            "product": _src_product, "placed": _src_placed})
KINDS = MappingProxyType({
    "equal": Kind(_equal, MappingProxyType({"lhs": "layout", "rhs": "layout"}),
                  "the two layouts agree on every input (z3 or GF(2))"),
    "injective": Kind(_injective, MappingProxyType({"layout": "layout"}),
                      "no two inputs reach the same output"),
    "surjective": Kind(_surjective, MappingProxyType({"layout": "layout"}),
                       "every output is reached (GF(2)-linear layouts)"),
    "invertible": Kind(_invertible, MappingProxyType({"layout": "layout"}),
                       "injective and surjective (GF(2)-linear layouts)"),
    "maps": Kind(_maps, MappingProxyType({"layout": "layout", "points": "required"}),
                 "each [input, output] pair of points holds"),
    "formula": Kind(_formula, MappingProxyType({"layout": "layout", "outputs": "required"}),
                    "each output equals an exact integer expression of the inputs, on every input"),
    "table": Kind(_table, MappingProxyType({"layout": "layout", "rows": "required",
                                            "value": "optional"}),
                  "the offset (value='offset') or thread (value='thread') at each (row, col)"),
    "bases": Kind(_bases, MappingProxyType({"layout": "layout", "expected": "required"}),
                  "the bases of the named input dims are exactly as stated"),
})
