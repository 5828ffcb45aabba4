"""PTX as compilers write it (Triton, nvcc): entry functions, labels, predicated instructions with
typed opcodes and operands, and the source location (``.loc`` with ``.file``) of each instruction.

Law: every instruction line of the text becomes one :class:`Instr` of the typed model
(:mod:`verilayout.hw.nvidia.ptx_model`: opcode split at dots, the operands split at top-level
commas, vector braces and address brackets kept whole, and each decoded by
:func:`decode_operand` when an instruction's ``args`` are first read (:class:`ParsedInstr`): registers, immediates as integers, ``[base+offset]`` addresses, vectors), in order,
with its 1-based line number and the ``file:line`` of the last ``.loc`` before it (a ``.loc`` inside an
inline-asm region, between nvcc's ``// begin inline asm`` and ``// end inline asm`` comments, holds
only until the region ends). Directives
other than ``.file``/``.loc``/``.entry``/``.func`` are skipped; nothing is interpreted here (see
``verilayout.audit.ptx``). Text that is not PTX, is not UTF-8, or nests braces too deeply raises
``LayoutError`` naming the line.

>>> m = parse_ptx('.version 8.7\\n.target sm_90a\\n.file 1 "k.py"\\n.visible .entry f()\\n{\\n'
...               '.loc 1 7 3\\n@%p1 add.s32 %r1, %r2, 16;\\n}')
>>> i = m.instrs[0]
>>> (i.opcode, i.pred, i.operands, i.line, i.loc, m.target)
('add.s32', '%p1', ('%r1', '%r2', '16'), 7, 'k.py:7', 'sm_90a')
>>> i.args[2], i.guard
(Imm(value=16, is_float=False), Pred(reg='%p1', negated=False))
>>> parse_ptx('.version 8.7\\n.extern .shared .align 16 .b8 buf[];\\n.entry g()\\n{\\nL1:\\nbra L1;\\n}').labels
(('g', 'L1', 0),)
"""
from __future__ import annotations

import re
from dataclasses import fields
from functools import lru_cache

from verilayout.errors import LayoutError
from verilayout.hw.nvidia.ptx_model import (Addr, Imm, Instr, Operand, Other, Pred, PredPair, PtxModule, Reg, Sym,
                                            Vec)

__all__ = ["MAX_PTX_BYTES", "Instr", "ParsedInstr", "PtxModule", "parse_ptx", "split_operands", "parse_immediate",
           "decode_operand", "make_instr", "operand_registers", "wgmma_shape", "register_names"]

#: The most bytes a PTX file may have (Triton's largest kernels are a few MB).
MAX_PTX_BYTES = 64 << 20
_MAX_DEPTH = 64

_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"')
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)")
_ENTRY = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)*\.(entry|func)\b[^(]*?([\w$]+)\s*\(")
_LABEL = re.compile(r"^\s*([\w$]+):")
_PRED = re.compile(r"^@(!?%?[\w$]+)\s+")      # `@%p1`; inline asm's own `.reg .pred p` guards `@p`
_OPCODE = re.compile(r"^([a-z][\w.:]*)")
_NTID = re.compile(r"^\s*\.(?:reqntid|maxntid)\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?")
_ADDR = re.compile(r"^\[\s*([%\w$.]+)\s*(?:\+\s*(-?\w+))?\s*\]$")
_NAME = re.compile(r"[A-Za-z_$][\w$]*")
_VEC_PARTS = {"v2": 2, "v4": 4, "v8": 8}
_MMA_SHAPE = re.compile(r"^m(\d+)n(\d+)k(\d+)$")
_REG_NAME = re.compile(r"%\w+")
#: an instruction whose operands continue on the next lines (no ``;`` yet: the DSL's LLVM writes
#: ``mma.sync`` with its operand vectors one per line)
_OPEN_STATEMENT = re.compile(r"^(?:@!?%?[\w$]+\s+)?[a-z][\w.:]*(?:\s[^;{}:]*)?$")
#: the common instruction line, read in one match: an optional guard, an opcode followed by
#: white space or ``;``, operands holding no ``;``, ``/`` or quote, and one ``;`` ending the code
_PLAIN = re.compile(r"[ \t]*(?:@(!?%?[\w$]+)\s+)?([a-z][\w.]*)(?=[\s;])([^;/\"\n]*);[ \t\r]*(?://[^\n]*)?$")
_DATA = re.compile(r"[ \t]*\.b(?:8|16|32|64)\s")   # `.b8 1  // Abbreviation Code` (a debug section's bytes)
#: the directives :func:`parse_ptx` reads something from (a directive starting otherwise, ``.reg``,
#: ``.param``, ``.section``, ..., matches none of its patterns and is skipped at once)
_READ_DIRECTIVES = (".loc", ".version", ".target", ".file", ".visible", ".weak", ".extern", ".entry", ".func",
                    ".shared", ".reqntid", ".maxntid")
#: a bracket of any kind: an operand list without one splits at every comma (:func:`split_operands`)
_NESTING = re.compile(r"[{}\[\]()]")
#: an operand list whose brackets are ``{...}`` and ``[...]`` groups holding no bracket (``{%r1, %r2}, [%rd3+4]``),
#: and a comma outside such groups (the next bracket after it is no closer)
_FLAT_GROUPS = re.compile(r"[^{}\[\]()]*(?:(?:\{[^{}\[\]()]*\}|\[[^{}\[\]()]*\])[^{}\[\]()]*)*")
_TOP_COMMA = re.compile(r",(?![^{}\[\]]*[}\]])")
_SHARED = re.compile(r"^\s*(?:\.(?:extern|visible|weak)\s+)*\.shared\s+(?:\.align\s+\d+\s+)?\.\w+\s+([\w$]+)")


def split_operands(text: str) -> tuple[str, ...]:
    """Operands at top-level commas (``{a, b}`` and ``[r+4]`` stay whole).

    >>> split_operands("{%r1, %r2}, [%rd3+16], 0f3F800000")
    ('{%r1, %r2}', '[%rd3+16]', '0f3F800000')
    """
    opens = text.count("{") + text.count("[") + text.count("(")
    if not opens and ")" not in text and "]" not in text and "}" not in text:
        return tuple(filter(None, map(str.strip, text.split(","))))   # the common case: no nesting
    if opens <= _MAX_DEPTH:
        if "," not in text:             # one piece: what the loop below gives it
            one = text.strip()
            return (one,) if one else ()
        # the depth at a comma is the count of openers minus closers before it, so whole pieces
        # between commas are counted at once (with at most _MAX_DEPTH openers, no depth exceeds it)
        if _FLAT_GROUPS.fullmatch(text):    # groups `{..}`/`[..]` holding no bracket: a comma is at depth 0
            out = [p.strip() for p in _TOP_COMMA.split(text)]   # iff no group's closer comes before the next opener
            if not out[-1]:
                out.pop()
            return tuple(out)
        pieces = text.split(",")
        square = "{" not in text and "(" not in text and "}" not in text and ")" not in text
        out, cur, depth = [], [], 0
        for k, piece in enumerate(pieces):
            cur.append(piece)
            if square:                  # addresses only (`%r1, [%rd2+4]`): the other pairs count 0
                depth += piece.count("[") - piece.count("]")
            else:
                depth += (piece.count("{") + piece.count("[") + piece.count("(")
                          - piece.count("}") - piece.count("]") - piece.count(")"))
            if depth == 0 and k < len(pieces) - 1:
                out.append(",".join(cur).strip())
                cur = []
        last = ",".join(cur).strip()
        if last:
            out.append(last)
        return tuple(out)
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "{[(":
            depth += 1
            if depth > _MAX_DEPTH:
                raise LayoutError(f"operands nested deeper than {_MAX_DEPTH}")
        elif ch in "}])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    last = "".join(cur).strip()
    if last:
        out.append(last)
    return tuple(out)


@lru_cache(maxsize=1 << 14)   # key: an operand's spelling (the interpreter reads each one per step)
def parse_immediate(text: str) -> int | None:
    """An integer immediate in any PTX form (decimal, ``0x``, octal ``0..``, ``0b``, with ``U``
    suffix or sign), else None; float immediates (``0f``/``0d`` hex) give their bit pattern.

    >>> [parse_immediate(t) for t in ("16", "-2", "0x10", "0b101", "017", "4U", "0f3F800000", "%r1")]
    [16, -2, 16, 5, 15, 4, 1065353216, None]
    """
    t = text.strip()
    m = re.fullmatch(r"0[fFdD]([0-9a-fA-F]+)", t)
    if m:
        return int(m.group(1), 16)
    m = re.fullmatch(r"([+-]?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]+|\d+)[uU]?", t)
    if not m:
        return None
    body = m.group(2)
    if len(body) > 40:
        return None
    if body[:2] in ("0x", "0X"):
        v = int(body, 16)
    elif body[:2] in ("0b", "0B"):
        v = int(body[2:], 2)
    elif len(body) > 1 and body[0] == "0":
        v = int(body, 8)
    else:
        v = int(body)
    return -v if m.group(1) == "-" else v


@lru_cache(maxsize=1 << 16)   # key: an operand's spelling (registers and immediates repeat across a file)
def decode_operand(text: str) -> Operand:
    """The typed operand (:mod:`verilayout.hw.nvidia.ptx_model`) of one operand as written:
    ``%name`` a :class:`Reg`, an immediate an :class:`Imm` (:func:`parse_immediate`'s value),
    ``[base]``/``[base+off]`` an :class:`Addr` (any other ``[...]``: an :class:`Addr` whose base is
    :class:`Other`), ``{a, b}`` a :class:`Vec` of decoded elements,
    ``p|q`` a :class:`PredPair`, a plain name a :class:`Sym`, anything else :class:`Other`.

    >>> decode_operand("[%rd3+16]"), decode_operand("0x10"), decode_operand("{%r1, %r2}").items[1]
    (Addr(base=Reg(name='%rd3'), offset=16, offset_text='16'), Imm(value=16, is_float=False), Reg(name='%r2'))
    """
    t = text.strip()
    if "|" in t:
        return PredPair(tuple(decode_operand(x) for x in t.split("|")))
    if t.startswith("%"):
        return Reg(t)
    if t.startswith("["):
        m = _ADDR.match(t)
        if not m:                      # an address of no modelled form: its base is the text inside
            return Addr(Other(t[1:-1] if t.endswith("]") else t[1:]), None, None)
        b = m.group(1)
        imm = None if b.startswith("%") else parse_immediate(b)
        base = Reg(b) if b.startswith("%") else Sym(b) if imm is None else Imm(imm)
        off = m.group(2)
        return Addr(base, 0 if off is None else parse_immediate(off), off)
    if t.startswith("{"):
        inner = t[1:-1] if t.endswith("}") else t[1:]
        if _NESTING.search(inner) is None:     # flat (`%r1, %r2`): split_operands' common case, in line
            return Vec(tuple(map(decode_operand, filter(None, map(str.strip, inner.split(","))))))
        return Vec(tuple(decode_operand(x) for x in split_operands(inner)))
    v = parse_immediate(t)
    if v is not None:
        return Imm(v, t[:2] in ("0f", "0F", "0d", "0D"))
    if _NAME.fullmatch(t):
        return Sym(t)
    return Other(t)


class _DecodedArgs:
    """The ``args`` of a parsed instruction, decoded from its ``operands`` when first read and kept in
    the instance's ``__dict__`` (a non-data descriptor: a later read finds the stored tuple first).
    Most instructions of a kernel are read by no check: their operands are never decoded."""

    def __get__(self, ins: Instr | None, owner: type | None = None) -> tuple:
        if ins is None:
            return ()                   # the class's default, as Instr's field has it
        d = ins.__dict__
        args = d["args"] = tuple(map(decode_operand, d["operands"]))
        return args


class ParsedInstr(Instr):
    """An :class:`Instr` of :func:`parse_ptx`: the same fields, ``args`` decoded on first read
    (:class:`_DecodedArgs`; equal to ``tuple(map(decode_operand, operands))``, as
    :func:`make_instr` sets it). Its ``repr`` is Instr's.

    >>> i = parse_ptx(".version 8.7\\n.entry f()\\n{\\nadd.s32 %r1, %r2, 3;\\n}").instrs[0]
    >>> "args" in vars(i), i.args[2], "args" in vars(i), repr(i)[:17]
    (False, Imm(value=3, is_float=False), True, "Instr(opcode='add")
    """

    args = _DecodedArgs()

    def arg(self, k: int) -> Operand:
        """``args[k]``, decoding operand ``k`` alone while ``args`` are not decoded (law: equal to
        ``args[k]``).

        >>> i = parse_ptx(".version 8.7\\n.entry f()\\n{\\nmov.b64 {%r1, %r2}, %rd3;\\n}").instrs[0]
        >>> i.arg(0).items[1], "args" in vars(i), i.arg(1) == i.args[1]
        (Reg(name='%r2'), False, True)
        """
        d = self.__dict__
        return d["args"][k] if "args" in d else decode_operand(d["operands"][k])

    def __repr__(self) -> str:
        return "Instr" + Instr.__repr__(self)[len(type(self).__qualname__):]


class _LocNames(dict):
    """``(file number, line)`` -> ``"file:line"`` (the ``.file`` name's last part, else the number),
    each spelled when first looked up.

    >>> _LocNames({"1": "k.py"})[("1", "7")], _LocNames({})[("2", "3")]
    ('k.py:7', '2:3')
    """

    def __init__(self, files: dict[str, str]):
        super().__init__()
        self.files = files

    def __missing__(self, lc: tuple[str, str]) -> str:
        name = self[lc] = f"{self.files.get(lc[0], lc[0])}:{lc[1]}"
        return name


def _typed(instrs: list[tuple], names: dict) -> tuple[Instr, ...]:
    """The :class:`ParsedInstr` of each scanned line (fields as :func:`make_instr` sets them, ``args``
    decoded when first read); each spelling of an opcode or guard of the text is decoded once."""
    heads: dict[str, tuple[tuple[str, ...], int]] = {}
    guards: dict[str, Pred] = {}
    out = []
    new, cls = _new, ParsedInstr
    for o, ops, n, p, lc, f in instrs:
        pv = heads.get(o)
        if pv is None:
            pv = heads[o] = _opcode_parts(o)
        g = None
        if p is not None:
            g = guards.get(p)
            if g is None:
                g = guards[p] = _guard(p)
        if _FIELDS_AS_WRITTEN:          # the instance's fields set at once, ``args`` left to _DecodedArgs
            ins = new(cls)
            _set(ins, "__dict__", {"opcode": o, "operands": ops, "line": n, "pred": p,
                                   "loc": names[lc] if lc else None, "func": f, "parts": pv[0],
                                   "guard": g, "vec": pv[1]})
            out.append(ins)
        else:
            out.append(_instr_of((o, ops, n, p, names[lc] if lc else None, f, pv[0],
                                  tuple(map(decode_operand, ops)), g, pv[1])))
    return tuple(out)


_INSTR_FIELDS = tuple(f.name for f in fields(Instr))
_new = object.__new__
#: the fields alone make an Instr (no __post_init__, no slots): what _instr_of relies on
_PLAIN_INSTR = not hasattr(Instr, "__post_init__") and not hasattr(Instr, "__slots__")
_set = object.__setattr__
#: :func:`_typed` writes a ParsedInstr's ``__dict__`` with these field names (``args`` read lazily)
_FIELDS_AS_WRITTEN = _PLAIN_INSTR and _INSTR_FIELDS == ("opcode", "operands", "line", "pred", "loc", "func",
                                                        "parts", "args", "guard", "vec")


def _instr_of(values: tuple) -> Instr:
    """``Instr(*values)`` without the frozen dataclass's per-field ``object.__setattr__`` calls: the
    same fields in the instance's ``__dict__`` (``Instr`` has no ``__post_init__``), for the parser's
    loop over every instruction line.

    >>> _instr_of(("ret", (), 3, None, None, "", ("ret",), (), None, 1)) == Instr("ret", (), 3, parts=("ret",))
    True
    """
    if not _PLAIN_INSTR:
        return Instr(*values)
    ins = _new(Instr)
    ins.__dict__.update(zip(_INSTR_FIELDS, values))
    return ins


def make_instr(opcode: str, operands: tuple[str, ...], line: int, pred: str | None = None,
               loc: str | None = None, func: str = "") -> Instr:
    """An :class:`Instr` with its opcode parts, vector width, guard and operands decoded (what
    :func:`parse_ptx` builds for each instruction line).

    >>> i = make_instr("ld.shared.v4.b32", ("{%r1, %r2, %r3, %r4}", "[%r5+32]"), 9, pred="!%p1")
    >>> i.parts, i.vec, i.guard, i.args[1].offset
    (('ld', 'shared', 'v4', 'b32'), 4, Pred(reg='%p1', negated=True), 32)
    """
    parts, vec = _opcode_parts(opcode)
    guard = None if pred is None else _guard(pred)
    return Instr(opcode, operands, line, pred, loc, func, parts, tuple(map(decode_operand, operands)), guard, vec)


def operand_registers(ins: Instr) -> list[tuple[str, ...]]:
    """The register names of each operand of ``ins``, in order.

    Law: entry ``k`` is ``(a.name,)`` when ``args[k]`` is a :class:`Reg`, the names of the
    :class:`Reg` items of a :class:`Vec`, else ``()`` (an address's base is no operand register
    here). Read from the spelling (``%r1`` decodes to ``Reg('%r1')``; a vector is decoded alone by
    :func:`decode_operand`), so an instruction's ``args`` are not decoded for it.

    >>> operand_registers(parse_ptx(".version 8.7\\n.entry f()\\n{\\nmov.b64 {%r1, 2}, [%rd1];\\n}").instrs[0])
    [('%r1',), ()]
    """
    if "args" in ins.__dict__:                   # decoded already (or an Instr built with its args)
        return [_arg_regs(a) for a in ins.args]
    out = []
    for t in ins.operands:
        c = t[:1]
        if c == "%" and "|" not in t:
            out.append((t,))
        elif c == "{" and "|" not in t:
            out.append(_arg_regs(decode_operand(t)))
        else:
            out.append(())
    return out


def _arg_regs(a: Operand) -> tuple[str, ...]:
    ta = type(a)
    if ta is Reg:
        return (a.name,)
    if ta is Vec:
        return tuple(x.name for x in a.items if type(x) is Reg)
    return ()


@lru_cache(maxsize=256)   # key: an opcode's spelling (a kernel has a few wgmma shapes)
def wgmma_shape(opcode: str) -> tuple[int, int, int, str, str, str] | None:
    """``(M, N, K, accumulator, A type, B type)`` of a ``wgmma.mma_async`` opcode: the first dotted
    part ``m<M>n<N>k<K>`` and the three parts after it (the PTX ISA's
    ``wgmma.mma_async`` syntax: ``.shape.dtype.atype.btype``); None when no part is a shape or fewer than three follow it.

    >>> wgmma_shape("wgmma.mma_async.sp.sync.aligned.m64n64k32.f32.e4m3.e5m2")
    (64, 64, 32, 'f32', 'e4m3', 'e5m2')
    >>> wgmma_shape("wgmma.fence.sync.aligned") is None
    True
    """
    parts = opcode.split(".")
    idx = next((i for i, p in enumerate(parts) if _MMA_SHAPE.match(p)), None)
    if idx is None or len(parts) < idx + 4:
        return None
    m, n, k = (int(x) for x in _MMA_SHAPE.match(parts[idx]).groups())
    acc, a, b = parts[idx + 1:idx + 4]
    return m, n, k, acc, a, b


@lru_cache(maxsize=1 << 14)   # key: an operand's or guard's spelling (they repeat across a file)
def register_names(text: str) -> tuple[str, ...]:
    """The register names an operand or guard spells, in order: each ``%`` and the word characters
    after it (``[%rd3+16]`` -> ``%rd3``; ``%tid.x`` -> ``%tid``, its word part).

    >>> register_names("{%r1, %r2}"), register_names("[%rd3+16]"), register_names("!%p1"), register_names("16")
    (('%r1', '%r2'), ('%rd3',), ('%p1',), ())
    """
    return tuple(_REG_NAME.findall(text))


@lru_cache(maxsize=4096)   # key: an opcode's spelling (a kernel has a few dozen, kernels share most)
def _opcode_parts(opcode: str) -> tuple[tuple[str, ...], int]:
    parts = tuple(opcode.split("."))
    return parts, next((_VEC_PARTS[p] for p in parts if p in _VEC_PARTS), 1)


def _guard(pred: str) -> Pred:
    return Pred(pred.lstrip("!"), pred.startswith("!"))


def _decode(data: str | bytes) -> str:
    if isinstance(data, bytes):
        if len(data) > MAX_PTX_BYTES:
            raise LayoutError(f"PTX of {len(data)} bytes exceeds the {MAX_PTX_BYTES >> 20} MiB limit")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise LayoutError(f"byte {e.start}: not UTF-8 text (a PTX file is text)") from None
    if len(data) > MAX_PTX_BYTES:
        raise LayoutError(f"PTX of {len(data)} characters exceeds the {MAX_PTX_BYTES >> 20} MiB limit")
    return data


def _strip_comment(line: str) -> str:
    i = line.find("//")
    return line if i < 0 else line[:i]


def _instr_text(s: str) -> str | None:
    """The instruction part of a code line (labels and braces removed), or None."""
    s = s.strip()
    while True:
        m = _LABEL.match(s)
        if not m:
            break
        s = s[m.end():].strip()
    s = s.strip("{} \t")
    if not s or s.startswith("."):
        return None
    return s[:-1].strip() if s.endswith(";") else s


_BRACES = frozenset(("{", "}", ")"))
_WHOLE_LABEL = re.compile(r"[\w$]+:")


def _label_line(st: str) -> str | None:
    """The label of a stripped code line that is one label alone (``$L__BB0_2:``), ``""`` for a
    line that is one brace (``{``, ``}``, ``)``: no label, no instruction), else None (the general
    path reads it).

    >>> _label_line("$L__BB0_2:"), _label_line("}"), _label_line("L1: bra L1;")
    ('$L__BB0_2', '', None)
    """
    if st in _BRACES:
        return ""
    m = _WHOLE_LABEL.fullmatch(st)
    return st[:-1] if m else None


def _asm_mark(raw: str, in_asm: bool, loc: tuple | None, outside: tuple | None) -> tuple[bool, tuple | None, tuple | None]:
    """``(in_asm, loc, outside)`` after a comment line holding "inline asm". nvcc/LLVM mark inline
    asm with comments; a .loc written inside the asm text (as Triton's load asm does) is not LLVM's:
    after the region the location in force is LLVM's last one again (LLVM emits no new .loc when
    the line did not change).

    >>> _asm_mark("\t// begin inline asm", False, ("1", "7"), None), _asm_mark("// end inline asm", True, ("1", "9"), ("1", "7"))
    ((True, ('1', '7'), ('1', '7')), (False, ('1', '7'), ('1', '7')))
    """
    c = raw.strip()
    if c.startswith("// begin inline asm") and not in_asm:
        return True, loc, loc
    if c.startswith("// end inline asm") and in_asm:
        return False, outside, outside
    return in_asm, loc, outside


def _statements(line: str) -> list[str]:
    """A code line's statements: the line itself, or its pieces at each ``;`` when it holds several
    (an inline-asm block written on one line: ``{ .reg .pred p; setp.ne.b32 p, %r3, 0; ... }``).

    >>> _statements("add.s32 %r1, %r2, 3;"), _statements("{ .reg .pred p; @p bra L; }")
    (['add.s32 %r1, %r2, 3;'], ['{ .reg .pred p;', ' @p bra L;', ' }'])
    """
    if line.count(";") <= 1:
        return [line]
    pieces = [x + ";" for x in line.split(";")[:-1]]
    rest = line.split(";")[-1]
    return pieces + ([rest] if rest.strip() else [])


def _instruction(piece: str, n: int) -> tuple[str, tuple[str, ...], str | None] | None:
    """(opcode, operands, guard) of one statement, or None when it is no instruction (a directive,
    a label alone, a brace)."""
    body = _instr_text(piece)
    if body is None:
        return None
    pred = None
    pm = _PRED.match(body)
    if pm:
        pred, body = pm.group(1), body[pm.end():]
    om = _OPCODE.match(body)
    if not om:
        return None
    try:
        return om.group(1), split_operands(body[om.end():]), pred
    except LayoutError as e:
        raise LayoutError(f"line {n}: {e}") from None


def parse_ptx(text: str | bytes) -> PtxModule:
    """The :class:`PtxModule` of a PTX text (see the module docstring for the law)."""
    # long: one pass over the lines; every branch updates the same scanner state (function, .loc, inline-asm depth, labels)
    text = _decode(text)
    if "\x00" in text:
        raise LayoutError("the input holds NUL bytes: not a PTX text file")
    files: dict[str, str] = {}
    full: dict[str, str] = {}                        # .file number -> the path as written
    instrs: list[tuple] = []                         # Instr fields, the location still unresolved
    funcs: list[str] = []
    labels: list[tuple[str, str, int]] = []
    shared: list[str] = []
    threads: dict[str, int] = {}
    tables: list[tuple[str, str, list[str]]] = []   # .branchtargets: (function, label, targets)
    open_table = False
    target, loc, func, saw_version = None, None, "", False
    outside = None                      # the .loc in force outside the inline-asm region
    in_asm = False
    cont: tuple[str, int] | None = None             # an instruction continued over lines: its text, first line
    plain, loc_line, data_line, nesting = _PLAIN.match, _LOC.match, _DATA.match, _NESTING.search
    strip = str.strip
    for n, raw in enumerate(text.split("\n"), 1):
        if raw[:2] == ".b" and not open_table and (raw[2:4] == "8 " or data_line(raw)):   # debug data at column 0
            continue                    # (Triton's .debug sections): neither an instruction nor a .loc, skipped below too
        if func and cont is None and not open_table and (pm := plain(raw)):   # an instruction: the common line
            guard, opcode, rest = pm.groups()   # (what the steps below give it)
            if nesting(rest) is None:   # split_operands' common case, without the call
                ops = tuple(filter(None, map(strip, rest.split(","))))
            else:
                try:
                    ops = split_operands(rest.rstrip())
                except LayoutError as e:
                    raise LayoutError(f"line {n}: {e}") from None
            instrs.append((opcode, ops, n, guard, loc, func))
            continue
        if not open_table:              # the other common lines, told apart by their first character
            body = raw.lstrip()
            if body[:1] == ".":         # no instruction: a .loc, debug-section data, or a directive
                if body[:4] == ".loc" and (lm := loc_line(raw)):   # as the directive branch below reads it
                    loc = lm.group(1, 2)
                    continue
                if body[:2] == ".b" and data_line(raw):            # debug-section data: sets nothing
                    continue
            elif not body or body[:2] == "//":                     # blank, or a comment alone
                if "inline asm" in raw:
                    in_asm, loc, outside = _asm_mark(raw, in_asm, loc, outside)
                continue
        s = _strip_comment(raw)
        st = s.strip()
        if not st:
            if "inline asm" in raw:
                in_asm, loc, outside = _asm_mark(raw, in_asm, loc, outside)
            continue
        if open_table:                  # the targets of a .branchtargets table, up to its ';'
            tables[-1][2].extend(t.strip() for t in st.rstrip(";").split(",") if t.strip())
            open_table = not st.endswith(";")
            continue
        if st.startswith(".branchtargets") and func and labels and labels[-1][0] == func:
            tables.append((func, labels[-1][1], []))
            rest = st[len(".branchtargets"):].strip()
            tables[-1][2].extend(t.strip() for t in rest.rstrip(";").split(",") if t.strip())
            open_table = not rest.endswith(";")
            continue
        if st[0] == ".":                # a directive (an instruction or a label never starts with '.')
            if not st.startswith(_READ_DIRECTIVES):
                continue                # `.reg`, `.param`, ...: none of the patterns below matches it
            if st.startswith(".loc"):
                m = _LOC.match(s)
                if m:
                    loc = (m.group(1), m.group(2))   # resolved below: .file lines may come last
                    continue
            if st.startswith(".version"):
                saw_version = True
                continue
            if st.startswith(".target"):
                target = st.split(None, 1)[1].split(",")[0].strip() if len(st.split()) > 1 else None
                continue
            m = _FILE.match(s)
            if m:
                files[m.group(1)] = m.group(2).rsplit("/", 1)[-1]
                full[m.group(1)] = m.group(2)
                continue
            m = _ENTRY.match(s)
            if m:
                func = m.group(2)
                funcs.append(func)
                continue
            m = _SHARED.match(s)
            if m:
                shared.append(m.group(1))
            m = _NTID.match(s)
            if m and func and func not in threads:       # .reqntid comes first when both are given
                threads[func] = int(m.group(1)) * int(m.group(2) or 1) * int(m.group(3) or 1)
            continue
        at = n
        if cont is None and (st[-1] == ":" or st in _BRACES) and (lm := _label_line(st)) is not None:
            if func and lm:             # a label alone on its line (or a brace): what the loop below gives it
                labels.append((func, lm, len(instrs)))
            continue
        if cont is not None:            # a statement continued from an earlier line, up to its ';'
            cont = (cont[0] + " " + st, cont[1])
            if not st.endswith(";"):
                continue
            (s, at), cont = cont, None
        elif func and _OPEN_STATEMENT.match(st) and not _LABEL.match(st):
            cont = (st, n)
            continue
        for piece in _statements(s):        # an inline-asm block may hold several on one line
            lab = piece.strip().lstrip("{ \t")
            while func and (m := _LABEL.match(lab)):
                labels.append((func, m.group(1), len(instrs)))
                lab = lab[m.end():].strip()
            got = _instruction(piece, at) if func else None
            if got is not None:
                instrs.append((got[0], got[1], at, got[2], loc, func))
    if not saw_version and not instrs:
        raise LayoutError("line 1: not PTX (no .version directive and no instructions in an entry)")
    resolved = _typed(instrs, _LocNames(files))
    return PtxModule(target, resolved, tuple(funcs), tuple(labels), tuple(shared), tuple(threads.items()),
                     tuple(full.items()), tuple((f, lab, tuple(t)) for f, lab, t in tables))
