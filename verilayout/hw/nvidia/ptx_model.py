"""The typed model of a PTX module: instructions with their opcode parts, predicate guard, vector
width and decoded operands (registers, immediates as integers, addresses as base plus offset,
vectors of registers). Nothing here reads text: :mod:`verilayout.frontends.ptx` builds these objects
from PTX text (the door), and :mod:`verilayout.prove.ptx_values` and the PTX audit read them.

Why here: ``prove`` evaluates PTX and may not import ``frontends`` (the ladder of
``docs/architecture.md``), and PTX is NVIDIA's instruction set, so the model sits in ``hw/nvidia``
next to the other NVIDIA facts, as data only.

Law: an :class:`Instr`'s ``args`` are its ``operands`` (the spellings, kept for messages) decoded one
to one, in order: ``len(args) == len(operands)``.

>>> i = Instr("add.s32", ("%r1", "%r2", "16"), 7, parts=("add", "s32"),
...           args=(Reg("%r1"), Reg("%r2"), Imm(16)))
>>> i.args[2].value, i.head, i.vec
(16, 'add', 1)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union


@dataclass(frozen=True)
class Reg:
    """A register or special register as PTX names it: ``%r1``, ``%rd3``, ``%p2``, ``%tid.x``.

    >>> Reg("%rd3").name
    '%rd3'
    """
    name: str


@dataclass(frozen=True)
class Imm:
    """An immediate: ``value`` its integer (decimal, hex, octal or binary with a sign or ``U``
    suffix); a float immediate (``0f3F800000``, ``0d...``) is its bit pattern, ``is_float`` True.

    >>> Imm(1065353216, is_float=True).value
    1065353216
    """
    value: int
    is_float: bool = False


@dataclass(frozen=True)
class Sym:
    """A name that is not a register: a variable (``global_smem``), a label, a parameter.

    >>> Sym("global_smem").name
    'global_smem'
    """
    name: str


@dataclass(frozen=True)
class Addr:
    """An address operand ``[base]`` or ``[base+offset]``: ``base`` a register, a variable or
    an absolute address;
    ``offset`` the immediate offset (0 when none is written, None when the written offset
    ``offset_text`` is not an immediate). An address of no modelled form (``[%r1+%r2]``) has an
    :class:`Other` base and offset None.

    >>> Addr(Reg("%r4"), 16, "16").offset
    16
    """
    base: Union[Reg, Sym, Imm, "Other"]
    offset: int | None = 0
    offset_text: str | None = None

    @property
    def modelled(self) -> bool:
        """True for ``[base]``/``[base+offset]`` (a register, variable or address base).

        >>> Addr(Other("%r1+%r2"), None).modelled
        False
        """
        return not isinstance(self.base, Other)

    @property
    def base_name(self) -> str:
        """The base's name (a register's ``%r4``, a variable's ``buf``, an address's digits).

        >>> Addr(Sym("buf")).base_name
        'buf'
        """
        if isinstance(self.base, Imm):
            return str(self.base.value)
        return self.base.text if isinstance(self.base, Other) else self.base.name


@dataclass(frozen=True)
class Vec:
    """A vector operand ``{a, b, ...}``: its elements, decoded (``{%r1, %r2}``: two registers).

    >>> len(Vec((Reg("%r1"), Reg("%r2"))).items)
    2
    """
    items: tuple


@dataclass(frozen=True)
class PredPair:
    """``setp``'s two predicate destinations ``p|q``.

    >>> PredPair((Reg("%p1"), Reg("%p2"))).regs[1].name
    '%p2'
    """
    regs: tuple


@dataclass(frozen=True)
class Other:
    """An operand of no modelled form (kept as written).

    >>> Other("[%r1+%r2]").text
    '[%r1+%r2]'
    """
    text: str


Operand = Union[Reg, Imm, Sym, Addr, Vec, PredPair, Other]


@dataclass(frozen=True)
class Pred:
    """An instruction's guard ``@%p`` (``negated``: ``@!%p``).

    >>> Pred("%p1", True).reg
    '%p1'
    """
    reg: str
    negated: bool = False


@dataclass(frozen=True)
class Instr:
    """One instruction: ``[@pred] opcode operands;`` at ``line`` (1-based) in function ``func``.
    ``operands``: the operands as written; ``args``: the same decoded (:data:`Operand`);
    ``parts``: the opcode's dotted parts (``wgmma.mma_async.sync`` -> ``('wgmma', 'mma_async',
    'sync')``); ``guard``: ``pred`` decoded; ``vec``: the vector width of a ``.v2``/``.v4``/``.v8``
    opcode, else 1. Built by :func:`verilayout.frontends.ptx.parse_ptx` (or ``make_instr``).

    >>> Instr("ret", (), 3, parts=("ret",)).head
    'ret'
    """
    opcode: str
    operands: tuple[str, ...]
    line: int
    pred: str | None = None
    loc: str | None = None
    func: str = ""
    parts: tuple[str, ...] = ()
    args: tuple = ()
    guard: Pred | None = None
    vec: int = 1

    @property
    def head(self) -> str:
        """The opcode's first part (``ld`` of ``ld.shared.v4.b32``).

        >>> Instr("ld.shared.b32", (), 1, parts=("ld", "shared", "b32")).head
        'ld'
        """
        return self.parts[0] if self.parts else self.opcode


@dataclass(frozen=True)
class PtxModule:
    """The instructions of a PTX text, the ``.target`` and the entry points; ``labels``: each
    label as ``(function, label, index in instrs of the instruction it names)``; ``shared``: the
    names of the module's ``.shared`` variables; ``threads``: ``(function, threads per CTA)`` from
    ``.reqntid``/``.maxntid``; ``files``: the ``.file`` entries as ``(number, path as written)``;
    ``branch_tables``: each ``.branchtargets`` table as ``(function, its label, target labels in
    order)``: entry ``i`` is where ``brx.idx`` jumps for index ``i`` (PTX ISA, "brx.idx").

    >>> PtxModule("sm_90a", (), ("f",), threads=(("f", 128),)).threads_of("f")
    128
    """
    target: str | None
    instrs: tuple[Instr, ...]
    functions: tuple[str, ...]
    labels: tuple[tuple[str, str, int], ...] = ()
    shared: tuple[str, ...] = ()
    threads: tuple[tuple[str, int], ...] = ()
    files: tuple[tuple[str, str], ...] = ()
    branch_tables: tuple[tuple[str, str, tuple[str, ...]], ...] = ()

    def threads_of(self, func: str) -> int | None:
        """Threads per CTA of ``func`` from its ``.reqntid`` (or ``.maxntid``) directive: the
        product of its extents; None when the function states neither.

        >>> PtxModule(None, (), ("f",)).threads_of("f") is None
        True
        """
        return dict(self.threads).get(func)
