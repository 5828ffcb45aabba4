"""The per-process answers by content of the shared-memory checks (``prove.smem_address.remembered``,
``ptx_elements._by_content``, ``ptx_smem._COSTS``, the layouts' bytes) change no check: each
corpus file audited with every such table empty (nothing carried from another file) gives the
same checks, message and data included, as the same file audited after the others, in another
order, with the tables full, and after the tables were emptied in the middle of a run (their
bound)."""
import pathlib

import pytest

from verilayout.audit import audit_ptx_file
from verilayout.audit import ptx_elements, ptx_smem
from verilayout.prove import smem_address

CORPUS = pathlib.Path(__file__).parent / "corpus"
#: kernels with conversions through scratch, ldmatrix/stmatrix, pipelined copies, reductions
NAMES = ["cuda90/transpose2d_64x64_w4", "cuda90/layer_norm_b1024_w4", "cuda80/matmul_f16_64x64x32_w4_s2",
         "cuda90/softmax_rows_4x256_w4", "cuda90/ws_roundtrip_64x64_w4_2_1", "cuda90/attention_fwd_d64_128x64_w4_s2"]


def _clear() -> None:
    smem_address._TERM_ANSWERS.clear()
    ptx_elements._BY_CONTENT.clear()
    ptx_elements._LAYOUT_BYTES.clear()
    ptx_smem._COSTS.clear()
    ptx_smem._warp_cost.cache_clear()


def _checks(name: str) -> list[str]:
    path = CORPUS / f"{name}.ptx"
    if not path.exists():
        pytest.skip(f"{path} not in this checkout")
    return [repr(c) for c in audit_ptx_file(str(path)).checks]


def test_warm_tables_change_no_check():
    cold = {}
    for name in NAMES:
        _clear()
        cold[name] = _checks(name)
    assert any("smem-address" in c for got in cold.values() for c in got)
    for name in reversed(NAMES):                 # every table full of the other files' answers
        assert _checks(name) == cold[name], name
    for k, name in enumerate(NAMES):             # emptied in the middle of a run
        if k % 2:
            ptx_elements._BY_CONTENT.clear()
            smem_address._TERM_ANSWERS.clear()
        assert _checks(name) == cold[name], name
