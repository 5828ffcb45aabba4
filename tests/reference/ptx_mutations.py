"""Planted shared-memory address bugs: the mutation harness of the PTX audit.

A *site* is one ``ld.shared`` / ``st.shared`` / ``ldmatrix`` / ``stmatrix`` / ``cp.async``
(shared destination, not ``.bulk``) whose shared address is ``[%r]`` or ``[%r+N]`` (a register
plus an immediate). Planting moves that one immediate by ``delta`` bytes (``[%r+N+delta]``): every
lane of that one instruction then touches bytes ``delta`` away from where the compiler put them,
which a correct kernel never does (the kernels of the corpus are correct). The audit must then
report an error-severity finding at that PTX line.

Nothing here comes from the code under test (``verilayout.audit``): the sites are found by the
text of the PTX (regular expressions written here), the class of a site is the set of TTGIR ops
on its source line (``.loc`` of the PTX, ``loc(...)`` of the TTGIR, read by the project's
parsers, which are not under test here).
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace
from pathlib import Path

#: the opcode of a shared-memory access this harness plants into (after an optional guard)
_OPCODE = re.compile(r"^\s*(?:@!?%\w+\s+)?((?:ld|st)(?:\.volatile)?\.shared(?:::cta)?\.[\w.]+|"
                     r"(?:ld|st)matrix\.[\w.]+|cp\.async\.c[ag]\.shared[\w.:]*)\s")
#: the first bracketed address of the line: ``[%r12]``, ``[%r12+2048]``, ``[ %r459 + 0 ]``
_ADDR = re.compile(r"\[\s*(%r\w+)\s*(?:\+\s*(-?\d+)\s*)?\]")

#: TTGIR ops that touch shared memory, the names a class is made of
SMEM_OPS = ("ttg.local_alloc", "ttg.local_store", "ttg.local_load", "ttg.async_copy_global_to_local",
            "ttg.convert_layout", "tt.reduce", "tt.scan", "tt.histogram", "tt.gather",
            "ttng.async_tma_copy_global_to_local", "ttng.async_tma_copy_local_to_global",
            "ttng.warp_group_dot", "ttng.tc_gen5_mma", "tt.dot", "ttg.memdesc_trans", "tt.trans",
            "tt.join", "tt.split", "tt.reshape")


@dataclass(frozen=True)
class Site:
    """One access: its 1-based PTX line, opcode, base register, immediate, and the span of the
    address text in that line."""
    line: int
    opcode: str
    base: str
    offset: int
    span: tuple[int, int]


def sites(ptx: str) -> list[Site]:
    """Every plantable access of ``ptx`` in line order (see the module docstring)."""
    out = []
    for i, text in enumerate(ptx.split("\n")):
        m = _OPCODE.match(text)
        if not m or ".bulk" in m.group(1):
            continue
        a = _ADDR.search(text, m.end(1))
        if a is None:
            continue
        out.append(Site(i + 1, m.group(1), a.group(1), int(a.group(2) or 0), a.span()))
    return out


def plant(ptx: str, site: Site, delta: int = 16) -> str:
    """``ptx`` with the address of ``site`` moved ``delta`` bytes: ``[%r+N]`` -> ``[%r+N+delta]``."""
    lines = ptx.split("\n")
    text = lines[site.line - 1]
    lo, hi = site.span
    lines[site.line - 1] = text[:lo] + f"[{site.base}+{site.offset + delta}]" + text[hi:]
    return "\n".join(lines)


#: what comes before a planted line parsed alone (:func:`planted_module`): a function is open
_ALONE = ".version 8.0\n.target sm_90a\n.visible .entry _planted()\n{\n"


def planted_module(module, ptx: str, site: Site, delta: int = 16):
    """``parse_ptx(plant(ptx, site, delta))`` from ``module`` (``parse_ptx(ptx)``) without parsing
    the whole text again: the planted line alone is parsed inside an open function, its
    instructions take the place of those of ``site.line`` (with that line, ``.loc`` and function);
    every other line is unchanged, so are its instructions. A line whose statements do not map one
    to one (none seen in the corpus) is parsed in full. ``tests/test_ptx_mutations`` checks the law
    against the full parse."""
    from verilayout.frontends.ptx import parse_ptx
    planted = plant(ptx.split("\n")[site.line - 1], replace(site, line=1), delta)
    alone = parse_ptx(_ALONE + planted + "\n}\n").instrs
    at = [k for k, ins in enumerate(module.instrs) if ins.line == site.line]
    if not at or len(alone) != len(at) or at[-1] - at[0] != len(at) - 1:
        return parse_ptx(plant(ptx, site, delta))
    old = module.instrs
    new = tuple(replace(a, line=site.line, loc=old[k].loc, func=old[k].func) for a, k in zip(alone, at))
    return replace(module, instrs=old[:at[0]] + new + old[at[-1] + 1:])


def op_class(ptx_module, ttgir_module, line: int) -> str:
    """The TTGIR ops of :data:`SMEM_OPS` on the source line of PTX line ``line`` (sorted, joined by
    ``+``), or ``"<no op>"``/``"<no loc>"``."""
    ins = next((i for i in ptx_module.instrs if i.line == line), None)
    if ins is None or not ins.loc:
        return "<no loc>"
    region, owner = None, {}                 # ops of a reduce/scan combine region -> the reduce
    for o in ttgir_module.ops:
        if o.name in ("tt.reduce", "tt.scan"):
            region = o.name
        elif region:
            owner[o.line] = region
            region = None if o.name.endswith(".return") else region
    names = sorted({o.name for o in ttgir_module.ops if o.loc == ins.loc and o.name in SMEM_OPS} |
                   {owner[o.line] for o in ttgir_module.ops if o.loc == ins.loc and o.line in owner})
    return "+".join(names) if names else "<no op>"


def sample(items: list, k: int, seed: str) -> list:
    """``k`` of ``items`` chosen deterministically from ``seed`` (all when there are fewer), in order."""
    if len(items) <= k:
        return list(items)
    idx = sorted(random.Random(seed).sample(range(len(items)), k))
    return [items[i] for i in idx]


def errors_at(checks, line: int) -> list:
    """The error-severity findings of ``checks`` at PTX line ``line``."""
    return [c for c in checks if c.severity == "error" and c.line == line]


def pairs(roots: list[Path]) -> list[Path]:
    """The PTX files under ``roots`` (``cuda*`` folders) with a TTGIR beside them, sorted."""
    out = []
    for r in roots:
        out.extend(p for p in sorted(r.glob("cuda*/*.ptx")) if p.with_suffix(".ttgir").exists())
    return out


def run(files: list[Path], per_file: int, seed: str = "ptx-mutations", delta: int = 16) -> list[dict]:
    """Plant ``per_file`` sampled sites of each file (:func:`sample`), audit each mutant with the
    TTGIR beside it, and return one record per mutant: file, line, opcode, class, whether an error
    is at the line, and the checks found at that line (check, status)."""
    from verilayout.audit import audit_file, audit_ptx_text
    from verilayout.frontends.ptx import parse_ptx
    from verilayout.frontends.ttgir import parse_module
    out = []
    for p in files:
        ptx, ttgir = p.read_text(), p.with_suffix(".ttgir").read_text()
        plan = audit_file(str(p.with_suffix(".ttgir"))).checks
        pm, tm = parse_ptx(ptx), parse_module(ttgir)
        for s in sample(sites(ptx), per_file, f"{seed}:{p.name}"):
            rep = audit_ptx_text(plant(ptx, s, delta), "k.ptx", ttgir, plan)
            at = [(c.check, c.status, c.severity) for c in rep.checks if c.line == s.line]
            out.append({"file": str(p), "line": s.line, "opcode": s.opcode, "class": op_class(pm, tm, s.line),
                        "hit": bool(errors_at(rep.checks, s.line)), "at": at})
    return out


def table(records: list[dict]) -> str:
    """Misses by class: ``class  misses/total``, worst first."""
    by: dict[str, list[int]] = {}
    for r in records:
        t = by.setdefault(r["class"], [0, 0])
        t[0] += not r["hit"]
        t[1] += 1
    rows = sorted(by.items(), key=lambda kv: (-kv[1][0], kv[0]))
    total = [sum(v[0] for v in by.values()), sum(v[1] for v in by.values())]
    return "\n".join([f"{k:70s} {m:4d}/{n:<4d} missed" for k, (m, n) in rows] +
                     [f"{'ALL':70s} {total[0]:4d}/{total[1]:<4d} missed"])


if __name__ == "__main__":                   # python -m tests.reference.ptx_mutations [per_file] [out.json]
    import json
    import sys
    root = Path(__file__).resolve().parents[1]
    recs = run(pairs([root / "corpus", root / "thirdparty"]), int(sys.argv[1]) if len(sys.argv) > 1 else 2)
    if len(sys.argv) > 2:
        Path(sys.argv[2]).write_text(json.dumps(recs, indent=1))
    print(table(recs))
