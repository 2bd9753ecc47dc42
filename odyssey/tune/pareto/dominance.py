"""Pareto dominance on objective matrices (minimisation), vectorized with numpy.

A row ``a`` of an ``(n, M)`` matrix *dominates* a row ``b`` when ``a_j <= b_j`` for every
objective ``j`` and ``a_j < b_j`` for at least one (the thesis's Definition 1, eq. (3.1)).
Identical rows do not dominate each other; :func:`nondominated` keeps the first of them
only, so a front is a set of distinct objective vectors.
"""

from __future__ import annotations

import numpy as np

from odyssey.errors import TunerError

#: rows compared at once by the quadratic fallbacks (memory ~ block * n * M bytes)
_BLOCK = 512


def _matrix(objectives: np.ndarray) -> np.ndarray:
    f = np.asarray(objectives, dtype=np.float64)
    if f.ndim != 2 or f.shape[1] < 1:
        raise TunerError(f"objectives must be an (n, M) matrix with M >= 1, got shape {f.shape}")
    if np.isnan(f).any():
        raise TunerError("objectives contain NaN; dominance is undefined for them")
    return f


def nondominated(objectives: np.ndarray) -> np.ndarray:
    """Indices (ascending) of the rows no other row dominates; of identical rows, the first.

    1. For each distinct value of objectives ``1..M-1`` only the rows with the least
       objective 0 can be non-dominated; one lexicographic sort keeps the first of them.
       The model's resources take few distinct values, so this step removes most rows.
    2. On what is left (distinct rows, sorted lexicographically), row ``k`` is dominated
       exactly when an earlier row is ``<=`` it in objectives ``1..M-1``:
       a running minimum for ``M = 2`` (O(n log n)), a vectorized divide and conquer
       over the sort order for ``M = 3`` (O(n log^2 n)), pairwise blocks for ``M > 3``.
    """
    f = _matrix(objectives)
    n, m = f.shape
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if m == 1:
        return np.array([int(np.argmin(f[:, 0]))], dtype=np.int64)
    # rows sorted by (objectives 1..M-1, objective 0, index): first of each group survives
    order = np.lexsort((np.arange(n), f[:, 0], *[f[:, j] for j in range(m - 1, 0, -1)]))
    rest = f[order, 1:]
    first = np.ones(n, dtype=bool)
    first[1:] = (rest[1:] != rest[:-1]).any(axis=1)
    cand = order[first]
    g = f[cand]
    # lexicographic order over all objectives; ties cannot remain (the rows are distinct)
    lex = np.lexsort([g[:, j] for j in range(m - 1, -1, -1)])
    cand, g = cand[lex], g[lex]
    if m == 2:
        prev_min = np.minimum.accumulate(np.concatenate(([np.inf], g[:-1, 1])))
        keep = g[:, 1] < prev_min
    elif m == 3:
        keep = ~_dominated_by_earlier_2d(g[:, 1], g[:, 2])
    else:
        keep = ~_dominated_pairwise(g)
    return np.sort(cand[keep])


def _dominated_by_earlier_2d(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``out[k]``: some ``j < k`` has ``x[j] <= x[k]`` and ``y[j] <= y[k]``.

    Divide and conquer over positions, all blocks of one level at once: at block size
    ``2s`` every point of a right half is checked against the prefix minimum of ``y``
    over the left-half points sorted by ``x``. ``log2(n)`` levels of one sort each.
    """
    n = len(x)
    a = np.unique(x, return_inverse=True)[1].astype(np.int64)  # ranks keep comparisons exact
    b = np.unique(y, return_inverse=True)[1].astype(np.int64)
    a_span, b_span = int(a.max()) + 1, int(b.max()) + 1
    out = np.zeros(n, dtype=bool)
    idx = np.arange(n, dtype=np.int64)
    s = 1
    while s < n:
        block = idx // (2 * s)
        is_left = (idx // s) % 2 == 0
        left, right = idx[is_left], idx[~is_left]
        key_l = block[left] * a_span + a[left]
        srt = np.argsort(key_l, kind="stable")
        left, key_l = left[srt], key_l[srt]
        # segmented running minimum: shifting each block below the previous ones makes a
        # plain running minimum restart at every block
        shift = block[left] * b_span
        run = np.minimum.accumulate(b[left] - shift) + shift
        pos = np.searchsorted(key_l, block[right] * a_span + a[right], side="right") - 1
        ok = pos >= 0
        safe = np.maximum(pos, 0)
        ok &= block[left[safe]] == block[right]
        out[right] |= ok & (run[safe] <= b[right])
        s *= 2
    return out


def _dominated_pairwise(g: np.ndarray) -> np.ndarray:
    """``out[k]``: some other row dominates row ``k`` (rows distinct), in blocks of rows."""
    n = len(g)
    out = np.zeros(n, dtype=bool)
    for start in range(0, n, _BLOCK):
        rows = g[start:start + _BLOCK]
        le = (g[None, :, :] <= rows[:, None, :]).all(axis=2)
        lt = (g[None, :, :] < rows[:, None, :]).any(axis=2)
        out[start:start + _BLOCK] = np.any(le & lt, axis=1)
    return out


def dominance_ranks(objectives: np.ndarray, *, enough: int | None = None) -> np.ndarray:
    """Non-domination rank of every row (0 for the rows nothing dominates, 1 for those
    only rank-0 rows dominate, ...): NSGA-II's fast non-dominated sort, by a pairwise
    dominance matrix (for populations of a few thousand rows). Identical rows share a rank.
    With ``enough``, peeling stops once that many rows have a rank; the others get
    ``iinfo(int64).max``."""
    f = _matrix(objectives)
    n = len(f)
    ranks = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    if n == 0:
        return ranks
    # dom[i, j]: row j dominates row i; one 2-D comparison per objective
    le = np.ones((n, n), dtype=bool)
    lt = np.zeros((n, n), dtype=bool)
    for j in range(f.shape[1]):
        col = f[:, j]
        le &= col[None, :] <= col[:, None]
        lt |= col[None, :] < col[:, None]
    dom = le & lt
    count = dom.sum(axis=1)
    done = np.zeros(n, dtype=bool)
    rank = 0
    current = np.flatnonzero(count == 0)
    while len(current) and (enough is None or done.sum() < enough):
        ranks[current] = rank
        done[current] = True
        count -= dom[:, current].sum(axis=1)
        count[done] = -1
        current = np.flatnonzero(count == 0)
        rank += 1
    assert enough is not None or done.all()
    return ranks


def crowding_distance(objectives: np.ndarray) -> np.ndarray:
    """NSGA-II crowding distance of each row of one front: the sum over objectives of the
    gap between its two neighbours in that objective, divided by the objective's range;
    the extreme rows of every objective get ``inf``."""
    f = _matrix(objectives)
    n, m = f.shape
    dist = np.zeros(n, dtype=np.float64)
    if n <= 2:
        dist[:] = np.inf
        return dist
    for j in range(m):
        order = np.argsort(f[:, j], kind="stable")
        v = f[order, j]
        span = v[-1] - v[0]
        dist[order[0]] = dist[order[-1]] = np.inf
        if span > 0:
            dist[order[1:-1]] += (v[2:] - v[:-2]) / span
    return dist
