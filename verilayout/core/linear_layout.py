"""GF(2) linear layouts with named input and output dimensions (Triton's "linear layouts").

A layout maps hardware coordinates (``register``, ``lane``, ``warp``, ``block``,
``offset``, ...) to tensor coordinates (``dim0``, ``dim1``, ...). Every input dim
has a power-of-two size; bit ``i`` of input dim ``d`` has a *basis*, the output
coordinates it selects; the image of an input is the XOR of the bases of its set
bits (Triton ``include/triton/Tools/LinearLayout.h``).

>>> L = LinearLayout({"t": [[0, 1], [0, 2]], "w": [[1, 1], [2, 2]]}, ["x", "y"])
>>> L.apply({"t": 3, "w": 1})
{'x': 1, 'y': 2}

Internally each basis is also kept *packed* as one Python int: the output dims
are concatenated, the first output dim in the low bits. Every operation below
works on those ints (Gaussian elimination over GF(2), see :mod:`verilayout.core.gf2`);
nothing enumerates elements.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from verilayout.bits import is_integer, log2_exact, next_pow2
from verilayout.core import gf2
from verilayout.errors import LayoutError


def supremum(x: Sequence[str], y: Sequence[str]) -> list[str]:
    """Shortest merge of two name orders in which both appear as subsequences.

    Used by the product to order dims: names only in ``x`` come before the next
    shared name, and so do names only in ``y``. When the two orders conflict no
    merge keeps both; the left operand's order wins, as in Triton's product.

    >>> supremum(["a", "b"], ["c", "b"])
    ['a', 'c', 'b']
    >>> supremum(["a", "b"], ["b", "a"])
    ['a', 'b']
    """
    if list(x) == list(y) or not y:
        return list(x)
    if not x:
        return list(y)
    if set(x).isdisjoint(y):            # no shared name: all of x, then all of y (what the merge picks)
        return list(x) + list(y)
    posx = {n: i for i, n in enumerate(x)}
    posy = {n: i for i, n in enumerate(y)}
    result: list[str] = []
    seen: set[str] = set()
    i = j = 0
    inf = float("inf")
    while i < len(x) or j < len(y):
        while i < len(x) and x[i] in seen:
            i += 1
        while j < len(y) and y[j] in seen:
            j += 1
        if i >= len(x) and j >= len(y):
            break
        if i < len(x) and j < len(y) and x[i] == y[j]:
            pick = x[i]
        else:
            cx = posy[x[i]] if i < len(x) and x[i] in posy and posy[x[i]] >= j else inf
            cy = posx[y[j]] if j < len(y) and y[j] in posx and posx[y[j]] >= i else inf
            if i < len(x) and cx == inf:
                pick = x[i]
            elif j < len(y) and cy == inf:
                pick = y[j]
            elif cx <= cy:
                pick = x[i]
            else:
                pick = y[j]
        result.append(pick)
        seen.add(pick)
    return result


#: Products of layouts, keyed by both operands' contents (layouts are immutable): converters build
#: the same small products (identities, CGA tiles) for every layout they convert; at most
#: MAX_PRODUCTS kept per process.
_PRODUCTS: dict[tuple, "LinearLayout"] = {}
MAX_PRODUCTS = 4096


def _listlike(x) -> bool:
    """A list, tuple or array (not text, a mapping or a scalar).

    >>> _listlike([1]), _listlike("ab"), _listlike(3)
    (True, False, False)
    """
    return not isinstance(x, (str, bytes, dict)) and hasattr(x, "__iter__") and hasattr(x, "__len__")


#: the sequence types whose basis vectors :func:`_checked_bases` reads without the general checks
_PLAIN_SEQ = (list, tuple)


def _out_pairs(out_dims) -> tuple[list, bool]:
    """``([(name, size or None), ...], sizes given)`` of the ``out_dims`` a LinearLayout takes: a
    list of names, of ``(name, size)`` pairs, or a mapping; anything else is a LayoutError.

    >>> _out_pairs(["dim0"]), _out_pairs({"dim0": 4})
    (([('dim0', None)], False), ([('dim0', 4)], True))
    """
    if type(out_dims) is dict or isinstance(out_dims, Mapping):
        pairs, explicit = list(out_dims.items()), True
    else:
        if not _listlike(out_dims):
            raise LayoutError(f"out_dims must be a list of names, of (name, size) pairs or a mapping, "
                              f"got {type(out_dims).__name__}")
        out_dims = list(out_dims)
        explicit = bool(out_dims) and not isinstance(out_dims[0], str)
        if explicit and not all(_listlike(p) and len(p) == 2 for p in out_dims):
            raise LayoutError("out_dims must be names or (name, size) pairs, not a mix")
        pairs = [tuple(p) for p in out_dims] if explicit else [(n, None) for n in out_dims]
    if not all(isinstance(p[0], str) for p in pairs):
        raise LayoutError(f"output dim names must be strings, got {[p[0] for p in pairs]!r}"[:200])
    return pairs, explicit


def _checked_bases(bases: Mapping, n_out: int, names: list) -> tuple[list, list]:
    """``bases`` checked (string names, lists of ``n_out`` non-negative integers): the input dims
    as ``(name, nbits)`` and every basis as ``(name, index, values)``.

    >>> _checked_bases({"lane": [[1], [2]]}, 1, ["x"])
    ([('lane', 2)], [('lane', 0, [1]), ('lane', 1, [2])])
    """
    ins, vecs = [], []
    for name, blist in bases.items():
        if not isinstance(name, str):
            raise LayoutError(f"input dim name {name!r} is not a string")
        if not _listlike(blist):
            raise LayoutError(f"the bases of input dim '{name}' must be a list of basis vectors, "
                              f"got {type(blist).__name__}")
        blist = list(blist)
        for i, b in enumerate(blist):
            if type(b) in _PLAIN_SEQ and len(b) == n_out and all(type(v) is int and v >= 0 for v in b):
                vecs.append((name, i, list(b)))     # plain non-negative ints: what the checks below pass
                continue
            if not _listlike(b):
                raise LayoutError(f"basis {i} of input dim '{name}' must be a list of integers, "
                                  f"got {type(b).__name__}")
            b = list(b)
            if len(b) != n_out:
                raise LayoutError(
                    f"basis {i} of input dim '{name}' has {len(b)} values; "
                    f"expected one per output dim ({n_out}: {names})")
            for v in b:
                if not is_integer(v) or v < 0:
                    raise LayoutError(
                        f"basis {i} of input dim '{name}' has value {v!r}; "
                        "basis values are non-negative integers")
            vecs.append((name, i, [int(v) for v in b]))
        ins.append((name, len(blist)))
    return ins, vecs


def _dim_bits(dims: tuple, name: str, side: str) -> int:
    """The bit count of the dim ``name`` in ``dims`` (``((name, bits), ...)``); ``side`` names
    the side in the error ("input" or "output"). Law: ``_dim_bits(d, n, s) == dict(d)[n]``.

    >>> _dim_bits((("lane", 2), ("warp", 1)), "warp", "input")
    1
    """
    for n, b in dims:
        if n == name:
            return b
    raise LayoutError(f"no {side} dim '{name}' (have {[n for n, _ in dims]})")


@dataclass(frozen=True, eq=False)
class LinearLayout:
    """A GF(2)-linear map from named input dims to named, sized output dims.

    ``bases[in_dim][i]`` is the image of input ``in_dim = 2**i`` as a list with one
    value per output dim (in ``out_dims`` order).

    ``out_dims`` is either a list of names (sizes inferred as the next power of two
    above the largest basis value; the layout must then be surjective) or a list
    of ``(name, size)`` pairs / a dict (then ``require_surjective`` decides).

    >>> LinearLayout({"in1": [[1, 0], [5, 1], [2, 2]]}, ["out1", "out2"],
    ...              require_surjective=False).out_dims
    {'out1': 8, 'out2': 4}
    """

    _in: tuple  # ((name, nbits), ...)
    _out: tuple  # ((name, nbits), ...)
    _cols: tuple  # packed basis ints, in-dim order, low bit first

    def __init__(self, bases: Mapping[str, Sequence[Sequence[int]]],
                 out_dims: Sequence[str] | Mapping[str, int] | Sequence[tuple[str, int]],
                 require_surjective: bool | None = None):
        if type(bases) is not dict and not isinstance(bases, Mapping):
            raise LayoutError("bases must map input dim names to lists of basis vectors")
        out_pairs, explicit = _out_pairs(out_dims)
        names = [p[0] for p in out_pairs]
        if len(set(names)) != len(names):
            raise LayoutError(f"duplicate output dim names in {names}")
        n_out = len(out_pairs)
        ins, vecs = _checked_bases(bases, n_out, names)
        # output sizes
        out = []
        for k, (name, size) in enumerate(out_pairs):
            if not isinstance(name, str):
                raise LayoutError(f"output dim name {name!r} is not a string")
            top = max([v[2][k] for v in vecs], default=0)
            if size is None:
                size = next_pow2(top + 1)
            nbits = log2_exact(size, f"output dim '{name}'")
            if top >= size:
                raise LayoutError(
                    f"a basis reaches {top} in output dim '{name}' of size {size}")
            out.append((name, nbits))
        offs = _offsets(out)
        cols = tuple(sum(v << offs[k] for k, v in enumerate(b)) for _, _, b in vecs)
        object.__setattr__(self, "_in", tuple(ins))
        object.__setattr__(self, "_out", tuple(out))
        object.__setattr__(self, "_cols", cols)
        if require_surjective is None:
            require_surjective = not explicit
        if require_surjective and not self.is_surjective():
            raise LayoutError(
                f"layout is not surjective onto {self.out_dims} (rank {self.rank()} < "
                f"{self.total_out_bits} output bits); pass out-dim sizes and "
                "require_surjective=False for such a layout")

    # ----- construction helpers -------------------------------------------------
    @classmethod
    def _raw(cls, ins, outs, cols) -> "LinearLayout":
        obj = object.__new__(cls)
        object.__setattr__(obj, "_in", tuple(ins))
        object.__setattr__(obj, "_out", tuple(outs))
        object.__setattr__(obj, "_cols", tuple(cols))
        return obj

    @classmethod
    def empty(cls) -> "LinearLayout":
        """The layout with no dims: the unit of ``*``."""
        return cls._raw((), (), ())

    @classmethod
    def identity1D(cls, size: int, in_dim: str, out_dim: str) -> "LinearLayout":
        """``L(x) = x`` for ``x`` in ``[0, size)``; ``size == 0`` gives :meth:`empty` (as Triton).

        >>> LinearLayout.identity1D(4, "i", "o").bases
        {'i': [[1], [2]]}
        >>> LinearLayout.identity1D(0, "i", "o") == LinearLayout.empty()
        True
        """
        if size == 0 and not isinstance(size, bool):
            return cls.empty()
        n = log2_exact(size, f"identity1D over '{in_dim}'")
        return cls._raw(((in_dim, n),), ((out_dim, n),), [1 << i for i in range(n)])

    @classmethod
    def zeros1D(cls, size: int, in_dim: str, out_dim: str, out_dim_size: int = 1) -> "LinearLayout":
        """``L(x) = 0`` for ``x`` in ``[0, size)`` (a broadcast); ``size == 0`` gives :meth:`empty`.

        >>> LinearLayout.zeros1D(4, "i", "o").apply({"i": 3})
        {'o': 0}
        """
        if size == 0 and not isinstance(size, bool):
            return cls.empty()
        n = log2_exact(size, f"zeros1D over '{in_dim}'")
        m = log2_exact(out_dim_size, f"zeros1D output '{out_dim}'")
        return cls._raw(((in_dim, n),), ((out_dim, m),), [0] * n)

    @classmethod
    def strided1D(cls, size: int, stride: int, in_dim: str, out_dim: str) -> "LinearLayout":
        """``L(x) = x * stride`` (stride a power of two), output sized ``size * stride``.

        ``size == 0`` gives :meth:`empty` (as Triton's ``strided1D``).

        >>> LinearLayout.strided1D(4, 2, "i", "o").bases
        {'i': [[2], [4]]}
        """
        if size == 0 and not isinstance(size, bool):
            return cls.empty()
        n = log2_exact(size, f"strided1D over '{in_dim}'")
        s = log2_exact(stride, f"strided1D stride for '{in_dim}'")
        return cls._raw(((in_dim, n),), ((out_dim, n + s),), [1 << (i + s) for i in range(n)])

    @classmethod
    def from_dict(cls, d: Mapping) -> "LinearLayout":
        """Inverse of :meth:`to_dict`.

        >>> L = LinearLayout.identity1D(4, "i", "o"); LinearLayout.from_dict(L.to_dict()) == L
        True
        """
        try:
            in_dims = dict(d["in_dims"])
            out_dims = dict(d["out_dims"])
            bases = dict(d["bases"])
        except (KeyError, TypeError) as e:
            raise LayoutError(f"layout dict needs in_dims, out_dims and bases ({e})") from None
        extra = set(d) - {"in_dims", "out_dims", "bases"}
        if extra:
            raise LayoutError(f"unknown keys in layout dict: {sorted(extra)}")
        for name, size in in_dims.items():
            n = log2_exact(size, f"input dim '{name}'")
            if len(bases.get(name, [])) != n:
                raise LayoutError(f"input dim '{name}' of size {size} needs {n} bases, "
                                  f"got {len(bases.get(name, []))}")
        unknown = set(bases) - set(in_dims)
        if unknown:
            raise LayoutError(f"bases given for undeclared input dims {sorted(unknown)}")
        return cls({k: bases[k] for k in in_dims}, out_dims, require_surjective=False)

    # ----- views -----------------------------------------------------------------
    @property
    def in_dims(self) -> dict[str, int]:
        """``{name: size}`` of the input dims, in order."""
        return {n: 1 << b for n, b in self._in}

    @property
    def out_dims(self) -> dict[str, int]:
        """``{name: size}`` of the output dims, in order."""
        return {n: 1 << b for n, b in self._out}

    @property
    def in_dim_names(self) -> list[str]:
        return [n for n, _ in self._in]

    @property
    def out_dim_names(self) -> list[str]:
        return [n for n, _ in self._out]

    def in_dim_size(self, name: str) -> int:
        return 1 << self.in_dim_bits(name)

    def out_dim_size(self, name: str) -> int:
        return 1 << self.out_dim_bits(name)

    def in_dim_bits(self, name: str) -> int:
        """``log2`` of an input dimension's size (Triton's ``getInDimSizeLog2``).

        >>> LinearLayout({"lane": [[1], [2]]}, [("dim0", 4)]).in_dim_bits("lane")
        2
        """
        return _dim_bits(self._in, name, "input")

    def out_dim_bits(self, name: str) -> int:
        """``log2`` of an output dimension's size (Triton's ``getOutDimSizeLog2``).

        >>> LinearLayout({"lane": [[1], [2]]}, [("dim0", 4)]).out_dim_bits("dim0")
        2
        """
        return _dim_bits(self._out, name, "output")

    @property
    def total_in_bits(self) -> int:
        return sum(b for _, b in self._in)

    @property
    def total_out_bits(self) -> int:
        return sum(b for _, b in self._out)

    @property
    def total_in_size(self) -> int:
        return 1 << self.total_in_bits

    @property
    def total_out_size(self) -> int:
        return 1 << self.total_out_bits

    @property
    def columns(self) -> tuple[int, ...]:
        """The packed bases (one int per input bit; output dims concatenated, first low)."""
        return self._cols

    def _in_offset(self, name: str) -> int:
        off = 0
        for n, b in self._in:
            if n == name:
                return off
            off += b
        raise LayoutError(f"no input dim '{name}' (have {self.in_dim_names})")

    def unpack(self, packed: int) -> list[int]:
        """A packed output (the out dims' bits side by side, the first dim lowest) as one value per
        out dim: the inverse of packing, ``unpack(sum(v_i << offset_i)) == [v_0, v_1, ...]``.

        >>> LinearLayout({"r": [[1, 0], [0, 1]]}, [("x", 2), ("y", 2)]).unpack(0b10)
        [0, 1]
        """
        out = []
        for _, b in self._out:
            out.append(packed & ((1 << b) - 1))
            packed >>= b
        return out

    def _pack(self, values: Sequence[int]) -> int:
        acc, off = 0, 0
        for v, (_, b) in zip(values, self._out):
            acc |= v << off
            off += b
        return acc

    @property
    def bases(self) -> dict[str, list[list[int]]]:
        """``{in_dim: [[value per out dim] per input bit]}``."""
        out: dict[str, list[list[int]]] = {}
        k = 0
        for n, b in self._in:
            out[n] = [self.unpack(c) for c in self._cols[k:k + b]]
            k += b
        return out

    def basis(self, in_dim: str, i: int, out_dim: str) -> int:
        """Value along ``out_dim`` of basis ``i`` of ``in_dim``."""
        c = self._cols[self._in_offset(in_dim) + i]
        k = self.out_dim_names.index(out_dim)
        return self.unpack(c)[k]

    def matrix(self) -> np.ndarray:
        """The GF(2) matrix: ``M[r, c]`` is output bit ``r`` of input bit ``c`` (uint8).

        >>> LinearLayout.identity1D(2, "i", "o").matrix().tolist()
        [[1]]
        """
        import numpy as np  # deferred: start-up time (only array code needs numpy)
        m = np.zeros((self.total_out_bits, self.total_in_bits), dtype=np.uint8)
        for c, v in enumerate(self._cols):
            for r in range(self.total_out_bits):
                m[r, c] = (v >> r) & 1
        return m

    def rows(self) -> list[int]:
        """The matrix rows as ints: bit ``c`` of ``rows()[r]`` is ``M[r, c]``."""
        return gf2.transpose(list(self._cols), self.total_out_bits)

    def to_dict(self) -> dict:
        """``{"in_dims": {...}, "out_dims": {...}, "bases": {...}}`` (JSON-ready)."""
        return {"in_dims": self.in_dims, "out_dims": self.out_dims, "bases": self.bases}

    def __repr__(self) -> str:
        bases = ", ".join(f"{n}: {v}" for n, v in self.bases.items())
        outs = ", ".join(f"{n}={s}" for n, s in self.out_dims.items())
        return f"LinearLayout({{{bases}}} -> [{outs}])"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LinearLayout):
            return NotImplemented
        return self._in == other._in and self._out == other._out and self._cols == other._cols

    def __hash__(self) -> int:
        return hash((self._in, self._out, self._cols))

    def equal_ignoring_order(self, other: "LinearLayout") -> bool:
        """Equality after putting ``other``'s dims in this layout's order."""
        if set(self.in_dims.items()) != set(other.in_dims.items()) or \
                set(self.out_dims.items()) != set(other.out_dims.items()):
            return False
        return self == other.transpose_ins(self.in_dim_names).transpose_outs(self.out_dim_names)

    # ----- evaluation ----------------------------------------------------------------
    def apply_packed(self, x: int) -> int:
        """Image of the flattened input ``x`` (in dims concatenated, first low), packed."""
        return gf2.xor_span(self._cols, x)

    def flatten_in(self, coords: Mapping[str, int]) -> int:
        """Pack an input dict into one int (first in dim in the low bits)."""
        unknown = set(coords) - set(self.in_dim_names)
        if unknown:
            raise LayoutError(f"unknown input dims {sorted(unknown)} (have {self.in_dim_names})")
        x, off = 0, 0
        for n, b in self._in:
            if n not in coords:
                raise LayoutError(f"missing input dim '{n}'")
            v = coords[n]
            if not is_integer(v) or not 0 <= v < (1 << b):
                what = "is outside" if is_integer(v) else "is not an integer in"
                raise LayoutError(f"input {n}={v!r} {what} [0, {1 << b})")
            x |= int(v) << off
            off += b
        return x

    def apply(self, coords: Mapping[str, int]) -> dict[str, int]:
        """Evaluate the layout: XOR of the bases selected by the set input bits.

        >>> LinearLayout.identity1D(8, "i", "o").apply({"i": 5})
        {'o': 5}
        """
        y = self.apply_packed(self.flatten_in(coords))
        return dict(zip(self.out_dim_names, self.unpack(y)))

    def apply_all(self) -> np.ndarray:
        """Brute-force table: packed image of every flattened input (numpy, for tests/benchmarks)."""
        import numpy as np  # deferred: start-up time (only array code needs numpy)
        res = np.zeros(1, dtype=np.int64)
        for c in self._cols:
            res = np.concatenate([res, res ^ c])
        return res

    # ----- properties ------------------------------------------------------------------
    def rank(self) -> int:
        return gf2.rank(self._cols)

    def is_surjective(self) -> bool:
        """Every output coordinate is reached (rank == output bits)."""
        return self.rank() == self.total_out_bits

    def is_injective(self) -> bool:
        """No two inputs share an output (the bases are independent)."""
        return self.rank() == self.total_in_bits

    def is_invertible(self) -> bool:
        return self.is_surjective() and self.is_injective()

    def free_variable_masks(self) -> dict[str, int]:
        """Per input dim, a mask of the input bits that are free variables.

        A bit is free when its basis lies in the span of the bases before it
        (flattened order): flipping it can be undone by lower bits, so the data
        it selects is a copy (broadcast). Zero bases are always free.

        >>> LinearLayout({"r": [[1], [0]]}, ["o"]).free_variable_masks()
        {'r': 2}
        """
        ind = gf2.independent_mask(self._cols)
        out, off = {}, 0
        for n, b in self._in:
            out[n] = (~ind >> off) & ((1 << b) - 1)
            off += b
        return out

    def num_consecutive(self, in_dim: str | None = None, out_dim: str | None = None) -> int:
        """How many consecutive values of ``in_dim`` land on consecutive values of ``out_dim``.

        Law: the largest power of two ``V <= min(size(in_dim), size(out_dim))`` with
        ``L(a*V + v, rest) == L(a*V, rest) + v * e_out`` for every ``a``, ``rest`` and
        ``v < V`` (``+``, not XOR: ``L(a*V, rest)`` has no bit of ``v`` along ``out_dim``).
        Equivalently the first ``log2 V`` bases of ``in_dim`` are ``1, 2, 4, ...`` along
        ``out_dim`` and zero elsewhere, and no other basis touches those low bits.
        Only bits of ``out_dim`` count: a run never continues into the next output dim.

        Defaults (first input dim, first output dim) are Triton's
        ``getNumConsecutiveInOut`` (see :meth:`num_consecutive_in_out`); the two
        arguments generalize it to any pair of dims. A layout with no dims gives 1.

        >>> L = LinearLayout.identity1D(4, "in", "o1") * LinearLayout.identity1D(8, "in", "o2")
        >>> L.num_consecutive()
        4
        >>> LinearLayout({"register": [[1], [2], [8]]}, {"dim0": 16}, False).num_consecutive()
        4
        """
        if not self._in or not self._out:
            return 1
        in_dim = in_dim or self._in[0][0]
        out_dim = out_dim or self._out[0][0]
        if out_dim not in self.out_dim_names:
            raise LayoutError(f"no output dim '{out_dim}' (have {self.out_dim_names})")
        k_out = self.out_dim_names.index(out_dim)
        off = self._in_offset(in_dim)
        limit = min(self.in_dim_bits(in_dim), self._out[k_out][1])
        shift = _offsets(self._out)[k_out]
        k = 0
        while k < limit and self._cols[off + k] == 1 << (shift + k):
            k += 1
        others = [c for i, c in enumerate(self._cols) if not off <= i < off + k]
        while k > 0 and any((c >> shift) & ((1 << k) - 1) for c in others):
            k -= 1
        return 1 << k

    def num_consecutive_in_out(self) -> int:
        """Triton's ``getNumConsecutiveInOut``: :meth:`num_consecutive` of the first in/out dims.

        Law: the largest ``V`` (a power of two, at most the sizes of the first input
        and first output dim) such that ``divide_left(self, identity1D(V, in0, out0))``
        exists. 1 for a layout without input or output dims.

        >>> L = LinearLayout.identity1D(4, "in", "o1") * LinearLayout.identity1D(8, "in", "o2")
        >>> L.num_consecutive_in_out()
        4
        """
        return self.num_consecutive()

    def contiguous_elems_along_output_dim(self, out_dim: str) -> int:
        """Triton's ``contiguousElemsAlongOutputDim``: the largest prefix ``[0, n)`` of
        ``out_dim`` inside the image of the layout projected onto ``out_dim``.

        Law: ``n`` is the largest power of two with every value below ``n`` equal to
        ``L(x)[out_dim]`` for some ``x`` (the image is a subspace, so this is the
        lowest bit ``2**k`` of ``out_dim`` not in the projected span, or the full size).

        >>> LinearLayout({"logical": [[1], [4]]}, {"offset": 8}, False).contiguous_elems_along_output_dim("offset")
        2
        """
        proj = self.sublayout(self.in_dim_names, [out_dim])
        for k in range(proj.total_out_bits):
            if gf2.solve(proj.columns, 1 << k) is None:
                return 1 << k
        return proj.total_out_size

    # ----- algebra ---------------------------------------------------------------------
    def __mul__(self, outer: "LinearLayout") -> "LinearLayout":
        """Product (Triton ``LinearLayout::operator*``): shared names merge, the left operand takes the low bits.

        >>> (LinearLayout.identity1D(4, "i", "o1") * LinearLayout.identity1D(8, "i", "o2")).apply({"i": 13})
        {'o1': 1, 'o2': 3}
        """
        if not isinstance(outer, LinearLayout):
            return NotImplemented
        key = (self._in, self._out, self._cols, outer._in, outer._out, outer._cols)
        got = _PRODUCTS.get(key)
        if got is None:
            got = self._product(outer)
            if len(_PRODUCTS) < MAX_PRODUCTS:
                _PRODUCTS[key] = got
        return got

    def _product(self, outer: "LinearLayout") -> "LinearLayout":
        """:meth:`__mul__` computed (no memo)."""
        inner = self
        in_names = supremum(inner.in_dim_names, outer.in_dim_names)
        out_names = supremum(inner.out_dim_names, outer.out_dim_names)
        ib = dict.fromkeys(in_names, 0)
        ob = dict.fromkeys(out_names, 0)
        for L in (inner, outer):
            for n, b in L._in:
                ib[n] += b
            for n, b in L._out:
                ob[n] += b
        outs = [(n, ob[n]) for n in out_names]
        offs = dict(zip(out_names, _offsets(outs)))
        inner_bits = dict(inner._out)
        # per operand: (source shift, mask, destination shift) of each of its out dims
        fields = []
        for L, high in ((inner, False), (outer, True)):
            f, src = [], 0
            for d, b in L._out:
                dst = offs[d] + (inner_bits.get(d, 0) if high else 0)
                f.append((src, (1 << b) - 1, dst))
                src += b
            fields.append(f)
        starts = []
        for L in (inner, outer):
            st, k = {}, 0
            for n, b in L._in:
                st[n] = (k, b)
                k += b
            starts.append(st)
        cols = []
        for n in in_names:
            for L, f, st in ((inner, fields[0], starts[0]), (outer, fields[1], starts[1])):
                if n not in st:
                    continue
                k, b = st[n]
                for c in L._cols[k:k + b]:
                    cols.append(sum(((c >> src) & mask) << dst for src, mask, dst in f))
        return LinearLayout._raw([(n, ib[n]) for n in in_names], outs, cols)

    def compose(self, outer: "LinearLayout") -> "LinearLayout":
        """``outer ∘ self``: apply self, then outer (Triton's ``compose``).

        self's output dims must be outer's input dims (any order), each no larger.

        >>> a = LinearLayout.identity1D(4, "i", "x"); b = LinearLayout({"x": [[2], [1]]}, ["y"])
        >>> a.compose(b).apply({"i": 1})
        {'y': 2}
        """
        if set(self.out_dim_names) != set(outer.in_dim_names):
            raise LayoutError(f"compose: output dims {self.out_dim_names} must be the input "
                              f"dims of the outer layout {outer.in_dim_names}")
        for n, b in self._out:
            if b > outer.in_dim_bits(n):
                raise LayoutError(f"compose: output dim '{n}' has size {1 << b} but the outer "
                                  f"layout's input '{n}' only {outer.in_dim_size(n)}")
        # where each of self's packed output bits sits in outer's flattened input
        bit_map = []
        for n, b in self._out:
            base = outer._in_offset(n)
            bit_map.extend(base + i for i in range(b))
        ocols = outer._cols
        cols = []
        for c in self._cols:
            acc, k = 0, 0
            while c:
                if c & 1:
                    acc ^= ocols[bit_map[k]]
                c >>= 1
                k += 1
            cols.append(acc)
        return LinearLayout._raw(self._in, outer._out, cols)

    def invert_and_compose(self, outer: "LinearLayout") -> "LinearLayout":
        """Triton's ``invertAndCompose``: a layout ``C`` with ``outer(C(x)) == self(x)``.

        Requires: the same output dim names (any order); each of outer's output
        sizes at least self's; outer's image contains self's image.
        Postcondition: ``C`` maps self's input dims to outer's input dims (sizes as in
        outer), in those orders. Choice of preimage, as the Triton 3.9 wheel makes it
        (checked on random layouts against ``triton.tools.LinearLayout``): an input dim
        ``d`` of both layouts with the same bases (output sizes aside) whose image in
        outer meets the image of outer's other input dims only in 0 maps to itself
        (identity); the other dims are solved by :func:`lstsq` (outer's free variables
        set to 0). Where that reduced solve has no solution (Triton asserts) every dim
        is solved instead. Triton's newer sources drop the "meets only in 0" test.

        >>> L = LinearLayout({"r": [[2], [1]]}, ["o"]); L.invert_and_compose(L).apply({"r": 2})
        {'r': 2}
        >>> LinearLayout({"i": [[1], [2]]}, ["o"]).invert_and_compose(LinearLayout({"j": [[0], [2], [1]]}, ["o"])).bases
        {'i': [[4], [2]]}
        """
        if sorted(self.out_dim_names) != sorted(outer.out_dim_names):
            raise LayoutError(f"invert_and_compose: output dims differ: {self.out_dim_names} "
                              f"vs {outer.out_dim_names}")
        for n, b in self._out:
            if b > outer.out_dim_bits(n):
                raise LayoutError(f"invert_and_compose: output '{n}' of size {1 << b} exceeds "
                                  f"the outer layout's {outer.out_dim_size(n)}")
        outs = self.out_dim_names
        A = outer.transpose_outs(outs)
        B = self
        same = []
        for d in A.in_dim_names:
            if d not in B.in_dim_names:
                continue
            a_d = A.sublayout([d], outs)
            if not a_d.equal_ignoring_out_dim_sizes(B.sublayout([d], outs)):
                continue
            rest = A.sublayout([e for e in A.in_dim_names if e != d], outs)
            if not gf2.intersect(a_d.columns, rest.columns):
                same.append(d)
        a_red = A.sublayout([d for d in A.in_dim_names if d not in same], outs)
        b_red = B.sublayout([d for d in B.in_dim_names if d not in same], outs)
        ret = lstsq(a_red, b_red) if same else None
        if ret is None:
            same = []
            ret = lstsq(A, B)
            if ret is None:
                raise LayoutError("invert_and_compose: the outer layout does not cover this "
                                  "layout's image (self reaches an output outer never does)")
        for d in same:
            ret = ret * LinearLayout.identity1D(A.in_dim_size(d), d, d)
        return ret.transpose_ins(B.in_dim_names).transpose_outs(A.in_dim_names)

    def invert(self) -> "LinearLayout":
        """The inverse of an invertible layout (input and output dims swap roles).

        >>> L = LinearLayout({"r": [[2], [1]]}, ["o"]); L.invert().compose(L) == LinearLayout.identity1D(4, "o", "o")
        True
        """
        r = self.rank()
        if not r == self.total_in_bits == self.total_out_bits:
            raise LayoutError(f"layout is not invertible (rank {self.rank()}, "
                              f"{self.total_in_bits} input bits, {self.total_out_bits} output bits)")
        return self._identity_on_outs().invert_and_compose(self)

    def pseudoinvert(self) -> "LinearLayout":
        """A right inverse ``P`` of a surjective layout: ``self(P(y)) == y``.

        Free variables (broadcast bits) are set to 0 in the chosen preimage.
        """
        return self._identity_on_outs().invert_and_compose(self)

    def _identity_on_outs(self) -> "LinearLayout":
        n = self.total_out_bits
        return LinearLayout._raw(self._out, self._out, [1 << i for i in range(n)])

    def transpose_ins(self, order: Sequence[str]) -> "LinearLayout":
        """Reorder input dims (``order`` is a permutation of the names)."""
        order = list(order)
        if sorted(order) != sorted(self.in_dim_names):
            raise LayoutError(f"transpose_ins: {order} is not a permutation of {self.in_dim_names}")
        cols = []
        for n in order:
            off = self._in_offset(n)
            cols.extend(self._cols[off:off + self.in_dim_bits(n)])
        return LinearLayout._raw([(n, self.in_dim_bits(n)) for n in order], self._out, cols)

    def transpose_outs(self, order: Sequence[str]) -> "LinearLayout":
        """Reorder output dims (``order`` is a permutation of the names)."""
        order = list(order)
        names = self.out_dim_names
        if order == names:                  # the same order: the columns as they are (masked as unpacking does)
            mask = (1 << self.total_out_bits) - 1
            return LinearLayout._raw(self._in, self._out, [c & mask for c in self._cols])
        if sorted(order) != sorted(names):
            raise LayoutError(f"transpose_outs: {order} is not a permutation of {self.out_dim_names}")
        idx = [self.out_dim_names.index(n) for n in order]
        outs = [(n, self.out_dim_bits(n)) for n in order]
        offs = _offsets(outs)
        cols = []
        for c in self._cols:
            vals = self.unpack(c)
            cols.append(sum(vals[i] << offs[k] for k, i in enumerate(idx)))
        return LinearLayout._raw(self._in, outs, cols)

    def reshape_ins(self, new_in_dims: Sequence[tuple[str, int]] | Mapping[str, int]) -> "LinearLayout":
        """Flatten the input dims (first dim low) and split them as ``new_in_dims``."""
        pairs = list(new_in_dims.items()) if isinstance(new_in_dims, Mapping) else list(new_in_dims)
        bits = [(n, log2_exact(s, f"reshape_ins dim '{n}'")) for n, s in pairs]
        if sum(b for _, b in bits) != self.total_in_bits:
            raise LayoutError(f"reshape_ins: total size {1 << sum(b for _, b in bits)} != "
                              f"{self.total_in_size}")
        return LinearLayout._raw(bits, self._out, self._cols)

    def reshape_outs(self, new_out_dims: Sequence[tuple[str, int]] | Mapping[str, int]) -> "LinearLayout":
        """Flatten the output dims (first dim low) and split them as ``new_out_dims``."""
        pairs = list(new_out_dims.items()) if isinstance(new_out_dims, Mapping) else list(new_out_dims)
        bits = [(n, log2_exact(s, f"reshape_outs dim '{n}'")) for n, s in pairs]
        if sum(b for _, b in bits) != self.total_out_bits:
            raise LayoutError(f"reshape_outs: total size {1 << sum(b for _, b in bits)} != "
                              f"{self.total_out_size}")
        return LinearLayout._raw(self._in, bits, self._cols)

    def sublayout(self, in_dims: Iterable[str], out_dims: Iterable[str]) -> "LinearLayout":
        """Triton's ``sublayout``: the input dims not named are set to 0, the output dims
        not named are dropped; sizes and the layout's own dim order are kept.

        >>> LinearLayout({"a": [[1, 0]], "b": [[0, 1]]}, ["x", "y"]).sublayout(["b"], "y").bases
        {'b': [[1]]}
        """
        in_dims, out_dims = set(_names(in_dims)), set(_names(out_dims))
        for n in in_dims - set(self.in_dim_names):
            raise LayoutError(f"sublayout: no input dim '{n}'")
        for n in out_dims - set(self.out_dim_names):
            raise LayoutError(f"sublayout: no output dim '{n}'")
        keep_out = [k for k, n in enumerate(self.out_dim_names) if n in out_dims]
        if len(keep_out) == len(self._out):     # every out dim, in order: the packed columns as they are
            return self._in_sublayout(in_dims)
        outs = [self._out[k] for k in keep_out]
        offs = _offsets(outs)
        ins, cols = [], []
        for n, b in self._in:
            if n not in in_dims:
                continue
            ins.append((n, b))
            off = self._in_offset(n)
            for c in self._cols[off:off + b]:
                vals = self.unpack(c)
                cols.append(sum(vals[k] << offs[j] for j, k in enumerate(keep_out)))
        return LinearLayout._raw(ins, outs, cols)

    def _in_sublayout(self, in_dims: set) -> "LinearLayout":
        """:meth:`sublayout` keeping every output dim: the columns of ``in_dims``, each masked to
        the output bits (what unpacking and packing them again gives)."""
        mask = (1 << self.total_out_bits) - 1
        ins, cols, off = [], [], 0
        for n, b in self._in:
            if n in in_dims:
                ins.append((n, b))
                cols.extend(c & mask for c in self._cols[off:off + b])
            off += b
        return LinearLayout._raw(ins, self._out, cols)

    def with_out_dim_sizes(self, sizes: Mapping[str, int]) -> "LinearLayout":
        """Same bases over larger (or equal) output dims."""
        b = self.bases
        new = {n: sizes.get(n, s) for n, s in self.out_dims.items()}
        return LinearLayout(b, new, require_surjective=False)


    # ----- more of Triton's LinearLayout operations ------------------------------------
    def equal_ignoring_out_dim_sizes(self, other: "LinearLayout") -> bool:
        """Same in dims, same out dim names (in order) and same bases; out sizes may differ.

        >>> LinearLayout.identity1D(4, "i", "o").equal_ignoring_out_dim_sizes(
        ...     LinearLayout({"i": [[1], [2]]}, {"o": 8}, False))
        True
        """
        return (self.out_dim_names == other.out_dim_names and self._in == other._in
                and self.bases == other.bases)

    def flatten_ins(self) -> "LinearLayout":
        """One input dim, named as the first, holding every input bit in order.

        >>> LinearLayout({"a": [[1]], "b": [[2]]}, ["o"]).flatten_ins().bases
        {'a': [[1], [2]]}
        """
        if not self._in:
            return self
        return self.reshape_ins([(self._in[0][0], self.total_in_size)])

    def flatten_outs(self) -> "LinearLayout":
        """One output dim, named as the first, first dim in the low bits.

        >>> LinearLayout({"i": [[1, 1]]}, {"x": 2, "y": 2}, False).flatten_outs().bases
        {'i': [[3]]}
        """
        if not self._out:
            return self
        return self.reshape_outs([(self._out[0][0], self.total_out_size)])

    def squeeze_ins(self, dim: str) -> "LinearLayout":
        """Drop input dim ``dim`` of size 1.

        >>> LinearLayout({"a": [[1]], "b": []}, ["o"]).squeeze_ins("b").in_dims
        {'a': 2}
        """
        if self.in_dim_bits(dim):
            raise LayoutError(f"squeeze_ins: input dim '{dim}' has size {self.in_dim_size(dim)}, not 1")
        return LinearLayout._raw([p for p in self._in if p[0] != dim], self._out, self._cols)

    def squeeze_outs(self, dim: str) -> "LinearLayout":
        """Drop output dim ``dim`` of size 1.

        >>> LinearLayout({"a": [[1, 0]]}, ["x", "y"]).squeeze_outs("y").bases
        {'a': [[1]]}
        """
        if self.out_dim_bits(dim):
            raise LayoutError(f"squeeze_outs: output dim '{dim}' has size {self.out_dim_size(dim)}, not 1")
        return LinearLayout._raw(self._in, [p for p in self._out if p[0] != dim], self._cols)

    def resize_in_dim(self, dim: str, size: int) -> "LinearLayout":
        """Triton's ``resizeInDim``: shrinking drops the top bases of ``dim``; growing
        appends zero bases (the new inputs are copies).

        >>> LinearLayout.identity1D(4, "in", "out").resize_in_dim("in", 16).bases
        {'in': [[1], [2], [0], [0]]}
        """
        n = log2_exact(size, f"resize_in_dim '{dim}'")
        old = self.in_dim_bits(dim)
        off = self._in_offset(dim)
        mid = list(self._cols[off:off + min(n, old)]) + [0] * max(0, n - old)
        cols = list(self._cols[:off]) + mid + list(self._cols[off + old:])
        return LinearLayout._raw([(d, n if d == dim else b) for d, b in self._in], self._out, cols)

    def resize_out_dim(self, dim: str, size: int) -> "LinearLayout":
        """Triton's ``resizeOutDim``: shrink output dim ``dim``; basis values that no
        longer fit become 0.

        >>> LinearLayout.identity1D(8, "in", "out").resize_out_dim("out", 4).bases
        {'in': [[1], [2], [0]]}
        """
        n = log2_exact(size, f"resize_out_dim '{dim}'")
        if n > self.out_dim_bits(dim):
            raise LayoutError(f"resize_out_dim: '{dim}' can only shrink "
                              f"({self.out_dim_size(dim)} -> {size})")
        k = self.out_dim_names.index(dim)
        outs = [(d, n if d == dim else b) for d, b in self._out]
        offs = _offsets(outs)
        cols = []
        for c in self._cols:
            vals = self.unpack(c)
            if vals[k] >= size:
                vals[k] = 0
            cols.append(sum(v << o for v, o in zip(vals, offs)))
        return LinearLayout._raw(self._in, outs, cols)

    def rename_in_dim(self, old: str, new: str) -> "LinearLayout":
        """The same layout with input dim ``old`` called ``new``.

        >>> LinearLayout.identity1D(2, "a", "o").rename_in_dim("a", "b").in_dims
        {'b': 2}
        """
        self.in_dim_bits(old)
        if new != old and new in self.in_dim_names:
            raise LayoutError(f"rename_in_dim: input dim '{new}' already exists")
        return LinearLayout._raw([(new if d == old else d, b) for d, b in self._in],
                                 self._out, self._cols)

    def rename_dims(self, ins: Mapping[str, str] | None = None,
                    outs: Mapping[str, str] | None = None) -> "LinearLayout":
        """Triton's ``renameLinearLayoutDims``: rename input and output dims at once
        (a swap is allowed); order and bases are kept.

        >>> L = LinearLayout({"a": [[1, 0]], "b": [[0, 1]]}, ["x", "y"])
        >>> L.rename_dims({"a": "b", "b": "a"}, {"x": "y", "y": "x"}).bases
        {'b': [[1, 0]], 'a': [[0, 1]]}
        """
        ins, outs = dict(ins or {}), dict(outs or {})
        for old in ins:
            self.in_dim_bits(old)
        for old in outs:
            self.out_dim_bits(old)
        new_in = [(ins.get(d, d), b) for d, b in self._in]
        new_out = [(outs.get(d, d), b) for d, b in self._out]
        if len({d for d, _ in new_in}) != len(new_in) or len({d for d, _ in new_out}) != len(new_out):
            raise LayoutError("rename_dims: renaming creates duplicate dimensions")
        return LinearLayout._raw(new_in, new_out, self._cols)

    def output_basis_mask(self, in_dims: str | Iterable[str], out_dim: str) -> int:
        """Triton's ``getOutputBasisMask``: OR of the ``out_dim`` values of every basis of
        ``in_dims`` (the bits of ``out_dim`` those inputs can flip).

        >>> LinearLayout({"x": [[1, 8], [2, 16]]}, {"o0": 8, "o1": 32}, False).output_basis_mask("x", "o1")
        24
        """
        mask = 0
        for b in self.sublayout(in_dims, [out_dim]).columns:
            mask |= b
        return mask

    def input_basis_mask(self, in_dim: str, out_dims: str | Iterable[str]) -> int:
        """Triton's ``getInputBasisMask``: bit ``i`` set when basis ``i`` of ``in_dim`` is
        nonzero in some of ``out_dims``.

        >>> LinearLayout({"x": [[1, 0], [0, 2], [0, 0]]}, {"o0": 8, "o1": 4}, False).input_basis_mask("x", ["o1"])
        2
        """
        cols = self.sublayout([in_dim], out_dims).columns
        return sum(1 << i for i, c in enumerate(cols) if c)

    def concat_ins(self, other: "LinearLayout") -> "LinearLayout":
        """Triton's ``concatIns``: other's input dims after self's, over the same outputs.

        Requires: identical output dims and sizes; disjoint input dims.
        Law: ``R(x, y) = self(x) XOR other(y)``.

        >>> a = LinearLayout.identity1D(2, "i", "o"); b = LinearLayout({"j": [[1]]}, ["o"])
        >>> a.concat_ins(b).bases
        {'i': [[1]], 'j': [[1]]}
        """
        if self._out != other._out:
            raise LayoutError(f"concat_ins: layouts must have the same output dimensions "
                              f"({self.out_dims} vs {other.out_dims})")
        if set(self.in_dim_names) & set(other.in_dim_names):
            raise LayoutError("concat_ins: layouts must have disjoint input dimensions")
        return LinearLayout._raw(self._in + other._in, self._out, self._cols + other._cols)

    def concat_outs(self, other: "LinearLayout") -> "LinearLayout":
        """Triton's ``concatOuts``: other's output dims after self's, over the same inputs.

        Requires: identical input dims and sizes; disjoint output dims.
        Law: ``R(x) = (self(x), other(x))``.

        >>> a = LinearLayout.identity1D(2, "i", "o"); b = LinearLayout({"i": [[1]]}, ["p"])
        >>> a.concat_outs(b).bases
        {'i': [[1, 1]]}
        """
        if self._in != other._in:
            raise LayoutError(f"concat_outs: layouts must have the same input dimensions "
                              f"({self.in_dims} vs {other.in_dims})")
        if set(self.out_dim_names) & set(other.out_dim_names):
            raise LayoutError("concat_outs: layouts must have disjoint output dimensions")
        sh = self.total_out_bits
        return LinearLayout._raw(self._in, self._out + other._out,
                                 [a | (b << sh) for a, b in zip(self._cols, other._cols)])

    def sublayout_is_zero(self, in_dims: str | Iterable[str], out_dims: str | Iterable[str]) -> bool:
        """Triton's ``sublayoutIsZero``: no basis of ``in_dims`` reaches any of ``out_dims``.

        >>> LinearLayout.identity1D(4, "in", "out").sublayout_is_zero([], ["out"])
        True
        """
        return not any(self.sublayout(in_dims, out_dims).columns)

    def square_sublayout_is_identity(self, dims: str | Iterable[str]) -> bool:
        """Triton's ``squareSublayoutIsIdentity``: restricted to ``dims`` (each both an
        input and an output dim, same size), the flattened sublayout is the identity:
        input bit ``i`` (dims in the layout's input order) sets output bit ``i`` (dims
        in the layout's output order). Other output dims are not looked at.

        >>> LinearLayout.identity1D(4, "d", "d").square_sublayout_is_identity(["d"])
        True
        """
        dims = _names(dims)
        if not dims:
            return True
        for d in dims:
            if self.in_dim_bits(d) != self.out_dim_bits(d):
                return False
        # flattened (in the layout's own in and out orders), as Triton does
        return all(c == 1 << i for i, c in enumerate(self.sublayout(dims, dims).columns))

    def is_trivial_over(self, dims: str | Iterable[str]) -> bool:
        """Triton's ``isTrivialOver``: the identity on ``dims``, which reach no other
        output and are reached by no other input.

        Requires: every dim is both an input and an output dim.

        >>> LinearLayout({"block": [[1, 0]], "lane": [[0, 1]]}, ["block", "dim0"]).is_trivial_over("block")
        True
        """
        dims = _names(dims)
        for d in dims:
            if d not in self.in_dim_names or d not in self.out_dim_names:
                raise LayoutError(f"is_trivial_over: dim '{d}' must be both an input and "
                                  "an output dim of the layout")
        rest_in = [d for d in self.in_dim_names if d not in dims]
        rest_out = [d for d in self.out_dim_names if d not in dims]
        return (self.square_sublayout_is_identity(dims) and
                self.sublayout_is_zero(rest_in, dims) and
                self.sublayout_is_zero(dims, rest_out))

    def is_identity_on_out_dim(self, dim: str) -> bool:
        """Triton's ``isIdentityOnOutDim``: output ``dim`` equals input ``dim``; no other
        input reaches it (``dim`` may still reach other outputs). False when ``dim``
        is not both an input and an output dim.

        >>> LinearLayout({"block": [[1, 1]]}, {"offset": 2, "block": 2}, False).is_identity_on_out_dim("block")
        True
        """
        if dim not in self.in_dim_names or dim not in self.out_dim_names:
            return False
        others = [d for d in self.in_dim_names if d != dim]
        return self.square_sublayout_is_identity([dim]) and self.sublayout_is_zero(others, [dim])

    def quotient(self, dims: str | Iterable[str]) -> "LinearLayout | None":
        """Triton's ``quotient``: drop ``dims`` from a layout that is trivial over them.

        Law: when :meth:`is_trivial_over` ``dims`` holds, the result is the
        :meth:`sublayout` of the remaining input and output dims, and
        ``self == result * identity over dims`` up to dim order.
        Requires nothing; returns None exactly where Triton returns ``nullopt``:
        a dim of ``dims`` is not an input dim, or the layout is not trivial over them.
        (A dim that is an input but not an output dim makes Triton abort; here it
        raises :class:`LayoutError`.)

        >>> L = LinearLayout.identity1D(4, "block", "block") * LinearLayout.identity1D(8, "lane", "dim0")
        >>> L.quotient(["block"]).bases
        {'lane': [[1], [2], [4]]}
        """
        dims = _names(dims)
        if any(d not in self.in_dim_names for d in dims):
            return None
        if not self.is_trivial_over(dims):
            return None
        return self.sublayout([d for d in self.in_dim_names if d not in dims],
                              [d for d in self.out_dim_names if d not in dims])

    def remove_zero_bases_along_dim(self, dim: str) -> "LinearLayout":
        """Triton's ``removeZeroBasesAlongDim``: drop the zero bases of input ``dim``.

        >>> LinearLayout({"r": [[1], [0], [2]]}, ["o"]).remove_zero_bases_along_dim("r").bases
        {'r': [[1], [2]]}
        """
        off, nb = self._in_offset(dim), self.in_dim_bits(dim)
        keep = [c for c in self._cols[off:off + nb] if c]
        cols = list(self._cols[:off]) + keep + list(self._cols[off + nb:])
        return LinearLayout._raw([(d, len(keep) if d == dim else b) for d, b in self._in],
                                 self._out, cols)

def _names(x: str | Iterable[str]) -> list[str]:
    """A dim-name argument as a list (a bare string is one name, not its characters)."""
    return [x] if isinstance(x, str) else list(x)


def lstsq(A: LinearLayout, B: LinearLayout) -> LinearLayout | None:
    """Triton's ``lstsq``: ``X`` with ``X.compose(A) == B`` (outputs in A's order), or None.

    Requires: the same output dim names, each of B's sizes at most A's.
    Postcondition: ``X`` maps B's input dims to A's input dims (A's sizes); among the
    solutions, A's free variables (inputs whose basis lies in the span of earlier
    ones) are 0. None when the dims do not match or B's image is not inside A's.
    (Triton also gives up beyond 64 matrix columns; this one does not.)

    >>> A = LinearLayout({"s": [[1, 1], [2, 0]]}, {"x": 4, "y": 2}, False)
    >>> lstsq(A, LinearLayout({"v": [[3, 1]]}, {"x": 4, "y": 2}, False)).bases
    {'v': [[3]]}
    """
    if sorted(A.out_dim_names) != sorted(B.out_dim_names):
        return None
    if any(B.out_dim_size(n) > A.out_dim_size(n) for n in A.out_dim_names):
        return None
    Bt = B.transpose_outs(A.out_dim_names)
    table = gf2.echelon(A.columns)
    cols = []
    for c in Bt.columns:
        comb = gf2.solve_echelon(table, A._pack(Bt.unpack(c)))
        if comb is None:
            return None
        cols.append(comb)
    return LinearLayout._raw(Bt._in, A._in, cols)


def _quotient_shapes(A: "LinearLayout", B: "LinearLayout") -> tuple[dict, dict, list] | None:
    """For ``divide_left``/``divide_right``: B's output and input bit counts and the output bits
    left for the quotient; None when B has a dim A lacks or is larger than A."""
    if any(d not in A.in_dim_names for d in B.in_dim_names) or \
            any(d not in A.out_dim_names for d in B.out_dim_names):
        return None
    bout = dict(B._out)
    c_out = []
    for n, b in A._out:
        if b < bout.get(n, 0):
            return None
        c_out.append((n, b - bout.get(n, 0)))
    return bout, dict(B._in), c_out


def divide_left(A: LinearLayout, B: LinearLayout) -> LinearLayout | None:
    """Triton's ``divideLeft``: ``C`` with ``B * C == A``, or None where none exists.

    Law: such a ``C`` exists iff, for B's dims, A's matrix is block diagonal
    ``[[B, 0], [0, C]]``: the first bases of each of B's input dims are B's bases
    (zero in A's other output dims) and every other basis of A is zero in the low
    bits that B fills. ``C`` has A's input and output dims (sizes A's minus B's).
    None also when B has a dim that A lacks or is larger than A's.

    >>> A = LinearLayout.identity1D(8, "in", "out")
    >>> divide_left(A, LinearLayout.identity1D(4, "in", "out")) == LinearLayout.identity1D(2, "in", "out")
    True
    """
    shapes = _quotient_shapes(A, B)
    if shapes is None:
        return None
    bout, bin_, c_out = shapes
    bb = B.bases
    c_in, c_cols = [], []
    c_offs = _offsets(c_out)
    for n, b in A._in:
        nb = bin_.get(n, 0)
        if b < nb:
            return None
        off = A._in_offset(n)
        for i in range(nb):
            vals = A.unpack(A._cols[off + i])
            want = [bb[n][i][B.out_dim_names.index(o)] if o in bout else 0
                    for o in A.out_dim_names]
            if vals != want:
                return None
        for i in range(nb, b):
            vals = A.unpack(A._cols[off + i])
            packed = 0
            for k, (o, _) in enumerate(A._out):
                low = bout.get(o, 0)
                if vals[k] & ((1 << low) - 1):
                    return None
                packed |= (vals[k] >> low) << c_offs[k]
            c_cols.append(packed)
        c_in.append((n, b - nb))
    C = LinearLayout._raw(c_in, c_out, c_cols)
    return C if B * C == A else None


def divide_right(A: LinearLayout, B: LinearLayout) -> LinearLayout | None:
    """Triton's ``divideRight``: ``C`` with ``C * B == A``, or None where none exists.

    Law: such a ``C`` exists iff, for B's dims, A's matrix is ``[[C, 0], [0, B]]``:
    the last bases of each of B's input dims are B's bases shifted above C's bits
    and C's bases stay below B's part. ``C`` has A's input and output dims. None
    where Triton returns nullopt, and also where Triton would assert (no such C).

    >>> A = LinearLayout.identity1D(8, "in", "out")
    >>> divide_right(A, LinearLayout.identity1D(4, "in", "out")) == LinearLayout.identity1D(2, "in", "out")
    True
    """
    shapes = _quotient_shapes(A, B)
    if shapes is None:
        return None
    bout, bin_, c_out = shapes
    c_in, c_cols = [], []
    c_offs = _offsets(c_out)
    for n, b in A._in:
        nc = b - bin_.get(n, 0)
        if nc < 0:
            return None
        off = A._in_offset(n)
        for i in range(nc):
            vals = A.unpack(A._cols[off + i])
            if any(v >> cb for v, (_, cb) in zip(vals, c_out)):
                return None
            c_cols.append(sum(v << o for v, o in zip(vals, c_offs)))
        c_in.append((n, nc))
    C = LinearLayout._raw(c_in, c_out, c_cols)
    return C if C * B == A else None




def _offsets(outs: Sequence[tuple[str, int]]) -> list[int]:
    offs, acc = [], 0
    for _, b in outs:
        offs.append(acc)
        acc += b
    return offs


def identity_standard_nd(in_dim: str, shape: Sequence[int], order: Sequence[int],
                         out_names: Sequence[str] | None = None) -> LinearLayout:
    """Identity over an N-d ``shape`` with ``order[0]`` the fastest dim, out dims ``dim0..``.

    >>> identity_standard_nd("register", [2, 2], [1, 0]).bases
    {'register': [[0, 1], [1, 0]]}
    """
    rank = len(shape)
    names = list(out_names) if out_names else [f"dim{i}" for i in range(rank)]
    if sorted(order) != list(range(rank)):
        raise LayoutError(f"order {list(order)} is not a permutation of 0..{rank - 1}")
    ret = LinearLayout.empty()
    for d in order:
        ret = ret * LinearLayout.identity1D(shape[d], in_dim, names[d])
    return ret.transpose_outs(names)
