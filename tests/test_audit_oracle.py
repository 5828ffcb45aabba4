"""Triton's own get_shared_bank_conflicts (the wheel, in a subprocess) agrees with the audit's
conflict-free / conflicted split on the bank checks of the example kernels and the corpus.

Triton's figure is "excess accesses per wavefront" on the shared layout's segment bits (see
verilayout.prove.banks); it is 0 exactly when the access is conflict-free for the pairs here
(whole-word or wider accesses, and byte accesses whose lanes differ by whole rows).
"""
from __future__ import annotations

import glob
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
from tests.oracles import triton_oracle  # noqa: E402

from verilayout.audit import audit_file  # noqa: E402

from tests.reference.ttgir_banks import layouts_of  # noqa: E402

ROOT = HERE.parent
FILES = sorted(glob.glob(str(ROOT / "examples" / "*.ttgir"))) + \
    sorted(glob.glob(str(ROOT / "tests" / "corpus" / "cuda*" / "*.ttgir")))


def _pairs():
    out = []
    for path in FILES:
        for c in audit_file(path).checks:
            if c.check != "bank-conflicts" or c.status not in ("proved", "counterexample"):
                continue
            if c.data.get("subslice") or c.op == "ttg.async_copy_global_to_local":
                continue            # Triton's query: a view's own layout, ld/st.shared vectorised its way
            reg, smem, _, _ = layouts_of(path, c)
            out.append((f"{Path(path).name}:{c.line}", c, reg, smem, list(smem.out_dims.values())))
    return out


def _req(reg, smem, shape, bits):
    b = reg.bases
    return {"kind": "bank_conflicts", "shape": shape, "bitwidth": bits,
            "reg_layout": {"kind": "linear", "reg_bases": b.get("register", []), "lane_bases": b.get("lane", []),
                           "warp_bases": b.get("warp", []), "block_bases": b.get("block", []), "shape": shape},
            "shared_layout": {"kind": "shared_linear", "offset_bases": smem.bases["offset"]}}


def test_triton_agrees_on_the_conflict_free_split():
    if not triton_oracle.oracle_available():
        pytest.skip("the Triton oracle worker does not start")
    pairs = _pairs()
    assert len(pairs) >= 4
    resp = triton_oracle.run_oracle([_req(r, s, sh, c.data["elem_bits"]) for _, c, r, s, sh in pairs])
    seen = {True: 0, False: 0}
    for (name, c, *_), r in zip(pairs, resp):
        assert r.get("ok"), (name, r)
        free = c.status == "proved"
        assert (r["conflicts"] == 0) == free, (name, r["conflicts"], c.message)
        seen[free] += 1
    assert seen[True] and seen[False]          # the sample holds both kinds
