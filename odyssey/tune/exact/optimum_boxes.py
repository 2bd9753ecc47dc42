"""Boxes of tilings for the exact branch and bound (:mod:`.optimum`): the search space in
box coordinates, tightening by the divisibility constraints, splitting, enumeration, and
random legal tilings for the first incumbent.

A box gives every coordinate an arithmetic progression ``lo, lo+m, ..., hi``; a batch of
``n`` boxes is three ``(n, D)`` integer arrays (:class:`_Boxes`), and every operation here
is vectorized over the batch.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from odyssey.errors import TunerError
from odyssey.model.design_model import DesignModel
from odyssey.tune.divisibility import TileBreaks
from odyssey.tune.exact.optimum_bounds import ChildRange
from odyssey.tune.exact.optimum_rewrite import Coordinates


@dataclass(frozen=True, slots=True)
class _Boxes:
    """``n`` boxes over ``D`` parameters: parameter ``d`` of box ``b`` takes the values
    ``lo[b, d], lo[b, d] + mod[b, d], ..., hi[b, d]``."""

    lo: np.ndarray
    hi: np.ndarray
    mod: np.ndarray

    def __len__(self) -> int:
        return int(self.lo.shape[0])

    def take(self, idx: np.ndarray) -> _Boxes:
        return _Boxes(self.lo[idx], self.hi[idx], self.mod[idx])

    @property
    def counts(self) -> np.ndarray:
        return (self.hi - self.lo) // self.mod + 1

    @property
    def sizes(self) -> np.ndarray:
        """Points per box (float: products of many counts may exceed int64)."""
        return np.prod(self.counts.astype(np.float64), axis=1)

    @staticmethod
    def concat(parts: Sequence[_Boxes], dims: int) -> _Boxes:
        if not parts:
            z = np.zeros((0, dims), dtype=np.int64)
            return _Boxes(z, z, z)
        return _Boxes(np.concatenate([p.lo for p in parts]), np.concatenate([p.hi for p in parts]),
                      np.concatenate([p.mod for p in parts]))


@dataclass(frozen=True)
class _Space:
    """The search space in box coordinates (:class:`Coordinates`): ranges, and the pairs
    ``(c, p)`` where coordinate ``c`` divides parameter ``p`` at legal points."""

    coords: Coordinates
    lower: np.ndarray
    upper: np.ndarray
    pairs: tuple[tuple[int, int], ...]
    param_lower: np.ndarray  # the parameters' own ranges
    param_upper: np.ndarray

    @staticmethod
    def of(model: DesignModel) -> _Space:
        index = {n: i for i, n in enumerate(model.param_names)}
        for p in model.params:
            if p.divides is not None and p.divides not in index:
                raise TunerError(f"design {model.design_id}: parameter {p.name} divides "
                                 f"{p.divides}, which is not a tuning parameter")
            if p.lower > p.upper or p.lower < 1:
                raise TunerError(f"design {model.design_id}: parameter {p.name} has the range "
                                 f"[{p.lower}, {p.upper}]; the search needs 1 <= lower <= upper")
        coords = Coordinates.choose(model.params, [model.exprs.get("dsp_cut", model.exprs["dsp"])])
        lower = np.array([p.lower for p in model.params], dtype=np.int64)
        upper = np.array([p.upper for p in model.params], dtype=np.int64)
        c_lo, c_hi = lower.copy(), upper.copy()
        for d, is_ratio in enumerate(coords.ratio):
            if is_ratio:
                par = coords.parent[d]
                lower[d] = max(1, -(-int(c_lo[par]) // int(c_hi[d])))
                upper[d] = max(1, int(upper[par]) // int(c_lo[d]))
        pairs = tuple((d, p) for d, p in enumerate(coords.parent) if p >= 0)
        return _Space(coords, lower, upper, pairs, c_lo, c_hi)

    @property
    def names(self) -> tuple[str, ...]:
        return self.coords.params

    def children(self) -> list[ChildRange]:
        """The ratio coordinates ``q = T_p/T_c``, with the range of their child ``T_c``."""
        return [ChildRange(d, self.coords.parent[d], int(self.param_lower[d]), int(self.param_upper[d]))
                for d, is_ratio in enumerate(self.coords.ratio) if is_ratio]

    def divisor_table(self, p: int) -> np.ndarray | None:
        """Row ``v`` lists the divisors of ``v`` (zero-padded), for ``v`` up to ``p``'s upper
        bound; None when that bound is too large for a table."""
        top = int(self.upper[p])
        if top > _TABLE_LIMIT:
            return None
        return _divisor_matrix(top)

    def legal_params(self, pts: np.ndarray) -> np.ndarray:
        """Which parameter rows are legal tilings."""
        ok = ((pts >= self.param_lower) & (pts <= self.param_upper)).all(axis=1)
        for c, p in self.pairs:
            ok &= (pts[:, c] > 0) & (np.remainder(pts[:, p], np.maximum(pts[:, c], 1)) == 0)
        return np.asarray(ok)

    def legal(self, pts: np.ndarray) -> np.ndarray:
        """Which coordinate rows are legal tilings."""
        ok = ((pts >= self.lower) & (pts <= self.upper)).all(axis=1)
        for c, p in self.pairs:
            ok &= (pts[:, c] > 0) & (np.remainder(pts[:, p], np.maximum(pts[:, c], 1)) == 0)
            if self.coords.ratio[c]:
                t = pts[:, p] // np.maximum(pts[:, c], 1)
                ok &= (t >= self.param_lower[c]) & (t <= self.param_upper[c])
        return np.asarray(ok)


def _tighten(b: _Boxes, space: _Space) -> tuple[_Boxes, np.ndarray]:
    """Drop illegal points the divisibility constraints exclude; also says which boxes
    still hold a point. Only points with some child not dividing its parent are removed."""
    lo, hi, m = b.lo.copy(), b.hi.copy(), b.mod.copy()
    ok = np.ones(len(b), dtype=bool)
    for c, p in space.pairs:
        # a positive divisor is at most its multiple
        hi[:, c] = _down(lo[:, c], m[:, c], np.minimum(hi[:, c], hi[:, p]))
        lo[:, p] = _up(lo[:, p], m[:, p], lo[:, c])
        if space.coords.ratio[c]:  # T_c = T_p / q within its own range
            lc, uc = space.param_lower[c], space.param_upper[c]
            lo[:, c] = _up(lo[:, c], m[:, c], -np.floor_divide(-lo[:, p], uc))
            hi[:, c] = _down(lo[:, c], m[:, c], np.minimum(hi[:, c], hi[:, p] // lc))
            lo[:, p] = _up(lo[:, p], m[:, p], _times(lo[:, c], lc))
            hi[:, p] = _down(lo[:, p], m[:, p], np.minimum(hi[:, p], _times(hi[:, c], uc)))
        ok &= (lo[:, c] <= hi[:, c]) & (lo[:, p] <= hi[:, p])
        _few_parents(lo, hi, m, ok, space, c, p)
        # every common divisor g of the child's values divides the parent
        single_c = lo[:, c] == hi[:, c]
        g = np.where(single_c, lo[:, c], np.gcd(m[:, c], np.mod(lo[:, c], m[:, c])))
        mp = np.where(lo[:, p] == hi[:, p], 0, m[:, p])
        ok &= np.mod(lo[:, p], np.maximum(np.gcd(mp, g), 1)) == 0
        # a fixed child v: the parent takes the multiples of v in its progression only, a
        # progression again (step lcm(m, v); gcd(m, v) divides its start, checked above)
        v = np.maximum(lo[:, c], 1)
        fix = single_c & ok & (lo[:, p] < hi[:, p]) & (np.mod(m[:, p], v) != 0)
        if fix.any():
            mp, vf = m[fix, p], v[fix]
            first = _first_multiple_in(lo[fix, p], mp, vf)
            step = mp // np.gcd(mp, vf) * vf
            last = first + np.floor_divide(hi[fix, p] - first, step) * step
            lo[fix, p], hi[fix, p], m[fix, p] = first, last, step
            ok[fix] &= first <= last
    ok &= (lo <= hi).all(axis=1)
    return _Boxes(lo, hi, m), ok


_FEW = 4  # a parent with at most this many values: its children are its divisors


def _few_parents(lo: np.ndarray, hi: np.ndarray, m: np.ndarray, ok: np.ndarray, space: _Space,
                 c: int, p: int) -> None:
    """In place: where parameter ``p`` takes at most ``_FEW`` values, shrink ``c`` to the
    divisors of those values (and ``p`` to the values that have one), or mark the box empty."""
    table = space.divisor_table(p)
    if table is None:
        return
    count = (hi[:, p] - lo[:, p]) // m[:, p] + 1
    idx = np.nonzero(ok & (count <= _FEW))[0]
    if len(idx) == 0:
        return
    lc, hc, mc = lo[idx, c, None], hi[idx, c, None], m[idx, c, None]
    big = np.iinfo(np.int64).max
    c_lo, c_hi = np.full(len(idx), big), np.full(len(idx), -1)
    p_lo, p_hi = np.full(len(idx), big), np.full(len(idx), -1)
    steps = bool((mc != 1).any())
    for j in range(_FEW):
        rows = np.nonzero(count[idx] > j)[0]  # the boxes whose parent has a (j+1)-th value
        if len(rows) == 0:
            break
        par = lo[idx[rows], p] + j * m[idx[rows], p]
        d = table[par]
        good = (d >= lc[rows]) & (d <= hc[rows])
        if steps:
            good &= np.remainder(d - lc[rows], mc[rows]) == 0
        if space.coords.ratio[c]:
            t = par[:, None] // np.maximum(d, 1)
            good &= (t >= space.param_lower[c]) & (t <= space.param_upper[c])
        c_lo[rows] = np.minimum(c_lo[rows], np.where(good, d, big).min(axis=1))
        c_hi[rows] = np.maximum(c_hi[rows], np.where(good, d, -1).max(axis=1))
        hit = good.any(axis=1)
        p_lo[rows] = np.where(hit, np.minimum(p_lo[rows], par), p_lo[rows])
        p_hi[rows] = np.where(hit, np.maximum(p_hi[rows], par), p_hi[rows])
    found = c_hi >= 0
    ok[idx] &= found
    keep = idx[found]
    lo[keep, c], hi[keep, c] = c_lo[found], c_hi[found]
    lo[keep, p], hi[keep, p] = p_lo[found], p_hi[found]


def _first_multiple_in(lo: np.ndarray, m: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The least ``x = lo + t*m`` (``t >= 0``) that ``v`` divides, where ``gcd(m, v)``
    divides ``lo``: ``t = (-lo/g) * (m/g)**-1 (mod v/g)``, ``g = gcd(m, v)``, the inverse by
    the extended Euclidean algorithm (vectorized)."""
    g = np.gcd(m, v)
    n = v // g
    a = np.mod(m // g, n)  # invertible mod n: gcd(m/g, v/g) = 1
    # extended Euclid on (a, n): s*a = r (mod n), down to r = gcd = 1
    r0, r1, s0, s1 = n.copy(), a.copy(), np.zeros_like(n), np.ones_like(n)
    while (r1 > 0).any():
        q = np.where(r1 > 0, r0 // np.maximum(r1, 1), 0)
        r0, r1 = np.where(r1 > 0, r1, r0), np.where(r1 > 0, r0 - q * r1, r1)
        s0, s1 = np.where(q > 0, s1, s0), np.where(q > 0, s0 - q * s1, s1)
    inv = np.mod(s0, n)  # n = 1: 0
    t = np.mod(np.mod(-(lo // g), n) * inv, n)
    return lo + t * m


#: above every parameter's range (sizes are at most 2**62): where a product of bounds
#: saturates, so that it never wraps around in int64
_SATURATED = 2**62 + 1


def _times(a: np.ndarray, b: np.integer | int) -> np.ndarray:
    """``a * b`` for non-negative bounds, saturated at ``_SATURATED``."""
    big = a.astype(np.float64) * float(b) >= _SATURATED
    return np.where(big, _SATURATED, a * np.where(big, 0, b))


def _up(lo: np.ndarray, m: np.ndarray, floor: np.ndarray) -> np.ndarray:
    """The first member of the progression ``lo (mod m)`` at or above ``floor``."""
    return np.where(floor > lo, lo - np.floor_divide(lo - floor, m) * m, lo)


def _down(lo: np.ndarray, m: np.ndarray, ceiling: np.ndarray) -> np.ndarray:
    """The last member of the progression starting at ``lo`` at or below ``ceiling``."""
    return lo + np.floor_divide(ceiling - lo, m) * m


def _split_congruence(b: _Boxes, dim: np.ndarray, factor: np.ndarray) -> list[_Boxes]:
    """Split parameter ``dim`` of every box into ``factor`` residue classes."""
    out = []
    for p in np.unique(factor):
        sel = np.nonzero(factor == p)[0]
        rows = np.arange(len(sel))
        d = dim[sel]
        lo0, hi0, m0 = b.lo[sel, d], b.hi[sel, d], b.mod[sel, d]
        step = m0 * p
        for j in range(int(p)):
            base = lo0 + j * m0
            keep = base <= hi0
            lo, hi, m = b.lo[sel].copy(), b.hi[sel].copy(), b.mod[sel].copy()
            lo[rows, d] = base
            hi[rows, d] = base + np.floor_divide(hi0 - base, step) * step
            m[rows, d] = step
            out.append(_Boxes(lo[keep], hi[keep], m[keep]))
    return out


def _split_range(b: _Boxes, d: np.ndarray, breakpoints: Mapping[int, TileBreaks]) -> tuple[_Boxes, _Boxes]:
    """Halve box ``k`` along parameter ``d[k]`` (which must have two values or more), at the
    tile-count boundary nearest to the geometric mean of its range, else at that mean."""
    rows = np.arange(len(b))
    lo, hi, m = b.lo[rows, d], b.hi[rows, d], b.mod[rows, d]
    geo = np.sqrt(np.maximum(lo, 1).astype(np.float64) * np.maximum(hi, 1))
    cut = np.clip(np.rint(geo).astype(np.int64), lo + 1, np.maximum(hi, lo + 1))
    for dim, bps in breakpoints.items():
        sel = np.nonzero(d == dim)[0]
        if len(sel) == 0 or len(bps) == 0:
            continue
        best = cut[sel].copy()
        dist = np.full(len(sel), np.inf)
        for cand in bps.around(geo[sel]):  # the nearest boundary below, then at or above
            inside = (cand > lo[sel]) & (cand <= hi[sel])
            gap = np.abs(np.log(np.maximum(cand, 1)) - np.log(geo[sel]))
            better = inside & (gap < dist)
            best = np.where(better, cand, best)
            dist = np.where(better, gap, dist)
        cut[sel] = best
    left_hi = lo + np.floor_divide(cut - 1 - lo, m) * m
    left, right = (b.lo.copy(), b.hi.copy(), b.mod.copy()), (b.lo.copy(), b.hi.copy(), b.mod.copy())
    left[1][rows, d] = left_hi
    right[0][rows, d] = left_hi + m
    return _Boxes(*left), _Boxes(*right)


def _enumerate(b: _Boxes, space: _Space) -> np.ndarray:
    """Every legal point of the boxes, as rows."""
    counts = b.counts
    sizes = np.prod(counts, axis=1)
    total = int(sizes.sum())
    owner = np.repeat(np.arange(len(b)), sizes)
    local = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    pts = np.empty((total, counts.shape[1]), dtype=np.int64)
    for d in range(counts.shape[1]):
        c = counts[owner, d]
        pts[:, d] = b.lo[owner, d] + np.remainder(local, c) * b.mod[owner, d]
        local //= c
    return pts[space.legal(pts)]


# ------------------------------------------------------------------- seeding

_TABLE_LIMIT = 1 << 13


@functools.cache
def _divisor_matrix(top: int) -> np.ndarray:
    divs = _divisor_table(top)
    width = max(len(d) for d in divs)
    out = np.zeros((top + 1, width), dtype=np.int64)
    for v, d in enumerate(divs):
        out[v, :len(d)] = d
    return out



def _divisor_table(n: int) -> list[np.ndarray]:
    divs: list[list[int]] = [[] for _ in range(n + 1)]
    for d in range(1, n + 1):
        for k in range(d, n + 1, d):
            divs[k].append(d)
    return [np.array(x, dtype=np.int64) for x in divs]


def _random_points(space: _Space, divs: list[np.ndarray], rng: np.random.Generator, n: int) -> np.ndarray:
    """Random legal tilings (parameter rows): free parameters log-uniform, children
    random divisors."""
    dims = len(space.names)
    pts = np.zeros((n, dims), dtype=np.int64)
    parent = {c: p for c, p in space.pairs}
    order = sorted(range(dims), key=lambda d: _depth(d, parent))
    for d in order:
        lo, hi = int(space.param_lower[d]), int(space.param_upper[d])
        if d not in parent:
            u = rng.uniform(math.log(max(lo, 1)), math.log(hi + 1), n)
            pts[:, d] = np.clip(np.floor(np.exp(u)).astype(np.int64), lo, hi)
            continue
        vals = pts[:, parent[d]]
        choice = np.empty(n, dtype=np.int64)
        for k, v in enumerate(vals):
            cand = divs[int(v)] if 0 < v < len(divs) else np.array([1])
            cand = cand[(cand >= lo) & (cand <= hi)]
            choice[k] = rng.choice(cand) if len(cand) else lo
        pts[:, d] = choice
    return pts[space.legal_params(pts)]


def _depth(d: int, parent: Mapping[int, int]) -> int:
    k = 0
    while d in parent:
        d, k = parent[d], k + 1
    return k
