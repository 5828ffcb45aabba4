"""A Gluon author's first week (``tests/corpus/gluon_week``: hand-layout kernels, each with a
planted mistake, compiled by Triton 3.9 with ``week_generate.py``), audited against answers from
outside the audit:

* bank conflicts of every scalar ``ld.shared``/``st.shared`` of a hand layout pair: brute force in
  this file over the layouts Triton itself gives (``GluonOpBuilder.to_linear_layout`` of the
  kernel's register and shared layouts), 32 lanes of warp 0, the PTX ISA's 32 banks of 4 bytes;
* tcgen05 with an accumulator whose TMEM ``blockN`` is less than N: the instructions Triton
  issued (count and instruction-descriptor N decoded here, PTX ISA "Instruction descriptor") are
  the ones the layout object implies, and the audit proves each operand descriptor, while a PTX
  with two B descriptors swapped is an error.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from audited import audit_pair  # noqa: E402

CORPUS = Path(__file__).resolve().parent / "corpus" / "gluon_week"

# (stem, access, register layout, shared layout, shape, element bytes): the kernel's own layouts
# (week_kernels.py), as Python expressions of the Gluon API
SCALAR = [
    ("transpose_swizzled_good_sm90", "ld", "B([1, 1], [8, 4], [1, 4], [0, 1])", "S(8, 1, 8, [1, 0])", 64, 2),
    ("transpose_swizzled_bad_sm90", "ld", "B([1, 1], [8, 4], [1, 4], [0, 1])", "S(1, 1, 1, [1, 0])", 64, 2),
    ("transpose_swizzled_bad_sm80", "ld", "B([1, 1], [8, 4], [1, 4], [0, 1])", "S(1, 1, 1, [1, 0])", 64, 2),
    ("transpose_wrong_vec_bad_sm90", "ld", "B([1, 1], [8, 4], [1, 4], [0, 1])", "S(2, 1, 8, [1, 0])", 64, 2),
    ("shared_linear_transpose_bad_sm90", "ld", "B([1, 1], [32, 1], [1, 4], [0, 1])",
     "L([[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [1, 0], [2, 0], [4, 0], [8, 0], [16, 0]])", 32, 4),
    ("shared_linear_transpose_good_sm90", "ld", "B([1, 1], [32, 1], [1, 4], [0, 1])",
     "L([[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [1, 1], [2, 2], [4, 4], [8, 8], [16, 16]])", 32, 4),
    ("ws_producer_consumer_bad_sm90", "st", "B([8, 1], [8, 4], [1, 1], [0, 1])", "S(8, 1, 8, [1, 0])", 64, 2),
    ("colmajor_buffer_bad_sm90", "st", "B([8, 1], [8, 4], [1, 4], [0, 1])", "S(8, 1, 8, [1, 0])", 64, 2),
    ("wgmma_mn_major_good_sm90", "st", "B([1, 8], [2, 16], [4, 1], [1, 0])",
     "N(swizzle_byte_width=128, element_bitwidth=16, rank=2, transposed=True)", 64, 2),
]

ORACLE = r"""
import json, os, sys
from triton._C.libtriton import gluon_ir, ir
import triton.experimental.gluon.language as gl
B, S, L, N = gl.BlockedLayout, gl.SwizzledSharedLayout, gl.SharedLinearLayout, gl.NVMMASharedLayout
ctx = ir.context(); ir.load_dialects(ctx)
b = gluon_ir.GluonOpBuilder(ctx, "sm90")
out = []
for reg, smem, n in json.loads(sys.argv[1]):
    r = b.to_linear_layout(eval(reg)._to_ir(b), [n, n])
    s = eval(smem)
    s = s if isinstance(s, L) else b.to_linear_layout(s._to_ir(b), [n, n])
    out.append({"reg": r.reg_bases, "lane": r.lane_bases, "offset": s.offset_bases})
print(json.dumps(out))
sys.stdout.flush()
os._exit(0)
"""


def _xor(bases: list, index: int) -> tuple:
    v = [0] * len(bases[0])
    for bit, base in enumerate(bases):
        if index >> bit & 1:
            v = [a ^ c for a, c in zip(v, base)]
    return tuple(v)


def _wavefronts(t: dict, reg: int, nbytes: int) -> int:
    """Warp 0's scalar access of register ``reg``: each lane's element (register and lane bases),
    its byte (the inverse of the shared layout's offset bases), then the most distinct 4-byte words
    any one of the 32 banks holds (lanes reading one word share it)."""
    where = {_xor(t["offset"], o): o for o in range(1 << len(t["offset"]))}
    banks: dict[int, set] = {}
    for lane in range(32):
        elem = tuple(a ^ c for a, c in zip(_xor(t["reg"], reg), _xor(t["lane"], lane)))
        word = where[elem] * nbytes // 4
        banks.setdefault(word % 32, set()).add(word)
    return max(len(w) for w in banks.values())


@pytest.fixture(scope="module")
def triton_layouts() -> list[dict]:
    pytest.importorskip("triton.experimental.gluon")
    arg = json.dumps([[reg, smem, n] for _s, _a, reg, smem, n, _b in SCALAR])
    got = subprocess.run([sys.executable, "-c", ORACLE, arg], capture_output=True, text=True, timeout=300)
    return json.loads(got.stdout.strip().splitlines()[-1])


def _audit(stem: str, ptx: str | None = None):
    return audit_pair((CORPUS / f"{stem}.ttgir").read_text(), ptx or (CORPUS / f"{stem}.ptx").read_text(), stem)


@pytest.mark.parametrize("i", range(len(SCALAR)), ids=[s[0] for s in SCALAR])
def test_scalar_bank_counts_are_brute_forced_counts(i: int, triton_layouts: list[dict]) -> None:
    stem, access, _reg, _smem, _n, nbytes = SCALAR[i]
    t = triton_layouts[i]
    brute = {_wavefronts(t, r, nbytes) for r in range(1 << len(t["reg"]))}
    got = [c.data["wavefronts"] for c in _audit(stem).checks
           if c.check == "bank-conflicts" and c.data.get("source") == "ptx"
           and c.data.get("instruction") == f"{access}.shared.b{8 * nbytes}"]
    assert got, f"no scalar {access}.shared checked in {stem}"
    assert set(got) <= brute and max(got) == max(brute)


def _tcgen05(ptx: str) -> list[tuple[int, str, str, str]]:
    """Each ``tcgen05.mma``'s PTX line, and its A, B descriptor and instruction-descriptor operands."""
    out = []
    for n, line in enumerate(ptx.splitlines(), 1):
        m = re.search(r"tcgen05\.mma\.\S+\s+\[[^\]]*\],\s*(%\w+),\s*(%\w+),\s*(%\w+)", line)
        if m:
            out.append((n, *m.groups()))
    return out


def _idesc_n(ptx: str, reg: str) -> int:
    """N of a ``kind::f16`` instruction descriptor (PTX ISA: bits 17-22 hold N >> 3), the register
    set by one ``mov.b32 reg, imm``."""
    m = re.search(rf"mov\.b32\s+{re.escape(reg)},\s*(-?\d+|0[xX][0-9a-fA-F]+);", ptx)
    return ((int(m.group(1), 0) & 0xFFFFFFFF) >> 17 & 0x3F) * 8


def test_tcgen05_split_by_tmem_block_n_is_proved() -> None:
    # tcgen05_packed: A 128x64, B 64x64 f16, accumulator TensorMemoryLayout(block=(128, 32)):
    # K / 16 = 4 K-blocks, each issued as N / blockN = 2 instructions of N = 32
    ptx = (CORPUS / "tcgen05_packed_good_sm100.ptx").read_text()
    mmas = _tcgen05(ptx)
    assert len(mmas) == (64 // 16) * (64 // 32)
    assert {_idesc_n(ptx, m[3]) for m in mmas} == {32}
    checks = [c for c in _audit("tcgen05_packed_good_sm100").checks if c.op == "tcgen05.mma"]
    assert {c.check for c in checks} >= {"mma-descriptor", "mma-instruction"}
    assert [c for c in checks if c.status != "proved"] == []
    assert len([c for c in checks if c.check == "mma-descriptor"]) == 2 * len(mmas)


def test_tcgen05_split_swapped_b_descriptors_is_an_error() -> None:
    ptx = (CORPUS / "tcgen05_packed_good_sm100.ptx").read_text()
    (l0, _a0, b0, _i0), (l1, _a1, b1, _i1) = _tcgen05(ptx)[:2]
    assert b0 != b1                      # the two N blocks of K-block 0 read different B columns
    lines = ptx.splitlines()
    lines[l0 - 1] = lines[l0 - 1].replace(f"{b0},", f"{b1},")
    lines[l1 - 1] = lines[l1 - 1].replace(f"{b1},", f"{b0},")
    rep = _audit("tcgen05_packed_good_sm100", "\n".join(lines) + "\n")
    bad = [c for c in rep.checks if c.check == "mma-descriptor" and c.data.get("operand") == "B"
           and c.status == "counterexample"]
    assert {c.line for c in bad} == {l0, l1}


def test_a_kernel_with_nothing_to_check_says_so(capsys: pytest.CaptureFixture) -> None:
    from verilayout.cli.main import main
    plain = CORPUS / "copy2d_good_sm80.ttgir"          # a global copy: no shared memory, no MMA
    assert not re.search(r"ttg\.(local_|convert_layout|memdesc_)|ttng\.[a-z_]+ |tt\.(dot|trans|reshape) ", plain.read_text())
    assert main(["audit", "--no-cache", str(plain), str(CORPUS / "transpose_swizzled_good_sm90.ttgir")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "0 checks" in lines[0] and "nothing to check" in lines[0] and "global loads and stores" in lines[0]
    assert "nothing to check" not in lines[1]


def test_tcgen05_split_by_tmem_block_m_reads_each_m_block() -> None:
    # tcgen05_block_m (bad): M = 128 with TensorMemoryLayout(block=(64, 64)): 2 M blocks of 64 rows,
    # each issued for the 4 K-blocks (M = 64 in the instruction descriptor: bits 24-28 hold M >> 4)
    ptx = (CORPUS / "tcgen05_block_m_bad_sm100.ptx").read_text()
    mmas = _tcgen05(ptx)
    assert len(mmas) == (128 // 64) * (64 // 16)
    idesc = {int(re.search(rf"mov\.b32\s+{re.escape(m[3])},\s*(-?\d+);", ptx).group(1)) >> 24 & 0x1F for m in mmas}
    assert {16 * v for v in idesc} == {64}
    rep = _audit("tcgen05_block_m_bad_sm100")
    assert [c for c in rep.checks if c.op == "tcgen05.mma" and c.status != "proved"] == []
    # the second M block reading A's first 64 rows again (its four A descriptors replaced by the
    # first block's) must be an error on each of those instructions
    lines = ptx.splitlines()
    for (n, a, _b, _i), (_n0, a0, _b0, _i0) in zip(mmas[4:], mmas[:4]):
        lines[n - 1] = lines[n - 1].replace(f"{a},", f"{a0},")
    rep = _audit("tcgen05_block_m_bad_sm100", "\n".join(lines) + "\n")
    bad = {c.line for c in rep.checks if c.check == "mma-descriptor" and c.data.get("operand") == "A"
           and c.status == "counterexample"}
    assert bad == {m[0] for m in mmas[4:]}
