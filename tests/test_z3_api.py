"""`prove/z3_api` against the z3 binding itself (the oracle): every unchecked C query answers what
the binding's function of the same name answers, and the fallback used where a binding is built
without the wrapper defaults the module reads (``_checked``) answers the same."""
from __future__ import annotations

import ctypes

import z3

import verilayout.prove.z3_api as api

_P = ctypes.c_void_p


def _walk(e: z3.ExprRef):
    """Every subterm of ``e`` with the binding's own answers."""
    yield e
    for k in e.children():
        yield from _walk(k)


def _terms():
    x, y = z3.BitVecs("x y", 32)
    return [(x + 4) * y, z3.Extract(7, 0, x) ^ 3, z3.If(x > 2, x << 1, y & 0xF0), z3.Concat(x, y)]


def test_unchecked_queries_answer_what_the_binding_answers():
    for root in _terms():
        c = api.ctx_of(root)
        for t in _walk(root):
            a = api.addr_of(t)
            assert api.ast_id(c, a) == t.get_id()
            assert api.is_numeral_ast(c, a) == z3.is_bv_value(t)
            assert api.sort_kind(c, api.sort_of(c, a)) == t.sort().kind()
            if z3.is_bv(t):
                assert api.bv_sort_size(c, api.sort_of(c, a)) == t.size()
            if z3.is_bv_value(t):
                assert api.numeral_string(c, a) == str(t.as_long())
                continue
            assert api.app_num_args(c, a) == t.num_args()
            d = api.app_decl(c, a)
            assert api.decl_kind(c, d) == t.decl().kind()
            assert api.symbol_string(c, api.decl_name(c, d)) == t.decl().name()
            for i in range(t.num_args()):
                assert api.ast_id(c, api.app_arg(c, a, i)) == t.arg(i).get_id()
                if z3.is_bv(t.arg(i)):
                    assert api.bv_term(api.app_arg(c, a, i), root).eq(t.arg(i))


def test_the_checked_fallback_answers_what_the_unchecked_queries_answer():
    root = _terms()[0]
    c, a = api.ctx_of(root), api.addr_of(root)
    d = api.app_decl(c, a)
    assert api._checked(z3.Z3_get_ast_id, ctypes.c_uint)(c, a) == api.ast_id(c, a)
    assert api._checked(z3.Z3_get_app_decl, _P)(c, a) == d
    assert api._checked(z3.Z3_get_app_arg, _P)(c, a, 1) == api.app_arg(c, a, 1)
    assert api._checked(z3.Z3_get_decl_kind, ctypes.c_uint)(c, d) == api.decl_kind(c, d)
    name = api._checked(z3.Z3_get_symbol_string, ctypes.c_char_p)(c, api.decl_name(c, d))
    assert api._text(name) == root.decl().name()


def test_a_binding_without_the_wrapper_default_gets_the_checked_function():
    def plain(ctx, a):                       # a binding function with no library default argument
        return z3.Z3_get_ast_id(ctx, a)
    root = _terms()[1]
    f = api._unchecked(plain, ctypes.c_uint, _P, _P)
    assert f(api.ctx_of(root), api.addr_of(root)) == root.get_id()
