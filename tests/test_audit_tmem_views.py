"""Tensor-memory views on real sm_100 kernels (tests/fixtures/ttgir/views, made by generate.py there):
a ``tc_gen5_mma`` whose A operand is in tensor memory, ``ttng.tmem_subslice`` and
``ttng.tc_gen5_commit``; and internal failures reported as ``unchecked``.

Outside values: the TMEM addresses in the PTX Triton wrote for the same kernels (the A operand's
column per K-block, the subslice's column offset), Triton's own ``TensorMemoryLayout`` as a linear
layout (the wheel, in a subprocess), and an enumeration of Triton's subslice address rule written
here.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import verilayout.audit.ttgir as ttgir_audit
import verilayout.audit.ttgir_banks as ttgir_banks
from verilayout.audit import audit_file, audit_text
from verilayout.core.linear_layout import LinearLayout
from verilayout.prove.tmem import operand_a_verdict, subslice_verdict

HERE = Path(__file__).resolve().parent / "fixtures" / "ttgir" / "views"
ROOT = Path(__file__).resolve().parent.parent
ATTN, SUB, WS = (HERE / "attn_chain_sm100.ttgir", HERE / "subtile_epilogue_sm100.ttgir",
                 HERE / "ws_tma_matmul_sm100.ttgir")


# ----- A operand in tensor memory -----------------------------------------------------------------

def _tmem_a_mmas(rep):
    return [c for c in rep.checks if c.check == "mma-tmem-operand"]


def test_attention_p_in_tensor_memory_is_proved_and_matches_the_ptx_addresses():
    rep = audit_file(str(ATTN))
    mmas = _tmem_a_mmas(rep)
    assert len(mmas) == 2 and all(c.status == "proved" and c.data["m"] == 128 for c in mmas)
    assert all(c.data["writers"] for c in mmas)            # P's tmem_store(s) found by dataflow
    assert not [c for c in rep.checks if c.status in ("unchecked", "counterexample") and c.severity == "error"]
    # Derivation: A is 128 x 64 f16; tcgen05.mma kind::f16 takes K = 16 a step, and with A packed two
    # 16-bit elements a 32-bit column (the model) K-block kb starts at column 16 kb * 16 / 32 = 8 kb.
    # The PTX Triton wrote: the A address of the 4 MMAs of one dot.
    ptx = ATTN.with_suffix(".ptx").read_text()
    offs = [int(x) for x in re.findall(r"tcgen05\.mma\.cta_group::1\.kind::f16 \[ %r\d+ \+ 0 \], \[ %r\d+ \+ (\d+) \]",
                                       ptx)]
    k = mmas[0].data["k"]
    assert offs[: k // 16] == [8 * kb for kb in range(k // 16)]


def _attn_lines():
    text = ATTN.read_text()
    lines = text.split("\n")
    mma = [i for i, ln in enumerate(lines) if "ttng.tc_gen5_mma" in ln and "128x64xf16, #tmem" in ln.split(",")[-4]
           or ("ttng.tc_gen5_mma" in ln and ": !ttg.memdesc<128x64xf16, #tmem" in ln)]
    return text, lines, mma


def test_a_operand_in_another_datapath_layout_is_an_error_at_the_mma():
    # the A allocation, its stores and the MMA all declare blockM = 64 (the M = 64 data path, rows 16
    # a warp): the M = 128 MMA (its accumulator's blockM) reads rows 16-31 from lanes 16-31, where
    # that layout put nothing
    text, lines, mma = _attn_lines()
    assert mma
    mutated = "#tmemA = #ttng.tensor_memory_encoding<blockM = 64, blockN = 64, colStride = 1>\n" + \
        text.replace("128x64xf16, #tmem,", "128x64xf16, #tmemA,")
    bad = [c for c in audit_text(mutated, "mutant.ttgir").checks if c.check == "mma-tmem-operand"]
    assert {c.line - 1 for c in bad} == {i + 1 for i in mma}
    assert all((c.status, c.severity) == ("counterexample", "error") for c in bad)


def test_a_writer_in_another_layout_is_an_error_at_the_mma():
    text, lines, mma = _attn_lines()
    i = next(i for i, ln in enumerate(lines) if "ttng.tmem_store" in ln and "128x64xf16, #tmem," in ln)
    lines[i] = lines[i].replace("128x64xf16, #tmem,", "128x64xf16, #tmemA,")
    mutated = "#tmemA = #ttng.tensor_memory_encoding<blockM = 64, blockN = 64, colStride = 1>\n" + "\n".join(lines)
    bad = [c for c in audit_text(mutated, "mutant.ttgir").checks if c.check == "mma-tmem-operand"]
    assert bad and all((c.status, c.severity) == ("counterexample", "error") for c in bad)
    assert all(f"line {i + 2}" in c.message for c in bad)


SCRIPT = r"""
import json, os, sys
from triton._C.libtriton import gluon_ir, ir
from triton.experimental.gluon.language.nvidia.blackwell import TensorMemoryLayout
ctx = ir.context(); ir.load_dialects(ctx)
b = gluon_ir.GluonOpBuilder(ctx, "sm100")
out = []
for bm, bn, m, n in json.loads(sys.argv[1]):
    t = b.to_linear_layout(TensorMemoryLayout((bm, bn), col_stride=1)._to_ir(b), [m, n])
    out.append({"bm": bm, "bn": bn, "m": m, "n": n, "rows": t.rows, "cols": t.cols})
print(json.dumps(out))
sys.stdout.flush()
os._exit(0)
"""
TILES = [(128, 64, 128, 64), (64, 64, 64, 64), (128, 128, 128, 128), (128, 64, 128, 256), (64, 128, 64, 128),
         (128, 256, 128, 256), (128, 16, 256, 16)]


@pytest.fixture(scope="module")
def triton_tmem():
    pytest.importorskip("triton")
    p = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(TILES)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def _ll(c):
    return LinearLayout({"lane": c["rows"], "col": c["cols"]}, {"dim0": c["m"], "dim1": c["n"]},
                        require_surjective=False)


def test_triton_tmem_layouts_are_what_the_mma_reads_for_their_own_m_only(triton_tmem):
    # Triton's tensor_memory_encoding of blockM = 128 / 64 is the data path of M = 128 / 64 (layouts D
    # and F of the PTX ISA): A read by an MMA of the same M is proved, by the other M refused
    for c in triton_tmem[:2]:
        for m in (128, 64):
            if c["m"] == 64 and m == 128:
                continue                      # a 64-row A is no operand of an M = 128 MMA
            v = operand_a_verdict(_ll(c), m, c["n"])
            assert v.proved == (m == c["bm"]), (c["bm"], m, v.reason)


def test_a_tile_of_two_row_blocks_is_proved_block_by_block(triton_tmem):
    # A of 256 x 16 bf16 in blockM = 128 (torchao's hadamard kernel, sm_100): Triton issues one M = 128
    # MMA per row block, the second at the address of element (128, 0). Triton's own layout puts
    # rows 128-255 at columns 16-31 (the PTX of that kernel: A at [a + 0] and [a + 8], 16 bf16 = 8
    # 32-bit columns); with rows 128-255 in reverse lane order the second block is wrong
    c = triton_tmem[-1]
    assert (c["bm"], c["m"], c["n"]) == (128, 256, 16)
    ll = _ll(c)
    v = operand_a_verdict(ll, 128, 16)
    assert v.proved and v.details["blocks"] == 2
    lanes = [list(b) for b in c["rows"]]
    cols = [list(b) for b in c["cols"]]
    hi = next(j for j, b in enumerate(cols) if b[0] == 128)          # the column bit that picks block 1
    cols[hi] = [128 + 127, 0]                                         # block 1: rows reversed
    bad = LinearLayout({"lane": lanes, "col": cols}, {"dim0": 256, "dim1": 16}, require_surjective=False)
    assert operand_a_verdict(bad, 128, 16).status == "counterexample"


# ----- tmem_subslice ------------------------------------------------------------------------------

def _brute_subslice(c, offset, width) -> bool:
    """Triton's rule, enumerated: the view's base is the cell of element (0, offset); view element
    (r, j) is read at its own cell (as the view's layout says) plus that base."""
    cells = {}
    nl, nc = len(c["rows"]), len(c["cols"])
    for lane in range(1 << nl):
        for col in range(1 << nc):
            e = [0, 0]
            for k in range(nl):
                if lane >> k & 1:
                    e = [e[0] ^ c["rows"][k][0], e[1] ^ c["rows"][k][1]]
            for k in range(nc):
                if col >> k & 1:
                    e = [e[0] ^ c["cols"][k][0], e[1] ^ c["cols"][k][1]]
            cells.setdefault(tuple(e), (lane, col))
    bl, bc = cells[(0, offset)]
    return all((cells[(r, j)][0] + bl, cells[(r, j)][1] + bc) == cells[(r, offset + j)]
               for r in range(c["m"]) for j in range(width))


# slow: 4.7 s of CPU (-p tests.cpu_table), the enumeration over every subslice; the module's other
# tests stay in the fast subset (pytest -m 'not slow')
@pytest.mark.slow
def test_subslice_verdict_equals_the_enumerated_rule_on_triton_layouts(triton_tmem):
    from verilayout.hw.nvidia.tmem import accumulator_layout
    # plus the cta_group::2 M = 128 data path (layout B: column halves folded onto lanes 64-127),
    # where subslices crossing the fold are wrong
    fold = accumulator_layout(128, 128, cta_group=2)
    folded = {"bm": 64, "bn": 128, "m": 64, "n": 128, "rows": fold.bases["lane"], "cols": fold.bases["col"]}
    seen = {True: 0, False: 0}
    for c in triton_tmem[2:-1] + [folded]:
        for width in (32, 64, 128):
            for offset in range(0, c["n"] - width + 1, 32):
                want = _brute_subslice(c, offset, width)
                assert subslice_verdict(_ll(c), offset, width).proved == want, (c["bm"], c["bn"], offset, width)
                seen[want] += 1
    assert seen[True] and seen[False]       # both outcomes occur


def test_subtiled_epilogue_subslices_are_proved_at_the_ptx_offsets():
    rep = audit_file(str(SUB))
    subs = [c for c in rep.checks if c.op == "ttng.tmem_subslice"]
    assert [c.status for c in subs] == ["proved", "proved"]
    # the PTX: the second tcgen05.ld reads at the first one's address + 64 columns
    ptx = SUB.with_suffix(".ptx").read_text()
    first, second = re.findall(r"tcgen05\.ld\.sync\.aligned\.32x32b\.x64\.b32 \{[^}]*\}, \[(%r\d+) \+ 0\]", ptx)
    assert re.search(rf"add\.s32\s+{re.escape(second)}, {re.escape(first)}, 64;", ptx)
    assert sorted(c.data["address"]["col"] for c in subs) == [0, 64]
    assert all(c.data["address"]["lane"] == 0 for c in subs)
    assert not [c for c in rep.checks if c.status != "proved"]


def test_a_subslice_past_the_tile_is_an_error_at_its_line():
    # the second half's view moved to offset 96: its columns 96..159 leave the 128-column tile
    text = SUB.read_text()
    lines = text.split("\n")
    i = next(i for i, ln in enumerate(lines) if "ttng.tmem_subslice" in ln and "offset = 64" in ln)
    lines[i] = lines[i].replace("offset = 64", "offset = 96")
    c = next(c for c in audit_text("\n".join(lines), "mutant.ttgir").checks if c.line == i + 1)
    assert (c.op, c.status, c.severity) == ("ttng.tmem_subslice", "counterexample", "error")


def test_tc_gen5_commit_is_no_unchecked_op():
    rep = audit_file(str(WS))
    assert "ttng.tc_gen5_commit" in WS.read_text()
    assert not [c for c in rep.checks if c.op == "ttng.tc_gen5_commit"]
    assert not [c for c in rep.checks if c.status == "unchecked"]


# ----- internal failures ---------------------------------------------------------------------------

def test_an_internal_failure_of_the_swizzle_suggestion_is_unchecked_not_silence(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("synthetic model failure")
    monkeypatch.setattr(ttgir_banks, "synthesize", boom)
    rep = audit_file(str(ROOT / "examples" / "matmul_fp8.ttgir"))
    warn = [c for c in rep.checks if c.severity == "warning"]
    internal = [c for c in rep.checks if c.data.get("reason") == "internal error"]
    assert warn and internal and all(c.status == "unchecked" and c.severity != "error" for c in internal)
    assert {c.line for c in internal} == {c.line for c in warn}
    assert "AssertionError: synthetic model failure" in internal[0].message


def test_an_internal_failure_inside_an_op_check_is_unchecked(monkeypatch):
    def boom(*a, **k):
        raise KeyError("synthetic")
    monkeypatch.setattr(ttgir_audit, "join_split_verdict", boom)
    rep = audit_file(str(HERE / "w4a16_nsplit_sm90.ttgir"))
    bad = [c for c in rep.checks if c.op in ("tt.join", "tt.split")]
    assert bad and all((c.status, c.data["reason"]) == ("unchecked", "internal error") for c in bad)
    assert "KeyError" in bad[0].message and not [c for c in rep.checks if c.severity == "error"]


# ----- cp.async narrower than the layouts allow ---------------------------------------------------

def test_cp_async_with_a_narrower_shared_vector_is_banked_at_the_smaller_width(tmp_path):
    # the sm_80 fixture's A buffer re-declared with vec = 4: its copies keep contiguity = 8 (16
    # bytes of pointers a thread) but only 4 f16 stay contiguous in shared memory, so Triton copies
    # 8 bytes at a time (the smaller of the two); the brute force enumerates the same access at
    # the widest vector both the layouts and the contiguity allow
    from tests.reference.ttgir_banks import BITS, brute_wavefronts, layouts_of, max_vector_bits
    src = ROOT / "tests" / "fixtures" / "ttgir" / "matmul_sm80_cp_async.ttgir"
    text = src.read_text()
    old = "#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>"
    assert old in text
    path = tmp_path / "narrow.ttgir"
    path.write_text(text.replace(old, "#shared = #ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, "
                                      "order = [1, 0]}>"))
    copies = [c for c in audit_file(str(path)).checks if c.op == "ttg.async_copy_global_to_local"]
    assert len(copies) == 6 and not [c for c in copies if c.status == "unchecked"]
    narrow = [c for c in copies if c.data["vector_elems"] == 4]
    assert len(narrow) == 3
    for c in copies:
        reg, smem, elem, shift = layouts_of(str(path), c)
        assert (c.data["vector_elems"], c.data["wavefronts"]) == \
            brute_wavefronts(reg, smem, BITS[elem], shift, max_vector_bits(str(path), c))


# ----- gfx950 transposing LDS reads (ds_read_b64_tr_b16) -------------------------------------------

TN = HERE / "mm_tn_gfx950.ttgir"


def test_gfx950_mn_contiguous_operands_are_tr_reads_as_the_wheel_emits():
    # the wheel's gfx950 assembly of this kernel (counted by generate.py into .lds.json): only
    # ds_read_b64_tr_b16, 64 of them; the audit's loads name the same instruction and add up to the
    # same count (a 128 x 64 f16 operand over 2 distinct warps (one warp basis is zero): 64 f16 a
    # lane, 4 per instruction -> 16 instructions a load; 4 loads)
    asm = json.loads(TN.with_suffix(".lds.json").read_text())
    loads = [c for c in audit_file(str(TN)).checks if c.op == "ttg.local_load"]
    assert {c.data["instruction"] for c in loads} == set(asm) == {"ds_read_b64_tr_b16"}
    assert sum(c.data["instructions_per_wave"] for c in loads) == asm["ds_read_b64_tr_b16"]
    # Triton pads these buffers ([512:+32]) for the transposed read: conflict-free (2 phases of 32 lanes)
    assert all((c.status, c.data["wavefronts"], c.data["ideal"]) == ("proved", 2, 2) for c in loads)


def test_gfx950_tr_read_of_an_unpadded_buffer_is_4_way():
    # A re-declared M-contiguous without padding or swizzle: element (m, k) at byte 256 k + 2 m. A
    # 32-lane phase (two 16-lane groups: M 0-31, K 0-3 by the dot operand's lane bases) reads the
    # runs at 256 k + 8 r (k < 4, r < 8): bank (64 k + 2 r + {0, 1}) mod 64 = 2 r + {0, 1} for every
    # k, so 4 distinct dwords a bank: 4 cycles a phase, 8 an instruction, against the ideal 2
    text = TN.read_text()
    lines = text.split("\n")
    i = next(i for i, ln in enumerate(lines) if ln.startswith("#shared = "))
    lines[i] = "#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>"
    rep = audit_text("\n".join(lines), "mutant.ttgir")
    a = [c for c in rep.checks if c.op == "ttg.local_load" and "128x64xf16" in lines[c.line - 1]]
    assert len(a) == 2
    assert all((c.status, c.severity, c.data["instruction"], c.data["wavefronts"], c.data["ways"]) ==
               ("counterexample", "warning", "ds_read_b64_tr_b16", 8, 4) for c in a)


# ----- tcgen05.ld/st messages against the PTX --------------------------------------------------------

def _ptx_messages(ptx: str) -> set[tuple[str, str, int]]:
    return {(op, shape, int(num)) for op, shape, num in
            re.findall(r"tcgen05\.(ld|st)\.sync\.aligned\.(\w+)\.x(\d+)(?:\.\w+)*\.b32", ptx)}


def _audit_messages(rep) -> set[tuple[str, str, int]]:
    return {("ld" if c.op == "ttng.tmem_load" else "st", c.data["tmem_message"], c.data["num"])
            for c in rep.checks if c.check == "tmem-layout" and "tmem_message" in c.data}


def test_every_tmem_message_the_audit_names_is_the_one_in_the_ptx():
    # each tmem_load / tmem_store / sourced tmem_alloc is proved against the widest message, named
    # in 32-bit registers (f16 P: .x32 for 64 columns of elements; e8m0 scale factors: .x4 for 16 bytes);
    # Triton's PTX for the same kernels issues exactly these (the MMA scale factors included)
    # (a copy of 256 registers a thread, persistent_tma_matmul_128x256x64_w4_s2, is split by Triton into
    # four .x64 messages where one .x128 pair would fit: tests/test_audit_tmem_messages.py checks where
    # each of those lands, and that file is left out here; so is ws_attention_fwd, whose softmax
    # partition, under its 88-register budget, loads the 64-column S tile as two .x32 messages: the
    # PTX audit's tmem-message checks of tests/test_audit_warp_specialize.py place each)
    files = sorted((ROOT / "tests" / "corpus" / "cuda100").glob("*.ttgir")) + [ATTN, SUB]
    compared = 0
    for f in files:
        ptx = f.with_suffix(".ptx")
        if not ptx.exists() or f.name in ("persistent_tma_matmul_128x256x64_w4_s2.ttgir",
                                          "ws_attention_fwd_d64_128x64_w4_s2.ttgir"):
            continue
        rep = audit_file(str(f))
        assert _audit_messages(rep) == _ptx_messages(ptx.read_text()), f.name
        compared += bool(_audit_messages(rep))
        assert not [c for c in rep.checks if c.check == "tmem-layout" and c.status != "proved"], f.name
    assert compared >= 10


# ----- tmem_copy (tcgen05.cp of MMA scale factors) ----------------------------------------------------

BSM = HERE / "block_scaled_mm_sm100.ttgir"


def _copy_brute(shared_offsets: list, scale_rows: list, scale_cols: list) -> bool:
    """tcgen05.cp.32x128b.warpx4 enumerated: byte o of the 512-byte buffer goes to TMEM lane o // 16,
    byte column o % 16; the element there must be the one the scales layout keeps at that cell."""
    def xor(bases, x):
        e = [0, 0]
        for j, b in enumerate(bases):
            if x >> j & 1:
                e = [e[0] ^ b[0], e[1] ^ b[1]]
        return e

    def cell(lane, col):
        a, b = xor(scale_rows, lane), xor(scale_cols, col)
        return [a[0] ^ b[0], a[1] ^ b[1]]
    return all(xor(shared_offsets, o) == cell(o // 16, o % 16) for o in range(1 << len(shared_offsets)))


def test_scale_factors_copied_into_tensor_memory_land_where_the_mma_reads_them():
    text = BSM.read_text()
    rep = audit_file(str(BSM))
    copies = [c for c in rep.checks if c.op == "ttng.tmem_copy"]
    assert len(copies) == 4 and all(c.status == "proved" for c in copies)
    # the PTX Triton wrote: one tcgen05.cp.32x128b.warpx4 per tmem_copy (128 x 4 bytes = one chunk)
    ptx = BSM.with_suffix(".ptx").read_text()
    assert len(re.findall(r"tcgen05\.cp\.cta_group::1\.warpx4\.32x128b", ptx)) == len(copies)
    # the brute force on the file's shared_linear source and Triton's scales layout (its bases as
    # tests/oracles/test_tmem_layout_oracle.py checks them: rows 0-31 on lanes, replicated to the
    # other quarters; columns: 4 scales, then rows + 32 and + 64)
    src = re.search(r"ttng\.tmem_copy %\w+, %\w+ : !ttg\.memdesc<128x4xi8, (#\w+),", text).group(1)
    offs = json.loads(re.search(rf"^{src} = #ttg\.shared_linear<{{offset = (\[\[.*?\]\])}}", text, re.M).group(1))
    rows = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 0], [0, 0]]
    cols = [[0, 1], [0, 2], [32, 0], [64, 0]]
    assert _copy_brute(offs, rows, cols)


def test_scale_factors_in_another_shared_order_are_an_error_at_the_copy():
    # rows 32 / 64 moved to the 16-byte row index and rows 1 / 2 to the chunk bytes: the copy would
    # put row 32's scales on TMEM lane 1
    text = BSM.read_text()
    src = re.search(r"ttng\.tmem_copy %\w+, %\w+ : !ttg\.memdesc<128x4xi8, (#\w+),", text).group(1)
    line = re.search(rf"^{src} = .*$", text, re.M).group(0)
    old = re.search(r"offset = (\[\[.*?\]\])", line).group(1)
    offs = json.loads(old)
    swapped = [offs[0], offs[1], offs[4], offs[5], offs[2], offs[3]] + offs[6:]
    mutated = text.replace(line, line.replace(old, json.dumps(swapped)))
    assert mutated != text
    assert not _copy_brute(swapped, [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 0], [0, 0]],
                           [[0, 1], [0, 2], [32, 0], [64, 0]])
    bad = [c for c in audit_text(mutated, "mutant.ttgir").checks if c.op == "ttng.tmem_copy"]
    assert len(bad) == 4 and all((c.status, c.severity) == ("counterexample", "error") for c in bad)
