"""Intel Xe2/Xe3 2D block loads: every hardware limit, and where each loaded byte lands.

A 2D block load reads ``array_length`` blocks of ``height`` rows x ``width``
elements, side by side, from a surface (base address, width and pitch in bytes,
height in rows) at the element offset ``(x, y)``, optionally VNNI-transformed
(rows packed into 32-bit values) or transposed, into the registers of a 16-lane
sub-group. Facts come from ``shared/reference/intel_2d_block_io.md``; each rule
below names its sources there: [S] SPV_INTEL_2d_block_io, [O]
cl_intel_subgroup_2d_block_io, [I] IGC Subgroup2DBlockIoResolution, [V] the vISA
verifier, [E] SYCL ESIMD restrictions, [T] the Triton Intel backend's verifiers.

Where the data lands ([S], [O]): each block's rows are written row-major with the
width padded to a power of two (transposed: the block is transposed, its height
padded to a power of two; VNNI: rows are grouped ``4 / element size`` at a time
into 32-bit values, the height padded to that group), each block fills whole
64-byte registers, and the register bytes are dealt to lanes in units of the
per-lane element type of the OpenCL built-ins: 2 bytes for 8- and 16-bit loads,
4 for 32-bit, VNNI and d32 transposed, 8 for 64-bit: unit ``U`` goes to lane
``U % 16``.

>>> s = Surface(width=64, height=256, pitch=64)
>>> ld = BlockLoad(2, 16, 32, s, array_length=2)
>>> violations(ld)
()
>>> lane_elements(ld, 2)[1][:3].tolist()        # lane 1's first three f16: (row, col)
[[0, 1], [1, 1], [2, 1]]
>>> [v.limit for v in violations(BlockLoad(2, 16, 64, s))]
['block height']
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

import numpy as np

from verilayout.dtypes import IntelArch
from verilayout.bits import is_pow2 as _pow2, next_pow2
from verilayout.errors import LayoutError

ARCHS = ("pvc", "xe2", "xe3")
SUBGROUP_SIZE = 16
GRF_BYTES = 64
MAX_ROW_BYTES = 64
MAX_LOAD_BYTES = 2048
MAX_SURFACE = 1 << 24

#: Plain load/prefetch width range (elements) per element size [I, T].
PLAIN_WIDTH = {1: (4, 64), 2: (2, 32), 4: (1, 16), 8: (1, 8)}
#: Array lengths per element size [V, T].
PLAIN_ARRAY = {1: (1, 2, 4), 2: (1, 2, 4), 4: (1, 2), 8: (1,)}
#: VNNI width range per architecture and element size [I, T, E].
VNNI_WIDTH = {"pvc": {1: (4, 16), 2: (2, 16)}, "xe2": {1: (4, 64), 2: (2, 32)},
              "xe3": {1: (4, 64), 2: (2, 32)}}
VNNI_MIN_HEIGHT = {1: 4, 2: 2}
MAX_HEIGHT = 32


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _roundup(v: int, m: int) -> int:
    return -(-v // m) * m


@dataclass(frozen=True)
class Surface:
    """The 2D memory region a block load reads: byte ``width`` and ``pitch``, ``height`` rows,
    ``base`` byte address.

    >>> Surface(width=128, height=64, pitch=128).to_dict()
    {'base': 0, 'width': 128, 'height': 64, 'pitch': 128}
    """

    width: int
    height: int
    pitch: int
    base: int = 0

    def __post_init__(self):
        for k in ("width", "height", "pitch", "base"):
            v = getattr(self, k)
            if not _is_int(v):
                raise LayoutError(f"surface {k} must be an integer, got {v!r}")
            object.__setattr__(self, k, int(v))

    def to_dict(self) -> dict:
        return {"base": self.base, "width": self.width, "height": self.height,
                "pitch": self.pitch}

    @classmethod
    def from_dict(cls, d: Mapping) -> "Surface":
        """Inverse of :meth:`to_dict` (unknown keys are errors)."""
        _keys(d, ("base", "width", "height", "pitch"), ("width", "height", "pitch"), "surface")
        return cls(d["width"], d["height"], d["pitch"], d.get("base", 0))


@dataclass(frozen=True)
class BlockLoad:
    """One 2D block load: element size (bytes), block width (elements) and height (rows),
    array length, VNNI / transpose, the surface and the ``(x, y)`` origin (x in elements).

    >>> BlockLoad(2, 16, 32, Surface(64, 256, 64), array_length=2).describe()
    '16b 32r16x2c at (x=0, y=0)'
    """

    elem_bytes: int
    width: int
    height: int
    surface: Surface
    x: int = 0
    y: int = 0
    array_length: int = 1
    vnni: bool = False
    transpose: bool = False

    def __post_init__(self):
        for k in ("elem_bytes", "width", "height", "x", "y", "array_length"):
            v = getattr(self, k)
            if not _is_int(v):
                raise LayoutError(f"block load {k} must be an integer, got {v!r}")
            object.__setattr__(self, k, int(v))
        for k in ("vnni", "transpose"):
            if not isinstance(getattr(self, k), bool):
                raise LayoutError(f"block load {k} must be true or false, got {getattr(self, k)!r}")
        if not isinstance(self.surface, Surface):
            raise LayoutError(f"block load surface must be a Surface, got {self.surface!r}")

    @property
    def mode(self) -> str:
        """``"plain"``, ``"vnni"`` or ``"transpose"``."""
        return "transpose" if self.transpose else "vnni" if self.vnni else "plain"

    @property
    def unit_bytes(self) -> int:
        """Bytes each lane receives at a time (the OpenCL built-ins' per-lane element type)."""
        if self.transpose:
            return self.elem_bytes
        if self.vnni:
            return 4
        return max(2, self.elem_bytes)

    @property
    def block_bytes(self) -> int:
        """Register bytes one block fills, padding included."""
        e, h, w = self.elem_bytes, max(self.height, 0), next_pow2(max(self.width, 1))
        if self.transpose:
            data = max(self.width, 0) * next_pow2(max(h, 1)) * e
        elif self.vnni:
            k = max(1, 4 // max(e, 1))
            data = _roundup(h, k) // k * w * 4
        else:
            data = h * w * e
        return _roundup(max(data, 1), GRF_BYTES)

    @property
    def register_bytes(self) -> int:
        """Bytes delivered to the sub-group's registers (all blocks, padding included)."""
        return self.block_bytes * max(self.array_length, 1)

    def describe(self) -> str:
        """Short text in the OpenCL built-ins' naming: ``16b 32r16x2c vnni at (x=0, y=0)``."""
        flags = " vnni" if self.vnni else " transpose" if self.transpose else ""
        return (f"{8 * self.elem_bytes}b {self.height}r{self.width}x{self.array_length}c{flags} "
                f"at (x={self.x}, y={self.y})")

    def moved(self, dx: int, dy: int) -> "BlockLoad":
        """The same load at ``(x + dx, y + dy)``."""
        return BlockLoad(self.elem_bytes, self.width, self.height, self.surface, self.x + dx,
                         self.y + dy, self.array_length, self.vnni, self.transpose)

    def to_dict(self) -> dict:
        return {"elem_bytes": self.elem_bytes, "width": self.width, "height": self.height,
                "array_length": self.array_length, "vnni": self.vnni,
                "transpose": self.transpose, "x": self.x, "y": self.y,
                "surface": self.surface.to_dict()}

    @classmethod
    def from_dict(cls, d: Mapping) -> "BlockLoad":
        """Inverse of :meth:`to_dict` (unknown keys are errors)."""
        keys = ("elem_bytes", "width", "height", "array_length", "vnni", "transpose", "x", "y",
                "surface")
        _keys(d, keys, ("elem_bytes", "width", "height", "surface"), "block load")
        if not isinstance(d["surface"], Mapping):
            raise LayoutError(f"block load surface must be an object, got {d['surface']!r}")
        return cls(d["elem_bytes"], d["width"], d["height"], Surface.from_dict(d["surface"]),
                   d.get("x", 0), d.get("y", 0), d.get("array_length", 1),
                   d.get("vnni", False), d.get("transpose", False))


def placement(address: int, elem_bytes: int, origin: tuple = (0, 0)) -> tuple[int, tuple[int, int]]:
    """Where an operand whose first element sits at byte ``address`` lives for 2D block loads:
    the surface base ``address & ~63`` (surface bases are 64-byte aligned [S, O, T]) and the
    operand's origin ``(x0, y0)`` inside that surface, ``x0 = (address % 64) / elem_bytes``
    elements plus ``origin``'s x, ``y0`` = ``origin``'s y rows.

    Law: the operand's element ``(r, c)`` is the surface's element ``(y0 + r, x0 + c)``, at
    byte ``base + (y0 + r) * pitch + (x0 + c) * elem_bytes``; ``address`` must be a whole number
    of elements (no element straddles).

    >>> placement(0x4A0, 2)
    (1152, (16, 0))
    >>> placement(0x480, 1, origin=(32, 2))
    (1152, (32, 2))
    """
    if not _is_int(address) or address < 0:
        raise LayoutError(f"base address {address!r}: expected a byte address >= 0")
    if elem_bytes not in (1, 2, 4, 8):
        raise LayoutError(f"element size {elem_bytes!r} bytes: expected 1, 2, 4 or 8")
    if address % elem_bytes:
        raise LayoutError(f"base address {int(address):#x} is not a multiple of the element "
                          f"size ({elem_bytes} bytes)")
    x, y = require_origin(origin)
    return int(address) & ~63, ((int(address) % 64) // elem_bytes + x, y)


def require_origin(origin: Any) -> tuple[int, int]:
    """``origin`` as ``(x0, y0)``: two integers >= 0 (x in elements, y in rows).

    >>> require_origin([32, 0])
    (32, 0)
    """
    if not isinstance(origin, (list, tuple)) or len(origin) != 2 or not all(
            _is_int(v) and v >= 0 for v in origin):
        raise LayoutError(f"origin {origin!r}: expected (x, y), two integers >= 0 (x in "
                          "elements, y in rows)")
    return int(origin[0]), int(origin[1])


def _keys(d: Any, allowed, required, what: str) -> None:
    if not isinstance(d, Mapping):
        raise LayoutError(f"{what} must be an object, got {d!r}")
    extra = [k for k in d if k not in allowed]
    if extra:
        raise LayoutError(f"unknown key '{extra[0]}' in {what} (known: {', '.join(allowed)})")
    missing = [k for k in required if k not in d]
    if missing:
        raise LayoutError(f"{what} is missing the key '{missing[0]}'")


@dataclass(frozen=True)
class Violation:
    """A broken hardware limit: which limit, the offending value, the rule and its sources.

    >>> Violation("block height", 64, "1..32 rows for loads", "I, V, T").message
    'block height 64: 1..32 rows for loads [I, V, T]'
    """

    limit: str
    value: Any
    rule: str
    source: str

    @property
    def message(self) -> str:
        return f"{self.limit} {self.value}: {self.rule} [{self.source}]"

    def to_dict(self) -> dict:
        return {"limit": self.limit, "value": self.value, "rule": self.rule,
                "source": self.source, "message": self.message}


def violations(load: BlockLoad, arch: IntelArch = "xe2") -> tuple[Violation, ...]:
    """Every limit of the reference table that ``load`` breaks (empty when it is valid).

    >>> s = Surface(64, 64, 64, base=16)
    >>> [v.message for v in violations(BlockLoad(2, 16, 8, s))]
    ['surface base 16: 64-byte aligned [S, O, T]']
    >>> [v.limit for v in violations(BlockLoad(2, 16, 8, Surface(64, 64, 64), transpose=True))]
    ['transpose element size']
    """
    if arch not in ARCHS:
        raise LayoutError(f"unknown architecture {arch!r} (known: {', '.join(ARCHS)})")
    out: list[Violation] = []
    e = load.elem_bytes
    if e not in (1, 2, 4, 8):
        return (Violation("element size", e, "1, 2, 4 or 8 bytes", "S, T"),)
    if load.transpose and load.vnni:
        out.append(Violation("VNNI with transpose", True, "VNNI is never combined with "
                             "transpose", "I, T, E"))
    if load.transpose:
        out += _transpose_limits(load)
    elif load.vnni:
        out += _vnni_limits(load, arch)
    else:
        out += _plain_limits(load)
    row_bytes = load.width * load.array_length * e
    if row_bytes > MAX_ROW_BYTES:
        out.append(Violation("width x array length x element size", f"{row_bytes} bytes",
                             "at most 64 bytes for loads", "V"))
    if load.register_bytes > MAX_LOAD_BYTES:
        out.append(Violation("bytes delivered to registers", load.register_bytes,
                             "at most 2048 bytes for loads", "E"))
    out += _surface_limits(load)
    return tuple(out)


def _range_violation(name: str, value: int, lo: int, hi: int, why: str, src: str,
                     pow2: bool = False) -> list[Violation]:
    if not lo <= value <= hi or (pow2 and not _pow2(value)):
        kind = "a power of two in " if pow2 else ""
        return [Violation(name, value, f"{kind}{lo}..{hi} {why}", src)]
    return []


def _plain_limits(load: BlockLoad) -> list[Violation]:
    e = load.elem_bytes
    lo, hi = PLAIN_WIDTH[e]
    out = _range_violation("block width", load.width, lo, hi, f"elements for {8 * e}-bit loads",
                           "I, T", pow2=True)
    out += _range_violation("block height", load.height, 1, MAX_HEIGHT, "rows for loads",
                            "I, V, T")
    if load.array_length not in PLAIN_ARRAY[e]:
        out.append(Violation("array length", load.array_length,
                             f"{', '.join(map(str, PLAIN_ARRAY[e]))} for {8 * e}-bit loads",
                             "V, T"))
    return out


def _vnni_limits(load: BlockLoad, arch: IntelArch) -> list[Violation]:
    e = load.elem_bytes
    if e not in (1, 2):
        return [Violation("VNNI element size", e, "VNNI transforms 8- and 16-bit elements only",
                          "I, T, E")]
    lo, hi = VNNI_WIDTH[arch][e]
    out = _range_violation("block width", load.width, lo, hi,
                           f"elements for {8 * e}-bit VNNI loads on {arch}", "I, T, E", pow2=True)
    out += _range_violation("block height", load.height, VNNI_MIN_HEIGHT[e], MAX_HEIGHT,
                            f"rows for {8 * e}-bit VNNI loads", "I, T, E")
    if load.array_length not in (1, 2, 4):
        out.append(Violation("array length", load.array_length, "1, 2 or 4 for VNNI loads",
                             "I, T"))
    return out


def _transpose_limits(load: BlockLoad) -> list[Violation]:
    e = load.elem_bytes
    if e not in (4, 8):
        return [Violation("transpose element size", f"{e} bytes",
                          "transposed loads need 32- or 64-bit elements", "I, T, E")]
    out: list[Violation] = []
    if load.array_length != 1:
        out.append(Violation("array length", load.array_length, "1 for transposed loads",
                             "V, T"))
    if e == 4:
        out += _range_violation("block width", load.width, 1, 8,
                                "elements for d32 transposed loads", "I, T, E", pow2=True)
        out += _range_violation("block height", load.height, 1, MAX_HEIGHT,
                                "rows for d32 transposed loads", "I, T, E")
    else:
        if load.width not in (1, 2, 4):
            out.append(Violation("block width", load.width, "1, 2 or 4 for d64 transposed loads",
                                 "I, T, E"))
        if load.height != 8:
            out.append(Violation("block height", load.height,
                                 "exactly 8 for d64 transposed loads", "I, T, E"))
    return out


def _surface_limits(load: BlockLoad) -> list[Violation]:
    s, e = load.surface, load.elem_bytes
    out: list[Violation] = []
    if s.base % 64:
        out.append(Violation("surface base", s.base, "64-byte aligned", "S, O, T"))
    mult = 4 if e <= 2 else e
    if not 64 <= s.width <= MAX_SURFACE or s.width % mult:
        out.append(Violation("surface width", f"{s.width} bytes",
                             f"64..2^24 bytes, a multiple of {mult} for {8 * e}-bit elements",
                             "S, T"))
    if not 1 <= s.height <= MAX_SURFACE:
        out.append(Violation("surface height", s.height, "1..2^24 rows", "S"))
    if s.pitch < s.width:
        out.append(Violation("surface pitch", f"{s.pitch} bytes",
                             f"at least the surface width ({s.width} bytes)", "S, T"))
    if s.pitch % 16 or not 64 <= s.pitch <= MAX_SURFACE:
        out.append(Violation("surface pitch", f"{s.pitch} bytes",
                             "a multiple of 16 bytes in 64..2^24", "S, T"))
    if (load.x * e) % 4:
        out.append(Violation("x offset", load.x,
                             f"4-byte aligned (a multiple of {max(1, 4 // e)} {8 * e}-bit "
                             "elements)", "S, T"))
    return out


# ----------------------------------------------------------------------------
# where the data lands
# ----------------------------------------------------------------------------

def destination(load: BlockLoad) -> tuple[np.ndarray, np.ndarray]:
    """Surface ``(row, byte column)`` of every register byte the load writes, in register
    order (``-1`` for padding), as two int64 arrays of length ``register_bytes``.

    >>> r, c = destination(BlockLoad(4, 1, 8, Surface(64, 8, 64), transpose=True))
    >>> r[:8].tolist(), c[:8].tolist()
    ([0, 0, 0, 0, 1, 1, 1, 1], [0, 1, 2, 3, 0, 1, 2, 3])
    """
    e, h, w, a = load.elem_bytes, load.height, load.width, load.array_length
    if e not in (1, 2, 4, 8) or h < 1 or w < 1 or a < 1:
        raise LayoutError(f"load {load.describe()} has no register image (element size {e}, "
                          f"{h} rows, width {w}, array length {a})")
    total = load.register_bytes
    rows = np.full(total, -1, dtype=np.int64)
    cols = np.full(total, -1, dtype=np.int64)
    r, c, j = np.meshgrid(np.arange(h), np.arange(w), np.arange(e), indexing="ij")
    r, c, j = r.ravel(), c.ravel(), j.ravel()
    wpad = next_pow2(w)
    for b in range(a if not load.transpose else 1):
        if load.transpose:
            dst = (c * next_pow2(h) + r) * e + j
        elif load.vnni:
            k = 4 // e
            dst = ((r // k) * wpad + c) * 4 + (r % k) * e + j
        else:
            dst = (r * wpad + c) * e + j
        dst = dst + b * load.block_bytes
        rows[dst] = load.y + r
        cols[dst] = (load.x + b * w + c) * e + j
    return rows, cols


def lane_bytes(load: BlockLoad) -> tuple[np.ndarray, np.ndarray]:
    """Per lane, the surface ``(row, byte column)`` of each byte it receives, in order:
    two arrays of shape ``(16, bytes per lane)``, ``-1`` for padding.

    >>> r, c = lane_bytes(BlockLoad(2, 16, 2, Surface(64, 8, 64)))
    >>> r[3].tolist(), c[3].tolist()
    ([0, 0, 1, 1], [6, 7, 6, 7])
    """
    rows, cols = destination(load)
    u = load.unit_bytes
    idx = np.arange(rows.size)
    unit = idx // u
    lane = unit % SUBGROUP_SIZE
    local = (unit // SUBGROUP_SIZE) * u + idx % u
    per_lane = _roundup(rows.size, SUBGROUP_SIZE * u) // SUBGROUP_SIZE
    out_r = np.full((SUBGROUP_SIZE, per_lane), -1, dtype=np.int64)
    out_c = np.full((SUBGROUP_SIZE, per_lane), -1, dtype=np.int64)
    out_r[lane, local] = rows
    out_c[lane, local] = cols
    return out_r, out_c


def lane_elements(load: BlockLoad, elem_bytes: int) -> np.ndarray:
    """Per lane, the surface ``(row, column)`` of each ``elem_bytes``-byte element it receives
    (columns in those elements): shape ``(16, elements per lane, 2)``, ``-1`` where the lane's
    bytes are padding or do not hold one whole element.

    >>> lane_elements(BlockLoad(4, 8, 16, Surface(64, 16, 64), transpose=True), 2)[5, :4].tolist()
    [[5, 0], [5, 1], [5, 2], [5, 3]]
    """
    if elem_bytes not in (1, 2, 4, 8):
        raise LayoutError(f"element size {elem_bytes} bytes: expected 1, 2, 4 or 8")
    if (load.x * load.elem_bytes) % elem_bytes == 0:
        rel = _relative_elements(load.elem_bytes, load.width, load.height, load.array_length,
                                 load.vnni, load.transpose, elem_bytes)
        shift = np.array([load.y, load.x * load.elem_bytes // elem_bytes], dtype=np.int64)
        return np.where(rel >= 0, rel + shift, -1)
    return _lane_elements(load, elem_bytes)


@lru_cache(maxsize=4096)
def _relative_elements(e: int, w: int, h: int, a: int, vnni: bool, transpose: bool,
                       t: int) -> np.ndarray:
    out = _lane_elements(BlockLoad(e, w, h, _ORIGIN_SURFACE, 0, 0, a, vnni, transpose), t)
    out.setflags(write=False)
    return out


_ORIGIN_SURFACE = Surface(width=64, height=1, pitch=64)


def _lane_elements(load: BlockLoad, t: int) -> np.ndarray:
    rows, cols = lane_bytes(load)
    n = rows.shape[1] // t
    r = rows[:, :n * t].reshape(SUBGROUP_SIZE, n, t)
    c = cols[:, :n * t].reshape(SUBGROUP_SIZE, n, t)
    ok = (r[..., 0] >= 0) & (c[..., 0] % t == 0)
    ok &= np.all(r == r[..., :1], axis=2) & np.all(c == c[..., :1] + np.arange(t), axis=2)
    out = np.full((SUBGROUP_SIZE, n, 2), -1, dtype=np.int64)
    out[..., 0] = np.where(ok, r[..., 0], -1)
    out[..., 1] = np.where(ok, c[..., 0] // t, -1)
    return out


def unit_elements(load: BlockLoad, elem_bytes: int) -> np.ndarray:
    """For each register unit in register order (``U``: lane ``U % 16``), the surface
    ``(row, column)`` of the first ``elem_bytes``-byte element in it: shape
    ``(units, 2)``, ``-1`` for padding.

    >>> unit_elements(BlockLoad(2, 16, 4, Surface(64, 8, 64), vnni=True), 2)[[0, 1, 16]].tolist()
    [[0, 0], [0, 1], [2, 0]]
    """
    rows, cols = destination(load)
    u = load.unit_bytes
    r = rows[::u]
    c = cols[::u]
    ok = (r >= 0) & (c % elem_bytes == 0)
    return np.stack([np.where(ok, r, -1), np.where(ok, c // elem_bytes, -1)], axis=1)
