"""Warp-specialized kernels (``ttg.warp_specialize``: a default partition and worker partitions on
warps of their own) audited like any other code. Every corpus kernel here is Triton 3.9's own
output for a correct kernel (``tests/corpus/ws_kernels.py``, made by ``ws_generate.py``; and
``ws_tma_matmul`` of ``kernels.py``), so no check may be an error and every MMA operand must be proved.

The corpus kernel ``ws_tma_matmul``'s PTX advances each ring buffer's base by one stage per iteration
in one loop-carried register (``add.s32 %r, %r, 16384`` for the 128x64 f16 B tile) and wraps it with
another (the iteration count divided by the 3 stages, times 3 stages of bytes): the 1024-byte
alignment of the base the wgmma descriptors read is then a fact about two loop-carried values,
proved under each one's alignment (each by induction over its definitions). A stride that breaks
the alignment leaves it unproved.

Worker partitions: their warps start after the default partition's, larger partitions first (the
rule of Triton's ``AllocateWarpGroups`` pass, whose test ``test/Conversion/allocate_warp_groups.mlir``
gives ``num_warps`` 1, 8, 4 after 4 default warps the start warps 16, 4, 12); their PTX computes the
thread index ``%tid.x - 32 * start``. The mutants below put a bug in one partition's PTX (a worker's
shared-memory offset 16 bytes off, its ``%tid`` offset one warp off, its register budget, the state
table that sends warps to partitions, a captured value read from the wrong bytes): each is an error
at the mutated line.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.audited import audit_pair

CORPUS = Path(__file__).resolve().parent / "corpus"
WS = {t: CORPUS / t / "ws_tma_matmul_128x128x64_w4_s3" for t in ("cuda90", "cuda100")}
NEW = sorted(p.with_suffix("") for t in ("cuda90", "cuda100") for p in (CORPUS / t).glob("ws_*.ttgir"))
ROUNDTRIP = CORPUS / "cuda90" / "ws_roundtrip_64x64_w4_4_2"      # workers of 4 and 2 warps
REDUCE = CORPUS / "cuda100" / "ws_reduce_convert_32x64_w4_2_1_4"  # workers of 2, 1 and 4 warps


def _ptx_checks(stem: Path, ptx: str | None = None):
    ttgir = stem.with_suffix(".ttgir").read_text()
    ptx = stem.with_suffix(".ptx").read_text() if ptx is None else ptx
    return audit_pair(ttgir, ptx, "ws").checks


def _partition_warps(ttgir: str) -> list[int]:
    return [int(n) for n in re.findall(r"^\s*partition\d+\(.*\)\s+num_warps\((\d+)\)\s*\{\s*$", ttgir, re.M)]


def _start_warps(default: int, warps: list[int]) -> list[int]:
    """Triton's AllocateWarpGroups rule (see the module docstring): after the default partition's
    warps, the partitions by decreasing num_warps (ties in order), each at the next free warp."""
    out, at = [0] * len(warps), default
    for i in sorted(range(len(warps)), key=lambda i: -warps[i]):
        out[i], at = at, at + warps[i]
    return out


def test_allocation_rule_matches_tritons_own_test():
    assert _start_warps(4, [1, 8, 4]) == [16, 4, 12]
    assert _start_warps(2, [2, 1]) == [2, 4] and _start_warps(2, [1, 8]) == [10, 2]


def test_the_corpus_kernels_are_warp_specialized():
    for stem in WS.values():
        text = stem.with_suffix(".ttgir").read_text()
        assert "ttg.warp_specialize" in text and "partition0" in text
    assert len(NEW) >= 14                                       # 12 new pairs and ws_tma_matmul's two
    warps, ops = set(), set()
    for stem in NEW:
        text = stem.with_suffix(".ttgir").read_text()
        assert "ttg.warp_specialize" in text, stem.name
        warps.update(_partition_warps(text))
        ops.update(op for op in ("ttg.local_store", "ttg.local_load", "tt.reduce", "ttg.convert_layout",
                                 "ttng.async_tma_copy_global_to_local", "ttng.warp_group_dot", "ttng.tc_gen5_mma")
                   if op in text)
    assert {1, 2, 4} <= warps
    assert len(ops) == 7, ops


@pytest.mark.parametrize("stem", NEW, ids=lambda s: f"{s.parent.name}/{s.name}")
def test_every_check_of_a_warp_specialized_pair_holds(stem):
    checks = _ptx_checks(stem)
    errors = [(c.line, c.check, c.message[:160]) for c in checks if c.severity == "error"]
    assert not errors
    unexplained = [(c.line, c.message[:120]) for c in checks if c.status in ("unchecked", "unknown")
                   and not c.data.get("reason")]
    assert not unexplained
    # the partitions are tied to the PTX: each worker partition's warps, where Triton puts them
    text = stem.with_suffix(".ttgir").read_text()
    nw = _partition_warps(text)
    default = int(re.search(r'"ttg.num-warps" = (\d+)', text).group(1))
    got = {c.data["partition"]: c.data["warps"] for c in checks if c.check == "warp-partition" and "num_warps" in c.data}
    want = {i: list(range(s, s + n)) for i, (s, n) in enumerate(zip(_start_warps(default, nw), nw))}
    assert got == want and all(c.status == "proved" for c in checks if c.check == "warp-partition")
    assert not [c for c in checks if c.check == "smem-address" and c.status == "unchecked"
                and "no TTGIR op is tied" in c.message]           # the dispatch's own accesses are checked


def test_every_mma_operand_of_the_warp_specialized_kernels_is_proved():
    for stem in list(WS.values()) + [CORPUS / "cuda90" / "ws_tma_wgmma_64x64x64_s2_w4_1_2",
                                     CORPUS / "cuda100" / "ws_attention_fwd_d64_128x64_w4_s2"]:
        mma = [c for c in _ptx_checks(stem) if c.check == "mma-descriptor"]
        assert len(mma) >= 2, stem.name
        assert {c.status for c in mma} == {"proved"}, [(c.line, c.message) for c in mma if c.status != "proved"]


def test_the_split_tmem_load_of_the_softmax_partition_is_placed_message_by_message():
    # the cuda100 attention's S tile (128x64 f32) is loaded by its 4-warp partition as two .x32
    # messages (Triton splits the copy under the partition's register budget): each one is placed
    stem = CORPUS / "cuda100" / "ws_attention_fwd_d64_128x64_w4_s2"
    assert len(re.findall(r"tcgen05\.ld\.sync\.aligned\.32x32b\.x32\.b32", stem.with_suffix(".ptx").read_text())) >= 2
    msgs = [c for c in _ptx_checks(stem) if c.check == "tmem-message" and " of 2 " in c.message]
    assert len(msgs) == 2 and all(c.status == "proved" for c in msgs)


def test_the_ring_base_alignment_is_proved_over_two_loop_carried_values():
    mma = [c for c in _ptx_checks(WS["cuda90"]) if c.check == "mma-descriptor"]
    laws = [c.data.get("induction", "") for c in mma]
    assert any("is a multiple of" in law for law in laws), laws


def test_a_ring_stride_off_the_swizzle_repeat_is_not_proved():
    ptx = WS["cuda90"].with_suffix(".ptx").read_text()
    strides = re.findall(r"add\.s32\s+(%r\d+), \1, 16384;", ptx)
    assert strides
    mutant = re.sub(r"(add\.s32\s+(%r\d+), \2, )16384;", r"\g<1>16400;", ptx)
    mma = [c for c in _ptx_checks(WS["cuda90"], mutant) if c.check == "mma-descriptor" and c.data.get("operand") == "B"]
    assert mma and "proved" not in {c.status for c in mma}


def _worker_lines(checks, op: str) -> dict[int, list]:
    """partition -> the proved all-warps checks of ``op`` in that worker partition."""
    out: dict[int, list] = {}
    for c in checks:
        if c.check == "smem-address" and c.data.get("ttgir_op") == op and "partition" in c.data:
            out.setdefault(c.data["partition"], []).append(c)
    return out


def test_a_workers_local_store_and_load_are_proved_on_every_warp():
    checks = _ptx_checks(ROUNDTRIP)
    for op in ("ttg.local_store", "ttg.local_load"):
        per = _worker_lines(checks, op)
        assert set(per) == {0, 1}, op                       # the 4-warp and the 2-warp worker
        assert all(c.status == "proved" for cs in per.values() for c in cs)
        # and warp 0 of each worker lane by lane (the element check), at the same lines
        lines = {c.line for cs in per.values() for c in cs}
        first = [c for c in checks if c.line in lines and c.check == "smem-address" and "partition" not in c.data]
        assert len(first) == 2 and all(c.status == "proved" for c in first)


def test_a_workers_reduction_scratch_and_conversion_are_proved():
    # the 4-warp worker's column sum meets in scratch memory, the 2-warp worker's row max too,
    # and each convert_layout of a worker goes through scratch memory
    checks = _ptx_checks(REDUCE)
    text = REDUCE.with_suffix(".ttgir").read_text().splitlines()
    heads = [i for i, ln in enumerate(text, 1) if re.match(r"\s*partition\d+\(", ln)]
    worker_ops = {i for i, ln in enumerate(text, 1) if i > heads[0] and re.search(r"tt\.reduce|ttg\.convert_layout", ln)}
    scratch = [c for c in checks if c.check == "smem-address" and ("scratch round" in c.message
                                                                  or c.data.get("ttgir_op") == "ttg.convert_layout")]
    assert scratch and all(c.status == "proved" for c in scratch)
    tied = {c.data.get("ttgir_line") for c in scratch} & worker_ops
    assert tied, "a worker's conversion proved against its own layouts"
    reduce_rounds = [c for c in scratch if "tt.reduce" in c.message]
    assert len(reduce_rounds) >= 2


# ----- mutants: the bug really there -----------------------------------------------------------

def _mutate(ptx: str, line: int, old: str, new: str) -> str:
    lines = ptx.split("\n")
    assert old in lines[line - 1], (line, lines[line - 1])
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    return "\n".join(lines)


def _errors_at(checks, line: int) -> list:
    return [c for c in checks if c.line == line and c.severity == "error"]


def test_a_workers_store_16_bytes_off_is_an_error_at_its_line():
    ptx = ROUNDTRIP.with_suffix(".ptx").read_text()
    store = _worker_lines(_ptx_checks(ROUNDTRIP), "ttg.local_store")[1][0]      # the 2-warp worker
    line = store.data["instructions"][1]
    m = re.search(r"\[(%r\d+)\+(\d+)\]", ptx.split("\n")[line - 1])
    mutant = _mutate(ptx, line, m.group(0), f"[{m.group(1)}+{int(m.group(2)) + 16}]")
    errs = _errors_at(_ptx_checks(ROUNDTRIP, mutant), line)
    assert errs and {c.check for c in errs} == {"smem-address"}


def test_a_worker_at_the_wrong_warp_offset_is_an_error_at_the_tid_offset_and_its_accesses():
    ptx = ROUNDTRIP.with_suffix(".ptx").read_text()
    # the 2-warp worker runs on warps 8 and 9 (after 4 default warps and the 4-warp worker)
    start = _start_warps(4, [4, 2])[1]
    found = [(i, ln) for i, ln in enumerate(ptx.split("\n"), 1)
             if re.search(rf"add\.s32\s+%r\d+, %r1, -{32 * start};", ln)]
    assert len(found) == 1
    line = found[0][0]
    mutant = _mutate(ptx, line, f"-{32 * start};", f"-{32 * (start + 1)};")   # as if it started at warp 9
    checks = _ptx_checks(ROUNDTRIP, mutant)
    assert [c.check for c in _errors_at(checks, line)] == ["warp-partition"]
    wrong = [c for c in checks if c.severity == "error" and c.check == "smem-address" and c.data.get("partition") == 1]
    assert wrong, "the worker's shared-memory accesses land on another warp's bytes"


def test_a_register_budget_other_than_requested_is_an_error_at_its_setmaxnreg():
    stem = CORPUS / "cuda90" / "ws_roundtrip_64x64_w4_2_1"
    ptx = stem.with_suffix(".ptx").read_text()
    budget = [c for c in _ptx_checks(stem) if c.check == "register-budget"]
    assert budget and all(c.status == "proved" for c in budget)
    want = re.search(r"requestedRegisters = array<i32: (\d+)", stem.with_suffix(".ttgir").read_text()).group(1)
    line = budget[0].line
    mutant = _mutate(ptx, line, f"u32 \t{want};", f"u32 \t{int(want) + 8};")
    assert [c.check for c in _errors_at(_ptx_checks(stem, mutant), line)] == ["register-budget"]


def test_a_state_table_sending_a_warp_to_the_wrong_partition_is_an_error_at_the_store():
    stem = CORPUS / "cuda90" / "ws_roundtrip_64x64_w4_2_1"
    ptx = stem.with_suffix(".ptx").read_text()
    table = [c for c in _ptx_checks(stem) if c.check == "warp-partition" and "num_warps" in c.data]
    line = table[0].line
    m = re.search(r"st\.shared\.b32\s+\[global_smem\+(\d+)\], (\d+);", ptx.split("\n")[line - 1])
    # warps 4, 5 -> partition 0 and warp 6 -> partition 1 (bytes 0, 0, 1 from warp 4): warp 5 to partition 1
    value = int(m.group(2))
    assert value.to_bytes(4, "little")[:3] == bytes([0, 0, 1])
    bad = int.from_bytes(bytes([0, 1, 1]) + value.to_bytes(4, "little")[3:], "little")
    errs = _errors_at(_ptx_checks(stem, _mutate(ptx, line, f", {value};", f", {bad};")), line)
    assert errs and {c.check for c in errs} == {"warp-partition"}


def test_a_capture_read_from_the_wrong_bytes_is_an_error_at_the_load():
    stem = CORPUS / "cuda100" / "ws_attention_fwd_d64_128x64_w4_s2"
    ptx = stem.with_suffix(".ptx").read_text()
    cap = [c for c in _ptx_checks(stem) if c.check == "smem-address" and "capture" in c.message]
    assert cap and all(c.status == "proved" for c in cap)
    line = cap[0].line
    m = re.search(r"\[global_smem\+(\d+)\]", ptx.split("\n")[line - 1])
    mutant = _mutate(ptx, line, m.group(0), f"[global_smem+{int(m.group(1)) + 16}]")
    assert [c.check for c in _errors_at(_ptx_checks(stem, mutant), line)] == ["smem-address"]


def _worker_region_lines(stem: Path) -> set[int]:
    from verilayout.audit.ptx_partitions import partition_map
    from verilayout.frontends.ptx import parse_ptx
    from verilayout.frontends.ttgir import parse_module
    from verilayout.prove.ptx_values import PtxValues
    mod = parse_ptx(stem.with_suffix(".ptx").read_text())
    pmap = partition_map(mod, parse_module(stem.with_suffix(".ttgir").read_text()),
                         {f: PtxValues(mod, f, first_iteration=True) for f in mod.functions})
    return set().union(*(p.lines for p in pmap.partitions))


def test_a_workers_reduction_or_conversion_scratch_16_bytes_off_is_an_error_at_its_line():
    ptx = REDUCE.with_suffix(".ptx").read_text()
    worker = _worker_region_lines(REDUCE)
    scratch = sorted({c.line for c in _ptx_checks(REDUCE) if c.check == "smem-address" and c.line in worker
                      and ("scratch round" in c.message or c.data.get("ttgir_op") == "ttg.convert_layout")})
    assert len(scratch) >= 3
    for line in scratch:
        m = re.search(r"\[(%r\d+)(?:\+(\d+))?\]", ptx.split("\n")[line - 1])
        mutant = _mutate(ptx, line, m.group(0), f"[{m.group(1)}+{int(m.group(2) or 0) + 16}]")
        assert [c.check for c in _errors_at(_ptx_checks(REDUCE, mutant), line)][:1] == ["smem-address"], line


def test_a_workers_stmatrix_and_ldmatrix_are_proved_on_every_warp():
    # (each of these copies is one instruction: moved as a whole it is not seen, the TTGIR giving no
    # allocation offsets; the element checks say so in their law)
    stem = CORPUS / "cuda100" / "ws_attention_fwd_d64_128x64_w4_s2"        # the 4-warp softmax partition
    every = [c for c in _ptx_checks(stem) if c.check == "smem-address" and "warps" in c.data and "partition" in c.data
             and c.op.startswith(("stmatrix", "ldmatrix"))]
    assert {c.op.split(".")[0] for c in every} == {"stmatrix", "ldmatrix"}
    assert all(c.status == "proved" and len(c.data["warps"]) == 4 for c in every)


def test_a_worker_shifted_by_whole_warps_is_an_error_at_its_store_though_warp_0_looks_right():
    # the 4-warp worker (warps 4..7) computing %tid.x - 192: its warps act as warps 2, 3, 0, 1 of the
    # layout; every lane of its first warp still touches the bytes of a warp's lanes (relative to the
    # warp's first byte: the lane-by-lane check of warp 0 alone cannot see it), but its warps write
    # each other's rows: an error at the store's access over every warp, and at the %tid offset
    ptx = ROUNDTRIP.with_suffix(".ptx").read_text()
    start = _start_warps(4, [4, 2])[0]
    found = [i for i, ln in enumerate(ptx.split("\n"), 1) if re.search(rf"add\.s32\s+%r\d+, %r1, -{32 * start};", ln)]
    assert len(found) == 1
    mutant = _mutate(ptx, found[0], f"-{32 * start};", f"-{32 * (start + 2)};")
    checks = _ptx_checks(ROUNDTRIP, mutant)
    assert [c.check for c in _errors_at(checks, found[0])] == ["warp-partition"]
    store = _worker_lines(_ptx_checks(ROUNDTRIP), "ttg.local_store")[0][0]
    at = [c for c in _errors_at(checks, store.line) if c.check == "smem-address"]
    assert at and all(c.data.get("partition") == 0 for c in at)       # the every-warp check, not warp 0's


# ----- a state table LLVM split into two stores (torchao's hadamard_amax, Triton 3.9, sm_100) -------
TORCHAO = Path(__file__).resolve().parent / "thirdparty" / "cuda100" / "torchao__hadamard_amax_kernel_64x64_w4_s2_ws"


def _torchao_checks(ptx: str | None = None):
    ttgir = TORCHAO.with_suffix(".ttgir").read_text()
    ptx = TORCHAO.with_suffix(".ptx").read_text() if ptx is None else ptx
    return audit_pair(ttgir, ptx, "torchao_ws").checks


def test_a_state_table_written_by_two_stores_is_read_whole():
    """The default partition writes the table as ``st.shared.v2.b32 [global_smem+49936], {0,
    50528513}`` and ``st.shared.b32 [global_smem+49944], 84018180``; warp w reads byte 49932 + w.
    Little-endian, 84018180 = 0x05020404 gives warps 12..15 the entries 4, 4, 2, 5: partition2
    (``num_warps(1)``) runs on warp 14 alone, which only the second store names."""
    assert (84018180).to_bytes(4, "little") == bytes([4, 4, 2, 5])
    checks = _torchao_checks()
    assert not [c for c in checks if c.severity == "error" and c.status != "proved"]
    part = [c for c in checks if c.check == "warp-partition"]
    assert part and {c.status for c in part} == {"proved"}
    assert any("partition2" in c.message and "[14]" in c.message for c in part), [c.message for c in part]


def test_the_second_table_store_sending_a_worker_warp_elsewhere_is_an_error():
    ptx = TORCHAO.with_suffix(".ptx").read_text()
    bad = int.from_bytes(bytes([4, 4, 3, 5]), "little")       # warp 14 sent to partition3's entry
    assert ptx.count("84018180;") == 1
    checks = _torchao_checks(ptx.replace("84018180;", f"{bad};"))
    line = next(k for k, t in enumerate(ptx.splitlines(), 1) if "84018180;" in t)
    errs = [c for c in checks if c.check == "warp-partition" and c.status != "proved"]
    # reported at the table's stores (the v2 store one line above this one, or this one)
    assert errs and {c.line for c in errs} <= {line - 1, line}, [(c.line, c.message) for c in errs]
