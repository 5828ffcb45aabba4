"""GF(2) linear layouts with named input and output dimensions (Triton's "linear layouts").

A layout maps hardware coordinates (``register``, ``lane``, ``warp``, ``block``,
``offset``, ...) to tensor coordinates (``dim0``, ``dim1``, ...). Every input dim
has a power-of-two size; bit ``i`` of input dim ``d`` has a *basis*, the output
coordinates it selects; the image of an input is the XOR of the bases of its set
bits (seed ``004_d7c7c1cef06bdad0.txt``).

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

import numpy as np

from verilayout.core import gf2
from verilayout.errors import LayoutError


def _log2_exact(size: int, what: str) -> int:
    if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 1:
        raise LayoutError(f"{what} has size {size!r}; sizes are positive integers")
    size = int(size)
    if size & (size - 1):
        raise LayoutError(f"{what} has size {size}, not a power of two")
    return size.bit_length() - 1


def _next_pow2(x: int) -> int:
    return 1 if x <= 1 else 1 << (x - 1).bit_length()


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
        if not isinstance(bases, Mapping):
            raise LayoutError("bases must map input dim names to lists of basis vectors")
        if isinstance(out_dims, Mapping):
            out_pairs = list(out_dims.items())
            explicit = True
        else:
            out_dims = list(out_dims)
            explicit = bool(out_dims) and not isinstance(out_dims[0], str)
            out_pairs = [tuple(p) for p in out_dims] if explicit else [(n, None) for n in out_dims]
        names = [p[0] for p in out_pairs]
        if len(set(names)) != len(names):
            raise LayoutError(f"duplicate output dim names in {names}")
        n_out = len(out_pairs)
        ins = []
        vecs = []
        for name, blist in bases.items():
            if not isinstance(name, str):
                raise LayoutError(f"input dim name {name!r} is not a string")
            blist = list(blist)
            for i, b in enumerate(blist):
                b = list(b)
                if len(b) != n_out:
                    raise LayoutError(
                        f"basis {i} of input dim '{name}' has {len(b)} values; "
                        f"expected one per output dim ({n_out}: {names})")
                for v in b:
                    if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 0:
                        raise LayoutError(
                            f"basis {i} of input dim '{name}' has value {v!r}; "
                            "basis values are non-negative integers")
                vecs.append((name, i, [int(v) for v in b]))
            ins.append((name, len(blist)))
        # output sizes
        out = []
        for k, (name, size) in enumerate(out_pairs):
            if not isinstance(name, str):
                raise LayoutError(f"output dim name {name!r} is not a string")
            top = max([v[2][k] for v in vecs], default=0)
            if size is None:
                size = _next_pow2(top + 1)
            nbits = _log2_exact(size, f"output dim '{name}'")
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
        """``L(x) = x`` for ``x`` in ``[0, size)``.

        >>> LinearLayout.identity1D(4, "i", "o").bases
        {'i': [[1], [2]]}
        """
        n = _log2_exact(size, f"identity1D over '{in_dim}'")
        return cls._raw(((in_dim, n),), ((out_dim, n),), [1 << i for i in range(n)])

    @classmethod
    def zeros1D(cls, size: int, in_dim: str, out_dim: str, out_dim_size: int = 1) -> "LinearLayout":
        """``L(x) = 0`` for ``x`` in ``[0, size)`` (a broadcast).

        >>> LinearLayout.zeros1D(4, "i", "o").apply({"i": 3})
        {'o': 0}
        """
        n = _log2_exact(size, f"zeros1D over '{in_dim}'")
        m = _log2_exact(out_dim_size, f"zeros1D output '{out_dim}'")
        return cls._raw(((in_dim, n),), ((out_dim, m),), [0] * n)

    @classmethod
    def strided1D(cls, size: int, stride: int, in_dim: str, out_dim: str) -> "LinearLayout":
        """``L(x) = x * stride`` (stride a power of two), output sized ``size * stride``.

        >>> LinearLayout.strided1D(4, 2, "i", "o").bases
        {'i': [[2], [4]]}
        """
        n = _log2_exact(size, f"strided1D over '{in_dim}'")
        s = _log2_exact(stride, f"strided1D stride for '{in_dim}'")
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
            n = _log2_exact(size, f"input dim '{name}'")
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
        return 1 << self._in_bits(name)

    def out_dim_size(self, name: str) -> int:
        return 1 << self._out_bits(name)

    def _in_bits(self, name: str) -> int:
        for n, b in self._in:
            if n == name:
                return b
        raise LayoutError(f"no input dim '{name}' (have {self.in_dim_names})")

    def _out_bits(self, name: str) -> int:
        for n, b in self._out:
            if n == name:
                return b
        raise LayoutError(f"no output dim '{name}' (have {self.out_dim_names})")

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

    def _unpack(self, packed: int) -> list[int]:
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
            out[n] = [self._unpack(c) for c in self._cols[k:k + b]]
            k += b
        return out

    def basis(self, in_dim: str, i: int, out_dim: str) -> int:
        """Value along ``out_dim`` of basis ``i`` of ``in_dim``."""
        c = self._cols[self._in_offset(in_dim) + i]
        k = self.out_dim_names.index(out_dim)
        return self._unpack(c)[k]

    def matrix(self) -> np.ndarray:
        """The GF(2) matrix: ``M[r, c]`` is output bit ``r`` of input bit ``c`` (uint8).

        >>> LinearLayout.identity1D(2, "i", "o").matrix().tolist()
        [[1]]
        """
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
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or not 0 <= v < (1 << b):
                raise LayoutError(f"input {n}={v!r} is outside [0, {1 << b})")
            x |= int(v) << off
            off += b
        return x

    def apply(self, coords: Mapping[str, int]) -> dict[str, int]:
        """Evaluate the layout: XOR of the bases selected by the set input bits.

        >>> LinearLayout.identity1D(8, "i", "o").apply({"i": 5})
        {'o': 5}
        """
        y = self.apply_packed(self.flatten_in(coords))
        return dict(zip(self.out_dim_names, self._unpack(y)))

    def apply_all(self) -> np.ndarray:
        """Brute-force table: packed image of every flattened input (numpy, for tests/benchmarks)."""
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

        Defaults: first input dim, first output dim. This is the vector width a
        compiler can use: the first ``k`` bases of ``in_dim`` are 1, 2, 4, ... along
        ``out_dim`` and zero elsewhere, and no other basis touches those low bits.

        >>> LinearLayout({"register": [[1], [2], [8]]}, {"dim0": 16}, False).num_consecutive()
        4
        """
        if not self._in or not self._out:
            return 1
        in_dim = in_dim or self._in[0][0]
        out_dim = out_dim or self._out[0][0]
        k_out = self.out_dim_names.index(out_dim) if out_dim in self.out_dim_names else None
        if k_out is None:
            raise LayoutError(f"no output dim '{out_dim}' (have {self.out_dim_names})")
        off = self._in_offset(in_dim)
        nb = self._in_bits(in_dim)
        shift = _offsets(self._out)[k_out]
        k = 0
        while k < nb and self._cols[off + k] == 1 << (shift + k):
            k += 1
        others = [c for i, c in enumerate(self._cols) if not off <= i < off + k]
        while k > 0 and any((c >> shift) & ((1 << k) - 1) for c in others):
            k -= 1
        return 1 << k

    # ----- algebra ---------------------------------------------------------------------
    def __mul__(self, outer: "LinearLayout") -> "LinearLayout":
        """Product (seed 004): shared names merge, the left operand takes the low bits.

        >>> (LinearLayout.identity1D(4, "i", "o1") * LinearLayout.identity1D(8, "i", "o2")).apply({"i": 13})
        {'o1': 1, 'o2': 3}
        """
        if not isinstance(outer, LinearLayout):
            return NotImplemented
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
            if b > outer._in_bits(n):
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
        """The layout ``C`` with ``outer(C(x)) == self(x)`` for every ``x``.

        ``outer`` must be surjective onto self's output dims (same names; outer's
        sizes at least self's). Where ``outer`` is not injective, the preimage
        chosen sets outer's free variables to 0.

        >>> L = LinearLayout({"r": [[2], [1]]}, ["o"]); L.invert_and_compose(L).apply({"r": 2})
        {'r': 2}
        """
        if set(self.out_dim_names) != set(outer.out_dim_names):
            raise LayoutError(f"invert_and_compose: output dims differ: {self.out_dim_names} "
                              f"vs {outer.out_dim_names}")
        for n, b in self._out:
            if b > outer._out_bits(n):
                raise LayoutError(f"invert_and_compose: output '{n}' of size {1 << b} exceeds "
                                  f"the outer layout's {outer.out_dim_size(n)}")
        table = gf2.echelon(outer._cols)
        if len(table) != outer.total_out_bits:
            raise LayoutError("invert_and_compose: the outer layout is not surjective")
        same_packing = self._out == outer._out
        cols = []
        for c in self._cols:
            if same_packing:
                target = c
            else:
                vals = dict(zip(self.out_dim_names, self._unpack(c)))
                target = outer._pack([vals.get(n, 0) for n in outer.out_dim_names])
            comb, v = 0, target
            while v:
                pv, pc = table[v.bit_length() - 1]
                v ^= pv
                comb ^= pc
            cols.append(comb)
        return LinearLayout._raw(self._in, outer._in, cols)

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
            cols.extend(self._cols[off:off + self._in_bits(n)])
        return LinearLayout._raw([(n, self._in_bits(n)) for n in order], self._out, cols)

    def transpose_outs(self, order: Sequence[str]) -> "LinearLayout":
        """Reorder output dims (``order`` is a permutation of the names)."""
        order = list(order)
        if sorted(order) != sorted(self.out_dim_names):
            raise LayoutError(f"transpose_outs: {order} is not a permutation of {self.out_dim_names}")
        idx = [self.out_dim_names.index(n) for n in order]
        outs = [(n, self._out_bits(n)) for n in order]
        offs = _offsets(outs)
        cols = []
        for c in self._cols:
            vals = self._unpack(c)
            cols.append(sum(vals[i] << offs[k] for k, i in enumerate(idx)))
        return LinearLayout._raw(self._in, outs, cols)

    def reshape_ins(self, new_in_dims: Sequence[tuple[str, int]] | Mapping[str, int]) -> "LinearLayout":
        """Flatten the input dims (first dim low) and split them as ``new_in_dims``."""
        pairs = list(new_in_dims.items()) if isinstance(new_in_dims, Mapping) else list(new_in_dims)
        bits = [(n, _log2_exact(s, f"reshape_ins dim '{n}'")) for n, s in pairs]
        if sum(b for _, b in bits) != self.total_in_bits:
            raise LayoutError(f"reshape_ins: total size {1 << sum(b for _, b in bits)} != "
                              f"{self.total_in_size}")
        return LinearLayout._raw(bits, self._out, self._cols)

    def reshape_outs(self, new_out_dims: Sequence[tuple[str, int]] | Mapping[str, int]) -> "LinearLayout":
        """Flatten the output dims (first dim low) and split them as ``new_out_dims``."""
        pairs = list(new_out_dims.items()) if isinstance(new_out_dims, Mapping) else list(new_out_dims)
        bits = [(n, _log2_exact(s, f"reshape_outs dim '{n}'")) for n, s in pairs]
        if sum(b for _, b in bits) != self.total_out_bits:
            raise LayoutError(f"reshape_outs: total size {1 << sum(b for _, b in bits)} != "
                              f"{self.total_out_size}")
        return LinearLayout._raw(self._in, bits, self._cols)

    def sublayout(self, in_dims: Iterable[str], out_dims: Iterable[str]) -> "LinearLayout":
        """Restrict to some input dims and some output dims (original order kept)."""
        in_dims, out_dims = set(in_dims), set(out_dims)
        for n in in_dims - set(self.in_dim_names):
            raise LayoutError(f"sublayout: no input dim '{n}'")
        for n in out_dims - set(self.out_dim_names):
            raise LayoutError(f"sublayout: no output dim '{n}'")
        keep_out = [k for k, n in enumerate(self.out_dim_names) if n in out_dims]
        outs = [self._out[k] for k in keep_out]
        offs = _offsets(outs)
        ins, cols = [], []
        for n, b in self._in:
            if n not in in_dims:
                continue
            ins.append((n, b))
            off = self._in_offset(n)
            for c in self._cols[off:off + b]:
                vals = self._unpack(c)
                cols.append(sum(vals[k] << offs[j] for j, k in enumerate(keep_out)))
        return LinearLayout._raw(ins, outs, cols)

    def with_out_dim_sizes(self, sizes: Mapping[str, int]) -> "LinearLayout":
        """Same bases over larger (or equal) output dims."""
        b = self.bases
        new = {n: sizes.get(n, s) for n, s in self.out_dims.items()}
        return LinearLayout(b, new, require_surjective=False)


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
