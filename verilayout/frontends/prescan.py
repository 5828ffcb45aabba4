"""What the door reads from a TTGIR or PTX text before (or without) parsing it, with nothing
heavier than ``re`` imported (the CLI's start-up path imports it): whether the text holds a whole
kernel (never green on nothing), the source files its locations name, and the element types of its
kernel's pointer arguments (a Triton cache's kernel names). A TTGIR text holds a kernel when it has a ``module`` with a
``tt.func`` and its brackets and strings close; a PTX text when it has ``.version``/``.target``,
an ``.entry`` or ``.func``, and its braces close.

Law: ``missing_part(t, kind)`` is None for every file Triton writes (the corpus), and not None
for each proper prefix of it that cuts a bracket pair or (TTGIR) drops the definition of a location
alias the ops use, and for empty text.

>>> missing_part("", "ttgir")
'empty: no TTGIR module'
>>> missing_part('module {\\n  tt.func @k() {\\n    tt.return\\n', "ttgir")
'truncated: 2 unclosed { (the file ends inside an op or function)'
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Iterator

__all__ = ["looks_like_ptx", "missing_part", "source_files", "pointer_element_types", "ttgir_inline_chains",
           "ptx_inline_sites", "PtxLocs", "target_name", "kernel_def_site", "QuietPtx", "quiet_ptx"]

_STRING = re.compile(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"')   # "(?:[^"\\\n]|\\.)*" unrolled: the same matches
_PTX_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_PAIRS = (("{", "}"), ("(", ")"), ("[", "]"))


def looks_like_ptx(text: str) -> bool:
    """True when ``text`` starts like PTX (``.version``/``.target`` before any MLIR module).

    >>> looks_like_ptx("//\\n.version 8.4\\n.target sm_90a\\n"), looks_like_ptx("module {\\n}")
    (True, False)
    """
    head = _PTX_COMMENT.sub("", text[:4096]).lstrip()
    return head.startswith((".version", ".target"))


def _unclosed(text: str, pairs=_PAIRS) -> str | None:
    """The first bracket kind left open (or closed too often) in ``text`` without strings."""
    for o, c in pairs:
        n = text.count(o) - text.count(c)
        if n:
            return f"{n} unclosed {o}" if n > 0 else f"{-n} more {c} than {o}"
    return None


def missing_part(text: str, kind: str) -> str | None:
    """What ``text`` (``kind`` ``"ttgir"`` or ``"ptx"``) lacks to hold a whole kernel, or None.

    >>> missing_part(".version 8.4\\n.target sm_90\\n", "ptx")
    'no .entry or .func: the PTX holds no kernel'
    """
    if not text.strip():
        return f"empty: no {'PTX' if kind == 'ptx' else 'TTGIR module'}"
    if kind == "ptx":
        return _ptx_missing(text)
    return _ttgir_missing(text)


def _ttgir_missing(text: str) -> str | None:
    if not re.search(r"^\s*module\b", text, re.M):
        if looks_like_ptx(text):
            return "this is PTX, not TTGIR (audit the .ptx file by path: its TTGIR beside it is the plan)"
        return "no `module`: not a TTGIR module"
    if not _has_word(text, "tt.func"):
        return "no tt.func: the module holds no kernel"
    body = _STRING.sub('""', text)
    if body.count('"') % 2:
        return "truncated: the file ends inside a string"
    bad = _unclosed(body)
    if bad:
        return f"truncated: {bad} (the file ends inside an op or function)"
    return _undefined_loc(text)


_ALIAS_DEF = re.compile(r"^(#loc\w*) = ", re.M)
#: _ALIAS_DEF after a line break (searched by that literal start, which ``^`` in multi-line mode
#: is not); the text's first line is matched on its own
_ALIAS_DEF_NL = re.compile(r"\n(#loc\w*) = ")
_ALIAS_USE = re.compile(r"#loc\w*")


def _undefined_loc(text: str) -> str | None:
    """A location alias the ops use that the module never defines: the file was cut inside the table
    of ``#locN = loc(...)`` lines MLIR prints after the module (a cut there closes every bracket).

    >>> _undefined_loc('module {\\n} loc(#loc3)\\n#loc = loc("k.py":1:0)\\n#lo')
    'truncated: location #loc3 is used but never defined (the file ends inside its location table)'
    """
    if "#loc" not in text:
        return None
    defined = set(_ALIAS_DEF_NL.findall(text))
    if text.startswith("#loc") and (first := _ALIAS_DEF.match(text)):
        defined.add(first.group(1))
    uses = _ALIAS_USE.findall(text)
    if defined.issuperset(uses):        # the whole table is there (the common case): no use to walk
        return None
    missing = next((u for u in uses if u not in defined), None)
    if missing is None:
        return None
    return f"truncated: location {missing} is used but never defined (the file ends inside its location table)"


def _is_word(ch: str) -> bool:
    """``ch`` is a character of ``re``'s ``\\w`` (Unicode: alphanumeric or ``_``)."""
    return ch.isalnum() or ch == "_"


def _has_word(text: str, word: str) -> bool:
    """``re.search(r"\\b" + re.escape(word) + r"\\b", text)`` for a ``word`` that starts and ends
    with a word character, by ``str.find`` (no regular expression scans every position).

    >>> _has_word("a tt.func @k", "tt.func"), _has_word("xtt.func", "tt.func"), _has_word("tt.funcs", "tt.func")
    (True, False, False)
    """
    i = text.find(word)
    while i >= 0:
        j = i + len(word)
        if (i == 0 or not _is_word(text[i - 1])) and (j == len(text) or not _is_word(text[j])):
            return True
        i = text.find(word, i + 1)
    return False


def _ptx_missing(text: str) -> str | None:
    body = _PTX_COMMENT.sub("", _STRING.sub('""', text))
    missing = [d for d in (".version", ".target") if not re.search(rf"^\s*\{d}\s", body, re.M)]
    if missing:
        return f"no {' or '.join(missing)} directive: not PTX"
    if not re.search(r"\.(entry|func)\b", body):
        return "no .entry or .func: the PTX holds no kernel"
    if body.count('"') % 2:
        return "truncated: the file ends inside a string"
    bad = _unclosed(body, (("{", "}"), ("(", ")")))
    if bad:
        where = "a parameter list" if "(" in bad or ")" in bad else "a function or section"
        return f"truncated: {bad} (the file ends inside {where})"
    return None


_FUNC_ARGS = re.compile(r"tt\.func\b[^@\n]*@[\w$.]+\((?P<args>[^\n]*)")
_PTR_ELEM = re.compile(r"!tt\.ptr<\s*([\w]+)")
_TTGIR_SOURCE = re.compile(r'loc\("([^"\\\n]*(?:\\.[^"\\\n]*)*)"\s*:\s*\d+')   # strings unrolled as _STRING
_PTX_SOURCE = re.compile(r'^\s*\.file\s+\d+\s+"([^"\n]*)"', re.M)
_PTX_FILE_HIT = re.compile(r'\.file\s+\d+\s+"([^"\n]*)"')


def pointer_element_types(text: str) -> tuple[str, ...]:
    """The MLIR element types of the first ``tt.func``'s pointer arguments of a TTGIR text, in
    argument order (as written on its line).

    >>> pointer_element_types("tt.func public @k(%a: !tt.ptr<f8E4M3FN> loc(#l), %c: !tt.ptr<f32>) {")
    ('f8E4M3FN', 'f32')
    """
    m = _FUNC_ARGS.search(text)
    return tuple(_PTR_ELEM.findall(m.group("args"))) if m else ()


def source_files(text: str, kind: str) -> tuple[str, ...]:
    """The source file paths a TTGIR (``loc("/a/k.py":3:1)``) or PTX (``.file 1 "/a/k.py"``, what
    a parsed module's ``files`` holds) text names, in order of first appearance, each once.

    >>> source_files('#loc = loc("/src/k.py":4:1)\\n#loc2 = loc("k.py":5:1)\\n#l3 = loc("/src/k.py":6:1)', "ttgir")
    ('/src/k.py', 'k.py')
    >>> source_files('.file 1 "/src/k.py"\\n.file 2 "/src/k.py"\\n.file 3 "lib.h"', "ptx")
    ('/src/k.py', 'lib.h')
    """
    if kind == "ptx":
        return tuple(dict.fromkeys(_ptx_file_names(text)))
    return tuple(dict.fromkeys(_TTGIR_SOURCE.findall(text)))


def _line_start_only(text: str, i: int) -> bool:
    """Only white space between the start of ``i``'s line and ``i``."""
    head = text[text.rfind("\n", 0, i) + 1:i]
    return not head or head.isspace()


def _ptx_file_names(text: str) -> list[str]:
    """``_PTX_SOURCE.findall(text)``: each ``.file`` directive's path. The directive is searched by
    its literal start (fast) and each hit must begin its line; where one does not (``.file`` inside
    a comment or string), the anchored expression decides, as before."""
    hits = list(_PTX_FILE_HIT.finditer(text))
    if all(_line_start_only(text, m.start()) for m in hits):
        return [m.group(1) for m in hits]
    return _PTX_SOURCE.findall(text)


# ----- inlined @triton.jit helpers: the call site and the helper's line ------------------------------

#: a TTGIR location alias line, ``#loc3 = loc(...)``: (name, body); the one pattern (frontends/ttgir
#: matches it line by line, ttgir_inline_chains over the whole text)
LOC_ALIAS = re.compile(r"^\s*#(loc\w*)\s*=\s*(loc\(.*\))\s*$", re.M)
#: LOC_ALIAS without its line anchor (searched by its literal start; each hit checked to begin its line)
_LOC_ALIAS_HIT = re.compile(r"#(loc\w*)\s*=\s*(loc\(.*\))\s*$", re.M)
_LOC_FILE = re.compile(r'^loc\(\s*"([^"\\\n]*(?:\\.[^"\\\n]*)*)"\s*:\s*(\d+)(?:\s*:\s*\d+)?\s*\)$')
_LOC_NAMED = re.compile(r'^loc\(\s*"[^"\\\n]*(?:\\.[^"\\\n]*)*"\s*\(\s*(#loc\w*|loc\(.*\))\s*\)\s*\)$')
_LOC_CALLSITE = re.compile(r"^loc\(\s*callsite\(\s*(#loc\w*)\s+at\s+(#loc\w*)\s*\)\s*\)$")
_LOC_ANY_FILE = re.compile(r'"([^"\\\n]*(?:\\.[^"\\\n]*)*)"\s*:\s*(\d+)')
#: a reference to a location alias inside a ``loc(...)`` body, ``#loc3``: its name
LOC_REF = re.compile(r"#(loc\w*)")
_OP_LOC = re.compile(r"\bloc\((#loc\w*)\)\s*\{?\s*$")


def _chain(body: str, locs: dict, depth: int = 0) -> tuple[str, ...]:
    """The source locations of a TTGIR ``loc(...)``: the outermost call site first, the line
    of the innermost inlined helper last (one entry where nothing was inlined)."""
    if depth > 32:
        return ()
    body = body.strip()
    if body.startswith("#"):
        return _chain(locs[body[1:]], locs, depth + 1) if body[1:] in locs else ()
    m = _LOC_FILE.match(body)
    if m:
        return (f"{m.group(1).rsplit('/', 1)[-1]}:{m.group(2)}",)
    m = _LOC_CALLSITE.match(body)
    if m:
        callee, caller = _chain(m.group(1), locs, depth + 1), _chain(m.group(2), locs, depth + 1)
        return caller + callee if caller and callee else callee or caller
    m = _LOC_NAMED.match(body)
    if m:
        return _chain(m.group(1), locs, depth + 1)
    m = _LOC_ANY_FILE.search(body)            # fused<...>[...] and other forms: the first file line
    if m:
        return (f"{m.group(1).rsplit('/', 1)[-1]}:{m.group(2)}",)
    for ref in LOC_REF.findall(body):
        got = _chain(locs.get(ref, ""), locs, depth + 1) if ref in locs else ()
        if got:
            return got
    return ()


def _loc_aliases(text: str) -> dict[str, str]:
    """``#locN`` -> its ``loc(...)`` text, as ``LOC_ALIAS.finditer`` reads them: searched by the
    literal ``#loc`` (fast), each hit beginning its line, else by the anchored expression."""
    hits = list(_LOC_ALIAS_HIT.finditer(text))
    if not all(_line_start_only(text, m.start()) for m in hits):
        hits = list(LOC_ALIAS.finditer(text))
    return {m.group(1): m.group(2) for m in hits}


def ttgir_inline_chains(text: str, lines: set[int] | None = None) -> dict[int, tuple[str, ...]]:
    """Line (1-based) -> the source locations of each TTGIR op whose ``loc(#ref)`` is a
    ``callsite(... at ...)`` (an op of an inlined ``@triton.jit`` helper, such as ``tl.sum``):
    the outermost call site (in the kernel) first, the helper's line last. ``lines``: only these
    lines are looked at (the lines of an audit's checks; the others' entries are left out).

    >>> t = ('#loc1 = loc("/s/k.py":9:12)\\n#loc2 = loc("/s/k.py":13:9)\\n#loc3 = loc("a"(#loc2))\\n'
    ...      '#loc4 = loc(callsite(#loc1 at #loc3))\\n  %0 = ttg.local_alloc %x : (t) -> m loc(#loc4)\\n')
    >>> ttgir_inline_chains(t)
    {5: ('k.py:13', 'k.py:9')}
    """
    locs = _loc_aliases(text)
    if not any("callsite(" in v for v in locs.values()):
        return {}
    out = {}
    rows = text.split("\n")
    wanted = range(1, len(rows) + 1) if lines is None else sorted(i for i in lines if 1 <= i <= len(rows))
    for i in wanted:
        line = rows[i - 1]
        m = _OP_LOC.search(line)
        if m and not line.lstrip().startswith("#"):
            chain = _chain(m.group(1), locs)
            if len(chain) > 1:
                out[i] = chain
    return out


_PTX_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"\n]*)"', re.M)
_PTX_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+(?:,[^\n]*?\binlined_at\s+(\d+)\s+(\d+)\s+\d+)?", re.M)
#: the two without their ``^\s*`` (:func:`_at_line_starts` puts it back)
_PTX_FILE_TAIL = re.compile(_PTX_FILE.pattern[len(r"^\s*"):])
_PTX_LOC_TAIL = re.compile(_PTX_LOC.pattern[len(r"^\s*"):])


def _at_line_starts(tail: re.Pattern, text: str) -> Iterator[tuple[int, re.Match]]:
    """``(m.start(), m)`` of each match ``m`` of ``^\\s*`` + ``tail`` (multi-line) in ``text``, as
    ``finditer`` gives them, with ``tail`` searched by its literal start (fast) instead of trying
    every position: a hit of ``tail`` at ``j`` is such a match when only white space lies between
    ``j`` and a line start at or after the end of the match before; the match starts at the first
    such line start (``\\s*`` crosses blank lines). ``tail[j:]`` is the same text either way.

    >>> [(p, m.group(1)) for p, m in _at_line_starts(re.compile(r"\\.loc (\\d)"), ".loc 1\\n x .loc 2\\n\\n  .loc 3")]
    [(0, '1'), (17, '3')]
    """
    floor, j = 0, 0
    while (m := tail.search(text, j)) is not None:
        j = m.start()
        ls = text.rfind("\n", 0, j) + 1
        if ls > floor + 1 and (ls == j or text[ls:j].isspace()) and not text[ls - 2].isspace():
            yield ls, m                   # the common hit: indented on its own line after a line of code
            floor = j = m.end()           # (the loop below ends at ls - 1 and the match starts at ls)
            continue
        b = j
        while b > floor and text[b - 1].isspace():
            b -= 1
        start = b if b == 0 or text[b - 1] == "\n" else text.find("\n", b, j) + 1
        if start <= 0 and b != 0:         # no line start between the last non-space and the hit
            j += 1
            continue
        yield start, m
        floor = j = m.end()


def ptx_inline_sites(text: str, last: int | None = None) -> list[tuple[int, str, str | None]]:
    """Each ``.loc`` of a PTX text in order: ``(line, "file.py:L", call site or None)``, the call
    site being what ``inlined_at`` names (LLVM's mark of an inlined helper's line); ``last``: only
    those up to that line (the scan stops there: the same entries, a prefix of the list).

    >>> ptx_inline_sites('.file 1 "/s/k.py"\\n.loc 1 13 9\\n.loc 1 9 26, function_name $L__x, inlined_at 1 13 9\\n')
    [(2, 'k.py:13', None), (3, 'k.py:9', 'k.py:13')]
    """
    locs = PtxLocs(text, last)
    return [(line, *locs.names(k)) for k, line in enumerate(locs.lines)]


class PtxLocs:
    """The ``.loc`` directives of a PTX text up to line ``last`` (all without it): ``lines``, each one's
    line as :func:`ptx_inline_sites` gives it, in order; ``names(k)``: the ``.loc``'s
    ``("file.py:L", call site or None)``, spelled when first asked (a caller that reads a few
    entries of a long kernel spells only those).

    >>> locs = PtxLocs('.file 1 "/s/k.py"\\n.loc 1 13 9\\n.loc 1 9 26, function_name $L__x, inlined_at 1 13 9\\n')
    >>> locs.lines, locs.names(1)
    ([2, 3], ('k.py:9', 'k.py:13'))
    """

    def __init__(self, text: str, last: int | None = None):
        self.files = {m.group(1): m.group(2).rsplit("/", 1)[-1] for _p, m in _at_line_starts(_PTX_FILE_TAIL, text)}
        self.lines: list[int] = []
        self._matches: list[re.Match] = []
        self._names: dict[int, tuple[str, str | None]] = {}
        line, pos, count = 1, 0, text.count
        for start, m in _at_line_starts(_PTX_LOC_TAIL, text):
            line, pos = line + count("\n", pos, start), start   # counted on from the last .loc
            if last is not None and line > last:
                break
            self.lines.append(line)
            self._matches.append(m)

    def names(self, k: int) -> tuple[str, str | None]:
        """``("file.py:L", call site or None)`` of the ``k``-th ``.loc``."""
        got = self._names.get(k)
        if got is None:
            f, ln, sf, sl = self._matches[k].group(1, 2, 3, 4)
            files = self.files
            got = self._names[k] = (f"{files.get(f, '?')}:{ln}", f"{files.get(sf, '?')}:{sl}" if sf else None)
        return got


def target_name(target: str | None) -> str | None:
    """One spelling of a target (a TTGIR module's ``ttg.target``, Triton's metadata): ``cuda:N`` as
    PTX's ``.target`` (``sm_90a`` from sm_90 on, where Triton compiles for the arch-specific
    target), ``hip:gfxN`` as ``gfxN``; others unchanged.

    >>> target_name("cuda:100"), target_name("cuda:80"), target_name("hip:gfx942"), target_name(None)
    ('sm_100a', 'sm_80', 'gfx942', None)
    """
    if not target:
        return target
    m = re.fullmatch(r"cuda:(\d+)", target)
    if m:
        cc = int(m.group(1))
        return f"sm_{cc}a" if cc >= 90 else f"sm_{cc}"
    return target.split(":", 1)[1] if target.startswith("hip:") else target


_FUNC = re.compile(r"^( *)tt\.func\b", re.M)
_LOC_DEF = re.compile(r'^(#loc\d*) = loc\("([^"]+)":(\d+):\d+\)', re.M)


def kernel_def_site(text: str) -> tuple[str, int] | None:
    """``(file, line)`` the first ``tt.func``'s location names (its ``def`` line in the kernel's
    source), or None. MLIR prints a function's ``loc`` after its body, on the line that closes it
    at the ``tt.func``'s indent (``  } loc(#loc1)``), as a ``#locN`` alias defined on a line
    ``#locN = loc("file":line:col)``.

    >>> kernel_def_site('#loc1 = loc("/k.py":12:0)\\nmodule {\\n  tt.func @k() {\\n    tt.return\\n  } loc(#loc1)\\n}')
    ('/k.py', 12)
    >>> kernel_def_site("module {\\n}") is None
    True
    """
    f = _FUNC.search(text)
    m = f and re.compile(rf"^{f.group(1)}\}} loc\((#loc\d*)\)", re.M).search(text, f.end())
    if not m:
        return None
    defs = {d.group(1): (d.group(2), int(d.group(3))) for d in _LOC_DEF.finditer(text)}
    return defs.get(m.group(1))


# ----- PTX that no PTX check reads ---------------------------------------------------------------

#: Spellings of every PTX instruction a PTX check of the audit reads (its shared-memory accesses:
#: ``ld``/``st``/``cp``/``atom`` ``.shared``, ``ldmatrix``/``stmatrix``; the MMA families ``mma``,
#: ``wgmma``, ``tcgen05``; the lane shuffles and reductions ``shfl``/``redux``; a warp-specialized
#: dispatch's ``brx.idx`` and its ``.branchtargets``), each a substring of its opcode or directive.
PTX_CHECKED = ("shared", "matrix", "mma", "tcgen05", "shfl", "redux", "brx", "branchtargets")
#: 65 brackets on one line (where ``frontends.ptx.split_operands`` may refuse a statement)
_PTX_DEEP = re.compile(r"[{\[(](?:[^\n{\[(]*[{\[(]){64}")
#: a line that may start an instruction continued over lines (``frontends.ptx``'s ``_OPEN_STATEMENT``
#: after its comment is cut): it starts with a letter or a guard and holds no ``;``, ``{`` or ``}``
#: before its comment
_PTX_OPEN = re.compile(r"\n[^\S\n]*[a-z@][^;{}\n]*?(?://[^\n]*)?(?:\n|$)")
if sys.version_info >= (3, 11):
    # the same lines found (a match there iff there is one here) without backtracking: the line is
    # read up to its first `;`, `{`, `}`, line end or `//` (possessive quantifiers: Python 3.11+);
    # what `search` gives is only tested for being a match
    _PTX_OPEN = re.compile(r"\n[^\S\n]*+[a-z@][^;{}\n/]*+(?:/(?!/)[^;{}\n/]*+)*+(?://|\n|$)")


def _directive_lines(text: str, word: str) -> Iterator[int]:
    """The start of each ``word`` that begins a line (only white space before it on its line)."""
    i = text.find(word)
    while i >= 0:
        if _line_start_only(text, i):
            yield i
        i = text.find(word, i + 1)


@dataclass(frozen=True)
class QuietPtx:
    """A PTX text none of whose instructions a PTX check reads (:func:`quiet_ptx`): its ``.target``
    as ``frontends.ptx.parse_ptx`` reads it (the last ``.target`` directive's first value)."""
    target: str | None


def quiet_ptx(text: str) -> QuietPtx | None:
    """The :class:`QuietPtx` of a PTX text that spells none of :data:`PTX_CHECKED` and that
    ``frontends.ptx.parse_ptx`` reads without an error (UTF-8 text with a ``.version``, no NUL byte,
    no statement continued over lines, no line of more than 64 brackets); else None (the text is
    to be parsed).

    Law: for a text with a QuietPtx, ``parse_ptx(text)`` raises nothing, holds no instruction a PTX
    check reads, and its ``target`` is the QuietPtx's.

    >>> quiet_ptx(".version 8.7\\n.target sm_90a\\n.entry f()\\n{\\nret;\\n}")
    QuietPtx(target='sm_90a')
    >>> quiet_ptx(".version 8.7\\n.entry f()\\n{\\nshfl.sync.bfly.b32 %r1, %r2, 1, 31, -1;\\n}") is None
    True
    """
    if any(word in text for word in PTX_CHECKED) or "\x00" in text or "/*" in text:
        return None
    if next(_directive_lines(text, ".version"), None) is None or _PTX_DEEP.search(text) or _PTX_OPEN.search(text):
        return None
    target = None
    for i in _directive_lines(text, ".target"):
        end = text.find("\n", i)
        st = text[i:end if end >= 0 else len(text)].split("//", 1)[0].strip()
        target = st.split(None, 1)[1].split(",")[0].strip() if len(st.split()) > 1 else None
    return QuietPtx(target)
