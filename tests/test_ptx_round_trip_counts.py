"""The byte counts of a failed conversion round trip (``ptx_elements._byte_counts``) on its bytes
as arrays: a reader that loads from one writer other than the bytes of the elements they share,
or fewer bytes than its own elements, is named, with the counts derived here by hand."""
from __future__ import annotations

from types import SimpleNamespace

from verilayout.audit.ptx_elements import _byte_counts
from verilayout.audit.ptx_tally import from_dicts
from verilayout.frontends.ptx import make_instr


def _load():
    return make_instr("ld.shared.b16", ("%rs1", "[%r1]"), 20)


def test_a_reader_short_of_a_shared_element_is_named():
    # two threads, 2-byte elements; thread t holds element t in both layouts; element t sits at
    # bytes 2t, 2t+1, written by thread t. Thread 0 loads byte 0 only: 1 byte of the 2 they share.
    st = SimpleNamespace(line=10)
    ld = _load()
    m = from_dicts({0: (0, st), 1: (0, st), 2: (1, st), 3: (1, st)}, [{0: ld}, {2: ld, 3: ld}], 2)
    c = _byte_counts(SimpleNamespace(line=5), [(ld, None, None)], m, [{0}, {1}], [{0}, {1}], 2, 2, {})
    assert c.status == "counterexample" and c.line == 20
    assert c.message == ("ttg.convert_layout (TTGIR line 5): thread 0 loads 1 bytes written by thread 0, "
                         "but they share 1 element(s) (2 bytes)")
    assert (c.data["thread"], c.data["writer"], c.data["bytes"], c.data["shared_bytes"]) == (0, 0, 1, 2)


def test_a_reader_missing_an_element_no_writer_holds_is_named():
    # thread 0 holds elements 0 and 2 in the destination; no thread holds 2 in the source: its 2
    # bytes from thread 0 are right, but its two elements are 4 bytes.
    st = SimpleNamespace(line=10)
    ld = _load()
    m = from_dicts({0: (0, st), 1: (0, st), 2: (1, st), 3: (1, st)}, [{0: ld, 1: ld}, {2: ld, 3: ld}], 2)
    c = _byte_counts(SimpleNamespace(line=5), [(ld, None, None)], m, [{0}, {1}], [{0, 2}, {1}], 2, 2, {})
    assert c.message == "ttg.convert_layout (TTGIR line 5): thread 0 loads 2 bytes, its 2 elements are 4"


def test_whole_counts_give_no_finding():
    st = SimpleNamespace(line=10)
    ld = _load()
    m = from_dicts({0: (0, st), 1: (0, st), 2: (1, st), 3: (1, st)}, [{0: ld, 1: ld}, {2: ld, 3: ld}], 2)
    assert _byte_counts(SimpleNamespace(line=5), [(ld, None, None)], m, [{0}, {1}], [{0}, {1}], 2, 2, {}) is None
