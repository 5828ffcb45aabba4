"""``simulate.ptx_run.run_ctas`` (the CTAs of a grid run as one batch of lanes) against its law:
the runs of :func:`~verilayout.simulate.ptx_run.run_threads`, one CTA at a time, event by event
(op, line, order, threads and every operand value).

Oracles: the one-CTA interpreter run here CTA by CTA, on PTX written here (threads of different
CTAs at different program counters, a register only some CTAs write, a loaded tag) and on the
emitted persistent sm_90a GEMM's PTX (nvcc), whose CTAs take different numbers of tiles.
"""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from verilayout.frontends.ptx import parse_ptx
from verilayout.simulate import ptx_run
from verilayout.simulate.ptx_run import run_ctas, run_threads

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc (CUDA 12 or newer) is "
                                "not installed; the GEMM's PTX is compiled here")


def _same(a, b) -> None:
    """``a`` and ``b`` are the same run: completion, reason, threads, and each event whole."""
    assert (a.complete, a.reason, a.threads) == (b.complete, b.reason, b.threads)
    assert len(a.events) == len(b.events)
    for x, y in zip(a.events, b.events):
        assert (x.op, x.line, x.seq, x.lanes.tolist()) == (y.op, y.line, y.seq, y.lanes.tolist())
        assert list(x.values) == list(y.values), x
        for key, u in x.values.items():
            v = y.values[key]
            assert (u is None) == (v is None), (x, key)
            if u is not None:
                assert u.dtype == v.dtype and np.array_equal(u, v), (x, key)


def _no_solo(*_a, **_k):
    raise AssertionError("a CTA was run alone")


def _solo(mod, func, threads, ctas, nctaid, size=1, **kw):
    return [run_threads(mod, func, threads, ctaid=b, nctaid=nctaid, cluster_rank=b % size,
                        cluster_size=size, **kw) for b in ctas]


# Each CTA loops %ctaid.x + 1 times; CTA 0's thread 1 leaves early; %r9 is written only on the
# loop's second trip (so some CTAs read it, at the store, before any of their threads wrote it:
# the store records it as unknown for those CTAs and as the written value for the others); %r11
# is first written by thread 0 alone, on trip %ctaid.x (a later step for each CTA), and stored by
# both threads (thread 1 holds what its own CTA's first write computed for it).
LOOPS = """.version 8.7
.visible .entry f()
{
mov.u32 %r1, %ctaid.x;
mov.u32 %r2, %tid.x;
mov.u32 %r3, 0;
setp.eq.u32 %p3, %r1, 0;
setp.eq.u32 %p4, %r2, 1;
and.pred %p5, %p3, %p4;
@%p5 bra END;
LOOP:
st.shared.u32 [%r3], %r9;
setp.ne.u32 %p2, %r3, 0;
@%p2 mov.u32 %r9, %r2;
setp.eq.u32 %p6, %r3, %r1;
setp.eq.u32 %p7, %r2, 0;
and.pred %p8, %p6, %p7;
@!%p8 bra SKIP;
add.u32 %r11, %r3, 100;
SKIP:
add.u32 %r3, %r3, 1;
setp.le.u32 %p1, %r3, %r1;
@%p1 bra LOOP;
st.shared.u32 [%r3+64], %cluster_ctarank;
st.shared.u32 [%r3+128], %r11;
END:
ret;
}
"""


@pytest.mark.parametrize("ctas,size", [([0, 1, 2, 3], 1), ([0, 1, 2, 3, 4, 5], 2), ([5, 2], 1), ([3], 1)])
def test_the_batch_is_each_cta_run_alone(ctas, size, monkeypatch):
    mod = parse_ptx(LOOPS)
    if len(ctas) > 1:        # one batch: no CTA is run alone
        monkeypatch.setattr(ptx_run, "run_threads", _no_solo)
    got = run_ctas(mod, "f", [0, 1], ctas, nctaid=8, cluster_size=size)
    monkeypatch.undo()
    want = _solo(mod, "f", [0, 1], ctas, 8, size)
    assert len(got) == len(ctas)
    for a, b in zip(got, want):
        _same(a, b)
    # written here: CTA c runs the loop c + 1 times: c + 1 stores in it, 2 after it
    assert [len(r.events) for r in got] == [b + 3 for b in ctas]


def test_a_loaded_tag_and_an_unmodelled_value_give_each_cta_its_own_run():
    """A loaded value (its address tag) and a run that stops on a value not modelled: the batch
    meets state the CTAs could share and the answer is still each CTA's own run."""
    text = LOOPS.replace("mov.u32 %r3, 0;", "mov.u32 %r3, 0;\nld.global.u32 %r7, [%r1];\n"
                         "st.global.u32 [%r1+8], %r7;")
    for src in (text, LOOPS.replace("setp.le.u32 %p1, %r3, %r1;", "setp.le.u32 %p1, %r3, %r8;")):
        mod = parse_ptx(src)
        got = run_ctas(mod, "f", [0, 1], [0, 1, 2], nctaid=3)
        for a, b in zip(got, _solo(mod, "f", [0, 1], [0, 1, 2], 3)):
            _same(a, b)
    # %r8 is never written: the setp reading it leaves %p1 unknown, and the branch stops the run
    assert not got[0].complete and "bra reads %p1" in got[0].reason


@needs_nvcc
@pytest.mark.parametrize("cfg", [dict(), dict(splits=2, swap_ab=True)])
def test_every_cta_of_the_persistent_gemm_runs_as_alone(cfg):
    from verilayout.emit.cuda_gemm import emit_gemm
    from verilayout.simulate.gemm_check import PARAMS, SMEM_BASE
    from verilayout.simulate.independent import compile_ptx
    e = emit_gemm("bf16", tile=(64, 16, 64) if cfg else (128, 64, 64), stages=3, **cfg)
    ok, ptx = compile_ptx(e.files["kernel.cu"])
    assert ok, ptx
    mod = parse_ptx(ptx)
    entry = next(f for f in mod.functions if "vl_gemm_kernel" in f)
    kw = dict(param_values=PARAMS(300, 40, 192), shared_base=SMEM_BASE)
    for grid in (2, 7):
        with pytest.MonkeyPatch.context() as mp:      # one batch: no CTA is run alone
            mp.setattr(ptx_run, "run_threads", _no_solo)
            got = run_ctas(mod, entry, [0, 128], range(grid), nctaid=grid, **kw)
        for a, b in zip(got, _solo(mod, entry, [0, 128], range(grid), grid, **kw)):
            assert a.complete
            _same(a, b)
