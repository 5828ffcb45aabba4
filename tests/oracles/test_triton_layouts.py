"""Differential test: verilayout's Triton front-end against the Triton 3.9 wheel.

Random layouts of every kind the front-end reads (fixed seed) are written as MLIR
text; the wheel parses that text, converts it (``to_linear_layout``) and prints
its hardware view (in a subprocess: an invalid layout aborts it). verilayout parses
the text Triton printed back and must give the same bases, basis for basis, and the
same hardware-view text, byte for byte. Where Triton rejects a layout (parse or
verifier error, or an abort), verilayout must raise ``LayoutError``: never crash,
never answer.

The old ``CTAsPerCGA/CTASplitNum/CTAOrder`` spelling is not accepted by the 3.9
wheel; for it the oracle builds the same layout from the wheel's own
``make_cga_layout`` of the three lists, and verilayout reads the old text.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

import pytest

pytest.importorskip("triton")
from tests.oracles.triton_oracle import run_oracle  # noqa: E402

from verilayout.errors import LayoutError  # noqa: E402
from verilayout.frontends import triton as tfe  # noqa: E402

pytestmark = pytest.mark.oracle

SEED = 20240613
CASES_PER_KIND = 40



@dataclass
class Case:
    kind: str
    text: str                 # what verilayout reads (attribute text)
    shape: list
    memdesc: bool = False
    oracle: dict = field(default_factory=dict)  # the oracle request (default: mlir_attr of text)


# ---------------------------------------------------------------------------
# text in the order Triton prints it
# ---------------------------------------------------------------------------

def lst(v):
    return "[" + ", ".join(lst(x) if isinstance(x, list) else str(x) for x in v) + "]"


def cga_text(cga):
    return f", CGALayout = {lst(cga)}" if cga else ""


def blocked_text(spt, tpw, wpc, order, cga=None, extra=""):
    return (f"#ttg.blocked<{{sizePerThread = {lst(spt)}, threadsPerWarp = {lst(tpw)}, "
            f"warpsPerCTA = {lst(wpc)}, order = {lst(order)}{cga_text(cga)}{extra}}}>")


def b(flag):
    return "true" if flag else "false"


# ---------------------------------------------------------------------------
# random parameters
# ---------------------------------------------------------------------------

def p2(rng, lo, hi):
    return 1 << rng.randint(lo, hi)


def split_bits(rng, nbits, rank):
    out = [1] * rank
    for _ in range(nbits):
        out[rng.randrange(rank)] *= 2
    return out


def perm(rng, rank):
    o = list(range(rank))
    rng.shuffle(o)
    return o


def rand_cga(rng, rank, max_bits=3):
    """A valid Triton 3.9 CGA: distinct single bits, some zero (broadcast) bases."""
    nxt = [1] * rank
    out = []
    for _ in range(rng.randint(1, max_bits)):
        if rng.random() < 0.25:
            out.append([0] * rank)
        else:
            d = rng.randrange(rank)
            v = [0] * rank
            v[d] = nxt[d]
            nxt[d] *= 2
            out.append(v)
    return out


def rand_shape(rng, rank, lo=0, hi=6, max_total_bits=12):
    while True:
        shape = [p2(rng, lo, hi) for _ in range(rank)]
        if sum(s.bit_length() - 1 for s in shape) <= max_total_bits:
            return shape


def blocked_params(rng, rank):
    spt = [p2(rng, 0, 2) for _ in range(rank)]
    tpw = split_bits(rng, 5, rank)
    wpc = split_bits(rng, rng.randint(0, 3), rank)
    order = perm(rng, rank)
    cga = rand_cga(rng, rank) if rng.random() < 0.4 else None
    return spt, tpw, wpc, order, cga


def gen_blocked(rng):
    rank = rng.randint(1, 3)
    spt, tpw, wpc, order, cga = blocked_params(rng, rank)
    r = rng.random()
    extra = ""
    if r < 0.05:
        spt[rng.randrange(rank)] = 3            # not a power of two
    elif r < 0.08:
        cga = [[3] + [0] * (rank - 1)]           # not a permutation matrix
    elif r < 0.11:
        extra = ", bogus = 1"                    # unknown key
    elif r < 0.13:
        order = [0] * rank if rank > 1 else [1]  # not a permutation
    shape = rand_shape(rng, rank)
    if rng.random() < 0.04:
        shape = shape + [4]                      # rank mismatch
    return Case("blocked", blocked_text(spt, tpw, wpc, order, cga, extra), shape)


def gen_blocked_old_cga(rng):
    rank = rng.randint(1, 3)
    spt, tpw, wpc, order, _ = blocked_params(rng, rank)
    ctas = [p2(rng, 0, 2) for _ in range(rank)]
    split = [c >> rng.randint(0, c.bit_length() - 1) for c in ctas]
    cta_order = perm(rng, rank)
    shape = rand_shape(rng, rank, lo=1)
    text = (f"#ttg.blocked<{{sizePerThread = {lst(spt)}, threadsPerWarp = {lst(tpw)}, "
            f"warpsPerCTA = {lst(wpc)}, order = {lst(order)}, CTAsPerCGA = {lst(ctas)}, "
            f"CTASplitNum = {lst(split)}, CTAOrder = {lst(cta_order)}}}>")
    req = {"kind": "blocked", "size_per_thread": spt, "threads_per_warp": tpw,
           "warps_per_cta": wpc, "order": order, "ctas_per_cga": ctas, "cta_split_num": split,
           "cta_order": cta_order, "shape": shape}
    return Case("blocked_old_cga", text, shape, oracle=req)


def linear_bases(rng, rank):
    """A distributed #ttg.linear: each output bit owned by one in dim, plus broadcasts."""
    sizes = [p2(rng, 0, 4) for _ in range(rank)]
    bits = [(d, 1 << k) for d in range(rank) for k in range(sizes[d].bit_length() - 1)]
    bases = {k: [] for k in ("register", "lane", "warp", "block")}
    for d, v in bits:
        basis = [0] * rank
        basis[d] = v
        bases[rng.choice(["register", "register", "lane", "lane", "warp", "block"])].append(basis)
    for k in bases:
        if rng.random() < 0.3:
            bases[k].append([0] * rank)
        rng.shuffle(bases[k])
    if not any(bases.values()):
        bases["lane"].append([0] * rank)
    return bases, sizes


def linear_text(bases):
    return ("#ttg.linear<{" + ", ".join(f"{k} = {lst(v)}" for k, v in bases.items()) + "}>")


def gen_linear(rng):
    rank = rng.randint(1, 3)
    bases, sizes = linear_bases(rng, rank)
    shape = [max(1, s * rng.choice([1, 1, 2, 4]) // rng.choice([1, 1, 2])) for s in sizes]
    if rng.random() < 0.08 and rank > 1:        # moves in two dims: Triton rejects
        bases["lane"].append([1] * rank)
    return Case("linear", linear_text(bases), shape)


def gen_slice(rng):
    prank = rng.randint(2, 3)
    r = rng.random()
    if r < 0.25:
        bases, sizes = linear_bases(rng, prank)
        parent = linear_text(bases)
    elif r < 0.35:
        parent, _ = nvidia_mma_text(rng, prank)   # needs helper B's converters
    elif r < 0.45:
        parent = amd_mfma_text(rng, prank)
    else:
        spt, tpw, wpc, order, cga = blocked_params(rng, prank)
        parent = blocked_text(spt, tpw, wpc, order, cga)
    dim = rng.randrange(prank)
    if rng.random() < 0.05:
        dim = prank                              # out of range
    shape = rand_shape(rng, prank - 1)
    return Case("slice", f"#ttg.slice<{{dim = {dim}, parent = {parent}}}>", shape)


def gen_swizzled(rng):
    rank = rng.randint(1, 3)
    vec, pp, mp = p2(rng, 0, 3), p2(rng, 0, 3), p2(rng, 0, 3)
    order = perm(rng, rank)
    cga = rand_cga(rng, rank) if rng.random() < 0.3 else None
    shape = rand_shape(rng, rank, lo=1 if rank == 1 else 0, hi=6, max_total_bits=11)
    text = (f"#ttg.swizzled_shared<{{vec = {vec}, perPhase = {pp}, maxPhase = {mp}, "
            f"order = {lst(order)}{cga_text(cga)}}}>")
    return Case("swizzled_shared", text, shape, memdesc=True)


def gen_nvmma_shared(rng):
    rank = rng.choice([1, 2, 2, 2, 3])
    swz = rng.choice([0, 32, 64, 128])
    bits = rng.choice([8, 16, 32])
    # Known gap (verilayout raises LayoutError): transposed, unswizzled, rank > 2.
    transposed = rng.random() < 0.3 and not (swz == 0 and rank > 2)
    fp4 = swz == 128 and bits == 8 and rng.random() < 0.3
    # The attribute's rank is its CGA's (2 without one): rank 3 needs a CGA.
    cga = rand_cga(rng, rank, 2) if rank != 2 or rng.random() < 0.25 else None
    if rng.random() < 0.15:
        shape = rand_shape(rng, rank, lo=2, hi=7, max_total_bits=13)   # often too small
    else:
        atom = 8 * swz // bits if swz else 1
        contig = 0 if transposed else rank - 1
        shape = [8 * p2(rng, 0, 2) for _ in range(rank)]
        shape[contig] = max(atom * p2(rng, 0, 1), 4) // (2 if fp4 else 1)
        if cga:
            shape = [s * 4 for s in shape]
    if rng.random() < 0.05:
        bits = 12                                 # not an element width
    text = (f"#ttg.nvmma_shared<{{swizzlingByteWidth = {swz}, transposed = {b(transposed)}, "
            f"elementBitWidth = {bits}{', fp4Padded = true' if fp4 else ''}{cga_text(cga)}}}>")
    return Case("nvmma_shared", text, shape, memdesc=True)


# ----- helper B's kinds (converted by verilayout.frontends.triton.mma) -----

def nvidia_mma_text(rng, rank):
    v3 = rank == 2 and rng.random() < 0.5
    if v3:
        wpc = [4 * p2(rng, 0, 1), p2(rng, 0, 1)]
        instr = [16, 8 * p2(rng, 0, 4), 16]
    else:
        wpc = split_bits(rng, rng.randint(0, 3), rank)
        instr = [16, 8] if rank == 2 else [1, 16, 8]
    cga = rand_cga(rng, rank, 2) if rng.random() < 0.2 else None
    return (f"#ttg.nvidia_mma<{{versionMajor = {3 if v3 else 2}, versionMinor = 0, "
            f"warpsPerCTA = {lst(wpc)}{cga_text(cga)}, instrShape = {lst(instr)}}}>"), v3


def gen_nvidia_mma(rng):
    rank = rng.choice([2, 2, 3])
    text, _ = nvidia_mma_text(rng, rank)
    return Case("nvidia_mma", text, rand_shape(rng, rank, lo=3, hi=7, max_total_bits=13))


def amd_mfma_text(rng, rank):
    version = rng.randint(1, 4)
    mn = rng.choice([[32, 32], [16, 16], [32, 32], [16, 16], [64, 4], [4, 64]])
    k = rng.choice([4, 8, 16]) if mn[0] != mn[1] else rng.choice([8, 16])
    transposed = rng.random() < 0.5 or mn == [64, 4]
    wpc = split_bits(rng, rng.randint(0, 3), rank)
    parts = [f"version = {version}", f"warpsPerCTA = {lst(wpc)}",
             f"instrShape = {lst(mn + [k])}", f"isTransposed = {b(transposed)}"]
    if rng.random() < 0.15:
        parts.append(f"CGALayout = {lst(rand_cga(rng, rank, 1))}")
    if rng.random() < 0.25:
        parts.append(f"tilesPerWarp = {lst([p2(rng, 0, 1) for _ in range(rank)])}")
    if rng.random() < 0.15:
        parts.append("elementBitWidth = 64")
    return "#ttg.amd_mfma<{" + ", ".join(parts) + "}>"


def gen_amd_mfma(rng):
    rank = rng.choice([2, 2, 3])
    return Case("amd_mfma", amd_mfma_text(rng, rank), rand_shape(rng, rank, lo=2, hi=7,
                                                                  max_total_bits=13))


def amd_wmma_text(rng, rank):
    version = rng.randint(1, 3)
    nbits = rng.randint(0, 2)
    warp = []
    nxt = [1] * rank
    for _ in range(nbits):
        d = rng.randrange(rank)
        v = [0] * rank
        v[d] = nxt[d]
        nxt[d] *= 2
        warp.append(v)
    cta = f"warp = {lst(warp)}"
    if rng.random() < 0.3:
        d = rng.randrange(rank)
        v = [0] * rank
        v[d] = nxt[d]
        cta = f"register = {lst([v])}, " + cta
    parts = [f"version = {version}", f"isTranspose = {b(rng.random() < 0.5)}",
             f"ctaLayout = {{{cta}}}"]
    k = 32 if version == 3 else 16
    if rng.random() < 0.1:
        k = 48 - k                                # the other K: invalid for this version
    if version == 3 or k != 16 or rng.random() < 0.3:
        parts.append(f"instrShape = {lst([16, 16, k])}")
    return "#ttg.amd_wmma<{" + ", ".join(parts) + "}>"


def gen_amd_wmma(rng):
    rank = rng.choice([2, 2, 2, 3])
    return Case("amd_wmma", amd_wmma_text(rng, rank), rand_shape(rng, rank, lo=2, hi=6,
                                                                  max_total_bits=12))


def gen_dot_op(rng):
    rank = rng.choice([2, 2, 3])
    r = rng.random()
    op = rng.randint(0, 1)
    if r < 0.45:
        parent, _ = nvidia_mma_text(rng, rank)
        kw = rng.choice([1, 2, 4, 8])
    elif r < 0.75:
        parent = amd_mfma_text(rng, rank)
        kw = rng.choice([2, 4, 8, 16])
    else:
        spt, tpw, wpc, order, cga = blocked_params(rng, rank)
        parent = blocked_text(spt, tpw, wpc, order, cga)
        kw = 0
    kwt = f", kWidth = {kw}" if kw else ""
    text = f"#ttg.dot_op<{{opIdx = {op}, parent = {parent}{kwt}}}>"
    return Case("dot_op", text, rand_shape(rng, rank, lo=2, hi=7, max_total_bits=13))


GENERATORS = [
    ("blocked", gen_blocked),
    ("blocked_old_cga", gen_blocked_old_cga),
    ("slice", gen_slice),
    ("linear", gen_linear),
    ("swizzled_shared", gen_swizzled),
    ("nvmma_shared", gen_nvmma_shared),
]
MMA_GENERATORS = [
    ("nvidia_mma", gen_nvidia_mma),
    ("dot_op", gen_dot_op),
    ("amd_mfma", gen_amd_mfma),
    ("amd_wmma", gen_amd_wmma),
]


def build_cases():
    rng = random.Random(SEED)
    cases = []
    for kind, gen in GENERATORS + MMA_GENERATORS:
        for _ in range(CASES_PER_KIND):
            c = gen(rng)   # always drawn, so the cases do not depend on what is installed
            cases.append(c)
    return cases


def oracle_request(c: Case) -> dict:
    if c.oracle:
        return dict(c.oracle, tensor_view=True)
    return {"kind": "mlir_attr", "attr": c.text, "shape": c.shape, "memdesc": c.memdesc,
            "tensor_view": True}


@pytest.fixture(scope="module")
def results():
    cases = build_cases()
    answers = run_oracle([oracle_request(c) for c in cases], retry_isolated=False)
    return list(zip(cases, answers))


def _reading(c: Case, ans: dict, i: int) -> tuple[str, dict]:
    """Which printed text verilayout reads: rotate over the forms Triton prints."""
    if c.oracle:                       # old CGA spelling: only verilayout reads it
        return c.text, {"shape": c.shape}
    form = i % 3
    if form == 0:
        return ans["type"], {}
    if form == 1:
        return ans["parsed_module_text"], {}
    return ans["mlir"], {"shape": c.shape}


def _wrapper_only(ans: dict) -> bool:
    """The wheel's C++ converted the layout but gluon's Python wrapper refused the result
    (``SharedLinearLayout`` with no offset bases: a one-element tensor). Not a rejection."""
    return "offset_bases must not be empty" in (ans.get("message") or "")


def test_oracle_answers_every_case(results):
    for c, ans in results:
        assert ans.get("ok") or ans.get("error") in ("exception", "aborted"), (c.text, ans)


def test_bases_and_hardware_view_match_triton(results):
    tally: Counter = Counter()
    mismatches = []
    for i, (c, ans) in enumerate(results):
        if not ans.get("ok"):
            continue
        text, kw = _reading(c, ans, i)
        try:
            got = tfe.parse(text, **kw)
        except LayoutError as e:
            mismatches.append((c.kind, c.text, c.shape, f"LayoutError: {e}"))
            continue
        want = ans["bases"]
        if got.bases != want:
            mismatches.append((c.kind, c.text, c.shape, f"bases {got.bases} != {want}"))
            continue
        if got.out_dims != ans["out_dims"]:
            mismatches.append((c.kind, c.text, c.shape, f"out dims {got.out_dims}"))
            continue
        if "hw_view" in ans and tfe.format_hardware_view(got) != ans["hw_view"]:
            mismatches.append((c.kind, c.text, c.shape, "hardware view differs"))
            continue
        if "tensor_view" in ans and tfe.format_tensor_view(got) != ans["tensor_view"]:
            mismatches.append((c.kind, c.text, c.shape, "tensor view differs"))
            continue
        tally[c.kind] += 1
    assert not mismatches, f"{len(mismatches)} mismatches, first: {mismatches[:3]}"
    # every kind must have produced valid cases that were compared
    for kind, _ in GENERATORS + MMA_GENERATORS:
        assert tally[kind] >= 10, (kind, tally)


def test_layouts_triton_rejects_raise_layout_error(results):
    rejected = 0
    silent = []
    for c, ans in results:
        if ans.get("ok") or _wrapper_only(ans):
            continue
        rejected += 1
        try:
            got = tfe.parse(c.text, shape=c.shape)
        except LayoutError:
            continue
        silent.append((c.kind, c.text, c.shape, ans.get("message") or ans.get("error"), got))
    assert not silent, f"{len(silent)} layouts Triton rejects were accepted, first: {silent[:3]}"
    assert rejected >= 10


def test_old_cga_spelling_prints_as_triton_converts_it(results):
    """The oracle's printed CGALayout for the old triple parses to the same layout as the triple."""
    seen = 0
    for c, ans in results:
        if c.kind != "blocked_old_cga" or not ans.get("ok"):
            continue
        assert tfe.parse(ans["type"]).bases == tfe.parse(c.text, shape=c.shape).bases
        seen += 1
    assert seen >= 10
