"""verilayout emit dpas: the emitted OpenCL kernel, replayed independently of the emitter.

The replay below reads only ``kernel.cl``: it runs every statement of the kernel body for every
sub-group (16 lanes at a time) with two hardware models written here from the public extension
texts, never from verilayout's tables:

* 2D block reads, ``SPV_INTEL_2d_block_io`` / ``cl_intel_subgroup_2d_block_io``: the block's rows
  are laid out row-major (VNNI: ``4 / element bytes`` rows packed per 32-bit value; transposed:
  the block transposed), each block starting at a 64-byte register, and the data is dealt to the
  work-items in units of the built-in's destination type, unit ``u`` to work-item ``u % 16`` at
  index ``u // 16``; elements outside the surface read as zero.
* the matrix-mad built-ins, ``cl_intel_subgroup_matrix_multiply_accumulate`` (sub-group 16):
  component ``m`` of ``a`` is row ``m``, work-item ``l`` holding 16 bits of it (K ``l * p ..``,
  lowest bits first); ``int`` ``j`` of work-item ``n``'s ``b`` holds K ``j * q ..`` of column ``n``;
  component ``m`` of ``acc`` / the result of work-item ``n`` is element ``(m, n)``.

Every line of the kernel body must be one the replay understands (an unknown line fails the
test), and the C it computes from random integer-valued A and B must equal ``A @ B`` exactly.
"""
from __future__ import annotations

import doctest
import importlib
import re
import shutil
import subprocess

import numpy as np
import pytest

from verilayout.emit import opencl_dpas
from verilayout.errors import LayoutError
from verilayout.frontends.shared_text import dpas_tile


def build_dpas_manifest(parent, *, m, n, k, dtype, **kw):
    """The door (``dpas_tile`` reads the text), then the emitter's manifest."""
    tile = dpas_tile(parent, m=m, n=n, k=k, dtype=dtype, max_volume=opencl_dpas.DPAS_MAX_VOLUME)
    return opencl_dpas.build_dpas_manifest(tile, **kw)


def emit_dpas(parent, *, m, n, k, dtype, **kw):
    """The door (``dpas_tile`` reads the text), then the emitter."""
    tile = dpas_tile(parent, m=m, n=n, k=k, dtype=dtype, max_volume=opencl_dpas.DPAS_MAX_VOLUME)
    return opencl_dpas.emit_dpas(tile, **kw)


def _parent(rc=8, ops=2, warps=(2, 2), reps=(2, 1)):
    return (f"#ttig.dpas<{{repeatCount = {rc}, systolicDepth = 8, executionSize = 16, "
            f"opsPerChan = {ops}, threadsPerWarp = 16, warpsPerCTA = [{warps[0]}, {warps[1]}], "
            f"repCluster = [{reps[0]}, {reps[1]}]}}>")


# seed 002's parent (warpsPerCTA [8, 4], repCluster [4, 2]), verbatim but for the printed shapes
SEED = _parent(8, 2, (8, 4), (4, 2))

BITS = {"f16": 16, "bf16": 16, "i8": 8, "u8": 8}
DEST = {"ushort": (2, 0xFFFF), "uint": (4, 0xFFFFFFFF), "uchar": (1, 0xFF)}


# ----- the hardware models (from the extension texts) -------------------------------------------

def block_read(mem, width, height, pitch, x, y, eb, rows, cols, blocks, mode, dest_bytes):
    """Per work-item destination arrays of one 2D block read: ``out[lane][index]``."""
    def elem(r, c):                                   # element (r, c) of the surface, or 0
        if not (0 <= r < height and 0 <= c and (c + 1) * eb <= width):
            return 0
        off = r * pitch + c * eb
        return int.from_bytes(bytes(mem[off:off + eb]), "little")
    units = []                                        # (unit index, value)
    start = 0
    for b in range(blocks):
        x0 = x + b * cols
        if mode == "plain":
            per = dest_bytes // eb                    # elements per unit
            wpad = 1 << (cols - 1).bit_length()
            stream = []
            for r in range(rows):
                row = [elem(y + r, x0 + c) if c < cols else 0 for c in range(wpad)]
                for u in range(0, wpad, per):
                    stream.append(sum(v << (8 * eb * i) for i, v in enumerate(row[u:u + per])))
        elif mode == "transform":                     # VNNI: g rows per 32-bit unit
            g = 4 // eb
            stream = [sum(elem(y + g * i + j, x0 + c) << (8 * eb * j) for j in range(g))
                      for i in range(-(-rows // g)) for c in range(cols)]
        else:                                         # transposed: block^T, row-major
            hpad = 1 << (rows - 1).bit_length()
            stream = [elem(y + r, x0 + c) if r < rows else 0 for c in range(cols)
                      for r in range(hpad)]
        units += [(start + i, v) for i, v in enumerate(stream)]
        nbytes = -(-len(stream) * dest_bytes // 64) * 64
        start += nbytes // dest_bytes
    n = -(-start // 16)
    out = np.zeros((16, n), dtype=np.int64)
    for u, v in units:
        out[u % 16, u // 16] = v
    return out


def decode(bits, dtype):
    bits = np.asarray(bits, dtype=np.int64)
    if dtype == "f16":
        return bits.astype(np.uint16).view(np.float16).astype(np.float64)
    if dtype == "bf16":
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if dtype == "i8":
        return bits.astype(np.uint8).view(np.int8).astype(np.float64)
    return bits.astype(np.float64)


def matrix_mad(a, b, acc, dtype):
    """``a[m][lane]`` 16-bit, ``b[j][lane]`` 32-bit, ``acc[m][lane]``: the extension's product."""
    eb = BITS[dtype]
    p, q = 16 // eb, 32 // eb
    mask = (1 << eb) - 1
    M = len(a)
    a = np.array([np.asarray(x, dtype=np.int64) for x in a])            # [M, lane]
    b = np.array([np.asarray(x, dtype=np.int64) for x in b])            # [8, lane]
    # A[m, lane * p + part] and B[j * q + part, lane]
    A = decode(np.stack([(a >> (eb * part)) & mask for part in range(p)], axis=-1), dtype)
    A = A.reshape(M, 16 * p)
    B = decode(np.stack([(b >> (eb * part)) & mask for part in range(q)], axis=1), dtype)
    B = B.reshape(8 * q, 16)
    with np.errstate(invalid="ignore"):                # planted bugs may make NaN bit patterns
        return [np.asarray(acc[m], dtype=np.float64) + A[m] @ B for m in range(M)]


# ----- the replay ---------------------------------------------------------------------------------

_EXPR = re.compile(r"^[\w\s()&^*>]+$")


def _split_args(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    return out + [cur.strip()]


def replay(src, mem, dtype, m, n):
    consts = {k: [int(v) for v in vals.split(",")] for k, vals in
              re.findall(r"__constant int (\w+)\[\d+\] = \{([^}]*)\};", src)}
    defines = {k: int(v) for k, v in re.findall(r"#define (\w+) (\d+)", src)}
    funcs = {}
    for name, expr in re.findall(r"^int (\w+)\(int r, int lane, int sg\) \{ return (.*); \}$", src,
                                 re.M):
        assert _EXPR.match(expr), expr
        funcs[name] = eval(f"lambda r, lane, sg: {expr}")          # C and Python agree on
    sub_groups = int(re.search(r"reqd_work_group_size\((\d+),", src).group(1)) // 16  # >> & ^ *
    body = src.split("__kernel void vl_dpas_gemm(", 1)[1].split("\n", 1)[1].rsplit("\n}", 1)[0]
    lines = [ln.strip() for ln in body.splitlines() if ln.strip()]
    C = np.full(m * n, np.nan)
    written = np.zeros(m * n, dtype=np.int64)
    for sg in range(sub_groups):
        env, types = {"sg": sg}, {}
        lane = np.arange(16)
        i = 0

        def val(expr):
            e = re.sub(r"\((?:ushort|uint|uchar)\)", "", expr)
            return eval(e, {}, {k: v for k, v in env.items()})

        while i < len(lines):
            ln = lines[i]
            i += 1
            ln = re.sub(r"\s*//.*$", "", ln)
            if ln in ("", "}", "{"):
                continue
            if ln == "const int sg = get_sub_group_id();" or \
                    ln == "const int lane = get_sub_group_local_id();":
                continue
            mm = re.fullmatch(r"const int (\w+) = (\w+)\[sg\], (\w+) = (\w+)\[sg\];", ln)
            if mm:
                env[mm[1]] = consts[mm[2]][sg]
                env[mm[3]] = consts[mm[4]][sg]
                continue
            mm = re.fullmatch(r"private (\w+) (\w+)\[(\w+)\];", ln)
            if mm:
                size = defines.get(mm[3]) or int(mm[3])
                env[mm[2]] = [np.zeros(16, dtype=np.int64) for _ in range(size)]
                types[mm[2]] = mm[1]
                continue
            mm = re.fullmatch(r"intel_sub_group_2d_block_read_(transform_|transpose_)?(\d+)b_(\d+)r(\d+)x"
                              r"(\d+)c\((\w+), (\d+), (\d+), (\d+), \(int2\)\((\d+) \+ (\w+), (\d+) \+ "
                              r"(\w+)\), (\w+)\);", ln)
            if mm:
                mode = (mm[1] or "plain_").rstrip("_")
                dest = mm[14]
                out = block_read(mem[mm[6]], int(mm[7]), int(mm[8]), int(mm[9]),
                                 int(mm[10]) + env[mm[11]], int(mm[12]) + env[mm[13]],
                                 int(mm[2]) // 8, int(mm[3]), int(mm[4]), int(mm[5]), mode,
                                 DEST[types[dest]][0])
                for j in range(len(env[dest])):
                    env[dest][j] = out[:, j].copy()
                continue
            mm = re.fullmatch(r"(\w+)\[(\d+)\] = (?:\((\w+)\)\()?(\w+)\[(\d+)\](?: >> (\d+)\))?;", ln)
            if mm and mm[4] != "d":
                v = env[mm[4]][int(mm[5])] >> int(mm[6] or 0)
                env[mm[1]][int(mm[2])] = v & DEST[types[mm[1]]][1]
                continue
            if ln == "switch (lane) {":
                while lines[i] != "}":
                    cm = re.fullmatch(r"case (\d+): (\w+)\[(\d+)\] = (?:\((\w+)\)\()?(\w+)\[(\d+)\]"
                                      r"(?: >> (\d+)\))?; break;", lines[i])
                    assert cm, f"unknown line in a switch: {lines[i]!r}"
                    ln_ = int(cm[1])
                    v = env[cm[5]][int(cm[6])][ln_] >> int(cm[7] or 0)
                    env[cm[2]][int(cm[3])][ln_] = v & DEST[types[cm[2]]][1]
                    i += 1
                i += 1
                continue
            if ln == "for (int r = 0; r < VL_C_REGISTERS; ++r) acc[r] = 0;":
                for r in range(len(env["acc"])):
                    env["acc"][r] = np.zeros(16)
                continue
            mm = re.fullmatch(r"(?:float|int)(\d?) d = (intel_sub_group_\w+_matrix_mad_k\d+)\((.*)\);", ln)
            if mm:
                a_arg, b_arg, c_arg = _split_args(mm[3])
                am = re.fullmatch(r"as_u?short\d?\(\(u?short\d?\)\((.*)\)\)", a_arg)
                bm = re.fullmatch(r"as_u?int8\(\(uint8\)\((.*)\)\)", b_arg)
                cm = re.fullmatch(r"(?:\((?:float|int)\d\)\((.*)\)|(acc\[\d+\]))", c_arg)
                assert am and bm and cm, ln
                a = [val(x) & 0xFFFF for x in _split_args(am[1])]
                b = [val(x) & 0xFFFFFFFF for x in _split_args(bm[1])]
                acc = [val(x) for x in (_split_args(cm[1]) if cm[1] else [cm[2]])]
                assert len(b) == 8 and len(a) == len(acc) == int(mm[1] or 1)
                assert dtype.replace("s8", "i8") in mm[2]
                env["d"] = matrix_mad(a, b, acc, dtype)
                continue
            if re.fullmatch(r"(acc\[\d+\] = d(\.s\d)?; ?)+", ln):
                for r, comp in re.findall(r"acc\[(\d+)\] = d(?:\.s(\d))?;", ln):
                    env["acc"][int(r)] = env["d"][int(comp or 0)]
                continue
            if ln == "for (int r = 0; r < VL_C_REGISTERS; ++r)":
                st = lines[i]
                i += 1
                assert st == "c[vl_c_row(r, lane, sg) * VL_N + vl_c_col(r, lane, sg)] = acc[r];", st
                for r in range(len(env["acc"])):
                    idx = funcs["vl_c_row"](r, lane, sg) * defines["VL_N"] + \
                        funcs["vl_c_col"](r, lane, sg)
                    assert ((0 <= idx) & (idx < m * n)).all(), f"store outside C: {idx}"
                    C[idx] = env["acc"][r]
                    np.add.at(written, idx, 1)
                continue
            raise AssertionError(f"the replay does not understand the kernel line {ln!r}")
    return C.reshape(m, n), written.reshape(m, n)


def surfaces(src, name):
    """The (width, height, pitch) the kernel's block reads of operand ``name`` name."""
    s = set(re.findall(rf"\({name}, (\d+), (\d+), (\d+), \(int2\)", src))
    assert len(s) == 1, s
    return tuple(int(v) for v in s.pop())


def encode(vals, dtype):
    if dtype == "f16":
        return vals.astype(np.float16).view(np.uint16).astype(np.uint64)
    if dtype == "bf16":
        return (vals.astype(np.float32).view(np.uint32) >> 16).astype(np.uint64)
    return vals.astype(np.int8).view(np.uint8).astype(np.uint64)


def store(vals, dtype, surface):
    width, height, pitch = surface
    eb = BITS[dtype] // 8
    rows, cols = vals.shape
    assert cols * eb <= width and rows <= height, (vals.shape, surface)
    mem = np.zeros(height * pitch, dtype=np.uint8)
    bits = encode(vals, dtype)
    for r in range(rows):
        for c in range(cols):
            off = r * pitch + c * eb
            mem[off:off + eb] = np.frombuffer(int(bits[r, c]).to_bytes(eb, "little"), np.uint8)
    return mem


def run(src, dtype, m, n, k, transpose_b, seed=0):
    rng = np.random.default_rng(seed)
    lo, hi = (0, 9) if dtype == "u8" else (-4, 5)
    A = rng.integers(lo, hi, size=(m, k)).astype(np.float64)
    B = rng.integers(lo, hi, size=(k, n)).astype(np.float64)
    mem = {"a": store(A, dtype, surfaces(src, "a")),
           "b": store(B.T.copy() if transpose_b else B, dtype, surfaces(src, "b"))}
    C, written = replay(src, mem, dtype, m, n)
    return A, B, C, written


CASES = [  # (id, parent, m, n, k, dtype, transpose_b)
    ("seed002-f16", SEED, 256, 256, 32, "f16", False),
    ("seed002-f16-BT", SEED, 256, 256, 32, "f16", True),
    ("bf16-2x2", _parent(8, 2, (2, 2), (2, 1)), 32, 32, 64, "bf16", False),
    ("i8-2x1", _parent(8, 4, (2, 1), (1, 2)), 16, 32, 64, "i8", False),
    ("f16-M4", _parent(4, 2, (2, 2), (1, 1)), 8, 32, 32, "f16", False),
    ("f16-M1", _parent(1, 2, (1, 1), (1, 1)), 1, 16, 16, "f16", False),
    ("bf16-4x1-rc1x4", _parent(8, 2, (4, 1), (1, 4)), 32, 64, 64, "bf16", False),
    ("bf16-BT", _parent(8, 2, (2, 2), (2, 2)), 32, 64, 32, "bf16", True),
    ("u8-2x1", _parent(8, 4, (2, 1), (1, 2)), 16, 32, 64, "u8", False),
]


@pytest.fixture(scope="module")
def kernels():
    return {c[0]: emit_dpas(c[1], m=c[2], n=c[3], k=c[4], dtype=c[5], transpose_b=c[6])
            for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_the_replayed_kernel_computes_a_times_b(kernels, case):
    name, _, m, n, k, dtype, tr = case
    src = kernels[name].files["kernel.cl"]
    A, B, C, written = run(src, dtype, m, n, k, tr)
    assert (written == 1).all(), "each element of C is stored exactly once"
    np.testing.assert_array_equal(C, A @ B)


def test_the_seed_kernel_uses_the_seed_loads_and_one_call_per_tile(kernels):
    src = kernels["seed002-f16"].files["kernel.cl"]
    # seed 002: A is one 16b 32r16x2c load, B two VNNI 32r16x2c loads (128 elements apart)
    assert src.count("intel_sub_group_2d_block_read_16b_32r16x2c(a,") == 1
    assert src.count("intel_sub_group_2d_block_read_transform_16b_32r16x2c(b,") == 2
    # a sub-group's C is 32x64: (32/8) x (64/16) tiles x (32/16) K steps = 32 calls
    assert src.count("= intel_sub_group_f16_f16_matrix_mad_k16(") == 32
    assert all(o["status"] == "proved" for o in kernels["seed002-f16"].manifest["obligations"])


# planted bugs: each must make the replay disagree with A @ B
def _swap_a_registers(src):
    line = next(ln for ln in src.splitlines() if "matrix_mad" in ln and "= intel_" in ln)
    regs = re.findall(r"a_op\[(\d+)\]", line)
    bad = line.replace(f"a_op[{regs[0]}]", "@@").replace(f"a_op[{regs[1]}]", f"a_op[{regs[0]}]")
    return src.replace(line, bad.replace("@@", f"a_op[{regs[1]}]"))


def _b_pack_shift(src):
    return src.replace("<< 16), ((uint)b_op", "<< 0), ((uint)b_op", 1)


def _c_col_basis(src):
    return re.sub(r"(int vl_c_col\(int r, int lane, int sg\) \{ return .*?\* )1\)", r"\g<1>3)", src,
                  count=1)


def _b_sub_group_offset(src):
    return re.sub(r"(VL_B_DX\[\d+\] = \{0, )(\d+)", lambda mm: mm[1] + str(int(mm[2]) + 16), src)


def _drop_a_call(src):
    lines = src.splitlines()
    i = next(j for j, ln in enumerate(lines) if "// DPAS 1:" in ln)
    return "\n".join(lines[:i] + lines[i + 4:])


def _load_row_off_by_one(src):
    return src.replace("(int2)(0 + adx, 0 + ady), a_ld0)", "(int2)(0 + adx, 1 + ady), a_ld0)")


@pytest.mark.parametrize("plant", [_swap_a_registers, _b_pack_shift, _c_col_basis,
                                   _b_sub_group_offset, _drop_a_call, _load_row_off_by_one])
def test_planted_kernel_bugs_are_caught_by_the_replay(kernels, plant):
    _, _, m, n, k, dtype, tr = CASES[2]
    src = kernels[CASES[2][0]].files["kernel.cl"]
    bad = plant(src)
    assert bad != src, "the plant changed nothing"
    A, B, C, written = run(bad, dtype, m, n, k, tr)
    assert not ((written == 1).all() and np.array_equal(C, A @ B))


@pytest.mark.parametrize("parent,shape,dtype,why", [
    # executionSize 8: N = 8, but the sub-group-16 built-ins multiply by 16 columns
    (_parent(8, 2, (1, 1), (1, 1)).replace("executionSize = 16", "executionSize = 8"),
     (8, 8, 16), "f16", "multiplies 8x16 by 16x16"),
    (_parent(8, 2, (1, 1), (1, 1)).replace("threadsPerWarp = 16", "threadsPerWarp = 32"),
     (8, 16, 16), "f16", "sub-groups of 16"),
    # 2x2 sub-groups over an 8-row C: two sub-groups would hold the same elements
    (_parent(8, 2, (2, 2), (1, 1)), (8, 32, 16), "f16", "repeats elements"),
    (_parent(8, 4, (1, 1), (1, 1)), (8, 16, 32), "f16", "opsPerChan = 4 but f16 needs 2"),
])
def test_layouts_the_built_ins_cannot_serve_are_refused(parent, shape, dtype, why):
    m, n, k = shape
    with pytest.raises(LayoutError, match=why):
        build_dpas_manifest(parent, m=m, n=n, k=k, dtype=dtype)


def test_tf32_and_mismatched_layouts_are_refused():
    with pytest.raises(LayoutError, match="no built-in for 'tf32'"):
        build_dpas_manifest(_parent(8, 1, (1, 1), (1, 1)), m=8, n=16, k=8, dtype="tf32")
    with pytest.raises(LayoutError, match="positive integer"):
        build_dpas_manifest(SEED, m=0, n=16, k=16, dtype="f16")
    with pytest.raises(LayoutError, match="dpas"):
        build_dpas_manifest("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], "
                            "warpsPerCTA = [1, 1], order = [1, 0]}>", m=8, n=16, k=16, dtype="f16")


def test_docstring_examples_run():
    result = doctest.testmod(importlib.import_module("verilayout.emit.opencl_dpas"))
    assert result.attempted > 0 and result.failed == 0


CLANG = next((c for c in ("clang", "clang-18", "clang-17", "clang-16", "clang-15", "clang-14")
              if shutil.which(c)), None)
SPIRV = next((c for c in ("llvm-spirv", "llvm-spirv-18", "llvm-spirv-15", "llvm-spirv-14")
              if shutil.which(c)), None)
LLVM_DIS = next((c for c in ("llvm-dis", "llvm-dis-14", "/usr/lib/llvm-14/bin/llvm-dis")
                 if shutil.which(c)), None)

# cl_intel_subgroup_matrix_multiply_accumulate, sub-group 16: (a, b, acc) of each overload,
# mangled as the Itanium ABI writes OpenCL vectors (Dv<n>_<type>; a repeated type is a
# substitution: S_ the first vector type seen, S0_ the second)
MANGLED = {("f16", 8): "_Z38intel_sub_group_f16_f16_matrix_mad_k16Dv8_sDv8_iDv8_f",
           ("bf16", 8): "_Z40intel_sub_group_bf16_bf16_matrix_mad_k16Dv8_sDv8_iDv8_f",
           ("i8", 8): "_Z36intel_sub_group_i8_i8_matrix_mad_k32Dv8_sDv8_iS0_",   # S0_: int8 again
           ("f16", 4): "_Z38intel_sub_group_f16_f16_matrix_mad_k16Dv4_sDv8_iDv4_f",
           ("f16", 1): "_Z38intel_sub_group_f16_f16_matrix_mad_k16sDv8_if",
           ("u8", 8): "_Z36intel_sub_group_u8_u8_matrix_mad_k32Dv8_tDv8_jDv8_i"}


@pytest.mark.skipif(CLANG is None or LLVM_DIS is None,
                    reason="(optional tool) clang and llvm-dis (OpenCL C to SPIR) are not installed")
@pytest.mark.parametrize("case", [c for c in CASES if c[0] != "seed002-f16-BT"],
                         ids=[c[0] for c in CASES if c[0] != "seed002-f16-BT"])
def test_the_kernel_compiles_to_spir_with_the_extensions_overloads(kernels, case, tmp_path):
    name, _, _, _, _, dtype, _ = case
    path = tmp_path / "kernel.cl"
    path.write_text(kernels[name].files["kernel.cl"])
    bc = tmp_path / "kernel.bc"
    r = subprocess.run([CLANG, "-x", "cl", "-cl-std=CL2.0", "-Xclang", "-finclude-default-header",
                        "-target", "spir64", "-DVL_DECLARE_BUILTINS", "-c", "-emit-llvm",
                        str(path), "-o", str(bc)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    ir = subprocess.run([LLVM_DIS, str(bc), "-o", "-"], capture_output=True, text=True).stdout
    calls = set(re.findall(r"call spir_func [^@]*@(_Z\d+intel_sub_group_\w+matrix_mad\w*)\(", ir))
    m_rows = kernels[name].manifest["mad"]["m"]
    assert calls == {MANGLED[(dtype, m_rows)]}
    if SPIRV:
        spv = subprocess.run([SPIRV, str(bc), "-o", str(tmp_path / "kernel.spv")],
                             capture_output=True, text=True)
        assert spv.returncode == 0, spv.stderr
