"""Symbolic values of PTX registers over z3 bit-vectors, and claims proved over them.

Law: :class:`PtxValues` gives each register of one PTX function the z3 expression of its single
definition, recursively; ``%tid.x`` is :data:`TID`, the address of a shared variable (Triton's
``global_smem``, or the names given) is :data:`SMEM`; kernel parameters, loads, registers defined
more than once (loop-carried) and unmodelled instructions are free symbols (listed in ``opaque``).
What an integer instruction computes is the table of :mod:`verilayout.prove.ptx_semantics`, read in
its z3 domain (the same table the PTX interpreter :mod:`verilayout.simulate.ptx_run` reads over
numpy). The PTX audit (``verilayout.audit.ptx``) and the independent check of emitted kernels
(``verilayout.simulate.independent``) both read descriptors and addresses through it.

>>> from verilayout.frontends.ptx import parse_ptx
>>> v = PtxValues(parse_ptx(".version 8.7\\n.visible .entry f()\\n{\\nmov.b32 %r1, global_smem;\\n"
...                         "add.s32 %r2, %r1, 16;\\n}"))
>>> decide_claim(v.reg("%r2") == SMEM + 16)[0]
'proved'
"""
from __future__ import annotations

import weakref
from functools import lru_cache
from operator import attrgetter
from typing import Any, Iterator

import z3

from verilayout.core.smt import solve
from verilayout.dtypes import ptx_reg_width
from verilayout.hw.nvidia.ptx_model import Addr, Imm, Instr, Operand, Pred, PredPair, PtxModule, Reg, Sym, Vec
from verilayout.prove import z3_api as api
from verilayout.prove.ptx_forms import PtxForms, type_bits
from verilayout.prove.ptx_semantics import PRED, Z3, compute, form, numeral

__all__ = ["SMEM", "TID", "PtxValues", "Prover", "reg_width", "fit", "decide_claim", "constant", "symbol_names", "symbol_widths",
           "magic_divisor", "division_idiom"]

#: The shared-memory base (the address of the kernel's shared variable), 32 bits.
SMEM = z3.BitVec("smem_base", 32)
#: ``%tid.x``.
TID = z3.BitVec("tid_x", 32)
#: the names of the two symbols every thread fixes (printed once: z3's printer is slow)
_FIXED_NAMES = (TID.decl().name(), SMEM.decl().name())
#: Special registers with one value in a thread (their symbols are ``v%ctaid.x``, ...).
_SPECIAL = ("v%ctaid.", "v%nctaid.", "v%ntid.", "v%tid.", "v%cluster_ctarank", "v%clusterid.", "v%cluster_ctaid.")
#: Opcodes whose first operand is not a destination register.
NO_DEST = ("st", "bar", "bra", "fence", "ret", "exit", "membar", "red.", "cp", "mbarrier", "wgmma",
           "tcgen05", "prefetch", "trap", "@", "barrier", "stmatrix", "elect", "griddepcontrol")


#: The width in bits of a register by its name (:func:`verilayout.dtypes.ptx_reg_width`), memoised
#: per name (a few hundred distinct per file).
reg_width = lru_cache(maxsize=8192)(ptx_reg_width)
_FUNC_OF = attrgetter("func")


def fit(e: z3.BitVecRef, w: int) -> z3.BitVecRef:
    """``e`` truncated or zero-extended to ``w`` bits.

    >>> z3.simplify(fit(z3.BitVecVal(0x1FF, 16), 8)).as_long(), fit(z3.BitVecVal(5, 8), 64).size()
    (255, 64)
    """
    ctx, a = api.ctx_of(e), api.addr_of(e)           # e.size() through the C API, no SortRef
    sort = api.sort_of(ctx, a)
    if api.sort_kind(ctx, sort) != z3.Z3_BV_SORT:     # not a bit-vector: the binding's own error
        n = z3.Z3_get_bv_sort_size(e.ctx_ref(), z3.Z3_get_sort(e.ctx_ref(), e.as_ast()))
    else:
        n = api.bv_sort_size(ctx, sort)
    return e if n == w else (z3.Extract(w - 1, 0, e) if n > w else z3.ZeroExt(w - n, e))


class _FunctionIndex:
    """What every evaluator of one function of one module reads and never changes: each register's
    definitions (``defs``, predicates in ``pdefs``, vector destinations' lanes in ``lane``), the
    function's instructions (``code``, empty for the whole module), their positions by line,
    each label's positions; and, filled on first use, the basic blocks (``cfg``) and the
    reaching definitions by register (``reaching``), functions of the former alone."""

    def __init__(self, mod: PtxModule, func: str | None):
        self.n = len(mod.instrs)                        # (no reference to mod: see _INDEXES)
        self.defs: dict[str, list[Instr]] = {}
        self.pdefs: dict[str, list[Instr]] = {}        # predicate registers (setp)
        self.lane: dict[tuple[int, str], int] = {}      # (line, register) -> index in a vector dest
        instrs = mod.instrs
        if func is None:
            code: list[Instr] = []
            glob: list[int | None] = [None] * len(instrs)
            mine = instrs
        elif set(map(_FUNC_OF, instrs)) <= {func}:   # one function (the common kernel): its code is the module's
            code = list(instrs)
            glob = range(len(instrs))                   # each instruction's index in code is its own
            mine = code
        else:
            code = [i for i in instrs if i.func == func]
            k = iter(range(len(code)))
            glob = [next(k) if i.func == func else None for i in instrs]   # index in code, or None
            mine = code
        self._note_defs(mine)
        self.code = code
        self.index = {i.line: k for k, i in enumerate(code)}
        self.labels: dict[str, list[int]] = {}
        for f, lab, at in mod.labels:
            if f == func and at < len(glob):
                k = next((glob[j] for j in range(at, len(glob)) if glob[j] is not None), len(code))
                self.labels.setdefault(lab, []).append(k)
        self.cfg: tuple | None = None
        self.reaching: dict[str, tuple] = {}

    def _note_defs(self, instrs) -> None:
        """Each instruction's destination registers noted (an opcode of ``NO_DEST`` has none;
        ``setp`` writes predicates; a vector destination is an unpack, each lane noted)."""
        defs, pdefs, kinds = self.defs, self.pdefs, {}   # opcode -> 0 no destination, 1 setp, 2 a register
        for i in instrs:
            ops = i.operands                   # as written: args are decoded only where read
            if not ops:
                continue
            kind = kinds.get(i.opcode)
            if kind is None:
                kind = kinds[i.opcode] = 0 if i.opcode.startswith(NO_DEST) else 1 if i.parts[0].startswith("setp") else 2
            if not kind:
                continue
            d = ops[0]
            if d[:1] == "%" and "|" not in d:           # the common case: args[0] is Reg(d)
                into = defs if kind == 2 else pdefs
                ds = into.get(d)
                if ds is None:
                    into[d] = [i]
                else:
                    ds.append(i)
            else:
                self._note_def(i, kind == 1)

    def _note_def(self, i: Instr, setp: bool) -> None:
        one = getattr(i, "arg", None)              # a parsed instruction decodes its destination alone
        dest = one(0) if one is not None else i.args[0]
        if setp:
            for d in (dest.regs if isinstance(dest, PredPair) else (dest,)):
                if isinstance(d, Reg):
                    self.pdefs.setdefault(d.name, []).append(i)
        elif isinstance(dest, Reg):
            self.defs.setdefault(dest.name, []).append(i)
        elif isinstance(dest, Vec):                  # mov.b64 {%r1, %r2}, %rd3 (an unpack)
            for k, d in enumerate(dest.items):
                if isinstance(d, Reg):
                    self.defs.setdefault(d.name, []).append(i)
                    self.lane[(i.line, d.name)] = k


#: The function indexes of each live module, by ``id(module)``: an entry goes when its module is
#: collected (``weakref.finalize``), so the id is never reused while it is here and no module is
#: kept alive by it.
_INDEXES: dict[int, dict[str | None, _FunctionIndex]] = {}


def _function_index(mod: PtxModule, func: str | None) -> _FunctionIndex:
    """The :class:`_FunctionIndex` of ``func`` in ``mod``, built once per module and function
    (the audit builds several evaluators of one function: the first iteration's and the loop's)."""
    per = _INDEXES.get(id(mod))
    if per is None:
        per = _INDEXES[id(mod)] = {}
        weakref.finalize(mod, _INDEXES.pop, id(mod), None)
    hit = per.get(func)
    if hit is None or hit.n != len(mod.instrs):
        hit = per[func] = _FunctionIndex(mod, func)
    return hit


class PtxValues:
    """Symbolic values of a PTX function's registers (see the module docstring): ``reg(name)``
    and ``operand(decoded operand, width)`` give z3 bit-vectors; ``opaque`` names what became a free symbol.
    ``kernel_inputs`` (the emitted-kernel checks' reading): ``ld.param`` of ``<kernel>_param_<k>`` is
    the symbol ``param<k>``, ``%ctaid.x`` the symbol ``ctaid_x``, ``cvta`` the identity; otherwise
    (the audit's) they are free symbols as any unmodelled instruction.

    >>> from verilayout.frontends.ptx import parse_ptx
    >>> v = PtxValues(parse_ptx(".version 8.7\\n.visible .entry f()\\n{\\nmov.u32 %r1, buf;\\n"
    ...                         "shl.b32 %r2, %r1, 1;\\n}"), smem_names=("buf",))
    >>> z3.simplify(v.reg("%r2") - (SMEM << 1)).as_long()
    0
    """

    def __init__(self, mod: PtxModule, func: str | None = None, first_iteration: bool = False,
                 smem_names: tuple[str, ...] = ("global_smem",), kernel_inputs: bool = False,
                 nonneg_params: dict[tuple[str, int], str] | None = None):
        #: (parameter, byte offset) -> why a 32-bit ``ld.param`` from there is a non-negative signed int
        self.nonneg_params = dict(nonneg_params or {})
        self.premises: dict[str, tuple[z3.BoolRef, str]] = {}   # symbol -> (fact, text): its ld.param's
        self.fixed: set[str] = set(_FIXED_NAMES)   # symbols with one value in a thread (guards())
        idx = _function_index(mod, func)                # shared by every evaluator of this function
        self.defs, self.pdefs, self.lane = idx.defs, idx.pdefs, idx.lane
        self.kernel_inputs = kernel_inputs   # parameters and %ctaid as named symbols, cvta the identity
        self.first_iteration = first_iteration   # loop-carried registers take their first definition
        self.memo: dict[str, z3.BitVecRef] = {}
        self.pmemo: dict[str, z3.BoolRef] = {}
        self.opaque: set[str] = set()
        self.carried: dict[str, tuple[str, list[Instr]]] = {}   # symbol -> (register, its definitions)
        self.invariants: dict[str, tuple[z3.BoolRef, str] | None] = {}   # symbol -> (law, text) or None
        self.depth = 0
        self.smem_names = tuple(smem_names)   # shared variables whose address is SMEM
        # flow sensitivity (one function): a use reads the definitions that reach it in the CFG
        self.flow = func is not None
        self.code, self.index, self.labels = idx.code, idx.index, idx.labels
        self._idx = idx
        self._at: int | None = None                     # the instruction whose operands are read
        self._rd: dict[str, tuple] = idx.reaching      # reaching definitions by register (shared)
        self._merging: set[str] = set()                 # joins being evaluated (_merge)
        self._cycled: set[str] = set()                  # ... that were read again while evaluated
        self.const_cache: dict = {}                     # constant()'s answers for this function's values
        self.prover = Prover()                          # incremental solvers for this function's claims
        self._forms: PtxForms | None = None

    def forms(self) -> PtxForms | None:
        """This evaluator's :class:`verilayout.prove.ptx_forms.PtxForms` (the registers' forms over
        the threads, read without z3 terms), built on first use; None with ``kernel_inputs``."""
        if self._forms is None and not self.kernel_inputs:
            self._forms = PtxForms(self)
        return self._forms

    def _sym(self, name: str, why: str) -> z3.BitVecRef:
        self.opaque.add(f"{name} ({why})")
        return z3.BitVec(f"v{name}", max(reg_width(name), 8))

    def reg(self, name: str, at: Instr | None = None) -> z3.BitVecRef:
        """The value of register ``name`` as a bit-vector of its width, read by instruction ``at``
        (default: the instruction being evaluated; with neither, every definition counts)."""
        if at is not None:
            saved, self._at = self._at, self.index.get(at.line)
            try:
                return self.reg(name)
            finally:
                self._at = saved
        ds_all = self.defs.get(name, [])
        ds = ds_all
        if self.flow and self._at is not None and len(ds_all) > 1:
            ds = self.reaching(name, self._at)
        key = name if ds is ds_all else name + "@" + ",".join(str(d.line) for d in ds)
        if key in self.memo:
            return self.memo[key]
        if key in self._merging:                        # read again while its join is evaluated: a loop
            self._cycled.add(key)
        if self.first_iteration and len(ds) > 1:
            ds = ds[:1]                       # the value on entry to the loop: its first iteration
        merged = self._merge(name, key, ds) if len(ds) > 1 and self.depth <= 400 else None
        if merged is not None:
            v = merged
        elif len(ds) != 1 or self.depth > 400:
            v = self._sym(key, "loop-carried" if len(ds) > 1 else "no definition")
            if len(ds) > 1:
                self.carried[str(v)] = (name, ds, key)
        else:
            self.depth += 1
            saved, self._at = self._at, self.index.get(ds[0].line)
            why = ds[0].opcode
            try:
                v = self._instr(ds[0], reg_width(name), name)
            except (z3.Z3Exception, ValueError, TypeError, IndexError, ArithmeticError, KeyError,
                    AssertionError) as e:
                v = None                                 # never a crash: a free symbol, the reason kept
                why = f"{ds[0].opcode}: internal error ({type(e).__name__}: {e})"
            finally:
                self.depth -= 1
                self._at = saved
            if v is None:
                v = self._sym(key, why)
                self._premise(ds[0], v)
                if ds[0].parts[:2] == ("ld", "param"):
                    self.fixed.add(str(v))
        v = fit(v, max(reg_width(name), 8))
        self.memo[key] = v
        return v

    def _merge(self, name: str, key: str, ds: list[Instr]) -> z3.BitVecRef | None:
        """A register whose reaching definitions (at most 4, none predicated) all come before the
        read in program order and do not read it themselves (an if/else join, not a loop): one of
        their values, ``If(path, v1, If(..., vn))``. ``path`` names the definitions' basic blocks,
        so registers defined in the same blocks take the same branch (each block's instructions
        run together). None (the caller's free symbol) otherwise, also when evaluating a
        definition reads the register again (a cycle)."""
        if not self.flow or self._at is None or len(ds) > 4 or key in self._merging:
            return None
        idx = [self.index.get(d.line) for d in ds]
        if any(k is None or k >= self._at for k in idx) or any(d.pred for d in ds):
            return None
        _starts, block, _succ = self._blocks()
        self._merging.add(key)
        vals = []
        saved = self._at
        try:
            for d, k in zip(ds, idx):
                self.depth += 1
                self._at = k
                try:
                    vals.append(self._instr(d, reg_width(name), name))
                except (z3.Z3Exception, ValueError, TypeError, IndexError, ArithmeticError, KeyError,
                        AssertionError):
                    return None
                finally:
                    self.depth -= 1
                    self._at = saved
            if key in self._cycled or any(v is None for v in vals):
                return None
        finally:
            self._merging.discard(key)
            self._cycled.discard(key)
        w = max(reg_width(name), 8)
        vals = [fit(v, w) for v in vals]
        tag = "_".join(str(block[k]) for k in idx)
        out = vals[-1]
        for j in range(len(vals) - 2, -1, -1):
            out = z3.If(z3.Bool(f"path_{tag}_{j}"), vals[j], out)
        return out

    def _blocks(self) -> tuple:
        """Basic blocks of the function: ``(starts, block of each instruction, successors)``."""
        if self._idx.cfg is not None:
            return self._idx.cfg
        n = len(self.code)
        leaders = {0} | {k for ks in self.labels.values() for k in ks if k < n}
        for k, i in enumerate(self.code):
            if i.opcode.startswith(("bra", "ret", "exit", "trap", "brx")) and k + 1 < n:
                leaders.add(k + 1)
        starts = sorted(leaders)
        block = [0] * n
        for b, st in enumerate(starts):
            for k in range(st, starts[b + 1] if b + 1 < len(starts) else n):
                block[k] = b
        succ: list[set[int]] = []
        for b, st in enumerate(starts):
            end = (starts[b + 1] if b + 1 < len(starts) else n) - 1
            last = self.code[end] if n else None
            out: set[int] = set()
            falls = True
            if last is not None and last.opcode.startswith(("bra", "brx")):
                targets = self.labels.get(_name(last.args[0]), []) if last.args else []
                if targets:                    # labels repeat in inline asm: take the nearest
                    out.add(block[min(targets, key=lambda t: abs(t - end))] if min(targets) < n else b)
                else:
                    out.update(range(len(starts)))   # an unknown target: anywhere (sound)
                falls = last.pred is not None
            elif last is not None and last.opcode.startswith(("ret", "exit", "trap")):
                falls = last.pred is not None
            if falls and b + 1 < len(starts):
                out.add(b + 1)
            succ.append(out)
        self._idx.cfg = (starts, block, succ)
        return self._idx.cfg

    def reaching(self, name: str, at: int) -> list[Instr]:
        """The definitions of ``name`` that reach instruction ``at`` (index in the function) along
        the control-flow graph (reaching definitions, iterated to the fixpoint)."""
        starts, block, succ = self._blocks()
        ds = self.defs.get(name, [])
        if name not in self._rd:
            nb = len(starts)
            last: dict[int, int] = {}
            for j, d in enumerate(ds):
                k = self.index.get(d.line)
                if k is not None:
                    last[block[k]] = j
            preds: list[list[int]] = [[] for _ in range(nb)]
            for b, ss in enumerate(succ):
                for t in ss:
                    preds[t].append(b)
            inn: list[frozenset] = [frozenset()] * nb
            out = [frozenset([last[b]]) if b in last else frozenset() for b in range(nb)]
            work = list(range(nb))
            while work:
                b = work.pop()
                inn[b] = frozenset().union(*(out[q] for q in preds[b]))
                new_out = frozenset([last[b]]) if b in last else inn[b]
                if new_out != out[b]:
                    out[b] = new_out
                    work.extend(succ[b])
            self._rd[name] = (inn, {self.index.get(d.line): j for j, d in enumerate(ds)})
        inn, pos = self._rd[name]
        b = block[at]
        for k in range(at - 1, starts[b] - 1, -1):
            if k in pos:
                return [ds[pos[k]]]
        return [ds[j] for j in sorted(inn[b])]

    def operand(self, op: Operand, w: int, at: Instr | None = None) -> z3.BitVecRef | None:
        """The value of one decoded operand (register, immediate, shared variable, ``{lo, hi}``)
        at ``w`` bits, read by instruction ``at`` (see :meth:`reg`); None if it is none of those."""
        if at is not None:
            saved, self._at = self._at, self.index.get(at.line)
            try:
                return self.operand(op, w)
            finally:
                self._at = saved
        if isinstance(op, Reg):
            if op.name == "%tid.x":
                return fit(TID, w)
            v = self.reg(op.name)                    # max(reg_width, 8) bits wide: reg() fits it
            return v if w == max(reg_width(op.name), 8) else fit(v, w)
        if isinstance(op, Imm):
            return numeral(op.value, w)
        if isinstance(op, Sym):
            return fit(SMEM, w) if op.name in self.smem_names else None
        if isinstance(op, Vec) and len(op.items) == 2 and all(isinstance(x, Reg) for x in op.items):
            lo, hi = self.reg(op.items[0].name), self.reg(op.items[1].name)   # mov.b64 %rd, {lo, hi}
            return fit(z3.Concat(hi, lo), w)
        return None

    def _premise(self, d: Instr, v: z3.BitVecRef) -> None:
        """Record the caller's fact about the value a single ``ld.param`` (32 bits, from a
        ``(parameter, offset)`` of ``nonneg_params``) loads: it is a non-negative signed int."""
        a = d.args[1] if len(d.args) == 2 else None
        if d.parts[:2] != ("ld", "param") or not isinstance(a, Addr) or not isinstance(a.base, Sym) \
                or v.size() != 32:
            return
        why = self.nonneg_params.get((a.base.name, a.offset))
        if why is not None:
            self.premises[str(v)] = (v >= 0, f"{_name(d.args[0])} (PTX line {d.line}) >= 0: {why}")

    def _def_values(self, sym: str) -> list[z3.BitVecRef] | None:
        """The value each definition of loop-carried ``sym``'s register writes (at its width), or
        None when one is not modelled."""
        name, ds, key = self.carried[sym]
        w = self.memo[key].size()
        out = []
        for d in ds:
            saved, self._at = self._at, self.index.get(d.line)
            try:
                e = self._instr(d, reg_width(name), name)
            except (z3.Z3Exception, ValueError, TypeError, IndexError, ArithmeticError, KeyError, AssertionError):
                e = None
            finally:
                self._at = saved
            if e is None:
                return None
            out.append(fit(e, w))
        return out

    def invariant(self, sym: str) -> tuple[z3.BoolRef, str] | None:
        """An inductive bound ``sym < c`` (unsigned) of a loop-carried register's symbol, proved
        by induction over its definitions: each definition that does not read the register is
        below ``c``, and each that does stays below ``c`` whenever the register's old value was
        (the other values on its path are universally quantified, so the law holds on every
        path). ``c`` is tried among the constants of the definitions and 2; where none proves,
        the bound is sought jointly with the loop-carried registers its definitions read
        (:meth:`joint_invariants`). The law is an inference from the PTX alone (and the caller's
        ``nonneg_params`` facts, each named) and is reported with the proofs using it."""
        if sym in self.invariants:
            return self.invariants[sym]
        self.invariants[sym] = None                      # a cycle through this symbol: no law
        got = self.carried.get(sym)
        if got is None:
            return None
        name, ds, key = got
        x = self.memo[key]
        exprs = self._def_values(sym)
        if exprs is None:
            return None
        got_laws = self.laws(*exprs)
        others = [lw for lw, _ in got_laws]   # bounds of other loop-carried values they read
        consts = {2} | {c for e in exprs for c in _constants(e) if 1 < c <= 1 << 16}
        for c in sorted(consts):
            law = z3.ULT(x, c)
            if all(self.prover.proves(z3.ULT(e, c), z3.And(law, *others), 2000) for e in exprs):
                given = f"; given {'; '.join(t for _, t in got_laws)}" if self.premises and got_laws else ""
                text = (f"loop-carried {name} < {c} (proved by induction over its {len(ds)} definitions, "
                        f"PTX lines {', '.join(str(d.line) for d in ds)}{given})")
                self.invariants[sym] = (law, text)
                return self.invariants[sym]
        return self.joint_invariants(sym).get(sym)

    def _closure(self, sym: str, limit: int) -> dict[str, list[z3.BitVecRef]] | None:
        """The loop-carried symbols ``sym``'s definitions read, transitively, each with its
        definitions' values (at most ``limit``; None past it or where one is not modelled)."""
        out: dict[str, list[z3.BitVecRef]] = {}
        todo = [sym]
        while todo:
            s = todo.pop()
            if s in out:
                continue
            vals = self._def_values(s)
            if vals is None or len(out) >= limit:
                return None
            out[s] = vals
            todo.extend(t for t in sorted(_symbols_of(*vals)) if t in self.carried and t not in out)
        return out

    def joint_invariants(self, sym: str, limit: int = 6) -> dict[str, tuple[z3.BoolRef, str]]:
        """Bounds ``x < c_x`` (unsigned) of ``sym`` and the loop-carried symbols its definitions read,
        proved together by induction: every definition of each ``x`` writes a value below ``c_x``
        whenever every bound holds for the values it reads (and the ``nonneg_params`` facts of the
        parameters on its path). Candidates per register: 2 and the constants of its definitions,
        the smallest first; a bound refuted under the others moves to the next (Houdini's
        fixpoint: what remains is inductive, so each bound holds on every execution). The bounds
        found, by symbol ({} if none); a pipeline's two stage registers (one wraps ``s + 1 == 5`` to
        0, the other is ``(s + k) mod 5``) are bounded this way.

        >>> from verilayout.frontends.ptx import parse_ptx
        >>> m = parse_ptx(".version 8.7\\n.entry f()\\n{\\nmov.u32 %r1, 0;\\nmov.u32 %r2, 0;\\nL:\\n"
        ...   "add.s32 %r3, %r2, 1;\\nsetp.eq.s32 %p1, %r3, 3;\\nselp.b32 %r1, 0, %r3, %p1;\\nmov.u32 %r2, %r1;\\nbra L;\\n}")
        >>> v = PtxValues(m, "f"); x = v.reg("%r1", at=m.instrs[2])
        >>> [str(law) for law, _ in v.laws(x)]
        ['ULT(v%r1@4,9, 3)']
        """
        members = self._closure(sym, limit)
        if not members:
            return {}
        xs = {s: self.memo[self.carried[s][2]] for s in members}
        prem = [f for f, _ in self._premises(*[e for vals in members.values() for e in vals])]
        cands = {s: sorted({2} | {c for e in vals for c in _constants(e) if 1 < c <= 1 << 16})
                 for s, vals in members.items()}
        pick = {s: 0 for s in members}
        changed = True
        while changed:
            changed = False
            hyp = z3.And(*prem, *[z3.ULT(xs[s], cands[s][k]) for s, k in pick.items() if k < len(cands[s])])
            for s, vals in members.items():
                k = pick[s]
                if k < len(cands[s]) and not all(self.prover.proves(z3.ULT(e, cands[s][k]), hyp, 2000) for e in vals):
                    pick[s] = k + 1
                    changed = True
        found = {s: cands[s][k] for s, k in pick.items() if k < len(cands[s])}
        texts = [t for _, t in self._premises(*[e for vals in members.values() for e in vals])]
        for s, c in found.items():
            name, ds, _key = self.carried[s]
            with_ = [f"{self.carried[t][0]} < {found[t]}" for t in found if t != s]
            text = (f"loop-carried {name} < {c} (proved by induction over its {len(ds)} definitions, PTX lines "
                    f"{', '.join(str(d.line) for d in ds)}" + (f", jointly with {', '.join(with_)}" if with_ else "")
                    + (f"; given {'; '.join(texts)}" if texts else "") + ")")
            self.invariants[s] = (z3.ULT(xs[s], c), text)
        return {s: self.invariants[s] for s in found}

    def _premises(self, *exprs: z3.ExprRef) -> list[tuple[z3.BoolRef, str]]:
        """The ``nonneg_params`` facts of the parameter loads ``exprs`` read."""
        return [self.premises[v] for v in sorted(_symbols_of(*exprs)) if v in self.premises] if self.premises else []

    def by_induction(self, claim: z3.BoolRef, assume: z3.BoolRef | None = None) -> str | None:
        """Prove ``claim`` about one loop-carried register's symbol by induction over that
        register's definitions: each definition's value satisfies the claim, assuming the register's
        old value did where the definition reads it. Only for a claim whose free symbols are that
        one register's, the shared-memory base and ``%tid.x`` (values that do not change between
        iterations; a definition may read anything else: it is universally quantified). The text
        of the law, or None when not proved. A claim over several loop-carried registers (a ring
        base one register advances and another wraps) is proved under each register's
        :meth:`alignment_laws`, each itself proved by induction.

        >>> from verilayout.frontends.ptx import parse_ptx
        >>> m = parse_ptx(".version 8.7\\n.entry f()\\n{\\nmov.u32 %r1, 0;\\nL:\\nadd.s32 %r1, %r1, 64;\\nbra L;\\n}")
        >>> v = PtxValues(m, "f"); x = v.reg("%r1", at=m.instrs[1])
        >>> v.by_induction(x & 63 == 0) is not None, v.by_induction(x & 127 == 0)
        (True, None)
        """
        syms = _symbols_of(claim) - set(_FIXED_NAMES)
        if len(syms) > 1:
            laws = self.alignment_laws(claim, assume)
            hyp = [law for law, _ in laws] + ([assume] if assume is not None else [])
            return "; ".join(text for _, text in laws) if laws and self.prover.proves(claim, z3.And(*hyp), 5000) \
                else None
        if len(syms) != 1 or next(iter(syms)) not in self.carried:
            return None
        sym = next(iter(syms))
        name, ds, key = self.carried[sym]
        x, values = self.memo[key], self._def_values(sym)
        if values is None:
            return None
        for e in values:
            hyp = [claim] if sym in _symbols_of(e) else []
            if not self.prover.proves(z3.substitute(claim, (x, e)), z3.And(*([assume] if assume is not None else []),
                                                                          *hyp), 3000):
                return None
        return (f"proved by induction over the {len(ds)} definitions of loop-carried {name} (PTX lines "
                f"{', '.join(str(d.line) for d in ds)})")

    def alignment_laws(self, claim: z3.BoolRef, assume: z3.BoolRef | None = None,
                       max_bits: int = 16) -> list[tuple[z3.BoolRef, str]]:
        """For each loop-carried symbol ``claim`` reads, the widest alignment ``x % 2^k == 0``
        (``k <= max_bits``) proved by induction over its definitions (:meth:`by_induction`, under
        ``assume``), with its text: the laws a claim over several loop-carried values (a pipeline
        ring's base pointer advanced by one register and wrapped by another) may be proved under.

        >>> from verilayout.frontends.ptx import parse_ptx
        >>> m = parse_ptx(".version 8.7\\n.entry f()\\n{\\nmov.u32 %r1, 0;\\nmov.u32 %r2, 0;\\nL:\\n"
        ...               "add.s32 %r1, %r1, 1024;\\nadd.s32 %r2, %r2, 3;\\nbra L;\\n}")
        >>> v = PtxValues(m, "f"); a, b = v.reg("%r1", at=m.instrs[2]), v.reg("%r2", at=m.instrs[2])
        >>> [text.split(":")[0] for _, text in v.alignment_laws((a + b * 2048) & 1023 == 0)]
        ['%r1 is a multiple of 1024']
        """
        out = []
        for sym in sorted(_symbols_of(claim) - set(_FIXED_NAMES)):
            if sym not in self.carried:
                continue
            x = self.memo[self.carried[sym][2]]
            for k in range(min(max_bits, x.size() - 1), 0, -1):
                law = x & z3.BitVecVal((1 << k) - 1, x.size()) == 0
                text = self.by_induction(law, assume)
                if text is not None:
                    out.append((law, f"{self.carried[sym][0]} is a multiple of {1 << k}: {text}"))
                    break
        return out

    def counter(self, sym: str) -> tuple[z3.BitVecRef, str, tuple[int, ...], int] | None:
        """``(symbol, register, definition lines, step)`` when loop-carried ``sym`` is a counter: each
        definition either writes ``sym + step`` (one positive constant ``step < 2^16``) or does not
        read it and writes a value below ``2^16`` (its start, for every value of the other symbols);
        else None. A counter's values are its start plus ``step`` per iteration (mod ``2^w``); how far
        it counts is not stated in the PTX where its loop exits on a loaded value.

        >>> from verilayout.frontends.ptx import parse_ptx
        >>> m = parse_ptx(".version 8.7\\n.entry f()\\n{\\nmov.u32 %r1, 0;\\nL:\\nadd.s32 %r1, %r1, 2;\\nbra L;\\n}")
        >>> v = PtxValues(m, "f"); x = v.reg("%r1", at=m.instrs[1])
        >>> v.counter(str(x))[1:]
        ('%r1', (4, 6), 2)
        """
        got = self.carried.get(sym)
        values = self._def_values(sym) if got is not None else None
        if values is None:
            return None
        name, ds, key = got
        x, steps = self.memo[key], set()
        for e in values:
            if sym in _symbols_of(e):
                step = z3.simplify(e - x)
                if not z3.is_bv_value(step) or not 0 < step.as_long() < 1 << 16:
                    return None
                steps.add(step.as_long())
            elif not self.prover.proves(z3.ULT(e, 1 << 16), None, 2000):
                return None
        return (x, name, tuple(d.line for d in ds), steps.pop()) if len(steps) == 1 else None

    def laws(self, *exprs: z3.ExprRef) -> list[tuple[z3.BoolRef, str]]:
        """The inductive invariants (:meth:`invariant`) of the loop-carried symbols ``exprs`` read, and
        the ``nonneg_params`` facts of the parameter loads they read."""
        out = self._premises(*exprs)
        for v in sorted(_symbols_of(*exprs)):
            if v in self.carried:
                got = self.invariant(v)
                if got is not None:
                    out.append(got)
        return out

    def _dominators(self) -> list[set[int]]:
        """The dominators of each basic block (entry: block 0), iterated to the fixpoint."""
        if getattr(self, "_dom", None) is not None:
            return self._dom
        _starts, _block, succ = self._blocks()
        n = len(succ)
        preds: list[set[int]] = [set() for _ in range(n)]
        for b, ss in enumerate(succ):
            for t in ss:
                preds[t].add(b)
        dom = [{0}] + [set(range(n)) for _ in range(1, n)]
        changed = True
        while changed:
            changed = False
            for b in range(1, n):
                new = {b} | (set.intersection(*(dom[q] for q in preds[b])) if preds[b] else set())
                if new != dom[b]:
                    dom[b], changed = new, True
        self._dom, self._preds = dom, preds
        return dom

    def guards(self, at: Instr) -> list[tuple[z3.BoolRef, str]]:
        """Conditions every execution reaching ``at`` has met: for each conditional branch ``@p bra``
        one of whose edges dominates ``at``'s block (the edge's target has that branch as its only
        predecessor and dominates the block), ``p`` (taken) or its negation (fall-through), with its
        text. Only a ``p`` whose value reads nothing but values fixed in a thread (``%tid.x``, the
        shared-memory base, parameter loads, special registers such as ``%ctaid.x``) is kept: it is the
        same at the branch and at ``at`` (a loop cannot change it). ``[]`` without flow sensitivity.

        >>> from verilayout.frontends.ptx import parse_ptx
        >>> m = parse_ptx(".version 8.7\\n.entry f()\\n{\\nsetp.gt.u32 %p1, %tid.x, 127;\\n@%p1 bra E;\\n"
        ...               "mov.u32 %r1, %tid.x;\\nE:\\nret;\\n}")
        >>> [str(g) for g, _ in PtxValues(m, "f").guards(m.instrs[2])]
        ['Not(UGT(tid_x, 127))']
        """
        k = self.index.get(at.line) if self.flow else None
        if k is None:
            return []
        starts, block, succ = self._blocks()
        dom = self._dominators()
        out = []
        for d in sorted(dom[block[k]]):
            end = (starts[d + 1] if d + 1 < len(starts) else len(self.code)) - 1
            last = self.code[end]
            if last.guard is None or not last.opcode.startswith("bra") or len(succ[d]) != 2 or d + 1 not in succ[d]:
                continue
            taken = next(t for t in succ[d] if t != d + 1)
            for x, took in ((taken, True), (d + 1, False)):
                if x in dom[block[k]] and self._preds[x] == {d}:
                    g = self._guard_value(last.guard)
                    if g is not None:
                        out.append((g if took else z3.Not(g), f"the branch at PTX line {last.line} is "
                                    f"{'taken' if took else 'not taken'} on the way here"))
        return out

    def _guard_value(self, p: Pred) -> z3.BoolRef | None:
        """A guard's value when its predicate register has one ``setp`` definition reading only
        values fixed in a thread, else None."""
        ds = self.pdefs.get(p.reg, [])
        if len(ds) != 1:
            return None
        saved, self._at = self._at, self.index.get(ds[0].line)
        try:
            v = self.setp(ds[0])
        except (z3.Z3Exception, ValueError, TypeError, IndexError, ArithmeticError, KeyError, AssertionError):
            v = None
        finally:
            self._at = saved
        fixed = self.fixed | {s for s in _symbols_of(v) if s.startswith(_SPECIAL)} if v is not None else set()
        if v is None or not _symbols_of(v) <= fixed:
            return None
        return z3.Not(v) if p.negated else v

    def pred(self, p: Pred | str) -> z3.BoolRef:
        """The value of a guard (:class:`Pred`, negated as it says) or of predicate register
        ``p`` (a name): its ``setp`` comparison when it has exactly one definition of a
        modelled form, else a free boolean."""
        if isinstance(p, Pred):
            return z3.Not(self.pred(p.reg)) if p.negated else self.pred(p.reg)
        name = p
        if name in self.pmemo:
            return self.pmemo[name]
        ds = self.pdefs.get(name, [])
        v = None
        if len(ds) == 1 and self.depth <= 400:
            self.depth += 1
            try:
                v = self.setp(ds[0])
            except (z3.Z3Exception, ValueError, TypeError, IndexError):
                v = None
            finally:
                self.depth -= 1
        if v is None:
            v = z3.Bool(f"pred{name}")
        self.pmemo[name] = v
        return v

    def setp(self, i: Instr) -> z3.BoolRef | None:
        """The Boolean an integer ``setp.CMP[.BOOLOP].TYPE p, a, b[, c]`` writes (one destination;
        :mod:`verilayout.prove.ptx_semantics`), or None when not modelled.

        >>> from verilayout.frontends.ptx import parse_ptx
        >>> m = parse_ptx(".version 8.7\\n.entry f()\\n{\\nsetp.lt.u32 %p1, %tid.x, 32;\\n}")
        >>> PtxValues(m, "f").setp(m.instrs[0]).sexpr()
        '(bvult tid_x #x00000020)'
        """
        if not i.args or isinstance(i.args[0], PredPair):
            return None
        return self._compute(i)

    def _source(self, op: Operand, w: int) -> Any:
        """A source operand read at width ``w`` (:data:`~verilayout.prove.ptx_semantics.PRED`: a
        predicate register's Boolean)."""
        if w == PRED:
            return self.pred(op.name) if isinstance(op, Reg) else None
        return self.operand(op, w)

    def _compute(self, i: Instr) -> Any:
        """What the table of :mod:`verilayout.prove.ptx_semantics` says ``i`` computes, over z3."""
        f = form(i.parts)
        if f is None or len(i.args) != len(f.sources) + 1:
            return None
        srcs = [self._source(o, sw) for o, sw in zip(i.args[1:], f.sources)]
        if any(x is None for x in srcs):
            return None
        return compute(Z3, i.parts, srcs)

    def _kernel_input(self, i: Instr, w: int) -> z3.BitVecRef | None:
        """With ``kernel_inputs``: ``ld.param`` of ``<kernel>_param_<k>`` is the symbol ``param<k>``,
        ``mov`` of ``%ctaid.x`` the symbol ``ctaid_x``, ``cvta`` its source (a generic address
        equal to the state-space address: the emitted kernels' model); else None."""
        head, args = i.parts[0], i.args
        if head == "cvta" and len(args) == 2:
            return self.operand(args[1], w)
        if head == "ld" and "param" in i.parts and len(args) == 2 and isinstance(args[1], Addr) \
                and isinstance(args[1].base, Sym):
            k = args[1].base.name.rpartition("_param_")[2]
            return z3.BitVec(f"param{k}", w) if k.isdigit() else None
        if head == "mov" and len(args) == 2 and isinstance(args[1], Reg) and args[1].name.startswith("%ctaid."):
            return z3.BitVec("ctaid_" + args[1].name[len("%ctaid."):], w)
        return None

    def _instr(self, i: Instr, w: int, dest: str = "") -> z3.BitVecRef | None:
        """The value instruction ``i`` writes to ``dest`` (``w`` bits): one element of a vector
        unpack, a ``shfl`` of a thread's own value, a kernel input (``kernel_inputs``), or what
        :mod:`verilayout.prove.ptx_semantics` says the opcode computes; None when not modelled."""
        parts = i.parts
        head = parts[0]
        tw = type_bits(parts, w)
        if (i.line, dest) in self.lane:                # one element of a vector destination
            if head != "mov" or len(i.args) != 2 or not isinstance(i.args[0], Vec):
                return None
            n = len(i.args[0].items)
            src = self.operand(i.args[1], tw)
            if src is None or tw % n:
                return None
            ew, k = tw // n, self.lane[(i.line, dest)]
            return z3.Extract(ew * (k + 1) - 1, ew * k, src)
        if head == "shfl":
            return self._shfl_idx(i, [self.operand(o, tw) for o in i.args[1:2]])
        if self.kernel_inputs:
            v = self._kernel_input(i, w)
            if v is not None:
                return v
        v = self._compute(i)
        return division_idiom(v) if head in ("add", "sub") and v is not None else v

    def _shfl_idx(self, i: Instr, ops: list) -> z3.BitVecRef | None:
        """``shfl.sync.idx.b32 d, a, L, 31, -1`` (full warp, constant source lane ``L``): ``d`` is
        ``a`` as lane ``L`` of the same warp holds it (PTX ISA, shfl.sync: ``c = 31`` clears the
        segment mask, so the source lane is ``L & 31``, always valid), i.e. ``a`` with ``%tid.x``
        replaced by ``(%tid.x & ~31) | L``. Modelled only when ``a`` reads no value but ``%tid.x``
        and the shared-memory base (any other symbol could differ between lanes); else None."""
        if i.parts[:3] != ("shfl", "sync", "idx") or len(i.args) != 5 or not ops or ops[0] is None:
            return None
        lane, clamp, mask = (_imm(o) for o in i.args[2:5])
        if lane is None or clamp != 31 or mask is None or mask % (1 << 32) != 0xFFFFFFFF:
            return None
        if not _symbols_of(ops[0]) <= set(_FIXED_NAMES):
            return None
        src = (TID & ~31) | (lane & 31)
        return z3.substitute(ops[0], (TID, src))


def magic_divisor(m: int, s: int, w: int = 32) -> int | None:
    """The divisor ``d`` a compiler's signed division by a constant computes with the magic number
    ``m`` and shift ``s`` on ``w``-bit ints: ``q = (mul.hi.s(n, m) >> s) + (mul.hi.s(n, m) >>> (w-1))``
    equals ``n / d`` truncated (PTX ISA ``div.s32``) for every ``w``-bit ``n``; None when that is not
    proved by the bound below (the sign term adds 1 for negative ``n``).

    Law (Granlund and Montgomery's bound, derived here): with ``k = w + s``, ``d = floor(2^k / m) + 1``
    and ``e = m d - 2^k > 0``, ``n m / 2^k = n / d + n e / (d 2^k)``. For ``0 <= n < 2^(w-1)`` the
    floor is ``floor(n / d)`` when ``n e < 2^k`` (the fraction of ``n / d`` is at most ``(d-1)/d``);
    for ``n = -a``, ``0 < a <= 2^(w-1)``, the floor plus 1 is ``-floor(a / d)`` (truncation) when
    ``0 < a e <= 2^k``. Both hold when ``0 < m < 2^(w-1)`` and ``2^(w-1) e <= 2^k``.

    >>> magic_divisor(0x66666667, 1), magic_divisor(0x55555556, 0), magic_divisor(0x66666667, 2), magic_divisor(7, 0)
    (5, 3, 10, None)
    """
    if not 0 < m < 1 << (w - 1) or s < 0:
        return None
    k = w + s
    d = (1 << k) // m + 1
    e = m * d - (1 << k)
    return d if d > 1 and e > 0 and (e << (w - 1)) <= 1 << k else None


def _top_kind(e: z3.ExprRef) -> int | None:
    """The z3 operation ``e`` applies (None for a term that is no application), read through
    :mod:`verilayout.prove.z3_api` (no binding object, no error check per call)."""
    ctx, a = api.ctx_of(e), api.addr_of(e)
    if api.ast_kind(ctx, a) != z3.Z3_APP_AST:
        return None
    return api.decl_kind(ctx, api.app_decl(ctx, a))


def _kind(e: z3.ExprRef, op: int, n: int) -> bool:
    """``e`` is an application of z3 operation ``op`` to ``n`` arguments (read through z3's C API:
    no Python object per declaration; a numeral is an application of no such operation)."""
    ctx, a = api.ctx_of(e), api.addr_of(e)
    return (api.ast_kind(ctx, a) == z3.Z3_APP_AST
            and api.decl_kind(ctx, api.app_decl(ctx, a)) == op
            and api.app_num_args(ctx, a) == n)


def _has_arg_of(e: z3.ExprRef, op: int) -> bool:
    """Some argument of the application ``e`` is an application of z3 operation ``op`` (C API)."""
    ctx, a = api.ctx_of(e), api.addr_of(e)
    for i in range(api.app_num_args(ctx, a)):
        b = api.app_arg(ctx, a, i)
        if api.ast_kind(ctx, b) == z3.Z3_APP_AST and api.decl_kind(ctx, api.app_decl(ctx, b)) == op:
            return True
    return False


def _magic_quotient(e: z3.ExprRef) -> z3.BitVecRef | None:
    """``n / d`` (``bvsdiv``) when ``e`` is literally the signed magic-number quotient of
    :func:`magic_divisor` (``bvadd`` of ``bvashr(h, s)`` or ``h``, and ``bvlshr(h, w-1)``, with ``h``
    the high half of the sign-extended product ``n * m``), else None."""
    if not _kind(e, z3.Z3_OP_BADD, 2) or not _has_arg_of(e, z3.Z3_OP_BLSHR):
        return None
    w = e.size()
    for a, b in ((e.arg(0), e.arg(1)), (e.arg(1), e.arg(0))):
        if not _kind(b, z3.Z3_OP_BLSHR, 2) or not z3.is_bv_value(b.arg(1)) or b.arg(1).as_long() != w - 1:
            continue
        h = b.arg(0)
        s = 0
        if _kind(a, z3.Z3_OP_BASHR, 2) and z3.is_bv_value(a.arg(1)) and z3.eq(a.arg(0), h):
            s = a.arg(1).as_long()
        elif not z3.eq(a, h):
            continue
        got = _signed_high_product(h, w)
        if got is not None:
            n, m = got
            d = magic_divisor(m, s, w)
            if d is not None:
                return n / z3.BitVecVal(d, w)
    return None


def _signed_high_product(h: z3.ExprRef, w: int) -> tuple[z3.BitVecRef, int] | None:
    """``(n, m)`` when ``h`` is ``Extract(2w-1, w, SignExt(w, n) * SignExt(w, m))`` with ``m`` a
    constant (PTX ISA ``mul.hi.s``), else None."""
    if not _kind(h, z3.Z3_OP_EXTRACT, 1) or h.params() != [2 * w - 1, w]:
        return None
    p = h.arg(0)
    if not _kind(p, z3.Z3_OP_BMUL, 2):
        return None
    ext = [p.arg(0), p.arg(1)]
    if not all(_kind(x, z3.Z3_OP_SIGN_EXT, 1) and x.params() == [w] for x in ext):
        return None
    inner = [x.arg(0) for x in ext]
    for n, c in ((inner[0], inner[1]), (inner[1], inner[0])):
        if z3.is_bv_value(c):
            v = c.as_long()
            return n, v - (1 << w) if v >> (w - 1) else v
    return None


def division_idiom(e: z3.BitVecRef) -> z3.BitVecRef:
    """``e`` with a compiler's signed division or remainder by a constant written as z3's
    ``bvsdiv`` / ``bvsrem`` (the same value for every value of the symbols, so every claim reads
    the same; the solver decides a bound on ``bvsrem`` at once, not on the product it replaces):
    the magic-number quotient (:func:`magic_divisor`) becomes ``n / d``, and ``n - d * (n / d)``
    (``mul.lo`` then ``sub``) becomes ``SRem(n, d)`` (SMT-LIB's ``bvsrem``: truncated, the sign of
    ``n``, as PTX ISA ``rem.s32``). Any other term is returned as it is.

    >>> n = z3.BitVec("n", 32)
    >>> h = z3.Extract(63, 32, z3.SignExt(32, n) * z3.SignExt(32, z3.BitVecVal(0x66666667, 32)))
    >>> q = division_idiom((h >> 1) + z3.LShR(h, 31)); r = division_idiom(n - q * 5)
    >>> q.sexpr(), r.sexpr()
    ('(bvsdiv n #x00000005)', '(bvsrem n #x00000005)')
    """
    top = _top_kind(e)
    if top == z3.Z3_OP_BADD:
        q = _magic_quotient(e)
        if q is not None:
            return q
    if top == z3.Z3_OP_BSUB and _kind(e, z3.Z3_OP_BSUB, 2) and _kind(e.arg(1), z3.Z3_OP_BMUL, 2):
        n, t = e.arg(0), e.arg(1)
        for q, c in ((t.arg(0), t.arg(1)), (t.arg(1), t.arg(0))):
            if _kind(q, z3.Z3_OP_BSDIV, 2) and z3.is_bv_value(c) and z3.eq(q.arg(1), c) and z3.eq(q.arg(0), n) \
                    and c.as_long() != 0:
                return z3.SRem(n, c)
    return e


def _imm(op: Operand) -> int | None:
    """An immediate operand's value, else None."""
    return op.value if isinstance(op, Imm) else None


def _name(op: Operand) -> str:
    """The name an operand gives (a label, a register), else its text."""
    return op.name if isinstance(op, (Reg, Sym)) else getattr(op, "text", "")


def symbol_names(*exprs: z3.ExprRef) -> set[str]:
    """Names of the free symbols (uninterpreted constants) of ``exprs``.

    >>> sorted(symbol_names(TID + 1, SMEM & 3))
    ['smem_base', 'tid_x']
    """
    return _symbols_of(*exprs)


def _symbols_of(*exprs: z3.ExprRef) -> set[str]:
    """Names of the uninterpreted constants in ``exprs``."""
    return {_symbol_name(ctx, a, exprs) for ctx, a in _leaves(*exprs) if _uninterpreted(ctx, a)}


def _uninterpreted(ctx: Any, a: Any) -> bool:
    """The leaf ``a`` is an uninterpreted constant (a symbol)."""
    return z3.Z3_get_ast_kind(ctx, a) == z3.Z3_APP_AST and \
        z3.Z3_get_decl_kind(ctx, z3.Z3_get_app_decl(ctx, a)) == z3.Z3_OP_UNINTERPRETED


def _symbol_name(ctx: Any, a: Any, exprs: tuple) -> str:
    """The name of the symbol ``a`` as ``str()`` of its term prints it: its string symbol, read
    through the C API (z3's printer is slow); other symbols through the printer."""
    sym = z3.Z3_get_decl_name(ctx, z3.Z3_get_app_decl(ctx, a))
    if z3.Z3_get_symbol_kind(ctx, sym) == z3.Z3_STRING_SYMBOL:
        return z3.Z3_get_symbol_string(ctx, sym)
    owner = next(x.ctx for x in exprs if x is not None and x.ctx_ref().value == ctx.value)
    return str(z3.ExprRef(a, owner))


def _leaves(*exprs) -> Iterator[tuple[Any, Any]]:
    """``(context, ast)`` of every distinct leaf (no arguments) of ``exprs`` (a shared subterm once;
    ``None`` skipped), walked depth-first through z3's C API: no Python term object per subterm
    (the terms given keep every pointer of the walk alive)."""
    seen: set[int] = set()
    for x in exprs:
        if x is None:
            continue
        ctx = x.ctx_ref()
        todo = [x.as_ast()]
        while todo:
            a = todo.pop()
            k = z3.Z3_get_ast_id(ctx, a)
            if k in seen:
                continue
            seen.add(k)
            if z3.Z3_get_ast_kind(ctx, a) not in (z3.Z3_APP_AST, z3.Z3_NUMERAL_AST):
                continue
            n = z3.Z3_get_app_num_args(ctx, a)
            if n == 0:
                yield ctx, a
            else:
                todo.extend(z3.Z3_get_app_arg(ctx, a, i) for i in range(n))


def _constants(e: z3.ExprRef) -> set[int]:
    """The bit-vector constants that occur in ``e``."""
    out = set()
    for ctx, a in _leaves(e):
        if z3.Z3_is_numeral_ast(ctx, a) and z3.Z3_get_sort_kind(ctx, z3.Z3_get_sort(ctx, a)) == z3.Z3_BV_SORT:
            out.add(int(z3.Z3_get_numeral_string(ctx, a)))
    return out


def decide_claim(claim: z3.BoolRef, assume: z3.BoolRef | None = None,
                timeout_ms: int = 5000) -> tuple[str, Any]:
    """``("proved", None)`` if ``claim`` holds for every value of its symbols under ``assume``,
    ``("counterexample", model)`` if not, ``("unknown", None)`` on a solver timeout.

    >>> x = z3.BitVec("x", 8)
    >>> decide_claim(x & 0 == 0)[0], decide_claim(x == 1)[0]
    ('proved', 'counterexample')
    """
    if z3.is_true(z3.simplify(claim)):                 # the simplifier already decides it (sound)
        return "proved", None
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    if assume is not None:
        s.add(assume)
    s.add(z3.Not(claim))
    r = solve(s)
    if r == z3.unsat:
        return "proved", None
    if r == z3.sat:
        return "counterexample", s.model()
    return "unknown", None


class Prover:
    """Claims decided over incremental solvers, one per assumption (asserted once; each claim is
    pushed, checked and popped): a fresh ``z3.Solver`` spends most of a small claim's time setting
    itself up. Law: :meth:`proves` is True only when the negated claim is unsat under the
    assumption (a proof; a timeout or a model is False), and :meth:`decide` answers exactly as
    :func:`decide_claim` does, which it calls for every claim not proved here (so a model, an
    unknown or a counterexample never depends on what the incremental solver saw before). Owned by
    its caller (one per evaluated function); it keeps at most ``max_solvers`` solvers, the oldest
    dropped first.

    >>> x, p = z3.BitVec("x", 8), Prover()
    >>> p.proves(z3.ULT(x & 7, 8)), p.proves(x == 3), p.decide(x & 1 == 1, x == 3)[0]
    (True, False, 'proved')
    """

    def __init__(self, max_solvers: int = 16):
        self.max_solvers = max_solvers
        self._solvers: list[tuple[int | None, z3.BoolRef | None, z3.Solver]] = []

    def _solver(self, assume: z3.BoolRef | None) -> z3.Solver:
        h = None if assume is None else assume.hash()
        for hh, a, s in self._solvers:
            if hh == h and (a is None if assume is None else a is not None and z3.eq(a, assume)):
                return s
        s = z3.Solver()
        if assume is not None:
            s.add(assume)
        self._solvers.append((h, assume, s))
        if len(self._solvers) > self.max_solvers:
            self._solvers.pop(0)
        return s

    def proves(self, claim: z3.BoolRef, assume: z3.BoolRef | None = None, timeout_ms: int = 5000) -> bool:
        """True when ``claim`` holds for every value of its symbols under ``assume`` (proved here:
        the simplifier, or the incremental solver finds the negation unsat within the timeout).

        >>> x = z3.BitVec("x", 8)
        >>> Prover().proves(x + 1 != x), Prover().proves(x != 0, z3.UGT(x, 4)), Prover().proves(x != 0)
        (True, True, False)
        """
        if z3.is_true(z3.simplify(claim)):
            return True
        s = self._solver(assume)
        s.set("timeout", timeout_ms)
        s.push()
        try:
            s.add(z3.Not(claim))
            return solve(s) == z3.unsat
        finally:
            s.pop()

    def decide(self, claim: z3.BoolRef, assume: z3.BoolRef | None = None,
               timeout_ms: int = 5000) -> tuple[str, Any]:
        """:func:`decide_claim`'s answer: ``("proved", None)`` from :meth:`proves`, else
        :func:`decide_claim` itself (a fresh solver: its model, or unknown on a timeout).

        >>> x = z3.BitVec("x", 8)
        >>> Prover().decide(x | 1 != 0)[0], Prover().decide(x == 1)[0]
        ('proved', 'counterexample')
        """
        if self.proves(claim, assume, timeout_ms):
            return "proved", None
        return decide_claim(claim, assume, timeout_ms)


def constant(e: z3.BitVecRef, assume: z3.BoolRef | None = None, cache: dict | None = None,
             prover: Prover | None = None) -> int | None:
    """``e``'s value if it is one constant for every value of its symbols under ``assume``,
    else None (also when the solver times out). ``cache`` (a dict the caller owns, e.g. one per
    audited file) keeps answers by the simplified expression and assumption, compared structurally;
    ``prover`` (the caller's :class:`Prover`) decides the claims, else a fresh solver does.

    >>> x = z3.BitVec("x", 8)
    >>> constant(z3.LShR(x & 0xF0, 8)), constant(x & 1), constant(x & 1, x == 3, prover=Prover())
    (0, None, 1)
    """
    e = z3.simplify(e)
    if z3.is_bv_value(e):
        return e.as_long()
    if cache is None:
        return _constant(e, assume, prover)
    key = (e.hash(), None if assume is None else assume.hash())
    for ce, ca, v in cache.get(key, ()):
        if z3.eq(ce, e) and (assume is None if ca is None else ca is not None and z3.eq(ca, assume)):
            return v
    v = _constant(e, assume, prover)
    cache.setdefault(key, []).append((e, assume, v))
    return v


def _constant(e: z3.BitVecRef, assume: z3.BoolRef | None, prover: Prover | None = None) -> int | None:
    """The candidate is ``e`` with every symbol 0 when that satisfies ``assume`` (no solver call),
    else a model's value (any model: a constant has one value); then one proof that ``e`` always
    equals it."""
    zeros = [(c, z3.BitVecVal(0, c.size()) if z3.is_bv(c) else z3.BoolVal(False)) for c in _consts_of(e, assume)]
    v = None
    if assume is None or z3.is_true(z3.simplify(z3.substitute(assume, *zeros) if zeros else assume)):
        c = z3.simplify(z3.substitute(e, *zeros) if zeros else e)
        v = c.as_long() if z3.is_bv_value(c) else None
    if v is None:
        s = z3.Solver()
        s.set("timeout", 3000)
        if assume is not None:
            s.add(assume)
        if solve(s) != z3.sat:
            return None
        v = s.model().eval(e, model_completion=True).as_long()
    if prover is not None:
        return v if prover.proves(e == v, assume) else None
    return v if decide_claim(e == v, assume)[0] == "proved" else None


def symbol_widths(e: z3.ExprRef) -> dict[str, int] | None:
    """Each free symbol of ``e`` by its name (the string z3 keeps, what ``prove.z3_numpy`` reads)
    to its bit-vector width; None when a symbol is not a bit-vector or has no string name.

    >>> symbol_widths(z3.ZeroExt(24, z3.BitVec("a", 8)) + SMEM), symbol_widths(z3.If(z3.Bool("p"), SMEM, 0))
    ({'a': 8, 'smem_base': 32}, None)
    """
    out: dict[str, int] = {}
    for ctx, a in _leaves(e):
        if not _uninterpreted(ctx, a):
            continue
        sort, sym = z3.Z3_get_sort(ctx, a), z3.Z3_get_decl_name(ctx, z3.Z3_get_app_decl(ctx, a))
        if z3.Z3_get_sort_kind(ctx, sort) != z3.Z3_BV_SORT or z3.Z3_get_symbol_kind(ctx, sym) != z3.Z3_STRING_SYMBOL:
            return None
        out[z3.Z3_get_symbol_string(ctx, sym)] = z3.Z3_get_bv_sort_size(ctx, sort)
    return dict(sorted(out.items()))


def _consts_of(*exprs) -> list:
    """The uninterpreted constants (as terms) of ``exprs``, one per name."""
    out = {}
    ctx_of = {x.ctx_ref().value: x.ctx for x in exprs if x is not None}
    for ctx, a in _leaves(*exprs):
        if _uninterpreted(ctx, a):
            kind = z3.Z3_get_sort_kind(ctx, z3.Z3_get_sort(ctx, a))
            cls = z3.BitVecRef if kind == z3.Z3_BV_SORT else z3.BoolRef if kind == z3.Z3_BOOL_SORT else z3.ExprRef
            out[_symbol_name(ctx, a, exprs)] = cls(a, ctx_of[ctx.value])
    return list(out.values())
