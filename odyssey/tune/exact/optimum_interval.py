"""Interval and congruence kernels of :mod:`.optimum_bounds`, on numpy arrays of boxes.

Each function takes and returns interval ends (``lo``, ``hi``: arrays over a batch of boxes,
or scalars) or congruences (``x = r (mod m)``, ``m = 0``: the exact value ``r``); the rules
are stated in :mod:`.optimum_bounds`. Every result is per box: no function takes a decision
for a whole batch that changes a box's result.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

Array = np.ndarray
_CONG_LIMIT = 2**31  # congruence moduli and residues above this are dropped (no information)


def _padded(t: tuple[Any, Any], n: int, ceil: bool) -> tuple[Any, Any]:
    """Bounds of ``ceil(n/T)*T`` (or ``floor(n/T)*T``) for ``T`` in ``[a, b]``, ``a >= 1``:
    ``n <= ceil(n/T)*T <= n + T - 1`` and the factor-wise bounds."""
    a, b = t
    ok = np.asarray(a) >= 1
    a1, b1 = np.maximum(a, 1.0), np.maximum(b, 1.0)
    # n / T rounded, then floored or ceiled, is exact: n and T are integers below 2**53
    if ceil:
        lo = np.maximum(n, a1 * np.ceil(n / b1))
        hi = np.minimum(n + b1 - 1, b1 * np.ceil(n / a1))
    else:
        lo = np.maximum(np.maximum(n - b1 + 1, a1 * np.floor(n / b1)), 0)
        hi = np.minimum(n, b1 * np.floor(n / a1))
    return np.where(ok, lo, -np.inf), np.where(ok, hi, np.inf)


def _words(y: tuple[Any, Any], lanes: tuple[Any, Any], cands: tuple[int, ...],
           cong: tuple[Any, Any]) -> tuple[Any, Any]:
    """Bounds of ``y / L(y)``, ``L(y)`` the largest of ``cands`` dividing the integer ``y``
    (else 1), given ``L(y)`` in ``lanes`` and ``y = r (mod m)`` (``cong``; ``m = 0``: ``y =
    r``). Besides the quotient of the intervals: a ``y`` with ``L(y) = c`` is a multiple of
    ``c`` in ``y``'s class, so at least the first such ``y_c >= lo``, and ``y / L(y) >= y_c /
    c``; the bound is the least of these over the ``c`` with ``lanes`` (``y >= 1``)."""
    (yl, yh), (ll, lh) = y, lanes
    m, r = cong
    pos = np.asarray(ll) >= 1
    il = np.where(pos, 1.0 / np.where(pos, lh, 1.0), -np.inf)
    ih = np.where(pos, 1.0 / np.where(pos, ll, 1.0), np.inf)
    rl, rh = _mul(yl, yh, il, ih)
    rl, rh = _clean(rl, rh, True)
    ok = (np.asarray(yl) >= 1) & np.isfinite(yl) & (np.asarray(yl) < 2.0**50)
    y1 = np.where(ok, yl, 1.0).astype(np.int64)
    step = np.asarray(m, dtype=np.int64)
    # the first member of the class at or above lo (the value itself when m = 0)
    first = np.where(step == 0, r, y1 + np.mod(r - y1, np.maximum(step, 1)))
    ok &= first >= y1
    best = np.full(np.shape(ok), np.inf)
    for c in (1, *cands):
        if not (np.any(ll <= c) and np.any(c <= lh)):  # no box takes c lanes
            continue
        y_c = np.where(ok & (ll <= c) & (c <= lh), _first_multiple(first, step, c), np.inf)
        best = np.minimum(best, np.where(y_c <= yh, y_c / c, np.inf))
    return np.where(ok & np.isfinite(best), np.maximum(rl, np.ceil(best)), rl), rh


def _first_multiple(first: Array, step: Array, c: int) -> Array:
    """The least ``y = first + t*step`` (``first >= 0``, ``t >= 0``; ``step = 0``: ``y =
    first``) that ``c`` divides, as float (infinite when there is none)."""
    if c == 1:
        return first.astype(np.float64)
    if c <= _STEP_TABLE_LIMIT:  # t depends on the residues of first and step mod c only
        if c & (c - 1) == 0:  # x mod 2**a = x & (2**a - 1), also for x < 0
            at = (first & (c - 1)) * c + (step & (c - 1))
        else:
            at = np.mod(first, c) * c + np.mod(step, c)
        t = _steps_to_multiple(c)[at]
        return np.where(t >= 0, first + t * step, np.inf)
    return _first_multiple_search(first, step, c)


_STEP_TABLE_LIMIT = 64


@functools.cache
def _steps_to_multiple(c: int) -> Array:
    """Flat table: entry ``f*c + s`` is the least ``t`` in ``[0, c)`` with ``c | f + t*s``,
    or -1 (``f``, ``s`` residues mod ``c``)."""
    f, s = np.divmod(np.arange(c * c, dtype=np.int64), c)
    out = np.full(c * c, -1, dtype=np.int64)
    for t in range(c - 1, -1, -1):
        out = np.where(np.mod(f + t * s, c) == 0, t, out)
    return out


def _first_multiple_search(first: Array, step: Array, c: int) -> Array:
    """:func:`_first_multiple` for a large ``c``, without a table."""
    if c & (c - 1):  # not a power of two: try t < c
        out = np.full(first.shape, np.inf)
        for t in range(c - 1, -1, -1):
            y = first + t * step
            out = np.where(np.mod(y, c) == 0, y, out)
        return np.where(step == 0, np.where(np.mod(first, c) == 0, first, np.inf), out)
    # c = 2**a: with g = gcd(step, c), c | first + t*step iff g | first and t = (-first/g) *
    # (step/g)**-1 (mod c/g), step/g odd when g < c (its inverse by Newton's iteration)
    g = np.gcd(step, c)
    cg = c // np.maximum(g, 1)
    odd = np.mod(step // np.maximum(g, 1), cg)
    inv = odd
    for _ in range(5):
        inv = np.mod(inv * (2 - odd * inv), cg)
    t = np.mod(np.mod(-(first // np.maximum(g, 1)), cg) * inv, cg)
    y = np.where(np.mod(first, np.maximum(g, 1)) == 0, first + t * step, -1)
    y = np.where(step == 0, np.where(np.mod(first, c) == 0, first, -1), y)
    return np.where(y >= 0, y, np.inf).astype(np.float64)


def _cong_mul(a: tuple[Any, Any], b: tuple[Any, Any]) -> tuple[Any, Any]:
    (m1, r1), (m2, r2) = a, b
    return _cong_norm(np.gcd(np.gcd(m1 * m2, m1 * r2), m2 * r1), r1 * r2)


def _v2(x: Any) -> Any:
    """2-adic valuation (64 for 0)."""
    x = np.abs(np.asarray(x, dtype=np.int64))
    low = x & -x
    return np.where(x == 0, 64, np.log2(np.maximum(low, 1)).astype(np.int64))


def _cong_div(num: tuple[Any, Any], den: tuple[Any, Any], den_top: Any = np.inf) -> tuple[Any, Any]:
    """Congruence of ``y = a / b`` for integers with ``b | a``: exact division by a known
    ``b``, else the 2-adic valuation ``v2(y) = v2(a) - v2(b)`` when ``v2(b)`` is known, else
    ``v2(y) >= v2(a) - log2(den_top)`` from ``0 < |b| <= den_top`` (``T_i1 = 0 mod 1024``
    over ``q <= 1024`` is even: ``T_i1/q * T_j1`` is a multiple of 16 when ``T_j1`` is)."""
    (m, r), (dm, dr) = num, den
    d = np.where((dm == 0) & (dr != 0), dr, 1)
    exact = (dm == 0) & (dr != 0) & (np.mod(m, d) == 0) & (np.mod(r, d) == 0)
    vm, vr, vdm, vdr = _v2(m), _v2(r), _v2(dm), _v2(dr)
    s = vdr
    known_d = vdr < vdm  # every b has v2(b) = s
    t = np.minimum(vm, vr) - s  # v2(y) >= t
    known_a = vr < vm
    t_cap = np.clip(t, 0, 30)
    pow_t = np.left_shift(np.int64(1), t_cap)
    m_out = np.where(known_d & known_a & (t >= 0), 2 * pow_t, np.where(known_d & (t >= 1), pow_t, 1))
    # v2(b) <= floor(log2(den_top)), with a margin for the rounding of log2
    finite = np.isfinite(den_top) & (np.asarray(den_top) >= 1)
    s_top = np.floor(np.log2(np.where(finite, den_top, 1.0)) + 1e-9).astype(np.int64)
    t_top = np.minimum(vm, vr) - s_top
    pow_top = np.left_shift(np.int64(1), np.clip(t_top, 0, 30))
    m_out = np.where(~known_d & finite & (t_top >= 1), pow_top, m_out)
    r_out = np.where(known_d & known_a & (t >= 0), pow_t, 0)
    m_out = np.where(exact, m // d, m_out)
    r_out = np.where(exact, r // d, r_out)
    return _cong_norm(m_out, r_out)


def _cong_norm(m: Any, r: Any) -> tuple[Any, Any]:
    m = np.abs(m)
    r = np.where(m > 0, np.mod(r, np.maximum(m, 1)), r)
    big = (m > _CONG_LIMIT) | (np.abs(r) > _CONG_LIMIT)
    return np.where(big, 1, m), np.where(big, 0, r)


#: outward rounding: ``x`` moves by ``|x| * 2**-51`` (at least one ulp; a correctly rounded
#: operation errs by at most half of one) plus the least subnormal (for results at 0)
_OUT = 2.0**-51
_TINY = 5e-324


def _clean(lo: Any, hi: Any, integer: bool) -> tuple[Any, Any]:
    """Unknowns (NaN) widen to infinity; results are rounded outward (by more than one ulp,
    see ``_OUT``), and an integral node's ends then to the integers inside (its values at
    legal points are integers, so this is exact on integer inputs below 2**50 and sound on
    rounded ones). ``fmax(x, -inf)`` is ``x``, or ``-inf`` for NaN (also ``inf - inf``: an
    infinite end is never narrowed)."""
    lo = np.fmax(lo - (np.abs(lo) * _OUT + _TINY), -np.inf)
    hi = np.fmin(hi + (np.abs(hi) * _OUT + _TINY), np.inf)
    if integer:
        return np.ceil(lo), np.floor(hi)
    return lo, hi


def _unknown(lo: Any, hi: Any) -> tuple[Any, Any]:
    """NaN ends (unknowns) widened to infinity."""
    return np.fmax(lo, -np.inf), np.fmin(hi, np.inf)


def _nonneg(x: Any) -> bool:
    """Whether every element of ``x`` is at least 0 (not NaN)."""
    return bool(x >= 0) if isinstance(x, float) else bool(x.min() >= 0)


def _product(args: Sequence[tuple[Any, Any]], signs: Sequence[bool] | None = None) -> tuple[Any, Any]:
    """The interval product of ``args`` (see :func:`_mul`), checking each factor's sign once
    (``signs``: whether each factor's lower ends are at least 0, when known). Along a run of
    non-negative factors the ends are multiplied as they are and a NaN (``0 * inf``) is read
    as 0 at the end of the run: 0 and NaN both absorb the later factors, so this is
    :func:`_mul` factor by factor."""
    rl, rh = args[0]
    nonneg: bool | None = None if signs is None else signs[0]
    raw = False  # rl, rh may hold a NaN that stands for 0
    for j, (al, ah) in enumerate(args[1:], 1):
        if nonneg is None:
            nonneg = _nonneg(rl)
        if nonneg and (_nonneg(al) if signs is None else signs[j]):  # stays non-negative
            rl, rh, raw = rl * al, rh * ah, True
        else:
            if raw:
                rl, rh, raw = _nan_zero(rl), _nan_zero(rh), False
            rl, rh = _mul(rl, rh, al, ah, False)
            nonneg = None
    if raw:
        rl, rh = _nan_zero(rl), _nan_zero(rh)
    return rl, rh


def _nan_zero(x: Any) -> Any:
    return np.where(np.isnan(x), 0.0, x)


def _mul(al: Any, ah: Any, bl: Any, bh: Any, nonneg: bool | None = None) -> tuple[Any, Any]:
    """``[al, ah] * [bl, bh]``; ``nonneg``: whether ``al >= 0`` and ``bl >= 0`` (checked
    when None)."""
    if nonneg is None:
        nonneg = _nonneg(al) and _nonneg(bl)
    if nonneg:
        lo, hi = al * bl, ah * bh
        # 0 * inf: the factor is exactly 0 at every point of a [0, 0] interval
        return np.where(np.isnan(lo), 0.0, lo), np.where(np.isnan(hi), 0.0, hi)
    c = [al * bl, al * bh, ah * bl, ah * bh]
    c = [np.where(np.isnan(x), 0.0, x) for x in c]
    lo = np.minimum(np.minimum(c[0], c[1]), np.minimum(c[2], c[3]))
    hi = np.maximum(np.maximum(c[0], c[1]), np.maximum(c[2], c[3]))
    # where both are non-negative, the ends as above: a box's bounds do not depend on the
    # other boxes of its batch (they differ on inverted intervals, of boxes without legal
    # points)
    pos = (al >= 0) & (bl >= 0)
    return np.where(pos, c[0], lo), np.where(pos, c[3], hi)


def _nonzero_int(bl: Any, bh: Any) -> tuple[Any, Any]:
    """An integer denominator is never 0 at a model point: [0, h] -> [1, h], [l, 0] -> [l, -1]."""
    return np.where(bl == 0, 1.0, bl), np.where(bh == 0, -1.0, bh)


def _reciprocal(bl: Any, bh: Any, integer: bool) -> tuple[Any, Any]:
    if integer:
        bl, bh = _nonzero_int(bl, bh)
    straddle = (bl < 0) & (bh > 0)
    rl = np.where(straddle, -np.inf, 1.0 / bh)  # 1/0 = inf: a [0, h] real denominator
    rh = np.where(straddle, np.inf, 1.0 / bl)
    rl = np.where(np.asarray(bh) == 0, -np.inf, rl)
    return np.nextafter(rl, -np.inf), np.nextafter(rh, np.inf)


def _small(x: Any) -> bool:
    """Whether every element of ``x`` is below 2**52 in magnitude (so finite): an integer
    ``x`` then divides exactly as ``floor(x / y)`` by an integer ``y`` (``x/y`` rounds to an
    integer only when it is one, as ``|x| < 2**53``)."""
    return bool(np.max(np.abs(x)) < 2.0**52)


def _floordiv(x: Any, y: Any) -> Any:
    finite = np.isfinite(x) & np.isfinite(y)
    return np.where(finite, np.floor_divide(x, y), np.floor(x / y))


def _pow(a: tuple[Any, Any], k: int, integer: bool) -> tuple[Any, Any]:
    al, ah = a
    if k < 0:
        il, ih = _reciprocal(al, ah, False)
        return _pow((il, ih), -k, False)
    if k == 0:
        return 1.0, 1.0
    pl, ph = al**k, ah**k
    if k % 2:
        return _clean(pl, ph, integer)
    rl = np.where(np.asarray(al) >= 0, pl, np.where(np.asarray(ah) <= 0, ph, 0.0))
    rh = np.where(np.asarray(al) >= 0, ph, np.where(np.asarray(ah) <= 0, pl, np.maximum(pl, ph)))
    return _clean(rl, rh, integer)
