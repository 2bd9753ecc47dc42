"""Quality indicators of a Pareto front: hypervolume and ADRS (minimisation throughout).

* Hypervolume (the thesis's eq. (3.10)): the Lebesgue measure of the region that some
  point of the front dominates and that dominates the reference point ``r``,
  ``HV(Y) = vol( U_{y in Y} [y_1, r_1] x ... x [y_M, r_M] )``. Points with some
  ``y_j >= r_j`` add nothing. Exact: a sweep for ``M = 2``, a sweep over the third
  objective with an incrementally updated 2-D staircase for ``M = 3`` (O(n log n) searches
  plus list updates), slicing recursion for ``M > 3`` (exponential; small fronts only).
* ADRS (eq. (3.20)): ``ADRS(G, W) = 1/|G| * sum_{g in G} min_{w in W} d(g, w)`` for the
  true front ``G`` and a found front ``W``. The thesis leaves ``d`` open; we use the
  relative shortfall of the worst objective, ``d(g, w) = max_j max(0, (w_j - g_j) /
  max(|g_j|, 1))`` (the denominator is floored at one unit because resources can be 0
  and every objective is a count: cycles, DSPs, BRAM blocks, bytes). ``ADRS = 0`` exactly
  when every point of ``G`` is matched or dominated by a point of ``W``.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from odyssey.errors import TunerError
from odyssey.tune.pareto.dominance import nondominated

_BLOCK = 256


def _front(points: np.ndarray, reference: Sequence[float] | npt.NDArray[np.float64]) -> tuple[np.ndarray, np.ndarray]:
    f = np.asarray(points, dtype=np.float64)
    if f.ndim == 1 and f.size == 0:
        f = f.reshape(0, len(reference))
    r = np.asarray(reference, dtype=np.float64)
    if f.ndim != 2 or r.ndim != 1 or f.shape[1] != r.shape[0] or r.shape[0] < 1:
        raise TunerError(f"hypervolume: points of shape {f.shape} do not match a reference "
                         f"point of {r.shape[0]} objectives")
    if not np.isfinite(r).all():
        raise TunerError(f"hypervolume: the reference point {r.tolist()} must be finite")
    f = f[(f < r).all(axis=1)]
    return f[nondominated(f)] if len(f) else f, r


def hypervolume(points: np.ndarray, reference: Sequence[float] | npt.NDArray[np.float64]) -> float:
    """Exact hypervolume of ``points`` (an ``(n, M)`` matrix) with respect to ``reference``."""
    f, r = _front(points, reference)
    if len(f) == 0:
        return 0.0
    m = f.shape[1]
    if m == 1:
        return float(r[0] - f[:, 0].min())
    if m == 2:
        return _hv2(f, r)
    if m == 3:
        return _hv3(f, r)
    return _hv_slices(f, r)


def _hv2(f: np.ndarray, r: np.ndarray) -> float:
    """Non-dominated points sorted by ``x`` have decreasing ``y``: a sum of rectangles."""
    f = f[np.lexsort((f[:, 1], f[:, 0]))]
    x_next = np.append(f[1:, 0], r[0])
    return float(np.sum((x_next - f[:, 0]) * (r[1] - f[:, 1])))


def _hv3(f: np.ndarray, r: np.ndarray) -> float:
    """Sweep ``z`` upwards; between two consecutive ``z`` values the slice is the area the
    2-D staircase of the points seen so far dominates, updated point by point."""
    f = f[np.argsort(f[:, 2], kind="stable")]
    xs: list[float] = []  # staircase: x increasing, y decreasing
    ys: list[float] = []
    area = 0.0
    volume = 0.0
    z_next = np.append(f[1:, 2], r[2])
    r0, r1 = float(r[0]), float(r[1])
    for (x, y, _), zn, z in zip(f.tolist(), z_next.tolist(), f[:, 2].tolist(), strict=True):
        i = bisect.bisect_left(xs, x)  # xs[i - 1] < x <= xs[i]
        covered = (i > 0 and ys[i - 1] <= y) or (i < len(xs) and xs[i] == x and ys[i] <= y)
        if not covered:
            j = i
            while j < len(xs) and ys[j] >= y:  # the points p now dominates
                j += 1
            old = 0.0
            for k in range(max(i - 1, 0), j):
                x_end = xs[k + 1] if k + 1 < len(xs) else r0
                old += (x_end - xs[k]) * (r1 - ys[k])
            x_end = xs[j] if j < len(xs) else r0
            new = (x_end - x) * (r1 - y)
            if i > 0:
                new += (x - xs[i - 1]) * (r1 - ys[i - 1])
            area += new - old
            xs[i:j] = [x]
            ys[i:j] = [y]
        volume += area * (zn - z)
    return volume


def _hv_slices(f: np.ndarray, r: np.ndarray) -> float:
    """``M > 3``: slice along the last objective, recursing on the others."""
    f = f[np.argsort(f[:, -1], kind="stable")]
    z_next = np.append(f[1:, -1], r[-1])
    total = 0.0
    for k in range(len(f)):
        depth = z_next[k] - f[k, -1]
        if depth > 0:
            total += hypervolume(f[:k + 1, :-1], r[:-1]) * depth
    return total


def adrs(true_front: np.ndarray, found: np.ndarray) -> float:
    """Average distance from the true front to a found one (eq. (3.20), ``d`` as in the
    module docstring). ``inf`` when nothing was found; the true front must be non-empty."""
    g = np.asarray(true_front, dtype=np.float64)
    w = np.asarray(found, dtype=np.float64)
    if g.ndim != 2 or len(g) == 0:
        raise TunerError(f"adrs: the true front must be a non-empty (n, M) matrix, got shape {g.shape}")
    if w.size == 0:
        return float("inf")
    if w.ndim != 2 or w.shape[1] != g.shape[1]:
        raise TunerError(f"adrs: fronts of shapes {g.shape} and {w.shape} have different objectives")
    scale = np.maximum(np.abs(g), 1.0)
    best = np.empty(len(g), dtype=np.float64)
    for start in range(0, len(g), _BLOCK):
        gb, sb = g[start:start + _BLOCK, None, :], scale[start:start + _BLOCK, None, :]
        d = np.maximum((w[None, :, :] - gb) / sb, 0.0).max(axis=2)
        best[start:start + _BLOCK] = d.min(axis=1)
    return float(best.mean())
