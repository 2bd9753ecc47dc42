"""Log-scaled unit-cube coordinates of tilings, for the searches that move continuously.

Coordinate ``d`` of a tiling is ``u_d = log(T_d / lower_d) / log(upper_d / lower_d)`` in
``[0, 1]`` (0 when ``lower_d == upper_d``): tiling factors span up to three decades and
their effects are multiplicative, so equal steps in ``u`` are equal ratios in ``T``.
Decoding rounds ``lower_d * (upper_d / lower_d) ** u_d`` to the nearest integer and
repairs the result to the nearest legal tiling (:meth:`SearchSpace.repair_genome`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from odyssey.tune.space import Genome, SearchSpace


class UnitCube:
    """Coordinates of ``space``'s tilings in ``[0, 1]^dim`` (see the module docstring)."""

    def __init__(self, space: SearchSpace) -> None:
        self.space = space
        self.dim = space.dim
        self._lo = np.log(np.array(space.lower, dtype=np.float64))
        span = np.log(np.array(space.upper, dtype=np.float64)) - self._lo
        self._span = span
        self._safe_span = np.where(span > 0, span, 1.0)

    def encode(self, genomes: np.ndarray | Sequence[int] | Sequence[Sequence[int]]) -> np.ndarray:
        """``(n, dim)`` coordinates of ``(n, dim)`` tilings (a single tiling gives ``(dim,)``)."""
        g = np.asarray(genomes, dtype=np.float64)
        return np.clip((np.log(g) - self._lo) / self._safe_span, 0.0, 1.0)

    def raw(self, u: np.ndarray) -> np.ndarray:
        """The nearest integers to the factors at ``u`` (not repaired: maybe illegal)."""
        return np.rint(np.exp(self._lo + np.clip(u, 0.0, 1.0) * self._span)).astype(np.int64)

    def decode(self, u: np.ndarray) -> Genome:
        """The legal tiling nearest to the point ``u`` (shape ``(dim,)``)."""
        return self.space.repair_genome(self.raw(u).tolist())
