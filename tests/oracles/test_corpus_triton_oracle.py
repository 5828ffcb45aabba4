"""Every distinct type of the corpus of real Triton output (tests/corpus/<target>/*.ttgir), read by
verilayout and by the Triton 3.9 wheel, compared basis for basis.

Triton's side (a worker subprocess: the wheel aborts the process on a layout it rejects): each
corpus file becomes one module whose function takes every distinct type of the file as an
argument, written exactly as Triton printed it (with the file's alias lines); Triton parses it,
turns each argument's encoding into its Gluon layout object and back into an attribute, and
converts it with ``GluonOpBuilder.to_linear_layout`` at the shape Triton's
``toLinearLayout(MemDescType)`` uses (the allocation's trailing dims; one pipeline buffer). A
``!tt.tensordesc`` is asked as a memdesc of its block type. Kinds Triton 3.9 cannot convert from
Python are compared where possible: ``#ttg.padded_shared`` by its linear component and paddings
(the Gluon object's fields); ``#ttg.amd_rotating_shared`` has no Gluon class (no oracle; its rule is
unit-tested by hand in tests/test_frontend_coverage.py).

Run as a script (``--worker``) it is that worker: JSON requests on stdin, JSON answers on stdout;
``--time N`` also times N calls of ``to_linear_layout`` per type (benchmarks/parse.py uses it).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time

ALIAS = re.compile(r"^#(?!loc)[\w$.-]+ = .*$", re.M)


# ============================================================================ worker (imports triton)

def _memdesc_text(kind: str, text: str) -> str:
    """A tensordesc's block type as a memdesc (what its shared layout describes)."""
    if kind != "tensordesc":
        return text
    inner = text[text.index("<") + 1: text.rindex(">")]
    if inner.startswith("tensor<"):
        inner = inner[len("tensor<"): inner.rindex(">")]
    return f"!ttg.memdesc<{inner}, #ttg.shared_memory>"


def _answer(b, arg, req: dict, timing: int) -> dict:
    getter = b.get_gluon_layout_from_tensor if req["kind"] == "tensor" else b.get_gluon_layout_from_memdesc
    try:
        lay = getter(arg)
    except Exception as e:  # noqa: BLE001 - Triton's Python side has no layout for this kind
        return {"none": f"{type(e).__name__}: {e}"}
    cls = type(lay).__name__
    if cls == "PaddedSharedLayout":
        return {"padded": {"pairs": [list(p) for p in lay.interval_padding_pairs],
                           "offset": [list(v) for v in lay.offset_bases],
                           "block": [list(v) for v in lay.cga_layout]}}
    attr = lay._to_ir(b)
    shape = list(req["shape"])
    try:
        t0 = time.perf_counter()
        ll = b.to_linear_layout(attr, shape)
        first = time.perf_counter() - t0
    except Exception as e:  # noqa: BLE001 - e.g. the Python wrapper refuses a 1-element layout
        return {"none": f"{type(e).__name__}: {e}"}
    out: dict = {"class": cls}
    if cls.startswith("TensorMemory"):
        out["bases"] = {"row": ll.rows, "col": ll.cols}
    elif hasattr(ll, "offset_bases"):
        out["bases"] = {"offset": ll.offset_bases, "block": ll.block_bases}
    else:
        out["bases"] = {"register": ll.reg_bases, "lane": ll.lane_bases, "warp": ll.warp_bases,
                        "block": ll.block_bases}
    out["bases"] = {k: [list(v) for v in vs] for k, vs in out["bases"].items()}
    if timing:
        t0 = time.perf_counter()
        for _ in range(timing):
            b.to_linear_layout(attr, shape)
        out["seconds"] = (time.perf_counter() - t0) / timing
        out["first_seconds"] = first
    return out


def worker_main(timing: int = 0) -> None:
    """stdin: ``[{"aliases": "...", "types": [{"text", "kind", "shape"}, ...]}, ...]`` (one item per
    file); stdout: one JSON list of answers per file, in order."""
    from triton._C.libtriton import gluon_ir, ir  # deferred: the oracle, only in this subprocess

    ctx = ir.context()
    ir.load_dialects(ctx)
    b = gluon_ir.GluonOpBuilder(ctx, "sm100")
    keep = []
    answers = []
    for item in json.load(sys.stdin):
        args = ", ".join(f"%a{i}: {_memdesc_text(t['kind'], t['text'])}" for i, t in enumerate(item["types"]))
        text = f"{item['aliases']}\nmodule {{\n  tt.func public @oracle({args}) {{\n    tt.return\n  }}\n}}\n"
        with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as fh:
            fh.write(text)
        try:
            mod = ir.parse_mlir_module(fh.name, ctx)
        except RuntimeError as e:   # Triton's parser or verifier refuses a type of the module
            answers.append([{"refused": str(e)} for _ in item["types"]])
            continue
        finally:
            os.unlink(fh.name)
        keep.append(mod)
        fn = mod.get_function("oracle")
        answers.append([_answer(b, fn.args(i), t, timing) for i, t in enumerate(item["types"])])
    sys.stdout.write(json.dumps(answers))
    sys.stdout.flush()
    os._exit(0)


def run_worker(requests: list, timing: int = 0, timeout: float = 600) -> list:
    """Run :func:`worker_main` in a fresh Python; raise with Triton's stderr if it dies."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker"] + (["--time", str(timing)] if timing else [])
    proc = subprocess.run(cmd, input=json.dumps(requests), capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"Triton worker died (rc {proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(proc.stdout)


if __name__ == "__main__" and "--worker" in sys.argv:
    worker_main(int(sys.argv[sys.argv.index("--time") + 1]) if "--time" in sys.argv else 0)


# ============================================================================ the test (verilayout side)

import pytest  # noqa: E402

pytest.importorskip("triton")
pytestmark = pytest.mark.oracle

from verilayout.core.linear_layout import LinearLayout  # noqa: E402
from verilayout.errors import LayoutError  # noqa: E402
from verilayout.frontends.triton import memdesc_buffers, type_to_layout  # noqa: E402
from verilayout.hw.nvidia.banks import SharedAddressMap  # noqa: E402
from verilayout.frontends.triton import memory as triton_memory  # noqa: E402

from tests.test_frontend_coverage import CORPUS, corpus_types  # noqa: E402

#: every n-th file is asked (1, the default: all; the whole corpus takes a few seconds)
SAMPLE_EVERY = int(os.environ.get("VERILAYOUT_CORPUS_ORACLE_EVERY", "1"))


def requests_for(types) -> tuple[list, list]:
    """One request per file: its alias lines and its distinct types (text, kind, layout shape)."""
    by_file: dict[str, list] = {}
    for ct in types:
        by_file.setdefault(ct.file, []).append(ct)
    reqs, order = [], []
    for f in sorted(by_file):
        aliases = "\n".join(ALIAS.findall((CORPUS / f).read_text()))
        cts = by_file[f]
        reqs.append({"aliases": aliases, "types": [
            {"text": ct.text, "kind": ct.parsed.kind, "shape": list(memdesc_buffers(ct.parsed)[0])}
            for ct in cts]})
        order.append(cts)
    return reqs, order


def compare(ct, ans: dict) -> str:
    """'' when verilayout agrees with Triton's answer; else what differs. 'none' when Triton has
    no conversion for the kind."""
    if "refused" in ans:
        try:
            type_to_layout(ct.parsed)
        except LayoutError:
            return ""
        return "Triton refuses it; verilayout reads it"
    ours = type_to_layout(ct.parsed)
    if "none" in ans:
        return "none"
    if "padded" in ans:
        p = ans["padded"]
        pairs, params = triton_memory.padded_shared_parts(ct.parsed.encoding.body)
        if not isinstance(ours, SharedAddressMap):
            return f"padded: ours is {type(ours).__name__}"
        if [list(x) for x in pairs] != p["pairs"]:
            return f"padded: ours {pairs}, Triton {p}"
        if "offset" in params:
            return "" if params["offset"] == p["offset"] else f"padded: ours {params['offset']}, Triton {p}"
        # the short form {order, shape}: Triton's linear component puts offset bit i at coordinate
        # offset[i]; our map must store that element at 2^i plus the paddings before it
        for i, coord in enumerate(p["offset"]):
            o = 1 << i
            want = o + sum(pad * (o // interval) for interval, pad in pairs)
            got = ours.offset({f"dim{d}": v for d, v in enumerate(coord)})
            if got != want:
                return f"padded: offset bit {i} at {coord}: ours {got}, Triton {want}"
        return ""
    assert isinstance(ours, LinearLayout)
    want = {k: v for k, v in ans["bases"].items()}
    got = {k: v for k, v in ours.bases.items() if k in want or v}
    if got != want:
        return f"ours {got}, Triton {want}"
    return ""


@pytest.fixture(scope="module")
def answered():
    types = corpus_types()
    if not types:
        pytest.skip("the corpus (tests/corpus/*/*.ttgir) is absent")
    files = sorted({ct.file for ct in types})[::SAMPLE_EVERY]
    chosen = [ct for ct in types if ct.file in set(files)]
    reqs, order = requests_for(chosen)
    answers = run_worker(reqs)
    return [(ct, a) for cts, ans in zip(order, answers) for ct, a in zip(cts, ans)]


def test_every_type_triton_converts_agrees(answered):
    bad = [(ct.file, ct.text, why) for ct, a in answered if (why := compare(ct, a)) not in ("", "none")]
    assert not bad, f"{len(bad)} of {len(answered)} disagree, e.g. {bad[:3]}"


def test_triton_converts_nearly_all(answered):
    none = [(ct.text, a["none"]) for ct, a in answered if "none" in a]
    # Triton 3.9's Python side has no Gluon class for the AMD rotating layout, and its
    # SharedLinearLayout wrapper refuses a layout with no offset bases (a 1-element barrier)
    unexpected = [(ct.text, a["none"]) for ct, a in answered if "none" in a
                  and "amd_rotating_shared" not in ct.parsed.encoding.name
                  and "offset_bases must not be empty" not in a["none"]]
    assert not unexpected, unexpected[:3]
    assert len(none) < len(answered) / 20, none[:3]


# ============================================================================ beyond the corpus

def _synthetic() -> list[str]:
    """Types the corpus lacks: tensor memory over a grid, nvmma with a ``rank`` key (3-d, 5-d; some
    too small for their swizzle, which Triton refuses), shared_linear with alignment, views, and
    ``#ttg.linear`` bases that move in two dims at once or repeat (Triton 3.9 refuses those)."""
    out = []
    for bm in (64, 128):
        for bn in (32, 64, 256):
            for m, n in ((64, 64), (128, 64), (128, 256), (256, 128), (64, 32), (256, 512)):
                if m < bm:
                    continue
                for cs, elem in ((1, "f32"), (2, "f16")):
                    out.append(f"!ttg.memdesc<{m}x{n}x{elem}, #ttng.tensor_memory_encoding<blockM = {bm}, "
                               f"blockN = {bn}, colStride = {cs}>, #ttng.tensor_memory, mutable>")
    for m, n in ((128, 4), (128, 8), (256, 4), (64, 4), (32, 4), (128, 16)):
        out.append(f"!ttg.memdesc<{m}x{n}xi8, #ttng.tensor_memory_scales_encoding<>, #ttng.tensor_memory>")
    for sw, bits, elem in ((128, 16, "f16"), (64, 16, "f16"), (32, 8, "i8"), (0, 16, "f16")):
        for tr in ("false", "true"):
            for shape in ("2x64x64", "4x2x8x64x64"):
                if sw == 0 and tr == "true":
                    continue
                rank = shape.count("x") + 1
                out.append(f"!ttg.memdesc<{shape}x{elem}, #ttg.nvmma_shared<{{swizzlingByteWidth = {sw}, "
                           f"transposed = {tr}, elementBitWidth = {bits}, rank = {rank}}}>, #ttg.shared_memory>")
    out.append("!ttg.memdesc<4x8xf16, #ttg.shared_linear<{offset = [[0, 1], [0, 2], [0, 4], [1, 0], [2, 1]], "
               "block = []}, alignment = 128>, #ttg.shared_memory>")
    sw = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"
    out.append(f"!ttg.memdesc<128x16xf16, {sw}, #ttg.shared_memory, mutable, 128x64>")
    out.append(f"!ttg.memdesc<64x64xf16, {sw}, #ttg.shared_memory, mutable, 3x64x64>")
    for bases, shapes in (
            ("register = [[0, 1], [1, 1]], lane = [[2, 0], [4, 0], [8, 0], [0, 2], [0, 4]], "
             "warp = [[16, 0], [0, 8]]", ("32x16", "16x16", "64x64")),
            ("register = [[1, 1]], lane = [[0, 1], [0, 2], [2, 0], [4, 4], [8, 0]], warp = [[0, 4]]",
             ("16x8", "8x8", "32x32")),
            ("register = [[0, 0], [1, 0]], lane = [[2, 0], [0, 1]], warp = []", ("4x2", "8x8")),
            ("register = [[1, 0], [1, 0]], lane = [[2, 0], [0, 1]], warp = []", ("4x2",)),
            ("register = [[3, 0]], lane = [[1, 0], [0, 1]], warp = []", ("4x2",))):
        for shape in shapes:
            out.append(f"tensor<{shape}xf32, #ttg.linear<{{{bases}, block = []}}>>")
    return out


def test_beyond_the_corpus_agrees():
    from verilayout.frontends.mlir import parse_value
    from types import SimpleNamespace

    cts = []
    for text in _synthetic():
        t = parse_value(text)
        cts.append(SimpleNamespace(text=text, parsed=t, file="synthetic"))
    reqs = [{"aliases": "", "types": [{"text": ct.text, "kind": ct.parsed.kind,
                                       "shape": list(memdesc_buffers(ct.parsed)[0])}]} for ct in cts]
    answers = [a[0] for a in run_worker(reqs)]
    bad = [(ct.text, why) for ct, a in zip(cts, answers) if (why := compare(ct, a)) != ""]
    assert not bad, f"{len(bad)} of {len(cts)} disagree, e.g. {bad[:3]}"
    assert sum("refused" in a for a in answers) < len(answers) / 3
