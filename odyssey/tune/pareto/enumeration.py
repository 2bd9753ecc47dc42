"""Every legal tiling of a design, generated in vectorized chunks.

The legal set is a product over the divisibility chains of :class:`SearchSpace` (one per
loop: ``T_1`` in its range, ``T_2 | T_1`` in its range, ...). Each chain's legal tuples
are listed once; tiling number ``k`` takes tuple ``k mod c_0`` of chain 0, tuple
``(k // c_0) mod c_1`` of chain 1, and so on, so a chunk is a few integer divisions.

A chain whose outermost factor has more than ``GRID_LIMIT`` values (a loop of 2**20 and
more) is never listed: its grid's ``size`` is then an estimate (``exact_size`` False; the
mean count of legal inner tuples under 256 uniformly drawn outer values, times their
number), it cannot be enumerated, and :func:`neighbours` builds one-factor moves from the
space itself (an outer factor among a bounded sample of the multiples of the next).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from odyssey.errors import TunerError
from odyssey.tune.divisibility import sweep_values
from odyssey.tune.space import Chain, SearchSpace

#: the most values of a chain's outermost factor a grid lists
GRID_LIMIT = 1 << 20
_ESTIMATE_DRAWS = 256


def chain_tuples(space: SearchSpace, chain: Chain) -> np.ndarray:
    """The legal values of one chain's columns, one row per legal combination (outermost
    factor first, rows in increasing lexicographic order)."""
    root = chain.columns[0]
    rows: list[tuple[int, ...]] = [(v,) for v in range(space.lower[root], space.upper[root] + 1)]
    for col in chain.columns[1:]:
        rows = [row + (d,) for row in rows for d in space.legal_divisors(col, row[-1])]
    return np.array(rows, dtype=np.int64).reshape(len(rows), len(chain.columns))


class TilingGrid:
    """The legal tilings of a space as ``(n, dim)`` genome blocks (genome column order)."""

    def __init__(self, space: SearchSpace) -> None:
        self.space = space
        self.listed = all(space.upper[ch.columns[0]] - space.lower[ch.columns[0]] < GRID_LIMIT
                          for ch in space.chains)
        self._tuples: tuple[np.ndarray, ...] | None = None
        #: False when ``size`` is an estimate (see the module docstring)
        self.exact_size = self.listed
        self.size = (math.prod(len(t) for t in self.tuples) if self.listed
                     else math.prod(_estimate(space, ch) for ch in space.chains))

    @property
    def tuples(self) -> tuple[np.ndarray, ...]:
        """Each chain's legal tuples (:func:`chain_tuples`); a TunerError for a grid too
        large to list."""
        if self._tuples is None:
            if not self.listed:
                raise TunerError(
                    f"about {self.size:.3g} legal tilings (a loop of more than {GRID_LIMIT:,} "
                    "values) are too many to enumerate: use the nsga2 search (a time or "
                    "sample budget)")
            self._tuples = tuple(chain_tuples(self.space, ch) for ch in self.space.chains)
        return self._tuples

    def block(self, start: int, stop: int) -> np.ndarray:
        """Tilings number ``start`` to ``stop - 1``."""
        k = np.arange(start, stop, dtype=np.int64)
        out = np.empty((len(k), self.space.dim), dtype=np.int64)
        for ch, tup in zip(self.space.chains, self.tuples, strict=True):
            k, pick = np.divmod(k, len(tup))
            out[:, list(ch.columns)] = tup[pick]
        return out

    def chunks(self, chunk: int) -> Iterator[np.ndarray]:
        for start in range(0, self.size, chunk):
            yield self.block(start, min(start + chunk, self.size))


def neighbours(grid: TilingGrid, genome: tuple[int, ...]) -> np.ndarray:
    """The legal tilings that differ from ``genome`` in one factor only (``T_i1`` moved
    among the multiples of ``T_i2``, ``T_i2`` among the divisors of ``T_i1``, ...), as
    genome rows."""
    base = np.asarray(genome, dtype=np.int64)
    if not grid.listed:
        return _moves(grid.space, base)
    blocks = []
    for ch, tup in zip(grid.space.chains, grid.tuples, strict=True):
        same = tup == base[list(ch.columns)]
        for p in range(len(ch.columns)):
            others = np.delete(same, p, axis=1).all(axis=1) & ~same[:, p]
            rows = np.repeat(base[None, :], int(others.sum()), axis=0)
            rows[:, list(ch.columns)] = tup[others]
            blocks.append(rows)
    return np.vstack(blocks)


def _estimate(space: SearchSpace, chain: Chain) -> int:
    """The number of legal tuples of ``chain``, estimated: outer values drawn uniformly
    (seeded), each with its exact count of legal inner tuples."""
    root = chain.columns[0]
    lo, hi = space.lower[root], space.upper[root]
    draws = np.random.default_rng(0).integers(lo, hi + 1, size=_ESTIMATE_DRAWS)

    def inner(k: int, value: int) -> int:
        if k == len(chain.columns):
            return 1
        return sum(inner(k + 1, d) for d in space.legal_divisors(chain.columns[k], value))

    mean = sum(inner(1, int(v)) for v in draws) / len(draws)
    return max(1, round(mean * (hi - lo + 1)))


def _moves(space: SearchSpace, base: np.ndarray) -> np.ndarray:
    """:func:`neighbours` without listing the chains: per factor, the values it may take
    with the others fixed (an outer factor: a bounded sample of the multiples of the next
    factor in its range; an inner one: the legal divisors of the enclosing factor that the
    next divides)."""
    blocks = []
    for ch in space.chains:
        cols = ch.columns
        for p, col in enumerate(cols):
            below = int(base[cols[p + 1]]) if p + 1 < len(cols) else 1
            if p == 0:
                lo, hi = space.lower[col], space.upper[col]
                k = sweep_values(-(-lo // below), hi // below, around=int(base[col]) // below)
                vals = k * below
            else:
                divs = space.legal_divisors(col, int(base[cols[p - 1]]))
                vals = np.array([d for d in divs if d % below == 0], dtype=np.int64)
            vals = vals[vals != base[col]]
            rows = np.repeat(base[None, :], len(vals), axis=0)
            rows[:, col] = vals
            blocks.append(rows)
    return np.vstack(blocks) if blocks else np.empty((0, len(base)), dtype=np.int64)
