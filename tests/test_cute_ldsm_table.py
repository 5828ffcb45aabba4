"""``audit/cute_dsl_ldmatrix._table`` (numpy over each buffer) against the element-by-element inverse written
here, on the ldsm plans of the Ampere kernels of the stored corpus: the same tag at every shared byte (the
later element where two start at one byte) and the same (buffer, row, col, stage) per tag."""
from __future__ import annotations

import gzip
import itertools
import os

import numpy as np
import pytest

from verilayout.audit import cute_dsl_ldmatrix as ldm
from verilayout.audit.cute_dsl import audit_pair

CORPUS = os.path.join(os.path.dirname(__file__), "cutedsl", "corpus")
KERNELS = ["ampere_gemm_f16_kk_128x128", "ampere_gemm_f16_mn_128x128", "ampere_fa2_f16_d128_128x64"]


def _reference(plans) -> tuple[np.ndarray, np.ndarray, int]:
    rows, tag = [], 1
    for b, p in enumerate(plans):
        cp = p.buffer
        for s, c, r in itertools.product(range(len(cp.stages)), range(cp.en), range(cp.em)):
            rows.append((tag, b, r, c, s, int(cp.swizzle((cp.origin or 0) + cp.stages[s] + cp.rows[r] + cp.cols[c]))))
            tag += 1
    at = np.zeros(max([x[5] for x in rows], default=0) + 1, dtype=np.int64)
    fields = np.full((tag, 4), -1, dtype=np.int64)
    for t, b, r, c, s, a in rows:
        at[a] = t
        fields[t] = (b, r, c, s)
    return at, fields, tag


@pytest.mark.parametrize("name", KERNELS)
def test_table_is_the_element_by_element_inverse(name, monkeypatch) -> None:
    seen = []
    real = ldm._table
    monkeypatch.setattr(ldm, "_table", lambda plans: seen.append(plans) or real(plans))
    text = [gzip.open(os.path.join(CORPUS, f"{name}.{k}.gz"), "rt").read() for k in ("mlir", "ptx")]
    audit_pair(text[0], text[1], f"{name}.ptx")
    assert seen and any(len(p) for p in seen)
    for plans in seen:
        tab, (at, fields, end) = real(plans), _reference(plans)
        assert tab.end == end and np.array_equal(tab.at, at) and np.array_equal(tab.fields, fields)
