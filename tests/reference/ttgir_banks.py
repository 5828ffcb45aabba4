"""Brute-force bank counts of TTGIR shared-memory accesses, and the layouts of an audit check read
again from the op's TTGIR line (independent of the auditor's own code paths)."""
from __future__ import annotations

import functools
import re
from pathlib import Path

from verilayout.frontends.triton import attr_to_linear
from verilayout.frontends.ttgir import parse_module


def brute_wavefronts(reg, smem, bits, shift=None, max_bits=128):
    """(vector elems, worst wavefronts per instruction) of the widest ld/st.shared, by enumeration.

    ``shift``: a subslice's offsets within the allocation ``smem`` covers; every element the
    registers name is moved there (integer addition) before its offset is looked up."""
    offs = smem.bases["offset"]
    coords = [tuple(0 for _ in offs[0])] if offs else [()]
    for b in offs:                                         # coords[o] = XOR of o's offset bases
        coords = coords + [tuple(x ^ y for x, y in zip(c, b)) for c in coords]
    table = {}
    for o, c in enumerate(coords):
        table.setdefault(c, o)                             # first offset holding the element
    shift = tuple(shift or (0,) * len(next(iter(table))))

    class _Where(dict):
        def __missing__(self, coord):
            return table[tuple(a + b for a, b in zip(coord, shift))]
    where = _Where()
    origin = where[tuple(0 for _ in shift)]
    regs = reg.bases.get("register", [])
    lanes, warps = reg.bases.get("lane", []), reg.bases.get("warp", [])
    nz = [b for b in regs if any(b)]
    # vector: leading non-zero register bases that step the offset by 1, 2, 4, ... (<= 128 bits)
    v = 1
    for k, b in enumerate(nz):
        if where[tuple(b)] - origin == 1 << k and (v * 2) * bits <= max_bits:
            v *= 2
        else:
            break
    # every other input must move by whole vectors, else some access's elements are out of
    # register order (a vector store writes its registers in order): shrink until they do
    rest = [b for b in nz[v.bit_length() - 1:]] + lanes + warps
    while v > 1 and any((where[tuple(b)] ^ origin) % v for b in rest if any(b)):
        v //= 2
        rest = [nz[v.bit_length() - 1]] + rest
    others = nz[v.bit_length() - 1:]
    per_phase = 32 if v * bits <= 32 else 16 if v * bits == 64 else 8
    # coordinates packed into one int, a field of `width` bits per dim: XOR of packed coordinates
    # is the packed XOR (no carries), so each input's coordinates are its span's XORs
    width = max([1] + [x.bit_length() for b in regs + lanes + warps for x in b])
    pack = lambda c: sum(x << (width * i) for i, x in enumerate(c))
    unpack = lambda q: tuple((q >> (width * i)) & ((1 << width) - 1) for i in range(len(shift)))

    def span(bases):          # span[i] = XOR of the bases selected by the bits of i
        out = [0]
        for b in bases:
            pb = pack(b)
            out = out + [q ^ pb for q in out]
        return out
    lane_at, offset_of = span(lanes), {}
    worst = 0
    for ow in {o ^ w for o in span(others) for w in span(warps)}:
        total = 0
        for ph in range(32 // per_phase):
            banks = {}
            for lane in range(ph * per_phase, (ph + 1) * per_phase):
                q = ow ^ lane_at[lane]
                off = offset_of.get(q)
                if off is None:
                    off = offset_of[q] = where[unpack(q)]
                first, end = off * bits // 8, (off + v) * bits // 8     # the bytes [first, end)
                for word in range(first // 4, (end - 1) // 4 + 1):     # the 4-byte words they touch
                    banks.setdefault(word % 32, set()).add(word)
            total += max(len(s) for s in banks.values())
        worst = max(worst, total)
    return v, worst


@functools.lru_cache(maxsize=64)
def _module(path: str, stamp: float):
    return parse_module(Path(path).read_text())


def _module_of(path):
    return _module(str(path), Path(path).stat().st_mtime)


def layouts_of(path, check):
    """The register and shared layouts of a bank check, read again from the op's TTGIR line."""
    mod = _module_of(path)
    op = next(o for o in mod.ops if o.line == check.line)
    mem_name = None
    if op.name == "ttg.local_load":
        reg_t, mem_t, mem_name = op.result_types[0], op.operand_types[0], op.operands[0]
    elif op.name == "ttg.local_alloc":
        reg_t, mem_t = op.operand_types[0], op.result_types[0]
    elif op.name == "ttg.async_copy_global_to_local":
        # cp.async: pointers in registers; the destination's full type is its producer's result;
        # each copy moves `contiguity` elements (Triton prints the attribute when it is > 1)
        reg_t, mem_name = op.operand_types[0], op.operands[1]
        m = re.search(r"contiguity = (\d+)", op.attrs)
        contiguity = int(m.group(1)) if m else 1
        prod = mod.producers()[mem_name]
        mem_t = prod.result_types[prod.results.index(mem_name)]
    else:
        reg_t = next(t for t in op.operand_types if "memdesc" not in t)
        mem_t = next(t for t in op.operand_types + op.result_types if "memdesc" in t)
        mem_name = next((n for n, t in zip(op.operands, op.operand_types) if "memdesc" in t), None)
    rt, mt = mod.type_of(reg_t), mod.type_of(mem_t)
    alloc = tuple(mt.alloc_shape[-len(mt.shape):]) if mt.alloc_shape else tuple(mt.shape)
    shift = [0] * len(mt.shape)
    producers = mod.producers()
    while mem_name in producers and producers[mem_name].name in ("ttg.memdesc_subslice", "ttg.memdesc_index"):
        view = producers[mem_name]
        if view.name == "ttg.memdesc_subslice":     # `%x = ttg.memdesc_subslice %y[a, b] : ...`
            nums = view.text.split("[", 1)[1].split("]", 1)[0]
            shift = [a + int(b) for a, b in zip(shift, nums.split(","))]
        mem_name = view.operands[0]
    return (attr_to_linear(rt.encoding, rt.shape), attr_to_linear(mt.encoding, alloc), mt.elem,
            tuple(shift))


def max_vector_bits(path, check) -> int:
    """The widest access the op allows: 128 bits, or a cp.async's ``contiguity`` elements (at least
    32 bits: cp.async copies 4, 8 or 16 bytes)."""
    mod = _module_of(path)
    op = next(o for o in mod.ops if o.line == check.line)
    if op.name != "ttg.async_copy_global_to_local":
        return 128
    m = re.search(r"contiguity = (\d+)", op.attrs)
    bits = BITS[layouts_of(path, check)[2]]
    return max(32, min((int(m.group(1)) if m else 1) * bits, 128))


BITS = {"f8E4M3FN": 8, "f8E5M2": 8, "i8": 8, "f16": 16, "bf16": 16, "f32": 32, "i32": 32, "f64": 64}


