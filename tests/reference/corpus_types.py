"""Every distinct (layout, shape, element) type that appears in the corpus of real Triton output
(``tests/corpus``), with the text Triton's own parser needs to convert it."""
from __future__ import annotations

import glob
from dataclasses import dataclass
from pathlib import Path

from verilayout.errors import LayoutError
from verilayout.frontends.mlir import Attr, TensorType, format_value
from verilayout.frontends.triton import memdesc_buffers
from verilayout.frontends.ttgir import parse_module

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


@dataclass(frozen=True)
class CorpusType:
    """One distinct type: its encoding's full text (aliases inlined), the shape the layout covers,
    the element type, whether it is a memdesc, and the first file and type text it came from."""
    attr: str
    shape: tuple
    layout_shape: tuple
    elem: str
    memdesc: bool
    target: str
    file: str
    text: str


def files() -> list[str]:
    return sorted(glob.glob(str(CORPUS / "*" / "*.ttgir")))


def distinct_types(paths: list[str] | None = None) -> tuple[list[CorpusType], list[tuple[str, str, str]]]:
    """The distinct layout-carrying types of the files, and the type texts that could not be read
    at all as ``(file, text, why)``."""
    seen: dict[tuple, CorpusType] = {}
    bad: list[tuple[str, str, str]] = []
    for path in paths or files():
        text = Path(path).read_text()
        mod = parse_module(text)
        for op in mod.ops:
            for t_text in op.operand_types + op.result_types:
                if "#" not in t_text:
                    continue
                try:
                    t = mod.type_of(t_text)
                except LayoutError as e:
                    bad.append((path, t_text, str(e)))
                    continue
                enc = getattr(t, "encoding", None)
                if not isinstance(t, TensorType) or not isinstance(enc, Attr):
                    continue
                shape = tuple(t.alloc_shape) if (t.kind == "memdesc" and t.alloc_shape) else tuple(t.shape)
                key = (format_value(enc), shape, t.elem, t.kind == "memdesc")
                if key not in seen:
                    seen[key] = CorpusType(key[0], shape, memdesc_buffers(t)[0], t.elem, key[3],
                                           mod.target or "", path, t_text)
    return list(seen.values()), bad
