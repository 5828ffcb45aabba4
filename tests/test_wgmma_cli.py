"""`verilayout wgmma ...`: exit codes, errors, JSON, help texts.

Expected values are the seeds' (003_ce87ea73fe8bc8cb.txt: the tutorial's descriptor fields and
store indexing; 000_2b23e188beadbf0d.txt: the encodings) and the bit positions of the issue.
"""
from __future__ import annotations

import json

import pytest

from verilayout.cli.main import main

K128 = "Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_8),(_64,_1)):((_64,_512),(_1,_0))"
A_K_NONE = "Sw<0,4,3> o smem_ptr16b o ((_8,8),(_8,2)):((_8,_64),(_1,512))"   # seed 003


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_fragment_prints_bases_and_owners(capsys):
    rc, out, _ = run(capsys, "wgmma", "fragment", "m64n32k16", "--operand", "D", "--dtype", "f16",
                     "--acc", "f32")
    assert rc == 0
    assert "16 elements d0..d15 in 16 .f32 registers" in out
    assert "lane: [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]" in out
    # seed 003: thread 5 (lane 5) stores d0 at row 1, col (5 % 4) * 2 = 2
    row1 = [line for line in out.splitlines() if line.startswith("   1 ")][0].split()
    assert row1[3] == "T5:d0"


def test_fragment_json(capsys):
    rc, out, _ = run(capsys, "wgmma", "fragment", "m64n16k8", "--operand", "A", "--dtype", "tf32",
                     "--json")
    d = json.loads(out)
    assert rc == 0 and d["registers"] == 4 and d["layout"]["bases"]["register"] == [[8, 0], [0, 4]]


def test_decode_and_encode_round_trip(capsys):
    rc, out, _ = run(capsys, "wgmma", "encode", "--start", "0x400", "--lbo", "16", "--sbo", "1024",
                     "--swizzle", "128B", "--json")
    d = json.loads(out)
    assert rc == 0 and int(d["value"], 16) == (0x400 >> 4 | 1 << 16 | 64 << 32 | 1 << 62)
    rc, out, _ = run(capsys, "wgmma", "decode", d["value"])
    assert rc == 0 and "SBO            1024 bytes (field 64)" in out and "128B" in out


def test_decode_reports_broken_fields_with_exit_1(capsys):
    rc, out, _ = run(capsys, "wgmma", "decode", hex(1 << 49 | 8 << 32))   # base offset, no swizzle
    assert rc == 1 and "base-offset-no-swizzle" in out


@pytest.mark.parametrize("argv,msg", [
    (["encode", "--lbo", "40"], "error: lbo = 40 bytes is not a multiple of 16"),
    (["encode", "--sbo", "0x40000"], "does not fit the 14-bit field"),
    (["decode", "0xnothex"], "expected a 64-bit integer"),
    (["fragment", "m64n33k16", "--dtype", "f16"], "N = 33 is not valid"),
    (["synth", "--dtype", "tf32", "--major", "MN", "--mn", "64", "--k", "64"], "only for f16/bf16"),
    (["verify", "--desc", "0x0", "--layout", "((8,", "--dtype", "f16", "--major", "K"], "error: "),
])
def test_bad_input_is_one_error_line_and_exit_2(capsys, argv, msg):
    rc, out, err = run(capsys, "wgmma", *argv)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and msg in err


def test_verify_proves_the_tutorial_descriptor(capsys):
    # seed 003: A K-major none, LBO 64, SBO 8
    desc = hex(64 << 16 | 8 << 32)
    rc, out, _ = run(capsys, "wgmma", "verify", "--desc", desc, "--layout", A_K_NONE,
                     "--dtype", "f16", "--major", "K")
    assert rc == 0 and out.splitlines()[1].startswith("proved:")


def test_verify_counterexample_names_coordinate_and_addresses(capsys):
    desc = hex(8 << 16 | 64 << 32)            # LBO and SBO swapped
    rc, out, _ = run(capsys, "wgmma", "verify", "--desc", desc, "--layout", A_K_NONE,
                     "--dtype", "f16", "--major", "K", "--json")
    d = json.loads(out)
    assert rc == 1 and d["status"] == "counterexample"
    c = d["counterexample"]
    assert (c["mn"], c["k"], c["layout_address"], c["descriptor_address"]) == (8, 0, 128, 1024)


def test_desc_all_k_blocks_and_json(capsys):
    rc, out, _ = run(capsys, "wgmma", "desc", "--layout", K128, "--dtype", "f16", "--major", "K",
                     "--k-block", "all", "--json")
    plans = json.loads(out)
    assert rc == 0 and [p["descriptor"]["start_address"] for p in plans] == [0, 32, 64, 96]
    assert all(p["verdict"]["proved"] for p in plans)


def test_desc_unexpressible_layout_is_a_finding_exit_1(capsys):
    # rows 72 elements apart (144 bytes): no LBO/SBO pair of 16-byte multiples with a 128-byte
    # core-matrix row reads it -- a finding about the layout (exit 1), not unreadable input (2)
    rc, out, err = run(capsys, "wgmma", "desc", "--layout", "((_8,_8),(_64,_1)):((_72,_576),(_1,_0))",
                       "--dtype", "f16", "--major", "K")
    assert rc == 1 and "no sm_90 descriptor reads this layout" in out and err == ""


def test_desc_k_block_word_is_one_line_error(capsys):
    rc, _, err = run(capsys, "wgmma", "desc", "--layout", K128, "--dtype", "f16", "--major", "K",
                     "--k-block", "some")
    assert rc == 2 and err.startswith("error: --k-block 'some'") and err.count("\n") == 1


def test_synth_prints_layout_step_and_proof(capsys):
    rc, out, _ = run(capsys, "wgmma", "synth", "--dtype", "bf16", "--major", "MN", "--mn", "64",
                     "--k", "64")
    assert rc == 0
    assert "K-block step 2048 bytes" in out and out.rstrip().splitlines()[-1].startswith("proved:")


@pytest.mark.parametrize("sub", ["fragment", "decode", "encode", "verify", "desc", "synth"])
def test_every_subcommand_help_teaches_with_an_example(capsys, sub):
    with pytest.raises(SystemExit) as e:
        main(["wgmma", sub, "--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0 and "examples:" in out and f"verilayout wgmma {sub}" in out


def _help_examples():
    import argparse
    from verilayout.cli.main import build_parser
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    wg = sub.choices["wgmma"]
    wsub = next(a for a in wg._actions if isinstance(a, argparse._SubParsersAction))
    out = []
    for name, p in [("wgmma", wg)] + sorted(wsub.choices.items()):
        text = (p.epilog or "").replace("\\\n", " ")
        out += [line.strip() for line in text.splitlines() if line.strip().startswith("verilayout ")]
    return out


@pytest.mark.parametrize("example", _help_examples())
def test_every_help_example_runs(capsys, example):
    import shlex
    rc = main(shlex.split(example)[1:])
    capsys.readouterr()
    assert rc == 0, example
