"""Every distinct (layout, shape, element) type in the corpus of real Triton output is read by
``verilayout.parse`` (issue 12's acceptance: 100% of the corpus parsed). Agreement with Triton's own
conversion is checked in tests/oracles (TMEM: test_tmem_layout_oracle.py; the others through
test_audit_oracle.py's bank figures and the conversion oracle tests)."""
from __future__ import annotations

import collections

import verilayout
from verilayout.errors import LayoutError

from tests.reference.corpus_types import distinct_types


def _type_text(ct) -> str:
    dims = "x".join(map(str, ct.shape))
    if ct.text.startswith("!tt.tensordesc"):
        return f"!tt.tensordesc<{dims}x{ct.elem}, {ct.attr}>"
    if ct.memdesc:
        space = "#ttng.tensor_memory" if ct.attr.startswith("#ttng.tensor_memory") else "#ttg.shared_memory"
        return f"!ttg.memdesc<{dims}x{ct.elem}, {ct.attr}, {space}, mutable>"
    return f"tensor<{dims}x{ct.elem}, {ct.attr}>"


def test_every_corpus_type_parses():
    types, unreadable = distinct_types()
    assert len(types) > 1000 and not unreadable, unreadable[:3]
    failed = collections.Counter()
    first = {}
    for ct in types:
        try:
            verilayout.parse(_type_text(ct))
        except LayoutError as e:
            kind = ct.attr.split("<")[0]
            failed[kind] += 1
            first.setdefault(kind, f"{ct.file}: {ct.text[:100]}: {e}")
    assert not failed, (dict(failed), first)
