"""The host side of a kept CuTe-DSL MLIR module: the tensor maps the host encodes and the launch.

The DSL's host function (``func.func @cutlass___call__...``) builds each TMA atom with
``cute_nvgpu.atom.make_non_exec_tiled_tma_load|store(%gmem, %smem_layout, %cta_tiler)
<{kind = <sm_90>, num_multicast = N}>``: ``%gmem`` is typed with the global tensor
(``!cute.memref<f16, gmem, align<16>, "(1024,512,1):(512,1,524288)">``, shape and strides in elements;
``?`` a value known only at run time, ``?{i64 div=8}`` one known to be a multiple of 8), its first
result is the atom (``tma_gbasis = <"(64,128):(1@1,1@0)">``: per TMA dimension, innermost first, the
box extent and the global mode it walks), its second the coordinate tensor
(``"(1024,512,1):(1@1,1@0,0)"``: per global mode, the TMA dimension ``1@d`` it is, or none). Read
together they are the arguments ``cuTensorMapEncodeTiled`` receives (CUDA driver API): ``globalDim[d]``
the extent of the global mode(s) on dimension ``d``, ``globalStrides[d]`` their stride in bytes
(the driver takes dims 1.. only: dim 0 must be contiguous), ``boxDim[d]`` the gbasis extent, the
swizzle the shared layout's ``S<B,4,3>`` (``Swizzle<1|2|3,4,3>`` = 32B/64B/128B, CUTLASS
``cute/atom/copy_traits_sm90_tma_swizzle.hpp``).

The launch: ``cuda.launch_cfg.create(blockDim = (x, y, z), dynamicSmemBytes = s, gridDim = (x, y, z))``,
``cuda.launch_cfg.cluster_dim[%cfg] (x, y, z)`` and ``cuda.launch_ex @kernels::@k<%cfg> (args...)``
(argument ``i`` is the kernel's ``%arg<i>``); each value a constant (``arith.constant``) or dynamic
(None). The kernel states what it was compiled for in ``cutlass_launch_facts`` (``exact_grid_dim``,
``exact_block_dim``, ``exact_cluster_dim``).

>>> m = parse_cute_mlir('%c8_i32 = arith.constant 8 : i32\\n%0 = cute.static : !cute.int_tuple<"1">')
>>> constant_of(m, "%c8_i32")
8
"""
from __future__ import annotations

from dataclasses import dataclass

from verilayout.dtypes import mlir_bits
from verilayout.errors import LayoutError
from verilayout.frontends.cute_mlir import CuteModule, Memref, TmaAtom, interpret, parse_cute_mlir, split_top

__all__ = ["HostTmaMap", "HostLaunch", "KernelFacts", "constant_of", "host_tma_maps", "host_launch",
           "kernel_facts", "dim_value", "layout_leaves", "swizzle_mode"]

#: ``S<B,4,3>`` of a shared layout -> the CUtensorMapSwizzle it is encoded with (CUTLASS
#: ``get_tma_swizzle_bits``: B = 1, 2, 3 for 32B, 64B, 128B; no swizzle: none)
_SWIZZLES = {None: "none", (0, 4, 3): "none", (1, 4, 3): "32B", (2, 4, 3): "64B", (3, 4, 3): "128B"}


@dataclass(frozen=True)
class HostTmaMap:
    """One TMA atom the host builds, as ``cuTensorMapEncodeTiled`` receives it (dims innermost first,
    the TMA's order). ``global_dims[d]`` / ``global_strides[d]`` (bytes; ``[0]`` is dim 0's, which the
    driver does not take: it must be the element size) are None where dynamic; ``stride_divisors[d]``
    the bytes a dynamic stride is known to be a multiple of (1: nothing known)."""

    line: int
    value: str
    kind: str
    elem: str
    elem_bits: int
    global_dims: tuple[int | None, ...]
    global_strides: tuple[int | None, ...]
    stride_divisors: tuple[int, ...]
    box: tuple[int, ...]
    swizzle: str | None
    swizzle_text: str
    num_multicast: int
    gmem_layout: str

    @property
    def rank(self) -> int:
        return len(self.box)


@dataclass(frozen=True)
class HostLaunch:
    """``cuda.launch_ex`` of a kernel with its ``launch_cfg``: grid, block and cluster (None entries:
    dynamic; ``cluster`` None: not set), the dynamic shared bytes (``smem``: a constant, else None, with
    ``smem_from`` the op that computes it, ``cute.kernel_smem_size`` naming the kernel it sizes), and the
    values passed, in the kernel's argument order."""

    line: int
    kernel: str
    grid: tuple[int | None, int | None, int | None]
    block: tuple[int | None, int | None, int | None]
    cluster: tuple[int | None, int | None, int | None] | None
    smem: int | None
    smem_from: str
    args: tuple[str, ...]
    #: the kernel ``cute.kernel_smem_size`` sizes ("" where the bytes are not that op's)
    smem_kernel: str = ""


@dataclass(frozen=True)
class KernelFacts:
    """A ``cuda.kernel``'s name, line, argument names and its ``cutlass_launch_facts`` (None: not stated)."""

    line: int
    name: str
    args: tuple[str, ...]
    grid: tuple[int, int, int] | None
    block: tuple[int, int, int] | None
    cluster: tuple[int, int, int] | None


def constant_of(mod: CuteModule, value: str, before: int | None = None) -> int | None:
    """The integer an ``arith.constant`` gives ``value`` (the last definition above line ``before``), else None.

    >>> constant_of(parse_cute_mlir('%c = arith.constant -3 : i64\\n%0 = cute.static : !cute.int_tuple<"1">'), "%c")
    -3
    """
    op = mod.producer(value, before)
    text = mod.host.get(op.line, "") if op is not None and op.name == "arith.constant" else ""
    lit = text.partition("arith.constant")[2].partition(":")[0].strip()
    return int(lit) if lit.lstrip("-").isdigit() else None


def dim_value(leaf: str) -> tuple[int | None, int]:
    """A layout leaf's value and what it is a multiple of: ``8`` -> (8, 8), ``?`` -> (None, 1),
    ``?{i64 div=8}`` -> (None, 8).

    >>> dim_value("?{i64 div=8}"), dim_value("12")
    ((None, 8), (12, 12))
    """
    t = leaf.strip()
    if t.lstrip("-").isdigit():
        return int(t), abs(int(t))
    if t.startswith("?"):
        div = t.partition("div=")[2].rstrip("}").strip()
        return None, int(div) if div.isdigit() else 1
    raise LayoutError(f"layout leaf {leaf!r}: expected an integer, ? or ?{{div=N}}")


def layout_leaves(text: str) -> tuple[list[str], list[str]]:
    """The flat shape and stride leaves of a layout text ``shape:stride`` (nesting dropped,
    colexicographic order kept).

    >>> layout_leaves("(128,((1,16),1)):(1@1,((0,1@2),0))")
    (['128', '1', '16', '1'], ['1@1', '0', '1@2', '0'])
    """
    shape, colon, stride = text.partition(":")
    if not colon:
        raise LayoutError(f"layout {text!r}: expected shape:stride")
    flat = [[x.strip() for x in part.replace("(", "").replace(")", "").split(",")] for part in (shape, stride)]
    if len(flat[0]) != len(flat[1]):
        raise LayoutError(f"layout {text!r}: {len(flat[0])} shape leaves, {len(flat[1])} strides")
    return flat[0], flat[1]


def swizzle_mode(layout_text: str) -> tuple[str | None, str]:
    """The CUtensorMapSwizzle of a shared layout text (``S<3,4,3> o 0 o ...`` -> 128B), and its ``S<...>``;
    (None, text) for a swizzle TMA has no mode for.

    >>> swizzle_mode("S<2,4,3> o 0 o (8,32):(32,1)"), swizzle_mode("(8,32):(32,1)")
    (('64B', 'S<2,4,3>'), ('none', ''))
    """
    t = layout_text.strip().strip('"')
    if not t.startswith("S<"):
        return "none", ""
    sw = t[:t.find(">") + 1]
    parts = sw[2:-1].split(",")
    key = tuple(int(p) for p in parts) if len(parts) == 3 and all(p.strip().isdigit() for p in parts) else sw
    return _SWIZZLES.get(key), sw


def _basis(leaf: str) -> tuple[int, int] | None:
    """``k@d`` -> (d, k); ``0`` -> None."""
    t = leaf.strip()
    if t == "0":
        return None
    k, at, d = t.partition("@")
    if not (at and k.isdigit() and d.isdigit()):
        raise LayoutError(f"coordinate stride {leaf!r}: expected k@d or 0")
    return int(d), int(k)


def _tma_dims(gmem: str, coord: str, rank: int, elem_bits: int,
              what: str) -> tuple[tuple, tuple, tuple]:
    """Per TMA dim: the global extent, the stride in bytes and the bytes a dynamic stride divides by.

    Law: the global leaves on dim ``d`` (coordinate stride ``k@d``), ordered by ``k``, form one dim when
    each ``k`` is the product of the extents before it and each stride the one before times its extent;
    the extent is their product, the stride the first's."""
    shape, stride = layout_leaves(gmem)
    cshape, cstride = layout_leaves(coord)
    if len(cshape) != len(shape):
        raise LayoutError(f"{what}: the coordinate tensor {coord!r} does not have the global tensor's modes {gmem!r}")
    on: dict[int, list] = {d: [] for d in range(rank)}
    for ext, st, cs in zip(shape, stride, cstride):
        b = _basis(cs)
        if b is not None and b[0] < rank:
            on[b[0]].append((b[1], dim_value(ext)[0], dim_value(st)))
    dims, strides, divs = [], [], []
    for d in range(rank):
        leaves = sorted(on[d]) or [(1, 1, (None, 1))]
        k_want, ext_acc, st0 = 1, 1, leaves[0][2]
        for k, ext, (st, _div) in leaves:
            if k != k_want or (ext_acc is not None and st is not None and st0[0] is not None
                               and st != st0[0] * k):
                raise LayoutError(f"{what}: the global modes on TMA dim {d} do not form one dim ({gmem})")
            ext_acc = None if ext is None or ext_acc is None else ext_acc * ext
            k_want = None if ext is None else k * ext
        dims.append(ext_acc)
        byte = elem_bits // 8
        strides.append(None if st0[0] is None else st0[0] * elem_bits // 8)
        divs.append(st0[1] * byte if st0[0] is None else abs(st0[0]) * byte)
    return tuple(dims), tuple(strides), tuple(divs)


def _gbasis_box(gbasis: str) -> tuple[int, ...]:
    """Per TMA dim, the box extent: the product of the leaves of the gbasis's top-level mode ``d``."""
    shape = gbasis.partition(":")[0].strip()
    modes = split_top(shape[1:-1]) if shape.startswith("(") else [shape]
    out = []
    for m in modes:
        n = 1
        for leaf in m.replace("(", "").replace(")", "").split(","):
            n *= int(leaf)
        out.append(n)
    return tuple(out)


def _num_multicast(text: str) -> int:
    k = text.find("num_multicast =")
    digits = text[k + 15:].lstrip().split("}")[0].split()[0] if k >= 0 else "1"
    return int(digits) if digits.isdigit() else 1


def host_tma_maps(mod: CuteModule) -> list[HostTmaMap]:
    """Every ``make_non_exec_tiled_tma_load|store`` of the module as the map the host encodes (module
    docstring); one whose types are not read is a LayoutError naming its line.

    >>> m = parse_cute_mlir('%a, %t = cute_nvgpu.atom.make_non_exec_tiled_tma_load(%g, %s, %l) <{kind = <sm_90> '
    ...   'num_multicast = 1}> : (!cute.memref<f16, gmem, align<16>, "(1024,512):(512,1)">, !cute.composed_layout<'
    ...   '"S<3,4,3> o 0 o (8,64):(64,1)">, !cute.layout<"(128,64):(1@0,1@1)">) -> (!cute_nvgpu.atom.non_exec_'
    ...   'tiled_tma_load<sm_90, f16, copy_bits = 131072, tma_gbasis = <"(64,128):(1@1,1@0)">>, !cute.coord_tensor<'
    ...   '"(0,0)", "(1024,512):(1@1,1@0)">)')
    >>> t = host_tma_maps(m)[0]; t.global_dims, t.global_strides, t.box, t.swizzle
    ((512, 1024), (2, 1024), (64, 128), '128B')
    """
    out = []
    for op in mod.ops:
        if not op.name.startswith("cute_nvgpu.atom.make_non_exec_tiled_tma_") or len(op.operand_types) < 2 \
                or len(op.result_types) < 2 or not op.results:
            continue
        what = f"MLIR line {op.line}"
        gmem, atom, coord = interpret(op.operand_types[0]), interpret(op.result_types[0]), interpret(op.result_types[1])
        if not isinstance(gmem, Memref) or not isinstance(atom, TmaAtom) or atom.gbasis is None \
                or getattr(coord, "layout", None) is None:
            raise LayoutError(f"{what}: a TMA atom whose global tensor, gbasis or coordinate tensor is not typed")
        box = _gbasis_box(atom.gbasis)
        dims, strides, divs = _tma_dims(gmem.layout, coord.layout, len(box), gmem.elem_bits, what)
        sw_text = op.operand_types[1].args[0] if op.operand_types[1].args else ""
        mode, sw = swizzle_mode(sw_text)
        bits = mlir_bits(gmem.elem)
        out.append(HostTmaMap(op.line, op.results[0], "store" if op.name.endswith("store") else "load", gmem.elem,
                              bits or 0, dims, strides, divs, box, mode, sw, _num_multicast(mod.host.get(op.line, "")),
                              gmem.layout))
    return out


def _triple(mod: CuteModule, values: list[str], before: int) -> tuple:
    vals = tuple(constant_of(mod, v, before) for v in values[:3])
    return vals + (None,) * (3 - len(vals))


def _keyword_values(text: str, key: str) -> list[str]:
    """The SSA values after ``key =`` in ``text``: ``(%a, %b, %c)`` or one ``%a``."""
    k = text.find(key + " =")
    if k < 0:
        return []
    rest = text[k + len(key) + 2:].lstrip()
    body = rest[1:rest.find(")")] if rest.startswith("(") else rest.split(",")[0]
    return [v.strip() for v in body.split(",") if v.strip().startswith("%")]


def host_launch(mod: CuteModule) -> list[HostLaunch]:
    """Every ``cuda.launch_ex`` of the module with its ``launch_cfg`` (module docstring).

    >>> m = parse_cute_mlir('%c1 = arith.constant 1 : i32\\n%c8 = arith.constant 8 : i32\\n%s = arith.constant 1024 : i64\\n'
    ...   '%9 = cuda.launch_cfg.create<max_attrs = 17 : i32> (blockDim = (%c8, %c1, %c1), dynamicSmemBytes = %s, '
    ...   'gridDim = (%c8, %c8, %c1), stream = %st) : i32\\n%r = cuda.launch_ex @kernels::@k<%9> (%a, %b) : i32\\n'
    ...   '%0 = cute.static : !cute.int_tuple<"1">')
    >>> l = host_launch(m)[0]; l.kernel, l.grid, l.block, l.smem, l.args
    ('k', (8, 8, 1), (8, 1, 1), 1024, ('%a', '%b'))
    """
    out = []
    for op in mod.ops:
        text = mod.host.get(op.line, "") if op.name == "cuda.launch_ex" else ""
        callee, _lt, rest = text.partition("cuda.launch_ex")[2].partition("<")
        cfg_value, _gt, rest = rest.partition(">")
        args = rest.strip()
        if not cfg_value.startswith("%") or not args.startswith("("):
            continue
        args = args[1:args.find(")")] if ")" in args else ""
        kernel = callee.strip().rpartition("@")[2]
        cfg_op = mod.producer(cfg_value.strip(), op.line)
        cfg = mod.host.get(cfg_op.line, "") if cfg_op is not None else ""
        smem_v = _keyword_values(cfg, "dynamicSmemBytes")
        smem = constant_of(mod, smem_v[0], op.line) if smem_v else None
        src = mod.producer(smem_v[0], op.line) if smem_v else None
        smem_from = "" if src is None else src.name
        sized = ""
        if src is not None and src.name == "cute.kernel_smem_size":
            sized = mod.host.get(src.line, "").partition("@kernels::@")[2].partition(" ")[0]
            smem_from += f" @kernels::@{sized}"
        cluster = None
        for o in mod.ops:
            if o.name == "cuda.launch_cfg.cluster_dim" and o.operands[:1] == (cfg_value.strip(),) and o.line < op.line:
                cluster = _triple(mod, list(o.operands[1:]), op.line)
        out.append(HostLaunch(op.line, kernel, _triple(mod, _keyword_values(cfg, "gridDim"), op.line),
                              _triple(mod, _keyword_values(cfg, "blockDim"), op.line), cluster, smem,
                              smem_from, tuple(a.strip() for a in args.split(",") if a.strip()), sized))
    return out


def _facts_array(attrs: str, key: str) -> tuple[int, int, int] | None:
    k = attrs.find(key + " = array<i64:")
    if k < 0:
        return None
    vals = attrs[k + len(key) + 13:].split(">")[0].split(",")
    return tuple(int(v) for v in vals) if len(vals) == 3 and all(v.strip().isdigit() for v in vals) else None


def kernel_facts(mod: CuteModule) -> list[KernelFacts]:
    """Every ``cuda.kernel`` with its argument names and ``cutlass_launch_facts``.

    >>> kernel_facts(parse_cute_mlir('cuda.kernel @k(%arg0: i32) attributes {cutlass_launch_facts = {exact_grid_dim = '
    ...     'array<i64: 8, 4, 1>}} {\\n%0 = cute.static : !cute.int_tuple<"1">'))[0].grid
    (8, 4, 1)
    """
    out = []
    for o in mod.ops:
        if o.name != "cuda.kernel":
            continue
        head = mod.host.get(o.line, "")
        name = head.partition("@")[2].partition("(")[0].strip()
        out.append(KernelFacts(o.line, name, tuple(a for a in o.operands if a.startswith("%arg")),
                               _facts_array(o.attrs, "exact_grid_dim"), _facts_array(o.attrs, "exact_block_dim"),
                               _facts_array(o.attrs, "exact_cluster_dim")))
    return out
