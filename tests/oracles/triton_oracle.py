#!/usr/bin/env python3
"""Independent oracle: ask the installed Triton wheel (3.9.x) about layouts.

This file is a standalone harness, written for verilayout's test suite.  It
contains no Triton source code; it only drives Triton's public Python objects
and nanobind bindings (``triton.experimental.gluon.language`` layout classes,
``triton._C.libtriton.gluon_ir.GluonOpBuilder`` and ``triton.tools.LinearLayout``).

Why a subprocess
----------------
The Triton wheel is built with C++ assertions enabled: an invalid layout (or an
invalid linear-layout operation) calls ``abort()`` / ``report_fatal_error`` and
kills the whole Python process.  So the Triton work happens in a *worker*
subprocess, and the *driver* (:func:`run_oracle`, pure Python, never imports
Triton) restarts the worker after a crash, so a single aborting request only
costs its own answer: ``{"ok": false, "error": "aborted", ...}``.

Command line
------------
``python tests/oracles/triton_oracle.py < requests.json > responses.json``
    Driver mode (robust).  stdin holds a JSON list of request objects (a single
    object is also accepted and answered with a single object); stdout receives
    the JSON list of responses, one per request, in order.
    Options: ``--timeout S`` (per request, default 60), ``--startup-timeout S``
    (default 300), ``--indent N``.

``python tests/oracles/triton_oracle.py --worker [--retry-isolated] < requests.json``
    Raw worker (used by the driver).  Writes JSON lines: first
    ``{"ready": true, ...}``, then ``{"index": i, "response": {...}}`` per
    request, then ``{"done": true}``.  It ends with ``os._exit(0)``.  It imports
    Triton once and answers in forked children: a child the wheel aborts is
    reported ``{"died": i, "returncode": rc}`` (``rc`` as ``Popen`` gives it: -6
    for SIGABRT) and a fresh child goes on at ``i + 1``, so an abort costs a
    ``fork``, not a new interpreter importing Triton (about 0.25 s of CPU).

``python tests/oracles/triton_oracle.py --write-sample tests/oracles/fixtures_sample.json``
    Answers the built-in ``SAMPLE_REQUESTS`` (one per kind, a few failing on
    purpose) and stores ``[{"request": ..., "response": ...}, ...]``.

Python API
----------
``run_oracle(requests, timeout=60.0, startup_timeout=300.0, python=None,
retry_isolated=True) -> list[dict]``

``oracle_available(python=None) -> bool`` (cheap check that triton imports).

Request kinds and response fields are documented in ``tests/oracles/README.md``.
"""

from __future__ import annotations

import json
import mmap
import os
import queue
import re
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback

__all__ = ["run_oracle", "oracle_available", "write_sample", "SAMPLE_REQUESTS", "LAYOUT_KINDS", "DISTRIBUTED_KINDS",
           "SHARED_KINDS", "OTHER_KINDS"]

DISTRIBUTED_KINDS = ("blocked", "slice", "nvidia_mma", "dot_operand", "amd_mfma", "amd_wmma", "linear")
SHARED_KINDS = ("nvmma_shared", "swizzled_shared", "shared_linear", "padded_shared")
LAYOUT_KINDS = DISTRIBUTED_KINDS + SHARED_KINDS
OTHER_KINDS = ("ll_op", "bank_conflicts", "mlir_attr", "ping", "_sleep", "_abort")

_MARKER = "@@TRITON-ORACLE-REQUEST"

# Keys of a layout request that are not constructor arguments of the Gluon class.
_RESERVED = {
    "kind", "id", "shape", "dtype", "arch", "alloc_shape", "views", "tensor_view", "parent",
    "ctas_per_cga", "cta_split_num", "cta_order", "module", "props",
}

# ============================================================================
# Driver side (pure Python; never imports triton)
# ============================================================================


def _worker_cmd(python, retry_isolated=False):
    return [python or sys.executable, os.path.abspath(__file__), "--worker"] + (
        ["--retry-isolated"] if retry_isolated else [])


def _aborted(request, rc, detail):
    """The answer to a request whose worker the wheel killed."""
    return {"ok": False, "error": "aborted", "returncode": rc,
            "id": request.get("id") if isinstance(request, dict) else None, "detail": _tail(detail)}


def _kill(proc):
    """Kill the worker and the child it forked (one process group: the worker leads its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()


def _split_stderr(text):
    """Map request position (in this worker run) -> stderr text written while it ran."""
    out = {}
    cur = None
    buf = []
    for line in text.splitlines():
        if line.startswith(_MARKER):
            if cur is not None:
                out[cur] = "\n".join(buf)
            try:
                cur = int(line[len(_MARKER):].strip())
            except ValueError:
                cur = None
            buf = []
        elif cur is not None:
            buf.append(line)
    if cur is not None:
        out[cur] = "\n".join(buf)
    return out


def _tail(text, n=4000):
    text = text.strip()
    return text if len(text) <= n else "..." + text[-n:]


def _run_worker_once(requests, timeout, startup_timeout, python, retry_isolated=False):
    """Run one worker over `requests` (it goes on past a request that aborts its child, see
    :func:`_serve`).

    Returns (answers, status, info): answers maps local index -> response;
    status is "complete", "died", "timeout" or "startup_failed"; info carries
    returncode, stderr text, stderr split per request and the ready record.
    """
    payload = json.dumps(requests).encode()
    with tempfile.TemporaryFile() as err_file, tempfile.TemporaryDirectory(prefix="vl-oracle-") as tmp:
        env = dict(os.environ, TMPDIR=tmp)   # its .mlir files: removed here even if the wheel aborts it
        env.setdefault("PYTHONUNBUFFERED", "1")
        proc = subprocess.Popen(
            _worker_cmd(python, retry_isolated),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err_file,
            env=env,
            start_new_session=True,
        )
        lines: "queue.Queue[bytes | None]" = queue.Queue()

        def feed():
            try:
                proc.stdin.write(payload)
                proc.stdin.close()
            except (BrokenPipeError, OSError):
                pass

        def pump():
            try:
                for raw in proc.stdout:
                    lines.put(raw)
            finally:
                lines.put(None)

        t_in = threading.Thread(target=feed, daemon=True)
        t_out = threading.Thread(target=pump, daemon=True)
        t_in.start()
        t_out.start()

        answers = {}
        died = {}
        ready = None
        status = None
        while True:
            wait = startup_timeout if ready is None else timeout
            try:
                raw = lines.get(timeout=wait)
            except queue.Empty:
                status = "timeout" if ready is not None else "startup_failed"
                _kill(proc)
                break
            if raw is None:
                break
            try:
                msg = json.loads(raw)
            except ValueError:
                continue  # not one of ours; ignore
            if "ready" in msg:
                ready = msg
            elif "index" in msg:
                answers[msg["index"]] = msg["response"]
            elif "died" in msg:
                died[msg["died"]] = msg["returncode"]
            elif msg.get("done"):
                status = "complete"
        try:
            rc = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            _kill(proc)
            rc = proc.wait()
        t_out.join(timeout=5)
        err_file.seek(0)
        err_text = err_file.read().decode(errors="replace")
    per_request = _split_stderr(err_text)
    for k, child_rc in died.items():
        if k not in answers:
            answers[k] = _aborted(requests[k], child_rc, per_request.get(k, err_text))
    if status is None:
        status = "startup_failed" if ready is None else "died"
    if status == "complete" and len(answers) < len(requests):
        status = "died"
    info = {"returncode": rc, "stderr": err_text, "per_request": per_request, "ready": ready}
    return answers, status, info


def run_oracle(requests, timeout=60.0, startup_timeout=300.0, python=None, retry_isolated=True):
    """Answer a list of oracle requests; one response dict per request, in order.

    A request that kills the worker (C++ assertion / fatal error) is answered
    ``{"ok": false, "error": "aborted", "returncode": rc, "detail": stderr}``
    and the remaining requests are answered by a fresh child of the worker (forked
    from the process that imported Triton, before any request ran).  With
    ``retry_isolated`` the killing request is first re-run alone to confirm it
    is the culprit (if it then succeeds, that answer is kept and marked
    ``"isolated_retry": true``).  A request that runs longer than ``timeout``
    seconds is answered ``{"ok": false, "error": "timeout"}``.  If the worker
    cannot even start (Triton not importable), every request gets
    ``{"ok": false, "error": "startup_failed"}``.
    """
    requests = list(requests)
    results = [None] * len(requests)
    pending = list(range(len(requests)))
    while pending:
        batch = pending
        answers, status, info = _run_worker_once([requests[i] for i in batch], timeout, startup_timeout, python,
                                                 retry_isolated and len(batch) > 1)
        for li, resp in answers.items():
            results[batch[li]] = resp
        if status == "complete":
            break
        if status == "startup_failed":
            fail = {"ok": False, "error": "startup_failed", "returncode": info["returncode"],
                    "detail": _tail(info["stderr"])}
            for i in batch:
                if results[i] is None:
                    results[i] = dict(fail, id=requests[i].get("id") if isinstance(requests[i], dict) else None)
            break
        # The first unanswered request was running when the worker died / hung.
        k = next(li for li in range(len(batch)) if li not in answers)
        culprit = batch[k]
        req_id = requests[culprit].get("id") if isinstance(requests[culprit], dict) else None
        if status == "timeout":
            results[culprit] = {"ok": False, "error": "timeout", "timeout_s": timeout, "id": req_id,
                                "detail": _tail(info["per_request"].get(k, ""))}
        else:
            resp = None
            if retry_isolated and len(batch) > 1:
                a2, s2, i2 = _run_worker_once([requests[culprit]], timeout, startup_timeout, python)
                if s2 == "complete" and 0 in a2:
                    resp = dict(a2[0], isolated_retry=True)
                elif s2 == "timeout":
                    resp = {"ok": False, "error": "timeout", "timeout_s": timeout, "id": req_id,
                            "detail": _tail(i2["per_request"].get(0, ""))}
                else:
                    resp = {"ok": False, "error": "aborted", "returncode": i2["returncode"], "id": req_id,
                            "detail": _tail(i2["per_request"].get(0, i2["stderr"]))}
            if resp is None:
                resp = {"ok": False, "error": "aborted", "returncode": info["returncode"], "id": req_id,
                        "detail": _tail(info["per_request"].get(k, info["stderr"]))}
            results[culprit] = resp
        pending = [batch[li] for li in range(k + 1, len(batch)) if li not in answers]
    return results


def oracle_available(python=None, timeout=300.0):
    """True when a worker starts (Triton imports) and answers a ping."""
    try:
        res = run_oracle([{"kind": "ping"}], timeout=timeout, startup_timeout=timeout, python=python)
    except Exception:
        return False
    return bool(res and res[0] and res[0].get("ok"))


# ============================================================================
# Worker side (imports triton)
# ============================================================================

_W = {}  # worker state: imported modules, the shared MLIR context, modules kept alive


def _w_init():
    t0 = time.perf_counter()
    import triton
    from triton._C.libtriton import gluon_ir, ir
    import triton.experimental.gluon.language as gl
    from triton.experimental.gluon.language import amd as gl_amd
    import triton.tools as tt_tools

    ctx = ir.context()
    ir.load_dialects(ctx)
    _W.update(triton=triton, gluon_ir=gluon_ir, ir=ir, gl=gl, amd=gl_amd, LL=tt_tools.LinearLayout, ctx=ctx,
              modules=[])
    return time.perf_counter() - t0


def _builder(arch):
    """A fresh builder per request (shared MLIR context), so no insertion point leaks between requests."""
    return _W["gluon_ir"].GluonOpBuilder(_W["ctx"], arch or "sm90")


def _elem_ty(b, dtype):
    getters = {
        "f16": b.get_half_ty, "fp16": b.get_half_ty, "bf16": b.get_bf16_ty, "f32": b.get_float_ty,
        "fp32": b.get_float_ty, "f64": b.get_double_ty, "fp64": b.get_double_ty, "i1": b.get_int1_ty,
        "i8": b.get_int8_ty, "i16": b.get_int16_ty, "i32": b.get_int32_ty, "i64": b.get_int64_ty,
        "f8e4nv": b.get_fp8e4nv_ty, "f8e5": b.get_fp8e5_ty, "f8e4b15": b.get_fp8e4b15_ty,
        "f8e4b8": b.get_fp8e4b8_ty, "f8e5b16": b.get_fp8e5b16_ty,
    }
    if dtype not in getters:
        raise ValueError(f"unknown dtype {dtype!r}; known: {sorted(getters)}")
    return getters[dtype]()


_BITWIDTH_DTYPE = {8: "i8", 16: "f16", 32: "f32", 64: "f64"}
_DTYPE_BITS = {"f16": 16, "fp16": 16, "bf16": 16, "f32": 32, "fp32": 32, "f64": 64, "fp64": 64, "i1": 1,
               "i8": 8, "i16": 16, "i32": 32, "i64": 64, "f8e4nv": 8, "f8e5": 8, "f8e4b15": 8, "f8e4b8": 8,
               "f8e5b16": 8}


def _cga_kwargs(spec):
    """cga_layout as given, or converted from the legacy CTAsPerCGA/CTASplitNum/CTAOrder triple."""
    legacy = [spec.get(k) for k in ("ctas_per_cga", "cta_split_num", "cta_order")]
    if any(v is not None for v in legacy):
        if not all(v is not None for v in legacy):
            raise ValueError("ctas_per_cga, cta_split_num and cta_order must be given together")
        if "cga_layout" in spec:
            raise ValueError("give either cga_layout or the legacy ctas_per_cga/cta_split_num/cta_order")
        return {"cga_layout": [list(v) for v in _W["gluon_ir"].make_cga_layout(*legacy)]}
    return {}


def _build_layout(spec, shape=None):
    """Gluon layout object from a request / parent spec."""
    gl, amd = _W["gl"], _W["amd"]
    kind = spec["kind"]
    kw = {k: v for k, v in spec.items() if k not in _RESERVED}
    kw.update(_cga_kwargs(spec))
    if kind == "blocked":
        return gl.BlockedLayout(**kw)
    if kind == "slice":
        return gl.SliceLayout(parent=_build_layout(spec["parent"]), **kw)
    if kind == "nvidia_mma":
        return gl.NVMMADistributedLayout(**kw)
    if kind == "dot_operand":
        return gl.DotOperandLayout(parent=_build_layout(spec["parent"]), **kw)
    if kind == "amd_mfma":
        return amd.AMDMFMALayout(**kw)
    if kind == "amd_wmma":
        return amd.AMDWMMALayout(**kw)
    if kind == "linear":
        kw.setdefault("block_bases", [])
        return gl.DistributedLinearLayout(shape=list(spec.get("shape", shape)), **kw)
    if kind == "nvmma_shared":
        if "rank" not in kw and (spec.get("shape") or shape):
            kw["rank"] = len(spec.get("shape") or shape)
        return gl.NVMMASharedLayout(**kw)
    if kind == "swizzled_shared":
        return gl.SwizzledSharedLayout(**kw)
    if kind == "shared_linear":
        return gl.SharedLinearLayout(**kw)
    if kind == "padded_shared":
        kw.setdefault("cga_layout", [])
        return gl.PaddedSharedLayout(shape=list(spec.get("shape", shape)), **kw)
    raise ValueError(f"unknown layout kind {kind!r}")


def _is_shared(layout):
    return isinstance(layout, _W["gl"]._layouts.SharedLayout)


def _split_top(text):
    """Split on top-level commas (outside <>, [], {}, ())."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "<[{(":
            depth += 1
        elif ch in ">]})":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur).strip())
    return parts


def _attr_from_type(type_text):
    """'tensor<4x8xf16, #ttg.blocked<...>>' -> '#ttg.blocked<...>' (also for !ttg.memdesc<...>)."""
    inner = type_text[type_text.index("<") + 1: type_text.rindex(">")]
    parts = _split_top(inner)
    return parts[1] if len(parts) > 1 else None


_ALIAS_RE = re.compile(r"^(#[A-Za-z_][\w$.-]*) = (.*)$")


def _module_with_arg(b, ty, attrs=None):
    """Module holding `tt.func public @oracle(%arg0: ty)`; returns (module, entry block)."""
    m = b.create_module()
    for k, v in (attrs or {}).items():
        m.set_attr(k, b.get_string_attr(v) if isinstance(v, str) else b.get_int32_attr(int(v)))
    fty = b.get_function_ty([ty] if ty is not None else [], [])
    f = b.get_or_insert_function(m, "oracle", fty, "public", False)
    m.push_back(f)
    _W["modules"].append(m)  # keep alive: the builder's insertion point lives inside it
    blk = f.add_entry_block()
    b.set_insertion_point_to_start(blk)
    b.ret([])
    return m, blk


def _module_text_info(text):
    aliases = {}
    arg_type = None
    for line in text.splitlines():
        mm = _ALIAS_RE.match(line)
        if mm and not line.startswith("#loc"):
            aliases[mm.group(1)] = mm.group(2)
        if "@oracle(" in line:
            s = line[line.index("@oracle(") + len("@oracle("):]
            end = s.rfind(") attributes")
            if end < 0:
                end = s.rfind(")")
            s = s[:end]
            if s.startswith("%arg0: "):
                arg_type = s[len("%arg0: "):]
    return aliases, arg_type


def _ll_dict_from_pairs(bases_pairs, out_dims_pairs):
    bases = {name: [list(v) for v in vecs] for name, vecs in bases_pairs}
    return {
        "in_dims": {name: 1 << len(vecs) for name, vecs in bases.items()},
        "out_dims": {name: int(size) for name, size in out_dims_pairs},
        "bases": bases,
    }


def _ll_props(bases_pairs, out_dims_pairs):
    """Injective / surjective of the layout as a triton.tools.LinearLayout (sizes as given)."""
    LL = _W["LL"]
    ll = LL.from_bases([(n, v) for n, v in bases_pairs], [n for n, _ in out_dims_pairs],
                       [int(s) for _, s in out_dims_pairs], require_surjective=False)
    return {"is_injective": ll.is_injective(), "is_surjective": ll.is_surjective(),
            "is_invertible": ll.is_invertible()}


def _views_wanted(req, shape):
    v = req.get("views")
    if v is None:
        n = 1
        for s in shape:
            n *= int(s)
        return n <= 16384
    return bool(v)


def _layout_response(req, layout, shape, b, module_attrs=None):
    """Common answer for a Gluon layout object and a shape."""
    dtype = req.get("dtype", "f16")
    shared = _is_shared(layout)
    out = {"ok": True, "kind": req.get("kind"), "shared": shared, "shape": list(shape), "dtype": dtype,
           "gluon_repr": repr(layout)}
    if getattr(layout, "cga_layout", None) is not None and any(k in req for k in ("ctas_per_cga",)):
        out["cga_layout_from_legacy"] = [list(v) for v in layout.cga_layout]
    attr = layout._to_ir(b)
    ety = _elem_ty(b, dtype)
    if shared:
        alloc = list(req.get("alloc_shape") or shape)
        ty = b.get_shared_mem_desc_ty(ety, list(shape), attr, alloc)
    else:
        ty = b.get_distributed_ty(ety, list(shape), attr)
    type_text = str(ty)
    out["type"] = type_text
    out["mlir"] = _attr_from_type(type_text)
    m, _ = _module_with_arg(b, ty, module_attrs)
    mtext = m.str_nodebug()
    aliases, arg_type = _module_text_info(mtext)
    out["aliases"] = aliases
    out["type_aliased"] = arg_type
    # Linear layout
    if req.get("kind") == "padded_shared":
        out["bases"] = None
        out["ll_note"] = "to_linear_layout aborts for padded_shared in Triton 3.9 (no plain linear layout)"
    else:
        ll = b.to_linear_layout(attr, list(shape))
        out["ll_repr"] = repr(ll)
        if shared:
            pairs = [("offset", ll.offset_bases), ("block", ll.block_bases)]
            out["alignment"] = ll.alignment
            ll_shape = list(ll.shape)  # SharedLinearLayout.shape: derived from the largest basis per dim
        else:
            pairs = [("register", ll.reg_bases), ("lane", ll.lane_bases), ("warp", ll.warp_bases),
                     ("block", ll.block_bases)]
            ll_shape = list(ll.shape)
        out_pairs = [(f"dim{i}", s) for i, s in enumerate(ll_shape)]
        d = _ll_dict_from_pairs(pairs, out_pairs)
        out["bases"] = d["bases"]
        out["in_dims"] = d["in_dims"]
        out["out_dims"] = d["out_dims"]
        if req.get("props", True):
            try:
                out["props"] = _ll_props(pairs, out_pairs)
            except Exception as e:  # pragma: no cover - informative only
                out["props_error"] = f"{type(e).__name__}: {e}"
        if not shared:
            try:
                out["total_elems_per_thread"] = b.get_total_elems_per_thread(ty)
            except Exception as e:  # pragma: no cover
                out["total_elems_per_thread_error"] = f"{type(e).__name__}: {e}"
    if _views_wanted(req, shape):
        try:
            out["hw_view"] = layout.format_hardware_view(list(shape))
            if req.get("tensor_view"):
                out["tensor_view"] = layout.format_tensor_view(list(shape))
        except Exception as e:
            out["view_error"] = f"{type(e).__name__}: {e}"
    return out


def _do_layout(req):
    b = _builder(req.get("arch"))
    shape = req["shape"]
    layout = _build_layout(req, shape)
    return _layout_response(req, layout, shape, b, req.get("module"))


class _Captured(Exception):
    def __init__(self, exc, text):
        super().__init__(str(exc))
        self.exc, self.text = exc, text


def _capture_stderr(fn):
    """Run fn() with fd 2 redirected to a temp file; return (result, text). MLIR diagnostics go to fd 2."""
    with tempfile.TemporaryFile() as tmp:
        saved = os.dup(2)
        os.dup2(tmp.fileno(), 2)
        try:
            try:
                res = fn()
                exc = None
            except Exception as e:  # re-raised below with the captured text
                res, exc = None, e
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        text = tmp.read().decode(errors="replace")
    if exc is not None:
        raise _Captured(exc, text)
    if text.strip():
        os.write(2, text.encode())
    return res, text


def _do_mlir_attr(req):
    """Parse an attribute text given by the caller, then answer like a layout request."""
    b = _builder(req.get("arch"))
    ir = _W["ir"]
    shape = list(req["shape"])
    attr_text = req["attr"]
    dtype = req.get("dtype", "f16")
    memdesc = req.get("memdesc")
    if memdesc is None:
        memdesc = "shared" in attr_text.split("<", 1)[0]
    dims = "x".join(str(int(s)) for s in shape)
    if memdesc:
        alloc = "x".join(str(int(s)) for s in (req.get("alloc_shape") or shape))
        if alloc != dims:
            raise ValueError("mlir_attr: alloc_shape differing from shape is not supported")
        ty = f"!ttg.memdesc<{dims}x{dtype}, {attr_text}, #ttg.shared_memory, mutable>"
    else:
        ty = f"tensor<{dims}x{dtype}, {attr_text}>"
    mod_attrs = req.get("module") or {}
    attr_items = []
    for k, v in mod_attrs.items():
        attr_items.append(f'"{k}" = "{v}"' if isinstance(v, str) else f'"{k}" = {int(v)} : i32')
    attr_str = (" attributes {" + ", ".join(attr_items) + "}") if attr_items else ""
    text = f"module{attr_str} {{\n  tt.func public @oracle(%arg0: {ty}) {{\n    tt.return\n  }}\n}}\n"
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as fh:
        fh.write(text)
        path = fh.name
    try:
        m, diag = _capture_stderr(lambda: ir.parse_mlir_module(path, _W["ctx"]))
        _W["modules"].append(m)
    except _Captured as e:
        raise RuntimeError(f"{e.exc}; diagnostics: {e.text.strip()}") from None
    finally:
        os.unlink(path)
    f = m.get_function("oracle")
    arg = f.args(0)
    layout = b.get_gluon_layout_from_memdesc(arg) if memdesc else b.get_gluon_layout_from_tensor(arg)
    kind_of = {
        "BlockedLayout": "blocked", "SliceLayout": "slice", "NVMMADistributedLayout": "nvidia_mma",
        "DotOperandLayout": "dot_operand", "AMDMFMALayout": "amd_mfma", "AMDWMMALayout": "amd_wmma",
        "DistributedLinearLayout": "linear", "NVMMASharedLayout": "nvmma_shared",
        "SwizzledSharedLayout": "swizzled_shared", "SharedLinearLayout": "shared_linear",
        "PaddedSharedLayout": "padded_shared",
    }
    sub = dict(req, kind=kind_of.get(type(layout).__name__, type(layout).__name__))
    out = _layout_response(sub, layout, shape, b, mod_attrs)
    out["kind"] = "mlir_attr"
    out["parsed_kind"] = sub["kind"]
    out["parsed_module_text"] = m.str_nodebug()
    return out


def _do_bank_conflicts(req):
    b = _builder(req.get("arch"))
    shape = list(req["shape"])
    reg = _build_layout(req["reg_layout"], shape)
    smem = _build_layout(req["shared_layout"], shape)
    if "bitwidth" in req:
        bitwidth = int(req["bitwidth"])
    else:
        bitwidth = _DTYPE_BITS[req.get("dtype", "f16")]
    reg_attr = reg._to_ir(b)
    smem_attr = smem._to_ir(b)
    # Defaults for the module attributes come from the register layout's own linear layout.
    ll = b.to_linear_layout(reg_attr, shape)
    attrs = {
        "ttg.target": req.get("target", "cuda:90"),
        "ttg.num-warps": int(req.get("num_warps", 1 << len(ll.warp_bases))),
        "ttg.num-ctas": int(req.get("num_ctas", 1 << len(ll.block_bases))),
        "ttg.threads-per-warp": int(req.get("threads_per_warp", 1 << len(ll.lane_bases))),
    }
    m, _ = _module_with_arg(b, None, attrs)
    # The insertion point is inside @oracle (before tt.return); the analysis needs it.
    conflicts = b.get_shared_bank_conflicts(reg_attr, smem_attr, shape, bitwidth)
    reg_ty = str(b.get_distributed_ty(_elem_ty(b, _BITWIDTH_DTYPE.get(bitwidth, "i8")), shape, reg_attr))
    smem_ty = str(b.get_shared_mem_desc_ty(_elem_ty(b, _BITWIDTH_DTYPE.get(bitwidth, "i8")), shape, smem_attr,
                                           list(req.get("alloc_shape") or shape)))
    return {"ok": True, "kind": "bank_conflicts", "conflicts": int(conflicts), "bitwidth": bitwidth,
            "shape": shape, "module_attrs": attrs, "reg_mlir": _attr_from_type(reg_ty),
            "shared_mlir": _attr_from_type(smem_ty)}


# ---- triton.tools.LinearLayout ---------------------------------------------

def _ll_from_spec(spec):
    LL = _W["LL"]
    if "factory" in spec:
        fac = spec["factory"]
        if fac not in ("identity_1d", "strided_1d", "zeros_1d"):
            raise ValueError(f"unknown factory {fac!r}")
        ll = getattr(LL, fac)(*spec["args"])
    elif "product" in spec:
        parts = [_ll_from_spec(s) for s in spec["product"]]
        ll = parts[0]
        for p in parts[1:]:
            ll = ll * p
    else:
        bases = spec.get("bases", {})
        pairs = list(bases.items()) if isinstance(bases, dict) else [(n, v) for n, v in bases]
        pairs = [(n, [list(x) for x in v]) for n, v in pairs]
        od = spec["out_dims"]
        if isinstance(od, dict):
            names, sizes = list(od.keys()), [int(s) for s in od.values()]
        elif od and isinstance(od[0], (list, tuple)):
            names, sizes = [n for n, _ in od], [int(s) for _, s in od]
        else:
            names, sizes = list(od), None
        if sizes is not None and spec.get("infer_sizes"):
            sizes = None
        rs = spec.get("require_surjective", True)
        if sizes is None:
            ll = LL.from_bases(pairs, names, require_surjective=rs)
        else:
            ll = LL.from_bases(pairs, names, sizes, require_surjective=rs)
    return ll


def _ll_to_dict(ll, props=True):
    d = _ll_dict_from_pairs(ll.bases, ll.out_dims)
    if props:
        d["is_injective"] = ll.is_injective()
        d["is_surjective"] = ll.is_surjective()
        d["is_invertible"] = ll.is_invertible()
    return d


def _do_ll_op(req):
    op = req["op"]
    props = req.get("props", True)
    a = _ll_from_spec(req["a"]) if "a" in req else None
    b = _ll_from_spec(req["b"]) if "b" in req else None
    out = {"ok": True, "kind": "ll_op", "op": op}
    if op in ("from_bases", "identity", "build"):
        res = a
    elif op in ("mul", "product", "*"):
        res = a * b
    elif op == "compose":
        res = a.compose(b)
    elif op == "invert":
        res = a.invert()
    elif op == "pseudoinvert":
        res = a.pseudoinvert()
    elif op == "invert_and_compose":
        res = a.invert_and_compose(b)
    elif op == "apply":
        out["result"] = {k: int(v) for k, v in a.apply({k: int(v) for k, v in req["inputs"].items()}).items()}
        return out
    elif op == "apply_all":
        # Evaluate every input combination (in-dim sizes multiply; keep it small).
        d = _ll_dict_from_pairs(a.bases, a.out_dims)
        names = list(d["in_dims"])
        total = 1
        for n in names:
            total *= d["in_dims"][n]
        if total > int(req.get("max_points", 1 << 16)):
            raise ValueError(f"apply_all: {total} points exceed max_points")
        table = []
        for flat in range(total):
            rem, ins = flat, {}
            for n in reversed(names):
                ins[n] = rem % d["in_dims"][n]
                rem //= d["in_dims"][n]
            o = a.apply({n: ins[n] for n in names})
            table.append([[ins[n] for n in names], [int(o[k]) for k in d["out_dims"]]])
        out["in_order"] = names
        out["out_order"] = list(d["out_dims"])
        out["table"] = table
        return out
    elif op in ("eq", "=="):
        out["result"] = bool(a == b)
        return out
    elif op in ("ne", "!="):
        out["result"] = bool(a != b)
        return out
    elif op == "props":
        out["result"] = {
            "is_injective": a.is_injective(), "is_surjective": a.is_surjective(),
            "is_invertible": a.is_invertible(), "num_in_dims": a.num_in_dims, "num_out_dims": a.num_out_dims,
            "in_dim_names": a.get_in_dim_names(), "out_dim_names": a.get_out_dim_names(),
        }
        return out
    elif op == "matrix_view":
        out["result"] = a.get_matrix_view()
        return out
    elif op == "distributed_view":
        out["result"] = a.get_distributed_view(bool(req.get("hw", True)))
        return out
    elif op == "shared_view":
        out["result"] = a.get_shared_view(bool(req.get("hw", True)))
        return out
    elif op == "str":
        out["result"] = str(a)
        return out
    else:
        raise ValueError(f"unknown ll_op {op!r}")
    out["result"] = _ll_to_dict(res, props)
    out["result_str"] = str(res)
    return out


def _do_test_sleep(req):
    """Test hook for the driver's timeout handling."""
    time.sleep(float(req.get("seconds", 1.0)))
    return {"ok": True, "kind": "_sleep"}


def _do_test_abort(req):
    """Test hook for the driver's crash handling (no Triton involved)."""
    os.write(2, b"oracle test hook: calling os.abort()\n")
    os.abort()


def _do_ping(req):
    return {"ok": True, "kind": "ping", "triton_version": _W["triton"].__version__}


_HANDLERS = {k: _do_layout for k in LAYOUT_KINDS}
_HANDLERS.update(ll_op=_do_ll_op, bank_conflicts=_do_bank_conflicts, mlir_attr=_do_mlir_attr, ping=_do_ping,
                 _sleep=_do_test_sleep, _abort=_do_test_abort)


def _answer(req):
    if not isinstance(req, dict) or "kind" not in req:
        return {"ok": False, "error": "bad_request", "message": "request must be an object with a 'kind'"}
    h = _HANDLERS.get(req["kind"])
    if h is None:
        return {"ok": False, "error": "bad_request", "message": f"unknown kind {req['kind']!r}",
                "id": req.get("id")}
    t0 = time.perf_counter()
    try:
        out = h(req)
    except KeyError as e:
        out = {"ok": False, "error": "bad_request", "message": f"missing field {e}"}
    except Exception as e:
        out = {"ok": False, "error": "exception", "exception_type": type(e).__name__, "message": str(e) or repr(e),
               "traceback": traceback.format_exc(limit=4)}
    out["id"] = req.get("id")
    out["elapsed_ms"] = round((time.perf_counter() - t0) * 1000.0, 3)
    return out


def _worker_main(retry_isolated=False):
    # Keep the JSON channel clean: whatever C++ (or Python) prints goes to stderr.
    out_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def emit(obj):
        data = (json.dumps(obj) + "\n").encode()
        view = memoryview(data)
        while view:
            n = os.write(out_fd, view)
            view = view[n:]

    requests = json.loads(sys.stdin.read() or "[]")
    if isinstance(requests, dict):
        requests = [requests]
    try:
        init_s = _w_init()
    except Exception as e:
        os.write(2, f"oracle startup failed: {type(e).__name__}: {e}\n".encode())
        os._exit(3)
    emit({"ready": True, "triton_version": _W["triton"].__version__, "init_s": round(init_s, 4),
          "pid": os.getpid()})
    _serve(requests, emit, retry_isolated)
    emit({"done": True})
    os._exit(0)


def _answer_in_child(requests, lo, hi, emit, at, retried):
    """Answer ``requests[lo:hi]`` in a forked child, writing the index it is on to ``at``; the
    child's exit code as ``Popen`` gives it (-6: the wheel aborted it)."""
    at[:8] = struct.pack("q", lo)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            for i in range(lo, hi):
                at[:8] = struct.pack("q", i)
                os.write(2, f"\n{_MARKER} {i}\n".encode())
                resp = _answer(requests[i])
                if retried:
                    resp["isolated_retry"] = True
                emit({"index": i, "response": resp})
            code = 0
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def _serve(requests, emit, retry_isolated):
    """Answer every request in children forked from this process (Triton imported, its context
    made, no request run), a fresh one after each that dies: the request it was on is retried
    alone (``retry_isolated``, more than one request left), else reported ``{"died": i}``."""
    at = mmap.mmap(-1, 8)
    lo = 0
    while lo < len(requests):
        rc = _answer_in_child(requests, lo, len(requests), emit, at, False)
        if rc == 0:
            return
        k = struct.unpack("q", at[:8])[0]
        if retry_isolated and len(requests) - lo > 1:
            rc = _answer_in_child(requests, k, k + 1, emit, at, True)
        if rc != 0:
            emit({"died": k, "returncode": rc})
        lo = k + 1


# ============================================================================
# Built-in sample (one request per kind); `--write-sample PATH` answers it and
# stores [{"request": ..., "response": ...}, ...] as the format fixture.
# ============================================================================

_B = {"kind": "blocked", "size_per_thread": [1, 4], "threads_per_warp": [8, 4], "warps_per_cta": [4, 1],
      "order": [1, 0]}
_MMA2 = {"kind": "nvidia_mma", "version": [2, 0], "warps_per_cta": [2, 2], "instr_shape": [16, 8]}
_LL_A = {"bases": {"register": [[1, 0], [2, 0]], "lane": [[0, 1], [0, 2], [4, 0]]}, "out_dims": ["dim0", "dim1"]}

SAMPLE_REQUESTS = [
    {"id": "ping", "kind": "ping"},
    dict(_B, id="blocked", shape=[32, 16]),
    dict(_B, id="blocked_cga", shape=[64, 32], cga_layout=[[1, 0], [0, 1]], views=False),
    dict(_B, id="blocked_legacy_cga", shape=[64, 32], ctas_per_cga=[2, 2], cta_split_num=[2, 1], cta_order=[1, 0],
         views=False),
    {"id": "slice", "kind": "slice", "dim": 0, "parent": _B, "shape": [16]},
    {"id": "nvidia_mma_v3", "kind": "nvidia_mma", "version": [3, 0], "warps_per_cta": [4, 1],
     "instr_shape": [16, 64, 16], "shape": [64, 64], "views": False},
    dict(_MMA2, id="nvidia_mma_v2", shape=[32, 16]),
    {"id": "dot_operand", "kind": "dot_operand", "operand_index": 0, "parent": _MMA2, "k_width": 2, "shape": [32, 16]},
    {"id": "amd_mfma", "kind": "amd_mfma", "version": 3, "instr_shape": [32, 32, 8], "transposed": True,
     "warps_per_cta": [2, 2], "shape": [64, 64], "views": False},
    {"id": "amd_wmma", "kind": "amd_wmma", "version": 2, "transposed": True, "warp_bases": [[1, 0], [0, 1]],
     "shape": [32, 32], "views": False},
    {"id": "linear", "kind": "linear", "reg_bases": [[0, 1]], "lane_bases": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]],
     "warp_bases": [[8, 0]], "block_bases": [], "shape": [16, 8]},
    {"id": "nvmma_shared", "kind": "nvmma_shared", "swizzle_byte_width": 128, "element_bitwidth": 16,
     "shape": [8, 64]},
    {"id": "nvmma_shared_transposed_cga", "kind": "nvmma_shared", "swizzle_byte_width": 64, "element_bitwidth": 16,
     "transposed": True, "cga_layout": [[1, 0]], "shape": [64, 64], "views": False},
    {"id": "swizzled_shared", "kind": "swizzled_shared", "vec": 2, "per_phase": 1, "max_phase": 4, "order": [1, 0],
     "shape": [4, 8], "tensor_view": True},
    {"id": "shared_linear", "kind": "shared_linear", "offset_bases": [[0, 1], [0, 2], [1, 0], [2, 0]],
     "alignment": 16, "shape": [4, 4]},
    {"id": "padded_shared", "kind": "padded_shared", "interval_padding_pairs": [[32, 4]],
     "offset_bases": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [1, 0], [2, 0], [4, 0]], "shape": [8, 32]},
    {"id": "mlir_attr", "kind": "mlir_attr", "shape": [128, 256], "views": False,
     "attr": "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], "
             "order = [1, 0], CGALayout = [[1, 0]]}>"},
    {"id": "mlir_attr_legacy_form_rejected", "kind": "mlir_attr", "shape": [128, 256],
     "attr": "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], "
             "order = [1, 0], CTAsPerCGA = [2, 1], CTASplitNum = [2, 1], CTAOrder = [1, 0]}>"},
    {"id": "ll_mul", "kind": "ll_op", "op": "mul", "a": {"bases": {"register": [[1], [2]]}, "out_dims": ["dim0"]},
     "b": {"bases": {"lane": [[1], [2], [4]]}, "out_dims": ["dim1"]}},
    {"id": "ll_compose", "kind": "ll_op", "op": "compose", "a": _LL_A,
     "b": {"bases": {"dim0": [[1], [2], [4]], "dim1": [[8], [16]]}, "out_dims": ["x"]}},
    {"id": "ll_invert", "kind": "ll_op", "op": "invert", "a": _LL_A},
    {"id": "ll_pseudoinvert", "kind": "ll_op", "op": "pseudoinvert",
     "a": {"bases": {"register": [[1], [0], [2]]}, "out_dims": ["dim0"]}},
    {"id": "ll_invert_and_compose", "kind": "ll_op", "op": "invert_and_compose", "a": _LL_A,
     "b": {"product": [{"factory": "identity_1d", "args": [8, "x", "dim0"]},
                       {"factory": "identity_1d", "args": [4, "y", "dim1"]}]}},
    {"id": "ll_apply", "kind": "ll_op", "op": "apply", "a": _LL_A, "inputs": {"register": 3, "lane": 5}},
    {"id": "ll_apply_all", "kind": "ll_op", "op": "apply_all",
     "a": {"bases": {"register": [[1, 0]], "lane": [[0, 1], [1, 1]]}, "out_dims": ["dim0", "dim1"]}},
    {"id": "ll_eq", "kind": "ll_op", "op": "eq", "a": {"bases": {"register": [[1], [2]]}, "out_dims": {"dim0": 4}},
     "b": {"factory": "identity_1d", "args": [4, "register", "dim0"]}},
    {"id": "ll_props", "kind": "ll_op", "op": "props",
     "a": {"bases": {"register": [[1], [2]]}, "out_dims": {"dim0": 8}, "require_surjective": False}},
    {"id": "ll_matrix_view", "kind": "ll_op", "op": "matrix_view", "a": _LL_A},
    {"id": "ll_distributed_view", "kind": "ll_op", "op": "distributed_view", "hw": True,
     "a": {"bases": {"register": [[1, 0]], "lane": [[0, 1], [0, 2], [2, 0]], "warp": [], "block": []},
           "out_dims": ["dim0", "dim1"]}},
    {"id": "ll_apply_aborts", "kind": "ll_op", "op": "apply", "a": _LL_A, "inputs": {"register": 3}},
    {"id": "bank_conflicts_mma3_nvmma128", "kind": "bank_conflicts",
     "reg_layout": {"kind": "nvidia_mma", "version": [3, 0], "warps_per_cta": [4, 1], "instr_shape": [16, 32, 16]},
     "shared_layout": {"kind": "nvmma_shared", "swizzle_byte_width": 128, "element_bitwidth": 32},
     "shape": [128, 64], "bitwidth": 32, "target": "cuda:80", "arch": "sm80"},
    {"id": "bank_conflicts_blocked_colmajor", "kind": "bank_conflicts",
     "reg_layout": {"kind": "blocked", "size_per_thread": [1, 8], "threads_per_warp": [8, 4],
                    "warps_per_cta": [4, 1], "order": [1, 0]},
     "shared_layout": {"kind": "swizzled_shared", "vec": 1, "per_phase": 1, "max_phase": 1, "order": [0, 1]},
     "shape": [64, 64], "dtype": "f16"},
    {"id": "verifier_error", "kind": "blocked", "size_per_thread": [1, 3], "threads_per_warp": [8, 4],
     "warps_per_cta": [4, 1], "order": [1, 0], "shape": [32, 16]},
    {"id": "aborting_layout", "kind": "nvidia_mma", "version": [3, 0], "warps_per_cta": [4, 1],
     "instr_shape": [16, 7, 16], "shape": [64, 64]},
    {"id": "bad_request", "kind": "no_such_kind"},
]


def write_sample(path, **kw):
    res = run_oracle(SAMPLE_REQUESTS, **kw)
    with open(path, "w") as fh:
        json.dump([{"request": q, "response": r} for q, r in zip(SAMPLE_REQUESTS, res)], fh, indent=1)
        fh.write("\n")
    return res


def _driver_main(argv):
    import argparse

    ap = argparse.ArgumentParser(description="Triton layout oracle (see tests/oracles/README.md)")
    ap.add_argument("--worker", action="store_true", help="raw worker mode (JSON lines; a request that aborts "
                    "its forked child is reported as died)")
    ap.add_argument("--retry-isolated", action="store_true",
                    help="worker mode: run a request that aborted its child again alone before reporting it")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per request")
    ap.add_argument("--startup-timeout", type=float, default=300.0)
    ap.add_argument("--indent", type=int, default=None)
    ap.add_argument("--write-sample", metavar="PATH", help="answer the built-in SAMPLE_REQUESTS, store them at PATH")
    args = ap.parse_args(argv)
    if args.worker:
        _worker_main(args.retry_isolated)
        return
    if args.write_sample:
        res = write_sample(args.write_sample, timeout=args.timeout, startup_timeout=args.startup_timeout)
        print(f"wrote {len(res)} request/response pairs to {args.write_sample}")
        return
    data = json.loads(sys.stdin.read() or "[]")
    single = isinstance(data, dict)
    reqs = [data] if single else data
    res = run_oracle(reqs, timeout=args.timeout, startup_timeout=args.startup_timeout)
    json.dump(res[0] if single else res, sys.stdout, indent=args.indent)
    sys.stdout.write("\n")


if __name__ == "__main__":
    _driver_main(sys.argv[1:])
