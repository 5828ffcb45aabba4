"""Shared-memory addresses as a term plus a constant: the affine part the checks share.

A PTX address register is, in the kernels Triton and CuTe emit, one address function of the
thread (``%tid.x`` bits, swizzle XORs, the shared-memory base, stage offsets) plus an immediate:
unrolled copies, pipeline stages and the fields of one vector differ only by that constant
(``add.s32 %r9, %r8, 1024``). :func:`split_constant` reads the constant off the term the PTX
evaluator (:class:`verilayout.prove.ptx_values.PtxValues`) built, so that what depends on the
thread is decided once per address function (its *core*), not once per register:

* the offsets of the threads relative to thread 0 (``addr(t) - addr(0)``) are the core's: a
  constant moves every thread alike (:func:`same_offsets`);
* thread 0's address is the core's at thread 0 plus the constant (:func:`at_thread_zero`): the
  core is simplified once, each constant then costs a simplification of a small term.

* the thread-dependent part of a core: ``core = S + T`` with ``S`` free of ``%tid.x`` and ``T`` a
  function of ``%tid.x`` alone (:func:`thread_part`): the offsets are ``T(t) - T(0)``, evaluated
  over every thread at once, with no simplification of the difference (the base ``S``, the
  shared-memory base and stage offsets, cancels).

Law: ``core + c == e`` for every value of the symbols, with ``c`` reduced modulo ``2**width``;
``c == 0`` and ``core is e`` when ``e`` adds no constant at its top. Only the top-level additions
of a numeral are read (z3's ``bvadd`` of two arguments, either of them a numeral, nested): any
other term is its own core.
"""
from __future__ import annotations

import z3

from verilayout.prove import z3_api as api
from verilayout.prove.ptx_values import TID
from verilayout.prove.term_memo import TermMemo

__all__ = ["split_constant", "at_thread_zero", "address_parts", "core_at_zero", "free_symbols", "thread_part",
           "remembered"]

#: Answers that are functions of one z3 term alone (its value at thread 0, its threads' offsets, a
#: guard's values), shared by every file this process audits: z3 hash-conses the terms of its (one,
#: default) context, so a term alive in this table and a term built later are equal exactly when
#: their ids are; each entry keeps its term alive. Kernels repeat address functions (unrolled
#: copies, the same few thread maps in many kernels of a package): each is simplified once.
TERM_ANSWERS_MAX = 200_000
_TERM_ANSWERS = TermMemo(TERM_ANSWERS_MAX)


def remembered(key: tuple, term: z3.ExprRef, compute):
    """``compute()``, remembered for the process under ``key`` (which holds ``term``'s id and the
    other arguments the answer depends on), ``term`` kept alive beside it (:class:`TermMemo`, at
    most :data:`TERM_ANSWERS_MAX` answers).

    >>> x = z3.BitVec("x", 32)
    >>> remembered(("doc", (x + 1).get_id()), x + 1, lambda: 7), remembered(("doc", (x + 1).get_id()), x + 1, lambda: 8)
    (7, 7)
    """
    return _TERM_ANSWERS.answer(key, (term,), compute)


def _numeral_arg(ctx, a) -> tuple[int, int] | None:
    """``(index of the numeral argument, its value)`` of a two-argument ``bvadd`` app ``a``, else None."""
    if z3.Z3_get_ast_kind(ctx, a) != z3.Z3_APP_AST or z3.Z3_get_app_num_args(ctx, a) != 2:
        return None
    if z3.Z3_get_decl_kind(ctx, z3.Z3_get_app_decl(ctx, a)) != z3.Z3_OP_BADD:
        return None
    for i in (1, 0):
        arg = z3.Z3_get_app_arg(ctx, a, i)
        if z3.Z3_is_numeral_ast(ctx, arg):
            return i, int(z3.Z3_get_numeral_string(ctx, arg))
    return None


def split_constant(e: z3.BitVecRef) -> tuple[z3.BitVecRef, int]:
    """``(core, c)`` with ``e == core + c`` (modulo ``2**e.size()``): the numerals ``e`` adds at its
    top, summed, and the term they are added to.

    >>> x = z3.BitVec("x", 32)
    >>> core, c = split_constant((x * 4 + 16) + 1024)
    >>> core.sexpr(), c
    ('(bvmul x #x00000004)', 1040)
    """
    ctx, a = e.ctx_ref(), e.as_ast()
    c = 0
    while True:
        got = _numeral_arg(ctx, a)
        if got is None:
            break
        i, v = got
        c += v
        a = z3.Z3_get_app_arg(ctx, a, 1 - i)
    if not c and a == e.as_ast():
        return e, 0
    return z3.BitVecRef(a, e.ctx), c % (1 << e.size())


def at_thread_zero(core_at_zero: z3.BitVecRef, c: int, memo: dict | None = None) -> z3.BitVecRef:
    """``simplify(core_at_zero + c)``: thread 0's address from its core's (already simplified) and
    the constant; the core itself when ``c`` is 0. ``memo``: answers by (core's id, ``c``), the
    core kept alive with them (registers and immediates that sum to one constant share one).

    >>> at_thread_zero(z3.BitVecVal(64, 32), 16)
    80
    """
    if not c:
        return core_at_zero
    if memo is None:
        return z3.simplify(core_at_zero + c)
    key = ("zero+c", core_at_zero.get_id(), c)
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = (core_at_zero, remembered(key, core_at_zero, lambda: z3.simplify(core_at_zero + c)))
    return hit[1]


def address_parts(e: z3.BitVecRef, memo: dict) -> tuple[z3.BitVecRef, int]:
    """:func:`split_constant` of ``e``, remembered in ``memo`` by ``e``'s id (``e`` kept alive with
    the answer, so z3's id stays unique).

    >>> x = z3.BitVec("x", 32)
    >>> address_parts(x + 8, {})[1]
    8
    """
    key = ("parts", e.get_id())
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = (e, *remembered(key, e, lambda: split_constant(e)))
    return hit[1], hit[2]


def core_at_zero(core: z3.BitVecRef, memo: dict) -> z3.BitVecRef:
    """``simplify(core[%tid.x := 0])``, once per core in ``memo`` (the core kept alive with it).

    >>> from verilayout.prove.ptx_values import TID
    >>> core_at_zero(TID * 4 + 16, {})
    16
    """
    key = ("core0", core.get_id())
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = (core, remembered(key, core, lambda: api.at_zero_simplified(core, TID)))
    return hit[1]


#: the name of ``%tid.x``'s symbol
_TID_NAME = TID.decl().name()
#: what :func:`free_symbols` gives a term it does not read (a bound variable, a quantifier)
_UNREAD = frozenset(("?",))


def free_symbols(e: z3.ExprRef, memo: dict) -> frozenset:
    """The names of the uninterpreted constants of ``e`` (``{"?"}`` when it holds a term of
    another kind), by one walk of its DAG through z3's C API (:mod:`verilayout.prove.z3_api`);
    every subterm's answer is kept in ``memo`` by its id (the caller keeps ``e`` alive while
    ``memo`` is used).

    >>> sorted(free_symbols(TID * 4 + z3.BitVec("smem_base", 32), {}))
    ['smem_base', 'tid_x']
    """
    ctx = api.ctx_of(e)
    root = api.addr_of(e)
    got = memo.get(("syms", api.ast_id(ctx, root)))
    if got is not None:
        return got
    stack: list[list] = [[root, api.ast_id(ctx, root), None]]   # [ast, its id, its arguments' ids]
    while stack:
        top = stack[-1]
        a, key = top[0], ("syms", top[1])
        if key in memo:
            stack.pop()
            continue
        if top[2] is None:                          # first visit: a leaf's answer, or its arguments
            kind = api.ast_kind(ctx, a)
            if kind != z3.Z3_APP_AST:
                memo[key] = frozenset() if kind == z3.Z3_NUMERAL_AST else _UNREAD
                stack.pop()
                continue
            args = [api.app_arg(ctx, a, i) for i in range(api.app_num_args(ctx, a))]
            top[2] = [api.ast_id(ctx, b) for b in args]
            todo = [[b, i, None] for b, i in zip(args, top[2]) if ("syms", i) not in memo]
            if todo:
                stack.extend(todo)
                continue
        memo[key] = _app_symbols(ctx, a, top[2], memo)   # every argument's answer is in memo
        stack.pop()
    return memo[("syms", api.ast_id(ctx, root))]


def _app_symbols(ctx: int, a: int, arg_ids: list, memo: dict) -> frozenset:
    """The symbols of the application ``a`` whose arguments' (ids ``arg_ids``) symbols are in ``memo``."""
    if not arg_ids:
        d = api.app_decl(ctx, a)
        if api.decl_kind(ctx, d) == z3.Z3_OP_UNINTERPRETED:
            return frozenset((api.symbol_string(ctx, api.decl_name(ctx, d)),))
        return frozenset()
    if len(arg_ids) == 1:
        return memo[("syms", arg_ids[0])]
    out: frozenset = frozenset()
    for i in arg_ids:
        out = out | memo[("syms", i)]
    return out


def thread_part(core: z3.BitVecRef, memo: dict) -> tuple[z3.BitVecRef, ...] | None:
    """The terms ``T_1 .. T_k`` of ``core = S_1 + .. + T_1 + .. + T_k`` (nested additions each of
    whose summands is free of ``%tid.x`` or a function of ``%tid.x`` alone; ``(core,)`` when ``core``
    depends on ``%tid.x`` alone, ``()`` when not at all), else None.

    Law: ``core(t) - core(0) == sum(T_i(t) - T_i(0))`` (modulo ``2**32``) for every thread ``t``
    and every value of the other symbols.

    >>> smem = z3.BitVec("smem_base", 32)
    >>> [t.sexpr() for t in thread_part(smem + (TID << 4), {})], thread_part(smem * TID, {})
    (['(bvshl tid_x #x00000004)'], None)
    """
    only = frozenset((_TID_NAME,))
    syms = free_symbols(core, memo)
    if "?" in syms:
        return None
    if _TID_NAME not in syms:
        return ()
    if syms == only:
        return (core,)
    ctx = api.ctx_of(core)
    root = api.addr_of(core)
    if not _is_add(ctx, root):
        return None
    moving = []
    for b in _summands(ctx, root):
        got = memo[("syms", api.ast_id(ctx, b))]        # the walk above answered every subterm
        if _TID_NAME in got:
            if got != only:
                return None
            moving.append(api.bv_term(b, core))
        elif "?" in got:
            return None
    return tuple(moving)


def _is_add(ctx: int, a: int) -> bool:
    """``a`` is an application of ``bvadd`` (``z3.is_app_of(a, Z3_OP_BADD)``)."""
    return api.ast_kind(ctx, a) == z3.Z3_APP_AST and api.decl_kind(ctx, api.app_decl(ctx, a)) == z3.Z3_OP_BADD


def _summands(ctx: int, a: int) -> list[int]:
    """The arguments of the nested additions at the top of the term ``a`` (``a`` itself when it is
    no addition), left to right, as addresses (:mod:`verilayout.prove.z3_api`).

    >>> x, y = z3.BitVecs("x y", 32)
    >>> e = (x + 1) + (y * 2)
    >>> [api.bv_term(t, e).sexpr() for t in _summands(api.ctx_of(e), api.addr_of(e))]
    ['x', '#x00000001', '(bvmul y #x00000002)']
    """
    out, stack = [], [a]
    while stack:                                 # no recursion: a long chain of additions is fine
        t = stack.pop()
        if _is_add(ctx, t):
            stack.extend(api.app_arg(ctx, t, i) for i in reversed(range(api.app_num_args(ctx, t))))
        else:
            out.append(t)
    return out
