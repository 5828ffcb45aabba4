"""What every TTGIR check of ``audit/ttgir`` shares: the per-file context and the walks over the
module's def-use graph (``frontends.ttgir``: ops, typed values and their users, read once).

Law: :class:`AuditContext` hands a check the parsed type and the linear layout of a
:class:`~verilayout.frontends.ttgir.Type` and records what the file's report says it read (layouts
seen, parsed, and the unsupported texts with why); it reads no text itself.

>>> from verilayout.frontends.ttgir import parse_module
>>> m = parse_module("module {\\n  %a = ttg.local_alloc : () -> !ttg.memdesc<2x16xf16, #ttg.swizzled_shared<"
...                  "{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>, #ttg.shared_memory, mutable>\\n"
...                  "  %b = ttg.memdesc_index %a[%c] : !ttg.memdesc<2x16xf16, #s> -> !ttg.memdesc<16xf16, #s>\\n}")
>>> root_alloc(AuditContext(m, "k.ttgir"), "%b").line
2
"""
from __future__ import annotations

from typing import Any

from verilayout.audit.model import Check
from verilayout.core.linear_layout import LinearLayout
from verilayout.frontends.mlir import TensorType
from verilayout.frontends.triton import memdesc_buffers
from verilayout.frontends.ttgir import Module, Op, Type

__all__ = ["AuditContext", "VIEWS", "SUBSLICE_RULE", "layout_shape", "root_alloc", "subslice_offsets",
           "same_layout", "is_nvidia", "one_line", "internal_message", "internal_unchecked"]

#: the memdesc views: ops whose result is a view of their first operand's memory
VIEWS = ("ttg.memdesc_index", "ttg.memdesc_subslice", "ttg.memdesc_trans", "ttg.memdesc_reshape",
         "ttg.memdesc_subview", "ttg.memdesc_reinterpret", "ttng.tmem_subslice")


class AuditContext:
    """Per-file state: the module (its ops, types and def-use graph, read once by
    ``frontends.ttgir``), what the audit read of it (layouts seen, parsed, unsupported) and the checks."""

    def __init__(self, mod: Module, path: str):
        self.mod = mod
        self.path = path
        self.checks: list[Check] = []
        self.unsupported: dict[str, str] = {}
        self.seen: set[str] = set()
        self.parsed: set[str] = set()
        #: (check, type, type) -> a proof over two types of this module: a pipelined loop repeats its
        #: copies, one proof per pair (the module hands out one Type per text)
        self.proofs: dict[tuple, Any] = {}
        #: (check index, register layout, store?, element bits, memory type, alloc line, whole?) of
        #: each NVIDIA bank check: the accesses of one buffer get one joint layout (attach_joint)
        self.accesses: list[tuple] = []

    def add(self, op: Op, check: str, status: str, severity: str | None, message: str, **data) -> None:
        self.checks.append(Check(op.name, op.line, op.loc, check, status, severity, message, data))

    def typ(self, t: Type) -> TensorType | None:
        """The tensor/memdesc type, or None (an unreadable text is recorded as unsupported)."""
        tensor = t.tensor
        if t.error is not None:
            self.unsupported.setdefault(t.text, t.error)
        return tensor

    def layout(self, t: Type) -> LinearLayout | None:
        """The linear layout of a tensor/memdesc type, or None (recorded as unsupported; a
        padded_shared memdesc counts as read: an address map, not GF(2)-linear)."""
        tensor = self.typ(t)
        if tensor is None or t.encoding is None:
            return None
        enc = t.encoding_text
        self.seen.add(enc)
        ll = t.layout
        if ll is not None or (tensor.kind == "memdesc" and t.padded is not None):
            self.parsed.add(enc)
        else:
            self.unsupported.setdefault(enc, t.layout_error)
        return ll


def one_line(message: str) -> str:
    """``message`` with each run of white space (newlines too) made one space, none at the ends.

    >>> one_line("  a\\n  b ")
    'a b'
    """
    out: list[str] = []
    gap = False
    for ch in message:
        if ch.isspace():
            gap = bool(out)
        else:
            if gap:
                out.append(" ")
                gap = False
            out.append(ch)
    return "".join(out)


def internal_message(e: BaseException) -> str:
    """The one-line text of an internal failure (a bug of verilayout, never of the kernel).

    >>> internal_message(KeyError("a\\n b"))
    "internal error (KeyError: 'a\\\\n b')"
    """
    return f"internal error ({type(e).__name__}: {one_line(str(e))[:200]})"


def internal_unchecked(ctx: AuditContext, op: Op, check: str, what: str, why: str) -> None:
    """Law: an internal failure of a model becomes one ``unchecked`` result naming it, never
    silence and never a finding."""
    ctx.add(op, check, "unchecked", "note", f"{op.name}: {what} was not computed: {why}; please report it",
            reason="internal error", error=why)


def layout_shape(t: TensorType) -> tuple:
    """The shape a type's layout covers (a memdesc view's layout covers the allocation's
    trailing dims).

    >>> layout_shape(TensorType("memdesc", (64, 32), "f16", None, None, True, (3, 64, 32)))
    (64, 32)
    """
    return memdesc_buffers(t)[0]


def root_alloc(ctx: AuditContext, name: str) -> Op | None:
    """The op that allocated the memory of value ``name``: its defining op, followed through
    :data:`VIEWS` to their sources (None: a block argument, or a chain over 64 views; the module
    docstring has an example)."""
    seen = 0
    while name in ctx.mod.defs and seen < 64:
        op = ctx.mod.defs[name]
        if op.name not in VIEWS or not op.operands:
            return op
        name = op.operands[0]
        seen += 1
    return None


def is_nvidia(target: str | None) -> bool:
    """The module's target is NVIDIA's (``cuda:90``), or not said (read as NVIDIA).

    >>> is_nvidia("cuda:90"), is_nvidia(None), is_nvidia("hip:gfx942")
    (True, True, False)
    """
    return target is None or target.startswith("cuda")


SUBSLICE_RULE = ("a subslice at offsets that are multiples of its (power-of-two) sizes addresses "
                 "the allocation's layout XOR a constant, which keeps every pair of accesses in the "
                 "same bank / word relation, so its wavefronts are those of the same access at "
                 "offset 0 (derived from the layout being GF(2)-linear)")



def subslice_offsets(ctx: AuditContext, name: str | None, mt: TensorType) -> tuple[int, ...] | str:
    """The static offsets of a memdesc subslice view within its allocation (summed along the chain
    of ``memdesc_subslice`` ops that made it), or why they cannot be used."""
    rank, total, seen = len(mt.shape), [0] * len(mt.shape), 0
    while name in ctx.mod.defs and seen < 64:
        op = ctx.mod.defs[name]
        seen += 1
        if op.name == "ttg.memdesc_subslice":
            idx = op.indices
            offs = list(idx) if idx is not None else None
            if offs is None or len(offs) != rank:
                return "its offsets are not static"
            total = [a + b for a, b in zip(total, offs)]
        elif op.name != "ttg.memdesc_index":
            if op.name in VIEWS:
                return f"a {op.name} in the view chain is not modelled"
            break
        if not op.operands:
            break
        name = op.operands[0]
    else:
        if seen >= 64 or name is None:
            return "the view chain could not be followed"
    for off, size in zip(total, mt.shape):
        span = 1 << max(0, (size - 1).bit_length())
        if off < 0 or off % span:
            return (f"offset {off} is not a multiple of the view size {size} (only aligned "
                    "subslices are modelled)")
    return tuple(total)


def same_layout(a: LinearLayout, b: LinearLayout) -> bool:
    """The same output dims and the same bases for every input dim (a missing dim has none).

    >>> a = LinearLayout({"register": [[1]], "lane": []}, ["dim0"])
    >>> same_layout(a, LinearLayout({"register": [[1]]}, ["dim0"])), same_layout(a, a.transpose_outs(["dim0"]))
    (True, True)
    """
    if a.out_dims != b.out_dims:
        return False
    keys = set(a.bases) | set(b.bases)
    return all(a.bases.get(k, []) == b.bases.get(k, []) for k in keys)
