"""Placement: a shared layout at a byte address (``base + L``) in ``banks``, specs and the CLI.

The expected figures come from the brute-force counter of ``tests/reference/banks.py``, fed an
element -> offset table built here by enumerating the layout's offsets and adding the base (no
verilayout address model involved), with the widest aligned contiguous vector found by brute
force. Why the base matters (a derivation): an access of ``A`` bits needs an ``A/8``-byte aligned
address (PTX ISA, ld/st "the address must be naturally aligned"), so a base that is a multiple of
8 but not 16 forbids ``ld.shared.v4.b32``; a base that is a multiple of 4 moves every element to
``bank + base/4 (mod 32)``, a bijection on banks, so the figure of an access that is still legal
does not change; a 2-byte base puts two f16 elements of one word into two words.
"""
from __future__ import annotations

import json
import textwrap

import pytest

from tests.reference.banks import auto_count
from verilayout.cli.main import main
from verilayout.errors import LayoutError
from verilayout.frontends.triton import parse
from verilayout.hw.nvidia.banks import placed
from verilayout.prove.banks import check_banks

REG = {
    "rows8": "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>",
    "rows2": "#ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>",
    "cols": "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [0, 1]}>",
}
SMEM = {
    "plain": "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>",
    "sw8": "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 4, order = [1, 0]}>",
    "sw2": "#ttg.swizzled_shared<{vec = 2, perPhase = 2, maxPhase = 8, order = [1, 0]}>",
}
BASES = [0, 2, 4, 6, 8, 12, 16, 0x480, 0x488, 0x4A2]


def _offset_table(smem) -> dict:
    """coords -> element offset, by enumerating every offset of the (bijective) shared layout."""
    table = {}
    for o in range(smem.in_dims["offset"]):
        c = smem.apply({"offset": o, **{d: 0 for d in smem.in_dim_names if d != "offset"}})
        table[tuple(c[d] for d in smem.out_dim_names)] = o
    return table


@pytest.mark.parametrize("dtype,bits", [("f16", 16), ("f32", 32), ("i8", 8)])
@pytest.mark.parametrize("reg_name", sorted(REG))
@pytest.mark.parametrize("smem_name", sorted(SMEM))
def test_placed_figures_equal_brute_force(dtype, bits, reg_name, smem_name):
    reg = parse(REG[reg_name], [32, 32])
    smem = parse(SMEM[smem_name], [32, 32])
    table = _offset_table(smem)
    names = smem.out_dim_names
    for base in BASES:
        if base * 8 % bits:
            with pytest.raises(LayoutError, match="multiple of the element size"):
                placed(smem, base, bits)
            continue
        shift = base * 8 // bits
        ref = ({d: smem.out_dims[d] for d in names}, lambda c: shift + table[tuple(c[d] for d in names)])
        elems, wavefronts = auto_count(reg, ref, bits)
        rep = check_banks(reg, placed(smem, base, bits), elem_bits=bits)
        assert (rep.vector_elems, rep.wavefronts) == (elems, wavefronts), (base, rep.instruction)


def test_a_base_that_is_8_but_not_16_byte_aligned_narrows_the_vector():
    # rows8 x sw8, f16: 8 contiguous f16 per lane = one 16-byte ld.shared.v4.b32 at base 0x480
    # (1152 = 72 * 16); at 0x488 the same bytes are only 8-byte aligned: two v2 accesses.
    reg = parse(REG["rows8"], [32, 32])
    smem = parse(SMEM["sw8"], [32, 32])
    at = {b: check_banks(reg, placed(smem, b, 16), elem_bits=16) for b in (0x480, 0x488)}
    assert (at[0x480].instruction, at[0x488].instruction) == ("ld.shared.v4.b32", "ld.shared.v2.b32")


@pytest.mark.parametrize("base", [-16, 1 << 32, 1.5, True])
def test_bad_bases_are_layout_errors(base):
    smem = parse(SMEM["plain"], [32, 32])
    with pytest.raises(LayoutError, match="base address"):
        placed(smem, base, 16)


def test_cli_base_address(capsys):
    args = ["banks", "-t", "tensor<32x32xf16>", "--reg", REG["rows8"], "--smem", SMEM["sw8"], "--json"]
    assert main(args + ["--base-address", "0x488"]) == 0
    assert json.loads(capsys.readouterr().out)["instruction"] == "ld.shared.v2.b32"
    assert main(args + ["--base-address", "3"]) == 2
    assert "multiple of the element size" in capsys.readouterr().err


@pytest.mark.parametrize("base,rc", [("0x488", 0), ("0x480", 1)])
def test_spec_base_address(tmp_path, capsys, base, rc):
    # at 0x488 the auto access is v2 (2 wavefronts), at 0x480 v4 (4): "at most 2" holds only there
    spec = tmp_path / "placed.toml"
    spec.write_text(textwrap.dedent(f"""
        [layouts.reg]
        text = "{REG["rows8"]}"
        shape = [32, 32]
        [layouts.smem]
        shared = "{SMEM["sw8"]}"
        shape = [32, 32]
        dtype = "f16"
        base_address = {base}

        [[obligation]]
        name = "placed"
        kind = "max_wavefronts"
        reg = "reg"
        smem = "smem"
        dtype = "f16"
        wavefronts = 2
    """))
    assert main(["check", str(spec)]) == rc
