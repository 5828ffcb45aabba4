"""What a Triton user can change in Python for a finding, where the finding says enough to tell.

These rules are inferences from how Triton 3.9 picks shared layouts (an MMA operand stored
MN-major gets ``transposed = true`` in its ``#ttg.nvmma_shared``; the swizzle Triton picks
depends on the tile's contiguous extent, so the block size and element width change it), not
cited hardware facts; the precise layout is in the finding's ``best`` data either way.

Law: ``suggestion(c)`` is None for a check that is not a finding, or whose data name no layout.

>>> c = Check("ttg.local_alloc", 68, "k.py:26", "bank-conflicts", "counterexample", "warning", "4-way",
...           {"shared_layout": "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = true, "
...            "elementBitWidth = 8}>"})
>>> suggestion(c).startswith("load this operand with K contiguous")
True
"""
from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Any

from verilayout.audit.model import Check
from verilayout.errors import LayoutError
from verilayout.frontends.prescan import kernel_def_site

_STORES = ("ttg.local_alloc", "ttg.local_store", "ttg.async_copy_global_to_local")


def may_suggest(c: Check) -> bool:
    """Law: False when :func:`suggestion` is None for ``c`` whatever ``gluon`` is (not a
    bank-conflict finding naming its shared layout).

    >>> may_suggest(Check("ttg.local_load", 3, None, "bank-conflicts", "proved", None, "ok"))
    False
    """
    return c.severity in ("error", "warning") and c.check == "bank-conflicts" \
        and bool(str(c.data.get("shared_layout", "")))


def suggestion(c: Check, gluon: bool = False) -> str | None:
    """A Python-level change that may remove the finding ``c`` (see the module docstring); for a
    Gluon kernel (``gluon``: its author writes the shared layout), the layout to write, as Gluon
    code, chosen for every access of the buffer together (``data["joint"]``)."""
    if not may_suggest(c):
        return None
    layout = str(c.data.get("shared_layout", ""))
    joint = c.data.get("joint")
    if gluon and joint:
        return _gluon_suggestion(joint)
    if "nvmma_shared" in layout and "transposed = true" in layout and c.op in _STORES:
        return ("load this operand with K contiguous (e.g. B from a [N, K] row-major tensor, "
                "then tl.trans(b) before tl.dot) so Triton stores it K-major")
    if "nvmma_shared" in layout and c.op in _STORES:
        return ("transpose the stored value with tl.trans before the store, or change the block "
                "size so its contiguous extent fills the swizzle (128 bytes)")
    return _best_suggestion(c.data.get("best"), gluon)


def _best_suggestion(best: object, gluon: bool) -> str | None:
    """The advice of a finding's ``best`` layout (the one the details hold), None without one."""
    if not isinstance(best, dict) or not best.get("layout"):
        return None
    unit = best.get("unit", "wavefronts per warp")
    got, now = best.get("wavefronts_per_warp"), best.get("wavefronts_per_warp_now")
    if isinstance(got, int) and isinstance(now, int) and got >= now:
        return (f"no layout of the kind the details compare does better ({now} {unit}): change the "
                f"register layout of this access (block size, num_warps)")
    fig = f" ({got} {unit} vs {now})" if now is not None else f" ({got} {unit})"
    if gluon and best.get("gluon"):
        return f"allocate this buffer with {best['gluon']} (best for this access alone: {fig[2:]}"
    return f"choose the block size or num_stages whose shared layout is {best['layout']}{fig}"


def _gluon_suggestion(joint: dict) -> str:
    """The Gluon line of a buffer's joint layout (see :func:`joint_layout`)."""
    per = ", ".join(f"{a['role']} at {a.get('loc') or 'line ' + str(a['line'])}: {a['before']} -> "
                    f"{a['after']}" for a in joint["accesses"])
    at = joint.get("alloc_loc") or f"line {joint['alloc_line']}"
    if joint["wavefronts_per_warp"] >= joint["wavefronts_per_warp_now"]:
        if joint.get("mma_transposed") is not None:
            return (f"no gl.NVMMASharedLayout with transposed={joint['mma_transposed']} (an MMA reads "
                    f"this buffer) does better ({joint['wavefronts_per_warp_now']} wavefronts per warp "
                    f"now): store a value whose register layout runs along the buffer's contiguous dim")
        return (f"no shared layout Gluon names does better for this buffer's accesses together "
                f"({joint['wavefronts_per_warp_now']} wavefronts per warp now): change the register "
                f"layout of the store or the load so both run along the same contiguous dim")
    return (f"allocate this buffer ({at}) with {joint['gluon']}, chosen for all "
            f"its accesses (wavefronts per warp: {per})")


# ----- one layout for every access of a buffer (the Gluon author writes it) -----------------

def gluon_code(cand: Any, elem_bits: int, rank: int) -> str | None:
    """The Gluon constructor call of a candidate of :func:`verilayout.synth.swizzle.synthesize`
    (the keyword names of ``triton.experimental.gluon.language`` 3.9's ``_layouts.py``): the GF(2)
    optimum (``params["linear"]``) as ``gl.SharedLinearLayout`` of its offset bases; None for a
    layout of no kind Gluon names.

    >>> from types import SimpleNamespace as N
    >>> gluon_code(N(params={"vec": 8, "perPhase": 1, "maxPhase": 8, "order": [1, 0]}), 16, 2)
    'gl.SwizzledSharedLayout(vec=8, per_phase=1, max_phase=8, order=[1, 0])'
    >>> gluon_code(N(params={"swizzle_byte_width": 128, "transposed": False}), 16, 2)
    'gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2, transposed=False)'
    """
    p = cand.params
    if p.get("linear"):
        bases = [[int(v) for v in b] for b in cand.layout.bases["offset"]]
        return f"gl.SharedLinearLayout(offset_bases={bases})"
    if "vec" in p:
        return (f"gl.SwizzledSharedLayout(vec={int(p['vec'])}, per_phase={int(p['perPhase'])}, "
                f"max_phase={int(p['maxPhase'])}, order={[int(o) for o in p['order']]})")
    if "swizzle_byte_width" in p:
        return (f"gl.NVMMASharedLayout(swizzle_byte_width={int(p['swizzle_byte_width'])}, "
                f"element_bitwidth={int(elem_bits)}, rank={int(rank)}, transposed={bool(p['transposed'])})")
    return None


def joint_layout(accesses: list, elem_bits: int, nvmma_transposed: bool | None = None) -> dict | None:
    """The named shared layout with the fewest wavefronts per warp summed over every access of one
    buffer (``accesses``: ``[(register layout, "write"|"read"), ...]``, the store(s) and load(s) of
    one allocation), its Gluon code and each access's wavefronts per warp with it; None when the
    synthesis cannot place these layouts. ``nvmma_transposed`` (the buffer is an ``nvmma_shared``
    an MMA reads): only ``nvmma_shared`` layouts of that majorness are candidates.

    Candidates (:func:`_joint_candidates`) are each re-costed over all the accesses by the audit's
    own figure (:func:`_audit_cost`: the widest ld/st.shared Triton's lowering takes, as the finding
    counts it), so the figures after are what the audit of the recompiled kernel reports.
    """
    seen, best = set(), None
    for c in _joint_candidates(accesses, elem_bits, nvmma_transposed):
        if c.mlir in seen:
            continue
        seen.add(c.mlir)
        try:
            costs = [_audit_cost(lay, c.layout, elem_bits, role == "write") for lay, role in accesses]
        except LayoutError:
            continue
        if best is None or sum(t for t, _ in costs) < sum(t for t, _ in best[1]):
            best = (c, costs)
    if best is None:
        return None
    c, costs = best
    return {"layout": c.mlir, "gluon": gluon_code(c, elem_bits, len(c.layout.out_dims)),
            "wavefronts_per_warp": sum(t for t, _ in costs), "after": [t for t, _ in costs],
            "instructions": [i for _, i in costs]}


def _audit_cost(reg: Any, smem: Any, elem_bits: int, store: bool) -> tuple[int, str]:
    """(wavefronts per warp, instruction) of one access as the bank-conflict check counts it."""
    from verilayout.hw.nvidia.banks import BankModel  # deferred: start-up (numpy)
    from verilayout.prove.banks import linear_analysis_and_triton  # deferred: start-up (numpy, z3)
    res, _ = linear_analysis_and_triton(reg, smem, elem_bits, None, BankModel(), store, 2)
    return res.wavefronts * res.plan.instructions_per_warp, res.plan.instruction.name


def _joint_candidates(accesses: list, elem_bits: int, nvmma_transposed: bool | None):
    """Named layouts to re-cost for a buffer: every ``nvmma_shared`` mode of the fixed majorness
    (an MMA reads the buffer), else the named ones ``synthesize`` finds per (write, read) pair."""
    from verilayout.synth.swizzle import mlir_text, nvmma_shared_layout, synthesize  # deferred: start-up (numpy)
    if nvmma_transposed is not None:
        dims = dict(accesses[0][0].out_dims)
        for sw in (0, 32, 64, 128):
            try:
                lay = nvmma_shared_layout(list(dims.values()), sw, elem_bits, nvmma_transposed)
            except LayoutError:
                continue
            params = {"swizzle_byte_width": sw, "transposed": nvmma_transposed}
            lay = lay.transpose_outs(list(dims))
            yield SimpleNamespace(name=f"wgmma {sw}B", layout=lay, params=params,
                                  mlir=mlir_text("wgmma", params, lay, elem_bits))
        return
    writes = [lay for lay, role in accesses if role == "write"]
    reads = [lay for lay, role in accesses if role == "read"]
    for w, r in [(writes[0] if writes else None, r) for r in reads] or [(writes[0], None)]:
        try:
            plan = synthesize(w, r, elem_bits=elem_bits)
        except LayoutError:
            continue
        yield from (c for c in list(plan.wgmma.values()) + [plan.swizzled] if c is not None)
    for w, r in [(writes[0] if writes else None, r) for r in reads] or [(writes[0], None)]:
        try:                    # the GF(2) optimum of the pair: taken only where no named one is as good
            best = synthesize(w, r, elem_bits=elem_bits).best
        except LayoutError:
            continue
        yield SimpleNamespace(name="linear", layout=best.layout, params={"linear": True}, mlir=best.mlir)


# ----- is this a Gluon kernel? --------------------------------------------------------------

#: How Gluon is told from Triton. Triton 3.9 writes the same TTGIR module attributes for both
#: (``ttg.num-warps``, ``ttg.target``, ...; seen compiling one kernel each way), so the TTGIR text
#: alone holds no marker. What does: (1) Triton's cache keeps each stage's file, and only the Gluon
#: pipeline has a ``glir`` stage (``backends/nvidia/compiler.py`` ``add_stages``): ``<name>.glir``
#: beside ``<name>.ttgir``; (2) the compile hook sees ``src.language`` (``Language.GLUON``);
#: (3) else the kernel's own source, where it can be read: the ``tt.func``'s ``loc`` names the
#: ``def`` line, and a decorator above it that names ``gluon`` (``@gluon.jit``).
GLUON_RULE = ("Gluon kernel: a .glir file beside the .ttgir (Triton's cache keeps the Gluon "
              "pipeline's glir stage), or a @gluon decorator on the def line the tt.func's loc names")


def gluon_kernel(path: str | None, text: str) -> bool:
    """True when the TTGIR ``text`` (read from ``path``) was compiled from a Gluon kernel
    (:data:`GLUON_RULE`).

    >>> gluon_kernel(None, 'module {\\n}')
    False
    """
    if path and path.endswith(".ttgir") and os.path.isfile(path[:-len(".ttgir")] + ".glir"):
        return True
    src = kernel_def_site(text)
    if src is None or not src[0].endswith(".py") or not os.path.isfile(src[0]):
        return False
    try:
        with open(src[0], encoding="utf-8", errors="replace") as f:
            lines = f.read(1 << 22).splitlines()
    except OSError:
        return False
    for ln in reversed(lines[max(0, src[1] - 9):src[1] - 1]):
        s = ln.strip()
        if not s.startswith("@"):
            if s and not s.startswith("#"):
                break
            continue
        if "gluon" in s:
            return True
    return False
