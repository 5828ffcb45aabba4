"""A round trip's verdict computed once per content and relabelled (audit/ptx_relabel) equals the
verdict computed directly on the relabelled accesses: the oracle is the uncached computation."""
import z3

from verilayout.audit import ptx_elements as pe
from verilayout.audit.ptx_relabel import OpLine, instantiate, template
from verilayout.audit.ptx_scratch import ThreadBytes
from verilayout.audit.model import Check
from verilayout.frontends.ptx import make_instr


#: each thread's bytes, one object per content (as the audit shares them between accesses)
_WROTE = ThreadBytes(set(range(4 * t, 4 * t + 4)) for t in range(32))
_READ = {s: ThreadBytes(set(range(4 * ((t + s) % 32), 4 * ((t + s) % 32) + 4)) for t in range(32)) for s in (0, 1)}


def _pieces(st_line: int, ld_line: int, shift: int) -> list:
    """32 threads store their 4-byte element at 4 t and load 4 (t + shift) mod 128 (wrong for shift != 0)."""
    st = make_instr("st.shared.b32", ("[%r2]", "%r1"), st_line)
    ld = make_instr("ld.shared.b32", ("%r3", "[%r2]"), ld_line)
    base = z3.BitVec("smem", 32)
    return [(st, base, _WROTE), (ld, base, _READ[shift])]


def _holders() -> tuple:
    one = ThreadBytes({t} for t in range(32))
    return one, one, 32


def test_a_repeated_round_trip_gives_the_direct_verdict_at_its_own_lines():
    got = _holders()
    memo: dict = {}
    first = pe._round_trip_of(OpLine(5, "ttg.convert_layout"), _pieces(10, 12, 1), got, 32,
                              {"source": "ptx", "ttgir_line": 5}, memo)
    again = pe._round_trip_of(OpLine(9, "ttg.convert_layout"), _pieces(30, 34, 1), got, 32,
                              {"source": "ptx", "ttgir_line": 9}, memo)
    direct = pe._round_trip(OpLine(9, "ttg.convert_layout"), _pieces(30, 34, 1), got[0], got[1], 4, 32,
                            {"source": "ptx", "ttgir_line": 9})
    assert first.status == "counterexample" and "TTGIR line 5" in first.message
    assert (again.line, again.loc, again.message, dict(again.data)) == \
        (direct.line, direct.loc, direct.message, dict(direct.data))
    assert sum(1 for k in memo if k[0] == "trip") == 1                     # the repeat was relabelled
    assert again.line == 30 and "line 30;" in again.message and "TTGIR line 9" in again.message
    assert again.data["tied"] == {34: _pieces(30, 34, 1)[1][0]}         # thread 0 reads thread 1's element
    assert (again.data["thread"], again.data["writer"], again.data["byte"]) == (0, 1, 4)


def test_a_proved_round_trip_is_not_templated():
    got = _holders()
    c = pe._round_trip_of(OpLine(5, "ttg.convert_layout"), _pieces(10, 12, 0), got, 32,
                          {"source": "ptx", "ttgir_line": 5}, {})
    assert c.status == "proved" and c.line == 10


def test_relabel_puts_back_lines_locations_and_instructions():
    st = make_instr("st.shared.b32", ("[%r2]", "%r1"), 77)
    st = type(st)(**{**st.__dict__, "loc": "k.py:3"})
    t_op, t_p = template(OpLine(4, "op"), [(st, None, None)])
    c = Check("st.shared", t_p[0][0].line, t_p[0][0].loc, "smem-address", "counterexample", "error",
              f"op (TTGIR line {t_op.line}): line {t_p[0][0].line}", {"tied": {t_p[0][0].line: t_p[0][0]}})
    back = instantiate([c], OpLine(4, "op"), [(st, None, None)])[0]
    assert (back.line, back.loc, back.message) == (77, "k.py:3", "op (TTGIR line 4): line 77")
    assert back.data["tied"] == {77: st}
