"""Every legal tiling of a design, generated in vectorized chunks.

The legal set is a product over the divisibility chains of :class:`SearchSpace` (one per
loop: ``T_1`` in its range, ``T_2 | T_1`` in its range, ...). Each chain's legal tuples
are listed once; tiling number ``k`` takes tuple ``k mod c_0`` of chain 0, tuple
``(k // c_0) mod c_1`` of chain 1, and so on, so a chunk is a few integer divisions.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from odyssey.tune.space import Chain, SearchSpace


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
        self.tuples = tuple(chain_tuples(space, ch) for ch in space.chains)
        self.size = math.prod(len(t) for t in self.tuples)

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
    blocks = []
    for ch, tup in zip(grid.space.chains, grid.tuples, strict=True):
        same = tup == base[list(ch.columns)]
        for p in range(len(ch.columns)):
            others = np.delete(same, p, axis=1).all(axis=1) & ~same[:, p]
            rows = np.repeat(base[None, :], int(others.sum()), axis=0)
            rows[:, list(ch.columns)] = tup[others]
            blocks.append(rows)
    return np.vstack(blocks)
