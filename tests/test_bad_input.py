"""A battery of bad inputs for every CLI command: each must exit 2 with exactly one stderr
line, starting ``error:``, and no traceback.

Every case runs in its own process under resource limits (10 s CPU, 1 GiB address space).
To keep the battery fast, a small server process imports ``verilayout.cli.main`` once and
forks one child per case (the child sets the limits, redirects stdin/stdout/stderr and calls
``main(argv)``); two servers, started once for the module, run the cases of one class in
parallel. One pytest test per class lists every failing case. Cases marked "routed" fail in
code owned by another engineer (listed in ROUTED with the reason) and are expected to fail
until that code is fixed.
"""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading

import pytest

SERVER = r'''
import io, json, os, resource, sys, traceback
from verilayout.cli.main import main
# warm what most commands import before forking: each child then starts with z3, numpy,
# sympy and the command modules in memory instead of importing them again
import importlib, pkgutil, verilayout.cli, z3, numpy, sympy
for _m in pkgutil.iter_modules(verilayout.cli.__path__):
    importlib.import_module('verilayout.cli.' + _m.name)
for line in sys.stdin:
    case = json.loads(line)
    pid = os.fork()
    if pid == 0:
        rc = 1
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (10, 10))
            resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
            fin = os.open(case["stdin"] or os.devnull, os.O_RDONLY)
            fout = os.open(case["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            ferr = os.open(case["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(fin, 0); os.dup2(fout, 1); os.dup2(ferr, 2)
            sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
            sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8",
                                          errors="backslashreplace")
            sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8",
                                          errors="backslashreplace")
            os.chdir(case["cwd"])
            try:
                rc = main(case["argv"])
            except SystemExit as e:
                rc = e.code if isinstance(e.code, int) else 1
            except BaseException:
                traceback.print_exc()
                rc = 1
        finally:
            try:
                sys.stdout.flush(); sys.stderr.flush()
            finally:
                os._exit(rc if isinstance(rc, int) else 1)
    _, status = os.waitpid(pid, 0)
    rc = os.waitstatus_to_exitcode(status)
    with open(case["out"], encoding="utf-8", errors="replace") as f:
        out = f.read(4000)
    with open(case["err"], encoding="utf-8", errors="replace") as f:
        err = f.read(4000)
    print(json.dumps({"rc": rc, "out": out, "err": err}), flush=True)
'''

# ----- fixtures (files the cases name) -----------------------------------------------------------

BLOCKED = ("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], "
           "order = [1, 0]}>")
NVMMA = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>"
DOT_A = ("#ttg.dot_op<{opIdx = 0, parent = #triton_intel_gpu.dpas<{repeatCount = 8, "
         "systolicDepth = 8, executionSize = 16, opsPerChan = 2, threadsPerWarp = 16, "
         "warpsPerCTA = [8, 4], repCluster = [4, 2]}>, kWidth = 1}>")
K128 = "Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_8),(_64,_1)):((_64,_512),(_1,_0))"


def make_files(d: str) -> dict:
    """The files bad cases point at, under ``d``."""
    f = {}

    def put(name, data: bytes):
        p = os.path.join(d, name)
        with open(p, "wb") as fh:
            fh.write(data)
        f[name] = p

    put("latin1.txt", "#ttg.blocked<{caf\xe9}>".encode("latin-1"))
    put("binary.bin", bytes(range(256)) * 16)
    put("utf16.txt", BLOCKED.encode("utf-16"))
    put("empty.txt", b"")
    put("nul.txt", b"#ttg.blocked\x00<{}>")
    put("latin1.toml", b"[layouts.a]\ntext = \"caf\xe9\"\n")
    put("binary.toml", bytes(range(256)) * 4)
    put("deep.toml", b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n")
    put("deep_tables.toml", b"a = " + b"{b = " * 3000 + b"1" + b"}" * 3000 + b"\n")
    put("deep.json", b"[" * 100000 + b"]" * 100000)
    put("deep_obj.json", b'{"a":' * 50000 + b"1" + b"}" * 50000)
    put("latin1.json", b'{"loads": "caf\xe9"}')
    put("list.json", b"[1, 2, 3]")
    put("null.json", b"null")
    put("bad.json", b"{loads: }")
    put("latin1.ptx", b".version 8.7\n.target sm_90a\n// caf\xe9\n")
    put("binary.ptx", bytes(range(256)) * 16)
    put("nul.ptx", b".version 8.7\n\x00\x00")
    put("text.ptx", b"hello world\n")
    put("deep.ptx", b".version 8.7\n.visible .entry f()\n{\nadd.s32 %r1, " + b"{" * 5000 + b"%r2" + b"}" * 5000 + b";\n}\n")
    put("garbage.ptx", b".version 8.7\n.visible .entry f()\n{\nwgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%r1}, %rd9, %rd8;\n@@ ;;; {\n")
    hp = os.path.join(d, "huge.ptx")
    with open(hp, "wb") as fh:
        fh.truncate(65 << 20)
    f["huge.ptx"] = hp
    big = os.path.join(d, "huge.txt")
    with open(big, "wb") as fh:          # sparse: 65 MiB of zero bytes without writing them
        fh.truncate(65 << 20)
    f["huge.txt"] = big
    os.makedirs(os.path.join(d, "adir"), exist_ok=True)
    f["adir"] = os.path.join(d, "adir")
    # emission directories: a manifest that is not JSON / nested deeply / no kernel file
    for name, data in (("em_badjson", b"{not json"), ("em_deep", b"[" * 100000 + b"]" * 100000),
                       ("em_latin1", b'{"kind": "caf\xe9"}'), ("em_list", b"[]"),
                       ("em_nokind", b'{"a": 1}'), ("em_huge", None)):
        p = os.path.join(d, name)
        os.makedirs(p, exist_ok=True)
        m = os.path.join(p, "manifest.json")
        if data is None:
            with open(m, "wb") as fh:
                fh.truncate(65 << 20)
        else:
            with open(m, "wb") as fh:
                fh.write(data)
        f[name] = p
    return f


def deep(open_: str, close: str, n: int, inner: str = "1") -> str:
    return open_ * n + inner + close * n


# ----- the cases --------------------------------------------------------------------------------

def layout_commands(x: str) -> list[list[str]]:
    """Every command that takes a layout argument, with ``x`` in that place."""
    return [
        ["show", x],
        ["show", x, "--shape", "64x64"],
        ["show", x, "-t", "tensor<64x64xf16>", "--view", "hw"],
        ["banks", "-t", "tensor<64x64xf16>", "--reg", x, "--smem", NVMMA],
        ["banks", "-t", "tensor<64x64xf16>", "--reg", BLOCKED, "--smem", x],
        ["wgmma", "verify", "--desc", "0x4000004000010040", "--dtype", "f16", "--major", "K",
         "--layout", x],
        ["wgmma", "desc", "--dtype", "f16", "--major", "K", "--layout", x],
        ["swizzle", "synth", "-t", "tensor<64x64xf16>", "--write", x],
        ["blockload", "plan", "--layout", x, "-t", "tensor<256x32xf16>"],
        ["emit", "blockload", "--layout", x, "-t", "tensor<256x32xf16>", "-o", "out_x"],
    ]


def cases_nesting(f: dict) -> list:
    out = []
    for n in (200, 1000, 20000):
        for o, c in (("(", ")"), ("[", "]"), ("{", "}"), ("<", ">")):
            for argv in layout_commands(deep(o, c, n))[:6]:
                out.append(argv)
        out.append(["show", "#ttg.blocked<{sizePerThread = " + deep("[", "]", n) + "}>"])
        out.append(["show", "#ttg.linear<{register = " + deep("[", "]", n) + "}>"])
        out.append(["show", "Sw<3,4,3> o " + deep("(", ")", n, "_8") + ":" + deep("(", ")", n, "_1")])
    for name in ("deep.toml", "deep_tables.toml"):
        out.append(["check", f[name]])
        out.append(["check", f[name], "--json"])
    for name in ("deep.json", "deep_obj.json"):
        out.append(["blockload", "check", "--plan", f[name], "--layout", DOT_A,
                    "-t", "tensor<256x32xf16>"])
    out.append(["simulate", f["em_deep"]])
    return out


def cases_encoding(f: dict) -> list:
    out = []
    for name in ("latin1.txt", "binary.bin", "utf16.txt", "nul.txt"):
        out += layout_commands("@" + f[name])
    for name in ("latin1.toml", "binary.toml", "binary.bin", "utf16.txt"):
        out.append(["check", f[name]])
    for name in ("latin1.json", "binary.bin", "utf16.txt"):
        out.append(["blockload", "check", "--plan", f[name], "--layout", DOT_A,
                    "-t", "tensor<256x32xf16>"])
    out.append(["simulate", f["em_latin1"]])
    for name in ("latin1.ptx", "binary.ptx", "nul.ptx", "text.ptx", "deep.ptx", "huge.ptx"):
        out.append(["audit", f[name]])
        out.append(["audit", f[name], "--json", "--jobs", "2"])
    for x in ("(8,?):(1,8)", "(8,4):(?,8)", "S<3,4,3> o ? o (8,64):(64,1)", "Sw<3,4,3>_smem_ptr[16b](?) o (8,64):(64,1)",
              "(_4,_2):(_1@0,_1@)", "smem_ptr[16b](0xZZ) o (8,64):(64,1)"):   # CuTe print forms: dynamic, malformed
        out.append(["show", x])
    for x in ("caf\udce9", "\udcff\udcfe", "#ttg.blocked<{\udce9}>", "\u202e#ttg", "\x01\x02"):
        out.append(["show", x])
        out.append(["wgmma", "decode", x])
        out.append(["wgmma", "fragment", x, "--dtype", "f16"])
    return out


def cases_numbers(f: dict) -> list:
    out = []
    for v in ("-1", "nan", "inf", "0x", "1e3", "99999999999999999999999999", "0b102", "ten", ""):
        out.append(["wgmma", "encode", "--start", v])
        out.append(["wgmma", "encode", "--lbo", v])
        out.append(["wgmma", "encode", "--sbo", v])
        out.append(["wgmma", "decode", v])
        out.append(["wgmma", "synth", "--dtype", "f16", "--major", "K", "--mn", v, "--k", "64"])
        out.append(["wgmma", "synth", "--dtype", "f16", "--major", "K", "--mn", "64", "--k", v])
        out.append(["banks", "-t", "tensor<64x64xf16>", "--reg", BLOCKED, "--smem", NVMMA, "--bits", v])
    for v in ("7", "1048576", "1" + "0" * 30):
        out.append(["wgmma", "encode", "--lbo", v])
    for v in ("8", "1048576", "1" + "0" * 30):
        out.append(["wgmma", "encode", "--base-offset", v])
    for v in ("nan", "inf", "-inf", "0", "-1", "1e400"):
        out.append(["check", "specs/linear_layouts.toml", "--timeout", v])
        out.append(["wgmma", "verify", "--desc", "0x4000004000010040", "--dtype", "f16",
                    "--major", "K", "--layout", K128, "--timeout", v])
    for v in ("-1", "-100", "257"):          # 0 is valid: one process per CPU, as in `audit`
        out.append(["check", "specs/linear_layouts.toml", "--jobs", v])
        out.append(["audit", os.path.join(ROOT, "examples", "w4a16.ttgir"), "--jobs", v])
    for v in ("0x0", "0x8", "3x5", "-1x8", "8x", "x8", "99999999999x99999999999", "8*8", "1.5x2"):
        out.append(["show", BLOCKED, "--shape", v])
        out.append(["wgmma", "desc", "--dtype", "f16", "--major", "K", "--shape", v, "--layout", NVMMA])
    for v in ("m64n7k16", "m0n0k0", "m64n8k15", "m-64n8k16", "m64n99999999999k16"):
        out.append(["wgmma", "fragment", v, "--dtype", "f16"])
    for v in ("-1", "4", "1000000"):     # the K128 tile has 64 / 16 = 4 K-blocks: 0..3
        out.append(["wgmma", "verify", "--desc", "0x4000004000010040", "--dtype", "f16",
                    "--major", "K", "--layout", K128, "--k-block", v])
        out.append(["simulate", f["em_nokind"], "--base-address", v])
    for v in ("-1", "1000000"):
        out.append(["blockload", "plan", "--layout", DOT_A, "-t", "tensor<256x32xf16>", "--warp", v])
    out.append(["wgmma", "decode", str(1 << 64)])
    out.append(["wgmma", "decode", "-5"])
    return out


def cases_paths(f: dict) -> list:
    out = []
    for p in ("@/nonexistent/x", "@" + f["adir"], "@", "@/dev/null", "@/proc/self/mem"):
        out += layout_commands(p)[:7]
    good = "specs/linear_layouts.toml"
    out += [
        ["check", "/nonexistent/spec.toml"],
        ["check", f["empty.txt"] + "/x"],
        ["check", good, "--junit", f["adir"]],
        ["check", good, "--junit", f["adir"] + "/missing/r.xml"],
        ["check", good, "--junit", "/proc/r.xml"],
        ["check", good, "--junit", ""],
        ["check", good, "--smt2", f["empty.txt"]],
        ["check", good, "--smt2", "/proc/smt2dir"],
        ["check", good, "--smt2", f["adir"] + "/missing/deeper"],
        ["check", "/dev/zero"],
        ["simulate", "/nonexistent"],
        ["simulate", f["adir"]],
        ["simulate", f["empty.txt"]],
        ["simulate", f["em_badjson"]],
        ["simulate", f["em_list"]],
        ["simulate", f["em_nokind"]],
        ["emit", "wgmma", "--instr", "m64n32k16", "--dtype", "f16", "-o", f["empty.txt"]],
        ["emit", "wgmma", "--instr", "m64n32k16", "--dtype", "f16", "-o", "/proc/out"],
        ["emit", "blockload", "--layout", DOT_A, "-t", "tensor<256x32xf16>", "-o", f["empty.txt"]],
        ["blockload", "check", "--plan", "/nonexistent.json", "--layout", DOT_A, "-t", "tensor<256x32xf16>"],
        ["blockload", "check", "--plan", f["adir"], "--layout", DOT_A, "-t", "tensor<256x32xf16>"],
        ["blockload", "check", "--plan", f["list.json"], "--layout", DOT_A, "-t", "tensor<256x32xf16>"],
        ["blockload", "check", "--plan", f["null.json"], "--layout", DOT_A, "-t", "tensor<256x32xf16>"],
        ["blockload", "check", "--plan", f["bad.json"], "--layout", DOT_A, "-t", "tensor<256x32xf16>"],
        ["blockload", "check", "--plan", f["empty.txt"], "--layout", DOT_A, "-t", "tensor<256x32xf16>"],
        ["show", BLOCKED, "--shape", "8x8", "--svg", f["adir"]],
        ["show", BLOCKED, "--shape", "8x8", "--svg", "/nonexistent/dir/x.svg"],
        ["banks", "-t", "tensor<64x64xf16>", "--reg", BLOCKED, "--smem", NVMMA, "--svg", f["adir"]],
    ]
    return out


def cases_sizes(f: dict) -> list:
    out = []
    out += layout_commands("@" + f["huge.txt"])
    out += layout_commands("@/dev/zero")
    out += [["check", f["huge.txt"]], ["simulate", f["em_huge"]],
            ["blockload", "check", "--plan", f["huge.txt"], "--layout", DOT_A, "-t", "tensor<256x32xf16>"],
            ["blockload", "check", "--plan", "/dev/zero", "--layout", DOT_A, "-t", "tensor<256x32xf16>"]]
    for t in ("tensor<3x5xf16>",
              "tensor<0x8xf16>", "tensor<" + "2x" * 40 + "f16>"):
        out.append(["show", BLOCKED, "-t", t])
        out.append(["banks", "-t", t, "--reg", BLOCKED, "--smem", NVMMA])
        out.append(["swizzle", "synth", "-t", t, "--write", BLOCKED])
        out.append(["blockload", "plan", "--layout", DOT_A, "-t", t])
    for n in (100_000,):
        out.append(["show", "a" * n])
        out.append(["show", "#ttg.blocked<{" + "a = 1, " * (n // 7) + "}>"])
        out.append(["wgmma", "decode", "1" * n])
        out.append(["wgmma", "fragment", "m64n" + "8" * n + "k16", "--dtype", "f16"])
    out.append(["show", "#ttg.blocked<{sizePerThread = [" + "1, " * 20000 + "1]}>"])
    out.append(["show", "(" + ",".join(["_2"] * 200) + "):(" + ",".join(["_1"] * 200) + ")"])
    out.append(["show", "#ttg.linear<{register = [" + "[1], " * 64 + "[1]]}>"])
    # views print one entry per element: a 2^20 x 2^20 tensor must be refused before allocating
    for view in ("hw", "tensor", "grid"):
        out.append(["show", BLOCKED, "--shape", "1048576x1048576", "--view", view])
        out.append(["show", BLOCKED, "-t", "tensor<1048576x1048576xf16>", "--view", view])
    return out


def cases_argument_types(f: dict) -> list:
    d = ["--dtype", "f16", "--major", "K"]
    out = [
        ["wgmma", "desc", *d, "--layout", K128, "--k-block", "some"],
        ["wgmma", "desc", *d, "--layout", K128, "--k-block", ""],
        ["wgmma", "desc", *d, "--layout", K128, "--mn-dim", "2"],
        ["wgmma", "desc", "--dtype", "f99", "--major", "K", "--layout", K128],
        ["wgmma", "desc", "--dtype", "f16", "--major", "X", "--layout", K128],
        ["wgmma", "desc", *d, "--layout", K128, "--arch", "sm_80"],
        ["wgmma", "desc", *d, "--layout", K128, "--swizzle-units", "bits"],
        ["wgmma", "desc", *d],
        ["wgmma", "verify", *d, "--layout", K128],
        ["wgmma", "verify", "--desc", "0xZZ", *d, "--layout", K128],
        ["wgmma", "fragment", "m64n8k16", "--dtype", "f16", "--operand", "Z"],
        ["wgmma", "fragment", "m64n8k16", "--dtype", "f16", "--acc", "f64"],
        ["wgmma", "fragment", "m64n8k16", "--dtype", "nope"],
        ["wgmma", "fragment", "m64n8k16", "--dtype", "f16", "--grid", "all"],
        ["wgmma", "fragment", "m64n8k16"],
        ["wgmma", "fragment", "n8k16m64", "--dtype", "f16"],
        ["wgmma", "encode", "--swizzle", "99B"],
        ["wgmma", "encode", "--arch", "sm_80"],
        ["wgmma", "encode", "--lbo-mode", "2"],
        ["wgmma", "synth", "--dtype", "f16", "--major", "Q", "--mn", "64", "--k", "64"],
        ["wgmma", "synth", "--dtype", "f99", "--major", "K", "--mn", "64", "--k", "64"],
        ["wgmma", "decode", "0x1", "--arch", "sm_75"],
        ["wgmma", "bogus"],
        ["show", BLOCKED, "--view", "bogus"],
        ["show", BLOCKED, "-t", "tensor<64x64xf99>"],
        ["show", BLOCKED, "-t", "tensor<>"],
        ["show", BLOCKED, "-t", "f16"],
        ["show", BLOCKED, "-t", "tensor<64x64xf16>", "--shape", "64x64"],
        ["show", BLOCKED, "--swizzle-units", "words"],
        ["show", "#ttg.blocked<{sizePerThread = [1, 3]}>", "--shape", "8x8"],
        ["show", "#ttg.nonexistent<{}>", "--shape", "8x8"],
        ["show", BLOCKED],
        ["show", ""],
        ["show", " "],
        ["show", "#blocked", "--name", "#nothere"],
        ["show", "tensor<8x8xf16, #nothere>"],
        ["show", "Sw<3,4,3> o (_8,_8):(_8)"],
        ["show", "Sw<9,9,9> o (_8,_8):(_8,_1)"],
        ["show", "(_8,_8):(_8,_1)", "--name", "#x"],
        ["show"],
        ["show", BLOCKED, "--bogus-flag"],
        ["banks", "--reg", BLOCKED, "--smem", NVMMA],
        ["banks", "--reg", BLOCKED, "--smem", NVMMA, "--shape", "64x64"],
        ["banks", "-t", "tensor<64x64xf16>", "--reg", BLOCKED, "--smem", NVMMA, "--banks", "48"],
        ["banks", "-t", "tensor<64x64xf16>", "--reg", BLOCKED, "--smem", NVMMA, "--instr", "bogus"],
        ["banks", "-t", "tensor<64x64xf16>", "--reg", NVMMA, "--smem", NVMMA],
        ["banks", "-t", "tensor<64x64xf16>", "--reg", BLOCKED, "--smem", BLOCKED],
        ["banks", "-t", "tensor<64x64xf16>", "--reg", BLOCKED, "--smem", NVMMA, "--bits", "32"],
        ["banks", "-t", "tensor<64x64xf16>", "--shape", "64x64", "--reg", BLOCKED, "--smem", NVMMA],
        ["banks", "--reg", BLOCKED, "--smem", NVMMA, "--name", "#x", "--shape", "64x64", "--bits", "16"],
        ["banks", "-t", "tensor<64x64xf16>", "--reg", BLOCKED],
        ["swizzle", "synth", "-t", "tensor<64x64xf16>"],
        ["swizzle", "synth", "--write", BLOCKED],
        ["swizzle", "bogus"],
        ["blockload", "plan", "--layout", BLOCKED, "-t", "tensor<256x32xf16>"],
        ["blockload", "plan", "--layout", DOT_A, "-t", "tensor<256x32xf99>"],
        ["blockload", "plan", "--layout", DOT_A, "--arch", "xe9", "-t", "tensor<256x32xf16>"],
        ["blockload", "plan", "--layout", DOT_A],
        ["blockload", "plan"],
        ["blockload", "bogus"],
        ["emit", "wgmma", "--instr", "m64n32k16", "--dtype", "f99", "-o", "out_e"],
        ["emit", "wgmma", "--instr", "bogus", "--dtype", "f16", "-o", "out_e"],
        ["emit", "wgmma", "--instr", "m64n32k16", "--dtype", "f16", "--a", "Q:none", "-o", "out_e"],
        ["emit", "wgmma", "--instr", "m64n32k16", "--dtype", "f16", "--b", "K:7B", "-o", "out_e"],
        ["emit", "wgmma", "--instr", "m64n32k16", "--dtype", "f16", "--acc", "f64", "-o", "out_e"],
        ["emit", "wgmma", "--instr", "m64n32k16", "--dtype", "f16", "--k", "7", "-o", "out_e"],
        ["emit", "wgmma", "--instr", "m64n32k16", "--dtype", "f16"],
        ["emit", "blockload", "--layout", BLOCKED, "-t", "tensor<256x32xf16>", "-o", "out_e"],
        ["emit", "gemm", "--dtype", "f64", "-o", "out_e"],
        ["emit", "gemm", "--dtype", "f16", "--tile", "128x256x7", "-o", "out_e"],
        ["emit", "gemm", "--dtype", "f16", "--stages", "9", "-o", "out_e"],
        ["emit", "gemm", "--dtype", "f16", "--arch", "sm_80", "-o", "out_e"],
        ["emit", "gemm", "--dtype", "f16"],
        ["emit", "bogus"],
        ["simulate"],
        ["simulate", ".", "--seed", "x"],
        ["check", "specs/linear_layouts.toml", "--jobs", "x"],
        ["check", "specs/linear_layouts.toml", "--timeout", "x"],
        ["check", "specs/linear_layouts.toml", "--bogus"],
        ["bogus-command"],
    ]
    return out


SPEC_BODIES = [
    "obligation = 'x'", "obligation = [1, 2]", "layouts = [1]", "layouts = 'x'",
    "[[obligation]]\nkind = 7", "[[obligation]]\nkind = 'injective'",
    "[[obligation]]\nkind = 'injective'\nlayout = 7",
    "[[obligation]]\nkind = 'injective'\nlayout = ['a']",
    "[[obligation]]\nkind = 'injective'\nlayout = 'a'\nname = 5",
    "[[obligation]]\nkind = 'injective'\nlayout = 'a'\nname = ''",
    "[[obligation]]\nkind = 'injective'\nlayout = 'a'\nexpect = 'maybe'",
    "[layouts.a]\ntext = 5\n[[obligation]]\nkind = 'injective'\nlayout = 'a'",
    "[layouts.a]\ntext = '(_8):(_1)'\nshape = 'x'\n[[obligation]]\nkind = 'injective'\nlayout = 'a'",
    "[layouts.a]\ntext = '(_8):(_1)'\nshape = [0]\n[[obligation]]\nkind = 'injective'\nlayout = 'a'",
    "[layouts.a]\nbases = 5\n[[obligation]]\nkind = 'injective'\nlayout = 'a'",
    "[layouts.a]\nbases = { lane = 'x' }\n[[obligation]]\nkind = 'injective'\nlayout = 'a'",
    "[layouts.a]\nbases = { lane = [['x']] }\n[[obligation]]\nkind = 'injective'\nlayout = 'a'",
    "[layouts.a]\nbases = { lane = [[1]] }\nout_dims = 4\n[[obligation]]\nkind = 'injective'\nlayout = 'a'",
    "[layouts.a]\nbases = { lane = [[1]] }\nin_dims = { lane = 3 }\n[[obligation]]\nkind = 'injective'\nlayout = 'a'",
    "[layouts.a]\nfile = 5\n[[obligation]]\nkind = 'injective'\nlayout = 'a'",
    "[layouts.a]\nfile = 'nope.mlir'\n[[obligation]]\nkind = 'injective'\nlayout = 'a'",
    "[layouts.a]\nfile = '/dev/zero'\n[[obligation]]\nkind = 'injective'\nlayout = 'a'",
    "[layouts.a]\ndtype = 'f99'\ntext = '(_8):(_1)'\n[[obligation]]\nkind = 'injective'\nlayout = 'a'",
    "[layouts.a]\nidentity = 5\n[[obligation]]\nkind = 'injective'\nlayout = 'a'",
    "[layouts.a]\nidentity = { size = 'x', in = 'lane', out = 'dim0' }\n[[obligation]]\nkind = 'injective'\nlayout = 'a'",
    "[layouts.a]\nidentity = { size = 3, in = 'lane', out = 'dim0' }\n[[obligation]]\nkind = 'injective'\nlayout = 'a'",
    "[layouts.a]\nproduct = []\n[[obligation]]\nkind = 'injective'\nlayout = 'a'",
    "[layouts.a]\nproduct = ['b']\n[layouts.b]\nproduct = ['a']\n[[obligation]]\nkind = 'injective'\nlayout = 'a'",
    "[layouts.a]\nidentity = { size = 4, in = 'lane', out = 'dim0' }\n[[obligation]]\nkind = 'maps'\nlayout = 'a'\npoints = 5",
    "[layouts.a]\nidentity = { size = 4, in = 'lane', out = 'dim0' }\n[[obligation]]\nkind = 'maps'\nlayout = 'a'\npoints = [[{ lane = 'x' }, { dim0 = 1 }]]",
    "[layouts.a]\nidentity = { size = 4, in = 'lane', out = 'dim0' }\n[[obligation]]\nkind = 'formula'\nlayout = 'a'\noutputs = { dim0 = 5 }",
    "[layouts.a]\nidentity = { size = 4, in = 'lane', out = 'dim0' }\n[[obligation]]\nkind = 'formula'\nlayout = 'a'\noutputs = { dim0 = '__import__(\\'os\\')' }",
    "[layouts.a]\nidentity = { size = 4, in = 'lane', out = 'dim0' }\n[[obligation]]\nkind = 'formula'\nlayout = 'a'\noutputs = { dim0 = 'lane ** 99999' }",
    "[layouts.a]\nidentity = { size = 4, in = 'lane', out = 'dim0' }\n[[obligation]]\nkind = 'formula'\nlayout = 'a'\noutputs = { dim0 = '" + "(" * 500 + "lane" + ")" * 500 + "' }",
    "[layouts.a]\nidentity = { size = 4, in = 'lane', out = 'dim0' }\n[[obligation]]\nkind = 'formula'\nlayout = 'a'\noutputs = { dim9 = 'lane' }",
    "[layouts.a]\nidentity = { size = 4, in = 'lane', out = 'dim0' }\n[[obligation]]\nkind = 'bases'\nlayout = 'a'\nexpected = { lane = 5 }",
    "[layouts.a]\nidentity = { size = 4, in = 'lane', out = 'dim0' }\n[[obligation]]\nkind = 'table'\nlayout = 'a'\nrows = 5",
    "[layouts.a]\nidentity = { size = 4, in = 'lane', out = 'dim0' }\n[[obligation]]\nkind = 'formula'\nlayout = 'a'\noutputs = { dim0 = 'lane // (lane - lane)' }",
    "[layouts.a]\nidentity = { size = 4, in = 'lane', out = 'dim0' }\n[[obligation]]\nkind = 'equal'\nname = 'n'\nlhs = 'a'\nrhs = 'a'\n[[obligation]]\nkind = 'injective'\nname = 'n'\nlayout = 'a'",
]


def cases_spec_content(f: dict) -> list:
    out = []
    for i, body in enumerate(SPEC_BODIES):
        p = os.path.join(os.path.dirname(f["adir"]), f"body{i}.toml")
        with open(p, "w", encoding="utf-8") as fh:
            fh.write(body + "\n")
        out.append(["check", p])
        out.append(["check", p, "--json", "--junit", os.path.join(f["adir"], f"r{i}.xml")])
    return out


#: a shared layout of every kind the front end knows (text, tensor type giving its shape)
SHARED_KINDS = {
    "swizzled": ("#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>", "tensor<64x64xf16>"),
    "nvmma": (NVMMA, "tensor<64x64xf16>"),
    "nvmma3": ("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16, "
               "rank = 3}>", "tensor<2x64x64xf16>"),
    "padded": ("#ttg.padded_shared<[32:+4] {order = [1, 0], shape = [64, 64]}>", "tensor<64x64xf16>"),
    "padded3": ("#ttg.padded_shared<[32:+4] {order = [2, 1, 0], shape = [2, 64, 64]}>", "tensor<2x64x64xf16>"),
    "shared_linear": ("#ttg.shared_linear<{offset = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [1, 0], "
                      "[2, 0], [4, 0], [8, 0], [16, 0], [32, 0]]}, alignment = 16>", "tensor<64x64xf16>"),
    "rotating": ("#ttg.amd_rotating_shared<{vec = 4, perPhase = 1, maxPhase = 4, order = [1, 0]}>",
                 "tensor<64x64xf16>"),
    "tmem": ("#ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1>", "tensor<128x64xf32>"),
    "tmem_scales": ("#ttng.tensor_memory_scales_encoding<>", "tensor<128x8xi8>"),
}
BATCHED = ("#ttg.blocked<{sizePerThread = [1, 1, 8], threadsPerWarp = [1, 16, 1], warpsPerCTA = [2, 2, 1], "
           "order = [2, 1, 0]}>")


def cases_shared_kinds(f: dict) -> list:
    """Every shared-layout kind where a command cannot take it (a register layout, a block-load
    operand, an MMA operand tile, a view that does not apply), the padded layout's bad texts, rank-3
    block loads past the limits, and layout arguments that can only be missing files."""
    out = []
    for x, t in SHARED_KINDS.values():
        shape = t[len("tensor<"):].rsplit("x", 1)[0]
        out += [["banks", "-t", t, "--reg", x, "--smem", NVMMA],
                ["swizzle", "synth", "-t", t, "--write", x],
                ["swizzle", "synth", "-t", t, "--write", BLOCKED, "--read", x],
                ["blockload", "plan", "--layout", x, "-t", t],
                ["emit", "blockload", "--layout", x, "-t", t, "-o", "out_x"]]
        if "padded" in x or "tensor_memory" in x or "rank = 3" in x:
            out += [["wgmma", "verify", "--desc", "0x4000004000010040", "--dtype", "f16", "--major", "K",
                     "--layout", x, "--shape", shape],
                    ["wgmma", "desc", "--dtype", "f16", "--major", "K", "--layout", x, "--shape", shape]]
    padded, p3, tm = SHARED_KINDS["padded"][0], SHARED_KINDS["padded3"][0], SHARED_KINDS["tmem"][0]
    out += [["show", padded, "--view", "tensor"],
            ["show", p3, "--view", "grid"], ["show", p3, "--svg", "out.svg"],
            ["show", tm, "-t", "tensor<128x64xf32>", "--view", "hw"],
            ["show", padded, "--shape", "32x32"],
            ["show", "#ttg.padded_shared<[32:+4] {order = [1, 0]}>", "--shape", "1099511627776x64",
             "--view", "grid"],
            # 16 elements spread over 2^44 offsets: the views refuse before walking the offsets
            ["show", "#ttg.padded_shared<[1:+1099511627776] {order = [1, 0], shape = [4, 4]}>", "--view", "hw"],
            ["show", "#ttg.padded_shared<[1:+1099511627776] {order = [1, 0], shape = [4, 4]}>", "--view",
             "tensor"],
            ["banks", "-t", "tensor<128x64xf32>", "--reg", BLOCKED, "--smem", tm, "--base-address", "0x40"],
            ["banks", "-t", "tensor<128x8xi8>", "--reg", BLOCKED, "--smem", SHARED_KINDS["tmem_scales"][0],
             "--base-address", "0x40"]]
    for bad_text in ("#ttg.padded_shared<[32:+4] {order = [1, 5]}>", "#ttg.padded_shared<[3:+4] {order = [1, 0]}>",
                     "#ttg.padded_shared<[32:+4] {order = [1, 0], bogus = [1]}>", "#ttg.padded_shared<[] {}>",
                     "#ttg.padded_shared<[32:+4] {order = [1, 0], shape = [3, 4]}>", "#ttg.padded_shared<>",
                     "#ttg.padded_shared<[32:+4] {offset = [[0, 1], [5, 0]], block = []}>"):
        out.append(["show", bad_text, "--shape", "4x4"])
        out.append(["banks", "-t", "tensor<4x4xf16>", "--reg", BLOCKED, "--smem", bad_text])
    out += [["blockload", "plan", "--layout", BATCHED, "-t", "tensor<1099511627776x64x128xf16>"],
            ["blockload", "plan", "--layout", "#ttg.linear<{register = [[0, 0, 1], [0, 0, 2], [0, 0, 4]], "
             "lane = [[0, 1, 0], [0, 2, 0], [0, 4, 0], [1, 0, 0]], warp = [], block = []}>",
             "-t", "tensor<2x8x8xf16>"],
            ["emit", "blockload", "--layout", "#ttg.dot_op<{opIdx = 1, parent = #ttig.dpas<{repeatCount = 8, "
             "systolicDepth = 8, executionSize = 16, opsPerChan = 2, threadsPerWarp = 16, warpsPerCTA = "
             "[2, 2, 2], repCluster = [1, 2, 2]}>, kWidth = 2}>", "-t", "tensor<4x32x64xf16>", "-o", "out_b"]]
    for path in ("kernel.ttgir", "./missing/k.mlir", "~/k.ptx", "out/a"):
        out += [["show", path], ["show", path, "--name", "#mma", "--shape", "128x128", "--json"],
                ["banks", "-t", "tensor<64x64xf16>", "--reg", path, "--smem", NVMMA],
                ["wgmma", "desc", "--dtype", "f16", "--major", "K", "--layout", path],
                ["blockload", "plan", "--layout", path, "-t", "tensor<64x64xf16>"]]
    return out


CLASSES = {"shared_kinds": cases_shared_kinds, "spec_content": cases_spec_content, "nesting": cases_nesting, "encoding": cases_encoding, "numbers": cases_numbers,
           "paths": cases_paths, "sizes": cases_sizes, "argument_types": cases_argument_types}

# cases that fail in code other engineers own: the command line (``{tmp}`` the fixture folder)
# -> what is wrong where (see the report); they are xfail("routed") until fixed
ROUTED: dict = {}


def case_id(argv: list[str]) -> str:
    text = " ".join(argv)
    return ascii(text if len(text) < 160 else text[:150] + f"...({len(text)} chars)")


class _Server:
    """One server process (``SERVER``), started on first use and again if it died; a class's
    cases and the next class's are forked from the same imported parent, which never runs a
    case itself, so every child starts from the same state whichever class it belongs to."""

    def __init__(self, env: dict) -> None:
        self.env, self.proc = env, None

    def ask(self, msg: dict) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True, env=self.env, cwd=ROOT)
        try:
            self.proc.stdin.write(json.dumps(msg) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except OSError:
            line = ""
        return json.loads(line) if line else {"rc": None, "out": "", "err": "server died"}

    def close(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


def _serve(cases: "queue.Queue", results: dict, tmp: str, server: _Server) -> None:
    while True:
        try:
            i, argv = cases.get_nowait()
        except queue.Empty:
            break
        results[i] = server.ask({"argv": argv, "stdin": None, "cwd": tmp,
                                 "out": os.path.join(tmp, f"o{i}"), "err": os.path.join(tmp, f"e{i}")})


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _servers() -> list[_Server]:
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return [_Server(env) for _ in range(2)]


@pytest.fixture(scope="module")
def servers():
    """The two servers of this module's batteries: started once (each imports the CLI, z3, numpy
    and sympy: about a CPU second), not once per class."""
    pair = _servers()
    yield pair
    for srv in pair:
        srv.close()


def run_battery(cases: list, tmp: str, servers: list[_Server] | None = None) -> list[dict]:
    """Run every case (two server processes, one forked child per case); results in order."""
    q: queue.Queue = queue.Queue()
    for i, argv in enumerate(cases):
        q.put((i, [os.path.join(ROOT, a) if a.startswith("specs/") else a for a in argv]))
    results: dict = {}
    own = servers is None
    pair = _servers() if own else servers
    threads = [threading.Thread(target=_serve, args=(q, results, tmp, srv)) for srv in pair]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if own:
        for srv in pair:
            srv.close()
    return [results.get(i, {"rc": None, "out": "", "err": "not run"}) for i in range(len(cases))]


def problem(r: dict) -> str | None:
    """What is wrong with one result, or None."""
    lines = [ln for ln in r["err"].splitlines() if ln.strip()]
    if "Traceback" in r["err"]:
        return f"traceback: {lines[-1] if lines else ''}"
    if r["rc"] != 2:
        return f"exit {r['rc']} (want 2); stderr {lines[:1]}"
    if len(lines) != 1 or not lines[0].startswith("error:"):
        return f"stderr is {len(lines)} lines: {lines[:2]}"
    return None


@pytest.mark.parametrize("cls", list(CLASSES))
def test_bad_input_battery(cls, tmp_path_factory, servers):
    tmp = str(tmp_path_factory.mktemp(f"bad_{cls}"))
    cases = CLASSES[cls](make_files(tmp))
    results = run_battery(cases, tmp, servers)
    failing, routed = [], []
    for i, (argv, r) in enumerate(zip(cases, results)):
        p = problem(r)
        if p is None:
            continue
        is_routed = " ".join(argv) in {k.replace("{tmp}", tmp) for k in ROUTED}
        (routed if is_routed else failing).append(f"  [{i}] {case_id(argv)}: {p}")
    assert not failing, f"{len(failing)} of {len(cases)} {cls} cases fail:\n" + "\n".join(failing)
    if routed:
        pytest.xfail(f"routed: {len(routed)} cases fail in other engineers' code:\n" + "\n".join(routed))


def test_the_battery_is_big_enough(tmp_path):
    files = make_files(str(tmp_path))
    assert sum(len(fn(files)) for fn in CLASSES.values()) >= 300
