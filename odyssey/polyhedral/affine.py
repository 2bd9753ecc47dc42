"""Affine expressions over loop iterators and size parameters, and their isl forms.

An :class:`Affine` is ``sum(coeff[v] * v) + const`` with integer coefficients.
isl objects are built from it *by name* (``isl.make_zero_and_vars``), never by
pasting strings together.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import cast

import islpy as isl


@dataclass(frozen=True, slots=True)
class Affine:
    """``sum(c * v for v, c in coeffs) + const``; coefficients sorted by name, zeros dropped."""

    coeffs: tuple[tuple[str, int], ...] = ()
    const: int = 0

    @staticmethod
    def make(coeffs: Mapping[str, int] | None = None, const: int = 0) -> Affine:
        items = tuple(sorted((k, int(v)) for k, v in (coeffs or {}).items() if v != 0))
        return Affine(items, int(const))

    @staticmethod
    def var(name: str) -> Affine:
        return Affine(((name, 1),), 0)

    @staticmethod
    def constant(value: int) -> Affine:
        return Affine((), int(value))

    def coeff(self, name: str) -> int:
        for k, v in self.coeffs:
            if k == name:
                return v
        return 0

    @property
    def names(self) -> frozenset[str]:
        return frozenset(k for k, _ in self.coeffs)

    def is_constant(self) -> bool:
        return not self.coeffs

    def __add__(self, other: Affine) -> Affine:
        d = dict(self.coeffs)
        for k, v in other.coeffs:
            d[k] = d.get(k, 0) + v
        return Affine.make(d, self.const + other.const)

    def __neg__(self) -> Affine:
        return Affine.make({k: -v for k, v in self.coeffs}, -self.const)

    def __sub__(self, other: Affine) -> Affine:
        return self + (-other)

    def scale(self, factor: int) -> Affine:
        return Affine.make({k: v * factor for k, v in self.coeffs}, self.const * factor)

    def substitute(self, values: Mapping[str, int]) -> Affine:
        """Replace the named symbols by integers."""
        d: dict[str, int] = {}
        c = self.const
        for k, v in self.coeffs:
            if k in values:
                c += v * values[k]
            else:
                d[k] = v
        return Affine.make(d, c)

    def evaluate(self, values: Mapping[str, int]) -> int:
        rest = self.substitute(values)
        if rest.coeffs:
            missing = ", ".join(k for k, _ in rest.coeffs)
            raise KeyError(f"no value for {missing}")
        return rest.const

    def __str__(self) -> str:
        parts: list[str] = []
        for k, v in self.coeffs:
            if v == 1:
                parts.append(f"+ {k}")
            elif v == -1:
                parts.append(f"- {k}")
            elif v < 0:
                parts.append(f"- {-v}*{k}")
            else:
                parts.append(f"+ {v}*{k}")
        if self.const or not parts:
            parts.append(f"- {-self.const}" if self.const < 0 else f"+ {self.const}")
        text = " ".join(parts)
        return text[2:] if text.startswith("+ ") else "-" + text[2:]


def to_isl_aff(expr: Affine, vars_: Mapping[str | int, isl.PwAff]) -> isl.PwAff:
    """Build the isl affine function of ``expr`` from the variable dictionary of
    ``isl.make_zero_and_vars`` (keys: iterator and parameter names, ``0`` for zero)."""
    result = vars_[0] + expr.const
    for name, c in expr.coeffs:
        result = result + vars_[name] * c
    return result


def make_vars(iterators: Sequence[str], params: Sequence[str]) -> dict[str | int, isl.PwAff]:
    """The zero and named variables of a set space ``[params] -> { [iterators] }``."""
    made = isl.make_zero_and_vars(list(iterators), list(params))
    return cast("dict[str | int, isl.PwAff]", made)


def box_set(
    iterators: Sequence[str],
    params: Sequence[str],
    constraints: Iterable[tuple[Affine, str]],
) -> isl.Set:
    """The set ``{ [iterators] : c >= 0 / c == 0 for each (c, kind) }`` over ``params``.

    ``kind`` is ``">=0"`` or ``"==0"``.
    """
    v = make_vars(iterators, params)
    result: isl.Set = v[0].eq_set(v[0])  # universe
    for aff, kind in constraints:
        lhs = to_isl_aff(aff, v)
        result = result & (lhs.ge_set(v[0]) if kind == ">=0" else lhs.eq_set(v[0]))
    return result


def scanned_points(s: isl.Set) -> int:
    """Points of the bounding box of every dimension of ``s`` but the last: what
    ``count_val`` scans to count ``s`` (it counts the last dimension in bulk). An unbounded
    dimension counts as one (isl's count then fails on its own)."""
    points = 1
    for d in range(s.dim(isl.dim_type.set) - 1):
        low, high = s.dim_min_val(d), s.dim_max_val(d)
        if low.is_int() and high.is_int():
            points *= max(0, high.to_python() - low.to_python() + 1)
    return points


def count_points(s: isl.Set, *, max_scanned: int) -> int | None:
    """The number of integer points of the bounded set ``s``, or None when counting them
    would scan more than ``max_scanned`` points. A dimension no constraint ties to another
    (``k`` of ``{[i, j, k] : 0 <= j <= i < N, 0 <= k < K}``) is a factor of its own: its
    extent multiplies the count of the others, so only the dimensions bound to each other
    are scanned (there, all but the last: :func:`scanned_points`)."""
    s = s.reset_tuple_id()  # the projections below lose the name; compare like with like
    n = s.dim(isl.dim_type.set)
    free: list[int] = []
    total = 1
    for d in range(n):
        alone = s.project_out(isl.dim_type.set, d + 1, n - d - 1).project_out(isl.dim_type.set, 0, d)
        others = s.project_out(isl.dim_type.set, d, 1)
        lifted = (others.insert_dims(isl.dim_type.set, d, 1)
                  .intersect(alone.insert_dims(isl.dim_type.set, 0, d)
                             .add_dims(isl.dim_type.set, n - d - 1)))
        if lifted.is_equal(s):
            free.append(d)
            total *= alone.count_val().to_python()
    rest = s
    for d in reversed(free):
        rest = rest.project_out(isl.dim_type.set, d, 1)
    if scanned_points(rest) > max_scanned:
        return None
    return int(total * rest.count_val().to_python())


def integer_null_space(rows: Sequence[Sequence[int]], ncols: int) -> list[tuple[int, ...]]:
    """A canonical integer basis of ``{d in Z^ncols : rows @ d = 0}``.

    The basis comes from the reduced row-echelon form over the rationals (one
    vector per free column), each vector scaled to coprime integers and made
    lexicographically positive. For ``fi[i][h+p][w+q]`` over ``(o,h,w,i,p,q)`` it
    gives ``e_o, e_h - e_p, e_w - e_q``: the uniform reuse directions.
    """
    mat = [[Fraction(x) for x in row] for row in rows if any(row)]
    pivots: list[int] = []
    r = 0
    for col in range(ncols):
        piv = next((k for k in range(r, len(mat)) if mat[k][col] != 0), None)
        if piv is None:
            continue
        mat[r], mat[piv] = mat[piv], mat[r]
        lead = mat[r][col]
        mat[r] = [x / lead for x in mat[r]]
        for k in range(len(mat)):
            if k != r and mat[k][col] != 0:
                f = mat[k][col]
                mat[k] = [a - f * b for a, b in zip(mat[k], mat[r], strict=True)]
        pivots.append(col)
        r += 1
        if r == len(mat):
            break
    basis: list[tuple[int, ...]] = []
    for free in (c for c in range(ncols) if c not in pivots):
        vec = [Fraction(0)] * ncols
        vec[free] = Fraction(1)
        for row_idx, pcol in enumerate(pivots):
            vec[pcol] = -mat[row_idx][free]
        denom = 1
        for frac in vec:
            denom = denom * frac.denominator // _gcd(denom, frac.denominator)
        ints = [int(frac * denom) for frac in vec]
        g = 0
        for n in ints:
            g = _gcd(g, abs(n))
        ints = [n // g for n in ints]
        if next(n for n in ints if n != 0) < 0:
            ints = [-n for n in ints]
        basis.append(tuple(ints))
    return sorted(basis, reverse=True)


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return abs(a)
