"""The layering rule of verilayout, checked by reading every module's imports with ``ast``.

Each module belongs to one layer; a module may import only from layers *below* its own, or
from its own capability folder. Run ``python -m verilayout.devtools.layers``: it prints the layer
of every module and every violation, and exits 1 when there is one (an upward import, a sideways
import between two capability folders of one layer, a cycle, or an import inside a function that
is not marked as a deferred optional dependency with ``# deferred:`` on its line).

Two further rules (docs/architecture.md, "The layering rule") are violations too: the ladder (:data:`LADDER`, text read at the
door: ``hw``, ``prove``, ``synth`` and ``emit`` never import ``frontends``; :func:`ladder_findings`)
and no private name (``_x``) imported from another module (:func:`private_imports`). A third:
no text reader (a function named ``parse_*``) is defined in ``hw``, ``prove``, ``synth`` or
``emit`` (:func:`text_readers`). A fourth: compiler text is read at the door, so a module outside
``frontends`` that takes TTGIR or PTX models (:data:`COMPILER_TEXT_MODELS`) uses no regular expression
and calls no ``split``/``rsplit`` beyond the bound :data:`TEXT_SPLITS_ALLOWED` gives it
(:func:`text_splits`). A fifth: the PTX audit has one driver, and its check modules neither call
it back nor call each other's entry points (:func:`ptx_hand_offs`). Every rule is a violation; ``--strict``, which once made reports fail, is
accepted and changes nothing.

>>> layer_of("verilayout.core.gf2")
'core'
>>> rank("verilayout.errors") < rank("verilayout.core.linear_layout") < rank("verilayout.cli.main")
True
"""
from __future__ import annotations

import ast
import functools
import pathlib
import sys
from dataclasses import dataclass

#: Layers from the bottom up. A module's layer is the longest prefix of its dotted name listed
#: here; folders that share a rank are capability folders and may not import each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors",),
    ("bits",),
    ("dtypes",),
    ("core",),
    ("hw",),
    ("frontends",),
    ("prove",),
    ("synth",),
    ("report",),
    ("emit",),
    ("simulate",),
    ("audit",),
    ("spec",),
    ("api",),   # the package's public facades: __init__, banks, blockload, wgmma, cute, views, testing
    ("cli",),
    ("devtools",),
)

#: Facade modules at the package root (the public API, thin re-exports).
API = ("verilayout", "verilayout.banks", "verilayout.blockload", "verilayout.wgmma",
       "verilayout.cute", "verilayout.views", "verilayout.testing",
       "verilayout.triton")

#: Capability folders inside ``hw`` (one per vendor): none of them imports another.
SUBFOLDERS = {"hw": ("nvidia", "amd", "intel")}

PACKAGE = "verilayout"

#: The ladder of docs/architecture.md, ``core < hw < {frontends | prove < synth} < {report, emit < simulate} <
#: {audit, spec} < cli``: a module imports only layers of a lower rank; layers of one rank are
#: side by side and do not import each other.
LADDER: dict[str, int] = {"errors": 0, "bits": 1, "dtypes": 2, "core": 3, "hw": 4, "frontends": 5,
                          "prove": 5, "synth": 6, "report": 7, "emit": 7, "simulate": 8, "audit": 9,
                          "spec": 9, "api": 10, "cli": 11, "devtools": 12}
#: Layers below the door: they take parsed objects and never import ``frontends``.
NO_TEXT: tuple[str, ...] = ("hw", "prove", "synth", "emit")


def layer_of(module: str) -> str:
    """The layer name of a dotted module name.

    >>> layer_of("verilayout.hw.nvidia.wgmma"), layer_of("verilayout.banks")
    ('hw', 'api')
    """
    if module in API:
        return "api"
    parts = module.split(".")
    if len(parts) < 2:
        return "api"
    for group in LAYERS:
        if parts[1] in group:
            return parts[1]
    raise ValueError(f"module {module} is in no layer; add it to verilayout.devtools.layers.LAYERS")


def rank(module: str) -> int:
    """The index of the module's layer in ``LAYERS`` (0 is the bottom).

    >>> rank("verilayout.errors"), rank("verilayout.bits")
    (0, 1)
    """
    name = layer_of(module)
    return next(i for i, g in enumerate(LAYERS) if name in g)


def _folder(module: str) -> str:
    """The capability folder: ``verilayout.hw.nvidia.x`` -> ``hw.nvidia``."""
    parts = module.split(".")
    if len(parts) >= 3 and parts[1] in SUBFOLDERS and parts[2] in SUBFOLDERS[parts[1]]:
        return ".".join(parts[1:3])
    return layer_of(module)


@dataclass(frozen=True)
class Import:
    """One import of a package module by another, at a line; ``top`` is False inside a function."""
    source: str
    target: str
    line: int
    top: bool
    deferred: bool


def module_name(path: pathlib.Path, root: pathlib.Path) -> str:
    """``root/verilayout/core/gf2.py`` -> ``verilayout.core.gf2`` (packages drop ``__init__``)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(source: str, is_pkg: bool, node: ast.ImportFrom, modules: set[str]) -> list[str]:
    if node.level:
        base = source.split(".") if is_pkg else source.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if not (target == PACKAGE or target.startswith(PACKAGE + ".")):
        return []
    out = []
    for alias in node.names:
        sub = f"{target}.{alias.name}"
        out.append(sub if sub in modules else target)
    return out


@functools.lru_cache(maxsize=512)   # key: a source file's text; the checks read each package file several times
def source_tree(text: str) -> ast.Module:
    """``ast.parse(text)``, once per text: the checks of this module walk each file's tree several
    times in one run and never change it (a tree is shared, to be read only).

    >>> source_tree("x = 1") is source_tree("x = 1")
    True
    """
    return ast.parse(text)


def imports_of(path: pathlib.Path, root: pathlib.Path, modules: set[str]) -> list[Import]:
    """Every import of a ``verilayout`` module in one file."""
    source = module_name(path, root)
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    tree = source_tree(text)
    top_nodes = set()
    for node in tree.body:
        if isinstance(node, (ast.If, ast.Try)):  # TYPE_CHECKING blocks and guarded imports
            top_nodes.update(id(n) for n in ast.walk(node))
        top_nodes.add(id(node))
    found = []
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.ImportFrom):
            targets = _resolve(source, path.name == "__init__.py", node, modules)
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names if a.name.startswith(PACKAGE + ".")]
        line = lines[node.lineno - 1] if targets else ""
        for t in targets:
            found.append(Import(source, t, node.lineno, id(node) in top_nodes, "# deferred:" in line))
    return found


def violations(root: pathlib.Path) -> tuple[dict[str, str], list[str]]:
    """The layer of every module under ``root/verilayout`` and the list of violations."""
    files = sorted((root / PACKAGE).rglob("*.py"))
    modules = {module_name(p, root) for p in files}
    layers, problems, graph = {}, [], {}
    for p in files:
        mod = module_name(p, root)
        layers[mod] = layer_of(mod)
        for imp in imports_of(p, root, modules):
            graph.setdefault(mod, set()).add(imp.target)
            where = f"{p.relative_to(root)}:{imp.line}"
            if not imp.top and not imp.deferred:
                problems.append(f"{where}: import of {imp.target} inside a function (mark a deferred "
                                "optional dependency with '# deferred: <why>')")
            if imp.target == PACKAGE and mod != PACKAGE and layer_of(mod) != "cli":
                problems.append(f"{where}: {mod} imports the package facade 'verilayout'; import the "
                                "module that defines the name")
                continue
            if imp.target == PACKAGE:
                continue
            rs, rt = rank(mod), rank(imp.target)
            if rt > rs:
                problems.append(f"{where}: {mod} ({layer_of(mod)}) imports upward {imp.target} "
                                f"({layer_of(imp.target)})")
            elif rt == rs and _folder(mod) != _folder(imp.target):
                problems.append(f"{where}: {mod} imports sideways {imp.target} (capability folders "
                                f"{_folder(mod)} and {_folder(imp.target)})")
    problems.extend(_cycles(graph))
    return layers, problems


def _ladder(root: pathlib.Path) -> list[tuple[str, str, str]]:
    """``(module, target, message)`` for every import that breaks :data:`LADDER` or :data:`NO_TEXT`."""
    files = sorted((root / PACKAGE).rglob("*.py"))
    modules = {module_name(p, root) for p in files}
    out = []
    for p in files:
        mod = module_name(p, root)
        for imp in imports_of(p, root, modules):
            if imp.target == PACKAGE:
                continue
            ls, lt = layer_of(mod), layer_of(imp.target)
            where = f"{p.relative_to(root)}:{imp.line}"
            if ls == lt:
                continue
            if ls in NO_TEXT and lt == "frontends":
                out.append((mod, imp.target, f"{where}: {mod} ({ls}) reads text: imports {imp.target} (frontends)"))
            elif LADDER[lt] >= LADDER[ls]:
                how = "sideways" if LADDER[lt] == LADDER[ls] else "upward"
                out.append((mod, imp.target,
                            f"{where}: {mod} ({ls}) imports {how} on the ladder {imp.target} ({lt})"))
    return list(dict.fromkeys(out))


def ladder_findings(root: pathlib.Path) -> list[str]:
    """Every import that breaks :data:`LADDER` or :data:`NO_TEXT` (violations).

    Law: an import ``a -> b`` between two layers is listed iff ``LADDER[b] >= LADDER[a]`` or
    ``a`` is in :data:`NO_TEXT` and ``b`` is ``frontends``; imports within one layer are not.

    >>> ladder_findings(pathlib.Path("/nonexistent"))
    []
    """
    return [m for _, _, m in _ladder(root)]


def _readers(root: pathlib.Path) -> list[tuple[str, str, str]]:
    """``(module, function, message)`` for every ``def parse_*`` in a module of :data:`NO_TEXT`."""
    out = []
    for p in sorted((root / PACKAGE).rglob("*.py")):
        mod = module_name(p, root)
        if layer_of(mod) not in NO_TEXT:
            continue
        for node in ast.walk(source_tree(p.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("parse_"):
                out.append((mod, node.name, f"{p.relative_to(root)}:{node.lineno}: {mod} ({layer_of(mod)}) "
                                            f"defines a text reader {node.name} (text is read in frontends)"))
    return out


def text_readers(root: pathlib.Path) -> list[str]:
    """Every text reader defined below the door (violations).

    Law: a function (or method) named ``parse_*`` in a module of a layer of :data:`NO_TEXT`
    (``hw``, ``prove``, ``synth``, ``emit``) is listed; readers live in ``frontends`` (``frontends/names.py`` for option spellings). The rule reads
    names only: a reader named otherwise is not caught.

    >>> text_readers(pathlib.Path("/nonexistent"))
    []
    """
    return [m for _mod, _name, m in _readers(root)]


#: The models of compiler text: a module outside ``frontends`` that imports one of them handles TTGIR
#: or PTX (ops, types, instructions, operands) and must take them typed (:func:`text_splits`).
COMPILER_TEXT_MODELS: tuple[str, ...] = (
    "verilayout.frontends.ttgir", "verilayout.frontends.ttgir_attrs", "verilayout.frontends.ptx",
    "verilayout.frontends.prescan", "verilayout.hw.nvidia.ptx_model")

#: Today's remaining readers of text among those modules, each with the most regular-expression uses
#: plus ``split``/``rsplit`` calls it may hold (:func:`text_uses`) and what it reads; each is owned by
#: another piece of work: lower the bound as its strings become typed fields, never raise it.
TEXT_SPLITS_ALLOWED: dict[str, tuple[int, str]] = {
    # CuTe text of the manifest (`Sw<3,4,3> o ...`: its swizzle read and its head in messages); not
    # TTGIR or PTX (PTX opcodes are read through Instr.parts and simulate/tma_store.register_bytes;
    # the emitted CUDA source, the host program's output and ptxas's report through
    # frontends/cuda_program)
    "verilayout.simulate.gemm_check": (4, "CuTe text of the manifest"),
}


def text_uses(text: str) -> int:
    """How many times a module's source uses a regular expression (``import re``, ``from re import``,
    ``re.<name>``) or calls ``.split``/``.rsplit`` (on any receiver: the rule reads names, not types).

    >>> text_uses("import re\\nx = re.match('a', s)\\ny = s.split(',')\\nz = s.strip()\\n")
    3
    """
    n = 0
    for node in ast.walk(source_tree(text)):
        if isinstance(node, ast.Import):
            n += sum(a.name == "re" for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            n += node.module == "re" and not node.level
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "re":
            n += 1
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("split", "rsplit"):
            n += 1
    return n


def text_splits(root: pathlib.Path, allowed: dict[str, tuple[int, str]] | None = None) -> list[str]:
    """Every module outside ``frontends`` that takes compiler text models and reads text itself
    (violations).

    Law: a module outside ``frontends`` importing one of :data:`COMPILER_TEXT_MODELS` is listed when
    :func:`text_uses` of its source exceeds its bound in ``allowed`` (:data:`TEXT_SPLITS_ALLOWED` by
    default; 0 for a module not named there). The rule reads imports and names: a module that
    splits compiler text without importing a model, or a ``split`` of a message in a module that
    does, is judged by the same count.

    >>> text_splits(pathlib.Path("/nonexistent"))
    []
    """
    allowed = TEXT_SPLITS_ALLOWED if allowed is None else allowed
    files = sorted((root / PACKAGE).rglob("*.py"))
    modules = {module_name(p, root) for p in files}
    out = []
    for p in files:
        mod = module_name(p, root)
        if layer_of(mod) == "frontends" or \
                not any(i.target in COMPILER_TEXT_MODELS for i in imports_of(p, root, modules)):
            continue
        used, bound = text_uses(p.read_text(encoding="utf-8")), allowed.get(mod, (0, ""))[0]
        if used > bound:
            out.append(f"{p.relative_to(root)}: {mod} takes TTGIR/PTX models and reads text itself ({used} "
                       f"regular-expression uses and split calls, {bound} allowed): read it in frontends "
                       "and take the typed fields")
    return out


def _private_names(node: ast.ImportFrom) -> list[str]:
    """The imported names of one ``from ... import`` that are private (``_x``, not ``__x__``)."""
    return [a.name for a in node.names
            if a.name.startswith("_") and not (a.name.startswith("__") and a.name.endswith("__"))]


def private_imports(root: pathlib.Path) -> list[str]:
    """Every private name (``_x``) one package module imports from another (violations).

    Law: ``from verilayout.m import _x`` in a module other than ``m`` is listed; importing a
    public name under a private alias (``import x as _x``) is not.

    >>> private_imports(pathlib.Path("/nonexistent"))
    []
    """
    out = []
    for p in sorted((root / PACKAGE).rglob("*.py")):
        mod = module_name(p, root)
        for node in ast.walk(source_tree(p.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or node.level or not node.module \
                    or not (node.module + ".").startswith(PACKAGE + ".") or node.module == mod:
                continue
            for name in _private_names(node):
                out.append(f"{p.relative_to(root)}:{node.lineno}: {mod} imports private "
                           f"{node.module}.{name}")
    return out


#: Folders whose modules may not call another module's private method (``obj._x()``).
PRIVATE_CALL_SCOPE = ("simulate",)
#: Underscored methods that are public API (``typing.NamedTuple``'s).
_PUBLIC_UNDERSCORED = frozenset({"_replace", "_asdict", "_make"})


def _defined_names(tree: ast.AST) -> set[str]:
    """Every function, method and class name defined anywhere in a module."""
    return {n.name for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def private_calls(root: pathlib.Path, scope: tuple[str, ...] = PRIVATE_CALL_SCOPE) -> list[str]:
    """Every call of another module's private method in a module of ``scope`` (violations).

    Law: in a module under ``verilayout/<folder>`` for a folder of ``scope``, a call
    ``obj._x(...)`` is listed when ``obj`` is not ``self`` or ``cls`` and no function, method or
    class ``_x`` is defined in that module (a piece another module needs is public, documented
    with its law, or lives in the one module that uses it); NamedTuple's ``_replace``,
    ``_asdict`` and ``_make`` are public.

    >>> private_calls(pathlib.Path("/nonexistent"))
    []
    """
    out = []
    for folder in scope:
        for p in sorted((root / PACKAGE / folder).rglob("*.py")):
            tree = source_tree(p.read_text(encoding="utf-8"))
            own = _defined_names(tree)
            for node in ast.walk(tree):
                f = node.func if isinstance(node, ast.Call) else None
                if not isinstance(f, ast.Attribute) or not f.attr.startswith("_") \
                        or f.attr.startswith("__") or f.attr in _PUBLIC_UNDERSCORED or f.attr in own \
                        or (isinstance(f.value, ast.Name) and f.value.id in ("self", "cls")):
                    continue
                out.append(f"{p.relative_to(root)}:{node.lineno}: {module_name(p, root)} calls "
                           f"another module's private method {f.attr}: make it public or move it")
    return out


def _cycles(graph: dict[str, set[str]]) -> list[str]:
    """One message per import cycle found by depth-first search."""
    state: dict[str, int] = {}
    out: list[str] = []
    stack: list[str] = []

    def visit(n: str) -> None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if m == n:
                continue
            if state.get(m) == 1:
                out.append("import cycle: " + " -> ".join(stack[stack.index(m):] + [m]))
            elif m not in state:
                visit(m)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n)
    return out


def _union_names(ann: ast.AST) -> set[str]:
    """The names an annotation joins with ``|`` or ``Union[...]`` / ``Optional[...]`` (empty for a
    plain annotation)."""
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return _leaf_names(ann.left) | _leaf_names(ann.right)
    if isinstance(ann, ast.Subscript) and isinstance(ann.value, ast.Name) and ann.value.id in ("Union", "Optional"):
        items = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        return set().union(*(_leaf_names(x) for x in items))
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):     # a string annotation
        try:
            return _union_names(ast.parse(ann.value, mode="eval").body)
        except SyntaxError:
            return set()
    return set()


def _leaf_names(node: ast.AST) -> set[str]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _leaf_names(node.left) | _leaf_names(node.right)
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Attribute):
        return {node.attr}
    return set()


def operand_or_text(root: pathlib.Path) -> list[str]:
    """Every function parameter or result annotated as a PTX operand *or* a string (violations).

    Law: a parameter or return annotation of a function in the package that unions ``Operand`` (or
    ``Reg``) with ``str`` is listed: PTX consumers take the typed operands the reader decoded, and
    strings are for messages only.

    >>> operand_or_text(pathlib.Path("/nonexistent"))
    []
    """
    out = []
    for p in sorted((root / PACKAGE).rglob("*.py")):
        for node in ast.walk(source_tree(p.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            anns = [a.annotation for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs]
            for ann in [*anns, node.returns]:
                names = _union_names(ann) if ann is not None else set()
                if "str" in names and names & {"Operand", "Reg"}:
                    out.append(f"{p.relative_to(root)}:{node.lineno} {node.name}: takes or gives a PTX operand "
                               "or a string: take the decoded operand (strings are for messages)")
    return out


#: The PTX audit's driver: it reads a PTX file and its plan once, builds the one
#: ``audit.ptx_context.PtxContext`` and calls each check module's entry point with it.
PTX_DRIVER = "verilayout.audit.ptx"
#: The PTX check modules: ``audit/ptx_*`` and these.
PTX_CHECK_MODULES = ("verilayout.audit.cute_dsl",)
#: Entry points that take parsed objects rather than the context (the CuTe-DSL audit: its plan is
#: MLIR); every function whose first parameter is a ``PtxContext`` is an entry point too.
PTX_ENTRY_POINTS: dict[str, tuple[str, ...]] = {"verilayout.audit.cute_dsl": ("audit_modules",)}


def is_ptx_check_module(module: str) -> bool:
    """A PTX check module: ``verilayout.audit.ptx_*`` or one of :data:`PTX_CHECK_MODULES`.

    >>> is_ptx_check_module("verilayout.audit.ptx_smem"), is_ptx_check_module("verilayout.audit.ptx")
    (True, False)
    """
    return module.startswith(PTX_DRIVER + "_") or module in PTX_CHECK_MODULES


def _takes_context(node: ast.AST) -> bool:
    """A module-level function whose first parameter is annotated ``PtxContext``."""
    args = node.args.posonlyargs + node.args.args if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
    ann = args[0].annotation if args else None
    return isinstance(ann, ast.Name) and ann.id == "PtxContext" or \
        isinstance(ann, ast.Constant) and ann.value == "PtxContext"


def ptx_entry_points(root: pathlib.Path) -> dict[str, set[str]]:
    """Each PTX check module's entry points: its public module-level functions whose first parameter
    is a ``PtxContext``, and those :data:`PTX_ENTRY_POINTS` names.

    >>> ptx_entry_points(pathlib.Path("/nonexistent"))
    {}
    """
    out = {}
    for p in sorted((root / PACKAGE / "audit").glob("*.py")):
        mod = module_name(p, root)
        if is_ptx_check_module(mod):
            tree = source_tree(p.read_text(encoding="utf-8"))
            out[mod] = {n.name for n in tree.body if _takes_context(n) and not n.name.startswith("_")} \
                | set(PTX_ENTRY_POINTS.get(mod, ()))
    return out


def _hand_offs(tree: ast.AST, mod: str, entries: dict[str, set[str]]) -> list[tuple[int, str]]:
    """``(line, what)`` for each import of the driver, or of another check module's entry point, and
    each ``PtxContext(...)`` built, in one check module's syntax tree."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, f"imports the driver {PTX_DRIVER}") for a in node.names if a.name == PTX_DRIVER]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for a in node.names:
                target = f"{node.module}.{a.name}"
                if node.module == PTX_DRIVER or target == PTX_DRIVER:
                    out.append((node.lineno, f"imports the driver {PTX_DRIVER}"))
                elif node.module != mod and a.name in entries.get(node.module, ()):
                    out.append((node.lineno, f"calls another check module's entry point {target}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "PtxContext":
            out.append((node.lineno, "builds a PtxContext (the driver builds the one context)"))
    return out


def ptx_hand_offs(root: pathlib.Path) -> list[str]:
    """Every hand-off among the PTX check modules (violations).

    Law: a PTX check module (:func:`is_ptx_check_module`) that imports the driver :data:`PTX_DRIVER`,
    imports another check module's entry point (:func:`ptx_entry_points`) or calls ``PtxContext(...)``
    is listed: the driver reads the file and its plan once, builds the one context and calls each
    entry point; a check module shares helpers, never another's checks or context. The rule reads
    absolute imports and names (the package's style; an entry point reached through a module alias
    is not seen).

    >>> ptx_hand_offs(pathlib.Path("/nonexistent"))
    []
    """
    entries = ptx_entry_points(root)
    out = []
    for mod in entries:
        p = root / (mod.replace(".", "/") + ".py")
        for line, what in _hand_offs(source_tree(p.read_text(encoding="utf-8")), mod, entries):
            out.append(f"{p.relative_to(root)}:{line}: {mod} {what}")
    return out


def main(argv: list[str] | None = None) -> int:
    """Print every module's layer and the violations (the layer rule, the ladder, private imports,
    text readers below the door, compiler text read outside frontends, PTX operands taken as text,
    private methods called across modules in :data:`PRIVATE_CALL_SCOPE`, hand-offs among the PTX check
    modules); exit 1 on a violation (``--root DIR`` checks the tree under
    ``DIR``; ``--strict`` is accepted for old scripts and changes nothing)."""
    args = list(sys.argv[1:] if argv is None else argv)
    root = pathlib.Path(__file__).resolve().parents[2]
    if "--root" in args:
        root = pathlib.Path(args[args.index("--root") + 1])
    layers, problems = violations(root)
    problems = problems + ladder_findings(root) + private_imports(root) + text_readers(root) \
        + text_splits(root) + operand_or_text(root) + private_calls(root) + ptx_hand_offs(root)
    for mod in sorted(layers):
        print(f"{layers[mod]:10s} {mod}")
    for p in problems:
        print(f"violation: {p}")
    print(f"{len(layers)} modules, {len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
