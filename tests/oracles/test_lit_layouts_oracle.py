"""Every layout-carrying type of Triton's own lit tests (``tests/upstream/lit_layouts.json``, made by
``tests/upstream/extract_lit_layouts.py``), read by verilayout and by the Triton 3.9 wheel, compared
basis for basis. Where the wheel refuses a type (its parser or verifier, or a fatal error in its
conversion), verilayout must refuse it too, with a :class:`LayoutError`.

Triton's side runs in worker subprocesses (the wheel aborts the process on a layout it rejects): the
worker writes one JSON line per answer, so after an abort the driver knows the culprit, records
Triton's message for it and goes on with the rest (in a fresh child forked by the worker, which
imported Triton once). Each type becomes a module whose
function takes it as its one argument; Triton parses it, turns the encoding into its Gluon layout
object and back into an attribute, and converts it with ``GluonOpBuilder.to_linear_layout`` at
the shape Triton's ``toLinearLayout(type)`` uses (a memdesc: its allocation's trailing dims, one
pipeline buffer). ``#ttg.padded_shared`` (no linear layout on Triton's Python side) is compared by
its paddings and linear component.
"""
from __future__ import annotations

import json
import mmap
import os
import re
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

LIT = Path(__file__).resolve().parents[1] / "upstream" / "lit_layouts.json"


# ============================================================================ worker (imports triton)

def _convert(b, arg, kind: str, shape: list) -> dict:
    getter = b.get_gluon_layout_from_tensor if kind == "tensor" else b.get_gluon_layout_from_memdesc
    sys.stderr.write("@@STAGE gluon\n")
    sys.stderr.flush()
    try:
        lay = getter(arg)
    except Exception as e:  # noqa: BLE001 - Triton's Python side has no layout object for the kind
        return {"none": f"{type(e).__name__}: {e}"}
    cls = type(lay).__name__
    if cls == "PaddedSharedLayout":
        return {"padded": {"pairs": [list(p) for p in lay.interval_padding_pairs],
                           "offset": [list(v) for v in lay.offset_bases]}}
    attr = lay._to_ir(b)     # a #ttg.generic_linear comes back as a #ttg.linear: same conversion
    sys.stderr.write("@@STAGE convert\n")
    sys.stderr.flush()
    try:
        ll = b.to_linear_layout(attr, shape)
    except Exception as e:  # noqa: BLE001 - the Python wrapper refuses (e.g. no offset bases)
        return {"none": f"{type(e).__name__}: {e}"}
    if cls.startswith("TensorMemory"):
        bases = {"row": ll.rows, "col": ll.cols}
    elif hasattr(ll, "offset_bases"):
        bases = {"offset": ll.offset_bases, "block": ll.block_bases}
    else:
        bases = {"register": ll.reg_bases, "lane": ll.lane_bases, "warp": ll.warp_bases, "block": ll.block_bases}
    return {"class": cls, "bases": {k: [list(v) for v in vs] for k, vs in bases.items()}}


BATCH = 64


def _parse_module(ir, ctx, types: list):
    """One module whose function takes ``types`` as its arguments (RuntimeError when refused)."""
    args = ", ".join(f"%a{k}: {t}" for k, t in enumerate(types))
    text = f"module {{\n  tt.func public @oracle({args}) {{\n    tt.return\n  }}\n}}\n"
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as fh:
        fh.write(text)
    try:
        return ir.parse_mlir_module(fh.name, ctx)
    finally:
        os.unlink(fh.name)


def worker_main() -> None:
    """stdin: ``[{"type": text, "kind": "tensor"|"memdesc", "shape": [..]}, ...]``; stdout: one
    JSON line ``{"i": index, "answer": {...}}`` per request, flushed, so a crash names its culprit.
    Types are parsed ``BATCH`` to a module; a batch Triton refuses is parsed type by type (so is
    every type before ``--single-until``, after a crash in a batch's parse).

    Triton is imported and its context made once; the requests are answered in a ``fork``ed child
    (:func:`_answer_from`). A child the wheel kills while parsing a batch is followed by one that
    parses that batch type by type; one killed on a type is reported ``{"i": index, "died": rc}``
    (rc as ``subprocess`` gives it, -6 for SIGABRT) and a fresh child goes on after it."""
    from triton._C.libtriton import gluon_ir, ir  # deferred: the oracle, only in this subprocess

    reqs = json.load(sys.stdin)
    start = int(sys.argv[sys.argv.index("--start") + 1])
    single_until = int(sys.argv[sys.argv.index("--single-until") + 1])
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)                      # C++ prints go to stderr, never into the JSON channel
    ctx = ir.context()
    ir.load_dialects(ctx)
    b = gluon_ir.GluonOpBuilder(ctx, "sm100")
    at = mmap.mmap(-1, 16)             # the child's place: (index, 1 while it parses a batch there)
    i = start
    while i < len(reqs):
        at[:16] = struct.pack("qq", i, 0)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                _answer_from(reqs, i, single_until, (ir, ctx, b), out, at)
                code = 0
            finally:
                os._exit(code)
        rc = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        if rc == 0:
            break
        k, in_batch = struct.unpack("qq", at[:16])
        if in_batch:                   # died parsing a batch: redo it type by type
            i, single_until = k, k + BATCH
            continue
        out.write(json.dumps({"i": k, "died": rc}) + "\n")
        out.flush()
        i = k + 1
    out.close()
    os._exit(0)


def _answer_from(reqs: list, i: int, single_until: int, triton: tuple, out, at) -> None:
    """Answer ``reqs[i:]`` (in a forked child of :func:`worker_main`), writing its place to ``at``."""
    ir, ctx, b = triton
    keep = []
    while i < len(reqs):
        n = 1 if i < single_until else min(BATCH, len(reqs) - i)
        args = None
        if n > 1:
            at[:16] = struct.pack("qq", i, 1)
            sys.stderr.write(f"\n@@BATCH {i}\n")
            sys.stderr.flush()
            try:
                mod = _parse_module(ir, ctx, [r["type"] for r in reqs[i:i + n]])
                keep.append(mod)
                args = [mod.get_function("oracle").args(k) for k in range(n)]
            except RuntimeError:
                n = 1
        for k in range(n):
            r = reqs[i + k]
            at[:16] = struct.pack("qq", i + k, 0)
            sys.stderr.write(f"\n@@LIT {i + k}\n")
            sys.stderr.flush()
            try:
                if args is None:
                    mod = _parse_module(ir, ctx, [r["type"]])
                    keep.append(mod)
                arg = args[k] if args is not None else mod.get_function("oracle").args(0)
                ans = _convert(b, arg, r["kind"], r["shape"])
            except RuntimeError as e:   # Triton's parser or verifier refuses the type
                ans = {"refused": str(e)[-500:]}
            out.write(json.dumps({"i": i + k, "answer": ans}) + "\n")
            out.flush()
        i += n


def _stderr_by_request(err: str) -> dict:
    """What the worker printed to stderr while on each request (MLIR's diagnostics)."""
    out = {}
    for chunk in err.split("\n@@LIT ")[1:]:
        head, _, body = chunk.partition("\n")
        if head.isdigit():
            out[int(head)] = body.split("\n@@BATCH", 1)[0].strip()
    return out


def run_workers(reqs: list, timeout: float = 900) -> list:
    """Answer every request; a request that kills the worker is answered ``{"refused": <Triton's
    fatal message>, "aborted": True}`` and a fresh child of the worker goes on after it."""
    answers: list = [None] * len(reqs)
    start, single_until = 0, 0
    payload = json.dumps(reqs)
    while start < len(reqs):
        # the worker's temporary .mlir files go to a folder removed here: a worker the wheel
        # aborts cannot clean up after itself
        with tempfile.TemporaryDirectory(prefix="vl-lit-oracle-") as tmp:
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", "--start", str(start),
                                   "--single-until", str(single_until)], env=dict(os.environ, TMPDIR=tmp),
                                  input=payload, capture_output=True, text=True, timeout=timeout)
        said = _stderr_by_request(proc.stderr)
        for line in proc.stdout.splitlines():
            msg = json.loads(line)
            if "died" in msg:          # a forked child of the worker died on it
                answers[msg["i"]] = _aborted(reqs[msg["i"]]["type"], _tail_of(proc.stderr, msg["i"]), msg["died"])
                continue
            if "refused" in msg["answer"] and said.get(msg["i"]):
                msg["answer"]["refused"] = said[msg["i"]][-500:]
            answers[msg["i"]] = msg["answer"]
        nxt = next((i for i in range(start, len(reqs)) if answers[i] is None), len(reqs))
        if nxt == len(reqs):
            break
        if proc.returncode == 0:
            raise RuntimeError(f"worker stopped at {nxt} without an error: {proc.stderr[-1000:]}")
        last = proc.stderr.rsplit("\n@@", 1)[-1]
        if last.startswith("BATCH"):       # died parsing a batch: redo it type by type
            start, single_until = nxt, nxt + BATCH
            continue
        answers[nxt] = _aborted(reqs[nxt]["type"], _tail_of(proc.stderr, nxt), proc.returncode)
        start = nxt + 1
    return answers


def _tail_of(err: str, i: int) -> str:
    """What the worker printed on request ``i`` (its last run), up to the next request's marker."""
    tail = err.rsplit(f"@@LIT {i}\n", 1)[-1]
    return re.split(r"\n@@(?:LIT|BATCH) \d+\n", tail, maxsplit=1)[0].strip()


def _aborted(text: str, tail: str, rc: int) -> dict:
    """The answer to a type whose process the wheel killed, from what it printed (``tail``)."""
    if ("@@STAGE convert" not in tail and "@@STAGE gluon" in tail) or (
            "#ttg.generic_linear<" in text and "LinearEncodingAttr requires" in tail):
        # Triton parsed and verified the type; its Python side died making the layout object
        # (a #ttg.generic_linear with a swizzled warp basis becomes a #ttg.linear there)
        return {"none": "aborted making the Gluon object: " + tail[-400:]}
    return {"refused": tail.rsplit("@@STAGE convert", 1)[-1].strip()[-500:] or f"worker died (rc {rc})",
            "aborted": True}


if __name__ == "__main__" and "--worker" in sys.argv:
    worker_main()


# ============================================================================ the test (verilayout side)

import pytest  # noqa: E402

pytest.importorskip("triton")
pytestmark = pytest.mark.oracle

from verilayout.core.linear_layout import LinearLayout  # noqa: E402
from verilayout.errors import LayoutError  # noqa: E402
from verilayout.frontends.mlir import parse_value  # noqa: E402
from verilayout.frontends.triton import attr_to_layout, memdesc_buffers, type_to_layout  # noqa: E402
from verilayout.hw.nvidia.banks import SharedAddressMap  # noqa: E402


def _shape(text: str) -> list:
    """The shape Triton's ``toLinearLayout(type)`` uses: a tensor's shape; a memdesc's allocation
    trailing dims, one buffer of a pipeline ring ([1] when verilayout cannot read the type: then
    Triton's answer only decides whether it must be refused)."""
    try:
        return list(memdesc_buffers(parse_value(text))[0])
    except LayoutError:
        return [1]


def ours(text: str):
    """verilayout's layout of a type (a tensor-memory view: of its whole allocation, what Triton's
    ``toLinearLayout`` answers), or the LayoutError it raises."""
    try:
        t = parse_value(text)
        got = type_to_layout(t)
        if t.kind == "memdesc" and t.encoding.name.endswith("tensor_memory_encoding"):
            got = attr_to_layout(t.encoding, memdesc_buffers(t)[0])
        return got
    except LayoutError as e:
        return e


def padded_offsets(pairs: list, offset_bases: list) -> dict:
    """Triton's padded layout by brute force (up to 2048 + log n points), from the wheel's own fields: the element at linear
    offset ``o`` (its coordinates: the XOR of the offset bases of ``o``'s set bits) is stored at
    ``o + sum((o >> log2(interval)) << log2(pad))``."""
    out = {}
    n = 1 << len(offset_bases)
    step = max(1, n // 2048)          # every offset up to 2048 elements, else a stride through them
    for o in sorted(set(range(0, n, step)) | {(1 << k) for k in range(len(offset_bases))} | {n - 1}):
        coords = [0] * len(offset_bases[0])
        for bit, b in enumerate(offset_bases):
            if o >> bit & 1:
                coords = [c ^ x for c, x in zip(coords, b)]
        pad = sum((o // iv) * p for iv, p in pairs)
        out[tuple(coords)] = o + pad
    return out


def compare(text: str, ans: dict) -> str:
    """'' when verilayout agrees with Triton's answer; else what differs."""
    got = ours(text)
    if "refused" in ans:
        return "" if isinstance(got, LayoutError) else "Triton refuses it; verilayout reads it"
    if "none" in ans:        # Triton parsed it but its Python side has no layout for it: no oracle
        return "none"
    if isinstance(got, LayoutError):
        return f"Triton reads it; verilayout refuses: {got}"
    if "padded" in ans:
        if not isinstance(got, SharedAddressMap):
            return f"padded: ours is {type(got).__name__}"
        want = padded_offsets(ans["padded"]["pairs"], ans["padded"]["offset"])
        names = list(got.shape)
        bad = [(c, o) for c, o in want.items() if got.offset(dict(zip(names, c))) != o]
        return f"padded: {len(bad)} of {len(want)} offsets differ, e.g. {bad[:2]}" if bad else ""
    if not isinstance(got, LinearLayout):
        return f"ours is {type(got).__name__}"
    want = ans["bases"]
    mine = {k: v for k, v in got.bases.items() if k in want or v}
    return "" if mine == want else f"ours {mine}, Triton {want}"


@pytest.fixture(scope="module")
def answered():
    if not LIT.exists():
        pytest.fail(f"{LIT} is missing: run tests/upstream/extract_lit_layouts.py")
    entries = json.loads(LIT.read_text())["types"]
    reqs = [{"type": e["type"], "kind": "tensor" if e["type"].startswith("tensor") else "memdesc",
             "shape": _shape(e["type"])} for e in entries]
    return list(zip(entries, run_workers(reqs)))


#: Where verilayout knowingly differs from the wheel, each with its reason (a regex on the
#: difference). Every entry must still occur (a fix makes its test fail: then drop the entry).
KNOWN = {
    # a multi-CTA tensor-memory layout: the wheel's Python binding gives its per-CTA rows and
    # columns but not its block bases, so there is nothing to check the CTA split against
    r"'CGALayout' = .*multi-CTA tensor-memory( scales)? layout is not modelled": "tmem CGA",
    # a key newer than verilayout's model of the scales layout (Triton's lit tests for sm_120+)
    r"unknown key 'blockRepOrder'": "tmem scales blockRepOrder",
    # Triton's parser ignores a misspelt key (amd_wmma's is isTranspose); verilayout drops nothing
    # the user wrote, so it refuses it (the project's rule over agreement)
    r"#ttg.amd_wmma: unknown parameter\(s\) \['isTransposed'\]": "ignored key",
}


def test_lit_types_agree_with_the_wheel(answered):
    bad = [(e["file"], e["line"], e["type"], why) for e, a in answered
           if (why := compare(e["type"], a)) not in ("", "none")]
    unknown = [b for b in bad if not any(re.search(k, b[3]) for k in KNOWN)]
    assert not unknown, f"{len(unknown)} of {len(answered)} disagree, e.g. {unknown[:4]}"
    unused = [k for k in KNOWN if not any(re.search(k, b[3]) for b in bad)]
    assert not unused, f"known differences that no longer occur (drop them): {unused}"
    assert len(bad) < len(answered) / 100, f"{len(bad)} known differences"


def test_wheel_has_a_conversion_for_nearly_all(answered):
    none = [(e["type"], a["none"]) for e, a in answered if "none" in a]
    assert len(none) < len(answered) / 50, none[:5]


def test_the_kinds_issue_26_named_agree(answered):
    """The kinds Triton's lit tests hold that verilayout refused or read differently before:
    each is in the data, and each agrees with the wheel (or both refuse)."""
    want = {"partitioned_shared": r"#ttg\.partitioned_shared<", "generic_linear": r"#ttg\.generic_linear<",
            "linear with order": r"#ttg\.linear<\{[^>]*order = ", "f64 dot operand": r"^tensor<16x16xf64, #ttg\.dot_op",
            "small dot operand": r"^tensor<8x4xf32, #ttg\.dot_op",
            "shared layout on tensor<>": r"^tensor<[^#]*#ttg\.\w*shared<"}
    seen = {k: 0 for k in want}
    for e, a in answered:
        for k, pat in want.items():
            if re.search(pat, e["type"]):
                assert compare(e["type"], a) in ("", "none"), (k, e["file"], e["line"], compare(e["type"], a))
                seen[k] += "bases" in a or "refused" in a
    assert all(seen.values()), seen


def test_refusals_are_layout_errors(answered):
    """Every type the wheel refuses, verilayout refuses with a one-line LayoutError."""
    refused = [e["type"] for e, a in answered if "refused" in a]
    assert len(refused) > 30
    for text in refused:
        got = ours(text)
        assert isinstance(got, LayoutError), text
        assert "\n" not in str(got)
