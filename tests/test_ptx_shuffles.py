"""The ``register-permute`` check (``verilayout/audit/ptx_shuffles.py``): a dot's register operand that
is another dot's result, converted inside the warp (``shfl.sync.idx``, ``selp``, ``prmt``, packing),
run per thread and compared with the PTX ISA fragments.

Oracles from outside the code under test: kernels Triton 3.9 compiles here (a correct compiler's
conversions must prove), a harvested kernel (lightning-attn, ``tests/harvest``), mutants of those PTX
texts with a real routing bug planted (each must be an error at the planted line), the PTX ISA fragment
tables written out below from the ISA's own wording, the PTX semantics table's ``prmt`` (itself
tested against the ISA in ``tests/test_ptx_semantics.py``), and a kernel's causal mask read off its
Python source (``row - col >= 0``, lightning-attn's ``_fwd_kernel``).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path

import numpy as np
import pytest

from verilayout.audit.ptx import audit_ptx_text, ptx_context
from verilayout.audit.ptx_shuffles import (CHECK, Frag, Val, _prmt, _Run, constant_bytes, element_values, frag_a,
                                           frag_b, frag_d, register_permute_checks)
from verilayout.frontends.ptx import parse_ptx
from verilayout.frontends.ttgir import parse_module
from verilayout.prove.ptx_semantics import NUMPY
from verilayout.prove.ptx_values import PtxValues

HARVEST = Path(__file__).resolve().parent / "harvest" / "corpus.tar.xz"
LIGHTNING = "cuda90/lightning-attn__lightning_attn2.bwd_intra_kernel_d1_w8_s2"
#: tf32 with kWidth = 2 on sm_80: a thread's two K elements go to two mma.sync instructions
MLSTM = "cuda80/mlstm-kernels__lightning_attention.lightning_attn2.fwd_kernel_ls0_w4_s1"
#: the converted tensor is a loop-carried value (an scf.for iter_arg)
CARRIED = "cuda80/lightning-attn__lightning_attn2.bwd_inter_kernel_d0_w4_s3"
#: async wgmma dots: the converted value passes through ttng.warp_group_dot_wait
ASYNC = "cuda90/lightning-attn__lightning_attn2.fwd_kernel_d1_w8_s2"
#: a causal mask ``where(row - col >= 0, qk, 0)``: the compiler folds the operand registers whose elements
#: are all above the diagonal into the constant 0
MASKED = "cuda90/lightning-attn__lightning_attn2_no_decay.fwd_kernel_d1_w8_s2"

# ----- the PTX ISA fragment tables, in the ISA's words --------------------------------------------
# groupID = laneid >> 2, threadID_in_group = laneid % 4 (PTX ISA 9.7.14.5.x, "Matrix fragments for mma.m16n8kK")


def test_fragments_follow_the_isa_tables():
    lane = np.arange(32)
    g, t = lane >> 2, lane % 4
    # m16n8k8 .tf32 A: a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4)
    tf32 = Frag("mma", 16, 8, 8, 32, 32)
    want = {0: (g, t), 1: (g + 8, t), 2: (g, t + 4), 3: (g + 8, t + 4)}
    for i, (r, c) in want.items():
        got = frag_a(tf32, lane, 0 * lane, i)
        assert (got[0] == r).all() and (got[1] == c).all(), i
    # m16n8k8 .tf32 B: b0 (row t, col g), b1 (row t + 4, col g)
    for i, (r, c) in {0: (t, g), 1: (t + 4, g)}.items():
        got = frag_b(tf32, lane, i)
        assert (got[0] == r).all() and (got[1] == c).all(), i
    # m16n8k16 .f16 A: a0,a1 (g, 2t + i); a2,a3 (g + 8, 2t + i - 2); a4,a5 (g, 2t + i + 4); a6,a7 (g + 8, 2t + i + 2)
    f16 = Frag("mma", 16, 8, 16, 16, 16)
    for i in range(8):
        row = g + 8 if i in (2, 3, 6, 7) else g
        col = t * 2 + (i & 1) + (8 if i >= 4 else 0)
        got = frag_a(f16, lane, 0 * lane, i)
        assert (got[0] == row).all() and (got[1] == col).all(), i
    # m16n8k16 .f16 B: b0,b1 (row 2t + i, col g); b2,b3 (row 2t + i - 2 + 8, col g)
    for i in range(4):
        got = frag_b(f16, lane, i)
        assert (got[0] == t * 2 + (i & 1) + (8 if i >= 2 else 0)).all() and (got[1] == g).all(), i
    # C/D f32: c0,c1 (g, 2t + i); c2,c3 (g + 8, 2t + i - 2); wgmma D: rows + 16 * (warp % 4), columns + 8 per 4
    for i in range(4):
        got = frag_d(f16, lane, 0 * lane, i)
        assert (got[0] == g + (8 if i >= 2 else 0)).all() and (got[1] == 2 * t + (i & 1)).all(), i
    wg = Frag("wgmma", 64, 32, 16, 16, 16)
    # d(4j + 0/1) at row g, d(4j + 2/3) at row g + 8, columns 8j + 2t + 0/1; warp 6 is warp 2 of its warpgroup
    got = frag_d(wg, lane, 0 * lane + 6, 14)
    assert (got[0] == 32 + g + 8).all() and (got[1] == 24 + 2 * t).all()
    got = frag_d(wg, lane, 0 * lane + 6, 13)
    assert (got[0] == 32 + g).all() and (got[1] == 24 + 2 * t + 1).all()


def test_prmt_moves_tags_as_the_semantics_table_moves_bytes():
    """Each byte tag goes where ``prmt`` (default mode) puts the byte it stands for."""
    rng = np.random.default_rng(7)
    mod = parse_ptx(".version 8.7\n.visible .entry f()\n{\nprmt.b32 %r3, %r1, %r2, %r4;\n}")
    ins = mod.instrs[0]
    run = _Run(PtxValues(mod, "f"), 32)
    tags = (np.arange(8)[None, :] + 8 * (np.arange(32)[:, None] % 30) + 9).astype(np.int64)
    run.regs["%r1"] = Val(tags[:, :4], None, ())
    run.regs["%r2"] = Val(tags[:, 4:], None, ())
    sel = rng.integers(0, 1 << 16, 32, dtype=np.int64) & 0x7777            # no sign replication
    run.per_thread = lambda op, at, pred=False: sel                        # the selector per thread
    got = _prmt(run, ins)["%r3"].tags
    for t in range(32):                     # the tags' low bytes are distinct: the words prmt permutes
        a, b = (sum(int(x % 256) << (8 * k) for k, x in enumerate(tags[t, h:h + 4])) for h in (0, 4))
        out = int(NUMPY.prmt(np.uint64(a), np.uint64(b), np.uint64(sel[t])))
        assert [int(x) % 256 for x in got[t]] == [(out >> (8 * k)) & 0xFF for k in range(4)], t


# ----- kernels compiled here ------------------------------------------------------------------------

COMPILE = textwrap.dedent('''
    import sys
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget

    @triton.jit
    def chain(a_ptr, b_ptr, c_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
              P: tl.constexpr, CAST: tl.constexpr):
        rm = tl.arange(0, M); rn = tl.arange(0, N); rk = tl.arange(0, K); rp = tl.arange(0, P)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
        c = tl.load(c_ptr + rn[:, None] * P + rp[None, :])
        s = tl.dot(a, b)
        if CAST:
            s = s.to(c.dtype)
        o = tl.dot(s, c)
        tl.store(o_ptr + rm[:, None] * P + rp[None, :], o)

    out = sys.argv[1]
    for arch, dt, shape, warps in ((80, "fp32", (64, 64, 32, 64), 4), (90, "fp32", (64, 64, 32, 64), 4),
                                   (80, "fp16", (64, 64, 32, 64), 4), (90, "fp16", (64, 64, 32, 64), 4),
                                   (90, "fp32", (128, 64, 32, 128), 8), (90, "fp8e4nv", (64, 64, 64, 64), 4),
                                   (89, "fp8e4nv", (64, 64, 64, 64), 4)):
        sig = {"a_ptr": "*" + dt, "b_ptr": "*" + dt, "c_ptr": "*" + dt, "o_ptr": "*fp32"}
        m, n, k, p = shape
        cst = {"M": m, "N": n, "K": k, "P": p, "CAST": dt != "fp32"}
        kern = triton.compile(triton.compiler.ASTSource(chain, sig, cst), target=GPUTarget("cuda", arch, 32),
                              options={"num_warps": warps})
        name = f"{out}/chain_{dt}_sm{arch}_w{warps}"
        open(name + ".ttgir", "w").write(kern.asm["ttgir"])
        open(name + ".ptx", "w").write(kern.asm["ptx"])
''')

KERNELS = ("chain_fp32_sm80_w4", "chain_fp32_sm90_w4", "chain_fp16_sm80_w4", "chain_fp16_sm90_w4",
           "chain_fp32_sm90_w8", "chain_fp8e4nv_sm90_w4", "chain_fp8e4nv_sm89_w4")


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> Path:  # the tests using it are slow: Triton compiles 7 kernels
    """Two chained ``tl.dot`` (the first result converted to the second's A operand), compiled by
    Triton 3.9 for sm_80/89/90 (no GPU) in tf32, fp16 and fp8."""
    pytest.importorskip("triton")
    d = tmp_path_factory.mktemp("chains")
    (d / "compile.py").write_text(COMPILE)
    env = dict(os.environ, TRITON_CACHE_DIR=str(d / "cache"), TRITON_DEFAULT_FP_FUSION="1")
    subprocess.run([sys.executable, str(d / "compile.py"), str(d)], env=env, check=True, timeout=300,
                   capture_output=True)
    return d


@pytest.fixture(scope="module")
def harvest(tmp_path_factory) -> Path:
    """The harvested pairs these tests read (``tests/harvest``), unpacked."""
    d = tmp_path_factory.mktemp("harvest")
    want = {stem + ext for stem in (LIGHTNING, MLSTM, CARRIED, ASYNC, MASKED) for ext in (".ttgir", ".ptx")}
    texts = _harvest_texts(want.__contains__)
    assert set(texts) == want, want - set(texts)
    _write(d, texts)
    return d


def _harvest_texts(keep) -> dict[str, bytes]:
    """The harvest's files whose name ``keep`` accepts, read in one forward pass over the tarball
    (extracting by name seeks back, and an xz stream seeks back by decompressing from its start)."""
    with tarfile.open(HARVEST, "r:xz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar if m.isfile() and keep(m.name)}


def _write(dest: Path, texts: dict[str, bytes]) -> None:
    for name, data in texts.items():
        assert not name.startswith("/") and ".." not in Path(name).parts, name
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        (dest / name).write_bytes(data)


@pytest.fixture(scope="module")
def lightning(harvest) -> Path:
    """The harvested lightning-attn backward kernel (sm_90, 8 warps, tf32 wgmma chains)."""
    return harvest / LIGHTNING


def _at(stem: Path, ext: str) -> Path:
    return Path(str(stem) + ext)          # the stems hold dots (``..._attn2.bwd_intra_...``): no with_suffix


def _checks(stem: Path, ptx: str | None = None) -> list:
    text = ptx if ptx is not None else _at(stem, ".ptx").read_text()
    return register_permute_checks(ptx_context(parse_ptx(text), parse_module(_at(stem, ".ttgir").read_text()),
                                               path=str(stem)))


@pytest.mark.parametrize("name", KERNELS)
def test_compiled_chains_prove(compiled, name):
    """The conversion of the first dot's result into the second's operand proves, through the whole
    PTX audit (the hook) as well."""
    stem = compiled / name
    rep = audit_ptx_text(_at(stem, ".ptx").read_text(), str(_at(stem, ".ptx")),
                         _at(stem, ".ttgir").read_text())
    got = [c for c in rep.checks if c.check == CHECK]
    assert len(got) == 1 and got[0].status == "proved", [(c.status, c.message) for c in got]
    assert got[0].data["operand"] == "A" and got[0].data["registers"] > 0


def test_the_harvested_conversions_prove(lightning):
    got = _checks(lightning)
    assert [c.status for c in got] == ["proved", "proved"], [c.message for c in got]
    assert sorted(c.data["convert_line"] for c in got) == [185, 193]     # the TTGIR's two convert_layout ops


# ----- mutants: a routing bug really there is an error at its line -----------------------------------

def _lines(text: str) -> list[str]:
    return text.split("\n")


def _first(lines: list[str], pattern: str, after: int = 0) -> int:
    """0-based index of the first line matching ``pattern`` at or after ``after``."""
    return next(k for k in range(after, len(lines)) if re.search(pattern, lines[k]))


def _mutant_errors(stem: Path, lines: list[str]) -> list:
    got = _checks(stem, "\n".join(lines))
    assert all(c.status in ("counterexample", "proved") for c in got), [c.message for c in got]
    return [c for c in got if c.status == "counterexample"]


def _selp_swapped(lines: list[str]) -> int:
    k = _first(lines, r"^\s*selp\.(f32|b32)\s+%r\d+, %r\d+, %r\d+, %p\d+;")
    m = re.match(r"^(\s*selp\.\w+\s+%r\d+, )(%r\d+), (%r\d+)(, %p\d+;.*)$", lines[k])
    lines[k] = f"{m.group(1)}{m.group(3)}, {m.group(2)}{m.group(4)}"
    return k


def _xor_changed(lines: list[str]) -> int:
    index = {m.group(1) for x in lines for m in [re.search(r"shfl\.sync\.idx\.b32\s+%r\d+, %r\d+, (%r\d+),", x)] if m}
    k = next(k for k, x in enumerate(lines)
             if (m := re.match(r"^\s*xor\.b32\s+(%r\d+), %r\d+, \d+;", x)) and m.group(1) in index)
    m = re.match(r"^(.*, )(\d+);(.*)$", lines[k])
    lines[k] = f"{m.group(1)}{int(m.group(2)) ^ 1};{m.group(3)}"
    return k


def _shfl_source_swapped(lines: list[str]) -> int:
    k = _first(lines, r"shfl\.sync\.idx\.b32\s+%r\d+, %r\d+, %r\d+, 31, -1")
    j = _first(lines, r"shfl\.sync\.idx\.b32\s+%r\d+, %r\d+, %r\d+, 31, -1", k + 1)
    other = re.search(r"shfl\.sync\.idx\.b32\s+%r\d+, (%r\d+),", lines[j]).group(1)
    lines[k] = re.sub(r"(shfl\.sync\.idx\.b32\s+%r\d+, )(%r\d+)", lambda m: m.group(1) + other, lines[k])
    return k


def _prmt_selector_changed(lines: list[str]) -> int:
    k = _first(lines, r"^\s*prmt\.b32\s+%r\d+, %r\d+, %r\d+, %r\d+;")
    j = _first(lines, r"^\s*prmt\.b32\s+%r\d+, %r\d+, %r\d+, %r\d+;", k + 1)
    mine = re.search(r"(%r\d+);", lines[k]).group(1)
    other = re.search(r"(%r\d+);", lines[j]).group(1)
    assert mine != other
    lines[k] = lines[k].replace(mine + ";", other + ";")
    return k


MUTANTS = {"selp inputs swapped": _selp_swapped, "xor lane constant changed": _xor_changed,
           "shuffle source register swapped": _shfl_source_swapped}


@pytest.mark.parametrize("mutate", sorted(MUTANTS))
@pytest.mark.parametrize("name", ("chain_fp32_sm80_w4", "chain_fp32_sm90_w4", "harvest"))
def test_shuffle_mutants_are_errors_at_their_line(compiled, lightning, name, mutate):
    stem = lightning if name == "harvest" else compiled / name
    lines = _lines(_at(stem, ".ptx").read_text())
    k = MUTANTS[mutate](lines)
    errors = _mutant_errors(stem, lines)
    assert errors and {c.line for c in errors} == {k + 1}, [(c.line, c.message) for c in errors]
    assert all(c.severity == "error" and c.check == CHECK for c in errors)
    assert re.search(r"warp \d+ lane \d+: operand A register \d \(%r\d+\)", errors[0].message)


def test_prmt_selector_mutant_is_an_error_at_its_line(compiled):
    stem = compiled / "chain_fp8e4nv_sm90_w4"
    lines = _lines(_at(stem, ".ptx").read_text())
    k = _prmt_selector_changed(lines)
    errors = _mutant_errors(stem, lines)
    assert {c.line for c in errors} == {k + 1}, [(c.line, c.message) for c in errors]
    assert "the selector" in errors[0].message


def test_a_predicate_of_unknown_value_is_unchecked_not_proved(compiled):
    """A select between two elements whose predicate is a loaded value (not a function of %tid) cannot be
    run per lane: unchecked with the reason."""
    stem = compiled / "chain_fp32_sm90_w4"
    lines = _lines(_at(stem, ".ptx").read_text())
    k = _first(lines, r"^\s*selp\.(f32|b32)\s+%r\d+, %r\d+, %r\d+, %p\d+;")
    pred = re.search(r"(%p\d+);", lines[k]).group(1)
    lines.insert(k, f"\tld.global.u32 \t%r99999, [%rd1];\n\tsetp.eq.s32 \t{pred}x, %r99999, 0;")
    lines[k + 1] = lines[k + 1].replace(pred + ";", pred + "x;")
    got = _checks(stem, "\n".join(lines))
    assert [c.status for c in got] == ["unchecked"], [c.message for c in got]
    assert "selp" in got[0].data["reason"]


def test_tf32_kwidth2_conversion_proves_and_an_operand_swap_is_an_error(harvest):
    """Triton's tf32 ``kWidth = 2`` operand spreads a thread's two K elements over two ``mma.sync``
    (B alike): proved against the operand's layout; swapping two operand registers of one mma is an error
    at that mma."""
    stem = harvest / MLSTM
    got = _checks(stem)
    assert [c.status for c in got] == ["proved"], [c.message for c in got]
    lines = _lines(_at(stem, ".ptx").read_text())
    k = _first(lines, r"mma\.sync\.aligned\.m16n8k8.*\{ %r\d+, %r\d+, %r\d+, %r\d+ \}, \{ %r\d+, %r\d+, %r\d+, %r\d+ \}",
               _first(lines, r"mma\.sync", got[0].line - 1))
    m = re.search(r"\}, \{ (%r\d+), (%r\d+), (%r\d+), (%r\d+) \}", lines[k])
    lines[k] = lines[k].replace(m.group(0), f"}}, {{ {m.group(3)}, {m.group(2)}, {m.group(1)}, {m.group(4)} }}")
    errors = _mutant_errors(stem, lines)
    assert {c.line for c in errors} == {k + 1}, [(c.line, c.message) for c in errors]
    assert "operand register order" in errors[0].message


def test_an_async_dot_result_through_its_wait_proves(harvest):
    """``ttng.warp_group_dot_wait`` hands the async dot's value through: the conversion after it proves."""
    got = _checks(harvest / ASYNC)
    assert [c.status for c in got] == ["proved"], [c.message for c in got]


def test_a_loop_carried_conversion_proves(harvest):
    """The converted tensor is the outer ``scf.for``'s iter_arg (TTGIR line 127: init a zero constant,
    yield ``kv * carried + inner_loop#3``, the inner loop's dot at line 233): traced through the yields to
    that dot and run over the loop's second iteration, where the registers the loop carries hold the
    previous iteration's elements."""
    got = _checks(harvest / CARRIED)
    assert [c.status for c in got] == ["proved"], [c.message for c in got]
    assert got[0].data["producer_line"] == 233 and got[0].data["carried_by"] == [127]
    assert got[0].data["operand"] == "B" and got[0].data["consumer_line"] == 149


@pytest.mark.parametrize("mutate", sorted(MUTANTS))
def test_loop_carried_mutants_are_errors_at_their_line(harvest, mutate):
    """A routing bug planted in the loop-carried conversion's shuffles is an error at the planted line."""
    stem = harvest / CARRIED
    lines = _lines(_at(stem, ".ptx").read_text())
    k = MUTANTS[mutate](lines)
    errors = _mutant_errors(stem, lines)
    # the shuffle at PTX line 1109 reads %r88 instead of %r87, the other output of a selp pair
    # (``selp %r87, %r3418, %r3419, %p1`` / ``selp %r88, %r3419, %r3418, %p1`` at lines 598-599): the
    # element the lane wants is the other input of the selp writing %r88 (line 599), so that selp's
    # choice is blamed (one of the two lines of the misrouting; the blame does not tell them apart)
    want = {k + 1} if mutate != "shuffle source register swapped" else {599}
    assert errors and {c.line for c in errors} == want, [(c.line, c.message) for c in errors]
    assert all(c.severity == "error" and c.data["carried_by"] == [127] for c in errors)
    assert re.search(r"warp \d+ lane \d+: operand B register \d \(%r\d+\)", errors[0].message)


MASK_TTGIR = """module {
  %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %c = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
  %r2 = tt.expand_dims %r {axis = 1 : i32} : tensor<8xi32> -> tensor<8x1xi32>
  %c2 = tt.expand_dims %c {axis = 0 : i32} : tensor<4xi32> -> tensor<1x4xi32>
  %rb = tt.broadcast %r2 : tensor<8x1xi32> -> tensor<8x4xi32>
  %cb = tt.broadcast %c2 : tensor<1x4xi32> -> tensor<8x4xi32>
  %two = arith.constant dense<2> : tensor<8x4xi32>
  %c3 = arith.muli %cb, %two : tensor<8x4xi32>
  %rf = arith.sitofp %rb : tensor<8x4xi32> to tensor<8x4xf32>
  %cf = arith.sitofp %c3 : tensor<8x4xi32> to tensor<8x4xf32>
  %d = arith.subf %rf, %cf : tensor<8x4xf32>
  %z = arith.constant dense<0.000000e+00> : tensor<8x4xf32>
  %k = arith.cmpf oge, %d, %z : tensor<8x4xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<8x4xf32>
  %acc = arith.constant dense<0.000000e+00> : tensor<8x4xf32>
  %p = tt.dot %a, %b, %acc : tensor<8x8xf16> * tensor<8x4xf16> -> tensor<8x4xf32>
  %w = arith.select %k, %p, %ninf : tensor<8x4xi1>, tensor<8x4xf32>
  %e = math.exp2 %w : tensor<8x4xf32>
}"""


def test_element_values_follow_the_mask_written_out():
    """``exp2(where(row - 2 col >= 0, p, -inf))``: the element where the mask holds, 2^-inf = 0 elsewhere
    (the mask derived here from the text, element by element)."""
    got = element_values("%e", parse_module(MASK_TTGIR), (8, 4))
    for r in range(8):
        for c in range(4):
            keep = r - 2 * c >= 0
            assert got.code[r, c] == (0 if keep else 1), (r, c)
            assert keep or got.const[r, c] == 0.0, (r, c)
    assert constant_bytes(0.0, "f32", 32) == [(0, 0, 0, 0)] and constant_bytes(-2.0, "bf16", 16) == [(0, 0xC0)]


def _folded_zero(lines: list[str]) -> int:
    """0-based index of the ``mov.b32 %r, 0`` whose register a lane shuffle moves (the folded masked zero)."""
    moved = {m.group(1) for x in lines for m in [re.search(r"shfl\.sync\.idx\.b32\s+%r\d+, (%r\d+),", x)] if m}
    return next(k for k, x in enumerate(lines) if (m := re.match(r"^\s*mov\.b32\s+(%r\d+), 0;", x)) and m.group(1) in moved)


def test_folded_masked_constants_prove(harvest):
    """Operand registers the compiler folded to 0 hold elements above the diagonal, which the TTGIR's
    ``arith.select`` on ``make_range[:, None] - make_range[None, :] >= 0`` gives the constant 0.0: proved,
    with the folded registers counted."""
    got = _checks(harvest / MASKED)
    assert [c.status for c in got] == ["proved"], [c.message for c in got]
    assert got[0].data["masked_registers"] >= 1 and "arith.select at TTGIR line 135" in got[0].message


def test_a_wrong_folded_constant_is_an_error_at_its_mov(harvest):
    """The folded zero made 1.0 (``0f3F800000``): an error at that ``mov``, naming the constant wanted."""
    stem = harvest / MASKED
    lines = _lines(_at(stem, ".ptx").read_text())
    k = _folded_zero(lines)
    lines[k] = lines[k].replace(", 0;", ", 1065353216;")
    errors = _mutant_errors(stem, lines)
    assert {c.line for c in errors} == {k + 1}, [(c.line, c.message) for c in errors]
    assert "holds the constant 0x3f800000" in errors[0].message and "is the constant 0.0" in errors[0].message


def test_a_constant_in_an_unmasked_slot_is_an_error_at_the_mma(harvest):
    """The first A register of a consuming wgmma replaced by the folded zero: some of its threads want an
    element on or below the diagonal (not masked): an error at the wgmma."""
    stem = harvest / MASKED
    lines = _lines(_at(stem, ".ptx").read_text())
    zero = re.match(r"^\s*mov\.b32\s+(%r\d+), 0;", lines[_folded_zero(lines)]).group(1)
    k = _checks(stem)[0].data["mma_lines"][0] - 1
    m = re.search(r"\}, \{(%r\d+),", lines[k])
    lines[k] = lines[k].replace(m.group(0), f"}}, {{{zero},")
    errors = _mutant_errors(stem, lines)
    assert {c.line for c in errors} == {k + 1}, [(c.line, c.message) for c in errors]
    assert "is not masked" in errors[0].message


@pytest.mark.slow
def test_harvested_conversions_have_no_error(tmp_path):
    """Every harvested pair with a converted dot operand (correct kernels; the pairs with a lane shuffle
    and none give no check): no error; the figures printed for the report."""
    convert = re.compile(rb"ttg\.convert_layout[^\n]*-> tensor<[^\n]*#ttg\.dot_op")
    texts = _harvest_texts(lambda n: n.endswith((".ttgir", ".ptx")))
    keep = sorted(n for n in texts if n.endswith(".ttgir") and n[:-6] + ".ptx" in texts
                  and convert.search(texts[n]))          # the check needs a convert into a dot operand
    _write(tmp_path, {n[:-6] + ext: texts[n[:-6] + ext] for n in keep for ext in (".ttgir", ".ptx")})
    counts: dict = {}
    for n in keep:
        for c in _checks(tmp_path / n[:-6]):
            counts[c.status] = counts.get(c.status, 0) + 1
            assert c.status != "counterexample", (n, c.line, c.message)
    print(f"register-permute on {len(keep)} harvested pairs: {counts}")
    assert counts.get("proved", 0) >= 1
    assert not counts.get("unchecked"), "loop-carried producers and folded masked constants are decided"
