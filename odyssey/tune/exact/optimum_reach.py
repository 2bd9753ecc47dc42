"""The largest value a capped monomial reaches at the legal tilings of a box (:mod:`.optimum`).

The DSP model is ``coef * P`` with ``P = prod(x_d ** k_d)`` a monomial of the coordinates
(``#PE * SIMD``, :mod:`.optimum_budget`), and the latency's ``1/P`` is bounded with ``P``
at most ``cap / coef``. But the PE counts and SIMD factors of a box's legal tilings divide
their tiles: with ``T_o1 = 512`` and ``T_i1 = 256`` the ratio ``q_o = T_o1/T_o2`` and
``T_i2`` are powers of two, so ``q_o * 2 * T_i2 <= 1720`` reaches 1024 at most, not 1720,
and a latency bound taken at 1720 is 1.7x too low on the compute term.

:func:`reach` bounds ``P`` from above over the legal tilings of each box within the budget,
by the largest ``P <= cap / coef`` over a *superset* of each coordinate's legal values:

* a coordinate whose parent takes at most ``_FEW`` values in the box: the divisors of
  those values in the coordinate's progression (for a ratio ``q = T_p/T_c``, those with
  ``T_p/q`` in ``T_c``'s range);
* else, when its progression has at most ``_LIST`` members: those members;
* else the progression itself, not listed.

A box takes the largest product over the combinations of its lists, the *last* coordinate
(the one not listed, else the one with the longest list) at its largest value (listed, or
member of its progression) that the budget leaves after the others; a box with two
coordinates or more not listed, or more than ``_COMBOS`` combinations of the others, keeps
the cap.
Every legal tiling within the budget has its ``P`` among these candidates, so the result
is sound; 0 says no candidate fits, so no legal tiling of the box is within the budget.
Each box's result depends on that box alone, not on the others of its batch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from odyssey.tune.exact.optimum_boxes import _Boxes, _Space
from odyssey.tune.exact.optimum_budget import MonomialBudget

_FEW = 8  # a parent with at most this many values: its child's values are their divisors
_LIST = 64  # a progression of at most this many members is listed
_COMBOS = 512  # per box, at most this many combinations of the listed values (more gain little)
_SLACK = 1e-9  # relative, on the cap: float rounding never drops a product within budget
_CHUNK = 2048  # boxes per call of :func:`reach` from :class:`Reach`


def reach(budget: MonomialBudget, boxes: _Boxes, space: _Space) -> np.ndarray:
    """Per box, an upper bound on ``P = prod(x_d ** k_d)`` over its legal tilings with
    ``coef * P`` within the cap (float; the cap over ``coef`` where not refined, 0 where no
    legal tiling fits). ``boxes`` are tightened (:func:`.optimum_boxes._tighten`) or not:
    either way the result holds for their legal points."""
    n = len(boxes)
    top = budget.cap / budget.coef * (1 + _SLACK)
    out = np.full(n, top)
    if n == 0:
        return out
    dims = [d for d, _ in budget.powers]
    power = dict(budget.powers)
    lists = {d: _values(boxes, space, d) for d in dims}  # (n, W) values, 0 = none; listed rows
    # values per coordinate and box, the whole progression where not listed
    sizes = np.stack([np.where(lists[d][1], (lists[d][0] > 0).sum(axis=1),
                               np.maximum((boxes.hi[:, d] - boxes.lo[:, d]) // boxes.mod[:, d] + 1, 1))
                      for d in dims], axis=1).astype(np.float64)
    unlisted = np.stack([~lists[d][1] for d in dims], axis=1)
    # the last coordinate of each box: its one coordinate not listed, else its longest list
    # (the first of the longest); the others' combinations are enumerated
    last_at = np.argmax(np.where(unlisted, np.inf, sizes), axis=1)
    rest = sizes.copy()
    rest[np.arange(n), last_at] = 1.0
    ok = (unlisted.sum(axis=1) <= 1) & (np.prod(rest, axis=1) <= _COMBOS)
    for at, last in enumerate(dims):
        rows = np.nonzero(ok & (last_at == at))[0]
        if len(rows) == 0:
            continue
        owner = rows
        partial = np.ones(len(rows))
        for d in dims:
            if d == last:
                continue
            vals = lists[d][0][owner]  # (len, W)
            prod = partial[:, None] * vals.astype(np.float64) ** power[d]
            keep = (vals > 0) & (prod <= top)
            owner = np.broadcast_to(owner[:, None], vals.shape)[keep]
            partial = prod[keep]
        k = power[last]
        # the last coordinate's x ** k is at most top / partial
        limit = np.minimum(np.floor((top / partial) ** (1.0 / k) * (1 + _SLACK)), _BIG - 1).astype(np.int64)
        vals, has_list = lists[last]
        lo, hi, m = boxes.lo[owner, last], boxes.hi[owner, last], boxes.mod[owner, last]
        # unlisted: the last member of the progression at or below the limit
        at_most = np.minimum(limit, hi)
        best = np.where(at_most >= lo, lo + np.floor_divide(at_most - lo, m) * m, 0)
        srt = np.sort(vals[rows], axis=1)
        keys = (rows[:, None] * _BIG + srt)[srt > 0]  # ascending: rows, then values
        if len(keys):  # listed: the largest listed value at or below the limit
            i = np.searchsorted(keys, owner * _BIG + limit, side="right") - 1
            hit = keys[np.maximum(i, 0)]
            found = (i >= 0) & (hit // _BIG == owner)
            best = np.where(has_list[owner], np.where(found, hit % _BIG, 0), best)
        cand = np.where(best > 0, partial * best.astype(np.float64) ** k, 0.0)
        res = np.zeros(n)
        np.maximum.at(res, owner, cand)
        out[rows] = res[rows]
    return out


_BIG = 1 << 31  # key stride per box (coordinate values stay below it)


def _values(boxes: _Boxes, space: _Space, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Coordinate ``d``'s candidate values per box, as an ``(n, W)`` matrix (0: no value;
    distinct values per row), and which rows are listed (a superset of the legal values of
    ``d`` in the box); unlisted rows take the whole progression."""
    n = len(boxes)
    lo, hi, m = boxes.lo[:, d], boxes.hi[:, d], boxes.mod[:, d]
    count = np.where(hi >= lo, (hi - lo) // m + 1, 0)
    vals = np.zeros((n, 0), dtype=np.int64)
    listed = np.zeros(n, dtype=bool)
    parent = space.coords.parent[d]
    table = space.divisor_table(parent) if parent >= 0 else None
    if table is not None:
        p_lo, p_hi, p_m = boxes.lo[:, parent], boxes.hi[:, parent], boxes.mod[:, parent]
        p_count = np.where(p_hi >= p_lo, (p_hi - p_lo) // p_m + 1, 0)
        few = p_count <= _FEW
        if few.any():
            rows = np.nonzero(few)[0]
            parts = []
            r_lo, r_hi, r_m = lo[rows, None], hi[rows, None], m[rows, None].astype(np.float64)
            steps = bool((r_m != 1).any())
            for j in range(int(p_count[rows].max(initial=0))):
                live = j < p_count[rows]
                par = np.where(live, p_lo[rows] + j * p_m[rows], 0)
                divs = table[par]  # (r, width), zero-padded (row 0: none)
                good = (divs >= r_lo) & (divs <= r_hi)
                if steps:  # exact in float64: integers far below 2**52
                    off = (divs - r_lo).astype(np.float64)
                    good &= np.floor(off / r_m) * r_m == off
                if space.coords.ratio[d]:  # the child T_p/q within its range (q divides T_p)
                    child = par[:, None].astype(np.float64) / np.maximum(divs, 1)
                    good &= (child >= space.param_lower[d]) & (child <= space.param_upper[d])
                parts.append(np.where(good, divs, 0))
            if parts:
                cand = _compact(np.concatenate(parts, axis=1))
                vals = np.zeros((n, cand.shape[1]), dtype=np.int64)
                vals[rows] = cand
                listed[rows] = True
    short = ~listed & (count <= _LIST)
    if short.any():
        width = int(count[short].max(initial=0))
        at = np.arange(width)
        prog = np.where(at[None, :] < count[:, None], lo[:, None] + at[None, :] * m[:, None], 0)
        if width > vals.shape[1]:
            vals = np.concatenate([vals, np.zeros((n, width - vals.shape[1]), dtype=np.int64)], axis=1)
        vals[short, :width] = prog[short]
        listed |= short
    return vals, listed


def _compact(a: np.ndarray) -> np.ndarray:
    """Rows of positive values and zeros, the columns trimmed to the most values in a row
    (the order within a row is not kept)."""
    width = int((a > 0).sum(axis=1).max(initial=0))
    if width == a.shape[1]:
        return a
    return -np.partition(-a, width - 1, axis=1)[:, :width] if width else a[:, :0]


class Reach:
    """:func:`reach` of one cap, memoised on what it reads of a box: the progressions of the
    cap's coordinates and of their parents (strong branching bounds many boxes that differ
    only in other coordinates, and the same parts again and again)."""

    _LIMIT = 1 << 18  # entries kept (about 300 bytes each); the memo starts afresh beyond

    def __init__(self, budget: MonomialBudget, space: _Space) -> None:
        self.budget, self.space = budget, space
        own = [d for d, _ in budget.powers]
        self.dims = np.array(sorted(set(own) | {space.coords.parent[d] for d in own if space.coords.parent[d] >= 0}))
        self.memo: dict[Any, float] = {}

    def __call__(self, boxes: _Boxes) -> np.ndarray:
        d = self.dims
        key = np.ascontiguousarray(np.concatenate([boxes.lo[:, d], boxes.hi[:, d], boxes.mod[:, d]], axis=1),
                                   dtype=np.int64)
        keys: list[Any] = key.view(np.dtype((np.void, 8 * key.shape[1]))).ravel().tolist()  # bytes
        memo = self.memo
        out = np.array([memo.get(k, -1.0) for k in keys], dtype=np.float64)
        miss = np.nonzero(out < 0)[0]
        if len(miss):
            first: dict[Any, int] = {}
            for i in miss.tolist():
                first.setdefault(keys[i], i)
            todo = np.fromiter(first.values(), dtype=np.int64, count=len(first))
            # in chunks: a box enumerates up to _COMBOS combinations, so one call's arrays grow
            # with its boxes times that (MM 1024^3 `ij-ik.j`: +209 MB in one call of 20,000
            # boxes); each box's result depends on that box alone
            got = np.concatenate([reach(self.budget, boxes.take(todo[s:s + _CHUNK]), self.space)
                                  for s in range(0, len(todo), _CHUNK)])
            if len(memo) + len(todo) > self._LIMIT:
                memo.clear()
            memo.update(zip((keys[i] for i in todo.tolist()), got.tolist(), strict=True))
            out[miss] = [memo[keys[i]] for i in miss.tolist()]
        return out
