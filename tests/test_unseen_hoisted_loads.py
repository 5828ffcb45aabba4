"""A conversion before a loop whose scratch loads LLVM hoisted, all of them, into the loop's preheader
under ``.loc <file> 0`` (line 0: no source line): the round is its line's stores and the next epoch's
loads when every access of that epoch is on line 0. Before, the conversion had no round at all: it was
never compared (no ``smem-address`` check of it), and a load moved onto another thread's bytes was
no error (only the weaker "every byte read was written" of the scratch rounds held).

Seen in the harvest (lightllm ``flash_decode_stage1``, axolotl ``absorb_bwd_kernel``: the conversion
proved instead of a "scratch round") and on sglang 0.5.23's ``flash_mla_sm120_triton`` (cuda:100,
a false "stores ... that no load reads" warning). The kernel below is its shape: a masked
``q`` loaded in a 1-D blocked layout, used in the loop in the slice layout of a 2-D one.

Triton is the oracle (its correct output is proved, never an error); the expected lines are read from
the texts: the TTGIR line of the first ``ttg.convert_layout``, the PTX lines under ``.loc 1 0``.
"""
from __future__ import annotations

import re

import pytest

from audited import audit_pair

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def _qk(Q, K, Y, n, D: tl.constexpr, T: tl.constexpr):
    offs = tl.arange(0, D)
    q = tl.load(Q + offs, mask=offs < D - 64, other=0.0).to(tl.float32) * 2.0
    acc = tl.zeros([T], dtype=tl.float32)
    for t in range(0, n, T):
        kv = tl.load(K + (t + tl.arange(0, T))[:, None] * D + offs[None, :], mask=(offs < D - 64)[None, :], other=0.0)
        acc += tl.sum(q[None, :] * kv.to(tl.float32), axis=1)
    tl.store(Y + tl.arange(0, T), acc)


_CACHE: dict = {}


def kernel(cc: int) -> tuple[str, str]:
    if cc not in _CACHE:
        from triton.backends.compiler import GPUTarget
        sig = {"Q": "*bf16", "K": "*bf16", "Y": "*fp32", "n": "i32", "D": "constexpr", "T": "constexpr"}
        src = triton.compiler.ASTSource(_qk, sig, {"D": 512, "T": 16},
                                        attrs={(i,): [["tt.divisibility", 16]] for i in range(3)})
        k = triton.compile(src, target=GPUTarget("cuda", cc, 32), options={"num_warps": 4})
        _CACHE[cc] = k.asm["ttgir"], k.asm["ptx"]
    return _CACHE[cc]


def _first_conversion(ttgir: str) -> int:
    return next(n for n, s in enumerate(ttgir.splitlines(), 1) if "ttg.convert_layout" in s)


def _lineless_loads(ptx: str) -> list[int]:
    """PTX lines of ``ld.shared`` under a ``.loc`` of line 0."""
    out, zero = [], False
    for n, text in enumerate(ptx.splitlines(), 1):
        m = re.match(r"\s*\.loc\s+\d+\s+(\d+)\s", text)
        if m:
            zero = m.group(1) == "0"
        elif zero and re.match(r"\s*ld\.shared\.", text):
            out.append(n)
    return out


@pytest.mark.parametrize("cc", [80, 90, 100])
def test_conversion_is_proved(cc):
    ttgir, ptx = kernel(cc)
    line = _first_conversion(ttgir)
    checks = [c for c in audit_pair(ttgir, ptx, "k").checks if c.check == "smem-address"]
    assert not [c for c in checks if c.severity == "error"]
    mine = [c.status for c in checks if (c.data or {}).get("ttgir_line") == line]
    assert mine == ["proved"], [c.message[:160] for c in checks]


def test_the_sm80_conversion_loads_are_all_on_line_0():
    assert len(_lineless_loads(kernel(80)[1])) >= 2     # the shape the test is about


def test_planted_hoisted_load_is_an_error():
    """The first line-0 load moved 16 bytes on reads another thread's elements."""
    ttgir, ptx = kernel(80)
    at = _lineless_loads(ptx)[0]
    lines = ptx.splitlines()
    lines[at - 1] = re.sub(r"\[(%r\d+)(\+(\d+))?\]", lambda m: f"[{m.group(1)}+{int(m.group(3) or 0) + 16}]",
                           lines[at - 1])
    checks = audit_pair(ttgir, "\n".join(lines) + "\n", "k").checks
    assert any(c.check == "smem-address" and c.severity == "error" and c.line == at for c in checks)
