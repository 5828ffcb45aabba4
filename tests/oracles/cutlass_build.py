"""Host-only builds of the CUTLASS oracles (test-only): find CuTe's headers and a C++ compiler,
compile a header plus generated calls in two units in parallel, cache the executable by content,
run it and return what it prints.

A full build costs about three CPU-minutes, so each oracle's whole output is recorded
(``cutlass/<name>.recorded.txt``, written by ``python -m tests.oracles.cutlass_build --record``)
and a session builds one configuration per element width, majorness and swizzle live, which
must print exactly the recorded lines (:func:`oracle_output`). ``tests/conftest.py`` starts
:func:`prebuild` in a background process when a session collects the CUTLASS oracle tests (and runs
those tests last), so no test waits on a compiler; a build is guarded by a file lock, so a test that
arrives while the background build runs waits for it instead of building the same thing twice."""
from __future__ import annotations

import concurrent.futures
import fcntl
import functools
import hashlib
import importlib.metadata
import importlib.util
import os
import pathlib
import shutil
import subprocess
import tempfile
from typing import Callable

import pytest


def toolchain() -> tuple[str, list[str]]:
    """``(c++ compiler, include dirs)``: CuTe from the nvidia-cutlass wheel, CUDA's headers."""
    spec = importlib.util.find_spec("cutlass_library")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("nvidia-cutlass wheel (cutlass_library) is not installed")
    inc = pathlib.Path(list(spec.submodule_search_locations)[0]) / "source" / "include"
    if not (inc / "cute" / "atom" / "mma_traits_sm90_gmma.hpp").exists():
        pytest.skip(f"CuTe headers not found under {inc}")
    cxx = shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
    if cxx is None:
        pytest.skip("no C++ compiler (g++/c++/clang++) on PATH")
    cuda = []
    for root in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if root and (pathlib.Path(root) / "targets/x86_64-linux/include/cuda_runtime_api.h").exists():
            base = pathlib.Path(root) / "targets/x86_64-linux/include"
            cuda = [str(base), str(base / "cccl")]
            break
        if root and (pathlib.Path(root) / "include/cuda_runtime_api.h").exists():
            cuda = [str(pathlib.Path(root) / "include"), str(pathlib.Path(root) / "include/cccl")]
            break
    if not cuda:
        pytest.skip("CUDA toolkit headers (cuda_runtime_api.h) not found; CuTe needs them")
    return cxx, [str(inc)] + cuda


@functools.lru_cache(maxsize=1)
def _wheel_content() -> tuple[str, str] | None:
    """``(folder of cutlass_library, content id)`` of the installed nvidia-cutlass wheel: the
    SHA-256 of its ``RECORD`` (which lists the SHA-256 of every file the wheel installed), or None."""
    spec = importlib.util.find_spec("cutlass_library")
    if spec is None or not spec.submodule_search_locations:
        return None
    try:
        record = importlib.metadata.distribution("nvidia-cutlass").read_text("RECORD")
    except importlib.metadata.PackageNotFoundError:
        return None
    if not record:
        return None
    folder = str(pathlib.Path(list(spec.submodule_search_locations)[0]))
    return folder, "nvidia-cutlass@" + hashlib.sha256(record.encode()).hexdigest()[:16]


def content_named(text: str) -> str:
    """``text`` (an include folder or a compiler flag) with the nvidia-cutlass wheel's folder named
    by the wheel's content (:func:`_wheel_content`), for the build cache keys: the same headers
    installed under another path (a fresh clone's virtual environment) find the same executable,
    and other headers (another wheel) never do.

    >>> content_named("-I/usr/local/cuda/include")
    '-I/usr/local/cuda/include'
    """
    wheel = _wheel_content()
    return text.replace(wheel[0], wheel[1]) if wheel else text


def build_and_run(header: pathlib.Path, lines: list[str], name: str) -> str:
    """Compile ``header`` with ``lines`` (statements, split over two units) and run it."""
    cxx, incs = toolchain()
    parts = [lines[0::2], lines[1::2]]
    sources = {f"part{i}.cpp": (f'#include "{header.name}"\nvoid part{i}() {{\n' + "\n".join(part)
                                + "\n}\n") for i, part in enumerate(parts)}
    sources["main.cpp"] = "void part0();\nvoid part1();\nint main() { part0(); part1(); return 0; }\n"
    key = hashlib.sha256((header.read_text() + "".join(sources.values()) + cxx
                          + "".join(map(content_named, incs))).encode()).hexdigest()[:16]
    work = pathlib.Path(tempfile.gettempdir()) / f"verilayout-{name}-{key}"
    exe = work / name
    work.mkdir(parents=True, exist_ok=True)
    with open(work / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)        # one build per key, whoever comes first
        if not exe.exists():
            _build(exe, header, sources, cxx, incs)
    return subprocess.run([str(exe)], capture_output=True, text=True, timeout=120).stdout


def run_program(name: str, src: str, defines: tuple[str, ...] = ()) -> str:
    """What the one C++ unit ``src`` prints, compiled against CuTe (:func:`toolchain`, C++17, -O0)
    with ``defines``; the executable is cached in the temp folder under a key of the source, the
    compiler and every flag, so a source is built once (a failed compile fails the test with the
    compiler's last lines).

    >>> run_program("hello", "int main() { __builtin_puts(\\"one\\"); }").strip()
    'one'
    """
    cxx, incs = toolchain()
    flags = ["-std=c++17", "-O0", "-w", *defines, *[f"-I{p}" for p in incs]]
    key = hashlib.sha256("\n".join([src, cxx, *map(content_named, flags)]).encode()).hexdigest()[:16]
    work = pathlib.Path(tempfile.gettempdir()) / f"verilayout-{name}-{key}"
    exe = work / name
    if not exe.exists():
        work.mkdir(parents=True, exist_ok=True)
        (work / f"{name}.cpp").write_text(src)
        tmp = work / f"exe.{os.getpid()}"
        r = subprocess.run([cxx, *flags, f"{name}.cpp", "-o", str(tmp)], cwd=work,
                           capture_output=True, text=True, timeout=900)
        if r.returncode:
            pytest.fail(f"compiling the oracle {name} failed:\n{r.stderr[-3000:]}")
        os.replace(tmp, exe)
    return subprocess.run([str(exe)], capture_output=True, text=True, timeout=120).stdout


RECORDINGS = pathlib.Path(__file__).parent / "cutlass"


def _record_key(header: pathlib.Path | None, lines: list[str]) -> str:
    """What a recording was made from: the header, the generated calls (or printed expressions)
    and the wheel's version."""
    text = (header.read_text() if header else "") + "\n".join(lines) + importlib.metadata.version("nvidia-cutlass")
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _recording(name: str, key: str) -> str | None:
    """The recorded output of oracle ``name`` if it was made from ``key``, else None."""
    rec = RECORDINGS / f"{name}.recorded.txt"
    if not rec.exists():
        return None
    head, _, body = rec.read_text().partition("\n")
    return body if head == f"# {name} {key}" else None


def _write_recording(name: str, key: str, body: str) -> None:
    (RECORDINGS / f"{name}.recorded.txt").write_text(f"# {name} {key}\n{body}")


def _stale(name: str, what: str) -> None:
    pytest.fail(f"the {name} program prints, for {what} built live, other lines than its recording "
                f"{name}.recorded.txt: re-record with python -m tests.oracles.cutlass_build --record")


def live_sample(cfgs: list[tuple]) -> list[tuple]:
    """One configuration per (element width, majorness, swizzle): its largest tile, in the
    tile order that alternates from one such group to the next (both orders are built)."""
    groups: dict[tuple, list[tuple]] = {}
    for c in cfgs:
        groups.setdefault(c[:3], []).append(c)
    out = []
    for i, group in enumerate(groups.values()):
        order = ("col", "row")[i % 2]
        out.append(max((c for c in group if c[5] == order), key=lambda c: c[3] * c[4],
                       default=group[-1]))
    return out


def oracle_output(header: pathlib.Path, cfgs: list[tuple], source: Callable[[list], list[str]],
                  name: str) -> str:
    """What the oracle prints for every configuration of ``cfgs``. Where a recording made from
    the same header, calls and wheel version exists, the :func:`live_sample` is built and run and
    must print exactly its recorded lines (else the test fails: re-record); the recording is
    returned. Without such a recording every configuration is built (minutes)."""
    body = _recording(name, _record_key(header, source(cfgs)))
    if body is None:
        return build_and_run(header, source(cfgs), name)
    sample = live_sample(cfgs)
    ids = {config_id(c) for c in sample}

    def of_sample(text: str) -> list[str]:      # the L/D lines of the sample's ids
        return [ln for ln in text.splitlines() if ln.startswith(("L ", "D ")) and ln.split(" ", 2)[1] in ids]
    live = of_sample(build_and_run(header, source(sample), name))
    if not live or live != of_sample(body):
        _stale(name, f"the {len(sample)} configurations")
    return body


def recorded_lines(name: str, items: list[str], run: Callable[[list[str]], list[str]],
                   every: int = 6) -> list[str]:
    """The output lines (one per item) of an oracle program built from ``items``, as
    :func:`oracle_output` does for the descriptor oracles: with a recording made from the same items
    and wheel version, only every ``every``-th item is built and run live and must print its
    recorded line; without one, every item is built. ``run(items)`` builds, runs, returns lines."""
    body = _recording(name, _record_key(None, items))
    lines = body.split("\n")[:len(items)] if body is not None else []
    if len(lines) != len(items):
        return run(items)
    if run(items[::every]) != lines[::every]:
        _stale(name, f"every {every}th of its {len(items)} items")
    return lines


def record() -> None:
    """Build every configuration of the oracles and write their recordings."""
    from tests.oracles import test_cute_pycute as cute, test_cutlass_gmma_desc as gmma, test_cutlass_umma_desc as umma
    exprs = cute.cute_exprs()[0]
    _write_recording("cute_oracle", _record_key(None, exprs), "\n".join(cute.run_cute(exprs)) + "\n")
    for mod, name in ((umma, "umma_desc_oracle"), (gmma, "gmma_desc_oracle")):
        lines = mod._source(mod.configs())
        _write_recording(name, _record_key(mod.HEADER, lines), build_and_run(mod.HEADER, lines, name))


def _build(exe: pathlib.Path, header: pathlib.Path, sources: dict, cxx: str, incs: list) -> None:
    """Compile and link ``sources`` into ``exe`` (its folder exists and is locked by the caller)."""
    work, name = exe.parent, exe.name
    # built in a private folder and renamed into place: parallel test workers (pytest-xdist)
    # building the same key never see each other's half-written objects
    build = pathlib.Path(tempfile.mkdtemp(prefix=f"build-{os.getpid()}-", dir=work))
    shutil.copy(header, build / header.name)
    for fname, text in sources.items():
        (build / fname).write_text(text)
    flags = ["-std=c++17", "-O0", "-w", f"-I{build}"] + [f"-I{p}" for p in incs]

    def compile_one(fname):
        return subprocess.run([cxx, *flags, "-c", fname, "-o", fname[:-4] + ".o"], cwd=build,
                              capture_output=True, text=True)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        results = list(pool.map(compile_one, sources))
    for r in results:
        if r.returncode:
            pytest.fail(f"compiling the CUTLASS oracle {name} failed:\n{r.stderr[-3000:]}")
    r = subprocess.run([cxx, "-o", name, "part0.o", "part1.o", "main.o"], cwd=build,
                       capture_output=True, text=True)
    if r.returncode:
        pytest.fail(f"linking the CUTLASS oracle {name} failed:\n{r.stderr[-3000:]}")
    os.replace(build / name, exe)
    shutil.rmtree(build, ignore_errors=True)


def prebuild() -> None:
    """Build every CUTLASS oracle into the cache (run by ``tests/conftest.py`` in the background;
    a failure here is silent: the test that needs the oracle builds it again and reports it)."""
    from tests.oracles import test_cutlass_gmma_desc as gmma, test_cutlass_umma_desc as umma
    for mod, name in ((umma, "umma_desc_oracle"), (gmma, "gmma_desc_oracle")):
        try:
            oracle_output(mod.HEADER, mod.configs(), mod._source, name)
        except BaseException:                  # pytest.skip/fail outside a test, a compiler error
            continue


def config_id(c: tuple) -> str:
    """The id a tile configuration ``(bits, major, swizzle, mn, k, order)`` prints under."""
    bits, major, sw, mn, k, order = c
    return f"b{bits}_{major}_{sw}_{mn}x{k}_{order}"


def tile_calls(cfgs: list, run: str, atom: str, major_enum: str, types: dict, atoms: dict) -> list[str]:
    """One ``run<T, Major, Atom, Shape, Step>("id")`` statement per configuration: ``atom`` is the
    atom template's namespace (``cute::UMMA``), ``major_enum`` the Major enum's."""
    lines = []
    for c in cfgs:
        bits, major, sw, mn, k, order = c
        t = types[bits]
        step = "cute::Step<cute::_1,cute::_2>" if order == "col" else "cute::Step<cute::_2,cute::_1>"
        lines.append(f"  {run}<{t}, {major_enum}::{major}, {atom}::Layout_{major}_{atoms[sw]}_Atom<{t}>, "
                     f"cute::Shape<cute::Int<{mn}>, cute::Int<{k}>>, {step}>(\"{config_id(c)}\");")
    return lines


def descriptor_oracle(header: pathlib.Path, cfgs: list[tuple], source: Callable[[list], list[str]],
                      name: str, hex_last: bool = False) -> tuple[list[tuple], dict, dict]:
    """``(cfgs, layouts, descs)``: a descriptor oracle's :func:`oracle_output` for ``cfgs`` read by
    :func:`parse_output` (the layouts and descriptor rows by configuration id)."""
    layouts, descs = parse_output(oracle_output(header, cfgs, source, name), hex_last)
    return cfgs, layouts, descs


def assert_every_config_printed(cfgs: list[tuple], layouts: dict, descs: dict) -> None:
    """Each configuration's layout line was printed, and one descriptor line per 256-bit K-block
    of its tile (``k * bits / 256``): the oracle ran every configuration to the end."""
    for c in cfgs:
        bits, _major, _sw, _mn, k, _order = c
        assert config_id(c) in layouts
        assert len(descs[config_id(c)]) == k // (256 // bits)


def parse_output(out: str, hex_last: bool = False) -> tuple[dict, dict]:
    """``L <id> <layout>`` and ``D <id> <int fields...>`` lines: the layouts by id and the
    descriptor rows by id (integers; with ``hex_last`` the last field is hexadecimal)."""
    layouts, descs = {}, {}
    for line in out.splitlines():
        if line.startswith("L "):
            _, cid, text = line.split(" ", 2)
            layouts[cid] = text.strip()
        elif line.startswith("D "):
            _, cid, *fields = line.split()
            descs.setdefault(cid, []).append(tuple(
                int(x, 16) if hex_last and i == len(fields) - 1 else int(x) for i, x in enumerate(fields)))
    return layouts, descs


def tile_configs(types: dict, atoms: dict, widths: dict, krows: dict | None = None,
                 skip: Callable[[str, str], bool] = lambda sw, major: False) -> list[tuple]:
    """Tiles of each element width, majorness and swizzle atom: the atom (MN-major: ``width``
    16-byte units by ``krows`` K rows, default 8; K-major: 8 rows by the atom's width) repeated
    1x1, 2x2 and 4x1 (at least one 256-bit K-block), in both tile orders; ``(bits, major,
    swizzle, mn, k, order)``, mn in 8..256."""
    out = []
    for bits in types:
        t, kb = 128 // bits, 256 // bits
        for major in ("K", "MN"):
            for sw in atoms:
                if skip(sw, major):
                    continue
                w = widths[sw]
                amn, ak = (w * t, (krows or {}).get(sw, 8)) if major == "MN" else (8, w * t)
                for a, b in ((1, 1), (2, 2), (4, 1)):
                    mn, k = amn * a, max(ak, kb) * b
                    if 8 <= mn <= 256:
                        out += [(bits, major, sw, mn, k, order) for order in ("col", "row")]
    return out


if __name__ == "__main__":
    import sys
    if sys.argv[1:] != ["--record"]:
        sys.exit("usage: python -m tests.oracles.cutlass_build --record")
    record()
