"""The small readers of option spellings, at the door: wgmma shapes (``m64n32k16``), operand
majorness (``K``/``MN``), swizzle-mode names (``SW128``, ``CU_TENSOR_MAP_SWIZZLE_64B``, an enum
value), shared-memory instruction names (``ld.shared.v4.b32``, ``ldmatrix.x4.trans``), tensor
types (``tensor<64x64xf16>``), the GEMM emitter's options (``--tile 128x256x64``,
``--problem 4096,4096,4096``, ``--cluster 2x1``) and TMA architectures (``sm_90a``).

Each turns what a user typed into the parsed value that ``hw``, ``prove``, ``synth`` and ``emit``
take (a tuple, a name of :data:`verilayout.dtypes.SWIZZLE_MODES`, a
:class:`~verilayout.hw.nvidia.banks.Instruction`); those layers check the value (``require_*``)
and never read text. Law: ``parse_x(canonical) == canonical`` for every canonical value.

>>> parse_shape("m64n256k8"), parse_major("n"), parse_swizzle("SW64"), parse_swizzle(3, "tma")
((64, 256, 8), 'MN', '64B', '128B')
>>> parse_instruction("ld.shared.v2.f32").name
'ld.shared.v2.b32'
"""
from __future__ import annotations

import re
from typing import Literal

from verilayout.dtypes import Major, swizzle_mode
from verilayout.errors import LayoutError
from verilayout.frontends.mlir import Scanner, TensorType
from verilayout.hw.amd.lds import LdsAccess
from verilayout.hw.nvidia.banks import Instruction
from verilayout.hw.nvidia.tma import require_arch
from verilayout.hw.nvidia.wgmma import OperandSpec

__all__ = ["parse_shape", "parse_major", "parse_swizzle", "parse_instruction", "parse_tensor_type",
           "find_tensor_type", "read_instruction",
           "parse_lds_instruction", "read_lds_instruction", "parse_operand", "parse_tile",
           "parse_problem", "parse_cluster", "parse_arch"]

_SHAPE_RE = re.compile(r"m(\d{1,6})n(\d{1,6})k(\d{1,6})")


def parse_shape(text: str) -> tuple[int, int, int]:
    """A wgmma instruction shape: ``"m64n32k16"`` -> ``(64, 32, 16)`` (any case, spaces around).

    >>> parse_shape("m64n256k8")
    (64, 256, 8)
    >>> parse_shape(" M64N8K16 ")
    (64, 8, 16)
    """
    m = _SHAPE_RE.fullmatch(str(text).strip().lower())
    if not m:
        shown = str(text) if len(str(text)) <= 40 else str(text)[:32] + f"...({len(str(text))} chars)"
        raise LayoutError(f"shape {shown!r}: expected m64nNkK with numbers of at most 6 digits, "
                          "e.g. m64n32k16")
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def parse_major(text: str) -> Major:
    """``"K"`` or ``"MN"`` (``"M"``, ``"N"``, ``"M/N"``, any case, are accepted for MN).

    >>> parse_major("n"), parse_major("K"), parse_major("mn")
    ('MN', 'K', 'MN')
    """
    t = str(text).strip().upper()
    if t == "K":
        return "K"
    if t in ("MN", "M", "N", "M/N"):
        return "MN"
    raise LayoutError(f"major {text!r}: expected K or MN")


def parse_swizzle(value: object, family: Literal["wgmma", "tma", "descriptor"] = "wgmma") -> str:
    """The canonical swizzle-mode name (a key of :data:`verilayout.dtypes.SWIZZLE_MODES`) of a
    spelling, as ``family`` spells it (:func:`verilayout.dtypes.swizzle_mode`, the one alias
    table): ``wgmma`` gives none/32B/64B/128B; ``tma`` one of ``dtypes.TMA_SWIZZLES`` from a
    ``CUtensorMapSwizzle`` name or enum value; ``descriptor`` the wgmma modes plus sm_100's
    ``128B_base32B`` (also spelled ``128b-base32b``).

    >>> parse_swizzle("128"), parse_swizzle("interleave"), parse_swizzle("swizzle_128b", "tma")
    ('128B', 'none', '128B')
    >>> parse_swizzle("128b-base32b", "descriptor"), parse_swizzle("SW32", "descriptor")
    ('128B_base32B', '32B')
    """
    if family == "descriptor":
        if str(value).strip().lower() in ("128b_base32b", "128b-base32b"):
            return "128B_base32B"
        return swizzle_mode(value)
    return swizzle_mode(value, family)


_TOKEN = re.compile(r"^(?:v(\d+)|b(\d+)|[us](\d+)|f(\d+)|x(\d+))$")
_MATRIX_NOOPS = ("sync", "aligned", "m8n8", "shared", "b16", "shared::cta")


def _matrix(op: str, rest: list[str], text: str) -> Instruction:
    """``ldmatrix``/``stmatrix`` qualifiers: ``.xN`` once, ``.trans``, the no-op ones."""
    count, trans = None, False
    for tok in rest:
        if tok in _MATRIX_NOOPS:
            continue
        if tok == "trans":
            trans = True
            continue
        m = re.fullmatch(r"x(\d+)", tok)
        if m and count is None:
            count = int(m.group(1))
            continue
        raise LayoutError(f"instruction {text!r}: unexpected qualifier '.{tok}'")
    if count is None:
        raise LayoutError(f"instruction {text!r}: give the matrix count (.x1, .x2 or .x4)")
    return Instruction(op, 128, count=count, trans=trans)


def _vector(op: str, rest: list[str], text: str) -> Instruction:
    """``ld.shared``/``st.shared`` qualifiers: ``.v2``/``.v4`` and one width (``.b32``, ``.f16``)."""
    vec, width = 1, None
    for tok in rest:
        if tok in ("shared::cta",):
            continue
        m = _TOKEN.match(tok)
        if not m or m.group(5):
            raise LayoutError(f"instruction {text!r}: unexpected qualifier '.{tok}'")
        if m.group(1):
            vec = int(m.group(1))
            if vec not in (2, 4):
                raise LayoutError(f"instruction {text!r}: vectors are .v2 or .v4")
        else:
            width = int(m.group(2) or m.group(3) or m.group(4))
    if width is None:
        raise LayoutError(f"instruction {text!r}: give the width, e.g. '.b32'")
    bits = vec * width
    if bits > 128:
        raise LayoutError(f"instruction {text!r} moves {bits} bits per lane; at most 128")
    return Instruction(op, bits)


def parse_instruction(text: str) -> Instruction:
    """A shared-memory access instruction: ``ld.shared.v4.b32``, ``st.shared.b16``,
    ``ldmatrix.x4.trans``, ``stmatrix.x2`` ... PTX qualifiers that do not change the access
    (``sync``, ``aligned``, ``m8n8``, ``shared``, ``b16`` of ldmatrix) are accepted; anything else
    is a ``LayoutError`` naming it.

    >>> parse_instruction("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16").name
    'ldmatrix.x2.trans'
    >>> parse_instruction("ld.shared.v2.f32").bits
    64
    """
    if not isinstance(text, str) or not text.strip():
        raise LayoutError("instruction: expected text like 'ld.shared.v4.b32' or 'ldmatrix.x4'")
    parts = text.strip().lower().split(".")
    op, rest = parts[0], parts[1:]
    if op in ("ld", "st"):
        if not rest or rest[0] != "shared":
            raise LayoutError(f"instruction {text!r}: only shared-memory accesses are modelled "
                              f"(expected '{op}.shared...')")
        op, rest = f"{op}.shared", rest[1:]
    if op in ("ldmatrix", "stmatrix"):
        return _matrix(op, rest, text)
    if op not in ("ld.shared", "st.shared"):
        raise LayoutError(f"instruction {text!r}: expected ld.shared, st.shared, ldmatrix or stmatrix")
    return _vector(op, rest, text)


def read_instruction(value: object) -> Instruction | None:
    """The ``instruction`` argument of a bank analysis: None for ``"auto"`` (any case) or None,
    an :class:`~verilayout.hw.nvidia.banks.Instruction` as is, else :func:`parse_instruction`.

    >>> read_instruction(" AUTO ") is None, read_instruction("stmatrix.x4").name
    (True, 'stmatrix.x4')
    """
    return _auto_or(value, Instruction, parse_instruction)


def _auto_or(value: object, parsed: type, parse):
    """None for None or ``"auto"`` (any case), a ``parsed`` instance as is, else ``parse(value)``."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "auto"):
        return None
    return value if isinstance(value, parsed) else parse(value)


_LDS_INSTR = re.compile(r"^ds_(read|write|load|store)_?(?:b|u|i)(\d+)(?:_tr_?(b4|b8|b16))?$")


def parse_lds_instruction(text: str) -> LdsAccess:
    """``ds_read_b128``, ``ds_write_b64``, ``ds_read_u16``, ``ds_read_b64_tr_b16`` (also the LLVM
    spellings ``ds_load_b128`` / ``ds_store_b64``).

    >>> parse_lds_instruction("ds_load_b128").name
    'ds_read_b128'
    """
    if not isinstance(text, str):
        raise LayoutError("LDS instruction: expected text like 'ds_read_b128'")
    m = _LDS_INSTR.match(text.strip().lower())
    if not m:
        raise LayoutError(f"LDS instruction {text!r}: expected ds_read_bN, ds_write_bN (N = 8, 16, 32, "
                          "64, 128) or ds_read_b64_tr_b4/b8/b16")
    op = "read" if m.group(1) in ("read", "load") else "write"
    return LdsAccess(op, int(m.group(2)), m.group(3) or "")


def read_lds_instruction(value: object) -> LdsAccess | None:
    """The ``instruction`` argument of an LDS bank analysis: None for ``"auto"`` (any case) or
    None, an :class:`~verilayout.hw.amd.lds.LdsAccess` as is, else :func:`parse_lds_instruction`.

    >>> read_lds_instruction("auto") is None, read_lds_instruction("ds_store_b64").name
    (True, 'ds_write_b64')
    """
    return _auto_or(value, LdsAccess, parse_lds_instruction)


def parse_operand(text: str, operand: str) -> OperandSpec:
    """``"K:none"``, ``"MN:128B"`` (``M``/``N`` mean MN) or, for A, ``"reg"``.

    >>> parse_operand("N:none", "B"), parse_operand("reg", "A").source
    (OperandSpec(source='smem', major='MN', swizzle='none'), 'reg')
    >>> parse_operand("reg", "B")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: --b 'reg': B is always read from shared memory; expected MAJOR:SWIZZLE such as K:none
    """
    t = str(text).strip()
    flag = f"--{operand.lower()}"
    if t.lower() in ("reg", "register", "registers", "rs"):
        if operand != "A":
            raise LayoutError(f"{flag} {text!r}: B is always read from shared memory; expected "
                              "MAJOR:SWIZZLE such as K:none")
        return OperandSpec("reg")
    if ":" not in t:
        raise LayoutError(f"{flag} {text!r}: expected MAJOR:SWIZZLE (K:none, MN:64B, ...)"
                          + (" or reg" if operand == "A" else ""))
    major, sw = t.split(":", 1)
    try:
        return OperandSpec("smem", parse_major(major), parse_swizzle(sw))
    except LayoutError as e:
        raise LayoutError(f"{flag} {text!r}: {e}") from None


_TYPE_PREFIXES = ("!ttg.memdesc", "memdesc", "tensor")


def parse_tensor_type(text: str, what: str = "-t") -> tuple[list[int], str]:
    """A tensor type without encoding, as a command line takes it: ``tensor<256x32xf16>``,
    ``!ttg.memdesc<...>``, ``<64x64xbf16>`` or ``64x64xbf16`` -> ``([256, 32], "f16")``, read by
    the MLIR scanner (:class:`~verilayout.frontends.mlir.Scanner`: its shape and element-type
    readers). ``what`` names the argument in the error. The element type is not checked here.

    >>> parse_tensor_type("tensor<64x64xbf16>"), parse_tensor_type("16x8xf32")
    (([64, 64], 'bf16'), ([16, 8], 'f32'))
    """
    body = str(text).strip()
    for prefix in _TYPE_PREFIXES:
        if body.startswith(prefix):
            body = body[len(prefix):]
            break
    body = body.strip().removeprefix("<").removesuffix(">").strip()
    try:
        s = Scanner(body)
        shape = s.dims("in the tensor type")
        elem = s.elem_type("in the tensor type")
        if not s.at_end() or not shape or "<" in elem:
            raise LayoutError("trailing text")
    except LayoutError:
        raise LayoutError(f"{what} {text!r}: expected a type like tensor<256x32xf16>") from None
    return list(shape), elem


def find_tensor_type(text: str) -> TensorType | None:
    """The first ``tensor<DIMSxELEM, ...>`` with an encoding in ``text`` (shape and element type
    only; the encoding is not read), or None where there is none.

    >>> find_tensor_type("%0 : tensor<16x32xf16, #blocked>").shape
    (16, 32)
    """
    start = 0
    while (start := text.find("tensor<", start)) >= 0:
        s = Scanner(text, start + len("tensor<"))
        start += 1
        try:
            shape = s.dims("in tensor type")
            elem = s.elem_type("in tensor type")
        except LayoutError:
            continue
        if shape and s.accept(","):
            return TensorType("tensor", shape, elem)
    return None


_TILE_RE = re.compile(r"^\s*(\d{1,4})\s*x\s*(\d{1,4})\s*x\s*(\d{1,4})\s*$")


def parse_tile(text: object) -> tuple[int, int, int]:
    """A GEMM tile ``"BMxBNxBK"`` (or the tuple) -> ``(BM, BN, BK)``, each of 1 to 4 digits; the
    emitter checks the values (:func:`verilayout.emit.gemm_plan.require_tile`).

    >>> parse_tile("128x256x64"), parse_tile((64, 64, 32))
    ((128, 256, 64), (64, 64, 32))
    >>> parse_tile("128x256")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: --tile '128x256': expected BMxBNxBK such as 128x256x64
    """
    if isinstance(text, tuple) and len(text) == 3 and all(type(v) is int for v in text):
        return text
    m = _TILE_RE.match(str(text))
    if not m:
        raise LayoutError(f"--tile {text!r}: expected BMxBNxBK such as 128x256x64")
    return int(m[1]), int(m[2]), int(m[3])


def parse_problem(text: str) -> tuple[int, int, int]:
    """``"M,N,K"`` (or ``MxNxK``) -> ``(M, N, K)``, each from 1 to 2^31 - 1 (the kernels take them
    as ``int``).

    >>> parse_problem("16,4096,4096"), parse_problem("8x8x16")
    ((16, 4096, 4096), (8, 8, 16))
    """
    parts = str(text).replace("x", ",").split(",")
    try:
        vals = tuple(int(p) for p in parts)
    except ValueError:
        vals = ()
    if len(vals) != 3 or min(vals) < 1:
        raise LayoutError(f"--problem {text!r}: expected M,N,K, three positive integers")
    if max(vals) >= 2 ** 31:
        raise LayoutError(f"--problem {text!r}: each of M, N, K must be below 2^31 (the kernels take "
                          "them as int)")
    return vals


_CLUSTER_RE = re.compile(r"^\s*(\d)\s*x\s*(\d)\s*$")


def parse_cluster(text: object) -> tuple[int, int]:
    """``"CMxCN"`` (one digit each, or a pair of integers) -> ``(CM, CN)``; the emitter checks
    that it is a shape it writes (:func:`verilayout.emit.gemm_cluster.require_cluster`).

    >>> parse_cluster("2x1"), parse_cluster((1, 2)), parse_cluster(" 4 x 4 ")
    ((2, 1), (1, 2), (4, 4))
    >>> parse_cluster("4x")
    Traceback (most recent call last):
    ...
    verilayout.errors.LayoutError: --cluster '4x': expected CMxCN, e.g. 2x1 (sm_90a: 1x1, 2x1, 1x2; sm_100a also 2x2, 4x1, 1x4)
    """
    if isinstance(text, (tuple, list)) and len(text) == 2 and all(type(v) is int for v in text):
        return int(text[0]), int(text[1])
    m = _CLUSTER_RE.match(str(text))
    if not m:
        raise LayoutError(f"--cluster {text!r}: expected CMxCN, e.g. 2x1 (sm_90a: 1x1, 2x1, 1x2; sm_100a "
                          "also 2x2, 4x1, 1x4)")
    return int(m[1]), int(m[2])


def parse_arch(arch: object) -> str:
    """The TMA rule family of an architecture name: ``sm_90`` (sm_90, sm_90a) or ``sm_100``
    (sm_100, sm_100a, sm_100f, sm_103...), any case, ``sm90`` too; the TMA model takes the family
    (:func:`verilayout.hw.nvidia.tma.require_arch`). Law: other names are a LayoutError.

    >>> parse_arch("sm_90a"), parse_arch("SM100F"), parse_arch("sm_90")
    ('sm_90', 'sm_100', 'sm_90')
    """
    m = re.fullmatch(r"sm_?(\d+)[af]?", str(arch).strip().lower()) if isinstance(arch, str) else None
    if m and 90 <= int(m.group(1)) < 100:
        return "sm_90"
    if m and 100 <= int(m.group(1)) < 110:
        return "sm_100"
    return require_arch(arch)
