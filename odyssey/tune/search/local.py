"""Vectorized neighbourhoods of a tiling, for the local search of the evolutionary tuner.

A move changes the *levels* of one loop (``[ceil(N/T_1), T_1/T_2, ..., T_m]``, see
:mod:`odyssey.tune.space`):

* **level move**: one level ``r_j`` (a PE count or an innermost factor) takes any
  other value (beyond 2**14 values, a bounded sample: :func:`.sweep_values`), the other
  levels are kept. Setting ``T_1/T_2`` moves the array size
  along the loop with the same inner factor; every value of ``T_1`` is reached, so
  non-divisors of the extent are covered.
* **factorization move**: two adjacent levels exchange a factor, their product kept
  (the paper's factorization mutation, every divisor at once).
* **pair move**: two levels of different loops scale in opposite directions by a
  ratio ``f`` (``r_a * f``, ``r_b / f`` rounded). Between PE counts, or a PE count
  and the SIMD factor, it keeps the number of MAC lanes, and so the DSP use, about
  constant: the move a resource-saturated point needs.

:func:`neighbourhood` builds every such genome at once with numpy, keeps the legal
ones (bounds and divisibility, checked in bulk), drops duplicates and the centre,
and orders them by distance (the largest ``|log|`` change of a factor): nearest
first, or at random weighted towards near moves.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from odyssey.tune.divisibility import sweep_values
from odyssey.tune.space import SearchSpace, divisors

#: ratios of the pair move (and their inverses)
PAIR_RATIOS = (2.0, 1.5, 4.0 / 3.0, 1.25, 1.125)


def neighbourhood(
    space: SearchSpace, genome: Sequence[int], rng: np.random.Generator | None = None
) -> np.ndarray:
    """Legal genomes one move from ``genome`` (rows of an int64 matrix).

    Without ``rng`` nearest first. With it, in a random order drawn without
    replacement with probability proportional to ``1 / distance`` (Gumbel top-k),
    so the first batches mix small steps with a few long jumps.
    """
    g = np.asarray(genome, dtype=np.int64)
    parts: list[np.ndarray] = []
    levels = [_levels(space, g, ch_k) for ch_k in range(len(space.chains))]
    for k, ch in enumerate(space.chains):
        lv = levels[k]
        cap = space.upper[ch.columns[0]]
        for j in range(1, len(lv)):  # level moves
            others = int(np.prod(lv[1:])) // lv[j]
            values = sweep_values(1, cap // max(others, 1), around=lv[j])
            parts.append(_with_level(space, g, k, lv, {j: values}))
        for j in range(1, len(lv) - 1):  # factorization moves between levels j and j+1
            prod = lv[j] * lv[j + 1]
            d = np.array(divisors(prod), dtype=np.int64)
            parts.append(_with_level(space, g, k, lv, {j: prod // d, j + 1: d}))
    ratios = np.array([*PAIR_RATIOS, *(1.0 / r for r in PAIR_RATIOS)])
    slots = [(k, j) for k, lv in enumerate(levels) for j in range(1, len(lv))]
    for x, (a, ja) in enumerate(slots):
        for b, jb in slots[x + 1:]:
            if a == b:
                continue
            va = np.maximum(1, np.rint(levels[a][ja] * ratios)).astype(np.int64)
            vb = np.maximum(1, np.rint(levels[b][jb] / ratios)).astype(np.int64)
            rows = _with_level(space, g, a, levels[a], {ja: va})
            _set_chain(space, rows, b, levels[b], {jb: vb})
            parts.append(rows)
    if not parts:
        return np.empty((0, space.dim), dtype=np.int64)
    cand = np.vstack(parts)
    cand = cand[legal_rows(space, cand) & np.any(cand != g, axis=1)]
    _, first = np.unique(row_keys(cand), return_index=True)
    cand = cand[np.sort(first)]
    dist = np.abs(np.log(cand.astype(np.float64)) - np.log(g.astype(np.float64))).max(axis=1)
    if rng is None:
        return cand[np.argsort(dist, kind="stable")]
    key = -np.log(dist) + rng.gumbel(size=len(dist))
    return cand[np.argsort(-key, kind="stable")]


def row_keys(rows: np.ndarray) -> np.ndarray:
    """A 64-bit key per row (a wrapping dot product with fixed odd multipliers).

    Equal rows have equal keys; two different rows share a key with probability
    about ``2**-64``, so deduplicating by key may, in principle, drop a point.
    """
    mult = np.random.default_rng(0x0DD5E7).integers(1, 2**62, size=rows.shape[1]) | 1
    with np.errstate(over="ignore"):
        return (rows.astype(np.int64) * mult.astype(np.int64)).sum(axis=1)


def legal_rows(space: SearchSpace, rows: np.ndarray) -> np.ndarray:
    """Which rows are legal genomes (bounds and divisibility), in bulk."""
    lo = np.asarray(space.lower, dtype=np.int64)
    hi = np.asarray(space.upper, dtype=np.int64)
    ok = np.all((rows >= lo) & (rows <= hi), axis=1)
    for col, par in enumerate(space.parent):
        if par is not None:
            ok &= rows[:, par] % np.maximum(rows[:, col], 1) == 0
    return ok


def _levels(space: SearchSpace, g: np.ndarray, k: int) -> list[int]:
    return space.levels(g.tolist(), space.chains[k])


def _with_level(
    space: SearchSpace, g: np.ndarray, k: int, lv: list[int], new: dict[int, np.ndarray]
) -> np.ndarray:
    """Copies of ``g``, one per value in ``new``'s arrays, with chain ``k``'s levels set."""
    n = len(next(iter(new.values())))
    rows = np.repeat(g[None, :], n, axis=0)
    _set_chain(space, rows, k, lv, new)
    return rows


def _set_chain(
    space: SearchSpace, rows: np.ndarray, k: int, lv: list[int], new: dict[int, np.ndarray]
) -> None:
    """Write chain ``k``'s factors for levels ``lv`` with ``new[j]`` replacing level ``j``."""
    cols = space.chains[k].columns
    value = new.get(len(lv) - 1, np.int64(lv[-1]))
    rows[:, cols[-1]] = value
    for j in range(len(cols) - 2, -1, -1):
        value = value * new.get(j + 1, np.int64(lv[j + 1]))
        rows[:, cols[j]] = value
